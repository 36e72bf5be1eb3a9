// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the policy learned from a run's records (user/learn_gen.c):
 * which rules each kind of record becomes, how per-run names are folded
 * into directories, and that the written policy is one the parser accepts.
 */
#define _GNU_SOURCE
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
	lrec(&r, "file", "create", "not allowed", "/srv/w/a.o", "as");
	lrec(&r, "file", "open", "not allowed", "/srv/w/sub/b.o", "as");
	lrec(&r, "file", "create", "not allowed", "/tmp/ccAbCdEf.s", "cc1");
	lrec(&r, "file", "open", "not allowed", "/dev/null", "make");
	lrec(&r, "file", "open", "device not allowed", "/dev/pts/3", "bash");
	lrec(&r, "file", "create", "not allowed", "/home/u/.cache/x/12345", "make");
	lrec(&r, "connect", "connect", "not allowed", "/run/svc.sock", "curl");
	lrec(&r, "capability", "capable", "forbidden in a tree", "CAP_SYS_NICE", "nice");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"connect\",\"reason\":\"not allowed\","
		"\"target\":\"tcp 127.0.0.1:8080\",\"proto\":\"tcp\",\"address\":\"127.0.0.1\","
		"\"port\":8080,\"comm\":\"curl\"}");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"bind\",\"reason\":\"not allowed\","
		"\"target\":\"udp [::1]:0\",\"proto\":\"udp\",\"address\":\"::1\","
		"\"port\":0,\"comm\":\"srv\"}");
	/* Not learn records: ignored. */
	rec(&r, "{\"event\":\"violation\",\"hook\":\"exec\",\"op\":\"exec\",\"reason\":\"not allowed\","
		"\"target\":\"/usr/bin/python3\",\"comm\":\"sh\"}");
	rec(&r, "{\"event\":\"run-start\",\"run\":3}");
	generate(&r, NULL);
	parses(&r);
	assert_true(has_line(&r, "allow = /usr/bin/make "));
	assert_true(has_line(&r, "allow = /usr/lib/gcc/x86_64-linux-gnu/12/cc1 "));
	assert_false(has_line(&r, "allow = /usr/bin/python3"));
	/* Libraries by directory; a subdirectory folds into its parent. */
	assert_true(has_line(&r, "lib = /usr/lib/x86_64-linux-gnu/ "));
	assert_false(has_line(&r, "lib = /usr/lib/x86_64-linux-gnu/gconv/"));
	assert_false(has_line(&r, "lib = /usr/bin/"));
	assert_true(has_line(&r, "write = /srv/w/ "));
	assert_false(has_line(&r, "write = /srv/w/sub"));
	assert_true(has_line(&r, "write = /tmp/ "));
	assert_true(has_line(&r, "write = /dev/null "));
	assert_true(has_line(&r, "write = /home/u/.cache/x/ "));
	assert_true(has_line(&r, "device = /dev/pts/ "));
	assert_true(has_line(&r, "allow = /run/svc.sock "));
	assert_true(has_line(&r, "deny = / "));
	assert_true(has_line(&r, "abstract = deny "));
	assert_true(has_line(&r, "connect = tcp 127.0.0.1 8080 "));
	assert_true(has_line(&r, "bind = udp ::1 "));
	assert_true(has_line(&r, "scope = tree "));
	assert_true(has_line(&r, "capability = sys_nice "));
	assert_non_null(strstr(r.pol.p, "# run by gcc"));
	assert_non_null(strstr(r.rev.p, "+ [exec] allow = /usr/bin/make"));
	done(&r);
}

/* Many files in one directory: the directory; a run that reached no
 * network gets every destination denied; a socket kind [net] cannot
 * allow leaves [net] out. */
