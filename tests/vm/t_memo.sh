#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The directory memo (bpf/lib/memo.h): a tree that writes again in a
# directory is judged by the rule memoized for it, without its path. A
# memo may cost a lookup, never allow what the rules refuse: a directory
# renamed or a mount moved from under a memo, a policy reloaded, another
# policy in the same directory, a rule below the directory. Each case runs
# a tree that first writes where it may (and is seen to use the memo),
# then, after the change, where it may not any more.
. "$(dirname "$0")/lib.sh"

W=$SH_TMP/work            # writable
R=$SH_TMP/ro              # readable, not writable
SY=$SH_TMP/sync           # writable: where a tree says it is ready
mkdir -p "$W/a" "$W/b" "$W/c" "$W/d" "$W/s" "$W/m" "$R" "$SY"
echo secret >"$W/d/secret"

policy() { # NAME WRITE-DIR [EXTRA...]
	local name=$1 dir=$2; shift 2
	{
		echo "[policy]"
		echo "name = $name"
		echo "[exec]"
		echo "allow = /usr/bin/bash"
		echo "allow = /usr/bin/sleep"
		echo "allow = /usr/bin/mkdir"
		echo "allow = $SH_BUILD/tests/vm/"
		echo "[file]"
		echo "write = $dir"
		echo "write = /dev/null"
		echo "write = $SY/"
		printf '%s\n' "$@"
	} >"$SH_TMP/policies/$name.policy"
}
# A name of more than 16 bytes is listed by its length and ends: LONG and
# TWIN share them.
LONG=aaaaaaaa-first-zzzzzzzz
TWIN=aaaaaaaa-other-zzzzzzzz
# $W/late and $R/later are made only after the policy is in force.
policy tmemo "$W/" "deny = $W/d/secret" "deny = $W/d/$LONG" "deny = $W/late/"
policy tmemol "$R/later/"
policy tmemob "$W/b/"
policy tmemoc "$W/"
# Mounts move only under a private parent: one of the test's own.
P=$SH_TMP/pm
mkdir -p "$P"
mount --bind "$P" "$P" && mount --make-private "$P"
mkdir -p "$P/w/m" "$P/ro"
policy tmemom "$P/w/"
# A file system of one mount (the times case): its own tmpfs.
TM=$SH_TMP/tm
mkdir -p "$TM" && mount -t tmpfs memot "$TM" && mkdir -p "$TM/w/t" "$TM/ro"
policy tmemot "$TM/w/"

start_daemon || { fail "daemon starts"; exit 1; }

# In a tree: write N files in the current directory (the memo is made and
# used), say it is ready, wait for its go file, then write one more name.
# Prints "before=OK|ERR after=OK|ERR: message".
SCRIPT='
cd "$1" || exit 9
b=OK
for i in 1 2 3 4 5 6 7 8; do : >"f$i" || b=ERR; done
: >"$2/ready.$3"
while [ ! -e "$2/go.$3" ]; do sleep 0.1; done
if msg=$( { : >"$4"; } 2>&1 ); then echo "before=$b after=OK"; else echo "before=$b after=ERR: $msg"; fi
'

# tree_start TAG POLICY DIR NAME [SCRIPT-ARGS...]: the script (SCRIPT, or
# TREE_SCRIPT where set) in the background.
tree_start() {
	local tag=$1 pol=$2 dir=$3 name=$4
	shift 4
	rm -f "$SY/ready.$tag" "$SY/go.$tag"
	$CTL run --policy "$pol" -- /usr/bin/bash -c "${TREE_SCRIPT:-$SCRIPT}" sh "$dir" "$SY" \
		"$tag" "$name" "$@" >"$SH_TMP/out.$tag" 2>"$SH_TMP/err.$tag" &
	TREE_PID=$!
	wait_until test -e "$SY/ready.$tag" || fail "tree $tag says it is ready"
}
# tree_finish TAG: lets it write the last name; OUT is its line.
tree_finish() {
	: >"$SY/go.$1"
	wait "$TREE_PID"
	first_line "$SH_TMP/out.$1"
}

