// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessctl learn: runs a command as `run` does, in a tree whose policy
 * refuses nothing its rules decide (the wall still holds) and reports
 * each object the run used once; then writes a policy that allows that
 * run (learn_gen.c). With --from, the tree is held to that policy and only
 * what it would have refused is learned and added.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "json.h"
#include "learn_gen.h"
#include "util.h"

#define LEARN_EXIT_SETUP 125

struct learn_opts {
	struct ctl_run_opts run;
	const char *name, *output;
	bool explain;
	char workdir[PATH_MAX];    /* resolved: writes under it become one rule */
};

static int learn_opt(int opt, const char *arg, void *ctx)
{
	struct learn_opts *o = ctx;
	char *end;

	switch (opt) {
	case 'p': o->name = arg; return 0;
	case 'f': o->run.from = arg; return 0;
	case 'w': o->run.workdir = arg; return 0;
	case 'u': o->run.user = arg; return 0;
	case 'o': o->output = arg; return 0;
	case 'e': o->explain = true; return 0;
	}
	errno = 0;
	o->run.timeout = strtoul(arg, &end, 10);
	if (errno || *end || !*arg) {
		fprintf(stderr, "sharnessctl: bad --timeout '%s' (want seconds)\n", arg);
		return LEARN_EXIT_SETUP;
	}
	return 0;
}

static bool good_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* The work directory becomes one write rule: not the root, a home or a
 * top-level directory. */
static int check_workdir(struct learn_opts *o)
{
	const char *home = getenv("HOME"), *w = o->workdir;
	int depth = 0;

	if (!realpath(o->run.workdir ? o->run.workdir : ".", o->workdir)) {
		fprintf(stderr, "sharnessctl: cannot resolve the work directory %s: %s\n",
			o->run.workdir ? o->run.workdir : ".", strerror(errno));
		return -1;
	}
	for (const char *p = w; *p; p++)
		depth += *p == '/' && p[1];
	if (depth < 2 || !strcmp(w, "/root") || (home && !strcmp(w, home)) ||
	    (!strncmp(w, "/home/", 6) && depth == 2)) {
		fprintf(stderr, "sharnessctl: the work directory %s would let the tree write "
			"everywhere under it: give --workdir the job's own directory\n", w);
		return -1;
	}
	return 0;
}

static int learn_parse(int argc, char **argv, struct learn_opts *o)
{
	static const struct option opts[] = {
		{ "policy", required_argument, 0, 'p' },
		{ "from", required_argument, 0, 'f' },
		{ "workdir", required_argument, 0, 'w' },
		{ "output", required_argument, 0, 'o' },
		{ "timeout", required_argument, 0, 't' },
		{ "user", required_argument, 0, 'u' },
		{ "explain", no_argument, 0, 'e' },
		{ 0 }
	};

	if (ctl_getopt(argc, argv, "+p:f:w:o:t:u:e", opts, learn_opt, o))
		return -1;
	if (!o->name || optind >= argc) {
		fprintf(stderr, "sharnessctl: learn needs --policy NAME and a command after --\n");
		return -1;
	}
	if (!good_name(o->name)) {
		fprintf(stderr, "sharnessctl: bad policy name '%s' (1-63 of A-Z a-z 0-9 _ . -)\n",
			o->name);
		return -1;
	}
	o->run.learn = true;
	return check_workdir(o) ? -1 : optind;
}

