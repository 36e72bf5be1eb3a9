#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Full preemption. LSM programs run with migration, not preemption,
# disabled: on a kernel preempted fully (preempt=full, PREEMPT_RT) a task
# can be preempted in the middle of a judgement while another task's
# program runs on the same CPU. The working memory a judgement keeps its
# path in is the preempted call's alone (bpf/lib/maps.h, claim_scratch_at):
# a path that another task wrote must never decide, nor name a record.
#
# Two processes of one tree, pinned to one CPU, repeat a refused and an
# allowed call; the allowed one (O_TMPFILE) is judged by its directory's
# path every time. The refused call must never succeed, the allowed one
# never fail, every record must name the refused object, and the BPF side
# must have seen judgements run while another was preempted mid-way
# (scratch_nested), none refused for want of a scratch (scratch_busy).
# The guest's kernel switches to full preemption at run time
# (PREEMPT_DYNAMIC, debugfs sched/preempt) and back at the end.
. "$(dirname "$0")/lib.sh"

RACE=$SH_BUILD/tests/vm/race
SECS=5
D=$SH_TMP/d
DEEP=$D/w/a/b/c/d/e/f/g/h
mkdir -p "$DEEP" "$D/s"
echo secret >"$D/secret"
echo public >"$D/public"

cat >"$SH_TMP/policies/tpre.policy" <<P
[policy]
name = tpre
[exec]
allow = $SH_BUILD/tests/vm/
[file]
write = $D/w/
write = /dev/null
deny = $D/secret
deny = $DEEP/refused
[connect]
deny = $D/s/refused.sock
P

# tcrowd: tpre, and the shell, taskset and chrt that the idle crowd below
# runs through.
sed -e 's/^name = tpre$/name = tcrowd/' \
	-e 's#^\[exec\]$#[exec]\nallow = /usr/bin/\nallow = /bin/\nallow = '"$SH_TMP"'/#' \
	"$SH_TMP/policies/tpre.policy" >"$SH_TMP/policies/tcrowd.policy"

PRE=/sys/kernel/debug/sched/preempt
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
if [ ! -w "$PRE" ]; then
	fail "the kernel switches to full preemption" "no $PRE (a kernel without PREEMPT_DYNAMIC)"
	exit 1
fi
mode() { sed -n 's/.*(\([a-z]*\)).*/\1/p' "$PRE"; }
was=$(mode)
LISTENERS=()
restore() {
	[ -n "$was" ] && echo "$was" >"$PRE"
	for p in "${LISTENERS[@]}"; do kill "$p" 2>/dev/null; done
	cleanup
}
trap restore EXIT
echo full >"$PRE"
check "the kernel runs fully preempted" "$(mode)" full

start_daemon || { fail "daemon starts"; exit 1; }
for s in refused allowed; do
	"$TRY" listen "$D/s/$s.sock" >"$SH_TMP/listen-$s" 2>&1 &
	LISTENERS+=($!)
done
wait_until grep -q ready "$SH_TMP/listen-refused" "$SH_TMP/listen-allowed"

# race_case NAME REFUSED-TARGET OP REFUSED OP ALLOWED: run both children
# (race.c), then check their lines, the records and the counters.
race_case() {
	local name=$1 target=$2 out r a nest0 nest1
	shift 2
	nest0=$(counter scratch_nested)
	out=$($CTL run --policy tpre -- "$RACE" "$SECS" 0 "$@" 2>&1)
	echo "$name: $out"
	r=$(grep '^refused ' <<<"$out")
	a=$(grep '^allowed ' <<<"$out")
	check "$name: the refused call never succeeds" "$(sed -n 's/.* ok=\([0-9]*\) .*/\1/p' <<<"$r")" 0
	check_match "$name: the refused call fails with EPERM, many times" "$r" \
		' err=[0-9]{3,} errno=EPERM '
	check "$name: the allowed call never fails" "$(sed -n 's/.* err=\([0-9]*\) .*/\1/p' <<<"$a")" 0
	check_match "$name: the allowed call succeeds, many times" "$a" ' ok=[0-9]{3,} '
	nest1=$(counter scratch_nested)
	check_match "$name: judgements ran while another was preempted mid-way" \
		"$((nest1 - nest0))" '^[1-9]'
	check_match "$name: refusals are recorded" \
		"$(audit_wait ".policy == \"tpre\" and .target == \"$target\"")" '^[1-9]'
}

