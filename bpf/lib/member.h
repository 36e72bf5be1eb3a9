/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tree membership: which tagged tree (and so which policy) the current task
 * belongs to, cached per task in task local storage, and whether another
 * task is in the same tree.
 *
 * A task of a tree has its membership cached in task storage (struct
 * sh_task), keyed to a global tag generation and the task's cgroup, and
 * inherited at fork (wall.c, task_alloc), so leaving the cgroup does not
 * release it. The policy found for it is remembered in the same entry for
 * that generation (SH_TASK_GEN_BITS), so a member's hook reads its storage
 * and the policy table, not the tag map. A task with no storage has never
 * been seen in a tree: it is judged by its cgroup (map cg_outside: a word
 * per cgroup found outside in this tag generation), so a task outside
 * every tree costs a few loads, an array lookup the verifier inlines and a
 * hash, and allocates nothing.
 */
#ifndef SH_BPF_MEMBER_H
#define SH_BPF_MEMBER_H

#include "maps.h"

/* The policy a task is held to, for one hook call. */
struct member {
	__u64 origin;
	__u64 gen;      /* tag_gen when it was found */
	__u64 caps;     /* capabilities the policy allows back */
	__u32 flags;    /* struct sh_policy_conf.flags; 0 when the policy is missing */
	__u16 policy;
	__u8 slot;
	__u8 scratch;   /* the scratch this call holds: its index + 1, or 0 */
};

/* The call's scratch (maps.h): claimed at its first use, given back by
 * the program before it returns (RELEASED). */
#define get_scratch(m)  claim_scratch_at(&(m)->scratch, (m)->origin)

/* A program's answer, after giving back the scratch it held. */
static __always_inline int released(struct member *m, int ret)
{
	scratch_done_at(&m->scratch);
	return ret;
}

/* Is cgroup id tagged in the policy set in force? A tag with no policy in
 * the slot in force (one a reload is adding, or dropping, or a cgroup
 * pattern of the other slot's set made) does not count: an ancestor's
 * tag holds the task instead. */
static __always_inline bool tagged_in_force(__u64 id)
{
	struct sh_cgroup_tag *tag = bpf_map_lookup_elem(&tags, &id);

	return tag && tag->policy[active_slot & 1] != SH_POLICY_NONE;
}

/* Deepest tagged cgroup among the current task's ancestors (0: none).
 * A global function: its loop's ways out (tagged or not at each level)
 * are verified once, not as states of every program that asks. */
__noinline __u64 sh_nearest_tagged(void)
{
	__u64 best = 0;

	for (int lvl = 0; lvl < SH_MAX_CGROUP_LEVEL; lvl++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(lvl);

		if (!id)
			break;
		if (tagged_in_force(id))
			best = id;
	}
	return best;
}

/*
 * Fill *m and return 1 when the current task is held by a policy, 0 when it
 * is not. Called first by every hook, so the untagged path is kept short.
 */
static __always_inline __u64 outside_word(__u64 cgid, __u64 gen)
{
	return memo_mix(memo_mix(memo_key ^ 0x6f, cgid), gen);
}

/* The policy remembered in a task's entry (sh_task.gen), 0 for none. */
static __always_inline __u64 task_gen_with(__u64 gen, __u32 slot, __u32 policy)
{
	if (gen & ~SH_TASK_GEN_MASK || policy >= SH_MAX_POLICIES)
		return gen; /* none remembered: looked up each time */
	return gen | ((__u64)((slot & 1) << 6 | policy) + 1) << SH_TASK_GEN_BITS;
}

/*
 * Fill *m for a task of the tree `origin` (t: its entry, if it has one, of
 * generation gen and cgroup cgid): 1 when a policy holds it. who: the
 * policy its entry remembers for gen (task_gen_with), 0 for none.
 */
