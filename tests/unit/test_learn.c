// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the policy learned from a run's records (user/ctl/learn_gen.c):
 * which rules each kind of record becomes, how per-run names are folded
 * into directories, and that the written policy is one the parser accepts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "learn_gen.h"
#include "policy.h"

#define MAX_RECS 64

struct run {
	struct sh_jobj recs[MAX_RECS];
	size_t n;
	struct sh_buf pol, rev;
	size_t added;
};

static void rec(struct run *r, const char *json)
{
	assert_true(r->n < MAX_RECS);
	assert_int_equal(sh_json_parse_flat(json, strlen(json), &r->recs[r->n]), 0);
	r->n++;
}

/* A learn record: hook, op, reason, target, comm. */
static void lrec(struct run *r, const char *hook, const char *op, const char *reason,
		 const char *target, const char *comm)
{
	char j[1024];

	snprintf(j, sizeof(j), "{\"event\":\"learn\",\"action\":\"learn\",\"hook\":\"%s\","
		 "\"op\":\"%s\",\"reason\":\"%s\",\"target\":\"%s\",\"comm\":\"%s\"}",
		 hook, op, reason, target, comm);
	rec(r, j);
}

static void generate(struct run *r, const char *from_text)
{
	struct sh_learn_in in = { .name = "job", .workdir = "/srv/w", .command = "make all",
				  .from_text = from_text, .from_name = "base" };

	sh_buf_init(&r->pol);
	sh_buf_init(&r->rev);
	r->added = sh_learn_policy(&in, r->recs, r->n, &r->pol, &r->rev);
	assert_false(r->pol.oom);
}

/* The policy parses with no error. */
static void parses(struct run *r)
{
	char path[] = "/tmp/sharness-test-learn-XXXXXX";
	struct sh_policy p = {};
	struct sh_errors errs = {};
	int fd = mkstemp(path), err;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, r->pol.p, r->pol.len), (ssize_t)r->pol.len);
	close(fd);
	err = sh_policy_parse_file(path, &p, &errs);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msgs[i]);
	if (err)
		fprintf(stderr, "%s", r->pol.p);
	assert_int_equal(err, 0);
	assert_string_equal(p.name, "job");
	sh_policy_free(&p);
	sh_errors_free(&errs);
	unlink(path);
}

static bool has_line(const struct run *r, const char *start)
{
	for (const char *l = r->pol.p; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, start, strlen(start)))
			return true;
	return false;
}

