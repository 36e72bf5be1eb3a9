// SPDX-License-Identifier: GPL-2.0
/*
 * The rule-kind table (see rules.h) and its lookups.
 */
#include "rules.h"
#include "sharness.h"

#include <stddef.h>
#include <string.h>

const struct sh_rule_kind_info sh_rule_kinds[SH_RULE_KIND_COUNT] = {
	[SH_EXEC_ALLOW] = { "exec", "allow", "exec allow", SH_KEY_EXEC, SH_ACT_ALLOW,
			    SH_PF_EXEC_ALLOWLIST | SH_PF_EXEC_RULES },
	[SH_EXEC_DENY] = { "exec", "deny", "exec deny", SH_KEY_EXEC, SH_ACT_DENY,
			   SH_PF_EXEC_RULES | SH_PF_EXEC_DENY },
	[SH_EXEC_LIB] = { "exec", "lib", "exec lib", SH_KEY_EXEC, SH_ACT_LIB, 0 },
	[SH_FILE_WRITE] = { "file", "write", "file write", SH_KEY_FILE, SH_ACT_WRITE,
			    SH_PF_FILE_WRITELIST },
	[SH_FILE_DENY] = { "file", "deny", "file deny", SH_KEY_FILE, SH_ACT_DENY,
			   SH_PF_FILE_DENY },
	/* a trie of its own: never in conflict with write or deny */
	[SH_FILE_DEVICE] = { "file", "device", "file device", SH_KEY_DEVICE, SH_ACT_ALLOW,
			     SH_PF_DEVICE_RULES },
	[SH_CONNECT_ALLOW] = { "connect", "allow", "connect allow", SH_KEY_CONNECT, SH_ACT_ALLOW,
			       SH_PF_CONNECT_RULES },
	[SH_CONNECT_DENY] = { "connect", "deny", "connect deny", SH_KEY_CONNECT, SH_ACT_DENY,
			      SH_PF_CONNECT_RULES },
};

const struct sh_rule_kind_info *sh_rule_kind_info(enum sh_rule_kind k)
{
	if ((unsigned)k >= SH_RULE_KIND_COUNT || !sh_rule_kinds[k].name)
		return NULL;
	return &sh_rule_kinds[k];
}

bool sh_rule_kind_lookup(const char *section, const char *key, enum sh_rule_kind *k)
{
	for (unsigned i = 0; i < SH_RULE_KIND_COUNT; i++) {
		const struct sh_rule_kind_info *ki = &sh_rule_kinds[i];

		if (ki->name && strcmp(ki->section, section) == 0 && strcmp(ki->key, key) == 0) {
			*k = (enum sh_rule_kind)i;
			return true;
		}
	}
	return false;
}

bool sh_rule_section(const char *section)
{
	for (unsigned i = 0; i < SH_RULE_KIND_COUNT; i++)
		if (sh_rule_kinds[i].name && strcmp(sh_rule_kinds[i].section, section) == 0)
			return true;
	return false;
}

bool sh_rule_same_trie(enum sh_rule_kind a, enum sh_rule_kind b)
{
	const struct sh_rule_kind_info *ka = sh_rule_kind_info(a), *kb = sh_rule_kind_info(b);

	return ka && kb && ka->map_kind == kb->map_kind;
}

const char *sh_rule_kind_name(enum sh_rule_kind k)
{
	const struct sh_rule_kind_info *ki = sh_rule_kind_info(k);

	return ki ? ki->name : "unknown";
}
