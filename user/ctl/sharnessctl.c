// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessctl: the operator's command line. This file holds the command
 * table, the global options and the small commands (probe, policy, status,
 * tag, untag, unload); `run` is in ctl_run.c, `log` in ctl_log.c, what
 * the commands share in ctl_common.c.
 *
 * Exit status: the command's own (see usage); 1 failure or bad usage;
 * 2 invalid policy (policy reload); 3 this kernel cannot enforce (probe);
 * 4 the daemon is unreachable or refused the request. `run` exits with the
 * command's status, 128+N when it was killed by signal N, 124 on timeout,
 * 125 when the run could not be set up, 126/127 when CMD could not be
 * executed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "ctl.h"
#include "pin.h"
#include "policy.h"
#include "probe.h"
#include "util.h"

static const char *pin_dir = "/sys/fs/bpf/sharness";

static int unknown_command(const char *name)
{
	fprintf(stderr, "sharnessctl: unknown command '%s'\n", name);
	ctl_usage(stderr);
	return SH_EXIT_FAIL;
}

static int cmd_probe(int argc, char **argv)
{
	struct sh_probe p;
	int ret;

	if (argc != 1)
		return unknown_command(argv[0]);
	ret = sh_probe_run(&p);
	sh_probe_print(&p, stdout);
	return ret;
}

/*
 * policy check FILE... or DIR: the same loading and host checks the daemon
 * makes (a directory is read as the daemon reads its policy directory).
 */
static int policy_check(int nfiles, char **files)
{
	struct sh_policy_set set = {};
	struct sh_errors errs = {}, warns = {};
	struct stat st;
	int err;

	if (nfiles == 1 && stat(files[0], &st) == 0 && S_ISDIR(st.st_mode))
		err = sh_policy_load_dir(files[0], &set, &errs);
	else
		err = sh_policy_load_files((const char *const *)files, nfiles, &set, &errs);
	if (!err)
		err = sh_policy_check_host(&set, &errs, &warns);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msgs[i]);
	for (size_t i = 0; i < warns.n; i++)
		fprintf(stderr, "%s\n", warns.msgs[i]);
	if (!err)
		for (size_t i = 0; i < set.n; i++)
			printf("%s: policy '%s' ok (%zu rules, mode %s)\n", set.pols[i].file,
			       set.pols[i].name, set.pols[i].nrules + set.pols[i].nnet,
			       set.pols[i].mode == SH_MODE_AUDIT ? "audit" : "enforce");
	sh_policy_set_free(&set);
	sh_errors_free(&errs);
	sh_errors_free(&warns);
	return err ? SH_EXIT_FAIL : 0;
}

static int cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0) {
		if (argc < 3) {
			fprintf(stderr, "sharnessctl: policy check needs at least one FILE\n");
			return SH_EXIT_FAIL;
		}
		return policy_check(argc - 2, argv + 2);
	}
	if (argc >= 2 && strcmp(argv[1], "pin") == 0)
		return sh_ctl_policy_pin(argc - 2, argv + 2);
	if (argc == 2 && strcmp(argv[1], "reload") == 0) {
		const char *req[] = { "reload" };

		return ctl_daemon_status(sh_ctl_call(ctl_sock_path, 1, req, stdout, stderr));
	}
	ctl_usage(stderr);
	return SH_EXIT_FAIL;
}

