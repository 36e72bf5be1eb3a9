// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * escape: one attempt at a way around the enforcer per call, for the
 * side-door tests. Like try, it prints "ok" (exit 0) or "err NAME" with
 * the errno's symbol (exit 1), then details on further lines; bad usage
 * exits 2. Operations that run a program print nothing themselves when
 * the program runs.
 *
 *   escape bpf-map-create            bpf(BPF_MAP_CREATE), a small array map
 *   escape bpf-prog-next-id          bpf(BPF_PROG_GET_NEXT_ID) from 0
 *   escape mount-tmpfs DIR           mount("tmpfs", DIR, "tmpfs")
 *   escape fsmount-tmpfs DIR         fsopen + fsconfig + fsmount, then
 *                                    move_mount onto DIR (the new mount API)
 *   escape umount DIR                umount2(DIR, 0)
 *   escape pivot-root NEW OLD        pivot_root(NEW, OLD)
 *   escape unshare-userns            unshare(CLONE_NEWUSER)
 *   escape chroot DIR                chroot(DIR)
 *   escape ptrace-attach PID         PTRACE_ATTACH, wait for the stop, detach
 *   escape ptrace-child              fork a child, PTRACE_ATTACH it, detach
 *   escape vm-write PID ADDR TEXT    process_vm_writev TEXT (with its NUL)
 *                                    at ADDR (hex) in PID
 *   escape pidfd-getfd PID FD        pidfd_open + pidfd_getfd: copy PID's FD
 *   escape hold FILE                 a process to attack: opens FILE, prints
 *                                    "ready PID ADDR FD" (ADDR of a buffer
 *                                    holding "clean"), prints the buffer on
 *                                    SIGUSR1, exits on SIGTERM
 *   escape init-module FILE          init_module with FILE's bytes
 *   escape finit-module FILE         finit_module on FILE
 *   escape socket-family N           socket(N, SOCK_DGRAM): may ask the
 *                                    kernel to load a module for family N
 *   escape clone-into-cgroup DIR     clone3(CLONE_INTO_CGROUP) into cgroup DIR
 *   escape clone-into-cgroup DIR PROG [ARG...]
 *                                    the same, as a runtime starts a
 *                                    container: the child prints
 *                                    "set-up=ok" (or set-up=ERRNO) for a
 *                                    chroot("/"), then execs PROG
 *   escape dlopen PATH               dlopen(PATH); on failure "err DLOPEN"
 *                                    and dlerror() on the next line
 *   escape mmap-exec PATH            mmap PATH with PROT_READ|PROT_EXEC
 *   escape mprotect-exec PATH        mmap PATH PROT_READ, then mprotect
 *                                    PROT_READ|PROT_EXEC
 *   escape loaded NAME               "yes" if an object whose path contains
 *                                    NAME is mapped in this process, else "no"
 *   escape memfd-exec SRC [ARG...]   copy SRC into a memfd, fexecve it
 *   escape memfd-mmap SRC            copy SRC into a memfd, mmap it PROT_EXEC
 *   escape deleted-exec SRC DST [ARG...]  copy SRC to DST, open it, unlink
 *                                    DST, execute /proc/self/fd/N
 *   escape serve-fd SOCK FILE r|w|c  unix server at SOCK: for every client,
 *                                    open FILE and pass the descriptor over
 *                                    SCM_RIGHTS; prints "ready" first (c:
 *                                    FILE removed and made anew by the open,
 *                                    O_CREAT|O_EXCL, for writing)
 *   escape recv-fd SOCK              connect to SOCK and receive one
 *                                    descriptor: "ok" and the file's first
 *                                    line, or "err NOFD" when none arrived
 *   escape uring HOW open PATH r|w|creat   one io_uring request, HOW being
 *   escape uring HOW mkdir PATH      inline (the task runs it), async (an
 *   escape uring HOW unlink PATH     io-wq worker does) or sqpoll (the
 *   escape uring HOW rename FROM TO  ring's kernel thread does); an open
 *                                    prints the file's first line after "ok"
 *   escape after-uring mkdir|write PATH   one io_uring request (a no-op,
 *                                    which the task runs), then mkdir(PATH)
 *                                    or open(PATH, O_WRONLY) by the system
 *                                    call: a task with io_uring state of
 *                                    its own
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/sched.h>

#include "uring.h"
#include "verdict.h"

#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

extern char **environ;

static int bpf_map_create(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}

static int bpf_prog_next_id(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.start_id = 0;
	return syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &a, sizeof(a));
}

