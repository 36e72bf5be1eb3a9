#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Exec allowlist at bprm_check_security, judged on the file actually executed.
. "$(dirname "$0")/lib.sh"

A=$SH_TMP/allowed
mkdir -p "$A"
mkfifo "$SH_TMP/fifo"
cp /usr/bin/true "$A/ok"
cp /usr/bin/true "$A/denied"
ln -s /usr/bin/id "$A/idlink"
printf '#!/usr/bin/bash\nexit 7\n' >"$A/script-ok"
printf '#!/usr/bin/id\n' >"$A/script-badinterp"
chmod +x "$A/ok" "$A/denied" "$A/script-ok" "$A/script-badinterp"

cat >"$SH_TMP/policies/texec.policy" <<P
[policy]
name = texec
[exec]
allow = /usr/bin/bash
allow = /usr/bin/true
allow = /usr/bin/seq
allow = /usr/bin/mv
allow = $SH_BUILD/tests/vm/
allow = $A/
deny = $A/denied
P
sed -e 's/name = texec/name = taudit\nmode = audit/' "$SH_TMP/policies/texec.policy" \
	>"$SH_TMP/policies/taudit.policy"

# A daemon with an invalid policy refuses to start, and says where.
cp "$SH_TMP/policies/texec.policy" "$SH_TMP/bad.policy"
echo "bogus = 1" >>"$SH_TMP/bad.policy"
mkdir -p "$SH_TMP/badpol" && cp "$SH_TMP/bad.policy" "$SH_TMP/badpol/"
"$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/badpol" --audit-log "$SH_TMP/bad.jsonl" \
	--socket "$SH_TMP/bad.sock" 2>"$SH_TMP/bad.err"
check "daemon refuses an invalid policy (exit 2)" "$?" 2
check_match "daemon names FILE:LINE of the error" "$(cat "$SH_TMP/bad.err")" "bad.policy:[0-9]+:"

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"

check "no denial yet" "$(counter deny_exec)" 0

# Allowed and denied, side by side.
$CTL run --policy texec -- /usr/bin/true
check "allowlisted exec runs" "$?" 0

try_in_tree texec exec /usr/bin/id
check "non-allowlisted exec refused" "$OUT" "err EPERM"
check "try reports the failure" "$RC" 1
check "denial reaches the audit log" "$(audit_wait '.hook=="exec" and .target=="/usr/bin/id"')" 1
ev=$(audit_last '.hook=="exec" and .target=="/usr/bin/id"')
check "event: policy" "$(field policy "$ev")" texec
check "event: action" "$(field action "$ev")" deny
check "event: comm" "$(field comm "$ev")" try
check "event: uid" "$(field uid "$ev")" 0
check "event: errno" "$(field errno "$ev")" 1
check "event: reason" "$(field reason "$ev")" "not allowed"
check_match "event: cgroup is the run's" "$(field cgroup "$ev")" '^/sys/fs/cgroup/sharness/run-[0-9]+$'
check_match "event: time is RFC 3339 UTC" "$(field time "$ev")" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z$'
check_match "event: pid and ppid" "$(field pid "$ev") $(field ppid "$ev")" '^[0-9]+ [0-9]+$'
check_match "event: run id" "$(field run "$ev")" '^[0-9]+$'
check "kernel counter: one exec denial" "$(counter deny_exec)" 1
run=$(field run "$ev")
check "run-start record of the run" "$(grep -c "\"event\":\"run-start\",\"run\":$run," "$AUDIT")" 1
rend=$(grep "\"event\":\"run-end\",\"run\":$run," "$AUDIT")
check "run-end record: status" "$(field status "$rend")" "exit:1"
check "run-end record: denials counted" "$(field denials "$rend")" 1
check "run-end record: processes killed" "$(field killed "$rend")" 0

# Outside every tagged tree nothing is touched.
try_outside exec /usr/bin/id -u
check "outside the tree: same exec runs" "$OUT" 0
check "kernel counter unchanged by outsiders" "$(counter deny_exec)" 1

# --user: the command runs as that user, and is held just the same.
OUT=$($CTL run --policy texec --user nobody -- "$TRY" exec /usr/bin/id 2>/dev/null | head -1)
check "run --user: a non-root tree is refused too" "$OUT" "err EPERM"
check "run --user: the event carries the user's uid" \
	"$(field uid "$(audit_last '.hook=="exec" and .uid==65534')")" 65534
