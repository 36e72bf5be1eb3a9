/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What learn_gen.c (records to learned sets, names to rule paths) and
 * learn_out.c (the policy text) share.
 */
#ifndef SH_LEARN_INT_H
#define SH_LEARN_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "learn_gen.h"

/* A set of strings, each with the first process that used it and a count. */
struct item {
	char *key;
	char *comm;
	unsigned n;
};

struct items {
	struct item *v;
	size_t n, cap;
	size_t *idx;    /* open-addressing index into v (SIZE_MAX: empty) */
	size_t icap;
	bool oom;
};

/* Adds key (or counts it again): the item, NULL when out of memory. */
struct item *sh_items_add(struct items *s, const char *key, const char *comm, unsigned n);
struct item *sh_items_find(const struct items *s, const char *key);
void sh_items_free(struct items *s);

/* What the records say the run used. */
struct learned {
	struct items exec, mapped, writes, sockets, connects, binds;
	struct items kept;      /* refused by a deny rule of the policy learned from */
	struct items refused;   /* refused while learning: "HOOK OP TARGET" (reason) */
	struct items devices, caps, signals;   /* refused while learning: suggestions */
	struct items sockkinds; /* socket kinds [net] refuses, used while learning */
	bool abstract_used;
};

void sh_learn_take(struct learned *l, struct sh_jobj *o);
void sh_learned_free(struct learned *l);

/* Rule paths. */
bool sh_learn_under(const char *path, const char *dir);
void sh_learn_dir_of(const char *path, char *out, size_t n);
bool sh_learn_expressible(const char *p);
/* May a rule name this whole directory for names found in it? */
bool sh_learn_collapsible(const char *dir);
/* The write rules of the run (see learn_gen.h), each with what used it. */
void sh_learn_write_rules(const struct learned *l, const char *workdir, struct items *rules);
/* The work directory (if any) and the temporary directories, into v. */
void sh_learn_add_writable_dirs(struct items *v, const char *workdir);
/* Is path under one of the directories the write rules name (or one)? */
bool sh_learn_writable(const struct items *rules, const char *path);

#endif
