// SPDX-License-Identifier: GPL-2.0
/*
 * Policy sets and tags in force: a new set is compiled (compile.c) into the
 * inactive slot of the rules and policy maps, the tags get their policy in
 * that slot, and one store to `active_slot` switches every program over.
 * On any error nothing in force changes. Tagging and untagging a cgroup
 * by hand and for runs: tags.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "compile.h"
#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

/* The tries key on (prefixlen, slot, ...), dir_names on (id, slot, ...):
 * one clearing serves all. */
_Static_assert(offsetof(struct sh_rule_key, slot) == 4 && offsetof(struct sh_net_key, slot) == 4 &&
	       offsetof(struct sh_pin_key, slot) == 4 && offsetof(struct sh_pin_digest_key, slot) == 4,
	       "slot at byte 4 of every trie key");
_Static_assert(sizeof(struct sh_net_key) <= sizeof(struct sh_rule_key), "key buffer size");

_Static_assert(offsetof(struct sh_rule_key, policy) == 6 && offsetof(struct sh_net_key, policy) == 6 &&
	       offsetof(struct sh_name_key, policy) == 6 && offsetof(struct sh_pin_key, policy) == 6 &&
	       offsetof(struct sh_pin_digest_key, policy) == 6, "policy at bytes 6-7 of every trie key");

/* Delete every key of one slot (and, policy >= 0, of that policy only)
 * from a trie keyed as above: collected in one walk, then deleted (a walk
 * that deletes as it goes restarts). */
int sh_clear_keys(int fd, unsigned slot, int policy)
{
	typedef union {
		struct sh_rule_key r;
		struct sh_net_key n;
		struct sh_name_key m;
		struct sh_pin_key p;
		struct sh_pin_digest_key g;
		uint8_t b[8];
	} key_t;
	key_t key, last, *all = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &key) == 0; prev = &last) {
		last = key;
		if (key.b[4] != slot || (policy >= 0 && (key.b[6] | key.b[7] << 8) != policy))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			key_t *na = realloc(all, ncap * sizeof(*all));

			if (!na) {
				free(all);
				return -ENOMEM;
			}
			all = na;
			cap = ncap;
		}
		all[n++] = key;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, &all[i]) && errno != ENOENT && !err)
			err = -errno;
	free(all);
	return err;
}

static int clear_slot(int fd, unsigned slot)
{
	return sh_clear_keys(fd, slot, -1);
}

/* Writes policy p's [net] rules, as policy `id` of `slot`, into net_rules. */
static int write_net_rules(int fd, unsigned slot, unsigned id, const struct sh_policy *p,
			   struct sh_errors *errs)
{
	struct sh_compiled_net *v;
	size_t n;
	int err = sh_compile_net(p, slot, id, &v, &n, errs);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (!bpf_map_update_elem(fd, &v[i].key, &v[i].val, BPF_ANY))
			continue;
		err = -errno;
		sh_errors_add(errs, "%s: cannot store [net] rules: %s", p->file, strerror(-err));
		break;
	}
	free(v);
	return err;
}

/*
 * Writes the directory markers of compiled rules c into dir_marks
 * (marks_fd) and the names below them into dir_names (names_fd): 0, 1
 * where no room was left (the policy holds without its memo), or -errno.
 * A marker whose names did not all fit is written with id 0: every name
 * in it is judged by path.
 */
