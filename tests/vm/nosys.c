// SPDX-License-Identifier: GPL-2.0
/*
 * nosys CMD [ARGS...]: runs CMD with getrandom(2) failing with ENOSYS, as
 * on a kernel without it (a seccomp filter, inherited across the exec).
 * Before the exec it checks that the filter holds: getrandom here must
 * fail with ENOSYS, else it exits 99 (the test would prove nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "nosys: add this architecture's AUDIT_ARCH"
#endif

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getrandom, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	char b[8];

	if (argc < 2) {
		fprintf(stderr, "usage: nosys CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("nosys: seccomp");
		return 99;
	}
	if (getrandom(b, sizeof(b), 0) >= 0 || errno != ENOSYS) {
		fprintf(stderr, "nosys: getrandom still works\n");
		return 99;
	}
	execvp(argv[1], argv + 1);
	perror("nosys: exec");
	return 127;
}
