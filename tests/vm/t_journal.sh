#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What fleet tools read. The journal: violations (and suppressed counts)
# reach journald as entries whose fields match the audit record, odd bytes
# intact; nothing for what was allowed; nothing with the journal off; a
# journal that is gone costs no log line. status --json: everything the
# text shows, and the tagged trees with their processes.
#
# The guest has no journald: a python3 listener binds journald's socket and
# keeps each datagram, parsed from the native protocol.
. "$(dirname "$0")/lib.sh"

unset INVOCATION_ID JOURNAL_STREAM   # as if not started by systemd
JSOCK=/run/systemd/journal/socket
JDIR=$SH_TMP/journal
JR=$SH_TMP/jr.py
mkdir -p /run/systemd/journal "$JDIR"
cat >"$JR" <<'PY'
import json, os, socket, struct, sys

def parse(data):
    """Fields of one native-protocol datagram: KEY=VALUE\n, or
    KEY\n<le64 length><bytes>\n. Raises on anything else."""
    fields, binary, i = {}, [], 0
    while i < len(data):
        nl = data.index(b'\n', i)
        line = data[i:nl]
        if b'=' in line:
            k, v = line.split(b'=', 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack('<Q', data[nl + 1:nl + 9])
            v = data[nl + 9:nl + 9 + n]
            if len(v) != n or data[nl + 9 + n:nl + 10 + n] != b'\n':
                raise ValueError('bad binary field ' + k.decode())
            i = nl + 10 + n
            binary.append(k.decode())
        key = k.decode('ascii')
        if not key or not all(c.isupper() or c.isdigit() or c == '_' for c in key) \
                or key[0] == '_':
            raise ValueError('bad field name %r' % key)
        fields[key] = v
    return fields, binary

if sys.argv[1] == 'listen':
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        os.unlink(sys.argv[2])
    except FileNotFoundError:
        pass
    s.bind(sys.argv[2])
    n = len([f for f in os.listdir(sys.argv[3]) if not f.startswith('.')])
    while True:
        data = s.recv(1 << 20)
        tmp = os.path.join(sys.argv[3], '.tmp')
        with open(tmp, 'wb') as f:
            f.write(data)
        os.rename(tmp, os.path.join(sys.argv[3], '%06d' % n))
        n += 1
elif sys.argv[1] == 'dump':
    # One JSON line an entry: values as text (U+FFFD for bytes that are
    # not UTF-8) and as hex, and which fields came in the binary form.
    for name in sorted(os.listdir(sys.argv[2])):
        if name.startswith('.'):
            continue
        with open(os.path.join(sys.argv[2], name), 'rb') as f:
            fields, binary = parse(f.read())
        print(json.dumps({'text': {k: v.decode('utf-8', 'replace') for k, v in fields.items()},
                          'hex': {k: v.hex() for k, v in fields.items()},
                          'binary': binary}))
PY
# journald's socket takes 512 datagrams before a sender gets EAGAIN:
# systemd's own sysctl.d/50-default.conf sets net.unix.max_dgram_qlen so
# on every host it runs. The kernel's default (10) is far less than a
# storm's burst, and this listener is slower than journald; without the
# host's setting the test would measure the guest, not the daemon.
QLEN0=$(sysctl -n net.unix.max_dgram_qlen)
sysctl -qw net.unix.max_dgram_qlen=512
python3 "$JR" listen "$JSOCK" "$JDIR" &
JPID=$!
wait_until test -S "$JSOCK"
check "a listener holds journald's socket" "$?" 0

# entries: how many the journal got. jdump: all of them, one JSON line each.
entries() { find "$JDIR" -maxdepth 1 -type f -name '[0-9]*' | wc -l; }
jdump() { python3 "$JR" dump "$JDIR"; }
entries_at_least() { [ "$(entries)" -ge "$1" ]; }
hexof() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

W=$SH_TMP/work
O=$SH_TMP/out
mkdir -p "$W" "$O"
cat >"$SH_TMP/policies/jpol.policy" <<P
[policy]
name = jpol
[file]
write = $W/
write = /dev/null
P
sed -e 's/name = jpol/name = jaudit\nmode = audit/' "$SH_TMP/policies/jpol.policy" \
	>"$SH_TMP/policies/jaudit.policy"
start_daemon --journal || { fail "daemon starts with --journal"; exit 1; }
check "--journal: status says on" "$(counter journal)" on

# ---- the journal -----------------------------------------------------------
n0=$(entries)
try_in_tree jpol open "$W/fine" creat
check "an allowed write: allowed" "$OUT" ok
odd=$(printf 'j\nx\xffy')
try_in_tree jpol open "$O/$odd" creat
check "a write outside: refused" "$OUT" "err EPERM"
check "it is logged" "$(audit_wait ".hook==\"file\" and .target_hex==\"$(hexof "$O/$odd")\"")" 1
wait_until entries_at_least $((n0 + 1))
sleep 1   # anything else the journal would get (it must not) has come by now
check "the journal got one entry: the refusal, nothing for the allowed write" \
	"$(entries)" $((n0 + 1))
