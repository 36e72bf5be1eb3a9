// SPDX-License-Identifier: GPL-2.0
/*
 * Runs: the cgroups `sharnessctl run` starts a command in. run-begin makes
 * RUN_PARENT/run-ID with its pids limit and tags it; run-end logs what the
 * run's processes did, untags it and removes it. Each run's violations are
 * counted for its run-end record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "metrics.h"
#include "records.h"
#include "reslimit.h"
#include "runs.h"
#include "util.h"

#define RUN_PARENT "/sys/fs/cgroup/sharness"

static struct sh_run_count *run_find(struct sh_daemon *d, uint32_t id, bool add)
{
	struct sh_run_count *r;

	for (size_t i = 0; i < d->nruns; i++)
		if (d->runs[i].id == id)
			return &d->runs[i];
	if (!add)
		return NULL;
	r = realloc(d->runs, (d->nruns + 1) * sizeof(*r));
	if (!r)
		return NULL;
	d->runs = r;
	d->runs[d->nruns] = (struct sh_run_count){ .id = id };
	return &d->runs[d->nruns++];
}

void sh_run_count_denial(struct sh_daemon *d, uint32_t run_id)
{
	struct sh_run_count *rc = run_find(d, run_id, true);

	if (rc)
		rc->denials++;
}

/* Controllers runs may use: pids always, the others for their limits. */
static const char *const controllers[] = { "pids", "memory", "cpu", "io" };

/*
 * Makes RUN_PARENT and enables, down to it, each controller the kernel
 * offers; which ones could not be enabled is left to the knobs a run
 * needs to say (their files are then missing).
 */
static int prepare_run_parent(void)
{
	char v[16];
	int err;

	err = sh_mkdir_p(RUN_PARENT, 0755);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++) {
		snprintf(v, sizeof(v), "+%s", controllers[i]);
		sh_write_file("/sys/fs/cgroup/cgroup.subtree_control", v);
		sh_write_file(RUN_PARENT "/cgroup.subtree_control", v);
	}
	return 0;
}

/* Why a knob is missing: its controller not enabled, or (memory.swap.max
 * where memory.max is there) a kernel that does not account swap. */
static const char *missing_knob(const char *path, const char *knob)
{
	char file[320];

	snprintf(file, sizeof(file), "%s/memory.max", path);
	if (!strcmp(knob, "memory.swap.max") && access(file, F_OK) == 0)
		return "; this kernel does not account swap (swap accounting is off), so swap "
		       "cannot be bounded: turn it on, or give the run its own memory-max and "
		       "start sharnessd with --run-memory-max none (the ceiling bounds swap too)";
	return "; the controller is not enabled for " RUN_PARENT
	       " (see /sys/fs/cgroup/cgroup.controllers and cgroup.subtree_control)";
}

/* Writes v to knob of cgroup path; on failure says which limit could not
 * be applied and why (to fd) and returns SH_EXIT_FAIL. */
static int set_knob(int fd, const char *path, const char *knob, const char *v, const char *what)
{
	char file[320];
	int err;

	snprintf(file, sizeof(file), "%s/%s", path, knob);
	err = sh_write_file(file, v);
	if (!err)
		return 0;
	sh_ctl_reply(fd, 'E', "cannot apply %s (%s = %s): %s%s\n", what, file, v, strerror(-err),
		     err == -ENOENT ? missing_knob(path, knob) : "");
	return SH_EXIT_FAIL;
}

/* The run's limits on its cgroup: each one applied, or the run refused. */
static int apply_limits(int fd, const char *path, unsigned long pids, const struct sh_limits *l)
{
	char v[64];
	int ret = 0;

	if (pids) {
		snprintf(v, sizeof(v), "%lu", pids);
		ret = set_knob(fd, path, "pids.max", v, "pids-max");
	}
	if (!ret && l->memory_max) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory_max);
		ret = set_knob(fd, path, "memory.max", v, "memory-max");
	}
	if (!ret && l->has_swap) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory_swap_max);
		ret = set_knob(fd, path, "memory.swap.max", v, "memory-swap-max");
	}
	if (!ret && l->cpu_max) {
		snprintf(v, sizeof(v), "%llu 100000", (unsigned long long)l->cpu_max * 1000);
		ret = set_knob(fd, path, "cpu.max", v, "cpu-max");
	}
	if (!ret && l->io_weight) {
		snprintf(v, sizeof(v), "default %u", l->io_weight);
		ret = set_knob(fd, path, "io.weight", v, "io-weight");
	}
	/* An OOM kill in the tree takes the whole tree, and only it. */
	if (!ret && (l->memory_max || l->has_swap))
		ret = set_knob(fd, path, "memory.oom.group", "1", "memory-max");
	else if (!ret) {
		char file[320];

		snprintf(file, sizeof(file), "%s/memory.oom.group", path);
		if (sh_write_file(file, "1"))
			sh_dbg("%s: no memory.oom.group (memory controller not enabled)", path);
	}
	return ret;
}

