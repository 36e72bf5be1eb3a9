// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's own files, marked by inode so that no tree changes them
 * whatever its policy (hard links and other mounts of them included): the
 * policy directory and every policy file in it, the audit log's directory
 * and the log (which no tree reads either: other trees' records; nor any
 * file directly in that directory, where rotated logs lie), the
 * control socket's directory (socket, SOCKET.tags, SOCKET.lock), and,
 * against renaming them away, every directory above those. Called again
 * after a reload and after the log is reopened: the set is replaced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "util.h"

#define PROTECT_MAX (SH_MAX_PROTECTED)

static int protect_add(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *path, uint32_t flags)
{
	if (*n >= PROTECT_MAX)
		return -E2BIG;
	snprintf(paths[*n], PATH_MAX, "%s", path);
	own[*n].path = paths[*n];
	own[*n].flags = flags;
	(*n)++;
	return 0;
}

/* DIR itself (flags) and every directory above it (renaming refused). */
static int protect_dir(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *dir, uint32_t flags)
{
	char up[PATH_MAX], *slash;
	int err = protect_add(own, paths, n, dir, flags);

	snprintf(up, sizeof(up), "%s", dir);
	while (!err && (slash = strrchr(up, '/')) && slash != up) {
		*slash = 0;
		err = protect_add(own, paths, n, up, SH_PROT_NAME);
	}
	return err;
}

int sh_protect_own_files(struct sh_daemon *d)
{
	static struct sh_protected own[PROTECT_MAX];
	static char paths[PROTECT_MAX][PATH_MAX];
	const struct sh_policy_set *set = sh_enforcer_policies(d->enf);
	char dir[PATH_MAX], *slash;
	const char *failed = NULL;
	size_t n = 0;
	int err;

	err = protect_dir(own, paths, &n, d->policy_dir, SH_PROT_WRITE | SH_PROT_NAME);
	for (size_t i = 0; !err && i < set->n; i++)
		if (set->pols[i].file)   /* else a learning run's, made in memory */
			err = protect_add(own, paths, &n, set->pols[i].file, SH_PROT_WRITE | SH_PROT_NAME);
	for (int k = 0; !err && k < 2; k++) {
		snprintf(dir, sizeof(dir), "%s", k ? d->audit_path : d->socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = 0;
		/* The log's directory: its rotated logs hold the same records. */
		err = protect_dir(own, paths, &n, dir,
				  SH_PROT_WRITE | SH_PROT_NAME | (k ? SH_PROT_READ_IN : 0));
	}
	if (!err)
		err = protect_add(own, paths, &n, d->audit_path,
				  SH_PROT_WRITE | SH_PROT_READ | SH_PROT_NAME);
	if (!err)
		err = sh_enforcer_protect_set(d->enf, own, n, &failed);
	if (err)
		sh_log("cannot protect %s from the trees: %s", failed ? failed : "the daemon's files",
		       strerror(-err));
	return err;
}
