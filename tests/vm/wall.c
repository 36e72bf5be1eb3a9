// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * wall: one attempt per call at the doors root inside a tree tries after
 * the obvious ones (t_wall.sh). Prints "ok" (exit 0) or "err NAME" with the
 * errno's symbol (exit 1), then details on further lines; bad usage exits 2.
 *
 *   wall tty-ioctl TTY sti|vhangup|steal|cons|linux|kd
 *                                  one terminal ioctl on TTY (opened O_NOCTTY;
 *                                  TTY -: the standard input, as it is)
 *   wall tty-open TTY              open TTY read-write, O_NOCTTY
 *   wall own-pty [peer]            a new pty, setsid, TIOCSCTTY 0 on its slave
 *                                  (opened by its name, or with TIOCGPTPEER)
 *   wall hold-pty                  a new pty: prints its slave's name, then
 *                                  the result of a child's open of it by
 *                                  that name; holds it until killed
 *   wall vhangup                   vhangup(2)
 *   wall prlimit PID               prlimit(PID, RLIMIT_FSIZE) to its own value
 *   wall setnice PID               setpriority(PRIO_PROCESS, PID, 5)
 *   wall ioprio PID                ioprio_set(PID, best-effort 4)
 *   wall affinity PID              sched_setaffinity(PID, CPU 0)
 *   wall setxattr PATH             file capabilities (security.capability,
 *                                  version 2, none set): what setcap does
 *   wall setxattr-user PATH        setxattr(PATH, "user.sharness")
 *   wall setxattr-trusted PATH     setxattr(PATH, "trusted.sharness"):
 *                                 CAP_SYS_ADMIN's to make
 *   wall setxattr-named PATH NAME  setxattr(PATH, NAME, "x")
 *   wall removexattr-named PATH NAME   removexattr(PATH, NAME)
 *   wall fchmod DIR MODE           open DIR, then fchmod on the descriptor
 *                                 (MODE in octal)
 *   wall removexattr PATH          removexattr(PATH, "security.capability")
 *   wall setacl PATH               a POSIX access ACL (u::rw-,g::r--,o::r--)
 *   wall utimens PATH              utimensat(PATH, 2001-09-09)
 *   wall chattr PATH               FS_IOC_SETFLAGS: the file's flags + nodump
 *   wall cap sethostname|settime|reboot|mknod PATH|iopl|netadmin|rlimit
 *                                  one operation that needs one capability
 *   wall open-tree DIR             open_tree(DIR, OPEN_TREE_CLONE)
 *   wall mount-setattr DIR         mount_setattr(DIR, MOUNT_ATTR_NOSUID)
 *   wall fspick DIR                fspick(DIR)
 *   wall with-clone DIR -- CMD...  (outside a tree) a detached clone of DIR
 *                                  on fd 9, then exec CMD
 *   wall at FD read|write|exec REL openat(FD, REL) for reading, writing, or
 *                                  execveat(FD, REL): "ok" and the first line
 *   wall handle-read PATH          name_to_handle_at + open_by_handle_at:
 *                                  "ok" and the first line
 *   wall handle-save PATH FILE     name_to_handle_at(PATH) into FILE
 *   wall handle-load DIR FILE      open_by_handle_at(DIR's mount, FILE's
 *                                  handle): "ok" and the first line
 *   wall link-stdin sys|async NEW  a name NEW for the file on the standard
 *                                  input: linkat(0, "", AT_EMPTY_PATH), by the
 *                                  system call or an io_uring worker
 *   wall opath-reopen PATH FIFO    O_PATH on PATH, "ready", wait for a line
 *                                  on FIFO, then open /proc/self/fd/N
 *   wall open-blk PATH             open PATH (a block device) read-only
 *   wall ctl-connect SOCK          connect a SOCK_SEQPACKET socket to SOCK
 *   wall shm-attach ID             shmat(ID) read-write
 *   wall shm-own                   a private segment of its own, attached
 *   wall mq-open NAME              mq_open(NAME, O_CREAT | O_RDWR)
 *   wall mq-unlink NAME            mq_unlink(NAME)
 *   wall shm-rmid|sem-rmid|msg-rmid ID   shmctl/semctl/msgctl(ID, IPC_RMID)
 *   wall shm-create|sem-create|msg-create KEY   a new object of KEY
 *                                  (shmget/semget/msgget, IPC_CREAT|IPC_EXCL)
 *   wall key-user                  keyctl(KEYCTL_DESCRIBE) of the user keyring
 *   wall mmap-low                  an anonymous mapping at address 4096
 *   wall mmap-exec PATH N          N mappings of PATH with PROT_EXEC, one
 *                                  after the other: the first refusal
 *   wall connect-n SOCK N          N stream connects to SOCK, each on a new
 *                                  socket
 *   wall watch PATH inotify|fanotify|dnotify   one watch on PATH (dnotify:
 *                                  fcntl(F_NOTIFY) on PATH opened read-only)
 *   wall usersock-send FD|new      a NETLINK_USERSOCK message to the socket
 *                                  itself (bound, then its port looked up),
 *                                  on FD or a new socket; "ok" once the
 *                                  message came back
 *   wall with-usersock -- CMD...   (outside a tree) a NETLINK_USERSOCK
 *                                  socket on fd 9, then exec CMD
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <mqueue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <linux/fs.h>
#include <linux/kd.h>
#include <linux/netlink.h>
#include <linux/reboot.h>
#include <net/if.h>

