#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The control socket and the audit log: root only, malformed requests get an
# error and the daemon carries on, a silent client does not hold the others,
# status --json, log -n / --policy / -f across rotation, start-up refusals.
. "$(dirname "$0")/lib.sh"

VMB=$SH_BUILD/tests/vm
RAW=$VMB/ctlraw
NL=$'\n'
# The socket in a directory of its own, which the daemon creates.
CTL=${CTL/"--socket $SOCK"/--socket $SH_TMP/run/ctl.sock}
SOCK=$SH_TMP/run/ctl.sock
mkfifo "$SH_TMP/nap"
# Shell builtins only where a loop waits: every process start is slow here.
nap() { read -r -t "$1" <>"$SH_TMP/nap"; }
# file_wait FILE REGEX: waits up to SH_WAIT s for a line of FILE matching REGEX.
file_wait() {
	local l
	for ((w = 0; w < SH_WAIT * 10; w++)); do
		if [ -e "$1" ]; then
			while IFS= read -r l; do [[ $l =~ $2 ]] && return 0; done <"$1"
		fi
		nap 0.1
	done
	return 1
}
# count_in FILE REGEX: sets N to the number of lines of FILE matching REGEX.
count_in() {
	local l
	N=0
	[ -e "$1" ] || return 0
	while IFS= read -r l; do [[ $l =~ $2 ]] && N=$((N + 1)); done <"$1"
}
# jnum NAME JSON: a numeric top-level field of a flat JSON record.
jnum() { if [[ $2 =~ \"$1\":([0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; fi; }
ms_since() { local now=${EPOCHREALTIME/./}; echo $(((now - ${1/./}) / 1000)); }

printf '[policy]\nname = tc\n[exec]\nallow = /usr/bin/bash\nallow = %s/\nallow = /usr/bin/true\n' \
	"$VMB" >"$SH_TMP/policies/tc.policy"
printf '[policy]\nname = tc2\n[exec]\nallow = /usr/bin/bash\nallow = %s/\n' \
	"$VMB" >"$SH_TMP/policies/tc2.policy"

# no_start NAME POLICY_DIR [WRAPPER...]: a sharnessd (run through WRAPPER)
# on POLICY_DIR with files of its own ($SH_TMP/NAME.*, $PIN-NAME) that
# should not start; sets rc and err (its stderr). One that starts is stopped.
no_start() {
	local name=$1 dir=$2 p
	shift 2
	"$@" "$SH_BUILD/sharnessd" --policy-dir "$dir" --audit-log "$SH_TMP/$name.jsonl" \
		--socket "$SH_TMP/$name.sock" --pin-dir "$PIN-$name" 2>"$SH_TMP/$name.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		p=$(jnum pid "$("$SH_BUILD/sharnessctl" --socket "$SH_TMP/$name.sock" status --json)")
		[ -n "$p" ] && kill -TERM "$p"
	fi
	err=$(<"$SH_TMP/$name.err")
}

# ---- a daemon without its policy directory does not start ------------------
no_start nodir "$SH_TMP/nodir"
check "no policy dir: daemon exits 2" "$rc" 2
check_match "no policy dir: says which and why" "$err" "$SH_TMP/nodir: cannot open directory: No such file or directory"
check_match "no policy dir: says it is not starting" "$err" "not starting"
check "no policy dir: no socket left behind" "$([ -S "$SH_TMP/nodir.sock" ] && echo yes || echo no)" no

# ---- a daemon that gets no random key does not start ----------------------
# The programs' key (memo_key) comes from getrandom; without it the memo
# would be off and a tree could work out where its words sit. nosys makes
# getrandom fail with ENOSYS (and checks that it does: else exit 99).
"$VMB/nosys" /usr/bin/true
check "nosys: its filter holds and the command runs" "$?" 0
no_start nokey "$SH_TMP/policies" "$VMB/nosys"
check "no getrandom: daemon exits 3 (cannot enforce)" "$rc" 3
check_match "no getrandom: says what failed" "$err" \
	"cannot draw the programs' random key: getrandom: Function not implemented"
check_match "no getrandom: says what to change" "$err" \
	"this kernel cannot enforce: kernel .* gave no random key .*check seccomp filters"
check_match "no getrandom: says it is not starting" "$err" "not starting"
check "no getrandom: nothing attached or pinned" "$(ls "$PIN-nokey" 2>/dev/null | wc -l)" 0

start_daemon || { fail "daemon starts"; exit 1; }
pass "daemon starts"

# ---- root only ---------------------------------------------------------------
check "socket directory 0700, socket 0600" "$(stat -c '%a %F' "$SH_TMP/run" "$SOCK")" \
	"700 directory${NL}600 socket"
ST=$($CTL status --json)
check "root: status --json exits 0" "$?" 0
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
out=$($NOBODY $CTL status 2>&1)
check "non-root: status exits 4" "$?" 4
check_match "non-root: says it cannot reach the daemon, and why" "$out" \
	"$SOCK.*Permission denied"
check "non-root: does not claim the host is not enforcing" \
	"$([[ $out == *"NOT enforcing"* ]] && echo "claims it" || echo no)" no
# Past the file modes the daemon itself refuses (SO_PEERCRED).
chmod 0711 "$SH_TMP/run"
chmod 0666 "$SOCK"
out=$($NOBODY "$RAW" "$SOCK" status)
check_match "non-root past the file modes: the daemon replies it is root only" "$out" \
	"status E permission denied: the control socket is for root only"
check_match "non-root past the file modes: the daemon's status is 4" "$out" "status end X4"
out=$($NOBODY $CTL status 2>&1)
check "non-root past the file modes: sharnessctl status exits 4" "$?" 4
check_match "non-root past the file modes: sharnessctl shows the daemon's refusal" "$out" \
	"permission denied: the control socket is for root only"
chmod 0600 "$SOCK"
chmod 0700 "$SH_TMP/run"

# ---- status --json -----------------------------------------------------------
jq -e '[.pid, .policies, .tagged, .deny_exec, .dropped] | all(type == "number")' \
	<<<"$ST" >/dev/null
check "status --json: valid JSON with numeric pid, policies, tagged, deny_exec, dropped" "$?" 0
check "status --json: pid is the daemon's" "$(jnum pid "$ST")" "$DAEMON_PID"
comm=
read -r comm <"/proc/$DAEMON_PID/comm"
check "status --json: that pid is sharnessd" "$comm" sharnessd
check "status --json: 2 policies, nothing tagged, no denial" \
	"$(jnum policies "$ST") $(jnum tagged "$ST") $(jnum deny_exec "$ST") $(jnum dropped "$ST")" "2 0 0 0"
# Calls the kernel let through a program unrun (its recursion check):
# none on these kernels, which exempt LSM programs from it. The count is
# the kernel's: bpftool's recursion_misses of the same programs agree
# (once an earlier file's daemon, still detaching, is gone).
wait_until others_gone
bt=$(bpftool -j prog show 2>/dev/null | jq '[.[] | select(.type == "lsm" and (.name | startswith("sh_")))
	| .recursion_misses // 0] | "\(length) \(add)"' -r)
check "status --json: unjudged, a number, agrees with bpftool's recursion_misses" \
	"$(jnum unjudged "$ST") ${bt#* }" "0 0"
check "bpftool sees the daemon's programs" "$([ "${bt% *}" -ge 40 ] && echo yes)" yes

# ---- malformed requests --------------------------------------------------------
# Each bad request is followed by a good one on a new connection.
cases=(empty nonul zeroarg args65 big random random0 unknown)
argv=()
for c in "${cases[@]}"; do argv+=("$c" "status@$c"); done
out=$("$RAW" "$SOCK" "${argv[@]}" args64 max)
check "ctlraw: every request got a final status" "$?" 0
declare -A RE RX RO
while IFS= read -r l; do
	lab=${l%% *}
	rest=${l#* }
	case $rest in
	"end "*) RX[$lab]=${rest#end } ;;
	"E "*) RE[$lab]+="${rest#E } " ;;
	"O "*) RO[$lab]+="${rest#O } " ;;
	esac
done <<<"$out"
raw_case() { # CASE WANT_X E_REGEX
	check "request '$1': exit status" "${RX[$1]-missing}" "$2"
	check_match "request '$1': error reply" "${RE[$1]-}" "$3"
	check "after '$1' the daemon still answers status" "${RX[status@$1]-missing}" X0
}
raw_case empty X4 "^malformed request: Invalid argument"
raw_case nonul X4 "^malformed request: Invalid argument"
raw_case zeroarg X4 "^malformed request: Invalid argument"
raw_case args65 X4 "^malformed request: Argument list too long"
raw_case big X4 "^request too large \\(70000 bytes, at most 65536\\)"
raw_case random X4 "^malformed request"
raw_case random0 X1 "^unknown or malformed request '"
raw_case unknown X1 "^unknown or malformed request 'frobnicate'"
check "64 arguments (the most): accepted" "${RX[args64]-missing} ${RO[args64]-}" "X0 pong. "
check "65536 bytes (the most): accepted" "${RX[max]-missing} ${RO[max]-}" "X0 pong. "
$CTL status >/dev/null
check "after all of them sharnessctl status exits 0" "$?" 0
$CTL frobnicate 2>"$SH_TMP/unk.err"
check "sharnessctl: unknown command exits 1" "$?" 1
check_match "sharnessctl: unknown command says so" "$(<"$SH_TMP/unk.err")" "unknown command 'frobnicate'"

# ---- a client that sends nothing does not hold the others --------------------
"$RAW" "$SOCK" silent:8 >"$SH_TMP/silent.out" 2>&1 &
silent=$!
file_wait "$SH_TMP/silent.out" "^silent:8 connected" || fail "silent client connects"
t0=$EPOCHREALTIME
$CTL status >/dev/null
rc=$?
ms=$(ms_since "$t0")
check "status while a client is silent: exits 0" "$rc" 0
check "status while a client is silent for 8 s: answered within 7 s" \
	"$([ "$ms" -lt 7000 ] && echo yes || echo "no, ${ms} ms")" yes

# ---- log -n, --policy, --json ------------------------------------------------
$CTL run --policy tc -- "$VMB/try" exec /usr/bin/id >/dev/null 2>&1
check "tc refuses id (try exits 1)" "$?" 1
out=$($CTL log -n 2)
check "log -n 2: exits 0" "$?" 0
mapfile -t L <<<"$out"
check "log -n 2: two lines" "${#L[@]}" 2
check_match "log -n 2: the denial, readable" "${L[0]}" \
	'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z tc deny exec try\[[0-9]+\] /usr/bin/id \(not allowed\)$'
check_match "log -n 2: then the end of the run, readable" "${L[1]:-}" \
	'^[0-9T:.Z-]+ -- run-end run=[0-9]+ cgroup=/sys/fs/cgroup/sharness/run-[0-9]+ status=exit:1 killed=0 denials=[0-9]+( [a-z_]+=[0-9]+)*$'

$CTL run --policy tc2 -- "$VMB/try" exec /usr/bin/true >/dev/null 2>&1
check "tc2 refuses true (try exits 1)" "$?" 1
$CTL log --json --policy tc2 >"$SH_TMP/tc2.out"
check "log --json --policy tc2: exits 0" "$?" 0
count_in "$AUDIT" '"policy":"tc2"'
want=$N
count_in "$SH_TMP/tc2.out" '^\{.*"policy":"tc2"'
check "log --json --policy tc2: every tc2 record of the log" "$N" "$want"
count_in "$SH_TMP/tc2.out" ''
check "log --json --policy tc2: nothing else" "$N" "$want"
count_in "$SH_TMP/tc2.out" '"event":"violation",.*"target":"/usr/bin/true"'
check "log --json --policy tc2: includes its denial" "$N" 1
jq -e . "$SH_TMP/tc2.out" >/dev/null 2>&1
check "log --json: lines are JSON" "$?" 0
mapfile -t L <"$SH_TMP/tc2.out"
check "log --json --policy tc2 -n 1: the last tc2 record" \
	"$($CTL log --json --policy tc2 -n 1)" "${L[-1]}"

# ---- log -f follows across rotation -------------------------------------------
$CTL log -f --json >"$SH_TMP/follow.out" 2>"$SH_TMP/follow.err" &
follower=$!
file_wait "$SH_TMP/follow.out" '"target":"/usr/bin/true"'
check "log -f: shows what is already there" "$?" 0
mv "$AUDIT" "$AUDIT.1"
kill -HUP "$DAEMON_PID"
wait_until test -e "$AUDIT"
check "SIGHUP: the daemon reopens the log at its path" "$([ -e "$AUDIT" ] && echo yes)" yes
$CTL run --policy tc -- "$VMB/try" exec /usr/bin/whoami >/dev/null 2>&1
check "tc refuses whoami (try exits 1)" "$?" 1
file_wait "$SH_TMP/follow.out" '"event":"violation",.*"target":"/usr/bin/whoami"'
check "log -f: follows into the new file (a denial after rotation)" "$?" 0
file_wait "$SH_TMP/follow.out" '"event":"reload","result":"ok"'
check "log -f: shows the reload record of the new file" "$?" 0
kill "$follower"
wait "$follower" 2>/dev/null
count_in "$AUDIT" '"target":"/usr/bin/whoami"'
check "the denial after rotation is in the new file" "$N" 1
count_in "$AUDIT.1" '"target":"/usr/bin/whoami"'
check "and not in the rotated one" "$N" 0
count_in "$SH_TMP/follow.out" '"target":"/usr/bin/id"'
n=$N
count_in "$AUDIT.1" '"target":"/usr/bin/id"'
check "log -f: no record shown twice across the rotation" "$n" "$N"

# ---- the silent client got its answer -------------------------------------------
wait "$silent"
out=$(<"$SH_TMP/silent.out")
check_match "silent client: told no request came" "$out" "silent:8 E no request received"
check_match "silent client: exit status 4" "$out" "silent:8 end X4"

# ---- a second daemon on the same socket ----------------------------------------
"$SH_BUILD/sharnessd" --policy-dir "$SH_TMP/policies" --audit-log "$SH_TMP/audit2.jsonl" \
	--socket "$SOCK" --pin-dir "$PIN" 2>"$SH_TMP/second.err"
rc=$?
ST=$($CTL status --json 2>/dev/null)
pid2=$(jnum pid "$ST")
if [ -n "$pid2" ] && [ "$pid2" != "$DAEMON_PID" ]; then
	kill -TERM "$pid2" # started by this test: it took the socket over
fi
check_match "second daemon on the same socket: refused (exit non-zero)" "$rc" '^[1-9]'
check_match "second daemon: says another daemon has the socket" "$(<"$SH_TMP/second.err")" \
	"another sharnessd.*$SOCK|$SOCK.*(in use|already)"
check "second daemon: the first still answers on the socket" "$pid2" "$DAEMON_PID"

check_log_valid
exit 0
