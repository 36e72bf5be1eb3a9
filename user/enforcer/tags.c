// SPDX-License-Identifier: GPL-2.0
/*
 * Tagging and untagging one cgroup while a set is in force: `sharnessctl
 * tag`/`untag` and the cgroups of runs. The programs are attached before
 * a tag is written; every change bumps the tag generation, so what the
 * programs remember of the cgroup is looked up again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

int sh_enforcer_tag(struct sh_enforcer *e, const char *cgroup, const char *policy,
		    uint32_t run_id, char *errbuf, size_t errlen)
{
	int tags_fd = bpf_map__fd(e->skel->maps.tags);
	struct sh_cgroup_tag v = { .policy = { SH_POLICY_NONE, SH_POLICY_NONE } };
	struct sh_tag_entry *t;
	uint64_t id;
	int idx, err;

	if (strpbrk(cgroup, "\t\n")) {
		snprintf(errbuf, errlen, "cgroup path must not contain tabs or newlines");
		return -EINVAL;
	}
	idx = sh_policy_index(&e->set, policy);
	if (idx < 0) {
		sh_policy_not_found(&e->set, policy, errbuf, errlen);
		return -ENOENT;
	}
	err = sh_tag_id(cgroup, &id, errbuf, errlen);
	if (err)
		return err;
	for (size_t i = 0; i < e->ntags; i++)
		if (e->tags[i].cgid == id) {
			snprintf(errbuf, errlen, "%s is already tagged with policy '%s'",
				 cgroup, e->tags[i].policy);
			return -EEXIST;
		}
	t = realloc(e->tags, (e->ntags + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	e->tags = t;
	t = &e->tags[e->ntags];
	*t = (struct sh_tag_entry){ .cgid = id, .run_id = run_id,
		.path = strdup(cgroup), .policy = strdup(policy) };
	if (!t->path || !t->policy) {
		free(t->path);
		free(t->policy);
		return -ENOMEM;
	}
	v.policy[e->slot] = idx;
	v.run_id = run_id;
	/* The programs are attached before the tag is written. */
	err = sh_enforcer_wake(e);
	if (err) {
		snprintf(errbuf, errlen, "cannot tag %s: the programs cannot be attached: %s",
			 cgroup, strerror(-err));
		free(t->path);
		free(t->policy);
		return err;
	}
	/* A verdict "outside" remembered under the generation in force is
	 * forgotten before the tag counts (and again after). */
	sh_bump_gen(e);
	if (bpf_map_update_elem(tags_fd, &id, &v, BPF_NOEXIST)) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot tag %s: %s", cgroup, strerror(-err));
		free(t->path);
		free(t->policy);
		return err;
	}
	e->ntags++;
	e->skel->bss->ntagged = e->skel->bss->ntagged + 1;
	sh_bump_gen(e);
	sh_enforcer_save_state(e);
	return 0;
}

/* Untags cgroup id, or where id is 0 the tag of path cgroup (a removed
 * cgroup, found by the path it was tagged under). */
static int untag(struct sh_enforcer *e, const char *cgroup, uint64_t id, char *errbuf,
		 size_t errlen)
{
	int tags_fd = bpf_map__fd(e->skel->maps.tags), err;

	for (size_t i = 0; i < e->ntags; i++) {
		struct sh_tag_entry *t = &e->tags[i];

		if (id ? t->cgid != id : strcmp(t->path, cgroup) != 0)
			continue;
		id = t->cgid;
		if (t->from_policy) {
			snprintf(errbuf, errlen, "%s is tagged by policy '%s' (cgroup = line); "
				 "remove it there and reload", cgroup, t->policy);
			return -EPERM;
		}
		if (bpf_map_delete_elem(tags_fd, &id) && errno != ENOENT) {
			err = -errno;
			snprintf(errbuf, errlen, "cannot untag %s: %s", cgroup, strerror(-err));
			return err;
		}
		/* After the tag: the cgroup is no tree's now. */
		bpf_map_delete_elem(bpf_map__fd(e->skel->maps.runtime_cgroups), &id);
		free(t->path);
		free(t->policy);
		memmove(t, t + 1, (e->ntags - i - 1) * sizeof(*t));
		e->ntags--;
		if (e->skel->bss->ntagged)
			e->skel->bss->ntagged = e->skel->bss->ntagged - 1;
		sh_bump_gen(e);
		sh_enforcer_save_state(e);
		return 0;
	}
	return -ENOENT;
}

int sh_enforcer_untag(struct sh_enforcer *e, const char *cgroup, char *errbuf, size_t errlen)
{
	uint64_t id;
	int err;

	if (sh_cgroup_id(cgroup, &id))
		id = 0;
	err = untag(e, cgroup, id, errbuf, errlen);
	if (err != -ENOENT)
		return err;
	if (id) {
		const struct sh_tag_entry *t = sh_patterns_tag(e, id);

		if (t) {
			snprintf(errbuf, errlen, "%s is tagged by a cgroup pattern of policy '%s'; "
				 "remove the pattern there and reload", cgroup, t->policy);
			return -EPERM;
		}
	}
	snprintf(errbuf, errlen, "%s is not tagged", cgroup);
	return -ENOENT;
}

bool sh_enforcer_runtime_tag(struct sh_enforcer *e, uint64_t cgid)
{
	__u32 v;

	return !bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.runtime_cgroups), &cgid, &v);
}

