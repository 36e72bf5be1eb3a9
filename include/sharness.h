/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records and map layouts shared by the BPF programs (bpf/) and user space
 * (user/). Fixed-width types only: this header is compiled for both sides.
 */
#ifndef SHARNESS_H
#define SHARNESS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Limits. */
#define SH_MAX_POLICIES      64      /* per slot; policy ids are 0..63 */
#define SH_POLICY_NONE       0xffff  /* "not tagged in this slot" */
#define SH_PATH_KEY_MAX      248     /* path bytes held in a rule key */
#define SH_EVENT_PATH_MAX    4096    /* == PATH_MAX: paths in events are whole */
#define SH_MAX_CGROUP_LEVEL  32      /* deepest cgroup level searched for a tag */
#define SH_MAX_TAGGED        4096    /* tagged cgroups across both slots */
#define SH_MAX_RULE_KEYS     (64 * 1024)
#define SH_MAX_FILE_DIRS     (64 * 1024)     /* directory markers (dir_marks) */
#define SH_MAX_DIR_NAMES     (64 * 1024)     /* names below them (dir_names) */
#define SH_COMM_LEN          16

/*
 * Two policy slots make reload atomic: user space fills the inactive slot,
 * then flips `active_slot` with one store; programs read it once per call.
 */
#define SH_SLOTS             2

/* Rule key kinds (one LPM trie holds every path rule of every policy). */
enum sh_rule_key_kind {
	SH_KEY_EXEC    = 1,
	SH_KEY_FILE    = 2,
	SH_KEY_CONNECT = 3,
	SH_KEY_DEVICE  = 4, /* device nodes a tree may open beyond the default set */
};

/*
 * In a dir_marks key's kind: a fold marker, "P/" with a rule below it that
 * refuses more than what covers "P/" (a deny rule; an exec lib rule). A
 * name in a directory that compares names without case (casefold ext4,
 * vfat, exfat, ...) may be spelled otherwise than its rule; below such a
 * directory with a fold marker, a use of that kind is refused
 * (SH_WHY_CASEFOLD) rather than judged by bytes.
 */
#define SH_KEY_FOLD    0x80

/*
 * Rule values: what the longest matching rule says, in the low byte; above
 * it (SH_RULE_PIN_SHIFT), for an exec allow pinned by digest, the pin: 1 +
 * the digest's index among the policy's distinct digests (0: not pinned).
 */
#define SH_RULE_PIN_SHIFT 8
#define SH_RULE_ACT_MASK  0xffu

/* Rule values: what the longest matching rule says. */
enum sh_rule_action {
	SH_ACT_ALLOW = 1, /* exec/connect: allowed */
	SH_ACT_DENY  = 2, /* exec/connect: refused; file: neither read nor write */
	SH_ACT_WRITE = 3, /* file: writes allowed here */
	SH_ACT_LIB   = 4, /* exec: may be mapped executable (a library), not executed */
};

/*
 * Key of the rule trie. prefixlen counts bits from `slot` on: the 32-bit
 * header always matches whole, then 8 bits per path byte. A rule for one
 * file ends with its NUL byte, so it matches that path only; a directory
 * rule ("/a/b/") has no NUL and matches everything under it. Lookups use the
 * resolved path with its NUL, truncated to SH_PATH_KEY_MAX bytes: every rule
 * is shorter than that, so a longer path still finds the rules that cover it.
 */
struct sh_rule_key {
	__u32 prefixlen;
	__u8 slot;
	__u8 kind;
	__u16 policy;
	__u8 path[SH_PATH_KEY_MAX];
};

