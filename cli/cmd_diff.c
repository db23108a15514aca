/*
 * cmd_diff.c - `profdb diff RUN_A RUN_B`: what changed between two runs
 * (profile/prof/prof_compare.h, profile/heap/heap_compare.h): call stacks
 * matched by their path of functions, time, allocation and entries before
 * and after, the biggest movers first; heap bands' peak and area before
 * and after, matched by name with GHC's generated uniques taken out; with
 * GHC's eventlog, the GC figures (eventlog_summary.h) side by side.  Each
 * part is shown when both runs have what it compares.
 *
 * May call: profile/ (prof_compare.h, heap_compare.h, the time and heap
 *           profiles), view/ through cli_view.h, cli_util.h, cli_json.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/heap/heap_compare.h"
#include "profile/heap/heap_profile.h"
#include "profile/heap/heap_svg.h"
#include "profile/prof/prof_compare.h"
#include "profile/prof/time_profile.h"
#include "view/view_diff.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb diff RUN_A RUN_B [-n N] [--json]\n"
	"  What changed from RUN_A to RUN_B: call stacks (time, allocation and\n"
	"  entries, the biggest movers first), heap bands (peak and area), and\n"
	"  when both runs have GHC's eventlog their GC figures side by side.\n"
	"  -n rows of each (default 20; 0: all).\n";

/* Both profiles of one run, each if it reads (what does not is said); a
 * heap profile counts only with a sample. */
static int load(struct view *v, const char *arg, struct view_diff_side *s)
{
	struct view_err e;
	struct view_run run;
	cli_view_err(&e);
	if (view_resolve(v, arg, &run, &e) != 0)
		return 1;
	int bad = view_diff_side_load(v, &run, s, &e);
	s->have_hp = s->have_hp && s->hp.nsamples;
	return bad || (!s->have_tp && !s->have_hp && !s->have_gc);
}


static void pct(double a, int have_a, double b, int have_b)
{
	if (have_a)
		printf(" %6.1f", a);
	else
		printf(" %6s", "-");
	if (have_b)
		printf(" %6.1f", b);
	else
		printf(" %6s", "-");
	printf(" %+7.1f", (have_b ? b : 0) - (have_a ? a : 0));
}

static void print_stacks(const struct view_diff_side *a, const struct view_diff_side *b, const struct cmp_stack *s,
                         size_t n, size_t all)
{
	printf("call stacks: %zu in all, the biggest movers first\n  %6s %6s %7s %6s %6s %7s %12s "
	       "%12s  %s\n",
	       all, "%time", "%time", "change", "%alloc", "%alloc", "change", "entries", "entries",
	       "stack (before, after)");
	for (size_t i = 0; i < n; i++) {
		char *path = cmp_stack_path(&s[i], &a->tp, &b->tp);
		int ha = s[i].node[0] != TP_NONE, hb = s[i].node[1] != TP_NONE;
		fputs(" ", stdout);
		pct(s[i].time[0], ha, s[i].time[1], hb);
		pct(s[i].alloc[0], ha, s[i].alloc[1], hb);
		printf(" %12llu %12llu  ", (unsigned long long)s[i].entries[0],
		       (unsigned long long)s[i].entries[1]);
		/* the end of the stack is what moved: show its tail */
		const char *tail = path ? path : "";
		size_t len = strlen(tail);
		if (len > 70) {
			const char *semi = strchr(tail + len - 70, ';');
			tail = semi ? semi + 1 : tail + len - 70;
			fputs("...;", stdout);
		}
		safe_text_print(stdout, tail, 0);
		fputc('\n', stdout);
		free(path);
	}
}

/* Two figures of one row, before and after, as [a, b]. */
static json_t *pair(double a, double b)
{
	return json_pack("[f, f]", a, b);
}

