// SPDX-License-Identifier: GPL-2.0
/*
 * sharness policy files: reading one file.
 *
 * The INI syntax is tokenised by libinih (ini_parse_stream).  The Debian
 * build of libinih has a fixed line buffer (INI_MAX_LINE = 200), passes no
 * line number to the handler, reports only the first syntax error and never
 * tells the handler about section headers.  So this file feeds inih through
 * its own line reader, which
 *   - counts lines, so every message carries FILE:LINE,
 *   - reads whole lines itself and rejects over-long lines and NUL bytes
 *     (inih would silently split or truncate them),
 *   - tracks section headers (including empty or unknown sections),
 *   - notices key lines that inih rejected without calling the handler,
 * and the handler records every problem instead of stopping at the first.
 * What each key means, and the checks of its value, are in policy_keys.c.
 *
 * Everything is strict and fails closed: any problem rejects the whole file.
 */
#define _GNU_SOURCE
#include "policy_parse.h"
#include "sharness.h"

#include <ctype.h>
#include <errno.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *rtrim(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Mirrors inih's find_chars_or_comment(s, "]"): stops at ']' or at a ';'
 * that follows whitespace (an inline comment as inih sees it).
 */
static const char *inih_find_close(const char *s)
{
	bool was_space = false;

	while (*s && *s != ']' && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

static void section_header(struct pctx *c, const char *s)
{
	const char *end = inih_find_close(s + 1);
	const char *rest;
	size_t n;
	char q[QBUF];

	if (*end != ']') {
		sh_perr(c, c->line, "unterminated section header (missing ']')");
		c->sec = SEC_BAD;
		return;
	}
	c->have_prev = false;   /* inih forgets the previous key here too */
	n = (size_t)(end - (s + 1));
	for (rest = end + 1; isspace((unsigned char)*rest); rest++)
		;
	if (*rest && *rest != '#' && *rest != ';')
		sh_perr(c, c->line, "unexpected text after section header");

	c->sec_name = sh_policy_section(s + 1, n);
	if (c->sec_name) {
		c->sec = SEC_OK;
		if (strcmp(c->sec_name, "policy") == 0 && !c->policy_line)
			c->policy_line = c->line;
		return;
	}
	sh_perr(c, c->line, "unknown section [%s]", sh_policy_quote_n(q, sizeof(q), s + 1, n));
	c->sec = SEC_BAD;
}

/* A key line inih rejected never reaches the handler: report it. */
static void finish_line(struct pctx *c)
{
	if (c->key_line && !c->handled && !c->stop)
		sh_perr(c, c->line, "syntax error: expected 'key = value'");
	c->key_line = false;
	c->handled = false;
	c->cont = false;
}


/* One physical line as read, before inih sees it. */
struct raw_line {
	size_t len;
	int ch;          /* what ended it: '\n' or EOF */
	bool any;        /* a line was there (possibly empty) */
	bool too_long;   /* did not fit in buf */
	bool nul;        /* holds a NUL byte */
};

/* Reads up to the next "\n" (dropped, with a '\r' before it) into buf,
 * keeping at most max bytes; the rest of an over-long line is consumed. */
static void read_raw(FILE *fp, char *buf, size_t max, struct raw_line *l)
{
	bool cr = false;
	int ch;

	memset(l, 0, sizeof(*l));

#define PUT(x)                                   \
	do {                                     \
		if ((x) == '\0')                 \
			l->nul = true;           \
		if (l->len < max)                \
			buf[l->len++] = (char)(x); \
		else                             \
			l->too_long = true;      \
	} while (0)

	for (;;) {
		ch = getc(fp);
		if (ch == EOF || ch == '\n')
			break;
		l->any = true;
		if (cr) {
			PUT('\r');
			cr = false;
		}
		if (ch == '\r') {
			cr = true;   /* dropped if "\r\n" ends the line */
			continue;
		}
		PUT(ch);
	}
	if (cr && ch == EOF)
		PUT('\r');
#undef PUT
	l->ch = ch;
	if (ch == '\n')
		l->any = true;
}

/* Notes what inih will make of a line that was read whole (same order of
 * tests as inih). */
static void classify_line(struct pctx *c, char *buf, size_t len)
{
	const char *s;

	/* UTF-8 byte order mark: accepted (as inih does) and removed here. */
	if (c->line == 1 && len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		memmove(buf, buf + 3, len - 2);

	for (s = buf; isspace((unsigned char)*s); s++)
		;
	if (*s == '\0' || *s == ';' || *s == '#')
		return;
	if (c->have_prev && s > buf) {
		c->key_line = true;
		c->cont = true;
		return;
	}
	if (*s == '[') {
		section_header(c, s);
		return;
	}
	c->key_line = true;
}

/*
 * fgets-like reader for ini_parse_stream().  Returns exactly one physical
 * line per call (without its "\n" or "\r\n"), so inih's line count and ours
 * agree.  A line that does not fit, or that holds a NUL byte, is reported,
 * consumed entirely and handed to inih as an empty line.
 */
static char *policy_reader(char *buf, int num, void *stream)
{
	struct pctx *c = stream;
	struct raw_line l;
	const char *s;
	size_t max;

	finish_line(c);
	if (c->stop || num < 2)
		return NULL;
	max = (size_t)num - 1;
	read_raw(c->fp, buf, max, &l);
	if (l.ch == EOF && ferror(c->fp)) {
		int err = errno ? errno : EIO;

		c->line++;
		sh_pctx_fail(c, err, "cannot read");
		return NULL;
	}
	if (!l.any)
		return NULL;
	c->line++;
	buf[l.len] = '\0';

	if (l.too_long || l.nul) {
		if (l.too_long)
			sh_perr(c, c->line, "line too long (max %zu bytes)", max);
		else
			sh_perr(c, c->line, "NUL byte in line");
		/* An unreadable section header: skip the keys that follow it. */
		for (s = buf; isspace((unsigned char)*s); s++)
			;
		if (*s == '[' && !(c->have_prev && s > buf))
			c->sec = SEC_BAD;
		buf[0] = '\0';
		return buf;
	}
	classify_line(c, buf, l.len);
	return buf;
}

/* Takes a handler call's key and value into key and val (LINE_BUF each);
 * false if the line is done with (reported). */
static bool take_line(struct pctx *c, const char *name, const char *value, char *key, char *val)
{
	if (!c->cont) {
		if (strlen(name) >= LINE_BUF) {
			sh_perr(c, c->line, "key too long");
			return false;
		}
		strcpy(c->prev_key, name);
		c->have_prev = name[0] != '\0';
	}
	strcpy(key, c->cont ? c->prev_key : name);
	if (strlen(value) >= LINE_BUF) {
		sh_perr(c, c->line, "value too long");
		return false;
	}
	strcpy(val, value);
	return true;
}

/* Cuts an inline comment ('#' or ';' at the start or after whitespace;
 * inih already removed " ;..." and the surrounding whitespace) and the
 * whitespace before it. */
static char *strip_value(char *val)
{
	for (char *v = val; *v; v++) {
		if ((*v == '#' || *v == ';') && (v == val || isspace((unsigned char)v[-1]))) {
			*v = '\0';
			break;
		}
	}
	return rtrim(val);
}

/* False (reported) if the value is empty or holds a control character. */
static bool value_ok(struct pctx *c, const char *key, const char *v)
{
	if (!*v) {
		sh_perr(c, c->line, "empty value for '%s'", key);
		return false;
	}
	for (const char *s = v; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			sh_perr(c, c->line, "control character in value for '%s'", key);
			return false;
		}
	}
	return true;
}

/*
 * Called by inih for each "key = value" line, and for each continuation line
 * (an indented line after a key: inih passes it with the previous key's
 * name).  A continuation is simply taken as one more value for that key, so
 * "allow = /usr/bin/a" followed by an indented "/usr/bin/b" allows both,
 * while a repeated single-valued key is reported as a duplicate.
 * Always returns 1: problems are recorded here, not in inih's return value.
 */
static int policy_handler(void *user, const char *section, const char *name, const char *value)
{
	struct pctx *c = user;
	char key[LINE_BUF], val[LINE_BUF], q[QBUF], *v;
	struct sh_policy_key k;

	(void)section;   /* tracked by the reader, which sees every header */
	c->handled = true;
	if (c->stop || !take_line(c, name, value, key, val))
		return 1;
	v = strip_value(val);

	if (key[0] == '\0') {
		sh_perr(c, c->line, "syntax error: missing key name before '='");
		return 1;
	}
	if (c->sec == SEC_BAD)
		return 1;   /* the header was reported already */
	if (c->sec == SEC_NONE) {
		sh_perr(c, c->line, "key '%s' outside any section",
			sh_policy_quote(q, sizeof(q), key));
		return 1;
	}
	if (!sh_policy_key_find(c->sec_name, key, &k)) {
		sh_perr(c, c->line, "unknown key '%s' in [%s]", sh_policy_quote(q, sizeof(q), key),
			c->sec_name);
		return 1;
	}
	if (c->cont && (v[0] == '[' || strchr(v, '='))) {
		sh_perr(c, c->line, "indented line is read as a continuation of '%s'; "
			"remove the leading whitespace", key);
		return 1;
	}
	if (k.is_name)
		c->name_seen = true;
	if (!value_ok(c, key, v))
		return 1;
	if (k.rule)
		sh_policy_add_rule(c, k.kind, v);
	else
		k.set(c, key, v);
	return 1;
}

/* Opens a policy file for reading: a regular file only. */
static int open_policy(const char *path, const char *qname, struct sh_errors *errs, FILE **fpp)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return sh_policy_errno(errs, qname, "cannot open", EIO);
	if (fstat(fd, &st) < 0) {
		err = sh_policy_errno(errs, qname, "cannot open", EIO);
		close(fd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		sh_errors_add(errs, "%s: cannot open: %s", qname, strerror(EISDIR));
		close(fd);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		sh_errors_add(errs, "%s: cannot open: not a regular file", qname);
		close(fd);
		return -EINVAL;
	}
	*fpp = fdopen(fd, "r");
	if (!*fpp) {
		err = sh_policy_errno(errs, qname, "cannot open", ENOMEM);
		close(fd);
		return err;
	}
	return 0;
}

int sh_policy_parse_file(const char *path, struct sh_policy *out, struct sh_errors *errs)
{
	struct sh_policy p = { 0 };
	struct pctx c = { 0 };
	char qname[QBUF];
	FILE *fp;
	int r;

	r = sh_policy_start(out, sizeof(*out), path, "file", errs);
	if (r)
		return r;
	sh_policy_quote(qname, sizeof(qname), path);
	r = open_policy(path, qname, errs, &fp);
	if (r)
		return r;

	c.fp = fp;
	c.fname = qname;
	c.errs = errs;
	c.p = &p;
	c.sec = SEC_NONE;

	p.file = strdup(path);
	if (!p.file)
		sh_pctx_oom(&c);

	r = c.stop ? 0 : ini_parse_stream(policy_reader, &c, policy_handler, &c);
	finish_line(&c);
	if (r < 0 && !c.stop)
		sh_pctx_oom(&c);   /* inih only fails this way on allocation failure */
	else if (r > 0 && c.nerr == 0 && !c.stop)
		sh_perr(&c, r, "syntax error");   /* should not happen: reader sees all */
	fclose(fp);

	if (!c.stop)
		sh_policy_net_finish(&c);
	/* A private /tmp is made by `run`: a cgroup tagged at load would be
	 * held to the policy with the host's /tmp, which the rules of such
	 * a policy (write = /tmp/) were not written for. */
	if (!c.stop && p.limits.private_tmp && p.ncgroups)
		sh_perr(&c, c.tmp_line, "private-tmp is given to runs only: a cgroup = line "
			"(line %d) would hold a tree to this policy with the host's /tmp",
			p.cgroup_lines ? p.cgroup_lines[0] : 0);
	/* open_by_handle_at names an inode by number, one the run's /tmp
	 * covers too: the host's. */
	if (!c.stop && p.limits.private_tmp && (p.caps_allow & SH_CAP_BIT(CAP_DAC_READ_SEARCH)))
		sh_perr(&c, c.tmp_line, "private-tmp and capability = dac_read_search do not go "
			"together: open_by_handle_at reaches the host's /tmp under the run's own");
	if (!c.stop && !c.name_seen) {
		if (c.policy_line)
			sh_perr(&c, c.policy_line, "missing 'name' in [policy]");
		else
			sh_perr(&c, 1, "missing [policy] section with 'name'");
	}

	if (c.sys_err || c.nerr) {
		sh_policy_free(&p);
		return c.sys_err ? c.sys_err : -EINVAL;
	}
	*out = p;
	return 0;
}