/* Per-policy flags (array map indexed by slot * SH_MAX_POLICIES + id). */
enum sh_policy_flags {
	SH_PF_VALID          = 1u << 0,
	SH_PF_AUDIT          = 1u << 1, /* log would-be denials, refuse nothing */
	SH_PF_EXEC_ALLOWLIST = 1u << 2, /* has exec allow rules: default deny */
	SH_PF_FILE_WRITELIST = 1u << 3, /* has file write rules: writes elsewhere refused */
	SH_PF_ABSTRACT_DENY  = 1u << 4, /* abstract unix sockets refused */
	SH_PF_SIGNAL_TREE    = 1u << 5, /* signals only within the tagged tree */
	SH_PF_CONNECT_RULES  = 1u << 6, /* has connect path rules */
	SH_PF_FILE_DENY      = 1u << 7, /* has file deny rules */
	SH_PF_EXEC_RULES     = 1u << 8, /* has exec allow or deny rules */
	SH_PF_NET            = 1u << 9, /* has [net] rules: only plain TCP/UDP/ping inet sockets */
	SH_PF_NET_CONNECT    = 1u << 10, /* has [net] connect rules: other destinations refused */
	SH_PF_NET_BIND       = 1u << 11, /* has [net] bind rules: other binds and listens refused */
	/*
	 * Learning (sharnessctl learn): what the policy's rules would refuse
	 * is let through and reported once per (tree, operation, object) as
	 * a learn record; the wall (what no rule can lift) still refuses.
	 */
	SH_PF_LEARN          = 1u << 12,
	SH_PF_LEARN_ALL      = 1u << 13, /* learning from nothing: every unix connect too */
	/* Markers in the retired map file_dirs: never set now, so a build
	 * that knows only that map memoizes none of these policies. */
	SH_PF_DIRS_RETIRED   = 1u << 14,
	SH_PF_MARKS          = 1u << 15, /* its directory markers are in dir_marks and
					  * dir_names: the directory memo may judge its uses */
	SH_PF_FOLD           = 1u << 16, /* its fold markers are in dir_marks; without
					  * them a name compared without case is refused
					  * wherever the kind has rules */
	SH_PF_CONNECT_TREE   = 1u << 17, /* [connect] scope = tree: unix sockets its own
					  * tree bound, or an allow rule names */
	SH_PF_DEVICE_RULES   = 1u << 18, /* has [file] device rules */
	SH_PF_EXEC_DENY      = 1u << 19, /* has exec deny rules */
	SH_PF_EXEC_PINS      = 1u << 20, /* has exec allow rules pinned by digest */
	SH_PF_FROM_EXEC      = 1u << 21, /* held-from = exec (SH_TASK_PENDING) */
};

/*
 * Directory markers (map dir_marks, keyed as the rules): every directory
 * "P/" with a [file] rule key below it; under the kinds SH_KEY_CONNECT and
 * SH_KEY_DEVICE, every "P/" with a rule of that kind below it, and under
 * SH_KEY_EXEC, with an exec deny rule below it (a rename of "P" would
 * move the names those rules judge at their use; these have id 0).
 * len: the marker's length in bytes (a lookup that finds exactly its own
 * length found a marker). id: 0, or the number, unique within the policy,
 * under which dir_names lists the names in "P/" that lead to those rules
 * (every other name in it is covered by the rule that covers "P/").
 */
struct sh_dir_mark {
	__u32 len;
	__u32 id;
};

/*
 * Map dir_moves: entry SH_MOVES_COUNT counts the host's directory moves
 * (the programs add to it); entry SH_MOVES_STATE holds SH_MOVES_LIVE in
 * its low 32 bits while the daemon has every program attached, the
 * counter with them, and in its high 32 bits a number new at each attach
 * (memos made before a rest, while moves went uncounted, match no memo
 * made after it). User space writes only the state, never the count (a
 * write of the count could lose a move). Not live, the directory memo is
 * keyed to every rename on the host.
 */
#define SH_MOVES_COUNT 0
#define SH_MOVES_STATE 1
#define SH_MOVES_LIVE 0x6c697665u   /* "live" */

/*
 * One name in a marked directory that leads to a rule below it (map
 * dir_names): by its length and its first and last 8 bytes (little-endian
 * loads, zero-filled; tail 0 for names of 8 bytes or fewer). Exact up to
 * 16 bytes; a longer name matching another's ends is judged by path too.
 */
struct sh_name_key {
	__u32 id;               /* the marker's (sh_dir_mark.id) */
	__u8 slot;              /* at byte 4, as in every trie key */
	__u8 len;               /* the name's length, 1..255 */
	__u16 policy;
	__u64 head;
	__u64 tail;
};

