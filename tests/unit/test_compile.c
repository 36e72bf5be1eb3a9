// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the policy compiler (user/policy/compile.c): which rules-map
 * entries and policy flags a policy becomes.  Policies are built in memory,
 * so nothing here reads files or touches BPF maps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile.h"

#define MAX_RULES 8

/* A policy of up to MAX_RULES rules, each with key == path. */
struct fixture {
	struct sh_policy p;
	struct sh_rule rules[MAX_RULES];
};

static void init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->p.name = "t";
	f->p.file = "t.policy";
	f->p.rules = f->rules;
}

static struct sh_rule *add(struct fixture *f, enum sh_rule_kind kind, const char *path)
{
	struct sh_rule *r = &f->rules[f->p.nrules];

	assert_true(f->p.nrules < MAX_RULES);
	r->kind = kind;
	r->path = (char *)path;
	r->key = (char *)path;
	r->keylen = strlen(path);
	r->dir = path[r->keylen - 1] == '/';
	r->line = (int)f->p.nrules + 3;
	f->p.nrules++;
	return r;
}

static void compile_ok(const struct fixture *f, unsigned slot, unsigned id, struct sh_compiled *c)
{
	struct sh_errors e = { 0 };

	assert_int_equal(sh_compile_rules(&f->p, slot, id, c, &e), 0);
	assert_int_equal(e.n, 0);
}

/* Entry i: the key of len bytes of path (and a NUL if with_nul). */
static void assert_entry(const struct sh_compiled *c, size_t i, unsigned slot, unsigned id,
			 unsigned map_kind, const char *path, size_t len, bool with_nul,
			 uint32_t act, const struct sh_rule *rule)
{
	const struct sh_compiled_rule *e;
	uint8_t want[SH_PATH_KEY_MAX] = { 0 };

	assert_true(i < c->n);
	e = &c->rules[i];
	memcpy(want, path, len);
	assert_int_equal(e->key.prefixlen, 32 + (len + (with_nul ? 1 : 0)) * 8);
	assert_int_equal(e->key.slot, slot);
	assert_int_equal(e->key.kind, map_kind);
	assert_int_equal(e->key.policy, id);
	assert_memory_equal(e->key.path, want, sizeof(want));
	assert_int_equal(e->act, act);
	assert_ptr_equal(e->rule, rule);
}

/* A directory rule covers what is below it and the directory itself. */
static void test_directory_rule(void **state)
{
	struct sh_compiled c;
	struct fixture f;
	struct sh_rule *r;

	(void)state;
	init(&f);
	r = add(&f, SH_FILE_WRITE, "/srv/work/");
	compile_ok(&f, 1, 7, &c);
	assert_int_equal(c.n, 2);
	assert_entry(&c, 0, 1, 7, SH_KEY_FILE, "/srv/work/", 10, false, SH_ACT_WRITE, r);
	assert_entry(&c, 1, 1, 7, SH_KEY_FILE, "/srv/work", 9, true, SH_ACT_WRITE, r);
	sh_compile_free(&c);

	/* "/" has no directory key of its own */
	init(&f);
	r = add(&f, SH_FILE_DENY, "/");
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(c.n, 1);
	assert_entry(&c, 0, 0, 0, SH_KEY_FILE, "/", 1, false, SH_ACT_DENY, r);
	sh_compile_free(&c);
	sh_compile_free(&c);   /* twice is fine */
	sh_compile_free(NULL);
}

/* An exact rule is its path with a NUL, written after every directory
 * rule, so it wins over the directory's own key wherever it is in the file. */
static void test_exact_rule_overrides(void **state)
{
	struct sh_compiled c;
	struct fixture f;
	struct sh_rule *exact, *dir;

	(void)state;
	init(&f);
	exact = add(&f, SH_CONNECT_ALLOW, "/run/x");
	dir = add(&f, SH_CONNECT_DENY, "/run/x/");
	compile_ok(&f, 0, 3, &c);
	assert_int_equal(c.n, 3);
	assert_entry(&c, 0, 0, 3, SH_KEY_CONNECT, "/run/x/", 7, false, SH_ACT_DENY, dir);
	assert_entry(&c, 1, 0, 3, SH_KEY_CONNECT, "/run/x", 6, true, SH_ACT_DENY, dir);
	assert_entry(&c, 2, 0, 3, SH_KEY_CONNECT, "/run/x", 6, true, SH_ACT_ALLOW, exact);
	sh_compile_free(&c);
}