#include "verdict.h"
#include "uring.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

static int first_line(int fd)
{
	char line[256];
	ssize_t n;

	if (fd < 0)
		return report(-1, "open");
	n = read(fd, line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = 0;
	line[strcspn(line, "\n")] = 0;
	printf("ok\n%s\n", line);
	return 0;
}

static int tty_ioctl(const char *path, const char *what)
{
	int fd = strcmp(path, "-") ? open(path, O_RDWR | O_NOCTTY) : 0, r;
	char c = 'x', sub = 0; /* TIOCLINUX 0: an invalid subcode; refused first */

	if (fd < 0)
		return report(-1, "open");
	if (!strcmp(what, "sti"))
		r = ioctl(fd, TIOCSTI, &c);
	else if (!strcmp(what, "vhangup"))
		r = ioctl(fd, TIOCVHANGUP);
	else if (!strcmp(what, "steal"))
		r = ioctl(fd, TIOCSCTTY, 1);
	else if (!strcmp(what, "cons"))
		r = ioctl(fd, TIOCCONS);
	else if (!strcmp(what, "linux"))
		r = ioctl(fd, TIOCLINUX, &sub);
	else if (!strcmp(what, "kd")) {
		char type;

		r = ioctl(fd, KDGKBTYPE, &type);
	} else
		return 2;
	return report(r, what);
}

static int own_pty(bool peer)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), status;
	pid_t pid;

	if (m < 0 || grantpt(m) || unlockpt(m))
		return report(-1, "posix_openpt");
	pid = fork();
	if (pid == 0) {
		int s;

		if (setsid() < 0)
			_exit(3);
		s = peer ? ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY) :
			   open(ptsname(m), O_RDWR | O_NOCTTY);
		if (s < 0)
			_exit(4);
		_exit(ioctl(s, TIOCSCTTY, 0) == 0 ? 0 : 10 + errno);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return report(0, "TIOCSCTTY");
	errno = WIFEXITED(status) && WEXITSTATUS(status) >= 10 ? WEXITSTATUS(status) - 10 : EIO;
	return report(-1, "TIOCSCTTY");
}

static int prlimit_own(pid_t pid)
{
	struct rlimit cur;

	if (prlimit(pid, RLIMIT_FSIZE, NULL, &cur) < 0)
		return report(-1, "prlimit get");
	return report(prlimit(pid, RLIMIT_FSIZE, &cur, NULL), "prlimit set");
}

