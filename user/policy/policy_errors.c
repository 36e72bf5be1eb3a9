// SPDX-License-Identifier: GPL-2.0
/*
 * The error list (struct sh_errors) every policy step reports into: the
 * parser and loader, the compiler and the enforcer; and how messages are
 * made: untrusted text quoted, a file's line, a system failure.
 */
#define _GNU_SOURCE
#include "policy_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int sh_policy_start(void *out, size_t size, const char *name, const char *what,
		    struct sh_errors *errs)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, size);
	if (!name) {
		sh_errors_add(errs, "(null): no policy %s given", what);
		return -EINVAL;
	}
	return 0;
}

/* Records "NAME: WHAT: <strerror(errno)>"; returns -errno (-dflt if 0). */
int sh_policy_errno(struct sh_errors *errs, const char *qname, const char *what, int dflt)
{
	int err = errno ? errno : dflt;

	sh_errors_add(errs, "%s: %s: %s", qname, what, strerror(err));
	return -err;
}

/*
 * Renders untrusted text (file contents, file names) for a message:
 * printable ASCII as is, a backslash doubled, any other byte as \xNN, so
 * messages never carry terminal control sequences.  Cut with "..." if needed.
 */
const char *sh_policy_quote_n(char *buf, size_t size, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		size_t need = ch == '\\' ? 2 : (ch < 0x20 || ch >= 0x7f) ? 4 : 1;

		if (o + need + 4 > size) {
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (need == 1) {
			buf[o++] = (char)ch;
		} else if (need == 2) {
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *sh_policy_quote(char *buf, size_t size, const char *s)
{
	return sh_policy_quote_n(buf, size, s, strlen(s));
}

void sh_perr(struct pctx *c, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;
	bool ok;

	c->nerr++;
	if (c->nerr > SH_MAX_ERRORS_PER_FILE) {
		if (!c->stop &&
		    !sh_errors_addf(c->errs, "%s:%d: too many errors, giving up on this file",
				    c->fname, line))
			c->sys_err = c->sys_err ? c->sys_err : -ENOMEM;
		c->stop = true;
		return;
	}
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	ok = r >= 0 && sh_errors_addf(c->errs, "%s:%d: %s", c->fname, line, msg);
	if (r >= 0)
		free(msg);
	/* A message that cannot be kept turns the result into -ENOMEM, so a
	 * caller never mistakes an incomplete error list for the full one. */
	if (!ok && !c->sys_err)
		c->sys_err = -ENOMEM;
}

void sh_pctx_fail(struct pctx *c, int err, const char *what)
{
	if (!c->sys_err)
		c->sys_err = -err;
	if (!c->stop)
		sh_errors_addf(c->errs, "%s:%d: %s: %s", c->fname, c->line, what, strerror(err));
	c->stop = true;
}

void sh_pctx_oom(struct pctx *c)
{
	sh_pctx_fail(c, ENOMEM, "cannot continue");
}
