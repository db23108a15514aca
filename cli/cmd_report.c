/*
 * cmd_report.c - `profdb report RUN [-o FILE.html]`: one self-contained
 * HTML file with everything known about a run (profile/report.h): facts,
 * the heap chart, the cost-centre tree and the flame graph, for running,
 * complete and crashed runs alike, with what a crash cost said plainly.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/heap_chart.h"
#include "../profile/heap_profile.h"
#include "../profile/report.h"
#include "../profile/time_profile.h"
#include "cli_profile.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb report RUN [-o FILE.html] [--against RUN2]\n"
	"  One HTML file (no network needed to view it) with the run's facts, heap\n"
	"  chart, cost-centre tree and flame graph.  Default: report-RUN.html.\n"
	"  --against RUN2 adds what changed since RUN2: the biggest movers, a\n"
	"  differential flame graph (red grew, blue shrank), RUN2's heap overlaid.\n";

/* The run compared with: each profile it has; 0, or 1 when it has none. */
static int load_against(const char *db, const char *arg, struct time_profile *tp,
                        struct hp_profile *hp, int *have_tp, int *have_hp, char *caption,
                        size_t len)
{
	struct cli_profile_read rd, hrd;
	*have_tp = cli_read_time_profile(db, arg, tp, &rd) == 0;
	if (*have_tp)
		cli_profile_caption(&rd.run, caption, len);
	if (cli_read_heap_profile(db, arg, hp, NULL, &hrd) == 0 && hp->nsamples) {
		*have_hp = 1;
		if (!*have_tp)
			cli_profile_caption(&hrd.run, caption, len);
	}
	if (!*have_tp && !*have_hp) {
		cli_err("--against %s: the run has no readable profile to compare with", arg);
		return 1;
	}
	return 0;
}

static int render(FILE *f, void *ctx)
{
	return report_write(f, ctx);
}

int cmd_report(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
	                                     {"against", required_argument, NULL, 'a'},
	                                     {NULL, 0, NULL, 0}};
	const char *out = NULL, *against = NULL;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'a':
			against = optarg;
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (cli_nargs(argc, 1, usage) != 0)
		return EXIT_USAGE;
	struct store *st;
	int64_t id;
	if (cli_open_store(&st, db, STORE_READ) != 0)
		return 1;
	int bad = cli_resolve_run(st, argv[optind], &id);
	store_close(st);
	if (bad)
		return 1;
	char idbuf[32], def[64];
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	snprintf(def, sizeof(def), "report-%lld.html", (long long)id);
	if (!out)
		out = def;

	struct time_profile tp;
	struct hp_profile hp;
	struct hp_tail tail;
	struct hp_chart chart;
	struct hp_chart_opts co;
	struct cli_profile_read prd, hrd;
	const char *warn[6];
	char wbuf[4][400];
	size_t nw = 0;
	int rc = 1, have_tp, have_hp = 0;

	struct time_profile atp;
	struct hp_profile ahp;
	int a_tp = 0, a_hp = 0;
	tp_init(&atp);
	hp_init(&ahp);
	memset(&chart, 0, sizeof(chart));
	have_tp = cli_read_time_profile(db, idbuf, &tp, &prd) == 0;
	if (have_tp && prd.salvaged)
		snprintf(wbuf[nw], sizeof(wbuf[nw]), "time profile salvaged: %s", prd.note), warn[nw] = wbuf[nw], nw++;
	if (cli_read_heap_profile(db, idbuf, &hp, &tail, &hrd) == 0) {
		hp_chart_defaults(&co);
		have_hp = hp.nsamples > 0 && hp_chart_make(&hp, &co, &chart) == 0;
		if (hrd.salvaged)
			snprintf(wbuf[nw], sizeof(wbuf[nw]), "heap profile salvaged: %s", hrd.note),
				warn[nw] = wbuf[nw], nw++;
		if (tail.dropped_bytes)
			snprintf(wbuf[nw], sizeof(wbuf[nw]),
			         "heap profile cut %s: the last %llu bytes are not in the chart",
			         tail.partial_sample ? "in the middle of a sample" : "after its last sample",
			         (unsigned long long)tail.dropped_bytes),
				warn[nw] = wbuf[nw], nw++;
	}
	if (!have_tp && !have_hp) {
		cli_err("run %s has no readable profile to report", idbuf);
		goto done;
	}
	const struct store_run *r = have_tp ? &prd.run : &hrd.run;
	if (!have_tp)
		warn[nw++] = "no readable time profile (.prof): no cost centres or flame graph";
	if (!have_hp)
		warn[nw++] = "no readable heap profile (.hp): no heap chart";
	if (r->state == STORE_RUN_CRASHED)
		warn[nw++] = "the guest crashed or was destroyed: what it wrote and was told was saved "
		             "is shown; a profile it never flushed is missing";

	char caption[400], started[64], ended[64], dur[64], domid[16], pbytes[32], hbytes[32];
	cli_profile_caption(r, caption, sizeof(caption));
	cli_format_time(r->started_us, started, sizeof(started));
	if (r->ended_us) {
		cli_format_time(r->ended_us, ended, sizeof(ended));
		cli_format_duration(r->ended_us - r->started_us, dur, sizeof(dur));
	} else {
		snprintf(ended, sizeof(ended), "(running)");
		snprintf(dur, sizeof(dur), "-");
	}
	snprintf(domid, sizeof(domid), r->domid >= 0 ? "%d" : "-", r->domid);
	snprintf(pbytes, sizeof(pbytes), "%lld", (long long)r->prof_bytes);
	snprintf(hbytes, sizeof(hbytes), "%lld", (long long)r->hp_bytes);
	const char *facts[] = {
		"guest", r->name, "domain id", domid, "uuid", r->uuid,
		"state", store_run_state_name(r->state), "started", started, "ended", ended,
		"duration", dur, "host", r->host, "backend", r->backend_version,
		"source", r->source, ".prof bytes", pbytes, ".hp bytes", hbytes,
	};
	struct report_input in = {caption, facts, sizeof(facts) / sizeof(facts[0]) / 2, warn, nw,
	                          have_hp ? &hp : NULL, have_hp ? &chart : NULL, have_tp ? &tp : NULL,
	                          NULL, NULL, NULL};
	char against_caption[400];
	if (against) {
		if (load_against(db, against, &atp, &ahp, &a_tp, &a_hp, against_caption,
		                 sizeof(against_caption)) != 0)
			goto done;
		in.against_title = against_caption;
		in.against_tp = a_tp ? &atp : NULL;
		in.against_hp = a_hp ? &ahp : NULL;
	}
	char what[32];
	snprintf(what, sizeof(what), "run %lld", (long long)id);
	rc = outfile_render(out, render, &in, what);
done:
	tp_free(&atp);
	hp_free(&ahp);
	hp_chart_free(&chart);
	hp_free(&hp);
	tp_free(&tp);
	return rc;
}
