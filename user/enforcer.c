// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcer object: opens the programs (adopting a previous daemon's
 * pinned state), the daemon's own marks in the maps, the event ring and
 * the counters, and the policy set and tags in force with their switch.
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

/* Load and attach ours, pin them as generation gen and only then remove
 * the older generations: there is no moment without enforcement. */
static int attach_and_pin(struct sh_enforcer *e, unsigned gen,
			  const struct sh_unjudged_seen *seen)
{
	int err = sharness_bpf__load(e->skel);

	if (err)
		return err;
	err = sh_pin_maps(e->skel->skeleton, e->pin_dir, gen);
	if (err) {
		sh_log("cannot pin under %s: %s (is bpffs mounted? mount -t bpf bpf /sys/fs/bpf)",
		       e->pin_dir, strerror(-err));
		sh_pin_remove_gen(e->pin_dir, gen);
		return err;
	}
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

void sh_enforcer_retire_old(struct sh_enforcer *e)
{
	if (!e->old_gens_pending)
		return;
	e->old_gens_pending = false;
	e->unjudged_before = sh_pin_remove_other_gens(e->pin_dir, e->gen, &e->old_seen);
}

/* The links a rest took from the skeleton, closed one by one. */
static void *detach_links(void *arg)
{
	struct sh_enforcer *e = arg;

	for (int i = 0; i < e->ndetaching; i++)
		bpf_link__destroy(e->detaching[i]);
	__atomic_store_n(&e->detach_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Waits for a rest's detach, if one is going on. */
static void detach_wait(struct sh_enforcer *e)
{
	if (!e->detach_running)
		return;
	pthread_join(e->detach_thread, NULL);
	e->detach_running = false;
	e->ndetaching = 0;
}

int sh_enforcer_wake(struct sh_enforcer *e)
{
	uint64_t t0 = (sh_now_ns(CLOCK_MONOTONIC) / 1000000);
	int err;

	e->idle_since_ms = 0;
	if (e->attached)
		return 0;
	/* A detach still going on: our programs may not be linked twice. */
	detach_wait(e);
	err = sharness_bpf__attach(e->skel);
	if (!err)
		err = sh_pin_links(e->skel->skeleton, e->pin_dir, e->gen);
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

	if (!e->attached || e->ntags || e->skel->bss->ntagged)
		return;
	e->ndetaching = 0;
	for (int i = 0; i < s->prog_cnt && e->ndetaching < SH_MAX_PROGS; i++) {
		struct bpf_link **l = s->progs[i].link;

		if (!*l)
			continue;
		bpf_link__unpin(*l);
		e->detaching[e->ndetaching++] = *l;
		*l = NULL;
	}
	e->attached = false;
	e->detach_done = false;
	e->detach_running = pthread_create(&e->detach_thread, NULL, detach_links, e) == 0;
	if (!e->detach_running)
		detach_links(e);
}

/* Links gone in the kernel: detached, and no detach still going on. */
bool sh_enforcer_resting(struct sh_enforcer *e)
{
	if (e->detach_running && __atomic_load_n(&e->detach_done, __ATOMIC_ACQUIRE))
		detach_wait(e);
	return !e->attached && !e->detach_running;
}

void sh_enforcer_idle_tick(struct sh_enforcer *e)
{
	uint64_t now = (sh_now_ns(CLOCK_MONOTONIC) / 1000000);

	if (e->ntags || e->skel->bss->ntagged) {
		e->idle_since_ms = 0;
		return;
	}
	if (!e->idle_since_ms)
		e->idle_since_ms = now;
	if (e->detach_idle < 0)
		return;
	if (now - e->idle_since_ms >= (uint64_t)e->detach_idle * 1000)
		rest(e);
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
	err = attach_and_pin(e, old_gen + 1, &seen);
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
	*out = e;
	return 0;
fail:
	sh_enforcer_destroy(e);
	return err;
}

void sh_enforcer_set_daemon(struct sh_enforcer *e, uint32_t tgid)
{
	e->skel->bss->daemon_tgid = tgid;
}

void sh_enforcer_set_mmap_min(struct sh_enforcer *e, uint64_t addr)
{
	e->skel->bss->mmap_min_addr = addr;
}

void sh_enforcer_set_host_ipc_ns(struct sh_enforcer *e, uint32_t inum)
{
	e->skel->bss->host_ipc_ns = inum;
}

void sh_enforcer_set_control_socket(struct sh_enforcer *e, uint64_t ino, uint32_t kdev)
{
	e->skel->bss->ctl_dev = kdev;
	__atomic_store_n(&e->skel->bss->ctl_ino, ino, __ATOMIC_SEQ_CST);
}

/* Sets k's bit in prot_filter (sharness.h), before k is marked. */
static int filter_add(int fd, const struct sh_inode_key *k)
{
	__u64 h = sh_prot_hash(k->ino, k->dev), v = 0;
	__u32 w = sh_prot_word(h);

	if (bpf_map_lookup_elem(fd, &w, &v))
		return -errno;
	if (v & (1ull << (h & 63)))
		return 0;
	v |= 1ull << (h & 63);
	return bpf_map_update_elem(fd, &w, &v, BPF_ANY) ? -errno : 0;
}

/*
 * After the marks changed: every word of prot_filter becomes exactly the
 * bits of the inodes marked in protected_inodes now (read back from the
 * map: a mark whose removal failed keeps its bit), then the filter is
 * armed. A bit of a marked inode is in a word before and after its
 * write, so it is never clear. On a failure the filter is disarmed:
 * every check looks the inode up.
 */
static int filter_rebuild(int fd, int marks_fd)
{
	__u64 *want = calloc(SH_PROT_FILTER_WORDS + 1, sizeof(*want)), have, armed = SH_PROT_ARMED;
	struct sh_inode_key k, next;
	void *prev = NULL;
	__u32 zero = 0;
	int err = 0;

	if (!want)
		err = -ENOMEM;
	while (!err && bpf_map_get_next_key(marks_fd, prev, &next) == 0) {
		__u64 h = sh_prot_hash(next.ino, next.dev);

		want[sh_prot_word(h)] |= 1ull << (h & 63);
		k = next;
		prev = &k;
	}
	if (!err && errno != ENOENT)
		err = -errno;   /* the walk ended on an error, not at its end */
	for (__u32 w = 1; !err && w <= SH_PROT_FILTER_WORDS; w++)
		if (bpf_map_lookup_elem(fd, &w, &have) ||
		    (have != want[w] && bpf_map_update_elem(fd, &w, &want[w], BPF_ANY)))
			err = -errno;
	if (!err && bpf_map_update_elem(fd, &zero, &armed, BPF_ANY))
		err = -errno;
	free(want);
	if (err) {
		armed = 0;
		bpf_map_update_elem(fd, &zero, &armed, BPF_ANY);
	}
	return err;
}

/*
 * The marks become exactly own[] (a file named twice gets both marks).
 * Every file is found first; then the marks of files no longer ours go,
 * so that a full map has room for the new ones (a file of both sets is
 * never unmarked in between); then each mark is written, its filter bit
 * first. Where a write fails, the marks that went are put back.
 */
int sh_enforcer_protect_set(struct sh_enforcer *e, const struct sh_protected *own, size_t n,
			    const char **failed)
{
	int ffd = bpf_map__fd(e->skel->maps.prot_filter);
	int fd = bpf_map__fd(e->skel->maps.protected_inodes);
	struct sh_inode_key keys[SH_MAX_PROTECTED], gone[SH_MAX_PROTECTED], k, next;
	uint32_t flags[SH_MAX_PROTECTED], gone_flags[SH_MAX_PROTECTED];
	const char *names[SH_MAX_PROTECTED];
	struct sh_mnt_dev mounts = { 0 };   /* most of them lie on one */
	size_t nk = 0, ngone = 0;
	void *prev = NULL;
	int err = 0;

	*failed = NULL;
	if (n > SH_MAX_PROTECTED)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		uint64_t ino = own[i].ino;
		uint32_t dev = own[i].dev;
		size_t j;

		if (!own[i].keyed)
			err = sh_kernel_ino_at(AT_FDCWD, own[i].path, 0, &ino, &dev, &mounts);
		if (err) {
			*failed = own[i].path;
			return err;
		}
		memset(&k, 0, sizeof(k));
		k.ino = ino;
		k.dev = dev;
		for (j = 0; j < nk; j++)
			if (keys[j].ino == k.ino && keys[j].dev == k.dev)
				break;
		if (j == nk) {
			keys[nk] = k;
			names[nk] = own[i].path;
			flags[nk++] = 0;
		}
		flags[j] |= own[i].flags;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		bool keep = false;

		for (size_t j = 0; j < nk && !keep; j++)
			keep = keys[j].ino == next.ino && keys[j].dev == next.dev;
		if (!keep && ngone < SH_MAX_PROTECTED &&
		    bpf_map_lookup_elem(fd, &next, &gone_flags[ngone]) == 0 &&
		    bpf_map_delete_elem(fd, &next) == 0) {
			gone[ngone++] = next;
			prev = NULL;   /* the walk restarts after a deletion */
			continue;
		}
		k = next;
		prev = &k;
	}
	for (size_t j = 0; j < nk && !err; j++) {
		err = filter_add(ffd, &keys[j]);
		if (!err && bpf_map_update_elem(fd, &keys[j], &flags[j], BPF_ANY))
			err = -errno;
		if (err)
			*failed = names[j];
	}
	if (err) {
		__u64 off = 0;
		__u32 zero = 0;

		/* Disarmed (every check looks up) before the old marks come
		 * back, as their filter bits may be gone. */
		bpf_map_update_elem(ffd, &zero, &off, BPF_ANY);
		for (size_t j = 0; j < ngone; j++)
			bpf_map_update_elem(fd, &gone[j], &gone_flags[j], BPF_NOEXIST);
		return err;
	}
	__atomic_store_n(&e->skel->bss->nprotected, (uint32_t)nk, __ATOMIC_SEQ_CST);
	return filter_rebuild(ffd, fd);
}

int sh_enforcer_task_origin(struct sh_enforcer *e, int pidfd, uint64_t *origin)
{
	struct sh_task t;

	*origin = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.task_marks), &pidfd, &t))
		return errno == ENOENT ? 0 : -errno;
	*origin = t.origin;
	return 0;
}

