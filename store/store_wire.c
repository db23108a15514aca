/*
 * store_wire.c - the read service's frames read (store_wire.h): a
 * request parsed by the service, a reply parsed by the reader; with
 * store_wire_write.c, which writes them, and store_wire_frames.h, what
 * both agree on, the one place that spells the protocol, for both sides.
 *
 * Invariants:
 *   (1) A reader never reads past the payload it was given: every get_*
 *       checks the bytes left first, and a failed one leaves the reader
 *       failed (everything after it reads as zeros and is refused).
 *   (2) A string read fits the field it goes to, whole, and holds no NUL:
 *       a longer one is refused, never cut (a cut name would be another
 *       name).
 *   (3) An enumeration read is one of its values; an op may carry only
 *       its own items (allowed[]), its single items once; data pieces come
 *       in order, with no gap, inside the range asked for, and a reply
 *       holds no more data than WIRE_DATA_MAX.
 *   (4) A writer never writes past 4 + WIRE_REPLY_MAX bytes: an item that
 *       would not leave room for the end (WIRE_END_ROOM) is not added.
 *
 * Stands apart (store_internal.h).  May call: store.h's types,
 * store_wire_frames.h (the kinds and tags), libc.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "store_wire.h"
#include "store_wire_frames.h"

#define TAG(t) (1u << (t))
/* (3) the items each op's reply may carry */
static const unsigned allowed[WIRE__OPS] = {
	[WIRE_HELLO] = TAG(WIRE_T_HELLO),
	[WIRE_GET_RUN] = TAG(WIRE_T_RUN),
	[WIRE_LATEST_RUN] = TAG(WIRE_T_RUN_ID),
	[WIRE_COUNT_STATES] = TAG(WIRE_T_COUNTS),
	[WIRE_ACTIVITY] = TAG(WIRE_T_ACTIVITY),
	[WIRE_LIST_RUNS] = TAG(WIRE_T_RUN),
	[WIRE_LIST_DEVICES] = TAG(WIRE_T_DEVICE),
	[WIRE_FIND_DEVICE] = TAG(WIRE_T_DEVICE),
	[WIRE_GET_DEVICE] = TAG(WIRE_T_DEVICE),
	[WIRE_READ_RANGE] = TAG(WIRE_T_DATA) | TAG(WIRE_T_HOLE) | TAG(WIRE_T_DAMAGE),
	[WIRE_TRACE_PACKETS] = TAG(WIRE_T_PACKET),
	[WIRE_SPACE] = TAG(WIRE_T_SPACE),
	[WIRE_RUNS_SPACE] = TAG(WIRE_T_RUN_SPACE),
};

/* ---- reading ------------------------------------------------------------------- */

struct rbuf {
	const uint8_t *p;
	size_t n, at;
	const char *bad; /* the first thing that failed (1) */
};