# by_memo DESC POLICY PROGRAM ARGS... N: 300 uses (N, the last argument)
# in a tree, allowed ("ok"), and nearly all judged by memo.
by_memo() {
	local desc=$1 pol=$2 n=${*: -1} h0 h1
	shift 2
	h0=$(counter memo_hits)
	run_in_tree "$pol" "$@"
	check "$desc" "$OUT" ok
	h1=$(counter memo_hits)
	check "${desc%%:*}: judged by the memo (memo_hits grew by at least $((n - 50)), got $((h1 - h0)))" \
		"$([ $((h1 - h0)) -ge $((n - 50)) ] && echo yes)" yes
}

# refused DESC JQ POLICY PROGRAM ARGS...: refused in a tree ("err EPERM")
# and logged (one record matching JQ).
refused() {
	local desc=$1 jq=$2 n
	shift 2
	run_in_tree "$@"
	check "$desc: refused" "$OUT" "err EPERM"
	n=$(audit_wait "$jq")
	check "$desc: logged" "$n" 1
}

# after_refused DESC PATH REASON: the tree's last name, PATH, refused after
# the change (OUT, from tree_finish), not made, and logged by that path.
after_refused() {
	check_match "$1: refused" "$OUT" "^before=OK after=ERR: .*Operation not permitted"
	check "$1: no file made" "$([ -e "$2" ] && echo yes || echo no)" no
	check "$1: refusal logged by its path ($3)" \
		"$(audit_wait ".target==\"$2\" and .reason==\"$3\"")" 1
}

# ---- the memo is made and used -------------------------------------------
h0=$(counter memo_hits); s0=$(counter memo_stores)
tree_start used tmemo "$W/a" g
tree_finish used
check "memo: writes in a writable directory allowed" "$OUT" "before=OK after=OK"
h1=$(counter memo_hits); s1=$(counter memo_stores)
check "memo: made (memo_stores grew)" "$([ "$s1" -gt "$s0" ] && echo yes)" yes
# 9 creates, each a path_mknod and an open: all but the first few by memo.
check "memo: used (memo_hits grew by at least 12, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 12 ] && echo yes)" yes
check_match "memo: its counters in the Prometheus text" "$($CTL status --prometheus)" \
	"sharness_memo_hits_total [1-9][0-9]*"

# ---- a rule below the directory: only the names leading there by path ----
# $W/d is marked (rules lie below it); the names secret and $LONG lead to
# them. Every other name in it is judged by the memo.
n0=$(audit_count ".target==\"$W/d/secret\"")
h0=$(counter memo_hits)
tree_start below tmemo "$W/d" secret
h1=$(counter memo_hits)
tree_finish below
check_match "rule below: a file beside it allowed, the denied one refused" "$OUT" \
	"^before=OK after=ERR: .*Operation not permitted"
check "rule below: the names beside it by memo (memo_hits grew by at least 12, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 12 ] && echo yes)" yes
check "rule below: the denied file kept its data" "$(cat "$W/d/secret")" secret
n=$(audit_wait ".target==\"$W/d/secret\" and .reason==\"deny rule\"" $((n0 + 1)))
check "rule below: its refusal is logged (deny rule)" "$n" $((n0 + 1))

# A directory with a rule below it is not renamed, by either side of a
# rename: its denied files would be read under the new name.
mkdir -p "$W/mv" "$W/mv2" "$SY/x"
try_in_tree tmemo rename "$W/d" "$SY/d2"
check "rule below: its directory renamed away: refused" "$OUT" "err EPERM"
check "rule below: the denied file stays where it was" "$(cat "$W/d/secret")" secret
n=$(audit_wait ".target==\"$W/d\" and .reason==\"deny rule\"")
check "rule below: the rename's refusal logged (deny rule)" "$n" 1
try_in_tree tmemo rename "$W/mv" "$SY/mv"
check "rule below: a directory with no rule below renamed (control)" "$OUT" ok
try_in_tree tmemo exchange "$SY/x" "$W/d"
check "rule below: exchanged with another directory: refused" "$OUT" "err EPERM"
try_in_tree tmemo exchange "$SY/x" "$W/mv2"
check "rule below: an exchange of two without (control)" "$OUT" ok

