// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "caps.h"
#include "util.h"

int sh_audit_open(struct sh_audit *a, const char *path)
{
	char dir[4096];

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->path = strdup(path);
	if (!a->path)
		return -ENOMEM;
	sh_dir_of(path, dir, sizeof(dir));
	sh_mkdir_p(dir, 0750);
	return sh_audit_reopen(a);
}

int sh_audit_reopen(struct sh_audit *a)
{
	int fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);

	if (fd < 0)
		return -errno;
	if (a->fd >= 0)
		close(a->fd);
	a->fd = fd;
	return 0;
}

int sh_audit_follow(struct sh_audit *a)
{
	uint64_t now = sh_now_ns(CLOCK_MONOTONIC);
	struct stat fs, ps;
	int err;

	if (a->fd < 0 || now - a->follow_ns < 1000000000ull)
		return 0;
	a->follow_ns = now;
	if (fstat(a->fd, &fs))
		return -errno;
	if (!lstat(a->path, &ps) && ps.st_dev == fs.st_dev && ps.st_ino == fs.st_ino)
		return 0;
	err = sh_audit_reopen(a);
	return err ? err : 1;
}

void sh_audit_close(struct sh_audit *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	free(a->path);
	a->path = NULL;
}

/*
 * One record, one write. A short write (a full disk) is cut back off so the
 * log never holds half a record; the record is counted as lost, and once
 * writing works again a "log-gap" record says how many were lost, and
 * ("counted") how many refusals the lost "suppressed" records stood for.
 */
static int write_record(struct sh_audit *a, const char *p, size_t len)
{
	off_t end = lseek(a->fd, 0, SEEK_END);
	ssize_t n;

	do {
		n = write(a->fd, p, len);
	} while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == len)
		return 0;
	if (n > 0 && end >= 0 && ftruncate(a->fd, end) < 0)
		a->last_errno = errno;
	return n < 0 ? -errno : -ENOSPC;
}

int sh_audit_write(struct sh_audit *a, const struct sh_buf *b)
{
	int err;

	if (b->oom) {
		a->write_errors++;
		a->lost_since_ok++;
		a->last_errno = ENOMEM;
		return -ENOMEM;
	}
	if (a->lost_since_ok) {
		char gap[160], ts[64];
		int n;

		sh_fmt_time(ts, sizeof(ts), sh_now_ns(CLOCK_REALTIME));
		n = snprintf(gap, sizeof(gap),
			     "{\"time\":\"%s\",\"event\":\"log-gap\",\"lost\":%llu,\"counted\":%llu,"
			     "\"errno\":%d}\n", ts, (unsigned long long)a->lost_since_ok,
			     (unsigned long long)a->counted_lost, a->last_errno);
		if (write_record(a, gap, n) == 0)
			a->lost_since_ok = a->counted_lost = 0;
	}
	err = a->lost_since_ok ? -ENOSPC : write_record(a, b->p, b->len);
	if (err) {
		a->last_errno = -err;
		a->write_errors++;
		a->lost_since_ok++;
	}
	return err;
}

uint64_t sh_mono_to_real(uint64_t mono_ns)
{
	uint64_t now_mono = sh_now_ns(CLOCK_MONOTONIC);
	uint64_t now_real = sh_now_ns(CLOCK_REALTIME);

	if (mono_ns > now_mono)
		return now_real;
	return now_real - (now_mono - mono_ns);
}

static void put_str(struct sh_buf *b, const char *key, const char *s)
{
	sh_json_str_field(b, key, (const uint8_t *)s, strlen(s));
}

void sh_audit_begin_meta(struct sh_buf *b, const char *event)
{
	char ts[64];

	sh_fmt_time(ts, sizeof(ts), sh_now_ns(CLOCK_REALTIME));
	sh_json_begin(b);
	put_str(b, "time", ts);
	put_str(b, "event", event);
}

static const char *ip_proto_name(unsigned p, char *buf, size_t n)
{
	switch (p) {
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 58: return "ipv6-icmp";
	case 136: return "udplite";
	case 262: return "mptcp";
	}
	snprintf(buf, n, "proto-%u", p);
	return buf;
}

static const char *family_name(unsigned f, char *buf, size_t n)
{
	switch (f) {
	case AF_UNIX: return "unix";
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_NETLINK: return "netlink";
	case AF_PACKET: return "packet";
	}
	snprintf(buf, n, "family-%u", f);
	return buf;
}