static json_t *stacks_json(const struct view_diff_side *a, const struct view_diff_side *b, const struct cmp_stack *s, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		char *path = cmp_stack_path(&s[i], &a->tp, &b->tp);
		json_array_append_new(arr, json_pack("{s:o, s:b, s:b, s:o, s:o, s:[I, I]}",
			"stack", view_json_guest(path ? path : ""), "before", s[i].node[0] != TP_NONE,
			"after", s[i].node[1] != TP_NONE, "time", pair(s[i].time[0], s[i].time[1]),
			"alloc", pair(s[i].alloc[0], s[i].alloc[1]), "entries", (json_int_t)s[i].entries[0],
			(json_int_t)s[i].entries[1]));
		free(path);
	}
	return arr;
}

static void print_bands(const struct cmp_band *c, size_t n, size_t all)
{
	char b0[32], b1[32];
	printf("heap bands: %zu in all, the biggest change of area first\n  %9s %9s %12s %12s  "
	       "%s\n",
	       all, "peak", "peak", "area (B*s)", "area (B*s)", "band (before, after)");
	for (size_t i = 0; i < n; i++) {
		heap_fmt_bytes(c[i].peak[0], b0, sizeof(b0));
		heap_fmt_bytes(c[i].peak[1], b1, sizeof(b1));
		printf("  %9s %9s ", c[i].present[0] ? b0 : "-", c[i].present[1] ? b1 : "-");
		heap_fmt_bytes(c[i].area[0], b0, sizeof(b0));
		heap_fmt_bytes(c[i].area[1], b1, sizeof(b1));
		printf("%12s %12s  ", c[i].present[0] ? b0 : "-", c[i].present[1] ? b1 : "-");
		safe_text_print(stdout, c[i].name, 0);
		fputc('\n', stdout);
	}
}

static json_t *bands_json(const struct cmp_band *c, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:o, s:b, s:b, s:[I, I], s:o}", "band", view_json_guest(c[i].name),
			"before", c[i].present[0], "after", c[i].present[1], "peak", (json_int_t)c[i].peak[0],
			(json_int_t)c[i].peak[1], "area", pair(c[i].area[0], c[i].area[1])));
	return arr;
}

/* What diff is asked: -n (rows of each; 0: all), --json. */
struct diff_opts {
	uint64_t limit;
	int json;
};

static int diff_opt(int c, const char *arg, void *ctx)
{
	struct diff_opts *o = ctx;

	return c == 'n' ? cli_rows_opt(arg, &o->limit) : CLI_NOT_MINE;
}

/* The call stacks of both runs compared, into doc (--json) or printed,
 * when both have them: 0, or 1 (reported). */
static int diff_stacks(const struct view_diff_side *s, const struct diff_opts *o, json_t *doc)
{
	size_t n;
	struct cmp_stack *cs;

	if (!s[0].have_tp || !s[1].have_tp) {
		int k = s[0].tp_damaged ? 0 : 1;
		if (!o->json && (s[0].tp_damaged || s[1].tp_damaged))
			printf("call stacks: not compared (run %lld's .prof fails its checksum: see above; "
			       "'profdb check' lists the damage)\n", (long long)s[k].rd.run.run_id);
		else if (!o->json)
			printf("call stacks: not compared (a run has no readable .prof)\n");
		return 0;
	}
	if (!(cs = cmp_stacks(&s[0].tp, &s[1].tp, &n))) {
		cli_err("out of memory comparing call stacks");
		return 1;
	}
	size_t shown = o->limit && n > o->limit ? (size_t)o->limit : n;
	if (o->json)
		json_object_set_new(doc, "stacks", stacks_json(&s[0], &s[1], cs, shown));
	else
		print_stacks(&s[0], &s[1], cs, shown, n);
	free(cs);
	return 0;
}

/* The heap bands of both runs compared, into doc (--json) or printed,
 * when both have them: 0, or 1 (reported). */