# A name with the listed name's length and ends is judged by path, and
# allowed; the listed one refused, memo or not.
tree_start twin tmemo "$W/d" "$TWIN"
tree_finish twin
check "rule below: a name with a listed name's ends allowed" "$OUT" "before=OK after=OK"
n0=$(audit_count ".target==\"$W/d/$LONG\"")
tree_start long tmemo "$W/d" "$LONG"
tree_finish long
check_match "rule below: the long listed name refused" "$OUT" \
	"^before=OK after=ERR: .*Operation not permitted"
check "rule below: it was not made" "$(test -e "$W/d/$LONG" && echo made || echo absent)" absent
n=$(audit_wait ".target==\"$W/d/$LONG\" and .reason==\"deny rule\"" $((n0 + 1)))
check "rule below: the long name's refusal is logged (deny rule)" "$n" $((n0 + 1))

# ---- a memo made by an open serves no hook that walks -------------------
# file_open names with bpf_d_path, which goes as deep as a path goes; the
# path hooks walk at most 64 steps and refuse what lies deeper. A directory
# 64 names below the work directory: its file opens, a new name in it is
# refused as too deep, memo or not. (The open appends: a truncating open
# also goes through path_truncate on 6.1, which walks.)
D=$W/deep$(printf '/a%.0s' $(seq 64))
mkdir -p "$D" && echo old >"$D/f"
run_in_tree tmemo /usr/bin/bash -c '
cd "$1" || exit 9
for i in 1 2 3; do m=$( { : >>f; } 2>&1 ) || { echo "open=ERR: $m"; exit; }; done
if msg=$( { : >g; } 2>&1 ); then echo "open=OK create=OK"; else echo "open=OK create=ERR: $msg"; fi
' sh "$D"
check_match "too deep: the file opens (d_path), a new name is refused (the walk)" "$OUT" \
	"^open=OK create=ERR: .*Operation not permitted"
check "too deep: no file made" "$([ -e "$D/g" ] && echo yes || echo no)" no

# ---- a directory renamed from under its memo ------------------------------
tree_start ren tmemo "$W/a" g2
h0=$(counter memo_hits)
mv "$W/a" "$R/a"
tree_finish ren
after_refused "renamed out: a name in the moved directory" "$R/a/g2" "not allowed"
# Twin: renamed within the writable directory, still allowed.
mkdir -p "$W/a"
tree_start ren2 tmemo "$W/a" g3
mv "$W/a" "$W/a2"
tree_finish ren2
check "renamed within: still allowed" "$OUT" "before=OK after=OK"
check "renamed within: the file is there" "$([ -e "$W/a2/g3" ] && echo yes)" yes
# Into reach: a directory the tree may not write in, moved into the
# writable one while the tree waits in it.
mkdir -p "$R/in"
tree_start renin tmemo "$R/in" g7
mv "$R/in" "$W/in"
tree_finish renin
check_match "renamed in: refused before, allowed once moved into the write rule" "$OUT" \
	"^before=ERR after=OK"
check "renamed in: the file is there" "$([ -e "$W/in/g7" ] && echo yes)" yes

# ---- a rule's directory made after the policy was applied ------------------
# Rules name paths, so a rule holds for a directory made later, under a
# memo made before it (the memo's directory lists the rule's name, "late",
# whether or not it exists yet).
tree_start late tmemo "$W" late/x
mkdir "$W/late" "$W/early"
tree_finish late
after_refused "rule made later: a deny rule's directory made after apply" "$W/late/x" "deny rule"
tree_start early tmemo "$W" early/x
tree_finish early
check "rule made later: a directory beside it, made with it, by the memo (control)" \
	"$OUT" "before=OK after=OK"
