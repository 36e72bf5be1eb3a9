/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path resolution: the absolute path of a (dentry, mount) in the task's
 * mount namespace, built by walking the dentry chain where bpf_d_path is
 * not allowed, and the checks that a path still names its object
 * (attached mount, connected and hashed dentry). Paths are judged on the
 * object the kernel resolved, never on a string the process passed; a
 * path that cannot be resolved is refused in enforce mode.
 */
#ifndef SH_BPF_PATH_H
#define SH_BPF_PATH_H

#include "maps.h"

#define SH_WALK_MAX_DEPTH 64

/* scratch.fold_pos: no name of the path folds. scratch.fold: a name
 * folds, where in the path judged is not known (fold_refused). */
#define SH_NO_FOLD 0xffffffffu
#define SH_FOLD_UNKNOWN 0xffffffffu

/* The deepest path that fits in PATH_MAX ("/a" per level). */
#define SH_UP_MAX_DEPTH (SH_EVENT_PATH_MAX / 2)

/*
 * Absolute path of (dentry, vfsmnt), from the root of the mount namespace,
 * into s->ev.path. Used where bpf_d_path is not allowed (the path hooks on
 * 6.1, the unix peer). Returns the length with its NUL, or -ENAMETOOLONG
 * when the path is deeper or longer than can be judged: the caller refuses.
 */
/*
 * Field offsets for walk_step. libbpf (1.1) does not relocate CO-RE
 * accesses inside a bpf_loop callback, so the calling program resolves them
 * and the callback reads raw offsets.
 */
struct walk {
	void *dentry;           /* struct dentry * */
	void *mnt;              /* struct mount * */
	__u32 pos;              /* start of the path built so far in scratch.walk */
	__u32 slot;             /* the scratch's index (scratch.self) */
	int err;
	bool done;
	bool last;              /* a pseudo or disconnected dentry: its name ends the path */
	bool name_only;         /* naming for a record: no attachment or connection check */
	bool any_ns;            /* a mount of another namespace is fine (unix peers) */
	void *ns;               /* struct mnt_namespace * of the current task */
	__u16 off_mnt_ns;       /* struct mount: mnt_ns */
	__u16 off_mnt_root;     /* struct mount: mnt.mnt_root */
	__u16 off_mnt_parent;   /* struct mount: mnt_parent */
	__u16 off_mountpoint;   /* struct mount: mnt_mountpoint */
	__u16 off_d_parent;     /* struct dentry: d_parent */
	__u16 off_d_len;        /* struct dentry: d_name.len */
	__u16 off_d_name;       /* struct dentry: d_name.name */
};

/*
 * How the names of a file system compare (fold_offs.mode): by bytes; in
 * casefold directories only (ext4 or f2fs with an encoding: a directory
 * with S_CASEFOLD, chattr +F); or all of them otherwise than by bytes
 * (its dentries' operations have a d_compare: vfat, exfat, ntfs3, CIFS
 * with nocase, ...). Such a name may be spelled otherwise than a rule
 * spells the same object. Told per mount, from its super block: the one
 * place those operations come from.
 */
#define SH_FOLDS_NONE 0
#define SH_FOLDS_ALL 1
#define SH_FOLDS_DIRS 2

/* The mode of mount mnt (a struct mount *). */
static __always_inline __u16 mount_folds(const struct fold_offs *o, void *mnt)
{
	void *sb = read_ptr(mnt, o->mnt_sb), *op;

	if (!sb)
		return SH_FOLDS_ALL;    /* not known: every name may fold */
	if (o->s_encoding && read_ptr(sb, o->s_encoding))
		return SH_FOLDS_DIRS;
	op = read_ptr(sb, o->s_d_op);
	return op && read_ptr(op, o->d_compare) ? SH_FOLDS_ALL : SH_FOLDS_NONE;
}

/*
 * Does a name in directory parent fold, on a mount of mode o->mode (offsets
 * in o, resolved by the calling program)? A casefold-capable file
 * system's directory whose inode cannot be read: yes.
 */
