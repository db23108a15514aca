/*
 * blkif.h - the blkif protocol as the backend sees it: the three request
 * ABIs (native = x86_64-abi on our hosts, and x86_32-abi), one request
 * copied out of a ring slot exactly once and decoded from that copy,
 * validation, and responses written field by field.
 *
 * Pure functions over bytes: no rings, grants or I/O here, so everything a
 * guest controls can be fuzzed (tests and issue 8).
 * It calls only the C library (blkif.c); the data path, xs_values.c and
 * the fuzzers call it.
 */
#ifndef PROFSVC_BLKIF_H
#define PROFSVC_BLKIF_H

#include <stddef.h>
#include <stdint.h>

#include <xen/io/blkif.h>

enum be_blkif_abi { BLKIF_ABI_NATIVE, BLKIF_ABI_X86_32, BLKIF_ABI_X86_64 };

/* What we advertise and accept. */
#define BLKIF_BACK_MAX_INDIRECT_SEGMENTS 256u
#define BLKIF_SEGS_PER_INDIRECT_PAGE 512u
#define BLKIF_BACK_MAX_SEGMENTS BLKIF_BACK_MAX_INDIRECT_SEGMENTS

/* "x86_32-abi", "x86_64-abi", NULL/absent: native.  -1 if unknown. */
int be_blkif_abi_parse(const char *protocol, enum be_blkif_abi *out);
const char *be_blkif_abi_name(enum be_blkif_abi abi);
size_t be_blkif_slot_size(enum be_blkif_abi abi);
/* Slots in a shared ring of `pages` pages (a power of two). */
uint32_t be_blkif_ring_slots(enum be_blkif_abi abi, uint32_t pages);

struct be_blk_seg {
	uint32_t gref;
	uint8_t first_sect, last_sect;
};

/* A request, decoded from our private copy of the slot. */
struct be_blk_req {
	uint64_t id;
	uint8_t operation;    /* as on the ring: READ, WRITE, FLUSH, DISCARD, INDIRECT, ... */
	uint8_t rw_op;        /* READ or WRITE for READ/WRITE/INDIRECT */
	uint16_t nr_segments;
	uint16_t handle;
	uint64_t sector;
	uint64_t nr_sectors;  /* DISCARD */
	uint8_t discard_flag;
	uint8_t nr_indirect_pages;
	uint32_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	/* Inline segments; an indirect request's segments are loaded into
	 * a caller's array by be_blkif_load_indirect(). */
	struct be_blk_seg seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

/*
 * Copies one slot out of shared memory (a single memcpy, then a compiler
 * barrier: the guest may change the slot under us, and every later read is
 * of our copy: XSA-155) and decodes it.
 */
void be_blkif_copy_request(enum be_blkif_abi abi, const volatile void *slot, struct be_blk_req *out);

/*
 * Validates a decoded request against a device of `capacity` sectors.
 * Returns 0, or a negative BLKIF_RSP_* with *why naming the rule broken.
 * For INDIRECT it checks the count of indirect pages; the segments
 * themselves are checked by be_blkif_check_segments() once loaded.
 */
int be_blkif_validate(const struct be_blk_req *r, uint64_t capacity, unsigned max_indirect_segments,
                   const char **why);

/* Checks segments (first_sect <= last_sect < 8) and the sector range they
 * cover; sets *total_sectors.  0 or BLKIF_RSP_ERROR. */
int be_blkif_check_segments(const struct be_blk_seg *segs, unsigned n, uint64_t sector, uint64_t capacity,
                         uint64_t *total_sectors, const char **why);

/* Decodes n segments from the indirect pages' bytes (our copy). */
void be_blkif_load_indirect(const uint8_t *pages, unsigned n, struct be_blk_seg *out);

/* Writes a response into a slot field by field, so no byte of ours but
 * the three fields ever reaches the guest (XSA-216). */
void be_blkif_write_response(enum be_blkif_abi abi, volatile void *slot, uint64_t id, uint8_t operation,
                          int16_t status);

#endif
