/*
 * ghc_rts.h - what a walk of GHC's STG stack needs to know about the RTS
 * a program was linked with, found in its ELF symbols (ghc_rts.c): where
 * the RTS keeps the current thread (MainCapability, for the Sp of a
 * program stopped in the RTS's C code), the info tables that end a stack
 * (stg_stop_thread_info) or chain its chunks (stg_stack_underflow_frame_info),
 * the offsets of the structures on the way, and the closure-type numbers,
 * which differ between GHC versions (rts/include/rts/storage/ClosureTypes.h:
 * HaLVM's GHC 8.0.2 and Debian's 9.0.2 are both known).
 *
 * walk_ghc.c walks; ghc_names.c turns z-encoded symbols into Haskell names.
 */
#ifndef PROFSVC_GHC_RTS_H
#define PROFSVC_GHC_RTS_H

#include <stddef.h>
#include <stdint.h>

#include "walk.h"

struct be_ghc_rts {
	int found;                 /* 1: the program has GHC's RTS */
	int version;               /* e.g. 900 for 9.0.x, 800 for 8.0.x */
	/* closure types (ClosureTypes.h of that version) */
	uint32_t ct_ret_small, ct_ret_big, ct_ret_fun, ct_update_frame, ct_catch_frame,
	    ct_underflow_frame, ct_stop_frame, ct_atomically_frame, ct_catch_retry_frame,
	    ct_catch_stm_frame, ct_max;
	/* addresses (from the ELF symbols; 0: not present) */
	uint64_t main_capability;  /* &MainCapability (non-threaded RTS) */
	uint64_t stop_frame_info;  /* stg_stop_thread_info */
	uint64_t underflow_frame_info; /* stg_stack_underflow_frame_info */
	uint64_t tso_info, stack_info; /* stg_TSO_info, stg_STACK_info: a thread's
	                                * and a stack chunk's header word */
	/* byte offsets (DerivedConstants.h of that version), each from the
	 * start of its structure: the closures' (StgTSO, StgStack) include
	 * their one-word header, which DerivedConstants' OFFSET_StgTSO_* and
	 * OFFSET_StgStack_* leave out */
	uint32_t off_cap_r, off_reg_current_tso, off_tso_stackobj, off_stack_sp,
	    off_stack_stack_size, off_stack_stack;
	/* Capability.run_queue_hd (rts/Capability.h; not in DerivedConstants):
	 * the thread to run next, which is where the scheduler puts the one
	 * that was running while it collects garbage */
	uint32_t off_cap_run_queue_hd;
	/* sizes in words of the RTS's own frames (sizeofW of StgUpdateFrame,
	 * StgCatchFrame, StgAtomicallyFrame, StgCatchRetryFrame,
	 * StgCatchSTMFrame, StgUnderflowFrame; StgRetFun without its
	 * payload): the walk steps over them by these, and refuses a frame
	 * whose info table's bitmap says otherwise */
	uint32_t sz_update_frame, sz_catch_frame, sz_atomically_frame, sz_catch_retry_frame,
	    sz_catch_stm_frame, sz_underflow_frame, sz_ret_fun;
	/* the RTS's text range, where rbp is not Sp: 0, 0 when the symbols do
	 * not say (the RTS's objects are not contiguous in a static link);
	 * then the caller decides by the symbol at the pc
	 * (be_ghc_symbol_is_haskell) */
	uint64_t rts_text_lo, rts_text_hi;
};

/* A symbol's address by name: 0 and *addr, or -1 when absent.  The
 * symbol table (symbols.h) provides it. */
typedef int (*be_ghc_sym_lookup)(void *ctx, const char *name, uint64_t *addr);

/* Fills g from the program's symbols; g->found = 0 for a program without
 * GHC's RTS.  0, or -1 with a message (an RTS of a version not known). */
int be_ghc_rts_from_symbols(struct be_ghc_rts *g, be_ghc_sym_lookup lookup, void *ctx, char *err,
                         size_t errlen);

/* Appends the return points of the STG stack from sp (innermost first, as
 * WALK_FRAME_HASKELL), following underflow frames into older chunks and
 * stopping at the stop frame (WALK_STOP_END).  The RTS's own frames
 * (update, catch, STM) are return points too and are appended; a frame
 * of the interpreter (RET_BCO) or a word that is no frame ends the walk
 * (WALK_STOP_BAD_FRAME), as does an RTS of a version not known
 * (g->version 0).  When g->main_capability is known and the thread's
 * stack chunk (as be_walk_ghc_saved_sp finds it) holds sp, frames are held
 * to that chunk's end.
 * Returns how many it appended. */
uint32_t be_walk_ghc(struct be_walk_mem *m, const struct be_ghc_rts *g, uint64_t sp, struct be_walk_out *out);

/* The saved Sp of the thread the capability runs (the program is stopped
 * in the RTS's C code, where rbp is not Sp): 0 and *sp, or -1.  The
 * thread is MainCapability.r.rCurrentTSO, or when that is NULL (the
 * scheduler and the garbage collector run: the thread waits at the head
 * of the run queue) run_queue_hd.  Its Sp is the one it last left Haskell
 * code with (a heap check, a safe foreign call, the scheduler): stale
 * while Haskell code runs, so only for a pc in the RTS's C code.  A
 * thread or a chunk whose header is not stg_TSO_info's / stg_STACK_info's
 * (when known), or a sp outside its own chunk, is refused. */
int be_walk_ghc_saved_sp(struct be_walk_mem *m, const struct be_ghc_rts *g, uint64_t *sp);

/* A z-encoded GHC symbol as Haskell spells it: "Main_zdwcrunchHot_info"
 * -> "Main.$wcrunchHot" (module dots, z-codes decoded, the _info/_closure/
 * _entry/_con_info suffix dropped); a name that is not GHC's is copied as
 * it is.  Writes at most outlen bytes (NUL included); returns out. */
char *be_ghc_demangle(const char *sym, char *out, size_t outlen);
/* 1 when sym names GHC-generated code (a *_info, *_entry, *_closure,
 * stg_* or local c123_info label), 0 otherwise. */
int be_ghc_symbol_is_haskell(const char *sym);

#endif
