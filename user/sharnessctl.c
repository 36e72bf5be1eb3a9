// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessctl: the operator's command line.
 *
 * Exit status: the command's own (see usage); 1 failure or bad usage;
 * 2 invalid policy (policy reload); 3 this kernel cannot enforce (probe);
 * 4 the daemon is unreachable or refused the request. `run` exits with the
 * command's status, 128+N when it was killed by signal N, 124 on timeout,
 * 125 when the run could not be set up, 126/127 when CMD could not be
 * executed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "control.h"
#include "enforcer.h"
#include "json.h"
#include "policy.h"
#include "util.h"

#define RUN_EXIT_TIMEOUT 124
#define RUN_EXIT_SETUP   125

static const char *sock_path = SH_CTL_DEFAULT_SOCKET;
static const char *pin_dir = "/sys/fs/bpf/sharness";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sharnessctl [--socket PATH] [--verbose] COMMAND\n"
		"commands:\n"
		"  probe                         can this kernel enforce? (exit 0 yes, 3 no)\n"
		"  policy check FILE...          validate policy files, no daemon needed (exit 1 on errors)\n"
		"  policy reload                 the daemon re-reads its policy directory atomically\n"
		"  status [--json]               what the daemon enforces, tags and counters\n"
		"  tag CGROUP POLICY             tag an existing cgroup\n"
		"  untag CGROUP                  untag it\n"
		"  run --policy NAME [--workdir DIR] [--pids-max N] [--timeout SEC] [--user USER] -- CMD [ARG...]\n"
		"                                run CMD in a fresh tagged cgroup, kill what is left when it ends\n"
		"  log [-f] [--json] [--policy NAME] [-n N] [--file PATH]\n"
		"                                show the audit log (follow with -f)\n"
		"  unload [--force]              detach the programs (refused while cgroups are tagged)\n"
		"options: --socket PATH (default " SH_CTL_DEFAULT_SOCKET "), --pin-dir DIR (for status\n"
		"         without a daemon; default /sys/fs/bpf/sharness), --verbose\n");
}

/* Reports a failed daemon call and maps it to an exit status. */
static int daemon_status(int ret)
{
	if (ret >= 0)
		return ret;
	fprintf(stderr, "sharnessctl: cannot reach sharnessd at %s: %s\n", sock_path, strerror(-ret));
	if (ret == -ENOENT || ret == -ECONNREFUSED)
		fprintf(stderr, "sharnessctl: is sharnessd running? (systemctl start sharnessd)\n");
	return SH_EXIT_DAEMON;
}

static int cmd_probe(void)
{
	struct sh_probe p;
	int ret = sh_probe_run(&p);

	sh_probe_print(&p, stdout);
	return ret;
}

static int cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0) {
		struct sh_policy_set set = {};
		struct sh_errors errs = {};
		int err;

		if (argc < 3) {
			fprintf(stderr, "sharnessctl: policy check needs at least one FILE\n");
			return SH_EXIT_FAIL;
		}
		err = sh_policy_load_files((const char *const *)argv + 2, argc - 2, &set, &errs);
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		if (!err)
			for (size_t i = 0; i < set.n; i++)
				printf("%s: policy '%s' ok (%zu rules, mode %s)\n", set.pols[i].file,
				       set.pols[i].name, set.pols[i].nrules,
				       set.pols[i].mode == SH_MODE_AUDIT ? "audit" : "enforce");
		sh_policy_set_free(&set);
		sh_errors_free(&errs);
		return err ? SH_EXIT_FAIL : 0;
	}
	if (argc == 2 && strcmp(argv[1], "reload") == 0) {
		const char *req[] = { "reload" };

		return daemon_status(sh_ctl_call(sock_path, 1, req, stdout, stderr));
	}
	usage(stderr);
	return SH_EXIT_FAIL;
}

/*
 * Three states: enforcing with a daemon (exit 0); enforcing without one,
 * the programs pinned and attached but nobody writing the audit log (exit
 * 4); not enforcing (exit 3).
 */
