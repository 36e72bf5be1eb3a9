// SPDX-License-Identifier: GPL-2.0
/*
 * sharnessctl learn: the policy made from one run's learn records. What
 * it makes of each kind of record, and why, is in learn_gen.h and the
 * README ("Learning a policy").
 */
#define _GNU_SOURCE
#include "learn_gen.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "policy.h"

/* Beyond this many files written in one directory, the directory. */
#define FILES_PER_DIR 4

static const char *const TMP_DIRS[] = { "/tmp/", "/var/tmp/", "/dev/shm/", "/run/user/" };

struct item {
	char *key;
	char *comm;     /* the first process that used it */
	unsigned n;     /* objects behind it */
};

struct items {
	struct item *v;
	size_t n, cap;
};

struct learned {
	struct items exec, mapped, writes, devices, sockets, connects, binds, caps, kept;
	bool abstract_used;
	char signal_outside[64];   /* comm of one process that did, or "" */
	char socket_refused[128];  /* a socket kind [net] cannot allow, or "" */
};

static struct item *items_find(struct items *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return &s->v[i];
	return NULL;
}

/* Adds key (or counts it again); NULL when out of memory. */
static struct item *items_add(struct items *s, const char *key, const char *comm, unsigned n)
{
	struct item *it = items_find(s, key);

	if (it) {
		it->n += n;
		return it;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct item *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	it = &s->v[s->n];
	it->key = strdup(key);
	it->comm = strdup(comm ? comm : "?");
	/* A process name goes into a comment: nothing that ends the line. */
	for (char *c = it->comm; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	it->n = n;
	if (!it->key || !it->comm) {
		free(it->key);
		free(it->comm);
		return NULL;
	}
	s->n++;
	return it;
}

static void items_free(struct items *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].comm);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && dir[n - 1] == '/' && !strncmp(path, dir, n);
}

int sh_learn_per_run_name(const char *name)
{
	size_t n = strlen(name), digits = 0, run = 0, tok = 0, up = 0, low = 0, tdig = 0;

	if (!n)
		return 0;
	if ((n > 4 && !strcmp(name + n - 4, ".tmp")) || name[n - 1] == '~')
		return 1;
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (isdigit(c)) {
			digits++;
			if (++run >= 4)
				return 1;   /* a pid, a time */
		} else {
			run = 0;
		}
		if (isalnum(c)) {
			tok++;
			up += !!isupper(c);
			low += !!islower(c);
			tdig += !!isdigit(c);
			continue;
		}
		/* A token like mktemp's XXXXXX: mixed case, or letters with digits. */
		if (tok >= 6 && ((up >= 2 && low >= 2) || (tdig >= 2 && up + low >= 2)))
			return 1;
		tok = up = low = tdig = 0;
	}
	return digits == n;
}

/* Can the path stand in a policy file as it is? */
static bool expressible(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n + 1 > SH_RULE_PATH_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c <= 0x20 || c == 0x7f || c == '#' || c == ';' || c == '"' || c == '\\')
			return false;
	}
	return true;
}

/* path's directory, with its '/', into out (which may be path itself). */
static void dir_of(const char *path, char *out, size_t n)
{
	const char *slash;
	size_t len = strlen(path);

	/* A directory rule's own directory is its parent. */
	while (len > 1 && path[len - 1] == '/')
		len--;
	slash = memrchr(path, '/', len);
	len = slash ? (size_t)(slash - path) + 1 : 0;
	if (len >= n)
		len = n - 1;
	if (!len) {
		snprintf(out, n, "/");
		return;
	}
	memmove(out, path, len);
	out[len] = 0;
}

