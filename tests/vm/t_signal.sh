#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# [signal] scope = tree at task_kill (kill, tgkill, sigqueue, pidfd) and at
# file_fcntl/file_ioctl (F_SETOWN, F_SETOWN_EX, FIOSETOWN name who gets
# SIGIO later). The tree runs as root: a root tree is held like any other.
. "$(dirname "$0")/lib.sh"

cat >"$SH_TMP/policies/tsig.policy" <<P
[policy]
name = tsig
[exec]
allow = /usr/bin/bash
allow = /usr/bin/sleep
allow = $SH_BUILD/tests/vm/
[signal]
scope = tree
P
sed -e 's/name = tsig/name = tany/' -e 's/scope = tree/scope = any/' \
	"$SH_TMP/policies/tsig.policy" >"$SH_TMP/policies/tany.policy"

# Processes outside every tree.
sleep 600 &
VICTIM=$!
sleep 600 &
VICTIM2=$!          # killed on purpose by the scope = any tree
RUNB=
trap 'kill $VICTIM $VICTIM2 $RUNB 2>/dev/null; cleanup' EXIT

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"
check "no denial yet" "$(counter deny_signal)" 0

# Tree -> outsider: every way of sending a signal is refused. A different
# signal per call tells the events apart; SIGKILL would end the victim.
try_in_tree tsig kill $VICTIM 15
check "kill to an outsider: refused" "$OUT" "err EPERM"
check "try reports the failure" "$RC" 1
try_in_tree tsig tgkill $VICTIM $VICTIM 10
check "tgkill to an outsider: refused" "$OUT" "err EPERM"
try_in_tree tsig sigqueue $VICTIM 12
check "sigqueue to an outsider: refused" "$OUT" "err EPERM"
try_in_tree tsig pidfd-kill $VICTIM 9
check "pidfd_send_signal to an outsider: refused" "$OUT" "err EPERM"
kill -0 $VICTIM 2>/dev/null
check "the outsider is still alive" "$?" 0

sel=".hook==\"signal\" and .op==\"kill\" and .target==\"$VICTIM\""
check "four kill events, one per signal" "$(audit_wait "$sel" 4)" 4
check "their signals: 15 10 12 9" \
	"$(jq -r "select(.event==\"violation\") | select($sel) | .signal" "$AUDIT" | tr '\n' ' ')" "15 10 12 9 "
ev_fields "$(audit_last "$sel and .signal==15")"
check "event: policy" "${F[policy]-}" tsig
check "event: action" "${F[action]-}" deny
check "event: reason" "${F[reason]-}" "outside the tree"
check "event: errno" "${F[errno]-}" 1
check "event: comm" "${F[comm]-}" try
check "event: uid" "${F[uid]-}" 0
check_match "event: cgroup is the run's" "${F[cgroup]-}" '^/sys/fs/cgroup/sharness/run-[0-9]+$'
check "kernel counter: four signal denials" "$(counter deny_signal)" 4

# Signal 0 delivers nothing and is allowed: it only tests for existence.
try_in_tree tsig kill $VICTIM 0
check "signal 0 to an outsider: allowed" "$OUT" ok

# Tree -> its own members: each way works, and the member really dies (143).
$CTL run --policy tsig -- /usr/bin/bash -c "
	for op in kill tgkill sigqueue pidfd-kill; do
		/usr/bin/sleep 600 & p=\$!
		if [ \$op = tgkill ]; then $TRY tgkill \$p \$p 15; else $TRY \$op \$p 15; fi
		wait \$p; echo \"\$op \$?\"
	done" >"$SH_TMP/members.out" 2>/dev/null
check "signals inside the tree: delivered" "$(tr '\n' ' ' <"$SH_TMP/members.out")" \
	"ok kill 143 ok tgkill 143 ok sigqueue 143 ok pidfd-kill 143 "

# Another tree of the same policy is outside this one.
$CTL run --policy tsig -- /usr/bin/sleep 600 2>/dev/null &
RUNB=$!
run_pid() { PB=$(cat /sys/fs/cgroup/sharness/run-*/cgroup.procs 2>/dev/null | head -1); [ -n "$PB" ]; }
PB=
wait_until run_pid
try_in_tree tsig kill "${PB:-0}" 15
check "kill to another tree of the same policy: refused" "$OUT" "err EPERM"
check "its event names that process" \
	"$(audit_wait ".op==\"kill\" and .target==\"${PB:-none}\" and .reason==\"outside the tree\"")" 1
