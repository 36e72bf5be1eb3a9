#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Exec allows pinned by digest (`allow = PATH sha256:HEX`): the file the
# daemon hashed runs; a file replaced or written at that path (by the tree,
# by an outsider between runs), renamed or linked onto it, or open for
# writing, is refused with `digest mismatch`, the expected and found
# digests in the record; a file put back with the pinned content (a
# rebuild) is hashed by the kernel at its exec and runs; mapped as code,
# the daemon hashes it again after a refusal. `policy check` warns about an allowed binary under a
# write rule, `policy pin` shows and writes what changed, and the
# run-start record names the policy digest.
. "$(dirname "$0")/lib.sh"

WALL=$SH_BUILD/tests/vm/wall
W=$SH_TMP/w
EXT=$SH_TMP/ext
mkdir -p "$W" "$EXT"
sha() { sha256sum "$1" | cut -d' ' -f1; }
HT=$(sha /usr/bin/true) HF=$(sha /usr/bin/false) HI=$(sha /usr/bin/id)
for f in tool copy held; do cp /usr/bin/true "$W/$f"; done
cp /usr/bin/true "$EXT/bin"
cp /usr/bin/id "$W/evil" && cp /usr/bin/id "$W/evil2"
# A file system that takes its server's word for a create: bindfs (FUSE)
# opens the file that is there when asked to make it. Names it does not
# find are remembered as missing (negative entries, 60 s); found ones are
# asked again at each use.
FSRC=$SH_TMP/fuse-src FUSE=$W/fuse
mkdir -p "$FSRC" "$FUSE"
cp /usr/bin/true "$FSRC/tool"
echo plain >"$FSRC/plain"
# A host's overlay (a container image's layers), its file pinned.
OV=$SH_TMP/ovd
mkdir -p "$OV/lower" "$OV/upper" "$OV/work" "$OV/m"
cp /usr/bin/true "$OV/lower/tool"
mount -t overlay overlay -o "lowerdir=$OV/lower,upperdir=$OV/upper,workdir=$OV/work" "$OV/m" ||
	fail "a host's overlay mounts on $OV/m"
if bindfs -o use_ino,negative_timeout=60,entry_timeout=0,attr_timeout=0 "$FSRC" "$FUSE"; then
	trap 'umount -l "$FUSE" "$OV/m" 2>/dev/null; cleanup' EXIT
else
	fail "bindfs mounts $FUSE (tools/setup installs bindfs)"
fi
POL=$SH_TMP/policies/tdig.policy
cat >"$POL" <<P
[policy]
name = tdig
[exec]
allow = /usr/bin/bash
allow = /usr/bin/cp
allow = $SH_BUILD/tests/vm/
allow = /usr/bin/true sha256:$HT
allow = $W/tool sha256:$HT
allow = $W/copy sha256:$HT
allow = $W/held sha256:$HT
allow = $W/lnk sha256:$HT
allow = $EXT/bin sha256:$HT
allow = $FUSE/tool sha256:$HT
allow = $OV/m/tool sha256:$HT
[file]
write = $W/
P
start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"
# The hashing at exec is attached on demand: a pinned allow is in force.
check "a pinned allow in force: sh_exec_pin linked and pinned" "$(ls "$PIN"/gen-*/ | grep -c '^link_sh_exec_pin$')" 1

# expect_digest NAME PATH FOUND: the refusal of PATH that found the digest
# FOUND says so, with the rule's digest.
expect_digest() {
	local ev f=".op == \"exec\" and .target == \"$2\" and .found == \"sha256:$3\""
	audit_wait "$f" >/dev/null
	ev=$(audit_last "$f")
	ev_fields "$ev"
	check "$1: record (deny, errno 1, digest mismatch, expected and found)" \
		"${F[action]-} ${F[errno]-} ${F[reason]-} ${F[expected]-} ${F[found]-}" \
		"deny 1 digest mismatch sha256:$HT sha256:$3"
}

