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
#define F_SETOWN 8
#define F_SETOWN_EX 15
#define F_OWNER_PGRP 2
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CGROUP_SUPER_MAGIC 0x27e0eb
#define BPF_FS_MAGIC 0xcafe4a11
#define CLONE_INTO_CGROUP 0x200000000ULL
#define PROC_SUPER_MAGIC 0x9fa0
#define MNT_INTERNAL 0x4000

#define PROT_EXEC 0x4
#define PTRACE_MODE_NOAUDIT 0x04
#define READING_FIRMWARE 1

#define SH_WALK_MAX_DEPTH 64
#define SH_PATH_MASK (SH_EVENT_PATH_MAX - 1)

char LICENSE[] SEC("license") = "GPL";

/* Set by user space through the skeleton's .bss mapping. */
volatile __u32 active_slot;  /* policy slot in force */
volatile __u64 tag_gen;      /* bumped on every tag or policy change */
volatile __u32 ntagged;      /* tagged cgroups; 0 lets every hook return at once */
volatile __u64 dropped_reported; /* user space: lost events already logged */
volatile __u32 daemon_tgid;  /* sharnessd: no tree may signal or trace it */

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
	char walk[SH_EVENT_PATH_MAX + 256]; /* room for one name past the end */
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
 * the hook must return. path_len is what the resolver returned: the length
 * of s->path including its NUL, or a negative error.
 */
static __always_inline int report(const struct member *m, struct scratch *s,
				  __u32 hook, __u32 op, __u32 reason, long path_len,
				  __u32 evflags, __u32 op_flags, __u32 target_pid)
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
	e->flags = evflags;
	e->op = op;
	e->op_flags = op_flags;
	e->target_pid = target_pid;
	e->path_err = path_len < 0 ? (__s32)path_len : 0;
	e->path_len = 0;
	e->path[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (s && path_len > 1) {
		__u32 n = (path_len - 1) & SH_PATH_MASK;

		if (bpf_probe_read_kernel(e->path, n, s->path) == 0)
			e->path_len = n;
	}
	bpf_ringbuf_submit(e, 0);
	return ret;
}

/*
 * Absolute path of (dentry, vfsmnt), from the root of the mount namespace,
 * into s->path. Used where bpf_d_path is not allowed (the path hooks on
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
	int err;
	bool done;
	bool last;              /* a pseudo or disconnected dentry: its name ends the path */
	__u16 off_mnt_root;     /* struct mount: mnt.mnt_root */
	__u16 off_mnt_parent;   /* struct mount: mnt_parent */
	__u16 off_mountpoint;   /* struct mount: mnt_mountpoint */
	__u16 off_d_parent;     /* struct dentry: d_parent */
	__u16 off_d_len;        /* struct dentry: d_name.len */
	__u16 off_d_name;       /* struct dentry: d_name.name */
};

static __always_inline void *read_ptr(void *base, __u32 off)
{
	void *p = 0;

	bpf_probe_read_kernel(&p, sizeof(p), base + off);
	return p;
}

/* One step of walk_path: prepend one name, or cross one mount. */
static long walk_step(__u32 i, void *data)
{
	struct walk *w = data;
	struct scratch *s = get_scratch();
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
		/* Its own parent but not its mount's root (memfd, pipe, a
		 * disconnected dentry): its name is all there is. */
		w->last = true;
	} else if (w->dentry == root) {
		void *up = read_ptr(w->mnt, w->off_mnt_parent);

		if (up == w->mnt || !up) {
			w->done = true;
			return 1;
		}
		w->dentry = read_ptr(w->mnt, w->off_mountpoint);
		w->mnt = up;
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
	w->dentry = parent;
	if (w->last) {
		w->done = true;
		return 1;
	}
	return 0;
}

/*
 * Absolute path of (dentry, vfsmnt), from the root of the mount namespace,
 * into s->path. Used where bpf_d_path is not allowed (the path hooks on
 * 6.1, the unix peer). Returns the length with its NUL, or -ENAMETOOLONG
 * when the path is deeper or longer than can be judged: the caller refuses.
 */
