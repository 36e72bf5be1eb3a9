/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The directory memo: the rule that covers a directory, kept in the
 * directory inode's storage, so that a tree opening or changing names in a
 * directory it has used before is judged without resolving the path again.
 *
 * A memo holds the action of the longest rule key that is a prefix of the
 * directory's path "P/". That is the verdict of every name in it whose
 * path no rule key of the policy extends: user space puts a marker for
 * every directory above a [file] rule into dir_marks, and the names in it
 * that lead to those rules into dir_names. A memo of a marked directory
 * carries its marker's id and serves only names not listed under it; a
 * marker without an id (its names could not be listed) is never memoized.
 *
 * A memo only ever allows, and only while everything it was computed from
 * is unchanged: the same policy in the same slot and tag generation (every
 * policy apply bumps it), the same directory dentry (with its parent and
 * name), mount and mount namespace, the host's count of directory moves
 * (memo_renames) and mount_lock's sequence count (every mount, move and
 * unmount bumps it), and the same epoch of 2^10 jiffies (the counts are 32
 * bits and wrap). A memo is made only where rename_lock's count (every
 * rename on the host) did not change from before the path was resolved to
 * after it was judged. It serves only tasks whose root is
 * their mount namespace's. A memo that is missing or stale costs the path
 * resolution it would have saved, never a verdict. The storage goes with
 * the inode, so a directory freed and reallocated starts without one.
 *
 * The counts are read with plain loads around the resolution, as the
 * kernel's own readers do with a barrier between: on x86-64 (the only
 * target built) loads are not reordered with each other.
 */
#ifndef SH_BPF_MEMO_H
#define SH_BPF_MEMO_H

#include "verdict.h"

/* Untyped: their addresses, from kallsyms. Where either is missing the
 * memo is off (read_seqs or seqs_for_store fails: no memo is made), never
 * the programs. */
extern const void rename_lock __ksym __weak;
extern const void mount_lock __ksym __weak;

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
	/* The marker id of a marked directory's memo, 0 otherwise. Stored
	 * apart from the word, so hashed into it: a word read with another
	 * memo's id matches nothing. */
	__u32 marks;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dir_memo);
} memos SEC(".maps");

/*
 * A memo lasts at most one epoch of 2^10 jiffies (4.1 s at Debian's 250 Hz;
 * 1 s at 1000 Hz, 10 s at 100 Hz): the 32-bit sequence counts wrap (2^31
 * writer sections bring mount_lock's back), and not even a host user
 * bumping it on purpose (lazily unmounted mounts, some 10^7 a second)
 * comes near that in one epoch. Jiffies, not the monotonic clock: reading them is a load, where a
 * clock read may reach a device (an HPET, where the TSC is unstable).
 */
#define MEMO_EPOCH_SHIFT 10

static __always_inline __u64 memo_epoch(void)
{
	return bpf_jiffies64() >> MEMO_EPOCH_SHIFT;
}

/* The state a memo is valid for. (Its size counts: the walk's callback
 * frames and the path hooks' own fill the verifier's 512 bytes of stack.) */
struct memo_state {
	/* Pointers, made numbers in place by one helper call (memo_dir): a
	 * BTF pointer takes no arithmetic, the hash's. */
	__u64 dir;      /* the directory's dentry */
	__u64 dir_up;   /* its parent dentry */
	__u64 mnt;      /* its struct vfsmount */
	__u64 ns;       /* the task's mount namespace */
	/* The task's root, from memo_dir to root_is_top (not hashed), then
	 * the generation and epoch, which are. */
	union {
		__u64 root_mnt;
		__u64 gen;      /* tag_gen */
	};
	union {
		__u64 root_dentry;
		__u64 epoch;
	};
	__u64 dir_name; /* the directory's name's hash and length */
	__u32 rseq;     /* rename_lock's sequence count */
	__u32 mseq;     /* mount_lock's */
	__u32 who;      /* slot << 16 | policy */
	__u8 ok;        /* not hashed: memo_store may follow (memo_allows) */
	__u8 walk;      /* not hashed: this hook names by the dentry walk */
};

_Static_assert(__builtin_offsetof(struct memo_state, root_dentry) -
	       __builtin_offsetof(struct memo_state, dir) == 5 * sizeof(__u64),
	       "memo_dir copies the six pointers as one");

