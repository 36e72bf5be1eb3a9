/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup patterns' map layouts, shared by the BPF programs and user space
 * like the rest of sharness.h, which includes this header.
 */
#ifndef SHARNESS_PATTERNS_H
#define SHARNESS_PATTERNS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * Cgroup patterns: a `cgroup =` line whose last component holds `*`, `?` or
 * `[` names the children of one directory (its parent) whose names match. The
 * programs tag such a child as it is made (tp_btf/cgroup_mkdir, before
 * kernfs makes the directory visible, so before any process can enter it);
 * the daemon tags those that exist at load. A tag made for a pattern has
 * SH_TAG_PATTERN in run_id. One table per slot, SH_MAX_PATTERNS entries
 * each (map cg_patterns, index slot * SH_MAX_PATTERNS + i), in the order
 * of the set's policies and lines; the first entry with parent 0 ends a
 * table. Counter SH_CNT_PATTERN_LOST counts matching cgroups the programs
 * could not tag (the tag map full).
 */
#define SH_MAX_PATTERNS      32
#define SH_PATTERN_MAX       64      /* a pattern's last component, with its NUL */
#define SH_CGROUP_NAME_MAX   256     /* a cgroup's name, with its NUL */
#define SH_TAG_PATTERN       0x80000000u

/* The `[...]` classes of a pattern's glob, compiled by the daemon (map
 * cg_classes, the pattern's index; written before the pattern table holds
 * the pattern): the programs test a byte against a class in one step.
 * Class j opens at glob offset at[j] (0xff: none), its `]` is at end[j] -
 * 1, and bits[j] holds the bytes it matches, `!` applied. A '[' with no
 * class here (an entry never written, all zeros: the pattern table of a
 * generation before classes, adopted, until the apply writes both) makes
 * the pattern match: the cgroup is held, not left free. */
#define SH_PATTERN_CLASSES   4
struct sh_pattern_classes {
	__u8 at[SH_PATTERN_CLASSES];
	__u32 end[SH_PATTERN_CLASSES];  /* 32 bits: the verifier knows no bound */
	__u8 bits[SH_PATTERN_CLASSES][32];
};

/* The name a cgroup a pattern matched was made with, and its directory
 * (bpf/cgroup.c, map pattern_names): the daemon names such a cgroup in
 * its records after it is removed (a container's, gone as it ends). */
struct sh_cgroup_name {
	__u64 parent;                  /* cgroup id of the directory */
	char name[SH_CGROUP_NAME_MAX];
};

#endif
