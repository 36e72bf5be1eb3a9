// SPDX-License-Identifier: GPL-2.0
/*
 * sharness-oci-hook: an OCI runtime hook (createRuntime) that holds a
 * container to the policy its annotation names.
 *
 * The runtime runs it with the container's state on stdin (the OCI
 * runtime spec's state: id, status, pid, bundle, annotations) once the
 * container's init process is in its cgroup and before the container's
 * command runs. A container annotated `org.sharness.policy=NAME` has its
 * cgroup tagged with policy NAME as a container's (`tag CGROUP NAME
 * runtime PID` to the daemon): the init, the runtime's, is the host's until
 * it execs the container's command, which the policy then holds
 * (`held-from = exec`). Without the annotation nothing changes. Any
 * failure (no daemon, an unknown policy, a policy that does not hold from
 * exec, a state it cannot read) exits 1 with the reason on stderr: the
 * runtime then does not start the container.
 *
 *   sharness-oci-hook [--socket PATH]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "control.h"

#define ANNOTATION   "org.sharness.policy"
#define STATE_MAX    (1 << 20)
#define CGROUP_ROOT  "/sys/fs/cgroup"

static const char *id = "?";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sharness-oci-hook: container %s: ", id);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* The whole of stdin, at most STATE_MAX bytes; NULL on error (errno). */
static char *read_state(size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			if (cap >= STATE_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			nb = realloc(buf, cap *= 2);
			if (!nb)
				break;
			buf = nb;
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* The cgroup v2 directory of process pid (its "0::" line); 0 or -errno. */
static int cgroup_of(long pid, char *out, size_t n)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		size_t l = strcspn(line, "\n");

		line[l] = 0;
		if (strncmp(line, "0::/", 4))
			continue;
		err = snprintf(out, n, CGROUP_ROOT "%s", line[4] ? line + 3 : "") >= (int)n
			      ? -ENAMETOOLONG : 0;
		break;
	}
	free(line);
	fclose(f);
	return err;
}

int main(int argc, char **argv)
{
	const char *sock = SH_CTL_DEFAULT_SOCKET, *policy;
	json_t *state, *ann, *v;
	char cg[4096], pids[24], *buf;
	json_error_t jerr;
	size_t len;
	long pid;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			sock = argv[++i];
		} else {
			fprintf(stderr, "usage: sharness-oci-hook [--socket PATH] < OCI-STATE\n");
			return 2;
		}
	}
	buf = read_state(&len);
	if (!buf)
		return fail("cannot read the state on stdin: %s", strerror(errno));
	state = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (!json_is_object(state))
		return fail("the state on stdin is no JSON object: %s (line %d)",
			    state ? "not an object" : jerr.text, jerr.line);
	v = json_object_get(state, "id");
	if (json_is_string(v))
		id = json_string_value(v);
	ann = json_object_get(state, "annotations");
	v = json_is_object(ann) ? json_object_get(ann, ANNOTATION) : NULL;
	if (!v)
		return 0;       /* not annotated: not ours */
	policy = json_string_value(v);
	if (!policy || !*policy)
		return fail("annotation " ANNOTATION " is no policy name");
	/* createRuntime: the init is in the container's cgroup, its command
	 * not yet run. The spec's state there is "creating"; crun (1.8)
	 * says "created", which the spec defines as a container whose
	 * process has not yet run the user's program either. At any later
	 * stage ("running", "stopped") the command may have run. A hook run
	 * at a stage inside the container (createContainer, startContainer)
	 * is itself a second process in the cgroup: the daemon refuses the
	 * tag (the init must be the one process there). */
	v = json_object_get(state, "status");
	if (!json_is_string(v) || (strcmp(json_string_value(v), "creating") &&
				   strcmp(json_string_value(v), "created")))
		return fail("the container is '%s', not 'creating' or 'created': "
			    "run this hook at createRuntime",
			    json_is_string(v) ? json_string_value(v) : "?");
	v = json_object_get(state, "pid");
	pid = json_is_integer(v) ? (long)json_integer_value(v) : 0;
	if (pid <= 0 || pid > INT32_MAX)
		return fail("the state names no process (pid)");
	rc = cgroup_of(pid, cg, sizeof(cg));
	if (rc)
		return fail("cannot read the cgroup of its process %ld: %s", pid, strerror(-rc));
	snprintf(pids, sizeof(pids), "%ld", pid);
	rc = sh_ctl_call(sock, 5, (const char *const[]){ "tag", cg, policy, "runtime", pids },
			 stdout, stderr);
	if (rc < 0)
		return fail("cannot reach sharnessd at %s: %s; the container is not started",
			    sock, strerror(-rc));
	if (rc)
		return fail("sharnessd refused to hold its cgroup %s to policy '%s' (above); "
			    "the container is not started", cg, policy);
	json_decref(state);
	return 0;
}