/*
 * The host's directory moves, counted by sh_dir_move (rename.c) at the
 * kernel's __d_move, inside rename_lock's write section (SH_MOVES_COUNT),
 * live (SH_MOVES_STATE, with a number new at each attach) once the daemon
 * has attached every program, the counter with them, and until it
 * detaches them. A directory's path
 * changes only when it or a directory above it moves (its own parent and
 * name are in the memo's hash) or a mount changes (mount_lock's count):
 * a rename of a file changes no other name's path. So a memo keyed to
 * this count holds while the host renames files (editors, package
 * managers, log rotation), where one keyed to rename_lock's count went
 * stale at every rename on the host.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} dir_moves SEC(".maps");

/*
 * The count of directory moves, where it is live: into *renames (with the
 * attach's number: moves made while detached went uncounted; the top bit
 * keeps it apart from rename_lock's count). A move counts itself at its
 * start, inside rename_lock's write section, before any name moves.
 */
static __always_inline bool moves_counted(__u64 *renames)
{
	__u32 k = SH_MOVES_STATE;
	__u64 *v = bpf_map_lookup_elem(&dir_moves, &k), state;

	if (!v || (__u32)(state = *v) != SH_MOVES_LIVE)
		return false;
	k = SH_MOVES_COUNT;
	v = bpf_map_lookup_elem(&dir_moves, &k);
	if (!v)
		return false;
	*renames = memo_mix(state, *v) | 1ull << 63;
	return true;
}

/*
 * What a memo is keyed to of the host's renames: the count of directory
 * moves where it is live, else rename_lock's count (st->rseq, read even by
 * read_seqs or seqs_for_store). Read after rename_lock's count: a move
 * ends its write section after counting, so a count read after the
 * section's end includes it.
 */
static __always_inline __u64 memo_renames(const struct memo_state *st)
{
	__u64 renames;

	return moves_counted(&renames) ? renames : st->rseq;
}

static __always_inline __u64 memo_hash(const struct memo_state *st, __u32 marks, __u64 renames)
{
	__u64 h = memo_key;

	h = memo_mix(h, st->gen);
	h = memo_mix(h, st->dir);
	h = memo_mix(h, st->dir_up);
	h = memo_mix(h, st->dir_name);
	h = memo_mix(h, st->mnt);
	h = memo_mix(h, st->ns);
	h = memo_mix(h, st->epoch);
	h = memo_mix(h, renames);
	h = memo_mix(h, st->mseq);
	h = memo_mix(h, (__u64)marks << 32 | st->who);
	return (h ^ (h >> 32)) << 8;
}

/* A sequence count now (1, odd: being written, where unreadable). */
static __always_inline __u32 seq_of(const void *lock)
{
	__u32 off = bpf_core_field_offset(seqlock_t, seqcount.seqcount.sequence), seq = 1;

	if (lock)
		bpf_probe_read_kernel(&seq, sizeof(seq), lock + off);
	return seq;
}

/* rename_lock's count not read (odd: no count read at rest is). */
#define SEQ_UNREAD 1

/*
 * The counts a memo's hash takes, for a memo to be checked: mount_lock's
 * count, and what it is keyed to of renames (*renames). Where the count of
 * directory moves is live, rename_lock's is left unread (SEQ_UNREAD): a
 * memo found with the count it was made with is of a state no directory
 * has moved from since (a move in progress that has not counted itself
 * has moved nothing yet), and only a memo to be made needs rename_lock's
 * count (seqs_for_store). False while a count is being written (odd), or
 * where the memo is off.
 */
static __always_inline bool read_seqs(struct memo_state *st, __u64 *renames)
{
	if (!memo_key)
		return false;
	st->mseq = seq_of(&mount_lock);
	if (moves_counted(renames)) {
		st->rseq = SEQ_UNREAD;
		return !(st->mseq & 1);
	}
	st->rseq = seq_of(&rename_lock);
	*renames = st->rseq;
	return !((st->rseq | st->mseq) & 1);
}

/*
 * Before a use the memo did not allow is judged by its path: rename_lock's
 * count, read now (before the path is resolved) where read_seqs left it
 * unread, for memo_unchanged to compare once the use is judged. True where
 * a memo may then be made.
 */
static __always_inline bool seqs_for_store(struct memo_state *st)
{
	if (st->rseq == SEQ_UNREAD)
		st->rseq = seq_of(&rename_lock);
	return !(st->rseq & 1);
}

