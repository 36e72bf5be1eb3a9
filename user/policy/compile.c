// SPDX-License-Identifier: GPL-2.0
/*
 * The policy compiler (see compile.h): a policy's rules become rules-map
 * keys, its kinds of rules and settings become policy-table flags.  What
 * each rule kind becomes is read from the rule-kind table (rules.c).
 */
#include "compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Where executable libraries may come from when a policy has an exec
 * allowlist and no `lib` rule of its own: the system library directories
 * (the dynamic loader lives there too). Programs in the allowlist keep
 * working; a library or loader payload elsewhere cannot be mapped.
 */
const char *const sh_compile_default_lib_dirs[] = { "/usr/lib/", "/usr/lib64/", "/usr/local/lib/" };
const size_t sh_compile_ndefault_lib_dirs =
	sizeof(sh_compile_default_lib_dirs) / sizeof(sh_compile_default_lib_dirs[0]);

static bool has_kind(const struct sh_policy *p, enum sh_rule_kind k)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].kind == k)
			return true;
	return false;
}

/* Appends the key for len bytes of path (and a NUL if with_nul). */
static void add(struct sh_compiled *c, unsigned slot, unsigned map_kind, unsigned id,
		const char *path, size_t len, bool with_nul, uint32_t act,
		const struct sh_rule *rule)
{
	struct sh_compiled_rule *e = &c->rules[c->n++];
	size_t n = len + (with_nul ? 1 : 0);

	memset(e, 0, sizeof(*e));
	e->key.slot = slot;
	e->key.kind = map_kind;
	e->key.policy = id;
	memcpy(e->key.path, path, len);
	e->key.prefixlen = 32 + n * 8;
	e->act = act;
	e->rule = rule;
}

uint32_t sh_compile_pin(const struct sh_policy *p, const struct sh_rule *r)
{
	if (!r->pinned)
		return 0;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].pinned && !memcmp(p->rules[i].digest, r->digest, sizeof(r->digest)))
			return (uint32_t)i + 1;
	return 0;
}

/*
 * A directory rule covers everything below it (its path with the '/') and
 * the directory itself (its path without the '/', with a NUL); an exact
 * rule covers its path with a NUL.
 */
static void add_rule(struct sh_compiled *c, unsigned slot, unsigned id, const struct sh_policy *p,
		     const struct sh_rule *r, const char *key, size_t len)
{
	const struct sh_rule_kind_info *ki = sh_rule_kind_info(r->kind);

	if (!r->dir) {
		add(c, slot, ki->map_kind, id, key, len, true,
		    ki->action | sh_compile_pin(p, r) << SH_RULE_PIN_SHIFT, r);
		return;
	}
	add(c, slot, ki->map_kind, id, key, len, false, ki->action, r);
	if (len > 1)
		add(c, slot, ki->map_kind, id, key, len - 1, true, ki->action, r);
}

/* Checks every rule before anything is built: a kind the table knows, a
 * key that fits with its NUL. */
static int check_rules(const struct sh_policy *p, struct sh_errors *errs)
{
	for (size_t i = 0; i < p->nrules; i++) {
		const struct sh_rule *r = &p->rules[i];
		size_t len = r->key ? r->keylen : strlen(r->path);

		if (!sh_rule_kind_info(r->kind)) {
			sh_errors_add(errs, "%s:%d: rule %s has an unknown kind", p->file, r->line,
				      r->path);
			return -EINVAL;
		}
		if (len + 1 > SH_PATH_KEY_MAX) {
			sh_errors_add(errs,
				      "%s:%d: rule path %s resolves to %zu bytes, more than %d",
				      p->file, r->line, r->path, len, SH_PATH_KEY_MAX - 1);
			return -ENAMETOOLONG;
		}
	}
	return 0;
}

int sh_compile_rules(const struct sh_policy *p, unsigned slot, unsigned id,
		     struct sh_compiled *out, struct sh_errors *errs)
{
	struct sh_compiled c = { 0 };
	int err;

