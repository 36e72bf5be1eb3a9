// SPDX-License-Identifier: GPL-2.0
/*
 * Which programs are attached, and the closing of links.
 *
 * A program attached to a hook costs every call of that hook on the host
 * a trampoline, whether the caller is in a tree or not. Most programs
 * guard the wall and are attached whenever the programs are (a tree is
 * tagged). Those pin.c lists as on demand judge only what some policies
 * ask for ([net] rules, executables pinned by digest): they are attached
 * while a policy in force needs them, before the tag, or the policy in
 * the slot in force, that needs them is written, and detached once a
 * whole apply or a drop leaves none that does (after the switch, so no
 * moment is without them while a policy needs them). "In force" is what
 * the programs read: the valid entries of the policy table's slot in
 * force, which a start finds in adopted maps before its first apply.
 * Every link of theirs is pinned before a policy that needs it is
 * written: one held by the daemon's descriptor alone would go with it.
 *
 * A link's last close waits on the kernel's tracing machinery (about
 * 140 ms a link under emulation), so links are closed by a thread of the
 * daemon while its loop goes on (sh_links_close); the next attach, and
 * the daemon's end, wait for it.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

uint32_t sh_demand_slot(const struct sh_enforcer *e, unsigned slot)
{
	int fd = bpf_map__fd(e->skel->maps.policies);
	uint32_t f = 0;

	for (uint32_t i = 0; i < SH_MAX_POLICIES; i++) {
		uint32_t k = (slot & 1) * SH_MAX_POLICIES + i;
		struct sh_policy_conf c;

		/* A table that cannot be read needs everything. */
		if (bpf_map_lookup_elem(fd, &k, &c))
			return ~0u;
		if (c.flags & SH_PF_VALID)
			f |= c.flags;
	}
	return f;
}

static bool needed(const struct sh_enforcer *e, const struct bpf_program *p)
{
	uint32_t need = sh_pin_demand(bpf_program__name(p));

	return !need || (e->need & need);
}

int sh_demand_attach(struct sh_enforcer *e)
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;
	int err;

	/* Detaches still closing: a program may not be linked twice. */
	sh_links_close_wait(e);
	err = sh_resume_attach(s, e->pin_dir, e->gen, &e->res, e->need);
	if (err)
		return err;
	for (int i = 0; i < s->prog_cnt; i++)
		bpf_program__set_autoattach(*s->progs[i].prog, needed(e, *s->progs[i].prog));
	/* Links made already are kept (libbpf skips them). */
	err = sharness_bpf__attach(e->skel);
	return err ? err : sh_pin_links(s, e->pin_dir, e->gen);
}

/* A program that should be linked and is not. */
static bool missing(const struct sh_enforcer *e)
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;

	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		const struct bpf_program *p = *s->progs[i].prog;
		struct bpf_link *l = *s->progs[i].link;

		if (l ? !bpf_link__pin_path(l)
		      : needed(e, p) && (e->res.on ? e->res.prog_fd[i] >= 0 : bpf_program__autoload(p)))
			return true;
	}
	return false;
}

int sh_demand_need(struct sh_enforcer *e, uint32_t flags)
{
	int err;

	e->need |= flags;
	if (!e->attached || !missing(e))
		return 0;
	err = sh_demand_attach(e);
	if (!err)
		return 0;
	sh_log("cannot attach the programs a policy needs: %s", strerror(-err));
	/* What this attach made and could not pin goes (the policy is not
	 * written), and what it pinned but nothing in force needs; what is
	 * in force still has its links. */
	for (int i = 0; i < e->skel->skeleton->prog_cnt; i++) {
		struct bpf_link **l = e->skel->skeleton->progs[i].link;

		if (*l && !bpf_link__pin_path(*l)) {
			bpf_link__destroy(*l);
			*l = NULL;
		}
	}
	sh_demand_trim(e);
	return err;
}

void sh_demand_trim(struct sh_enforcer *e)
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;
	struct bpf_link *gone[SH_MAX_PROGS];
	int n = 0;

	e->need = sh_demand_slot(e, e->slot);
	/* An older generation may pin the same links (resumed): they are
	 * left to the next trim once it is gone (apply retires it first). */
	if (!e->attached || e->old_gens_pending)
		return;
	for (int i = 0; i < s->prog_cnt && n < SH_MAX_PROGS; i++) {
		struct bpf_link **l = s->progs[i].link;
		int err;

		if (!*l || needed(e, *s->progs[i].prog))
			continue;
		/* Unpinned first: a later daemon does not take it over. A pin
		 * that stays keeps its link ours (and attached). */
		err = bpf_link__unpin(*l);
		if (err) {
			sh_log("cannot unpin the link of %s: %s; it stays attached",
			       bpf_program__name(*s->progs[i].prog), strerror(-err));
			continue;
		}
		gone[n++] = *l;
		*l = NULL;
	}
	if (!n)
		return;
	sh_links_close_wait(e);
	memcpy(e->detaching, gone, n * sizeof(gone[0]));
	e->ndetaching = n;
	sh_links_close(e);
	sh_log("%d program%s detached: no policy in force needs %s", n, n == 1 ? "" : "s",
	       n == 1 ? "it" : "them");
}

int sh_demand_pin_progs(const struct sh_enforcer *e, unsigned gen)
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;
	char path[PATH_MAX + 256];

	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		const struct bpf_program *p = *s->progs[i].prog;
		int fd = e->res.on ? e->res.prog_fd[i] : bpf_program__fd(p);

		if (fd < 0 || !sh_pin_demand(bpf_program__name(p)))
			continue;
		sh_pin_path(path, sizeof(path), e->pin_dir, gen, "prog", bpf_program__name(p));
		if (bpf_obj_pin(fd, path))
			return -errno;
	}
	return 0;
}

static void *close_links(void *arg)
{
	struct sh_enforcer *e = arg;

	for (int i = 0; i < e->ndetaching; i++)
		bpf_link__destroy(e->detaching[i]);
	__atomic_store_n(&e->detach_done, true, __ATOMIC_RELEASE);
	return NULL;
}

void sh_links_close(struct sh_enforcer *e)
{
	e->detach_done = false;
	e->detach_running = pthread_create(&e->detach_thread, NULL, close_links, e) == 0;
	if (!e->detach_running) {
		close_links(e);
		e->ndetaching = 0;
	}
}

void sh_links_close_wait(struct sh_enforcer *e)
{
	if (!e->detach_running)
		return;
	pthread_join(e->detach_thread, NULL);
	e->detach_running = false;
	e->ndetaching = 0;
}
