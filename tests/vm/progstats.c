// SPDX-License-Identifier: GPL-2.0
/*
 * progstats: the bench's reader of the time in sharness's programs
 * (kernel.bpf_stats_enabled). At its start it opens every loaded program
 * whose name starts with PREFIX ("sh_" by default); then, for each line
 * read on stdin, it prints one line per program, "ID RUN_CNT RUN_TIME_NS"
 * (the kernel keeps 15 bytes of a name: bpftool gives the whole one by
 * ID), and a line ".". A sample costs one bpf(2) call per
 * program and nothing else (no open, no /proc read): of the programs only
 * those on bpf(2) and capability checks see the reader, and the bench
 * subtracts what a sample costs them.
 *
 *   progstats [PREFIX]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_PROGS 256

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(info, 0, sizeof(*info));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (unsigned long)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? -errno : 0;
}

int main(int argc, char **argv)
{
	const char *prefix = argc > 1 ? argv[1] : "sh_";
	int fds[MAX_PROGS], n = 0;
	unsigned ids[MAX_PROGS];
	struct bpf_prog_info info;
	union bpf_attr a;
	unsigned id = 0;
	char line[64];

	for (;;) {
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a)) {
			if (errno == ENOENT)
				break;
			perror("progstats: BPF_PROG_GET_NEXT_ID");
			return 1;
		}
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue; /* gone meanwhile */
		if (prog_info(fd, &info) || strncmp(info.name, prefix, strlen(prefix))) {
			close(fd);
			continue;
		}
		if (n == MAX_PROGS) {
			/* A reading that left programs out would make their
			 * time nobody's. */
			fprintf(stderr, "progstats: more than %d programs named %s*\n", MAX_PROGS,
				prefix);
			return 1;
		}
		ids[n] = id;
		fds[n++] = fd;
	}
	if (!n) {
		fprintf(stderr, "progstats: no program named %s*\n", prefix);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		for (int i = 0; i < n; i++) {
			int err = prog_info(fds[i], &info);

			if (err) {
				fprintf(stderr, "progstats: %s\n", strerror(-err));
				return 1;
			}
			printf("%u %llu %llu\n", ids[i], (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns);
		}
		printf(".\n");
		fflush(stdout);
	}
	return 0;
}