/* The key is the resolved path, not the one written. */
static void test_uses_resolved_key(void **state)
{
	struct sh_compiled c;
	struct fixture f;
	struct sh_rule *r;

	(void)state;
	init(&f);
	r = add(&f, SH_EXEC_DENY, "/bin/bash");
	r->key = "/usr/bin/bash";
	r->keylen = strlen(r->key);
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(c.n, 1);
	assert_entry(&c, 0, 0, 0, SH_KEY_EXEC, "/usr/bin/bash", 13, true, SH_ACT_DENY, r);
	sh_compile_free(&c);
}

static size_t count_default_lib(const struct sh_compiled *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += !c->rules[i].rule;
	return n;
}

/* With an exec allowlist and no lib rule, the system library directories
 * may be mapped executable; they come first, so a rule can override them. */
static void test_default_lib_dirs(void **state)
{
	struct sh_compiled c;
	struct fixture f;

	(void)state;
	init(&f);
	add(&f, SH_EXEC_ALLOW, "/usr/bin/git");
	compile_ok(&f, 1, 2, &c);
	assert_int_equal(c.n, sh_compile_ndefault_lib_dirs + 1);
	for (size_t i = 0; i < sh_compile_ndefault_lib_dirs; i++) {
		const char *d = sh_compile_default_lib_dirs[i];

		assert_entry(&c, i, 1, 2, SH_KEY_EXEC, d, strlen(d), false, SH_ACT_LIB, NULL);
	}
	assert_string_equal(sh_compile_default_lib_dirs[0], "/usr/lib/");
	sh_compile_free(&c);

	/* a lib rule of its own replaces them */
	add(&f, SH_EXEC_LIB, "/opt/lib/");
	compile_ok(&f, 1, 2, &c);
	assert_int_equal(count_default_lib(&c), 0);
	assert_int_equal(c.n, 3);
	sh_compile_free(&c);

	/* no allowlist (deny rules only, or no exec rules): none */
	init(&f);
	add(&f, SH_EXEC_DENY, "/usr/bin/python3");
	add(&f, SH_FILE_WRITE, "/tmp/");
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(count_default_lib(&c), 0);
	assert_int_equal(c.n, 3);
	sh_compile_free(&c);

	init(&f);
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(c.n, 0);
	sh_compile_free(&c);
}

/* Each kind of rule becomes its trie and action. */
static void test_kind_targets(void **state)
{
	static const struct {
		enum sh_rule_kind kind;
		unsigned map_kind;
		uint32_t act;
	} want[] = {
		{ SH_EXEC_ALLOW, SH_KEY_EXEC, SH_ACT_ALLOW },
		{ SH_EXEC_DENY, SH_KEY_EXEC, SH_ACT_DENY },
		{ SH_EXEC_LIB, SH_KEY_EXEC, SH_ACT_LIB },
		{ SH_FILE_WRITE, SH_KEY_FILE, SH_ACT_WRITE },
		{ SH_FILE_DENY, SH_KEY_FILE, SH_ACT_DENY },
		{ SH_FILE_DEVICE, SH_KEY_DEVICE, SH_ACT_ALLOW },
		{ SH_CONNECT_ALLOW, SH_KEY_CONNECT, SH_ACT_ALLOW },
		{ SH_CONNECT_DENY, SH_KEY_CONNECT, SH_ACT_DENY },
	};

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), SH_RULE_KIND_COUNT);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct sh_compiled c;
		struct fixture f;
		struct sh_rule *r;

		init(&f);
		r = add(&f, want[i].kind, "/x");
		compile_ok(&f, 0, 0, &c);
		/* after the default lib dirs an exec allowlist brings */
		assert_int_equal(c.n, count_default_lib(&c) + 1);
		assert_entry(&c, c.n - 1, 0, 0, want[i].map_kind, "/x", 2, true, want[i].act, r);
		sh_compile_free(&c);
	}
}

