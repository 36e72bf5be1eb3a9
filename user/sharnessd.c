// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessd: loads and attaches the programs, keeps the policy maps, reads
 * the ring buffer into the audit log and answers sharnessctl.
 *
 * Exit status: 0 stopped on request; 1 bad usage or set-up failure
 * (audit log, control socket); 2 invalid policy; 3 this kernel cannot
 * enforce. It never runs unenforced.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <systemd/sd-daemon.h>

#include "audit.h"
#include "control.h"
#include "enforcer.h"
#include "json.h"
#include "policy.h"
#include "util.h"

#define RUN_PARENT "/sys/fs/cgroup/sharness"

/*
 * Rate limit: per (policy, hook, op, target) at most RL_PER_KEY records a
 * second reach the log; the rest are counted and written as one
 * "suppressed" record when the second is over. A fixed table keeps memory
 * bounded whatever a storm looks like; a slot taken over by another key
 * first writes out what it had suppressed.
 */
#define RL_SLOTS    1024
#define RL_PER_KEY  10
#define RL_TARGET   256
#define RB_BATCH    2048 /* events per ring-buffer pass before serving clients */

struct rl_slot {
	uint64_t key;
	uint64_t window;        /* CLOCK_MONOTONIC second */
	uint32_t logged;
	uint64_t suppressed;
	uint16_t policy;
	uint8_t slot, hook, op;
	char target[RL_TARGET];
	uint32_t target_len;
};

struct daemon {
	const char *policy_dir;
	const char *audit_path;
	const char *socket_path;
	const char *pin_dir;
	struct sh_enforcer *enf;
	struct sh_audit audit;
	struct sh_buf buf;
	uint64_t dropped_logged;
	uint64_t events_logged;
	uint32_t next_run;
	uint64_t started_ns;
	int reloads;
	bool unloading;
	struct rl_slot *rl;
	uint64_t suppressed_total;
	unsigned batch;
	struct run_count { uint32_t id; uint64_t denials; } *runs;
	size_t nruns;
};

/* Violations seen per live run, reported in its run-end record. */
static struct run_count *run_find(struct daemon *d, uint32_t id, bool add)
{
	struct run_count *r;

	for (size_t i = 0; i < d->nruns; i++)
		if (d->runs[i].id == id)
			return &d->runs[i];
	if (!add)
		return NULL;
	r = realloc(d->runs, (d->nruns + 1) * sizeof(*r));
	if (!r)
		return NULL;
	d->runs = r;
	d->runs[d->nruns] = (struct run_count){ .id = id };
	return &d->runs[d->nruns++];
}

static uint64_t rl_hash(const struct sh_event *ev)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	uint32_t n = ev->path_len < sizeof(ev->path) ? ev->path_len : sizeof(ev->path);
	const uint8_t hdr[] = { ev->slot, (uint8_t)ev->policy, (uint8_t)(ev->policy >> 8),
				(uint8_t)ev->hook, (uint8_t)ev->op, (uint8_t)ev->action };

	for (size_t i = 0; i < sizeof(hdr); i++)
		h = (h ^ hdr[i]) * 1099511628211ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)ev->path[i]) * 1099511628211ull;
	if (ev->hook == SH_HOOK_SIGNAL || ev->hook == SH_HOOK_PTRACE || ev->hook == SH_HOOK_TASK)
		h = (h ^ ev->target_pid) * 1099511628211ull;
	if (ev->hook == SH_HOOK_CAPABILITY)
		h = (h ^ ev->op_flags) * 1099511628211ull;
	return h ? h : 1;
}

static void audit_emit(struct daemon *d);

static void rl_flush_slot(struct daemon *d, struct rl_slot *r)
{
	const char *pol;

	if (!r->suppressed)
		return;
	pol = sh_enforcer_policy_name(d->enf, r->slot, r->policy);
	sh_audit_begin_meta(&d->buf, "suppressed");
	sh_json_uint_field(&d->buf, "count", r->suppressed);
	sh_json_str_field(&d->buf, "policy", (const uint8_t *)(pol ? pol : "?"),
			  strlen(pol ? pol : "?"));
	sh_json_str_field(&d->buf, "hook", (const uint8_t *)sh_hook_name(r->hook),
			  strlen(sh_hook_name(r->hook)));
	sh_json_str_field(&d->buf, "op", (const uint8_t *)sh_op_name(r->op),
			  strlen(sh_op_name(r->op)));
	sh_json_str_field(&d->buf, "target", (const uint8_t *)r->target, r->target_len);
	sh_json_uint_field(&d->buf, "window_s", 1);
	sh_json_end(&d->buf);
	audit_emit(d);
	r->suppressed = 0;
}

