/*
 * view.c - a view of a store or a fleet catalogue for one command or
 * request (view.h): opened once, runs resolved in it, one snapshot.
 *
 * May call: store/store.h, view_fleet.h, view_format.h, view_err.h,
 * view_backend.h, fleet/ (fleet.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../fleet/fleet.h"
#include "view.h"
#include "view_backend.h"
#include "view_fleet.h"
#include "view_format.h"

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
		/* a fleet catalogue: runs are read from a private copy */
		if (mode != STORE_READ) {
			view_error(e, "a fleet catalogue is only read here; change runs on their host's store");
			return -1;
		}
		if (!(path = view_fleet_store(path, e)))
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
	if (view_store_open(&v->s, db, STORE_READ, e) != 0) {
		v->s = NULL;
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

int view_resolve_run(struct store *s, const char *arg, int64_t *run_id, struct view_err *e)
{
	uint64_t n;

	if (view_fleet_active() && arg[0] == '@' && view_parse_u64(arg + 1, &n) == 0 && n > 0 &&
	    n <= INT64_MAX) {
		*run_id = (int64_t)n; /* view_run_ref's: a run copied already */
		return 0;
	}
	if (view_fleet_active())
		return view_fleet_resolve(arg, run_id, e);
	if (strcmp(arg, "latest") == 0) {
		if (store_latest_run(s, run_id) != 0) {
			view_error(e, "%s", store_errmsg(s));
			return -1;
		}
		return 0;
	}
	if (view_parse_u64(arg, &n) != 0 || n == 0 || n > INT64_MAX) {
		view_error(e, "'%s' is not a run id (a number from 'profdb query runs', or 'latest')", arg);
		return -1;
	}
	*run_id = (int64_t)n;
	return 0;
}

int view_resolve(struct view *v, const char *arg, int64_t *run_id, struct view_err *e)
{
	int copies = view_fleet_active() && arg[0] != '@';
	if (view_resolve_run(v->s, arg, run_id, e) != 0)
		return -1;
	if (copies && v->snapshot) { /* the run's copy is newer than the snapshot */
		store_read_end(v->s);
		v->snapshot = 0;
	}
	return 0;
}

void view_run_ref(int64_t id, char *buf, size_t len)
{
	snprintf(buf, len, view_fleet_active() ? "@%lld" : "%lld", (long long)id);
}
