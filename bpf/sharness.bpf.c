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
#define EXDEV 18
#define ENAMETOOLONG 36
#define ESTALE 116

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

/* File systems whose files are kernel knobs: no tree writes to them. */
#define SYSFS_MAGIC 0x62656572
#define SECURITYFS_MAGIC 0x73636673
#define DEBUGFS_MAGIC 0x64626720
#define TRACEFS_MAGIC 0x74726163
#define CONFIGFS_MAGIC 0x62656570
#define BINFMTFS_MAGIC 0x42494e4d
#define PSTOREFS_MAGIC 0x6165676c
#define EFIVARFS_MAGIC 0xde5e81e4
#define SELINUX_MAGIC 0xf97cff8c
#define SMACK_MAGIC 0x43415d53
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#define NFSD_MAGIC 0x6e667364
#define MQUEUE_MAGIC 0x19800202
#define RPC_PIPEFS_MAGIC 0x67596969

#define S_IFMT 00170000
#define S_IFBLK 0060000
#define S_IFCHR 0020000
/* The kernel's dev_t: major in the bits above 20. */
#define DEV_MAJOR(d) ((__u32)(d) >> 20)
#define DEV_MINOR(d) ((__u32)(d) & 0xfffff)
#define __O_TMPFILE 020000000

/* Terminal and console ioctls (asm-generic/ioctls.h, linux/kd.h, linux/vt.h). */
#define TIOCSCTTY 0x540E
#define TIOCSTI 0x5412
#define TIOCLINUX 0x541C
#define TIOCCONS 0x541D
#define TIOCVHANGUP 0x5437
/* Inode flags: chattr (linux/fs.h; the 32-bit FS_IOC32_SETFLAGS too). */
#define FS_IOC_SETFLAGS 0x40086602
#define FS_IOC32_SETFLAGS 0x40046602
#define FS_IOC_FSSETXATTR 0x401c5820
#define FS_IOC_ENABLE_VERITY 0x40806685   /* makes the file read-only for good */
#define BTRFS_IOC_SUBVOL_SETFLAGS 0x4008941a

#define ATTR_MODE (1 << 0)
#define ATTR_UID (1 << 1)
#define ATTR_GID (1 << 2)
#define ATTR_SIZE (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)

#define CAP_OPT_NOAUDIT (1 << 1)
#define PIDTYPE_PID 0

#define PROT_EXEC 0x4
#define PTRACE_MODE_NOAUDIT 0x04
#define READING_FIRMWARE 1

#define SH_WALK_MAX_DEPTH 64
/* The deepest path that fits in PATH_MAX ("/a" per level). */
#define SH_UP_MAX_DEPTH (SH_EVENT_PATH_MAX / 2)
/* Mounts of one file system examined to name a dentry (xattr, times): at
 * most SCAN entries of its mount list, of which at most MAX (a power of
 * two) in the task's namespace. None allowing it: refused. */
#define SH_SB_MOUNTS_SCAN 64
#define SH_SB_MOUNTS_MAX 8
#define SH_PATH_MASK (SH_EVENT_PATH_MAX - 1)

char LICENSE[] SEC("license") = "GPL";

/* Set by user space through the skeleton's .bss mapping. */
volatile __u32 active_slot;  /* policy slot in force */
volatile __u64 tag_gen;      /* bumped on every tag or policy change */
volatile __u32 ntagged;      /* tagged cgroups; 0 lets every hook return at once */
volatile __u64 dropped_reported; /* user space: lost events already logged */
volatile __u32 daemon_tgid;  /* sharnessd: no tree may signal or trace it */
volatile __u64 ctl_ino;      /* sharnessd's control socket: no tree connects to it */
volatile __u32 ctl_dev;      /*   (inode number and kernel dev_t of its file) */
volatile __u32 nprotected;   /* entries in protected_inodes; 0 skips the lookups */
volatile __u64 mmap_min_addr; /* vm.mmap_min_addr when the daemon started (0: 65536) */
volatile __u32 host_ipc_ns;  /* the daemon's IPC namespace (inode number): the host's */

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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_PROTECTED);
	__type(key, struct sh_inode_key);
	__type(value, __u32);               /* enum sh_protect */
} protected_inodes SEC(".maps");

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
	int err;        /* why the path in `path` is not the object's (report) */
	__u32 ncands;
	__u64 cands[8]; /* mounts to name a dentry through (judge_dentry_change) */
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
	__u64 caps;     /* capabilities the policy allows back */
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
	m->caps = m->flags ? conf->caps : 0;
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
	if (s && s->err) {
		/* A name for the record, and why it is not the object's. */
		e->path_err = s->err;
		s->err = 0;
	}
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

