#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What an operator meets around the edges: hints that name what works; a
# violation while no daemon runs keeps its policy's name; lock errors that
# say what failed; a detached daemon that stays off the starter's
# terminal; `policy check` deciding as the daemon does (directories,
# cgroups); option errors that name themselves; messages that say which
# policy and what to do.
. "$(dirname "$0")/lib.sh"

cat >"$SH_TMP/policies/top.policy" <<P
[policy]
name = top
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
P
start_daemon || { fail "daemon starts"; exit 1; }
check "started by hand, it keeps out of the OOM killer's way" "$(cat /proc/$DAEMON_PID/oom_score_adj)" -1000

# (1) unload returns once the daemon is gone, and the next one starts at
# once: t_pinned (an unload here would make the next start a load).

# (2) The SIGTERM hint names what works without a daemon (attached:
# --detach-idle never; t_pinned stops one that rests).
stop_daemon TERM
check_match "SIGTERM: the hint names sharnessd --unload" "$(cat "$SH_TMP/daemon.err")" \
	"sharnessd --unload --pin-dir $PIN. detaches them"

# (3) A violation while no daemon runs keeps its policy's name.
start_daemon || { fail "daemon restarts"; exit 1; }
F=$SH_TMP
mkfifo "$F/cmd" "$F/ack"
$CTL run --policy top -- /usr/bin/bash -c \
	"while read -r x <$F/cmd; do [ \"\$x\" = quit ] && exit 0; $TRY exec \$x -u >$F/ack 2>&1; done" \
	2>/dev/null &
runpid=$!
ask() { echo "$1" >"$F/cmd"; local r; read -r r <"$F/ack"; echo "$r"; }
check "under the daemon: refused" "$(ask /usr/bin/id)" "err EPERM"
stop_daemon KILL
check "without a daemon: refused" "$(ask /usr/bin/whoami)" "err EPERM"
start_daemon || { fail "daemon restarts after kill -9"; exit 1; }
check "the refusal made while down is logged" \
	"$(audit_wait '.hook=="exec" and .target=="/usr/bin/whoami"')" 1
check "and keeps its policy's name" \
	"$(audit_last '.hook=="exec" and .target=="/usr/bin/whoami"' | jq -r .policy)" top
echo quit >"$F/cmd"
wait $runpid

# (4) A lock that cannot be opened is not "another sharnessd".
setpriv --reuid=65534 --regid=65534 --clear-groups "$SH_BUILD/sharnessd" \
	--policy-dir "$SH_TMP/policies" --audit-log "$SH_TMP/nobody.jsonl" --socket "$SOCK" \
	--pin-dir "$PIN-nobody" 2>"$SH_TMP/nobody.err"
check "non-root sharnessd: exit 1" "$?" 1
check_match "it says the lock file could not be opened, and why" "$(cat "$SH_TMP/nobody.err")" \
	"cannot open the lock file .*Permission denied \(sharnessd runs as root\)"
check "it does not claim another sharnessd" "$(grep -c 'another sharnessd' "$SH_TMP/nobody.err")" 0
"$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/policies" --audit-log "$AUDIT" --socket "$SOCK" \
	--pin-dir "$PIN" 2>"$SH_TMP/second.err"
check "a second root sharnessd: exit 1" "$?" 1
check_match "it says another sharnessd holds the lock" "$(cat "$SH_TMP/second.err")" \
	"another sharnessd holds"

# (5) Detached from a terminal, the daemon writes nothing more on it.
stop_daemon TERM
script -qfec "$SH_BUILD/sharnessd --policy-dir $SH_TMP/policies --audit-log $AUDIT --socket $SOCK --pin-dir $PIN; echo \"sharnessd exit \$?\"; sleep 600" \
	"$SH_TMP/tty.log" >/dev/null 2>&1 &
