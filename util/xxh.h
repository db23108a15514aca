/*
 * xxh.h - XXH3, the checksums' and the intake log's hash, as every
 * part of profsvc calls it: libxxhash's header and, where the library
 * offers it (x86: Debian's libxxhash builds xxh_x86dispatch), its
 * dispatching variants, which pick the CPU's widest vectors (AVX2,
 * AVX-512) at run time where the plain calls use SSE2 only.  The same
 * function, the same value (XXH3 is defined by its output, not by the
 * instructions): only the cost differs.  Hashing a 64 KiB slot with the
 * streaming update cost 0.99 instructions a byte (callgrind); a bulk 44
 * KiB request's checksums were three quarters of the backend's work for it.
 *
 * Include this instead of <xxhash.h> (XXH_STATIC_LINKING_ONLY before it
 * where XXH3_state_t is needed on the stack).  Calls nothing.
 */
#ifndef PROFSVC_UTIL_XXH_H
#define PROFSVC_UTIL_XXH_H

#include <xxhash.h>
#ifdef HAVE_XXH_DISPATCH
#include <xxh_x86dispatch.h>
#endif

#endif
