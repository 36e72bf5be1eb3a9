// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup patterns (sharness.h): a cgroup made under a pattern's directory
 * with a name its last component matches is tagged here, by the
 * tracepoint of its creation. cgroup_mkdir fires it after the cgroup is
 * made and before kernfs_activate makes its directory visible, with
 * cgroup_mutex held throughout: no process can be moved into the cgroup
 * before its tag is in the map.
 *
 * The name is matched against the pattern table of each slot, so the tag
 * carries the policy of the set in force and of the set a reload is
 * preparing. The daemon writes a table only while its slot is not in
 * force, then moves itself into its own cgroup (which takes cgroup_mutex:
 * every creation that may have read the table before it was written is
 * then complete and visible), gives every pattern tag its
 * policy in that slot by its cgroup's path, and tags the untagged matches
 * of every pattern's directory. A creation after that reads the new
 * table. Once the slot is in force, the other slot's table is emptied.
 * Only cgroup v2 cgroups are tagged.
 *
 * A tag the map cannot take (it is full: SH_MAX_TAGGED tags in all) is
 * counted (SH_CNT_PATTERN_LOST), which the daemon reports (log, status):
 * that cgroup is not held. A tree cannot make cgroups
 * (wall.c), so only the host fills the map; the daemon drops the tags of
 * removed cgroups at every reload and every minute.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"

/* A glob match in steps (bpf_loop): `*` any run of characters, `?` one,
 * `[...]` one of a class (compiled by the daemon, map cg_classes: one
 * step); every other byte itself. Backtracks to the last star only, which
 * is enough for globs whose other items each match one byte. The same
 * rules as sh_glob_match (user/lib/glob.c). */
struct glob_walk {
	char name[SH_CGROUP_NAME_MAX];
	char glob[SH_PATTERN_MAX];
	__u32 nlen, plen, p, n, star_n;
	__s32 star_p;
	__s32 done;     /* 1: matches, -1: does not */
	__u32 idx;      /* the pattern's index, for its classes */
};

/* The class that opens at w->p against the name's byte at w->n: 1 and
 * *end past its ']' if the byte is of it, 0 if not, -1 where the daemon
 * compiled no class there: none at w->p, or an entry never written (all
 * zeros; a compiled one has at[1] 0xff, or a second class, which opens 3
 * bytes in at least). (end is read from the map as 32 bits and compared
 * with nothing: with a bound it knows, 6.12's verifier would follow p
 * through the steps.) */
static __always_inline int glob_class(struct glob_walk *w, __u32 *end)
{
	struct sh_pattern_classes *k = bpf_map_lookup_elem(&cg_classes, &w->idx);
	__u8 c = w->name[w->n & (SH_CGROUP_NAME_MAX - 1)];

	if (!k || !k->at[1])
		return -1;
	for (int j = 0; j < SH_PATTERN_CLASSES; j++) {
		if (k->at[j] != w->p)
			continue;
		*end = k->end[j];
		return (k->bits[j][(c >> 3) & 31] >> (c & 7)) & 1;
	}
	return -1;
}

static long glob_step(__u32 i, void *ctx)
{
	struct glob_walk *w = ctx;
	char pc = w->p < w->plen ? w->glob[w->p & (SH_PATTERN_MAX - 1)] : 0;
	__u32 end = 0;
	int in;

	if (w->n >= w->nlen) {
		/* The name is used up: only stars may be left of the glob. */
		if (pc == '*') {
			w->p++;
			return 0;
		}
		w->done = w->p >= w->plen ? 1 : -1;
		return 1;
	}
	if (pc == '[') {
		in = glob_class(w, &end);
		if (in < 0) {
			w->done = 1;    /* no class compiled: held, not left free */
			return 1;
		}
		if (in) {
			w->p = end;
			w->n++;
			return 0;
		}
	} else if (pc == '*') {
		w->star_p = w->p++;
		w->star_n = w->n;
		return 0;
	} else if (pc && (pc == '?' || pc == w->name[w->n & (SH_CGROUP_NAME_MAX - 1)])) {
		w->p++;
		w->n++;
		return 0;
	}
	if (w->star_p >= 0) {
		w->p = w->star_p + 1;
		w->n = ++w->star_n;
		return 0;
	}
	w->done = -1;
	return 1;
}

/* One slot's table against one name: the policy of the first pattern
 * that matches (SH_POLICY_NONE for none). A loop of loops (bpf_loop in
 * bpf_loop), so the verifier walks each body once. */
