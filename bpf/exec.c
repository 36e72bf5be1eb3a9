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
#include "lib/memo_obj.h"

/* ---- pinned executables --------------------------------------------------- */

/* The ctime moved: __i_ctime from 6.6, seconds and nanoseconds of their
 * own from 6.11 (the nanoseconds' top bits may flag a query: masked). */
struct inode___ctime_priv {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

struct inode___ctime_split {
	time64_t i_ctime_sec;
	__u32 i_ctime_nsec;
} __attribute__((preserve_access_index));

static __always_inline void inode_ctime(struct inode *inode, __s64 *sec, __u32 *nsec)
{
	if (bpf_core_field_exists(struct inode___ctime_split, i_ctime_sec)) {
		struct inode___ctime_split *i = (void *)inode;

		*sec = BPF_CORE_READ(i, i_ctime_sec);
		*nsec = BPF_CORE_READ(i, i_ctime_nsec);
	} else if (bpf_core_field_exists(struct inode___ctime_priv, __i_ctime)) {
		struct inode___ctime_priv *i = (void *)inode;

		*sec = BPF_CORE_READ(i, __i_ctime.tv_sec);
		*nsec = BPF_CORE_READ(i, __i_ctime.tv_nsec);
	} else {
		*sec = BPF_CORE_READ(inode, i_ctime.tv_sec);
		*nsec = BPF_CORE_READ(inode, i_ctime.tv_nsec);
	}
	*nsec &= 0x3fffffff;
}

/*
 * An exec allow pinned by digest holds for the file the daemon hashed
 * (map exec_pins): the same file system and inode, its entry made for
 * this rule's digest, and since then no change (ctime and size as they
 * were) and no writer open now (a writer's page dirtied before the hash
 * could change without a new ctime). Anything else is refused, not
 * hashed here: the daemon hashes again when it sees the refusal.
 */
static __always_inline void pin_key(const struct member *m, struct inode *inode,
				    struct sh_pin_key *k)
{
	k->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k->slot = m->slot;
	k->pad = 0;
	k->policy = m->policy;
	k->ino = BPF_CORE_READ(inode, i_ino);
}

static __always_inline bool pin_holds(const struct member *m, __u32 pin, struct inode *inode)
{
	struct sh_pin_key k;
	struct sh_pin *p;
	__s64 sec;
	__u32 nsec;

	pin_key(m, inode, &k);
	p = bpf_map_lookup_elem(&exec_pins, &k);
	if (!p || p->pin != pin || p->size != (__u64)BPF_CORE_READ(inode, i_size))
		return false;
	if (BPF_CORE_READ(inode, i_writecount.counter) > 0)
		return false;
	inode_ctime(inode, &sec, &nsec);
	return p->ctime_sec == sec && p->ctime_nsec == nsec;
}

/* The pin of the exact rule for file's path (its key over s->ev.path), 0
 * for none. */
static __always_inline __u32 pin_of(struct member *m, struct scratch *s, struct file *file)
{
	__u32 *pin;
	long len;

	/* bpf_d_path leaves bytes of its work past the NUL: the key is the
	 * name copied into zeros. */
	len = bpf_d_path(&file->f_path, s->walk, SH_PATH_KEY_MAX);
	if (len <= 0)
		return 0;   /* longer than any rule's key: not a pinned name */
	__builtin_memset(s->ev.path, 0, SH_PATH_KEY_MAX);
	if (bpf_probe_read_kernel_str(s->ev.path, SH_PATH_KEY_MAX, s->walk) != len)
		return 0;
	pin = bpf_map_lookup_elem(&pin_paths, rule_key(s, m, SH_KEY_EXEC, len));
	return pin ? *pin : 0;
}

/* The identity a verdict was made for, as it is now. */
static __always_inline void verdict_id(struct pin_verdict *v, struct linux_binprm *bprm)
{
	struct inode *inode = BPF_CORE_READ(bprm, file, f_inode);

	v->bprm = (__u64)bprm;
	v->file = (__u64)BPF_CORE_READ(bprm, file);
	v->ino = BPF_CORE_READ(inode, i_ino);
	v->size = BPF_CORE_READ(inode, i_size);
	inode_ctime(inode, &v->ctime_sec, &v->ctime_nsec);
}

/*
 * Did sh_exec_pin hash the file this exec runs, unchanged since, and find
 * pin's digest? Where sh_exec_pin runs after this program (the order is
 * the kernel's), there is no verdict yet, and the file is refused: the
 * order decides whether a rebuilt file runs, never whether an unpinned
 * one does. The verdict stays for the exec's own mappings of the file
 * (verdict_maps); the next exec of the task replaces it.
 */
static __always_inline bool verdict_holds(struct pin_verdict *v, __u32 pin, __u64 bprm,
					  struct file *file)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	__s64 sec;
	__u32 nsec;

