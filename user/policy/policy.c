// SPDX-License-Identifier: GPL-2.0
/*
 * The policy type: freeing, copying and finding policies. Loading a set
 * of files is policy_load.c's; one file is read by policy_parse.c; what
 * its keys mean is in policy_keys.c.
 */
#define _GNU_SOURCE
#include "policy_parse.h"

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

/* A policy's id in its set is its index there. */
int sh_policy_index(const struct sh_policy_set *set, const char *name)
{
	const struct sh_policy *p = sh_policy_find(set, name);

	return p ? (int)(p - set->pols) : -1;
}
