// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "version.h"

const char *sh_prog = "sharness";
const char sh_version[] = SH_VERSION;
bool sh_verbose;
bool sh_debug;

static bool to_syslog;

void sh_log_to_syslog(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	openlog(sh_prog, LOG_PID, LOG_DAEMON);
	to_syslog = true;
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

static void vlog(const char *fmt, va_list ap)
{
	if (to_syslog) {
		vsyslog(LOG_NOTICE, fmt, ap);
		return;
	}
	fprintf(stderr, "%s: ", sh_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sh_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void sh_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!sh_verbose)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

ssize_t sh_read_file(const char *path, char *buf, size_t size)
{
	size_t off = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < size - 1) {
		ssize_t n = read(fd, buf + off, size - 1 - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = 0;
	close(fd);
	return off;
}

int sh_cg_value(const char *cg, const char *file, const char *key, uint64_t *out)
{
	char path[512], buf[4096], *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	n = sh_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (!key)
		return sscanf(buf, "%" SCNu64, out) == 1 ? 0 : -EINVAL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t k = strlen(key);

		if (strncmp(l, key, k) == 0 && l[k] == ' ')
			return sscanf(l + k + 1, "%" SCNu64, out) == 1 ? 0 : -EINVAL;
	}
	return -ENOENT;
}

int sh_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

/*
 * The id of a cgroup v2 directory, and its level below /sys/fs/cgroup
 * (which must be the cgroup v2 mount). Anything else is -ENOTDIR: a tag
 * on a path that is not a cgroup would match nothing, silently.
 */
static int sh_cgroup_handle(const char *path, uint64_t *id);

int sh_cgroup_id(const char *path, uint64_t *id)
{
	return sh_cgroup_id_level(path, id, NULL);
}

int sh_cgroup_id_level(const char *path, uint64_t *id, int *level)
{
	static const char root[] = "/sys/fs/cgroup";
	char real[PATH_MAX];
	struct statfs sfs;
	int n = 0;

	if (statfs(path, &sfs) < 0)
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC || !realpath(path, real) ||
	    strncmp(real, root, sizeof(root) - 1) != 0 ||
	    (real[sizeof(root) - 1] != '/' && real[sizeof(root) - 1] != 0))
		return -ENOTDIR;
	for (const char *p = real + sizeof(root) - 1; *p; p++)
		n += *p == '/';
	if (level)
		*level = n;
	return sh_cgroup_handle(real, id);
}

/* A cgroup's file handle: its kernfs id (FILEID_KERNFS). */
struct cg_handle {
	struct file_handle fh;
	uint64_t id;
};

static void cg_handle_init(struct cg_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->fh.handle_bytes = sizeof(uint64_t);
	h->fh.handle_type = 0xfe; /* FILEID_KERNFS */
}

static int sh_cgroup_handle(const char *path, uint64_t *id)
{
	struct cg_handle h;
	int mount_id;

	cg_handle_init(&h);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EINVAL;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

bool sh_cgroup_is_pattern(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}

int sh_cgroup_of(pid_t pid, char *buf, size_t n)
{
	char path[32], data[8192], *l;
	ssize_t len;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	len = sh_read_file(path, data, sizeof(data));
	if (len < 0)
		return (int)len;
	for (l = data; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t e = strcspn(l, "\n");

		if (strncmp(l, "0::/", 4) != 0)
			continue;
		l[e] = 0;
		if (snprintf(buf, n, "/sys/fs/cgroup%s", strcmp(l + 3, "/") ? l + 3 : "") >= (int)n)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}

int sh_cgroup_path_of(uint64_t id, char *buf, size_t n)
{
	struct cg_handle h;
	char link[64];
	int mfd, fd, err = 0;
	ssize_t len;

	mfd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	cg_handle_init(&h);
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	close(mfd);
	if (err)
		return err;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, buf, n - 1);
	if (len < 0)
		err = -errno;
	else if ((size_t)len >= n - 1)
		err = -ENAMETOOLONG;
	else
		buf[len] = 0;
	close(fd);
	return err;
}

void sh_dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, n, ".");
	else if (slash == path)
		snprintf(dir, n, "/");
	else
		snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

int sh_mkdir_p(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

uint64_t sh_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t sh_now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Seconds in the unit u (n bytes), or 0 if it names none. */
static uint64_t unit_secs(const char *u, size_t n)
{
	static const struct { const char *name; uint64_t secs; } units[] = {
		{ "s", 1 }, { "sec", 1 }, { "secs", 1 }, { "second", 1 }, { "seconds", 1 },
		{ "m", 60 }, { "min", 60 }, { "mins", 60 }, { "minute", 60 }, { "minutes", 60 },
		{ "h", 3600 }, { "hour", 3600 }, { "hours", 3600 },
		{ "d", 86400 }, { "day", 86400 }, { "days", 86400 },
		{ "w", 604800 }, { "week", 604800 }, { "weeks", 604800 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n && !strncmp(u, units[i].name, n))
			return units[i].secs;
	return 0;
}

int sh_parse_when(const char *s, uint64_t now, uint64_t *out)
{
	static const char *const forms[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
					     "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	static const struct { const char *name; int days; } words[] = {
		{ "today", 0 }, { "yesterday", -1 }, { "tomorrow", 1 },
	};
	const uint64_t sec = 1000000000ull;
	unsigned long long v;
	const char *p = s, *u;
	int sign = -1;
	size_t un;
	char *end;
	uint64_t secs;

	if (!strcmp(s, "now")) {
		*out = now;
		return 0;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i].name)) {
			uint64_t midnight = now / sec / 86400 * 86400;

			*out = (midnight + (int64_t)words[i].days * 86400) * sec;
			return 0;
		}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct tm tm = { 0 };
		const char *e = strptime(s, forms[i], &tm);

		if (e && !*e) {
			*out = (uint64_t)timegm(&tm) * sec;
			return 0;
		}
	}
	/* [+-]N[ ]UNIT[ ago] */
	if (*p == '-' || *p == '+')
		sign = *p++ == '+' ? 1 : -1;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || v > 1000000000ull)
		return -EINVAL;
	while (*end == ' ')
		end++;
	u = end;
	while (*end >= 'a' && *end <= 'z')
		end++;
	un = (size_t)(end - u);
	secs = unit_secs(u, un);
	if (!secs)
		return -EINVAL;
	if (!strcmp(end, " ago")) {
		if (*s == '-' || *s == '+')
			return -EINVAL;   /* "-1h ago": which way? */
	} else if (*end) {
		return -EINVAL;
	}
	secs *= v;
	if (secs > 10000000000ull || (sign < 0 && secs * sec > now))
		return -EINVAL;     /* centuries away, or before 1970 */
	*out = sign < 0 ? now - secs * sec : now + secs * sec;
	return 0;
}

