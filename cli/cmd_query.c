/*
 * cmd_query.c - `profdb query runs`: the catalogue of runs as a table or
 * JSON ({"runs":[...]}, docs/json.md), filtered by state, name glob, start time, and count.
 *
 * May call: store/store.h, view/view_fleet.h (a fleet catalogue's runs),
 *           view/view_json.h, view/view_format.h, view/view_samples.h (a
 *           run's samples counted), util/grow.h, cli_util.h, cli_json.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "view/view_fleet.h"
#include "util/grow.h"
#include "view/view_samples.h"
#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb query runs [--json] [--state running|complete|crashed] [--name GLOB]\n"
	"                         [--since TIME] [--limit N] [--host HOST]\n"
	"  TIME is UTC (2026-11-21, 2026-11-21T08:00) or an age (90s, 30m, 2h, 7d)\n"
	"  --host (a fleet catalogue, --db postgresql://...): a hostname or a host id's prefix\n";

/* What the table shows of a run (a store_run is a kilobyte of fixed
 * fields: 10,000 of them took 11 MB and a tenth of the command's time in
 * page faults). */
struct row {
	int64_t run_id, started_us, prof_bytes, hp_bytes, eventlog_bytes;
	char dur[32];         /* its duration as shown (view_format.h's one rule) */
	int32_t domid;
	enum store_run_state state;
	int backend_gone;
	size_t name;          /* its offset in rows.names */
	size_t holds;         /* what it holds, as shown: its offset in rows.names */
	const char *hostname; /* a fleet's runs: the host's name (rows.hosts) */
};

struct rows {
	struct row *v;
	size_t n, cap;
	char *names; /* every name, each terminated: one allocation, not one a run */
	size_t names_len, names_cap;
	int namew, hostw;
	struct store *s;      /* a store's runs: their stack samples counted */
	uint64_t budget;      /* bytes of samples a listing may still read to count them */
	int eventlogs; /* some run has GHC's eventlog: the table shows its column */
	char **hosts;   /* a fleet's hostnames, each once */
	size_t nhosts;
	/* --json: each run printed as it comes */
	struct cli_json_list *json;
	int64_t now;
	int fleet;
};

/* A name and a run's holds, each terminated, into rows.names: 0, or 1
 * (reported). */
static int keep_text(struct rows *rows, const char *text, size_t *at)
{
	size_t len = strlen(text) + 1;
	if (GROW_FROM(rows->names, rows->names_cap, rows->names_len + len, 4096) != 0) {
		cli_err("out of memory");
		return 1;
	}
	memcpy(rows->names + rows->names_len, text, len);
	*at = rows->names_len;
	rows->names_len += len;
	return 0;
}

static int collect(void *ctx, const struct store_run *run)
{
	struct rows *rows = ctx;
	struct store_run counted;
	const struct store_run *r = run;

	if (rows->s && run->samples_bytes >= 0) { /* how many samples, within the listing's bound */
		counted = *run;
		view_count_samples(rows->s, &counted, &rows->budget);
		r = &counted;
	}
	if (rows->json)
		return cli_json_list_add(rows->json, view_json_run(r, rows->now));
	if (GROW_FROM(rows->v, rows->cap, rows->n + 1, 64) != 0) {
		cli_err("out of memory");
		return 1; /* positive: already reported */
	}
	struct row *nr = &rows->v[rows->n];
	char holds[VIEW_HOLDS_MAX];
	view_format_holds(r, holds, sizeof(holds));
	if (keep_text(rows, r->name, &nr->name) != 0 || keep_text(rows, holds, &nr->holds) != 0)
		return 1;
	nr->run_id = r->run_id;
	nr->started_us = r->started_us;
	nr->prof_bytes = r->prof_bytes;
	nr->hp_bytes = r->hp_bytes;
	nr->eventlog_bytes = r->eventlog_bytes;
	int64_t d = view_run_duration_us(r, rows->now);
	if (d < 0)
		memcpy(nr->dur, "?", 2); /* nobody is adding to it: its end is unknown */
	else
		view_format_duration(d, nr->dur, sizeof(nr->dur));
	nr->domid = r->domid;
	nr->state = r->state;
	nr->backend_gone = r->backend_gone;
	nr->hostname = NULL;
	rows->eventlogs |= r->eventlog_bytes >= 0;
	rows->n++;
	int w = safe_text_width(r->name);
	rows->namew = w > rows->namew ? w : rows->namew;
	return 0;
}

