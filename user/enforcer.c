// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcer object: opens the programs (adopting a previous daemon's
 * pinned state), the daemon's own marks in the maps, the event ring and
 * the counters, and the policy set and tags in force with their switch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer.h"
#include "pin.h"
#include "probe.h"
#include "sharness.skel.h"
#include "util.h"

struct sh_enforcer {
	char *pin_dir;
	char *state_path;
	unsigned gen;                           /* pinned generation */
	bool adopted;                           /* maps reused from a previous daemon */
	struct sharness_bpf *skel;
	struct ring_buffer *rb;
	sh_event_fn fn;
	void *ctx;
	unsigned slot;                          /* active slot */
	char *names[SH_SLOTS][SH_MAX_POLICIES]; /* policy names per slot */
	struct sh_policy_set set;               /* policy set in force */
	struct sh_tag_entry *tags;
	size_t ntags;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct sh_enforcer *e = ctx;

	if (size < sizeof(struct sh_event))
		return 0;
	return e->fn ? e->fn(e->ctx, data) : 0;
}

/* Runtime tags (tag, run) survive a daemon restart in the state file. */
static void save_state(struct sh_enforcer *e)
{
	sh_pin_save_tags(e->state_path, e->tags, e->ntags);
}

static void restore_state(struct sh_enforcer *e)
{
	sh_pin_restore_tags(e->state_path, bpf_map__fd(e->skel->maps.tags), &e->tags, &e->ntags);
}

/*
 * Reuse the maps of the previous daemon's generation old_gen: tags, rules,
 * task membership and unread events carry over. Maps that do not fit this
 * build are left alone and a fresh skeleton is opened instead.
 */
static int adopt(struct sh_enforcer *e, unsigned old_gen)
{
	int err = sh_pin_adopt_maps(e->skel->obj, e->pin_dir, old_gen);

	if (!err) {
		e->adopted = true;
		return 0;
	}
	/* Start fresh; the old programs stay attached until ours are. */
	sh_log("cannot reuse the pinned maps of %s/gen-%u (%s): starting with "
	       "fresh maps; tags are restored from %s", e->pin_dir, old_gen,
	       strerror(-err), e->state_path ? e->state_path : "(nowhere)");
	sharness_bpf__destroy(e->skel);
	return sh_probe_open(&e->skel);
}

/* Load and attach ours, pin them as generation gen and only then remove
 * the older generations: there is no moment without enforcement. */
static int attach_and_pin(struct sh_enforcer *e, unsigned gen)
{
	int err = sharness_bpf__load(e->skel);

	if (!err)
		err = sharness_bpf__attach(e->skel);
	if (err)
		return err;
	err = sh_pin_all(e->skel->skeleton, e->pin_dir, gen);
	if (err) {
		sh_log("cannot pin under %s: %s (is bpffs mounted? mount -t bpf bpf /sys/fs/bpf)",
		       e->pin_dir, strerror(-err));
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
	e->gen = gen;
	/* Ours are attached and pinned: older generations can go. */
	sh_pin_remove_other_gens(e->pin_dir, e->gen);
	return 0;
}

int sh_enforcer_open(struct sh_enforcer **out, sh_event_fn fn, void *ctx,
		     const char *pin_dir, const char *state_path)
{
	struct sh_enforcer *e;
	unsigned old_gen;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fn = fn;
	e->ctx = ctx;
	e->pin_dir = strdup(pin_dir);
	e->state_path = state_path ? strdup(state_path) : NULL;
	if (!e->pin_dir || (state_path && !e->state_path)) {
		err = -ENOMEM;
		goto fail;
	}
	err = sh_probe_open(&e->skel);
	if (err)
		goto fail;
	old_gen = sh_pin_newest_gen(pin_dir);
	if (old_gen) {
		err = adopt(e, old_gen);
		if (err)
			goto fail;
	}
	err = attach_and_pin(e, old_gen + 1);
	if (err)
		goto fail;
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_sample, e, NULL);
	if (!e->rb) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	if (e->adopted) {
		e->slot = e->skel->bss->active_slot & 1;
		restore_state(e);
	} else {
		e->slot = 0;
		e->skel->bss->active_slot = 0;
		if (old_gen)
			restore_state(e);
	}
	*out = e;
	return 0;
fail:
	sh_enforcer_destroy(e);
	return err;
}