void sh_fmt_time(char *out, size_t n, uint64_t ns)
{
	time_t sec = ns / 1000000000ull;
	struct tm tm;
	char base[32];

	gmtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, n, "%s.%06uZ", base, (unsigned)((ns % 1000000000ull) / 1000));
}

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

int sh_kernel_dev(uint64_t mnt_id, uint32_t *kdev, struct sh_mnt_dev *cache)
{
	char line[8192];
	unsigned maj, min;
	int id, err = -ENOENT;
	FILE *f;

	if (cache && cache->known && cache->mnt_id == mnt_id) {
		*kdev = cache->kdev;
		return 0;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %*d %u:%u", &id, &maj, &min) == 3 && (uint64_t)id == mnt_id) {
			*kdev = (maj << 20) | min;
			err = 0;
			break;
		}
	}
	fclose(f);
	if (!err && cache) {
		cache->known = true;
		cache->mnt_id = mnt_id;
		cache->kdev = *kdev;
	}
	return err;
}

int sh_kernel_ino_at(int dirfd, const char *name, int flags, uint64_t *ino, uint32_t *kdev,
		     struct sh_mnt_dev *cache)
{
	struct statx stx;

	if (statx(dirfd, name, flags, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOTSUP;
	*ino = stx.stx_ino;
	return sh_kernel_dev(stx.stx_mnt_id, kdev, cache);
}

int sh_kernel_ino(const char *path, uint64_t *ino, uint32_t *kdev)
{
	return sh_kernel_ino_at(AT_FDCWD, path, 0, ino, kdev, NULL);
}

int sh_parse_seconds_or_never(const char *s, long max, int *out)
{
	long v = 0;

	if (strcmp(s, "never") == 0) {
		*out = -1;
		return 0;
	}
	if (!*s || strlen(s) > 9)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/*
 * Out of the OOM killer's way, as the unit says (OOMScoreAdjust=-1000)
 * and, started by hand, by itself: memory a tree holds where no process's
 * RSS counts it (tmpfs, an unmapped memfd) would otherwise make the daemon
 * a victim, and with it the audit log and the runs' supervision. Its
 * programs would go on enforcing; a failure is said, not fatal.
 */
void sh_keep_off_oom(void)
{
	int err = sh_write_file("/proc/self/oom_score_adj", "-1000");

	if (err)
		sh_log("cannot set its oom_score_adj to -1000: %s (the OOM killer may pick it)",
		       strerror(-err));
}

int sh_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The pids in cgroup path's cgroup.procs (at most max into pids); how many
 * there are in all, or -errno. */
long sh_cgroup_pids(const char *path, pid_t *pids, size_t max)
{
	char file[PATH_MAX], buf[65536], *save = NULL;
	long n = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	n = sh_read_file(file, buf, sizeof(buf));
	if (n < 0)
		return n;
	n = 0;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++)
		if ((size_t)n < max)
			pids[n] = (pid_t)strtol(l, NULL, 10);
	return n;
}
