/*
 * cmd_gc.c - `profdb gc`: a run's garbage collections from its GHC
 * eventlog (profile/eventlog/eventlog_gc.c's figures): how many, by generation,
 * the pauses (total, longest, percentiles), GC's share of the run's time,
 * the peak live data and heap size; or as JSON.
 *
 * May call: view/view_eventlog.h, profile/heap/heap_svg.h (bytes as shown),
 * cli_util.h, cli_view.h, cli_json.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "profile/heap/heap_svg.h"
#include "view/view_eventlog.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb gc RUN [--json]\n"
	"  The run's garbage collections, from its GHC eventlog (+RTS -l; its\n"
	"  xvdp3): collections by generation, the stop-the-world pauses (total,\n"
	"  longest, p50/p90/p99), GC's share of the run's time, the peak live data\n"
	"  and heap size.  A log the guest did not close is read up to its last\n"
	"  whole event, with a warning.\n";

static void ms(const char *label, uint64_t ns)
{
	printf("%s%.3f ms", label, (double)ns / 1e6);
}

static void bytes(const char *label, uint64_t b)
{
	char h[32];
	heap_fmt_bytes((double)b, h, sizeof(h));
	printf("  %-16s%s (%" PRIu64 " bytes)\n", label, h, b);
}

static void print_gc(const struct el_gc *g, const struct view_eventlog *el)
{
	char caption[400];
	view_profile_caption(&el->rd.run, caption, sizeof(caption));
	safe_text_print(stdout, caption, 0);
	printf("\n  eventlog %" PRIu64 " bytes%s\n\n", el->rd.bytes,
	       el->whole ? "" : ", not ended (cut at its last whole event)");
	printf("  %-16s%" PRIu64, "collections", g->collections);
	const char *sep = " (";
	for (unsigned i = 0; i < EL_GENS; i++)
		if (g->by_gen[i]) {
			printf("%sgen %u%s: %" PRIu64, sep, i, i == EL_GENS - 1 ? "+" : "", g->by_gen[i]);
			sep = ", ";
		}
	printf("%s\n  %-16s%" PRIu64 "\n", *sep == ',' ? ")" : "", "GC starts", g->starts);
	printf("  %-16s%" PRIu64, "pauses", g->pauses_n);
	if (g->pauses_n) {
		ms(": total ", g->total_pause_ns);
		ms(", longest ", g->longest_pause_ns);
		ms("\n  percentiles     p50 ", g->p50_ns);
		ms(", p90 ", g->p90_ns);
		ms(", p99 ", g->p99_ns);
	}
	printf("\n  %-16s%.1f%% of %.3f ms\n", "GC share", 100 * g->gc_share, (double)g->elapsed_ns / 1e6);
	bytes("peak live data", g->peak_live);
	bytes("peak heap size", g->peak_heap);
	if (g->allocated)
		bytes("allocated", g->allocated);
	if (g->unmatched)
		printf("  %-16s%" PRIu64 " GC starts or ends without the other\n", "unmatched", g->unmatched);
}

int cmd_gc(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "h", opts, 1, NULL};
	int json = 0;
	int rc = cli_parse_opts(&spec, argc, argv, NULL, &json);
	if (rc != CLI_GO_ON)
		return rc;

	struct view v = {0};
	struct view_err e;
	struct view_eventlog el;
	struct el_gc g;
	int have = 0;
	rc = 1;
	cli_view_err(&e);
	struct view_run run;
	if (cli_view_open(&v, db) != 0 || view_resolve(&v, argv[optind], &run, &e) != 0)
		goto out;
	have = 1;
	if (view_read_eventlog_gc(&v, &run, &g, &el, &e) != 0)
		goto out;
	if (json) {
		rc = cli_json_print(view_gc_json(&g, &el, store_now_us()));
		goto out;
	}
	print_gc(&g, &el);
	if (fflush(stdout) != 0) {
		cli_err("standard output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (have) {
		el_gc_free(&g);
		view_eventlog_free(&el);
	}
	view_close(&v);
	return rc;
}
