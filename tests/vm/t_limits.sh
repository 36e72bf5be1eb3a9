#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# [limits]: memory, swap, CPU and I/O limits on every `sharnessctl run`
# cgroup, with `run` flags over the policy's values; an OOM in a tree kills
# that tree and nobody else; a CPU spinner stays under its share; the run
# reports both; bad values are errors; the tree cannot raise its limits or
# lower its OOM priority against outsiders.
. "$(dirname "$0")/lib.sh"

HOG=$SH_BUILD/tests/vm/hog
cat >"$SH_TMP/policies/tlim.policy" <<P
[policy]
name = tlim
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[limits]
memory-max = 64M
memory-swap-max = 0
cpu-max = 20%
io-weight = 50
P
sed -e 's/name = tlim/name = tnolim/' -e '/^\[limits\]/,$d' "$SH_TMP/policies/tlim.policy" \
	>"$SH_TMP/policies/tnolim.policy"
cat >"$SH_TMP/policies/ttmp.policy" <<P
[policy]
name = ttmp
[exec]
allow = /usr/bin/bash
allow = /usr/bin/head
allow = /usr/bin/ln
allow = /usr/bin/mkdir
allow = $SH_BUILD/tests/vm/
[limits]
private-tmp = 1M
P
# tres: writes on a file system whose reserve is for no uid of the tree.
RES=$SH_TMP/res
FUSE=$SH_TMP/fuse
cat >"$SH_TMP/policies/tres.policy" <<P
[policy]
name = tres
[exec]
allow = /usr/bin/bash
allow = /usr/bin/head
allow = /usr/bin/stat
[file]
write = $RES/
write = $FUSE/
P
start_daemon --run-memory-max 96M || { fail "daemon starts"; exit 1; }

# private-tmp: a /tmp and /var/tmp of the run's own, sized, gone with it.
mark=sh-tmp-$$
echo host >"/tmp/host-$mark"
# (A symbolic link goes into a directory of the run's own: none goes into
# a sticky world-writable directory, the run's own /tmp included.)
out=$($CTL run --policy ttmp -- /usr/bin/bash -c "echo x >/tmp/$mark && mkdir /tmp/$mark.d &&
	ln -s /etc/shadow /tmp/$mark.d/lnk && ! ln -s /etc/shadow /tmp/$mark.lnk 2>/dev/null &&
	echo y >/var/tmp/$mark && echo z >/dev/shm/$mark && echo made; [ -e /tmp/host-$mark ] && echo host-visible;
	head -c 2097152 /dev/zero >/tmp/big; echo big=\$?;
	[ -e /proc/\$PPID/root/tmp/host-$mark ] && echo via-proc || echo no-proc" 2>"$SH_TMP/tmp.err")
check "private-tmp: the run writes its /tmp and /var/tmp (exit 0)" "$?" 0
check "... and sees its own files, not the host's (not through its supervisor's /proc root); 2 MiB do not fit in 1M" \
	"$(tr '\n' ' ' <<<"$out")" "made big=1 no-proc "
check "... its twin: outside, the host's file through /proc/PID/root" \
	"$([ -e "/proc/$$/root/tmp/host-$mark" ] && echo seen)" seen
check_match "... the tree was told why" "$(cat "$SH_TMP/tmp.err")" "No space left on device"
check "... none of it reached the host (file, symlink, /var/tmp, /dev/shm)" \
	"$([ -e "/tmp/$mark" ] || [ -e "/tmp/$mark.d" ] || [ -L "/tmp/$mark.lnk" ] ||
		[ -e "/var/tmp/$mark" ] || [ -e "/dev/shm/$mark" ]; echo $?)" 1
check "... a link straight in its /tmp was refused, and logged" \
	"$(audit_wait '.policy == "ttmp" and .op == "symlink" and .reason == "planted by a tree"')" 1
check "run-start records it" \
	"$(jq -r 'select(.event=="run-start" and .policy=="ttmp") | .private_tmp' "$AUDIT" | tail -n 1)" 1048576
