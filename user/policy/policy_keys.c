// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files: what each key means and the checks of its value.
 * Rule keys come from the rule-kind table (rules.c); the other keys are the
 * settings below.  A rule is stored with the key path the kernel will
 * report for it (symlinks resolved), so every limit on that path is checked
 * here, while the file is read, and `policy check` rejects what a reload
 * would.
 */
#define _GNU_SOURCE
#include "caps.h"
#include "digest.h"
#include "policy_parse.h"
#include "sharness.h"
#include "glob.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Returns NULL if the absolute path p is canonical, else what is wrong. */
static const char *noncanonical(const char *p)
{
	const char *s = p + 1;

	while (*s) {
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		bool last = *e == '\0';

		if (n == 0)
			return "contains '//'";
		if (n == 1 && s[0] == '.')
			return last ? "ends in '/.'" : "contains '/./'";
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return last ? "ends in '/..'" : "contains '/../'";
		if (last)
			break;
		s = e + 1;
	}
	return NULL;
}

static bool check_abs_path(struct pctx *c, const char *v)
{
	char q[QBUF];
	const char *why;

	if (v[0] != '/') {
		sh_perr(c, c->line, "relative path '%s' (must start with '/')",
			sh_policy_quote(q, sizeof(q), v));
		return false;
	}
	why = noncanonical(v);
	if (why) {
		sh_perr(c, c->line, "non-canonical path '%s' (%s)",
			sh_policy_quote(q, sizeof(q), v), why);
		return false;
	}
	return true;
}

/* Records the first line of a single-valued key; false if seen before. */
static bool once(struct pctx *c, int *first, const char *key)
{
	if (*first) {
		sh_perr(c, c->line, "duplicate key '%s' in [%s] (first at line %d)", key,
			c->sec_name, *first);
		return false;
	}
	*first = c->line;
	return true;
}

static bool valid_name(const char *v)
{
	size_t n = strlen(v);

	if (n < 1 || n > SH_POLICY_NAME_MAX)
		return false;
	/* "." and ".." match the character set but are too easily taken for
	 * path components wherever a policy name is used. */
	if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (!(ch >= 'A' && ch <= 'Z') && !(ch >= 'a' && ch <= 'z') &&
		    !(ch >= '0' && ch <= '9') && ch != '_' && ch != '.' && ch != '-')
			return false;
	}
	return true;
}

static void set_name(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	(void)key;
	if (!c->p->name_line) {
		c->p->name_line = c->line;
	} else {
		sh_perr(c, c->line, "duplicate key 'name' in [policy] (first at line %d)",
			c->p->name_line);
		return;
	}
	if (!valid_name(v)) {
		sh_perr(c, c->line,
			"bad policy name '%s' (want 1-%d characters of A-Z a-z 0-9 _ . -, "
			"not '.' or '..')",
			sh_policy_quote(q, sizeof(q), v), SH_POLICY_NAME_MAX);
		return;
	}
	c->p->name = strdup(v);
	if (!c->p->name)
		sh_pctx_oom(c);
}

/* realloc(v, n * size); NULL (recorded) if memory ran out. */
static void *grow(struct pctx *c, void *v, size_t n, size_t size)
{
	void *nv = realloc(v, n * size);

	if (!nv)
		sh_pctx_oom(c);
	return nv;
}

