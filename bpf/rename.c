// SPDX-License-Identifier: GPL-2.0
/*
 * Renames and hard links: judged as writes of both names (file.c), and
 * kept from moving an object across the rules judged at its use
 * ([connect], device, exec deny) or a socket the tree did not bind.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/mounts.h"
#include "lib/memo.h"

/* ---- renames across the rules judged at an object's use ---------------- */

/* The rules a rename may not move an object across (name_verdicts). */
#define SH_NAME_RULES (SH_PF_CONNECT_RULES | SH_PF_EXEC_DENY | SH_PF_DEVICE_RULES)

/* name_verdicts: rules below the directory, or none known (refused). */
#define SH_NAME_MARKED (1u << 31)

/* __judge_rename: a name a mount does not give (the object not under its
 * root). */
#define SH_NAME_UNSEEN (1u << 30)

/*
 * The rules judged at use that a rename (or link) of an object of this
 * type could move it across: a socket is judged by [connect] rules at each
 * connect, a device node by device rules at each open (and by exec denies,
 * kept for it), a regular file by exec denies at each exec or mapping, a
 * directory by all of them through the names below it. A symbolic link is
 * judged by none (every hook sees what it resolves to), nor is a FIFO (its
 * open is judged by [file] rules, as the rename's two names are). 0 for a
 * negative dentry (the name a rename makes: nothing is moved there); every
 * rule for a type not known here, and for a mount point of any type (in a
 * namespace where it is none, its rename moves what is mounted on it
 * elsewhere: a device node bound onto a FIFO, say).
 */
static __always_inline __u32 moved_rules(struct dentry *d, __u32 type)
{
	if (d->d_flags & DCACHE_MOUNTED)
		return SH_NAME_RULES;
	switch (type) {
	case 0:
	case S_IFLNK:
	case S_IFIFO:
		return 0;
	case S_IFSOCK:
		return SH_PF_CONNECT_RULES;
	case S_IFCHR:
	case S_IFBLK:
		return SH_PF_DEVICE_RULES | SH_PF_EXEC_DENY;
	case S_IFREG:
		return SH_PF_EXEC_DENY;
	default:
		return SH_NAME_RULES;
	}
}

/* The bits of name_verdict's value (and of the one for the names below a
 * directory, 8 bits up) that rules of these kinds set. */
static __always_inline __u32 verdict_bits(__u32 rules)
{
	__u32 v = 0;

	if (rules & SH_PF_CONNECT_RULES)
		v |= 7;
	if (rules & SH_PF_DEVICE_RULES)
		v |= 7 << 3;
	if (rules & SH_PF_EXEC_DENY)
		v |= 1 << 6;
	return v | v << 8 | SH_NAME_MARKED | SH_NAME_UNSEEN;
}

/* What the [connect] and device rules say of the name in s->ev.path (len
 * bytes with its NUL), and whether an exec deny rule covers it: 3 bits
 * each, from bit `at`. */
static __always_inline __u32 name_verdict(struct scratch *s, const struct member *m, long len,
					  __u32 at)
{
	__u32 v = lookup_rule(s, m, SH_KEY_CONNECT, len) & 7;

	v |= (lookup_rule(s, m, SH_KEY_DEVICE, len) & 7) << 3;
	if (lookup_rule(s, m, SH_KEY_EXEC, len) == SH_ACT_DENY)
		v |= 1u << 6;
	return v << at;
}

/*
 * The verdicts of the rules that judge a name at its use, for the name in
 * s->ev.path (len bytes with its NUL) and, for a directory (dir), for the
 * names below it that no deeper rule judges; SH_NAME_MARKED where a rule
 * lies below the directory (a marker of its kind: compile.c) or the
 * policy's markers are not known. A global function: verified once.
 */
__noinline __u32 sh_name_verdicts(struct scratch *held, const struct member *m, long len,
				  __u32 dir)
{
	const __u8 kinds[3] = { SH_KEY_CONNECT, SH_KEY_DEVICE, SH_KEY_EXEC };
	struct sh_dir_mark *mark;
	struct scratch *s;
	__u32 v, l, n;

	if (!held || !m || len < 2 || len > SH_EVENT_PATH_MAX - 2)
		return SH_NAME_MARKED;
	/* The same scratch as a map value: 6.1 takes a key from no other
	 * memory a global function is given. */
	s = scratch_at(held->self);
	if (!s)
		return SH_NAME_MARKED;
	v = name_verdict(s, m, len, 0);
	if (!dir)
		return v;
	l = (__u32)len - 1;
	/* Keep the masks: the verifier bounds the indexes by them. */
	asm volatile("" : "+r"(l));
	s->ev.path[l & SH_PATH_MASK] = '/';
	n = l + 1;
	asm volatile("" : "+r"(n));
	s->ev.path[n & SH_PATH_MASK] = 0;
	v |= name_verdict(s, m, l + 2, 8);
	if (!(m->flags & SH_PF_MARKS))
		v |= SH_NAME_MARKED;
	for (int i = 0; i < 3 && l + 1 < SH_PATH_KEY_MAX; i++) {
		mark = bpf_map_lookup_elem(&dir_marks, rule_key(s, m, kinds[i], l + 1));
		if (mark && mark->len == l + 1)
			v |= SH_NAME_MARKED;
	}
	s->ev.path[l & SH_PATH_MASK] = 0;
	return v;
}

