/*
 * view_fleet.c - the views over a fleet catalogue (view_fleet.h).
 *
 * Why a private store and not a second reader for every command: show,
 * export, heap, top, flame, diff and report then read a run of the fleet
 * exactly as they read one of this host (an export is byte for byte the
 * host's, a salvage finds what the host's finds), and no command has two
 * versions.  A run is copied once per view however many times the
 * command reads it; its id there is the host's when free (two hosts' runs
 * of the same number in one diff: the second takes the next free id).
 *
 * May call: fleet/fleet.h, store/store.h, view_err.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view_fleet.h"

#define COPIED_MAX 16 /* runs one view reads */

struct view_fleet {
	struct fleet *conn;
	struct store *writer;       /* the private store, NULL until made */
	char dir[4096], path[4200];
	struct copied {
		char host_id[33];
		int64_t run_id, local_id;
	} copied[COPIED_MAX];
	int ncopied;
};

int view_fleet_open(struct view_fleet **out, const char *url, struct view_err *e)
{
	char err[1024];
	struct view_fleet *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f) {
		view_error(e, "out of memory");
		return -1;
	}
	if (fleet_open(&f->conn, url, 0, err, sizeof(err)) != 0) {
		view_error(e, "%s", err);
		free(f);
		return -1;
	}
	*out = f;
	return 0;
}

struct fleet *view_fleet_reader(struct view_fleet *f)
{
	return f->conn;
}

void view_fleet_close(struct view_fleet *f)
{
	if (!f)
		return;
	if (f->writer)
		store_close(f->writer);
	if (f->path[0])
		store_remove_files(f->path);
	if (f->dir[0])
		rmdir(f->dir);
	fleet_close(f->conn);
	free(f);
}

int view_fleet_store(struct view_fleet *f, const char **path, struct view_err *e)
{
	char err[512];
	if (f->writer) {
		*path = f->path;
		return 0;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/profdb-fleet.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		view_error(e, "cannot make a private directory for the runs read from the catalogue (%s): "
		        "set TMPDIR to a writable directory",
		        f->dir);
		f->dir[0] = 0;
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/fleet.db", f->dir);
	struct store_open_opts o = {.mode = STORE_WRITE};
	if (store_open(&f->writer, f->path, &o, err, sizeof(err)) != 0) {
		view_error(e, "%s", err);
		f->writer = NULL;
		return -1;
	}
	*path = f->path;
	return 0;
}

int view_fleet_resolve(struct view_fleet *f, const char *arg, char host_id[33], int64_t *host_run_id,
                       int64_t *local_id, struct view_err *e)
{
	int64_t run_id;

	if (!f->writer)
		return -1;
	if (fleet_resolve_run(f->conn, arg, host_id, &run_id) != 0) {
		view_error(e, "%s", fleet_errmsg(f->conn));
		return -1;
	}
	*host_run_id = run_id;
	for (int i = 0; i < f->ncopied; i++)
		if (f->copied[i].run_id == run_id && strcmp(f->copied[i].host_id, host_id) == 0) {
			*local_id = f->copied[i].local_id;
			return 0;
		}
	if (f->ncopied == COPIED_MAX) {
		view_error(e, "too many runs in one command");
		return -1;
	}
	if (fleet_copy_run(f->conn, host_id, run_id, f->writer, NULL, local_id) != 0) {
		view_error(e, "%s", fleet_errmsg(f->conn));
		return -1;
	}
	struct copied *c = &f->copied[f->ncopied++];
	c->run_id = run_id;
	c->local_id = *local_id;
	memcpy(c->host_id, host_id, sizeof(c->host_id));
	return 0;
}
