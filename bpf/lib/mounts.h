/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mounts of a dentry's file system in the task's mount namespace, for
 * the hooks that receive a dentry and no mount (attr.c) and for a rename
 * judged through every name its object has (file.c): scanned from the
 * super block's mount list, and the one mount of the usual case
 * remembered.
 */
#ifndef SH_BPF_MOUNTS_H
#define SH_BPF_MOUNTS_H

#include "maps.h"
#include "memo.h"

/* Mounts of one file system examined to name a dentry (xattr, times,
 * renames): at most SCAN entries of its mount list, of which at most MAX
 * (a power of two) in the task's namespace. */
#define SH_SB_MOUNTS_SCAN 64

#define SH_SB_MOUNTS_MAX 8

/* A rename's scan reads the whole list (every namespace's mounts of the
 * file system are on it), up to this many entries. */
#define SH_SB_MOUNTS_ALL 4096

/*
 * The one mount of a file system in a mount namespace, remembered (the
 * usual case, which the memo serves): a slot per (super block, namespace)
 * hash holds the mount and a keyed hash of the three, of mount_lock's
 * count and of the memo's epoch (the count is 32 bits and wraps). The
 * mount list and every mount's namespace change only under mount_lock,
 * which bumps the count; a slot half written matches nothing.
 */
#define SH_SB_CACHE 256

struct sb_mount {
	__u64 check;
	__u64 mnt;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_SB_CACHE);
	__type(key, __u32);
	__type(value, struct sb_mount);
} sb_mount SEC(".maps");

static __always_inline __u64 sb_mount_check(__u64 sb, __u64 ns, __u32 mseq, __u64 mnt)
{
	__u64 h = memo_mix(memo_key ^ 0x5b, sb);

	h = memo_mix(h, ns);
	h = memo_mix(h, (__u64)mseq << 32 | memo_epoch());
	return memo_mix(h, mnt) | 1; /* never 0, a slot's start value */
}

/* One entry of a super block's mount list: a mount in the task's
 * namespace becomes a candidate. Raw offsets, as walk_step. */
struct mount_scan {
	void *head;
	void *pos;
	void *ns;
	__u32 slot;             /* the scratch's index (scratch.self) */
	__u16 off_instance;     /* struct mount: mnt_instance */
	__u16 off_mnt_ns;       /* struct mount: mnt_ns */
};

static long mount_scan_step(__u32 i, void *data)
{
	struct mount_scan *c = data;
	struct scratch *s = scratch_at(c->slot);
	void *mnt;

	if (!s || !c->pos || c->pos == c->head)
		return 1;
	mnt = c->pos - c->off_instance;
	if (read_ptr(mnt, c->off_mnt_ns) == c->ns) {
		s->cands[s->ncands & (SH_SB_MOUNTS_MAX - 1)] = (__u64)mnt;
		if (++s->ncands >= SH_SB_MOUNTS_MAX)
			return 1;
	}
	c->pos = read_ptr(c->pos, 0); /* list_head.next */
	return 0;
}

/* The slot of sb_mount for dentry's file system in the task's namespace. */
static __always_inline struct sb_mount *sb_mount_slot(struct dentry *dentry, __u64 *sb, __u64 *ns)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct { void *sb, *ns; } p = { dentry->d_sb, task->nsproxy->mnt_ns };
	__u32 i;

	/* Loaded directly, then made numbers by one copy onto themselves
	 * (a BTF pointer takes no arithmetic, the hash's). */
	if (bpf_probe_read_kernel(&p, sizeof(p), &p) || !p.sb || !p.ns)
		return NULL;    /* no mount is named: refused (scan_mounts finds none) */
	*sb = (__u64)p.sb;
	*ns = (__u64)p.ns;
	i = memo_mix(memo_key ^ 0x5c, *sb ^ *ns) & (SH_SB_CACHE - 1);
	return bpf_map_lookup_elem(&sb_mount, &i);
}

/* The one mount of dentry's file system in the task's namespace, where
 * sb_mount remembers it for the present mount_lock count; 0 otherwise
 * (scan_mounts finds the mounts). No scratch is needed for it. */
static __always_inline __u64 remembered_mount(struct dentry *dentry)
{
	__u32 mseq = seq_of(&mount_lock);
	struct sb_mount *c;
	__u64 sb = 0, ns = 0, mnt;

	if (!memo_key || (mseq & 1))
		return 0;       /* the memo is off, or a mount change under way */
	c = sb_mount_slot(dentry, &sb, &ns);
	if (!c)
		return 0;
	mnt = *(volatile __u64 *)&c->mnt;     /* read once: the check covers it */
	return c->check == sb_mount_check(sb, ns, mseq, mnt) ? mnt : 0;
}

/* The mounts of dentry's file system in the task's namespace (others',
 * private /tmp and the like, are skipped, not counted) into s->cands, by
 * a scan of at most `limit` entries of its mount list. *whole (if asked): the list
 * was read to its end, with no mount change meanwhile, and held at most
 * SH_SB_MOUNTS_MAX of them; only then is one alone remembered (sb_mount). */
static __always_inline __u32 scan_mounts(struct scratch *s, struct dentry *dentry, __u32 limit,
					 bool *whole)
{
	struct mount_scan scan = {};
	__u32 mseq = seq_of(&mount_lock);
	struct sb_mount *c;
	__u64 sb = 0, ns = 0, mnt;
	bool all;

	c = sb_mount_slot(dentry, &sb, &ns);
	scan.ns = (void *)ns;
	scan.slot = s->self;
	scan.head = (void *)sb + bpf_core_field_offset(struct super_block, s_mounts);
	scan.pos = sb ? read_ptr(scan.head, 0) : 0; /* list_head.next */
	scan.off_instance = bpf_core_field_offset(struct mount, mnt_instance);
	scan.off_mnt_ns = bpf_core_field_offset(struct mount, mnt_ns);
	s->ncands = 0;
	bpf_loop(limit, mount_scan_step, &scan, 0);
	all = sb && scan.pos == scan.head && !(mseq & 1) && seq_of(&mount_lock) == mseq;
	if (whole)
		*whole = all;
	if (c && memo_key && all && s->ncands == 1) {
		mnt = s->cands[0];
		c->mnt = mnt;
		c->check = sb_mount_check(sb, ns, mseq, mnt);
	}
	return s->ncands;
}

#endif
