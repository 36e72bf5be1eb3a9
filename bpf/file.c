// SPDX-License-Identifier: GPL-2.0
/*
 * Files: opening (file_open, and a file received over SCM_RIGHTS, judged as
 * if opened) and every change to the name space (the path_* hooks:
 * create, remove, truncate, chmod, chown; rename and link: rename.c),
 * against the policy's `[file]` rules and the objects no tree may change.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/memo.h"

/* A name for the record of an open refused whatever its path. */
static __always_inline long name_file(struct scratch *s, struct file *file,
				      struct dentry *dentry, struct vfsmount *mnt, bool use_d_path)
{
	if (use_d_path)
		return bpf_d_path(&file->f_path, s->ev.path, sizeof(s->ev.path));
	return name_path(s, dentry, mnt);
}

/*
 * A device node outside the default set: allowed only where a `device`
 * rule names the node the kernel resolved, for reading and writing; a deny
 * rule still refuses it.
 */
static __always_inline int judge_device(struct member *m, struct scratch *s, struct file *file,
					const struct refusal *w, bool use_d_path)
{
	int err = file_resolvable(file, false, m->flags & restricting(SH_KEY_FILE));
	long len;

	if (use_d_path)
		len = d_path_fold(s, file, err == SH_RESOLVED_FOLDS);
	else
		len = name_path(s, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt));
	if (err < 0 || len <= 0 || lookup_rule(s, m, SH_KEY_DEVICE, len) != SH_ACT_ALLOW) {
		s->err = err < 0 ? err : 0;
		return report(m, s, w, SH_WHY_DEVICE, len);
	}
	if (lookup_rule(s, m, SH_KEY_FILE, len) == SH_ACT_DENY)
		return report(m, s, w, s->rule_why, len);
	return 0;
}

/*
 * The path an open is judged on, into s->ev.path with s->fold: the file's
 * own, or for a new O_TMPFILE file (no name yet) its directory as "DIR/",
 * where linkat may name it later. use_d_path: by bpf_d_path (d_path_fold;
 * folds: a name of it folds, file_resolvable), else by walk_path.
 */
static __always_inline long open_path(struct scratch *s, struct file *file, struct dentry *dentry,
				      struct vfsmount *mnt, bool tmpfile, bool use_d_path,
				      bool folds)
{
	long len;

	s->fold = 0;
	if (!tmpfile)
		return use_d_path ? d_path_fold(s, file, folds) : walk_path(s, dentry, mnt);
	len = walk_path(s, BPF_CORE_READ(dentry, d_parent), mnt);
	if (len > 2 && len < SH_EVENT_PATH_MAX) {
		__u32 n = (__u32)len & SH_PATH_MASK;

		/* Keep the mask: the verifier bounds the index by it. */
		asm volatile("" : "+r"(n));
		s->ev.path[(n - 1) & SH_PATH_MASK] = '/';
		s->ev.path[n & SH_PATH_MASK] = 0;
		len++;
	}
	return len;
}

/*
 * Is the file one this open made, whose dentry is unhashed by nature (see
 * file_resolvable): a new O_TMPFILE file, or a new file in a casefold
 * directory (6.1's ext4 keeps no negative dentries there, so the new one
 * is never hashed; path_mknod judged its name a moment ago)?
 */
static __always_inline bool made_unhashed(struct file *file, struct dentry *dentry, __u32 op,
					  bool tmpfile)
{
	/* Only the open itself: FMODE_CREATED stays with the file, which
	 * may be passed on (file_receive) long after its name was replaced. */
	return tmpfile || (op == SH_OP_OPEN && (file->f_mode & FMODE_CREATED) &&
			   (dentry->d_parent->d_inode->i_flags & S_CASEFOLD));
}

/*
 * A file the daemon pinned (its identity in exec_pins) is not written by
 * the tree, whatever the write rules, however it got the descriptor
 * (opened, received, locked): a process that mapped it as code would run
 * what is written into it, and a page dirtied through a writable mapping
 * can change again without a new ctime.
 */
static __always_inline bool pinned_file(const struct member *m, struct inode *inode)
{
	struct sh_pin_key k;

	pin_key(m, inode, &k);
	return bpf_map_lookup_elem(&exec_pins, &k) != NULL;
}

