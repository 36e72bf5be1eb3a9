// SPDX-License-Identifier: GPL-2.0
/*
 * sharness: BPF-LSM programs that hold every descendant of a tagged cgroup
 * to its policy.
 *
 * One compilation unit, one object, one skeleton: the files below are
 * included here rather than linked, so the programs share their maps and
 * helpers without extern declarations, and the pinned names (map_NAME,
 * link_PROG) a new daemon adopts stay those of a single object.
 *
 *   lib/kernel.h    constants vmlinux.h lacks; kernel differences
 *   lib/maps.h      maps, globals, the per-CPU scratch
 *   lib/member.h    which tree (and policy) the current task is held to
 *   lib/path.h      path resolution, and whether a path names its object
 *   lib/objects.h   objects no policy opens to a tree
 *   lib/verdict.h   rule lookup, report(), forbid()
 *   lib/memo.h      the directory memo
 *   lib/memo_obj.h  the memos of a mapped file and of a unix peer
 *   lib/mounts.h    a file system's mounts in the task's namespace
 *   exec.c          exec and executable mappings
 *   unix.c          unix socket connects and sends; socket files a tree binds
 *   file.c          opens and name-space changes
 *   rename.c        renames and hard links
 *   attr.c          xattrs, ACLs, times, setattr
 *   net.c           [net]: inet connect, send, bind, listen; socket kinds
 *   signal.c        signals and their side doors
 *   ioctl.c         terminal and inode-flag ioctls (FIOSETOWN: signal.c)
 *   task.c          limits, scheduling, capabilities, IPC, keys
 *   wall.c          the tree's own wall: cgroups, bpf, mounts, namespaces,
 *                   ptrace, modules
 *   cgroup.c        cgroups tagged as they are made (cgroup patterns)
 */
#include "lib/verdict.h"
#include "lib/objects.h"

char LICENSE[] SEC("license") = "GPL";

#include "exec.c"
#include "unix.c"
#include "file.c"
#include "rename.c"
#include "attr.c"
#include "net.c"
#include "signal.c"
#include "ioctl.c"
#include "task.c"
#include "wall.c"
#include "cgroup.c"
