// SPDX-License-Identifier: GPL-2.0
/*
 * hog: a process that wants more than its limits give, for t_limits.
 *
 *   hog mem MIB        allocate and touch MIB MiB, 1 MiB at a time, then
 *                      print "survived" (the OOM killer should come first)
 *   hog memfd MIB      write MIB MiB into a memfd, never mapped (no process's
 *                      RSS counts it, the cgroup does), then print "survived"
 *   hog spin SECONDS   spin on the CPU for SECONDS of wall-clock time
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "mem")) {
		long mib = atol(argv[2]);

		for (long i = 0; i < mib; i++) {
			char *p = malloc(1 << 20);

			if (!p) {
				printf("malloc failed at %ld MiB\n", i);
				return 1;
			}
			memset(p, 1, 1 << 20);
		}
		printf("survived\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "memfd")) {
		static char chunk[1 << 20];
		int fd = memfd_create("hog", MFD_CLOEXEC);

		memset(chunk, 1, sizeof(chunk));
		for (long i = 0; fd >= 0 && i < atol(argv[2]); i++)
			if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
				printf("write failed at %ld MiB\n", i);
				return 1;
			}
		printf(fd >= 0 ? "survived\n" : "no memfd\n");
		return fd >= 0 ? 0 : 1;
	}
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		struct timespec t0, t;
		volatile unsigned long x = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			for (int i = 0; i < 100000; i++)
				x++;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec - t0.tv_sec < atol(argv[2]));
		printf("spun\n");
		return 0;
	}
	fprintf(stderr, "hog: bad usage\n");
	return 2;
}
