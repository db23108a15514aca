/*
 * sink.c - the benchmark baselines of `make bench` (--sink null, raw=DIR,
 * raw-direct=DIR): the store step of a batch replaced by nothing, or by a
 * raw image (mirror_raw.c's raw_sink_*), every request taking the same
 * path up to that point.
 */
#include "config.h"

#include <string.h>

#include "io.h"

const char *sink_name(enum sink s)
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

/* Steps 4-5 for the benchmark baselines (--sink null|raw|raw-direct): the
 * same path with the store replaced by nothing or by a raw image, so that
 * `make bench` compares sinks and nothing else.  Per device, in ring order:
 * writes are started together and waited for before a read, a flush, or
 * the answer. */
void sink_batch(struct backend *b, struct batch *bt)
{
	int raw = b->opt.sink == SINK_RAW || b->opt.sink == SINK_RAW_DIRECT;

	for (unsigned i = 0, end; i < bt->n; i = end) {
		struct device *d = bt->items[i].d;
		for (end = i + 1; end < bt->n && bt->items[end].d == d; end++)
			;
		for (unsigned k = i; k < end; k++) {
			struct pending_req *it = &bt->items[k];
			if (!it->pending)
				continue;
			if (!raw) {
				if (it->kind == K_READ)
					memset(it->data, 0, it->nsect * 512);
				continue;
			}
			if (!d->mirror) {
				io_fail(it, BLKIF_RSP_ERROR, "no raw image");
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
			io_fail(&bt->items[i], BLKIF_RSP_ERROR, "raw image I/O failed");
}

