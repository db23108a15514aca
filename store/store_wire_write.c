/*
 * store_wire_write.c - the read service's frames written (store_wire.h):
 * a request by the reader, a reply item by item by the service, the
 * service's goodbye.  Invariant (4) of store_wire.c holds here: a writer
 * never writes past 4 + WIRE_REPLY_MAX bytes; an item that would not
 * leave room for the end (WIRE_END_ROOM) is not added.
 *
 * Stands apart (store_internal.h).  May call: store_wire.h (the
 * protocol's types), store_wire_frames.h (the kinds and tags), store.h's
 * types, libc.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "store_wire.h"
#include "store_wire_frames.h"

/* Room kept for the end of a reply: tag, result, message, more, next. */
#define WIRE_END_ROOM (1 + 4 + 4 + WIRE_MSG_MAX + 1 + 8)

/* ---- writing ------------------------------------------------------------------ */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int full;
};

static void put(struct wbuf *w, const void *v, size_t n)
{
	if (w->full || n > w->cap - w->len) {
		w->full = 1;
		return;
	}
	memcpy(w->p + w->len, v, n);
	w->len += n;
}
static void put_u8(struct wbuf *w, unsigned v)
{
	uint8_t b = (uint8_t)v;
	put(w, &b, 1);
}
static void put_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(w, b, 4);
}
static void put_u64(struct wbuf *w, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(w, b, 8);
}
static void put_i64(struct wbuf *w, int64_t v)
{
	put_u64(w, (uint64_t)v);
}
static void put_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);
	put_u32(w, (uint32_t)n);
	put(w, s, n);
}

static void set_len(uint8_t *p, size_t n)
{
	p[0] = (uint8_t)n;
	p[1] = (uint8_t)(n >> 8);
	p[2] = (uint8_t)(n >> 16);
	p[3] = (uint8_t)(n >> 24);
}

size_t wire_request_encode(const struct wire_request *rq, uint8_t *buf, size_t cap)
{
	struct wbuf w = {buf, 4, cap, cap < 4};

	if (rq->op <= 0 || rq->op >= WIRE__OPS || strlen(rq->glob) > WIRE_GLOB_MAX || strlen(rq->name) >= sizeof(rq->name))
		return 0;
	put_u8(&w, rq->op);
	switch (rq->op) {
	case WIRE_HELLO:
		put_u32(&w, rq->version);
		put_u64(&w, rq->dev);
		put_u64(&w, rq->ino);
		break;
	case WIRE_GET_RUN:
	case WIRE_LIST_DEVICES:
	case WIRE_GET_DEVICE:
		put_i64(&w, rq->id);
		break;
	case WIRE_LIST_RUNS:
		put_u32(&w, (uint32_t)rq->state);
		put_u8(&w, rq->has_glob != 0);
		put_str(&w, rq->has_glob ? rq->glob : "");
		put_i64(&w, rq->since_us);
		put_i64(&w, rq->limit);
		put_i64(&w, rq->before_id);
		put_i64(&w, rq->after_id);
		break;
	case WIRE_FIND_DEVICE:
		put_i64(&w, rq->id);
		put_str(&w, rq->name);
		break;
	case WIRE_READ_RANGE:
		put_i64(&w, rq->id);
		put_u64(&w, rq->off);
		put_u64(&w, rq->len);
		put_u8(&w, rq->salvage != 0);
		break;
	case WIRE_TRACE_PACKETS:
		put_i64(&w, rq->id);
		put_u64(&w, rq->off);
		break;
	case WIRE_RUNS_SPACE:
		put_i64(&w, rq->limit);
		break;
	default:
		break;
	}
	if (w.full || w.len - 4 > WIRE_REQUEST_MAX)
		return 0;
	set_len(buf, w.len - 4);
	return w.len;
}

void wire_out_begin(struct wire_out *o, uint8_t *buf, enum wire_op op)
{
	o->p = buf;
	o->len = 4;
	o->data = 0;
	o->p[4] = WIRE_REPLY;
	o->p[5] = (uint8_t)op;
	o->len = 6;
}