	memset(out, 0, sizeof(*out));
	err = check_rules(p, errs);
	if (err)
		return err;
	c.rules = calloc(sh_compile_ndefault_lib_dirs + 2 * p->nrules + 1, sizeof(*c.rules));
	if (!c.rules) {
		sh_errors_add(errs, "%s: cannot compile policy: %s", p->file, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (has_kind(p, SH_EXEC_ALLOW) && !has_kind(p, SH_EXEC_LIB)) {
		for (size_t i = 0; i < sh_compile_ndefault_lib_dirs; i++)
			add(&c, slot, SH_KEY_EXEC, id, sh_compile_default_lib_dirs[i],
			    strlen(sh_compile_default_lib_dirs[i]), false, SH_ACT_LIB, NULL);
	}
	/* Directory rules first: an exact rule for the same path, added
	 * later, takes precedence over the directory's own key. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nrules; i++) {
			const struct sh_rule *r = &p->rules[i];

			if (r->dir == (pass == 0))
				add_rule(&c, slot, id, p, r, r->key ? r->key : r->path,
					 r->key ? r->keylen : strlen(r->path));
		}
	}
	*out = c;
	return 0;
}

/* Directory markers first (their ids are their places), then fold
 * markers; each by length, then key. */
static int dir_cmp(const void *a, const void *b)
{
	const struct sh_compiled_dir *x = a, *y = b;
	int fx = x->key.kind & SH_KEY_FOLD, fy = y->key.kind & SH_KEY_FOLD;

	if (fx != fy)
		return fx < fy ? -1 : 1;
	if (x->val.len != y->val.len)
		return x->val.len < y->val.len ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

static int name_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sh_name_key));
}

/* The marker of the first j bytes of rule key r. */
static void mark_of(struct sh_compiled_dir *d, const struct sh_rule_key *r, size_t j)
{
	memset(d, 0, sizeof(*d));
	d->key.prefixlen = 32 + j * 8;
	d->key.slot = r->slot;
	d->key.kind = r->kind;
	d->key.policy = r->policy;
	memcpy(d->key.path, r->path, j);
	d->val.len = j;
}

/* Is r a [file] rule (its directories get markers)? */
static bool file_rule(const struct sh_compiled_rule *r)
{
	return r->key.kind == SH_KEY_FILE;
}

/* Is r a rule that judges a name at its use, whose directories no rename
 * may move: a [connect] or device rule, an exec deny rule (the object
 * keeps the verdict of the name it had; see sh_path_rename)? */
static bool name_rule(const struct sh_compiled_rule *r)
{
	return r->key.kind == SH_KEY_CONNECT || r->key.kind == SH_KEY_DEVICE ||
	       (r->key.kind == SH_KEY_EXEC && r->act == SH_ACT_DENY);
}

/* Does rule r refuse more than a rule above it could allow: a deny rule,
 * or an exec lib rule (mapped, not run)? A spelling that misses it would
 * be judged by a broader rule: its directories get fold markers. */
static bool restricts(const struct sh_compiled_rule *r)
{
	return r->key.kind != SH_KEY_DEVICE &&
	       (r->act == SH_ACT_DENY || (r->key.kind == SH_KEY_EXEC && r->act == SH_ACT_LIB));
}

/* Calls fn(r, j, arg) for every marker position j of every key of c whose
 * rule `want` takes (r->path[j - 1] is a '/', j shorter than the key);
 * stops at an error. */
static int each_mark(const struct sh_compiled *c, bool (*want)(const struct sh_compiled_rule *),
		     int (*fn)(const struct sh_rule_key *r, size_t j, size_t len, void *arg),
		     void *arg)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct sh_rule_key *r = &c->rules[i].key;
		size_t len = (r->prefixlen - 32) / 8;

		if (!want(&c->rules[i]))
			continue;
		for (size_t j = 1; j < len; j++) {
			int err;

			if (r->path[j - 1] != '/')
				continue;
			err = fn(r, j, len, arg);
			if (err)
				return err;
		}
	}
	return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? 2 * *cap : 16;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

struct dirs_build {
	struct sh_compiled_dirs *d;
	size_t cap, ncap;
};

static int add_mark(const struct sh_rule_key *r, size_t j, size_t len, void *arg)
{
	struct dirs_build *b = arg;
	int err = grow((void **)&b->d->marks, &b->cap, b->d->n, sizeof(*b->d->marks));

	(void)len;
	if (err)
		return err;
	mark_of(&b->d->marks[b->d->n++], r, j);
	return 0;
}

/* The name in marker (r, j) that leads to r: listed, or the marker's id
 * cleared where it cannot be. */
static int add_name(const struct sh_rule_key *r, size_t j, size_t len, void *arg)
{
	struct dirs_build *b = arg;
	struct sh_compiled_dir want, *m;
	size_t e = j;
	int err;

	mark_of(&want, r, j);
	m = bsearch(&want, b->d->marks, b->d->n, sizeof(want), dir_cmp);
	if (!m)
		return -EINVAL;
	if (!m->val.id)
		return 0;
	while (e < len && r->path[e] != '/' && r->path[e] != '\0')
		e++;
	if (e == len || e == j || e - j > 255) {
		m->val.id = 0;  /* a name by its start only, or none: by path */
		return 0;
	}
	err = grow((void **)&b->d->names, &b->ncap, b->d->nnames, sizeof(*b->d->names));
	if (err)
		return err;
	sh_name_key_of(&b->d->names[b->d->nnames++], r->slot, r->policy, m->val.id,
		       &r->path[j], e - j);
	return 0;
}

