#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy reload: `policy reload` and SIGHUP swap a good policy set in for new
# trees and for trees already running; a bad set changes nothing and says
# where it is wrong. Several policies at once, nearest tagged ancestor,
# `cgroup =` tags, and `policy check` without a daemon.
. "$(dirname "$0")/lib.sh"

P=$SH_TMP/policies
VMB=$SH_BUILD/tests/vm
NL=$'\n'
mkfifo "$SH_TMP/nap"
# Shell builtins only where a loop waits: every process start is slow here.
nap() { read -r -t "$1" <>"$SH_TMP/nap"; }

# log_n REGEX: sets N to the number of audit log lines matching REGEX.
log_n() {
	local l
	N=0
	[ -e "$AUDIT" ] || return 0
	while IFS= read -r l; do [[ $l =~ $1 ]] && N=$((N + 1)); done <"$AUDIT"
}
# log_wait REGEX COUNT: waits up to SH_WAIT s until COUNT lines match; sets N.
log_wait() {
	for ((w = 0; w < SH_WAIT * 10; w++)); do
		log_n "$1"
		[ "$N" -ge "$2" ] && return 0
		nap 0.1
	done
}
# file_wait FILE REGEX: waits up to SH_WAIT s for a line of FILE matching REGEX.
file_wait() {
	local l
	for ((w = 0; w < SH_WAIT * 10; w++)); do
		if [ -e "$1" ]; then
			while IFS= read -r l; do [[ $l =~ $2 ]] && return 0; done <"$1"
		fi
		nap 0.1
	done
	return 1
}
# st: one `status --json`; num NAME: a numeric field of it.
st() { ST=$($CTL status --json); }
num() { if [[ $ST =~ \"$1\":([0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; else echo none; fi; }
viol() { echo "\"event\":\"violation\",\"policy\":\"$1\",\"action\":\"deny\",\"hook\":\"exec\".*\"target\":\"$2\""; }

# policy FILE NAME ALLOWED...: an exec allowlist policy (bash and the test
# helpers always allowed).
policy() {
	local f=$1 name=$2 b
	shift 2
	{
		printf '[policy]\nname = %s\n[exec]\nallow = /usr/bin/bash\nallow = %s/\n' "$name" "$VMB"
		for b; do printf 'allow = %s\n' "$b"; done
	} >"$P/$f"
}
# waitgo FLAG: sets WAITGO to a tree's wait (builtins only, at most SH_WAIT s)
# until the test creates $SH_TMP/FLAG.
waitgo() { WAITGO="for ((i = 0; i < $((SH_WAIT * 20)); i++)); do [ -e $SH_TMP/$1 ] && break; read -r -t 0.05 x <>$SH_TMP/nap; done"; }
# lines FILE: LN is the array of its lines.
lines() { LN=(); [ -e "$1" ] && mapfile -t LN <"$1"; }
# BOTH: inside a tree, try /usr/bin/id and /usr/bin/true; prints
# "id=<verdict> true=<verdict>" where a verdict is ok or EPERM.
BOTH="i=\$($VMB/try exec /usr/bin/id -u); [ \"\$i\" = 0 ] && i=ok || i=\${i#err }
$VMB/try exec /usr/bin/true >/dev/null && t=ok || t=EPERM
echo \"id=\$i true=\$t\""

policy r1.policy r1 /usr/bin/true
policy r2.policy r2 /usr/bin/true

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"

# ---- a good reload, seen by a tree that is already running ----------------
waitgo go1
$CTL run --policy r1 -- /usr/bin/bash -c "$BOTH; $WAITGO; $BOTH" \
	>"$SH_TMP/live.out" 2>"$SH_TMP/live.err" &
live=$!
file_wait "$SH_TMP/live.out" '^id=' || fail "live tree started" "$(cat "$SH_TMP/live.err")"
lines "$SH_TMP/live.out"
check "live tree before reload: id refused, true runs" "${LN[0]-}" "id=EPERM true=ok"
log_wait "$(viol r1 /usr/bin/id)" 1
check "before reload: the id denial is logged against r1" "$N" 1

policy r1.policy r1 /usr/bin/id
# a0 sorts first: r1 and r2 move to other places in the policy table, and running
# trees must still follow their policy by name.
policy a0.policy a0
out=$($CTL policy reload 2>&1)
check "good reload exits 0" "$?" 0
check_match "good reload says what it loaded" "$out" "^reloaded 3 policies from $P"
log_n '"event":"reload","result":"ok","policies":3'
check "reload ok is in the audit log" "$N" 1

: >"$SH_TMP/go1"
wait $live
check "live tree ends normally" "$?" 0
lines "$SH_TMP/live.out"
check "live tree after reload: id now runs, true now refused" "${LN[1]-}" "id=ok true=EPERM"
log_wait "$(viol r1 /usr/bin/true)" 1
check "newly denied exec of the live tree is logged against r1" "$N" 1
st
check "kernel counter: two exec denials so far" "$(num deny_exec)" 2

# New trees follow the new policy too.
OUT=$($CTL run --policy r1 -- /usr/bin/bash -c "$BOTH" 2>/dev/null)
check "new tree after reload: id runs, true refused" "$OUT" "id=ok true=EPERM"
st
check "kernel counter: one more denial" "$(num deny_exec)" 3

# ---- bad reloads: nothing changes ------------------------------------------
# Each bad set also carries a change (true allowed in r1 again) that must not
# take effect.
bad_reload() { # NAME ERROR_REGEX
	local out rc
	out=$($CTL policy reload 2>&1)
	rc=$?
	check "bad reload ($1): exits 2" "$rc" 2
	check_match "bad reload ($1): FILE:LINE: message" "$out" "$2"
	check_match "bad reload ($1): previous policy stays in force" "$out" \
		"previous policy stays in force"
}
policy r1.policy r1 /usr/bin/id /usr/bin/true

echo "colour = blue" >>"$P/r1.policy"
bad_reload "unknown key" "$P/r1.policy:8: [^$NL]*colour"
policy r1.policy r1 /usr/bin/id /usr/bin/true

printf '[policy]\nname = r9\n[exec]\nallow = usr/bin/true\n' >"$P/r9.policy"
bad_reload "relative path" "$P/r9.policy:4: relative path"

printf '[policy]\nname = r1\n' >"$P/r9.policy"
bad_reload "duplicate name across files" "$P/r9.policy:2: duplicate policy name 'r1' \\(first in $P/r1.policy:2\\)"

printf -v long '%190s' ''
long=/${long// /a}
printf '[policy]\nname = r9\n[exec]\nallow = %s\n' "$long" >"$P/r9.policy"
bad_reload "rule path too long" "$P/r9.policy:4: path too long \\(191 bytes, max 190\\)"
rm "$P/r9.policy"

log_n '"event":"reload","result":"failed","error":"[^"]*:[0-9]+: '
check "each failed reload is in the audit log with its first error" "$N" 4

# The old set is still enforced and still listed.
OUT=$($CTL run --policy r1 -- /usr/bin/bash -c "$BOTH" 2>/dev/null)
check "after bad reloads: r1 still refuses true and allows id" "$OUT" "id=ok true=EPERM"
st
check "after bad reloads: the kernel counter still counts" "$(num deny_exec)" 4
check "after bad reloads: still 3 policies" "$(num policies)" 3
stat_txt=$($CTL status)
check_match "after bad reloads: status lists a0, r1 and r2" "$stat_txt" \
	$'\n  a0 +enforce  \\('"$P"$'/a0.policy\\)\n  r1 +enforce  \\('"$P"$'/r1.policy\\)\n  r2 +enforce  \\('"$P/r2.policy\\)"
policy r1.policy r1 /usr/bin/id

# ---- SIGHUP: the same as reload --------------------------------------------
check_match "daemon pid from status --json" "$DAEMON_PID" '^[0-9]+$'
policy r2.policy r2 /usr/bin/true /usr/bin/id
kill -HUP "$DAEMON_PID"
log_wait '"event":"reload","result":"ok"' 2
check "SIGHUP: reload ok record" "$N" 2
OUT=$($CTL run --policy r2 -- "$TRY" exec /usr/bin/id -u 2>/dev/null)
check "SIGHUP: id newly allowed in r2" "$OUT" 0

printf 'allow = /usr/bin/uname\n[bogus]\n' >>"$P/r2.policy"
policy r1.policy r1 /usr/bin/id /usr/bin/true
kill -HUP "$DAEMON_PID"
log_wait '"event":"reload","result":"failed"' 5
check "SIGHUP with a bad file: reload failed record" "$N" 5
log_n "\"event\":\"reload\",\"result\":\"failed\",\"error\":\"$P/r2.policy:9: "
check "SIGHUP failure names FILE:LINE in the record" "$N" 1
file_wait "$SH_TMP/daemon.err" "r2.policy:9: unknown section \\[bogus\\]"
check "SIGHUP failure: the daemon names FILE:LINE on stderr" "$?" 0
for ((w = 0; w < SH_WAIT * 10; w++)); do
	n=0
	while IFS= read -r l; do
		[[ $l =~ "reload of $P failed; the previous policy stays in force" ]] && n=$((n + 1))
	done <"$SH_TMP/daemon.err"
	[ $n -ge 5 ] && break
	nap 0.1
done
check "SIGHUP failure: the daemon says the previous policy stays (5th time)" "$n" 5
OUT=$($CTL run --policy r1 -- "$TRY" exec /usr/bin/true 2>/dev/null)
check "SIGHUP failure: r1 still refuses true" "$OUT" "err EPERM"
st
check "SIGHUP failure: kernel counter counts it" "$(num deny_exec)" 5
check "SIGHUP failure: still 3 policies" "$(num policies)" 3
policy r1.policy r1 /usr/bin/id
policy r2.policy r2 /usr/bin/true
$CTL policy reload >/dev/null
check "reload back to r1 (id) and r2 (true)" "$?" 0

# ---- several policies at once, each tree held to its own ------------------
# run_cgroups COUNT: waits up to SH_WAIT s until COUNT run cgroups exist.
run_cgroups() {
	local c
	for ((w = 0; w < SH_WAIT * 10; w++)); do
		c=(/sys/fs/cgroup/sharness/run-*)
		[ -e "${c[0]}" ] && [ "${#c[@]}" -ge "$1" ] && return 0
		nap 0.1
	done
	return 1
}
waitgo go2
$CTL run --policy r1 -- /usr/bin/bash -c "$WAITGO; $BOTH" >"$SH_TMP/multi1.out" 2>/dev/null &
m1=$!
$CTL run --policy r2 -- /usr/bin/bash -c "$WAITGO; $BOTH" >"$SH_TMP/multi2.out" 2>/dev/null &
m2=$!
run_cgroups 2
st
check "two runs of two policies are tagged at once" "$(num tagged)" 2
: >"$SH_TMP/go2"
wait $m1 $m2
lines "$SH_TMP/multi1.out"
check "r1 tree: id runs, true refused" "${LN[*]}" "id=ok true=EPERM"
lines "$SH_TMP/multi2.out"
check "r2 tree, alongside: id refused, true runs" "${LN[*]}" "id=EPERM true=ok"
log_wait "$(viol r2 /usr/bin/id)" 1
check "r2's denial is logged against r2" "$N" 1

# ---- nearest tagged ancestor wins ------------------------------------------
A=/sys/fs/cgroup/t_reload_a
mkdir -p "$A/b"
$CTL tag "$A" r1 && $CTL tag "$A/b" r2
check "tag a with r1 and a/b with r2" "$?" 0
in_cg() { /usr/bin/bash -c "echo \$\$ >$1/cgroup.procs; $BOTH"; }
check "process in a/b follows r2" "$(in_cg "$A/b")" "id=EPERM true=ok"
check "process in a follows r1" "$(in_cg "$A")" "id=ok true=EPERM"
log_wait "\"policy\":\"r2\".*\"cgroup\":\"$A/b\".*\"target\":\"/usr/bin/id\"" 1
check "a/b denial is recorded against r2 and a/b" "$N" 1
log_wait "\"policy\":\"r1\".*\"cgroup\":\"$A\",.*\"target\":\"/usr/bin/true\"" 1
check "a denial is recorded against r1 and a" "$N" 1
$CTL untag "$A/b"
check "untag a/b" "$?" 0
check "after untag, a/b follows a's r1" "$(in_cg "$A/b")" "id=ok true=EPERM"

# A process that stays in a while a is re-tagged with another policy: the
# same tree and cgroup, so only the tag generation tells it that the
# policy it was found held to (and remembers) is no longer the one.
waitgo go_retag
/usr/bin/bash -c "echo \$\$ >$A/cgroup.procs; $BOTH; $WAITGO; $BOTH" >"$SH_TMP/retag.out" 2>&1 &
retag=$!
file_wait "$SH_TMP/retag.out" '^id=' || fail "re-tag: the live process started" "$(cat "$SH_TMP/retag.out")"
lines "$SH_TMP/retag.out"
check "re-tag: the live process in a, before: r1 (id runs, true refused)" "${LN[0]-}" "id=ok true=EPERM"
$CTL untag "$A" && $CTL tag "$A" r2
check "re-tag: a untagged and tagged with r2" "$?" 0
: >"$SH_TMP/go_retag"
wait $retag
lines "$SH_TMP/retag.out"
check "re-tag: the same process now follows r2 (id refused, true runs)" "${LN[1]-}" "id=EPERM true=ok"
log_wait "\"policy\":\"r2\".*\"cgroup\":\"$A\",.*\"target\":\"/usr/bin/id\"" 1
check "re-tag: its id denial is recorded against r2 and a" "$N" 1
$CTL untag "$A"
rmdir "$A/b" "$A"

# ---- cgroup = lines tag at load -------------------------------------------
X=/sys/fs/cgroup/t_reload_x
printf '[policy]\nname = r3\ncgroup = %s\n[exec]\nallow = /usr/bin/bash\nallow = %s/\n' \
	"$X" "$VMB" >"$P/r3.policy"
out=$($CTL policy reload 2>&1)
check "cgroup line naming a missing cgroup: reload refused" "$?" 2
check_match "missing cgroup: FILE:LINE" "$out" "$P/r3.policy:3: cgroup $X is not a cgroup v2 directory"
mkdir "$X"
out=$($CTL policy reload 2>&1)
check "cgroup line naming an existing cgroup: reload ok" "$?" 0
stat_txt=$($CTL status)
check_match "status lists the cgroup tagged by r3" "$stat_txt" "$X +r3( |"$'\n'")"
check "process in the cgroup of a cgroup line is held to r3" "$(in_cg "$X")" "id=EPERM true=EPERM"
out=$($CTL untag "$X" 2>&1)
rc=$?
check_match "untag of a cgroup-line cgroup is refused" "$rc" '^[1-9]'
check_match "untag refusal says why" "$out" "tagged by policy 'r3' \\(cgroup = line\\)"
check "still held after the refused untag" "$(in_cg "$X")" "id=EPERM true=EPERM"
printf '[policy]\nname = r3\n[exec]\nallow = /usr/bin/bash\nallow = %s/\n' "$VMB" >"$P/r3.policy"
$CTL policy reload >/dev/null
check "reload without the cgroup line" "$?" 0
check "cgroup line gone: the cgroup is free" "$(in_cg "$X")" "id=ok true=ok"
rmdir "$X"

# ---- a policy in use by a live run cannot be removed -----------------------
waitgo go3
$CTL run --policy r3 -- /usr/bin/bash -c "$WAITGO; $BOTH" >"$SH_TMP/inuse.out" 2>/dev/null &
iu=$!
run_cgroups 1
mv "$P/r3.policy" "$SH_TMP/r3.policy"
out=$($CTL policy reload 2>&1)
check "removing a policy a live run uses: reload exits 2" "$?" 2
check_match "says which run uses it" "$out" "policy 'r3' is in use by run cgroup /sys/fs/cgroup/sharness/run-[0-9]+"
check_match "says the previous policy stays" "$out" "previous policy stays in force"
: >"$SH_TMP/go3"
wait $iu
lines "$SH_TMP/inuse.out"
check "the live run is still held to r3" "${LN[*]}" "id=EPERM true=EPERM"
out=$($CTL policy reload 2>&1)
check "once the run ended the same reload succeeds" "$?" 0
check_match "and loads the three remaining policies" "$out" "^reloaded 3 policies"

# ---- policy check: no daemon needed ---------------------------------------
out=$("$SH_BUILD/sharnessctl" --socket /nonexistent policy check "$(dirname "$0")"/../../policies/*.policy 2>&1)
check "policy check of the shipped policies exits 0" "$?" 0
check_match "policy check lists them ok" "$out" "policy 'demo' ok"
B=$SH_TMP/bad
mkdir -p "$B"
printf '[policy]\nname = one\ncolour = blue\n[exec]\nallow = usr/bin/true\nallow = %s\n' "$long" \
	>"$B/one.policy"
printf '[policy]\nname = two\n' >"$B/two.policy"
printf '[policy]\nname = two\n' >"$B/three.policy"
out=$("$SH_BUILD/sharnessctl" --socket /nonexistent policy check "$B/one.policy" "$B/two.policy" "$B/three.policy" 2>&1)
check "policy check of bad files exits 1" "$?" 1
check_match "check: unknown key at its line" "$out" "(^|$NL)$B/one.policy:3: [^$NL]*colour"
check_match "check: relative path at its line" "$out" "(^|$NL)$B/one.policy:5: relative path"
check_match "check: long path at its line" "$out" "(^|$NL)$B/one.policy:6: path too long"
check_match "check: duplicate name across files" "$out" "(^|$NL)$B/three.policy:2: duplicate policy name 'two' \\(first in $B/two.policy:2\\)"
n=0
while IFS= read -r l; do [[ $l =~ ^$B/(one|two|three)\.policy:[0-9]+:\  ]] && n=$((n + 1)); done <<<"$out"
check "check: every error line is FILE:LINE: message" "$n" 4

check_log_valid
exit 0