/* The policy-table flags: one set per kind of rule present, and the ones
 * the settings give. */
static void test_flags(void **state)
{
	static const struct {
		enum sh_rule_kind kind;
		uint32_t flags;
	} want[] = {
		{ SH_EXEC_ALLOW, SH_PF_EXEC_ALLOWLIST | SH_PF_EXEC_RULES },
		{ SH_EXEC_DENY, SH_PF_EXEC_RULES | SH_PF_EXEC_DENY },
		{ SH_EXEC_LIB, 0 },
		{ SH_FILE_WRITE, SH_PF_FILE_WRITELIST },
		{ SH_FILE_DENY, SH_PF_FILE_DENY },
		{ SH_FILE_DEVICE, SH_PF_DEVICE_RULES },
		{ SH_CONNECT_ALLOW, SH_PF_CONNECT_RULES },
		{ SH_CONNECT_DENY, SH_PF_CONNECT_RULES },
	};
	struct fixture f;

	(void)state;
	init(&f);
	assert_int_equal(sh_compile_flags(&f.p), SH_PF_VALID);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		init(&f);
		add(&f, want[i].kind, "/x");
		assert_int_equal(sh_compile_flags(&f.p), SH_PF_VALID | want[i].flags);
	}

	init(&f);
	add(&f, SH_EXEC_DENY, "/a");
	add(&f, SH_FILE_WRITE, "/b/");
	f.p.mode = SH_MODE_AUDIT;
	f.p.abstract_deny = true;
	f.p.signal_scope = SH_SCOPE_TREE;
	assert_int_equal(sh_compile_flags(&f.p),
			 SH_PF_VALID | SH_PF_EXEC_RULES | SH_PF_EXEC_DENY | SH_PF_FILE_WRITELIST |
			 SH_PF_AUDIT | SH_PF_ABSTRACT_DENY | SH_PF_SIGNAL_TREE);
	f.p.connect_scope = SH_SCOPE_TREE;
	assert_int_equal(sh_compile_flags(&f.p),
			 SH_PF_VALID | SH_PF_EXEC_RULES | SH_PF_EXEC_DENY | SH_PF_FILE_WRITELIST |
			 SH_PF_AUDIT | SH_PF_ABSTRACT_DENY | SH_PF_SIGNAL_TREE | SH_PF_CONNECT_TREE);
	f.p.from_exec = true;
	assert_int_equal(sh_compile_flags(&f.p),
			 SH_PF_VALID | SH_PF_EXEC_RULES | SH_PF_EXEC_DENY | SH_PF_FILE_WRITELIST |
			 SH_PF_AUDIT | SH_PF_ABSTRACT_DENY | SH_PF_SIGNAL_TREE | SH_PF_CONNECT_TREE |
			 SH_PF_FROM_EXEC);
}

/* A key must hold the path and its NUL: 247 bytes fit, 248 do not. */
static void test_key_too_long(void **state)
{
	char fits[SH_PATH_KEY_MAX], over[SH_PATH_KEY_MAX + 1], want[512];
	struct sh_errors e = { 0 };
	struct sh_compiled c;
	struct fixture f;

	(void)state;
	fits[0] = '/';
	memset(fits + 1, 'a', SH_PATH_KEY_MAX - 2);
	fits[SH_PATH_KEY_MAX - 1] = '\0';
	init(&f);
	add(&f, SH_FILE_DENY, fits);
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.rules[0].key.prefixlen, 32 + SH_PATH_KEY_MAX * 8);
	sh_compile_free(&c);

	memcpy(over, fits, sizeof(fits));
	over[SH_PATH_KEY_MAX - 1] = '/';
	over[SH_PATH_KEY_MAX] = '\0';
	add(&f, SH_FILE_WRITE, over);
	c.n = 99;
	assert_int_equal(sh_compile_rules(&f.p, 0, 0, &c, &e), -ENAMETOOLONG);
	assert_null(c.rules);
	assert_int_equal(c.n, 0);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "t.policy:4: rule path %s resolves to %d bytes, more than %d",
		 over, SH_PATH_KEY_MAX, SH_PATH_KEY_MAX - 1);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
}