/*
 * Is this the open that made the file, its name judged already? The kernel
 * sets FMODE_CREATED (lookup_open, or a file system's atomic_open) only
 * where the create went through may_o_create, whose path_mknod judged the
 * name, in this task, for writing, a moment before: a refusal there drops
 * O_CREAT. Whatever a rule says of that name was said there, for writing,
 * which covers reading; the kernel skips its own permission check of such
 * an open alike. A rename or reload in between is as one just after the
 * open, whose descriptor stays. What goes by the inode is still looked at:
 * a file system that takes its server's word (NFS, whose CREATE opens a
 * file that is there already; CIFS, ceph, FUSE) marks the open of an
 * existing file too, which may be pinned or the daemon's (its own mark; a
 * protected directory refuses the create itself), and only a regular file
 * passes. Judged as ever: a received file (it keeps the mode: file_open
 * only asks), a new O_TMPFILE file (no path_mknod), every open of a policy
 * in audit or learning, whose records name each use, and a task whose
 * policy is missing (refused).
 */
static __always_inline bool created_here(const struct member *m, struct file *file, bool write)
{
	struct inode *inode = file->f_inode;

	if (!(file->f_mode & FMODE_CREATED) || (file->f_flags & __O_TMPFILE) || !m->flags ||
	    (m->flags & (SH_PF_AUDIT | SH_PF_LEARN | SH_PF_LEARN_ALL)) ||
	    (inode->i_mode & S_IFMT) != S_IFREG)
		return false;
	if (write && (m->flags & SH_PF_EXEC_PINS) && pinned_file(m, inode))
		return false;
	/* The daemon's own file, by its inode's mark (daemon_file's first
	 * half): the marks of its directory were judged at the create. */
	return !daemon_inode(inode, write);
}

static __always_inline int refuse_pinned(struct member *m, const struct refusal *w,
					 struct file *file, bool use_d_path)
{
	struct scratch *s = get_scratch(m);

	if (!s)
		return no_scratch(m, w);
	return report(m, s, w, SH_WHY_PINNED,
		      name_file(s, file, file->f_path.dentry, file->f_path.mnt, use_d_path));
}

/* w refused whatever the policy, the record naming file. */
static __always_inline int forbid_file(struct member *m, struct refusal *w, struct file *file,
				       bool use_d_path)
{
	struct scratch *s = get_scratch(m);

	if (!s)
		return no_scratch(m, w);
	return report(m, s, w, SH_WHY_FORBIDDEN,
		      name_file(s, file, file->f_path.dentry, file->f_path.mnt, use_d_path));
}

/*
 * Refused whatever the policy: a file no path names (-ESTALE), one of the
 * daemon's own (1), a stacked file whose names could not all be judged
 * (-EMLINK); else 0.
 */
static __always_inline int refused_object(struct dentry *dentry, struct vfsmount *mnt,
					  struct inode *inode, bool write, bool stacked)
{
	if (disconnected(dentry, mnt))
		return -ESTALE;
	if (daemon_file(dentry, write, false))
		return 1;
	return stacked ? stacked_daemon(inode, write) : 0;
}

/*
 * The file systems no tree changes, whatever its policy, and bpffs, which
 * is not read either (a pinned map's contents, `cat` prints them, are the
 * enforcer's state, tags, marks and keys included): 0 or the hook to
 * report under. A stacked file's own file system is judged too.
 */
static __always_inline __u32 open_knob(struct member *m, struct dentry *dentry,
				       struct inode *inode, bool write, bool stacked)
{
	__u32 knob = 0;

	if (write || dentry->d_sb->s_magic == BPF_FS_MAGIC)
		knob = forbidden_fs(dentry, m->origin);
	if (!knob && stacked && (write || inode->i_sb->s_magic == BPF_FS_MAGIC))
		knob = forbidden_sb(inode->i_sb);
	return knob;
}

/*
 * Opening a file, or receiving one over SCM_RIGHTS (judged as if opened).
 * Only what a rule can decide costs a path: reads matter to deny rules,
 * writes to write and deny rules, and to the file systems no tree may
 * change. use_d_path: the hook may call bpf_d_path (file_open); elsewhere
 * the path comes from walk_path.
 */