# Each refused call's twin, alone: the same call on a name beside it.
check "a read beside the denied file succeeds" \
	"$($CTL run --policy tpre -- "$TRY" open "$D/public" r 2>/dev/null | head -n 1)" ok
check "a create beside the denied name succeeds" \
	"$($CTL run --policy tpre -- "$TRY" open "$DEEP/allowed" creat 2>/dev/null | head -n 1)" ok

race_case "open for read" "$D/secret" read "$D/secret" tmpfile "$D/w"
race_case "create" "$DEEP/refused" creat "$DEEP/refused" tmpfile "$D/w"
race_case "unix connect" "$D/s/refused.sock" connect "$D/s/refused.sock" tmpfile "$D/w"

# As many busy processes on one CPU as a tree's share of its buffers
# (SH_SCRATCH_TREE_MAX, 8): the refused read and seven writers whose
# judgement walks a deep path. Each holds at most one buffer at a time,
# so even with all of them preempted mid-judgement none is refused for
# want of one (scratch_tree, scratch_busy unchanged). With four buffers a
# CPU, one writer call in ten failed. A ninth would exceed the share:
# its judgement, when the other eight are all preempted mid-way, is
# refused (the crowded cases below).
tree0=$(counter scratch_tree)
busy0=$(counter scratch_busy)
out=$($CTL run --policy tpre -- "$RACE" "$SECS" 0 read "$D/secret" tmpfile "$DEEP" 7 2>&1)
echo "eight on one CPU: $out"
check "eight on one CPU: the refused read never succeeds" \
	"$(grep '^refused ' <<<"$out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p')" 0
check "eight on one CPU: seven writers ran, each many times" \
	"$(grep -cE '^allowed ok=[0-9]{3,} ' <<<"$out")" 7
check "eight on one CPU: no writer call failed" \
	"$(grep '^allowed ' <<<"$out" | grep -vc ' err=0 ')" 0
check "eight on one CPU: no judgement refused for want of a buffer (scratch_tree, scratch_busy)" \
	"$(counter scratch_tree) $(counter scratch_busy)" "$tree0 $busy0"
# A tree that crowds a CPU starves no other tree there. Tree "tcrowd"
# keeps 24 writers busy on one CPU, so that at times its preempted
# judgements hold its whole share of the CPU's buffers
# (SH_SCRATCH_TREE_MAX, 8 of 12); its next judgement there is then
# refused (scratch_tree) and recorded as a path that could not be
# resolved. A second tree on the same CPU meanwhile never sees a call
# fail, and no use ever finds every buffer held.
#
# A tree's share is a count at a keyed hash of its cgroup id, one of
# 4,096 (bpf/lib/maps.h, sh_scratch_take): two trees whose ids meet there
# share one share, by design, and the neighbour's calls may then be
# refused. Such a pair (one in 4,096) is told from the ids and the key,
# and run again with new trees.
# (One bpftool call lists every map: a call per map took 15 s under
# emulation.)
SHARE_KEY=$(
	ids=$(bpftool -j prog show name sh_file_open | jq -c '[if type == "array" then .[] else . end | .map_ids[]?]')
	for id in $(bpftool -j map show | jq -r --argjson ids "$ids" \
		'.[] | select((.id as $i | $ids | any(.[]; . == $i)) and (.name | endswith(".rodata"))) | .id'); do
		bpftool map dump id "$id" | grep -o '"memo_key": [0-9]*' | grep -o '[0-9]*$'
	done | sort -u)
