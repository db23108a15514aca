/*
 * test_walk_ghc.c - backend/sampling's GHC stack walker (walk_ghc.c),
 * the RTS tables it reads by (ghc_rts.c) and GHC's names (ghc_names.c):
 *
 *  1. be_ghc_demangle and be_ghc_symbol_is_haskell on real names and bad ones;
 *  2. the RTS version told from symbols (9.0, 8.0, newer, none);
 *  3. walks of built memory images: every frame kind, chunks, and each
 *     way a walk ends (the stop frame, a bad frame, a loop, the depth,
 *     the budget, an unmapped page);
 *  4. a real program: a Haskell program compiled with Debian's ghc -O2 -g
 *     whose hot loop is called through a chain of non-tail calls, stopped
 *     50 times with ptrace and walked from its Sp (rbp) or, in the RTS's
 *     C code, from the saved Sp: the return points must name the callers.
 *     Exit 77 when ghc is not installed or ptrace is not allowed here.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/sampling/ghc_rts.h"
#include "testutil.h"

/* ---- 1. names ---------------------------------------------------------- */

static void demangle_case(const char *sym, const char *want)
{
	char out[256];
	be_ghc_demangle(sym, out, sizeof out);
	CHECK(strcmp(out, want) == 0, "ghc_demangle(\"%s\") = \"%s\", want \"%s\"", sym, out, want);
}

/* symbol, as be_ghc_demangle writes it */
static const char *const demangle_cases[][2] = {
	{"Main_zdwcrunchHot_info", "Main.$wcrunchHot"},
	{"base_GHCziBase_zpzp_info", "GHC.Base.++"},
	{"base_GHCziBase_zpzp_closure", "GHC.Base.++"},
	{"base_GHCziBase_zgzgze_info", "GHC.Base.>>="},
	{"base_GHCziBase_zlzd_entry", "GHC.Base.<$"},
	{"base_GHCziShow_zdwitos_info", "GHC.Show.$witos"},
	{"base_GHCziReal_zdfIntegralInt_closure", "GHC.Real.$fIntegralInt"},
	{"base_GHCziNum_zm_info", "GHC.Num.-"},
	{"base_GHCziNum_zt_info", "GHC.Num.*"},
	{"base_GHCziReal_zs_info", "GHC.Real./"},
	{"base_GHCziReal_zc_info", "GHC.Real.^"},
	{"base_GHCziReal_zv_info", "GHC.Real.%"},
	{"base_DataziOldList_zrzr_info", "Data.OldList.\\\\"},
	{"base_GHCziClasses_zeze_info", "GHC.Classes.=="},
	{"ghczmprim_GHCziClasses_zaza_info", "GHC.Classes.&&"},
	{"ghczmprim_GHCziClasses_zbzb_info", "GHC.Classes.||"},
	{"base_GHCziList_zn_info", "GHC.List.!"},
	{"ghczmprim_GHCziTypes_Izh_con_info", "GHC.Types.I#"},
	{"ghczmprim_GHCziTypes_Izh_con_entry", "GHC.Types.I#"},
	{"ghczmprim_GHCziTypes_ZC_con_info", "GHC.Types.:"},
	{"ghczmprim_GHCziTypes_ZMZN_closure", "GHC.Types.[]"},
	{"ghczmprim_GHCziTuple_Z0T_closure", "GHC.Tuple.()"},
	{"ghczmprim_GHCziTuple_Z3T_con_info", "GHC.Tuple.(,,)"},
	{"ghczmprim_GHCziPrim_Z2H_closure", "GHC.Prim.(#,#)"},
	{"ghczmprim_GHCziPrim_Z1H_closure", "GHC.Prim.(# #)"},
	{"containerszm0zi6zi4zi1_DataziMapziInternal_insert_info", "Data.Map.Internal.insert"},
	{"ZCMain_main_info", ":Main.main"},
	{"Main_fzqzq_info", "Main.f''"},
	{"Main_foozuBar_info", "Main.foo_Bar"},
	{"Main_zlzbzg_info", "Main.<|>"},
	{"Main_zdwgo_slow", "Main.$wgo"},
	{"Main_go_fast", "Main.go"},
	{"Main_con_info", "Main.con"},
	{"Main_Con_con_info", "Main.Con"},
	{"Main_info_info", "Main.info"},
	{"Main_ZZeta_con_info", "Main.Zeta"},
	{"ZZmod_x_info", "Zmod.x"},
	{"Main_z2200U_info", "Main.\xe2\x88\x80"},
	{"Main_zzz3bbU_info", "Main.z\xce\xbb"},
	{"stg_upd_frame_info", "stg_upd_frame"},
	{"stg_ap_pp_fast", "stg_ap_pp"},
	/* not GHC's, or not decodable: as they are */
	{"memcpy", "memcpy"},
	{"main", "main"},
	{"MainCapability", "MainCapability"},
	{"c1ab_info", "c1ab_info"},
	{"_c1ab_info", "_c1ab_info"},
	{"Main_zy_info", "Main_zy_info"},
	{"Main_z12_info", "Main_z12_info"},
	{"Main_z_info", "Main_z_info"},
	{"Main_zdfFoo_Z_info", "Main_zdfFoo_Z_info"},
	{"Main_z110000U_info", "Main_z110000U_info"},
	{"Main_z0d800U_info", "Main_z0d800U_info"},
	{"a_B_c_d_info", "a_B_c_d_info"},
	{"main_lower_info", "main_lower_info"},
	{"_info", "_info"},
	{"", ""},
};

