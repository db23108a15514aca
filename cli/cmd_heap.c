/*
 * cmd_heap.c - `profdb heap`: a run's heap profile as hp2ps would chart it
 * (profile/heap/heap_chart.h), as an SVG file, a CSV table, JSON, or a summary
 * in the terminal.  Several runs draw on one scale.  A profile still being
 * written or cut by a crash shows every complete sample, and says what
 * was left out.
 *
 * May call: profile/ (heap_chart.h, heap_profile.h, heap_svg.h), view/
 *           through cli_view.h, cli_util.h, cli_json.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/heap/heap_svg.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb heap RUN [RUN...] [-o FILE.svg] [--csv] [--json]\n"
	"                   [--bands N] [--trace PCT] [--sort area|stddev]\n"
	"  The heap profile (.hp) of a run, with hp2ps's rules: bands whose\n"
	"  combined share is under --trace (1%) are dropped, beyond --bands (20;\n"
	"  0: no limit) the smallest are summed into OTHER, the largest is on top\n"
	"  (--sort stddev: the most variable on top, as hp2ps -d).\n"
	"  -o draws an SVG chart (several runs: one panel each, one scale);\n"
	"  --csv prints a table, one row per sample; else a summary.\n";

struct heap_run {
	struct hp_profile hp;
	struct hp_tail tail;
	struct hp_chart chart;
	struct view_profile_read rd;
	char caption[400];
	char note[200];
};

/* Reads and charts one run; 0, or 1 (reported). */
static int load(struct view *v, const char *arg, const struct hp_chart_opts *o, struct heap_run *h)
{
	struct view_run run;
	hp_init(&h->hp); /* (unload frees it whatever the result) */
	if (cli_view_resolve(v, arg, &run) != 0 || cli_read_heap_profile(v, &run, &h->hp, &h->tail, &h->rd) != 0)
		return 1;
	long long id = (long long)h->rd.run.run_id;
	if (h->tail.partial_sample)
		snprintf(h->note, sizeof(h->note), "cut in the sample at %g s: %llu bytes left out",
		         h->tail.partial_time, (unsigned long long)h->tail.dropped_bytes);
	else if (h->tail.dropped_bytes)
		snprintf(h->note, sizeof(h->note), "%llu bytes after the last complete line left out",
		         (unsigned long long)h->tail.dropped_bytes);
	if (h->note[0])
		cli_warn("run %lld: %s", id, h->note);
	if (h->hp.nsamples == 0) {
		cli_err("run %lld: its heap profile has no complete sample yet (%llu bytes)", id,
		        (unsigned long long)h->rd.bytes);
		return 1;
	}
	if (h->hp.nsamples == 1 && !h->note[0]) /* said in the SVG's panel, where no band can be drawn */
		snprintf(h->note, sizeof(h->note), "one sample only (%.3f s): no chart", h->hp.times[0]);
	if (hp_chart_make(&h->hp, o, &h->chart) != 0) {
		cli_err("out of memory charting run %lld", id);
		return 1;
	}
	view_profile_caption(&h->rd.run, h->caption, sizeof(h->caption));
	return 0;
}

static void unload(struct heap_run *h)
{
	hp_chart_free(&h->chart);
	hp_free(&h->hp);
}

/* ---- outputs -------------------------------------------------------------- */

static double total_at(const struct hp_chart *c, size_t k)
{
	double y = 0;
	for (size_t i = 0; i < c->nbands; i++)
		y += c->bands[i].values[k];
	return y;
}

