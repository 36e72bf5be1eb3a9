/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side as seen from user space: loading and attaching the
 * programs (whether this kernel can is probe.h's question; their pinned
 * state and its adoption are pin.h's), and keeping the policy and tag maps.
 * Reload is atomic: a new policy set is written into the inactive slot and
 * switched in with one store.
 */
#ifndef SH_ENFORCER_H
#define SH_ENFORCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sharness.h"
#include "policy.h"

struct sh_tag_entry {
	uint64_t cgid;
	char *path;
	char *policy;
	uint32_t run_id;
	bool from_policy;      /* named by a policy's cgroup = line */
	bool pattern;          /* made for a cgroup pattern (by the programs or at load) */
};

typedef int (*sh_event_fn)(void *ctx, const struct sh_event *ev);

struct sh_enforcer;

/* Load, attach and pin under pin_dir, adopting a previous daemon's pinned
 * state (see pin.c). state_path keeps runtime tags across restarts. */
int sh_enforcer_open(struct sh_enforcer **out, sh_event_fn fn, void *ctx,
		     const char *pin_dir, const char *state_path);
bool sh_enforcer_adopted(struct sh_enforcer *e);
/* Its predecessor's programs taken over, not loaded (resume.h). */
bool sh_enforcer_resumed(struct sh_enforcer *e);
/* With nothing tagged for `seconds` (<0: never), the programs are detached
 * (they stay loaded) and attached again before the next tag is written:
 * between jobs the host's hooks call nothing. */
#define SH_DETACH_IDLE_DEFAULT 10
void sh_enforcer_set_detach_idle(struct sh_enforcer *e, int seconds);
/* Called about once a second: rests after detach_idle seconds untagged. */
void sh_enforcer_idle_tick(struct sh_enforcer *e);
/* Are the programs attached (links held); how long the last attach took
 * (ms). */
bool sh_enforcer_attached(struct sh_enforcer *e, unsigned *attach_ms);
/* Detached, and the kernel's links gone (a detach in the background over). */
bool sh_enforcer_resting(struct sh_enforcer *e);
/* The daemon's own process: no tree may signal or trace it. */
void sh_enforcer_set_daemon(struct sh_enforcer *e, uint32_t tgid);
/* vm.mmap_min_addr: no tree maps below it. */
void sh_enforcer_set_mmap_min(struct sh_enforcer *e, uint64_t addr);
/* The host's IPC namespace (the daemon's, by inode number): trees left in
 * it do not use SysV IPC or POSIX message queues. */
void sh_enforcer_set_host_ipc_ns(struct sh_enforcer *e, uint32_t inum);
/* The control socket's file (inode number, kernel dev_t): no tree connects to it. */
void sh_enforcer_set_control_socket(struct sh_enforcer *e, uint64_t ino, uint32_t kdev);
/* The daemon's own files and directories, marked by inode so that no tree
 * changes (or reads) them: the set replaces the previous one. On failure
 * *failed names the path that could not be marked. */
struct sh_protected {
	const char *path;  /* looked up when marked, unless keyed */
	uint32_t flags;    /* SH_PROT_* */
	bool keyed;        /* the inode is known (ino, dev): path only names it */
	uint64_t ino;
	uint32_t dev;      /* the kernel's device number (sh_kernel_ino) */
};
int sh_enforcer_protect_set(struct sh_enforcer *e, const struct sh_protected *own, size_t n,
			    const char **failed);
/* The tagged cgroup whose tree the task behind pidfd belongs to, as the
 * programs last saw it (0: none, or not seen). */
int sh_enforcer_task_origin(struct sh_enforcer *e, int pidfd, uint64_t *origin);
/* Lost events already written to the audit log (kept with the pinned state). */
uint64_t sh_enforcer_dropped_reported(struct sh_enforcer *e);
void sh_enforcer_set_dropped_reported(struct sh_enforcer *e, uint64_t v);
/*
 * Calls the kernel let through one of the programs without running it:
 * the BPF trampoline's recursion check (recursion_misses), on kernels
 * that apply it to LSM programs (README). One entry per loaded program,
 * in a fixed order, with its count since load; first, when not 0, the
 * generations this one replaced (SH_EARLIER_GEN, their whole counts).
 * Returns the entries, or -errno when a count cannot be read.
 */
#define SH_MAX_PROGS 80
#define SH_EARLIER_GEN "earlier generation"
struct sh_prog_count {
	const char *program;
	uint64_t unjudged;
};
ssize_t sh_enforcer_unjudged(struct sh_enforcer *e, struct sh_prog_count out[SH_MAX_PROGS]);
/* The sum of this generation's counts reported so far (not SH_EARLIER_GEN's),
 * kept with the state so that the next daemon reports only the rest. */
void sh_enforcer_unjudged_reported(struct sh_enforcer *e, uint64_t total);
/* Detach: remove every pinned generation. The programs stay attached
 * until the enforcer is destroyed. */
int sh_enforcer_unload(struct sh_enforcer *e);
void sh_enforcer_destroy(struct sh_enforcer *e);

/* Swap in a new policy set atomically. On error nothing changes and the
 * reasons are in errs. On success the enforcer owns *set (zeroed). */
int sh_enforcer_apply(struct sh_enforcer *e, struct sh_policy_set *set,
		      struct sh_errors *errs);
/* One policy added to the set in force (under the next id), or the last
 * one dropped, without a whole apply (apply_one.c): 0, -EAGAIN where only
 * a whole apply can do it (p has cgroup lines, the policy is not the
 * last, an earlier change left keys behind), -EBUSY where a tag still
 * names the policy, or -errno (the reasons in errs). */
int sh_enforcer_add_policy(struct sh_enforcer *e, const struct sh_policy *p,
			   struct sh_errors *errs);
int sh_enforcer_drop_policy(struct sh_enforcer *e, const char *name);
int sh_enforcer_tag(struct sh_enforcer *e, const char *cgroup, const char *policy,
		    uint32_t run_id, char *err, size_t errlen);
int sh_enforcer_untag(struct sh_enforcer *e, const char *cgroup, char *err, size_t errlen);
/* Tags a container's cgroup with its runtime's init, process pid, in it
 * (the OCI hook): the init is pending, the host's until its exec
 * (bpf/lib/member.h), so the policy must hold from exec. The tags of removed container
 * cgroups that no process counts as its tree go first. 0 or -errno. */
int sh_enforcer_tag_runtime(struct sh_enforcer *e, const char *cgroup, const char *policy,
			    uint32_t pid, char *err, size_t errlen);
/* Is tagged cgroup cgid a container's (sh_enforcer_tag_runtime)? */
bool sh_enforcer_runtime_tag(struct sh_enforcer *e, uint64_t cgid);
/* Untags the removed container cgroups no process counts as its tree. */
void sh_enforcer_prune_runtime(struct sh_enforcer *e);

int sh_enforcer_events_fd(struct sh_enforcer *e);
int sh_enforcer_consume(struct sh_enforcer *e);
void sh_enforcer_counters(struct sh_enforcer *e, uint64_t out[SH_CNT_MAX]);

const char *sh_enforcer_policy_name(struct sh_enforcer *e, unsigned slot, unsigned id);

/* The pinned exec allow of policy id in slot (the one in force) whose
 * file is path, or NULL. */
const struct sh_rule *sh_enforcer_pinned_rule(struct sh_enforcer *e, unsigned slot, unsigned id,
					     const char *path);
/* Hashes path again for that rule (a refusal asks) and, where its content
 * is the rule's, enters its identity (a file replaced by one of the same
 * content): 1 entered, 0 hashed (found) to another content or, with
 * *not_entered, not entered (why: changed a moment ago), -errno not
 * hashed (why: open for writing, too large, no such rule...). */
int sh_enforcer_repin(struct sh_enforcer *e, unsigned slot, unsigned id, const char *path,
		      uint8_t found[32], char *why, size_t whylen, bool *not_entered);
const struct sh_policy_set *sh_enforcer_policies(struct sh_enforcer *e);
const struct sh_tag_entry *sh_enforcer_tags(struct sh_enforcer *e, size_t *n);
/* The cgroups tagged for a cgroup pattern of the set in force (looked up
 * again now with refresh: the programs tag them as they are made; else
 * as of the last look, at most a minute ago), and how many
 * matching cgroups the programs could not tag since the programs were
 * loaded (the tag map full). */
const struct sh_tag_entry *sh_enforcer_pattern_tags(struct sh_enforcer *e, size_t *n, bool refresh);
uint64_t sh_patterns_lost(struct sh_enforcer *e);
/* Patterns in force whose directory was removed (or made again) since they
 * were loaded: they tag nothing until a reload. */
unsigned sh_patterns_stale(struct sh_enforcer *e);
/* Is cgroup id tagged, by the daemon or by a pattern, in the set in force? */
bool sh_enforcer_tagged_id(struct sh_enforcer *e, uint64_t id);
const char *sh_enforcer_tag_path(struct sh_enforcer *e, uint64_t cgid, uint32_t *run_id);

#endif
