// SPDX-License-Identifier: GPL-2.0
/*
 * Signals: kill and its side doors (F_SETOWN and SIGIO/SIGURG delivery)
 * kept inside the tree under `[signal] scope = tree`; sharnessd itself is
 * out of every tree's reach.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"

/* ---- signals ------------------------------------------------------------ */

SEC("lsm/task_kill")
int BPF_PROG(sh_task_kill, struct task_struct *p, struct kernel_siginfo *info,
	     int sig, const struct cred *cred, int ret)
{
	struct refusal w = { .hook = SH_HOOK_SIGNAL, .op = SH_OP_KILL, .op_flags = sig };
	struct member m = {};

	ENTER(ret, m);
	count(SH_CNT_HOOK(SH_HOOK_SIGNAL, SH_CNT_CHECK));
	w.target_pid = p->tgid;
	if (!m.flags)
		return report(&m, 0, &w, SH_WHY_NOPOLICY, 0);
	/* Signal 0 delivers nothing: it only asks whether p exists. */
	if (sig != 0 && daemon_tgid && w.target_pid == daemon_tgid)
		return report(&m, 0, &w, SH_WHY_PROTECTED, 0);
	if (!(m.flags & SH_PF_SIGNAL_TREE) || sig == 0)
		return 0;
	if (in_tree(p, m.origin))
		return 0;
	return report(&m, 0, &w, SH_WHY_SCOPE, 0);
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
	return report(m, 0, &(struct refusal){ .hook = SH_HOOK_SIGNAL, .op = SH_OP_SETOWN,
					       .op_flags = cmd,
					       .target_pid = owner < 0 ? -owner : owner },
		      m->flags ? SH_WHY_SCOPE : SH_WHY_NOPOLICY, 0);
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
	/* sig 0 means the default, SIGIO (29). */
	return report(&m, 0, &(struct refusal){ .hook = SH_HOOK_SIGNAL, .op = SH_OP_KILL,
						.op_flags = sig ? sig : 29,
						.target_pid = BPF_CORE_READ(tsk, tgid) },
		      m.flags ? SH_WHY_SCOPE : SH_WHY_NOPOLICY, 0);
}
