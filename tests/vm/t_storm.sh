#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An event storm: several processes in a tight loop of refused opens. The
# daemon stays responsive, its memory bounded, the log rate-limited with
# explicit "suppressed" records, and every refusal is accounted for:
# produced = logged + suppressed + dropped.
. "$(dirname "$0")/lib.sh"

mkdir -p "$SH_TMP/work"
cat >"$SH_TMP/policies/tstorm.policy" <<P
[policy]
name = tstorm
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[file]
write = $SH_TMP/work/
P
start_daemon || { fail "daemon starts"; exit 1; }

SECS=${STORM_SECONDS:-6}
tstart=$(date +%s)
$CTL run --policy tstorm -- /usr/bin/bash -c "
	for i in 1 2 3 4; do $SH_BUILD/tests/vm/storm $SH_TMP/storm-target-\$i $SECS >$SH_TMP/work/storm.\$i & done
	wait" 2>/dev/null &
runpid=$!
sleep $((SECS / 2))
t0=$(date +%s%N)
$CTL status >/dev/null
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "status answers during the storm" "$rc" 0
echo "   status answered in $ms ms during the storm (a figure, not a check)"
wait $runpid

refused=0
for i in 1 2 3 4; do refused=$((refused + $(cut -d" " -f1 "$SH_TMP/work/storm.$i"))); done
check_match "the storm produced refusals" "$refused" '^[1-9][0-9]*$'
# Let the daemon drain the ring buffer, then write out the suppression
# counts of the last second: wait for both, not for a guessed time.
drained() {
	local st
	st=$($CTL status --json) || return 1
	[ "$(( $(field logged "$st") + $(field suppressed "$st") + $(field dropped "$st") ))" -ge "$refused" ] &&
		[ "$(jq -s '[.[] | select(.event=="suppressed") | .count] | add // 0' "$AUDIT")" = "$(field suppressed "$st")" ]
}
wait_until drained
st=$($CTL status --json)
produced=$(field deny_file "$st")
dropped=$(field dropped "$st")
logged=$(jq -c 'select(.event=="violation" and .hook=="file")' "$AUDIT" | wc -l)
suppressed=$(jq -s '[.[] | select(.event=="suppressed") | .count] | add // 0' "$AUDIT")
lost=$(jq -s '[.[] | select(.event=="lost") | .count] | add // 0' "$AUDIT")
others=$(jq -r 'select(.event=="violation" and (.target | test("storm-target") | not)) | .target' "$AUDIT")
check "kernel counter equals refusals seen by the processes (+ other refusals: ${others//$'\n'/ })" \
	"$produced" "$((refused + $(grep -c . <<<"$others")))"
check "produced = logged + suppressed + dropped" "$produced" "$((logged + suppressed + dropped))"
check "every dropped event is reported in the log" "$lost" "$dropped"
check_match "suppressed records were written" "$suppressed" '^[1-9][0-9]*$'
elapsed=$(( $(date +%s) - tstart + 1 ))
check "at most 10 records per target per second of the run ($elapsed s)" \
	"$(jq -r 'select(.event=="violation") | .target' "$AUDIT" | sort | uniq -c | awk -v max=$((10 * elapsed)) '$1 > max' | wc -l)" 0

# Every refusal new: a tree that names a new file at each refusal makes a
# new key each time. Its records reach the log at most 100 a second, the
# rest counted in "suppressed" records that name the tree (reason "tree
# budget"): it neither fills the log's file system through the daemon nor
# buries another tree's records. Every refusal is still accounted for.
settled() {
	local st
	st=$($CTL status --json) || return 1
	[ "$(( $(field logged "$st") + $(field suppressed "$st") + $(field dropped "$st") ))" -ge "$(field deny_file "$st")" ] &&
		[ "$(jq -s '[.[] | select(.event=="suppressed") | .count] | add // 0' "$AUDIT")" = "$(field suppressed "$st")" ]
}
wait_until settled
d0=$(field deny_file "$($CTL status --json)")
n0=$(wc -l <"$AUDIT")
t1=$(date +%s)
$CTL run --policy tstorm -- /usr/bin/bash -c "for i in {1..1000}; do : >$SH_TMP/new-\$i; done" 2>/dev/null
wait_until settled
elapsed=$(( $(date +%s) - t1 + 1 ))
tail -n +$((n0 + 1)) "$AUDIT" >"$SH_TMP/new.log"
made=$(( $(field deny_file "$($CTL status --json)") - d0 ))
cg=$(jq -r 'select(.event=="violation" and (.target | test("/new-[0-9]+$"))) | .cgroup' "$SH_TMP/new.log" | head -n 1)
rec=$(jq -c --arg cg "$cg" 'select(.event=="violation" and .cgroup == $cg)' "$SH_TMP/new.log" | wc -l)
budget=$(jq -s --arg cg "$cg" '[.[] | select(.event=="suppressed" and .reason=="tree budget" and .cgroup == $cg) | .count] | add // 0' "$SH_TMP/new.log")
keys=$(jq -s '[.[] | select(.event=="suppressed" and .reason != "tree budget") | .count] | add // 0' "$SH_TMP/new.log")
check "every refusal new: the kernel counted the 1,000 (and the shell's own)" \
	"$([ "$made" -ge 1000 ] && echo yes)" yes
check "... at most 100 records a second for the tree ($rec in $elapsed s)" \
	"$([ "$rec" -le $((100 * elapsed)) ] && [ "$rec" -ge 100 ] && echo yes)" yes
check_match "... the rest counted under the tree's name" "$budget" '^[1-9][0-9]*$'
check "... every refusal accounted for: records + counted = refused" "$((rec + budget + keys))" "$made"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$DAEMON_PID/status")
check "daemon peak memory under 64 MiB" "$([ "$hwm" -lt 65536 ] && echo yes)" yes
echo "storm figures: produced=$produced logged=$logged suppressed=$suppressed dropped=$dropped daemon_peak_rss_kib=$hwm seconds=$SECS processes=4" | tee "$SH_TMP/figures"
check_log_valid
exit 0
