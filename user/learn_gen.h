/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From the learn records of one run to a policy that allows that run and
 * little more (learn_gen.c). Pure: no daemon, no kernel; the unit tests
 * feed it records and read the policy text.
 *
 * What it makes of the records:
 *   exec          [exec] allow = the resolved file
 *   mmap-exec     [exec] lib = the file's directory (the loader, libraries)
 *   file writes   [file] write = the work directory, a temporary directory,
 *                 a directory whose file names are made per run, or the file
 *   devices       [file] device = the node (terminals: /dev/pts/)
 *   unix sockets  [connect] allow = the socket; abstract = deny if unused
 *   [net]         connect = / bind = each endpoint reached; when the run
 *                 used none, every destination denied
 *   signals       [signal] scope = tree when nothing outside was signalled
 *   capabilities  [limits] capability = each one used
 * What a deny rule of the policy learned from refused is kept refused and
 * listed; what no rule can allow leaves its section out, with a comment.
 */
#ifndef SH_LEARN_GEN_H
#define SH_LEARN_GEN_H

#include <stddef.h>

#include "json.h"

struct sh_learn_in {
	const char *name;       /* the policy's name */
	const char *workdir;    /* the run's work directory (resolved), or NULL */
	const char *command;    /* for the header comment */
	const char *from_text;  /* the text of the policy learned from, or NULL */
	const char *from_name;
};

/*
 * Writes the policy into *policy and, one line per rule added or object
 * left out ("+ [exec] allow = ..."), the review into *review. Records that
 * are not learn records are ignored. Returns the number of rules added.
 */
size_t sh_learn_policy(const struct sh_learn_in *in, const struct sh_jobj *recs, size_t n,
		       struct sh_buf *policy, struct sh_buf *review);

/* Is this name made for one run (a pid, a time, a mktemp suffix)? */
int sh_learn_per_run_name(const char *name);

#endif
