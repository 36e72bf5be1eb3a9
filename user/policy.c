// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files: loading a set of them, the checks across files,
 * and the policy type.  One file is read by
 * policy_parse.c; what its keys mean is in policy_keys.c.
 */
#define _GNU_SOURCE
#include "policy_parse.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sh_policy_has_kind(const struct sh_policy *p, enum sh_rule_kind k)
{
	if (!p)
		return false;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].kind == k)
			return true;
	return false;
}

void sh_policy_free(struct sh_policy *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->file);
	for (size_t i = 0; i < p->ncgroups; i++)
		free(p->cgroups[i]);
	free(p->cgroups);
	free(p->cgroup_lines);
	for (size_t i = 0; i < p->nrules; i++) {
		free(p->rules[i].path);
		free(p->rules[i].key);
	}
	free(p->rules);
	free(p->net);
	memset(p, 0, sizeof(*p));
}

static char *dup_str(const char *s, bool *fail)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*fail = true;
	return d;
}

static void *dup_mem(const void *s, size_t n, bool *fail)
{
	void *d = n ? malloc(n) : NULL;

	if (n && !d)
		*fail = true;
	else if (n)
		memcpy(d, s, n);
	return d;
}

int sh_policy_dup(struct sh_policy *dst, const struct sh_policy *src)
{
	bool fail = false;

	*dst = *src;
	dst->name = dup_str(src->name, &fail);
	dst->file = dup_str(src->file, &fail);
	dst->cgroups = dup_mem(src->cgroups, src->ncgroups * sizeof(char *), &fail);
	dst->cgroup_lines = dup_mem(src->cgroup_lines, src->ncgroups * sizeof(int), &fail);
	for (size_t i = 0; dst->cgroups && i < src->ncgroups; i++)
		dst->cgroups[i] = dup_str(src->cgroups[i], &fail);
	if (!dst->cgroups)
		dst->ncgroups = 0;
	dst->rules = dup_mem(src->rules, src->nrules * sizeof(struct sh_rule), &fail);
	for (size_t i = 0; dst->rules && i < src->nrules; i++) {
		dst->rules[i].path = dup_str(src->rules[i].path, &fail);
		dst->rules[i].key = dup_str(src->rules[i].key, &fail);
	}
	if (!dst->rules)
		dst->nrules = 0;
	dst->net = dup_mem(src->net, src->nnet * sizeof(struct sh_net_rule), &fail);
	if (!dst->net)
		dst->nnet = 0;
	if (fail) {
		sh_policy_free(dst);
		return -ENOMEM;
	}
	return 0;
}

int sh_policy_set_dup(struct sh_policy_set *dst, const struct sh_policy_set *src,
		      const struct sh_policy *extra, size_t nextra)
{
	size_t n = src->n + nextra;

	dst->n = 0;
	dst->pols = calloc(n ? n : 1, sizeof(*dst->pols));
	if (!dst->pols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (sh_policy_dup(&dst->pols[i], i < src->n ? &src->pols[i] : &extra[i - src->n])) {
			sh_policy_set_free(dst);
			return -ENOMEM;
		}
		dst->n++;
	}
	return 0;
}

const char *sh_mode_name(enum sh_mode m)
{
	return m == SH_MODE_AUDIT ? "audit" : m == SH_MODE_LEARN ? "learn" : "enforce";
}

void sh_policy_set_free(struct sh_policy_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		sh_policy_free(&s->pols[i]);
	free(s->pols);
	s->pols = NULL;
	s->n = 0;
}

const char *sh_policy_not_found(const struct sh_policy_set *set, const char *name, char *buf,
				size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "no policy named '%s' is loaded (loaded: ", name);

	for (size_t i = 0; i < set->n && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", set->pols[i].name);
	if (len < n)
		snprintf(buf + len, n - len, "%s)", set->n ? "" : "none");
	return buf;
}

const struct sh_policy *sh_policy_find(const struct sh_policy_set *set, const char *name)
{
	if (!set || !name)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		if (set->pols[i].name && strcmp(set->pols[i].name, name) == 0)
			return &set->pols[i];
	return NULL;
}

/*
 * Renders untrusted text (file contents, file names) for a message:
 * printable ASCII as is, a backslash doubled, any other byte as \xNN, so
 * messages never carry terminal control sequences.  Cut with "..." if needed.
 */
const char *sh_policy_quote_n(char *buf, size_t size, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		size_t need = ch == '\\' ? 2 : (ch < 0x20 || ch >= 0x7f) ? 4 : 1;

		if (o + need + 4 > size) {
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (need == 1) {
			buf[o++] = (char)ch;
		} else if (need == 2) {
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *sh_policy_quote(char *buf, size_t size, const char *s)
{
	return sh_policy_quote_n(buf, size, s, strlen(s));
}

/* ------------------------------------------------------------------------ */
/* Loading sets of files                                                     */

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

int sh_policy_start(void *out, size_t size, const char *name, const char *what,
		    struct sh_errors *errs)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, size);
	if (!name) {
		sh_errors_add(errs, "(null): no policy %s given", what);
		return -EINVAL;
	}
	return 0;
}

/* Records "NAME: WHAT: <strerror(errno)>"; returns -errno (-dflt if 0). */
int sh_policy_errno(struct sh_errors *errs, const char *qname, const char *what, int dflt)
{
	int err = errno ? errno : dflt;

	sh_errors_add(errs, "%s: %s: %s", qname, what, strerror(err));
	return -err;
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