static int write_dirs(int marks_fd, int names_fd, const struct sh_compiled *c,
		      const struct sh_policy *p, struct sh_errors *errs)
{
	struct sh_compiled_dirs d;
	int err = sh_compile_dirs(c, &d);
	__u32 one = 1;

	for (size_t i = 0; !err && i < d.nnames; i++)
		if (bpf_map_update_elem(names_fd, &d.names[i], &one, BPF_ANY))
			err = -errno;
	if (err == -ENOSPC || err == -E2BIG) {
		sh_log("%s: no room for the names below its directory markers (%s): the names "
		       "in those directories are judged by path", p->file, strerror(-err));
		for (size_t i = 0; i < d.n; i++)
			d.marks[i].val.id = 0;
		err = 0;
	}
	for (size_t i = 0; !err && i < d.n; i++)
		if (bpf_map_update_elem(marks_fd, &d.marks[i].key, &d.marks[i].val, BPF_ANY))
			err = -errno;
	sh_compile_dirs_free(&d);
	if (err == -ENOSPC || err == -E2BIG) {
		/* The map is full: the policy holds, without its memo. */
		sh_log("%s: no room for its directory markers (%s): its directories are "
		       "judged by path on every use, and a name compared without case is "
		       "refused wherever its rules could judge it", p->file, strerror(-err));
		return 1;
	}
	if (err)
		sh_errors_add(errs, "%s: cannot store directory markers: %s", p->file,
			      strerror(-err));
	return err;
}

/* Writes policy p's rules, as policy `id` of `slot`, into the rules map,
 * and their directory markers into dir_marks and dir_names (dirs_fd[2]):
 * *dirs says whether all markers are there. */
static int write_policy_rules(int fd, const int dirs_fd[2], unsigned slot, unsigned id,
			      const struct sh_policy *p, bool *dirs, struct sh_errors *errs)
{
	struct sh_compiled c;
	int err;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct sh_rule *r = &p->rules[i];

		if (r->key && strcmp(r->key, r->path) != 0)
			sh_dbg("%s:%d: rule %s resolves to %s", p->file, r->line, r->path, r->key);
	}
	err = sh_compile_rules(p, slot, id, &c, errs);
	if (err)
		return err;
	for (size_t i = 0; i < c.n; i++) {
		const struct sh_compiled_rule *r = &c.rules[i];

		if (!bpf_map_update_elem(fd, &r->key, &r->act, BPF_ANY))
			continue;
		err = -errno;
		if (r->rule)
			sh_errors_add(errs, "%s:%d: cannot store rule %s: %s",
				      p->file, r->rule->line, r->rule->path, strerror(-err));
		else
			sh_errors_add(errs, "%s: cannot store default lib rule: %s",
				      p->file, strerror(-err));
		break;
	}
	*dirs = false;
	if (!err) {
		err = write_dirs(dirs_fd[0], dirs_fd[1], &c, p, errs);
		*dirs = err == 0;
		if (err > 0)
			err = 0;
	}
	sh_compile_free(&c);
	return err;
}

/* Appends a copy of t (its strings duplicated) to the list *v of *n. */
static int push_tag(struct sh_tag_entry **v, size_t *n, size_t *cap,
		    const struct sh_tag_entry *t)
{
	struct sh_tag_entry *e;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;

		e = realloc(*v, ncap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		*v = e;
		*cap = ncap;
	}
	e = &(*v)[(*n)++];
	*e = *t;
	e->path = strdup(t->path);
	e->policy = strdup(t->policy);
	return e->path && e->policy ? 0 : -ENOMEM;
}

/*
 * The tag list of a new set: the cgroups its policies name, then the
 * runtime tags of e, each of which must name a policy of the set.
 */
static int new_tag_list(struct sh_enforcer *e, const struct sh_policy_set *set,
			struct sh_tag_entry **nt, size_t *nnt, struct sh_errors *errs)
{
	size_t cap = 0;
	int err;

