// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup patterns (sharness.h, bpf/cgroup.c) on the daemon's side: the
 * pattern table of a slot, the tags of the cgroups that already exist
 * when a set is applied, and the tags the programs make as cgroups are
 * created: their paths (status, records), and their end once the cgroup
 * is removed or no pattern of the set in force matches it.
 *
 * A set is applied as every other part of it is: its table is written in
 * the slot not in force, the tags get their policy in that slot, and the
 * store that switches slots puts both in force. Between the table and the
 * tags, the daemon moves itself into its own cgroup: the kernel takes
 * cgroup_mutex for that, which a cgroup's creation holds from the
 * tracepoint that tags it to the moment its directory appears. A creation
 * that read the table before it was written is then finished, named by
 * its id and listed in its directory, where the scan below finds it; any
 * later one reads the new table. After the switch the old slot's table
 * is emptied: a tag with no policy in force holds nothing, and an
 * ancestor's tag holds its processes (bpf/lib/member.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer_int.h"
#include "sharness.skel.h"
#include "glob.h"
#include "util.h"

#define GC_EVERY_MS 60000

/* A set's patterns in table order: policy by policy, line by line. */
struct pat {
	uint64_t parent;
	uint16_t policy;
	const char *glob;      /* in the policy's string */
	char *dir;
};

static void pats_free(struct pat *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].dir);
}

/* The patterns of set (at most SH_MAX_PATTERNS) in v: how many, or -errno
 * (in errs, when given: a directory that is not a cgroup). */
static int set_patterns(const struct sh_policy_set *set, struct pat *v, struct sh_errors *errs)
{
	size_t n = 0;

	for (size_t k = 0; k < set->n; k++) {
		const struct sh_policy *p = &set->pols[k];

		for (size_t c = 0; c < p->ncgroups; c++) {
			const char *cg = p->cgroups[c];
			char dir[PATH_MAX];
			int err;

			if (!sh_cgroup_is_pattern(cg))
				continue;
			if (n == SH_MAX_PATTERNS) {
				if (errs)
					sh_errors_add(errs, "more than %d cgroup patterns in all",
						      SH_MAX_PATTERNS);
				pats_free(v, n);
				return -E2BIG;
			}
			sh_dir_of(cg, dir, sizeof(dir));
			v[n] = (struct pat){ .policy = k, .glob = strrchr(cg, '/') + 1,
					     .dir = strdup(dir) };
			err = v[n].dir ? sh_cgroup_id(dir, &v[n].parent) : -ENOMEM;
			if (err) {
				if (errs)
					sh_errors_add(errs, "%s:%d: cgroup pattern %s: %s", p->file,
						      p->cgroup_lines ? p->cgroup_lines[c] : 0, cg,
						      err == -ENOTDIR ? "its directory is not a cgroup"
								      : strerror(-err));
				free(v[n].dir);
				pats_free(v, n);
				return err;
			}
			n++;
		}
	}
	return (int)n;
}

static uint16_t first_match(const struct pat *v, size_t n, uint64_t parent, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].parent == parent && sh_glob_match(v[i].glob, name))
			return v[i].policy;
	return SH_POLICY_NONE;
}

bool sh_patterns_any(const struct sh_policy_set *set)
{
	for (size_t k = 0; k < set->n; k++)
		for (size_t c = 0; c < set->pols[k].ncgroups; c++)
			if (sh_cgroup_is_pattern(set->pols[k].cgroups[c]))
				return true;
	return false;
}

