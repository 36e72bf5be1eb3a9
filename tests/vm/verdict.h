/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one-line verdict the test helpers (escape, wall) print for each
 * attempt: "ok" (returns 0), or "err NAME" with the errno's symbol and a
 * second line saying which call failed (returns 1). The suite asserts on
 * these lines.
 */
#ifndef SHARNESS_TEST_VERDICT_H
#define SHARNESS_TEST_VERDICT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The errno's symbol (glibc names every errno value it knows). */
static inline const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EOTHER";
}

static inline int report(long r, const char *what)
{
	if (r < 0) {
		int e = errno;

		printf("err %s\n(%s: errno %d: %s)\n", errname(e), what, e, strerror(e));
		return 1;
	}
	printf("ok\n");
	return 0;
}

#endif