/*
 * Pinned executables (map exec_pins): a file the daemon hashed under a read
 * lease (no writer open) when it applied a policy whose exec allow names
 * it with that digest. Keyed by the file's identity in the policy's slot:
 * its file system's device (the superblock's, as mountinfo names it) and
 * inode number. The value holds the pin the file's content matched and
 * what changes with every write, chmod, rename or link of the file: its
 * ctime and size. An exec of a pinned name runs only the file that has an
 * entry with the rule's pin, the same ctime and size, and no writer open.
 */
#define SH_MAX_PINS          (16 * 1024)

struct sh_pin_key {
	__u32 dev;         /* MKDEV(major, minor) as the kernel holds it */
	__u8 slot;         /* at byte 4, as in every trie key */
	__u8 pad;
	__u16 policy;
	__u64 ino;
};

struct sh_pin {
	__s64 ctime_sec;
	__u32 ctime_nsec;
	__u32 pin;         /* the rule value's pin (SH_RULE_PIN_SHIFT) */
	__u64 size;
};

/*
 * For the exec of a pinned file the daemon has not hashed (a binary built
 * again, a package reinstalled), the programs hash it themselves (IMA's
 * SHA-256): map pin_paths, keyed as the rule's exact key in the rules map
 * (a struct sh_rule_key, its path zero-filled past the NUL), gives the
 * pin; pin_digests, keyed by (slot, policy, pin), the digest it names.
 */
struct sh_pin_digest_key {
	__u32 pin;
	__u8 slot;         /* at byte 4, as in every trie key */
	__u8 pad;
	__u16 policy;
};

struct sh_pin_digest {
	__u8 d[32];
};

/*
 * [net] rules: one LPM trie keyed by (slot, kind, policy, address), every
 * address as IPv6 (IPv4 as ::ffff:a.b.c.d, so a mapped address is judged
 * as the IPv4 address it is). The value under a rule's prefix lists every
 * rule of its kind whose prefix contains that prefix, most specific first
 * (longest prefix, then narrowest port range, deny before allow): the
 * longest-prefix match for an address holds exactly the rules covering
 * it, and the first whose protocol and ports match decides.
 */
enum sh_net_kind {
	SH_NET_CONNECT = 1, /* connect, and sends that name an address */
	SH_NET_BIND    = 2, /* bind, and listen (an unbound socket binds then) */
};

enum sh_net_proto {
	SH_PROTO_ANY   = 0, /* rules only: every protocol */
	SH_PROTO_TCP   = 1, /* TCP and MPTCP */
	SH_PROTO_UDP   = 2, /* UDP and UDP-Lite */
	SH_PROTO_OTHER = 3, /* ping sockets: matched by `any` rules only */
};

#define SH_NET_RULES_PER_KEY 16
#define SH_MAX_NET_KEYS      8192

struct sh_net_key {
	__u32 prefixlen;   /* 32 + address bits */
	__u8 slot;
	__u8 kind;         /* enum sh_net_kind */
	__u16 policy;
	__u8 addr[16];     /* network byte order */
};

struct sh_net_match {
	__u16 port_lo, port_hi; /* host byte order, inclusive */
	__u8 proto;             /* enum sh_net_proto */
	__u8 action;            /* SH_ACT_ALLOW or SH_ACT_DENY */
	__u16 pad;
};

struct sh_net_rules {
	__u32 n;
	__u32 pad;
	struct sh_net_match r[SH_NET_RULES_PER_KEY];
};

/*
 * Capabilities a tree may use whatever its policy: powers over its own
 * processes and the files the other rules already judge. Every other
 * capability -- whatever changes the whole host (time, reboot, network
 * configuration, raw I/O, modules, mounts and the rest of CAP_SYS_ADMIN,
 * device nodes, accounting, audit and MAC configuration, resource limits
 * beyond its own, real-time scheduling, packet and raw sockets: the
 * host's traffic; keeping a set-user-ID bit on a file it writes) and
 * every capability a later
 * kernel adds -- is refused unless the policy allows it back
 * (`[limits] capability = ...`, sh_policy_conf.caps).
 */
