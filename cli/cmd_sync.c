/*
 * cmd_sync.c - `profdb sync --to URL`: this host's runs into the fleet's
 * PostgreSQL catalogue (fleet/fleet_sync.c), incrementally: what is there
 * as it is here is not sent again.  The store is only read (a reader never
 * delays the backend), so a sync runs beside a live backend.
 *
 * May call: fleet/fleet.h, store/store.h, view/view_format.h, cli_util.h,
 *           cli_json.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fleet/fleet.h"
#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb sync --to URL [--since TIME] [--include-running] [--json] [-q]\n"
	"  URL: postgresql://[USER@]HOST[:PORT]/DB[?...] (the password from ~/.pgpass,\n"
	"       PGPASSFILE or a service file, never on the command line)\n"
	"  TIME is UTC (2026-11-21, 2026-11-21T08:00) or an age (90s, 30m, 2h, 7d)\n";

static void progress(void *ctx, int64_t run_id, int pushed, int64_t bytes)
{
	const int *quiet = ctx;
	if (pushed && !*quiet)
		printf("run %lld pushed (%lld bytes)\n", (long long)run_id, (long long)bytes);
}

/* What sync is asked: the catalogue, what to push, --json, -q. */
struct sync_opts {
	struct fleet_sync_opts o;
	const char *url;
	int json, quiet;
};

static int sync_opt(int c, const char *arg, void *ctx)
{
	struct sync_opts *o = ctx;

	switch (c) {
	case 't':
		o->url = arg;
		return 0;
	case 's':
		return cli_since_opt(arg, store_now_us(), &o->o.since_us);
	case 'r':
		o->o.include_running = 1;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	}
	return CLI_NOT_MINE;
}

static int parse_options(const char *db, int argc, char **argv, struct sync_opts *o)
{
	static const struct option opts[] = {
		{"to", required_argument, NULL, 't'},       {"since", required_argument, NULL, 's'},
		{"include-running", no_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "+hq", opts, 0, sync_opt};
	int rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	if (!o->url) {
		cli_err("sync needs --to postgresql://HOST/DB (the fleet catalogue)");
		return EXIT_USAGE;
	}
	if (!fleet_is_url(o->url)) {
		cli_err("--to must be a postgresql:// URL, not '%s'", o->url);
		return EXIT_USAGE;
	}
	if (fleet_is_url(db)) {
		cli_err("sync reads this host's store: --db names its file, --to the catalogue");
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

/* A device left out of a run pushed: its bytes here fail their checksum. */
static void damaged(void *ctx, int64_t run_id, const char *what)
{
	(void)ctx;
	cli_err("run %lld pushed without a device: %s; 'profdb check' names what is damaged here: repair it or "
	        "delete the run, and the next sync sends it whole",
	        (long long)run_id, what);
}

/* What a sync did (rc: how it ended), as --json or text: 0, or 1. */
static int print_report(const struct sync_opts *o, struct store *s, const struct fleet_sync_report *rep,
                        int rc)
{
	if (o->json) {
		json_t *doc = json_pack("{s:{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:b}}", "sync", "host_id",
		                        store_identity(s), "pushed", (json_int_t)rep->pushed, "current",
		                        (json_int_t)rep->current, "running", (json_int_t)rep->running,
		                        "bytes", (json_int_t)rep->bytes, "summed", (json_int_t)rep->summed,
		                        "damaged", (json_int_t)rep->damaged, "complete", rc == 0);
		return cli_json_print(doc) ? 1 : 0;
	}
	if (o->quiet && !rc)
		return 0;
	printf("%lld run%s pushed (%lld bytes), %lld already there%s", (long long)rep->pushed,
	       rep->pushed == 1 ? "" : "s", (long long)rep->bytes, (long long)rep->current,
	       rep->running ? ", " : "\n");
	if (rep->running)
		printf("%lld running (pushed once ended, or with --include-running)\n",
		       (long long)rep->running);
	if (rep->damaged)
		printf("%lld run%s there without a device whose bytes fail their checksum here (named above)\n",
		       (long long)rep->damaged, rep->damaged == 1 ? "" : "s");
	if (rep->summed)
		printf("%lld chunk%s in the catalogue (synced before its checksums) given %s checksum\n",
		       (long long)rep->summed, rep->summed == 1 ? "" : "s", rep->summed == 1 ? "its" : "their");
	return 0;
}

int cmd_sync(const char *db, int argc, char **argv)
{
	struct sync_opts o = {.url = NULL};
	struct fleet_sync_report rep;
	struct store *s;
	struct fleet *f;
	char err[1024];
	int rc = parse_options(db, argc, argv, &o);

	if (rc != CLI_GO_ON)
		return rc;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_need_files(s, "sync") != 0) {
		store_close(s);
		return 1;
	}
	if (fleet_open(&f, o.url, 1, err, sizeof(err)) != 0) {
		cli_err("%s", err);
		store_close(s);
		return 1;
	}
	o.o.progress = o.json ? NULL : progress;
	o.o.damaged = damaged;
	o.o.ctx = &o.quiet;
	rc = fleet_sync(f, s, &o.o, &rep);
	if (rc != 0)
		cli_err("sync stopped: %s (runs pushed before it are whole; the next sync goes on)",
		        fleet_errmsg(f));
	if (print_report(&o, s, &rep, rc) != 0)
		rc = 1;
	if (rep.damaged)
		rc = 1; /* the catalogue lacks what is damaged here: said above */
	fleet_close(f);
	store_close(s);
	return rc ? 1 : 0;
}
