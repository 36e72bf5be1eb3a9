// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: stream connects and datagram sends, judged on the peer's
 * socket file (its path in the binder's mount namespace) against the
 * policy's `[connect]` rules; abstract names by `abstract = deny`;
 * sharnessd's control socket refused to every tree.
 *
 * Part of the one compilation unit sharness.bpf.c.
 */
#include "lib/verdict.h"
#include "lib/objects.h"
#include "lib/memo.h"

/* ---- unix sockets: judged on the peer socket the kernel found ---------- */

static __always_inline int __judge_unix_peer(struct member *m, struct sock *peer, __u32 op)
{
	struct refusal w = { .hook = SH_HOOK_CONNECT, .op = op };
	struct unix_sock *u = (void *)peer;
	struct memo_state memo = {};
	struct unix_address *addr;
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct scratch *s;
	__u32 act;
	long len;
	int alen;

	count(SH_CNT_HOOK(SH_HOOK_CONNECT, SH_CNT_CHECK));
	if (!m->flags)
		return report(m, 0, &w, SH_WHY_NOPOLICY, 0);
	/* The kernel names a peer; none is nothing to judge: refused. */
	if (!peer)
		return report(m, 0, &w, SH_WHY_UNRESOLVED, -ENOENT);
	dentry = BPF_CORE_READ(u, path.dentry);
	/* sharnessd's control socket: whatever the policy and the uid, no
	 * tree asks the daemon to untag it. */
	if (dentry && ctl_ino && BPF_CORE_READ(dentry, d_inode, i_ino) == ctl_ino &&
	    BPF_CORE_READ(dentry, d_sb, s_dev) == ctl_dev) {
		s = get_scratch(m);
		if (!s)
			return no_scratch(m, &w);
		return report(m, s, &w, SH_WHY_PROTECTED, name_path(s, dentry, BPF_CORE_READ(u, path.mnt)));
	}
	if (!(m->flags & (SH_PF_CONNECT_RULES | SH_PF_ABSTRACT_DENY)))
		return 0;
	if (dentry && !(m->flags & SH_PF_CONNECT_RULES))
		return 0;
	mnt = BPF_CORE_READ(u, path.mnt);
	/* The peer's own memo, where one holds. */
	if (unix_memo_allows(m, peer, dentry, mnt, &memo))
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
		/* Learning from nothing: every socket the tree reaches. */
		if ((m->flags & SH_PF_LEARN_ALL) && act != SH_ACT_ALLOW)
			return report(m, s, &w, SH_WHY_DEFAULT, len);
		unix_memo_store(s, m, peer, act, &memo);
		return 0;
	}
	/* No file: an abstract name (sun_path starts with NUL), or unnamed. */
	addr = BPF_CORE_READ(u, addr);
	if (!addr || !(m->flags & SH_PF_ABSTRACT_DENY))
		return 0;
	alen = BPF_CORE_READ(addr, len) - (int)sizeof(__u16);
	if (alen <= 0)
		return 0;
	if (alen > 108)
		alen = 108;
	/* "@" then the name's bytes, NULs included (the record keeps them). */
	s->ev.path[0] = '@';
	bpf_probe_read_kernel(&s->ev.path[1], (alen - 1) & 0x7f,
			      (void *)addr->name[0].sun_path + 1);
	w.flags = SH_EVF_ABSTRACT;
	return report(m, s, &w, SH_WHY_ABSTRACT, alen + 1);
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