static int fsmount_tmpfs(const char *dir)
{
	int fs, mnt;

	fs = syscall(SYS_fsopen, "tmpfs", 0);
	if (fs < 0)
		return report(-1, "fsopen");
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return report(-1, "fsconfig");
	mnt = syscall(SYS_fsmount, fs, 0, 0);
	if (mnt < 0)
		return report(-1, "fsmount");
	return report(syscall(SYS_move_mount, mnt, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH),
		      "move_mount");
}

static int ptrace_attach(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0)
		return report(-1, "ptrace");
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return report(0, "ptrace");
}

static int ptrace_child(void)
{
	pid_t pid = fork();
	int r;

	if (pid < 0)
		return report(-1, "fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	r = ptrace(PTRACE_ATTACH, pid, 0, 0);
	if (r == 0) {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, 0, 0);
	}
	report(r, "ptrace");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return r < 0;
}

static int vm_write(pid_t pid, const char *addr, const char *text)
{
	struct iovec local = { .iov_base = (void *)text, .iov_len = strlen(text) + 1 };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)strtoull(addr, NULL, 16),
				.iov_len = strlen(text) + 1 };

	return report(process_vm_writev(pid, &local, 1, &remote, 1, 0), "process_vm_writev");
}

static int pidfd_getfd(pid_t pid, int fd)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0);

	if (pfd < 0)
		return report(-1, "pidfd_open");
	return report(syscall(SYS_pidfd_getfd, pfd, fd, 0), "pidfd_getfd");
}

static char hold_buf[64] = "clean";

static void hold_usr1(int sig)
{
	(void)sig;
	if (write(1, hold_buf, strnlen(hold_buf, sizeof(hold_buf) - 1)) < 0 ||
	    write(1, "\n", 1) < 0)
		_exit(3);
}

static int hold(const char *file)
{
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return report(-1, "open");
	signal(SIGUSR1, hold_usr1);
	printf("ready %d %lx %d\n", getpid(), (unsigned long)(uintptr_t)hold_buf, fd);
	for (;;)
		pause();
}

/* A file's bytes in memory (for init_module and the memfd copies). */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	p = malloc(st.st_size + 1);
	if (!p || read(fd, p, st.st_size) != st.st_size)
		return NULL;
	close(fd);
	*len = st.st_size;
	return p;
}

static int init_module_file(const char *path)
{
	size_t len;
	char *p = slurp(path, &len);

	if (!p)
		return report(-1, "read");
	return report(syscall(SYS_init_module, p, len, ""), "init_module");
}

static int finit_module_file(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return report(-1, "open");
	return report(syscall(SYS_finit_module, fd, "", 0), "finit_module");
}

static int clone_into_cgroup(const char *dir, char **prog)
{
	struct clone_args args;
	int cfd = open(dir, O_RDONLY | O_DIRECTORY);
	long pid;

	if (cfd < 0)
		return report(-1, "open");
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = cfd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0 && prog[0]) {
		printf("set-up=%s\n", chroot("/") ? errname(errno) : "ok");
		fflush(stdout);
		execv(prog[0], prog);
		printf("exec=%s\n", errname(errno));
		_exit(126);
	}
	if (pid == 0)
		_exit(0);
	if (pid > 0 && prog[0]) {
		waitpid(pid, NULL, 0);
		return 0;
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return report(pid, "clone3");
}

static int map_exec(const char *path, bool via_mprotect)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		return report(-1, "open");
	p = mmap(NULL, 4096, via_mprotect ? PROT_READ : PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return report(-1, "mmap");
	if (!via_mprotect)
		return report(0, "mmap");
	return report(mprotect(p, 4096, PROT_READ | PROT_EXEC), "mprotect");
}

static int loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	return info->dlpi_name && strstr(info->dlpi_name, data) ? 1 : 0;
}