#define walk_path(s, d, m) walk_path_opt(s, d, m, false, false)
#define name_path(s, d, m) walk_path_opt(s, d, m, true, false)
/* A unix peer's path, as its binder named it: in its own mount namespace
 * (a service with a private /tmp, a container), where the rules name it. */
#define peer_path(s, d, m) walk_path_opt(s, d, m, false, true)

/* One step up from w->dentry towards the mount's root (file_resolvable). */
struct up_walk {
	void *dentry;
	void *root;
	__u16 off_d_parent;
	bool connected;
};

static long up_step(__u32 i, void *data)
{
	struct up_walk *w = data;
	void *parent;

	if (w->dentry == w->root) {
		w->connected = true;
		return 1;
	}
	parent = read_ptr(w->dentry, w->off_d_parent);
	if (!parent || parent == w->dentry)
		return 1; /* a root that is not the mount's: disconnected */
	w->dentry = parent;
	return 0;
}

/*
 * Does the path of an open file still name it, in the task's own mount
 * namespace? 0, or the reason it does not: -EXDEV, its mount is not
 * attached there (a detached tree from open_tree or fsmount, a lazily
 * unmounted one); -ESTALE, the dentry is no longer reachable from its
 * mount's root (a file handle's disconnected dentry) or no longer hashed
 * (unlinked or replaced: an O_PATH descriptor reopened through
 * /proc/self/fd). bpf_d_path gives a string in every one of these cases
 * ("/", or a name with " (deleted)"); none is the object's real path. A
 * new O_TMPFILE file is unhashed by nature and is judged by its directory.
 */
static __always_inline int file_resolvable(struct file *file, bool tmpfile)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vfsmount *vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	struct mount *mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
	struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
	struct up_walk w = {
		.dentry = dentry,
		.root = BPF_CORE_READ(vfsmnt, mnt_root),
		.off_d_parent = bpf_core_field_offset(struct dentry, d_parent),
	};

	if (BPF_CORE_READ(mnt, mnt_ns) != BPF_CORE_READ(task, nsproxy, mnt_ns))
		return -EXDEV;
	if (!tmpfile && !BPF_CORE_READ(dentry, d_hash.pprev) &&
	    BPF_CORE_READ(dentry, d_parent) != dentry)
		return -ESTALE;
	bpf_loop(SH_UP_MAX_DEPTH, up_step, &w, 0);
	return w.connected ? 0 : -ESTALE;
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
 * File systems whose files are the kernel's own knobs, refused to every
 * tree whatever its policy: sysfs attributes (devices, power, firmware),
 * securityfs (LSM policy), debugfs and tracefs (tracing runs code on every
 * process), configfs (creates kernel objects), binfmt_misc (registers
 * interpreters the kernel then runs for processes outside the tree),
 * pstore, efivarfs, selinuxfs, smackfs, fusectl, nfsd (the host's NFS
 * server) and rpc_pipefs.
 */
static __always_inline bool knob_sb(struct super_block *sb)
{
	unsigned long magic = BPF_CORE_READ(sb, s_magic);

	return magic == SYSFS_MAGIC || magic == SECURITYFS_MAGIC || magic == DEBUGFS_MAGIC ||
	       magic == TRACEFS_MAGIC || magic == CONFIGFS_MAGIC || magic == BINFMTFS_MAGIC ||
	       magic == PSTOREFS_MAGIC || magic == EFIVARFS_MAGIC || magic == SELINUX_MAGIC ||
	       magic == SMACK_MAGIC || magic == FUSE_CTL_SUPER_MAGIC || magic == NFSD_MAGIC ||
	       magic == RPC_PIPEFS_MAGIC;
}

static __always_inline __u32 protection(struct inode *inode)
{
	struct sh_inode_key k = {};
	__u32 *v;

	if (!inode)
		return 0;
	k.ino = BPF_CORE_READ(inode, i_ino);
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	v = bpf_map_lookup_elem(&protected_inodes, &k);
	return v ? *v : 0;
}