static int lines(const struct run *r, const char *start)
{
	int n = 0;

	for (const char *l = r->pol.p; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		n += !strncmp(l, start, strlen(start));
	return n;
}

static void done(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		sh_jobj_free(&r->recs[i]);
	sh_buf_free(&r->pol);
	sh_buf_free(&r->rev);
}

static void test_per_run_names(void **state)
{
	(void)state;
	assert_true(sh_learn_per_run_name("ccAbCdEf.s"));
	assert_true(sh_learn_per_run_name("tmp.x7Kq2b9"));
	assert_true(sh_learn_per_run_name("12345"));
	assert_true(sh_learn_per_run_name("build-20261130.log"));
	assert_true(sh_learn_per_run_name("notes~"));
	assert_true(sh_learn_per_run_name("state.tmp"));
	assert_false(sh_learn_per_run_name("Makefile"));
	assert_false(sh_learn_per_run_name("main.c"));
	assert_false(sh_learn_per_run_name("libc.so.6"));
	assert_false(sh_learn_per_run_name("null"));
	assert_false(sh_learn_per_run_name("config"));
}

/* A denial of the learning run: event violation, action deny. */
static void drec(struct run *r, const char *hook, const char *op, const char *reason,
		 const char *target, const char *comm)
{
	char j[1024];

	snprintf(j, sizeof(j), "{\"event\":\"violation\",\"action\":\"deny\",\"hook\":\"%s\","
		 "\"op\":\"%s\",\"reason\":\"%s\",\"target\":\"%s\",\"comm\":\"%s\"}",
		 hook, op, reason, target, comm);
	rec(r, j);
}

/* A build from nothing: every kind of record, the rules it becomes. */
static void test_from_nothing(void **state)
{
	struct run r = {};

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/make", "sharnessctl");
	lrec(&r, "exec", "exec", "not allowed", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "gcc");
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/usr/bin/make", "make");
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/usr/lib/x86_64-linux-gnu/libc.so.6", "make");
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/usr/lib/x86_64-linux-gnu/gconv/UTF-16.so",
	     "iconv");
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/usr/lib/libweird.so", "make");
	lrec(&r, "file", "create", "not allowed", "/srv/w/a.o", "as");
	lrec(&r, "file", "open", "not allowed", "/srv/w/sub/b.o", "as");
	lrec(&r, "file", "create", "not allowed", "/tmp/ccAbCdEf.s", "cc1");
	lrec(&r, "file", "open", "not allowed", "/dev/null", "make");
	lrec(&r, "file", "create", "not allowed", "/home/u/.cache/x/12345", "make");
	lrec(&r, "connect", "connect", "not allowed", "/run/svc.sock", "curl");
	drec(&r, "file", "open", "device not allowed", "/dev/sda", "dd");
	drec(&r, "capability", "capable", "forbidden in a tree", "CAP_SYS_NICE", "nice");
	drec(&r, "mount", "mount", "forbidden in a tree", "/mnt", "mount");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"connect\",\"reason\":\"not allowed\","
		"\"target\":\"tcp 127.0.0.1:8080\",\"proto\":\"tcp\",\"address\":\"127.0.0.1\","
		"\"port\":8080,\"comm\":\"curl\"}");
	/* Not for learning: ignored. */
	rec(&r, "{\"event\":\"violation\",\"action\":\"audit\",\"hook\":\"exec\",\"op\":\"exec\","
		"\"reason\":\"not allowed\",\"target\":\"/usr/bin/python3\",\"comm\":\"sh\"}");
	rec(&r, "{\"event\":\"run-start\",\"run\":3}");
	generate(&r, NULL);
	parses(&r);
	assert_true(has_line(&r, "allow = /usr/bin/make "));
	assert_true(has_line(&r, "allow = /usr/lib/gcc/x86_64-linux-gnu/12/cc1 "));
	assert_false(has_line(&r, "allow = /usr/bin/python3"));
	/* Libraries by directory, nested ones folded; /usr/lib/ is never named whole. */
	assert_true(has_line(&r, "lib = /usr/lib/x86_64-linux-gnu/ "));
	assert_false(has_line(&r, "lib = /usr/lib/x86_64-linux-gnu/gconv/"));
	assert_true(has_line(&r, "lib = /usr/lib/libweird.so "));
	assert_false(has_line(&r, "lib = /usr/bin/"));
	assert_true(has_line(&r, "write = /srv/w/ "));
	assert_false(has_line(&r, "write = /srv/w/sub"));
	assert_true(has_line(&r, "write = /tmp/ "));
	assert_true(has_line(&r, "write = /dev/null "));
	assert_true(has_line(&r, "write = /home/u/.cache/x/ "));
	assert_true(has_line(&r, "allow = /run/svc.sock "));
	assert_true(has_line(&r, "deny = / "));
	assert_true(has_line(&r, "abstract = deny "));
	assert_true(has_line(&r, "connect = tcp 127.0.0.1 8080 "));
	assert_true(has_line(&r, "bind = none "));
	assert_false(has_line(&r, "connect = none"));
	assert_true(has_line(&r, "scope = tree "));
	/* Refused while learning: suggestions and a list, never rules. */
	assert_true(has_line(&r, "# device = /dev/sda "));
	assert_true(has_line(&r, "# capability = sys_nice "));
	assert_false(has_line(&r, "device ="));
	assert_false(has_line(&r, "capability ="));
	assert_non_null(strstr(r.pol.p, "no rule allows it: mount mount /mnt (forbidden in a tree)"));
	assert_non_null(strstr(r.pol.p, "# run by gcc"));
	assert_non_null(strstr(r.rev.p, "+ [exec] allow = /usr/bin/make"));
	done(&r);
}

