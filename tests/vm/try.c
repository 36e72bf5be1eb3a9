// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * try: performs one system call and reports its result, so the enforcement
 * tests can assert on the syscall's return value and errno exactly.
 *
 *   try exec PATH [ARG...]        execv (on success PATH runs instead)
 *   try open PATH r|w|rw|trunc|creat|append
 *   try connect PATH              unix stream socket to PATH
 *   try connect-abstract NAME     unix stream socket to "\0NAME"
 *   try sendto PATH               unix datagram to PATH
 *   try listen PATH               unix stream server: bind, listen, print
 *                                 "ready", then accept and close forever
 *   try listen-abstract NAME      the same on "\0NAME"
 *   try listen-dgram PATH         unix datagram server: bind, print "ready",
 *                                 then receive forever
 *   try rebind FD PATH            bind(FD) to PATH (a socket someone else bound)
 *   try kill PID SIG   try tgkill TGID TID SIG   try sigqueue PID SIG
 *   try pidfd-kill PID SIG        pidfd_open + pidfd_send_signal
 *   try setown PID                fcntl(F_SETOWN) on a socket
 *   try setown-ex PID             fcntl(F_SETOWN_EX, F_OWNER_PID)
 *   try fiosetown PID             ioctl(FIOSETOWN) on a socket
 *   try fiosetown32 PID           the same through the 32-bit (compat)
 *                                 syscall entry, int $0x80
 *   try unlink|rmdir PATH   try mkdir PATH   try rename FROM TO
 *   try exchange A B        renameat2(A, B, RENAME_EXCHANGE)
 *   try link FROM TO   try symlink TARGET PATH   try mknod PATH
 *   try chmod PATH MODE   try chown PATH UID GID   try truncate PATH
 *   try creat-mode PATH MODE      open(PATH, O_CREAT | O_WRONLY, MODE),
 *                                 MODE in octal
 *   try lock PATH flock|posix|ofd|lease   open PATH read-only, then a
 *                                 shared lock or a read lease on it
 *   try lock-fd FD flock|posix    the same on a descriptor it was handed
 *   try lock-tmpfile DIR flock    an O_TMPFILE file in DIR (no name), locked
 *   try fdwrite FD                write(FD, "x\n"): a descriptor the
 *                                 process was handed
 *   try gate FILE OP ARG...       print "ready", wait until FILE exists
 *                                 (stat, which no hook judges), then OP:
 *                                 a call made by a process already running
 *                                 in its tree
 *   try hold FILE OP ARG...       OP, then print "held PID" and wait until FILE
 *                                 exists: what OP left in the process's
 *                                 task storage can be read meanwhile
 *   try bind PATH                 bind a unix stream socket to PATH
 *   try task-value MAP-ID PID     (outside the trees) the value of task
 *                                 storage map MAP-ID for PID, through a
 *                                 pidfd: prints "value N" (its first
 *                                 8 bytes; values up to 64 bytes) or
 *                                 "err NAME" (ENOENT: no entry)
 *
 * Prints "ok" (exit 0) or "err NAME" where NAME is the errno's symbol
 * (exit 1); bad usage exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/bpf.h>

/* The errno's symbol (glibc names every errno value it knows). */
static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EOTHER";
}

static int report(int r)
{
	if (r < 0) {
		int e = errno;

		printf("err %s\n", errname(e));
		if (!strcmp(errname(e), "EOTHER"))
			printf("(errno %d: %s)\n", e, strerror(e));
		return 1;
	}
	printf("ok\n");
	return 0;
}

/* A shared lock (or a read lease) on fd. */
static int lock_fd(int fd, const char *how)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };

	if (fd < 0)
		return -1;
	if (!strcmp(how, "flock"))
		return flock(fd, LOCK_SH | LOCK_NB);
	if (!strcmp(how, "posix"))
		return fcntl(fd, F_SETLK, &fl);
	if (!strcmp(how, "ofd"))
		return fcntl(fd, F_OFD_SETLK, &fl);
	if (!strcmp(how, "lease"))
		return fcntl(fd, F_SETLEASE, F_RDLCK);
	errno = EINVAL;
	return -1;
}

static int lock_file(const char *path, const char *how)
{
	return lock_fd(open(path, O_RDONLY), how);
}

static int unix_connect(const char *name, size_t len, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type, 0);

	if (fd < 0 || len > sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, name, len);
	if (type == SOCK_DGRAM)
		return sendto(fd, "x", 1, 0, (struct sockaddr *)&sa,
			      offsetof(struct sockaddr_un, sun_path) + len) < 0 ? -1 : 0;
	return connect(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len);
}

