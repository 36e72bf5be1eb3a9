#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A tree cannot take the wall down, even as root, and cannot run code
# without an exec. Every attempt below is made by root inside a tree (root
# is held like anyone else), refused with its audit event and counted, next
# to a control: the same call outside every tree succeeds (or, for module
# loading and pivot_root, fails for a reason of the kernel's own, with no
# event), or the allowed twin succeeds inside the tree.
#
# What each door is closed by, on both supported kernels:
#
#   bpf()                         lsm/bpf (every command, so BPF tokens too);
#                                 lsm/capable (CAP_BPF) for map creation
#   mount                         lsm/sb_mount
#   umount, pivot_root, fsopen    lsm/capable (CAP_SYS_ADMIN) before
#                                 sb_umount, sb_pivotroot, move_mount
#   unshare(CLONE_NEWUSER)        lsm/userns_create (6.1+)
#   chroot                        lsm/path_chroot
#   ptrace, process_vm_writev,    lsm/ptrace_access_check: the kernel asks
#   /proc/PID/mem, pidfd_getfd,   ptrace_may_access for each of these
#   /proc/PID/ns, /proc/PID/root
#   signals to sharnessd          lsm/task_kill, whatever [signal] scope says
#   init_module, finit_module     lsm/capable (CAP_SYS_MODULE), then
#                                 kernel_load_data, kernel_read_file
#   module autoload               lsm/kernel_module_request
#   cgroupfs and bpffs writes     lsm/file_open and the path hooks (any fs
#                                 with the cgroup2, cgroup or bpf magic)
#   clone3(CLONE_INTO_CGROUP)     lsm/task_alloc
#   ld.so PAYLOAD, LD_PRELOAD,    lsm/mmap_file: an executable mapping is
#   dlopen, mmap(PROT_EXEC)       judged like an exec ([exec] allow, or a lib
#                                 rule, by default /usr/lib/ /usr/lib64/
#                                 /usr/local/lib/)
#   mprotect(PROT_EXEC)           lsm/file_mprotect
#   memfd_create + fexecve,       lsm/bprm_check_security: a file with no
#   exec of a deleted file        link left (i_nlink == 0) is never executed
#   SCM_RIGHTS descriptors        lsm/file_receive: judged as if opened
#   io_uring (the task, io-wq     the same hooks: the workers are threads
#   workers, SQPOLL thread)       of the tree's process, in its cgroup
#
# Linux 6.1 and 6.12 both have every hook used here, and without the
# enforcer both let root do every one of these things. They differ only in
# how the hooks reach paths: on 6.1 bpf_d_path is not allowed in the path
# hooks, so their targets come from the enforcer's own dentry walk; the
# event targets asserted here are the same on both. And from 6.9 on,
# pidfd_open() opens its file through file_open (pidfs, named
# "anon_inode:[pidfd]"): on 6.12 the file rules see pidfds, on 6.1 not.
#
# Not closed (no LSM hook on either kernel): mount_setattr(2) and fspick(2)
# + fsconfig(FSCONFIG_CMD_RECONFIGURE) change the flags of existing mounts
# and superblocks; and anonymous memory made executable (a JIT) runs code
# no file holds, which is why policies do not allow interpreters.
. "$(dirname "$0")/lib.sh"

ESC=$SH_BUILD/tests/vm/escape
W=$SH_TMP/w                     # the tree's workspace: writable
A=$W/bin                        # an allowed exec directory inside it
OTHER=/sys/fs/cgroup/t_sidedoors_other
BPFDIR=/sys/fs/bpf/t_sidedoors
LOADER=/usr/lib64/ld-linux-x86-64.so.2
LIBZ=/usr/lib/x86_64-linux-gnu/libz.so.1
mkdir -p "$A" "$SH_TMP/mnt" "$SH_TMP/root" "$SH_TMP/new/old" "$OTHER"
cp /usr/bin/id "$W/payload"             # allowed as /usr/bin/id, not here
cp "$LIBZ" "$W/libz.so.1"               # a library outside /usr/lib/
cp /usr/bin/echo "$A/kept"
echo secret >"$SH_TMP/secret"
echo public >"$SH_TMP/public"
echo outside >"$SH_TMP/outside.txt"
printf 'not a module %.0s' $(seq 16) >"$SH_TMP/mod.ko"   # longer than an ELF header

cat >"$SH_TMP/policies/tsd.policy" <<P
[policy]
name = tsd
[exec]
allow = /usr/bin/bash
allow = /usr/bin/id
allow = /usr/bin/true
allow = $LOADER       # the dynamic loader itself, run as a program
allow = $SH_BUILD/tests/vm/
allow = $A/
[file]
write = $W/
write = /dev/null
deny = $SH_TMP/secret
[signal]
scope = any                     # signals anywhere, except to sharnessd
P
# The same without file rules: nothing but the doors themselves in the way.
sed -e 's/name = tsd/name = tsdopen/' -e '/^\[file\]/,/^deny/d' \
	"$SH_TMP/policies/tsd.policy" >"$SH_TMP/policies/tsdopen.policy"