mkdir "$R/later"
try_in_tree tmemol open "$R/later/f" creat
check "rule made later: a write rule's directory made after apply, allowed" "$OUT" ok
try_in_tree tmemol open "$R/f" creat
check "rule made later: beside it, refused (control)" "$OUT" "err EPERM"

# ---- a directory above the memoized one moved -----------------------------
# A memo is keyed to the host's count of directory moves (sh_dir_move), not
# to every rename: a directory's move, whoever makes it, is what changes
# the path of the names below it. Renamed, and exchanged with a file (the
# directory the exchange's target: counted either way).
mkdir -p "$W/up/in"
tree_start anc tmemo "$W/up/in" g4
mv "$W/up" "$R/up"
tree_finish anc
after_refused "above renamed out: a name in the memoized directory below" "$R/up/in/g4" "not allowed"
mkdir -p "$W/ex/in" && : >"$R/exf"
tree_start exch tmemo "$W/ex/in" g5
"$TRY" exchange "$R/exf" "$W/ex" >"$SH_TMP/exch.out" 2>&1
check "above exchanged out: the host's exchange made" "$(head -n 1 "$SH_TMP/exch.out")" ok
tree_finish exch
check_match "above exchanged out: a name in the memoized directory below refused" "$OUT" \
	"^before=OK after=ERR: .*Operation not permitted"
n=$(audit_wait ".target==\"$R/exf/in/g5\" and .reason==\"not allowed\"")
check "above exchanged out: refusal logged by its new path" "$n" 1
# Twin: moved within the writable directory, still allowed.
mkdir -p "$W/up2/in"
tree_start anc2 tmemo "$W/up2/in" g6
mv "$W/up2" "$W/up3"
tree_finish anc2
check "above renamed within: still allowed" "$OUT" "before=OK after=OK"
check "above renamed within: the file is there" "$([ -e "$W/up3/in/g6" ] && echo yes)" yes

# ---- a mount moved from under its memo ------------------------------------
mount -t tmpfs memo "$P/w/m"
tree_start mnt tmemom "$P/w/m" x
mkdir -p "$P/ro/m"
mount --move "$P/w/m" "$P/ro/m"
check "mount moved out: moved" "$?" 0
tree_finish mnt
check_match "mount moved out: a name in it refused" "$OUT" \
	"^before=OK after=ERR: .*Operation not permitted"
n=$(audit_wait ".target==\"$P/ro/m/x\"")
check "mount moved out: refusal logged by its new path" "$n" 1
umount "$P/ro/m"
# Twin: the same mount left where it is.
mount -t tmpfs memo "$P/w/m"
tree_start mnt2 tmemom "$P/w/m" x2
tree_finish mnt2
check "mount left in place: allowed" "$OUT" "before=OK after=OK"
umount "$P/w/m"

# ---- a reload that takes the write rule away ------------------------------
tree_start rel tmemoc "$W/c" y
policy tmemoc "$W/b/"
# Twice: the second reload brings the memo's slot back into force, with
# the new rules in it. (The daemon saves its state by a rename at each
# reload, which alone makes every memo stale: this proves the result, not
# that the tag generation in the memo's hash is what refuses.)
out=$($CTL policy reload 2>&1)
check "reload: accepted" "$?" 0
out=$($CTL policy reload 2>&1)
check "reload again: accepted" "$?" 0
tree_finish rel
check_match "reload: the memoized directory is no longer writable" "$OUT" \
	"^before=OK after=ERR: .*Operation not permitted"
check "reload: no file made" "$([ -e "$W/c/y" ] && echo yes || echo no)" no
policy tmemoc "$W/"
$CTL policy reload >/dev/null 2>&1

# ---- another policy in a memoized directory --------------------------------
tree_start pol tmemo "$W/s" z
tree_finish pol
check "other policy: the first tree writes" "$OUT" "before=OK after=OK"
try_in_tree tmemob open "$W/s/z2" creat
check "other policy: a tree of a policy that may not write there is refused" "$OUT" "err EPERM"
try_in_tree tmemob open "$W/b/z3" creat
check "other policy: its own directory allowed (control)" "$OUT" "ok"

