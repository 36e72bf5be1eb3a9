#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The audit log when the disk is full and when it is rotated: the daemon
# keeps enforcing and answering, the log never holds half a record, the
# loss is counted and written down once the log can be written again.
. "$(dirname "$0")/lib.sh"

SMALL=$SH_TMP/small
mkdir -p "$SMALL" "$SH_TMP/work" "$SH_TMP/out"
mount -t tmpfs -o size=16k tmpfs "$SMALL"
AUDIT=$SMALL/audit.jsonl
cat >"$SH_TMP/policies/taudit.policy" <<P
[policy]
name = tlog
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[file]
write = $SH_TMP/work/
write = /dev/null
P
start_daemon || { fail "daemon starts"; umount "$SMALL"; exit 1; }

# 300 refused writes to distinct files, in a second or two: records for
# 16 KB many times over, 100 a second at most for the tree (the rest
# counted as suppressed, in a record the full disk takes too).
$CTL run --policy tlog -- /usr/bin/bash -c \
	"for i in {1..300}; do : 2>/dev/null >$SH_TMP/out/f\$i; done" 2>/dev/null
# The daemon has read every refusal once written + unwritten covers them.
all_read() {
	local st w
	st=$($CTL status --json) || return 1
	w=$(jq -c 'select(.event=="violation")' "$AUDIT" 2>/dev/null | wc -l)
	[ $((w + $(field log_write_errors "$st") + $(field suppressed "$st"))) -ge 300 ]
}
wait_until all_read
st=$($CTL status --json)
check "the daemon answers with a full log disk" "$?" 0
# (bash also opens /dev/tty for writing at start: one more refusal)
check "every refusal counted in the kernel" "$([ "$(field deny_file "$st")" -ge 300 ] && echo yes)" yes
check_match "records that could not be written are counted" "$(field log_write_errors "$st")" '^[1-9][0-9]*$'
check "the full log holds whole records only" "$(jq -e . "$AUDIT" >/dev/null 2>&1; echo $?)" 0
written=$(jq -c 'select(.event=="violation")' "$AUDIT" | wc -l)
check "some records were written before the disk filled" "$([ "$written" -gt 0 ] && [ "$written" -lt 300 ] && echo yes)" yes
check "no refusal unaccounted: written + unwritten + past the tree's budget >= refused" \
	"$([ $((written + $(field log_write_errors "$st") + $(field suppressed "$st"))) -ge 300 ] && echo yes)" yes
n=$(grep -c 'cannot write audit log' "$SH_TMP/daemon.err")
check "the daemon said so on stderr, once per episode, not per record" \
	"$([ "$n" -ge 1 ] && [ "$n" -le 10 ] && echo yes)" yes

# Free the disk the way copytruncate rotation does.
cp "$AUDIT" "$SH_TMP/audit.1"
: >"$AUDIT"
try_in_tree tlog open "$SH_TMP/out/after" creat
check "still refusing after the disk filled" "$OUT" "err EPERM"
check "a log-gap record says how many were lost" \
	"$(audit_wait 'true' 1 >/dev/null; jq -r 'select(.event=="log-gap") | .lost' "$AUDIT" | head -1 | grep -cE '^[1-9][0-9]*$')" 1
check "the refusal after the gap is logged" "$(audit_wait ".target==\"$SH_TMP/out/after\"")" 1
# What the tree's budget held back while the disk was full: its
# "suppressed" record could not be written either; the gap record counts
# the refusals it stood for. Written counts + counted = the daemon's total.
sup_total() { jq -s '[.[] | select(.event=="suppressed") | .count] | add // 0' "$SH_TMP/audit.1" "$AUDIT"; }
gap_counted() { jq -s '[.[] | select(.event=="log-gap") | .counted] | add // 0' "$SH_TMP/audit.1" "$AUDIT"; }
accounted() { [ $(( $(sup_total) + $(gap_counted) )) = "$(field suppressed "$($CTL status --json)")" ]; }
wait_until accounted
check_match "the tree's budget held some back" "$(field suppressed "$($CTL status --json)")" '^[1-9][0-9]*$'
check "the log-gap record counts the refusals its lost suppressed records stood for" \
	"$(( $(sup_total) + $(gap_counted) ))" "$(field suppressed "$($CTL status --json)")"
check_log_valid

# Rotation by rename: SIGHUP reopens the log at its path.
mv "$AUDIT" "$SH_TMP/audit.2"
kill -HUP "$DAEMON_PID"
wait_until test -e "$AUDIT"   # reopened at its path
try_in_tree tlog open "$SH_TMP/out/rotated" creat
check "after rename + SIGHUP the new file gets the records" "$(audit_wait ".target==\"$SH_TMP/out/rotated\"")" 1
check "nothing went to the renamed file" "$(grep -c rotated "$SH_TMP/audit.2")" 0
check_log_valid

# Renamed with no SIGHUP (a rotation whose reopen failed, a file system
# out of inodes at that moment): the daemon sees its path name another
# file and opens it again there, protected as SIGHUP's would be.
mv "$AUDIT" "$SMALL/audit.3"
wait_until test -e "$AUDIT"
check "renamed without SIGHUP: the log opened again at its path" "$([ -e "$AUDIT" ] && echo there)" there
check_match "... and the daemon said so" "$(cat "$SH_TMP/daemon.err")" "reopened $AUDIT"
try_in_tree tlog open "$SH_TMP/out/followed" creat
check "... the new file gets the records" "$(audit_wait ".target==\"$SH_TMP/out/followed\"")" 1
check "... nothing went to the renamed file" "$(grep -c followed "$SMALL/audit.3")" 0
try_in_tree tlog open "$AUDIT" r
check "... the new file protected: a tree's read refused" "$OUT" "err EPERM"
check "... as the daemon's" "$(audit_wait ".target==\"$AUDIT\" and .reason==\"sharnessd is protected\"")" 1
check_log_valid
scratch_guard
hand_over   # the daemon gone, its log's file system may go
umount "$SMALL"
exit 0