c0=$(counter deny_exec)
try_in_tree tdig exec /usr/bin/true
check "a pinned system binary runs" "$RC $OUT" "0 "
try_in_tree tdig exec "$W/tool"
check "a pinned copy in the work dir runs" "$RC $OUT" "0 "
try_in_tree tdig exec "$W/copy"
check "another pinned path with the same content runs" "$RC $OUT" "0 "

# The tree may write in its work dir, but not into a pinned file (code a
# process mapped from it would change); it replaces the file instead.
f0=$(counter deny_file)
try_in_tree tdig open "$W/tool" w
check "the tree opens its pinned tool for writing: refused" "$OUT" "err EPERM"
check "  ... recorded" \
	"$(audit_wait ".op == \"open\" and .target == \"$W/tool\" and .reason == \"pinned executable\"")" 1
try_in_tree tdig open "$W/evil" w
check "twin: a file of the work dir that is not pinned opens for writing" "$OUT" ok
# Nor through a writable descriptor an outsider passes in (SCM_RIGHTS).
ESC=$SH_BUILD/tests/vm/escape
echo plain >"$W/plain"
serve_fd "$SH_TMP/pinned.sock" "$W/tool" w
serve_fd "$SH_TMP/plain.sock" "$W/plain" w
run_in_tree tdig "$ESC" recv-fd "$SH_TMP/pinned.sock"
check "a writable descriptor of the pinned tool passed in: it does not arrive" "$OUT" "err NOFD"
check "  ... recorded" \
	"$(audit_wait ".op == \"receive\" and .target == \"$W/tool\" and .reason == \"pinned executable\"")" 1
run_in_tree tdig "$ESC" recv-fd "$SH_TMP/plain.sock"
check "twin: a writable descriptor of a file that is not pinned arrives" "$OUT" ok
stop_servers
check "kernel counter deny_file: the open and the descriptor" "$(counter deny_file)" "$((f0 + 2))"
# Nor a lease or lock through a descriptor open for reading (file_lock):
# a lease holds off the daemon's own hashing, which needs one.
try_in_tree tdig lock "$W/tool" lease
check "a lease on the pinned tool: refused" "$OUT" "err EPERM"
check "  ... recorded" \
	"$(audit_wait ".op == \"lock\" and .target == \"$W/tool\" and .reason == \"pinned executable\"")" 1
try_in_tree tdig lock "$W/evil" lease
check "twin: a lease on a file of the work dir that is not pinned" "$OUT" ok
cp /usr/bin/false "$W/new"
run_in_tree tdig /usr/bin/bash -c "$TRY rename $W/new $W/tool && $TRY exec $W/tool"
check "the tree renames other content onto its pinned tool, runs it: refused" \
	"$(tr '\n' ' ' <"$SH_TMP/last.out")" "ok err EPERM "
expect_digest "replaced by the tree" "$W/tool" "$HF"
check "  ... the record was not repinned" "${F[repinned]-none}" none
run_outside "$W/tool"
check "outside: the replaced file runs (it is false now)" "$RC" 1

# The pinned file of a host's overlay: judged by the overlay's inode. The
# tree cannot write it; an outsider's write through the overlay (a copy-up
# with other content) is found at the next exec; put back, it runs.
try_in_tree tdig exec "$OV/m/tool"
check "a pinned file of a host's overlay runs" "$RC $OUT" "0 "
try_in_tree tdig open "$OV/m/tool" w
check "  ... the tree opens it for writing: refused" "$OUT $(ls "$OV/upper")" "err EPERM "
check "  ... recorded" \
	"$(audit_wait ".op == \"open\" and .target == \"$OV/m/tool\" and .reason == \"pinned executable\"")" 1
cp /usr/bin/false "$OV/m/tool"
try_in_tree tdig exec "$OV/m/tool"
check "  ... an outsider writes other content through the overlay: refused" \
	"$OUT $(ls "$OV/upper")" "err EPERM tool"
