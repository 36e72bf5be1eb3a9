// SPDX-License-Identifier: GPL-2.0
/*
 * sharness: BPF-LSM programs that hold every descendant of a tagged cgroup
 * to its policy.
 *
 * Membership is decided once per task and cached in task local storage
 * (struct sh_task), keyed to a global tag generation and the task's cgroup:
 * for a task outside every tagged tree each hook costs one storage lookup
 * and two compares. A
 * task's membership is inherited at fork, so leaving the cgroup does not
 * release it.
 *
 * Paths are judged on the object the kernel resolved (bpf_d_path on the
 * struct path the hook received), never on a string the process passed. A
 * path that cannot be resolved is refused in enforce mode.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sharness.h"

#define EPERM 1
#define ENAMETOOLONG 36

#define FMODE_WRITE 0x2
#define O_TRUNC 01000

char LICENSE[] SEC("license") = "GPL";

/* Set by user space through the skeleton's .bss mapping. */
volatile __u32 active_slot;  /* policy slot in force */
volatile __u64 tag_gen;      /* bumped on every tag or policy change */
volatile __u32 ntagged;      /* tagged cgroups; 0 lets every hook return at once */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_TAGGED);
	__type(key, __u64);                 /* cgroup id */
	__type(value, struct sh_cgroup_tag);
} tags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SH_MAX_RULE_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_rule_key);
	__type(value, __u32);               /* enum sh_rule_action */
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_SLOTS * SH_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct sh_policy_conf);
} policies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sh_task);
} task_marks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SH_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct scratch {
	char path[SH_EVENT_PATH_MAX];
	struct sh_rule_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/* The policy a task is held to, for one hook call. */
struct member {
	__u64 origin;
	__u32 flags;    /* struct sh_policy_conf.flags; 0 when the policy is missing */
	__u16 policy;
	__u8 slot;
};

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* Deepest tagged cgroup among the current task's ancestors (0: none). */
static __always_inline __u64 nearest_tagged(void)
{
	__u64 best = 0;

	for (int lvl = 0; lvl < SH_MAX_CGROUP_LEVEL; lvl++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(lvl);

		if (!id)
			break;
		if (bpf_map_lookup_elem(&tags, &id))
			best = id;
	}
	return best;
}

/*
 * Fill *m and return 1 when the current task is held by a policy, 0 when it
 * is not. Called first by every hook, so the untagged path is kept short.
 */
static __always_inline int membership(struct member *m)
{
	struct task_struct *task;
	struct sh_task *t;
	struct sh_cgroup_tag *tag;
	struct sh_policy_conf *conf;
	__u64 gen, origin, cgid;
	__u32 slot, idx;

	if (!ntagged)
		return 0;

	gen = tag_gen;
	cgid = bpf_get_current_cgroup_id();
	task = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&task_marks, task, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t && t->gen == gen && t->cgroup == cgid) {
		origin = t->origin;
	} else {
		/*
		 * Recompute: the nearest tagged ancestor cgroup wins; a task
		 * that left its tagged tree keeps the tree it came from for as
		 * long as that tree stays tagged.
		 */
		origin = nearest_tagged();
		if (!origin && t && t->origin &&
		    bpf_map_lookup_elem(&tags, &t->origin))
			origin = t->origin;
		if (t) {
			t->origin = origin;
			t->gen = gen;
			t->cgroup = cgid;
		}
	}
	if (!origin)
		return 0;

	tag = bpf_map_lookup_elem(&tags, &origin);
	if (!tag)
		return 0; /* untagged since: the new generation is on its way */
	slot = active_slot & 1;
	m->origin = origin;
	m->slot = slot;
	m->policy = tag->policy[slot];
	if (m->policy == SH_POLICY_NONE)
		return 0; /* not tagged in the policy set in force */
	idx = slot * SH_MAX_POLICIES + (m->policy & (SH_MAX_POLICIES - 1));
	conf = bpf_map_lookup_elem(&policies, &idx);
	/* A tagged task whose policy cannot be found is refused (flags 0). */
	m->flags = (conf && (conf->flags & SH_PF_VALID)) ? conf->flags : 0;
	return 1;
}

static __always_inline struct scratch *get_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_map, &zero);
}

/*
 * Longest-prefix rule lookup for the resolved path in s->path. len is what
 * bpf_d_path returned (bytes including the NUL). Returns the rule action or
 * 0 when no rule matches.
 */
