// SPDX-License-Identifier: GPL-2.0
/*
 * The names of hooks, operations and reasons, as the audit log, the
 * status report and the suppression records print them.
 */
#include "names.h"
#include "sharness.h"

const char *sh_hook_name(unsigned hook)
{
	switch (hook) {
	case SH_HOOK_EXEC: return "exec";
	case SH_HOOK_FILE: return "file";
	case SH_HOOK_CONNECT: return "connect";
	case SH_HOOK_SIGNAL: return "signal";
	case SH_HOOK_CHROOT: return "chroot";
	case SH_HOOK_CGROUP: return "cgroup";
	case SH_HOOK_BPF: return "bpf";
	case SH_HOOK_MOUNT: return "mount";
	case SH_HOOK_NAMESPACE: return "namespace";
	case SH_HOOK_PTRACE: return "ptrace";
	case SH_HOOK_MODULE: return "module";
	case SH_HOOK_MMAP: return "mmap";
	case SH_HOOK_TTY: return "tty";
	case SH_HOOK_TASK: return "task";
	case SH_HOOK_CAPABILITY: return "capability";
	case SH_HOOK_IPC: return "ipc";
	case SH_HOOK_KEYRING: return "keyring";
	case SH_HOOK_NET: return "net";
	default: return "unknown";
	}
}

const char *sh_op_name(unsigned op)
{
	static const char *const names[SH_OP_MAX] = {
		[SH_OP_EXEC] = "exec", [SH_OP_OPEN] = "open", [SH_OP_CREATE] = "create",
		[SH_OP_UNLINK] = "unlink", [SH_OP_MKDIR] = "mkdir", [SH_OP_RMDIR] = "rmdir",
		[SH_OP_RENAME_FROM] = "rename-from", [SH_OP_RENAME_TO] = "rename-to",
		[SH_OP_LINK_FROM] = "link-from", [SH_OP_LINK_TO] = "link-to",
		[SH_OP_SYMLINK] = "symlink", [SH_OP_TRUNCATE] = "truncate",
		[SH_OP_CHMOD] = "chmod", [SH_OP_CHOWN] = "chown", [SH_OP_CONNECT] = "connect",
		[SH_OP_SEND] = "send", [SH_OP_KILL] = "kill", [SH_OP_SETOWN] = "setown",
		[SH_OP_CHROOT] = "chroot", [SH_OP_CLONE_INTO_CGROUP] = "clone-into-cgroup",
		[SH_OP_BPF] = "bpf", [SH_OP_MOUNT] = "mount", [SH_OP_UMOUNT] = "umount",
		[SH_OP_MOVE_MOUNT] = "move-mount", [SH_OP_PIVOT_ROOT] = "pivot-root",
		[SH_OP_USERNS] = "userns", [SH_OP_PTRACE] = "ptrace",
		[SH_OP_MODULE_LOAD] = "module-load", [SH_OP_MODULE_REQUEST] = "module-request",
		[SH_OP_MMAP_EXEC] = "mmap-exec", [SH_OP_MPROTECT_EXEC] = "mprotect-exec",
		[SH_OP_RECEIVE] = "receive", [SH_OP_SETXATTR] = "setxattr",
		[SH_OP_REMOVEXATTR] = "removexattr", [SH_OP_SETACL] = "setacl",
		[SH_OP_SETTIMES] = "settimes", [SH_OP_SETFLAGS] = "setflags",
		[SH_OP_IOCTL] = "ioctl", [SH_OP_SETRLIMIT] = "setrlimit",
		[SH_OP_SETSCHEDULER] = "setscheduler", [SH_OP_SETNICE] = "setnice",
		[SH_OP_SETIOPRIO] = "setioprio", [SH_OP_MOVEMEMORY] = "movememory",
		[SH_OP_CAPABLE] = "capable", [SH_OP_IPC] = "ipc", [SH_OP_KEY] = "key",
		[SH_OP_BIND] = "bind", [SH_OP_LISTEN] = "listen", [SH_OP_SOCKET] = "socket",
		[SH_OP_SETSOCKOPT] = "setsockopt", [SH_OP_IPC_CTL] = "ipcctl",
		[SH_OP_IPC_CREATE] = "ipc-create", [SH_OP_LOCK] = "lock",
		[SH_OP_WATCH] = "watch", [SH_OP_NETLINK_SEND] = "netlink-send",
		[SH_OP_FOLLOW] = "follow",
	};

	return op < SH_OP_MAX && names[op] ? names[op] : "unknown";
}

const char *sh_reason_name(unsigned reason)
{
	switch (reason) {
	case SH_WHY_RULE: return "deny rule";
	case SH_WHY_DEFAULT: return "not allowed";
	case SH_WHY_UNRESOLVED: return "path unresolved";
	case SH_WHY_NOPOLICY: return "policy missing";
	case SH_WHY_SCOPE: return "outside the tree";
	case SH_WHY_ABSTRACT: return "abstract socket";
	case SH_WHY_FORBIDDEN: return "forbidden in a tree";
	case SH_WHY_DELETED: return "deleted or in-memory file";
	case SH_WHY_PROTECTED: return "sharnessd is protected";
	case SH_WHY_DEVICE: return "device not allowed";
	case SH_WHY_SOCKET: return "socket kind not allowed";
	case SH_WHY_ADDRESS: return "bad socket address";
	case SH_WHY_OPTION: return "socket option not allowed";
	case SH_WHY_CASEFOLD: return "case-insensitive name";
	case SH_WHY_MOVES: return "rename across a rule";
	case SH_WHY_PLANTED: return "planted by a tree";
	case SH_WHY_DIGEST: return "digest mismatch";
	case SH_WHY_PINNED: return "pinned executable";
	default: return "unknown";
	}
}
