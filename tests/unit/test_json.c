// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the audit log JSON writer and reader (user/lib/json.c).
 *
 * Usage: test_json [DATA_DIR]   (else $SH_TEST_DATA, else tests/unit/data)
 * Needs jq(1) for the cross-check with an independent JSON parser.
 * DATA_DIR/jq_records.jsonl was produced by `jq -c`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "json.h"

static const char *data_dir = "tests/unit/data";

static const char hexd[] = "0123456789abcdef";

/* Builds one object {"key": bytes} and returns the buffer (caller frees). */
static void one_field(struct sh_buf *b, const char *key, const void *s, size_t n)
{
	sh_buf_init(b);
	sh_json_begin(b);
	sh_json_str_field(b, key, s, n);
	sh_json_end(b);
	assert_false(b->oom);
	assert_non_null(b->p);
	assert_int_equal(strlen(b->p), b->len);
}

static void to_hex(char *out, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hexd[s[i] >> 4];
		out[2 * i + 1] = hexd[s[i] & 15];
	}
	out[2 * n] = '\0';
}

static size_t from_hex(uint8_t *out, const char *hex)
{
	size_t n = strlen(hex);

	assert_int_equal(n % 2, 0);
	for (size_t i = 0; i < n; i += 2) {
		const char *hi = strchr(hexd, hex[i]), *lo = strchr(hexd, hex[i + 1]);

		assert_non_null(hi);
		assert_non_null(lo);
		out[i / 2] = (uint8_t)(((hi - hexd) << 4) | (lo - hexd));
	}
	return n / 2;
}

/*
 * Writes s as field "v", parses the line back and checks that the original
 * bytes are recovered: from "v" itself if s is valid UTF-8, else from
 * "v_hex" (and "v" then holds U+FFFD for each invalid byte).
 */
static void roundtrip(const uint8_t *s, size_t n)
{
	struct sh_buf b;
	struct sh_jobj o;
	bool valid = sh_utf8_valid(s, n);

	one_field(&b, "v", s, n);
	assert_int_equal(sh_json_parse_flat(b.p, b.len, &o), 0);
	assert_int_equal(o.n, valid ? 1 : 2);
	assert_string_equal(o.kv[0].key, "v");
	assert_true(o.kv[0].is_str);
	if (valid) {
		assert_int_equal(o.kv[0].len, n);
		assert_memory_equal(o.kv[0].val, s, n);
		assert_null(sh_jobj_get(&o, "v_hex"));
	} else {
		uint8_t *back = malloc(n + 1);
		const char *hex = sh_jobj_get(&o, "v_hex");

		assert_non_null(back);
		assert_non_null(hex);
		assert_string_equal(o.kv[1].key, "v_hex");
		assert_int_equal(from_hex(back, hex), n);
		assert_memory_equal(back, s, n);
		free(back);
		/* the text field is valid UTF-8 in any case */
		assert_true(sh_utf8_valid((const uint8_t *)o.kv[0].val, o.kv[0].len));
	}
	sh_jobj_free(&o);
	sh_buf_free(&b);
}

/* ------------------------------------------------------------------------ */

static void test_buf_basics(void **state)
{
	struct sh_buf b;
	char big[5000];

	(void)state;
	sh_buf_init(&b);
	assert_null(b.p);
	assert_int_equal(b.len, 0);
	assert_false(b.oom);
	sh_buf_putc(&b, 'a');
	sh_buf_puts(&b, "bc");
	sh_buf_write(&b, "d\0e", 3);
	sh_buf_printf(&b, "%d-%s", 42, "x");
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.p, "abcd\0e42-x", 11);

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sh_buf_printf(&b, "[%s]", big);
	assert_int_equal(b.len, 10 + 2 + 4999);
	assert_int_equal(b.p[10], '[');
	assert_int_equal(b.p[b.len - 1], ']');
	assert_int_equal(b.p[b.len], '\0');
	assert_false(b.oom);

	sh_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_non_null(b.p);
	assert_string_equal(b.p, "");
	sh_buf_printf(&b, "%s", "");
	assert_int_equal(b.len, 0);
	sh_buf_free(&b);
	assert_null(b.p);
	assert_int_equal(b.cap, 0);
	sh_buf_free(&b);
	sh_buf_free(NULL);
}