/* A [net] rule: IPv4 a.b.c.d/len (len counted in IPv4 bits). */
static struct sh_net_rule net4(enum sh_net_rule_kind kind, uint8_t proto, uint8_t a, uint8_t b,
			       uint8_t c, uint8_t d, unsigned len, uint16_t lo, uint16_t hi,
			       int line)
{
	struct sh_net_rule r = { .kind = kind, .proto = proto, .prefix = 96 + len,
				 .port_lo = lo, .port_hi = hi, .line = line };

	r.addr[10] = r.addr[11] = 0xff;
	r.addr[12] = a;
	r.addr[13] = b;
	r.addr[14] = c;
	r.addr[15] = d;
	return r;
}

static const struct sh_compiled_net *net_entry_for(const struct sh_compiled_net *v, size_t n,
						   unsigned prefixlen, uint8_t kind)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].key.prefixlen == prefixlen && v[i].key.kind == kind)
			return &v[i];
	return NULL;
}

/*
 * Each prefix's entry lists every rule of its trie whose prefix contains
 * it, most specific first: the longest-prefix match for an address holds
 * exactly the rules that cover it.
 */
static void test_net_entries(void **state)
{
	struct sh_net_rule net[] = {
		net4(SH_NETR_CONNECT, SH_PROTO_TCP, 10, 0, 0, 0, 8, 443, 443, 4),
		net4(SH_NETR_DENY, SH_PROTO_ANY, 10, 1, 0, 0, 16, 0, 65535, 5),
		net4(SH_NETR_CONNECT, SH_PROTO_TCP, 10, 1, 2, 3, 32, 22, 22, 6),
		net4(SH_NETR_BIND, SH_PROTO_TCP, 127, 0, 0, 1, 32, 8000, 8999, 7),
	};
	struct fixture f;
	struct sh_errors e = { 0 };
	struct sh_compiled_net *v;
	const struct sh_compiled_net *x;
	size_t n;

	(void)state;
	init(&f);
	f.p.net = net;
	f.p.nnet = 4;
	assert_int_equal(sh_compile_net(&f.p, 1, 7, &v, &n, &e), 0);
	assert_int_equal(n, 4);

	x = net_entry_for(v, n, 32 + 128, SH_NET_CONNECT);
	assert_non_null(x);
	assert_int_equal(x->key.slot, 1);
	assert_int_equal(x->key.policy, 7);
	assert_int_equal(x->key.addr[12], 10);
	assert_int_equal(x->key.addr[15], 3);
	assert_int_equal(x->val.n, 3);
	/* /32 allow port 22, then the /16 deny, then the /8 allow. */
	assert_int_equal(x->val.r[0].port_lo, 22);
	assert_int_equal(x->val.r[0].action, SH_ACT_ALLOW);
	assert_int_equal(x->val.r[1].action, SH_ACT_DENY);
	assert_int_equal(x->val.r[1].proto, SH_PROTO_ANY);
	assert_int_equal(x->val.r[2].port_lo, 443);
	assert_int_equal(x->val.r[2].proto, SH_PROTO_TCP);

	x = net_entry_for(v, n, 32 + 112, SH_NET_CONNECT);
	assert_non_null(x);
	assert_int_equal(x->val.n, 2);   /* the /16 deny and the /8 allow */
	assert_int_equal(x->val.r[0].action, SH_ACT_DENY);

	x = net_entry_for(v, n, 32 + 104, SH_NET_CONNECT);
	assert_non_null(x);
	assert_int_equal(x->val.n, 1);

	/* bind rules are a trie of their own. */
	x = net_entry_for(v, n, 32 + 128, SH_NET_BIND);
	assert_non_null(x);
	assert_int_equal(x->val.n, 1);
	assert_int_equal(x->val.r[0].port_hi, 8999);
	free(v);

	assert_int_equal(sh_compile_flags(&f.p) & (SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND),
			 SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND);
	f.p.nnet = 2;   /* a connect and a deny, no bind */
	assert_int_equal(sh_compile_flags(&f.p) & (SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND),
			 SH_PF_NET | SH_PF_NET_CONNECT);
	f.p.nnet = 0;
	assert_int_equal(sh_compile_flags(&f.p) & SH_PF_NET, 0);
	/* `connect = none`, `bind = none`: the allowlist on, holding nothing. */
	f.p.net_none[SH_NET_NONE_CONNECT] = 3;
	assert_int_equal(sh_compile_flags(&f.p) & (SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND),
			 SH_PF_NET | SH_PF_NET_CONNECT);
	f.p.net_none[SH_NET_NONE_BIND] = 4;
	assert_int_equal(sh_compile_flags(&f.p) & (SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND),
			 SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND);
}

