// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * Both ends of the control protocol (described in control.h): the client's
 * request and reply reading, for sharnessctl; the daemon's socket, request
 * parsing and replies, for sharnessd.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "util.h"

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa;
	int fd, err;

	err = fill_addr(&sa, path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int send_request(int fd, int argc, const char *const *argv)
{
	char *buf;
	size_t len = 0;
	ssize_t n;

	if (argc <= 0 || argc > SH_CTL_MAX_ARGS)
		return -EINVAL;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > SH_CTL_MAX_MSG)
		return -E2BIG;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	len = 0;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;

		memcpy(buf + len, argv[i], l);
		len += l;
	}
	n = send(fd, buf, len, MSG_NOSIGNAL);
	free(buf);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Copies 'O' text to out, or appends it to *cap when cap is given, and 'E'
 * text to err; returns the exit status sent by the daemon, or -errno if the
 * daemon went away without one. */
static int read_reply(int fd, FILE *out, FILE *err, char **cap, size_t *caplen)
{
	char *buf = malloc(SH_CTL_MAX_MSG + 1);
	int status = -ECONNRESET;

	if (!buf)
		return -ENOMEM;
	for (int resets = 0;;) {
		ssize_t n = recv(fd, buf, SH_CTL_MAX_MSG, 0);

		if (n < 0 && errno == EINTR)
			continue;
		/* Reported once when the daemon closed before reading our
		 * request (it refused us); its replies follow. */
		if (n < 0 && errno == ECONNRESET && !resets++)
			continue;
		if (n < 0) {
			status = -errno;
			break;
		}
		if (n == 0)
			break;
		buf[n] = 0;
		if (buf[0] == 'O') {
			if (cap) {
				char *p = realloc(*cap, *caplen + n);

				if (!p) { status = -ENOMEM; break; }
				memcpy(p + *caplen, buf + 1, n - 1);
				*caplen += n - 1;
				p[*caplen] = 0;
				*cap = p;
			} else if (out) {
				fwrite(buf + 1, 1, n - 1, out);
			}
		} else if (buf[0] == 'E') {
			if (err)
				fwrite(buf + 1, 1, n - 1, err);
		} else if (buf[0] == 'X') {
			status = atoi(buf + 1);
			break;
		}
	}
	free(buf);
	if (out)
		fflush(out);
	return status;
}

/* One request: connect, send, read the reply into out or cap (see read_reply). */
static int call(const char *path, int argc, const char *const *argv, FILE *out, FILE *err,
		char **cap, size_t *caplen)
{
	int fd = connect_to(path), ret;

	if (fd < 0)
		return fd;
	ret = send_request(fd, argc, argv);
	/* The daemon may have refused us before reading: read its reply. */
	if (!ret || ret == -EPIPE || ret == -ECONNRESET) {
		int r = read_reply(fd, out, err, cap, caplen);

		ret = (!ret || r >= 0) ? r : ret;
	}
	close(fd);
	return ret;
}

int sh_ctl_call(const char *path, int argc, const char *const *argv, FILE *out, FILE *err)
{
	return call(path, argc, argv, out, err, NULL, NULL);
}

int sh_ctl_call_capture(const char *path, int argc, const char *const *argv, char **out, FILE *err)
{
	size_t len = 0;

	*out = calloc(1, 1);
	if (!*out)
		return -ENOMEM;
	return call(path, argc, argv, NULL, err, out, &len);
}

int sh_ctl_listen(const char *path)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)];
	int fd, err;

	err = fill_addr(&sa, path);
	if (err)
		return err;
	sh_dir_of(path, dir, sizeof(dir));
	err = sh_mkdir_p(dir, 0700);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int sh_ctl_parse(char *buf, size_t len, char **argv, int max)
{
	int argc = 0;
	size_t i = 0;

	if (len == 0 || buf[len - 1] != 0)
		return -EINVAL;
	while (i < len) {
		if (argc == max)
			return -E2BIG;
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	if (argv[0][0] == 0)
		return -EINVAL;
	return argc;
}

int sh_ctl_reply(int fd, char kind, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	buf[0] = kind;
	va_start(ap, fmt);
	n = vsnprintf(buf + 1, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	if (send(fd, buf, n + 1, MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}