static int memfd_copy(const char *src)
{
	size_t len;
	char *p = slurp(src, &len);
	int fd = memfd_create("sharness-test", MFD_CLOEXEC);

	if (!p || fd < 0 || write(fd, p, len) != (ssize_t)len)
		return -1;
	free(p);
	return fd;
}

static int deleted_exec(const char *src, const char *dst, char **argv)
{
	size_t len;
	char *p = slurp(src, &len);
	char path[64];
	int fd;

	if (!p)
		return report(-1, "read");
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, p, len) != (ssize_t)len || close(fd) < 0)
		return report(-1, "write");
	fd = open(dst, O_RDONLY);
	if (fd < 0 || unlink(dst) < 0)
		return report(-1, "unlink");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	execve(path, argv, environ);
	return report(-1, "execve");
}

static int serve_fd(const char *sock, const char *file, const char *mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 16) < 0)
		return report(-1, "listen");
	printf("ready\n");
	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { .iov_base = "x", .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		int c = accept(s, NULL, NULL), fd;

		if (c < 0)
			continue;
		if (mode[0] == 'c')
			unlink(file);
		fd = mode[0] == 'c' ? open(file, O_WRONLY | O_CREAT | O_EXCL, 0644)
				    : open(file, mode[0] == 'w' ? O_WRONLY : O_RDONLY);
		if (fd >= 0) {
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
			if (sendmsg(c, &mh, 0) < 0)
				perror("sendmsg");
			close(fd);
		}
		close(c);
	}
}

/* "ok", then the first line of FD's file (an empty line if none is read). */
static int ok_with_first_line(int fd)
{
	char line[128] = "";
	ssize_t n = fd < 0 ? 0 : pread(fd, line, sizeof(line) - 1, 0);

	line[n > 0 ? n : 0] = 0;
	line[strcspn(line, "\n")] = 0;
	printf("ok\n%s\n", line);
	return 0;
}

static int recv_fd(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd;
	ssize_t n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return report(-1, "connect");
	n = recvmsg(s, &mh, 0);
	if (n < 0)
		return report(-1, "recvmsg");
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(sizeof(int))) {
		printf("err NOFD\n(recvmsg returned %zd, flags%s)\n", n,
		       (mh.msg_flags & MSG_CTRUNC) ? " MSG_CTRUNC" : " none");
		return 1;
	}
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return ok_with_first_line(fd);
}

/* A no-op through io_uring, then OP on PATH by the system call. */
static int after_uring(const char *op, const char *path)
{
	struct io_uring_sqe req = { .opcode = IORING_OP_NOP };
	const char *what;
	int res;

	if (uring_one(&req, URING_INLINE, &res, &what) < 0)
		return uring_unavailable(what);
	if (res < 0) {
		errno = -res;
		return report(-1, "nop");
	}
	if (!strcmp(op, "mkdir"))
		return report(mkdir(path, 0755), "mkdir");
	return report(open(path, O_WRONLY), "open");
}

