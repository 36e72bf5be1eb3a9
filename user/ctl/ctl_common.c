// SPDX-License-Identifier: GPL-2.0
/*
 * What sharnessctl's commands share (ctl.h): the daemon's socket, how a
 * failed daemon call becomes an exit status, and option parsing. The
 * command table and main() (sharnessctl.c) use these; so do the commands
 * in files of their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "ctl.h"
#include "util.h"

const char *ctl_sock_path = SH_CTL_DEFAULT_SOCKET;

int ctl_daemon_status(int ret)
{
	if (ret >= 0)
		return ret;
	fprintf(stderr, "sharnessctl: cannot reach sharnessd at %s: %s\n", ctl_sock_path,
		strerror(-ret));
	if (ret == -ENOENT || ret == -ECONNREFUSED)
		fprintf(stderr, "sharnessctl: is sharnessd running? (systemctl start sharnessd)\n");
	if ((ret == -EACCES || ret == -EPERM) && geteuid() != 0)
		fprintf(stderr, "sharnessctl: the control socket is root's: run sharnessctl "
			"as root (sudo)\n");
	return SH_EXIT_DAEMON;
}

int ctl_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       int (*take)(int opt, const char *arg, void *ctx), void *ctx)
{
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			/* getopt named the option; say where the right ones are. */
			if (argc > 0 && strcmp(argv[0], "sharnessctl") != 0 && argv[0][0] != '/' &&
			    !strchr(argv[0], '/'))
				fprintf(stderr, "Try 'sharnessctl %s --help'.\n", argv[0]);
			else
				fprintf(stderr, "Try 'sharnessctl --help'.\n");
			return -1;
		}
		ret = take(c, optarg, ctx);
		if (ret)
			return ret;
	}
	return 0;
}
