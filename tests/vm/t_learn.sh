#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sharnessctl learn: real workloads (a C build with make and gcc, git, a
# coreutils script, a TCP service, a unix socket) are learned, the policy
# passes `policy check`, the same command under it in enforce mode exits
# the same with no denial, and a variant doing one thing more is refused.
# The kernel reports each object once (10,000 opens, one record); --from
# adds only what the policy refused; the wall holds while learning.
. "$(dirname "$0")/lib.sh"

NET=$SH_BUILD/tests/vm/net
# Outside /tmp: the learned /tmp/ rule (gcc's temporary files) would cover it.
W=/home/ci-$$/work
rm -rf "$W"
mkdir -p "$W"
cat >"$SH_TMP/policies/tbase.policy" <<P
[policy]
name = tbase
[exec]
allow = /usr/bin/true
P
start_daemon || { fail "daemon starts"; exit 1; }

# learn NAME DIR [LEARN FLAGS...] -- CMD...: learns into policies/NAME.policy
# from a run in DIR; sets LRC and leaves the review in $SH_TMP/NAME.review.
learn() {
	local name=$1 dir=$2; shift 2
	$CTL learn --policy "$name" --workdir "$dir" --output "$SH_TMP/policies/$name.policy" \
		--explain "$@" >"$SH_TMP/$name.out" 2>"$SH_TMP/$name.review"
	LRC=$?
	[ $LRC = 0 ] || { echo "learn $name failed ($LRC):"; cat "$SH_TMP/$name.review"; }
}
# enforce NAME DIR CMD...: runs CMD under NAME; sets RC and DENIALS (the
# run-end record's count, and the violation records of the policy).
enforce() {
	local name=$1 dir=$2; shift 2
	$CTL run --policy "$name" --workdir "$dir" -- "$@" >"$SH_TMP/last.out" 2>"$SH_TMP/last.err"
	RC=$?
	DENIALS="$(field denials "$(last_event run-end)")/$(
		audit_count ".policy == \"$name\"")"
}
# learned NAME: the learned policy passes policy check, and the daemon loads it.
learned() {
	local name=$1
	check "$name: learn exits with the command's status" "$LRC" 0
	check "$name: the learned policy passes policy check" \
		"$($SH_BUILD/sharnessctl policy check "$SH_TMP/policies/$name.policy" >/dev/null 2>&1; echo $?)" 0
	check "$name: and loads" "$($CTL policy reload >/dev/null 2>&1; echo $?)" 0
}

# ---- a C project: make, gcc (cc1, as, ld through their symlinks), temp files
mkdir -p "$W/c"
cat >"$W/c/main.c" <<'C'
#include <stdio.h>
int twice(int);
int main(void) { printf("%d\n", twice(21)); return 0; }
C
echo 'int twice(int x) { return 2 * x; }' >"$W/c/util.c"
printf 'all: hello\n\t./hello >out.txt\nhello: main.o util.o\n\tgcc -o $@ main.o util.o\n%%.o: %%.c\n\tgcc -O1 -c $<\nclean:\n\trm -f *.o hello out.txt\n' \
	>"$W/c/Makefile"
learn tc "$W/c" -- make
learned tc
check "tc: the build ran while learning" "$(cat "$W/c/out.txt" 2>/dev/null)" 42
pol=$(cat "$SH_TMP/policies/tc.policy")
check_match "tc: gcc's cc1 is allowed by its resolved file" "$pol" $'\nallow = /usr/lib/gcc/x86_64-linux-gnu/[0-9]+/cc1 '
check_match "tc: the assembler is allowed by its resolved file" "$pol" $'\nallow = /usr/bin/x86_64-linux-gnu-as '
check_match "tc: pinned by the digest it has" "$pol" \
	$'\nallow = /usr/bin/x86_64-linux-gnu-as sha256:'"$(sha256sum /usr/bin/x86_64-linux-gnu-as | cut -d' ' -f1) "
