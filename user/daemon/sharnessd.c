// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessd: loads and attaches the programs, keeps the policy maps, reads
 * the ring buffer into the audit log and answers sharnessctl. This file
 * starts the daemon, runs its event loop and stops it (and detaches what a
 * stopped one left, --unload); records.c writes the kernel's events to the
 * log, requests.c answers the control socket.
 *
 * Exit status: 0 stopped on request; 1 bad usage or set-up failure
 * (audit log, control socket); 2 invalid policy; 3 this kernel cannot
 * enforce. It never runs unenforced.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "audit.h"
#include "control.h"
#include "daemon.h"
#include "enforcer.h"
#include "json.h"
#include "learning.h"
#include "pin.h"
#include "policy.h"
#include "probe.h"
#include "protect.h"
#include "records.h"
#include "reload.h"
#include "requests.h"
#include "runs.h"
#include "util.h"

/* What the process sets up around the daemon and takes down at the end. */
struct proc {
	bool foreground, unload, force;
	int detach_idle;                /* --detach-idle: seconds, <0 never */
	bool run_memory_set;            /* --run-memory-max given ("none": 0) */
	int journal;                    /* --journal 1, --no-journal 0, else -1 */
	char state_path[PATH_MAX], lock_path[PATH_MAX];
	int lock_fd, lfd, sfd, efd;
	int notify_fd;                  /* the waiting parent's pipe, or -1 */
	struct sh_policy_set set;       /* the policy, until the enforcer owns it */
	struct sh_errors errs;
	struct sh_probe probe;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sharnessd [--policy-dir DIR] [--audit-log FILE] [--socket PATH]\n"
		"                 [--pin-dir DIR] [--foreground] [--verbose] [--debug] [--version]\n"
		"                 [--metrics-file PATH]  (Prometheus text, for node_exporter)\n"
		"                 [--journal|--no-journal]  violations also to journald, with\n"
		"                 SHARNESS_* fields; default: on when systemd started sharnessd\n"
		"                 (INVOCATION_ID or JOURNAL_STREAM set), else off\n"
		"                 [--detach-idle SECONDS|never]  detach the programs after\n"
		"                 SECONDS with no cgroup tagged (default 10); they are attached\n"
		"                 again before the next tag\n"
		"                 [--run-memory-max SIZE|none]  memory.max of a run whose policy\n"
		"                 and flags set none (default: half of MemTotal)\n"
		"       sharnessd --unload [--force] [--pin-dir DIR] [--socket PATH] [--audit-log FILE]\n"
		"                 detach pinned programs left by a stopped daemon\n"
		"defaults: --policy-dir /etc/sharness/policies\n"
		"          --audit-log /var/log/sharness/audit.jsonl\n"
		"          --socket " SH_CTL_DEFAULT_SOCKET "\n"
		"          --pin-dir /sys/fs/bpf/sharness\n"
		"exit status: 0 stopped, 1 set-up failure, 2 invalid policy, 3 kernel cannot enforce\n");
}

/* sharnessd --unload: detach what a stopped daemon left pinned. */
static int unload_pinned(struct sh_daemon *d, bool force)
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
		sh_rec_unload(d, tags, force, err);
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