int sh_patterns_write(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		      struct sh_errors *errs)
{
	int cfd = bpf_map__fd(e->skel->maps.cg_classes);
	int fd = bpf_map__fd(e->skel->maps.cg_patterns);
	struct pat v[SH_MAX_PATTERNS];
	struct sh_cgroup_pattern empty = { 0 };
	int n = set_patterns(set, v, errs), err = 0;
	uint32_t base = ns * SH_MAX_PATTERNS, idx;

	if (n < 0)
		return n;
	/* The table ends at its first entry, so it is empty while it is
	 * written and whole once entry 0 is. */
	if (bpf_map_update_elem(fd, &base, &empty, BPF_ANY))
		err = -errno;
	/* Each pattern's classes before the table holds it. */
	for (int i = 0; !err && i < n; i++) {
		struct sh_pattern_classes k;

		idx = base + i;
		err = sh_glob_compile(v[i].glob, &k);
		if (!err && bpf_map_update_elem(cfd, &idx, &k, BPF_ANY))
			err = -errno;
	}
	for (int i = n; !err && i >= 1; i--) {
		struct sh_cgroup_pattern t = { 0 };

		if (i < n) {
			t.parent = v[i].parent;
			t.policy = v[i].policy;
			t.len = strlen(v[i].glob);
			memcpy(t.glob, v[i].glob, t.len);
		}
		idx = base + i;
		if (i < SH_MAX_PATTERNS && bpf_map_update_elem(fd, &idx, &t, BPF_ANY))
			err = -errno;
	}
	if (!err && n) {
		struct sh_cgroup_pattern t = { .parent = v[0].parent, .policy = v[0].policy,
					       .len = strlen(v[0].glob) };

		memcpy(t.glob, v[0].glob, t.len);
		if (bpf_map_update_elem(fd, &base, &t, BPF_ANY))
			err = -errno;
	}
	if (err)
		sh_errors_add(errs, "cannot write the cgroup patterns: %s", strerror(-err));
	pats_free(v, n);
	return err;
}

/*
 * Every cgroup creation that began before now has finished (see above):
 * the daemon moves itself into the cgroup it is in (writes its pid to its
 * own cgroup.procs: nothing moves), for which the kernel takes
 * cgroup_mutex as every creation does. It needs no capability beyond the
 * unit's (the root cgroup's directory is 0555, so making a cgroup there
 * would need CAP_DAC_OVERRIDE; reading /proc/PID/cgroup took the lock only
 * before Linux 6.8). 0, or -errno.
 */
static int creations_done(void)
{
	char cg[PATH_MAX], path[PATH_MAX + 16], pid[24];
	int err = sh_cgroup_of(0, cg, sizeof(cg));

	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return sh_write_file(path, pid);
}

/*
 * A pattern tag's policy in slot ns: what nv gives its cgroup by its path;
 * once removed (a process that left it may count it as its tree), by the
 * name it was made with under a directory a pattern still names (one made
 * again has another id), else the same policy's in the new set: never none
 * by default, which would let such a process go. 0, or -errno.
 */
static int retag(struct sh_enforcer *e, uint64_t id, struct sh_cgroup_tag *t, unsigned ns,
		 const struct pat *nv, int n, const struct sh_policy_set *set)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct sh_cgroup_name nm;
	uint16_t was = t->policy[!ns];
	const char *held = was < SH_MAX_POLICIES ? e->names[!ns][was] : NULL, *name = NULL;
	uint64_t parent = 0;

	if (!sh_cgroup_path_of(id, path, sizeof(path))) {
		sh_dir_of(path, dir, sizeof(dir));
		name = sh_cgroup_id(dir, &parent) ? NULL : strrchr(path, '/') + 1;
	} else if (!bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.pattern_names), &id, &nm)) {
		nm.name[sizeof(nm.name) - 1] = 0;
		for (int i = 0; i < n && !name; i++)
			name = nv[i].parent == nm.parent ? nm.name : NULL;
		parent = nm.parent;
	}
	t->policy[ns] = name ? first_match(nv, n, parent, name) : SH_POLICY_NONE;
	for (size_t k = 0; !name && held && k < set->n; k++)
		if (!strcmp(set->pols[k].name, held))
			t->policy[ns] = (uint16_t)k;
	if (!bpf_map_update_elem(bpf_map__fd(e->skel->maps.tags), &id, t, BPF_EXIST))
		return 0;
	return errno == ENOENT ? 0 : -errno;
}

