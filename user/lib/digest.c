// SPDX-License-Identifier: GPL-2.0
/*
 * Content digests of executables (see digest.h).
 *
 * Why a lease: the programs trust a file's identity (device, inode, ctime,
 * size) in place of its content, so the content hashed must be the one
 * that identity stands for. A write moves the ctime, but a page a writer
 * dirtied through a shared mapping can change again without a new one.
 * The kernel grants a read lease only while nobody has the file open for
 * writing (a shared writable mapping keeps its file open), and holds a
 * writer's open until the lease is given back: while it is held, the
 * content cannot change. After it, a writer's first write moves the ctime
 * (write(2) and the first write fault of a mapping both do), unless it
 * lands in the same clock tick as the last change: so a file changed
 * within the last tick is hashed again once the tick has passed. The
 * programs also refuse a pinned file while a writer has it open. A file
 * system that grants no lease (9p, FUSE and others from 6.10 on) is
 * trusted only where its super block is read-only: no writer can exist.
 */
#define _GNU_SOURCE
#include "digest.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

int sh_digest_parse(const char *s, uint8_t out[SH_DIGEST_LEN])
{
	if (strncmp(s, "sha256:", 7) != 0 || strlen(s + 7) != 2 * SH_DIGEST_LEN)
		return -EINVAL;
	s += 7;
	for (int i = 0; i < SH_DIGEST_LEN; i++) {
		unsigned v = 0;

		for (int j = 0; j < 2; j++) {
			int d = sh_hex_digit((unsigned char)s[2 * i + j]);

			if (d < 0)
				return -EINVAL;
			v = v << 4 | (unsigned)d;
		}
		out[i] = (uint8_t)v;
	}
	return 0;
}

void sh_digest_format(const uint8_t d[SH_DIGEST_LEN], char out[SH_DIGEST_STR])
{
	static const char hex[] = "0123456789abcdef";

	memcpy(out, "sha256:", 7);
	for (int i = 0; i < SH_DIGEST_LEN; i++) {
		out[7 + 2 * i] = hex[d[i] >> 4];
		out[8 + 2 * i] = hex[d[i] & 15];
	}
	out[7 + 2 * SH_DIGEST_LEN] = 0;
}

/* The device of mount mnt_id's super block as the kernel holds it
 * (MKDEV: major << 20 | minor), from this process's mountinfo: a stat's
 * st_dev is not always it (btrfs subvolumes, overlayfs). 0 if not found.
 * *ro: the super block (not only this mount) is read-only. */
static uint32_t mount_dev(uint64_t mnt_id, bool *ro)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	uint32_t dev = 0;

	*ro = false;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id;
		unsigned maj, min;
		char *sep, opts[256] = "";

		if (sscanf(line, "%llu %*u %u:%u", &id, &maj, &min) != 3 || id != mnt_id)
			continue;
		dev = (maj << 20) | (min & 0xfffff);
		sep = strstr(line, " - ");
		if (sep && sscanf(sep + 3, "%*s %*s %255s", opts) == 1)
			*ro = !strcmp(opts, "ro") || !strncmp(opts, "ro,", 3);
		break;
	}
	fclose(f);
	return dev;
}

/* Digests of identities hashed before under a lease: a reload hashes only
 * what changed. */
#define CACHE_SLOTS 4096
static struct cached {
	struct sh_file_id id;
	uint8_t d[SH_DIGEST_LEN];
	bool used;
} cache[CACHE_SLOTS];
static unsigned cache_next;

static bool same_id(const struct sh_file_id *a, const struct sh_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->ctime_sec == b->ctime_sec &&
	       a->ctime_nsec == b->ctime_nsec && a->size == b->size;
}

static bool cache_find(const struct sh_file_id *id, uint8_t out[SH_DIGEST_LEN])
{
	for (unsigned i = 0; i < CACHE_SLOTS && cache[i].used; i++) {
		if (same_id(&cache[i].id, id)) {
			memcpy(out, cache[i].d, SH_DIGEST_LEN);
			return true;
		}
	}
	return false;
}

static void cache_put(const struct sh_file_id *id, const uint8_t d[SH_DIGEST_LEN])
{
	struct cached *c = &cache[cache_next++ % CACHE_SLOTS];

	c->id = *id;
	memcpy(c->d, d, SH_DIGEST_LEN);
	c->used = true;
}

static int identity(int fd, struct sh_file_id *id, bool *ro, char *why, size_t whylen)
{
	struct statx st;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &st) < 0) {
		snprintf(why, whylen, "cannot stat: %s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.stx_mode)) {
		snprintf(why, whylen, "not a regular file");
		return -EINVAL;
	}
	*id = (struct sh_file_id){ .ino = st.stx_ino, .ctime_sec = st.stx_ctime.tv_sec,
				   .ctime_nsec = st.stx_ctime.tv_nsec, .size = st.stx_size };
	*ro = false;
	id->dev = (st.stx_mask & STATX_MNT_ID) ? mount_dev(st.stx_mnt_id, ro) : 0;
	if (!id->dev) {
		snprintf(why, whylen, "its mount is not in /proc/self/mountinfo");
		return -ENODEV;
	}
	return 0;
}

