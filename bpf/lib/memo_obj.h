/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memos kept on the object a use names rather than on its directory: an
 * executable mapping's file (exec.c) and a unix peer socket (unix.c).
 * Keyed to the same state as a directory's memo (memo.h), with their own
 * kind in the hash.
 */
#ifndef SH_BPF_MEMO_OBJ_H
#define SH_BPF_MEMO_OBJ_H

#include "memo.h"

/*
 * The file memo, for executable mappings (mmap_file, file_mprotect: every
 * library a process loads): a mapping judged by the file's own path and
 * allowed is kept in the file inode's storage (the map dir_memo: a
 * directory's entry holds the memo of the names in it, a file's its own),
 * keyed to the same state with the file's dentry in the directory's place,
 * and its own kind in the hash. It holds the verdict of that one name, so
 * no directory markers are needed; both the maker and the user name by
 * the dentry walk, so any root will do. As for a directory's memo: only
 * allowing, only for the state it was made in; a name unhashed since
 * (unlinked, replaced) is judged by path. An allow pinned by digest keeps
 * its pin in the memo (in place of a directory's marker id, hashed into
 * the word): the memo says which rule the name meets, never that the file
 * is still what was pinned, which the caller asks of the inode at every
 * mapping (*pin), and counts the hit where the memo decides.
 */
#define MEMO_KIND_EXEC_MAP (1u << 24)   /* in memo_state.who */

static __always_inline bool exec_memo_allows(const struct member *m, struct dentry *dentry,
					     struct vfsmount *mnt, struct memo_state *st,
					     __u32 *pin)
{
	struct dir_memo *d;
	__u32 marks;
	__u64 word, renames;
	__u8 act;

	st->ok = 0;
	if (!memo_key)
		return false;
	d = bpf_inode_storage_get(&memos, dentry->d_inode, 0, 0);
	word = d ? d->word : 0;
	marks = d ? d->marks : 0;
	if (!memo_state(m, dentry, mnt, st) || !read_seqs(st, &renames))
		return false;
	st->who |= MEMO_KIND_EXEC_MAP;
	st->gen = m->gen;       /* in place of the root: not needed here */
	st->epoch = memo_epoch();
	if (!dentry->d_hash.pprev)
		return false;
	if (!word || (word & ~0xffull) != memo_hash(st, marks, renames)) {
		st->ok = seqs_for_store(st);
		return false;
	}
	act = word & MEMO_ACT;
	if (act == SH_ACT_DENY ||
	    (act != SH_ACT_ALLOW && act != SH_ACT_LIB && (m->flags & SH_PF_EXEC_ALLOWLIST)))
		return false;
	*pin = act == SH_ACT_ALLOW ? marks : 0;
	return true;
}

/* After a mapping of dentry was judged by its path and allowed (act; pin:
 * the allow's pin, 0 for none). */
static __always_inline void exec_memo_store(const struct scratch *s, const struct member *m,
					    struct dentry *dentry, __u32 act, __u32 pin,
					    const struct memo_state *st)
{
	__u64 renames = memo_renames(st);
	struct dir_memo *d;

	/* The name is where it was when st was read (memo_same_place). */
	if (!memo_unchanged(m, st, dentry, st->dir_up, st->dir_name))
		return;
	d = bpf_inode_storage_get(&memos, dentry->d_inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!d)
		return;
	d->marks = pin;
	d->word = memo_hash(st, pin, renames) | (act & MEMO_ACT);
	count(SH_CNT_MEMO_STORE);
}

/*
 * The unix peer memo: a connect or send to a socket file judged by its
 * path (as its binder named it, in the binder's mount namespace) and
 * allowed is kept in the peer socket's own storage. A socket's file is
 * fixed at bind; its path changes only with a rename or a mount change,
 * which the counts in the hash catch. Keyed as a file's memo, with the
 * socket file's dentry, parent and name, the binder's mount, and its own
 * kind; no namespace or root (the path does not depend on the caller's).
 */
#define MEMO_KIND_UNIX (2u << 24)       /* in memo_state.who */

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} unix_memo SEC(".maps");

/* dentry and mnt: the peer's bound path, read (numbers). */
static __always_inline bool unix_memo_allows(const struct member *m, struct sock *peer,
					     struct dentry *dentry, struct vfsmount *mnt,
					     struct memo_state *st)
{
	__u64 *word, renames;
	__u8 act;

	st->ok = 0;
	if (!memo_key || !dentry)
		return false;
	word = bpf_sk_storage_get(&unix_memo, peer, 0, 0);
	/* The socket file, its parent and the mount, as memo_state does:
	 * stored as pointers, copied onto themselves to be numbers; its
	 * name, and whether it is still hashed, loaded through the BTF
	 * pointer. */
	*(void **)&st->dir = dentry;
	*(void **)&st->dir_up = dentry->d_parent;
	*(void **)&st->mnt = mnt;
	st->ns = 0;
	if (bpf_probe_read_kernel(&st->dir, 3 * sizeof(__u64), &st->dir))
		return false;
	st->dir_name = (__u64)dentry->d_name.len << 32 | dentry->d_name.hash;
	if (!dentry->d_hash.pprev || !read_seqs(st, &renames))
		return false;
	st->who = (__u32)m->slot << 16 | m->policy | MEMO_KIND_UNIX;
	st->gen = m->gen;
	st->epoch = memo_epoch();
	if (!word || (*word & ~0xffull) != memo_hash(st, 0, renames)) {
		st->ok = seqs_for_store(st);
		return false;
	}
	act = *word & MEMO_ACT;
	if (act == SH_ACT_DENY || ((m->flags & SH_PF_LEARN_ALL) && act != SH_ACT_ALLOW))
		return false;
	count(SH_CNT_MEMO_HIT);
	return true;
}

/* After a use of peer (its socket file: dentry) was judged by its path
 * and allowed (act). */
static __always_inline void unix_memo_store(const struct scratch *s, const struct member *m,
					    struct sock *peer, struct dentry *dentry, __u32 act,
					    const struct memo_state *st)
{
	__u64 *word, renames = memo_renames(st);

	/* The socket file is where it was when st was read (memo_same_place). */
	if (!memo_unchanged(m, st, dentry, st->dir_up, st->dir_name))
		return;
	word = bpf_sk_storage_get(&unix_memo, peer, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!word)
		return;
	*word = memo_hash(st, 0, renames) | (act & MEMO_ACT);
	count(SH_CNT_MEMO_STORE);
}

#endif
