# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/lib.sh and tests/vm/run.
#
# zero_map MAP BATCH: every entry of the pinned array map MAP set to zeros
# (one bpftool process, its commands written to BATCH). Fails where the
# map cannot be read or any update is refused.
zero_map() {
	local n v z i
	read -r n v < <(bpftool -j map show pinned "$1" 2>/dev/null |
		jq -r '"\(.max_entries) \(.bytes_value)"' 2>/dev/null)
	[[ $n =~ ^[1-9][0-9]*$ && $v =~ ^[1-9][0-9]*$ ]] || return 1
	z=$(printf ' 0%.0s' $(seq "$v"))
	for ((i = 0; i < n; i++)); do
		echo "map update pinned $1 key $((i & 255)) $((i >> 8 & 255)) $((i >> 16 & 255)) 0 value$z"
	done >"$2"
	bpftool batch file "$2" >/dev/null
}

# zero_counters PIN BATCH: the kernel's counts in the newest generation of
# PIN set back to zero, as a load starts them (no daemon may be running).
zero_counters() {
	local g
	g=$(ls -d "$1"/gen-* 2>/dev/null | sort -t- -k2 -n | tail -n 1)
	[ -e "$g/map_counters" ] && zero_map "$g/map_counters" "$2"
}
