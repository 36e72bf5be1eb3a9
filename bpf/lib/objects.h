/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Objects no policy opens to a tree: cgroupfs and bpffs, the kernel's knob
 * file systems, procfs outside the tree's own processes, device nodes
 * beyond the harmless ones, sharnessd's own files, the host's IPC
 * namespace.
 */
#ifndef SH_BPF_OBJECTS_H
#define SH_BPF_OBJECTS_H

#include "maps.h"
#include "member.h"

/*
 * File systems a tree may not change at all, whatever its policy: cgroupfs
 * (moving itself out, raising its limits, killing other trees) and bpffs
 * (the enforcer's own pinned state).
 */
static __always_inline bool protected_sb(unsigned long magic)
{
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
static __always_inline bool knob_sb(unsigned long magic)
{
	return magic == SYSFS_MAGIC || magic == SECURITYFS_MAGIC || magic == DEBUGFS_MAGIC ||
	       magic == TRACEFS_MAGIC || magic == CONFIGFS_MAGIC || magic == BINFMTFS_MAGIC ||
	       magic == PSTOREFS_MAGIC || magic == EFIVARFS_MAGIC || magic == SELINUX_MAGIC ||
	       magic == SMACK_MAGIC || magic == FUSE_CTL_SUPER_MAGIC || magic == NFSD_MAGIC ||
	       magic == RPC_PIPEFS_MAGIC;
}

/* Might (ino, dev) be protected? No only where the armed filter says so. */
static __always_inline bool maybe_protected(__u64 ino, __u32 dev)
{
	__u64 h = sh_prot_hash(ino, dev), *armed, *word;
	__u32 zero = 0, w = sh_prot_word(h);

	armed = bpf_map_lookup_elem(&prot_filter, &zero);
	if (!armed || *armed != SH_PROT_ARMED)
		return true;
	word = bpf_map_lookup_elem(&prot_filter, &w);
	return !word || ((*word >> (h & 63)) & 1);
}

static __always_inline __u32 protection_of(__u64 ino, __u32 dev)
{
	struct sh_inode_key k = { .ino = ino, .dev = dev };
	__u32 *v;

	if (!maybe_protected(k.ino, k.dev))
		return 0;
	v = bpf_map_lookup_elem(&protected_inodes, &k);
	return v ? *v : 0;
}

static __always_inline __u32 protection(struct inode *inode)
{
	if (!inode)
		return 0;
	return protection_of(inode->i_ino, inode->i_sb->s_dev);
}

/* The daemon's own file by its inode's own mark alone (daemon_file's
 * first half). */
static __always_inline bool daemon_inode(struct inode *inode, bool write)
{
	return nprotected && (protection(inode) & (write ? SH_PROT_READ | SH_PROT_WRITE : SH_PROT_READ));
}

/*
 * Is this one of sharnessd's own files, which no tree may change (write:
 * the file, or a file in a protected directory) or, for the audit log and
 * the files beside it (rotated logs), read? A file's own mark is judged
 * on its inode, so hard links and other mounts of it do not get around
 * it. The marks of its directory are judged on the name used: a tree
 * cannot link a file out of a protected directory (a write there), but
 * a link made there from outside the tree is another name (README).
 */
static __always_inline bool daemon_file(struct dentry *d, bool write, bool rename)
{
	__u32 own;

	if (!nprotected)
		return false;
	own = protection(d->d_inode);
	if (own & SH_PROT_READ)
		return true;
	if (!write)
		return protection(d->d_parent->d_inode) & SH_PROT_READ_IN;
	if ((own & SH_PROT_WRITE) || (rename && (own & SH_PROT_NAME)))
		return true;
	return protection(d->d_parent->d_inode) & SH_PROT_WRITE;
}

/* Names of a stacked file's inode judged at most (stacked_daemon): a
 * busybox image's one inode has some 400. */
#define SH_STACKED_NAMES 1024

/* One step through a stacked file's names (stacked_daemon): the offsets
 * resolved by the calling program (kernel.h: no CO-RE in a callback). */
struct names_walk {
	void *node;             /* struct hlist_node *: the name's d_u.d_alias */
	void *inode;            /* the file's inode */
	__u32 want;             /* the directory marks that refuse */
	int ret;                /* 1: refused; -ESTALE: a name not judged */
	__u16 off_alias;        /* struct dentry: d_u.d_alias */
	__u16 off_d_parent;     /* struct dentry */
	__u16 off_d_inode;      /* struct dentry */
	__u16 off_i_ino;        /* struct inode */
	__u16 off_i_sb;         /* struct inode */
	__u16 off_s_dev;        /* struct super_block */
	__u16 off_next;         /* struct hlist_node */
};

static long names_step(__u32 i, void *data)
{
	struct names_walk *w = data;
	void *d = w->node - w->off_alias, *up, *dir, *sb;
	__u64 ino = 0;
	__u32 dev = 0;
	long err;

	if (!w->node)
		return 1;
	up = read_ptr(d, w->off_d_parent);
	dir = up == d ? 0 : read_ptr(up, w->off_d_inode);
	sb = read_ptr(dir, w->off_i_sb);
	err = bpf_probe_read_kernel(&ino, sizeof(ino), dir + w->off_i_ino) |
	      bpf_probe_read_kernel(&dev, sizeof(dev), sb + w->off_s_dev);
	w->node = read_ptr(w->node, w->off_next);
	/* Its own parent (disconnected: its directory not known), a name
	 * dropped while it was read (its inode cleared before it leaves the
	 * list, whose rest is then not known), or a read that failed: not
	 * judged, refused. */
	if (!dir || !sb || err || read_ptr(d, w->off_d_inode) != w->inode) {
		w->ret = -ESTALE;
		return 1;
	}
	if (protection_of(ino, dev) & w->want) {
		w->ret = 1;
		return 1;
	}
	return 0;
}

/*
 * 6.1's overlayfs opens a file of its layers under the overlay's path
 * (open_with_fake_path): the file's inode is the layer's, its dentry the
 * overlay's, which carries none of the daemon's marks. They are judged on
 * what the kernel resolved: the inode's own mark, and its directory's
 * marks through each name the inode has in the dentry cache (the layer's
 * among them: the overlay holds it; a hard link's too). 1: the daemon's;
 * 0: not; -ESTALE: a name whose directory is not known; -EMLINK: more
 * names than are judged. Both refused as unresolved: the directory the
 * overlay used may be among the rest.
 */
static __always_inline int stacked_daemon(struct inode *inode, bool write)
{
	struct names_walk w = {
		.inode = inode,
		.want = write ? SH_PROT_WRITE : SH_PROT_READ_IN,
		.off_alias = bpf_core_field_offset(struct dentry, d_u.d_alias),
		.off_d_parent = bpf_core_field_offset(struct dentry, d_parent),
		.off_d_inode = bpf_core_field_offset(struct dentry, d_inode),
		.off_i_ino = bpf_core_field_offset(struct inode, i_ino),
		.off_i_sb = bpf_core_field_offset(struct inode, i_sb),
		.off_s_dev = bpf_core_field_offset(struct super_block, s_dev),
		.off_next = bpf_core_field_offset(struct hlist_node, next),
	};

	if (!nprotected)
		return 0;
	if (daemon_inode(inode, write))
		return 1;
	w.node = BPF_CORE_READ(inode, i_dentry.first);
	bpf_loop(SH_STACKED_NAMES, names_step, &w, 0);
	return w.ret ?: w.node ? -EMLINK : 0;
}

/*
 * Device nodes every tree may open: null, zero, full, random and urandom
 * (not /dev/mem, /dev/kmem, /dev/port, /dev/kmsg: a rule must name them,
 * and the first three also need CAP_SYS_RAWIO), /dev/tty (the task's own controlling
 * terminal) and /dev/ptmx (a new pty pair). Every other device -- block
 * devices (raw bytes under every file rule), SCSI generic and bsg, NVMe
 * generic, input and uinput, kvm, tun, fuse, serial lines, virtual
 * consoles and /dev/console (their keyboard input), ttyprintk (the kernel
 * log), and any a later kernel adds -- only where a `[file] device` rule
 * names it. So is a pty slave opened by a name, but for one its own tree
 * made (device_by_default).
 */
static __always_inline bool default_device(__u32 mode, __u32 rdev)
{
	__u32 major = DEV_MAJOR(rdev), minor = DEV_MINOR(rdev);

	if ((mode & S_IFMT) != S_IFCHR)
		return false;
	return (major == 1 && (minor == 3 || minor == 5 || minor == 7 || minor == 8 || minor == 9)) ||
	       (major == 5 && (minor == 0 || minor == 2));
}

/*
 * The tree that made each pty (its tagged cgroup's id), on the slave's
 * inode: set when the slave is created (d_instantiate, in the ptmx open of
 * a tree's task), gone with the inode when the pty is closed, so an index
 * used again by another pty starts unmarked.
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} pty_trees SEC(".maps");

/*
 * The tree that bound each unix socket file (its tagged cgroup's id), on
 * the file's inode: set when a tree's bind (or mknod) makes it, gone with
 * the inode. A tree renames or links only its own (file.c). Only the
 * making counts: path_mknod notes the new dentry in the task
 * (making_notes), d_instantiate marks the inode that dentry gets; a lookup
 * or a link that instantiates an outsider's socket file marks nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sock_trees SEC(".maps");

/*
 * The tree that made each symbolic link (its tagged cgroup's id), on the
 * link's inode, whichever directory it was made in: made the same way
 * (path_symlink notes the dentry in making_notes, d_instantiate marks), gone
 * with the inode. Followed in a sticky world-writable directory by anyone
 * outside that tree, it is refused (ioctl.c, inode_follow_link).
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} link_trees SEC(".maps");

/*
 * The dentry a tree's path_mknod of a socket or path_symlink allowed, and
 * its file system: a file system stacked on others (overlayfs) makes and
 * instantiates its own in another within the create, which must neither
 * use the note up nor end it (ioctl.c).
 */
struct making_note {
	__u64 dentry;
	__u64 sb;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct making_note);
} making_notes SEC(".maps");