static __always_inline bool name_folds(const struct fold_offs *o, void *parent)
{
	void *inode;
	__u32 flags = 0;

	if (o->mode != SH_FOLDS_DIRS)
		return o->mode == SH_FOLDS_ALL;
	inode = read_ptr(parent, o->d_inode);
	return !inode || bpf_probe_read_kernel(&flags, sizeof(flags), inode + o->i_flags) ||
	       (flags & S_CASEFOLD);
}

/* The offsets name_folds reads, resolved here (a program, not a callback),
 * and the mode of mount mnt (a struct mount *). */
static __always_inline void fold_offs_init(struct fold_offs *o, void *mnt)
{
	o->s_d_op = bpf_core_field_offset(struct super_block, s_d_op);
	o->d_compare = bpf_core_field_offset(struct dentry_operations, d_compare);
	o->d_inode = bpf_core_field_offset(struct dentry, d_inode);
	o->i_flags = bpf_core_field_offset(struct inode, i_flags);
	o->mnt_sb = bpf_core_field_offset(struct mount, mnt) +
		    bpf_core_field_offset(struct vfsmount, mnt_sb);
	o->s_encoding = bpf_core_field_exists(struct super_block, s_encoding) ?
			bpf_core_field_offset(struct super_block, s_encoding) : 0;
	o->mode = mount_folds(o, mnt);
}

/* One step of walk_path: prepend one name, or cross one mount. */
static long walk_step(__u32 i, void *data)
{
	struct walk *w = data;
	struct scratch *s = scratch_at(w->slot);
	void *root, *parent;
	const unsigned char *name;
	__u32 len = 0, pos = w->pos;

	if (!s) {
		w->err = -ENAMETOOLONG;
		return 1;
	}
	root = read_ptr(w->mnt, w->off_mnt_root);
	parent = read_ptr(w->dentry, w->off_d_parent);
	if (w->dentry == parent && w->dentry != root) {
		/* Its own parent but not its mount's root: a disconnected
		 * dentry (a file handle's), or not under this mount at all.
		 * No path names it: unresolvable. Only a record's name
		 * (memfd, pipe) may end here. */
		if (!w->name_only) {
			w->err = -ESTALE;
			return 1;
		}
		w->last = true;
	} else if (w->dentry == root) {
		void *up = read_ptr(w->mnt, w->off_mnt_parent);

		if (up == w->mnt || !up) {
			/* The top: it must be the root of the task's own mount
			 * namespace, not of a detached tree (open_tree clone,
			 * fsmount) or a lazily unmounted one, whose paths the
			 * rules do not name. */
			if (!w->name_only && !w->any_ns && read_ptr(w->mnt, w->off_mnt_ns) != w->ns)
				w->err = -EXDEV;
			w->done = true;
			return 1;
		}
		w->dentry = read_ptr(w->mnt, w->off_mountpoint);
		w->mnt = up;
		s->fo.mode = mount_folds(&s->fo, up);
		return 0;
	}
	bpf_probe_read_kernel(&len, sizeof(len), w->dentry + w->off_d_len);
	name = read_ptr(w->dentry, w->off_d_name);
	if (len > 255 || pos > SH_EVENT_PATH_MAX - 1 || len + 1 > pos) {
		w->err = -ENAMETOOLONG;
		return 1;
	}
	pos -= len;
	bpf_probe_read_kernel(&s->walk[pos & SH_PATH_MASK], len & 0xff, name);
	pos -= 1;
	s->walk[pos & SH_PATH_MASK] = '/';
	w->pos = pos;
	/* The walk goes up: the last one found is the topmost. */
	if (!w->last && name_folds(&s->fo, parent))
		s->fold_pos = pos;
	w->dentry = parent;
	if (w->last) {
		w->done = true;
		return 1;
	}
	return 0;
}

/*
 * The walk itself, once per program: a global function is verified once,
 * whatever its callers, where an inlined walk (and its loop's callback)
 * was verified again at every call site and for every state reaching it,
 * most of a daemon's start. Its arguments: the scratch (a map value) and
 * the walk the calling program set up (struct walk: the offsets, which
 * only a program's own code has relocated, and the pointers as values,
 * read here by bpf_probe_read_kernel alone). Returns as walk_path_opt.
 */
