// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's own files, marked by inode so that no tree changes them
 * whatever its policy (hard links and other mounts of them included): the
 * policy directory and every policy file in it, the audit log's directory
 * and the log (which no tree reads either: other trees' records; nor any
 * file directly in that directory, where rotated logs lie), the
 * control socket's directory (socket, SOCKET.tags, SOCKET.lock), and,
 * against renaming them away, every directory above those. Called again
 * after a reload, after the log is reopened and whenever a name in the
 * log's directory comes or goes: the set is replaced.
 *
 * The files in the log's directory (rotated and compressed logs) are also
 * marked by inode, each as the live log is: the directory's mark goes by
 * the name used, an inode's by the file, so a hard link an outsider makes
 * elsewhere (a backup by hard links) is refused to the trees too while
 * the file is in the directory. Where the marks have no room for them
 * all, the rest keep the directory's mark alone, and the log says so.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "protect.h"
#include "util.h"

#define PROTECT_MAX (SH_MAX_PROTECTED)
#define LOG_FILES_MAX 65536    /* files of the log's directory looked at */

/* A new entry of own[] for path, or NULL where there is no room. */
static struct sh_protected *protect_new(struct sh_protected *own, char (*paths)[PATH_MAX],
					size_t *n, const char *path, uint32_t flags)
{
	struct sh_protected *p;

	if (*n >= PROTECT_MAX)
		return NULL;
	p = &own[*n];
	snprintf(paths[*n], PATH_MAX, "%s", path);
	memset(p, 0, sizeof(*p));
	p->path = paths[(*n)++];
	p->flags = flags;
	return p;
}

static int protect_add(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *path, uint32_t flags)
{
	for (size_t i = 0; i < *n; i++)
		if (!own[i].keyed && !strcmp(own[i].path, path)) {
			own[i].flags |= flags;  /* a directory above two of ours */
			return 0;
		}
	return protect_new(own, paths, n, path, flags) ? 0 : -E2BIG;
}

/* A file whose inode is already known (ino, dev): it is marked as found,
 * not looked up by name again. */
static int protect_key(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
		       const char *path, uint32_t flags, uint64_t ino, uint32_t dev)
{
	struct sh_protected *p = protect_new(own, paths, n, path, flags);

	if (!p)
		return -E2BIG;
	p->keyed = true;
	p->ino = ino;
	p->dev = dev;
	return 0;
}

struct log_file {
	uint64_t ino;
	uint32_t dev;
	int64_t mtime;
	char *name;
};

static int newest_first(const void *a, const void *b)
{
	const struct log_file *x = a, *y = b;

	return x->mtime < y->mtime ? 1 : x->mtime > y->mtime ? -1 : strcmp(x->name, y->name);
}

/*
 * Every regular file directly in the log's directory dir but the live log
 * (live_ino, live_dev), marked as the live log is, newest first while the
 * marks have room; *left: how many had none. Each is found by the name
 * read from the directory, once, without following a link: its inode is
 * what gets marked, whatever the name holds later. -errno: the directory
 * could not be read (its own mark still covers the files in it by name).
 */