/* Many files in one directory: the directory where it may be named whole;
 * a run that reached no network gets none of it; a socket kind [net]
 * refuses is listed, [net] stays. */
static void test_folds_and_net(void **state)
{
	struct run r = {}, s = {};
	char p[64];

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/cp", "sharnessctl");
	for (int i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "/var/lib/app/conf%c", 'a' + i);
		lrec(&r, "file", "create", "not allowed", p, "cp");
		snprintf(p, sizeof(p), "/etc/cron.d/job%c", 'a' + i);
		lrec(&r, "file", "create", "not allowed", p, "cp");
	}
	lrec(&r, "file", "open", "not allowed", "/var/lib/other/one", "cp");
	generate(&r, NULL);
	parses(&r);
	assert_true(has_line(&r, "write = /var/lib/app/ "));
	assert_false(has_line(&r, "write = /var/lib/app/confa"));
	assert_true(has_line(&r, "write = /var/lib/other/one "));
	/* /etc/cron.d/ is never named whole: its files one by one. */
	assert_true(has_line(&r, "write = /etc/cron.d/joba "));
	assert_false(has_line(&r, "write = /etc/cron.d/ "));
	assert_true(has_line(&r, "connect = none "));
	assert_true(has_line(&r, "bind = none "));
	done(&r);

	lrec(&s, "exec", "exec", "not allowed", "/usr/bin/ping", "sharnessctl");
	rec(&s, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"socket\",\"reason\":"
		"\"socket kind not allowed\",\"target\":\"packet raw\",\"comm\":\"ping\"}");
	rec(&s, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"connect\",\"reason\":\"not allowed\","
		"\"target\":\"tcp 10.0.0.1:22\",\"proto\":\"tcp\",\"address\":\"10.0.0.1\","
		"\"port\":22,\"comm\":\"ssh\"}");
	generate(&s, NULL);
	parses(&s);
	assert_true(has_line(&s, "connect = tcp 10.0.0.1 22 "));
	assert_non_null(strstr(s.pol.p, "the run used packet raw (ping), a socket kind [net] refuses"));
	done(&s);
}

/* What the tree controls cannot widen a rule: per-run names of exact
 * kinds, names under broad directories, odd bytes, a library directory
 * it can write, injected lines. */
static void test_poisoning(void **state)
{
	struct run r = {};

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/srv/w/out/a1234", "sh");
	lrec(&r, "connect", "connect", "not allowed", "/run/s1234.sock", "sh");
	lrec(&r, "file", "create", "not allowed", "/a1234", "sh");
	lrec(&r, "file", "create", "not allowed", "/usr/bin/x.tmp", "sh");
	lrec(&r, "file", "create", "not allowed", "/etc/ab12cd34", "sh");
	for (int i = 0; i < 6; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/etc/f%d", i);
		lrec(&r, "file", "create", "not allowed", p, "sh");
	}
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/x", "sh");
	lrec(&r, "mmap", "mmap-exec", "not allowed", "/srv/w/lib/x.so", "sh");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"file\",\"op\":\"create\",\"reason\":\"not allowed\","
		"\"target\":\"/\xef\xbf\xbd\",\"target_hex\":\"2fff\",\"comm\":\"sh\"}");
	lrec(&r, "file", "create", "not allowed", "/x\\n[file]\\nwrite = / #", "sh");
	drec(&r, "signal", "kill", "outside the tree", "1", "\\n[file]\\nwrite=/");
	lrec(&r, "file", "create", "not allowed", "/var/lib/app/my file", "a\\nwrite = /");
	generate(&r, NULL);
	parses(&r);
	/* Run from the work dir, which the tree writes, and not here to be
	 * hashed: no allow by name, a note. */
	assert_false(has_line(&r, "allow = /srv/w/out/a1234"));
	assert_true(has_line(&r, "# allow = /srv/w/out/a1234   # run by sh: the tree may write it"));
	assert_true(has_line(&r, "allow = /run/s1234.sock "));
	assert_false(has_line(&r, "allow = /run/ "));
	assert_true(has_line(&r, "write = /a1234 "));
	assert_true(has_line(&r, "write = /usr/bin/x.tmp "));
	assert_true(has_line(&r, "write = /etc/ab12cd34 "));
	assert_true(has_line(&r, "write = /etc/f0 "));
	assert_false(has_line(&r, "write = / "));
	assert_false(has_line(&r, "write = /\n"));
	assert_false(has_line(&r, "write = /etc/ "));
	assert_false(has_line(&r, "write = /usr/bin/ "));
	assert_false(has_line(&r, "write=/"));
	/* One [file] section: the one the generator opened. */
	assert_int_equal(lines(&r, "[file]"), 1);
	assert_int_equal(lines(&r, "write=/"), 0);
	assert_true(has_line(&r, "lib = /x "));
	/* The work directory /srv/w is writable: its library by name. */
	assert_true(has_line(&r, "lib = /srv/w/lib/x.so "));
	assert_false(has_line(&r, "lib = /srv/w/ "));
	assert_false(has_line(&r, "lib = /srv/w/lib/ "));
	assert_true(has_line(&r, "write = /var/lib/app/ "));
	assert_non_null(strstr(r.pol.p, "no rule can name it"));
	done(&r);
}

