#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Enforcement outlives its daemon: programs, links and maps are pinned; a
# tree started before `kill -9 sharnessd` stays held while no daemon runs
# and after a new one adopts the pinned state. Unloading is explicit.
# Adoption and pins are what it tests, and it counts the kernel's
# programs: it takes the suite's shared pins over as its own (its first
# daemon resumes them), no other programs attached, and runs last.
SH_OWN_KERNEL=1
. "$(dirname "$0")/lib.sh"

cat >"$SH_TMP/policies/tpin.policy" <<P
[policy]
name = tpin
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
P
start_daemon || { fail "daemon starts"; exit 1; }

# A long-lived tree that executes what it is told, one command at a time.
F=$SH_TMP
mkfifo "$F/cmd" "$F/ack"
$CTL run --policy tpin -- /usr/bin/bash -c \
	"while read -r x < $F/cmd; do [ \"\$x\" = quit ] && exit 0; $TRY exec \$x -u >$F/ack 2>&1; done" \
	2>"$F/run.err" &
runpid=$!
ask() { echo "$1" >"$F/cmd"; local r; read -r r <"$F/ack"; echo "$r"; }

check "with the daemon: refused" "$(ask /usr/bin/id)" "err EPERM"
check "with the daemon: status says enforcing" "$($CTL status >/dev/null; echo $?)" 0
check_match "links are pinned" "$(ls "$PIN"/gen-*/ | grep -c '^link_')" '^[1-9][0-9]*$'
# The generation its first daemon resumed the shared pins into; each
# restart that resumes makes the next.
g=$(ls -d "$PIN"/gen-* | sed 's/.*gen-//' | sort -n | tail -n 1)
# The programs behind the pinned links, by id (a daemon of the same build
# resumes them: the same ids; one that loads its own: new ones).
# One bpftool call (-f: with each link's pins) for all of them: one call per
# link takes seconds under emulation.
prog_ids() {
	bpftool -f -j link show |
		jq -r --arg p "$PIN/" '.[] | select(any(.pinned[]?; startswith($p))) | .prog_id' |
		sort -n | tr '\n' ' '
}
ids0=$(prog_ids)
# The programs on demand, with no [net] rule and no pinned allow in force:
# pinned as programs, not linked (a restart resumes them all the same,
# below). sh_exec_pin where the kernel loads it (IMA).
demand() {
	local k re='socket_sendmsg|socket_setsockopt|socket_listen|sctp_bind_connect|exec_pin'
	for k in prog link; do
		ls "$PIN"/gen-*/ | grep -cE "^${k}_sh_($re)$"
	done | tr '\n' ' '
}
nd=$((4 + $(bpftool -j prog show | jq '[.[] | select(.name=="sh_exec_pin")] | if length > 0 then 1 else 0 end')))
check "no [net] rule, no pin: the programs on demand pinned, not linked" "$(demand)" "$nd 0 "

wait_until others_gone
stop_daemon KILL
check "kill -9: the daemon is gone" "$(kill -0 "$(pgrep -x sharnessd || echo 999999)" 2>/dev/null; echo $?)" 1
out=$($CTL status)
check "without the daemon: status exit 4" "$?" 4
check_match "without the daemon: status says so" "$out" "enforcing WITHOUT daemon"
check "without the daemon: the tree is still refused" "$(ask /usr/bin/id)" "err EPERM"
check "without the daemon: allowed exec still runs" "$(ask "$TRY")" "try: bad usage"

start_daemon || { fail "daemon restarts"; exit 1; }
check "restart adopts the pinned state" \
	"$(field adopted "$(last_event daemon-start)")" 1
check "events refused while down reach the log after restart" \
	"$(audit_wait '.hook=="exec" and .target=="/usr/bin/id"' 2)" 2
check "after restart: still refused" "$(ask /usr/bin/id)" "err EPERM"
check "after restart: the run is still listed" "$($CTL status | grep -c '(run)')" 1
check "exactly one pinned generation" "$(ls -d "$PIN"/gen-* | wc -l)" 1
# The same build on the same kernel takes over the programs its
# predecessor left attached, instead of verifying its own.
check "restart of the same build: the same programs behind the links" "$(prog_ids)" "$ids0"
check_match "... it says it resumed them" "$(grep 'resumed the' "$SH_TMP/daemon.err" | tail -n 1)" \
	"resumed the [1-9][0-9]* programs of $PIN/gen-$g "
check "... one generation marked with the build" "$(ls "$PIN"/gen-*/build | wc -l)" 1
check "... the programs on demand resumed from their pins, still not linked" "$(demand)" "$nd 0 "
check "... its daemon-start record says so (as the first start's, of the shared pins)" \
	"$(jq -r 'select(.event=="daemon-start") | "\(.adopted) \(.resumed)"' "$AUDIT" | tail -n 2 | tr '\n' ' ')" \
	"1 1 1 1 "
