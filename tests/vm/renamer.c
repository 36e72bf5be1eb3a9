// SPDX-License-Identifier: GPL-2.0
/*
 * renamer: the busy host's outsider for make bench. Renames DIR/a to DIR/b
 * and back every PERIOD_US microseconds (each rename on the host makes
 * every tree's directory memo stale), writes "ready" to stdout once the
 * first pair is done, and on SIGTERM prints "RENAMES SECONDS" and exits.
 *
 *   renamer DIR PERIOD_US
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	char a[4096], b[4096];
	struct timespec gap;
	unsigned long n = 0;
	long us;
	double t0;
	int fd;

	if (argc != 3 || (us = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: renamer DIR PERIOD_US\n");
		return 2;
	}
	snprintf(a, sizeof(a), "%s/a", argv[1]);
	snprintf(b, sizeof(b), "%s/b", argv[1]);
	fd = open(a, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(a);
		return 1;
	}
	close(fd);
	sigaction(SIGTERM, &sa, NULL);
	gap = (struct timespec){ us / 1000000, (us % 1000000) * 1000 };
	t0 = now();
	while (!stop) {
		if (rename(a, b) || rename(b, a)) {
			perror("rename");
			return 1;
		}
		n += 2;
		if (n == 2) {
			printf("ready\n");
			fflush(stdout);
		}
		nanosleep(&gap, NULL);
	}
	printf("%lu %.3f\n", n, now() - t0);
	return 0;
}
