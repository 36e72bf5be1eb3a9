/*
 * sharness policy files: parsing, validation and loading.
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
 *
 * Everything is strict and fails closed: any problem rejects the whole file.
 */
#define _GNU_SOURCE
#include "policy.h"
#include "sharness.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Size of a buffer holding quote()d text; a quoted line fits with room. */
#define QBUF 1024

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

static bool errors_add(struct sh_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool errors_add(struct sh_errors *e, const char *fmt, ...)
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

const char *sh_rule_kind_name(enum sh_rule_kind k)
{
	switch (k) {
	case SH_EXEC_ALLOW: return "exec allow";
	case SH_EXEC_DENY: return "exec deny";
	case SH_FILE_WRITE: return "file write";
	case SH_FILE_DENY: return "file deny";
	case SH_CONNECT_ALLOW: return "connect allow";
	case SH_CONNECT_DENY: return "connect deny";
	case SH_EXEC_LIB: return "exec lib";
	case SH_FILE_DEVICE: return "file device";
	}
	return "unknown";
}

bool sh_policy_has_kind(const struct sh_policy *p, enum sh_rule_kind k)
{
	if (!p)
		return false;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].kind == k)
			return true;
	return false;
}

void sh_policy_free(struct sh_policy *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->file);
	for (size_t i = 0; i < p->ncgroups; i++)
		free(p->cgroups[i]);
	free(p->cgroups);
	free(p->cgroup_lines);
	for (size_t i = 0; i < p->nrules; i++)
		free(p->rules[i].path);
	free(p->rules);
	memset(p, 0, sizeof(*p));
}

void sh_policy_set_free(struct sh_policy_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		sh_policy_free(&s->pols[i]);
	free(s->pols);
	s->pols = NULL;
	s->n = 0;
}

const struct sh_policy *sh_policy_find(const struct sh_policy_set *set, const char *name)
{
	if (!set || !name)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		if (set->pols[i].name && strcmp(set->pols[i].name, name) == 0)
			return &set->pols[i];
	return NULL;
}

/*
 * Renders untrusted text (file contents, file names) for a message:
 * printable ASCII as is, a backslash doubled, any other byte as \xNN, so
 * messages never carry terminal control sequences.  Cut with "..." if needed.
 */
static const char *quote_n(char *buf, size_t size, const char *s, size_t n)
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

static const char *quote(char *buf, size_t size, const char *s)
{
	return quote_n(buf, size, s, strlen(s));
}

/* ------------------------------------------------------------------------ */
/* Parsing one file                                                          */

enum section {
	SEC_NONE,     /* before any header */
	SEC_BAD,      /* unknown or malformed header: its keys are skipped */
	SEC_POLICY,
	SEC_EXEC,
	SEC_FILE,
	SEC_CONNECT,
	SEC_SIGNAL,
	SEC_LIMITS,
};

static const char *const section_names[] = {
	[SEC_POLICY] = "policy", [SEC_EXEC] = "exec",     [SEC_FILE] = "file",
	[SEC_CONNECT] = "connect", [SEC_SIGNAL] = "signal", [SEC_LIMITS] = "limits",
};

/* Longest line inih can hold is INI_MAX_LINE - 1; keys/values are shorter. */
#define LINE_BUF 512

struct pctx {
	FILE *fp;
	const char *fname;        /* quote()d file name for messages */
	struct sh_errors *errs;
	struct sh_policy *p;
	size_t rules_cap, cgroups_cap;

	int line;                 /* line currently being processed */
	int nerr;                 /* problems found, recorded or not */
	int sys_err;              /* first -errno of a system failure */
	bool stop;                /* reader returns EOF from now on */

	enum section sec;
	int policy_line;          /* first [policy] header, for "missing name" */

	/* per-line state set by the reader, consumed by the handler */
	bool key_line;            /* line must reach the handler */
	bool handled;             /* handler was called for it */
	bool cont;                /* line continues the value of prev_key */
	/* inih's notion of the previous key, for continuation lines */
	bool have_prev;
	char prev_key[LINE_BUF];

	/* first line of each single-valued key, 0 = not seen */
	int mode_line, abstract_line, scope_line, pids_line;
	bool too_many_rules;
	bool name_seen;           /* a name key was given, valid or not */
};

