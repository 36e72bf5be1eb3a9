// SPDX-License-Identifier: GPL-2.0
/*
 * The error list (struct sh_errors) every policy step reports into: the
 * parser and loader, the compiler and the enforcer.
 */
#define _GNU_SOURCE
#include "policy_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Returns false if the message could not be stored (out of memory). */
static bool errors_addv(struct sh_errors *e, const char *fmt, va_list ap)
{
	char *msg, **msgs;

	if (!e)
		return true;
	if (vasprintf(&msg, fmt, ap) < 0)
		return false;
	msgs = realloc(e->msgs, (e->n + 1) * sizeof(*msgs));
	if (!msgs) {
		free(msg);
		return false;
	}
	msgs[e->n++] = msg;
	e->msgs = msgs;
	return true;
}

bool sh_errors_addf(struct sh_errors *e, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = errors_addv(e, fmt, ap);
	va_end(ap);
	return ok;
}

void sh_errors_add(struct sh_errors *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errors_addv(e, fmt, ap);
	va_end(ap);
}

void sh_errors_free(struct sh_errors *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->msgs[i]);
	free(e->msgs);
	e->msgs = NULL;
	e->n = 0;
}
