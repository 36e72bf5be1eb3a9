#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The doors root inside a tree tries once the obvious ones are shut: mounts
# no rule sees, raw block devices, handles and descriptors that outlive
# their path, the operator's terminal, limits and scheduling of outsiders,
# file changes that are not writes by name, the capabilities that change
# the whole host, kernel knobs, and the daemon's own socket. Every attempt
# is made as root inside a tree, refused with its audit record and kernel
# counter, next to its control outside the tree or its allowed twin.
. "$(dirname "$0")/lib.sh"

WALL=$SH_BUILD/tests/vm/wall
W=$SH_TMP/w                     # the tree's workspace: writable
mkdir -p "$W" "$SH_TMP/fake/usr/bin"
echo secret >"$SH_TMP/secret"
echo public >"$SH_TMP/public"
echo victim >"$SH_TMP/victim"
echo outside >"$SH_TMP/outside.txt"
echo inside >"$W/f"
cp /usr/bin/id "$SH_TMP/fake/usr/bin/true"   # not true: id, under a name the policy allows

cat >"$SH_TMP/policies/twall.policy" <<P
[policy]
name = twall
[exec]
allow = /usr/bin/bash
allow = /usr/bin/true
allow = $SH_BUILD/
[file]
write = $W/
write = /dev/null
write = /dev/pts/
write = /dev/ptmx
deny = $SH_TMP/secret
deny = $SH_TMP/victim
deny = $W/sealed/key
[limits]
capability = dac_read_search   # open_by_handle_at: its handles judged by path below
P
# Without file or connect rules: the doors alone are in the way.
cat >"$SH_TMP/policies/twallopen.policy" <<P
[policy]
name = twallopen
P
# [file] rules on an overlay's paths (overlayfs, section 7).
cat >"$SH_TMP/policies/twallov.policy" <<P
[policy]
name = twallov
[file]
write = $SH_TMP/ov/m/d5/
write = $SH_TMP/ovl/m/
deny = $SH_TMP/ov/m/d6/
P
# A capability allowed back where a job needs it.
cat >"$SH_TMP/policies/twallcap.policy" <<P
[policy]
name = twallcap
[limits]
capability = sys_time   # the job sets the clock
P
# An exec allowlist alone: opens are not judged, exec is.
cat >"$SH_TMP/policies/twallexec.policy" <<P
[policy]
name = twallexec
[exec]
allow = /usr/bin/bash
allow = /usr/bin/true
allow = $SH_BUILD/
P
# Audit mode: the kernel refuses nothing, so the daemon's own check is seen.
cat >"$SH_TMP/policies/twallaudit.policy" <<P
[policy]
name = twallaudit
mode = audit
P

VICTIM=
HOLDER=
HOLDPTY=
cleanup_wall() {
	kill $VICTIM $HOLDER $HOLDPTY 2>/dev/null
	wait 2>/dev/null
	cleanup
}
trap cleanup_wall EXIT

# inw POLICY OP ARGS... / outw OP ARGS...: the wall helper in a fresh tree
# or outside every tree; OUT is its verdict line.
inw() { local pol=$1; shift; run_in_tree "$pol" "$WALL" "$@"; }
outw() { run_outside "$WALL" "$@"; }

