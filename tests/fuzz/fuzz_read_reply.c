/*
 * fuzz_read_reply.c - libFuzzer target: the read service's reply parser
 * (store/store_wire.c, wire_reply_parse), which profdb and profdb serve
 * run on what comes back from <run-dir>/read.sock (a backend of another
 * build, or whatever listens there).  The input's first 17 bytes choose
 * the request (its op, a range's offset and length); the rest is the
 * reply's payload.  Asserted, beyond "no crash, no out-of-bounds read":
 * every item a reply that parses hands over is one its op takes, within
 * the bounds of the store's types (enumerations, strings whole), data
 * pieces in order and without a gap inside the range asked for, no more
 * than WIRE_DATA_MAX bytes of data, and a range read that is done covers
 * its range; a result is 0 or a STORE_E* code.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	enum wire_op op;
	uint64_t at, end;
	size_t data;
	int items;
};

static int on_run(void *ctx, const struct store_run *r)
{
	struct seen *s = ctx;
	assert(s->op == WIRE_GET_RUN || s->op == WIRE_LIST_RUNS);
	assert((int)r->state >= 0 && r->state <= STORE_RUN_CRASHED);
	assert(strlen(r->name) < sizeof(r->name) && strlen(r->end_reason) < sizeof(r->end_reason));
	s->items++;
	return 0;
}

static int on_device(void *ctx, const struct store_device_info *d)
{
	struct seen *s = ctx;
	assert(s->op == WIRE_LIST_DEVICES || s->op == WIRE_FIND_DEVICE || s->op == WIRE_GET_DEVICE);
	assert((int)d->role >= 0 && (int)d->role < STORE_ROLES && (int)d->status >= 0 && d->status <= STORE_STATUS_CORRUPT);
	assert(strlen(d->vdev) < sizeof(d->vdev));
	s->items++;
	return 0;
}

static int on_packet(void *ctx, const struct store_trace_packet *p)
{
	struct seen *s = ctx;
	assert(s->op == WIRE_TRACE_PACKETS && p->bytes > 0 && p->bytes <= (1u << 30));
	return 0;
}

static int on_piece(void *ctx, uint64_t off, const void *d, size_t len)
{
	struct seen *s = ctx;
	assert(s->op == WIRE_READ_RANGE && off == s->at && len > 0 && len <= s->end - s->at);
	if (d) {
		/* touch every byte: ASan sees one outside the frame */
		volatile uint8_t x = 0;
		for (size_t i = 0; i < len; i++)
			x ^= ((const uint8_t *)d)[i];
		(void)x;
		s->data += len;
		assert(s->data <= WIRE_DATA_MAX);
	}
	s->at += len;
	return 0;
}

static int on_damage(void *ctx, const struct store_damage *d)
{
	struct seen *s = ctx;
	assert(s->op == WIRE_READ_RANGE && d->off + d->len >= d->off);
	return 0;
}

static int on_activity(void *ctx, const struct store_activity *a)
{
	(void)a;
	assert(((struct seen *)ctx)->op == WIRE_ACTIVITY);
	return 0;
}

static int on_run_space(void *ctx, const struct store_run_space *r)
{
	(void)r;
	assert(((struct seen *)ctx)->op == WIRE_RUNS_SPACE);
	return 0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 17)
		return 0;
	struct wire_request rq = {.op = (enum wire_op)(1 + data[0] % (WIRE__OPS - 1)), .state = -1};
	rq.off = le64(data + 1) % (1ull << 41);
	rq.len = le64(data + 9) % (1ull << 30);
	data += 17;
	size -= 17;
	uint8_t *p = malloc(size ? size : 1);
	assert(p);
	memcpy(p, data, size);
	static const struct wire_reply_cb cb = {on_run, on_device, on_packet, on_piece, on_damage, on_activity,
	                                         on_run_space};
	struct seen s = {rq.op, rq.off, rq.off + rq.len, 0, 0};
	struct wire_reply rep;
	char why[200];
	int rc = wire_reply_parse(&rq, p, size, &cb, &s, &rep, why, sizeof(why));
	if (rc == WIRE_BAD) {
		assert(why[0]);
	} else {
		assert(rc == 0);
		assert(rep.bye || (rep.rc <= 0 && rep.rc >= STORE_EPERM));
		assert(strlen(rep.msg) <= WIRE_MSG_MAX);
		if (!rep.bye && rq.op == WIRE_READ_RANGE && rep.rc == 0) {
			if (rep.more)
				assert(rep.next == s.at && s.at > rq.off);
			else
				assert(s.at == s.end);
		}
		if (rq.op == WIRE_GET_RUN || rq.op == WIRE_FIND_DEVICE || rq.op == WIRE_GET_DEVICE)
			assert(s.items <= 1);
	}
	free(p);
	return 0;
}