static int cmd_status(int argc, char **argv)
{
	const char *req[] = { "status", "json" };
	bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
	unsigned links, tags;
	int ret, gen;

	if (argc > 2 || (argc == 2 && !json)) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	ret = sh_ctl_call(sock_path, json ? 2 : 1, req, stdout, stderr);
	if (ret >= 0)
		return ret;
	/* EACCES and the like: a daemon may be there; say why, exit 4. */
	if (ret != -ENOENT && ret != -ECONNREFUSED)
		return daemon_status(ret);
	gen = sh_pinned_state(pin_dir, &links, &tags);
	if (gen > 0 && links > 0) {
		if (json)
			printf("{\"state\":\"enforcing-without-daemon\",\"programs\":%u,\"tagged\":%u,"
			       "\"pin_dir\":\"%s/gen-%d\"}\n", links, tags, pin_dir, gen);
		else
			printf("enforcing WITHOUT daemon: %u programs pinned under %s/gen-%d, %u cgroups "
			       "tagged; violations are refused but not logged until sharnessd "
			       "starts again (%s: %s)\n", links, pin_dir, gen, tags, sock_path,
			       strerror(-ret));
		return SH_EXIT_DAEMON;
	}
	if (json)
		printf("{\"state\":\"not-enforcing\"}\n");
	else
		printf("NOT enforcing: no sharnessd at %s (%s) and nothing pinned under %s\n",
		       sock_path, strerror(-ret), pin_dir);
	return SH_EXIT_NOENFORCE;
}

static int cmd_unload(int argc, char **argv)
{
	const char *req[] = { "unload", "force" };
	bool force = argc > 1 && strcmp(argv[1], "--force") == 0;

	if (argc > 2 || (argc == 2 && !force)) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	return daemon_status(sh_ctl_call(sock_path, force ? 2 : 1, req, stdout, stderr));
}

static int cmd_tag(int argc, char **argv)
{
	if ((strcmp(argv[0], "tag") == 0 && argc != 3) ||
	    (strcmp(argv[0], "untag") == 0 && argc != 2)) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	return daemon_status(sh_ctl_call(sock_path, argc, (const char *const *)argv, stdout, stderr));
}

/* ---- run -------------------------------------------------------------- */

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

struct run_opts {
	const char *policy, *workdir, *user;
	unsigned long pids_max;
	unsigned long timeout;
};

static int exec_status(int err)
{
	return (err == ENOENT || err == ENOTDIR) ? 127 : 126;
}

static void child(const struct run_opts *o, const char *cg, char **cmd)
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
	execvp(cmd[0], cmd);
	err = errno;
	fprintf(stderr, "sharnessctl: cannot execute %s: %s\n", cmd[0], strerror(err));
	_exit(exec_status(err));
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, 0, 'p' },
		{ "workdir", required_argument, 0, 'w' },
		{ "pids-max", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 't' },
		{ "user", required_argument, 0, 'u' },
		{ 0 }
	};
	struct run_opts o = {};
	char pids[32], *reply = NULL, cg[256], st[32], killed_s[16];
	const char *req[4];
	unsigned run_id;
	int c, ret, status = 0, sfd, tfd = -1, killed, exit_code;
	bool timed_out = false, interrupted = false;
	int got_signal = 0;
	sigset_t mask;
	pid_t pid;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:w:m:t:u:", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'p': o.policy = optarg; break;
		case 'w': o.workdir = optarg; break;
		case 'u': o.user = optarg; break;
		case 'm':
		case 't':
			errno = 0;
			if (c == 'm')
				o.pids_max = strtoul(optarg, &end, 10);
			else
				o.timeout = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "sharnessctl: bad number '%s'\n", optarg);
				return RUN_EXIT_SETUP;
			}
			break;
		default:
			usage(stderr);
			return RUN_EXIT_SETUP;
		}
	}
	if (!o.policy || optind >= argc) {
		fprintf(stderr, "sharnessctl: run needs --policy NAME and a command after --\n");
		return RUN_EXIT_SETUP;
	}
	snprintf(pids, sizeof(pids), "%lu", o.pids_max);
	req[0] = "run-begin";
	req[1] = o.policy;
	req[2] = pids;
	req[3] = argv[optind];
	ret = sh_ctl_call_capture(sock_path, 4, req, &reply, stderr);
	if (ret != 0) {
		free(reply);
		daemon_status(ret);
		return RUN_EXIT_SETUP;
	}
	if (sscanf(reply, "%u %255s", &run_id, cg) != 2) {
		fprintf(stderr, "sharnessctl: bad reply from sharnessd: %s\n", reply);
		free(reply);
		return RUN_EXIT_SETUP;
	}
	free(reply);

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
		exit_code = RUN_EXIT_SETUP;
		goto end;
	}
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		child(&o, cg, argv + optind);
	}
	if (o.timeout) {
		struct itimerspec its = { .it_value = { .tv_sec = o.timeout } };

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		timerfd_settime(tfd, 0, &its, NULL);
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = tfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		pid_t w;

		if (poll(pfd, tfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		if (tfd >= 0 && (pfd[1].revents & POLLIN)) {
			timed_out = true;
			break;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			interrupted = true;
			got_signal = si.ssi_signo;
			break;
		}
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == pid)
				goto done;
	}
done:
	killed = kill_tree(cg);
	if (timed_out || interrupted) {
		/* The command itself was among those killed. */
		waitpid(pid, &status, 0);
	}
	if (timed_out) {
		exit_code = RUN_EXIT_TIMEOUT;
		snprintf(st, sizeof(st), "timeout");
		fprintf(stderr, "sharnessctl: run %u timed out after %lus\n", run_id, o.timeout);
	} else if (interrupted) {
		exit_code = 128 + got_signal;
		snprintf(st, sizeof(st), "interrupted:%d", got_signal);
	} else if (WIFEXITED(status)) {
		exit_code = WEXITSTATUS(status);
		snprintf(st, sizeof(st), "exit:%d", exit_code);
	} else {
		exit_code = 128 + WTERMSIG(status);
		snprintf(st, sizeof(st), "signal:%d", WTERMSIG(status));
	}
	fprintf(stderr, "sharnessctl: run %u ended (%s); killed %d process%s left in %s\n",
		run_id, st, killed, killed == 1 ? "" : "es", cg);
end:
	/* The daemon logs the run's last events, untags and removes the cgroup. */
	snprintf(pids, sizeof(pids), "%u", run_id);
	snprintf(killed_s, sizeof(killed_s), "%d", exit_code == RUN_EXIT_SETUP ? 0 : killed);
	req[0] = "run-end";
	req[1] = pids;
	req[2] = exit_code == RUN_EXIT_SETUP ? "setup-failed" : st;
	req[3] = killed_s;
	ret = sh_ctl_call(sock_path, 4, req, stdout, stderr);
	if (ret != 0)
		fprintf(stderr, "sharnessctl: could not report the end of run %u to sharnessd (%s)\n",
			run_id, ret < 0 ? strerror(-ret) : "refused");
	if (rmdir(cg) < 0 && errno != ENOENT)
		fprintf(stderr, "sharnessctl: cannot remove %s: %s\n", cg, strerror(errno));
	return exit_code;
}

