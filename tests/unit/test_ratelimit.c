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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ratelimit.h"
#include "util.h"

#define TREE "/sys/fs/cgroup/t"

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
		assert_string_equal(r->tree, TREE);
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


/* n refusals of one tree: each of a new name from first, or (same) all
 * of the name first. */
struct feed {
	uint64_t origin;
	unsigned first, n;
	bool same;
};

/* The feeds in turn through a fresh limit, within one second (three
 * tries: a second that turns over midway starts new counts), then
 * everything handed back: how many of each feed were admitted, and what
 * was counted, in f. */
static void run(const struct feed *fd, int nfeeds, int *admitted, struct flushed *f)
{
	for (int try = 0; try < 3; try++) {
		uint64_t s0 = second();
		struct sh_ratelimit rl;

		memset(f, 0, sizeof(*f));
		assert_int_equal(sh_rl_init(&rl, on_flush, f), 0);
		for (int k = 0; k < nfeeds; k++) {
			admitted[k] = 0;
			for (unsigned i = 0; i < fd[k].n; i++) {
				struct sh_event ev =
					event(fd[k].origin, fd[k].same ? fd[k].first : fd[k].first + i);

				admitted[k] += sh_rl_admit(&rl, &ev, TREE);
			}
		}
		sh_rl_flush_all(&rl);
		sh_rl_free(&rl);
		if (second() == s0)
			return;
	}
}

/* A tree that makes every refusal new: SH_RL_PER_ORIGIN records, the
 * rest counted under the tree; another tree's records in the same second
 * are not buried. */
static void test_tree_budget(void **state)
{
	const struct feed fd[] = { { 7, 0, 150, false }, { 8, 1000, 20, false } };
	struct flushed f;
	int admitted[2];

	(void)state;
	run(fd, 2, admitted, &f);
	assert_int_equal(admitted[0], SH_RL_PER_ORIGIN);
	assert_int_equal(admitted[1], 20);
	assert_int_equal(f.budget_records, 1);
	assert_int_equal(f.budget_counts, 150 - SH_RL_PER_ORIGIN);
	assert_int_equal(f.budget_origin, 7);
	assert_int_equal(f.key_counts, 0);
}

/* One key repeated: SH_RL_PER_KEY records, the rest counted under the
 * key, and the tree's budget is not spent by them. */
static void test_key_limit(void **state)
{
	const struct feed fd[] = { { 7, 1, 50, true },
				   { 7, 100, SH_RL_PER_ORIGIN - SH_RL_PER_KEY, false } };
	struct flushed f;
	int admitted[2];

	(void)state;
	run(fd, 2, admitted, &f);
	assert_int_equal(admitted[0], SH_RL_PER_KEY);
	assert_int_equal(admitted[1], SH_RL_PER_ORIGIN - SH_RL_PER_KEY);
	assert_int_equal(f.key_counts, 50 - SH_RL_PER_KEY);
	assert_int_equal(f.budget_records, 0);
}

/* Two trees refused the same target: each has its own key, so the one
 * that floods it folds none of the other's refusals into its count. */
static void test_key_per_tree(void **state)
{
	const struct feed fd[] = { { 7, 1, 40, true }, { 8, 1, 5, true } };
	struct flushed f;
	int admitted[2];

	(void)state;
	run(fd, 2, admitted, &f);
	assert_int_equal(admitted[0], SH_RL_PER_KEY);
	assert_int_equal(admitted[1], 5);
	assert_int_equal(f.key_records, 1);
	assert_int_equal(f.key_counts, 40 - SH_RL_PER_KEY);
	assert_int_equal(f.key_origins, 7);
}

/* Two trees whose budgets have one place, their records in turn: each
 * keeps a budget of its own (they took the place from each other at
 * every record, and both were let through without end). */
static void test_budget_shared_place(void **state)
{
	struct sh_ratelimit rl;
	struct flushed f;
	int a = 0, b = 0;

	(void)state;
	for (int try = 0; try < 3; try++) {
		uint64_t s0 = second();

		memset(&f, 0, sizeof(f));
		assert_int_equal(sh_rl_init(&rl, on_flush, &f), 0);
		a = b = 0;
		for (unsigned i = 0; i < 150; i++) {
			struct sh_event ea = event(7, i), eb = event(7 + SH_RL_ORIGINS, 1000 + i);

			a += sh_rl_admit(&rl, &ea, TREE);
			b += sh_rl_admit(&rl, &eb, TREE);
		}
		sh_rl_flush_all(&rl);
		sh_rl_free(&rl);
		if (second() == s0)
			break;
	}
	assert_int_equal(a, SH_RL_PER_ORIGIN);
	assert_int_equal(b, SH_RL_PER_ORIGIN);
	assert_int_equal(f.budget_records, 2);
	assert_int_equal(f.budget_counts, 2 * (150 - SH_RL_PER_ORIGIN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_budget),
		cmocka_unit_test(test_key_limit),
		cmocka_unit_test(test_key_per_tree),
		cmocka_unit_test(test_budget_shared_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
