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

/* Mounts of one file system examined to name a dentry (xattr, times): at
 * most SCAN entries of its mount list, of which at most MAX (a power of
 * two) in the task's namespace. None allowing it: refused. */
#define SH_SB_MOUNTS_SCAN 64

#define SH_SB_MOUNTS_MAX 8

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

/* ---- file changes that are not writes by name ---------------------------- */

/*
 * Extended attributes, POSIX ACLs and timestamps are changed through hooks
 * that receive a dentry and no mount, so the path is found through the
 * file system's mounts in the task's mount namespace: the change is allowed
 * when one of the names the object has there may be written (the tree
 * could change it through that name anyway), refused when none may or none
 * is found (fail closed).
 */
/* One entry of a super block's mount list (judge_dentry_change): a mount
 * in the task's namespace becomes a candidate. Raw offsets, as walk_step. */
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
 * a scan of its mount list; one alone is remembered (sb_mount). */
static __always_inline __u32 scan_mounts(struct scratch *s, struct dentry *dentry)
{
	struct mount_scan scan = {};
	__u32 mseq = seq_of(&mount_lock);
	struct sb_mount *c;
	__u64 sb = 0, ns = 0, mnt;

	c = sb_mount_slot(dentry, &sb, &ns);
	scan.ns = (void *)ns;
	scan.slot = s->self;
	scan.head = (void *)sb + bpf_core_field_offset(struct super_block, s_mounts);
	scan.pos = sb ? read_ptr(scan.head, 0) : 0; /* list_head.next */
	scan.off_instance = bpf_core_field_offset(struct mount, mnt_instance);
	scan.off_mnt_ns = bpf_core_field_offset(struct mount, mnt_ns);
	s->ncands = 0;
	bpf_loop(SH_SB_MOUNTS_SCAN, mount_scan_step, &scan, 0);
	/* Remembered only for a count no mount change overlapped. */
	if (c && memo_key && !(mseq & 1) && s->ncands == 1 && seq_of(&mount_lock) == mseq) {
		mnt = s->cands[0];
		c->mnt = mnt;
		c->check = sb_mount_check(sb, ns, mseq, mnt);
	}
	return s->ncands;
}

/* Does the directory memo allow the change through the mount mnt (a
 * struct mount, as a number)? As in the path hooks, which name through a
 * mount by the same walk. */
static __always_inline bool memo_allows_through(struct member *m, struct dentry *dentry,
						__u64 mnt, struct memo_state *memo)
{
	struct vfsmount *vm = (void *)mnt + bpf_core_field_offset(struct mount, mnt);

	return memo_allows_at(m, dentry, vm, BPF_CORE_READ(vm, mnt_root), true, false, true, memo);
}

static __always_inline int __judge_dentry_change(struct member *m, struct dentry *dentry,
						 __u32 op, bool forbidden)
{
	struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .flags = SH_EVF_WRITE };
	__u32 act, knob, reason = SH_WHY_UNRESOLVED, nc = 0;
	struct memo_state memo = {};
	struct scratch *s;
	__u64 one = 0;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	knob = forbidden_fs(dentry, m->origin);
	if (daemon_file(dentry, true, false)) {
		knob = SH_HOOK_FILE;
		reason = SH_WHY_PROTECTED;
	} else if (knob || forbidden) {
		knob = knob ?: SH_HOOK_FILE;
		reason = SH_WHY_FORBIDDEN;
	}
	if (knob)
		w.hook = knob;
	if (!knob && !(m->flags & (SH_PF_FILE_WRITELIST | SH_PF_FILE_DENY)))
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
			nc = scan_mounts(s, dentry);
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
		nc = scan_mounts(s, dentry);
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
static __always_inline int judge_dentry_change(struct member *m, struct dentry *dentry, __u32 op)
{
	return released(m, __judge_dentry_change(m, dentry, op, false));
}

/*
 * security.capability: file capabilities, which a file gives whoever runs
 * it, a host user outside the tree included. No tree plants them,
 * whatever its write rules (as no tree sets a set-user-ID bit: file.c).
 */
static __always_inline bool file_caps_name(const char *name)
{
	const char want[20] = "security.capability";
	char n[20] = {};

	bpf_probe_read_kernel_str(n, sizeof(n), name);
	for (int i = 0; i < (int)sizeof(n); i++)
		if (n[i] != want[i])
			return false;
	return true;
}

/* The first argument is a struct user_namespace * on 6.1, a struct
 * mnt_idmap * from 6.3 on: the dentry is the second either way. */
SEC("lsm/inode_setxattr")
int BPF_PROG(sh_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return released(&m, __judge_dentry_change(&m, dentry, SH_OP_SETXATTR, file_caps_name(name)));
}

SEC("lsm/inode_removexattr")
int BPF_PROG(sh_inode_removexattr, void *idmap, struct dentry *dentry, const char *name, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_REMOVEXATTR);
}

/* POSIX ACLs: through setxattr on 6.1, through these hooks from 6.2 on
 * (loaded only where the kernel has them). */
SEC("lsm/inode_set_acl")
int BPF_PROG(sh_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     void *kacl, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETACL);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(sh_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETACL);
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
	return judge_dentry_change(&m, dentry, SH_OP_SETTIMES);
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
