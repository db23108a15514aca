/*
 * walk_ghc.c - GHC's STG stack walked from Sp (ghc_rts.h): each frame
 * starts with its return point, which is also the address just past its
 * return info table (x86-64, tables next to code):
 *
 *   info - 16   layout: a small bitmap (size in the low 6 bits), or for
 *               RET_BIG a signed 32-bit offset from info to the large
 *               bitmap ({size, bits...})
 *   info -  8   u32 closure type
 *   info -  4   u32 srt
 *
 * and the frame is as long as stack_frame_sizeW (ClosureMacros.h) says:
 * 1 + bitmap size, RET_FUN's own size word, the RTS frames' sizeofW.  An
 * UNDERFLOW_FRAME ends a chunk and names the older one (StgStack, its sp);
 * the STOP_FRAME ends the stack.
 *
 * Everything read is the guest's and hostile: every read goes through
 * be_walk_read_word (counted against the walk's budget), the frames found
 * are at most WALK_MAX_FRAMES, a frame's size is capped, a frame must lie
 * within its chunk when the chunk is known, the chunks followed are at
 * most WALK_GHC_MAX_CHUNKS, never one twice, each with a StgStack's header
 * (when the symbols gave stg_STACK_info), and a word whose closure type
 * is not a return frame's ends the walk (WALK_STOP_BAD_FRAME).
 *
 * May call: walk_mem.c (be_walk_read_word), ghc_rts.c.  Nothing else.
 */
#include "config.h"

#include <string.h>

#include "ghc_rts.h"

/* Chunks of one stack followed at most; a thread's stack grows by 32 KiB
 * chunks, so 64 of them is a deep (2 MiB) stack. */
#define WALK_GHC_MAX_CHUNKS 64u
/* The most words one frame may span (RET_BIG's and RET_FUN's sizes come
 * from memory): 1 MiB, far above what GHC makes. */
#define WALK_GHC_MAX_FRAME_WORDS (1u << 17)
/* The most words a chunk may hold (StgStack.stack_size): 1 GiB. */
#define WALK_GHC_MAX_CHUNK_WORDS (1u << 27)
#define BITMAP_SIZE_MASK 0x3fu

struct ghc_walk {
	struct be_walk_mem *m;
	const struct be_ghc_rts *g;
	struct be_walk_out *out;
	uint64_t lo, hi; /* the current chunk's words [lo, hi); 0, 0: not known */
	uint64_t chunk[WALK_GHC_MAX_CHUNKS];
	uint32_t nchunks;
};

/* One word, or -1 with the reason the walk stops. */
static int ghc_read(struct ghc_walk *w, uint64_t va, uint64_t *v)
{
	if (w->m->budget == 0) {
		w->out->stop = WALK_STOP_BUDGET;
		return -1;
	}
	if (be_walk_read_word(w->m, va, v) != 0) {
		w->out->stop = WALK_STOP_UNREADABLE;
		return -1;
	}
	return 0;
}

static int ghc_stop(struct ghc_walk *w, enum be_walk_stop why)
{
	w->out->stop = why;
	return -1;
}

/* A chunk's words [*lo, *hi) from its StgStack's address and stack_size
 * (a StgWord32, the low half of the word read); -1 for a size no chunk
 * has or bounds that wrap. */
static int ghc_chunk_bounds(const struct be_ghc_rts *g, uint64_t stack, uint64_t size_word,
                            uint64_t *lo, uint64_t *hi)
{
	uint64_t size = size_word & 0xffffffffu;
	uint64_t l = stack + g->off_stack_stack;
	if (size == 0 || size > WALK_GHC_MAX_CHUNK_WORDS || l < stack || l > UINT64_MAX - size * 8)
		return -1;
	*lo = l;
	*hi = l + size * 8;
	return 0;
}

/* A chunk (StgStack) entered: its bounds, and never the same one twice. */
static int ghc_enter_chunk(struct ghc_walk *w, uint64_t stack)
{
	for (uint32_t i = 0; i < w->nchunks; i++)
		if (w->chunk[i] == stack)
			return ghc_stop(w, WALK_STOP_LOOP);
	if (w->nchunks == WALK_GHC_MAX_CHUNKS)
		return ghc_stop(w, WALK_STOP_LOOP);
	w->chunk[w->nchunks++] = stack;

	uint64_t hdr, size;
	if (w->g->stack_info) {
		if (ghc_read(w, stack, &hdr) != 0)
			return -1;
		if (hdr != w->g->stack_info) /* not a stack chunk */
			return ghc_stop(w, WALK_STOP_BAD_FRAME);
	}
	if (ghc_read(w, stack + w->g->off_stack_stack_size, &size) != 0)
		return -1;
	if (ghc_chunk_bounds(w->g, stack, size, &w->lo, &w->hi) != 0)
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	return 0;
}