	for (size_t i = 0; i < set->n; i++) {
		const struct sh_policy *p = &set->pols[i];

		for (size_t c = 0; c < p->ncgroups; c++) {
			struct sh_tag_entry t = { .from_policy = true, .path = p->cgroups[c],
						  .policy = p->name };
			char why[512];

			if (sh_cgroup_is_pattern(p->cgroups[c]))
				continue;   /* patterns.c */

			err = sh_tag_id(p->cgroups[c], &t.cgid, why, sizeof(why));
			if (err) {
				sh_errors_add(errs, "%s:%d: %s", p->file,
					      p->cgroup_lines ? p->cgroup_lines[c] : 0, why);
				return err;
			}
			err = push_tag(nt, nnt, &cap, &t);
			if (err)
				return err;
		}
	}
	for (size_t i = 0; i < e->ntags; i++) {
		const struct sh_tag_entry *t = &e->tags[i];

		if (t->from_policy)
			continue;
		if (sh_policy_index(set, t->policy) < 0) {
			sh_errors_add(errs, "policy '%s' is in use by %s %s; untag it or end the run first",
				      t->policy, t->run_id ? "run cgroup" : "tagged cgroup", t->path);
			return -EBUSY;
		}
		/* A tree tagged by hand has the host's /tmp. */
		if (!t->run_id && set->pols[sh_policy_index(set, t->policy)].limits.private_tmp) {
			sh_errors_add(errs, "policy '%s' now has private-tmp, which only runs get; "
				      "untag %s first", t->policy, t->path);
			return -EBUSY;
		}
		err = push_tag(nt, nnt, &cap, &(struct sh_tag_entry){ .cgid = t->cgid,
			.run_id = t->run_id, .path = t->path, .policy = t->policy });
		if (err)
			return err;
	}
	for (size_t i = 0; i < *nnt; i++)
		for (size_t j = 0; j < i; j++)
			if ((*nt)[i].cgid == (*nt)[j].cgid) {
				sh_errors_add(errs, "cgroup %s is tagged twice (policies '%s' and '%s')",
					      (*nt)[i].path, (*nt)[j].policy, (*nt)[i].policy);
				return -EEXIST;
			}
	return 0;
}

/* Writes policy p's rules, [net] rules and pins as policy id of slot;
 * *dirs says whether all its directory markers are there. */
int sh_write_policy(struct sh_enforcer *e, unsigned slot, unsigned id, const struct sh_policy *p,
		    bool *dirs, struct sh_errors *errs)
{
	int pins_fd[3] = { bpf_map__fd(e->skel->maps.exec_pins),
			   bpf_map__fd(e->skel->maps.pin_paths),
			   bpf_map__fd(e->skel->maps.pin_digests) };
	int dirs_fd[2] = { bpf_map__fd(e->skel->maps.dir_marks),
			   bpf_map__fd(e->skel->maps.dir_names) };
	int err = write_policy_rules(bpf_map__fd(e->skel->maps.rules), dirs_fd, slot, id, p, dirs,
				     errs);

	if (!err)
		err = write_net_rules(bpf_map__fd(e->skel->maps.net_rules), slot, id, p, errs);
	if (!err)
		err = sh_enforcer_write_pins(pins_fd, slot, id, p, errs);
	return err;
}

/* The policy table's entry for policy id of slot: p's flags and
 * capabilities, or (p NULL) none. */
