#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cgroup patterns: `cgroup = DIR/agent@*.service` tags a matching cgroup as
# it is made, in the kernel, before a process can enter it (a process moved
# in by the same shell command that made it is refused its first
# disallowed exec); one that exists at load is tagged by the load; a
# sibling that does not match stays free; cgroup v2 does not rename; the
# tree cannot make a cgroup of its own to leave by; status, records,
# untag, reload, a stopped daemon and the pattern's removal.
. "$(dirname "$0")/lib.sh"

P=$SH_TMP/policies
VMB=$SH_BUILD/tests/vm
D=/sys/fs/cgroup/t_pattern
NL=$'\n'
rmdir "$D"/*/* "$D"/* "$D" 2>/dev/null
# What a process placed in cgroup $1 may run: /usr/bin/true is allowed,
# /usr/bin/id is not.
BOTH="i=\$($VMB/try exec /usr/bin/id -u); [ \"\$i\" = 0 ] && i=ok || i=\${i#err }
$VMB/try exec /usr/bin/true >/dev/null && t=ok || t=EPERM
echo \"id=\$i true=\$t\""
in_cg() { /usr/bin/bash -c "echo \$\$ >$1/cgroup.procs && $BOTH"; }
# made_in NAME: the cgroup made and entered by one shell command, then
# both execs: nothing runs between the mkdir and the move.
made_in() { /usr/bin/bash -c "mkdir $D/$1 && echo \$\$ >$D/$1/cgroup.procs && $BOTH"; }
policy() { # [PATTERN]
	{
		printf '[policy]\nname = pat1\n'
		[ -z "${1:-}" ] || printf 'cgroup = %s\n' "$1"
		printf '[exec]\nallow = /usr/bin/bash\nallow = /usr/bin/true\nallow = %s/\n' "$VMB"
	} >"$P/pat1.policy"
}

start_daemon || { fail "daemon starts"; exit 1; }

# ---- a pattern whose directory is missing: FILE:LINE, check and reload agree
policy "$D/agent@*.service"
out=$($CTL policy reload 2>&1)
check "a pattern under a missing directory: reload refused (2)" "$?" 2
check_match "... FILE:LINE says the directory is no cgroup" "$out" \
	"$P/pat1.policy:3: cgroup pattern '?$D/agent@\\*\\.service'?: its directory is not a cgroup v2 directory"
out2=$($SH_BUILD/sharnessctl policy check "$P/pat1.policy" 2>&1)
check "... policy check says the same (exit 1)" "$?:$(grep -c "$P/pat1.policy:3: cgroup pattern" <<<"$out2")" "1:1"
printf '[policy]\nname = pat2\ncgroup = %s/a*/b\n' "$D" >"$P/pat2.policy"
out=$($CTL policy reload 2>&1)
check_match "a glob above the last component: FILE:LINE" "$out" \
	"$P/pat2.policy:3: cgroup pattern '?$D/a\\*/b'?: '\\*', '\\?' and '\\[' may only stand in the last component"
rm -f "$P/pat2.policy"

# ---- load: the match that exists is tagged, its sibling is not ------------
mkdir -p "$D/agent@0.service" "$D/other.service"
out=$($CTL policy reload 2>&1)
check "the pattern loads once its directory exists" "$?" 0
check "a match that existed at load is held" "$(in_cg "$D/agent@0.service")" "id=EPERM true=ok"
check "... its sibling that does not match is free" "$(in_cg "$D/other.service")" "id=ok true=ok"

# ---- made after load: tagged in the kernel before anything enters --------
d0=$(counter deny_exec)
check "a match made and entered in one command: its first disallowed exec refused" \
	"$(made_in agent@1.service)" "id=EPERM true=ok"
check "... counted by the programs" "$(($(counter deny_exec) - d0))" 1
check "... the record names the policy and the cgroup made" \
	"$(audit_wait ".policy == \"pat1\" and .cgroup == \"$D/agent@1.service\" and .target == \"/usr/bin/id\"")" 1