static void test_demangle(void)
{
	for (size_t i = 0; i < sizeof demangle_cases / sizeof demangle_cases[0]; i++)
		demangle_case(demangle_cases[i][0], demangle_cases[i][1]);

	char small[5];
	be_ghc_demangle("Main_zdwcrunchHot_info", small, sizeof small);
	CHECK(strcmp(small, "Main") == 0, "cut to the buffer: \"%s\"", small);
	char one[1] = {'x'};
	be_ghc_demangle("Main_x_info", one, 1);
	CHECK(one[0] == '\0', "a 1-byte buffer holds the NUL");

	static const char *const yes[] = {"Main_zdwcrunchHot_info", "stg_upd_frame_info", "c1ab_info",
	                                  "_c3jB_info", ".Lc3jB_info", "base_GHCziBase_zpzp_closure",
	                                  "ghczmprim_GHCziTypes_Izh_con_info", "stg_gc_noregs"};
	static const char *const no[] = {"memcpy", "main", "MainCapability", "frame_dummy", "rts_info",
	                                 "_start", "getGCStats", "a_B_c_d_info", ""};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		CHECK(be_ghc_symbol_is_haskell(yes[i]) == 1, "%s is GHC's", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		CHECK(be_ghc_symbol_is_haskell(no[i]) == 0, "%s is not GHC's", no[i]);
}

/* ---- 2. versions ------------------------------------------------------- */

struct fake_syms {
	const char *const *names; /* NULL-terminated; each at 0x1000 * (i + 1) */
};

static int fake_lookup(void *ctx, const char *name, uint64_t *addr)
{
	const struct fake_syms *f = ctx;
	for (size_t i = 0; f->names[i]; i++)
		if (strcmp(f->names[i], name) == 0) {
			*addr = 0x1000 * (i + 1);
			return 0;
		}
	return -1;
}

static void test_versions(void)
{
	static const char *const v900[] = {"stg_stop_thread_info", "stg_stack_underflow_frame_info",
	                                   "MainCapability", "stg_paniczh",
	                                   "stg_MUT_ARR_PTRS_FROZEN_CLEAN_info", "getRTSStats", NULL};
	static const char *const v800[] = {"stg_stop_thread_info", "stg_MUT_ARR_PTRS_FROZEN0_info",
	                                   "getGCStats", "stg_restore_cccs_info", "MainCapability", NULL};
	static const char *const v940[] = {"stg_stop_thread_info", "stg_paniczh",
	                                   "stg_MUT_ARR_PTRS_FROZEN_CLEAN_info", "stg_ret_t_info", NULL};
	static const char *const v710[] = {"stg_stop_thread_info", "stg_MUT_ARR_PTRS_FROZEN0_info",
	                                   "getGCStats", NULL};
	static const char *const none[] = {"main", "memcpy", NULL};
	struct be_ghc_rts g;
	char err[200];
	struct fake_syms f = {v900};
	CHECK(be_ghc_rts_from_symbols(&g, fake_lookup, &f, err, sizeof err) == 0 && g.found &&
	          g.version == 900 && g.ct_ret_small == 30 && g.ct_stop_frame == 36 &&
	          g.ct_atomically_frame == 55 && g.sz_atomically_frame == 3 &&
	          g.stop_frame_info == 0x1000 && g.underflow_frame_info == 0x2000 &&
	          g.main_capability == 0x3000 && g.off_reg_current_tso == 872,
	      "9.0: version %d", g.version);
	f.names = v800;
	CHECK(be_ghc_rts_from_symbols(&g, fake_lookup, &f, err, sizeof err) == 0 && g.version == 800 &&
	          g.ct_ret_small == 32 && g.ct_underflow_frame == 37 && g.ct_catch_stm_frame == 59 &&
	          g.sz_atomically_frame == 4 && g.underflow_frame_info == 0,
	      "8.0: version %d", g.version);
	f.names = v940;
	err[0] = '\0';
	CHECK(be_ghc_rts_from_symbols(&g, fake_lookup, &f, err, sizeof err) == -1 && g.found &&
	          !g.version && strstr(err, "version"),
	      "a newer RTS is refused: \"%s\"", err);
	f.names = v710;
	CHECK(be_ghc_rts_from_symbols(&g, fake_lookup, &f, err, sizeof err) == -1 && g.found,
	      "7.10 is refused");
	f.names = none;
	CHECK(be_ghc_rts_from_symbols(&g, fake_lookup, &f, err, sizeof err) == 0 && !g.found,
	      "no RTS: found 0, no error");
}

/* ---- 3. built memory images -------------------------------------------- */

struct region {
	uint64_t va;
	uint8_t bytes[0x2000];
};

struct image {
	struct region r[6];
	int n;
};

static struct region *image_at(struct image *im, uint64_t va, size_t *left)
{
	for (int i = 0; i < im->n; i++)
		if (va >= im->r[i].va && va - im->r[i].va < sizeof im->r[i].bytes) {
			*left = sizeof im->r[i].bytes - (size_t)(va - im->r[i].va);
			return &im->r[i];
		}
	return NULL;
}

static long image_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	size_t left;
	struct region *r = image_at(ctx, va, &left);
	if (!r)
		return -1;
	size_t n = len < left ? len : left;
	memcpy(buf, r->bytes + (va - r->va), n);
	return (long)n;
}

