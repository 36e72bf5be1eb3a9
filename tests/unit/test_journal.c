// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the journal entries of audit records (user/daemon/journal.c):
 * journald's native protocol, the record's exact bytes in SHARNESS_*
 * fields, the one-line MESSAGE as `sharnessctl log` shows the record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit.h"
#include "journal.h"

/* The value of field name in entry e (the text or the binary form); NULL
 * if absent. */
static const char *entry_get(const struct sh_buf *e, const char *name, size_t *n)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < e->len;) {
		const char *l = e->p + i, *end = memchr(l, '\n', e->len - i), *eq;

		assert_non_null(end);
		eq = memchr(l, '=', end - l);
		if (eq) {
			if ((size_t)(eq - l) == nl && !memcmp(l, name, nl)) {
				*n = end - eq - 1;
				return eq + 1;
			}
			i = end - e->p + 1;
			continue;
		}
		/* KEY\n<le64 length><bytes>\n */
		uint64_t len;

		memcpy(&len, end + 1, 8);
		if ((size_t)(end - l) == nl && !memcmp(l, name, nl)) {
			*n = len;
			return end + 9;
		}
		i = end + 9 + len - e->p;
		assert_int_equal(e->p[i], '\n');
		i++;
	}
	return NULL;
}

static void encode(struct sh_buf *e, const char *rec)
{
	sh_buf_init(e);
	assert_int_equal(sh_journal_encode(e, rec, strlen(rec)), 0);
	assert_false(e->oom);
}

static void test_violation(void **state)
{
	/* target: "/tmp/a\nb\xff" as the log writes it */
	const char *rec = "{\"time\":\"2026-11-30T10:00:00.000000Z\",\"event\":\"violation\","
		"\"policy\":\"agent\",\"action\":\"deny\",\"hook\":\"file\",\"pid\":42,"
		"\"comm\":\"sh\",\"cgroup\":\"/sys/fs/cgroup/x\",\"run\":7,"
		"\"target\":\"/tmp/a\\nb\xef\xbf\xbd\",\"target_hex\":\"2f746d702f610a62ff\","
		"\"op\":\"open\",\"reason\":\"write-outside\",\"access\":\"write\",\"errno\":1}\n";
	struct sh_buf e;
	const char *v;
	size_t n;

	(void)state;
	encode(&e, rec);
	v = entry_get(&e, "SHARNESS_TARGET", &n);
	assert_non_null(v);
	assert_int_equal(n, 9);
	assert_memory_equal(v, "/tmp/a\nb\xff", 9);
	v = entry_get(&e, "SHARNESS_PATH", &n);
	assert_non_null(v);
	assert_memory_equal(v, "/tmp/a\nb\xff", 9);
	assert_null(entry_get(&e, "SHARNESS_TARGET_HEX", &n));
	v = entry_get(&e, "SHARNESS_POLICY", &n);
	assert_true(v && n == 5 && !memcmp(v, "agent", 5));
	v = entry_get(&e, "SHARNESS_PID", &n);
	assert_true(v && n == 2 && !memcmp(v, "42", 2));
	v = entry_get(&e, "PRIORITY", &n);
	assert_true(v && n == 1 && *v == '4');
	v = entry_get(&e, "MESSAGE_ID", &n);
	assert_true(v && n == 32 && !memcmp(v, SH_JOURNAL_ID_VIOLATION, 32));
	v = entry_get(&e, "MESSAGE", &n);
	assert_non_null(v);
	assert_int_equal(n, strlen("2026-11-30T10:00:00.000000Z agent deny file/open write sh[42] "
				   "/tmp/a\\x0ab\xef\xbf\xbd (write-outside)"));
	assert_memory_equal(v, "2026-11-30T10:00:00.000000Z agent deny file/open write sh[42] "
			    "/tmp/a\\x0ab\xef\xbf\xbd (write-outside)", n);
	sh_buf_free(&e);
}

/* The bytes a tree chooses (a path, a comm) reach a terminal through
 * `sharnessctl log` and journalctl as MESSAGE: no control character, line
 * separator or bidirectional control among them, the backslash escaped. */
static void test_text_escapes(void **state)
{
	const char *rec = "{\"time\":\"t\",\"event\":\"violation\",\"policy\":\"p\","
		"\"action\":\"deny\",\"hook\":\"file\",\"pid\":1,"
		"\"comm\":\"a\\r\\u001b[2Kb\",\"op\":\"open\","
		"\"target\":\"/x\\\\y\\u0085\\u202e\\u2028z\\u007f\u00e9\\u200f\\u061c\"}";
	const char *want = "t p deny file/open a\\x0d\\x1b[2Kb[1] /x\\\\y\\u0085\\u202e\\u2028z\\x7f\u00e9\\u200f\\u061c";
	struct sh_jobj o = { 0 };
	struct sh_buf b;

	(void)state;
	assert_int_equal(sh_json_parse_flat(rec, strlen(rec), &o), 0);
	sh_buf_init(&b);
	sh_audit_text(&b, &o, false);
	assert_false(b.oom);
	assert_int_equal(b.len, strlen(want) + 1);
	assert_memory_equal(b.p, want, strlen(want));
	assert_int_equal(b.p[b.len - 1], '\n');
	sh_buf_free(&b);
	sh_jobj_free(&o);
}

static void test_not_a_path(void **state)
{
	const char *rec = "{\"time\":\"t\",\"event\":\"violation\",\"policy\":\"p\","
		"\"action\":\"audit\",\"hook\":\"connect\",\"pid\":1,\"target\":\"/abs\","
		"\"op\":\"connect\",\"socket\":\"abstract\"}";
	const char *sup = "{\"time\":\"t\",\"event\":\"suppressed\",\"count\":5,\"policy\":\"p\"}";
	struct sh_buf e;
	const char *v;
	size_t n;

	(void)state;
	encode(&e, rec);
	assert_null(entry_get(&e, "SHARNESS_PATH", &n));
	v = entry_get(&e, "PRIORITY", &n);
	assert_true(v && n == 1 && *v == '5');
	sh_buf_free(&e);
	encode(&e, sup);
	v = entry_get(&e, "MESSAGE", &n);
	assert_true(v && n == strlen("t -- suppressed count=5 policy=p") &&
		    !memcmp(v, "t -- suppressed count=5 policy=p", n));
	v = entry_get(&e, "MESSAGE_ID", &n);
	assert_true(v && !memcmp(v, SH_JOURNAL_ID_NOT_LOGGED, 32));
	v = entry_get(&e, "SHARNESS_COUNT", &n);
	assert_true(v && n == 1 && *v == '5');
	sh_buf_free(&e);
	sh_buf_init(&e);
	assert_int_equal(sh_journal_encode(&e, "not json", 8), -EINVAL);
	sh_buf_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_violation),
		cmocka_unit_test(test_not_a_path),
		cmocka_unit_test(test_text_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