/* Learning: from a policy, its flags and SH_PF_LEARN; from nothing, every
 * allowlist on; a stand-in for a learning run whose daemon is gone (enforce,
 * learn_all), the same without SH_PF_LEARN: every use refused. */
static void test_learn_flags(void **state)
{
	struct fixture f;
	const uint32_t all = SH_PF_LEARN_ALL | SH_PF_EXEC_ALLOWLIST | SH_PF_EXEC_RULES |
			     SH_PF_FILE_WRITELIST | SH_PF_SIGNAL_TREE | SH_PF_CONNECT_RULES |
			     SH_PF_ABSTRACT_DENY | SH_PF_NET | SH_PF_NET_CONNECT | SH_PF_NET_BIND;

	(void)state;
	init(&f);
	add(&f, SH_EXEC_ALLOW, "/usr/bin/true");
	f.p.mode = SH_MODE_LEARN;
	assert_int_equal(sh_compile_flags(&f.p),
			 SH_PF_VALID | SH_PF_LEARN | SH_PF_SIGNAL_TREE | SH_PF_EXEC_ALLOWLIST |
			 SH_PF_EXEC_RULES);
	init(&f);
	f.p.mode = SH_MODE_LEARN;
	f.p.learn_all = true;
	assert_int_equal(sh_compile_flags(&f.p), SH_PF_VALID | SH_PF_LEARN | all);
	f.p.mode = SH_MODE_ENFORCE;
	assert_int_equal(sh_compile_flags(&f.p), SH_PF_VALID | all);
}

/* Same prefix length, narrower ports first; at a tie, deny first. */
static void test_net_order(void **state)
{
	struct sh_net_rule net[] = {
		net4(SH_NETR_CONNECT, SH_PROTO_ANY, 10, 0, 0, 0, 8, 0, 65535, 4),
		net4(SH_NETR_CONNECT, SH_PROTO_TCP, 10, 0, 0, 0, 8, 3000, 3999, 5),
		net4(SH_NETR_DENY, SH_PROTO_TCP, 10, 0, 0, 0, 8, 3000, 3999, 6),
	};
	struct fixture f;
	struct sh_errors e = { 0 };
	struct sh_compiled_net *v;
	size_t n;

	(void)state;
	init(&f);
	f.p.net = net;
	f.p.nnet = 3;
	assert_int_equal(sh_compile_net(&f.p, 0, 0, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].val.n, 3);
	assert_int_equal(v[0].val.r[0].action, SH_ACT_DENY);
	assert_int_equal(v[0].val.r[1].port_lo, 3000);
	assert_int_equal(v[0].val.r[1].action, SH_ACT_ALLOW);
	assert_int_equal(v[0].val.r[2].port_hi, 65535);
	free(v);
}

/* Marker i: the directory of len bytes of path, for policy id of slot,
 * listing its names under mark_id. */
static void assert_marker(const struct sh_compiled_dirs *d, size_t i, unsigned slot,
			  unsigned id, const char *path, unsigned mark_id)
{
	uint8_t want[SH_PATH_KEY_MAX] = { 0 };
	size_t len = strlen(path);

	assert_true(i < d->n);
	memcpy(want, path, len);
	assert_int_equal(d->marks[i].key.prefixlen, 32 + len * 8);
	assert_int_equal(d->marks[i].key.slot, slot);
	assert_int_equal(d->marks[i].key.kind, SH_KEY_FILE);
	assert_int_equal(d->marks[i].key.policy, id);
	assert_memory_equal(d->marks[i].key.path, want, sizeof(want));
	assert_int_equal(d->marks[i].val.len, len);
	assert_int_equal(d->marks[i].val.id, mark_id);
}