# ---- times: a hook with no mount ------------------------------------------
# inode_setattr (utimensat) gets a dentry and no mount: where the file
# system has one mount in the task's namespace (here $TM), the memo is
# used through it, and is stale once the directory is renamed out.
h0=$(counter memo_hits)
run_in_tree tmemot "$SH_BUILD/tests/vm/bench" -c "allow-create:$TM/w/t/probe" "$TM/w/t" 300 utimens
check_match "times: 300 utimensat calls in a writable directory" "$OUT" "^utimens [0-9]"
h1=$(counter memo_hits)
check "times: judged by the memo (memo_hits grew by at least 250, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 250 ] && echo yes)" yes
# A rename of a file changes no directory's path, so it makes no memo
# stale: 300 times a file renamed away and back, then opened for writing,
# in the tree (each open right after two renames on the host), while an
# outsider renames a file as fast as it can. Keyed to every rename on the
# host, as memos were, each open missed and made its memo again.
# (Not a coproc: bash unsets a coproc's variables the moment it reaps it,
# which can come between the kill and the wait.)
mkdir -p "$SH_TMP/ren"
l= r0= r1=
exec {ren}< <(exec "$SH_BUILD/tests/vm/renamer" "$SH_TMP/ren" 0 2>"$SH_TMP/renamer.err")
ren_pid=$!
read -r -t "$SH_WAIT" l <&"$ren"
check "renames: the outsider renames" "$l $(cat "$SH_TMP/renamer.err")" "ready "
h0=$(counter memo_hits); s0=$(counter memo_stores)
kill -USR1 "$ren_pid" && read -r -t "$SH_WAIT" r0 _ <&"$ren"
run_in_tree tmemot "$SH_BUILD/tests/vm/bench" -c "allow-create:$TM/w/t/probe" "$TM/w/t" 300 rename+open
h1=$(counter memo_hits); s1=$(counter memo_stores)
kill -USR1 "$ren_pid" && read -r -t "$SH_WAIT" r1 _ <&"$ren"
kill "$ren_pid"
wait "$ren_pid"
exec {ren}<&-
renames=$(( ${r1:-0} - ${r0:-0} ))
check_match "renames: 300 renames and opens in a writable directory" "$OUT" "^rename\+open [0-9]"
check "renames: the outsider renamed while the tree ran (got $renames)" \
	"$([ "${r0:-}" ] && [ "${r1:-}" ] && [ "$renames" -ge 300 ] && echo yes) $(cat "$SH_TMP/renamer.err")" "yes "
# (By its names, which no tree touches, not by its pid, which the guest
# may have given a refused process before.)
check "renames: none of the outsider's refused or recorded" \
	"$(audit_count ".target == \"$SH_TMP/ren/a\"") $(audit_count ".target == \"$SH_TMP/ren/b\"")" "0 0"
check "renames: the opens judged by the memo (memo_hits grew by at least 900, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 900 ] && echo yes)" yes
check "renames: memos made again at most 30 times (memo_stores grew by $((s1 - s0)))" \
	"$([ $((s1 - s0)) -le 30 ] && echo yes)" yes
# ...which the memos keyed to the count of directory moves make so: the
# daemon saw this kernel's moves counted when it attached (moves_seen).
check "renames: the count of directory moves saw the daemon's own moves (no fallback said)" \
	"$(grep -c 'memos are keyed to every rename' "$SH_TMP/daemon.err")" 0