struct pattern_scan {
	struct glob_walk w;
	__u64 parent;
	__u32 slot;
	__u16 policy;
};

static long pattern_one(__u32 i, void *ctx)
{
	struct pattern_scan *s = ctx;
	__u32 idx = (s->slot & 1) * SH_MAX_PATTERNS + (i & (SH_MAX_PATTERNS - 1));
	struct sh_cgroup_pattern *pat = bpf_map_lookup_elem(&cg_patterns, &idx);

	if (!pat || !pat->parent)
		return 1;       /* the table's end */
	if (pat->parent != s->parent)
		return 0;
	__builtin_memcpy(s->w.glob, pat->glob, SH_PATTERN_MAX);
	s->w.plen = pat->len < SH_PATTERN_MAX ? pat->len : SH_PATTERN_MAX - 1;
	/* pad is 0. Read from the map, the walk's counters are values the
	 * verifier does not know, so it checks glob_step once; from known
	 * constants (6.12 follows them through every iteration of bpf_loop)
	 * it would walk every step of the match. */
	s->w.p = s->w.n = s->w.star_n = pat->pad;
	s->w.star_p = (__s32)pat->pad - 1;
	s->w.done = 0;
	s->w.idx = idx;
	bpf_loop(SH_CGROUP_NAME_MAX * SH_PATTERN_MAX, glob_step, &s->w, 0);
	if (s->w.done != 1)
		return 0;
	s->policy = pat->policy;
	return 1;
}

static __always_inline __u16 pattern_policy(struct pattern_scan *s, __u32 slot)
{
	s->slot = slot;
	s->policy = SH_POLICY_NONE;
	bpf_loop(SH_MAX_PATTERNS, pattern_one, s, 0);
	return s->policy;
}

static __always_inline bool table_empty(__u32 slot)
{
	__u32 idx = slot * SH_MAX_PATTERNS;
	struct sh_cgroup_pattern *pat = bpf_map_lookup_elem(&cg_patterns, &idx);

	return !pat || !pat->parent;
}

/* The tree a move into cgroup dst puts a task in: the deepest tagged
 * cgroup at or above dst (nearest_tagged's), 0 for none. */
static __always_inline __u64 tree_of(struct cgroup *cg)
{
	for (int i = 0; i < SH_MAX_CGROUP_LEVEL && cg; i++) {
		struct cgroup_subsys_state *up;
		__u64 id = BPF_CORE_READ(cg, kn, id);

		if (tagged_in_force(id))
			return id;
		up = BPF_CORE_READ(cg, self.parent);
		cg = up ? (void *)up - bpf_core_field_offset(struct cgroup, self) : NULL;
	}
	return 0;
}

/* Task's entry, made if it has none: NULL only where none can be had. An
 * entry the task makes for itself meanwhile is the one returned. */
static __always_inline struct sh_task *entry_of(struct task_struct *task)
{
	struct sh_task *t = bpf_task_storage_get(&task_marks, task, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);

	return t ? t : bpf_task_storage_get(&task_marks, task, 0, 0);
}

/* Is the current task moving another process (not one of its threads)? */
static __always_inline bool moves_another(struct task_struct *task)
{
	return (__u32)(bpf_get_current_pid_tgid() >> 32) != (__u32)BPF_CORE_READ(task, tgid);
}

/* Does the policy in force of tree `origin` hold from exec? */
static __always_inline bool holds_from_exec(__u64 origin)
{
	struct sh_cgroup_tag *tag = bpf_map_lookup_elem(&tags, &origin);
	struct sh_policy_conf *conf;
	__u32 slot = active_slot & 1, idx;

	if (!tag)
		return false;
	idx = slot * SH_MAX_POLICIES + (tag->policy[slot] & (SH_MAX_POLICIES - 1));
	conf = bpf_map_lookup_elem(&policies, &idx);
	return conf && (conf->flags & SH_PF_VALID) && (conf->flags & SH_PF_FROM_EXEC);
}