# A resumed generation is marked as the build's too: the next restart
# resumes it again.
# The count of directory moves' state (dir_moves, entry 1: "live" and the
# number of its making, include/sharness.h), as bpftool prints its bytes.
moves_state() {
	local id
	id=$(bpftool -j map show | jq -r '[.[] | select(.name == "dir_moves")][0].id')
	bpftool -j map lookup id "$id" key 1 0 0 0 | jq -r '.value | join(" ")'
}
ms0=$(moves_state)
stop_daemon KILL
start_daemon || { fail "daemon restarts a second time"; exit 1; }
check "a second restart: the same programs again" "$(prog_ids)" "$ids0"
ms1=$(moves_state)
check "... the count of directory moves checked again and made live anew, not taken over" \
	"$(cut -d' ' -f1-4 <<<"$ms1") $([ "$ms1" != "$ms0" ] && echo new)" "0x65 0x76 0x69 0x6c new"
check_match "... resumed from the resumed generation" \
	"$(grep 'resumed the' "$SH_TMP/daemon.err" | tail -n 1)" "resumed the [1-9][0-9]* programs of $PIN/gen-$((g + 1)) "
check "... still refused" "$(ask /usr/bin/id)" "err EPERM"
check "... allowed exec still runs" "$(ask "$TRY")" "try: bad usage"
# Controls: a generation the daemon may not take over is not resumed; it
# loads and attaches its own programs, and the tree stays held throughout.
# Two such cases, one a kernel (each costs a load, 20 s under emulation;
# what refuses is the same user-space code on both): where the kernel has
# both sh_inode_remove hooks (6.2 on), links swapped between them; where it
# has not, a generation without its build mark (pinned by a build before
# marks, or a mark that cannot be read).
G=$(ls -d "$PIN"/gen-* | tail -n 1)
stop_daemon KILL
if [ ! -e "$G/link_sh_inode_remove_acl" ]; then
	rm "$G/build"
	why="generation $((g + 2)) has no build mark"
else
	# A link pinned under another program's name is not taken over, though
	# the kernel's 15-character program names of the two agree
	# (sh_inode_remove): the hook it is on is not its own.
	mv "$G/link_sh_inode_remove_acl" "$G/swap" &&
		mv "$G/link_sh_inode_removexattr" "$G/link_sh_inode_remove_acl" &&
		mv "$G/swap" "$G/link_sh_inode_removexattr"
	why="cannot resume $G/link_sh_inode_remove.* .not a link on its hook.: loading the programs"
fi
check "not to be resumed, no daemon: still refused" "$(ask /usr/bin/id)" "err EPERM"
start_daemon || { fail "daemon restarts over a generation not to be resumed"; exit 1; }
ids2=$(prog_ids)
check "not resumed: the restart loads programs of its own" \
	"$(comm -12 <(tr ' ' '\n' <<<"$ids0" | sort) <(tr ' ' '\n' <<<"$ids2" | sort) | grep -c .) ${ids2:+loaded}" \
	"0 loaded"
check_match "... and says why" "$(cat "$SH_TMP/daemon.err")" "$why"
check "... still refused" "$(ask /usr/bin/id)" "err EPERM"
check "... allowed exec still runs" "$(ask "$TRY")" "try: bad usage"
check "... the run is still listed" "$($CTL status | grep -c '(run)')" 1
check "... its daemon-start record: maps adopted, programs loaded" \
	"$(jq -r 'select(.event=="daemon-start") | "\(.adopted) \(.resumed)"' "$AUDIT" | tail -n 1)" "1 0"

$CTL unload 2>"$F/unload.err"
check "unload refused while a run is tagged" "$?" 1
check_match "unload says why" "$(cat "$F/unload.err")" "tagged"
check "refused unload left enforcement on" "$(ask /usr/bin/id)" "err EPERM"

# --force unloads with the run tagged: unload returns once the daemon is
# gone, and the run goes on, free. (The packaged sharnessctl's unload with
# nothing tagged: t_package.)
pid=$DAEMON_PID
$CTL unload --force
check "unload --force with a run tagged" "$?" 0
check "unload returned after the daemon exited" "$(gone "$pid" && echo gone)" gone
DAEMON_PID=
check "after unload the programs are detached: the run's exec runs" "$(ask /usr/bin/id)" 0
echo quit >"$F/cmd"
wait $runpid
check "the run ended normally" "$?" 0
not_enforcing() { $CTL status >/dev/null 2>&1; [ $? -eq 3 ]; }
wait_until not_enforcing
out=$($CTL status)
check "after unload: status exit 3" "$?" 3
check_match "after unload: NOT enforcing" "$out" "NOT enforcing"
check "after unload: nothing pinned" "$(ls "$PIN" 2>/dev/null | wc -l)" 0