static __always_inline long walk_path(struct scratch *s, struct dentry *dentry,
				      struct vfsmount *vfsmnt)
{
	struct walk w = {
		.dentry = dentry,
		.mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt),
		.pos = SH_EVENT_PATH_MAX - 1,
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
	__u32 pos;

	if (!dentry || !vfsmnt)
		return -ENAMETOOLONG;
	s->walk[SH_EVENT_PATH_MAX - 1] = 0;
	bpf_loop(SH_WALK_MAX_DEPTH, walk_step, &w, 0);
	if (w.err)
		return w.err;
	if (!w.done)
		return -ENAMETOOLONG;
	pos = w.pos;
	if (pos == SH_EVENT_PATH_MAX - 1) {
		pos -= 1;
		s->walk[pos & SH_PATH_MASK] = '/';
	}
	return bpf_probe_read_kernel_str(s->path, sizeof(s->path), &s->walk[pos & SH_PATH_MASK]);
}

/*
 * File systems a tree may not change at all, whatever its policy: cgroupfs
 * (moving itself out, raising its limits, killing other trees) and bpffs
 * (the enforcer's own pinned state).
 */
static __always_inline bool protected_sb(struct super_block *sb)
{
	unsigned long magic = BPF_CORE_READ(sb, s_magic);

	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC ||
	       magic == BPF_FS_MAGIC;
}

/*
 * /proc/sys on any procfs mount: sysctls name programs the kernel starts as
 * root outside every tree (core_pattern "|...", modprobe) and switch
 * kernel-wide protections. No tree may write them.
 */
static __always_inline bool sysctl_dentry(struct dentry *d)
{
	struct dentry *root, *up;
	char n[3];

	if (BPF_CORE_READ(d, d_sb, s_magic) != PROC_SUPER_MAGIC)
		return false;
	root = BPF_CORE_READ(d, d_sb, s_root);
	for (int i = 0; i < 16; i++) {
		up = BPF_CORE_READ(d, d_parent);
		if (up == d)
			return false;
		if (up == root) {
			if (BPF_CORE_READ(d, d_name.len) != 3)
				return false;
			bpf_probe_read_kernel(n, 3, BPF_CORE_READ(d, d_name.name));
			return n[0] == 's' && n[1] == 'y' && n[2] == 's';
		}
		d = up;
	}
	return true; /* deeper than any sysctl: refuse rather than guess */
}