static const char *sock_type_name(unsigned t, char *buf, size_t n)
{
	switch (t) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "dgram";
	case SOCK_RAW: return "raw";
	case SOCK_RDM: return "rdm";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_PACKET: return "packet";
	}
	snprintf(buf, n, "type-%u", t);
	return buf;
}

/* "ip IP_OPTIONS": a refused socket option or control message. */
static void option_target(struct sh_buf *b, uint32_t v)
{
	static const struct { unsigned level, name; const char *s; } names[] = {
		{ 0, 4, "ip IP_OPTIONS" }, { 0, 7, "ip IP_RETOPTS" }, { 0, 19, "ip IP_TRANSPARENT" },
		{ 0, 50, "ip IP_UNICAST_IF" }, { 41, 76, "ipv6 IPV6_UNICAST_IF" },
		{ 1, 25, "socket SO_BINDTODEVICE" }, { 1, 36, "socket SO_MARK" },
		{ 1, 62, "socket SO_BINDTOIFINDEX" }, { 41, 1, "ipv6 IPV6_ADDRFORM" },
		{ 41, 3, "ipv6 IPV6_2292HOPOPTS" }, { 41, 4, "ipv6 IPV6_2292DSTOPTS" },
		{ 41, 5, "ipv6 IPV6_2292RTHDR" }, { 41, 6, "ipv6 IPV6_2292PKTOPTIONS" },
		{ 41, 32, "ipv6 IPV6_FLOWLABEL_MGR" }, { 41, 54, "ipv6 IPV6_HOPOPTS" },
		{ 41, 55, "ipv6 IPV6_RTHDRDSTOPTS" }, { 41, 57, "ipv6 IPV6_RTHDR" },
		{ 41, 59, "ipv6 IPV6_DSTOPTS" }, { 41, 75, "ipv6 IPV6_TRANSPARENT" },
		{ 0xffff, 0xffff, "control messages unreadable or too many" },
	};
	char t[48];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (v >> 16 == names[i].level && (v & 0xffff) == names[i].name) {
			put_str(b, "target", names[i].s);
			return;
		}
	snprintf(t, sizeof(t), "level %u option %u", v >> 16, v & 0xffff);
	put_str(b, "target", t);
}

/*
 * A [net] record's target: "tcp 10.1.2.3:443", "udp [2001:db8::1]:53", with
 * the parts as fields of their own; for a refused socket kind or netlink
 * send, "packet raw 768" (family, type, protocol).
 */
static void net_target(struct sh_buf *b, const struct sh_event *ev)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char t[128], addr[INET6_ADDRSTRLEN], x[3][24];

	if (ev->op == SH_OP_SOCKET || ev->op == SH_OP_NETLINK_SEND) {

		snprintf(t, sizeof(t), "%s %s %u", family_name(ev->op_flags, x[0], sizeof(x[0])),
			 sock_type_name(ev->target_pid & 0xffff, x[1], sizeof(x[1])),
			 ev->target_pid >> 16);
		put_str(b, "target", t);
		put_str(b, "family", family_name(ev->op_flags, x[0], sizeof(x[0])));
		put_str(b, "type", sock_type_name(ev->target_pid & 0xffff, x[1], sizeof(x[1])));
		sh_json_uint_field(b, "protocol", ev->target_pid >> 16);
		return;
	}
	if (ev->reason == SH_WHY_OPTION) {
		option_target(b, ev->op_flags);
		return;
	}
	if (ev->path_len != 16) {
		put_str(b, "target", "");
		return;
	}
	if (memcmp(ev->path, v4mapped, sizeof(v4mapped)) == 0) {
		inet_ntop(AF_INET, ev->path + 12, addr, sizeof(addr));
		snprintf(t, sizeof(t), "%s %s:%u", ip_proto_name(ev->op_flags, x[2], sizeof(x[2])),
			 addr, ev->target_pid);
	} else {
		inet_ntop(AF_INET6, ev->path, addr, sizeof(addr));
		snprintf(t, sizeof(t), "%s [%s]:%u", ip_proto_name(ev->op_flags, x[2], sizeof(x[2])),
			 addr, ev->target_pid);
	}
	put_str(b, "target", t);
	put_str(b, "proto", ip_proto_name(ev->op_flags, x[2], sizeof(x[2])));
	put_str(b, "address", addr);
	sh_json_uint_field(b, "port", ev->target_pid);
}

