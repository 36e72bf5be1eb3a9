// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned executables in force: the identity of every file a pinned exec
 * allow names, hashed when the policy is applied (digest.c), in exec_pins
 * beside the rules of its slot; and the file hashed again when the
 * programs refuse it, so a replacement of the same content runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "compile.h"
#include "digest.h"
#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

/*
 * What a refusal may have hashed again: a tree that keeps changing a large
 * file at a pinned path and running it must not keep the daemon hashing.
 * Larger files are hashed at a reload only (up to APPLY_MAX_SIZE); beyond
 * the budget of a second, a refusal's file is not hashed (its record says
 * why).
 */
#define REPIN_MAX_SIZE     (64ull << 20)
#define REPIN_BUDGET_BYTES (64ull << 20)
/* At apply: a file the tree made huge at a writable pinned path must not
 * hold a reload for minutes. */
#define APPLY_MAX_SIZE     (1ull << 30)

static bool repin_budget(uint64_t size)
{
	static uint64_t window, spent;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((uint64_t)now.tv_sec != window) {
		window = (uint64_t)now.tv_sec;
		spent = 0;
	}
	if (spent + size > REPIN_BUDGET_BYTES)
		return false;
	spent += size;
	return true;
}

/* What pin_rule found, for a refusal's record. */
struct pin_look {
	uint8_t found[SH_DIGEST_LEN];
	char why[160];
	bool not_entered;       /* found, but not entered: why says why */
};

/*
 * Hashes the file pinned exec allow r of policy p names and, where its
 * content is the rule's digest, enters its identity in exec_pins as policy
 * id of slot: 1 entered; 0 another content, -EAGAIN not hashed (the file
 * missing, open for writing...): its execs are refused, digest mismatch,
 * until it is hashed again; at apply (look NULL) logged, else said in
 * look. -errno other than -EAGAIN if the map refused it (in errs).
 */
static int pin_rule(int fd, unsigned slot, unsigned id, const struct sh_policy *p,
		    const struct sh_rule *r, struct sh_errors *errs, struct pin_look *look)
{
	const char *path = r->key ? r->key : r->path, *file = p->file ? p->file : p->name;
	struct pin_look mine;
	struct pin_look *l = look ? look : &mine;
	char hex[SH_DIGEST_STR];
	struct sh_file_id f;
	struct sh_pin_key k;
	struct sh_pin v;
	struct stat st;
	int err;

	if (look && !repin_budget(stat(path, &st) == 0 ? (uint64_t)st.st_size : 0)) {
		snprintf(l->why, sizeof(l->why), "not hashed: %llu MiB hashed for refusals this "
			 "second", REPIN_BUDGET_BYTES >> 20);
		return -EAGAIN;
	}
	/* At apply, a file changed a moment ago is waited for; a refusal's
	 * file is not (the daemon's loop does not sleep for a tree). */
	err = sh_digest_file(path, look ? SH_DIGEST_LEASE : SH_DIGEST_LEASE | SH_DIGEST_WAIT,
			     look ? REPIN_MAX_SIZE : APPLY_MAX_SIZE, l->found, &f, l->why,
			     sizeof(l->why));
	if (err == -EAGAIN && look) {
		char why[sizeof(l->why)];

		/* Too fresh to enter: hashed for the record only. */
		if (!sh_digest_file(path, 0, REPIN_MAX_SIZE, l->found, NULL, why, sizeof(why))) {
			l->not_entered = true;
			return 0;
		}
	}
	if (err) {
		if (!look)
			sh_log("%s:%d: %s not pinned (%s): only the kernel's hash at an exec lets "
			       "it run", file, r->line, path, l->why);
		return -EAGAIN;
	}
	if (memcmp(l->found, r->digest, SH_DIGEST_LEN)) {
		sh_digest_format(l->found, hex);
		if (!look)
			sh_log("%s:%d: %s has %s, another content than its rule pins: its execs "
			       "are refused (digest mismatch)", file, r->line, path, hex);
		return 0;
	}
	k = (struct sh_pin_key){ .dev = f.dev, .slot = slot, .policy = id, .ino = f.ino };
	v = (struct sh_pin){ .ctime_sec = f.ctime_sec, .ctime_nsec = f.ctime_nsec,
			     .pin = sh_compile_pin(p, r), .size = f.size };
	if (bpf_map_update_elem(fd, &k, &v, BPF_ANY)) {
		err = -errno;
		snprintf(l->why, sizeof(l->why), "cannot store its identity: %s", strerror(-err));
		/* A full map (refusals entered files the tree kept replacing)
		 * costs the file its entry, not the apply. */
		if (err == -E2BIG || err == -ENOSPC) {
			sh_log("%s:%d: %s not pinned (%s)", file, r->line, path, l->why);
			return -EAGAIN;
		}
		sh_errors_add(errs, "%s:%d: cannot store the pin of %s: %s", file, r->line, path,
			      strerror(-err));
		return err == -EAGAIN ? -EIO : err;
	}
	return 1;
}

