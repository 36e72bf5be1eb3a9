/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sharness policy files: parsing, validation and loading.
 *
 * One policy per "*.policy" file, INI syntax:
 *
 *   [policy]   name = <[A-Za-z0-9_.-]{1,63}>   (required, once)
 *              mode = enforce | audit          (default enforce, once)
 *              cgroup = <absolute path>        (optional, repeatable)
 *   [exec]     allow = <path> [sha256:<hex>]    deny = <path>    lib = <path>
 *   [file]     write = <path>    deny = <path>    device = <path>
 *   [connect]  allow = <path>    deny = <path>   abstract = allow | deny
 *   [signal]   scope = tree | any
 *   [net]      connect = PROTO ADDRESS[/PREFIX] [PORT[-PORT]]
 *              deny = ...   bind = ...         (see policy_net.c)
 *   [limits]   pids-max = 1..4194304
 *              memory-max = SIZE   memory-swap-max = SIZE   (64M, 1G, bytes)
 *              cpu-max = PCT%      (of one CPU)    io-weight = 1..10000
 *              capability = <name>[, <name>...]  (repeatable: allowed back to
 *                           the tree beyond SH_CAPS_TREE_DEFAULT, e.g. sys_nice)
 *
 * A rule path ending in '/' names a directory and everything below it.
 * Rule keys and what they mean are listed once, in rules.c.  A rule for a
 * path that exists on this host is resolved (symlinks) while the file is
 * read; the result must fit in a rules-map key (SH_PATH_KEY_MAX).
 * Section and key names are case-sensitive.  Comments start a line with
 * '#' or ';', or follow whitespace inside a value ("allow = /x   # why").
 * Every problem is reported as "FILE:LINE: message"; a file with any problem
 * is rejected as a whole, and a load with any bad file loads nothing.
 */
#ifndef SHARNESS_POLICY_H
#define SHARNESS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reslimit.h"
#include "rules.h"

#define SH_RULE_PATH_MAX 190      /* bytes, including a trailing '/' */
/* The longest line the policy reader takes (libinih's buffer of 200, its
 * NUL and a newline): what writes policy lines keeps within it. */
#define SH_POLICY_LINE_MAX 198
#define SH_MAX_POLICIES 64
#define SH_MAX_RULES_PER_POLICY 1024
#define SH_POLICY_NAME_MAX 63
#define SH_PIDS_MAX_LIMIT 4194304u
/* Error messages kept per file; beyond that one final note is recorded. */
#define SH_MAX_ERRORS_PER_FILE 100

/* SH_MODE_LEARN is never written in a file: sharnessd makes such a policy
 * for the length of one `sharnessctl learn` run. */
enum sh_mode { SH_MODE_ENFORCE = 0, SH_MODE_AUDIT = 1, SH_MODE_LEARN = 2 };
enum sh_scope { SH_SCOPE_ANY = 0, SH_SCOPE_TREE = 1 };
struct sh_rule {
	enum sh_rule_kind kind;
	char *path;   /* as written, e.g. "/usr/lib/git-core/" */
	bool dir;     /* path ends in '/' */
	int line;
	/* The path the kernel reports for it: path with symlinks resolved if
	 * it exists on this host, else path; ends in '/' if dir.  keylen + 1
	 * (its NUL) fits in a rules-map key. */
	char *key;
	size_t keylen;
	/* exec allow only: `allow = PATH sha256:HEX`, the content the file
	 * at key must have (digest.h). */
	bool pinned;
	uint8_t digest[32];
};

/* A [net] rule. */
enum sh_net_rule_kind { SH_NETR_CONNECT, SH_NETR_DENY, SH_NETR_BIND };

struct sh_net_rule {
	enum sh_net_rule_kind kind;
	uint8_t proto;             /* SH_PROTO_ANY, _TCP, _UDP */
	uint8_t addr[16];          /* IPv6; IPv4 as ::ffff:a.b.c.d */
	unsigned prefix;           /* leading bits of addr that count, 0..128 */
	uint16_t port_lo, port_hi; /* inclusive */
	int line;
};

#define SH_MAX_NET_RULES_PER_POLICY 256

/* net_none[] index of `connect = none` and `bind = none`: the allowlist of
 * that kind is on and holds nothing. */
