/*
 * sample_stack.c - one vCPU's stack in a sample (sample_stack.h).
 *
 * Taking (the domain paused):
 *  - a blocked vCPU is [idle]: nothing is read;
 *  - pc in Haskell code (its symbol is GHC's, and the program has GHC's
 *    RTS): pc, then the STG stack from rbp, which is Sp there;
 *  - pc anywhere else: the call frame information of the code it runs
 *    through (modules.h: PIEs, shared libraries, code built without
 *    frame pointers), or frame pointers from rbp where pc is in no module
 *    that has any; then, for a GHC program, the STG stack from the
 *    current thread's saved Sp (the Haskell code that called into the
 *    RTS).  Never frame pointers in Haskell code: rbp is Sp there, and
 *    following it as a frame chain reads garbage.
 * Naming (the domain running again): every pc once (a cache by pc), a
 * frame per address (its kind, name, module, file and line, and the
 * mapping it lies in: a MAPPING record, written once per object, with its
 * file and build-id, so the address can be named again from the object
 * later, and exports give the sampled addresses), Haskell names decoded; an
 * address in the upper half is a PV guest kernel's, named from its
 * System.map (kallsyms.h) as xenctx names it, or [kernel] without one;
 * a sample inside the RTS's garbage collector keeps only the function it
 * is in, under a [GC] root, so GC time never lands in the program's
 * stacks (Debian's RTS has no frame pointers: its C callers are guesses).
 *
 * May call: walk_fp.c, walk_ghc.c, ghc_names.c, ocaml_names.c, symbols.c, modules.c, kallsyms.c,
 * profile/samples/samples_stream.c (FRAME and MAPPING records), util/id_index, util/grow.h,
 * ghc_rts.c, platform/ (platform.h), profile/samples/ (samples.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ocaml_names.h"
#include "sample_stack.h"
#include "util/grow.h"

#define PC_CACHE_MAX (1u << 18) /* addresses named and remembered, at most */
/* Frames (a frame an address) a stream defines, at most: past it, a new
 * address is kept as its function's start (an unnamed one as 0), so that
 * a guest whose stacks are random words costs bounded memory. */
#define FRAMES_MAX (1u << 20)

/* Haskell code: the program's code outside its sized C functions (a
 * module's local functions have no symbol, and lie past the sized one
 * before them). */
static int is_haskell_pc(const struct be_stack_namer *nm, uint64_t pc)
{
	return nm->ghc && nm->ghc->found && nm->syms && !be_symtab_in_c_function(nm->syms, pc, be_ghc_symbol_is_haskell);
}

/* C code's stack, by its call frame information or else by frame
 * pointers; in a GHC program up to the first return address into Haskell
 * code: past it, rbp is Sp (a signal handler, the RTS entered from
 * Haskell), which only the STG walk may follow. */
static void walk_c_part(struct be_walk_mem *m, const struct be_stack_namer *nm, const struct plat_vcpu_regs *r,
                        struct be_walk_out *w)
{
	uint32_t from = w->n;
	if (!nm->mods || be_mods_unwind(nm->mods, m, r, w) == 0)
		be_walk_fp(m, r->rip, r->rbp, w);
	if (!nm->ghc || !nm->ghc->found)
		return;
	for (uint32_t i = from + 1; i < w->n; i++)
		if (is_haskell_pc(nm, w->pc[i] - 1)) {
			w->n = i;
			w->stop = WALK_STOP_END;
			return;
		}
}

/* A PV guest's kernel, by frame pointers on its own stack only: an rbp
 * below the kernel's half is a user value the kernel has not touched (a
 * kernel built without frame pointers, as Debian's, uses rbp as any
 * register), and a chain that leaves the kernel's half is not its. */
static void walk_kernel(struct be_walk_mem *m, const struct plat_vcpu_regs *r, struct be_walk_out *w)
{
	be_walk_fp(m, r->rip, r->rbp >= KSYMS_KERNEL_BASE ? r->rbp : 0, w);
	for (uint32_t i = 1; i < w->n; i++)
		if (w->pc[i] < KSYMS_KERNEL_BASE) {
			w->n = i;
			w->stop = WALK_STOP_END;
			break;
		}
	for (uint32_t i = 0; i < w->n; i++)
		w->kind[i] = WALK_FRAME_KERNEL;
}

