// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcer object: opens the programs (adopting a previous daemon's
 * pinned state, resuming its programs where they are this build's), rest
 * and wake, the event ring and the counters (marks.c: the daemon's own
 * marks in the maps; apply.c: the policy set in force; tags.c: tags).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "compile.h"
#include "enforcer.h"
#include "enforcer_int.h"
#include "pin.h"
#include "probe.h"
#include "sharness.skel.h"
#include "util.h"


static int on_sample(void *ctx, void *data, size_t size)
{
	struct sh_enforcer *e = ctx;
	struct sh_event ev;
	size_t room;

	if (size <= SH_EVENT_HDR_SIZE) {
		sh_log("a ring record of %zu bytes is shorter than an event: skipped", size);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	memcpy(&ev, data, size < sizeof(ev) ? size : sizeof(ev));
	room = (size < sizeof(ev) ? size : sizeof(ev)) - SH_EVENT_HDR_SIZE - 1;
	if (room > sizeof(ev.path) - 1)
		room = sizeof(ev.path) - 1;
	if (ev.path_len > room)
		ev.path_len = room;
	ev.path[ev.path_len] = 0;
	return e->fn ? e->fn(e->ctx, &ev) : 0;
}

/* Runtime tags (tag, run) survive a daemon restart in the state file. */
void sh_enforcer_save_state(struct sh_enforcer *e)
{
	sh_pin_save_tags(e->state_path, e->tags, e->ntags, e->slot, e->names[e->slot],
			 &e->unjudged);
}

/* Every runtime tag in the adopted map or whose cgroup is still there:
 * the first apply writes them all. */
static void restore_state(struct sh_enforcer *e)
{
	sh_pin_restore_tags(e->state_path, e->adopted ? bpf_map__fd(e->skel->maps.tags) : -1,
			    &e->tags, &e->ntags);
}

/*
 * Reuse the maps of the previous daemon's generation old_gen: tags, rules,
 * task membership and unread events carry over. Maps that do not fit this
 * build are left alone and a fresh skeleton is opened instead.
 */
static int adopt(struct sh_enforcer *e, unsigned old_gen)
{
	int err = sh_pin_adopt_maps(e->skel->obj, e->pin_dir, old_gen);

	if (!err) {
		e->adopted = true;
		return 0;
	}
	/* Start fresh; the old programs stay attached until ours are. */
	sh_log("cannot reuse the pinned maps of %s/gen-%u (%s): starting with "
	       "fresh maps; tags are restored from %s", e->pin_dir, old_gen,
	       strerror(-err), e->state_path ? e->state_path : "(nowhere)");
	sharness_bpf__destroy(e->skel);
	return sh_probe_open(&e->skel);
}

/* The state maps pinned as generation gen, with this build's mark. */
static int pin_maps(struct sh_enforcer *e, unsigned gen)
{
	int err = sh_pin_maps(e->skel->skeleton, e->pin_dir, gen);

	if (err) {
		sh_log("cannot pin under %s: %s (is bpffs mounted? mount -t bpf bpf /sys/fs/bpf)",
		       e->pin_dir, strerror(-err));
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
	/* The programs attached on demand, so that the next daemon may
	 * resume them unlinked (demand.c). */
	err = sh_demand_pin_progs(e, gen);
	if (err) {
		sh_log("cannot pin the programs under %s/gen-%u: %s", e->pin_dir, gen,
		       strerror(-err));
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
	/* Without the mark the next daemon loads its own programs. */
	err = sh_resume_mark(e->skel, &e->res, e->pin_dir, gen);
	if (err)
		sh_log("cannot mark %s/gen-%u with this build: %s (the next daemon will load "
		       "its programs)", e->pin_dir, gen, strerror(-err));
	return 0;
}

/*
 * Take over the programs of generation old_gen (sh_resume_check said they
 * are ours): load the constants, pin the maps and links as generation
 * old_gen + 1. The older generations go once the first apply has tagged,
 * as after a load; old_gen's links are ours, so the programs stay
 * attached throughout.
 */
static int resume_and_pin(struct sh_enforcer *e, unsigned old_gen,
			  const struct sh_unjudged_seen *seen)
{
	uint64_t t0 = sh_now_ns(CLOCK_MONOTONIC) / 1000000, sum = 0;
	unsigned gen = old_gen + 1, n = 0;
	int err = sharness_bpf__load(e->skel);

	if (!err) {
		/* A resume verifies nothing: this only frees the log buffers. */
		sh_probe_verifier_stats(e->skel, stderr);
		err = pin_maps(e, gen);
	}
	if (err)
		return err;
	err = sh_resume_links(e->skel->skeleton, e->pin_dir, gen, &e->res);
	if (err) {
		sh_log("cannot pin the resumed links under %s/gen-%u: %s", e->pin_dir, gen,
		       strerror(-err));
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
	for (int i = 0; i < SH_MAX_PROGS; i++)
		if (e->res.prog_fd[i] >= 0) {
			sum += e->res.base[i];
			n++;
		}
	/* Calls the programs let through that their daemons did not report:
	 * the last report is of the generation the state file names, which
	 * linked these programs too unless it is older than them. */
	if (seen->gen && (seen->gen == old_gen ||
			  sh_resume_gen_ours(e->skel->skeleton, e->pin_dir, seen->gen, &e->res)))
		e->resumed_before = sum > seen->reported ? sum - seen->reported : 0;
	else
		e->resumed_before = sum;
	e->old_seen = *seen;
	e->gen = gen;
	e->attached = true;
	/* The last daemon's word on the count is not taken: checked again. */
	err = sh_moves_live(e, true);
	if (err)
		sh_log("cannot mark the count of directory moves: %s", strerror(-err));
	e->attach_ms = (unsigned)(sh_now_ns(CLOCK_MONOTONIC) / 1000000 - t0);
	e->old_gens_pending = true;
	sh_log("resumed the %u programs of %s/gen-%u (same build, same kernel): nothing "
	       "verified, nothing detached", n, e->pin_dir, old_gen);
	return 0;
}

/* Load and attach ours, pin them as generation gen and only then remove
 * the older generations: there is no moment without enforcement. */
static int attach_and_pin(struct sh_enforcer *e, unsigned gen,
			  const struct sh_unjudged_seen *seen)
{
	int err = sharness_bpf__load(e->skel);

	if (err)
		return err;
	sh_probe_verifier_stats(e->skel, stderr);
	err = pin_maps(e, gen);
	if (err)
		return err;
	e->gen = gen;
	err = sh_enforcer_wake(e);
	if (err) {
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
	/* Ours are attached and pinned: older generations can go (what
	 * their programs let through unrun is reported, sh_enforcer_unjudged),
	 * but only once the first apply has written every restored tag: until
	 * then the old programs, on their own maps, hold the trees, and a
	 * first apply that fails leaves them holding (fail closed). */
	e->old_seen = *seen;
	e->old_gens_pending = true;
	return 0;
}

/* Resume old_gen's programs where they are this build's (sh_resume_check),
 * else load and attach ours. */
static int start_programs(struct sh_enforcer *e, unsigned old_gen,
			  const struct sh_unjudged_seen *seen)
{
	int err;

	if (!e->adopted || !sh_resume_check(e->skel, e->pin_dir, old_gen, &e->res))
		return attach_and_pin(e, old_gen + 1, seen);
	err = resume_and_pin(e, old_gen, seen);
	if (!err)
		return 0;
	/* Not taken over after all (old_gen's links still hold): a fresh
	 * skeleton on the same maps loads ours. */
	sh_log("cannot resume the programs of %s/gen-%u (%s): loading them", e->pin_dir, old_gen,
	       strerror(-err));
	sharness_bpf__destroy(e->skel);
	e->skel = NULL;
	sh_resume_release(&e->res);
	e->resumed_before = 0;
	e->adopted = false;
	err = sh_probe_open(&e->skel);
	if (!err)
		err = adopt(e, old_gen);
	return err ? err : attach_and_pin(e, old_gen + 1, seen);
}

void sh_enforcer_retire_old(struct sh_enforcer *e)
{
	uint32_t ours[SH_MAX_PROGS];
	size_t n = 0;

	if (!e->old_gens_pending)
		return;
	e->old_gens_pending = false;
	for (int i = 0; i < SH_MAX_PROGS; i++)
		if (e->res.prog_fd[i] >= 0)
			ours[n++] = e->res.prog_id[i];
	/* Resumed: what the programs taken over let through is counted
	 * already (resumed_before, their base), in whichever generation
	 * links them. */
	e->unjudged_before = sh_pin_remove_other_gens(e->pin_dir, e->gen, &e->old_seen, ours, n) +
			     e->resumed_before;
}

int sh_enforcer_wake(struct sh_enforcer *e)
{
	uint64_t t0 = (sh_now_ns(CLOCK_MONOTONIC) / 1000000);
	int err;

	e->idle_since_ms = 0;
	if (e->attached)
		return 0;
	/* Every program but those no policy in force needs (demand.c). */
	err = sh_demand_attach(e);
	if (!err)
		err = sh_moves_live(e, true);
	if (err) {
		sh_log("cannot attach the programs: %s", strerror(-err));
		sh_pin_drop_links(e->skel->skeleton);
		return err;
	}
	e->attached = true;
	e->attach_ms = (unsigned)((sh_now_ns(CLOCK_MONOTONIC) / 1000000) - t0);
	return 0;
}

/*
 * Detached only with nothing tagged: no tree, and so no member anywhere
 * (a task is held only while its tree's cgroup is tagged). A link's last
 * close waits on the kernel's tracing machinery (ftrace and RCU tasks:
 * about 140 ms a link under emulation), so a thread of the daemon closes
 * them while its loop goes on; the next wake, and the daemon's end, wait
 * for it. Without a thread the loop closes them itself.
 */
static void rest(struct sh_enforcer *e)
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;
	int err;

	if (!e->attached || e->ntags || e->skel->bss->ntagged)
		return;
	/* Not live before its counter goes: stays attached where it cannot
	 * be told. */
	if (sh_moves_live(e, false)) {
		sh_log("cannot mark the count of directory moves unlive: %s; staying attached",
		       strerror(errno));
		return;
	}
	sh_links_close_wait(e);
	for (int i = 0; i < s->prog_cnt && e->ndetaching < SH_MAX_PROGS; i++) {
		struct bpf_link **l = s->progs[i].link;

		if (!*l)
			continue;
		/* A pin that stays keeps its link ours and attached: the
		 * next wake links the others beside it (demand.c). One
		 * removed already is no pin. */
		err = bpf_link__unpin(*l);
		if (err && err != -ENOENT) {
			sh_log("cannot unpin the link of %s: %s; it stays attached",
			       bpf_program__name(*s->progs[i].prog), strerror(-err));
			continue;
		}
		e->detaching[e->ndetaching++] = *l;
		*l = NULL;
	}
	e->attached = false;
	sh_links_close(e);
}

void sh_enforcer_rest_if_idle(struct sh_enforcer *e, uint64_t now_ms)
{
	if (e->ntags || e->skel->bss->ntagged) {
		e->idle_since_ms = 0;
		return;
	}
	if (!e->idle_since_ms)
		e->idle_since_ms = now_ms;
	if (e->detach_idle < 0)
		return;
	if (now_ms - e->idle_since_ms >= (uint64_t)e->detach_idle * 1000)
		rest(e);
}

/* Links gone in the kernel: detached, and no detach still going on. */
bool sh_enforcer_resting(struct sh_enforcer *e)
{
	if (e->detach_running && __atomic_load_n(&e->detach_done, __ATOMIC_ACQUIRE))
		sh_links_close_wait(e);
	return !e->attached && !e->detach_running;
}

bool sh_enforcer_attached(struct sh_enforcer *e, unsigned *attach_ms)
{
	if (attach_ms)
		*attach_ms = e->attach_ms;
	return e->attached;
}

void sh_enforcer_set_detach_idle(struct sh_enforcer *e, int seconds)
{
	e->detach_idle = seconds;
}

int sh_enforcer_open(struct sh_enforcer **out, sh_event_fn fn, void *ctx,
		     const char *pin_dir, const char *state_path)
{
	struct sh_unjudged_seen seen;
	struct sh_enforcer *e;
	unsigned old_gen;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	sh_resume_init(&e->res);
	e->fn = fn;
	e->ctx = ctx;
	e->pin_dir = strdup(pin_dir);
	e->state_path = state_path ? strdup(state_path) : NULL;
	if (!e->pin_dir || (state_path && !e->state_path)) {
		err = -ENOMEM;
		goto fail;
	}
	err = sh_probe_open(&e->skel);
	if (err)
		goto fail;
	old_gen = sh_pin_newest_gen(pin_dir);
	if (old_gen) {
		err = adopt(e, old_gen);
		if (err)
			goto fail;
	}
	/* What the daemon before reported of its generation's unjudged
	 * calls, read before its successor's state replaces it. */
	sh_pin_restore_unjudged(e->state_path, &seen);
	err = start_programs(e, old_gen, &seen);
	if (err)
		goto fail;
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_sample, e, NULL);
	if (!e->rb) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	e->detach_idle = SH_DETACH_IDLE_DEFAULT;
	if (e->adopted) {
		e->slot = e->skel->bss->active_slot & 1;
		restore_state(e);
		/* Events in the adopted ring name their policy by slot and id. */
		sh_pin_restore_names(e->state_path, e->names);
	} else {
		e->slot = 0;
		e->skel->bss->active_slot = 0;
		if (old_gen)
			restore_state(e);
	}
	/* The policies in force in adopted maps have their programs on
	 * demand linked from the start, not from the first apply. */
	if (e->adopted) {
		err = sh_demand_need(e, sh_demand_slot(e, e->slot));
		if (err) {
			/* The generations before still hold the trees. */
			sh_pin_remove_gen(e->pin_dir, e->gen);
			goto fail;
		}
	}
	*out = e;
	return 0;
fail:
	sh_enforcer_destroy(e);
	return err;
}

/* Every program of the skeleton, loaded or not, has its place. */
#define SH_NPROGS (sizeof(((struct sharness_bpf *)0)->progs) / sizeof(struct bpf_program *))
_Static_assert(SH_NPROGS < SH_MAX_PROGS, "raise SH_MAX_PROGS (enforcer.h)");

ssize_t sh_enforcer_unjudged(struct sh_enforcer *e, struct sh_prog_count out[SH_MAX_PROGS])
{
	const struct bpf_object_skeleton *s = e->skel->skeleton;
	size_t n = 0;

	if (e->unjudged_before)
		out[n++] = (struct sh_prog_count){ SH_EARLIER_GEN, e->unjudged_before };
	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		struct bpf_program *p = *s->progs[i].prog;
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = e->res.on ? e->res.prog_fd[i] : bpf_program__fd(p);

		if (fd < 0)
			continue;   /* not loaded: this kernel has no such hook */
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		/* A resumed program's calls before it was taken are its
		 * predecessor's (unjudged_before). */
		if (n < SH_MAX_PROGS)
			out[n++] = (struct sh_prog_count){ bpf_program__name(p),
							   info.recursion_misses - e->res.base[i] };
	}
	return (ssize_t)n;
}

/* total: reported of this daemon's counts; kept with what the programs
 * had counted when resumed, so that the state file holds their whole. */
void sh_enforcer_unjudged_reported(struct sh_enforcer *e, uint64_t total)
{
	for (int i = 0; i < SH_MAX_PROGS; i++)
		if (e->res.prog_fd[i] >= 0)
			total += e->res.base[i];
	if (e->unjudged.gen == e->gen && e->unjudged.reported == total)
		return;
	e->unjudged.gen = e->gen;
	e->unjudged.reported = total;
	sh_enforcer_save_state(e);
}

bool sh_enforcer_adopted(struct sh_enforcer *e)
{
	return e->adopted;
}

bool sh_enforcer_resumed(struct sh_enforcer *e)
{
	return e->res.on;
}

/* Detach everything: unpin, then close (the links go with their last fd). */
int sh_enforcer_unload(struct sh_enforcer *e)
{
	int err = sh_pin_unload(e->pin_dir);

	if (e->state_path)
		unlink(e->state_path);
	return err;
}

void sh_enforcer_free_tags(struct sh_tag_entry *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].path);
		free(t[i].policy);
	}
	free(t);
}

