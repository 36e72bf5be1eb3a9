/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy compiler: what one policy puts in the BPF maps, the entries
 * of the rules map (an LPM trie of struct sh_rule_key -> SH_ACT_*) and its
 * row of the policy table (SH_PF_* flags).  Pure: no maps, no file system;
 * the enforcer writes the result.
 */
#ifndef SHARNESS_COMPILE_H
#define SHARNESS_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "sharness.h"

/* One rules-map entry. */
struct sh_compiled_rule {
	struct sh_rule_key key;
	uint32_t act;                 /* SH_ACT_* */
	const struct sh_rule *rule;   /* its rule; NULL for a default lib dir */
};

struct sh_compiled {
	struct sh_compiled_rule *rules;   /* in the order they must be written */
	size_t n;
};

/*
 * The entries of policy p, as policy `id` in `slot`.  Written in order,
 * a later entry replaces an earlier one with the same key: an exact rule
 * takes precedence over the directory rule that covers its path.  Returns
 * 0, -ENAMETOOLONG if a rule's key does not fit (recorded in errs as
 * "FILE:LINE: ...") or -ENOMEM.  On failure *out is empty.
 */
int sh_compile_rules(const struct sh_policy *p, unsigned slot, unsigned id,
		     struct sh_compiled *out, struct sh_errors *errs);
void sh_compile_free(struct sh_compiled *c);   /* NULL-safe, zeroes */

/* The pin of rule r of p in its rule value (SH_RULE_PIN_SHIFT) and in
 * exec_pins: 1 + the index of p's first rule with r's digest, so rules of
 * one digest share it; 0 for a rule not pinned. */
uint32_t sh_compile_pin(const struct sh_policy *p, const struct sh_rule *r);

/* One dir_marks-map entry: a directory "P/" with a rule key below it, its
 * length in bytes and the id its names are listed under. */
struct sh_compiled_dir {
	struct sh_rule_key key;
	struct sh_dir_mark val;
};

/* The directory markers of a policy and the names below them. */
struct sh_compiled_dirs {
	struct sh_compiled_dir *marks;  /* sorted by length, then key */
	size_t n;
	struct sh_name_key *names;      /* dir_names-map keys, once each */
	size_t nnames;
};

/*
 * The directory markers of compiled rules c: every '/'-terminated proper
 * prefix "P/" of each [file] (SH_KEY_FILE) key, once, keyed as that rule,
 * with an id from 1 (in marker order), and for each the names in "P/"
 * that lead to a rule key (the key's next component). A marker gets id 0
 * and no names where a key's component cannot be listed (not ended by
 * '/' or its NUL, or longer than 255 bytes): the programs then judge every
 * name in it by path (bpf/lib/memo.h). Beside them, with the kind
 * SH_KEY_FOLD | kind and id 0, the fold markers: every such prefix of a
 * key of a rule that restricts (deny; exec lib) of any path kind
 * (include/sharness.h). And with the rule's own kind and id 0, the
 * markers a rename is judged by (bpf/file.c): every such prefix of a
 * [connect] or device key or of an exec deny key. 0 or -ENOMEM; out is
 * empty then.
 */
int sh_compile_dirs(const struct sh_compiled *c, struct sh_compiled_dirs *out);
void sh_compile_dirs_free(struct sh_compiled_dirs *d); /* NULL-safe, zeroes */

/* The dir_names key of the name of len bytes (1..255) at name. */
void sh_name_key_of(struct sh_name_key *k, unsigned slot, unsigned policy, uint32_t id,
		    const uint8_t *name, size_t len);

/* One net_rules-map entry: an address prefix and the rules covering it. */
struct sh_compiled_net {
	struct sh_net_key key;
	struct sh_net_rules val;
};

/*
 * The [net] entries of policy p, as policy `id` in `slot`: one per distinct
 * prefix of each trie (connect and deny; bind), listing every rule of that
 * trie whose prefix contains it, most specific first. 0 or -ENOMEM (or
 * -E2BIG, recorded in errs, if a prefix is covered by more rules than an
 * entry holds: the parser refuses such files first). *out is malloc'd.
 */
int sh_compile_net(const struct sh_policy *p, unsigned slot, unsigned id,
		   struct sh_compiled_net **out, size_t *n, struct sh_errors *errs);

/* The SH_PF_* flags of p's row in the policy table. */
uint32_t sh_compile_flags(const struct sh_policy *p);

/* Where executable libraries may come from when a policy has an exec
 * allowlist and no lib rule of its own. */
extern const char *const sh_compile_default_lib_dirs[];
extern const size_t sh_compile_ndefault_lib_dirs;

#endif /* SHARNESS_COMPILE_H */