/* Is task p a member of the tree rooted at the tagged cgroup `origin`? */
static __always_inline bool in_tree(struct task_struct *p, __u64 origin)
{
	struct sh_task *t = bpf_task_storage_get(&task_marks, p, 0, 0);
	struct cgroup *cg;

	if (t && t->origin == origin)
		return true;
	cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
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

SEC("lsm/task_alloc")
int BPF_PROG(sh_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	struct sh_task *parent, *child;

	if (ret)
		return ret;
	if (!ntagged)
		return 0;
	if (clone_flags & CLONE_INTO_CGROUP) {
		struct member m = {};

		/* Born in another cgroup would be a way out: refused. */
		if (membership(&m))
			return report(&m, 0, SH_HOOK_CGROUP, SH_OP_CLONE_INTO_CGROUP,
				      SH_WHY_FORBIDDEN, 0, 0, 0, 0);
	}
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
		return report(&m, 0, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_NOPOLICY, 0, 0, 0, 0);

	len = bpf_d_path(&bprm->file->f_path, s->path, sizeof(s->path));
	if (len <= 0)
		return report(&m, s, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG, 0, 0, 0);
	/* A file with no name left (memfd_create, unlinked) matches no rule
	 * written for what is on disk: never executed by a tree. */
	if (BPF_CORE_READ(bprm, file, f_inode, i_nlink) == 0)
		return report(&m, s, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_DELETED, len, 0, 0, 0);

	act = lookup_rule(s, &m, SH_KEY_EXEC, len);
	if (act == SH_ACT_DENY)
		return report(&m, s, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_RULE, len, 0, 0, 0);
	if (act != SH_ACT_ALLOW && (m.flags & SH_PF_EXEC_ALLOWLIST))
		return report(&m, s, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_DEFAULT, len, 0, 0, 0);
	return 0;
}

/*
 * Opening a file, or receiving one over SCM_RIGHTS (judged as if opened).
 * Only what a rule can decide costs a path: reads matter to deny rules,
 * writes to write and deny rules, and to the file systems no tree may
 * change. use_d_path: the hook may call bpf_d_path (file_open); elsewhere
 * the path comes from walk_path.
 */
static __always_inline int judge_open(struct member *m, struct file *file, __u32 op,
				      __u32 fflags, bool write, bool use_d_path)
{
	struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
	struct super_block *sb = BPF_CORE_READ(dentry, d_sb);
	__u32 act, evf = write ? SH_EVF_WRITE : 0;
	bool cg = false, sysctl = false;
	struct scratch *s;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_FILE, op, SH_WHY_NOPOLICY, 0, evf, fflags, 0);
	/* Kernel-internal mounts (pidfs, pipes, sockets, anonymous inodes,
	 * memfd) hold no file a rule can name; what such a file is used for
	 * is judged where it is used (exec, mmap, kill, ptrace). */
	if (BPF_CORE_READ(file, f_path.mnt, mnt_flags) & MNT_INTERNAL)
		return 0;
	if (write) {
		cg = protected_sb(sb);
		sysctl = !cg && sysctl_dentry(dentry);
	}
	if (!cg && !sysctl && !(m->flags & SH_PF_FILE_DENY) &&
	    !(write && (m->flags & SH_PF_FILE_WRITELIST)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	if (use_d_path)
		len = bpf_d_path(&file->f_path, s->path, sizeof(s->path));
	else
		len = walk_path(s, dentry, BPF_CORE_READ(file, f_path.mnt));
	if (len <= 0)
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_UNRESOLVED,
			      len ? len : -ENAMETOOLONG, evf, fflags, 0);
	if (cg || sysctl)
		return report(m, s, cg ? SH_HOOK_CGROUP : SH_HOOK_FILE, op, SH_WHY_FORBIDDEN,
			      len, evf, fflags, 0);
	act = lookup_rule(s, m, SH_KEY_FILE, len);
	if (act == SH_ACT_DENY)
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_RULE, len, evf, fflags, 0);
	if (write && act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST))
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_DEFAULT, len, evf, fflags, 0);
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(sh_file_open, struct file *file, int ret)
{
	struct member m = {};
	__u32 fflags;

	if (ret)
		return ret;
	if (!membership(&m))
		return 0;
	fflags = BPF_CORE_READ(file, f_flags);
	return judge_open(&m, file, SH_OP_OPEN, fflags,
			  (BPF_CORE_READ(file, f_mode) & FMODE_WRITE) || (fflags & O_TRUNC), true);
}

/*
 * A change to the name space at (dentry, mnt): allowed where the policy lets
 * the tree write. Deny rules refuse it too.
 */
static __always_inline int judge_write(struct member *m, struct dentry *dentry,
				       struct vfsmount *mnt, __u32 op)
{
	struct scratch *s;
	__u32 act;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_FILE, op, SH_WHY_NOPOLICY, 0, SH_EVF_WRITE, 0, 0);
	if (protected_sb(BPF_CORE_READ(dentry, d_sb))) {
		s = get_scratch();
		if (!s)
			return -EPERM;
		return report(m, s, SH_HOOK_CGROUP, op, SH_WHY_FORBIDDEN,
			      walk_path(s, dentry, mnt), SH_EVF_WRITE, 0, 0);
	}
	if (!(m->flags & (SH_PF_FILE_WRITELIST | SH_PF_FILE_DENY)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	len = walk_path(s, dentry, mnt);
	if (len <= 0)
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_UNRESOLVED,
			      len ? len : -ENAMETOOLONG, SH_EVF_WRITE, 0, 0);
	act = lookup_rule(s, m, SH_KEY_FILE, len);
	if (act == SH_ACT_DENY)
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_RULE, len, SH_EVF_WRITE, 0, 0);
	if (act != SH_ACT_WRITE && (m->flags & SH_PF_FILE_WRITELIST))
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_DEFAULT, len, SH_EVF_WRITE, 0, 0);
	return 0;
}