static bool in_list(const struct sh_tag_entry *nt, size_t nnt, uint64_t id)
{
	for (size_t i = 0; i < nnt; i++)
		if (nt[i].cgid == id)
			return true;
	return false;
}

/* The untagged matches in the directory of pattern i of nv (and the
 * cgroups of cgroup lines the new list nt drops) tagged for slot ns. */
static int tag_dir(struct sh_enforcer *e, unsigned ns, const struct pat *nv, int n, int i,
		   const struct pat *ov, int on, const struct sh_tag_entry *nt, size_t nnt,
		   struct sh_errors *errs)
{
	int fd = bpf_map__fd(e->skel->maps.tags), names_fd = bpf_map__fd(e->skel->maps.pattern_names);
	struct sh_cgroup_name nm = { 0 };
	struct dirent *de;
	DIR *d = opendir(nv[i].dir);
	int err = 0;

	if (!d) {
		err = -errno;
		sh_errors_add(errs, "cgroup pattern directory %s: %s", nv[i].dir, strerror(-err));
		return err;
	}
	while (!err && (de = readdir(d))) {
		struct sh_cgroup_tag t = { .policy = { SH_POLICY_NONE, SH_POLICY_NONE },
					   .run_id = SH_TAG_PATTERN };
		char path[PATH_MAX];
		uint16_t pol = first_match(nv, n, nv[i].parent, de->d_name);
		uint64_t id;
		bool had;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    pol == SH_POLICY_NONE)
			continue;
		snprintf(path, sizeof(path), "%s/%s", nv[i].dir, de->d_name);
		if (sh_cgroup_id(path, &id))
			continue;   /* removed since */
		had = !bpf_map_lookup_elem(fd, &id, &t);
		if (had && (t.run_id & SH_TAG_PATTERN))
			continue;   /* retagged by the caller */
		if (had && in_list(nt, nnt, id))
			continue;   /* a cgroup line of the new set, or a run's: it stands */
		/* New, or a cgroup line the new set drops: the pattern's from
		 * the switch on (what is in force stays until it). */
		if (!had)
			t.policy[!ns] = first_match(ov, on, nv[i].parent, de->d_name);
		t.run_id = SH_TAG_PATTERN;
		t.policy[ns] = pol;
		if (bpf_map_update_elem(fd, &id, &t, BPF_ANY)) {
			err = -errno;
			sh_errors_add(errs, "cannot tag %s (cgroup pattern): %s", path, strerror(-err));
		}
		/* Its name, as the programs keep a match's they tag (retag). */
		nm.parent = nv[i].parent;
		if (!err && snprintf(nm.name, sizeof(nm.name), "%s", de->d_name) < (int)sizeof(nm.name))
			bpf_map_update_elem(names_fd, &id, &nm, BPF_ANY);
	}
	closedir(d);
	return err;
}

/* The ids of the pattern tags in the map (*ids, malloc'd, *n of them):
 * 0, or -errno. */
static int pattern_ids(int fd, uint64_t **ids, size_t *n)
{
	uint64_t key, next, *v = NULL;
	size_t cap = 0;
	void *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sh_cgroup_tag t;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &next, &t) || !(t.run_id & SH_TAG_PATTERN))
			continue;
		if (*n == cap) {
			uint64_t *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = next;
	}
	*ids = v;
	return 0;
}

