#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# [net] rules: TCP/UDP egress and bind per tree, judged on the address the
# kernel was given (socket_connect, socket_sendmsg, socket_bind,
# socket_listen), and the socket kinds a tree with [net] rules may use.
# Listeners run outside the tree on loopback addresses; next to each
# refusal (errno, record, counter, and the listener saw nothing) an allowed
# attempt lands (the listener saw it). The tree runs as root.
. "$(dirname "$0")/lib.sh"

NET=$SH_BUILD/tests/vm/net

cat >"$SH_TMP/policies/tnet.policy" <<P
[policy]
name = tnet
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[net]
connect = tcp 127.0.0.1 7001
connect = tcp 127.0.0.0/8 7100-7199
connect = udp 127.0.0.1 7002
connect = any ::1 7003
deny    = any 127.0.0.3
deny    = tcp 127.0.0.1 7150
bind    = tcp 127.0.0.1 7400-7499
P
sed -e 's/name = tnet/name = tnetaudit/' -e 's/^\[policy\]/[policy]\nmode = audit/' \
	"$SH_TMP/policies/tnet.policy" >"$SH_TMP/policies/tnetaudit.policy"
cat >"$SH_TMP/policies/tconnonly.policy" <<P
[policy]
name = tconnonly
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
[net]
connect = tcp 127.0.0.1 7001
P
cat >"$SH_TMP/policies/tnonet.policy" <<P
[policy]
name = tnonet
[exec]
allow = /usr/bin/bash
allow = $SH_BUILD/tests/vm/
P
# The same, asking for packet and raw sockets by their capability.
sed -e 's/name = tnonet/name = tnonetraw/' "$SH_TMP/policies/tnonet.policy" \
	>"$SH_TMP/policies/tnonetraw.policy"
printf '[limits]\ncapability = net_raw\n' >>"$SH_TMP/policies/tnonetraw.policy"

# Listeners outside every tree: NAME PROTO ADDR PORT.
L=$SH_TMP/listen
mkdir -p "$L"
LPIDS=
nserve=0
serve() {
	nserve=$((nserve + 1))
	: >"$L/$1"
	"$NET" serve "$2" "$3" "$4" "$L/$1" >"$L/$1.ready" 2>&1 &
	LPIDS="$LPIDS $!"
}
serve t7001 tcp 127.0.0.1 7001     # allowed
serve t7009 tcp 127.0.0.1 7009     # no rule: refused
serve t7101 tcp 127.0.0.2 7101     # 127.0.0.0/8 7100-7199: allowed
serve t7102 tcp 127.0.0.3 7102     # deny any 127.0.0.3 beats the /8
serve t7150 tcp 127.0.0.1 7150     # deny tcp .1 7150 beats the range
serve t7199 tcp 127.0.0.1 7199     # the range's last port: allowed
serve t7200 tcp 127.0.0.1 7200     # one past the range: refused
serve u7002 udp 127.0.0.1 7002     # allowed
serve u7005 udp 127.0.0.1 7005     # refused
serve u7101 udp 127.0.0.2 7101     # the /8 range is tcp only: refused
serve s7003 tcp ::1 7003           # any ::1 7003
serve s7004 tcp ::1 7004           # refused
trap 'kill $LPIDS 2>/dev/null; cleanup' EXIT
ready() { [ "$(cat "$L"/*.ready 2>/dev/null | grep -c '^ready$')" -eq "$nserve" ]; }
wait_until ready
check "listeners outside the tree are up" "$(cat "$L"/*.ready | grep -c '^ready$')" $nserve

# seen NAME: lines the listener NAME logged (connections or datagrams),
# counted in the shell (a grep each cost about 0.1 s under emulation).
seen() {
	local l n=0
	while IFS= read -r l || [ -n "$l" ]; do [ -z "$l" ] || n=$((n + 1)); done <"$L/$1"
	echo "$n"
}
landed() { local n; n=$(seen "$1"); [ "$n" -ge "$2" ]; }

start_daemon || { fail "daemon starts"; exit 1; }
check "no net denial yet" "$(counter deny_net)" 0

