// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * net: one network attempt per run, for the [net] tests. Prints "ok" or
 * "err NAME" (the errno's symbol) and a second line naming the failed call.
 *
 *   net connect tcp|udp ADDR PORT     connect; tcp then sends "x", udp sends
 *                                     one datagram "x"
 *   net sendto ADDR PORT              unconnected UDP datagram "x"
 *   net sendmsg-unspec ADDR PORT      UDP on an IPv4 socket, sendmsg to a
 *                                     sockaddr_in whose family is AF_UNSPEC
 *                                     (the kernel sends it as AF_INET)
 *   net fastopen ADDR PORT            TCP Fast Open: sendto(MSG_FASTOPEN)
 *   net uring-connect ADDR PORT       TCP connect through io_uring
 *   net bind tcp|udp ADDR PORT        bind only
 *   net listen ADDR PORT              TCP bind + listen
 *   net listen-unbound                TCP listen without bind (autobind)
 *   net srcroute ADDR                 set an IPv4 loose source route through
 *                                     ADDR on a TCP socket (IP_OPTIONS)
 *   net rthdr6                        IPV6_RTHDR on a UDP socket
 *   net mark                          SO_MARK on a TCP socket
 *   net unicast-if                    IP_UNICAST_IF (the loopback) on a UDP socket
 *   net cmsg ADDR PORT retopts|tos    UDP sendmsg with an IP_RETOPTS (a
 *                                     source route) or IP_TOS control message
 *   net socket FAMILY TYPE PROTO      socket(); FAMILY inet|inet6|packet|
 *                                     unix|netlink, TYPE stream|dgram|raw,
 *                                     PROTO a number
 *   net serve tcp|udp ADDR PORT FILE  a listener outside the tree: prints
 *                                     "ready", then appends one line to FILE
 *                                     per connection or datagram, for ever
 *
 * ADDR is an IPv4 or IPv6 address (an IPv4-mapped one goes over IPv6).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uring.h"
#include "verdict.h"

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static int usage(void)
{
	fprintf(stderr, "net: bad usage (see tests/vm/net.c)\n");
	return 2;
}

/* ADDR PORT into ss; its length, or 0 if ADDR is not an address. */
static socklen_t sockaddr_of(const char *addr, const char *port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)atoi(port));
		return sizeof(*in);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)atoi(port));
		return sizeof(*in6);
	}
	return 0;
}

static int sock_for(const struct sockaddr_storage *ss, int type)
{
	return socket(ss->ss_family, type, 0);
}

static int do_connect(const char *proto, const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	int type = !strcmp(proto, "udp") ? SOCK_DGRAM : SOCK_STREAM, fd;

	if (!len)
		return usage();
	fd = sock_for(&ss, type);
	if (fd < 0)
		return report(-1, "socket");
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		return report(-1, "connect");
	return report(send(fd, "x", 1, 0) == 1 ? 0 : -1, "send");
}

static int do_sendto(const char *addr, const char *port, int flags, int type)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	int fd;

	if (!len)
		return usage();
	fd = sock_for(&ss, type);
	if (fd < 0)
		return report(-1, "socket");
	return report(sendto(fd, "x", 1, flags, (struct sockaddr *)&ss, len) == 1 ? 0 : -1,
		      "sendto");
}

static int do_sendmsg_unspec(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr msg = { .msg_name = &ss, .msg_iov = &iov, .msg_iovlen = 1 };
	int fd;

	msg.msg_namelen = sockaddr_of(addr, port, &ss);
	if (msg.msg_namelen != sizeof(struct sockaddr_in))
		return usage();
	ss.ss_family = AF_UNSPEC;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return report(-1, "socket");
	return report(sendmsg(fd, &msg, 0) == 1 ? 0 : -1, "sendmsg");
}

/* One IORING_OP_CONNECT, submitted by this task. */
static int do_uring_connect(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	struct io_uring_sqe req = { .opcode = IORING_OP_CONNECT };
	const char *what;
	int fd, res;

	if (!len)
		return usage();
	fd = sock_for(&ss, SOCK_STREAM);
	if (fd < 0)
		return report(-1, "socket");
	req.fd = fd;
	req.addr = (uintptr_t)&ss;
	req.off = len;
	if (uring_one(&req, URING_INLINE, &res, &what) < 0)
		return uring_unavailable(what);
	if (res < 0) {
		errno = -res;
		return report(-1, "IORING_OP_CONNECT");
	}
	return report(send(fd, "x", 1, 0) == 1 ? 0 : -1, "send");
}

static int do_bind(const char *proto, const char *addr, const char *port, bool listen_too)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	int fd, one = 1;

	if (!len)
		return usage();
	fd = sock_for(&ss, !strcmp(proto, "udp") ? SOCK_DGRAM : SOCK_STREAM);
	if (fd < 0)
		return report(-1, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return report(-1, "bind");
	return report(listen_too ? listen(fd, 4) : 0, "listen");
}

static int do_listen_unbound(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return report(-1, "socket");
	return report(listen(fd, 4), "listen");
}

/* An LSRR option through addr: type, length, pointer, one address, EOL. */
static void lsrr(const char *addr, unsigned char opt[8])
{
	struct in_addr a;

	inet_pton(AF_INET, addr, &a);
	opt[0] = 0x83;
	opt[1] = 7;
	opt[2] = 4;
	memcpy(opt + 3, &a, 4);
	opt[7] = 0;
}

