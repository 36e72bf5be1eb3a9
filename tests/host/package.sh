#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package as built (make package): lintian reports no error and
# no warning that is not overridden with its reason in
# debian/sharness.lintian-overrides; every file is where it belongs; the
# conffiles are the policies and the logrotate snippet; the unit points at
# the installed binaries and documentation; and the maintainer scripts
# choose as they must, run against stand-ins for sharnessctl, sharnessd and
# deb-systemd-helper/-invoke that record their calls: enabled and started
# only where the probe says the kernel can enforce, otherwise left disabled
# with what to change; restarted on upgrade; on removal stopped and
# unloaded, or told why not.
#
#   tests/host/package.sh build/deb/sharness_VERSION_ARCH.deb
set -u
deb=${1:?.deb}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
	else
		printf 'FAIL package: %s: got %s, want %s\n' "$1" "'$2'" "'$3'"
		failed=$((failed + 1))
	fi
}
# check_has NAME TEXT REGEX
check_has() {
	if grep -Eq -- "$3" <<<"$2"; then
		passed=$((passed + 1))
	else
		printf 'FAIL package: %s: no /%s/ in:\n%s\n' "$1" "$3" "$2"
		failed=$((failed + 1))
	fi
}

[ -f "$deb" ] || { echo "FAIL package: $deb does not exist (make package)"; exit 1; }

# lintian: errors and warnings fail; overridden tags (each with its reason)
# and informational ones are counted.
changes=${deb%.deb}.changes
lintian --pedantic --info --show-overrides "$changes" >"$tmp/lintian" 2>&1
for k in E W I P O; do
	eval "n_$k=$(grep -c "^$k:" "$tmp/lintian")"
done
# shellcheck disable=SC2154 # set by the eval above
echo "  LINTIAN   $n_E errors, $n_W warnings, $n_I info, $n_P pedantic, $n_O overridden"
# shellcheck disable=SC2154
check "lintian errors" "$n_E" 0
# shellcheck disable=SC2154
check "lintian warnings not overridden" "$n_W" 0
grep -E '^[EW]:' "$tmp/lintian"

# Every file the package must install, and nothing under /usr/local.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/files"
for f in /usr/sbin/sharnessd /usr/bin/sharnessctl /lib/systemd/system/sharnessd.service \
	/usr/share/man/man8/sharnessd.8.gz /usr/share/man/man8/sharnessctl.8.gz \
	/usr/share/man/man5/sharness.policy.5.gz \
	/usr/share/bash-completion/completions/sharnessctl \
	/usr/share/doc/sharness/README.md /usr/share/doc/sharness/copyright \
	/usr/share/doc/sharness/changelog.gz \
	/etc/sharness/policies/agent.policy /etc/sharness/policies/harness.policy \
	/etc/sharness/policies/demo.policy /etc/logrotate.d/sharness \
	/usr/share/sharness/policies/agent.policy /usr/libexec/sharness/sharness-oci-hook \
	/usr/share/containers/oci/hooks.d/sharness.json; do
	check "the package holds $f" "$(grep -cx -- "$f" "$tmp/files")" 1
done
check "nothing under /usr/local" "$(grep -c '^/usr/local' "$tmp/files")" 0
check "every policy of policies/ is a packaged policy" \
	"$(cd "$(dirname "$0")/../../policies" && ls ./*.policy | sed 's|^\./||' | tr '\n' ' ')" \
	"$(sed -n 's|^/etc/sharness/policies/||p' "$tmp/files" | grep . | sort | tr '\n' ' ')"

dpkg-deb -e "$deb" "$tmp/ctl"
check "conffiles" "$(sort "$tmp/ctl/conffiles" | tr '\n' ' ')" \
	"/etc/logrotate.d/sharness /etc/sharness/policies/agent.policy /etc/sharness/policies/demo.policy /etc/sharness/policies/harness.policy "

dpkg-deb -x "$deb" "$tmp/root"
unit=$(cat "$tmp/root/lib/systemd/system/sharnessd.service")
check_has "unit: ExecStart is the packaged daemon" "$unit" '^ExecStart=/usr/sbin/sharnessd --foreground$'
check_has "unit: ExecReload is the packaged sharnessctl" "$unit" '^ExecReload=/usr/bin/sharnessctl policy reload$'
check_has "unit: Documentation= names the man pages" "$unit" \
	'^Documentation=man:sharnessd\(8\) man:sharnessctl\(8\) man:sharness.policy\(5\)$'
