/*
 * mprof.h - mirage-profile's trace buffer: the Common Trace Format (CTF)
 * packets a MirageOS guest writes into memory it shares with dom0, and the
 * events in them.  Layout, header checks, an event decoder that trusts no
 * byte, and the CTF 1.8 metadata that lets babeltrace2 read the packets.
 * No SQLite, no Xen: the backend (capture), profdb (export, views) and the
 * frontend-stub's mirage mode (the writer, for tests) share it.
 *
 * The format, from mirage-profile's source (lib/mProf_trace_with_tracing.ml
 * and its CTF `metadata`, newest change cf0aa525 "Add Async thread type",
 * 2016; repository head e6da34d4):
 *   - the buffer is cut into MPROF_PACKETS packets of size/4 bytes, the
 *     last taking the remainder, used as a ring;
 *   - each packet starts with a 30-byte little-endian header: magic, the
 *     trace's uuid, packet size in bits, a 16-bit packet count that grows by
 *     one per packet begun, content size in bits (two 16-bit halves);
 *   - events follow back to back, no padding: uint64 timestamp (ns of the
 *     guest's monotonic clock), uint8 id, then the event's fields.
 * The writer moves to the next packet when an event does not fit, and
 * clears that packet's header (count, content) first.  There is no barrier:
 * the packet being written may be read mid-event, and its content size is
 * set before the event's bytes are.
 */
#ifndef PROFSVC_MPROF_H
#define PROFSVC_MPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MPROF_MAGIC 0xc1fc1fc1u
#define MPROF_HEADER_BYTES 30u
#define MPROF_PACKETS 4u
/* The smallest packet that holds a header and the largest fixed event. */
#define MPROF_MIN_PACKET_BYTES 64u
extern const uint8_t mprof_uuid[16];
#define MPROF_UUID_TEXT "05883b8d-521a-487b-b397-456ab150680c"

struct mprof_header {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t packet_bits;
	uint16_t count;       /* stream_packet_count */
	uint32_t content_bits;
};

/* Reads the header at p (MPROF_HEADER_BYTES). */
void mprof_header_read(const uint8_t *p, struct mprof_header *h);
void mprof_header_write(uint8_t *p, const struct mprof_header *h);
/* Where packet i of a buffer of buf_bytes lies (as mirage-profile cuts it). */
void mprof_packet_span(size_t buf_bytes, unsigned i, size_t *off, size_t *len);
/* NULL when h can be the header of a packet of len bytes; else why not. */
const char *mprof_header_check(const struct mprof_header *h, size_t len);
/* Content bytes the header claims (after a successful check). */
static inline size_t mprof_content_bytes(const struct mprof_header *h)
{
	return h->content_bits / 8;
}
/* A packet holding no event (as the writer leaves one it cleared). */
static inline int mprof_header_empty(const struct mprof_header *h)
{
	return h->content_bits <= MPROF_HEADER_BYTES * 8;
}

enum mprof_event_id {
	MPROF_CREATES,
	MPROF_READ,
	MPROF_FULFILLS,
	MPROF_FAILS,
	MPROF_BECOMES,
	MPROF_LABEL,
	MPROF_INCREASE,
	MPROF_SWITCH,
	MPROF_GC,
	MPROF_SIGNAL,
	MPROF_TRY_READ,
	MPROF_COUNTER,
	MPROF_EVENT_KINDS
};

struct mprof_event {
	uint64_t ts;         /* ns, the guest's monotonic clock */
	uint8_t id;          /* enum mprof_event_id */
	int has_thread;      /* the event's context names a thread */
	uint64_t thread;
	uint64_t value;      /* child, source, resolvee, sleeper, duration_ns;
	                        increase's amount and counter's value (as int64) */
	uint8_t thread_type; /* creates */
	const char *text;    /* fails' exn, label's label, increase's and
	                        counter's counter name: NUL-terminated in the
	                        packet, or NULL */
	size_t text_len;
	size_t offset;       /* where the event starts in its packet */
	size_t end;          /* and where it ends */
};

/* Walks the events of one packet.  The cursor trusts nothing: an event
 * that runs past the content, an unknown id, a string without its NUL or
 * a timestamp older than the one before stops the walk with a reason, and
 * everything before it stands. */
struct mprof_cursor {
	const uint8_t *p;
	size_t pos, end;
	uint64_t last_ts;
	const char *why;     /* set when the walk stopped early */
};

/* packet: the packet's bytes (len of them).  min_ts: the last timestamp
 * of the packet before (0 for none).  Returns -1 with *why when the header
 * is not sound. */
int mprof_cursor_init(struct mprof_cursor *c, const uint8_t *packet, size_t len, uint64_t min_ts,
                      const char **why);
/* 1 and *e, or 0 at the end of the sound events (c->why says whether it
 * stopped early). */
int mprof_next(struct mprof_cursor *c, struct mprof_event *e);

const char *mprof_event_name(unsigned id);
/* "Wait", ..., "Async"; NULL for a value mirage-profile does not define
 * (it writes 99 for an Lwt type it does not know). */
const char *mprof_thread_type_name(unsigned t);

/* What a packet holds, for the catalogue: events, their time span, and
 * the content length that ends after the last sound event. */
struct mprof_packet_summary {
	uint64_t events;
	uint64_t first_ts, last_ts;
	size_t sound_bytes;  /* header + sound events */
	const char *why;     /* the walk stopped early, or NULL */
};
int mprof_summarize(const uint8_t *packet, size_t len, uint64_t min_ts,
                    struct mprof_packet_summary *out);

/* The CTF 1.8 metadata describing these bytes (see the README for how it
 * differs from mirage-profile's own file).  env_name: the guest's name,
 * written as an escaped CTF string literal. */
void mprof_write_metadata(FILE *f, const char *env_name, long long run_id);

#endif
