// SPDX-License-Identifier: GPL-2.0
/*
 * Resuming a previous daemon's programs. Verifying every program takes
 * most of a daemon's start (seconds on a fast host, about ten under
 * emulation), and a restart of the same build on the same kernel would
 * verify the very programs its predecessor left attached. So each
 * generation is marked with the build that pinned it (the BPF object's
 * digest, made when it was built, which of its programs this kernel
 * loads, and the constants set before the load), and a daemon that finds
 * its own mark takes over the programs and links: it pins the links as
 * its own generation and loads nothing but its constants. It resumes
 * only what it can judge to be its own: every program it would load,
 * linked at that program's pin on that program's hook (or, a program on
 * demand that no policy needed, pinned as a program made for that hook:
 * demand.c), an LSM program of its name that no other pin shares, reading and writing no map but the
 * state maps it adopted (a program on other maps would not see the rules
 * this daemon writes) and one read-only constants or scratch map of each
 * name. Anything else is a full load, as before: the check costs a start
 * a few hundred system calls and a read of the kernel's BTF.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_digest.h"
#include "pin.h"
#include "resume.h"
#include "sharness.skel.h"
#include "util.h"

/* PIN_DIR/gen-N/build: which build pinned the generation. */
struct build_mark {
	__u32 version;          /* of this layout: BUILD_MARK_VERSION */
	__u32 pad;
	char digest[64];        /* SH_BPF_DIGEST: sha256 of the BPF object */
	__u64 loaded[2];        /* bit i: the skeleton's program i is loaded */
	__u64 constants;        /* what the daemon set in .rodata, but its key */
};

#define BUILD_MARK_VERSION 1

_Static_assert(SH_MAX_PROGS <= 128, "build_mark.loaded holds 128 programs");

/* FNV-1a of the constants a daemon sets before the load (sh_probe_open),
 * its random key left out: each generation keeps its own. */
static __u64 constants_of(const struct sharness_bpf *skel)
{
	struct sharness_bpf__rodata c = *skel->rodata;

	c.memo_key = 0;
	return sh_fnv1a(SH_FNV_BASIS, &c, sizeof(c));
}

/* The mark of this build: the programs it loads are those set to load,
 * or, resumed (r->on: none set to load), those it took over. */
static void build_mark_of(const struct sharness_bpf *skel, const struct sh_resumed *r,
			  struct build_mark *b)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	memset(b, 0, sizeof(*b));
	b->version = BUILD_MARK_VERSION;
	b->constants = constants_of(skel);
	memcpy(b->digest, SH_BPF_DIGEST, sizeof(b->digest));
	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++)
		if (r && r->on ? r->prog_fd[i] >= 0 : bpf_program__autoload(*s->progs[i].prog))
			b->loaded[i / 64] |= 1ull << (i % 64);
}

static void build_path(char *buf, size_t n, const char *pin_dir, unsigned gen)
{
	snprintf(buf, n, "%s/gen-%u/build", pin_dir, gen);
}

int sh_resume_mark(const struct sharness_bpf *skel, const struct sh_resumed *r,
		   const char *pin_dir, unsigned gen)
{
	char path[PATH_MAX + 16];
	struct build_mark b;
	__u32 zero = 0;
	int fd, err = 0;

	build_mark_of(skel, r, &b);
	build_path(path, sizeof(path), pin_dir, gen);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sh_build", sizeof(zero), sizeof(b), 1, NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, &b, BPF_ANY) || bpf_map_freeze(fd) ||
	    bpf_obj_pin(fd, path))
		err = -errno;
	close(fd);
	return err;
}

static bool marked_ours(const struct sharness_bpf *skel, const char *pin_dir, unsigned gen)
{
	char path[PATH_MAX + 16];
	struct build_mark want, have;
	__u32 zero = 0;
	bool ours;
	int fd;

	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	build_path(path, sizeof(path), pin_dir, gen);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		sh_log("generation %u has no build mark (%s): loading the programs", gen,
		       strerror(errno));
		return false;
	}
	build_mark_of(skel, NULL, &want);
	/* Read only a mark of this layout (another build's may be larger). */
	ours = bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 && mi.type == BPF_MAP_TYPE_ARRAY &&
	       mi.key_size == sizeof(zero) && mi.value_size == sizeof(have) &&
	       mi.max_entries == 1 && bpf_map_lookup_elem(fd, &zero, &have) == 0 &&
	       !memcmp(&want, &have, sizeof(want));
	close(fd);
	if (!ours)
		sh_log("generation %u was pinned by another build: loading the programs", gen);
	return ours;
}

