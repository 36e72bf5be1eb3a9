// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned state and its adoption: the generations under the pin directory,
 * reusing a previous daemon's maps, pinning ours, and the file that keeps
 * runtime tags across restarts.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer.h"
#include "pin.h"
#include "util.h"

/*
 * Everything the kernel side needs lives pinned under PIN_DIR/gen-N: maps
 * (map_NAME) and links (link_PROG). A daemon that dies leaves them
 * attached, so every tree stays held. The next daemon reuses the maps when
 * their layout is the same (tags, rules, task membership and unread events
 * carry over), attaches its own programs, pins them as generation N+1 and
 * only then removes generation N: there is no moment without enforcement.
 */

bool sh_pin_adopted_kind(const struct bpf_map *m)
{
	const char *name = bpf_map__name(m);
	size_t n = strlen(name);

	/* .rodata and .kconfig are constants of a build; .bss is state. The
	 * scratch maps are working memory of one program call. */
	if (strncmp(name, "scratch", 7) == 0)
		return false;
	return !bpf_map__is_internal(m) || (n >= 4 && strcmp(name + n - 4, ".bss") == 0);
}

static void pin_name(char *buf, size_t n, const char *dir, const char *kind, const char *name)
{
	snprintf(buf, n, "%s/%s_%s", dir, kind, name);
	for (char *p = buf + strlen(dir) + 1; *p; p++)
		if (*p == '.')
			*p = '_';
}

void sh_pin_path(char *buf, size_t n, const char *pin_dir, unsigned gen, const char *kind,
		 const char *name)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/gen-%u", pin_dir, gen);
	pin_name(buf, n, dir, kind, name);
}

unsigned sh_pin_newest_gen(const char *pin_dir)
{
	DIR *d = opendir(pin_dir);
	struct dirent *de;
	unsigned best = 0, g;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "gen-%u", &g) == 1 && g > best)
			best = g;
	closedir(d);
	return best;
}

/* PIN_DIR/gen-N, its path into dir, opened; NULL (errno) where it cannot be. */
static DIR *open_gen(const char *pin_dir, unsigned gen, char dir[PATH_MAX])
{
	snprintf(dir, PATH_MAX, "%s/gen-%u", pin_dir, gen);
	return opendir(dir);
}

int sh_pin_remove_gen(const char *pin_dir, unsigned gen)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	int err = 0;
	DIR *d = open_gen(pin_dir, gen, dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) < 0 && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) < 0 && !err)
		err = -errno;
	return err;
}

/* The recursion_misses of the program behind the pinned link at path (0
 * for a program of ids ours[]). */
static uint64_t link_unjudged(const char *path, const uint32_t *ours, size_t nours)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(li);
	uint64_t n = 0;
	int lfd, pfd;

	lfd = bpf_obj_get(path);
	if (lfd < 0 || bpf_obj_get_info_by_fd(lfd, &li, &len))
		goto fail;
	for (size_t i = 0; i < nours; i++)
		if (ours[i] == li.prog_id) {
			close(lfd);
			return 0;
		}
	pfd = bpf_prog_get_fd_by_id(li.prog_id);
	len = sizeof(pi);
	if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &pi, &len)) {
		if (pfd >= 0)
			close(pfd);
		goto fail;
	}
	n = pi.recursion_misses;
	close(pfd);
	close(lfd);
	return n;
fail:
	sh_log("cannot read the count of calls %s let through unjudged: %s", path, strerror(errno));
	if (lfd >= 0)
		close(lfd);
	return 0;
}

/* The same for a program on demand pinned without a link (dir/prog_NAME,
 * its link_NAME absent: detached); 0 where it is linked (counted by its
 * link) or one of ours[]. */
static uint64_t prog_unjudged(const char *dir, const char *pin, const uint32_t *ours, size_t nours)
{
	char path[PATH_MAX + 256];
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);
	uint64_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/link_%s", dir, pin + 5);
	if (access(path, F_OK) == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, pin);
	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len))
		sh_log("cannot read the count of calls %s let through unjudged: %s", path,
		       strerror(errno));
	else
		n = pi.recursion_misses;
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < nours; i++)
		if (ours[i] == pi.id)
			n = 0;
	return n;
}

