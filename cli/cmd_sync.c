/*
 * cmd_sync.c - `profdb sync --to URL`: this host's runs into the fleet's
 * PostgreSQL catalogue (fleet/fleet_sync.c), incrementally: what is there
 * as it is here is not sent again.  The store is only read (a reader never
 * delays the backend), so a sync runs beside a live backend.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../fleet/fleet.h"
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

int cmd_sync(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"to", required_argument, NULL, 't'},       {"since", required_argument, NULL, 's'},
		{"include-running", no_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct fleet_sync_opts o = {0};
	struct fleet_sync_report rep;
	const char *url = NULL;
	int json = 0, quiet = 0, c;
	char err[1024];

	optind = 0;
	while ((c = getopt_long(argc, argv, "+hq", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			url = optarg;
			break;
		case 's':
			if (view_parse_time(optarg, store_now_us(), &o.since_us) != 0) {
				cli_err("--since: '%s' is not a UTC time (2026-11-21T08:00) or an age "
				        "(30m, 2h, 7d)",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			o.include_running = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (cli_nargs(argc, 0, usage) != 0)
		return EXIT_USAGE;
	if (!url) {
		cli_err("sync needs --to postgresql://HOST/DB (the fleet catalogue)");
		return EXIT_USAGE;
	}
	if (!fleet_is_url(url)) {
		cli_err("--to must be a postgresql:// URL, not '%s'", url);
		return EXIT_USAGE;
	}
	if (fleet_is_url(db)) {
		cli_err("sync reads this host's store: --db names its file, --to the catalogue");
		return EXIT_USAGE;
	}
	struct store *s;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	struct fleet *f;
	if (fleet_open(&f, url, 1, err, sizeof(err)) != 0) {
		cli_err("%s", err);
		store_close(s);
		return 1;
	}
	o.progress = json ? NULL : progress;
	o.ctx = &quiet;
	int rc = fleet_sync(f, s, &o, &rep);
	if (rc != 0)
		cli_err("sync stopped: %s (runs pushed before it are whole; the next sync goes on)",
		        fleet_errmsg(f));
	if (json) {
		json_t *doc = json_pack("{s:{s:s, s:I, s:I, s:I, s:I, s:b}}", "sync", "host_id",
		                        store_identity(s), "pushed", (json_int_t)rep.pushed, "current",
		                        (json_int_t)rep.current, "running", (json_int_t)rep.running,
		                        "bytes", (json_int_t)rep.bytes, "complete", rc == 0);
		if (cli_json_print(doc))
			rc = 1;
	} else if (!quiet || rc) {
		printf("%lld run%s pushed (%lld bytes), %lld already there%s", (long long)rep.pushed,
		       rep.pushed == 1 ? "" : "s", (long long)rep.bytes, (long long)rep.current,
		       rep.running ? ", " : "\n");
		if (rep.running)
			printf("%lld running (pushed once ended, or with --include-running)\n",
			       (long long)rep.running);
	}
	fleet_close(f);
	store_close(s);
	return rc ? 1 : 0;
}
