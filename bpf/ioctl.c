// SPDX-License-Identifier: GPL-2.0
/*
 * Terminals and ioctls: terminal input injection and console control
 * (TIOCSTI, TIOCLINUX, TIOCCONS, TIOCSCTTY stealing, hangups) refused to
 * every tree, the ptys a tree makes marked as its own (d_instantiate), and
 * inode flag changes (chattr) judged as writes.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"

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
	struct scratch *s;
	int owner;

	if (ret)
		return ret;
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP && !inode_flags_ioctl(cmd) &&
	    !tty_forbidden(cmd, arg))
		return 0;
	/* Set up here: every ioctl on the host gets this far only to the
	 * return above. */
	struct member m = {};
	const struct refusal w = { .hook = SH_HOOK_TTY, .op = SH_OP_IOCTL, .op_flags = cmd };

	if (!membership(&m))
		return 0;
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP) {
		if (bpf_probe_read_user(&owner, sizeof(owner), (void *)arg))
			owner = -1;
		return judge_setown(&m, owner, cmd);
	}
	/* chattr: inode flags (immutable, append-only...) change the file. */
	if (inode_flags_ioctl(cmd)) {
		if (shared_dir(file->f_inode))
			return forbid_shared(&m, SH_OP_SETFLAGS, 0, file->f_path.dentry,
					     file->f_path.mnt);
		return judge_write(&m, file->f_path.dentry, file->f_path.mnt, SH_OP_SETFLAGS);
	}
	count(SH_CNT_HOOK(SH_HOOK_TTY, SH_CNT_CHECK));
	s = get_scratch(&m);
	if (!s)
		return no_scratch(&m, &w);
	return released(&m, report(&m, s, &w, m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY,
				   name_path(s, BPF_CORE_READ(file, f_path.dentry),
					     BPF_CORE_READ(file, f_path.mnt))));
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
 * A pty slave comes to be in the ptmx open of the task that asked for the
 * pair: where that task is a tree's, the slave's inode is marked as that
 * tree's (pty_trees), the one slave its tree may open by name
 * (device_by_default). A unix socket file a tree's bind makes is marked
 * as that tree's (sock_trees): the dentry its path_mknod allowed; a
 * symbolic link a tree makes likewise (link_trees, path_symlink).
 * Every other dentry the host instantiates leaves at the inode's mode
 * and device number.
 *
 * The note is used up by the task's next socket file or link on the
 * note's file system, whichever it is: one a create failed to make marks
 * nothing later. One on another file system leaves it: overlayfs makes
 * the file in its upper file system, which instantiates its own dentry
 * (and, over a whiteout, a temporary one in the work directory) before
 * the overlay's dentry gets its inode.
 */
