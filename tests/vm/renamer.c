// SPDX-License-Identifier: GPL-2.0
/*
 * renamer: the busy host's outsider (make bench, t_memo). Renames DIR/a to
 * DIR/b and back every PERIOD_US microseconds (0: as fast as it can),
 * writes "ready" to stdout once the first pair is done, on SIGUSR1 prints
 * "RENAMES SECONDS" so far and goes on, and on SIGTERM prints them and
 * exits. DIR/a is a file, or with "dir" a
 * directory: only a directory's move changes the path of other names
 * (the directory memo's key counts those).
 *
 *   renamer DIR PERIOD_US [dir]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop, tell;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		tell = 1;
	else
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
	struct sigaction sa = { .sa_handler = on_signal };
	char a[4096], b[4096];
	struct timespec gap;
	unsigned long n = 0;
	bool dir = argc == 4 && !strcmp(argv[3], "dir");
	char *end = NULL;
	long us = argc >= 3 ? strtol(argv[2], &end, 10) : -1;
	double t0;
	int fd;

	if (argc < 3 || argc > 4 || (argc == 4 && !dir) || us < 0 || !end || *end) {
		fprintf(stderr, "usage: renamer DIR PERIOD_US [dir]\n");
		return 2;
	}
	snprintf(a, sizeof(a), "%s/a", argv[1]);
	snprintf(b, sizeof(b), "%s/b", argv[1]);
	if (dir) {
		if (mkdir(a, 0700)) {
			perror(a);
			return 1;
		}
	} else {
		fd = open(a, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			perror(a);
			return 1;
		}
		close(fd);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
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
		if (tell) {
			tell = 0;
			printf("%lu %.3f\n", n, now() - t0);
			fflush(stdout);
		}
		if (us)
			nanosleep(&gap, NULL);
	}
	printf("%lu %.3f\n", n, now() - t0);
	return 0;
}
