/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The directory memo: the rule that covers a directory, kept in the
 * directory inode's storage, so that a tree opening or changing names in a
 * directory it has used before is judged without resolving the path again.
 *
 * A memo holds the action of the longest rule key that is a prefix of the
 * directory's path "P/". That is the verdict of every name in it only
 * where no rule key of the policy extends below "P/": user space puts a
 * marker for every directory above a [file] rule into file_dirs, and a
 * directory with a marker is never memoized.
 *
 * A memo only ever allows, and only while everything it was computed from
 * is unchanged: the same policy in the same slot and tag generation (every
 * policy apply bumps it), the same directory dentry, mount and mount
 * namespace, and the kernel's rename and mount sequence counts (rename_lock
 * and mount_lock: every rename, mount, move and unmount on the host bumps
 * them) as they were before the path was resolved and still after it was
 * judged. A memo that is missing or stale costs the path resolution it
 * would have saved, never a verdict. The storage goes with the inode, so a
 * directory freed and reallocated starts without one.
 */
#ifndef SH_BPF_MEMO_H
#define SH_BPF_MEMO_H

#include "verdict.h"

/* Untyped: their addresses, from kallsyms. Where either is missing the
 * memo is off (read_seqs fails), never the programs. */
extern const void rename_lock __ksym __weak;
extern const void mount_lock __ksym __weak;

/* Set by user space at load, from getrandom (0: the memo is off). */
const volatile __u64 memo_key;

/*
 * A memo is one 64-bit word, written and read whole, so no reader sees
 * half of one memo and half of another: the action in the low byte, and
 * above it 56 bits of a hash, keyed with memo_key, of what it is valid
 * for. A reader computes the hash of the present state and compares. A
 * tree cannot read the key nor any memo, so a memo is taken for another
 * state only by chance, one in 2^56.
 */
struct dir_memo {
	__u64 word;
};

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dir_memo);
} dir_memo SEC(".maps");

/* The state a memo is valid for. */
struct memo_state {
	__u64 gen;      /* tag_gen */
	__u64 dir;      /* the directory's dentry */
	__u64 mnt;      /* its struct vfsmount */
	__u64 ns;       /* the task's mount namespace */
	__u32 rseq;     /* rename_lock's sequence count */
	__u32 mseq;     /* mount_lock's */
	__u32 who;      /* slot << 16 | policy */
};

static __always_inline __u64 memo_mix(__u64 h, __u64 x)
{
	h = (h ^ x) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static __always_inline __u64 memo_hash(const struct memo_state *st)
{
	__u64 h = memo_key;

	h = memo_mix(h, st->gen);
	h = memo_mix(h, st->dir);
	h = memo_mix(h, st->mnt);
	h = memo_mix(h, st->ns);
	h = memo_mix(h, (__u64)st->rseq << 32 | st->mseq);
	h = memo_mix(h, st->who);
	return (h ^ (h >> 32)) << 8;
}

/* Both sequence counts; false while either is being written (odd), or
 * where the memo is off. */
static __always_inline bool read_seqs(struct memo_state *st)
{
	__u32 off = bpf_core_field_offset(seqlock_t, seqcount.seqcount.sequence);

	if (!memo_key || !&rename_lock || !&mount_lock)
		return false;
	if (bpf_probe_read_kernel(&st->rseq, sizeof(st->rseq), (void *)&rename_lock + off) ||
	    bpf_probe_read_kernel(&st->mseq, sizeof(st->mseq), (void *)&mount_lock + off))
		return false;
	return !((st->rseq | st->mseq) & 1);
}

/*
 * The directory above (dentry, mnt) in that mount, into st (with the
 * task's namespace and m's policy); false where there is none (a mount's
 * root, a disconnected dentry) or the policy has no directory markers.
 */
static __always_inline bool memo_dir(const struct member *m, struct dentry *dentry,
				     struct vfsmount *mnt, struct memo_state *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	void *dir = BPF_CORE_READ(dentry, d_parent);

	if (!(m->flags & SH_PF_DIRS) || !dir || dir == (void *)dentry ||
	    (void *)BPF_CORE_READ(mnt, mnt_root) == (void *)dentry)
		return false;
	st->dir = (__u64)dir;
	/* mnt may be a BTF pointer, which no arithmetic (the hash) may
	 * touch: its value as a number, copied by the helper. */
	if (bpf_probe_read_kernel(&st->mnt, sizeof(st->mnt), &mnt))
		return false;
	st->ns = (__u64)(void *)BPF_CORE_READ(task, nsproxy, mnt_ns);
	st->who = (__u32)m->slot << 16 | m->policy;
	return true;
}

/*
 * Does the memo of dentry's directory allow this use of the name without
 * a path? dentry is a BTF pointer (its parent's inode holds the memo).
 * hashed: the name must still be in the dcache (an open: see
 * file_resolvable). False: judge it by its path.
 */
static __always_inline bool memo_allows(const struct member *m, struct dentry *dentry,
					struct vfsmount *mnt, bool write, bool hashed)
{
	struct memo_state st = {};
	struct dentry *dir;
	struct dir_memo *d;
	__u64 word;
	__u8 act;

	if (!memo_dir(m, dentry, mnt, &st))
		return false;
	if (hashed && !BPF_CORE_READ(dentry, d_hash.pprev))
		return false;
	/* The same parent as st.dir, read as a BTF pointer for its inode. Were
	 * it another (a rename in between), its memo would be of another
	 * dentry and rename count: not this hash. */
	dir = dentry->d_parent;
	if (!dir)
		return false;
	d = bpf_inode_storage_get(&dir_memo, dir->d_inode, 0, 0);
	if (!d)
		return false;
	word = d->word;
	st.gen = tag_gen;
	if (!word || !read_seqs(&st) || (word & ~0xffull) != memo_hash(&st))
		return false;
	act = word & 0xff;
	if (act == SH_ACT_DENY ||
	    (write && act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST)))
		return false;
	count(SH_CNT_MEMO_HIT);
	return true;
}