OUT=$($CTL run --policy texec --user nobody -- /usr/bin/bash -c 'echo $EUID' 2>/dev/null)
check "run --user: runs as that user" "$OUT" 65534

# sharnessctl run reports a refused command as "cannot execute" (126).
$CTL run --policy texec -- /usr/bin/id 2>"$SH_TMP/run.err"
check "run: refused CMD exits 126" "$?" 126
check_match "run: says why" "$(cat "$SH_TMP/run.err")" "Operation not permitted"

# Judged on the resolved file: symlink, relative path, '..', /proc/self/root.
try_in_tree texec exec "$A/idlink"
check "symlink to a refused binary: refused" "$OUT" "err EPERM"
check "symlink: event names the resolved file" \
	"$(audit_wait '.target=="/usr/bin/id"' 4)" 4
OUT=$(cd /usr/lib && $CTL run --policy texec -- "$TRY" exec ../bin/id 2>/dev/null | head -1)
check "relative path with '..': refused" "$OUT" "err EPERM"
try_in_tree texec exec /proc/self/root/usr/bin/id
check "/proc/self/root path: refused" "$OUT" "err EPERM"
check "each recorded against /usr/bin/id" "$(audit_wait '.target=="/usr/bin/id"' 6)" 6

# Longest rule wins: a deny inside an allowed directory.
try_in_tree texec exec "$A/ok"
check "allowed directory: binary runs" "$RC" 0
try_in_tree texec exec "$A/denied"
check "deny rule inside the allowed directory: refused" "$OUT" "err EPERM"
ev=$(audit_last ".target==\"$A/denied\"")
check "deny rule: reason" "$(field reason "$ev")" "deny rule"

# Interpreters are judged too.
$CTL run --policy texec -- "$A/script-ok"
check "#! script with an allowed interpreter runs" "$?" 7
try_in_tree texec exec "$A/script-badinterp"
check "#! script with a refused interpreter: refused" "$OUT" "err EPERM"

# Descendants: a background grandchild in its own session is still held.
$CTL run --policy texec -- /usr/bin/bash -c \
	"( $TRY exec /usr/bin/id >$SH_TMP/bg.tmp 2>&1; mv $SH_TMP/bg.tmp $SH_TMP/bg.out ) &
	 for i in \$(seq $((SH_WAIT * 20))); do [ -e $SH_TMP/bg.out ] && break; read -t 0.05 <>$SH_TMP/fifo; done" 2>/dev/null
check "background grandchild refused" "$(head -1 "$SH_TMP/bg.out")" "err EPERM"

# tag / untag of an existing cgroup.
CG=/sys/fs/cgroup/t_exec_manual
mkdir -p $CG
$CTL tag $CG texec
check "tag an existing cgroup" "$?" 0
OUT=$(bash -c "echo \$\$ > $CG/cgroup.procs; exec $TRY exec /usr/bin/id" | head -1)
check "process in the tagged cgroup refused" "$OUT" "err EPERM"
$CTL untag $CG
check "untag" "$?" 0
OUT=$(bash -c "echo \$\$ > $CG/cgroup.procs; exec $TRY exec /usr/bin/id -u" | head -1)
check "after untag the same exec runs" "$OUT" 0
rmdir $CG 2>/dev/null

# A process judged outside every tree (membership by cgroup, cached for
# the tag generation) is held the moment its cgroup is tagged, and so is
# a process in a cgroup made under the tagged one afterwards.
CG=/sys/fs/cgroup/t_exec_memo
mkdir -p $CG
rm -f "$SH_TMP/memo.go" && mkfifo "$SH_TMP/memo.go"
bash -c "echo \$\$ > $CG/cgroup.procs; ( $TRY exec /usr/bin/id -u ) >$SH_TMP/memo1;
	read -r _ <$SH_TMP/memo.go; exec $TRY exec /usr/bin/id -u" >"$SH_TMP/memo2" &