static void perr(struct pctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void perr(struct pctx *c, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;
	bool ok;

	c->nerr++;
	if (c->nerr > SH_MAX_ERRORS_PER_FILE) {
		if (!c->stop &&
		    !errors_add(c->errs, "%s:%d: too many errors, giving up on this file", c->fname, line))
			c->sys_err = c->sys_err ? c->sys_err : -ENOMEM;
		c->stop = true;
		return;
	}
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	ok = r >= 0 && errors_add(c->errs, "%s:%d: %s", c->fname, line, msg);
	if (r >= 0)
		free(msg);
	/* A message that cannot be kept turns the result into -ENOMEM, so a
	 * caller never mistakes an incomplete error list for the full one. */
	if (!ok && !c->sys_err)
		c->sys_err = -ENOMEM;
}

static void sys_fail(struct pctx *c, int err, const char *what)
{
	if (!c->sys_err)
		c->sys_err = -err;
	if (!c->stop)
		errors_add(c->errs, "%s:%d: %s: %s", c->fname, c->line, what, strerror(err));
	c->stop = true;
}

static void oom(struct pctx *c)
{
	sys_fail(c, ENOMEM, "cannot continue");
}

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
		perr(c, c->line, "unterminated section header (missing ']')");
		c->sec = SEC_BAD;
		return;
	}
	c->have_prev = false;   /* inih forgets the previous key here too */
	n = (size_t)(end - (s + 1));
	for (rest = end + 1; isspace((unsigned char)*rest); rest++)
		;
	if (*rest && *rest != '#' && *rest != ';')
		perr(c, c->line, "unexpected text after section header");

	for (size_t i = 0; i < sizeof(section_names) / sizeof(section_names[0]); i++) {
		if (section_names[i] && strlen(section_names[i]) == n &&
		    memcmp(section_names[i], s + 1, n) == 0) {
			c->sec = (enum section)i;
			if (c->sec == SEC_POLICY && !c->policy_line)
				c->policy_line = c->line;
			return;
		}
	}
	perr(c, c->line, "unknown section [%s]", quote_n(q, sizeof(q), s + 1, n));
	c->sec = SEC_BAD;
}

