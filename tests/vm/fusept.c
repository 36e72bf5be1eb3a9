// SPDX-License-Identifier: GPL-2.0
/*
 * fusept: a FUSE server whose one file passes through to a backing file
 * (FUSE passthrough, Linux 6.9 on), for t_limits. Mounts a file system at
 * MNT holding one regular file, "f"; every open of it is passed through to
 * BACKING, which the server opened, so reads and writes go to BACKING in
 * the kernel with the server's credentials in force, not the caller's.
 * Prints "ready" once the kernel took the passthrough and serves until the
 * file system is unmounted. Exits 77, saying why, where the kernel offers
 * no passthrough; 1 on any other failure.
 *
 *   fusept MNT BACKING
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* Protocol 7.40 (Linux 6.9): newer than the headers this is built with. */
#define PT_MINOR 40
#define PT_FLAGS2_PASSTHROUGH (1u << (37 - 32))
#define PT_FOPEN_PASSTHROUGH (1u << 7)
struct pt_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define PT_IOC_BACKING_OPEN _IOW(229, 1, struct pt_backing_map)

#define ROOT_ID 1
#define FILE_ID 2

static int dev, backing, backing_id = -1;

static int reply(uint64_t unique, int error, const void *body, size_t len)
{
	struct fuse_out_header h = { .len = sizeof(h) + (error ? 0 : len), .error = error,
				     .unique = unique };
	char buf[sizeof(h) + 256];

	if (len > 256)
		return -1;
	memcpy(buf, &h, sizeof(h));
	if (!error && len)
		memcpy(buf + sizeof(h), body, len);
	return write(dev, buf, h.len) == (ssize_t)h.len ? 0 : -1;
}

static int attr_of(uint64_t id, struct fuse_attr *a)
{
	struct stat st;

	memset(a, 0, sizeof(*a));
	a->ino = id;
	a->blksize = 4096;
	if (id == ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
		return 0;
	}
	if (id != FILE_ID || fstat(backing, &st))
		return -ENOENT;
	a->mode = S_IFREG | 0666;
	a->nlink = 1;
	a->size = st.st_size;
	a->blocks = st.st_blocks;
	return 0;
}

/* The answer to INIT: passthrough, one file system below (the backing
 * file's), and no write-back cache (passthrough refuses one). */
static int init(const struct fuse_in_header *in, const struct fuse_init_in *arg)
{
	struct fuse_init_out out = { .major = FUSE_KERNEL_VERSION, .minor = PT_MINOR,
				     .max_readahead = arg->max_readahead, .max_write = 1 << 20,
				     .max_background = 16, .congestion_threshold = 12,
				     .time_gran = 1, .max_pages = 256 };

	if (arg->major != FUSE_KERNEL_VERSION || arg->minor < PT_MINOR ||
	    !(arg->flags & FUSE_INIT_EXT) || !(arg->flags2 & PT_FLAGS2_PASSTHROUGH)) {
		fprintf(stderr, "fusept: the kernel offers no passthrough (protocol 7.%u)\n",
			arg->minor);
		reply(in->unique, -ENOSYS, NULL, 0);
		exit(77);
	}
	out.flags = FUSE_INIT_EXT | FUSE_MAX_PAGES | (arg->flags & FUSE_BIG_WRITES);
	out.flags2 = PT_FLAGS2_PASSTHROUGH;
	out.unused[0] = 1; /* max_stack_depth */
	return reply(in->unique, 0, &out, sizeof(out));
}

static int serve(const struct fuse_in_header *in, const char *arg)
{
	switch (in->opcode) {
	case FUSE_INIT:
		return init(in, (const struct fuse_init_in *)arg);
	case FUSE_LOOKUP: {
		struct fuse_entry_out e = { .nodeid = FILE_ID };

		if (in->nodeid != ROOT_ID || strcmp(arg, "f"))
			return reply(in->unique, -ENOENT, NULL, 0);
		return reply(in->unique, attr_of(FILE_ID, &e.attr), &e, sizeof(e));
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a = { 0 };

		return reply(in->unique, attr_of(in->nodeid, &a.attr), &a, sizeof(a));
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = { .open_flags = PT_FOPEN_PASSTHROUGH };

		if (in->nodeid != FILE_ID)
			return reply(in->unique, -EISDIR, NULL, 0);
		o.padding = (uint32_t)backing_id; /* backing_id */
		return reply(in->unique, 0, &o, sizeof(o));
	}
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_FSYNC:
		return reply(in->unique, 0, NULL, 0);
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return 0;
	case FUSE_DESTROY:
		reply(in->unique, 0, NULL, 0);
		exit(0);
	default:
		return reply(in->unique, -ENOSYS, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static char buf[(1 << 20) + 4096];
	char opts[128];

	if (argc != 3) {
		fprintf(stderr, "usage: fusept MNT BACKING\n");
		return 2;
	}
	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	backing = open(argv[2], O_RDWR | O_CLOEXEC);
	if (dev < 0 || backing < 0) {
		perror("fusept: open");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
		 "default_permissions", dev);
	if (mount("fusept", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts)) {
		perror("fusept: mount");
		return 1;
	}
	for (;;) {
		ssize_t n = read(dev, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < 0 && errno == ENODEV)
			return 0; /* unmounted */
		if (n < (ssize_t)sizeof(*in) || in->len != (uint32_t)n) {
			fprintf(stderr, "fusept: read: %s\n", n < 0 ? strerror(errno) : "short");
			return 1;
		}
		buf[n] = 0;
		if (serve(in, buf + sizeof(*in))) {
			perror("fusept: reply");
			return 1;
		}
		if (in->opcode == FUSE_INIT) {
			struct pt_backing_map map = { .fd = backing };

			backing_id = ioctl(dev, PT_IOC_BACKING_OPEN, &map);
			if (backing_id < 0) {
				perror("fusept: FUSE_DEV_IOC_BACKING_OPEN");
				return 1;
			}
			printf("ready\n");
			fflush(stdout);
		}
	}
}
