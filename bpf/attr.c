// SPDX-License-Identifier: GPL-2.0
/*
 * File attributes: extended attributes, POSIX ACLs, times and the inode
 * changes inode_setattr sees, judged like a write to the file. The dentry
 * hooks carry no mount, so the file is named through the mounts of its
 * file system in the task's namespace.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/memo.h"
#include "lib/mounts.h"

/* ---- file changes that are not writes by name ---------------------------- */

/*
 * Extended attributes, POSIX ACLs and timestamps are changed through hooks
 * that receive a dentry and no mount, so the path is found through the
 * file system's mounts in the task's mount namespace: the change is allowed
 * when one of the names the object has there may be written (the tree
 * could change it through that name anyway), refused when none may or none
 * is found (fail closed).
 */

/* Does the directory memo allow the change through the mount mnt (a
 * struct mount, as a number)? As in the path hooks, which name through a
 * mount by the same walk. */
static __always_inline bool memo_allows_through(struct member *m, struct dentry *dentry,
						__u64 mnt, struct memo_state *memo)
{
	struct vfsmount *vm = (void *)mnt + bpf_core_field_offset(struct mount, mnt);

	return memo_allows_at(m, dentry, vm, BPF_CORE_READ(vm, mnt_root), true, false, true, memo);
}

/* behalf: the kernel's own work on a file (overlayfs in a copy-up,
 * member.h): the file's own checks hold; the rules, and the names
 * forbidden to the tree (judged at the overlay's dentry), do not. */
static __always_inline int __judge_dentry_change(struct member *m, struct dentry *dentry,
						 __u32 op, bool forbidden)
{
	struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .flags = SH_EVF_WRITE };
	__u32 act, knob, reason = SH_WHY_UNRESOLVED, nc = 0;
	struct memo_state memo = {};
	bool behalf = on_behalf();
	struct scratch *s;
	__u64 one = 0;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	knob = forbidden_fs(dentry, m->origin);
	if (daemon_file(dentry, true, false)) {
		knob = SH_HOOK_FILE;
		reason = SH_WHY_PROTECTED;
	} else if (knob || (forbidden && !behalf)) {
		knob = knob ?: SH_HOOK_FILE;
		reason = SH_WHY_FORBIDDEN;
	}
	w.hook = knob ?: w.hook;
	if (!knob && (behalf || !(m->flags & (SH_PF_FILE_WRITELIST | SH_PF_FILE_DENY))))
		return 0;
	/*
	 * The file system's only mount in the task's namespace (the usual
	 * case): the directory memo through it. Where that mount is
	 * remembered, no scratch is taken for a use the memo allows; else
	 * the mounts are scanned first.
	 */
	if (!knob) {
		one = remembered_mount(dentry);
		if (!one) {
			s = get_scratch(m);
			if (!s)
				return no_scratch(m, &w);
			nc = scan_mounts(s, dentry, SH_SB_MOUNTS_SCAN, NULL);
			if (nc == 1)
				one = s->cands[0];
		}
		if (one && memo_allows_through(m, dentry, one, &memo))
			return 0;
	}
	s = get_scratch(m);     /* the one taken above, or a first */
	if (!s)
		return no_scratch(m, &w);
	if (knob) {
		nc = scan_mounts(s, dentry, SH_SB_MOUNTS_SCAN, NULL);
	} else if (one) {
		s->cands[0] = one;
		nc = 1;
	}
	/*
	 * The name found and the reason are kept in the scratch, not in
	 * registers: the verifier then reaches report() with one state
	 * whichever candidate ended the loop, instead of one per candidate
	 * and outcome (which took these programs near its limit).
	 */
	s->cand_len = -ESTALE;
	s->cand_why = reason;
	for (int i = 0; i < SH_SB_MOUNTS_MAX; i++) {
		long l;

		if ((__u32)i >= nc)
			break;
		l = walk_path(s, dentry, (void *)s->cands[i] + bpf_core_field_offset(struct mount, mnt));
		if (l <= 0)
			continue; /* not under this mount */
		s->cand_len = l;
		if (knob)
			break;
		act = lookup_rule(s, m, SH_KEY_FILE, l);
		if (act != SH_ACT_DENY &&
		    (act == SH_ACT_WRITE || !(m->flags & SH_PF_FILE_WRITELIST))) {
			s->cand_why = 0; /* allowed */
			break;
		}
		s->cand_why = act == SH_ACT_DENY ? s->rule_why : SH_WHY_DEFAULT;
	}
	if (!s->cand_why) {
		/* Only where memo_allows_at looked (memo.ok): one mount. */
		memo_store(s, m, dentry, s->cand_len, &memo);
		return 0;
	}
	return report(m, s, &w, s->cand_why, s->cand_len);
}