/* What the programs need to hash a pinned exec themselves: the rule's
 * pin by its exact key (pin_paths), the digest by the pin (pin_digests). */
static int write_pin_rule(const int fds[3], unsigned slot, unsigned id,
			  const struct sh_policy *p, const struct sh_rule *r, struct sh_errors *errs)
{
	const char *path = r->key ? r->key : r->path;
	size_t len = strlen(path);
	struct sh_rule_key k = { .prefixlen = 32 + (len + 1) * 8, .slot = slot, .kind = SH_KEY_EXEC,
				 .policy = id };
	uint32_t pin = sh_compile_pin(p, r);
	struct sh_pin_digest_key dk = { .pin = pin, .slot = slot, .policy = id };
	struct sh_pin_digest dv;

	if (len + 1 > sizeof(k.path))
		return -ENAMETOOLONG;   /* refused when the file was read (policy_keys.c) */
	memcpy(k.path, path, len);
	memcpy(dv.d, r->digest, sizeof(dv.d));
	if (bpf_map_update_elem(fds[1], &k, &pin, BPF_ANY) ||
	    bpf_map_update_elem(fds[2], &dk, &dv, BPF_ANY)) {
		int err = -errno;

		sh_errors_add(errs, "%s:%d: cannot store the pin of %s: %s",
			      p->file ? p->file : p->name, r->line, path, strerror(-err));
		return err;
	}
	return 0;
}

/* Every pinned exec allow of p: its rule for the programs, and the file's
 * identity where it holds its digest now (pin_rule). */
int sh_enforcer_write_pins(const int fds[3], unsigned slot, unsigned id,
			   const struct sh_policy *p, struct sh_errors *errs)
{
	for (size_t i = 0; i < p->nrules; i++) {
		int err = 0;

		if (!p->rules[i].pinned)
			continue;
		err = write_pin_rule(fds, slot, id, p, &p->rules[i], errs);
		if (!err)
			err = pin_rule(fds[0], slot, id, p, &p->rules[i], errs, NULL);
		if (err < 0 && err != -EAGAIN)
			return err;
	}
	return 0;
}

int sh_enforcer_repin(struct sh_enforcer *e, unsigned slot, unsigned id, const char *path,
		      uint8_t found[SH_DIGEST_LEN], char *why, size_t whylen, bool *not_entered)
{
	const struct sh_rule *r = sh_enforcer_pinned_rule(e, slot, id, path);
	struct pin_look l = { .why = "", .not_entered = false };
	int err;

	if (!r) {
		snprintf(why, whylen, "no pinned rule of its policy in force names it");
		return -ENOENT;
	}
	err = pin_rule(bpf_map__fd(e->skel->maps.exec_pins), slot, id, &e->set.pols[id], r, NULL,
		       &l);
	memcpy(found, l.found, SH_DIGEST_LEN);
	snprintf(why, whylen, "%s", l.why);
	*not_entered = l.not_entered;
	return err;
}

const struct sh_rule *sh_enforcer_pinned_rule(struct sh_enforcer *e, unsigned slot, unsigned id,
					     const char *path)
{
	const struct sh_policy *p;

	if (slot != e->slot || id >= e->set.n)
		return NULL;
	p = &e->set.pols[id];
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].pinned && !strcmp(p->rules[i].key ? p->rules[i].key : p->rules[i].path,
						  path))
			return &p->rules[i];
	return NULL;
}