check_has "unit: Documentation= names the README" "$unit" \
	'^Documentation=file:///usr/share/doc/sharness/README.md$'
check "the README the unit names is there, uncompressed" \
	"$(cmp -s "$tmp/root/usr/share/doc/sharness/README.md" "$(dirname "$0")/../../README.md" && echo same)" same
check "the packaged sharnessctl runs" "$("$tmp/root/usr/bin/sharnessctl" --version | cut -d' ' -f1)" sharnessctl
check "the packaged sharnessd runs" "$("$tmp/root/usr/sbin/sharnessd" --version | cut -d' ' -f1)" sharnessd
# The hooks.d file (the format podman and CRI-O read): the packaged hook,
# at createRuntime, only for a container with the annotation.
hooks=$tmp/root/usr/share/containers/oci/hooks.d/sharness.json
check "hooks.d: names the packaged hook, at createRuntime, when annotated" \
	"$(jq -r '[.version, .hook.path, (.stages | join(",")), (.when.annotations | keys | join(","))] | join(" ")' "$hooks")" \
	"1.0.0 /usr/libexec/sharness/sharness-oci-hook createRuntime ^org\\.sharness\\.policy$"
check "hooks.d: the hook it names is the packaged file" \
	"$([ -x "$tmp/root$(jq -r .hook.path "$hooks")" ] && echo yes)" yes
check "the packaged hook leaves a container without the annotation alone" \
	"$(echo '{"ociVersion":"1.0.2","id":"c","status":"creating","pid":1,"annotations":{"x":"y"}}' |
		"$tmp/root/usr/libexec/sharness/sharness-oci-hook"; echo "rc=$?")" "rc=0"
out=$(echo '{"id":"c","status":"creating","pid":1,"annotations":{"org.sharness.policy":"p"}}' |
	"$tmp/root/usr/libexec/sharness/sharness-oci-hook" --socket "$tmp/none.sock" 2>&1; echo "rc=$?")
check_has "... and refuses an annotated one it cannot hold (no daemon at the socket)" \
	"$(tr '\n' ' ' <<<"$out")" "sharness-oci-hook: container c: cannot reach sharnessd at $tmp/none.sock.*rc=1"
# The state's status at createRuntime: "creating" (runc), "created"
# (crun 1.8); both go on to the daemon. A later stage is refused.
out=$(echo '{"id":"c","status":"created","pid":1,"annotations":{"org.sharness.policy":"p"}}' |
	"$tmp/root/usr/libexec/sharness/sharness-oci-hook" --socket "$tmp/none.sock" 2>&1; echo "rc=$?")
check_has "... a 'created' one (crun's state at createRuntime) likewise goes on to the daemon" \
	"$(tr '\n' ' ' <<<"$out")" "sharness-oci-hook: container c: cannot reach sharnessd at $tmp/none.sock.*rc=1"
out=$(echo '{"id":"c","status":"running","pid":1,"annotations":{"org.sharness.policy":"p"}}' |
	"$tmp/root/usr/libexec/sharness/sharness-oci-hook" --socket "$tmp/none.sock" 2>&1; echo "rc=$?")
check_has "... a 'running' one (a later stage: its command may have run) is refused" \
	"$(tr '\n' ' ' <<<"$out")" "container c: the container is 'running', not 'creating' or 'created': run this hook at createRuntime.*rc=1"
check_has "the packaged policies pass policy check" \
	"$("$tmp/root/usr/bin/sharnessctl" policy check "$tmp/root/etc/sharness/policies" 2>&1)" \
	"policy 'agent' ok.*"
check_has "the logrotate snippet rotates the audit log and signals the daemon" \
	"$(cat "$tmp/root/etc/logrotate.d/sharness")" 'kill --kill-whom=main --signal=HUP sharnessd.service'
if command -v logrotate >/dev/null; then
	logrotate -d "$tmp/root/etc/logrotate.d/sharness" >"$tmp/logrotate" 2>&1
	check "logrotate reads the snippet" "$?" 0