rec=$(audit_last ".target_hex==\"$(hexof "$O/$odd")\"")
ev_fields "$rec"
# ent_fields: the entry's text fields into JT[], its hex ones into JH[], with
# one jq (a start costs 0.2 s under emulation); jt/jh KEY read them. A value
# of more than one line (MESSAGE) is read by its hex form only.
declare -A JT JH
ent_fields() {
	local kind k v
	JT=() JH=()
	while IFS=$'\t' read -r kind k v; do
		if [ "$kind" = t ]; then JT[$k]=$v; else JH[$k]=$v; fi
	done < <(jq -r '(.text // {} | to_entries[] | select(.value | tostring | contains("\n") | not) |
			"t\t\(.key)\t\(.value)"),
		(.hex // {} | to_entries[] | "h\t\(.key)\t\(.value)")' <<<"$ent")
}
jt() { printf '%s\n' "${JT[$1]-ABSENT}"; }
jh() { printf '%s\n' "${JH[$1]-ABSENT}"; }
ent=$(jdump | tail -n 1)
ent_fields
check "journal: SHARNESS_EVENT" "$(jt SHARNESS_EVENT)" violation
check "journal: SHARNESS_POLICY is the record's" "$(jt SHARNESS_POLICY)" "${F[policy]}"
check "journal: ... and it is jpol" "$(jt SHARNESS_POLICY)" jpol
check "journal: SHARNESS_HOOK" "$(jt SHARNESS_HOOK)" "${F[hook]}"
check "journal: SHARNESS_ACTION" "$(jt SHARNESS_ACTION)" deny
check "journal: SHARNESS_OP" "$(jt SHARNESS_OP)" "${F[op]}"
check "journal: SHARNESS_PID" "$(jt SHARNESS_PID)" "${F[pid]}"
check "journal: SHARNESS_COMM" "$(jt SHARNESS_COMM)" "${F[comm]}"
check "journal: SHARNESS_RUN" "$(jt SHARNESS_RUN)" "${F[run]}"
check "journal: SHARNESS_CGROUP" "$(jt SHARNESS_CGROUP)" "${F[cgroup]}"
check "journal: SHARNESS_REASON" "$(jt SHARNESS_REASON)" "${F[reason]}"
check "journal: SHARNESS_TARGET holds the path's exact bytes (newline, 0xff)" \
	"$(jh SHARNESS_TARGET)" "$(hexof "$O/$odd")"
check "journal: SHARNESS_PATH too" "$(jh SHARNESS_PATH)" "$(hexof "$O/$odd")"
check "journal: no SHARNESS_TARGET_HEX beside it" "$(jt SHARNESS_TARGET_HEX)" ABSENT
check "journal: the path came in the binary form" \
	"$(jq -r '.binary | index("SHARNESS_TARGET") != null' <<<"$ent")" true
check "journal: PRIORITY warning for a refusal" "$(jt PRIORITY)" 4
check "journal: SYSLOG_IDENTIFIER" "$(jt SYSLOG_IDENTIFIER)" sharnessd
check "journal: MESSAGE_ID of a violation" "$(jt MESSAGE_ID)" da73f70e30904673928ed38c82a39071
logline=$($CTL log --file "$AUDIT" --policy jpol --hook file -n 1 | od -An -tx1 | tr -d ' \n')
check "journal: MESSAGE is the line sharnessctl log shows" "$(jh MESSAGE)0a" "$logline"
check_match "journal: ... one line, the path's newline shown as an escape" "$(jt MESSAGE)" '/[^ ]*\\x0a'

# Audit mode: action audit, priority notice.
n1=$(entries)
try_in_tree jaudit open "$O/audited" creat
check "audit mode: allowed" "$OUT" ok
wait_until entries_at_least $((n1 + 1))
ent=$(jdump | tail -n 1)
ent_fields
check "audit mode: SHARNESS_ACTION audit" "$(jt SHARNESS_ACTION)" audit
check "audit mode: PRIORITY notice" "$(jt PRIORITY)" 5
check "audit mode: SHARNESS_POLICY" "$(jt SHARNESS_POLICY)" jaudit
check "audit mode: SHARNESS_PATH" "$(jt SHARNESS_PATH)" "$O/audited"

# A storm: the journal gets what the log gets, no more; the rest as a
# suppressed count.
$CTL run --policy jpol -- /usr/bin/bash -c \
	"for i in {1..300}; do : >$O/storm; done 2>/dev/null" >/dev/null 2>&1
# log_n / journal_n EVENT FIELD: records of the storm (FIELD: count them, or
# add that field up).
log_n() { jq -s "[.[] | select(.event==\"$1\" and .target==\"$O/storm\") | $2] | add // 0" "$AUDIT"; }
journal_n() {
	jdump | jq -s "[.[] | select(.text.SHARNESS_EVENT==\"$1\" and .text.SHARNESS_TARGET==\"$O/storm\") | $2] | add // 0"
}
storm_settled() {
	[ "$(log_n suppressed .count)" -gt 0 ] &&
	[ "$(journal_n violation 1)" = "$(log_n violation 1)" ] &&
	[ "$(journal_n suppressed '.text.SHARNESS_COUNT | tonumber')" = "$(log_n suppressed .count)" ]
}
wait_until storm_settled
check "storm: the journal has the log's violation records and suppressed counts, no more" "$?" 0
check "storm: fewer in the log than were refused" "$([ "$(log_n violation 1)" -lt 300 ] && echo yes)" yes
check "storm: the suppressed entry has its own MESSAGE_ID" \
	"$(jdump | jq -r "select(.text.SHARNESS_EVENT==\"suppressed\") | .text.MESSAGE_ID" | sort -u)" \
	89e5d07e663f4e90a8c6e381f78fb232
all_in() { [ "$(counter journal_sent)" = "$(entries)" ]; }
wait_until all_in
check "status: journal_sent counts every entry" "$(counter journal_sent)" "$(entries)"
check "status: no journal errors" "$(counter journal_errors)" 0

# ---- status --json -----------------------------------------------------------
mkdir -p /sys/fs/cgroup/sharness-jtag
$CTL tag /sys/fs/cgroup/sharness-jtag jpol
check "a cgroup tagged at run time" "$?" 0
odd_arg=$(printf 'x\xffy')
day0=$(date -u +%Y-%m-%d)   # (a run that starts at midnight: either day)
$CTL run --policy jpol --pids-max 77 -- /usr/bin/bash -c 'sleep 600; true' jtest "two words" \
	"$odd_arg" >/dev/null 2>&1 &
runpid=$!
two_procs() {
	[ "$($CTL status --json | jq '[.tagged_cgroups[] | select(.source=="run") | .processes_total] | .[0]')" = 2 ]
}
wait_until two_procs
check "status --json: the run's two processes (bash, sleep)" "$?" 0
ST=$($CTL status --json)
TXT=$($CTL status)
jq -e . >/dev/null <<<"$ST"
check "status --json: valid JSON" "$?" 0
check "status --json: flat fields first, as before (pid)" "$(field pid "$ST")" "$DAEMON_PID"
# The fields below from one jq (a start costs 0.2 s under emulation), a
# line each; every value is one line (the argv as JSON).
mapfile -t J < <(jq -r '
	.version, .policy_digest, ([.socket, .pin_dir, .audit_log, .policy_dir] | join(" ")),
	.policy_dir, .audit_log, .programs_attached,
	([.loaded_policies[] | "\(.name) \(.mode) \(.file)"] | join(",")),
	([.loaded_policies[] | .name + " "] | add),
	([.loaded_policies[].id] | tojson),
	(.tagged == (.tagged_cgroups | length)),
	([.tagged_cgroups[] | select(.source=="tag") | "\(.path) \(.policy) \(.processes_total)"] | join(";")),
	([.tagged_cgroups[] | select(.source=="run")] | length),
	(.tagged_cgroups[] | select(.source=="run") |
		.path, .run, .policy, .limits["pids.max"], .cgroup_id,
		([.processes[] | select(.comm=="bash")] | length),
		(.processes[] | select(.comm=="bash") | (.argv | tojson), .pid, .started),
		([.processes[] | select(.comm=="sleep") | .argv] | tojson)),
	([.violations[] | select(.policy=="jpol" and .hook=="file" and .action=="deny") | .count] | .[0] >= 2),
	"\(.journal) \(.journal_errors)", .deny_exec, .deny_file' <<<"$ST")
check "status --json: one run, one bash in it (the fields below line up)" "${#J[@]} ${J[11]} ${J[17]}" "26 1 1"
check "status --json: version as the text" "sharnessd ${J[0]} (pid $DAEMON_PID)" \
	"$(head -n 1 <<<"$TXT" | sed 's/: enforcing.*//')"
check "status --json: policy digest as the text" "policy digest: ${J[1]}" \
	"$(grep '^policy digest:' <<<"$TXT")"
check "status --json: paths" "${J[2]}" "$SOCK $PIN $AUDIT $SH_TMP/policies"
check "status --json: paths as the text" "policy dir: ${J[3]}  audit log: ${J[4]}" \
	"$(grep '^policy dir:' <<<"$TXT")"
check_match "status --json: programs attached" "${J[5]}" '^[1-9][0-9]*$'
check "status --json: programs attached as the text" \
	"${J[5]}" "$(head -n 1 <<<"$TXT" | sed 's/.*programs attached: //')"
check "status --json: the policies" "${J[6]}" \
	"jaudit audit $SH_TMP/policies/jaudit.policy,jpol enforce $SH_TMP/policies/jpol.policy"
check "status --json: the policies as the text" "${J[7]}" \
	"$(sed -n '/^policies:/,/^tagged/p' <<<"$TXT" | awk 'NF>1 && $1!="policies:" && $1!="tagged" {printf "%s ", $1}')"
check "status --json: policy ids" "${J[8]}" "[0,1]"
check "status --json: tagged count and list agree" "${J[9]}" true
check "status --json: the tagged cgroup" "${J[10]}" "/sys/fs/cgroup/sharness-jtag jpol 0"
runcg=${J[12]}
check_match "status --json: the run's cgroup" "$runcg" '^/sys/fs/cgroup/sharness/run-[0-9]+$'
check "status --json: the run's id is its cgroup's" "run-${J[13]}" "${runcg##*/}"
check "status --json: the run's cgroup as the text" \
	"$(grep -c "^  $runcg *jpol  (run) ${J[13]}  processes: 2\$" <<<"$TXT")" 1
check "status --json: the run's policy" "${J[14]}" jpol
check "status --json: the run's pids limit" "${J[15]}" 77
check "status --json: the run's cgroup id" "${J[16]}" "$(stat -c %i "$runcg")"
check "status --json: the run's command, its argv whole" "${J[18]}" \
	"[\"/usr/bin/bash\",\"-c\",\"sleep 600; true\",\"jtest\",\"two words\",\"x$(printf '\xef\xbf\xbd')y\"]"
bpid=${J[19]}
check "status --json: its pid, in the run's cgroup" "$(grep -cx "$bpid" "$runcg/cgroup.procs")" 1
check "status --json: that pid runs it" "$(tr '\0' ' ' </proc/"$bpid"/cmdline | cut -d' ' -f1-6)" \
	"/usr/bin/bash -c sleep 600; true jtest"
check_match "status --json: when it started" "${J[20]}" \
	"^($day0|$(date -u +%Y-%m-%d))T[0-9:.]+Z$"
check "status --json: its child" "${J[21]}" '[["sleep","600"]]'
check "status --json: violations by policy" "${J[22]}" true
check "status --json: the journal" "${J[23]}" "on 0"
declare -A D=([exec]=${J[24]} [file]=${J[25]})
for h in exec file; do
	check "status --json: $h denials as the text" "$h=${D[$h]}" \
		"$(grep '^denials:' <<<"$TXT" | grep -o " $h=[0-9]*" | tr -d ' ')"
done
kill "$runpid"
wait "$runpid" 2>/dev/null
$CTL untag /sys/fs/cgroup/sharness-jtag
rmdir /sys/fs/cgroup/sharness-jtag

# ---- a journal that is gone ------------------------------------------------------
kill "$JPID"
wait "$JPID" 2>/dev/null
try_in_tree jpol open "$O/nojournal" creat
check "journal gone: refused" "$OUT" "err EPERM"
check "journal gone: the log line is there" "$(audit_wait ".target==\"$O/nojournal\"")" 1
jerr() { [ "$(counter journal_errors)" -ge 1 ]; }
wait_until jerr
check "journal gone: the failure is counted" "$?" 0
try_in_tree jpol open "$O/nojournal2" creat
check "journal gone: the second log line too" "$(audit_wait ".target==\"$O/nojournal2\"")" 1
check "journal gone: said once in the daemon's messages" \
	"$(grep -c 'cannot send a record to the journal' "$SH_TMP/daemon.err")" 1
