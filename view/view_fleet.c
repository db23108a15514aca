/*
 * view_fleet.c - the views over a fleet catalogue (view_fleet.h).
 *
 * Why a private store and not a second reader for every command: show,
 * export, heap, top, flame, diff and report then read a run of the fleet
 * exactly as they read one of this host (an export is byte for byte the
 * host's, a salvage finds what the host's finds), and no command has two
 * versions.  A run is copied once per process however many times the
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

static struct fleet *conn;
static struct store *writer;
static char dir[4096], path[4200];
static struct copied {
	char host_id[33];
	int64_t run_id, local_id;
} copied[16];
static int ncopied;

int view_fleet_command_ok(const char *cmd)
{
	static const char *const ok[] = {"query", "show",   "export", "export-disk", "heap", "top",
	                                 "flame", "diff",   "report", "serve",       "events", "gc"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(cmd, ok[i]) == 0)
			return 1;
	return 0;
}

static void cleanup(void)
{
	if (writer)
		store_close(writer);
	writer = NULL;
	if (path[0])
		store_remove_files(path);
	if (dir[0])
		rmdir(dir);
	fleet_close(conn);
	conn = NULL;
}

struct fleet *view_fleet(const char *url, struct view_err *e)
{
	char err[1024];
	if (conn)
		return conn;
	if (fleet_open(&conn, url, 0, err, sizeof(err)) != 0) {
		view_error(e, "%s", err);
		return NULL;
	}
	atexit(cleanup);
	return conn;
}

int view_fleet_active(void)
{
	return writer != NULL;
}

const char *view_fleet_store(const char *url, struct view_err *e)
{
	char err[512];
	if (writer)
		return path;
	if (!view_fleet(url, e))
		return NULL;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/profdb-fleet.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		view_error(e, "cannot make a private directory for the runs read from the catalogue (%s): "
		        "set TMPDIR to a writable directory",
		        dir);
		dir[0] = 0;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/fleet.db", dir);
	struct store_open_opts o = {.mode = STORE_WRITE};
	if (store_open(&writer, path, &o, err, sizeof(err)) != 0) {
		view_error(e, "%s", err);
		writer = NULL;
		return NULL;
	}
	return path;
}

int view_fleet_resolve(const char *arg, char host_id[33], int64_t *host_run_id, int64_t *local_id,
                       struct view_err *e)
{
	int64_t run_id;
	struct fleet *f = conn;

	if (!f || !writer)
		return -1;
	if (fleet_resolve_run(f, arg, host_id, &run_id) != 0) {
		view_error(e, "%s", fleet_errmsg(f));
		return -1;
	}
	*host_run_id = run_id;
	for (int i = 0; i < ncopied; i++)
		if (copied[i].run_id == run_id && strcmp(copied[i].host_id, host_id) == 0) {
			*local_id = copied[i].local_id;
			return 0;
		}
	if (ncopied == (int)(sizeof(copied) / sizeof(copied[0]))) {
		view_error(e, "too many runs in one command");
		return -1;
	}
	if (fleet_copy_run(f, host_id, run_id, writer, NULL, local_id) != 0) {
		view_error(e, "%s", fleet_errmsg(f));
		return -1;
	}
	copied[ncopied++] = (struct copied){.run_id = run_id, .local_id = *local_id};
	memcpy(copied[ncopied - 1].host_id, host_id, sizeof(copied[0].host_id));
	return 0;
}
