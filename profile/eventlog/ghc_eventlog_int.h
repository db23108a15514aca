/*
 * ghc_eventlog_int.h - how the eventlog decoder's two files meet:
 * ghc_eventlog.c (the stream: units, the header, events delivered) reads
 * an event's fields through ghc_eventlog_fields.c (the events it knows).
 *
 * May call: ghc_eventlog.h's types.
 */
#ifndef PROFSVC_GHC_EVENTLOG_INT_H
#define PROFSVC_GHC_EVENTLOG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ghc_eventlog.h"

/* The log's big-endian numbers. */
static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* ev's fields, from its payload (size bytes, a NUL after them) when its
 * type is one this decoder knows: 1, *is_short set when a field ran past
 * the payload (then some are half-read); 0 for a type it does not know. */
int gel_fields(struct gel_event *ev, size_t size, int *is_short);

#endif
