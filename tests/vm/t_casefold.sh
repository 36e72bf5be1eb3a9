#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Names compared without case. In a casefold directory (ext4 -O casefold,
# chattr +F) or on vfat, "SECRET" and "secret" are one name, and the dentry
# carries whichever spelling looked it up first: a path built from it need
# not match the rule's bytes. Below a directory with a restricting rule
# under it (a deny rule, an exec lib rule) such a name is refused, by every
# hook that judges a path (open, the path hooks, times, exec, mappings,
# unix connects), with its own reason; elsewhere in the same file system it
# is judged as before. A directory memo made before the directory turned
# casefold serves it no more.
. "$(dirname "$0")/lib.sh"

C=$SH_TMP/cf              # ext4 with the casefold feature
SY=$SH_TMP/sync
mkdir -p "$C" "$SY"
ram_disk
if ! { mkfs.ext4 -q -F -O casefold /dev/ram0 && mount -t ext4 /dev/ram0 "$C"; } \
	>"$SH_TMP/mkfs.out" 2>&1; then
	fail "a casefold ext4 on a ram disk" "$(tr '\n' ' ' <"$SH_TMP/mkfs.out")"
	exit 1
fi
# ci: casefold, rules below it. ci2: casefold, none below it. cx: casefold,
# an exec rule below it. plain: not
# casefold, a deny rule below it. m: made casefold later (the memo case).
mkdir "$C/ci" "$C/ci2" "$C/cx" "$C/plain" "$C/m" "$C/t" "$C/t2"
chattr +F "$C/ci" "$C/ci2" "$C/cx"
check "chattr +F: the directories fold" \
	"$(lsattr -d "$C/ci" "$C/ci2" "$C/cx" | awk '$1 ~ /F/' | wc -l)" 3
mkdir -p "$C/ci/secret" "$C/cx/tools" "$C/ci/SOCK" "$C/ci2/d" "$C/plain/secret"
echo key >"$C/ci/secret/key"
echo pub >"$C/ci/public"
echo pub2 >"$C/ci2/d/file"
echo plainkey >"$C/plain/secret/key"
cp /usr/bin/true "$C/cx/tools/bad"
cp /usr/bin/true "$C/ci2/ok"
echo secret >"$C/m/secret"

cat >"$SH_TMP/policies/tfold.policy" <<P
[policy]
name = tfold
[exec]
deny = $C/cx/tools/bad
[file]
write = $C/
write = /dev/null
write = $SY/
deny = $C/ci/secret/
deny = $C/plain/secret/
deny = $C/m/secret
deny = $C/t/secret
[connect]
deny = $C/ci/sock/
P
start_daemon || { fail "daemon starts"; exit 1; }

# evict: drops the dentries, so that the next lookup's spelling becomes
# the name the kernel keeps.
evict() { sync; echo 2 >/proc/sys/vm/drop_caches; }
# kname PATH: the name the kernel gives an open of PATH (outside a tree).
kname() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); print(os.readlink("/proc/self/fd/%d" % fd))' "$1"; }
# refused_fold DESC HOOK OP TARGET: the last try was refused and logged
# with the casefold reason; the record names TARGET in whichever spelling
# the kernel kept (compared without case).
refused_fold() {
	local t
	t=$(tr '[:upper:]' '[:lower:]' <<<"$4")
	check "$1: refused" "$OUT" "err EPERM"
	check "$1: logged (case-insensitive name)" \
		"$(audit_wait ".hook==\"$2\" and .op==\"$3\" and (.target|ascii_downcase)==\"$t\" and .reason==\"case-insensitive name\"")" 1
}

# ---- file: open, create, times ---------------------------------------------
check "outside: SECRET and secret are one file" "$(cat "$C/ci/SECRET/KEY")" key
evict
d0=$(counter deny_file)
try_in_tree tfold open "$C/ci/SECRET/KEY" r
refused_fold "read of a denied file spelled otherwise" file open "$C/ci/SECRET/KEY"
check "the kernel names it as the tree spelled it (what a rule's bytes miss)" \
	"$(kname "$C/ci/secret/key")" "$C/ci/SECRET/KEY"