static void test_buf_oom_sticky(void **state)
{
	struct sh_buf b;

	(void)state;
	sh_buf_init(&b);
	sh_buf_puts(&b, "kept");
	b.oom = true;   /* as after a failed allocation */
	sh_buf_puts(&b, "lost");
	sh_buf_putc(&b, 'x');
	sh_buf_printf(&b, "%d", 1);
	sh_json_str_field(&b, "k", (const uint8_t *)"v", 1);
	assert_true(b.oom);
	assert_string_equal(b.p, "kept");
	assert_int_equal(b.len, 4);
	sh_buf_reset(&b);
	assert_false(b.oom);
	sh_buf_puts(&b, "again");
	assert_string_equal(b.p, "again");
	sh_buf_free(&b);
}

static void test_utf8_valid(void **state)
{
	static const struct { const char *s; size_t n; bool ok; } cases[] = {
		{ "", 0, true },
		{ "plain ascii", 11, true },
		{ "\xc3\xa9", 2, true },                 /* é */
		{ "\xe6\x97\xa5\xe6\x9c\xac", 6, true }, /* 日本 */
		{ "\xf0\x9f\x98\x80", 4, true },         /* 😀 */
		{ "\xc2\x80", 2, true },                 /* U+0080 */
		{ "\xed\x9f\xbf", 3, true },             /* U+D7FF */
		{ "\xee\x80\x80", 3, true },             /* U+E000 */
		{ "\xef\xbf\xbf", 3, true },             /* U+FFFF */
		{ "\xf4\x8f\xbf\xbf", 4, true },         /* U+10FFFF */
		{ "\xff", 1, false },
		{ "\xfe", 1, false },
		{ "\x80", 1, false },                    /* lone continuation */
		{ "a\xbf", 2, false },
		{ "\xc0\xaf", 2, false },                /* overlong '/' */
		{ "\xc1\xbf", 2, false },                /* overlong */
		{ "\xe0\x80\xaf", 3, false },            /* overlong '/' */
		{ "\xe0\x9f\xbf", 3, false },            /* overlong U+07FF */
		{ "\xf0\x80\x80\xaf", 4, false },        /* overlong '/' */
		{ "\xf0\x8f\xbf\xbf", 4, false },        /* overlong U+FFFF */
		{ "\xed\xa0\x80", 3, false },            /* surrogate U+D800 */
		{ "\xed\xbf\xbf", 3, false },            /* surrogate U+DFFF */
		{ "\xf4\x90\x80\x80", 4, false },        /* U+110000 */
		{ "\xf5\x80\x80\x80", 4, false },
		{ "\xe6\x97", 2, false },                /* truncated */
		{ "\xf0\x9f\x98", 3, false },            /* truncated */
		{ "\xc3", 1, false },                    /* truncated */
		{ "\xc3\x28", 2, false },                /* bad continuation */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = sh_utf8_valid((const uint8_t *)cases[i].s, cases[i].n);

		if (got != cases[i].ok)
			print_error("case %zu\n", i);
		assert_int_equal(got, cases[i].ok);
	}
}

static void test_escaping_exact(void **state)
{
	static const char in[] = "q\"b\\n\nt\tc\x01\x1f\x7f\r e\xc3\xa9 c1\xc2\x85 j\xe6\x97\xa5\xe6\x9c\xac s\xf0\x9f\x98\x80";
	struct sh_buf b;

	(void)state;
	one_field(&b, "k", in, sizeof(in) - 1);
	assert_string_equal(b.p,
			    "{\"k\":\"q\\\"b\\\\n\\nt\\tc\\u0001\\u001f\\u007f\\u000d "
			    "e\xc3\xa9 c1\\u0085 j\xe6\x97\xa5\xe6\x9c\xac s\xf0\x9f\x98\x80\"}\n");
	sh_buf_free(&b);

	/* NULL with length 0 is an empty string */
	one_field(&b, "empty", NULL, 0);
	assert_string_equal(b.p, "{\"empty\":\"\"}\n");
	sh_buf_free(&b);

	/* embedded NUL */
	one_field(&b, "k", "a\0b", 3);
	assert_string_equal(b.p, "{\"k\":\"a\\u0000b\"}\n");
	sh_buf_free(&b);
}