/* true: log this event; false: counted as suppressed. */
static bool rl_admit(struct daemon *d, const struct sh_event *ev)
{
	uint64_t key = rl_hash(ev), now = sh_now_ns(CLOCK_MONOTONIC) / 1000000000ull;
	struct rl_slot *r = &d->rl[key % RL_SLOTS];

	if (r->key != key || r->window != now) {
		rl_flush_slot(d, r);
		if (r->key != key) {
			uint32_t n = ev->path_len < RL_TARGET ? ev->path_len : RL_TARGET;

			r->key = key;
			r->policy = ev->policy;
			r->slot = ev->slot;
			r->hook = ev->hook;
			r->op = ev->op;
			if (ev->hook == SH_HOOK_SIGNAL || ev->hook == SH_HOOK_PTRACE ||
			    ev->hook == SH_HOOK_TASK)
				n = snprintf(r->target, RL_TARGET, "%u", ev->target_pid);
			else if (ev->hook == SH_HOOK_CAPABILITY)
				n = snprintf(r->target, RL_TARGET, "%s",
					     sh_cap_name(ev->op_flags) ? sh_cap_name(ev->op_flags) : "?");
			else
				memcpy(r->target, ev->path, n);
			r->target_len = n;
		}
		r->window = now;
		r->logged = 0;
	}
	if (r->logged < RL_PER_KEY) {
		r->logged++;
		return true;
	}
	r->suppressed++;
	d->suppressed_total++;
	return false;
}

/* Writes out every suppression count of a second that is over. */
static void rl_flush_old(struct daemon *d)
{
	uint64_t now = sh_now_ns(CLOCK_MONOTONIC) / 1000000000ull;

	for (unsigned i = 0; i < RL_SLOTS; i++)
		if (d->rl[i].suppressed && d->rl[i].window != now)
			rl_flush_slot(d, &d->rl[i]);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sharnessd [--policy-dir DIR] [--audit-log FILE] [--socket PATH]\n"
		"                 [--pin-dir DIR] [--foreground] [--verbose]\n"
		"       sharnessd --unload [--force] [--pin-dir DIR] [--socket PATH] [--audit-log FILE]\n"
		"                 detach pinned programs left by a stopped daemon\n"
		"defaults: --policy-dir /etc/sharness/policies\n"
		"          --audit-log /var/log/sharness/audit.jsonl\n"
		"          --socket " SH_CTL_DEFAULT_SOCKET "\n"
		"          --pin-dir /sys/fs/bpf/sharness\n"
		"exit status: 0 stopped, 1 set-up failure, 2 invalid policy, 3 kernel cannot enforce\n");
}

static void audit_emit(struct daemon *d)
{
	int err = sh_audit_write(&d->audit, &d->buf);

	if (err && d->audit.lost_since_ok == 1)
		sh_log("cannot write audit log %s: %s (records are being lost; counted in status "
		       "and reported in the log once it can be written)", d->audit_path,
		       strerror(-err));
	sh_buf_reset(&d->buf);
}

static int on_event(void *ctx, const struct sh_event *ev)
{
	struct daemon *d = ctx;
	uint32_t run_id = 0;
	const char *cg = sh_enforcer_tag_path(d->enf, ev->origin, &run_id);
	struct run_count *rc;

	if (cg && run_id && (rc = run_find(d, run_id, true)))
		rc->denials++;
	if (rl_admit(d, ev)) {
		sh_audit_format_event(&d->buf, ev,
				      sh_enforcer_policy_name(d->enf, ev->slot, ev->policy),
				      cg, run_id);
		audit_emit(d);
		d->events_logged++;
	}
	/* In a storm, stop after a batch so clients are served in between. */
	if (++d->batch >= RB_BATCH)
		return -EAGAIN;
	return 0;
}

/* Events the kernel could not queue are counted there; say so in the log. */
static void check_dropped(struct daemon *d)
{
	uint64_t c[SH_CNT_MAX];

	uint64_t reported = sh_enforcer_dropped_reported(d->enf);

	sh_enforcer_counters(d->enf, c);
	if (c[SH_CNT_DROPPED] > reported) {
		sh_audit_begin_meta(&d->buf, "lost");
		sh_json_uint_field(&d->buf, "count", c[SH_CNT_DROPPED] - reported);
		sh_json_uint_field(&d->buf, "total", c[SH_CNT_DROPPED]);
		sh_json_end(&d->buf);
		audit_emit(d);
		sh_enforcer_set_dropped_reported(d->enf, c[SH_CNT_DROPPED]);
	}
}

static void log_errors(const struct sh_errors *errs, int fd)
{
	for (size_t i = 0; i < errs->n; i++) {
		if (fd >= 0)
			sh_ctl_reply(fd, 'E', "%s\n", errs->msgs[i]);
		else
			sh_log("%s", errs->msgs[i]);
	}
}

/* Re-read the policy directory and swap it in; on any error the old set
 * stays in force. fd: a control connection to report to, or -1. */
static int protect_own_files(struct daemon *d);