/*
 * Is the task's root the top of its mount namespace (its root mount,
 * or the one mount on the root of that: an initramfs's rootfs below the
 * real root)? A chrooted task's device and exec rules judge names from
 * its root, where a rename here names them from the top.
 */
static __always_inline bool root_at_top(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vfsmount *rmnt = BPF_CORE_READ(task, fs, root.mnt);
	struct mount *top, *up;

	if (!rmnt || (void *)BPF_CORE_READ(task, fs, root.dentry) != BPF_CORE_READ(rmnt, mnt_root))
		return false;
	top = (void *)rmnt - bpf_core_field_offset(struct mount, mnt);
	up = BPF_CORE_READ(top, mnt_parent);
	return up == top || (BPF_CORE_READ(up, mnt_parent) == up &&
			     BPF_CORE_READ(top, mnt_mountpoint) == BPF_CORE_READ(up, mnt.mnt_root));
}

/*
 * A rename (either way with RENAME_EXCHANGE) or a hard link must not change
 * what the rules judged at an object's use say of it: a unix socket is
 * judged by its name at each connect, a device node by its name at each
 * open, a program by its name at each exec (exec deny rules; a copy would
 * give what a rename past an allow rule does). Under `write = /tmp/` and
 * `[connect] deny = /tmp/tmux-0/`, a move of the directory or the socket
 * would take the server out of its rule. So the verdicts of both names
 * (and, for a directory, of the names below them) must be equal and no
 * rule may lie below a moved directory, through the rename's mount and,
 * for a directory or a device node, through every other mount of the file
 * system in the task's namespace (a bind mount names them otherwise):
 * where those cannot all be read, the rename is refused. Under [connect]
 * rules a tree renames or links no socket it did not bind itself: another's
 * is judged by its name in its binder's mount namespace, which a name here
 * need not match.
 */
static __always_inline int __judge_rename(struct member *m, struct vfsmount *mnt,
					  struct dentry *from, struct dentry *to, __u32 op)
{
	struct refusal w = { .hook = SH_HOOK_FILE, .op = op, .flags = SH_EVF_WRITE };
	__u32 a, b, nc, keep, ft = file_type(from), tt = file_type(to);
	__u32 rules = m->flags & (moved_rules(from, ft) | moved_rules(to, tt));
	bool dir = ft == S_IFDIR || tt == S_IFDIR, whole = false;
	__u64 own;
	struct scratch *s;
	long la, lb;

	/* Most renames (a file's, where no exec deny rule is) end here. */
	if (!rules)
		return 0;
	keep = verdict_bits(rules);
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	if ((rules & SH_PF_CONNECT_RULES) &&
	    ((ft == S_IFSOCK && !own_socket(from, m->origin)) ||
	     (tt == S_IFSOCK && !own_socket(to, m->origin))))
		return report(m, s, &w, SH_WHY_SCOPE, name_path(s, from, mnt));
	if ((rules & (SH_PF_DEVICE_RULES | SH_PF_EXEC_DENY)) && !root_at_top())
		return report(m, s, &w, SH_WHY_MOVES, name_path(s, from, mnt));
	/* Through the rename's own mount: both names must resolve there. */
	la = walk_path(s, from, mnt);
	if (la <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, la ? la : -ENAMETOOLONG);
	a = sh_name_verdicts(s, m, la, dir) & keep;
	lb = walk_path(s, to, mnt);
	if (lb <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, lb ? lb : -ENAMETOOLONG);
	b = sh_name_verdicts(s, m, lb, dir) & keep;
	if (a != b || (a & SH_NAME_MARKED))
		return report(m, s, &w, SH_WHY_MOVES, name_path(s, from, mnt));
	/* A directory or device node: through every other mount too. */
	if (!(dir || ft == S_IFCHR || ft == S_IFBLK || tt == S_IFCHR || tt == S_IFBLK) ||
	    remembered_mount(from))
		return 0;
	nc = scan_mounts(s, from, SH_SB_MOUNTS_ALL, &whole);
	if (!whole || !nc)
		return report(m, s, &w, SH_WHY_MOVES, name_path(s, from, mnt));
	own = (__u64)mnt - bpf_core_field_offset(struct mount, mnt);
	s->cand_why = 0;
	for (int i = 0; i < SH_SB_MOUNTS_MAX; i++) {
		struct vfsmount *vm;

		if ((__u32)i >= nc)
			break;
		if (s->cands[i] == own)
			continue;
		vm = (void *)s->cands[i] + bpf_core_field_offset(struct mount, mnt);
		la = walk_path(s, from, vm);
		a = la > 0 ? sh_name_verdicts(s, m, la, dir) & keep : SH_NAME_UNSEEN;
		lb = walk_path(s, to, vm);
		b = lb > 0 ? sh_name_verdicts(s, m, lb, dir) & keep : SH_NAME_UNSEEN;
		if (a != b || (a & SH_NAME_MARKED)) {
			s->cand_why = SH_WHY_MOVES;
			break;
		}
	}
	if (!s->cand_why)
		return 0;
	return report(m, s, &w, s->cand_why, name_path(s, from, mnt));
}

