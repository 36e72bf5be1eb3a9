// SPDX-License-Identifier: GPL-2.0
/*
 * One policy added to or dropped from the set in force, without a whole
 * apply (apply.c): a learning run's policy comes and goes with the run,
 * and a whole apply rewrites every rule of every policy (seconds with
 * 1,000 rules, while reloads and other runs wait).
 *
 * It is safe in the slot in force because nothing uses the policy while
 * it changes: a policy is added under the next free id, which no tag
 * names until the run's tag is written after it; it is dropped only once
 * no tag names it, and only when it is the last id (a drop from the
 * middle would move the ids after it: that takes a whole apply). The slot
 * in force then holds keys for ids below the set's size only; where a
 * change failed half-way and its keys could not be taken back, the next
 * change is a whole apply (stale_keys), which makes a clean slot the one
 * in force.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "compile.h"
#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

/* Every key of policy id in slot, from each map keyed by (slot, policy):
 * 0, or the first error. */
static int clear_policy(struct sh_enforcer *e, unsigned slot, unsigned id)
{
	const struct bpf_map *maps[] = { e->skel->maps.rules, e->skel->maps.net_rules,
					 e->skel->maps.dir_marks, e->skel->maps.dir_names,
					 e->skel->maps.exec_pins, e->skel->maps.pin_paths,
					 e->skel->maps.pin_digests };
	int err = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int r = sh_clear_keys(bpf_map__fd(maps[i]), slot, (int)id);

		if (r && !err)
			err = r;
	}
	return err;
}

/* Policy id of slot made invalid and its keys deleted; where that fails,
 * the next change is a whole apply. */
static void take_back(struct sh_enforcer *e, unsigned slot, unsigned id)
{
	struct sh_errors ignored = {};
	int err = sh_write_conf(e, slot, id, NULL, false, &ignored);

	/* Both, whatever the first gave. */
	if (clear_policy(e, slot, id) || err) {
		e->stale_keys = true;
		sh_log("policy id %u of slot %u: its keys could not all be deleted; the next "
		       "policy change applies the whole set", id, slot);
	}
	sh_errors_free(&ignored);
}

int sh_enforcer_add_policy(struct sh_enforcer *e, const struct sh_policy *p,
			   struct sh_errors *errs)
{
	unsigned slot = e->slot, id = (unsigned)e->set.n;
	struct sh_policy_set set = {};
	bool dirs = false;
	char *name;
	int err;

	if (e->stale_keys || p->ncgroups)
		return -EAGAIN;         /* a whole apply (cgroup = lines are tags) */
	if (id >= SH_MAX_POLICIES) {
		sh_errors_add(errs, "%u policies, at most %d", id + 1, SH_MAX_POLICIES);
		return -E2BIG;
	}
	if (sh_policy_find(&e->set, p->name)) {
		sh_errors_add(errs, "a policy named '%s' is loaded already", p->name);
		return -EEXIST;
	}
	name = strdup(p->name);
	err = name ? sh_policy_set_dup(&set, &e->set, p, 1) : -ENOMEM;
	if (err) {
		free(name);
		return err;
	}
	/* The programs it needs linked first (demand.c), then its rules,
	 * then the table entry that makes the id valid; no tag names the id
	 * before the caller writes one. */
	err = sh_demand_need(e, sh_compile_flags(p));
	if (err)
		sh_errors_add(errs, "cannot attach the programs policy '%s' needs (see the "
			      "daemon's log)", p->name);
	if (!err)
		err = sh_write_policy(e, slot, id, p, &dirs, errs);
	if (!err)
		err = sh_write_conf(e, slot, id, p, dirs, errs);
	if (err) {
		take_back(e, slot, id);
		sh_demand_trim(e);
		sh_policy_set_free(&set);
		free(name);
		return err;
	}
	free(e->names[slot][id]);
	e->names[slot][id] = name;
	sh_policy_set_free(&e->set);
	e->set = set;
	sh_bump_gen(e);
	sh_enforcer_save_state(e);
	return 0;
}

int sh_enforcer_drop_policy(struct sh_enforcer *e, const char *name)
{
	const struct sh_policy *p = sh_policy_find(&e->set, name);
	unsigned slot = e->slot, id;

	if (!p)
		return -ENOENT;
	id = (unsigned)(p - e->set.pols);
	if (e->stale_keys || id + 1 != e->set.n)
		return -EAGAIN;         /* ids after it would move: a whole apply */
	for (size_t i = 0; i < e->ntags; i++)
		if (!strcmp(e->tags[i].policy, name))
			return -EBUSY;
	take_back(e, slot, id);
	free(e->names[slot][id]);
	e->names[slot][id] = NULL;
	sh_policy_free(&e->set.pols[--e->set.n]);
	sh_bump_gen(e);
	sh_demand_trim(e);
	sh_enforcer_save_state(e);
	return 0;
}
