/*
 * blkfront.h - a guest-side blkif frontend on the platform seam: device
 * discovery through device/vbd as the HaLVM writer does it, the
 * connection handshake (HaLVM order, or Linux order waiting for InitWait),
 * single- or multi-page rings, requests with data pages granted to the
 * backend (direct and indirect segments), responses, the close handshake.
 * Also raw access to the ring for tests that play a hostile guest.
 */
#ifndef PROFSVC_BLKFRONT_H
#define PROFSVC_BLKFRONT_H

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

struct xs_handle;
struct blkfront;

struct blkfront_opts {
	int halvm;                /* HaLVM order: Initialised without waiting for InitWait */
	unsigned ring_order;      /* 2^order ring pages (0: one page, "ring-ref") */
	const char *protocol;     /* written if not NULL */
	unsigned data_pages;      /* granted data pages in the pool (default 64) */
	int timeout_ms;           /* for the handshake (default 10000) */
};

struct bf_req {
	uint8_t op;               /* BLKIF_OP_READ, WRITE, FLUSH_DISKCACHE, DISCARD */
	uint64_t sector;
	uint32_t nsect;           /* READ/WRITE: > 88 becomes an indirect request */
	uint64_t nr_sectors;      /* DISCARD */
	void *buf;                /* nsect * 512 */
	uint64_t wire_id;         /* 0: blkfront picks the id; else this one
	                             (the HaLVM runtime counts from 1) */
	/* set by blkfront */
	uint64_t id;
	int16_t status;
	int done;
};

/* Finds the device whose backend's `dev` starts with vdev (as HaLVM does)
 * and connects.  On failure, a message in err. */
int blkfront_open(struct blkfront **out, struct plat *p, struct xs_handle *xs, const char *vdev,
                  const struct blkfront_opts *o, char *err, size_t errlen);
/* graceful: Closing/Closed handshake with the backend first. */
void blkfront_close(struct blkfront *f, int graceful);
uint64_t blkfront_sectors(const struct blkfront *f);
uint32_t blkfront_devid(const struct blkfront *f);
uint32_t blkfront_ring_slots(const struct blkfront *f);
const char *blkfront_backend_path(const struct blkfront *f);

/* Queues a request (returns -1 with errno EBUSY when the ring or the page
 * pool is full).  Nothing is sent until blkfront_kick(). */
int blkfront_queue(struct blkfront *f, struct bf_req *r);
/* Publishes queued requests and notifies the backend if it asked. */
void blkfront_kick(struct blkfront *f);
/* Waits until some request completes; returns it (data copied out for
 * reads) or NULL on timeout. */
struct bf_req *blkfront_wait(struct blkfront *f, int timeout_ms);
/* queue + kick + wait for that one request; returns its status, -100 on
 * timeout, or BF_BACKEND_CLOSED when the backend closed the device (went
 * to Closing or Closed) before it answered. */
#define BF_BACKEND_CLOSED (-102)
int blkfront_do(struct blkfront *f, struct bf_req *r, int timeout_ms);
unsigned blkfront_outstanding(const struct blkfront *f);
/* Readable when the backend notified: poll() several devices on it, then
 * blkfront_wait(f, 0) each. */
int blkfront_event_fd(const struct blkfront *f);

/* Raw access for hostile tests. */
/* Queues slot bytes as they are (len <= 112), with the request id written
 * at id_offset (8 native/x86_64, 4 x86_32) so the response can be matched.
 * Pages are not allocated: the bytes name whatever grants they like. */
int blkfront_queue_raw(struct blkfront *f, struct bf_req *r, const void *bytes, size_t len,
                       size_t id_offset);
/* queue_raw + kick + wait: the backend's status, or -100 on timeout. */
int blkfront_do_raw(struct blkfront *f, const void *bytes, size_t len, size_t id_offset,
                    int timeout_ms);
/* A native (x86_64) READ/WRITE slot whose 11 segment descriptors all name
 * gref, first_sect..last_sect; nseg says how many count. */
void blkfront_rw_slot(uint8_t slot[112], uint8_t op, uint8_t nseg, uint64_t sector, uint32_t gref,
                      uint8_t first_sect, uint8_t last_sect);
/* Writes the frontend's state node. */
void blkfront_set_state(struct blkfront *f, int state);
volatile uint8_t *blkfront_sring(struct blkfront *f);
uint32_t blkfront_grant(struct blkfront *f, unsigned page); /* ref of pool page */
uint8_t *blkfront_page(struct blkfront *f, unsigned page);
void blkfront_notify(struct blkfront *f);
/* Responses in the ring not yet consumed. */
unsigned blkfront_poll_responses(struct blkfront *f, int timeout_ms);

#endif
