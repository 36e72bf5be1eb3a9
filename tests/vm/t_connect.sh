#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unix-socket rules at unix_stream_connect and unix_may_send, judged on the
# socket the kernel reached: its bound path, whatever name the caller used.
# The tree runs as root: a root tree is held like any other.
. "$(dirname "$0")/lib.sh"

D=$SH_TMP/denied        # [connect] deny = D/
O=$SH_TMP/open          # no rule: default allow
mkdir -p "$D" "$O"
ABS=sharness-test-$$    # abstract name

cat >"$SH_TMP/policies/tconn.policy" <<P
[policy]
name = tconn
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[connect]
deny = $D/
allow = $D/ok.sock
abstract = deny
P
# scope = tree: the tree's own sockets, and what an allow rule names.
cat >"$SH_TMP/policies/tscope.policy" <<P
[policy]
name = tscope
[exec]
allow = /usr/bin/bash
allow = /usr/bin/grep
allow = $SH_BUILD/tests/vm/
[connect]
scope = tree
allow = $O/free.sock
P
# Renames around the rules judged at use (no [file] rules: every rename is
# a write the tree may make): a [connect] deny directory, an allow rule
# under scope = tree, an exec deny rule and a device rule.
M=$SH_TMP/move
mkdir -p "$M/deny" "$M/free/d1" "$M/free/dx" "$M/free/e1" "$M/free/e2" "$M/free/w1" \
	"$M/ok" "$M/bin" "$M/dev"
cat >"$SH_TMP/policies/tmove.policy" <<P
[policy]
name = tmove
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
deny = $M/bin/denied
[file]
device = $M/dev/null2
[connect]
deny = $M/deny/
deny = $M/later/inner/
P
# A device rule over a directory, for a mount point renamed where it is
# none (below).
cat >"$SH_TMP/policies/tmount.policy" <<P
[policy]
name = tmount
[exec]
allow = $SH_BUILD/tests/vm/
[file]
device = $M/devdir/
P
# The same [connect] rules beside write = $M/ (agent.policy's old shape).
sed -e 's/name = tmove/name = tmovew/' -e "s|^\[file\]|[file]\nwrite = $M/|" \
	"$SH_TMP/policies/tmove.policy" >"$SH_TMP/policies/tmovew.policy"
cat >"$SH_TMP/policies/tmscope.policy" <<P
[policy]
name = tmscope
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[connect]
scope = tree
allow = $M/ok/
P
# The same rules without "abstract = deny": abstract sockets are allowed.
sed -e 's/name = tconn/name = tconn2/' -e '/^abstract/d' "$SH_TMP/policies/tconn.policy" \
	>"$SH_TMP/policies/tconn2.policy"

# Servers, all outside the tree.
LPIDS=
serve() { # serve OP NAME
	nserve=$((nserve + 1))
	"$TRY" "$1" "$2" >"$SH_TMP/serve.$nserve" 2>&1 &
	LPIDS="$LPIDS $!"
}
nserve=0
serve listen "$D/s.sock"           # refused
serve listen "$D/ok.sock"          # the allowed exception inside the denied dir
serve listen "$O/free.sock"        # default allow
serve listen-dgram "$D/d.sock"     # refused
serve listen-dgram "$O/d.sock"     # default allow
serve listen-abstract "$ABS"
for n in a b c in; do serve listen "$M/deny/$n.sock"; done
for n in f g in o; do serve listen "$M/free/$n.sock"; done
trap 'kill $LPIDS 2>/dev/null; cleanup' EXIT
servers_ready() { [ "$(cat "$SH_TMP"/serve.* 2>/dev/null | grep -c '^ready$')" -eq "$1" ]; }
wait_until servers_ready $nserve
check "servers outside the tree are listening" \
	"$(cat "$SH_TMP"/serve.* | grep -c '^ready$')" $nserve

# Names that lead to $D/s.sock, and one in $D that leads out of it.
ln -s "$D/s.sock" "$O/link.sock"
ln "$D/s.sock" "$O/hard.sock"      # a second name for the same socket inode
ln -s "$O/free.sock" "$D/to-free.sock"

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"
check "no denial yet" "$(counter deny_connect)" 0