static __always_inline int __judge_open(struct member *m, struct file *file, __u32 op,
					__u32 fflags, bool write, bool use_d_path)
{
	struct memo_state memo = {};
	struct dentry *dentry = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .op_flags = fflags,
			     .flags = write ? SH_EVF_WRITE : 0 };
	struct inode *inode = file->f_inode;
	/* A stacked file: its inode not its dentry's (stacked_daemon). */
	bool stacked = inode != dentry->d_inode;
	bool tmpfile = (fflags & __O_TMPFILE) != 0, blk;
	__u32 act, mode, knob = 0;
	int own;
	struct scratch *s;
	long len, err;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	if (write && (m->flags & SH_PF_EXEC_PINS) && pinned_file(m, inode))
		return refuse_pinned(m, &w, file, use_d_path);
	/* The host's POSIX message queues (mq_open): see ipc_permission. */
	if (host_mqueue(dentry->d_sb) || (stacked && host_mqueue(inode->i_sb))) {
		w.hook = SH_HOOK_IPC;
		return forbid_file(m, &w, file, use_d_path);
	}
	/* Kernel-internal mounts (pidfs, pipes, sockets, anonymous inodes,
	 * memfd) hold no file a rule can name; what such a file is used for
	 * is judged where it is used (exec, mmap, kill, ptrace). */
	if (mnt->mnt_flags & MNT_INTERNAL)
		return 0;
	own = refused_object(dentry, mnt, inode, write, stacked);
	if (own) {
		s = get_scratch(m);
		if (!s)
			return no_scratch(m, &w);
		len = name_file(s, file, dentry, mnt, use_d_path);
		s->err = own < 0 ? own : 0;
		return report(m, s, &w, own < 0 ? SH_WHY_UNRESOLVED : SH_WHY_PROTECTED, len);
	}
	/* A device node other than the harmless ones is judged by `device`
	 * rules: a disk holds the raw bytes under every file rule. */
	mode = inode->i_mode;
	blk = ((mode & S_IFMT) == S_IFBLK || (mode & S_IFMT) == S_IFCHR) &&
	      !device_by_default(inode, op, m->origin);
	if (!blk)
		knob = open_knob(m, dentry, inode, write, stacked);
	/* No rule can decide; or overlayfs opens a file of its layers
	 * (member.h), the tree's own open judged by the overlay's path. */
	if (!knob && !blk && ((!(m->flags & SH_PF_FILE_DENY) &&
			       !(write && (m->flags & SH_PF_FILE_WRITELIST))) || layer_open(file)))
		return 0;
	/* Its directory's rule, where a memo of it holds: no scratch taken. */
	if (!knob && !blk && !tmpfile &&
	    memo_allows(m, dentry, mnt, write, true, !use_d_path, &memo))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	if (knob) {
		/* Refused whatever the path: it only names the record. */
		w.hook = knob;
		return report(m, s, &w, SH_WHY_FORBIDDEN, name_file(s, file, dentry, mnt, use_d_path));
	}
	if (blk)
		return judge_device(m, s, file, &w, use_d_path);
	err = file_resolvable(file, made_unhashed(file, dentry, op, tmpfile),
			      m->flags & restricting(SH_KEY_FILE));
	if (err < 0) {
		s->err = err;
		return report(m, s, &w, SH_WHY_UNRESOLVED, name_file(s, file, dentry, mnt, use_d_path));
	}
	len = open_path(s, file, dentry, mnt, tmpfile, use_d_path, err == SH_RESOLVED_FOLDS);
	if (len <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	act = lookup_rule(s, m, SH_KEY_FILE, len);
	if (act == SH_ACT_DENY)
		return report(m, s, &w, s->rule_why, len);
	if (write && act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST))
		return report(m, s, &w, SH_WHY_DEFAULT, len);
	if (!tmpfile)
		memo_store(s, m, dentry, len, &memo);
	return 0;
}

static __always_inline int judge_open(struct member *m, struct file *file, __u32 op,
				      __u32 fflags, bool write, bool use_d_path)
{
	return released(m, __judge_open(m, file, op, fflags, write, use_d_path));
}

