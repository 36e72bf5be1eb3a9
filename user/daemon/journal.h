/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Violations to the journal: the violation, suppressed and lost records of
 * the audit log, also sent to journald as entries with structured fields
 * (SHARNESS_POLICY=, SHARNESS_HOOK=, ...) so that journald-based shippers
 * carry them. On with --journal, off with --no-journal; by default on when
 * systemd started the daemon (INVOCATION_ID or JOURNAL_STREAM is set).
 */
#ifndef SH_JOURNAL_H
#define SH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define SH_JOURNAL_SOCKET "/run/systemd/journal/socket"
/* MESSAGE_ID of a violation, and of a record that says how many were
 * suppressed (rate limit) or lost (the kernel's ring was full). */
#define SH_JOURNAL_ID_VIOLATION "da73f70e30904673928ed38c82a39071"
#define SH_JOURNAL_ID_NOT_LOGGED "89e5d07e663f4e90a8c6e381f78fb232"

struct sh_journal {
	bool on;
	int fd;
	uint64_t sent;         /* entries journald took */
	uint64_t errors;       /* entries that could not be sent (counted, never waited for) */
	bool failing;          /* the last send failed: said once in the daemon's log */
	struct sh_buf buf;
};

/* mode: 1 on, 0 off, -1 the default (on when systemd started us).
 * 0, or -errno when on and no socket could be made. */
int sh_journal_init(struct sh_journal *j, int mode);
void sh_journal_close(struct sh_journal *j);
/* One audit record (its JSON line) as one journal entry, in journald's
 * native protocol; never blocks. */
void sh_journal_send(struct sh_journal *j, const char *line, size_t len);
/* The entry for a record, into out: 0, or -EINVAL if the line is not a
 * record, -ENOMEM. */
int sh_journal_encode(struct sh_buf *out, const char *line, size_t len);

#endif
