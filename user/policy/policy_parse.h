/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the sharness policy parser: the state of one file being parsed,
 * shared by the line reader (policy_parse.c) and the key handlers
 * (policy_keys.c, policy_net.c, policy_paths.c), and the message helpers
 * (policy_errors.c) the loader (policy_load.c) uses too.
 * Not an API: only the policy_*.c files include it.
 */
#ifndef SHARNESS_POLICY_PARSE_H
#define SHARNESS_POLICY_PARSE_H

#include "policy.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Size of a buffer holding quoted text; a quoted line fits with room. */
#define QBUF 1024
/* Longest line inih can hold is INI_MAX_LINE - 1; keys/values are shorter. */
#define LINE_BUF 512

enum section {
	SEC_NONE,     /* before any header */
	SEC_BAD,      /* unknown or malformed header: its keys are skipped */
	SEC_OK,       /* a known section, named by sec_name */
};

struct pctx {
	FILE *fp;
	const char *fname;        /* quoted file name for messages */
	struct sh_errors *errs;
	struct sh_policy *p;
	size_t rules_cap, cgroups_cap, net_cap;

	int line;                 /* line currently being processed */
	int nerr;                 /* problems found, recorded or not */
	int sys_err;              /* first -errno of a system failure */
	bool stop;                /* reader returns EOF from now on */

	enum section sec;
	const char *sec_name;     /* with SEC_OK: "exec", ... */
	int policy_line;          /* first [policy] header, for "missing name" */

	/* per-line state set by the reader, consumed by the handler */
	bool key_line;            /* line must reach the handler */
	bool handled;             /* handler was called for it */
	bool cont;                /* line continues the value of prev_key */
	/* inih's notion of the previous key, for continuation lines */
	bool have_prev;
	char prev_key[LINE_BUF];

	/* first line of each single-valued key, 0 = not seen */
	int mode_line, held_line, paths_line, abstract_line, scope_line, connect_scope_line, pids_line;
	int memory_line, swap_line, cpu_line, io_line, tmp_line;
	bool too_many_rules;
	bool name_seen;           /* a name key was given, valid or not */
};

/* What a key of a section means: a rule of some kind, or a setting. */
struct sh_policy_key {
	bool rule;
	enum sh_rule_kind kind;                                    /* with rule */
	void (*set)(struct pctx *c, const char *key, const char *v);  /* without */
	bool is_name;             /* the policy's name key */
};

/* Renders untrusted text for a message (see policy_errors.c); cut with "...". */
const char *sh_policy_quote_n(char *buf, size_t size, const char *s, size_t n);
const char *sh_policy_quote(char *buf, size_t size, const char *s);
/* Like sh_errors_add; false if the message could not be stored. */
bool sh_errors_addf(struct sh_errors *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What every loader does first: zeroes *out (size bytes); a NULL name is
 * recorded as "(null): no policy WHAT given".  0 or -EINVAL. */
int sh_policy_start(void *out, size_t size, const char *name, const char *what,
		    struct sh_errors *errs);
/* Records "NAME: WHAT: <strerror(errno)>"; returns -errno (-dflt if 0). */
int sh_policy_errno(struct sh_errors *errs, const char *qname, const char *what, int dflt);

/* Records a problem of the file as "FILE:LINE: message". */
void sh_perr(struct pctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A system failure (err, an errno) while doing what: recorded once, and
 * the file is read no further; sh_pctx_oom: out of memory. */
void sh_pctx_fail(struct pctx *c, int err, const char *what);
void sh_pctx_oom(struct pctx *c);

/* The table's own spelling of a section name s[0..n), NULL if unknown. */
const char *sh_policy_section(const char *s, size_t n);
/* What key means in section sec; false if it means nothing there. */
bool sh_policy_key_find(const char *sec, const char *key, struct sh_policy_key *out);
/* Stores one value of a rule key after checking it. */
void sh_policy_add_rule(struct pctx *c, enum sh_rule_kind kind, const char *v);
/* [net] connect, deny and bind (policy_net.c); the checks across a file's
 * [net] rules once it is read. */
void sh_policy_add_net(struct pctx *c, const char *key, const char *v);
void sh_policy_net_finish(struct pctx *c);

/* The key of a rule for path (policy_paths.c): resolved on this host, or as
 * written where the policy's paths are a container's. */
void sh_rule_key(const struct pctx *c, const char *path, bool dir, char *out, size_t n);
/* Sets r->key for r->path; false (reported) if it does not fit a
 * rules-map key or names the reader's own /proc files. */
bool sh_set_rule_key(struct pctx *c, struct sh_rule *r);

#endif /* SHARNESS_POLICY_PARSE_H */