/* --from: the policy's own text, renamed, its tags commented out; only
 * what it refused is added; its deny rules stay. */
static void test_from_policy(void **state)
{
	static const char base[] =
		"[policy]\nname = base\ncgroup = /sys/fs/cgroup/base.slice\n"
		"[exec]\nallow = /usr/bin/bash\n[file]\nwrite = /srv/w/\ndeny = /root/.ssh/\n"
		"[signal]\nscope = tree\n";
	struct run r = {};

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/python3.11", "bash");
	drec(&r, "file", "open", "deny rule", "/root/.ssh/id_ed25519", "cat");
	drec(&r, "signal", "kill", "outside the tree", "1", "kill");
	generate(&r, base);
	parses(&r);
	assert_true(has_line(&r, "name = job "));
	assert_false(has_line(&r, "name = base"));
	assert_true(has_line(&r, "# cgroup = /sys/fs/cgroup/base.slice"));
	assert_true(has_line(&r, "allow = /usr/bin/bash"));
	assert_true(has_line(&r, "allow = /usr/bin/python3.11 "));
	assert_true(has_line(&r, "deny = /root/.ssh/"));
	assert_true(has_line(&r, "scope = tree"));
	assert_false(has_line(&r, "scope = any"));
	assert_non_null(strstr(r.pol.p, "by a deny rule: file open /root/.ssh/id_ed25519"));
	/* Only the new exec rule is added: nothing is assumed from nothing. */
	assert_int_equal(r.added, 1);
	assert_false(has_line(&r, "deny = / "));
	assert_false(has_line(&r, "connect = none"));
	done(&r);
}

/* `connect = none` / `bind = none`: the allowlist on with nothing in it;
 * with a rule of its kind, an error. */
static void test_net_none(void **state)
{
	struct run r = {};
	char path[] = "/tmp/sharness-test-none-XXXXXX";
	struct sh_policy p = {};
	struct sh_errors errs = {};
	int fd;

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/true", "sh");
	generate(&r, NULL);
	parses(&r);
	done(&r);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	dprintf(fd, "[policy]\nname = n\n[net]\nconnect = none\nconnect = tcp 10.0.0.1 22\n");
	close(fd);
	assert_int_equal(sh_policy_parse_file(path, &p, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msgs[0], "'connect = none' at line 4"));
	sh_errors_free(&errs);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_run_names),
		cmocka_unit_test(test_from_nothing),
		cmocka_unit_test(test_folds_and_net),
		cmocka_unit_test(test_poisoning),
		cmocka_unit_test(test_from_policy),
		cmocka_unit_test(test_net_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