check "... a non-matching sibling made the same way is free" "$(made_in worker-1.service)" "id=ok true=ok"
check "... a cgroup below a match is in its tree" \
	"$(mkdir "$D/agent@1.service/sub" && in_cg "$D/agent@1.service/sub")" "id=EPERM true=ok"

# ---- cgroup v2 renames no cgroup: a name is the one it was made with ------
mv "$D/worker-1.service" "$D/agent@9.service" 2>/dev/null
check "a cgroup cannot be renamed into a match (cgroup v2)" \
	"$?:$([ -d "$D/worker-1.service" ] && echo kept)" "1:kept"

# ---- the tree cannot make a cgroup to leave by ----------------------------
out=$(/usr/bin/bash -c "echo \$\$ >$D/agent@0.service/cgroup.procs && exec $VMB/try mkdir $D/free")
check "a tree's mkdir in cgroupfs is refused" "$out" "err EPERM"
check "... recorded under the cgroup hook" \
	"$(audit_wait ".policy == \"pat1\" and .hook == \"cgroup\" and .op == \"mkdir\" and .cgroup == \"$D/agent@0.service\"")" 1
check "... nothing made" "$([ -e "$D/free" ] && echo made || echo none)" none
check "... its twin outside makes one" "$($VMB/try mkdir "$D/free"; rmdir "$D/free")" ok

# ---- the daemon's own door, from a pattern's tree --------------------------
out=$(/usr/bin/bash -c "echo \$\$ >$D/agent@0.service/cgroup.procs && exec $VMB/wall ctl-connect $SOCK" | head -n 1)
check "a pattern's tree connects to sharnessd's socket: refused" "$out" "err EPERM"
check "... recorded under the connect hook" \
	"$(audit_wait ".policy == \"pat1\" and .hook == \"connect\" and .target == \"$SOCK\"")" 1
check "... its twin outside is accepted" "$($VMB/wall ctl-connect "$SOCK" | head -n 1)" ok

# ---- status, untag, reload, a stopped daemon ------------------------------
st=$($CTL status --json)
check "status --json: the pattern among the policy's cgroups" \
	"$(jq -r '.loaded_policies[] | select(.name == "pat1") | .cgroups[0]' <<<"$st")" "$D/agent@*.service"
check "... and the cgroups it tagged, source pattern" \
	"$(jq -r '[.tagged_cgroups[] | select(.source == "pattern" and .policy == "pat1") | .path] | sort | join(" ")' <<<"$st")" \
	"$D/agent@0.service $D/agent@1.service"
check "... none lost" "$(jq -r .pattern_lost <<<"$st")" 0
check_match "status names the pattern" "$($CTL status)" "cgroup pattern: $D/agent@\\*\\.service  pat1"
out=$($CTL untag "$D/agent@1.service" 2>&1)
check "untag of a pattern's cgroup: refused" "$?" 1
check_match "... and says why" "$out" "tagged by a cgroup pattern of policy 'pat1'"
touch "$P/pat1.policy"
$CTL policy reload >/dev/null 2>&1
check "a reload keeps the pattern's trees held" "$(in_cg "$D/agent@1.service")" "id=EPERM true=ok"
policy "$D/agent@?.service"
$CTL policy reload >/dev/null 2>&1
check "a reload to agent@?.service: a one-character instance made now is held" \
	"$(made_in agent@5.service)" "id=EPERM true=ok"
check "... a two-character one is free" "$(made_in agent@10.service)" "id=ok true=ok"
check "... and the trees it still matches stay held" "$(in_cg "$D/agent@1.service")" "id=EPERM true=ok"
rmdir "$D/agent@10.service" "$D/agent@5.service"
policy "$D/agent@*.service"
$CTL policy reload >/dev/null 2>&1
stop_daemon
check "with the daemon stopped, a match made is still held (the programs tag it)" \
	"$(made_in agent@2.service)" "id=EPERM true=ok"
