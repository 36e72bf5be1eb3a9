#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package, installed and run: build/deb's .deb (make package;
# missing is a failure, never a skip) is unpacked into a root under /tmp
# (the guest's / is read-only), and its own sharnessd, started on its own
# policy directory, and its own sharnessctl enforce: a command refused under
# a shipped policy (errno and audit record) next to an allowed control, for
# an exec and for a write. Its man pages render, its completion loads and
# offers the running daemon's policies, and its postinst, with the packaged
# probe on this kernel, enables the unit.
SH_OWN_PIN=1   # loads, adoption and pins are what it tests: no shared pins
. "$(dirname "$0")/lib.sh"

deb=$(ls "$SH_BUILD"/deb/sharness_*.deb 2>/dev/null | grep -v dbgsym | head -n 1)
if [ -z "$deb" ]; then
	fail "the package exists" "no $SH_BUILD/deb/sharness_*.deb: build it with make package"
	exit 1
fi
pass "the package exists ($(basename "$deb"))"
ROOT=$SH_TMP/root
dpkg-deb -x "$deb" "$ROOT"
check "dpkg-deb -x unpacks it" "$?" 0
PD=$ROOT/usr/sbin/sharnessd
PCTL="$ROOT/usr/bin/sharnessctl --socket $SOCK --pin-dir $PIN"
POL=$ROOT/etc/sharness/policies
check "the packaged binaries are executable" "$([ -x "$PD" ] && [ -x "$ROOT/usr/bin/sharnessctl" ] && echo yes)" yes

# The packaged probe on this kernel: it can enforce.
"$ROOT/usr/bin/sharnessctl" probe >"$SH_TMP/probe.out" 2>&1
check "packaged sharnessctl probe: exit 0 on this kernel" "$?" 0
$PCTL policy check "$POL" >"$SH_TMP/check.out" 2>&1
check "the packaged policy directory passes policy check" "$?" 0

# The packaged daemon on the packaged policy directory.
"$PD" --policy-dir "$POL" --audit-log "$AUDIT" --socket "$SOCK" --pin-dir "$PIN" \
	2>>"$SH_TMP/daemon.err"
check "the packaged sharnessd starts on the packaged policies" "$?" 0
DAEMON_PID=$($PCTL status --json | jq -r .pid)
check "it loaded the three shipped policies" "$($PCTL status --json | jq -r .policies)" 3
check_match "status names them" "$($PCTL status)" "agent +enforce .*demo +enforce .*harness +enforce"

# An exec refused under demo.policy, next to an allowed one.
$PCTL run --policy demo -- /usr/bin/id -u >"$SH_TMP/id.out" 2>"$SH_TMP/id.err"
check "demo: an allowed exec runs (exit 0)" "$?" 0
check "demo: and prints its output" "$(cat "$SH_TMP/id.out")" 0
$PCTL run --policy demo -- /usr/bin/whoami >"$SH_TMP/who.out" 2>"$SH_TMP/who.err"
check "demo: a refused exec exits 126" "$?" 126
check_match "demo: refused with EPERM" "$(cat "$SH_TMP/who.err")" \
	"cannot execute /usr/bin/whoami: Operation not permitted"
check "demo: it never ran" "$(cat "$SH_TMP/who.out")" ""
check "demo: the refusal is an audit record" \
	"$(audit_wait '.policy=="demo" and .hook=="exec" and .target=="/usr/bin/whoami"')" 1
ev_fields "$(audit_last '.policy=="demo" and .target=="/usr/bin/whoami"')"
check "demo: record action" "${F[action]}" deny
check "demo: record errno" "${F[errno]}" 1
check "demo: record reason" "${F[reason]}" "not allowed"

