/*
 * modules.h - what a sampled program has mapped (modules.c, on elfutils'
 * libdwfl): the program and its shared libraries at the addresses they
 * were loaded at (a PIE's and a library's load bias applied), each with
 * its file and build-id; the function and source line an address is in;
 * and walking a stack by the call frame information (.eh_frame,
 * .debug_frame) of the code it runs through, for code built without
 * frame pointers (Debian's -O2, OCaml's native code).
 *
 * The mappings come from the platform (platform.h's plat_domain_maps) as
 * /proc/PID/maps text; the files they name are dom0's, opened only when
 * they are regular files.  The walk reads the guest's memory only through
 * a be_walk_mem (walk.h): budgeted, every read checked, depth bounded.
 * One thread at a time: built on one, then handed over.
 */
#ifndef PROFSVC_MODULES_H
#define PROFSVC_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "walk.h"

struct be_mods;

/* An empty set: NULL with a message (out of memory). */
struct be_mods *be_mods_new(char *err, size_t errlen);
void be_mods_free(struct be_mods *ms);

/* The mappings again, from maps text (plat_domain_maps): modules no
 * longer mapped go, new ones come (their files opened when first needed).
 * 0, or -1 with a message (text that is not maps). */
int be_mods_report_maps(struct be_mods *ms, const char *maps, size_t len, char *err, size_t errlen);
/* How many modules are mapped. */
size_t be_mods_count(const struct be_mods *ms);

/* The program itself: the first file the maps name (the executable is
 * mapped before its interpreter and libraries); its path and load bias
 * (0 for a program linked at fixed addresses).  0, or -1: none. */
int be_mods_main(struct be_mods *ms, const char **path, uint64_t *bias);
/* 1 when pc lies in a mapped module whose ELF could be opened. */
int be_mods_has(struct be_mods *ms, uint64_t pc);
/* 1 when pc lies in the program itself (be_mods_main's module). */
int be_mods_in_main(struct be_mods *ms, uint64_t pc);

struct be_mod_hit {
	const char *name;   /* the symbol holding pc, or NULL */
	uint64_t start;     /* its address (loaded), or pc */
	const char *module; /* the module's file name without its directory, or NULL: no module */
	const char *file;   /* DWARF: the source file, or NULL */
	uint32_t line;      /* DWARF: the line (0: none) */
	/* the module (when module is not NULL): its path as mapped, the
	 * executable mapping pc lies in (lo, hi and the file offset mapped at
	 * lo), and its build-id in hex ("" when it has none) */
	const char *path;
	uint64_t lo, hi, offset;
	const char *build_id;
};
/* What holds pc (is_return: a return address, looked up at pc - 1).  The
 * strings live until the next report. */
void be_mods_lookup(struct be_mods *ms, uint64_t pc, int is_return, struct be_mod_hit *out);

/* Walks a stack by call frame information from the registers r: pc and
 * each caller's return address appended to out (kind WALK_FRAME_C), the
 * stop said as walk.h says.  Returns how many frames it appended (0: pc
 * is in no module with call frame information). */
uint32_t be_mods_unwind(struct be_mods *ms, struct be_walk_mem *m, const struct plat_vcpu_regs *r,
                        struct be_walk_out *out);

#endif
