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
 *   try kill PID SIG
 *   try unlink|rmdir PATH   try mkdir PATH   try rename FROM TO
 *   try link FROM TO   try symlink TARGET PATH   try mknod PATH
 *   try chmod PATH MODE   try chown PATH UID GID   try truncate PATH
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case EROFS: return "EROFS";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EXDEV: return "EXDEV";
	case ENOEXEC: return "ENOEXEC";
	case EAGAIN: return "EAGAIN";
	default: return "EOTHER";
	}
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

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
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
	if (!strcmp(op, "kill") && argc == 4)
		return report(kill(atoi(argv[2]), atoi(argv[3])));
	if (!strcmp(op, "unlink") && argc == 3)
		return report(unlink(argv[2]));
	if (!strcmp(op, "rmdir") && argc == 3)
		return report(rmdir(argv[2]));
	if (!strcmp(op, "mkdir") && argc == 3)
		return report(mkdir(argv[2], 0755));
	if (!strcmp(op, "rename") && argc == 4)
		return report(rename(argv[2], argv[3]));
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
