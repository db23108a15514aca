/*
 * ghc_eventlog.c - the streaming eventlog decoder (ghc_eventlog.h): bytes
 * in any pieces, whole header units and events out.
 *
 * Every piece of the log is a unit whose length is known from its first
 * bytes: a 4-byte header marker, an event type declaration, a 2-byte data
 * end, an event.  next_unit() either handles one whole unit at the front
 * of what it is shown or says how many bytes it needs to know more; when a
 * unit spans pieces its bytes are gathered in pend (at most one unit:
 * invariant 3 of the header), otherwise it is read where it lies.  The
 * need only grows while a unit is gathered (4, 12, 12 + description ...;
 * 2, 10 or 12, then the whole event), so each byte is gathered at most
 * once.  An event's payload is then copied once more, with a NUL after
 * it, so that the strings read out of it end wherever the payload does,
 * and its fields read (ghc_eventlog_fields.c).
 *
 * May call: ghc_eventlog_fields.c (an event's fields), util/grow.h, libc.
 */
#include "config.h"

#include "ghc_eventlog.h"
#include "ghc_eventlog_int.h"
#include "util/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENT_HEAD 10u   /* u16 type + u64 time */
#define DATA_END 0xffffu

static const uint8_t MARK_HDRB[4] = {'h', 'd', 'r', 'b'};
static const uint8_t MARK_HETB[4] = {'h', 'e', 't', 'b'};
static const uint8_t MARK_HETE[4] = {'h', 'e', 't', 'e'};
static const uint8_t MARK_HDRE[4] = {'h', 'd', 'r', 'e'};
static const uint8_t MARK_DATB[4] = {'d', 'a', 't', 'b'};
static const uint8_t MARK_ETB[4] = {'e', 't', 'b', 0};
static const uint8_t MARK_ETE[4] = {'e', 't', 'e', 0};

/* header steps: the marker expected next */
enum { STEP_HDRB, STEP_HETB, STEP_TYPES, STEP_HDRE, STEP_DATB };

static int fail(struct gel_decoder *d, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct gel_decoder *d, uint64_t at, const char *fmt, ...)
{
	int n = snprintf(d->err, sizeof(d->err), "offset %llu: ", (unsigned long long)at);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err + n, sizeof(d->err) - (size_t)n, fmt, ap);
	va_end(ap);
	d->failed = 1;
	return -1;
}

void gel_init(struct gel_decoder *d, gel_event_fn fn, void *ctx)
{
	memset(d, 0, sizeof(*d));
	d->fn = fn;
	d->ctx = ctx;
	d->block_cap = -1;
}

void gel_free(struct gel_decoder *d)
{
	for (size_t i = 0; i < 256; i++)
		free(d->slot_pages[i]);
	for (size_t i = 0; i < d->ntypes; i++)
		free(d->types[i].desc);
	free(d->types);
	free(d->pend);
	free(d->scratch);
	memset(d, 0, sizeof(*d));
}

const char *gel_error(const struct gel_decoder *d)
{
	return d->failed ? d->err : "";
}

uint64_t gel_whole_prefix(const struct gel_decoder *d)
{
	return d->whole_prefix;
}

/* ---- the event type table ------------------------------------------------ */

const struct gel_type *gel_type_of(const struct gel_decoder *d, uint16_t num)
{
	const uint16_t *page = d->slot_pages[num >> 8];
	if (!page || !page[num & 0xff])
		return NULL;
	return &d->types[page[num & 0xff] - 1];
}

static int add_type(struct gel_decoder *d, uint64_t at, uint16_t num, uint16_t size, const uint8_t *desc, size_t dlen)
{
	if (gel_type_of(d, num))
		return fail(d, at, "event type %u declared twice in the header", num);
	if (d->ntypes >= GEL_MAX_TYPES)
		return fail(d, at, "more than %u event types in the header", GEL_MAX_TYPES);
	uint16_t **page = &d->slot_pages[num >> 8];
	if (!*page && !(*page = calloc(256, sizeof(**page))))
		return fail(d, at, "out of memory");
	if (GROW_FROM(d->types, d->types_cap, d->ntypes + 1, 64) != 0)
		return fail(d, at, "out of memory");
	char *s = malloc(dlen + 1);
	if (!s)
		return fail(d, at, "out of memory");
	for (size_t i = 0; i < dlen; i++)
		s[i] = desc[i] ? (char)desc[i] : '?'; /* a NUL would hide the rest */
	s[dlen] = 0;
	d->types[d->ntypes] = (struct gel_type){num, size, s};
	(*page)[num & 0xff] = (uint16_t)(++d->ntypes);
	return 0;
}

/* ---- units ------------------------------------------------------------------ */

