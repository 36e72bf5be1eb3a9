/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resuming a previous daemon's programs: a daemon of the same build on the
 * same kernel takes over the verified programs and links its predecessor
 * pinned, instead of loading (and verifying) its own.
 */
#ifndef SH_RESUME_H
#define SH_RESUME_H

#include <stdbool.h>
#include <stdint.h>

#include "enforcer.h"

struct bpf_object_skeleton;
struct sharness_bpf;

/* The programs of one generation this daemon took over, by the
 * skeleton's program index (prog_fd -1: not resumed). */
struct sh_resumed {
	bool on;                        /* the programs are resumed */
	int prog_fd[SH_MAX_PROGS];
	int link_fd[SH_MAX_PROGS];      /* until pinned as ours */
	uint32_t prog_id[SH_MAX_PROGS];
	uint64_t base[SH_MAX_PROGS];    /* their unjudged count when taken */
};

void sh_resume_init(struct sh_resumed *r);
/* Closes what r holds. */
void sh_resume_release(struct sh_resumed *r);

/*
 * Before the load, with the state maps adopted from generation gen:
 * whether gen was pinned by this build on this kernel (its build mark:
 * the BPF object's digest, the programs loaded, the constants set),
 * and every program this kernel loads is linked there (or, on demand and
 * detached, pinned there as a program for its hook) as an LSM program
 * of its name that uses no map but the adopted ones and its own
 * constants and scratch. Then r holds the programs and their links, and
 * the skeleton loads no program and creates no scratch. Otherwise false,
 * with the reason logged, and nothing changed.
 */
bool sh_resume_check(const struct sharness_bpf *skel, const char *pin_dir, unsigned gen,
		     struct sh_resumed *r);
/* After the load: the resumed links pinned as generation gen's and
 * handed to the skeleton; 0 or -errno. */
int sh_resume_links(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
		    struct sh_resumed *r);
/* Whether generation gen links any of the programs r took over (one that
 * itself resumed them, or the one they were loaded in). */
bool sh_resume_gen_ours(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
			const struct sh_resumed *r);
/* A wake after a rest: a new link for every resumed program without one,
 * pinned as generation gen's, but programs on demand (sh_pin_demand)
 * whose flags need does not have; 0 or -errno. */
int sh_resume_attach(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
		     const struct sh_resumed *r, uint32_t need);
/* Marks generation gen as this build's (PIN_DIR/gen-N/build, a frozen
 * one-entry map), so that the next daemon of this build may resume it. */
int sh_resume_mark(const struct sharness_bpf *skel, const struct sh_resumed *r,
		   const char *pin_dir, unsigned gen);

#endif
