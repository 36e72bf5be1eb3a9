/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every map and global the programs share, and the per-CPU scratch buffer.
 * The pinned names (map_NAME) and layouts here are what a new daemon
 * adopts from the one it replaces. Change the layout of a state map and
 * adoption starts over with fresh maps. A map added later that the
 * policy apply fills (user/enforcer/pin.c, map_filled_by_apply) starts empty when
 * adopted from a build without it; any other new map makes adoption
 * start over.
 */
#ifndef SH_BPF_MAPS_H
#define SH_BPF_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "sharness.h"
#include "kernel.h"

/* A pointer at base + off, read as memory (NULL where it cannot be): for
 * bpf_loop callbacks, whose offsets the calling program resolved. */
static __always_inline void *read_ptr(void *base, __u32 off)
{
	void *p = 0;

	bpf_probe_read_kernel(&p, sizeof(p), base + off);
	return p;
}

#define SH_PATH_MASK (SH_EVENT_PATH_MAX - 1)

/*
 * Set by user space through the skeleton's .bss mapping. The .bss is state
 * a new daemon adopts with the maps: its layout (these variables, in this
 * order) is part of the pinned ABI.
 */
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

/* Tagged cgroups of containers (`sharnessctl tag --runtime`, the OCI
 * hook) and the process of their runtime's init in them at the tag: a
 * thread of it found there without a membership entry is pending
 * (lib/member.h). Written by the daemon before the tag. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_TAGGED);
	__type(key, __u64);                 /* cgroup id */
	__type(value, __u32);               /* the init's tgid */
} runtime_cgroups SEC(".maps");

/* The names of the cgroups patterns tagged (sharness.h), the oldest
 * forgotten first; scratch_name: one being written, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SH_MAX_TAGGED);
	__type(key, __u64);                 /* cgroup id */
	__type(value, struct sh_cgroup_name);
} pattern_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sh_cgroup_name);
} scratch_name SEC(".maps");

/* Cgroup patterns (sharness.h): written by the policy apply. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_SLOTS * SH_MAX_PATTERNS);
	__type(key, __u32);
	__type(value, struct sh_cgroup_pattern);
} cg_patterns SEC(".maps");

/* Their `[...]` classes (sharness.h), compiled by the same apply. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_SLOTS * SH_MAX_PATTERNS);
	__type(key, __u32);
	__type(value, struct sh_pattern_classes);
} cg_classes SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SH_MAX_RULE_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_rule_key);
	__type(value, __u32);               /* enum sh_rule_action */
} rules SEC(".maps");

/* Pinned executables: identities the daemon hashed (sharness.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_PINS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_pin_key);
	__type(value, struct sh_pin);
} exec_pins SEC(".maps");

/* A pinned exec rule's pin by its key, and the digest a pin names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_PINS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_rule_key);
	__type(value, __u32);
} pin_paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_PINS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_pin_digest_key);
	__type(value, struct sh_pin_digest);
} pin_digests SEC(".maps");

/* sh_exec_pin's verdict on the file an exec is about to run, for sh_exec
 * (bpf/exec.c): the pin whose digest the file's content has. */
struct pin_verdict {
	__u64 bprm;
	__u64 file;
	__u64 ino;
	__s64 ctime_sec;
	__u32 ctime_nsec;
	__u32 pin;
	__u64 size;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pin_verdict);
} pin_verdicts SEC(".maps");

/* Set by the loader where sh_exec_pin is loaded (the kernel can hash a
 * file for a sleepable program): sh_exec then leaves pinned execs to it. */
const volatile __u8 pin_hashing;

/*
 * Directory markers: for each policy, every directory "P/" with a [file]
 * rule key below it (longer than "P/" and starting with it), keyed as the
 * rules are (struct sh_dir_mark). A lookup that finds a marker of exactly
 * its own length: rules below (lib/memo.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SH_MAX_FILE_DIRS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_rule_key);
	__type(value, struct sh_dir_mark);
} dir_marks SEC(".maps");

/* The names in a marked directory that lead to the rules below it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_DIR_NAMES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_name_key);
	__type(value, __u32);
} dir_names SEC(".maps");

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

/*
 * Key of the programs' own caches (the directory memo, cg_outside,
 * top_root), set by user space at load from getrandom; a load without one
 * does not start (user/enforcer/probe.c). 0 still turns the directory memo off.
 * A tree can read neither the key nor a cache.
 */
const volatile __u64 memo_key;

static __always_inline __u64 memo_mix(__u64 h, __u64 x)
{
	h = (h ^ x) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * Cgroups found outside every tree, for tasks without task storage: a
 * task that never was in a tree is judged by its cgroup, and allocates
 * nothing. Direct-mapped by cgroup id; an entry is one word, read and
 * written whole, a keyed hash of the cgroup id and the tag generation it
 * was found outside in (every tag change bumps the generation). A word of
 * another cgroup or generation does not match: that task's cgroup is
 * looked up again among the tags, never taken for outside.
 */
#define SH_CG_OUTSIDE 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_CG_OUTSIDE);
	__type(key, __u32);
	__type(value, __u64);
} cg_outside SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_MAX_PROTECTED);
	__type(key, struct sh_inode_key);
	__type(value, __u32);               /* enum sh_protect */
} protected_inodes SEC(".maps");