check_match "tc: the work directory is one rule" "$pol" $'\nwrite = '"$W/c/ "
check_match "tc: gcc's temporary files are /tmp/" "$pol" $'\nwrite = /tmp/ '
check_match "tc: libraries are folded into a lib directory" "$pol" $'\nlib = /usr/lib/x86_64-linux-gnu/ '
check "tc: no learn record counted as a denial" "$(counter deny_exec)/$(counter deny_file)" "0/0"
check "tc: none logged as a violation" "$(audit_count '.policy | startswith("learn.")')" 0
check_match "tc: log --action learn shows the learn records" \
	"$($CTL log --file "$AUDIT" --action learn | grep -c ' learn exec')" '^[1-9][0-9]*$'
check_match "tc: log -o cat: the same line without its time" \
	"$($CTL log --file "$AUDIT" --action learn -o cat | head -1)" '^learn\.[0-9]+ learn exec sharnessctl\[[0-9]+\] /usr/bin/make \(not allowed\)$'
make -s -C "$W/c" clean
enforce tc "$W/c" make
check "tc: the same build under the learned policy: same status" "$RC" 0
check "tc: with no denial (every exec pinned)" "$DENIALS" "0/0"
check "tc: and the same result" "$(cat "$W/c/out.txt")" 42
make -s -C "$W/c" clean
printf '\tpython3 -c "print(1)"\n' >>"$W/c/Makefile"
sed -i 's/^all: hello$/all: hello py/; s/^\tpython3/py:\n\tpython3/' "$W/c/Makefile"
enforce tc "$W/c" make
check_match "tc: the build that also runs python3 fails" "$RC" '^[1-9]'
# (sh tries each directory of PATH: /bin/python3 is the same file again)
check_match "tc: python3 was refused" "$(audit_count '.policy == "tc" and .hook == "exec" and (.target | startswith("/usr/bin/python3")) and .errno == 1')" '^[12]$'

# ---- git init/add/commit
mkdir -p "$W/git"
GIT='git init -q r && cd r && echo hi >f && git add f && git -c user.email=t@e -c user.name=t commit -qm one && git log --oneline | wc -l'
learn tgit "$W/git" -- /usr/bin/bash -c "$GIT"
learned tgit
check "tgit: committed while learning" "$(cat "$SH_TMP/tgit.out")" 1
rm -rf "$W/git/r"
enforce tgit "$W/git" /usr/bin/bash -c "$GIT"
check "tgit: the same commit under the learned policy" "$RC/$(cat "$SH_TMP/last.out")" "0/1"
check "tgit: with no denial" "$DENIALS" "0/0"
enforce tgit "$W/git" /usr/bin/bash -c "echo x >>/root/.bashrc"
check "tgit: a write to ~/.bashrc is refused" "$RC" 1
check "tgit: and logged" "$(audit_count '.policy == "tgit" and .target == "/root/.bashrc" and .access == "write"')" 1

# ---- a shell script using coreutils
mkdir -p "$W/sh"
cat >"$W/sh/job.sh" <<'S'
#!/bin/bash
set -e
mkdir -p out
printf 'b\na\nc\n' | sort >out/sorted
cp out/sorted out/copy
wc -l <out/copy | tr -d ' ' >out/count
date +%Y >/dev/null
ls out | head -1
S
chmod +x "$W/sh/job.sh"
learn tsh "$W/sh" -- "$W/sh/job.sh"
learned tsh
check "tsh: the script ran while learning" "$(cat "$SH_TMP/tsh.out")/$(cat "$W/sh/out/count")" "copy/3"
pol=$(cat "$SH_TMP/policies/tsh.policy")
check_match "tsh: the script itself and its interpreter are allowed" "$pol" \
	$'\nallow = '"$W/sh/job.sh "'.*'$'\nallow = /usr/bin/bash '