/* A new run cgroup (path, *id) with its limits; 0, or SH_EXIT_FAIL with
 * the reason sent to fd. */
static int make_run_cgroup(struct sh_daemon *d, int fd, unsigned long pids,
			   const struct sh_limits *l, char *path, size_t n, uint32_t *id)
{
	int ret;

	ret = prepare_run_parent();
	if (ret) {
		sh_ctl_reply(fd, 'E', "cannot prepare %s: %s\n", RUN_PARENT, strerror(-ret));
		return SH_EXIT_FAIL;
	}
	for (;;) {
		*id = ++d->next_run;
		snprintf(path, n, RUN_PARENT "/run-%u", *id);
		if (mkdir(path, 0755) == 0)
			break;
		if (errno != EEXIST) {
			sh_ctl_reply(fd, 'E', "cannot create %s: %s\n", path, strerror(errno));
			return SH_EXIT_FAIL;
		}
	}
	if (apply_limits(fd, path, pids, l)) {
		rmdir(path);
		return SH_EXIT_FAIL;
	}
	return 0;
}

static void rec_limits(struct sh_daemon *d, unsigned long pids, const struct sh_limits *l)
{
	sh_json_uint_field(&d->buf, "pids_max", pids);
	if (l->memory_max)
		sh_json_uint_field(&d->buf, "memory_max", l->memory_max);
	if (l->has_swap)
		sh_json_uint_field(&d->buf, "memory_swap_max", l->memory_swap_max);
	if (l->cpu_max)
		sh_json_uint_field(&d->buf, "cpu_max_pct", l->cpu_max);
	if (l->io_weight)
		sh_json_uint_field(&d->buf, "io_weight", l->io_weight);
	if (l->private_tmp)
		sh_json_uint_field(&d->buf, "private_tmp", l->private_tmp);
}

/*
 * The command line as one string a shell would read back into the same
 * words (records stay flat: one level of fields); "argv_truncated" when
 * the request held only its start.
 */
static void rec_argv(struct sh_daemon *d, int n, char **v, bool truncated)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_@%+=:,./-";
	struct sh_buf s;

	sh_buf_init(&s);
	for (int i = 0; i < n; i++) {
		if (i)
			sh_buf_putc(&s, ' ');
		if (v[i][0] && strspn(v[i], safe) == strlen(v[i])) {
			sh_buf_puts(&s, v[i]);
			continue;
		}
		sh_buf_putc(&s, '\'');
		for (const char *c = v[i]; *c; c++)
			if (*c == '\'')
				sh_buf_puts(&s, "'\\''");
			else
				sh_buf_putc(&s, *c);
		sh_buf_putc(&s, '\'');
	}
	if (!s.oom)
		sh_json_str_field(&d->buf, "argv", (const uint8_t *)(s.p ? s.p : ""), s.len);
	if (truncated)
		sh_json_int_field(&d->buf, "argv_truncated", 1);
	sh_buf_free(&s);
}

/* run-begin POLICY PIDS_MAX [COMMAND [LIMIT=VALUE...] [-- ARG...]]: replies
 * "ID CGROUP". The limits in the request override the policy's; the
 * arguments after "--" (or "--truncated": cut short) are the command line
 * the run-start record keeps. */