/* -1: go on; otherwise the exit status (usage, --help). */
static int parse_args(int argc, char **argv, struct sh_daemon *d, struct proc *p)
{
	static const struct option opts[] = {
		{ "policy-dir", required_argument, 0, 'p' },
		{ "audit-log", required_argument, 0, 'a' },
		{ "socket", required_argument, 0, 's' },
		{ "pin-dir", required_argument, 0, 'P' },
		{ "foreground", no_argument, 0, 'f' },
		{ "verbose", no_argument, 0, 'v' },
		{ "debug", no_argument, 0, 'D' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ "metrics-file", required_argument, 0, 'M' },
		{ "unload", no_argument, 0, 'U' },
		{ "force", no_argument, 0, 'F' },
		{ "journal", no_argument, 0, 'J' },
		{ "no-journal", no_argument, 0, 'N' },
		{ "detach-idle", required_argument, 0, 'I' },
		{ "run-memory-max", required_argument, 0, 'R' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:a:s:P:fvDhVM:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': d->policy_dir = optarg; break;
		case 'a': d->audit_path = optarg; break;
		case 's': d->socket_path = optarg; break;
		case 'P': d->pin_dir = optarg; break;
		case 'f': p->foreground = true; break;
		case 'v': sh_verbose = true; break;
		case 'D': sh_verbose = sh_debug = true; break;
		case 'U': p->unload = true; break;
		case 'F': p->force = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("sharnessd %s\n", sh_version); return 0;
		case 'M': d->metrics.file = optarg; break;
		case 'J': p->journal = 1; break;
		case 'N': p->journal = 0; break;
		case 'R':
			if (strcmp(optarg, "none") && !sh_parse_bytes(optarg, false, &d->run_memory_max)) {
				fprintf(stderr, "sharnessd: --run-memory-max takes a size (256M, 4G) "
					"or 'none', not '%s'\n", optarg);
				return SH_EXIT_FAIL;
			}
			p->run_memory_set = true;
			break;
		case 'I':
			if (sh_parse_seconds_or_never(optarg, 86400, &p->detach_idle)) {
				fprintf(stderr, "sharnessd: --detach-idle takes seconds (0 to 86400) "
					"or 'never', not '%s'\n", optarg);
				return SH_EXIT_FAIL;
			}
			break;
		default: usage(stderr); return SH_EXIT_FAIL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return SH_EXIT_FAIL;
	}
	if (!p->run_memory_set)
		d->run_memory_max = sh_default_run_memory();
	return -1;
}

/* One daemon per socket: a second one would fight over the pins. */
static int take_lock(const struct sh_daemon *d, struct proc *p)
{
	char dir[PATH_MAX];

	snprintf(p->state_path, sizeof(p->state_path), "%s.tags", d->socket_path);
	snprintf(p->lock_path, sizeof(p->lock_path), "%s.lock", d->socket_path);
	sh_dir_of(d->socket_path, dir, sizeof(dir));
	sh_mkdir_p(dir, 0700);
	p->lock_fd = open(p->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (p->lock_fd < 0) {
		sh_log("cannot open the lock file %s: %s%s", p->lock_path, strerror(errno),
		       errno == EACCES || errno == EPERM ? " (sharnessd runs as root)" : "");
		return SH_EXIT_FAIL;
	}
	if (flock(p->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			sh_log("another sharnessd holds %s; %s", p->lock_path,
			       p->unload ? "use sharnessctl unload" : "not starting a second one");
		else
			sh_log("cannot lock %s: %s", p->lock_path, strerror(errno));
		return SH_EXIT_FAIL;
	}
	return 0;
}

/* A policy that cannot be used: its errors, then why the daemon stops. */
static int policy_failed(const struct sh_daemon *d, const struct proc *p, const char *what)
{
	sh_daemon_log_errors(&p->errs, -1);
	sh_log("%s %s; not starting", what, d->policy_dir);
	return SH_EXIT_POLICY;
}

static int cannot_enforce(const struct sh_probe *probe)
{
	char why[768];

	sh_log("this kernel cannot enforce: %s", sh_probe_why(probe, why, sizeof(why)));
	sh_log("not starting: sharnessd never runs unenforced");
	return SH_EXIT_NOENFORCE;
}

/* Policy first: a bad policy is reported even on a kernel that cannot
 * enforce. */
static int start_checks(struct sh_daemon *d, struct proc *p)
{
	if (sh_policy_load_dir(d->policy_dir, &p->set, &p->errs) ||
	    sh_policy_check_host(&p->set, &p->errs, NULL))
		return policy_failed(d, p, "invalid policy in");
	/* The cheap checks first; the real load below is the attach test. On
	 * a failure, the full probe (with an attach) names the deepest cause. */
	if (sh_probe_run_opts(&p->probe, false) && sh_probe_run(&p->probe))
		return cannot_enforce(&p->probe);
	return 0;
}

/* What the programs learn of the host: the lowest mappable address and
 * the host's IPC namespace. */
static int set_host(struct sh_daemon *d)
{
	char v[32];
	unsigned long long min = 0;
	struct stat st;

	if (sh_read_file("/proc/sys/vm/mmap_min_addr", v, sizeof(v)) > 0)
		min = strtoull(v, NULL, 10);
	sh_enforcer_set_mmap_min(d->enf, min);
	if (stat("/proc/self/ns/ipc", &st) < 0) {
		sh_log("cannot find the host's IPC namespace (/proc/self/ns/ipc: %s): "
		       "mount procfs; not starting", strerror(errno));
		return SH_EXIT_FAIL;
	}
	sh_enforcer_set_host_ipc_ns(d->enf, (uint32_t)st.st_ino);
	return 0;
}

/* Detached (unless --foreground), the audit log open, the programs
 * attached and the policy in force. */
static int start_enforcing(struct sh_daemon *d, struct proc *p)
{
	int err;

	if (!p->foreground && daemonize(&p->notify_fd)) {
		sh_log("cannot detach: %s", strerror(errno));
		return SH_EXIT_FAIL;
	}
	err = sh_audit_open(&d->audit, d->audit_path);
	if (err) {
		sh_log("cannot open audit log %s: %s", d->audit_path, strerror(-err));
		return SH_EXIT_FAIL;
	}
	err = sh_enforcer_open(&d->enf, sh_rec_event, d, d->pin_dir, p->state_path);
	if (err) {
		p->probe.attach = false;
		p->probe.attach_err = err;
		return cannot_enforce(&p->probe);
	}
	sh_enforcer_set_daemon(d->enf, getpid());
	d->attached_said = true;        /* the daemon-start record says so */
	sh_enforcer_set_detach_idle(d->enf, p->detach_idle);
	err = set_host(d);
	if (err)
		return err;
	if (sh_learning_adopt(d, &p->set) || sh_enforcer_apply(d->enf, &p->set, &p->errs))
		return policy_failed(d, p, "cannot apply the policy in");
	return 0;
}

/* The control socket, which no tree connects to, and the daemon's files. */
static int start_control(struct sh_daemon *d, struct proc *p)
{
	uint64_t ino;
	uint32_t kdev;
	int err;

	p->lfd = sh_ctl_listen(d->socket_path);
	if (p->lfd < 0) {
		sh_log("cannot listen on %s: %s", d->socket_path, strerror(-p->lfd));
		return SH_EXIT_FAIL;
	}
	err = sh_kernel_ino(d->socket_path, &ino, &kdev);
	if (err) {
		sh_log("cannot find %s's inode: %s", d->socket_path, strerror(-err));
		return SH_EXIT_FAIL;
	}
	sh_enforcer_set_control_socket(d->enf, ino, kdev);
	sh_protect_watch(d);
	if (sh_protect_own_files(d))
		return SH_EXIT_FAIL;
	return 0;
}

/* Signals through a signalfd; one epoll set for events, clients, signals. */
static int start_loop(struct sh_daemon *d, struct proc *p)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	p->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	p->efd = epoll_create1(EPOLL_CLOEXEC);
	if (p->sfd < 0 || p->efd < 0) {
		sh_log("cannot set up the event loop: %s", strerror(errno));
		return SH_EXIT_FAIL;
	}
	ev.data.fd = sh_enforcer_events_fd(d->enf);
	epoll_ctl(p->efd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.data.fd = p->lfd;
	epoll_ctl(p->efd, EPOLL_CTL_ADD, p->lfd, &ev);
	ev.data.fd = p->sfd;
	epoll_ctl(p->efd, EPOLL_CTL_ADD, p->sfd, &ev);
	if (d->log_wfd >= 0) {
		ev.data.fd = d->log_wfd;
		epoll_ctl(p->efd, EPOLL_CTL_ADD, d->log_wfd, &ev);
	}
	d->efd = p->efd;    /* a watch made later joins it (sh_protect_watch) */
	return 0;
}

/* The set-up status for the parent waiting in daemonize(). */
static void tell_parent(int *notify_fd, char status)
{
	if (write(*notify_fd, &status, 1) != 1)
		sh_dbg("readiness pipe: %s", strerror(errno));
	close(*notify_fd);
	*notify_fd = -1;
}

/* Enforcing: say so in the log, to systemd and to the waiting parent. */
static void announce(struct sh_daemon *d, struct proc *p)
{
	d->next_run = (uint32_t)(sh_now_ns(CLOCK_REALTIME) / 1000000000ull) % 1000000 * 100;
	sh_audit_begin_meta(&d->buf, "daemon-start");
	sh_json_uint_field(&d->buf, "pid", getpid());
	sh_rec_str(d, "version", sh_version);
	sh_json_uint_field(&d->buf, "adopted", sh_enforcer_adopted(d->enf));
	sh_json_uint_field(&d->buf, "resumed", sh_enforcer_resumed(d->enf));
	sh_rec_str(d, "kernel", p->probe.kernel);
	sh_json_uint_field(&d->buf, "policies", sh_enforcer_policies(d->enf)->n);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	sh_log("enforcing %zu policies from %s (kernel %s), audit log %s, control %s",
	       sh_enforcer_policies(d->enf)->n, d->policy_dir, p->probe.kernel, d->audit_path,
	       d->socket_path);
	/* Events queued while no daemon was reading. */
	sh_enforcer_consume(d->enf);
	sh_rec_dropped(d);
	sh_metrics_write(d, true);
	sd_notify(0, "READY=1");
	if (p->notify_fd >= 0) {
		tell_parent(&p->notify_fd, 0);
		/* Detached from a terminal: what it says from now on goes to
		 * the journal, not to whoever's terminal started it. A stderr
		 * the starter redirected (a file, a pipe) is kept. */
		if (isatty(STDERR_FILENO))
			sh_log_to_syslog();
		if (!freopen("/dev/null", "r", stdin)) {
			/* nothing to read anyway */
		}
	}
}

static int start(struct sh_daemon *d, struct proc *p)
{
	int ret = start_checks(d, p);

	if (!ret)
		ret = start_enforcing(d, p);
	if (!ret)
		ret = start_control(d, p);
	if (!ret)
		ret = start_loop(d, p);
	if (!ret)
		announce(d, p);
	return ret;
}

/* The log renamed or removed without a reopen that worked (SIGHUP's failed:
 * the file system out of inodes, say): opened again at its path, its new
 * file protected as SIGHUP's would be. */
static void follow_log(struct sh_daemon *d)
{
	int r = sh_audit_follow(&d->audit);

	if (r > 0) {
		sh_log("reopened %s: the file written was no longer at its path", d->audit_path);
		sh_protect_watch(d);
		sh_protect_own_files(d);
		d->follow_said = false;
	} else if (r < 0 && !d->follow_said) {
		sh_log("cannot reopen %s: %s; writing to the file renamed away until it can",
		       d->audit_path, strerror(-r));
		d->follow_said = true;
	}
}

/* SIGHUP reopens the audit log and reloads; any other signal stops the
 * daemon (false). */
static bool on_signals(struct sh_daemon *d, int sfd)
{
	struct signalfd_siginfo si;
	bool go_on = true;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		int e;

		if (si.ssi_signo != SIGHUP) {
			go_on = false;
			continue;
		}
		e = sh_audit_reopen(&d->audit);
		sh_protect_watch(d);    /* the directory may be a new one */
		if (e)
			sh_log("cannot reopen %s: %s", d->audit_path, strerror(-e));
		else
			sh_protect_own_files(d);
		sd_notify(0, "RELOADING=1");
		sh_daemon_reload(d, -1);
		sd_notify(0, "READY=1");
	}
	return go_on;
}

static void loop(struct sh_daemon *d, const struct proc *p)
{
	bool running = true;

	while (running && !d->unloading) {
		struct epoll_event evs[8];
		int n = epoll_wait(p->efd, evs, 8, 1000);

		if (n < 0 && errno != EINTR) {
			sh_log("epoll: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == p->lfd) {
				sh_req_serve(d, p->lfd);
			} else if (evs[i].data.fd == p->sfd) {
				if (!on_signals(d, p->sfd))
					running = false;
			} else if (evs[i].data.fd == d->log_wfd) {
				sh_protect_on_watch(d);
			} else {
				d->batch = 0;
				sh_enforcer_consume(d->enf);
			}
		}
		follow_log(d);
		sh_rec_dropped(d);
		sh_rec_unjudged(d, false);
		sh_rl_flush_old(&d->rl);
		sh_metrics_write(d, false);
		sh_learning_watch(d);
		sh_enforcer_idle_tick(d->enf);
		sh_rec_attached(d);
	}
}

/* The last events and counts go to the log; the programs stay attached
 * unless unloaded on request. */
static void stop(struct sh_daemon *d)
{
	sd_notify(0, "STOPPING=1");
	d->batch = 0;
	sh_enforcer_consume(d->enf);
	sh_rec_dropped(d);
	sh_rec_unjudged(d, true);
	sh_rl_flush_all(&d->rl);
	sh_metrics_write(d, true);
	/* A stop does not detach (the next start or --unload does): only a
	 * rest already under way is waited for, at the enforcer's end. */
	sh_rec_attached(d);
	sh_audit_begin_meta(&d->buf, "daemon-stop");
	sh_json_uint_field(&d->buf, "pid", getpid());
	sh_rec_str(d, "enforcement", d->unloading ? "unloaded" :
		   sh_enforcer_attached(d->enf, NULL) ? "continues" : "nothing-tagged");
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	/* A lost count the log could not take before: once more, now that
	 * the last record may have written the gap. */
	d->dropped_try_ns = 0;
	sh_rec_dropped(d);
	sh_enforcer_set_daemon(d->enf, 0);
	if (d->unloading)
		sh_log("stopping: programs detached");
	else if (!sh_enforcer_attached(d->enf, NULL))
		sh_log("stopping: nothing tagged, nothing attached");
	else
		sh_log("stopping: programs stay attached and pinned under %s; "
		       "`sharnessd --unload --pin-dir %s` detaches them", d->pin_dir, d->pin_dir);
}

static void cleanup(struct sh_daemon *d, struct proc *p, int ret)
{
	if (p->notify_fd >= 0)
		tell_parent(&p->notify_fd, ret);
	if (p->lfd >= 0) {
		close(p->lfd);
		unlink(d->socket_path);
	}
	if (p->sfd >= 0)
		close(p->sfd);
	if (p->efd >= 0)
		close(p->efd);
	if (d->log_wfd >= 0)
		close(d->log_wfd);
	sh_enforcer_destroy(d->enf);
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	if (d->audit.path)
		sh_audit_close(&d->audit);
	sh_policy_set_free(&p->set);
	sh_errors_free(&p->errs);
	sh_buf_free(&d->buf);
	sh_rl_free(&d->rl);
	sh_journal_close(&d->journal);
	free(d->runs);
	for (size_t i = 0; i < d->nlearning; i++) {
		sh_policy_free(&d->learning[i].pol);
		sh_buf_free(&d->learning[i].recs);
		if (d->learning[i].pidfd >= 0)
			close(d->learning[i].pidfd);
	}
	free(d->learning);
}

int main(int argc, char **argv)
{
	struct sh_daemon d = {
		.policy_dir = "/etc/sharness/policies",
		.audit_path = "/var/log/sharness/audit.jsonl",
		.log_wfd = -1,
		.efd = -1,
		.socket_path = SH_CTL_DEFAULT_SOCKET,
		.pin_dir = "/sys/fs/bpf/sharness",
		.journal = { .fd = -1 },
		.run_denied = sh_run_count_denial,
		.learning_of = sh_learning_of,
		.learning_record = sh_learning_record,
	};
	struct proc p = { .lock_fd = -1, .lfd = -1, .sfd = -1, .efd = -1, .notify_fd = -1,
			  .journal = -1, .detach_idle = SH_DETACH_IDLE_DEFAULT };
	int ret;

	sh_prog = "sharnessd";
	ret = parse_args(argc, argv, &d, &p);
	if (ret >= 0)
		return ret;
	sh_libbpf_quiet();
	sh_buf_init(&d.buf);
	if (sh_rec_init(&d)) {
		sh_log("out of memory");
		return SH_EXIT_FAIL;
	}
	ret = sh_journal_init(&d.journal, p.journal);
	if (ret) {
		sh_log("cannot make a socket for the journal: %s (--no-journal goes without)",
		       strerror(-ret));
		return SH_EXIT_FAIL;
	}
	if (take_lock(&d, &p))
		return SH_EXIT_FAIL;
	if (p.unload)
		return unload_pinned(&d, p.force);
	sh_keep_off_oom();
	ret = start(&d, &p);
	if (!ret) {
		loop(&d, &p);
		stop(&d);
	}
	cleanup(&d, &p, ret);
	return ret;
}
