// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * ctlraw: sends hand-made requests to sharnessd's control socket, so the
 * tests can check what the daemon does with malformed input.
 *
 *   ctlraw SOCKET CASE[@LABEL]...
 *
 * Each case is one connection with one message (SOCK_SEQPACKET):
 *   empty      a zero-length message
 *   nonul      "status" without its terminating NUL
 *   zeroarg    "\0": an empty command name
 *   args64     "ping" and 63 more arguments (the most allowed)
 *   args65     "ping" and 64 more arguments (one too many)
 *   max        "ping" and one argument, 65536 bytes in all (the largest allowed)
 *   big        70000 bytes: "status" and a long argument
 *   random     4096 pseudo-random bytes, the last one not NUL
 *   random0    4096 pseudo-random bytes, NUL-terminated, first byte not NUL
 *   unknown    "frobnicate"
 *   status     "status" (a well-formed request)
 *   silent:N   connect, send nothing for N seconds, then read the reply
 *
 * For every reply message it prints "LABEL K TEXT" (K is the kind byte,
 * TEXT has newlines and other control bytes shown as '.'), then
 * "LABEL end X<status>" or "LABEL end none <why>" when no 'X' came. A
 * silent case prints "LABEL connected" as soon as it is connected; a failed
 * send prints "LABEL send-error ERROR", a connection reset "LABEL recv-error
 * ERROR", and the replies are read all the same.
 * Exit status: 0 if every case got an 'X' reply, 1 if not, 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_REPLY 65536

static unsigned long long rng_state = 0x2545f4914f6cdd1dULL;

static unsigned char rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned char)(rng_state >> 56);
}

/* Builds the request of a case; returns its length, or -1 if unknown. */
static long build(const char *name, char *buf, size_t cap)
{
	size_t n = 0;

	if (!strcmp(name, "empty"))
		return 0;
	if (!strcmp(name, "nonul")) {
		memcpy(buf, "status", 6);
		return 6;
	}
	if (!strcmp(name, "zeroarg")) {
		buf[0] = 0;
		return 1;
	}
	if (!strcmp(name, "args64") || !strcmp(name, "args65")) {
		int extra = !strcmp(name, "args64") ? 63 : 64;

		memcpy(buf, "ping", 5);
		n = 5;
		for (int i = 0; i < extra; i++) {
			memcpy(buf + n, "x", 2);
			n += 2;
		}
		return (long)n;
	}
	if (!strcmp(name, "max") || !strcmp(name, "big")) {
		size_t total = !strcmp(name, "max") ? 65536 : 70000;
		const char *cmd = !strcmp(name, "max") ? "ping" : "status";

		if (total > cap)
			return -1;
		n = strlen(cmd) + 1;
		memcpy(buf, cmd, n);
		memset(buf + n, 'A', total - n - 1);
		buf[total - 1] = 0;
		return (long)total;
	}
	if (!strcmp(name, "random") || !strcmp(name, "random0")) {
		for (n = 0; n < 4096; n++)
			buf[n] = (char)rnd();
		if (!strcmp(name, "random")) {
			if (!buf[n - 1])
				buf[n - 1] = 'z';
		} else {
			if (!buf[0])
				buf[0] = 'z';
			buf[n - 1] = 0;
		}
		return (long)n;
	}
	if (!strcmp(name, "unknown")) {
		memcpy(buf, "frobnicate", 11);
		return 11;
	}
	if (!strcmp(name, "status")) {
		memcpy(buf, "status", 7);
		return 7;
	}
	return -1;
}

static void show(const char *label, const char *msg, ssize_t n)
{
	printf("%s %c ", label, n > 0 ? msg[0] : '-');
	for (ssize_t i = 1; i < n; i++) {
		unsigned char ch = (unsigned char)msg[i];

		putchar(ch < 0x20 || ch == 0x7f ? '.' : ch);
	}
	putchar('\n');
}

static int one(const char *sock, const char *arg)
{
	static char req[80000], reply[MAX_REPLY + 1];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 15 };
	char name[64], label[96];
	const char *at = strchr(arg, '@');
	unsigned silent = 0;
	long len = 0;
	int fd, got_x = 0;

	snprintf(label, sizeof(label), "%s", arg);
	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - arg) : (int)strlen(arg), arg);
	if (!strncmp(name, "silent:", 7)) {
		silent = (unsigned)atoi(name + 7);
	} else {
		len = build(name, req, sizeof(req));
		if (len < 0) {
			fprintf(stderr, "ctlraw: unknown case '%s'\n", name);
			exit(2);
		}
	}
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ctlraw: socket path too long\n");
		exit(2);
	}
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("%s end none connect: %s\n", label, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (silent) {
		printf("%s connected\n", label);
		fflush(stdout);
		sleep(silent);
	} else if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
		/* A daemon that refused the connection may have replied and
		 * closed before the request went out: read what it said. */
		printf("%s send-error %s\n", label, strerror(errno));
	}
	for (int resets = 0;;) {
		ssize_t n = recv(fd, reply, MAX_REPLY, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET && !resets++) {
			/* Reported once when the peer closed with our request
			 * unread; what it sent before closing follows. */
			printf("%s recv-error %s\n", label, strerror(errno));
			continue;
		}
		if (n < 0) {
			printf("%s end none recv: %s\n", label, strerror(errno));
			break;
		}
		if (n == 0) {
			printf("%s end none eof\n", label);
			break;
		}
		reply[n] = 0;
		if (reply[0] == 'X') {
			printf("%s end X%s\n", label, reply + 1);
			got_x = 1;
			break;
		}
		show(label, reply, n);
	}
	close(fd);
	fflush(stdout);
	return got_x;
}

int main(int argc, char **argv)
{
	int all = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: ctlraw SOCKET CASE[@LABEL]...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 2; i < argc; i++)
		all &= one(argv[1], argv[i]);
	return all ? 0 : 1;
}
