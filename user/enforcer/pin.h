/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pinned state under the pin directory: generation N lives in PIN_DIR/gen-N
 * as map_NAME, link_PROG and, for a program attached on demand, prog_PROG
 * (names with '.' written as '_'). These names are what a later daemon
 * adopts: they do not change between builds.
 */
#ifndef SH_PIN_H
#define SH_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sharness.h"

struct bpf_object;
struct bpf_object_skeleton;
struct sh_tag_entry;

struct bpf_map;

/* The state maps a later daemon adopts (not a build's constants, nor
 * the scratch of one program call). */
bool sh_pin_adopted_kind(const struct bpf_map *m);
/* PIN_DIR/gen-N/KIND_NAME, the path name (a map's or a program's) is
 * pinned at. */
void sh_pin_path(char *buf, size_t n, const char *pin_dir, unsigned gen, const char *kind,
		 const char *name);
/* Highest generation under pin_dir; 0 if none. */
unsigned sh_pin_newest_gen(const char *pin_dir);
/* Removes PIN_DIR/gen-N and what is pinned in it; 0 or -errno. */
int sh_pin_remove_gen(const char *pin_dir, unsigned gen);
/* What a daemon reported of the calls its generation's programs let
 * through unrun (recursion_misses), kept in the state file (a line
 * "unjudged GEN TOTAL", which the tag readers skip) so that its successor
 * does not report them again. */
struct sh_unjudged_seen {
	unsigned gen;
	uint64_t reported;
};
/* Removes every generation but keep (failures are logged). Returns the
 * calls their programs let through unrun that seen does not account for,
 * leaving out the programs of ids ours[] (resumed: still ours to count). */
uint64_t sh_pin_remove_other_gens(const char *pin_dir, unsigned keep,
				  const struct sh_unjudged_seen *seen,
				  const uint32_t *ours, size_t nours);
/* Before the load: reuse every pinned map of generation gen whose layout
 * matches this build, or none of them; 0 or -errno. */
int sh_pin_adopt_maps(struct bpf_object *obj, const char *pin_dir, unsigned gen);
/* After the load: pins every state map as generation gen. */
int sh_pin_maps(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen);
/* After an attach: pins every link the skeleton holds as generation gen. */
int sh_pin_links(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen);
/* Unpins and destroys every link the skeleton holds: the programs detach
 * (and stay loaded). */
void sh_pin_drop_links(const struct bpf_object_skeleton *s);

/*
 * Programs attached on demand: only while a policy in force has one of
 * the policy flags (SH_PF_*) returned, because they judge nothing else
 * (demand.c); 0 for every other program, attached whenever the programs
 * are. Such a program is pinned as PIN_DIR/gen-N/prog_NAME as well, so
 * that a later daemon resumes it while it has no link.
 *
 * The programs that judge only [net] rules (SH_PF_NET): without them in
 * force every call of theirs returns at once (socket_sendmsg on every send
 * of the host, setsockopt, listen, SCTP's options). Their one other
 * refusal is of a member whose policy cannot be found: detached, they let
 * its sends, listens and SCTP options on a socket it holds through, while
 * socket_create, socket_connect and socket_bind (attached for unix socket
 * rules and the wall) still refuse it sockets, connects and binds.
 * The hashing of pinned executables at exec (sh_exec_pin, sleepable, on
 * every exec of the host; SH_PF_EXEC_PINS): without a pinned allow in
 * force it returns at once; where it is not attached, a pinned allow has
 * no verdict and refuses (exec.c).
 */
uint32_t sh_pin_demand(const char *prog_name);

/* Without a daemon: the newest generation (0: none), its links and tags. */
int sh_pin_state(const char *pin_dir, unsigned *links, unsigned *tags);
/* Removes every generation, newest first: the programs detach. */
int sh_pin_unload(const char *pin_dir);

/* Runtime tags (tag, run) survive a daemon restart in state_path (NULL:
 * nowhere). Writing replaces the file; reading appends to *tags the
 * entries present in the tags map (tags_fd; < 0: fresh maps) or whose
 * cgroup still exists with the same id. */
void sh_pin_save_tags(const char *state_path, const struct sh_tag_entry *tags, size_t n,
		      unsigned slot, char *const names[SH_MAX_POLICIES],
		      const struct sh_unjudged_seen *u);
void sh_pin_restore_unjudged(const char *state_path, struct sh_unjudged_seen *u);
/* The policy names of the slot in force when the state was saved, so that
 * events a daemon's successor reads from the adopted ring keep their
 * policy's name (names[slot][id]; malloc'd). */
void sh_pin_restore_names(const char *state_path, char *names[SH_SLOTS][SH_MAX_POLICIES]);
void sh_pin_restore_tags(const char *state_path, int tags_fd,
			 struct sh_tag_entry **tags, size_t *ntags);

#endif
