/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reload of the policy directory (reload.c): asked by a control
 * request or SIGHUP, and done at start.
 */
#ifndef SH_RELOAD_H
#define SH_RELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* Re-reads the policy directory and swaps it in; on any error the old
 * set stays in force. fd: a control connection to report to, or -1. */
int sh_daemon_reload(struct sh_daemon *d, int fd);

/* Each message of errs to the control connection fd (-1: to the log). */
void sh_daemon_log_errors(const struct sh_errors *errs, int fd);

#endif