start_daemon || { fail "a new sharnessd starts right after unload"; exit 1; }
pass "a new sharnessd starts right after unload"

# A state map missing from the pinned generation is not started empty:
# adoption starts over with fresh maps (t_handover shows a new
# apply-filled map adopted). A run going on keeps its tag through them
# (from SOCKET.tags), and the old generation holds it until the new one
# has written it: here the new one's first apply fails (the run's policy
# gone from the directory), it exits 2 and the generation before goes on
# holding the run; the next daemon restores the tag into the failed one's
# fresh maps.
$CTL run --policy tpin -- /usr/bin/bash -c \
	"while read -r x < $F/cmd; do [ \"\$x\" = quit ] && exit 0; $TRY exec \$x -u >$F/ack 2>&1; done" \
	2>"$F/run2.err" &
runpid=$!
check "fresh maps, before: the run is refused" "$(ask /usr/bin/id)" "err EPERM"
stop_daemon KILL
rm "$PIN"/gen-*/map_tags
check "fresh maps, no daemon: the run is refused" "$(ask /usr/bin/id)" "err EPERM"
mv "$SH_TMP/policies/tpin.policy" "$F/tpin.policy"
printf '[policy]\nname = tother\n' >"$SH_TMP/policies/tother.policy"
"$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/policies" --audit-log "$AUDIT" --socket "$SOCK" \
	--pin-dir "$PIN" 2>"$F/fail.err"
check "fresh maps, a first apply that fails: the daemon exits 2" "$?" 2
check_match "... a missing tags map: not adopted, and it says why" "$(cat "$F/fail.err")" \
	"cannot reuse the pinned maps"
check_match "... the apply: the run's policy is gone" "$(cat "$F/fail.err")" "in use by run cgroup"
check "... the generation before holds the run" "$(ask /usr/bin/id)" "err EPERM"
check "... whose allowed exec still runs" "$(ask "$TRY")" "try: bad usage"
check "... both generations pinned" "$(ls -d "$PIN"/gen-* | wc -l)" 2
mv "$F/tpin.policy" "$SH_TMP/policies/tpin.policy"
rm "$SH_TMP/policies/tother.policy"
nres=$(grep -c 'resumed the' "$SH_TMP/daemon.err")
start_daemon --detach-idle 0 || { fail "daemon starts after a failed one"; exit 1; }
# It takes over the failed daemon's programs (its generation was marked and
# linked): the rests and wakes below are a resumed daemon's, each program
# linked again from its descriptor as the kind it is.
check "fresh maps: the next daemon resumes the failed one's programs" \
	"$(grep -c 'resumed the' "$SH_TMP/daemon.err")" $((nres + 1))
check "fresh maps: the run is tagged again" "$($CTL status | grep -c '(run)')" 1
check "fresh maps: the run is still refused" "$(ask /usr/bin/id)" "err EPERM"
check "fresh maps: allowed exec still runs" "$(ask "$TRY")" "try: bad usage"
check "fresh maps: one generation left" "$(ls -d "$PIN"/gen-* | wc -l)" 1
check "fresh maps: a tagged run keeps the programs attached" \
	"$(counter resting)" false
echo quit >"$F/cmd"
wait $runpid
check "fresh maps: the run ended normally" "$?" 0

# Resting: with nothing tagged (here at once, --detach-idle 0) the programs
# are detached, still loaded, and attached again before the next tag is
# written; the host's hooks run nothing meanwhile.
tracing_links() { bpftool -j link show | jq '[.[] | select(.type=="tracing" or .type=="raw_tracepoint")] | length'; }
opens() { bpftool -j prog show | jq '[.[] | select(.name=="sh_file_open") | .run_cnt // 0] | add // 0'; }
resting() { [ "$(counter resting)" = true ]; }
awake() { [ "$(counter resting)" = false ]; }
sysctl -qw kernel.bpf_stats_enabled=1
wait_until others_gone
wait_until resting
check "nothing tagged: resting" "$?" 0
check "resting: no link pinned" "$(ls "$PIN"/gen-*/ | grep -c '^link_')" 0
check "resting: no program attached in the kernel" "$(tracing_links)" 0
check "resting: the programs stay loaded" "$(bpftool -j prog show | jq '[.[] | select(.name=="sh_file_open")] | length')" 1
check_match "resting: status says so" "$($CTL status | head -n 1)" "resting: nothing tagged"
r0=$(opens)
cat /etc/hostname /etc/hostname >/dev/null
check "resting: the host's opens run no program" "$(($(opens) - r0))" 0
$CTL run --policy tpin -- /usr/bin/bash -c "$TRY exec /usr/bin/nproc; cat /etc/hostname >/dev/null" \
	>"$F/rest.out" 2>&1
