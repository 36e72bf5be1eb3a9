#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion of sharnessctl, driven as bash drives it: the file is
# sourced, COMP_WORDS/COMP_CWORD are set for a command line and the
# completion function is called; COMPREPLY is compared with what it must
# offer. Policy names come from a stand-in sharnessctl whose `status`
# answers as the daemon does, and from a policy directory when no daemon
# answers.
#
#   tests/host/completion.sh COMPLETION_FILE [SHARNESSCTL]
set -u
file=${1:?completion file}
real_ctl=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# shellcheck source=/dev/null
. "$file" || { echo "FAIL completion: $file does not load"; exit 1; }
complete -p sharnessctl >/dev/null 2>&1 || { echo "FAIL completion: no 'complete' for sharnessctl"; exit 1; }

# A daemon that answers status (the text sharnessd's status request prints).
cat >"$tmp/ctl-up" <<'S'
#!/bin/bash
[ "${*: -1}" = status ] || exit 1
echo "sharnessd 0.9.0 (pid 42): enforcing, programs attached"
echo "policy dir: /etc/sharness/policies  audit log: /var/log/sharness/audit.jsonl"
echo "policy digest: 0123456789abcdef"
echo "policies: 2"
echo "  alpha                enforce  (/etc/sharness/policies/alpha.policy)"
echo "  beta                 audit    (/etc/sharness/policies/beta.policy)"
echo "tagged cgroups: 1"
echo "  /sys/fs/cgroup/ci.slice                  alpha"
echo "denials: exec=0"
[ "$1" = --socket ] && echo "socket: $2" >>"${0%/*}/sockets"
exit 0
S
# No daemon: status exits 3 and names no policy.
printf '#!/bin/sh\necho "NOT enforcing: no sharnessd"\nexit 3\n' >"$tmp/ctl-down"
chmod +x "$tmp/ctl-up" "$tmp/ctl-down"

mkdir -p "$tmp/policies" "$tmp/files/sub"
printf '[policy]\nname = gamma   # a comment\n[exec]\nallow = /usr/bin/true\n' >"$tmp/policies/g.policy"
printf '# x\n[policy]\nmode = audit\nname = delta\n' >"$tmp/policies/d.policy"
printf '[policy]\nname = hidden\n' >"$tmp/policies/not-a-policy.txt"
: >"$tmp/files/a.policy"
: >"$tmp/files/b.txt"
_sharnessctl_policy_dir=$tmp/policies

# comp WORD...: what completing the last word offers, sorted, on one line.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_sharnessctl "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

check() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
	else
		echo "FAIL completion: $1: got '$2', want '$3'"
		failed=$((failed + 1))
	fi
}

up=$tmp/ctl-up down=$tmp/ctl-down
check "commands" "$(comp "$up" '')" "learn log policy probe run status tag unload untag"
check "commands by prefix" "$(comp "$up" u)" "unload untag"
check "global options" "$(comp "$up" --)" "--debug --help --pin-dir --socket --verbose --version"
check "command after global options" "$(comp "$up" --verbose --socket /x st)" "status"
check "policy subcommands" "$(comp "$up" policy '')" "--help check pin reload"
check "policy check: .policy files and directories" \
	"$(cd "$tmp/files" && comp "$up" policy check '')" "a.policy sub"
check "status options" "$(comp "$up" status --)" "--help --json --prometheus"
check "unload options" "$(comp "$up" unload --)" "--force --help"
check "probe options" "$(comp "$up" probe --)" "--help"
check "run options" "$(comp "$up" run --)" \
	"-- --cpu-max --help --io-weight --memory-max --memory-swap-max --pids-max --policy --private-tmp --timeout --user --workdir"
check "run options by prefix" "$(comp "$up" run --m)" "--memory-max --memory-swap-max"
check "run --policy: the daemon's policies" "$(comp "$up" run --policy '')" "alpha beta"
check "run --policy=: the daemon's policies" "$(comp "$up" run --policy = a)" "alpha"
check "run --policy, no daemon: the policy files' names" "$(comp "$down" run --policy '')" "delta gamma"
check "run --policy by prefix, no daemon" "$(comp "$down" run --policy g)" "gamma"
check "run --user" "$(comp "$up" run --user roo)" "root"
check "run --timeout takes a number: nothing offered" "$(comp "$up" run --timeout '')" ""
check "run after --: commands" "$(comp "$up" run --policy alpha -- sharnessct)" \
	"$(compgen -c -- sharnessct | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "run after the command: files" "$(cd "$tmp/files" && comp "$up" run --policy alpha -- cat b)" "b.txt"
check "log options" "$(comp "$up" log --)" \
	"--action --file --follow --help --hook --json --lines --output --policy --run --since --until"
check "log -o" "$(comp "$up" log -o '')" "cat json short"
check "log --hook" "$(comp "$up" log --hook c)" "capability cgroup chroot connect"
check "log --action" "$(comp "$up" log --action '')" "audit deny learn"
check "learn options" "$(comp "$up" learn --)" \
	"-- --explain --from --help --output --policy --timeout --user --workdir"
check "learn --policy names a new policy: nothing offered" "$(comp "$up" learn --policy '')" ""
check "learn --from: the daemon's policies" "$(comp "$up" learn --from '')" "alpha beta"
check "learn after --: commands" "$(comp "$up" learn --policy x -- sharnessct)" \
	"$(compgen -c -- sharnessct | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "log --policy" "$(comp "$up" log -f --policy b)" "beta"
check "tag: the policy after the cgroup" "$(comp "$up" tag /sys/fs/cgroup/x '')" "alpha beta"
check "tag: its option" "$(comp "$up" tag --)" "--help --runtime"
check "tag --runtime PID: the policy after the cgroup" "$(comp "$up" tag --runtime 42 /sys/fs/cgroup/x '')" "alpha beta"
check "tag: cgroups" "$(comp "$up" tag /sys/fs/cgroup/)" \
	"$(compgen -d -- /sys/fs/cgroup/ | sort | tr '\n' ' ' | sed 's/ $//')"
check "untag: the tagged cgroups" "$(comp "$up" untag '')" "/sys/fs/cgroup/ci.slice"
: >"$tmp/sockets"
comp "$up" --socket /run/other.sock run --policy '' >/dev/null
check "--socket is passed on to the status query" "$(cat "$tmp/sockets")" "socket: /run/other.sock"

# The real sharnessctl with no daemon behind its socket: the names come
# from the policy directory.
if [ -n "$real_ctl" ]; then
	check "real sharnessctl, no daemon: the policy files' names" \
		"$(comp "$real_ctl" --socket "$tmp/none.sock" --pin-dir "$tmp/none" run --policy '')" \
		"delta gamma"
fi

echo "  COMPLETE  $passed passed, $failed failed"
[ "$failed" -eq 0 ]
