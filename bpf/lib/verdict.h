/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decisions and their records: the rule lookup, report() (count, build the
 * audit record, send it, return the hook's answer), and the refusals no
 * policy can lift (forbid, forbid_at).
 */
#ifndef SH_BPF_VERDICT_H
#define SH_BPF_VERDICT_H

#include "maps.h"
#include "member.h"
#include "path.h"

/*
 * The rule key of the first n bytes of s->ev.path, for m's policy. It is
 * built in place: its 8-byte header goes in the record's comm,
 * just before the path (fill_header writes comm only when a record is
 * sent, after every lookup), so the path is never copied. The trie reads
 * only prefixlen's bits of the path.
 */
static __always_inline struct sh_rule_key *rule_key(struct scratch *s, const struct member *m,
						     __u8 kind, __u32 n)
{
	struct sh_rule_key *k = (void *)s->ev.path - __builtin_offsetof(struct sh_rule_key, path);

	k->slot = m->slot;
	k->kind = kind;
	k->policy = m->policy;
	k->prefixlen = 32 + n * 8;
	return k;
}

/*
 * The flags of the rules of kind that refuse more than what covers their
 * directory (deny; exec lib): a spelling of a name that misses one of
 * them would be judged by a broader rule. 0: none can (device rules).
 */
static __always_inline __u32 restricting(__u8 kind)
{
	return kind == SH_KEY_FILE ? SH_PF_FILE_DENY :
	       kind == SH_KEY_EXEC ? SH_PF_EXEC_RULES :
	       kind == SH_KEY_CONNECT ? SH_PF_CONNECT_RULES : 0;
}

/*
 * Is the path in s->ev.path (s->fold: where a name of it folds, path.h
 * name_folds) to be refused because that name lies below a directory
 * "D/" with a restricting rule of this kind under it (a fold marker,
 * include/sharness.h)? That name's bytes may not be the rule's, for the
 * same object: the rule would be missed. Where the policy's fold markers
 * are not written (SH_PF_FOLD) or the place is not known, any restricting
 * rule of the kind counts. A "D/" as long as a rule key holds no rule
 * below it.
 */
static __always_inline bool fold_refused(struct scratch *s, const struct member *m, __u8 kind)
{
	struct sh_dir_mark *mark;
	__u32 l = s->fold, rules = restricting(kind);

	if (!l || !(m->flags & rules))
		return false;
	if (l == SH_FOLD_UNKNOWN || !(m->flags & SH_PF_FOLD))
		return true;
	if (l >= SH_PATH_KEY_MAX)
		return false;
	mark = bpf_map_lookup_elem(&dir_marks, rule_key(s, m, kind | SH_KEY_FOLD, l));
	return mark && mark->len == l;
}

/*
 * Longest-prefix rule lookup for the resolved path in s->ev.path. len is what
 * bpf_d_path returned (bytes including the NUL). Returns the rule action or
 * 0 when no rule matches; SH_ACT_DENY for a name that folds below a
 * restricting rule (fold_refused): every judgement by path asks here, so
 * none misses that check. s->rule_why: the reason a deny gives. s->fold
 * must be of this path (walk_path, d_path_fold).
 */
static __always_inline __u32 lookup_rule(struct scratch *s, const struct member *m,
					 __u8 kind, long len)
{
	__u32 *act;

	s->rule_why = SH_WHY_RULE;
	s->rule_pin = 0;
	if (len <= 0)
		return 0;
	if (fold_refused(s, m, kind)) {
		s->rule_why = SH_WHY_CASEFOLD;
		return SH_ACT_DENY;
	}
	act = bpf_map_lookup_elem(&rules, rule_key(s, m, kind,
						   len > SH_PATH_KEY_MAX ? SH_PATH_KEY_MAX : (__u32)len));
	if (!act)
		return 0;
	s->rule_pin = *act >> SH_RULE_PIN_SHIFT;
	return *act & SH_RULE_ACT_MASK;
}

/*
 * The path of an open file by bpf_d_path (from the task's root, as rules
 * name it for a chrooted task too) into s->ev.path, with s->fold for it.
 * folds (file_resolvable said SH_RESOLVED_FOLDS): walk_path (from the
 * namespace's top) says where; it names the file alike unless the task is
 * chrooted (bpf_d_path shorter) or the name is unhashed (bpf_d_path adds
 * " (deleted)", cut here: a file the open made, see made_unhashed). Where
 * the two differ otherwise, the fold's place is unknown. Only in programs
 * that may call bpf_d_path.
 */
#define SH_DELETED_LEN 10       /* " (deleted)" */

static __always_inline long d_path_fold(struct scratch *s, struct file *file, bool folds)
{
	struct dentry *dentry = file->f_path.dentry;
	long walked, len;
	__u32 fold;

	s->fold = 0;
	if (!folds)
		return bpf_d_path(&file->f_path, s->ev.path, sizeof(s->ev.path));
	walked = walk_path(s, dentry, file->f_path.mnt);
	if (walked <= 0)
		return walked;
	fold = s->fold;
	len = bpf_d_path(&file->f_path, s->ev.path, sizeof(s->ev.path));
	if (len <= 0)
		return len;
	if (!dentry->d_hash.pprev && len == walked + SH_DELETED_LEN) {
		s->ev.path[(walked - 1) & SH_PATH_MASK] = 0;
		len = walked;
	}
	s->fold = len == walked ? fold : SH_FOLD_UNKNOWN;
	return len;
}

/*
 * What a refusal is about: the hook and operation, and the record fields
 * that depend on them. The reason and the path come with each verdict.
 */
struct refusal {
	__u32 hook;        /* enum sh_hook */
	__u32 op;          /* enum sh_op */
	__u32 flags;       /* SH_EVF_* */
	__u32 op_flags;    /* open flags, signal, capability, ... */
	__u32 target_pid;  /* signal and task hooks */
};

/*
 * What an LSM program may return is checked by the verifier (6.12: within
 * [-MAX_ERRNO, 0]). The compiler may fold "audit ? 0 : -EPERM" into
 * arithmetic whose range the verifier cannot follow; hidden behind a
 * barrier and bounded again, the value's range is plain to it.
 */
static __always_inline long lsm_ret(long ret)
{
	/* 64 bits: the register compared is the one returned. */
	asm volatile("" : "+r"(ret));
	if (ret < -4095 || ret > 0)
		return -EPERM;
	return ret;
}

/* ---- learning ------------------------------------------------------------ */

/*
 * What a learning run lets through (and reports once): a use that only an
 * allowlist the policy lacks refuses -- an exec, mapping, write, unix or
 * inet endpoint, a socket kind -- which a learned rule can allow. The rest
 * is refused as in enforce mode, and logged as a denial the learned policy
 * lists for review: the wall (forbidden operations, the daemon's objects,
 * unresolvable paths, deleted executables, bad addresses, rerouting
 * options), a deny rule of the policy learned from, devices beyond the
 * default set (a raw disk rewrites any file), capabilities beyond the
 * tree's, and signals outside the tree (the run's own supervisor).
 */
static __always_inline bool learnable(__u32 reason)
{
	return reason == SH_WHY_DEFAULT || reason == SH_WHY_ABSTRACT || reason == SH_WHY_SOCKET;
}

#define FNV_PRIME 0x100000001b3ull

struct learn_hash {
	__u64 h;
	__u32 n;        /* bytes of the name to hash */
	__u32 slot;     /* the scratch's index (scratch.self) */
};

/* Eight bytes of the name in the scratch record per step. */
static long learn_hash_step(__u32 i, void *data)
{
	struct learn_hash *lh = data;
	struct scratch *s = scratch_at(lh->slot);
	__u32 at = i * 8;

	if (!s)
		return 1;
	for (int k = 0; k < 8; k++) {
		if (at + k >= lh->n)
			return 1;
		lh->h ^= (__u8)s->ev.path[(at + k) & SH_PATH_MASK];
		lh->h *= FNV_PRIME;
	}
	return 0;
}

/*
 * Is this the tree's first use of the object? Marks it as seen. An object
 * is the hook, operation and record flags with the name (s->ev.path) and
 * the operation's own values (open flags, signal, port, target).
 */
static __noinline bool learn_first(const struct member *m, struct scratch *s,
				   const struct refusal *w, long path_len)
{
	struct learn_hash lh = { .h = 0xcbf29ce484222325ull };
	struct sh_learn_key k = {};
	__u64 one = 1, *seen;

	lh.h = (lh.h ^ w->op_flags) * FNV_PRIME;
	lh.h = (lh.h ^ w->target_pid) * FNV_PRIME;
	if (s && path_len > 1) {
		lh.n = (__u32)(path_len - 1) & SH_PATH_MASK;
		lh.slot = s->self;
		bpf_loop((lh.n + 7) / 8, learn_hash_step, &lh, 0);
	}
	k.origin = m->origin;
	k.hash = lh.h;
	k.hook = (__u16)w->hook;
	k.op = (__u16)w->op;
	k.flags = w->flags;
	seen = bpf_map_lookup_elem(&learned, &k);
	if (seen) {
		__sync_fetch_and_add(seen, 1);
		return false;
	}
	/* Two CPUs racing on a new object may both report it: harmless. */
	bpf_map_update_elem(&learned, &k, &one, BPF_ANY);
	return true;
}

/* The record's header, for the current task. */
static __always_inline void fill_header(struct sh_event *e, const struct member *m,
					const struct refusal *w, __u32 reason, int ret,
					__s32 path_err, __u32 action)
{
	struct task_struct *task = bpf_get_current_task_btf();

	e->ktime_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->origin = m->origin;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->hook = w->hook;
	e->action = action;
	e->ret = ret;
	e->reason = reason;
	e->policy = m->policy;
	e->slot = m->slot;
	e->pad0 = 0;
	e->flags = w->flags;
	e->op = w->op;
	e->op_flags = w->op_flags;
	e->target_pid = w->target_pid;
	e->path_err = path_err;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

/*
 * Record a refusal (or, in audit mode, a would-be refusal) and return what
 * the hook must return. s is the caller's scratch, whose ev.path holds the
 * name the resolver wrote (0: the record has no path); path_len is what
 * the resolver returned: the length of that name with its NUL, or a
 * negative error. The record carries the header and the name's own bytes
 * only. A record without a path is built in the ring itself, never in the
 * scratch: a program that runs in interrupt context (file_send_sigiotask)
 * must not overwrite a path the interrupted program is about to judge.
 */
__noinline int sh_report(const struct member *m, struct scratch *s,
			 const struct refusal *w, __u32 reason, long path_len)
{
	__s32 path_err = path_len < 0 ? (__s32)path_len : 0;
	bool learn, audit;
	struct sh_event *e;
	__u32 action, n = 0;
	int ret;

	if (!m || !w)   /* never: a global function's arguments may be NULL */
		return -EPERM;
	learn = (m->flags & SH_PF_LEARN) && learnable(reason);
	audit = (m->flags & SH_PF_AUDIT) || learn;
	ret = audit ? 0 : -EPERM;
	action = learn ? SH_EV_LEARN : audit ? SH_EV_AUDIT : SH_EV_DENY;
	if (learn) {
		if (!learn_first(m, s, w, path_len)) {
			count(SH_CNT_LEARN_DUP);
			return 0;
		}
		count(SH_CNT_LEARNED);
	} else {
		count(SH_CNT_HOOK(w->hook, audit ? SH_CNT_AUDIT : SH_CNT_DENY));
	}
	if (!s) {
		e = bpf_ringbuf_reserve(&events, SH_EVENT_HDR_SIZE + 4, 0);
		if (!e) {
			count(SH_CNT_DROPPED);
			return lsm_ret(ret);
		}
		fill_header(e, m, w, reason, ret, path_err, action);
		e->path_len = 0;
		e->path[0] = 0;
		bpf_ringbuf_submit(e, 0);
		return lsm_ret(ret);
	}
	if (s->err) {
		/* A name for the record, and why it is not the object's. */
		path_err = s->err;
		s->err = 0;
	}
	e = &s->ev;
	fill_header(e, m, w, reason, ret, path_err, action);
	if (path_len > 1)
		n = (path_len - 1) & SH_PATH_MASK;
	e->path_len = n;
	e->path[n & SH_PATH_MASK] = 0;
	if (bpf_ringbuf_output(&events, e, SH_EVENT_HDR_SIZE + n + 1, 0))
		count(SH_CNT_DROPPED);
	return lsm_ret(ret);
}

static __always_inline int report(const struct member *m, struct scratch *s,
				  const struct refusal *w, __u32 reason, long path_len)
{
	return lsm_ret(sh_report(m, s, w, reason, path_len));
}

/*
 * No scratch free on this CPU (claim_scratch_at: each held by a preempted
 * judgement): refused like a path that cannot be resolved, and recorded
 * without one (path_error -EAGAIN), in audit and learning modes as any
 * such use.
 */
static __always_inline int no_scratch(const struct member *m, const struct refusal *w)
{
	return report(m, 0, w, SH_WHY_UNRESOLVED, -EAGAIN);
}

/* ---- a tree cannot take the wall down ----------------------------------- */

/* Operations no tree may perform, whatever its policy and its uid. */
static __always_inline int forbid(struct member *m, __u32 hook, __u32 op, __u32 op_flags)
{
	count(SH_CNT_HOOK(hook, SH_CNT_CHECK));
	return report(m, 0, &(struct refusal){ .hook = hook, .op = op, .op_flags = op_flags },
		      SH_WHY_FORBIDDEN, 0);
}

/* The same for what w says (its op_flags and flags recorded too), the
 * record naming (dentry, mnt). */
static __always_inline int forbid_named(struct member *m, const struct refusal *w,
					struct dentry *dentry, struct vfsmount *mnt)
{
	struct scratch *s = get_scratch(m);

	count(SH_CNT_HOOK(w->hook, SH_CNT_CHECK));
	if (!s)
		return no_scratch(m, w);
	return released(m, report(m, s, w, SH_WHY_FORBIDDEN, name_path(s, dentry, mnt)));
}

/*
 * A symbolic link put into a directory every user shares (shared_dir):
 * made there, renamed or linked in. A host program running as root would
 * follow it (protected_symlinks lets it: the link and the directory are
 * root's) and write where the tree pointed. Refused whatever the write
 * rules: a mark on the link's inode (inode_follow_link) would not outlive
 * the inode in memory.
 */
static __always_inline int refuse_planted(struct member *m, __u32 op, struct dentry *dentry,
					  struct vfsmount *mnt)
{
	const struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .flags = SH_EVF_WRITE };
	struct scratch *s = get_scratch(m);

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!s)
		return no_scratch(m, &w);
	return released(m, report(m, s, &w, SH_WHY_PLANTED, name_path(s, dentry, mnt)));
}

static __always_inline int forbid_at(struct member *m, __u32 hook, __u32 op,
				     struct dentry *dentry, struct vfsmount *mnt)
{
	return forbid_named(m, &(struct refusal){ .hook = hook, .op = op }, dentry, mnt);
}

#endif