void be_stack_take(struct be_walk_mem *m, const struct be_stack_namer *nm, const struct plat_vcpu_regs *r,
                struct be_stack_taken *out)
{
	out->w.n = 0;
	out->w.stop = WALK_STOP_END;
	out->idle = r->blocked;
	if (out->idle)
		return;
	if (r->rip >= KSYMS_KERNEL_BASE) {
		walk_kernel(m, r, &out->w);
		return;
	}
	if (is_haskell_pc(nm, r->rip)) {
		out->w.pc[0] = r->rip;
		out->w.kind[0] = WALK_FRAME_HASKELL;
		out->w.n = 1;
		be_walk_ghc(m, nm->ghc, r->rbp, &out->w);
		return;
	}
	walk_c_part(m, nm, r, &out->w);
	uint64_t sp;
	if (nm->ghc && nm->ghc->found && be_walk_ghc_saved_sp(m, nm->ghc, &sp) == 0)
		be_walk_ghc(m, nm->ghc, sp, &out->w);
}

/* ---- naming ----------------------------------------------------------------- */

struct key_ctx {
	const struct be_stack_namer *nm;
	const struct samples_frame *f;
};

static int str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static uint64_t frame_hash(const struct samples_frame *f)
{
	uint64_t h = id_index_hash(ID_INDEX_SEED, &f->kind, sizeof(f->kind));
	h = id_index_hash(h, f->name, strlen(f->name) + 1);
	h = id_index_hash(h, f->module, strlen(f->module) + 1);
	h = id_index_hash(h, f->file, strlen(f->file) + 1);
	h = id_index_hash(h, &f->addr, sizeof(f->addr));
	h = id_index_hash(h, &f->mapping, sizeof(f->mapping));
	return id_index_hash(h, &f->line, sizeof(f->line));
}

static uint64_t frame_hash_of(const void *ctx, uint32_t id)
{
	const struct be_stack_namer *nm = ctx;
	return frame_hash(&nm->frames[id - 1]);
}

static int frame_eq(const void *ctx, uint32_t id)
{
	const struct key_ctx *k = ctx;
	const struct samples_frame *g = &k->nm->frames[id - 1];
	return g->kind == k->f->kind && g->line == k->f->line && g->addr == k->f->addr &&
	       g->mapping == k->f->mapping && str_eq(g->name, k->f->name) &&
	       str_eq(g->module, k->f->module) && str_eq(g->file, k->f->file);
}

/* The id of frame f (its strings are copied when it is new, and its
 * FRAME record written); 0 when out of memory. */
static uint32_t intern_frame(struct be_stack_namer *nm, const struct samples_frame *f, struct samples_buf *b)
{
	struct key_ctx k = {nm, f};
	size_t at;
	uint32_t id = id_index_find(&nm->by_key, frame_hash(f), frame_eq, &k, &at);
	if (id)
		return id;
	if (nm->nframes == nm->cap) {
		uint32_t cap = nm->cap ? nm->cap * 2 : 256;
		struct samples_frame *p = realloc(nm->frames, cap * sizeof(*p));
		if (!p)
			return 0;
		nm->frames = p;
		nm->cap = cap;
	}
	if (id_index_reserve(&nm->by_key, frame_hash_of, nm) != 0)
		return 0;
	struct samples_frame *g = &nm->frames[nm->nframes];
	*g = (struct samples_frame){f->kind, f->addr, f->line, strdup(f->name), strdup(f->module),
	                            strdup(f->file), f->mapping};
	if (!g->name || !g->module || !g->file) {
		free(g->name), free(g->module), free(g->file);
		return 0;
	}
	id = ++nm->nframes;
	id_index_find(&nm->by_key, frame_hash(g), frame_eq, &(struct key_ctx){nm, g}, &at);
	id_index_put(&nm->by_key, at, id);
	return samples_put_frame(b, id, g) == 0 ? id : 0;
}

/* "GHC.Base.++" -> module "GHC.Base", name "++": the leading capitalised
 * components are the module. */