void sh_name_key_of(struct sh_name_key *k, unsigned slot, unsigned policy, uint32_t id,
		    const uint8_t *name, size_t len)
{
	memset(k, 0, sizeof(*k));
	k->id = id;
	k->slot = slot;
	k->len = len;
	k->policy = policy;
	for (size_t i = 0; i < len && i < 8; i++)
		k->head |= (uint64_t)name[i] << (8 * i);
	for (size_t i = 0; len > 8 && i < 8; i++)
		k->tail |= (uint64_t)name[len - 8 + i] << (8 * i);
}

/* A fold marker (SH_KEY_FOLD | kind) at (r, j). */
static int add_fold_mark(const struct sh_rule_key *r, size_t j, size_t len, void *arg)
{
	struct dirs_build *b = arg;
	int err = add_mark(r, j, len, b);

	if (!err)
		b->d->marks[b->d->n - 1].key.kind = r->kind | SH_KEY_FOLD;
	return err;
}

int sh_compile_dirs(const struct sh_compiled *c, struct sh_compiled_dirs *out)
{
	struct dirs_build b = { .d = out };
	size_t u = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = each_mark(c, file_rule, add_mark, &b);
	if (!err)
		err = each_mark(c, restricts, add_fold_mark, &b);
	if (!err)
		err = each_mark(c, name_rule, add_mark, &b);
	if (!err && out->n) {
		qsort(out->marks, out->n, sizeof(*out->marks), dir_cmp);
		for (size_t i = 0; i < out->n; i++)
			if (!u || dir_cmp(&out->marks[i], &out->marks[u - 1]))
				out->marks[u++] = out->marks[i];
		out->n = u;
		/* Ids for the [file] directory markers; the others have none. */
		for (size_t i = 0; i < u; i++)
			out->marks[i].val.id = out->marks[i].key.kind == SH_KEY_FILE ? i + 1 : 0;
		err = each_mark(c, file_rule, add_name, &b);
	}
	if (err) {
		sh_compile_dirs_free(out);
		return err;
	}
	/* Names of markers that lost their id go; the rest once each. */
	u = 0;
	for (size_t i = 0; i < out->nnames; i++) {
		struct sh_compiled_dir *m = &out->marks[out->names[i].id - 1];

		if (m->val.id)
			out->names[u++] = out->names[i];
	}
	out->nnames = u;
	if (u) {
		qsort(out->names, u, sizeof(*out->names), name_cmp);
		out->nnames = 1;
		for (size_t i = 1; i < u; i++)
			if (name_cmp(&out->names[i], &out->names[out->nnames - 1]))
				out->names[out->nnames++] = out->names[i];
	}
	if (!out->n) {
		free(out->marks);
		out->marks = NULL;
	}
	if (!out->nnames) {
		free(out->names);
		out->names = NULL;
	}
	return 0;
}

void sh_compile_dirs_free(struct sh_compiled_dirs *d)
{
	if (!d)
		return;
	free(d->marks);
	free(d->names);
	memset(d, 0, sizeof(*d));
}

void sh_compile_free(struct sh_compiled *c)
{
	if (!c)
		return;
	free(c->rules);
	c->rules = NULL;
	c->n = 0;
}

uint32_t sh_compile_flags(const struct sh_policy *p)
{
	uint32_t f = SH_PF_VALID;

	if (p->mode == SH_MODE_AUDIT)
		f |= SH_PF_AUDIT;
	/* Learning: signals outside the tree are refused whatever the scope --
	 * the run's own sharnessctl is outside, and without it the run would
	 * go on learning (user/learning.c). */
	if (p->mode == SH_MODE_LEARN)
		f |= SH_PF_LEARN | SH_PF_SIGNAL_TREE;
	/* Learning from nothing: every allowlist empty, so every exec, write,
	 * connect, bind, signal outside the tree and unix socket is reported
	 * (in enforce mode: refused, for a learning run whose daemon is gone). */
	if (p->learn_all)
		f |= SH_PF_LEARN_ALL | SH_PF_EXEC_ALLOWLIST | SH_PF_EXEC_RULES |
		     SH_PF_FILE_WRITELIST | SH_PF_SIGNAL_TREE | SH_PF_CONNECT_RULES |
		     SH_PF_ABSTRACT_DENY | SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND;
	if (p->abstract_deny)
		f |= SH_PF_ABSTRACT_DENY;
	if (p->from_exec)
		f |= SH_PF_FROM_EXEC;
	if (p->signal_scope == SH_SCOPE_TREE)
		f |= SH_PF_SIGNAL_TREE;
	if (p->connect_scope == SH_SCOPE_TREE)
		f |= SH_PF_CONNECT_TREE;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct sh_rule_kind_info *ki = sh_rule_kind_info(p->rules[i].kind);

		if (ki)
			f |= ki->flags;
		if (p->rules[i].pinned)
			f |= SH_PF_EXEC_PINS;
	}
	if (p->net_none[SH_NET_NONE_CONNECT])
		f |= SH_PF_NET | SH_PF_NET_CONNECT;
	if (p->net_none[SH_NET_NONE_BIND])
		f |= SH_PF_NET | SH_PF_NET_BIND;
	for (size_t i = 0; i < p->nnet; i++)
		f |= SH_PF_NET | (p->net[i].kind == SH_NETR_CONNECT ? SH_PF_NET_CONNECT :
				  p->net[i].kind == SH_NETR_BIND ? SH_PF_NET_BIND : 0);
	return f;
}

