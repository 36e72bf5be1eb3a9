#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test-harness scenarios, under policies/harness.policy (a copy with its
# paths moved into this test's directory): a stub that restarts itself,
# daemons that outlive the run, an environment reset that reaches for the
# operator's tmux server, writes outside the work directory, the side doors
# of a command runner, and shedding membership. Each refusal is asserted on
# its outcome and its audit record, next to a control that works. The runs
# are root: root is held like anyone else.
. "$(dirname "$0")/lib.sh"

ESC=$SH_BUILD/tests/vm/escape
ROOTDIR=$(cd "$(dirname "$0")/../.." && pwd)
SRV=$SH_TMP/srv                 # /srv/harness/ in the shipped policy
STUBS=$SRV/stubs
WORK=$SRV/work                  # the run's work directory
HTMP=$SH_TMP/tmp                # /tmp/harness/: scratch files, tmux sockets
OTHER=/sys/fs/cgroup/t_scenarios_other
OPSOCK=/tmp/tmux-0/default      # the operator's tmux server
mkdir -p "$STUBS" "$WORK" "$HTMP" "$OTHER"

# The shipped policies are valid as they stand.
$SH_BUILD/sharnessctl policy check "$ROOTDIR/policies/harness.policy" \
	"$ROOTDIR/policies/agent.policy" >"$SH_TMP/check.out" 2>&1
check "policy check harness.policy agent.policy" "$?" 0

# The copy this test loads: same rules, paths under $SH_TMP, and the test
# helpers allowed.
sed -e "s|/srv/harness/|$SRV/|g" -e "s|/tmp/harness/|$HTMP/|g" \
	-e "/^\[exec\]/a allow = $SH_BUILD/tests/vm/" \
	"$ROOTDIR/policies/harness.policy" >"$SH_TMP/policies/harness.policy"
check "the test's copy keeps every rule" \
	"$(grep -c '^[a-z-]* *=' "$SH_TMP/policies/harness.policy")" \
	"$(( $(grep -c '^[a-z-]* *=' "$ROOTDIR/policies/harness.policy") + 1 ))"

SERVER=
cleanup_sc() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
	env -u TMUX_TMPDIR tmux kill-server 2>/dev/null
	wait 2>/dev/null
	rm -f /root/.bashrc
	rmdir "$OTHER" 2>/dev/null
	cleanup
}
trap cleanup_sc EXIT

