# SPDX-License-Identifier: GPL-2.0
# Helpers for the enforcement tests. Sourced by tests/vm/t_*.sh, which run
# inside the test guest as root (see tests/vm/run).
#
# Every check records one line in $SH_RESULTS: "PASS name" or "FAIL name".

set -u
: "${SH_BUILD:?run through tests/vm/run}"
: "${SH_RESULTS:?run through tests/vm/run}"

T=$(basename "$0" .sh)
SH_TMP=/tmp/sharness-test/$T
rm -rf "$SH_TMP"
mkdir -p "$SH_TMP/policies"
SOCK=$SH_TMP/run/ctl.sock        # its directory is the daemon's own
AUDIT=$SH_TMP/log/audit.jsonl   # its directory is the daemon's own
CTL="$SH_BUILD/sharnessctl --socket $SOCK"
TRY=$SH_BUILD/tests/vm/try
DAEMON_PID=

# How long a wait for an event may take before it counts as a miss: generous
# for a loaded 2-core machine under emulation. Waits poll for the event and
# return as soon as it happens; no check sleeps for a guessed time.
SH_WAIT=${SH_WAIT:-60}
# A daemon start loads every program through the verifier: about 35 s on
# 6.12 under emulation, and twice that on a busy host. Where a test waits
# for one by its own means (not start_daemon, which waits for the start's
# own exit), it waits for the event up to this bound, which only catches
# a hang.
SH_START_WAIT=${SH_START_WAIT:-600}

# nap SECONDS: a pause without a process: a read that times out on a FIFO
# nothing writes to, opened for the read alone (no descriptor for children
# to inherit). /usr/bin/sleep costs a fork and an exec, about 40 ms under
# emulation, on top of the pause.
# Where the FIFO is gone (a test removed it), it is made again; were it a
# plain file, the read would return at once and a wait would spin.
NAP=$SH_TMP/.nap
mkfifo "$NAP"
nap() {
	[ -p "$NAP" ] || { rm -f "$NAP"; mkfifo "$NAP"; } || { sleep "$1"; return 0; }
	read -r -t "$1" <>"$NAP"
	return 0
}

# wait_until CMD...: runs CMD until it succeeds or SH_WAIT seconds have
# passed, 0.02 s after the first try, 0.05 after the second, then every
# 0.1 s (most events come within a few hundredths of a second of the
# first try); returns CMD's last status.
wait_until() {
	local end=$((SECONDS + SH_WAIT)) p=0.02
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		nap $p
		case $p in 0.02) p=0.05 ;; 0.05) p=0.1 ;; esac
	done
}

# serve_fd SOCK FILE MODE: a unix server at SOCK (`escape serve-fd`) that
# hands every client a descriptor of FILE, opened as MODE (r, w; c: FILE
# made anew by that open), ready on return. stop_servers ends them all;
# so does the file's end.
SERVERS=
serve_fd() {
	"$SH_BUILD/tests/vm/escape" serve-fd "$1" "$2" "$3" >"$1.out" 2>&1 &
	SERVERS="$SERVERS $!"
	wait_until grep -q '^ready$' "$1.out"
}
stop_servers() {
	[ -n "$SERVERS" ] || return 0
	kill $SERVERS 2>/dev/null
	wait $SERVERS 2>/dev/null
	SERVERS=
}

# The console line carries the seconds since the file began (where a
# file's time goes); the results line is the check alone.
pass() { echo "PASS $T: $1" >>"$SH_RESULTS"; echo "PASS $T: $1 [${SECONDS}s]"; }
fail() {
	echo "FAIL $T: $1${2:+ -- $2}" >>"$SH_RESULTS"
	echo "FAIL $T: $1${2:+ -- $2} [${SECONDS}s]"
}

# check NAME GOT WANT
check() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# check_match NAME GOT REGEX
check_match() {
	if [[ "$2" =~ $3 ]]; then pass "$1"; else fail "$1" "got '$2', want /$3/"; fi
}

# first_line FILE: sets OUT to FILE's first line ("" where it is empty or
# missing). A read, not $(head -n 1): that costs a fork and an exec, about
# 0.1 s a call under emulation, on every attempt a file makes.
first_line() {
	OUT=
	IFS= read -r OUT 2>/dev/null <"$1"
	return 0
}