static int reload(struct daemon *d, int fd)
{
	struct sh_policy_set set = {};
	struct sh_errors errs = {};
	int err;

	err = sh_policy_load_dir(d->policy_dir, &set, &errs);
	if (!err)
		err = sh_enforcer_apply(d->enf, &set, &errs);
	sh_audit_begin_meta(&d->buf, "reload");
	sh_json_str_field(&d->buf, "result", (const uint8_t *)(err ? "failed" : "ok"),
			  err ? 6 : 2);
	if (err && errs.n)
		sh_json_str_field(&d->buf, "error", (const uint8_t *)errs.msgs[0],
				  strlen(errs.msgs[0]));
	sh_json_uint_field(&d->buf, "policies", err ? 0 : sh_enforcer_policies(d->enf)->n);
	sh_json_end(&d->buf);
	audit_emit(d);
	if (err) {
		log_errors(&errs, fd);
		if (fd >= 0)
			sh_ctl_reply(fd, 'E', "reload failed: the previous policy stays in force\n");
		sh_log("reload of %s failed; the previous policy stays in force", d->policy_dir);
	} else {
		d->reloads++;
		protect_own_files(d);   /* the new set's files; logged if it fails */
		if (fd >= 0)
			sh_ctl_reply(fd, 'O', "reloaded %zu policies from %s\n",
				     sh_enforcer_policies(d->enf)->n, d->policy_dir);
		sh_log("loaded %zu policies from %s", sh_enforcer_policies(d->enf)->n, d->policy_dir);
	}
	sh_policy_set_free(&set);
	sh_errors_free(&errs);
	return err ? SH_EXIT_POLICY : 0;
}

static void status(struct daemon *d, int fd, bool json)
{
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	uint64_t c[SH_CNT_MAX];
	size_t ntags;
	const struct sh_tag_entry *tags = sh_enforcer_tags(d->enf, &ntags);
	struct sh_buf b;

	sh_enforcer_counters(d->enf, c);
	sh_buf_init(&b);
	if (json) {
		sh_json_begin(&b);
		sh_json_str_field(&b, "state", (const uint8_t *)"enforcing", 9);
		sh_json_uint_field(&b, "pid", getpid());
		sh_json_uint_field(&b, "policies", set->n);
		sh_json_uint_field(&b, "tagged", ntags);
		for (unsigned h = 1; h < SH_HOOK_MAX; h++) {
			char k[32];

			snprintf(k, sizeof(k), "deny_%s", sh_hook_name(h));
			sh_json_uint_field(&b, k, c[SH_CNT_HOOK(h, SH_CNT_DENY)]);
			snprintf(k, sizeof(k), "audit_%s", sh_hook_name(h));
			sh_json_uint_field(&b, k, c[SH_CNT_HOOK(h, SH_CNT_AUDIT)]);
		}
		sh_json_uint_field(&b, "dropped", c[SH_CNT_DROPPED]);
		sh_json_uint_field(&b, "logged", d->events_logged);
		sh_json_uint_field(&b, "suppressed", d->suppressed_total);
		sh_json_uint_field(&b, "log_write_errors", d->audit.write_errors);
		sh_json_end(&b);
		sh_ctl_reply(fd, 'O', "%s", b.p);
		sh_buf_free(&b);
		return;
	}
	sh_ctl_reply(fd, 'O', "sharnessd %d: enforcing, programs attached\n", getpid());
	sh_ctl_reply(fd, 'O', "policy dir: %s  audit log: %s\n", d->policy_dir, d->audit_path);
	sh_ctl_reply(fd, 'O', "policies: %zu\n", set->n);
	for (size_t i = 0; i < set->n; i++)
		sh_ctl_reply(fd, 'O', "  %-20s %s  (%s)\n", set->pols[i].name,
			     set->pols[i].mode == SH_MODE_AUDIT ? "audit  " : "enforce",
			     set->pols[i].file);
	sh_ctl_reply(fd, 'O', "tagged cgroups: %zu\n", ntags);
	for (size_t i = 0; i < ntags; i++)
		sh_ctl_reply(fd, 'O', "  %-40s %s%s\n", tags[i].path, tags[i].policy,
			     tags[i].run_id ? "  (run)" : "");
	sh_ctl_reply(fd, 'O', "denials:");
	for (unsigned h = 1; h < SH_HOOK_MAX; h++)
		sh_ctl_reply(fd, 'O', " %s=%llu", sh_hook_name(h),
			     (unsigned long long)c[SH_CNT_HOOK(h, SH_CNT_DENY)]);
	sh_ctl_reply(fd, 'O', "\naudited:");
	for (unsigned h = 1; h < SH_HOOK_MAX; h++)
		sh_ctl_reply(fd, 'O', " %s=%llu", sh_hook_name(h),
			     (unsigned long long)c[SH_CNT_HOOK(h, SH_CNT_AUDIT)]);
	sh_ctl_reply(fd, 'O', "\nevents dropped in kernel: %llu  logged: %llu  suppressed: %llu  "
		     "log write errors: %llu\n",
		     (unsigned long long)c[SH_CNT_DROPPED], (unsigned long long)d->events_logged,
		     (unsigned long long)d->suppressed_total,
		     (unsigned long long)d->audit.write_errors);
}

static int prepare_run_parent(void)
{
	int err;

	/* pids must be delegated to the subtree runs are created in. */
	sh_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+pids");
	err = sh_mkdir_p(RUN_PARENT, 0755);
	if (err)
		return err;
	return sh_write_file(RUN_PARENT "/cgroup.subtree_control", "+pids");
}

