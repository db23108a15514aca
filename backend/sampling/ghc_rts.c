/*
 * ghc_rts.c - which GHC RTS a program was linked with, told from its ELF
 * symbols alone, and what a walk of its STG stack needs to know about that
 * RTS (ghc_rts.h): closure-type numbers, structure offsets, frame sizes.
 *
 * Owns the per-version tables.  Calls only the lookup callback it is given
 * (the symbol table) and libc's snprintf; reads no guest memory.
 *
 * Where the numbers come from (x86-64, non-profiling, tables next to code):
 *   9.0.x  Debian's GHC 9.0.2, /usr/lib/ghc/include: ClosureTypes.h,
 *          DerivedConstants.h, Closures.h, TSO.h
 *   8.0.x  GHC 8.0.2's includes/rts/storage/ClosureTypes.h, Closures.h,
 *          TSO.h, stg/Regs.h and rts/Capability.h (the offsets worked out
 *          from the structures, which DerivedConstants is generated from)
 *
 * May call: libc only.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ghc_rts.h"

/* One known RTS. */
struct ghc_rts_version {
	int version;
	const char *name;
	/* RET_SMALL ... STOP_FRAME are consecutive in every version: one
	 * base number and the rest follow; the STM frames are separate */
	uint32_t ct_ret_small, ct_atomically_frame, ct_max;
	uint32_t sz_atomically_frame;
};

/* 9.0: RET_SMALL 30 .. STOP_FRAME 36, ATOMICALLY_FRAME 55, 64 types;
 * StgAtomicallyFrame is header, code, result. */
static const struct ghc_rts_version ghc_900 = {900, "9.0", 30, 55, 64, 3};
/* 8.0: IND_PERM and CONSTR_STATIC still there, so RET_SMALL is 32 ..
 * STOP_FRAME 38, ATOMICALLY_FRAME 57, 65 types; StgAtomicallyFrame still
 * has next_invariant_to_check (header, code, next, result). */
static const struct ghc_rts_version ghc_800 = {800, "8.0", 32, 57, 65, 4};

static int has(be_ghc_sym_lookup lookup, void *ctx, const char *name, uint64_t *addr)
{
	uint64_t a = 0;
	if (lookup(ctx, name, &a) != 0 || a == 0)
		return 0;
	if (addr)
		*addr = a;
	return 1;
}

/* What tells the versions apart, each symbol from an RTS object every
 * program links (Exception.cmm, StgMiscClosures.cmm, Stats.c):
 *  - stg_paniczh (the panic# primop) is new in 9.0; stg_ret_t_info (the
 *    interpreter's unboxed-tuple return) came after 9.0, so with it the
 *    RTS is newer than the tables here;
 *  - 8.6 renamed stg_MUT_ARR_PTRS_FROZEN0_info to ..._FROZEN_DIRTY_info;
 *    getGCStats left in 8.2 for getRTSStats; stg_restore_cccs_info is
 *    new in 8.0 (7.10 lacks it). */
static const struct ghc_rts_version *ghc_rts_pick(be_ghc_sym_lookup lookup, void *ctx)
{
	if (has(lookup, ctx, "stg_paniczh", NULL) &&
	    has(lookup, ctx, "stg_MUT_ARR_PTRS_FROZEN_CLEAN_info", NULL) &&
	    !has(lookup, ctx, "stg_ret_t_info", NULL))
		return &ghc_900;
	if (has(lookup, ctx, "stg_MUT_ARR_PTRS_FROZEN0_info", NULL) &&
	    has(lookup, ctx, "getGCStats", NULL) && !has(lookup, ctx, "getRTSStats", NULL) &&
	    has(lookup, ctx, "stg_restore_cccs_info", NULL))
		return &ghc_800;
	return NULL;
}

/* The parts both versions share: the frames' order in ClosureTypes.h,
 * the structures' layouts. */
static void ghc_rts_fill(struct be_ghc_rts *g, const struct ghc_rts_version *v)
{
	g->version = v->version;
	g->ct_ret_small = v->ct_ret_small;
	g->ct_ret_big = v->ct_ret_small + 1;
	g->ct_ret_fun = v->ct_ret_small + 2;
	g->ct_update_frame = v->ct_ret_small + 3;
	g->ct_catch_frame = v->ct_ret_small + 4;
	g->ct_underflow_frame = v->ct_ret_small + 5;
	g->ct_stop_frame = v->ct_ret_small + 6;
	g->ct_atomically_frame = v->ct_atomically_frame;
	g->ct_catch_retry_frame = v->ct_atomically_frame + 1;
	g->ct_catch_stm_frame = v->ct_atomically_frame + 2;
	g->ct_max = v->ct_max;

	/* Capability: StgFunTable f (3 words), then StgRegTable r;
	 * rCurrentTSO after R1-R10, F1-F6, D1-D6, XMM/YMM/ZMM1-6, L1, Sp,
	 * SpLim, Hp, HpLim, CCCS: 872 in both (OFFSET_StgRegTable_rCurrentTSO) */
	g->off_cap_r = 24;
	g->off_reg_current_tso = 872;
	/* then u32 no (944: OFFSET_Capability_no in 9.0), 9.0's u32 node,
	 * Task *running_task (952), in_haskell (a bool in 9.0, 8.0's rtsBool
	 * an enum), u32 idle, disabled, and run_queue_hd word-aligned: 976 */
	g->off_cap_run_queue_hd = 976;
	/* StgTSO: header, _link, global_link, stackobj */
	g->off_tso_stackobj = 8 + 16;
	/* StgStack: header, u32 stack_size, dirty (u32 in 8.0, two bytes in
	 * 9.0), sp, stack[] */
	g->off_stack_stack_size = 8 + 0;
	g->off_stack_sp = 8 + 8;
	g->off_stack_stack = 8 + 16;

	g->sz_update_frame = 2;     /* header, updatee */
	g->sz_catch_frame = 3;      /* header, exceptions_blocked, handler */
	g->sz_atomically_frame = v->sz_atomically_frame;
	g->sz_catch_retry_frame = 4; /* header, running_alt_code, first, alt */
	g->sz_catch_stm_frame = 3;  /* header, code, handler */
	g->sz_underflow_frame = 2;  /* info, next_chunk */
	g->sz_ret_fun = 3;          /* info, size, fun; then size words */
}

int be_ghc_rts_from_symbols(struct be_ghc_rts *g, be_ghc_sym_lookup lookup, void *ctx, char *err,
                         size_t errlen)
{
	memset(g, 0, sizeof *g);
	if (!has(lookup, ctx, "stg_stop_thread_info", &g->stop_frame_info))
		return 0; /* no GHC RTS: nothing to walk, not an error */
	g->found = 1;
	has(lookup, ctx, "stg_stack_underflow_frame_info", &g->underflow_frame_info);
	has(lookup, ctx, "MainCapability", &g->main_capability);
	has(lookup, ctx, "stg_TSO_info", &g->tso_info);
	has(lookup, ctx, "stg_STACK_info", &g->stack_info);

	const struct ghc_rts_version *v = ghc_rts_pick(lookup, ctx);
	if (!v) {
		if (err && errlen)
			snprintf(err, errlen,
			         "a GHC RTS of a version not known (only 9.0.x and 8.0.x are): "
			         "its STG stack is not walked");
		return -1;
	}
	ghc_rts_fill(g, v);
	return 0;
}
