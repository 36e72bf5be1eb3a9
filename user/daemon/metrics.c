// SPDX-License-Identifier: GPL-2.0
/*
 * Metrics (metrics.h): counters the daemon keeps and the kernel's own,
 * written as Prometheus text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "metrics.h"
#include "names.h"
#include "pin.h"
#include "util.h"

void sh_metrics_count(struct sh_metrics *m, const char *policy, unsigned hook, unsigned action)
{
	struct sh_metric_count *c;

	m->dirty = true;
	for (size_t i = 0; i < m->n; i++) {
		c = &m->v[i];
		if (c->hook == hook && c->action == action && !strcmp(c->policy, policy)) {
			c->n++;
			return;
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 32;

		c = realloc(m->v, cap * sizeof(*c));
		if (!c)
			return;   /* the kernel's per-hook counts still hold */
		m->v = c;
		m->cap = cap;
	}
	c = &m->v[m->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->policy, sizeof(c->policy), "%s", policy);
	c->hook = (uint8_t)hook;
	c->action = (uint8_t)action;
	c->n = 1;
}

void sh_metrics_free(struct sh_metrics *m)
{
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

const char *sh_metrics_digest(struct sh_daemon *d, char out[17])
{
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	uint64_t h = SH_FNV_BASIS;
	char buf[4096];

	for (size_t i = 0; i < set->n; i++) {
		const char *base, *file = set->pols[i].file;
		ssize_t r;
		int fd;

		if (!file)
			continue;   /* a learning run's, made in memory: not the host's policy */
		base = strrchr(file, '/');
		fd = open(file, O_RDONLY | O_CLOEXEC);
		base = base ? base + 1 : file;
		h = sh_fnv1a(h, base, strlen(base) + 1);
		while (fd >= 0 && (r = read(fd, buf, sizeof(buf))) > 0)
			h = sh_fnv1a(h, buf, (size_t)r);
		if (fd >= 0)
			close(fd);
	}
	snprintf(out, 17, "%016" PRIx64, h);
	return out;
}

static void line(struct sh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct sh_buf *b, const char *fmt, ...)
{
	char s[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if (n > 0)
		sh_buf_write(b, s, (size_t)n < sizeof(s) ? (size_t)n : sizeof(s) - 1);
}

static void help(struct sh_buf *b, const char *name, const char *type, const char *text)
{
	line(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void kernel_counts(struct sh_buf *b, const uint64_t *c)
{
	static const char *const what[] = { "deny", "audit" };

	help(b, "sharness_kernel_violations_total", "counter",
	     "Refusals (deny) and would-be refusals (audit) counted in the kernel, by hook.");
	for (unsigned w = 0; w < 2; w++)
		for (unsigned h = 1; h < SH_HOOK_MAX; h++)
			line(b, "sharness_kernel_violations_total{hook=\"%s\",action=\"%s\"} %" PRIu64 "\n",
			     sh_hook_name(h), what[w], c[SH_CNT_HOOK(h, w ? SH_CNT_AUDIT : SH_CNT_DENY)]);
}

/* Counters of the BPF side, each one number. */
static const struct {
	const char *name, *help;
	unsigned idx;
} kernel_counter[] = {
	{ "sharness_events_dropped_total", "Events lost in the kernel: the ring was full.",
	  SH_CNT_DROPPED },
	{ "sharness_memo_hits_total", "Uses judged by a directory memo, without resolving their path.",
	  SH_CNT_MEMO_HIT },
	{ "sharness_memo_stores_total", "Directory memos made.", SH_CNT_MEMO_STORE },
	{ "sharness_created_opens_total",
	  "Opens of a file the same open made, judged at its create (path_mknod).",
	  SH_CNT_CREATED_OPEN },
	{ "sharness_scratch_busy_total",
	  "Uses refused because every working buffer of a CPU was held by a preempted judgement.",
	  SH_CNT_SCRATCH_BUSY },
	{ "sharness_scratch_nested_total",
	  "Working buffers passed by because a preempted judgement held them.", SH_CNT_SCRATCH_NEST },
	{ "sharness_scratch_leaked_total",
	  "Working buffers a task found still held by its own earlier call (a program's fault).",
	  SH_CNT_SCRATCH_LEAK },
	{ "sharness_scratch_tree_total",
	  "Judgements refused: their tree held its share of the CPU's scratch buffers.",
	  SH_CNT_SCRATCH_TREE },
	{ "sharness_pins_hashed_total",
	  "Pinned executables the kernel hashed at their exec, found as pinned and entered.",
	  SH_CNT_PIN_HASHED },
	{ "sharness_pattern_lost_total",
	  "Cgroups a pattern matched that the tag map could not take (not held).",
	  SH_CNT_PATTERN_LOST },
	{ "sharness_mark_lost_total",
	  "Processes a tree's member moved that could not be marked foreign (no memory for the entry).",
	  SH_CNT_MARK_LOST },
};

static void kernel_counters(struct sh_buf *b, const uint64_t *c)
{
	for (size_t i = 0; i < sizeof(kernel_counter) / sizeof(kernel_counter[0]); i++) {
		help(b, kernel_counter[i].name, "counter", kernel_counter[i].help);
		line(b, "%s %" PRIu64 "\n", kernel_counter[i].name, c[kernel_counter[i].idx]);
	}
}

/* Calls the kernel let through a program unrun (sh_enforcer_unjudged): the
 * sum, and each program whose count is not 0. */
static void unjudged(struct sh_daemon *d, struct sh_buf *b)
{
	struct sh_prog_count c[SH_MAX_PROGS];
	ssize_t n = sh_enforcer_unjudged(d->enf, c);
	uint64_t sum = 0;

	help(b, "sharness_unjudged_calls_unreadable", "gauge",
	     "1 while the programs' counts of calls let through unjudged cannot be read.");
	line(b, "sharness_unjudged_calls_unreadable %d\n", n < 0);
	if (n < 0)
		return;   /* no number is made up */
	help(b, "sharness_unjudged_calls_total", "counter",
	     "Calls the kernel let through a sharness program without running it (its BPF "
	     "recursion check), by program; the sum without a label.");
	for (ssize_t i = 0; i < n; i++) {
		sum += c[i].unjudged;
		if (c[i].unjudged)
			line(b, "sharness_unjudged_calls_total{program=\"%s\"} %" PRIu64 "\n",
			     c[i].program, c[i].unjudged);
	}
	line(b, "sharness_unjudged_calls_total %" PRIu64 "\n", sum);
}

void sh_metrics_format(struct sh_daemon *d, struct sh_buf *b)
{
	struct sh_metrics *m = &d->metrics;
	uint64_t c[SH_CNT_MAX];
	unsigned links = 0, tags = 0;
	size_t ntags, np = 0;
	char dg[17];

	sh_enforcer_counters(d->enf, c);
	sh_enforcer_tags(d->enf, &ntags);
	sh_enforcer_pattern_tags(d->enf, &np, false);
	ntags += np;
	sh_pin_state(d->pin_dir, &links, &tags);
	help(b, "sharness_info", "gauge", "The daemon's version and the digest of its policy set.");
	line(b, "sharness_info{version=\"%s\",policy_digest=\"%s\"} 1\n", sh_version,
	     sh_metrics_digest(d, dg));
	help(b, "sharness_violations_total", "counter",
	     "Violations the daemon read, by policy, hook and action.");
	for (size_t i = 0; i < m->n; i++)
		line(b, "sharness_violations_total{policy=\"%s\",hook=\"%s\",action=\"%s\"} %" PRIu64 "\n",
		     m->v[i].policy, sh_hook_name(m->v[i].hook),
		     m->v[i].action == SH_EV_AUDIT ? "audit" : "deny", m->v[i].n);
	kernel_counts(b, c);
	kernel_counters(b, c);
	help(b, "sharness_events_suppressed_total", "counter", "Records folded into suppressed records.");
	line(b, "sharness_events_suppressed_total %" PRIu64 "\n", d->rl.suppressed_total);
	help(b, "sharness_events_logged_total", "counter", "Violation records written to the audit log.");
	line(b, "sharness_events_logged_total %" PRIu64 "\n", d->events_logged);
	help(b, "sharness_log_write_errors_total", "counter", "Audit log writes that failed.");
	line(b, "sharness_log_write_errors_total %" PRIu64 "\n", (uint64_t)d->audit.write_errors);
	unjudged(d, b);
	help(b, "sharness_programs_attached", "gauge",
	     "BPF programs attached and pinned (0 while resting: nothing tagged).");
	line(b, "sharness_programs_attached %u\n", links);
	help(b, "sharness_resting", "gauge",
	     "1 while nothing is tagged and the programs are detached (--detach-idle).");
	line(b, "sharness_resting %d\n", sh_enforcer_resting(d->enf));
	help(b, "sharness_policies", "gauge", "Policies in force.");
	line(b, "sharness_policies %zu\n", sh_enforcer_policies(d->enf)->n);
	help(b, "sharness_tagged_trees", "gauge", "Tagged cgroups (policy cgroup lines, tags and runs).");
	line(b, "sharness_tagged_trees %zu\n", ntags);
}

void sh_metrics_write(struct sh_daemon *d, bool force)
{
	struct sh_metrics *m = &d->metrics;
	uint64_t now = sh_now_ns(CLOCK_MONOTONIC);
	char tmp[4096 + 8];
	struct sh_buf b;
	FILE *f;

	if (!m->file)
		return;
	if (!force && !(m->dirty && now - m->written_ns >= 1000000000ull) &&
	    now - m->written_ns < 60000000000ull)
		return;
	sh_buf_init(&b);
	sh_metrics_format(d, &b);
	snprintf(tmp, sizeof(tmp), "%s.tmp", m->file);
	f = fopen(tmp, "we");
	if (!f || fwrite(b.p, 1, b.len, f) != b.len || fflush(f) || fclose(f) ||
	    rename(tmp, m->file)) {
		sh_log("cannot write metrics to %s: %s", m->file, strerror(errno));
		if (f)
			unlink(tmp);
	}
	sh_buf_free(&b);
	m->dirty = false;
	m->written_ns = now;
}