int sh_write_conf(struct sh_enforcer *e, unsigned slot, unsigned id, const struct sh_policy *p,
		  bool dirs, struct sh_errors *errs)
{
	struct sh_policy_conf conf = {};
	uint32_t idx = slot * SH_MAX_POLICIES + id;

	if (p) {
		/* SH_PF_MARKS: its markers are written, so the programs may
		 * memoize its directories; SH_PF_FOLD: its fold markers too,
		 * so a name compared without case is refused only below one. */
		conf.flags = sh_compile_flags(p) | (dirs ? SH_PF_MARKS | SH_PF_FOLD : 0);
		conf.caps = p->caps_allow;
	}
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.policies), &idx, &conf, BPF_ANY)) {
		int err = -errno;

		sh_errors_add(errs, "cannot write policy table: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Fills slot ns (not in force) with the rules and policy table of set. */
static int fill_slot(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		     struct sh_errors *errs)
{
	bool dirs[SH_MAX_POLICIES] = { false };
	int err;

	for (size_t i = 0; i < set->n; i++) {
		err = sh_write_policy(e, ns, i, &set->pols[i], &dirs[i], errs);
		if (err)
			return err;
	}
	for (uint32_t i = 0; i < SH_MAX_POLICIES; i++) {
		err = sh_write_conf(e, ns, i, i < set->n ? &set->pols[i] : NULL, dirs[i], errs);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Gives every cgroup of the new tag list its policy in slot ns, and takes
 * slot ns from the tags the list drops; entries keep their policy in the
 * slot in force.  *ntag_new: how many were written.
 */
static int tag_slot(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		    const struct sh_tag_entry *nt, size_t nnt, size_t *ntag_new,
		    struct sh_errors *errs)
{
	int tags_fd = bpf_map__fd(e->skel->maps.tags);
	int err;

	for (size_t i = 0; i < nnt; i++) {
		struct sh_cgroup_tag v = { .policy = { SH_POLICY_NONE, SH_POLICY_NONE } };

		bpf_map_lookup_elem(tags_fd, &nt[i].cgid, &v);
		v.policy[ns] = sh_policy_index(set, nt[i].policy);
		v.run_id = nt[i].run_id;
		if (bpf_map_update_elem(tags_fd, &nt[i].cgid, &v, BPF_ANY)) {
			err = -errno;
			sh_errors_add(errs, "cannot tag %s: %s", nt[i].path, strerror(-err));
			return err; /* entries with policy[old] set are unchanged in force */
		}
		(*ntag_new)++;
	}
	for (size_t i = 0; i < e->ntags; i++) {
		struct sh_cgroup_tag v;
		bool keep = false;

		for (size_t j = 0; j < nnt; j++)
			keep |= nt[j].cgid == e->tags[i].cgid;
		if (keep || bpf_map_lookup_elem(tags_fd, &e->tags[i].cgid, &v))
			continue;
		v.policy[ns] = SH_POLICY_NONE;
		bpf_map_update_elem(tags_fd, &e->tags[i].cgid, &v, BPF_ANY);
	}
	return 0;
}

/* Drops every tag the new list does not have (including any left by a
 * previous daemon whose record was lost), but for the patterns'. */
static void drop_stale_tags(struct sh_enforcer *e, const struct sh_tag_entry *nt, size_t nnt)
{
	int tags_fd = bpf_map__fd(e->skel->maps.tags);

	for (;;) {
		__u64 key, next;
		void *prev = NULL;
		bool found = false;

		while (bpf_map_get_next_key(tags_fd, prev, &next) == 0) {
			struct sh_cgroup_tag v;
			bool keep = false;

			for (size_t j = 0; j < nnt; j++)
				keep |= nt[j].cgid == next;
			/* A pattern's: patterns.c decides (sh_patterns_refresh). */
			keep |= !bpf_map_lookup_elem(tags_fd, &next, &v) && (v.run_id & SH_TAG_PATTERN);
			if (!keep) {
				found = true;
				break;
			}
			key = next;
			prev = &key;
		}
		if (!found || bpf_map_delete_elem(tags_fd, &next))
			break;
		sh_log("dropped tag of cgroup id %llu: no policy or run claims it",
		       (unsigned long long)next);
	}
}

/* Makes slot ns the one in force, then keeps the new set and tag list
 * (taking both over). */
static void switch_slot(struct sh_enforcer *e, unsigned ns, struct sh_policy_set *set,
			struct sh_tag_entry *nt, size_t nnt, size_t ntag_new)
{
	/* One store makes the new slot the one in force. */
	if (ntag_new > e->skel->bss->ntagged)
		e->skel->bss->ntagged = ntag_new;
	__atomic_store_n(&e->skel->bss->active_slot, ns, __ATOMIC_SEQ_CST);
	sh_bump_gen(e);
	e->slot = ns;
	e->stale_keys = false;  /* filled from clear */

	drop_stale_tags(e, nt, nnt);
	e->skel->bss->ntagged = ntag_new;
	sh_bump_gen(e);

	for (int i = 0; i < SH_MAX_POLICIES; i++) {
		free(e->names[ns][i]);
		e->names[ns][i] = (size_t)i < set->n ? strdup(set->pols[i].name) : NULL;
	}
	sh_enforcer_free_tags(e->tags, e->ntags);
	e->tags = nt;
	e->ntags = nnt;
	sh_policy_set_free(&e->set);
	e->set = *set;
	memset(set, 0, sizeof(*set));
	sh_enforcer_save_state(e);
}

int sh_enforcer_apply(struct sh_enforcer *e, struct sh_policy_set *set,
		      struct sh_errors *errs)
{
	int rules_fd = bpf_map__fd(e->skel->maps.rules);
	int net_fd = bpf_map__fd(e->skel->maps.net_rules);
	int marks_fd = bpf_map__fd(e->skel->maps.dir_marks);
	int names_fd = bpf_map__fd(e->skel->maps.dir_names);
	int pins_fd[3] = { bpf_map__fd(e->skel->maps.exec_pins),
			   bpf_map__fd(e->skel->maps.pin_paths),
			   bpf_map__fd(e->skel->maps.pin_digests) };
	unsigned ns = !e->slot;
	struct sh_tag_entry *nt = NULL;
	size_t nnt = 0, ntag_new = 0;
	bool pattern;
	int err;

	if (set->n > SH_MAX_POLICIES) {
		sh_errors_add(errs, "%zu policies, at most %d", set->n, SH_MAX_POLICIES);
		return -E2BIG;
	}
	err = new_tag_list(e, set, &nt, &nnt, errs);
	if (err)
		goto out;

	/* Fill the inactive slot. */
	err = clear_slot(rules_fd, ns);
	if (!err)
		err = clear_slot(net_fd, ns);
	if (!err)
		err = clear_slot(marks_fd, ns);
	if (!err)
		err = clear_slot(names_fd, ns);
	for (int i = 0; !err && i < 3; i++)
		err = clear_slot(pins_fd[i], ns);
	if (err) {
		sh_errors_add(errs, "cannot clear the inactive policy slot: %s", strerror(-err));
		goto out;
	}
	err = fill_slot(e, ns, set, errs);
	pattern = sh_patterns_any(set);
	/* The programs on demand the set just written into slot ns needs,
	 * where the programs are attached (demand.c); then the programs are
	 * attached before the first tag (or pattern) is written. */
	if (!err && sh_demand_need(e, sh_demand_slot(e, ns))) {
		sh_errors_add(errs, "cannot attach the programs its policies need (see the "
			      "daemon's log): the policies in force are unchanged");
		err = -EIO;
	}
	if (!err && (nnt || pattern) && sh_enforcer_wake(e)) {
		sh_errors_add(errs, "cannot attach the programs (see the daemon's log): "
			      "no cgroup tagged");
		err = -EIO;
	}
	if (!err)
		err = tag_slot(e, ns, set, nt, nnt, &ntag_new, errs);
	if (!err)
		err = sh_patterns_write(e, ns, set, errs);
	if (!err)
		err = sh_patterns_scan(e, ns, set, nt, nnt, errs);
	if (err) {
		/* The active slot was never touched: the old policy stays in force. */
		clear_slot(rules_fd, ns);
		clear_slot(net_fd, ns);
		clear_slot(marks_fd, ns);
		clear_slot(names_fd, ns);
		for (int i = 0; i < 3; i++)
			clear_slot(pins_fd[i], ns);
		sh_patterns_write(e, ns, &(struct sh_policy_set){ 0 }, errs);
		/* Nothing linked for this set stays but what is in force needs. */
		sh_demand_trim(e);
		goto out;
	}
	/* While a set has patterns, the programs look at every task: a
	 * cgroup may be tagged at any time. */
	switch_slot(e, ns, set, nt, nnt, ntag_new + pattern);
	sh_patterns_retire(e);
	sh_patterns_refresh(e);
	sh_enforcer_retire_old(e);
	/* After the older generations: a resumed link is pinned there too. */
	sh_demand_trim(e);
	return 0;

out:
	sh_enforcer_free_tags(nt, nnt);
	return err;
}
