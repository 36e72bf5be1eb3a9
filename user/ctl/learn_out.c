// SPDX-License-Identifier: GPL-2.0
/*
 * sharnessctl learn: the policy text. Every rule carries a comment saying
 * what used it; what the run was refused, and what no rule can allow, is
 * listed in comments for review, never as rules. What each kind of record
 * becomes is in learn_gen.h and the README ("sharnessctl learn").
 */
#define _GNU_SOURCE
#include "digest.h"
#include "learn_int.h"
#include "policy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct out {
	struct sh_buf *pol, *rev;
	const char *section;
	bool opened;
	size_t added;
};

static void section(struct out *o, const char *name)
{
	o->section = name;
	o->opened = false;
}

static void open_section(struct out *o)
{
	if (!o->opened)
		sh_buf_printf(o->pol, "\n[%s]\n", o->section);
	o->opened = true;
}

/* A comment line in the section, and the same in the review. */
static void note(struct out *o, const char *mark, const char *fmt, const char *a, const char *b)
{
	open_section(o);
	sh_buf_puts(o->pol, "# ");
	sh_buf_printf(o->pol, fmt, a, b);
	sh_buf_puts(o->pol, "\n");
	sh_buf_printf(o->rev, "%s [%s] ", mark, o->section);
	sh_buf_printf(o->rev, fmt, a, b);
	sh_buf_puts(o->rev, "\n");
}

/* key = value   # why (a format with one %s: the first process). */
static void rule(struct out *o, const char *key, const char *value, const char *why,
		 const struct item *it)
{
	char w[256] = "";
	int len;

	open_section(o);
	if (why)
		snprintf(w, sizeof(w), why, it ? it->comm : "");
	if (why && it && it->n > 1)
		snprintf(w + strlen(w), sizeof(w) - strlen(w), " (%u objects)", it->n);
	len = (int)(strlen(key) + strlen(value) + 3);
	sh_buf_printf(o->pol, "%s = %s%*s%s%s\n", key, value, why ? (len < 48 ? 48 - len : 1) : 0,
		      "", why ? "# " : "", w);
	sh_buf_printf(o->rev, "+ [%s] %s = %s%s%s\n", o->section, key, value, why ? "   # " : "",
		      w);
	o->added++;
}

/* Each item as a rule, unless a directory rule among them covers it. */
static void rules_of(struct out *o, const struct items *v, const char *key, const char *why)
{
	for (size_t i = 0; i < v->n; i++) {
		bool covered = false;

		for (size_t j = 0; j < v->n && !covered; j++)
			covered = j != i && sh_learn_under(v->v[i].key, v->v[j].key);
		if (!covered)
			rule(o, key, v->v[i].key, why, &v->v[i]);
	}
}

/* A library directory may be named whole unless the tree can write in it. */
static bool lib_dir_ok(const char *dir, const struct items *writes)
{
	if (!sh_learn_collapsible(dir) || sh_learn_writable(writes, dir))
		return false;
	for (size_t i = 0; i < writes->n; i++)
		if (sh_learn_under(writes->v[i].key, dir))
			return false;
	return true;
}

/*
 * What the run executed, each pinned by the digest it has now (a package
 * upgrade then shows in `policy pin`, a replaced file is refused). A file
 * that cannot be hashed here is allowed by name, unless the tree may write
 * it: then it stays a note (an unpinned allow there would let the tree
 * run whatever it puts in its place).
 */
static void exec_allows(struct out *o, const struct items *v, const struct items *writes)
{
	char val[4200], why[160], hex[SH_DIGEST_STR];
	uint8_t d[SH_DIGEST_LEN];

	for (size_t i = 0; i < v->n; i++) {
		const struct item *it = &v->v[i];
		bool covered = false;
		size_t n = strlen(it->key);

		for (size_t j = 0; j < v->n && !covered; j++)
			covered = j != i && sh_learn_under(it->key, v->v[j].key);
		if (covered)
			continue;
		if (n && it->key[n - 1] != '/' &&
		    !sh_digest_file(it->key, 0, 0, d, NULL, why, sizeof(why))) {
			sh_digest_format(d, hex);
			snprintf(val, sizeof(val), "%s %s", it->key, hex);
			/* The policy reader takes lines of SH_POLICY_LINE_MAX. */
			if (strlen(val) + 8 <= SH_POLICY_LINE_MAX - 48)
				rule(o, "allow", val, "run by %s", it);
			else if (strlen(val) + 8 <= SH_POLICY_LINE_MAX)
				rule(o, "allow", val, NULL, NULL);
			else
				note(o, "?", "allow = %s   # run by %s: too long a name to pin on one "
				     "line", it->key, it->comm);
		} else if (sh_learn_writable(writes, it->key)) {
			snprintf(val, sizeof(val), "allow = %s   # run by %s: the tree may write it "
				 "and it cannot be hashed here: pin it by digest", it->key, it->comm);
			note(o, "?", "%s%s", val, "");
		} else {
			rule(o, "allow", it->key, "run by %s", it);
		}
	}
}