LPIDS=
VPID=
cleanup_sd() {
	kill $LPIDS $VPID 2>/dev/null
	wait 2>/dev/null
	umount "$SH_TMP/mnt" 2>/dev/null
	rmdir "$OTHER" "$BPFDIR" /sys/fs/cgroup/t_sidedoors_new 2>/dev/null
	cleanup
}
trap cleanup_sd EXIT

# Audit records are looked for with bash alone: a grep or jq per check
# costs a noticeable fraction of a second under emulation.
#
# mark HOOK OP [TARGET]: what the next expect_ev looks for, among the log
# lines written from now on.
mark() {
	PATS=("\"hook\":\"$1\"" "\"op\":\"$2\"")
	[ $# -ge 3 ] && PATS+=("\"target\":\"$3\"")
	mark_now
}
mark_now() { local l; mapfile -t l <"$AUDIT"; BASE=${#l[@]}; }
# new_evs: the violation records matching PATS written since mark; sets EVN
# (their number) and EV (the last).
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
# expect_ev NAME [REASON]: exactly one such record; refused, errno EPERM, for
# REASON ("forbidden in a tree" unless given).
expect_ev() {
	# sharnessctl run returns after the daemon logged the run's events:
	# a short wait is enough.
	have_ev() { new_evs; [ "$EVN" -gt 0 ]; }
	wait_until have_ev
	check "$1: audit event (${PATS[*]})" "$EVN" 1
	# On a miss, what the log got instead.
	[ "$EVN" = "${3:-1}" ] || { mapfile -t -s "$BASE" l <"$AUDIT"; printf '   %s\n' "${l[@]}" | grep -F '"violation"'; }
	check "$1: event says deny, errno, reason" \
		"$(field action "$EV") $(field errno "$EV") $(field reason "$EV")" \
		"deny 1 ${2:-forbidden in a tree}"
}
# no_new_ev NAME: no such record since mark (call after settle).
no_new_ev() { new_evs; check "$1: no audit event" "$EVN" 0; }
# settle: one more refusal in a tree, waited for; whatever came before it
# has reached the log by then.
settle() {
	local p=("${PATS[@]}") b=$BASE
	mark bpf bpf
	$CTL run --policy tsd -- "$ESC" bpf-prog-next-id >/dev/null 2>&1
	wait_until have_ev
	PATS=("${p[@]}") BASE=$b
}

# check_counter HOOK WANT: the kernel's deny_HOOK counter; on a mismatch
# the hook's records are shown.
check_counter() {
	local got
	got=$(counter "deny_$1")
	check "kernel counter deny_$1${3:+ $3}" "$got" "$2"
	[ "$got" = "$2" ] || grep -F "\"hook\":\"$1\"" "$AUDIT" | grep -F '"event":"violation"' | tail -n 12
}

esc_in() { try_in_tree tsd "$ESC" "$@"; }
esc_out() { try_outside "$ESC" "$@"; }
# Replace try's path with escape's: try_in_tree runs $TRY, so call through it.
try_in_tree() {
	local pol=$1; shift
	if [ "$1" = "$ESC" ]; then
		$CTL run --policy "$pol" -- "$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	else
		$CTL run --policy "$pol" -- "$TRY" "$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	fi
	RC=$?
	first_line "$SH_TMP/last.out"
}
try_outside() {
	if [ "$1" = "$ESC" ]; then "$@"; else "$TRY" "$@"; fi >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	RC=$?
	first_line "$SH_TMP/last.out"
}
mounted() { grep -c " $1 " /proc/self/mounts; }

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"

# ---- bpf() ---------------------------------------------------------------
echo "-- bpf() (${SECONDS}s)"
c0=$(counter deny_bpf)
# With unprivileged bpf() off (Debian's default), 6.1 asks for CAP_BPF
# before the bpf hook when a map is created (no tree has it); 6.12 calls the
# bpf hook first. Either way one record says why.
case $(uname -r) in
6.1.*) mark capability capable CAP_BPF; nbpf=1 ;;
*) mark bpf bpf; nbpf=2 ;;
esac
esc_in bpf-map-create
check "bpf(BPF_MAP_CREATE) in the tree: refused" "$OUT" "err EPERM"
expect_ev "bpf(BPF_MAP_CREATE)"
check "bpf event: uid 0 (root is held)" "$(field uid "$EV")" 0
mark bpf bpf
esc_in bpf-prog-next-id
check "bpf(BPF_PROG_GET_NEXT_ID) in the tree: refused" "$OUT" "err EPERM"
expect_ev "bpf(BPF_PROG_GET_NEXT_ID)"
check "bpf event: request 11" "$(field request "$EV")" 11
check_counter bpf $((c0 + nbpf))
esc_out bpf-map-create
check "outside: bpf(BPF_MAP_CREATE) works" "$OUT" ok
esc_out bpf-prog-next-id
check "outside: bpf(BPF_PROG_GET_NEXT_ID) works" "$OUT" ok

# ---- mounts --------------------------------------------------------------
echo "-- mounts (${SECONDS}s)"
c0=$(counter deny_mount)
M=$SH_TMP/mnt
mark mount mount "$M"
esc_in mount-tmpfs "$M"
check "mount tmpfs in the tree: refused" "$OUT" "err EPERM"
expect_ev "mount"
check "mount: nothing mounted" "$(mounted "$M")" 0
# The new mount API, umount and pivot_root ask for CAP_SYS_ADMIN before
# their own hooks run: no tree has it.
mark capability capable CAP_SYS_ADMIN
esc_in fsmount-tmpfs "$M"
check "fsopen/fsmount/move_mount in the tree: refused" "$OUT" "err EPERM"
check "  ... at fsopen" "$(sed -n 2p "$SH_TMP/last.out")" "(fsopen: errno 1: Operation not permitted)"
expect_ev "fsopen"
check "move_mount: nothing mounted" "$(mounted "$M")" 0
esc_out fsmount-tmpfs "$M"
check "outside: fsmount + move_mount works" "$OUT $(mounted "$M")" "ok 1"
umount "$M"
esc_out mount-tmpfs "$M"
check "outside: mount tmpfs works" "$OUT $(mounted "$M")" "ok 1"
mark capability capable CAP_SYS_ADMIN
esc_in umount "$M"
check "umount in the tree: refused" "$OUT" "err EPERM"
expect_ev "umount"
check "umount: still mounted" "$(mounted "$M")" 1
esc_out umount "$M"
check "outside: umount works" "$OUT $(mounted "$M")" "ok 0"
mark capability capable CAP_SYS_ADMIN
esc_in pivot-root "$SH_TMP/new" "$SH_TMP/new/old"
check "pivot_root in the tree: refused" "$OUT" "err EPERM"
expect_ev "pivot_root"
# Outside, in a mount namespace of its own: the kernel's answer (new root
# is no mount point), not the enforcer's.
OUT=$(unshare -m "$ESC" pivot-root "$SH_TMP/new" "$SH_TMP/new/old" | head -1)
check "outside: pivot_root gets the kernel's EINVAL" "$OUT" "err EINVAL"
check_counter mount $((c0 + 1))

# ---- namespaces, chroot --------------------------------------------------
echo "-- namespaces, chroot (${SECONDS}s)"
c0=$(counter deny_namespace)
mark namespace userns
esc_in unshare-userns
check "unshare(CLONE_NEWUSER) in the tree: refused" "$OUT" "err EPERM"
expect_ev "unshare(CLONE_NEWUSER)"
check_counter namespace $((c0 + 1))
esc_out unshare-userns
check "outside: unshare(CLONE_NEWUSER) works" "$OUT" ok

c0=$(counter deny_chroot)
mark chroot chroot "$SH_TMP/root"
esc_in chroot "$SH_TMP/root"
check "chroot in the tree: refused" "$OUT" "err EPERM"
expect_ev "chroot"
check_counter chroot $((c0 + 1))
esc_out chroot "$SH_TMP/root"
check "outside: chroot works" "$OUT" ok

# ---- other processes' memory ---------------------------------------------
echo "-- other processes memory (${SECONDS}s)"
# The victim: outside every tree, holding the secret file open.
"$ESC" hold "$SH_TMP/secret" >"$SH_TMP/hold.out" 2>&1 &
VPID=$!
wait_until grep -q '^ready' "$SH_TMP/hold.out"
read -r _ _ VADDR VFD < <(grep '^ready' "$SH_TMP/hold.out")
check "victim outside the tree is ready" "$(grep -c "^ready $VPID " "$SH_TMP/hold.out")" 1
victim_buf() { # the victim prints its buffer on SIGUSR1
	local n
	n=$(wc -l <"$SH_TMP/hold.out")
	kill -USR1 "$VPID"
	more_lines() { [ "$(wc -l <"$SH_TMP/hold.out")" -gt "$n" ]; }
	wait_until more_lines
	tail -n 1 "$SH_TMP/hold.out"
}

c0=$(counter deny_ptrace)
mark ptrace ptrace "$VPID"
esc_in ptrace-attach "$VPID"
check "PTRACE_ATTACH to an outsider: refused" "$OUT" "err EPERM"
expect_ev "PTRACE_ATTACH" "outside the tree"
check "ptrace event: mode ATTACH|REALCREDS (18)" "$(field mode "$EV")" 18
mark ptrace ptrace "$VPID"
esc_in vm-write "$VPID" "$VADDR" owned
check "process_vm_writev into an outsider: refused" "$OUT" "err EPERM"
expect_ev "process_vm_writev" "outside the tree"
check "the victim's memory is untouched" "$(victim_buf)" clean
# Writing an outsider's /proc files is refused by the file rule for
# procfs before the kernel's own ptrace check (mode ATTACH|FSCREDS) runs.
mark file open "/proc/$VPID/mem"
try_in_tree tsdopen open "/proc/$VPID/mem" rw
check "open /proc/PID/mem of an outsider for writing: refused" "$OUT" "err EPERM"
expect_ev "/proc/PID/mem"
mark ptrace ptrace "$VPID"
try_in_tree tsdopen "$ESC" pidfd-getfd "$VPID" "$VFD"
check "pidfd_getfd of an outsider's descriptor: refused" "$OUT" "err EPERM"
expect_ev "pidfd_getfd" "outside the tree"
# A pidfd is no file a rule can name: a tree with file write rules opens one
# (pidfd_open, then signal 0 to itself through it).
OUT=$($CTL run --policy tsd -- /usr/bin/bash -c "exec $TRY pidfd-kill \$\$ 0" 2>/dev/null | head -1)
check "pidfd_open in a tree with file write rules works" "$OUT" ok
mark ptrace ptrace 1
try_in_tree tsd open /proc/1/ns/mnt r
check "open /proc/1/ns/mnt (for setns): refused" "$OUT" "err EACCES"
expect_ev "/proc/1/ns/mnt" "outside the tree"
mark ptrace ptrace 1
try_in_tree tsd open /proc/1/root/etc/hostname r
check "a path through /proc/1/root: refused" "$OUT" "err EACCES"
expect_ev "/proc/1/root" "outside the tree"
check_counter ptrace $((c0 + 5))

esc_in ptrace-child
check "ptrace of a child in the same tree works" "$OUT" ok
try_in_tree tsdopen open /proc/self/mem rw
check "/proc/self/mem in the tree works" "$OUT" ok
check_counter ptrace $((c0 + 5)) "(the tree's own add none)"

esc_out vm-write "$VPID" "$VADDR" owned
check "outside: process_vm_writev works" "$OUT" ok
check "outside: ... and lands" "$(victim_buf)" owned
esc_out ptrace-attach "$VPID"
check "outside: PTRACE_ATTACH works" "$OUT" ok
try_outside open "/proc/$VPID/mem" rw
check "outside: /proc/PID/mem for writing works" "$OUT" ok
esc_out pidfd-getfd "$VPID" "$VFD"
check "outside: pidfd_getfd works" "$OUT" ok
try_outside open /proc/1/ns/mnt r
check "outside: /proc/1/ns/mnt opens" "$OUT" ok

# ---- the kernel running code on the tree's behalf -------------------------
echo "-- the kernel running code on the trees behalf (${SECONDS}s)"
# core_pattern (and kernel.modprobe) name a program the kernel starts as
# root outside every tree: with "|PAYLOAD" a crash in the tree would run it.
# A tree may not write them, whatever its file rules (tsdopen has none).
PATS=('"target":"/proc/sys/kernel/core_pattern"')
mark_now
try_in_tree tsdopen open /proc/sys/kernel/core_pattern w
check "open /proc/sys/kernel/core_pattern for writing: refused" "$OUT" "err EPERM"
expect_ev "core_pattern"
PATS=('"target":"/proc/sys/kernel/modprobe"')
mark_now
try_in_tree tsdopen open /proc/sys/kernel/modprobe w
check "open /proc/sys/kernel/modprobe for writing: refused" "$OUT" "err EPERM"
expect_ev "kernel.modprobe"
try_outside open /proc/sys/kernel/core_pattern w
check "outside: core_pattern opens for writing" "$OUT" ok

# ---- sharnessd itself ----------------------------------------------------
echo "-- sharnessd itself (${SECONDS}s)"
c0=$(counter deny_signal)
mark signal kill "$DAEMON_PID"
try_in_tree tsd kill "$DAEMON_PID" 18
check "SIGCONT to sharnessd, scope = any: refused" "$OUT" "err EPERM"
expect_ev "SIGCONT to sharnessd" "sharnessd is protected"
mark signal kill "$DAEMON_PID"
try_in_tree tsd kill "$DAEMON_PID" 15
check "SIGTERM to sharnessd, scope = any: refused" "$OUT" "err EPERM"
expect_ev "SIGTERM to sharnessd" "sharnessd is protected"
check "SIGTERM event: signal 15" "$(field signal "$EV")" 15
kill -0 "$DAEMON_PID" 2>/dev/null
check "sharnessd still runs" "$?" 0
check_counter signal $((c0 + 2))
mark ptrace ptrace "$DAEMON_PID"
esc_in ptrace-attach "$DAEMON_PID"
check "PTRACE_ATTACH to sharnessd: refused" "$OUT" "err EPERM"
expect_ev "PTRACE_ATTACH to sharnessd" "sharnessd is protected"
try_in_tree tsd kill "$VPID" 18
check "scope = any: SIGCONT to another outsider is delivered" "$OUT" ok
try_outside kill "$DAEMON_PID" 18
check "outside: SIGCONT to sharnessd is delivered" "$OUT" ok

# ---- kernel modules ------------------------------------------------------
echo "-- kernel modules (${SECONDS}s)"
c0=$(counter deny_module)
# Loading a module asks for CAP_SYS_MODULE first: no tree has it.
mark capability capable CAP_SYS_MODULE
esc_in finit-module "$SH_TMP/mod.ko"
check "finit_module in the tree: refused" "$OUT" "err EPERM"
expect_ev "finit_module"
mark capability capable CAP_SYS_MODULE
esc_in init-module "$SH_TMP/mod.ko"
check "init_module in the tree: refused" "$OUT" "err EPERM"
expect_ev "init_module"
mark module module-request
esc_in socket-family 12          # a family no kernel registers: autoload asked
check "socket of an unknown family in the tree: the kernel's answer" "$OUT" "err EAFNOSUPPORT"
expect_ev "module autoload (request_module)"
check_counter module $((c0 + 1))
mark module module-load
esc_out finit-module "$SH_TMP/mod.ko"
check_match "outside: finit_module fails on its own (not EPERM)" "$OUT" '^err E[A-OQ-Z]'
esc_out init-module "$SH_TMP/mod.ko"
check_match "outside: init_module fails on its own (not EPERM)" "$OUT" '^err E[A-OQ-Z]'
settle
no_new_ev "outside: module loading"
check_counter module $((c0 + 1)) "(outsiders add none)"

# ---- cgroupfs and bpffs ---------------------------------------------------
echo "-- cgroupfs and bpffs (${SECONDS}s)"
c0=$(counter deny_cgroup)
PATS=('"hook":"cgroup"' '"op":"open"' '/pids.max"')
mark_now
$CTL run --policy tsd -- /usr/bin/bash -c \
	"read l </proc/self/cgroup; exec $TRY open /sys/fs/cgroup\${l#0::}/pids.max w" \
	>"$SH_TMP/last.out" 2>/dev/null
check "raising its own pids.max: refused" "$(head -1 "$SH_TMP/last.out")" "err EPERM"
expect_ev "own pids.max"
check_match "pids.max event names the run's cgroup" "$(field target "$EV")" \
	'^/sys/fs/cgroup/sharness/run-[0-9]+/pids.max$'
mark cgroup mkdir /sys/fs/cgroup/t_sidedoors_new
try_in_tree tsd mkdir /sys/fs/cgroup/t_sidedoors_new
check "mkdir in /sys/fs/cgroup: refused" "$OUT" "err EPERM"
expect_ev "cgroup mkdir"
mark cgroup mkdir "$BPFDIR"
try_in_tree tsd mkdir "$BPFDIR"
check "mkdir in /sys/fs/bpf: refused" "$OUT" "err EPERM"
expect_ev "bpffs mkdir"
PINF=$(find "$PIN" -mindepth 1 -maxdepth 4 -type f | head -1)
mark cgroup unlink "$PINF"
try_in_tree tsd unlink "${PINF:-$PIN/none}"
check "unlink of the enforcer's pinned state: refused" "$OUT" "err EPERM"
expect_ev "bpffs unlink"
check "the pinned file is still there" "$([ -n "$PINF" ] && [ -e "$PINF" ] && echo yes)" yes
# Read, a pinned map prints its contents (maps with BTF): the enforcer's
# tags, marks and the key its memo words are mixed with.
PINM=$(find "$PIN" -mindepth 1 -maxdepth 4 -type f -name 'map_*bss*' | head -1)
mark cgroup open "$PINM"
try_in_tree tsd open "${PINM:-$PIN/none}" r
check "read of the enforcer's pinned .bss map: refused" "$OUT" "err EPERM"
expect_ev "bpffs read"
try_outside open "${PINM:-$PIN/none}" r
check "outside: the pinned map opens for reading" "$OUT" ok
# The same map in a layer of a host's overlay (6.1 opens it under the
# overlay's path): the file's own file system decides.
mkdir -p "$SH_TMP/bov/empty" "$SH_TMP/bov/m"
mount -t overlay overlay -o "lowerdir=$SH_TMP/bov/empty:$(dirname "$PINM")" "$SH_TMP/bov/m"
check "a host's overlay with the pinned state as a layer" "$?" 0
try_outside open "$SH_TMP/bov/m/${PINM##*/}" r
check "outside: the pinned map opens for reading through it" "$OUT" ok
mark cgroup open   # (6.12 names the map from the overlay's private mount)
try_in_tree tsd open "$SH_TMP/bov/m/${PINM##*/}" r
check "read of the pinned map through the overlay: refused" "$OUT" "err EPERM"
expect_ev "bpffs read through an overlay"
check_match "  ... its record names the map" "$(field target "$EV")" "/${PINM##*/}\$"
umount "$SH_TMP/bov/m"
# What a restarted daemon judges before it resumes the programs (the
# build mark, the link pins on their hooks): a tree can neither take the
# mark away nor swap two link pins; outside, the operator can (and swaps
# them back).
G=$(ls -d "$PIN"/gen-* | sort -t- -k2 -n | tail -n 1)
mark cgroup rename-from "$G/build"
# (bpffs itself refuses names with a dot: the new name has none.)
try_in_tree tsd rename "$G/build" "$G/build_gone"
check "rename of the build mark: refused" "$OUT $([ -e "$G/build" ] && echo kept)" "err EPERM kept"
expect_ev "bpffs rename"
mark cgroup rename-from
try_in_tree tsd exchange "$G/link_sh_path_mkdir" "$G/link_sh_path_rmdir"
check "exchange of two link pins: refused" "$OUT" "err EPERM"
expect_ev "bpffs exchange"
try_outside exchange "$G/link_sh_path_mkdir" "$G/link_sh_path_rmdir"
check "outside: the link pins exchange" "$OUT" ok
try_outside exchange "$G/link_sh_path_mkdir" "$G/link_sh_path_rmdir"
check "outside: and back" "$OUT" ok
try_outside mkdir /sys/fs/cgroup/t_sidedoors_new
check "outside: mkdir in /sys/fs/cgroup works" "$OUT" ok
try_outside mkdir "$BPFDIR"
check "outside: mkdir in /sys/fs/bpf works" "$OUT" ok

mark cgroup open "$OTHER/cgroup.procs"
try_in_tree tsd open "$OTHER/cgroup.procs" w
check "open another cgroup's cgroup.procs for writing: refused" "$OUT" "err EPERM"
expect_ev "another cgroup.procs"

mark cgroup clone-into-cgroup
esc_in clone-into-cgroup "$OTHER"
check "clone3(CLONE_INTO_CGROUP) in the tree: refused" "$OUT" "err EPERM"
expect_ev "clone3(CLONE_INTO_CGROUP)"
esc_out clone-into-cgroup "$OTHER"
check "outside: clone3(CLONE_INTO_CGROUP) works" "$OUT" ok
check_counter cgroup $((c0 + 10))

# Moving itself into another cgroup the way a shell does; afterwards it is
# still held. (The shell's O_CREAT also reaches the create hook, which the
# kernel consults before it finds the file exists: a second record, op
# "create", for the same attempt.)
mark cgroup open "$OTHER/cgroup.procs"
$CTL run --policy tsd -- /usr/bin/bash -c "
	echo \$\$ >$OTHER/cgroup.procs && echo moved
	read l </proc/self/cgroup; echo \"\$l\"
	exec $TRY exec /usr/bin/whoami" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
check_match "echo \$\$ > OTHER/cgroup.procs: refused" "$(cat "$SH_TMP/last.err")" \
	"cgroup.procs: Operation not permitted"
expect_ev "echo \$\$ > another cgroup.procs"
check_match "still in its run's cgroup" "$(sed -n 1p "$SH_TMP/last.out")" '^0::/sharness/run-[0-9]+$'
check "still held: exec of a non-allowed binary refused" "$(sed -n 2p "$SH_TMP/last.out")" "err EPERM"
OUT=$(bash -c "echo \$\$ >$OTHER/cgroup.procs && read l </proc/self/cgroup && echo \"\$l\"")
check "outside: the same write moves the process" "$OUT" "0::/t_sidedoors_other"

# ---- code without an exec -------------------------------------------------
echo "-- code without an exec (${SECONDS}s)"
c0=$(counter deny_mmap)
try_in_tree tsd exec "$W/payload" -u
check "the payload copy itself cannot be executed" "$OUT" "err EPERM"

mark mmap mmap-exec "$W/payload"
$CTL run --policy tsd -- "$LOADER" "$W/payload" -u >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
check "ld.so PAYLOAD: the payload does not run" "$? $(cat "$SH_TMP/last.out")" "127 "
check_match "ld.so PAYLOAD: loader says it cannot map it" "$(cat "$SH_TMP/last.err")" \
	"payload: failed to map segment"
expect_ev "ld.so PAYLOAD" "not allowed"
check "ld.so event: prot READ|EXEC (5)" "$(field prot "$EV")" 5
OUT=$($CTL run --policy tsd -- "$LOADER" /usr/bin/id -u 2>/dev/null)
check "ld.so with an allowed program runs it in the tree" "$OUT" 0
OUT=$("$LOADER" "$W/payload" -u 2>/dev/null)
check "outside: ld.so PAYLOAD runs" "$OUT" 0

mark mmap mmap-exec "$W/libz.so.1"
$CTL run --policy tsd -- /usr/bin/bash -c "LD_PRELOAD=$W/libz.so.1 exec $ESC loaded libz" \
	>"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
check "LD_PRELOAD of a workspace library: not loaded" "$(head -1 "$SH_TMP/last.out")" no
check_match "LD_PRELOAD: the loader reports it" "$(cat "$SH_TMP/last.err")" "cannot be preloaded"
expect_ev "LD_PRELOAD" "not allowed"
OUT=$($CTL run --policy tsd -- /usr/bin/bash -c "LD_PRELOAD=$LIBZ exec $ESC loaded libz" 2>/dev/null)
check "LD_PRELOAD of the same library under /usr/lib/: loaded" "$OUT" yes
OUT=$(LD_PRELOAD=$W/libz.so.1 "$ESC" loaded libz 2>&1)
check "outside: LD_PRELOAD of the workspace copy: loaded" "$OUT" yes

mark mmap mmap-exec "$W/libz.so.1"
esc_in dlopen "$W/libz.so.1"
check "dlopen of a workspace library: refused" "$OUT" "err DLOPEN"
check_match "dlopen: cannot map it" "$(sed -n 2p "$SH_TMP/last.out")" "failed to map segment"
expect_ev "dlopen" "not allowed"
esc_in dlopen "$LIBZ"
check "dlopen of the library under /usr/lib/ works" "$OUT" ok
esc_out dlopen "$W/libz.so.1"
check "outside: dlopen of the workspace copy works" "$OUT" ok

mark mmap mmap-exec "$W/libz.so.1"
esc_in mmap-exec "$W/libz.so.1"
check "mmap(PROT_EXEC) of a workspace file: refused" "$OUT" "err EPERM"
expect_ev "mmap(PROT_EXEC)" "not allowed"
esc_in mmap-exec "$LIBZ"
check "mmap(PROT_EXEC) of a system library works" "$OUT" ok

mark mmap mprotect-exec "$W/libz.so.1"
esc_in mprotect-exec "$W/libz.so.1"
check "mprotect(PROT_EXEC) of a workspace mapping: refused" "$OUT" "err EPERM"
expect_ev "mprotect(PROT_EXEC)" "not allowed"
check "mprotect event: prot READ|EXEC (5)" "$(field prot "$EV")" 5
esc_in mprotect-exec "$LIBZ"
check "mprotect(PROT_EXEC) of a system library mapping works" "$OUT" ok
esc_out mprotect-exec "$W/libz.so.1"
check "outside: mprotect(PROT_EXEC) of the workspace copy works" "$OUT" ok

PATS=('"hook":"exec"' '"op":"exec"' '"target":"/memfd:sharness-test')
mark_now
esc_in memfd-exec /usr/bin/echo ran
check "memfd_create + fexecve: refused" "$OUT" "err EPERM"
expect_ev "memfd_create + fexecve" "deleted or in-memory file"
check_match "memfd event target" "$(field target "$EV")" '^/memfd:sharness-test'
esc_out memfd-exec /usr/bin/echo ran
check "outside: memfd_create + fexecve runs" "$OUT" ran

PATS=('"hook":"mmap"' '"op":"mmap-exec"' '"reason":"deleted or in-memory file"')
mark_now
esc_in memfd-mmap /usr/bin/true
check "mmap(PROT_EXEC) of a memfd: refused" "$OUT" "err EPERM"
expect_ev "memfd mmap(PROT_EXEC)" "deleted or in-memory file"
check_match "memfd mmap event names the memfd" "$(field target "$EV")" '^/memfd:sharness-test'
esc_out memfd-mmap /usr/bin/true
check "outside: mmap(PROT_EXEC) of a memfd works" "$OUT" ok

# Reopened through /proc/self/fd, the file has no name left: refused at the
# open (its path no longer names it), before the exec would refuse it.
mark file open "$A/gone (deleted)"
esc_in deleted-exec /usr/bin/echo "$A/gone" ran
check "exec of a deleted file via /proc/self/fd: refused" "$OUT" "err EPERM"
expect_ev "exec of a deleted file" "path unresolved"
check "  ... the record says why (ESTALE)" "$(field path_error "$EV")" -116
OUT=$($CTL run --policy tsd -- "$A/kept" ran 2>/dev/null)
check "the same file, not deleted, runs from the allowed dir" "$OUT" ran
esc_out deleted-exec /usr/bin/echo "$SH_TMP/gone" ran
check "outside: exec of a deleted file runs" "$OUT" ran
check_counter mmap $((c0 + 6))

# ---- io_uring ----------------------------------------------------------------
# The kernel runs a request in the task that submits it, in an io-wq
# worker (IOSQE_ASYNC, or when it would block) or in the ring's SQPOLL
# thread. The workers are threads of the tree's process, in its cgroup:
# the same hooks judge them, by the same rules. (Skipping io_uring's
# threads in membership() fails all three ways below, on 6.12 the first
# too: the kernel handed each of these requests to a worker.)
echo "-- io_uring (${SECONDS}s)"
for how in inline async sqpoll; do
	c0=$(counter deny_file)
	mark file open "$SH_TMP/secret"
	esc_in uring $how open "$SH_TMP/secret" r
	check "io_uring $how: open a denied file: refused" "$OUT" "err EPERM"
	expect_ev "io_uring $how: denied file" "deny rule"
	esc_in uring $how open "$SH_TMP/public" r
	check "io_uring $how: twin: an allowed file opens" \
		"$OUT $(sed -n 2p "$SH_TMP/last.out")" "ok public"
	mark file open "$SH_TMP/outside.txt"
	esc_in uring $how open "$SH_TMP/outside.txt" w
	check "io_uring $how: open for writing outside the work dir: refused" "$OUT" "err EPERM"
	expect_ev "io_uring $how: write outside" "not allowed"
	esc_in uring $how open "$W/uring-$how" creat
	check "io_uring $how: twin: create in the work dir" \
		"$OUT $([ -f "$W/uring-$how" ] && echo made)" "ok made"
	mark file mkdir "$SH_TMP/uring-$how"
	esc_in uring $how mkdir "$SH_TMP/uring-$how"
	check "io_uring $how: mkdir outside the work dir: refused" \
		"$OUT $([ -e "$SH_TMP/uring-$how" ] && echo made)" "err EPERM "
	expect_ev "io_uring $how: mkdir outside" "not allowed"
	esc_in uring $how unlink "$W/uring-$how"
	check "io_uring $how: twin: unlink in the work dir" \
		"$OUT $([ -e "$W/uring-$how" ] && echo left)" "ok "
	check_counter file $((c0 + 3)) "(io_uring $how)"
	esc_out uring $how open "$SH_TMP/secret" r
	check "io_uring $how: outside the tree, the denied file opens" \
		"$OUT $(sed -n 2p "$SH_TMP/last.out")" "ok secret"
done

# ---- descriptors passed in over SCM_RIGHTS ---------------------------------
echo "-- descriptors passed in over SCM_RIGHTS (${SECONDS}s)"
serve_fd "$SH_TMP/secret.sock" "$SH_TMP/secret" r
serve_fd "$SH_TMP/public.sock" "$SH_TMP/public" r
serve_fd "$SH_TMP/outw.sock" "$SH_TMP/outside.txt" w
serve_fd "$SH_TMP/procs.sock" "$OTHER/cgroup.procs" w
check "descriptor servers outside the tree are ready" "$(cat "$SH_TMP"/*.sock.out | grep -c '^ready$')" 4

c0=$(counter deny_file)
mark file receive "$SH_TMP/secret"
esc_in recv-fd "$SH_TMP/secret.sock"
check "a denied file's descriptor does not arrive" "$OUT" "err NOFD"
expect_ev "SCM_RIGHTS: denied file" "deny rule"
check "receive event: access read" "$(field access "$EV")" read
esc_in recv-fd "$SH_TMP/public.sock"
check "an allowed file's descriptor arrives" "$OUT $(sed -n 2p "$SH_TMP/last.out")" "ok public"
mark file receive "$SH_TMP/outside.txt"
esc_in recv-fd "$SH_TMP/outw.sock"
check "a writable descriptor outside the write rules does not arrive" "$OUT" "err NOFD"
expect_ev "SCM_RIGHTS: write outside the work dir" "not allowed"
check "receive event: access write" "$(field access "$EV")" write
check_counter file $((c0 + 2))
mark cgroup receive "$OTHER/cgroup.procs"
esc_in recv-fd "$SH_TMP/procs.sock"
check "a writable cgroup.procs descriptor does not arrive" "$OUT" "err NOFD"
expect_ev "SCM_RIGHTS: cgroup.procs"
esc_out recv-fd "$SH_TMP/secret.sock"
check "outside: the denied file's descriptor arrives" "$OUT $(sed -n 2p "$SH_TMP/last.out")" "ok secret"

# ---- descriptors the caller of run left open -------------------------------
# `run ... 3>>FILE` would hand the tree a file its rules refuse, opened by
# the operator's shell before the tree existed: no hook sees a write
# through it. run passes CMD standard input, output and error only.
echo "-- descriptors handed to run (${SECONDS}s)"
: >"$SH_TMP/handed"
$CTL run --policy tsd -- "$TRY" fdwrite 3 3>>"$SH_TMP/handed" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
check "run: a descriptor 3 the caller opened is not the tree's" "$(head -1 "$SH_TMP/last.out")" "err EBADF"
check "run: nothing was written through it" "$(wc -c <"$SH_TMP/handed")" 0
exec 7<>"$SH_TMP/handed"
$CTL run --policy tsd -- "$TRY" fdwrite 7 >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
exec 7>&-
check "run: nor an inherited descriptor 7" "$(head -1 "$SH_TMP/last.out")" "err EBADF"
$CTL run --policy tsd -- "$TRY" fdwrite 1 >"$SH_TMP/handed.out" 2>"$SH_TMP/last.err"
check "run: standard output is the tree's (the twin)" "$(cat "$SH_TMP/handed.out")" $'x\nok'
"$TRY" fdwrite 3 3>>"$SH_TMP/handed" >"$SH_TMP/last.out"
check "outside: descriptor 3 is written" "$(head -1 "$SH_TMP/last.out") $(cat "$SH_TMP/handed")" "ok x"

check_log_valid
stop_servers
kill $LPIDS $VPID 2>/dev/null
wait 2>/dev/null
LPIDS= VPID=
check "no process of the runs is left" \
	"$(cat /sys/fs/cgroup/sharness/run-*/cgroup.procs 2>/dev/null | wc -l)" 0
exit 0