/*
 * Is this one of sharnessd's own files, which no tree may change (write:
 * the file, or a file in a protected directory) or, for the audit log,
 * read? Judged on the inode, so hard links and other mounts of the same
 * file do not get around it.
 */
static __always_inline bool daemon_file(struct dentry *d, bool write, bool rename)
{
	__u32 own;

	if (!nprotected)
		return false;
	own = protection(BPF_CORE_READ(d, d_inode));
	if (own & SH_PROT_READ)
		return true;
	if (!write)
		return false;
	if ((own & SH_PROT_WRITE) || (rename && (own & SH_PROT_NAME)))
		return true;
	return protection(BPF_CORE_READ(d, d_parent, d_inode)) & SH_PROT_WRITE;
}

/*
 * A dentry that is its own parent but not its mount's root: disconnected
 * (a file handle's, after its dentry was evicted). No path names it, and
 * no directory it is in can be seen: refused whatever the policy, the
 * cheap check first (a full walk follows where a rule must decide).
 */
static __always_inline bool disconnected(struct dentry *d, struct vfsmount *mnt)
{
	return BPF_CORE_READ(d, d_parent) == d && BPF_CORE_READ(mnt, mnt_root) != d;
}

/*
 * Device nodes every tree may open: the memory devices (null, zero, full,
 * random, urandom; /dev/mem and /dev/port need CAP_SYS_RAWIO, which no
 * tree has; /dev/kmsg is left out), /dev/tty, /dev/console, /dev/ptmx and
 * the pty slaves. Every other device -- block devices (raw bytes under
 * every file rule), SCSI generic and bsg, NVMe generic, input and uinput,
 * kvm, tun, fuse, serial lines and virtual consoles, and any a later
 * kernel adds -- only where a `[file] device` rule names it.
 */
static __always_inline bool default_device(__u32 mode, __u32 rdev)
{
	__u32 major = DEV_MAJOR(rdev);

	if ((mode & S_IFMT) != S_IFCHR)
		return false;
	return (major == 1 && DEV_MINOR(rdev) != 11) || major == 5 ||
	       (major >= 136 && major <= 143);
}

/* Is the current task in the host's IPC namespace (the daemon's)? */
static __always_inline bool in_host_ipc_ns(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return host_ipc_ns && BPF_CORE_READ(task, nsproxy, ipc_ns, ns.inum) == host_ipc_ns;
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

/*
 * procfs: a tree may write only the per-process files of its own members
 * (/proc/PID/... with PID in the tree, which /proc/self resolves to), its
 * network files (/proc/PID/net) excepted.
 * Everything else is the host's: /proc/sys (core_pattern and modprobe
 * name programs the kernel runs as root), /proc/sysrq-trigger, and the
 * files of processes outside the tree (oom_score_adj, comm, attr/...).
 */
static __always_inline bool proc_write_forbidden(struct dentry *d, __u64 origin)
{
	struct dentry *root = BPF_CORE_READ(d, d_sb, s_root), *up;
	struct proc_inode *pi;
	struct hlist_node *first;
	struct task_struct *p;
	struct pid *pid;
	char c = 0;

	for (int i = 0; i < 16; i++) {
		char n[4] = {};

		up = BPF_CORE_READ(d, d_parent);
		if (up == d)
			return true; /* not under the root: refuse rather than guess */
		if (up == root)
			break;
		/* /proc/PID/net/... is the host's network namespace (firewall
		 * state, the NFS export cache), not the process's own. */
		if (BPF_CORE_READ(d, d_name.len) == 3) {
			bpf_probe_read_kernel(n, 3, BPF_CORE_READ(d, d_name.name));
			if (n[0] == 'n' && n[1] == 'e' && n[2] == 't')
				return true;
		}
		d = up;
	}
	if (BPF_CORE_READ(d, d_parent) != root)
		return true; /* deeper than any per-process file */
	bpf_probe_read_kernel(&c, 1, BPF_CORE_READ(d, d_name.name));
	if (c < '0' || c > '9')
		return true; /* sys, sysrq-trigger, ...: the host's */
	pi = (void *)BPF_CORE_READ(d, d_inode) - bpf_core_field_offset(struct proc_inode, vfs_inode);
	pid = BPF_CORE_READ(pi, pid);
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);
	if (!first)
		return true; /* the process is gone */
	p = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	return !cg_in_tree(BPF_CORE_READ(p, cgroups, dfl_cgrp), origin);
}