# allowed NAME PROTO ADDR PORT WHY: connect from the tree lands.
allowed() {
	local before; before=$(seen "$1")
	run_in_tree tnet "$NET" connect "$2" "$3" "$4"
	check "$5: connects" "$OUT" ok
	wait_until landed "$1" $((before + 1))
	check "$5: the listener saw it" "$(seen "$1")" $((before + 1))
}
# refused NAME PROTO ADDR PORT TARGET REASON WHY: refused, recorded, not seen.
refused() {
	local before; before=$(seen "$1")
	local n0; n0=$(counter deny_net)
	local q=".hook==\"net\" and .op==\"connect\" and .target==\"$5\""
	local r0; r0=$(audit_count "$q")
	run_in_tree tnet "$NET" connect "$2" "$3" "$4"
	check "$7: refused" "$OUT" "err EPERM"
	check "$7: one record" "$(audit_wait "$q" $((r0 + 1)))" $((r0 + 1))
	ev_fields "$(audit_last ".hook==\"net\" and .target==\"$5\"")"
	check "$7: record reason, action, errno" "${F[reason]-}/${F[action]-}/${F[errno]-}" "$6/deny/1"
	check "$7: kernel counter" "$(counter deny_net)" $((n0 + 1))
	check "$7: the listener saw nothing" "$(seen "$1")" "$before"
}

allowed t7001 tcp 127.0.0.1 7001 "tcp to an allowed address and port"
refused t7009 tcp 127.0.0.1 7009 "tcp 127.0.0.1:7009" "not allowed" "tcp to a port no rule names"
allowed t7101 tcp 127.0.0.2 7101 "tcp inside a /8 and a port range"
allowed t7199 tcp 127.0.0.1 7199 "the range's last port"
refused t7200 tcp 127.0.0.1 7200 "tcp 127.0.0.1:7200" "not allowed" "one port past the range"
refused t7102 tcp 127.0.0.3 7102 "tcp 127.0.0.3:7102" "deny rule" "deny beats a broader connect"
refused t7150 tcp 127.0.0.1 7150 "tcp 127.0.0.1:7150" "deny rule" "a narrower deny beats a range"
allowed u7002 udp 127.0.0.1 7002 "udp connect to an allowed port"
refused u7005 udp 127.0.0.1 7005 "udp 127.0.0.1:7005" "not allowed" "udp connect to another port"
refused u7101 udp 127.0.0.2 7101 "udp 127.0.0.2:7101" "not allowed" "a tcp-only rule does not allow udp"
allowed s7003 tcp ::1 7003 "IPv6 to an allowed address"
refused s7004 tcp ::1 7004 "tcp [::1]:7004" "not allowed" "IPv6 to another port"
allowed t7001 tcp ::ffff:127.0.0.1 7001 "an IPv4-mapped IPv6 address, allowed as the IPv4 it is"
refused t7009 tcp ::ffff:127.0.0.1 7009 "tcp 127.0.0.1:7009" "not allowed" \
	"an IPv4-mapped IPv6 address, refused as the IPv4 it is"

# The other ways to reach an address: every one judged, each with its twin.
# twins OP WHAT BAD BADPORT GOOD GOODPORT: "net OP 127.0.0.1 PORT" to the
# listener BAD (refused, it sees nothing), then to GOOD (sent, it sees it).
twins() {
	local n; n=$(seen "$3")
	run_in_tree tnet "$NET" "$1" 127.0.0.1 "$4"
	check "$2 to a refused port: refused" "$OUT" "err EPERM"
	check "$2: the listener saw nothing" "$(seen "$3")" "$n"
	n=$(seen "$5")
	run_in_tree tnet "$NET" "$1" 127.0.0.1 "$6"
	[ "$OUT" = ok ] || { echo "  run exit $RC; stderr:"; sed 's/^/    /' "$SH_TMP/last.err"; }
	check "$2 to an allowed port: sent" "$OUT" ok
	wait_until landed "$5" $((n + 1))
	check "$2: the allowed one arrived" "$(seen "$5")" $((n + 1))
}
twins sendto "unconnected sendto" u7005 7005 u7002 7002
check "sendto: recorded as op send" \
	"$(audit_wait '.hook=="net" and .op=="send" and .target=="udp 127.0.0.1:7005"')" 1
twins sendmsg-unspec "sendmsg to an AF_UNSPEC address (sent as IPv4)" u7005 7005 u7002 7002
twins fastopen "TCP Fast Open (sendto MSG_FASTOPEN)" t7009 7009 t7001 7001
check "Fast Open: recorded as op send" \
	"$(audit_wait '.hook=="net" and .op=="send" and .target=="tcp 127.0.0.1:7009"')" 1
twins uring-connect "io_uring connect" t7009 7009 t7001 7001

n=$(seen t7009)
$CTL run --policy tnet -- /usr/bin/bash -c 'echo x >/dev/tcp/127.0.0.1/7009' \
	>"$SH_TMP/devtcp.out" 2>&1