/* Each hook: pass an earlier refusal on, return at once for outsiders. */
#define ENTER(ret, m)							\
	do {								\
		if (ret)						\
			return ret;					\
		if (!membership(&(m)))					\
			return 0;					\
	} while (0)

SEC("lsm/path_mknod")
int BPF_PROG(sh_path_mknod, const struct path *dir, struct dentry *dentry,
	     umode_t mode, unsigned int dev, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, dentry, dir->mnt, SH_OP_CREATE);
}

SEC("lsm/path_unlink")
int BPF_PROG(sh_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, dentry, dir->mnt, SH_OP_UNLINK);
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
	return judge_write(&m, dentry, dir->mnt, SH_OP_SYMLINK);
}

/*
 * A hard link gives the file a second name: both must be writable, or a
 * link would turn a file the tree may only read (or not touch) into one it
 * may write under the new name.
 */
SEC("lsm/path_link")
int BPF_PROG(sh_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	ret = judge_write(&m, old_dentry, new_dir->mnt, SH_OP_LINK_FROM);
	if (ret)
		return ret;
	return judge_write(&m, new_dentry, new_dir->mnt, SH_OP_LINK_TO);
}

SEC("lsm/path_rename")
int BPF_PROG(sh_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry,
	     unsigned int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	ret = judge_write(&m, old_dentry, old_dir->mnt, SH_OP_RENAME_FROM);
	if (ret)
		return ret;
	return judge_write(&m, new_dentry, new_dir->mnt, SH_OP_RENAME_TO);
}

SEC("lsm/path_truncate")
int BPF_PROG(sh_path_truncate, const struct path *path, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_TRUNCATE);
}

SEC("lsm/path_chmod")
int BPF_PROG(sh_path_chmod, const struct path *path, umode_t mode, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_CHMOD);
}

/* kuid_t and kgid_t are passed as 32-bit values; they are not needed. */
SEC("lsm/path_chown")
int BPF_PROG(sh_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_write(&m, path->dentry, path->mnt, SH_OP_CHOWN);
}

/*
 * chroot would make bpf_d_path (relative to the process root) disagree
 * with the paths rules are written for; no tree may change its root.
 */
SEC("lsm/path_chroot")
int BPF_PROG(sh_path_chroot, const struct path *path, int ret)
{
	struct member m = {};
	struct scratch *s;
	long len;

	ENTER(ret, m);
	s = get_scratch();
	if (!s)
		return -EPERM;
	len = walk_path(s, path->dentry, path->mnt);
	return report(&m, s, SH_HOOK_CHROOT, SH_OP_CHROOT, SH_WHY_FORBIDDEN, len, 0, 0, 0);
}

/* ---- unix sockets: judged on the peer socket the kernel found ---------- */