/* A file event's own fields: read or write, the open's flags, the mode a
 * chmod or a create asked for. */
static void file_fields(struct sh_buf *b, const struct sh_event *ev)
{
	char t[16];

	put_str(b, "access", (ev->flags & SH_EVF_WRITE) ? "write" : "read");
	if ((ev->op == SH_OP_CHMOD || ev->op == SH_OP_CREATE) && ev->op_flags) {
		snprintf(t, sizeof(t), "0%o", ev->op_flags & 07777);
		put_str(b, "mode", t);
	}
	if (ev->op == SH_OP_OPEN) {
		snprintf(t, sizeof(t), "0%o", ev->op_flags);
		put_str(b, "flags", t);
	}
}

void sh_audit_format_event_fields(struct sh_buf *b, const struct sh_event *ev,
				  const char *policy, const char *cgroup, uint32_t run_id)
{
	char ts[64];
	size_t comm_len = strnlen(ev->comm, sizeof(ev->comm));
	uint32_t plen = ev->path_len < sizeof(ev->path) ? ev->path_len : sizeof(ev->path) - 1;

	sh_fmt_time(ts, sizeof(ts), sh_mono_to_real(ev->ktime_ns));
	sh_json_begin(b);
	put_str(b, "time", ts);
	/* Learn records are kept apart: never counted or shown as violations. */
	put_str(b, "event", ev->action == SH_EV_LEARN ? "learn" : "violation");
	put_str(b, "policy", policy ? policy : "?");
	put_str(b, "action", ev->action == SH_EV_LEARN ? "learn" :
			     ev->action == SH_EV_AUDIT ? "audit" : "deny");
	put_str(b, "hook", sh_hook_name(ev->hook));
	sh_json_uint_field(b, "pid", ev->tgid);
	sh_json_uint_field(b, "tid", ev->pid);
	sh_json_uint_field(b, "ppid", ev->ppid);
	sh_json_uint_field(b, "uid", ev->uid);
	sh_json_str_field(b, "comm", (const uint8_t *)ev->comm, comm_len);
	put_str(b, "cgroup", cgroup ? cgroup : "");
	sh_json_uint_field(b, "cgroup_id", ev->cgroup_id);
	if (run_id)
		sh_json_uint_field(b, "run", run_id);
	if (ev->hook == SH_HOOK_SIGNAL || ev->hook == SH_HOOK_PTRACE || ev->hook == SH_HOOK_TASK) {
		char t[16];

		snprintf(t, sizeof(t), "%u", ev->target_pid);
		put_str(b, "target", t);
	} else if (ev->hook == SH_HOOK_IPC && ev->op != SH_OP_OPEN && !ev->path_len) {
		char t[24];

		/* The SysV object's id; a new one has none yet: its key. */
		if (ev->op == SH_OP_IPC_CREATE)
			snprintf(t, sizeof(t), "ipc key %u", ev->op_flags);
		else
			snprintf(t, sizeof(t), "ipc %u", ev->op_flags);
		put_str(b, "target", t);
		if (ev->op == SH_OP_IPC_CTL)
			sh_json_uint_field(b, "cmd", ev->target_pid);
	} else if (ev->hook == SH_HOOK_NET) {
		net_target(b, ev);
	} else if (ev->hook == SH_HOOK_CAPABILITY) {
		char t[24];
		const char *name = sh_cap_name(ev->op_flags);

		if (!name)
			snprintf(t, sizeof(t), "CAP_%u", ev->op_flags);
		put_str(b, "target", name ? name : t);
		sh_json_uint_field(b, "capability", ev->op_flags);
	} else {
		sh_json_str_field(b, "target", (const uint8_t *)ev->path, plen);
	}
	put_str(b, "op", sh_op_name(ev->op));
	put_str(b, "reason", sh_reason_name(ev->reason));
	if (ev->hook == SH_HOOK_FILE)
		file_fields(b, ev);
	if (ev->op == SH_OP_KILL)
		sh_json_uint_field(b, "signal", ev->op_flags);
	if (ev->op == SH_OP_SETOWN || ev->op == SH_OP_BPF || ev->op == SH_OP_IOCTL)
		sh_json_uint_field(b, "request", ev->op_flags);
	if (ev->op == SH_OP_SETRLIMIT)
		sh_json_uint_field(b, "resource", ev->op_flags);
	if (ev->op == SH_OP_SETNICE)
		sh_json_int_field(b, "nice", (int32_t)ev->op_flags);
	if (ev->op == SH_OP_SETIOPRIO)
		sh_json_uint_field(b, "ioprio", ev->op_flags);
	if (ev->op == SH_OP_PTRACE)
		sh_json_uint_field(b, "mode", ev->op_flags);
	if (ev->op == SH_OP_MMAP_EXEC || ev->op == SH_OP_MPROTECT_EXEC)
		sh_json_uint_field(b, "prot", ev->op_flags);
	if (ev->flags & SH_EVF_ABSTRACT)
		put_str(b, "socket", "abstract");
	if (ev->path_err)
		sh_json_int_field(b, "path_error", ev->path_err);
	sh_json_int_field(b, "errno", ev->ret < 0 ? -ev->ret : 0);
}