check "bash /dev/tcp to a refused port: fails" "$?" 1
check_match "bash /dev/tcp: says why" "$(cat "$SH_TMP/devtcp.out")" "Operation not permitted"
check "bash /dev/tcp: the listener saw nothing" "$(seen t7009)" "$n"
n=$(seen t7001)
$CTL run --policy tnet -- /usr/bin/bash -c 'echo x >/dev/tcp/127.0.0.1/7001'
check "bash /dev/tcp to an allowed port: works" "$?" 0
wait_until landed t7001 $((n + 1))
check "bash /dev/tcp: the allowed connection arrived" "$(seen t7001)" $((n + 1))

# Socket kinds: with [net] rules only plain TCP/UDP inet sockets, unix and
# netlink. Without [net] rules, packet and raw sockets (the host's traffic:
# another process's loopback TCP, say) need CAP_NET_RAW, which a tree has
# only where its policy gives it back (capability = net_raw).
sock_refused() { # FAMILY TYPE PROTO TARGET
	local c
	run_in_tree tnet "$NET" socket "$1" "$2" "$3"
	check "socket $1 $2 $3: refused" "$OUT" "err EPERM"
	check "socket $1 $2 $3: recorded" \
		"$(audit_wait ".hook==\"net\" and .op==\"socket\" and .target==\"$4\"")" 1
	c=$(counter deny_capability)
	run_in_tree tnonet "$NET" socket "$1" "$2" "$3"
	check "socket $1 $2 $3 without [net] rules: refused" "$OUT" "err EPERM"
	check "socket $1 $2 $3 without [net] rules: CAP_NET_RAW recorded" \
		"$(audit_wait ".policy==\"tnonet\" and .hook==\"capability\" and .target==\"CAP_NET_RAW\"" "$NRAW")" "$NRAW"
	check "socket $1 $2 $3 without [net] rules: counted" \
		"$([ "$(counter deny_capability)" -gt "$c" ] && echo more)" more
	NRAW=$((NRAW + 1))
	run_in_tree tnonetraw "$NET" socket "$1" "$2" "$3"
	check "socket $1 $2 $3 with capability = net_raw: created" "$OUT" ok
}
NRAW=1
sock_refused inet raw 1 "inet raw 1"
sock_refused inet6 raw 58 "inet6 raw 58"
sock_refused packet raw 768 "packet raw 768"
sock_refused packet dgram 768 "packet dgram 768"
ev_fields "$(audit_last '.hook=="net" and .op=="socket" and .target=="packet raw 768"')"
check "socket record: family, type, protocol, reason" \
	"${F[family]-}/${F[type]-}/${F[protocol]-}/${F[reason]-}" "packet/raw/768/socket kind not allowed"
run_in_tree tnet "$NET" socket inet stream 132
check "an SCTP socket: refused" "$OUT" "err EPERM"
run_in_tree tnet "$NET" socket netlink raw 0
check "a netlink route socket (getaddrinfo, ip addr): created" "$OUT" ok
run_in_tree tnet "$NET" socket unix stream 0
check "a unix socket: created" "$OUT" ok
run_in_tree tnet "$NET" socket inet6 dgram 0
check "a UDP socket: created" "$OUT" ok
run_in_tree tnonet "$NET" connect tcp 127.0.0.1 7009
check "without [net] rules: any destination connects" "$OUT" ok

# Traffic sent elsewhere than the address judged: source routes, IPv6
# routing headers, marks, and control messages that carry them.
run_in_tree tnet "$NET" srcroute 127.0.0.9
check "an IPv4 source route (IP_OPTIONS): refused" "$OUT" "err EPERM"
check "source route: recorded" "$(audit_wait '.hook=="net" and .op=="setsockopt" and .target=="ip IP_OPTIONS" and .reason=="socket option not allowed"')" 1
# Without [net] rules the kernel asks for CAP_NET_RAW, a tree's only where
# its policy gives it back.
run_in_tree tnonet "$NET" srcroute 127.0.0.9
check "without [net] rules: the source route needs CAP_NET_RAW" "$OUT" "err EPERM"
check "  ... recorded as the capability" \
	"$(audit_wait '.policy=="tnonet" and .hook=="capability" and .target=="CAP_NET_RAW"' "$NRAW")" "$NRAW"