SEC("lsm/d_instantiate")
int BPF_PROG(sh_d_instantiate, struct dentry *dentry, struct inode *inode)
{
	struct making_note *making;
	struct task_struct *task;
	struct member m = {};
	__u64 *made;
	__u32 type;

	if (!ntagged || !inode)
		return 0;
	type = inode->i_mode & S_IFMT;
	if (type == S_IFSOCK || type == S_IFLNK) {
		/* Every socket the host makes has a sockfs inode, instantiated
		 * here: no bind's file, and no note of one to use up (a note
		 * names a dentry of a file system's directory). */
		if (inode->i_sb->s_magic == SOCKFS_MAGIC)
			return 0;
		task = bpf_get_current_task_btf();
		making = bpf_task_storage_get(&making_notes, task, 0, 0);
		if (!making || !making->dentry || making->sb != (__u64)dentry->d_sb)
			return 0;
		/* Whatever this socket file is, the note is used up: one a
		 * failed bind left never marks a later one. */
		if (making->dentry != (__u64)dentry) {
			making->dentry = 0;
			return 0;
		}
		making->dentry = 0;
		if (!membership(&m))
			return 0;
		made = bpf_inode_storage_get(type == S_IFSOCK ? (void *)&sock_trees : (void *)&link_trees,
					     inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (made)
			*made = m.origin;
		return 0;
	}
	if (!devpts_slave(inode) || !membership(&m))
		return 0;
	made = bpf_inode_storage_get(&pty_trees, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (made && !*made)
		*made = m.origin;
	return 0;
}

/*
 * The note a tree's path_mknod or path_symlink left (making_notes) ends
 * with the create it was for, made or failed: the kernel's vfs_mknod and
 * vfs_symlink return after the d_instantiate that uses it. A create that
 * fails after its path hook (a full file system, a file system with no
 * mknod) would otherwise leave the note for the task's next instantiation
 * of a socket file or link, and a lookup instantiates in the task that
 * looks: a dentry the allocator placed where the failed one was would
 * mark an outsider's socket file as the tree's, which the tree could then
 * remove and bind in place of. Only the call for the noted dentry ends
 * it: overlayfs calls them again, for its upper file system's dentry,
 * within the overlay's create. Not LSM hooks: the exits of two kernel
 * functions that only those creates call, so the rest of the host pays
 * nothing.
 */
static __always_inline void making_done(__u64 dentry)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct making_note *making;

	if (!task->bpf_storage)
		return;
	making = bpf_task_storage_get(&making_notes, task, 0, 0);
	if (making && making->dentry == dentry)
		making->dentry = 0;
}

/* Both functions take (idmap or mnt_userns, dir, dentry, ...): 6.1 and 6.12. */
SEC("fexit/vfs_mknod")
int BPF_PROG(sh_mknod_done, void *idmap, struct inode *dir, struct dentry *dentry)
{
	making_done((__u64)dentry);
	return 0;
}

SEC("fexit/vfs_symlink")
int BPF_PROG(sh_symlink_done, void *idmap, struct inode *dir, struct dentry *dentry)
{
	making_done((__u64)dentry);
	return 0;
}

/*
 * A symbolic link a tree made, followed in a sticky world-writable
 * directory (/tmp, /var/tmp, /dev/shm) by a process outside that tree: a
 * tree that may write /tmp plants /tmp/job.log -> /etc/cron.d/job for a
 * host program running as root to write through. The kernel's
 * protected_symlinks lets everyone follow it (the link is root's, as is
 * /tmp). Refused, with a record under the follower's policy, or the
 * planting tree's for an outsider (whose tree may have ended: then under
 * none, enforced). Outsiders pay an inode storage lookup per link
 * followed, most links having no storage at all.
 */
SEC("lsm/inode_follow_link")
int BPF_PROG(sh_inode_follow_link, struct dentry *dentry, struct inode *inode, bool rcu, int ret)
{
	struct member m = {};
	struct scratch *s;
	__u64 *made, planter;
	long n;

	if (ret)
		return ret;
	made = bpf_inode_storage_get(&link_trees, inode, 0, 0);
	if (!made || !*made)
		return 0;
	planter = *made;
	if (!shared_dir(dentry->d_parent->d_inode))
		return 0;
	if (membership(&m)) {
		if (m.origin == planter)
			return 0;
	} else if (!held_by(&m, 0, planter, tag_gen, 0, 0)) {
		m.origin = planter;
		m.policy = SH_POLICY_NONE;
		m.flags = SH_PF_VALID;
	}
	count(SH_CNT_HOOK(SH_HOOK_FILE, SH_CNT_CHECK));
	s = get_scratch(&m);
	if (!s)
		return no_scratch(&m, &(struct refusal){ .hook = SH_HOOK_FILE, .op = SH_OP_FOLLOW });
	/* The link's own name: the hook has no mount to walk a path by. */
	n = bpf_probe_read_kernel_str(s->ev.path, 256, dentry->d_name.name);
	return released(&m, report(&m, s, &(struct refusal){ .hook = SH_HOOK_FILE,
							     .op = SH_OP_FOLLOW },
				   SH_WHY_PLANTED, n > 0 ? n : 0));
}