start_daemon || { fail "daemon restarts"; exit 1; }
check "... and the next daemon lists it" \
	"$($CTL status --json | jq -r '[.tagged_cgroups[] | select(.source == "pattern") | .path] | index("'"$D"'/agent@2.service") != null')" true

# ---- a pattern's directory made again: the pattern says so, a reload follows
mkdir -p "$D/re"
sed -e 's/name = pat1/name = pat2/' -e "s|^cgroup = .*|cgroup = $D/re/j*-?|" "$P/pat1.policy" >"$P/pat2.policy"
$CTL policy reload >/dev/null 2>&1
check "a second policy's pattern, j*-?: job-1 held (the star backs off past 'ob')" \
	"$(made_in re/job-1)" "id=EPERM true=ok"
check "... job-12 free (no way to end on one character after a '-')" "$(made_in re/job-12)" "id=ok true=ok"
rmdir "$D/re/job-12"
# A class: the podman pattern the README gives. Under systemd a container
# runs in libpod-ID.scope and its conmon in libpod-conmon-ID.scope beside
# it; libpod-*.scope would hold conmon too, whose exec of the runtime the
# container's policy refuses. Made before the load (the daemon's match)
# and after it (the programs'), an ID starting with c among them.
ID1=1be2b181856744d67eb0855bfd85a44afbe11bc81121b6d0ee79d13dff3f5d6b
ID2=c2ac5e9ccfdc91e3fd1faf4f5733b1fc9fdccf53dda914be7971c85181b30121
mkdir -p "$D/pm/libpod-$ID1.scope" "$D/pm/libpod-conmon-$ID1.scope"
sed -e 's/name = pat1/name = pat3/' -e "s|^cgroup = .*|cgroup = $D/pm/libpod-[0-9a-f][0-9a-f]*.scope|" \
	"$P/pat1.policy" >"$P/pat3.policy"
$CTL policy reload >/dev/null 2>&1
check "a class, libpod-[0-9a-f][0-9a-f]*.scope: a container's scope there at load held" \
	"$(in_cg "$D/pm/libpod-$ID1.scope")" "id=EPERM true=ok"
check "... its conmon's scope beside it free" "$(in_cg "$D/pm/libpod-conmon-$ID1.scope")" "id=ok true=ok"
check "... one made after the load, its ID starting with c, held" \
	"$(made_in "pm/libpod-$ID2.scope")" "id=EPERM true=ok"
check "... its conmon's made after the load free" \
	"$(made_in "pm/libpod-conmon-$ID2.scope")" "id=ok true=ok"
# A class at the glob's start, negated, and one a star backs off into.
mkdir -p "$D/cls"
sed -i "s|^cgroup = .*|cgroup = $D/cls/[!x]*[0-9]|" "$P/pat3.policy"
$CTL policy reload >/dev/null 2>&1
check "a class first and negated, a star before a class: [!x]*[0-9] holds a1 and zz9" \
	"$(made_in cls/a1) $(made_in cls/zz9)" "id=EPERM true=ok id=EPERM true=ok"
check "... and leaves x1 (its first byte x) and ab (no digit last) free" \
	"$(made_in cls/x1) $(made_in cls/ab)" "id=ok true=ok id=ok true=ok"
# The programs' fail-closed branch: classes never written (every entry of
# cg_classes zeroed, as a generation before classes leaves them) make a
# class pattern match. A reload writes them again.
g=$(ls -d "$PIN"/gen-* | sort -t- -k2 -n | tail -n 1)
zero_map "$g/map_cg_classes" "$SH_TMP/zero.batch"
check "classes zeroed in the kernel (every entry)" "$?" 0
check "... x2, which the class would leave free, held" "$(made_in cls/x2)" "id=EPERM true=ok"
$CTL policy reload >/dev/null 2>&1
check "... written again by a reload: x3 free" "$(made_in cls/x3)" "id=ok true=ok"
# A '[' was itself before classes: a line naming a cgroup of that very
# name is refused, not turned into a class that leaves it free.
mkdir -p "$D/cls/lit[1]"
sed -i "s|^cgroup = .*|cgroup = $D/cls/lit[1]|" "$P/pat3.policy"
out=$($CTL policy reload 2>&1)
check_match "a class whose glob is the name of a cgroup there: reload refused, and why" "$?:$out" \
	"^2:.*pat3.policy:3: cgroup pattern '?$D/cls/lit\\[1\\]'?: a cgroup of that very name exists"