NRAW=$((NRAW + 1))
run_in_tree tnonetraw "$NET" srcroute 127.0.0.9
check "with capability = net_raw: the source route is set" "$OUT" ok
run_in_tree tnet "$NET" rthdr6
check "an IPv6 routing header: refused" "$OUT" "err EPERM"
run_in_tree tnonet "$NET" rthdr6
check "without [net] rules: the kernel judges the header itself" "$OUT" "err EINVAL"
run_in_tree tnet "$NET" mark
check "SO_MARK (the host's policy routing and firewall marks): refused" "$OUT" "err EPERM"
run_in_tree tnonet "$NET" mark
check "without [net] rules: SO_MARK needs CAP_NET_RAW" "$OUT" "err EPERM"
check "  ... recorded as the capability" \
	"$(audit_wait '.policy=="tnonet" and .hook=="capability" and .target=="CAP_NET_RAW"' "$NRAW")" "$NRAW"
NRAW=$((NRAW + 1))
run_in_tree tnonetraw "$NET" mark
check "with capability = net_raw: SO_MARK is set" "$OUT" ok
# An interface of the tree's choosing for its datagrams, past the host's
# routing (around a VPN's, say), as SO_BINDTODEVICE would pick one.
run_in_tree tnet "$NET" unicast-if
check "IP_UNICAST_IF: refused" "$OUT" "err EPERM"
check "  ... recorded" "$(audit_wait '.hook=="net" and .op=="setsockopt" and .target=="ip IP_UNICAST_IF" and .reason=="socket option not allowed"')" 1
run_in_tree tnonet "$NET" unicast-if
check "without [net] rules: IP_UNICAST_IF is set" "$OUT" ok
n=$(seen u7002)
run_in_tree tnet "$NET" cmsg 127.0.0.1 7002 retopts
check "a source route in a control message (IP_RETOPTS): refused" "$OUT" "err EPERM"
check "IP_RETOPTS: recorded as op send" "$(audit_wait '.hook=="net" and .op=="send" and .target=="ip IP_RETOPTS"')" 1
run_in_tree tnet "$NET" cmsg 127.0.0.1 7002 tos
check "another control message (IP_TOS) to an allowed port: sent" "$OUT" ok
wait_until landed u7002 $((n + 1))
check "IP_TOS: only the allowed datagram arrived" "$(seen u7002)" $((n + 1))

# The unspecified address is this host: no rule names it so, refused.
n=$(seen t7001)
run_in_tree tnet "$NET" connect tcp 0.0.0.0 7001
check "a connect to 0.0.0.0 (loopback in disguise): refused" "$OUT" "err EPERM"
check "0.0.0.0: recorded as a bad address" \
	"$(audit_wait '.hook=="net" and .target=="tcp 0.0.0.0:7001" and .reason=="bad socket address"')" 1
check "0.0.0.0: the listener saw nothing" "$(seen t7001)" "$n"
run_in_tree tnonet "$NET" connect tcp 0.0.0.0 7001
check "without [net] rules: 0.0.0.0 reaches the loopback listener" "$OUT" ok
run_in_tree tnet "$NET" socket inet stream 262
check "MPTCP (subflows the kernel opens itself): refused" "$OUT" "err EPERM"

# Binds and listens: with bind rules, only those.
run_in_tree tnet "$NET" listen 127.0.0.1 7400
check "listen on an allowed port: ok" "$OUT" ok
run_in_tree tnet "$NET" listen 127.0.0.1 7500
check "bind to a port no bind rule names: refused" "$OUT" "err EPERM"
check "bind: recorded as op bind" \
	"$(audit_wait '.hook=="net" and .op=="bind" and .target=="tcp 127.0.0.1:7500"')" 1
run_in_tree tnet "$NET" bind udp 127.0.0.1 7401
check "a udp bind where the bind rule is tcp only: refused" "$OUT" "err EPERM"
run_in_tree tnet "$NET" listen-unbound
check "listen without bind (the kernel would pick a port): refused" "$OUT" "err EPERM"
check "listen: recorded as op listen on the wildcard address" \
	"$(audit_wait '.hook=="net" and .op=="listen" and .target=="tcp 0.0.0.0:0"')" 1
run_in_tree tnonet "$NET" listen-unbound
check "without [net] rules: listen without bind works" "$OUT" ok
# With connect rules and no bind rule, a tree is a client: what it sends on
# an accepted connection names no address, so it does not listen at all.
run_in_tree tconnonly "$NET" bind tcp 127.0.0.1 7601
check "connect rules only: a bind (a client's source port) works" "$OUT" ok
run_in_tree tconnonly "$NET" listen 127.0.0.1 7600
check "connect rules only: listen refused" "$OUT" "err EPERM"
check "connect rules only: recorded as op listen" \
	"$(audit_wait '.hook=="net" and .policy=="tconnonly" and .op=="listen" and .target=="tcp 127.0.0.1:7600"')" 1