uint64_t sh_enforcer_dropped_reported(struct sh_enforcer *e)
{
	return e->skel->bss->dropped_reported;
}

void sh_enforcer_set_dropped_reported(struct sh_enforcer *e, uint64_t v)
{
	e->skel->bss->dropped_reported = v;
}

/* Every program of the skeleton, loaded or not, has its place. */
#define SH_NPROGS (sizeof(((struct sharness_bpf *)0)->progs) / sizeof(struct bpf_program *))
_Static_assert(SH_NPROGS < SH_MAX_PROGS, "raise SH_MAX_PROGS (enforcer.h)");

ssize_t sh_enforcer_unjudged(struct sh_enforcer *e, struct sh_prog_count out[SH_MAX_PROGS])
{
	struct bpf_program *p;
	size_t n = 0;

	if (e->unjudged_before)
		out[n++] = (struct sh_prog_count){ SH_EARLIER_GEN, e->unjudged_before };
	bpf_object__for_each_program(p, e->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue;   /* not loaded: this kernel has no such hook */
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		if (n < SH_MAX_PROGS)
			out[n++] = (struct sh_prog_count){ bpf_program__name(p), info.recursion_misses };
	}
	return (ssize_t)n;
}

void sh_enforcer_unjudged_reported(struct sh_enforcer *e, uint64_t total)
{
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
	detach_wait(e);
	ring_buffer__free(e->rb);
	sharness_bpf__destroy(e->skel);
	for (int s = 0; s < SH_SLOTS; s++)
		for (int i = 0; i < SH_MAX_POLICIES; i++)
			free(e->names[s][i]);
	sh_policy_set_free(&e->set);
	sh_enforcer_free_tags(e->tags, e->ntags);
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

void sh_enforcer_counters(struct sh_enforcer *e, uint64_t out[SH_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(e->skel->maps.counters);
	uint64_t *vals;

	memset(out, 0, sizeof(uint64_t) * SH_CNT_MAX);
	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
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

const char *sh_enforcer_tag_path(struct sh_enforcer *e, uint64_t cgid, uint32_t *run_id)
{
	for (size_t i = 0; i < e->ntags; i++)
		if (e->tags[i].cgid == cgid) {
			if (run_id)
				*run_id = e->tags[i].run_id;
			return e->tags[i].path;
		}
	return NULL;
}
