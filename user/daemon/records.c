// SPDX-License-Identifier: GPL-2.0
/*
 * What the daemon writes to the audit log from the kernel side: violations
 * from the ring buffer (rate limited, each counted for its run), the
 * suppressed and lost counts, each also to the journal when it is on; and
 * the helpers every daemon record is written with.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "digest.h"
#include "names.h"
#include "records.h"
#include "util.h"

#define RB_BATCH    2048 /* events per ring-buffer pass before serving clients */

static int emit(struct sh_daemon *d, bool journal)
{
	int err = sh_audit_write(&d->audit, &d->buf);

	if (err && d->audit.lost_since_ok == 1)
		sh_log("cannot write audit log %s: %s (records are being lost; counted in status "
		       "and reported in the log once it can be written)", d->audit_path,
		       strerror(-err));
	if (journal && !d->buf.oom)
		sh_journal_send(&d->journal, d->buf.p, d->buf.len);
	sh_buf_reset(&d->buf);
	return err;
}

void sh_rec_emit(struct sh_daemon *d)
{
	emit(d, false);
}

void sh_rec_emit_journaled(struct sh_daemon *d)
{
	emit(d, true);
}

void sh_rec_str(struct sh_daemon *d, const char *key, const char *s)
{
	sh_json_str_field(&d->buf, key, (const uint8_t *)s, strlen(s));
}

void sh_rec_unload(struct sh_daemon *d, uint64_t tagged, bool force, int err)
{
	sh_audit_begin_meta(&d->buf, "unload");
	sh_json_uint_field(&d->buf, "tagged", tagged);
	sh_json_uint_field(&d->buf, "forced", force);
	sh_rec_str(d, "result", err ? "failed" : "ok");
	sh_json_end(&d->buf);
	sh_rec_emit(d);
}

/* What the rate limit held back in a second that is over. */
static void log_suppressed(void *ctx, const struct sh_rl_slot *r)
{
	struct sh_daemon *d = ctx;
	const char *pol = sh_enforcer_policy_name(d->enf, r->slot, r->policy);

	sh_audit_begin_meta(&d->buf, "suppressed");
	sh_json_uint_field(&d->buf, "count", r->suppressed);
	sh_rec_str(d, "policy", pol ? pol : "?");
	/* The tree, named as it was when counting began (a run may be over
	 * by now). */
	sh_rec_str(d, "cgroup", r->tree);
	if (r->budget) {
		/* Past its tree's budget: every key of that tree. */
		sh_rec_str(d, "reason", "tree budget");
	} else {
		sh_rec_str(d, "hook", sh_hook_name(r->hook));
		sh_rec_str(d, "op", sh_op_name(r->op));
		sh_json_str_field(&d->buf, "target", (const uint8_t *)r->target, r->target_len);
	}
	sh_json_uint_field(&d->buf, "window_s", 1);
	sh_json_end(&d->buf);
	/* Not written: the log-gap record says how many it counted. */
	if (emit(d, true))
		d->audit.counted_lost += r->suppressed;
}

/*
 * A pinned exec refused: the file at the rule's path is hashed again (a
 * package reinstalled, a file touched: another identity, the same
 * content). Where the content is the rule's, its identity is entered and
 * the next exec runs. The record gives the digest the rule pins and the
 * one found, and says whether it was entered. Done for the records the
 * rate limit admits: a tree refused in a loop is not hashed for each.
 */
static void digest_fields(struct sh_daemon *d, const struct sh_event *ev)
{
	char path[SH_EVENT_PATH_MAX], hex[SH_DIGEST_STR], why[160];
	uint32_t n = ev->path_len < sizeof(path) ? ev->path_len : sizeof(path) - 1;
	const struct sh_rule *r;
	uint8_t found[SH_DIGEST_LEN];
	bool not_entered = false;
	int rc;

	memcpy(path, ev->path, n);
	path[n] = 0;
	r = sh_enforcer_pinned_rule(d->enf, ev->slot, ev->policy, path);
	if (r) {
		sh_digest_format(r->digest, hex);
		sh_rec_str(d, "expected", hex);
	}
	rc = sh_enforcer_repin(d->enf, ev->slot, ev->policy, path, found, why, sizeof(why),
			       &not_entered);
	if (rc >= 0) {
		sh_digest_format(found, hex);
		sh_rec_str(d, "found", hex);
		if (not_entered)
			sh_rec_str(d, "not_entered", why);
	} else {
		sh_rec_str(d, "found_error", why);
	}
	if (rc > 0)
		sh_json_bool_field(&d->buf, "repinned", true);
}

int sh_rec_event(void *ctx, const struct sh_event *ev)
{
	struct sh_daemon *d = ctx;
	uint32_t run_id = 0;
	const char *cg = sh_enforcer_tag_path(d->enf, ev->origin, &run_id);

	if (ev->action == SH_EV_LEARN) {
		/* Reported once per object by the kernel: never rate limited,
		 * never counted as a violation; logged while the run's records
		 * fit what it may learn. */
		sh_audit_format_event(&d->buf, ev,
				      sh_enforcer_policy_name(d->enf, ev->slot, ev->policy),
				      cg, run_id);
		if (d->learning_record(d, run_id, &d->buf)) {
			sh_rec_emit(d);
			d->events_logged++;
		} else {
			sh_buf_reset(&d->buf);
		}
		return ++d->batch >= RB_BATCH ? -EAGAIN : 0;
	}
	if (cg && run_id)
		d->run_denied(d, run_id);
	sh_metrics_count(&d->metrics, sh_enforcer_policy_name(d->enf, ev->slot, ev->policy) ?: "?",
			 ev->hook, ev->action);
	if (sh_rl_admit(&d->rl, ev, cg)) {
		sh_audit_format_event_fields(&d->buf, ev,
					     sh_enforcer_policy_name(d->enf, ev->slot, ev->policy),
					     cg, run_id);
		if (ev->reason == SH_WHY_DIGEST)
			digest_fields(d, ev);
		sh_json_end(&d->buf);
		/* What a learning run was refused goes to its review too (the
		 * same record, once: repeats are the rate limit's to count). */
		if (run_id && d->learning_of(d, run_id))
			d->learning_record(d, run_id, &d->buf);
		sh_rec_emit_journaled(d);
		d->events_logged++;
	}
	/* In a storm, stop after a batch so clients are served in between. */
	if (++d->batch >= RB_BATCH)
		return -EAGAIN;
	return 0;
}