/*
 * A server outside the tree for the connect tests: prints "ready" once it
 * can be reached, then serves until it is killed. Returns only on failure.
 */
static int unix_serve(const char *name, size_t len, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type, 0);
	char buf[256];

	if (fd < 0 || len > sizeof(sa.sun_path))
		return report(-1);
	memcpy(sa.sun_path, name, len);
	if (bind(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len) < 0)
		return report(-1);
	if (type == SOCK_STREAM && listen(fd, 64) < 0)
		return report(-1);
	printf("ready\n");
	for (;;) {
		int c;

		if (type == SOCK_DGRAM) {
			if (recv(fd, buf, sizeof(buf), 0) < 0 && errno != EINTR)
				return report(-1);
			continue;
		}
		c = accept(fd, NULL, NULL);
		if (c >= 0)
			close(c);
		else if (errno != EINTR && errno != ECONNABORTED)
			return report(-1);
	}
}

/* The owner-setting requests, on a socket (FIOSETOWN needs one). */
static int set_owner(const char *how, pid_t pid)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	if (!strcmp(how, "setown"))
		return fcntl(sv[0], F_SETOWN, pid);
	if (!strcmp(how, "setown-ex")) {
		struct f_owner_ex ex = { .type = F_OWNER_PID, .pid = pid };

		return fcntl(sv[0], F_SETOWN_EX, &ex);
	}
	return ioctl(sv[0], FIOSETOWN, &pid);
}

/*
 * ioctl(FIOSETOWN) as a 32-bit program makes it: int $0x80 reaches
 * compat_sys_ioctl (ia32 syscall 54), whose argument must lie below 4 GiB.
 */
static int fiosetown32(pid_t pid)
{
	int *owner = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	long ret;
	int sv[2];

	if (owner == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	*owner = pid;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54L), "b"((long)sv[0]), "c"((long)FIOSETOWN),
			   "d"((long)(unsigned long)owner)
			 : "memory", "r8", "r9", "r10", "r11");
	if ((int)ret < 0) {
		errno = -(int)ret;
		return -1;
	}
	return 0;
}

/* The 8-byte value of task storage map id for pid (BPF_MAP_LOOKUP_ELEM
 * keyed by a pidfd). */
static int task_value(unsigned id, pid_t pid)
{
	union bpf_attr a = { 0 };
	unsigned long long v[8] = { 0 };
	int map, pfd;

	a.map_id = id;
	map = syscall(SYS_bpf, BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	pfd = syscall(SYS_pidfd_open, pid, 0);
	if (map < 0 || pfd < 0)
		return report(-1);
	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (unsigned long)&pfd;
	a.value = (unsigned long)v;
	if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) < 0)
		return report(-1);
	printf("value %llu\n", v[0]);
	return 0;
}

static int pidfd_kill(pid_t pid, int sig)
{
	int fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return -1;
	return syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

static int one_op(int argc, char **argv);

int main(int argc, char **argv)
{
	struct stat st;
	int r;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 4 || strcmp(argv[1], "hold"))
		return one_op(argc, argv);
	r = one_op(argc - 2, argv + 2);
	printf("held %d\n", (int)getpid());
	while (stat(argv[2], &st) != 0)
		usleep(10000);
	return r;
}

