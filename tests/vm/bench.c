// SPDX-License-Identifier: GPL-2.0
/*
 * bench: times the operations every process on the host pays the enforcer
 * for. Prints one line per operation: "NAME ns_per_op".
 *
 *   bench DIR N     (DIR writable; N iterations of each)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char path[4096], dir[4096];
	long n;
	double t;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	snprintf(path, sizeof(path), "%s/bench-file", argv[1]);
	snprintf(dir, sizeof(dir), "%s/bench-dir", argv[1]);
	close(open(path, O_WRONLY | O_CREAT, 0644));

	t = now();
	for (long i = 0; i < n; i++)
		close(open(path, O_RDONLY));
	printf("open-read %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++)
		close(open(path, O_WRONLY));
	printf("open-write %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++) {
		mkdir(dir, 0755);
		rmdir(dir);
	}
	printf("mkdir+rmdir %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		munmap(p, 4096);
		close(fd);
	}
	printf("open+mmap-exec %.0f\n", (now() - t) / n);

	/* Hooks that every process on the host runs through too: timestamps
	 * (inode_setattr), its own limits and priority (task_setrlimit,
	 * task_setnice, task_setscheduler), and a capability a tree is
	 * refused (capable: CAP_SYS_ADMIN for sethostname). */
	t = now();
	for (long i = 0; i < n; i++)
		utimensat(AT_FDCWD, path, NULL, 0);
	printf("utimens %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++) {
		struct rlimit r;

		getrlimit(RLIMIT_NOFILE, &r);
		setrlimit(RLIMIT_NOFILE, &r);
	}
	printf("setrlimit-self %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++) {
		cpu_set_t set;

		sched_getaffinity(0, sizeof(set), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	printf("setaffinity-self %.0f\n", (now() - t) / n);

	t = now();
	for (long i = 0; i < n; i++) {
		char h[256];

		gethostname(h, sizeof(h));
		sethostname(h, strlen(h));
	}
	printf("sethostname %.0f\n", (now() - t) / n);

	/* A TCP connect to a listener of its own on loopback, accepted and
	 * closed: socket_create, socket_connect, and on the listener's side
	 * nothing the enforcer judges. */
	{
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		int l = socket(AF_INET, SOCK_STREAM, 0);

		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 64) < 0 ||
		    getsockname(l, (struct sockaddr *)&a, &al) < 0) {
			perror("bench: listener");
			return 1;
		}
		t = now();
		for (long i = 0; i < n; i++) {
			int c = socket(AF_INET, SOCK_STREAM, 0);

			if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
				perror("bench: connect");
				return 1;
			}
			close(accept(l, NULL, NULL));
			close(c);
		}
		printf("tcp-connect %.0f\n", (now() - t) / n);
		close(l);
	}

	t = now();
	for (long i = 0; i < n / 10 + 1; i++) {
		char *av[] = { "/usr/bin/true", NULL };
		pid_t pid;

		if (posix_spawn(&pid, av[0], NULL, NULL, av, environ) == 0)
			waitpid(pid, NULL, 0);
	}
	printf("spawn-true %.0f\n", (now() - t) / (n / 10 + 1));
	unlink(path);
	return 0;
}