static void put64(struct image *im, uint64_t va, uint64_t v)
{
	size_t left;
	struct region *r = image_at(im, va, &left);
	REQUIRE(r && left >= 8, "image has %#llx", (unsigned long long)va);
	for (int i = 0; i < 8; i++)
		r->bytes[va - r->va + (uint64_t)i] = (uint8_t)(v >> (8 * i));
}

enum {
	INFO = 0x400000, CAP = 0x500000, TSO = 0x510000, STACK_A = 0x600000, STACK_B = 0x700000,
	STACK_C = 0x800000,
};
/* the info tables: number k's return point */
#define IT(k) ((uint64_t)INFO + 0x200 + 0x20 * (k) + 0x10)
enum { I_SMALL, I_BIG, I_UPD, I_FUN, I_UNDER, I_STOP, I_CONSTR, I_SMALL0, I_UPD_FORGED, I_BIG_HUGE };

static void put_info(struct image *im, int k, uint64_t layout, uint32_t type)
{
	put64(im, IT(k) - 16, layout);
	put64(im, IT(k) - 8, type | (uint64_t)0xabcd << 32); /* an srt beside the type */
}

static void put_chunk(struct image *im, uint64_t stack, uint32_t words, uint64_t sp)
{
	put64(im, stack + 8, words | (uint64_t)1 << 32); /* stack_size, dirty */
	put64(im, stack + 16, sp);
}

/* 9.0's numbers; chunk A (the running thread's): SMALL, BIG, UPD, FUN,
 * UNDERFLOW -> chunk B: SMALL, STOP. */
static uint64_t build_image(struct image *im, const struct be_ghc_rts *g)
{
	memset(im, 0, sizeof *im);
	static const uint64_t vas[] = {INFO, CAP, TSO, STACK_A, STACK_B, STACK_C};
	for (int i = 0; i < 6; i++)
		im->r[i].va = vas[i];
	im->n = 6;
	put_info(im, I_SMALL, 2 | 0x3u << 6, g->ct_ret_small);
	put_info(im, I_BIG, (uint32_t)(INFO + 0x800 - IT(I_BIG)), g->ct_ret_big);
	put64(im, INFO + 0x800, 70);
	put_info(im, I_UPD, 1, g->ct_update_frame);
	put_info(im, I_FUN, 0, g->ct_ret_fun);
	put_info(im, I_UNDER, 1, g->ct_underflow_frame);
	put_info(im, I_STOP, 0, g->ct_stop_frame);
	put_info(im, I_CONSTR, 0, 1);
	put_info(im, I_SMALL0, 0, g->ct_ret_small);
	put_info(im, I_UPD_FORGED, 3, g->ct_update_frame);
	/* a negative offset: the bitmap before the table */
	put_info(im, I_BIG_HUGE, (uint32_t)(int32_t)(INFO + 0x100 - IT(I_BIG_HUGE)), g->ct_ret_big);
	put64(im, INFO + 0x100, (uint64_t)1 << 20);
	put64(im, CAP + g->off_cap_r + g->off_reg_current_tso, TSO);
	put64(im, TSO + g->off_tso_stackobj, STACK_A);

	uint64_t end_a = STACK_A + 24 + 200 * 8, sp_a = end_a - 83 * 8, p = sp_a;
	put_chunk(im, STACK_A, 200, sp_a);
	put64(im, p, IT(I_SMALL)), p += 3 * 8;
	put64(im, p, IT(I_BIG)), p += 71 * 8;
	put64(im, p, IT(I_UPD)), p += 2 * 8;
	put64(im, p, IT(I_FUN)), put64(im, p + 8, 2), p += 5 * 8;
	put64(im, p, IT(I_UNDER)), put64(im, p + 8, STACK_B), p += 2 * 8;
	REQUIRE(p == end_a, "chunk A built to its end");
	uint64_t end_b = STACK_B + 24 + 100 * 8, sp_b = end_b - 4 * 8;
	put_chunk(im, STACK_B, 100, sp_b);
	put64(im, sp_b, IT(I_SMALL));
	put64(im, sp_b + 24, IT(I_STOP));
	return sp_a;
}

static struct be_walk_mem image_mem(struct image *im, uint32_t budget)
{
	struct be_walk_mem m = {image_read, im, budget};
	return m;
}

static void walk_case(const char *what, struct image *im, const struct be_ghc_rts *g, uint64_t sp,
                      uint32_t budget, uint32_t want_n, enum be_walk_stop want_stop)
{
	static struct be_walk_out out;
	memset(&out, 0, sizeof out);
	struct be_walk_mem m = image_mem(im, budget);
	uint32_t n = be_walk_ghc(&m, g, sp, &out);
	CHECK(n == want_n && out.n == want_n && out.stop == want_stop,
	      "%s: %u frames, stop %d (want %u, stop %d)", what, n, (int)out.stop, want_n, (int)want_stop);
	for (uint32_t i = 0; i < out.n; i++)
		CHECK(out.kind[i] == WALK_FRAME_HASKELL, "%s: frame %u is Haskell's", what, i);
}