void sh_resume_init(struct sh_resumed *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < SH_MAX_PROGS; i++)
		r->prog_fd[i] = r->link_fd[i] = -1;
}

void sh_resume_release(struct sh_resumed *r)
{
	for (int i = 0; i < SH_MAX_PROGS; i++) {
		if (r->prog_fd[i] >= 0)
			close(r->prog_fd[i]);
		if (r->link_fd[i] >= 0)
			close(r->link_fd[i]);
	}
	sh_resume_init(r);
}

/* What a program taken over must keep to (sh_resume_check). */
struct judge {
	const struct bpf_object_skeleton *s;
	struct btf *vmlinux;            /* the hooks' ids */
	__u32 adopted[64];              /* the state maps' ids */
	size_t nadopted;
	struct {                        /* the constants and scratch, one of each */
		char name[BPF_OBJ_NAME_LEN];
		__u32 id;
	} own[16];
	size_t nown;
};

static bool id_in(__u32 id, const __u32 *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Whether the map of id is one of the build's own read-only constants or
 * its scratch (not adopted: each generation has its own), by its name,
 * and the one every program taken over uses under that name: a program
 * on a writable map of its own would not see what the daemon writes.
 */
static bool own_map(struct judge *j, __u32 id)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	struct bpf_map *m;
	bool found = false;
	int fd = bpf_map_get_fd_by_id(id);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	if (strncmp(mi.name, "scratch", 7) && !(mi.map_flags & BPF_F_RDONLY_PROG))
		return false;
	bpf_object__for_each_map(m, *j->s->obj)
		if (!sh_pin_adopted_kind(m) &&
		    !strncmp(mi.name, bpf_map__name(m), sizeof(mi.name) - 1))
			found = true;
	if (!found)
		return false;
	for (size_t k = 0; k < j->nown; k++)
		if (!strcmp(j->own[k].name, mi.name))
			return j->own[k].id == id;
	if (j->nown == sizeof(j->own) / sizeof(j->own[0]))
		return false;
	memcpy(j->own[j->nown].name, mi.name, sizeof(mi.name));
	j->own[j->nown++].id = id;
	return true;
}

/* Whether link fd (info li) is on program p's own hook: its section,
 * lsm/HOOK, an LSM link on bpf_lsm_HOOK; tp_btf/TP (bpf/cgroup.c), a raw
 * tracepoint link on TP; fentry/FN and fexit/FN, a tracing link on FN's
 * entry or exit. */
static bool on_its_hook(const struct judge *j, const struct bpf_program *p, int fd,
			const struct bpf_link_info *li)
{
	const char *sec = bpf_program__section_name(p), *hook = strchr(sec, '/');
	char fn[128];

	if (hook && (!strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6)))
		return li->type == BPF_LINK_TYPE_TRACING &&
		       li->tracing.attach_type ==
		       (strncmp(sec, "fentry/", 7) ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY) &&
		       btf__find_by_name_kind(j->vmlinux, hook + 1, BTF_KIND_FUNC) ==
		       (int)li->tracing.target_btf_id;
	if (hook && !strncmp(sec, "tp_btf/", 7)) {
		struct bpf_link_info ti = {};
		__u32 len = sizeof(ti);

		ti.raw_tracepoint.tp_name = (__u64)(unsigned long)fn;
		ti.raw_tracepoint.tp_name_len = sizeof(fn);
		return li->type == BPF_LINK_TYPE_RAW_TRACEPOINT &&
		       !bpf_obj_get_info_by_fd(fd, &ti, &len) && !strcmp(fn, hook + 1);
	}
	if (!hook || snprintf(fn, sizeof(fn), "bpf_lsm_%s", hook + 1) >= (int)sizeof(fn))
		return false;
	return li->type == BPF_LINK_TYPE_TRACING && li->tracing.attach_type == BPF_LSM_MAC &&
	       btf__find_by_name_kind(j->vmlinux, fn, BTF_KIND_FUNC) ==
	       (int)li->tracing.target_btf_id;
}

/*
 * Program i (its fd in r) judged as sh_resume_check says: this build's
 * program of its kind and name, no other program's, on no map but the
 * adopted state and its own constants and scratch. path: the pin, for the
 * log.
 */