int sh_patterns_scan(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		     const struct sh_tag_entry *nt, size_t nnt, struct sh_errors *errs)
{
	int fd = bpf_map__fd(e->skel->maps.tags);
	struct pat nv[SH_MAX_PATTERNS], ov[SH_MAX_PATTERNS];
	uint64_t *ids = NULL;
	size_t nids = 0;
	int n, on, err;

	/* A set without patterns leaves its table empty: no creation reads
	 * anything of it to wait for. */
	err = sh_patterns_any(set) ? creations_done() : 0;
	if (err) {
		sh_errors_add(errs, "cannot write the daemon's own cgroup.procs (the wait for "
			      "cgroups being made): %s", strerror(-err));
		return err;
	}
	n = set_patterns(set, nv, errs);
	if (n < 0)
		return n;
	on = set_patterns(&e->set, ov, NULL);
	if (on < 0)
		on = 0;   /* the set in force no longer resolves: its slot gets none */
	/* Every pattern tag gets its policy in slot ns from the new set, by
	 * its cgroup's path now (the programs may have written it from the
	 * table before this one). The ids are read first: an update puts the
	 * element at the head of its hash bucket, so a walk that updated as
	 * it went would meet two tags of one bucket in turn, for ever. */
	err = pattern_ids(fd, &ids, &nids);
	if (err) {
		sh_errors_add(errs, "cannot read the cgroup tags: %s", strerror(-err));
		pats_free(nv, n);
		pats_free(ov, on);
		return err;
	}
	for (size_t k = 0; k < nids && !err; k++) {
		struct sh_cgroup_tag t;

		if (!bpf_map_lookup_elem(fd, &ids[k], &t) && (t.run_id & SH_TAG_PATTERN))
			err = retag(e, ids[k], &t, ns, nv, n, set);
	}
	free(ids);
	if (err)
		sh_errors_add(errs, "cannot write a cgroup pattern's tag: %s", strerror(-err));
	/* Then the matches that have no tag yet (made before the set had
	 * their pattern), and the cgroups a dropped cgroup line named that a
	 * pattern now matches. */
	for (int i = 0; i < n && !err; i++) {
		bool seen = false;

		for (int j = 0; j < i; j++)
			seen |= nv[j].parent == nv[i].parent;
		if (!seen)
			err = tag_dir(e, ns, nv, n, i, ov, on, nt, nnt, errs);
	}
	pats_free(nv, n);
	pats_free(ov, on);
	return err;
}

/* ---- the tags the patterns made, once a set is in force -------------- */

static void ptag_clear(struct sh_enforcer *e)
{
	sh_enforcer_free_tags(e->ptags, e->nptags);
	e->ptags = NULL;
	e->nptags = 0;
}

/* e->ptags gets the tag of cgroup id (policy id of the slot in force):
 * its entry, or NULL if it cannot be named (removed: -ESTALE in *gone). */
static const struct sh_tag_entry *ptag_add(struct sh_enforcer *e, uint64_t id, uint16_t policy,
					   bool *gone)
{
	struct sh_tag_entry *t;
	char path[PATH_MAX];
	const char *name;
	int err = sh_cgroup_path_of(id, path, sizeof(path));

	*gone = err == -ESTALE || err == -ENOENT;
	name = policy < SH_MAX_POLICIES ? e->names[e->slot][policy] : NULL;
	if (err || !name)
		return NULL;
	t = realloc(e->ptags, (e->nptags + 1) * sizeof(*t));
	if (!t)
		return NULL;
	e->ptags = t;
	t = &t[e->nptags];
	*t = (struct sh_tag_entry){ .cgid = id, .from_policy = true, .pattern = true,
				    .path = strdup(path), .policy = strdup(name) };
	if (!t->path || !t->policy) {
		free(t->path);
		free(t->policy);
		return NULL;
	}
	e->nptags++;
	return t;
}

/* The patterns in force whose directory is no longer the cgroup their
 * table entry names (removed, or removed and made again: a new id): they
 * match nothing until a reload. Counted in e->patterns_stale, each logged
 * once. */
static void check_dirs(struct sh_enforcer *e)
{
	int fd = bpf_map__fd(e->skel->maps.cg_patterns);
	const struct sh_policy_set *set = &e->set;
	uint32_t i = 0, stale = 0;

	for (size_t k = 0; k < set->n; k++)
		for (size_t c = 0; c < set->pols[k].ncgroups; c++) {
			const char *cg = set->pols[k].cgroups[c];
			uint32_t idx = e->slot * SH_MAX_PATTERNS + i;
			struct sh_cgroup_pattern t;
			char dir[PATH_MAX];
			uint64_t id = 0;

			if (!sh_cgroup_is_pattern(cg) || i >= SH_MAX_PATTERNS)
				continue;
			sh_dir_of(cg, dir, sizeof(dir));
			if (bpf_map_lookup_elem(fd, &idx, &t) || sh_cgroup_id(dir, &id) ||
			    id != t.parent) {
				if (!(e->patterns_stale & (1u << i)))
					sh_log("error: cgroup pattern %s: its directory is no longer "
					       "the cgroup the policy loaded with (removed, or made "
					       "again): nothing is tagged by it until a reload", cg);
				stale |= 1u << i;
			}
			i++;
		}
	e->patterns_stale = stale;
}

