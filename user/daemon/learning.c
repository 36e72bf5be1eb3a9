// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's side of `sharnessctl learn`: a learning run is a run whose
 * cgroup is tagged with a policy made for it in memory, "learn.ID", in
 * mode learn (SH_MODE_LEARN). From nothing (`learn-begin -`) every
 * allowlist is empty, so every exec, write, connect, bind, unix socket and
 * signal outside the tree is reported; from a policy (`learn-begin NAME`)
 * that policy's rules apply and only what they would refuse is reported.
 * The programs report each object once (the `learned` map); the records
 * go to the audit log as `learn` events and, for the run's client, into a
 * buffer that `learn-end` sends back. A reload keeps the learning policies
 * of the runs still going.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "learning.h"
#include "records.h"
#include "runs.h"
#include "util.h"

/* A learning run's records, at most (beyond: the run fails to learn). */
#define LEARN_BUF_MAX (32u << 20)

bool sh_learning_of(struct sh_daemon *d, uint32_t run_id)
{
	for (size_t i = 0; i < d->nlearning; i++)
		if (d->learning[i].run_id == run_id)
			return true;
	return false;
}

static struct sh_learning *learning_find(struct sh_daemon *d, uint32_t run_id)
{
	for (size_t i = 0; i < d->nlearning; i++)
		if (d->learning[i].run_id == run_id)
			return &d->learning[i];
	return NULL;
}

