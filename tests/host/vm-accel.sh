#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm's choice of accelerator: KVM only where a probe guest runs a
# command with it, emulation (TCG) otherwise, and never a failed or hung
# run for want of KVM. Each way is taken here: emulation forced, the probe
# forced to fail (its guest's command fails, or never runs on a host whose
# KVM guests hang), the verdict kept for the host's boot, and the host's
# own auto choice. Every case checks the command ran in the guest and what
# tools/vm said it used.
#
#   tests/host/vm-accel.sh [KERNEL]
set -u
kernel=${1:-6.1}
here=$(cd "$(dirname "$0")/../.." && pwd)
vm=$here/tools/vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL vm-accel: $1 -- got '$2', want '$3'"; fi
}
check_match() { # NAME GOT REGEX
	if [[ $2 =~ $3 ]]; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL vm-accel: $1 -- got '$2', want /$3/"; fi
}
# boot NAME [VAR=VALUE...]: tools/vm -- echo NAME, with the variables set;
# sets RC, OUT (its stdout), ERR (its `vm: accel:` line), PRIO (its
# `vm: priority:` line), NI (the niceness of its guest's qemu, read on the
# host while it runs; the guest's memory size tells it from any other) and
# SECS.
nboot=0
boot() {
	local name=$1 t0=$SECONDS pid= mem=$((1100 + nboot++))
	shift
	env "$@" SHARNESS_VM_ACCEL_CACHE="$tmp/accel" "$vm" --kernel "$kernel" --timeout 120 \
		--mem "$mem" -- echo "ran $name" >"$tmp/out" 2>"$tmp/err" &
	local vmpid=$!
	NI=
	while kill -0 "$vmpid" 2>/dev/null; do
		pid=$(pgrep -f "^qemu-system-x86_64 .*-m $mem " | head -n 1)
		[ -n "$pid" ] && NI=$(ps -o ni= -p "$pid" | tr -d ' ') && [ -n "$NI" ] && break
		sleep 0.05
	done
	wait "$vmpid"
	RC=$?
	SECS=$((SECONDS - t0))
	OUT=$(cat "$tmp/out")
	ERR=$(grep -m1 '^vm: accel:' "$tmp/err")
	PRIO=$(grep -m1 '^vm: priority:' "$tmp/err")
}

cd "$here" || exit 1

# Emulation asked for: no probe, no verdict kept.
boot forced-tcg SHARNESS_VM_ACCEL=tcg
check "SHARNESS_VM_ACCEL=tcg: the command ran" "$RC $OUT" "0 ran forced-tcg"
check "SHARNESS_VM_ACCEL=tcg: it says so" "$ERR" "vm: accel: tcg, emulation; (SHARNESS_VM_ACCEL=tcg)"
check "SHARNESS_VM_ACCEL=tcg: no probe ran" "$(ls "$tmp/accel" 2>/dev/null | wc -l)" 0
# Its priority: ahead of the host's ordinary work where this caller may
# raise it (root), and said either way.
if [ "$(nice -n -10 nice 2>/dev/null)" = "$(($(nice) - 10))" ]; then
	check "as root: the guest runs at nice -10" "$NI" "$(($(nice) - 10))"
	check "... and says so" "$PRIO" "vm: priority: nice -10, ahead of the host's ordinary work"
else
	check "not permitted to raise it: the caller's niceness" "$NI" "$(nice)"
	check_match "... and says so" "$PRIO" "^vm: priority: the caller's "
fi

# A probe that fails: its guest's command fails where KVM guests run, and
# runs nothing where they hang; either way, emulation within the probe's
# bound, and the run itself passes.
boot probe-fails SHARNESS_VM_KVM_PROBE_CMD=false SHARNESS_VM_KVM_PROBE_TIMEOUT=5
check "probe forced to fail: the command ran" "$RC $OUT" "0 ran probe-fails"
if [ -c /dev/kvm ]; then
	check_match "probe forced to fail: emulation, and why" "$ERR" \
		'^vm: accel: tcg, emulation; the KVM guest(.s probe exited 1| ran nothing within 5s| failed)'
else
	check "probe forced to fail: emulation, no /dev/kvm" "$ERR" "vm: accel: tcg, emulation; no usable /dev/kvm"
fi
# The probe's bound (5 s), a boot under emulation and the kill's grace: a
# probe that hung would take the run's whole timeout (120 s).
check "probe forced to fail: no hang (${SECS}s)" "$([ "$SECS" -lt 60 ] && echo bounded)" bounded
if [ -c /dev/kvm ]; then
	check "probe forced to fail: the verdict is kept" "$(sed -n 2p "$tmp/accel/"* | cut -d' ' -f1)" tcg
	boot probe-kept SHARNESS_VM_KVM_PROBE_CMD=false SHARNESS_VM_KVM_PROBE_TIMEOUT=5
	check "verdict kept: the command ran" "$RC $OUT" "0 ran probe-kept"
	check_match "verdict kept: no second probe" "$ERR" '\(probed earlier this boot\)$'
fi

# The host's own choice: KVM if it runs guests here, emulation if not;
# the command runs either way and tools/vm names what it used.
boot auto SHARNESS_VM_NICE=0
check "auto: the command ran" "$RC $OUT" "0 ran auto"
check "SHARNESS_VM_NICE=0: the guest at the caller's niceness, nothing said" "$NI:$PRIO" "$(nice):"
check_match "auto: it names the accelerator" "$ERR" '^vm: accel: (kvm|tcg, emulation; .+)$'
echo "  vm-accel: this host: ${ERR#vm: accel: }"

# A bad setting is refused before any boot.
boot bad SHARNESS_VM_ACCEL=xen
check "SHARNESS_VM_ACCEL=xen: refused" "$RC $(grep -c "bad SHARNESS_VM_ACCEL 'xen'" "$tmp/err")" "125 1"

boot badnice SHARNESS_VM_NICE=high
check "SHARNESS_VM_NICE=high: refused" "$RC $(grep -c "SHARNESS_VM_NICE=high: a niceness" "$tmp/err")" "125 1"

echo "vm-accel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