/* No daemon answers: are programs still pinned and attached? */
static int status_without_daemon(bool json, int err)
{
	unsigned links, tags;
	int gen = sh_pin_state(pin_dir, &links, &tags);

	if (gen > 0 && links > 0) {
		if (json)
			printf("{\"state\":\"enforcing-without-daemon\",\"programs\":%u,\"tagged\":%u,"
			       "\"pin_dir\":\"%s/gen-%d\"}\n", links, tags, pin_dir, gen);
		else
			printf("enforcing WITHOUT daemon: %u programs pinned under %s/gen-%d, %u cgroups "
			       "tagged; violations are refused but not logged until sharnessd "
			       "starts again (%s: %s)\n", links, pin_dir, gen, tags, ctl_sock_path,
			       strerror(-err));
		return SH_EXIT_DAEMON;
	}
	if (json)
		printf("{\"state\":\"not-enforcing\"}\n");
	else
		printf("NOT enforcing: no sharnessd at %s (%s) and no programs attached under %s\n",
		       ctl_sock_path, strerror(-err), pin_dir);
	return SH_EXIT_NOENFORCE;
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
	bool prom = argc > 1 && strcmp(argv[1], "--prometheus") == 0;
	int ret;

	if (argc > 2 || (argc == 2 && !json && !prom)) {
		fprintf(stderr, "sharnessctl: status takes --json or --prometheus\n"
			"Try 'sharnessctl status --help'.\n");
		return SH_EXIT_FAIL;
	}
	if (prom)
		req[1] = "prometheus";
	ret = sh_ctl_call(ctl_sock_path, argc > 1 ? 2 : 1, req, stdout, stderr);
	if (ret >= 0)
		return ret;
	/* EACCES and the like: a daemon may be there; say why, exit 4. */
	if (ret != -ENOENT && ret != -ECONNREFUSED)
		return ctl_daemon_status(ret);
	return status_without_daemon(json, ret);
}

/* Is pid a live process (not gone, not a zombie)? */
static bool alive(long pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (sh_read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static int cmd_unload(int argc, char **argv)
{
	const char *req[] = { "unload", "force" };
	bool force = argc > 1 && strcmp(argv[1], "--force") == 0;

	const char *st[] = { "status", "json" };
	char *reply = NULL, *p;
	long pid = 0;
	int ret;

	if (argc > 2 || (argc == 2 && !force)) {
		ctl_usage(stderr);
		return SH_EXIT_FAIL;
	}
	/* Which process to wait for: unload returns once it is gone, so the
	 * next sharnessd finds the lock free. */
	if (sh_ctl_call_capture(ctl_sock_path, 2, st, &reply, stderr) == 0 &&
	    (p = strstr(reply, "\"pid\":")))
		pid = strtol(p + 6, NULL, 10);
	free(reply);
	ret = ctl_daemon_status(sh_ctl_call(ctl_sock_path, force ? 2 : 1, req, stdout, stderr));
	if (ret || pid <= 0)
		return ret;
	for (int i = 0; i < 3000 && alive(pid); i++)
		usleep(10000);
	if (alive(pid)) {
		fprintf(stderr, "sharnessctl: programs detached, but sharnessd (pid %ld) has not "
			"exited after 30 s\n", pid);
		return SH_EXIT_FAIL;
	}
	return 0;
}

/* tag [--runtime PID] CGROUP POLICY (sent as "tag CGROUP POLICY [runtime
 * PID]"), untag CGROUP. */
static int cmd_tag(int argc, char **argv)
{
	const char *req[5] = { argv[0] };
	int skip = argc > 2 && strcmp(argv[1], "--runtime") == 0 ? 2 : 0, n = argc - skip;

	if ((strcmp(argv[0], "tag") == 0 && n != 3) ||
	    (strcmp(argv[0], "untag") == 0 && (skip || n != 2))) {
		ctl_usage(stderr);
		return SH_EXIT_FAIL;
	}
	for (int i = 1; i < n; i++)
		req[i] = argv[i + skip];
	if (skip) {
		req[n++] = "runtime";
		req[n++] = argv[2];
	}
	return ctl_daemon_status(sh_ctl_call(ctl_sock_path, n, req, stdout, stderr));
}

/*
 * The commands, in the order of the usage text. A command may have more
 * than one row (one per form); the first row with its name runs it.
 */
static const struct ctl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis, *help;
} cmds[] = {
	{ "probe", cmd_probe, "probe", "can this kernel enforce? (exit 0 yes, 3 no)" },
	{ "policy", cmd_policy, "policy check FILE...|DIR",
	  "validate policy files, no daemon needed (exit 1 on errors)" },
	{ "policy", cmd_policy, "policy pin [--add] [--write] FILE...",
	  "the digests of pinned exec allows now, against the file's (exit 1 on errors)" },
	{ "policy", cmd_policy, "policy reload",
	  "the daemon re-reads its policy directory atomically" },
	{ "status", cmd_status, "status [--json|--prometheus]",
	  "what the daemon enforces, tags and counters" },
	{ "tag", cmd_tag, "tag [--runtime PID] CGROUP POLICY",
	  "tag an existing cgroup (--runtime: PID in it is a container runtime's init)" },
	{ "untag", cmd_tag, "untag CGROUP", "untag it" },
	{ "run", ctl_run,
	  "run --policy NAME [--workdir DIR] [--pids-max N] [--timeout SEC] [--user USER]\n"
	  "      [--memory-max SIZE] [--memory-swap-max SIZE] [--cpu-max PCT%] [--io-weight N]\n"
	  "      [--private-tmp SIZE]\n"
	  "      -- CMD [ARG...]",
	  "run CMD in a fresh tagged cgroup, kill what is left when it ends" },
	{ "learn", ctl_learn,
	  "learn --policy NAME [--from POLICY] [--workdir DIR] [--output FILE] [--timeout SEC]\n"
	  "      [--user USER] [--explain] -- CMD [ARG...]",
	  "run CMD refusing nothing its rules decide; write a policy that allows that run" },
	{ "log", ctl_log, "log [-f] [--json] [--policy NAME] [--run ID] [--hook HOOK]\n"
	  "      [--action deny|audit|learn] [--since WHEN] [--until WHEN] [-n N] [--file PATH]\n"
	  "      [-o short|json|cat]",
	  "show the audit log (follow with -f)" },
	{ "unload", cmd_unload, "unload [--force]",
	  "detach the programs (refused while cgroups are tagged)" },
};

#define SYNOPSIS_WIDTH 30

void ctl_usage(FILE *f)
{
	fprintf(f, "usage: sharnessctl [--socket PATH] [--verbose] [--debug] [--version] COMMAND\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strlen(cmds[i].synopsis) < SYNOPSIS_WIDTH)
			fprintf(f, "  %-*s%s\n", SYNOPSIS_WIDTH, cmds[i].synopsis, cmds[i].help);
		else
			fprintf(f, "  %s\n  %-*s%s\n", cmds[i].synopsis, SYNOPSIS_WIDTH, "",
				cmds[i].help);
	}
	fprintf(f,
		"options: --socket PATH (default " SH_CTL_DEFAULT_SOCKET "), --pin-dir DIR (for status\n"
		"         without a daemon; default /sys/fs/bpf/sharness), --verbose, --debug\n"
		"         (also libbpf's log); COMMAND --help for one command\n");
}

/* sharnessctl COMMAND --help: that command's forms, on standard output. */
static int command_help(const char *name)
{
	bool found = false;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(name, cmds[i].name) == 0) {
			printf("usage: sharnessctl %s\n  %s\n", cmds[i].synopsis,
			       cmds[i].help);
			found = true;
		}
	return found ? 0 : unknown_command(name);
}