static int protect_log_files(struct sh_protected *own, char (*paths)[PATH_MAX], size_t *n,
			     const char *dir, uint64_t live_ino, uint32_t live_dev, size_t *left)
{
	struct sh_mnt_dev cache = { 0 };
	struct log_file *f = NULL;
	size_t nf = 0, cap = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	int err = 0;

	*left = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct statx stx;

		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		if (statx(dirfd(d), de->d_name, AT_SYMLINK_NOFOLLOW,
			  STATX_TYPE | STATX_INO | STATX_MTIME | STATX_MNT_ID, &stx) ||
		    !S_ISREG(stx.stx_mode))
			continue;       /* gone already, or not a file */
		if (nf >= LOG_FILES_MAX) {
			(*left)++;
			continue;
		}
		if (nf == cap) {
			struct log_file *g = realloc(f, (cap ? cap * 2 : 64) * sizeof(*f));

			if (!g) {
				err = -ENOMEM;
				break;
			}
			f = g;
			cap = cap ? cap * 2 : 64;
		}
		f[nf].ino = stx.stx_ino;
		f[nf].mtime = stx.stx_mtime.tv_sec;
		f[nf].name = strdup(de->d_name);
		if (!f[nf].name) {
			err = -ENOMEM;
			break;
		}
		if (!(stx.stx_mask & STATX_MNT_ID) ||
		    sh_kernel_dev(stx.stx_mnt_id, &f[nf].dev, &cache)) {
			free(f[nf].name);   /* its device cannot be told */
			(*left)++;
			continue;
		}
		if (f[nf].ino == live_ino && f[nf].dev == live_dev) {
			free(f[nf].name);   /* the live log, marked already */
			continue;
		}
		nf++;
	}
	closedir(d);
	if (!err) {
		qsort(f, nf, sizeof(*f), newest_first);
		for (size_t i = 0; i < nf; i++) {
			char path[PATH_MAX];

			if (*n >= PROTECT_MAX ||
			    snprintf(path, sizeof(path), "%s/%s", dir, f[i].name) >= (int)sizeof(path) ||
			    protect_key(own, paths, n, path, SH_PROT_WRITE | SH_PROT_READ | SH_PROT_NAME,
					f[i].ino, f[i].dev))
				(*left)++;
		}
	}
	for (size_t i = 0; i < nf; i++)
		free(f[i].name);
	free(f);
	return err;
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
	const uint32_t log_flags = SH_PROT_WRITE | SH_PROT_READ | SH_PROT_NAME;
	char dir[PATH_MAX];
	static size_t was_left;
	static int was_scan_err;
	const char *failed = NULL;
	size_t n = 0, left = 0;
	uint64_t live_ino = 0;
	uint32_t live_dev = 0;
	int err, scan_err = 0;

	err = protect_dir(own, paths, &n, d->policy_dir, SH_PROT_WRITE | SH_PROT_NAME);
	for (size_t i = 0; !err && i < set->n; i++)
		if (set->pols[i].file)   /* else a learning run's, made in memory */
			err = protect_add(own, paths, &n, set->pols[i].file, SH_PROT_WRITE | SH_PROT_NAME);
	for (int k = 0; !err && k < 2; k++) {
		sh_dir_of(k ? d->audit_path : d->socket_path, dir, sizeof(dir));
		/* The log's directory: its rotated logs hold the same records. */
		err = protect_dir(own, paths, &n, dir,
				  SH_PROT_WRITE | SH_PROT_NAME | (k ? SH_PROT_READ_IN : 0));
	}
	/* The live log: the file the daemon writes, by its descriptor (its
	 * name may already be a rotated one's, or gone). */
	if (!err && d->audit.fd >= 0 &&
	    sh_kernel_ino_at(d->audit.fd, "", AT_EMPTY_PATH, &live_ino, &live_dev, NULL) == 0)
		err = protect_key(own, paths, &n, d->audit_path, log_flags, live_ino, live_dev);
	else if (!err)
		err = protect_add(own, paths, &n, d->audit_path, log_flags);
	/* dir: the log's directory, the last one above. */
	if (!err)
		scan_err = protect_log_files(own, paths, &n, dir, live_ino, live_dev, &left);
	if (!err)
		err = sh_enforcer_protect_set(d->enf, own, n, &failed);
	if (err)
		sh_log("cannot protect %s from the trees: %s", failed ? failed : "the daemon's files",
		       strerror(-err));
	if (!err && scan_err && scan_err != was_scan_err)
		sh_log("cannot list %s: %s; the files in it are refused to the trees by name only",
		       dir, strerror(-scan_err));
	if (!err && left && left != was_left)
		sh_log("%zu files in %s are refused to the trees by name only: the daemon's marks "
		       "(%d) have no room for them", left, dir, PROTECT_MAX);
	if (!err) {
		was_scan_err = scan_err;
		was_left = left;
	}
	return err;
}

/*
 * Names that come and go in the log's directory (a rotation, logrotate's
 * compressed copies, a file an operator puts there): the files in it are
 * marked again, so that each is refused to the trees by inode from then
 * on. The watch is set before the first marks, so nothing made in between
 * is missed, and set again on the directory's path after each batch of its
 * events and each SIGHUP, in case the directory itself was replaced.
 * Without it the files are marked at the next SIGHUP or reload, and
 * refused by name until then all the same: said, not fatal.
 */
void sh_protect_watch(struct sh_daemon *d)
{
	char dir[PATH_MAX];

	sh_dir_of(d->audit_path, dir, sizeof(dir));
	if (d->log_wfd < 0) {
		d->log_wfd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		/* Made after the loop began (the first one failed): the loop
		 * hears it too, or re-marking would stop with no word. */
		if (d->log_wfd >= 0 && d->efd >= 0 &&
		    epoll_ctl(d->efd, EPOLL_CTL_ADD, d->log_wfd,
			      &(struct epoll_event){ .events = EPOLLIN, .data.fd = d->log_wfd })) {
			close(d->log_wfd);
			d->log_wfd = -1;
		}
	}
	if (d->log_wfd >= 0 &&
	    inotify_add_watch(d->log_wfd, dir, IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
						   IN_ONLYDIR) >= 0) {
		d->log_watch_said = false;
		return;
	}
	if (!d->log_watch_said)
		sh_log("cannot watch %s (%s): a file that appears in it is marked by inode at the "
		       "next SIGHUP or reload, and refused to the trees by name until then", dir,
		       strerror(errno));
	d->log_watch_said = true;
}

void sh_protect_on_watch(struct sh_daemon *d)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(d->log_wfd, buf, sizeof(buf)) > 0)
		;
	sh_protect_watch(d);
	sh_protect_own_files(d);   /* logged if it fails */
}
