/*
 * symbols.h - a guest program's ELF as the sampler needs it (symbols.c,
 * on Debian's libelf and libdw): the function that holds an address, its
 * source line from DWARF when the program was built with -g, and a
 * symbol's address by name (for ghc_rts.c).  The ELF is dom0's file (the
 * config's kernel, or --symbols), not guest memory, but it is still read
 * with care: a damaged ELF is an error, not a crash.
 */
#ifndef PROFSVC_SYMBOLS_H
#define PROFSVC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct be_symtab;

/* Opens path; NULL with a message (no such file, not an ELF, no symbols). */
struct be_symtab *be_symtab_open(const char *path, char *err, size_t errlen);
void be_symtab_close(struct be_symtab *t);
/* Where the program was loaded less where it was linked (a PIE's load
 * address; 0, the default, for a program linked at fixed addresses):
 * every address given or returned from then on is the loaded one. */
void be_symtab_set_bias(struct be_symtab *t, uint64_t bias);
/* The span of its code as loaded (bias applied) and its build-id in hex
 * ("" when it has none), for a mapping of it. */
void be_symtab_span(const struct be_symtab *t, uint64_t *lo, uint64_t *hi);
const char *be_symtab_build_id(const struct be_symtab *t);
/* The symbols held (for the log). */
size_t be_symtab_count(const struct be_symtab *t);

struct be_sym_hit {
	const char *name; /* the raw symbol, or NULL: no symbol holds it */
	uint64_t start;   /* its address */
	const char *file; /* DWARF: the source file, or NULL */
	uint32_t line;    /* DWARF: the line (0: none) */
};
/* What holds pc.  is_return: pc is a return address, whose call is the
 * instruction before it (the line is looked up at pc - 1).  GHC's block
 * labels (c1Rz_info) are mapped to the closure that holds them. */
void be_symtab_lookup(struct be_symtab *t, uint64_t pc, int is_return, struct be_sym_hit *out);
/* 1 when pc lies inside a sized function that is_generated does not
 * claim (C code: the RTS's, libc's), or outside the program's code
 * altogether; 0 for the rest of the program's code (GHC's, whose
 * module-local functions have no symbol of their own). */
int be_symtab_in_c_function(const struct be_symtab *t, uint64_t pc, int (*is_generated)(const char *));
/* Only the name of what holds pc (no line: cheap enough for a pause
 * window), or NULL. */
const char *be_symtab_name_at(const struct be_symtab *t, uint64_t pc);
/* A symbol's address by name: 0, or -1 when absent (be_ghc_sym_lookup). */
int be_symtab_addr_of(void *t, const char *name, uint64_t *addr);

#endif
