/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resource limits of a run's cgroup: what `[limits]` and the `run` flags
 * say, parsed once here for both, and what each becomes in cgroup v2.
 */
#ifndef SH_RESLIMIT_H
#define SH_RESLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SH_CPU_MAX_PCT    100000u   /* 1,000 CPUs */
#define SH_IO_WEIGHT_MAX  10000u

struct sh_limits {
	uint64_t memory_max;       /* bytes; 0: not set */
	uint64_t memory_swap_max;  /* bytes, with has_swap */
	bool has_swap;
	unsigned cpu_max;          /* percent of one CPU; 0: not set */
	unsigned io_weight;        /* 1..10000; 0: not set */
	uint64_t private_tmp;      /* bytes of the run's own /tmp and /var/tmp
				    * (a tmpfs each); 0: the host's */
};

/* "64M", "1G", "1048576": bytes (K, M, G, T are powers of 1024). false if
 * it is not such a size or is 0 (allow_zero: 0 is fine). */
bool sh_parse_bytes(const char *s, bool allow_zero, uint64_t *out);
/* "150%" (one and a half CPUs): 1..SH_CPU_MAX_PCT. */
bool sh_parse_cpu_pct(const char *s, unsigned *out);
/* 1..SH_IO_WEIGHT_MAX. */
bool sh_parse_io_weight(const char *s, unsigned *out);

/* Sets what `over` sets on top of `base`. */
void sh_limits_merge(struct sh_limits *base, const struct sh_limits *over);

/* "KEY=VALUE" words for a run-begin request and back; parse: false on a
 * word that is not one of them. */
#define SH_LIMIT_WORDS 5
size_t sh_limits_words(const struct sh_limits *l, char words[SH_LIMIT_WORDS][48]);
bool sh_limits_parse_word(const char *w, struct sh_limits *l);

/* The ceiling a run without memory-max gets unless the daemon is told
 * otherwise: half of MemTotal, in whole MiB (0 if it cannot be read). */
uint64_t sh_default_run_memory(void);

/* "64M" for 67108864: a size for messages. */
const char *sh_fmt_bytes(uint64_t v, char *buf, size_t n);

#endif