# run_in_tree POLICY PROGRAM ARGS...: PROGRAM inside a fresh tagged tree.
# Sets OUT (its first line: a helper's verdict) and RC (sharnessctl run's
# exit status); the whole output is in $SH_TMP/last.out.
run_in_tree() {
	local pol=$1; shift
	$CTL run --policy "$pol" -- "$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	RC=$?
	first_line "$SH_TMP/last.out"
}

# run_outside PROGRAM ARGS...: the same, outside every tree.
run_outside() {
	"$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	RC=$?
	first_line "$SH_TMP/last.out"
}

# try_in_tree POLICY OP ARGS... / try_outside OP ARGS...: the try helper.
try_in_tree() { local pol=$1; shift; run_in_tree "$pol" "$TRY" "$@"; }
try_outside() { run_outside "$TRY" "$@"; }

# One pin directory for the suite's files (tests/vm/run unloads it at the
# end): a file's first daemon resumes the programs the previous file's
# daemon left pinned (about a second, where a load takes ten under
# emulation; hand_over). A file that tests loading, adoption or the pins
# themselves sets SH_OWN_PIN=1 before sourcing this file, and gets a pin
# directory of its own, unloaded at its end.
SH_SHARED_PIN=/sys/fs/bpf/sharness-test
if [ -n "${SH_OWN_PIN:-}" ]; then
	PIN=$SH_SHARED_PIN-$T
else
	PIN=$SH_SHARED_PIN
fi
CTL="$CTL --pin-dir $PIN"

# Each start's time, from exec to enforcing (the foreground sharnessd
# returns then), goes to $SH_STARTS for the suite's summary.
SH_STARTS=/tmp/sharness-test/starts
# This build's daemons stay attached between runs (--detach-idle never;
# ARGS after it win): a rest's detach costs an emulated guest about ten
# seconds of CPU, and t_pinned takes rest and wake on purpose.
start_daemon() {
	local t0=${EPOCHREALTIME/./}
	"$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/policies" --audit-log "$AUDIT" \
		--socket "$SOCK" --pin-dir "$PIN" --detach-idle never "$@" 2>>"$SH_TMP/daemon.err"
	local rc=$?
	[ $rc -ne 0 ] || echo "$T $(( (${EPOCHREALTIME/./} - t0) / 1000 ))" >>"$SH_STARTS"
	if [ $rc -ne 0 ]; then
		echo "sharnessd failed to start ($rc):" >&2
		cat "$SH_TMP/daemon.err" >&2
		return $rc
	fi
	DAEMON_PID=$(counter pid)
}

# Stops the daemon; its programs stay pinned and enforcing.
stop_daemon() {
	[ -n "$DAEMON_PID" ] || return 0
	kill -"${1:-TERM}" "$DAEMON_PID" 2>/dev/null
	wait_until gone "$DAEMON_PID"
	DAEMON_PID=
}

