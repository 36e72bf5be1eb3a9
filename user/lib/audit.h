/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The audit log: JSON Lines, one record per line, written with one
 * write(2) per record on an O_APPEND descriptor so a record is never split.
 */
#ifndef SH_AUDIT_H
#define SH_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "names.h"
#include "sharness.h"

struct sh_audit {
	int fd;
	char *path;
	uint64_t write_errors;     /* records that could not be written */
	uint64_t lost_since_ok;    /* ... since the last record that was */
	uint64_t counted_lost;     /* what those counted (suppressed refusals) */
	uint64_t follow_ns;        /* CLOCK_MONOTONIC of the last sh_audit_follow look */
	int last_errno;
};

int sh_audit_open(struct sh_audit *a, const char *path);
int sh_audit_reopen(struct sh_audit *a);
void sh_audit_close(struct sh_audit *a);
/* The log's path names another file than the one written (a rotation's
 * rename whose reopen failed, a removal): opened again, looked at once a
 * second at most. 1 when reopened, 0 when there is nothing to do, -errno
 * (the old file kept). */
int sh_audit_follow(struct sh_audit *a);
/* Writes the record in b (one line, ending in '\n'); 0 or -errno. */
int sh_audit_write(struct sh_audit *a, const struct sh_buf *b);

/* CLOCK_REALTIME of a CLOCK_MONOTONIC instant (bpf_ktime_get_ns). */
uint64_t sh_mono_to_real(uint64_t mono_ns);

/* The fields of one violation record, the object left open for more. */
void sh_audit_format_event_fields(struct sh_buf *b, const struct sh_event *ev,
				  const char *policy, const char *cgroup, uint32_t run_id);
/* Formats one violation record into b. */
void sh_audit_format_event(struct sh_buf *b, const struct sh_event *ev,
			   const char *policy, const char *cgroup, uint32_t run_id);
/* Starts a daemon-side record: {"time":...,"event":EVENT (fields follow). */
void sh_audit_begin_meta(struct sh_buf *b, const char *event);
/* A record on one line of text, as `sharnessctl log` shows it: a
 * violation (or learn record) as "TIME POLICY ACTION HOOK[/OP][ write]
 * COMM[PID] TARGET (REASON)", any other record as "TIME -- EVENT
 * key=value..."; without "TIME " when no_time (log -o cat). */
void sh_audit_text(struct sh_buf *out, const struct sh_jobj *obj, bool no_time);

#endif
