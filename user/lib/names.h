/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of the kernel side's numbers: hooks (SH_HOOK_*), operations
 * (SH_OP_*) and reasons (SH_WHY_*). An unknown number is "unknown".
 */
#ifndef SH_NAMES_H
#define SH_NAMES_H

const char *sh_hook_name(unsigned hook);
const char *sh_op_name(unsigned op);
const char *sh_reason_name(unsigned reason);

#endif
