// SPDX-License-Identifier: GPL-2.0
/*
 * Records to the journal (journal.h). The entry is written in journald's
 * native protocol here rather than with sd_journal_sendv(): that one
 * blocks while journald's queue is full, and the daemon that drains the
 * kernel's ring must not wait on a logger. This socket never blocks; an
 * entry journald cannot take now is counted as an error and dropped. The
 * audit log is written first and never depends on the journal.
 *
 * Each field of the record becomes SHARNESS_<KEY> with the record's exact
 * bytes (a field the log holds as KEY_hex, bytes that are not UTF-8, is
 * decoded back); a value with a newline goes in the protocol's binary
 * form (KEY\n, its length as 64-bit little endian, the bytes, \n).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "journal.h"
#include "util.h"

int sh_journal_init(struct sh_journal *j, int mode)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	sh_buf_init(&j->buf);
	if (mode < 0)
		mode = getenv("INVOCATION_ID") || getenv("JOURNAL_STREAM");
	if (!mode)
		return 0;
	j->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->fd < 0)
		return -errno;
	j->on = true;
	return 0;
}

void sh_journal_close(struct sh_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	j->on = false;
	sh_buf_free(&j->buf);
}

static void put_field(struct sh_buf *b, const char *name, const void *v, size_t n)
{
	sh_buf_puts(b, name);
	if (n && memchr(v, '\n', n)) {
		uint64_t le = htole64(n);

		sh_buf_putc(b, '\n');
		sh_buf_write(b, &le, sizeof(le));
	} else {
		sh_buf_putc(b, '=');
	}
	sh_buf_write(b, v, n);
	sh_buf_putc(b, '\n');
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The raw bytes of field kv: its KEY_hex decoded where the record has one.
 * *tmp holds what the caller frees. */
static const char *raw_value(const struct sh_jobj *o, const struct sh_jkv *kv, size_t *n,
			     char **tmp)
{
	char hk[80];
	const char *hex;
	size_t hl;

	*n = kv->len;
	snprintf(hk, sizeof(hk), "%s_hex", kv->key);
	hex = sh_jobj_get(o, hk);
	if (!kv->is_str || !hex || (hl = strlen(hex)) % 2 || !(*tmp = malloc(hl / 2 + 1)))
		return kv->val;
	for (size_t i = 0; i < hl / 2; i++) {
		int hi = unhex(hex[2 * i]), lo = unhex(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return kv->val;
		(*tmp)[i] = (char)(hi << 4 | lo);
	}
	*n = hl / 2;
	return *tmp;
}

/* Is key a KEY_hex beside its KEY (the bytes of KEY, already sent)? */
static bool is_hex_of(const struct sh_jobj *o, const char *key)
{
	size_t l = strlen(key);
	char base[80];

	if (l < 5 || l >= sizeof(base) || strcmp(key + l - 4, "_hex"))
		return false;
	memcpy(base, key, l - 4);
	base[l - 4] = 0;
	return sh_jobj_get(o, base) != NULL;
}

/* SHARNESS_<KEY> for every field; SHARNESS_PATH for a target that is a
 * file system path. */
static void put_record_fields(struct sh_buf *b, const struct sh_jobj *o)
{
	const char *ev = sh_jobj_get(o, "event");

	for (size_t i = 0; i < o->n; i++) {
		const struct sh_jkv *kv = &o->kv[i];
		char name[80] = "SHARNESS_", *tmp = NULL;
		const char *v;
		size_t k, n;

		if (is_hex_of(o, kv->key))
			continue;
		for (k = 0; kv->key[k] && 9 + k < sizeof(name) - 1; k++) {
			char c = kv->key[k];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
				break;
			name[9 + k] = c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
		}
		if (!k || kv->key[k])
			continue;   /* not a name journald takes */
		name[9 + k] = 0;
		v = raw_value(o, kv, &n, &tmp);
		put_field(b, name, v, n);
		if (!strcmp(kv->key, "target") && ev && !strcmp(ev, "violation") && n &&
		    v[0] == '/' && !sh_jobj_get(o, "socket"))
			put_field(b, "SHARNESS_PATH", v, n);
		free(tmp);
	}
}

int sh_journal_encode(struct sh_buf *out, const char *line, size_t len)
{
	struct sh_jobj o = { 0 };
	struct sh_buf msg;
	const char *ev, *action;
	int err = sh_json_parse_flat(line, len, &o);

	if (err)
		return err;
	ev = sh_jobj_get(&o, "event");
	action = sh_jobj_get(&o, "action");
	sh_buf_init(&msg);
	sh_audit_text(&msg, &o, false);
	if (msg.len && msg.p[msg.len - 1] == '\n')
		msg.len--;
	put_field(out, "MESSAGE", msg.p, msg.len);
	sh_buf_free(&msg);
	if (ev && !strcmp(ev, "violation"))
		sh_buf_puts(out, "MESSAGE_ID=" SH_JOURNAL_ID_VIOLATION "\n");
	else
		sh_buf_puts(out, "MESSAGE_ID=" SH_JOURNAL_ID_NOT_LOGGED "\n");
	sh_buf_printf(out, "PRIORITY=%d\n", action && !strcmp(action, "audit") ? LOG_NOTICE :
		      LOG_WARNING);
	sh_buf_puts(out, "SYSLOG_IDENTIFIER=sharnessd\n");
	put_record_fields(out, &o);
	sh_jobj_free(&o);
	return out->oom ? -ENOMEM : 0;
}

void sh_journal_send(struct sh_journal *j, const char *line, size_t len)
{
	static const struct sockaddr_un sa = { .sun_family = AF_UNIX,
					       .sun_path = SH_JOURNAL_SOCKET };
	int err;

	if (!j->on)
		return;
	sh_buf_reset(&j->buf);
	err = sh_journal_encode(&j->buf, line, len);
	if (!err && sendto(j->fd, j->buf.p, j->buf.len, MSG_DONTWAIT | MSG_NOSIGNAL,
			   (const struct sockaddr *)&sa, sizeof(sa)) < 0)
		err = -errno;
	if (!err) {
		j->sent++;
		j->failing = false;
		return;
	}
	j->errors++;
	if (!j->failing)
		sh_log("cannot send a record to the journal (%s): %s; the audit log has it, "
		       "failures are counted in status", SH_JOURNAL_SOCKET, strerror(-err));
	j->failing = true;
}
