// SPDX-License-Identifier: GPL-2.0
/*
 * landlock-run: runs a command under a Landlock domain holding the rules
 * the benchmark gives sharness, so the two are timed on the same policy.
 *
 *   landlock-run RULES -- CMD [ARG...]
 *
 * RULES has one rule a line:
 *   exec PATH          PATH (a file, or a directory and what is below it)
 *                      may be executed; nothing else may
 *   write PATH         PATH and what is below it may be changed; nothing
 *                      else may (write, create, remove, rename, truncate)
 *   tcp-connect PORT   TCP connects to PORT are allowed, every other port
 *                      refused (from ABI 4; ignored, with a note, below)
 * Reading is not restricted. From ABI 6 signals are scoped to the domain
 * (as sharness's [signal] scope = tree). Uses the highest ABI this kernel has and the
 * rights that ABI knows; prints "landlock-run: ABI N" on stderr.
 * Exit status: CMD's (it is executed), 125 when the domain cannot be set up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's Landlock ABI (include/uapi/linux/landlock.h), spelt out here
 * because the build host's headers predate the network rights. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_SIGNAL (1ULL << 1)    /* ABI 6 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

static int abi;

static uint64_t write_rights(void)
{
	uint64_t w = LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR |
		     LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |
		     LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;

	if (abi >= 2)
		w |= LL_FS_REFER;
	if (abi >= 3)
		w |= LL_FS_TRUNCATE;
	if (abi >= 5)
		w |= LL_FS_IOCTL_DEV;
	return w;
}

static int fail(const char *what, const char *arg)
{
	fprintf(stderr, "landlock-run: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "",
		strerror(errno));
	return 125;
}

static int add_path(int rs, const char *path, uint64_t rights)
{
	struct ll_path_beneath_attr pb = { .allowed_access = rights };
	int r;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return fail("cannot open", path);
	/* a file takes only the rights that apply to files */
	r = syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0);
	if (r && errno == EINVAL) {
		pb.allowed_access &= LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE |
				     LL_FS_IOCTL_DEV;
		r = syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0);
	}
	close(pb.parent_fd);
	return r ? fail("cannot add a rule for", path) : 0;
}

static int add_rules(int rs, FILE *f)
{
	char line[4096], *arg;
	int r = 0;

	while (!r && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		arg = strchr(line, ' ');
		if (!arg)
			continue;
		*arg++ = 0;
		if (!strcmp(line, "exec")) {
			r = add_path(rs, arg, LL_FS_EXECUTE);
		} else if (!strcmp(line, "write")) {
			r = add_path(rs, arg, write_rights());
		} else if (!strcmp(line, "tcp-connect") && abi >= 4) {
			struct ll_net_port_attr np = { .allowed_access = LL_NET_CONNECT_TCP,
						       .port = strtoull(arg, NULL, 10) };

			if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0))
				r = fail("cannot add a port rule", arg);
		} else if (strcmp(line, "tcp-connect")) {
			fprintf(stderr, "landlock-run: unknown rule '%s'\n", line);
			r = 125;
		}
	}
	return r;
}

int main(int argc, char **argv)
{
	struct ll_ruleset_attr attr = { 0 };
	size_t attr_size;
	FILE *f;
	int rs, r;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: landlock-run RULES -- CMD [ARG...]\n");
		return 125;
	}
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 1)
		return fail("Landlock is not active", NULL);
	attr.handled_access_fs = LL_FS_EXECUTE | write_rights();
	attr_size = sizeof(attr.handled_access_fs);
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	fprintf(stderr, "landlock-run: ABI %d%s\n", abi,
		abi >= 4 ? "" : " (no TCP rules before ABI 4: connects not restricted)");
	rs = syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs < 0)
		return fail("cannot create a ruleset", NULL);
	f = fopen(argv[1], "r");
	if (!f)
		return fail("cannot read", argv[1]);
	r = add_rules(rs, f);
	fclose(f);
	if (r)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail("no_new_privs", NULL);
	if (syscall(SYS_landlock_restrict_self, rs, 0))
		return fail("cannot restrict itself", NULL);
	close(rs);
	execvp(argv[3], argv + 3);
	return fail("cannot execute", argv[3]);
}