/* (4) an item of at most `need` bytes fits with the end's room after it */
static int room(const struct wire_out *o, size_t need)
{
	return o->len + need + WIRE_END_ROOM <= 4 + WIRE_REPLY_MAX;
}

static struct wbuf wb(struct wire_out *o)
{
	return (struct wbuf){o->p, o->len, 4 + WIRE_REPLY_MAX, 0};
}

/* The most a run or a device takes: its fixed fields and its strings. */
#define RUN_ITEM_MAX (1 + 8 * 12 + 4 * 7 + 2 + 3 * STORE_NAME_MAX + 40 + 64 + 16 + 256)
#define DEVICE_ITEM_MAX (1 + 8 * 16 + 4 * 3 + 3 + 32)

int wire_out_run(struct wire_out *o, const struct store_run *r)
{
	if (!room(o, RUN_ITEM_MAX))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_RUN);
	put_i64(&w, r->run_id);
	put_u32(&w, (uint32_t)r->domid);
	put_str(&w, r->name);
	put_str(&w, r->uuid);
	put_i64(&w, r->started_us);
	put_i64(&w, r->ended_us);
	put_u8(&w, r->state);
	put_str(&w, r->host);
	put_str(&w, r->backend_version);
	put_str(&w, r->source);
	put_i64(&w, r->prof_bytes);
	put_i64(&w, r->hp_bytes);
	put_i64(&w, r->eventlog_bytes);
	put_i64(&w, r->trace_bytes);
	put_i64(&w, r->trace_packets);
	put_i64(&w, r->trace_events);
	put_i64(&w, r->samples_bytes);
	put_u32(&w, (uint32_t)r->ndevices);
	put_str(&w, r->end_reason);
	put_u8(&w, r->backend_gone != 0);
	o->len = w.len;
	return 0;
}

int wire_out_device(struct wire_out *o, const struct store_device_info *d)
{
	if (!room(o, DEVICE_ITEM_MAX))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_DEVICE);
	put_i64(&w, d->device_id);
	put_i64(&w, d->run_id);
	put_str(&w, d->vdev);
	put_u32(&w, (uint32_t)d->devid);
	put_u8(&w, d->role);
	put_u64(&w, d->capacity_sectors);
	put_i64(&w, d->write_requests);
	put_i64(&w, d->write_bytes);
	put_i64(&w, d->read_requests);
	put_i64(&w, d->read_bytes);
	put_i64(&w, d->flush_requests);
	put_i64(&w, d->discard_requests);
	put_i64(&w, d->errors);
	put_u64(&w, d->written_end_sector);
	put_u8(&w, d->status);
	put_i64(&w, d->file_size);
	put_u8(&w, d->closed != 0);
	put_u32(&w, (uint32_t)d->word_size);
	put_i64(&w, d->status_updated_us);
	o->len = w.len;
	return 0;
}

int wire_out_packet(struct wire_out *o, const struct store_trace_packet *p)
{
	if (!room(o, 1 + 8 * 7 + 4 + 2))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_PACKET);
	put_u64(&w, p->seq);
	put_u64(&w, p->sector);
	put_u32(&w, p->bytes);
	put_u64(&w, p->events);
	put_u64(&w, p->first_ts);
	put_u64(&w, p->last_ts);
	put_u8(&w, p->final != 0);
	put_i64(&w, p->kept_us);
	put_u64(&w, p->sum);
	put_u8(&w, p->has_sum != 0);
	o->len = w.len;
	return 0;
}

int wire_out_piece(struct wire_out *o, uint64_t off, const void *data, size_t len)
{
	if (data && (len > WIRE_DATA_MAX - o->data || !room(o, 1 + 8 + 4 + len)))
		return 1;
	if (!data && !room(o, 1 + 8 + 8))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, data ? WIRE_T_DATA : WIRE_T_HOLE);
	put_u64(&w, off);
	if (data) {
		put_u32(&w, (uint32_t)len);
		put(&w, data, len);
		o->data += len;
	} else {
		put_u64(&w, len);
	}
	o->len = w.len;
	return 0;
}

