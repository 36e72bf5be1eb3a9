// SPDX-License-Identifier: GPL-2.0
/*
 * The wall itself: what a tree could use to leave its tree or take the
 * enforcer down, refused whatever its policy and uid: leaving through
 * clone into another cgroup (membership is inherited at fork here), bpf(),
 * mounts and pivot_root, chroot, user namespaces, tracing processes outside
 * the tree, kernel modules and firmware.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"

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
			return report(&m, 0, &(struct refusal){
					.hook = SH_HOOK_CGROUP, .op = SH_OP_CLONE_INTO_CGROUP },
				      SH_WHY_FORBIDDEN, 0);
	}
	parent = bpf_task_storage_get(&task_marks, bpf_get_current_task_btf(), 0, 0);
	if (!parent) {
		struct member pm = {};

		/* Held without an entry yet (in its cgroup before the tag, not
		 * seen since): the entry is made now, and the child's from it,
		 * so that neither can be taken for an arrival (cgroup.c). An
		 * outsider pays what its hooks pay. */
		/* (Looked up again whatever it answers: a thread of a pending
		 * process gets a pending entry there, which its child takes.) */
		membership(&pm);
		parent = bpf_task_storage_get(&task_marks, bpf_get_current_task_btf(), 0, 0);
	}
	if (!parent || !parent->origin) {
		/* A host process's child born into another cgroup (a container
		 * runtime's clone3): pending, its tree found at its first hook
		 * (member.h); where that is none, or a tree not held from
		 * exec, the entry goes or it is held at once. */
		if (clone_flags & CLONE_INTO_CGROUP) {
			child = bpf_task_storage_get(&task_marks, task, 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (child)
				child->origin = SH_TASK_PENDING;
		}
		return 0;
	}
	/* The child belongs to the parent's tree, wherever it is born (a
	 * pending parent's child is pending too). Without an entry it would
	 * be judged by its cgroup alone, free once out of the tree's, and in
	 * a tree held from exec as an arrival from outside: no entry, no
	 * child. */
	child = bpf_task_storage_get(&task_marks, task, 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!child)
		return -ENOMEM;
	child->origin = parent->origin;
	child->gen = parent->gen;
	child->cgroup = parent->cgroup;
	return 0;
}

/*
 * chroot would make bpf_d_path (relative to the process root) disagree
 * with the paths rules are written for; no tree may change its root.
 */
SEC("lsm/path_chroot")
int BPF_PROG(sh_path_chroot, const struct path *path, int ret)
{
	const struct refusal w = { .hook = SH_HOOK_CHROOT, .op = SH_OP_CHROOT };
	struct member m = {};
	struct scratch *s;

	ENTER(ret, m);
	s = get_scratch(&m);
	if (!s)
		return no_scratch(&m, &w);
	return released(&m, report(&m, s, &w, SH_WHY_FORBIDDEN,
				   name_path(s, path->dentry, path->mnt)));
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
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_PTRACE, .op = SH_OP_PTRACE, .op_flags = mode, .target_pid = tgid },
		      tgid == daemon_tgid ? SH_WHY_PROTECTED : SH_WHY_SCOPE, 0);
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
