// SPDX-License-Identifier: GPL-2.0
/*
 * A reload: the policy directory read and checked against this host, the
 * learning runs' policies added, the set applied, and a "reload" record
 * either way; a set that fails leaves the previous one in force.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "control.h"
#include "learning.h"
#include "protect.h"
#include "records.h"
#include "reload.h"
#include "util.h"

void sh_daemon_log_errors(const struct sh_errors *errs, int fd)
{
	for (size_t i = 0; i < errs->n; i++) {
		if (fd >= 0)
			sh_ctl_reply(fd, 'E', "%s\n", errs->msgs[i]);
		else
			sh_log("%s", errs->msgs[i]);
	}
}

int sh_daemon_reload(struct sh_daemon *d, int fd)
{
	struct sh_policy_set set = {};
	struct sh_errors errs = {};
	int err;

	err = sh_policy_load_dir(d->policy_dir, &set, &errs);
	if (!err)
		err = sh_policy_check_host(&set, &errs, NULL);
	if (!err && (err = sh_learning_add_policies(d, &set)))
		sh_errors_add(&errs, err == -EEXIST ? "a policy takes the name of a learning run's "
			      "policy (learn.ID): rename it" : "out of memory");
	if (!err)
		err = sh_enforcer_apply(d->enf, &set, &errs);
	sh_audit_begin_meta(&d->buf, "reload");
	sh_rec_str(d, "result", err ? "failed" : "ok");
	if (err && errs.n)
		sh_rec_str(d, "error", errs.msgs[0]);
	sh_json_uint_field(&d->buf, "policies", err ? 0 : sh_enforcer_policies(d->enf)->n);
	sh_json_end(&d->buf);
	sh_rec_emit(d);
	if (err) {
		sh_daemon_log_errors(&errs, fd);
		if (fd >= 0)
			sh_ctl_reply(fd, 'E', "reload failed: the previous policy stays in force\n");
		sh_log("reload of %s failed; the previous policy stays in force", d->policy_dir);
	} else {
		d->metrics.dirty = true;
		sh_protect_own_files(d);   /* the new set's files; logged if it fails */
		if (fd >= 0)
			sh_ctl_reply(fd, 'O', "reloaded %zu policies from %s\n",
				     sh_enforcer_policies(d->enf)->n, d->policy_dir);
		sh_log("loaded %zu policies from %s", sh_enforcer_policies(d->enf)->n, d->policy_dir);
	}
	sh_policy_set_free(&set);
	sh_errors_free(&errs);
	return err ? SH_EXIT_POLICY : 0;
}
