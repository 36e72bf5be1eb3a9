/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From the learn records of one run to a policy that allows that run and
 * little more (learn_gen.c). Pure: no daemon, no kernel; the unit tests
 * feed it records and read the policy text.
 *
 * What it makes of the records:
 *   exec          [exec] allow = the resolved file (never a directory)
 *   mmap-exec     [exec] lib = the file's directory, if the tree cannot write
 *                 there and it may be named whole; else the file
 *   file writes   [file] write = the work directory, a temporary directory,
 *                 the directory of a name made for one run or of more than
 *                 4 files, if it may be named whole; else the file
 *   unix sockets  [connect] allow = the socket, deny = /; abstract = deny
 *                 if unused
 *   [net]         connect = / bind = each endpoint reached; none = for a
 *                 kind the run never used
 *   [signal]      scope = tree
 * Refused while learning and suggested in comments: devices, capabilities,
 * signals outside the tree. Listed as still refused: a deny rule's
 * refusals, the wall's, socket kinds [net] refuses.
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
 * Writes the policy into *policy and, one line per rule added ("+"), rule
 * suggested ("?") or use still refused ("!"), the review into *review.
 * Takes learn records and the run's denials; ignores other records.
 * Control characters in the records' strings are replaced in place.
 * Returns the number of rules added.
 */
size_t sh_learn_policy(const struct sh_learn_in *in, struct sh_jobj *recs, size_t n,
		       struct sh_buf *policy, struct sh_buf *review);

/* Is this name made for one run (a pid, a time, a mktemp suffix)? */
int sh_learn_per_run_name(const char *name);

#endif