#define SH_CAP_BIT(c)        (1ull << (c))
#define SH_CAPS_TREE_DEFAULT (SH_CAP_BIT(0)  /* CHOWN */ | SH_CAP_BIT(1)  /* DAC_OVERRIDE */ | \
			      SH_CAP_BIT(3) /* FOWNER */ | \
			      SH_CAP_BIT(5) /* KILL */ | \
			      SH_CAP_BIT(6)  /* SETGID */ | SH_CAP_BIT(7) /* SETUID */ | \
			      SH_CAP_BIT(8)  /* SETPCAP */ | SH_CAP_BIT(10) /* NET_BIND_SERVICE */ | \
			      SH_CAP_BIT(14) /* IPC_LOCK */ | \
			      SH_CAP_BIT(15) /* IPC_OWNER */ | SH_CAP_BIT(18) /* SYS_CHROOT */ | \
			      SH_CAP_BIT(19) /* SYS_PTRACE */ | SH_CAP_BIT(28) /* LEASE */ | \
			      SH_CAP_BIT(29) /* AUDIT_WRITE */ | SH_CAP_BIT(31) /* SETFCAP */)
#define SH_CAP_COUNT         41      /* capabilities known to this build: 0..40 */

struct sh_policy_conf {
	__u32 flags;
	__u32 pad;
	__u64 caps;        /* capabilities allowed beyond SH_CAPS_TREE_DEFAULT */
};

/* Value of the tagged-cgroup map: the policy of this cgroup in each slot. */
struct sh_cgroup_tag {
	__u16 policy[SH_SLOTS];
	__u32 run_id; /* sharnessctl run id, 0 for tags from policy/tag */
};

#include "sharness_patterns.h"


struct sh_cgroup_pattern {
	__u64 parent;                  /* cgroup id of the directory; 0 ends the table */
	__u16 policy;                  /* policy id in this slot */
	__u16 len;                     /* strlen(glob) */
	__u32 pad;                     /* 0 (bpf/cgroup.c reads it) */
	char glob[SH_PATTERN_MAX];
};

/*
 * Per-task membership, in task local storage. `gen` and `cgroup` are the
 * tag generation and the task's cgroup the entry was computed for: any tag
 * or policy change bumps the global generation, and a task that changes
 * cgroup has a different cgroup id, so a stale entry is recomputed on its
 * next use. `origin` is the tagged cgroup whose tree the task belongs to
 * (0: none). Membership is inherited at fork, and a task that leaves its
 * tree's cgroup stays held for as long as that cgroup is tagged.
 */
struct sh_task {
	__u64 origin;
	__u64 gen;      /* the generation (SH_TASK_GEN), and above it the policy found */
	__u64 cgroup;
};

/*
 * sh_task.origin: a task that arrived in a tree of a `held-from = exec`
 * policy from outside (moved in by the host, or born into it by a clone
 * of a host process) carries this bit above its tree's cgroup id until
 * its next exec: the host's process setting the tree up (runc init,
 * systemd's child before the unit's command), held from the command it
 * then runs. Children made before that exec carry it too. A cgroup id
 * (kernfs: an inode number, and above it a generation that grows by one
 * each time 2^32 inode numbers wrap) never reaches it.
 */
#define SH_TASK_PENDING (1ull << 63)
/*
 * sh_task.origin: a task a member moved into its tree (through a
 * cgroup.procs descriptor kept from before its exec) that was no member:
 * held by the tree's policy, but not the tree's to trace or signal (it may
 * be any process of the host the member could name). Its children too.
 */
#define SH_TASK_FOREIGN (1ull << 62)
#define SH_TASK_MARKS   (SH_TASK_PENDING | SH_TASK_FOREIGN)

/*
 * sh_task.gen: the tag generation in its low 48 bits; in the 16 above, the
 * policy the task was found held to in that generation (slot << 6 | policy,
 * plus 1), or 0 when none is remembered. A task whose entry is current
 * then finds its policy without reading the tag map again: any tag or
 * policy change bumps the generation. A generation past 2^48 never
 * matches (the policy is looked up each time), and an entry written
 * without a policy (by an older build) has none to offer.
 */
