// SPDX-License-Identifier: GPL-2.0
/*
 * Whether this kernel can enforce: securityfs and the active LSM list, BTF,
 * cgroup v2 and a real load and attach of the programs. Also opens the
 * skeleton with the programs this kernel has hooks for, and routes
 * libbpf's messages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probe.h"
#include "sharness.skel.h"
#include "util.h"

/* libbpf's own messages: warnings always, its debug log with --debug. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !sh_debug)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void sh_libbpf_quiet(void)
{
	libbpf_set_print(libbpf_print);
}

static bool btf_has_func(const struct btf *vmlinux, const char *name)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
}

/* Number of parameters of a kernel function, -1 if it is not there. */
static int btf_func_params(const struct btf *vmlinux, const char *name)
{
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) : -1;
	const struct btf_type *t;

	if (id <= 0)
		return -1;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

/*
 * Programs for hooks that differ between supported kernels: loaded only
 * where the kernel's BTF has the hook in the form the program expects.
 * Without file_ioctl_compat (before 6.5), compat ioctls go through
 * file_ioctl, which is always attached. POSIX ACLs have hooks of their own
 * from 6.2 (before, they are xattrs). inode_setattr gained an idmap
 * argument in 6.3.
 */
static void configure_optional(struct sharness_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int setattr = btf_func_params(vmlinux, "bpf_lsm_inode_setattr");
	bool acl = btf_has_func(vmlinux, "bpf_lsm_inode_set_acl");

	bpf_program__set_autoload(skel->progs.sh_file_ioctl_compat,
				  btf_has_func(vmlinux, "bpf_lsm_file_ioctl_compat"));
	bpf_program__set_autoload(skel->progs.sh_inode_set_acl, acl);
	bpf_program__set_autoload(skel->progs.sh_inode_remove_acl,
				  acl && btf_has_func(vmlinux, "bpf_lsm_inode_remove_acl"));
	/* Pinned execs hashed in the kernel (sh_exec_pin): IMA's file hash
	 * for sleepable programs. Without it sh_exec refuses a pinned file
	 * the daemon has not hashed. */
	bool ima = btf_has_func(vmlinux, "bpf_ima_file_hash");

	bpf_program__set_autoload(skel->progs.sh_exec_pin, ima);
	/* The count of directory moves (the directory memo's key, memo.h):
	 * without it memos are keyed to every rename on the host. */
	bpf_program__set_autoload(skel->progs.sh_dir_move, btf_has_func(vmlinux, "__d_move"));
	*(__u8 *)&skel->rodata->pin_hashing = ima;
	/* Neither form known: leave both on, so that the load fails loudly. */
	bpf_program__set_autoload(skel->progs.sh_inode_setattr, setattr != 3);
	bpf_program__set_autoload(skel->progs.sh_inode_setattr_idmap, setattr != 2);
	btf__free(vmlinux);
}

/*
 * The programs' secret key (memo_key: the directory memo's checks, where a
 * tree's scratch share and membership words sit). Without one the memo
 * would be off and those places a tree could work out, so there is no
 * start without it: a kernel that will not give one is named.
 */
static int random_key(__u64 *key)
{
	ssize_t n;

	do  /* 0 is the programs' "no key": drawn again */
		n = getrandom(key, sizeof(*key), 0);
	while ((n < 0 && errno == EINTR) || (n == (ssize_t)sizeof(*key) && !*key));
	if (n == (ssize_t)sizeof(*key))
		return 0;
	sh_log("cannot draw the programs' random key: getrandom: %s",
	       n < 0 ? strerror(errno) : "short read");
	return -ENOKEY;     /* sh_probe_why names it */
}

int sh_probe_open(struct sharness_bpf **out)
{
	struct bpf_program *p;
	int err;

	*out = sharness_bpf__open();
	if (!*out)
		return errno ? -errno : -ENOMEM;
	configure_optional(*out);
	/* A constant set here is part of the build mark (resume.c): a
	 * daemon resumes only programs loaded with its own. */
	err = random_key((__u64 *)&(*out)->rodata->memo_key);
	if (err) {
		sharness_bpf__destroy(*out);
		*out = NULL;
		return err;
	}
	/* SHARNESS_VERIFIER_STATS=1: the verifier's statistics of every
	 * program, printed by `probe` and by a daemon that loads them (the test
	 * suite checks their headroom). */
	if (getenv("SHARNESS_VERIFIER_STATS"))
		bpf_object__for_each_program(p, (*out)->obj) {
			char *buf = calloc(1, 4096);

			if (buf && !bpf_program__set_log_buf(p, buf, 4096))
				bpf_program__set_log_level(p, 4);
			else
				free(buf);
		}
	return 0;
}

void sh_probe_verifier_stats(struct sharness_bpf *skel, FILE *out)
{
	struct bpf_program *p;
	size_t n;

	if (!getenv("SHARNESS_VERIFIER_STATS"))
		return;
	bpf_object__for_each_program(p, skel->obj) {
		const char *log = bpf_program__log_buf(p, &n), *s, *t;

		s = log ? strstr(log, "processed ") : NULL;
		t = log ? strstr(log, "verification time ") : NULL;
		if (s && bpf_program__autoload(p))
			fprintf(out, "verifier: %s %.*s%s%.*s\n", bpf_program__name(p),
			       (int)strcspn(s, "\n"), s, t ? "; " : "",
			       t ? (int)strcspn(t, "\n") : 0, t ? t : "");
		bpf_program__set_log_buf(p, NULL, 0);
		free((void *)log);
	}
}

