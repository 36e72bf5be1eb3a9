// SPDX-License-Identifier: GPL-2.0
/*
 * storm: opens PATH for writing in a tight loop for SECONDS and prints how
 * many attempts were refused with EPERM and how many succeeded. Used to
 * produce an event storm against the daemon.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long eperm = 0, ok = 0, other = 0;
	struct timespec start, now;

	if (argc != 3) {
		fprintf(stderr, "usage: storm PATH SECONDS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 256; i++) {
			int fd = open(argv[1], O_WRONLY | O_CREAT, 0644);

			if (fd >= 0) {
				ok++;
				close(fd);
			} else if (errno == EPERM) {
				eperm++;
			} else {
				other++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < atol(argv[2]));
	printf("%lu %lu %lu\n", eperm, ok, other);
	return 0;
}
