/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the programs need from the kernel that vmlinux.h does not carry
 * (macros: errno values, flags, file system magics, ioctl numbers), and the
 * differences between the kernels sharness supports, each with where it is
 * handled.
 *
 * Kernel differences (6.1 is the oldest kernel supported; user space picks
 * the programs by what the kernel's BTF declares, not by version):
 * - inode_setattr takes a `struct mnt_idmap *` first argument on newer
 *   kernels (6.12 has it, 6.1 does not): two programs, sh_inode_setattr
 *   and sh_inode_setattr_idmap (attr.c), and the one whose argument count
 *   matches the kernel's is loaded.
 * - inode_set_acl and inode_remove_acl exist from 6.2 on; before, POSIX
 *   ACLs are xattrs and inode_setxattr sees them. Their programs load only
 *   where the kernel has the hooks.
 * - file_ioctl_compat is newer than 6.1 (and backported to some 6.1
 *   stable kernels); where it is missing, 32-bit ioctls reach file_ioctl.
 *   Loaded only where the kernel has it.
 * - bpf_d_path is allowed in file_open and bprm_check_security, not in the
 *   path_* hooks or for unix peers: those walk the dentry chain themselves
 *   (lib/path.h).
 * - libbpf 1.1 (Debian 12) does not relocate CO-RE field accesses inside a
 *   bpf_loop callback: the callers resolve offsets (struct walk, struct
 *   mount_scan) and the callbacks read raw offsets.
 */
#ifndef SH_BPF_KERNEL_H
#define SH_BPF_KERNEL_H

#define EPERM 1
#define ENOENT 2
#define EAGAIN 11
#define ENOMEM 12
#define EXDEV 18
#define EMLINK 31
#define ENAMETOOLONG 36
#define ESTALE 116

#define FMODE_WRITE 0x2
#define FMODE_CREATED 0x100000 /* this open created the file (6.1 to 6.12 alike) */
#define O_TRUNC 01000
#define F_SETOWN 8
#define F_SETOWN_EX 15
#define F_OWNER_PGRP 2
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CGROUP_SUPER_MAGIC 0x27e0eb
#define BPF_FS_MAGIC 0xcafe4a11
#define CLONE_INTO_CGROUP 0x200000000ULL
#define PROC_SUPER_MAGIC 0x9fa0
#define MNT_INTERNAL 0x4000

/* File systems whose files are kernel knobs: no tree writes to them. */
#define SYSFS_MAGIC 0x62656572
#define SECURITYFS_MAGIC 0x73636673
#define DEBUGFS_MAGIC 0x64626720
#define TRACEFS_MAGIC 0x74726163
#define CONFIGFS_MAGIC 0x62656570
#define BINFMTFS_MAGIC 0x42494e4d
#define PSTOREFS_MAGIC 0x6165676c
#define EFIVARFS_MAGIC 0xde5e81e4
#define SELINUX_MAGIC 0xf97cff8c
#define SMACK_MAGIC 0x43415d53
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#define NFSD_MAGIC 0x6e667364
#define MQUEUE_MAGIC 0x19800202
#define RPC_PIPEFS_MAGIC 0x67596969
#define DEVPTS_SUPER_MAGIC 0x1cd1
#define SOCKFS_MAGIC 0x534f434b
#define TMPFS_MAGIC 0x01021994
/* What a tmpfs directory's size grows by for each name in it (mm/shmem.c):
 * an empty one's is twice that. */
#define SH_SHMEM_BOGO_DIRENT 20

#define F_UNLCK 2 /* file_lock's type: an unlock */

#define S_ISUID 0004000
#define S_ISGID 0002000
#define S_IFMT 00170000
#define S_IFBLK 0060000
#define S_IFCHR 0020000
#define S_IFDIR 0040000
#define S_IFLNK 0120000
#define S_IFREG 0100000
#define S_IFIFO 0010000
#define RENAME_EXCHANGE (1 << 1)
#define S_ISVTX 0001000
#define S_IWOTH 0000002
#define S_IFSOCK 0140000
#define S_CASEFOLD (1 << 15) /* inode.i_flags: a directory whose names compare without case */
#define DCACHE_MOUNTED 0x00010000 /* dentry.d_flags: a mount point (6.1 and 6.12: bit 16) */
/* The kernel's dev_t: major in the bits above 20. */
#define DEV_MAJOR(d) ((__u32)(d) >> 20)
#define DEV_MINOR(d) ((__u32)(d) & 0xfffff)
#define __O_TMPFILE 020000000

/* Terminal and console ioctls (asm-generic/ioctls.h, linux/kd.h, linux/vt.h). */
#define TIOCSCTTY 0x540E
#define TIOCSTI 0x5412
#define TIOCLINUX 0x541C
#define TIOCCONS 0x541D
#define TIOCVHANGUP 0x5437
/* Inode flags: chattr (linux/fs.h; the 32-bit FS_IOC32_SETFLAGS too). */
#define FS_IOC_SETFLAGS 0x40086602
#define FS_IOC32_SETFLAGS 0x40046602
#define FS_IOC_FSSETXATTR 0x401c5820
#define FS_IOC_ENABLE_VERITY 0x40806685   /* makes the file read-only for good */
#define BTRFS_IOC_SUBVOL_SETFLAGS 0x4008941a

#define ATTR_MODE (1 << 0)
#define ATTR_UID (1 << 1)
#define ATTR_GID (1 << 2)
#define ATTR_SIZE (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)

#define CAP_OPT_NOAUDIT (1 << 1)
#define CAP_DAC_READ_SEARCH 2
#define CAP_FSETID 4
#define CAP_SYS_RESOURCE 24
/* System call numbers (orig_ax) where CAP_DAC_READ_SEARCH alone decides:
 * x86_64 (and x32, with its bit cleared), then i386. i386's linkat is
 * x86_64's name_to_handle_at, which asks for it only on its lookup's
 * permission checks (refused there too; CAP_DAC_OVERRIDE then grants). */
#define SH_X32_SYSCALL_BIT        0x40000000
#define SH_NR_LINKAT              265
#define SH_NR_OPEN_BY_HANDLE_AT   304
#define SH_NR32_LINKAT            303
#define SH_NR32_OPEN_BY_HANDLE_AT 342
/* task_struct.flags: an io_uring worker or SQPOLL thread (its pt_regs are
 * not a system call's). */
#define PF_IO_WORKER 0x00000010
/* A task writing its own core dump (set in zap_threads). */
#define PF_DUMPCORE 0x00000200
#define PIDTYPE_PID 0

/* Socket families (linux/socket.h). */
#define AF_UNSPEC 0
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define AF_NETLINK 16
#define NETLINK_USERSOCK 2
#define IPPROTO_ICMPV6 58 /* a macro in linux/in6.h, not in vmlinux.h */

/* Socket options and control messages that send traffic elsewhere than
 * the address judged, or past the host's routing and firewall marks
 * (asm-generic/socket.h, linux/in.h, linux/in6.h). */
#define SOL_IP 0
#define SOL_SOCKET 1
#define SOL_IPV6 41
#define SO_BINDTODEVICE 25
#define SO_MARK 36
#define SO_BINDTOIFINDEX 62
#define IP_OPTIONS 4
#define IP_RETOPTS 7
#define IP_TRANSPARENT 19
#define IP_UNICAST_IF 50
#define IPV6_ADDRFORM 1
#define IPV6_2292HOPOPTS 3
#define IPV6_2292DSTOPTS 4
#define IPV6_2292RTHDR 5
#define IPV6_2292PKTOPTIONS 6
#define IPV6_FLOWLABEL_MGR 32
#define IPV6_HOPOPTS 54
#define IPV6_RTHDRDSTOPTS 55
#define IPV6_RTHDR 57
#define IPV6_DSTOPTS 59
#define IPV6_TRANSPARENT 75
#define IPV6_UNICAST_IF 76

#define PROT_EXEC 0x4
#define PTRACE_MODE_NOAUDIT 0x04
#define READING_FIRMWARE 1


#endif
