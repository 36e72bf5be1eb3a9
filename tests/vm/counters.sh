# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/lib.sh and tests/vm/run.
#
# zero_counters PIN BATCH: the kernel's counts in the newest generation of
# PIN set back to zero, as a load starts them (one bpftool process, its
# commands written to BATCH; no daemon may be running).
zero_counters() {
	local g n i
	g=$(ls -d "$1"/gen-* 2>/dev/null | sort -t- -k2 -n | tail -n 1)
	[ -e "$g/map_counters" ] || return 1
	n=$(bpftool -j map show pinned "$g/map_counters" | jq .max_entries) || return 1
	for ((i = 0; i < n; i++)); do
		echo "map update pinned $g/map_counters key $((i & 255)) $((i >> 8)) 0 0 value 0 0 0 0 0 0 0 0"
	done >"$2"
	bpftool batch file "$2" >/dev/null
}