static void exec_section(struct out *o, const struct learned *l, const struct items *writes)
{
	struct items libs = {};
	char d[4096];

	section(o, "exec");
	exec_allows(o, &l->exec, writes);
	for (size_t i = 0; i < l->mapped.n; i++) {
		const struct item *m = &l->mapped.v[i];

		if (sh_items_find(&l->exec, m->key))
			continue;   /* mapped because it was run: allowed already */
		sh_learn_dir_of(m->key, d, sizeof(d));
		sh_items_add(&libs, lib_dir_ok(d, writes) ? d : m->key, m->comm, 1);
	}
	rules_of(o, &libs, "lib", "mapped by %s");
	sh_items_free(&libs);
}

static void file_section(struct out *o, const struct learned *l, const struct items *writes,
			 bool all)
{
	char s[4200];

	section(o, "file");
	rules_of(o, writes, "write", "written by %s");
	if (all && !writes->n)
		rule(o, "write", "/dev/null", "no writes seen: any write rule refuses the rest", NULL);
	for (size_t i = 0; i < l->devices.n; i++) {
		snprintf(s, sizeof(s), "device = %s", l->devices.v[i].key);
		note(o, "?", "%s   # refused while learning (opened by %s): uncomment to allow", s,
		     l->devices.v[i].comm);
	}
}

static void connect_section(struct out *o, const struct learned *l, bool all)
{
	section(o, "connect");
	rules_of(o, &l->sockets, "allow", "connected to by %s");
	if (all) {
		rule(o, "deny", "/", "every other unix socket", NULL);
		rule(o, "abstract", l->abstract_used ? "allow" : "deny",
		     l->abstract_used ? "abstract sockets were used" : "no abstract socket used",
		     NULL);
	}
}

static void net_section(struct out *o, const struct learned *l, bool all)
{
	section(o, "net");
	rules_of(o, &l->connects, "connect", "reached by %s");
	rules_of(o, &l->binds, "bind", "bound by %s");
	/* Learning from nothing: a kind the run never used stays refused. */
	if (all && !l->connects.n)
		rule(o, "connect", "none", "the run connected nowhere", NULL);
	if (all && !l->binds.n)
		rule(o, "bind", "none", "the run bound nothing", NULL);
	for (size_t i = 0; i < l->sockkinds.n; i++)
		note(o, "!", "the run used %s (%s), a socket kind [net] refuses: refused under "
		     "this policy", l->sockkinds.v[i].key, l->sockkinds.v[i].comm);
}

