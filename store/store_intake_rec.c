/*
 * store_intake_rec.c - layer 3 (the intake log), its bottom: the record.
 * A batch's record built in memory (begin, writes, device rows), sealed
 * (header, trailer), checked as recovery reads it (intake_rec_parse),
 * and read back (device rows, the overlay of its writes).  The layout is
 * described in store_intake.c and store_intake_int.h.
 * May call: store_conn.c, util/xxh.h (the records' checksums), util/grow.h.  Called
 * by the other store_intake*.c files and by the open batch (store_data.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include "util/grow.h"
#include "util/xxh.h"

#include "store_intake_int.h"

/* ---- building a record ---------------------------------------------------------------- */

int intake_rec_reserve(struct store *s, struct intake_rec *r, size_t more)
{
	if (r->len + more > r->cap && GROW_FROM(r->data, r->cap, r->len + more, 8192) != 0)
		return store_fail(s, STORE_ENOMEM, "out of memory taking in a batch");
	return 0;
}

void intake_rec_free(struct intake_rec *r)
{
	if (r) {
		free(r->data);
		free(r);
	}
}

static int add_device(struct store *s, const struct store_device_info *d)
{
	struct intake_rec *r = s->intake->cur;
	struct intake_dev v = {
		.device_id = d->device_id, .write_requests = d->write_requests, .write_bytes = d->write_bytes,
		.read_requests = d->read_requests, .read_bytes = d->read_bytes,
		.flush_requests = d->flush_requests, .discard_requests = d->discard_requests,
		.errors = d->errors, .written_end_sector = d->written_end_sector, .file_size = d->file_size,
		.status_updated_us = d->status_updated_us, .status = (int32_t)d->status, .closed = d->closed,
		.word_size = d->word_size,
	};
	int rc = intake_rec_reserve(s, r, sizeof(v));
	if (rc)
		return rc;
	memcpy(r->data + r->len, &v, sizeof(v));
	r->len += sizeof(v);
	((struct intake_hdr *)r->data)->ndevs++;
	return 0;
}

int intake_rec_seal(struct store *s, const struct store_device *dirty)
{
	struct store_intake *in = s->intake;
	struct intake_rec *r = in->cur;
	int rc;

	for (const struct store_device *d = dirty; d; d = d->next_dirty)
		if ((rc = add_device(s, &d->pending)))
			return rc;
	if ((rc = intake_rec_reserve(s, r, sizeof(uint64_t))))
		return rc;
	if (r->len + sizeof(uint64_t) > INTAKE_REC_MAX)
		return store_fail(s, STORE_EINVAL, "a batch of %zu bytes is too big for the intake log", r->len);
	struct intake_hdr *h = (struct intake_hdr *)r->data;
	h->magic = INTAKE_MAGIC;
	h->version = INTAKE_VERSION;
	h->seq = in->next_seq;
	h->tag = in->tag;
	h->len = (uint32_t)(r->len + sizeof(uint64_t));
	uint64_t hash = XXH3_64bits(r->data, r->len);
	memcpy(r->data + r->len, &hash, sizeof(hash));
	r->len += sizeof(hash);
	return 0;
}

/* ---- reading a record ----------------------------------------------------------------- */

void intake_device_info_of(const struct intake_dev *v, struct store_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->device_id = v->device_id;
	d->write_requests = v->write_requests;
	d->write_bytes = v->write_bytes;
	d->read_requests = v->read_requests;
	d->read_bytes = v->read_bytes;
	d->flush_requests = v->flush_requests;
	d->discard_requests = v->discard_requests;
	d->errors = v->errors;
	d->written_end_sector = v->written_end_sector;
	d->file_size = v->file_size;
	d->status_updated_us = v->status_updated_us;
	d->status = v->status == STORE_STATUS_OK      ? STORE_STATUS_OK
	            : v->status == STORE_STATUS_CORRUPT ? STORE_STATUS_CORRUPT
	                                                : STORE_STATUS_NONE;
	d->closed = v->closed != 0;
	d->word_size = v->word_size;
}

void intake_overlay_record(const uint8_t *rec, size_t len, int64_t dev, uint64_t sector, uint64_t nsect,
                           uint8_t *buf)
{
	struct intake_hdr h;
	size_t off = sizeof(h);

	memcpy(&h, rec, sizeof(h));
	for (uint32_t i = 0; i < h.nops && off + sizeof(struct intake_op) <= len; i++) {
		struct intake_op op;
		memcpy(&op, rec + off, sizeof(op));
		const uint8_t *data = rec + off + sizeof(op);
		off += sizeof(op) + (size_t)op.nsect * STORE_SECTOR_SIZE;
		if (op.device_id != dev)
			continue;
		uint64_t lo = op.sector > sector ? op.sector : sector;
		uint64_t hi = op.sector + op.nsect < sector + nsect ? op.sector + op.nsect : sector + nsect;
		if (lo < hi)
			memcpy(buf + (lo - sector) * STORE_SECTOR_SIZE, data + (lo - op.sector) * STORE_SECTOR_SIZE,
			       (hi - lo) * STORE_SECTOR_SIZE);
	}
}

uint64_t intake_tag_of(const char *store_id)
{
	/* meta.store_id: 32 hex digits; the first 16 name the store here */
	uint64_t v = 0;
	for (int i = 0; i < 16 && store_id[i]; i++) {
		char c = store_id[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 0;
		v = v << 4 | d;
	}
	return v ? v : 1;
}

int intake_rec_parse(const uint8_t *p, size_t avail, uint64_t tag, size_t *len)
{
	struct intake_hdr h;

	if (avail < sizeof(h) + sizeof(uint64_t))
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.magic != INTAKE_MAGIC || h.version != INTAKE_VERSION || h.tag != tag || h.len > avail ||
	    h.len < sizeof(h) + sizeof(uint64_t) || h.len % 8 || h.len > INTAKE_REC_MAX)
		return -1;
	uint64_t want, got = XXH3_64bits(p, h.len - sizeof(uint64_t));
	memcpy(&want, p + h.len - sizeof(uint64_t), sizeof(want));
	if (want != got)
		return -1;
	/* the body: ops and their data, then device rows, exactly */
	size_t off = sizeof(h), end = h.len - sizeof(uint64_t);
	for (uint32_t i = 0; i < h.nops; i++) {
		struct intake_op op;
		if (end - off < sizeof(op))
			return -1;
		memcpy(&op, p + off, sizeof(op));
		if (op.kind != INTAKE_KIND_WRITE || op.nsect == 0 ||
		    (uint64_t)op.nsect * STORE_SECTOR_SIZE > end - off - sizeof(op))
			return -1;
		off += sizeof(op) + (size_t)op.nsect * STORE_SECTOR_SIZE;
	}
	if ((end - off) != (size_t)h.ndevs * sizeof(struct intake_dev))
		return -1;
	*len = h.len;
	return 0;
}