memo=$!
wait_until test -s "$SH_TMP/memo1"
check "outside every tree: the exec runs" "$(head -1 "$SH_TMP/memo1")" 0
$CTL tag $CG texec
echo go >"$SH_TMP/memo.go"
wait $memo
check "the same process once its cgroup is tagged: refused" "$(head -1 "$SH_TMP/memo2")" "err EPERM"
mkdir $CG/later
OUT=$(bash -c "echo \$\$ > $CG/later/cgroup.procs; exec $TRY exec /usr/bin/id" | head -1)
check "a cgroup made under the tagged one afterwards: refused" "$OUT" "err EPERM"
$CTL untag $CG
OUT=$(bash -c "echo \$\$ > $CG/later/cgroup.procs; exec $TRY exec /usr/bin/id -u" | head -1)
check "untagged again: the same exec runs" "$OUT" 0
rmdir $CG/later $CG 2>/dev/null

# Cgroups found outside are remembered in an array of 4,096 words, a
# cgroup's word at (its id mod 4,096) and a keyed hash of the id: a tagged
# cgroup whose slot holds an outsider cgroup's word is still found in its
# tree. Two cgroups of one slot: made in batches until two ids (the
# directories' inode numbers) agree mod 4,096.
P=/sys/fs/cgroup/t_exec_slots
mkdir -p $P
declare -A slot_of=()
CA='' CB=''
# (Ids go up by one or two a cgroup: some 2,000 to 4,100 are made. Each
# batch is stat'ed alone.)
for batch in $(seq 0 16); do
	mkdir $(seq -f "$P/c$batch-%g" 1 256)
	while read -r ino name; do
		sl=$((ino % 4096))
		if [ -n "${slot_of[$sl]:-}" ] && [ "${slot_of[$sl]}" != "$name" ]; then
			CA=$P/${slot_of[$sl]} CB=$P/$name
			break 2
		fi
		slot_of[$sl]=$name
	done < <(stat -c '%i %n' $(seq -f "$P/c$batch-%g" 1 256) | sed "s|$P/||")
done
echo "two cgroups of one slot: in batch $batch (of 256 cgroups)"
check "two cgroups of one slot found" "$([ -n "$CB" ] && echo yes)" yes
OUT=$(bash -c "echo \$\$ > $CB/cgroup.procs; exec $TRY exec /usr/bin/id -u" | head -1)
check "slot twin, untagged: the exec runs (control)" "$OUT" 0
$CTL tag "$CB" texec
OUT=$(bash -c "echo \$\$ > $CA/cgroup.procs; exec $TRY exec /usr/bin/id -u" | head -1)
check "slot: the outsider's exec runs, its word stored" "$OUT" 0
OUT=$(bash -c "echo \$\$ > $CB/cgroup.procs; exec $TRY exec /usr/bin/id" | head -1)
check "slot twin, tagged, after the outsider: refused" "$OUT" "err EPERM"
$CTL untag "$CB"
rmdir $P/c[0-9]* $P 2>/dev/null

# Only cgroups can be tagged, and only as deep as the programs look.
$CTL tag /tmp texec 2>"$SH_TMP/tag.err"
check "tag of a path that is no cgroup: refused" "$?" 1
check_match "tag of a non-cgroup says why" "$(cat "$SH_TMP/tag.err")" "not a cgroup v2 directory"
deep=/sys/fs/cgroup/t_exec_deep
p31=$deep
for i in $(seq 30); do p31=$p31/d; done          # level 31
mkdir -p "$p31/d"
$CTL tag "$p31/d" texec 2>"$SH_TMP/tag.err"
check "tag of a level-32 cgroup: refused" "$?" 1
check_match "too deep says why" "$(cat "$SH_TMP/tag.err")" "levels deep"
$CTL tag "$p31" texec
check "tag of a level-31 cgroup" "$?" 0
OUT=$(bash -c "echo \$\$ > $p31/cgroup.procs; exec $TRY exec /usr/bin/id" | head -1)
check "a process at level 31 is held" "$OUT" "err EPERM"
$CTL untag "$p31"
find "$deep" -depth -type d -exec rmdir {} \; 2>/dev/null

# Audit mode: logged, not refused.
before=$(counter audit_exec)
try_in_tree taudit exec /usr/bin/id -u
check "audit mode: exec runs" "$OUT" 0
check "audit mode: logged as audit" \
	"$(audit_wait '.policy=="taudit" and .action=="audit" and .hook=="exec" and .target=="/usr/bin/id"')" 1
check "audit mode: audit counter" "$(counter audit_exec)" $((before + 1))

check_log_valid

# Unloading (refused while a run is tagged, --force, the run free after):
# t_pinned, whose pins are its own; the next file resumes this one's.