static int load_and_attach(struct sharness_bpf **out)
{
	struct sharness_bpf *skel;
	int err;

	err = sh_probe_open(&skel);
	if (err)
		return err;
	uint64_t t0 = sh_now_ns(CLOCK_MONOTONIC), t1 = 0;

	err = sharness_bpf__load(skel);
	if (!err)
		sh_probe_verifier_stats(skel, stdout);
	if (!err) {
		t1 = sh_now_ns(CLOCK_MONOTONIC);
		err = sharness_bpf__attach(skel);
	}
	/* Where a start's time goes: the verifier (load) or the trampolines
	 * (attach); the suite prints it beside each program's count. */
	if (!err && getenv("SHARNESS_VERIFIER_STATS"))
		printf("load-time: load %llu ms, attach %llu ms\n",
		       (unsigned long long)(t1 - t0) / 1000000,
		       (unsigned long long)(sh_now_ns(CLOCK_MONOTONIC) - t1) / 1000000);
	if (err) {
		sharness_bpf__destroy(skel);
		return err < 0 ? err : -EINVAL;
	}
	*out = skel;
	return 0;
}

static bool can_enforce(const struct sh_probe *p)
{
	return p->securityfs && p->lsm_bpf && p->btf && p->cgroup2 && p->attach;
}

int sh_probe_run(struct sh_probe *p)
{
	return sh_probe_run_opts(p, true);
}

int sh_probe_run_opts(struct sh_probe *p, bool try_attach)
{
	struct statfs sfs;
	struct utsname u;
	struct sharness_bpf *skel = NULL;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	if (uname(&u) == 0)
		snprintf(p->kernel, sizeof(p->kernel), "%s", u.release);
	n = sh_read_file("/sys/kernel/security/lsm", p->lsm, sizeof(p->lsm));
	if (n == -ENOENT &&
	    mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL) == 0) {
		sh_dbg("mounted securityfs at /sys/kernel/security");
		n = sh_read_file("/sys/kernel/security/lsm", p->lsm, sizeof(p->lsm));
	}
	if (n >= 0) {
		char list[sizeof(p->lsm) + 2];

		p->securityfs = true;
		p->lsm[strcspn(p->lsm, "\n")] = 0;
		snprintf(list, sizeof(list), ",%s,", p->lsm);
		p->lsm_bpf = strstr(list, ",bpf,") != NULL;
	}
	p->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	p->cgroup2 = statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
	if (!try_attach) {
		/* The caller's own load is the attach test. */
		p->attach = true;
	} else if (p->lsm_bpf && p->btf) {
		/* The verdict below reports a failure; libbpf's own account of
		 * it is for --debug. */
		libbpf_print_fn_t old = libbpf_set_print(NULL);

		libbpf_set_print(sh_debug ? old : NULL);
		p->attach_err = load_and_attach(&skel);
		libbpf_set_print(old);
		p->attach = p->attach_err == 0;
		sharness_bpf__destroy(skel);
	}
	return can_enforce(p) ? 0 : SH_EXIT_NOENFORCE;
}

const char *sh_probe_why(const struct sh_probe *p, char *buf, size_t n)
{
	if (!p->securityfs)
		snprintf(buf, n, "cannot read /sys/kernel/security/lsm: mount securityfs "
			 "(mount -t securityfs securityfs /sys/kernel/security)");
	else if (!p->lsm_bpf)
		snprintf(buf, n, "BPF LSM is not active (active LSMs: %s): boot with "
			 "lsm=%s,bpf on the kernel command line", p->lsm, p->lsm);
	else if (!p->btf)
		snprintf(buf, n, "kernel %s has no BTF (/sys/kernel/btf/vmlinux): use a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF=y", p->kernel);
	else if (!p->attach && p->attach_err == -ENOKEY)
		snprintf(buf, n, "kernel %s gave no random key (getrandom failed), which the "
			 "programs need: use a kernel with getrandom and its random source "
			 "(any kernel BPF LSM runs on has them; check seccomp filters on "
			 "sharnessd)", p->kernel);
	else if (!p->attach)
		snprintf(buf, n, "kernel %s refused to load or attach BPF LSM programs "
			 "(%s)%s", p->kernel, strerror(-p->attach_err),
			 p->attach_err == -EPERM ?
			 ": this kernel does not allow BPF LSM programs here (run as root "
			 "on the host, not in a container; check lockdown and "
			 "kernel.unprivileged_bpf_disabled); use a kernel where it does, "
			 "such as Debian 12's 6.1 or 6.12" : "; run with --debug for the "
			 "loader's log");
	else if (!p->cgroup2)
		snprintf(buf, n, "cgroup v2 is not mounted at /sys/fs/cgroup: boot with "
			 "the unified hierarchy (systemd.unified_cgroup_hierarchy=1)");
	else
		snprintf(buf, n, "this kernel can enforce");
	return buf;
}

void sh_probe_print(const struct sh_probe *p, FILE *out)
{
	char why[768];

	fprintf(out, "kernel:          %s\n", p->kernel);
	fprintf(out, "securityfs:      %s\n", p->securityfs ? "yes" : "no");
	fprintf(out, "active LSMs:     %s\n", p->securityfs ? p->lsm : "(unknown)");
	fprintf(out, "BPF LSM active:  %s\n", p->lsm_bpf ? "yes" : "no");
	fprintf(out, "BTF:             %s\n", p->btf ? "yes" : "no");
	fprintf(out, "cgroup v2:       %s\n", p->cgroup2 ? "yes" : "no");
	if (p->lsm_bpf && p->btf)
		fprintf(out, "programs attach: %s\n", p->attach ? "yes" :
			strerror(-p->attach_err));
	else
		fprintf(out, "programs attach: not tried\n");
	fprintf(out, "verdict:         %s\n",
		can_enforce(p) ? "can enforce" : "CANNOT enforce");
	if (!can_enforce(p))
		fprintf(out, "what to change:  %s\n", sh_probe_why(p, why, sizeof(why)));
}
