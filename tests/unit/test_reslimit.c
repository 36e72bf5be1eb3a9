// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the resource-limit parsers (user/policy/reslimit.c) that
 * [limits] and `sharnessctl run` share, and the words a run-begin
 * request carries them in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reslimit.h"

static void test_bytes(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_true(sh_parse_bytes("64M", false, &v));
	assert_int_equal(v, 64ull << 20);
	assert_true(sh_parse_bytes("2G", false, &v));
	assert_int_equal(v, 2ull << 30);
	assert_true(sh_parse_bytes("1T", false, &v));
	assert_int_equal(v, 1ull << 40);
	assert_true(sh_parse_bytes("4096", false, &v));
	assert_int_equal(v, 4096);
	assert_true(sh_parse_bytes("0", true, &v));
	assert_int_equal(v, 0);
	assert_false(sh_parse_bytes("0", false, &v));
	assert_false(sh_parse_bytes("lots", false, &v));
	assert_false(sh_parse_bytes("", false, &v));
	assert_false(sh_parse_bytes("-1M", false, &v));
	assert_false(sh_parse_bytes("1MB", false, &v));
	assert_false(sh_parse_bytes("1Q", false, &v));
	assert_false(sh_parse_bytes(" 1M", false, &v));
	assert_false(sh_parse_bytes("99999999999999999999", false, &v));
	assert_false(sh_parse_bytes("16777216T", false, &v));   /* 2^64: too big */
}

static void test_cpu_and_io(void **state)
{
	unsigned v = 7;

	(void)state;
	assert_true(sh_parse_cpu_pct("150%", &v));
	assert_int_equal(v, 150);
	assert_true(sh_parse_cpu_pct("1%", &v));
	assert_true(sh_parse_cpu_pct("100000%", &v));
	assert_false(sh_parse_cpu_pct("0%", &v));
	assert_false(sh_parse_cpu_pct("100001%", &v));
	assert_false(sh_parse_cpu_pct("50", &v));
	assert_false(sh_parse_cpu_pct("%", &v));
	assert_false(sh_parse_cpu_pct("50%%", &v));
	assert_true(sh_parse_io_weight("1", &v));
	assert_true(sh_parse_io_weight("10000", &v));
	assert_int_equal(v, 10000);
	assert_false(sh_parse_io_weight("0", &v));
	assert_false(sh_parse_io_weight("10001", &v));
	assert_false(sh_parse_io_weight("5x", &v));
}

static void test_words_round_trip(void **state)
{
	struct sh_limits l = { .memory_max = 64ull << 20, .has_swap = true, .memory_swap_max = 0,
			       .cpu_max = 20, .io_weight = 50, .private_tmp = 1ull << 30 },
			 back = { 0 };
	char words[SH_LIMIT_WORDS][48];
	size_t n = sh_limits_words(&l, words);

	(void)state;
	assert_int_equal(n, 5);
	assert_string_equal(words[0], "memory-max=67108864");
	assert_string_equal(words[1], "memory-swap-max=0");
	assert_string_equal(words[2], "cpu-max=20%");
	assert_string_equal(words[3], "io-weight=50");
	assert_string_equal(words[4], "private-tmp=1073741824");
	for (size_t i = 0; i < n; i++)
		assert_true(sh_limits_parse_word(words[i], &back));
	assert_memory_equal(&l, &back, sizeof(l));
	assert_false(sh_limits_parse_word("memory-max=lots", &back));
	assert_false(sh_limits_parse_word("pids-max=5", &back));
	assert_false(sh_limits_parse_word("memory-max", &back));
	assert_false(sh_limits_parse_word("private-tmp=0", &back));
	assert_false(sh_limits_parse_word("private-tmp=big", &back));
}

static void test_merge_and_format(void **state)
{
	struct sh_limits base = { .memory_max = 1 << 20, .cpu_max = 20, .io_weight = 50 };
	struct sh_limits over = { .cpu_max = 150, .has_swap = true };
	char b[32];

	(void)state;
	sh_limits_merge(&base, &over);
	assert_int_equal(base.memory_max, 1 << 20);   /* not set over: kept */
	assert_int_equal(base.cpu_max, 150);
	assert_true(base.has_swap);
	assert_int_equal(base.memory_swap_max, 0);
	assert_int_equal(base.io_weight, 50);
	assert_string_equal(sh_fmt_bytes(64ull << 20, b, sizeof(b)), "64M");
	assert_string_equal(sh_fmt_bytes(1536ull << 20, b, sizeof(b)), "1536M");
	assert_string_equal(sh_fmt_bytes(1000, b, sizeof(b)), "1000");
	assert_string_equal(sh_fmt_bytes(0, b, sizeof(b)), "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_cpu_and_io),
		cmocka_unit_test(test_words_round_trip),
		cmocka_unit_test(test_merge_and_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