/* A key line inih rejected never reaches the handler: report it. */
static void finish_line(struct pctx *c)
{
	if (c->key_line && !c->handled && !c->stop)
		perr(c, c->line, "syntax error: expected 'key = value'");
	c->key_line = false;
	c->handled = false;
	c->cont = false;
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
	size_t max, len = 0;
	bool any = false, too_long = false, nul = false, cr = false;
	const char *s;
	int ch;

	finish_line(c);
	if (c->stop || num < 2)
		return NULL;
	max = (size_t)num - 1;

#define PUT(x)                                   \
	do {                                     \
		if ((x) == '\0')                 \
			nul = true;              \
		if (len < max)                   \
			buf[len++] = (char)(x);  \
		else                             \
			too_long = true;         \
	} while (0)

	for (;;) {
		ch = getc(c->fp);
		if (ch == EOF || ch == '\n')
			break;
		any = true;
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
	if (ch == EOF && ferror(c->fp)) {
		int err = errno ? errno : EIO;

		c->line++;
		sys_fail(c, err, "cannot read");
		return NULL;
	}
	if (ch == '\n')
		any = true;
	if (!any)
		return NULL;
	c->line++;
	buf[len] = '\0';

	if (too_long || nul) {
		if (too_long)
			perr(c, c->line, "line too long (max %zu bytes)", max);
		else
			perr(c, c->line, "NUL byte in line");
		/* An unreadable section header: skip the keys that follow it. */
		for (s = buf; isspace((unsigned char)*s); s++)
			;
		if (*s == '[' && !(c->have_prev && s > buf))
			c->sec = SEC_BAD;
		buf[0] = '\0';
		return buf;
	}

	/* UTF-8 byte order mark: accepted (as inih does) and removed here. */
	if (c->line == 1 && len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		memmove(buf, buf + 3, len - 2);

	/* Classify the line the way inih will (same order of tests). */
	for (s = buf; isspace((unsigned char)*s); s++)
		;
	if (*s == '\0' || *s == ';' || *s == '#')
		return buf;
	if (c->have_prev && s > buf) {
		c->key_line = true;
		c->cont = true;
		return buf;
	}
	if (*s == '[') {
		section_header(c, s);
		return buf;
	}
	c->key_line = true;
	return buf;
}

/* Returns NULL if the absolute path p is canonical, else what is wrong. */
static const char *noncanonical(const char *p)
{
	const char *s = p + 1;

	while (*s) {
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		bool last = *e == '\0';

		if (n == 0)
			return "contains '//'";
		if (n == 1 && s[0] == '.')
			return last ? "ends in '/.'" : "contains '/./'";
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return last ? "ends in '/..'" : "contains '/../'";
		if (last)
			break;
		s = e + 1;
	}
	return NULL;
}

static bool check_abs_path(struct pctx *c, const char *v)
{
	char q[QBUF];
	const char *why;

	if (v[0] != '/') {
		perr(c, c->line, "relative path '%s' (must start with '/')", quote(q, sizeof(q), v));
		return false;
	}
	why = noncanonical(v);
	if (why) {
		perr(c, c->line, "non-canonical path '%s' (%s)", quote(q, sizeof(q), v), why);
		return false;
	}
	return true;
}

/* Records the first line of a single-valued key; false if seen before. */
static bool once(struct pctx *c, int *first, const char *key)
{
	if (*first) {
		perr(c, c->line, "duplicate key '%s' in [%s] (first at line %d)", key,
		     section_names[c->sec], *first);
		return false;
	}
	*first = c->line;
	return true;
}

static bool valid_name(const char *v)
{
	size_t n = strlen(v);

	if (n < 1 || n > SH_POLICY_NAME_MAX)
		return false;
	/* "." and ".." match the character set but are too easily taken for
	 * path components wherever a policy name is used. */
	if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (!(ch >= 'A' && ch <= 'Z') && !(ch >= 'a' && ch <= 'z') &&
		    !(ch >= '0' && ch <= '9') && ch != '_' && ch != '.' && ch != '-')
			return false;
	}
	return true;
}

static void set_name(struct pctx *c, const char *v)
{
	char q[QBUF];

	if (!c->p->name_line) {
		c->p->name_line = c->line;
	} else {
		perr(c, c->line, "duplicate key 'name' in [policy] (first at line %d)",
		     c->p->name_line);
		return;
	}
	if (!valid_name(v)) {
		perr(c, c->line,
		     "bad policy name '%s' (want 1-%d characters of A-Z a-z 0-9 _ . -, not '.' or '..')",
		     quote(q, sizeof(q), v), SH_POLICY_NAME_MAX);
		return;
	}
	c->p->name = strdup(v);
	if (!c->p->name)
		oom(c);
}

static void add_cgroup(struct pctx *c, const char *v)
{
	struct sh_policy *p = c->p;
	char q[QBUF];

	if (!check_abs_path(c, v))
		return;
	if (strlen(v) > 1 && v[strlen(v) - 1] == '/') {
		perr(c, c->line, "cgroup path '%s' must not end in '/'", quote(q, sizeof(q), v));
		return;
	}
	if (strcmp(v, "/") == 0) {
		perr(c, c->line, "cgroup path '/' is the root of the hierarchy");
		return;
	}
	if (strlen(v) >= PATH_MAX) {
		perr(c, c->line, "cgroup path too long");
		return;
	}
	for (size_t i = 0; i < p->ncgroups; i++)
		if (strcmp(p->cgroups[i], v) == 0)
			return;   /* same cgroup twice: harmless, keep the first */
	if (p->ncgroups == c->cgroups_cap) {
		size_t cap = c->cgroups_cap ? 2 * c->cgroups_cap : 4;
		char **cg = realloc(p->cgroups, cap * sizeof(*cg));
		int *ln;

		if (!cg) {
			oom(c);
			return;
		}
		p->cgroups = cg;
		ln = realloc(p->cgroup_lines, cap * sizeof(*ln));
		if (!ln) {
			oom(c);
			return;
		}
		p->cgroup_lines = ln;
		c->cgroups_cap = cap;
	}
	p->cgroups[p->ncgroups] = strdup(v);
	if (!p->cgroups[p->ncgroups]) {
		oom(c);
		return;
	}
	p->cgroup_lines[p->ncgroups++] = c->line;
}

/* Rules of the same group are in one section and may conflict. */
static int kind_group(enum sh_rule_kind k)
{
	switch (k) {
	case SH_EXEC_ALLOW:
	case SH_EXEC_DENY:
	case SH_EXEC_LIB:
		return 0;
	case SH_FILE_WRITE:
	case SH_FILE_DENY:
		return 1;
	case SH_CONNECT_ALLOW:
	case SH_CONNECT_DENY:
		return 2;
	case SH_FILE_DEVICE:
		return 3;   /* a trie of its own: never in conflict with write or deny */
	}
	return -1;
}

static void add_rule(struct pctx *c, enum sh_rule_kind kind, const char *v)
{
	struct sh_policy *p = c->p;
	size_t len = strlen(v);
	char q[QBUF];
	struct sh_rule *r;

	if (!check_abs_path(c, v))
		return;
	if (len > SH_RULE_PATH_MAX) {
		perr(c, c->line, "path too long (%zu bytes, max %d): '%s'", len, SH_RULE_PATH_MAX,
		     quote(q, sizeof(q), v));
		return;
	}
	for (size_t i = 0; i < p->nrules; i++) {
		r = &p->rules[i];
		if (kind_group(r->kind) != kind_group(kind) || strcmp(r->path, v) != 0)
			continue;
		if (r->kind == kind)
			return;   /* exact duplicate: keep the first */
		perr(c, c->line, "conflicting rules for '%s': %s here, %s at line %d",
		     quote(q, sizeof(q), v), sh_rule_kind_name(kind), sh_rule_kind_name(r->kind),
		     r->line);
		return;
	}
	if (p->nrules >= SH_MAX_RULES_PER_POLICY) {
		if (!c->too_many_rules)
			perr(c, c->line, "too many rules (max %d)", SH_MAX_RULES_PER_POLICY);
		c->too_many_rules = true;
		return;
	}
	if (p->nrules == c->rules_cap) {
		size_t cap = c->rules_cap ? 2 * c->rules_cap : 16;

		r = realloc(p->rules, cap * sizeof(*r));
		if (!r) {
			oom(c);
			return;
		}
		p->rules = r;
		c->rules_cap = cap;
	}
	r = &p->rules[p->nrules];
	r->path = strdup(v);
	if (!r->path) {
		oom(c);
		return;
	}
	r->kind = kind;
	r->dir = v[len - 1] == '/';
	r->line = c->line;
	p->nrules++;
}

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};
_Static_assert(sizeof(cap_names) / sizeof(cap_names[0]) == SH_CAP_COUNT,
	       "one name per known capability");