static int run_begin(struct daemon *d, int fd, int argc, char **argv)
{
	char path[256], knob[300], err[512];
	const struct sh_policy *p;
	unsigned long pids = 0;
	uint32_t id;
	int ret;

	if (argc < 3) {
		sh_ctl_reply(fd, 'E', "run-begin: POLICY PIDS_MAX expected\n");
		return SH_EXIT_FAIL;
	}
	p = sh_policy_find(sh_enforcer_policies(d->enf), argv[1]);
	if (!p) {
		sh_ctl_reply(fd, 'E', "no policy named '%s' is loaded\n", argv[1]);
		return SH_EXIT_FAIL;
	}
	pids = strtoul(argv[2], NULL, 10);
	if (!pids)
		pids = p->pids_max;
	ret = prepare_run_parent();
	if (ret) {
		sh_ctl_reply(fd, 'E', "cannot prepare %s: %s\n", RUN_PARENT, strerror(-ret));
		return SH_EXIT_FAIL;
	}
	for (;;) {
		id = ++d->next_run;
		snprintf(path, sizeof(path), RUN_PARENT "/run-%u", id);
		if (mkdir(path, 0755) == 0)
			break;
		if (errno != EEXIST) {
			sh_ctl_reply(fd, 'E', "cannot create %s: %s\n", path, strerror(errno));
			return SH_EXIT_FAIL;
		}
	}
	if (pids) {
		snprintf(knob, sizeof(knob), "%s/pids.max", path);
		snprintf(err, sizeof(err), "%lu", pids);
		ret = sh_write_file(knob, err);
		if (ret) {
			sh_ctl_reply(fd, 'E', "cannot set %s: %s\n", knob, strerror(-ret));
			rmdir(path);
			return SH_EXIT_FAIL;
		}
	}
	ret = sh_enforcer_tag(d->enf, path, p->name, id, err, sizeof(err));
	if (ret) {
		sh_ctl_reply(fd, 'E', "%s\n", err);
		rmdir(path);
		return SH_EXIT_FAIL;
	}
	sh_audit_begin_meta(&d->buf, "run-start");
	sh_json_uint_field(&d->buf, "run", id);
	sh_json_str_field(&d->buf, "policy", (const uint8_t *)p->name, strlen(p->name));
	sh_json_str_field(&d->buf, "cgroup", (const uint8_t *)path, strlen(path));
	sh_json_uint_field(&d->buf, "pids_max", pids);
	if (argc > 3)
		sh_json_str_field(&d->buf, "command", (const uint8_t *)argv[3], strlen(argv[3]));
	sh_json_end(&d->buf);
	audit_emit(d);
	sh_ctl_reply(fd, 'O', "%u %s\n", id, path);
	return 0;
}

static int run_end(struct daemon *d, int fd, int argc, char **argv)
{
	char path[256], err[512];
	uint32_t id;

	if (argc < 4) {
		sh_ctl_reply(fd, 'E', "run-end: ID STATUS KILLED expected\n");
		return SH_EXIT_FAIL;
	}
	id = strtoul(argv[1], NULL, 10);
	snprintf(path, sizeof(path), RUN_PARENT "/run-%u", id);
	/* Log what the run's processes did before its tag goes. */
	do {
		d->batch = 0;
	} while (sh_enforcer_consume(d->enf) == -EAGAIN);
	if (sh_enforcer_untag(d->enf, path, err, sizeof(err)) && errno != ENOENT)
		sh_dbg("run-end %u: %s", id, err);
	rmdir(path);
	sh_audit_begin_meta(&d->buf, "run-end");
	sh_json_uint_field(&d->buf, "run", id);
	sh_json_str_field(&d->buf, "cgroup", (const uint8_t *)path, strlen(path));
	sh_json_str_field(&d->buf, "status", (const uint8_t *)argv[2], strlen(argv[2]));
	sh_json_uint_field(&d->buf, "killed", strtoul(argv[3], NULL, 10));
	{
		struct run_count *rc = run_find(d, id, false);

		sh_json_uint_field(&d->buf, "denials", rc ? rc->denials : 0);
		if (rc)
			*rc = d->runs[--d->nruns];
	}
	sh_json_end(&d->buf);
	audit_emit(d);
	return 0;
}