	if (!v || !pin_hashing || !v->pin || v->pin != pin || (bprm && v->bprm != bprm) ||
	    v->file != (__u64)file || v->ino != BPF_CORE_READ(inode, i_ino) ||
	    v->size != (__u64)BPF_CORE_READ(inode, i_size))
		return false;
	inode_ctime(inode, &sec, &nsec);
	return v->ctime_sec == sec && v->ctime_nsec == nsec;
}

static __always_inline bool hashed_for(struct linux_binprm *bprm, __u32 pin)
{
	return verdict_holds(bpf_task_storage_get(&pin_verdicts, bpf_get_current_task_btf(), 0, 0),
			     pin, (__u64)bprm, BPF_CORE_READ(bprm, file));
}

/* The exec's own mappings of the file it hashed: the same open file (the
 * exec keeps writers out of it). */
static __always_inline bool verdict_maps(struct file *file, __u32 pin)
{
	return verdict_holds(bpf_task_storage_get(&pin_verdicts, bpf_get_current_task_btf(), 0, 0),
			     pin, 0, file);
}

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
	if (act != SH_ACT_ALLOW || !s->rule_pin ||
	    pin_holds(m, s->rule_pin, BPF_CORE_READ(bprm, file, f_inode)))
		return 0;
	/* Not the file the daemon hashed: runs only where sh_exec_pin hashed
	 * this very file for this exec and found this rule's digest. */
	if (!hashed_for(bprm, s->rule_pin))
		return report(m, s, &w, SH_WHY_DIGEST, len);
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(sh_exec, struct linux_binprm *bprm, int ret)
{
	struct member m = {};

	ENTER_EXEC(ret, m, SH_AT_JUDGE);
	if (runtime_copy(bprm->file))
		return released(&m, 0);
	return released(&m, judge_exec(&m, bprm));
}

/*
 * The exec of a pinned name whose file is not the one the daemon hashed (a
 * binary the tree built again, a package reinstalled, a file touched) is
 * hashed here, in a sleepable program: IMA's SHA-256 of the file the
 * kernel is about to run (bpf_ima_file_hash; the exec keeps writers out
 * of it meanwhile), against the digest of the pin its exact name has. A
 * match leaves a verdict for sh_exec on this exec and this file; anything
 * else is refused. sh_exec decides: it refuses a pinned file with neither
 * the daemon's identity nor a verdict. Nothing is entered: the next exec
 * of the same file is hashed again (the daemon enters files it hashed
 * under a lease).
 */