: >"$TM/w/t/f1"
TSCRIPT='
first() { local x; x=$("$@"); printf %s "${x%%[[:cntrl:]]*}"; }
cd "$1" || exit 9
b=$(first "$5" utimens f1)$(first "$5" utimens f1)
: >"$2/ready.$3"
while [ ! -e "$2/go.$3" ]; do sleep 0.1; done
echo "before=$b after=$(first "$5" utimens "$4")"
'
TREE_SCRIPT=$TSCRIPT tree_start t tmemot "$TM/w/t" f1 "$SH_BUILD/tests/vm/wall"
mv "$TM/w/t" "$TM/ro/t"
touch "$TM/ro/t/f1"         # its time now, not the one the tree sets
tree_finish t
check "times: renamed out: refused" "$OUT" "before=okok after=err EPERM"
check "times: renamed out: the time unchanged" \
	"$([ "$(stat -c %Y "$TM/ro/t/f1")" != 1000000000 ] && echo yes)" yes
n=$(audit_wait ".target==\"$TM/ro/t/f1\" and .op==\"settimes\"")
check "times: renamed out: refusal logged by its new path" "$n" 1

# ---- times: the file system's one mount moved or replaced -----------------
# The one mount of a file system is remembered per namespace for as long
# as mount_lock's count holds. A tmpfs judged through its one mount where
# it may be written; then a bind where nothing may be, the first mount
# gone: refused. Moved back where it may be written: allowed.
PT=$P/w/tm
mkdir -p "$PT" "$P/ro/tm" && mount -t tmpfs memom "$PT" && mkdir -p "$PT/d" && : >"$PT/d/f1"
check "times, mount: a tmpfs at a writable place" "$?" 0
run_in_tree tmemom "$SH_BUILD/tests/vm/wall" utimens "$PT/d/f1"
check "times, mount: allowed through its one mount (control)" "$OUT" ok
run_in_tree tmemom "$SH_BUILD/tests/vm/wall" utimens "$PT/d/f1"
check "times, mount: allowed again" "$OUT" ok
mount --bind "$PT" "$P/ro/tm" && umount "$PT"
check "times, mount: replaced by a bind where nothing may be written" "$?" 0
run_in_tree tmemom "$SH_BUILD/tests/vm/wall" utimens "$P/ro/tm/d/f1"
check "times, mount: through the bind: refused" "$OUT" "err EPERM"
n=$(audit_wait ".target==\"$P/ro/tm/d/f1\" and .op==\"settimes\"")
check "times, mount: refusal logged by the bind's path" "$n" 1
mount --move "$P/ro/tm" "$PT"
run_in_tree tmemom "$SH_BUILD/tests/vm/wall" utimens "$PT/d/f1"
check "times, mount: moved back where it may be written: allowed" "$OUT" ok
umount "$PT"

# ---- executable mappings: the file's own memo ------------------------------
# A file mapped as code (every library a process loads) is judged by its
# own path; once allowed, the verdict is kept with the file for that name.
# Another name of the same file (a hard link where nothing may be run) is
# judged by its own path: refused.
XA=$SH_TMP/xa
XB=$SH_TMP/xb
mkdir -p "$XA" "$XB"
cp "$SH_BUILD/tests/vm/wall" "$XA/lib" && ln "$XA/lib" "$XB/lib"
cat >"$SH_TMP/policies/tmemox.policy" <<EOF
[policy]
name = tmemox
[exec]
allow = $SH_BUILD/tests/vm/
allow = $XA/
allow = /usr/bin/bash
allow = /usr/bin/sleep
EOF
$CTL policy reload >/dev/null 2>&1
by_memo "exec maps: 300 mappings of an allowed file" tmemox \
	"$SH_BUILD/tests/vm/wall" mmap-exec "$XA/lib" 300
refused "exec maps: the same file by another name, not allowed" \
	".policy==\"tmemox\" and .target==\"$XB/lib\" and .hook==\"mmap\"" \
	tmemox "$SH_BUILD/tests/vm/wall" mmap-exec "$XB/lib" 1
