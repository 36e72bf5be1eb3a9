// SPDX-License-Identifier: GPL-2.0
/*
 * The count of directory moves the directory memo is keyed to
 * (bpf/lib/memo.h, bpf/rename.c): made live once the daemon saw it count
 * its own moves, cleared before the programs rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforcer.h"
#include "enforcer_int.h"
#include "sharness.skel.h"
#include "util.h"

/*
 * Does the count see this kernel's directory moves? A rename and an
 * exchange of two directories made here must each add to it: a kernel
 * whose compiler copied __d_move into a caller would move directories
 * through that caller uncounted, and memos keyed to the count would hold
 * after a directory above them moved. (A copy only in d_splice_alias's
 * path, a network file system's, is not seen here.) Other moves on the
 * host may add too; none may be missing. 1: seen; 0: a move was not
 * counted; -errno: the moves could not be made or the count not read.
 */
static int moves_seen(struct sh_enforcer *e)
{
	int fd = bpf_map__fd(e->skel->maps.dir_moves), dfd, seen = 0;
	char dir[] = "/tmp/sharness-moves.XXXXXX";
	uint64_t c0 = 0, c1 = 0, c2 = 0;
	uint32_t k = SH_MOVES_COUNT;

	if (!mkdtemp(dir))
		return -errno;
	dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dfd < 0)
		seen = -errno;
	else if (mkdirat(dfd, "a", 0700) || mkdirat(dfd, "b", 0700))
		seen = -errno;
	else if (bpf_map_lookup_elem(fd, &k, &c0) || renameat(dfd, "a", dfd, "c") ||
		 bpf_map_lookup_elem(fd, &k, &c1) ||
		 renameat2(dfd, "c", dfd, "b", RENAME_EXCHANGE) ||
		 bpf_map_lookup_elem(fd, &k, &c2))
		seen = -errno;
	else
		seen = c1 > c0 && c2 > c1;
	if (dfd >= 0) {
		unlinkat(dfd, "a", AT_REMOVEDIR);
		unlinkat(dfd, "b", AT_REMOVEDIR);
		unlinkat(dfd, "c", AT_REMOVEDIR);
		close(dfd);
	}
	rmdir(dir);
	return seen;
}

/*
 * The directory memo's count of directory moves (bpf/lib/memo.h) is live
 * while every program is attached, its counter with them: set after an
 * attach or a resume (with a number of its own), cleared before a detach.
 * Only its state entry is written (the programs add to the count). Where
 * the counter is not linked (no __d_move to trace), or does not see the
 * moves made here (moves_seen), it is cleared, and memos are keyed to
 * every rename.
 */
int sh_moves_live(struct sh_enforcer *e, bool live)
{
	uint32_t k = SH_MOVES_STATE, nonce = 0;
	uint64_t v = 0;
	int seen;

	/* Linked: loaded by this daemon or resumed from the last. */
	if (!e->skel->links.sh_dir_move)
		live = false;
	if (live && (seen = moves_seen(e)) <= 0) {
		if (!e->moves_unseen_logged && seen < 0)
			sh_log("cannot check the count of directory moves (directories moved in /tmp: "
			       "%s): memos are keyed to every rename", strerror(-seen));
		else if (!e->moves_unseen_logged)
			sh_log("the count of directory moves did not see a directory renamed and "
			       "exchanged in /tmp: memos are keyed to every rename");
		e->moves_unseen_logged = true;
		live = false;
	}
	/* Not live, the state is cleared, not left: an adopted map may say
	 * live. */
	if (live) {
		if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
			nonce = (uint32_t)sh_now_ns(CLOCK_MONOTONIC);
		v = (uint64_t)nonce << 32 | SH_MOVES_LIVE;
	}
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.dir_moves), &k, &v, BPF_ANY))
		return -errno;
	return 0;
}
