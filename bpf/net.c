// SPDX-License-Identifier: GPL-2.0
/*
 * The network side of a tree: `[net]` rules at socket_connect, at every
 * send that names an address (sendto, sendmsg, TCP Fast Open, io_uring),
 * at bind and listen, and the socket kinds a tree with `[net]` rules may
 * use (socket_create, and any use of an inherited socket of another kind).
 * Judged on the sockaddr the kernel copied in, after its family is known;
 * one that cannot be read or makes no sense is refused.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"

/* A destination or local address, as the rules see it. */
struct endpoint {
	__u8 addr[16];  /* IPv6; IPv4 as ::ffff:a.b.c.d */
	__u16 port;     /* host byte order */
	__u8 proto;     /* enum sh_net_proto */
	__u16 ipproto;  /* the socket's IP protocol number, for the record */
};

/*
 * What [net] rules call a socket of this type and IP protocol (0: the
 * type's default); 0xff: a kind they refuse. Not MPTCP: its extra subflows
 * are connected by the kernel, to addresses the peer announces, through no
 * hook. One answer for creating a socket and for using one.
 */
static __always_inline __u8 kind_proto(int type, int p)
{
	if (type == SOCK_STREAM && (p == 0 || p == IPPROTO_TCP))
		return SH_PROTO_TCP;
	if (type == SOCK_DGRAM && (p == 0 || p == IPPROTO_UDP || p == IPPROTO_UDPLITE))
		return SH_PROTO_UDP;
	if (type == SOCK_DGRAM && (p == IPPROTO_ICMP || p == IPPROTO_ICMPV6))
		return SH_PROTO_OTHER;
	return 0xff;
}

static __always_inline __u8 net_proto(struct sock *sk, __u16 *ipproto)
{
	*ipproto = BPF_CORE_READ(sk, sk_protocol);
	return kind_proto(BPF_CORE_READ(sk, sk_type), *ipproto);
}

/* Socket kinds a tree with [net] rules may create and use. */
static __always_inline bool net_kind_allowed(int family, int type, int protocol)
{
	if (family == AF_UNIX || family == AF_NETLINK)
		return true;
	/* SOCK_NONBLOCK and SOCK_CLOEXEC are flags */
	return (family == AF_INET || family == AF_INET6) && kind_proto(type & 0xf, protocol) != 0xff;
}

static __always_inline void map_v4(__u8 *addr, __u32 v4)
{
	__builtin_memset(addr, 0, 10);
	addr[10] = 0xff;
	addr[11] = 0xff;
	__builtin_memcpy(addr + 12, &v4, 4);
}

/*
 * The address at sa (len bytes, kernel memory) into e. The family to read
 * it as: sa_family, with AF_UNSPEC read as AF_INET where the kernel may
 * (UDP sends and binds on IPv4 sockets treat it so). 1: read; 0: no
 * address (a short AF_UNSPEC on an IPv6 socket); -1: unreadable or
 * malformed.
 */
static __always_inline int read_endpoint(struct sockaddr *sa, int len, int sk_family,
					 struct endpoint *e)
{
	struct sockaddr_in6 in6 = {};
	struct sockaddr_in in = {};
	__u16 family = 0;

	if (!sa || len < (int)sizeof(family) || bpf_probe_read_kernel(&family, sizeof(family), sa))
		return -1;
	/* An IPv4 socket sends and binds to it as AF_INET. On an IPv6 socket
	 * it names no address, but a socket can turn IPv4 under a send
	 * (IPV6_ADDRFORM): whatever it could name is judged. */
	if (family == AF_UNSPEC && (sk_family == AF_INET || len >= (int)sizeof(in)))
		family = AF_INET;
	if (family == AF_UNSPEC)
		return 0;
	if (family == AF_INET) {
		if (len < (int)sizeof(in) || bpf_probe_read_kernel(&in, sizeof(in), sa))
			return -1;
		map_v4(e->addr, in.sin_addr.s_addr);
		e->port = bpf_ntohs(in.sin_port);
		return 1;
	}
	/* The address ends at byte 24 (SIN6_LEN_RFC2133): the scope id is optional. */
	if (family != AF_INET6 || len < 24 || bpf_probe_read_kernel(&in6, 24, sa))
		return -1;
	__builtin_memcpy(e->addr, &in6.sin6_addr, 16);
	e->port = bpf_ntohs(in6.sin6_port);
	return 1;
}

