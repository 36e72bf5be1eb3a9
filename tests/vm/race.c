// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * race: two processes on one CPU, each repeating one system call for a
 * while, so that on a fully preemptible kernel one is preempted in the
 * middle of a hook's judgement by the other.
 *
 *   race SECONDS CPU OP REFUSED OP ALLOWED [N]
 *
 * The first child repeats its OP on REFUSED (which the policy refuses),
 * the others (N, 1 by default, at most 32) their OP on ALLOWED (which it allows); all
 * are pinned to CPU.
 * OP:
 *   read    open(O_RDONLY) and close
 *   creat   open(O_CREAT|O_WRONLY) and unlink (REFUSED: a name that
 *           may not be created)
 *   tmpfile open(O_TMPFILE|O_WRONLY) in the directory PATH, and close
 *           (judged by its directory's path every time: no memo)
 *   connect a unix stream socket connected to the path (each PATH a
 *           listening socket)
 * Prints one line per child:
 *   refused ok=N err=N errno=NAME nivcsw=N
 *   allowed ok=N err=N errno=NAME nivcsw=N
 * where ok counts calls that succeeded, err those that failed (errno: the
 * last failure's symbol, "-" for none) and nivcsw the times the child was
 * preempted (getrusage). Exit 0, or 2 on bad usage or a setup failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum op { OP_READ, OP_CREAT, OP_TMPFILE, OP_CONNECT, OP_BAD };

static int once(enum op op, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	switch (op) {
	case OP_READ:
		fd = open(path, O_RDONLY);
		break;
	case OP_CREAT:
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd >= 0)
			unlink(path);
		break;
	case OP_TMPFILE:
		fd = open(path, O_TMPFILE | O_WRONLY, 0600);
		break;
	default:
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		break;
	}
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One child: OP on path until the deadline; its line to out. */
static void child(const char *label, enum op op, const char *path, double end, int cpu)
{
	unsigned long ok = 0, err = 0;
	const char *last = "-";
	struct rusage ru;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("race: sched_setaffinity");
		_exit(2);
	}
	while (now() < end) {
		for (int i = 0; i < 64; i++) {
			if (once(op, path) == 0) {
				ok++;
			} else {
				err++;
				last = strerrorname_np(errno) ? strerrorname_np(errno) : "EOTHER";
			}
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("%s ok=%lu err=%lu errno=%s nivcsw=%ld\n", label, ok, err, last, ru.ru_nivcsw);
	fflush(stdout);
	_exit(0);
}

static enum op op_of(const char *name)
{
	static const char *const names[] = { "read", "creat", "tmpfile", "connect" };

	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (enum op)i;
	return OP_BAD;
}

int main(int argc, char **argv)
{
	enum op opa, opb;
	double secs, end;
	pid_t a, b[32];
	int cpu, st, n;

	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: race SECONDS CPU OP REFUSED OP ALLOWED [N]\n");
		return 2;
	}
	secs = atof(argv[1]);
	cpu = atoi(argv[2]);
	opa = op_of(argv[3]);
	opb = op_of(argv[5]);
	n = argc == 8 ? atoi(argv[7]) : 1;
	if (secs <= 0 || cpu < 0 || opa == OP_BAD || opb == OP_BAD || n < 1 || n > 32)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = now() + secs;
	a = fork();
	if (a == 0)
		child("refused", opa, argv[4], end, cpu);
	for (int i = 0; i < n; i++) {
		b[i] = fork();
		if (b[i] == 0)
			child("allowed", opb, argv[6], end, cpu);
		if (b[i] < 0)
			return 2;
	}
	if (a < 0 || waitpid(a, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 2;
	for (int i = 0; i < n; i++)
		if (waitpid(b[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return 2;
	return 0;
}
