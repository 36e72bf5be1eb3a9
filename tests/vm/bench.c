// SPDX-License-Identifier: GPL-2.0
/*
 * bench: times operations a confined process pays its enforcer for, and
 * first proves that the enforcer it runs under really refuses (or, outside
 * every tree, really lets through) one operation.
 *
 *   bench [-c CHECK:PATH] DIR N OP...
 *
 * DIR is writable; N the iteration count (fork+exec runs N/50, the socket
 * connects N/4). Prints "OP ns_per_op iterations canary_ns" for each OP, in
 * order.
 * CHECK, done before any timing (exit 3 when it fails):
 *   deny-create  creating PATH must be refused (EACCES or EPERM)
 *   deny-read    opening PATH for reading must be refused
 *   allow-create creating PATH must succeed
 * mmap-exec maps $BENCH_MMAP_FILE (bench's own file by default). The unix
 * listener is DIR/bench.sock; the TCP one 127.0.0.1, port $BENCH_TCP_PORT
 * (47123 by default).
 *
 * The canary is the time, in ns, of a getppid(2) call (a system call no
 * security hook sees; canary() says how it is taken), timed just before
 * the OP and just after it: the larger of the two. It does not depend on the
 * enforcer, only on how fast the machine runs right then: a figure whose
 * canary is well above the run's least was taken while the machine ran
 * slow, and bench-guest measures it again.
 * With BENCH_SYNC=PREFIX set, bench opens the FIFOs PREFIX.ready (for
 * writing) and PREFIX.go (for reading) at its start, and right before and
 * right after each OP's loop writes a line to the first and waits for a
 * byte on the second: bench-guest's bpf_stats pass reads the programs'
 * times there, so that they cover the loop alone (no start, proof or
 * exit; neither end of a FIFO is a hook the programs see).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char path[4096], path2[4096], dir[4096], self[4096], sock_path[108];
static int unix_l = -1, tcp_l = -1, sync_ready = -1, sync_go = -1, pair[2] = { -1, -1 };
static struct sockaddr_in tcp_a;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define CANARY_RUNS 8
#define CANARY_CALLS 50

/* ns per getppid(2): the least mean of CANARY_RUNS runs of CANARY_CALLS
 * calls, so that an interrupt in one run does not count, a slow machine
 * does */
static double canary(void)
{
	double least = 0;

	for (int r = 0; r < CANARY_RUNS; r++) {
		double t = now(), ns;

		for (int k = 0; k < CANARY_CALLS; k++)
			syscall(SYS_getppid);
		ns = (now() - t) / CANARY_CALLS;
		if (!r || ns < least)
			least = ns;
	}
	return least;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void op_open_read(void)
{
	close(open(path, O_RDONLY));
}

static void op_open_write(void)
{
	close(open(path, O_WRONLY));
}

static void op_create_unlink(void)
{
	close(open(dir, O_WRONLY | O_CREAT | O_EXCL, 0644));
	unlink(dir);
}

static void op_stat(void)
{
	struct stat st;

	stat(path, &st);
}

static void op_mkdir_rmdir(void)
{
	mkdir(dir, 0755);
	rmdir(dir);
}

static void op_fork_exec(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/usr/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* connect, accept on the listener of this process, close both: a stream
 * connect the enforcer judges, and nothing else it judges. */
static void op_unix_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int c = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(a.sun_path, sock_path, sizeof(sock_path));
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("unix connect");
	close(accept(unix_l, NULL, NULL));
	close(c);
}

static void op_tcp_connect(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(c, (struct sockaddr *)&tcp_a, sizeof(tcp_a)) < 0)
		die("tcp connect");
	close(accept(tcp_l, NULL, NULL));
	/* a reset, not TIME_WAIT: thousands of connects must not run the
	 * ephemeral ports out */
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);
}

static void op_kill_self(void)
{
	kill(getpid(), 0);
}

/* $BENCH_MMAP_FILE (bench's own file by default): one that every
 * configuration lets map as code, as a shared library; mapping the data
 * file would time a refusal */
static void op_mmap_exec(void)
{
	int fd = open(self, O_RDONLY);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);
}

static void op_utimens(void)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

/* A file renamed away and back, then opened for writing: a rename changes
 * no directory's path (t_memo: the directory memo holds across it). */
static void op_rename_open(void)
{
	if (rename(path, path2) || rename(path2, path))
		die("rename");
	close(open(path, O_WRONLY));
}

/* A datagram sent and received on a unix socket pair: a send that names no
 * address, which no rule judges; what every send of the host pays where
 * the send hook has a program. */
static void op_send(void)
{
	char b[64] = { 0 };

	if (send(pair[0], b, sizeof(b), 0) != sizeof(b) || recv(pair[1], b, sizeof(b), 0) < 0)
		die("send");
}

static const struct op {
	const char *name;
	void (*fn)(void);
	int div; /* iterations: N / div */
} ops[] = {
	{ "open-read", op_open_read, 1 },	{ "open-write", op_open_write, 1 },
	{ "create+unlink", op_create_unlink, 1 }, { "stat", op_stat, 1 },
	{ "mkdir+rmdir", op_mkdir_rmdir, 1 },	{ "fork+exec", op_fork_exec, 50 },
	{ "unix-connect", op_unix_connect, 4 },	{ "tcp-connect", op_tcp_connect, 4 },
	{ "kill-self", op_kill_self, 1 },	{ "mmap-exec", op_mmap_exec, 1 },
	{ "utimens", op_utimens, 1 },		{ "rename+open", op_rename_open, 1 },
	{ "send", op_send, 1 },
};