void sh_enforcer_set_daemon(struct sh_enforcer *e, uint32_t tgid)
{
	e->skel->bss->daemon_tgid = tgid;
}

void sh_enforcer_set_mmap_min(struct sh_enforcer *e, uint64_t addr)
{
	e->skel->bss->mmap_min_addr = addr;
}

void sh_enforcer_set_host_ipc_ns(struct sh_enforcer *e, uint32_t inum)
{
	e->skel->bss->host_ipc_ns = inum;
}

void sh_enforcer_set_control_socket(struct sh_enforcer *e, uint64_t ino, uint32_t kdev)
{
	e->skel->bss->ctl_dev = kdev;
	__atomic_store_n(&e->skel->bss->ctl_ino, ino, __ATOMIC_SEQ_CST);
}

int sh_enforcer_protect_set(struct sh_enforcer *e, const struct sh_protected *own, size_t n,
			    const char **failed)
{
	int fd = bpf_map__fd(e->skel->maps.protected_inodes);
	struct sh_inode_key keys[SH_MAX_PROTECTED], k, next;
	size_t nk = 0;
	void *prev = NULL;
	int err;

	*failed = NULL;
	if (n > SH_MAX_PROTECTED)
		return -E2BIG;
	/* Add (or widen) every mark first, so that nothing is unprotected
	 * in between; then drop the marks of files no longer ours. */
	for (size_t i = 0; i < n; i++) {
		uint32_t flags = own[i].flags, *have = NULL, old;

		uint64_t ino;
		uint32_t dev;

		err = sh_kernel_ino(own[i].path, &ino, &dev);
		if (err) {
			*failed = own[i].path;
			return err;
		}
		memset(&k, 0, sizeof(k));
		k.ino = ino;
		k.dev = dev;
		for (size_t j = 0; j < nk; j++)
			if (keys[j].ino == k.ino && keys[j].dev == k.dev)
				have = &flags;
		if (have && bpf_map_lookup_elem(fd, &k, &old) == 0)
			flags |= old;   /* the same inode named twice: both marks */
		if (bpf_map_update_elem(fd, &k, &flags, BPF_ANY)) {
			*failed = own[i].path;
			return -errno;
		}
		if (!have)
			keys[nk++] = k;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		bool keep = false;

		for (size_t j = 0; j < nk && !keep; j++)
			keep = keys[j].ino == next.ino && keys[j].dev == next.dev;
		if (!keep && bpf_map_delete_elem(fd, &next) == 0) {
			prev = NULL;   /* the walk restarts after a deletion */
			continue;
		}
		k = next;
		prev = &k;
	}
	__atomic_store_n(&e->skel->bss->nprotected, (uint32_t)nk, __ATOMIC_SEQ_CST);
	return 0;
}

int sh_enforcer_task_origin(struct sh_enforcer *e, int pidfd, uint64_t *origin)
{
	struct sh_task t;

	*origin = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.task_marks), &pidfd, &t))
		return errno == ENOENT ? 0 : -errno;
	*origin = t.origin;
	return 0;
}

uint64_t sh_enforcer_dropped_reported(struct sh_enforcer *e)
{
	return e->skel->bss->dropped_reported;
}

void sh_enforcer_set_dropped_reported(struct sh_enforcer *e, uint64_t v)
{
	e->skel->bss->dropped_reported = v;
}

bool sh_enforcer_adopted(struct sh_enforcer *e)
{
	return e->adopted;
}

/* Detach everything: unpin, then close (the links go with their last fd). */
int sh_enforcer_unload(struct sh_enforcer *e)
{
	int err = sh_pin_unload(e->pin_dir);

	if (e->state_path)
		unlink(e->state_path);
	return err;
}

static void free_tags(struct sh_tag_entry *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].path);
		free(t[i].policy);
	}
	free(t);
}

void sh_enforcer_destroy(struct sh_enforcer *e)
{
	if (!e)
		return;
	ring_buffer__free(e->rb);
	sharness_bpf__destroy(e->skel);
	for (int s = 0; s < SH_SLOTS; s++)
		for (int i = 0; i < SH_MAX_POLICIES; i++)
			free(e->names[s][i]);
	sh_policy_set_free(&e->set);
	free_tags(e->tags, e->ntags);
	free(e->pin_dir);
	free(e->state_path);
	free(e);
}

