#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The Kubernetes and container-engine files of deploy/, read as a cluster
and the engines would read them (there is no cluster here): the manifests
parse as YAML and hold what the daemon needs on a node, the ConfigMap's
policies pass `sharnessctl policy check`, the pod's annotation names one of
them, containerd's and CRI-O's settings parse as TOML and name the hook,
and the hooks.d file is the one the package installs.

    tests/host/deploy.py SHARNESSCTL
"""
import json
import os
import subprocess
import sys
import tempfile
import tomllib

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
K8S = os.path.join(ROOT, "deploy", "kubernetes")
HOOK = "/usr/local/libexec/sharness/sharness-oci-hook"
passed = failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print(f"FAIL deploy: {what} -- got {got!r}, want {want!r}")


def docs(name):
    with open(os.path.join(K8S, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def main():
    ctl = sys.argv[1]
    objs = {(d["kind"], d["metadata"]["name"]): d for d in docs("sharness.yaml")}
    check("sharness.yaml: its objects",
          sorted(objs), [("ConfigMap", "sharness-policies"), ("DaemonSet", "sharnessd"),
                         ("Namespace", "sharness-system")])
    ds = objs[("DaemonSet", "sharnessd")]
    spec = ds["spec"]["template"]["spec"]
    check("the DaemonSet's selector matches its pods' labels",
          ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
          True)
    check("the daemon sees the host's processes (hostPID)", spec.get("hostPID"), True)
    check("it runs on every node (tolerates every taint)", spec.get("tolerations"), [{"operator": "Exists"}])
    d = next(c for c in spec["containers"] if c["name"] == "sharnessd")
    check("the daemon is privileged (BPF-LSM programs, bpffs pins)",
          d["securityContext"].get("privileged"), True)
    check("the daemon runs in the foreground with its policies from the ConfigMap",
          d["command"][:2] + d["command"][d["command"].index("--policy-dir"):][:2],
          ["/usr/sbin/sharnessd", "--foreground", "--policy-dir", "/etc/sharness/policies"])
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in d["volumeMounts"]}
    host = {p: vols[m["name"]].get("hostPath", {}).get("path") for p, m in mounts.items()}
    for path in ("/sys/fs/cgroup", "/sys/fs/bpf", "/sys/kernel/security", "/run/sharness",
                 "/var/log/sharness"):
        check(f"the daemon's {path} is the host's", host.get(path), path)
    check("bpffs pins reach the host (bidirectional)",
          mounts["/sys/fs/bpf"].get("mountPropagation"), "Bidirectional")
    check("the policies are the ConfigMap",
          vols[mounts["/etc/sharness/policies"]["name"]].get("configMap", {}).get("name"),
          "sharness-policies")
    init = spec["initContainers"][0]
    script = " ".join(init["command"])
    imounts = {m["mountPath"]: vols[m["name"]]["hostPath"]["path"] for m in init["volumeMounts"]}
    check("the hook is installed on the node where the engines' settings name it",
          (HOOK.replace("/usr/local/libexec", "/host/usr/local/libexec") in script,
           imounts.get("/host/usr/local/libexec"), imounts.get("/host/etc/containers")),
          (True, "/usr/local/libexec", "/etc/containers"))

    cm = objs[("ConfigMap", "sharness-policies")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cm["data"].items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        r = subprocess.run([ctl, "policy", "check", tmp], capture_output=True, text=True)
        check("the ConfigMap's policies pass policy check", (r.returncode, r.stderr), (0, ""))
    names = [line.split("=", 1)[1].strip() for t in cm["data"].values()
             for line in t.splitlines() if line.replace(" ", "").startswith("name=")]
    pod = docs("pod.yaml")[0]
    check("the pod's annotation names a policy of the ConfigMap",
          pod["metadata"]["annotations"].get("org.sharness.policy") in names, True)
    held = [t for t in cm["data"].values() if "held-from = exec" in t and "paths = container" in t]
    check("the ConfigMap's policy holds from exec with the container's paths", len(held), len(cm["data"]))

    with open(os.path.join(K8S, "containerd.toml"), "rb") as f:
        ctd = tomllib.load(f)
    runc = ctd["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]
    check("containerd passes the pod's annotation to the container's spec",
          runc.get("pod_annotations"), ["org.sharness.policy"])
    check("containerd's base spec is the one its comment makes, with the hook",
          (runc.get("base_runtime_spec"), HOOK in open(os.path.join(K8S, "containerd.toml")).read()),
          ("/etc/containerd/sharness-base-spec.json", True))
    with open(os.path.join(K8S, "crio.conf"), "rb") as f:
        crio = tomllib.load(f)
    check("CRI-O reads the hooks directory the DaemonSet writes",
          "/etc/containers/oci/hooks.d" in crio["crio"]["runtime"]["hooks_dir"], True)
    with open(os.path.join(ROOT, "deploy", "oci", "sharness.json")) as f:
        hooks = json.load(f)
    check("hooks.d: createRuntime, when annotated",
          (hooks["stages"], list(hooks["when"]["annotations"])),
          (["createRuntime"], ["^org\\.sharness\\.policy$"]))
    print(f"  DEPLOY    {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