fi

# The maintainer scripts against recording stand-ins.
stubs=$tmp/stubs
mkdir -p "$stubs"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$c" "$tmp" >"$stubs/$c"
done
# A unit the package never installed before (a first install; on upgrade
# the postinst restarts without asking).
echo '[ "$1" = debian-installed ] && exit 1; exit 0' >>"$stubs/deb-systemd-helper"
# sharnessctl probe and sharnessd --unload answer with PROBE_RC / UNLOAD_RC.
printf '#!/bin/sh\necho "sharnessctl $*" >>"%s/calls"\necho "what to change:  boot with lsm=landlock,lockdown,yama,bpf"\nexit ${PROBE_RC:-0}\n' \
	"$tmp" >"$stubs/sharnessctl"
printf '#!/bin/sh\necho "sharnessd $*" >>"%s/calls"\necho "1 cgroup is tagged"\nexit ${UNLOAD_RC:-0}\n' \
	"$tmp" >"$stubs/sharnessd"
chmod +x "$stubs"/*
# maint SCRIPT ARGS...: runs it; its output in OUT, the calls in CALLS.
maint() {
	local s=$1
	shift
	: >"$tmp/calls"
	OUT=$(PATH="$stubs:$PATH" sh "$tmp/ctl/$s" "$@" 2>&1)
	RC=$?
	CALLS=$(cat "$tmp/calls")
}
systemd_up=no
[ -d /run/systemd/system ] && systemd_up=yes

maint postinst configure ""
check "first install, kernel can enforce: postinst exits 0" "$RC" 0
check_has "... the probe runs" "$CALLS" '^sharnessctl probe$'
check_has "... the unit is enabled" "$CALLS" '^deb-systemd-helper enable sharnessd.service$'
check "... started where systemd runs" \
	"$(grep -cx 'deb-systemd-invoke start sharnessd.service' <<<"$CALLS")" "$([ $systemd_up = yes ] && echo 1 || echo 0)"
check_has "... and it says so" "$OUT" 'can enforce; sharnessd.service is enabled'

PROBE_RC=3 maint postinst configure ""
check "first install, kernel cannot enforce: postinst exits 0" "$RC" 0
check "... the unit is not enabled" "$(grep -c 'enable sharnessd.service' <<<"$CALLS")" 0
check "... nor started" "$(grep -c 'invoke start' <<<"$CALLS")" 0
check_has "... it says the unit is left disabled" "$OUT" 'cannot enforce, so sharnessd.service is installed but left disabled'
check_has "... with the probe's own finding" "$OUT" '^    what to change:  boot with lsm=landlock,lockdown,yama,bpf$'
check_has "... and what to change" "$OUT" 'lsm=<the list'
check_has "... and how to start it then" "$OUT" 'systemctl enable --now sharnessd'

maint postinst configure 0.8.0
check "upgrade: postinst exits 0" "$RC" 0
check "... no probe (the unit keeps its state)" "$(grep -c 'probe' <<<"$CALLS")" 0
check "... a running daemon is restarted where systemd runs" \
	"$(grep -cx 'deb-systemd-invoke restart sharnessd.service' <<<"$CALLS")" "$([ $systemd_up = yes ] && echo 1 || echo 0)"

maint prerm upgrade 0.9.1
check "prerm upgrade: nothing stopped or unloaded" "$(grep -c 'stop\|unload' <<<"$CALLS")" 0
maint prerm remove
check "prerm remove: exits 0" "$RC" 0
check "... stops the unit where systemd runs" \
	"$(grep -cx 'deb-systemd-invoke stop sharnessd.service' <<<"$CALLS")" "$([ $systemd_up = yes ] && echo 1 || echo 0)"
check_has "... and unloads the pinned programs" "$CALLS" '^sharnessd --unload$'
UNLOAD_RC=1 maint prerm remove
check "prerm remove, cgroups tagged: exits 0" "$RC" 0
check_has "... and says the tagged trees stay held" "$OUT" 'stay attached and keep the tagged cgroups held'

echo "  PACKAGE   $(stat -c %s "$deb") bytes; $passed passed, $failed failed"
[ "$failed" -eq 0 ]
