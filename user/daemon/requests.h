/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket's requests (requests.c), the status request among
 * them (status.c).
 */
#ifndef SH_REQUESTS_H
#define SH_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"

/* One connection on the listening socket lfd, one request. */
void sh_req_serve(struct sh_daemon *d, int lfd);
/* status.c: the `status` request ([json|prometheus]). */
int sh_req_status(struct sh_daemon *d, int fd, int argc, char **argv);

#endif