void sh_rec_drain(struct sh_daemon *d)
{
	do {
		d->batch = 0;
	} while (sh_enforcer_consume(d->enf) == -EAGAIN);
}

void sh_rec_dropped(struct sh_daemon *d)
{
	uint64_t reported = sh_enforcer_dropped_reported(d->enf);
	uint64_t c[SH_CNT_MAX];

	/* While the log cannot be written, the count waits in the kernel and
	 * is tried once a second (a try writes the gap record first). */
	if (d->audit.lost_since_ok) {
		uint64_t t = sh_now_ns(CLOCK_MONOTONIC);

		if (t - d->dropped_try_ns < 1000000000ull)
			return;
		d->dropped_try_ns = t;
	}
	sh_enforcer_counters(d->enf, c);
	if (c[SH_CNT_DROPPED] < reported) {
		/* The counts restarted (a build with another counter layout
		 * took over): report from zero again. */
		reported = 0;
		sh_enforcer_set_dropped_reported(d->enf, 0);
	}
	if (c[SH_CNT_DROPPED] > reported) {
		sh_audit_begin_meta(&d->buf, "lost");
		sh_json_uint_field(&d->buf, "count", c[SH_CNT_DROPPED] - reported);
		sh_json_uint_field(&d->buf, "total", c[SH_CNT_DROPPED]);
		sh_json_end(&d->buf);
		/* Not written: reported with the next count, once it is. */
		if (!emit(d, true))
			sh_enforcer_set_dropped_reported(d->enf, c[SH_CNT_DROPPED]);
	}
}

void sh_rec_attached(struct sh_daemon *d)
{
	unsigned ms = 0;
	bool a = sh_enforcer_attached(d->enf, &ms);

	/* Detached: said once the links are gone in the kernel. */
	if (a == d->attached_said || (!a && !sh_enforcer_resting(d->enf)))
		return;
	d->attached_said = a;
	sh_audit_begin_meta(&d->buf, a ? "programs-attached" : "programs-detached");
	if (a)
		sh_json_uint_field(&d->buf, "attach_ms", ms);
	else
		sh_rec_str(d, "why", "nothing tagged");
	sh_json_end(&d->buf);
	sh_rec_emit(d);
}

void sh_rec_unjudged(struct sh_daemon *d, bool now)
{
	struct sh_prog_count c[SH_MAX_PROGS];
	uint64_t t = sh_now_ns(CLOCK_MONOTONIC), own = 0;
	ssize_t n;

	if (!now && t - d->unjudged_ns < 1000000000ull)
		return;
	d->unjudged_ns = t;
	n = sh_enforcer_unjudged(d->enf, c);
	if (n < 0) {
		if (!d->unjudged_err)   /* once a spell of failures */
			sh_log("cannot read the programs' counts of calls let through unjudged: %s",
			       strerror((int)-n));
		d->unjudged_err = true;
		return;
	}
	if (d->unjudged_err)
		sh_log("the programs' counts of calls let through unjudged are readable again");
	d->unjudged_err = false;
	for (ssize_t i = 0; i < n; i++) {
		if (c[i].unjudged <= d->unjudged_seen[i])
			continue;
		sh_log("the kernel let %" PRIu64 " calls through %s unjudged (its BPF recursion "
		       "check): run this kernel with voluntary preemption, or a newer one",
		       c[i].unjudged - d->unjudged_seen[i], c[i].program);
		sh_audit_begin_meta(&d->buf, "unjudged");
		sh_rec_str(d, "program", c[i].program);
		sh_json_uint_field(&d->buf, "count", c[i].unjudged - d->unjudged_seen[i]);
		sh_json_uint_field(&d->buf, "total", c[i].unjudged);
		sh_json_end(&d->buf);
		sh_rec_emit_journaled(d);
		d->unjudged_seen[i] = c[i].unjudged;
	}
	for (ssize_t i = 0; i < n; i++)
		if (strcmp(c[i].program, SH_EARLIER_GEN))
			own += d->unjudged_seen[i];
	sh_enforcer_unjudged_reported(d->enf, own);
}

int64_t sh_rec_unjudged_total(struct sh_daemon *d)
{
	struct sh_prog_count c[SH_MAX_PROGS];
	ssize_t n = sh_enforcer_unjudged(d->enf, c);
	int64_t sum = 0;

	for (ssize_t i = 0; i < n; i++)
		sum += (int64_t)c[i].unjudged;
	return n < 0 ? n : sum;
}

int sh_rec_init(struct sh_daemon *d)
{
	return sh_rl_init(&d->rl, log_suppressed, d);
}