/* Is there a marker without id under the key kind `kind` at path? */
static bool has_kind_mark(const struct sh_compiled_dirs *d, unsigned kind, const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < d->n; i++)
		if (d->marks[i].key.kind == kind && d->marks[i].val.len == len &&
		    d->marks[i].key.prefixlen == 32 + len * 8 && d->marks[i].val.id == 0 &&
		    !memcmp(d->marks[i].key.path, path, len))
			return true;
	return false;
}

/* Is there a fold marker of kind (SH_KEY_FOLD | kind) at path? */
static bool has_fold(const struct sh_compiled_dirs *d, unsigned kind, const char *path)
{
	return has_kind_mark(d, SH_KEY_FOLD | kind, path);
}

/* Is name listed under marker mark_id of policy id in slot? */

static bool listed(const struct sh_compiled_dirs *d, unsigned slot, unsigned id,
		   unsigned mark_id, const char *name)
{
	struct sh_name_key k;

	sh_name_key_of(&k, slot, id, mark_id, (const uint8_t *)name, strlen(name));
	for (size_t i = 0; i < d->nnames; i++)
		if (!memcmp(&d->names[i], &k, sizeof(k)))
			return true;
	return false;
}

/*
 * Every directory with a [file] rule key below it gets one marker, and
 * the names in it that lead there are listed under the marker's id (the
 * memo stands for every other name in it); a rule's own directory key,
 * and other kinds' keys, make none.
 */
static void test_dir_markers(void **state)
{
	struct sh_compiled_dirs d;
	struct sh_compiled c;
	struct fixture f;

	(void)state;
	init(&f);
	add(&f, SH_FILE_WRITE, "/srv/work/");        /* keys /srv/work/ and /srv/work */
	add(&f, SH_FILE_DENY, "/srv/work/secret");   /* key /srv/work/secret */
	add(&f, SH_EXEC_ALLOW, "/usr/bin/bash");     /* another kind: no marker */
	compile_ok(&f, 1, 5, &c);
	assert_int_equal(sh_compile_dirs(&c, &d), 0);
	/* Sorted by length, once each: / and /srv/ (above all three file
	 * keys) and /srv/work/ (above the denied file, not above itself).
	 * Then the fold markers, without ids: above the deny rule, and above
	 * the default lib rules (/usr/lib/, /usr/lib64/, /usr/local/lib/)
	 * that come with an exec allowlist; none for the write rule. */
	assert_int_equal(d.n, 3 + 3 + 3);
	assert_marker(&d, 0, 1, 5, "/", 1);
	assert_marker(&d, 1, 1, 5, "/srv/", 2);
	assert_marker(&d, 2, 1, 5, "/srv/work/", 3);
	assert_true(has_fold(&d, SH_KEY_FILE, "/"));
	assert_true(has_fold(&d, SH_KEY_FILE, "/srv/"));
	assert_true(has_fold(&d, SH_KEY_FILE, "/srv/work/"));
	assert_false(has_fold(&d, SH_KEY_FILE, "/srv/work/secret/"));
	assert_true(has_fold(&d, SH_KEY_EXEC, "/"));
	assert_true(has_fold(&d, SH_KEY_EXEC, "/usr/"));
	assert_true(has_fold(&d, SH_KEY_EXEC, "/usr/local/"));
	assert_false(has_fold(&d, SH_KEY_EXEC, "/usr/bin/"));
	/* One name each: srv in /, work in /srv/ (from two keys), secret in
	 * /srv/work/. Not bash (an exec key), not a name of another marker. */
	assert_int_equal(d.nnames, 3);
	assert_true(listed(&d, 1, 5, 1, "srv"));
	assert_true(listed(&d, 1, 5, 2, "work"));
	assert_true(listed(&d, 1, 5, 3, "secret"));
	assert_false(listed(&d, 1, 5, 3, "secre"));
	assert_false(listed(&d, 1, 5, 1, "work"));
	assert_false(listed(&d, 0, 5, 3, "secret"));
	sh_compile_dirs_free(&d);
	sh_compile_free(&c);

	/* A lone rule on "/" and exec rules only: no directory marker; fold
	 * markers only above the default lib rules. */
	init(&f);
	add(&f, SH_FILE_DENY, "/");
	add(&f, SH_EXEC_ALLOW, "/usr/bin/");
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(sh_compile_dirs(&c, &d), 0);
	assert_int_equal(d.n, 3);
	for (size_t i = 0; i < d.n; i++)
		assert_int_equal(d.marks[i].key.kind, SH_KEY_FOLD | SH_KEY_EXEC);
	assert_int_equal(d.nnames, 0);
	assert_null(d.names);
	sh_compile_dirs_free(&d);
	sh_compile_free(&c);

	/* Allow and write rules alone: a spelling that misses them is
	 * refused anyway. No fold marker; the connect rule's rename markers
	 * only. */
	init(&f);
	add(&f, SH_FILE_WRITE, "/");
	add(&f, SH_EXEC_ALLOW, "/usr/bin/bash");
	add(&f, SH_EXEC_LIB, "/usr/lib/");
	add(&f, SH_CONNECT_ALLOW, "/run/a.sock");
	compile_ok(&f, 0, 0, &c);
	assert_int_equal(sh_compile_dirs(&c, &d), 0);
	assert_true(has_fold(&d, SH_KEY_EXEC, "/usr/"));  /* the lib rule */
	assert_false(has_fold(&d, SH_KEY_EXEC, "/usr/bin/"));
	assert_false(has_fold(&d, SH_KEY_CONNECT, "/run/"));
	assert_true(has_kind_mark(&d, SH_KEY_CONNECT, "/"));
	assert_true(has_kind_mark(&d, SH_KEY_CONNECT, "/run/"));
	assert_int_equal(d.n, 2 + 2);
	assert_int_equal(d.nnames, 0);
	assert_null(d.names);
	sh_compile_dirs_free(&d);
	sh_compile_free(&c);
}

