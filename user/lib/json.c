// SPDX-License-Identifier: GPL-2.0
/*
 * JSON for the sharness audit log: a lossless writer and a strict reader
 * of flat one-line objects.
 */
#define _GNU_SOURCE
#include "json.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

/* ------------------------------------------------------------------------ */
/* Buffer                                                                     */

void sh_buf_init(struct sh_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->first = true;
}

void sh_buf_free(struct sh_buf *b)
{
	if (!b)
		return;
	free(b->p);
	sh_buf_init(b);
}

void sh_buf_reset(struct sh_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	b->oom = false;
	b->first = true;
}

/* Makes room for extra more bytes plus the terminator. */
static bool grow(struct sh_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return false;
	if (extra > SIZE_MAX - 1 - b->len) {
		b->oom = true;
		return false;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sh_buf_write(struct sh_buf *b, const void *s, size_t n)
{
	if (!grow(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sh_buf_putc(struct sh_buf *b, char c)
{
	sh_buf_write(b, &c, 1);
}

void sh_buf_puts(struct sh_buf *b, const char *s)
{
	sh_buf_write(b, s, strlen(s));
}

void sh_buf_printf(struct sh_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
	} else if (b->p && (size_t)n < b->cap - b->len) {
		b->len += (size_t)n;
	} else if (grow(b, (size_t)n)) {
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap2);
		b->len += (size_t)n;
	} else if (b->p) {
		b->p[b->len] = '\0';   /* undo a partial write */
	}
	va_end(ap2);
}

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                      */

/*
 * Length of the well-formed UTF-8 sequence at s (Unicode Table 3-7), or 0
 * if the byte at s does not start one.  n >= 1.
 */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;   /* continuation byte, or overlong C0/C1 lead */
	if (c < 0xe0)
		return n >= 2 && s[1] >= 0x80 && s[1] <= 0xbf ? 2 : 0;
	if (c < 0xf0) {
		if (c == 0xe0)
			lo = 0xa0;   /* overlong */
		else if (c == 0xed)
			hi = 0x9f;   /* UTF-16 surrogates */
		return n >= 3 && s[1] >= lo && s[1] <= hi && s[2] >= 0x80 && s[2] <= 0xbf ? 3 : 0;
	}
	if (c < 0xf5) {
		if (c == 0xf0)
			lo = 0x90;   /* overlong */
		else if (c == 0xf4)
			hi = 0x8f;   /* > U+10FFFF */
		return n >= 4 && s[1] >= lo && s[1] <= hi && s[2] >= 0x80 && s[2] <= 0xbf &&
		       s[3] >= 0x80 && s[3] <= 0xbf ? 4 : 0;
	}
	return 0;
}

bool sh_utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t l = utf8_seq(s + i, n - i);

		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                     */

static void put_u00(struct sh_buf *b, uint8_t c)
{
	char e[6] = { '\\', 'u', '0', '0', hexdig[c >> 4], hexdig[c & 15] };

	sh_buf_write(b, e, sizeof(e));
}

/* Writes the body of a JSON string; returns false if s was not valid UTF-8
 * (invalid bytes were written as U+FFFD). */
static bool put_escaped(struct sh_buf *b, const uint8_t *s, size_t n)
{
	bool valid = true;
	size_t i = 0;

	while (i < n) {
		uint8_t c = s[i];
		size_t run = i, l;

		/* copy runs of plain printable ASCII in one go */
		while (run < n && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			sh_buf_write(b, s + i, run - i);
			i = run;
			continue;
		}
		if (c < 0x80) {
			if (c == '"')
				sh_buf_write(b, "\\\"", 2);
			else if (c == '\\')
				sh_buf_write(b, "\\\\", 2);
			else if (c == '\n')
				sh_buf_write(b, "\\n", 2);
			else if (c == '\t')
				sh_buf_write(b, "\\t", 2);
			else
				put_u00(b, c);   /* other C0 controls and DEL */
			i++;
			continue;
		}
		l = utf8_seq(s + i, n - i);
		if (!l) {
			sh_buf_write(b, "\xef\xbf\xbd", 3);   /* U+FFFD */
			valid = false;
			i++;
		} else if (c == 0xc2 && s[i + 1] < 0xa0) {
			put_u00(b, s[i + 1]);   /* C1 control U+0080..U+009F */
			i += 2;
		} else {
			sh_buf_write(b, s + i, l);
			i += l;
		}
	}
	return valid;
}

/* The ',' before a member or an element, then "key": unless key is NULL
 * (an array's element). */
static void put_key(struct sh_buf *b, const char *key, const char *suffix)
{
	if (!b->first)
		sh_buf_putc(b, ',');
	b->first = false;
	if (!key)
		return;
	sh_buf_putc(b, '"');
	put_escaped(b, (const uint8_t *)key, strlen(key));
	sh_buf_puts(b, suffix);
	sh_buf_write(b, "\":", 2);
}

void sh_json_str_field(struct sh_buf *b, const char *key, const uint8_t *s, size_t n)
{
	bool valid;

	put_key(b, key, "");
	sh_buf_putc(b, '"');
	valid = put_escaped(b, s, n);
	sh_buf_putc(b, '"');
	if (valid || !key)
		return;
	put_key(b, key, "_hex");
	sh_buf_putc(b, '"');
	if (grow(b, 2 * n)) {
		for (size_t i = 0; i < n; i++) {
			b->p[b->len++] = hexdig[s[i] >> 4];
			b->p[b->len++] = hexdig[s[i] & 15];
		}
		b->p[b->len] = '\0';
	}
	sh_buf_putc(b, '"');
}

void sh_json_int_field(struct sh_buf *b, const char *key, long long v)
{
	put_key(b, key, "");
	sh_buf_printf(b, "%lld", v);
}

void sh_json_uint_field(struct sh_buf *b, const char *key, unsigned long long v)
{
	put_key(b, key, "");
	sh_buf_printf(b, "%llu", v);
}

void sh_json_bool_field(struct sh_buf *b, const char *key, bool v)
{
	put_key(b, key, "");
	sh_buf_printf(b, "%s", v ? "true" : "false");
}

void sh_json_begin(struct sh_buf *b)
{
	sh_buf_putc(b, '{');
	b->first = true;
}

void sh_json_end(struct sh_buf *b)
{
	sh_buf_write(b, "}\n", 2);
	b->first = true;
}

void sh_json_open(struct sh_buf *b, const char *key, char bracket)
{
	put_key(b, key, "");
	sh_buf_putc(b, bracket);
	b->first = true;
}

void sh_json_close(struct sh_buf *b, char bracket)
{
	sh_buf_putc(b, bracket);
	b->first = false;
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                     */

struct jp {
	const uint8_t *s;
	size_t i, n;
};

static void skip_ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r'))
		p->i++;
}

static int hex4(struct jp *p, unsigned *out)
{
	unsigned v = 0;

	if (p->n - p->i < 4)
		return -EINVAL;
	for (int k = 0; k < 4; k++) {
		int d = sh_hex_digit(p->s[p->i++]);

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct sh_buf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	sh_buf_write(b, u, n);
}

/* Parses a string at p->i (which must be '"') into b. */
static int parse_string(struct jp *p, struct sh_buf *b)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return -EINVAL;
	p->i++;
	for (;;) {
		uint8_t c;
		size_t l;

		if (p->i >= p->n)
			return -EINVAL;   /* unterminated */
		c = p->s[p->i];
		if (c == '"') {
			p->i++;
			return 0;
		}
		if (c < 0x20)
			return -EINVAL;   /* raw control character */
		if (c != '\\') {
			l = utf8_seq(p->s + p->i, p->n - p->i);
			if (!l)
				return -EINVAL;
			sh_buf_write(b, p->s + p->i, l);
			p->i += l;
			continue;
		}
		if (++p->i >= p->n)
			return -EINVAL;
		c = p->s[p->i++];
		switch (c) {
		case '"': sh_buf_putc(b, '"'); break;
		case '\\': sh_buf_putc(b, '\\'); break;
		case '/': sh_buf_putc(b, '/'); break;
		case 'b': sh_buf_putc(b, '\b'); break;
		case 'f': sh_buf_putc(b, '\f'); break;
		case 'n': sh_buf_putc(b, '\n'); break;
		case 'r': sh_buf_putc(b, '\r'); break;
		case 't': sh_buf_putc(b, '\t'); break;
		case 'u': {
			unsigned cp, lo;

			if (hex4(p, &cp))
				return -EINVAL;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -EINVAL;   /* lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
					return -EINVAL;   /* lone high surrogate */
				p->i += 2;
				if (hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return -EINVAL;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			put_utf8(b, cp);
			break;
		}
		default:
			return -EINVAL;
		}
	}
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_number(struct jp *p)
{
	const uint8_t *s = p->s;
	size_t i = p->i, n = p->n, d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else if (i < n && s[i] >= '1' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		return -EINVAL;
	}
	if (i < n && s[i] == '.') {
		d = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return -EINVAL;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		d = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return -EINVAL;
	}
	p->i = i;
	return 0;
}

static bool match_lit(struct jp *p, const char *lit)
{
	size_t l = strlen(lit);

	if (p->n - p->i < l || memcmp(p->s + p->i, lit, l) != 0)
		return false;
	p->i += l;
	return true;
}

/* Moves the buffer's string out (always allocated, NUL-terminated). */
static char *take(struct sh_buf *b, size_t *len)
{
	char *s;

	if (!grow(b, 0))
		return NULL;
	b->p[b->len] = '\0';   /* a fresh buffer holds nothing yet */
	s = b->p;
	*len = b->len;
	sh_buf_init(b);
	return s;
}

/* One value after its key's colon, into vb; is_str says it was a string. */
static int parse_value(struct jp *p, struct sh_buf *vb, bool *is_str)
{
	size_t start = p->i;

	*is_str = false;
	if (p->i >= p->n)
		return -EINVAL;
	if (p->s[p->i] == '"') {
		*is_str = true;
		if (parse_string(p, vb))
			return -EINVAL;
	} else if (match_lit(p, "true") || match_lit(p, "false") || match_lit(p, "null") ||
		   parse_number(p) == 0) {
		sh_buf_write(vb, p->s + start, p->i - start);
	} else {
		return -EINVAL;   /* nested or malformed value */
	}
	return vb->oom ? -ENOMEM : 0;
}

/* Append key (kb) and value (vb) to o, moving the buffers' strings. */
static int add_member(struct sh_jobj *o, size_t *cap, struct sh_buf *kb, struct sh_buf *vb,
		      bool is_str)
{
	size_t klen, vlen;
	char *key, *val;

	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->kv[i].key, kb->p ? kb->p : "") == 0)
			return -EINVAL;   /* duplicate key */
	if (o->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct sh_jkv *kv = realloc(o->kv, ncap * sizeof(*kv));

		if (!kv)
			return -ENOMEM;
		o->kv = kv;
		*cap = ncap;
	}
	key = take(kb, &klen);
	val = take(vb, &vlen);
	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	o->kv[o->n++] = (struct sh_jkv){ .key = key, .val = val, .is_str = is_str, .len = vlen };
	return 0;
}

/* One "key": value member at p. */
static int parse_member(struct jp *p, struct sh_jobj *o, size_t *cap,
			struct sh_buf *kb, struct sh_buf *vb)
{
	bool is_str;
	int r;

	skip_ws(p);
	sh_buf_reset(kb);
	sh_buf_reset(vb);
	if (parse_string(p, kb))
		return -EINVAL;
	if (kb->oom)
		return -ENOMEM;
	if (kb->p && strlen(kb->p) != kb->len)
		return -EINVAL;   /* NUL in key */
	skip_ws(p);
	if (p->i >= p->n || p->s[p->i] != ':')
		return -EINVAL;
	p->i++;
	skip_ws(p);
	r = parse_value(p, vb, &is_str);
	return r ? r : add_member(o, cap, kb, vb, is_str);
}

static int parse_members(struct jp *p, struct sh_jobj *o, struct sh_buf *kb, struct sh_buf *vb)
{
	size_t cap = 0;
	int r;

	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == '}') {
		p->i++;
		return 0;
	}
	for (;;) {
		r = parse_member(p, o, &cap, kb, vb);
		if (r)
			return r;
		skip_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == '}') {
			p->i++;
			return 0;
		}
		return -EINVAL;
	}
}

int sh_json_parse_flat(const char *line, size_t len, struct sh_jobj *out)
{
	struct jp p = { (const uint8_t *)line, 0, len };
	struct sh_jobj o = { 0 };
	struct sh_buf kb, vb;
	int rc = -EINVAL;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!line)
		return -EINVAL;
	sh_buf_init(&kb);
	sh_buf_init(&vb);
	skip_ws(&p);
	if (p.i < p.n && p.s[p.i] == '{') {
		p.i++;
		rc = parse_members(&p, &o, &kb, &vb);
		skip_ws(&p);
		if (!rc && p.i != p.n)
			rc = -EINVAL;   /* trailing garbage */
	}
	sh_buf_free(&kb);
	sh_buf_free(&vb);
	if (rc) {
		sh_jobj_free(&o);
		return rc;
	}
	*out = o;
	return 0;
}

const char *sh_jobj_get(const struct sh_jobj *o, const char *key)
{
	if (!o || !key)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->kv[i].key, key) == 0)
			return o->kv[i].val;
	return NULL;
}

void sh_jobj_free(struct sh_jobj *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free(o->kv[i].key);
		free(o->kv[i].val);
	}
	free(o->kv);
	o->kv = NULL;
	o->n = 0;
}