static __always_inline int held_by(struct member *m, struct sh_task *t, __u64 origin,
				   __u64 gen, __u64 cgid, __u32 who)
{
	struct sh_cgroup_tag *tag;
	struct sh_policy_conf *conf;
	__u32 slot, idx;

	if (who) {
		/* Found in this generation already: no tag lookup. */
		slot = (who - 1) >> 6 & 1;
		m->policy = (who - 1) & (SH_MAX_POLICIES - 1);
	} else {
		tag = bpf_map_lookup_elem(&tags, &origin);
		if (!tag)
			return 0; /* untagged since: the new generation is on its way */
		slot = active_slot & 1;
		m->policy = tag->policy[slot];
		if (m->policy == SH_POLICY_NONE)
			return 0; /* not tagged in the policy set in force */
		/* Remembered where the entry is this generation's, for this
		 * tree and cgroup (any change since bumps the generation). */
		if (t && t->gen == gen && t->origin == origin && t->cgroup == cgid) {
			t->gen = task_gen_with(gen, slot, m->policy);
			/* Only this task writes its entry, and a hook nested
			 * on its CPU (a signal from interrupt context) runs
			 * to its end first: one that rewrote the entry for
			 * another tree since the check is seen here, and the
			 * policy is taken back. (Read again, after the store.) */
			asm volatile("" ::: "memory");
			if (t->origin != origin || t->cgroup != cgid)
				t->gen = gen;
		}
	}
	m->origin = origin;
	m->gen = gen;
	m->slot = slot;
	idx = slot * SH_MAX_POLICIES + (m->policy & (SH_MAX_POLICIES - 1));
	conf = bpf_map_lookup_elem(&policies, &idx);
	/* A tagged task whose policy cannot be found is refused (flags 0). */
	m->flags = (conf && (conf->flags & SH_PF_VALID)) ? conf->flags : 0;
	m->caps = m->flags ? conf->caps : 0;
	return 1;
}

/*
 * A task that arrives in a tree of a `held-from = exec` policy from outside
 * is pending (SH_TASK_PENDING in its entry's origin): one the host moves
 * in (cgroup.c, at the entry of cgroup_attach_task) or a host process's clone makes in
 * its cgroup (wall.c, task_alloc: the tree is found at its first hook).
 * Its hooks judge it as outside, but for its execs and code mappings,
 * which are judged as the tree's; an exec that goes through (past the
 * point of no return, its other threads gone: exec.c, sh_exec_arm) makes
 * it a member. A refused or failed exec leaves it the host's. Where the
 * policy in force does not hold from exec, or cannot be found, a pending
 * task is held at once. A task first seen in a tree without an entry
 * (there before the tree was tagged) is held at once, as in any tree, but
 * for the container runtime's init named at the tag of a container's
 * cgroup (runtime_cgroups: already in the cgroup when the OCI hook tags
 * it), which is pending.
 */
/* What a hook asks of a pending task (membership_at). */
enum {
	SH_AT_HOOK,     /* judged as outside */
	SH_AT_JUDGE,    /* its execs and code mappings: judged as the tree's */
	SH_AT_JUDGE_SLEEPABLE, /* the same where the leader cannot be looked up */
};

/*
 * An entry's tree rewritten by its task, keeping the marks another CPU may
 * have set since they were read (cgroup.c marks a task before a member's
 * move, while the task runs): the marks in `clear` are dropped, those in
 * `set` added. A mark is set once a move: a few tries always suffice.
 */
