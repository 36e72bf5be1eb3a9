/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON for the sharness audit log.
 *
 * Writing: any bytes become valid JSON without losing information (see
 * sh_json_str_field).  Reading: a strict parser for the one-object-per-line
 * records the writer produces, used by `sharnessctl log`.
 */
#ifndef SHARNESS_JSON_H
#define SHARNESS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Growable string buffer.  p is NUL-terminated whenever it is non-NULL.
 * If an allocation fails (or a printf format fails), oom is set and every
 * later append is ignored until sh_buf_reset/sh_buf_free: check oom once,
 * after building a record, and drop the record if it is set.
 * first: no field written since sh_json_begin (drives the ',' separators).
 */
struct sh_buf {
	char *p;
	size_t len, cap;
	bool oom;
	bool first;
};

void sh_buf_init(struct sh_buf *b);
void sh_buf_free(struct sh_buf *b);
void sh_buf_reset(struct sh_buf *b);   /* empties, clears oom, keeps memory */
void sh_buf_putc(struct sh_buf *b, char c);
void sh_buf_puts(struct sh_buf *b, const char *s);
void sh_buf_write(struct sh_buf *b, const void *s, size_t n);
void sh_buf_printf(struct sh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict UTF-8: rejects overlongs, surrogates, code points > U+10FFFF and
 * truncated sequences. */
bool sh_utf8_valid(const uint8_t *s, size_t n);

/*
 * Appends "key":"value".  '"' and '\\' are escaped, as are control
 * characters: \n and \t by name, the others (and DEL and the C1 controls
 * U+0080..U+009F, so a log viewed in a terminal cannot drive it) as \u00XX.
 * Valid UTF-8 is copied as is.  If the bytes are NOT valid UTF-8, each
 * invalid byte becomes U+FFFD in "key" and an extra field
 * "key_hex":"<lowercase hex of ALL the raw bytes>" follows, so nothing is
 * lost.  s may be NULL when n is 0.  Keys are program constants (ASCII).
 * A NULL key writes a bare value, an array's element (invalid bytes are
 * then U+FFFD, with no hex beside them).
 */
void sh_json_str_field(struct sh_buf *b, const char *key, const uint8_t *s, size_t n);
void sh_json_int_field(struct sh_buf *b, const char *key, long long v);
void sh_json_uint_field(struct sh_buf *b, const char *key, unsigned long long v);
void sh_json_bool_field(struct sh_buf *b, const char *key, bool v);

/* sh_json_begin writes '{'; fields add ',' when needed; sh_json_end writes "}\n". */
void sh_json_begin(struct sh_buf *b);
void sh_json_end(struct sh_buf *b);
/* Nesting: "key":{ or "key":[ (key NULL inside an array), its members or
 * elements, then the matching close. */
void sh_json_open(struct sh_buf *b, const char *key, char bracket);
void sh_json_close(struct sh_buf *b, char bracket);

/*
 * Reader for ONE flat JSON object (surrounding whitespace, e.g. a trailing
 * newline, allowed): values are strings, numbers, true, false or null; no
 * nesting.  Strict RFC 8259 syntax; raw bytes inside strings must be valid
 * UTF-8; duplicate keys are rejected (no ambiguity about which one counts).
 * String values are unescaped (\uXXXX incl. surrogate pairs -> UTF-8; a lone
 * surrogate is an error); other values keep their literal text ("12",
 * "true", "null") with is_str false.  A value may contain NUL bytes (from
 * \u0000): len is its true length.  Keys may not contain NUL.
 * Returns 0, -EINVAL on malformed input, -ENOMEM; on error *out is empty.
 */
struct sh_jkv {
	char *key;
	char *val;     /* NUL-terminated */
	bool is_str;
	size_t len;    /* bytes in val, not counting the terminator */
};

struct sh_jobj {
	struct sh_jkv *kv;
	size_t n;
};

int sh_json_parse_flat(const char *line, size_t len, struct sh_jobj *out);
const char *sh_jobj_get(const struct sh_jobj *o, const char *key);   /* NULL if absent */
void sh_jobj_free(struct sh_jobj *o);   /* NULL-safe, zeroes */

#endif /* SHARNESS_JSON_H */