check "deny_file counted it" "$(( $(counter deny_file) - d0 ))" 1
try_in_tree tfold open "$C/ci/Secret/new" creat
refused_fold "a file created below the denied directory, spelled otherwise" file create "$C/ci/SECRET/new"
check "... and it is not there" "$(ls "$C/ci/secret")" key
try_in_tree tfold mkdir "$C/ci/SECRET/sub"
refused_fold "mkdir there" file mkdir "$C/ci/SECRET/sub"
run_in_tree tfold "$SH_BUILD/tests/vm/wall" utimens "$C/ci/SECRET/KEY"
refused_fold "times of the denied file" file settimes "$C/ci/SECRET/KEY"
# Beside it in the same directory: refused too (the rule's directory folds).
try_in_tree tfold open "$C/ci/public" r
refused_fold "a file beside the rule's directory, in the casefold one" file open "$C/ci/public"
try_in_tree tfold open "$C/ci/newname" creat
refused_fold "a new name beside the rule's directory" file create "$C/ci/newname"
check "... and it is not there" "$(ls "$C/ci" | grep -ci newname)" 0
# Positive controls: a casefold directory with no rule below it; a plain
# directory of the same file system; the plain deny rule still by its rule.
try_in_tree tfold open "$C/ci2/D/FILE" r
check "control: casefold, no rule below: read" "$OUT" ok
try_in_tree tfold open "$C/ci2/D/New" creat
check "control: casefold, no rule below: create" "$OUT" ok
run_in_tree tfold "$SH_BUILD/tests/vm/wall" utimens "$C/ci2/D/New"
check "control: casefold, no rule below: times" "$OUT" ok
try_in_tree tfold open "$C/plain/other" creat
check "control: plain directory: create" "$OUT" ok
try_in_tree tfold open "$C/plain/secret/key" r
check "control: plain deny rule: refused" "$OUT" "err EPERM"
check "control: plain deny rule: by its rule" \
	"$(audit_wait ".target==\"$C/plain/secret/key\" and .reason==\"deny rule\"")" 1

# ---- a mount point spelled otherwise ----------------------------------------
# A tmpfs mounted on ci/tm, looked up as TM by whoever mounted it: every
# path through it carries that spelling, above the file's own mount.
mkdir "$C/ci/tm"
evict
mount -t tmpfs tfold "$C/ci/TM"
echo s >"$C/ci/tm/secret"
check "a mount point keeps its spelling" "$(kname "$C/ci/tm/secret")" "$C/ci/TM/secret"
try_in_tree tfold open "$C/ci/tm/secret" r
refused_fold "a file below a mount point spelled otherwise" file open "$C/ci/tm/secret"
umount "$C/ci/TM"
mkdir "$C/ci2/tm"
evict
mount -t tmpfs tfold2 "$C/ci2/TM"
echo s >"$C/ci2/tm/file"
try_in_tree tfold open "$C/ci2/tm/file" r
check "control: below a mount point spelled otherwise, no rule below: read" "$OUT" ok
umount "$C/ci2/TM"

# ---- the tree makes a directory casefold itself ------------------------------
# chattr +F on an empty directory it may write in, with a deny rule below
# it: allowed, and the denied name by another spelling is then refused.
TF='chattr +F "$1" || exit 3; if msg=$( { : >"$1/$2"; } 2>&1 ); then echo ok; else echo "err: $msg"; fi'
run_in_tree tfold /usr/bin/bash -c "$TF" sh "$C/t" SECRET
check_match "the tree's own chattr +F, then the denied name otherwise spelled: refused" "$OUT" \
	"^err: .*Operation not permitted"
check "... logged (case-insensitive name)" \
	"$(audit_wait ".target==\"$C/t/SECRET\" and .reason==\"case-insensitive name\"")" 1
check "... its directory is casefold" "$(lsattr -d "$C/t" | awk '$1 ~ /F/' | wc -l)" 1
run_in_tree tfold /usr/bin/bash -c "$TF" sh "$C/t2" SECRET
check "control: the same where no rule lies below: allowed" "$OUT" ok