expect_digest "  ... written through the overlay" "$OV/m/tool" "$HF"
cp /usr/bin/true "$OV/m/tool"
try_in_tree tdig exec "$OV/m/tool"
check "  ... put back with the pinned content: it runs" "$RC $OUT" "0 "

# An outsider swaps a binary between runs (the tree cannot write there).
cp /usr/bin/false "$EXT/bin"
try_in_tree tdig exec "$EXT/bin"
check "an outsider replaced a pinned binary: refused" "$OUT" "err EPERM"
expect_digest "replaced by an outsider" "$EXT/bin" "$HF"
# Put back with the pinned content (a new ctime, as a rebuild would): the
# kernel hashes it at the exec, finds the pinned digest and runs it.
h0=$(counter pins_hashed)
cp /usr/bin/true "$EXT/bin"
try_in_tree tdig exec "$EXT/bin"
check "put back with the pinned content: it runs (hashed at the exec)" "$RC $OUT" "0 "
check "  ... the kernel counted the hash" "$(counter pins_hashed)" "$((h0 + 1))"
try_in_tree tdig exec "$EXT/bin"
check "  ... the next exec runs too, hashed again (the kernel enters nothing)" \
	"$RC $OUT $(counter pins_hashed)" "0  $((h0 + 2))"
# Mapped as code, a changed identity is not hashed in the kernel: the
# refusal makes the daemon hash it again, and the next mapping holds.
fresh=".hook == \"mmap\" and .target == \"$EXT/bin\" and .not_entered == \"changed within the last 2 s\""
n0=$(audit_count "$fresh")
# The tree is up and waiting before the chmod, so that the mapping follows
# it within the 2 s on a slow host too (a run's start is not in between).
mkfifo "$SH_TMP/chmod.go"
$CTL run --policy tdig -- /usr/bin/bash -c 'echo up; read -r _ <"$1"; exec "$2" mmap-exec "$3" 1' \
	sh "$SH_TMP/chmod.go" "$WALL" "$EXT/bin" >"$SH_TMP/chmod.out" 2>&1 &
rp=$!
wait_until grep -q '^up$' "$SH_TMP/chmod.out"
chmod 0755 "$EXT/bin"
# (Opened for reading and writing: the write never waits for the tree's
# open, and stays in the FIFO until the tree reads it.)
exec {go}<>"$SH_TMP/chmod.go"
echo go >&"$go"
wait $rp
exec {go}>&-
OUT=$(sed -n 2p "$SH_TMP/chmod.out")
check "a pinned file touched (chmod) a moment ago, mapped as code: refused" "$OUT" "err EPERM"
check "  ... found as pinned, not entered yet: changed within the last 2 s" \
	"$(audit_wait "$fresh" $((n0 + 1)))" $((n0 + 1))
# The daemon trusts a ctime only once its clock tick is surely over.
settled() { (( $(date +%s) - $(stat -c %Z "$1") >= 3 )); }
wait_until settled "$EXT/bin"
run_in_tree tdig "$WALL" mmap-exec "$EXT/bin" 1
check "  ... later, refused again" "$OUT" "err EPERM"
audit_wait ".hook == \"mmap\" and .target == \"$EXT/bin\" and .repinned == true" >/dev/null
ev_fields "$(audit_last ".hook == \"mmap\" and .target == \"$EXT/bin\"")"
check "  ... the daemon hashed it again and entered it" "${F[reason]-} ${F[found]-} ${F[repinned]-}" \
	"digest mismatch sha256:$HT true"
run_in_tree tdig "$WALL" mmap-exec "$EXT/bin" 1
check "  ... the next mapping holds" "$OUT" ok

# Another binary renamed or linked onto a pinned name.
try_in_tree tdig rename "$W/evil" "$W/copy"
check "twin: the tree may rename in its work dir" "$OUT" ok
try_in_tree tdig exec "$W/copy"
check "another binary renamed onto a pinned name: refused" "$OUT" "err EPERM"
expect_digest "renamed onto" "$W/copy" "$HI"
try_in_tree tdig link "$W/evil2" "$W/lnk"
check "twin: the tree may link in its work dir" "$OUT" ok
try_in_tree tdig exec "$W/lnk"
check "another binary linked onto a pinned name (none at apply): refused" "$OUT" "err EPERM"
expect_digest "linked onto" "$W/lnk" "$HI"