# A write refused under harness.policy, next to one where it may write.
mkdir -p /tmp/harness
$PCTL run --policy harness -- /usr/bin/touch /tmp/harness/inside 2>"$SH_TMP/in.err"
check "harness: a write in /tmp/harness/ lands (exit 0)" "$?" 0
check "harness: the file is there" "$([ -e /tmp/harness/inside ] && echo yes)" yes
$PCTL run --policy harness -- /usr/bin/touch "$SH_TMP/outside" 2>"$SH_TMP/out.err"
check "harness: a write elsewhere fails (exit 1)" "$?" 1
check_match "harness: refused with EPERM" "$(cat "$SH_TMP/out.err")" "Operation not permitted"
check "harness: the file was not created" "$([ -e "$SH_TMP/outside" ] && echo yes || echo no)" no
check "harness: the refusal is an audit record" \
	"$(audit_wait ".policy==\"harness\" and .hook==\"file\" and .target==\"$SH_TMP/outside\"")" 1
ev_fields "$(audit_last ".policy==\"harness\" and .target==\"$SH_TMP/outside\"")"
check "harness: record action" "${F[action]}" deny
check "harness: record errno" "${F[errno]}" 1
check "harness: record access" "${F[access]}" write
rm -rf /tmp/harness

# The packaged log reader shows it.
check_match "packaged sharnessctl log --policy demo shows the refusal" \
	"$($PCTL log --policy demo --file "$AUDIT")" "demo deny exec .*\[[0-9]+\] /usr/bin/whoami \(not allowed\)"

# The man pages render.
if command -v man >/dev/null; then
	for page in man8/sharnessd.8 man8/sharnessctl.8 man5/sharness.policy.5; do
		out=$(MANPAGER=cat MANWIDTH=80 man -l "$ROOT/usr/share/man/$page.gz" 2>"$SH_TMP/man.err")
		check "man -l renders $page: exit 0, nothing on stderr" "$?:$(cat "$SH_TMP/man.err")" "0:"
		check_match "man -l $page: NAME, SYNOPSIS, SEE ALSO" "$out" \
			"NAME.*SYNOPSIS.*SEE ALSO"
	done
else
	fail "man -l renders the pages" "no man on this host (tools/setup installs man-db)"
fi

# The completion loads, and offers the running daemon's policies.
comp=$ROOT/usr/share/bash-completion/completions/sharnessctl
got=$(bash -c '
	. "$1" || exit 1
	complete -p sharnessctl >/dev/null || exit 2
	COMP_WORDS=("$2" --socket "$3" run --policy "")
	COMP_CWORD=5
	_sharnessctl "$2" "" --policy 2>/dev/null
	printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$comp" "$ROOT/usr/bin/sharnessctl" "$SOCK")
check "the completion loads and offers the daemon's policies" "$?:$got" "0:agent demo harness "

# The postinst, with the packaged probe on this kernel (which can
# enforce), enables the unit; systemd's tools are recording stand-ins.
mkdir -p "$SH_TMP/ctl" "$SH_TMP/stubs"
dpkg-deb -e "$deb" "$SH_TMP/ctl"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$c" "$SH_TMP" >"$SH_TMP/stubs/$c"
done
echo '[ "$1" = debian-installed ] && exit 1; exit 0' >>"$SH_TMP/stubs/deb-systemd-helper"
chmod +x "$SH_TMP/stubs"/*
: >"$SH_TMP/calls"
PATH="$SH_TMP/stubs:$ROOT/usr/bin:$PATH" sh "$SH_TMP/ctl/postinst" configure "" >"$SH_TMP/postinst.out" 2>&1
check "postinst (first install) exits 0" "$?" 0
check "postinst: the packaged probe says this kernel can enforce, so the unit is enabled" \
	"$(grep -cx 'deb-systemd-helper enable sharnessd.service' "$SH_TMP/calls")" 1
check_match "postinst: it says so" "$(cat "$SH_TMP/postinst.out")" "can enforce; sharnessd.service is enabled"

# The packaged sharnessctl unloads the packaged daemon.
$PCTL unload >/dev/null 2>&1
check "packaged sharnessctl unload: exit 0" "$?" 0
check "the daemon is gone" "$(gone "$DAEMON_PID" && echo gone)" gone
DAEMON_PID=
check_log_valid