static void test_fields_and_objects(void **state)
{
	struct sh_buf b;

	(void)state;
	sh_buf_init(&b);
	sh_json_begin(&b);
	sh_json_end(&b);
	assert_string_equal(b.p, "{}\n");

	sh_json_begin(&b);
	sh_json_str_field(&b, "event", (const uint8_t *)"exec", 4);
	sh_json_int_field(&b, "min", LLONG_MIN);
	sh_json_int_field(&b, "max", LLONG_MAX);
	sh_json_uint_field(&b, "umax", ULLONG_MAX);
	sh_json_int_field(&b, "zero", 0);
	sh_json_end(&b);
	sh_json_begin(&b);
	sh_json_uint_field(&b, "pid", 1);
	sh_json_end(&b);
	assert_string_equal(b.p,
			    "{}\n"
			    "{\"event\":\"exec\",\"min\":-9223372036854775808,"
			    "\"max\":9223372036854775807,\"umax\":18446744073709551615,\"zero\":0}\n"
			    "{\"pid\":1}\n");
	sh_buf_free(&b);
}

static void test_invalid_utf8_fffd_and_hex(void **state)
{
	static const struct { const char *in; size_t n; const char *out; } cases[] = {
		{ "\xff", 1, "{\"k\":\"\xef\xbf\xbd\",\"k_hex\":\"ff\"}\n" },
		/* lone continuation between valid text */
		{ "a\x80z", 3, "{\"k\":\"a\xef\xbf\xbdz\",\"k_hex\":\"61807a\"}\n" },
		/* overlong C0 AF: each byte replaced */
		{ "\xc0\xaf", 2, "{\"k\":\"\xef\xbf\xbd\xef\xbf\xbd\",\"k_hex\":\"c0af\"}\n" },
		/* surrogate ED A0 80 */
		{ "\xed\xa0\x80", 3,
		  "{\"k\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"k_hex\":\"eda080\"}\n" },
		/* valid characters around an invalid byte are kept; hex has ALL bytes */
		{ "\xc3\xa9\xff\"\n", 5,
		  "{\"k\":\"\xc3\xa9\xef\xbf\xbd\\\"\\n\",\"k_hex\":\"c3a9ff220a\"}\n" },
		/* truncated sequence at the end */
		{ "x\xe6\x97", 3, "{\"k\":\"x\xef\xbf\xbd\xef\xbf\xbd\",\"k_hex\":\"78e697\"}\n" },
	};
	struct sh_buf b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		one_field(&b, "k", cases[i].in, cases[i].n);
		assert_string_equal(b.p, cases[i].out);
		sh_buf_free(&b);
		roundtrip((const uint8_t *)cases[i].in, cases[i].n);
	}

	/* a field after the pair gets its comma */
	sh_buf_init(&b);
	sh_json_begin(&b);
	sh_json_str_field(&b, "path", (const uint8_t *)"\xff", 1);
	sh_json_int_field(&b, "n", 1);
	sh_json_end(&b);
	assert_string_equal(b.p, "{\"path\":\"\xef\xbf\xbd\",\"path_hex\":\"ff\",\"n\":1}\n");
	sh_buf_free(&b);
}

static void test_roundtrip_every_byte(void **state)
{
	uint8_t all[255];
	struct sh_buf b;
	struct sh_jobj o;
	char hex[2 * 255 + 1];

	(void)state;
	for (int i = 0; i < 255; i++)
		all[i] = (uint8_t)(i + 1);

	/* 0x01..0x7f: valid, recovered exactly from the value itself */
	roundtrip(all, 0x7f);
	/* 0x01..0xff: 0x80..0xff alone are invalid UTF-8 -> FFFD + hex */
	roundtrip(all, sizeof(all));
	one_field(&b, "v", all, sizeof(all));
	to_hex(hex, all, sizeof(all));
	assert_int_equal(sh_json_parse_flat(b.p, b.len, &o), 0);
	assert_string_equal(sh_jobj_get(&o, "v_hex"), hex);
	/* 127 ASCII bytes + 128 replacement characters of 3 bytes each */
	assert_int_equal(o.kv[0].len, 127 + 128 * 3);
	assert_memory_equal(o.kv[0].val, all, 127);
	for (size_t i = 127; i < o.kv[0].len; i += 3)
		assert_memory_equal(o.kv[0].val + i, "\xef\xbf\xbd", 3);
	sh_jobj_free(&o);
	sh_buf_free(&b);

	/* each byte on its own */
	for (int i = 1; i <= 0xff; i++) {
		uint8_t c = (uint8_t)i;

		roundtrip(&c, 1);
	}
	/* and NUL, which the value length carries */
	roundtrip((const uint8_t *)"\0", 1);
}

