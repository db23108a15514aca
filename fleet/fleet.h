/*
 * fleet.h - the fleet catalogue: every host's runs in one PostgreSQL
 * database (libpq).  A host pushes its ended runs there (profdb sync);
 * profdb lists the fleet's runs and brings one into a private store to show
 * or export it with the code that reads a host's own.
 *
 * Model (fleet_schema.c has the tables)
 *   host   one host's store, named by the store's identity (meta.store_id:
 *          a reinstalled host is a new host; its old runs stay) and shown
 *          by its hostname.
 *   run    a run of a host, under the host's own run id: (host, run) is
 *          the key, so pushing it again replaces it, never duplicates it.
 *          Its devices, chunks and trace packets are the host's rows as
 *          they were, and it is written in one transaction: a run is in
 *          the catalogue whole or not at all.
 *
 * Every value a guest chose (names, uuids, profile bytes) goes through bound
 * parameters or COPY, and strings are kept as bytea (a guest's name need not
 * be UTF-8, which a text column would refuse).
 *
 * ERRORS.  One convention, SQLite's: a code and a message getter.  A
 * function that can fail returns 0 or -1, and fleet_errmsg(f) then gives
 * the failure's one-line message (PostgreSQL's own words after ours where
 * the server answered; never the URL's password).  The exceptions, each
 * said at its declaration:
 *   - fleet_open has no connection to keep a message in: -1 comes with
 *     the message in the caller's err buffer;
 *   - fleet_copy_rows writes only the store it is given: 0 or a STORE_E*
 *     code, store_errmsg(dst) its message;
 *   - a walk with a callback (fleet_list_runs, fleet_each_run_rows) stops
 *     at the callback's first non-zero return and returns that value as
 *     it is, fleet_errmsg untouched;
 *   - a device left out of a push for its damage is no error: fleet_sync
 *     tells o->damaged, fleet_sync_run its damage buffer;
 *   - a question returns 1 or 0 (fleet_is_url).
 *
 * May call: store/store.h (the store's runs and devices it copies), libpq.
 */
#ifndef PROFSVC_FLEET_H
#define PROFSVC_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define FLEET_SCHEMA_VERSION 6

struct fleet;

/* 1 when s names a PostgreSQL database (a postgresql:// or postgres://
 * URI; libpq's other sources, PGPASSFILE, service files and the
 * environment, complete it). */
int fleet_is_url(const char *s);

/* Connects.  A writer creates the schema or migrates it; a reader refuses a
 * database without it.  Either refuses a newer schema.  On failure returns
 * -1 with a one-line reason in err (the URL's password is never in it). */
int fleet_open(struct fleet **out, const char *url, int writer, char *err, size_t len);
void fleet_close(struct fleet *f);
/* From another thread: cuts the connection under whatever f is doing (it
 * then fails; the server rolls its transaction back). */
void fleet_interrupt(struct fleet *f);
const char *fleet_errmsg(const struct fleet *f);

/* ---- pushing a host's runs (fleet_sync.c) --------------------------------- */

struct fleet_sync_opts {
	int64_t since_us;     /* 0: every run; else runs started at or after */
	int include_running;  /* push running runs as they are so far */
	/* Called after each run pushed or found current (may be NULL). */
	void (*progress)(void *ctx, int64_t run_id, int pushed, int64_t bytes);
	/* Called for each device whose bytes here fail their checksum: the
	 * run was pushed without it (may be NULL). */
	void (*damaged)(void *ctx, int64_t run_id, const char *what);
	void *ctx;
};
struct fleet_sync_report {
	int64_t pushed;       /* runs written (new, or replacing an older copy) */
	int64_t current;      /* runs already there as they are here */
	int64_t running;      /* running runs left for later */
	int64_t bytes;        /* chunk bytes sent */
	int64_t summed;       /* catalogue chunks of before schema 5 given their checksum */
	int64_t damaged;      /* runs there without a device whose bytes here fail their checksum */
};
/* Pushes every ended run of the store s (a reader) that the catalogue does
 * not hold as it is here.  Each run is one transaction; an interrupted
 * sync leaves whole runs and the next one completes it. */
int fleet_sync(struct fleet *f, struct store *s, const struct fleet_sync_opts *o,
               struct fleet_sync_report *rep);

/* One run (profile-backend, as it ends): pushed unless the catalogue holds
 * it as it is here, or it is still running.  *pushed says whether it was
 * sent; damage (damage_len bytes) what was left out of it, "" when
 * nothing; 0 or -1. */
int fleet_sync_run(struct fleet *f, struct store *s, int64_t run_id, int *pushed, int64_t *bytes, char *damage,
                   size_t damage_len);
/* Where a catalogue URL points, for logs and status: host, port, database
 * and user as libpq reads them, never the password. */
void fleet_describe_url(const char *url, char *out, size_t len);

/* ---- reading (fleet_read.c) ---------------------------------------------- */

struct fleet_run {
	struct store_run run; /* the host's fields; run.host is the captured hostname */
	char host_id[33];     /* the host's store identity */
	char hostname[STORE_NAME_MAX]; /* what the host said at its last sync */
	/* fleet_list_runs: the host's number in this listing (0, 1, ...; -1
	 * when unknown), for a caller that keeps each host once */
	int host_no;
};
struct fleet_filter {
	struct store_run_filter run;
	const char *host;     /* NULL: any; else a hostname or a prefix of a host id */
	/* Only what a table shows: host, run id, domid, name, start, end,
	 * state, profile sizes (the rest left zero). */
	int brief;
};
typedef int (*fleet_run_cb)(void *ctx, const struct fleet_run *r);
/* The fleet's runs, oldest first (the newest run.limit with a limit).  A
 * non-zero return of the callback stops and is returned. */
int fleet_list_runs(struct fleet *f, const struct fleet_filter *flt, fleet_run_cb cb, void *ctx);
/* A run named as "N" (when one host has run N), "HOST:N", "latest" or
 * "HOST:latest", HOST being a hostname or a prefix of a host id. */
int fleet_resolve_run(struct fleet *f, const char *arg, char host_id[33], int64_t *run_id);
/* Copies a run of the catalogue into dst (a writer) as it was on its host
 * (store_copy.c); its id there in *local_id.  o may be NULL (the whole run,
 * under the host's run id when free). */
struct fleet_copy_opts {
	int64_t id;        /* 0: the host's run id when free; else this id */
	int rows_only;     /* the run's and devices' rows, not their bytes */
	int catalogue_host; /* run.host: the catalogue's name for the host */
};
int fleet_copy_run(struct fleet *f, const char *host_id, int64_t run_id, struct store *dst,
                   const struct fleet_copy_opts *o, int64_t *local_id);
/* Every run synced after since_us (run.synced_us), with its stamp, when it
 * was synced and its devices' rows, in one snapshot: profdb serve keeps a
 * private store of the catalogue's rows with it.  A non-zero return of the
 * callback stops and is returned. */
struct fleet_rows_cb {
	int (*run)(void *ctx, struct fleet_run *r, const char *stamp, int64_t synced_us,
	           struct store_device_info *devs, int ndevs);
};
int fleet_each_run_rows(struct fleet *f, int64_t since_us, const struct fleet_rows_cb *cb, void *ctx);
/* The rows of such a run into dst, in the caller's batch, as run want_id
 * (0: the next free id); devices take the next free ids. */
int fleet_copy_rows(struct store *dst, struct fleet_run *r, int64_t want_id, struct store_device_info *devs,
                    int ndevs, int64_t *local_id);

#endif
