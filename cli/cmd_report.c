/*
 * cmd_report.c - `profdb report RUN [-o FILE.html]`: one self-contained
 * HTML file with everything known about a run (profile/render/report.h): the top
 * cost centres, facts, the heap chart, the call tree and the flame graph, for running,
 * complete and crashed runs alike, with what a crash cost said plainly.
 *
 * May call: view/view_report.h, cli_util.h, cli_view.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "cli_view.h"
#include "view/view_report.h"

static const char usage[] =
	"usage: profdb report RUN [-o FILE.html | --json] [--against RUN0]\n"
	"  One HTML file (no network needed to view it): the top cost centres (as\n"
	"  profdb top lists them), the run's facts, heap chart, call tree and\n"
	"  flame graph.  Default: report-RUN.html.\n"
	"  --against RUN0 makes it the comparison of RUN0 (the earlier run) and RUN:\n"
	"  both runs' facts and profiles, a warning when the profiles are of\n"
	"  different kinds, the differential flame graph (red grew, blue shrank),\n"
	"  both heaps with one colour per band, the biggest movers.\n"
	"  --json writes the report's data (facts, warnings, heap chart, tree) to\n"
	"  standard output instead.\n";

static int render(FILE *f, void *ctx)
{
	return report_write(f, ctx);
}

static int render_json(FILE *f, void *ctx)
{
	return report_write_json(f, ctx);
}

/* What report is asked: -o, --against, --json. */
struct report_opts {
	const char *out, *against;
	int json;
};

static int report_opt(int c, const char *arg, void *ctx)
{
	struct report_opts *o = ctx;

	if (c == 'o')
		o->out = arg;
	else if (c == 'a')
		o->against = arg;
	else
		return CLI_NOT_MINE;
	return 0;
}

int cmd_report(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
	                                     {"against", required_argument, NULL, 'a'},
	                                     {"json", no_argument, NULL, 'j'},
	                                     {NULL, 0, NULL, 0}};
	static const struct cli_optspec spec = {usage, "o:h", opts, 1, report_opt};
	struct report_opts o = {NULL, NULL, 0};
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json);

	if (rc != CLI_GO_ON)
		return rc;
	if (o.json && o.out) {
		cli_err("--json writes the report's data to standard output; -o writes the page: one or the other");
		return EXIT_USAGE;
	}
	struct view v;
	struct view_run run, against;
	if (cli_view_open(&v, db) != 0)
		return 1;
	if (cli_view_resolve(&v, argv[optind], &run) != 0) {
		view_close(&v);
		return 1;
	}
	int64_t id = run.id;
	char def[64];
	snprintf(def, sizeof(def), "report-%lld.html", (long long)id);
	if (!o.out)
		o.out = o.json ? "-" : def;

	struct view_report rr;
	struct report_input in;
	struct view_err e;
	rc = 1;
	cli_view_err(&e);
	int bad = view_report_load(&rr, &v, &run, 0, &e);
	if (!bad && o.against)
		bad = view_resolve(&v, o.against, &against, &e) != 0 ||
		      view_report_against(&rr, &v, &against, o.against, &e) != 0;
	if (!bad) {
		char what[32];
		view_report_input(&rr, &in);
		snprintf(what, sizeof(what), "run %lld", (long long)id);
		rc = outfile_render(o.out, o.json ? render_json : render, &in, what);
		/* Written with what is sound, the damage said on the page; the exit
		 * status is 1 all the same, as check's: a store losing data is an
		 * error for whoever runs reports unattended, and a warning alone
		 * scrolls by. */
		if (rc == 0 && e.damaged) {
			cli_err("%s: written without what fails its checksum (above; the page says so too): "
			        "'profdb check' lists the damage, 'profdb export --salvage' writes what is sound",
			        strcmp(o.out, "-") ? o.out : "the report");
			rc = 1;
		}
	}
	view_report_free(&rr);
	view_close(&v);
	return rc;
}