/* A minimal POSIX ACL in its xattr form: version 2, three entries. */
static int set_acl(const char *path)
{
	struct { unsigned int version; struct { unsigned short tag, perm; unsigned int id; } e[3]; }
	acl = { 2, { { 0x01, 6, ~0u }, { 0x04, 4, ~0u }, { 0x20, 4, ~0u } } };

	return report(setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0), "setxattr acl");
}

static int chattr(const char *path)
{
	int fd = open(path, O_RDONLY), flags = 0;

	if (fd < 0)
		return report(-1, "open");
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		flags = 0;   /* refused or not: the set below is what is judged */
	flags |= FS_NODUMP_FL;
	return report(ioctl(fd, FS_IOC_SETFLAGS, &flags), "FS_IOC_SETFLAGS");
}

static int cap(int argc, char **argv)
{
	const char *what = argv[2];

	if (!strcmp(what, "sethostname")) {
		char h[256];

		gethostname(h, sizeof(h));
		return report(sethostname(h, strlen(h)), "sethostname");
	}
	if (!strcmp(what, "settime")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		return report(clock_settime(CLOCK_REALTIME, &ts), "clock_settime");
	}
	if (!strcmp(what, "reboot"))   /* ctrl-alt-del: the kernel's default */
		return report(reboot(RB_ENABLE_CAD), "reboot");
	if (!strcmp(what, "mknod") && argc == 4)
		return report(mknod(argv[3], S_IFCHR | 0600, makedev(1, 3)), "mknod");
	if (!strcmp(what, "iopl"))
		return report(iopl(3), "iopl");
	if (!strcmp(what, "netadmin")) {
		struct ifreq ifr = { 0 };
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
		if (ioctl(s, SIOCGIFMTU, &ifr) < 0)
			return report(-1, "SIOCGIFMTU");
		return report(ioctl(s, SIOCSIFMTU, &ifr), "SIOCSIFMTU");
	}
	if (!strcmp(what, "rlimit")) {   /* raising a hard limit: CAP_SYS_RESOURCE */
		struct rlimit r, low;

		getrlimit(RLIMIT_NOFILE, &r);
		low.rlim_max = r.rlim_max - 1;
		low.rlim_cur = r.rlim_cur < low.rlim_max ? r.rlim_cur : low.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &low) < 0)   /* lowering needs nothing */
			return report(-1, "setrlimit lower");
		return report(setrlimit(RLIMIT_NOFILE, &r), "setrlimit raise");
	}
	return 2;
}

static int at(int fd, const char *what, const char *rel)
{
	if (!strcmp(what, "read"))
		return first_line(openat(fd, rel, O_RDONLY));
	if (!strcmp(what, "write")) {
		int w = openat(fd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (w < 0)
			return report(-1, "openat");
		return report(write(w, "written\n", 8), "write");
	}
	if (!strcmp(what, "exec")) {
		char *args[] = { (char *)rel, NULL };

		syscall(SYS_execveat, fd, rel, args, (char *[]){ NULL }, 0);
		return report(-1, "execveat");
	}
	return 2;
}

/* linkat(0, "", AT_FDCWD, NEW, AT_EMPTY_PATH): by HOW "sys", or IORING_OP_LINKAT
 * run by an io-wq worker ("async"). */
static int link_stdin(const char *how, const char *new)
{
	struct io_uring_sqe req = { .opcode = IORING_OP_LINKAT, .fd = 0, .addr = (uintptr_t)"",
				    .len = (__u32)AT_FDCWD, .addr2 = (uintptr_t)new,
				    .hardlink_flags = AT_EMPTY_PATH };
	const char *what;
	int res;

	if (!strcmp(how, "sys"))
		return report(linkat(0, "", AT_FDCWD, new, AT_EMPTY_PATH), "linkat");
	if (strcmp(how, "async"))
		return 2;
	if (uring_one(&req, URING_ASYNC, &res, &what) < 0)
		return report(-1, what);
	errno = res < 0 ? -res : 0;
	return report(res < 0 ? -1 : 0, "IORING_OP_LINKAT");
}

static int handle_read(const char *path)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	char dir[4096], *slash;
	int mount_id, mfd;

	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0) < 0)
		return report(-1, "name_to_handle_at");
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = 0;
	mfd = open(dir, O_RDONLY | O_DIRECTORY);
	return first_line(open_by_handle_at(mfd, h, O_RDONLY));
}