/* Most specific first: longest prefix, narrowest port range, deny first. */
static int net_order(const void *a, const void *b)
{
	const struct sh_net_rule *x = *(const struct sh_net_rule *const *)a;
	const struct sh_net_rule *y = *(const struct sh_net_rule *const *)b;
	unsigned wx = (unsigned)x->port_hi - x->port_lo, wy = (unsigned)y->port_hi - y->port_lo;

	if (x->prefix != y->prefix)
		return x->prefix > y->prefix ? -1 : 1;
	if (wx != wy)
		return wx < wy ? -1 : 1;
	if ((x->kind == SH_NETR_DENY) != (y->kind == SH_NETR_DENY))
		return x->kind == SH_NETR_DENY ? -1 : 1;
	return x->line - y->line;
}

static bool same_trie(const struct sh_net_rule *a, const struct sh_net_rule *b)
{
	return (a->kind == SH_NETR_BIND) == (b->kind == SH_NETR_BIND);
}

/* The entry for rule r's prefix: every rule of its trie covering it. */
static int net_entry(const struct sh_policy *p, const struct sh_net_rule *r, unsigned slot,
		     unsigned id, struct sh_compiled_net *e, struct sh_errors *errs)
{
	const struct sh_net_rule *cover[SH_MAX_NET_RULES_PER_POLICY];
	size_t n = 0;

	memset(e, 0, sizeof(*e));
	e->key.prefixlen = 32 + r->prefix;
	e->key.slot = (uint8_t)slot;
	e->key.kind = r->kind == SH_NETR_BIND ? SH_NET_BIND : SH_NET_CONNECT;
	e->key.policy = (uint16_t)id;
	memcpy(e->key.addr, r->addr, sizeof(e->key.addr));
	for (size_t j = 0; j < p->nnet && n < SH_MAX_NET_RULES_PER_POLICY; j++)
		if (same_trie(&p->net[j], r) && sh_net_rule_covers(&p->net[j], r))
			cover[n++] = &p->net[j];
	if (n > SH_NET_RULES_PER_KEY) {
		sh_errors_add(errs, "%s:%d: %zu [net] rules cover this rule's addresses; at most %d can",
			      p->file, r->line, n, SH_NET_RULES_PER_KEY);
		return -E2BIG;
	}
	qsort(cover, n, sizeof(cover[0]), net_order);
	e->val.n = (uint32_t)n;
	for (size_t k = 0; k < n; k++)
		e->val.r[k] = (struct sh_net_match){
			.port_lo = cover[k]->port_lo, .port_hi = cover[k]->port_hi,
			.proto = cover[k]->proto,
			.action = cover[k]->kind == SH_NETR_DENY ? SH_ACT_DENY : SH_ACT_ALLOW };
	return 0;
}

int sh_compile_net(const struct sh_policy *p, unsigned slot, unsigned id,
		   struct sh_compiled_net **out, size_t *n, struct sh_errors *errs)
{
	struct sh_compiled_net *v = NULL;
	size_t k = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!p->nnet)
		return 0;
	v = calloc(p->nnet, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nnet && !err; i++) {
		bool seen = false;

		/* One entry per prefix of a trie. */
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_trie(&p->net[j], &p->net[i]) &&
			       p->net[j].prefix == p->net[i].prefix &&
			       sh_net_rule_covers(&p->net[j], &p->net[i]);
		if (!seen)
			err = net_entry(p, &p->net[i], slot, id, &v[k++], errs);
	}
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = k;
	return 0;
}