run_in_tree tmemox "$SH_BUILD/tests/vm/wall" mmap-exec "$XA/lib" 1
check "exec maps: the allowed name still maps (control)" "$OUT" ok
# A tree of a policy that does not allow it, right after: the memo is the
# other policy's.
run_in_tree tmemo "$SH_BUILD/tests/vm/wall" mmap-exec "$XA/lib" 1
check "exec maps: a tree of another policy: refused" "$OUT" "err EPERM"
# Renamed out while a tree that mapped it by memo waits (each tag is a new
# generation: a memo serves only its run). XSCRIPT: 30 uses of $1 by
# "$5 $6" (the memo made and used), ready, then one use of $4.
XSCRIPT='
"$5" "$6" "$1" 30 >"$2/first.$3" || exit 9
: >"$2/ready.$3"
while [ ! -e "$2/go.$3" ]; do sleep 0.1; done
"$5" "$6" "$4" 1
'
TREE_SCRIPT=$XSCRIPT tree_start mvx tmemox "$XA/lib" "$XB/lib2" "$SH_BUILD/tests/vm/wall" mmap-exec
check "exec maps: mapped before the rename" "$(head -n 1 "$SY/first.mvx")" ok
mv "$XA/lib" "$XB/lib2"
tree_finish mvx
check "exec maps: renamed out of the allowed directory: refused" "$OUT" "err EPERM"
# A file mounted on a file: its mount point renamed in a namespace made
# before the mount, where it is no mount point (the kernel refuses the
# rename only where it is one), takes the mounted file out of the allowed
# directory with no directory moved and no mount changed: the move of a
# mount point is counted as a directory's is. One tree maps it (the memo
# made and used), waits while the mount point moves, maps it again by its
# new name (each tag is a new generation: a memo serves only its run).
: >"$XA/mp"
unshare -m sleep 300 &
NSP=$!
ns_own() { [ "$(readlink "/proc/$NSP/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]; }
wait_until ns_own
check "exec maps: a mount namespace from before the mount" "$?" 0
mount --bind "$XB/lib" "$XA/mp"
h0=$(counter memo_hits)
TREE_SCRIPT=$XSCRIPT tree_start mpx tmemox "$XA/mp" "$XB/mp2" "$SH_BUILD/tests/vm/wall" mmap-exec
h1=$(counter memo_hits)
check "exec maps: a file mounted in the allowed directory maps" "$(head -n 1 "$SY/first.mpx")" ok
check "exec maps: ... by its memo (memo_hits grew by at least 20, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 20 ] && echo yes)" yes
nsenter -t "$NSP" -m mv "$XA/mp" "$XB/mp2"
check "exec maps: its mount point renamed where it is none" \
	"$([ -e "$XA/mp" ] && echo there || echo moved)" moved
tree_finish mpx
check "exec maps: the mounted file, now out of the allowed directory: refused" "$OUT" "err EPERM"
umount "$XB/mp2"
kill "$NSP"
wait "$NSP" 2>/dev/null

# ---- unix peers: the socket's own memo -------------------------------------
# A connect judged by the peer's path and allowed is kept with the peer
# socket. A rename that moves it under a deny rule makes it stale; a tree
# of a policy that denies it is refused, memo or not.
U=$SH_TMP/u
mkdir -p "$U/ok" "$U/deny"
for p in tmemou:"$U/deny/" tmemov:"$U/ok/"; do
	cat >"$SH_TMP/policies/${p%%:*}.policy" <<EOF
