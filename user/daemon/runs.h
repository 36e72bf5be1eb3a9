/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroups `sharnessctl run` uses (runs.c): a run's begin and end, and
 * its count of violations.
 */
#ifndef SH_RUNS_H
#define SH_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* The run-begin and run-end requests, and a run's violation count. */
int sh_run_begin(struct sh_daemon *d, int fd, int argc, char **argv);
int sh_run_end(struct sh_daemon *d, int fd, int argc, char **argv);
void sh_run_count_denial(struct sh_daemon *d, uint32_t run_id);

#endif