# mark: what expect looks at is the log from here on. LOGMARK counts the
# newlines read so far through a descriptor held on the log (LOGFD; a wc
# per attempt cost a fork and an exec, 0.1 s under emulation): a line still
# being written has no newline yet and counts with the next read. A new
# file at the log's path (a rotation) is read from its start. Commands
# that join a tagged cgroup by hand close LOGFD ({LOGFD}<&-): a tree is
# handed no descriptor of the daemon's log.
LOGFD= LOGMARK=0
mark() {
	local chunk= nl LC_ALL=C
	if [ -z "$LOGFD" ] || ! [ "/dev/fd/$LOGFD" -ef "$AUDIT" ]; then
		[ -z "$LOGFD" ] || exec {LOGFD}<&-
		exec {LOGFD}<"$AUDIT"
		LOGMARK=0
	fi
	IFS= read -r -d '' -u "$LOGFD" chunk
	nl=${chunk//[!$'\n']/}
	LOGMARK=$((LOGMARK + ${#nl}))
}
# expect NAME JQ_FILTER REASON: a violation written since mark matches the
# filter, and says deny, errno 1 and REASON. EV is that record.
expect() {
	EV= FILTER=$2
	ev_found() {
		EV=$(audit_select "$FILTER" "$((LOGMARK + 1))" last)
		[ -n "$EV" ]
	}
	wait_until ev_found
	if [ -n "$EV" ]; then pass "$1: audit record ($2)"; else
		fail "$1: audit record ($2)" "log since mark: $(tail -n +"$((LOGMARK + 1))" "$AUDIT" | tr '\n' ' ')"
	fi
	check "$1: record says deny, errno 1, $3" \
		"$(field action "$EV") $(field errno "$EV") $(field reason "$EV")" "deny 1 $3"
}
# counted HOOK BEFORE N: the kernel's deny_HOOK counter grew by N.
counted() { check "kernel counter deny_$1 +$3" "$(counter "deny_$1")" "$(($2 + $3))"; }

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"
mark

# ---- 1. mounts no rule sees ------------------------------------------------
echo "-- detached mounts (${SECONDS}s)"
c0=$(counter deny_capability)
mark
inw twall open-tree "$W"
check "open_tree(OPEN_TREE_CLONE) in the tree: refused" "$OUT" "err EPERM"
expect "open_tree" '.hook == "capability" and .target == "CAP_SYS_ADMIN"' "forbidden in a tree"
counted capability "$c0" 1
outw open-tree "$W"
check "outside: open_tree works" "$OUT" ok

# Changing existing mounts has no hook of its own: the capability closes it.
mkdir -p "$SH_TMP/m" && mount -t tmpfs tmpfs "$SH_TMP/m"
for op in mount-setattr fspick; do
	mark
	inw twall $op "$SH_TMP/m"
	check "$op on an existing mount: refused" "$OUT" "err EPERM"
	expect "$op" '.hook == "capability" and .target == "CAP_SYS_ADMIN"' "forbidden in a tree"
	outw $op "$SH_TMP/m"
	check "outside: $op works" "$OUT" ok
done
umount "$SH_TMP/m"

# A detached clone handed in from outside (fd 9): what it reaches has no
# path in the tree's mount namespace, so it is refused, never judged by the
# path it would seem to have. run hands a tree no descriptor but its
# standard streams, so the clone comes in with a process that joins a
# tagged cgroup holding it (as a process of a tagged unit would).
CGC=/sys/fs/cgroup/t_wall_clone CGX=/sys/fs/cgroup/t_wall_clonex
mkdir -p "$CGC" "$CGX"
$CTL tag "$CGC" twall >/dev/null && $CTL tag "$CGX" twallexec >/dev/null
"$WALL" with-clone "$SH_TMP" -- $CTL run --policy twall -- "$WALL" at 9 read secret \
	>"$SH_TMP/last.out" 2>&1
first_line "$SH_TMP/last.out"
check "run: the clone on fd 9 is not handed to the tree" "$OUT" "err EBADF"
c0=$(counter deny_file)
mark
"$WALL" with-clone "$SH_TMP" -- /usr/bin/bash -c "echo \$\$ >$CGC/cgroup.procs && exec $WALL at 9 read secret" >"$SH_TMP/last.out" 2>&1 {LOGFD}<&-
first_line "$SH_TMP/last.out"
check "read a denied file through a detached clone: refused" "$OUT" "err EPERM"
expect "read through a clone" '.hook == "file" and .op == "open" and .path_error == -18' \
	"path unresolved"
mark
"$WALL" with-clone "$SH_TMP" -- /usr/bin/bash -c "echo \$\$ >$CGC/cgroup.procs && exec $WALL at 9 write outside.txt" >"$SH_TMP/last.out" 2>&1 {LOGFD}<&-
first_line "$SH_TMP/last.out"
check "write outside the work dir through a detached clone: refused" \
	"$OUT" "err EPERM"
expect "write through a clone" '.hook == "file" and .access == "write" and .path_error == -18' \
	"path unresolved"
counted file "$c0" 2
check "  ... the file is unchanged" "$(cat "$SH_TMP/outside.txt")" outside
"$WALL" with-clone "$SH_TMP" -- "$WALL" at 9 read secret >"$SH_TMP/last.out" 2>&1
check "outside: read through the clone works" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok secret "

c0=$(counter deny_exec)
mark
"$WALL" with-clone "$SH_TMP/fake" -- /usr/bin/bash -c "echo \$\$ >$CGX/cgroup.procs && exec $WALL at 9 exec usr/bin/true" >"$SH_TMP/last.out" 2>&1 {LOGFD}<&-
first_line "$SH_TMP/last.out"
check "exec a binary that looks like /usr/bin/true in a clone: refused" \
	"$OUT" "err EPERM"
expect "exec through a clone" '.hook == "exec" and .path_error == -18' "path unresolved"
counted exec "$c0" 1
"$WALL" with-clone "$SH_TMP/fake" -- "$WALL" at 9 exec usr/bin/true >"$SH_TMP/last.out" 2>&1
first_line "$SH_TMP/last.out"
check_match "outside: the same exec runs (it is id)" "$OUT" '^uid=0'
$CTL run --policy twall -- /usr/bin/true
check "control: the real /usr/bin/true runs in the tree" "$?" 0
$CTL untag "$CGC" >/dev/null && $CTL untag "$CGX" >/dev/null
wait_until rmdir "$CGC"; wait_until rmdir "$CGX"

# ---- 2. raw block devices, memory devices ----------------------------------
echo "-- block and memory devices (${SECONDS}s)"
BLK=
# The guest kernel's modules are in the setup cache, not under /lib/modules.
for d in /var/cache/sharness/kernels/*; do
	[ -d "$d/lib/modules/$(uname -r)" ] && KMODDIR=$d
done
modprobe -d "${KMODDIR:-/}" brd rd_nr=1 rd_size=16384 2>/dev/null
wait_until test -b /dev/ram0 && BLK=/dev/ram0
if [ -z "$BLK" ]; then
	# No ram disk module: a node for a device that is not there. Outside,
	# the kernel's own answer (ENXIO); inside, refused before the driver.
	mknod "$SH_TMP/blk" b 7 200 && BLK=$SH_TMP/blk
fi
echo "   block device: $BLK"
printf '[policy]\nname = twalldev\n[file]\ndevice = %s\ndevice = /dev/mem\n' "$BLK" >"$SH_TMP/policies/twalldev.policy"
$CTL policy reload >/dev/null
c0=$(counter deny_file)
mark
inw twallopen open-blk "$BLK"
check "open a block device for reading, no file rules: refused" "$OUT" "err EPERM"
expect "block device" ".hook == \"file\" and .target == \"$BLK\"" "device not allowed"
# A character device that is not in the default set (the kernel log).
mark
r=$($CTL run --policy twallopen -- "$TRY" open /dev/kmsg w 2>/dev/null | head -1)
check "open /dev/kmsg for writing: refused" "$r" "err EPERM"
expect "/dev/kmsg" '.hook == "file" and .target == "/dev/kmsg"' "device not allowed"
counted file "$c0" 2
check "outside: /dev/kmsg opens" "$("$TRY" open /dev/kmsg w | head -1)" ok
outw open-blk "$BLK"
check_match "outside: the same open reaches the driver" "$OUT" '^(ok|err ENXIO)$'
inw twalldev open-blk "$BLK"
check_match "a [file] device rule naming it lets the tree open it" "$OUT" '^(ok|err ENXIO)$'
r=$($CTL run --policy twallopen -- /usr/bin/bash -c \
	"$TRY open /dev/null w && $TRY open /dev/zero r && $TRY open /dev/urandom r && $TRY open /dev/ptmx rw" \
	2>/dev/null | tr '\n' ' ')
check "twin: the default devices open" "$r" "ok ok ok ok "
# /dev/mem: a device no default allows, and CAP_SYS_RAWIO where a rule does.
c0=$(counter deny_file)
mark
TRY_OUT=$($CTL run --policy twallopen -- "$TRY" open /dev/mem r 2>/dev/null | head -1)
check "open /dev/mem: refused" "$TRY_OUT" "err EPERM"
expect "/dev/mem" '.hook == "file" and .target == "/dev/mem"' "device not allowed"
counted file "$c0" 1
c0=$(counter deny_capability)
mark
TRY_OUT=$($CTL run --policy twalldev -- "$TRY" open /dev/mem r 2>/dev/null | head -1)
check "open /dev/mem with a device rule naming it: still refused" "$TRY_OUT" "err EPERM"
expect "/dev/mem, rule" '.hook == "capability" and .target == "CAP_SYS_RAWIO"' "forbidden in a tree"
counted capability "$c0" 1
check "outside: /dev/mem opens" "$("$TRY" open /dev/mem r | head -1)" ok

# ---- 3. handles and descriptors that outlive their path --------------------
echo "-- handles and reopened descriptors (${SECONDS}s)"
mark
inw twall handle-read "$SH_TMP/secret"
check "open_by_handle_at of a denied file: refused" "$OUT" "err EPERM"
expect "handle" ".hook == \"file\" and .target == \"$SH_TMP/secret\"" "deny rule"
inw twall handle-read "$SH_TMP/public"
check "twin: open_by_handle_at of an allowed file" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok public "
# Without capability = dac_read_search no handle opens at all: one could
# name an inode a mount covers (the host's /tmp under a run's own).
c0=$(counter deny_capability)
inw twallopen handle-read "$SH_TMP/public"
check "open_by_handle_at without dac_read_search: refused" "$OUT" "err EPERM"
expect "handle, default" '.hook == "capability" and .target == "CAP_DAC_READ_SEARCH"' "forbidden in a tree"
counted capability "$c0" 1
# linkat(AT_EMPTY_PATH) names a file by its descriptor (a file of the tree's
# work dir, opened by the test: other credentials, so 6.12 asks for the
# capability too), by the system call and by an io_uring worker, which runs
# no system call of its own.
for how in sys async; do
	mark
	c0=$(counter deny_capability)
	run_in_tree twallopen "$WALL" link-stdin $how "$W/linked-$how" <"$W/f"
	check "linkat AT_EMPTY_PATH ($how) without dac_read_search: refused" \
		"$OUT $([ -e "$W/linked-$how" ] && echo made)" "err ENOENT "
	expect "linkat AT_EMPTY_PATH ($how)" '.hook == "capability" and .target == "CAP_DAC_READ_SEARCH"' \
		"forbidden in a tree"
	counted capability "$c0" 1
	run_in_tree twall "$WALL" link-stdin $how "$W/linked-$how" <"$W/f"
	check "twin: linkat AT_EMPTY_PATH ($how) with dac_read_search" \
		"$OUT $(cat "$W/linked-$how" 2>/dev/null)" "ok inside"
done

# A handle whose dentry was evicted: the kernel makes a disconnected dentry
# for it, whose path ("/") names nothing. Needs a file system that evicts
# dentries: ext4 on the ram disk.
EXT=$SH_TMP/ext
if [ "$BLK" = /dev/ram0 ] && modprobe -d "${KMODDIR:-/}" ext4 2>/dev/null &&
	mkfs.ext4 -q -F /dev/ram0 && mkdir -p "$EXT" && mount -t ext4 /dev/ram0 "$EXT"; then
	echo evicted >"$EXT/secret"
	printf '[policy]\nname = twallext\n[file]\ndeny = %s/secret\n[limits]\ncapability = dac_read_search\n' "$EXT" \
		>"$SH_TMP/policies/twallext.policy"
	$CTL policy reload >/dev/null
	"$WALL" handle-save "$EXT/secret" "$SH_TMP/handle" >/dev/null
	sync; echo 2 >/proc/sys/vm/drop_caches
	mark
	inw twallext handle-load "$EXT" "$SH_TMP/handle"
	check "open_by_handle_at after eviction (disconnected dentry): refused" "$OUT" "err EPERM"
	expect "disconnected handle" '.hook == "file" and .path_error == -116' "path unresolved"
	echo 2 >/proc/sys/vm/drop_caches
	outw handle-load "$EXT" "$SH_TMP/handle"
	check "outside: the same handle opens" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok evicted "
	umount "$EXT"
else
	fail "ext4 on a ram disk for the evicted-handle test" "modules not loadable from ${KMODDIR:-/}"
fi

# O_PATH on a denied file, which is then replaced: the descriptor's file
# has no name left, and reopening it through /proc/self/fd is refused.
mkfifo "$SH_TMP/go"
$CTL run --policy twall -- "$WALL" opath-reopen "$SH_TMP/victim" "$SH_TMP/go" \
	>"$SH_TMP/reopen.out" 2>&1 &
rp=$!
wait_until grep -q '^ready' "$SH_TMP/reopen.out"
echo replaced >"$SH_TMP/victim.new" && mv "$SH_TMP/victim.new" "$SH_TMP/victim"
mark
echo go >"$SH_TMP/go"
wait $rp
check "reopen of a replaced denied file via /proc/self/fd: refused" \
	"$(sed -n 2p "$SH_TMP/reopen.out")" "err EPERM"
expect "replaced file" '.hook == "file" and .op == "open" and .path_error == -116' "path unresolved"
$CTL run --policy twall -- "$WALL" opath-reopen "$SH_TMP/public" "$SH_TMP/go" \
	>"$SH_TMP/reopen.out" 2>&1 &
rp=$!
wait_until grep -q '^ready' "$SH_TMP/reopen.out"
echo go >"$SH_TMP/go"
wait $rp
check "twin: reopen of an intact allowed file" "$(sed -n 2,3p "$SH_TMP/reopen.out" | tr '\n' ' ')" "ok public "

# ---- 4. the operator's terminal ---------------------------------------------
echo "-- terminals (${SECONDS}s)"
# The operator's terminal: a pty held outside every tree.
python3 -c 'import os, pty, sys, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
time.sleep(1000)' >"$SH_TMP/pty.out" &
HOLDER=$!
wait_until test -s "$SH_TMP/pty.out"
PTS=$(cat "$SH_TMP/pty.out")
# Handed in (as the standard input), the way a command's terminal is.
c0=$(counter deny_tty)
for op in sti steal linux kd cons vhangup; do
	mark
	inw twall tty-ioctl - $op <"$PTS"
	check "terminal ioctl $op on the operator's terminal: refused" "$OUT" "err EPERM"
	expect "tty $op" ".hook == \"tty\" and .op == \"ioctl\" and .target == \"$PTS\"" \
		"forbidden in a tree"
done
counted tty "$c0" 6
outw tty-ioctl "$PTS" sti
check "outside: TIOCSTI works (root)" "$OUT" ok
# Opened by its name: reading it takes the keys typed there. A pty slave
# is a device like the rest, but for the ones the tree made itself; the
# policy with write rules for /dev/pts/ does not change that.
c0=$(counter deny_file)
for pol in twall twallopen; do
	mark
	inw $pol tty-open "$PTS"
	check "$pol: open the operator's terminal by its name: refused" "$OUT" "err EPERM"
	expect "operator's pty" ".hook == \"file\" and .target == \"$PTS\"" "device not allowed"
done
mark
try_in_tree twallopen open "$PTS" r
check "open it for reading only: refused" "$OUT" "err EPERM"
expect "operator's pty, read" ".hook == \"file\" and .target == \"$PTS\"" "device not allowed"
counted file "$c0" 3
outw tty-open "$PTS"
check "outside: the operator's terminal opens" "$OUT" ok
# Handed in as the standard input, it stays usable (the ioctl checks
# above), but opening it again by a name is opening it by name.
mark
try_in_tree twallopen open /proc/self/fd/0 r <"$PTS"
check "its standard input opened again through /proc/self/fd/0: refused" "$OUT" "err EPERM"
expect "stdin reopened" ".hook == \"file\" and .target == \"$PTS\"" "device not allowed"
# Through io_uring the open is made by an io-wq worker or the ring's
# kernel thread: threads of the tree's process, judged the same.
c0=$(counter deny_file)
for how in async sqpoll; do
	mark
	run_in_tree twallopen "$SH_BUILD/tests/vm/escape" uring $how open "$PTS" r
	check "io_uring ($how) open of the operator's terminal: refused" "$OUT" "err EPERM"
	expect "pty, io_uring $how" ".hook == \"file\" and .target == \"$PTS\"" "device not allowed"
	run_outside "$SH_BUILD/tests/vm/escape" uring $how open "$PTS" r
	check "outside: the same io_uring ($how) open" "$OUT" ok
done
counted file "$c0" 2
# Handed over SCM_RIGHTS by whoever holds it (tmux's client hands its
# terminal to its server so): received, as it was given.
serve_fd "$SH_TMP/pty.sock" "$PTS" w
c0=$(counter deny_file)
run_in_tree twallopen "$SH_BUILD/tests/vm/escape" recv-fd "$SH_TMP/pty.sock"
check "the operator's terminal handed over SCM_RIGHTS: received" "$OUT" ok
counted file "$c0" 0
stop_servers
printf '[policy]\nname = twallpts\n[file]\ndevice = /dev/pts/\ndevice = /dev/console\n' \
	>"$SH_TMP/policies/twallpts.policy"
$CTL policy reload >/dev/null
inw twallpts tty-open "$PTS"
check "a [file] device rule for /dev/pts/ lets the tree open it" "$OUT" ok
run_in_tree twallpts "$SH_BUILD/tests/vm/escape" uring sqpoll open "$PTS" r
check "twin: with that rule, the io_uring (sqpoll) open of it too" "$OUT" ok
inw twall own-pty
check "twin: a terminal of the tree's own (new pty, TIOCSCTTY 0)" "$OUT" ok
inw twallopen own-pty
check "twin: the same with no file rules" "$OUT" ok
inw twallopen own-pty peer
check "twin: its slave opened with TIOCGPTPEER" "$OUT" ok
# Another tree's pty is not this tree's.
$CTL run --policy twallopen -- "$WALL" hold-pty >"$SH_TMP/hold.out" 2>/dev/null &
HOLDPTY=$!
wait_until test -s "$SH_TMP/hold.out"
TPTS=$(head -1 "$SH_TMP/hold.out")
check_match "a tree holds a pty of its own" "$TPTS" '^/dev/pts/[0-9]+$'
two_lines() { [ "$(wc -l <"$SH_TMP/hold.out")" -ge 2 ]; }
wait_until two_lines
check "twin: another process of that tree opens it by name" "$(sed -n 2p "$SH_TMP/hold.out")" ok
c0=$(counter deny_file)
mark
inw twallopen tty-open "$TPTS"
check "another tree opens that tree's pty: refused" "$OUT" "err EPERM"
expect "another tree's pty" ".hook == \"file\" and .target == \"$TPTS\"" "device not allowed"
counted file "$c0" 1
outw tty-open "$TPTS"
check "outside: that pty opens" "$OUT" ok
kill "$HOLDPTY" 2>/dev/null
wait "$HOLDPTY" 2>/dev/null
# The console: its keyboard input, its messages.
c0=$(counter deny_file)
mark
inw twallopen tty-open /dev/console
check "open /dev/console: refused" "$OUT" "err EPERM"
expect "/dev/console" '.hook == "file" and .target == "/dev/console"' "device not allowed"
counted file "$c0" 1
outw tty-open /dev/console
check "outside: /dev/console opens" "$OUT" ok
inw twallpts tty-open /dev/console
check "a [file] device rule for /dev/console lets the tree open it" "$OUT" ok
c0=$(counter deny_capability)
mark
inw twall vhangup
check "vhangup(2): refused" "$OUT" "err EPERM"
expect "vhangup" '.hook == "capability" and .target == "CAP_SYS_TTY_CONFIG"' "forbidden in a tree"
counted capability "$c0" 1
outw vhangup
check "outside: vhangup works" "$OUT" ok
read -r -a st < <($CTL run --policy twall -- /usr/bin/bash -c 'read -r l </proc/self/stat; echo "$$ ${l#*) }"')
# st: pid state ppid pgrp session tty_nr ...
check "run: the command leads a session of its own" "${st[4]:-none}" "${st[0]}"
check "run: the command has no controlling terminal" "${st[5]:-none}" 0

# ---- 5. limits, scheduling and memory of outsiders -------------------------
echo "-- other processes (${SECONDS}s)"
sleep 600 &
VICTIM=$!
c0=$(counter deny_task)
for op in prlimit:setrlimit setnice:setnice ioprio:setioprio affinity:setscheduler; do
	mark
	inw twallopen "${op%%:*}" "$VICTIM"
	check "${op%%:*} on a process outside the tree: refused" "$OUT" "err EPERM"
	expect "${op%%:*}" ".hook == \"task\" and .op == \"${op#*:}\" and .target == \"$VICTIM\"" \
		"outside the tree"
done
mark
inw twallopen prlimit "$DAEMON_PID"
check "prlimit on sharnessd: refused" "$OUT" "err EPERM"
expect "prlimit sharnessd" ".hook == \"task\" and .target == \"$DAEMON_PID\"" "sharnessd is protected"
counted task "$c0" 5
outw prlimit "$VICTIM"
check "outside: prlimit works" "$OUT" ok
outw setnice "$VICTIM"
check "outside: setpriority works" "$OUT" ok
$CTL run --policy twallopen -- /usr/bin/bash -c \
	"$WALL prlimit \$\$ && $WALL setnice \$\$ && $WALL ioprio \$\$ && $WALL affinity \$\$" \
	>"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
check "twin: the same on the tree's own shell" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok ok ok "
kill -0 "$VICTIM"
check "the outsider still runs" "$?" 0
# The host's SysV segments (root owns them): run gives the tree an IPC
# namespace of its own, so they are not even there.
shm=$(ipcmk -M 4096 | awk '{print $NF}')
inw twallopen shm-attach "$shm"
check "shmat of the host's segment from a run: not there" "$OUT" "err EINVAL"
outw shm-attach "$shm"
check "outside: the segment attaches" "$OUT" ok
inw twallopen shm-own
check "twin: a run's own segment attaches" "$OUT" ok
# A tagged cgroup left in the host's IPC namespace uses none of its objects.
CGT=/sys/fs/cgroup/t_wall_tagged
mkdir -p "$CGT" && $CTL tag "$CGT" twallopen >/dev/null
in_cgt() { /usr/bin/bash -c "echo \$\$ >$CGT/cgroup.procs && exec $WALL $*" 2>/dev/null {LOGFD}<&- | head -1; }
mark
# (do_shmat answers every permission refusal with EACCES; the record and
# the counter say it was this hook's.)
c0=$(counter deny_ipc)
check "shmat of the host's segment from a tagged cgroup: refused" "$(in_cgt shm-attach "$shm")" "err EACCES"
expect "shmat (host IPC namespace)" '.hook == "ipc" and .op == "ipc"' "forbidden in a tree"
mark
check "mq_open from a tagged cgroup: refused" "$(in_cgt mq-open /sharness-wall)" "err EPERM"
expect "mq_open (host IPC namespace)" '.hook == "ipc"' "forbidden in a tree"
counted ipc "$c0" 2
# The queue the refused mq_open would have made is not there: it is refused
# where it is made (inode_create), not only at its open. The host's mqueue,
# mounted here by an outsider, lists it.
MQ=$SH_TMP/mqueue
mkdir -p "$MQ" && mount -t mqueue none "$MQ"
check "the refused mq_open made no queue" "$(ls "$MQ" | grep -c sharness-wall)" 0
outw mq-open /sharness-wall
check "outside: mq_open works" "$OUT" ok
# What the kernel checks by owner alone, never through ipc_permission:
# removing (or re-permissioning) the host's objects, making new ones (a key
# squatted), removing a queue by name.
sem=$(ipcmk -S 1 | awk '{print $NF}')
msg=$(ipcmk -Q | awk '{print $NF}')
c0=$(counter deny_ipc)
for kind in shm sem msg; do
	id=${!kind}
	mark
	check "$kind IPC_RMID of the host's object from a tagged cgroup: refused" \
		"$(in_cgt "$kind-rmid" "$id")" "err EPERM"
	expect "$kind IPC_RMID (host IPC namespace)" \
		".hook == \"ipc\" and .op == \"ipcctl\" and .target == \"ipc $id\" and .cmd == 0" "forbidden in a tree"
	mark
	check "$kind: a new object of key 21320 from a tagged cgroup: refused" \
		"$(in_cgt "$kind-create" 21320)" "err EPERM"
	expect "$kind create (host IPC namespace)" \
		'.hook == "ipc" and .op == "ipc-create" and .target == "ipc key 21320"' "forbidden in a tree"
done
check "the host's segment, set and queue are all still there" \
	"$(ipcs -m -i "$shm" >/dev/null 2>&1 && ipcs -s -i "$sem" >/dev/null 2>&1 && ipcs -q -i "$msg" >/dev/null 2>&1 && echo yes)" yes
check "no object of key 21320 was made" "$(ipcs -a | grep -ci '0x00005348')" 0
mark
# (glibc's mq_unlink turns the kernel's EPERM into EACCES, as POSIX asks;
# the record and the counter say it was this hook's.)
check "mq_unlink of the host's queue from a tagged cgroup: refused" \
	"$(in_cgt mq-unlink /sharness-wall)" "err EACCES"
expect "mq_unlink (host IPC namespace)" '.hook == "ipc" and .op == "unlink" and .target == "/sharness-wall"' \
	"forbidden in a tree"
check "the host's queue is still there" "$(ls "$MQ" | grep -c sharness-wall)" 1
counted ipc "$c0" 7
# A run has an IPC namespace of its own, but a mount of the host's mqueue
# reaches the host's queues by path: judged by the queue's namespace.
mark
try_in_tree twallopen open "$MQ/sharness-wall" r
check "a run opening the host's queue through a mount of it: refused" "$OUT" "err EPERM"
expect "mqueue by path from a run" ".hook == \"ipc\" and .op == \"open\" and .target == \"$MQ/sharness-wall\"" \
	"forbidden in a tree"
mark
try_in_tree twallopen chmod "$MQ/sharness-wall" 0
check "a run's chmod of the host's queue through the mount: refused" "$OUT" "err EPERM"
expect "mqueue chmod from a run" '.hook == "ipc" and .op == "chmod"' "forbidden in a tree"
check "  ... its mode is unchanged" "$(stat -c %a "$MQ/sharness-wall")" 600
try_outside chmod "$MQ/sharness-wall" 0640
check "outside: chmod of the queue works" "$OUT $(stat -c %a "$MQ/sharness-wall")" "ok 640"
inw twallopen mq-open /sharness-own
check "twin: a run's own queue (its own namespace) opens" "$OUT" ok
inw twallopen mq-unlink /sharness-wall
check "twin: a run's mq_unlink reaches its own namespace, not the host's" "$OUT" "err ENOENT"
for kind in shm sem msg; do
	outw "$kind-create" 21320
	check "outside: a new $kind object of key 21320" "$OUT" ok
	flag=$(case $kind in shm) echo -m ;; sem) echo -s ;; msg) echo -q ;; esac)
	outw "$kind-rmid" "$(ipcs "$flag" | awk '$1 == "0x00005348" { print $2 }')"
	check "outside: $kind IPC_RMID" "$OUT" ok
done
outw mq-unlink /sharness-wall
check "outside: mq_unlink works" "$OUT" ok
umount "$MQ"
$CTL untag "$CGT" >/dev/null
wait_until rmdir "$CGT"
ipcrm -m "$shm" -s "$sem" -q "$msg"
# Root's user keyring is shared with root outside every tree.
# (the keyring lookup turns the hook's refusal into ENOKEY: the tree does
# not even learn the keyring is there)
c0=$(counter deny_keyring)
mark
inw twallopen key-user
check "keyctl on root's user keyring: refused" "$OUT" "err ENOKEY"
expect "keyring" '.hook == "keyring" and .op == "key"' "forbidden in a tree"
check_match "kernel counter deny_keyring grew" "$(( $(counter deny_keyring) - c0 ))" '^[1-9][0-9]*$' 
outw key-user
check "outside: the user keyring is there" "$OUT" ok

# ---- 6. file changes that are not writes by name ---------------------------
echo "-- attributes, ACLs, times, flags (${SECONDS}s)"
setfattr_outw() { "$WALL" setxattr "$1" >/dev/null; }
c0=$(counter deny_file)
n=0
for op in removexattr:removexattr setacl:setxattr,setacl \
	utimens:settimes chattr:setflags; do
	w=${op%%:*} ops=${op#*:}
	[ "$w" = removexattr ] && { setfattr_outw "$SH_TMP/outside.txt"; setfattr_outw "$W/f"; }
	mark
	inw twall "$w" "$SH_TMP/outside.txt"
	check "$w outside the writable paths: refused" "$OUT" "err EPERM"
	expect "$w" ".hook == \"file\" and (.op | IN(\"${ops//,/\",\"}\")) and .target == \"$SH_TMP/outside.txt\"" \
		"not allowed"
	n=$((n + 1))
	inw twall "$w" "$W/f"
	check "twin: $w inside the work dir" "$OUT" ok
	outw "$w" "$SH_TMP/outside.txt"
	check "outside: $w works" "$OUT" ok
done
counted file "$c0" "$n"
inw twall utimens "$SH_TMP/secret"
check "utimens of a denied file: refused" "$OUT" "err EPERM"

# Privileges planted for outsiders: a set-user-ID (or set-group-ID) bit or
# file capabilities on a file a tree makes or changes would give any host
# user who runs it the file's owner (root) or the capabilities. Refused
# whatever the write rules, in the work dir too.
echo "-- planted privileges (${SECONDS}s)"
c0=$(counter deny_file)
cp /usr/bin/true "$W/su"
for pol in twall twallopen; do
	mark
	inw "$pol" setxattr "$W/su"
	check "$pol: file capabilities on a work-dir file: refused" "$OUT" "err EPERM"
	expect "$pol: setxattr security.capability" \
		".hook == \"file\" and .op == \"setxattr\" and .target == \"$W/su\"" "forbidden in a tree"
	for mode in 4755 2755 6755; do
		mark
		try_in_tree "$pol" chmod "$W/su" "$mode"
		check "$pol: chmod $mode in the work dir: refused" "$OUT" "err EPERM"
		expect "$pol: chmod $mode" \
			".hook == \"file\" and .op == \"chmod\" and .target == \"$W/su\" and .mode == \"0$mode\"" \
			"forbidden in a tree"
	done
	mark
	try_in_tree "$pol" creat-mode "$W/new-su-$pol" 4755
	check "$pol: a new file created set-user-ID: refused" "$OUT" "err EPERM"
	expect "$pol: create 4755" \
		".hook == \"file\" and .op == \"create\" and .target == \"$W/new-su-$pol\" and .mode == \"04755\"" \
		"forbidden in a tree"
	check "$pol: ... and not made" "$([ -e "$W/new-su-$pol" ] && echo made || echo none)" none
	try_in_tree "$pol" chmod "$W/su" 755
	check "$pol: twin: chmod 755" "$OUT" ok
	try_in_tree "$pol" creat-mode "$W/new-$pol" 755
	check "$pol: twin: a new file 0755" "$OUT" ok
	mkdir -p "$W/gdir-$pol"
	try_in_tree "$pol" chmod "$W/gdir-$pol" 2775
	check "$pol: twin: set-group-ID on a directory (hands its group down)" "$OUT" ok
	inw "$pol" setacl "$W/su"
	check "$pol: twin: another xattr (an ACL)" "$OUT" ok
done
counted file "$c0" 10
# A set-user-ID file an outsider left where the tree writes: the tree's
# write lands and the kernel clears the bit, as for any unprivileged
# writer (a tree has no CAP_FSETID); root outside keeps it.
cp /usr/bin/true "$W/suid-out" && chmod 4755 "$W/suid-out"
mark
$CTL run --policy twall -- /usr/bin/bash -c "echo >>$W/suid-out"
check "a tree's write to a set-user-ID file lands" "$?" 0
check "  ... and the kernel clears its bit" "$(stat -c %a "$W/suid-out")" 755
expect "write to a set-user-ID file" '.hook == "capability" and .target == "CAP_FSETID"' "forbidden in a tree"
chmod 4755 "$W/suid-out" && echo >>"$W/suid-out"
check "outside: root's write keeps the bit" "$(stat -c %a "$W/suid-out")" 4755
rm -f "$W/suid-out"
check "the file has neither bit nor capabilities" \
	"$(( 0$(stat -c %a "$W/su") & 06000 )) $(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]).count("security.capability"))' "$W/su")" "0 0"
try_outside chmod "$W/su" 4755
check "outside: chmod 4755 works" "$OUT $(stat -c %a "$W/su")" "ok 4755"
outw setxattr "$W/su"
check "outside: file capabilities can be set" "$OUT" ok
rm -f "$W/su" "$W"/new-*

# ---- 7. capabilities that change the whole host ----------------------------
echo "-- capabilities (${SECONDS}s)"
c0=$(counter deny_capability)
n=0
for c in sethostname:CAP_SYS_ADMIN settime:CAP_SYS_TIME reboot:CAP_SYS_BOOT \
	"mknod $W/null:CAP_MKNOD" iopl:CAP_SYS_RAWIO netadmin:CAP_NET_ADMIN rlimit:CAP_SYS_RESOURCE; do
	w=${c%%:*} capn=${c#*:}
	mark
	# shellcheck disable=SC2086 # w holds the operation and its argument
	inw twallopen cap $w
	check "$w in the tree: refused" "$OUT" "err EPERM"
	expect "$w" ".hook == \"capability\" and .target == \"$capn\"" "forbidden in a tree"
	n=$((n + 1))
	rm -f "$W/null"
	# shellcheck disable=SC2086
	outw cap $w
	check "outside: $w works" "$OUT" ok
	rm -f "$W/null"
done
mark
inw twallopen mmap-low
check "mmap below vm.mmap_min_addr: refused" "$OUT" "err EPERM"
expect "mmap-low" '.hook == "capability" and .target == "CAP_SYS_RAWIO"' "forbidden in a tree"
n=$((n + 1))
outw mmap-low
check "outside: root maps the low page" "$OUT" ok
counted capability "$c0" "$n"
inw twallcap cap settime
check "capability = sys_time allows the clock back" "$OUT" ok
inw twallcap cap sethostname
check "  ... and nothing else" "$OUT" "err EPERM"
printf '[policy]\nname = x\n[limits]\ncapability = sys_frobnicate\ncapability = chown\n' >"$SH_TMP/bad.policy"
$CTL policy check "$SH_TMP/bad.policy" >/dev/null 2>"$SH_TMP/check.err"
check "policy check: unknown and default capabilities are errors" \
	"$(grep -c "bad.policy:[45]: " "$SH_TMP/check.err")" 2

# What the kernel does in a tree's task with credentials of its own
# choosing is not the tree's use of a capability: overlayfs copies a lower
# file up as the mount's owner (its trusted.overlay xattrs ask for
# CAP_SYS_ADMIN), after checking the tree's own credentials against the
# overlay's file. A change through a container's root file system works;
# the tree's own use of the same capability there is still refused. A task
# that has used io_uring, and an io_uring worker, are judged on whatever
# credentials are in force (a ring's registered ones, or the task's own
# from before a change): their copy-up is refused.
echo "-- capabilities the kernel uses for a mount's owner (${SECONDS}s)"
OV=$SH_TMP/ov
# A fresh lower directory for each case: the file and its directory are
# copied up together.
for d in d1 d2 d3 d4 d5 d6 d7; do mkdir -p "$OV/lower/$d" && echo lower >"$OV/lower/$d/file"; done
echo x >"$OV/lower/d5/sgid" && chgrp 12 "$OV/lower/d5/sgid" && chmod 2755 "$OV/lower/d5/sgid"
mkdir -p "$OV/upper" "$OV/work" "$OV/m"
mount -t overlay overlay -o "lowerdir=$OV/lower,upperdir=$OV/upper,workdir=$OV/work" "$OV/m"
c0=$(counter deny_capability)
try_in_tree twallopen open "$OV/m/d1/file" w
check "overlayfs: a lower file opened for writing (copied up)" "$OUT $(ls "$OV/upper/d1" | tr '\n' ' ')" \
	"ok file "
try_in_tree twallopen mkdir "$OV/m/d1/new"
check "overlayfs: a directory made there" "$OUT $(ls -d "$OV/upper/d1/new")" "ok $OV/upper/d1/new"
counted capability "$c0" 0
mark
inw twallopen setxattr-trusted "$OV/m/d1/file"
check "overlayfs: the tree's own trusted xattr there: refused" "$OUT" "err EPERM"
expect "trusted xattr" '.hook == "capability" and .target == "CAP_SYS_ADMIN"' "forbidden in a tree"
outw setxattr-trusted "$OV/m/d1/file"
check "outside: the same xattr is set" "$OUT" ok
# A name outside the kernel's namespaces: ntfs3 keeps "$LXMOD", "$LXUID"
# and "$LXGID" as a file's mode and owner when it reads the inode again (a
# mode no chmod judged). Refused before the file system is asked; outside,
# tmpfs's own answer: no such namespace.
XF=$SH_TMP/xattr-file
: >"$XF"
mark
inw twallopen setxattr-named "$XF" '$LXMOD'
check "an attribute outside the kernel's namespaces (\$LXMOD): refused" "$OUT" "err EPERM"
expect "\$LXMOD" ".op == \"setxattr\" and .target == \"$XF\"" "forbidden in a tree"
outw setxattr-named "$XF" '$LXMOD'
check "outside: the file system's own answer" "$OUT" "err EOPNOTSUPP"
mark
inw twallopen removexattr-named "$XF" '$LXMOD'
check "  ... its removal: refused" "$OUT" "err EPERM"
expect "\$LXMOD removed" ".op == \"removexattr\" and .target == \"$XF\"" "forbidden in a tree"
outw removexattr-named "$XF" '$LXMOD'
check "  ... its twin: outside, the file system's own answer" "$OUT" "err EOPNOTSUPP"
# Twin: a user. attribute of the same file gets what it gets outside
# (set on 6.12; 6.1's tmpfs has no user. attributes: EOPNOTSUPP).
outw setxattr-named "$XF" user.sharness-out
want=$OUT
inw twallopen setxattr-named "$XF" user.sharness
check "  ... twin: a user. attribute of the same file, as outside" "$OUT" "$want"
check_match "  ... which the file system answered" "$OUT" '^(ok|err EOPNOTSUPP)$'
# copied DIR WHO ESCAPE-ARGS...: the copy-up refused, its file not made.
copied() {
	local d=$1 who=$2
	shift 2
	mark
	run_in_tree twallopen "$SH_BUILD/tests/vm/escape" "$@"
	check "overlayfs: a copy-up by $who: refused" "$OUT $(ls "$OV/upper/$d" 2>/dev/null | grep -c file)" \
		"err EPERM 0"
	expect "copy-up by $who" '.hook == "capability" and .target == "CAP_SYS_ADMIN"' \
		"forbidden in a tree"
}
copied d2 "an io_uring worker" uring async open "$OV/m/d2/file" w
copied d3 "a task that has used io_uring" after-uring write "$OV/m/d3/file"
run_outside "$SH_BUILD/tests/vm/escape" uring async open "$OV/m/d4/file" w
check "outside: the same through io_uring" "$OUT $(ls "$OV/upper/d4")" "ok file"
# A policy with [file] rules on the overlay's paths (a container's, say):
# the tree's own opens are judged by the overlay's path; overlayfs's opens
# of its layers' files (private mounts no namespace holds) and the
# attributes and times it sets in a copy-up, with its owner's credentials,
# are not the tree's. Writing the overlay's file copies it up; its twin
# outside the write rules is refused by the overlay's path, and a file of
# a deny rule stays unread.
mark
try_in_tree twallov open "$OV/m/d5/file" w
check "overlayfs under write rules: a lower file opened for writing (copied up)" \
	"$OUT $(ls "$OV/upper/d5" 2>&1 | tr '\n' ' ')" "ok file "
try_in_tree twallov open "$OV/m/d5/file" r
check "  ... read back (the deny rule makes reads judged)" "$OUT" ok
try_in_tree twallov open "$OV/m/d7/file" w
check "  ... its twin outside the write rules: refused, not copied up" \
	"$OUT $(ls "$OV/upper/d7" 2>/dev/null | grep -c file)" "err EPERM 0"
expect "  ... named by the overlay's path" ".policy == \"twallov\" and .target == \"$OV/m/d7/file\"" \
	"not allowed"
try_in_tree twallov open "$OV/m/d6/file" r
check "  ... a file of a deny rule there: refused" "$OUT" "err EPERM"
check "  ... no refusal but those two" \
	"$(audit_select '.policy == "twallov"' "$((LOGMARK + 1))" | grep -c '"event":"violation"')" 2
# Its copy of a set-group-ID file: CAP_FSETID, asked under the overlay
# owner's credentials, is refused and recorded; the copy keeps its bit.
try_in_tree twallov open "$OV/m/d5/sgid" append
check "  ... a set-group-ID file copied up keeps its bit" "$OUT $(stat -c %A "$OV/upper/d5/sgid")" \
	"ok -rwxr-sr-x"
expect "  ... CAP_FSETID asked under the owner's credentials" \
	'.policy == "twallov" and .target == "CAP_FSETID"' "forbidden in a tree"
# A task that has used io_uring is judged on whatever credentials are in
# force (its copy-up is refused, above), but overlayfs's opens of its
# layers' files are not its own (6.12 opens the upper file at every open):
# the file copied up is written.
run_in_tree twallov "$SH_BUILD/tests/vm/escape" after-uring write "$OV/m/d5/file"
check "  ... the copied-up file written by a task that has used io_uring" "$OUT" ok
# The tree's own attributes of the overlay's file are judged at the
# overlay's dentry, before overlayfs sets anything below: file
# capabilities refused whatever the write rules; its twin, the times,
# set below by overlayfs with its owner's credentials.
mark
inw twallov setxattr "$OV/m/d5/file"
check "  ... file capabilities on the overlay's file: refused" "$OUT" "err EPERM"
expect "  ... at the overlay's path" ".op == \"setxattr\" and .target == \"$OV/m/d5/file\"" \
	"forbidden in a tree"
run_in_tree twallov /usr/bin/touch -d 2001-02-03 "$OV/m/d5/file"
check "  ... its twin: the times set, in the upper file" "$RC $(date -r "$OV/upper/d5/file" +%F)" "0 2001-02-03"
umount "$OV/m"
# The daemon's own files in a layer of a host's overlay: what overlayfs
# opens below with its owner's credentials is not judged by the rules, but
# the file's own marks hold there. The audit log's directory as a lower
# layer under a write rule: its log neither copied up nor read; a file of
# the other lower layer copied up beside it (control).
L=$SH_TMP/ovl
mkdir -p "$L/lower" "$L/upper" "$L/work" "$L/m" && echo lower >"$L/lower/plain"
mount -t overlay overlay -o "lowerdir=$L/lower:$(dirname "$AUDIT"),upperdir=$L/upper,workdir=$L/work" "$L/m"
mark
try_in_tree twallov open "$L/m/plain" w
check "  ... a file beside the daemon's log in a host's overlay: copied up (control)" \
	"$OUT $(ls "$L/upper" | tr '\n' ' ')" "ok plain "
try_in_tree twallov open "$L/m/${AUDIT##*/}" append
check "  ... the daemon's audit log in a lower layer: not copied up" \
	"$OUT $(ls "$L/upper" | tr '\n' ' ')" "err EPERM plain "
expect "  ... its copy-up" '.policy == "twallov" and .hook == "file"' "sharnessd is protected"
c0=$(counter deny_file)
try_in_tree twallov open "$L/m/${AUDIT##*/}" r
check "  ... nor read" "$OUT" "err EPERM"
counted file "$c0" 1
# The same object by the other ways to an open: io_uring's openat, in the
# task and in a kernel worker, and a descriptor with no open of its own
# (O_PATH) opened again through /proc/self/fd; the file beside it read
# each way (control).
echo go >"$SH_TMP/go.line"
c0=$(counter deny_file)
mark
for how in inline async; do
	run_in_tree twallov "$SH_BUILD/tests/vm/escape" uring $how open "$L/m/${AUDIT##*/}" r
	check "  ... nor read through io_uring ($how)" "$OUT" "err EPERM"
	run_in_tree twallov "$SH_BUILD/tests/vm/escape" uring $how open "$L/m/plain" r
	check "  ... the file beside it read through io_uring ($how)" "$OUT" ok
done
ro=()
for f in "${AUDIT##*/}" plain; do
	$CTL run --policy twallov -- "$WALL" opath-reopen "$L/m/$f" "$SH_TMP/go.line" >"$SH_TMP/reopen.out" 2>&1
	ro+=("$(sed -n 2p "$SH_TMP/reopen.out")")
done
check "  ... nor opened again through /proc/self/fd from O_PATH; the file beside it is" \
	"${ro[*]}" "err EPERM ok"
# (6.12 names the layer's file from the overlay's private mount: the
# name's end is matched.)
lf=".policy == \"twallov\" and .hook == \"file\" and (.target | endswith(\"/${AUDIT##*/}\"))"
expect "  ... each way" "$lf" "sharnessd is protected"
check "  ... each way recorded" "$(audit_select "$lf" "$((LOGMARK + 1))" | wc -l)" 3
counted file "$c0" 3
umount "$L/m"
# 6.1 opens a layer's file under the overlay's path: its directories are
# judged through the names its inode has in the dentry cache, 1,024 at
# most. A file with 400 names (a busybox image's) is read; one with 1,025,
# refused there as unresolved (6.12 opens it by its own path: read).
echo many >"$L/lower/many"
python3 - "$L/lower" <<'PY'
import os, sys
d = sys.argv[1]
for base, n in (("plain", 400), ("many", 1025)):
    for i in range(2, n + 1):
        os.link("%s/%s" % (d, base), "%s/%s.%d" % (d, base, i))
        os.stat("%s/%s.%d" % (d, base, i))
PY
mkdir -p "$L/empty" && mount -t overlay overlay -o "lowerdir=$L/empty:$L/lower" "$L/m"
mark
try_in_tree twallov open "$L/m/plain.400" r
check "  ... a layer's file with 400 names, read through the overlay" "$OUT" ok
try_in_tree twallov open "$L/m/many" r
KVER=$(uname -r)
if [ "$(printf '%s\n' 6.6 "$KVER" | sort -V | head -1)" != 6.6 ]; then   # before backing files
	check "  ... one with 1,025: refused on $KVER" "$OUT" "err EPERM"
	expect "  ... as unresolved" ".target == \"$L/m/many\" and .path_error == -31" "path unresolved"
else
	check "  ... one with 1,025: read on $KVER (opened by its own path)" "$OUT" ok
fi
umount "$L/m"
find "$L/lower" -name 'plain.*' -delete -o -name 'many*' -delete

# ---- 8. kernel interfaces that run code outside the tree -------------------
echo "-- kernel knobs (${SECONDS}s)"
c0=$(counter deny_file)
n=0
knobs=(/proc/sysrq-trigger "/proc/$VICTIM/oom_score_adj" "/proc/$VICTIM/comm"
	/sys/kernel/tracing/trace_marker)
[ -e /sys/kernel/uevent_helper ] && knobs+=(/sys/kernel/uevent_helper)
[ -e /sys/kernel/mm/ksm/run ] && knobs+=(/sys/kernel/mm/ksm/run)
[ -e /sys/kernel/debug ] && mountpoint -q /sys/kernel/debug && knobs+=(/sys/kernel/debug)
for k in "${knobs[@]}"; do
	mark
	if [ -d "$k" ]; then
		r=$($CTL run --policy twallopen -- "$TRY" mkdir "$k/sharness" 2>/dev/null | head -1)
	else
		r=$($CTL run --policy twallopen -- "$TRY" open "$k" w 2>/dev/null | head -1)
	fi
	check "write $k, no file rules: refused" "$r" "err EPERM"
	expect "$k" ".hook == \"file\" and (.target | startswith(\"$k\"))" "forbidden in a tree"
	n=$((n + 1))
done
counted file "$c0" "$n"
r=$($CTL run --policy twallopen -- /usr/bin/bash -c "echo 0 >/proc/\$\$/oom_score_adj && echo sh >/proc/self/comm && echo ok" 2>/dev/null)
check "twin: a tree writes its own /proc files" "$r" ok
check "outside: trace_marker is writable" "$("$TRY" open /sys/kernel/tracing/trace_marker w | head -1)" ok

# ---- 9. watches and messages to host processes ----------------------------
echo "-- watches and netlink messages (${SECONDS}s)"
# A watch tells the tree when host programs read or change a file: judged
# as a write. The object the kernel resolved decides (a link is followed).
mkdir -p "$W/sealed" "$W/open"
echo k >"$W/sealed/key"
echo s >"$SH_TMP/secret"
ln -sfn "$SH_TMP/secret" "$W/to-secret"
c0=$(counter deny_file)
inw twall watch "$W/open" inotify
check "inotify watch on the tree's own directory" "$OUT" ok
inw twall watch "$W/open" dnotify
check "dnotify on the tree's own directory" "$OUT" ok
n=0
for c in "$SH_TMP/secret inotify:deny rule" "$SH_TMP/secret fanotify:deny rule" \
	"$W/to-secret inotify:deny rule" "/etc/passwd inotify:not allowed" \
	"$W/sealed dnotify:deny rule" "$W/sealed inotify:deny rule"; do
	mark
	inw twall watch ${c%%:*}
	check "watch ${c%%:*}: refused" "$OUT" "err EPERM"
	expect "watch ${c%%:*}" '.hook == "file" and .op == "watch"' "${c#*:}"
	case $c in "$W/to-secret"*)
		check "  ... the link's record names the file it leads to" "$(field target "$EV")" \
			"$SH_TMP/secret" ;;
	esac
	n=$((n + 1))
done
counted file "$c0" "$n"
# With no file rules at all, the wall alone: the daemon's files and bpffs.
inw twallopen watch /etc/passwd inotify
check "twallopen: a watch on a host file" "$OUT" ok
inw twallopen watch /dev/null inotify
check "twallopen: a watch on /dev/null (a default device)" "$OUT" ok
for p in "$(dirname "$AUDIT")" /sys/fs/bpf /dev/kmsg; do
	mark
	inw twallopen watch "$p" inotify
	check "twallopen: watch on $p: refused" "$OUT" "err EPERM"
	expect "watch on $p" '.op == "watch"' \
		"$(case $p in /sys/fs/bpf | /dev/kmsg) echo "forbidden in a tree" ;; *) echo "sharnessd is protected" ;; esac)"
done
outw watch "$SH_TMP/secret" inotify
check "outside: the same watch works" "$OUT" ok
# NETLINK_USERSOCK: messages between processes, to anyone listening.
c0=$(counter deny_net)
mark
inw twallopen usersock-send new
check "a NETLINK_USERSOCK socket: refused" "$OUT" "err EPERM"
expect "usersock socket" '.hook == "net" and .op == "socket"' "outside the tree"
check "  ... its record names the kind" "$(field target "$EV")" "netlink raw 2"
mark
# (run hands a tree its standard input, output and error only: the socket
# goes in as standard input.)
$WALL with-usersock -- bash -c "$CTL run --policy twallopen -- $WALL usersock-send 0 <&9" \
	>"$SH_TMP/last.out" 2>/dev/null
first_line "$SH_TMP/last.out"
check "a message on a NETLINK_USERSOCK socket handed in: refused" "$OUT" \
	"err EPERM"
expect "usersock send" '.hook == "net" and .op == "netlink-send"' "outside the tree"
counted net "$c0" 2
run_outside "$WALL" with-usersock -- "$WALL" usersock-send 9
check "outside: the same message goes through" "$OUT" ok
run_in_tree twallopen ip -o link show lo
check "a tree's NETLINK_ROUTE request is answered" "$RC $(grep -c 'lo:' "$SH_TMP/last.out")" "0 1"

# A link a tree puts where the host shares the directory (sticky and
# world-writable, as /tmp): a host program following it would write where
# the tree pointed. The kernel's protected_symlinks lets it (the link is
# root's, as is the directory). Refused where it is made, renamed or linked
# in; the directory's mode is the host's too. A link made elsewhere, in a
# directory the tree then shares, is marked: no one outside follows it.
echo "-- links planted in shared directories (${SECONDS}s)"
ST=$SH_TMP/sticky
mkdir -p "$ST" "$SH_TMP/plain" "$SH_TMP/own" && chmod 1777 "$ST"
echo planted-target >"$SH_TMP/target"
ln -sfn "$SH_TMP/target" "$ST/host-made"
c0=$(counter deny_file)
n=0
run_in_tree twallopen bash -c "$TRY symlink $SH_TMP/target $SH_TMP/plain/stays && $TRY open $SH_TMP/plain/stays r"
check "a tree makes a link in a directory of its own, follows it" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok "
for c in "symlink $SH_TMP/target $ST/planted:symlink:planted" \
	"rename $SH_TMP/plain/stays $ST/moved:rename-to:moved" \
	"exchange $ST/host-made $SH_TMP/plain/stays:rename-to:host-made" \
	"link $SH_TMP/plain/stays $ST/hard:link-to:hard"; do
	IFS=: read -r call op name <<<"$c"
	mark
	try_in_tree twallopen $call
	check "$op of a link into the sticky directory: refused" "$OUT" "err EPERM"
	expect "$op into the sticky directory" ".op == \"$op\" and .target == \"$ST/$name\"" \
		"planted by a tree"
	n=$((n + 1))
done
check "  ... none of them is there" "$(ls "$ST" | tr '\n' ' ')" "host-made "
mark
try_in_tree twallopen chmod "$ST" 0777
check "chmod of the sticky directory: refused" "$OUT $(stat -c %a "$ST")" "err EPERM 1777"
expect "chmod of the sticky directory" ".op == \"chmod\" and .target == \"$ST\"" "forbidden in a tree"
n=$((n + 1))
# Its ACL, owner and flags are the host's too: an access ACL without
# "other" write would let the tree plant a link there, then restore it.
for c in "$WALL setacl:setacl,setxattr" "$TRY chown:chown" "$WALL chattr:setflags"; do
	cmd=${c%%:*} ops=${c#*:}
	args=()
	[ "$ops" = chown ] && args=(0 0)
	mark
	run_in_tree twallopen $cmd "$ST" "${args[@]}"
	check "${ops%%,*} of the sticky directory: refused" "$OUT $(stat -c %a "$ST")" "err EPERM 1777"
	expect "${ops%%,*} of the sticky directory" \
		"(.op | IN(\"${ops//,/\",\"}\")) and .target == \"$ST\"" "forbidden in a tree"
	run_in_tree twallopen $cmd "$SH_TMP/own" "${args[@]}"
	check "twin: ${ops%%,*} of a directory of its own" "$OUT" ok
	n=$((n + 1))
done
check "  ... no ACL on the sticky directory" \
	"$(python3 -c 'import os, sys; print(len([x for x in os.listxattr(sys.argv[1]) if "acl" in x]))' "$ST")" 0
# A directory the tree shares must be empty (tmpfs tells): a link it made
# there before would lose its mark with its inode (evicted, forgotten at a
# reboot). Made shared by the host instead, the tree's link in it is marked.
check "the tree's work directory is on tmpfs" "$(stat -f -c %T "$SH_TMP")" tmpfs
mkdir -p "$SH_TMP/later"
mark
run_in_tree twallopen bash -c "$TRY symlink $SH_TMP/target $SH_TMP/later/link; $TRY chmod $SH_TMP/later 1777; $TRY open $SH_TMP/later/link r"
check "a tree shares a directory it made a link in: refused" \
	"$(tr '\n' ' ' <"$SH_TMP/last.out")$(stat -c %a "$SH_TMP/later")" "ok err EPERM ok 755"
expect "sharing a directory that is not empty" ".op == \"chmod\" and .target == \"$SH_TMP/later\"" \
	"forbidden in a tree"
n=$((n + 1))
mark
inw twallopen fchmod "$SH_TMP/later" 1777
check "  ... the same through a descriptor (fchmod)" "$OUT $(stat -c %a "$SH_TMP/later")" "err EPERM 755"
expect "sharing by fchmod" ".op == \"chmod\" and .target == \"$SH_TMP/later\"" "forbidden in a tree"
n=$((n + 1))
run_in_tree twallopen bash -c "$TRY mkdir $SH_TMP/empty && $TRY chmod $SH_TMP/empty 1777"
check "twin: an empty directory of its own, shared" "$(tr '\n' ' ' <"$SH_TMP/last.out")$(stat -c %a "$SH_TMP/empty")" \
	"ok ok 1777"
chmod 1777 "$SH_TMP/later"
mark
try_outside open "$SH_TMP/later/link" r
check "the host shares it: outside, following the tree's link there: refused" "$OUT" "err EPERM"
expect "planted link" '.hook == "file" and .op == "follow" and .target == "link"' "planted by a tree"
mark
try_in_tree twallopen open "$SH_TMP/later/link" r
check "another tree: refused" "$OUT" "err EPERM"
expect "planted link, another tree" '.op == "follow" and .policy == "twallopen"' "planted by a tree"
counted file "$c0" "$((n + 2))"
try_outside open "$SH_TMP/plain/stays" r
check "outside: the tree's link in a directory of its own is followed" "$OUT" ok
try_outside open "$ST/host-made" r
check "outside: an outsider's link in the sticky directory is followed" "$OUT" ok
try_in_tree twallopen open "$ST/host-made" r
check "a tree follows the host's link there" "$OUT" ok
try_in_tree twallopen chmod "$SH_TMP/plain" 0750
check "twin: chmod of a directory of its own" "$OUT $(stat -c %a "$SH_TMP/plain")" "ok 750"
# Where emptiness cannot be told (ext4), no directory is made shared by
# chmod, empty or not; mkdir(2) with the mode (umask 0) makes one, empty.
# (GNU mkdir -m 1777 makes the directory, then chmods it.)
if [ "$BLK" = /dev/ram0 ] && mkfs.ext4 -q -F /dev/ram0 && mount -t ext4 /dev/ram0 "$EXT"; then
	mkdir -p "$EXT/d" "$EXT/e"
	mark
	run_in_tree twallopen bash -c "$TRY symlink $SH_TMP/target $EXT/d/link; $TRY chmod $EXT/d 1777; $TRY chmod $EXT/e 1777"
	check "ext4: sharing a directory by chmod, with a link in it or empty: refused" \
		"$(tr '\n' ' ' <"$SH_TMP/last.out")$(stat -c %a "$EXT/d" "$EXT/e" | tr '\n' ' ')" \
		"ok err EPERM err EPERM 755 755 "
	expect "ext4: sharing by chmod" ".op == \"chmod\" and .target == \"$EXT/e\"" "forbidden in a tree"
	run_in_tree twallopen python3 -c 'import os, sys; os.umask(0); os.mkdir(sys.argv[1], 0o1777)' "$EXT/made"
	check "  ... twin: one made shared by mkdir(2)" "$RC $(stat -c %a "$EXT/made")" "0 1777"
	umount "$EXT"
else
	fail "ext4 on a ram disk for the chmod test" "no ram disk or ext4"
fi

# ---- 10. the daemon's own door ----------------------------------------------
echo "-- the control socket (${SECONDS}s)"
c0=$(counter deny_connect)
mark
inw twallopen ctl-connect "$SOCK"
check "connect to sharnessd's socket, no connect rules: refused" "$OUT" "err EPERM"
expect "control socket" ".hook == \"connect\" and .target == \"$SOCK\"" "sharnessd is protected"
counted connect "$c0" 1
outw ctl-connect "$SOCK"
check "outside: the socket accepts" "$OUT" ok
# A socket bound by a service in a mount namespace of its own (a private
# /tmp): the same file, another mount object. Judged by the name its binder
# gave it, as before; not refused for the mount.
printf '[policy]\nname = twallconn\n[connect]\ndeny = /nonexistent/\n' >"$SH_TMP/policies/twallconn.policy"
$CTL policy reload >/dev/null
unshare -m --propagation private "$TRY" listen "$SH_TMP/peer.sock" >"$SH_TMP/peer.out" 2>&1 &
PEER=$!
wait_until grep -q ready "$SH_TMP/peer.out"
r=$($CTL run --policy twallconn -- "$TRY" connect "$SH_TMP/peer.sock" 2>/dev/null | head -1)
check "connect to a socket bound in another mount namespace (connect rules in force)" "$r" ok
kill $PEER 2>/dev/null

# Audit mode lets the connect through (and logs it): the daemon refuses.
$CTL run --policy twallaudit -- $CTL untag /sys/fs/cgroup/sharness >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
r=$?
check "a tree's request reaching the daemon: refused (exit 4 of the inner sharnessctl)" "$r" 4
check_match "  ... and says why" "$(cat "$SH_TMP/last.err")" "inside a tagged tree"
check_match "the daemon logged the refusal" "$(cat "$SH_TMP/daemon.err")" "refused a control request from pid"
check "outside: the same client is answered" "$($CTL status >/dev/null 2>&1; echo $?)" 0

# The daemon's own files, under a policy with no file rules at all.
c0=$(counter deny_file)
n=0
for t in "open $SH_TMP/policies/twall.policy w" "open $SH_TMP/policies/new.policy creat" \
	"open $AUDIT r" "open $AUDIT trunc" "unlink $SOCK" "open $(dirname "$SOCK")/x creat" \
	"rename $W/f $SOCK"; do
	mark
	# shellcheck disable=SC2086 # t holds the operation and its arguments
	r=$($CTL run --policy twallopen -- "$TRY" $t 2>/dev/null | head -1)
	check "$t: refused" "$r" "err EPERM"
	expect "$t" '.hook == "file"' "sharnessd is protected"
	n=$((n + 1))
done
counted file "$c0" "$n"
# Renaming a directory above them away, to put another in its place.
for t in "rename $SH_TMP/policies $SH_TMP/p2" "rename $SH_TMP $SH_TMP.x" \
	"rename $(dirname "$AUDIT") $SH_TMP/l2" "rmdir $(dirname "$SOCK")"; do
	mark
	# shellcheck disable=SC2086
	r=$($CTL run --policy twallopen -- "$TRY" $t 2>/dev/null | head -1)
	check "$t: refused" "$r" "err EPERM"
	expect "$t" '.hook == "file"' "sharnessd is protected"
done
check "the socket is still there and answers" "$($CTL status >/dev/null 2>&1; echo $?)" 0
check "twin: the same tree writes elsewhere" \
	"$($CTL run --policy twallopen -- "$TRY" open "$W/f" w 2>/dev/null | head -1)" ok

# The filter in front of those marks (prot_filter): armed, with no more
# bits set than inodes marked (fewer where two share a bit).
filter_state() {
	python3 - "$PIN" <<'PY'
import glob, json, subprocess, sys
gen = sorted(glob.glob(sys.argv[1] + "/gen-*"), key=lambda g: int(g.rsplit("-", 1)[1]))[-1]
def dump(name):
    return json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "pinned",
                                               gen + "/map_" + name]))
def num(e, f):
    if "formatted" in e:
        return int(e["formatted"][f])
    return int.from_bytes(bytes(int(b, 16) for b in e[f]), "little")
words = {num(e, "key"): num(e, "value") for e in dump("prot_filter")}
print("%x" % words.get(0, 0), sum(bin(v).count("1") for k, v in words.items() if k),
      len(dump("protected_inodes")))
PY
}
read -r armed bits marked < <(filter_state)
check "the protected-inode filter is armed" "$armed" 7368707266696c31
check "it holds a bit for the marked inodes, no more ($bits bits, $marked marked)" \
	"$([ "$bits" -ge 1 ] && [ "$bits" -le "$marked" ] && echo yes)" yes