/* The stack chunk of the thread the capability runs: rCurrentTSO while
 * Haskell code runs, the head of the run queue while the scheduler and
 * the garbage collector do (rCurrentTSO is NULL then).  Headers checked
 * when the symbols gave them.  0 and *stack, or -1. */
static int ghc_thread_stack(struct be_walk_mem *m, const struct be_ghc_rts *g, uint64_t *stack)
{
	uint64_t cap = g->main_capability, tso, hdr, st;
	if (!cap || be_walk_read_word(m, cap + g->off_cap_r + g->off_reg_current_tso, &tso) != 0)
		return -1;
	if (tso == 0 && be_walk_read_word(m, cap + g->off_cap_run_queue_hd, &tso) != 0)
		return -1;
	if (tso == 0 || (tso & 7) ||
	    (g->tso_info && (be_walk_read_word(m, tso, &hdr) != 0 || hdr != g->tso_info)))
		return -1; /* no thread, or the empty queue's END_TSO_QUEUE */
	if (be_walk_read_word(m, tso + g->off_tso_stackobj, &st) != 0 || st == 0 || (st & 7) ||
	    (g->stack_info && (be_walk_read_word(m, st, &hdr) != 0 || hdr != g->stack_info)))
		return -1;
	*stack = st;
	return 0;
}

/* The chunk the walk starts in, when it is the thread's and holds sp:
 * then frames are checked against its end.  Otherwise the first chunk's
 * bounds stay unknown, which only loosens the checks. */
static void ghc_first_chunk(struct ghc_walk *w, uint64_t sp)
{
	uint64_t stack, size, lo, hi;
	if (w->m->budget < 16 || ghc_thread_stack(w->m, w->g, &stack) != 0 ||
	    be_walk_read_word(w->m, stack + w->g->off_stack_stack_size, &size) != 0 ||
	    ghc_chunk_bounds(w->g, stack, size, &lo, &hi) != 0 || sp < lo || sp >= hi)
		return;
	w->lo = lo;
	w->hi = hi;
	w->chunk[w->nchunks++] = stack;
}

/* An RTS frame of a fixed size: its info table's small bitmap must agree
 * (the RTS's own tables do; a forged one need not). */
static int ghc_fixed_words(struct ghc_walk *w, uint64_t layout, uint32_t want, uint64_t *words)
{
	if (1 + (layout & BITMAP_SIZE_MASK) != want)
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	*words = want;
	return 0;
}

/* The frame's size in words (stack_frame_sizeW), or -1 with the reason. */
static int ghc_frame_words(struct ghc_walk *w, uint64_t sp, uint64_t info, uint32_t type,
                           uint64_t layout, uint64_t *words)
{
	const struct be_ghc_rts *g = w->g;
	uint64_t size;
	if (type == g->ct_ret_small) {
		*words = 1 + (layout & BITMAP_SIZE_MASK);
		return 0;
	}
	if (type == g->ct_ret_big) {
		int32_t off = (int32_t)(uint32_t)layout; /* OFFSET_FIELD: a signed half-word */
		if (ghc_read(w, info + (uint64_t)(int64_t)off, &size) != 0)
			return -1;
		if (size > WALK_GHC_MAX_FRAME_WORDS)
			return ghc_stop(w, WALK_STOP_BAD_FRAME);
		*words = 1 + size;
		return 0;
	}
	if (type == g->ct_ret_fun) {
		if (ghc_read(w, sp + 8, &size) != 0) /* StgRetFun.size: the payload's words */
			return -1;
		if (size > WALK_GHC_MAX_FRAME_WORDS)
			return ghc_stop(w, WALK_STOP_BAD_FRAME);
		*words = g->sz_ret_fun + size;
		return 0;
	}
	if (type == g->ct_update_frame)
		return ghc_fixed_words(w, layout, g->sz_update_frame, words);
	if (type == g->ct_catch_frame)
		return ghc_fixed_words(w, layout, g->sz_catch_frame, words);
	if (type == g->ct_atomically_frame)
		return ghc_fixed_words(w, layout, g->sz_atomically_frame, words);
	if (type == g->ct_catch_retry_frame)
		return ghc_fixed_words(w, layout, g->sz_catch_retry_frame, words);
	if (type == g->ct_catch_stm_frame)
		return ghc_fixed_words(w, layout, g->sz_catch_stm_frame, words);
	/* RET_BCO (the interpreter's) and anything that is not a frame */
	return ghc_stop(w, WALK_STOP_BAD_FRAME);
}