/* The first rule of kind covering e (SH_ACT_*), or 0 when none does. */
static __always_inline __u32 net_rule(const struct member *m, __u8 kind, const struct endpoint *e)
{
	struct sh_net_key key = { .prefixlen = 32 + 128, .slot = m->slot, .kind = kind,
				  .policy = m->policy };
	struct sh_net_rules *v;

	__builtin_memcpy(key.addr, e->addr, 16);
	v = bpf_map_lookup_elem(&net_rules, &key);
	if (!v)
		return 0;
	for (int i = 0; i < SH_NET_RULES_PER_KEY; i++) {
		struct sh_net_match *r = &v->r[i];

		if ((__u32)i >= v->n)
			break;
		if ((r->proto == SH_PROTO_ANY || r->proto == e->proto) &&
		    e->port >= r->port_lo && e->port <= r->port_hi)
			return r->action;
	}
	return 0;
}

/* :: or ::ffff:0.0.0.0 */
static __always_inline bool unspecified(const __u8 *a)
{
	__u64 hi = 0, lo = 0;

	__builtin_memcpy(&hi, a, 8);
	__builtin_memcpy(&lo, a + 8, 8);
	return !hi && (!lo || lo == bpf_cpu_to_be64(0xffff00000000ull));
}

/*
 * Which policy flags make kind an allowlist. A connection accepted on a
 * listening socket comes from anywhere, and what is sent on it names no
 * address: under connect rules a tree listens only where a bind rule
 * allows it.
 */
static __always_inline __u32 allowlist_flags(__u8 kind, __u32 op)
{
	if (kind == SH_NET_CONNECT)
		return SH_PF_NET_CONNECT;
	return op == SH_OP_LISTEN ? SH_PF_NET_BIND | SH_PF_NET_CONNECT : SH_PF_NET_BIND;
}

/* Refuse, with the endpoint (when there is one) in the record. */
static __always_inline int net_refuse(struct member *m, __u32 op, __u32 reason,
				      const struct endpoint *e)
{
	struct refusal w = { .hook = SH_HOOK_NET, .op = op, .flags = SH_EVF_NET };
	struct scratch *s = e ? get_scratch(m) : 0;

	if (!s)
		return report(m, 0, &w, reason, 0);
	w.op_flags = e->ipproto;
	w.target_pid = e->port;
	__builtin_memcpy(s->ev.path, e->addr, 16);
	return released(m, report(m, s, &w, reason, 17));
}

/*
 * Judge an address a socket is asked to reach (kind SH_NET_CONNECT) or
 * take (SH_NET_BIND). sa NULL or an address that names none: nothing to
 * judge.
 */
static __always_inline int judge_net(struct member *m, struct socket *sock, struct sockaddr *sa,
				     int len, __u8 kind, __u32 op)
{
	/* Loads through the hook's own pointers, not probe reads. */
	struct sock *sk = sock->sk;
	struct endpoint e = {};
	__u16 family;
	__u32 act;
	int r;

	count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
	if (!m->flags)
		return net_refuse(m, op, SH_WHY_NOPOLICY, 0);
	if (!(m->flags & SH_PF_NET) || !sk)
		return 0;
	family = sk->__sk_common.skc_family;
	if (family == AF_UNIX || family == AF_NETLINK)
		return 0;
	e.proto = net_proto(sk, &e.ipproto);
	if ((family != AF_INET && family != AF_INET6) || e.proto == 0xff)
		return net_refuse(m, op, SH_WHY_SOCKET, 0);
	r = read_endpoint(sa, len, family, &e);
	if (r == 0)
		return 0;
	if (r < 0)
		return net_refuse(m, op, SH_WHY_ADDRESS, 0);
	/* The unspecified address as a destination is this host (the kernel
	 * routes it to loopback): no rule names it that way. */
	if (kind == SH_NET_CONNECT && unspecified(e.addr))
		return net_refuse(m, op, SH_WHY_ADDRESS, &e);
	act = net_rule(m, kind, &e);
	if (act == SH_ACT_DENY)
		return net_refuse(m, op, SH_WHY_RULE, &e);
	if (act != SH_ACT_ALLOW && (m->flags & allowlist_flags(kind, op)))
		return net_refuse(m, op, SH_WHY_DEFAULT, &e);
	return 0;
}

/* A socket of this kind (family, type, protocol) refused. */
static __always_inline int refuse_kind(struct member *m, __u32 op, int family, int type,
				       int protocol, __u32 why)
{
	return report(m, 0, &(struct refusal){ .hook = SH_HOOK_NET, .op = op, .flags = SH_EVF_NET,
					      .op_flags = family,
					      .target_pid = (type & 0xffff) | protocol << 16 },
		      why, 0);
}