/* May a tree change (write, create, remove, set attributes of) this dentry's
 * file system at all? 0, or the hook to report the refusal under. */
static __always_inline __u32 forbidden_fs(struct dentry *dentry, __u64 origin)
{
	struct super_block *sb = BPF_CORE_READ(dentry, d_sb);

	if (protected_sb(sb))
		return SH_HOOK_CGROUP;
	if (knob_sb(sb))
		return SH_HOOK_FILE;
	if (BPF_CORE_READ(sb, s_magic) == PROC_SUPER_MAGIC && proc_write_forbidden(dentry, origin))
		return SH_HOOK_FILE;
	return 0;
}

/* Is task p a member of the tree rooted at the tagged cgroup `origin`? */
static __always_inline bool in_tree(struct task_struct *p, __u64 origin)
{
	struct sh_task *t = bpf_task_storage_get(&task_marks, p, 0, 0);

	if (t && t->origin == origin)
		return true;
	return cg_in_tree(BPF_CORE_READ(p, cgroups, dfl_cgrp), origin);
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
	int err;

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
	/* Through a detached mount, a handle or a replaced file, the path
	 * above is not the object's: refused. */
	err = file_resolvable(bprm->file, false);
	if (err) {
		s->err = err;
		return report(&m, s, SH_HOOK_EXEC, SH_OP_EXEC, SH_WHY_UNRESOLVED, len, 0, 0, 0);
	}

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
	struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
	bool tmpfile = (fflags & __O_TMPFILE) != 0, blk, dis;
	__u32 act, evf = write ? SH_EVF_WRITE : 0, knob = 0, mode;
	struct scratch *s;
	long len;
	int err;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_FILE, op, SH_WHY_NOPOLICY, 0, evf, fflags, 0);
	/* The host's POSIX message queues (mq_open): see ipc_permission. */
	if (BPF_CORE_READ(dentry, d_sb, s_magic) == MQUEUE_MAGIC && in_host_ipc_ns())
		return report(m, 0, SH_HOOK_IPC, SH_OP_IPC, SH_WHY_FORBIDDEN, 0, evf, fflags, 0);
	/* Kernel-internal mounts (pidfs, pipes, sockets, anonymous inodes,
	 * memfd) hold no file a rule can name; what such a file is used for
	 * is judged where it is used (exec, mmap, kill, ptrace). */
	if (BPF_CORE_READ(mnt, mnt_flags) & MNT_INTERNAL)
		return 0;
	/* A block device holds the raw bytes of file systems: through it
	 * every file rule could be read around or written around. */
	dis = disconnected(dentry, mnt);
	if (dis || daemon_file(dentry, write, false)) {
		s = get_scratch();
		if (!s)
			return -EPERM;
		len = use_d_path ? bpf_d_path(&file->f_path, s->path, sizeof(s->path))
				 : name_path(s, dentry, mnt);
		s->err = dis ? -ESTALE : 0;
		return report(m, s, SH_HOOK_FILE, op, dis ? SH_WHY_UNRESOLVED : SH_WHY_PROTECTED,
			      len, evf, fflags, 0);
	}
	/* A device node other than the harmless ones is judged by `device`
	 * rules below: a disk holds the raw bytes under every file rule. */
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	blk = ((mode & S_IFMT) == S_IFBLK || (mode & S_IFMT) == S_IFCHR) &&
	      !default_device(mode, BPF_CORE_READ(file, f_inode, i_rdev));
	if (write && !blk)
		knob = forbidden_fs(dentry, m->origin);
	if (!knob && !blk && !(m->flags & SH_PF_FILE_DENY) &&
	    !(write && (m->flags & SH_PF_FILE_WRITELIST)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	if (knob) {
		/* Refused whatever the path: it only names the record. */
		len = use_d_path ? bpf_d_path(&file->f_path, s->path, sizeof(s->path))
				 : name_path(s, dentry, mnt);
		return report(m, s, knob, op, SH_WHY_FORBIDDEN, len, evf, fflags, 0);
	}
	if (blk) {
		/* Allowed only where a `device` rule names the node the kernel
		 * resolved. */
		err = file_resolvable(file, false);
		len = use_d_path ? bpf_d_path(&file->f_path, s->path, sizeof(s->path))
				 : name_path(s, dentry, mnt);
		if (err || len <= 0 || lookup_rule(s, m, SH_KEY_DEVICE, len) != SH_ACT_ALLOW) {
			s->err = err;
			return report(m, s, SH_HOOK_FILE, op, SH_WHY_DEVICE, len, evf, fflags, 0);
		}
		/* A device rule is what allows it, for reading and writing;
		 * a deny rule still refuses it. */
		if (lookup_rule(s, m, SH_KEY_FILE, len) == SH_ACT_DENY)
			return report(m, s, SH_HOOK_FILE, op, SH_WHY_RULE, len, evf, fflags, 0);
		return 0;
	}
	err = file_resolvable(file, tmpfile);
	if (err) {
		s->err = err;
		len = use_d_path ? bpf_d_path(&file->f_path, s->path, sizeof(s->path))
				 : name_path(s, dentry, mnt);
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_UNRESOLVED, len, evf, fflags, 0);
	}
	if (tmpfile) {
		/* A new file with no name yet: judged as a file created in
		 * its directory ("DIR/"), where linkat may name it later. */
		len = walk_path(s, BPF_CORE_READ(dentry, d_parent), mnt);
		if (len > 2 && len < SH_EVENT_PATH_MAX) {
			__u32 n = (__u32)len & SH_PATH_MASK;

			/* Keep the mask: the verifier bounds the index by it. */
			asm volatile("" : "+r"(n));
			s->path[(n - 1) & SH_PATH_MASK] = '/';
			s->path[n & SH_PATH_MASK] = 0;
			len++;
		}
	} else if (use_d_path) {
		len = bpf_d_path(&file->f_path, s->path, sizeof(s->path));
	} else {
		len = walk_path(s, dentry, mnt);
	}
	if (len <= 0)
		return report(m, s, SH_HOOK_FILE, op, SH_WHY_UNRESOLVED,
			      len ? len : -ENAMETOOLONG, evf, fflags, 0);
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
	__u32 act, knob;
	bool dis;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_FILE, op, SH_WHY_NOPOLICY, 0, SH_EVF_WRITE, 0, 0);
	knob = forbidden_fs(dentry, m->origin);
	dis = !knob && disconnected(dentry, mnt);
	if (knob || dis ||
	    daemon_file(dentry, true, op == SH_OP_RENAME_FROM || op == SH_OP_RENAME_TO ||
			op == SH_OP_UNLINK || op == SH_OP_RMDIR)) {
		__u32 why = knob ? SH_WHY_FORBIDDEN : dis ? SH_WHY_UNRESOLVED : SH_WHY_PROTECTED;

		s = get_scratch();
		if (!s)
			return -EPERM;
		len = name_path(s, dentry, mnt);
		s->err = why == SH_WHY_UNRESOLVED ? -ESTALE : 0;
		return report(m, s, knob ? knob : SH_HOOK_FILE, op, why, len, SH_EVF_WRITE, 0, 0);
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
	len = name_path(s, path->dentry, path->mnt);
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
	dentry = BPF_CORE_READ(u, path.dentry);
	/* sharnessd's control socket: whatever the policy and the uid, no
	 * tree asks the daemon to untag it. */
	if (dentry && ctl_ino && BPF_CORE_READ(dentry, d_inode, i_ino) == ctl_ino &&
	    BPF_CORE_READ(dentry, d_sb, s_dev) == ctl_dev) {
		s = get_scratch();
		if (!s)
			return -EPERM;
		return report(m, s, SH_HOOK_CONNECT, op, SH_WHY_PROTECTED,
			      name_path(s, dentry, BPF_CORE_READ(u, path.mnt)), 0, 0, 0);
	}
	if (!(m->flags & (SH_PF_CONNECT_RULES | SH_PF_ABSTRACT_DENY)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	if (dentry) {
		if (!(m->flags & SH_PF_CONNECT_RULES))
			return 0;
		len = peer_path(s, dentry, BPF_CORE_READ(u, path.mnt));
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

/*
 * Terminal ioctls no tree may use on any terminal, whatever its uid: TIOCSTI
 * (typing into a terminal: the operator's shell runs what it types),
 * TIOCVHANGUP (hanging up a terminal kills its session, outside the tree),
 * TIOCSCTTY with a non-zero argument (stealing a terminal from its
 * session), TIOCCONS (redirecting the console), TIOCLINUX and the KD and VT
 * console ioctls (selection paste, keyboard and virtual terminals). Taking
 * a terminal no session owns (TIOCSCTTY 0: tmux, script) stays allowed.
 */
static __always_inline bool tty_forbidden(unsigned int cmd, unsigned long arg)
{
	return cmd == TIOCSTI || cmd == TIOCVHANGUP || cmd == TIOCCONS || cmd == TIOCLINUX ||
	       (cmd == TIOCSCTTY && arg != 0) || (cmd >= 0x4B00 && cmd <= 0x4BFF) ||
	       (cmd >= 0x5600 && cmd <= 0x56FF);
}

static __always_inline int judge_write(struct member *m, struct dentry *dentry,
				       struct vfsmount *mnt, __u32 op);

/* ioctls that change a file without writing it: flags (chattr), fs-verity,
 * a btrfs subvolume's read-only flag. Judged as writes. */
static __always_inline bool inode_flags_ioctl(unsigned int cmd)
{
	return cmd == FS_IOC_SETFLAGS || cmd == FS_IOC32_SETFLAGS || cmd == FS_IOC_FSSETXATTR ||
	       cmd == FS_IOC_ENABLE_VERITY || cmd == BTRFS_IOC_SUBVOL_SETFLAGS;
}

static __always_inline int judge_ioctl(struct file *file, unsigned int cmd, unsigned long arg,
				       int ret)
{
	struct member m = {};
	struct scratch *s;
	int owner;

	if (ret)
		return ret;
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP && !inode_flags_ioctl(cmd) &&
	    !tty_forbidden(cmd, arg))
		return 0;
	if (!membership(&m))
		return 0;
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP) {
		if (bpf_probe_read_user(&owner, sizeof(owner), (void *)arg))
			owner = -1;
		return judge_setown(&m, owner, cmd);
	}
	/* chattr: inode flags (immutable, append-only...) change the file. */
	if (inode_flags_ioctl(cmd))
		return judge_write(&m, BPF_CORE_READ(file, f_path.dentry),
				   BPF_CORE_READ(file, f_path.mnt), SH_OP_SETFLAGS);
	count(SH_CNT_HOOK(SH_HOOK_TTY, SH_CNT_CHECK));
	s = get_scratch();
	if (!s)
		return -EPERM;
	return report(&m, s, SH_HOOK_TTY, SH_OP_IOCTL, m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY,
		      name_path(s, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt)),
		      0, cmd, 0);
}

SEC("lsm/file_ioctl")
int BPF_PROG(sh_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return judge_ioctl(file, cmd, arg, ret);
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
	return judge_ioctl(file, cmd, (__u32)arg, ret);
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
	if (deleted)
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_DELETED,
			      name_path(s, BPF_CORE_READ(file, f_path.dentry),
					BPF_CORE_READ(file, f_path.mnt)), 0, prot, 0);
	len = file_resolvable(file, false);
	if (len) {
		s->err = len;
		len = name_path(s, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt));
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_UNRESOLVED, len, 0, prot, 0);
	}
	len = walk_path(s, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt));
	if (len <= 0)
		return report(m, s, SH_HOOK_MMAP, op, SH_WHY_UNRESOLVED,
			      len ? len : -ENAMETOOLONG, 0, prot, 0);
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
	__u16 off_instance;     /* struct mount: mnt_instance */
	__u16 off_mnt_ns;       /* struct mount: mnt_ns */
};