sed -i "s|^cgroup = .*|cgroup = $D/cls/lit[[]1]|" "$P/pat3.policy"
$CTL policy reload >/dev/null 2>&1
check "... written lit[[]1], it loads and holds that cgroup" "$(in_cg "$D/cls/lit[1]")" "id=EPERM true=ok"
rm -f "$P/pat3.policy"
$CTL policy reload >/dev/null 2>&1
rmdir "$D/pm"/* "$D/pm" "$D/cls"/* "$D/cls"
rmdir "$D/re/job-1" "$D/re" && mkdir "$D/re"
check "its directory made again: status counts the pattern stale" \
	"$(counter patterns_stale)" 1
check_match "... and the log says a reload is needed" "$(cat "$SH_TMP/daemon.err")" \
	"cgroup pattern $D/re/j\\*-\\?: its directory is no longer the cgroup the policy loaded with"
$CTL policy reload >/dev/null 2>&1
check "after a reload: nothing stale" "$(counter patterns_stale)" 0
check "... and a match made in the new directory is held" "$(made_in re/job-2)" "id=EPERM true=ok"
rm -f "$P/pat2.policy"

# ---- a pattern beside a cgroup line: what each holds after a reload ------
# outer: a cgroup line on $D/o (id allowed, true refused); inner: a pattern
# below it (true allowed, id refused). A cgroup line that names a match of
# a later pattern, and a name with a leading dot.
mkdir -p "$D/o/.job-0" "$D/o/job-1"
outer() {
	printf '[policy]\nname = outer\ncgroup = %s\n[exec]\nallow = /usr/bin/bash\nallow = /usr/bin/id\nallow = %s/\n' \
		"$D/o" "$VMB" >"$P/outer.policy"
}
inner() { # CGROUP-LINE
	sed -e 's/name = pat1/name = inner/' -e "s|^cgroup = .*|cgroup = $1|" "$P/pat1.policy" >"$P/inner.policy"
}
outer
inner "$D/o/job-1"
$CTL policy reload >/dev/null 2>&1
check "a cgroup line on o/job-1 under o's: job-1 follows its own" "$(in_cg "$D/o/job-1")" "id=EPERM true=ok"
check "... o/.job-0 follows o's" "$(in_cg "$D/o/.job-0")" "id=ok true=EPERM"
inner "$D/o/*"
$CTL policy reload >/dev/null 2>&1
check "the line turned into the pattern o/*: job-1 still follows it" "$(in_cg "$D/o/job-1")" "id=EPERM true=ok"
check "... and .job-0, which existed at load (a dot is a name like any)" "$(in_cg "$D/o/.job-0")" "id=EPERM true=ok"
check "... a match made now as well" "$(made_in o/job-2)" "id=EPERM true=ok"
rm -f "$P/inner.policy"
$CTL policy reload >/dev/null 2>&1
check "the pattern removed: a match made now follows o's line (no stale table, no empty tag)" \
	"$(made_in o/job-3)" "id=ok true=EPERM"
check "... and the trees it had made follow o's too" "$(in_cg "$D/o/job-2")" "id=ok true=EPERM"
rm -f "$P/outer.policy"
$CTL policy reload >/dev/null 2>&1
rmdir "$D"/o/* "$D"/o/.job-0 "$D/o" 2>/dev/null

# ---- out by a descriptor opened before, then the cgroup removed ----------
# A process that entered with a descriptor of another cgroup.procs (which
# no tree can open itself), and opened a file in the tree (so the programs
# have seen it there), moves out by it, and its cgroup is removed: its
# tag stays while it lives (held, not let go by the daemon's tidying),
# through whole reloads (the removed cgroup judged by the name it was made
# with), and goes once it has ended. agent@7 is tagged by the programs as
# it is made; agent@8, made while no pattern was in force, by the reload
# that brings the pattern back.
policy
$CTL policy reload >/dev/null 2>&1
mkdir "$D/agent@8.service"
policy "$D/agent@*.service"
$CTL policy reload >/dev/null 2>&1
mkdir "$D/agent@7.service"
declare -A idn pid
for n in 7 8; do
	idn[$n]=$(stat -c %i "$D/agent@$n.service")
	mkfifo "$SH_TMP/go$n"
	/usr/bin/bash -c "exec 3>$D/other.service/cgroup.procs
echo \$\$ >$D/agent@$n.service/cgroup.procs && exec 4</dev/null && echo \$\$ >&3 &&
read -r _ <$SH_TMP/go$n && $BOTH" \
		>"$SH_TMP/out$n" 2>&1 &
	pid[$n]=$!
done
in_other() { grep -qx "0::/t_pattern/other.service" "/proc/${pid[$1]}/cgroup" 2>/dev/null; }
wait_until in_other 7 && wait_until in_other 8
check "members move themselves out by a descriptor opened before they entered" \
	"$(in_other 7 && in_other 8 && echo out)" out
rmdir "$D/agent@7.service" "$D/agent@8.service"
check "... their cgroups removed, status tidies the tags" "$($CTL status >/dev/null; echo $?)" 0
tagn() { bpftool -j map dump pinned "$(ls -d "$PIN"/gen-*/ | tail -n 1)map_tags" 2>/dev/null |
	jq --argjson id "${idn[$1]}" '[.[] | select(.key == $id or (.formatted.key? // -1) == $id)] | length'; }