$CTL run --policy tnolim --private-tmp 1M -- /usr/bin/bash -c "echo x >/tmp/$mark.flag" 2>/dev/null
check "run --private-tmp on a policy without it: written, not in the host's /tmp" \
	"$?:$(ls "/tmp/$mark.flag" 2>/dev/null | wc -l)" "0:0"
$CTL run --policy tnolim -- /usr/bin/bash -c "echo x >/tmp/$mark.twin" 2>/dev/null
check "... its twin without the flag writes the host's /tmp" "$(cat "/tmp/$mark.twin" 2>/dev/null)" x
rm -f "/tmp/$mark.twin" "/tmp/host-$mark"
$CTL run --policy ttmp --private-tmp lots -- /usr/bin/true 2>"$SH_TMP/flag.err"
check "run --private-tmp lots: refused (125)" "$?" 125
mkdir -p "/tmp/$mark.cwd"
(cd "/tmp/$mark.cwd" && $CTL run --policy ttmp -- /usr/bin/bash -c "echo x >inside" 2>"$SH_TMP/cwd.err")
check "private-tmp from a current directory under the host's /tmp: refused (125)" "$?" 125
check "... nothing written there" "$(ls "/tmp/$mark.cwd" | wc -l)" 0
check_match "... and it says what to give" "$(cat "$SH_TMP/cwd.err")" "give --workdir"
(cd "/tmp/$mark.cwd" && $CTL run --policy ttmp --workdir /tmp -- /usr/bin/bash -c "echo x >inside" 2>/dev/null)
check "... with --workdir it runs there" "$?:$(ls "/tmp/$mark.cwd" | wc -l)" "0:0"
rmdir "/tmp/$mark.cwd"
mkdir -p /sys/fs/cgroup/t_limits_tmp
out=$($CTL tag /sys/fs/cgroup/t_limits_tmp ttmp 2>&1)
check "tag with a private-tmp policy: refused" "$?" 1
check_match "... and says why" "$out" "has private-tmp"
$CTL tag /sys/fs/cgroup/t_limits_tmp tnolim && $CTL untag /sys/fs/cgroup/t_limits_tmp
check "... its twin, a policy without it, tags" "$?" 0
rmdir /sys/fs/cgroup/t_limits_tmp

# knobs POLICY [RUN FLAGS...]: the run cgroup's limit files, read from inside.
KNOBS='IFS=: read -r _ _ p </proc/self/cgroup
for f in memory.max memory.swap.max cpu.max io.weight memory.oom.group; do
	read -r v <"/sys/fs/cgroup$p/$f"; printf "%s=%s;" "$f" "$v"; done'
knobs() { local pol=$1; shift; $CTL run --policy "$pol" "$@" -- /usr/bin/bash -c "$KNOBS" 2>/dev/null; }

check "the policy's limits are on the run's cgroup" "$(knobs tlim)" \
	"memory.max=67108864;memory.swap.max=0;cpu.max=20000 100000;io.weight=default 50;memory.oom.group=1;"
check "run flags override them" "$(knobs tlim --memory-max 32M --cpu-max 150% --io-weight 200)" \
	"memory.max=33554432;memory.swap.max=0;cpu.max=150000 100000;io.weight=default 200;memory.oom.group=1;"
check_match "without limits: the daemon's memory ceiling (--run-memory-max 96M), on swap too, nothing else" \
	"$(knobs tnolim)" \
	"^memory.max=100663296;memory.swap.max=100663296;cpu.max=max 100000;io.weight=default 100;memory.oom.group=1;$"
check "... the run-start record says where it came from" \
	"$(jq -r 'select(.event=="run-start" and .policy=="tnolim") | "\(.memory_max) \(.memory_max_from)"' "$AUDIT" | tail -n 1)" \
	"100663296 daemon"
