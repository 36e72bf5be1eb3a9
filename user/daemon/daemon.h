/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sharnessd's state, shared by its files: sharnessd.c (start, event loop,
 * stop), reload.c, records.c (the audit records of kernel events),
 * requests.c (the control socket's requests), runs.c (the cgroups
 * `sharnessctl run` uses), learning.c and protect.c (the daemon's own
 * files). Each of them declares its functions in a header of its own.
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
	uint64_t dropped_try_ns;        /* the last try of a lost count, the log failing */
	bool unjudged_err;              /* a count could not be read (said once) */
	int log_wfd;                    /* inotify on the log's directory, or -1 */
	int efd;                        /* the event loop's epoll, or -1 before it */
	bool log_watch_said;            /* that it could not be set, logged */
	bool attached_said;             /* attached, as the last record said */
	bool follow_said;               /* the log could not be reopened (said once) */
	uint64_t run_memory_max;        /* a run with no memory-max gets this (0: none) */
	/*
	 * Where records.c hands a run's records, set by sharnessd.c (records
	 * know neither runs.c nor learning.c, which write records): a
	 * violation of live run run_id counted for its run-end record; is
	 * run_id a learning run; a record kept for that run's review (false:
	 * the run is over what it may learn, and the record is not logged).
	 */
	void (*run_denied)(struct sh_daemon *d, uint32_t run_id);
	bool (*learning_of)(struct sh_daemon *d, uint32_t run_id);
	bool (*learning_record)(struct sh_daemon *d, uint32_t run_id, const struct sh_buf *rec);
};

#endif