kill -TERM $RUNB
wait $RUNB
check "the other tree's run ends on request (143)" "$?" 143
RUNB=
check "kernel counter: five signal denials" "$(counter deny_signal)" 5

# scope = any: the same signal to an outsider goes through.
try_in_tree tany kill $VICTIM2 15
check "scope = any: kill to an outsider allowed" "$OUT" ok
wait $VICTIM2
check "scope = any: the outsider got SIGTERM" "$?" 143
check "scope = any: no event" "$(audit_count ".target==\"$VICTIM2\"")" 0
VICTIM2=

# F_SETOWN and kin: naming an outsider as SIGIO owner is refused...
try_in_tree tsig setown $VICTIM
check "F_SETOWN to an outsider: refused" "$OUT" "err EPERM"
try_in_tree tsig setown-ex $VICTIM
check "F_SETOWN_EX to an outsider: refused" "$OUT" "err EPERM"
try_in_tree tsig fiosetown $VICTIM
check "FIOSETOWN to an outsider: refused" "$OUT" "err EPERM"
sel=".hook==\"signal\" and .op==\"setown\" and .target==\"$VICTIM\""
check "three setown events" "$(audit_wait "$sel" 3)" 3
# request: F_SETOWN 8, F_SETOWN_EX 15, FIOSETOWN 0x8901
check "their requests: 8 15 35073" \
	"$(jq -r "select(.event==\"violation\") | select($sel) | .request" "$AUDIT" | tr '\n' ' ')" "8 15 35073 "
ev_fields "$(audit_last "$sel")"
check "setown event: reason" "${F[reason]-}" "outside the tree"
check "setown event: action and errno" "${F[action]-} ${F[errno]-}" "deny 1"
check "setown event: policy" "${F[policy]-}" tsig
check "kernel counter: eight signal denials" "$(counter deny_signal)" 8

# ...naming itself (its own pid: bash execs try) or nobody (0) is not.
for op in setown setown-ex fiosetown; do
	OUT=$($CTL run --policy tsig -- /usr/bin/bash -c "exec $TRY $op \$\$" 2>/dev/null | head -1)
	check "$op to itself: allowed" "$OUT" ok
done
try_in_tree tsig setown 0
check "F_SETOWN 0 (no owner): allowed" "$OUT" ok
try_in_tree tany setown $VICTIM
check "scope = any: F_SETOWN to an outsider allowed" "$OUT" ok
check "kernel counter: still eight" "$(counter deny_signal)" 8

# A 32-bit program makes the same request through compat_sys_ioctl, where
# the kernel calls the file_ioctl_compat hook instead of file_ioctl.
try_in_tree tsig fiosetown32 $VICTIM
check "FIOSETOWN to an outsider, 32-bit syscall entry: refused" "$OUT" "err EPERM"
check "32-bit entry: event" "$(audit_wait "$sel and .request==35073" 2)" 2
check "32-bit entry: counted" "$(counter deny_signal)" 9
OUT=$($CTL run --policy tsig -- /usr/bin/bash -c "exec $TRY fiosetown32 \$\$" 2>/dev/null | head -1)
check "FIOSETOWN to itself, 32-bit entry: allowed" "$OUT" ok

# Outside every tagged tree nothing is touched.
before=$(counter deny_signal)
try_outside kill $VICTIM 18
check "outside the tree: SIGCONT to the victim delivered" "$OUT" ok
try_outside setown $VICTIM
check "outside the tree: F_SETOWN to another process" "$OUT" ok
try_outside fiosetown32 $VICTIM
check "outside the tree: 32-bit FIOSETOWN to another process" "$OUT" ok
kill -0 $VICTIM 2>/dev/null
check "the outsider survived the whole test" "$?" 0
check "kernel counter unchanged by outsiders" "$(counter deny_signal)" "$before"

check_log_valid
kill $VICTIM 2>/dev/null
wait 2>/dev/null
exit 0