# A writer open: a page it dirtied could change without a new ctime. The
# kernel refuses the exec itself (ETXTBSY); a mapping as code is ours.
exec 7>>"$W/held"
try_in_tree tdig exec "$W/held"
check "a pinned file open for writing by an outsider: its exec refused (ETXTBSY)" "$OUT" \
	"err ETXTBSY"
run_in_tree tdig "$WALL" mmap-exec "$W/held" 1
check "  ... mapped as code while open for writing: refused" "$OUT" "err EPERM"
check "  ... recorded" \
	"$(audit_wait ".hook == \"mmap\" and .target == \"$W/held\" and .reason == \"digest mismatch\"")" 1
exec 7>&-
try_in_tree tdig exec "$W/held"
check "  ... once closed, it runs" "$RC $OUT" "0 "
check "kernel counter deny_exec: one per refusal" "$(( $(counter deny_exec) - c0 ))" 5

# Mapped as code: judged as the exec is.
run_in_tree tdig "$WALL" mmap-exec "$W/tool" 1
check "the overwritten file mapped as code: refused" "$OUT" "err EPERM"
check "  ... recorded" \
	"$(audit_wait ".hook == \"mmap\" and .target == \"$W/tool\" and .reason == \"digest mismatch\"")" 1
run_in_tree tdig "$WALL" mmap-exec "$W/held" 1
check "twin: the pinned file that holds mapped as code" "$OUT" ok

# A pinned allow's mapping is memoized like any other (the rule its name
# meets); whether the file is still what was pinned is asked at every
# mapping, memo or not.
c1=$(counter memo_hits)
run_in_tree tdig "$WALL" mmap-exec "$W/held" 1
c2=$(counter memo_hits)
run_in_tree tdig "$WALL" mmap-exec "$W/held" 17
c3=$(counter memo_hits)
check "the pinned file mapped 17 times in one process: allowed" "$OUT" ok
check "  ... through its memo (memo hits: one mapping $((c2 - c1)), 17 mappings $((c3 - c2)))" \
	"$( (( (c3 - c2) - (c2 - c1) >= 12 )) && echo yes)" yes
# Mapped twice (the second by the memo the first stored), then opened for
# writing by an outsider, then mapped again by the same tree a moment
# later, its memo still there: each side opens both FIFOs for reading and
# writing, so no open waits, and each wait ends in 60 s.
mkfifo "$W/to-host" "$W/to-tree"
h0=$(counter memo_hits) m0=$(counter deny_mmap)
(
	exec 8<>"$W/to-host" 9<>"$W/to-tree"
	read -r -t 60 _ <&8
	counter memo_hits >"$W/hits"
	exec 7>>"$W/held"
	echo go >&9
	read -r -t 60 _ <&8
) &
holder=$!
run_in_tree tdig /usr/bin/bash -c "exec 8<>$W/to-host 9<>$W/to-tree
	$WALL mmap-exec $W/held 2; echo >&8; read -r -t 60 _ <&9
	$WALL mmap-exec $W/held 1; $SH_BUILD/tests/vm/escape mprotect-exec $W/held; echo >&8"
wait "$holder"
check "the pinned file mapped twice, opened for writing by an outsider, mapped again, made code by mprotect: both refused" \
	"$(grep -E '^(ok$|err )' "$SH_TMP/last.out" | tr '\n' ' ')" "ok err EPERM err EPERM "
check "  ... the second mapping went by the memo the first stored" \
	"$( (( $(cat "$W/hits") - h0 >= 1 )) && echo yes)" yes