static void add_cgroup(struct pctx *c, const char *key, const char *v)
{
	struct sh_policy *p = c->p;
	char q[QBUF];

	(void)key;
	if (!check_abs_path(c, v))
		return;
	if (strlen(v) > 1 && v[strlen(v) - 1] == '/') {
		sh_perr(c, c->line, "cgroup path '%s' must not end in '/'",
			sh_policy_quote(q, sizeof(q), v));
		return;
	}
	if (strcmp(v, "/") == 0) {
		sh_perr(c, c->line, "cgroup path '/' is the root of the hierarchy");
		return;
	}
	if (strlen(v) >= PATH_MAX) {
		sh_perr(c, c->line, "cgroup path too long");
		return;
	}
	if (sh_cgroup_is_pattern(v)) {
		const char *last = strrchr(v, '/') + 1;

		const char *why;

		if (strstr(v, "**")) {
			sh_perr(c, c->line, "cgroup pattern '%s': '**' is not supported: a pattern "
				"names the children of one directory ('*', '?' and '[...]' in its "
				"last component)", sh_policy_quote(q, sizeof(q), v));
			return;
		}
		if (strpbrk(v, "*?[") < last) {
			sh_perr(c, c->line, "cgroup pattern '%s': '*', '?' and '[' may only stand in "
				"the last component (the directory above it is named as it is)",
				sh_policy_quote(q, sizeof(q), v));
			return;
		}
		why = sh_glob_check(last);
		if (why) {
			sh_perr(c, c->line, "cgroup pattern '%s': %s", sh_policy_quote(q, sizeof(q), v),
				why);
			return;
		}
		if (strlen(last) >= SH_PATTERN_MAX) {
			sh_perr(c, c->line, "cgroup pattern '%s': its last component is longer than "
				"%d bytes", sh_policy_quote(q, sizeof(q), v), SH_PATTERN_MAX - 1);
			return;
		}
	}
	for (size_t i = 0; i < p->ncgroups; i++)
		if (strcmp(p->cgroups[i], v) == 0)
			return;   /* same cgroup twice: harmless, keep the first */
	if (p->ncgroups == c->cgroups_cap) {
		size_t cap = c->cgroups_cap ? 2 * c->cgroups_cap : 4;
		char **cg = grow(c, p->cgroups, cap, sizeof(*cg));
		int *ln;

		if (!cg)
			return;
		p->cgroups = cg;
		ln = grow(c, p->cgroup_lines, cap, sizeof(*ln));
		if (!ln)
			return;
		p->cgroup_lines = ln;
		c->cgroups_cap = cap;
	}
	p->cgroups[p->ncgroups] = strdup(v);
	if (!p->cgroups[p->ncgroups]) {
		sh_pctx_oom(c);
		return;
	}
	p->cgroup_lines[p->ncgroups++] = c->line;
}


/*
 * "PATH sha256:HEX": the digest at the end of an exec allow, split off v
 * (cut at the blank before it) into d. 0 without one, 1 with one, -1
 * (reported) if malformed or on another kind of rule.
 */
static int split_digest(struct pctx *c, enum sh_rule_kind kind, char *v,
			uint8_t d[SH_DIGEST_LEN])
{
	char *sp = strrchr(v, ' '), *t = strrchr(v, '\t'), q[QBUF];

	if (t > sp)
		sp = t;
	if (!sp || strncmp(sp + 1, "sha", 3) != 0 || !strchr(sp + 1, ':'))
		return 0;
	if (kind != SH_EXEC_ALLOW) {
		sh_perr(c, c->line, "a digest pins only an [exec] allow rule: '%s'",
			sh_policy_quote(q, sizeof(q), sp + 1));
		return -1;
	}
	if (sh_digest_parse(sp + 1, d)) {
		sh_perr(c, c->line, "bad digest '%s': want sha256: and 64 hex digits",
			sh_policy_quote(q, sizeof(q), sp + 1));
		return -1;
	}
	while (sp > v && (sp[-1] == ' ' || sp[-1] == '\t'))
		sp--;
	*sp = 0;
	return 1;
}

/* Two spellings of one file (/bin/git, /usr/bin/git) are one rule key:
 * an exec allow pinned otherwise than r is refused (reported), so that
 * neither replaces the other in the rules map. */
static bool pin_conflict(struct pctx *c, const struct sh_rule *r)
{
	char q[QBUF];

	for (size_t i = 0; r->kind == SH_EXEC_ALLOW && i < c->p->nrules; i++) {
		const struct sh_rule *o = &c->p->rules[i];

		if (o->kind != r->kind || strcmp(o->key, r->key) ||
		    (o->pinned == r->pinned &&
		     (!r->pinned || !memcmp(o->digest, r->digest, SH_DIGEST_LEN))))
			continue;
		sh_perr(c, c->line, "conflicting digests for '%s': line %d names the same file",
			sh_policy_quote(q, sizeof(q), r->path), o->line);
		return true;
	}
	return false;
}