check_match "... and status shows the ceiling" "$($CTL status)" "run memory ceiling: 96M"
# A tree without limits holding memory no process's RSS counts (a memfd
# never mapped): its cgroup is charged, the ceiling's OOM kills the tree,
# the daemon and an outsider live.
sleep 600 &
outsider=$!
run_in_tree tnolim "$HOG" memfd 200
check "a memfd hog without limits: killed at the ceiling (128+9)" "$RC" 137
check "... its run-end says OOM" \
	"$(jq -r 'select(.event=="run-end") | .oom' "$AUDIT" | tail -n 1)" 1
check "... the daemon and an outsider live" \
	"$(kill -0 "$DAEMON_PID" && kill -0 "$outsider" && echo alive)" alive
kill "$outsider"
run_in_tree tnolim "$HOG" memfd 16
check "... its twin within the ceiling survives" "$OUT" survived
"$SH_BUILD/sharnessd" --run-memory-max lots --socket "$SOCK.x" 2>"$SH_TMP/rm.err"
check "--run-memory-max lots: exit 1" "$?" 1
check_match "... says what it takes" "$(cat "$SH_TMP/rm.err")" "takes a size .256M, 4G. or 'none'"
rec=$(jq -c 'select(.event=="run-start" and .policy=="tlim")' "$AUDIT" | head -1)
check "run-start records the limits" "$(jq -r '"\(.memory_max) \(.memory_swap_max) \(.cpu_max_pct) \(.io_weight)"' <<<"$rec")" \
	"67108864 0 20 50"

# An OOM in the tree: the tree is killed, nobody else.
sleep 1000 &
outsider=$!
run_in_tree tlim "$HOG" mem 16
check "a process within memory-max: runs" "$OUT/$RC" "survived/0"
rec=$(last_event run-end)
check "its run-end says no OOM" "$(field oom "$rec") $(field oom_kills "$rec")" "0 0"
run_in_tree tlim "$HOG" mem 512
check "a memory hog over memory-max: killed (SIGKILL, 128+9)" "$RC" 137
check "it never got its memory" "$(grep -c survived "$SH_TMP/last.out")" 0
check_match "run says the OOM killer killed it" "$(cat "$SH_TMP/last.err")" \
	"the OOM killer killed [0-9]+ process(es)? \(memory-max 64M, peak"
rec=$(last_event run-end)
check "run-end: oom" "$(field oom "$rec")" 1
check_match "run-end: oom_kills" "$(field oom_kills "$rec")" '^[1-9][0-9]*$'
check_match "run-end: memory_peak at most memory-max" "$(jq -r '.memory_peak <= 67108864' <<<"$rec")" true
check "the process outside the tree is untouched" "$(kill -0 $outsider && echo alive)" alive
check "sharnessd is untouched" "$(kill -0 "$DAEMON_PID" && echo alive)" alive
kill $outsider

# A CPU spinner under cpu-max = 20 %: a measurement from cpu.stat, with a
# generous bound, next to the same spinner without a limit.
run_in_tree tlim "$HOG" spin 3
check "the spinner under cpu-max runs to its end" "$OUT/$RC" "spun/0"
rec=$(last_event run-end)
check_match "run-end: throttled under cpu-max" "$(field cpu_nr_throttled "$rec")" '^[1-9][0-9]*$'
# Over the run's life: under emulation the exec before the spin can take
# seconds of its own (throttled as well), which the records' times catch
# in part (run-start is written once the run started); the spin alone
# lasts 3 s. Emulated ticks let a period overrun its quota, so the bound
# is half a CPU: an unthrottled spinner takes all of one.
t0=$(jq -r --argjson r "$(field run "$rec")" 'select(.event == "run-start" and .run == $r) | .time' "$AUDIT")
life=$(( ($(date -d "$(field time "$rec")" +%s%N) - $(date -d "$t0" +%s%N)) / 1000 ))
[ "$life" -ge 3000000 ] || life=3000000
echo "  cpu-max 20%: the spinner used $(field cpu_usage_usec "$rec") us of CPU in a run of $life us"
check "the spinner used at most half a CPU over its run (a fifth asked)" \
	"$(jq -r --argjson l "$life" '.cpu_usage_usec <= 0.5 * $l' <<<"$rec")" true