static __always_inline void entry_set(struct sh_task *t, __u64 origin, __u64 clear, __u64 set)
{
	__u64 old = t->origin, seen;

	for (int i = 0; i < 4; i++) {
		seen = __sync_val_compare_and_swap(&t->origin, old,
						   origin | (old & SH_TASK_MARKS & ~clear) | set);
		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline int pending_or_held(struct member *m, struct sh_task *t, __u64 pending,
					   int at)
{
	if (!pending)
		return 1;
	if (!(m->flags & SH_PF_FROM_EXEC)) {
		if (t)
			entry_set(t, m->origin, SH_TASK_PENDING, 0);  /* held at once */
		return 1;
	}
	return at != SH_AT_HOOK;
}

/* Task p's entry's marks (SH_TASK_MARKS), 0 for none or no entry. */
static __always_inline __u64 entry_marks(struct task_struct *p)
{
	struct sh_task *t = bpf_task_storage_get(&task_marks, p, 0, 0);

	return t ? t->origin & SH_TASK_MARKS : 0;
}

/*
 * A thread of a marked process (cgroup.c marks the leader a move
 * names) takes its marks in its first entry t: its memory is the leader's.
 * Returns the pending one. (A sleepable program cannot look the leader up;
 * the exec it judges is judged by sh_exec too, which does.)
 */
static __always_inline __u64 leader_marks(struct task_struct *task, struct sh_task *t, int at)
{
	__u64 lm;

	if (at == SH_AT_JUDGE_SLEEPABLE)
		return 0;
	lm = entry_marks(task->group_leader);
	if (t && (lm & SH_TASK_FOREIGN))
		__sync_fetch_and_or(&t->origin, SH_TASK_FOREIGN);
	return lm & SH_TASK_PENDING;
}

/* SH_TASK_PENDING for a thread of the container runtime's init named at
 * the tag of tree origin (runtime_cgroups), else 0. */
static __always_inline __u64 runtime_init(struct task_struct *task, __u64 origin)
{
	__u32 *rt = bpf_map_lookup_elem(&runtime_cgroups, &origin);

	return rt && *rt == (__u32)task->tgid ? SH_TASK_PENDING : 0;
}

static __always_inline int membership_at(struct member *m, int at)
{
	struct task_struct *task;
	struct sh_task *t = NULL;
	__u64 gen, origin, cgid, pending = 0;
	__u32 who = 0;

	if (!ntagged)
		return 0;

	gen = tag_gen;
	task = bpf_get_current_task_btf();
	/* What bpf_get_current_cgroup_id returns, without the call. */
	cgid = task->cgroups->dfl_cgrp->kn->id;
	/* A task no storage map has an entry for has no storage here. */
	if (task->bpf_storage)
		t = bpf_task_storage_get(&task_marks, task, 0, 0);
	if (t && (t->gen & SH_TASK_GEN_MASK) == gen && t->cgroup == cgid) {
		origin = t->origin;
		who = t->gen >> SH_TASK_GEN_BITS;
		pending = origin & SH_TASK_PENDING;
		origin &= ~SH_TASK_MARKS;
	} else if (!t) {
		/* No storage: never seen in a tree. Judged by its cgroup. */
		__u32 i = cgid & (SH_CG_OUTSIDE - 1);
		__u64 word = outside_word(cgid, gen), *o = bpf_map_lookup_elem(&cg_outside, &i);

		if (o && *o == word)
			return 0;
		origin = sh_nearest_tagged();
		if (!origin) {
			/* Remembered only for the cgroup the ancestors were
			 * read of: not one the task was moved out of meanwhile,
			 * nor an id a faulting load made 0. */
			if (o && cgid && task->cgroups->dfl_cgrp->kn->id == cgid)
				*o = word;
			return 0;
		}
		/* In a tree: storage of its own, so that it stays held if it
		 * leaves the tree's cgroup, and its children with it. */
		t = bpf_task_storage_get(&task_marks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t) {
			entry_set(t, origin, 0, 0);
			t->gen = gen;
			t->cgroup = cgid;
		}
		pending = leader_marks(task, t, at);
		if (!pending)
			pending = runtime_init(task, origin);
		if (pending && t)
			entry_set(t, origin, 0, SH_TASK_PENDING);
	} else {
		/*
		 * Recompute: the nearest tagged ancestor cgroup wins; a task
		 * that left its tagged tree keeps the tree it came from for as
		 * long as that tree stays tagged.
		 */
		__u64 was = t->origin & ~SH_TASK_MARKS;

		pending = t->origin & SH_TASK_PENDING;
		origin = sh_nearest_tagged();
		if (!origin && was && tagged_in_force(was))
			origin = was;
		/* Marks stay, with or without a tree: one set before a
		 * move (cgroup.c) holds once the move is made. */
		entry_set(t, origin, 0, 0);
		t->gen = gen;
		t->cgroup = cgid;
	}
	if (!origin)
		return 0;
	if (!held_by(m, t, origin, gen, cgid, pending ? 0 : who))
		return 0;
	if (pending && !pending_or_held(m, t, pending, at)) {
		if (t)
			entry_set(t, origin, 0, SH_TASK_PENDING);
		return 0;
	}
	return 1;
}

static __always_inline int membership(struct member *m)
{
	return membership_at(m, SH_AT_HOOK);
}

/*
 * A file a pending task (the host's runtime) runs or maps as code that is
 * the runtime itself: the very file it runs, through a mount no namespace
 * has (runc before 1.2 re-executes itself at its start, in the tree's
 * cgroup, through a read-only bind mount of its binary it has already
 * detached). Its content is the host's, not a file of the tree's root, and
 * no rule could name it: such an exec is the host's, judged as outside,
 * and arms nothing (exec.c). A tree can neither detach a mount nor open
 * the runtime's own file, and a member's exec is judged as ever. A memfd
 * is no runtime's copy here: any process may make one, and a tree's could
 * be handed to a pending process by name (/proc/PID/fd/N); the same runc
 * falls back to one only where it cannot bind, and is then refused.
 */
static __always_inline bool runtime_copy(struct file *file)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sh_task *t;
	struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
	void *rm = (void *)mnt - bpf_core_field_offset(struct mount, mnt);

	/* A member's calls (most) stop at its mark. */
	if (!task->bpf_storage)
		return false;
	t = bpf_task_storage_get(&task_marks, task, 0, 0);
	if (!t || !(t->origin & SH_TASK_PENDING))
		return false;
	return !BPF_CORE_READ((struct mount *)rm, mnt_ns) &&
	       BPF_CORE_READ(task, mm, exe_file, f_inode) == BPF_CORE_READ(file, f_inode);
}

/* Is cgroup cg (a struct cgroup *, read as memory) at or under `origin`? */
static __always_inline bool cg_in_tree(struct cgroup *cg, __u64 origin)
{
	for (int i = 0; i < SH_MAX_CGROUP_LEVEL && cg; i++) {
		struct cgroup_subsys_state *up;

		if (BPF_CORE_READ(cg, kn, id) == origin)
			return true;
		up = BPF_CORE_READ(cg, self.parent);
		if (!up)
			break;
		cg = (void *)up - bpf_core_field_offset(struct cgroup, self);
	}
	return false;
}

/* Is task p a member of the tree rooted at the tagged cgroup `origin`? A
 * pending task is the host's (see pending_or_held): the tree may not trace
 * it, signal it where signals are scoped, nor write its /proc files. */
static __always_inline bool in_tree(struct task_struct *p, __u64 origin)
{
	struct sh_task *t = bpf_task_storage_get(&task_marks, p, 0, 0);

	/* A pending or foreign task is not the tree's, nor any thread of one
	 * (a thread shares its leader's memory). */
	if ((t && (t->origin & SH_TASK_MARKS)) || entry_marks(p->group_leader))
		return false;
	if (t && t->origin == origin)
		return true;
	return cg_in_tree(BPF_CORE_READ(p, cgroups, dfl_cgrp), origin);
}

/* Each hook: pass an earlier refusal on, return at once for outsiders. */
/* The start of most programs: an earlier LSM's refusal stands; a task in
 * no tree is let through. */
#define ENTER(ret, m)							\
	do {								\
		if (ret)						\
			return ret;					\
		if (!membership(&(m)))					\
			return 0;					\
	} while (0)

/* The same for the exec programs: a pending task's exec is judged as its
 * tree's (at: SH_AT_JUDGE, or SH_AT_JUDGE_SLEEPABLE); exec.c's sh_exec_arm
 * makes it a member once the exec goes through. */
#define ENTER_EXEC(ret, m, at)						\
	do {								\
		if (ret)						\
			return ret;					\
		if (!membership_at(&(m), at))				\
			return 0;					\
	} while (0)

/*
 * Is a check of cred the tree's own use of a capability? Not where cred is
 * another task's (the OOM killer weighing a victim), nor where the kernel
 * acts in the tree's task with credentials of its own choosing in place of
 * the task's (cred, in force, is not the task's real_cred): overlayfs
 * works on its layers as the mount's owner (a copy-up's trusted.overlay
 * xattrs ask for CAP_SYS_ADMIN), after checking the tree's own
 * credentials against the overlay's file; access(2) checks with a copy
 * of the task's own. A core dump writes with such a copy, whose checks
 * (CAP_SYS_RESOURCE: past a quota, into blocks kept for root) are judged:
 * the dumping task is marked (PF_DUMPCORE). io_uring is the other
 * exception: a request runs with the credentials its ring registered
 * (IORING_REGISTER_PERSONALITY) or the task had when it was queued, which
 * a task that changed its own since would use unjudged. So a task that
 * has used io_uring (task->io_uring) and every io_uring worker are judged
 * on the credentials in force, whoever's they are: an overlay copy-up in
 * such a task is refused its capabilities. Two capabilities that relax
 * what a write does are judged on whatever credentials are in force in
 * the tree's task: CAP_SYS_RESOURCE (a write past a
 * quota, into the blocks a file system keeps for root) and CAP_FSETID (a
 * written set-user-ID file keeping its bit). FUSE passthrough writes a
 * file with the FUSE server's credentials, which hold both. A copy-up of
 * a set-user-ID or set-group-ID file asks CAP_FSETID under the overlay
 * owner's credentials too: refused and recorded, and the copy keeps its
 * bits all the same (overlayfs sets the copy's mode itself; t_wall).
 */
static __always_inline bool own_creds(const struct cred *cred, int cap)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if ((unsigned long)cred != (unsigned long)t->cred)
		return false;
	if (cap == CAP_FSETID || cap == CAP_SYS_RESOURCE ||
	    (unsigned long)cred == (unsigned long)t->real_cred ||
	    (t->flags & (PF_IO_WORKER | PF_DUMPCORE)))
		return true;
	/* A kernel that has no io_uring state to tell by: judged. */
	if (!bpf_core_field_exists(t->io_uring))
		return true;
	return BPF_CORE_READ(t, io_uring) != NULL;
}