/* Whether a rule of kind for path v (pinned: with digest) is to be added:
 * false for an exact duplicate (the first kept) or a conflict (reported). */
static bool rule_is_new(struct pctx *c, enum sh_rule_kind kind, const char *v, bool pinned,
			const uint8_t *digest)
{
	const struct sh_policy *p = c->p;
	char q[QBUF], q2[QBUF], key[PATH_MAX + 2];
	const struct sh_rule *r;
	size_t len = strlen(v);

	sh_rule_key(c, v, v[len - 1] == '/', key, sizeof(key));
	for (size_t i = 0; i < p->nrules; i++) {
		r = &p->rules[i];
		if (!sh_rule_same_trie(r->kind, kind))
			continue;
		if (strcmp(r->path, v) != 0) {
			/* Two kinds for one file once resolved: one trie
			 * entry would take the other's place. (One kind
			 * twice is one rule; pin_conflict judges digests.) */
			if (r->kind != kind && strcmp(r->key, key) == 0) {
				sh_perr(c, c->line, "conflicting rules for '%s': %s here, %s at line "
					"%d ('%s'): both name %s", sh_policy_quote(q, sizeof(q), v),
					sh_rule_kind_name(kind), sh_rule_kind_name(r->kind), r->line,
					sh_policy_quote(q2, sizeof(q2), r->path), key);
				return false;
			}
			continue;
		}
		if (r->kind == kind && (r->pinned != pinned ||
					(pinned && memcmp(r->digest, digest, SH_DIGEST_LEN)))) {
			sh_perr(c, c->line, "conflicting digests for '%s': see line %d",
				sh_policy_quote(q, sizeof(q), v), r->line);
			return false;
		}
		if (r->kind == kind)
			return false;   /* exact duplicate: keep the first */
		sh_perr(c, c->line, "conflicting rules for '%s': %s here, %s at line %d",
			sh_policy_quote(q, sizeof(q), v), sh_rule_kind_name(kind),
			sh_rule_kind_name(r->kind), r->line);
		return false;
	}
	return true;
}

void sh_policy_add_rule(struct pctx *c, enum sh_rule_kind kind, const char *value)
{
	struct sh_policy *p = c->p;
	uint8_t digest[SH_DIGEST_LEN];
	char q[QBUF], v[LINE_BUF];
	struct sh_rule *r;
	size_t len;
	int pinned;

	snprintf(v, sizeof(v), "%s", value);
	pinned = split_digest(c, kind, v, digest);
	if (pinned < 0)
		return;
	len = strlen(v);
	if (!check_abs_path(c, v))
		return;
	if (pinned && p->container_paths) {
		sh_perr(c, c->line, "a digest pins a file of this host, and paths = container names "
			"the container's: '%s'", sh_policy_quote(q, sizeof(q), v));
		return;
	}
	if (pinned && v[len - 1] == '/') {
		sh_perr(c, c->line, "a digest pins a file, not a directory: '%s'",
			sh_policy_quote(q, sizeof(q), v));
		return;
	}
	if (len > SH_RULE_PATH_MAX) {
		sh_perr(c, c->line, "path too long (%zu bytes, max %d): '%s'", len,
			SH_RULE_PATH_MAX, sh_policy_quote(q, sizeof(q), v));
		return;
	}
	if (!rule_is_new(c, kind, v, pinned > 0, digest))
		return;
	if (p->nrules >= SH_MAX_RULES_PER_POLICY) {
		if (!c->too_many_rules)
			sh_perr(c, c->line, "too many rules (max %d)", SH_MAX_RULES_PER_POLICY);
		c->too_many_rules = true;
		return;
	}
	if (p->nrules == c->rules_cap) {
		size_t cap = c->rules_cap ? 2 * c->rules_cap : 16;

		r = grow(c, p->rules, cap, sizeof(*r));
		if (!r)
			return;
		p->rules = r;
		c->rules_cap = cap;
	}
	r = &p->rules[p->nrules];
	*r = (struct sh_rule){ .kind = kind, .dir = v[len - 1] == '/', .line = c->line,
			       .pinned = pinned > 0 };
	if (pinned)
		memcpy(r->digest, digest, SH_DIGEST_LEN);
	r->path = strdup(v);
	if (!r->path) {
		sh_pctx_oom(c);
		return;
	}
	if (!sh_set_rule_key(c, r)) {
		free(r->path);
		return;
	}
	if (pin_conflict(c, r)) {
		free(r->path);
		free(r->key);
		return;
	}
	p->nrules++;
}