static int handle_save(const char *path, const char *out)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int mount_id, fd;

	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0) < 0)
		return report(-1, "name_to_handle_at");
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, h, sizeof(*h) + h->handle_bytes) < 0)
		return report(-1, "save");
	return report(close(fd), "close");
}

static int handle_load(const char *dir, const char *in)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int fd = open(in, O_RDONLY), mfd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || mfd < 0 || read(fd, h, sizeof(*h) + MAX_HANDLE_SZ) < (ssize_t)sizeof(*h))
		return report(-1, "load");
	return first_line(open_by_handle_at(mfd, h, O_RDONLY));
}

static int opath_reopen(const char *path, const char *fifo)
{
	char proc[64], line[16];
	int fd = open(path, O_PATH), f;

	if (fd < 0)
		return report(-1, "open O_PATH");
	printf("ready\n");
	f = open(fifo, O_RDONLY);
	if (f < 0 || read(f, line, sizeof(line)) < 0)
		return report(-1, "fifo");
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return first_line(open(proc, O_RDONLY));
}

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	return report(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), "connect");
}

static int watch(const char *path, const char *how)
{
	int fd;

	if (!strcmp(how, "inotify")) {
		fd = inotify_init1(IN_CLOEXEC);
		if (fd < 0)
			return report(-1, "inotify_init1");
		return report(inotify_add_watch(fd, path, IN_ALL_EVENTS) < 0 ? -1 : 0,
			      "inotify_add_watch");
	}
	if (!strcmp(how, "fanotify")) {
		/* Unprivileged fanotify: what a tree without CAP_SYS_ADMIN gets. */
		fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);
		if (fd < 0)
			return report(-1, "fanotify_init");
		return report(fanotify_mark(fd, FAN_MARK_ADD, FAN_MODIFY | FAN_CLOSE_WRITE,
					    AT_FDCWD, path), "fanotify_mark");
	}
	if (!strcmp(how, "dnotify")) {
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return report(-1, "open");
		return report(fcntl(fd, F_NOTIFY, DN_MODIFY | DN_CREATE | DN_MULTISHOT), "F_NOTIFY");
	}
	fprintf(stderr, "wall: watch: inotify, fanotify or dnotify\n");
	return 2;
}

