// SPDX-License-Identifier: GPL-2.0
/*
 * Exec and code mapping: what a tree may execute (bprm_check_security, on
 * the file the kernel is about to run) and map executable (mmap_file,
 * file_mprotect: libraries, loaders, anonymous or written memory), and how
 * low it may map (mmap_addr).
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/memo.h"

static __always_inline int judge_exec(struct member *m, struct linux_binprm *bprm)
{
	const struct refusal w = { .hook = SH_HOOK_EXEC, .op = SH_OP_EXEC };
	struct scratch *s;
	__u32 act;
	long len;
	int err;

	count(SH_CNT_HOOK(SH_HOOK_EXEC, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);

	len = d_path_fold(s, bprm->file, false);
	if (len <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	/* A file with no name left (memfd_create, unlinked) matches no rule
	 * written for what is on disk: never executed by a tree. */
	if (BPF_CORE_READ(bprm, file, f_inode, i_nlink) == 0)
		return report(m, s, &w, SH_WHY_DELETED, len);
	/* Through a detached mount, a handle or a replaced file, the path
	 * above is not the object's: refused. */
	err = file_resolvable(bprm->file, false, m->flags & restricting(SH_KEY_EXEC));
	if (err < 0) {
		s->err = err;
		return report(m, s, &w, SH_WHY_UNRESOLVED, len);
	}
	/* A name that folds: named again, and where it folds (s->fold). */
	if (err == SH_RESOLVED_FOLDS) {
		len = d_path_fold(s, bprm->file, true);
		if (len <= 0)
			return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	}

	act = lookup_rule(s, m, SH_KEY_EXEC, len);
	if (act == SH_ACT_DENY)
		return report(m, s, &w, s->rule_why, len);
	if (act != SH_ACT_ALLOW && (m->flags & SH_PF_EXEC_ALLOWLIST))
		return report(m, s, &w, SH_WHY_DEFAULT, len);
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(sh_exec, struct linux_binprm *bprm, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return released(&m, judge_exec(&m, bprm));
}

/* ---- code that runs without an exec ------------------------------------- */

/*
 * An executable mapping of a file is judged like an exec: allowed where
 * the exec rules allow it, or where a `lib` rule (by default the system
 * library directories) lets it be mapped. This closes running a payload
 * through the dynamic loader, LD_PRELOAD and dlopen of libraries the policy
 * does not allow, and mapping deleted or in-memory files.
 */
static __always_inline int __judge_exec_map(struct member *m, struct file *file, __u32 op,
					    __u32 prot)
{
	const struct refusal w = { .hook = SH_HOOK_MMAP, .op = op, .op_flags = prot };
	struct dentry *dentry = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	struct memo_state memo = {};
	struct scratch *s;
	bool deleted;
	__u32 act;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_MMAP, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	deleted = file->f_inode->i_nlink == 0;
	if (!deleted && !(m->flags & SH_PF_EXEC_RULES))
		return 0;
	/* The file's own memo, where one holds: no scratch taken. */
	if (!deleted && exec_memo_allows(m, dentry, mnt, &memo))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	if (deleted)
		return report(m, s, &w, SH_WHY_DELETED, name_path(s, dentry, mnt));
	/* Where a name folds is told by the walk below. */
	len = file_resolvable(file, false, false);
	if (len < 0) {
		s->err = len;
		return report(m, s, &w, SH_WHY_UNRESOLVED, name_path(s, dentry, mnt));
	}
	len = walk_path(s, dentry, mnt);
	if (len <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	act = lookup_rule(s, m, SH_KEY_EXEC, len);
	if (act == SH_ACT_DENY)
		return report(m, s, &w, s->rule_why, len);
	if (act != SH_ACT_ALLOW && act != SH_ACT_LIB && (m->flags & SH_PF_EXEC_ALLOWLIST))
		return report(m, s, &w, SH_WHY_DEFAULT, len);
	exec_memo_store(s, m, dentry, act, &memo);
	return 0;
}

/* The scratch a judgement took is given back when it ends (maps.h). */
static __always_inline int judge_exec_map(struct member *m, struct file *file, __u32 op,
					  __u32 prot)
{
	return released(m, __judge_exec_map(m, file, op, prot));
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
	return report(&m, 0, &(struct refusal){
			.hook = SH_HOOK_CAPABILITY, .op = SH_OP_CAPABLE, .op_flags = 17 /* SYS_RAWIO */ },
		      m.flags ? SH_WHY_FORBIDDEN : SH_WHY_NOPOLICY, 0);
}