/* ---- log -------------------------------------------------------------- */

struct log_opts {
	bool follow, json;
	const char *policy;
	long last;
};

/* Does the record pass --policy? (Lines that are not JSON are shown, and
 * reported, by show_line.) */
static bool wanted(const struct log_opts *o, const char *line, size_t len)
{
	struct sh_jobj obj = {};
	const char *pol;
	bool ok;

	if (!o->policy || sh_json_parse_flat(line, len, &obj) < 0)
		return true;
	pol = sh_jobj_get(&obj, "policy");
	ok = pol && strcmp(pol, o->policy) == 0;
	sh_jobj_free(&obj);
	return ok;
}

static void show_line(const struct log_opts *o, const char *line, size_t len)
{
	struct sh_jobj obj = {};
	const char *ev, *pol;

	if (sh_json_parse_flat(line, len, &obj) < 0) {
		fprintf(stderr, "sharnessctl: skipping a line that is not a JSON record\n");
		return;
	}
	pol = sh_jobj_get(&obj, "policy");
	if (o->policy && (!pol || strcmp(pol, o->policy) != 0))
		goto out;
	if (o->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
		goto out;
	}
	ev = sh_jobj_get(&obj, "event");
	if (ev && strcmp(ev, "violation") == 0) {
		const char *comm = sh_jobj_get(&obj, "comm"), *pid = sh_jobj_get(&obj, "pid");
		const char *reason = sh_jobj_get(&obj, "reason");

		printf("%s %s %s %s %s[%s] %s%s%s%s\n", sh_jobj_get(&obj, "time"),
		       pol ? pol : "?", sh_jobj_get(&obj, "action"), sh_jobj_get(&obj, "hook"),
		       comm ? comm : "?", pid ? pid : "?", sh_jobj_get(&obj, "target"),
		       reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
	} else {
		printf("%s -- %s", sh_jobj_get(&obj, "time"), ev ? ev : "?");
		for (size_t i = 0; i < obj.n; i++)
			if (strcmp(obj.kv[i].key, "time") && strcmp(obj.kv[i].key, "event"))
				printf(" %s=%s", obj.kv[i].key, obj.kv[i].val);
		printf("\n");
	}
out:
	fflush(stdout);
	sh_jobj_free(&obj);
}

static int cmd_log(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, 0, 'f' },
		{ "json", no_argument, 0, 'j' },
		{ "policy", required_argument, 0, 'p' },
		{ "lines", required_argument, 0, 'n' },
		{ "file", required_argument, 0, 'F' },
		{ 0 }
	};
	struct log_opts o = { .last = -1 };
	const char *file = NULL;
	char *path = NULL, *buf = NULL, **ring = NULL;
	size_t cap = 0, ringn = 0, ringpos = 0;
	ssize_t len;
	struct stat st;
	FILE *f;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fjp:n:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': o.follow = true; break;
		case 'j': o.json = true; break;
		case 'p': o.policy = optarg; break;
		case 'n': o.last = atol(optarg); break;
		case 'F': file = optarg; break;
		default: usage(stderr); return SH_EXIT_FAIL;
		}
	}
	if (!file) {
		const char *req[] = { "audit-path" };

		if (sh_ctl_call_capture(sock_path, 1, req, &path, NULL) == 0 && *path) {
			path[strcspn(path, "\n")] = 0;
			file = path;
		} else {
			file = "/var/log/sharness/audit.jsonl";
		}
	}
	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "sharnessctl: cannot open %s: %s\n", file, strerror(errno));
		free(path);
		return SH_EXIT_FAIL;
	}
	if (o.last >= 0) {
		ring = calloc(o.last ? o.last : 1, sizeof(*ring));
		if (!ring) {
			fclose(f);
			free(path);
			return SH_EXIT_FAIL;
		}
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		if (len && buf[len - 1] == '\n')
			buf[--len] = 0;
		if (!len)
			continue;
		if (ring) {
			if (!o.last || !wanted(&o, buf, len))
				continue;
			free(ring[ringpos]);
			ring[ringpos] = strdup(buf);
			ringpos = (ringpos + 1) % o.last;
			if (ringn < (size_t)o.last)
				ringn++;
		} else {
			show_line(&o, buf, len);
		}
	}
	if (ring) {
		for (size_t i = 0; i < ringn; i++) {
			char *l = ring[(ringpos + o.last - ringn + i) % o.last];

			if (l)
				show_line(&o, l, strlen(l));
		}
		for (long i = 0; i < o.last; i++)
			free(ring[i]);
		free(ring);
	}
	while (o.follow) {
		struct stat now;
		long pos = ftell(f);

		clearerr(f);
		len = getline(&buf, &cap, f);
		if (len > 0 && buf[len - 1] == '\n') {
			buf[--len] = 0;
			if (len)
				show_line(&o, buf, len);
			continue;
		}
		if (len > 0)
			fseek(f, pos, SEEK_SET); /* a partial line: wait for the rest */
		usleep(200000);
		/* Rotation: a new file at the path, or this one truncated. */
		if (fstat(fileno(f), &st) == 0 && stat(file, &now) == 0 &&
		    (now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
			FILE *nf = fopen(file, "r");

			if (nf) {
				/* Drain the old file before switching. */
				while ((len = getline(&buf, &cap, f)) > 0) {
					if (buf[len - 1] == '\n')
						buf[--len] = 0;
					if (len)
						show_line(&o, buf, len);
				}
				fclose(f);
				f = nf;
			}
		} else if (fstat(fileno(f), &st) == 0 && st.st_size < ftell(f)) {
			fseek(f, 0, SEEK_SET);
		}
	}
	free(buf);
	fclose(f);
	free(path);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, 0, 's' },
		{ "pin-dir", required_argument, 0, 'P' },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0 }
	};
	int c;

	sh_prog = "sharnessctl";
	while ((c = getopt_long(argc, argv, "+s:P:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock_path = optarg; break;
		case 'P': pin_dir = optarg; break;
		case 'v': sh_verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return SH_EXIT_FAIL;
		}
	}
	sh_libbpf_quiet();
	if (optind >= argc) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	argc -= optind;
	argv += optind;
	if (strcmp(argv[0], "probe") == 0 && argc == 1)
		return cmd_probe();
	if (strcmp(argv[0], "policy") == 0)
		return cmd_policy(argc, argv);
	if (strcmp(argv[0], "status") == 0)
		return cmd_status(argc, argv);
	if (strcmp(argv[0], "tag") == 0 || strcmp(argv[0], "untag") == 0)
		return cmd_tag(argc, argv);
	if (strcmp(argv[0], "run") == 0)
		return cmd_run(argc, argv);
	if (strcmp(argv[0], "log") == 0)
		return cmd_log(argc, argv);
	if (strcmp(argv[0], "unload") == 0)
		return cmd_unload(argc, argv);
	fprintf(stderr, "sharnessctl: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return SH_EXIT_FAIL;
}