enum { SH_NET_NONE_CONNECT = 0, SH_NET_NONE_BIND = 1 };

/* Does a's address prefix contain b's? */
bool sh_net_rule_covers(const struct sh_net_rule *a, const struct sh_net_rule *b);

struct sh_policy {
	char *name;
	char *file;
	int name_line;
	enum sh_mode mode;
	char **cgroups;
	int *cgroup_lines;
	size_t ncgroups;
	struct sh_rule *rules;   /* in file order, deduplicated */
	size_t nrules;
	bool abstract_deny;
	bool from_exec;           /* held-from = exec: an arrival is held from its next exec */
	bool container_paths;     /* paths = container: rules taken as written, no host lookup */
	enum sh_scope signal_scope;
	enum sh_scope connect_scope; /* [connect] scope: any (default) or tree */
	unsigned pids_max;       /* 0 = not set */
	struct sh_limits limits; /* memory, CPU, I/O of run cgroups */
	unsigned long long caps_allow; /* capabilities allowed back (bit = number) */
	struct sh_net_rule *net;  /* [net], in file order, deduplicated */
	size_t nnet;
	bool learn_all;           /* SH_MODE_LEARN from nothing: every kind is learned */
	int net_none[2];          /* line of `connect = none`, `bind = none` (0: none) */
};

struct sh_policy_set {
	struct sh_policy *pols;
	size_t n;
};

struct sh_errors {
	char **msgs;   /* each "FILE:LINE: message" */
	size_t n;
};

/*
 * All return 0 on success, -EINVAL if errors were recorded in errs, another
 * -errno on system failure (also recorded in errs when possible; -ENOMEM on
 * allocation failure).  errs may be NULL.  On failure *out is left empty
 * (zeroed), so freeing it is always safe; on success the caller owns it.
 * *out is overwritten without being freed first.
 */
int sh_policy_parse_file(const char *path, struct sh_policy *out, struct sh_errors *errs);
/* Parses every file (reporting the errors of all of them), then checks across
 * files: unique policy names, no cgroup tagged twice, at most SH_MAX_POLICIES. */
int sh_policy_load_files(const char *const *paths, size_t n, struct sh_policy_set *out,
			 struct sh_errors *errs);
/* Every "*.policy" (dot files excepted) in dir, sorted by file name (bytewise).
 * An empty dir is a valid empty set; an unreadable dir is an error. */
int sh_policy_load_dir(const char *dir, struct sh_policy_set *out, struct sh_errors *errs);

/* Checks a loaded set against this host (policy_host.c): cgroups that do
 * not exist are errors, exec allow rules for missing files warnings
 * (warns may be NULL). 0 or -EINVAL. */
int sh_policy_check_host(const struct sh_policy_set *set, struct sh_errors *errs,
			 struct sh_errors *warns);

const struct sh_policy *sh_policy_find(const struct sh_policy_set *set, const char *name);
/* A policy's id in its set (its index there); -1: none of that name. */
int sh_policy_index(const struct sh_policy_set *set, const char *name);
/* "no policy named 'x' is loaded (loaded: a, b)" into buf. */
const char *sh_policy_not_found(const struct sh_policy_set *set, const char *name, char *buf,
				size_t n);
void sh_policy_free(struct sh_policy *p);      /* NULL-safe, zeroes */
/* A deep copy of src into *dst: 0 or -ENOMEM (then *dst is empty). */
int sh_policy_dup(struct sh_policy *dst, const struct sh_policy *src);
/* A copy of every policy of src in *dst, then extra[0..nextra): 0 or -ENOMEM. */
int sh_policy_set_dup(struct sh_policy_set *dst, const struct sh_policy_set *src,
		      const struct sh_policy *extra, size_t nextra);
const char *sh_mode_name(enum sh_mode m);
void sh_policy_set_free(struct sh_policy_set *s);   /* NULL-safe, zeroes */

/* Appends one formatted message.  If memory runs out the message is dropped
 * (callers rely on return codes, never on errs->n, to detect failure). */
void sh_errors_add(struct sh_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sh_errors_free(struct sh_errors *e);       /* NULL-safe, zeroes */

bool sh_policy_has_kind(const struct sh_policy *p, enum sh_rule_kind k);

#endif /* SHARNESS_POLICY_H */