check_match "the programs' key is read (one)" "$SHARE_KEY" '^[0-9]+$'
# share_of ID: tree ID's place in scratch_share (memo_mix in maps.h; bash
# arithmetic wraps at 64 bits as the program's does).
share_of() {
	local h=$(( ((SHARE_KEY ^ 0x73) ^ $1) * 0x9e3779b97f4a7c15 ))
	echo $(( (h ^ (h >> 29)) & 4095 ))
}
# tree_of POLICY: the cgroup id of the newest record under POLICY.
tree_of() {
	awk -v p="\"policy\":\"$1\"" 'index($0, p) && match($0, /"cgroup_id":[0-9]+/) {
		l = substr($0, RSTART + 12, RLENGTH - 12) } END { print l }' "$AUDIT"
}
# crowd_tree: the cgroup id of the crowd's run, while its writers race
# (the oldest race process is its own).
crowd_tree() {
	stat -c %i "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$(pgrep -o -x race)/cgroup")"
}
# shared_share CROWD: whether the crowd's tree and the neighbour just run
# (its refused read's records, written before its run ended) met in one
# share.
shared_share() {
	local b
	b=$(tree_of tpre)
	[ -n "$1" ] && [ -n "$b" ] && [ "$(share_of "$1")" = "$(share_of "$b")" ] &&
		echo "trees $1 and $b share place $(share_of "$b"): run again"
}
racing() { [ "$(pgrep -c -x race)" -ge "$1" ]; }
tree0=$(counter scratch_tree)
busy0=$(counter scratch_busy)
for try in 1 2 3; do
	$CTL run --policy tcrowd -- "$RACE" 9 0 read "$D/secret" tmpfile "$DEEP" 24 >"$SH_TMP/crowd" 2>&1 &
	crowd=$!
	# Its writers all running before the neighbour starts.
	wait_until racing 25
	crowd_cg=$(crowd_tree)
	during0=$(counter scratch_tree)
	out=$($CTL run --policy tpre -- "$RACE" 4 0 read "$D/secret" tmpfile "$D/w" 2>&1)
	during1=$(counter scratch_tree)
	wait "$crowd"
	shared_share "$crowd_cg" && continue
	# The crowd's refusals come in bursts: a neighbour's run that fell
	# between them showed nothing of its share. Run again.
	[ $((during1 - during0)) -gt 0 ] && break
	echo "no refusal beyond the crowd's share during the neighbour's run: run again"