# ---- a chrooted task ---------------------------------------------------------
# Its opens and execs are named from its root (bpf_d_path), the walk that
# says where a name folds from the namespace's: where they differ, a name
# that folds is refused wherever the kind has rules.
J=$SH_TMP/jail
CGJ=/sys/fs/cgroup/t_casefold_jail
mkdir -p "$J" "$CGJ"
mount --rbind / "$J" && mount --make-rprivate "$J"
check "chroot: / bound at the jail" "$?" 0
sed 's/^name = tfold$/name = tfoldj/' "$SH_TMP/policies/tfold.policy" >"$SH_TMP/policies/tfoldj.policy"
$CTL policy reload >/dev/null 2>&1
$CTL tag "$CGJ" tfoldj
evict
jail_read() {
	chroot "$J" /usr/bin/bash -c 'echo $$ >"$1/cgroup.procs" || exit 9
if msg=$( { read -r l <"$2"; } 2>&1 ); then echo ok; else echo "ERR: $msg"; fi' sh "$CGJ" "$1" 2>&1
}
OUT=$(jail_read "$C/ci/SECRET/KEY")
check_match "chroot: a denied file spelled otherwise: refused" "$OUT" "^ERR: .*Operation not permitted"
check "chroot: ... logged (case-insensitive name)" \
	"$(audit_wait ".policy==\"tfoldj\" and .reason==\"case-insensitive name\"")" 1
OUT=$(jail_read "$C/plain/secret/key")
check_match "chroot: control: the plain deny rule by its chroot name" "$OUT" "^ERR: .*Operation not permitted"
check "chroot: control: ... logged (deny rule)" \
	"$(audit_wait ".policy==\"tfoldj\" and .target==\"$C/plain/secret/key\" and .reason==\"deny rule\"")" 1
echo fine >"$C/plain/fine"
check "chroot: control: a plain file: read" "$(jail_read "$C/plain/fine")" ok
$CTL untag "$CGJ"
umount -R "$J"
rmdir "$CGJ"

# ---- exec and mappings -------------------------------------------------------
# cx has an exec rule below it and no [file] rule: opening its files is
# judged by the file rules as before, running them is not.
evict
try_in_tree tfold exec "$C/cx/TOOLS/BAD"
refused_fold "exec of a denied binary spelled otherwise" exec exec "$C/cx/TOOLS/BAD"
run_in_tree tfold "$SH_BUILD/tests/vm/wall" mmap-exec "$C/cx/Tools/bad" 1
refused_fold "an executable mapping of it" mmap mmap-exec "$C/cx/TOOLS/BAD"
try_in_tree tfold open "$C/cx/tools/BAD" r
check "control: reading it is judged by the file rules: allowed" "$OUT" ok
run_in_tree tfold "$SH_BUILD/tests/vm/wall" mmap-exec "$C/ci2/OK" 1
check "control: an executable mapping in a casefold directory with no rule below" "$OUT" ok
try_in_tree tfold exec "$C/ci2/OK"
check "control: exec in a casefold directory with no rule below" "$RC" 0

# ---- unix connects -----------------------------------------------------------
# The socket's directory was made as SOCK (by the server, outside): the
# kernel names its socket so, and the rule's bytes would miss it.
"$TRY" listen "$C/ci/SOCK/s" >"$SH_TMP/l1.out" 2>&1 &
L1=$!
"$TRY" listen "$C/ci2/s" >"$SH_TMP/l2.out" 2>&1 &
L2=$!
wait_until test -S "$C/ci/SOCK/s" && wait_until test -S "$C/ci2/s"
try_outside connect "$C/ci/sock/s"
check "outside: the socket answers by the rule's spelling" "$OUT" ok
try_in_tree tfold connect "$C/ci/sock/s"
refused_fold "connect to a denied socket its server spelled otherwise" connect connect "$C/ci/sock/s"
check "... the record names it as the server did" \
	"$(audit_last '.hook=="connect" and .reason=="case-insensitive name"' | jq -r .target)" "$C/ci/SOCK/s"
try_in_tree tfold connect "$C/ci2/S"
check "control: connect in a casefold directory with no rule below" "$OUT" ok
kill "$L1" "$L2" 2>/dev/null
wait "$L1" "$L2" 2>/dev/null