# Audit mode: nothing refused, everything recorded.
n=$(seen t7009)
run_in_tree tnetaudit "$NET" connect tcp 127.0.0.1 7009
check "audit mode: connects" "$OUT" ok
wait_until landed t7009 $((n + 1))
check "audit mode: the listener saw it" "$(seen t7009)" $((n + 1))
check "audit mode: recorded as audit" \
	"$(audit_wait '.hook=="net" and .policy=="tnetaudit" and .action=="audit" and .target=="tcp 127.0.0.1:7009"')" 1

# Outside every tree nothing is judged.
d0=$(counter deny_net)
run_outside "$NET" connect tcp 127.0.0.1 7009
check "outside every tree: connects" "$OUT" ok
run_outside "$NET" socket packet raw 768
check "outside every tree: a packet socket is created" "$OUT" ok
check "outside every tree: no record, no count" "$(counter deny_net)" "$d0"

# A reload that changes [net] takes effect on a running tree.
F2=$SH_TMP/live
mkfifo "$F2.cmd" "$F2.ack"
$CTL run --policy tnet -- /usr/bin/bash -c \
	"while read -r x <$F2.cmd; do [ \"\$x\" = quit ] && exit 0; $NET connect tcp 127.0.0.1 \$x >$F2.ack 2>&1; done" \
	2>"$F2.err" &
livepid=$!
ask() { echo "$1" >"$F2.cmd"; local r; read -r r <"$F2.ack"; echo "$r"; }
check "running tree before reload: 7009 refused" "$(ask 7009)" "err EPERM"
echo "connect = tcp 127.0.0.1 7009" >>"$SH_TMP/policies/tnet.policy"
$CTL policy reload >/dev/null
check "policy reload with a new [net] rule" "$?" 0
check "running tree after reload: 7009 connects" "$(ask 7009)" ok
check "running tree after reload: 7200 still refused" "$(ask 7200)" "err EPERM"
echo quit >"$F2.cmd"
wait $livepid
check "the running tree ended normally" "$?" 0

# The programs that judge only [net] rules (socket_sendmsg on every send of
# the host, setsockopt, listen, SCTP's options) are attached only while a
# policy in force has [net] rules: linked before the reload that brings
# one returns, unlinked once a reload leaves none. Their links in the
# kernel, by program name (bpftool prints the whole name where the BTF
# has it, else the kernel's 15 bytes), and their pins.
linked() {
	local ids
	ids=$(bpftool -j prog show | jq -c --arg n "$1" '[.[] | select(.name==$n or .name==$n[:15]) | .id]')
	bpftool -j link show | jq --argjson ids "$ids" '[.[] | select(.prog_id as $p | $ids | index($p))] | length'
}
demand_pins() {
	ls "$PIN"/gen-*/ | grep -cE '^link_sh_(socket_sendmsg|socket_setsockopt|socket_listen|sctp_bind_connect)$'
}
check "[net] rules in force: the four [net] programs linked and pinned" \
	"$(demand_pins) $(linked sh_socket_sendmsg) $(linked sh_socket_setsockopt)" "4 1 1"
mkdir "$SH_TMP/off"
mv "$SH_TMP"/policies/{tnet,tnetaudit,tconnonly}.policy "$SH_TMP/off/"
$CTL policy reload >/dev/null
check "a reload that leaves no [net] rule" "$?" 0
check "... unpins the four at once" "$(demand_pins)" 0
unlinked() { [ "$(linked sh_socket_sendmsg)$(linked sh_socket_listen)" = 00 ]; }
wait_until unlinked
check "... and their links go from the kernel" \
	"$(linked sh_socket_sendmsg) $(linked sh_socket_setsockopt) $(linked sh_socket_listen) $(linked sh_sctp_bind_connect)" \
	"0 0 0 0"
check "... socket_connect stays linked (unix socket rules, the wall)" "$(linked sh_socket_connect)" 1
check_match "... it says so in its log" "$(cat "$SH_TMP/daemon.err")" \
	"4 programs detached: no policy in force needs them"
