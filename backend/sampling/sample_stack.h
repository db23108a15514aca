/*
 * sample_stack.h - one vCPU's stack in a sample, in two halves
 * (sample_stack.c): taken while the domain is paused (which walker, from
 * which registers: only reads), then named after it runs again (frame ids
 * interned into the stream, with [GC] and [idle] roots).  The sampler
 * (sampler.c) calls both; nothing else does.
 */
#ifndef PROFSVC_SAMPLE_STACK_H
#define PROFSVC_SAMPLE_STACK_H

#include <stdint.h>

#include "ghc_rts.h"
#include "kallsyms.h"
#include "modules.h"
#include "platform/platform.h"
#include "profile/samples/samples.h"
#include "symbols.h"
#include "util/id_index.h"
#include "walk.h"

/* What a sample of one vCPU found while paused. */
struct be_stack_taken {
	uint32_t vcpu;
	int idle;               /* blocked: an [idle] sample */
	uint64_t cpu_ns;        /* the vCPU's CPU time at the pause (0: unknown) */
	struct be_walk_out w;      /* pcs, innermost first */
};

/* The naming side: the program's symbols and the frames named so far. */
struct be_stack_namer {
	struct be_symtab *syms;    /* NULL: addresses only */
	struct be_ksyms *ksyms;    /* a PV Linux guest kernel's symbols, or NULL */
	struct be_mods *mods;      /* what the program has mapped (xensim), or NULL */
	const struct be_ghc_rts *ghc;
	char dso[128];          /* the program's file name, the module of C frames */
	const char *path;       /* the program's symbols' path (its mapping's file) */
	/* frames interned (ids 1..n, as written to the stream) */
	struct samples_frame *frames;
	uint32_t nframes, cap;
	struct id_index by_key;
	/* mappings written (ids 1..n): a module by where it starts */
	struct be_map_ref { uint64_t lo; uint32_t id; } *maps;
	uint32_t nmaps;
	size_t maps_cap;
	uint32_t map_main, map_kernel; /* the program's symbols' and the kernel's, 0: not yet */
	/* pc -> frame id, so that each address is looked up once */
	struct pc_id { uint64_t pc; uint32_t id; uint8_t kind; } *pcs;
	uint32_t npcs, pcs_cap;
	struct id_index by_pc;
	uint32_t root_gc, root_idle;
};

/* Walks vCPU regs while paused.  The GHC walk applies only when the
 * program has GHC's RTS and pc is in Haskell code (Sp = rbp), or through
 * the saved Sp from the RTS's C code; elsewhere the call frame
 * information of the modules mapped, and frame pointers where there is
 * none. */
void be_stack_take(struct be_walk_mem *m, const struct be_stack_namer *nm, const struct plat_vcpu_regs *r,
                struct be_stack_taken *out);

/* Names what was taken: frame ids, leaf first, into ids (depth returned),
 * writing FRAME records for frames new to the stream into b.  -1 when out
 * of memory. */
int be_stack_name(struct be_stack_namer *nm, const struct be_stack_taken *t, struct samples_buf *b,
               uint32_t *ids, uint32_t max);
void be_stack_namer_free(struct be_stack_namer *nm);

#endif