#define SH_TASK_GEN_BITS 48
#define SH_TASK_GEN_MASK ((1ull << SH_TASK_GEN_BITS) - 1)

/*
 * The daemon's own files, by inode (map `protected_inodes`): its policy
 * directory, audit log, control socket, tags state and lock. Whatever its
 * policy, a tree may not change them (nor, for the audit log, read the
 * other trees' records in it). A directory's mark covers the files
 * directly in it.
 */
#define SH_MAX_PROTECTED 128
enum sh_protect {
	SH_PROT_WRITE = 1u << 0, /* no change to it (or, a directory, to what it holds) */
	SH_PROT_READ  = 1u << 1, /* not opened for reading either */
	SH_PROT_NAME  = 1u << 2, /* not renamed, replaced or removed (their ancestors) */
	SH_PROT_READ_IN = 1u << 3, /* a directory: no file directly in it opened for
				    * reading (the audit log's: its rotated logs) */
};

struct sh_inode_key {
	__u64 ino;
	__u32 dev;   /* the kernel's dev_t: major << 20 | minor */
	__u32 pad;
};

/*
 * A filter in front of protected_inodes (the prot_filter map), so that a
 * tree's write pays a word's load, not a hash lookup, for a file that is
 * not the daemon's. Word 0 arms it (SH_PROT_ARMED; anything else: every
 * check looks the inode up); words 1..SH_PROT_FILTER_WORDS hold a bit per
 * protected inode. Only sharnessd writes it, and never clears a bit of an
 * inode it protects: a clear bit means not protected, a set bit maybe.
 * The hash is unkeyed and the same in every build (the map outlives its
 * programs); a new hash takes a new SH_PROT_ARMED. A tree that finds an
 * inode whose bit is set costs itself a lookup, nothing more.
 */
#define SH_PROT_FILTER_WORDS 1024u
#define SH_PROT_ARMED 0x7368707266696c31ull /* "shprfil1" */