# Stream connect: a denied directory and the allowed exception inside it.
try_in_tree tconn connect "$D/s.sock"
check "connect into the denied dir: refused" "$OUT" "err EPERM"
check "try reports the failure" "$RC" 1
check "denial reaches the audit log" "$(audit_wait ".hook==\"connect\" and .target==\"$D/s.sock\"")" 1
ev_fields "$(audit_last ".hook==\"connect\" and .target==\"$D/s.sock\"")"
check "event: policy" "${F[policy]-}" tconn
check "event: action" "${F[action]-}" deny
check "event: op" "${F[op]-}" connect
check "event: reason" "${F[reason]-}" "deny rule"
check "event: errno" "${F[errno]-}" 1
check "event: comm" "${F[comm]-}" try
check "event: uid" "${F[uid]-}" 0
check "event: not abstract" "${F[socket]-none}" none
check_match "event: cgroup is the run's" "${F[cgroup]-}" '^/sys/fs/cgroup/sharness/run-[0-9]+$'
check "kernel counter: one connect denial" "$(counter deny_connect)" 1

try_in_tree tconn connect "$D/ok.sock"
check "allow rule inside the denied dir: connects" "$OUT" ok
try_in_tree tconn connect "$O/free.sock"
check "no rule (default allow): connects" "$OUT" ok

# Every other name for the same socket is refused, recorded as the real path.
try_in_tree tconn connect "$O/link.sock"
check "symlink to a denied socket: refused" "$OUT" "err EPERM"
OUT=$(cd "$D" && $CTL run --policy tconn -- "$TRY" connect s.sock 2>/dev/null | head -1)
check "relative path: refused" "$OUT" "err EPERM"
try_in_tree tconn connect "$O/../denied/s.sock"
check "path with '..': refused" "$OUT" "err EPERM"
OUT=$(cd "$D" && $CTL run --policy tconn -- "$TRY" connect /proc/self/cwd/s.sock 2>/dev/null | head -1)
check "/proc/self/cwd path: refused" "$OUT" "err EPERM"
try_in_tree tconn connect "$O/hard.sock"
check "hard link to a denied socket: refused" "$OUT" "err EPERM"
check "each recorded against the bound path" \
	"$(audit_wait ".hook==\"connect\" and .op==\"connect\" and .target==\"$D/s.sock\"" 6)" 6
check "no event names a path the caller used" \
	"$(audit_count '.hook=="connect" and (.target | test("link|hard|/proc/|\\.\\.|^s\\.sock")))')" 0
# ...and a name inside the denied dir leading to an allowed socket is fine.
try_in_tree tconn connect "$D/to-free.sock"
check "symlink in the denied dir to an allowed socket: connects" "$OUT" ok
check "kernel counter: six connect denials" "$(counter deny_connect)" 6

# Datagrams: sendto is judged by unix_may_send, op "send".
try_in_tree tconn sendto "$D/d.sock"
check "sendto into the denied dir: refused" "$OUT" "err EPERM"
check "datagram denial logged" "$(audit_wait ".target==\"$D/d.sock\"")" 1
ev_fields "$(audit_last ".target==\"$D/d.sock\"")"
check "datagram event: hook" "${F[hook]-}" connect
check "datagram event: op" "${F[op]-}" send
check "datagram event: reason" "${F[reason]-}" "deny rule"
check "datagram event: action" "${F[action]-}" deny
try_in_tree tconn sendto "$O/d.sock"
check "sendto with no rule: sent" "$OUT" ok
OUT=$(cd "$O" && $CTL run --policy tconn -- "$TRY" sendto ../denied/d.sock 2>/dev/null | head -1)
check "sendto by a relative '..' path: refused" "$OUT" "err EPERM"
check "recorded against the bound path" "$(audit_wait ".op==\"send\" and .target==\"$D/d.sock\"" 2)" 2

# Abstract sockets have no path: "abstract = deny" refuses them all.
try_in_tree tconn connect-abstract "$ABS"
check "abstract socket with abstract = deny: refused" "$OUT" "err EPERM"
check "abstract denial logged" "$(audit_wait ".target==\"@$ABS\"")" 1
ev_fields "$(audit_last ".target==\"@$ABS\"")"
check "abstract event: reason" "${F[reason]-}" "abstract socket"
check "abstract event: socket field" "${F[socket]-}" abstract
check "abstract event: hook and op" "${F[hook]-} ${F[op]-}" "connect connect"
check "abstract event: policy" "${F[policy]-}" tconn
try_in_tree tconn2 connect-abstract "$ABS"
check "abstract socket, policy without abstract = deny: connects" "$OUT" ok
try_in_tree tconn2 connect "$D/s.sock"
check "that policy still refuses the denied dir" "$OUT" "err EPERM"
check "kernel counter: ten connect denials" "$(counter deny_connect)" 10