SEC("lsm/file_open")
int BPF_PROG(sh_file_open, struct file *file, int ret)
{
	struct member m = {};
	__u32 fflags;
	bool write;

	if (ret)
		return ret;
	if (!membership(&m))
		return 0;
	fflags = file->f_flags;
	write = (file->f_mode & FMODE_WRITE) || (fflags & O_TRUNC);
	if (created_here(&m, file, write)) {
		count(SH_CNT_CREATED_OPEN);
		return 0;
	}
	return judge_open(&m, file, SH_OP_OPEN, fflags, write, true);
}

/*
 * Would renaming the name s->ev.path (len bytes with its NUL, resolved for
 * dentry) move rules: is "P/NAME/" a directory marker, a directory with
 * [file] rules below it? Renamed, everything under it would leave them
 * (a deny rule's files read under the new name). Where a policy's markers
 * are not known (they did not fit), every directory is taken to have deny
 * rules below it when the policy has any.
 */
static __always_inline bool moves_rules(struct scratch *s, const struct member *m,
					struct dentry *dentry, long len)
{
	struct sh_dir_mark *mark;
	bool found;
	__u32 l;

	if (!(m->flags & SH_PF_MARKS))
		return (m->flags & SH_PF_FILE_DENY) &&
		       (BPF_CORE_READ(dentry, d_inode, i_mode) & S_IFMT) == S_IFDIR;
	if (len < 2 || len >= SH_PATH_KEY_MAX)
		return false;   /* no marker is that long */
	l = (__u32)len - 1;
	s->ev.path[l & SH_PATH_MASK] = '/';
	mark = bpf_map_lookup_elem(&dir_marks, rule_key(s, m, SH_KEY_FILE, l + 1));
	found = mark && mark->len == l + 1;
	s->ev.path[l & SH_PATH_MASK] = 0;
	return found;
}

/*
 * A change to the name space at (dentry, mnt): allowed where the policy lets
 * the tree write. Deny rules refuse it too, and a rename of a directory
 * with rules below it (either side: RENAME_EXCHANGE moves both). A watch
 * is judged alike (path_notify).
 */
static __always_inline int __judge_write(struct member *m, struct dentry *dentry,
					 struct vfsmount *mnt, __u32 op)
{
	struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .flags = SH_EVF_WRITE };
	struct memo_state memo = {};
	struct scratch *s;
	__u32 act, knob;
	bool dis;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	knob = forbidden_fs(dentry, m->origin);
	dis = !knob && disconnected(dentry, mnt);
	if (knob || dis ||
	    daemon_file(dentry, true, op == SH_OP_RENAME_FROM || op == SH_OP_RENAME_TO ||
			op == SH_OP_UNLINK || op == SH_OP_RMDIR)) {
		__u32 why = knob ? SH_WHY_FORBIDDEN : dis ? SH_WHY_UNRESOLVED : SH_WHY_PROTECTED;

		s = get_scratch(m);
		if (!s)
			return no_scratch(m, &w);
		len = name_path(s, dentry, mnt);
		s->err = why == SH_WHY_UNRESOLVED ? -ESTALE : 0;
		if (knob)
			w.hook = knob;
		return report(m, s, &w, why, len);
	}
	if (!(m->flags & (SH_PF_FILE_WRITELIST | SH_PF_FILE_DENY)))
		return 0;
	/* Its directory's rule, where a memo of it holds. */
	if (memo_allows(m, dentry, mnt, true, false, true, &memo))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	len = walk_path(s, dentry, mnt);
	if (len <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	act = lookup_rule(s, m, SH_KEY_FILE, len);
	if (act == SH_ACT_DENY)
		return report(m, s, &w, s->rule_why, len);
	if (act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST))
		return report(m, s, &w, SH_WHY_DEFAULT, len);
	if ((op == SH_OP_RENAME_FROM || op == SH_OP_RENAME_TO || op == SH_OP_WATCH) &&
	    moves_rules(s, m, dentry, len))
		return report(m, s, &w, SH_WHY_RULE, len);
	memo_store(s, m, dentry, len, &memo);
	return 0;
}

/* The scratch a judgement took is given back when it ends (maps.h). */
static __always_inline int judge_write(struct member *m, struct dentry *dentry,
				       struct vfsmount *mnt, __u32 op)
{
	return released(m, __judge_write(m, dentry, mnt, op));
}

