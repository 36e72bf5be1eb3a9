#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package, installed and run: build/deb's .deb (make package;
# missing is a failure, never a skip) is installed by dpkg into a root
# under /tmp (the guest's / is read-only) as an upgrade over the release
# before, with a tree of that release's daemon trying a refused exec all
# the while: dpkg replaces the files under the running daemon, the
# postinst's restart (as on a host with systemd) hands over to this
# release's daemon, and not one attempt runs. Then its own sharnessd, on
# its own policy directory, and its own sharnessctl enforce: a command
# refused under a shipped policy (errno and audit record) next to an
# allowed control, for an exec and for a write. Its man pages render, its
# completion loads and offers the running daemon's policies. First of all,
# its postinst, with the packaged probe on this kernel, enables the unit.
SH_OWN_PIN=1   # loads, adoption and pins are what it tests: no shared pins
. "$(dirname "$0")/lib.sh"

deb=$(ls "$SH_BUILD"/deb/sharness_*.deb 2>/dev/null | grep -v dbgsym | head -n 1)
if [ -z "$deb" ]; then
	fail "the package exists" "no $SH_BUILD/deb/sharness_*.deb: build it with make package"
	exit 1
fi
pass "the package exists ($(basename "$deb"))"
version=$(dpkg-deb -f "$deb" Version)
NEW=$SH_TMP/new   # its files as built, to compare with what dpkg left
dpkg-deb -x "$deb" "$NEW"
check "dpkg-deb -x unpacks it" "$?" 0
ROOT=$SH_TMP/root
PD=$ROOT/usr/sbin/sharnessd
PCTL="$ROOT/usr/bin/sharnessctl --socket $SOCK --pin-dir $PIN"
POL=$ROOT/etc/sharness/policies
same() { cmp -s "$1" "$2" && echo same || echo differs; }

# systemd's tools are recording stand-ins. deb-systemd-invoke's restart
# does what systemd's does for the unit: the running daemon ($OLD_PID)
# stops, and the packaged one starts (its start returns once enforcing).
# In between, with no daemon running, it waits for three more of the
# upgrade's tree's attempts ($UP/verdicts, below; their count before in
# $UP/down).
UP=$SH_TMP/up
mkdir -p "$SH_TMP/ctl" "$SH_TMP/stubs"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$c" "$SH_TMP" >"$SH_TMP/stubs/$c"
done
echo '[ "$1" = debian-installed ] && exit 1; exit 0' >>"$SH_TMP/stubs/deb-systemd-helper"
cat >>"$SH_TMP/stubs/deb-systemd-invoke" <<STUB
[ "\$1 \$2" = "restart sharnessd.service" ] || exit 0
kill -TERM "\$OLD_PID"
i=0
while kill -0 "\$OLD_PID" 2>/dev/null; do i=\$((i + 1)); [ \$i -lt 600 ] || exit 1; sleep 0.1; done
n=\$(grep -c . "$UP/verdicts")
echo "\$n" >"$UP/down"
while [ "\$(grep -c . "$UP/verdicts")" -lt \$((n + 3)) ]; do i=\$((i + 1)); [ \$i -lt 1200 ] || exit 1; sleep 0.1; done
exec "$PD" --policy-dir "$POL" --audit-log "$AUDIT" --socket "$SOCK" --pin-dir "$PIN" 2>>"$SH_TMP/daemon.err"
STUB
chmod +x "$SH_TMP/stubs"/*
: >"$SH_TMP/calls"

# The postinst of a first install runs the packaged probe on this kernel
# (which can enforce: it loads and attaches every program, before any
# daemon of this file has, as on a host the package is first installed
# on), and enables the unit.
dpkg-deb -e "$deb" "$SH_TMP/ctl"
PATH="$SH_TMP/stubs:$NEW/usr/bin:$PATH" sh "$SH_TMP/ctl/postinst" configure "" >"$SH_TMP/postinst.out" 2>&1
check "postinst (first install) exits 0" "$?" 0
check "postinst: the packaged probe says this kernel can enforce, so the unit is enabled" \
	"$(grep -cx 'deb-systemd-helper enable sharnessd.service' "$SH_TMP/calls")" 1
check_match "postinst: it says so" "$(cat "$SH_TMP/postinst.out")" "can enforce; sharnessd.service is enabled"
check "postinst: no unit started without systemd" "$(grep -c 'deb-systemd-invoke' "$SH_TMP/calls")" 0
: >"$SH_TMP/calls"

# ---- an upgrade as dpkg does it, over a live tree -------------------------
# The release before, packaged: this package with the previous build's
# binaries and shipped policies (HANDOVER_FROM's, built from git history:
# its daemon reads none of this release's new keys), as 0.8.0~prev.
PREV=$SH_BUILD/prev
if ! [ -x "$PREV/sharnessd" ] || ! [ -d "$PREV/src/policies" ]; then
	fail "the previous build is there" "no $PREV/sharnessd (make $PREV/sharnessd)"
	exit 1
fi
O=$SH_TMP/old
dpkg-deb -R "$deb" "$O"
cp "$PREV/sharnessd" "$O/usr/sbin/sharnessd"
cp "$PREV/sharnessctl" "$O/usr/bin/sharnessctl"
for p in "$PREV"/src/policies/*.policy; do
	cp "$p" "$O/etc/sharness/policies/"
	cp "$p" "$O/usr/share/sharness/policies/"
done
sed -i 's/^Version: .*/Version: 0.8.0~prev/' "$O/DEBIAN/control"
(cd "$O" && cut -c35- DEBIAN/md5sums | xargs md5sum) >"$SH_TMP/md5sums" &&
	mv "$SH_TMP/md5sums" "$O/DEBIAN/md5sums"