static const uint8_t *take(struct rbuf *r, size_t k, const char *what)
{
	if (r->bad || k > r->n - r->at) {
		if (!r->bad)
			r->bad = what;
		return NULL;
	}
	const uint8_t *q = r->p + r->at;
	r->at += k;
	return q;
}
static unsigned get_u8(struct rbuf *r, const char *what)
{
	const uint8_t *q = take(r, 1, what);
	return q ? q[0] : 0;
}
static uint32_t get_u32(struct rbuf *r, const char *what)
{
	const uint8_t *q = take(r, 4, what);
	return q ? (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24 : 0;
}
static uint64_t get_u64(struct rbuf *r, const char *what)
{
	const uint8_t *q = take(r, 8, what);
	uint64_t v = 0;
	for (int i = 0; q && i < 8; i++)
		v |= (uint64_t)q[i] << (8 * i);
	return v;
}
static int64_t get_i64(struct rbuf *r, const char *what)
{
	return (int64_t)get_u64(r, what);
}
/* (2) into dst (cap bytes), whole and NUL-free, or the reader fails */
static void get_str(struct rbuf *r, char *dst, size_t cap, const char *what)
{
	uint32_t n = get_u32(r, what);
	dst[0] = '\0';
	if (r->bad)
		return;
	if (n >= cap) {
		r->bad = what;
		return;
	}
	const uint8_t *q = take(r, n, what);
	if (!q)
		return;
	if (memchr(q, '\0', n)) {
		r->bad = what;
		return;
	}
	memcpy(dst, q, n);
	dst[n] = '\0';
}
/* (3) an enumeration's value, below `count`, or the reader fails */
static unsigned get_enum(struct rbuf *r, unsigned count, const char *what)
{
	unsigned v = get_u8(r, what);
	if (!r->bad && v >= count)
		r->bad = what;
	return r->bad ? 0 : v;
}
static int get_bool(struct rbuf *r, const char *what)
{
	return (int)get_enum(r, 2, what);
}

int wire_request_parse(const uint8_t *p, size_t n, struct wire_request *rq, char *why, size_t whylen)
{
	struct rbuf r = {p, n, 0, NULL};

	memset(rq, 0, sizeof(*rq));
	rq->state = -1;
	if (n > WIRE_REQUEST_MAX) {
		snprintf(why, whylen, "a request of %zu bytes (at most %u)", n, WIRE_REQUEST_MAX);
		return -1;
	}
	unsigned op = get_u8(&r, "the op");
	if (!r.bad && (op == 0 || op >= WIRE__OPS)) {
		snprintf(why, whylen, "unknown request %u", op);
		return -1;
	}
	rq->op = (enum wire_op)op;
	switch (rq->op) {
	case WIRE_HELLO:
		rq->version = get_u32(&r, "the version");
		rq->dev = get_u64(&r, "the device");
		rq->ino = get_u64(&r, "the inode");
		break;
	case WIRE_GET_RUN:
	case WIRE_LIST_DEVICES:
	case WIRE_GET_DEVICE:
		rq->id = get_i64(&r, "the id");
		break;
	case WIRE_LIST_RUNS: {
		uint32_t st = get_u32(&r, "the state");
		if (!r.bad && st != UINT32_MAX && st > STORE_RUN_CRASHED)
			r.bad = "the state";
		rq->state = st == UINT32_MAX ? -1 : (int32_t)st;
		rq->has_glob = get_bool(&r, "the name filter");
		get_str(&r, rq->glob, sizeof(rq->glob), "the name filter");
		if (!r.bad && !rq->has_glob && rq->glob[0])
			r.bad = "a name filter that is not one";
		rq->since_us = get_i64(&r, "since");
		rq->limit = get_i64(&r, "the limit");
		rq->before_id = get_i64(&r, "before");
		rq->after_id = get_i64(&r, "after");
		break;
	}
	case WIRE_FIND_DEVICE:
		rq->id = get_i64(&r, "the run");
		get_str(&r, rq->name, sizeof(rq->name), "the device's name");
		break;
	case WIRE_READ_RANGE:
		rq->id = get_i64(&r, "the device");
		rq->off = get_u64(&r, "the offset");
		rq->len = get_u64(&r, "the length");
		rq->salvage = get_bool(&r, "salvage");
		if (!r.bad && rq->off + rq->len < rq->off)
			r.bad = "the range (it overflows)";
		break;
	case WIRE_TRACE_PACKETS:
		rq->id = get_i64(&r, "the device");
		rq->off = get_u64(&r, "the first packet");
		break;
	case WIRE_RUNS_SPACE:
		rq->limit = get_i64(&r, "the limit");
		break;
	default:
		break;
	}
	if (!r.bad && r.at != n)
		r.bad = "trailing bytes";
	if (r.bad) {
		snprintf(why, whylen, "a malformed request %u: %s", op, r.bad);
		return -1;
	}
	return 0;
}

static void get_run(struct rbuf *r, struct store_run *x)
{
	memset(x, 0, sizeof(*x));
	x->run_id = get_i64(r, "a run's id");
	x->domid = (int32_t)get_u32(r, "a run's domid");
	get_str(r, x->name, sizeof(x->name), "a run's name");
	get_str(r, x->uuid, sizeof(x->uuid), "a run's uuid");
	x->started_us = get_i64(r, "a run's start");
	x->ended_us = get_i64(r, "a run's end");
	x->state = (enum store_run_state)get_enum(r, 3, "a run's state");
	get_str(r, x->host, sizeof(x->host), "a run's host");
	get_str(r, x->backend_version, sizeof(x->backend_version), "a run's backend version");
	get_str(r, x->source, sizeof(x->source), "a run's source");
	x->prof_bytes = get_i64(r, "a run's sizes");
	x->hp_bytes = get_i64(r, "a run's sizes");
	x->eventlog_bytes = get_i64(r, "a run's sizes");
	x->trace_bytes = get_i64(r, "a run's sizes");
	x->trace_packets = get_i64(r, "a run's sizes");
	x->trace_events = get_i64(r, "a run's sizes");
	x->samples_bytes = get_i64(r, "a run's sizes");
	x->samples = -1; /* the view layer's to count */
	x->ndevices = (int)get_u32(r, "a run's devices");
	get_str(r, x->end_reason, sizeof(x->end_reason), "a run's end reason");
	x->backend_gone = get_bool(r, "a run's backend");
}

static void get_device(struct rbuf *r, struct store_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->device_id = get_i64(r, "a device's id");
	d->run_id = get_i64(r, "a device's run");
	get_str(r, d->vdev, sizeof(d->vdev), "a device's vdev");
	d->devid = (int32_t)get_u32(r, "a device's devid");
	d->role = (enum store_role)get_enum(r, STORE_ROLES, "a device's role");
	d->capacity_sectors = get_u64(r, "a device's capacity");
	d->write_requests = get_i64(r, "a device's counters");
	d->write_bytes = get_i64(r, "a device's counters");
	d->read_requests = get_i64(r, "a device's counters");
	d->read_bytes = get_i64(r, "a device's counters");
	d->flush_requests = get_i64(r, "a device's counters");
	d->discard_requests = get_i64(r, "a device's counters");
	d->errors = get_i64(r, "a device's counters");
	d->written_end_sector = get_u64(r, "a device's written end");
	d->status = (enum store_status)get_enum(r, 3, "a device's status");
	d->file_size = get_i64(r, "a device's file size");
	d->closed = get_bool(r, "a device's closed flag");
	d->word_size = (int)get_u32(r, "a device's word size");
	d->status_updated_us = get_i64(r, "a device's status time");
	if (!r->bad && d->word_size != 0 && d->word_size != 4 && d->word_size != 8)
		r->bad = "a device's word size";
}

static void get_packet(struct rbuf *r, struct store_trace_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->seq = get_u64(r, "a packet's seq");
	p->sector = get_u64(r, "a packet's sector");
	p->bytes = get_u32(r, "a packet's size");
	p->events = get_u64(r, "a packet's events");
	p->first_ts = get_u64(r, "a packet's times");
	p->last_ts = get_u64(r, "a packet's times");
	p->final = get_bool(r, "a packet's final flag");
	p->kept_us = get_i64(r, "a packet's time kept");
	p->sum = get_u64(r, "a packet's checksum");
	p->has_sum = get_bool(r, "a packet's checksum flag");
	/* the store's own bounds on a row (store_trace.c) */
	if (!r->bad && (p->bytes == 0 || p->bytes > (1u << 30) || p->seq > INT64_MAX || p->sector > INT64_MAX))
		r->bad = "a packet's fields";
}

static void get_damage(struct rbuf *r, struct store_damage *d)
{
	memset(d, 0, sizeof(*d));
	d->run_id = get_i64(r, "a damage's run");
	d->device_id = get_i64(r, "a damage's device");
	get_str(r, d->vdev, sizeof(d->vdev), "a damage's vdev");
	d->off = get_u64(r, "a damage's range");
	d->len = get_u64(r, "a damage's range");
	d->chunk = get_i64(r, "a damage's chunk");
	d->seq = get_i64(r, "a damage's packet");
	if (!r->bad && d->off + d->len < d->off)
		r->bad = "a damage's range";
}

static void get_space(struct rbuf *r, struct store_space *sp)
{
	struct store_file_space *f[3] = {&sp->db, &sp->wal, &sp->data};
	for (int i = 0; i < 3; i++) {
		f[i]->apparent = get_i64(r, "the space");
		f[i]->allocated = get_i64(r, "the space");
	}
	sp->page_size = get_i64(r, "the space");
	sp->page_count = get_i64(r, "the space");
	sp->free_pages = get_i64(r, "the space");
	sp->data_slots = get_i64(r, "the space");
	sp->slots_in_use = get_i64(r, "the space");
	sp->slots_freed = get_i64(r, "the space");
}

/* The pieces of a READ_RANGE reply: in order, no gap, inside the range (3). */
struct pieces {
	uint64_t at, end;
	size_t data;
};

static int piece_ok(struct rbuf *r, struct pieces *pc, uint64_t off, uint64_t len, int data)
{
	if (r->bad)
		return 0;
	if (off != pc->at || len == 0 || len > pc->end - pc->at || (data && len > WIRE_DATA_MAX - pc->data)) {
		r->bad = "a data piece out of order or out of range";
		return 0;
	}
	pc->at += len;
	if (data)
		pc->data += (size_t)len;
	return 1;
}

/* A reply being read: the request it answers, where its data pieces are,
 * whom its items go to. */
struct reply_reader {
	struct rbuf r;
	struct pieces pc;
	const struct wire_request *rq;
	const struct wire_reply_cb *cb;
	void *ctx;
	struct wire_reply *out;
	int ended;
};

/* A reply's end: its result, message, more and next. */
static void read_end(struct reply_reader *x)
{
	struct rbuf *r = &x->r;
	int32_t code = (int32_t)get_u32(r, "the result");
	if (!r->bad && (code > 0 || code < STORE_EPERM))
		r->bad = "the result";
	x->out->rc = code;
	get_str(r, x->out->msg, sizeof(x->out->msg), "the message");
	x->out->more = get_bool(r, "more");
	x->out->next = get_u64(r, "next");
	x->ended = 1;
}

/* An item that goes to its callback: a run, device, packet, data piece,
 * hole, damage, activity or run's space; the callback's result. */
static int read_record(struct reply_reader *x, unsigned tag)
{
	struct rbuf *r = &x->r;
	const struct wire_reply_cb *cb = x->cb;
	switch (tag) {
	case WIRE_T_RUN: {
		struct store_run v;
		get_run(r, &v);
		if (!r->bad && x->rq->op == WIRE_GET_RUN && x->out->singles++)
			r->bad = "a second run";
		return !r->bad && cb->run ? cb->run(x->ctx, &v) : 0;
	}
	case WIRE_T_DEVICE: {
		struct store_device_info d;
		get_device(r, &d);
		if (!r->bad && x->rq->op != WIRE_LIST_DEVICES && x->out->singles++)
			r->bad = "a second device";
		return !r->bad && cb->device ? cb->device(x->ctx, &d) : 0;
	}
	case WIRE_T_PACKET: {
		struct store_trace_packet v;
		get_packet(r, &v);
		return !r->bad && cb->packet ? cb->packet(x->ctx, &v) : 0;
	}
	case WIRE_T_DATA: {
		uint64_t off = get_u64(r, "a piece's offset");
		uint32_t len = get_u32(r, "a piece's length");
		if (!piece_ok(r, &x->pc, off, len, 1))
			return 0;
		const uint8_t *d = take(r, len, "a piece's bytes");
		return d && cb->piece ? cb->piece(x->ctx, off, d, len) : 0;
	}
	case WIRE_T_HOLE: {
		uint64_t off = get_u64(r, "a hole's offset");
		uint64_t len = get_u64(r, "a hole's length");
		return piece_ok(r, &x->pc, off, len, 0) && len <= SIZE_MAX && cb->piece
		               ? cb->piece(x->ctx, off, NULL, (size_t)len)
		               : 0;
	}
	case WIRE_T_DAMAGE: {
		struct store_damage d;
		get_damage(r, &d);
		return !r->bad && cb->damage ? cb->damage(x->ctx, &d) : 0;
	}
	case WIRE_T_ACTIVITY: {
		struct store_activity a;
		a.run_id = get_i64(r, "an activity");
		a.stamp = get_i64(r, "an activity");
		return !r->bad && cb->activity ? cb->activity(x->ctx, &a) : 0;
	}
	case WIRE_T_RUN_SPACE: {
		struct store_run_space v;
		v.run_id = get_i64(r, "a run's space");
		v.db_bytes = get_i64(r, "a run's space");
		v.slot_bytes = get_i64(r, "a run's space");
		return !r->bad && cb->run_space ? cb->run_space(x->ctx, &v) : 0;
	}
	}
	return 0;
}

/* An item that is the reply's single answer (kept in out, once): a run id,
 * the counts, the space, the hello; 1 when tag is none of them. */
static int read_single(struct reply_reader *x, unsigned tag)
{
	struct rbuf *r = &x->r;
	struct wire_reply *out = x->out;
	const char *second;
	switch (tag) {
	case WIRE_T_RUN_ID:
		out->run_id = get_i64(r, "a run id");
		second = "a second run id";
		break;
	case WIRE_T_COUNTS:
		for (int i = 0; i < 3; i++)
			out->counts[i] = get_i64(r, "the counts");
		second = "second counts";
		break;
	case WIRE_T_SPACE:
		get_space(r, &out->space);
		second = "a second space";
		break;
	case WIRE_T_HELLO:
		get_str(r, out->path, sizeof(out->path), "the store's path");
		out->schema = (int32_t)get_u32(r, "the schema");
		get_str(r, out->store_id, sizeof(out->store_id), "the store's id");
		second = "a second hello";
		break;
	default:
		return 1;
	}
	if (!r->bad && out->singles++)
		r->bad = second;
	return 0;
}

/* A goodbye frame's reason into out: 0, or WIRE_BAD. */
static int read_bye(struct rbuf *r, size_t n, struct wire_reply *out, char *why, size_t whylen)
{
	get_str(r, out->msg, sizeof(out->msg), "the reason");
	if (!r->bad && r->at != n)
		r->bad = "trailing bytes";
	if (r->bad) {
		snprintf(why, whylen, "a malformed goodbye: %s", r->bad);
		return WIRE_BAD;
	}
	out->bye = 1;
	return 0;
}

int wire_reply_parse(const struct wire_request *rq, const uint8_t *p, size_t n, const struct wire_reply_cb *cb,
                     void *ctx, struct wire_reply *out, char *why, size_t whylen)
{
	struct reply_reader x = {{p, n, 0, NULL}, {rq->off, rq->off + rq->len, 0}, rq, cb, ctx, out, 0};
	struct rbuf *r = &x.r;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (n > WIRE_REPLY_MAX) {
		snprintf(why, whylen, "a reply of %zu bytes (at most %u)", n, WIRE_REPLY_MAX);
		return WIRE_BAD;
	}
	unsigned kind = get_u8(r, "the frame's kind");
	if (!r->bad && kind == WIRE_BYE)
		return read_bye(r, n, out, why, whylen);
	if (!r->bad && kind != WIRE_REPLY)
		r->bad = "the frame's kind";
	if (!r->bad && get_u8(r, "the op") != (unsigned)rq->op && !r->bad)
		r->bad = "the op (not the one asked)";
	while (!r->bad && !x.ended && !rc) {
		unsigned tag = get_u8(r, "an item's tag");
		if (r->bad)
			break;
		if (tag != WIRE_T_END && (tag >= WIRE_T__TAGS || rq->op <= 0 || rq->op >= WIRE__OPS ||
		                          !(allowed[rq->op] & TAG(tag)))) {
			r->bad = "an item this request does not take";
			break;
		}
		if (tag == WIRE_T_END)
			read_end(&x);
		else if (read_single(&x, tag))
			rc = read_record(&x, tag);
	}
	if (rc)
		return rc;
	if (!r->bad && !x.ended)
		r->bad = "no end";
	if (!r->bad && r->at != n)
		r->bad = "trailing bytes";
	/* a range read that says it is done covered the whole range (3) */
	if (!r->bad && rq->op == WIRE_READ_RANGE && out->rc == 0 &&
	    (out->more ? out->next != x.pc.at || x.pc.at == rq->off : x.pc.at != x.pc.end))
		r->bad = "a range read that does not cover its range";
	if (r->bad) {
		snprintf(why, whylen, "a malformed reply: %s", r->bad);
		return WIRE_BAD;
	}
	return 0;
}