/* Calls generation gen's programs let through unrun, summed over its links
 * and its programs on demand that have none. */
static uint64_t gen_unjudged(const char *pin_dir, unsigned gen, const uint32_t *ours,
			     size_t nours)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	uint64_t n = 0;
	DIR *d = open_gen(pin_dir, gen, dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, "link_", 5) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			n += link_unjudged(path, ours, nours);
		} else if (strncmp(de->d_name, "prog_", 5) == 0) {
			n += prog_unjudged(dir, de->d_name, ours, nours);
		}
	closedir(d);
	return n;
}

uint64_t sh_pin_remove_other_gens(const char *pin_dir, unsigned keep,
				  const struct sh_unjudged_seen *seen,
				  const uint32_t *ours, size_t nours)
{
	DIR *d = opendir(pin_dir);
	struct dirent *de;
	uint64_t unjudged = 0, n;
	unsigned g;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int err;

		if (sscanf(de->d_name, "gen-%u", &g) != 1 || g == keep)
			continue;
		n = gen_unjudged(pin_dir, g, ours, nours);
		if (seen && g == seen->gen)
			n = n > seen->reported ? n - seen->reported : 0;
		unjudged += n;
		err = sh_pin_remove_gen(pin_dir, g);
		if (err)
			sh_log("cannot remove %s/gen-%u: %s", pin_dir, g, strerror(-err));
	}
	closedir(d);
	return unjudged;
}

/* Counts restart, and the protected-inode filter starts unarmed (every
 * check looks up), rather than holding up adoption when their layout
 * changed. */
static bool map_counts_only(const struct bpf_map *m)
{
	return strcmp(bpf_map__name(m), "counters") == 0 ||
	       strcmp(bpf_map__name(m), "prot_filter") == 0;
}

/*
 * Maps the daemon's policy apply writes whole (rules, [net] rules, the
 * policy table): one this build adds may start empty, the apply at start
 * fills it. Any other map missing from the old generation (tags,
 * membership, the ring, .bss, protected inodes) is state that cannot be
 * rebuilt: adoption fails rather than drop it.
 */
static bool map_filled_by_apply(const struct bpf_map *m)
{
	const char *name = bpf_map__name(m);

	/* learned: what learning trees reported; empty, they report again.
	 * cg_outside, top_root, sb_mount: what the programs found (cgroups
	 * outside, a namespace's top root, file systems of one mount); empty,
	 * found again.
	 * prot_filter: empty, it is not armed: every check looks up
	 * protected_inodes until the daemon fills and arms it. dir_marks,
	 * dir_names: empty, no adopted policy table entry keeps SH_PF_MARKS
	 * (drop_dirs_flag) until the apply writes them. memos, unix_memo:
	 * empty, they are made again. pty_trees: empty, a pty a tree made before is no tree's: its
	 * slave is refused by name as a device, never opened to another.
	 * unix_binders: empty, a socket a tree bound before is no tree's:
	 * under [connect] scope = tree refused as an outsider's would be.
	 * sock_trees: empty, the same: under [connect] rules its tree may
	 * not rename it. making_notes (was sock_making): empty, a bind under
	 * way marks nothing. link_trees: empty, a link a tree made before is
	 * no tree's: followed as the kernel's own rules allow. exec_pins, pin_paths,
	 * pin_digests: written by the apply with the rules that name them.
	 * pin_verdicts: empty, an exec under way when the daemons changed
	 * is hashed again. cg_patterns, cg_classes: written by the apply;
	 * until then no cgroup is tagged as it is made (the apply tags those
	 * made before it). runtime_cgroups: a build without it made no
	 * container tag.
	 * pattern_names: a cgroup made before is named while it exists.
	 * dir_moves: not live (memos keyed to every rename) until this
	 * daemon's programs are attached. */
	return !strcmp(name, "rules") || !strcmp(name, "net_rules") || !strcmp(name, "policies") ||
	       !strcmp(name, "learned") || !strcmp(name, "cg_outside") ||
	       !strcmp(name, "top_root") || !strcmp(name, "sb_mount") ||
	       !strcmp(name, "prot_filter") || !strcmp(name, "cg_classes") ||
	       !strcmp(name, "dir_marks") || !strcmp(name, "dir_names") || !strcmp(name, "memos") ||
	       !strcmp(name, "unix_memo") || !strcmp(name, "pty_trees") ||
	       !strcmp(name, "unix_binders") || !strcmp(name, "sock_trees") ||
	       !strcmp(name, "making_notes") || !strcmp(name, "link_trees") ||
	       !strcmp(name, "exec_pins") || !strcmp(name, "pin_paths") ||
	       !strcmp(name, "pin_digests") || !strcmp(name, "pin_verdicts") ||
	       !strcmp(name, "cg_patterns") || !strcmp(name, "runtime_cgroups") ||
	       !strcmp(name, "pattern_names") || !strcmp(name, "dir_moves");
}