int sh_run_begin(struct sh_daemon *d, int fd, int argc, char **argv)
{
	char dg[17];
	char path[256], err[512];
	const struct sh_policy *p;
	struct sh_limits l, req = { 0 };
	unsigned long pids = 0;
	uint32_t id;
	int cmdv;

	p = sh_policy_find(sh_enforcer_policies(d->enf), argv[1]);
	if (!p) {
		sh_ctl_reply(fd, 'E', "%s\n", sh_policy_not_found(sh_enforcer_policies(d->enf),
								    argv[1], err, sizeof(err)));
		return SH_EXIT_FAIL;
	}
	/* LIMIT=VALUE words, then "--" (or "--truncated") and the command line. */
	for (cmdv = 4; cmdv < argc && strcmp(argv[cmdv], "--") && strcmp(argv[cmdv], "--truncated");
	     cmdv++)
		if (!sh_limits_parse_word(argv[cmdv], &req)) {
			sh_ctl_reply(fd, 'E', "bad limit '%s'\n", argv[cmdv]);
			return SH_EXIT_FAIL;
		}
	l = p->limits;
	sh_limits_merge(&l, &req);
	/* No memory-max from the policy or the flag: the daemon's ceiling,
	 * so that a tree cannot take the host into a global OOM (memory in a
	 * memfd or tmpfs counts in no process's RSS, but in the cgroup's). */
	bool ceiling = !l.memory_max && d->run_memory_max;

	if (ceiling) {
		l.memory_max = d->run_memory_max;
		/* Pages swapped out leave memory.max: swap is bounded too. */
		if (!l.has_swap) {
			l.memory_swap_max = d->run_memory_max;
			l.has_swap = true;
		}
	}
	pids = strtoul(argv[2], NULL, 10);
	if (!pids)
		pids = p->pids_max;
	if (make_run_cgroup(d, fd, pids, &l, path, sizeof(path), &id))
		return SH_EXIT_FAIL;
	if (sh_enforcer_tag(d->enf, path, p->name, id, err, sizeof(err))) {
		sh_ctl_reply(fd, 'E', "%s\n", err);
		rmdir(path);
		return SH_EXIT_FAIL;
	}
	sh_audit_begin_meta(&d->buf, "run-start");
	sh_json_uint_field(&d->buf, "run", id);
	sh_rec_str(d, "policy", p->name);
	/* Which exact policy files held the run (as `status` says). */
	sh_rec_str(d, "policy_digest", sh_metrics_digest(d, dg));
	sh_rec_str(d, "cgroup", path);
	rec_limits(d, pids, &l);
	if (ceiling)
		sh_rec_str(d, "memory_max_from", "daemon");
	if (argc > 3)
		sh_rec_str(d, "command", argv[3]);
	if (cmdv < argc)
		rec_argv(d, argc - cmdv - 1, argv + cmdv + 1, !strcmp(argv[cmdv], "--truncated"));
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	/* The third word: the private /tmp sharnessctl makes (0: none). */
	sh_ctl_reply(fd, 'O', "%u %s %llu\n", id, path, (unsigned long long)l.private_tmp);
	return 0;
}

/* What the run's cgroup saw of its limits: OOM kills, peak memory, CPU
 * used and the time it was throttled. */
static void rec_usage(struct sh_daemon *d, const char *path)
{
	static const struct { const char *file, *key, *field; } stats[] = {
		{ "memory.events", "oom_kill", "oom_kills" },
		{ "memory.peak", NULL, "memory_peak" },
		{ "cpu.stat", "usage_usec", "cpu_usage_usec" },
		{ "cpu.stat", "nr_throttled", "cpu_nr_throttled" },
		{ "cpu.stat", "throttled_usec", "cpu_throttled_usec" },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		if (!sh_cg_value(path, stats[i].file, stats[i].key, &v)) {
			sh_json_uint_field(&d->buf, stats[i].field, v);
			if (i == 0)
				sh_json_uint_field(&d->buf, "oom", v > 0);
		}
}

/* run-end ID STATUS KILLED */
int sh_run_end(struct sh_daemon *d, int fd, int argc, char **argv)
{
	char path[256], err[512];
	struct sh_run_count *rc;
	uint32_t id;

	(void)fd;
	(void)argc;
	id = strtoul(argv[1], NULL, 10);
	snprintf(path, sizeof(path), RUN_PARENT "/run-%u", id);
	/* Log what the run's processes did before its tag goes. */
	sh_rec_drain(d);
	if (sh_enforcer_untag(d->enf, path, err, sizeof(err)) && errno != ENOENT)
		sh_dbg("run-end %u: %s", id, err);
	sh_audit_begin_meta(&d->buf, "run-end");
	sh_json_uint_field(&d->buf, "run", id);
	sh_rec_str(d, "cgroup", path);
	sh_rec_str(d, "status", argv[2]);
	sh_json_uint_field(&d->buf, "killed", strtoul(argv[3], NULL, 10));
	rc = run_find(d, id, false);
	sh_json_uint_field(&d->buf, "denials", rc ? rc->denials : 0);
	if (rc)
		*rc = d->runs[--d->nruns];
	rec_usage(d, path);
	rmdir(path);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	return 0;
}
