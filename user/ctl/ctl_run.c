// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessctl run: asks sharnessd for a fresh tagged cgroup, starts the
 * command in it (in a session and an IPC namespace of its own, as --user,
 * in --workdir), supervises it (--timeout, the operator's signals), kills
 * whatever is left in the cgroup when it ends and reports the end to the
 * daemon, which logs it and removes the cgroup. The exit statuses are
 * listed in sharnessctl.c.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "ctl.h"
#include "reslimit.h"
#include "util.h"

#define RUN_EXIT_TIMEOUT 124
#define RUN_EXIT_SETUP   125

/* How the supervision ended. */
struct run_end {
	int status;		/* the command's wait status */
	bool timed_out;
	bool interrupted;	/* by got_signal, sent to sharnessctl */
	int got_signal;
};

static int count_procs(const char *cg)
{
	char path[512], buf[65536];
	ssize_t n;
	int count = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	n = sh_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		count += buf[i] == '\n';
	return count;
}

static bool populated(const char *cg)
{
	char path[512], buf[256];

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	if (sh_read_file(path, buf, sizeof(buf)) < 0)
		return false;
	return strstr(buf, "populated 1") != NULL;
}

/* Kill every process left in the cgroup and wait until it is empty.
 * Returns how many processes were killed. */
static int kill_tree(const char *cg)
{
	char path[512], buf[65536];
	int killed = 0;

	for (int round = 0; round < 1000 && populated(cg); round++) {
		int n = count_procs(cg);

		if (n > killed)
			killed = n;
		snprintf(path, sizeof(path), "%s/cgroup.kill", cg);
		if (sh_write_file(path, "1") < 0) {
			/* No cgroup.kill: signal each process listed. */
			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			if (sh_read_file(path, buf, sizeof(buf)) > 0)
				for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
					kill(atoi(l), SIGKILL);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(10000);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return killed;
}

static int exec_status(int err)
{
	return (err == ENOENT || err == ENOTDIR) ? 127 : 126;
}

/*
 * A /tmp, /var/tmp and /dev/shm of the run's own (size bytes each, tmpfs), in a
 * mount namespace of its own whose mounts do not propagate back: nothing
 * a tree leaves there (a symlink for a root process to write through, a
 * file in another user's name, a full /tmp) is the host's, and it is gone
 * with the run's last process. Made before the tree is joined: a tree may
 * not mount.
 */
static void private_tmp(uint64_t size, bool workdir)
{
	static const char *const dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };
	char opts[96], cwd[PATH_MAX];

	/* An inode a KiB: files, not only bytes, are bounded. */
	snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%llu",
		 (unsigned long long)size, (unsigned long long)(size / 1024 + 64));
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		fprintf(stderr, "sharnessctl: cannot give the run a mount namespace: %s\n",
			strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		if (stat(dirs[i], &st) < 0 && errno == ENOENT)
			continue;   /* no /var/tmp on this host: nothing to hide */
		if (mount("tmpfs", dirs[i], "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
			fprintf(stderr, "sharnessctl: cannot mount the run's own %s: %s\n", dirs[i],
				strerror(errno));
			_exit(RUN_EXIT_SETUP);
		}
	}
	/* The current directory, by name again: one under the host's /tmp
	 * would otherwise stay a way into it (--workdir's is entered later). */
	if (chdir(workdir ? "/" : cwd) < 0) {
		fprintf(stderr, "sharnessctl: the current directory %s is not there for a run with "
			"a private /tmp (give --workdir): %s\n", cwd, strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
}

static void child(const struct ctl_run_opts *o, const char *cg, char **cmd)
{
	char procs[512];
	int err;

	/*
	 * SysV shared memory, semaphores and message queues, and POSIX message
	 * queues, of its own: root in the tree would otherwise attach the
	 * host's segments (uid 0 owns them). Done before joining the tree,
	 * which may not create namespaces.
	 */
	if (unshare(CLONE_NEWIPC) < 0) {
		fprintf(stderr, "sharnessctl: cannot give the run an IPC namespace: %s\n",
			strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
	if (o->private_tmp)
		private_tmp(o->private_tmp, o->workdir != NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	err = sh_write_file(procs, "0");
	if (err) {
		fprintf(stderr, "sharnessctl: cannot enter %s: %s\n", cg, strerror(-err));
		_exit(RUN_EXIT_SETUP);
	}
	/*
	 * A session of its own: the operator's terminal is not the tree's
	 * controlling terminal, so the tree cannot take it over, hang it up or
	 * be its foreground. Its standard streams stay as given; Ctrl-C reaches
	 * this supervisor, which ends the whole run.
	 */
	if (setsid() < 0) {
		fprintf(stderr, "sharnessctl: setsid: %s\n", strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
	if (o->user) {
		struct passwd *pw = getpwnam(o->user);

		if (!pw) {
			fprintf(stderr, "sharnessctl: no user '%s'\n", o->user);
			_exit(RUN_EXIT_SETUP);
		}
		if (initgroups(pw->pw_name, pw->pw_gid) || setgid(pw->pw_gid) ||
		    setuid(pw->pw_uid)) {
			fprintf(stderr, "sharnessctl: cannot become %s: %s\n", o->user, strerror(errno));
			_exit(RUN_EXIT_SETUP);
		}
	}
	if (o->workdir && chdir(o->workdir) < 0) {
		fprintf(stderr, "sharnessctl: cannot enter %s: %s\n", o->workdir, strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
	/*
	 * Standard input, output and error only, as systemd hands a service:
	 * any other descriptor the caller left open (`3>>FILE`, an inherited
	 * socket) would give the tree an object its rules were never asked
	 * about. Those three are the operator's choice, made in the open.
	 */
	if (close_range(3, ~0u, 0) < 0) {
		fprintf(stderr, "sharnessctl: cannot close the descriptors above 2: %s\n",
			strerror(errno));
		_exit(RUN_EXIT_SETUP);
	}
	execvp(cmd[0], cmd);
	err = errno;
	fprintf(stderr, "sharnessctl: cannot execute %s: %s\n", cmd[0], strerror(err));
	if (err == EPERM)
		fprintf(stderr, "sharnessctl: refused by policy '%s' (see sharnessctl log "
			"--policy %s)\n", o->policy ? o->policy : "learn", o->policy ? o->policy : "learn");
	_exit(exec_status(err));
}

static int run_opt(int opt, const char *arg, void *ctx)
{
	struct ctl_run_opts *o = ctx;
	char *end;

	switch (opt) {
	case 'p': o->policy = arg; return 0;
	case 'w': o->workdir = arg; return 0;
	case 'u': o->user = arg; return 0;
	case 'M':
		if (sh_parse_bytes(arg, false, &o->limits.memory_max))
			return 0;
		fprintf(stderr, "sharnessctl: bad --memory-max '%s' (want a size such as 512M)\n", arg);
		return RUN_EXIT_SETUP;
	case 'S':
		if ((o->limits.has_swap = sh_parse_bytes(arg, true, &o->limits.memory_swap_max)))
			return 0;
		fprintf(stderr, "sharnessctl: bad --memory-swap-max '%s' (want a size such as 0 "
			"or 512M)\n", arg);
		return RUN_EXIT_SETUP;
	case 'C':
		if (sh_parse_cpu_pct(arg, &o->limits.cpu_max))
			return 0;
		fprintf(stderr, "sharnessctl: bad --cpu-max '%s' (want a share of one CPU such as "
			"50%%)\n", arg);
		return RUN_EXIT_SETUP;
	case 'T':
		if (sh_parse_bytes(arg, false, &o->limits.private_tmp))
			return 0;
		fprintf(stderr, "sharnessctl: bad --private-tmp '%s' (want a size such as 256M)\n",
			arg);
		return RUN_EXIT_SETUP;
	case 'I':
		if (sh_parse_io_weight(arg, &o->limits.io_weight))
			return 0;
		fprintf(stderr, "sharnessctl: bad --io-weight '%s' (want 1..%u)\n", arg,
			SH_IO_WEIGHT_MAX);
		return RUN_EXIT_SETUP;
	}
	errno = 0;
	if (opt == 'm')
		o->pids_max = strtoul(arg, &end, 10);
	else
		o->timeout = strtoul(arg, &end, 10);
	if (errno || *end || !*arg) {
		fprintf(stderr, "sharnessctl: bad number '%s'\n", arg);
		return RUN_EXIT_SETUP;
	}
	return 0;
}

/* Returns the index of CMD in argv, or -1 after saying what is wrong. */
static int run_parse(int argc, char **argv, struct ctl_run_opts *o)
{
	static const struct option opts[] = {
		{ "policy", required_argument, 0, 'p' },
		{ "workdir", required_argument, 0, 'w' },
		{ "pids-max", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 't' },
		{ "user", required_argument, 0, 'u' },
		{ "memory-max", required_argument, 0, 'M' },
		{ "memory-swap-max", required_argument, 0, 'S' },
		{ "cpu-max", required_argument, 0, 'C' },
		{ "io-weight", required_argument, 0, 'I' },
		{ "private-tmp", required_argument, 0, 'T' },
		{ 0 }
	};

	if (ctl_getopt(argc, argv, "+p:w:m:t:u:M:S:C:I:T:", opts, run_opt, o))
		return -1;
	if (!o->policy || optind >= argc) {
		fprintf(stderr, "sharnessctl: run needs --policy NAME and a command after --\n");
		return -1;
	}
	return optind;
}

/* The daemon creates and tags the run's cgroup: returns 0 with its id and
 * path, or -1 after saying why not. */
static int run_begin(struct ctl_run_opts *o, char **cmd, unsigned *run_id,
		     char cg[static 256])
{
	char pids[32], *reply = NULL, words[SH_LIMIT_WORDS][48];
	/* A learning run is tagged with a policy the daemon makes for it:
	 * from nothing ("-") or from --from's. */
	const char *req[SH_CTL_MAX_ARGS] = { o->learn ? "learn-begin" : "run-begin",
			       o->learn ? (o->from ? o->from : "-") : o->policy, pids, cmd[0] };
	size_t n = 4 + sh_limits_words(&o->limits, words), bytes = 0, sep;
	int ret;

	snprintf(pids, sizeof(pids), "%lu", o->pids_max);
	for (size_t i = 0; i + 4 < n; i++)
		req[4 + i] = words[i];
	/* Then the whole command line, for the run-start record, as much of
	 * it as one request holds ("--truncated" says it is cut short). */
	sep = n;
	req[n++] = "--";
	for (size_t i = 0; cmd[i]; i++) {
		bytes += strlen(cmd[i]) + 1;
		if (n + 1 >= SH_CTL_MAX_ARGS || bytes > SH_CTL_MAX_MSG / 2) {
			req[sep] = "--truncated";
			break;
		}
		req[n++] = cmd[i];
	}
	ret = sh_ctl_call_capture(ctl_sock_path, (int)n, req, &reply, stderr);
	if (ret != 0) {
		free(reply);
		ctl_daemon_status(ret);
		return -1;
	}
	unsigned long long tmp = 0;

	if (sscanf(reply, "%u %255s %llu", run_id, cg, &tmp) < 2) {
		fprintf(stderr, "sharnessctl: bad reply from sharnessd: %s\n", reply);
		free(reply);
		return -1;
	}
	o->private_tmp = tmp;
	if (o->learn) {
		/* learn-begin adds a line: the file of the policy learned from. */
		char *f = strchr(reply, '\n');

		snprintf(o->from_file, sizeof(o->from_file), "%s", f ? f + 1 : "");
		o->from_file[strcspn(o->from_file, "\n")] = 0;
		/* Read now: the text of the policy the run is held to. */
		if (o->from && !(o->from_text = calloc(1, LEARN_FROM_MAX)))
			return -1;
		ssize_t r = o->from ? sh_read_file(o->from_file, o->from_text, LEARN_FROM_MAX) : 0;

		if (r < 0)
			fprintf(stderr, "sharnessctl: cannot read %s, the file of policy %s: %s\n",
				o->from_file, o->from, strerror((int)-r));
	}
	free(reply);
	return 0;
}

/* Waits until the command ends, the timeout fires or a signal asks the run
 * to stop, reaping the orphans reparented to us on the way. */
static void run_wait(int sfd, int tfd, pid_t pid, struct run_end *e)
{
	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = tfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		pid_t w;

		if (poll(pfd, tfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			return;
		if (tfd >= 0 && (pfd[1].revents & POLLIN)) {
			e->timed_out = true;
			return;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			e->interrupted = true;
			e->got_signal = si.ssi_signo;
			return;
		}
		while ((w = waitpid(-1, &e->status, WNOHANG)) > 0)
			if (w == pid)
				return;
	}
}

/* Starts CMD in the cgroup and supervises it until it ends. Returns -1 if
 * it could not be started. */
static int run_supervise(const struct ctl_run_opts *o, const char *cg, char **cmd,
			 struct run_end *e)
{
	int sfd, tfd = -1;
	sigset_t mask;
	pid_t pid;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	/* Orphans of the run are reparented to us, so we can reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "sharnessctl: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		child(o, cg, cmd);
	}
	if (o->timeout) {
		struct itimerspec its = { .it_value = { .tv_sec = o->timeout } };

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		timerfd_settime(tfd, 0, &its, NULL);
	}
	run_wait(sfd, tfd, pid, e);
	return pid;
}

/* Sets the run's end as the daemon logs it (st) and returns sharnessctl's
 * exit status. */
static int run_verdict(const struct run_end *e, unsigned run_id, unsigned long timeout,
		       char *st, size_t stlen)
{
	int exit_code;

	if (e->timed_out) {
		exit_code = RUN_EXIT_TIMEOUT;
		snprintf(st, stlen, "timeout");
		fprintf(stderr, "sharnessctl: run %u timed out after %lus\n", run_id, timeout);
	} else if (e->interrupted) {
		exit_code = 128 + e->got_signal;
		snprintf(st, stlen, "interrupted:%d", e->got_signal);
	} else if (WIFEXITED(e->status)) {
		exit_code = WEXITSTATUS(e->status);
		snprintf(st, stlen, "exit:%d", exit_code);
	} else {
		exit_code = 128 + WTERMSIG(e->status);
		snprintf(st, stlen, "signal:%d", WTERMSIG(e->status));
	}
	return exit_code;
}

/* Says when the run's limits bit: the OOM killer, CPU throttling. */
static void report_usage(unsigned run_id, const char *cg)
{
	uint64_t oom = 0, peak = 0, nthr = 0, thr = 0, lim = 0;
	char a[32], b[32];

	if (!sh_cg_value(cg, "memory.events", "oom_kill", &oom) && oom) {
		sh_cg_value(cg, "memory.peak", NULL, &peak);
		if (sh_cg_value(cg, "memory.max", NULL, &lim))
			snprintf(b, sizeof(b), "max");
		else
			sh_fmt_bytes(lim, b, sizeof(b));
		fprintf(stderr, "sharnessctl: run %u: the OOM killer killed %llu process%s "
			"(memory-max %s, peak %s)\n", run_id, (unsigned long long)oom,
			oom == 1 ? "" : "es", b, sh_fmt_bytes(peak, a, sizeof(a)));
	}
	if (!sh_cg_value(cg, "cpu.stat", "nr_throttled", &nthr) && nthr &&
	    !sh_cg_value(cg, "cpu.stat", "throttled_usec", &thr))
		fprintf(stderr, "sharnessctl: run %u: throttled %llu times by cpu-max, %.1f s "
			"in all\n", run_id, (unsigned long long)nthr, (double)thr / 1e6);
}

/* The daemon logs the run's last events, untags and removes the cgroup;
 * for a learning run it replies with the run's learn records (*learned).
 * Returns -1 when the daemon did not take the end. */
static int run_finish(unsigned run_id, const char *cg, int exit_code, const char *st, int killed,
		      char **learned)
{
	char id[32], killed_s[16];
	const char *req[] = { learned ? "learn-end" : "run-end", id,
			      exit_code == RUN_EXIT_SETUP ? "setup-failed" : st, killed_s };
	int ret;

	snprintf(id, sizeof(id), "%u", run_id);
	snprintf(killed_s, sizeof(killed_s), "%d", exit_code == RUN_EXIT_SETUP ? 0 : killed);
	if (learned)
		ret = sh_ctl_call_capture(ctl_sock_path, 4, req, learned, stderr);
	else
		ret = sh_ctl_call(ctl_sock_path, 4, req, stdout, stderr);
	if (ret != 0)
		fprintf(stderr, "sharnessctl: could not report the end of run %u to sharnessd (%s)\n",
			run_id, ret < 0 ? strerror(-ret) : "refused");
	if (rmdir(cg) < 0 && errno != ENOENT)
		fprintf(stderr, "sharnessctl: cannot remove %s: %s\n", cg, strerror(errno));
	return ret ? -1 : 0;
}

int ctl_run_tree(struct ctl_run_opts *o, char **cmd, char **learned, int *setup_failed)
{
	struct run_end e = {};
	char cg[256], st[32] = "";
	unsigned run_id;
	int killed = 0, exit_code;
	pid_t pid;

	*setup_failed = 1;
	if (run_begin(o, cmd, &run_id, cg) < 0)
		return RUN_EXIT_SETUP;
	pid = run_supervise(o, cg, cmd, &e);
	if (pid < 0) {
		exit_code = RUN_EXIT_SETUP;
	} else {
		killed = kill_tree(cg);
		if (e.timed_out || e.interrupted) {
			/* The command itself was among those killed. */
			waitpid(pid, &e.status, 0);
		}
		exit_code = run_verdict(&e, run_id, o->timeout, st, sizeof(st));
		report_usage(run_id, cg);
		fprintf(stderr, "sharnessctl: run %u ended (%s); killed %d process%s left in %s\n",
			run_id, st, killed, killed == 1 ? "" : "es", cg);
	}
	if (run_finish(run_id, cg, exit_code, st, killed, learned) == 0 && exit_code != RUN_EXIT_SETUP)
		*setup_failed = 0;
	return exit_code;
}

int ctl_run(int argc, char **argv)
{
	struct ctl_run_opts o = {};
	int cmd, setup_failed;

	cmd = run_parse(argc, argv, &o);
	if (cmd < 0)
		return RUN_EXIT_SETUP;
	return ctl_run_tree(&o, argv + cmd, NULL, &setup_failed);
}
