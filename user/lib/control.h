/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control protocol between sharnessctl and sharnessd, over a SOCK_SEQPACKET
 * unix socket. A request is one message: its arguments as NUL-terminated
 * strings, the first naming the command. The reply is a sequence of
 * messages, each one kind byte then text: 'O' for standard output, 'E' for
 * standard error, and a final 'X' with the decimal exit status.
 */
#ifndef SH_CONTROL_H
#define SH_CONTROL_H

#include <stddef.h>
#include <stdio.h>

#define SH_CTL_MAX_MSG   65536
#define SH_CTL_MAX_ARGS  64
#define SH_CTL_DEFAULT_SOCKET "/run/sharness/control.sock"

/* The client's end. One request: connect, send, read the reply, copying 'O' text to out and
 * 'E' text to err. Returns the exit status the daemon sent, or -errno if it
 * could not be reached or went away without one. */
int sh_ctl_call(const char *path, int argc, const char *const *argv, FILE *out, FILE *err);
/* Like sh_ctl_call but collects the 'O' text into a malloc'd string. */
int sh_ctl_call_capture(const char *path, int argc, const char *const *argv, char **out, FILE *err);

/* The daemon's end. A listening socket at path, for root only. */
int sh_ctl_listen(const char *path);
/* Splits a request into argv (pointing into buf); -EINVAL if malformed:
 * empty, not NUL-terminated, too many arguments. */
int sh_ctl_parse(char *buf, size_t len, char **argv, int max);
int sh_ctl_reply(int fd, char kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