check_match "run says it was throttled" "$(cat "$SH_TMP/last.err")" "throttled [0-9]+ times by cpu-max"
run_in_tree tnolim "$HOG" spin 2
rec=$(last_event run-end)
check "without cpu-max: never throttled" "$(field cpu_nr_throttled "$rec")" 0
check "without cpu-max: more than half a CPU over its 2 s spin (the bound above can fail)" \
	"$(jq -r '.cpu_usage_usec > 1000000' <<<"$rec")" true

# The tree cannot raise its limits, nor lower its OOM priority against
# processes outside it.
out=$($CTL run --policy tlim -- /usr/bin/bash -c \
	'IFS=: read -r _ _ p </proc/self/cgroup; echo max >"/sys/fs/cgroup$p/memory.max" && echo raised;
	 read -r v <"/sys/fs/cgroup$p/memory.max"; echo "now $v"' 2>&1)
check_match "writing its own memory.max: refused" "$out" "Operation not permitted"
check_match "memory.max unchanged" "$out" "now 67108864"
out=$($CTL run --policy tlim -- /usr/bin/bash -c 'echo -1000 >/proc/self/oom_score_adj && echo lowered' 2>&1)
check_match "lowering its own oom_score_adj: refused (no CAP_SYS_RESOURCE)" "$out" "Permission denied"
out=$($CTL run --policy tlim -- /usr/bin/bash -c 'echo 500 >/proc/self/oom_score_adj && echo raised' 2>/dev/null)
check "raising its own oom_score_adj (less protected): allowed" "$out" raised
sleep 1000 &
outsider=$!
out=$($CTL run --policy tlim -- /usr/bin/bash -c "echo 1000 >/proc/$outsider/oom_score_adj && echo set" 2>&1)
check_match "an outsider's oom_score_adj: refused" "$out" "Operation not permitted"
read -r v </proc/$outsider/oom_score_adj
check "the outsider's oom_score_adj unchanged" "$v" 0
kill $outsider

# A tagged existing cgroup keeps the limits its owner set.
mkdir -p /sys/fs/cgroup/t_limits
$CTL tag /sys/fs/cgroup/t_limits tlim
check "tagging an existing cgroup" "$?" 0
read -r v </sys/fs/cgroup/t_limits/memory.max 2>/dev/null || v="(no memory.max)"
check "its limits are its owner's, not the policy's (memory.max)" "$v" max
$CTL untag /sys/fs/cgroup/t_limits
rmdir /sys/fs/cgroup/t_limits

# A limit that cannot be applied fails the run (125) rather than running it
# unbounded: with a process in the runs' parent, the memory controller can
# no longer be enabled for its children.
R=/sys/fs/cgroup/sharness
# A cgroup with processes enables no controller for its children, and one
# with controllers enabled takes no process: all off, then park one.
for c in pids memory cpu io; do echo "-$c" >"$R/cgroup.subtree_control"; done
sleep 1000 &
parked=$!
echo $parked >"$R/cgroup.procs"
check "a process parked in the runs' parent" "$(grep -c "^$parked\$" "$R/cgroup.procs")" 1
out=$($CTL run --policy tlim -- /usr/bin/bash -c true 2>&1)
check "memory-max that cannot be applied: the run is refused (125)" "$?" 125
check_match "it says which limit and why" "$out" \
	"cannot apply memory-max \(.*memory.max = 67108864\): .*controller is not enabled"
echo $parked >/sys/fs/cgroup/cgroup.procs
kill $parked
wait $parked 2>/dev/null
run_in_tree tlim /usr/bin/bash -c true
check "with the parent empty again, the limits apply and the run runs" "$RC" 0

# ---- the blocks a file system keeps for root: CAP_SYS_RESOURCE -------------
# ext4 lets its reserved blocks be used by its reserve uid or gid, or with
# CAP_SYS_RESOURCE, which no tree has. Made for nobody (65534), so root's
# uid does not open it. A core dump is written with a copy of the dumping
# task's credentials in force (override_creds): a check under them is
# still the tree's (PF_DUMPCORE, bpf/task.c), so a tree's core stops at the
# reserve as its writes do.
ram_disk
mkdir -p "$RES"
if ! { mkfs.ext4 -q -F -m 40 /dev/ram0 && tune2fs -u 65534 -g 65534 /dev/ram0 &&
	mount -t ext4 /dev/ram0 "$RES"; } >"$SH_TMP/mkfs.out" 2>&1; then
	fail "an ext4 with a reserve on a ram disk" "$(tr '\n' ' ' <"$SH_TMP/mkfs.out")"
	exit 1
fi
# fill WHAT FILE SIZE_OF: a tree appends 16 MiB to FILE; stopped with
# ENOSPC at the reserve (SIZE_OF, the file that holds the bytes, no
# larger than what was free to others), CAP_SYS_RESOURCE refused and
# logged. Sets size.
fill() {
	local q='.policy == "tres" and .hook == "capability" and .target == "CAP_SYS_RESOURCE"'
	local avail n0 n out rc
	avail=$(($(stat -f -c '%a * %S' "$RES")))
	n0=$(audit_count "$q")
	out=$($CTL run --policy tres -- /usr/bin/bash -c \
		"head -c 16777216 /dev/zero >>$2; echo rc=\$?; stat -c %s $3" 2>"$SH_TMP/res.err")
	read -r rc size <<<"$(tr '\n' ' ' <<<"$out")"
	check "a tree fills the file system $1: stopped with ENOSPC" "$rc" rc=1
	check_match "... told why" "$(cat "$SH_TMP/res.err")" "No space left on device"
	check "... at the reserve: no more than the $avail bytes free to others" \
		"$([ "${size:-0}" -gt 0 ] && [ "$size" -le "$avail" ] && echo yes || echo "no, ${size:-none}")" yes
	n=$(audit_wait "$q" $((n0 + 1)))
	check "... refused CAP_SYS_RESOURCE, and logged" "$([ "$n" -gt "$n0" ] && echo yes || echo "no, $n")" yes
}
fill "by its writes" "$RES/t" "$RES/t"
head -c 1048576 /dev/zero >"$RES/o" 2>/dev/null
check "its twin: root outside writes 1 MiB into the reserve" "$(stat -c %s "$RES/o")" 1048576
# The core of a process killed by SIGSEGV, where only the reserve is left.
read -r pattern </proc/sys/kernel/core_pattern
echo "$RES/core.%p" >/proc/sys/kernel/core_pattern
left=$(($(stat -f -c '%a * %S' "$RES")))
cpid=$($CTL run --policy tres -- /usr/bin/bash -c 'ulimit -S -c unlimited; echo $$; kill -SEGV $$' 2>/dev/null)
tcore=$(find "$RES" -name "core.$cpid" -printf '%s\n')
check "a tree's core where only the reserve is left: stopped at it (at most the $left bytes free to others)" \
	"$([ -n "$tcore" ] && [ "$tcore" -le "$left" ] && echo yes || echo "no, ${tcore:-none}")" yes
n=$(audit_wait ".policy == \"tres\" and .pid == ${cpid:-0} and .target == \"CAP_SYS_RESOURCE\"")
check "... the dumping process refused CAP_SYS_RESOURCE, and logged" \
	"$([ "$n" -ge 1 ] && echo yes || echo "no, $n")" yes
rm -f "$RES"/core.*
opid=$(bash -c 'ulimit -S -c unlimited; echo $$; kill -SEGV $$' 2>/dev/null)
ocore=$(find "$RES" -name "core.$opid" -printf '%s\n')
check "its twin: an outsider's core there is written into the reserve (more than $left bytes)" \
	"$([ "${ocore:-0}" -gt "$left" ] && echo yes || echo "no, ${ocore:-none}")" yes
echo "$pattern" >/proc/sys/kernel/core_pattern
# A FUSE file passed through to a file on that file system (Linux 6.9 on):
# the kernel writes it with the FUSE server's credentials in force, which
# may open the reserve (overlayfs lowers CAP_SYS_RESOURCE in its owner's
# for its writes; FUSE keeps the server's whole) and keep a written
# set-user-ID file's bit. CAP_SYS_RESOURCE and CAP_FSETID asked under them
# in a tree's task are still the tree's.
rm -f "$RES/t" "$RES/o" "$RES"/core.*
: >"$RES/fb"
chmod 4755 "$RES/fb"
mkdir -p "$FUSE"
exec {fpt}< <("$SH_BUILD/tests/vm/fusept" "$FUSE" "$RES/fb" 2>"$SH_TMP/fusept.err"; echo "exit=$?")
read -r -t 30 -u $fpt l
case $(uname -r) in
6.1.*)	# 6.1 has no passthrough: FUSE's writes there are the caller's own.
	check_match "6.1: no FUSE passthrough offered" "$l $(cat "$SH_TMP/fusept.err")" \
		"exit=77 fusept: the kernel offers no passthrough"
	umount "$FUSE"
	l=exit=0 ;;
