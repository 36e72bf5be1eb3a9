#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# File rules: writes only inside the work directory (every operation that
# changes something), deny rules refuse reads too, judged on the object the
# kernel resolved. The tree runs as root: root is held like anyone else.
. "$(dirname "$0")/lib.sh"

W=$SH_TMP/work            # the only writable place
O=$SH_TMP/outside         # readable, not writable
S=$SH_TMP/secret          # neither
mkdir -p "$W/sub" "$O/dir" "$S"
echo data >"$O/file"
echo data >"$O/victim"
echo key >"$S/key"
echo data >"$W/file"
ln -s "$O/file" "$W/link-out"

cat >"$SH_TMP/policies/tfile.policy" <<P
[policy]
name = tfile
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
allow = /usr/sbin/chroot
[file]
write = $W/
write = /dev/null
deny = $S/
P

# The same rules, logged and not enforced.
sed -e 's/^name = tfile$/name = tfileaudit\nmode = audit/' "$SH_TMP/policies/tfile.policy" \
	>"$SH_TMP/policies/tfileaudit.policy"

start_daemon || { fail "daemon starts"; exit 1; }

# in NAME OP ARGS... -> the try verdict inside a tree of policy tfile
deny_case() {
	local name=$1 want_op=$2 want_target=$3; shift 3
	try_in_tree tfile "$@"
	check "$name: refused" "$OUT" "err EPERM"
	if [ -n "$want_target" ]; then
		local n
		n=$(audit_wait ".hook==\"file\" and .op==\"$want_op\" and .target==\"$want_target\"")
		check "$name: audit op=$want_op target" "$([ "$n" -ge 1 ] && echo yes)" yes
	fi
}
allow_case() {
	local name=$1; shift
	try_in_tree tfile "$@"
	check "$name: allowed twin" "$OUT" "ok"
}

# open for writing, create, truncate
deny_case "open O_WRONLY outside" open "$O/file" open "$O/file" w
allow_case "open O_WRONLY inside" open "$W/file" w
deny_case "create outside" create "$O/new" open "$O/new" creat
check "create outside left no file" "$([ -e "$O/new" ] && echo yes || echo no)" no
allow_case "create inside" open "$W/new" creat
deny_case "O_TRUNC outside" open "$O/file" open "$O/file" trunc
check "O_TRUNC outside left the data" "$(cat "$O/file")" data
allow_case "read outside" open "$O/file" r
deny_case "truncate(2) outside" truncate "$O/file" truncate "$O/file"
allow_case "truncate(2) inside" truncate "$W/file"
deny_case "append outside" open "$O/file" open "$O/file" append

# deny rules: neither read nor write
deny_case "read a denied file" open "$S/key" open "$S/key" r
ev=$(audit_last ".target==\"$S/key\"")
check "denied read: access" "$(field access "$ev")" read
check "denied read: reason" "$(field reason "$ev")" "deny rule"

# every name-space change
deny_case "unlink outside" unlink "$O/victim" unlink "$O/victim"
check "unlink outside: file still there" "$(cat "$O/victim")" data
echo x >"$W/gone"
allow_case "unlink inside" unlink "$W/gone"
deny_case "mkdir outside" mkdir "$O/newdir" mkdir "$O/newdir"
allow_case "mkdir inside" mkdir "$W/newdir"
deny_case "rmdir outside" rmdir "$O/dir" rmdir "$O/dir"
allow_case "rmdir inside" rmdir "$W/newdir"
echo x >"$W/mv"
deny_case "rename inside -> outside" rename-to "$O/mv" rename "$W/mv" "$O/mv"
deny_case "rename outside -> inside" rename-from "$O/victim" rename "$O/victim" "$W/stolen"
allow_case "rename inside -> inside" rename "$W/mv" "$W/mv2"
deny_case "link outside file into work dir" link-from "$O/file" link "$O/file" "$W/hard"
deny_case "link into outside" link-to "$O/hard" link "$W/mv2" "$O/hard"
allow_case "link inside" link "$W/mv2" "$W/hard2"
deny_case "symlink outside" symlink "$O/sym" symlink /etc/passwd "$O/sym"
allow_case "symlink inside" symlink /etc/passwd "$W/sym"
deny_case "mknod outside" create "$O/fifo" mknod "$O/fifo"
allow_case "mknod inside" mknod "$W/fifo"
deny_case "chmod outside" chmod "$O/file" chmod "$O/file" 600
allow_case "chmod inside" chmod "$W/file" 600
deny_case "chown outside" chown "$O/file" chown "$O/file" 0 0
allow_case "chown inside" chown "$W/file" 0 0
allow_case "write /dev/null (file rule)" open /dev/null w