static void print_summary(const struct heap_run *h)
{
	const struct hp_chart *c = &h->chart;
	size_t peak_k = 0;
	for (size_t k = 0; k < c->nsamples; k++)
		if (total_at(c, k) > total_at(c, peak_k))
			peak_k = k;
	char peak[32];
	heap_fmt_bytes(total_at(c, peak_k), peak, sizeof(peak));
	safe_text_print(stdout, h->caption, 0);
	fputs("\n  ", stdout);
	safe_text_print(stdout, h->hp.job ? h->hp.job : "(no JOB)", 0);
	if (h->hp.date) {
		fputs(" \xc2\xb7 ", stdout);
		safe_text_print(stdout, h->hp.date, 0);
	}
	if (c->nsamples == 1)
		printf("\n  1 sample only, at %g s (a chart needs two): %s\n", c->times[0], peak);
	else
		printf("\n  %zu samples over %g s; peak %s at %g s\n", c->nsamples,
		       c->times[c->nsamples - 1] - c->times[0], peak, c->times[peak_k]);
	printf("  %zu bands shown", c->nbands);
	if (c->dropped_trace)
		printf(", %zu trace bands dropped", c->dropped_trace);
	if (c->merged_other)
		printf(", %zu summed into OTHER", c->merged_other);
	double grand = 0;
	for (size_t i = 0; i < c->nbands; i++)
		for (size_t k = 0; k < c->nsamples; k++)
			grand += c->bands[i].values[k];
	printf("\n\n  %-44s %8s %7s  %s\n", "band (top of the chart first)", "peak", "share",
	       "over time");
	for (size_t r = 0; r < c->nbands; r++) {
		const struct hp_chart_band *b = &c->bands[c->nbands - 1 - r];
		double sum = 0;
		for (size_t k = 0; k < c->nsamples; k++)
			sum += b->values[k];
		heap_fmt_bytes((double)b->peak, peak, sizeof(peak));
		fputs("  ", stdout);
		safe_text_print(stdout, b->name, 44);
		printf(" %8s %6.1f%%  ", peak, grand > 0 ? 100 * sum / grand : 0);
		cli_sparkline(c, b, 24);
		fputc('\n', stdout);
	}
}

static json_t *heap_json(const struct heap_run *h)
{
	const struct hp_chart *c = &h->chart;
	json_t *bands = json_array();
	for (size_t r = 0; r < c->nbands; r++) {
		const struct hp_chart_band *b = &c->bands[c->nbands - 1 - r];
		json_array_append_new(bands, json_pack("{s:o, s:b, s:I, s:I}", "name", view_json_guest(b->name),
		                                       "other", !b->band, "peak", (json_int_t)b->peak,
		                                       "total", (json_int_t)b->total));
	}
	return json_pack("{s:o, s:o, s:o, s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:o}",
		"run", view_json_run(&h->rd.run, store_now_us()), "job", view_json_guest(h->hp.job ? h->hp.job : ""),
		"date", view_json_guest(h->hp.date ? h->hp.date : ""), "samples", (json_int_t)c->nsamples,
		"start", c->times[0], "end", c->times[c->nsamples - 1], "max_total", (json_int_t)c->ymax,
		"trace_dropped", (json_int_t)c->dropped_trace, "merged_into_other", (json_int_t)c->merged_other,
		"left_out_bytes", (json_int_t)h->tail.dropped_bytes, "partial_sample", h->tail.partial_sample,
		"bands", bands);
}

/* A CSV field: quoted, controls escaped, and no formula a spreadsheet would run. */
static void csv_field(const char *s)
{
	char *buf = malloc(strlen(s) * 4 + 8);
	if (!buf)
		return;
	safe_text(buf, strlen(s) * 4 + 8, s);
	putchar('"');
	if (strchr("=+-@", buf[0]) && buf[0])
		putchar('\'');
	for (const char *c = buf; *c; c++) {
		if (*c == '"')
			putchar('"');
		putchar(*c);
	}
	putchar('"');
	free(buf);
}

static void print_csv(const struct heap_run *h)
{
	const struct hp_chart *c = &h->chart;
	fputs("time", stdout);
	for (size_t r = 0; r < c->nbands; r++) {
		putchar(',');
		csv_field(c->bands[c->nbands - 1 - r].name);
	}
	putchar('\n');
	for (size_t k = 0; k < c->nsamples; k++) {
		printf("%.6f", c->times[k]);
		for (size_t r = 0; r < c->nbands; r++)
			printf(",%.0f", c->bands[c->nbands - 1 - r].values[k]);
		putchar('\n');
	}
}

struct svg_job {
	struct heap_svg_panel *panels;
	size_t n;
};

static int render(FILE *f, void *ctx)
{
	struct svg_job *j = ctx;
	return heap_svg_write(f, j->panels, j->n);
}