check "... the tags of the removed cgroups stay while the processes live" "$(tagn 7) $(tagn 8)" "1 1"
$CTL policy reload >/dev/null 2>&1 && $CTL policy reload >/dev/null 2>&1
check "... two whole reloads" "$?" 0
$CTL status >/dev/null
check "... the tags still there after them" "$(tagn 7) $(tagn 8)" "1 1"
for n in 7 8; do
	echo go >"$SH_TMP/go$n"
	wait "${pid[$n]}"
	check "... and still holding agent@$n's: its disallowed exec refused" "$(cat "$SH_TMP/out$n")" \
		"id=EPERM true=ok"
done
$CTL status >/dev/null
check "... once they have ended, the tags go" "$(tagn 7) $(tagn 8)" "0 0"

# ---- many matches: a reload rewrites each tag once, and ends -------------
# 300 tags in a 4,096-bucket hash map: some share a bucket, where an update
# moves the element to the bucket's head (a walk that updated as it went
# met two of them in turn for ever, and the reload never answered).
base=$(counter tagged)
mkdir "$D"/agent@{100..399}.service
check "300 matches made: each tagged" "$(counter tagged)" $((base + 300))
timeout 120 $CTL policy reload >/dev/null 2>&1
rc=$?
check "... a reload over them answers (0)" "$rc" 0
[ "$rc" = 124 ] && { stop_daemon KILL; exit 1; }   # it would answer nothing more
check "... and one of them is still held" "$(in_cg "$D/agent@250.service")" "id=EPERM true=ok"
rmdir "$D"/agent@{100..399}.service
check "... removed: status lists none of them" "$(counter tagged)" "$base"