static bool layout_matches(int fd, const struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == bpf_map__type(m) &&
	       info.key_size == bpf_map__key_size(m) &&
	       info.value_size == bpf_map__value_size(m) &&
	       info.max_entries == bpf_map__max_entries(m) &&
	       info.map_flags == bpf_map__map_flags(m);
}

/*
 * The pinned map of generation dir to reuse for m: its fd, -1 when m starts
 * fresh (a map this build adds, or counters whose layout changed), or
 * -errno when the old state cannot be carried over (a state map that is
 * missing or laid out differently): then nothing is adopted.
 */
static int adoptable_fd(const char *dir, const struct bpf_map *m)
{
	char path[PATH_MAX + 256];
	int fd;

	pin_name(path, sizeof(path), dir, "map", bpf_map__name(m));
	fd = bpf_obj_get(path);
	if (fd < 0 && errno == ENOENT && map_filled_by_apply(m)) {
		sh_log("map %s is new in this build: it starts empty", bpf_map__name(m));
		return -1;
	}
	if (fd < 0)
		return -errno;
	if (layout_matches(fd, m))
		return fd;
	close(fd);
	if (map_counts_only(m)) {
		sh_log("pinned map %s has another layout: it starts afresh", path);
		return -1;
	}
	sh_log("pinned map %s does not match this build's layout", path);
	return -EINVAL;
}

/*
 * Directory markers that start empty under an adopted policy table (a
 * generation whose build had no dir_marks or dir_names, itself adopted
 * from one that had): no policy may claim them (SH_PF_MARKS) until the
 * apply writes them again, or its programs would memoize directories
 * above its rules; nor its fold markers (SH_PF_FOLD): without them a
 * name compared without case is refused wherever rules lie. The retired
 * flag of the retired map file_dirs goes too.
 */