# A rotation: the old log renamed beside the new one, which the daemon
# reopens (a new inode, added to the marks and the filter) on SIGHUP. A
# tree holds an O_PATH descriptor of the live log across it (O_PATH opens
# are not judged), to reopen it once the old inode has lost its own mark.
$CTL run --policy twall -- "$WALL" opath-reopen "$AUDIT" "$SH_TMP/go" >"$SH_TMP/reopen.out" 2>&1 &
rp=$!
wait_until grep -q '^ready' "$SH_TMP/reopen.out"
mv "$AUDIT" "$AUDIT.1"
kill -HUP "$DAEMON_PID"
reloaded() { jq -e 'select(.event == "reload")' "$AUDIT" >/dev/null 2>&1; }
wait_until reloaded
check "after SIGHUP: a new log, its reload record in it" "$?" 0
mark
echo go >"$SH_TMP/go"
wait $rp
check "O_PATH of the log held across its rotation, reopened via /proc/self/fd: refused" \
	"$(sed -n 2p "$SH_TMP/reopen.out")" "err EPERM"
expect "rotated log reopened" '.hook == "file" and .op == "open"' "sharnessd is protected"
mark
inw twall handle-read "$AUDIT.1"
check "open_by_handle_at of the rotated log: refused" "$OUT" "err EPERM"
expect "rotated log by handle" ".hook == \"file\" and .target == \"$AUDIT.1\"" "sharnessd is protected"
inw twall handle-read "$SH_TMP/policies/twall.policy"
check "twin: open_by_handle_at of a policy file (outside the log directory)" "$OUT" ok
for t in "open $AUDIT r" "open $AUDIT.1 r" "open $AUDIT.1 w" "link $AUDIT.1 $W/log-copy"; do
	mark
	# shellcheck disable=SC2086
	r=$($CTL run --policy twallopen -- "$TRY" $t 2>/dev/null | head -1)
	check "after rotation, $t: refused" "$r" "err EPERM"
	expect "after rotation, $t" '.hook == "file"' "sharnessd is protected"
