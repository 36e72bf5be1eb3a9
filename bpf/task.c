// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's own resources: limits, scheduling and memory placement of
 * other processes, capabilities beyond the tree default, the host's SysV
 * IPC objects and message queues, kernel keyrings.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"

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
		return report(&m, 0, &(struct refusal){
				.hook = SH_HOOK_TASK, .op = op, .op_flags = arg, .target_pid = tgid },
			      SH_WHY_NOPOLICY, 0);
	if (tgid != daemon_tgid && in_tree(p, m.origin))
		return 0;
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_TASK, .op = op, .op_flags = arg, .target_pid = tgid },
		      tgid == daemon_tgid ? SH_WHY_PROTECTED : SH_WHY_SCOPE, 0);
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
 *
 * CAP_DAC_READ_SEARCH is asked for on every read of a file or directory
 * root may not read by its mode, where CAP_DAC_OVERRIDE (a tree's) grants
 * the same: there it passes before any lookup, outsiders' too. The calls
 * where it alone decides -- open_by_handle_at (an inode by number, one a
 * mount covers too) and linkat's AT_EMPTY_PATH -- have no hook of their
 * own: they are told by the system call (x86_64, x32 and i386 numbers)
 * and judged as any capability outside the default set; so is every check
 * in an io_uring worker (IORING_OP_LINKAT) or where no number is known.
 */
static __always_inline bool dac_read_search_decides(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs;
	long nr;

	/* io_uring's workers run linkat with no system call of their own
	 * (their registers are zero): judged, as when the number is unknown. */
	if (BPF_CORE_READ(t, flags) & PF_IO_WORKER)
		return true;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return true;
	nr = BPF_CORE_READ(regs, orig_ax) & ~SH_X32_SYSCALL_BIT;
	return nr == SH_NR_OPEN_BY_HANDLE_AT || nr == SH_NR_LINKAT ||
	       nr == SH_NR32_OPEN_BY_HANDLE_AT || nr == SH_NR32_LINKAT;
}

SEC("lsm/capable")
int BPF_PROG(sh_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct member m = {};

	if (ret)
		return ret;
	if (cap >= 0 && cap < 64 && (SH_CAPS_TREE_DEFAULT & SH_CAP_BIT(cap)))
		return 0;
	if (cap == CAP_DAC_READ_SEARCH && !dac_read_search_decides())
		return 0;
	if (!membership(&m))
		return 0;
	if (!own_creds(cred, cap))
		return 0;
	count(SH_CNT_HOOK(SH_HOOK_CAPABILITY, SH_CNT_CHECK));
	if (m.flags && cap >= 0 && cap < 64 && (m.caps & SH_CAP_BIT(cap)))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return (m.flags & SH_PF_AUDIT) ? 0 : -EPERM;
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_CAPABILITY, .op = SH_OP_CAPABLE, .op_flags = (__u32)cap },
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0);
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
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_IPC, .op = SH_OP_IPC, .op_flags = (__u32)BPF_CORE_READ(ipcp, id) },
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0);
}

/*
 * The host's SysV objects reached without ipc_permission: the ctl commands
 * the kernel checks by owner alone (IPC_RMID, IPC_SET, SHM_LOCK: root in a
 * tree, or a tree that took the owner's uid, would remove or re-permission
 * a host service's segment, set or queue), and creating a new object (a
 * key a host service asks for later, squatted; the namespace's limits
 * spent). perm NULL: IPC_INFO and the like, about no object.
 */
static __always_inline int host_sysv(struct kern_ipc_perm *perm, __u32 op, int cmd, int ret)
{
	struct member m = {};

	if (!perm)
		return ret;
	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_IPC, SH_CNT_CHECK));
	if (m.flags && !in_host_ipc_ns())
		return 0;
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_IPC, .op = op, .target_pid = (__u32)cmd,
			.op_flags = op == SH_OP_IPC_CREATE ? (__u32)BPF_CORE_READ(perm, key) :
							     (__u32)BPF_CORE_READ(perm, id) },
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0);
}

SEC("lsm/shm_shmctl")
int BPF_PROG(sh_shm_shmctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CTL, cmd, ret);
}

SEC("lsm/sem_semctl")
int BPF_PROG(sh_sem_semctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CTL, cmd, ret);
}

SEC("lsm/msg_queue_msgctl")
int BPF_PROG(sh_msg_queue_msgctl, struct kern_ipc_perm *perm, int cmd, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CTL, cmd, ret);
}

SEC("lsm/shm_alloc_security")
int BPF_PROG(sh_shm_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CREATE, 0, ret);
}

SEC("lsm/sem_alloc_security")
int BPF_PROG(sh_sem_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CREATE, 0, ret);
}

SEC("lsm/msg_queue_alloc_security")
int BPF_PROG(sh_msg_queue_alloc_security, struct kern_ipc_perm *perm, int ret)
{
	return host_sysv(perm, SH_OP_IPC_CREATE, 0, ret);
}

/*
 * The host's POSIX message queues made or removed by name: mq_open(O_CREAT)
 * makes the queue through vfs_mkobj (no path_mknod) before its open is
 * judged, and mq_unlink removes one through vfs_unlink (no path_unlink).
 * Every other create and unlink is judged at the path hooks: the file
 * system is looked at first, so the rest of the host pays one read.
 */
static __always_inline int host_mq_change(struct inode *dir, struct dentry *dentry, __u32 op,
					  int ret)
{
	struct member m = {};
	struct scratch *s;
	long n;

	/* Every create and unlink on the host comes here: one load decides. */
	if (ret || dir->i_sb->s_magic != MQUEUE_MAGIC)
		return ret;
	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_IPC, SH_CNT_CHECK));
	if (m.flags && !host_mqueue(dir->i_sb))
		return 0;
	/* The record names the queue as mq_open does: "/NAME". */
	s = get_scratch(&m);
	if (!s)
		return no_scratch(&m, &(struct refusal){ .hook = SH_HOOK_IPC, .op = op });
	s->ev.path[0] = '/';
	n = bpf_probe_read_kernel_str(&s->ev.path[1], 256, dentry->d_name.name);
	if (n <= 0) {
		s->ev.path[1] = 0;
		n = 1;
	}
	return released(&m, report(&m, s, &(struct refusal){ .hook = SH_HOOK_IPC, .op = op },
				   m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, n + 1));
}

SEC("lsm/inode_create")
int BPF_PROG(sh_inode_create, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
	return host_mq_change(dir, dentry, SH_OP_CREATE, ret);
}

SEC("lsm/inode_unlink")
int BPF_PROG(sh_inode_unlink, struct inode *dir, struct dentry *dentry, int ret)
{
	return host_mq_change(dir, dentry, SH_OP_UNLINK, ret);
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
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_KEYRING, .op = SH_OP_KEY, .op_flags = need },
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0);
}