check "  ... both recorded (mmap-exec, mprotect-exec)" \
	"$(audit_wait ".hook == \"mmap\" and .op == \"mmap-exec\" and .target == \"$W/held\" and .reason == \"digest mismatch\"" 2) $(audit_wait ".hook == \"mmap\" and .op == \"mprotect-exec\" and .target == \"$W/held\" and .reason == \"digest mismatch\"")" "2 1"
check "  ... and counted in the kernel (deny_mmap)" "$(( $(counter deny_mmap) - m0 ))" 2
run_in_tree tdig "$WALL" mmap-exec "$W/held" 1
check "  ... closed by the outsider, mapped: allowed" "$OUT" ok
run_in_tree tdig "$SH_BUILD/tests/vm/escape" mprotect-exec "$W/held"
check "  ... and made code by mprotect: allowed" "$OUT" ok

# An open the kernel marks as having made its file (FMODE_CREATED) is
# judged at the create by its name alone (bpf/file.c, created_here). On a
# file system that takes its server's word the marked open may be of a
# file that was there: the name looked up while the file is away (the
# kernel keeps "missing"), the file put back behind the mount's back, then
# an O_CREAT open finds the name missing, bindfs opens the file there, and
# the kernel marks the open as the one that made it.
remembered_missing() { # NAME: away, looked up through the mount, back
	mv "$FSRC/$1" "$FSRC/$1.away"
	check "  ... $1 looked up while away: missing" "$(stat "$FUSE/$1" 2>&1 | grep -c 'No such file')" 1
	mv "$FSRC/$1.away" "$FSRC/$1"
}
check "  ... bindfs mounted" "$(mountpoint -q "$FUSE" && echo yes)" yes
c0=$(counter created_opens)
remembered_missing plain
try_in_tree tdig open "$FUSE/plain" creat
check "an existing file's O_CREAT open the kernel marks as making it: opens" "$OUT" ok
check "  ... counted as made by the open (the mark was there)" "$(counter created_opens)" "$((c0 + 1))"
check "  ... the file was there: its content stays, the same file" \
	"$(cat "$FSRC/plain") $(stat -c %i "$FUSE/plain")" "plain $(stat -c %i "$FSRC/plain")"
remembered_missing tool
try_in_tree tdig open "$FUSE/tool" creat
check "the same open of a pinned tool: refused (what goes by the inode is looked at)" \
	"$OUT" "err EPERM"
check "  ... recorded" \
	"$(audit_wait ".op == \"open\" and .target == \"$FUSE/tool\" and .reason == \"pinned executable\"")" 1
check "  ... not taken as made by the open" "$(counter created_opens)" "$((c0 + 1))"
check "  ... the tool unchanged" "$(sha "$FSRC/tool")" "$HT"

# policy check and policy pin.
out=$($SH_BUILD/sharnessctl policy check "$POL" 2>&1)
check_match "policy check: an allowed binary under a write rule" "$out" \
	"tdig.policy:[0-9]+: warning: exec allow $W/tool lies under write rule $W/"
out=$($SH_BUILD/sharnessctl policy pin "$POL")
check_match "policy pin shows what changed" "$out" "$W/tool: changed: sha256:$HT -> sha256:$HF"
check_match "  ... and what did not" "$out" "$EXT/bin: unchanged"
check "  ... the file is not written without --write" "$(grep -c "sha256:$HF" "$POL")" 0
$SH_BUILD/sharnessctl policy pin --write "$POL" >/dev/null
check "policy pin --write puts the new digest in" "$(grep -c "^allow = $W/tool sha256:$HF\$" "$POL")" 1
$CTL policy reload >/dev/null
try_in_tree tdig exec "$W/tool"
check "after the reload, the tool as it is now runs" "$RC" 1

ev=$(jq -c 'select(.event == "run-start" and .policy == "tdig")' "$AUDIT" | tail -n 1)
check_match "run-start names the policy digest" "$(jq -r .policy_digest <<<"$ev")" '^[0-9a-f]{16}$'
check_log_valid