/* A directory every user shares: sticky and world-writable (/tmp, /var/tmp,
 * /dev/shm). dir: a BTF pointer. */
static __always_inline bool shared_dir(struct inode *dir)
{
	return dir && (dir->i_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
}

static __always_inline bool is_symlink(struct dentry *dentry)
{
	struct inode *inode = dentry->d_inode;

	return inode && (inode->i_mode & S_IFMT) == S_IFLNK;
}

/* Note the dentry a tree's allowed path_mknod or path_symlink makes (ret 0),
 * or that none is on its way. */
static __always_inline void note_making(struct dentry *dentry, int ret)
{
	struct making_note *n = bpf_task_storage_get(&making_notes, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!n)
		return;
	n->dentry = ret ? 0 : (__u64)dentry;
	n->sb = ret ? 0 : (__u64)dentry->d_sb;
}

/* Is this inode a pty slave of devpts (where only ptmx opens make one)? */
static __always_inline bool devpts_slave(struct inode *inode)
{
	__u32 major = DEV_MAJOR(inode->i_rdev);

	/* The inode's own fields first: one load fewer for every other file. */
	return (inode->i_mode & S_IFMT) == S_IFCHR && major >= 136 && major <= 143 &&
	       inode->i_sb->s_magic == DEVPTS_SUPER_MAGIC;
}

/*
 * May a tree open this device node without a `device` rule? The default
 * set, and a pty slave its own tree made (pty_trees) or one handed over
 * SCM_RIGHTS (op SH_OP_RECEIVE), received as it was given. Any other pty
 * -- the operator's terminals, another tree's, one made before the tree
 * was tagged -- is a device like the rest: reading it takes the keys
 * typed there.
 */
static __always_inline bool device_by_default(struct inode *inode, __u32 op, __u64 origin)
{
	__u64 *made;

	if (default_device(inode->i_mode, inode->i_rdev))
		return true;
	if (!devpts_slave(inode))
		return false;
	if (op == SH_OP_RECEIVE)
		return true;
	made = bpf_inode_storage_get(&pty_trees, inode, 0, 0);
	return made && *made == origin;
}

/* Is the current task in the host's IPC namespace (the daemon's)? */
static __always_inline bool in_host_ipc_ns(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return host_ipc_ns && BPF_CORE_READ(task, nsproxy, ipc_ns, ns.inum) == host_ipc_ns;
}

/*
 * Is this a POSIX message queue file system of the host's IPC namespace
 * (the daemon's)? Judged by the object: a queue reached through a mount of
 * the host's mqueue (/dev/mqueue) from a tree with an IPC namespace of its
 * own is the host's all the same.
 */
static __always_inline bool host_mqueue(struct super_block *sb)
{
	struct ipc_namespace *ns;

	if (sb->s_magic != MQUEUE_MAGIC)
		return false;
	ns = sb->s_fs_info;
	return !host_ipc_ns || BPF_CORE_READ(ns, ns.inum) == host_ipc_ns;
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
	/* (A pending process of the tree's cgroup (member.h) counts as the
	 * tree's here: p is read as memory, which task storage does not take.
	 * What the kernel guards with its ptrace check, /proc/PID/mem among
	 * them, is refused by ptrace_access_check.) */
	return !cg_in_tree(BPF_CORE_READ(p, cgroups, dfl_cgrp), origin);
}

/* May a tree change (write, create, remove, set attributes of) this dentry's
 * file system at all? 0, or the hook to report the refusal under. */
/* The part of forbidden_fs a super block alone decides. */
static __always_inline __u32 forbidden_sb(struct super_block *sb)
{
	unsigned long magic = sb->s_magic;

	if (protected_sb(magic))
		return SH_HOOK_CGROUP;
	/* The host's POSIX message queues, reached by path (/dev/mqueue):
	 * no chmod, chown, times or removal of them either. */
	if (host_mqueue(sb))
		return SH_HOOK_IPC;
	if (knob_sb(magic))
		return SH_HOOK_FILE;
	return 0;
}

static __always_inline __u32 forbidden_fs(struct dentry *dentry, __u64 origin)
{
	__u32 knob = forbidden_sb(dentry->d_sb);

	if (!knob && dentry->d_sb->s_magic == PROC_SUPER_MAGIC &&
	    proc_write_forbidden(dentry, origin))
		knob = SH_HOOK_FILE;
	return knob;
}

#endif