SEC("lsm/socket_create")
int BPF_PROG(sh_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct member m = {};

	if (ret)
		return ret;
	if (kern || !membership(&m))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
	if (!m.flags)
		return net_refuse(&m, SH_OP_SOCKET, SH_WHY_NOPOLICY, 0);
	/* NETLINK_USERSOCK carries messages between processes (sh_netlink_send);
	 * its groups are the host's to listen on too. */
	if (family == AF_NETLINK && protocol == NETLINK_USERSOCK)
		return refuse_kind(&m, SH_OP_SOCKET, family, type, protocol, SH_WHY_SCOPE);
	if (!(m.flags & SH_PF_NET) || net_kind_allowed(family, type, protocol))
		return 0;
	return refuse_kind(&m, SH_OP_SOCKET, family, type, protocol, SH_WHY_SOCKET);
}

/*
 * Netlink messages. A message to the kernel meets its family's own
 * capability checks, and one to another process or a group needs
 * CAP_NET_ADMIN (refused by sh_capable), except on NETLINK_USERSOCK, open to
 * every sender: there a tree would reach any host process listening, by
 * port or group, outside every rule, and the kernel answers nothing. A tree
 * sends none, on a socket it was handed as well. Outsiders pay one load.
 */
SEC("lsm/netlink_send")
int BPF_PROG(sh_netlink_send, struct sock *sk, struct sk_buff *skb, int ret)
{
	struct member m = {};

	if (ret || sk->sk_protocol != NETLINK_USERSOCK)
		return ret;
	if (!membership(&m))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
	return refuse_kind(&m, SH_OP_NETLINK_SEND, AF_NETLINK, sk->sk_type, NETLINK_USERSOCK,
			   SH_WHY_SCOPE);
}

SEC("lsm/socket_connect")
int BPF_PROG(sh_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	struct member m = {};

	ENTER(ret, m);
	/* AF_UNSPEC disconnects a socket: it reaches nothing. (The kernel's
	 * copy of the address, loaded through the hook's pointer.) */
	if (address && addrlen >= (int)sizeof(address->sa_family) &&
	    address->sa_family == AF_UNSPEC)
		return 0;
	return judge_net(&m, sock, address, addrlen, SH_NET_CONNECT, SH_OP_CONNECT);
}

/* Options that send a socket's traffic elsewhere than the address judged
 * (IPv4 source routes, IPv6 routing and option headers, a socket turned
 * IPv4 under a send) or past the host's routing and firewall marks (an
 * interface of the tree's choosing: SO_BINDTODEVICE, *_UNICAST_IF). */
static __always_inline bool rerouting_option(int level, int name)
{
	if (level == SOL_IP)
		return name == IP_OPTIONS || name == IP_RETOPTS || name == IP_TRANSPARENT ||
		       name == IP_UNICAST_IF;
	if (level == SOL_IPV6)
		return name == IPV6_ADDRFORM || name == IPV6_2292HOPOPTS ||
		       name == IPV6_2292DSTOPTS || name == IPV6_2292RTHDR ||
		       name == IPV6_2292PKTOPTIONS || name == IPV6_FLOWLABEL_MGR ||
		       name == IPV6_HOPOPTS || name == IPV6_RTHDRDSTOPTS || name == IPV6_RTHDR ||
		       name == IPV6_DSTOPTS || name == IPV6_TRANSPARENT ||
		       name == IPV6_UNICAST_IF;
	return level == SOL_SOCKET &&
	       (name == SO_MARK || name == SO_BINDTODEVICE || name == SO_BINDTOIFINDEX);
}

static __always_inline int refuse_option(struct member *m, __u32 op, int level, int name)
{
	count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
	return report(m, 0, &(struct refusal){ .hook = SH_HOOK_NET, .op = op, .flags = SH_EVF_NET,
					       .op_flags = (__u32)level << 16 | (name & 0xffff) },
		      SH_WHY_OPTION, 0);
}

