// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the times `sharnessctl log --since/--until` take
 * (sh_parse_when, user/lib/util.c): dates, words and times ago or ahead as a
 * user types them, against a fixed now; anything else refused. And the
 * seconds sharnessd --detach-idle takes (sh_parse_seconds_or_never).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "util.h"

#define SEC 1000000000ull
/* 2026-12-03T13:05:07Z */
#define NOW (1796303107ull * SEC)
#define MIDNIGHT (1796256000ull * SEC)

static uint64_t when(const char *s)
{
	uint64_t t = 0;

	assert_int_equal(sh_parse_when(s, NOW, &t), 0);
	return t;
}

static void refused(const char *s)
{
	uint64_t t = 42;

	assert_int_equal(sh_parse_when(s, NOW, &t), -EINVAL);
	assert_int_equal(t, 42);  /* nothing written */
}

static void test_dates(void **state)
{
	(void)state;
	assert_int_equal(when("2026-12-03"), MIDNIGHT);
	assert_int_equal(when("2026-12-03T13:05"), NOW - 7 * SEC);
	assert_int_equal(when("2026-12-03 13:05:07"), NOW);
	assert_int_equal(when("2026-12-03T13:05:07"), NOW);
	assert_int_equal(when("now"), NOW);
}

static void test_words(void **state)
{
	(void)state;
	assert_int_equal(when("today"), MIDNIGHT);
	assert_int_equal(when("yesterday"), MIDNIGHT - 86400 * SEC);
	assert_int_equal(when("tomorrow"), MIDNIGHT + 86400 * SEC);
}

static void test_ago(void **state)
{
	(void)state;
	assert_int_equal(when("90s"), NOW - 90 * SEC);
	assert_int_equal(when("10m"), NOW - 600 * SEC);
	assert_int_equal(when("2h"), NOW - 7200 * SEC);
	assert_int_equal(when("3d"), NOW - 3 * 86400 * SEC);
	assert_int_equal(when("1w"), NOW - 7 * 86400 * SEC);
	assert_int_equal(when("1 hour ago"), NOW - 3600 * SEC);
	assert_int_equal(when("2 days ago"), NOW - 2 * 86400 * SEC);
	assert_int_equal(when("5 min ago"), NOW - 300 * SEC);
	assert_int_equal(when("30 seconds ago"), NOW - 30 * SEC);
	assert_int_equal(when("-1h"), NOW - 3600 * SEC);
	assert_int_equal(when("-5 min"), NOW - 300 * SEC);
	assert_int_equal(when("-2weeks"), NOW - 14 * 86400 * SEC);
	assert_int_equal(when("+1h"), NOW + 3600 * SEC);
	assert_int_equal(when("0s"), NOW);
}

static void test_refused(void **state)
{
	(void)state;
	refused("");
	refused("soon");
	refused("1");               /* no unit */
	refused("1 fortnight");
	refused("1h ago ago");
	refused("-1h ago");         /* which way? */
	refused("h");
	refused("1hour later");
	refused("2026-13-40");
	refused("99999999999999999999h");
	refused("100000000000 days ago");
	refused("200000 weeks ago"); /* before 1970 */
	refused("+1000000000w");     /* past the 64-bit clock */
	refused("1000000000w");
	refused("today ");
	refused("1h\n");
	refused("\xff");
}

static void test_seconds(void **state)
{
	int v = 7;

	(void)state;
	assert_int_equal(sh_parse_seconds_or_never("0", 86400, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(sh_parse_seconds_or_never("86400", 86400, &v), 0);
	assert_int_equal(v, 86400);
	assert_int_equal(sh_parse_seconds_or_never("never", 86400, &v), 0);
	assert_int_equal(v, -1);
	v = 7;
	const char *bad[] = { "", "86401", "-1", "+5", " 5", "5 ", "5s", "1e3", "never ",
			      "Never", "99999999999999999999", "0x10" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sh_parse_seconds_or_never(bad[i], 86400, &v), -EINVAL);
		assert_int_equal(v, 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_ago),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