check "journal gone: the daemon carries on" "$($CTL status >/dev/null; echo $?)" 0
rm -f "$JSOCK"
python3 "$JR" listen "$JSOCK" "$JDIR" &
JPID=$!
wait_until test -S "$JSOCK"

# ---- off -------------------------------------------------------------------------
# off_case NAME: with the daemon as started, a refusal reaches the log,
# not the journal.
off_case() {
	local n
	n=$(entries)
	try_in_tree jpol open "$O/off-$1" creat
	check "$1: refused" "$OUT" "err EPERM"
	check "$1: logged" "$(audit_wait ".target==\"$O/off-$1\"")" 1
	sleep 1
	check "$1: nothing to the journal" "$(entries)" "$n"
	check "$1: status says off" "$(counter journal)" off
}
stop_daemon TERM
start_daemon || fail "daemon starts without an option"
off_case "no option, not under systemd"
stop_daemon TERM
INVOCATION_ID=0123456789abcdef0123456789abcdef start_daemon --no-journal ||
	fail "daemon starts with --no-journal"
off_case "--no-journal under systemd"

# The default under systemd: on.
stop_daemon TERM
INVOCATION_ID=0123456789abcdef0123456789abcdef start_daemon ||
	fail "daemon starts under systemd's INVOCATION_ID"
try_in_tree jpol open "$O/under-systemd" creat
got() { jdump | jq -e "select(.text.SHARNESS_PATH==\"$O/under-systemd\")" >/dev/null; }
wait_until got
r=$?
check "under systemd, no option: on" "$r" 0
[ "$r" = 0 ] ||
	{ $CTL status --json | jq -c '{journal,journal_sent,journal_errors}'; ls -la "$JDIR"; ps aux | grep '[j]r.py';
	  jq -c 'select(.event=="violation") | .target' "$AUDIT" | tail -n 3; tail -n 5 "$SH_TMP/daemon.err"; } >&2

# The daemon stays for the hand-over (lib.sh cleanup): the next file
# resumes its programs.
kill "$JPID"
wait "$JPID" 2>/dev/null
rm -f "$JSOCK"
sysctl -qw net.unix.max_dgram_qlen="$QLEN0"
check_log_valid
exit 0