scriptpid=$!
# The foreground sharnessd returns once the daemon enforces, or has failed:
# waited for as that event (its exit status on the terminal), not by
# SH_WAIT's clock, as a start takes tens of seconds here (start_daemon).
# (A digit: the log's header names the command, "$?" and all.)
started() { grep -qE 'sharnessd exit [0-9]+' "$SH_TMP/tty.log" || ! kill -0 $scriptpid 2>/dev/null; }
SH_WAIT=$SH_START_WAIT wait_until started
check "on the terminal: the daemon started" "$(grep -oE 'sharnessd exit [0-9]+' "$SH_TMP/tty.log")" \
	"sharnessd exit 0"
DAEMON_PID=$(counter pid)
check_match "on the terminal: its start-up messages" "$(cat "$SH_TMP/tty.log")" "enforcing 1 policies"
printf '[policy]\nname = broken\n[bogus]\n' >"$SH_TMP/policies/broken.policy"
$CTL policy reload >/dev/null 2>&1
check "a bad reload is refused" "$?" 2
rm "$SH_TMP/policies/broken.policy"
$CTL policy reload >/dev/null 2>&1
check "a good reload after it" "$?" 0
check "the reload record is in the log" "$(jq -c 'select(.event=="reload" and .result=="failed")' "$AUDIT" | wc -l)" 1
check "nothing the detached daemon said reached the terminal" \
	"$(grep -c 'reload of\|broken.policy' "$SH_TMP/tty.log")" 0
kill $scriptpid 2>/dev/null
wait $scriptpid 2>/dev/null

# (6) policy check decides as the daemon does.
out=$($CTL policy check "$SH_TMP/policies" 2>&1)
check "policy check DIR: the directory the daemon reads" "$?" 0
check_match "policy check DIR: lists its policy" "$out" "policy 'top' ok"
printf '[policy]\nname = cg\ncgroup = /sys/fs/cgroup/t_operator_missing\n[exec]\nallow = /usr/bin/nothere\n' \
	>"$SH_TMP/cg.policy"
out=$($CTL policy check "$SH_TMP/cg.policy" 2>&1)
check "policy check: a cgroup that does not exist is an error" "$?" 1
check_match "policy check: says where" "$out" "cg.policy:3: cgroup /sys/fs/cgroup/t_operator_missing is not a cgroup v2 directory"
check_match "policy check: warns of an allow for a missing file" "$out" "cg.policy:5: warning: exec allow /usr/bin/nothere"
cp "$SH_TMP/cg.policy" "$SH_TMP/policies/"
out=$($CTL policy reload 2>&1)
check "reload refuses the same file (exit 2)" "$?" 2
check_match "reload says the same" "$out" "cg.policy:3: cgroup /sys/fs/cgroup/t_operator_missing is not a cgroup v2 directory"
rm "$SH_TMP/policies/cg.policy"

# (7) Bad option values are errors; a bad option names itself.
out=$($CTL log -n abc 2>&1)
check "log -n abc: exit 1" "$?" 1
check_match "log -n abc: says so" "$out" "bad -n 'abc'"
out=$($CTL log --bogus 2>&1)
check "log --bogus: exit 1" "$?" 1
check_match "log --bogus: names it and points to help" "$out" "unrecognized option '--bogus'.*Try 'sharnessctl log --help'"
check "log --bogus: no whole usage" "$(grep -c '^commands:' <<<"$out")" 0
out=$($CTL run --help)
check "run --help: exit 0" "$?" 0
check_match "run --help: run's own usage" "$out" "^usage: sharnessctl run --policy NAME"

