/*
 * walk.h - walking a paused guest's stacks in its memory, which is
 * hostile: every read is checked, depth is bounded, a loop or a wild
 * pointer ends the walk (with what was found so far), and the reads one
 * walk may make are budgeted, so a walk's cost is bounded whatever the
 * guest's memory holds.  The walkers see memory only through walk_mem.
 *
 *   walk_fp.c    C stacks by frame pointers (Mini-OS, OCaml's runtime,
 *                Linux kernels built with frame pointers, gcc
 *                -fno-omit-frame-pointer programs)
 *   walk_ghc.c   GHC's STG stack from Sp, by the return info tables GHC
 *                puts before each return point (ghc_rts.h says where the
 *                RTS keeps what the walk needs)
 *
 * No Xen, no SQLite: the sampler (sampler.c) hands the walkers a reader
 * over the platform seam; the fuzz targets hand them bytes.
 */
#ifndef PROFSVC_WALK_H
#define PROFSVC_WALK_H

#include <stddef.h>
#include <stdint.h>

/* The guest's memory, by virtual address. */
struct be_walk_mem {
	/* Up to len bytes at va: the bytes read (< len: the range runs into
	 * an unmapped page), -1 when none. */
	long (*read)(void *ctx, uint64_t va, void *buf, size_t len);
	void *ctx;
	uint32_t budget; /* reads this walk may still make; a walk stops at 0 */
};

/* Reads one 8-byte little-endian word; 0, or -1 (unreadable or budget
 * spent). */
int be_walk_read_word(struct be_walk_mem *m, uint64_t va, uint64_t *out);

#define WALK_MAX_FRAMES 256u

enum be_walk_frame_kind {
	WALK_FRAME_C = 0,       /* a return address on a C stack (or the pc) */
	WALK_FRAME_HASKELL = 1, /* a return point on GHC's STG stack (an info pointer) */
	WALK_FRAME_KERNEL = 2,  /* a PV guest kernel's pc or return address (frame pointers) */
};

enum be_walk_stop {
	WALK_STOP_END = 0,      /* the stack's bottom: a zero frame pointer, STOP_FRAME */
	WALK_STOP_DEPTH,        /* WALK_MAX_FRAMES frames found */
	WALK_STOP_UNREADABLE,   /* a read failed (unmapped, or a wild pointer) */
	WALK_STOP_LOOP,         /* a frame pointer that does not go up the stack */
	WALK_STOP_BUDGET,       /* the reads budgeted for this walk are spent */
	WALK_STOP_BAD_FRAME,    /* a frame the walker does not understand */
};

/* Addresses found, innermost first.  A walk appends to what is there. */
struct be_walk_out {
	uint64_t pc[WALK_MAX_FRAMES];
	uint8_t kind[WALK_MAX_FRAMES];
	uint32_t n;
	enum be_walk_stop stop;
};

/* Appends pc, then the return addresses of the frame-pointer chain from
 * fp: each frame is [fp] = the caller's fp, [fp + 8] = the return
 * address; fps must rise strictly (the stack grows down) by at most
 * WALK_FP_MAX_FRAME bytes a frame.  Returns how many frames it appended. */
#define WALK_FP_MAX_FRAME (1u << 20)
uint32_t be_walk_fp(struct be_walk_mem *m, uint64_t pc, uint64_t fp, struct be_walk_out *out);

#endif