# ---- held-from = exec: a runtime sets the tree up, its command is held ---
# A process that arrives from outside (moved in, or cloned into the cgroup
# by a host process) is the host's until its next exec, which is judged;
# its children made before are the same. A pending process is outside to
# the tree: the tree's members may not trace it. held-from = entry (the
# default) holds it at once: the control.
ESC=$VMB/escape
fromexec() { # entry|exec
	printf '[policy]\nname = pat3\ncgroup = %s/ct-*\nheld-from = %s\n[exec]\nallow = /usr/bin/bash\nallow = /usr/bin/true\nallow = %s/\n' \
		"$D" "$1" "$VMB" >"$P/pat3.policy"
}
# runtime CGROUP: as runc init: moves itself in (a host process), sets up
# (a chroot, which no member may do), maps code (a file the policy does
# not allow: judged as the tree's; a library: allowed), runs a child, then
# execs the command (/usr/bin/id, which the policy refuses) and tries the
# set-up again.
cp /usr/bin/true "$SH_TMP/code.bin"
RT='import errno, mmap, os, subprocess, sys
def r(f, *a):
    try:
        f(*a)
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
def mapx(p):
    fd = os.open(p, os.O_RDONLY)
    try:
        mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
    finally:
        os.close(fd)
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
out = ["set-up=" + r(os.chroot, "/")]
out.append("map=" + r(mapx, sys.argv[3]))
out.append("lib=" + r(mapx, "/usr/lib/x86_64-linux-gnu/libc.so.6"))
c = subprocess.run([sys.argv[2], "chroot", "/"], capture_output=True, text=True)
out.append("child=" + c.stdout.split("\n")[0].replace("err ", ""))
out.append("exec=" + r(os.execv, "/usr/bin/id", ["id", "-u"]))
out.append("after=" + r(os.chroot, "/"))
print(" ".join(out))'
runtime() { mkdir -p "$D/$1" && python3 -c "$RT" "$D/$1" "$ESC" "$SH_TMP/code.bin"; }
# waiter NAME: a process in cgroup $D/NAME (there before the policy),
# waiting for a line on $SH_TMP/go-NAME, then setting up (a chroot); its
# answer in $SH_TMP/out-NAME.
waiter() {
	mkdir -p "$D/$1"
	mkfifo "$SH_TMP/go-$1"
	python3 -c 'import errno, os, sys
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
open(sys.argv[2]).read()
try:
    os.chroot("/")
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$D/$1" "$SH_TMP/go-$1" >"$SH_TMP/out-$1" 2>&1 &
}
release() { echo go >"$SH_TMP/go-$1"; wait "$2"; cat "$SH_TMP/out-$1"; }
waiter ct-9   # held when the policy comes
p9=$!
waiter ct-8   # a member moves it (below)
p8=$!
waiter other.service   # a process of the host, which a member moves (below)
ph=$!
in9() { grep -qx "0::/t_pattern/ct-9" "/proc/$p9/cgroup" && grep -qx "0::/t_pattern/ct-8" "/proc/$p8/cgroup" &&
	grep -qx "0::/t_pattern/other.service" "/proc/$ph/cgroup"; }
wait_until in9
fromexec entry
$CTL policy reload >/dev/null 2>&1
check "held-from = entry loads" "$?" 0
check "held-from = entry: a process moved in is held at once (set-up refused)" \
	"$(runtime ct-0)" "set-up=EPERM map=EPERM lib=ok child=EPERM exec=EPERM after=EPERM"
fromexec exec
$CTL policy reload >/dev/null 2>&1
d0=$(counter deny_exec) m0=$(counter deny_mmap)
check "held-from = exec: moved in, it sets up (its code judged); its child is held from its exec; its own exec refused leaves it the host's" \
	"$(runtime ct-1)" "set-up=ok map=EPERM lib=ok child=EPERM exec=EPERM after=ok"
check "... the refused mapping and exec counted" "$(counter deny_mmap):$(counter deny_exec)" "$((m0 + 1)):$((d0 + 1))"
check "... and recorded under the policy, with the cgroup's path" \
	"$(audit_wait ".policy==\"pat3\" and .hook==\"exec\" and .target==\"/usr/bin/id\" and .cgroup==\"$D/ct-1\"")" 1
check "a process in a match before the policy held it: held at once (its set-up refused)" \
	"$(release ct-9 "$p9")" "EPERM"
