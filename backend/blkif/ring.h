/*
 * ring.h - the backend's side of a blkif shared ring (one or more pages):
 * index arithmetic, the producer-index check, pushing responses and the
 * final check, as Xen's io/ring.h macros do, with explicit barriers.
 * ring.c calls blkif.c.
 */
#ifndef PROFSVC_RING_H
#define PROFSVC_RING_H

#include <stdint.h>

#include "blkif.h"

struct be_blk_ring {
	volatile uint8_t *sring; /* the mapped pages */
	uint32_t pages;
	uint32_t slots;          /* a power of two */
	enum be_blkif_abi abi;
	uint32_t slot_size;
	uint32_t req_cons;       /* next request to take */
	uint32_t rsp_prod_pvt;   /* next response to write */
};

/* A ring the frontend just initialised (indices 0), or, with resume set,
 * one that was being served before we (re)started: we continue after the
 * last response it published, re-executing what was in flight. */
void be_ring_attach(struct be_blk_ring *r, void *mem, uint32_t pages, enum be_blkif_abi abi, int resume);

/*
 * Requests ready to take, or -1 if the frontend's producer index is more
 * than a ring ahead of our responses (a bogus or hostile ring: XSA-155
 * class; the device must be disconnected).
 */
int be_ring_pending_requests(struct be_blk_ring *r);
/* The slot of request number req_cons (then req_cons++). */
const volatile void *be_ring_take_request(struct be_blk_ring *r);
/* The slot for our next response (then rsp_prod_pvt++). */
volatile void *be_ring_next_response(struct be_blk_ring *r);
/* Publishes responses; returns 1 if the frontend asked to be notified. */
int be_ring_push_responses(struct be_blk_ring *r);
/* Sets req_event and re-checks, so no request slips between our last look
 * and the guest's next notification.  Returns 1 if more work is there. */
int be_ring_final_check(struct be_blk_ring *r);

#endif