/* The scratch a judgement took is given back when it ends (maps.h). */
static __always_inline int judge_dentry_change(struct member *m, struct dentry *dentry, __u32 op,
					       bool forbidden)
{
	return released(m, __judge_dentry_change(m, dentry, op, forbidden));
}

/* An attribute's name, its first SH_XATTR_HEAD bytes, read once. */
#define SH_XATTR_HEAD 20

static __always_inline bool has_prefix(const char *n, const char *p, int len)
{
	for (int i = 0; i < len; i++)
		if (n[i] != p[i])
			return false;
	return true;
}

/*
 * security.capability: file capabilities, which a file gives whoever runs
 * it, a host user outside the tree included. No tree plants them,
 * whatever its write rules (as no tree sets a set-user-ID bit: file.c).
 * And any name outside the kernel's namespaces (user., security.,
 * system., trusted.): a file system that keeps such names as its own
 * metadata (ntfs3 takes "$LXMOD", "$LXUID" and "$LXGID" for a file's mode
 * and owner when it reads the inode again) would let a tree set a mode
 * no chmod judged, a set-user-ID bit or a directory shared with its links
 * in it, or take one away. A name that cannot be read is refused.
 */
static __always_inline bool forbidden_xattr(const char *name, bool set)
{
	char n[SH_XATTR_HEAD] = {};

	if (bpf_probe_read_kernel_str(n, sizeof(n), name) <= 0)
		return true;
	if (set && has_prefix(n, "security.capability", 20))
		return true;
	return !has_prefix(n, "user.", 5) && !has_prefix(n, "security.", 9) &&
	       !has_prefix(n, "system.", 7) && !has_prefix(n, "trusted.", 8);
}

/*
 * The attributes of a directory every user shares are the host's, as its
 * mode is (file.c, forbid_shared): an access ACL that takes "other" write
 * away would let a tree plant a link there (refuse_planted asks the mode),
 * then put the ACL back. No tree changes them, whatever its write rules;
 * nor those of any sticky directory, where an ACL giving "other" write
 * would make one shared past chmod's check (file.c, shares_unempty).
 */
static __always_inline bool shared_attrs(struct dentry *dentry)
{
	struct inode *inode = dentry->d_inode;

	return inode && (shared_dir(inode) ||
			 ((inode->i_mode & S_IFMT) == S_IFDIR && (inode->i_mode & S_ISVTX)));
}

/* The first argument is a struct user_namespace * on 6.1, a struct
 * mnt_idmap * from 6.3 on: the dentry is the second either way. */
SEC("lsm/inode_setxattr")
int BPF_PROG(sh_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETXATTR,
				   forbidden_xattr(name, true) || shared_attrs(dentry));
}

SEC("lsm/inode_removexattr")
int BPF_PROG(sh_inode_removexattr, void *idmap, struct dentry *dentry, const char *name, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_REMOVEXATTR,
				   forbidden_xattr(name, false) || shared_attrs(dentry));
}

/* POSIX ACLs: through setxattr on 6.1, through these hooks from 6.2 on
 * (loaded only where the kernel has them). */
SEC("lsm/inode_set_acl")
int BPF_PROG(sh_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     void *kacl, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETACL, shared_attrs(dentry));
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(sh_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETACL, shared_attrs(dentry));
}

/*
 * Timestamps (utimensat, touch -d). Mode, owner and size changes reach the
 * path hooks (chmod, chown, truncate) as well and are judged there once.
 */
static __always_inline int judge_setattr(struct dentry *dentry, struct iattr *attr, int ret)
{
	struct member m = {};
	unsigned int valid;

	if (ret)
		return ret;
	valid = BPF_CORE_READ(attr, ia_valid);
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) ||
	    (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE)))
		return 0;
	if (!membership(&m))
		return 0;
	return judge_dentry_change(&m, dentry, SH_OP_SETTIMES, false);
}

/* 6.1: (dentry, attr); user space loads the one that fits the kernel. */
SEC("lsm/inode_setattr")
int BPF_PROG(sh_inode_setattr, struct dentry *dentry, struct iattr *attr, int ret)
{
	return judge_setattr(dentry, attr, ret);
}

/* 6.3 on: (idmap, dentry, attr). */
SEC("lsm/inode_setattr")
int BPF_PROG(sh_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	return judge_setattr(dentry, attr, ret);
}
