/*
 * report.h - one self-contained HTML file showing a run: the top cost
 * centres (a flat table: profdb top's rows), its facts, the
 * heap chart (interactive: hover, bands toggled, stacked / line /
 * normalised), the cost-centre tree (collapsible, sortable, searchable)
 * and the flame graph; against a second run, the comparison instead (both
 * runs' facts, a warning when their profiles are of different kinds, a
 * differential flame graph, both heaps in one colour per band, the biggest
 * movers).  No network: the script and style (report.js,
 * report.css, compiled in) and all data are inside the file, and its
 * Content-Security-Policy forbids loading anything else.  Every string
 * from the guest is escaped for where it lands (markup or JSON in a
 * script element).
 */
#ifndef PROFSVC_REPORT_H
#define PROFSVC_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/eventlog_timeline.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/prof/time_profile.h"
#include "profile/trace/trace_render.h"

extern const char report_js[];
extern const char report_css[];
/* The Samples section's script (samples.js, compiled in). */
extern const char samples_js[];

/* One run of a comparison: guest text (name, host) escaped where shown. */
struct report_side {
	int64_t run_id;
	const char *name, *host, *state, *started, *ended;
	const char *profiles; /* ".prof, .hp by closure descriptions (-hd), eventlog" */
};

struct samples_profile;
struct report_input {
	const char *title;          /* the run's caption (guest text) */
	const char *const *facts;   /* label, value, label, value, ... */
	size_t nfacts;              /* pairs */
	const char *const *warnings;
	size_t nwarnings;
	const struct hp_profile *hp;   /* NULL: no heap profile */
	const struct hp_chart *chart;
	const struct time_profile *tp; /* NULL: no time profile */
	const struct mprof_trace *trace; /* NULL: no MirageOS trace */
	/* A served page: its trace timeline's API (/api/runs/N/trace-timeline),
	 * which the page may ask (connect-src 'self'); NULL in a saved report. */
	const char *trace_api;
	/* No heap profile is to come (a MirageOS guest's trace alone): no
	 * heap section, even on a live page. */
	int no_heap;
	/* GHC's eventlog: its timeline and GC figures (both NULL: no
	 * eventlog; timeline_shown alone: a live run's log with no whole
	 * event yet), where a live page fetches the section again, and a
	 * warning said in it. */
	int timeline_shown;
	const struct el_timeline *timeline;
	const struct el_gc *timeline_gc;
	const char *timeline_follow;
	const char *timeline_note;
	/* --against: the run compared with (each may be NULL) */
	const char *against_title;
	const struct hp_profile *against_hp;
	const struct hp_chart *against_chart;
	const struct time_profile *against_tp;
	/* Two runs compared (/compare, profdb report --against): the page is
	 * the comparison, from the top: what was compared (sides[0] the
	 * earlier run, sides[1] the later), the warnings of the comparison
	 * (kind_warning: the two heap profiles are of different kinds), the
	 * differential flame graph, both heaps in one colour per band, the
	 * biggest movers.  NULL: one run's report. */
	const struct report_side *sides;
	const char *kind_warning;
	const char *const *compare_warnings;
	size_t ncompare_warnings;
	/* A served page (profdb serve): links (label, href, ...; hrefs are
	 * the server's own), the Server-Sent Events URL that keeps the page
	 * live (then the heap section is there even before a first sample and
	 * the page may connect back to its origin), and a script of its own. */
	const char *const *links;
	size_t nlinks;
	const char *home;     /* the catalogue's page ("/"), linked from the
	                       * header; NULL (a report file): no link */
	const char *live_events;
	const char *page_script;
	/* A run's stack samples shown as samples (its page's Samples section,
	 * in place of the top cost centres: how they were taken, samples_how,
	 * then a strip of them over time whose brushed range, a vCPU, focus
	 * and ignore choose the samples of a flame graph and a table of
	 * functions drawn by samples.js, and the sandwich of a function
	 * clicked; the view kept in the URL).  NULL: none. */
	const struct samples_profile *samples;
	const char *samples_how;
	/* A running run sampled from dom0: its flame graph is fetched again
	 * every refresh_ms (0: not), and there is no heap section to wait
	 * for. */
	unsigned refresh_ms;
};

/* 0, or -1 when out of memory or writing failed. */
int report_write(FILE *f, const struct report_input *in);
/* The report's data as one JSON document (profdb report --json): title,
 * facts ([label, value] pairs), warnings, the heap chart as the page draws
 * it ("heap", with "against" when compared), the cost-centre tree
 * ("tree", with the totals).  Guest text escaped as in the page. */
int report_write_json(FILE *f, const struct report_input *in);

/* The chart as the page's script reads it: "heap":{times, sample_unit,
 * bands: [{name, colour, peak, values}]}, bottom band first. */
void report_heap_json(FILE *f, const char *sample_unit, const struct hp_chart *c);

/* Sizes and counts as the pages show them (report.js does the same):
 * "8.2 kB", "51 MB", "512 B" (units of 1000, as the heap charts' axes);
 * "1,554,545,712"; a size with its exact count, "8.2 kB (8,176 bytes)". */
void report_fmt_bytes(double v, char *buf, size_t len);
void report_fmt_count(uint64_t v, char *buf, size_t len);
void report_fmt_size(uint64_t bytes, char *buf, size_t len);

#endif
