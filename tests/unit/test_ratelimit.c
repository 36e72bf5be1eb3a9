// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the violation records' rate limit (user/daemon/
 * ratelimit.c): SH_RL_PER_KEY records a second for one key, and
 * SH_RL_PER_ORIGIN for one tree whatever its keys, the rest handed back as
 * suppression counts naming the key or the tree.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ratelimit.h"
#include "util.h"

struct flushed {
	uint64_t key_counts, budget_counts;
	uint64_t budget_origin;
	int budget_records, key_records;
	uint64_t key_origins;   /* the sum of the key records' origins */
};

static void on_flush(void *ctx, const struct sh_rl_slot *r)
{
	struct flushed *f = ctx;

	if (r->budget) {
		f->budget_counts += r->suppressed;
		f->budget_origin = r->origin;
		assert_string_equal(r->tree, "/sys/fs/cgroup/t");
		f->budget_records++;
	} else {
		f->key_counts += r->suppressed;
		f->key_records++;
		f->key_origins += r->origin;
	}
}

static struct sh_event event(uint64_t origin, unsigned n)
{
	struct sh_event ev = { .origin = origin, .hook = SH_HOOK_FILE, .op = SH_OP_OPEN,
			       .action = SH_EV_DENY };

	ev.path_len = (uint32_t)snprintf(ev.path, sizeof(ev.path), "/tmp/out/f%u", n);
	return ev;
}

static uint64_t second(void)
{
	return sh_now_ns(CLOCK_MONOTONIC) / 1000000000ull;
}

/* Runs one scenario within a single second (three tries: a second that
 * turns over in the middle starts new counts). */
#define WITHIN_A_SECOND(body)                                                  \
	do {                                                                   \
		for (int try = 0;; try++) {                                    \
			uint64_t s0 = second();                                \
			body;                                                  \
			if (second() == s0 || try == 2)                        \
				break;                                         \
		}                                                              \
	} while (0)

/* A tree that makes every refusal new: 100 records, 50 counted under the
 * tree; another tree's records in the same second are not buried. */
static void test_tree_budget(void **state)
{
	struct sh_ratelimit rl;
	struct flushed f;
	int admitted, other;

	(void)state;
	WITHIN_A_SECOND({
		memset(&f, 0, sizeof(f));
		assert_int_equal(sh_rl_init(&rl, on_flush, &f), 0);
		admitted = other = 0;
		for (unsigned i = 0; i < 150; i++) {
			struct sh_event ev = event(7, i);

			admitted += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		for (unsigned i = 0; i < 20; i++) {
			struct sh_event ev = event(8, 1000 + i);

			other += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		sh_rl_flush_all(&rl);
		sh_rl_free(&rl);
	});
	assert_int_equal(admitted, SH_RL_PER_ORIGIN);
	assert_int_equal(other, 20);
	assert_int_equal(f.budget_records, 1);
	assert_int_equal(f.budget_counts, 150 - SH_RL_PER_ORIGIN);
	assert_int_equal(f.budget_origin, 7);
	assert_int_equal(f.key_counts, 0);
}

/* One key repeated: SH_RL_PER_KEY records, the rest counted under the
 * key, and the tree's budget is not spent by them. */
static void test_key_limit(void **state)
{
	struct sh_ratelimit rl;
	struct flushed f;
	int admitted, fresh;

	(void)state;
	WITHIN_A_SECOND({
		memset(&f, 0, sizeof(f));
		assert_int_equal(sh_rl_init(&rl, on_flush, &f), 0);
		admitted = fresh = 0;
		for (unsigned i = 0; i < 50; i++) {
			struct sh_event ev = event(7, 1);

			admitted += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		for (unsigned i = 0; i < SH_RL_PER_ORIGIN - SH_RL_PER_KEY; i++) {
			struct sh_event ev = event(7, 100 + i);

			fresh += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		sh_rl_flush_all(&rl);
		sh_rl_free(&rl);
	});
	assert_int_equal(admitted, SH_RL_PER_KEY);
	assert_int_equal(fresh, SH_RL_PER_ORIGIN - SH_RL_PER_KEY);
	assert_int_equal(f.key_counts, 50 - SH_RL_PER_KEY);
	assert_int_equal(f.budget_records, 0);
}

/* Two trees refused the same target: each has its own key, so the one
 * that floods it folds none of the other's refusals into its count. */
static void test_key_per_tree(void **state)
{
	struct sh_ratelimit rl;
	struct flushed f;
	int a, b;

	(void)state;
	WITHIN_A_SECOND({
		memset(&f, 0, sizeof(f));
		assert_int_equal(sh_rl_init(&rl, on_flush, &f), 0);
		a = b = 0;
		for (unsigned i = 0; i < 40; i++) {
			struct sh_event ev = event(7, 1);

			a += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		for (unsigned i = 0; i < 5; i++) {
			struct sh_event ev = event(8, 1);

			b += sh_rl_admit(&rl, &ev, "/sys/fs/cgroup/t");
		}
		sh_rl_flush_all(&rl);
		sh_rl_free(&rl);
	});
	assert_int_equal(a, SH_RL_PER_KEY);
	assert_int_equal(b, 5);
	assert_int_equal(f.key_records, 1);
	assert_int_equal(f.key_counts, 40 - SH_RL_PER_KEY);
	assert_int_equal(f.key_origins, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_budget),
		cmocka_unit_test(test_key_limit),
		cmocka_unit_test(test_key_per_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
