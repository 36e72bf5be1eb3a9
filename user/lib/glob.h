/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SH_GLOB_H
#define SH_GLOB_H

#include <stdbool.h>

#include "sharness.h"

/* A cgroup pattern's glob against a name: `*` any run of characters, `?`
 * one, `[...]` one of a class (`a-f` a range of bytes, `!` first: none of
 * them), every other byte itself (what the programs match, bpf/cgroup.c).
 * The glob must have passed sh_glob_check. */
bool sh_glob_match(const char *glob, const char *name);
/* NULL if every class of glob is well formed, else why not: closed by
 * `]`, one member at least, ranges low to high, at most
 * SH_PATTERN_CLASSES. */
const char *sh_glob_check(const char *glob);
/* The class that opens at g ('['): 1 if byte c is of it, 0 if not, with
 * *end past its ']'; where it is not well formed, why (below, all < 0).
 * `!` first: none of the members; `a-f` a range of bytes; a `-` first or
 * last is itself; the first `]` closes it. */
enum {
	SH_GLOB_OPEN = -1,      /* no ']' */
	SH_GLOB_EMPTY = -2,     /* no member */
	SH_GLOB_DOWN = -3,      /* a range from high to low */
};
int sh_glob_class(const char *g, unsigned char c, const char **end);
/* The classes of glob for the programs (sharness_patterns.h): -E2BIG
 * past SH_PATTERN_CLASSES, -EINVAL for one not well formed (policy check
 * refuses both first). */
int sh_glob_compile(const char *glob, struct sh_pattern_classes *k);

#endif
