// SPDX-License-Identifier: GPL-2.0
/*
 * Loading a set of policy files (a list, or a directory's *.policy) and
 * the checks across them: names unique, a cgroup claimed by one policy.
 */
#define _GNU_SOURCE
#include "policy_parse.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Combines results: a system failure outranks a bad policy. */
static int merge_rc(int rc, int r)
{
	if (rc == 0 || (rc == -EINVAL && r != 0))
		return r;
	return rc;
}

/* A name given twice: the later one is reported. */
static bool check_names(const struct sh_policy_set *s, size_t i, struct sh_errors *errs, int *rc)
{
	const struct sh_policy *p = &s->pols[i];
	char qf[QBUF], qo[QBUF];

	for (size_t j = 0; j < i; j++) {
		const struct sh_policy *o = &s->pols[j];

		if (strcmp(p->name, o->name) != 0)
			continue;
		*rc = -EINVAL;
		return sh_errors_addf(errs, "%s:%d: duplicate policy name '%s' (first in %s:%d)",
				      sh_policy_quote(qf, sizeof(qf), p->file), p->name_line,
				      p->name, sh_policy_quote(qo, sizeof(qo), o->file),
				      o->name_line);
	}
	return true;
}

/* A cgroup of policy i that an earlier policy tags too. */
static bool check_cgroups(const struct sh_policy_set *s, size_t i, struct sh_errors *errs,
			  int *rc)
{
	const struct sh_policy *p = &s->pols[i];
	char qf[QBUF], qo[QBUF], qv[QBUF], qn[QBUF];
	bool ok = true;

	for (size_t k = 0; k < p->ncgroups; k++) {
		bool found = false;

		for (size_t j = 0; j < i && !found; j++) {
			const struct sh_policy *o = &s->pols[j];

			for (size_t m = 0; m < o->ncgroups && !found; m++) {
				if (strcmp(p->cgroups[k], o->cgroups[m]) != 0)
					continue;
				ok &= sh_errors_addf(errs,
					"%s:%d: cgroup '%s' already tagged by policy '%s' (%s:%d)",
					sh_policy_quote(qf, sizeof(qf), p->file),
					p->cgroup_lines[k],
					sh_policy_quote(qv, sizeof(qv), p->cgroups[k]),
					sh_policy_quote(qn, sizeof(qn), o->name),
					sh_policy_quote(qo, sizeof(qo), o->file),
					o->cgroup_lines[m]);
				*rc = -EINVAL;
				found = true;
			}
		}
	}
	return ok;
}

static int cross_check(const struct sh_policy_set *s, struct sh_errors *errs)
{
	char qf[QBUF];
	bool ok = true;
	int rc = 0;

	for (size_t i = 0; i < s->n; i++) {
		ok &= check_names(s, i, errs, &rc);
		ok &= check_cgroups(s, i, errs, &rc);
	}
	if (s->n > SH_MAX_POLICIES) {
		const struct sh_policy *p = &s->pols[SH_MAX_POLICIES];

		ok &= sh_errors_addf(errs, "%s:%d: too many policies (%zu, max %d)",
				     sh_policy_quote(qf, sizeof(qf), p->file), p->name_line, s->n,
				     SH_MAX_POLICIES);
		rc = -EINVAL;
	}
	return ok ? rc : -ENOMEM;
}

int sh_policy_load_files(const char *const *paths, size_t n, struct sh_policy_set *out,
			 struct sh_errors *errs)
{
	struct sh_policy_set set = { 0 };
	int rc = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (n && !paths)
		return -EINVAL;
	if (n) {
		set.pols = calloc(n, sizeof(*set.pols));
		if (!set.pols) {
			sh_errors_add(errs, "cannot load policies: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int r = sh_policy_parse_file(paths[i], &set.pols[set.n], errs);

		if (r == 0)
			set.n++;
		rc = merge_rc(rc, r);
		if (r == -ENOMEM)
			break;
	}
	if (rc != -ENOMEM)
		rc = merge_rc(rc, cross_check(&set, errs));
	if (rc) {
		sh_policy_set_free(&set);
		return rc;
	}
	if (set.n == 0) {
		free(set.pols);
		set.pols = NULL;
	}
	*out = set;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends "dir/nm" to the list *paths of *n (*cap allocated). */
static int add_path(char ***paths, size_t *n, size_t *cap, const char *dir, const char *nm)
{
	size_t dlen = strlen(dir);

	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		char **np = realloc(*paths, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		*paths = np;
		*cap = ncap;
	}
	if (asprintf(&(*paths)[*n], "%s%s%s", dir, dlen && dir[dlen - 1] == '/' ? "" : "/",
		     nm) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* The "*.policy" files of dir (dot files excepted), in readdir order. */
static int list_dir(const char *dir, const char *qd, char ***paths, size_t *n,
		    struct sh_errors *errs)
{
	size_t cap = 0;
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return sh_policy_errno(errs, qd, "cannot open directory", EIO);
	for (;;) {
		struct dirent *de;
		const char *nm;
		size_t len;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = sh_policy_errno(errs, qd, "cannot read directory", EIO);
			break;
		}
		nm = de->d_name;
		len = strlen(nm);
		/* dot files (editor and package manager leftovers) are skipped */
		if (nm[0] == '.' || len <= 7 || strcmp(nm + len - 7, ".policy") != 0)
			continue;
		rc = add_path(paths, n, &cap, dir, nm);
		if (rc)
			break;
	}
	closedir(d);
	if (rc == -ENOMEM)
		sh_errors_add(errs, "%s: cannot load policies: %s", qd, strerror(ENOMEM));
	return rc;
}

int sh_policy_load_dir(const char *dir, struct sh_policy_set *out, struct sh_errors *errs)
{
	char qd[QBUF], **paths = NULL;
	size_t n = 0;
	int rc;

	rc = sh_policy_start(out, sizeof(*out), dir, "directory", errs);
	if (rc)
		return rc;
	sh_policy_quote(qd, sizeof(qd), dir);
	rc = list_dir(dir, qd, &paths, &n, errs);
	if (!rc) {
		/* all share the "dir/" prefix, so this orders by file name */
		if (n)
			qsort(paths, n, sizeof(*paths), cmp_str);
		rc = sh_policy_load_files((const char *const *)paths, n, out, errs);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
