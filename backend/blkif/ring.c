/*
 * ring.c - blkif shared ring, backend side (see ring.h).
 *
 * Shared header (io/ring.h): req_prod @0, req_event @4, rsp_prod @8,
 * rsp_event @12, then 48 bytes of padding, then the slots.  Every index we
 * read from the shared page is read once and checked before it is used.
 *
 * May call: blkif.c.
 */
#include "config.h"

#include "ring.h"

#define REQ_PROD 0
#define REQ_EVENT 4
#define RSP_PROD 8
#define RSP_EVENT 12
#define SLOTS_AT 64

static uint32_t load(struct be_blk_ring *r, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(r->sring + off), __ATOMIC_ACQUIRE);
}

static void store(struct be_blk_ring *r, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(r->sring + off), v, __ATOMIC_RELEASE);
}

void be_ring_attach(struct be_blk_ring *r, void *mem, uint32_t pages, enum be_blkif_abi abi, int resume)
{
	r->sring = mem;
	r->pages = pages;
	r->abi = abi;
	r->slot_size = (uint32_t)be_blkif_slot_size(abi);
	r->slots = be_blkif_ring_slots(abi, pages);
	r->req_cons = r->rsp_prod_pvt = resume ? load(r, RSP_PROD) : 0;
}

int be_ring_pending_requests(struct be_blk_ring *r)
{
	uint32_t rp = load(r, REQ_PROD);

	/* More requests than slots since our last response: impossible for
	 * an honest frontend. */
	if (rp - r->rsp_prod_pvt > r->slots)
		return -1;
	/* Requests we have not taken, and room to answer them. */
	uint32_t reqs = rp - r->req_cons;
	uint32_t room = r->slots - (r->req_cons - r->rsp_prod_pvt);
	return (int)(reqs < room ? reqs : room);
}

const volatile void *be_ring_take_request(struct be_blk_ring *r)
{
	uint32_t i = r->req_cons++ & (r->slots - 1);
	return r->sring + SLOTS_AT + (uint64_t)i * r->slot_size;
}

volatile void *be_ring_next_response(struct be_blk_ring *r)
{
	uint32_t i = r->rsp_prod_pvt++ & (r->slots - 1);
	return r->sring + SLOTS_AT + (uint64_t)i * r->slot_size;
}

int be_ring_push_responses(struct be_blk_ring *r)
{
	uint32_t old = load(r, RSP_PROD), new = r->rsp_prod_pvt;

	store(r, RSP_PROD, new); /* release: the responses are visible first */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t ev = load(r, RSP_EVENT);
	return (uint32_t)(new - ev) < (uint32_t)(new - old);
}

int be_ring_final_check(struct be_blk_ring *r)
{
	int n = be_ring_pending_requests(r);
	if (n != 0)
		return 1; /* work, or a bogus ring for the caller to see */
	store(r, REQ_EVENT, r->req_cons + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return be_ring_pending_requests(r) != 0;
}