/*
 * A task moved into a tree (the leader of a cgroup.procs write, the one
 * thread of a cgroup.threads write) is marked here, at the entry of the
 * kernel's cgroup_attach_task, before the move: marked after it, it would
 * be in the tree unmarked for as long as the move takes, and its own
 * hooks, running meanwhile on another CPU (a container runtime's init is
 * busy as it is moved), would make it the tree's member first.
 * - Moved by a member (through a cgroup.procs descriptor kept from before
 *   its exec, the one way a member can write one: the wall refuses it the
 *   open, and a received one): foreign, for it may be any process of the
 *   host the member could name. Held by the tree's policy, it is not the
 *   tree's to trace, signal or read (in_tree), and a pending runtime it
 *   was is held at once. A task already the tree's (its entry names the
 *   tree, unmarked) stays so.
 * - Moved by the host (or by itself) into a tree whose policy holds from
 *   exec, from outside every tree: pending, the host's until its next
 *   exec goes through (lib/member.h). A member the host moves stays one,
 *   and so does a process of a tree the programs have not seen yet.
 * Outside until the move is made, a pending task is judged as outside; a
 * move that then fails leaves it outside, its mark of no effect there, and
 * a foreign one held where it was and nobody's to trace. Its other
 * threads follow their leader (member.h). Where no entry can be had (no
 * memory) the task is held at its first hook in the tree: a member's move
 * counted, for the tree may then trace it.
 */
SEC("fentry/cgroup_attach_task")
int BPF_PROG(sh_cgroup_move, struct cgroup *dst, struct task_struct *task, bool threadgroup)
{
	struct member m = {};
	struct sh_task *t;
	__u64 origin, was;

	if (!ntagged || BPF_CORE_READ(dst, root, hierarchy_id))
		return 0;
	origin = tree_of(dst);
	if (!origin)
		return 0;
	if (moves_another(task) && membership(&m)) {
		t = entry_of(task);
		if (!t) {
			count(SH_CNT_MARK_LOST);
			return 0;
		}
		if (t->origin != origin)
			entry_set(t, t->origin & ~SH_TASK_MARKS, SH_TASK_PENDING, SH_TASK_FOREIGN);
		return 0;
	}
	if (!holds_from_exec(origin))
		return 0;
	/* In a tree already, where its hooks have not been seen yet (no
	 * entry): no arrival from outside, held at its first hook. */
	if (!bpf_task_storage_get(&task_marks, task, 0, 0) &&
	    tree_of(BPF_CORE_READ(task, cgroups, dfl_cgrp)))
		return 0;
	t = entry_of(task);
	if (!t)
		return 0;
	for (int i = 0; i < 4; i++) {
		was = t->origin;
		if (was && !(was & SH_TASK_PENDING))
			return 0;       /* a member stays one, a foreign task foreign */
		if (__sync_val_compare_and_swap(&t->origin, was, was | SH_TASK_PENDING) == was)
			break;
	}
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(sh_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct sh_cgroup_tag tag = { .run_id = SH_TAG_PATTERN };
	struct sh_cgroup_name *nm;
	struct pattern_scan s;
	__u32 zero = 0;
	__u64 id;
	long len;

	if (table_empty(0) && table_empty(1))
		return 0;
	/* cgroup v2 only: a v1 hierarchy (hierarchy_id above 0) numbers its
	 * cgroups from 1 too, and its ids are not the tag map's. */
	if (BPF_CORE_READ(cgrp, root, hierarchy_id))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	/* The parent through its css (kernfs_node.parent is __parent from 6.15). */
	s.parent = BPF_CORE_READ(cgrp, self.parent, cgroup, kn, id);
	len = bpf_probe_read_kernel_str(s.w.name, sizeof(s.w.name), BPF_CORE_READ(cgrp, kn, name));
	if (len <= 0) {
		/* Unreadable: it may match, so it is counted as lost. */
		count(SH_CNT_PATTERN_LOST);
		return 0;
	}
	s.w.nlen = len - 1;
	tag.policy[0] = pattern_policy(&s, 0);
	tag.policy[1] = pattern_policy(&s, 1);
	if (tag.policy[0] == SH_POLICY_NONE && tag.policy[1] == SH_POLICY_NONE)
		return 0;
	/* A cgroup id is never reused: one already there is a tag the daemon
	 * wrote (a run's, a cgroup line's) and stands. */
	if (bpf_map_update_elem(&tags, &id, &tag, BPF_NOEXIST) && !bpf_map_lookup_elem(&tags, &id))
		count(SH_CNT_PATTERN_LOST);
	/* Its name, for records the daemon writes once it is removed. */
	nm = bpf_map_lookup_elem(&scratch_name, &zero);
	if (nm) {
		nm->parent = s.parent;
		__builtin_memcpy(nm->name, s.w.name, SH_CGROUP_NAME_MAX);
		bpf_map_update_elem(&pattern_names, &id, nm, BPF_ANY);
	}
	return 0;
}
