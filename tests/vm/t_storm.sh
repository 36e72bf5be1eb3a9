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
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$DAEMON_PID/status")
check "daemon peak memory under 64 MiB" "$([ "$hwm" -lt 65536 ] && echo yes)" yes
echo "storm figures: produced=$produced logged=$logged suppressed=$suppressed dropped=$dropped daemon_peak_rss_kib=$hwm seconds=$SECS processes=4" | tee "$SH_TMP/figures"
check_log_valid
exit 0