static __always_inline bool same_digest(const __u8 *a, const __u8 *b)
{
	const __u64 *x = (const void *)a, *y = (const void *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}

static __always_inline int judge_pin(struct member *m, struct linux_binprm *bprm)
{
	const struct refusal w = { .hook = SH_HOOK_EXEC, .op = SH_OP_EXEC };
	struct sh_pin_digest_key dk = { .slot = m->slot, .policy = m->policy };
	struct file *file = bprm->file;
	struct inode *inode = file->f_inode;
	struct sh_pin_digest *want;
	struct pin_verdict *v, now = {};
	__u64 found[4] = {};
	struct scratch *s;
	long alg;

	v = bpf_task_storage_get(&pin_verdicts, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (v) {
		v->pin = 0;     /* none left from an exec before */
		v->bprm = 0;
	}
	s = get_scratch(m);
	if (!s)
		return released(m, no_scratch(m, &w));
	dk.pin = pin_of(m, s, file);
	scratch_done_at(&m->scratch);
	if (!dk.pin || pin_holds(m, dk.pin, inode))
		return 0;
	verdict_id(&now, bprm);
	alg = bpf_ima_file_hash(file, found, sizeof(found));
	want = bpf_map_lookup_elem(&pin_digests, &dk);
	if (alg == HASH_ALGO_SHA256 && want && same_digest((void *)found, want->d)) {
		count(SH_CNT_PIN_HASHED);
		if (v) {
			*v = now;
			v->pin = dk.pin;
		}
		return 0;
	}
	s = get_scratch(m);
	if (!s)
		return released(m, no_scratch(m, &w));
	return released(m, report(m, s, &w, SH_WHY_DIGEST,
				  bpf_d_path(&file->f_path, s->ev.path, SH_EVENT_PATH_MAX)));
}

SEC("lsm.s/bprm_check_security")
int BPF_PROG(sh_exec_pin, struct linux_binprm *bprm, int ret)
{
	struct member m = {};

	ENTER_EXEC(ret, m, SH_AT_JUDGE_SLEEPABLE);
	if (!(m.flags & SH_PF_EXEC_PINS))
		return 0;
	return judge_pin(&m, bprm);
}

/*
 * A pending task (lib/member.h) becomes a member once its exec goes
 * through: here, past the point of no return, its other threads gone. Its
 * exec was judged as the tree's at bprm_check_security; one refused or
 * failed there leaves it the host's, with no thread armed and another not.
 */
SEC("lsm/bprm_committing_creds")
int BPF_PROG(sh_exec_arm, struct linux_binprm *bprm)
{
	struct task_struct *task;
	struct sh_task *t;

	if (!ntagged)
		return 0;
	task = bpf_get_current_task_btf();
	if (!task->bpf_storage)
		return 0;
	t = bpf_task_storage_get(&task_marks, task, 0, 0);
	if (t && (t->origin & SH_TASK_PENDING) && !runtime_copy(bprm->file))
		__sync_fetch_and_and(&t->origin, ~SH_TASK_PENDING);
	return 0;
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
	__u32 act, pin = 0;
	bool deleted;
	long len;

	count(SH_CNT_HOOK(SH_HOOK_MMAP, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	deleted = file->f_inode->i_nlink == 0;
	if (!deleted && !(m->flags & SH_PF_EXEC_RULES))
		return 0;
	/* The file's own memo, where one holds: no scratch taken. A pinned
	 * allow's memo names the rule; the file is asked whether it is
	 * still what was pinned at every mapping, and judged by path when
	 * it is not. */
	if (!deleted && exec_memo_allows(m, dentry, mnt, &memo, &pin) &&
	    (!pin || pin_holds(m, pin, file->f_inode))) {
		count(SH_CNT_MEMO_HIT);
		return 0;
	}
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
	/* A pinned file is asked at every mapping, memo or not. */
	pin = act == SH_ACT_ALLOW ? s->rule_pin : 0;
	if (pin && !pin_holds(m, pin, file->f_inode) && !verdict_maps(file, pin))
		return report(m, s, &w, SH_WHY_DIGEST, len);
	exec_memo_store(s, m, dentry, act, pin, &memo);
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
	/* A pending task's code is judged as its tree's (member.h): what
	 * its setup maps may not be what the tree planted. */
	if (!membership_at(&m, SH_AT_JUDGE) || runtime_copy(file))
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
	if (!membership_at(&m, SH_AT_JUDGE) || runtime_copy(file))
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