__noinline long sh_walk(struct scratch *s, const struct walk *start)
{
	struct walk w;
	__u32 pos;

	if (!s || !start)   /* never: a global function's arguments may be NULL */
		return -ENAMETOOLONG;
	w = *start;
	bpf_loop(SH_WALK_MAX_DEPTH, walk_step, &w, 0);
	if (w.err)
		return w.err;
	if (!w.done)
		return -ENAMETOOLONG;
	pos = w.pos;
	if (s->fold_pos != SH_NO_FOLD && s->fold_pos >= pos)
		s->fold = s->fold_pos - pos + 1;
	if (pos == SH_EVENT_PATH_MAX - 1) {
		pos -= 1;
		s->walk[pos & SH_PATH_MASK] = '/';
	}
	return bpf_probe_read_kernel_str(s->ev.path, sizeof(s->ev.path), &s->walk[pos & SH_PATH_MASK]);
}

/*
 * Absolute path of (dentry, vfsmnt), from the root of the mount namespace,
 * into s->ev.path. Used where bpf_d_path is not allowed (the path hooks on
 * 6.1, the unix peer). Returns the length with its NUL, or a negative
 * error the caller refuses: -ENAMETOOLONG (deeper or longer than can be
 * judged), -ESTALE (disconnected: no path names it), -EXDEV (a mount not
 * attached to the task's mount namespace). name_only: a name for a
 * record of something refused anyway; those checks are skipped.
 */
static __always_inline long walk_path_opt(struct scratch *s, struct dentry *dentry,
					  struct vfsmount *vfsmnt, bool name_only, bool any_ns)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct walk w = {
		.dentry = dentry,
		.mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt),
		.pos = SH_EVENT_PATH_MAX - 1,
		.slot = s->self,
		.name_only = name_only,
		.any_ns = any_ns,
		.ns = BPF_CORE_READ(task, nsproxy, mnt_ns),
		.off_mnt_ns = bpf_core_field_offset(struct mount, mnt_ns),
		.off_mnt_root = bpf_core_field_offset(struct mount, mnt) +
				bpf_core_field_offset(struct vfsmount, mnt_root),
		.off_mnt_parent = bpf_core_field_offset(struct mount, mnt_parent),
		.off_mountpoint = bpf_core_field_offset(struct mount, mnt_mountpoint),
		.off_d_parent = bpf_core_field_offset(struct dentry, d_parent),
		.off_d_len = bpf_core_field_offset(struct dentry, d_name) +
			     bpf_core_field_offset(struct qstr, len),
		.off_d_name = bpf_core_field_offset(struct dentry, d_name) +
			      bpf_core_field_offset(struct qstr, name),
	};
	long len;

	s->fold = 0;
	if (!dentry || !vfsmnt)
		return -ENAMETOOLONG;
	s->walk[SH_EVENT_PATH_MAX - 1] = 0;
	s->fold_pos = SH_NO_FOLD;
	fold_offs_init(&s->fo, w.mnt);
	len = sh_walk(s, &w);
	/* What bpf_probe_read_kernel_str may return, plain to the verifier
	 * again past the call. */
	if (len > SH_EVENT_PATH_MAX)
		return -ENAMETOOLONG;
	if (len < -4095)
		return -ENAMETOOLONG;
	return len;
}

#define walk_path(s, d, m) walk_path_opt(s, d, m, false, false)

#define name_path(s, d, m) walk_path_opt(s, d, m, true, false)

/* A unix peer's path, as its binder named it: in its own mount namespace
 * (a service with a private /tmp, a container), where the rules name it. */
#define peer_path(s, d, m) walk_path_opt(s, d, m, false, true)

/* file_resolvable: resolvable, with a name that folds. */
#define SH_RESOLVED_FOLDS 1

/* One step up from w->dentry towards the mount's root (file_resolvable),
 * and on from there through the mounts above it to the namespace's top,
 * for names that fold only (a mount point a lookup spelled otherwise). */
