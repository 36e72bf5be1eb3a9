/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sharnessctl's commands share: the daemon's socket, the usage text,
 * how a failed daemon call becomes an exit status, and option parsing.
 * The commands that need more than a page live in files of their own:
 * `run` in ctl_run.c, `log` in ctl_log.c.
 */
#ifndef SH_CTL_H
#define SH_CTL_H

#include <getopt.h>
#include <stdio.h>

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
/* sharnessctl log ...; returns the exit status. */
int ctl_log(int argc, char **argv);

#endif
