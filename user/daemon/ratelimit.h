/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate limit of violation records: per (tree, policy, hook, op, target) at most
 * SH_RL_PER_KEY records a second reach the log, and per tree (the tagged
 * cgroup whose policy applied) at most SH_RL_PER_ORIGIN, whatever their
 * keys: a tree that makes every refusal new (a fresh name each time)
 * neither fills the log's file system through the daemon nor buries
 * another tree's records. The rest are counted and handed back as one
 * suppression count a key or a tree when the second is over. Fixed tables
 * keep memory bounded whatever a storm looks like; a slot taken over by
 * another key or tree first hands back what it had suppressed.
 */
#ifndef SH_RATELIMIT_H
#define SH_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "sharness.h"

#define SH_RL_SLOTS    1024
#define SH_RL_PER_KEY  10
#define SH_RL_ORIGINS  64
#define SH_RL_PER_ORIGIN 100
#define SH_RL_PROBE    4     /* budget slots a tree may take, from its place */
#define SH_RL_TARGET   256
#define SH_RL_TREE     192

/* One key's count in its current second; or (budget) one tree's, every
 * key of it. Each names its tree (origin, and its path when the slot was
 * taken: a run may be over when the count is written). */
struct sh_rl_slot {
	uint64_t key;
	uint64_t origin;
	bool budget;
	uint64_t window;        /* CLOCK_MONOTONIC second */
	uint32_t logged;
	uint64_t suppressed;
	uint16_t policy;
	uint8_t slot, hook, op;
	char target[SH_RL_TARGET];  /* not NUL-terminated */
	uint32_t target_len;
	char tree[SH_RL_TREE];      /* NUL-terminated, "?" if unknown */
};

/* Called with a slot that suppressed records (r->suppressed > 0), before
 * its count is reset. */
typedef void (*sh_rl_flush_fn)(void *ctx, const struct sh_rl_slot *r);

struct sh_ratelimit {
	struct sh_rl_slot *slots;
	struct sh_rl_slot *origins;     /* SH_RL_ORIGINS: the trees' budgets */
	uint64_t suppressed_total;
	sh_rl_flush_fn flush;
	void *ctx;
};

/* 0 or -ENOMEM. */
int sh_rl_init(struct sh_ratelimit *rl, sh_rl_flush_fn flush, void *ctx);
void sh_rl_free(struct sh_ratelimit *rl);
/* true: log this event; false: counted as suppressed. tree: the path of
 * the event's tree (NULL if unknown), which its budget's count names. */
bool sh_rl_admit(struct sh_ratelimit *rl, const struct sh_event *ev, const char *tree);
/* Hands back every suppression count of a second that is over. */
void sh_rl_flush_old(struct sh_ratelimit *rl);
/* Hands back every suppression count (the daemon is stopping). */
void sh_rl_flush_all(struct sh_ratelimit *rl);

#endif