static void split_haskell(char *full, const char **module, const char **name)
{
	char *p = full, *last = NULL;
	while (*p >= 'A' && *p <= 'Z') {
		char *dot = strchr(p, '.');
		if (!dot || !dot[1])
			break;
		last = dot;
		p = dot + 1;
	}
	if (!last) {
		*module = "";
		*name = full;
		return;
	}
	*last = '\0';
	*module = full;
	*name = last + 1;
}

/* The id of the mapping that starts at lo (its MAPPING written when
 * new); 0 when out of memory or past what a FRAME can name. */
static uint32_t mapping_id(struct be_stack_namer *nm, const struct samples_mapping *m, struct samples_buf *b)
{
	for (uint32_t i = 0; i < nm->nmaps; i++)
		if (nm->maps[i].lo == m->start)
			return nm->maps[i].id;
	if (nm->nmaps >= SAMPLES_MAX_MAPPINGS || GROW(nm->maps, nm->maps_cap, nm->nmaps + 1) != 0)
		return 0;
	uint32_t id = nm->nmaps + 1;
	if (samples_put_mapping(b, id, m) != 0)
		return 0;
	nm->maps[nm->nmaps++] = (struct be_map_ref){m->start, id};
	return id;
}

/* The address a frame keeps: pc itself, or, past FRAMES_MAX, its
 * function's start (0 when it has none). */
static uint64_t kept_addr(const struct be_stack_namer *nm, uint64_t pc, uint64_t start, int named)
{
	return nm->nframes < FRAMES_MAX ? pc : named ? start : 0;
}

/* A kernel address, as a frame: its symbol when it lies in the text the
 * System.map describes (a return address by the call before it), else
 * the kernel as a whole. */
static uint32_t name_kernel_pc(struct be_stack_namer *nm, uint64_t pc, int is_return, struct samples_buf *b)
{
	uint64_t at = is_return ? pc - 1 : pc, start = pc;
	const char *name = be_ksyms_is_text(nm->ksyms, at) ? be_ksyms_lookup(nm->ksyms, at, &start) : NULL;
	if (!nm->map_kernel) {
		struct samples_mapping m = {KSYMS_KERNEL_BASE, UINT64_MAX, 0, "[kernel.kallsyms]", ""};
		nm->map_kernel = mapping_id(nm, &m, b);
	}
	struct samples_frame f = {SAMPLES_KIND_KERNEL, kept_addr(nm, pc, start, name != NULL), 0,
	                          (char *)(name ? name : "[kernel]"), "[kernel.kallsyms]", "", nm->map_kernel};
	return intern_frame(nm, &f, b);
}

/* The mapping of at, in the program: its executable mapping as the maps
 * tell it, or, where there are none (Xen), its symbols' code span. */
static uint32_t main_mapping(struct be_stack_namer *nm, uint64_t at, struct samples_buf *b)
{
	struct be_mod_hit hit;
	if (nm->mods && (be_mods_lookup(nm->mods, at, 0, &hit), hit.path)) {
		struct samples_mapping m = {hit.lo, hit.hi, hit.offset, (char *)hit.path, (char *)hit.build_id};
		return mapping_id(nm, &m, b);
	}
	if (!nm->map_main && nm->syms) {
		struct samples_mapping m = {0, 0, 0, (char *)nm->path, (char *)be_symtab_build_id(nm->syms)};
		be_symtab_span(nm->syms, &m.start, &m.limit);
		if (m.limit > m.start)
			nm->map_main = mapping_id(nm, &m, b);
	}
	return nm->map_main;
}

/* An address in a module the maps name (a shared library; the program
 * itself when no symbols were given), as a frame: its symbol (an OCaml
 * one decoded), the module's file name, the line. */