n=$(seen u7005)
run_in_tree tnonet "$NET" sendto 127.0.0.1 7005
check "no [net] rule in force: a tree's sendto is sent" "$OUT" ok
wait_until landed u7005 $((n + 1))
check "... and arrives" "$(seen u7005)" $((n + 1))
mv "$SH_TMP"/off/*.policy "$SH_TMP/policies/"
$CTL policy reload >/dev/null
check "a reload that brings [net] rules back" "$?" 0
check "... links the four before it returns" "$(demand_pins) $(linked sh_socket_sendmsg)" "4 1"
# Root in a tree with [net] rules takes the send program's link pin away:
# bpffs is the enforcer's (hook cgroup), and the link stays.
lp=$(ls -d "$PIN"/gen-* | tail -n 1)/link_sh_socket_sendmsg
r0=$(audit_count ".op==\"unlink\" and .target==\"$lp\"")
run_in_tree tnet "$TRY" unlink "$lp"
check "a tree unlinking sh_socket_sendmsg's link pin: refused" "$OUT" "err EPERM"
check "... recorded" "$(audit_wait ".op==\"unlink\" and .target==\"$lp\"" $((r0 + 1)))" $((r0 + 1))
check "... the link still pinned and in the kernel" "$(demand_pins) $(linked sh_socket_sendmsg)" "4 1"
: >"$SH_TMP/unlinkme"
run_in_tree tnet "$TRY" unlink "$SH_TMP/unlinkme"
check "... its twin: the same tree unlinks a file no rule protects" \
	"$OUT $([ -e "$SH_TMP/unlinkme" ] && echo kept || echo gone)" "ok gone"
q='.hook=="net" and .op=="send" and .target=="udp 127.0.0.1:7005" and .action=="deny"'
r0=$(audit_count "$q")
n0=$(counter deny_net)
twins sendto "[net] rules back: unconnected sendto" u7005 7005 u7002 7002
check "... its refusal is recorded and counted" "$(audit_wait "$q" $((r0 + 1))) $(counter deny_net)" \
	"$((r0 + 1)) $((n0 + 1))"

# The shipped agent policy: its model API gateway and command server, the
# metadata endpoint refused, nothing else.
cp "$(cd "$(dirname "$0")/../.." && pwd)/policies/agent.policy" "$SH_TMP/policies/"
ip addr add 169.254.169.254/32 dev lo
serve a8443 tcp 127.0.0.1 8443
serve a7000 tcp 127.0.0.1 7000
serve a80 tcp 169.254.169.254 80
wait_until ready
$CTL policy reload >/dev/null
check "the shipped agent policy loads" "$?" 0
agent_tcp() { # NAME ADDR PORT
	local before; before=$(seen "$1")
	$CTL run --policy agent -- /usr/bin/bash -c "echo x >/dev/tcp/$2/$3" >/dev/null 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then wait_until landed "$1" $((before + 1)); fi
	echo "$rc $(($(seen "$1") - before))"
}
check "agent: the model API gateway (rc, connections seen)" "$(agent_tcp a8443 127.0.0.1 8443)" "0 1"
check "agent: the command server" "$(agent_tcp a7000 127.0.0.1 7000)" "0 1"
check "agent: another local service is refused" "$(agent_tcp t7001 127.0.0.1 7001)" "1 0"
check "agent: the metadata endpoint is refused" "$(agent_tcp a80 169.254.169.254 80)" "1 0"
check "agent: the metadata refusal names the deny rule" \
	"$(audit_wait '.policy=="agent" and .target=="tcp 169.254.169.254:80" and .reason=="deny rule"')" 1
run_outside "$NET" connect tcp 169.254.169.254 80
check "outside every tree the metadata listener is reachable" "$OUT" ok
ip addr del 169.254.169.254/32 dev lo

# Bad [net] rules are FILE:LINE errors in check and in reload alike.
cat >"$SH_TMP/bad.policy" <<P
[policy]
name = bad
[net]
connect = tcp 10.1.2.3/8 443
P
out=$($CTL policy check "$SH_TMP/bad.policy" 2>&1)
check "policy check: a prefix with host bits is refused" "$?" 1
check_match "policy check: says where and why" "$out" "bad.policy:4: .*bits set past its prefix"
cp "$SH_TMP/bad.policy" "$SH_TMP/policies/"
out=$($CTL policy reload 2>&1)
check "reload refuses the same file (exit 2)" "$?" 2
check_match "reload says where and why" "$out" "bad.policy:4: .*bits set past its prefix"
rm "$SH_TMP/policies/bad.policy"
check_log_valid
exit 0