*)
	check "a FUSE server passes a file through to the reserve's file system" "$l $(cat "$SH_TMP/fusept.err")" "ready "
	fill "through the passthrough, the server's credentials in force" "$FUSE/f" "$RES/fb"
	n=$(audit_wait '.policy == "tres" and .hook == "capability" and .target == "CAP_FSETID"')
	check "... the set-user-ID file it wrote lost its bit (CAP_FSETID refused, logged)" \
		"$(stat -c %A "$RES/fb") $([ "$n" -ge 1 ] && echo logged)" "-rwxr-xr-x logged"
	chmod 4755 "$RES/fb"
	head -c 1048576 /dev/zero >>"$FUSE/f" 2>/dev/null
	check "its twin: root outside writes 1 MiB through the passthrough into the reserve, the bit kept" \
		"$(($(stat -c %s "$RES/fb") - ${size:-0})) $(stat -c %A "$RES/fb")" "1048576 -rwsr-xr-x"
	umount "$FUSE"
	read -r -t 30 -u $fpt l ;;
esac
check "... the server ends with its file system" "$l" exit=0
exec {fpt}<&-
umount "$RES"

# Bad values: FILE:LINE errors in check and reload; bad flags refuse the run.
cat >"$SH_TMP/bad.policy" <<P
[policy]
name = badlim
[limits]
memory-max = lots
cpu-max = 0%
io-weight = 10001
P
out=$($CTL policy check "$SH_TMP/bad.policy" 2>&1)
check "policy check: bad limits refused" "$?" 1
check_match "policy check: memory-max" "$out" "bad.policy:4: bad memory-max 'lots'"
check_match "policy check: cpu-max" "$out" "bad.policy:5: bad cpu-max '0%'"
check_match "policy check: io-weight" "$out" "bad.policy:6: bad io-weight '10001'"
cp "$SH_TMP/bad.policy" "$SH_TMP/policies/"
out=$($CTL policy reload 2>&1)
check "reload refuses them (exit 2)" "$?" 2
check_match "reload says where" "$out" "bad.policy:4: bad memory-max"
rm "$SH_TMP/policies/bad.policy"
$CTL run --policy tlim --memory-max lots -- /usr/bin/true 2>"$SH_TMP/flag.err"
check "run --memory-max lots: refused before starting (125)" "$?" 125
check_match "run says which flag" "$(cat "$SH_TMP/flag.err")" "bad --memory-max 'lots'"
$CTL run --policy tlim --cpu-max 0% -- /usr/bin/true 2>"$SH_TMP/flag.err"
check "run --cpu-max 0%: refused (125)" "$?" 125
check_log_valid
exit 0