static void test_images(void)
{
	static const char *const v900[] = {"stg_stop_thread_info", "stg_paniczh",
	                                   "stg_MUT_ARR_PTRS_FROZEN_CLEAN_info", NULL};
	struct fake_syms f = {v900};
	struct be_ghc_rts g;
	REQUIRE(be_ghc_rts_from_symbols(&g, fake_lookup, &f, NULL, 0) == 0 && g.version == 900, "9.0");
	g.main_capability = CAP;
	static struct image im;
	uint64_t sp = build_image(&im, &g);

	static struct be_walk_out out;
	struct be_walk_mem m = image_mem(&im, 1000);
	uint32_t n = be_walk_ghc(&m, &g, sp, &out);
	static const uint64_t want[] = {IT(I_SMALL), IT(I_BIG), IT(I_UPD), IT(I_FUN), IT(I_SMALL)};
	CHECK(n == 5 && out.stop == WALK_STOP_END, "whole stack: %u frames, stop %d", n, (int)out.stop);
	for (uint32_t i = 0; i < 5 && i < out.n; i++)
		CHECK(out.pc[i] == want[i], "frame %u: %#llx", i, (unsigned long long)out.pc[i]);
	n = be_walk_ghc(&m, &g, sp, &out);
	CHECK(n == 5 && out.n == 10 && out.pc[5] == IT(I_SMALL), "a walk appends: %u, %u", n, out.n);

	uint64_t saved = 0;
	m = image_mem(&im, 10);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == 0 && saved == sp, "saved sp %#llx",
	      (unsigned long long)saved);
	put64(&im, STACK_A + 16, STACK_A + 24 + 200 * 8); /* one past the chunk */
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == -1, "a saved sp outside its chunk is refused");
	put64(&im, STACK_A + 16, sp);
	m = image_mem(&im, 2);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == -1, "saved sp: the budget holds");

	/* the scheduler's and the collector's moments: no current thread; it
	 * waits at the head of the run queue */
	put64(&im, CAP + g.off_cap_r + g.off_reg_current_tso, 0);
	put64(&im, CAP + g.off_cap_run_queue_hd, TSO);
	m = image_mem(&im, 20);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == 0 && saved == sp, "saved sp from the run queue");
	g.tso_info = 0x4a5a0;
	g.stack_info = 0x4a5b0;
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == -1, "a thread without stg_TSO_info is refused");
	put64(&im, TSO, g.tso_info);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == -1, "a chunk without stg_STACK_info is refused");
	put64(&im, STACK_A, g.stack_info);
	m = image_mem(&im, 20);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == 0 && saved == sp, "thread and chunk headers agree");
	walk_case("an older chunk without its header", &im, &g, sp, 1000, 4, WALK_STOP_BAD_FRAME);
	put64(&im, STACK_B, g.stack_info);
	walk_case("headers checked", &im, &g, sp, 1000, 5, WALK_STOP_END);
	put64(&im, CAP + g.off_cap_run_queue_hd, CAP + 0x10); /* END_TSO_QUEUE: no thread */
	m = image_mem(&im, 20);
	CHECK(be_walk_ghc_saved_sp(&m, &g, &saved) == -1, "an empty run queue: no saved sp");
	walk_case("no thread: the first chunk's bounds unknown", &im, &g, sp, 1000, 5, WALK_STOP_END);
	put64(&im, CAP + g.off_cap_run_queue_hd, TSO);

	walk_case("budget", &im, &g, sp, 10, 3, WALK_STOP_BUDGET);
	walk_case("unmapped sp", &im, &g, 0x900000, 1000, 0, WALK_STOP_UNREADABLE);
	walk_case("unaligned sp", &im, &g, sp + 4, 1000, 0, WALK_STOP_BAD_FRAME);
	struct be_ghc_rts none = g;
	none.version = 0;
	walk_case("an RTS not known", &im, &none, sp, 1000, 0, WALK_STOP_BAD_FRAME);

	uint64_t sp_b = STACK_B + 24 + 96 * 8;
	put64(&im, sp_b, IT(I_CONSTR));
	walk_case("a closure where a frame should be", &im, &g, sp, 1000, 4, WALK_STOP_BAD_FRAME);
	put64(&im, sp_b, IT(I_UPD_FORGED));
	walk_case("an update frame of the wrong size", &im, &g, sp, 1000, 4, WALK_STOP_BAD_FRAME);
	put64(&im, sp_b, IT(I_BIG_HUGE));
	walk_case("a huge large bitmap", &im, &g, sp, 1000, 4, WALK_STOP_BAD_FRAME);
	put64(&im, sp_b, 0x400003);
	walk_case("an unaligned info pointer", &im, &g, sp, 1000, 4, WALK_STOP_BAD_FRAME);
	put64(&im, sp_b, 0x40000000);
	walk_case("an unmapped info pointer", &im, &g, sp, 1000, 4, WALK_STOP_UNREADABLE);
	/* chunk B's frame runs past B's end */
	put64(&im, sp_b, IT(I_SMALL));
	put64(&im, sp_b + 24, IT(I_BIG));
	walk_case("a frame past its chunk", &im, &g, sp, 1000, 5, WALK_STOP_BAD_FRAME);
	/* chunk B underflows back into A */
	put64(&im, sp_b, IT(I_SMALL0));
	put64(&im, sp_b + 8, IT(I_SMALL0));
	put64(&im, sp_b + 16, IT(I_UNDER));
	put64(&im, sp_b + 24, STACK_A);
	walk_case("chunks in a loop", &im, &g, sp, 1000, 6, WALK_STOP_LOOP);
	put64(&im, sp_b + 8, IT(I_UNDER));
	walk_case("an underflow frame short of its chunk's end", &im, &g, sp, 1000, 5,
	          WALK_STOP_BAD_FRAME);

	/* 300 one-word frames: the depth bound (no thread: bounds unknown) */
	g.main_capability = 0;
	for (uint64_t i = 0; i < 300; i++)
		put64(&im, STACK_C + 8 * i, IT(I_SMALL0));
	put64(&im, STACK_C + 8 * 300, IT(I_STOP));
	walk_case("depth", &im, &g, STACK_C, 10000, WALK_MAX_FRAMES, WALK_STOP_DEPTH);
	walk_case("the last frames", &im, &g, STACK_C + 8 * 100, 10000, 200, WALK_STOP_END);
}