struct up_walk {
	void *dentry;
	void *mnt;              /* struct mount * */
	void *root;             /* its root dentry */
	struct fold_offs fo;
	__u16 off_d_parent;     /* struct dentry: d_parent */
	__u16 off_mnt_parent;   /* struct mount: mnt_parent */
	__u16 off_mountpoint;   /* struct mount: mnt_mountpoint */
	__u16 off_mnt_root;     /* struct mount: mnt.mnt_root */
	bool connected;         /* the file's own mount's root was reached */
	bool want;              /* whether a name folds matters: go on above */
	bool folds;             /* a name on the way folds (name_folds) */
};

static long up_step(__u32 i, void *data)
{
	struct up_walk *w = data;
	void *parent, *up;

	if (w->dentry == w->root) {
		w->connected = true;
		up = read_ptr(w->mnt, w->off_mnt_parent);
		if (!w->want || w->folds || !up || up == w->mnt)
			return 1;
		w->dentry = read_ptr(w->mnt, w->off_mountpoint);
		w->mnt = up;
		w->root = read_ptr(up, w->off_mnt_root);
		w->fo.mode = mount_folds(&w->fo, up);
		return 0;
	}
	parent = read_ptr(w->dentry, w->off_d_parent);
	if (!parent || parent == w->dentry)
		return 1; /* a root that is not the mount's: disconnected */
	if (!w->folds)
		w->folds = name_folds(&w->fo, parent);
	w->dentry = parent;
	return 0;
}

/*
 * Does the path of an open file still name it, in the task's own mount
 * namespace? 0, SH_RESOLVED_FOLDS where it does but a name of its path
 * folds (name_folds, up to the namespace's top: the caller names it by
 * walk_path, which says where), or the reason it does not: -EXDEV, its mount is not
 * attached there (a detached tree from open_tree or fsmount, a lazily
 * unmounted one); -ESTALE, the dentry is no longer reachable from its
 * mount's root (a file handle's disconnected dentry) or no longer hashed
 * (unlinked or replaced: an O_PATH descriptor reopened through
 * /proc/self/fd). bpf_d_path gives a string in every one of these cases
 * ("/", or a name with " (deleted)"); none is the object's real path.
 * fresh: a file the open itself made, unhashed by nature (a new O_TMPFILE
 * file, judged by its directory; a new file in a casefold directory on
 * 6.1), is not taken for a replaced one. want_folds: the policy has rules
 * a name that folds could miss (restricting); without, none is looked for.
 */
static __always_inline int file_resolvable(struct file *file, bool fresh, bool want_folds)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vfsmount *vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	struct mount *mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
	struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
	struct up_walk w = {
		.dentry = dentry,
		.mnt = mnt,
		.root = BPF_CORE_READ(vfsmnt, mnt_root),
		.off_d_parent = bpf_core_field_offset(struct dentry, d_parent),
		.off_mnt_parent = bpf_core_field_offset(struct mount, mnt_parent),
		.off_mountpoint = bpf_core_field_offset(struct mount, mnt_mountpoint),
		.off_mnt_root = bpf_core_field_offset(struct mount, mnt) +
				bpf_core_field_offset(struct vfsmount, mnt_root),
		.want = want_folds,
	};

	if (BPF_CORE_READ(mnt, mnt_ns) != BPF_CORE_READ(task, nsproxy, mnt_ns))
		return -EXDEV;
	if (!fresh && !BPF_CORE_READ(dentry, d_hash.pprev) &&
	    BPF_CORE_READ(dentry, d_parent) != dentry)
		return -ESTALE;
	if (want_folds)
		fold_offs_init(&w.fo, mnt);
	bpf_loop(SH_UP_MAX_DEPTH, up_step, &w, 0);
	if (!w.connected)
		return -ESTALE;
	return w.folds ? SH_RESOLVED_FOLDS : 0;
}

/*
 * A dentry that is its own parent but not its mount's root: disconnected
 * (a file handle's, after its dentry was evicted). No path names it, and
 * no directory it is in can be seen: refused whatever the policy, the
 * cheap check first (a full walk follows where a rule must decide).
 */
static __always_inline bool disconnected(struct dentry *d, struct vfsmount *mnt)
{
	return d->d_parent == d && mnt->mnt_root != d;
}

#endif