/*
 * After a use was judged by its path and allowed: memoize the rule that
 * covers its directory. s->ev.path holds "P/NAME" (len bytes with the
 * NUL) as resolved for (dentry, mnt); before holds the sequence counts and
 * tag generation read before it was resolved (MEMO_BEFORE). Nothing is
 * stored where anything changed since, or a rule lies below "P/".
 */
static __always_inline void memo_store(struct scratch *s, const struct member *m,
				       struct dentry *dentry, struct vfsmount *mnt, long len,
				       const struct memo_state *before)
{
	struct sh_rule_key *k = (void *)s->ev.path - __builtin_offsetof(struct sh_rule_key, path);
	struct memo_state st = {};
	struct dir_memo *d;
	struct dentry *dir;
	__u32 nlen, dlen, *v, act;

	if (len <= 2 || len > SH_EVENT_PATH_MAX || !memo_dir(m, dentry, mnt, &st))
		return;
	nlen = BPF_CORE_READ(dentry, d_name.len);
	if (!nlen || nlen + 2 > (__u32)len)
		return;
	dlen = (__u32)len - 1 - nlen;   /* "P/" */
	if (dlen >= SH_PATH_KEY_MAX || s->ev.path[(dlen - 1) & SH_PATH_MASK] != '/')
		return;
	k->slot = m->slot;
	k->kind = SH_KEY_FILE;
	k->policy = m->policy;
	k->prefixlen = 32 + dlen * 8;
	v = bpf_map_lookup_elem(&file_dirs, k);
	if (v && *v == dlen)
		return; /* a rule below "P/": the names in it differ */
	v = bpf_map_lookup_elem(&rules, k);
	act = v ? *v & 0xff : 0;
	st.gen = tag_gen;
	if (!read_seqs(&st) || st.rseq != before->rseq || st.mseq != before->mseq ||
	    st.gen != before->gen)
		return;
	/* A rename since the path was resolved changed rename_lock's count
	 * (checked above): this is the parent it was resolved through. */
	dir = dentry->d_parent;
	if (!dir)
		return;
	d = bpf_inode_storage_get(&dir_memo, dir->d_inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!d)
		return;
	d->word = memo_hash(&st) | act;
	count(SH_CNT_MEMO_STORE);
}

/* What memo_store compares with, read before a path is resolved. */
static __always_inline void memo_before(struct memo_state *before)
{
	before->gen = tag_gen;
	if (!read_seqs(before))
		before->rseq = 1; /* odd: nothing is stored */
}

#endif