static __always_inline int judge_unix_peer(struct member *m, struct sock *peer, __u32 op)
{
	struct unix_sock *u = (void *)peer;
	struct unix_address *addr;
	struct dentry *dentry;
	struct scratch *s;
	__u32 act;
	long len;
	int alen;

	count(SH_CNT_HOOK(SH_HOOK_CONNECT, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_CONNECT, op, SH_WHY_NOPOLICY, 0, 0, 0, 0);
	if (!(m->flags & (SH_PF_CONNECT_RULES | SH_PF_ABSTRACT_DENY)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	dentry = BPF_CORE_READ(u, path.dentry);
	if (dentry) {
		if (!(m->flags & SH_PF_CONNECT_RULES))
			return 0;
		len = walk_path(s, dentry, BPF_CORE_READ(u, path.mnt));
		if (len <= 0)
			return report(m, s, SH_HOOK_CONNECT, op, SH_WHY_UNRESOLVED,
				      len ? len : -ENAMETOOLONG, 0, 0, 0);
		act = lookup_rule(s, m, SH_KEY_CONNECT, len);
		if (act == SH_ACT_DENY)
			return report(m, s, SH_HOOK_CONNECT, op, SH_WHY_RULE, len, 0, 0, 0);
		return 0;
	}
	/* No file: an abstract name (sun_path starts with NUL), or unnamed. */
	addr = BPF_CORE_READ(u, addr);
	if (!addr || !(m->flags & SH_PF_ABSTRACT_DENY))
		return 0;
	alen = BPF_CORE_READ(addr, len) - (int)sizeof(__u16);
	if (alen <= 0)
		return 0;
	if (alen > 108)
		alen = 108;
	/* "@" then the name's bytes, NULs included (the record keeps them). */
	s->path[0] = '@';
	bpf_probe_read_kernel(&s->path[1], (alen - 1) & 0x7f,
			      (void *)addr->name[0].sun_path + 1);
	return report(m, s, SH_HOOK_CONNECT, op, SH_WHY_ABSTRACT, alen + 1,
		      SH_EVF_ABSTRACT, 0, 0);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(sh_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_unix_peer(&m, other, SH_OP_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(sh_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_unix_peer(&m, BPF_CORE_READ(other, sk), SH_OP_SEND);
}

/* ---- signals ------------------------------------------------------------ */

SEC("lsm/task_kill")
int BPF_PROG(sh_task_kill, struct task_struct *p, struct kernel_siginfo *info,
	     int sig, const struct cred *cred, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_SIGNAL, SH_CNT_CHECK));
	if (!m.flags)
		return report(&m, 0, SH_HOOK_SIGNAL, SH_OP_KILL, SH_WHY_NOPOLICY, 0, 0,
			      sig, BPF_CORE_READ(p, tgid));
	/* Signal 0 delivers nothing: it only asks whether p exists. */
	if (sig != 0 && daemon_tgid && (__u32)BPF_CORE_READ(p, tgid) == daemon_tgid)
		return report(&m, 0, SH_HOOK_SIGNAL, SH_OP_KILL, SH_WHY_PROTECTED, 0, 0, sig,
			      daemon_tgid);
	if (!(m.flags & SH_PF_SIGNAL_TREE) || sig == 0)
		return 0;
	if (in_tree(p, m.origin))
		return 0;
	return report(&m, 0, SH_HOOK_SIGNAL, SH_OP_KILL, SH_WHY_SCOPE, 0, 0, sig,
		      BPF_CORE_READ(p, tgid));
}

/*
 * F_SETOWN and its kin make the kernel send SIGIO/SIGURG to another process
 * later, outside task_kill. With scope = tree a process may name only
 * itself as the owner.
 */
static __always_inline int judge_setown(struct member *m, int owner, __u32 cmd)
{
	__u64 id = bpf_get_current_pid_tgid();

	count(SH_CNT_HOOK(SH_HOOK_SIGNAL, SH_CNT_CHECK));
	if (m->flags && !(m->flags & SH_PF_SIGNAL_TREE))
		return 0;
	if (m->flags && (owner == 0 || owner == (int)(id >> 32) || owner == (int)(__u32)id))
		return 0;
	return report(m, 0, SH_HOOK_SIGNAL, SH_OP_SETOWN,
		      m->flags ? SH_WHY_SCOPE : SH_WHY_NOPOLICY, 0, 0, cmd,
		      owner < 0 ? -owner : owner);
}

SEC("lsm/file_fcntl")
int BPF_PROG(sh_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	struct member m = {};
	struct { int type; int pid; } ex;

	if (ret)
		return ret;
	if (cmd != F_SETOWN && cmd != F_SETOWN_EX)
		return 0;
	if (!membership(&m))
		return 0;
	if (cmd == F_SETOWN)
		return judge_setown(&m, (int)arg, cmd);
	/* Unreadable argument: the kernel would fail too; refuse it here. */
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)arg))
		return judge_setown(&m, -1, cmd);
	return judge_setown(&m, ex.type == F_OWNER_PGRP ? -ex.pid : ex.pid, cmd);
}

static __always_inline int judge_ioctl(unsigned int cmd, unsigned long arg, int ret)
{
	struct member m = {};
	int owner;

	if (ret)
		return ret;
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP)
		return 0;
	if (!membership(&m))
		return 0;
	if (bpf_probe_read_user(&owner, sizeof(owner), (void *)arg))
		owner = -1;
	return judge_setown(&m, owner, cmd);
}

