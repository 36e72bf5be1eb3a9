// SPDX-License-Identifier: GPL-2.0
/*
 * sharnessctl learn: from one run's records to what it used, and the
 * directory rules its writes become. The policy text is learn_out.c's.
 * What the tree controls (names, process names, the count of files it
 * writes) never widens a rule past a directory that is safe to name
 * whole: see sh_learn_collapsible.
 */
#define _GNU_SOURCE
#include "learn_int.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

/* Beyond this many files written in one directory, the directory. */
#define FILES_PER_DIR 4

/* Temporary directories: names in them differ every run. */
static const char *const TMP_DIRS[] = { "/tmp/", "/var/tmp/", "/dev/shm/" };

/* Directories a learned rule never names whole, whatever was written in
 * them ('*': any one name). */
static const char *const NEVER_WHOLE[] = {
	"/", "/etc/", "/usr/", "/usr/*/", "/usr/local/*/", "/bin/", "/sbin/", "/lib/",
	"/lib32/", "/lib64/", "/boot/", "/root/", "/home/", "/home/*/", "/home/*/.*/", "/var/",
	"/var/lib/", "/var/log/", "/opt/", "/srv/", "/run/", "/dev/", "/proc/", "/sys/",
	"/etc/*/",
};

static uint64_t fnv(const char *s)
{
	return sh_fnv1a(SH_FNV_BASIS, s, strlen(s));
}

static void index_one(size_t *idx, size_t icap, const char *key, size_t i)
{
	size_t h = fnv(key) & (icap - 1);

	while (idx[h] != SIZE_MAX)
		h = (h + 1) & (icap - 1);
	idx[h] = i;
}

static bool reindex(struct items *s, size_t icap)
{
	size_t *idx = malloc(icap * sizeof(*idx));

	if (!idx)
		return false;
	for (size_t i = 0; i < icap; i++)
		idx[i] = SIZE_MAX;
	for (size_t i = 0; i < s->n; i++)
		index_one(idx, icap, s->v[i].key, i);
	free(s->idx);
	s->idx = idx;
	s->icap = icap;
	return true;
}

struct item *sh_items_find(const struct items *s, const char *key)
{
	if (!s->icap)
		return NULL;
	for (size_t h = fnv(key) & (s->icap - 1); s->idx[h] != SIZE_MAX; h = (h + 1) & (s->icap - 1))
		if (!strcmp(s->v[s->idx[h]].key, key))
			return &s->v[s->idx[h]];
	return NULL;
}

/* A process name or target in a comment: nothing that ends its line. */
static void clean(char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

struct item *sh_items_add(struct items *s, const char *key, const char *comm, unsigned n)
{
	struct item *it = sh_items_find(s, key);

	if (it) {
		it->n += n;
		return it;
	}
	if ((s->n + 1) * 2 > s->icap && !reindex(s, s->icap ? 2 * s->icap : 64))
		goto oom;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct item *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			goto oom;
		s->v = v;
		s->cap = cap;
	}
	it = &s->v[s->n];
	it->key = strdup(key);
	it->comm = strdup(comm ? comm : "?");
	it->n = n;
	if (!it->key || !it->comm) {
		free(it->key);
		free(it->comm);
		goto oom;
	}
	clean(it->comm);
	index_one(s->idx, s->icap, it->key, s->n);
	s->n++;
	return it;
oom:
	s->oom = true;
	return NULL;
}

void sh_items_free(struct items *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].comm);
	}
	free(s->v);
	free(s->idx);
	memset(s, 0, sizeof(*s));
}

void sh_learned_free(struct learned *l)
{
	struct items *all[] = { &l->exec, &l->mapped, &l->writes, &l->sockets, &l->connects,
				&l->binds, &l->kept, &l->refused, &l->devices, &l->caps,
				&l->signals, &l->sockkinds };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		sh_items_free(all[i]);
}

bool sh_learn_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && dir[n - 1] == '/' && !strncmp(path, dir, n);
}

/* path's directory, with its '/', into out (which may be path itself). */
void sh_learn_dir_of(const char *path, char *out, size_t n)
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

/* Can the path stand in a policy file as it is? */
bool sh_learn_expressible(const char *p)
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

/* Does dir ("/a/b/") match pattern, '*' standing for one name? */
static bool dir_matches(const char *dir, const char *pat)
{
	while (*pat) {
		if (*pat == '*') {
			const char *slash = strchr(dir, '/');

			if (!slash || slash == dir)
				return false;
			dir = slash;
			pat++;
		} else if (*pat++ != *dir++) {
			return false;
		}
	}
	return !*dir;
}