/*
 * The kernel at work in a tree's task with credentials of its own choosing
 * in force (!own_creds): overlayfs on its layers, after the tree's own use
 * of the overlay's file was judged. The attributes and times it sets on
 * its layers' files in a copy-up are not the tree's. A task that has used
 * io_uring, or is dumping core, is the tree's own here too (own_creds).
 */
static __always_inline bool on_behalf(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return !own_creds(t->cred, -1);
}

#define SH_MNT_NS_INTERNAL ((unsigned long)-22) /* ERR_PTR(-EINVAL) */

/*
 * overlayfs opening a file of its layers: a private mount no namespace
 * holds (clone_private_mount, MNT_NS_INTERNAL), with the overlay owner's
 * credentials in force, in a copy-up and (6.12, backing files) at every
 * open of an overlay's file, after the tree's open of that file was judged
 * by the overlay's path. No descriptor of such a file is ever handed to a
 * process, so the mount alone tells it: whoever's credentials are in force
 * (an io_uring task's as well), if they are not the task's real ones.
 */
static __always_inline bool layer_open(struct file *file)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vfsmount *vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	struct mount *mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);

	return (unsigned long)BPF_CORE_READ(mnt, mnt_ns) == SH_MNT_NS_INTERNAL &&
	       (unsigned long)t->cred != (unsigned long)t->real_cred;
}

#endif
