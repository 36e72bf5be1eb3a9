/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One io_uring request, set up with raw system calls (the helpers need no
 * liburing): the side-door tests use it to reach the enforcer's hooks from
 * the kernel's own io_uring contexts.
 *
 *   URING_INLINE  no flag: the kernel tries the request in the submitting
 *                 task and hands it to an io-wq worker when it cannot end
 *                 it without blocking (mkdirat, unlinkat and creates
 *                 always; an open whose lookup is not all cached)
 *   URING_ASYNC   IOSQE_ASYNC: an io-wq worker thread runs it
 *   URING_SQPOLL  a ring with IORING_SETUP_SQPOLL: the ring's own kernel
 *                 thread picks the request up (and may hand it on to io-wq)
 */
#ifndef SHARNESS_TEST_URING_H
#define SHARNESS_TEST_URING_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/io_uring.h>

enum uring_how { URING_INLINE, URING_ASYNC, URING_SQPOLL };

/* "inline", "async" or "sqpoll"; -1 for anything else. */
static inline int uring_how_of(const char *s)
{
	if (!strcmp(s, "inline"))
		return URING_INLINE;
	if (!strcmp(s, "async"))
		return URING_ASYNC;
	if (!strcmp(s, "sqpoll"))
		return URING_SQPOLL;
	return -1;
}

/*
 * Submits a copy of REQ and waits for its completion: returns 0 with the
 * completion's res in *RES (a negative errno when the request failed), or
 * -1 with errno set and *WHAT naming the call when setting up failed. The
 * ring stays open: each helper makes one request and exits.
 */
static inline int uring_one(const struct io_uring_sqe *req, enum uring_how how, int *res,
			    const char **what)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned *sq_tail, *sq_array, *cq_head, *cq_tail, *cq_mask;
	unsigned enter = IORING_ENTER_GETEVENTS;
	void *sq, *cq, *sqes;
	int ring;

	if (how == URING_SQPOLL) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1000;
		enter |= IORING_ENTER_SQ_WAKEUP;
	}
	*what = "io_uring_setup";
	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -1;
	*what = "mmap of the ring";
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return -1;
	sq_tail = (unsigned *)((char *)sq + p.sq_off.tail);
	sq_array = (unsigned *)((char *)sq + p.sq_off.array);
	cq_head = (unsigned *)((char *)cq + p.cq_off.head);
	cq_tail = (unsigned *)((char *)cq + p.cq_off.tail);
	cq_mask = (unsigned *)((char *)cq + p.cq_off.ring_mask);
	sqe = (struct io_uring_sqe *)sqes;
	*sqe = *req;
	if (how == URING_ASYNC)
		sqe->flags |= IOSQE_ASYNC;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	*what = "io_uring_enter";
	do {
		if (syscall(__NR_io_uring_enter, ring, 1, 1, enter, NULL, 0) < 0 && errno != EINTR)
			return -1;
	} while (__atomic_load_n(cq_tail, __ATOMIC_ACQUIRE) == *cq_head);
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes) + (*cq_head & *cq_mask);
	*res = cqe->res;
	return 0;
}

/*
 * The verdict when the ring could not be set up: "err NOURING", never the
 * call's errno, so that a kernel without io_uring (or with it disabled)
 * cannot pass for a refusal.
 */
static inline int uring_unavailable(const char *what)
{
	int e = errno;

	printf("err NOURING\n(%s: errno %d: %s)\n", what, e, strerror(e));
	return 1;
}

#endif
