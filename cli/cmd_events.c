/*
 * cmd_events.c - `profdb events`: a run's GHC eventlog decoded, its
 * events as `ghc-events show` prints them (the type table, then one line
 * per event in time order), or as JSON; --type keeps the events of some
 * types (their lines alone).
 *
 * May call: view/view_eventlog.h through cli_view.h's errors, cli_util.h,
 * cli_json.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "view/view_eventlog.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb events RUN [--type NAME]... [--json]\n"
	"  The run's GHC eventlog (+RTS -l; its xvdp3), decoded: the event types\n"
	"  its header declares, then one line per event in time order, as\n"
	"  `ghc-events show` prints them.  --type NAME (GC_START, HEAP_SIZE,\n"
	"  USER_MARKER...: GHC's names, any case, or a type's number; repeated\n"
	"  for several) prints only those events' lines.  A log the guest did not\n"
	"  close is read up to its last whole event, with a warning.\n";

#define MAX_TYPES 64

struct events_opts {
	uint16_t types[MAX_TYPES];
	size_t ntypes;
};

static int events_opt(int c, const char *arg, void *ctx)
{
	struct events_opts *o = ctx;
	if (c != 't')
		return CLI_NOT_MINE;
	uint16_t num;
	if (view_eventlog_type_arg(arg, &num) != 0) {
		cli_err("--type takes an event type's name (GC_START, HEAP_SIZE, USER_MARKER...) or "
		        "number, not '%s'",
		        arg);
		return EXIT_USAGE;
	}
	if (o->ntypes == MAX_TYPES) {
		cli_err("at most %d --type options", MAX_TYPES);
		return EXIT_USAGE;
	}
	o->types[o->ntypes++] = num;
	return 0;
}

int cmd_events(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"type", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "h", opts, 1, events_opt};
	struct events_opts o = {.ntypes = 0};
	int json = 0;
	int rc = cli_parse_opts(&spec, argc, argv, &o, &json);
	if (rc != CLI_GO_ON)
		return rc;

	struct view v = {0};
	struct view_err e;
	struct view_events ev;
	struct view_eventlog el;
	int have_el = 0;
	rc = 1;
	cli_view_err(&e);
	if (view_events_init(&ev, o.types, o.ntypes) != 0) {
		cli_err("out of memory");
		return 1;
	}
	struct view_run run;
	if (cli_view_open(&v, db) != 0 || view_resolve(&v, argv[optind], &run, &e) != 0)
		goto out;
	have_el = 1;
	if (view_read_eventlog(&v, &run, view_events_add, &ev, &el, &e) != 0) {
		if (el.d.stopped)
			cli_err("run %lld: its events take more than %zu MiB of text (--type keeps fewer) or "
			        "memory ran out",
			        (long long)el.rd.run.run_id, VIEW_EVENTS_MAX_TEXT >> 20);
		goto out;
	}
	if (view_events_finish(&ev) != 0) {
		cli_err("run %lld: out of memory sorting its events", (long long)el.rd.run.run_id);
		goto out;
	}
	if (json) {
		json_t *doc = view_events_json(&ev, &el, store_now_us());
		if (!doc) {
			cli_err("run %lld: %zu events are more than one JSON document holds (%u): --type keeps "
			        "fewer",
			        (long long)el.rd.run.run_id, ev.n, VIEW_EVENTS_MAX_JSON);
			goto out;
		}
		rc = cli_json_print(doc);
		goto out;
	}
	if (view_events_write(stdout, &ev, &el.d, o.ntypes == 0) != 0 || fflush(stdout) != 0) {
		cli_err("standard output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (have_el)
		view_eventlog_free(&el);
	view_events_free(&ev);
	view_close(&v);
	return rc;
}