/* Is this an inet socket of a tree with [net] rules? */
static __always_inline bool net_judged(const struct member *m, struct socket *sock)
{
	struct sock *sk = BPF_CORE_READ(sock, sk);
	__u16 family;

	if (!(m->flags & SH_PF_NET) || !sk)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	return family == AF_INET || family == AF_INET6;
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(sh_socket_setsockopt, struct socket *sock, int level, int optname, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (!net_judged(&m, sock) || !rerouting_option(level, optname))
		return 0;
	return refuse_option(&m, SH_OP_SETSOCKOPT, level, optname);
}

#define SH_CMSG_MAX 16

/*
 * The message's control messages (a kernel copy by the time the hook runs;
 * a user pointer is read as one): 0 if none reroutes it, else the first
 * that does as level << 16 | type, or ~0 when they cannot be read or are
 * more than SH_CMSG_MAX.
 */
static __always_inline __u32 rerouting_cmsg(struct msghdr *msg)
{
	void *ctl = BPF_CORE_READ(msg, msg_control);
	__u64 len = BPF_CORE_READ(msg, msg_controllen), off = 0;

	if (!ctl || !len)
		return 0;
	for (int i = 0; i < SH_CMSG_MAX; i++) {
		struct cmsghdr h = {};

		if (off + sizeof(h) > len)
			return 0;
		if (bpf_probe_read_kernel(&h, sizeof(h), ctl + off) &&
		    bpf_probe_read_user(&h, sizeof(h), ctl + off))
			return ~0u;
		if (rerouting_option(h.cmsg_level, h.cmsg_type))
			return (__u32)h.cmsg_level << 16 | (h.cmsg_type & 0xffff);
		if (h.cmsg_len < sizeof(h))
			return 0;  /* the kernel refuses the message */
		off += (h.cmsg_len + 7) & ~7ull;
	}
	return off + sizeof(struct cmsghdr) > len ? 0 : ~0u;
}

/*
 * Every send: an address in the message is judged like a connect (a send
 * without one goes where a judged connect pointed the socket), and control
 * messages that would reroute it are refused. A socket of
 * a refused kind the tree did not create (inherited, received) is refused
 * here too.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(sh_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct member m = {};
	void *name;
	int len;

	ENTER(ret, m);
	if (net_judged(&m, sock)) {
		__u32 bad = rerouting_cmsg(msg);

		if (bad == ~0u)
			return refuse_option(&m, SH_OP_SEND, 0xffff, 0xffff);
		if (bad)
			return refuse_option(&m, SH_OP_SEND, bad >> 16, bad & 0xffff);
	}
	name = BPF_CORE_READ(msg, msg_name);
	len = BPF_CORE_READ(msg, msg_namelen);
	if (!name || len <= 0) {
		struct sock *sk = BPF_CORE_READ(sock, sk);
		__u16 family, ipproto;

		if (!(m.flags & SH_PF_NET) || !sk)
			return m.flags ? 0 : net_refuse(&m, SH_OP_SEND, SH_WHY_NOPOLICY, 0);
		family = BPF_CORE_READ(sk, __sk_common.skc_family);
		if (family == AF_UNIX || family == AF_NETLINK)
			return 0;
		if ((family == AF_INET || family == AF_INET6) && net_proto(sk, &ipproto) != 0xff)
			return 0;
		count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
		return net_refuse(&m, SH_OP_SEND, SH_WHY_SOCKET, 0);
	}
	return judge_net(&m, sock, name, len, SH_NET_CONNECT, SH_OP_SEND);
}

SEC("lsm/socket_bind")
int BPF_PROG(sh_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	mark_unix_binder(&m, sock);
	return judge_net(&m, sock, address, addrlen, SH_NET_BIND, SH_OP_BIND);
}

/*
 * listen takes the address the socket is bound to; an unbound one binds
 * to the wildcard address and a port the kernel picks, judged as port 0.
 */
SEC("lsm/socket_listen")
int BPF_PROG(sh_socket_listen, struct socket *sock, int backlog, int ret)
{
	struct sock *sk = BPF_CORE_READ(sock, sk);
	struct sockaddr_in6 in6 = {};
	struct member m = {};
	__u16 family;

	ENTER(ret, m);
	if (!sk)
		return judge_net(&m, sock, 0, 0, SH_NET_BIND, SH_OP_LISTEN);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	in6.sin6_family = family;
	in6.sin6_port = bpf_htons(BPF_CORE_READ(sk, __sk_common.skc_num));
	if (family == AF_INET) {
		struct sockaddr_in *in = (void *)&in6;

		in->sin_addr.s_addr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		return judge_net(&m, sock, (void *)in, sizeof(*in), SH_NET_BIND, SH_OP_LISTEN);
	}
	BPF_CORE_READ_INTO(&in6.sin6_addr, sk, __sk_common.skc_v6_rcv_saddr);
	return judge_net(&m, sock, (void *)&in6, sizeof(in6), SH_NET_BIND, SH_OP_LISTEN);
}

/* SCTP binds and connects through socket options too (sctp_connectx):
 * not a kind [net] allows. */
SEC("lsm/sctp_bind_connect")
int BPF_PROG(sh_sctp_bind_connect, struct sock *sk, int optname, struct sockaddr *address,
	     int addrlen, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (m.flags && !(m.flags & SH_PF_NET))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_NET, SH_CNT_CHECK));
	return net_refuse(&m, SH_OP_CONNECT, m.flags ? SH_WHY_SOCKET : SH_WHY_NOPOLICY, 0);
}