/* Tracks the enclosing block and the time order, then hands ev over. */
static int deliver(struct gel_decoder *d, struct gel_event *ev)
{
	if (ev->type == GEL_BLOCK_MARKER && ev->decoded) {
		d->blocks++;
		d->block_cap = ev->arg16 == 0xffff ? -1 : ev->arg16;
		/* a size too small to hold the marker ends the block with it */
		d->block_end = ev->offset + ev->value;
		d->last_time = 0;
		ev->cap = d->block_cap;
	} else {
		ev->cap = ev->offset < d->block_end ? d->block_cap : -1;
		if (ev->time_ns < d->last_time)
			d->backwards++;
		d->last_time = ev->time_ns;
	}
	if (ev->time_ns > d->max_time)
		d->max_time = ev->time_ns;
	d->events++;
	if (!ev->known)
		d->unknown_events++;
	/* any nonzero answer stops (1); -1 is kept for the decoder's own errors */
	return d->fn && d->fn(d->ctx, ev) != 0 ? 1 : 0;
}

/* One whole event at p (n bytes, its payload from p + head). */
static int event_unit(struct gel_decoder *d, const uint8_t *p, size_t head, size_t size)
{
	struct gel_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = be16(p);
	ev.time_ns = be64(p + 2);
	ev.offset = d->consumed;
	ev.size = (uint32_t)size;
	/* the payload is copied so its last string ends in a NUL, whatever
	 * size the header gave its type (a fixed-size message is legal) */
	if (GROW_FROM(d->scratch, d->scratch_cap, size + 1, 256) != 0)
		return fail(d, d->consumed, "out of memory");
	memcpy(d->scratch, p + head, size);
	d->scratch[size] = 0;
	ev.payload = d->scratch;
	int is_short = 0;
	ev.known = gel_fields(&ev, size, &is_short);
	ev.decoded = ev.known && !is_short;
	if (!ev.decoded) {
		/* invariant 2: a short payload gives no half-read fields */
		struct gel_event raw = ev;
		memset(&ev, 0, sizeof(ev));
		ev.type = raw.type, ev.time_ns = raw.time_ns, ev.offset = raw.offset;
		ev.size = raw.size, ev.payload = raw.payload, ev.known = raw.known;
	}
	return deliver(d, &ev);
}

/* The event at the front of p[0..n): its whole length, or 0 with *need. */
static size_t event_len(struct gel_decoder *d, const uint8_t *p, size_t n, size_t *need, size_t *head, int *err)
{
	uint16_t type = be16(p);
	const struct gel_type *t = gel_type_of(d, type);
	if (!t) {
		*err = fail(d, d->consumed, "event type %u is not declared in the header", type);
		return 0;
	}
	*head = EVENT_HEAD;
	size_t size = t->size;
	if (t->size == GEL_VARIABLE) {
		*head = EVENT_HEAD + 2;
		if (n < *head) {
			*need = *head;
			return 0;
		}
		size = be16(p + EVENT_HEAD);
	}
	if (n < *head + size) {
		*need = *head + size;
		return 0;
	}
	return *head + size;
}

/* An event type declaration at the front of p[0..n) (starting "etb\0"). */
static size_t type_unit(struct gel_decoder *d, const uint8_t *p, size_t n, size_t *need, int *err)
{
	if (n < 12) {
		*need = 12;
		return 0;
	}
	uint32_t dlen = be32(p + 8);
	if (dlen > GEL_MAX_DESC) {
		*err = fail(d, d->consumed, "event type %u: a description of %lu bytes (at most %u)", be16(p + 4),
		            (unsigned long)dlen, GEL_MAX_DESC);
		return 0;
	}
	size_t at = 12 + (size_t)dlen;
	if (n < at + 4) {
		*need = at + 4;
		return 0;
	}
	uint32_t xlen = be32(p + at);
	if (xlen > GEL_MAX_EXTRA) {
		*err = fail(d, d->consumed, "event type %u: %lu bytes of extra information (at most %u)", be16(p + 4),
		            (unsigned long)xlen, GEL_MAX_EXTRA);
		return 0;
	}
	size_t len = at + 4 + xlen + 4;
	if (n < len) {
		*need = len;
		return 0;
	}
	if (memcmp(p + len - 4, MARK_ETE, 4) != 0) {
		*err = fail(d, d->consumed + len - 4, "event type %u: no end marker \"ete\" after its declaration", be16(p + 4));
		return 0;
	}
	if (add_type(d, d->consumed, be16(p + 4), be16(p + 6), p + 12, dlen) != 0) {
		*err = -1;
		return 0;
	}
	return len;
}