/*
 * A set-user-ID bit (or a set-group-ID bit on anything but a directory,
 * where it only hands the group down) on a file a tree makes or changes
 * would give whoever runs it, a host user outside the tree included, the
 * file's owner: root, the tree's uid. Refused whatever the write rules,
 * for every way to set one: chmod and fchmod, the mode of a create
 * (open, mknod). chown clears both bits itself; file capabilities:
 * attr.c.
 */
static __always_inline bool plants_setid(__u32 mode, __u32 type)
{
	return (mode & S_ISUID) || ((mode & S_ISGID) && (type & S_IFMT) != S_IFDIR);
}

static __always_inline int forbid_setid(struct member *m, struct dentry *dentry,
					struct vfsmount *mnt, __u32 op, __u32 mode)
{
	return forbid_named(m, &(struct refusal){ .hook = SH_HOOK_FILE, .op = op, .op_flags = mode,
						  .flags = SH_EVF_WRITE }, dentry, mnt);
}

SEC("lsm/path_mknod")
int BPF_PROG(sh_path_mknod, const struct path *dir, struct dentry *dentry,
	     umode_t mode, unsigned int dev, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (plants_setid(mode, mode))
		return forbid_setid(&m, dentry, dir->mnt, SH_OP_CREATE, mode);
	ret = judge_write(&m, dentry, dir->mnt, SH_OP_CREATE);
	if (ret || (mode & S_IFMT) != S_IFSOCK)
		return ret;
	/* A socket file (a bind): not on a name a deny rule protects; once
	 * made, d_instantiate marks it as the tree's. */
	ret = released(&m, __judge_socket_bind(&m, dentry, dir->mnt));
	note_making(dentry, ret);
	return ret;
}

SEC("lsm/path_unlink")
int BPF_PROG(sh_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	ret = judge_write(&m, dentry, dir->mnt, SH_OP_UNLINK);
	if (ret)
		return ret;
	return judge_socket_unlink(&m, dentry, dir->mnt);
}

SEC("lsm/path_mkdir")
int BPF_PROG(sh_path_mkdir, const struct path *dir, struct dentry *dentry,
	     umode_t mode, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, dentry, dir->mnt, SH_OP_MKDIR);
}

SEC("lsm/path_rmdir")
int BPF_PROG(sh_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, dentry, dir->mnt, SH_OP_RMDIR);
}

SEC("lsm/path_symlink")
int BPF_PROG(sh_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (shared_dir(dir->dentry->d_inode))
		return refuse_planted(&m, SH_OP_SYMLINK, dentry, dir->mnt);
	ret = judge_write(&m, dentry, dir->mnt, SH_OP_SYMLINK);
	/* Once made, d_instantiate marks the link as the tree's. */
	note_making(dentry, ret);
	return ret;
}

SEC("lsm/path_truncate")
int BPF_PROG(sh_path_truncate, const struct path *path, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_TRUNCATE);
}

/*
 * A directory every user shares (shared_dir: /tmp) is the host's, whatever
 * the write rules say of what is in it: without its sticky bit any user
 * removes another's files there, its owner may remove them all, and an
 * immutable flag stops every user's work. Its mode, owner, flags and
 * attributes (attr.c) are not a tree's to change.
 */
static __always_inline int forbid_shared(struct member *m, __u32 op, __u32 mode,
					 struct dentry *dentry, struct vfsmount *mnt)
{
	return forbid_named(m, &(struct refusal){ .hook = SH_HOOK_FILE, .op = op, .op_flags = mode,
						  .flags = SH_EVF_WRITE },
			    dentry, mnt);
}

/*
 * A directory the tree makes shared (sticky and world-writable: chmod
 * 1777) must be empty: a link the tree put in it before would be followed
 * by outsiders once its mark (link_trees) is gone with its inode, which
 * the kernel evicts when memory runs short (a tree can fill its own to
 * that end) and a reboot forgets. Emptiness is known on tmpfs, whose
 * directory's size counts the names in it, and chmod holds the
 * directory's lock, so none is made meanwhile; elsewhere it cannot be
 * told, and the chmod is refused. mkdir with that mode makes an empty
 * one anywhere, and no tree puts a link in a shared one (refuse_planted).
 */