check_match "tsh: nothing signalled outside: scope = tree" "$pol" $'\nscope = tree '
check_match "tsh: no network used: none allowed" "$pol" $'\nconnect = none .*\nbind = none '
rm -rf "$W/sh/out"
enforce tsh "$W/sh" "$W/sh/job.sh"
check "tsh: the same script under the learned policy" "$RC/$(cat "$SH_TMP/last.out")" "0/copy"
check "tsh: with no denial" "$DENIALS" "0/0"
enforce tsh "$W/sh" /usr/bin/bash -c "$W/sh/job.sh && python3 -c 'print(1)'"
check "tsh: the script then python3: refused (126)" "$RC" 126
check "tsh: python3's exec was refused and logged" \
	"$(audit_count '.policy == "tsh" and .hook == "exec" and (.target | startswith("/usr/bin/python3"))')" 1

# ---- --from: a second round learns only the new thing
cp "$SH_TMP/policies/tsh.policy" "$SH_TMP/tsh.before"
learn tsh2 "$W/sh" --from tsh -- /usr/bin/bash -c "$W/sh/job.sh && python3 -c 'print(7)'"
learned tsh2
check "tsh2: learning from tsh ran python3" "$(tail -1 "$SH_TMP/tsh2.out")" 7
added=$(grep '^+ ' "$SH_TMP/tsh2.review")
check_match "tsh2: python3 is added" "$added" '\+ \[exec\] allow = /usr/bin/python3'
check "tsh2: and nothing but python3's file and its libraries" \
	"$(grep -v -E '^\+ \[exec\] (allow = /usr/bin/python3|lib = /usr/lib/python3)' <<<"$added" | wc -l)" 0
check "tsh2: tsh's rules are all in tsh2" \
	"$(grep -E '^(allow|write|lib|deny|scope|abstract|device) =' "$SH_TMP/tsh.before" | sed 's/ *#.*//' |
		while read -r l; do grep -qF -- "$l" "$SH_TMP/policies/tsh2.policy" || echo "$l"; done)" ""
rm -rf "$W/sh/out"
enforce tsh2 "$W/sh" /usr/bin/bash -c "$W/sh/job.sh && python3 -c 'print(7)'"
check "tsh2: the script and python3 under tsh2" "$RC/$(tail -1 "$SH_TMP/last.out")" "0/7"
check "tsh2: with no denial" "$DENIALS" "0/0"

# ---- a TCP service and a unix socket
"$NET" serve tcp 127.0.0.1 18080 "$SH_TMP/tcp.log" >"$SH_TMP/serve1" &
srv1=$!
"$NET" serve tcp 127.0.0.1 18081 "$SH_TMP/tcp2.log" >"$SH_TMP/serve2" &
srv2=$!
"$TRY" listen "$SH_TMP/svc.sock" >"$SH_TMP/usrv1" &
usrv1=$!
"$TRY" listen "$SH_TMP/other.sock" >"$SH_TMP/usrv2" &
usrv2=$!
wait_until grep -q ready "$SH_TMP/serve1" && wait_until grep -q ready "$SH_TMP/serve2" &&
	wait_until grep -q ready "$SH_TMP/usrv1" && wait_until grep -q ready "$SH_TMP/usrv2"
CLIENT="$NET connect tcp 127.0.0.1 18080 && $TRY connect $SH_TMP/svc.sock"
learn tnet "$W" -- /usr/bin/bash -c "$CLIENT"
learned tnet
tcp_lines() { [ "$(wc -l <"$SH_TMP/tcp.log")" -ge "$1" ]; }
wait_until tcp_lines 1
check "tnet: both connects landed while learning" "$(grep -c '^ok' "$SH_TMP/tnet.out")/$(wc -l <"$SH_TMP/tcp.log")" "2/1"
pol=$(cat "$SH_TMP/policies/tnet.policy")
check_match "tnet: the TCP endpoint reached" "$pol" $'\nconnect = tcp 127.0.0.1 18080 '
check_match "tnet: the unix socket reached" "$pol" $'\nallow = '"$SH_TMP/svc.sock "
check_match "tnet: every other unix socket denied" "$pol" $'\ndeny = / '
enforce tnet "$W" /usr/bin/bash -c "$CLIENT"
check "tnet: the same connects under the learned policy" "$RC/$(grep -c '^ok' "$SH_TMP/last.out")" "0/2"
check "tnet: with no denial" "$DENIALS" "0/0"
wait_until tcp_lines 2
check "tnet: the service saw it" "$(wc -l <"$SH_TMP/tcp.log")" 2
enforce tnet "$W" "$NET" connect tcp 127.0.0.1 18081
check "tnet: another port: EPERM" "$(head -1 "$SH_TMP/last.out")" "err EPERM"
check "tnet: and the other service never saw it" "$(wc -l <"$SH_TMP/tcp2.log" 2>/dev/null || echo 0)" 0
enforce tnet "$W" "$TRY" connect "$SH_TMP/other.sock"
check "tnet: another unix socket: EPERM" "$(head -1 "$SH_TMP/last.out")" "err EPERM"
kill $srv1 $srv2 $usrv1 $usrv2 2>/dev/null