static inline __u64 sh_prot_hash(__u64 ino, __u32 dev)
{
	__u64 h = ino ^ ((__u64)dev * 0x9e3779b97f4a7c15ull);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

/* The word (1..SH_PROT_FILTER_WORDS) and the bit of a hash. */
static inline __u32 sh_prot_word(__u64 h)
{
	return 1 + (__u32)((h >> 6) & (SH_PROT_FILTER_WORDS - 1));
}

/*
 * Key of the learning map (LRU): one learn record per tree, hook and
 * operation, record flags and object (a 64-bit hash of the path, address,
 * open flags, signal, target). A key evicted or hashed alike costs at most
 * a repeated record or, for a collision, one object left out of the learned
 * policy, which its first enforcing run then reports.
 */
#define SH_MAX_LEARNED 65536
struct sh_learn_key {
	__u64 origin;
	__u64 hash;
	__u16 hook;
	__u16 op;
	__u32 flags;
};

/* Hooks, as reported in events and counters. */
enum sh_hook {
	SH_HOOK_EXEC    = 1,
	SH_HOOK_FILE    = 2,
	SH_HOOK_CONNECT = 3,
	SH_HOOK_SIGNAL  = 4,
	SH_HOOK_CHROOT  = 5,
	SH_HOOK_CGROUP  = 6, /* changes to cgroupfs and bpffs, clone into a cgroup */
	SH_HOOK_BPF     = 7,
	SH_HOOK_MOUNT   = 8,
	SH_HOOK_NAMESPACE = 9,
	SH_HOOK_PTRACE  = 10,
	SH_HOOK_MODULE  = 11,
	SH_HOOK_MMAP    = 12, /* executable mappings: libraries, loaders, memory */
	SH_HOOK_TTY     = 13, /* terminal input injection, hangup, console ioctls */
	SH_HOOK_TASK    = 14, /* limits, scheduling, memory of other processes */
	SH_HOOK_CAPABILITY = 15, /* capabilities that change the whole host */
	SH_HOOK_IPC     = 16, /* the host's SysV IPC objects and POSIX message queues */
	SH_HOOK_KEYRING = 17, /* kernel keyrings (root's user keyring is the host's) */
	SH_HOOK_NET     = 18, /* inet connect, send, bind, listen; socket kinds */
	SH_HOOK_MAX     = 19,
};

/*
 * The operation a hook refused (event `op`). The numbers are part of the
 * record format: a daemon reads records written by the programs of the one
 * it took over from, so a value is never renumbered or reused (26 is
 * retired).
 */
enum sh_op {
	SH_OP_EXEC = 1,
	SH_OP_OPEN,
	SH_OP_CREATE,      /* mknod, or open(O_CREAT) of a new file */
	SH_OP_UNLINK,
	SH_OP_MKDIR,
	SH_OP_RMDIR,
	SH_OP_RENAME_FROM,
	SH_OP_RENAME_TO,
	SH_OP_LINK_FROM,
	SH_OP_LINK_TO,
	SH_OP_SYMLINK,
	SH_OP_TRUNCATE,
	SH_OP_CHMOD,
	SH_OP_CHOWN,
	SH_OP_CONNECT,     /* unix stream connect */
	SH_OP_SEND,        /* unix datagram connect/send */
	SH_OP_KILL,
	SH_OP_SETOWN,      /* F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP */
	SH_OP_CHROOT,
	SH_OP_CLONE_INTO_CGROUP,
	SH_OP_BPF,
	SH_OP_MOUNT,
	SH_OP_UMOUNT,
	SH_OP_MOVE_MOUNT,
	SH_OP_PIVOT_ROOT,
	SH_OP_USERNS = 27,
	SH_OP_PTRACE,
	SH_OP_MODULE_LOAD,
	SH_OP_MODULE_REQUEST,
	SH_OP_MMAP_EXEC,
	SH_OP_MPROTECT_EXEC,
	SH_OP_RECEIVE,         /* a file descriptor received over SCM_RIGHTS */
	SH_OP_SETXATTR,        /* extended attributes (POSIX ACLs on 6.1 too) */
	SH_OP_REMOVEXATTR,
	SH_OP_SETACL,          /* POSIX ACLs (6.2+ have hooks of their own) */
	SH_OP_SETTIMES,        /* utimensat, touch -d */
	SH_OP_SETFLAGS,        /* FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR (chattr) */
	SH_OP_IOCTL,           /* a terminal or console ioctl */
	SH_OP_SETRLIMIT,
	SH_OP_SETSCHEDULER,    /* sched_setscheduler/setattr/setaffinity */
	SH_OP_SETNICE,
	SH_OP_SETIOPRIO,
	SH_OP_MOVEMEMORY,      /* migrate_pages, move_pages */
	SH_OP_CAPABLE,
	SH_OP_IPC,             /* shmat, msgsnd, semop... on a SysV object; mq_open */
	SH_OP_KEY,             /* any use of a key or keyring */
	SH_OP_BIND,            /* [net]: bind */
	SH_OP_LISTEN,          /* [net]: listen (binds an unbound socket) */
	SH_OP_SOCKET,          /* [net]: a socket of a kind [net] does not allow */
	SH_OP_SETSOCKOPT,      /* [net]: an option that reroutes or re-marks traffic */
	SH_OP_IPC_CTL,         /* shmctl/semctl/msgctl on a SysV object (IPC_RMID, IPC_SET, ...) */
	SH_OP_IPC_CREATE,      /* a new SysV object (shmget, semget, msgget) */
	SH_OP_LOCK,            /* flock, a POSIX or OFD lock, a lease */
	SH_OP_WATCH,           /* an inotify, fanotify or dnotify watch */
	SH_OP_NETLINK_SEND,    /* a netlink message between processes */
	SH_OP_FOLLOW,          /* following a symbolic link */
	SH_OP_MAX,
};

/* Event actions. */
enum sh_event_action {
	SH_EV_DENY  = 1, /* refused */
	SH_EV_AUDIT = 2, /* would have been refused (mode = audit) */
	SH_EV_LEARN = 3, /* first use of an object a learning run's rules would refuse */
};

/* Why a decision was made, for the audit log. */
enum sh_reason {
	SH_WHY_RULE       = 1, /* a deny rule matched */
	SH_WHY_DEFAULT    = 2, /* no allow rule matched an allowlist */
	SH_WHY_UNRESOLVED = 3, /* the path could not be resolved: fail closed */
	SH_WHY_NOPOLICY   = 4, /* tagged, but its policy is missing: fail closed */
	SH_WHY_SCOPE      = 5, /* signal to a process outside the tree */
	SH_WHY_ABSTRACT   = 6, /* abstract unix socket, abstract = deny */
	SH_WHY_FORBIDDEN  = 7, /* an operation no tree may perform */
	SH_WHY_DELETED    = 8, /* executing a deleted or in-memory file */
	SH_WHY_PROTECTED  = 9, /* the target is sharnessd itself (or its socket) */
	SH_WHY_DEVICE     = 10, /* a device no rule allows: raw disks, input, ... */
	SH_WHY_SOCKET     = 11, /* a socket kind [net] does not allow: raw, packet, ... */
	SH_WHY_ADDRESS    = 12, /* a socket address that cannot be read or is malformed */
	SH_WHY_OPTION     = 13, /* [net]: source routes, IP options, marks, device binds */
	SH_WHY_CASEFOLD   = 14, /* a name compared without case, under a deny rule's directory */
	SH_WHY_MOVES      = 15, /* a rename would change what a rule judged at use says */
	SH_WHY_PLANTED    = 16, /* a tree's symbolic link, in a directory the host shares */
	SH_WHY_DIGEST     = 17, /* a pinned allow: the file is not the one hashed */
	SH_WHY_PINNED     = 18, /* a write to a pinned executable (its code may be mapped) */
};

/* Event flags (bit 0 is retired). */
#define SH_EVF_WRITE       (1u << 1) /* the access was a write */
#define SH_EVF_ABSTRACT    (1u << 2) /* target is an abstract socket name (raw bytes) */
/* [net] records: path holds the 16-byte address, target_pid the port and
 * op_flags the IP protocol number (socket: op_flags the family, target_pid
 * the type | protocol << 16; a refused option or control message:
 * op_flags level << 16 | name). */
#define SH_EVF_NET         (1u << 3)

/*
 * Ring-buffer record: one refused (or audited) operation. A record holds
 * the header and then only the path's own bytes and its NUL
 * (SH_EVENT_HDR_SIZE + path_len + 1, rounded up to 8 by the ring), so a
 * refusal without a path costs about 100 bytes of ring, not 4 KiB. A reader copies
 * a record into a whole struct sh_event before using it.
 */
struct sh_event {
	__u64 ktime_ns;
	__u64 cgroup_id;   /* the task's cgroup */
	__u64 origin;      /* tagged cgroup whose policy applied */
	__u32 pid, tgid, ppid, uid;
	__u32 hook;        /* enum sh_hook */
	__u32 action;      /* enum sh_event_action */
	__s32 ret;         /* what the hook returned (-EPERM...), 0 in audit mode */
	__u32 reason;      /* enum sh_reason */
	__u16 policy;
	__u8 slot;
	__u8 pad0;
	__u32 flags;       /* SH_EVF_* */
	__u32 op;          /* enum sh_op */
	__u32 op_flags;    /* hook specific: open flags, signal number... */
	__u32 target_pid;  /* signal and task hooks */
	__s32 path_err;    /* error from path resolution, if any */
	__u32 path_len;    /* bytes of path, without NUL */
	char comm[SH_COMM_LEN];
	char path[SH_EVENT_PATH_MAX];
};
#define SH_EVENT_HDR_SIZE 100

/* Counters (per-CPU array): SH_CNT_HOOK(hook, what). */
enum sh_counter_what {
	SH_CNT_DENY  = 0,
	SH_CNT_AUDIT = 1,
	SH_CNT_CHECK = 2, /* calls for tagged tasks */
	SH_CNT_WHAT_MAX = 3,
};
#define SH_CNT_HOOK(h, w)   ((h) * SH_CNT_WHAT_MAX + (w))
#define SH_CNT_HOOK_SLOTS   32 /* room for hooks to come: the map's layout stays */
#define SH_CNT_DROPPED      (SH_CNT_HOOK_SLOTS * SH_CNT_WHAT_MAX) /* ring buffer full */
#define SH_CNT_LEARNED      (SH_CNT_DROPPED + 1) /* learn records sent */
#define SH_CNT_LEARN_DUP    (SH_CNT_DROPPED + 2) /* learning: uses already reported */
#define SH_CNT_MEMO_HIT     (SH_CNT_DROPPED + 3) /* judged by the directory memo */
#define SH_CNT_MEMO_STORE   (SH_CNT_DROPPED + 4) /* directory verdicts memoized */
#define SH_CNT_SCRATCH_BUSY (SH_CNT_DROPPED + 5) /* refused: every scratch held (bpf/lib/maps.h) */
#define SH_CNT_SCRATCH_NEST (SH_CNT_DROPPED + 6) /* a scratch passed by: a preempted judgement's */
#define SH_CNT_SCRATCH_LEAK (SH_CNT_DROPPED + 7) /* a scratch a call did not give back */
#define SH_CNT_SCRATCH_TREE (SH_CNT_DROPPED + 8) /* refused: the tree holds its share of scratch */
#define SH_CNT_PIN_HASHED   (SH_CNT_DROPPED + 9) /* pinned execs hashed in the kernel and entered */
#define SH_CNT_PATTERN_LOST (SH_CNT_DROPPED + 10) /* matching cgroups not tagged (bpf/cgroup.c) */
#define SH_CNT_MARK_LOST    (SH_CNT_DROPPED + 11) /* tasks a member moved, not marked foreign (bpf/cgroup.c) */
#define SH_CNT_CREATED_OPEN (SH_CNT_DROPPED + 12) /* opens of a file the open made: judged at its create */
#define SH_CNT_MAX          (SH_CNT_DROPPED + 13)

/*
 * Both sides compile this header: the layouts they exchange through maps
 * and the ring are asserted here, so a field added on one side only, or
 * padding one compiler adds, fails the build of both.
 */
#define SH_LAYOUT(type, size) _Static_assert(sizeof(type) == (size), #type " layout")
#define SH_FIELD(type, field, off) \
	_Static_assert(__builtin_offsetof(type, field) == (off), #type "." #field " offset")
SH_LAYOUT(struct sh_rule_key, 4 + 4 + SH_PATH_KEY_MAX);
SH_FIELD(struct sh_rule_key, path, 8);
SH_LAYOUT(struct sh_policy_conf, 16);
SH_LAYOUT(struct sh_cgroup_pattern, 16 + SH_PATTERN_MAX);
SH_LAYOUT(struct sh_pattern_classes, 5 * SH_PATTERN_CLASSES + 32 * SH_PATTERN_CLASSES);
SH_LAYOUT(struct sh_cgroup_tag, 8);
SH_LAYOUT(struct sh_task, 24);
SH_LAYOUT(struct sh_inode_key, 16);
SH_LAYOUT(struct sh_learn_key, 24);
SH_LAYOUT(struct sh_net_key, 24);
SH_LAYOUT(struct sh_dir_mark, 8);
SH_LAYOUT(struct sh_name_key, 24);
SH_FIELD(struct sh_name_key, slot, 4);
SH_LAYOUT(struct sh_net_rules, 8 + 8 * SH_NET_RULES_PER_KEY);
_Static_assert(SH_HOOK_MAX <= SH_CNT_HOOK_SLOTS, "counter slots for every hook");
SH_FIELD(struct sh_event, hook, 40);
SH_FIELD(struct sh_event, policy, 56);
SH_FIELD(struct sh_event, flags, 60);
SH_FIELD(struct sh_event, path_len, 80);
SH_FIELD(struct sh_event, comm, 84);
SH_FIELD(struct sh_event, path, SH_EVENT_HDR_SIZE);
SH_LAYOUT(struct sh_event, 4200);
#undef SH_LAYOUT
#undef SH_FIELD

#endif /* SHARNESS_H */