/* ---- 4. a real GHC program --------------------------------------------- */

/* Two programs whose time goes to a loop called through a chain of calls
 * whose result the caller still uses (no tail calls), levelA -> levelB ->
 * levelC -> the loop, so that each leaves its return frame on the STG
 * stack while the loop runs.  Exported, so that their info tables are
 * symbols (a module's own bindings are .L labels); NOINLINE, so that -O2
 * keeps them apart.  crunchHot allocates nothing: the stops land in
 * Haskell code, where rbp is Sp.  crunchAlloc allocates a list it keeps
 * whole (it walks it twice) and runs with a 64 KiB nursery: many stops
 * land in the garbage collector's C code, where the saved Sp is the way
 * in. */
#define HASKELL_HEAD(exports)                                                 \
	"module Main (main, levelA, levelB, levelC, " exports ") where\n"   \
	"import Data.Bits (xor, shiftR)\n"                                  \
	"import System.IO\n"
#define HASKELL_CALLERS(loop)                                                 \
	"levelC :: Int -> Int\n"                                            \
	"levelC x = " loop " x + 1\n"                                        \
	"{-# NOINLINE levelC #-}\n"                                          \
	"levelB :: Int -> Int\n"                                            \
	"levelB x = levelC (x + 3) * 3 + 7\n"                                \
	"{-# NOINLINE levelB #-}\n"                                          \
	"levelA :: Int -> Int\n"                                            \
	"levelA x = levelB (x * 5) `xor` 0x5555\n"                           \
	"{-# NOINLINE levelA #-}\n"                                          \
	"main :: IO ()\n"                                                   \
	"main = do\n"                                                       \
	"  hSetBuffering stdout LineBuffering\n"                            \
	"  mapM_ (\\i -> print (levelA i `mod` 1000)) [1 ..]\n"

static const char hot_src[] =
	HASKELL_HEAD("crunchHot")
	"crunchHot :: Int -> Int -> Int\n"
	"crunchHot 0 acc = acc\n"
	"crunchHot k acc = crunchHot (k - 1)\n"
	"  ((acc * 6364136223846793005 + 1442695040888963407) `xor` (acc `shiftR` 17))\n"
	"{-# NOINLINE crunchHot #-}\n"
	HASKELL_CALLERS("crunchHot 3000000");

static const char alloc_src[] =
	HASKELL_HEAD("crunchAlloc, buildList")
	"buildList :: Int -> Int -> [Int]\n"
	"buildList 0 _ = []\n"
	"buildList k s = s : buildList (k - 1) (s * 3 + (s `shiftR` 7))\n"
	"{-# NOINLINE buildList #-}\n"
	"crunchAlloc :: Int -> Int -> Int\n"
	"crunchAlloc n seed = go 0 xs + length xs\n"
	"  where xs = buildList n seed\n"
	"        go acc [] = acc\n"
	"        go acc (y : ys) = let a = acc + y in a `seq` go a ys\n"
	"{-# NOINLINE crunchAlloc #-}\n"
	HASKELL_CALLERS("crunchAlloc 300000");

struct program {
	const char *name; /* its folder in the scratch directory */
	const char *src;
	const char *nursery; /* +RTS -A */
	const char *loop;    /* the hot loop's name */
};

static const struct program programs[] = {
	{"hot", hot_src, "1m", "crunchHot"},
	{"alloc", alloc_src, "64k", "crunchAlloc"},
};

/* The callers, innermost first, as their return points resolve. */
static const char *const callers[] = {"Main.$wlevelC", "Main.$wlevelB", "Main.$wlevelA"};

#define STOPS 50

/* argv run to its end, stdout and stderr to /dev/null unless verbose:
 * its exit status, 127 when it could not be run. */