static void test_roundtrip_strings(void **state)
{
	static const char *const strs[] = {
		"",
		"\"",
		"\\",
		"\"\\\"\\\\",
		"line1\nline2\n",
		"tab\there\r\n",
		"caf\xc3\xa9",
		"\xe6\x97\xa5\xe6\x9c\xac",
		"\xf0\x9f\x98\x80 grin",
		"\xc2\x85\xc2\x9f\xc2\xa0",   /* C1 controls and NBSP */
		"\xef\xbf\xbd",                 /* a real U+FFFD is valid, no hex */
		"/usr/bin/bash -c 'echo \"hi\" > /dev/null'",
		"\x1b[31mred\x1b[0m",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		roundtrip((const uint8_t *)strs[i], strlen(strs[i]));
}

/* Cross-check with jq: the log must be valid JSON to an independent parser
 * and decode to the same bytes. */
static void test_jq_accepts_output(void **state)
{
	char dir[] = "/tmp/sh-test-json-XXXXXX", path[PATH_MAX], outp[PATH_MAX], cmd[3 * PATH_MAX];
	static const char text[] = "q\"b\\ \n\t\x01\x7f \xc2\x85 caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80";
	static const char *const bad[] = { "\xff", "\x80", "\xc0\xaf", "\xed\xa0\x80" };
	uint8_t all[255];
	struct sh_buf b;
	FILE *f;
	char got[256];
	size_t n;

	(void)state;
	if (system("command -v jq >/dev/null 2>&1") != 0)
		fail_msg("jq is required for this test");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log.json", dir);
	snprintf(outp, sizeof(outp), "%s/out", dir);
	for (int i = 0; i < 255; i++)
		all[i] = (uint8_t)(i + 1);

	sh_buf_init(&b);
	sh_json_begin(&b);
	sh_json_str_field(&b, "text", (const uint8_t *)text, sizeof(text) - 1);
	sh_json_str_field(&b, "all", all, sizeof(all));
	sh_json_int_field(&b, "neg", LLONG_MIN);
	sh_json_uint_field(&b, "big", ULLONG_MAX);
	sh_json_end(&b);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sh_json_begin(&b);
		sh_json_str_field(&b, "s", (const uint8_t *)bad[i], strlen(bad[i]));
		sh_json_end(&b);
	}
	assert_false(b.oom);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b.p, 1, b.len, f), b.len);
	assert_int_equal(fclose(f), 0);
	sh_buf_free(&b);

	snprintf(cmd, sizeof(cmd), "jq -e . '%s' >/dev/null", path);
	assert_int_equal(system(cmd), 0);

	/* jq decodes "text" to the original bytes */
	snprintf(cmd, sizeof(cmd), "jq -j 'select(.text) | .text' '%s' > '%s'", path, outp);
	assert_int_equal(system(cmd), 0);
	f = fopen(outp, "rb");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got), f);
	fclose(f);
	assert_int_equal(n, sizeof(text) - 1);
	assert_memory_equal(got, text, n);

	/* the hex fields as jq sees them */
	snprintf(cmd, sizeof(cmd),
		 "test \"$(jq -r 'select(.s_hex) | .s_hex' '%s' | tr '\\n' ,)\" = ff,80,c0af,eda080,",
		 path);
	assert_int_equal(system(cmd), 0);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_parse_flat_valid(void **state)
{
	static const char line[] =
		" {\"a\":\"x\", \"n\" : -12.5e+3 ,\"i\":0,\"t\":true,\"f\":false,\"z\":null,"
		"\"e\":\"\",\"esc\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u65e5\\ud83d\\ude00\","
		"\"nul\":\"a\\u0000b\",\"\":\"empty key\"}\r\n";
	struct sh_jobj o;

	(void)state;
	assert_int_equal(sh_json_parse_flat(line, sizeof(line) - 1, &o), 0);
	assert_int_equal(o.n, 10);
	assert_string_equal(sh_jobj_get(&o, "a"), "x");
	assert_true(o.kv[0].is_str);
	assert_string_equal(sh_jobj_get(&o, "n"), "-12.5e+3");
	assert_false(o.kv[1].is_str);
	assert_string_equal(sh_jobj_get(&o, "i"), "0");
	assert_string_equal(sh_jobj_get(&o, "t"), "true");
	assert_false(o.kv[3].is_str);
	assert_string_equal(sh_jobj_get(&o, "f"), "false");
	assert_string_equal(sh_jobj_get(&o, "z"), "null");
	assert_false(o.kv[5].is_str);
	assert_string_equal(sh_jobj_get(&o, "e"), "");
	assert_true(o.kv[6].is_str);
	assert_string_equal(sh_jobj_get(&o, "esc"),
			    "\"\\/\b\f\n\r\t\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80");
	assert_int_equal(o.kv[8].len, 3);
	assert_memory_equal(o.kv[8].val, "a\0b", 4);
	assert_string_equal(sh_jobj_get(&o, ""), "empty key");
	assert_null(sh_jobj_get(&o, "missing"));
	assert_null(sh_jobj_get(&o, NULL));
	assert_null(sh_jobj_get(NULL, "a"));
	sh_jobj_free(&o);
	assert_null(o.kv);
	assert_int_equal(o.n, 0);
	sh_jobj_free(&o);
	sh_jobj_free(NULL);

	assert_int_equal(sh_json_parse_flat("{}", 2, &o), 0);
	assert_int_equal(o.n, 0);
	sh_jobj_free(&o);
	assert_int_equal(sh_json_parse_flat(" { } \n", 6, &o), 0);
	assert_int_equal(o.n, 0);
	sh_jobj_free(&o);

	/* only len bytes are read: what follows is not part of the line */
	assert_int_equal(sh_json_parse_flat("{\"a\":1}garbage", 7, &o), 0);
	assert_string_equal(sh_jobj_get(&o, "a"), "1");
	sh_jobj_free(&o);
}