/* -h: the usage on standard output, exit 0. */
#define MAIN_HELP 1

static int main_opt(int opt, const char *arg, void *ctx)
{
	(void)ctx;
	switch (opt) {
	case 's': ctl_sock_path = arg; break;
	case 'P': pin_dir = arg; break;
	case 'v': sh_verbose = true; break;
	case 'D': sh_verbose = sh_debug = true; break;
	case 'h': ctl_usage(stdout); return MAIN_HELP;
	case 'V': printf("sharnessctl %s\n", sh_version); return MAIN_HELP;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, 0, 's' },
		{ "pin-dir", required_argument, 0, 'P' },
		{ "verbose", no_argument, 0, 'v' },
		{ "debug", no_argument, 0, 'D' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0 }
	};
	int ret;

	sh_prog = "sharnessctl";
	ret = ctl_getopt(argc, argv, "+s:P:vDhV", opts, main_opt, NULL);
	if (ret)
		return ret == MAIN_HELP ? 0 : SH_EXIT_FAIL;
	sh_libbpf_quiet();
	if (optind >= argc) {
		ctl_usage(stderr);
		return SH_EXIT_FAIL;
	}
	argc -= optind;
	argv += optind;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return command_help(argv[0]);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[0], cmds[i].name) == 0)
			return cmds[i].run(argc, argv);
	return unknown_command(argv[0]);
}