static uint32_t name_module_pc(struct be_stack_namer *nm, uint64_t pc, int is_return, struct samples_buf *b)
{
	struct be_mod_hit hit;
	char decoded[512];
	be_mods_lookup(nm->mods, pc, is_return, &hit);
	uint32_t map = 0;
	if (hit.path) {
		struct samples_mapping m = {hit.lo, hit.hi, hit.offset, (char *)hit.path, (char *)hit.build_id};
		map = mapping_id(nm, &m, b);
	}
	struct samples_frame f = {SAMPLES_KIND_C, kept_addr(nm, pc, hit.start, hit.name != NULL), hit.line, "[unknown]",
	                          (char *)(hit.module ? hit.module : ""), (char *)(hit.file ? hit.file : ""), map};
	if (hit.name)
		f.name = be_ocaml_demangle(hit.name, decoded, sizeof(decoded)) ? decoded : (char *)hit.name;
	return intern_frame(nm, &f, b);
}

/* What pc is called, as a frame. */
static uint32_t name_pc(struct be_stack_namer *nm, uint64_t pc, int is_return, struct samples_buf *b)
{
	struct be_sym_hit hit = {0};
	char decoded[512];

	if (pc >= KSYMS_KERNEL_BASE)
		return name_kernel_pc(nm, pc, is_return, b);
	uint64_t at = is_return ? pc - 1 : pc, lo = 0, hi = 0;
	if (nm->mods && (!nm->syms || !be_mods_in_main(nm->mods, at)) && be_mods_has(nm->mods, at))
		return name_module_pc(nm, pc, is_return, b);

	if (nm->syms) {
		be_symtab_lookup(nm->syms, pc, is_return, &hit);
		be_symtab_span(nm->syms, &lo, &hi);
	}
	uint32_t map = (at >= lo && at < hi) || (nm->mods && be_mods_in_main(nm->mods, at)) ? main_mapping(nm, at, b) : 0;
	struct samples_frame f = {SAMPLES_KIND_C, kept_addr(nm, pc, pc, 0), 0, "[unknown]", "", "", map};
	int haskell = hit.name && be_ghc_symbol_is_haskell(hit.name);
	if (!haskell && hit.file && is_haskell_pc(nm, at)) {
		/* Haskell code with no symbol of its own (a module's local
		 * function): its source line names it. */
		snprintf(decoded, sizeof(decoded), "%s:%u", hit.file, hit.line);
		f = (struct samples_frame){SAMPLES_KIND_HASKELL, f.addr, hit.line, decoded, "", (char *)hit.file, map};
		return intern_frame(nm, &f, b);
	}
	if (hit.name) {
		f.addr = kept_addr(nm, pc, hit.start, 1);
		if (haskell) {
			const char *module, *name;
			be_ghc_demangle(hit.name, decoded, sizeof(decoded));
			split_haskell(decoded, &module, &name);
			f = (struct samples_frame){SAMPLES_KIND_HASKELL, f.addr, 0, (char *)name, (char *)module, "", map};
		} else {
			f.name = be_ocaml_demangle(hit.name, decoded, sizeof(decoded)) ? decoded : (char *)hit.name;
			f.module = nm->dso;
		}
	}
	if (hit.file) {
		f.file = (char *)hit.file;
		f.line = hit.line;
	}
	return intern_frame(nm, &f, b);
}

static uint64_t pc_hash(uint64_t pc, int is_return)
{
	uint64_t key[2] = {pc, (uint64_t)is_return};
	return id_index_hash(ID_INDEX_SEED, key, sizeof(key));
}

static uint64_t pc_hash_of(const void *ctx, uint32_t id)
{
	const struct be_stack_namer *nm = ctx;
	return pc_hash(nm->pcs[id - 1].pc, nm->pcs[id - 1].kind);
}

struct pc_key {
	const struct be_stack_namer *nm;
	uint64_t pc;
	int is_return;
};

static int pc_eq(const void *ctx, uint32_t id)
{
	const struct pc_key *k = ctx;
	return k->nm->pcs[id - 1].pc == k->pc && k->nm->pcs[id - 1].kind == k->is_return;
}

