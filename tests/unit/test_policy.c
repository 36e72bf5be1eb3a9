// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the policy parser and loader (user/policy/policy*.c) and the
 * rule-kind table (user/policy/rules.c).
 *
 * Usage: test_policy [DATA_DIR]   (else $SH_TEST_DATA, else tests/unit/data)
 * The shipped policies are read from DATA_DIR/../../../policies unless
 * $SH_POLICIES_DIR is set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "caps.h"
#include "compile.h"
#include "digest.h"
#include "policy.h"
#include "sharness.h"
#include "glob.h"
#include "util.h"

/* room for an expected message naming two files */
#define WANT_MAX (3 * PATH_MAX)

static const char *data_dir = "tests/unit/data";
static char policies_dir[PATH_MAX];

/* Path of a fixture; a few rotating buffers so several can be alive. */
static const char *dpath(const char *name)
{
	static char bufs[4][PATH_MAX];
	static int k;
	char *b = bufs[k++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", data_dir, name);
	return b;
}

static void dump_errors(const struct sh_errors *e)
{
	for (size_t i = 0; i < e->n; i++)
		print_message("  got: %s\n", e->msgs[i]);
}

/*
 * Parses fixture `name`, expects failure with exactly the given messages,
 * in order, each written as "LINE: message" (the file name is prepended).
 */
static void expect_errors(const char *name, int want_rc, size_t n, ...)
{
	struct sh_policy p;
	struct sh_errors e = { 0 };
	const char *path = dpath(name);
	va_list ap;
	int rc;

	rc = sh_policy_parse_file(path, &p, &e);
	if (rc != want_rc || e.n != n)
		dump_errors(&e);
	assert_int_equal(rc, want_rc);
	assert_int_equal(e.n, n);
	/* failure leaves nothing behind */
	assert_null(p.name);
	assert_null(p.file);
	assert_null(p.rules);
	assert_int_equal(p.nrules, 0);
	assert_null(p.cgroups);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++) {
		char want[2048];

		snprintf(want, sizeof(want), "%s:%s", path, va_arg(ap, const char *));
		assert_string_equal(e.msgs[i], want);
	}
	va_end(ap);
	sh_errors_free(&e);
	assert_null(e.msgs);
	assert_int_equal(e.n, 0);
}

static void parse_ok(const char *name, struct sh_policy *p)
{
	struct sh_errors e = { 0 };
	int rc = sh_policy_parse_file(dpath(name), p, &e);

	if (rc || e.n)
		dump_errors(&e);
	assert_int_equal(rc, 0);
	assert_int_equal(e.n, 0);
	sh_errors_free(&e);
}

static void assert_rule(const struct sh_policy *p, size_t i, enum sh_rule_kind kind,
			const char *path, bool dir, int line)
{
	assert_true(i < p->nrules);
	assert_int_equal(p->rules[i].kind, kind);
	assert_string_equal(p->rules[i].path, path);
	assert_int_equal(p->rules[i].dir, dir);
	assert_int_equal(p->rules[i].line, line);
}

/* ---- temporary files, for cases too large or too many for fixtures ---- */

static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/sh-test-policy-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	d = strdup(d);
	assert_non_null(d);
	return d;
}