void sh_audit_format_event(struct sh_buf *b, const struct sh_event *ev,
			   const char *policy, const char *cgroup, uint32_t run_id)
{
	sh_audit_format_event_fields(b, ev, policy, cgroup, run_id);
	sh_json_end(b);
}

/* "(null)" where the line has nothing, as printf writes it. */
static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

/*
 * A value as text for a terminal or the journal's MESSAGE. A path or a
 * comm is chosen by the tree: its control characters (C0, DEL, C1), the
 * line and paragraph separators and the bidirectional controls are
 * written as escapes, and so is the backslash that starts them, so that
 * no byte of it moves the cursor, ends the line or reorders what follows.
 */
static void put_text(struct sh_buf *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)or_null(s); *p; p++) {
		unsigned cp = 0;

		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			cp = p[1];
		else if (*p == 0xd8 && p[1] == 0x9c)     /* U+061C, the Arabic letter mark */
			cp = 0x61c;
		else if (*p == 0xe2 && ((p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f ||
							   (p[2] >= 0xa8 && p[2] <= 0xae))) ||
					(p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
			cp = 0x2000 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f);
		if (cp) {
			sh_buf_printf(out, "\\u%04x", cp);
			p += cp < 0x800 ? 1 : 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			sh_buf_printf(out, "\\x%02x", *p);
		} else {
			if (*p == '\\')
				sh_buf_putc(out, '\\');
			sh_buf_putc(out, (char)*p);
		}
	}
}

void sh_audit_text(struct sh_buf *out, const struct sh_jobj *obj, bool no_time)
{
	const char *ev = sh_jobj_get(obj, "event"), *t = or_null(sh_jobj_get(obj, "time"));
	const char *comm = sh_jobj_get(obj, "comm"), *pid = sh_jobj_get(obj, "pid");
	const char *reason = sh_jobj_get(obj, "reason"), *hook = sh_jobj_get(obj, "hook");
	const char *op = sh_jobj_get(obj, "op"), *access = sh_jobj_get(obj, "access");
	const char *pol = sh_jobj_get(obj, "policy");
	bool sub = op && hook && strcmp(op, hook);
	char what[96];

	if (!no_time) {
		put_text(out, t);
		sh_buf_putc(out, ' ');
	}
	if (!ev || (strcmp(ev, "violation") && strcmp(ev, "learn"))) {
		sh_buf_puts(out, "-- ");
		put_text(out, ev ? ev : "?");
		for (size_t i = 0; i < obj->n; i++)
			if (strcmp(obj->kv[i].key, "time") && strcmp(obj->kv[i].key, "event")) {
				sh_buf_putc(out, ' ');
				put_text(out, obj->kv[i].key);
				sh_buf_putc(out, '=');
				put_text(out, obj->kv[i].val);
			}
		sh_buf_putc(out, '\n');
		return;
	}
	snprintf(what, sizeof(what), "%s%s%s%s", hook ? hook : "?", sub ? "/" : "", sub ? op : "",
		 access && !strcmp(access, "write") ? " write" : "");
	put_text(out, pol ? pol : "?");
	sh_buf_putc(out, ' ');
	put_text(out, sh_jobj_get(obj, "action"));
	sh_buf_putc(out, ' ');
	put_text(out, what);
	sh_buf_putc(out, ' ');
	put_text(out, comm ? comm : "?");
	sh_buf_putc(out, '[');
	put_text(out, pid ? pid : "?");
	sh_buf_puts(out, "] ");
	put_text(out, sh_jobj_get(obj, "target"));
	if (reason) {
		sh_buf_puts(out, " (");
		put_text(out, reason);
		sh_buf_putc(out, ')');
	}
	sh_buf_putc(out, '\n');
}