static void test_folds_and_net(void **state)
{
	struct run r = {}, s = {};
	char p[64];

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/cp", "sharnessctl");
	for (int i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "/etc/app/conf%c", 'a' + i);
		lrec(&r, "file", "create", "not allowed", p, "cp");
	}
	lrec(&r, "file", "open", "not allowed", "/etc/other/one", "cp");
	generate(&r, NULL);
	parses(&r);
	assert_true(has_line(&r, "write = /etc/app/ "));
	assert_false(has_line(&r, "write = /etc/app/confa"));
	assert_true(has_line(&r, "write = /etc/other/one "));
	assert_true(has_line(&r, "deny = any 0.0.0.0/0 "));
	assert_true(has_line(&r, "deny = any ::/0 "));
	done(&r);

	lrec(&s, "exec", "exec", "not allowed", "/usr/bin/ip", "sharnessctl");
	rec(&s, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"socket\",\"reason\":"
		"\"socket kind not allowed\",\"target\":\"netlink\",\"comm\":\"ip\"}");
	rec(&s, "{\"event\":\"learn\",\"hook\":\"net\",\"op\":\"connect\",\"reason\":\"not allowed\","
		"\"target\":\"tcp 10.0.0.1:22\",\"proto\":\"tcp\",\"address\":\"10.0.0.1\","
		"\"port\":22,\"comm\":\"ssh\"}");
	generate(&s, NULL);
	parses(&s);
	assert_false(has_line(&s, "connect = "));
	assert_false(has_line(&s, "deny = any"));
	assert_non_null(strstr(s.pol.p, "left out: the run used netlink by ip"));
	done(&s);
}

/* Names a policy cannot hold (spaces, '#', a newline, bytes that are not
 * UTF-8) become the directory above them; a process name with a newline
 * cannot end its comment line. */
static void test_odd_names(void **state)
{
	struct run r = {};

	(void)state;
	lrec(&r, "exec", "exec", "not allowed", "/usr/bin/sh", "a\\nwrite = /");
	lrec(&r, "file", "create", "not allowed", "/var/lib/app/my file", "sh");
	lrec(&r, "file", "create", "not allowed", "/var/lib/other/x#y", "sh");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"file\",\"op\":\"create\",\"reason\":\"not allowed\","
		"\"target\":\"/var/lib/bin/\xef\xbf\xbd\",\"target_hex\":\"2f76ff\",\"comm\":\"sh\"}");
	generate(&r, NULL);
	parses(&r);
	assert_true(has_line(&r, "write = /var/lib/app/ "));
	assert_true(has_line(&r, "write = /var/lib/other/ "));
	assert_true(has_line(&r, "write = /var/lib/bin/ "));
	assert_false(has_line(&r, "write = /\n"));
	assert_false(has_line(&r, "write = / "));
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
	lrec(&r, "file", "open", "deny rule", "/root/.ssh/id_ed25519", "cat");
	rec(&r, "{\"event\":\"learn\",\"hook\":\"signal\",\"op\":\"kill\",\"reason\":"
		"\"outside the tree\",\"target\":\"1\",\"comm\":\"kill\"}");
	generate(&r, base);
	parses(&r);
	assert_true(has_line(&r, "name = job "));
	assert_false(has_line(&r, "name = base"));
	assert_true(has_line(&r, "# cgroup = /sys/fs/cgroup/base.slice"));
	assert_true(has_line(&r, "allow = /usr/bin/bash"));
	assert_true(has_line(&r, "allow = /usr/bin/python3.11 "));
	assert_true(has_line(&r, "deny = /root/.ssh/"));
	assert_true(has_line(&r, "scope = any "));
	assert_non_null(strstr(r.pol.p, "kept refused by a deny rule: file open /root/.ssh/id_ed25519"));
	/* Only the new exec rule is added: nothing is assumed from nothing. */
	assert_int_equal(r.added, 1);
	assert_false(has_line(&r, "deny = / "));
	assert_false(has_line(&r, "deny = any"));
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_run_names),
		cmocka_unit_test(test_from_nothing),
		cmocka_unit_test(test_folds_and_net),
		cmocka_unit_test(test_odd_names),
		cmocka_unit_test(test_from_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