done
check "twin: a daemon file outside the log directory (a policy) is read" \
	"$($CTL run --policy twallopen -- "$TRY" open "$SH_TMP/policies/twall.policy" r 2>/dev/null | head -1)" ok
read -r armed bits marked < <(filter_state)
check "after rotation: the filter armed, its bits no more than the marks ($bits, $marked)" \
	"$armed $([ "$bits" -ge 1 ] && [ "$bits" -le "$marked" ] && echo yes)" "7368707266696c31 yes"

# The files in the log's directory are marked by inode as well (protect.c),
# so that a name an outsider makes for one elsewhere (a backup by hard
# links) is refused like the file's own. A file that appears there later
# (the compressed copy logrotate writes after its SIGHUP) is marked when
# it appears (the daemon watches the directory); one that leaves the
# directory loses its mark, so marks do not outlive the files they were
# made for (an inode number is reused).
marked_ino() { # FILE: "yes" when protected_inodes holds its inode (number and device)
	python3 - "$PIN" "$(stat -c '%i %d' "$1")" <<'PY'
import glob, json, subprocess, sys
gen = sorted(glob.glob(sys.argv[1] + "/gen-*"), key=lambda g: int(g.rsplit("-", 1)[1]))[-1]
d = json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "pinned",
                                        gen + "/map_protected_inodes"]))