static int one_op(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	if (!strcmp(op, "gate") && argc >= 4) {
		struct stat st;

		printf("ready\n");
		while (stat(argv[2], &st) != 0)
			usleep(10000);
		argv += 2;
		argc -= 2;
		op = argv[1];
	}
	if (!strcmp(op, "exec") && argc >= 3) {
		execv(argv[2], argv + 2);
		return report(-1);
	}
	if (!strcmp(op, "open") && argc == 4) {
		int fl = 0;

		if (!strcmp(argv[3], "r")) fl = O_RDONLY;
		else if (!strcmp(argv[3], "w")) fl = O_WRONLY;
		else if (!strcmp(argv[3], "rw")) fl = O_RDWR;
		else if (!strcmp(argv[3], "trunc")) fl = O_RDONLY | O_TRUNC;
		else if (!strcmp(argv[3], "creat")) fl = O_WRONLY | O_CREAT;
		else if (!strcmp(argv[3], "append")) fl = O_WRONLY | O_APPEND;
		else return 2;
		return report(open(argv[2], fl, 0644));
	}
	if (!strcmp(op, "connect") && argc == 3)
		return report(unix_connect(argv[2], strlen(argv[2]) + 1, SOCK_STREAM));
	if (!strcmp(op, "connect-abstract") && argc == 3) {
		char name[108] = { 0 };
		size_t n = strlen(argv[2]);

		if (n + 1 > sizeof(name))
			return 2;
		memcpy(name + 1, argv[2], n);
		return report(unix_connect(name, n + 1, SOCK_STREAM));
	}
	if (!strcmp(op, "sendto") && argc == 3)
		return report(unix_connect(argv[2], strlen(argv[2]) + 1, SOCK_DGRAM));
	if (!strcmp(op, "bind") && argc == 3) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd < 0 || strlen(argv[2]) >= sizeof(sa.sun_path))
			return report(-1);
		strcpy(sa.sun_path, argv[2]);
		return report(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	}
	if (!strcmp(op, "task-value") && argc == 4)
		return task_value(strtoul(argv[2], NULL, 10), atoi(argv[3]));
	if (!strcmp(op, "listen") && argc == 3)
		return unix_serve(argv[2], strlen(argv[2]) + 1, SOCK_STREAM);
	if (!strcmp(op, "listen-dgram") && argc == 3)
		return unix_serve(argv[2], strlen(argv[2]) + 1, SOCK_DGRAM);
	if (!strcmp(op, "rebind") && argc == 4) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[3]);
		return report(bind(atoi(argv[2]), (struct sockaddr *)&sa, sizeof(sa)));
	}
	if (!strcmp(op, "listen-abstract") && argc == 3) {
		char name[108] = { 0 };
		size_t n = strlen(argv[2]);

		if (n + 1 > sizeof(name))
			return 2;
		memcpy(name + 1, argv[2], n);
		return unix_serve(name, n + 1, SOCK_STREAM);
	}
	if (!strcmp(op, "creat-mode") && argc == 4)
		return report(open(argv[2], O_CREAT | O_WRONLY, (mode_t)strtol(argv[3], NULL, 8)));
	if (!strcmp(op, "lock") && argc == 4)
		return report(lock_file(argv[2], argv[3]));
	if (!strcmp(op, "lock-fd") && argc == 4)
		return report(lock_fd(atoi(argv[2]), argv[3]));
	if (!strcmp(op, "lock-tmpfile") && argc == 4)
		return report(lock_fd(open(argv[2], O_TMPFILE | O_RDWR, 0600), argv[3]));
	if (!strcmp(op, "fdwrite") && argc == 3)
		return report(write(atoi(argv[2]), "x\n", 2) == 2 ? 0 : -1);
	if (!strcmp(op, "kill") && argc == 4)
		return report(kill(atoi(argv[2]), atoi(argv[3])));
	if (!strcmp(op, "tgkill") && argc == 5)
		return report(syscall(SYS_tgkill, atoi(argv[2]), atoi(argv[3]), atoi(argv[4])));
	if (!strcmp(op, "sigqueue") && argc == 4)
		return report(sigqueue(atoi(argv[2]), atoi(argv[3]), (union sigval){ .sival_int = 0 }));
	if (!strcmp(op, "pidfd-kill") && argc == 4)
		return report(pidfd_kill(atoi(argv[2]), atoi(argv[3])));
	if ((!strcmp(op, "setown") || !strcmp(op, "setown-ex") || !strcmp(op, "fiosetown")) &&
	    argc == 3)
		return report(set_owner(op, atoi(argv[2])));
	if (!strcmp(op, "fiosetown32") && argc == 3)
		return report(fiosetown32(atoi(argv[2])));
	if (!strcmp(op, "unlink") && argc == 3)
		return report(unlink(argv[2]));
	if (!strcmp(op, "rmdir") && argc == 3)
		return report(rmdir(argv[2]));
	if (!strcmp(op, "mkdir") && argc == 3)
		return report(mkdir(argv[2], 0755));
	if (!strcmp(op, "rename") && argc == 4)
		return report(rename(argv[2], argv[3]));
	if (!strcmp(op, "exchange") && argc == 4)
		return report(syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3],
				      2 /* RENAME_EXCHANGE */));
	if (!strcmp(op, "link") && argc == 4)
		return report(link(argv[2], argv[3]));
	if (!strcmp(op, "symlink") && argc == 4)
		return report(symlink(argv[2], argv[3]));
	if (!strcmp(op, "mknod") && argc == 3)
		return report(mknod(argv[2], S_IFIFO | 0644, 0));
	if (!strcmp(op, "chmod") && argc == 4)
		return report(chmod(argv[2], strtol(argv[3], NULL, 8)));
	if (!strcmp(op, "chown") && argc == 5)
		return report(chown(argv[2], atoi(argv[3]), atoi(argv[4])));
	if (!strcmp(op, "truncate") && argc == 3)
		return report(truncate(argv[2], 0));
	fprintf(stderr, "try: bad usage\n");
	return 2;
}