# [connect] scope = tree: every socket another bound (an outsider, a tree
# of the same policy) is refused unless an allow rule names it; the
# tree's own, path and abstract, stream and datagram, are its own.
try_in_tree tscope connect "$O/free.sock"
check "scope = tree: an outsider's socket an allow rule names connects" "$OUT" ok
try_in_tree tscope sendto "$O/d.sock"
check "scope = tree: an outsider's datagram socket: refused" "$OUT" "err EPERM"
check "... logged, outside the tree" \
	"$(audit_wait ".policy==\"tscope\" and .target==\"$O/d.sock\" and .reason==\"outside the tree\"")" 1
try_in_tree tconn2 sendto "$O/d.sock"
check "... its twin under a policy without scope: sent" "$OUT" ok
try_in_tree tscope connect-abstract "$ABS"
check "scope = tree: an outsider's abstract socket: refused" "$OUT" "err EPERM"
check "... logged with its name" \
	"$(audit_wait ".policy==\"tscope\" and .target==\"@$ABS\" and .reason==\"outside the tree\"")" 1
W=$SH_TMP/own
mkdir -p "$W"
# One tree: a server of its own, then a client of it (path, abstract, datagram).
own() { # own LISTEN-OP CONNECT-OP NAME
	run_in_tree tscope /usr/bin/bash -c "\"$TRY\" $1 $3 >$W/srv.out 2>&1 & s=\$!
		while ! /usr/bin/grep -q ready $W/srv.out; do :; done
		\"$TRY\" $2 $3; kill \$s"
}
own listen connect "$W/own.sock"
check "scope = tree: the tree's own socket connects" "$OUT" ok
own listen-abstract connect-abstract "own-$$"
check "scope = tree: the tree's own abstract socket connects" "$OUT" ok
own listen-dgram sendto "$W/own-d.sock"
check "scope = tree: the tree's own datagram socket is sent to" "$OUT" ok
# A bind or a symlink that fails after its path hook allowed it (here on a
# file system with no inode left) leaves no note of the dentry it would
# have made (making_notes; bpf/ioctl.c ends it at the kernel's vfs_mknod and
# vfs_symlink): a lookup of the same process whose new dentry the
# allocator placed where the failed one was would mark an outsider's
# socket file as the tree's, for the tree to remove and bind in place of.
# The note is read from outside, through a pidfd, while the process
# waits: there (its path hook ran) and empty.
FULL=$SH_TMP/full
mkdir -p "$FULL" && mount -t tmpfs -o size=1m,nr_inodes=4,mode=0755 none "$FULL"
for ((i = 0; i < 8; i++)); do touch "$FULL/f$i" 2>/dev/null || break; done
run_outside "$TRY" bind "$FULL/out.sock"
check "outside: a bind on a file system with no inode left: ENOSPC" "$OUT" "err ENOSPC"
MAKING=$(bpftool -j map show name making_notes | jq -r 'if type == "array" then .[] else . end | .id')
check "a process that made nothing has no note (making_notes)" "$("$TRY" task-value "$MAKING" $$)" "err ENOENT"
# held OP ARG...: the tree's OP, held after it; OUT its result, NOTE the note.
held() {
	local r
	rm -f "$W/go"
	$CTL run --policy tscope -- "$TRY" hold "$W/go" "$@" >"$W/hold.out" 2>&1 &
	r=$!
	wait_until grep -q '^held ' "$W/hold.out"
	NOTE=$("$TRY" task-value "$MAKING" "$(sed -n 's/^held //p' "$W/hold.out")")
	touch "$W/go"
	wait "$r"
	OUT=$(head -n 1 "$W/hold.out")
}
held bind "$FULL/s.sock"
check "scope = tree: a bind that fails after its path hook: ENOSPC" "$OUT" "err ENOSPC"
check "... leaves no note of the dentry it would have made" "$NOTE" "value 0"
held symlink /etc/passwd "$FULL/l"
check "a symlink that fails so: ENOSPC" "$OUT" "err ENOSPC"
check "... leaves no note either" "$NOTE" "value 0"
umount "$FULL"
held bind "$W/held.sock"
check "twin: the bind where an inode is left succeeds" "$OUT" ok
check "... its note used up by the socket file it made" "$NOTE" "value 0"
run_in_tree tscope /usr/bin/bash -c "\"$TRY\" bind $W/held2.sock && \"$TRY\" unlink $W/held2.sock"
check "... which is the tree's own: it may remove it" "$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok "
# On overlayfs (a container's root) the file is made in the upper file
# system, which instantiates a dentry of its own (over a whiteout, first a
# temporary one in the work directory) inside the overlay's create: that
# must neither use up nor end the note of the overlay's dentry, which is
# then marked. Each case beside its twin: an outsider's socket seen
# through the overlay, and the outsider's own link in the shared directory.
OV=$SH_TMP/ov
mkdir -p "$OV/lower/shared" "$OV/upper" "$OV/work" "$OV/m"
touch "$OV/lower/gone"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$OV/lower/host.sock"
mount -t overlay overlay -o "lowerdir=$OV/lower,upperdir=$OV/upper,workdir=$OV/work" "$OV/m"
check "overlayfs mounted" "$(stat -f -c %T "$OV/m")" overlayfs
run_in_tree tscope /usr/bin/bash -c "\"$TRY\" bind $OV/m/s.sock && \"$TRY\" unlink $OV/m/s.sock"
check "overlayfs: a socket file the tree bound is its own: it may remove it" \
	"$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok "
run_in_tree tscope /usr/bin/bash -c \
	"\"$TRY\" unlink $OV/m/gone && \"$TRY\" bind $OV/m/gone && \"$TRY\" unlink $OV/m/gone"
check "... bound over a whiteout (made in the work directory, then moved): its own too" \
	"$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok ok "
try_in_tree tscope unlink "$OV/m/host.sock"
check "... an outsider's socket seen through the overlay: not the tree's to remove" "$OUT" "err EPERM"
held bind "$OV/m/h.sock"
check "... a bind held after it: made" "$OUT" ok
check "... its note used up by the overlay's dentry" "$NOTE" "value 0"
run_in_tree tscope /usr/bin/bash -c "\"$TRY\" symlink /etc/hostname $OV/m/shared/link &&
	\"$TRY\" open $OV/m/shared/link r; \"$TRY\" chmod $OV/m/shared 1777"
check "overlayfs: a tree makes a link and follows it; sharing its directory then: refused" \
	"$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok ok err EPERM "
# The host shares the directory: the tree's link there is marked as the
# tree's, an outsider's beside it is not.
chmod 1777 "$OV/m/shared"
ln -s /etc/hostname "$OV/m/shared/host-made"
PL='.op == "follow" and .reason == "planted by a tree" and .target == "link"'
f0=$(audit_count "$PL")
try_outside open "$OV/m/shared/link" r
check "... the host shares it: following the tree's link there outside: refused" "$OUT" "err EPERM"
check "... recorded as planted" "$(audit_wait "$PL" $((f0 + 1)))" $((f0 + 1))
try_outside open "$OV/m/shared/host-made" r
check "... outside: an outsider's link beside it is followed" "$OUT" ok
umount "$OV/m"
# Another tree, of the same policy, serves; this one may not reach it.
$CTL run --policy tscope -- "$TRY" listen "$W/other.sock" >"$W/other.out" 2>&1 &
other=$!
wait_until grep -q ready "$W/other.out"
try_in_tree tscope connect "$W/other.sock"
check "scope = tree: a socket another tree (same policy) bound: refused" "$OUT" "err EPERM"
try_in_tree tconn2 connect "$W/other.sock"
check "... its twin without scope: connects" "$OUT" ok
kill "$other"
wait "$other" 2>/dev/null
# An outsider's bound socket handed in (here as the run's standard input):
# binding it again fails (EINVAL) and does not make it the tree's, nor does
# listening on it; the outsider's server stays refused.
python3 -c 'import socket, subprocess, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
sys.exit(subprocess.call(sys.argv[2:], stdin=s.fileno()))' "$O/handed.sock" \
	$CTL run --policy tscope -- /usr/bin/bash -c \
	"\"$TRY\" rebind 0 $W/re.sock; \"$TRY\" connect $O/handed.sock" >"$W/re.out" 2>&1
check "scope = tree: an outsider's socket handed in, bound again: EINVAL" \
	"$(head -n 1 "$W/re.out")" "err EINVAL"
