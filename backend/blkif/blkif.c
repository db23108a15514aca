/*
 * blkif.c - blkif request decoding, validation and responses (blkif.h).
 *
 * Requests are decoded from a copy by offsets, per ABI, instead of through
 * the C structs: Xen's structs describe only the ABI they are compiled for,
 * and a 32-bit guest's requests (x86_32-abi) have `id` at offset 4, not 8.
 * The offsets are not typed in by hand: x86_64's come from Xen's own
 * structs (compiled here, on x86_64), x86_32's from the same structs
 * declared under the i386 ABI, where a uint64_t is 4-byte aligned (as
 * Linux's blkback and QEMU's xen_blkif.h declare them); and the compiler
 * checks both against the numbers the ABIs are known by.
 *
 * May call: only the C library and Xen's public headers (the structs' offsets).
 */
#include "config.h"

#include <string.h>

#include "blkif.h"

struct abi_layout {
	size_t slot;
	/* read/write */
	size_t id, sector, seg;
	/* discard */
	size_t d_id, d_sector, d_nr;
	/* indirect */
	size_t i_nseg, i_id, i_sector, i_handle, i_grefs;
	/* response */
	size_t r_op, r_status;
};

#if !defined(__x86_64__)
#error "blkif.c takes the x86_64 ABI from Xen's structs as compiled here: build on x86_64"
#endif

/* The i386 ABI's layout of Xen's blkif structs (uint64_t aligned to 4). */
#pragma pack(push, 4)
struct x86_32_request {
	uint8_t operation, nr_segments;
	blkif_vdev_t handle;
	uint64_t id;
	blkif_sector_t sector_number;
	struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};
struct x86_32_request_discard {
	uint8_t operation, flag;
	blkif_vdev_t handle;
	uint64_t id;
	blkif_sector_t sector_number;
	uint64_t nr_sectors;
};
struct x86_32_request_indirect {
	uint8_t operation, indirect_op;
	uint16_t nr_segments;
	uint64_t id;
	blkif_sector_t sector_number;
	blkif_vdev_t handle;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	uint64_t pad; /* Xen's header adds it on i386 */
};
struct x86_32_response {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};
#pragma pack(pop)

#define SLOT_OF(req, rsp) (sizeof(req) > sizeof(rsp) ? sizeof(req) : sizeof(rsp))
#define LAYOUT(req, disc, ind, rsp)                                                                    \
	{SLOT_OF(struct req, struct rsp), offsetof(struct req, id), offsetof(struct req, sector_number),     \
	 offsetof(struct req, seg), offsetof(struct disc, id), offsetof(struct disc, sector_number),         \
	 offsetof(struct disc, nr_sectors), offsetof(struct ind, nr_segments), offsetof(struct ind, id),     \
	 offsetof(struct ind, sector_number), offsetof(struct ind, handle),                                  \
	 offsetof(struct ind, indirect_grefs), offsetof(struct rsp, operation), offsetof(struct rsp, status)}

static const struct abi_layout x86_64 =
	LAYOUT(blkif_request, blkif_request_discard, blkif_request_indirect, blkif_response);
static const struct abi_layout x86_32 =
	LAYOUT(x86_32_request, x86_32_request_discard, x86_32_request_indirect, x86_32_response);

/* What the ABIs are known by (Linux's blkif_x86_{32,64}_* structs). */
_Static_assert(sizeof(union blkif_sring_entry) == 112 && SLOT_OF(struct blkif_request, struct blkif_response) == 112,
               "x86_64 ring slot");
_Static_assert(offsetof(struct blkif_request, id) == 8 && offsetof(struct blkif_request, sector_number) == 16 &&
                       offsetof(struct blkif_request, seg) == 24,
               "x86_64 read/write request");
