/*
 * cli_profile.c - reading a run's profile from the store for the viewing
 * commands (cli_profile.h).
 *
 * Why salvage by default here, unlike export: export writes a file that
 * claims to be the guest's profile, so it refuses what the status block
 * does not vouch for unless asked.  A chart or a table of a crashed or
 * running guest is exactly what the user wants to see, and the parsers
 * keep only complete records anyway; the note says what was salvaged.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../profile/heap_chart.h"
#include "../profile/heap_profile.h"
#include "../profile/time_profile.h"
#include "../store/store_export.h"
#include "cli_profile.h"
#include "cli_util.h"

struct zero_filler {
	cli_profile_sink sink;
	void *ctx;
};

static int range_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	static const uint8_t zeros[65536];
	struct zero_filler *z = ctx;
	(void)off;
	if (data)
		return z->sink(z->ctx, data, len);
	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		if (z->sink(z->ctx, zeros, n))
			return 1;
		len -= n;
	}
	return 0;
}

int cli_profile_read(const char *db, const char *run_arg, const char *role,
                     cli_profile_sink sink, void *ctx, struct cli_profile_read *out)
{
	struct store *s;
	struct store_device_info dev;
	struct store_extract_report rep;
	struct zero_filler z = {sink, ctx};
	int64_t id;
	int rc = 1;

	memset(out, 0, sizeof(*out));
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_resolve_run(s, run_arg, &id) != 0)
		goto done;
	if (store_read_begin(s) != 0 || store_get_run(s, id, &out->run) != 0) {
		cli_err("%s", store_errmsg(s));
		goto done;
	}
	if (store_find_device(s, id, role, &dev) != 0) {
		cli_err("run %lld has no .%s device (%s)", (long long)id, role,
		        strcmp(role, "prof") == 0 ? "xvdp1" : "xvdp2");
		goto done;
	}
	int r = store_extract_profile(s, &dev, 1, range_cb, &z, &rep);
	if (r < 0) {
		cli_err("%s", store_errmsg(s));
		goto done;
	}
	if (r > 0)
		goto done; /* the sink stopped it and said why */
	out->bytes = rep.size;
	out->salvaged = rep.how == STORE_EXTRACT_MAJORITY || rep.how == STORE_EXTRACT_EXTENT;
	if (out->salvaged)
		snprintf(out->note, sizeof(out->note), "%s", rep.note);
	rc = 0;
done:
	store_close(s);
	return rc;
}

void cli_profile_caption(const struct store_run *r, char *out, size_t len)
{
	snprintf(out, len, "run %lld %s (%s)", (long long)r->run_id, r->name,
	         store_run_state_name(r->state));
}

static int tp_sink(void *ctx, const void *data, size_t len)
{
	return tp_feed(ctx, data, len) ? 1 : 0;
}

static int hp_sink(void *ctx, const void *data, size_t len)
{
	return hp_feed(ctx, data, len) ? 1 : 0;
}

int cli_read_time_profile(const char *db, const char *arg, struct time_profile *p,
                          struct cli_profile_read *rd)
{
	tp_init(p);
	if (cli_profile_read(db, arg, "prof", tp_sink, p, rd) != 0) {
		if (p->failed)
			cli_err("run %s: time profile, %s", arg, tp_error(p));
		return 1;
	}
	if (rd->salvaged)
		cli_warn("run %lld: %s", (long long)rd->run.run_id, rd->note);
	if (tp_finish(p) != 0) {
		cli_err("run %lld: time profile, %s", (long long)rd->run.run_id, tp_error(p));
		return 1;
	}
	return 0;
}

int cli_read_heap_profile(const char *db, const char *arg, struct hp_profile *p, struct hp_tail *tail,
                          struct cli_profile_read *rd)
{
	hp_init(p);
	if (cli_profile_read(db, arg, "hp", hp_sink, p, rd) != 0) {
		if (p->failed)
			cli_err("run %s: heap profile, %s", arg, hp_error(p));
		return 1;
	}
	if (rd->salvaged)
		cli_warn("run %lld: %s", (long long)rd->run.run_id, rd->note);
	if (hp_finish(p, tail) != 0) {
		cli_err("run %lld: heap profile, %s", (long long)rd->run.run_id, hp_error(p));
		return 1;
	}
	return 0;
}

/* A band's shape over time in `cols` block characters (its own scale). */
void cli_sparkline(const struct hp_chart *c, const struct hp_chart_band *b, int cols)
{
	static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
	                                     "\u2585", "\u2586", "\u2587", "\u2588"};
	double t0 = c->times[0], span = c->times[c->nsamples - 1] - t0;
	size_t k = 0;
	for (int col = 0; col < cols; col++) {
		double hi = t0 + span * (col + 1) / cols, m = -1;
		/* the largest sample in the column; none there: the one before */
		for (; k < c->nsamples && (c->times[k] < hi || col == cols - 1); k++)
			m = fmax(m, b->values[k]);
		if (m < 0)
			m = b->values[k ? k - 1 : 0];
		int lvl = b->peak ? (int)ceil(m / (double)b->peak * 8) : 0;
		fputs(blocks[lvl < 0 ? 0 : lvl > 8 ? 8 : lvl], stdout);
	}
}

struct follow {
	struct hp_profile *p;
	uint64_t *fed; /* advanced by what the parser was given */
};

/* A cli_profile_sink: the bytes to the parser, counted. */
static int follow_sink(void *ctx, const void *data, size_t len)
{
	struct follow *fw = ctx;
	if (hp_feed(fw->p, data, len) != 0)
		return 1;
	*fw->fed += len;
	return 0;
}

int cli_follow_heap(struct store *s, int64_t run_id, struct hp_profile *p, uint64_t *fed, char *err,
                    size_t len)
{
	struct store_device_info dev;
	if (p->failed) {
		snprintf(err, len, "heap profile: %s", hp_error(p));
		return -1;
	}
	int rc = store_find_device(s, run_id, "hp", &dev);
	if (rc == STORE_ENOTFOUND || (rc == 0 && dev.status != STORE_STATUS_OK))
		return 0; /* nothing written yet */
	if (rc != 0) {
		snprintf(err, len, "%s", store_errmsg(s));
		return -1;
	}
	/* a status block may claim more than was written: never read past that */
	uint64_t size = (uint64_t)dev.file_size, written = store_device_written_bytes(&dev);
	if (size > written)
		size = written;
	if (size <= *fed)
		return 0;
	struct follow fw = {p, fed};
	struct zero_filler z = {follow_sink, &fw}; /* a hole reads as zeros (and fails the parse) */
	rc = store_read_range(s, dev.device_id, STORE_SECTOR_SIZE + *fed, size - *fed, range_cb, &z);
	if (p->failed) {
		snprintf(err, len, "heap profile: %s", hp_error(p));
		return -1;
	}
	if (rc < 0) {
		snprintf(err, len, "%s", store_errmsg(s));
		return -1;
	}
	return 0;
}
