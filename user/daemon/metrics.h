/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Metrics for fleets, in the Prometheus text format: what `sharnessctl
 * status --prometheus` prints and what `sharnessd --metrics-file` keeps
 * up to date for node_exporter's textfile collector.
 */
#ifndef SH_METRICS_H
#define SH_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

struct sh_daemon;

/* Violations the daemon read, by policy, hook and action. */
struct sh_metric_count {
	char policy[64];
	uint8_t hook, action;
	uint64_t n;
};

struct sh_metrics {
	struct sh_metric_count *v;
	size_t n, cap;
	bool dirty;              /* something changed since the file was written */
	uint64_t written_ns;     /* CLOCK_MONOTONIC of the last write */
	const char *file;        /* --metrics-file, or NULL */
};

void sh_metrics_count(struct sh_metrics *m, const char *policy, unsigned hook, unsigned action);
void sh_metrics_free(struct sh_metrics *m);
/* The whole exposition into b. */
void sh_metrics_format(struct sh_daemon *d, struct sh_buf *b);
/* Writes --metrics-file (atomically) when something changed and a second
 * has passed, and at least once a minute; force: now. */
void sh_metrics_write(struct sh_daemon *d, bool force);
/* A digest of the policy set in force (its files' names and contents):
 * equal digests, equal policies. */
const char *sh_metrics_digest(struct sh_daemon *d, char out[17]);

#endif