/*
 * A hard link gives the file a second name: both must be writable, or a
 * link would turn a file the tree may only read (or not touch) into one it
 * may write under the new name; and the new name is judged at use as the
 * old one (__judge_rename).
 */
SEC("lsm/path_link")
int BPF_PROG(sh_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	/* The inode this link instantiates is not one the tree makes: a note
	 * a failed symlink or bind left on this name marks nothing. */
	note_making(new_dentry, -1);
	if (is_symlink(old_dentry) && shared_dir(new_dir->dentry->d_inode))
		return refuse_planted(&m, SH_OP_LINK_TO, new_dentry, new_dir->mnt);
	ret = judge_write(&m, old_dentry, new_dir->mnt, SH_OP_LINK_FROM);
	if (ret)
		return ret;
	ret = judge_write(&m, new_dentry, new_dir->mnt, SH_OP_LINK_TO);
	if (ret)
		return ret;
	return released(&m, __judge_rename(&m, new_dir->mnt, old_dentry, new_dentry,
					   SH_OP_LINK_FROM));
}

SEC("lsm/path_rename")
int BPF_PROG(sh_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry,
	     unsigned int flags, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	/* A symbolic link moved into a directory every user shares (either
	 * way, for an exchange). */
	if (is_symlink(old_dentry) && shared_dir(new_dir->dentry->d_inode))
		return refuse_planted(&m, SH_OP_RENAME_TO, new_dentry, new_dir->mnt);
	if ((flags & RENAME_EXCHANGE) && is_symlink(new_dentry) &&
	    shared_dir(old_dir->dentry->d_inode))
		return refuse_planted(&m, SH_OP_RENAME_TO, old_dentry, old_dir->mnt);
	ret = judge_write(&m, old_dentry, old_dir->mnt, SH_OP_RENAME_FROM);
	if (ret)
		return ret;
	ret = judge_write(&m, new_dentry, new_dir->mnt, SH_OP_RENAME_TO);
	if (ret)
		return ret;
	return released(&m, __judge_rename(&m, old_dir->mnt, old_dentry, new_dentry,
					   SH_OP_RENAME_FROM));
}

/* ---- directory moves on the host (the memo's count: lib/memo.h) ---------- */

/*
 * Does moving d change the path of a name other than its own? A
 * directory's does (every name below it), and so does a mount point's of
 * any type (the root of what is mounted on it: a file bind-mounted onto a
 * file, renamed in a namespace where it is no mount point); a file's, a
 * symbolic link's, a socket's or a node's does not. Anything not known to
 * be one of those (no inode, another type) counts.
 */
static __always_inline bool moves_names(struct dentry *d)
{
	struct inode *inode = d ? d->d_inode : 0;
	__u32 type = inode ? inode->i_mode & S_IFMT : 0;

	if (d && (d->d_flags & DCACHE_MOUNTED))
		return true;
	return type != S_IFREG && type != S_IFLNK && type != S_IFSOCK && type != S_IFIFO &&
	       type != S_IFCHR && type != S_IFBLK;
}

/*
 * Every move of a dentry in the kernel's name cache (a rename, an
 * exchange, a directory found again under another name by a network file
 * system) goes through __d_move, inside rename_lock's write section: a
 * directory's move is counted there, by whoever makes it, tree or host.
 */
SEC("fentry/__d_move")
int BPF_PROG(sh_dir_move, struct dentry *dentry, struct dentry *target, bool exchange)
{
	__u32 k = SH_MOVES_COUNT;
	__u64 *n;

	if (!moves_names(dentry) && !(exchange && moves_names(target)))
		return 0;
	n = bpf_map_lookup_elem(&dir_moves, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}
