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

/* A new run cgroup (path, *id) with at most pids tasks (0: no limit);
 * 0, or SH_EXIT_FAIL with the reason sent to fd. */
static int make_run_cgroup(struct sh_daemon *d, int fd, unsigned long pids,
			   char *path, size_t n, uint32_t *id)
{
	char knob[300], v[32];
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
	if (!pids)
		return 0;
	snprintf(knob, sizeof(knob), "%s/pids.max", path);
	snprintf(v, sizeof(v), "%lu", pids);
	ret = sh_write_file(knob, v);
	if (ret) {
		sh_ctl_reply(fd, 'E', "cannot set %s: %s\n", knob, strerror(-ret));
		rmdir(path);
		return SH_EXIT_FAIL;
	}
	return 0;
}

/* run-begin POLICY PIDS_MAX [COMMAND]: replies "ID CGROUP". */
int sh_run_begin(struct sh_daemon *d, int fd, int argc, char **argv)
{
	char path[256], err[512];
	const struct sh_policy *p;
	unsigned long pids = 0;
	uint32_t id;

	p = sh_policy_find(sh_enforcer_policies(d->enf), argv[1]);
	if (!p) {
		sh_ctl_reply(fd, 'E', "no policy named '%s' is loaded\n", argv[1]);
		return SH_EXIT_FAIL;
	}
	pids = strtoul(argv[2], NULL, 10);
	if (!pids)
		pids = p->pids_max;
	if (make_run_cgroup(d, fd, pids, path, sizeof(path), &id))
		return SH_EXIT_FAIL;
	if (sh_enforcer_tag(d->enf, path, p->name, id, err, sizeof(err))) {
		sh_ctl_reply(fd, 'E', "%s\n", err);
		rmdir(path);
		return SH_EXIT_FAIL;
	}
	sh_audit_begin_meta(&d->buf, "run-start");
	sh_json_uint_field(&d->buf, "run", id);
	sh_rec_str(d, "policy", p->name);
	sh_rec_str(d, "cgroup", path);
	sh_json_uint_field(&d->buf, "pids_max", pids);
	if (argc > 3)
		sh_rec_str(d, "command", argv[3]);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	sh_ctl_reply(fd, 'O', "%u %s\n", id, path);
	return 0;
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
	do {
		d->batch = 0;
	} while (sh_enforcer_consume(d->enf) == -EAGAIN);
	if (sh_enforcer_untag(d->enf, path, err, sizeof(err)) && errno != ENOENT)
		sh_dbg("run-end %u: %s", id, err);
	rmdir(path);
	sh_audit_begin_meta(&d->buf, "run-end");
	sh_json_uint_field(&d->buf, "run", id);
	sh_rec_str(d, "cgroup", path);
	sh_rec_str(d, "status", argv[2]);
	sh_json_uint_field(&d->buf, "killed", strtoul(argv[3], NULL, 10));
	rc = run_find(d, id, false);
	sh_json_uint_field(&d->buf, "denials", rc ? rc->denials : 0);
	if (rc)
		*rc = d->runs[--d->nruns];
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	return 0;
}