SEC("lsm/file_ioctl")
int BPF_PROG(sh_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return judge_ioctl(cmd, arg, ret);
}

/*
 * A 32-bit program's ioctl goes through compat_sys_ioctl, which calls this
 * hook instead of file_ioctl (on kernels that have it; user space loads
 * this program only there). arg is a 32-bit user pointer.
 */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(sh_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg,
	     int ret)
{
	return judge_ioctl(cmd, (__u32)arg, ret);
}

/*
 * The kernel sending SIGIO/SIGURG to a file's owner while a tree process
 * does I/O on it: an owner set before the file reached the tree must not
 * become a way to signal outside it.
 */
SEC("lsm/file_send_sigiotask")
int BPF_PROG(sh_file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown,
	     int sig, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_SIGNAL, SH_CNT_CHECK));
	if (m.flags && !(m.flags & SH_PF_SIGNAL_TREE))
		return 0;
	if (m.flags && in_tree(tsk, m.origin))
		return 0;
	return report(&m, 0, SH_HOOK_SIGNAL, SH_OP_KILL,
		      m.flags ? SH_WHY_SCOPE : SH_WHY_NOPOLICY, 0, 0, sig ? sig : 29,
		      BPF_CORE_READ(tsk, tgid));
}

/* ---- code that runs without an exec ------------------------------------- */

/*
 * An executable mapping of a file is judged like an exec: allowed where
 * the exec rules allow it, or where a `lib` rule (by default the system
 * library directories) lets it be mapped. This closes running a payload
 * through the dynamic loader, LD_PRELOAD and dlopen of libraries the policy
 * does not allow, and mapping deleted or in-memory files.
 */
static __always_inline int judge_exec_map(struct member *m, struct file *file, __u32 op,
					  __u32 prot)
{
	struct scratch *s;
	__u32 act;
	long len;

	bool deleted;

	count(SH_CNT_HOOK(SH_HOOK_MMAP, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_MMAP, op, SH_WHY_NOPOLICY, 0, 0, prot, 0);
	deleted = BPF_CORE_READ(file, f_inode, i_nlink) == 0;
	if (!deleted && !(m->flags & SH_PF_EXEC_RULES))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	len = walk_path(s, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt));
	if (len <= 0)
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_UNRESOLVED,
			      len ? len : -ENAMETOOLONG, 0, prot, 0);
	if (deleted)
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_DELETED, len, 0, prot, 0);
	act = lookup_rule(s, m, SH_KEY_EXEC, len);
	if (act == SH_ACT_DENY)
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_RULE, len, 0, prot, 0);
	if (act != SH_ACT_ALLOW && act != SH_ACT_LIB && (m->flags & SH_PF_EXEC_ALLOWLIST))
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_DEFAULT, len, 0, prot, 0);
	return 0;
}

SEC("lsm/mmap_file")
int BPF_PROG(sh_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	struct member m = {};

	if (ret)
		return ret;
	if (!file || !(prot & PROT_EXEC))
		return 0;
	if (!membership(&m))
		return 0;
	return judge_exec_map(&m, file, SH_OP_MMAP_EXEC, prot);
}

SEC("lsm/file_mprotect")
int BPF_PROG(sh_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot,
	     unsigned long prot, int ret)
{
	struct member m = {};
	struct file *file;

	if (ret)
		return ret;
	if (!(prot & PROT_EXEC))
		return 0;
	file = vma->vm_file;
	if (!file)
		return 0;
	if (!membership(&m))
		return 0;
	return judge_exec_map(&m, file, SH_OP_MPROTECT_EXEC, prot);
}

/* A descriptor passed in over SCM_RIGHTS is judged as if it were opened.
 * (bpf_d_path is not allowed here on 6.1.) */
SEC("lsm/file_receive")
int BPF_PROG(sh_file_receive, struct file *file, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_open(&m, file, SH_OP_RECEIVE, 0,
			  BPF_CORE_READ(file, f_mode) & FMODE_WRITE, false);
}

/* ---- a tree cannot take the wall down ----------------------------------- */