static void signal_limits(struct out *o, const struct learned *l, bool all)
{
	char caps[1024] = "";

	section(o, "signal");
	if (all)
		rule(o, "scope", "tree", "signals outside the tree were refused while learning",
		     NULL);
	for (size_t i = 0; i < l->signals.n; i++)
		note(o, "?", "refused while learning (outside the tree, whatever the scope): "
		     "%s by %s; scope = any allows it",
		     l->signals.v[i].key, l->signals.v[i].comm);
	section(o, "limits");
	for (size_t i = 0; i < l->caps.n; i++) {
		const char *c = l->caps.v[i].key;

		if (!strncasecmp(c, "CAP_", 4))
			c += 4;
		snprintf(caps + strlen(caps), sizeof(caps) - strlen(caps), "%s%s", i ? ", " : "", c);
	}
	for (char *p = caps; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (caps[0])
		note(o, "?", "capability = %s   # refused while learning (used by %s): uncomment "
		     "to allow", caps, l->caps.v[0].comm);
}

/* What stays refused: a deny rule's, and what no rule can allow. */
static void review(struct out *o, const struct learned *l)
{
	section(o, "policy");
	o->opened = true;   /* comments at the end of the file */
	if (l->kept.n || l->refused.n)
		sh_buf_puts(o->pol, "\n# ---- refused while learning, and still refused:\n");
	for (size_t i = 0; i < l->kept.n; i++)
		note(o, "!", "by a deny rule: %s (by %s)", l->kept.v[i].key, l->kept.v[i].comm);
	for (size_t i = 0; i < l->refused.n; i++)
		note(o, "!", "no rule allows it: %s (by %s)", l->refused.v[i].key,
		     l->refused.v[i].comm);
}

/*
 * The policy learned from, as its text: named anew, its cgroup= tags
 * commented out (two policies cannot tag one cgroup), and `abstract`
 * (which may appear once) changed in place if the run used abstract
 * sockets. The text is the file's own; a line is never built from what the
 * tree did.
 */
static void from_text(struct out *o, const struct sh_learn_in *in, const struct learned *l)
{
	const char *p = in->from_text, *eol;
	char sect[32] = "";

	for (; *p; p = eol + (*eol == '\n')) {
		const char *k = p;
		size_t n;

		eol = strchrnul(p, '\n');
		n = (size_t)(eol - p);
		while (k < eol && isspace((unsigned char)*k))
			k++;
		if (*k == '[')
			sscanf(k, "[%31[^]]", sect);
		if (!strcmp(sect, "policy") && !strncmp(k, "name", 4) && strchr(k, '=') < eol) {
			sh_buf_printf(o->pol, "name = %s   # learned from %s\n", in->name,
				      in->from_name ? in->from_name : "?");
		} else if (!strcmp(sect, "policy") && !strncmp(k, "cgroup", 6)) {
			sh_buf_printf(o->pol, "# %.*s   (tagged by %s: one policy per cgroup)\n",
				      (int)n, p, in->from_name ? in->from_name : "?");
		} else if (!strcmp(sect, "connect") && !strncmp(k, "abstract", 8) && l->abstract_used) {
			sh_buf_printf(o->pol, "abstract = allow   # learned: abstract sockets used\n");
			sh_buf_printf(o->rev, "~ [connect] abstract = allow\n");
			o->added++;
		} else {
			sh_buf_printf(o->pol, "%.*s\n", (int)n, p);
		}
	}
	sh_buf_printf(o->pol, "\n# ---- learned from a run of: %s\n", in->command ? in->command : "?");
}

size_t sh_learn_policy(const struct sh_learn_in *in, struct sh_jobj *recs, size_t n,
		       struct sh_buf *policy, struct sh_buf *review_buf)
{
	struct out o = { .pol = policy, .rev = review_buf };
	struct learned l = {};
	struct items writes = {}, writable = {};
	bool all = !in->from_text;
	char ts[32], cmd[512];
	time_t now = time(NULL);

	for (size_t i = 0; i < n; i++)
		sh_learn_take(&l, &recs[i]);
	sh_learn_write_rules(&l, in->workdir, &writes);
	/* Where the tree writes now or may write: no library directory there. */
	for (size_t i = 0; i < writes.n; i++)
		sh_items_add(&writable, writes.v[i].key, "", 1);
	sh_learn_add_writable_dirs(&writable, in->workdir);
	snprintf(cmd, sizeof(cmd), "%s", in->command ? in->command : "?");
	for (char *c = cmd; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	sh_buf_printf(policy, "# Learned by sharnessctl learn on %s from a run of:\n#   %s\n"
		      "# Review it before use: README, \"sharnessctl learn\".\n", ts, cmd);
	if (all)
		sh_buf_printf(policy, "\n[policy]\nname = %s\nmode = enforce\n", in->name);
	else
		from_text(&o, in, &l);
	exec_section(&o, &l, &writable);
	file_section(&o, &l, &writes, all);
	connect_section(&o, &l, all);
	net_section(&o, &l, all);
	signal_limits(&o, &l, all);
	review(&o, &l);
	if (writes.oom || l.exec.oom || l.mapped.oom || l.writes.oom)
		policy->oom = true;
	sh_items_free(&writes);
	sh_items_free(&writable);
	sh_learned_free(&l);
	return o.added;
}