/* "sys_nice, net_admin": each name allowed back to the tree. */
static void add_caps(struct pctx *c, const char *key, const char *v)
{
	char buf[LINE_BUF], q[QBUF], *save = NULL;

	(void)key;
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		int cap = sh_cap_parse(t);

		if (cap < 0)
			sh_perr(c, c->line, "unknown capability '%s' (want a name such as sys_nice "
				"or CAP_NET_ADMIN)", sh_policy_quote(q, sizeof(q), t));
		else if (SH_CAPS_TREE_DEFAULT & SH_CAP_BIT(cap))
			sh_perr(c, c->line, "capability '%s' is allowed to every tree already",
				sh_cap_name((unsigned)cap));
		else
			c->p->caps_allow |= 1ull << cap;
	}
}

static bool parse_pids_max(const char *v, unsigned *out)
{
	unsigned long n = 0;

	if (!*v)
		return false;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return false;
		n = n * 10 + (unsigned long)(*v - '0');
		if (n > SH_PIDS_MAX_LIMIT)
			return false;
	}
	if (n < 1)
		return false;
	*out = (unsigned)n;
	return true;
}

/*
 * Stores which of two words a single-valued key has: 0 for a, 1 for b.
 * Returns -1 if the key was given before or the value is neither (both
 * reported; what names the value in a message).
 */
static int choice(struct pctx *c, int *first, const char *key, const char *v, const char *what,
		  const char *a, const char *b)
{
	char q[QBUF];

	if (!once(c, first, key))
		return -1;
	if (!strcmp(v, a))
		return 0;
	if (!strcmp(v, b))
		return 1;
	sh_perr(c, c->line, "bad %s '%s' (want %s or %s)", what, sh_policy_quote(q, sizeof(q), v),
		a, b);
	return -1;
}

static void set_mode(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->mode_line, key, v, "mode", "enforce", "audit");

	if (r >= 0)
		c->p->mode = r ? SH_MODE_AUDIT : SH_MODE_ENFORCE;
}

static void set_held_from(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->held_line, key, v, "held-from", "entry", "exec");

	if (r >= 0)
		c->p->from_exec = r;
}

/* paths = host|container: before any rule, whose key it decides. */
static void set_paths(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->paths_line, key, v, "paths", "host", "container");

	if (r < 0)
		return;
	if (c->p->nrules) {
		sh_perr(c, c->line, "paths must come before the first rule (line %d): it decides "
			"how every rule names its file", c->p->rules[0].line);
		return;
	}
	c->p->container_paths = r;
}

static void set_abstract(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->abstract_line, key, v, "abstract value", "allow", "deny");

	if (r >= 0)
		c->p->abstract_deny = r;
}

static void set_scope(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->scope_line, key, v, "scope", "tree", "any");

	if (r >= 0)
		c->p->signal_scope = r ? SH_SCOPE_ANY : SH_SCOPE_TREE;
}

static void set_connect_scope(struct pctx *c, const char *key, const char *v)
{
	int r = choice(c, &c->connect_scope_line, key, v, "scope", "tree", "any");

	if (r >= 0)
		c->p->connect_scope = r ? SH_SCOPE_ANY : SH_SCOPE_TREE;
}

static void set_pids_max(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (!once(c, &c->pids_line, key))
		return;
	if (!parse_pids_max(v, &c->p->pids_max))
		sh_perr(c, c->line, "bad pids-max '%s' (want an integer 1..%u)",
			sh_policy_quote(q, sizeof(q), v), SH_PIDS_MAX_LIMIT);
}