/* A fleet's run: the run's fields, and which host it is from. */
static int collect_fleet(void *ctx, const struct fleet_run *fr)
{
	struct rows *rows = ctx;

	if (rows->json) {
		json_t *o = view_json_run(&fr->run, rows->now);
		json_object_set_new(o, "host_id", json_string(fr->host_id));
		json_object_set_new(o, "hostname", view_json_guest(fr->hostname));
		return cli_json_list_add(rows->json, o);
	}
	int rc = collect(ctx, &fr->run);
	if (rc)
		return rc;
	/* a fleet has few hosts: each name kept once, by its number */
	if (fr->host_no < 0) {
		rows->v[rows->n - 1].hostname = "?"; /* (a host gone since the listing began) */
		return 0;
	}
	size_t no = (size_t)fr->host_no;
	if (no >= rows->nhosts || !rows->hosts[no]) {
		if (no >= rows->nhosts) {
			char **v = realloc(rows->hosts, (no + 1) * sizeof(*v));
			if (!v) {
				cli_err("out of memory");
				return 1;
			}
			rows->hosts = v;
			while (rows->nhosts <= no)
				rows->hosts[rows->nhosts++] = NULL;
		}
		if (!(rows->hosts[no] = strdup(fr->hostname))) {
			cli_err("out of memory");
			return 1;
		}
		int len = safe_text_width(rows->hosts[no]);
		rows->hostw = len > rows->hostw ? len : rows->hostw;
	}
	rows->v[rows->n - 1].hostname = rows->hosts[no];
	return 0;
}

/* A number right-aligned in w columns at p (a listing of 100,000 runs
 * spent most of its time in printf); returns the end. */
static char *put_num(char *p, int64_t v, int w)
{
	char d[24];
	int n = 0, neg = v < 0;
	uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
	do
		d[n++] = (char)('0' + u % 10);
	while ((u /= 10));
	if (neg)
		d[n++] = '-';
	for (int i = n; i < w; i++)
		*p++ = ' ';
	while (n)
		*p++ = d[--n];
	return p;
}

/* s left-aligned in w columns (right-aligned when w < 0). */
static char *put_str(char *p, const char *s, int w)
{
	int n = (int)strlen(s), aw = w < 0 ? -w : w;
	if (w < 0)
		for (int i = n; i < aw; i++)
			*p++ = ' ';
	memcpy(p, s, (size_t)n);
	p += n;
	if (w > 0)
		for (int i = n; i < aw; i++)
			*p++ = ' ';
	return p;
}

static void print_table(const struct rows *rows)
{
	int namew = rows->namew < 4 ? 4 : rows->namew > 32 ? 32 : rows->namew;
	int hostw = rows->hostw < 4 ? 4 : rows->hostw > 24 ? 24 : rows->hostw;
	char t[32];
	/* a row is built whole, then written once */
	char line[SAFE_TEXT_CELL_MAX(24) + SAFE_TEXT_CELL_MAX(32) + VIEW_HOLDS_MAX + 192];
	static const char gone[] = "running (backend down)";
	/* the state column as wide as the widest state shown */
	int statew = 8;
	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i].backend_gone)
			statew = (int)sizeof(gone) - 1;

	if (rows->fleet)
		printf("%-*s  ", hostw, "HOST");
	printf("%6s  %-*s  %5s  %-20s  %9s  %-*s  %10s  %10s%s  HOLDS\n", "RUN", namew, "NAME", "DOMID",
	       "STARTED", "DURATION", statew, "STATE", "PROF", "HP", rows->eventlogs ? "    EVENTLOG" : "");
	for (size_t i = 0; i < rows->n; i++) {
		const struct row *r = &rows->v[i];
		char *p = line;
		view_format_time(r->started_us, t, sizeof(t));
		if (rows->fleet) {
			p = safe_text_cell(p, r->hostname ? r->hostname : "", hostw);
			*p++ = ' ', *p++ = ' ';
		}
		p = put_num(p, r->run_id, 6);
		*p++ = ' ', *p++ = ' ';
		p = safe_text_cell(p, rows->names + r->name, namew); /* guest text: escaped */
		*p++ = ' ', *p++ = ' ';
		p = r->domid >= 0 ? put_num(p, r->domid, 5) : put_str(p, "-", -5);
		*p++ = ' ', *p++ = ' ';
		p = put_str(p, t, 20);
		*p++ = ' ', *p++ = ' ';
		p = put_str(p, r->dur, -9);
		*p++ = ' ', *p++ = ' ';
		p = put_str(p, r->backend_gone ? gone : store_run_state_name(r->state), statew);
		*p++ = ' ', *p++ = ' ';
		p = r->prof_bytes < 0 ? put_str(p, "-", -10) : put_num(p, r->prof_bytes, 10);
		*p++ = ' ', *p++ = ' ';
		p = r->hp_bytes < 0 ? put_str(p, "-", -10) : put_num(p, r->hp_bytes, 10);
		if (rows->eventlogs) {
			*p++ = ' ', *p++ = ' ';
			p = r->eventlog_bytes < 0 ? put_str(p, "-", -10) : put_num(p, r->eventlog_bytes, 10);
		}
		*p++ = ' ', *p++ = ' ';
		p = put_str(p, rows->names + r->holds, 0);
		*p++ = '\n';
		fwrite(line, 1, (size_t)(p - line), stdout);
	}
}

