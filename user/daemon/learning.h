/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs of `sharnessctl learn` (learning.c): their policies, made in
 * memory, and the records they learn from.
 */
#ifndef SH_LEARNING_H
#define SH_LEARNING_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* The learn-begin and learn-end requests; a learn record of
 * a learning run (rec: its JSON line); the learning policies of the runs
 * going on, added to a set about to be applied (0, -EEXIST, -ENOMEM). */
int sh_learn_begin(struct sh_daemon *d, int fd, int argc, char **argv);
int sh_learn_end(struct sh_daemon *d, int fd, int argc, char **argv);
/* run-end: learn-end for a learning run, else sh_run_end. */
int sh_learn_or_run_end(struct sh_daemon *d, int fd, int argc, char **argv);
bool sh_learning_of(struct sh_daemon *d, uint32_t run_id);
/* Keeps rec for the run; false when the run is over what it may learn
 * (the record is then not logged either). */
bool sh_learning_record(struct sh_daemon *d, uint32_t run_id, const struct sh_buf *rec);
int sh_learning_add_policies(struct sh_daemon *d, struct sh_policy_set *set);
/* At start: learning runs a previous daemon left, held to policies that
 * refuse every use until they end; then as sh_learning_add_policies. */
int sh_learning_adopt(struct sh_daemon *d, struct sh_policy_set *set);
/* The event loop's: a learning run whose sharnessctl is gone is held to a
 * policy that refuses every use, and its processes are killed. */
void sh_learning_watch(struct sh_daemon *d);

#endif
