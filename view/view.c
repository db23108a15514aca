/*
 * view.c - a view of a store or a fleet catalogue for one command or
 * request (view.h): opened once, runs resolved in it, one snapshot.
 *
 * May call: store/store.h, fleet/fleet.h (fleet_is_url), view_fleet.h, view_format.h,
 * view_err.h, view_backend.h, view_symbols.h (the symbols directory).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fleet/fleet.h"
#include "view.h"
#include "view_backend.h"
#include "view_fleet.h"
#include "view_format.h"
#include "view_symbols.h"

int view_store_open(struct store **s, const char *path, enum store_open_mode mode,
                    struct view_err *e)
{
	/* Writers put whole chunks in the data file, as the backend does: an
	 * import through the WAL made the backend's own checkpoints of it
	 * stall live guests. */
	/* A reader that may not open the files reads through the backend's
	 * read service (store_remote.c). */
	struct store_open_opts o = {.mode = mode, .bulk_file = mode != STORE_READ,
	                            .read_socket = mode == STORE_READ ? view_read_socket() : NULL};
	char err[512];

	if (fleet_is_url(path)) {
		view_error(e, mode != STORE_READ ? "a fleet catalogue is only read here; change runs on their host's store"
		                                 : "a fleet catalogue is read through a view of it");
		return -1;
	}
	if (store_open(s, path, &o, err, sizeof(err)) != 0) {
		view_error(e, "%s", err);
		return -1;
	}
	return 0;
}

int view_open(struct view *v, const char *db, struct view_err *e)
{
	memset(v, 0, sizeof(*v));
	view_symbols_dir(db, v->symbols, sizeof(v->symbols));
	/* a fleet catalogue: runs are read from the view's private copy */
	if (fleet_is_url(db) &&
	    (view_fleet_open(&v->fleet, db, e) != 0 || view_fleet_store(v->fleet, &db, e) != 0)) {
		view_close(v);
		return -1;
	}
	if (view_store_open(&v->s, db, STORE_READ, e) != 0) {
		v->s = NULL;
		view_close(v);
		return -1;
	}
	return 0;
}

void view_close(struct view *v)
{
	if (v->s) {
		if (v->snapshot)
			store_read_end(v->s);
		store_close(v->s);
	}
	view_fleet_close(v->fleet);
	memset(v, 0, sizeof(*v));
}

int view_snapshot(struct view *v, struct view_err *e)
{
	if (v->snapshot)
		return 0;
	if (store_read_begin(v->s) != 0) {
		view_error(e, "%s", store_errmsg(v->s));
		return -1;
	}
	v->snapshot = 1;
	return 0;
}

void view_snapshot_end(struct view *v)
{
	if (v->snapshot)
		store_read_end(v->s);
	v->snapshot = 0;
}

int view_resolve_host(struct store *s, const char *arg, struct view_run *run, struct view_err *e)
{
	uint64_t n;

	memset(run, 0, sizeof(*run));
	if (strcmp(arg, "latest") == 0) {
		if (store_latest_run(s, &run->id) != 0) {
			view_error(e, "%s", store_errmsg(s));
			return -1;
		}
		run->host_run_id = run->id;
		return 0;
	}
	if (view_parse_u64(arg, &n) != 0 || n == 0 || n > INT64_MAX) {
		view_error(e, "'%s' is not a run id (a number from 'profdb query runs', or 'latest')", arg);
		return -1;
	}
	view_run_at(run, (int64_t)n);
	return 0;
}

int view_resolve(struct view *v, const char *arg, struct view_run *run, struct view_err *e)
{
	if (!v->fleet)
		return view_resolve_host(v->s, arg, run, e);
	memset(run, 0, sizeof(*run));
	if (view_fleet_resolve(v->fleet, arg, run->host_id, &run->host_run_id, &run->id, e) != 0)
		return -1;
	if (v->snapshot) { /* the run's copy is newer than the snapshot */
		store_read_end(v->s);
		v->snapshot = 0;
	}
	return 0;
}

void view_run_at(struct view_run *run, int64_t id)
{
	memset(run, 0, sizeof(*run));
	run->id = id;
	run->host_run_id = id;
}