static int run(char *const argv[], int quiet)
{
	pid_t pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

struct sym {
	uint64_t addr, size;
	char *name;
	int text; /* in an executable section */
};

struct syms {
	struct sym *v;
	size_t n;
	struct sym **text; /* the text symbols by address */
	size_t ntext;
	uint64_t text_lo, text_hi; /* the .text section */
};

static int sym_by_addr(const void *a, const void *b)
{
	const struct sym *x = *(struct sym *const *)a, *y = *(struct sym *const *)b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void syms_add_section(struct syms *s, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	s->v = realloc(s->v, (s->n + count) * sizeof *s->v);
	REQUIRE(d && s->v, "symbol table");
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sy;
		GElf_Shdr tsh;
		if (!gelf_getsym(d, (int)i, &sy) || sy.st_value == 0 || sy.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(e, sh->sh_link, sy.st_name);
		if (!name || !*name)
			continue;
		Elf_Scn *in = sy.st_shndx < SHN_LORESERVE ? elf_getscn(e, sy.st_shndx) : NULL;
		int text = in && gelf_getshdr(in, &tsh) && (tsh.sh_flags & SHF_EXECINSTR);
		s->v[s->n++] = (struct sym){sy.st_value, sy.st_size, strdup(name), text};
	}
}

/* The program's symbols (ET_EXEC: addresses as they run). */
static int syms_load(const char *path, struct syms *s)
{
	memset(s, 0, sizeof *s);
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	GElf_Ehdr eh;
	if (!e || !gelf_getehdr(e, &eh) || eh.e_type != ET_EXEC) {
		if (e)
			elf_end(e);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t shstr = 0;
	elf_getshdrstrndx(e, &shstr);
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			syms_add_section(s, e, scn, &sh);
		const char *name = elf_strptr(e, shstr, sh.sh_name);
		if (name && strcmp(name, ".text") == 0)
			s->text_lo = sh.sh_addr, s->text_hi = sh.sh_addr + sh.sh_size;
	}
	elf_end(e);
	close(fd);
	s->text = malloc((s->n + 1) * sizeof *s->text);
	REQUIRE(s->text, "memory");
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].text)
			s->text[s->ntext++] = &s->v[i];
	qsort(s->text, s->ntext, sizeof *s->text, sym_by_addr);
	return s->n ? 0 : -1;
}

static void syms_free(struct syms *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	free(s->text);
}

static int syms_lookup(void *ctx, const char *name, uint64_t *addr)
{
	const struct syms *s = ctx;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0) {
			*addr = s->v[i].addr;
			return 0;
		}
	return -1;
}

/* The text symbol at or before addr: what a profile would name it. */
static const struct sym *syms_at(const struct syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->ntext;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->text[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s->text[lo - 1] : NULL;
}

static const char *syms_name(const struct syms *s, uint64_t addr)
{
	const struct sym *at = syms_at(s, addr);
	return at ? at->name : NULL;
}

/* Haskell code, where rbp is Sp: in the program's .text and not inside
 * a C function (one with a size; GHC's module-local code has no symbol
 * of its own and lies after whatever symbol came before it).  Outside
 * .text (libc, the PLT) or inside a sized C function: C. */
static int in_haskell_code(const struct syms *s, uint64_t pc)
{
	if (pc < s->text_lo || pc >= s->text_hi)
		return 0;
	const struct sym *at = syms_at(s, pc);
	return !at || be_ghc_symbol_is_haskell(at->name) || pc >= at->addr + at->size;
}

static long proc_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)va, len};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	return n < 0 ? -1 : (long)n;
}

/* The RTS's own frames in the running program: the closure types and
 * sizes ghc_rts.c gives are the ones its info tables carry. */
static void check_rts_frames(pid_t pid, const struct syms *s, const struct be_ghc_rts *g)
{
	const struct {
		const char *sym;
		uint32_t type, words; /* words 0: not checked */
	} frames[] = {
		{"stg_upd_frame_info", g->ct_update_frame, g->sz_update_frame},
		{"stg_bh_upd_frame_info", g->ct_update_frame, g->sz_update_frame},
		{"stg_catch_frame_info", g->ct_catch_frame, g->sz_catch_frame},
		{"stg_atomically_frame_info", g->ct_atomically_frame, g->sz_atomically_frame},
		{"stg_catch_retry_frame_info", g->ct_catch_retry_frame, g->sz_catch_retry_frame},
		{"stg_catch_stm_frame_info", g->ct_catch_stm_frame, g->sz_catch_stm_frame},
		{"stg_stack_underflow_frame_info", g->ct_underflow_frame, g->sz_underflow_frame},
		{"stg_stop_thread_info", g->ct_stop_frame, 0},
		{"stg_ret_n_info", g->ct_ret_small, 2},
		{"stg_gc_fun_info", g->ct_ret_fun, 0},
	};
	pid_t p = pid;
	for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
		uint64_t info, type, layout;
		struct be_walk_mem m = {proc_read, &p, 8};
		if (syms_lookup((void *)s, frames[i].sym, &info) != 0) {
			CHECK(0, "%s is in the program", frames[i].sym);
			continue;
		}
		CHECK(be_walk_read_word(&m, info - 8, &type) == 0 && (uint32_t)type == frames[i].type,
		      "%s: closure type %u, want %u", frames[i].sym, (unsigned)type, frames[i].type);
		if (frames[i].words)
			CHECK(be_walk_read_word(&m, info - 16, &layout) == 0 &&
			          1 + (layout & 0x3f) == frames[i].words,
			      "%s: %llu words, want %u", frames[i].sym,
			      (unsigned long long)(1 + (layout & 0x3f)), frames[i].words);
	}
}

struct tally {
	int stops, in_haskell, in_loop, in_rts, no_sp, callers, rts_callers, ended;
};