/*
 * Is obj still where st was read, before the path was resolved: its parent
 * (a number, read now) is `parent`, and, where `name` is not 0, its name
 * (length and hash) is that? Asked before the counts are read again. A name moved between st's reading and rename_lock's count read for
 * the store (seqs_for_store) is in no count a memo compares (a file's
 * rename moves no directory), and the path resolved since is of its new
 * place: a memo of it made under the old place's state would hold there
 * once the name is moved back.
 */
static __always_inline bool memo_same_place(struct dentry *obj, __u64 parent, __u64 name)
{
	__u64 up = 0;

	if (bpf_probe_read_kernel(&up, sizeof(up), &obj->d_parent) || up != parent)
		return false;
	return !name || ((__u64)obj->d_name.len << 32 | obj->d_name.hash) == name;
}

/*
 * Before a memo is stored: nothing changed since st was read, before the
 * path was resolved (not the place of obj, the name judged: memo_same_place,
 * nor the counts, the epoch, nor the policy set since this hook found its
 * policy).
 */
static __always_inline bool memo_unchanged(const struct member *m, const struct memo_state *st,
					   struct dentry *obj, __u64 parent, __u64 name)
{
	return st->ok && memo_same_place(obj, parent, name) && seq_of(&rename_lock) == st->rseq &&
	       seq_of(&mount_lock) == st->mseq && memo_epoch() == st->epoch && tag_gen == m->gen;
}

/*
 * The last root found to be the top of its mount namespace: a keyed hash
 * of the root's mount and dentry and of mount_lock's count, one word (read
 * and written whole). A root is the top for as long as no mount changes,
 * and every mount change bumps that count.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} top_root SEC(".maps");

static __always_inline __u64 top_root_hash(const struct memo_state *st)
{
	__u64 h = memo_mix(memo_key ^ 0x7f, st->root_mnt);

	h = memo_mix(h, st->root_dentry);
	return memo_mix(h, st->mseq) | 1; /* never 0, the word's start value */
}

/*
 * Is the task's root (st->root_mnt and root_dentry, read by memo_dir) the
 * top of its mount namespace (see memo_dir)? The counts in st must be read
 * already: the answer is remembered for them.
 */
static __always_inline bool root_is_top(const struct memo_state *st)
{
	struct vfsmount *rmnt = (void *)st->root_mnt;
	__u64 h = top_root_hash(st), *seen;
	struct mount *top, *up;
	__u32 zero = 0;

	seen = bpf_map_lookup_elem(&top_root, &zero);
	if (!seen)
		return false;
	if (*seen == h)
		return true;
	if ((void *)st->root_dentry != BPF_CORE_READ(rmnt, mnt_root))
		return false;
	top = (void *)rmnt - bpf_core_field_offset(struct mount, mnt);
	up = BPF_CORE_READ(top, mnt_parent);
	if (up != top &&
	    (BPF_CORE_READ(up, mnt_parent) != up ||
	     BPF_CORE_READ(top, mnt_mountpoint) != BPF_CORE_READ(up, mnt.mnt_root)))
		return false;
	/* Remembered only for a count no mount change overlapped. */
	if (seq_of(&mount_lock) == st->mseq)
		*seen = h;
	return true;
}

/*
 * The state of the name obj (a BTF pointer) through mnt into st: obj, its
 * parent and name, the mount, the task's namespace and root, the policy.
 */
static __always_inline bool memo_state(const struct member *m, struct dentry *obj,
				       struct vfsmount *mnt, struct memo_state *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fs_struct *fs = task->fs;

	if (!fs)
		return false;
	/* Stored as pointers (the verifier keeps their type on the stack)... */
	*(void **)&st->dir = obj;
	/* Its own parent and name: a file system that changes names without
	 * a rename here (a network file system's server) gets a new dentry,
	 * which could land at the old address. */
	*(void **)&st->dir_up = obj->d_parent;
	*(void **)&st->mnt = mnt;
	*(void **)&st->ns = task->nsproxy->mnt_ns;
	*(void **)&st->root_mnt = fs->root.mnt;
	*(void **)&st->root_dentry = fs->root.dentry;
	/* ...and copied onto themselves, which makes them numbers. */
	if (bpf_probe_read_kernel(&st->dir, 6 * sizeof(__u64), &st->dir))
		return false;
	/* Field by field: 6.1's verifier takes the union's first member. */
	st->dir_name = (__u64)obj->d_name.len << 32 | obj->d_name.hash;
	st->who = (__u32)m->slot << 16 | m->policy;
	return true;
}

