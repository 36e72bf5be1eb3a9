// SPDX-License-Identifier: GPL-2.0
/*
 * The violation records' rate limit: a fixed table of per-key counts for
 * the current second (see ratelimit.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "ratelimit.h"
#include "util.h"

int sh_rl_init(struct sh_ratelimit *rl, sh_rl_flush_fn flush, void *ctx)
{
	memset(rl, 0, sizeof(*rl));
	rl->slots = calloc(SH_RL_SLOTS, sizeof(*rl->slots));
	rl->origins = calloc(SH_RL_ORIGINS, sizeof(*rl->origins));
	if (!rl->slots || !rl->origins) {
		sh_rl_free(rl);
		return -ENOMEM;
	}
	rl->flush = flush;
	rl->ctx = ctx;
	return 0;
}

void sh_rl_free(struct sh_ratelimit *rl)
{
	free(rl->slots);
	free(rl->origins);
	rl->slots = NULL;
	rl->origins = NULL;
}

static uint64_t rl_hash(const struct sh_event *ev)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	uint32_t n = ev->path_len < sizeof(ev->path) ? ev->path_len : sizeof(ev->path);
	const uint8_t hdr[] = { ev->slot, (uint8_t)ev->policy, (uint8_t)(ev->policy >> 8),
				(uint8_t)ev->hook, (uint8_t)ev->op, (uint8_t)ev->action };

	for (size_t i = 0; i < sizeof(hdr); i++)
		h = (h ^ hdr[i]) * 1099511628211ull;
	/* Each tree its own keys: one that floods a target folds no other
	 * tree's refusals of it into its count. */
	h = (h ^ ev->origin) * 1099511628211ull;
	/* A network refusal's port and protocol, or its socket kind, are not
	 * in its path; an IPC object's id is in op_flags. */
	if (ev->hook == SH_HOOK_NET || ev->hook == SH_HOOK_IPC)
		h = ((h ^ ev->op_flags) * 1099511628211ull ^ ev->target_pid) * 1099511628211ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)ev->path[i]) * 1099511628211ull;
	if (ev->hook == SH_HOOK_SIGNAL || ev->hook == SH_HOOK_PTRACE || ev->hook == SH_HOOK_TASK)
		h = (h ^ ev->target_pid) * 1099511628211ull;
	if (ev->hook == SH_HOOK_CAPABILITY)
		h = (h ^ ev->op_flags) * 1099511628211ull;
	return h ? h : 1;
}

static void rl_flush_slot(struct sh_ratelimit *rl, struct sh_rl_slot *r)
{
	if (!r->suppressed)
		return;
	rl->flush(rl->ctx, r);
	r->suppressed = 0;
}

/* The slot now counts for key: what a suppression record names. */
static void rl_take(struct sh_rl_slot *r, uint64_t key, const struct sh_event *ev,
		    const char *tree)
{
	uint32_t n = ev->path_len < SH_RL_TARGET ? ev->path_len : SH_RL_TARGET;

	r->key = key;
	r->origin = ev->origin;
	snprintf(r->tree, sizeof(r->tree), "%s", tree ? tree : "?");
	r->window = UINT64_MAX;   /* a second of its own from now (rl_count) */
	r->policy = ev->policy;
	r->slot = ev->slot;
	r->hook = ev->hook;
	r->op = ev->op;
	if (ev->hook == SH_HOOK_SIGNAL || ev->hook == SH_HOOK_PTRACE || ev->hook == SH_HOOK_TASK)
		n = snprintf(r->target, SH_RL_TARGET, "%u", ev->target_pid);
	else if (ev->hook == SH_HOOK_CAPABILITY)
		n = snprintf(r->target, SH_RL_TARGET, "%s",
			     sh_cap_name(ev->op_flags) ? sh_cap_name(ev->op_flags) : "?");
	else
		memcpy(r->target, ev->path, n);
	r->target_len = n;
}

static uint64_t now_second(void)
{
	return sh_now_ns(CLOCK_MONOTONIC) / 1000000000ull;
}

/* Within the second's count of slot r for key (taken over, and what it
 * held handed back, where another key had it)? */
static bool rl_count(struct sh_ratelimit *rl, struct sh_rl_slot *r, uint64_t key, uint64_t now,
		     uint32_t limit)
{
	if (r->key != key || r->window != now) {
		rl_flush_slot(rl, r);
		r->key = key;
		r->window = now;
		r->logged = 0;
	}
	if (r->logged < limit) {
		r->logged++;
		return true;
	}
	r->suppressed++;
	rl->suppressed_total++;
	return false;
}

/*
 * The budget slot of tree okey: its own, among SH_RL_PROBE slots from its
 * place; else one whose second is over, taken (what it held handed back).
 * Never one another tree counts in this second: two trees taking a slot
 * from each other in turn would each find a fresh budget at every record.
 * All of them busy: the tree's place, shared (its records count against
 * that tree's budget, and are named by it).
 */
static struct sh_rl_slot *budget_slot(struct sh_ratelimit *rl, const struct sh_event *ev,
				      const char *tree, uint64_t okey, uint64_t now, bool *shared)
{
	struct sh_rl_slot *o, *stale = NULL;

	*shared = false;
	for (unsigned k = 0; k < SH_RL_PROBE; k++) {
		o = &rl->origins[(okey + k) % SH_RL_ORIGINS];
		if (o->key == okey)
			return o;
		if (!stale && o->window != now)
			stale = o;
	}
	if (!stale) {
		*shared = true;
		return &rl->origins[okey % SH_RL_ORIGINS];
	}
	rl_flush_slot(rl, stale);
	*stale = (struct sh_rl_slot){ .budget = true, .origin = ev->origin,
				      .policy = ev->policy, .slot = ev->slot };
	snprintf(stale->tree, sizeof(stale->tree), "%s", tree ? tree : "?");
	return stale;
}

bool sh_rl_admit(struct sh_ratelimit *rl, const struct sh_event *ev, const char *tree)
{
	uint64_t key = rl_hash(ev), now = now_second(), okey = ev->origin ? ev->origin : 1;
	struct sh_rl_slot *r = &rl->slots[key % SH_RL_SLOTS], *o;
	bool shared;

	if (r->key != key) {
		rl_flush_slot(rl, r);
		rl_take(r, key, ev, tree);
	}
	if (!rl_count(rl, r, key, now, SH_RL_PER_KEY))
		return false;
	/* The key's own record counts against its tree's budget too. */
	o = budget_slot(rl, ev, tree, okey, now, &shared);
	return rl_count(rl, o, shared ? o->key : okey, now, SH_RL_PER_ORIGIN);
}

void sh_rl_flush_old(struct sh_ratelimit *rl)
{
	uint64_t now = now_second();

	for (unsigned i = 0; i < SH_RL_SLOTS; i++)
		if (rl->slots[i].suppressed && rl->slots[i].window != now)
			rl_flush_slot(rl, &rl->slots[i]);
	for (unsigned i = 0; i < SH_RL_ORIGINS; i++)
		if (rl->origins[i].suppressed && rl->origins[i].window != now)
			rl_flush_slot(rl, &rl->origins[i]);
}

void sh_rl_flush_all(struct sh_ratelimit *rl)
{
	for (unsigned i = 0; i < SH_RL_SLOTS; i++)
		rl_flush_slot(rl, &rl->slots[i]);
	for (unsigned i = 0; i < SH_RL_ORIGINS; i++)
		rl_flush_slot(rl, &rl->origins[i]);
}
