// SPDX-License-Identifier: GPL-2.0
/*
 * sharnessctl policy pin [--add] [--write] FILE...: the digests of the
 * files a policy's pinned exec allows name, as they are on this host now,
 * against the digests the policy pins: what a package upgrade changed,
 * for an operator to review before a reload. --add pins every exec allow
 * of a file too; --write puts the new digests into the file (each rule's
 * line, the rest of the file as it was; written beside it and renamed
 * over it, so a reader sees the old file or the new one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "digest.h"
#include "policy.h"
#include "util.h"

struct change {
	int line;
	const char *path;          /* as written in the rule */
	bool had;                  /* the line has a digest already */
	char hex[SH_DIGEST_STR];
};

/* The line with its digest replaced, or put after the rule's path; no
 * longer than the policy reader takes. */
static int edit_line(char *line, size_t cap, const struct change *c)
{
	char *eq = strchr(line, '='), *p, *d;
	char rest[4096];

	p = strstr(eq ? eq + 1 : line, c->path);
	if (!p)
		return -EINVAL;
	p += strlen(c->path);
	if (c->had) {
		d = strstr(p, "sha256:");
		if (!d || strlen(d) < SH_DIGEST_STR - 1)
			return -EINVAL;
		memcpy(d, c->hex, SH_DIGEST_STR - 1);
		return 0;
	}
	snprintf(rest, sizeof(rest), "%s", p);
	if ((size_t)(p - line) + 1 + strlen(c->hex) + strlen(rest) + 1 > cap)
		return -ENAMETOOLONG;
	sprintf(p, " %s%s", c->hex, rest);
	if (strcspn(line, "\n") > SH_POLICY_LINE_MAX)
		return -E2BIG;
	return 0;
}

/* Rewrites file with the changes: beside it (the file a link names),
 * with its mode and owner, then renamed over it and the rename synced. */
static int rewrite(const char *name, const struct change *cv, size_t n)
{
	char file[PATH_MAX], tmp[PATH_MAX + 16], line[8192], *slash;
	FILE *in = NULL, *out = NULL;
	struct stat st;
	int fd = -1, ln = 0, err = 0, dfd;

	if (!realpath(name, file) || !(in = fopen(file, "re")))
		return -errno;
	if (fstat(fileno(in), &st) < 0) {
		err = -errno;
		fclose(in);
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s.pin-XXXXXX", file);
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, st.st_mode & 07777) < 0 || fchown(fd, st.st_uid, st.st_gid) < 0 ||
	    !(out = fdopen(fd, "w"))) {
		err = -errno;
		goto out;
	}
	while (!err && fgets(line, sizeof(line), in)) {
		ln++;
		for (size_t i = 0; i < n && !err; i++)
			if (cv[i].line == ln)
				err = edit_line(line, sizeof(line), &cv[i]);
		if (!err && fputs(line, out) == EOF)
			err = -EIO;
	}
	if (!err && (fflush(out) || fsync(fd) || rename(tmp, file)))
		err = -errno;
	slash = strrchr(file, '/');
	if (!err && slash) {
		*slash = 0;
		dfd = open(*file ? file : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
out:
	if (out)
		fclose(out);
	else if (fd >= 0)
		close(fd);
	if (err && fd >= 0)
		unlink(tmp);
	fclose(in);
	return err;
}

/* One policy file: its report on stdout; 0, or 1 on a problem. */
static int pin_file(const char *file, bool add, bool write)
{
	struct sh_policy p;
	struct sh_errors errs = {};
	struct change *cv;
	size_t n = 0, changed = 0;
	int rc = 0, err;

	if (sh_policy_parse_file(file, &p, &errs)) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		sh_errors_free(&errs);
		return 1;
	}
	cv = calloc(p.nrules + 1, sizeof(*cv));
	for (size_t i = 0; cv && i < p.nrules; i++) {
		const struct sh_rule *r = &p.rules[i];
		char why[160], old[SH_DIGEST_STR];
		uint8_t d[SH_DIGEST_LEN];

		if (r->kind != SH_EXEC_ALLOW || r->dir || (!r->pinned && !add))
			continue;
		if (sh_digest_file(r->key, 0, 0, d, NULL, why, sizeof(why))) {
			printf("%s:%d: %s: cannot hash it: %s\n", file, r->line, r->path, why);
			rc = 1;
			continue;
		}
		cv[n] = (struct change){ .line = r->line, .path = r->path, .had = r->pinned };
		sh_digest_format(d, cv[n].hex);
		if (r->pinned && !memcmp(d, r->digest, SH_DIGEST_LEN)) {
			printf("%s:%d: %s: unchanged\n", file, r->line, r->path);
			continue;
		}
		if (r->pinned) {
			sh_digest_format(r->digest, old);
			printf("%s:%d: %s: changed: %s -> %s\n", file, r->line, r->path, old, cv[n].hex);
		} else {
			printf("%s:%d: %s: pinned: %s\n", file, r->line, r->path, cv[n].hex);
		}
		n++;
		changed++;
	}
	if (!cv) {
		fprintf(stderr, "sharnessctl: %s: out of memory\n", file);
		rc = 1;
	} else if (write && changed && !rc) {
		err = rewrite(file, cv, n);
		if (err) {
			fprintf(stderr, "sharnessctl: %s: cannot write the digests: %s (the file is "
				"unchanged)\n", file, err == -E2BIG ? "a line would be longer than the "
				"policy reader takes" : strerror(-err));
			rc = 1;
		} else {
			printf("%s: %zu digests written; `sharnessctl policy reload` puts them in "
			       "force\n", file, changed);
		}
	} else if (changed) {
		printf("%s: %zu digests differ from the file%s\n", file, changed,
		       write ? " (not written: see above)" : "; --write puts them in it");
	}
	free(cv);
	sh_policy_free(&p);
	return rc;
}

int sh_ctl_policy_pin(int argc, char **argv)
{
	bool add = false, write = false;
	int i = 0, rc = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--add")) {
			add = true;
		} else if (!strcmp(argv[i], "--write")) {
			write = true;
		} else {
			fprintf(stderr, "sharnessctl: policy pin: unknown option '%s'\n", argv[i]);
			return SH_EXIT_FAIL;
		}
	}
	if (i == argc) {
		fprintf(stderr, "sharnessctl: policy pin needs at least one FILE\n");
		return SH_EXIT_FAIL;
	}
	for (; i < argc; i++)
		rc |= pin_file(argv[i], add, write);
	return rc ? SH_EXIT_FAIL : 0;
}