const char *sh_cap_name(unsigned cap)
{
	return cap < SH_CAP_COUNT ? cap_names[cap] : NULL;
}

int sh_cap_parse(const char *name)
{
	if (strncasecmp(name, "cap_", 4) == 0)
		name += 4;
	for (unsigned i = 0; i < SH_CAP_COUNT; i++)
		if (strcasecmp(name, cap_names[i] + 4) == 0)
			return (int)i;
	return -1;
}

/* "sys_nice, net_admin": each name allowed back to the tree. */
static void add_caps(struct pctx *c, const char *v)
{
	char buf[LINE_BUF], q[QBUF], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		int cap = sh_cap_parse(t);

		if (cap < 0)
			perr(c, c->line, "unknown capability '%s' (want a name such as sys_nice "
			     "or CAP_NET_ADMIN)", quote(q, sizeof(q), t));
		else if (SH_CAPS_TREE_DEFAULT & SH_CAP_BIT(cap))
			perr(c, c->line, "capability '%s' is allowed to every tree already",
			     cap_names[cap]);
		else
			c->p->caps_allow |= 1ull << cap;
	}
}

static bool parse_pids_max(const char *v, unsigned *out)
{
	unsigned long n = 0;

	if (!*v)
		return false;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return false;
		n = n * 10 + (unsigned long)(*v - '0');
		if (n > SH_PIDS_MAX_LIMIT)
			return false;
	}
	if (n < 1)
		return false;
	*out = (unsigned)n;
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
	enum section sec = c->sec;

	(void)section;   /* tracked by the reader, which sees every header */
	c->handled = true;
	if (c->stop)
		return 1;
	if (!c->cont) {
		if (strlen(name) >= sizeof(key)) {
			perr(c, c->line, "key too long");
			return 1;
		}
		strcpy(c->prev_key, name);
		c->have_prev = name[0] != '\0';
	}
	strcpy(key, c->cont ? c->prev_key : name);
	if (strlen(value) >= sizeof(val)) {
		perr(c, c->line, "value too long");
		return 1;
	}
	strcpy(val, value);

	/* Inline comment: '#' or ';' at the start or after whitespace.
	 * inih already removed " ;..." and the surrounding whitespace. */
	for (v = val; *v; v++) {
		if ((*v == '#' || *v == ';') && (v == val || isspace((unsigned char)v[-1]))) {
			*v = '\0';
			break;
		}
	}
	v = rtrim(val);

	if (key[0] == '\0') {
		perr(c, c->line, "syntax error: missing key name before '='");
		return 1;
	}
	if (sec == SEC_BAD)
		return 1;   /* the header was reported already */
	if (sec == SEC_NONE) {
		perr(c, c->line, "key '%s' outside any section", quote(q, sizeof(q), key));
		return 1;
	}

	enum { K_UNKNOWN, K_NAME, K_MODE, K_CGROUP, K_RULE, K_ABSTRACT, K_SCOPE, K_PIDS,
	       K_CAPS } k = K_UNKNOWN;
	enum sh_rule_kind kind = SH_EXEC_ALLOW;

	switch (sec) {
	case SEC_POLICY:
		k = !strcmp(key, "name") ? K_NAME : !strcmp(key, "mode") ? K_MODE
		  : !strcmp(key, "cgroup") ? K_CGROUP : K_UNKNOWN;
		break;
	case SEC_EXEC:
		if (!strcmp(key, "allow"))
			k = K_RULE, kind = SH_EXEC_ALLOW;
		else if (!strcmp(key, "deny"))
			k = K_RULE, kind = SH_EXEC_DENY;
		else if (!strcmp(key, "lib"))
			k = K_RULE, kind = SH_EXEC_LIB;
		break;
	case SEC_FILE:
		if (!strcmp(key, "write"))
			k = K_RULE, kind = SH_FILE_WRITE;
		else if (!strcmp(key, "deny"))
			k = K_RULE, kind = SH_FILE_DENY;
		else if (!strcmp(key, "device"))
			k = K_RULE, kind = SH_FILE_DEVICE;
		break;
	case SEC_CONNECT:
		if (!strcmp(key, "allow"))
			k = K_RULE, kind = SH_CONNECT_ALLOW;
		else if (!strcmp(key, "deny"))
			k = K_RULE, kind = SH_CONNECT_DENY;
		else if (!strcmp(key, "abstract"))
			k = K_ABSTRACT;
		break;
	case SEC_SIGNAL:
		if (!strcmp(key, "scope"))
			k = K_SCOPE;
		break;
	case SEC_LIMITS:
		if (!strcmp(key, "pids-max"))
			k = K_PIDS;
		else if (!strcmp(key, "capability"))
			k = K_CAPS;
		break;
	default:
		break;
	}
	if (k == K_UNKNOWN) {
		perr(c, c->line, "unknown key '%s' in [%s]", quote(q, sizeof(q), key),
		     section_names[sec]);
		return 1;
	}
	if (c->cont && (v[0] == '[' || strchr(v, '='))) {
		perr(c, c->line, "indented line is read as a continuation of '%s'; "
		     "remove the leading whitespace", key);
		return 1;
	}
	if (k == K_NAME)
		c->name_seen = true;
	if (!*v) {
		perr(c, c->line, "empty value for '%s'", key);
		return 1;
	}
	for (const char *s = v; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			perr(c, c->line, "control character in value for '%s'", key);
			return 1;
		}
	}

	switch (k) {
	case K_NAME:
		set_name(c, v);
		break;
	case K_MODE:
		if (!once(c, &c->mode_line, key))
			break;
		if (!strcmp(v, "enforce"))
			c->p->mode = SH_MODE_ENFORCE;
		else if (!strcmp(v, "audit"))
			c->p->mode = SH_MODE_AUDIT;
		else
			perr(c, c->line, "bad mode '%s' (want enforce or audit)", quote(q, sizeof(q), v));
		break;
	case K_CGROUP:
		add_cgroup(c, v);
		break;
	case K_RULE:
		add_rule(c, kind, v);
		break;
	case K_ABSTRACT:
		if (!once(c, &c->abstract_line, key))
			break;
		if (!strcmp(v, "allow"))
			c->p->abstract_deny = false;
		else if (!strcmp(v, "deny"))
			c->p->abstract_deny = true;
		else
			perr(c, c->line, "bad abstract value '%s' (want allow or deny)",
			     quote(q, sizeof(q), v));
		break;
	case K_SCOPE:
		if (!once(c, &c->scope_line, key))
			break;
		if (!strcmp(v, "tree"))
			c->p->signal_scope = SH_SCOPE_TREE;
		else if (!strcmp(v, "any"))
			c->p->signal_scope = SH_SCOPE_ANY;
		else
			perr(c, c->line, "bad scope '%s' (want tree or any)", quote(q, sizeof(q), v));
		break;
	case K_PIDS:
		if (!once(c, &c->pids_line, key))
			break;
		if (!parse_pids_max(v, &c->p->pids_max))
			perr(c, c->line, "bad pids-max '%s' (want an integer 1..%u)",
			     quote(q, sizeof(q), v), SH_PIDS_MAX_LIMIT);
		break;
	case K_CAPS:
		add_caps(c, v);
		break;
	case K_UNKNOWN:
		break;
	}
	return 1;
}