static bool judge_prog(struct judge *j, int i, const char *path, struct sh_resumed *r)
{
	const struct bpf_program *p = *j->s->progs[i].prog;
	const char *name = bpf_program__name(p);
	struct bpf_prog_info pi = {};
	__u32 len, maps[64];
	const char *why = NULL;

	len = sizeof(pi);
	pi.nr_map_ids = sizeof(maps) / sizeof(maps[0]);
	pi.map_ids = (__u64)(unsigned long)maps;
	if (bpf_obj_get_info_by_fd(r->prog_fd[i], &pi, &len)) {
		why = strerror(errno);
		goto fail;
	}
	for (int k = 0; k < i; k++)
		if (r->prog_fd[k] >= 0 && r->prog_id[k] == pi.id) {
			why = "its program is another's";
			goto fail;
		}
	/* lsm/ and lsm.s/ (sleepable): LSM; fentry/, fexit/ and tp_btf/: tracing. */
	if (pi.type != (strncmp(bpf_program__section_name(p), "lsm", 3) ? BPF_PROG_TYPE_TRACING
									 : BPF_PROG_TYPE_LSM) ||
	    strncmp(pi.name, name, sizeof(pi.name) - 1)) {
		why = "another program";
		goto fail;
	}
	if (pi.nr_map_ids > sizeof(maps) / sizeof(maps[0])) {
		why = "too many maps";
		goto fail;
	}
	for (__u32 k = 0; k < pi.nr_map_ids; k++)
		if (!id_in(maps[k], j->adopted, j->nadopted) && !own_map(j, maps[k])) {
			why = "it uses a map that is not the pinned state";
			goto fail;
		}
	r->prog_id[i] = pi.id;
	r->base[i] = pi.recursion_misses;
	return true;
fail:
	sh_log("cannot resume %s (%s): loading the programs", path, why);
	return false;
}

/*
 * Program i, on demand and detached (demand.c), from its program pin of
 * generation gen: an LSM program made for its own hook (the kernel's
 * attach_btf_id, bpf_lsm_HOOK), then judged as a linked one.
 */
static bool take_unlinked(struct judge *j, int i, const char *pin_dir, unsigned gen,
			  struct sh_resumed *r)
{
	const struct bpf_program *p = *j->s->progs[i].prog;
	const char *sec = bpf_program__section_name(p), *hook = strchr(sec, '/');
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);
	char path[PATH_MAX + 256], fn[128];

	sh_pin_path(path, sizeof(path), pin_dir, gen, "prog", bpf_program__name(p));
	r->prog_fd[i] = bpf_obj_get(path);
	if (r->prog_fd[i] < 0 || bpf_obj_get_info_by_fd(r->prog_fd[i], &pi, &len)) {
		sh_log("cannot resume %s (%s): loading the programs", path, strerror(errno));
		return false;
	}
	if (!hook || strncmp(sec, "lsm", 3) ||
	    snprintf(fn, sizeof(fn), "bpf_lsm_%s", hook + 1) >= (int)sizeof(fn) ||
	    pi.type != BPF_PROG_TYPE_LSM ||
	    btf__find_by_name_kind(j->vmlinux, fn, BTF_KIND_FUNC) != (int)pi.attach_btf_id) {
		sh_log("cannot resume %s (not a program for its hook): loading the programs", path);
		return false;
	}
	return judge_prog(j, i, path, r);
}

/* Program i's link pinned in generation gen, judged (see sh_resume_check);
 * on success its link and program fds are in r (a program on demand
 * detached: its program alone). */
static bool take_prog(struct judge *j, int i, const char *pin_dir, unsigned gen,
		      struct sh_resumed *r)
{
	const struct bpf_program *p = *j->s->progs[i].prog;
	const char *name = bpf_program__name(p);
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	char path[PATH_MAX + 256];
	const char *why = NULL;

	sh_pin_path(path, sizeof(path), pin_dir, gen, "link", name);
	r->link_fd[i] = bpf_obj_get(path);
	/* A program on demand detached (demand.c): its program's own pin. */
	if (r->link_fd[i] < 0 && errno == ENOENT && sh_pin_demand(name))
		return take_unlinked(j, i, pin_dir, gen, r);
	if (r->link_fd[i] < 0 || bpf_obj_get_info_by_fd(r->link_fd[i], &li, &len)) {
		why = strerror(errno);
		goto fail;
	}
	if (!on_its_hook(j, p, r->link_fd[i], &li)) {
		why = "not a link on its hook";
		goto fail;
	}
	r->prog_fd[i] = bpf_prog_get_fd_by_id(li.prog_id);
	if (r->prog_fd[i] < 0) {
		why = strerror(errno);
		goto fail;
	}
	return judge_prog(j, i, path, r);
fail:
	sh_log("cannot resume %s (%s): loading the programs", path, why);
	return false;
}