bool sh_learn_collapsible(const char *dir)
{
	int depth = 0;

	for (const char *p = dir; *p; p++)
		depth += *p == '/';
	/* "/a/b/c/" has 4 slashes: three names deep. */
	if (depth < 4 || !sh_learn_expressible(dir))
		return false;
	for (size_t i = 0; i < sizeof(NEVER_WHOLE) / sizeof(NEVER_WHOLE[0]); i++)
		if (dir_matches(dir, NEVER_WHOLE[i]))
			return false;
	return true;
}

/* Names a policy cannot hold, or that are not the object's own (not
 * UTF-8: the log keeps them in target_hex), stand for the directory above
 * them, if that may be named whole; else NULL. */
static const char *record_path(const struct sh_jobj *o, bool climb, char *buf, size_t n)
{
	const char *t = sh_jobj_get(o, "target");

	if (!t || t[0] != '/')
		return NULL;
	if (!sh_jobj_get(o, "target_hex") && sh_learn_expressible(t))
		return t;
	if (!climb)
		return NULL;
	snprintf(buf, n, "%s", t);
	do
		sh_learn_dir_of(buf, buf, n);
	while (strcmp(buf, "/") && !sh_learn_expressible(buf));
	return sh_learn_collapsible(buf) ? buf : NULL;
}

static bool is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static void take_net(struct learned *l, const struct sh_jobj *o, const char *op,
		     const char *comm)
{
	const char *proto = sh_jobj_get(o, "proto"), *addr = sh_jobj_get(o, "address");
	const char *port = sh_jobj_get(o, "port"), *t = sh_jobj_get(o, "target");
	char r[160];

	if (is(sh_jobj_get(o, "reason"), "socket kind not allowed") || !proto || !addr || !port ||
	    strspn(addr, "0123456789abcdefABCDEF.:") != strlen(addr) ||
	    strspn(port, "0123456789") != strlen(port) || (!is(proto, "tcp") && !is(proto, "udp"))) {
		sh_items_add(&l->sockkinds, t ? t : "a socket", comm, 1);
		return;
	}
	if (is(op, "bind") || is(op, "listen")) {
		/* Port 0: the kernel picks one, so any port. */
		snprintf(r, sizeof(r), "%s %s%s%s", proto, addr, is(port, "0") ? "" : " ",
			 is(port, "0") ? "" : port);
		sh_items_add(&l->binds, r, comm, 1);
	} else {
		snprintf(r, sizeof(r), "%s %s %s", proto, addr, port);
		sh_items_add(&l->connects, r, comm, 1);
	}
}

/* A use the learning run was refused: for review, as a suggestion where
 * a rule could allow it. */
static void take_refused(struct learned *l, const struct sh_jobj *o, const char *path)
{
	const char *hook = sh_jobj_get(o, "hook"), *op = sh_jobj_get(o, "op");
	const char *reason = sh_jobj_get(o, "reason"), *comm = sh_jobj_get(o, "comm");
	const char *t = sh_jobj_get(o, "target");
	char k[4300];

	if (is(reason, "deny rule")) {
		snprintf(k, sizeof(k), "%s %s %s", hook ?: "?", op ?: "?", t ?: "?");
		sh_items_add(&l->kept, k, comm, 1);
	} else if (is(reason, "device not allowed") && path) {
		sh_items_add(&l->devices, path, comm, 1);
	} else if (is(hook, "capability") && t) {
		sh_items_add(&l->caps, t, comm, 1);
	} else if (is(hook, "signal") && is(reason, "outside the tree")) {
		snprintf(k, sizeof(k), "signal %s to pid %s", sh_jobj_get(o, "signal") ?: "?",
			 t ?: "?");
		sh_items_add(&l->signals, k, comm, 1);
	} else {
		snprintf(k, sizeof(k), "%s %s %s (%s)", hook ?: "?", op ?: "?", t ?: "?",
			 is(sh_jobj_get(o, "event"), "learn") ? "no rule can name it" : reason ?: "?");
		sh_items_add(&l->refused, k, comm, 1);
	}
}