static int drop_dirs_flag(int pol_fd)
{
	for (uint32_t idx = 0; idx < SH_SLOTS * SH_MAX_POLICIES; idx++) {
		struct sh_policy_conf c;

		if (bpf_map_lookup_elem(pol_fd, &idx, &c))
			return -errno;
		if (!(c.flags & (SH_PF_MARKS | SH_PF_FOLD | SH_PF_DIRS_RETIRED)))
			continue;
		c.flags &= ~(SH_PF_MARKS | SH_PF_FOLD | SH_PF_DIRS_RETIRED);
		if (bpf_map_update_elem(pol_fd, &idx, &c, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * Reuse the state maps of generation gen: every one, or none. A map the
 * policy apply fills that this build adds starts empty; the scratch maps
 * hold nothing at all.
 */
int sh_pin_adopt_maps(struct bpf_object *obj, const char *pin_dir, unsigned gen)
{
	char dir[PATH_MAX];
	struct bpf_map *m;
	int fds[48], n = 0, err = 0;

	snprintf(dir, sizeof(dir), "%s/gen-%u", pin_dir, gen);
	bpf_object__for_each_map(m, obj) {
		if (!sh_pin_adopted_kind(m))
			continue;
		if (n == (int)(sizeof(fds) / sizeof(fds[0]))) {
			err = -E2BIG;
			break;
		}
		fds[n] = adoptable_fd(dir, m);
		if (fds[n] < -1) {
			err = fds[n];
			break;
		}
		n++;
	}
	if (!err) {
		int i = 0, pol_fd = -1;
		bool dirs_fresh = false;

		bpf_object__for_each_map(m, obj) {
			if (!sh_pin_adopted_kind(m))
				continue;
			if (fds[i] >= 0)
				err = bpf_map__reuse_fd(m, fds[i]);
			if (!strcmp(bpf_map__name(m), "policies"))
				pol_fd = fds[i];
			if (!strcmp(bpf_map__name(m), "dir_marks") ||
			    !strcmp(bpf_map__name(m), "dir_names"))
				dirs_fresh |= fds[i] < 0;
			i++;
			if (err)
				break;
		}
		if (!err && dirs_fresh && pol_fd >= 0)
			err = drop_dirs_flag(pol_fd);
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return err;
}

int sh_pin_maps(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct bpf_map *m;
	int err;

	snprintf(dir, sizeof(dir), "%s/gen-%u", pin_dir, gen);
	err = sh_mkdir_p(dir, 0700);
	if (err)
		return err;
	bpf_object__for_each_map(m, *s->obj) {
		if (!sh_pin_adopted_kind(m))
			continue;
		pin_name(path, sizeof(path), dir, "map", bpf_map__name(m));
		err = bpf_map__pin(m, path);
		if (err)
			return err;
	}
	return 0;
}

int sh_pin_links(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen)
{
	char path[PATH_MAX + 256];

	/* The skeleton keeps one link per program, in order. */
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link *l = *s->progs[i].link;
		char dir[PATH_MAX];
		int err;

		/* A resumed program's link is pinned when it is made. */
		if (!l || bpf_link__pin_path(l))
			continue;
		snprintf(dir, sizeof(dir), "%s/gen-%u", pin_dir, gen);
		pin_name(path, sizeof(path), dir, "link", bpf_program__name(*s->progs[i].prog));
		err = bpf_link__pin(l, path);
		if (err)
			return err;
	}
	return 0;
}

void sh_pin_drop_links(const struct bpf_object_skeleton *s)
{
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link **l = s->progs[i].link;

		if (!*l)
			continue;
		/* The pin holds the link: unpinned first, the last fd then
		 * detaches it. */
		bpf_link__unpin(*l);
		bpf_link__destroy(*l);
		*l = NULL;
	}
}

/* The programs on demand (pin.h says why each is one). */
static const struct {
	const char *name;
	uint32_t need;
} demand[] = {
	{ "sh_socket_sendmsg", SH_PF_NET },
	{ "sh_socket_setsockopt", SH_PF_NET },
	{ "sh_socket_listen", SH_PF_NET },
	{ "sh_sctp_bind_connect", SH_PF_NET },
	{ "sh_exec_pin", SH_PF_EXEC_PINS },
};

uint32_t sh_pin_demand(const char *prog_name)
{
	for (size_t i = 0; i < sizeof(demand) / sizeof(demand[0]); i++)
		if (!strcmp(demand[i].name, prog_name))
			return demand[i].need;
	return 0;
}

int sh_pin_state(const char *pin_dir, unsigned *links, unsigned *tags)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	unsigned gen = sh_pin_newest_gen(pin_dir);
	struct dirent *de;
	DIR *d;
	int fd;

	*links = *tags = 0;
	if (!gen)
		return 0;
	d = open_gen(pin_dir, gen, dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		*links += strncmp(de->d_name, "link_", 5) == 0;
	closedir(d);
	snprintf(path, sizeof(path), "%s/map_tags", dir);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		__u64 key, next;
		void *prev = NULL;

		while (bpf_map_get_next_key(fd, prev, &next) == 0) {
			(*tags)++;
			key = next;
			prev = &key;
		}
		close(fd);
	}
	return gen;
}

int sh_pin_unload(const char *pin_dir)
{
	unsigned gen;
	int err = 0;

	while ((gen = sh_pin_newest_gen(pin_dir))) {
		int e = sh_pin_remove_gen(pin_dir, gen);

		if (e) {
			err = e;
			break;
		}
	}
	return err;
}

void sh_pin_save_tags(const char *state_path, const struct sh_tag_entry *tags, size_t n,
		      unsigned slot, char *const names[SH_MAX_POLICIES],
		      const struct sh_unjudged_seen *u)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (!state_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", state_path);
	f = fopen(tmp, "we");
	if (!f) {
		sh_log("cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!tags[i].from_policy)
			fprintf(f, "%llu\t%u\t%s\t%s\n", (unsigned long long)tags[i].cgid,
				tags[i].run_id, tags[i].policy, tags[i].path);
	/* Lines a tag reader skips: "policy SLOT ID NAME". */
	for (unsigned i = 0; i < SH_MAX_POLICIES; i++)
		if (names[i])
			fprintf(f, "policy\t%u\t%u\t%s\n", slot, i, names[i]);
	if (u && u->reported)
		fprintf(f, "unjudged\t%u\t%llu\n", u->gen, (unsigned long long)u->reported);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, state_path))
		sh_log("cannot write %s: %s", state_path, strerror(errno));
}

void sh_pin_restore_unjudged(const char *state_path, struct sh_unjudged_seen *u)
{
	char *line = NULL;
	unsigned long long v;
	size_t cap = 0;
	FILE *f = state_path ? fopen(state_path, "re") : NULL;

	memset(u, 0, sizeof(*u));
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "unjudged\t%u\t%llu", &u->gen, &v) == 2)
			u->reported = v;
	free(line);
	fclose(f);
}

