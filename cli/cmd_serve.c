/*
 * cmd_serve.c - `profdb serve`: the web view of the store (web/web.h).
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>

#include "../fleet/fleet.h"
#include "../web/mirror.h"
#include "../web/web.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb serve [--db PATH] [--listen ADDR:PORT] [--open]\n"
	"  A read-only web view of the store: the run catalogue, each run's report\n"
	"  (live while the guest runs), comparisons, downloads and a JSON API.\n"
	"  --db postgresql://...: the fleet catalogue, every host's runs (numbered\n"
	"            here in the order they are met; each page names its host)\n"
	"  --listen  default 127.0.0.1:8080; another address than loopback lets\n"
	"            anyone who reaches it read every run (there is no login)\n"
	"  --open    open the catalogue in a browser (xdg-open)\n";

int cmd_serve(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"open", no_argument, NULL, 'o'},
	                                     {"db", required_argument, NULL, 'd'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct web_opts o = {db, NULL, 0, NULL, NULL};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = optarg;
			break;
		case 'o':
			o.open_browser = 1;
			break;
		case 'd':
			o.db = cli_db_path(optarg);
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (cli_nargs(argc, 0, usage) != 0)
		return EXIT_USAGE;
	if (!fleet_is_url(o.db))
		return web_serve(&o);
	/* a fleet catalogue: served from a private mirror of it */
	char err[1024], shown[600];
	struct mirror *m;
	fleet_describe_url(o.db, shown, sizeof(shown));
	if (mirror_start(&m, o.db, err, sizeof(err)) != 0) {
		cli_err("%s", err);
		return 1;
	}
	fprintf(stderr, "%s: the fleet catalogue %s: %zu runs\n", cli_prog, shown, mirror_runs(m));
	o.db = mirror_path(m);
	o.mirror = m;
	o.shown = shown;
	int rc = web_serve(&o);
	mirror_stop(m);
	return rc;
}