int sh_policy_parse_file(const char *path, struct sh_policy *out, struct sh_errors *errs)
{
	struct sh_policy p = { 0 };
	struct pctx c = { 0 };
	char qname[QBUF];
	struct stat st;
	int fd, r, err;
	FILE *fp;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!path) {
		sh_errors_add(errs, "(null): no policy file given");
		return -EINVAL;
	}
	quote(qname, sizeof(qname), path);

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = errno ? errno : EIO;
		sh_errors_add(errs, "%s: cannot open: %s", qname, strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno ? errno : EIO;
		sh_errors_add(errs, "%s: cannot open: %s", qname, strerror(err));
		close(fd);
		return -err;
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
	fp = fdopen(fd, "r");
	if (!fp) {
		err = errno ? errno : ENOMEM;
		sh_errors_add(errs, "%s: cannot open: %s", qname, strerror(err));
		close(fd);
		return -err;
	}

	c.fp = fp;
	c.fname = qname;
	c.errs = errs;
	c.p = &p;
	c.sec = SEC_NONE;

	p.file = strdup(path);
	if (!p.file)
		oom(&c);

	r = c.stop ? 0 : ini_parse_stream(policy_reader, &c, policy_handler, &c);
	finish_line(&c);
	if (r < 0 && !c.stop)
		oom(&c);   /* inih only fails this way on allocation failure */
	else if (r > 0 && c.nerr == 0 && !c.stop)
		perr(&c, r, "syntax error");   /* should not happen: reader sees all */
	fclose(fp);

	if (!c.stop && !c.name_seen) {
		if (c.policy_line)
			perr(&c, c.policy_line, "missing 'name' in [policy]");
		else
			perr(&c, 1, "missing [policy] section with 'name'");
	}

	if (c.sys_err || c.nerr) {
		sh_policy_free(&p);
		return c.sys_err ? c.sys_err : -EINVAL;
	}
	*out = p;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Loading sets of files                                                     */

/* Combines results: a system failure outranks a bad policy. */
static int merge_rc(int rc, int r)
{
	if (rc == 0 || (rc == -EINVAL && r != 0))
		return r;
	return rc;
}

static int cross_check(const struct sh_policy_set *s, struct sh_errors *errs)
{
	char qf[QBUF], qo[QBUF], qv[QBUF], qn[QBUF];
	bool ok = true;
	int rc = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct sh_policy *p = &s->pols[i];

		for (size_t j = 0; j < i; j++) {
			const struct sh_policy *o = &s->pols[j];

			if (strcmp(p->name, o->name) == 0) {
				ok &= errors_add(errs, "%s:%d: duplicate policy name '%s' (first in %s:%d)",
						 quote(qf, sizeof(qf), p->file), p->name_line, p->name,
						 quote(qo, sizeof(qo), o->file), o->name_line);
				rc = -EINVAL;
				break;
			}
		}
		for (size_t k = 0; k < p->ncgroups; k++) {
			bool found = false;

			for (size_t j = 0; j < i && !found; j++) {
				const struct sh_policy *o = &s->pols[j];

				for (size_t m = 0; m < o->ncgroups && !found; m++) {
					if (strcmp(p->cgroups[k], o->cgroups[m]) != 0)
						continue;
					ok &= errors_add(errs,
							 "%s:%d: cgroup '%s' already tagged by policy '%s' (%s:%d)",
							 quote(qf, sizeof(qf), p->file), p->cgroup_lines[k],
							 quote(qv, sizeof(qv), p->cgroups[k]),
							 quote(qn, sizeof(qn), o->name),
							 quote(qo, sizeof(qo), o->file), o->cgroup_lines[m]);
					rc = -EINVAL;
					found = true;
				}
			}
		}
	}
	if (s->n > SH_MAX_POLICIES) {
		const struct sh_policy *p = &s->pols[SH_MAX_POLICIES];

		ok &= errors_add(errs, "%s:%d: too many policies (%zu, max %d)",
				 quote(qf, sizeof(qf), p->file), p->name_line, s->n, SH_MAX_POLICIES);
		rc = -EINVAL;
	}
	return ok ? rc : -ENOMEM;
}