static long mount_scan_step(__u32 i, void *data)
{
	struct mount_scan *c = data;
	struct scratch *s = get_scratch();
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

static __always_inline int judge_dentry_change(struct member *m, struct dentry *dentry, __u32 op)
{
	struct super_block *sb = BPF_CORE_READ(dentry, d_sb);
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 act, knob, reason = SH_WHY_UNRESOLVED, nc;
	struct mount_scan scan = {};
	struct scratch *s;
	long len = -ESTALE;

	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, SH_HOOK_FILE, op, SH_WHY_NOPOLICY, 0, SH_EVF_WRITE, 0, 0);
	knob = forbidden_fs(dentry, m->origin);
	if (daemon_file(dentry, true, false)) {
		knob = SH_HOOK_FILE;
		reason = SH_WHY_PROTECTED;
	} else if (knob) {
		reason = SH_WHY_FORBIDDEN;
	}
	if (!knob && !(m->flags & (SH_PF_FILE_WRITELIST | SH_PF_FILE_DENY)))
		return 0;
	s = get_scratch();
	if (!s)
		return -EPERM;
	/* The mounts of this file system in the task's namespace (others',
	 * private /tmp and the like, are skipped, not counted). */
	scan.head = (void *)sb + bpf_core_field_offset(struct super_block, s_mounts);
	scan.pos = BPF_CORE_READ(sb, s_mounts.next);
	scan.ns = BPF_CORE_READ(task, nsproxy, mnt_ns);
	scan.off_instance = bpf_core_field_offset(struct mount, mnt_instance);
	scan.off_mnt_ns = bpf_core_field_offset(struct mount, mnt_ns);
	s->ncands = 0;
	bpf_loop(SH_SB_MOUNTS_SCAN, mount_scan_step, &scan, 0);
	nc = s->ncands;
	for (int i = 0; i < SH_SB_MOUNTS_MAX; i++) {
		long l;

		if ((__u32)i >= nc)
			break;
		l = walk_path(s, dentry, (void *)s->cands[i] + bpf_core_field_offset(struct mount, mnt));
		if (l <= 0)
			continue; /* not under this mount */
		len = l;
		if (knob)
			break;
		act = lookup_rule(s, m, SH_KEY_FILE, l);
		if (act != SH_ACT_DENY &&
		    (act == SH_ACT_WRITE || !(m->flags & SH_PF_FILE_WRITELIST)))
			return 0;
		reason = act == SH_ACT_DENY ? SH_WHY_RULE : SH_WHY_DEFAULT;
	}
	return report(m, s, knob ? knob : SH_HOOK_FILE, op, reason, len, SH_EVF_WRITE, 0, 0);
}