# ---- the kernel reports each object once: 10,000 opens, one record
before=$(counter learn_repeats)
learned0=$(counter learned)
learn tloop "$W" -- /usr/bin/python3 -c "
for i in range(10000):
    open('$W/loop.txt', 'w').close()
print('done')"
check "tloop: the loop ran while learning" "$LRC/$(cat "$SH_TMP/tloop.out")" "0/done"
run=$(jq -r 'select(.event=="run-start" and (.policy | startswith("learn."))) | .run' "$AUDIT" | tail -1)
check "tloop: one learn record for the file's open for writing" \
	"$(jq -c "select(.event==\"learn\" and .run==$run and .target==\"$W/loop.txt\" and .op==\"open\")" "$AUDIT" | wc -l)" 1
check_match "tloop: and one for its creation (a truncation at most)" \
	"$(jq -c "select(.event==\"learn\" and .run==$run and .target==\"$W/loop.txt\")" "$AUDIT" | wc -l)" '^[23]$'
check_match "tloop: the kernel counted the other opens without sending them" \
	"$(( $(counter learn_repeats) - before ))" '^(9999|[1-9][0-9]{4,})$'
check_match "tloop: and sent few records in all" "$(( $(counter learned) - learned0 ))" '^[0-9]{1,3}$'
check_match "tloop: the file, in the work directory, is its rule" \
	"$(cat "$SH_TMP/policies/tloop.policy")" $'\nwrite = '"$W/ "

# ---- the wall holds while learning: nothing the rules decide is refused,
# what no rule can lift still is
learn twall "$W" -- /usr/bin/bash -c "$TRY kill $DAEMON_PID 18; $TRY mkdir $W/wall-dir"
check "twall: signalling sharnessd from a learning run: EPERM" "$(head -1 "$SH_TMP/twall.out")" "err EPERM"
check "twall: a write the rules decide: let through" "$(sed -n 2p "$SH_TMP/twall.out")" "ok"
check "twall: the refusal is a violation record (deny)" \
	"$(audit_count '(.policy | startswith("learn.")) and .hook == "signal" and .action == "deny" and .reason == "sharnessd is protected"')" 1
check "twall: sharnessd lives" "$(kill -0 "$DAEMON_PID" && echo alive)" alive
check_match "twall: the learned policy lists the refusal, as no rule" "$(cat "$SH_TMP/policies/twall.policy")" \
	$'\n# no rule allows it: signal kill [0-9]+ \\(sharnessd is protected\\)'
check "twall: and allows nothing for it" "$(grep -c '^scope = any' "$SH_TMP/policies/twall.policy")" 0
out=$($CTL learn --policy tw2 --workdir / -- /usr/bin/true 2>&1); rc=$?
check "a work directory of / : refused (125)" "$rc" 125
check_match "and says why" "$out" "would let the tree write everywhere"

# ---- a daemon restarted during a learning run starts, and holds that run
# to a policy that refuses every use; the run learns nothing
mkfifo "$SH_TMP/go"
$CTL learn --policy torph --workdir "$W" --output "$SH_TMP/torph.policy" -- \
	/usr/bin/bash -c "echo started; read -r _ <$SH_TMP/go; (echo x >$W/after) 2>/dev/null && echo wrote || echo refused" \
	>"$SH_TMP/torph.out" 2>"$SH_TMP/torph.err" &