int wire_out_damage(struct wire_out *o, const struct store_damage *d)
{
	if (!room(o, 1 + 8 * 6 + 4 + sizeof(d->vdev)))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_DAMAGE);
	put_i64(&w, d->run_id);
	put_i64(&w, d->device_id);
	put_str(&w, d->vdev);
	put_u64(&w, d->off);
	put_u64(&w, d->len);
	put_i64(&w, d->chunk);
	put_i64(&w, d->seq);
	o->len = w.len;
	return 0;
}

int wire_out_activity(struct wire_out *o, const struct store_activity *a)
{
	if (!room(o, 1 + 16))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_ACTIVITY);
	put_i64(&w, a->run_id);
	put_i64(&w, a->stamp);
	o->len = w.len;
	return 0;
}

int wire_out_run_space(struct wire_out *o, const struct store_run_space *r)
{
	if (!room(o, 1 + 24))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_RUN_SPACE);
	put_i64(&w, r->run_id);
	put_i64(&w, r->db_bytes);
	put_i64(&w, r->slot_bytes);
	o->len = w.len;
	return 0;
}

int wire_out_run_id(struct wire_out *o, int64_t id)
{
	if (!room(o, 9))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_RUN_ID);
	put_i64(&w, id);
	o->len = w.len;
	return 0;
}

int wire_out_counts(struct wire_out *o, const int64_t counts[3])
{
	if (!room(o, 25))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_COUNTS);
	for (int i = 0; i < 3; i++)
		put_i64(&w, counts[i]);
	o->len = w.len;
	return 0;
}

int wire_out_space(struct wire_out *o, const struct store_space *sp)
{
	if (!room(o, 1 + 8 * 12))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_SPACE);
	const struct store_file_space *f[3] = {&sp->db, &sp->wal, &sp->data};
	for (int i = 0; i < 3; i++) {
		put_i64(&w, f[i]->apparent);
		put_i64(&w, f[i]->allocated);
	}
	put_i64(&w, sp->page_size);
	put_i64(&w, sp->page_count);
	put_i64(&w, sp->free_pages);
	put_i64(&w, sp->data_slots);
	put_i64(&w, sp->slots_in_use);
	put_i64(&w, sp->slots_freed);
	o->len = w.len;
	return 0;
}

int wire_out_hello(struct wire_out *o, const char *path, int schema, const char *store_id)
{
	if (strlen(path) >= sizeof(((struct wire_reply *)0)->path) || strlen(store_id) > 32 ||
	    !room(o, 1 + 4 + strlen(path) + 4 + 4 + 32))
		return 1;
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_HELLO);
	put_str(&w, path);
	put_u32(&w, (uint32_t)schema);
	put_str(&w, store_id);
	o->len = w.len;
	return 0;
}

size_t wire_out_end(struct wire_out *o, int rc, const char *msg, int more, uint64_t next)
{
	char m[WIRE_MSG_MAX + 1];
	snprintf(m, sizeof(m), "%s", msg ? msg : "");
	struct wbuf w = wb(o);
	put_u8(&w, WIRE_T_END);
	put_u32(&w, (uint32_t)rc);
	put_str(&w, m);
	put_u8(&w, more != 0);
	put_u64(&w, next);
	o->len = w.len; /* (4): the room was kept */
	set_len(o->p, o->len - 4);
	return o->len;
}

size_t wire_bye(uint8_t *buf, const char *reason)
{
	char m[WIRE_MSG_MAX + 1];
	snprintf(m, sizeof(m), "%s", reason);
	struct wbuf w = {buf, 4, 4 + 1 + 4 + WIRE_MSG_MAX, 0};
	put_u8(&w, WIRE_BYE);
	put_str(&w, m);
	set_len(buf, w.len - 4);
	return w.len;
}