static int diff_bands(const struct view_diff_side *s, const struct diff_opts *o, json_t *doc)
{
	size_t n;
	struct cmp_band *cb;

	if (!s[0].have_hp || !s[1].have_hp) {
		int k = s[0].hp_damaged ? 0 : 1;
		if (!o->json && (s[0].hp_damaged || s[1].hp_damaged))
			printf("\nheap bands: not compared (run %lld's .hp fails its checksum: see above; "
			       "'profdb check' lists the damage)\n", (long long)s[k].rd.run.run_id);
		else if (!o->json)
			printf("\nheap bands: not compared (a run has no readable .hp)\n");
		return 0;
	}
	char warn[600]; /* as the compare page warns */
	if (cmp_kind_warning(warn, sizeof(warn), (long long)s[0].rd.run.run_id, s[0].hp.job,
	                     (long long)s[1].rd.run.run_id, s[1].hp.job))
		cli_warn("%s", warn);
	if (!(cb = cmp_bands(&s[0].hp, &s[1].hp, &n))) {
		cli_err("out of memory comparing heap bands");
		return 1;
	}
	size_t shown = o->limit && n > o->limit ? (size_t)o->limit : n;
	if (o->json) {
		json_object_set_new(doc, "bands", bands_json(cb, shown));
	} else {
		fputc('\n', stdout);
		print_bands(cb, shown, n);
	}
	cmp_bands_free(cb, n);
	return 0;
}

/* The GC figures of both runs side by side, into doc (--json) or printed. */
static void diff_gc(const struct view_diff_side *s, const struct diff_opts *o, json_t *doc)
{
	if (!s[0].have_gc || !s[1].have_gc)
		return;
	const struct el_gc *g[2] = {&s[0].gc, &s[1].gc};
	if (o->json) {
		json_t *side[2];
		for (int i = 0; i < 2; i++) {
			json_t *gens = json_array();
			for (unsigned k = 0; k < EL_GENS; k++)
				json_array_append_new(gens, json_integer((json_int_t)g[i]->by_gen[k]));
			while (json_array_size(gens) > 1 &&
			       json_integer_value(json_array_get(gens, json_array_size(gens) - 1)) == 0)
				json_array_remove(gens, json_array_size(gens) - 1);
			side[i] = json_pack("{s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I}",
			                    "collections", (json_int_t)g[i]->collections, "by_generation", gens, "pauses",
			                    (json_int_t)g[i]->pauses_n, "total_pause_ns", (json_int_t)g[i]->total_pause_ns,
			                    "longest_pause_ns", (json_int_t)g[i]->longest_pause_ns, "p50_ns",
			                    (json_int_t)g[i]->p50_ns, "p90_ns", (json_int_t)g[i]->p90_ns, "p99_ns",
			                    (json_int_t)g[i]->p99_ns, "elapsed_ns", (json_int_t)g[i]->elapsed_ns,
			                    "gc_share", g[i]->gc_share, "peak_live_bytes", (json_int_t)g[i]->peak_live,
			                    "peak_heap_bytes", (json_int_t)g[i]->peak_heap, "allocated_bytes",
			                    (json_int_t)g[i]->allocated);
		}
		json_object_set_new(doc, "gc", json_pack("{s:o, s:o}", "before", side[0], "after", side[1]));
		return;
	}
	printf("GC (GHC's eventlogs)           %14s %14s %14s\n", "before", "after", "change");
#define ROW(label, a, b) printf("%-30s %14.0f %14.0f %+14.0f\n", label, (double)(a), (double)(b), (double)(b) - (double)(a))
#define ROWF(label, a, b) printf("%-30s %14.3f %14.3f %+14.3f\n", label, (a), (b), (b) - (a))
	ROW("collections", g[0]->collections, g[1]->collections);
	unsigned last = 1;
	for (unsigned k = 0; k < EL_GENS; k++)
		if (g[0]->by_gen[k] || g[1]->by_gen[k])
			last = k + 1;
	for (unsigned k = 0; k < last; k++) {
		char label[32];
		snprintf(label, sizeof(label), "  generation %u", k);
		ROW(label, g[0]->by_gen[k], g[1]->by_gen[k]);
	}
	ROW("pauses", g[0]->pauses_n, g[1]->pauses_n);
	ROWF("total pause (ms)", g[0]->total_pause_ns / 1e6, g[1]->total_pause_ns / 1e6);
	ROWF("longest pause (ms)", g[0]->longest_pause_ns / 1e6, g[1]->longest_pause_ns / 1e6);
	ROWF("pause p50 (ms)", g[0]->p50_ns / 1e6, g[1]->p50_ns / 1e6);
	ROWF("pause p90 (ms)", g[0]->p90_ns / 1e6, g[1]->p90_ns / 1e6);
	ROWF("pause p99 (ms)", g[0]->p99_ns / 1e6, g[1]->p99_ns / 1e6);
	ROWF("elapsed (s)", g[0]->elapsed_ns / 1e9, g[1]->elapsed_ns / 1e9);
	ROWF("GC share (%)", g[0]->gc_share * 100, g[1]->gc_share * 100);
	ROW("peak live data (bytes)", g[0]->peak_live, g[1]->peak_live);
	ROW("peak heap size (bytes)", g[0]->peak_heap, g[1]->peak_heap);
	ROW("allocated (bytes)", g[0]->allocated, g[1]->allocated);
#undef ROW
#undef ROWF
	fputc('\n', stdout);
}

