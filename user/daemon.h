/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sharnessd's state, shared by its files: sharnessd.c (start, event loop,
 * stop), records.c (the audit records of kernel events), requests.c (the
 * control socket's requests), runs.c (the cgroups `sharnessctl run` uses)
 * and protect.c (the daemon's own files).
 */
#ifndef SH_DAEMON_H
#define SH_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "enforcer.h"
#include "journal.h"
#include "json.h"
#include "metrics.h"
#include "ratelimit.h"

/* Violations seen in one live run, reported in its run-end record. */
struct sh_run_count {
	uint32_t id;
	uint64_t denials;
};

/* A learning run (learning.c): its policy, made in memory, and its records. */
struct sh_learning {
	uint32_t run_id;
	struct sh_policy pol;
	struct sh_buf recs;             /* learn records, JSON lines */
	bool overflow;                  /* more than can be kept: the learning fails */
	uint64_t unlogged;              /* learn records past that, not logged */
	bool orphan;                    /* its daemon or client is gone: learns nothing */
	int pidfd;                      /* the sharnessctl that began it, or -1 */
	bool client_gone;               /* ...which is gone: the daemon ends the run */
};

struct sh_daemon {
	const char *policy_dir;
	const char *audit_path;
	const char *socket_path;
	const char *pin_dir;
	struct sh_enforcer *enf;
	struct sh_audit audit;
	struct sh_buf buf;              /* the record being written */
	struct sh_journal journal;      /* violations also to journald */
	uint64_t events_logged;
	uint32_t next_run;              /* id of the last run begun */
	bool unloading;                 /* unloaded on request: the loop ends */
	struct sh_ratelimit rl;
	unsigned batch;                 /* events in this ring-buffer pass */
	struct sh_run_count *runs;
	size_t nruns;
	struct sh_metrics metrics;
	struct sh_learning *learning;   /* runs of `sharnessctl learn` going on */
	size_t nlearning;
	uint64_t unjudged_seen[SH_MAX_PROGS];   /* reported, by sh_enforcer_unjudged's order */
	uint64_t unjudged_ns;           /* when last looked at */
	bool unjudged_err;              /* a count could not be read (said once) */
	int log_wfd;                    /* inotify on the log's directory, or -1 */
	bool log_watch_said;            /* that it could not be set, logged */
	bool attached_said;             /* attached, as the last record said */
	uint64_t run_memory_max;        /* a run with no memory-max gets this (0: none) */
};

/* sharnessd.c: re-reads the policy directory and swaps it in; on any
 * error the old set stays in force. fd: a control connection to report to,
 * or -1. */
int sh_daemon_reload(struct sh_daemon *d, int fd);

/* records.c */
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

/* requests.c: one connection on the listening socket lfd, one request. */
void sh_req_serve(struct sh_daemon *d, int lfd);
/* status.c: the `status` request ([json|prometheus]). */
int sh_req_status(struct sh_daemon *d, int fd, int argc, char **argv);

/* runs.c: the run-begin and run-end requests, and a run's violation count. */
int sh_run_begin(struct sh_daemon *d, int fd, int argc, char **argv);
int sh_run_end(struct sh_daemon *d, int fd, int argc, char **argv);
void sh_run_count_denial(struct sh_daemon *d, uint32_t run_id);

/* learning.c: the learn-begin and learn-end requests; a learn record of
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

/* protect.c: marks the daemon's own files so that no tree changes them;
 * 0 or -errno (logged). */
int sh_protect_own_files(struct sh_daemon *d);
/* Watches the log's directory (d->log_wfd), or sets the watch again on its
 * path; a failure is logged once. */
void sh_protect_watch(struct sh_daemon *d);
/* The watch's events: all read, the watch set again, the files marked. */
void sh_protect_on_watch(struct sh_daemon *d);

#endif
