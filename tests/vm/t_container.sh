#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A real container runtime: Debian's runc (1.1) runs a bundle built from
# busybox-static in a cgroup a `held-from = exec` pattern matches. The
# runtime's init is moved in busy (it re-executes itself at its start, a
# sealed copy of its own binary), mounts, pivots and drops capabilities as
# the host's; the container's command is held from its exec: an exec and a
# write its policy forbids are refused and recorded with the policy and the
# container's cgroup, next to the same container in a cgroup of no tree,
# where both work. With `held-from = entry` the runtime is held as it
# enters and the container does not start. `runc exec` into a held
# container is held the same way, and a program the container keeps in a
# memfd, named to runc's init by /proc/1/fd/N, is not run.
. "$(dirname "$0")/lib.sh"

P=$SH_TMP/policies
D=/sys/fs/cgroup/t_container
RUNC=(runc --root "$SH_TMP/runc")
rmdir "$D"/*/* "$D"/* "$D" 2>/dev/null
mkdir -p "$D" "$D/pm"
if ! command -v runc >/dev/null; then
	fail "runc is installed (tools/setup installs it)"
	exit 1
fi

# The bundle: busybox at /bin/busybox, a real directory as in a busybox
# image (on this host /bin is a link to usr/bin: the policy's
# `paths = container` keeps its rule as written), the shell and a few
# applets linked to it, and a second copy of it at /opt/true that the
# policy does not allow. The command tries that exec, a write to its root
# (/work) and one to /dev/shm.
B=$SH_TMP/bundle
mkdir -p "$B/rootfs/bin" "$B/rootfs/opt" "$B/rootfs/work"
cp /bin/busybox "$B/rootfs/bin/busybox"
for a in sh cat echo sleep; do ln -s busybox "$B/rootfs/bin/$a"; done
cp /bin/busybox "$B/rootfs/opt/true"
(cd "$B" && runc spec) || { fail "runc spec writes a config"; exit 1; }
CMD='exec 2>/dev/null; /opt/true && t=ok || t=EPERM; echo x >/work/f && w=ok || w=EPERM; echo x >/dev/shm/f && s=ok || s=EPERM; echo "true=$t write=$w shm=$s"'
jq --arg cmd "$CMD" '.process.terminal = false | .process.args = ["sh", "-c", $cmd] |
	.root.readonly = false | .linux.namespaces |= map(select(.type != "network"))' \
	"$B/config.json" >"$B/base.json"
# container ID CGROUP [ARG...]: runc run of the bundle as ID in cgroup
# /t_container/CGROUP; its output, then its exit status.
container() {
	local id=$1 cg=$2 out
	shift 2
	jq --arg cg "/t_container/$cg" '.linux.cgroupsPath = $cg' "$B/base.json" >"$B/config.json"
	out=$(cd "$B" && timeout 120 "${RUNC[@]}" run "$@" "$id" 2>&1)
	echo "$out rc=$?" | tr '\n' ' ' | sed 's/ *$//'
}
# Two patterns: runc's and crun's containers (ct-*), podman's (its
# cgroupfs manager's libpod-ID under pm/; the README's class).
policy() { # entry|exec
	printf '[policy]\nname = ct\ncgroup = %s/ct-*\ncgroup = %s/pm/libpod-[0-9a-f][0-9a-f]*\nheld-from = %s\npaths = container\n[exec]\nallow = /bin/busybox\nallow = /opt/hold\n[file]\nwrite = /dev/shm/\nwrite = /dev/null\nwrite = /work/w/\n' \
		"$D" "$D" "$1" >"$P/ct.policy"
}

# free WHAT OUTPUT: a container that is not held ran (its output); then
# its file goes.
free() {
	check "$1" "$2" "true=ok write=ok shm=ok rc=0"
	rm -f "$B/rootfs/work/f"
}
# held WHAT CGROUP DENY_EXEC_BEFORE OUTPUT: a held container ran in
# /t_container/CGROUP: its exec and its write refused, counted and
# recorded under the policy, the container's cgroup and the file in the
# container's view; the runtime's own set-up refused nothing.
held() {
	local cg=$D/$2
	check "$1" "$4" "true=EPERM write=EPERM shm=ok rc=0"
	check "... one exec refused, counted by the programs" "$(($(counter deny_exec) - $3))" 1
	check "... the exec's record names the policy, the container's cgroup and the file as it sees it" \
		"$(audit_wait ".policy == \"ct\" and .hook == \"exec\" and .cgroup == \"$cg\" and .target == \"/opt/true\"")" 1
	check "... and so does the write's" \
		"$(audit_wait ".policy == \"ct\" and .hook == \"file\" and .cgroup == \"$cg\" and .target == \"/work/f\"")" 1
	check "... the runtime's own set-up refused nothing" "$(audit_count ".cgroup == \"$cg\"")" 2
	check "... nothing written to the container's root" \
		"$([ -e "$B/rootfs/work/f" ] && echo written || echo none)" none
}

policy exec
start_daemon || { fail "daemon starts"; exit 1; }

free "a container in a cgroup of no tree: the exec and both writes work" "$(container free1 free-1)"
d0=$(counter deny_exec)
# The daemon stopped while it runs: it reads the container's records once
# runc has removed the cgroup, and names it still (the name the programs
# kept when the pattern tagged it).
kill -STOP "$DAEMON_PID"
out=$(container held1 ct-1)
gone=$([ -d "$D/ct-1" ] && echo there || echo removed)
kill -CONT "$DAEMON_PID"
check "the container's cgroup is removed before the daemon reads a record" "$gone" removed
held "held from exec: the runtime sets the container up, its command is held (an exec and a write refused)" \
	ct-1 "$d0" "$out"

# runc exec into a running held container: its init joins the cgroup from
# outside, sets up, then execs the command, which is held.
jq --arg cg "/t_container/ct-2" '.linux.cgroupsPath = $cg | .process.args = ["sleep", "120"]' \
	"$B/base.json" >"$B/config.json"
(cd "$B" && "${RUNC[@]}" run -d held2 >/dev/null 2>&1 </dev/null)
check "a held container runs detached" "$?:$("${RUNC[@]}" state held2 | jq -r .status)" "0:running"
out=$("${RUNC[@]}" exec held2 sh -c "$CMD" 2>&1)
check "runc exec into it: held from the exec of its command" "$out rc=$?" "true=EPERM write=EPERM shm=ok rc=0"
check "... recorded under the container's cgroup" \
	"$(audit_wait ".policy == \"ct\" and .hook == \"exec\" and .cgroup == \"$D/ct-2\" and .target == \"/opt/true\"")" 1
"${RUNC[@]}" kill held2 KILL
wait_until eval '[ "$("${RUNC[@]}" state held2 | jq -r .status)" = stopped ]'
"${RUNC[@]}" delete held2

# A program kept in memory by a member, named to a pending runtime's init:
# the container keeps busybox in a memfd, and `runc exec` runs
# /proc/1/fd/N in it (an image's health check could name one). runc's
# init, pending until its exec, execs the memfd: that is the container's
# command, not the runtime's own re-exec (its own executable through a
# mount no namespace has), and no rule can name a memfd: refused, counted,
# recorded; the same exec of /bin/busybox runs.
cp "$SH_BUILD/tests/vm/memfd-hold" "$B/rootfs/opt/hold"
jq --arg cg "/t_container/ct-4" '.linux.cgroupsPath = $cg |
	.process.args = ["/opt/hold", "/bin/busybox", "/dev/shm/memfd"]' "$B/base.json" >"$B/config.json"
(cd "$B" && "${RUNC[@]}" run -d memfd1 >/dev/null 2>&1 </dev/null)
check "a held container keeps busybox in a memfd" \
	"$?:$(wait_until "${RUNC[@]}" exec memfd1 sh -c 'test -s /dev/shm/memfd' && echo kept)" "0:kept"
n=$("${RUNC[@]}" exec memfd1 cat /dev/shm/memfd)
d0=$(counter deny_exec)
out=$("${RUNC[@]}" exec memfd1 "/proc/1/fd/$n" echo ran 2>&1)
rc=$?
check "runc exec of /proc/1/fd/$n (the memfd): refused, nothing ran" \
	"$(grep -c '^ran$' <<<"$out") $([ "$rc" -ne 0 ] && echo failed)" "0 failed"
check "... counted by the programs" "$(($(counter deny_exec) - d0))" 1
check "... recorded under the container's cgroup, as an in-memory file" \
	"$(audit_wait ".policy == \"ct\" and .hook == \"exec\" and .cgroup == \"$D/ct-4\" and .reason == \"deleted or in-memory file\"")" 1
out=$("${RUNC[@]}" exec memfd1 /bin/busybox echo ran 2>&1)
check "runc exec of /bin/busybox into the same container: runs" "$out rc=$?" "ran rc=0"
"${RUNC[@]}" kill memfd1 KILL
wait_until eval '[ "$("${RUNC[@]}" state memfd1 | jq -r .status)" = stopped ]'
"${RUNC[@]}" delete memfd1

# ---- the OCI hook: a container annotated org.sharness.policy=NAME ------
# runc runs the hook at createRuntime (podman and CRI-O add it from
# hooks.d for annotated containers; runc alone reads it from the config).
# hooked ID CGROUP ANNOTATION [ARG...]: container() with the hook, and the
# annotation (none if empty).
hooked() {
	local id=$1 cg=$2 pol=$3 out
	shift 3
	jq --arg cg "/t_container/$cg" --arg pol "$pol" --arg hook "$SH_BUILD/sharness-oci-hook" \
		--arg sock "$SOCK" '.linux.cgroupsPath = $cg |
		.hooks.createRuntime = [{path: $hook, args: ["sharness-oci-hook", "--socket", $sock]}] |
		if $pol != "" then .annotations["org.sharness.policy"] = $pol else . end' \
		"$B/base.json" >"$B/config.json"
	out=$(cd "$B" && timeout 120 "${RUNC[@]}" run "$@" "$id" 2>&1)
	echo "$out rc=$?" | tr '\n' ' ' | sed 's/ *$//'
}
free "the hook, a container without the annotation: nothing changes" "$(hooked plain1 plain-1 "")"
d0=$(counter deny_exec)
held "annotated: its cgroup is held to the policy before its command runs" \
	hook-1 "$d0" "$(hooked hook1 hook-1 ct)"
check "... the tag recorded as a container's" \
	"$(jq -c --arg cg "$D/hook-1" 'select(.event == "tag" and .cgroup == $cg and .policy == "ct" and .runtime_pid > 1)' "$AUDIT" | wc -l)" 1
out=$(hooked ghost1 ghost-1 no-such-policy)
check_match "an annotation naming an unknown policy: the container does not start" \
	"$(grep -c "true=" <<<"$out"):${out##* }" '^0:rc=[1-9][0-9]*$'
check_match "... the hook says why" "$out" "sharness-oci-hook: container ghost1: .*no-such-policy"
"${RUNC[@]}" delete -f ghost1 >/dev/null 2>&1
# Detached, for status; the container gone before this one is untagged
# by this one's tag (its cgroup removed, no process of it left).
jq --arg cg "/t_container/hook-2" --arg hook "$SH_BUILD/sharness-oci-hook" --arg sock "$SOCK" \
	'.linux.cgroupsPath = $cg | .process.args = ["sleep", "120"] |
	.hooks.createRuntime = [{path: $hook, args: ["sharness-oci-hook", "--socket", $sock]}] |
	.annotations["org.sharness.policy"] = "ct"' "$B/base.json" >"$B/config.json"
(cd "$B" && "${RUNC[@]}" run -d hook2 >/dev/null 2>&1 </dev/null)
check "a detached annotated container runs" "$?:$("${RUNC[@]}" state hook2 | jq -r .status)" "0:running"
st=$($CTL status --json)
check "status lists its cgroup as a container's, with the policy" \
	"$(jq -r --arg p "$D/hook-2" '.tagged_cgroups[] | select(.path == $p) | "\(.source) \(.policy)"' <<<"$st")" "container ct"
check "... and no longer the removed one's" \
	"$(jq -r --arg p "$D/hook-1" '[.tagged_cgroups[] | select(.path == $p)] | length' <<<"$st")" 0
"${RUNC[@]}" kill hook2 KILL
wait_until eval '[ "$("${RUNC[@]}" state hook2 | jq -r .status)" = stopped ]'
"${RUNC[@]}" delete hook2
mkdir -p "$D/byhand"
out=$($CTL tag --runtime 1 "$D/byhand" ct 2>&1)
check "tag --runtime of a process not in the cgroup: refused (1)" "$?:$out" \
	"1:process 1 (the container's init) is not the one process in $D/byhand"
sleep 60 & s1=$!
sleep 60 & s2=$!
echo "$s1" >"$D/byhand/cgroup.procs" && echo "$s2" >"$D/byhand/cgroup.procs"
out=$($CTL tag --runtime "$s1" "$D/byhand" ct 2>&1)
check "... nor of one that is not the cgroup's one process (a shared cgroup)" "$?:$out" \
	"1:process $s1 (the container's init) is not the one process in $D/byhand"
kill "$s1" "$s2"
wait "$s1" "$s2" 2>/dev/null
rmdir "$D/byhand"

# ---- crun (Debian's 1.8.1, podman's runtime there) -------------------------
# crun makes the container's cgroup itself and clones its init straight
# into it (clone3 with CLONE_INTO_CGROUP), where runc moves its init in;
# `crun exec` does the same. Neither is a move: the child a host process
# bears into a tree held from exec is pending from its birth (wall.c,
# sh_task_alloc), sets the container up as the host's and is held from its
# command's exec. strace shows that crun took that way (-z: calls that
# succeeded; crun falls back to a clone and a cgroup.procs write).
if ! command -v crun >/dev/null; then
	fail "crun is installed (tools/setup installs it)"
	exit 1
fi
RUNC=(strace -f -qq -z -e trace=clone3 -o "$SH_TMP/crun.trace" crun --root "$SH_TMP/crun")
free "crun: a container in a cgroup of no tree: the exec and both writes work" \
	"$(container cfree1 free-2)"
d0=$(counter deny_exec)
held "crun: held from exec, its init born in the cgroup: set up as the host's, its command held" \
	ct-5 "$d0" "$(container cheld1 ct-5)"
check "... crun cloned its init into the container's cgroup (clone3, CLONE_INTO_CGROUP)" \
	"$(grep -c 'clone3(.*CLONE_INTO_CGROUP' "$SH_TMP/crun.trace")" 1
RUNC=(crun --root "$SH_TMP/crun")
jq --arg cg "/t_container/ct-6" '.linux.cgroupsPath = $cg | .process.args = ["sleep", "120"]' \
	"$B/base.json" >"$B/config.json"
(cd "$B" && "${RUNC[@]}" run -d cheld2 >/dev/null 2>&1 </dev/null)
check "crun: a held container runs detached" "$?:$("${RUNC[@]}" state cheld2 | jq -r .status)" "0:running"
out=$(strace -f -qq -z -e trace=clone3 -o "$SH_TMP/crun.trace" "${RUNC[@]}" exec cheld2 sh -c "$CMD" 2>&1)
check "crun exec into it: held from the exec of its command" "$out rc=$?" "true=EPERM write=EPERM shm=ok rc=0"
check "... its process born in the cgroup (clone3, CLONE_INTO_CGROUP)" \
	"$(grep -c 'clone3(.*CLONE_INTO_CGROUP' "$SH_TMP/crun.trace")" 1
check "... recorded under the container's cgroup" \
	"$(audit_wait ".policy == \"ct\" and .hook == \"exec\" and .cgroup == \"$D/ct-6\" and .target == \"/opt/true\"")" 1
"${RUNC[@]}" kill cheld2 KILL
wait_until eval '[ "$("${RUNC[@]}" state cheld2 | jq -r .status)" = stopped ]'
"${RUNC[@]}" delete cheld2
d0=$(counter deny_exec)
held "crun, the OCI hook: an annotated container held the same way" \
	hook-3 "$d0" "$(hooked chook1 hook-3 ct)"
RUNC=(runc --root "$SH_TMP/runc")

# ---- podman (Debian's 4.3.1, crun under it) ---------------------------------
# As an operator runs it: an annotated container gets the hook through a
# hooks.d directory (the package's file, with the build's hook and the
# test's socket), a container in a pattern's cgroup is held by the pattern,
# a container with neither is left alone (the hooks.d file's `when` keeps
# the hook from it). The guest has no systemd: podman's cgroupfs manager
# puts a container in PARENT/libpod-ID and its conmon in PARENT/conmon,
# which the pattern leaves alone, as the README's does conmon's
# libpod-conmon-ID.scope under systemd (t_pattern).
if ! command -v podman >/dev/null; then
	fail "podman is installed (tools/setup installs it)"
	exit 1
fi
mkdir -p "$SH_TMP/pm/net" "$SH_TMP/pm/tmp" "$SH_TMP/hooks.d"
jq --arg p "$SH_BUILD/sharness-oci-hook" --arg s "$SOCK" \
	'.hook.path = $p | .hook.args = ["sharness-oci-hook", "--socket", $s]' \
	"$(dirname "$0")/../../deploy/oci/sharness.json" >"$SH_TMP/hooks.d/sharness.json"
PM=(podman --root "$SH_TMP/pm/root" --runroot "$SH_TMP/pm/run" --storage-driver vfs
	--cgroup-manager cgroupfs --events-backend file --network-config-dir "$SH_TMP/pm/net"
	--tmpdir "$SH_TMP/pm/tmp" --hooks-dir "$SH_TMP/hooks.d")
# podman_run PARENT [OPTION...]: a container of the bundle's root in
# /t_container/PARENT; its output and exit status. Its cgroup, below
# /t_container, in $SH_TMP/cg.
podman_run() {
	local parent=$1 out rc
	shift
	rm -f "$SH_TMP/cid"
	out=$(timeout 120 "${PM[@]}" run --rm --network none --cidfile "$SH_TMP/cid" \
		--cgroup-parent "/t_container/$parent" "$@" --rootfs "$B/rootfs" sh -c "$CMD" 2>&1)
	rc=$?
	echo "$parent/libpod-$(cat "$SH_TMP/cid" 2>/dev/null)" >"$SH_TMP/cg"
	echo "$out rc=$rc" | tr '\n' ' ' | sed 's/ *$//'
}
free "podman: a container neither annotated nor in a pattern's cgroup: the exec and both writes work" \
	"$(podman_run pmfree)"
check "... the hook did not run for it (no tag recorded)" \
	"$(jq -c --arg d "$D/pmfree/" 'select(.event == "tag" and (.cgroup | startswith($d)))' "$AUDIT" | wc -l)" 0
d0=$(counter deny_exec)
out=$(podman_run pm)
held "podman: a container in the pattern's cgroup held from its command's exec" \
	"$(cat "$SH_TMP/cg")" "$d0" "$out"
d0=$(counter deny_exec)
out=$(podman_run pmhook --annotation org.sharness.policy=ct)
held "podman: an annotated container held through hooks.d and the hook" "$(cat "$SH_TMP/cg")" "$d0" "$out"
check "... the tag recorded as a container's" \
	"$(jq -c --arg cg "$D/$(cat "$SH_TMP/cg")" 'select(.event == "tag" and .cgroup == $cg and .runtime_pid > 1)' "$AUDIT" | wc -l)" 1

# podman on its default storage driver, overlay: the bundle's root
# imported as an image, the container's root an overlay podman mounts over
# the image's layer. The held container writes where its policy lets it,
# through the overlay (a file of the image appended, a directory made in
# one of the image's: overlayfs copies them up below, with the mounter's
# credentials, in the container's task), and is refused the exec and the
# write it is refused on vfs; the image's layer is left as it was.
mkdir -p "$B/rootfs/work/w" && echo x >"$B/rootfs/work/w/old"
PMO=(podman --root "$SH_TMP/pmo/root" --runroot "$SH_TMP/pmo/run" --storage-driver overlay
	--cgroup-manager cgroupfs --events-backend file --network-config-dir "$SH_TMP/pm/net"
	--tmpdir "$SH_TMP/pm/tmp")
tar -C "$B/rootfs" -c . | "${PMO[@]}" import -q - localhost/sh-ct >/dev/null 2>&1
check "podman, overlay driver: the bundle's root imported as an image" "$?" 0
OCMD='exec 2>/dev/null; while read -r _ m t _; do [ "$m" = / ] && r=$t; done </proc/mounts; /opt/true && t=ok || t=EPERM; echo x >/work/f && w=ok || w=EPERM; echo y >>/work/w/old && a=ok || a=EPERM; mkdir /work/w/d && echo z >/work/w/d/f && m=ok || m=EPERM; echo "$(echo $(cat /work/w/old /work/w/d/f)) root=$r true=$t write=$w append=$a mkdir=$m"'
rm -f "$SH_TMP/cid"
d0=$(counter deny_exec)
out=$(timeout 120 "${PMO[@]}" run --rm --network none --cidfile "$SH_TMP/cid" \
	--cgroup-parent /t_container/pm localhost/sh-ct sh -c "$OCMD" 2>&1)
rc=$?
cg=$D/pm/libpod-$(cat "$SH_TMP/cid" 2>/dev/null)
check "podman, overlay driver: a held container appends to an image's file and makes a directory where its policy lets it; its exec and its other write refused" \
	"$out rc=$rc" "x y z root=overlay true=EPERM write=EPERM append=ok mkdir=ok rc=0"
check "... one exec refused, counted by the programs" "$(($(counter deny_exec) - d0))" 1
check "... the write's record names the file as the container sees it" \
	"$(audit_wait ".policy == \"ct\" and .hook == \"file\" and .cgroup == \"$cg\" and .target == \"/work/f\"")" 1
check "... nothing else refused: the copy-ups below are not the container's" \
	"$(audit_count ".cgroup == \"$cg\"")" 2
up=$("${PMO[@]}" image inspect --format '{{.GraphDriver.Data.UpperDir}}' localhost/sh-ct)
check "... the image's layer as it was" "$(cat "$up/work/w/old") $(ls "$up/work/w")" "x old"
"${PMO[@]}" rmi -f localhost/sh-ct >/dev/null 2>&1
stop_daemon
out=$(hooked down1 down-1 ct)
check_match "with the daemon stopped, an annotated container does not start" \
	"$(grep -c "true=" <<<"$out"):${out##* }" '^0:rc=[1-9][0-9]*$'
check_match "... the hook says the daemon cannot be reached" "$out" \
	"sharness-oci-hook: container down1: cannot reach sharnessd at $SOCK"
"${RUNC[@]}" delete -f down1 >/dev/null 2>&1
check "... nor did its command run" "$([ -e "$B/rootfs/work/f" ] && echo ran || echo none)" none
start_daemon || { fail "daemon starts again"; exit 1; }

# Held from entry: the runtime's set-up is the tree's, and refused.
policy entry
$CTL policy reload >/dev/null
check "held-from = entry loads" "$?" 0
out=$(container held3 ct-3)
check_match "held from entry: the container does not start, its command never runs" \
	"$(grep -c "true=" <<<"$out"):${out##* }" '^0:rc=[1-9][0-9]*$'
check "... the runtime's refusals recorded under the container's cgroup" \
	"$([ "$(audit_wait ".policy == \"ct\" and .cgroup == \"$D/ct-3\"")" -ge 1 ] && echo yes)" yes
"${RUNC[@]}" delete -f held3 >/dev/null 2>&1
out=$(hooked entry1 entry-1 ct)
check_match "the hook with a policy held from entry: refused, the container does not start" \
	"$(grep -c "true=" <<<"$out"):${out##* }" '^0:rc=[1-9][0-9]*$'
check_match "... the daemon says why" "$out" "policy 'ct' holds from entry"
"${RUNC[@]}" delete -f entry1 >/dev/null 2>&1

rm -f "$P/ct.policy"
$CTL policy reload >/dev/null
check "the policy goes" "$?" 0
rmdir "$D"/*/* "$D"/* "$D" 2>/dev/null
check "no container's cgroup left" "$(find "$D" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ""