# ---- a memo made before the directory turned casefold ------------------------
# The tree writes in m (not yet casefold: its memo is made, marked: the rule
# below it names "secret"), waits; outside, m is emptied and made casefold;
# then the tree makes "SECRET", the denied name by another spelling, within
# the memo's epoch (whose names list "secret" only).
# A twin directory (m2, never casefold) is written before and after too:
# its memo hits after the go (eight creates, each a path_mknod by memo; the
# open that made the file is the create's) say the memos were not stale
# meanwhile (no rename, no mount, the same epoch), so m's was refused by
# its casefold flag. The tree waits on a FIFO: no program runs (and maps libraries by
# memo) in between.
mkdir -p "$C/m2"
mkfifo "$SY/go"
SCRIPT='
cd "$1" || exit 9
b=OK
for i in 1 2 3 4 5 6 7 8; do : >"f$i" || b=ERR; : >"$3/f$i" || b=ERR; done
: >"$2/ready"
read -r _ <"$2/go"
for i in 1 2 3 4 5 6 7 8; do : >"$3/g$i" || b=ERR; done
if msg=$( { : >SECRET; } 2>&1 ); then echo "before=$b after=OK"; else echo "before=$b after=ERR: $msg"; fi
'
h0=$(counter memo_hits)
$CTL run --policy tfold -- /usr/bin/bash -c "$SCRIPT" sh "$C/m" "$SY" "$C/m2" >"$SH_TMP/out.m" 2>&1 &
TP=$!
wait_until test -e "$SY/ready" || fail "memo tree says it is ready"
check "memo: the writes in m went by memo (memo_hits grew by at least 8, got $(( $(counter memo_hits) - h0 )))" \
	"$([ $(( $(counter memo_hits) - h0 )) -ge 8 ] && echo yes)" yes
# (No rename: that alone would make the memo stale.)
rm -f "$C/m/secret" "$C/m"/f*
chattr +F "$C/m"
h1=$(counter memo_hits)
echo go >"$SY/go"
wait "$TP"
h2=$(counter memo_hits)
check "memo: still fresh after the go (the twin's writes by memo: at least 6 hits, got $((h2 - h1)))" \
	"$([ $((h2 - h1)) -ge 6 ] && echo yes)" yes
check_match "memo: after chattr +F, the denied file by another spelling is refused" \
	"$(head -n 1 "$SH_TMP/out.m")" "^before=OK after=ERR: .*Operation not permitted"
check "memo: ... logged (case-insensitive name)" \
	"$(audit_wait "(.target|ascii_downcase)==\"$(tr "[:upper:]" "[:lower:]" <<<"$C/m/secret")\" and .reason==\"case-insensitive name\"")" 1
check "memo: no file of the denied name was made" "$(ls "$C/m")" ""
umount "$C"

# ---- vfat: every name of the file system folds -------------------------------
V=$SH_TMP/vfat
mkdir -p "$V"
for m in vfat nls_cp437 nls_ascii nls_iso8859-1 nls_utf8; do modprobe -d "${KMODDIR:-/}" "$m" 2>/dev/null; done
if { mkfs.vfat /dev/ram0 && mount -t vfat /dev/ram0 "$V"; } >"$SH_TMP/mkfs.out" 2>&1; then
	mkdir -p "$V/secret" "$V/work"
	echo key >"$V/secret/key"
	printf '[policy]\nname = tvfat\n[file]\nwrite = %s/\ndeny = %s/secret/\n' "$V" "$V" \
		>"$SH_TMP/policies/tvfat.policy"
	printf '[policy]\nname = tvfatw\n[file]\nwrite = %s/\n' "$V" >"$SH_TMP/policies/tvfatw.policy"
	$CTL policy reload >/dev/null
	evict
	try_in_tree tvfat open "$V/SECRET/KEY" r
	refused_fold "vfat: read of a denied file spelled otherwise" file open "$V/SECRET/KEY"
	try_in_tree tvfat open "$V/secret/key" r
	check "vfat: spelled as the rule: refused" "$OUT" "err EPERM"
	try_in_tree tvfatw open "$V/WORK/X" creat
	check "control: vfat, a policy with no deny rule: create" "$OUT" ok
	umount "$V"
else
	fail "a vfat file system on a ram disk" "$(tr '\n' ' ' <"$SH_TMP/mkfs.out")"
fi
check_log_valid
exit 0