static void test_parse_flat_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"   ",
		"{",
		"}",
		"[]",
		"\"a\"",
		"null",
		"{\"a\":1,}",
		"{,}",
		"{\"a\" 1}",
		"{\"a\":}",
		"{\"a\"}",
		"{a:1}",
		"{'a':1}",
		"{\"a\":1 \"b\":2}",
		"{\"a\":01}",
		"{\"a\":1.}",
		"{\"a\":.5}",
		"{\"a\":-}",
		"{\"a\":+1}",
		"{\"a\":1e}",
		"{\"a\":1e+}",
		"{\"a\":0x10}",
		"{\"a\":tru}",
		"{\"a\":True}",
		"{\"a\":nul}",
		"{\"a\":\"x}",
		"{\"a\":\"x\\\"}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u12g4\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\\u0041\"}",
		"{\"a\":\"\\ud800x\"}",
		"{\"a\":{\"b\":1}}",
		"{\"a\":[1]}",
		"{\"a\":1} x",
		"{\"a\":1}{}",
		"{\"a\":\"x\ny\"}",          /* raw control character */
		"{\"a\":\"x\ty\"}",
		"{\"a\":\"\xff\"}",          /* invalid UTF-8 inside a string */
		"{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":1,\"a\":2}",          /* duplicate key */
		"{\"k\\u0000\":1}",           /* NUL in a key */
	};
	struct sh_jobj o;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = sh_json_parse_flat(bad[i], strlen(bad[i]), &o);

		if (rc != -EINVAL)
			print_error("accepted: %s\n", bad[i]);
		assert_int_equal(rc, -EINVAL);
		assert_null(o.kv);
		assert_int_equal(o.n, 0);
	}
	/* a NUL byte outside a string */
	assert_int_equal(sh_json_parse_flat("{\"a\":1}\0", 8, &o), -EINVAL);
	assert_int_equal(sh_json_parse_flat("{\"a\":\0}", 7, &o), -EINVAL);
	assert_int_equal(sh_json_parse_flat(NULL, 0, &o), -EINVAL);
	assert_int_equal(sh_json_parse_flat("{}", 2, NULL), -EINVAL);
}