/*
 * The directory above (dentry, mnt) in that mount, into st (with the
 * task's namespace and m's policy); false where there is none (a mount's
 * root, a disconnected dentry) or the policy has no directory markers.
 */
static __always_inline bool memo_dir(const struct member *m, struct dentry *dentry,
				     struct vfsmount *mnt, void *mnt_root, struct memo_state *st)
{
	struct dentry *dir = dentry->d_parent;

	if (!(m->flags & SH_PF_MARKS) || !dir || dir == dentry || mnt_root == (void *)dentry)
		return false;
	return memo_state(m, dir, mnt, st);
}

/*
 * A memo that says: judge every name here by its path (a rule lies below
 * the directory), so no hook tries to make one again. It only ever sends
 * a use to its path, so it is checked cheaply, before the rest: keyed to
 * the policy, generation and epoch alone (a directory renamed to where no
 * rule lies below it is memoized again after the epoch).
 */
#define MEMO_NEVER 0xff

/* In a memo's action byte: made by a hook that names by the dentry walk.
 * Every name in the directory is then one walk step deeper, so within the
 * walk's reach as that name was. */
#define MEMO_WALKED 0x80

/* In a memo's action byte: the directory is marked; names listed under
 * its id (dir_memo.marks) are judged by path. */
#define MEMO_MARKED 0x40
#define MEMO_ACT 0x3f

/*
 * Is dentry's name listed under marker id in m's policy (it leads to a
 * rule below its directory), or can it not be told? st is done with: its
 * first bytes become the key.
 */
static __always_inline bool memo_name_listed(const struct member *m, struct dentry *dentry,
					     __u32 id, struct memo_state *st)
{
	struct sh_name_key *k = (void *)st;
	__u64 name = (__u64)dentry->d_name.name, head = 0, tail = 0;
	__u32 len = dentry->d_name.len;

	_Static_assert(sizeof(*k) <= sizeof(*st), "the key fits in the state");
	if (!len || len > 255 || bpf_probe_read_kernel(&head, sizeof(head), (void *)name))
		return true;
	/* Inline names lie in a buffer of more than 8 bytes; longer ones
	 * are read within. */
	if (len < 8)
		head &= (1ull << (len * 8)) - 1;
	else if (len > 8 && bpf_probe_read_kernel(&tail, sizeof(tail), (void *)(name + len - 8)))
		return true;
	k->id = id;
	k->slot = m->slot;
	k->len = len;
	k->policy = m->policy;
	k->head = head;
	k->tail = tail;
	return bpf_map_lookup_elem(&dir_names, k) != NULL;
}

static __always_inline __u64 memo_never(const struct member *m)
{
	__u64 h = memo_mix(memo_key ^ 0xff, m->gen);

	h = memo_mix(h, (__u32)m->slot << 16 | m->policy);
	h = memo_mix(h, memo_epoch());
	return (h ^ (h >> 32)) << 8 | MEMO_NEVER;
}

/*
 * Does the memo of dentry's directory allow this use of the name without
 * a path, through the mount mnt (whose root is mnt_root)? dentry is a BTF
 * pointer (its parent's inode holds the memo); mnt may be a number.
 * hashed: the name must still be in the dcache (an open: see
 * file_resolvable). walk: the hook names by the dentry walk, which refuses
 * paths deeper than it goes; bpf_d_path has no such limit, so a memo made
 * through it (MEMO_WALKED clear) does not serve such a hook. False: judge
 * it by its path; then st->ok says whether memo_store may memoize the
 * directory afterwards, st holding the state read now, before the path is
 * resolved.
 */
