// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits (reslimit.h): the parsers `[limits]` and `sharnessctl run`
 * share, and the words a run-begin request carries them in.
 */
#include "reslimit.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_u64(const char *s, char **end, uint64_t *out)
{
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno)
		return false;
	*out = v;
	return true;
}

bool sh_parse_bytes(const char *s, bool allow_zero, uint64_t *out)
{
	static const char units[] = "KMGT";
	uint64_t v;
	char *end;
	const char *u;

	if (!parse_u64(s, &end, &v))
		return false;
	if (*end) {
		u = strchr(units, *end);
		if (!u || !*end || end[1])
			return false;
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return false;
			v *= 1024;
		}
	}
	if (!v && !allow_zero)
		return false;
	*out = v;
	return true;
}

bool sh_parse_cpu_pct(const char *s, unsigned *out)
{
	uint64_t v;
	char *end;

	if (!parse_u64(s, &end, &v) || strcmp(end, "%") != 0 || v < 1 || v > SH_CPU_MAX_PCT)
		return false;
	*out = (unsigned)v;
	return true;
}

bool sh_parse_io_weight(const char *s, unsigned *out)
{
	uint64_t v;
	char *end;

	if (!parse_u64(s, &end, &v) || *end || v < 1 || v > SH_IO_WEIGHT_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

void sh_limits_merge(struct sh_limits *base, const struct sh_limits *over)
{
	if (over->memory_max)
		base->memory_max = over->memory_max;
	if (over->has_swap) {
		base->memory_swap_max = over->memory_swap_max;
		base->has_swap = true;
	}
	if (over->cpu_max)
		base->cpu_max = over->cpu_max;
	if (over->io_weight)
		base->io_weight = over->io_weight;
	if (over->private_tmp)
		base->private_tmp = over->private_tmp;
}

size_t sh_limits_words(const struct sh_limits *l, char words[SH_LIMIT_WORDS][48])
{
	size_t n = 0;

	if (l->memory_max)
		snprintf(words[n++], 48, "memory-max=%" PRIu64, l->memory_max);
	if (l->has_swap)
		snprintf(words[n++], 48, "memory-swap-max=%" PRIu64, l->memory_swap_max);
	if (l->cpu_max)
		snprintf(words[n++], 48, "cpu-max=%u%%", l->cpu_max);
	if (l->io_weight)
		snprintf(words[n++], 48, "io-weight=%u", l->io_weight);
	if (l->private_tmp)
		snprintf(words[n++], 48, "private-tmp=%" PRIu64, l->private_tmp);
	return n;
}

bool sh_limits_parse_word(const char *w, struct sh_limits *l)
{
	const char *v = strchr(w, '=');
	size_t k;

	if (!v)
		return false;
	k = (size_t)(v++ - w);
	if (k == 10 && !strncmp(w, "memory-max", k))
		return sh_parse_bytes(v, false, &l->memory_max);
	if (k == 15 && !strncmp(w, "memory-swap-max", k))
		return (l->has_swap = sh_parse_bytes(v, true, &l->memory_swap_max));
	if (k == 7 && !strncmp(w, "cpu-max", k))
		return sh_parse_cpu_pct(v, &l->cpu_max);
	if (k == 9 && !strncmp(w, "io-weight", k))
		return sh_parse_io_weight(v, &l->io_weight);
	if (k == 11 && !strncmp(w, "private-tmp", k))
		return sh_parse_bytes(v, false, &l->private_tmp);
	return false;
}

const char *sh_fmt_bytes(uint64_t v, char *buf, size_t n)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%" PRIu64, v);
	else
		snprintf(buf, n, "%" PRIu64 "%c", v, units[u]);
	return buf;
}

uint64_t sh_default_run_memory(void)
{
	char buf[4096], *p;
	unsigned long long kib;

	if (sh_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0 ||
	    !(p = strstr(buf, "MemTotal:")) || sscanf(p, "MemTotal: %llu kB", &kib) != 1)
		return 0;
	return (kib / 2 / 1024) << 20;
}