/* What query is asked: the catalogue's filters, --host, --json. */
struct query_opts {
	struct store_run_filter f;
	const char *host;
	int64_t now;
	int json;
};

static int query_opt(int c, const char *arg, void *ctx)
{
	struct query_opts *o = ctx;

	if (c != 'H')
		return cli_filter_opt(c, arg, o->now, &o->f);
	o->host = arg;
	return 0;
}

/* "runs", then its options: CLI_GO_ON, or the exit status. */
static int parse_options(int argc, char **argv, struct query_opts *o)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},     {"state", required_argument, NULL, 's'},
		{"name", required_argument, NULL, 'n'}, {"since", required_argument, NULL, 't'},
		{"limit", required_argument, NULL, 'l'}, {"host", required_argument, NULL, 'H'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "+h", opts, -1, query_opt};
	int rc;

	if (argc < 2 || strcmp(argv[1], "runs") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			fputs(usage, stdout);
			return 0;
		}
		fprintf(stderr, "%s", usage);
		return EXIT_USAGE;
	}
	argc--, argv++;
	if ((rc = cli_parse_opts(&spec, argc, argv, o, &o->json)) != CLI_GO_ON)
		return rc;
	if (optind < argc) {
		cli_err("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

/* The runs listed from a fleet catalogue fl or a store s, as a table or
 * JSON: 0, or nonzero (reported). */
static int list_runs(struct fleet *fl, struct store *s, const struct query_opts *o, struct rows *rows)
{
	/* {"runs":[run...]}: docs/json.md, each run written as it is read */
	struct cli_json_list list;
	int rc;

	rows->now = o->now;
	rows->s = s;
	rows->budget = VIEW_SAMPLES_LIST_BUDGET;
	if (o->json) {
		rows->json = &list;
		cli_json_list_begin(&list, "runs");
	}
	if (fl) {
		struct fleet_filter ff = {.run = o->f, .host = o->host, .brief = !o->json};
		rc = fleet_list_runs(fl, &ff, collect_fleet, rows);
		if (rc < 0)
			cli_err("%s", fleet_errmsg(fl));
	} else {
		rc = store_list_runs(s, &o->f, collect, rows);
		if (rc < 0)
			cli_err("%s", store_errmsg(s));
	}
	if (o->json) {
		/* (a failed listing has printed part of a document: still closed) */
		rc = cli_json_list_end(&list) || rc;
	} else if (!rc) {
		print_table(rows);
		rc = fflush(stdout) == 0 ? 0 : 1;
	}
	return rc;
}

int cmd_query(const char *db, int argc, char **argv)
{
	struct query_opts o = {.f = {.state = -1}, .now = store_now_us()};
	struct rows rows = {0};
	struct view_fleet *fl = NULL;
	struct store *s = NULL;
	int rc = parse_options(argc, argv, &o);

	if (rc != CLI_GO_ON)
		return rc;
	rows.fleet = fleet_is_url(db);
	if (o.host && !rows.fleet) {
		cli_err("--host picks a host of a fleet catalogue (--db postgresql://...); this store is "
		        "one host's");
		return EXIT_USAGE;
	}
	if (rows.fleet ? !(fl = cli_fleet(db)) : cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	rc = list_runs(fl ? view_fleet_reader(fl) : NULL, s, &o, &rows);
	view_fleet_close(fl);
	free(rows.names);
	for (size_t i = 0; i < rows.nhosts; i++)
		free(rows.hosts[i]);
	free(rows.hosts);
	free(rows.v);
	if (s)
		store_close(s);
	return rc ? 1 : 0;
}