int sh_learning_add_policies(struct sh_daemon *d, struct sh_policy_set *set)
{
	struct sh_policy *v;

	if (!d->nlearning)
		return 0;
	v = realloc(set->pols, (set->n + d->nlearning) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	set->pols = v;
	for (size_t i = 0; i < d->nlearning; i++) {
		if (sh_policy_find(set, d->learning[i].pol.name))
			return -EEXIST;
		if (sh_policy_dup(&set->pols[set->n], &d->learning[i].pol))
			return -ENOMEM;
		set->n++;
	}
	return 0;
}

int sh_learning_adopt(struct sh_daemon *d, struct sh_policy_set *set)
{
	size_t n;
	const struct sh_tag_entry *t = sh_enforcer_tags(d->enf, &n);

	for (size_t i = 0; i < n; i++) {
		struct sh_learning *v, l = { .run_id = t[i].run_id, .orphan = true };

		if (t[i].from_policy || !t[i].run_id || strncmp(t[i].policy, "learn.", 6) ||
		    sh_policy_find(set, t[i].policy) || learning_find(d, t[i].run_id))
			continue;
		v = realloc(d->learning, (d->nlearning + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->learning = v;
		/* Every allowlist empty, in enforce mode: fail closed. */
		l.pol.name = strdup(t[i].policy);
		if (!l.pol.name)
			return -ENOMEM;
		l.pol.mode = SH_MODE_ENFORCE;
		l.pol.learn_all = true;
		l.pidfd = -1;
		sh_buf_init(&l.recs);
		d->learning[d->nlearning++] = l;
		sh_log("learning run %u (%s) outlived the daemon that began it: it is refused "
		       "every use until it ends", l.run_id, l.pol.name);
	}
	return sh_learning_add_policies(d, set);
}

/* Puts the policies in force again, with extra added and without the
 * policy named drop; 0 or -errno (the errors sent to fd). */
static int reapply(struct sh_daemon *d, int fd, const struct sh_policy *extra, const char *drop)
{
	struct sh_policy_set set = {};
	struct sh_errors errs = {};
	int err;

	/* A policy added, or the one added last dropped, changes only its
	 * own rules; anything else applies the whole set. */
	err = -EAGAIN;
	if (extra && !drop) {
		err = sh_enforcer_add_policy(d->enf, extra, &errs);
		if (err == -ENOSPC || err == -E2BIG) {
			/* A map full of the other slot's keys: a whole apply
			 * clears them first. */
			sh_errors_free(&errs);
			err = -EAGAIN;
		}
	} else if (drop && !extra) {
		/* What the run's processes did is logged under the policy's
		 * name before its id can be another's. */
		sh_rec_drain(d);
		sh_rl_flush_all(&d->rl);
		err = sh_enforcer_drop_policy(d->enf, drop);
		if (err == -ENOENT)
			err = 0;        /* not loaded: nothing to drop */
	}
	if (err == -EAGAIN || err == -EBUSY) {
		err = sh_policy_set_dup(&set, sh_enforcer_policies(d->enf), extra, extra ? 1 : 0);
		for (size_t i = 0; !err && drop && i < set.n; i++)
			if (!strcmp(set.pols[i].name, drop)) {
				sh_policy_free(&set.pols[i]);
				set.pols[i] = set.pols[--set.n];
				break;
			}
		if (!err)
			err = sh_enforcer_apply(d->enf, &set, &errs);
	}
	for (size_t i = 0; i < errs.n; i++)
		sh_ctl_reply(fd, 'E', "%s\n", errs.msgs[i]);
	if (err && !errs.n)
		sh_ctl_reply(fd, 'E', "cannot apply the learning policy: %s\n", strerror(-err));
	sh_policy_set_free(&set);
	sh_errors_free(&errs);
	d->metrics.dirty = true;
	return err;
}

/* The learning policy: from nothing, or a copy of the policy `from`
 * (without its cgroup= tags, which belong to it). */
static int make_policy(struct sh_daemon *d, int fd, const char *from, const char *name,
		       struct sh_policy *p)
{
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	const struct sh_policy *src;
	char err[512];

	memset(p, 0, sizeof(*p));
	if (sh_policy_find(set, name)) {
		sh_ctl_reply(fd, 'E', "a policy named %s is loaded: rename it to learn\n", name);
		return -EEXIST;
	}
	if (!strcmp(from, "-")) {
		p->learn_all = true;
	} else {
		src = sh_policy_find(set, from);
		if (!src) {
			sh_ctl_reply(fd, 'E', "%s\n", sh_policy_not_found(set, from, err, sizeof(err)));
			return -ENOENT;
		}
		if (sh_policy_dup(p, src))
			return -ENOMEM;
		for (size_t i = 0; i < p->ncgroups; i++)
			free(p->cgroups[i]);
		free(p->cgroups);
		free(p->cgroup_lines);
		p->cgroups = NULL;
		p->cgroup_lines = NULL;
		p->ncgroups = 0;
		free(p->name);
		free(p->file);
		p->file = NULL;
	}
	p->mode = SH_MODE_LEARN;
	p->name = strdup(name);
	return p->name ? 0 : -ENOMEM;
}

/* The requesting sharnessctl, as a pidfd the loop watches (-1: none). */
static int client_pidfd(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0)
		return -1;
	return (int)syscall(SYS_pidfd_open, cred.pid, 0);
}

/*
 * A learning run whose sharnessctl is gone would go on learning -- letting
 * through what its rules would refuse -- with nobody to end it. It is held
 * to a policy that refuses every use instead, and its processes killed.
 */
static void client_gone(struct sh_daemon *d, struct sh_learning *l)
{
	struct sh_policy p = { .mode = SH_MODE_ENFORCE, .learn_all = true };
	char kill_path[128];

	close(l->pidfd);
	l->pidfd = -1;
	l->orphan = true;
	l->client_gone = true;
	p.name = strdup(l->pol.name);
	if (p.name && !reapply(d, -1, &p, l->pol.name)) {
		sh_policy_free(&l->pol);
		l->pol = p;
	} else {
		sh_policy_free(&p);
		sh_log("learning run %u: cannot hold it to a closed policy", l->run_id);
	}
	snprintf(kill_path, sizeof(kill_path), "/sys/fs/cgroup/sharness/run-%u/cgroup.kill",
		 l->run_id);
	if (sh_write_file(kill_path, "1"))
		sh_log("learning run %u: cannot kill what is left of it", l->run_id);
	sh_log("learning run %u: its sharnessctl is gone; its processes are killed and it is "
	       "refused every use", l->run_id);
}

void sh_learning_watch(struct sh_daemon *d)
{
	for (size_t i = 0; i < d->nlearning; i++) {
		struct sh_learning *l = &d->learning[i];
		struct pollfd pfd = { .fd = l->pidfd, .events = POLLIN };
		char cg[64], id[16], *end[] = { "learn-end", id, "client-gone", "0" };
		uint64_t busy = 1;

		if (pfd.fd >= 0 && poll(&pfd, 1, 0) > 0)
			client_gone(d, l);
		if (!l->client_gone)
			continue;
		/* Once its processes are gone, the daemon ends the run itself. */
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/sharness/run-%u", l->run_id);
		if (sh_cg_value(cg, "cgroup.events", "populated", &busy) == 0 && !busy) {
			snprintf(id, sizeof(id), "%u", l->run_id);
			sh_learn_end(d, -1, 4, end);
			i--;    /* the last entry took its place */
		}
	}
}

/* learn-begin FROM|- PIDS_MAX [COMMAND [LIMIT=VALUE...]]: replies "ID CGROUP". */
int sh_learn_begin(struct sh_daemon *d, int fd, int argc, char **argv)
{
	struct sh_learning *v, l = {};
	const struct sh_policy *from;
	char name[32];
	char *rargv[SH_CTL_MAX_ARGS];
	int ret;

	snprintf(name, sizeof(name), "learn.%u", d->next_run + 1);
	v = realloc(d->learning, (d->nlearning + 1) * sizeof(*v));
	if (!v)
		return SH_EXIT_FAIL;
	d->learning = v;
	if (make_policy(d, fd, argv[1], name, &l.pol) || reapply(d, fd, &l.pol, NULL)) {
		sh_policy_free(&l.pol);
		return SH_EXIT_FAIL;
	}
	/* The run itself is an ordinary run of the learning policy. */
	rargv[0] = "run-begin";
	rargv[1] = name;
	for (int i = 2; i < argc && i < SH_CTL_MAX_ARGS; i++)
		rargv[i] = argv[i];
	ret = sh_run_begin(d, fd, argc, rargv);
	if (ret) {
		reapply(d, -1, NULL, name);
		sh_policy_free(&l.pol);
		return ret;
	}
	l.run_id = d->next_run;
	l.pidfd = client_pidfd(fd);
	/* The client rewrites the policy learned from: its file. */
	from = strcmp(argv[1], "-") ? sh_policy_find(sh_enforcer_policies(d->enf), argv[1]) : NULL;
	sh_ctl_reply(fd, 'O', "%s\n", from && from->file ? from->file : "-");
	sh_buf_init(&l.recs);
	d->learning[d->nlearning++] = l;
	return 0;
}

bool sh_learning_record(struct sh_daemon *d, uint32_t run_id, const struct sh_buf *rec)
{
	struct sh_learning *l = learning_find(d, run_id);

	if (!l)
		return true;    /* a run that ended: logged, learned by nobody */
	if (l->overflow || l->recs.len + rec->len > LEARN_BUF_MAX) {
		/* The run uses more than can be learned: it fails at its end,
		 * and the log stops taking its records. */
		l->overflow = true;
		l->unlogged++;
		return false;
	}
	sh_buf_write(&l->recs, rec->p, rec->len);   /* ends with its newline */
	return true;
}

int sh_learn_or_run_end(struct sh_daemon *d, int fd, int argc, char **argv)
{
	/* A learning run ended as a plain run: its policy goes with it. */
	if (sh_learning_of(d, strtoul(argv[1], NULL, 10)))
		return sh_learn_end(d, fd, argc, argv);
	return sh_run_end(d, fd, argc, argv);
}

/* learn-end ID STATUS KILLED: ends the run as run-end does, then replies
 * with its learn records (JSON lines) and drops its policy. */
int sh_learn_end(struct sh_daemon *d, int fd, int argc, char **argv)
{
	uint32_t id = strtoul(argv[1], NULL, 10);
	struct sh_learning *l = learning_find(d, id);
	int ret = 0;

	if (!l) {
		sh_run_end(d, fd, argc, argv);
		sh_ctl_reply(fd, 'E', "run %s was not learning here: nothing learned\n", argv[1]);
		return SH_EXIT_FAIL;
	}
	sh_run_end(d, fd, argc, argv);
	if (l->orphan) {
		sh_ctl_reply(fd, 'E', "learning run %u went on without its sharnessd or its "
			     "sharnessctl: nothing learned\n", id);
		ret = SH_EXIT_FAIL;
	}
	if (l->overflow || l->recs.oom) {
		sh_ctl_reply(fd, 'E', "run %u used more objects than can be learned in one run "
			     "(%u MiB of records; %llu more not logged)\n", id, LEARN_BUF_MAX >> 20,
			     (unsigned long long)l->unlogged);
		sh_log("learning run %u: %llu learn records beyond %u MiB not logged", id,
		       (unsigned long long)l->unlogged, LEARN_BUF_MAX >> 20);
		ret = SH_EXIT_FAIL;
	}
	for (size_t off = 0; !ret && off < l->recs.len; off += 4000) {
		size_t n = l->recs.len - off < 4000 ? l->recs.len - off : 4000;

		if (sh_ctl_reply(fd, 'O', "%.*s", (int)n, l->recs.p + off)) {
			ret = SH_EXIT_FAIL;
			break;
		}
	}
	if (reapply(d, fd, NULL, l->pol.name))
		sh_log("learning policy %s stays loaded: its removal failed", l->pol.name);
	if (l->pidfd >= 0)
		close(l->pidfd);
	sh_policy_free(&l->pol);
	sh_buf_free(&l->recs);
	*l = d->learning[--d->nlearning];
	return ret;
}