# (8) Messages that say which policy, and what to do.
out=$($CTL run --policy nosuch -- /usr/bin/true 2>&1)
check "an unknown policy: run refused (125)" "$?" 125
check_match "it lists the loaded policies" "$out" "no policy named 'nosuch' is loaded \(loaded: top\)"
out=$($CTL run --policy top -- /usr/bin/id 2>&1)
check "a refused CMD: 126" "$?" 126
check_match "it says which policy refused it" "$out" "refused by policy 'top'"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SH_BUILD/sharnessctl" --socket "$SOCK" status 2>&1)
check "non-root status: exit 4" "$?" 4
check_match "non-root: told to run as root" "$out" "run sharnessctl as root"
# run-start keeps the whole command line, quoted as a shell reads it back.
$CTL run --policy top -- /usr/bin/bash -c 'exit 0' "a b" "it's" plain >/dev/null 2>&1
argv=$(jq -r 'select(.event=="run-start") | .argv' "$AUDIT" | tail -1)
check "run-start: the whole command line" "$argv" "/usr/bin/bash -c 'exit 0' 'a b' 'it'\\''s' plain"
eval "words=($argv)"
check "run-start: read back, the same words" "${#words[@]}:${words[3]}:${words[4]}" "6:a b:it's"
# Log queries: by run, hook, action and time.
rid=$(jq -r 'select(.event=="run-start") | .run' "$AUDIT" | tail -1)
out=$($CTL log --json --run "$rid")
check "log --run: only that run's records" "$(jq -r .run <<<"$out" | sort -u)" "$rid"
check_match "log --run: its start and end" "$(jq -r .event <<<"$out" | tr '\n' ' ')" "run-start .*run-end"
check "log --hook exec --action deny: only those" \
	"$($CTL log --json --hook exec --action deny | jq -r '"\(.hook) \(.action)"' | sort -u)" "exec deny"
check "log --since now: nothing older" "$($CTL log --since now | grep -c .)" 0
check_match "log --since 1h: this test's records" "$($CTL log --since 1h | grep -c .)" '^[1-9][0-9]*$'
check "log --until 2000-01-01: nothing" "$($CTL log --until 2000-01-01 | grep -c .)" 0
n1=$($CTL log --since 1h | grep -c .)
check "log --since '1 hour ago' (as journalctl takes it): the same records" \
	"$($CTL log --since '1 hour ago' | grep -c .) $($CTL log --since -1h | grep -c .)" "$n1 $n1"
check_match "log --since yesterday: this test's records" "$($CTL log --since yesterday | grep -c .)" '^[1-9][0-9]*$'
check "log --until yesterday: none of them" "$($CTL log --until yesterday | grep -c .)" 0
$CTL log --since yesterdayish >/dev/null 2>&1
check "log --since with a bad time: exit 1" "$?" 1

# Versions: both binaries, status and the daemon-start record agree.
v=$("$SH_BUILD/sharnessd" --version)
check_match "sharnessd --version" "$v" '^sharnessd [0-9]+\.[0-9]+\.[0-9]+'
check "sharnessctl --version is the same build" "$($CTL --version | cut -d' ' -f2)" "${v#sharnessd }"
check "status --json carries it" "$(counter version)" "${v#sharnessd }"
check "the daemon-start record carries it" \
	"$(jq -r 'select(.event=="daemon-start") | .version' "$AUDIT" | tail -1)" "${v#sharnessd }"

# The unit's capability bounding set is enough to enforce: a daemon
# holding only those capabilities starts, and a tree under it is held.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$(cd "$(dirname "$0")/../.." && pwd)/tools/sharnessd.service.in" |
	tr 'A-Z' 'a-z' | sed -e 's/cap_/+/g' -e 's/ /,/g')
stop_daemon TERM
setpriv --bounding-set="-all,$caps" "$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/policies" \
	--audit-log "$AUDIT" --socket "$SOCK" --pin-dir "$PIN" 2>>"$SH_TMP/daemon.err"
check "with only the unit's capabilities ($caps): sharnessd starts" "$?" 0
DAEMON_PID=$(counter pid)
# CAP_BPF 39, CAP_PERFMON 38, CAP_MAC_ADMIN 33, CAP_LEASE 28,
# CAP_SYS_RESOURCE 24, CAP_SYS_ADMIN 21, CAP_DAC_READ_SEARCH 2.
check "its capabilities are the unit's bounding set" \
	"$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$DAEMON_PID/status)" 000000c211200004
