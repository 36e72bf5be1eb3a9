// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the policy parser, on arbitrary file contents. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "sharness.h"

static char path[64];
static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sh_policy p = {};
	struct sh_errors errs = {};
	int err;

	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/sharness-fuzz-%d.policy", getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	err = sh_policy_parse_file(path, &p, &errs);
	/* The contract: success has no errors, failure has at least one. */
	if ((err == 0) != (errs.n == 0))
		abort();
	if (err == 0 && (!p.name || !p.name[0]))
		abort();
	/* An accepted rule always fits a rules-map key with its NUL. */
	for (size_t i = 0; i < p.nrules; i++)
		if (!p.rules[i].key || strlen(p.rules[i].key) != p.rules[i].keylen ||
		    p.rules[i].keylen + 1 > SH_PATH_KEY_MAX)
			abort();
	for (size_t i = 0; i < errs.n; i++)
		if (strncmp(errs.msgs[i], path, strlen(path)) != 0)
			abort(); /* every error names its file */
	sh_policy_free(&p);
	sh_errors_free(&errs);
	return 0;
}