/*
 * The directories a rename may not move (bpf/file.c): every directory above
 * a [connect] or device rule, or above an exec deny rule, under the rule's
 * own kind and without id or names (the memo does not use them); not the
 * rule's own directory key, not above an exec allow rule.
 */
static void test_rename_markers(void **state)
{
	struct sh_compiled_dirs d;
	struct sh_compiled c;
	struct fixture f;

	(void)state;
	init(&f);
	add(&f, SH_CONNECT_DENY, "/tmp/tmux-0/");
	add(&f, SH_CONNECT_ALLOW, "/run/a.sock");
	add(&f, SH_FILE_DEVICE, "/dev/net/tun");
	add(&f, SH_EXEC_DENY, "/usr/sbin/sudo");
	add(&f, SH_EXEC_ALLOW, "/opt/tool/bin/");
	add(&f, SH_FILE_DENY, "/tmp/secret");
	compile_ok(&f, 0, 2, &c);
	assert_int_equal(sh_compile_dirs(&c, &d), 0);
	assert_true(has_kind_mark(&d, SH_KEY_CONNECT, "/"));
	assert_true(has_kind_mark(&d, SH_KEY_CONNECT, "/tmp/"));
	assert_true(has_kind_mark(&d, SH_KEY_CONNECT, "/run/"));
	assert_false(has_kind_mark(&d, SH_KEY_CONNECT, "/tmp/tmux-0/"));
	assert_true(has_kind_mark(&d, SH_KEY_DEVICE, "/"));
	assert_true(has_kind_mark(&d, SH_KEY_DEVICE, "/dev/"));
	assert_true(has_kind_mark(&d, SH_KEY_DEVICE, "/dev/net/"));
	assert_true(has_kind_mark(&d, SH_KEY_EXEC, "/"));
	assert_true(has_kind_mark(&d, SH_KEY_EXEC, "/usr/"));
	assert_true(has_kind_mark(&d, SH_KEY_EXEC, "/usr/sbin/"));
	assert_false(has_kind_mark(&d, SH_KEY_EXEC, "/opt/"));
	/* The [file] rule's markers keep their ids and names among the
	 * others: an id is its marker's place in the array, plus one. */
	for (size_t i = 0; i < d.n; i++)
		assert_int_equal(d.marks[i].val.id, d.marks[i].key.kind == SH_KEY_FILE ? i + 1 : 0);
	assert_int_equal(d.nnames, 2);       /* tmp in /, secret in /tmp/ */
	for (size_t i = 0; i < d.nnames; i++)
		assert_int_equal(d.marks[d.names[i].id - 1].key.kind, SH_KEY_FILE);
	sh_compile_dirs_free(&d);
	sh_compile_free(&c);
}