int sh_enforcer_events_fd(struct sh_enforcer *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

int sh_enforcer_consume(struct sh_enforcer *e)
{
	return ring_buffer__consume(e->rb);
}

void sh_enforcer_counters(struct sh_enforcer *e, uint64_t out[SH_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(e->skel->maps.counters);
	uint64_t *vals;

	memset(out, 0, sizeof(uint64_t) * SH_CNT_MAX);
	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (uint32_t i = 0; i < SH_CNT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
}

const char *sh_enforcer_policy_name(struct sh_enforcer *e, unsigned slot, unsigned id)
{
	if (slot >= SH_SLOTS || id >= SH_MAX_POLICIES || !e->names[slot][id])
		return NULL;
	return e->names[slot][id];
}

const struct sh_policy_set *sh_enforcer_policies(struct sh_enforcer *e)
{
	return &e->set;
}

const struct sh_tag_entry *sh_enforcer_tags(struct sh_enforcer *e, size_t *n)
{
	*n = e->ntags;
	return e->tags;
}

const char *sh_enforcer_tag_path(struct sh_enforcer *e, uint64_t cgid, uint32_t *run_id)
{
	for (size_t i = 0; i < e->ntags; i++)
		if (e->tags[i].cgid == cgid) {
			if (run_id)
				*run_id = e->tags[i].run_id;
			return e->tags[i].path;
		}
	return NULL;
}

/*
 * The id of a cgroup that can be tagged. The programs look for tags at the
 * first SH_MAX_CGROUP_LEVEL levels only: a deeper tag would never match,
 * so it is refused rather than accepted and not enforced.
 */
static int tag_id(const char *cgroup, uint64_t *id, char *errbuf, size_t errlen)
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

/* A policy's id in its set is its index there. */
static int policy_index(const struct sh_policy_set *set, const char *name)
{
	const struct sh_policy *p = sh_policy_find(set, name);

	return p ? (int)(p - set->pols) : -1;
}

/* Delete every rule key of one slot. */
static int clear_slot_rules(int fd, unsigned slot)
{
	struct sh_rule_key key, next;
	void *prev = NULL;
	int err;

	/* Deleting while iterating restarts the walk; collect first. */
	for (;;) {
		bool found = false;

		prev = NULL;
		while (bpf_map_get_next_key(fd, prev, &next) == 0) {
			if (next.slot == slot) {
				found = true;
				break;
			}
			key = next;
			prev = &key;
		}
		if (!found)
			return 0;
		err = bpf_map_delete_elem(fd, &next);
		if (err && errno != ENOENT)
			return -errno;
	}
}

static int put_rule(int fd, unsigned slot, unsigned kind, unsigned policy,
		    const char *path, size_t len, bool with_nul, uint32_t act)
{
	struct sh_rule_key key;
	size_t n = len + (with_nul ? 1 : 0);

	if (n > SH_PATH_KEY_MAX)
		return -ENAMETOOLONG;
	memset(&key, 0, sizeof(key));
	key.slot = slot;
	key.kind = kind;
	key.policy = policy;
	memcpy(key.path, path, len);
	key.prefixlen = 32 + n * 8;
	if (bpf_map_update_elem(fd, &key, &act, BPF_ANY))
		return -errno;
	return 0;
}

static void rule_target(enum sh_rule_kind k, unsigned *kind, uint32_t *act)
{
	switch (k) {
	case SH_EXEC_ALLOW:    *kind = SH_KEY_EXEC;    *act = SH_ACT_ALLOW; break;
	case SH_EXEC_DENY:     *kind = SH_KEY_EXEC;    *act = SH_ACT_DENY;  break;
	case SH_FILE_WRITE:    *kind = SH_KEY_FILE;    *act = SH_ACT_WRITE; break;
	case SH_FILE_DENY:     *kind = SH_KEY_FILE;    *act = SH_ACT_DENY;  break;
	case SH_CONNECT_ALLOW: *kind = SH_KEY_CONNECT; *act = SH_ACT_ALLOW; break;
	case SH_CONNECT_DENY:  *kind = SH_KEY_CONNECT; *act = SH_ACT_DENY;  break;
	case SH_EXEC_LIB:      *kind = SH_KEY_EXEC;    *act = SH_ACT_LIB;   break;
	case SH_FILE_DEVICE:   *kind = SH_KEY_DEVICE;  *act = SH_ACT_ALLOW; break;
	}
}

/*
 * The path the kernel will report for a rule: symlinks in a rule that
 * exists on this host are resolved (on Debian /bin/bash runs as
 * /usr/bin/bash). A rule for something that does not exist yet stays as
 * written.
 */
static void canonical_rule(const struct sh_rule *r, char *out, size_t n)
{
	char real[PATH_MAX];
	char tmp[PATH_MAX];
	size_t len = strlen(r->path);

	snprintf(out, n, "%s", r->path);
	snprintf(tmp, sizeof(tmp), "%s", r->path);
	if (r->dir && len > 1)
		tmp[len - 1] = 0;
	if (!realpath(tmp, real))
		return;
	if (r->dir && strcmp(real, "/") != 0)
		snprintf(out, n, "%s/", real);
	else
		snprintf(out, n, "%s", real);
}

/*
 * Where executable libraries may come from when a policy has an exec
 * allowlist and no `lib` rule of its own: the system library directories
 * (the dynamic loader lives there too). Programs in the allowlist keep
 * working; a library or loader payload elsewhere cannot be mapped.
 */
static const char *const default_lib_dirs[] = { "/usr/lib/", "/usr/lib64/", "/usr/local/lib/" };

static int write_policy_rules(int fd, unsigned slot, unsigned id,
			      const struct sh_policy *p, struct sh_errors *errs)
{
	char path[PATH_MAX + 2];
	int err;

	if (sh_policy_has_kind(p, SH_EXEC_ALLOW) && !sh_policy_has_kind(p, SH_EXEC_LIB)) {
		for (size_t i = 0; i < sizeof(default_lib_dirs) / sizeof(default_lib_dirs[0]); i++) {
			err = put_rule(fd, slot, SH_KEY_EXEC, id, default_lib_dirs[i],
				       strlen(default_lib_dirs[i]), false, SH_ACT_LIB);
			if (err) {
				sh_errors_add(errs, "%s: cannot store default lib rule: %s",
					      p->file, strerror(-err));
				return err;
			}
		}
	}

	/*
	 * Two passes: a directory rule also covers the directory itself (its
	 * path with a NUL); an explicit rule for that exact path, written in
	 * the second pass, takes precedence over it.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nrules; i++) {
			const struct sh_rule *r = &p->rules[i];
			unsigned kind = 0;
			uint32_t act = 0;
			size_t len;

			rule_target(r->kind, &kind, &act);
			canonical_rule(r, path, sizeof(path));
			len = strlen(path);
			if (len + 1 > SH_PATH_KEY_MAX) {
				sh_errors_add(errs, "%s:%d: rule path %s resolves to %zu bytes, more than %d",
					      p->file, r->line, r->path, len, SH_PATH_KEY_MAX - 1);
				return -ENAMETOOLONG;
			}
			if (strcmp(path, r->path) != 0)
				sh_dbg("%s:%d: rule %s resolves to %s", p->file, r->line, r->path, path);
			if (pass == 0) {
				if (!r->dir)
					continue;
				err = put_rule(fd, slot, kind, id, path, len, false, act);
				if (!err && len > 1)
					err = put_rule(fd, slot, kind, id, path, len - 1, true, act);
			} else {
				if (r->dir)
					continue;
				err = put_rule(fd, slot, kind, id, path, len, true, act);
			}
			if (err) {
				sh_errors_add(errs, "%s:%d: cannot store rule %s: %s",
					      p->file, r->line, r->path, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

static uint32_t policy_flags(const struct sh_policy *p)
{
	uint32_t f = SH_PF_VALID;

	if (p->mode == SH_MODE_AUDIT)
		f |= SH_PF_AUDIT;
	if (sh_policy_has_kind(p, SH_EXEC_ALLOW))
		f |= SH_PF_EXEC_ALLOWLIST;
	if (sh_policy_has_kind(p, SH_EXEC_ALLOW) || sh_policy_has_kind(p, SH_EXEC_DENY))
		f |= SH_PF_EXEC_RULES;
	if (sh_policy_has_kind(p, SH_FILE_WRITE))
		f |= SH_PF_FILE_WRITELIST;
	if (sh_policy_has_kind(p, SH_FILE_DENY))
		f |= SH_PF_FILE_DENY;
	if (p->abstract_deny)
		f |= SH_PF_ABSTRACT_DENY;
	if (p->signal_scope == SH_SCOPE_TREE)
		f |= SH_PF_SIGNAL_TREE;
	if (sh_policy_has_kind(p, SH_CONNECT_ALLOW) || sh_policy_has_kind(p, SH_CONNECT_DENY))
		f |= SH_PF_CONNECT_RULES;
	return f;
}

static void bump_gen(struct sh_enforcer *e)
{
	__atomic_add_fetch(&e->skel->bss->tag_gen, 1, __ATOMIC_SEQ_CST);
}

int sh_enforcer_apply(struct sh_enforcer *e, struct sh_policy_set *set,
		      struct sh_errors *errs)
{
	int rules_fd = bpf_map__fd(e->skel->maps.rules);
	int pol_fd = bpf_map__fd(e->skel->maps.policies);
	int tags_fd = bpf_map__fd(e->skel->maps.tags);
	unsigned old = e->slot, ns = !e->slot;
	struct sh_tag_entry *nt = NULL;
	size_t nnt = 0, cap = 0;
	size_t ntag_new = 0;
	int err = 0;

	if (set->n > SH_MAX_POLICIES) {
		sh_errors_add(errs, "%zu policies, at most %d", set->n, SH_MAX_POLICIES);
		return -E2BIG;
	}

	/* The new tag list: cgroups the policies name, then runtime tags. */
	for (size_t i = 0; i < set->n; i++) {
		const struct sh_policy *p = &set->pols[i];

		for (size_t c = 0; c < p->ncgroups; c++) {
			uint64_t id;

			char why[512];

			err = tag_id(p->cgroups[c], &id, why, sizeof(why));
			if (err) {
				sh_errors_add(errs, "%s:%d: %s", p->file,
					      p->cgroup_lines ? p->cgroup_lines[c] : 0, why);
				goto out;
			}
			if (nnt == cap) {
				struct sh_tag_entry *t;

				cap = cap ? cap * 2 : 8;
				t = realloc(nt, cap * sizeof(*nt));
				if (!t) { err = -ENOMEM; goto out; }
				nt = t;
			}
			nt[nnt] = (struct sh_tag_entry){ .cgid = id, .from_policy = true,
				.path = strdup(p->cgroups[c]), .policy = strdup(p->name) };
			nnt++;
			if (!nt[nnt - 1].path || !nt[nnt - 1].policy) { err = -ENOMEM; goto out; }
		}
	}
	for (size_t i = 0; i < e->ntags; i++) {
		const struct sh_tag_entry *t = &e->tags[i];

		if (t->from_policy)
			continue;
		if (policy_index(set, t->policy) < 0) {
			sh_errors_add(errs, "policy '%s' is in use by %s %s; untag it or end the run first",
				      t->policy, t->run_id ? "run cgroup" : "tagged cgroup", t->path);
			err = -EBUSY;
			goto out;
		}
		if (nnt == cap) {
			struct sh_tag_entry *tt;

			cap = cap ? cap * 2 : 8;
			tt = realloc(nt, cap * sizeof(*nt));
			if (!tt) { err = -ENOMEM; goto out; }
			nt = tt;
		}
		nt[nnt] = (struct sh_tag_entry){ .cgid = t->cgid, .run_id = t->run_id,
			.path = strdup(t->path), .policy = strdup(t->policy) };
		nnt++;
		if (!nt[nnt - 1].path || !nt[nnt - 1].policy) { err = -ENOMEM; goto out; }
	}
	for (size_t i = 0; i < nnt; i++)
		for (size_t j = 0; j < i; j++)
			if (nt[i].cgid == nt[j].cgid) {
				sh_errors_add(errs, "cgroup %s is tagged twice (policies '%s' and '%s')",
					      nt[i].path, nt[j].policy, nt[i].policy);
				err = -EEXIST;
				goto out;
			}

	/* Fill the inactive slot. */
	err = clear_slot_rules(rules_fd, ns);
	if (err) {
		sh_errors_add(errs, "cannot clear the inactive policy slot: %s", strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < set->n; i++) {
		err = write_policy_rules(rules_fd, ns, i, &set->pols[i], errs);
		if (err)
			goto out_clear;
	}
	for (uint32_t i = 0; i < SH_MAX_POLICIES; i++) {
		struct sh_policy_conf conf = {};
		uint32_t idx = ns * SH_MAX_POLICIES + i;

		if (i < set->n) {
			conf.flags = policy_flags(&set->pols[i]);
			conf.caps = set->pols[i].caps_allow;
		}
		if (bpf_map_update_elem(pol_fd, &idx, &conf, BPF_ANY)) {
			err = -errno;
			sh_errors_add(errs, "cannot write policy table: %s", strerror(-err));
			goto out_clear;
		}
	}
	/* Tags: every cgroup tagged now or after gets its new-slot policy. */
	for (size_t i = 0; i < nnt; i++) {
		struct sh_cgroup_tag v = { .policy = { SH_POLICY_NONE, SH_POLICY_NONE } };

		bpf_map_lookup_elem(tags_fd, &nt[i].cgid, &v);
		v.policy[ns] = policy_index(set, nt[i].policy);
		v.run_id = nt[i].run_id;
		if (bpf_map_update_elem(tags_fd, &nt[i].cgid, &v, BPF_ANY)) {
			err = -errno;
			sh_errors_add(errs, "cannot tag %s: %s", nt[i].path, strerror(-err));
			goto out_clear; /* entries with policy[old] set are unchanged in force */
		}
		ntag_new++;
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

	/* Switch: one store makes the new slot the one in force. */
	if (ntag_new > e->skel->bss->ntagged)
		e->skel->bss->ntagged = ntag_new;
	__atomic_store_n(&e->skel->bss->active_slot, ns, __ATOMIC_SEQ_CST);
	bump_gen(e);
	e->slot = ns;

	/* Drop every tag the new set does not have (including any left by a
	 * previous daemon whose record was lost). */
	for (;;) {
		__u64 key, next;
		void *prev = NULL;
		bool found = false;

		while (bpf_map_get_next_key(tags_fd, prev, &next) == 0) {
			bool keep = false;

			for (size_t j = 0; j < nnt; j++)
				keep |= nt[j].cgid == next;
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
	e->skel->bss->ntagged = ntag_new;
	bump_gen(e);

	for (int i = 0; i < SH_MAX_POLICIES; i++) {
		free(e->names[ns][i]);
		e->names[ns][i] = (size_t)i < set->n ? strdup(set->pols[i].name) : NULL;
	}
	free_tags(e->tags, e->ntags);
	e->tags = nt;
	e->ntags = nnt;
	sh_policy_set_free(&e->set);
	e->set = *set;
	memset(set, 0, sizeof(*set));
	(void)old;
	save_state(e);
	return 0;

out_clear:
	/* The active slot was never touched: the old policy stays in force. */
	clear_slot_rules(rules_fd, ns);
out:
	free_tags(nt, nnt);
	return err;
}

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
	idx = policy_index(&e->set, policy);
	if (idx < 0) {
		snprintf(errbuf, errlen, "no policy named '%s' is loaded", policy);
		return -ENOENT;
	}
	err = tag_id(cgroup, &id, errbuf, errlen);
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
	if (bpf_map_update_elem(tags_fd, &id, &v, BPF_NOEXIST)) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot tag %s: %s", cgroup, strerror(-err));
		free(t->path);
		free(t->policy);
		return err;
	}
	e->ntags++;
	e->skel->bss->ntagged = e->skel->bss->ntagged + 1;
	bump_gen(e);
	save_state(e);
	return 0;
}

int sh_enforcer_untag(struct sh_enforcer *e, const char *cgroup, char *errbuf, size_t errlen)
{
	int tags_fd = bpf_map__fd(e->skel->maps.tags);
	uint64_t id;
	int err;

	/* A removed cgroup is found by the path it was tagged under. */
	err = sh_cgroup_id(cgroup, &id);
	if (err)
		id = 0;
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
		free(t->path);
		free(t->policy);
		memmove(t, t + 1, (e->ntags - i - 1) * sizeof(*t));
		e->ntags--;
		if (e->skel->bss->ntagged)
			e->skel->bss->ntagged = e->skel->bss->ntagged - 1;
		bump_gen(e);
		save_state(e);
		return 0;
	}
	snprintf(errbuf, errlen, "%s is not tagged", cgroup);
	return -ENOENT;
}
