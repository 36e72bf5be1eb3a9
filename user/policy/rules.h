/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sharness rule kinds: the one table that says, for every kind of path
 * rule, where it is written in a policy file, what it is called, which
 * rules-map trie and action it becomes and which policy flag it sets.
 * The parser, the conflict check, the map compiler and every message read
 * it.  Adding a rule kind is one enum value here, one row in rules.c and
 * the BPF side that reads the new key kind or action.
 */
#ifndef SHARNESS_RULES_H
#define SHARNESS_RULES_H

#include <stdbool.h>
#include <stdint.h>

enum sh_rule_kind {
	SH_EXEC_ALLOW,
	SH_EXEC_DENY,
	SH_FILE_WRITE,
	SH_FILE_DENY,
	SH_CONNECT_ALLOW,
	SH_CONNECT_DENY,
	SH_EXEC_LIB,      /* may be mapped executable (a library), not executed */
	SH_FILE_DEVICE,   /* a device node the tree may open (beyond the default set) */
	SH_RULE_KIND_COUNT   /* number of kinds: keep last */
};

struct sh_rule_kind_info {
	const char *section;   /* "[exec]" holds it ... */
	const char *key;       /* ... as "allow = <path>" */
	const char *name;      /* "exec allow", in messages */
	uint8_t map_kind;      /* SH_KEY_*: the trie its keys go to */
	uint32_t action;       /* SH_ACT_*: the value stored under its keys */
	uint32_t flags;        /* SH_PF_* a policy gets when it has such a rule */
};

/* Indexed by enum sh_rule_kind; every kind has a row. */
extern const struct sh_rule_kind_info sh_rule_kinds[SH_RULE_KIND_COUNT];

/* The row of kind k, NULL if k is not a kind. */
const struct sh_rule_kind_info *sh_rule_kind_info(enum sh_rule_kind k);
/* The kind written as `key` in `[section]`; false if there is none. */
bool sh_rule_kind_lookup(const char *section, const char *key, enum sh_rule_kind *k);
/* True if some rule kind is written in [section]. */
bool sh_rule_section(const char *section);
/*
 * True if rules of kinds a and b land in one trie.  They store their action
 * under the same keys, so one path named by two such kinds is a conflict
 * ("allow" and "deny" of /usr/bin/x); a kind with a trie of its own never
 * conflicts with another.
 */
bool sh_rule_same_trie(enum sh_rule_kind a, enum sh_rule_kind b);
const char *sh_rule_kind_name(enum sh_rule_kind k);   /* "exec allow", ... */

#endif /* SHARNESS_RULES_H */