/*
 * Which of the removed cgroups ids[0..n) a process still counts as its
 * tree (held[i] set); their tags stay. A process that left its tree's cgroup stays held
 * for as long as that cgroup's tag stays (bpf/lib/member.h): with a
 * descriptor of another cgroup.procs opened before it entered (which no
 * tree can open itself), it could move out, wait for its cgroup to be
 * removed and be let go. Every process of the host is looked up (by
 * pidfd, in the membership the programs keep; thread-group leaders, as
 * cgroup.procs moves whole processes), and only when a removed cgroup's
 * tag is to go. Where /proc cannot be read (-errno), every such tag stays.
 */
int sh_tags_held(struct sh_enforcer *e, const uint64_t *ids, size_t n, bool *held)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		uint64_t origin;
		int pfd;

		if (*end || pid <= 0)
			continue;
		pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (pfd < 0)
			continue;       /* gone since */
		/* A membership that cannot be read may be any tree's. */
		if (sh_enforcer_task_origin(e, pfd, &origin))
			memset(held, 1, n * sizeof(*held));
		else
			for (size_t i = 0; i < n; i++)
				held[i] |= origin == ids[i];
		close(pfd);
	}
	closedir(d);
	return 0;
}

static void drop_unheld(struct sh_enforcer *e, int fd, const uint64_t *ids, size_t n,
			size_t *dropped)
{
	bool *held = n ? calloc(n, sizeof(*held)) : NULL;

	if (held && !sh_tags_held(e, ids, n, held))
		for (size_t i = 0; i < n; i++)
			if (!held[i] && !bpf_map_delete_elem(fd, &ids[i]))
				(*dropped)++;
	free(held);
}

void sh_patterns_refresh(struct sh_enforcer *e)
{
	int fd = bpf_map__fd(e->skel->maps.tags);
	uint64_t key, next, *drop = NULL, lost = 0;
	size_t ndrop = 0, cap = 0, dropped = 0;
	void *prev = NULL;

	ptag_clear(e);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sh_cgroup_tag t;
		bool gone = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &next, &t) || !(t.run_id & SH_TAG_PATTERN))
			continue;
		/* No pattern in force matches it, or its cgroup cannot be
		 * named: removed, or still being made (not yet visible). */
		if (t.policy[e->slot] == SH_POLICY_NONE ||
		    (!ptag_add(e, next, t.policy[e->slot], &gone) && gone)) {
			if (ndrop == cap) {
				uint64_t *nd = realloc(drop, (cap = cap ? cap * 2 : 16) * sizeof(*nd));

				if (!nd)
					break;
				drop = nd;
			}
			drop[ndrop++] = next;
		}
	}
	/* Once every creation under way has finished, a cgroup that still
	 * cannot be named is gone; one that can is listed after all. A gone
	 * cgroup's tag stays while a process still counts it as its tree. */
	if (ndrop && !creations_done()) {
		size_t n = 0;

		for (size_t i = 0; i < ndrop; i++) {
			struct sh_cgroup_tag t;
			bool gone = true;

			if (bpf_map_lookup_elem(fd, &drop[i], &t))
				continue;
			if (t.policy[e->slot] != SH_POLICY_NONE &&
			    (ptag_add(e, drop[i], t.policy[e->slot], &gone) || !gone))
				continue;
			if (t.policy[e->slot] != SH_POLICY_NONE)
				drop[n++] = drop[i];    /* removed: its members looked for */
			else if (!bpf_map_delete_elem(fd, &drop[i]))
				dropped++;
		}
		drop_unheld(e, fd, drop, n, &dropped);
	}
	free(drop);
	/* Whatever those tags held is looked up again. */
	if (dropped)
		sh_bump_gen(e);
	lost = sh_patterns_lost(e);
	if (lost > e->pattern_lost_seen) {
		sh_log("error: %llu cgroup(s) matching a cgroup pattern could not be tagged "
		       "(the tag map holds %d): they are not held; remove finished cgroups "
		       "or name fewer", (unsigned long long)(lost - e->pattern_lost_seen),
		       SH_MAX_TAGGED);
		e->pattern_lost_seen = lost;
	}
	check_dirs(e);
	e->pattern_gc_ms = sh_now_ns(CLOCK_MONOTONIC) / 1000000;
}

