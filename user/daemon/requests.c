// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket's server side: who may ask (root, from outside every
 * tagged tree), and the table of requests with what each one does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "learning.h"
#include "names.h"
#include "pin.h"
#include "records.h"
#include "reload.h"
#include "requests.h"
#include "reslimit.h"
#include "runs.h"
#include "util.h"

static int req_ping(struct sh_daemon *d, int fd, int argc, char **argv)
{
	(void)d, (void)argc, (void)argv;
	sh_ctl_reply(fd, 'O', "pong\n");
	return 0;
}

static int req_reload(struct sh_daemon *d, int fd, int argc, char **argv)
{
	(void)argc, (void)argv;
	return sh_daemon_reload(d, fd);
}

static int req_audit_path(struct sh_daemon *d, int fd, int argc, char **argv)
{
	(void)argc, (void)argv;
	sh_ctl_reply(fd, 'O', "%s\n", d->audit_path);
	return 0;
}

/* tag CGROUP POLICY [runtime PID]: with runtime, process PID in CGROUP is a
 * container runtime's init (the OCI hook), pending until its exec. */
static int req_tag(struct sh_daemon *d, int fd, int argc, char **argv)
{
	char err[512], *end = NULL;
	bool runtime = argc == 5 && strcmp(argv[3], "runtime") == 0;
	unsigned long pid = runtime ? strtoul(argv[4], &end, 10) : 0;
	const struct sh_policy *p = sh_policy_find(sh_enforcer_policies(d->enf), argv[2]);

	if (argc > 3 && (!runtime || !*argv[4] || *end || !pid || pid > UINT32_MAX)) {
		sh_ctl_reply(fd, 'E', "tag: bad arguments (want: tag CGROUP POLICY [runtime PID])\n");
		return SH_EXIT_FAIL;
	}
	if (p && p->limits.private_tmp) {
		sh_ctl_reply(fd, 'E', "policy '%s' has private-tmp: its trees are runs (sharnessctl "
			     "run), a cgroup tagged by hand would keep the host's /tmp\n", p->name);
		return SH_EXIT_FAIL;
	}
	if (runtime ? sh_enforcer_tag_runtime(d->enf, argv[1], argv[2], (uint32_t)pid, err,
					      sizeof(err))
		    : sh_enforcer_tag(d->enf, argv[1], argv[2], 0, err, sizeof(err))) {
		sh_ctl_reply(fd, 'E', "%s\n", err);
		return SH_EXIT_FAIL;
	}
	sh_audit_begin_meta(&d->buf, "tag");
	sh_rec_str(d, "cgroup", argv[1]);
	sh_rec_str(d, "policy", argv[2]);
	if (runtime)
		sh_json_uint_field(&d->buf, "runtime_pid", pid);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	return 0;
}

/* untag CGROUP */
static int req_untag(struct sh_daemon *d, int fd, int argc, char **argv)
{
	char err[512];

	(void)argc;
	if (sh_enforcer_untag(d->enf, argv[1], err, sizeof(err))) {
		sh_ctl_reply(fd, 'E', "%s\n", err);
		return SH_EXIT_FAIL;
	}
	sh_audit_begin_meta(&d->buf, "untag");
	sh_rec_str(d, "cgroup", argv[1]);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	return 0;
}

/* unload [force]: refused while cgroups are tagged, unless forced. */
static int req_unload(struct sh_daemon *d, int fd, int argc, char **argv)
{
	size_t ntags, np = 0;
	bool force = argc > 1 && strcmp(argv[1], "force") == 0;
	int ret;

	sh_enforcer_tags(d->enf, &ntags);
	ntags += sh_enforcer_pattern_tags(d->enf, &np, true) ? np : 0;
	if (ntags && !force) {
		sh_ctl_reply(fd, 'E', "%zu cgroup%s tagged: unloading would release %s; "
			     "end the runs and untag, or use --force\n", ntags,
			     ntags == 1 ? " is" : "s are", ntags == 1 ? "it" : "them");
		return SH_EXIT_FAIL;
	}
	ret = sh_enforcer_unload(d->enf);
	sh_rec_unload(d, ntags, force, ret);
	if (ret) {
		sh_ctl_reply(fd, 'E', "unload failed: %s\n", strerror(-ret));
		return SH_EXIT_FAIL;
	}
	sh_log("unloaded on request%s: programs detached", force ? " (forced)" : "");
	sh_ctl_reply(fd, 'O', "unloaded: programs detached, sharnessd stopping\n");
	d->unloading = true;
	return 0;
}

/*
 * The requests. A request with fewer arguments than min_args is answered
 * "NAME: EXPECTED expected" where the entry names them; any other request
 * with a wrong count, or an unknown name, is malformed.
 */