int sh_enforcer_tag_runtime(struct sh_enforcer *e, const char *cgroup, const char *policy,
			    uint32_t pid, char *errbuf, size_t errlen)
{
	int fd = bpf_map__fd(e->skel->maps.runtime_cgroups), err;
	const struct sh_policy *p = sh_policy_find(&e->set, policy);
	pid_t ids[2];
	uint64_t id;

	if (p && !p->from_exec) {
		snprintf(errbuf, errlen, "policy '%s' holds from entry: a container's runtime is in "
			 "its cgroup already and would be held before the container's command runs "
			 "(its set-up refused); give the policy held-from = exec", policy);
		return -EINVAL;
	}
	sh_enforcer_prune_runtime(e);
	err = sh_tag_id(cgroup, &id, errbuf, errlen);
	if (err)
		return err;
	/* At createRuntime the init is the cgroup's one process: a cgroup
	 * that holds others (the engine's own, shared) is no container's. */
	if (sh_cgroup_pids(cgroup, ids, 2) != 1 || (uint32_t)ids[0] != pid) {
		snprintf(errbuf, errlen, "process %u (the container's init) is not the one process "
			 "in %s", pid, cgroup);
		return -ESRCH;
	}
	/* Written before the tag: the init is never found in the tree
	 * without being taken for the runtime's. */
	if (bpf_map_update_elem(fd, &id, &pid, BPF_NOEXIST)) {
		err = -errno;
		if (err == -EEXIST)
			snprintf(errbuf, errlen, "%s is already tagged for a container", cgroup);
		else
			snprintf(errbuf, errlen, "cannot tag %s for a container: %s", cgroup,
				 strerror(-err));
		return err;
	}
	err = sh_enforcer_tag(e, cgroup, policy, 0, errbuf, errlen);
	if (err)
		bpf_map_delete_elem(fd, &id);
	return err;
}

void sh_enforcer_prune_runtime(struct sh_enforcer *e)
{
	uint64_t *gone = NULL, id;
	char **paths = NULL, err[256];
	bool *held = NULL;
	size_t n = 0;

	/* The container tags whose cgroup is removed (none of a container's
	 * processes left in it), and that no process counts as its tree. */
	for (size_t i = 0; i < e->ntags; i++) {
		const struct sh_tag_entry *t = &e->tags[i];
		int r = sh_cgroup_id(t->path, &id);
		void *g, *p;

		/* Present unless its path names no cgroup, or another cgroup
		 * made at the path since. */
		if (t->from_policy || t->run_id || !sh_enforcer_runtime_tag(e, t->cgid) ||
		    (r ? r != -ENOENT : id == t->cgid))
			continue;
		g = realloc(gone, (n + 1) * sizeof(*gone));
		if (g)
			gone = g;
		p = g ? realloc(paths, (n + 1) * sizeof(*paths)) : NULL;
		if (p)
			paths = p;
		if (!g || !p || !(paths[n] = strdup(t->path)))
			break;
		gone[n++] = t->cgid;
	}
	held = n ? calloc(n, sizeof(*held)) : NULL;
	if (held && !sh_tags_held(e, gone, n, held))
		for (size_t i = 0; i < n; i++)
			if (!held[i] && untag(e, paths[i], gone[i], err, sizeof(err)))
				sh_log("cannot untag the removed container cgroup %s: %s", paths[i], err);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(gone);
	free(held);
}

/*
 * The id of a cgroup that can be tagged. The programs look for tags at the
 * first SH_MAX_CGROUP_LEVEL levels only: a deeper tag would never match,
 * so it is refused rather than accepted and not enforced.
 */
int sh_tag_id(const char *cgroup, uint64_t *id, char *errbuf, size_t errlen)
{
	int level = 0, err = sh_cgroup_id_level(cgroup, id, &level);

	if (err == -ENOTDIR) {
		snprintf(errbuf, errlen, "%s is not a cgroup v2 directory under /sys/fs/cgroup",
			 cgroup);
		return err;
	}
	if (err) {
		snprintf(errbuf, errlen, "cgroup %s: %s", cgroup, strerror(-err));
		return err;
	}
	if (level >= SH_MAX_CGROUP_LEVEL) {
		snprintf(errbuf, errlen, "cgroup %s is %d levels deep; at most %d can be tagged",
			 cgroup, level, SH_MAX_CGROUP_LEVEL - 1);
		return -E2BIG;
	}
	return 0;
}

void sh_enforcer_idle_tick(struct sh_enforcer *e)
{
	uint64_t now = (sh_now_ns(CLOCK_MONOTONIC) / 1000000);

	sh_patterns_tick(e);
	if (e->ntags && now - e->runtime_gc_ms >= 60000) {
		e->runtime_gc_ms = now;
		sh_enforcer_prune_runtime(e);
	}
	sh_enforcer_rest_if_idle(e, now);
}

const char *sh_enforcer_tag_path(struct sh_enforcer *e, uint64_t cgid, uint32_t *run_id)
{
	const struct sh_tag_entry *t;

	for (size_t i = 0; i < e->ntags; i++)
		if (e->tags[i].cgid == cgid) {
			if (run_id)
				*run_id = e->tags[i].run_id;
			return e->tags[i].path;
		}
	t = sh_patterns_tag(e, cgid);
	if (t && run_id)
		*run_id = 0;
	return t ? t->path : NULL;
}

const struct sh_tag_entry *sh_enforcer_pattern_tags(struct sh_enforcer *e, size_t *n, bool refresh)
{
	if (refresh)
		sh_patterns_refresh(e);
	*n = e->nptags;
	return e->ptags;
}