ino, st_dev = (int(x) for x in sys.argv[2].split())
# st_dev's encoding to the kernel's (major << 20 | minor)
dev = ((st_dev >> 8) & 0xfff) << 20 | (st_dev & 0xff) | ((st_dev >> 12) & 0xfff00)
def key(e):
    if "formatted" in e:
        return int(e["formatted"]["key"]["ino"]), int(e["formatted"]["key"]["dev"])
    b = bytes(int(x, 16) for x in e["key"])
    return int.from_bytes(b[:8], "little"), int.from_bytes(b[8:12], "little")
print("yes" if (ino, dev) in [key(e) for e in d] else "no")
PY
}
is_marked() { [ "$(marked_ino "$1")" = "$2" ]; }
rdo() { $CTL run --policy twallopen -- "$TRY" open "$1" r 2>/dev/null | head -1; }
B=$SH_TMP/backup
LOGDIR=$(dirname "$AUDIT")
mkdir -p "$B"
echo other >"$B/other"
ln "$AUDIT.1" "$B/audit.jsonl.1"
check "the rotated log is marked by inode" "$(marked_ino "$AUDIT.1")" yes
mark
check "a hard link an outsider made of the rotated log, elsewhere: refused" \
	"$(rdo "$B/audit.jsonl.1")" "err EPERM"