/* The first argument is a struct user_namespace * on 6.1, a struct
 * mnt_idmap * from 6.3 on: the dentry is the second either way. */
SEC("lsm/inode_setxattr")
int BPF_PROG(sh_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_dentry_change(&m, dentry, SH_OP_SETXATTR);
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

/* ---- other processes: limits, scheduling, memory -------------------------- */

/*
 * prlimit(2) on another process (RLIMIT_FSIZE, then the kernel's own SIGXFSZ,
 * kills it), its scheduling, priority, I/O priority and memory placement:
 * refused on every process outside the tree, and on sharnessd, whatever
 * [signal] scope says. A tree's own processes stay its to tune.
 */
static __always_inline int judge_task(struct task_struct *p, __u32 op, __u32 arg, int ret)
{
	struct member m = {};
	__u32 tgid;

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_TASK, SH_CNT_CHECK));
	tgid = BPF_CORE_READ(p, tgid);
	if (!m.flags)
		return report(&m, 0, SH_HOOK_TASK, op, SH_WHY_NOPOLICY, 0, 0, arg, tgid);
	if (tgid != daemon_tgid && in_tree(p, m.origin))
		return 0;
	return report(&m, 0, SH_HOOK_TASK, op,
		      tgid == daemon_tgid ? SH_WHY_PROTECTED : SH_WHY_SCOPE, 0, 0, arg, tgid);
}