_Static_assert(offsetof(struct blkif_request_discard, nr_sectors) == 24 &&
                       offsetof(struct blkif_request_indirect, id) == 8 &&
                       offsetof(struct blkif_request_indirect, handle) == 24 &&
                       offsetof(struct blkif_request_indirect, indirect_grefs) == 28,
               "x86_64 discard and indirect requests");
_Static_assert(offsetof(struct blkif_response, operation) == 8 && offsetof(struct blkif_response, status) == 10,
               "x86_64 response");
_Static_assert(SLOT_OF(struct x86_32_request, struct x86_32_response) == 108 &&
                       sizeof(struct x86_32_request_indirect) <= 108,
               "x86_32 ring slot");
_Static_assert(offsetof(struct x86_32_request, id) == 4 && offsetof(struct x86_32_request, sector_number) == 12 &&
                       offsetof(struct x86_32_request, seg) == 20 &&
                       offsetof(struct x86_32_request_discard, nr_sectors) == 20 &&
                       offsetof(struct x86_32_request_indirect, id) == 4 &&
                       offsetof(struct x86_32_request_indirect, handle) == 20 &&
                       offsetof(struct x86_32_request_indirect, indirect_grefs) == 24 &&
                       offsetof(struct x86_32_response, status) == 10,
               "x86_32 requests and response");

static const struct abi_layout *layout(enum be_blkif_abi abi)
{
	/* Our hosts are x86_64: native is the x86_64 ABI. */
	return abi == BLKIF_ABI_X86_32 ? &x86_32 : &x86_64;
}

int be_blkif_abi_parse(const char *protocol, enum be_blkif_abi *out)
{
	if (!protocol || !*protocol)
		*out = BLKIF_ABI_NATIVE;
	else if (strcmp(protocol, "x86_32-abi") == 0)
		*out = BLKIF_ABI_X86_32;
	else if (strcmp(protocol, "x86_64-abi") == 0)
		*out = BLKIF_ABI_X86_64;
	else
		return -1;
	return 0;
}

const char *be_blkif_abi_name(enum be_blkif_abi abi)
{
	return abi == BLKIF_ABI_X86_32 ? "x86_32-abi" : abi == BLKIF_ABI_X86_64 ? "x86_64-abi" : "native";
}

size_t be_blkif_slot_size(enum be_blkif_abi abi)
{
	return layout(abi)->slot;
}

uint32_t be_blkif_ring_slots(enum be_blkif_abi abi, uint32_t pages)
{
	/* The ring header is 64 bytes; the slot count is rounded down to a
	 * power of two (ring.h's __RING_SIZE). */
	size_t n = ((size_t)pages * 4096 - 64) / layout(abi)->slot;
	uint32_t p = 1;
	while ((size_t)p * 2 <= n)
		p *= 2;
	return p;
}