static void listeners(void)
{
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	const char *port = getenv("BENCH_TCP_PORT");
	int one = 1;

	memcpy(u.sun_path, sock_path, sizeof(sock_path));
	unlink(sock_path);
	unix_l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (unix_l < 0 || bind(unix_l, (struct sockaddr *)&u, sizeof(u)) < 0 ||
	    listen(unix_l, 64) < 0)
		die("unix listener");
	tcp_a.sin_family = AF_INET;
	tcp_a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tcp_a.sin_port = htons(port ? atoi(port) : 47123);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) < 0)
		die("socketpair");
	tcp_l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(tcp_l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (tcp_l < 0 || bind(tcp_l, (struct sockaddr *)&tcp_a, sizeof(tcp_a)) < 0 ||
	    listen(tcp_l, 64) < 0)
		die("tcp listener");
}

/* The proof that this run is under the enforcer it claims (or outside it). */
static int is(const char *spec, size_t len, const char *kind)
{
	return len == strlen(kind) && !strncmp(spec, kind, len);
}

static int check(const char *spec)
{
	const char *p = strchr(spec, ':');
	size_t kind = p ? (size_t)(p - spec) : 0;
	int fd, err;

	if (!p || !(is(spec, kind, "deny-read") || is(spec, kind, "deny-create") ||
		    is(spec, kind, "allow-create"))) {
		fprintf(stderr, "bench: bad check '%s'\n", spec);
		return -1;
	}
	p++;
	if (is(spec, kind, "deny-read"))
		fd = open(p, O_RDONLY);
	else
		fd = open(p, O_WRONLY | O_CREAT, 0644);
	err = errno;
	if (fd >= 0) {
		close(fd);
		if (is(spec, kind, "allow-create"))
			return unlink(p) ? -1 : 0;
		fprintf(stderr, "bench: check %s: the operation was NOT refused\n", spec);
		return -1;
	}
	if (is(spec, kind, "allow-create")) {
		fprintf(stderr, "bench: check %s: refused: %s\n", spec, strerror(err));
		return -1;
	}
	if (err != EACCES && err != EPERM) {
		fprintf(stderr, "bench: check %s: failed, not refused: %s\n", spec, strerror(err));
		return -1;
	}
	return 0;
}

/* Where BENCH_SYNC is set: tell bench-guest, and wait for its go. */
static void sync_point(void)
{
	char c;

	if (sync_ready < 0)
		return;
	if (write(sync_ready, "x\n", 2) != 2 || read(sync_go, &c, 1) != 1)
		die("BENCH_SYNC");
}

static void sync_open(const char *prefix)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s.ready", prefix);
	sync_ready = open(p, O_WRONLY | O_CLOEXEC);
	if (sync_ready < 0)
		die(p);
	snprintf(p, sizeof(p), "%s.go", prefix);
	sync_go = open(p, O_RDONLY | O_CLOEXEC);
	if (sync_go < 0)
		die(p);
}

int main(int argc, char **argv)
{
	const char *chk = NULL;
	long n;
	int i;

	if (argc > 2 && !strcmp(argv[1], "-c")) {
		chk = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: bench [-c CHECK:PATH] DIR N OP...\n");
		return 2;
	}
	if (chk && check(chk))
		return 3;
	n = atol(argv[2]);
	snprintf(path, sizeof(path), "%s/bench-file", argv[1]);
	snprintf(path2, sizeof(path2), "%s/bench-file2", argv[1]);
	snprintf(dir, sizeof(dir), "%s/bench-dir", argv[1]);
	snprintf(sock_path, sizeof(sock_path), "%s/bench.sock", argv[1]);
	if (getenv("BENCH_MMAP_FILE"))
		snprintf(self, sizeof(self), "%s", getenv("BENCH_MMAP_FILE"));
	else if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		die("/proc/self/exe");
	close(open(path, O_WRONLY | O_CREAT, 0644));
	listeners();
	signal(SIGPIPE, SIG_IGN);
	if (getenv("BENCH_SYNC"))
		sync_open(getenv("BENCH_SYNC"));
	for (i = 3; i < argc; i++) {
		const struct op *o = NULL;
		long k, m;
		double t, ns, c0, c1;

		for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++)
			if (!strcmp(ops[j].name, argv[i]))
				o = &ops[j];
		if (!o) {
			fprintf(stderr, "bench: unknown operation '%s'\n", argv[i]);
			return 2;
		}
		m = n / o->div > 0 ? n / o->div : 1;
		o->fn(); /* warm the caches the first call fills */
		c0 = canary();
		sync_point();
		t = now();
		for (k = 0; k < m; k++)
			o->fn();
		ns = (now() - t) / m;
		sync_point();
		c1 = canary();
		printf("%s %.0f %ld %.0f\n", o->name, ns, m, c0 > c1 ? c0 : c1);
	}
	fflush(stdout);
	unlink(sock_path);
	return 0;
}
