// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: splitting a control request into arguments, as the
 * daemon does with whatever a client sends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[SH_CTL_MAX_ARGS];
	char *buf;
	int argc;

	if (size > SH_CTL_MAX_MSG)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	argc = sh_ctl_parse(buf, size, argv, SH_CTL_MAX_ARGS);
	if (argc > 0) {
		size_t total = 0;

		if (argc > SH_CTL_MAX_ARGS || argv[0][0] == 0)
			abort();
		for (int i = 0; i < argc; i++) {
			if (argv[i] < buf || argv[i] >= buf + size)
				abort();
			total += strlen(argv[i]) + 1;
		}
		if (total != size)
			abort(); /* every byte belongs to exactly one argument */
	}
	free(buf);
	return 0;
}