# member_try CGROUP OP...: try OP as a member of $D/CGROUP (held from the
# exec of try).
member_try() {
	local cg=$1
	shift
	/usr/bin/bash -c "echo \$\$ >$D/$cg/cgroup.procs && exec $VMB/try $*" | head -n 1
}
# A pending process keeps a descriptor of ct-6's cgroup.procs past its
# exec (a member now) and moves ct-8's process and a process of the host
# through it: a member's move is no arrival. Both are held (foreign: not
# the tree's either, so it may not read the host process's environment).
mkdir -p "$D/ct-5" "$D/ct-6"
mkfifo "$SH_TMP/armed6" "$SH_TMP/armed7"
/usr/bin/bash -c "echo \$\$ >$D/ct-6/cgroup.procs && exec /usr/bin/bash -c 'read -r _ <$SH_TMP/armed6'" &
a6=$!
mkdir -p "$D/ct-7"   # another tree (of the same pattern): its member
/usr/bin/bash -c "echo \$\$ >$D/ct-7/cgroup.procs && exec /usr/bin/bash -c 'read -r _ <$SH_TMP/armed7'" &
a7=$!
# member_moves PIDS: a pending process of ct-5 keeps a descriptor of
# ct-6's cgroup.procs past its exec and moves PIDS through it, a member
# then (its output: "moved" in $SH_TMP/mover).
member_moves() {
	python3 -c 'import os, sys
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
fd = os.open(sys.argv[2] + "/cgroup.procs", os.O_WRONLY)
os.set_inheritable(fd, True)
os.execv("/usr/bin/bash", ["bash", "-c", "for p in %s; do echo $p >&%d || exit; done && echo moved" % (sys.argv[3], fd)])' \
		"$D/ct-5" "$D/ct-6" "$1" >"$SH_TMP/mover" 2>&1
}
armed6() { grep -q "read -r" "/proc/$a6/cmdline" && grep -q "read -r" "/proc/$a7/cmdline"; }
wait_until armed6
member_moves "$p8 $ph $a7"
check "a member moves a process of the tree, one of the host and another tree's member by a descriptor it kept from before its exec" \
	"$(cat "$SH_TMP/mover"):$(cat "/proc/$p8/cgroup" "/proc/$ph/cgroup" "/proc/$a7/cgroup" | grep -c "0::/t_pattern/ct-6")" "moved:3"
check "... the tree may not read the host process's environment" \
	"$(member_try ct-6 open "/proc/$ph/environ" r)" "err EACCES"
check "... nor the other tree's member's" "$(member_try ct-6 open "/proc/$a7/environ" r)" "err EACCES"
check "... it may read its own member's there" "$(member_try ct-6 open "/proc/$a6/environ" r)" ok
check "... the tree's process is held (its set-up refused)" "$(release ct-8 "$p8")" "EPERM"
check "... and so is the host's" "$(release other.service "$ph")" "EPERM"
# Moved while busy: each victim opens a file in a loop, so its own hooks
# run while it is moved (and would find it the tree's member first, were
# it marked after the move).
busy() { /usr/bin/bash -c "echo \$\$ >$D/$1/cgroup.procs && exec /usr/bin/bash -c 'while :; do : </dev/null; done'" & }
busy other.service; b1=$!
busy other.service; b2=$!
busy ct-7; b3=$!
busy ct-7; b4=$!
looping() { local p; for p in $b1 $b2 $b3 $b4; do grep -q "while" "/proc/$p/cmdline" || return; done; }
wait_until looping
member_moves "$b1 $b2 $b3 $b4"
check "a member moves two busy processes of the host and two busy members of another tree" \
	"$(cat "$SH_TMP/mover"):$(cat /proc/{$b1,$b2,$b3,$b4}/cgroup | grep -c "0::/t_pattern/ct-6")" "moved:4"