done
crowd_out=$(cat "$SH_TMP/crowd")
echo "crowding tree: $(grep -o ' err=[0-9]*' <<<"$crowd_out" | tr '\n' ' ')"
echo "its neighbour: $out"
crowd_err=$(grep '^allowed ' <<<"$crowd_out" | sed -n 's/.* err=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
tree1=$(counter scratch_tree)
check "a crowded CPU: the crowding tree's 24 writers ran" \
	"$(grep -cE '^allowed ok=[0-9]{2,} ' <<<"$crowd_out")" 24
check_match "a crowded CPU: the crowding tree was refused beyond its share" "$crowd_err" '^[1-9]'
check_match "a crowded CPU: each such refusal is counted (scratch_tree)" \
	"$((tree1 - tree0 >= crowd_err))$((tree1 > tree0))" '^11$'
check_match "a crowded CPU: refused beyond its share while the neighbour ran" \
	"$((during1 - during0))" '^[1-9]'
check "a crowded CPU: the crowding tree's refused read never succeeds" \
	"$(grep '^refused ' <<<"$crowd_out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p')" 0
check_match "a crowded CPU: such refusals are recorded, the path unresolved (-11)" \
	"$(audit_wait '.policy == "tcrowd" and .path_error == -11')" '^[1-9]'
check "a crowded CPU: no use found every buffer held" "$(counter scratch_busy)" "$busy0"
check_match "a crowded CPU: the neighbour's allowed call succeeds, many times" \
	"$(grep '^allowed ' <<<"$out")" ' ok=[0-9]{3,} err=0 '
check "a crowded CPU: the neighbour's refused call never succeeds" \
	"$(grep '^refused ' <<<"$out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p')" 0

# The same attack with the crowding tree's writers at SCHED_IDLE beside a
# busy loop of its own at normal priority on that CPU: they are preempted
# anywhere, a claim's reservation included, and stay preempted. What a
# task preempted there holds is a place in its own tree's share, never a
# buffer: the neighbour still never sees a call fail.
cat >"$SH_TMP/idle-crowd" <<'H'
#!/bin/bash
taskset -c 0 bash -c 'end=$((SECONDS + 9)); while [ $SECONDS -lt $end ]; do :; done' &
chrt --idle 0 "$@"
wait
H
chmod +x "$SH_TMP/idle-crowd"
# Starved that way, the writers may go a whole phase without being
# preempted inside a judgement when the host's own CPU is busy (the
# guest then runs fewer of them in the same seconds): the phase is run
# again, up to three times, until they have been; the neighbour's calls
# are checked over every phase.
busy0=$(counter scratch_busy)
tree0=$(counter scratch_tree)
outs=
idle_phases=0
for phase in 1 2 3 4; do
	$CTL run --policy tcrowd -- "$SH_TMP/idle-crowd" "$RACE" 9 0 read "$D/secret" tmpfile "$DEEP" 32 \
		>"$SH_TMP/crowd" 2>&1 &
	crowd=$!
	wait_until racing 33
	crowd_cg=$(crowd_tree)
	out=$($CTL run --policy tpre -- "$RACE" 4 0 read "$D/secret" tmpfile "$D/w" 2>&1)
	wait "$crowd"
	shared_share "$crowd_cg" && continue
	outs+=$out$'\n'
	idle_phases=$((idle_phases + 1))
	crowd_out=$(cat "$SH_TMP/crowd")
	echo "idle crowd, phase $phase: $(grep -o ' err=[0-9]*' <<<"$crowd_out" | tr '\n' ' ')"
	echo "its neighbour: $out"
	check "an idle crowd, phase $phase: its 32 writers ran" \
		"$(grep -cE '^allowed ok=[0-9]+ ' <<<"$crowd_out")" 32
	[ "$(counter scratch_tree)" -gt "$tree0" ] && break
done
out=$outs
check_match "an idle crowd: it was refused beyond its share" \
	"$(( $(counter scratch_tree) - tree0 ))" '^[1-9]'
check "an idle crowd: no use found every buffer held" "$(counter scratch_busy)" "$busy0"
check "an idle crowd: the neighbour's allowed call succeeds, many times, in every phase" \
	"$(grep '^allowed ' <<<"$out" | grep -vcE ' ok=[0-9]{3,} err=0 ')/$(grep -c '^allowed ' <<<"$out")" \
	"0/$idle_phases"
check "an idle crowd: the neighbour's refused call never succeeds" \
	"$(grep '^refused ' <<<"$out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p' | sort -u)" 0

# No buffer to be had, made so rather than waited for: a process of the
# tree waits (try gate) while every CPU's scratch is marked held from
# outside, as preempted judgements hold it (scratch_owners), then connects
# to the allowed socket. Refused, not let through: EPERM, counted
# (scratch_busy), recorded as a path that could not be resolved (-11).
# Then every tree's share is marked full instead (scratch_share): refused
# and counted as the tree's share (scratch_tree), no buffer looked for.
# Each time, with the maps given back, the same call of a new process
# succeeds.
map_id() {
	bpftool -j map show name "$1" 2>/dev/null | jq -r 'if type == "array" then .[] else . end | .id'
}
# map_fill NAME KEYS VALUE-BYTES [FROM]: the keys FROM (0) to FROM + KEYS
# - 1 of NAME, on every CPU, set to the bytes (bpftool writes one value
# to each CPU of a per-CPU map), in one bpftool process.
map_fill() {
	local name=$1 keys=$2 bytes=$3 from=${4:-0} id k
	id=$(map_id "$name")
	[ "$(wc -w <<<"$id")" = 1 ] || { echo "no single map $name: '$id'"; return 1; }
	for ((k = from; k < from + keys; k++)); do
		echo "map update id $id key $((k & 255)) $((k >> 8)) 0 0 value $bytes"
	done >"$SH_TMP/fill.batch"
	bpftool batch file "$SH_TMP/fill.batch" >/dev/null
}
bytes() { local n=$1 v=$2 i; for ((i = 0; i < n; i++)); do printf '%s ' "$v"; done; }
HELD="$(bytes 12 '1 0 0 0 0 0 0 0')$(bytes 48 0)" # 12 owner words of 1, 12 shares 0
FREE=$(bytes 144 0)
check "scratch_owners is the layout filled here (12 words and 12 shares)" \
	"$(bpftool -j map show id "$(map_id scratch_owners)" | jq .bytes_value)" 144
# starved CASE MAP KEYS FULL FREE COUNTER [own]: with "own", the one key
# of the waiting tree's share (share_of), not KEYS from 0.
starved() {
	local name=$1 map=$2 keys=$3 full=$4 free=$5 cnt=$6 own=${7:-} c0 b0 t0 a0 pid from=0
	local rec='.policy == "tpre" and .hook == "connect" and .path_error == -11'
	rm -f "$SH_TMP/go"
	$CTL run --policy tpre -- "$TRY" gate "$SH_TMP/go" connect "$D/s/allowed.sock" \
		>"$SH_TMP/gate.out" 2>&1 &
	pid=$!
	wait_until grep -q '^ready' "$SH_TMP/gate.out"
	if [ -n "$own" ]; then
		from=$(share_of "$(stat -c %i "/sys/fs/cgroup$(sed -n 's/^0:://p' \
			"/proc/$(pgrep -n -x try)/cgroup")")")
		echo "$name: the waiting tree's place is $from"
	fi
	c0=$(counter "$cnt")
	a0=$(audit_count "$rec")
	b0=$(counter scratch_busy)
	t0=$(counter scratch_tree)
	map_fill "$map" "$keys" "$full" "$from"
	check "$name: marked full" "$?" 0
	touch "$SH_TMP/go"
	wait "$pid"
	map_fill "$map" "$keys" "$free" "$from"
	check "$name: given back" "$?" 0
	check "$name: the waiting process's connect is refused" "$(sed -n 2p "$SH_TMP/gate.out")" "err EPERM"
	check_match "$name: counted ($cnt)" "$(( $(counter "$cnt") - c0 ))" '^[1-9]'
	if [ "$cnt" = scratch_tree ]; then
		check "$name: no buffer was looked for" "$(counter scratch_busy)" "$b0"
	else
		check "$name: not counted as the tree's share" "$(counter scratch_tree)" "$t0"
	fi
	check_match "$name: recorded, the path unresolved (-11)" \
		"$(( $(audit_wait "$rec" $((a0 + 1))) - a0 ))" '^[1-9]'
	check "$name: given back, the same call succeeds" \
		"$($CTL run --policy tpre -- "$TRY" connect "$D/s/allowed.sock" 2>/dev/null | head -n 1)" ok
}
starved "every buffer held" scratch_owners 1 "$HELD" "$FREE" scratch_busy
# The guard at the end (lib.sh) counts what this test did not make.
SCRATCH_BUSY_MADE=$(counter scratch_busy)
starved "every tree's share full" scratch_share 4096 "8 0 0 0 0 0 0 0" "0 0 0 0 0 0 0 0" scratch_tree
# Only the waiting tree's own place full, found as the programs find it
# (share_of, which the crowded cases above rely on): refused as beyond
# its share. Were share_of wrong, another place would be marked and the
# connect would succeed.
starved "its own share full" scratch_share 1 "8 0 0 0 0 0 0 0" "0 0 0 0 0 0 0 0" scratch_tree own

# The allowed socket's listener takes connections (the positive control
# of the refused connect).
check "a connect to the allowed socket succeeds" "$($CTL run --policy tpre -- "$TRY" connect "$D/s/allowed.sock" 2>/dev/null | head -n 1)" ok

check "every record names a refused object" \
	"$(audit_count ".policy == \"tpre\" and ([.target] | inside([\"$D/secret\", \"$DEEP/refused\", \"$D/s/refused.sock\"]) | not)")" 0
echo "$was" >"$PRE"
check "the kernel's preemption is restored" "$(mode)" "$was"
check_log_valid