static int handle_request(struct daemon *d, int fd, int argc, char **argv)
{
	char err[512];
	int ret;

	if (strcmp(argv[0], "ping") == 0) {
		sh_ctl_reply(fd, 'O', "pong\n");
		return 0;
	}
	if (strcmp(argv[0], "status") == 0) {
		status(d, fd, argc > 1 && strcmp(argv[1], "json") == 0);
		return 0;
	}
	if (strcmp(argv[0], "reload") == 0)
		return reload(d, fd);
	if (strcmp(argv[0], "audit-path") == 0) {
		sh_ctl_reply(fd, 'O', "%s\n", d->audit_path);
		return 0;
	}
	if (strcmp(argv[0], "tag") == 0 && argc == 3) {
		ret = sh_enforcer_tag(d->enf, argv[1], argv[2], 0, err, sizeof(err));
		if (ret) {
			sh_ctl_reply(fd, 'E', "%s\n", err);
			return SH_EXIT_FAIL;
		}
		sh_audit_begin_meta(&d->buf, "tag");
		sh_json_str_field(&d->buf, "cgroup", (const uint8_t *)argv[1], strlen(argv[1]));
		sh_json_str_field(&d->buf, "policy", (const uint8_t *)argv[2], strlen(argv[2]));
		sh_json_end(&d->buf);
		audit_emit(d);
		return 0;
	}
	if (strcmp(argv[0], "untag") == 0 && argc == 2) {
		ret = sh_enforcer_untag(d->enf, argv[1], err, sizeof(err));
		if (ret) {
			sh_ctl_reply(fd, 'E', "%s\n", err);
			return SH_EXIT_FAIL;
		}
		sh_audit_begin_meta(&d->buf, "untag");
		sh_json_str_field(&d->buf, "cgroup", (const uint8_t *)argv[1], strlen(argv[1]));
		sh_json_end(&d->buf);
		audit_emit(d);
		return 0;
	}
	if (strcmp(argv[0], "unload") == 0) {
		size_t ntags;
		bool force = argc > 1 && strcmp(argv[1], "force") == 0;

		sh_enforcer_tags(d->enf, &ntags);
		if (ntags && !force) {
			sh_ctl_reply(fd, 'E', "%zu cgroup%s tagged: unloading would release %s; "
				     "end the runs and untag, or use --force\n", ntags,
				     ntags == 1 ? " is" : "s are", ntags == 1 ? "it" : "them");
			return SH_EXIT_FAIL;
		}
		ret = sh_enforcer_unload(d->enf);
		sh_audit_begin_meta(&d->buf, "unload");
		sh_json_uint_field(&d->buf, "tagged", ntags);
		sh_json_uint_field(&d->buf, "forced", force);
		sh_json_str_field(&d->buf, "result", (const uint8_t *)(ret ? "failed" : "ok"), ret ? 6 : 2);
		sh_json_end(&d->buf);
		audit_emit(d);
		if (ret) {
			sh_ctl_reply(fd, 'E', "unload failed: %s\n", strerror(-ret));
			return SH_EXIT_FAIL;
		}
		sh_log("unloaded on request%s: programs detached", force ? " (forced)" : "");
		sh_ctl_reply(fd, 'O', "unloaded: programs detached, sharnessd stopping\n");
		d->unloading = true;
		return 0;
	}
	if (strcmp(argv[0], "run-begin") == 0)
		return run_begin(d, fd, argc, argv);
	if (strcmp(argv[0], "run-end") == 0)
		return run_end(d, fd, argc, argv);
	sh_ctl_reply(fd, 'E', "unknown or malformed request '%.64s'\n", argv[0]);
	return SH_EXIT_FAIL;
}

/*
 * Is pid a process of a tagged tree? Root inside a tree passes SO_PEERCRED's
 * uid check, and must not untag itself: its cgroup and every ancestor are
 * looked up among the tags, and so is the membership the programs keep for
 * it (a process stays held after leaving its cgroup). Unknown counts as
 * inside: a request whose sender cannot be placed is refused.
 */
static bool peer_in_tree(struct daemon *d, pid_t pid)
{
	char path[PATH_MAX + 32], line[PATH_MAX];
	const struct sh_tag_entry *tags;
	uint64_t origin = 0;
	size_t ntags;
	FILE *f;
	int pfd;

	tags = sh_enforcer_tags(d->enf, &ntags);
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		int err = sh_enforcer_task_origin(d->enf, pfd, &origin);

		close(pfd);
		if (err)
			return true;
		for (size_t i = 0; origin && i < ntags; i++)
			if (tags[i].cgid == origin)
				return true;
	}
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	line[0] = 0;
	while (fgets(line, sizeof(line), f) && strncmp(line, "0::", 3) != 0)
		line[0] = 0;
	fclose(f);
	if (strncmp(line, "0::/", 4) != 0)
		return true;
	line[strcspn(line, "\n")] = 0;
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
	for (;;) {
		struct stat st;
		char *slash;

		if (stat(path, &st) < 0)
			return true;
		for (size_t i = 0; i < ntags; i++)
			if (tags[i].cgid == (uint64_t)st.st_ino)
				return true;
		slash = strrchr(path, '/');
		if (!slash || slash - path <= (ptrdiff_t)strlen("/sys/fs/cgroup"))
			return false;
		*slash = 0;
	}
}

/*
 * The daemon's own files, marked by inode so that no tree changes them
 * whatever its policy (hard links and other mounts of them included): the
 * policy directory and every policy file in it, the audit log's directory
 * and the log (which no tree reads either: other trees' records), the
 * control socket's directory (socket, SOCKET.tags, SOCKET.lock), and,
 * against renaming them away, every directory above those. Called again
 * after a reload and after the log is reopened: the set is replaced.
 */
#define PROTECT_MAX (SH_MAX_PROTECTED)

static int protect_add(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *path, uint32_t flags)
{
	if (*n >= PROTECT_MAX)
		return -E2BIG;
	snprintf(paths[*n], PATH_MAX, "%s", path);
	own[*n].path = paths[*n];
	own[*n].flags = flags;
	(*n)++;
	return 0;
}

/* DIR itself (flags) and every directory above it (renaming refused). */
static int protect_dir(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *dir, uint32_t flags)
{
	char up[PATH_MAX], *slash;
	int err = protect_add(own, paths, n, dir, flags);

	snprintf(up, sizeof(up), "%s", dir);
	while (!err && (slash = strrchr(up, '/')) && slash != up) {
		*slash = 0;
		err = protect_add(own, paths, n, up, SH_PROT_NAME);
	}
	return err;
}

