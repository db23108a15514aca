/*
 * cmd_query.c - `profdb query runs`: the catalogue of runs as a table or
 * JSON ({"runs":[...]}, docs/json.md), filtered by state, name glob, start time, and count.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb query runs [--json] [--state running|complete|crashed] [--name GLOB]\n"
	"                         [--since TIME] [--limit N]\n"
	"  TIME is UTC (2026-11-21, 2026-11-21T08:00) or an age (90s, 30m, 2h, 7d)\n";

struct rows {
	struct store_run *v;
	size_t n, cap;
};

static int collect(void *ctx, const struct store_run *r)
{
	struct rows *rows = ctx;

	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 64;
		struct store_run *v = realloc(rows->v, cap * sizeof(*v));
		if (!v) {
			cli_err("out of memory");
			return 1; /* positive: already reported */
		}
		rows->v = v;
		rows->cap = cap;
	}
	rows->v[rows->n++] = *r;
	return 0;
}

static void print_bytes(int64_t b, int width)
{
	if (b < 0)
		printf("%*s", width, "-");
	else
		printf("%*lld", width, (long long)b);
}

static int64_t run_duration(const struct store_run *r, int64_t now)
{
	return (r->ended_us ? r->ended_us : now) - r->started_us;
}

static void print_table(const struct rows *rows, int64_t now)
{
	int namew = 4;
	char t[32], d[32];

	for (size_t i = 0; i < rows->n; i++) {
		int len = safe_text_width(rows->v[i].name);
		namew = len > namew ? len : namew;
	}
	namew = namew > 32 ? 32 : namew;
	printf("%6s  %-*s  %5s  %-20s  %9s  %-8s  %10s  %10s\n", "RUN", namew, "NAME", "DOMID",
	       "STARTED", "DURATION", "STATE", "PROF", "HP");
	for (size_t i = 0; i < rows->n; i++) {
		const struct store_run *r = &rows->v[i];
		cli_format_time(r->started_us, t, sizeof(t));
		cli_format_duration(run_duration(r, now), d, sizeof(d));
		if (r->backend_gone)
			snprintf(d, sizeof(d), "?"); /* nobody is adding to it: its end is unknown */
		printf("%6lld  ", (long long)r->run_id);
		safe_text_print(stdout, r->name, namew);
		if (r->domid >= 0)
			printf("  %5d", r->domid);
		else
			printf("  %5s", "-");
		printf("  %-20s  %9s  %-8s  ", t, d,
		       r->backend_gone ? "running (backend down)" : store_run_state_name(r->state));
		print_bytes(r->prof_bytes, 10);
		printf("  ");
		print_bytes(r->hp_bytes, 10);
		printf("\n");
	}
}

/* {"runs":[run...]}: docs/json.md */
static int print_json(const struct rows *rows, int64_t now)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rows->n; i++)
		json_array_append_new(a, json_run(&rows->v[i], now));
	return json_print(json_pack("{s:o}", "runs", a));
}

int cmd_query(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},     {"state", required_argument, NULL, 's'},
		{"name", required_argument, NULL, 'n'}, {"since", required_argument, NULL, 't'},
		{"limit", required_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct store_run_filter f = {.state = -1};
	struct rows rows = {0};
	struct store *s;
	int json = 0, c, rc;
	int64_t now = store_now_us();
	uint64_t v;

	if (argc < 2 || strcmp(argv[1], "runs") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			fputs(usage, stdout);
			return 0;
		}
		fprintf(stderr, "%s", usage);
		return EXIT_USAGE;
	}
	argc--, argv++;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 's': {
			enum store_run_state st;
			if (store_run_state_parse(optarg, &st) != 0) {
				cli_err("--state must be running, complete or crashed, not '%s'", optarg);
				return EXIT_USAGE;
			}
			f.state = (int)st;
			break;
		}
		case 'n':
			f.name_glob = optarg;
			break;
		case 't':
			if (cli_parse_time(optarg, now, &f.since_us) != 0) {
				cli_err("--since: '%s' is not a UTC time (2026-11-21T08:00) or an age "
				        "(30m, 2h, 7d)",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			if (cli_parse_u64(optarg, &v) != 0 || v == 0 || v > INT64_MAX) {
				cli_err("--limit must be a positive number, not '%s'", optarg);
				return EXIT_USAGE;
			}
			f.limit = (int64_t)v;
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (optind < argc) {
		cli_err("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	rc = store_list_runs(s, &f, collect, &rows);
	if (rc) {
		if (rc < 0)
			cli_err("%s", store_errmsg(s));
		free(rows.v);
		store_close(s);
		return 1;
	}
	if (json) {
		rc = print_json(&rows, now);
	} else {
		print_table(&rows, now);
		rc = fflush(stdout) == 0 ? 0 : 1;
	}
	free(rows.v);
	store_close(s);
	return rc;
}
