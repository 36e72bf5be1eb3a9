/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The enforcer object as its own files see it. Not for other folders:
 * they use enforcer.h. The files use each other in one direction only,
 * lowest first: enforcer.c (opening, rest and wake, events, the
 * generation), demand.c (which programs are attached), marks.c, pin.c,
 * resume.c, probe.c, pins.c; patterns.c
 * (cgroup patterns); tags.c (tags by hand and for runs, the idle tick);
 * apply.c and apply_one.c (policy sets).
 */
#ifndef SH_ENFORCER_INT_H
#define SH_ENFORCER_INT_H

#include <pthread.h>

#include "enforcer.h"
#include "pin.h"
#include "resume.h"

struct sh_enforcer {
	char *pin_dir;
	char *state_path;
	unsigned gen;                           /* pinned generation */
	bool adopted;                           /* maps reused from a previous daemon */
	struct sharness_bpf *skel;
	struct ring_buffer *rb;
	sh_event_fn fn;
	void *ctx;
	unsigned slot;                          /* active slot */
	char *names[SH_SLOTS][SH_MAX_POLICIES]; /* policy names per slot */
	struct sh_policy_set set;               /* policy set in force */
	bool stale_keys;                        /* the slot in force holds keys of no
						 * policy (apply_one.c) */
	struct sh_tag_entry *tags;
	size_t ntags;
	struct sh_tag_entry *ptags;             /* tagged for a cgroup pattern (patterns.c) */
	size_t nptags;
	uint64_t pattern_gc_ms;                 /* ptags last looked up, removed ones dropped */
	uint64_t pattern_lost_seen;             /* pattern_lost already logged */
	uint64_t runtime_gc_ms;                 /* container tags last pruned (monotonic) */
	uint32_t patterns_stale;                /* table entries whose directory went */
	uint64_t unjudged_before;               /* by the generations this one replaced */
	struct sh_unjudged_seen unjudged;       /* reported of this generation's */
	bool attached;                          /* links made (and pinned) */
	bool moves_unseen_logged;               /* moves_seen failed once: said */
	uint32_t need;                          /* SH_PF_* the programs on demand are
						 * attached for (demand.c) */
	int detach_idle;                        /* seconds with nothing tagged; <0: never */
	uint64_t idle_since_ms;                 /* nothing tagged since (0: something is) */
	unsigned attach_ms;                     /* the last attach took */
	bool old_gens_pending;                  /* older generations still pinned */
	/* Links taken from the skeleton (a rest's, or those no policy needs
	 * any more: demand.c), closed by a thread (detach_running until
	 * joined; detach_done once closed). */
	struct bpf_link *detaching[SH_MAX_PROGS];
	int ndetaching;
	pthread_t detach_thread;
	bool detach_running, detach_done;
	struct sh_unjudged_seen old_seen;       /* what their daemon reported */
	struct sh_resumed res;                  /* the programs, when resumed */
	uint64_t resumed_before;                /* their unreported calls when taken */
};

/* Removes the older generations (once the first apply has tagged). */
void sh_enforcer_retire_old(struct sh_enforcer *e);

/* Before a tag is written: every program attached (but those on demand
 * that no policy in force or being applied needs: demand.c), its link
 * pinned with the generation (0 or -errno; on failure nothing is
 * attached). */
int sh_enforcer_wake(struct sh_enforcer *e);

/*
 * Programs attached on demand (demand.c). sh_demand_slot: the policy
 * flags of the valid entries of the policy table's slot (e->slot: the
 * one in force). sh_demand_attach: every program linked and pinned
 * but those on demand that e->need does not ask for. sh_demand_need:
 * before a policy with those flags is written, the programs it needs
 * linked and pinned (where the programs are attached; 0 or -errno, and
 * then no more is linked than what is in force needs, once the older
 * generations are gone). sh_demand_trim: after a switch of the set in
 * force (or an apply that failed), those it does not need detached (not
 * while older generations are pinned: they may pin the same links). sh_demand_pin_progs: the programs on demand pinned as
 * generation gen's.
 */
