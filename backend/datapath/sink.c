/*
 * sink.c - the benchmark baselines of `make bench` (--sink null, raw=DIR,
 * raw-direct=DIR): the store step of a batch replaced by nothing, or by a
 * raw image, every request taking the same path up to that point.
 *
 * The raw sink is the benchmarks' raw-disk baseline: the device's sparse
 * raw image (mirror_raw.c opens it, NAME-runN-xvdp1.img) *is* the sink.
 * A batch's writes are submitted together and waited for before the guest
 * is answered, as a raw-image backend does: raw is the page cache (QEMU
 * qdisk, cache=writeback, what libxl asks for), raw-direct is O_DIRECT +
 * libaio (tapdisk, or qdisk with cache=none,aio=native).  A flush is
 * fdatasync.
 *
 * Owns no state: it is given the sink and the batch.
 *
 * May call: batch.c and raw_mirror.c (the raw sink's image), common/
 * (options.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "raw_mirror.h"
#include "sink.h"

const char *be_sink_name(enum be_sink s)
{
	switch (s) {
	case SINK_NULL:
		return "null";
	case SINK_RAW:
		return "raw";
	case SINK_RAW_DIRECT:
		return "raw-direct";
	default:
		return "store";
	}
}

/* ---- the raw sink: the device's raw image (mirror_raw.c opens it) --------------- */

/* Starts a write of the sink; *err becomes -1 if it fails (now or when it
 * completes).  buf must stay valid until raw_sink_wait. */
static void raw_sink_write(struct be_device *d, uint64_t sector, void *buf, uint32_t nsect, int16_t *err)
{
	struct be_raw_mirror *m = d->mirror;
	size_t len = (size_t)nsect * 512;

#ifdef HAVE_AIO
	if (m->ctx) {
		struct iocb *cb = malloc(sizeof(*cb));
		if (m->inflight >= RAW_MIRROR_DEPTH)
			be_raw_mirror_reap(d, 1);
		if (!cb) {
			*err = -1;
			return;
		}
		io_prep_pwrite(cb, m->fd, buf, len, (long long)(sector * 512));
		cb->data = err;
		if (io_submit(m->ctx, 1, &cb) != 1) {
			free(cb);
			*err = -1;
			return;
		}
		m->inflight++;
		return;
	}
#endif
	if (pwrite(m->fd, buf, len, (off_t)(sector * 512)) != (ssize_t)len)
		*err = -1;
}

/* Waits for every write started; 0 if all succeeded. */
static int raw_sink_wait(struct be_device *d)
{
#ifdef HAVE_AIO
	struct be_raw_mirror *m = d->mirror;
	if (m->ctx && m->inflight)
		return be_raw_mirror_reap(d, (long)m->inflight);
#else
	(void)d;
#endif
	return 0;
}

static int raw_sink_read(struct be_device *d, uint64_t sector, void *buf, uint32_t nsect)
{
	size_t len = (size_t)nsect * 512;
	ssize_t n = pread(d->mirror->fd, buf, len, (off_t)(sector * 512));
	if (n < 0)
		return -1;
	memset((uint8_t *)buf + n, 0, len - (size_t)n); /* past the end: zeros */
	return 0;
}

static int raw_sink_discard(struct be_device *d, uint64_t sector, uint64_t nsect)
{
	if (fallocate(d->mirror->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(sector * 512),
	              (off_t)(nsect * 512)) == 0 ||
	    errno == EOPNOTSUPP)
		return 0;
	return -1;
}

static int raw_sink_flush(struct be_device *d)
{
	return fdatasync(d->mirror->fd);
}

/* Steps 4-5 for the benchmark baselines (--sink null|raw|raw-direct): the
 * same path with the store replaced by nothing or by a raw image, so that
 * `make bench` compares sinks and nothing else.  Per device, in ring order:
 * writes are started together and waited for before a read, a flush, or
 * the answer. */
void be_sink_batch(enum be_sink sink, struct be_batch *bt)
{
	int raw = sink == SINK_RAW || sink == SINK_RAW_DIRECT;

	for (unsigned i = 0, end; i < bt->n; i = end) {
		struct be_device *d = bt->items[i].d;
		for (end = i + 1; end < bt->n && bt->items[end].d == d; end++)
			;
		for (unsigned k = i; k < end; k++) {
			struct be_pending_req *it = &bt->items[k];
			if (!it->pending)
				continue;
			if (!raw) {
				if (it->kind == K_READ)
					memset(it->data, 0, it->nsect * 512);
				continue;
			}
			if (!d->mirror) {
				be_batch_fail(it, BLKIF_RSP_ERROR, "no raw image");
				continue;
			}
			switch (it->kind) {
			case K_WRITE:
				raw_sink_write(d, it->req.sector, it->data, (uint32_t)it->nsect, &it->status);
				/* A FLUSH_DISKCACHE with data: the write, then the flush. */
				if (it->req.operation == BLKIF_OP_FLUSH_DISKCACHE &&
				    (raw_sink_wait(d) != 0 || raw_sink_flush(d) != 0))
					it->status = -1;
				break;
			case K_FLUSH:
				if (raw_sink_wait(d) != 0 || raw_sink_flush(d) != 0)
					it->status = -1;
				break;
			case K_READ:
				raw_sink_wait(d);
				if (raw_sink_read(d, it->req.sector, it->data, (uint32_t)it->nsect) != 0)
					it->status = -1;
				break;
			case K_DISCARD:
				raw_sink_wait(d);
				if (raw_sink_discard(d, it->req.sector, it->req.nr_sectors) != 0)
					it->status = -1;
				break;
			}
		}
		if (raw && d->mirror)
			raw_sink_wait(d);
	}
	for (unsigned i = 0; i < bt->n; i++)
		if (bt->items[i].pending && bt->items[i].status != 0)
			be_batch_fail(&bt->items[i], BLKIF_RSP_ERROR, "raw image I/O failed");
}