expect "rotated log's outside link" ".hook == \"file\" and .target == \"$B/audit.jsonl.1\"" \
	"sharnessd is protected"
check "twin: a file beside that link is read" "$(rdo "$B/other")" ok
# Other ways a tree reaches the same inode through that outside name: a
# file handle of it, and its twin of the file beside it.
inw twall handle-read "$B/audit.jsonl.1"
check "open_by_handle_at of the outside link: refused" "$OUT" "err EPERM"
inw twall handle-read "$B/other"
check "twin: open_by_handle_at of the file beside it" "$OUT" ok
gzip -c "$AUDIT.1" >"$LOGDIR/audit.jsonl.2.gz"
ln "$LOGDIR/audit.jsonl.2.gz" "$B/audit.jsonl.2.gz"
gz=$B/audit.jsonl.2.gz
wait_until is_marked "$gz" yes
check "a file that appears in the log's directory is marked by inode" "$(marked_ino "$gz")" yes
mark
check "a hard link of it made elsewhere: refused" "$(rdo "$B/audit.jsonl.2.gz")" "err EPERM"
expect "compressed log's outside link" ".hook == \"file\" and .target == \"$B/audit.jsonl.2.gz\"" \
	"sharnessd is protected"
rm "$LOGDIR/audit.jsonl.2.gz"
wait_until is_marked "$gz" no
check "a file that leaves the log's directory loses its mark" "$(marked_ino "$gz")" no
check "then its other name is read: marks follow the directory's files" \
	"$(rdo "$B/audit.jsonl.2.gz")" ok
