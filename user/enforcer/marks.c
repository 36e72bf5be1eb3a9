// SPDX-License-Identifier: GPL-2.0
/*
 * What the daemon writes of itself into the programs' state: its own
 * process, socket and namespace, the inodes it protects (with their
 * filter), and what it has reported of the ring's losses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer.h"
#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

void sh_enforcer_set_daemon(struct sh_enforcer *e, uint32_t tgid)
{
	e->skel->bss->daemon_tgid = tgid;
}

void sh_enforcer_set_mmap_min(struct sh_enforcer *e, uint64_t addr)
{
	e->skel->bss->mmap_min_addr = addr;
}

void sh_enforcer_set_host_ipc_ns(struct sh_enforcer *e, uint32_t inum)
{
	e->skel->bss->host_ipc_ns = inum;
}

void sh_enforcer_set_control_socket(struct sh_enforcer *e, uint64_t ino, uint32_t kdev)
{
	e->skel->bss->ctl_dev = kdev;
	__atomic_store_n(&e->skel->bss->ctl_ino, ino, __ATOMIC_SEQ_CST);
}

/* Sets k's bit in prot_filter (sharness.h), before k is marked. */
static int filter_add(int fd, const struct sh_inode_key *k)
{
	__u64 h = sh_prot_hash(k->ino, k->dev), v = 0;
	__u32 w = sh_prot_word(h);

	if (bpf_map_lookup_elem(fd, &w, &v))
		return -errno;
	if (v & (1ull << (h & 63)))
		return 0;
	v |= 1ull << (h & 63);
	return bpf_map_update_elem(fd, &w, &v, BPF_ANY) ? -errno : 0;
}

/*
 * After the marks changed: every word of prot_filter becomes exactly the
 * bits of the inodes marked in protected_inodes now (read back from the
 * map: a mark whose removal failed keeps its bit), then the filter is
 * armed. A bit of a marked inode is in a word before and after its
 * write, so it is never clear. On a failure the filter is disarmed:
 * every check looks the inode up.
 */
static int filter_rebuild(int fd, int marks_fd)
{
	__u64 *want = calloc(SH_PROT_FILTER_WORDS + 1, sizeof(*want)), have, armed = SH_PROT_ARMED;
	struct sh_inode_key k, next;
	void *prev = NULL;
	__u32 zero = 0;
	int err = 0;

	if (!want)
		err = -ENOMEM;
	while (!err && bpf_map_get_next_key(marks_fd, prev, &next) == 0) {
		__u64 h = sh_prot_hash(next.ino, next.dev);

		want[sh_prot_word(h)] |= 1ull << (h & 63);
		k = next;
		prev = &k;
	}
	if (!err && errno != ENOENT)
		err = -errno;   /* the walk ended on an error, not at its end */
	for (__u32 w = 1; !err && w <= SH_PROT_FILTER_WORDS; w++)
		if (bpf_map_lookup_elem(fd, &w, &have) ||
		    (have != want[w] && bpf_map_update_elem(fd, &w, &want[w], BPF_ANY)))
			err = -errno;
	if (!err && bpf_map_update_elem(fd, &zero, &armed, BPF_ANY))
		err = -errno;
	free(want);
	if (err) {
		armed = 0;
		bpf_map_update_elem(fd, &zero, &armed, BPF_ANY);
	}
	return err;
}

/*
 * The marks become exactly own[] (a file named twice gets both marks).
 * Every file is found first; then the marks of files no longer ours go,
 * so that a full map has room for the new ones (a file of both sets is
 * never unmarked in between); then each mark is written, its filter bit
 * first. Where a write fails, the marks that went are put back.
 */
int sh_enforcer_protect_set(struct sh_enforcer *e, const struct sh_protected *own, size_t n,
			    const char **failed)
{
	int ffd = bpf_map__fd(e->skel->maps.prot_filter);
	int fd = bpf_map__fd(e->skel->maps.protected_inodes);
	struct sh_inode_key keys[SH_MAX_PROTECTED], gone[SH_MAX_PROTECTED], k, next;
	uint32_t flags[SH_MAX_PROTECTED], gone_flags[SH_MAX_PROTECTED];
	const char *names[SH_MAX_PROTECTED];
	struct sh_mnt_dev mounts = { 0 };   /* most of them lie on one */
	size_t nk = 0, ngone = 0;
	void *prev = NULL;
	int err = 0;

	*failed = NULL;
	if (n > SH_MAX_PROTECTED)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		uint64_t ino = own[i].ino;
		uint32_t dev = own[i].dev;
		size_t j;

		if (!own[i].keyed)
			err = sh_kernel_ino_at(AT_FDCWD, own[i].path, 0, &ino, &dev, &mounts);
		if (err) {
			*failed = own[i].path;
			return err;
		}
		memset(&k, 0, sizeof(k));
		k.ino = ino;
		k.dev = dev;
		for (j = 0; j < nk; j++)
			if (keys[j].ino == k.ino && keys[j].dev == k.dev)
				break;
		if (j == nk) {
			keys[nk] = k;
			names[nk] = own[i].path;
			flags[nk++] = 0;
		}
		flags[j] |= own[i].flags;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		bool keep = false;

		for (size_t j = 0; j < nk && !keep; j++)
			keep = keys[j].ino == next.ino && keys[j].dev == next.dev;
		if (!keep && ngone < SH_MAX_PROTECTED &&
		    bpf_map_lookup_elem(fd, &next, &gone_flags[ngone]) == 0 &&
		    bpf_map_delete_elem(fd, &next) == 0) {
			gone[ngone++] = next;
			prev = NULL;   /* the walk restarts after a deletion */
			continue;
		}
		k = next;
		prev = &k;
	}
	for (size_t j = 0; j < nk && !err; j++) {
		err = filter_add(ffd, &keys[j]);
		if (!err && bpf_map_update_elem(fd, &keys[j], &flags[j], BPF_ANY))
			err = -errno;
		if (err)
			*failed = names[j];
	}
	if (err) {
		__u64 off = 0;
		__u32 zero = 0;

		/* Disarmed (every check looks up) before the old marks come
		 * back, as their filter bits may be gone. */
		bpf_map_update_elem(ffd, &zero, &off, BPF_ANY);
		for (size_t j = 0; j < ngone; j++)
			bpf_map_update_elem(fd, &gone[j], &gone_flags[j], BPF_NOEXIST);
		return err;
	}
	__atomic_store_n(&e->skel->bss->nprotected, (uint32_t)nk, __ATOMIC_SEQ_CST);
	return filter_rebuild(ffd, fd);
}

int sh_enforcer_task_origin(struct sh_enforcer *e, int pidfd, uint64_t *origin)
{
	struct sh_task t;

	*origin = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.task_marks), &pidfd, &t))
		return errno == ENOENT ? 0 : -errno;
	/* A pending task (held from its next exec) and a foreign one (a
	 * member moved it in) count as their tree's. */
	*origin = t.origin & ~SH_TASK_MARKS;
	return 0;
}

uint64_t sh_enforcer_dropped_reported(struct sh_enforcer *e)
{
	return e->skel->bss->dropped_reported;
}

void sh_enforcer_set_dropped_reported(struct sh_enforcer *e, uint64_t v)
{
	e->skel->bss->dropped_reported = v;
}
