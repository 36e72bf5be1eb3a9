/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sharnessctl's commands share: the daemon's socket, how a failed
 * daemon call becomes an exit status, and option parsing (ctl_common.c);
 * the usage text (sharnessctl.c). The commands that need more than a page
 * live in files of their own: `run` in ctl_run.c, `log` in ctl_log.c,
 * `learn` in ctl_learn.c, `policy pin` in ctl_pin.c.
 */
#ifndef SH_CTL_H
#define SH_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "reslimit.h"

/* The daemon's control socket (--socket). */
extern const char *ctl_sock_path;

void ctl_usage(FILE *f);

/* Reports a failed daemon call (ret < 0) and maps it to an exit status;
 * a status the daemon sent (ret >= 0) is returned as is. */
int ctl_daemon_status(int ret);

/*
 * Parses the options of argv (argv[0] names the command) with getopt_long,
 * handing each one with its argument to take(). Returns 0 once the options
 * are done (optind then indexes the first operand), -1 after the usage on
 * an unknown option or a missing argument, or the first nonzero value
 * take() returns.
 */
int ctl_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       int (*take)(int opt, const char *arg, void *ctx), void *ctx);

/* sharnessctl run ... -- CMD [ARG...]; returns the exit status. */
int ctl_run(int argc, char **argv);

/* What a run is given: sharnessctl run's options, and learn's. */
struct ctl_run_opts {
	const char *policy, *workdir, *user;
	unsigned long pids_max;
	unsigned long timeout;
	struct sh_limits limits;   /* over the policy's [limits] */
	bool learn;                /* a learning run (sharnessctl learn) */
	const char *from;          /* learning: start from this policy (NULL: nothing) */
	char from_file[4096];      /* learning: set to that policy's file */
	char *from_text;           /* learning: its text when the run began (malloc'd) */
	uint64_t private_tmp;      /* the run's own /tmp, /var/tmp: bytes, as the
				    * daemon merged flag and policy (0: none) */
};
#define LEARN_FROM_MAX (1 << 20)

/*
 * Runs cmd in a fresh tagged tree, supervised, and ends it (ctl_run.c).
 * For a learning run, *learned gets the run's learn records (JSON lines,
 * malloc'd). Returns sharnessctl's exit status: the command's, or 124
 * (timeout), 125 (set-up), 128+N; *setup_failed says whether the run or
 * its end could not be set up or reported (nothing to learn from then).
 */
int ctl_run_tree(struct ctl_run_opts *o, char **cmd, char **learned, int *setup_failed);
/* sharnessctl learn ...; returns the exit status. */
int ctl_learn(int argc, char **argv);
/* sharnessctl log ...; returns the exit status. */
int ctl_log(int argc, char **argv);
/* policy pin [--add] [--write] FILE... (ctl_pin.c); argv after "pin". */
int sh_ctl_policy_pin(int argc, char **argv);

#endif