check "... and still not the tree's: its connect refused" "$(sed -n 2p "$W/re.out")" "err EPERM"
python3 -c 'import socket, subprocess, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
sys.exit(subprocess.call(sys.argv[2:]))' "$O/handed2.sock" \
	$CTL run --policy tconn2 -- "$TRY" connect "$O/handed2.sock" >"$W/re2.out" 2>&1
check "... its twin without scope: connects" "$(head -n 1 "$W/re2.out")" ok

# A rename or a link must not change what a rule judged at use says: a
# socket's directory (or one above it) moved out of a [connect] deny rule,
# a directory moved to a name with a rule below it, the tree's own socket
# moved into a rule, a directory moved into an allow rule under scope =
# tree; an exec deny rule's program; a device rule's node. An outsider's
# socket is not the tree's to rename, link or remove, nor is a name a deny
# rule protects the tree's to bind. Each next to one that keeps the
# verdict. One run per batch, one line each.
cp /usr/bin/true "$M/bin/denied"
cp /usr/bin/true "$M/bin/plain"
mknod "$M/dev/null2" c 1 3
mknod "$M/dev/other" c 1 3
c0=$(counter deny_file)
k0=$(counter deny_connect)
moves() { # moves POLICY "[=|+|-|@]FROM TO"... (exchange, link, unlink, bind)
	local pol=$1 cmd= a
	shift
	for a in "$@"; do
		set -- $a
		case $1 in
		=*) cmd="$cmd \"$TRY\" exchange ${1#=} $2;" ;;
		+*) cmd="$cmd \"$TRY\" link ${1#+} $2;" ;;
		-*) cmd="$cmd \"$TRY\" unlink ${1#-};" ;;
		# A server of the tree's own, stopped once bound (or refused);
		# bash builtins only (the policy runs no other program).
		@*) cmd="$cmd read -t $SH_WAIT -r l < <(exec \"$TRY\" listen ${1#@} 2>&1)
			kill \$! 2>/dev/null; [ \"\$l\" = ready ] || echo \"\$l\";" ;;
		*) cmd="$cmd \"$TRY\" rename $1 $2;" ;;
		esac
	done
	run_in_tree "$pol" /usr/bin/bash -c "$cmd"
	MOVED=$(tr '\n' , <"$SH_TMP/last.out")
}
moves tmove "$M/deny $M/gone" "$M $SH_TMP/move2" "$M/free/d1 $M/later" "=$M/deny $M/free/dx" \
	"$M/bin/denied $M/bin/x" "$M/bin $M/bin2" "+$M/bin/denied $M/bin/dl" \
	"$M/dev/null2 $M/dev/y" "=$M/dev/other $M/dev/null2" \
	"@$M/free/own.sock" "$M/free/own.sock $M/deny/own.sock" \
	"$M/free/own.sock $M/free/own2.sock" "$M/free/d1 $M/free/d2" "=$M/free/e1 $M/free/e2" \
	"$M/bin/plain $M/bin/plain2" "-$M/free/own2.sock" \
	"$M/deny/a.sock $M/free/a.sock" "=$M/deny/b.sock $M/free/f.sock" \
	"$M/free/in.sock $M/deny/in2.sock" "$M/free/g.sock $M/free/g2.sock" "+$M/free/g.sock $M/free/g3" \
	"-$M/free/g.sock" "-$M/deny/c.sock" "@$M/deny/new.sock"
check "rename: a deny rule's directory, one above it, one to a name above a rule, exchanged" \
	"$(echo "$MOVED" | cut -d, -f1-4)" "err EPERM,err EPERM,err EPERM,err EPERM"
check "... an exec deny rule's program, its directory, a link of it: refused" \
	"$(echo "$MOVED" | cut -d, -f5-7)" "err EPERM,err EPERM,err EPERM"
check "... a device rule's node, renamed or exchanged; the tree's own socket into a deny rule: refused" \
	"$(echo "$MOVED" | cut -d, -f8-10)" "err EPERM,err EPERM,err EPERM"
check "... the tree's own socket, two directories without rules (renamed, exchanged), a program: done" \
	"$(echo "$MOVED" | cut -d, -f11-14)" "ok,ok,ok,ok"