/* Waits for the tracee's next stop: 0 and *sig = 0 for the stop
 * PTRACE_INTERRUPT asked for, or the signal of a signal-delivery stop (the
 * registers are still the interrupted program's: the handler has not
 * started); -1 when it is gone. */
static int wait_stop(pid_t pid, int *sig)
{
	int st;
	while (waitpid(pid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFSTOPPED(st))
		return -1;
	*sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
	return 0;
}

/* After a sample taken at a signal-delivery stop: the signal goes on to
 * the program, and the interrupt stop still owed is taken and left. */
static int pass_signal(pid_t pid, int sig)
{
	while (sig) {
		if (ptrace(PTRACE_CONT, pid, 0, (void *)(uintptr_t)sig) != 0 || wait_stop(pid, &sig) != 0)
			return -1;
	}
	return 0;
}

/* The return points of out from frame i on are the callers'. */
static int callers_at(const struct syms *s, const struct be_walk_out *out, uint32_t i)
{
	for (size_t k = 0; k < sizeof callers / sizeof callers[0]; k++) {
		char name[256];
		const char *at = i + k < out->n ? syms_name(s, out->pc[i + k]) : NULL;
		if (!at || strcmp(be_ghc_demangle(at, name, sizeof name), callers[k]) != 0)
			return 0;
	}
	return 1;
}

static void print_walk(const struct syms *s, const char *pc_sym, const struct be_walk_out *out)
{
	char name[256];
	printf("  pc in %s:", pc_sym ? be_ghc_demangle(pc_sym, name, sizeof name) : "?");
	for (uint32_t i = 0; i < out->n && i < 8; i++) {
		const char *at = syms_name(s, out->pc[i]);
		printf(" %s", at ? be_ghc_demangle(at, name, sizeof name) : "?");
	}
	printf("%s (%u frames, stop %d)\n", out->n > 8 ? " ..." : "", out->n, (int)out->stop);
}

/* One stop: Sp from rbp in Haskell code, the saved one in the RTS's C. */
static void sample_once(pid_t pid, const struct syms *s, const struct be_ghc_rts *g,
                        const struct program *prog, struct tally *t)
{
	struct user_regs_struct regs;
	REQUIRE(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0, "PTRACE_GETREGS: %s", strerror(errno));
	t->stops++;
	const char *at = syms_name(s, regs.rip);
	int haskell = in_haskell_code(s, regs.rip);
	uint64_t sp;
	pid_t p = pid;
	struct be_walk_mem m = {proc_read, &p, 4096};
	if (haskell) {
		t->in_haskell++;
		t->in_loop += at && strstr(at, prog->loop) != NULL;
		sp = regs.rbp;
	} else {
		t->in_rts++;
		if (be_walk_ghc_saved_sp(&m, g, &sp) != 0) {
			t->no_sp++;
			return;
		}
	}
	static struct be_walk_out out;
	memset(&out, 0, sizeof out);
	be_walk_ghc(&m, g, sp, &out);
	int found = 0;
	for (uint32_t i = 0; i < out.n && !found; i++)
		found = callers_at(s, &out, i);
	t->callers += found;
	t->rts_callers += found && !haskell;
	t->ended += out.stop == WALK_STOP_END;
	if (t->stops <= 3 || !found)
		print_walk(s, at, &out);
}

static void sample_program(pid_t pid, const struct syms *s, const struct be_ghc_rts *g,
                           const struct program *prog, struct tally *t)
{
	uint64_t rng = tu_seed(20261126);
	for (int i = 0; i < STOPS; i++) {
		struct timespec ts = {0, (long)(2 + tu_rand_below(&rng, 15)) * 1000000L};
		nanosleep(&ts, NULL);
		int sig;
		REQUIRE(ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0 && wait_stop(pid, &sig) == 0,
		        "the program stopped for stop %d", i);
		sample_once(pid, s, g, prog, t);
		REQUIRE(pass_signal(pid, sig) == 0, "the program took its signal %d", sig);
		REQUIRE(ptrace(PTRACE_CONT, pid, 0, 0) == 0, "PTRACE_CONT: %s", strerror(errno));
	}
}

static int have_ghc(void)
{
	char *ver[] = {"ghc", "--numeric-version", NULL};
	return run(ver, 1) != 127;
}

/* Compiles the program into its folder: 0, or -1. */
static int build_program(const struct program *p, char **prog)
{
	char *dir = tu_path(p->name);
	size_t len = strlen(dir) + 16;
	char *src = malloc(len), *out = malloc(len);
	*prog = malloc(len);
	REQUIRE(src && out && *prog && mkdir(dir, 0700) == 0, "%s", dir);
	snprintf(src, len, "%s/Main.hs", dir);
	snprintf(out, len, "%s/o", dir);
	snprintf(*prog, len, "%s/prog", dir);
	REQUIRE(tu_write_file(src, p->src, strlen(p->src)) == 0, "write %s", src);
	char *ghc[] = {"ghc", "-O2", "-g", "-v0", "-rtsopts", src, "-outputdir", out, "-o", *prog, NULL};
	int rc = run(ghc, 0);
	free(dir);
	free(src);
	free(out);
	CHECK(rc == 0, "ghc -O2 -g %s exited %d", p->name, rc);
	return rc == 0 ? 0 : -1;
}

/* -O2 kept the callers (each a function of its own, so a return point in
 * one of them resolves to it) and the loop. */
static void check_kept(const struct syms *s, const struct program *p)
{
	static const char *const kept[] = {"Main_zdwlevelA_info", "Main_zdwlevelB_info",
	                                   "Main_zdwlevelC_info"};
	uint64_t a;
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
		CHECK(syms_lookup((void *)s, kept[i], &a) == 0, "ghc -O2 kept %s", kept[i]);
	char loop[64];
	snprintf(loop, sizeof loop, "Main_zdw%s_info", p->loop);
	CHECK(syms_lookup((void *)s, loop, &a) == 0, "ghc -O2 kept %s", loop);
}

/* Every label of base, ghc-prim, ghc-bignum and Main in the program is
 * GHC's and decodes to Module.name. */
static void check_real_names(const struct syms *s)
{
	static const char *const units[] = {"base_", "ghczmprim_", "ghczmbignum_", "Main_"};
	int n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const char *sym = s->v[i].name;
		size_t len = strlen(sym);
		int info = len > 5 && strcmp(sym + len - 5, "_info") == 0;
		int closure = len > 8 && strcmp(sym + len - 8, "_closure") == 0;
		if (!info && !closure)
			continue;
		for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
			if (strncmp(sym, units[u], strlen(units[u])) != 0)
				continue;
			char name[512];
			be_ghc_demangle(sym, name, sizeof name);
			CHECK(be_ghc_symbol_is_haskell(sym) && strcmp(name, sym) != 0 && strchr(name, '.') &&
			          !strstr(name, "_info") && !strstr(name, "_closure"),
			      "%s decodes: \"%s\"", sym, name);
			n++;
		}
	}
	printf("%d labels of base, ghc-prim, ghc-bignum and Main decoded\n", n);
	CHECK(n > 1000, "the program has its libraries' labels (%d)", n);
}