read -r armed bits marked < <(filter_state)
check "after those: the filter armed, its bits no more than the marks ($bits, $marked)" \
	"$armed $([ "$bits" -ge 1 ] && [ "$bits" -le "$marked" ] && echo yes)" "7368707266696c31 yes"

# More files in the log's directory than the marks have room for: the
# daemon's own files come first, then the newest files there; the oldest
# keep the directory's mark alone, which the daemon says. The marks then
# fill the map (128). A policy added then is still marked: the marks no
# longer ours go before new ones are written, so a full map has room.
# (One process makes them: a touch per file cost 0.1 s under emulation.)
python3 - "$LOGDIR" <<'PY'
import os, sys, time
now = int(time.time())
for i in range(140):
    f = "%s/old.%d" % (sys.argv[1], i)
    with open(f, "w") as o:
        o.write("%d\n" % i)
    os.utime(f, (now - 1000 + i, now - 1000 + i))
PY
no_room() { grep -q "are refused to the trees by name only: the daemon's marks (128)" "$SH_TMP/daemon.err"; }
wait_until no_room
check "140 files in the log's directory: the daemon says some have no room" "$?" 0
wait_until is_marked "$LOGDIR/old.139" yes
check "the newest of them is marked" "$(marked_ino "$LOGDIR/old.139")" yes
check "the oldest is not" "$(marked_ino "$LOGDIR/old.0")" no
check "the oldest is refused all the same, by the directory's mark" "$(rdo "$LOGDIR/old.0")" "err EPERM"
# ... and through a host's overlay with the log's directory as a layer
# (6.1 opens it under the overlay's path: the mark of the file's own
# directory is judged all the same).
mount -t overlay overlay -o "lowerdir=$SH_TMP/ovl/lower:$LOGDIR" "$SH_TMP/ovl/m"
c0=$(counter deny_file)
mark
check "  ... and through a host's overlay" "$(rdo "$SH_TMP/ovl/m/old.0")" "err EPERM"
# (6.12 names the layer's file from its private mount: /old.0.)
expect "  ... its record" '.target | endswith("/old.0")' "sharnessd is protected"
check "  ... the other layer's file read through it (control)" "$(rdo "$SH_TMP/ovl/m/plain")" ok
counted file "$c0" 1
umount "$SH_TMP/ovl/m"
check "the rotated log, newer than those, keeps its mark" "$(marked_ino "$AUDIT.1")" yes
read -r _ _ marked < <(filter_state)
check "the marks fill the map" "$marked" 128
cp "$SH_TMP/policies/twallopen.policy" "$B/new.policy"
sed -i 's/^name = twallopen$/name = twallnew/' "$B/new.policy"
mv "$B/new.policy" "$SH_TMP/policies/twallnew.policy"
$CTL policy reload >/dev/null
check "then a policy added and reloaded: its file is marked by inode" \
	"$(marked_ino "$SH_TMP/policies/twallnew.policy")" yes
check "and the live log still is" "$(marked_ino "$AUDIT")" yes
check "and the rotated log" "$(marked_ino "$AUDIT.1")" yes
rm -f "$LOGDIR"/old.*

# The helper the file's records rest on: mark's count, across the rotation
# above, is the log's lines as wc counts them.
mark
check "mark counts the log's lines as wc does" "$LOGMARK" "$(wc -l <"$AUDIT")"

check_log_valid
exit 0