/* In front of protected_inodes (sharness.h: SH_PROT_ARMED). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_PROT_FILTER_WORDS + 1);
	__type(key, __u32);
	__type(value, __u64);
} prot_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SH_MAX_NET_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sh_net_key);
	__type(value, struct sh_net_rules);
} net_rules SEC(".maps");

/* Learning: the objects each learning tree has already reported. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SH_MAX_LEARNED);
	__type(key, struct sh_learn_key);
	__type(value, __u64);               /* uses of the object */
} learned SEC(".maps");

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

/*
 * Per-CPU working memory of one hook call: the record being built (its
 * path is where the resolvers write, so a refusal sends it as it is, and a
 * rule key is built over it) and the dentry walk. It holds no state between
 * calls, so a new daemon does not adopt it (user space skips maps named
 * scratch*).
 */
/* Field offsets name_folds reads (bpf_loop callbacks get no CO-RE
 * relocation: the calling program resolves them). */
struct fold_offs {
	__u16 s_d_op;           /* struct super_block */
	__u16 d_compare;        /* struct dentry_operations */
	__u16 d_inode;          /* struct dentry */
	__u16 i_flags;          /* struct inode */
	__u16 mnt_sb;           /* struct mount: mnt.mnt_sb */
	__u16 s_encoding;       /* struct super_block; 0: the kernel has none */
	__u16 mode;             /* how the walk's present mount's names fold:
				 * SH_FOLDS_* (path.h, mount_folds) */
	__u16 pad;
};

struct scratch {
	__u32 self;     /* its index in scratch_map: for bpf_loop callbacks */
	int err;        /* why ev.path is not the object's own path (report) */
	__u32 ncands;
	__u64 cands[8]; /* mounts to name a dentry through (judge_dentry_change) */
	long cand_len;  /* judge_dentry_change: the last name found, and why */
	__u32 cand_why; /* none allowed it (kept here, not in registers: see there) */
	/* After walk_path: the length of "D/", D the directory of the
	 * path's topmost name that its file system compares without case
	 * (name_folds); 0: no such name. Set wherever ev.path is judged
	 * (fold_refused). */
	__u32 fold;
	__u32 fold_pos;         /* walk_path: where that name's '/' is in walk */
	struct fold_offs fo;    /* walk_step's field offsets for name_folds */
	__u32 rule_why;         /* lookup_rule: the reason its deny gives */
	__u32 rule_pin;         /* lookup_rule: an exec allow's pin (0: none) */
	struct sh_event ev;
	char walk[SH_EVENT_PATH_MAX + 256]; /* room for one name past the end */
};

/* A rule key is built in place over ev.path (lookup_rule): its header
 * lies in ev.comm, aligned for its fields. */
_Static_assert(__builtin_offsetof(struct sh_event, path) -
	       __builtin_offsetof(struct sh_rule_key, path) >=
	       __builtin_offsetof(struct sh_event, comm), "rule key header within comm");
_Static_assert((__builtin_offsetof(struct scratch, ev) + __builtin_offsetof(struct sh_event, path) -
		__builtin_offsetof(struct sh_rule_key, path)) % 4 == 0, "rule key header aligned");

/*
 * Several per CPU: LSM programs run with migration, not preemption,
 * disabled. On a fully preemptible kernel (preempt=full, PREEMPT_RT) a
 * task preempted in the middle of a judgement leaves its path here while
 * other tasks' programs run on the same CPU: each of them takes another
 * one. Nine busy tasks on one CPU had four held at once 12,821 times in
 * 8 s under the test VM's emulation.
 *
 * One tree holds at most SH_SCRATCH_TREE_MAX of a CPU's buffers (a task
 * holds one at a time: eight busy tasks of a tree on a CPU are never
 * refused for want of one; a ninth may be), so that a tree that
 * keeps its tasks preempted mid-judgement on a CPU leaves the rest to the
 * other trees there. A claim first reserves a place in its tree's share
 * (scratch_share), then takes a buffer: a task preempted between the two
 * holds a place of its own tree's share, never a buffer beyond it. Past
 * its share, the tree's next judgement on that CPU is refused
 * (SH_CNT_SCRATCH_TREE); with every buffer held, anyone's
 * (SH_CNT_SCRATCH_BUSY; verdict.h no_scratch). 102 KiB a CPU.
 */
#define SH_SCRATCH_SLOTS 12
#define SH_SCRATCH_TREE_MAX 8

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SH_SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/* Who holds which of a CPU's scratch buffers, in one place, so that a
 * claim reads them all with one lookup. */