[policy]
name = ${p%%:*}
[exec]
allow = $SH_BUILD/tests/vm/
allow = /usr/bin/bash
allow = /usr/bin/sleep
[connect]
deny = ${p#*:}
EOF
done
$CTL policy reload >/dev/null 2>&1
"$TRY" listen "$U/ok/s.sock" >"$SH_TMP/userve" 2>&1 &
USERVE=$!
wait_until grep -q '^ready$' "$SH_TMP/userve"
by_memo "unix: 300 connects to an allowed socket" tmemou \
	"$SH_BUILD/tests/vm/wall" connect-n "$U/ok/s.sock" 300
refused "unix: a tree of a policy that denies it" \
	".policy==\"tmemov\" and .target==\"$U/ok/s.sock\" and .reason==\"deny rule\"" \
	tmemov "$SH_BUILD/tests/vm/wall" connect-n "$U/ok/s.sock" 1
run_in_tree tmemou "$SH_BUILD/tests/vm/wall" connect-n "$U/ok/s.sock" 1
check "unix: still allowed to the first policy (control)" "$OUT" ok
# Moved under a deny rule while a tree that connected by memo waits: the
# memo is the peer socket's, and the socket is the same (a memo serves
# only its run: each tag is a new generation).
h0=$(counter memo_hits)
TREE_SCRIPT=$XSCRIPT tree_start mvu tmemou "$U/ok/s.sock" "$U/deny/ok/s.sock" \
	"$SH_BUILD/tests/vm/wall" connect-n
h1=$(counter memo_hits)
check "unix: connected before the move" "$(head -n 1 "$SY/first.mvu")" ok
check "unix: ... by its memo (memo_hits grew by at least 20, got $((h1 - h0)))" \
	"$([ $((h1 - h0)) -ge 20 ] && echo yes)" yes
mv "$U/ok" "$U/deny/ok"
tree_finish mvu
check "unix: moved under a deny rule while a tree held its memo: refused" "$OUT" "err EPERM"
n=$(audit_wait ".policy==\"tmemou\" and .target==\"$U/deny/ok/s.sock\" and .reason==\"deny rule\"")
check "unix: moved under a deny rule: logged" "$n" 1
kill $USERVE 2>/dev/null

# ---- a chrooted task uses no memo ------------------------------------------
# A task whose root is not its namespace's top names a file two ways:
# bpf_d_path (file_open) from its root, the walk (the path hooks) from the
# namespace's. A memo made through one name would then judge the other.
# Here the root is a bind of / at $J: directories made in $X are judged by
# their walk names ($J$X/..., writable), a read of $X/f by the name its
# open sees ($X/f, denied): refused, not allowed by a memo of the mkdirs.
J=$SH_TMP/jail
X=$SH_TMP/x
CGJ=/sys/fs/cgroup/t_memo_jail
mkdir -p "$J" "$X" "$CGJ" && echo data >"$X/f"
mount --rbind / "$J" && mount --make-rprivate "$J"
check "chroot: / bound at the jail" "$?" 0
# In the jail the kernel's mappings of mkdir and its libraries are named
# by the walk ($J/usr/...), its exec by bpf_d_path (/usr/bin/mkdir).
cat >"$SH_TMP/policies/tmemoj.policy" <<EOF
[policy]
name = tmemoj
[exec]
allow = /usr/bin/bash
allow = /usr/bin/mkdir
allow = $J/usr/bin/mkdir
lib = $J/usr/lib/
[file]
write = $J$X/
deny = $X/
EOF
$CTL policy reload >/dev/null 2>&1
$CTL tag "$CGJ" tmemoj
check "chroot: its cgroup tagged" "$?" 0
# (The counters are no witness here: mkdir's libraries are mapped by
# file memos, which need no root condition. Without it in memo_allows_at
# the read goes through.)
OUT=$(chroot "$J" /usr/bin/bash -c '
echo $$ >"$1/cgroup.procs" || exit 9
cd "$2" || exit 9
c=OK
for i in 1 2 3 4; do mkdir "n$i" || c=ERR; done
if msg=$( { read -r l <f; } 2>&1 ); then echo "mkdir=$c read=OK"; else echo "mkdir=$c read=ERR: $msg"; fi
' sh "$CGJ" "$X" 2>&1)
check_match "chroot: directories made by the walk's rule, the read refused by its own" "$OUT" \
	"^mkdir=OK read=ERR: .*Operation not permitted"
check "chroot: the directories are there" "$(ls -d "$X"/n? | wc -l)" 4
n=$(audit_wait ".policy==\"tmemoj\" and .target==\"$X/f\" and .reason==\"deny rule\"")
check "chroot: the read's refusal logged by its own name (deny rule)" "$n" 1
$CTL untag "$CGJ"
rmdir "$CGJ" 2>/dev/null
umount -R -l "$J"

check_log_valid
cleanup
umount "$P" "$TM"