try_in_tree top exec /usr/bin/id
check "with only the unit's capabilities: a tree is held" "$OUT" "err EPERM"
run_in_tree top /usr/bin/bash -c true
check "with only the unit's capabilities: a run works" "$RC" 0

# Metrics for fleets: Prometheus text from status and in a textfile.
out=$($CTL status --prometheus)
check "status --prometheus: exit 0" "$?" 0
check "every sample line is well formed" \
	"$(grep -v '^#' <<<"$out" | grep -cvE '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+$')" 0
check "it carries the version and the policy digest" "$(grep -cF \
	"sharness_info{version=\"${v#sharnessd }\",policy_digest=\"$(counter policy_digest)\"} 1" <<<"$out")" 1
check_match "it counts the kernel's refusals by hook" "$out" \
	'sharness_kernel_violations_total\{hook="exec",action="deny"\} [1-9]'
check_match "it counts what the daemon read by policy" "$out" \
	'sharness_violations_total\{policy="top",hook="exec",action="deny"\} [1-9]'
a=$(sed -n 's/^sharness_programs_attached //p' <<<"$out")
r=$(sed -n 's/^sharness_resting //p' <<<"$out")
check "programs attached and resting are both there, and never both" \
	"$( [[ $a =~ ^[0-9]+$ && $r =~ ^[01]$ ]] && ! { [ "$r" = 1 ] && [ "$a" -gt 0 ]; }; echo $?)" 0
check "calls let through unjudged: the sum, 0 here, and no program named" \
	"$(grep -c '^sharness_unjudged_calls_total 0$' <<<"$out") $(grep -c '^sharness_unjudged_calls_total{' <<<"$out")" "1 0"
stop_daemon TERM
start_daemon --metrics-file "$SH_TMP/sharness.prom" || fail "daemon starts with --metrics-file"
check_match "--metrics-file: written at start" "$(cat "$SH_TMP/sharness.prom" 2>/dev/null)" "sharness_tagged_trees"
n0=$($CTL status --prometheus | sed -n 's/^sharness_kernel_violations_total{hook="exec",action="deny"} //p')
try_in_tree top exec /usr/bin/id
more_in_file() { grep -q "^sharness_kernel_violations_total{hook=\"exec\",action=\"deny\"} $((n0 + 1))\$" "$SH_TMP/sharness.prom"; }
wait_until more_in_file
check "--metrics-file: rewritten after a denial" "$?" 0
check "--metrics-file: no temporary file left" "$(ls "$SH_TMP"/sharness.prom.tmp 2>/dev/null | wc -l)" 0

# Shipped policies do not log noise: an interactive shell on a terminal
# opens /dev/tty, which a policy with write rules must name.
ROOTDIR=$(cd "$(dirname "$0")/../.." && pwd)
cp "$ROOTDIR/policies/agent.policy" "$ROOTDIR/policies/harness.policy" "$SH_TMP/policies/"
sed -e 's/name = top/name = notty/' "$SH_TMP/policies/top.policy" >"$SH_TMP/policies/notty.policy"
printf '[file]\nwrite = /tmp/\n' >>"$SH_TMP/policies/notty.policy"
$CTL policy reload >/dev/null
check "the shipped policies load" "$?" 0
for pol in notty agent harness; do
	script -qec "$SH_BUILD/sharnessctl --socket $SOCK run --policy $pol -- /usr/bin/bash -i -c true" \
		/dev/null >/dev/null 2>&1
	check "an interactive shell under $pol on a terminal runs" "$?" 0
done
check "without /dev/tty in its write rules, the shell's open of it is refused" \
	"$(audit_wait '.policy=="notty" and .target=="/dev/tty"')" 1
check "the shipped policies log nothing for it" \
	"$(audit_count '(.policy=="agent" or .policy=="harness") and .target=="/dev/tty"')" 0
check_log_valid
exit 0