static int hash_fd(int fd, uint8_t out[SH_DIGEST_LEN], char *why, size_t whylen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	static uint8_t buf[1 << 16];
	unsigned len = 0;
	off_t off = 0;
	ssize_t r;
	int err = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		snprintf(why, whylen, "cannot start a SHA-256");
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		off += r;
	}
	if (r < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
	} else if (!EVP_DigestFinal_ex(ctx, out, &len) || len != SH_DIGEST_LEN) {
		err = -EIO;
		snprintf(why, whylen, "SHA-256 failed");
	}
	EVP_MD_CTX_free(ctx);
	return err;
}

/* Nanoseconds since the ctime (negative: in the future). */
static int64_t since_change(const struct sh_file_id *id)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return ((int64_t)now.tv_sec - id->ctime_sec) * 1000000000 +
	       ((int64_t)now.tv_nsec - (int64_t)id->ctime_nsec);
}

/* A lease break would send SIGIO, whose default is to terminate: a tree
 * opening the file for writing must not kill the hashing process. */
static void sigio_ignored(void)
{
	struct sigaction sa;

	if (sigaction(SIGIO, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGIO, SIG_IGN);
}

/* One attempt at fd: 0, -EAGAIN to try again after *wait_ns, -errno. */
static int hash_once(int fd, unsigned flags, uint64_t max_size, uint8_t out[SH_DIGEST_LEN],
		     struct sh_file_id *id, int64_t *wait_ns, char *why, size_t whylen)
{
	const int64_t settle = (int64_t)SH_DIGEST_SETTLE_S * 1000000000;
	bool leased = fcntl(fd, F_SETLEASE, F_RDLCK) == 0, ro = false;
	int lerr = leased ? 0 : errno, err;
	struct sh_file_id after;
	int64_t since;

	if (lerr == EAGAIN || lerr == EBUSY) {
		snprintf(why, whylen, "open for writing");
		return -ETXTBSY;
	}
	err = identity(fd, id, &ro, why, whylen);
	/* A file system that takes no lease (9p, FUSE, ...): only a
	 * read-only super block has no writer to fear. */
	if (!err && !leased && (flags & SH_DIGEST_LEASE) && !ro) {
		snprintf(why, whylen, "cannot take a read lease (%s) and its file system is "
			 "writable", strerror(lerr));
		err = -lerr;
	}
	if (!err && max_size && id->size > max_size) {
		snprintf(why, whylen, "larger than %llu MiB", (unsigned long long)(max_size >> 20));
		err = -EFBIG;
	}
	since = err ? 0 : since_change(id);
	if (!err && (flags & SH_DIGEST_LEASE) && since < settle) {
		*wait_ns = settle - (since < 0 ? 0 : since);
		snprintf(why, whylen, "changed within the last %d s", SH_DIGEST_SETTLE_S);
		err = -EAGAIN;
	}
	if (!err && !cache_find(id, out)) {
		err = hash_fd(fd, out, why, whylen);
		if (!err)
			err = identity(fd, &after, &ro, why, whylen);
		/* Changed meanwhile (a chmod, a rename), or the lease was
		 * broken and a writer let in. */
		if (!err && (!same_id(id, &after) || (leased && fcntl(fd, F_GETLEASE) != F_RDLCK))) {
			*wait_ns = 0;
			snprintf(why, whylen, "changed while it was hashed");
			err = -EAGAIN;
		}
		if (!err && (leased || ro))
			cache_put(id, out);   /* only what no writer could change */
	}
	if (leased)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	return err;
}

int sh_digest_file(const char *path, unsigned flags, uint64_t max_size,
		   uint8_t out[SH_DIGEST_LEN], struct sh_file_id *idp, char *why, size_t whylen)
{
	struct sh_file_id id;
	int fd, err = -EAGAIN;

	sigio_ignored();
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return err;
	}
	for (int tries = 0; tries < 4 && err == -EAGAIN; tries++) {
		int64_t wait_ns = 0;

		err = hash_once(fd, flags, max_size, out, &id, &wait_ns, why, whylen);
		if (err != -EAGAIN || (wait_ns && !(flags & SH_DIGEST_WAIT)))
			break;
		wait_ns += 10 * 1000000;
		nanosleep(&(struct timespec){ .tv_sec = wait_ns / 1000000000,
					      .tv_nsec = wait_ns % 1000000000 }, NULL);
	}
	close(fd);
	if (!err && idp)
		*idp = id;
	return err;
}