void sh_enforcer_destroy(struct sh_enforcer *e)
{
	if (!e)
		return;
	/* A detach under way ends with the daemon, not after it. */
	sh_links_close_wait(e);
	ring_buffer__free(e->rb);
	sharness_bpf__destroy(e->skel);
	sh_resume_release(&e->res);
	for (int s = 0; s < SH_SLOTS; s++)
		for (int i = 0; i < SH_MAX_POLICIES; i++)
			free(e->names[s][i]);
	sh_policy_set_free(&e->set);
	sh_enforcer_free_tags(e->tags, e->ntags);
	sh_enforcer_free_tags(e->ptags, e->nptags);
	free(e->pin_dir);
	free(e->state_path);
	free(e);
}

int sh_enforcer_events_fd(struct sh_enforcer *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

int sh_enforcer_consume(struct sh_enforcer *e)
{
	return ring_buffer__consume(e->rb);
}

/*
 * The kernel's counts, summed over the CPUs: the whole table in one
 * BPF_MAP_LOOKUP_BATCH (every status and every tick of the daemon reads
 * it; an entry a call cost about 0.1 ms under emulation), else an entry a
 * call, as kernels before 5.6 have it.
 */
void sh_enforcer_counters(struct sh_enforcer *e, uint64_t out[SH_CNT_MAX])
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(e->skel->maps.counters);
	uint32_t keys[SH_CNT_MAX], n = SH_CNT_MAX, next;
	uint64_t *vals;

	memset(out, 0, sizeof(uint64_t) * SH_CNT_MAX);
	if (ncpu <= 0)
		return;
	vals = calloc((size_t)ncpu * SH_CNT_MAX, sizeof(*vals));
	if (!vals)
		return;
	if (!bpf_map_lookup_batch(fd, NULL, &next, keys, vals, &n, &opts) || errno == ENOENT) {
		for (uint32_t i = 0; i < n && i < SH_CNT_MAX; i++) {
			if (keys[i] >= SH_CNT_MAX)
				continue;
			for (int c = 0; c < ncpu; c++)
				out[keys[i]] += vals[(size_t)i * ncpu + c];
		}
		free(vals);
		return;
	}
	for (uint32_t i = 0; i < SH_CNT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
}

const char *sh_enforcer_policy_name(struct sh_enforcer *e, unsigned slot, unsigned id)
{
	if (slot >= SH_SLOTS || id >= SH_MAX_POLICIES || !e->names[slot][id])
		return NULL;
	return e->names[slot][id];
}

const struct sh_policy_set *sh_enforcer_policies(struct sh_enforcer *e)
{
	return &e->set;
}

const struct sh_tag_entry *sh_enforcer_tags(struct sh_enforcer *e, size_t *n)
{
	*n = e->ntags;
	return e->tags;
}

bool sh_enforcer_tagged_id(struct sh_enforcer *e, uint64_t id)
{
	struct sh_cgroup_tag t;

	for (size_t i = 0; i < e->ntags; i++)
		if (e->tags[i].cgid == id)
			return true;
	return !bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.tags), &id, &t) &&
	       t.policy[e->slot] != SH_POLICY_NONE;
}

void sh_bump_gen(struct sh_enforcer *e)
{
	__atomic_add_fetch(&e->skel->bss->tag_gen, 1, __ATOMIC_SEQ_CST);
}
