/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's own files (protect.c): marked so that no tree changes
 * them, and watched where they may be made anew.
 */
#ifndef SH_PROTECT_H
#define SH_PROTECT_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* Marks the daemon's own files so that no tree changes them;
 * 0 or -errno (logged). */
int sh_protect_own_files(struct sh_daemon *d);
/* Watches the log's directory (d->log_wfd), or sets the watch again on its
 * path; a failure is logged once. */
void sh_protect_watch(struct sh_daemon *d);
/* The watch's events: all read, the watch set again, the files marked. */
void sh_protect_on_watch(struct sh_daemon *d);

#endif