uint32_t sh_demand_slot(const struct sh_enforcer *e, unsigned slot);
int sh_demand_attach(struct sh_enforcer *e);
int sh_demand_need(struct sh_enforcer *e, uint32_t flags);
void sh_demand_trim(struct sh_enforcer *e);
int sh_demand_pin_progs(const struct sh_enforcer *e, unsigned gen);
/* The links in e->detaching closed by a thread (detach_running until
 * joined); the wait joins it. */
void sh_links_close(struct sh_enforcer *e);
void sh_links_close_wait(struct sh_enforcer *e);

/* From the idle tick (tags.c, at now_ms): with nothing tagged for the
 * --detach-idle time, the programs detach (rest). */
void sh_enforcer_rest_if_idle(struct sh_enforcer *e, uint64_t now_ms);

/* Runtime tags (tag, run) to the state file, so a restart keeps them. */
void sh_enforcer_save_state(struct sh_enforcer *e);
void sh_enforcer_free_tags(struct sh_tag_entry *t, size_t n);
/* p's pinned exec allows as policy id of slot (pins.c): their pins and
 * digests (pin_paths, pin_digests: fds[1], fds[2]) and the identities of
 * their files, hashed now (exec_pins: fds[0]). 0, or -errno (in errs)
 * where a map refused one. */
int sh_enforcer_write_pins(const int fds[3], unsigned slot, unsigned id,
			   const struct sh_policy *p, struct sh_errors *errs);

/* The generation bumped (enforcer.c): what the programs remember is
 * forgotten. */
void sh_bump_gen(struct sh_enforcer *e);

/* apply.c, for apply_one.c: a trie's keys of one slot (policy < 0) or of
 * one policy there deleted; a policy's rules, [net] rules and pins, and
 * its policy-table entry, written as policy id of slot. */
int sh_clear_keys(int fd, unsigned slot, int policy);
int sh_write_policy(struct sh_enforcer *e, unsigned slot, unsigned id, const struct sh_policy *p,
		    bool *dirs, struct sh_errors *errs);
int sh_write_conf(struct sh_enforcer *e, unsigned slot, unsigned id, const struct sh_policy *p,
		  bool dirs, struct sh_errors *errs);

/* tags.c, for apply.c: the id of a cgroup that can be tagged (0, or
 * -errno with the reason in errbuf). */
int sh_tag_id(const char *cgroup, uint64_t *id, char *errbuf, size_t errlen);
/* Which removed cgroups of ids[0..n) a process still counts as its tree
 * (patterns.c); 0, or -errno with held[] as it was. */
int sh_tags_held(struct sh_enforcer *e, const uint64_t *ids, size_t n, bool *held);

/* Cgroup patterns (patterns.c). Does set have any? Its table written in
 * slot ns (0, or -errno in errs); then, once every cgroup creation under
 * way has finished, every pattern tag given its policy in slot ns and
 * every untagged match of a pattern's directory tagged (a tag of nt, the
 * new list, stands; one the new set drops becomes the pattern's). After
 * the switch: the old slot's table emptied (retire); the list of pattern
 * tags looked up again, those of removed cgroups and of no pattern in
 * force dropped (also every minute, from the idle tick); the entry for
 * one cgroup id, looked up if it is not listed yet (NULL: none). */
bool sh_patterns_any(const struct sh_policy_set *set);
int sh_patterns_write(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		      struct sh_errors *errs);
int sh_patterns_scan(struct sh_enforcer *e, unsigned ns, const struct sh_policy_set *set,
		     const struct sh_tag_entry *nt, size_t nnt, struct sh_errors *errs);
void sh_patterns_retire(struct sh_enforcer *e);
void sh_patterns_refresh(struct sh_enforcer *e);
void sh_patterns_tick(struct sh_enforcer *e);
const struct sh_tag_entry *sh_patterns_tag(struct sh_enforcer *e, uint64_t id);

/* moves.c: the count of directory moves made live (after a check that it
 * sees the daemon's own moves) or not. */
int sh_moves_live(struct sh_enforcer *e, bool live);

#endif