/* The frame id of pc, looked up once per address. */
static uint32_t frame_of_pc(struct be_stack_namer *nm, uint64_t pc, int is_return, struct samples_buf *b)
{
	struct pc_key k = {nm, pc, is_return};
	size_t at;
	uint32_t slot = id_index_find(&nm->by_pc, pc_hash(pc, is_return), pc_eq, &k, &at);
	if (slot)
		return nm->pcs[slot - 1].id;
	uint32_t id = name_pc(nm, pc, is_return, b);
	if (!id)
		return 0;
	if (nm->npcs >= PC_CACHE_MAX) {
		/* A guest whose stacks are random words would grow the cache
		 * without end: it starts again (frames stay interned). */
		nm->npcs = 0;
		id_index_free(&nm->by_pc);
	}
	if (nm->npcs == nm->pcs_cap) {
		uint32_t cap = nm->pcs_cap ? nm->pcs_cap * 2 : 1024;
		struct pc_id *p = realloc(nm->pcs, cap * sizeof(*p));
		if (!p)
			return id;
		nm->pcs = p;
		nm->pcs_cap = cap;
	}
	if (id_index_reserve(&nm->by_pc, pc_hash_of, nm) != 0)
		return id;
	nm->pcs[nm->npcs] = (struct pc_id){pc, id, (uint8_t)is_return};
	nm->npcs++;
	id_index_find(&nm->by_pc, pc_hash(pc, is_return), pc_eq, &k, &at);
	id_index_put(&nm->by_pc, at, nm->npcs);
	return id;
}

static uint32_t root(struct be_stack_namer *nm, uint32_t *cached, const char *name, struct samples_buf *b)
{
	if (!*cached) {
		struct samples_frame f = {SAMPLES_KIND_ROOT, 0, 0, (char *)name, "", "", 0};
		*cached = intern_frame(nm, &f, b);
	}
	return *cached;
}

/* The RTS's garbage collector, by the C functions it runs. */
static int is_gc_symbol(const char *s)
{
	static const char *const gc[] = {"GarbageCollect", "gcWorkerThread", "scavenge", "evacuate",
	                                 "scavenge_loop", "gc_thread_work", "copy_tag", "alloc_for_copy",
	                                 "markQueue", "nonmovingMark"};
	for (size_t i = 0; s && i < sizeof(gc) / sizeof(gc[0]); i++)
		if (strncmp(s, gc[i], strlen(gc[i])) == 0)
			return 1;
	return 0;
}

/* Whether the walk stands in the RTS's garbage collector: a C frame of
 * it, before any Haskell frame. */
static int in_gc(const struct be_stack_namer *nm, const struct be_stack_taken *t)
{
	if (!nm->syms || !nm->ghc || !nm->ghc->found)
		return 0;
	for (uint32_t i = 0; i < t->w.n && t->w.kind[i] == WALK_FRAME_C; i++)
		if (is_gc_symbol(be_symtab_name_at(nm->syms, i ? t->w.pc[i] - 1 : t->w.pc[i])))
			return 1;
	return 0;
}

int be_stack_name(struct be_stack_namer *nm, const struct be_stack_taken *t, struct samples_buf *b, uint32_t *ids,
               uint32_t max)
{
	uint32_t n = 0;

	if (t->idle) {
		ids[0] = root(nm, &nm->root_idle, "[idle]", b);
		return ids[0] ? 1 : -1;
	}
	/* GC time stays out of the program's stacks: the function it is in,
	 * under [GC] (the RTS has no frame pointers to say more). */
	if (t->w.n && in_gc(nm, t)) {
		if (!(ids[0] = frame_of_pc(nm, t->w.pc[0], 0, b)) || !(ids[1] = root(nm, &nm->root_gc, "[GC]", b)))
			return -1;
		return 2;
	}
	for (uint32_t i = 0; i < t->w.n && n < max; i++) {
		/* A C return address points after its call (its line is the
		 * call's); a Haskell return point is the code itself. */
		uint32_t id = frame_of_pc(nm, t->w.pc[i], i > 0 && t->w.kind[i] != WALK_FRAME_HASKELL, b);
		if (!id)
			return -1;
		ids[n++] = id;
	}
	return (int)n;
}

void be_stack_namer_free(struct be_stack_namer *nm)
{
	for (uint32_t i = 0; i < nm->nframes; i++) {
		free(nm->frames[i].name);
		free(nm->frames[i].module);
		free(nm->frames[i].file);
	}
	free(nm->frames);
	free(nm->maps);
	free(nm->pcs);
	id_index_free(&nm->by_key);
	id_index_free(&nm->by_pc);
	memset(nm, 0, sizeof(*nm));
}
