/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Content digests of executables, for exec allows pinned by digest
 * (`allow = /usr/bin/git sha256:HEX`): SHA-256 through libcrypto, of a
 * file read while no writer has it open, and the identity the programs
 * compare at exec (include/sharness.h, struct sh_pin).
 */
#ifndef SHARNESS_DIGEST_H
#define SHARNESS_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SH_DIGEST_LEN 32
/* "sha256:" and 64 hex digits, with its NUL. */
#define SH_DIGEST_STR 72

/* What the programs compare: the file system's device as the kernel holds
 * it (MKDEV), the inode, and what every change of the file moves. */
struct sh_file_id {
	uint32_t dev;
	uint64_t ino;
	int64_t ctime_sec;
	uint32_t ctime_nsec;
	uint64_t size;
};

/* "sha256:<64 hex>" into out: 0, or -EINVAL. */
int sh_digest_parse(const char *s, uint8_t out[SH_DIGEST_LEN]);
/* out: "sha256:<64 hex>". */
void sh_digest_format(const uint8_t d[SH_DIGEST_LEN], char out[SH_DIGEST_STR]);

/* sh_digest_file's flags. */
#define SH_DIGEST_LEASE 1u  /* only under a read lease, or on a read-only file system */
#define SH_DIGEST_WAIT  2u  /* a file changed within SH_DIGEST_SETTLE_S: wait, then hash */
#define SH_DIGEST_SETTLE_S 2

/*
 * Hashes the regular file at path into out and, where id is not NULL,
 * says which file that was. With SH_DIGEST_LEASE (the daemon), the file is
 * read under a read lease, which the kernel grants only while nobody has
 * it open for writing and which holds a writer's open until the hash is
 * done (where the file system grants no lease, only a read-only one is
 * trusted), and a file changed within the last SH_DIGEST_SETTLE_S seconds
 * is not trusted (a later write could keep its ctime, whose clock may be
 * that coarse): with SH_DIGEST_WAIT it is hashed once that time has passed,
 * else refused (-EAGAIN). Without (a report for a person), a lease is
 * taken where it can be. A file larger than max_size (0: any) is not
 * hashed (-EFBIG). A digest of the same identity made under a lease is
 * remembered (a few thousand files). 0, or -errno with why filled.
 */
int sh_digest_file(const char *path, unsigned flags, uint64_t max_size,
		   uint8_t out[SH_DIGEST_LEN], struct sh_file_id *id, char *why, size_t whylen);

#endif /* SHARNESS_DIGEST_H */