static void write_file(const char *dir, const char *name, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(content, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void remove_tree(char *dir)
{
	char cmd[PATH_MAX + 16];

	assert_int_equal(strncmp(dir, "/tmp/sh-test-policy-", 20), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* ------------------------------------------------------------------------ */

static void test_full_example(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("full.policy", &p);
	assert_string_equal(p.name, "agent");
	assert_int_equal(p.name_line, 3);
	assert_string_equal(p.file, dpath("full.policy"));
	assert_int_equal(p.mode, SH_MODE_ENFORCE);
	assert_int_equal(p.ncgroups, 1);
	assert_string_equal(p.cgroups[0], "/sys/fs/cgroup/agent.slice");
	assert_int_equal(p.cgroup_lines[0], 5);
	assert_int_equal(p.nrules, 8);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/bash", false, 7);
	assert_rule(&p, 1, SH_EXEC_ALLOW, "/usr/lib/git-core/", true, 8);
	assert_rule(&p, 2, SH_EXEC_DENY, "/usr/bin/python3", false, 9);
	assert_rule(&p, 3, SH_FILE_WRITE, "/srv/agent/work/", true, 11);
	assert_rule(&p, 4, SH_FILE_WRITE, "/dev/null", false, 12);
	assert_rule(&p, 5, SH_FILE_DENY, "/root/.ssh/", true, 13);
	assert_rule(&p, 6, SH_CONNECT_DENY, "/tmp/tmux-0/", true, 15);
	assert_rule(&p, 7, SH_CONNECT_ALLOW, "/run/sharness/bash.sock", false, 16);
	assert_true(p.abstract_deny);
	assert_int_equal(p.signal_scope, SH_SCOPE_TREE);
	assert_int_equal(p.pids_max, 256);
	for (int k = SH_EXEC_ALLOW; k <= SH_CONNECT_DENY; k++)
		assert_true(sh_policy_has_kind(&p, (enum sh_rule_kind)k));
	sh_policy_free(&p);
	assert_null(p.name);
	assert_null(p.rules);
	assert_int_equal(p.nrules, 0);
	sh_policy_free(&p);   /* twice is fine */
	sh_policy_free(NULL);
}

static void test_defaults(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("minimal.policy", &p);
	assert_string_equal(p.name, "minimal");
	assert_int_equal(p.name_line, 2);
	assert_int_equal(p.mode, SH_MODE_ENFORCE);
	assert_int_equal(p.ncgroups, 0);
	assert_null(p.cgroups);
	assert_int_equal(p.nrules, 0);
	assert_false(p.abstract_deny);
	assert_false(p.from_exec);
	assert_int_equal(p.signal_scope, SH_SCOPE_ANY);
	assert_int_equal(p.connect_scope, SH_SCOPE_ANY);
	assert_int_equal(p.pids_max, 0);
	for (int k = SH_EXEC_ALLOW; k <= SH_CONNECT_DENY; k++)
		assert_false(sh_policy_has_kind(&p, (enum sh_rule_kind)k));
	sh_policy_free(&p);

	parse_ok("audit.policy", &p);
	assert_string_equal(p.name, "a-Z_0.9");
	assert_int_equal(p.name_line, 3);
	assert_int_equal(p.mode, SH_MODE_AUDIT);
	sh_policy_free(&p);
}

/* [limits] capability: names with or without CAP_, any case, lists and
 * repeated keys; unknown names and the ones every tree has are errors. */
static void test_capabilities(void **state)
{
	struct sh_policy p;
	struct sh_errors e = { 0 };

	(void)state;
	assert_int_equal(sh_policy_parse_file(dpath("caps.policy"), &p, &e), 0);
	assert_true(p.caps_allow == ((1ull << 23) | (1ull << 12) | (1ull << 25)));
	sh_policy_free(&p);
	sh_errors_free(&e);
	expect_errors("err_caps.policy", -EINVAL, 3,
		      "4: unknown capability 'sys_frobnicate' (want a name such as sys_nice or CAP_NET_ADMIN)",
		      "5: capability 'CAP_CHOWN' is allowed to every tree already",
		      "6: unknown capability 'cap_' (want a name such as sys_nice or CAP_NET_ADMIN)");
	assert_string_equal(sh_cap_name(21), "CAP_SYS_ADMIN");
	assert_null(sh_cap_name(41));
	assert_int_equal(sh_cap_parse("cap_bpf"), 39);
	assert_int_equal(sh_cap_parse("bpf"), 39);
	assert_int_equal(sh_cap_parse(""), -1);
}

/* [net] rules: addresses kept as IPv6 (IPv4 mapped), prefixes, ports. */
static void test_net_rules(void **state)
{
	static const uint8_t gw[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	struct sh_policy p;

	(void)state;
	parse_ok("net.policy", &p);
	assert_int_equal(p.nnet, 7);   /* the repeated rule is kept once */
	assert_int_equal(p.net[0].kind, SH_NETR_CONNECT);
	assert_int_equal(p.net[0].proto, SH_PROTO_TCP);
	assert_memory_equal(p.net[0].addr, gw, 16);
	assert_int_equal(p.net[0].prefix, 128);
	assert_int_equal(p.net[0].port_lo, 8080);
	assert_int_equal(p.net[0].port_hi, 8080);
	assert_int_equal(p.net[0].line, 4);
	assert_int_equal(p.net[1].prefix, 96 + 8);
	assert_int_equal(p.net[2].proto, SH_PROTO_UDP);
	assert_int_equal(p.net[3].prefix, 128);
	assert_int_equal(p.net[3].addr[15], 1);
	assert_int_equal(p.net[3].port_lo, 3000);
	assert_int_equal(p.net[3].port_hi, 3999);
	assert_int_equal(p.net[4].kind, SH_NETR_DENY);
	assert_int_equal(p.net[4].proto, SH_PROTO_ANY);
	assert_int_equal(p.net[4].port_lo, 0);
	assert_int_equal(p.net[4].port_hi, 65535);
	assert_int_equal(p.net[5].kind, SH_NETR_BIND);
	assert_int_equal(p.net[6].prefix, 0);   /* any: both families */
	sh_policy_free(&p);
	expect_errors("err_net.policy", -EINVAL, 10,
		      "4: '10.1.2.3/8' has address bits set past its prefix",
		      "5: bad protocol 'tcpx' (want tcp, udp or any)",
		      "6: bad port '70000' (want PORT or LOW-HIGH, 0..65535)",
		      "7: bad port '5-3' (want PORT or LOW-HIGH, 0..65535)",
		      "8: bad address 'nothere' (want an IPv4 or IPv6 address, with /PREFIX or not, "
		      "or any)",
		      "9: bad prefix length in '1.2.3.4/33' (want 0..32)",
		      "10: bad [net] rule 'tcp 1.2.3.4 80 extra' (want PROTO ADDRESS[/PREFIX] "
		      "[PORT[-PORT]], e.g. 'tcp 10.0.0.0/8 443')",
		      "12: conflicting [net] rules for 'tcp 127.0.0.1 8080': connect here, deny at "
		      "line 11",
		      "13: bad [net] rule 'udp' (want PROTO ADDRESS[/PREFIX] [PORT[-PORT]], e.g. "
		      "'tcp 10.0.0.0/8 443')",
		      "14: unknown key 'listen' in [net]");
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(sh_rule_kind_name(SH_EXEC_ALLOW), "exec allow");
	assert_string_equal(sh_rule_kind_name(SH_EXEC_DENY), "exec deny");
	assert_string_equal(sh_rule_kind_name(SH_FILE_WRITE), "file write");
	assert_string_equal(sh_rule_kind_name(SH_FILE_DENY), "file deny");
	assert_string_equal(sh_rule_kind_name(SH_CONNECT_ALLOW), "connect allow");
	assert_string_equal(sh_rule_kind_name(SH_CONNECT_DENY), "connect deny");
	assert_string_equal(sh_rule_kind_name(SH_FILE_DEVICE), "file device");
	assert_string_equal(sh_rule_kind_name((enum sh_rule_kind)99), "unknown");
	assert_false(sh_policy_has_kind(NULL, SH_EXEC_ALLOW));
}

static void test_errors_api(void **state)
{
	struct sh_errors e = { 0 };

	(void)state;
	sh_errors_add(&e, "%s:%d: %s", "f.policy", 7, "first");
	sh_errors_add(&e, "second %zu", (size_t)2);
	sh_errors_add(NULL, "ignored");
	assert_int_equal(e.n, 2);
	assert_string_equal(e.msgs[0], "f.policy:7: first");
	assert_string_equal(e.msgs[1], "second 2");
	sh_errors_free(&e);
	assert_int_equal(e.n, 0);
	assert_null(e.msgs);
	sh_errors_free(&e);
	sh_errors_free(NULL);
}

static void test_unknown_section(void **state)
{
	(void)state;
	/* the keys of the unknown section are not reported a second time */
	expect_errors("err_unknown_section.policy", -EINVAL, 1, "3: unknown section [network]");
}

static void test_unknown_key(void **state)
{
	(void)state;
	expect_errors("err_unknown_key.policy", -EINVAL, 1, "4: unknown key 'alow' in [exec]");
}

static void test_key_outside_section(void **state)
{
	(void)state;
	expect_errors("err_outside_section.policy", -EINVAL, 1,
		      "2: key 'name' outside any section");
}

static void test_missing_name(void **state)
{
	(void)state;
	expect_errors("err_missing_name.policy", -EINVAL, 1, "3: missing 'name' in [policy]");
	expect_errors("err_no_policy_section.policy", -EINVAL, 1,
		      "1: missing [policy] section with 'name'");
	expect_errors("err_empty.policy", -EINVAL, 1, "1: missing [policy] section with 'name'");
}

static void test_bad_name(void **state)
{
	(void)state;
	expect_errors("err_bad_name.policy", -EINVAL, 1,
		      "2: bad policy name 'my policy' (want 1-63 characters of A-Z a-z 0-9 _ . -, not '.' or '..')");
	expect_errors("err_bad_name_dotdot.policy", -EINVAL, 1,
		      "2: bad policy name '..' (want 1-63 characters of A-Z a-z 0-9 _ . -, not '.' or '..')");
	expect_errors("err_bad_name_slash.policy", -EINVAL, 1,
		      "2: bad policy name '../etc' (want 1-63 characters of A-Z a-z 0-9 _ . -, not '.' or '..')");
}

static void test_name_length(void **state)
{
	char *dir = make_tmpdir(), buf[256], path[PATH_MAX], want[WANT_MAX];
	char n63[64], n64[65];
	struct sh_policy p;
	struct sh_errors e = { 0 };

	(void)state;
	memset(n63, 'n', 63);
	n63[63] = '\0';
	memset(n64, 'n', 64);
	n64[64] = '\0';
	snprintf(buf, sizeof(buf), "[policy]\nname = %s\n", n63);
	write_file(dir, "ok.policy", buf);
	snprintf(buf, sizeof(buf), "[policy]\nname = %s\n", n64);
	write_file(dir, "long.policy", buf);

	snprintf(path, sizeof(path), "%s/ok.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), 0);
	assert_string_equal(p.name, n63);
	sh_policy_free(&p);

	snprintf(path, sizeof(path), "%s/long.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want),
		 "%s:2: bad policy name '%s' (want 1-63 characters of A-Z a-z 0-9 _ . -, not '.' or '..')",
		 path, n64);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
	remove_tree(dir);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	expect_errors("err_dup_keys.policy", -EINVAL, 2,
		      "4: duplicate key 'name' in [policy] (first at line 2)",
		      "5: duplicate key 'mode' in [policy] (first at line 3)");
}

static void test_bad_mode(void **state)
{
	(void)state;
	/* values are case-sensitive */
	expect_errors("err_bad_mode.policy", -EINVAL, 1,
		      "3: bad mode 'Enforce' (want enforce or audit)");
}

/* held-from: entry (the default) or exec, once. */
static void test_held_from(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("held_from_exec.policy", &p);
	assert_true(p.from_exec);
	sh_policy_free(&p);
	expect_errors("err_held_from.policy", -EINVAL, 2,
		      "3: bad held-from 'Exec' (want entry or exec)",
		      "4: duplicate key 'held-from' in [policy] (first at line 3)");
}

static void test_relative_paths(void **state)
{
	(void)state;
	expect_errors("err_relative.policy", -EINVAL, 4,
		      "4: relative path 'usr/bin/bash' (must start with '/')",
		      "6: relative path './work/' (must start with '/')",
		      "8: relative path 'tmp/sock' (must start with '/')",
		      "10: relative path 'sys/fs/cgroup/x' (must start with '/')");
}

static void test_noncanonical_paths(void **state)
{
	(void)state;
	expect_errors("err_noncanonical.policy", -EINVAL, 8,
		      "4: non-canonical path '/usr//bin/bash' (contains '//')",
		      "5: non-canonical path '/usr/./bin/bash' (contains '/./')",
		      "6: non-canonical path '/usr/lib/../bin/bash' (contains '/../')",
		      "7: non-canonical path '/usr/bin/.' (ends in '/.')",
		      "8: non-canonical path '/usr/bin/..' (ends in '/..')",
		      "9: non-canonical path '//usr/bin/' (contains '//')",
		      "10: non-canonical path '/usr/bin//' (contains '//')",
		      "11: non-canonical path '/usr/./' (contains '/./')");
}

static void test_canonical_edge_cases(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("canonical_edge.policy", &p);
	assert_int_equal(p.nrules, 8);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/", true, 4);
	assert_rule(&p, 1, SH_EXEC_ALLOW, "/usr/.hidden", false, 5);
	assert_rule(&p, 2, SH_EXEC_ALLOW, "/usr/..dots/", true, 6);
	assert_rule(&p, 3, SH_EXEC_ALLOW, "/usr/bin./", true, 7);
	assert_rule(&p, 4, SH_EXEC_ALLOW, "/usr/bin/...", false, 8);
	assert_rule(&p, 5, SH_EXEC_ALLOW, "/opt/my tool/bin/x", false, 9);
	/* '#' and ';' start a comment only after whitespace */
	assert_rule(&p, 6, SH_EXEC_ALLOW, "/opt/a#b", false, 10);
	assert_rule(&p, 7, SH_EXEC_ALLOW, "/opt/c;d", false, 11);
	sh_policy_free(&p);
}

static void test_empty_values(void **state)
{
	(void)state;
	expect_errors("err_empty_value.policy", -EINVAL, 4, "3: empty value for 'mode'",
		      "5: empty value for 'allow'", "7: empty value for 'deny'",
		      "9: empty value for 'scope'");
}

static void test_control_character(void **state)
{
	(void)state;
	expect_errors("err_control.policy", -EINVAL, 1, "4: control character in value for 'allow'");
}

static void test_rule_path_max(void **state)
{
	struct sh_policy p;
	char want[2048], want2[2048];
	char c191[192], d191[192];

	(void)state;
	parse_ok("path_max_ok.policy", &p);
	assert_int_equal(p.nrules, 2);
	assert_int_equal(strlen(p.rules[0].path), SH_RULE_PATH_MAX);
	assert_true(p.rules[0].dir);
	assert_int_equal(strlen(p.rules[1].path), SH_RULE_PATH_MAX);
	assert_false(p.rules[1].dir);
	sh_policy_free(&p);

	c191[0] = '/';
	memset(c191 + 1, 'c', 189);
	c191[190] = '/';
	c191[191] = '\0';
	d191[0] = '/';
	memset(d191 + 1, 'd', 190);
	d191[191] = '\0';
	snprintf(want, sizeof(want), "4: path too long (191 bytes, max 190): '%s'", c191);
	snprintf(want2, sizeof(want2), "5: path too long (191 bytes, max 190): '%s'", d191);
	expect_errors("err_path_max.policy", -EINVAL, 2, want, want2);
}

/* Each rule keeps the path the kernel reports: symlinks resolved when the
 * path exists here, as written otherwise. */
static void test_rule_keys(void **state)
{
	char *dir = make_tmpdir(), real[PATH_MAX], link[PATH_MAX], buf[4 * PATH_MAX];
	char path[PATH_MAX], want[PATH_MAX + 1];
	struct sh_policy p;
	struct sh_errors e = { 0 };

	(void)state;
	snprintf(real, sizeof(real), "%s/real", dir);
	assert_int_equal(mkdir(real, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(real, link), 0);
	snprintf(buf, sizeof(buf),
		 "[policy]\nname = k\n[exec]\nallow = %s/\nallow = %s\n"
		 "allow = /nonexistent/sharness/x\n[file]\nwrite = /\n", link, link);
	write_file(dir, "k.policy", buf);
	snprintf(path, sizeof(path), "%s/k.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), 0);
	assert_int_equal(p.nrules, 4);
	assert_non_null(realpath(real, path));
	snprintf(want, sizeof(want), "%s/", path);
	assert_string_equal(p.rules[0].key, want);
	assert_int_equal(p.rules[0].keylen, strlen(want));
	assert_string_equal(p.rules[1].key, path);
	assert_string_equal(p.rules[2].key, "/nonexistent/sharness/x");
	assert_string_equal(p.rules[3].key, "/");
	assert_int_equal(p.rules[3].keylen, 1);
	sh_policy_free(&p);
	sh_errors_free(&e);
	remove_tree(dir);
}

/* Exec allows pinned by digest: parsed, shared pins for one digest in the
 * compiled values, and every malformed or misplaced digest refused. */
static void test_digests(void **state)
{
	static const char abc[] =
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	char *dir = make_tmpdir(), path[PATH_MAX], buf[4 * PATH_MAX], hex[SH_DIGEST_STR];
	struct sh_policy p;
	struct sh_errors e = { 0 };
	struct sh_compiled c;
	struct sh_file_id id;
	uint8_t d[SH_DIGEST_LEN];
	uint32_t pins[3] = { 0 };

	(void)state;
	/* The digest of a file: SHA-256 of "abc", and its identity. */
	write_file(dir, "abc", "abc");
	snprintf(path, sizeof(path), "%s/abc", dir);
	assert_int_equal(sh_digest_file(path, 0, 0, d, &id, buf, sizeof(buf)), 0);
	sh_digest_format(d, hex);
	assert_string_equal(hex, abc);
	assert_int_equal(id.size, 3);
	assert_true(id.dev != 0 && id.ino != 0);
	assert_int_equal(sh_digest_file(dir, 0, 0, d, NULL, buf, sizeof(buf)), -EINVAL);
	assert_string_equal(buf, "not a regular file");
	assert_int_equal(sh_digest_parse("sha256:00", d), -EINVAL);
	assert_int_equal(sh_digest_parse("sha1:ba7816bf", d), -EINVAL);

	snprintf(buf, sizeof(buf), "[policy]\nname = d\n[exec]\nallow = /usr/bin/a %s\n"
		 "allow = /usr/bin/b   %s   # the same\nallow = /usr/bin/c sha256:%064d\n"
		 "allow = /usr/bin/e\n", abc, abc, 0);
	write_file(dir, "d.policy", buf);
	snprintf(path, sizeof(path), "%s/d.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), 0);
	assert_int_equal(p.nrules, 4);
	assert_string_equal(p.rules[0].path, "/usr/bin/a");
	assert_string_equal(p.rules[1].path, "/usr/bin/b");
	assert_true(p.rules[0].pinned && p.rules[1].pinned && p.rules[2].pinned);
	assert_false(p.rules[3].pinned);
	sh_digest_format(p.rules[1].digest, hex);
	assert_string_equal(hex, abc);
	assert_int_equal(sh_compile_rules(&p, 1, 3, &c, &e), 0);
	for (size_t i = 0; i < c.n; i++)
		for (int r = 0; r < 3; r++)
			if (c.rules[i].rule == &p.rules[r])
				pins[r] = c.rules[i].act;
	assert_int_equal(pins[0], SH_ACT_ALLOW | 1u << SH_RULE_PIN_SHIFT);
	assert_int_equal(pins[1], SH_ACT_ALLOW | 1u << SH_RULE_PIN_SHIFT);
	assert_int_equal(pins[2], SH_ACT_ALLOW | 3u << SH_RULE_PIN_SHIFT);
	assert_int_equal(sh_compile_pin(&p, &p.rules[3]), 0);
	sh_compile_free(&c);
	sh_policy_free(&p);

	snprintf(buf, sizeof(buf), "[policy]\nname = d\n[exec]\nallow = /usr/bin/a sha256:12\n"
		 "allow = /usr/bin/ %s\ndeny = /usr/bin/f %s\nallow = /usr/bin/g sha512:ab\n"
		 "allow = /usr/bin/a %s\nallow = /usr/bin/h %s\nallow = /usr/bin/h\n"
		 "allow = /usr/bin/true %s\nallow = /bin/true\n",
		 abc, abc, abc, abc, abc);
	write_file(dir, "d.policy", buf);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
	assert_int_equal(e.n, access("/bin", F_OK) == 0 && realpath("/bin/true", buf) &&
				 !strcmp(buf, "/usr/bin/true") ? 6 : 5);
	assert_non_null(strstr(e.msgs[0], ":4: bad digest 'sha256:12'"));
	assert_non_null(strstr(e.msgs[1], ":5: a digest pins a file, not a directory"));
	assert_non_null(strstr(e.msgs[2], ":6: a digest pins only an [exec] allow rule"));
	assert_non_null(strstr(e.msgs[3], ":7: bad digest 'sha512:ab'"));
	assert_non_null(strstr(e.msgs[4], ":10: conflicting digests for '/usr/bin/h'"));
	if (e.n == 6)   /* a merged /usr: /bin/true is /usr/bin/true */
		assert_non_null(strstr(e.msgs[5], ":12: conflicting digests for '/bin/true': "
					"line 11 names the same file"));
	sh_errors_free(&e);
	remove_tree(dir);
}

/* A rule that resolves to more than a rules-map key holds is refused while
 * the file is read (as `policy check` and a reload both read it). */
static void test_rule_key_too_long(void **state)
{
	char *dir = make_tmpdir(), deep[PATH_MAX], link[PATH_MAX], buf[4 * PATH_MAX];
	char path[PATH_MAX], want[WANT_MAX];
	struct sh_errors e = { 0 };
	struct sh_policy p;
	size_t n;

	(void)state;
	/* a directory whose path with its NUL is one byte too long for a key */
	n = (size_t)snprintf(deep, sizeof(deep), "%s/", dir);
	memset(deep + n, 'x', 120);
	deep[n + 120] = '\0';
	assert_int_equal(mkdir(deep, 0700), 0);
	strcat(deep, "/");
	n = strlen(deep);
	memset(deep + n, 'y', SH_PATH_KEY_MAX - 1 - n);
	deep[SH_PATH_KEY_MAX - 1] = '\0';
	assert_int_equal(mkdir(deep, 0700), 0);
	snprintf(link, sizeof(link), "%s/l", dir);
	assert_int_equal(symlink(deep, link), 0);
	snprintf(buf, sizeof(buf), "[policy]\nname = k\n[exec]\nallow = %s\nallow = %s/\n", link,
		 link);
	write_file(dir, "k.policy", buf);
	snprintf(path, sizeof(path), "%s/k.policy", dir);
	/* the exact rule fits (247 bytes and its NUL), the directory does not */
	snprintf(want, sizeof(want), "%s:5: rule path %s/ resolves to %d bytes, more than %d",
		 path, link, SH_PATH_KEY_MAX, SH_PATH_KEY_MAX - 1);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
	if (e.n != 1)
		dump_errors(&e);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
	remove_tree(dir);
}

/* The rule-kind table: a row per kind, named "<section> <key>", found by
 * its section and key; kinds of one trie conflict, the others never. */
static void test_rule_kind_table(void **state)
{
	char name[64];

	(void)state;
	for (int k = 0; k < SH_RULE_KIND_COUNT; k++) {
		const struct sh_rule_kind_info *ki = sh_rule_kind_info((enum sh_rule_kind)k);
		enum sh_rule_kind found;

		assert_non_null(ki);
		snprintf(name, sizeof(name), "%s %s", ki->section, ki->key);
		assert_string_equal(sh_rule_kind_name((enum sh_rule_kind)k), name);
		assert_true(sh_rule_kind_lookup(ki->section, ki->key, &found));
		assert_int_equal(found, k);
		assert_true(sh_rule_section(ki->section));
		assert_true(ki->map_kind != 0);
		assert_true(ki->action != 0);
	}
	assert_null(sh_rule_kind_info(SH_RULE_KIND_COUNT));
	assert_false(sh_rule_kind_lookup("exec", "write", &(enum sh_rule_kind){ 0 }));
	assert_false(sh_rule_section("limits"));
	assert_true(sh_rule_same_trie(SH_EXEC_ALLOW, SH_EXEC_LIB));
	assert_true(sh_rule_same_trie(SH_FILE_WRITE, SH_FILE_DENY));
	assert_false(sh_rule_same_trie(SH_FILE_WRITE, SH_FILE_DEVICE));
	assert_false(sh_rule_same_trie(SH_EXEC_DENY, SH_CONNECT_DENY));
	assert_false(sh_rule_same_trie(SH_EXEC_DENY, SH_RULE_KIND_COUNT));
}

static void test_scalar_values(void **state)
{
	struct sh_policy p;

	(void)state;
	expect_errors("err_values.policy", -EINVAL, 3,
		      "4: bad abstract value 'yes' (want allow or deny)",
		      "6: bad scope 'all' (want tree or any)",
		      "8: bad pids-max '0' (want an integer 1..4194304)");
	expect_errors("err_pids.policy", -EINVAL, 1,
		      "4: bad pids-max '-1' (want an integer 1..4194304)");
	expect_errors("err_pids2.policy", -EINVAL, 1,
		      "4: bad pids-max '12a' (want an integer 1..4194304)");
	expect_errors("err_pids3.policy", -EINVAL, 1,
		      "4: bad pids-max '99999999999999999999999' (want an integer 1..4194304)");
	expect_errors("err_pids4.policy", -EINVAL, 1,
		      "4: bad pids-max '4194305' (want an integer 1..4194304)");

	expect_errors("err_connect_scope.policy", -EINVAL, 2,
		      "4: bad scope 'host' (want tree or any)",
		      "5: duplicate key 'scope' in [connect] (first at line 4)");
	expect_errors("err_private_tmp.policy", -EINVAL, 1,
		      "5: private-tmp is given to runs only: a cgroup = line (line 3) would hold "
		      "a tree to this policy with the host's /tmp");
	expect_errors("err_private_tmp_handle.policy", -EINVAL, 1,
		      "5: private-tmp and capability = dac_read_search do not go together: "
		      "open_by_handle_at reaches the host's /tmp under the run's own");
	parse_ok("private_tmp.policy", &p);
	assert_int_equal(p.limits.private_tmp, 64ull << 20);
	sh_policy_free(&p);
	parse_ok("connect_scope.policy", &p);
	assert_int_equal(p.connect_scope, SH_SCOPE_TREE);
	assert_int_equal(p.signal_scope, SH_SCOPE_ANY);
	sh_policy_free(&p);

	parse_ok("values_edge.policy", &p);
	assert_false(p.abstract_deny);
	assert_int_equal(p.signal_scope, SH_SCOPE_ANY);
	assert_int_equal(p.pids_max, 4194304);
	sh_policy_free(&p);
	parse_ok("pids_min.policy", &p);
	assert_int_equal(p.pids_max, 1);
	sh_policy_free(&p);
}

static void test_conflicting_rules(void **state)
{
	(void)state;
	expect_errors("err_conflict.policy", -EINVAL, 3,
		      "5: conflicting rules for '/usr/bin/python3': exec deny here, exec allow at line 4",
		      "8: conflicting rules for '/srv/x/': file deny here, file write at line 7",
		      "11: conflicting rules for '/run/a.sock': connect allow here, connect deny at line 10");
}

/* Rules whose names differ but resolve to one (a symlink of the host), and
 * rules that resolve to the reading process's own /proc files. */
static void test_resolved_conflicts(void **state)
{
	char environ[256], mounts[256];
	int pid = (int)getpid();

	(void)state;
	snprintf(environ, sizeof(environ),
		 "6: rule path /proc/self/environ resolves to /proc/%d/environ, a file of the "
		 "process that read the policy: the kernel names each process's /proc files by its "
		 "own pid, so no rule can name them for every process", pid);
	snprintf(mounts, sizeof(mounts),
		 "7: rule path /etc/mtab resolves to /proc/%d/mounts, a file of the process that "
		 "read the policy: the kernel names each process's /proc files by its own pid, so "
		 "no rule can name them for every process", pid);
	expect_errors("err_resolved.policy", -EINVAL, 3,
		      "5: conflicting rules for '/bin/': file write here, file deny at line 4 "
		      "('/usr/bin/'): both name /usr/bin/",
		      environ, mounts);
}

/* paths = container: rules as written, whatever the host's symlinks; it
 * comes before the rules; no digest (a file of the host's). */
static void test_container_paths(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("container_paths.policy", &p);
	assert_true(p.container_paths);
	assert_int_equal(p.nrules, 2);
	assert_string_equal(p.rules[0].key, "/bin/busybox");
	assert_string_equal(p.rules[1].key, "/bin/");
	sh_policy_free(&p);
	expect_errors("err_paths_late.policy", -EINVAL, 1,
		      "6: paths must come before the first rule (line 4): it decides how every "
		      "rule names its file");
	expect_errors("err_paths_self.policy", -EINVAL, 1,
		      "6: rule path /proc/self/environ names a process's own /proc files: the "
		      "kernel names them by its pid, so no rule can name them for every process");
	expect_errors("err_paths_pin.policy", -EINVAL, 1,
		      "5: a digest pins a file of this host, and paths = container names the "
		      "container's: '/bin/busybox'");
}

static void test_no_conflict(void **state)
{
	struct sh_policy p;

	(void)state;
	/* a directory and a file in it, "/x" and "/x/", or one path in two
	 * different sections are not conflicts */
	parse_ok("no_conflict.policy", &p);
	assert_int_equal(p.nrules, 6);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/", true, 4);
	assert_rule(&p, 1, SH_EXEC_DENY, "/usr/bin/python3", false, 5);
	assert_rule(&p, 2, SH_EXEC_ALLOW, "/srv/x", false, 6);
	assert_rule(&p, 3, SH_FILE_WRITE, "/srv/x", false, 8);
	assert_rule(&p, 4, SH_FILE_DENY, "/srv/x/", true, 9);
	assert_rule(&p, 5, SH_CONNECT_ALLOW, "/srv/x", false, 11);
	sh_policy_free(&p);
}

static void test_dedup(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("dedup.policy", &p);
	assert_int_equal(p.ncgroups, 2);
	assert_string_equal(p.cgroups[0], "/sys/fs/cgroup/a");
	assert_int_equal(p.cgroup_lines[0], 3);
	assert_string_equal(p.cgroups[1], "/sys/fs/cgroup/b");
	assert_int_equal(p.cgroup_lines[1], 4);
	assert_int_equal(p.nrules, 3);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/true", false, 7);
	assert_rule(&p, 1, SH_EXEC_ALLOW, "/usr/bin/cat", false, 8);
	assert_rule(&p, 2, SH_FILE_DENY, "/root/.ssh/", true, 11);
	sh_policy_free(&p);
}

static void test_multiple_errors(void **state)
{
	(void)state;
	expect_errors("err_multi.policy", -EINVAL, 11,
		      "1: key 'foo' outside any section",
		      "3: bad policy name 'a b' (want 1-63 characters of A-Z a-z 0-9 _ . -, not '.' or '..')",
		      "4: bad mode 'fast' (want enforce or audit)",
		      "5: unknown key 'bogus' in [policy]",
		      "7: relative path 'usr/bin' (must start with '/')",
		      "8: non-canonical path '/usr//bin' (contains '//')",
		      "10: conflicting rules for '/x': exec deny here, exec allow at line 9",
		      "11: syntax error: expected 'key = value'",
		      "12: unknown section [nope]",
		      "15: bad scope 'all' (want tree or any)",
		      "17: bad pids-max '0' (want an integer 1..4194304)");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	expect_errors("err_syntax.policy", -EINVAL, 4,
		      "3: syntax error: expected 'key = value'",
		      "4: syntax error: missing key name before '='",
		      "5: unterminated section header (missing ']')",
		      "7: unexpected text after section header");
}

static void test_line_length(void **state)
{
	struct sh_policy p;
	char f190[191];

	(void)state;
	/* lines 3 (a comment) and 5 (a rule) are exactly 199 bytes long */
	f190[0] = '/';
	memset(f190 + 1, 'f', 189);
	f190[190] = '\0';
	parse_ok("line_max_ok.policy", &p);
	assert_int_equal(p.nrules, 1);
	assert_rule(&p, 0, SH_FILE_DENY, f190, false, 5);
	sh_policy_free(&p);

	/* the rest of a long line is discarded, not read as the next line;
	 * keys after an unreadable section header are not reported */
	expect_errors("err_line_long.policy", -EINVAL, 3, "3: line too long (max 199 bytes)",
		      "5: line too long (max 199 bytes)", "7: line too long (max 199 bytes)");
}

static void test_nul_byte(void **state)
{
	(void)state;
	expect_errors("err_nul.policy", -EINVAL, 1, "4: NUL byte in line");
}

static void test_crlf_and_bom(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("crlf_bom.policy", &p);
	assert_string_equal(p.name, "crlf");
	assert_int_equal(p.name_line, 2);
	assert_int_equal(p.nrules, 1);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/true", false, 4);
	sh_policy_free(&p);
}

static void test_comments(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("comments.policy", &p);
	assert_string_equal(p.name, "commented");
	assert_int_equal(p.name_line, 5);
	assert_int_equal(p.mode, SH_MODE_AUDIT);
	assert_int_equal(p.nrules, 4);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/bash", false, 8);
	assert_rule(&p, 1, SH_EXEC_ALLOW, "/usr/bin/dash", false, 9);
	assert_rule(&p, 2, SH_EXEC_ALLOW, "/usr/bin/ls", false, 10);
	assert_rule(&p, 3, SH_EXEC_ALLOW, "/usr/bin/a#b", false, 11);
	sh_policy_free(&p);

	/* without whitespace before it, ';' is part of the value */
	expect_errors("err_comment_mode.policy", -EINVAL, 1,
		      "3: bad mode 'audit;not a comment' (want enforce or audit)");
}

static void test_continuation(void **state)
{
	struct sh_policy p;

	(void)state;
	parse_ok("continuation.policy", &p);
	assert_int_equal(p.nrules, 4);
	assert_rule(&p, 0, SH_EXEC_ALLOW, "/usr/bin/bash", false, 4);
	assert_rule(&p, 1, SH_EXEC_ALLOW, "/usr/bin/dash", false, 5);
	assert_rule(&p, 2, SH_EXEC_ALLOW, "/usr/bin/ls", false, 6);
	assert_rule(&p, 3, SH_EXEC_DENY, "/usr/bin/python3", false, 7);
	sh_policy_free(&p);

	expect_errors("err_continuation.policy", -EINVAL, 3,
		      "3: duplicate key 'name' in [policy] (first at line 2)",
		      "6: indented line is read as a continuation of 'allow'; remove the leading whitespace",
		      "7: indented line is read as a continuation of 'allow'; remove the leading whitespace");
}

static void test_cgroup_paths(void **state)
{
	(void)state;
	expect_errors("err_cgroup.policy", -EINVAL, 3,
		      "3: cgroup path '/sys/fs/cgroup/a/' must not end in '/'",
		      "4: cgroup path '/' is the root of the hierarchy",
		      "5: non-canonical path '/sys/fs/cgroup//a' (contains '//')");
}

/* Patterns: '*' and '?' in the last component only, no '**', a last
 * component the programs can hold; the good ones kept as written. */
static void test_cgroup_patterns(void **state)
{
	struct sh_policy p;
	struct sh_errors e = { 0 };
	char longp[256];

	(void)state;
	snprintf(longp, sizeof(longp), "5: cgroup pattern '/sys/fs/cgroup/a/%.64s*': its last "
		 "component is longer than 63 bytes", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	expect_errors("err_cgroup_pattern.policy", -EINVAL, 7,
		      "3: cgroup pattern '/sys/fs/cgroup/a/**': '**' is not supported: a pattern "
		      "names the children of one directory ('*', '?' and '[...]' in its last "
		      "component)",
		      "4: cgroup pattern '/sys/fs/cgroup/a*/b': '*', '?' and '[' may only stand in "
		      "the last component (the directory above it is named as it is)", longp,
		      "8: cgroup pattern '/sys/fs/cgroup/a/ct-[0-9': a '[' class is not closed by ']'",
		      "9: cgroup pattern '/sys/fs/cgroup/a/ct-[!]x': a '[...]' class names no byte",
		      "10: cgroup pattern '/sys/fs/cgroup/a/ct-[z-a]': a range in a '[...]' class "
		      "runs from high to low",
		      "11: cgroup pattern '/sys/fs/cgroup/a[0]/b': '*', '?' and '[' may only stand in "
		      "the last component (the directory above it is named as it is)");
	assert_int_equal(sh_policy_parse_file(dpath("cgroup_pattern.policy"), &p, &e), 0);
	assert_int_equal(p.ncgroups, 2);
	assert_string_equal(p.cgroups[0], "/sys/fs/cgroup/a/agent@*.service");
	assert_true(sh_cgroup_is_pattern(p.cgroups[0]));
	assert_false(sh_cgroup_is_pattern("/sys/fs/cgroup/a/agent@1.service"));
	sh_policy_free(&p);
}

/* The daemon's matcher, which must agree with the programs' (bpf/cgroup.c). */
static void test_glob_match(void **state)
{
	(void)state;
	assert_true(sh_glob_match("agent@*.service", "agent@42.service"));
	assert_true(sh_glob_match("agent@*.service", "agent@.service"));
	assert_false(sh_glob_match("agent@*.service", "agent@42.scope"));
	assert_false(sh_glob_match("agent@*.service", "xagent@1.service"));
	assert_true(sh_glob_match("*", "anything"));
	assert_true(sh_glob_match("a*b*c", "aXbYbZc"));
	assert_false(sh_glob_match("a*b*c", "aXbYbZ"));
	assert_true(sh_glob_match("run-u?.scope", "run-u7.scope"));
	assert_false(sh_glob_match("run-u?.scope", "run-u17.scope"));
	assert_true(sh_glob_match("libpod-*.scope", "libpod-0123456789abcdef.scope"));
	/* Classes: podman's container scopes, not its conmon's. */
	assert_true(sh_glob_match("libpod-[0-9a-f][0-9a-f]*.scope",
				  "libpod-1be2b181856744d67eb0855bfd85a44a.scope"));
	assert_false(sh_glob_match("libpod-[0-9a-f][0-9a-f]*.scope",
				   "libpod-conmon-1be2b181856744d67eb0855bfd85a44a.scope"));
	assert_true(sh_glob_match("[a]*", "ax"));
	assert_false(sh_glob_match("[a]*", "[a]x"));
	assert_true(sh_glob_match("ct-[!0-9]", "ct-x"));
	assert_false(sh_glob_match("ct-[!0-9]", "ct-7"));
	assert_true(sh_glob_match("ct-[-x]", "ct--"));          /* '-' first: itself */
	assert_true(sh_glob_match("ct-[x-]", "ct--"));          /* and last */
	assert_false(sh_glob_match("ct-[x-]", "ct-y"));
	assert_true(sh_glob_match("ct-[\x80-\xff]", "ct-\xe9"));  /* bytes, unsigned */
	assert_false(sh_glob_match("ct-[a-c]", "ct-"));
	assert_true(sh_glob_match("*[0-9]", "job12"));          /* backs off to the star */
	assert_false(sh_glob_match("*[0-9]", "job1x"));
	assert_null(sh_glob_check("libpod-[0-9a-f][!x-z]*.scope"));
	assert_string_equal(sh_glob_check("a[b"), "a '[' class is not closed by ']'");
	assert_string_equal(sh_glob_check("a[]b"), "a '[...]' class names no byte");
	assert_string_equal(sh_glob_check("a[9-0]"), "a range in a '[...]' class runs from high to low");
	assert_null(sh_glob_check("[a][b][c][d]*"));
	assert_string_equal(sh_glob_check("[a][b][c][d][e]"), "more than 4 '[...]' classes");
	assert_true(sh_glob_match("**x", "yyx"));
	assert_false(sh_glob_match("x", ""));
}

/* The programs' walk (bpf/cgroup.c, glob_step and glob_class) over the
 * classes the daemon compiles: 1 matches, 0 does not, -1 unfinished. */
static int programs_glob(const char *glob, const char *name, const struct sh_pattern_classes *k)
{
	unsigned plen = strlen(glob), nlen = strlen(name), p = 0, n = 0, star_n = 0;
	int star_p = -1;

	for (int step = 0; step < SH_CGROUP_NAME_MAX * SH_PATTERN_MAX; step++) {
		char pc = p < plen ? glob[p] : 0;

		if (n >= nlen) {
			if (pc == '*') {
				p++;
				continue;
			}
			return p >= plen;
		}
		if (pc == '[') {
			unsigned char c = (unsigned char)name[n];
			int in = -1, j;

			for (j = 0; j < SH_PATTERN_CLASSES && k->at[j] != p; j++)
				;
			if (j < SH_PATTERN_CLASSES && k->at[1])
				in = (k->bits[j][c >> 3] >> (c & 7)) & 1;
			if (in < 0)
				return 1;       /* no class compiled: held */
			if (in) {
				p = k->end[j];
				n++;
				continue;
			}
		} else if (pc == '*') {
			star_p = (int)p++;
			star_n = n;
			continue;
		} else if (pc && (pc == '?' || pc == name[n])) {
			p++;
			n++;
			continue;
		}
		if (star_p < 0)
			return 0;
		p = (unsigned)star_p + 1;
		n = ++star_n;
	}
	return -1;
}

/* The daemon's matcher and the programs' walk over compiled classes
 * agree on every glob policy check accepts; an entry never compiled
 * (zeros) holds. */
static void test_glob_compiled(void **state)
{
	static const char *globs[] = {
		"libpod-[0-9a-f][0-9a-f]*.scope", "[!x]*[0-9]", "[a-c]x", "*[0-9]", "ct-[-x]",
		"ct-[x-]", "[[]a]", "*[!a-z]*", "[\x80-\xff]*", "[a]*[b]*[c]", "?[0-9]?",
		"agent@*.service", "j*-?",
	};
	static const char *names[] = {
		"a", "x1", "a1", "ab", "job12", "job-1", "libpod-1be2.scope",
		"libpod-conmon-1be2.scope", "libpod-c2ac.scope", "ct--", "ct-x", "ct-y", "[a]",
		"\xe9t\xe9", "abc", "aXbYc", "0", "x", "cc9", "a9b", "agent@1.service", "]x",
		"libpod-1.scope", "Zz",
	};
	struct sh_pattern_classes k, zero = { 0 };

	(void)state;
	assert_int_equal(sh_glob_compile("libpod-[0-9a-f][0-9a-f]*.scope", &k), 0);
	assert_int_equal(k.at[0], 7);
	assert_int_equal(k.end[0], 15);
	assert_int_equal(k.at[1], 15);
	assert_int_equal(k.end[1], 23);
	assert_int_equal(k.at[2], 0xff);
	assert_int_equal(sh_glob_compile("[a][b][c][d][e]", &k), -E2BIG);
	assert_int_equal(sh_glob_compile("[b-a]", &k), -EINVAL);
	for (size_t g = 0; g < sizeof(globs) / sizeof(globs[0]); g++) {
		assert_null(sh_glob_check(globs[g]));
		assert_int_equal(sh_glob_compile(globs[g], &k), 0);
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
			if (programs_glob(globs[g], names[n], &k) != sh_glob_match(globs[g], names[n]))
				fail_msg("glob '%s', name '%s': the programs say %d", globs[g], names[n],
					 programs_glob(globs[g], names[n], &k));
	}
	assert_int_equal(programs_glob("[a]x", "bx", &zero), 1);
	assert_int_equal(programs_glob("x[a]", "xb", &zero), 1);
}

static void test_cannot_open(void **state)
{
	struct sh_policy p;
	struct sh_errors e = { 0 };
	char want[WANT_MAX];
	const char *missing = dpath("does-not-exist.policy");

	(void)state;
	assert_int_equal(sh_policy_parse_file(missing, &p, &e), -ENOENT);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", missing);
	assert_string_equal(e.msgs[0], want);
	assert_null(p.name);
	sh_errors_free(&e);

	assert_int_equal(sh_policy_parse_file(data_dir, &p, &e), -EISDIR);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s: cannot open: Is a directory", data_dir);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);

	assert_int_equal(sh_policy_parse_file("/dev/null", &p, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "/dev/null: cannot open: not a regular file");
	sh_errors_free(&e);

	/* errs is optional; the result code still reports the failure */
	assert_int_equal(sh_policy_parse_file(missing, &p, NULL), -ENOENT);
	assert_int_equal(sh_policy_parse_file(dpath("err_multi.policy"), &p, NULL), -EINVAL);
	assert_int_equal(sh_policy_parse_file(dpath("minimal.policy"), &p, NULL), 0);
	sh_policy_free(&p);
}

/* Writes "[policy] name=x" plus nrules distinct exec rules. */
static void write_rules_policy(const char *dir, const char *name, int nrules)
{
	size_t cap = 64 + (size_t)nrules * 40;
	char *buf = malloc(cap);
	size_t o;

	assert_non_null(buf);
	o = (size_t)snprintf(buf, cap, "[policy]\nname = many\n[exec]\n");
	for (int i = 0; i < nrules; i++)
		o += (size_t)snprintf(buf + o, cap - o, "allow = /usr/bin/tool%d\n", i);
	write_file(dir, name, buf);
	free(buf);
}

/* One address covered by more [net] rules than a map entry holds. */
static void test_net_cover_limit(void **state)
{
	char *dir = make_tmpdir(), buf[4096], path[PATH_MAX], want[PATH_MAX + 128];
	struct sh_errors e = { 0 };
	struct sh_policy p;
	size_t n;

	(void)state;
	for (int rules = SH_NET_RULES_PER_KEY; rules <= SH_NET_RULES_PER_KEY + 1; rules++) {
		n = (size_t)snprintf(buf, sizeof(buf), "[policy]\nname = cover\n[net]\n");
		for (int i = 0; i < rules; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "connect = tcp 10.0.0.0/%d %d\n",
					      8 + i, 1000 + i);
		write_file(dir, "cover.policy", buf);
		snprintf(path, sizeof(path), "%s/cover.policy", dir);
		if (rules == SH_NET_RULES_PER_KEY) {
			assert_int_equal(sh_policy_parse_file(path, &p, &e), 0);
			assert_int_equal(p.nnet, SH_NET_RULES_PER_KEY);
			sh_policy_free(&p);
			continue;
		}
		assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
		assert_int_equal(e.n, 1);
		snprintf(want, sizeof(want), "%s:%d: %d [net] rules cover this rule's addresses; "
			 "at most %d can", path, 4 + rules - 1, rules, SH_NET_RULES_PER_KEY);
		assert_string_equal(e.msgs[0], want);
		sh_errors_free(&e);
	}
	remove_tree(dir);
}

static void test_too_many_rules(void **state)
{
	char *dir = make_tmpdir(), path[PATH_MAX], want[WANT_MAX];
	struct sh_policy p;
	struct sh_errors e = { 0 };

	(void)state;
	write_rules_policy(dir, "max.policy", SH_MAX_RULES_PER_POLICY);
	write_rules_policy(dir, "over.policy", SH_MAX_RULES_PER_POLICY + 2);

	snprintf(path, sizeof(path), "%s/max.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), 0);
	assert_int_equal(p.nrules, SH_MAX_RULES_PER_POLICY);
	assert_string_equal(p.rules[SH_MAX_RULES_PER_POLICY - 1].path, "/usr/bin/tool1023");
	sh_policy_free(&p);

	/* reported once, at the first rule over the limit (line 3 + 1025) */
	snprintf(path, sizeof(path), "%s/over.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s:1028: too many rules (max 1024)", path);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
	remove_tree(dir);
}

static void test_error_flood_capped(void **state)
{
	char *dir = make_tmpdir(), path[PATH_MAX], want[WANT_MAX];
	char *buf = malloc(16 * 200 + 64);
	struct sh_policy p;
	struct sh_errors e = { 0 };
	size_t o;

	(void)state;
	assert_non_null(buf);
	o = (size_t)sprintf(buf, "[policy]\nname = x\n");
	for (int i = 0; i < 150; i++)
		o += (size_t)sprintf(buf + o, "bogus%d = 1\n", i);
	write_file(dir, "flood.policy", buf);
	free(buf);

	snprintf(path, sizeof(path), "%s/flood.policy", dir);
	assert_int_equal(sh_policy_parse_file(path, &p, &e), -EINVAL);
	assert_int_equal(e.n, SH_MAX_ERRORS_PER_FILE + 1);
	snprintf(want, sizeof(want), "%s:3: unknown key 'bogus0' in [policy]", path);
	assert_string_equal(e.msgs[0], want);
	snprintf(want, sizeof(want), "%s:%d: too many errors, giving up on this file", path,
		 3 + SH_MAX_ERRORS_PER_FILE);
	assert_string_equal(e.msgs[SH_MAX_ERRORS_PER_FILE], want);
	sh_errors_free(&e);
	remove_tree(dir);
}

/* ---- sets of files ---- */

static void test_load_dir_ok(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	const struct sh_policy *b;
	char dir[PATH_MAX], want[WANT_MAX];

	(void)state;
	snprintf(dir, sizeof(dir), "%s", dpath("dir_ok"));
	assert_int_equal(sh_policy_load_dir(dir, &s, &e), 0);
	assert_int_equal(e.n, 0);
	/* README, .hidden.policy and c.policy.bak are not loaded */
	assert_int_equal(s.n, 2);
	assert_string_equal(s.pols[0].name, "alpha");
	snprintf(want, sizeof(want), "%s/a.policy", dir);
	assert_string_equal(s.pols[0].file, want);
	assert_int_equal(s.pols[0].nrules, 1);
	assert_string_equal(s.pols[0].cgroups[0], "/sys/fs/cgroup/alpha.slice");
	assert_string_equal(s.pols[1].name, "beta");
	b = sh_policy_find(&s, "beta");
	assert_ptr_equal(b, &s.pols[1]);
	assert_int_equal(b->mode, SH_MODE_AUDIT);
	assert_null(sh_policy_find(&s, "gamma"));
	assert_null(sh_policy_find(&s, NULL));
	assert_null(sh_policy_find(NULL, "beta"));
	sh_policy_set_free(&s);
	assert_null(s.pols);
	assert_int_equal(s.n, 0);
	sh_policy_set_free(&s);
	sh_policy_set_free(NULL);

	/* a trailing '/' on the directory does not double the separator */
	strcat(dir, "/");
	assert_int_equal(sh_policy_load_dir(dir, &s, &e), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.pols[0].file, want);
	sh_policy_set_free(&s);
}

static void test_load_dir_duplicate_names(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	char want[WANT_MAX];

	(void)state;
	assert_int_equal(sh_policy_load_dir(dpath("dir_dup"), &s, &e), -EINVAL);
	assert_int_equal(s.n, 0);
	assert_null(s.pols);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want),
		 "%s/two.policy:3: duplicate policy name 'same' (first in %s/one.policy:2)",
		 dpath("dir_dup"), dpath("dir_dup"));
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
}

static void test_load_dir_duplicate_cgroup(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	char want[WANT_MAX];

	(void)state;
	assert_int_equal(sh_policy_load_dir(dpath("dir_cgroup"), &s, &e), -EINVAL);
	assert_int_equal(s.n, 0);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want),
		 "%s/b.policy:4: cgroup '/sys/fs/cgroup/shared.slice' already tagged by policy 'first' (%s/a.policy:3)",
		 dpath("dir_cgroup"), dpath("dir_cgroup"));
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
}

static void test_load_dir_bad_file(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	char want[WANT_MAX];

	(void)state;
	/* one bad file fails the whole load: nothing half-loaded */
	assert_int_equal(sh_policy_load_dir(dpath("dir_bad"), &s, &e), -EINVAL);
	assert_int_equal(s.n, 0);
	assert_null(s.pols);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s/bad.policy:3: bad mode 'strict' (want enforce or audit)",
		 dpath("dir_bad"));
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
}

static void test_load_dir_empty(void **state)
{
	char *dir = make_tmpdir();
	struct sh_policy_set s;
	struct sh_errors e = { 0 };

	(void)state;
	write_file(dir, "notes.txt", "not a policy\n");
	assert_int_equal(sh_policy_load_dir(dir, &s, &e), 0);
	assert_int_equal(e.n, 0);
	assert_int_equal(s.n, 0);
	assert_null(sh_policy_find(&s, "x"));
	sh_policy_set_free(&s);
	remove_tree(dir);
}

static void test_load_dir_missing(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	char want[WANT_MAX];
	const char *missing = dpath("no-such-dir");

	(void)state;
	assert_int_equal(sh_policy_load_dir(missing, &s, &e), -ENOENT);
	assert_int_equal(s.n, 0);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s: cannot open directory: No such file or directory", missing);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);

	assert_int_equal(sh_policy_load_dir(dpath("minimal.policy"), &s, &e), -ENOTDIR);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s: cannot open directory: Not a directory",
		 dpath("minimal.policy"));
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
}

static void test_too_many_policies(void **state)
{
	char *dir = make_tmpdir(), name[64], buf[128], want[WANT_MAX];
	struct sh_policy_set s;
	struct sh_errors e = { 0 };

	(void)state;
	for (int i = 0; i < SH_MAX_POLICIES; i++) {
		snprintf(name, sizeof(name), "p%03d.policy", i);
		snprintf(buf, sizeof(buf), "[policy]\nname = p%03d\n", i);
		write_file(dir, name, buf);
	}
	assert_int_equal(sh_policy_load_dir(dir, &s, &e), 0);
	assert_int_equal(s.n, SH_MAX_POLICIES);
	assert_string_equal(s.pols[0].name, "p000");
	assert_string_equal(s.pols[SH_MAX_POLICIES - 1].name, "p063");
	sh_policy_set_free(&s);

	write_file(dir, "p064.policy", "[policy]\nname = p064\n");
	assert_int_equal(sh_policy_load_dir(dir, &s, &e), -EINVAL);
	assert_int_equal(s.n, 0);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s/p064.policy:2: too many policies (65, max 64)", dir);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);
	remove_tree(dir);
}

static void test_load_files(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], want[WANT_MAX];
	const char *paths[3];

	(void)state;
	snprintf(a, sizeof(a), "%s", dpath("minimal.policy"));
	snprintf(b, sizeof(b), "%s", dpath("dir_dup/two.policy"));
	snprintf(c, sizeof(c), "%s", dpath("dir_dup/one.policy"));

	/* order given is kept; the later duplicate is the one reported */
	paths[0] = a;
	paths[1] = b;
	paths[2] = c;
	assert_int_equal(sh_policy_load_files(paths, 3, &s, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s:2: duplicate policy name 'same' (first in %s:3)", c, b);
	assert_string_equal(e.msgs[0], want);
	sh_errors_free(&e);

	assert_int_equal(sh_policy_load_files(paths, 2, &s, &e), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.pols[0].name, "minimal");
	assert_string_equal(s.pols[1].name, "same");
	sh_policy_set_free(&s);

	/* errors of every file are reported; a system error outranks -EINVAL */
	snprintf(b, sizeof(b), "%s", dpath("err_bad_mode.policy"));
	snprintf(c, sizeof(c), "%s", dpath("does-not-exist.policy"));
	assert_int_equal(sh_policy_load_files(paths, 3, &s, &e), -ENOENT);
	assert_int_equal(s.n, 0);
	assert_int_equal(e.n, 2);
	snprintf(want, sizeof(want), "%s:3: bad mode 'Enforce' (want enforce or audit)", b);
	assert_string_equal(e.msgs[0], want);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", c);
	assert_string_equal(e.msgs[1], want);
	sh_errors_free(&e);

	assert_int_equal(sh_policy_load_files(NULL, 0, &s, &e), 0);
	assert_int_equal(s.n, 0);
	assert_null(s.pols);
}

static void test_shipped_policies(void **state)
{
	struct sh_policy_set s;
	struct sh_errors e = { 0 };
	const struct sh_policy *demo, *agent;
	int rc;

	(void)state;
	rc = sh_policy_load_dir(policies_dir, &s, &e);
	if (rc)
		dump_errors(&e);
	assert_int_equal(rc, 0);
	assert_int_equal(e.n, 0);

	demo = sh_policy_find(&s, "demo");
	assert_non_null(demo);
	assert_int_equal(demo->mode, SH_MODE_ENFORCE);
	assert_int_equal(demo->nrules, 7);
	for (size_t i = 0; i < demo->nrules; i++) {
		assert_int_equal(demo->rules[i].kind, SH_EXEC_ALLOW);
		assert_string_not_equal(demo->rules[i].path, "/usr/bin/whoami");
	}
	assert_string_equal(demo->rules[0].path, "/usr/bin/bash");
	assert_string_equal(demo->rules[6].path, "/usr/bin/id");

	agent = sh_policy_find(&s, "agent");
	assert_non_null(agent);
	assert_int_equal(agent->mode, SH_MODE_ENFORCE);
	assert_true(agent->abstract_deny);
	assert_int_equal(agent->signal_scope, SH_SCOPE_TREE);
	assert_int_equal(agent->connect_scope, SH_SCOPE_TREE);
	assert_int_equal(agent->pids_max, 512);
	assert_true(sh_policy_has_kind(agent, SH_EXEC_ALLOW));
	assert_true(sh_policy_has_kind(agent, SH_EXEC_DENY));
	assert_true(sh_policy_has_kind(agent, SH_FILE_WRITE));
	assert_true(sh_policy_has_kind(agent, SH_FILE_DENY));
	assert_true(sh_policy_has_kind(agent, SH_CONNECT_DENY));
	assert_false(sh_policy_has_kind(agent, SH_CONNECT_ALLOW));
	{
		static const struct { enum sh_rule_kind k; const char *path; } want[] = {
			{ SH_EXEC_ALLOW, "/usr/bin/bash" },
			{ SH_EXEC_ALLOW, "/usr/bin/git" },
			{ SH_EXEC_ALLOW, "/usr/lib/git-core/" },
			{ SH_EXEC_ALLOW, "/usr/bin/make" },
			{ SH_EXEC_DENY, "/usr/bin/python3" },
			{ SH_EXEC_DENY, "/usr/bin/python3.11" },
			{ SH_FILE_WRITE, "/srv/agent/work/" },
			{ SH_FILE_WRITE, "/tmp/" },
			{ SH_FILE_WRITE, "/dev/null" },
			{ SH_FILE_WRITE, "/dev/tty" },
			{ SH_FILE_DENY, "/root/.ssh/" },
			{ SH_FILE_DENY, "/etc/shadow" },
			{ SH_CONNECT_DENY, "/tmp/tmux-0/" },
			{ SH_CONNECT_DENY, "/run/" },
		};
		size_t nwrite = 0;

		for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
			bool found = false;

			for (size_t i = 0; i < agent->nrules && !found; i++)
				found = agent->rules[i].kind == want[w].k &&
					strcmp(agent->rules[i].path, want[w].path) == 0;
			if (!found)
				print_error("missing %s %s\n", sh_rule_kind_name(want[w].k), want[w].path);
			assert_true(found);
		}
		for (size_t i = 0; i < agent->nrules; i++)
			nwrite += agent->rules[i].kind == SH_FILE_WRITE;
		assert_int_equal(nwrite, 4);   /* work dir, /tmp/, /dev/null, /dev/tty only */
	}
	sh_policy_set_free(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_example),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_net_rules),
		cmocka_unit_test(test_net_cover_limit),
		cmocka_unit_test(test_errors_api),
		cmocka_unit_test(test_unknown_section),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_key_outside_section),
		cmocka_unit_test(test_missing_name),
		cmocka_unit_test(test_bad_name),
		cmocka_unit_test(test_name_length),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_bad_mode),
		cmocka_unit_test(test_held_from),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_noncanonical_paths),
		cmocka_unit_test(test_canonical_edge_cases),
		cmocka_unit_test(test_empty_values),
		cmocka_unit_test(test_control_character),
		cmocka_unit_test(test_rule_path_max),
		cmocka_unit_test(test_rule_keys),
		cmocka_unit_test(test_digests),
		cmocka_unit_test(test_rule_key_too_long),
		cmocka_unit_test(test_rule_kind_table),
		cmocka_unit_test(test_scalar_values),
		cmocka_unit_test(test_conflicting_rules),
		cmocka_unit_test(test_resolved_conflicts),
		cmocka_unit_test(test_container_paths),
		cmocka_unit_test(test_no_conflict),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_multiple_errors),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_crlf_and_bom),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_continuation),
		cmocka_unit_test(test_cgroup_paths),
		cmocka_unit_test(test_cgroup_patterns),
		cmocka_unit_test(test_glob_match),
		cmocka_unit_test(test_glob_compiled),
		cmocka_unit_test(test_cannot_open),
		cmocka_unit_test(test_too_many_rules),
		cmocka_unit_test(test_error_flood_capped),
		cmocka_unit_test(test_load_dir_ok),
		cmocka_unit_test(test_load_dir_duplicate_names),
		cmocka_unit_test(test_load_dir_duplicate_cgroup),
		cmocka_unit_test(test_load_dir_bad_file),
		cmocka_unit_test(test_load_dir_empty),
		cmocka_unit_test(test_load_dir_missing),
		cmocka_unit_test(test_too_many_policies),
		cmocka_unit_test(test_load_files),
		cmocka_unit_test(test_shipped_policies),
		cmocka_unit_test(test_capabilities),
	};
	const char *env = getenv("SH_POLICIES_DIR");

	if (argc > 1)
		data_dir = argv[1];
	else if (getenv("SH_TEST_DATA"))
		data_dir = getenv("SH_TEST_DATA");
	if (env)
		snprintf(policies_dir, sizeof(policies_dir), "%s", env);
	else
		snprintf(policies_dir, sizeof(policies_dir), "%s/../../../policies", data_dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