check "... the tree's own socket removed" "$(echo "$MOVED" | cut -d, -f15)" ok
check "... an outsider's socket, out of a rule, exchanged, into one, within none, linked: refused" \
	"$(echo "$MOVED" | cut -d, -f16-20)" "err EPERM,err EPERM,err EPERM,err EPERM,err EPERM"
check "... an outsider's socket removed, within no rule or a deny rule: refused" \
	"$(echo "$MOVED" | cut -d, -f21-22)" "err EPERM,err EPERM"
check "... a socket of the tree's own bound where a deny rule protects the name: refused" \
	"$(echo "$MOVED" | cut -d, -f23-)" "err EPERM,"
check "... nothing refused moved" \
	"$(ls "$M/bin" "$M/deny" "$M/dev" | tr '\n' ' ')" \
	"$M/bin: denied plain2  $M/deny: a.sock b.sock c.sock in.sock  $M/dev: null2 other "
check "... logged (rename across a rule)" \
	"$(audit_wait '.policy=="tmove" and .hook=="file" and (.op=="rename-from" or .op=="link-from") and .reason=="rename across a rule"' 10)" 10
check "... an outsider's socket logged (outside the tree)" \
	"$(audit_wait ".policy==\"tmove\" and .hook==\"file\" and .reason==\"outside the tree\" and (.target|startswith(\"$M/\"))" 7)" 7
check "... the bind logged (deny rule)" \
	"$(audit_wait ".policy==\"tmove\" and .hook==\"connect\" and .op==\"bind\" and .target==\"$M/deny/new.sock\" and .reason==\"deny rule\"")" 1
check "... counted in the kernel" "$(counter deny_file) $(counter deny_connect)" "$((c0 + 17)) $((k0 + 1))"
ev_fields "$(audit_last ".policy==\"tmove\" and .target==\"$M/deny\"")"
check "... the record names the object, refused" "${F[op]-} ${F[action]-} ${F[errno]-}" "rename-from deny 1"
try_in_tree tmove connect "$M/deny/a.sock"
check "... and the socket it kept is still refused" "$OUT" "err EPERM"
# Only the rules that judge an object of its type at its use hold it: a
# regular file, a FIFO or a symbolic link is connected to by no name, so
# one moves into and out of the [connect] deny rule (a socket, above, does
# not; nor does a program across the exec deny rule, nor a node across the
# device rule). One by one, each next to its refused twin above.
: >"$M/free/plain.txt" && mkfifo "$M/free/fifo" && ln -s "$M/deny/a.sock" "$M/free/link"
c0=$(counter deny_file)
moves tmove "$M/free/plain.txt $M/deny/plain.txt" "$M/deny/plain.txt $M/free/plain.txt" \
	"$M/free/fifo $M/deny/fifo" "$M/free/link $M/deny/link" "+$M/free/plain.txt $M/deny/hard.txt" \
	"$M/bin/plain2 $M/deny/plain2" "$M/deny/plain2 $M/bin/plain2"
check "... a regular file in and out, a FIFO, a symbolic link, a hard link, a program: done" \
	"$MOVED" "ok,ok,ok,ok,ok,ok,ok,"
check "... none of them refused (deny_file unchanged)" "$(counter deny_file)" "$c0"
k2=$(counter deny_connect)
try_in_tree tmove connect "$M/deny/link"
check "... the socket the moved link names is still refused (counted)" \
	"$OUT $(counter deny_connect)" "err EPERM $((k2 + 1))"
rm -f "$M/deny/fifo" "$M/deny/link" "$M/deny/hard.txt" "$M/free/plain.txt"
# A FIFO the host made a mount point (a device node bound onto it), in a
# mount namespace made before the bind, where it is none: the kernel lets
# a tree there rename it, and the rename moves the device node's name in
# the host's namespace, into the directory the device rule covers. The
# mount point is judged as a directory would be (every kind of rule):
# refused; a plain FIFO, the twin, moved alike: done.
mkdir -p "$M/devdir" && mkfifo "$M/free/fifo3" "$M/free/fifo4"
unshare -m sleep 300 &
NSP=$!
ns_own() { [ "$(readlink "/proc/$NSP/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]; }
wait_until ns_own
mount --bind "$M/dev/other" "$M/free/fifo3"
c0=$(counter deny_file)
nsenter -t "$NSP" -m $CTL run --policy tmount -- "$TRY" rename "$M/free/fifo3" "$M/devdir/fifo3" \
	>"$SH_TMP/last.out" 2>&1