/*
 * A name is keyed by its length and its first and last 8 bytes: exact up
 * to 16 bytes, and two longer names with the same ends share a key (the
 * programs then judge both by path).
 */
static void test_name_keys(void **state)
{
	struct sh_name_key a, b;

	(void)state;
	sh_name_key_of(&a, 1, 2, 3, (const uint8_t *)"ab", 2);
	assert_int_equal(a.id, 3);
	assert_int_equal(a.slot, 1);
	assert_int_equal(a.policy, 2);
	assert_int_equal(a.len, 2);
	assert_true(a.head == 0x6261);
	assert_true(a.tail == 0);
	sh_name_key_of(&a, 0, 0, 1, (const uint8_t *)"0123456789", 10);
	assert_true(a.head == 0x3736353433323130ull);
	assert_true(a.tail == 0x3938373635343332ull);
	sh_name_key_of(&a, 0, 0, 1, (const uint8_t *)"aaaaaaaa-x-bbbbbbbb", 19);
	sh_name_key_of(&b, 0, 0, 1, (const uint8_t *)"aaaaaaaa-y-bbbbbbbb", 19);
	assert_memory_equal(&a, &b, sizeof(a));
	sh_name_key_of(&b, 0, 0, 1, (const uint8_t *)"aaaaaaaa-bbbbbbbb", 17);
	assert_memory_not_equal(&a, &b, sizeof(a));
}

/* The compiled key of len bytes of path (no NUL added). */
static void raw_key(struct sh_compiled_rule *r, const char *path, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->key.kind = SH_KEY_FILE;
	r->key.prefixlen = 32 + len * 8;
	memcpy(r->key.path, path, len);
	r->act = SH_ACT_DENY;
}

/* A key that ends within a name (no '/' nor NUL after it) covers every
 * name that starts so: its marker gets no id, and no name of it is
 * listed. The other markers keep theirs. */
static void test_unlisted_marker(void **state)
{
	struct sh_compiled_rule r[2];
	struct sh_compiled c = { .rules = r, .n = 2 };
	struct sh_compiled_dirs d;

	(void)state;
	raw_key(&r[0], "/a/pre", 6);
	raw_key(&r[1], "/a/b/c", 7);    /* with its NUL */
	assert_int_equal(sh_compile_dirs(&c, &d), 0);
	assert_int_equal(d.n, 3 + 3);   /* and the deny rules' fold markers */
	assert_marker(&d, 0, 0, 0, "/", 1);
	assert_marker(&d, 1, 0, 0, "/a/", 0);
	assert_marker(&d, 2, 0, 0, "/a/b/", 3);
	assert_true(has_fold(&d, SH_KEY_FILE, "/a/b/"));
	assert_int_equal(d.nnames, 2);
	assert_true(listed(&d, 0, 0, 1, "a"));
	assert_true(listed(&d, 0, 0, 3, "c"));
	assert_false(listed(&d, 0, 0, 2, "b"));
	sh_compile_dirs_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directory_rule),
		cmocka_unit_test(test_exact_rule_overrides),
		cmocka_unit_test(test_uses_resolved_key),
		cmocka_unit_test(test_default_lib_dirs),
		cmocka_unit_test(test_kind_targets),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_key_too_long),
		cmocka_unit_test(test_net_entries),
		cmocka_unit_test(test_net_order),
		cmocka_unit_test(test_learn_flags),
		cmocka_unit_test(test_dir_markers),
		cmocka_unit_test(test_name_keys),
		cmocka_unit_test(test_rename_markers),
		cmocka_unit_test(test_unlisted_marker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