SEC("lsm/task_setrlimit")
int BPF_PROG(sh_task_setrlimit, struct task_struct *p, unsigned int resource,
	     struct rlimit *new_rlim, int ret)
{
	return judge_task(p, SH_OP_SETRLIMIT, resource, ret);
}

SEC("lsm/task_setscheduler")
int BPF_PROG(sh_task_setscheduler, struct task_struct *p, int ret)
{
	return judge_task(p, SH_OP_SETSCHEDULER, 0, ret);
}

SEC("lsm/task_setnice")
int BPF_PROG(sh_task_setnice, struct task_struct *p, int nice, int ret)
{
	return judge_task(p, SH_OP_SETNICE, (__u32)nice, ret);
}

SEC("lsm/task_setioprio")
int BPF_PROG(sh_task_setioprio, struct task_struct *p, int ioprio, int ret)
{
	return judge_task(p, SH_OP_SETIOPRIO, (__u32)ioprio, ret);
}

SEC("lsm/task_movememory")
int BPF_PROG(sh_task_movememory, struct task_struct *p, int ret)
{
	return judge_task(p, SH_OP_MOVEMEMORY, 0, ret);
}

/* ---- capabilities that change the whole host ------------------------------ */

/*
 * Every capability outside SH_CAPS_TREE_DEFAULT (and the policy's own
 * `capability` lines) is refused to a tree, whatever its uid: so are the
 * ones a later kernel adds. Capabilities allowed by default return before
 * any lookup, so outsiders pay nothing for them. Checks of another task's
 * credentials (the OOM killer asking about a victim) are not the tree's
 * own use and are left alone; NOAUDIT checks are refused without a record.
 */