static void set_memory_max(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (once(c, &c->memory_line, key) &&
	    !sh_parse_bytes(v, false, &c->p->limits.memory_max))
		sh_perr(c, c->line, "bad memory-max '%s' (want a size such as 512M or 2G)",
			sh_policy_quote(q, sizeof(q), v));
}

static void set_swap_max(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (!once(c, &c->swap_line, key))
		return;
	if (sh_parse_bytes(v, true, &c->p->limits.memory_swap_max))
		c->p->limits.has_swap = true;
	else
		sh_perr(c, c->line, "bad memory-swap-max '%s' (want a size such as 0, 512M or 2G)",
			sh_policy_quote(q, sizeof(q), v));
}

static void set_cpu_max(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (once(c, &c->cpu_line, key) && !sh_parse_cpu_pct(v, &c->p->limits.cpu_max))
		sh_perr(c, c->line, "bad cpu-max '%s' (want a share of one CPU, 1%%..%u%%, "
			"such as 50%% or 200%%)", sh_policy_quote(q, sizeof(q), v), SH_CPU_MAX_PCT);
}

static void set_io_weight(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (once(c, &c->io_line, key) && !sh_parse_io_weight(v, &c->p->limits.io_weight))
		sh_perr(c, c->line, "bad io-weight '%s' (want an integer 1..%u)",
			sh_policy_quote(q, sizeof(q), v), SH_IO_WEIGHT_MAX);
}

static void set_private_tmp(struct pctx *c, const char *key, const char *v)
{
	char q[QBUF];

	if (once(c, &c->tmp_line, key) && !sh_parse_bytes(v, false, &c->p->limits.private_tmp))
		sh_perr(c, c->line, "bad private-tmp '%s' (want a size such as 256M or 1G)",
			sh_policy_quote(q, sizeof(q), v));
}

/* Every key that is not a rule. */
static const struct setting {
	const char *section;
	const char *key;
	void (*set)(struct pctx *c, const char *key, const char *v);
} settings[] = {
	{ "policy", "name", set_name },
	{ "policy", "mode", set_mode },
	{ "policy", "held-from", set_held_from },
	{ "policy", "paths", set_paths },
	{ "policy", "cgroup", add_cgroup },
	{ "connect", "abstract", set_abstract },
	{ "connect", "scope", set_connect_scope },
	{ "signal", "scope", set_scope },
	{ "limits", "pids-max", set_pids_max },
	{ "limits", "capability", add_caps },
	{ "limits", "memory-max", set_memory_max },
	{ "limits", "memory-swap-max", set_swap_max },
	{ "limits", "cpu-max", set_cpu_max },
	{ "limits", "io-weight", set_io_weight },
	{ "limits", "private-tmp", set_private_tmp },
	{ "net", "connect", sh_policy_add_net },
	{ "net", "deny", sh_policy_add_net },
	{ "net", "bind", sh_policy_add_net },
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

const char *sh_policy_section(const char *s, size_t n)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (strlen(settings[i].section) == n && memcmp(settings[i].section, s, n) == 0)
			return settings[i].section;
	for (unsigned k = 0; k < SH_RULE_KIND_COUNT; k++) {
		const struct sh_rule_kind_info *ki = sh_rule_kind_info((enum sh_rule_kind)k);

		if (ki && strlen(ki->section) == n && memcmp(ki->section, s, n) == 0)
			return ki->section;
	}
	return NULL;
}

bool sh_policy_key_find(const char *sec, const char *key, struct sh_policy_key *out)
{
	memset(out, 0, sizeof(*out));
	if (sh_rule_kind_lookup(sec, key, &out->kind)) {
		out->rule = true;
		return true;
	}
	for (size_t i = 0; i < NSETTINGS; i++) {
		if (strcmp(settings[i].section, sec) == 0 && strcmp(settings[i].key, key) == 0) {
			out->set = settings[i].set;
			out->is_name = settings[i].set == set_name;
			return true;
		}
	}
	return false;
}