check "mount point renamed where it is none, into a device rule's directory: refused (counted)" \
	"$(head -n 1 "$SH_TMP/last.out") $(counter deny_file)" "err EPERM $((c0 + 1))"
check "... logged (rename across a rule)" \
	"$(audit_wait ".policy==\"tmount\" and .target==\"$M/free/fifo3\" and .reason==\"rename across a rule\"")" 1
nsenter -t "$NSP" -m $CTL run --policy tmount -- "$TRY" rename "$M/free/fifo4" "$M/devdir/fifo4" \
	>"$SH_TMP/last.out" 2>&1
check "... a plain FIFO moved alike: done" "$(head -n 1 "$SH_TMP/last.out")" ok
umount "$M/free/fifo3"
kill "$NSP"
wait "$NSP" 2>/dev/null
# The same through io_uring, in the task and in an io-wq worker: the
# directory renamed out of its rule, an outsider's socket removed; a plain
# directory renamed (the twin).
ESC=$SH_BUILD/tests/vm/escape
run_in_tree tmove /usr/bin/bash -c "for h in inline async; do
	\"$ESC\" uring \$h rename $M/deny $M/gone; \"$ESC\" uring \$h unlink $M/deny/a.sock
	done; \"$ESC\" uring async rename $M/free/d2 $M/free/d2u; \"$ESC\" uring async rename $M/free/d2u $M/free/d2"
check "io_uring (task, worker): a rule's directory renamed, an outsider's socket removed: refused; a plain one: done" \
	"$(grep -v '^(' "$SH_TMP/last.out" | tr '\n' ,)" "err EPERM,err EPERM,err EPERM,err EPERM,ok,ok,"
check "... the socket and the directory are where they were" "$(ls "$M/deny" | tr '\n' ' ')" "a.sock b.sock c.sock in.sock "
moves tmovew "$M/deny $M/gone" "$M/free/w1 $M/free/w2"
check "beside write = $M/: a deny rule's directory renamed: refused; a plain one: done" "$MOVED" "err EPERM,ok,"
moves tmscope "$M/free/o.sock $M/ok/o.sock" "$M/free/d2 $M/ok/d2"
check "scope = tree: an outsider's socket or a directory renamed into an allow rule: refused" \
	"$MOVED" "err EPERM,err EPERM,"
try_in_tree tmscope connect "$M/free/o.sock"
check "... the socket stays outside the tree" "$OUT" "err EPERM"
# Another mount of the same file system names a directory otherwise: the
# rename is judged through both (a rule below its other name refuses it;
# the same rename with one mount is done), a file only through its own.
mkdir -p "$M/later" "$M/free/inner"
mount --bind "$M/free" "$M/later"
moves tmove "$M/free/inner $M/free/inner2" "$M/free/d2 $M/free/d3" "$M/bin/plain2 $M/bin/plain3"
umount "$M/later"
check "two mounts: a directory with a rule below its other name refused; one without, a file: done" \
	"$MOVED" "err EPERM,ok,ok,"
check "... logged by its name here" \
	"$(audit_wait ".policy==\"tmove\" and .target==\"$M/free/inner\" and .reason==\"rename across a rule\"")" 1
moves tmove "$M/free/inner $M/free/inner2"
check "... one mount again: the same rename done" "$MOVED" "ok,"
try_outside rename "$M/deny/a.sock" "$M/free/a.sock"
check "outside the tree: an outsider renames its socket out" "$OUT" ok

# Outside every tagged tree nothing is touched.
k1=$(counter deny_connect)
try_outside connect "$D/s.sock"
check "outside the tree: denied-dir socket connects" "$OUT" ok
try_outside sendto "$D/d.sock"
check "outside the tree: denied-dir datagram sent" "$OUT" ok
try_outside connect-abstract "$ABS"
check "outside the tree: abstract socket connects" "$OUT" ok
check "kernel counter unchanged by outsiders" "$(counter deny_connect)" "$k1"
check "no event from outsiders" "$(audit_count '.hook=="connect" and .comm=="try" and (.cgroup | startswith("/sys/fs/cgroup/sharness/") | not)')" 0

# The servers survived every connection, refused or not.
alive=0
for p in $LPIDS; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check "servers still running" "$alive" $nserve

check_log_valid
kill $LPIDS 2>/dev/null
wait 2>/dev/null
exit 0