/* The ids of the maps adopted (every state map must be); 0 or -1. */
static int adopted_ids(struct judge *j)
{
	const size_t max = sizeof(j->adopted) / sizeof(j->adopted[0]);
	struct bpf_map *m;

	j->nadopted = 0;
	bpf_object__for_each_map(m, *j->s->obj) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		if (!sh_pin_adopted_kind(m))
			continue;
		/* Before the load, a map has an fd only if it was adopted. */
		if (bpf_map__fd(m) < 0) {
			sh_log("map %s starts empty: loading the programs", bpf_map__name(m));
			return -1;
		}
		if (j->nadopted == max || bpf_obj_get_info_by_fd(bpf_map__fd(m), &mi, &len))
			return -1;
		j->adopted[j->nadopted++] = mi.id;
	}
	return 0;
}

bool sh_resume_check(const struct sharness_bpf *skel, const char *pin_dir, unsigned gen,
		     struct sh_resumed *r)
{
	struct judge j = { .s = skel->skeleton };
	const struct bpf_object_skeleton *s = j.s;
	struct bpf_map *m;
	bool ok;

	sh_resume_init(r);
	if (s->prog_cnt > SH_MAX_PROGS || !marked_ours(skel, pin_dir, gen) || adopted_ids(&j))
		return false;
	j.vmlinux = btf__load_vmlinux_btf();
	ok = j.vmlinux != NULL;
	if (!ok)
		sh_log("cannot read the kernel's BTF: %s: loading the programs", strerror(errno));
	for (int i = 0; ok && i < s->prog_cnt; i++)
		if (bpf_program__autoload(*s->progs[i].prog))
			ok = take_prog(&j, i, pin_dir, gen, r);
	btf__free(j.vmlinux);
	if (!ok) {
		sh_resume_release(r);
		return false;
	}
	/* Ours: the load makes the constants and nothing else. */
	for (int i = 0; i < s->prog_cnt; i++)
		bpf_program__set_autoload(*s->progs[i].prog, false);
	bpf_object__for_each_map(m, *s->obj)
		if (!sh_pin_adopted_kind(m) && !(bpf_map__map_flags(m) & BPF_F_MMAPABLE))
			bpf_map__set_autocreate(m, false);
	r->on = true;
	return true;
}

/* Pins link fd lfd at program i's pin of generation gen and gives the
 * skeleton a link opened there. */
static int pin_as_ours(const struct bpf_object_skeleton *s, int i, int lfd, const char *pin_dir,
		       unsigned gen)
{
	char path[PATH_MAX + 256];
	struct bpf_link *l;

	sh_pin_path(path, sizeof(path), pin_dir, gen, "link", bpf_program__name(*s->progs[i].prog));
	if (bpf_obj_pin(lfd, path))
		return -errno;
	l = bpf_link__open(path);
	if (!l) {
		int err = -errno;

		unlink(path);
		return err;
	}
	*s->progs[i].link = l;
	return 0;
}

int sh_resume_links(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
		    struct sh_resumed *r)
{
	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		int err;

		if (r->link_fd[i] < 0)
			continue;
		err = pin_as_ours(s, i, r->link_fd[i], pin_dir, gen);
		if (err)
			return err;
		close(r->link_fd[i]);
		r->link_fd[i] = -1;
	}
	return 0;
}

bool sh_resume_gen_ours(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
			const struct sh_resumed *r)
{
	char path[PATH_MAX + 256];

	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		bool ours;
		int fd;

		if (r->prog_fd[i] < 0)
			continue;
		sh_pin_path(path, sizeof(path), pin_dir, gen, "link",
			    bpf_program__name(*s->progs[i].prog));
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		ours = !bpf_obj_get_info_by_fd(fd, &li, &len) && li.prog_id == r->prog_id[i];
		close(fd);
		if (ours)
			return true;
	}
	return false;
}

int sh_resume_attach(const struct bpf_object_skeleton *s, const char *pin_dir, unsigned gen,
		     const struct sh_resumed *r, uint32_t need)
{
	for (int i = 0; i < s->prog_cnt && i < SH_MAX_PROGS; i++) {
		uint32_t demand = sh_pin_demand(bpf_program__name(*s->progs[i].prog));
		enum bpf_attach_type type;
		int lfd, err;

		if (r->prog_fd[i] < 0 || *s->progs[i].link || (demand && !(demand & need)))
			continue;
		/* Each kind as libbpf links it: LSM, fentry/fexit, BTF raw tracepoint. */
		type = bpf_program__expected_attach_type(*s->progs[i].prog);
		lfd = type == BPF_TRACE_RAW_TP ? bpf_raw_tracepoint_open(NULL, r->prog_fd[i])
					       : bpf_link_create(r->prog_fd[i], 0, type, NULL);
		if (lfd < 0)
			return -errno;
		err = pin_as_ours(s, i, lfd, pin_dir, gen);
		close(lfd);
		if (err)
			return err;
	}
	return 0;
}
