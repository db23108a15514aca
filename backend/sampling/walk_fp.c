/*
 * walk_fp.c - C stacks by frame pointers: [fp] is the caller's fp and
 * [fp + 8] the return address, as gcc lays frames out with
 * -fno-omit-frame-pointer (Mini-OS, OCaml's runtime, Linux kernels built
 * with CONFIG_FRAME_POINTER).  The guest's memory is hostile, so:
 *  1. each fp must lie above the last (the stack grows down) and within
 *     WALK_FP_MAX_FRAME of it, which ends loops and wild jumps;
 *  2. an fp that is not 8-byte aligned ends the walk;
 *  3. a zero fp or return address is the bottom (glibc's _start and
 *     Mini-OS's entry clear rbp);
 *  4. every read goes through walk_mem, whose budget bounds the work.
 * A return address points after the call: the caller's line is that of
 * pc - 1, which the symbolizer is told (symbols.c).
 *
 * May call: be_walk_read_word (walk.h).  Called by the sampler.
 */
#include "config.h"

#include "walk.h"

static int append(struct be_walk_out *out, uint64_t pc)
{
	if (out->n >= WALK_MAX_FRAMES) {
		out->stop = WALK_STOP_DEPTH;
		return -1;
	}
	out->pc[out->n] = pc;
	out->kind[out->n] = WALK_FRAME_C;
	out->n++;
	return 0;
}

uint32_t be_walk_fp(struct be_walk_mem *m, uint64_t pc, uint64_t fp, struct be_walk_out *out)
{
	uint32_t before = out->n;

	out->stop = WALK_STOP_END;
	if (append(out, pc) != 0)
		return out->n - before;
	while (fp != 0) {
		uint64_t next, ret;
		if (fp & 7) {
			out->stop = WALK_STOP_BAD_FRAME;
			break;
		}
		if (m->budget == 0) {
			out->stop = WALK_STOP_BUDGET;
			break;
		}
		if (be_walk_read_word(m, fp, &next) != 0 || be_walk_read_word(m, fp + 8, &ret) != 0) {
			out->stop = m->budget == 0 ? WALK_STOP_BUDGET : WALK_STOP_UNREADABLE;
			break;
		}
		if (ret == 0)
			break;
		if (append(out, ret) != 0)
			break;
		if (next == 0)
			break;
		if (next <= fp || next - fp > WALK_FP_MAX_FRAME) {
			out->stop = WALK_STOP_LOOP;
			break;
		}
		fp = next;
	}
	return out->n - before;
}
