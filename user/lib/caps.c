// SPDX-License-Identifier: GPL-2.0
/*
 * Capability names, as written in policies ([limits] capability) and shown
 * in audit records and logs.
 */
#include "caps.h"
#include "sharness.h"

#include <stddef.h>
#include <strings.h>

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};
_Static_assert(sizeof(cap_names) / sizeof(cap_names[0]) == SH_CAP_COUNT,
	       "one name per known capability");

const char *sh_cap_name(unsigned cap)
{
	return cap < SH_CAP_COUNT ? cap_names[cap] : NULL;
}

int sh_cap_parse(const char *name)
{
	if (strncasecmp(name, "cap_", 4) == 0)
		name += 4;
	for (unsigned i = 0; i < SH_CAP_COUNT; i++)
		if (strcasecmp(name, cap_names[i] + 4) == 0)
			return (int)i;
	return -1;
}
