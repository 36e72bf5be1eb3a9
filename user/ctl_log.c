// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * sharnessctl log: shows the audit log, as the daemon names it or --file
 * says, record by record: readable, or as its JSON lines (--json); only a
 * policy's records (--policy); only the last N (-n); and follows it (-f)
 * across rotation and truncation.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

#define LOG_DEFAULT_FILE "/var/log/sharness/audit.jsonl"

struct log_opts {
	bool follow, json;
	const char *policy;
	long last;
	const char *file;
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

/* A violation on one line: time, policy, action, hook, comm[pid], target
 * and the reason if any. */
static void show_violation(const struct sh_jobj *obj, const char *pol)
{
	const char *comm = sh_jobj_get(obj, "comm"), *pid = sh_jobj_get(obj, "pid");
	const char *reason = sh_jobj_get(obj, "reason");

	printf("%s %s %s %s %s[%s] %s%s%s%s\n", sh_jobj_get(obj, "time"),
	       pol ? pol : "?", sh_jobj_get(obj, "action"), sh_jobj_get(obj, "hook"),
	       comm ? comm : "?", pid ? pid : "?", sh_jobj_get(obj, "target"),
	       reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
}

/* Any other event: time, event, then its other fields as key=value. */
static void show_event(const struct sh_jobj *obj, const char *ev)
{
	printf("%s -- %s", sh_jobj_get(obj, "time"), ev ? ev : "?");
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->kv[i].key, "time") && strcmp(obj->kv[i].key, "event"))
			printf(" %s=%s", obj->kv[i].key, obj->kv[i].val);
	printf("\n");
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
	if (ev && strcmp(ev, "violation") == 0)
		show_violation(&obj, pol);
	else
		show_event(&obj, ev);
out:
	fflush(stdout);
	sh_jobj_free(&obj);
}

/* Shows every line from here to the end of the file. */
static void show_rest(const struct log_opts *o, FILE *f, char **buf, size_t *cap)
{
	ssize_t len;

	while ((len = getline(buf, cap, f)) > 0) {
		if ((*buf)[len - 1] == '\n')
			(*buf)[--len] = 0;
		if (len)
			show_line(o, *buf, len);
	}
}

/* Shows the last o->last lines that pass --policy. Returns -1 when out of
 * memory. */
static int show_last(const struct log_opts *o, FILE *f, char **buf, size_t *cap)
{
	size_t ringn = 0, ringpos = 0;
	char **ring;
	ssize_t len;

	ring = calloc(o->last ? o->last : 1, sizeof(*ring));
	if (!ring)
		return -1;
	while ((len = getline(buf, cap, f)) > 0) {
		if ((*buf)[len - 1] == '\n')
			(*buf)[--len] = 0;
		if (!len || !o->last || !wanted(o, *buf, len))
			continue;
		free(ring[ringpos]);
		ring[ringpos] = strdup(*buf);
		ringpos = (ringpos + 1) % o->last;
		if (ringn < (size_t)o->last)
			ringn++;
	}
	for (size_t i = 0; i < ringn; i++) {
		char *l = ring[(ringpos + o->last - ringn + i) % o->last];

		if (l)
			show_line(o, l, strlen(l));
	}
	for (long i = 0; i < o->last; i++)
		free(ring[i]);
	free(ring);
	return 0;
}

/* After a pause at the end of the file: the file at the path was replaced
 * (rotation: finish the old one, go on with the new one) or truncated
 * (start again from its beginning). */
static void follow_rotation(const struct log_opts *o, FILE **f, char **buf, size_t *cap)
{
	struct stat st, now;

	if (fstat(fileno(*f), &st) == 0 && stat(o->file, &now) == 0 &&
	    (now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
		FILE *nf = fopen(o->file, "r");

		if (nf) {
			/* The last read hit end of file; what was appended
			 * since, before the rename, is still to be shown. */
			clearerr(*f);
			show_rest(o, *f, buf, cap);
			fclose(*f);
			*f = nf;
		}
	} else if (fstat(fileno(*f), &st) == 0 && st.st_size < ftell(*f)) {
		fseek(*f, 0, SEEK_SET);
	}
}

/* Shows each line as it is completed, for ever. */
static void follow(const struct log_opts *o, FILE **f, char **buf, size_t *cap)
{
	for (;;) {
		long pos = ftell(*f);
		ssize_t len;

		clearerr(*f);
		len = getline(buf, cap, *f);
		if (len > 0 && (*buf)[len - 1] == '\n') {
			(*buf)[--len] = 0;
			if (len)
				show_line(o, *buf, len);
			continue;
		}
		if (len > 0)
			fseek(*f, pos, SEEK_SET); /* a partial line: wait for the rest */
		usleep(200000);
		follow_rotation(o, f, buf, cap);
	}
}

static int log_opt(int opt, const char *arg, void *ctx)
{
	struct log_opts *o = ctx;

	switch (opt) {
	case 'f': o->follow = true; break;
	case 'j': o->json = true; break;
	case 'p': o->policy = arg; break;
	case 'n': {
		char *end;

		errno = 0;
		o->last = strtol(arg, &end, 10);
		if (errno || *end || !*arg || o->last < 0) {
			fprintf(stderr, "sharnessctl: bad -n '%s' (want a number of records)\n", arg);
			return 1;
		}
		break;
	}
	case 'F': o->file = arg; break;
	}
	return 0;
}

/* Opens --file, else the log the daemon writes, else the default path.
 * *path holds what the daemon named, for the caller to free. */
static FILE *log_open(struct log_opts *o, char **path)
{
	FILE *f;

	if (!o->file) {
		const char *req[] = { "audit-path" };

		if (sh_ctl_call_capture(ctl_sock_path, 1, req, path, NULL) == 0 && **path) {
			(*path)[strcspn(*path, "\n")] = 0;
			o->file = *path;
		} else {
			o->file = LOG_DEFAULT_FILE;
		}
	}
	f = fopen(o->file, "r");
	if (!f)
		fprintf(stderr, "sharnessctl: cannot open %s: %s\n", o->file, strerror(errno));
	return f;
}

int ctl_log(int argc, char **argv)
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
	char *path = NULL, *buf = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	if (ctl_getopt(argc, argv, "fjp:n:F:", opts, log_opt, &o))
		return SH_EXIT_FAIL;
	f = log_open(&o, &path);
	if (!f) {
		free(path);
		return SH_EXIT_FAIL;
	}
	if (o.last < 0)
		show_rest(&o, f, &buf, &cap);
	else if (show_last(&o, f, &buf, &cap) < 0)
		ret = SH_EXIT_FAIL;
	if (!ret && o.follow)
		follow(&o, &f, &buf, &cap);
	free(buf);
	fclose(f);
	free(path);
	return ret;
}
