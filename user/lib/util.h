/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SH_UTIL_H
#define SH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit codes shared by sharnessd and sharnessctl (documented in README). */
enum sh_exit {
	SH_EXIT_OK       = 0,
	SH_EXIT_FAIL     = 1, /* generic failure, bad usage */
	SH_EXIT_POLICY   = 2, /* policy files invalid */
	SH_EXIT_NOENFORCE = 3, /* this kernel cannot enforce */
	SH_EXIT_DAEMON   = 4, /* daemon unreachable or refused the request */
};

extern const char *sh_prog;   /* log prefix */
extern const char sh_version[];   /* "0.9.0+gabc1234": VERSION and the commit */
extern bool sh_verbose;   /* --verbose: our own debug messages */
extern bool sh_debug;     /* --debug: also libbpf's (the verifier's log) */

void sh_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on sh_log and sh_dbg go to syslog (the journal), and the
 * standard streams to /dev/null. */
void sh_log_to_syslog(void);
void sh_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole small file (NUL-terminated); returns bytes or -errno. */
ssize_t sh_read_file(const char *path, char *buf, size_t size);
/* Write a string to a file (cgroup and proc knobs); 0 or -errno. */
int sh_write_file(const char *path, const char *s);
/* cgroup v2 id of the cgroup directory at path (under /sys/fs/cgroup);
 * 0, -ENOTDIR if it is not one, or -errno. level: depth below the root. */
int sh_cgroup_id(const char *path, uint64_t *id);
int sh_cgroup_id_level(const char *path, uint64_t *id, int *level);
/* Is this `cgroup =` value a pattern (`*`, `?` or `[` in it)? */
bool sh_cgroup_is_pattern(const char *path);
/* The cgroup v2 directory process pid is in ("/sys/fs/cgroup/...", from
 * /proc/PID/cgroup; 0 for the caller): 0, -ENOENT when it lists no v2
 * cgroup, or -errno. */
int sh_cgroup_of(pid_t pid, char *buf, size_t n);
/* The path under /sys/fs/cgroup of the cgroup with this id (opened by
 * its handle): 0, -ESTALE or -ENOENT once it is removed, or -errno. */
int sh_cgroup_path_of(uint64_t id, char *buf, size_t n);
/* The pids in cgroup path's cgroup.procs (at most max into pids); how many
 * there are in all, or -errno. */
long sh_cgroup_pids(const char *path, pid_t *pids, size_t max);
/* The value of KEY in a flat-keyed cgroup file ("oom_kill 3" in
 * memory.events, "usage_usec 1200" in cpu.stat) of cgroup cg; a file
 * holding one number (memory.peak) with key NULL. 0, or -errno (-ENOENT:
 * no such file or key). */
int sh_cg_value(const char *cg, const char *file, const char *key, uint64_t *out);
/* The directory path lies in ("." or "/" where it names no other). */
void sh_dir_of(const char *path, char *dir, size_t n);
/* mkdir -p, mode for each created component. */
int sh_mkdir_p(const char *path, mode_t mode);
/* The inode number of path and the device number the kernel keeps for its
 * file system (super_block.s_dev, as major << 20 | minor: what the BPF
 * programs read). stat's st_dev is not always that (btrfs subvolumes), so
 * it is read from /proc/self/mountinfo for the mount statx names. */
int sh_kernel_ino(const char *path, uint64_t *ino, uint32_t *kdev);
/* The last mount sh_kernel_ino_at looked up, kept across calls. */
struct sh_mnt_dev {
	bool known;
	uint64_t mnt_id;
	uint32_t kdev;
};
/* The kernel's device number of the file system of mount mnt_id (statx's
 * stx_mnt_id), from /proc/self/mountinfo; cache: NULL, or zeroed before
 * the first call. */
int sh_kernel_dev(uint64_t mnt_id, uint32_t *kdev, struct sh_mnt_dev *cache);
/* The same of name relative to dirfd, with statx's flags (AT_EMPTY_PATH:
 * dirfd's own file; AT_SYMLINK_NOFOLLOW); cache: NULL, or zeroed before
 * the first call. */
int sh_kernel_ino_at(int dirfd, const char *name, int flags, uint64_t *ino, uint32_t *kdev,
		     struct sh_mnt_dev *cache);
/* RFC 3339 UTC time with microseconds of a CLOCK_REALTIME instant. */
void sh_fmt_time(char *out, size_t n, uint64_t realtime_ns);
uint64_t sh_now_ns(int clock);
/* FNV-1a, 64 bits, of n bytes at p, on from h (SH_FNV_BASIS to start):
 * digests of what changed, never a secret or a hash a tree could steer. */
#define SH_FNV_BASIS 0xcbf29ce484222325ull
uint64_t sh_fnv1a(uint64_t h, const void *p, size_t n);
/*
 * A time as `log --since/--until` take it, in CLOCK_REALTIME ns, against
 * now (ns): a date ("2026-11-30", "2026-11-30T10:05[:07]", a space for the
 * T also; UTC, as the log writes), "now", "today", "yesterday",
 * "tomorrow" (midnight UTC), a time ago ("90s", "10m", "2h", "3d", "1w";
 * "1 hour ago", "2 days ago", "-1h", "-5 min") or ahead ("+1h"). Units:
 * s sec second, m min minute, h hour, d day, w week, and their plurals.
 * Returns 0, or -EINVAL for anything else.
 */
int sh_parse_when(const char *s, uint64_t now, uint64_t *out);
/* Whole seconds from 0 to max, digits only, or "never" (-1): 0 and *out, or
 * -EINVAL (*out untouched). */
int sh_parse_seconds_or_never(const char *s, long max, int *out);
/* oom_score_adj -1000 for this process (a failure is logged). */
void sh_keep_off_oom(void);

/* The value of a hex digit (either case), or -1. */
int sh_hex_digit(int c);

#endif