readable=$(/usr/bin/bash -c "echo \$\$ >$D/ct-6/cgroup.procs && exec /usr/bin/bash -c 'for p in $b1 $b2 $b3 $b4 $a6; do { : </proc/\$p/environ; } 2>/dev/null && echo \$p; done'" | tr '\n' ' ')
check "... the tree may read none of their environments (its own member's it may)" "$readable" "$a6 "
kill "$b1" "$b2" "$b3" "$b4"
echo go >"$SH_TMP/armed6"
echo go >"$SH_TMP/armed7"
wait "$a6" "$a7" "$b1" "$b2" "$b3" "$b4" 2>/dev/null
mkdir "$D/ct-2"
check "cloned into the cgroup by a host process (clone3): it sets up, then its exec holds it" \
	"$($ESC clone-into-cgroup "$D/ct-2" "$ESC" chroot / | head -n 2 | tr '\n' ' ')" "set-up=ok err EPERM "
check "... cloned into a cgroup of no tree: set up and exec alike free" \
	"$($ESC clone-into-cgroup "$D/other.service" "$ESC" chroot / | head -n 2 | tr '\n' ' ')" "set-up=ok ok "
# A pending process, waiting; a member of the same cgroup (held from the
# exec of escape) tries to trace it; its control traces an armed sibling.
mkfifo "$SH_TMP/pend" "$SH_TMP/pendth" "$SH_TMP/armed"
python3 -c 'import os, sys, threading
th = threading.Thread(target=lambda: open(sys.argv[3]).read())
th.start()
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
os.chroot("/")
open(sys.argv[2]).read()
th.join()' "$D/ct-2" "$SH_TMP/pend" "$SH_TMP/pendth" &
pp=$!
/usr/bin/bash -c "echo \$\$ >$D/ct-2/cgroup.procs && exec /usr/bin/bash -c 'read -r _ <$SH_TMP/armed'" &
ap=$!
placed() { grep -qx "0::/t_pattern/ct-2" "/proc/$pp/cgroup" && grep -q "read -r" "/proc/$ap/cmdline"; }
wait_until placed
# (Reading /proc/PID/environ asks the kernel's ptrace check in read mode,
# which Yama leaves to the LSMs.)
check "a member may not read a pending process's environment (the ptrace check)" \
	"$(member_try ct-2 open "/proc/$pp/environ" r)" "err EACCES"
check "... it may read its armed sibling's" "$(member_try ct-2 open "/proc/$ap/environ" r)" ok
# The pending process's other thread (moved with it, no entry of its
# own) shares its memory: pending too.
tid=$(ls "/proc/$pp/task" | grep -vx "$pp" | head -n 1)
check "... nor the environment of the pending process's other thread" \
	"$(member_try ct-2 open "/proc/$pp/task/$tid/environ" r)" "err EACCES"
echo go >"$SH_TMP/pendth"
echo go >"$SH_TMP/pend"
echo go >"$SH_TMP/armed"
wait "$pp" "$ap"
fromexec entry
$CTL policy reload >/dev/null 2>&1
check "held-from = exec taken away: a process moved in is held at once again" \
	"$(runtime ct-3)" "set-up=EPERM map=EPERM lib=ok child=EPERM exec=EPERM after=EPERM"
printf '[policy]\nname = pat4\nheld-from = later\n' >"$P/pat4.policy"
out=$($CTL policy reload 2>&1)
check_match "a bad held-from: FILE:LINE" "$out" "$P/pat4.policy:3: bad held-from 'later' \\(want entry or exec\\)"
rm -f "$P/pat3.policy" "$P/pat4.policy"
$CTL policy reload >/dev/null 2>&1
rmdir "$D"/ct-* 2>/dev/null

# ---- a removed cgroup's tag goes; the pattern's removal frees its trees ---
rmdir "$D/agent@2.service"
check "a removed cgroup is no longer listed" \
	"$($CTL status --json | jq -r '[.tagged_cgroups[] | .path] | index("'"$D"'/agent@2.service")')" null
policy
$CTL policy reload >/dev/null 2>&1
check "the pattern removed: its trees are free" "$(in_cg "$D/agent@1.service")" "id=ok true=ok"
check "... and a match made now is free" "$(made_in agent@3.service)" "id=ok true=ok"
check "... nothing tagged" "$(counter tagged)" 0
rmdir "$D"/*/* "$D"/* "$D" 2>/dev/null

check_log_valid
exit 0
