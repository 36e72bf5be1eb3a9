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
