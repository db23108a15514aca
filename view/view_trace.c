/*
 * view_trace.c - a run's MirageOS trace out of the store, loaded into
 * memory in sequence order (view_trace.h).
 *
 * May call: store/store.h, profile/trace/trace_render.h, util/grow.h,
 * view_err.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "view_trace.h"

struct loader {
	struct store *s;
	int64_t device_id;
	struct view_trace *ct;
	size_t cap;
	int rc;
};

struct copy_ctx {
	uint8_t *dst;
};

static int copy_range(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct copy_ctx *c = ctx;
	(void)off;
	if (data)
		memcpy(c->dst, data, len);
	else
		memset(c->dst, 0, len);
	c->dst += len;
	return 0;
}

/* 0; 1 when out of memory (the store's walk returns it as it is); or
 * the store's code, its message in store_errmsg. */
static int load_packet(void *ctx, const struct store_trace_packet *p)
{
	struct loader *l = ctx;
	struct view_trace *ct = l->ct;

	if (GROW_FROM(ct->packets, l->cap, ct->t.n + 1, 64) != 0)
		return 1;
	uint8_t *b = malloc(p->bytes);
	if (!b)
		return 1;
	struct copy_ctx cc = {b};
	int rc = store_read_range(l->s, l->device_id, p->sector * STORE_SECTOR_SIZE, p->bytes, copy_range, &cc);
	if (!rc)
		rc = store_trace_verify(l->s, l->device_id, p, b);
	if (rc) {
		free(b);
		return rc;
	}
	ct->packets[ct->t.n++] = (struct mprof_trace_packet){p->seq, b, p->bytes, p->final};
	ct->nbytes += p->bytes;
	return 0;
}

int view_trace_load(struct store *s, const struct store_run *run, struct view_trace *out, struct view_err *e)
{
	struct store_device_info dev;

	memset(out, 0, sizeof(*out));
	out->t.name = run->name;
	out->t.run_id = run->run_id;
	if (store_find_device(s, run->run_id, STORE_TRACE_VDEV, &dev) != 0 || dev.role != STORE_ROLE_TRACE) {
		view_error(e, "run %lld has no MirageOS trace", (long long)run->run_id);
		return VIEW_TRACE_NONE;
	}
	struct loader l = {s, dev.device_id, out, 0, 0};
	int rc = store_trace_packets(s, dev.device_id, load_packet, &l);
	out->t.p = out->packets;
	if (rc) {
		view_trace_free(out);
		if (rc > 0)
			view_error(e, "out of memory loading the trace of run %lld", (long long)run->run_id);
		else if (rc == STORE_ECORRUPT) /* a packet fails its checksum */
			view_damage(e, "%s", store_errmsg(s));
		else
			view_error(e, "%s", store_errmsg(s));
		return -1;
	}
	return 0;
}

void view_trace_free(struct view_trace *ct)
{
	for (size_t i = 0; i < ct->t.n; i++)
		free((void *)ct->packets[i].bytes);
	free(ct->packets);
	memset(ct, 0, sizeof(*ct));
}
