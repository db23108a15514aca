/*
 * fuzz_blkif.c - libFuzzer target: a hostile guest's shared ring, in every
 * request ABI, through the backend's ring and blkif code (backend/blkif/ring.c,
 * backend/blkif/blkif.c): producer indices, each request copied out and
 * decoded, validated, indirect segment pages loaded and checked, responses
 * written.  Asserted, beyond "no crash":
 *   - a request that validates covers only sectors inside the device;
 *   - be_ring_pending_requests never lets us take more than one ring of
 *     requests ahead of our responses;
 *   - a response changes exactly the id, operation and status bytes of its
 *     slot and nothing else (XSA-216: no backend memory reaches the guest).
 *
 * Input: [abi][order][capacity 8][rsp_event-ish noise...] then the ring
 * page(s) image, then indirect segment pages.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/blkif/blkif.h"
#include "backend/blkif/ring.h"

#define PAGE 4096u

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 10)
		return 0;
	enum be_blkif_abi abi = (enum be_blkif_abi)(data[0] % 3);
	uint32_t pages = 1u << (data[1] % 3); /* 1, 2 or 4 pages */
	uint64_t capacity = get64(data + 2);
	int resume = data[1] & 0x80;
	data += 10;
	size -= 10;

	size_t ring_bytes = (size_t)pages * PAGE;
	uint8_t *mem = calloc(1, ring_bytes);
	uint8_t *before = malloc(ring_bytes);
	assert(mem && before);
	size_t n = size < ring_bytes ? size : ring_bytes;
	memcpy(mem, data, n);
	const uint8_t *ind = data + n;
	size_t ind_len = size - n;

	struct be_blk_ring r;
	be_ring_attach(&r, mem, pages, abi, resume);
	assert(r.slots == be_blkif_ring_slots(abi, pages));
	uint32_t taken = 0;
	for (int round = 0; round < 4; round++) {
		int avail = be_ring_pending_requests(&r);
		if (avail < 0)
			break; /* a bogus producer index: the device is cut off */
		assert((uint32_t)avail <= r.slots);
		if (avail == 0)
			break;
		for (int k = 0; k < avail; k++) {
			const volatile void *slot = be_ring_take_request(&r);
			struct be_blk_req req;
			const char *why = NULL;
			be_blkif_copy_request(abi, slot, &req);
			taken++;
			int st = be_blkif_validate(&req, capacity, BLKIF_BACK_MAX_INDIRECT_SEGMENTS, &why);
			if (st == 0) {
				const struct be_blk_seg *segs = req.seg;
				struct be_blk_seg *ind_segs = NULL;
				unsigned nsegs = req.nr_segments;
				if (req.operation == BLKIF_OP_INDIRECT) {
					assert(nsegs > 0 && nsegs <= BLKIF_BACK_MAX_INDIRECT_SEGMENTS);
					size_t need = (size_t)nsegs * 8;
					uint8_t *pg = calloc(1, (need + PAGE - 1) / PAGE * PAGE);
					memcpy(pg, ind, need < ind_len ? need : ind_len);
					ind_segs = calloc(nsegs, sizeof(*ind_segs));
					be_blkif_load_indirect(pg, nsegs, ind_segs);
					free(pg);
					segs = ind_segs;
				} else if (req.operation == BLKIF_OP_DISCARD) {
					assert(req.nr_sectors > 0 && req.sector < capacity &&
					       req.sector + req.nr_sectors <= capacity);
					nsegs = 0;
				} else {
					assert(nsegs <= BLKIF_MAX_SEGMENTS_PER_REQUEST);
				}
				uint64_t total = 0;
				if (nsegs && be_blkif_check_segments(segs, nsegs, req.sector, capacity, &total,
				                                  &why) == 0) {
					assert(total > 0 && total <= (uint64_t)nsegs * 8);
					assert(req.sector < capacity && total <= capacity - req.sector);
				}
				free(ind_segs);
			} else {
				assert(why && *why);
			}
			/* The response: only its three fields may change. */
			volatile uint8_t *rs = be_ring_next_response(&r);
			size_t off = (size_t)((const uint8_t *)rs - mem);
			assert(off + be_blkif_slot_size(abi) <= ring_bytes);
			memcpy(before, mem, ring_bytes);
			be_blkif_write_response(abi, rs, req.id, req.operation, (int16_t)(st ? st : 0));
			size_t changed_outside = 0;
			for (size_t i = 0; i < ring_bytes; i++)
				if (mem[i] != before[i] && (i < off || i >= off + 16))
					changed_outside++;
			assert(changed_outside == 0);
			/* id at 0 (8 bytes), operation at 8, status at 10 in both
			 * x86 ABIs: byte 9 and 12.. are padding, left as they were. */
			for (size_t i = 8; i < 16; i++)
				if (i != 8 && i != 10 && i != 11)
					assert(mem[off + i] == before[off + i]);
			assert(get64(mem + off) == req.id && mem[off + 8] == req.operation);
		}
		be_ring_push_responses(&r);
		be_ring_final_check(&r);
	}
	assert(taken <= 4 * r.slots);
	free(before);
	free(mem);
	return 0;
}
