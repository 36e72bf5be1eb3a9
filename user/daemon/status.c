// SPDX-License-Identifier: GPL-2.0
/*
 * The `status` request: what the daemon has in force, as text, as JSON
 * (`status --json`) and as Prometheus text: policies, tagged cgroups (by
 * the daemon and by cgroup patterns) with their processes, counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "names.h"
#include "pin.h"
#include "records.h"
#include "requests.h"
#include "reslimit.h"
#include "util.h"

#define STATUS_PROCS_MAX 64   /* processes listed per tagged cgroup */

static void json_str(struct sh_buf *b, const char *key, const char *s)
{
	sh_json_str_field(b, key, (const uint8_t *)s, strlen(s));
}

/* A reply longer than one message, in messages of at most 4000 bytes. */
static void reply_buf(int fd, const struct sh_buf *b)
{
	for (size_t off = 0; off < b->len; off += 4000) {
		size_t n = b->len - off < 4000 ? b->len - off : 4000;

		sh_ctl_reply(fd, 'O', "%.*s", (int)n, b->p + off);
	}
}

/* One process of a tagged tree: pid, comm, argv, when it started. */
static void json_process(struct sh_buf *b, pid_t pid, uint64_t boot_ns)
{
	char path[64], buf[8192], *rp;
	ssize_t n;

	sh_json_open(b, NULL, '{');
	sh_json_uint_field(b, "pid", pid);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = sh_read_file(path, buf, sizeof(buf));
	rp = n > 0 ? strrchr(buf, ')') : NULL;
	if (rp && strchr(buf, '(')) {
		char *lp = strchr(buf, '('), *f = rp + 2;
		unsigned long long start = 0;

		sh_json_str_field(b, "comm", (const uint8_t *)lp + 1, rp - lp - 1);
		for (int i = 0; i < 19 && f; i++)     /* starttime: the 22nd field */
			f = strchr(f + 1, ' ');
		if (f && sscanf(f, " %llu", &start) == 1) {
			char ts[64];

			sh_fmt_time(ts, sizeof(ts), boot_ns + start * (1000000000ull /
							       (unsigned)sysconf(_SC_CLK_TCK)));
			json_str(b, "started", ts);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = sh_read_file(path, buf, sizeof(buf));
	sh_json_open(b, "argv", '[');
	for (ssize_t i = 0; i < n; ) {
		size_t l = strnlen(buf + i, n - i);

		sh_json_str_field(b, NULL, (const uint8_t *)buf + i, l);
		i += l + 1;
	}
	sh_json_close(b, ']');
	sh_json_close(b, '}');
}

/* A run's cgroup knobs, as the kernel holds them now. */
static void json_limits(struct sh_buf *b, const char *cg)
{
	static const char *const knobs[] = { "pids.max", "memory.max", "memory.swap.max",
					     "cpu.max", "io.weight" };
	char file[PATH_MAX], v[256];

	sh_json_open(b, "limits", '{');
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", cg, knobs[i]);
		if (sh_read_file(file, v, sizeof(v)) <= 0)
			continue;
		v[strcspn(v, "\n")] = 0;
		json_str(b, knobs[i], v);
	}
	sh_json_close(b, '}');
}

/* A tagged cgroup: its policy, what tagged it, for a run its id, denials
 * and limits; the processes in it. */
static void json_tag(struct sh_daemon *d, struct sh_buf *b, const struct sh_tag_entry *t,
		     uint64_t boot_ns)
{
	pid_t pids[STATUS_PROCS_MAX];
	long n;

	sh_json_open(b, NULL, '{');
	json_str(b, "path", t->path);
	json_str(b, "policy", t->policy);
	sh_json_uint_field(b, "cgroup_id", t->cgid);
	json_str(b, "source", t->run_id ? "run" : t->pattern ? "pattern" : t->from_policy ? "policy"
		 : sh_enforcer_runtime_tag(d->enf, t->cgid) ? "container" : "tag");
	if (t->run_id) {
		uint64_t denials = 0;

		for (size_t i = 0; i < d->nruns; i++)
			if (d->runs[i].id == t->run_id)
				denials = d->runs[i].denials;
		sh_json_uint_field(b, "run", t->run_id);
		sh_json_uint_field(b, "denials", denials);
		json_limits(b, t->path);
	}
	n = sh_cgroup_pids(t->path, pids, STATUS_PROCS_MAX);
	sh_json_int_field(b, "processes_total", n < 0 ? 0 : n);
	sh_json_open(b, "processes", '[');
	for (long i = 0; i < n && i < STATUS_PROCS_MAX; i++)
		json_process(b, pids[i], boot_ns);
	sh_json_close(b, ']');
	sh_json_close(b, '}');
}

/* Every policy in force: name, id (its number in the kernel's maps),
 * mode, file, the cgroups it tags. */
static void json_policies(struct sh_buf *b, const struct sh_policy_set *set)
{
	sh_json_open(b, "loaded_policies", '[');
	for (size_t i = 0; i < set->n; i++) {
		const struct sh_policy *p = &set->pols[i];

		sh_json_open(b, NULL, '{');
		json_str(b, "name", p->name);
		sh_json_uint_field(b, "id", i);
		json_str(b, "mode", sh_mode_name(p->mode));
		if (p->file)
			json_str(b, "file", p->file);
		sh_json_open(b, "cgroups", '[');
		for (size_t c = 0; c < p->ncgroups; c++)
			json_str(b, NULL, p->cgroups[c]);
		sh_json_close(b, ']');
		sh_json_close(b, '}');
	}
	sh_json_close(b, ']');
}

/* What the daemon knows beyond the kernel's counters: where its files
 * are, the journal, policies, tagged trees, violations by policy. */
static void status_json_more(struct sh_daemon *d, struct sh_buf *b)
{
	uint64_t boot_ns = sh_now_ns(CLOCK_REALTIME) - sh_now_ns(CLOCK_BOOTTIME);
	const struct sh_tag_entry *tags;
	unsigned links = 0, pinned = 0;
	size_t ntags;

	unsigned attach_ms = 0;
	bool attached = sh_enforcer_attached(d->enf, &attach_ms);

	sh_pin_state(d->pin_dir, &links, &pinned);
	sh_json_uint_field(b, "programs_attached", links);
	/* Detached while nothing is tagged (--detach-idle). */
	sh_json_bool_field(b, "resting", !attached && sh_enforcer_resting(d->enf));
	sh_json_uint_field(b, "last_attach_ms", attach_ms);
	json_str(b, "socket", d->socket_path);
	json_str(b, "pin_dir", d->pin_dir);
	json_str(b, "audit_log", d->audit_path);
	json_str(b, "policy_dir", d->policy_dir);
	if (d->metrics.file)
		json_str(b, "metrics_file", d->metrics.file);
	json_str(b, "journal", d->journal.on ? "on" : "off");
	sh_json_uint_field(b, "run_memory_max", d->run_memory_max);
	sh_json_uint_field(b, "journal_sent", d->journal.sent);
	sh_json_uint_field(b, "journal_errors", d->journal.errors);
	json_policies(b, sh_enforcer_policies(d->enf));
	tags = sh_enforcer_tags(d->enf, &ntags);
	sh_json_open(b, "tagged_cgroups", '[');
	for (size_t i = 0; i < ntags; i++)
		json_tag(d, b, &tags[i], boot_ns);
	tags = sh_enforcer_pattern_tags(d->enf, &ntags, false);
	for (size_t i = 0; i < ntags; i++)
		json_tag(d, b, &tags[i], boot_ns);
	sh_json_close(b, ']');
	/* Cgroups a pattern matched that the tag map could not take. */
	sh_json_uint_field(b, "pattern_lost", sh_patterns_lost(d->enf));
	/* Patterns whose directory was made again: they match nothing. */
	sh_json_uint_field(b, "patterns_stale", sh_patterns_stale(d->enf));
	sh_json_open(b, "violations", '[');
	for (size_t i = 0; i < d->metrics.n; i++) {
		const struct sh_metric_count *m = &d->metrics.v[i];

		sh_json_open(b, NULL, '{');
		json_str(b, "policy", m->policy);
		json_str(b, "hook", sh_hook_name(m->hook));
		json_str(b, "action", m->action == SH_EV_AUDIT ? "audit" : "deny");
		sh_json_uint_field(b, "count", m->n);
		sh_json_close(b, '}');
	}
	sh_json_close(b, ']');
}

/* The flat fields first (scripts match them as the first of their name),
 * then the nested ones. */
static void status_json(struct sh_daemon *d, int fd, const uint64_t *c)
{
	char dg[17];
	struct sh_buf b;
	int64_t unjudged;
	size_t ntags;

	sh_enforcer_tags(d->enf, &ntags);
	{
		size_t np = 0;

		sh_enforcer_pattern_tags(d->enf, &np, true);
		ntags += np;
	}
	sh_buf_init(&b);
	sh_json_begin(&b);
	json_str(&b, "state", "enforcing");
	sh_json_uint_field(&b, "pid", getpid());
	json_str(&b, "version", sh_version);
	json_str(&b, "policy_digest", sh_metrics_digest(d, dg));
	sh_json_uint_field(&b, "policies", sh_enforcer_policies(d->enf)->n);
	sh_json_uint_field(&b, "tagged", ntags);
	for (unsigned h = 1; h < SH_HOOK_MAX; h++) {
		char k[32];

		snprintf(k, sizeof(k), "deny_%s", sh_hook_name(h));
		sh_json_uint_field(&b, k, c[SH_CNT_HOOK(h, SH_CNT_DENY)]);
		snprintf(k, sizeof(k), "audit_%s", sh_hook_name(h));
		sh_json_uint_field(&b, k, c[SH_CNT_HOOK(h, SH_CNT_AUDIT)]);
	}
	sh_json_uint_field(&b, "dropped", c[SH_CNT_DROPPED]);
	sh_json_uint_field(&b, "learned", c[SH_CNT_LEARNED]);
	sh_json_uint_field(&b, "learn_repeats", c[SH_CNT_LEARN_DUP]);
	sh_json_uint_field(&b, "memo_hits", c[SH_CNT_MEMO_HIT]);
	sh_json_uint_field(&b, "memo_stores", c[SH_CNT_MEMO_STORE]);
	sh_json_uint_field(&b, "created_opens", c[SH_CNT_CREATED_OPEN]);
	sh_json_uint_field(&b, "scratch_busy", c[SH_CNT_SCRATCH_BUSY]);
	sh_json_uint_field(&b, "scratch_nested", c[SH_CNT_SCRATCH_NEST]);
	sh_json_uint_field(&b, "scratch_leaked", c[SH_CNT_SCRATCH_LEAK]);
	sh_json_uint_field(&b, "scratch_tree", c[SH_CNT_SCRATCH_TREE]);
	sh_json_uint_field(&b, "pins_hashed", c[SH_CNT_PIN_HASHED]);
	sh_json_uint_field(&b, "logged", d->events_logged);
	sh_json_uint_field(&b, "suppressed", d->rl.suppressed_total);
	sh_json_uint_field(&b, "log_write_errors", d->audit.write_errors);
	unjudged = sh_rec_unjudged_total(d);
	if (unjudged >= 0)
		sh_json_uint_field(&b, "unjudged", (uint64_t)unjudged);
	else
		json_str(&b, "unjudged_error", strerror((int)-unjudged));
	status_json_more(d, &b);
	sh_json_end(&b);
	if (b.oom)
		sh_ctl_reply(fd, 'E', "status: out of memory\n");
	else
		reply_buf(fd, &b);
	sh_buf_free(&b);
}

/* " hook=count" for every hook, counter what (SH_CNT_DENY or _AUDIT). */
static void status_counts(int fd, const uint64_t *c, unsigned what)
{
	for (unsigned h = 1; h < SH_HOOK_MAX; h++)
		sh_ctl_reply(fd, 'O', " %s=%llu", sh_hook_name(h),
			     (unsigned long long)c[SH_CNT_HOOK(h, what)]);
}

static void status_text(struct sh_daemon *d, int fd, const uint64_t *c)
{
	char dg[17];
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	size_t ntags, nptags;
	const struct sh_tag_entry *tags = sh_enforcer_tags(d->enf, &ntags), *ptags;
	unsigned links = 0, pinned = 0;
	int64_t unjudged;

	sh_pin_state(d->pin_dir, &links, &pinned);
	if (sh_enforcer_attached(d->enf, NULL))
		sh_ctl_reply(fd, 'O', "sharnessd %s (pid %d): enforcing, programs attached: %u\n",
			     sh_version, getpid(), links);
	else if (!sh_enforcer_resting(d->enf))
		sh_ctl_reply(fd, 'O', "sharnessd %s (pid %d): enforcing, nothing tagged, "
			     "programs detaching\n", sh_version, getpid());
	else
		sh_ctl_reply(fd, 'O', "sharnessd %s (pid %d): enforcing, resting: nothing tagged, "
			     "programs loaded and detached until the next tag\n",
			     sh_version, getpid());
	sh_ctl_reply(fd, 'O', "policy dir: %s  audit log: %s\n", d->policy_dir, d->audit_path);
	sh_ctl_reply(fd, 'O', "socket: %s  pin dir: %s\n", d->socket_path, d->pin_dir);
	sh_ctl_reply(fd, 'O', "journal: %s (sent %llu, failed %llu)\n",
		     d->journal.on ? "on" : "off", (unsigned long long)d->journal.sent,
		     (unsigned long long)d->journal.errors);
	if (d->run_memory_max) {
		char mb[32];

		sh_ctl_reply(fd, 'O', "run memory ceiling: %s (runs whose policy and flags set "
			     "no memory-max; --run-memory-max)\n",
			     sh_fmt_bytes(d->run_memory_max, mb, sizeof(mb)));
	} else {
		sh_ctl_reply(fd, 'O', "run memory ceiling: none (--run-memory-max none)\n");
	}
	sh_ctl_reply(fd, 'O', "policy digest: %s\n", sh_metrics_digest(d, dg));
	sh_ctl_reply(fd, 'O', "policies: %zu\n", set->n);
	for (size_t i = 0; i < set->n; i++)
		sh_ctl_reply(fd, 'O', "  %-20s %-7s  (%s)\n", set->pols[i].name,
			     sh_mode_name(set->pols[i].mode),
			     set->pols[i].file ? set->pols[i].file : "made for a learning run");
	ptags = sh_enforcer_pattern_tags(d->enf, &nptags, true);
	sh_ctl_reply(fd, 'O', "tagged cgroups: %zu\n", ntags + nptags);
	for (size_t i = 0; i < ntags + nptags; i++) {
		const struct sh_tag_entry *t = i < ntags ? &tags[i] : &ptags[i - ntags];
		char run[32] = "";
		long n = sh_cgroup_pids(t->path, NULL, 0);

		if (t->run_id)
			snprintf(run, sizeof(run), "  (run) %u", t->run_id);
		else if (t->pattern)
			snprintf(run, sizeof(run), "  (pattern)");
		else if (sh_enforcer_runtime_tag(d->enf, t->cgid))
			snprintf(run, sizeof(run), "  (container)");
		sh_ctl_reply(fd, 'O', "  %-40s %s%s  processes: %ld\n", t->path, t->policy,
			     run, n < 0 ? 0 : n);
	}
	for (size_t i = 0; i < set->n; i++)
		for (size_t k = 0; k < set->pols[i].ncgroups; k++)
			if (sh_cgroup_is_pattern(set->pols[i].cgroups[k]))
				sh_ctl_reply(fd, 'O', "cgroup pattern: %s  %s\n",
					     set->pols[i].cgroups[k], set->pols[i].name);
	if (sh_patterns_stale(d->enf))
		sh_ctl_reply(fd, 'O', "cgroup patterns whose directory was removed or made again "
			     "(they tag nothing until a reload): %u\n", sh_patterns_stale(d->enf));
	if (sh_patterns_lost(d->enf))
		sh_ctl_reply(fd, 'O', "cgroups a pattern matched and could not tag (the tag map "
			     "is full): %llu\n", (unsigned long long)sh_patterns_lost(d->enf));
	sh_ctl_reply(fd, 'O', "denials:");
	status_counts(fd, c, SH_CNT_DENY);
	sh_ctl_reply(fd, 'O', "\naudited:");
	status_counts(fd, c, SH_CNT_AUDIT);
	sh_ctl_reply(fd, 'O', "\nevents dropped in kernel: %llu  logged: %llu  suppressed: %llu  "
		     "log write errors: %llu\n",
		     (unsigned long long)c[SH_CNT_DROPPED], (unsigned long long)d->events_logged,
		     (unsigned long long)d->rl.suppressed_total,
		     (unsigned long long)d->audit.write_errors);
	unjudged = sh_rec_unjudged_total(d);
	if (unjudged < 0)
		sh_ctl_reply(fd, 'O', "calls let through unjudged: unknown (%s)\n",
			     strerror((int)-unjudged));
	else
		sh_ctl_reply(fd, 'O', "calls let through unjudged: %lld%s\n", (long long)unjudged,
			     unjudged ? "  (the kernel's BPF recursion check: see the log)" : "");
}

/* status [json] */
int sh_req_status(struct sh_daemon *d, int fd, int argc, char **argv)
{
	uint64_t c[SH_CNT_MAX];

	sh_enforcer_counters(d->enf, c);
	if (argc > 1 && strcmp(argv[1], "json") == 0) {
		status_json(d, fd, c);
	} else if (argc > 1 && strcmp(argv[1], "prometheus") == 0) {
		struct sh_buf b;

		sh_buf_init(&b);
		sh_metrics_format(d, &b);
		sh_buf_write(&b, "", 1);
		/* A line per message: each is far below a message's size. */
		for (char *l = b.p, *e; l && *l; l = e + 1) {
			e = strchr(l, '\n');
			if (!e)
				break;
			sh_ctl_reply(fd, 'O', "%.*s\n", (int)(e - l), l);
		}
		sh_buf_free(&b);
	} else {
		status_text(d, fd, c);
	}
	return 0;
}