lpid=$!
wait_until grep -q started "$SH_TMP/torph.out"
stop_daemon
start_daemon
check_match "a learning run outlived its daemon: the new one starts" "$DAEMON_PID" '^[0-9]+$'
check_match "its log says what it did with the run" "$(cat "$SH_TMP/daemon.err")" \
	"learning run [0-9]+ \(learn\.[0-9]+\) outlived the daemon that began it"
echo go >"$SH_TMP/go"
wait $lpid
check "the run's next write is refused" "$(tail -1 "$SH_TMP/torph.out")" "refused"
check_match "learn says nothing was learned" "$(cat "$SH_TMP/torph.err")" \
	"went on without its sharnessd or its sharnessctl: nothing learned"
check "and writes no policy" "$(test -e "$SH_TMP/torph.policy" && echo written)" ""

# ---- a learning run never outlives its sharnessctl. Root in the tree,
# learning from a policy whose scope is any, cannot signal it (a signal
# inside the tree still works); killed from outside, the daemon kills the
# run, holds it to a policy that refuses every use, and ends it.
learn tkill "$W" --from tbase -- /usr/bin/bash -c \
	'kill -TERM $PPID 2>/dev/null; echo kill=$?; sleep 100 & kill $!; wait $!; echo child=$?'
check "tkill: the tree's signal to its sharnessctl is refused" "$(grep kill= "$SH_TMP/tkill.out")" "kill=1"
check "tkill: a signal inside the tree is not" "$(grep child= "$SH_TMP/tkill.out")" "child=143"
check "tkill: sharnessctl lived to write the policy" "$LRC/$(test -s "$SH_TMP/policies/tkill.policy" && echo written)" "0/written"
rm -f "$SH_TMP/policies/tkill.policy"
$CTL learn --policy tgone --workdir "$W" --output "$SH_TMP/tgone.policy" -- \
	/usr/bin/bash -c 'echo up; sleep 300' >"$SH_TMP/tgone.out" 2>&1 &
lpid=$!
wait_until grep -q up "$SH_TMP/tgone.out"
rid=$(jq -r 'select(.event=="run-start" and (.policy | startswith("learn."))) | .run' "$AUDIT" | tail -1)
check "tgone: learning, before: its policy learns" "$($CTL status | grep -c "learn\.$rid  *learn ")" 1
kill -KILL $lpid
wait $lpid 2>/dev/null
ended() { jq -e "select(.event==\"run-end\" and .run==$rid)" "$AUDIT" >/dev/null 2>&1; }
wait_until ended
check "tgone: its sharnessctl killed: the daemon ends the run" \
	"$(jq -r "select(.event==\"run-end\" and .run==$rid) | .status" "$AUDIT")" "client-gone"
check "tgone: after its processes" "$(pgrep -f 'sleep 300' | wc -l)" 0
check_match "tgone: the daemon says why" "$(cat "$SH_TMP/daemon.err")" \
	"learning run $rid: its sharnessctl is gone; its processes are killed and it is refused every use"
check "tgone: no policy written" "$(test -e "$SH_TMP/tgone.policy" && echo written)" ""

