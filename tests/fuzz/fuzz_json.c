// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the audit log's JSON. Any bytes written as a field must
 * come back from the reader (what `sharnessctl log` uses) exactly: as the
 * string itself when valid UTF-8, else through its _hex field. The reader
 * is also fed the raw input as a line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sh_jobj obj = {};
	struct sh_buf b;
	const char *v, *hex;

	sh_buf_init(&b);
	sh_json_begin(&b);
	sh_json_str_field(&b, "target", data, size);
	sh_json_uint_field(&b, "pid", 42);
	sh_json_end(&b);
	if (b.oom)
		abort();
	if (sh_json_parse_flat(b.p, b.len - 1, &obj) != 0)
		abort(); /* what we write, we can read */
	v = sh_jobj_get(&obj, "target");
	hex = sh_jobj_get(&obj, "target_hex");
	if (!v)
		abort();
	if (sh_utf8_valid(data, size)) {
		if (hex)
			abort();
		for (size_t i = 0; i < obj.n; i++)
			if (!strcmp(obj.kv[i].key, "target") &&
			    (obj.kv[i].len != size || memcmp(obj.kv[i].val, data, size)))
				abort();
	} else {
		if (!hex || strlen(hex) != 2 * size)
			abort();
		for (size_t i = 0; i < size; i++)
			if (hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]) != data[i])
				abort();
	}
	sh_jobj_free(&obj);
	sh_buf_free(&b);

	/* The reader on arbitrary input: no crash, no leak. */
	if (sh_json_parse_flat((const char *)data, size, &obj) == 0)
		sh_jobj_free(&obj);
	return 0;
}