static pid_t start_program(const char *prog, const char *nursery)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		char a[16];
		snprintf(a, sizeof a, "-A%s", nursery);
		execl(prog, prog, "+RTS", a, "-RTS", (char *)NULL);
		_exit(127);
	}
	tu_track_child(pid);
	struct timespec ts = {0, 300 * 1000000L}; /* into its loop */
	nanosleep(&ts, NULL);
	return pid;
}

/* The program's figures: the callers found in most stops, and in the
 * collector's stops through the saved Sp. */
static void judge(const struct program *p, const struct tally *t)
{
	printf("%s: stops %d: in Haskell code %d (in %s %d), in the RTS's C %d (no saved Sp %d); "
	       "the callers levelC, levelB, levelA found in %d (%d of them in the RTS's C); "
	       "walks that reached the stop frame %d\n",
	       p->name, t->stops, t->in_haskell, p->loop, t->in_loop, t->in_rts, t->no_sp,
	       t->callers, t->rts_callers, t->ended);
	CHECK(t->callers * 10 >= t->stops * 8, "%s: callers found in %d of %d stops", p->name,
	      t->callers, t->stops);
	CHECK(t->ended * 10 >= t->stops * 8, "%s: %d of %d walks reached the stop frame", p->name,
	      t->ended, t->stops);
	if (p->src == hot_src)
		CHECK(t->in_loop * 2 >= t->stops, "hot: %d of %d stops in crunchHot", t->in_loop,
		      t->stops);
	else
		CHECK(t->in_rts >= 10 && t->rts_callers * 10 >= t->in_rts * 8,
		      "alloc: callers found in %d of %d stops in the collector", t->rts_callers,
		      t->in_rts);
}

/* One program built, checked, run and stopped STOPS times: 0, or 77
 * when ptrace is not allowed here. */
static int test_program(const struct program *p)
{
	char *prog = NULL;
	if (build_program(p, &prog) != 0) {
		free(prog);
		return 0;
	}
	struct syms s;
	REQUIRE(syms_load(prog, &s) == 0, "the symbols of %s", prog);
	check_kept(&s, p);
	check_real_names(&s);
	struct be_ghc_rts g;
	char err[200] = "";
	REQUIRE(be_ghc_rts_from_symbols(&g, syms_lookup, &s, err, sizeof err) == 0 && g.found,
	        "the program's RTS: %s", err);
	CHECK(g.version == 900 && g.main_capability && g.underflow_frame_info && g.tso_info &&
	          g.stack_info,
	      "GHC 9.0's RTS, non-threaded: version %d", g.version);

	pid_t pid = start_program(prog, p->nursery);
	check_rts_frames(pid, &s, &g);
	int rc = 0;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) {
		printf("ptrace is not allowed here (%s): the stops are skipped\n", strerror(errno));
		rc = 77;
	} else {
		struct tally t = {0};
		sample_program(pid, &s, &g, p, &t);
		judge(p, &t);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	tu_untrack_child(pid);
	syms_free(&s);
	free(prog);
	return rc;
}

static int test_real(void)
{
	if (!have_ghc()) {
		printf("ghc is not installed: the real programs' checks are skipped\n");
		return 77;
	}
	int rc = 0;
	for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
		if (test_program(&programs[i]) == 77)
			rc = 77;
	return rc;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_demangle();
	test_versions();
	test_images();
	int rc = test_real();
	int fin = tu_finish("test_walk_ghc");
	return fin == 0 && rc == 77 ? 77 : fin;
}
