/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capability names, as policies write them ([limits] capability) and
 * audit records and logs show them.
 */
#ifndef SH_CAPS_H
#define SH_CAPS_H

/* "CAP_SYS_TIME" for 25; NULL for a number this build does not know. */
const char *sh_cap_name(unsigned cap);
/* 25 for "sys_time", "CAP_SYS_TIME" (any case); -1 if unknown. */
int sh_cap_parse(const char *name);

#endif