# ---- a learning run's policy comes and goes alone: with 1,000 rules in
# force, its begin and end write its own rules only (learn figures), and
# the id it gives back is taken clean by the next run: what the last
# one's rules allowed is learned, what they denied is let through.
K=$W/keep
mkdir -p "$K"
echo s >"$K/secret"
{
	printf '[policy]\nname = tbig\n[exec]\nallow = /usr/bin/\n[file]\n'
	for i in $(seq 1000); do echo "write = /srv/tbig/d$i/"; done
	echo "write = $K/"
	echo "deny = $K/secret"
} >"$SH_TMP/policies/tbig.policy"
check "tbig: 1,000 rules load" "$($CTL policy reload >/dev/null 2>&1; echo $?)" 0
# qlearn NAME [FLAGS...] -- CMD...: learns into $SH_TMP/NAME.policy.
qlearn() {
	local name=$1; shift
	$CTL learn --policy "$name" --workdir "$W" --output "$SH_TMP/$name.policy" "$@" \
		>"$SH_TMP/$name.out" 2>"$SH_TMP/$name.review"
}
learn_recs() { jq -c "select(.event == \"learn\" and .target == \"$1\")" "$AUDIT" | wc -l; }
t0=${EPOCHREALTIME/./}
qlearn tq0 --from tbig -- /usr/bin/true
echo "learn figures: rules=1000 learn_true_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))"
qlearn tq1 --from tbig -- /usr/bin/bash -c "$TRY open $K/secret r; $TRY open $K/a creat"
check "tq1: learning from tbig: its deny holds" "$?/$(head -n 1 "$SH_TMP/tq1.out")" "0/err EPERM"
check "tq1: its write rule lets the write through" "$(sed -n 2p "$SH_TMP/tq1.out")" ok
check "tq1: which is not learned" "$(learn_recs "$K/a")" 0
rm -f "$K/a"
qlearn tq2 -- /usr/bin/bash -c "$TRY open $K/secret r; $TRY open $K/a creat"
check "tq2: the next run, from nothing: the last one's deny is gone" \
	"$?/$(head -n 1 "$SH_TMP/tq2.out")" "0/ok"
check "tq2: its write is let through" "$(sed -n 2p "$SH_TMP/tq2.out")" ok
check_match "tq2: and learned: no rule of the last run's allowed it" "$(learn_recs "$K/a")" '^[1-9]'
check_match "tq2: its policy has a rule for it (the work directory)" \
	"$(cat "$SH_TMP/tq2.policy")" $'\nwrite = '"$W/ "
# Two at once, the first begun ending first: the other's policy takes its
# id (a whole apply) and holds on.
mkfifo "$SH_TMP/qa" "$SH_TMP/qb"
qlearn tqa --from tbig -- /usr/bin/bash -c "echo up; read -r _ <$SH_TMP/qa" &
pa=$!
wait_until grep -q up "$SH_TMP/tqa.out"
qlearn tqb --from tbig -- /usr/bin/bash -c \
	"echo up; read -r _ <$SH_TMP/qb; $TRY open $K/secret r; $TRY open $K/b creat" &
pb=$!
wait_until grep -q up "$SH_TMP/tqb.out"
learning_pols() { $CTL status | grep -c 'made for a learning run'; }
check "two learning runs: both policies loaded" "$(learning_pols)" 2
echo go >"$SH_TMP/qa"
wait $pa
check "two learning runs: the first begun ends first" "$?/$(learning_pols)" 0/1
echo go >"$SH_TMP/qb"
wait $pb
check "... the other's deny still holds" "$?/$(sed -n 2p "$SH_TMP/tqb.out")" "0/err EPERM"
check "... its write rule still lets through" "$(sed -n 3p "$SH_TMP/tqb.out")" ok
check "... and its policy is gone with it" "$(learning_pols)" 0
rm "$SH_TMP/policies/tbig.policy"
check "tbig: unloaded" "$($CTL policy reload >/dev/null 2>&1; echo $?)" 0

# ---- bad input
out=$($CTL learn --policy 'bad name' -- /usr/bin/true 2>&1); rc=$?
check "a bad policy name: setup failure (125)" "$rc" 125
check_match "and says why" "$out" "bad policy name"
out=$($CTL learn --policy x --from nosuch -- /usr/bin/true 2>&1); rc=$?
check "--from an unknown policy: 125" "$rc" 125
check_match "names the loaded ones" "$out" "tbase"
check "no learning policy left loaded" "$($CTL status | grep -c 'learn\.')" 0
check "no run cgroup left" "$(ls -d /sys/fs/cgroup/sharness/run-* 2>/dev/null | wc -l)" 0
check_log_valid
rm -rf "/home/ci-$$"
cleanup
