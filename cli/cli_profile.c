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

#include <stdio.h>
#include <string.h>

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