static __always_inline __u32 lookup_rule(struct scratch *s, const struct member *m,
					 __u8 kind, long len)
{
	__u32 *act, n;

	if (len <= 0)
		return 0;
	n = len > SH_PATH_KEY_MAX ? SH_PATH_KEY_MAX : (__u32)len;
	s->key.slot = m->slot;
	s->key.kind = kind;
	s->key.policy = m->policy;
	bpf_probe_read_kernel(s->key.path, sizeof(s->key.path), s->path);
	s->key.prefixlen = 32 + n * 8;
	act = bpf_map_lookup_elem(&rules, &s->key);
	return act ? *act : 0;
}

/*
 * Record a refusal (or, in audit mode, a would-be refusal) and return what
 * the hook must return.
 */
static __always_inline int report(const struct member *m, struct scratch *s,
				  __u32 hook, __u32 reason, long path_len,
				  __u32 op_flags, __u32 target_pid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	bool audit = m->flags & SH_PF_AUDIT;
	int ret = audit ? 0 : -EPERM;
	struct sh_event *e;

	count(SH_CNT_HOOK(hook, audit ? SH_CNT_AUDIT : SH_CNT_DENY));

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(SH_CNT_DROPPED);
		return ret;
	}
	e->ktime_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->origin = m->origin;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->hook = hook;
	e->action = audit ? SH_EV_AUDIT : SH_EV_DENY;
	e->ret = ret;
	e->reason = reason;
	e->policy = m->policy;
	e->slot = m->slot;
	e->pad0 = 0;
	e->flags = 0;
	e->op_flags = op_flags;
	e->target_pid = target_pid;
	e->path_err = path_len < 0 ? (__s32)path_len : 0;
	e->path_len = 0;
	e->path[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (s && path_len > 0) {
		long n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), s->path);

		if (n > 0)
			e->path_len = n - 1;
	}
	bpf_ringbuf_submit(e, 0);
	return ret;
}

SEC("lsm/task_alloc")
int BPF_PROG(sh_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	struct sh_task *parent, *child;

	if (ret)
		return ret;
	if (!ntagged)
		return 0;
	parent = bpf_task_storage_get(&task_marks, bpf_get_current_task_btf(), 0, 0);
	if (!parent || !parent->origin)
		return 0;
	/* The child belongs to the parent's tree, wherever it is born. */
	child = bpf_task_storage_get(&task_marks, task, 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (child) {
		child->origin = parent->origin;
		child->gen = parent->gen;
		child->cgroup = parent->cgroup;
	}
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(sh_exec, struct linux_binprm *bprm, int ret)
{
	struct member m = {};
	struct scratch *s;
	__u32 act;
	long len;

	if (ret)
		return ret;
	if (!membership(&m))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_EXEC, SH_CNT_CHECK));
	s = get_scratch();
	if (!s)
		return -EPERM;
	if (!m.flags)
		return report(&m, 0, SH_HOOK_EXEC, SH_WHY_NOPOLICY, 0, 0, 0);

	len = bpf_d_path(&bprm->file->f_path, s->path, sizeof(s->path));
	if (len <= 0)
		return report(&m, s, SH_HOOK_EXEC, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG, 0, 0);

	act = lookup_rule(s, &m, SH_KEY_EXEC, len);
	if (act == SH_ACT_DENY)
		return report(&m, s, SH_HOOK_EXEC, SH_WHY_RULE, len, 0, 0);
	if (act != SH_ACT_ALLOW && (m.flags & SH_PF_EXEC_ALLOWLIST))
		return report(&m, s, SH_HOOK_EXEC, SH_WHY_DEFAULT, len, 0, 0);
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(sh_file_open, struct file *file, int ret)
{
	struct member m = {};
	struct scratch *s;
	__u32 act, fmode, fflags;
	bool write;
	long len;

	if (ret)
		return ret;
	if (!membership(&m))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	s = get_scratch();
	if (!s)
		return -EPERM;
	fmode = BPF_CORE_READ(file, f_mode);
	fflags = BPF_CORE_READ(file, f_flags);
	if (!m.flags)
		return report(&m, 0, SH_HOOK_FILE, SH_WHY_NOPOLICY, 0, fflags, 0);

	len = bpf_d_path(&file->f_path, s->path, sizeof(s->path));
	if (len <= 0)
		return report(&m, s, SH_HOOK_FILE, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG, fflags, 0);

	write = (fmode & FMODE_WRITE) || (fflags & O_TRUNC);
	act = lookup_rule(s, &m, SH_KEY_FILE, len);
	if (act == SH_ACT_DENY)
		return report(&m, s, SH_HOOK_FILE, SH_WHY_RULE, len, fflags, 0);
	if (write && act != SH_ACT_WRITE && (m.flags & SH_PF_FILE_WRITELIST))
		return report(&m, s, SH_HOOK_FILE, SH_WHY_DEFAULT, len, fflags, 0);
	return 0;
}