/* Operations no tree may perform, whatever its policy and its uid. */
static __always_inline int forbid(struct member *m, __u32 hook, __u32 op, __u32 op_flags)
{
	count(SH_CNT_HOOK(hook, SH_CNT_CHECK));
	return report(m, 0, hook, op, SH_WHY_FORBIDDEN, 0, 0, op_flags, 0);
}

static __always_inline int forbid_at(struct member *m, __u32 hook, __u32 op,
				     struct dentry *dentry, struct vfsmount *mnt)
{
	struct scratch *s = get_scratch();

	count(SH_CNT_HOOK(hook, SH_CNT_CHECK));
	if (!s)
		return -EPERM;
	return report(m, s, hook, op, SH_WHY_FORBIDDEN, walk_path(s, dentry, mnt), 0, 0, 0);
}

/* bpf(): listing, detaching or rewriting programs and maps. */
SEC("lsm/bpf")
int BPF_PROG(sh_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid(&m, SH_HOOK_BPF, SH_OP_BPF, cmd);
}

SEC("lsm/sb_mount")
int BPF_PROG(sh_sb_mount, const char *dev_name, const struct path *path,
	     const char *type, unsigned long flags, void *data, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid_at(&m, SH_HOOK_MOUNT, SH_OP_MOUNT, path->dentry, path->mnt);
}

SEC("lsm/sb_umount")
int BPF_PROG(sh_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid_at(&m, SH_HOOK_MOUNT, SH_OP_UMOUNT, mnt->mnt_root, mnt);
}

SEC("lsm/move_mount")
int BPF_PROG(sh_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid_at(&m, SH_HOOK_MOUNT, SH_OP_MOVE_MOUNT, to_path->dentry, to_path->mnt);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(sh_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid_at(&m, SH_HOOK_MOUNT, SH_OP_PIVOT_ROOT, new_path->dentry, new_path->mnt);
}

/* New user namespaces (and with them new mount namespaces for non-root). */
SEC("lsm/userns_create")
int BPF_PROG(sh_userns_create, const struct cred *cred, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid(&m, SH_HOOK_NAMESPACE, SH_OP_USERNS, 0);
}

/*
 * ptrace, process_vm_readv/writev and /proc/PID/mem of anything outside
 * the tree (and of sharnessd). Reads of /proc/PID/... that the kernel marks
 * NOAUDIT (ps and friends probing) are refused without an event.
 */
SEC("lsm/ptrace_access_check")
int BPF_PROG(sh_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	struct member m = {};
	__u32 tgid;

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_PTRACE, SH_CNT_CHECK));
	tgid = BPF_CORE_READ(child, tgid);
	if (tgid != daemon_tgid && in_tree(child, m.origin))
		return 0;
	if (mode & PTRACE_MODE_NOAUDIT)
		return (m.flags & SH_PF_AUDIT) ? 0 : -EPERM;
	return report(&m, 0, SH_HOOK_PTRACE, SH_OP_PTRACE,
		      tgid == daemon_tgid ? SH_WHY_PROTECTED : SH_WHY_SCOPE, 0, 0, mode, tgid);
}

/* init_module() */
SEC("lsm/kernel_load_data")
int BPF_PROG(sh_kernel_load_data, enum kernel_load_data_id id, bool contents, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid(&m, SH_HOOK_MODULE, SH_OP_MODULE_LOAD, id);
}

/* finit_module(), kexec and policy files read by the kernel; firmware
 * requested by a driver on a tree's behalf is left alone. */
SEC("lsm/kernel_read_file")
int BPF_PROG(sh_kernel_read_file, struct file *file, enum kernel_read_file_id id,
	     bool contents, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	if (id == READING_FIRMWARE)
		return 0;
	return forbid(&m, SH_HOOK_MODULE, SH_OP_MODULE_LOAD, id);
}

/* Module autoloading (request_module) on a tree's behalf. */
SEC("lsm/kernel_module_request")
int BPF_PROG(sh_kernel_module_request, char *kmod_name, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return forbid(&m, SH_HOOK_MODULE, SH_OP_MODULE_REQUEST, 0);
}