/* A line as the audit log writes it, read back field by field. */
static void test_log_record_roundtrip(void **state)
{
	static const uint8_t argv0[] = "/usr/bin/python3\xff";
	struct sh_buf b;
	struct sh_jobj o;
	char hex[64];

	(void)state;
	sh_buf_init(&b);
	sh_json_begin(&b);
	sh_json_uint_field(&b, "ts", 1700000000123ULL);
	sh_json_str_field(&b, "policy", (const uint8_t *)"agent", 5);
	sh_json_str_field(&b, "event", (const uint8_t *)"exec", 4);
	sh_json_str_field(&b, "path", argv0, sizeof(argv0) - 1);
	sh_json_int_field(&b, "ret", -1);
	sh_json_end(&b);
	assert_int_equal(sh_json_parse_flat(b.p, b.len, &o), 0);
	assert_int_equal(o.n, 6);
	assert_string_equal(sh_jobj_get(&o, "ts"), "1700000000123");
	assert_string_equal(sh_jobj_get(&o, "policy"), "agent");
	assert_string_equal(sh_jobj_get(&o, "event"), "exec");
	assert_string_equal(sh_jobj_get(&o, "path"), "/usr/bin/python3\xef\xbf\xbd");
	to_hex(hex, argv0, sizeof(argv0) - 1);
	assert_string_equal(sh_jobj_get(&o, "path_hex"), hex);
	assert_string_equal(sh_jobj_get(&o, "ret"), "-1");
	sh_jobj_free(&o);
	sh_buf_free(&b);
}

/* Records written by another JSON producer (jq -c), from the fixtures. */
static void test_parse_jq_records(void **state)
{
	char path[PATH_MAX], line[1024];
	struct sh_jobj o;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/jq_records.jsonl", data_dir);
	f = fopen(path, "r");
	assert_non_null(f);

	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sh_json_parse_flat(line, strlen(line), &o), 0);
	assert_int_equal(o.n, 8);
	assert_string_equal(sh_jobj_get(&o, "ts"), "1700000000");
	assert_string_equal(sh_jobj_get(&o, "policy"), "agent");
	assert_string_equal(sh_jobj_get(&o, "path"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
	assert_string_equal(sh_jobj_get(&o, "ctl"), "\x01\n\t\x1b");
	assert_string_equal(sh_jobj_get(&o, "q"), "\"\\/");
	assert_string_equal(sh_jobj_get(&o, "ok"), "true");
	assert_string_equal(sh_jobj_get(&o, "none"), "null");
	assert_string_equal(sh_jobj_get(&o, "f"), "-0.5");
	sh_jobj_free(&o);

	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sh_json_parse_flat(line, strlen(line), &o), 0);
	assert_int_equal(o.n, 0);
	sh_jobj_free(&o);

	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_basics),
		cmocka_unit_test(test_buf_oom_sticky),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_escaping_exact),
		cmocka_unit_test(test_fields_and_objects),
		cmocka_unit_test(test_invalid_utf8_fffd_and_hex),
		cmocka_unit_test(test_roundtrip_every_byte),
		cmocka_unit_test(test_roundtrip_strings),
		cmocka_unit_test(test_jq_accepts_output),
		cmocka_unit_test(test_parse_flat_valid),
		cmocka_unit_test(test_parse_flat_invalid),
		cmocka_unit_test(test_log_record_roundtrip),
		cmocka_unit_test(test_parse_jq_records),
	};

	if (argc > 1)
		data_dir = argv[1];
	else if (getenv("SH_TEST_DATA"))
		data_dir = getenv("SH_TEST_DATA");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