static __always_inline bool shares_unempty(struct dentry *dentry, umode_t mode)
{
	struct inode *inode = dentry->d_inode;

	if (!inode || (inode->i_mode & S_IFMT) != S_IFDIR ||
	    (mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return false;
	return inode->i_sb->s_magic != TMPFS_MAGIC || inode->i_size != 2 * SH_SHMEM_BOGO_DIRENT;
}

SEC("lsm/path_chmod")
int BPF_PROG(sh_path_chmod, const struct path *path, umode_t mode, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (plants_setid(mode, BPF_CORE_READ(path->dentry, d_inode, i_mode)))
		return forbid_setid(&m, path->dentry, path->mnt, SH_OP_CHMOD, mode);
	if (shared_dir(path->dentry->d_inode) || shares_unempty(path->dentry, mode))
		return forbid_shared(&m, SH_OP_CHMOD, mode, path->dentry, path->mnt);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_CHMOD);
}

/* kuid_t and kgid_t are passed as 32-bit values; they are not needed. */
SEC("lsm/path_chown")
int BPF_PROG(sh_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (shared_dir(path->dentry->d_inode))
		return forbid_shared(&m, SH_OP_CHOWN, 0, path->dentry, path->mnt);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_CHOWN);
}

/* A descriptor passed in over SCM_RIGHTS is judged as if it were opened.
 * (bpf_d_path is not allowed here on 6.1.) */
/*
 * Locks and leases (flock, fcntl F_SETLK and F_OFD_SETLK, F_SETLEASE) need
 * only a descriptor open for reading, yet they hold up every outsider that
 * takes the file exclusively (a package manager's lock, a service's pid
 * file) or opens it for writing (a lease's break time, 45 s, on every
 * open), and one on the daemon's lock file keeps a new daemon from
 * starting. A lock through a descriptor open for reading only is judged
 * as a write to the file: a tree locks what its rules let it change.
 * Unlocking is never refused.
 */
SEC("lsm/file_lock")
int BPF_PROG(sh_file_lock, struct file *file, unsigned int cmd, int ret)
{
	struct member m = {};

	if (ret || cmd == F_UNLCK)
		return ret;
	/* Open for writing: judged as a write when it was opened or received,
	 * or handed over by the operator (the terminal make -O locks). */
	if (file->f_mode & FMODE_WRITE)
		return 0;
	ENTER(ret, m);
	return judge_open(&m, file, SH_OP_LOCK, cmd, true, false);
}

SEC("lsm/file_receive")
int BPF_PROG(sh_file_receive, struct file *file, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_open(&m, file, SH_OP_RECEIVE, 0,
			  BPF_CORE_READ(file, f_mode) & FMODE_WRITE, false);
}

/*
 * inotify, fanotify and dnotify watches need only read access, yet they tell
 * the tree when host programs read or change what it watches (a directory's
 * watch: every name in it), and a uid 0 tree spends root's per-user watch
 * and mark budget, which host daemons draw on. A watch is judged as a write:
 * a tree watches what its rules let it change, never the daemon's files,
 * cgroupfs, bpffs or the kernel's knobs, nor a directory with rules below
 * it (a deny rule's file seen through its directory), nor a device node
 * beyond the default set.
 */
SEC("lsm/path_notify")
int BPF_PROG(sh_path_notify, const struct path *path, __u64 mask, unsigned int obj_type, int ret)
{
	struct inode *inode = path->dentry->d_inode;
	struct member m = {};
	umode_t type;

	ENTER(ret, m);
	/* A mark on a whole mount or file system (fanotify, CAP_SYS_ADMIN
	 * today); a device node beyond the default set (every read and
	 * write of a terminal is an event: the operator's keystrokes). */
	type = inode ? inode->i_mode & S_IFMT : 0;
	if (obj_type != FSNOTIFY_OBJ_TYPE_INODE ||
	    ((type == S_IFCHR || type == S_IFBLK) &&
	     !device_by_default(inode, SH_OP_WATCH, m.origin)))
		return forbid_at(&m, SH_HOOK_FILE, SH_OP_WATCH, path->dentry, path->mnt);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_WATCH);
}