SEC("lsm/capable")
int BPF_PROG(sh_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct member m = {};

	if (ret)
		return ret;
	if (cap >= 0 && cap < 64 && (SH_CAPS_TREE_DEFAULT & SH_CAP_BIT(cap)))
		return 0;
	if (!membership(&m))
		return 0;
	if ((unsigned long)cred != (unsigned long)BPF_CORE_READ(bpf_get_current_task_btf(), cred))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_CAPABILITY, SH_CNT_CHECK));
	if (m.flags && cap >= 0 && cap < 64 && (m.caps & SH_CAP_BIT(cap)))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return (m.flags & SH_PF_AUDIT) ? 0 : -EPERM;
	return report(&m, 0, SH_HOOK_CAPABILITY, SH_OP_CAPABLE,
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0, 0, (__u32)cap, 0);
}

/*
 * Mapping the lowest pages (below vm.mmap_min_addr) turns kernel NULL
 * dereferences into exploits; the kernel asks for CAP_SYS_RAWIO through
 * cap_capable directly, which the capable hook does not see. Outsiders
 * pay one compare: almost no mapping is that low.
 */
SEC("lsm/mmap_addr")
int BPF_PROG(sh_mmap_addr, unsigned long addr, int ret)
{
	struct member m = {};

	if (ret)
		return ret;
	if (addr >= (mmap_min_addr ? mmap_min_addr : 65536))
		return 0;
	if (!membership(&m))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_CAPABILITY, SH_CNT_CHECK));
	return report(&m, 0, SH_HOOK_CAPABILITY, SH_OP_CAPABLE,
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0, 0, 17 /* SYS_RAWIO */, 0);
}

/* ---- shared kernel objects ------------------------------------------------- */

/*
 * SysV shared memory, semaphores and message queues in the host's IPC
 * namespace belong to the host: root in a tree owns them as uid 0 and would
 * attach (write) other processes' memory. `run` gives a tree a namespace of
 * its own, where it uses them freely; a tagged cgroup left in the host's
 * namespace does not use them at all.
 */
SEC("lsm/ipc_permission")
int BPF_PROG(sh_ipc_permission, struct kern_ipc_perm *ipcp, short flag, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_IPC, SH_CNT_CHECK));
	if (m.flags && !in_host_ipc_ns())
		return 0;
	return report(&m, 0, SH_HOOK_IPC, SH_OP_IPC, m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY,
		      0, 0, (__u32)BPF_CORE_READ(ipcp, id), 0);
}

/*
 * Kernel keyrings: root's user keyring (and its session keyring) are shared
 * by every root process on the host, secrets included. No tree uses keys.
 */
SEC("lsm/key_permission")
int BPF_PROG(sh_key_permission, void *key_ref, const struct cred *cred, unsigned int need,
	     int ret)
{
	struct member m = {};

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_KEYRING, SH_CNT_CHECK));
	return report(&m, 0, SH_HOOK_KEYRING, SH_OP_KEY, m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY,
		      0, 0, need, 0);
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
	return report(m, s, hook, op, SH_WHY_FORBIDDEN, name_path(s, dentry, mnt), 0, 0, 0);
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