static int usersock_send(const char *which)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		char body[8];
	} msg = { .h = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_MIN_TYPE } };
	socklen_t len = sizeof(me);
	int fd = strcmp(which, "new") ? atoi(which) :
					socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);

	if (fd < 0)
		return report(-1, "socket");
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 && errno != EINVAL)
		return report(-1, "bind");
	if (getsockname(fd, (struct sockaddr *)&me, &len) < 0)
		return report(-1, "getsockname");
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&me, sizeof(me)) < 0)
		return report(-1, "sendto");
	return report(recv(fd, &msg, sizeof(msg), MSG_DONTWAIT) == sizeof(msg) ? 0 : -1, "recv");
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(op, "tty-ioctl") && argc == 4)
		return tty_ioctl(argv[2], argv[3]);
	if (!strcmp(op, "tty-open") && argc == 3)
		return report(open(argv[2], O_RDWR | O_NOCTTY), "open");
	if (!strcmp(op, "own-pty") && (argc == 2 || (argc == 3 && !strcmp(argv[2], "peer"))))
		return own_pty(argc == 3);
	if (!strcmp(op, "hold-pty") && argc == 2) {
		int m = posix_openpt(O_RDWR | O_NOCTTY);

		if (m < 0 || grantpt(m) || unlockpt(m))
			return report(-1, "posix_openpt");
		printf("%s\n", ptsname(m));
		if (fork() == 0)
			_exit(report(open(ptsname(m), O_RDWR | O_NOCTTY), "open"));
		wait(NULL);
		for (;;)
			pause();
	}
	if (!strcmp(op, "vhangup") && argc == 2)
		return report(vhangup(), "vhangup");
	if (!strcmp(op, "prlimit") && argc == 3)
		return prlimit_own(atoi(argv[2]));
	if (!strcmp(op, "setnice") && argc == 3)
		return report(setpriority(PRIO_PROCESS, atoi(argv[2]), 5), "setpriority");
	if (!strcmp(op, "ioprio") && argc == 3)   /* IOPRIO_WHO_PROCESS, BE class, level 4 */
		return report(syscall(SYS_ioprio_set, 1, atoi(argv[2]), (2 << 13) | 4), "ioprio_set");
	if (!strcmp(op, "affinity") && argc == 3) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		return report(sched_setaffinity(atoi(argv[2]), sizeof(set), &set), "sched_setaffinity");
	}
	if (!strcmp(op, "setxattr") && argc == 3) {
		unsigned int caps[5] = { 0x02000000 };   /* VFS_CAP_REVISION_2 */

		return report(setxattr(argv[2], "security.capability", caps, sizeof(caps), 0),
			      "setxattr");
	}
	if (!strcmp(op, "setxattr-user") && argc == 3)
		return report(setxattr(argv[2], "user.sharness", "x", 1, 0), "setxattr");
	if (!strcmp(op, "setxattr-trusted") && argc == 3)
		return report(setxattr(argv[2], "trusted.sharness", "x", 1, 0), "setxattr");
	if (!strcmp(op, "setxattr-named") && argc == 4)
		return report(setxattr(argv[2], argv[3], "x", 1, 0), "setxattr");
	if (!strcmp(op, "removexattr-named") && argc == 4)
		return report(removexattr(argv[2], argv[3]), "removexattr");
	if (!strcmp(op, "fchmod") && argc == 4) {
		int fd = open(argv[2], O_RDONLY | O_DIRECTORY);

		if (fd < 0)
			return report(-1, "open");
		return report(fchmod(fd, (mode_t)strtoul(argv[3], NULL, 8)), "fchmod");
	}
	if (!strcmp(op, "removexattr") && argc == 3)
		return report(removexattr(argv[2], "security.capability"), "removexattr");
	if (!strcmp(op, "setacl") && argc == 3)
		return set_acl(argv[2]);
	if (!strcmp(op, "utimens") && argc == 3) {
		struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

		return report(utimensat(AT_FDCWD, argv[2], ts, 0), "utimensat");
	}
	if (!strcmp(op, "chattr") && argc == 3)
		return chattr(argv[2]);
	if (!strcmp(op, "cap") && argc >= 3)
		return cap(argc, argv);
	if (!strcmp(op, "open-tree") && argc == 3)
		return report(syscall(SYS_open_tree, AT_FDCWD, argv[2], OPEN_TREE_CLONE), "open_tree");
	if (!strcmp(op, "mount-setattr") && argc == 3) {
		unsigned long long attr[4] = { 0x2 /* MOUNT_ATTR_NOSUID */, 0, 0, 0 };

		return report(syscall(SYS_mount_setattr, AT_FDCWD, argv[2], 0, attr, sizeof(attr)),
			      "mount_setattr");
	}
	if (!strcmp(op, "fspick") && argc == 3)
		return report(syscall(SYS_fspick, AT_FDCWD, argv[2], 0), "fspick");
	if (!strcmp(op, "with-clone") && argc >= 5 && !strcmp(argv[3], "--")) {
		int fd = syscall(SYS_open_tree, AT_FDCWD, argv[2], OPEN_TREE_CLONE);

		if (fd < 0 || dup2(fd, 9) < 0)
			return report(-1, "open_tree");
		execvp(argv[4], argv + 4);
		return report(-1, "exec");
	}
	if (!strcmp(op, "at") && argc == 5)
		return at(atoi(argv[2]), argv[3], argv[4]);
	if (!strcmp(op, "handle-read") && argc == 3)
		return handle_read(argv[2]);
	if (!strcmp(op, "link-stdin") && argc == 4)
		return link_stdin(argv[2], argv[3]);
	if (!strcmp(op, "handle-save") && argc == 4)
		return handle_save(argv[2], argv[3]);
	if (!strcmp(op, "handle-load") && argc == 4)
		return handle_load(argv[2], argv[3]);
	if (!strcmp(op, "opath-reopen") && argc == 4)
		return opath_reopen(argv[2], argv[3]);
	if (!strcmp(op, "open-blk") && argc == 3)
		return report(open(argv[2], O_RDONLY), "open");
	if (!strcmp(op, "shm-attach") && argc == 3)
		return report(shmat(atoi(argv[2]), NULL, 0) == (void *)-1 ? -1 : 0, "shmat");
	if (!strcmp(op, "shm-own") && argc == 2) {
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

		if (id < 0)
			return report(-1, "shmget");
		return report(shmat(id, NULL, 0) == (void *)-1 ? -1 : 0, "shmat");
	}
	if (!strcmp(op, "mq-unlink") && argc == 3)
		return report(mq_unlink(argv[2]), "mq_unlink");
	if (!strcmp(op, "shm-rmid") && argc == 3)
		return report(shmctl(atoi(argv[2]), IPC_RMID, NULL), "shmctl");
	if (!strcmp(op, "sem-rmid") && argc == 3)
		return report(semctl(atoi(argv[2]), 0, IPC_RMID), "semctl");
	if (!strcmp(op, "msg-rmid") && argc == 3)
		return report(msgctl(atoi(argv[2]), IPC_RMID, NULL), "msgctl");
	if (!strcmp(op, "shm-create") && argc == 3)
		return report(shmget(atoi(argv[2]), 4096, IPC_CREAT | IPC_EXCL | 0600), "shmget");
	if (!strcmp(op, "sem-create") && argc == 3)
		return report(semget(atoi(argv[2]), 1, IPC_CREAT | IPC_EXCL | 0600), "semget");
	if (!strcmp(op, "msg-create") && argc == 3)
		return report(msgget(atoi(argv[2]), IPC_CREAT | IPC_EXCL | 0600), "msgget");
	if (!strcmp(op, "mq-open") && argc == 3)
		return report(mq_open(argv[2], O_CREAT | O_RDWR, 0600, NULL), "mq_open");
	if (!strcmp(op, "key-user") && argc == 2) {
		char desc[256];

		return report(syscall(SYS_keyctl, 6 /* KEYCTL_DESCRIBE */, -4 /* KEY_SPEC_USER_KEYRING */,
				      desc, sizeof(desc)), "keyctl");
	}
	if (!strcmp(op, "mmap-low") && argc == 2)
		return report(mmap((void *)4096, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0,
			      "mmap");
	if (!strcmp(op, "mmap-exec") && argc == 4) {
		for (int i = 0, n = atoi(argv[3]); i < n; i++) {
			int fd = open(argv[2], O_RDONLY);
			void *p;

			if (fd < 0)
				return report(-1, "open");
			p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			close(fd);
			if (p == MAP_FAILED)
				return report(-1, "mmap");
			munmap(p, 4096);
		}
		return report(0, "mmap");
	}
	if (!strcmp(op, "ctl-connect") && argc == 3)
		return ctl_connect(argv[2]);
	if (!strcmp(op, "watch") && argc == 4)
		return watch(argv[2], argv[3]);
	if (!strcmp(op, "usersock-send") && argc == 3)
		return usersock_send(argv[2]);
	if (!strcmp(op, "with-usersock") && argc >= 4 && !strcmp(argv[2], "--")) {
		int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);

		if (fd < 0 || dup2(fd, 9) < 0)
			return report(-1, "socket");
		execvp(argv[3], argv + 3);
		return report(-1, "exec");
	}
	if (!strcmp(op, "connect-n") && argc == 4) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
		for (int i = 0, n = atoi(argv[3]); i < n; i++) {
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);

			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				return report(-1, "connect");
			close(fd);
		}
		return report(0, "connect");
	}
	fprintf(stderr, "wall: bad usage\n");
	return 2;
}