# Bypasses: the string passed is not what is judged.
deny_case "symlink in work dir pointing outside" open "$O/file" open "$W/link-out" w
OUT=$(cd "$W" && $CTL run --policy tfile -- "$TRY" open ../outside/file w 2>/dev/null | head -1)
check "relative path with '..': refused" "$OUT" "err EPERM"
OUT=$(cd "$W" && $CTL run --policy tfile -- "$TRY" open /proc/self/cwd/../outside/file w 2>/dev/null | head -1)
check "/proc/self/cwd path: refused" "$OUT" "err EPERM"
deny_case "/proc/self/root path" open "$O/file" open "/proc/self/root$O/file" w
OUT=$($CTL run --policy tfile -- /usr/bin/bash -c "exec 3<$O; exec $TRY open /proc/self/fd/3/file w" 2>/dev/null | head -1)
check "/proc/self/fd path: refused" "$OUT" "err EPERM"
OUT=$(cd "$W" && $CTL run --policy tfile -- "$TRY" unlink ../outside/victim 2>/dev/null | head -1)
check "relative unlink outside: refused" "$OUT" "err EPERM"

# Long paths: a rule shorter than the path still covers it.
long=$W
for i in $(seq 12); do long=$long/component-number-$i-of-a-long-path; done
mkdir -p "$long"
check "long path is longer than a rule key" "$([ ${#long} -gt 260 ] && echo yes)" yes
allow_case "create at a ${#long}-byte path inside" open "$long/f" creat
allow_case "mkdir at a long path inside (walked path)" mkdir "$long/d"
olong=$O
for i in $(seq 12); do olong=$olong/component-number-$i-of-a-long-path; done
mkdir -p "$olong"
deny_case "create at a long path outside" create "$olong/f" open "$olong/f" creat
deny_case "mkdir at a long path outside (walked path)" mkdir "$olong/d" mkdir "$olong/d"

# Deeper than PATH_MAX: cannot be resolved, so refused even in the work dir.
deep=$W/deep
mkdir -p "$deep"
(cd "$deep" && for i in $(seq 24); do
	d=$(printf 'd%.0s' $(seq 200)); mkdir "$d" && cd "$d" || exit 1
done; pwd -P >/dev/null 2>&1; true)
OUT=$(cd "$deep" && $CTL run --policy tfile -- /usr/bin/bash -c \
	"cd $(printf 'd%.0s' $(seq 200)) && for i in {1..23}; do cd $(printf 'd%.0s' $(seq 200)) || exit 9; done; exec $TRY open f creat" 2>/dev/null | head -1)
check "deeper than PATH_MAX inside the work dir: refused (fail closed)" "$OUT" "err EPERM"
check "unresolvable path: reason" \
	"$(audit_wait '.hook=="file" and .reason=="path unresolved"' 1 | awk '{print ($1>=1)?"yes":"no"}')" yes

# Odd bytes in names: refused, and the log stays valid JSON.
odd=$(printf 'o\nd"d\\\x01\xff\xfe')
deny_case "odd bytes in a name outside" "" "" open "$O/$odd" creat
n=$(audit_wait '.hook=="file" and (.target_hex // "" | length) > 0' 1)
check "odd bytes: raw bytes kept in target_hex" "$([ "$n" -ge 1 ] && echo yes)" yes
hex=$(field target_hex "$(audit_last ".target_hex != null")")
want=$(printf '%s' "$O/$odd" | od -An -tx1 | tr -d ' \n')
check "odd bytes: target_hex is the exact path" "$hex" "$want"
allow_case "odd bytes in a name inside" open "$W/$odd" creat

# Locks and leases are judged as writes: a shared lock on a file the tree
# may only read holds up every outsider that takes it exclusively (a
# package manager's lock), a lease stalls every outsider's open for writing
# for the lease-break time, and a lock on the daemon's lock file would keep
# a new daemon from starting.
c0=$(counter deny_file)
for how in flock posix ofd lease; do
	deny_case "$how on a file outside the work dir" lock "$O/file" lock "$O/file" "$how"
	allow_case "$how in the work dir" lock "$W/file" "$how"
done
check "locks: each refusal counted in the kernel" "$(counter deny_file)" $((c0 + 4))
ev=$(audit_last ".op==\"lock\" and .target==\"$O/file\"")
check "lock record: hook, access, reason" \
	"$(field hook "$ev") $(field access "$ev") $(field reason "$ev")" "file write not allowed"