static size_t header_unit(struct gel_decoder *d, const uint8_t *p, size_t n, size_t *need, int *err)
{
	static const uint8_t *const expect[] = {MARK_HDRB, MARK_HETB, NULL, MARK_HDRE, MARK_DATB};
	static const char *const names[] = {"hdrb", "hetb", "", "hdre", "datb"};
	if (n < 4) {
		*need = 4;
		return 0;
	}
	if (d->hdr_step == STEP_TYPES) {
		if (!memcmp(p, MARK_HETE, 4)) {
			d->hdr_step = STEP_HDRE;
			return 4;
		}
		if (memcmp(p, MARK_ETB, 4) != 0) {
			*err = fail(d, d->consumed, "neither an event type (\"etb\") nor the end of the table (\"hete\")");
			return 0;
		}
		return type_unit(d, p, n, need, err);
	}
	if (memcmp(p, expect[d->hdr_step], 4) != 0) {
		*err = fail(d, d->consumed, "the header marker \"%s\" was expected%s", names[d->hdr_step],
		            d->consumed == 0 ? " (not a GHC eventlog)" : "");
		return 0;
	}
	if (d->hdr_step == STEP_DATB) {
		d->phase = GEL_IN_DATA;
		d->whole_prefix = d->consumed + 4;
	} else {
		d->hdr_step++;
	}
	return 4;
}

/*
 * Handles the unit at the front of p[0..n): returns its length once it was
 * handled whole, or 0 with *need (> n) the bytes needed to go on, or 0
 * with *err set (-1 failed, 1 the callback stopped after this unit, whose
 * length is then in *need).
 */
static size_t next_unit(struct gel_decoder *d, const uint8_t *p, size_t n, size_t *need, int *err)
{
	if (d->phase == GEL_IN_HEADER)
		return header_unit(d, p, n, need, err);
	if (n < 2) {
		*need = 2;
		return 0;
	}
	if (be16(p) == DATA_END) {
		d->phase = GEL_ENDED;
		d->whole_prefix = d->consumed + 2;
		return 2;
	}
	size_t head = 0;
	size_t len = event_len(d, p, n, need, &head, err);
	if (!len)
		return 0;
	int rc = event_unit(d, p, head, len - head);
	d->whole_prefix = d->consumed + len;
	if (rc != 0) {
		d->stopped = rc > 0;
		*err = rc < 0 ? -1 : 1;
		*need = len;
		return 0;
	}
	return len;
}

/* Accounts a handled unit of len bytes. */
static void advance(struct gel_decoder *d, size_t len)
{
	d->consumed += len;
}

/* Gathers into pend; 0 to go on (in is advanced), or the feed's result. */
static int gather(struct gel_decoder *d, const uint8_t **in, size_t *left)
{
	size_t take = d->pend_need - d->pend_len;
	if (take > *left)
		take = *left;
	memcpy(d->pend + d->pend_len, *in, take);
	d->pend_len += take;
	*in += take;
	*left -= take;
	if (d->pend_len < d->pend_need)
		return 0;
	size_t need = 0;
	int err = 0;
	size_t len = next_unit(d, d->pend, d->pend_len, &need, &err);
	if (err) {
		if (err > 0) {
			advance(d, need);
			d->pend_len = 0;
		}
		return err;
	}
	if (!len) {
		/* the unit is longer than its first bytes said: need grows */
		if (need <= d->pend_len)
			return fail(d, d->consumed, "internal error: a unit's length went back");
		if (GROW_FROM(d->pend, d->pend_cap, need, 256) != 0)
			return fail(d, d->consumed, "out of memory");
		d->pend_need = need;
		return 0;
	}
	advance(d, len);
	d->pend_len = 0;
	return 0;
}

int gel_feed(struct gel_decoder *d, const void *data, size_t len)
{
	if (d->failed)
		return -1;
	if (d->stopped)
		return 1;
	const uint8_t *in = data;
	d->fed += len;
	while (len > 0 && d->phase != GEL_ENDED) {
		if (d->pend_len > 0) {
			int rc = gather(d, &in, &len);
			if (rc != 0)
				return rc;
			continue;
		}
		size_t need = 0;
		int err = 0;
		size_t n = next_unit(d, in, len, &need, &err);
		if (err) {
			if (err > 0)
				advance(d, need);
			return err;
		}
		if (n) {
			advance(d, n);
			in += n;
			len -= n;
			continue;
		}
		/* the unit spans pieces: keep what is here (invariant 3) */
		if (GROW_FROM(d->pend, d->pend_cap, need, 256) != 0)
			return fail(d, d->consumed, "out of memory");
		memcpy(d->pend, in, len);
		d->pend_len = len;
		d->pend_need = need;
		len = 0;
	}
	/* bytes after the data-end marker are not the log's (a disk's padding) */
	return 0;
}

int gel_finish(struct gel_decoder *d, struct gel_tail *tail)
{
	struct gel_tail t = {d->phase != GEL_IN_HEADER, d->phase == GEL_ENDED, 0, d->whole_prefix};
	t.cut_bytes = d->phase == GEL_ENDED ? 0 : d->fed - d->whole_prefix;
	if (tail)
		*tail = t;
	if (d->failed)
		return -1;
	return t.ended ? 0 : 1;
}