void sh_learn_take(struct learned *l, struct sh_jobj *o)
{
	const char *hook = sh_jobj_get(o, "hook"), *ev = sh_jobj_get(o, "event");
	const char *path, *comm;
	char pb[4096];

	if (!is(ev, "learn") && !(is(ev, "violation") && is(sh_jobj_get(o, "action"), "deny")))
		return;
	/* Writes may stand for their directory; the other kinds are exact. */
	path = record_path(o, is(ev, "learn") && is(hook, "file"), pb, sizeof(pb));
	for (size_t i = 0; i < o->n; i++)
		if (o->kv[i].val != path)
			clean(o->kv[i].val);
	comm = sh_jobj_get(o, "comm");
	if (is(ev, "violation"))
		take_refused(l, o, path);
	else if (is(hook, "connect") && is(sh_jobj_get(o, "socket"), "abstract"))
		l->abstract_used = true;
	else if (is(hook, "net"))
		take_net(l, o, sh_jobj_get(o, "op"), comm);
	else if (!path)
		take_refused(l, o, NULL);   /* a name no rule can hold: listed */
	else if (is(hook, "exec"))
		sh_items_add(&l->exec, path, comm, 1);
	else if (is(hook, "mmap"))
		sh_items_add(&l->mapped, path, comm, 1);
	else if (is(hook, "file"))
		sh_items_add(&l->writes, path, comm, 1);
	else if (is(hook, "connect"))
		sh_items_add(&l->sockets, path, comm, 1);
}

/* Is this name made for one run (a pid, a time, a mktemp suffix)? */
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

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The directory rule a written name stands under, into out; false: none. */
static bool write_dir(const char *p, const char *wd, char *out, size_t n)
{
	if (wd[0] && (sh_learn_under(p, wd) || !strncmp(p, wd, strlen(wd) - 1)) &&
	    (p[strlen(wd) - 1] == '/' || !p[strlen(wd) - 1])) {
		snprintf(out, n, "%s", wd);
		return true;
	}
	for (size_t i = 0; i < sizeof(TMP_DIRS) / sizeof(TMP_DIRS[0]); i++)
		if (sh_learn_under(p, TMP_DIRS[i])) {
			snprintf(out, n, "%s", TMP_DIRS[i]);
			return true;
		}
	if (!sh_learn_per_run_name(base_of(p)))
		return false;
	sh_learn_dir_of(p, out, n);
	return sh_learn_collapsible(out);
}

void sh_learn_write_rules(const struct learned *l, const char *workdir, struct items *rules)
{
	struct items files = {}, dirs = {};
	char wd[4096] = "", d[4096];

	if (workdir && workdir[0] == '/')
		snprintf(wd, sizeof(wd), "%s%s", workdir,
			 workdir[strlen(workdir) - 1] == '/' ? "" : "/");
	for (size_t i = 0; i < l->writes.n; i++) {
		const struct item *w = &l->writes.v[i];

		if (w->key[strlen(w->key) - 1] == '/')   /* a directory a name stood for */
			sh_items_add(rules, w->key, w->comm, w->n);
		else if (write_dir(w->key, wd, d, sizeof(d)))
			sh_items_add(rules, d, w->comm, w->n);
		else
			sh_items_add(&files, w->key, w->comm, w->n);
	}
	/* Many files written in one directory: the directory, if it may be
	 * named whole. */
	for (size_t i = 0; i < files.n; i++) {
		sh_learn_dir_of(files.v[i].key, d, sizeof(d));
		sh_items_add(&dirs, d, files.v[i].comm, 1);
	}
	for (size_t i = 0; i < files.n; i++) {
		struct item *dd;

		sh_learn_dir_of(files.v[i].key, d, sizeof(d));
		dd = sh_items_find(&dirs, d);
		if (dd && dd->n > FILES_PER_DIR && sh_learn_collapsible(d))
			sh_items_add(rules, d, files.v[i].comm, files.v[i].n);
		else
			sh_items_add(rules, files.v[i].key, files.v[i].comm, files.v[i].n);
	}
	sh_items_free(&files);
	sh_items_free(&dirs);
}

void sh_learn_add_writable_dirs(struct items *v, const char *workdir)
{
	char wd[4096];

	if (workdir && workdir[0] == '/') {
		snprintf(wd, sizeof(wd), "%s%s", workdir,
			 workdir[strlen(workdir) - 1] == '/' ? "" : "/");
		sh_items_add(v, wd, "", 1);
	}
	for (size_t i = 0; i < sizeof(TMP_DIRS) / sizeof(TMP_DIRS[0]); i++)
		sh_items_add(v, TMP_DIRS[i], "", 1);
}

bool sh_learn_writable(const struct items *rules, const char *path)
{
	for (size_t i = 0; i < rules->n; i++)
		if (!strcmp(rules->v[i].key, path) || sh_learn_under(path, rules->v[i].key))
			return true;
	return false;
}