# A descriptor open for writing was judged when it was opened (or handed
# over by the operator): its locks are not judged again. An O_TMPFILE file
# in the work dir, and the terminal the tree was handed as its standard
# output (make -O locks it), which the rules would not let it open.
try_in_tree tfile lock-tmpfile "$W" flock
check "a lock on a nameless O_TMPFILE file: allowed" "$OUT" ok
PTY_OUT=$(script -qfec "$CTL run --policy tfile -- $TRY lock-fd 1 posix" /dev/null | tr -d '\r' | head -1)
check "a lock on the pty it was handed as standard output: allowed" "$PTY_OUT" ok
PTY_OUT=$(script -qfec "$CTL run --policy tfile -- $TRY open /proc/self/fd/1 w" /dev/null | tr -d '\r' | head -1)
check "  ... a pty it could not open for writing by name" "$PTY_OUT" "err EPERM"
try_in_tree tfile lock "$SOCK.lock" flock
check "flock on the daemon's lock file: refused" "$OUT" "err EPERM"
check "  ... recorded as the daemon's" \
	"$(audit_wait ".target==\"$SOCK.lock\" and .reason==\"sharnessd is protected\"")" 1
try_outside lock "$O/file" lease
check "outside: a read lease on the same file" "$OUT" ok
try_outside lock "$O/file" flock
check "outside: a shared flock on the same file" "$OUT" ok

# ---- the open that made its file: judged at its create -------------------
# The kernel marks a file an open made (FMODE_CREATED) only where
# path_mknod let the create through; the open itself is that create's,
# not judged again (created_opens counts each). Judged as ever: an
# existing file opened with O_CREAT, a create the rules refuse, a made
# file handed in over SCM_RIGHTS, and every open of a policy in audit mode.
ESC=$SH_BUILD/tests/vm/escape
c0=$(counter created_opens)
allow_case "a new file made by its open" open "$W/made" creat
check "  ... judged at its create" "$(counter created_opens)" "$((c0 + 1))"
allow_case "O_CREAT of the file, there now" open "$W/made" creat
check "  ... an open that made nothing: judged on its own" "$(counter created_opens)" "$((c0 + 1))"
deny_case "a new file where the tree may not write" create "$O/made" open "$O/made" creat
check "  ... refused at the create: no file" "$([ -e "$O/made" ] && echo yes || echo no)" no
run_in_tree tfile "$ESC" uring async open "$W/made-uring" creat
check "io_uring (an io-wq worker) makes and opens a new file inside" "$OUT" ok
check "  ... judged at its create" "$(counter created_opens)" "$((c0 + 2))"
run_in_tree tfile "$ESC" uring async open "$O/made-uring" creat
check "io_uring makes a new file outside: refused" "$OUT" "err EPERM"
check "  ... at the create" \
	"$(audit_wait ".op==\"create\" and .target==\"$O/made-uring\"")" 1
serve_fd "$SH_TMP/made-out.sock" "$O/passed" c
serve_fd "$SH_TMP/made-in.sock" "$W/passed" c
run_in_tree tfile "$ESC" recv-fd "$SH_TMP/made-out.sock"
check "a file an outsider's open made, handed in for writing: it does not arrive" \
	"$OUT" "err NOFD"
check "  ... recorded" "$(audit_wait ".op==\"receive\" and .target==\"$O/passed\"")" 1
run_in_tree tfile "$ESC" recv-fd "$SH_TMP/made-in.sock"
check "twin: one made in the work directory arrives" "$OUT" ok
stop_servers
check "  ... neither counted as made by the tree's open" "$(counter created_opens)" "$((c0 + 2))"
run_in_tree tfileaudit "$TRY" open "$O/made-audit" creat
check "audit mode: a new file where the rules refuse it is made" "$OUT" ok
check "  ... its create recorded" \
	"$(audit_wait ".op==\"create\" and .target==\"$O/made-audit\" and .policy==\"tfileaudit\"")" 1
check "  ... and its open" \
	"$(audit_wait ".op==\"open\" and .target==\"$O/made-audit\" and .policy==\"tfileaudit\"")" 1
check "  ... not judged at the create alone" "$(counter created_opens)" "$((c0 + 2))"
rm -f "$O/made-audit" "$O/passed"

# Counters: refusals counted in the kernel; outsiders untouched.
before=$(counter deny_file)
check_match "kernel counter counts file denials" "$before" '^[1-9][0-9]*$'
try_outside open "$O/file" w
check "outside the tree: write anywhere works" "$OUT" ok
try_outside unlink "$O/victim"
check "outside the tree: unlink works" "$OUT" ok
check "kernel counter unchanged by outsiders" "$(counter deny_file)" "$before"

# chroot is refused inside a tree (it would change what d_path reports).
$CTL run --policy tfile -- /usr/sbin/chroot / /usr/bin/bash -c true 2>"$SH_TMP/chroot.err"
check "chroot inside a tree: refused" "$?" 125
check_match "chroot: the syscall failed with EPERM" "$(cat "$SH_TMP/chroot.err")" "Operation not permitted"
check "chroot: audited" "$(audit_wait '.hook=="chroot" and .target=="/"' 1)" 1
/usr/sbin/chroot / /usr/bin/true
check "chroot outside a tree works" "$?" 0

check_log_valid
exit 0