static int do_srcroute(const char *addr)
{
	unsigned char opt[8];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return report(-1, "socket");
	lsrr(addr, opt);
	return report(setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)),
		      "setsockopt IP_OPTIONS");
}

static int do_rthdr6(void)
{
	/* A type 0 routing header with no segments. */
	unsigned char rh[8] = { 0, 0, 0, 0 };
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);

	if (fd < 0)
		return report(-1, "socket");
	return report(setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, rh, sizeof(rh)),
		      "setsockopt IPV6_RTHDR");
}

static int do_mark(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return report(-1, "socket");
	return report(setsockopt(fd, SOL_SOCKET, SO_MARK, &one, sizeof(one)), "setsockopt SO_MARK");
}

/* IP_UNICAST_IF on a UDP socket: its datagrams leave by the loopback
 * interface whatever the routing says. */
static int do_unicast_if(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ifindex = (int)htonl(1);

	if (fd < 0)
		return report(-1, "socket");
	return report(setsockopt(fd, SOL_IP, IP_UNICAST_IF, &ifindex, sizeof(ifindex)),
		      "setsockopt IP_UNICAST_IF");
}

static int do_cmsg(const char *addr, const char *port, const char *what)
{
	struct sockaddr_storage ss;
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	union { char buf[CMSG_SPACE(8)]; struct cmsghdr align; } u;
	struct msghdr msg = { .msg_name = &ss, .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd, tos = 0x10;

	memset(&u, 0, sizeof(u));
	msg.msg_namelen = sockaddr_of(addr, port, &ss);
	if (msg.msg_namelen != sizeof(struct sockaddr_in))
		return usage();
	c->cmsg_level = IPPROTO_IP;
	if (!strcmp(what, "retopts")) {
		c->cmsg_type = IP_RETOPTS;
		c->cmsg_len = CMSG_LEN(8);
		lsrr(addr, CMSG_DATA(c));
	} else {
		c->cmsg_type = IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &tos, sizeof(tos));
		msg.msg_controllen = CMSG_SPACE(sizeof(int));
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return report(-1, "socket");
	return report(sendmsg(fd, &msg, 0) == 1 ? 0 : -1, "sendmsg");
}

static int word(const char *w, const char *const *names, const int *values, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(w, names[i]))
			return values[i];
	return -1;
}

static int do_socket(const char *family, const char *type, const char *proto)
{
	static const char *const fam_names[] = { "inet", "inet6", "packet", "unix", "netlink" };
	static const int fams[] = { AF_INET, AF_INET6, AF_PACKET, AF_UNIX, AF_NETLINK };
	static const char *const type_names[] = { "stream", "dgram", "raw", "seqpacket" };
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET };
	int f = word(family, fam_names, fams, 5), t = word(type, type_names, types, 4);

	if (f < 0 || t < 0)
		return usage();
	return report(socket(f, t, atoi(proto)), "socket");
}

/* A listener outside every tree: one line in FILE per connection or datagram. */
static int serve(const char *proto, const char *addr, const char *port, const char *file)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	bool udp = !strcmp(proto, "udp");
	int fd, one = 1;
	char buf[64];

	if (!len)
		return usage();
	fd = sock_for(&ss, udp ? SOCK_DGRAM : SOCK_STREAM);
	if (fd < 0)
		return report(-1, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &(int){ 8 }, sizeof(int));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (!udp && listen(fd, 64) < 0))
		return report(-1, "bind/listen");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int c = udp ? fd : accept(fd, NULL, NULL);
		FILE *f;

		if (c < 0)
			continue;
		if (recv(c, buf, sizeof(buf), 0) < 0 && udp)
			continue;
		f = fopen(file, "a");
		if (f) {
			fprintf(f, "%s\n", udp ? "datagram" : "connection");
			fclose(f);
		}
		if (!udp)
			close(c);
	}
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(op, "connect") && argc == 5)
		return do_connect(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "sendto") && argc == 4)
		return do_sendto(argv[2], argv[3], 0, SOCK_DGRAM);
	if (!strcmp(op, "sendmsg-unspec") && argc == 4)
		return do_sendmsg_unspec(argv[2], argv[3]);
	if (!strcmp(op, "fastopen") && argc == 4)
		return do_sendto(argv[2], argv[3], MSG_FASTOPEN, SOCK_STREAM);
	if (!strcmp(op, "uring-connect") && argc == 4)
		return do_uring_connect(argv[2], argv[3]);
	if (!strcmp(op, "bind") && argc == 5)
		return do_bind(argv[2], argv[3], argv[4], false);
	if (!strcmp(op, "listen") && argc == 4)
		return do_bind("tcp", argv[2], argv[3], true);
	if (!strcmp(op, "listen-unbound") && argc == 2)
		return do_listen_unbound();
	if (!strcmp(op, "srcroute") && argc == 3)
		return do_srcroute(argv[2]);
	if (!strcmp(op, "rthdr6") && argc == 2)
		return do_rthdr6();
	if (!strcmp(op, "mark") && argc == 2)
		return do_mark();
	if (!strcmp(op, "unicast-if") && argc == 2)
		return do_unicast_if();
	if (!strcmp(op, "cmsg") && argc == 5)
		return do_cmsg(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "socket") && argc == 5)
		return do_socket(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "serve") && argc == 6)
		return serve(argv[2], argv[3], argv[4], argv[5]);
	return usage();
}