struct scratch_owners {
	/* The task whose judgement it holds (struct task_struct *; 0: free). */
	__u64 task[SH_SCRATCH_SLOTS];
	/* Its tree's place in scratch_share: written and read by the task
	 * that holds the buffer only. */
	__u32 share[SH_SCRATCH_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch_owners);
} scratch_owners SEC(".maps");

/*
 * Buffers of this CPU held or being taken, per tree: a tree's count is
 * at a keyed hash of its cgroup id (memo_key, secret to the trees), so
 * that no tree can choose to share a count with another. Two trees that
 * happen to share one (one pair in 4,096) share one tree's share.
 */
#define SH_SCRATCH_SHARES 4096

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SH_SCRATCH_SHARES);
	__type(key, __u32);
	__type(value, __u64);
} scratch_share SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	/* Atomic: a program preempted between load and store (full
	 * preemption) would lose another task's count. */
	if (c)
		__sync_fetch_and_add(c, 1);
}

static __always_inline struct scratch *scratch_at(__u32 i)
{
	return bpf_map_lookup_elem(&scratch_map, &i);
}

static __always_inline struct scratch_owners *owners_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_owners, &zero);
}

/*
 * Take a free scratch buffer of this CPU for the current task's judgement,
 * for its tree `origin`: its index + 1, or 0 when none may be taken (the
 * caller refuses: no_scratch). A global function, so that the verifier
 * reads it once per program, not at every claim.
 *
 * The tree's place is reserved first, with an atomic add that tells the
 * count before it: of the claims that pass, each saw fewer than
 * SH_SCRATCH_TREE_MAX places held, so no more than that many buffers are
 * the tree's at once. A buffer is then taken with an atomic
 * compare-and-swap of its owner word (0 to the task), so that two tasks
 * of one CPU, one preempted between looking and taking, never take the
 * same one. A held one is never taken over, not even one its call failed
 * to give back: an owner word seen again may be a new call's (ABA).
 */
__attribute__((noinline)) int sh_scratch_take(__u64 origin)
{
	struct scratch_owners *own = owners_here();
	__u64 me = (__u64)bpf_get_current_task();
	__u32 i, k = memo_mix(memo_key ^ 0x73, origin) & (SH_SCRATCH_SHARES - 1);
	__u64 *share = bpf_map_lookup_elem(&scratch_share, &k);

	if (!own || !share)
		return 0;
	if (__sync_fetch_and_add(share, 1) >= SH_SCRATCH_TREE_MAX) {
		__sync_fetch_and_add(share, -1);
		count(SH_CNT_SCRATCH_TREE);
		return 0;
	}
	for (i = 0; i < SH_SCRATCH_SLOTS; i++) {
		__u64 o = own->task[i];

		if (!o && __sync_val_compare_and_swap(&own->task[i], 0, me) == 0)
			break;
		/* Another task's: held by its preempted judgement (or left
		 * by a call of its that ended, which its next claim here
		 * counts). This task's own: left by an earlier call, as
		 * nothing of this task's runs while it judges. */
		if (o)
			count(o == me ? SH_CNT_SCRATCH_LEAK : SH_CNT_SCRATCH_NEST);
	}
	if (i >= SH_SCRATCH_SLOTS) {
		__sync_fetch_and_add(share, -1);
		count(SH_CNT_SCRATCH_BUSY);
		return 0;
	}
	own->share[i] = k;
	return i + 1;
}

/* Buffer i given back, then its tree's place. A global function, as
 * sh_scratch_take: every program's every end gives one back. */
__attribute__((noinline)) int sh_scratch_give(__u64 i)
{
	struct scratch_owners *own = owners_here();
	__u64 *share;
	__u32 k;

	if (!own || i >= SH_SCRATCH_SLOTS)
		return 0;
	k = own->share[i];
	/* Every use of the buffer comes first. */
	asm volatile("" ::: "memory");
	own->task[i] = 0;
	share = bpf_map_lookup_elem(&scratch_share, &k);
	if (share)
		__sync_fetch_and_add(share, -1);
	return 0;
}

/* The scratch given back at the end of the program call that held it. */
static __always_inline void scratch_done_at(__u8 *held)
{
	if (!*held)
		return;
	/* Every use of it comes first. */
	asm volatile("" ::: "memory");
	sh_scratch_give(*held - 1);
	*held = 0;
}

/*
 * The current call's scratch (*held: its index + 1), taken at its first
 * use. Only the call that holds it uses it, until it gives it back
 * (scratch_done_at). NULL when none may be taken.
 */
static __always_inline struct scratch *claim_scratch_at(__u8 *held, __u64 origin)
{
	struct scratch *s;
	int i;

	if (*held)
		return scratch_at(*held - 1);
	i = sh_scratch_take(origin);
	if (i <= 0 || i > SH_SCRATCH_SLOTS)
		return NULL;
	*held = i;
	s = scratch_at(i - 1);
	if (!s) {
		scratch_done_at(held);
		return NULL;
	}
	s->self = i - 1;
	s->err = 0;
	return s;
}

#endif