# field NAME JSON: the value of a top-level field of one flat JSON record
# (strings printed with their escapes as written). Pure bash: jq costs a
# third of a second per call under emulation.
field() {
	local re="\"$1\":(\"(([^\"\\\\]|\\\\.)*)\"|(-?[0-9.]+|true|false|null))"
	[[ $2 =~ $re ]] || return 0
	if [[ ${BASH_REMATCH[1]} == \"* ]]; then
		printf '%s\n' "${BASH_REMATCH[2]}"
	else
		printf '%s\n' "${BASH_REMATCH[4]}"
	fi
}

# counter NAME: a field of `status --json` (deny_exec, audit_file, dropped...).
counter() { field "$1" "$($CTL status --json)"; }

# audit_select JQ_FILTER [FROM [last]]: the violation records of the log,
# from its line FROM on (1, the whole log), that match the filter, one per
# line (with "last", the last of them alone, without a tail process). jq
# takes about 0.2 s to start under emulation, a fifth of a test file's time
# where records are checked often; a filter made only of top-level
# `.key == "text"` and `.key == number` terms joined by `and` (text of
# printable ASCII, no quote or backslash) is matched by awk instead, on the
# form the daemon's JSON writer gives such a field (`"key":"text"`, and
# `"key":N` before a comma or brace; a quote inside a value is always
# escaped, so such a match is the field). Any other filter goes to jq.
# SH_FILTER_CHECK=1 runs jq beside awk and fails a check where they differ.
audit_select() {
	local f=$1 from=${2:-1} last=${3:-} terms= out k v n LC_ALL=C
	local re='^[[:space:]]*\.([a-z_]+)[[:space:]]*==[[:space:]]*("([^"\\]*)"|(-?[0-9]+))[[:space:]]*(and[[:space:]]+(.+))?$'
	while [ -n "$f" ]; do
		[[ $f =~ $re ]] || { audit_jq "$1" "$from" "$last"; return; }
		k=${BASH_REMATCH[1]} v=${BASH_REMATCH[3]} n=${BASH_REMATCH[4]} f=${BASH_REMATCH[6]}
		[[ $v =~ [^\ -~] ]] && { audit_jq "$1" "$from" "$last"; return; }
		if [ -n "$n" ]; then
			terms+="N\"$k\":$n"$'\n'
		else
			terms+="S\"$k\":\"$v\""$'\n'
		fi
	done
	out=$(awk -v from="$from" -v terms="$terms" -v last="$last" '
		BEGIN { n = split(terms, T, "\n") - 1 }
		NR >= from && index($0, "\"event\":\"violation\"") {
			for (i = 1; i <= n; i++) {
				t = substr(T[i], 2)
				if (substr(T[i], 1, 1) == "N") {
					if (!index($0, t ",") && !index($0, t "}"))
						next
				} else if (!index($0, t))
					next
			}
			if (last) l = $0; else print
		}
		END { if (last && l != "") print l }' "$AUDIT")
	[ -z "$out" ] || printf '%s\n' "$out"
	if [ "${SH_FILTER_CHECK:-0}" = 1 ]; then
		local a j
		a=$(grep -c . <<<"$out")
		j=$(audit_jq "$1" "$from" "$last" | grep -c .)
		[ "$a" = "$j" ] || fail "audit_select: awk agrees with jq on '$1'" "awk $a, jq $j"
	fi
}
audit_jq() {
	if [ -n "${3:-}" ]; then
		tail -n +"$2" "$AUDIT" | jq -c "select(.event == \"violation\") | select($1)" 2>/dev/null | tail -n 1
	else
		tail -n +"$2" "$AUDIT" | jq -c "select(.event == \"violation\") | select($1)" 2>/dev/null
	fi
}

# audit_count JQ_FILTER: violation records matching the filter.
# ram_disk: /dev/ram0 (16 MiB, brd) and ext4, from the kernel's own
# modules; KMODDIR: the guest's cache of them where the root has none
ram_disk() {
	local d
	for d in /var/cache/sharness/kernels/*; do
		[ -d "$d/lib/modules/$(uname -r)" ] && KMODDIR=$d
	done
	modprobe -d "${KMODDIR:-/}" brd rd_nr=1 rd_size=16384 2>/dev/null
	modprobe -d "${KMODDIR:-/}" ext4 2>/dev/null
	wait_until test -b /dev/ram0
}

audit_count() { audit_select "$1" | wc -l; }

# exec_refusals TARGET: the refused execs of TARGET the log accounts for,
# each as a record of its own or counted in a "suppressed" record
# (records an older build's programs left in the ring read in a burst).
exec_refusals() {
	jq -s --arg t "$1" '[.[] | select(.hook=="exec" and .target==$t) |
		if .event=="violation" then 1 elif .event=="suppressed" then .count else 0 end]
		| add // 0' "$AUDIT"
}

# audit_wait JQ_FILTER [N]: wait (up to SH_WAIT) until N records match; prints the count.
audit_wait() {
	local n=${2:-1} c=0 end=$((SECONDS + SH_WAIT))
	while :; do
		c=$(audit_count "$1")
		[ "$c" -ge "$n" ] || [ $SECONDS -ge $end ] && break
		nap 0.05
	done
	echo "$c"
}

# last_event EVENT: the log's last record of that event ("daemon-start",
# "run-end"...), by awk on the form the daemon writes (`"event":"NAME"`).
last_event() {
	awk -v e="\"event\":\"$1\"" 'index($0, e) { l = $0 } END { if (l != "") print l }' "$AUDIT"
}

# audit_last JQ_FILTER: the last matching violation record.
audit_last() { audit_select "$1" 1 last; }

# ev_fields RECORD: the record's fields into F[] (one jq instead of one per check).
declare -A F
ev_fields() {
	F=()
	local k v
	while IFS=$'\t' read -r k v; do F[$k]=$v; done \
		< <(jq -r 'to_entries[] | "\(.key)\t\(.value)"' <<<"$1")
}

# The whole log must stay valid JSON, whatever happened.
check_log_valid() {
	if jq -e . "$AUDIT" >/dev/null 2>&1; then pass "audit log is valid JSON"; else fail "audit log is valid JSON"; fi
}

# gone PID: the process has exited; a zombie not reaped yet has (kill -0
# still finds it until its parent, PID 1 for a daemon, reaps it).
gone() {
	local st
	kill -0 "$1" 2>/dev/null || return 0
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	[[ $st == [ZX]* ]]
}

# Waits (up to SH_WAIT) for the daemon to exit by itself (after unload).
wait_daemon_exit() {
	[ -n "$DAEMON_PID" ] || return 0
	wait_until gone "$DAEMON_PID"
	DAEMON_PID=
}

# Detaches everything this test loaded, so the next test starts clean:
# nothing of it stays pinned or tagged. The last close of the links (in
# the daemon's exit, or in --unload's removal of the pins) waits on the
# kernel's tracing machinery, about nine seconds here with the guest's
# CPU idle, so it goes on in the background while the next file runs;
# the runner waits for it before its final checks, and a check that
# counts the kernel's programs or links waits for it first (others_gone).
unload_all() {
	(
		[ -n "$DAEMON_PID" ] && $CTL unload --force >/dev/null 2>&1 &&
			wait_until gone "$DAEMON_PID"
		"$SH_BUILD/sharnessd" --unload --force --pin-dir "$PIN" --socket "$SOCK" \
			--audit-log "$AUDIT" 2>/dev/null
	) </dev/null >/dev/null 2>&1 &
	DAEMON_PID=
}

# zero_counters PIN BATCH
. "$(dirname "${BASH_SOURCE[0]}")/counters.sh"

# A file's end with the shared pins: its policies go (an empty reload,
# whose apply drops every tag no policy or run claims), the daemon stops
# with its programs pinned and attached, and the kernel's counts are set
# back to zero: the next file starts as after a load, but resumes. Where
# that cannot be done (no daemon of this build running, a cgroup still
# tagged by hand), everything is unloaded, in the foreground: the next
# file's daemon uses the same pins.
hand_over() {
	local why=
	HANDED_OVER=1
	if [ -z "$DAEMON_PID" ]; then
		why="no daemon of this build running"
	elif ! rm -f "$SH_TMP"/policies/*.policy || ! $CTL policy reload >/dev/null 2>&1; then
		why="the empty reload failed"
	elif [ "$(counter tagged)" != 0 ]; then
		why="$(counter tagged) cgroups still tagged"
	else
		stop_daemon
		zero_counters "$PIN" "$SH_TMP/zero.batch" && return 0
		why="the counts could not be set back"
	fi
	# Said on the console: the next file loads the programs (seconds).
	echo "== $T: not handed over ($why): everything unloaded"
	[ -n "$DAEMON_PID" ] && $CTL unload --force >/dev/null 2>&1 && wait_until gone "$DAEMON_PID"
	DAEMON_PID=
	"$SH_BUILD/sharnessd" --unload --force --pin-dir "$PIN" --socket "$SOCK" \
		--audit-log "$AUDIT" </dev/null >/dev/null 2>&1
}

# No daemon but this file's left (an earlier file's still detaching).
others_gone() { [ -z "$(pgrep -x sharnessd | grep -vx "${DAEMON_PID:-0}")" ]; }

# Every test's end: every program gave back the working buffer it took
# (bpf/lib/maps.h), and no use was refused for want of one (which, without
# preempted judgements, only a buffer not given back can cause) beyond
# SCRATCH_BUSY_MADE, the refusals a test made so itself. A daemon of an
# older build (t_package's release before) has no such counts.
SCRATCH_BUSY_MADE=0
scratch_guard() {
	local b l
	[ -n "$DAEMON_PID" ] || return 0
	b=$(counter scratch_busy)
	[ -z "$b" ] || b=$((b - SCRATCH_BUSY_MADE))
	l=$(counter scratch_leaked)
	[ -z "$b$l" ] || check "every scratch given back, none lacking" "leaked=$l busy=$b" "leaked=0 busy=0"
}

cleanup() {
	stop_servers
	scratch_guard
	if [ "$PIN" != "$SH_SHARED_PIN" ] || [ -n "${SH_OWN_KERNEL:-}" ]; then
		unload_all
	elif [ -z "${HANDED_OVER:-}" ]; then
		hand_over
	fi
}
trap cleanup EXIT

# A file that counts the kernel's programs as its own (SH_OWN_KERNEL=1,
# the suite's last: tests/vm/run) takes the shared pins over: its first
# daemon resumes them (a second, where a load of its own takes twenty
# under emulation and the shared ones' detach ten more), and it unloads
# them at its end; no file comes after it.