static int write_svg(const char *path, struct heap_run *runs, size_t n)
{
	struct heap_svg_panel *p = calloc(n, sizeof(*p));
	char what[32];
	if (!p) {
		cli_err("out of memory");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (struct heap_svg_panel){&runs[i].hp, &runs[i].chart, runs[i].caption,
		                               runs[i].note[0] ? runs[i].note : NULL};
	struct svg_job job = {p, n};
	snprintf(what, sizeof(what), "%zu run%s", n, n == 1 ? "" : "s");
	int rc = outfile_render(path, render, &job, what);
	free(p);
	return rc;
}

/* What heap is asked: the chart's rules, and one output (-o FILE.svg,
 * --csv, --json; none: a summary). */
struct heap_opts {
	struct hp_chart_opts co;
	const char *svg;
	int csv, json;
};

static int heap_opt(int c, const char *arg, void *ctx)
{
	struct heap_opts *o = ctx;
	uint64_t u;
	char *end;

	switch (c) {
	case 'o':
		o->svg = arg;
		return 0;
	case 'c':
		o->csv = 1;
		return 0;
	case 'b':
		if (view_parse_u64(arg, &u) != 0 || u > 10000) {
			cli_err("--bands takes a whole number from 0 (no limit) to 10000, not '%s'", arg);
			return EXIT_USAGE;
		}
		o->co.max_bands = (size_t)u;
		return 0;
	case 't':
		errno = 0;
		o->co.trace_pct = strtod(arg, &end);
		if (*end || end == arg || errno || !(o->co.trace_pct >= 0 && o->co.trace_pct <= 100)) {
			cli_err("--trace takes a percentage from 0 to 100, not '%s'", arg);
			return EXIT_USAGE;
		}
		return 0;
	case 's':
		if (strcmp(arg, "area") != 0 && strcmp(arg, "stddev") != 0) {
			cli_err("--sort is area or stddev, not '%s'", arg);
			return EXIT_USAGE;
		}
		o->co.sort = strcmp(arg, "area") == 0 ? HP_SORT_AREA : HP_SORT_STDDEV;
		return 0;
	}
	return CLI_NOT_MINE;
}

/* The options, then the runs (at least one; --csv: one): CLI_GO_ON, or
 * the exit status. */
static int parse_options(int argc, char **argv, struct heap_opts *o)
{
	static const struct option opts[] = {
		{"csv", no_argument, NULL, 'c'},          {"json", no_argument, NULL, 'j'},
		{"bands", required_argument, NULL, 'b'},  {"trace", required_argument, NULL, 't'},
		{"sort", required_argument, NULL, 's'},   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "o:h", opts, -1, heap_opt};
	int rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	if (o->csv + o->json + !!o->svg > 1)
		cli_err("-o, --csv and --json are one each: choose one");
	else if (o->csv && argc - optind != 1)
		cli_err("--csv takes one run");
	else if (argc - optind > 0)
		return CLI_GO_ON;
	fputs(usage, stderr);
	return EXIT_USAGE;
}

/* The n loaded runs, as the options ask: 0, or 1 (reported). */
static int print_heap(const struct heap_opts *o, struct heap_run *runs, size_t n)
{
	if (o->svg)
		return write_svg(o->svg, runs, n);
	if (o->csv) {
		print_csv(&runs[0]);
	} else if (o->json) {
		json_t *doc = n > 1 ? json_array() : heap_json(&runs[0]);
		for (size_t i = 0; n > 1 && i < n; i++)
			json_array_append_new(doc, heap_json(&runs[i]));
		return cli_json_print(doc);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (i)
				putchar('\n');
			print_summary(&runs[i]);
		}
	}
	return 0;
}

int cmd_heap(const char *db, int argc, char **argv)
{
	struct heap_opts o = {.svg = NULL};
	struct view v;
	int rc;

	hp_chart_defaults(&o.co);
	if ((rc = parse_options(argc, argv, &o)) != CLI_GO_ON)
		return rc;
	size_t n = (size_t)(argc - optind), loaded = 0;
	struct heap_run *runs = calloc(n, sizeof(*runs));
	if (!runs) {
		cli_err("out of memory");
		return 1;
	}
	if (cli_view_open(&v, db) != 0) {
		free(runs);
		return 1;
	}
	for (rc = 0; loaded < n; loaded++)
		if (load(&v, argv[optind + (int)loaded], &o.co, &runs[loaded]) != 0) {
			unload(&runs[loaded]);
			rc = 1;
			break;
		}
	if (rc == 0)
		rc = print_heap(&o, runs, n);
	for (size_t i = 0; i < loaded; i++)
		unload(&runs[i]);
	free(runs);
	view_close(&v);
	if (fflush(stdout) != 0) {
		cli_err("standard output: %s", strerror(errno));
		rc = 1;
	}
	return rc;
}
