/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Can this kernel enforce? The checks sharnessctl's probe and the daemon's
 * start run, a report that says what to change where one failed, and the
 * opening of the programs in the form this kernel's hooks take.
 */
#ifndef SH_PROBE_H
#define SH_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Route libbpf's messages: its debug output only with --debug. */
void sh_libbpf_quiet(void);

struct sh_probe {
	bool securityfs;        /* /sys/kernel/security/lsm readable */
	bool lsm_bpf;           /* "bpf" in the active LSM list */
	bool btf;               /* /sys/kernel/btf/vmlinux */
	bool cgroup2;           /* cgroup v2 at /sys/fs/cgroup */
	bool attach;            /* the programs loaded and attached */
	int attach_err;         /* -errno of the failed load/attach */
	char lsm[512];
	char kernel[128];
};

/* Runs every check, including a real load and attach; 0 when this kernel
 * can enforce, SH_EXIT_NOENFORCE otherwise. */
int sh_probe_run(struct sh_probe *p);
/* The same without the load and attach (the caller does that itself and
 * reports a failure through attach/attach_err). */
int sh_probe_run_opts(struct sh_probe *p, bool try_attach);
/* Human report of a probe, with what to change where a check failed. */
void sh_probe_print(const struct sh_probe *p, FILE *out);
/* The first failed check as one sentence that says what to change. */
const char *sh_probe_why(const struct sh_probe *p, char *buf, size_t n);

struct sharness_bpf;
/* Opens the skeleton (not loaded yet) with only the programs whose hooks
 * this kernel has in the form they expect; 0 or -errno. */
int sh_probe_open(struct sharness_bpf **out);
/* With SHARNESS_VERIFIER_STATS set, one line to out per program loaded,
 * the verifier's statistics (what sh_probe_open asked it for); the test
 * suite checks their headroom. Frees the buffers they were read from. */
void sh_probe_verifier_stats(struct sharness_bpf *skel, FILE *out);

#endif