static uint64_t get64(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint16_t get16(const uint8_t *p, size_t off)
{
	uint16_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

void be_blkif_copy_request(enum be_blkif_abi abi, const volatile void *slot, struct be_blk_req *out)
{
	const struct abi_layout *l = layout(abi);
	uint8_t c[112];

	/* The one read of guest memory.  The barrier stops the compiler from
	 * re-reading the slot instead of our copy. */
	memcpy(c, (const void *)slot, l->slot);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);

	memset(out, 0, sizeof(*out));
	out->operation = c[0];
	switch (out->operation) {
	case BLKIF_OP_DISCARD:
		out->discard_flag = c[1];
		out->handle = get16(c, 2);
		out->id = get64(c, l->d_id);
		out->sector = get64(c, l->d_sector);
		out->nr_sectors = get64(c, l->d_nr);
		break;
	case BLKIF_OP_INDIRECT:
		out->rw_op = c[1];
		out->nr_segments = get16(c, l->i_nseg);
		out->id = get64(c, l->i_id);
		out->sector = get64(c, l->i_sector);
		out->handle = get16(c, l->i_handle);
		for (unsigned i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
			out->indirect_grefs[i] = get32(c, l->i_grefs + 4 * i);
		break;
	default:
		out->rw_op = out->operation;
		out->nr_segments = c[1];
		out->handle = get16(c, 2);
		out->id = get64(c, l->id);
		out->sector = get64(c, l->sector);
		for (unsigned i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
			out->seg[i].gref = get32(c, l->seg + 8 * i);
			out->seg[i].first_sect = c[l->seg + 8 * i + 4];
			out->seg[i].last_sect = c[l->seg + 8 * i + 5];
		}
		break;
	}
}

int be_blkif_validate(const struct be_blk_req *r, uint64_t capacity, unsigned max_indirect_segments,
                   const char **why)
{
	switch (r->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		if (r->nr_segments == 0 || r->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
			*why = "nr_segments out of 1..11";
			return BLKIF_RSP_ERROR;
		}
		return 0;
	case BLKIF_OP_FLUSH_DISKCACHE:
		/* Linux sends flushes with no segments; some frontends attach
		 * data (a write + flush): both are fine, the data is checked. */
		if (r->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
			*why = "flush with too many segments";
			return BLKIF_RSP_ERROR;
		}
		return 0;
	case BLKIF_OP_DISCARD:
		if (r->nr_sectors == 0 || r->sector >= capacity || r->nr_sectors > capacity - r->sector) {
			*why = "discard range outside the device";
			return BLKIF_RSP_ERROR;
		}
		return 0;
	case BLKIF_OP_INDIRECT: {
		if (r->rw_op != BLKIF_OP_READ && r->rw_op != BLKIF_OP_WRITE) {
			*why = "indirect_op is not READ or WRITE";
			return BLKIF_RSP_ERROR;
		}
		if (r->nr_segments == 0 || r->nr_segments > max_indirect_segments) {
			*why = "indirect nr_segments out of range";
			return BLKIF_RSP_ERROR;
		}
		return 0;
	}
	case BLKIF_OP_WRITE_BARRIER:
	default:
		*why = "unsupported operation";
		return BLKIF_RSP_EOPNOTSUPP;
	}
}

int be_blkif_check_segments(const struct be_blk_seg *segs, unsigned n, uint64_t sector, uint64_t capacity,
                         uint64_t *total_sectors, const char **why)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < n; i++) {
		if (segs[i].first_sect > segs[i].last_sect || segs[i].last_sect >= 8) {
			*why = "segment with first_sect > last_sect or last_sect >= 8";
			return BLKIF_RSP_ERROR;
		}
		total += (uint64_t)(segs[i].last_sect - segs[i].first_sect + 1);
	}
	/* Overflow-safe: capacity - sector only when sector < capacity. */
	if (sector >= capacity || total > capacity - sector) {
		*why = "sector range outside the device";
		return BLKIF_RSP_ERROR;
	}
	*total_sectors = total;
	return 0;
}

void be_blkif_load_indirect(const uint8_t *pages, unsigned n, struct be_blk_seg *out)
{
	/* The indirect segment layout is the same in every ABI. */
	for (unsigned i = 0; i < n; i++) {
		out[i].gref = get32(pages, 8 * (size_t)i);
		out[i].first_sect = pages[8 * (size_t)i + 4];
		out[i].last_sect = pages[8 * (size_t)i + 5];
	}
}

void be_blkif_write_response(enum be_blkif_abi abi, volatile void *slot, uint64_t id, uint8_t operation,
                          int16_t status)
{
	const struct abi_layout *l = layout(abi);
	volatile uint8_t *s = slot;

	/* Field by field: padding keeps whatever the guest left there. */
	for (int i = 0; i < 8; i++)
		s[i] = (uint8_t)(id >> (8 * i));
	s[l->r_op] = operation;
	s[l->r_status] = (uint8_t)((uint16_t)status & 0xff);
	s[l->r_status + 1] = (uint8_t)((uint16_t)status >> 8);
}
