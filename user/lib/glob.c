// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup patterns' globs: the daemon's matcher (which must agree with the
 * programs', bpf/cgroup.c), policy check's test of a pattern's classes,
 * and the classes compiled for the programs (map cg_classes).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "glob.h"

int sh_glob_class(const char *g, unsigned char c, const char **end)
{
	const char *p = g + 1;
	bool neg = false, hit = false;

	if (*p == '!') {
		neg = true;
		p++;
	}
	if (*p == ']')
		return SH_GLOB_EMPTY;
	while (*p && *p != ']') {
		unsigned char lo = (unsigned char)*p, hi = lo;

		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = (unsigned char)p[2];
			if (hi < lo)
				return SH_GLOB_DOWN;
			p += 3;
		} else {
			p++;
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	if (*p != ']')
		return SH_GLOB_OPEN;
	*end = p + 1;
	return hit != neg;
}

const char *sh_glob_check(const char *glob)
{
	int classes = 0;

	for (const char *g = glob; *g; g++) {
		const char *end = g + 1, *open = g;

		if (*g != '[')
			continue;
		if (++classes > SH_PATTERN_CLASSES)
			return "more than 4 '[...]' classes";
		switch (sh_glob_class(open, 0, &end)) {
		case SH_GLOB_OPEN:
			return "a '[' class is not closed by ']'";
		case SH_GLOB_EMPTY:
			return "a '[...]' class names no byte";
		case SH_GLOB_DOWN:
			return "a range in a '[...]' class runs from high to low";
		}
		g = end - 1;
	}
	return NULL;
}

bool sh_glob_match(const char *glob, const char *name)
{
	const char *star = NULL, *back = NULL, *end;

	while (*name) {
		int in = 0;

		if (*glob == '[')
			in = sh_glob_class(glob, (unsigned char)*name, &end);
		if (*glob == '*') {
			star = glob++;
			back = name;
		} else if (in > 0) {
			glob = end;
			name++;
		} else if (*glob && *glob != '[' && (*glob == '?' || *glob == *name)) {
			glob++;
			name++;
		} else if (star) {
			glob = star + 1;
			name = ++back;
		} else {
			return false;
		}
	}
	while (*glob == '*')
		glob++;
	return !*glob;
}

int sh_glob_compile(const char *glob, struct sh_pattern_classes *k)
{
	int j = 0;

	memset(k, 0, sizeof(*k));
	memset(k->at, 0xff, sizeof(k->at));
	for (const char *g = glob; *g; g++) {
		const char *end = NULL;

		if (*g != '[')
			continue;
		if (j == SH_PATTERN_CLASSES)
			return -E2BIG;
		for (unsigned c = 0; c < 256; c++) {
			int in = sh_glob_class(g, (unsigned char)c, &end);

			if (in < 0)
				return -EINVAL;
			if (in)
				k->bits[j][c >> 3] |= 1u << (c & 7);
		}
		k->at[j] = (__u8)(g - glob);
		k->end[j] = (__u32)(end - glob);
		j++;
		g = end - 1;
	}
	return 0;
}
