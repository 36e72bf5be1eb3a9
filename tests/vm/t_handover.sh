#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A daemon built from an older release ($SH_BUILD/prev, see the Makefile's
# HANDOVER_FROM) hands over to this build with no moment unenforced: a tree
# started under the old daemon tries a refused exec over and over while the
# old daemon stops and this one adopts its pinned state. Not one attempt
# may succeed; the records the old programs wrote (whole 4 KiB records)
# and the ones the new programs write (sized to their path) read the same;
# the run started by the old sharnessctl ends through the new daemon.
SH_OWN_PIN=1   # loads, adoption and pins are what it tests: no shared pins
. "$(dirname "$0")/lib.sh"

PREV=$SH_BUILD/prev
if ! [ -x "$PREV/sharnessd" ] || ! [ -x "$PREV/sharnessctl" ]; then
	fail "the previous build is there" "no $PREV/sharnessd (make $PREV/sharnessd)"
	exit 1
fi
OLDCTL="$PREV/sharnessctl --socket $SOCK --pin-dir $PIN"

cat >"$SH_TMP/policies/thand.policy" <<P
[policy]
name = thand
[exec]
allow = /usr/bin/bash
allow = /usr/bin/touch
allow = $SH_BUILD/tests/vm/
P
SH_DAEMON=$PREV/sharnessd start_daemon || { fail "the old daemon starts"; exit 1; }
check "the old daemon is the previous build" \
	"$(readlink "/proc/$DAEMON_PID/exe")" "$PREV/sharnessd"

# The tree: try the refused exec until told to stop, one verdict per line,
# a tenth of a second apart (a read that times out on a FIFO, no fork).
# While no daemon runs, the old build's records (4 KiB each) wait in its
# 4 MiB ring, which holds about 990: paced, a gap of over a minute
# between the daemons fits, however slow the guest loads the new one.
F=$SH_TMP
mkfifo "$F/pace"
$OLDCTL run --policy thand -- /usr/bin/bash -c \
	"while ! [ -e $F/stop ]; do $TRY exec /usr/bin/id -u; read -t 0.1 <>$F/pace; done >$F/verdicts 2>&1; /usr/bin/touch $F/ended" \
	>"$F/run.out" 2>"$F/run.err" &
runpid=$!
verdicts() { cat "$F/verdicts" 2>/dev/null | grep -c .; }
started() { [ "$(verdicts)" -ge 3 ]; }
wait_until started
check "under the old daemon: refused" "$(head -n 1 "$F/verdicts")" "err EPERM"

stop_daemon TERM
n_down=$(verdicts)
more() { [ "$(verdicts)" -ge $((n_down + 3)) ]; }
wait_until more
check "between the daemons: still refused" "$(tail -n 1 "$F/verdicts" | grep -c EPERM)" 1

start_daemon || { fail "this build's daemon starts"; exit 1; }
check "this build's daemon runs" "$(readlink "/proc/$DAEMON_PID/exe")" "$SH_BUILD/sharnessd"
check "it adopted the old daemon's pinned state" \
	"$(field adopted "$(last_event daemon-start)")" 1
n_up=$(verdicts)
more2() { [ "$(verdicts)" -ge $((n_up + 3)) ]; }
wait_until more2
touch "$F/stop"
wait $runpid
check "the run the old sharnessctl started ends through the new daemon" "$?" 0
check "the tree's last command ran" "$([ -e "$F/ended" ] && echo yes)" yes

total=$(verdicts)
[ "$n_down" -ge 3 ] && [ "$n_up" -ge $((n_down + 3)) ] && [ "$total" -ge $((n_up + 3)) ] &&
	pass "attempts before ($n_down), between and after ($((total - n_up))) the daemons" ||
	fail "attempts before, between and after the daemons" "$n_down, $n_up, $total"
check "not one attempt ran /usr/bin/id" "$(grep -vc '^err EPERM$' "$F/verdicts")" 0

# Every refusal is in the log, named whole, whichever build wrote it: as a
# record of its own, or counted in a "suppressed" record (the old programs'
# records wait in the ring while no daemon runs, and are read in a burst).
logged() { exec_refusals /usr/bin/id; }
all_logged() { [ "$(logged)" -ge "$total" ]; }
wait_until all_logged
check "every refused attempt is logged with its path" "$(logged)" "$total"
check "no record has a damaged path" \
	"$(jq -c 'select(.event=="violation" and .hook=="exec" and .target!="/usr/bin/id")' "$AUDIT" | wc -l)" 0
check "the new daemon reports the run's end" \
	"$(jq -c 'select(.event=="run-end")' "$AUDIT" | wc -l)" 1
check "one pinned generation left" "$(ls -d "$PIN"/gen-* | wc -l)" 1
check_log_valid
exit 0
