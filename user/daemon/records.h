/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The audit records of kernel events and of the daemon itself (records.c):
 * what the ring buffer brings, rate limited, to the log and the journal.
 */
#ifndef SH_RECORDS_H
#define SH_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* The rate limit, its suppression records going to the log; 0 or -ENOMEM. */
int sh_rec_init(struct sh_daemon *d);
/* The enforcer's event callback: one violation record (rate limited). */
int sh_rec_event(void *ctx, const struct sh_event *ev);
/* Every event queued in the ring, to the log now (not one batch). */
void sh_rec_drain(struct sh_daemon *d);
/* Events the kernel could not queue are counted there; say so in the log. */
void sh_rec_dropped(struct sh_daemon *d);
/* Calls a program was skipped for (sh_enforcer_unjudged) go to the log
 * and stderr; looked at once a second unless now. */
void sh_rec_unjudged(struct sh_daemon *d, bool now);
/* With nothing tagged the programs detach, and attach before the next
 * tag: each change goes to the log as a "programs-detached" or
 * "programs-attached" record (once, when the loop sees it). */
void sh_rec_attached(struct sh_daemon *d);
/* The sum of those counts (status, metrics); -errno if unreadable. */
int64_t sh_rec_unjudged_total(struct sh_daemon *d);
/* Writes d->buf as one audit record, then empties it. */
void sh_rec_emit(struct sh_daemon *d);
/* The same, and to the journal when it is on (after the log line, which
 * never waits on it): violations and what was suppressed or lost. */
void sh_rec_emit_journaled(struct sh_daemon *d);
/* A string field of the record in d->buf. */
void sh_rec_str(struct sh_daemon *d, const char *key, const char *s);
/* The "unload" record: how many cgroups were tagged, forced, the result. */
void sh_rec_unload(struct sh_daemon *d, uint64_t tagged, bool force, int err);

#endif