int sh_policy_load_files(const char *const *paths, size_t n, struct sh_policy_set *out,
			 struct sh_errors *errs)
{
	struct sh_policy_set set = { 0 };
	int rc = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (n && !paths)
		return -EINVAL;
	if (n) {
		set.pols = calloc(n, sizeof(*set.pols));
		if (!set.pols) {
			sh_errors_add(errs, "cannot load policies: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int r = sh_policy_parse_file(paths[i], &set.pols[set.n], errs);

		if (r == 0)
			set.n++;
		rc = merge_rc(rc, r);
		if (r == -ENOMEM)
			break;
	}
	if (rc != -ENOMEM)
		rc = merge_rc(rc, cross_check(&set, errs));
	if (rc) {
		sh_policy_set_free(&set);
		return rc;
	}
	if (set.n == 0) {
		free(set.pols);
		set.pols = NULL;
	}
	*out = set;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sh_policy_load_dir(const char *dir, struct sh_policy_set *out, struct sh_errors *errs)
{
	char qd[QBUF], **paths = NULL;
	size_t n = 0, cap = 0, dlen;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!dir) {
		sh_errors_add(errs, "(null): no policy directory given");
		return -EINVAL;
	}
	quote(qd, sizeof(qd), dir);
	d = opendir(dir);
	if (!d) {
		int err = errno ? errno : EIO;

		sh_errors_add(errs, "%s: cannot open directory: %s", qd, strerror(err));
		return -err;
	}
	dlen = strlen(dir);
	for (;;) {
		const char *nm;
		size_t len;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				int err = errno ? errno : EIO;

				sh_errors_add(errs, "%s: cannot read directory: %s", qd, strerror(err));
				rc = -err;
			}
			break;
		}
		nm = de->d_name;
		len = strlen(nm);
		/* dot files (editor and package manager leftovers) are skipped */
		if (nm[0] == '.' || len <= 7 || strcmp(nm + len - 7, ".policy") != 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **np = realloc(paths, ncap * sizeof(*np));

			if (!np) {
				rc = -ENOMEM;
				break;
			}
			paths = np;
			cap = ncap;
		}
		if (asprintf(&paths[n], "%s%s%s", dir, dlen && dir[dlen - 1] == '/' ? "" : "/",
			     nm) < 0) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc == -ENOMEM)
		sh_errors_add(errs, "%s: cannot load policies: %s", qd, strerror(ENOMEM));
	if (!rc) {
		/* all share the "dir/" prefix, so this orders by file name */
		if (n)
			qsort(paths, n, sizeof(*paths), cmp_str);
		rc = sh_policy_load_files((const char *const *)paths, n, out, errs);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