static __always_inline bool memo_allows_at(const struct member *m, struct dentry *dentry,
					   struct vfsmount *mnt, void *mnt_root, bool write,
					   bool hashed, bool walk, struct memo_state *st)
{
	struct dentry *dir;
	struct dir_memo *d;
	__u64 word = 0, renames;
	__u32 marks = 0;
	__u8 act;

	st->ok = 0;
	st->walk = walk;
	if (!(m->flags & SH_PF_MARKS) || !memo_key)
		return false;
	/* The parent, as a BTF pointer for its inode. memo_dir reads it
	 * again as a number: were it another by then (a rename in between),
	 * this memo would be of another dentry and rename count: not that
	 * hash. */
	dir = dentry->d_parent;
	if (!dir)
		return false;
	/* Names in a casefold directory may be spelled otherwise than the
	 * names a marked memo lists (chattr +F on a directory emptied since
	 * its memo was made): judged by path (fold_refused). */
	if (dir->d_inode->i_flags & S_CASEFOLD)
		return false;
	d = bpf_inode_storage_get(&memos, dir->d_inode, 0, 0);
	if (d) {
		word = d->word;
		marks = d->marks;
		if ((word & 0xff) == MEMO_NEVER && word == memo_never(m))
			return false;
	}
	if (!memo_dir(m, dentry, mnt, mnt_root, st) || !read_seqs(st, &renames))
		return false;
	/*
	 * Only for a task whose root is the top of its namespace: the root of
	 * the namespace's first mount, or of a mount on that mount's root (a
	 * system booted through an initramfs). There bpf_d_path (relative to
	 * the task's root: file_open) and walk_path (from the namespace's
	 * root: the path hooks) name a directory alike, so a memo made by one
	 * may serve the other. A chrooted task is judged by path.
	 */
	if (!root_is_top(st))
		return false;
	st->gen = m->gen;       /* in place of the root, now judged */
	st->epoch = memo_epoch();
	if (hashed && !dentry->d_hash.pprev)
		return false;
	if (!word || (word & ~0xffull) != memo_hash(st, marks, renames) ||
	    (walk && !(word & MEMO_WALKED))) {
		st->ok = seqs_for_store(st);
		return false;
	}
	/* A memo of this very state: it decides, for a name no rule lies
	 * below. */
	act = word & MEMO_ACT;
	if (act == SH_ACT_DENY ||
	    (write && act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST)))
		return false;
	if ((word & MEMO_MARKED) && memo_name_listed(m, dentry, marks, st))
		return false;
	count(SH_CNT_MEMO_HIT);
	return true;
}

/* mnt a BTF pointer (the path and file hooks). */
#define memo_allows(m, dentry, mnt, write, hashed, walk, st) \
	memo_allows_at(m, dentry, mnt, (mnt)->mnt_root, write, hashed, walk, st)

/*
 * After a use was judged by its path and allowed: memoize the rule that
 * covers its directory (or that none may be). s->ev.path holds "P/NAME"
 * (len bytes with the NUL) as resolved for dentry; st is what memo_allows
 * read before it was resolved. Nothing is stored where anything changed
 * since.
 */
static __always_inline void memo_store(struct scratch *s, const struct member *m,
				       struct dentry *dentry, long len,
				       const struct memo_state *st)
{
	struct sh_dir_mark *mark;
	struct sh_rule_key *k;
	struct dir_memo *d;
	struct dentry *dir;
	__u32 nlen, dlen, *v, act = 0, marks = 0;
	__u64 renames;

	if (!st->ok || len <= 2 || len > SH_EVENT_PATH_MAX)
		return;
	nlen = BPF_CORE_READ(dentry, d_name.len);
	if (!nlen || nlen + 2 > (__u32)len)
		return;
	dlen = (__u32)len - 1 - nlen;   /* "P/" */
	if (dlen >= SH_PATH_KEY_MAX || s->ev.path[(dlen - 1) & SH_PATH_MASK] != '/')
		return;
	k = rule_key(s, m, SH_KEY_FILE, dlen);
	mark = bpf_map_lookup_elem(&dir_marks, k);
	if (mark && mark->len == dlen) {
		/* A rule below "P/": the names in it differ. */
		marks = mark->id;
		if (!marks)
			act = MEMO_NEVER;
	}
	if (act != MEMO_NEVER) {
		v = bpf_map_lookup_elem(&rules, k);
		act = (v ? *v & MEMO_ACT : 0) | (st->walk ? MEMO_WALKED : 0) |
		      (marks ? MEMO_MARKED : 0);
	}
	/* Read before the counts are checked again: unchanged, it is the
	 * one from before the path was resolved. */
	renames = memo_renames(st);
	/* The parent the path was resolved through: the one memo_allows
	 * read (st->dir) and, no rename since, the one now. */
	dir = dentry->d_parent;
	if (!dir || !memo_unchanged(m, st, dentry, st->dir, 0))
		return;
	d = bpf_inode_storage_get(&memos, dir->d_inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!d)
		return;
	d->marks = marks;
	d->word = act == MEMO_NEVER ? memo_never(m) : memo_hash(st, marks, renames) | act;
	count(SH_CNT_MEMO_STORE);
}

#endif