static int protect_own_files(struct daemon *d)
{
	static struct sh_protected own[PROTECT_MAX];
	static char paths[PROTECT_MAX][PATH_MAX];
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	char dir[PATH_MAX], *slash;
	const char *failed = NULL;
	size_t n = 0;
	int err;

	err = protect_dir(own, paths, &n, d->policy_dir, SH_PROT_WRITE | SH_PROT_NAME);
	for (size_t i = 0; !err && i < set->n; i++)
		err = protect_add(own, paths, &n, set->pols[i].file, SH_PROT_WRITE | SH_PROT_NAME);
	for (int k = 0; !err && k < 2; k++) {
		snprintf(dir, sizeof(dir), "%s", k ? d->audit_path : d->socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = 0;
		err = protect_dir(own, paths, &n, dir, SH_PROT_WRITE | SH_PROT_NAME);
	}
	if (!err)
		err = protect_add(own, paths, &n, d->audit_path,
				  SH_PROT_WRITE | SH_PROT_READ | SH_PROT_NAME);
	if (!err)
		err = sh_enforcer_protect_set(d->enf, own, n, &failed);
	if (err)
		sh_log("cannot protect %s from the trees: %s", failed ? failed : "the daemon's files",
		       strerror(-err));
	return err;
}

/* One connection, one request. Bad input gets an error; the daemon goes on. */
static void serve(struct daemon *d, int lfd)
{
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char *buf, *argv[SH_CTL_MAX_ARGS];
	ssize_t n;
	int fd, argc, ret;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != 0) {
		char c;

		/* Take the request off the socket if it is there: closing with it
		 * unread resets the connection and loses the reply. Never block. */
		if (recv(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC) < 0)
			sh_dbg("refused client sent nothing yet");
		sh_ctl_reply(fd, 'E', "permission denied: the control socket is for root only\n");
		sh_ctl_reply(fd, 'X', "%d", SH_EXIT_DAEMON);
		close(fd);
		return;
	}
	if (peer_in_tree(d, cred.pid)) {
		char c;

		if (recv(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC) < 0)
			sh_dbg("refused client sent nothing yet");
		sh_log("refused a control request from pid %d: it is inside a tagged tree",
		       (int)cred.pid);
		sh_ctl_reply(fd, 'E', "permission denied: requests from inside a tagged tree are refused\n");
		sh_ctl_reply(fd, 'X', "%d", SH_EXIT_DAEMON);
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	buf = malloc(SH_CTL_MAX_MSG + 1);
	if (!buf) {
		close(fd);
		return;
	}
	n = recv(fd, buf, SH_CTL_MAX_MSG + 1, MSG_TRUNC);
	if (n < 0) {
		ret = SH_EXIT_DAEMON;
		sh_ctl_reply(fd, 'E', "no request received: %s\n", strerror(errno));
	} else if (n > SH_CTL_MAX_MSG) {
		ret = SH_EXIT_DAEMON;
		sh_ctl_reply(fd, 'E', "request too large (%zd bytes, at most %d)\n", n, SH_CTL_MAX_MSG);
	} else if ((argc = sh_ctl_parse(buf, n, argv, SH_CTL_MAX_ARGS)) < 0) {
		ret = SH_EXIT_DAEMON;
		sh_ctl_reply(fd, 'E', "malformed request: %s\n", strerror(-argc));
	} else {
		sh_dbg("request '%s' from pid %d", argv[0], cred.pid);
		ret = handle_request(d, fd, argc, argv);
	}
	sh_ctl_reply(fd, 'X', "%d", ret);
	free(buf);
	close(fd);
}

/* sharnessd --unload: detach what a stopped daemon left pinned. */
static int unload_pinned(struct daemon *d, bool force)
{
	unsigned links, tags;
	int gen = sh_pin_state(d->pin_dir, &links, &tags), err;

	if (gen <= 0) {
		sh_log("nothing pinned under %s: not enforcing", d->pin_dir);
		return 0;
	}
	if (tags && !force) {
		sh_log("%u cgroup%s tagged in %s/gen-%d: unloading would release %s; use --force",
		       tags, tags == 1 ? " is" : "s are", d->pin_dir, gen, tags == 1 ? "it" : "them");
		return SH_EXIT_FAIL;
	}
	err = sh_pin_unload(d->pin_dir);
	if (sh_audit_open(&d->audit, d->audit_path) == 0) {
		sh_audit_begin_meta(&d->buf, "unload");
		sh_json_uint_field(&d->buf, "tagged", tags);
		sh_json_uint_field(&d->buf, "forced", force);
		sh_json_str_field(&d->buf, "result", (const uint8_t *)(err ? "failed" : "ok"),
				  err ? 6 : 2);
		sh_json_end(&d->buf);
		audit_emit(d);
		sh_audit_close(&d->audit);
	}
	if (err) {
		sh_log("cannot unload %s: %s", d->pin_dir, strerror(-err));
		return SH_EXIT_FAIL;
	}
	sh_log("unloaded %u programs pinned under %s", links, d->pin_dir);
	return 0;
}

/* Without --foreground the daemon detaches once it enforces; the parent
 * exits with the child's set-up status so a failure is never hidden. */
static int daemonize(int *notify_fd)
{
	int p[2];
	pid_t pid;
	char st = 1;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		int status;

		close(p[1]);
		if (read(p[0], &st, 1) == 1)
			_exit(st);
		waitpid(pid, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : SH_EXIT_FAIL);
	}
	close(p[0]);
	setsid();
	*notify_fd = p[1];
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy-dir", required_argument, 0, 'p' },
		{ "audit-log", required_argument, 0, 'a' },
		{ "socket", required_argument, 0, 's' },
		{ "pin-dir", required_argument, 0, 'P' },
		{ "foreground", no_argument, 0, 'f' },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ "unload", no_argument, 0, 'U' },
		{ "force", no_argument, 0, 'F' },
		{ 0 }
	};
	bool unload = false, force = false;
	char state_path[PATH_MAX], lock_path[PATH_MAX];
	int lock_fd = -1;
	struct daemon d = {
		.policy_dir = "/etc/sharness/policies",
		.audit_path = "/var/log/sharness/audit.jsonl",
		.socket_path = SH_CTL_DEFAULT_SOCKET,
		.pin_dir = "/sys/fs/bpf/sharness",
	};
	struct sh_policy_set set = {};
	struct sh_errors errs = {};
	struct sh_probe probe;
	bool foreground = false, running = true;
	int c, err, lfd = -1, sfd = -1, efd = -1, notify_fd = -1, ret = SH_EXIT_FAIL;
	char why[768];
	sigset_t mask;

	sh_prog = "sharnessd";
	while ((c = getopt_long(argc, argv, "p:a:s:P:fvh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': d.policy_dir = optarg; break;
		case 'a': d.audit_path = optarg; break;
		case 's': d.socket_path = optarg; break;
		case 'P': d.pin_dir = optarg; break;
		case 'f': foreground = true; break;
		case 'v': sh_verbose = true; break;
		case 'U': unload = true; break;
		case 'F': force = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return SH_EXIT_FAIL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	sh_libbpf_quiet();
	sh_buf_init(&d.buf);
	d.rl = calloc(RL_SLOTS, sizeof(*d.rl));
	if (!d.rl) {
		sh_log("out of memory");
		return SH_EXIT_FAIL;
	}
	snprintf(state_path, sizeof(state_path), "%s.tags", d.socket_path);
	snprintf(lock_path, sizeof(lock_path), "%s.lock", d.socket_path);

	/* One daemon per socket: a second one would fight over the pins. */
	{
		char dir[PATH_MAX], *slash;

		snprintf(dir, sizeof(dir), "%s", d.socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			sh_mkdir_p(dir, 0700);
		}
	}
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		sh_log("another sharnessd holds %s (%s); %s", lock_path, strerror(errno),
		       unload ? "use sharnessctl unload" : "not starting a second one");
		return SH_EXIT_FAIL;
	}
	if (unload)
		return unload_pinned(&d, force);

	/* Policy first: a bad policy is reported even on a kernel that
	 * cannot enforce. */
	err = sh_policy_load_dir(d.policy_dir, &set, &errs);
	if (err) {
		log_errors(&errs, -1);
		sh_log("invalid policy in %s; not starting", d.policy_dir);
		ret = SH_EXIT_POLICY;
		goto out;
	}
	/* The cheap checks first; the real load below is the attach test. On
	 * a failure, the full probe (with an attach) names the deepest cause. */
	if (sh_probe_run_opts(&probe, false) && sh_probe_run(&probe)) {
		sh_log("this kernel cannot enforce: %s", sh_probe_why(&probe, why, sizeof(why)));
		sh_log("not starting: sharnessd never runs unenforced");
		ret = SH_EXIT_NOENFORCE;
		goto out;
	}
	if (!foreground && daemonize(&notify_fd)) {
		sh_log("cannot detach: %s", strerror(errno));
		goto out;
	}
	err = sh_audit_open(&d.audit, d.audit_path);
	if (err) {
		sh_log("cannot open audit log %s: %s", d.audit_path, strerror(-err));
		goto out;
	}
	err = sh_enforcer_open(&d.enf, on_event, &d, d.pin_dir, state_path);
	if (err) {
		probe.attach = false;
		probe.attach_err = err;
		sh_log("this kernel cannot enforce: %s", sh_probe_why(&probe, why, sizeof(why)));
		sh_log("not starting: sharnessd never runs unenforced");
		ret = SH_EXIT_NOENFORCE;
		goto out;
	}
	sh_enforcer_set_daemon(d.enf, getpid());
	{
		char v[32];
		unsigned long long min = 0;
		struct stat st;

		if (sh_read_file("/proc/sys/vm/mmap_min_addr", v, sizeof(v)) > 0)
			min = strtoull(v, NULL, 10);
		sh_enforcer_set_mmap_min(d.enf, min);
		if (stat("/proc/self/ns/ipc", &st) < 0) {
			sh_log("cannot find the host's IPC namespace (/proc/self/ns/ipc: %s): "
			       "mount procfs; not starting", strerror(errno));
			goto out;
		}
		sh_enforcer_set_host_ipc_ns(d.enf, (uint32_t)st.st_ino);
	}
	err = sh_enforcer_apply(d.enf, &set, &errs);
	if (err) {
		log_errors(&errs, -1);
		sh_log("cannot apply the policy in %s; not starting", d.policy_dir);
		ret = SH_EXIT_POLICY;
		goto out;
	}
	lfd = sh_ctl_listen(d.socket_path);
	if (lfd < 0) {
		sh_log("cannot listen on %s: %s", d.socket_path, strerror(-lfd));
		goto out;
	}
	{
		uint64_t ino;
		uint32_t kdev;

		err = sh_kernel_ino(d.socket_path, &ino, &kdev);
		if (err) {
			sh_log("cannot find %s's inode: %s", d.socket_path, strerror(-err));
			goto out;
		}
		sh_enforcer_set_control_socket(d.enf, ino, kdev);
	}
	if (protect_own_files(&d))
		goto out;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || efd < 0) {
		sh_log("cannot set up the event loop: %s", strerror(errno));
		goto out;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.fd = sh_enforcer_events_fd(d.enf);
		epoll_ctl(efd, EPOLL_CTL_ADD, ev.data.fd, &ev);
		ev.data.fd = lfd;
		epoll_ctl(efd, EPOLL_CTL_ADD, lfd, &ev);
		ev.data.fd = sfd;
		epoll_ctl(efd, EPOLL_CTL_ADD, sfd, &ev);
	}
	d.started_ns = sh_now_ns(CLOCK_MONOTONIC);
	d.next_run = (uint32_t)(sh_now_ns(CLOCK_REALTIME) / 1000000000ull) % 1000000 * 100;
	sh_audit_begin_meta(&d.buf, "daemon-start");
	sh_json_uint_field(&d.buf, "pid", getpid());
	sh_json_uint_field(&d.buf, "adopted", sh_enforcer_adopted(d.enf));
	sh_json_str_field(&d.buf, "kernel", (const uint8_t *)probe.kernel, strlen(probe.kernel));
	sh_json_uint_field(&d.buf, "policies", sh_enforcer_policies(d.enf)->n);
	sh_json_end(&d.buf);
	audit_emit(&d);
	sh_log("enforcing %zu policies from %s (kernel %s), audit log %s, control %s",
	       sh_enforcer_policies(d.enf)->n, d.policy_dir, probe.kernel, d.audit_path,
	       d.socket_path);
	/* Events queued while no daemon was reading. */
	sh_enforcer_consume(d.enf);
	check_dropped(&d);
	sd_notify(0, "READY=1");
	if (notify_fd >= 0) {
		char ok = 0;

		if (write(notify_fd, &ok, 1) != 1)
			sh_dbg("readiness pipe: %s", strerror(errno));
		close(notify_fd);
		notify_fd = -1;
		if (!freopen("/dev/null", "r", stdin)) {
			/* nothing to read anyway */
		}
	}

	while (running && !d.unloading) {
		struct epoll_event evs[8];
		int n = epoll_wait(efd, evs, 8, 1000);

		if (n < 0 && errno != EINTR) {
			sh_log("epoll: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == lfd) {
				serve(&d, lfd);
			} else if (evs[i].data.fd == sfd) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						int e = sh_audit_reopen(&d.audit);

						if (e)
							sh_log("cannot reopen %s: %s", d.audit_path, strerror(-e));
						else
							protect_own_files(&d);
						sd_notify(0, "RELOADING=1");
						reload(&d, -1);
						sd_notify(0, "READY=1");
					} else {
						running = false;
					}
				}
			} else {
				d.batch = 0;
				sh_enforcer_consume(d.enf);
			}
		}
		check_dropped(&d);
		rl_flush_old(&d);
	}
	sd_notify(0, "STOPPING=1");
	d.batch = 0;
	sh_enforcer_consume(d.enf);
	check_dropped(&d);
	for (unsigned i = 0; i < RL_SLOTS; i++)
		rl_flush_slot(&d, &d.rl[i]);
	sh_audit_begin_meta(&d.buf, "daemon-stop");
	sh_json_uint_field(&d.buf, "pid", getpid());
	sh_json_str_field(&d.buf, "enforcement",
			  (const uint8_t *)(d.unloading ? "unloaded" : "continues"),
			  d.unloading ? 8 : 9);
	sh_json_end(&d.buf);
	audit_emit(&d);
	sh_enforcer_set_daemon(d.enf, 0);
	if (d.unloading)
		sh_log("stopping: programs detached");
	else
		sh_log("stopping: programs stay attached and pinned under %s; "
		       "`sharnessctl unload` detaches them", d.pin_dir);
	ret = 0;
out:
	if (notify_fd >= 0) {
		char st = ret;

		if (write(notify_fd, &st, 1) != 1)
			sh_dbg("readiness pipe: %s", strerror(errno));
		close(notify_fd);
	}
	if (lfd >= 0) {
		close(lfd);
		unlink(d.socket_path);
	}
	if (sfd >= 0)
		close(sfd);
	if (efd >= 0)
		close(efd);
	sh_enforcer_destroy(d.enf);
	if (lock_fd >= 0)
		close(lock_fd);
	if (d.audit.path)
		sh_audit_close(&d.audit);
	sh_policy_set_free(&set);
	sh_errors_free(&errs);
	sh_buf_free(&d.buf);
	free(d.rl);
	free(d.runs);
	return ret;
}
