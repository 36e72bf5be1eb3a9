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
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "control.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

#define LOG_DEFAULT_FILE "/var/log/sharness/audit.jsonl"

struct log_opts {
	bool follow, json;
	bool cat;                    /* -o cat: no time in front of each line */
	const char *policy, *run, *hook, *action;
	char since[40], until[40];   /* record times, as the log writes them */
	long last;
	const char *file;
};

static bool field_is(const struct sh_jobj *obj, const char *key, const char *want)
{
	const char *v;

	if (!want)
		return true;
	v = sh_jobj_get(obj, key);
	return v && strcmp(v, want) == 0;
}

/* Does the record pass the filters? Times compare as text: the log
 * writes every one in the same fixed-width UTC form. */
static bool passes(const struct log_opts *o, const struct sh_jobj *obj)
{
	const char *t = sh_jobj_get(obj, "time");

	return field_is(obj, "policy", o->policy) && field_is(obj, "run", o->run) &&
	       field_is(obj, "hook", o->hook) && field_is(obj, "action", o->action) &&
	       (!o->since[0] || (t && strcmp(t, o->since) >= 0)) &&
	       (!o->until[0] || (t && strcmp(t, o->until) < 0));
}

/* The same on a raw line. (Lines that are not JSON are shown, and
 * reported, by show_line.) */
static bool wanted(const struct log_opts *o, const char *line, size_t len)
{
	struct sh_jobj obj = {};
	bool ok;

	if (sh_json_parse_flat(line, len, &obj) < 0)
		return true;
	ok = passes(o, &obj);
	sh_jobj_free(&obj);
	return ok;
}

/* --since/--until (sh_parse_when) into the log's own time form. */
static bool parse_when(const char *s, char *out, size_t n)
{
	uint64_t t;

	if (sh_parse_when(s, sh_now_ns(CLOCK_REALTIME), &t))
		return false;
	sh_fmt_time(out, n, t);
	return true;
}

static void show_line(const struct log_opts *o, const char *line, size_t len)
{
	struct sh_jobj obj = {};
	struct sh_buf text;

	if (sh_json_parse_flat(line, len, &obj) < 0) {
		fprintf(stderr, "sharnessctl: skipping a line that is not a JSON record\n");
		return;
	}
	if (!passes(o, &obj))
		goto out;
	if (o->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
		goto out;
	}
	sh_buf_init(&text);
	sh_audit_text(&text, &obj, o->cat);
	if (text.len)
		fwrite(text.p, 1, text.len, stdout);
	sh_buf_free(&text);
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
	case 'o':
		if (!strcmp(arg, "json")) {
			o->json = true;
		} else if (!strcmp(arg, "cat")) {
			o->cat = true;
		} else if (strcmp(arg, "short")) {
			fprintf(stderr, "sharnessctl: bad -o '%s' (want short, json or cat)\n", arg);
			return 1;
		}
		break;
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
	case 'r': o->run = arg; break;
	case 'H': o->hook = arg; break;
	case 'a':
		if (strcmp(arg, "deny") && strcmp(arg, "audit") && strcmp(arg, "learn")) {
			fprintf(stderr, "sharnessctl: bad --action '%s' (want deny, audit or "
				"learn)\n", arg);
			return 1;
		}
		o->action = arg;
		break;
	case 'S':
	case 'U':
		if (!parse_when(arg, opt == 'S' ? o->since : o->until, sizeof(o->since))) {
			fprintf(stderr, "sharnessctl: bad --%s '%s' (want 2026-11-30, "
				"2026-11-30T10:05, now, today, yesterday, or a time ago: "
				"90s, 10m, 2h, 3d, \"1 hour ago\", -1h)\n",
				opt == 'S' ? "since" : "until", arg);
			return 1;
		}
		break;
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
		{ "run", required_argument, 0, 'r' },
		{ "hook", required_argument, 0, 'H' },
		{ "action", required_argument, 0, 'a' },
		{ "since", required_argument, 0, 'S' },
		{ "until", required_argument, 0, 'U' },
		{ "output", required_argument, 0, 'o' },
		{ 0 }
	};
	struct log_opts o = { .last = -1 };
	char *path = NULL, *buf = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	if (ctl_getopt(argc, argv, "fjp:n:F:r:H:a:S:U:o:", opts, log_opt, &o))
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
