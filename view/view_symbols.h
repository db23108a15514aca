/*
 * view_symbols.h - a run's sampled addresses named when they are read
 * (view_symbols.c), for the addresses the sampler could not name (a
 * stripped program, a library without symbols): each frame keeps its
 * address and the object it lies in, with the object's build-id
 * (profile/samples/samples.h's MAPPING), so a symbol file may come after
 * the run.  Symbol files are found by build-id where gdb, perf and
 * debuginfod keep them:
 *   1. the store's symbols directory (`profdb symbols add ELF...` keeps
 *      a file there): DIR/.build-id/ab/cdef...debug;
 *   2. /usr/lib/debug/.build-id/ab/cdef...debug (Debian's -dbgsym
 *      packages, libc6-dbg);
 *   3. debuginfod, when DEBUGINFOD_URLS is set (libdebuginfod, opened
 *      when first asked: profdb needs no more than libdw where there is
 *      none; its own cache, a download bounded in time; a build-id it
 *      does not have is not asked again by this process).
 * Nothing is written back: the stored stream stays what was sampled, and
 * every reader names it the same way.
 *
 * May call: profile/samples/samples.h, view_err.h, libdw (libdwfl,
 * dwelf), libelf, libdebuginfod (dlopen'd).
 */
#ifndef PROFSVC_VIEW_SYMBOLS_H
#define PROFSVC_VIEW_SYMBOLS_H

#include <stddef.h>

#include "profile/samples/samples.h"
#include "view_err.h"

/* The symbols directory of the store at db: $PROFSVC_SYMBOLS when set,
 * else "symbols" beside the store's file; "" for a catalogue (a
 * postgresql:// URL) without $PROFSVC_SYMBOLS. */
void view_symbols_dir(const char *db, char *out, size_t cap);

/* Keeps a copy of the ELF at path in dir by its build-id (made atomically:
 * a reader never sees half a file); its build-id in hex into id.  0, or
 * -1 with the reason in e (no such file, not an ELF, no build-id, no
 * symbols to add, the directory cannot be written). */
int view_symbols_add(const char *dir, const char *path, char *id, size_t idcap, struct view_err *e);

/* Names p's frames that have no name and lie in an object with a
 * build-id, from the object's symbol file wherever it is found (dir
 * first; dir may be ""); how many frames it named.  Symbol files that
 * cannot be read are passed over, said once as a warning in e. */
size_t view_symbolize(const char *dir, struct samples_profile *p, struct view_err *e);

#endif