/* One file operation through io_uring (uring.h says HOW). */
static int uring_file(const char *how_s, const char *op, const char *path, const char *mode)
{
	struct io_uring_sqe req = { .fd = AT_FDCWD, .addr = (uintptr_t)path };
	int how = uring_how_of(how_s), res;
	const char *what;

	if (how < 0)
		return 2;
	if (!strcmp(op, "open") && mode) {
		req.opcode = IORING_OP_OPENAT;
		req.len = 0644;
		if (!strcmp(mode, "r"))
			req.open_flags = O_RDONLY;
		else if (!strcmp(mode, "w"))
			req.open_flags = O_WRONLY;
		else if (!strcmp(mode, "creat"))
			req.open_flags = O_WRONLY | O_CREAT;
		else
			return 2;
	} else if (!strcmp(op, "mkdir") && !mode) {
		req.opcode = IORING_OP_MKDIRAT;
		req.len = 0755;
	} else if (!strcmp(op, "unlink") && !mode) {
		req.opcode = IORING_OP_UNLINKAT;
	} else if (!strcmp(op, "rename") && mode) {
		req.opcode = IORING_OP_RENAMEAT;
		req.len = (__u32)AT_FDCWD;      /* the new name's directory */
		req.addr2 = (uintptr_t)mode;    /* the new name */
	} else {
		return 2;
	}
	if (uring_one(&req, how, &res, &what) < 0)
		return uring_unavailable(what);
	if (res < 0) {
		errno = -res;
		return report(-1, op);
	}
	if (req.opcode != IORING_OP_OPENAT)
		return report(0, op);
	return ok_with_first_line(req.open_flags == O_RDONLY ? res : -1);
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(op, "bpf-map-create") && argc == 2)
		return report(bpf_map_create(), "bpf");
	if (!strcmp(op, "bpf-prog-next-id") && argc == 2)
		return report(bpf_prog_next_id(), "bpf");
	if (!strcmp(op, "mount-tmpfs") && argc == 3)
		return report(mount("tmpfs", argv[2], "tmpfs", 0, NULL), "mount");
	if (!strcmp(op, "fsmount-tmpfs") && argc == 3)
		return fsmount_tmpfs(argv[2]);
	if (!strcmp(op, "umount") && argc == 3)
		return report(umount2(argv[2], 0), "umount2");
	if (!strcmp(op, "pivot-root") && argc == 4)
		return report(syscall(SYS_pivot_root, argv[2], argv[3]), "pivot_root");
	if (!strcmp(op, "unshare-userns") && argc == 2)
		return report(unshare(CLONE_NEWUSER), "unshare");
	if (!strcmp(op, "chroot") && argc == 3)
		return report(chroot(argv[2]), "chroot");
	if (!strcmp(op, "ptrace-attach") && argc == 3)
		return ptrace_attach(atoi(argv[2]));
	if (!strcmp(op, "ptrace-child") && argc == 2)
		return ptrace_child();
	if (!strcmp(op, "vm-write") && argc == 5)
		return vm_write(atoi(argv[2]), argv[3], argv[4]);
	if (!strcmp(op, "pidfd-getfd") && argc == 4)
		return pidfd_getfd(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(op, "hold") && argc == 3)
		return hold(argv[2]);
	if (!strcmp(op, "init-module") && argc == 3)
		return init_module_file(argv[2]);
	if (!strcmp(op, "finit-module") && argc == 3)
		return finit_module_file(argv[2]);
	if (!strcmp(op, "socket-family") && argc == 3)
		return report(socket(atoi(argv[2]), SOCK_DGRAM, 0), "socket");
	if (!strcmp(op, "clone-into-cgroup") && argc >= 3)
		return clone_into_cgroup(argv[2], &argv[3]);
	if (!strcmp(op, "dlopen") && argc == 3) {
		if (dlopen(argv[2], RTLD_NOW | RTLD_LOCAL))
			return report(0, "dlopen");
		printf("err DLOPEN\n%s\n", dlerror());
		return 1;
	}
	if (!strcmp(op, "mmap-exec") && argc == 3)
		return map_exec(argv[2], false);
	if (!strcmp(op, "mprotect-exec") && argc == 3)
		return map_exec(argv[2], true);
	if (!strcmp(op, "loaded") && argc == 3) {
		printf("%s\n", dl_iterate_phdr(loaded_cb, argv[2]) ? "yes" : "no");
		return 0;
	}
	if (!strcmp(op, "memfd-exec") && argc >= 3) {
		int fd = memfd_copy(argv[2]);

		if (fd < 0)
			return report(-1, "memfd");
		fexecve(fd, argv + 2, environ);
		return report(-1, "fexecve");
	}
	if (!strcmp(op, "memfd-mmap") && argc == 3) {
		int fd = memfd_copy(argv[2]);

		if (fd < 0)
			return report(-1, "memfd");
		return report(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			      MAP_FAILED ? -1 : 0, "mmap");
	}
	if (!strcmp(op, "deleted-exec") && argc >= 4)
		return deleted_exec(argv[2], argv[3], argv + 3);
	if (!strcmp(op, "serve-fd") && argc == 5)
		return serve_fd(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "recv-fd") && argc == 3)
		return recv_fd(argv[2]);
	if (!strcmp(op, "after-uring") && argc == 4 &&
	    (!strcmp(argv[2], "mkdir") || !strcmp(argv[2], "write")))
		return after_uring(argv[2], argv[3]);
	if (!strcmp(op, "uring") && (argc == 5 || argc == 6))
		return uring_file(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	fprintf(stderr, "escape: bad usage\n");
	return 2;
}
