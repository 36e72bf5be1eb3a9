// SPDX-License-Identifier: GPL-2.0
/*
 * memfd-hold: a container's process that keeps a program in memory for
 * another to run (t_container: the memfd door of a pending runtime). Copies
 * FILE into a memfd, writes the memfd's descriptor number to OUT, and
 * sleeps until killed. Linked statically: it runs in a container whose
 * root holds busybox and nothing else.
 *
 *   memfd-hold FILE OUT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	FILE *out;
	int in, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: memfd-hold FILE OUT\n");
		return 2;
	}
	in = open(argv[1], O_RDONLY | O_CLOEXEC);
	fd = memfd_create("held", 0);
	if (in < 0 || fd < 0 || fstat(in, &st) ||
	    sendfile(fd, in, NULL, st.st_size) != st.st_size) {
		perror("memfd-hold");
		return 1;
	}
	close(in);
	out = fopen(argv[2], "w");
	if (!out || fprintf(out, "%d\n", fd) < 0 || fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	for (;;)
		pause();
}