/* Up to the nearest directory that can be written in a policy (not "/"). */
static bool make_expressible(char *p, size_t n)
{
	char d[4096];

	while (!expressible(p)) {
		dir_of(p, d, sizeof(d));
		if (!strcmp(d, "/") || !strcmp(d, p))
			return false;
		snprintf(p, n, "%s", d);
	}
	return true;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The path a rule for this written (or run) object names: see learn_gen.h. */
static void rule_path(const char *path, const char *workdir, bool exact, char *out, size_t n)
{
	char wd[4096];

	snprintf(wd, sizeof(wd), "%s%s", workdir ? workdir : "",
		 workdir && workdir[strlen(workdir) - 1] != '/' ? "/" : "");
	if (!exact && workdir && (under(path, wd) || !strncmp(path, wd, strlen(wd) - 1)) &&
	    (path[strlen(wd) - 1] == '/' || !path[strlen(wd) - 1])) {
		snprintf(out, n, "%s", wd);
		return;
	}
	for (size_t i = 0; !exact && i < sizeof(TMP_DIRS) / sizeof(TMP_DIRS[0]); i++)
		if (under(path, TMP_DIRS[i])) {
			snprintf(out, n, "%s", TMP_DIRS[i]);
			return;
		}
	if (under(path, "/dev/pts/"))
		snprintf(out, n, "/dev/pts/");
	else if (sh_learn_per_run_name(base_of(path)))
		dir_of(path, out, n);
	else
		snprintf(out, n, "%s", path);
}

static bool is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

/* The record's path. A name that is not UTF-8 (the log holds it in
 * target_hex) cannot be written in a policy: the directory above it is. */
static const char *record_path(const struct sh_jobj *o, char *buf, size_t n)
{
	const char *t = sh_jobj_get(o, "target");

	if (!t || t[0] != '/')
		return NULL;
	if (!sh_jobj_get(o, "target_hex"))
		return t;
	snprintf(buf, n, "%s", t);
	while (strstr(buf, "\xef\xbf\xbd") && strcmp(buf, "/"))
		dir_of(buf, buf, n);
	return buf;
}

static void take_net(struct learned *l, const struct sh_jobj *o, const char *op,
		     const char *comm)
{
	const char *proto = sh_jobj_get(o, "proto"), *addr = sh_jobj_get(o, "address");
	const char *port = sh_jobj_get(o, "port");
	char r[160];

	if (is(sh_jobj_get(o, "reason"), "socket kind not allowed") || !proto || !addr) {
		if (!l->socket_refused[0])
			snprintf(l->socket_refused, sizeof(l->socket_refused), "%s by %s",
				 sh_jobj_get(o, "target") ?: "a socket", comm);
		return;
	}
	if (is(op, "bind") || is(op, "listen")) {
		/* Port 0: the kernel picks one, so any port. */
		snprintf(r, sizeof(r), "%s %s%s%s", proto, addr, is(port, "0") ? "" : " ",
			 is(port, "0") ? "" : port);
		items_add(&l->binds, r, comm, 1);
	} else {
		snprintf(r, sizeof(r), "%s %s %s", proto, addr, port ? port : "");
		items_add(&l->connects, r, comm, 1);
	}
}

/* One learn record into l. */
static void take(struct learned *l, const struct sh_jobj *o)
{
	const char *hook = sh_jobj_get(o, "hook"), *op = sh_jobj_get(o, "op");
	const char *reason = sh_jobj_get(o, "reason"), *comm = sh_jobj_get(o, "comm");
	const char *t = sh_jobj_get(o, "target"), *path;
	char k[4200], pb[4096];

	if (!is(sh_jobj_get(o, "event"), "learn"))
		return;
	path = record_path(o, pb, sizeof(pb));
	if (is(reason, "deny rule")) {
		snprintf(k, sizeof(k), "%s %s %s", hook ?: "?", op ?: "?", t ?: "?");
		items_add(&l->kept, k, comm, 1);
	} else if (is(hook, "exec") && path) {
		items_add(&l->exec, path, comm, 1);
	} else if (is(hook, "mmap") && path) {
		items_add(&l->mapped, path, comm, 1);
	} else if (is(hook, "file") && is(reason, "device not allowed")) {
		items_add(&l->devices, path && !under(path, "/dev/pts/") ? path : "/dev/pts/", comm, 1);
	} else if (is(hook, "file")) {
		items_add(&l->writes, path ? path : t ? t : "/", comm, 1);
	} else if (is(hook, "connect") && is(sh_jobj_get(o, "socket"), "abstract")) {
		l->abstract_used = true;
	} else if (is(hook, "connect")) {
		items_add(&l->sockets, path ? path : t ? t : "/", comm, 1);
	} else if (is(hook, "net")) {
		take_net(l, o, op, comm);
	} else if (is(hook, "signal")) {
		if (!l->signal_outside[0])
			snprintf(l->signal_outside, sizeof(l->signal_outside), "%s", comm ?: "?");
	} else if (is(hook, "capability") && t) {
		items_add(&l->caps, t, comm, 1);
	}
}

/* ---- the policy text ------------------------------------------------------ */

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

static void comment(struct out *o, const char *fmt, const char *a, const char *b)
{
	if (!o->opened)
		sh_buf_printf(o->pol, "\n[%s]\n", o->section);
	o->opened = true;
	sh_buf_puts(o->pol, "# ");
	sh_buf_printf(o->pol, fmt, a, b);
	sh_buf_puts(o->pol, "\n");
	sh_buf_printf(o->rev, "  [%s] ", o->section);
	sh_buf_printf(o->rev, fmt, a, b);
	sh_buf_puts(o->rev, "\n");
}

/* key = value   # why (why: a format with one %s, the first process). */
static void rule(struct out *o, const char *key, const char *value, const char *why,
		 const struct item *it)
{
	char w[256] = "";
	int len;

	if (!o->opened)
		sh_buf_printf(o->pol, "\n[%s]\n", o->section);
	o->opened = true;
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

/* Rules for items, each through rule_path (exact: no directory folding). */
static void path_rules(struct out *o, const struct items *in, const char *workdir, bool exact,
		       const char *key, const char *why)
{
	struct items rules = {}, dirs = {};
	char rp[4096];

	for (size_t i = 0; i < in->n; i++) {
		rule_path(in->v[i].key, workdir, exact, rp, sizeof(rp));
		if (make_expressible(rp, sizeof(rp)))
			items_add(&rules, rp, in->v[i].comm, 1);
		else
			comment(o, "not learned: %s (used by %s) has no directory a rule can name",
				in->v[i].key, in->v[i].comm);
	}
	/* Many files written in one directory: the directory. */
	for (size_t i = 0; !exact && i < rules.n; i++)
		if (rules.v[i].key[strlen(rules.v[i].key) - 1] != '/') {
			dir_of(rules.v[i].key, rp, sizeof(rp));
			items_add(&dirs, rp, rules.v[i].comm, 1);
		}
	for (size_t i = 0; i < rules.n; i++) {
		const char *k = rules.v[i].key;
		struct item *d;
		bool covered = false;

		dir_of(k, rp, sizeof(rp));
		d = exact ? NULL : items_find(&dirs, rp);
		if (d && d->n > FILES_PER_DIR && strcmp(rp, "/")) {
			if (d->comm[0])
				rule(o, key, rp, why, d);
			d->comm[0] = 0;   /* written once */
			continue;
		}
		for (size_t j = 0; j < rules.n && !covered; j++)
			covered = j != i && under(k, rules.v[j].key);
		if (!covered)
			rule(o, key, k, why, &rules.v[i]);
	}
	items_free(&rules);
	items_free(&dirs);
}

static void exec_section(struct out *o, struct learned *l)
{
	struct items libs = {};
	char d[4096];

	section(o, "exec");
	path_rules(o, &l->exec, NULL, true, "allow", "run by %s");
	for (size_t i = 0; i < l->mapped.n; i++) {
		if (items_find(&l->exec, l->mapped.v[i].key))
			continue;   /* mapped because it was run: allowed already */
		dir_of(l->mapped.v[i].key, d, sizeof(d));
		items_add(&libs, d, l->mapped.v[i].comm, 1);
	}
	for (size_t i = 0; i < libs.n; i++) {
		bool covered = false;

		for (size_t j = 0; j < libs.n && !covered; j++)
			covered = j != i && under(libs.v[i].key, libs.v[j].key);
		if (!covered && make_expressible(libs.v[i].key, strlen(libs.v[i].key) + 1))
			rule(o, "lib", libs.v[i].key, "mapped by %s", &libs.v[i]);
	}
	items_free(&libs);
}

static void file_section(struct out *o, struct learned *l, const char *workdir, bool all)
{
	section(o, "file");
	path_rules(o, &l->writes, workdir, false, "write", "written by %s");
	if (all && !l->writes.n)
		rule(o, "write", "/dev/null", "no writes seen: any write rule refuses the rest", NULL);
	path_rules(o, &l->devices, NULL, true, "device", "opened by %s");
}

static void connect_section(struct out *o, struct learned *l, bool all)
{
	section(o, "connect");
	path_rules(o, &l->sockets, NULL, true, "allow", "connected to by %s");
	if (all) {
		rule(o, "deny", "/", "every other unix socket", NULL);
		rule(o, "abstract", l->abstract_used ? "allow" : "deny",
		     l->abstract_used ? "abstract sockets were used" : "no abstract socket used",
		     NULL);
	}
}

static void net_section(struct out *o, struct learned *l, bool all)
{
	section(o, "net");
	if (l->socket_refused[0]) {
		comment(o, "left out: the run used %s%s, a kind [net] refuses", l->socket_refused,
			"");
		return;
	}
	for (size_t i = 0; i < l->connects.n; i++)
		rule(o, "connect", l->connects.v[i].key, "reached by %s", &l->connects.v[i]);
	for (size_t i = 0; i < l->binds.n; i++)
		rule(o, "bind", l->binds.v[i].key, "bound by %s", &l->binds.v[i]);
	if (all && !l->connects.n && !l->binds.n) {
		rule(o, "deny", "any 0.0.0.0/0", "no network used", NULL);
		rule(o, "deny", "any ::/0", "no network used", NULL);
	}
}

static void signal_limits(struct out *o, struct learned *l, bool all)
{
	char caps[1024] = "";

	section(o, "signal");
	if (l->signal_outside[0] && all)
		comment(o, "no scope = tree: %s signalled a process outside the tree%s",
			l->signal_outside, "");
	else if (all)
		rule(o, "scope", "tree", "nothing outside the tree was signalled", NULL);
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
		rule(o, "capability", caps, "used by %s", &l->caps.v[0]);
}

/*
 * The policy learned from, as its text: named anew, its cgroup= tags
 * commented out (two policies cannot tag one cgroup), and the keys that
 * may appear once changed in place where the run needed them to be.
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
		} else if (!strcmp(sect, "signal") && !strncmp(k, "scope", 5) && l->signal_outside[0]) {
			sh_buf_printf(o->pol, "scope = any   # learned: %s signalled outside the tree\n",
				      l->signal_outside);
			sh_buf_printf(o->rev, "~ [signal] scope = any\n");
		} else if (!strcmp(sect, "connect") && !strncmp(k, "abstract", 8) && l->abstract_used) {
			sh_buf_printf(o->pol, "abstract = allow   # learned: abstract sockets used\n");
			sh_buf_printf(o->rev, "~ [connect] abstract = allow\n");
		} else {
			sh_buf_printf(o->pol, "%.*s\n", (int)n, p);
		}
	}
	sh_buf_printf(o->pol, "\n# ---- learned from a run of: %s\n", in->command ? in->command : "?");
}

static void kept(struct out *o, const struct learned *l)
{
	section(o, "policy");
	for (size_t i = 0; i < l->kept.n; i++) {
		sh_buf_printf(o->pol, "# kept refused by a deny rule: %s (by %s)\n", l->kept.v[i].key,
			      l->kept.v[i].comm);
		sh_buf_printf(o->rev, "! kept refused by a deny rule: %s (by %s)\n",
			      l->kept.v[i].key, l->kept.v[i].comm);
	}
}

size_t sh_learn_policy(const struct sh_learn_in *in, const struct sh_jobj *recs, size_t n,
		       struct sh_buf *policy, struct sh_buf *review)
{
	struct out o = { .pol = policy, .rev = review };
	struct learned l = {};
	bool all = !in->from_text;
	char ts[32];
	time_t now = time(NULL);

	for (size_t i = 0; i < n; i++)
		take(&l, &recs[i]);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	sh_buf_printf(policy, "# Learned by sharnessctl learn on %s from a run of:\n#   %s\n"
		      "# Review it before use: README, \"Learning a policy\".\n",
		      ts, in->command ? in->command : "?");
	if (all)
		sh_buf_printf(policy, "\n[policy]\nname = %s\nmode = enforce\n", in->name);
	else
		from_text(&o, in, &l);
	exec_section(&o, &l);
	file_section(&o, &l, in->workdir, all);
	connect_section(&o, &l, all);
	net_section(&o, &l, all);
	signal_limits(&o, &l, all);
	kept(&o, &l);
	items_free(&l.exec);
	items_free(&l.mapped);
	items_free(&l.writes);
	items_free(&l.devices);
	items_free(&l.sockets);
	items_free(&l.connects);
	items_free(&l.binds);
	items_free(&l.caps);
	items_free(&l.kept);
	return o.added;
}
