// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files against this host: what a file can only be judged
 * by where it is loaded. `policy check` and the daemon (at start and at
 * every reload) run the same checks, so a file check passes is a file
 * the daemon takes:
 * - every `cgroup =` names an existing cgroup v2 directory shallow enough
 *   to be tagged, or for a pattern the directory of its children (an
 *   error), and there are at most SH_MAX_PATTERNS patterns;
 * - an exec `allow` rule for a file that does not exist allows nothing
 *   yet (a warning: it may be installed later);
 * - an exec `allow` a `write` rule of the same policy covers lets the tree
 *   replace what it may run (a warning: pin it by digest, or move it).
 * Digests are not hashed here (the daemon runs these checks at every
 * reload, before the apply that hashes): `sharnessctl policy pin` shows
 * them.
 */
#include "policy_parse.h"
#include "sharness.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static int check_cgroup(const struct sh_policy *p, size_t i, struct sh_errors *errs)
{
	char qf[QBUF], qc[QBUF], dir[PATH_MAX];
	bool pattern = sh_cgroup_is_pattern(p->cgroups[i]);
	uint64_t id;
	int level = 0, err;

	/* A pattern: its directory must be a cgroup, its children one level
	 * deeper taggable. */
	sh_dir_of(p->cgroups[i], dir, sizeof(dir));
	err = sh_cgroup_id_level(pattern ? dir : p->cgroups[i], &id, &level);
	level += pattern;
	sh_policy_quote(qf, sizeof(qf), p->file);
	sh_policy_quote(qc, sizeof(qc), p->cgroups[i]);
	if (pattern && (err == -ENOTDIR || err == -ENOENT))
		sh_errors_add(errs, "%s:%d: cgroup pattern %s: its directory is not a cgroup v2 "
			      "directory under /sys/fs/cgroup (create it first)", qf,
			      p->cgroup_lines[i], qc);
	else if (err == -ENOTDIR || err == -ENOENT)
		sh_errors_add(errs, "%s:%d: cgroup %s is not a cgroup v2 directory under "
			      "/sys/fs/cgroup (create it first)", qf, p->cgroup_lines[i], qc);
	else if (err)
		sh_errors_add(errs, "%s:%d: cgroup %s: %s", qf, p->cgroup_lines[i], qc,
			      strerror(-err));
	else if (level >= SH_MAX_CGROUP_LEVEL)
		sh_errors_add(errs, "%s:%d: cgroup %s is %d levels deep; at most %d can be tagged",
			      qf, p->cgroup_lines[i], qc, level, SH_MAX_CGROUP_LEVEL - 1);
	/* A '[' was itself before classes: a cgroup of the very name is
	 * what such a line meant, and the class would leave it free. */
	else if (pattern && strchr(strrchr(p->cgroups[i], '/'), '[') &&
		 access(p->cgroups[i], F_OK) == 0)
		sh_errors_add(errs, "%s:%d: cgroup pattern %s: a cgroup of that very name exists, "
			      "which the pattern does not name: '[' opens a class (write '[[]' for "
			      "a '[' itself)", qf, p->cgroup_lines[i], qc);
	else
		return 0;
	return -EINVAL;
}

/* Does rule key k (a directory's ending in '/') cover path key x? */
static bool key_covers(const char *k, const char *x)
{
	size_t n = strlen(k);

	if (n && k[n - 1] == '/')
		return !strncmp(k, x, n) || (strlen(x) + 1 == n && !strncmp(k, x, n - 1));
	return !strcmp(k, x);
}

/* The [file] rule that decides for path key x: the longest covering it. */
static const struct sh_rule *file_rule_of(const struct sh_policy *p, const char *x)
{
	const struct sh_rule *best = NULL;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct sh_rule *r = &p->rules[i];

		if ((r->kind == SH_FILE_WRITE || r->kind == SH_FILE_DENY) && key_covers(r->key, x) &&
		    (!best || r->keylen > best->keylen))
			best = r;
	}
	return best;
}

static void check_exec_allow(const struct sh_policy *p, const struct sh_rule *r,
			     struct sh_errors *warns)
{
	const struct sh_rule *w = file_rule_of(p, r->key);
	char qf[QBUF], qp[QBUF];

	sh_policy_quote(qf, sizeof(qf), p->file);
	sh_policy_quote(qp, sizeof(qp), r->path);
	if (w && w->kind == SH_FILE_WRITE)
		sh_errors_add(warns, "%s:%d: warning: exec allow %s lies under write rule %s "
			      "(line %d): the tree may replace what it runs%s", qf, r->line, qp,
			      w->path, w->line,
			      r->pinned ? " (its exec is refused unless the content is pinned)"
					: "; pin it by digest, or move it");
}

int sh_policy_check_host(const struct sh_policy_set *set, struct sh_errors *errs,
			 struct sh_errors *warns)
{
	char qf[QBUF], qp[QBUF];
	size_t npat = 0;
	int rc = 0;

	for (size_t k = 0; k < set->n; k++) {
		const struct sh_policy *p = &set->pols[k];

		for (size_t i = 0; i < p->ncgroups; i++) {
			if (check_cgroup(p, i, errs))
				rc = -EINVAL;
			if (sh_cgroup_is_pattern(p->cgroups[i]) && ++npat == SH_MAX_PATTERNS + 1) {
				sh_policy_quote(qf, sizeof(qf), p->file);
				sh_errors_add(errs, "%s:%d: more than %d cgroup patterns in all", qf,
					      p->cgroup_lines[i], SH_MAX_PATTERNS);
				rc = -EINVAL;
			}
		}
		/* A container's paths are not the host's to look up. */
		for (size_t i = 0; warns && !p->container_paths && i < p->nrules; i++) {
			const struct sh_rule *r = &p->rules[i];

			if (r->kind != SH_EXEC_ALLOW)
				continue;
			if (r->dir || access(r->key, F_OK) == 0) {
				check_exec_allow(p, r, warns);
				continue;
			}
			sh_errors_add(warns, "%s:%d: warning: exec allow %s: no such file on this "
				      "host (it allows nothing until it exists)",
				      sh_policy_quote(qf, sizeof(qf), p->file), r->line,
				      sh_policy_quote(qp, sizeof(qp), r->path));
		}
	}
	return rc;
}