struct request {
	const char *name;
	int (*run)(struct sh_daemon *d, int fd, int argc, char **argv);
	int min_args, max_args;         /* arguments after the name */
	const char *expected;
	const char *help;
};

#define ANY SH_CTL_MAX_ARGS

static const struct request requests[] = {
	{ "ping", req_ping, 0, ANY, NULL, "answers pong" },
	{ "status", sh_req_status, 0, ANY, NULL, "[json]: policies, tags and counters" },
	{ "reload", req_reload, 0, ANY, NULL, "re-reads the policy directory" },
	{ "audit-path", req_audit_path, 0, ANY, NULL, "the audit log's path" },
	{ "tag", req_tag, 2, 4, NULL, "CGROUP POLICY [runtime PID]: holds CGROUP's tree to POLICY" },
	{ "untag", req_untag, 1, 1, NULL, "CGROUP: releases a runtime tag" },
	{ "unload", req_unload, 0, ANY, NULL, "[force]: detaches the programs, then stops" },
	{ "run-begin", sh_run_begin, 2, ANY, "POLICY PIDS_MAX",
	  "POLICY PIDS_MAX [COMMAND]: a new run cgroup, tagged; replies ID CGROUP" },
	{ "run-end", sh_learn_or_run_end, 3, ANY, "ID STATUS KILLED",
	  "ID STATUS KILLED: logs the run's end, untags and removes its cgroup" },
	{ "learn-begin", sh_learn_begin, 2, ANY, "FROM PIDS_MAX",
	  "FROM|- PIDS_MAX [COMMAND]: a learning run; replies ID CGROUP" },
	{ "learn-end", sh_learn_end, 3, ANY, "ID STATUS KILLED",
	  "ID STATUS KILLED: ends a learning run; replies its learn records" },
};

static int handle_request(struct sh_daemon *d, int fd, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		const struct request *r = &requests[i];
		int nargs = argc - 1;

		if (strcmp(argv[0], r->name) != 0)
			continue;
		if (nargs < r->min_args && r->expected) {
			sh_ctl_reply(fd, 'E', "%s: %s expected\n", r->name, r->expected);
			return SH_EXIT_FAIL;
		}
		if (nargs >= r->min_args && nargs <= r->max_args)
			return r->run(d, fd, argc, argv);
		break;
	}
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
static bool peer_in_tree(struct sh_daemon *d, pid_t pid)
{
	char path[PATH_MAX + 32];
	uint64_t origin = 0;
	int pfd;

	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		int err = sh_enforcer_task_origin(d->enf, pfd, &origin);

		close(pfd);
		if (err)
			return true;
		if (origin && sh_enforcer_tagged_id(d->enf, origin))
			return true;
	}
	if (sh_cgroup_of(pid, path, sizeof(path)))
		return true;
	for (;;) {
		struct stat st;
		char *slash;

		if (stat(path, &st) < 0)
			return true;
		if (sh_enforcer_tagged_id(d->enf, st.st_ino))
			return true;
		slash = strrchr(path, '/');
		if (!slash || slash - path <= (ptrdiff_t)strlen("/sys/fs/cgroup"))
			return false;
		*slash = 0;
	}
}

/* Refuses a client before reading its request. The request is taken off
 * the socket if it is there: closing with it unread resets the connection
 * and loses the reply. Never blocks. */
static void refuse(int fd, const char *why)
{
	char c;

	if (recv(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC) < 0)
		sh_dbg("refused client sent nothing yet");
	sh_ctl_reply(fd, 'E', "permission denied: %s\n", why);
	sh_ctl_reply(fd, 'X', "%d", SH_EXIT_DAEMON);
	close(fd);
}

/* Reads the request on fd and answers it; the exit status to send. */
static int read_request(struct sh_daemon *d, int fd, pid_t pid)
{
	char *buf, *argv[SH_CTL_MAX_ARGS];
	ssize_t n;
	int argc, ret;

	buf = malloc(SH_CTL_MAX_MSG + 1);
	if (!buf)
		return -1;
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
		sh_dbg("request '%s' from pid %d", argv[0], pid);
		ret = handle_request(d, fd, argc, argv);
	}
	free(buf);
	return ret;
}

/* One connection, one request. Bad input gets an error; the daemon goes on. */
void sh_req_serve(struct sh_daemon *d, int lfd)
{
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd, ret;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != 0) {
		refuse(fd, "the control socket is for root only");
		return;
	}
	if (peer_in_tree(d, cred.pid)) {
		sh_log("refused a control request from pid %d: it is inside a tagged tree",
		       (int)cred.pid);
		refuse(fd, "requests from inside a tagged tree are refused");
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ret = read_request(d, fd, cred.pid);
	if (ret >= 0)
		sh_ctl_reply(fd, 'X', "%d", ret);
	close(fd);
}