void sh_pin_restore_names(const char *state_path, char *names[SH_SLOTS][SH_MAX_POLICIES])
{
	char *line = NULL, name[256];
	unsigned slot, id;
	size_t cap = 0;
	FILE *f = state_path ? fopen(state_path, "re") : NULL;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "policy\t%u\t%u\t%255[^\n]", &slot, &id, name) == 3 &&
		    slot < SH_SLOTS && id < SH_MAX_POLICIES && !names[slot][id])
			names[slot][id] = strdup(name);
	free(line);
	fclose(f);
}

/* Is the cgroup at path still the one of id cgid (not removed, not made
 * again under the same name)? */
static bool cgroup_is(const char *path, uint64_t cgid)
{
	uint64_t id;

	return sh_cgroup_id(path, &id) == 0 && id == cgid;
}

void sh_pin_restore_tags(const char *state_path, int tags_fd,
			 struct sh_tag_entry **tags, size_t *ntags)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen(state_path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		struct sh_cgroup_tag v;
		unsigned long long cgid;
		unsigned run_id;
		char *policy, *path, *save = NULL;
		struct sh_tag_entry *t;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llu\t%u\t", &cgid, &run_id) != 2)
			continue;
		strtok_r(line, "\t", &save);
		strtok_r(NULL, "\t", &save);
		policy = strtok_r(NULL, "\t", &save);
		path = strtok_r(NULL, "", &save);
		if (!policy || !path)
			continue;
		/* In the adopted map, or a cgroup still there under its id: a
		 * generation whose first apply failed left its fresh maps
		 * without the tags (and the state file with them). */
		if ((tags_fd < 0 || bpf_map_lookup_elem(tags_fd, &cgid, &v) != 0) &&
		    !cgroup_is(path, cgid))
			continue;
		t = realloc(*tags, (*ntags + 1) * sizeof(*t));
		if (!t)
			break;
		*tags = t;
		t = &t[*ntags];
		*t = (struct sh_tag_entry){ .cgid = cgid, .run_id = run_id,
			.policy = strdup(policy), .path = strdup(path) };
		if (!t->policy || !t->path) {
			free(t->policy);
			free(t->path);
			break;
		}
		sh_log("adopted tag %s (policy %s%s)", path, policy, run_id ? ", run" : "");
		(*ntags)++;
	}
	free(line);
	fclose(f);
}