# Audit records are looked for with bash alone (a grep or jq per check
# costs a noticeable fraction of a second under emulation).
# mark HOOK OP [TARGET]: what the next expect_ev looks for, among the log
# lines written from now on.
mark() {
	PATS=("\"hook\":\"$1\"" "\"op\":\"$2\"")
	[ $# -ge 3 ] && PATS+=("\"target\":\"$3\"")
	local l
	mapfile -t l <"$AUDIT"
	BASE=${#l[@]}
}
# new_evs: violation records matching PATS since mark: EVN of them, EV the last.
new_evs() {
	local l p ok lines
	EVN=0 EV=
	mapfile -t -s "$BASE" lines <"$AUDIT"
	for l in "${lines[@]}"; do
		[[ $l == *'"event":"violation"'* ]] || continue
		ok=1
		for p in "${PATS[@]}"; do [[ $l == *"$p"* ]] || { ok=0; break; }; done
		[ $ok = 1 ] && EVN=$((EVN + 1)) EV=$l
	done
}
# expect_ev NAME REASON [N]: N (default 1) such records, refused for REASON.
expect_ev() {
	local n=${3:-1}
	enough_evs() { new_evs; [ "$EVN" -ge "$n" ]; }
	wait_until enough_evs
	check "$1: audit event (${PATS[*]})" "$EVN" "$n"
	# On a miss, what the log got instead.
	[ "$EVN" = "${3:-1}" ] || { mapfile -t -s "$BASE" l <"$AUDIT"; printf '   %s\n' "${l[@]}" | grep -F '"violation"'; }
	check "$1: event says deny, errno, reason, policy" \
		"$(field action "$EV") $(field errno "$EV") $(field reason "$EV") $(field policy "$EV")" \
		"deny 1 $2 harness"
}

# run_h ARGS...: a harness run in the work directory; RC, OUT (first line
# of stdout), ERR (stderr, sharnessctl's report included).
run_h() {
	$CTL run --policy harness --workdir "$WORK" "$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	RC=$?
	first_line "$SH_TMP/last.out"
	ERR=$(cat "$SH_TMP/last.err")
}
in_run() { run_h -- "$TRY" "$@"; }
no_runs_left() {
	find /sys/fs/cgroup/sharness -mindepth 1 -maxdepth 1 -name 'run-*' 2>/dev/null | wc -l
}

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"

# ---- 1. a stub that restarts itself --------------------------------------
# Every bash expands BASH_ENV when it starts; a command substitution there
# runs the stub, which is a bash script: each start starts another.
echo "-- 1. stub that restarts itself (${SECONDS}s)"
printf '#!/bin/bash\necho $$ >>%s/stub.log\n' "$WORK" >"$STUBS/stub"
chmod +x "$STUBS/stub"
# The chain runs until it hits the limit (bash then retries its fork for
# about 30 s); the test waits for that event, then ends the run the way an
# operator's Ctrl-C would. Nothing here depends on the machine's speed.
t0=$SECONDS
BASH_ENV="\$($STUBS/stub)" $CTL run --policy harness --workdir "$WORK" --pids-max 32 \
	-- "$STUBS/stub" >"$SH_TMP/stub.out" 2>"$SH_TMP/stub.err" &
runpid=$!
fork_failed() { grep -qE 'fork: (retry: )?Resource temporarily unavailable' "$SH_TMP/stub.err"; }
chain_procs() { cat /sys/fs/cgroup/sharness/run-*/cgroup.procs 2>/dev/null | wc -l; }
wait_until fork_failed
check_match "the chain hit the pids limit (fork failed)" "$(cat "$SH_TMP/stub.err")" \
	'fork: (retry: )?Resource temporarily unavailable'
n=$(chain_procs)
check "the chain never grew past the pids limit (32 processes, $n seen)" "$(( n >= 1 && n <= 32 ))" 1
check_match "the kernel counted refused forks (pids.events)" \
	"$(cat /sys/fs/cgroup/sharness/run-*/pids.events 2>/dev/null)" '^max [1-9]'
kill -TERM $runpid
wait $runpid
RC=$?
echo "   stub chain: $n processes at the limit, run exit $RC after $((SECONDS - t0))s"
check_match "the chain's run ends (by itself, or 143 on SIGTERM)" "$RC" '^(0|1|143)$'
check "no process of the chain is left" "$(pgrep -f "$STUBS/stub" | wc -l)" 0
check "its cgroup is gone" "$(no_runs_left)" 0

# ---- 2. daemons that outlive the run ----------------------------------------
# Each tmux server daemonizes out of its client, setsid -f double-forks;
# the command waits until all five are up, then exits. It waits for the
# very set it leaves behind (itself, two tmux servers, three sleeps, by
# /proc/PID/comm): a count alone also matches while setsid's bash has not
# yet exited or a pane has not yet run its sleep.
echo "-- 2. daemons that outlive the run (${SECONDS}s)"
TMUX_TMPDIR=$HTMP SHELL=/usr/bin/bash run_h -- /usr/bin/bash -c "
	tmux -L name new -d -s a 'sleep 1000' &&
	tmux -S $HTMP/sock new -d -s b 'sleep 1000' &&
	setsid -f /usr/bin/bash -c 'sleep 1000 & exit 0' || exit 9
	read l </proc/self/cgroup
	for ((i = 0; i < $SH_WAIT * 10; i++)); do
		mapfile -t p <\"/sys/fs/cgroup\${l#0::}/cgroup.procs\"
		t=0 s=0
		for q in \"\${p[@]}\"; do
			read -r c 2>/dev/null </proc/\$q/comm || continue
			case \$c in tmux*) t=\$((t + 1)) ;; sleep) s=\$((s + 1)) ;; esac
		done
		[ \${#p[@]} -eq 6 ] && [ \$t -eq 2 ] && [ \$s -eq 3 ] && break
		sleep 0.1
	done
	tmux -L name ls -F '#{session_name}'
	tmux -S $HTMP/sock ls -F '#{session_name}'"
check "daemons started: two tmux servers with their sessions" \
	"$RC $(tr '\n' ' ' <"$SH_TMP/last.out")" "0 a b "
check_match "run reports the five it killed" "$ERR" 'killed 5 processes left in /sys/fs/cgroup/sharness/run-[0-9]+'
check "no tmux server is left" "$(pgrep tmux | wc -l)" 0
check "no sleep of the run is left" "$(pgrep -f 'sleep 1000' | wc -l)" 0
check "its cgroup is gone" "$(no_runs_left)" 0
ev=$(grep -F '"event":"run-end"' "$AUDIT" | tail -n 1)
check "run-end record counts them" "$(field killed "$ev")" 5

# ---- 3. an environment reset reaching the operator's tmux server ---------
echo "-- 3. operator's tmux server (${SECONDS}s)"
env -u TMUX_TMPDIR -u TMUX tmux new -d -s operator 'sleep 1000'
check "operator's server runs outside the tree" "$(env -u TMUX_TMPDIR tmux ls -F '#{session_name}')" operator
ino=$(stat -c %i "$OPSOCK")
ln -s "$OPSOCK" "$WORK/op.sock"
rel=$(realpath --relative-to="$WORK" "$OPSOCK")

mark connect connect "$OPSOCK"
run_h -- /usr/bin/env -i PATH=/usr/bin:/bin tmux new -d "touch $SH_TMP/pwned"
check "env -i tmux new: refused" "$RC" 1
check_match "env -i tmux new: cannot connect" "$ERR" "error connecting to $OPSOCK \(Operation not permitted\)"
expect_ev "env -i tmux new" "deny rule"
run_h -- tmux -S "$OPSOCK" new -d "touch $SH_TMP/pwned"
check "tmux -S /tmp/tmux-0/default: refused" "$RC $(grep -c 'Operation not permitted' <<<"$ERR")" "1 1"
expect_ev "tmux -S absolute" "deny rule" 2
run_h -- tmux -S "$rel" new -d "touch $SH_TMP/pwned"
check "tmux -S $rel: refused" "$RC $(grep -c 'Operation not permitted' <<<"$ERR")" "1 1"
expect_ev "tmux -S relative" "deny rule" 3
run_h -- tmux -S "$WORK/op.sock" new -d "touch $SH_TMP/pwned"
check "tmux -S symlink-to-it: refused" "$RC $(grep -c 'Operation not permitted' <<<"$ERR")" "1 1"
expect_ev "tmux -S symlink" "deny rule" 4

check "the operator's server has only its own session" \
	"$(env -u TMUX_TMPDIR tmux ls -F '#{session_name}')" operator
check "the marker never appears" "$([ -e "$SH_TMP/pwned" ] && echo present || echo absent)" absent
check "the operator's socket is untouched (same inode)" "$(stat -c %i "$OPSOCK")" "$ino"

TMUX_TMPDIR=$HTMP SHELL=/usr/bin/bash run_h -- /usr/bin/bash -c "
	tmux -S $HTMP/own new -d -s mine 'sleep 1000' && tmux -S $HTMP/own ls -F '#{session_name}'"
check "control: tmux on the tree's own socket works" "$RC $OUT" "0 mine"
check_match "control: its server is killed with the run" "$ERR" 'killed 2 processes'
# A server of the host no deny rule names (another socket, another
# directory): harness.policy's [connect] scope = tree refuses it all the same.
tmux -S "$SH_TMP/host.sock" new -d -s hostside 'sleep 1000'
mark connect connect "$SH_TMP/host.sock"
run_h -- tmux -S "$SH_TMP/host.sock" new -d "touch $SH_TMP/pwned"
check "tmux -S on a host server no rule names: refused" \
	"$RC $(grep -c 'Operation not permitted' <<<"$ERR")" "1 1"
expect_ev "tmux -S host server" "outside the tree"
check "the host server has only its own session" \
	"$(tmux -S "$SH_TMP/host.sock" ls -F '#{session_name}')" hostside
tmux -S "$SH_TMP/host.sock" kill-server
env -u TMUX_TMPDIR tmux kill-server

# ---- 4. writes outside the work directory -----------------------------------
echo "-- 4. writes outside the work dir (${SECONDS}s)"
echo operator >/root/.bashrc
for t in /root/file /tmp/t_scenarios-tmpfile "$SRV/file"; do
	t=$(realpath -m "$t")
	mark file create "$t"
	in_run open "$t" creat
	check "create $t: refused" "$OUT" "err EPERM"
	expect_ev "create $t" "not allowed"
	check "$t does not exist" "$([ -e "$t" ] && echo yes || echo no)" no
done
mark file open /root/.bashrc
in_run open /root/.bashrc append
check "append to /root/.bashrc: refused" "$OUT" "err EPERM"
expect_ev "append to /root/.bashrc" "not allowed"
check "access write" "$(field access "$EV")" write
run_h -- /usr/bin/bash -c 'echo "alias ls=evil" >>/root/.bashrc'
check_match "a shell's >> ~/.bashrc: refused" "$ERR" 'bashrc: Operation not permitted'
check "/root/.bashrc unchanged" "$(cat /root/.bashrc)" operator
in_run open "$WORK/out" creat
check "control: create in the work dir" "$OUT" ok
run_h -- /usr/bin/bash -c 'echo landed >out2'
check "control: a shell's relative write lands in the work dir" "$RC $(cat "$WORK/out2")" "0 landed"

# ---- 5. side doors of a command runner ------------------------------------
echo "-- 5. command runner side doors (${SECONDS}s)"
mark exec exec /usr/bin/python3.11
in_run exec /usr/bin/python3 -c 'print(1)'
check "python3: refused" "$OUT" "err EPERM"
expect_ev "python3" "deny rule"
mark exec exec /usr/bin/perl
in_run exec /usr/bin/perl -e 'print 1'
check "perl: refused" "$OUT" "err EPERM"
expect_ev "perl" "deny rule"
check "outside: python3 runs" "$(/usr/bin/python3 -c 'print(1)')" 1

mark exec exec "$WORK/mytrue"
run_h -- /usr/bin/bash -c "cp /usr/bin/true mytrue && exec $TRY exec ./mytrue"
check "a binary written into the workspace: refused" "$OUT" "err EPERM"
expect_ev "workspace binary" "not allowed"
check "  ... though the copy landed" "$([ -x "$WORK/mytrue" ] && echo yes)" yes
"$WORK/mytrue"
check "outside: the same copy runs" "$?" 0
in_run exec /usr/bin/true
check "control: the allowed true runs" "$RC" 0

PATS=('"hook":"exec"' '"target":"/memfd:')
mapfile -t _l <"$AUDIT"; BASE=${#_l[@]}
run_h -- "$ESC" memfd-exec /usr/bin/true
check "memfd_create + fexecve: refused" "$OUT" "err EPERM"
expect_ev "memfd_create + fexecve" "deleted or in-memory file"
check "outside: memfd_create + fexecve runs" "$("$ESC" memfd-exec /usr/bin/echo ran)" ran

sleep 600 &
SERVER=$!
mark signal kill "$SERVER"
in_run kill "$SERVER" 15
check "signal to a server outside the tree: refused" "$OUT" "err EPERM"
expect_ev "signal to the server" "outside the tree"
mark ptrace ptrace "$SERVER"
run_h -- "$ESC" ptrace-attach "$SERVER"
check "ptrace-attach to the server: refused" "$OUT" "err EPERM"
expect_ev "ptrace to the server" "outside the tree"
kill -0 "$SERVER"
check "the server still runs" "$?" 0
run_h -- /usr/bin/bash -c 'sleep 100 & kill $!; wait $!; echo $?'
check "control: signalling its own child works" "$OUT" 143
kill "$SERVER"; wait "$SERVER" 2>/dev/null
SERVER=

# ---- 6. shedding membership -----------------------------------------------
echo "-- 6. shedding membership (${SECONDS}s)"
mark cgroup open "$OTHER/cgroup.procs"
run_h -- /usr/bin/bash -c "
	echo \$\$ >$OTHER/cgroup.procs && echo moved
	read l </proc/self/cgroup; echo \"\$l\"
	exec $TRY exec /usr/bin/python3 -c 1"
check_match "echo \$\$ > another cgroup.procs: refused" "$ERR" 'cgroup.procs: Operation not permitted'
expect_ev "another cgroup.procs" "forbidden in a tree"
check_match "still in the run's cgroup" "$OUT" '^0::/sharness/run-[0-9]+$'
check "still held: python3 still refused" "$(sed -n 2p "$SH_TMP/last.out")" "err EPERM"
OUT=$(bash -c "echo \$\$ >$OTHER/cgroup.procs && read l </proc/self/cgroup && echo \"\$l\"")
check "outside: the same write moves the process" "$OUT" "0::/t_scenarios_other"

check_log_valid
check "no run is left" "$(no_runs_left)" 0
check "no process of the runs is left" \
	"$(pgrep -f "sleep 1000|$STUBS/stub" | wc -l) $(pgrep tmux | wc -l)" "0 0"
exit 0
