/*
 * heap_profile.h - a GHC heap profile (.hp) as it arrives: an incremental
 * parser that takes bytes in any pieces (a guest still writing, a store
 * read in chunks) and keeps every complete sample, and the model it fills.
 *
 * The format (GHC's RTS, hp2ps's reader in utils/hp2ps/HpFile.c):
 *
 *   JOB "prog +RTS -hc"            a '"' inside is doubled
 *   DATE "Sat Nov 21 07:40 2026"
 *   SAMPLE_UNIT "seconds"
 *   VALUE_UNIT "bytes"
 *   MARK 1.5                        legal between samples
 *   BEGIN_SAMPLE 0.101069           times never decrease
 *   name<TAB>bytes                  one band; the name is everything before
 *   ...                             the LAST tab (names hold spaces, tabs,
 *   END_SAMPLE 0.101069             braces and bytes that are not UTF-8)
 *
 * A sample counts only once its END_SAMPLE line is complete: a file cut
 * anywhere (a crashed guest) yields every complete sample, and
 * hp_finish() says what was dropped.  Everything in the file is hostile:
 * a malformed line stops the parse with one message naming the line; no
 * input makes it crash, overflow or grow without bound beyond the input.
 *
 * No SQLite, no Xen: this is plain data in, plain data out.
 *
 * May call: util/id_index, profile/common/parse_util.
 */
#ifndef PROFSVC_HEAP_PROFILE_H
#define PROFSVC_HEAP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/id_index.h"

#include "profile/common/parse_util.h"

/* The longest line accepted (a band name GHC writes is at most a few KiB). */
#define HP_MAX_LINE (1u << 20)

/* One band's value in one sample. */
struct hp_point {
	uint32_t sample; /* index into hp_profile.times */
	uint64_t bytes;
};

/*
 * A band's points are kept encoded, in sample order: each point is the
 * sample's distance from the band's previous point and its bytes, both as
 * LEB128 varints (a band present in every sample with values under 2 MiB
 * takes 4 bytes a point, not 12).  The bytes go into blocks that are never
 * moved, 32 bytes doubling to 4 KiB, then 4 KiB at a time: growing by
 * realloc left the heap full of outgrown arrays, and a band seen once
 * costs 32 bytes.  Points are read in order, through a cursor.
 */
#define HP_BLOCK_FIRST 32u
#define HP_BLOCK_MAX 4096u
/* One identifier (cost centre stack, closure type, ...), in the order it
 * first appeared. */
struct hp_band {
	char *name;          /* NUL-terminated; may hold any byte but NUL */
	size_t name_len;
	uint8_t **blocks;    /* encoded points, ascending sample, one per sample at most */
	size_t nblocks, blocks_cap;
	size_t used;         /* bytes used in the last block */
	size_t npts;
	uint32_t last_sample; /* of the last point: the next one is coded from it */
	uint64_t total;      /* sum over samples (saturating): hp2ps's "area" */
	uint64_t peak;
	uint32_t pending;    /* index in the open sample's list + 1, or 0 */
};

struct hp_tail {
	uint64_t dropped_bytes;  /* after the last complete line outside a sample */
	int partial_sample;      /* a BEGIN_SAMPLE without its END_SAMPLE */
	double partial_time;     /* its time */
	size_t partial_bands;    /* band lines read in it */
};

struct hp_profile {
	char *job, *date, *sample_unit, *value_unit; /* NULL until seen */
	double *times;           /* complete samples' times, non-decreasing */
	size_t nsamples;
	double *marks;
	size_t nmarks;
	struct hp_band *bands;
	size_t nbands;

	/* parser state */
	uint64_t fed;            /* bytes given so far */
	uint64_t committed;      /* bytes up to the end of the last complete unit */
	uint64_t line_no;        /* of the line being read, from 1 */
	struct pf_lines lines;   /* the line being read */
	int in_sample;
	double sample_time, last_time;
	uint32_t *open;          /* bands seen in the open sample */
	uint64_t *open_bytes;
	size_t nopen, open_cap;
	size_t times_cap, marks_cap, bands_cap;
	struct id_index names;   /* bands by name (ids: index + 1) */
	int failed, finished;
	char err[256];
};

void hp_init(struct hp_profile *p);
void hp_free(struct hp_profile *p);

/* Parses len more bytes.  0, or -1 with hp_error() (and every later call
 * fails the same way).  What came before the error stays usable. */
int hp_feed(struct hp_profile *p, const void *data, size_t len);

/* The end of the input: a last line without a newline is read, and tail
 * (if not NULL) says what was not part of a complete sample.  0 or -1. */
int hp_finish(struct hp_profile *p, struct hp_tail *tail);

/* "line 12: integer must follow the band name ..." */
const char *hp_error(const struct hp_profile *p);

/* Reads a band's points in sample order. */
struct hp_cursor {
	size_t block, off, i;    /* where the next point's bytes start; points read */
	uint32_t sample;         /* the last point's sample */
	struct hp_point ahead;   /* hp_band_at's next unread point */
	int ahead_state;         /* 0 not read yet, 1 valid, 2 no more points */
};
#define HP_CURSOR_INIT {0, 0, 0, 0, {0, 0}, 0}
/* The next point: 1 with *pt, or 0 after the last. */
int hp_next(const struct hp_band *b, struct hp_cursor *c, struct hp_point *pt);
/* A band's value in sample s (0 where the band is absent); s must not
 * decrease between calls with the same cursor. */
uint64_t hp_band_at(const struct hp_band *b, struct hp_cursor *c, uint32_t s);
/* Bytes the band's encoded points take (blocks, whole). */
size_t hp_band_stored_bytes(const struct hp_band *b);
#endif
