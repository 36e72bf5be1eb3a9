// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files: the key a rule is stored under, the path the
 * kernel will report for the file it names (policy_keys.c reads the rule).
 */
#define _GNU_SOURCE
#include "policy_parse.h"
#include "sharness.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The path the kernel will report for a rule: symlinks in a rule that
 * exists on this host are resolved (on Debian /bin/bash runs as
 * /usr/bin/bash).  A rule for something that does not exist yet stays as
 * written.
 */
static void canonical_rule(const char *path, bool dir, char *out, size_t n)
{
	char real[PATH_MAX];
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	snprintf(out, n, "%s", path);
	snprintf(tmp, sizeof(tmp), "%s", path);
	if (dir && len > 1)
		tmp[len - 1] = 0;
	if (!realpath(tmp, real))
		return;
	if (dir && strcmp(real, "/") != 0)
		snprintf(out, n, "%s/", real);
	else
		snprintf(out, n, "%s", real);
}

/* The key of a rule for path: canonical_rule's, or the path as written in a
 * policy whose paths are a container's (its root is not the host's). */
void sh_rule_key(const struct pctx *c, const char *path, bool dir, char *out, size_t n)
{
	if (c->p->container_paths)
		snprintf(out, n, "%s", path);
	else
		canonical_rule(path, dir, out, n);
}

/* Whether a rule's key is a /proc/PID file its path did not name (it went
 * through /proc/self or /proc/thread-self, or a link to them such as
 * /etc/mtab): the reader's own pid. */
static bool per_process(const char *path, const char *key)
{
	size_t n = strlen("/proc/");

	/* As written (a container's paths are not resolved). */
	if (!strncmp(path, "/proc/self", 10) || !strncmp(path, "/proc/thread-self", 17)) {
		char c = path[strncmp(path, "/proc/self", 10) ? 17 : 10];

		if (c == '/' || c == 0)
			return true;
	}

	if (strncmp(key, "/proc/", n) || key[n] < '0' || key[n] > '9')
		return false;
	return strncmp(path, key, strcspn(key + n, "/") + n) != 0;
}

/* Sets r->key to the canonical form of r->path; false (reported) if it
 * does not fit in a rules-map key with its NUL, or names one process's
 * own /proc files. */
bool sh_set_rule_key(struct pctx *c, struct sh_rule *r)
{
	char key[PATH_MAX + 2], q[QBUF];
	size_t len;

	sh_rule_key(c, r->path, r->dir, key, sizeof(key));
	len = strlen(key);
	if (per_process(r->path, key) && strcmp(r->path, key) == 0) {
		sh_perr(c, c->line, "rule path %s names a process's own /proc files: the kernel "
			"names them by its pid, so no rule can name them for every process",
			sh_policy_quote(q, sizeof(q), r->path));
		return false;
	}
	if (per_process(r->path, key)) {
		sh_perr(c, c->line, "rule path %s resolves to %s, a file of the process that read the "
			"policy: the kernel names each process's /proc files by its own pid, so no rule "
			"can name them for every process", sh_policy_quote(q, sizeof(q), r->path), key);
		return false;
	}
	if (len + 1 > SH_PATH_KEY_MAX) {
		sh_perr(c, c->line, "rule path %s resolves to %zu bytes, more than %d",
			sh_policy_quote(q, sizeof(q), r->path), len, SH_PATH_KEY_MAX - 1);
		return false;
	}
	r->key = strdup(key);
	if (!r->key) {
		sh_pctx_oom(c);
		return false;
	}
	r->keylen = len;
	return true;
}
