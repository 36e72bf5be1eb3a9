// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: stream connects and datagram sends, judged on the peer's
 * socket file (its path in the binder's mount namespace) against the
 * policy's `[connect]` rules; abstract names by `abstract = deny`;
 * under `scope = tree` only sockets the tree itself bound and what an
 * allow rule names; sharnessd's control socket refused to every tree.
 * Socket files: which a tree bound (sock_trees), which it may remove or
 * bind (path_unlink, path_mknod: file.c).
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/memo_obj.h"

/* ---- socket files a tree binds and removes ------------------------------ */

/* The file type of a dentry's inode (0: a negative dentry). */
static __always_inline __u32 file_type(struct dentry *d)
{
	struct inode *inode = d->d_inode;

	return inode ? inode->i_mode & S_IFMT : 0;
}

/* Did this tree bind the unix socket whose file this is (sock_trees)? */
static __always_inline bool own_socket(struct dentry *d, __u64 origin)
{
	struct inode *inode = d->d_inode;
	__u64 *made;

	if (!inode)
		return false;
	made = bpf_inode_storage_get(&sock_trees, inode, 0, 0);
	return made && *made == origin;
}

/*
 * Under [connect] rules, a socket the tree did not bind is not removed
 * (or its name taken by one of the tree's, below): the tree would answer
 * in its place the next client of the name, the operator's `tmux attach`
 * handing it the terminal.
 */
static __always_inline int judge_socket_unlink(struct member *m, struct dentry *dentry,
					       struct vfsmount *mnt)
{
	struct refusal w = { .hook = SH_HOOK_FILE, .op = SH_OP_UNLINK, .flags = SH_EVF_WRITE };
	struct scratch *s;

	if (!(m->flags & SH_PF_CONNECT_RULES) || file_type(dentry) != S_IFSOCK ||
	    own_socket(dentry, m->origin))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	return released(m, report(m, s, &w, SH_WHY_SCOPE, name_path(s, dentry, mnt)));
}

/*
 * A bind (a socket file made) where a [connect] deny rule covers the name:
 * a squatter on a name the rule protects (before its server binds it).
 */
static __always_inline int __judge_socket_bind(struct member *m, struct dentry *dentry,
					       struct vfsmount *mnt)
{
	struct refusal w = { .hook = SH_HOOK_CONNECT, .op = SH_OP_BIND, .flags = SH_EVF_WRITE };
	struct scratch *s;
	long len;

	if (!(m->flags & SH_PF_CONNECT_RULES))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	len = walk_path(s, dentry, mnt);
	if (len <= 0)
		return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
	if (lookup_rule(s, m, SH_KEY_CONNECT, len) == SH_ACT_DENY)
		return report(m, s, &w, s->rule_why, len);
	return 0;
}

/* ---- unix sockets: judged on the peer socket the kernel found ---------- */

/*
 * Which tree bound a unix socket (its origin cgroup): set when a tree's
 * task binds a socket that has no address yet, and never changed (a bind
 * or listen on a socket someone else bound, which the kernel then refuses,
 * marks nothing). A socket without one is an outsider's, a tree's from
 * before this map, or one the kernel bound on its own (autobind on a send
 * with SO_PASSCRED): all refused as not the tree's own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} unix_binders SEC(".maps");

/* At bind: an unbound unix socket a tree binds is marked as its tree's. */
static __always_inline void mark_unix_binder(struct member *m, struct socket *sock)
{
	struct sock *sk = sock->sk;
	__u64 *o;

	if (!sk || sk->__sk_common.skc_family != AF_UNIX ||
	    BPF_CORE_READ((struct unix_sock *)sk, addr))
		return;
	o = bpf_sk_storage_get(&unix_binders, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (o && !*o)
		*o = m->origin;
}

/* Is d the file of sharnessd's control socket? */
static __always_inline bool ctl_socket(struct dentry *d)
{
	return d && ctl_ino && d->d_inode && d->d_inode->i_ino == ctl_ino &&
	       d->d_sb->s_dev == ctl_dev;
}

static __always_inline int __judge_unix_peer(struct member *m, struct sock *peer, __u32 op)
{
	struct refusal w = { .hook = SH_HOOK_CONNECT, .op = op };
	struct memo_state memo = {};
	struct unix_sock *u;
	struct unix_address *addr;
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct scratch *s;
	bool scoped = false;
	__u32 act;
	long len;
	int alen;

	count(SH_CNT_HOOK(SH_HOOK_CONNECT, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	/* The peer as a BTF pointer of its own type: its path and name are
	 * loads, not probe reads. None (the kernel names one), or not a unix
	 * socket, is nothing to judge: refused. */
	u = peer ? bpf_skc_to_unix_sock(peer) : 0;
	if (!u)
		return report(m, 0, &w, SH_WHY_UNRESOLVED, -ENOENT);
	dentry = u->path.dentry;
	mnt = u->path.mnt;
	/* sharnessd's control socket: whatever the policy and the uid, no
	 * tree asks the daemon to untag it. */
	if (ctl_socket(dentry)) {
		s = get_scratch(m);
		if (!s)
			return no_scratch(m, &w);
		return report(m, s, &w, SH_WHY_PROTECTED, name_path(s, dentry, mnt));
	}
	/* scope = tree: a socket its own tree bound is its own business;
	 * any other only by an allow rule (an abstract one: never). */
	if (m->flags & SH_PF_CONNECT_TREE) {
		__u64 *o = bpf_sk_storage_get(&unix_binders, peer, 0, 0);

		if (o && *o == m->origin)
			return 0;
		scoped = true;
	}
	if (!scoped && !(m->flags & (SH_PF_CONNECT_RULES | SH_PF_ABSTRACT_DENY)))
		return 0;
	if (!scoped && dentry && !(m->flags & SH_PF_CONNECT_RULES))
		return 0;
	/* The peer's own memo, where one holds (not by tree: not scoped). */
	if (!scoped && unix_memo_allows(m, peer, dentry, mnt, &memo))
		return 0;
	s = get_scratch(m);
	if (!s)
		return no_scratch(m, &w);
	if (dentry) {
		len = peer_path(s, dentry, mnt);
		if (len <= 0)
			return report(m, s, &w, SH_WHY_UNRESOLVED, len ? len : -ENAMETOOLONG);
		act = lookup_rule(s, m, SH_KEY_CONNECT, len);
		if (act == SH_ACT_DENY)
			return report(m, s, &w, s->rule_why, len);
		if (scoped && act != SH_ACT_ALLOW)
			return report(m, s, &w, SH_WHY_SCOPE, len);
		/* Learning from nothing: every socket the tree reaches. */
		if ((m->flags & SH_PF_LEARN_ALL) && act != SH_ACT_ALLOW)
			return report(m, s, &w, SH_WHY_DEFAULT, len);
		if (!scoped)
			unix_memo_store(s, m, peer, dentry, act, &memo);
		return 0;
	}
	/* No file: an abstract name (sun_path starts with NUL), or unnamed
	 * (a socketpair's other end: not reached by a name). */
	addr = u->addr;
	if (!addr || !(scoped || (m->flags & SH_PF_ABSTRACT_DENY)))
		return 0;
	alen = addr->len - (int)sizeof(__u16);
	if (alen <= 0)
		return 0;
	if (alen > 108)
		alen = 108;
	/* "@" then the name's bytes, NULs included (the record keeps them). */
	s->ev.path[0] = '@';
	bpf_probe_read_kernel(&s->ev.path[1], (alen - 1) & 0x7f,
			      (void *)addr->name[0].sun_path + 1);
	w.flags = SH_EVF_ABSTRACT;
	return report(m, s, &w, scoped ? SH_WHY_SCOPE : SH_WHY_ABSTRACT, alen + 1);
}

/* The scratch a judgement took is given back when it ends (maps.h). */
static __always_inline int judge_unix_peer(struct member *m, struct sock *peer, __u32 op)
{
	return released(m, __judge_unix_peer(m, peer, op));
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(sh_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_unix_peer(&m, other, SH_OP_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(sh_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	struct member m = {};

	ENTER(ret, m);
	return judge_unix_peer(&m, other->sk, SH_OP_SEND);
}
