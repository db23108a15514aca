/*
 * cmd_serve.c - `profdb serve`: the web view of the store (web/web.h).
 *
 * May call: web/ (web.h, mirror.h), fleet/fleet.h, cli_util.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "web/mirror.h"
#include "web/web.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb serve [--db PATH] [--listen ADDR:PORT] [--allow-host NAME]... [--open]\n"
	"                    [--access-log]\n"
	"  A read-only web view of the store: the run catalogue, each run's report\n"
	"  (live while the guest runs), comparisons, downloads and a JSON API.\n"
	"  --db postgresql://...: the fleet catalogue, every host's runs (numbered\n"
	"            here in the order they are met; each page names its host)\n"
	"  --listen  default 127.0.0.1:8080; another address than loopback lets\n"
	"            anyone who reaches it read every run (there is no login)\n"
	"  --allow-host  a name the server answers to besides localhost, IP addresses\n"
	"            and this machine's name (a request naming another Host gets 421:\n"
	"            a guard against DNS rebinding); up to 16\n"
	"  --open    open the catalogue in a browser (xdg-open)\n"
	"  --access-log  a line per request on stderr: client, method, path, status,\n"
	"            bytes, duration (under systemd: journal entries with HTTP_* fields,\n"
	"            always)\n";

static int serve_opt(int c, const char *arg, void *ctx)
{
	struct web_opts *o = ctx;

	if (c == 'l')
		o->listen = arg;
	else if (c == 'o')
		o->open_browser = 1;
	else if (c == 'L')
		o->access_log = 1;
	else if (c == 'd')
		o->db = cli_db_path(arg);
	else if (c == 'a') {
		if (o->nallow_hosts == WEB_ALLOW_HOSTS_MAX || !*arg || strlen(arg) > 253) {
			cli_err("--allow-host: %s", *arg && strlen(arg) <= 253 ? "at most 16 names" : "give a host name");
			return EXIT_USAGE;
		}
		o->allow_hosts[o->nallow_hosts++] = arg;
	}
	else
		return CLI_NOT_MINE;
	return 0;
}

int cmd_serve(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"open", no_argument, NULL, 'o'},
	                                     {"allow-host", required_argument, NULL, 'a'},
	                                     {"access-log", no_argument, NULL, 'L'},
	                                     {"db", required_argument, NULL, 'd'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	static const struct cli_optspec spec = {usage, "h", opts, 0, serve_opt};
	struct web_opts o = {.db = db};
	int rc = cli_parse_opts(&spec, argc, argv, &o, NULL);

	if (rc != CLI_GO_ON)
		return rc;
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
	long long met;
	if (mirror_loaded(m, &met))
		fprintf(stderr, "%s: the fleet catalogue %s: %lld runs\n", cli_prog, shown, met);
	else
		fprintf(stderr, "%s: the fleet catalogue %s: loading its runs (%lld so far); pages say "
		                "so until it is done\n",
		        cli_prog, shown, met);
	o.db = mirror_path(m);
	o.mirror = m;
	o.shown = shown;
	rc = web_serve(&o);
	mirror_stop(m);
	return rc;
}