/* The learn records, one JSON object a line, into *v. */
static int parse_records(char *text, struct sh_jobj **v, size_t *n)
{
	size_t cap = 0;

	*v = NULL;
	*n = 0;
	for (char *line = text, *eol; line && *line; line = eol ? eol + 1 : NULL) {
		eol = strchr(line, '\n');
		if (line == eol)
			continue;
		if (*n == cap) {
			struct sh_jobj *nv = realloc(*v, (cap = cap ? 2 * cap : 64) * sizeof(**v));

			if (!nv)
				return -ENOMEM;
			*v = nv;
		}
		if (sh_json_parse_flat(line, eol ? (size_t)(eol - line) : strlen(line),
				       &(*v)[*n]) < 0) {
			fprintf(stderr, "sharnessctl: a learn record from sharnessd is not JSON\n");
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

/* Writes the policy to path (through a temporary file and a rename) or,
 * without one, to standard output. */
static int write_policy(const char *path, const struct sh_buf *b)
{
	char tmp[PATH_MAX];
	struct stat st;
	FILE *f;

	if (!path)
		return fwrite(b->p, 1, b->len, stdout) == b->len && !fflush(stdout) ? 0 : -EIO;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* A device or a pipe (/dev/null): written, never replaced. */
		f = fopen(path, "w");
		if (!f)
			return -errno;
		return fwrite(b->p, 1, b->len, f) == b->len && !fclose(f) ? 0 : -EIO;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (fwrite(b->p, 1, b->len, f) != b->len || fclose(f)) {
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

static void join_command(char **cmd, char *out, size_t n)
{
	out[0] = 0;
	for (size_t i = 0; cmd[i] && strlen(out) + 2 < n; i++)
		snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", cmd[i]);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';   /* it goes into a comment line */
}

/* From the records to the written policy; 0 or -1 after saying why. */
static int learn_write(struct learn_opts *o, char **cmd, char *records)
{
	struct sh_learn_in in = { .name = o->name, .from_name = o->run.from };
	struct sh_buf pol, rev;
	struct sh_jobj *recs = NULL;
	char command[1024];
	size_t n = 0, added;
	int err;

	if (parse_records(records, &recs, &n))
		goto fail;
	if (o->run.from && (!o->run.from_text || !o->run.from_text[0])) {
		fprintf(stderr, "sharnessctl: no text of policy %s to add to\n", o->run.from);
		goto fail;
	}
	in.workdir = o->workdir;
	join_command(cmd, command, sizeof(command));
	in.command = command;
	in.from_text = o->run.from_text;
	sh_buf_init(&pol);
	sh_buf_init(&rev);
	added = sh_learn_policy(&in, recs, n, &pol, &rev);
	err = pol.oom || rev.oom ? -ENOMEM : write_policy(o->output, &pol);
	if (err)
		fprintf(stderr, "sharnessctl: cannot write the policy to %s: %s\n",
			o->output ? o->output : "standard output", strerror(-err));
	else if (o->explain)
		fprintf(stderr, "sharnessctl: what the run used, as rules:\n%s", rev.p ? rev.p : "");
	if (!err)
		fprintf(stderr, "sharnessctl: learned %zu rule%s from %zu record%s; policy %s "
			"written to %s\n", added, added == 1 ? "" : "s", n, n == 1 ? "" : "s",
			o->name, o->output ? o->output : "standard output");
	sh_buf_free(&pol);
	sh_buf_free(&rev);
	for (size_t i = 0; i < n; i++)
		sh_jobj_free(&recs[i]);
	free(recs);
	return err ? -1 : 0;
fail:
	for (size_t i = 0; i < n; i++)
		sh_jobj_free(&recs[i]);
	free(recs);
	return -1;
}

int ctl_learn(int argc, char **argv)
{
	struct learn_opts o = {};
	char *records = NULL;
	int cmd, status, setup_failed;

	cmd = learn_parse(argc, argv, &o);
	if (cmd < 0)
		return LEARN_EXIT_SETUP;
	status = ctl_run_tree(&o.run, argv + cmd, &records, &setup_failed);
	if (setup_failed) {
		fprintf(stderr, "sharnessctl: nothing learned: the run could not be set up or "
			"ended\n");
		free(records);
		free(o.run.from_text);
		return status == 0 ? LEARN_EXIT_SETUP : status;
	}
	if (status)
		fprintf(stderr, "sharnessctl: the command exited with status %d: the policy allows "
			"what that run did\n", status);
	if (learn_write(&o, argv + cmd, records ? records : (char *)"")) {
		free(records);
		free(o.run.from_text);
		return LEARN_EXIT_SETUP;
	}
	free(records);
	free(o.run.from_text);
	return status;
}