/* Two loaded runs compared on the profiles they both have: the exit
 * status. */
static int compare(const struct view_diff_side *s, const struct diff_opts *o)
{
	json_t *doc = NULL;

	if (o->json) {
		doc = json_pack("{s:o, s:o}", "before", view_json_run(&s[0].rd.run, store_now_us()), "after",
		                view_json_run(&s[1].rd.run, store_now_us()));
	} else {
		char cap[400];
		view_profile_caption(&s[0].rd.run, cap, sizeof(cap));
		fputs("before: ", stdout);
		safe_text_print(stdout, cap, 0);
		view_profile_caption(&s[1].rd.run, cap, sizeof(cap));
		fputs("\nafter:  ", stdout);
		safe_text_print(stdout, cap, 0);
		fputs("\n\n", stdout);
	}
	diff_gc(s, o, doc);
	if (diff_stacks(s, o, doc) != 0 || diff_bands(s, o, doc) != 0) {
		json_decref(doc);
		return 1;
	}
	if (o->json)
		return cli_json_print(doc);
	if (fflush(stdout) == 0)
		return 0;
	cli_err("standard output: %s", strerror(errno));
	return 1;
}

int cmd_diff(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "n:h", opts, 2, diff_opt};
	struct diff_opts o = {.limit = 20};
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json);

	if (rc != CLI_GO_ON)
		return rc;
	struct view_diff_side s[2];
	struct view v = {0};
	memset(s, 0, sizeof(s));
	rc = 1;
	if (cli_view_open(&v, db) != 0 || load(&v, argv[optind], &s[0]) != 0 ||
	    load(&v, argv[optind + 1], &s[1]) != 0)
		goto out;
	if (!(s[0].have_tp && s[1].have_tp) && !(s[0].have_hp && s[1].have_hp) && !(s[0].have_gc && s[1].have_gc))
		cli_err("runs %s and %s have no profile in common to compare", argv[optind],
		        argv[optind + 1]);
	else
		rc = compare(s, &o);
	/* what fails its checksum was left out and said: the store is damaged,
	 * which a script must see (as check's exit status) */
	if (rc == 0 && (s[0].tp_damaged || s[0].hp_damaged || s[1].tp_damaged || s[1].hp_damaged)) {
		cli_err("the comparison leaves out what fails its checksum (above): 'profdb check' lists the "
		        "damage, 'profdb export --salvage' writes what is sound");
		rc = 1;
	}
out:
	view_diff_side_free(&s[0]);
	view_diff_side_free(&s[1]);
	view_close(&v);
	return rc;
}