check "resting: the first exec of a new run is refused" "$(head -n 1 "$F/rest.out")" "err EPERM"
check "resting: its refusal is logged" "$(audit_wait '.hook=="exec" and .target=="/usr/bin/nproc"' 1)" 1
check_match "resting: the run's opens ran the program" "$(($(opens) - r0))" '^[1-9][0-9]*$'
echo "rest figures: attach_ms=$(counter last_attach_ms)"
# A tag while the links still close (the detach takes seconds here):
# it waits for them, then attaches.
detaching() { $CTL status | head -n 1 | grep -q "programs detaching"; }
wait_until detaching
check "the run over: detaching" "$?" 0
mkdir -p /sys/fs/cgroup/t_rest
$CTL tag /sys/fs/cgroup/t_rest tpin
check "tag during a detach: attached once it is over" \
	"$(awake; echo $?) $(ls "$PIN"/gen-*/ | grep -c '^link_')" "0 $(tracing_links)"
check_match "tag: programs in the kernel" "$(tracing_links)" '^[1-9][0-9]*$'
check "tag: the fentry and raw tracepoint programs linked again too" \
	"$(ls "$PIN"/gen-*/ | grep -cE '^link_sh_(cgroup_move|cgroup_mkdir|dir_move)$')" 3
check "a process moved into the tagged cgroup is held" "$(/usr/bin/bash -c \
	"echo \$\$ >/sys/fs/cgroup/t_rest/cgroup.procs && exec $TRY exec /usr/bin/nproc")" "err EPERM"
check "rests and wakes are logged" \
	"$(jq -r 'select(.event|startswith("programs-")) | .event' "$AUDIT" | uniq | tail -n 2 | tr '\n' ' ')" \
	"programs-detached programs-attached "
# A stop while the links still close: the daemon finishes the detach
# before it exits, and leaves nothing behind (no link, no process).
$CTL untag /sys/fs/cgroup/t_rest
rmdir /sys/fs/cgroup/t_rest
sysctl -qw kernel.bpf_stats_enabled=0
wait_until detaching
check "untagged: detaching" "$?" 0
stop_daemon TERM
check "a daemon stopped during a detach: no program attached after it" "$(tracing_links)" 0
out=$($CTL status)
check "... status exit 3" "$?" 3
check_match "... and says so" "$out" "NOT enforcing"
check_match "... its last words say so" "$(tail -n 1 "$SH_TMP/daemon.err")" "nothing tagged, nothing attached"
check "... and its daemon-stop record" \
	"$(jq -r 'select(.event=="daemon-stop") | .enforcement' "$AUDIT" | tail -n 1)" nothing-tagged
check "... no sharnessd left running" "$(pgrep -xc sharnessd)" 0

"$SH_BUILD/sharnessd" --detach-idle soon --pin-dir "$PIN" --socket "$SOCK" 2>"$F/d.err"
check "--detach-idle soon: exit 1" "$?" 1
check_match "--detach-idle soon: says what it takes" "$(cat "$F/d.err")" "seconds .0 to 86400. or 'never'"

# sharnessd --unload, for pins left by a dead daemon, refuses while they
# hold a tag: here one written into the pinned tags map as a daemon
# writes it (cgroup id, policy per slot, run), with no daemon running.
mkdir -p /sys/fs/cgroup/t_pinned
le() { local i; for ((i = 0; i < $2; i++)); do printf '%d ' $((($1 >> (8 * i)) & 255)); done; }
# shellcheck disable=SC2046 # the bytes are words
bpftool map update pinned "$(ls -d "$PIN"/gen-* | tail -n 1)/map_tags" \
	key $(le "$(stat -c %i /sys/fs/cgroup/t_pinned)" 8) value $(le 0 2) $(le 0 2) $(le 0 4)
check "a tag left in the pins" "$?" 0
"$SH_BUILD/sharnessd" --unload --pin-dir "$PIN" --socket "$SOCK" --audit-log "$AUDIT" 2>"$F/u.err"
check "sharnessd --unload refused with a tagged cgroup" "$?" 1
check_match "sharnessd --unload says why" "$(cat "$F/u.err")" "1 cgroup is tagged"
"$SH_BUILD/sharnessd" --unload --force --pin-dir "$PIN" --socket "$SOCK" --audit-log "$AUDIT" 2>"$F/u.err"
check "sharnessd --unload --force" "$?" 0
check "--force unload: nothing pinned" "$(ls "$PIN" 2>/dev/null | wc -l)" 0
check "unloads are logged" "$(jq -c 'select(.event=="unload" and .result=="ok")' "$AUDIT" | wc -l)" 2
rmdir /sys/fs/cgroup/t_pinned
check_log_valid
exit 0
