// SPDX-License-Identifier: GPL-2.0
/*
 * The directories trees made shared (shared_by_tree, bpf/lib/objects.h)
 * are kept by device, inode number and generation, which outlive the
 * inode in memory. Once a minute, while any is kept, the entries of file
 * systems mounted in no mount namespace of the host are dropped: a run's
 * private /tmp goes with its run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

struct u64_set {
	uint64_t *v;
	size_t n, cap;
};

static bool set_has(const struct u64_set *s, uint64_t x)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return true;
	return false;
}

/* 0, or -ENOMEM (the set unchanged). */
static int set_add(struct u64_set *s, uint64_t x)
{
	if (set_has(s, x))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

/* The devices of one mountinfo ("ID PARENT MAJOR:MINOR ..."), as the
 * kernel holds them (MKDEV: major << 20 | minor). */
static int add_mountinfo_devs(const char *path, struct u64_set *devs)
{
	unsigned major, minor;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%*u %*u %u:%u", &major, &minor) == 2)
			err = set_add(devs, (uint64_t)major << 20 | minor);
	free(line);
	fclose(f);
	return err;
}

/*
 * Every device mounted in a mount namespace some process of the host is
 * in, one mountinfo per namespace. Fails (nothing is dropped) where /proc
 * cannot be read or memory runs out; a process gone in between is passed.
 */
static int mounted_devs(struct u64_set *devs)
{
	struct u64_set seen = { 0 };
	struct dirent *d;
	char path[300];
	struct stat st;
	int err = 0, found = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		return -errno;
	while (!err && (d = readdir(proc))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", d->d_name);
		if (stat(path, &st) || set_has(&seen, st.st_ino))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/mountinfo", d->d_name);
		err = add_mountinfo_devs(path, devs);
		if (err == -ENOENT || err == -ESRCH) {
			err = 0;
			continue;
		}
		if (!err)
			err = set_add(&seen, st.st_ino);
		found += !err;
	}
	closedir(proc);
	free(seen.v);
	return err ? err : found ? 0 : -ENOENT;
}

void sh_enforcer_prune_shared(struct sh_enforcer *e)
{
	int fd = bpf_map__fd(e->skel->maps.shared_by_tree), err;
	struct sh_inode_id k, next, *gone = NULL;
	struct u64_set devs = { 0 };
	size_t n = 0, kept = 0;
	void *prev = NULL, *g;

	if (bpf_map_get_next_key(fd, NULL, &next))
		return;
	err = mounted_devs(&devs);
	if (err) {
		sh_log("shared directories: cannot list the mounted file systems (%s); "
		       "none dropped", strerror(-err));
		free(devs.v);
		return;
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (set_has(&devs, k.dev)) {
			kept++;
			continue;
		}
		g = realloc(gone, (n + 1) * sizeof(*gone));
		if (!g)
			break;
		gone = g;
		gone[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	if (n)
		sh_log("shared directories: dropped %zu of file systems no longer mounted, %zu kept",
		       n, kept);
	free(gone);
	free(devs.v);
}