/* An UNDERFLOW_FRAME at sp: on into the older chunk it names; its sp
 * in *next_sp. */
static int ghc_underflow(struct ghc_walk *w, uint64_t sp, uint64_t *next_sp)
{
	/* the frame is the last thing in its chunk */
	if (w->hi && sp + (uint64_t)w->g->sz_underflow_frame * 8 != w->hi)
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	uint64_t stack, nsp;
	if (ghc_read(w, sp + 8, &stack) != 0) /* StgUnderflowFrame.next_chunk */
		return -1;
	if (stack == 0 || (stack & 7))
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	if (ghc_enter_chunk(w, stack) != 0)
		return -1;
	if (ghc_read(w, stack + w->g->off_stack_sp, &nsp) != 0)
		return -1;
	if ((nsp & 7) || nsp < w->lo || nsp >= w->hi)
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	*next_sp = nsp;
	return 0;
}

/* The frame at sp: appended (a return frame), followed (an underflow
 * frame) or the end.  0: go on from *sp; 1: the stack's end; -1: stop. */
static int ghc_step(struct ghc_walk *w, uint64_t *sp)
{
	const struct be_ghc_rts *g = w->g;
	uint64_t info, word, layout, words;
	if ((*sp & 7) || *sp == 0 || (w->hi && (*sp < w->lo || *sp >= w->hi)))
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	if (ghc_read(w, *sp, &info) != 0)
		return -1;
	/* info tables are word-aligned, and the table sits before info */
	if ((info & 7) || info < 16)
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	if (ghc_read(w, info - 8, &word) != 0)
		return -1;
	uint32_t type = (uint32_t)word; /* the low half: type; the high: srt */
	if (type == g->ct_stop_frame) {
		w->out->stop = WALK_STOP_END;
		return 1;
	}
	if (type == g->ct_underflow_frame)
		return ghc_underflow(w, *sp, sp);
	if (ghc_read(w, info - 16, &layout) != 0)
		return -1;
	if (ghc_frame_words(w, *sp, info, type, layout, &words) != 0)
		return -1;
	uint64_t next = *sp + words * 8;
	if (next < *sp || (w->hi && next > w->hi))
		return ghc_stop(w, WALK_STOP_BAD_FRAME);
	w->out->pc[w->out->n] = info;
	w->out->kind[w->out->n] = WALK_FRAME_HASKELL;
	w->out->n++;
	*sp = next;
	return 0;
}

uint32_t be_walk_ghc(struct be_walk_mem *m, const struct be_ghc_rts *g, uint64_t sp, struct be_walk_out *out)
{
	uint32_t start = out->n;
	if (start > WALK_MAX_FRAMES) /* a caller's bad count: append nothing */
		start = out->n = WALK_MAX_FRAMES;
	if (!g || !g->found || !g->version) {
		out->stop = WALK_STOP_BAD_FRAME;
		return 0;
	}
	struct ghc_walk w;
	memset(&w, 0, sizeof w);
	w.m = m;
	w.g = g;
	w.out = out;
	ghc_first_chunk(&w, sp);
	for (;;) {
		if (out->n >= WALK_MAX_FRAMES) {
			out->stop = WALK_STOP_DEPTH;
			break;
		}
		if (ghc_step(&w, &sp) != 0)
			break;
	}
	return out->n - start;
}

int be_walk_ghc_saved_sp(struct be_walk_mem *m, const struct be_ghc_rts *g, uint64_t *sp)
{
	if (!g || !g->found || !g->version)
		return -1;
	uint64_t stack, size, s, lo, hi;
	if (ghc_thread_stack(m, g, &stack) != 0 ||
	    be_walk_read_word(m, stack + g->off_stack_stack_size, &size) != 0 ||
	    be_walk_read_word(m, stack + g->off_stack_sp, &s) != 0 ||
	    ghc_chunk_bounds(g, stack, size, &lo, &hi) != 0)
		return -1;
	/* the saved sp lies in its own chunk */
	if ((s & 7) || s < lo || s >= hi)
		return -1;
	*sp = s;
	return 0;
}