dpkg-deb -Zgzip -z1 -b "$O" "$SH_TMP/old.deb" >/dev/null
check "the release before, packaged" "$?:$(dpkg-deb -f "$SH_TMP/old.deb" Version)" "0:0.8.0~prev"

# Installed by dpkg into the root (its own database there; the libraries
# it depends on are the guest's, which that database does not list).
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
: >"$ROOT/var/lib/dpkg/status"
# Its maintainer scripts run outside a chroot (the root has no shell),
# with DPKG_ROOT set, as for any install into a root; what dpkg said is
# shown when it fails.
dpkg_i() { # DEB LOG
	local rc
	PATH="$SH_TMP/stubs:$PATH" dpkg --root="$ROOT" --force-depends --force-script-chrootless \
		--log="$SH_TMP/dpkg.log" -i "$1" </dev/null >"$2" 2>&1
	rc=$?
	[ $rc -eq 0 ] || tail -n 8 "$2" | sed 's/^/  dpkg: /'
	return $rc
}
installed() { dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${db:Status-Abbrev}${Version}' sharness; }
dpkg_i "$SH_TMP/old.deb" "$SH_TMP/dpkg-old.out"
check "dpkg -i of the release before: exit 0" "$?" 0
check "... installed and configured" "$(installed)" "ii 0.8.0~prev"
check "... its daemon is the previous build" "$(same "$PD" "$PREV/sharnessd")" same

"$PD" --policy-dir "$POL" --audit-log "$AUDIT" --socket "$SOCK" --pin-dir "$PIN" \
	2>>"$SH_TMP/daemon.err"
check "the release before's sharnessd starts on its shipped policies" "$?" 0
DAEMON_PID=$(counter pid)

# Its tree tries an exec demo.policy refuses until told to stop, one exit
# status a line (126: refused), a tenth of a second apart (a read that
# times out on a FIFO, no fork). While no daemon runs, the old build's
# records (4 KiB each, whole structs) wait in its 4 MiB ring, which holds
# about 990: paced, a gap of over a minute between the daemons fits,
# however slowly the guest loads the new one.
U=$UP
mkdir -p "$U"
mkfifo "$U/pace"
$PCTL run --policy demo -- /usr/bin/bash -c \
	"while ! [ -e $U/stop ]; do /usr/bin/uname >>$U/ran 2>/dev/null; echo \$? >>$U/verdicts; read -t 0.1 <>$U/pace; done; /usr/bin/true" \
	>"$U/run.out" 2>"$U/run.err" &
runpid=$!
verdicts() { cat "$U/verdicts" 2>/dev/null | grep -c .; }
more() { [ "$(verdicts)" -ge $((n + 3)) ]; }
n=0
wait_until more
check "under the release before: the exec refused (126)" "$(head -n 1 "$U/verdicts")" 126

dpkg_i "$deb" "$SH_TMP/dpkg-new.out"
check "dpkg -i of this release over it, the tree running: exit 0" "$?" 0
check "... installed and configured" "$(installed)" "ii $version"
check "... the daemon's file is this release's" "$(same "$PD" "$NEW/usr/sbin/sharnessd")" same
check "... so are the shipped policies (conffiles not changed here)" \
	"$(same "$POL/agent.policy" "$NEW/etc/sharness/policies/agent.policy")" same
check "... the release before's daemon still runs (into a root, nothing restarts)" \
	"$(kill -0 "$DAEMON_PID" 2>/dev/null && grep -c restart "$SH_TMP/calls")" 0
n=$(verdicts)
wait_until more
check "... its tree still refused" "$(tail -n 1 "$U/verdicts")" 126

# What the postinst of this release does on a host with systemd.
: >"$SH_TMP/calls"
mkdir -p /run/systemd/system
OLD_PID=$DAEMON_PID PATH="$SH_TMP/stubs:$ROOT/usr/bin:$PATH" \
	sh "$ROOT/var/lib/dpkg/info/sharness.postinst" configure 0.8.0~prev >"$SH_TMP/postinst-up.out" 2>&1
check "postinst configure 0.8.0~prev on a host with systemd: exit 0" "$?" 0
rmdir /run/systemd/system /run/systemd 2>/dev/null
check "... it restarts the unit" "$(grep -cx 'deb-systemd-invoke restart sharnessd.service' "$SH_TMP/calls")" 1
DAEMON_PID=$(counter pid)
check "... the daemon now running is this release's" "$(same "/proc/$DAEMON_PID/exe" "$NEW/usr/sbin/sharnessd")" same
check "... it adopted the pinned state" \
	"$(field adopted "$(last_event daemon-start)")" 1
down=$(cat "$U/down" 2>/dev/null)
check_match "... between the daemons, its tree tried three times more: refused" \
	"$down: $(sed -n "$((down + 1)),$((down + 3))p" "$U/verdicts" | tr '\n' ' ')" "^[1-9][0-9]*: 126 126 126 $"
n=$(verdicts)
wait_until more
touch "$U/stop"
wait "$runpid"
check "the run the release before's sharnessctl started ends through the new daemon (its last command's 0)" "$?" 0
total=$(verdicts)
check "not one attempt ran uname (before, during and after the upgrade: $total)" \
	"$(grep -vc '^126$' "$U/verdicts"):$(cat "$U/ran" 2>/dev/null)" "0:"
logged() { exec_refusals /usr/bin/uname; }
all_logged() { [ "$(logged)" -ge "$total" ]; }
wait_until all_logged
check "every refused attempt is logged" "$(logged)" "$total"
# The old programs' records and the new ones' (sized to their path) read
# the same.
check "... none with a damaged path" \
	"$(jq -c 'select(.event=="violation" and .hook=="exec" and .target!="/usr/bin/uname")' "$AUDIT" | wc -l)" 0
check "... the new daemon reports the run's end" \
	"$(jq -c 'select(.event=="run-end")' "$AUDIT" | wc -l)" 1
check "... one pinned generation left" "$(ls -d "$PIN"/gen-* | wc -l)" 1

check "the packaged binaries are executable" "$([ -x "$PD" ] && [ -x "$ROOT/usr/bin/sharnessctl" ] && echo yes)" yes

$PCTL policy check "$POL" >"$SH_TMP/check.out" 2>&1
check "the packaged policy directory passes policy check" "$?" 0

# The packaged daemon, on the packaged policy directory.
check "it loaded the three shipped policies" "$(field policies "$($PCTL status --json)")" 3
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

# The packaged sharnessctl unloads the packaged daemon.
$PCTL unload >/dev/null 2>&1
check "packaged sharnessctl unload: exit 0" "$?" 0
check "the daemon is gone" "$(gone "$DAEMON_PID" && echo gone)" gone
DAEMON_PID=
check_log_valid