unsigned sh_patterns_stale(struct sh_enforcer *e)
{
	return (unsigned)__builtin_popcount(e->patterns_stale);
}

void sh_patterns_retire(struct sh_enforcer *e)
{
	struct sh_errors errs = { 0 };

	/* The slot no longer in force: its table empty, so that the programs
	 * tag nothing for patterns no longer in force. */
	if (sh_patterns_write(e, !e->slot, &(struct sh_policy_set){ 0 }, &errs))
		sh_log("error: %s", errs.n ? errs.msgs[0] : "cannot empty a pattern table");
	sh_errors_free(&errs);
}

void sh_patterns_tick(struct sh_enforcer *e)
{
	if (!sh_patterns_any(&e->set))
		return;
	if (sh_now_ns(CLOCK_MONOTONIC) / 1000000 - e->pattern_gc_ms >= GC_EVERY_MS)
		sh_patterns_refresh(e);
}

/* A removed pattern cgroup, named by the name it was made with under its
 * directory (pattern_names) for records; NULL if that is forgotten too. */
static const struct sh_tag_entry *ptag_named(struct sh_enforcer *e, uint64_t id, uint16_t policy)
{
	struct sh_cgroup_name nm;
	const char *name = policy < SH_MAX_POLICIES ? e->names[e->slot][policy] : NULL;
	struct sh_tag_entry *t;
	char dir[PATH_MAX];
	char *path = NULL;

	if (!name || bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.pattern_names), &id, &nm) ||
	    sh_cgroup_path_of(nm.parent, dir, sizeof(dir)))
		return NULL;
	nm.name[sizeof(nm.name) - 1] = 0;
	t = realloc(e->ptags, (e->nptags + 1) * sizeof(*t));
	if (!t || asprintf(&path, "%s/%s", dir, nm.name) < 0) {
		if (t)
			e->ptags = t;
		return NULL;
	}
	e->ptags = t;
	t = &t[e->nptags];
	*t = (struct sh_tag_entry){ .cgid = id, .from_policy = true, .pattern = true, .path = path,
				    .policy = strdup(name) };
	if (!t->policy) {
		free(path);
		return NULL;
	}
	e->nptags++;
	return t;
}

const struct sh_tag_entry *sh_patterns_tag(struct sh_enforcer *e, uint64_t id)
{
	int fd = bpf_map__fd(e->skel->maps.tags);
	const struct sh_tag_entry *found;
	struct sh_cgroup_tag t;
	bool gone;

	for (size_t i = 0; i < e->nptags; i++)
		if (e->ptags[i].cgid == id)
			return &e->ptags[i];
	if (bpf_map_lookup_elem(fd, &id, &t) || !(t.run_id & SH_TAG_PATTERN) ||
	    t.policy[e->slot] == SH_POLICY_NONE)
		return NULL;
	found = ptag_add(e, id, t.policy[e->slot], &gone);
	return found || !gone ? found : ptag_named(e, id, t.policy[e->slot]);
}

uint64_t sh_patterns_lost(struct sh_enforcer *e)
{
	uint64_t c[SH_CNT_MAX];

	sh_enforcer_counters(e, c);
	return c[SH_CNT_PATTERN_LOST];
}
