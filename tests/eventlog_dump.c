/*
 * eventlog_dump.c - what the eventlog decoder (profile/eventlog/ghc_eventlog.h) and
 * its views (profile/eventlog/eventlog_summary.h) make of a file, for
 * test_eventlog_peers.sh to put beside ghc-events and the run's .hp:
 *
 *   eventlog_dump counts FILE   "events N" (block markers aside, as
 *                               ghc-events counts), "type T N" per type,
 *                               blocks, whole prefix, ended, cut bytes
 *   eventlog_dump show FILE     the event types and one line per event in
 *                               time order, as `ghc-events show` prints them
 *   eventlog_dump lines FILE    the lines alone, in the log's order
 *   eventlog_dump gc FILE       the GC figures, "name value" a line
 *   eventlog_dump bands FILE    the heap samples: "key name<TAB>total" per
 *                               band of the chart by hp2ps's rules (largest
 *                               first), then "band name<TAB>total<TAB>peak"
 *                               for every band, in the order first seen
 *   eventlog_dump hpbands F.hp  the same for a .hp file
 *   eventlog_dump svg FILE      the heap samples as the heap view's SVG
 *
 * The file is fed in pieces of 4093 bytes (EVENTLOG_PIECE to change it),
 * so every run crosses units at odd places.
 *
 * May call: profile/eventlog/ghc_eventlog.h, profile/eventlog/eventlog_summary.h,
 * profile/heap/heap_chart.h, libc.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_svg.h"

struct dump {
	const char *mode;
	uint64_t per_type[65536];
	uint64_t events;
	struct el_gc gc;
	struct el_heap heap;
	struct hp_profile hp;
	const struct gel_decoder *g;
	int types_shown;
	struct el_sorted sorted;
};

static int on_event(void *ctx, const struct gel_event *ev)
{
	struct dump *d = ctx;
	d->per_type[ev->type]++;
	if (ev->type != GEL_BLOCK_MARKER)
		d->events++;
	if (!strcmp(d->mode, "show")) {
		/* the table is whole by the first event ("datb" ends the header) */
		if (!d->types_shown++ && (el_show_types(stdout, d->g) != 0 || fputs("\nEvents:\n", stdout) < 0))
			return 1;
		return el_sorted_add(&d->sorted, ev) != 0;
	}
	if (!strcmp(d->mode, "lines")) /* in the log's order */
		return el_show_event(stdout, ev) < 0;
	if (!strcmp(d->mode, "gc"))
		return el_gc_add(&d->gc, ev) != 0;
	if (!strcmp(d->mode, "bands") || !strcmp(d->mode, "svg"))
		return el_heap_add(&d->heap, ev) != 0;
	return 0;
}

static int print_bands(const struct hp_profile *hp)
{
	struct hp_chart_opts o;
	struct hp_chart c;
	hp_chart_defaults(&o);
	if (hp_chart_make(hp, &o, &c) != 0)
		return -1;
	printf("samples %zu\n", hp->nsamples);
	for (size_t i = c.nbands; i-- > 0;)
		printf("key %s\t%" PRIu64 "\n", c.bands[i].name, c.bands[i].total);
	hp_chart_free(&c);
	for (size_t i = 0; i < hp->nbands; i++)
		printf("band %s\t%" PRIu64 "\t%" PRIu64 "\n", hp->bands[i].name, hp->bands[i].total, hp->bands[i].peak);
	return 0;
}

/* The chart the heap view draws for a .hp, by hp2ps's default rules. */
static int write_svg(const struct hp_profile *hp)
{
	struct hp_chart_opts o;
	struct hp_chart c;
	hp_chart_defaults(&o);
	if (hp_chart_make(hp, &o, &c) != 0)
		return -1;
	struct heap_svg_panel p = {hp, &c, "eventlog heap samples", NULL};
	int rc = heap_svg_write(stdout, &p, 1);
	hp_chart_free(&c);
	return rc;
}

static int hp_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return perror(path), 1;
	struct hp_profile hp;
	hp_init(&hp);
	char buf[4096];
	size_t n;
	int rc = 0;
	while (!rc && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		rc = hp_feed(&hp, buf, n);
	fclose(f);
	if (rc || hp_finish(&hp, NULL) != 0 || print_bands(&hp) != 0)
		rc = fprintf(stderr, "%s: %s\n", path, hp_error(&hp)) > 0;
	hp_free(&hp);
	return rc;
}

static void report(struct dump *d, struct gel_decoder *g, const struct gel_tail *t)
{
	if (!strcmp(d->mode, "counts")) {
		printf("events %" PRIu64 "\n", d->events);
		for (size_t i = 0; i < 65536; i++)
			if (d->per_type[i] && i != GEL_BLOCK_MARKER)
				printf("type %zu %" PRIu64 "\n", i, d->per_type[i]);
		printf("blocks %" PRIu64 "\nwhole_prefix %" PRIu64 "\nended %d\ncut %" PRIu64 "\nbackwards %" PRIu64 "\n",
		       g->blocks, t->whole_prefix, t->ended, t->cut_bytes, g->backwards);
	} else if (!strcmp(d->mode, "gc")) {
		if (el_gc_finish(&d->gc) != 0) {
			fprintf(stderr, "out of memory\n");
			return;
		}
		printf("starts %" PRIu64 "\ncollections %" PRIu64 "\n", d->gc.starts, d->gc.collections);
		for (unsigned i = 0; i < EL_GENS; i++)
			if (d->gc.by_gen[i])
				printf("gen%u %" PRIu64 "\n", i, d->gc.by_gen[i]);
		printf("pauses %" PRIu64 "\ntotal_pause_ns %" PRIu64 "\nlongest_pause_ns %" PRIu64 "\n", d->gc.pauses_n,
		       d->gc.total_pause_ns, d->gc.longest_pause_ns);
		printf("p50_ns %" PRIu64 "\np90_ns %" PRIu64 "\np99_ns %" PRIu64 "\n", d->gc.p50_ns, d->gc.p90_ns,
		       d->gc.p99_ns);
		printf("elapsed_ns %" PRIu64 "\ngc_share %.4f\npeak_live %" PRIu64 "\npeak_heap %" PRIu64 "\n",
		       d->gc.elapsed_ns, d->gc.gc_share, d->gc.peak_live, d->gc.peak_heap);
		printf("unmatched %" PRIu64 "\n", d->gc.unmatched);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: eventlog_dump counts|show|lines|gc|bands|svg|hpbands FILE\n"), 2;
	if (!strcmp(argv[1], "hpbands"))
		return hp_file(argv[2]);
	static struct dump d; /* per_type is 512 KiB: not on the stack */
	d.mode = argv[1];
	el_gc_init(&d.gc);
	if (el_sorted_init(&d.sorted, (size_t)1 << 32) != 0)
		return fprintf(stderr, "out of memory\n"), 1;
	hp_init(&d.hp);
	el_heap_init(&d.heap, &d.hp);
	struct gel_decoder g;
	gel_init(&g, on_event, &d);
	FILE *f = fopen(argv[2], "rb");
	if (!f)
		return perror(argv[2]), 1;
	size_t piece = getenv("EVENTLOG_PIECE") ? strtoul(getenv("EVENTLOG_PIECE"), NULL, 10) : 4093;
	char *buf = malloc(piece ? piece : 1);
	size_t n;
	int rc = 0;
	d.g = &g;
	while (!rc && buf && (n = fread(buf, 1, piece ? piece : 1, f)) > 0)
		rc = gel_feed(&g, buf, n);
	fclose(f);
	free(buf);
	struct gel_tail t;
	int fin = gel_finish(&g, &t);
	if (rc != 0 || fin < 0) {
		/* rc 1: a view refused an event (the callback stopped the decoder) */
		fprintf(stderr, "%s: %s\n", argv[2],
		        rc == 1 ? "a view failed (out of memory, or the .hp model refused a line)" : gel_error(&g));
		rc = 1;
	} else {
		report(&d, &g, &t);
		rc = 0;
	}
	if (!rc && !strcmp(d.mode, "show") && (el_sorted_write(&d.sorted, stdout) != 0 || putchar('\n') == EOF)) {
		fprintf(stderr, "%s: the lines could not be written\n", argv[2]);
		rc = 1;
	}
	if (!rc && !strcmp(d.mode, "bands") &&
	    (el_heap_finish(&d.heap, &g, NULL) != 0 || print_bands(&d.hp) != 0)) {
		fprintf(stderr, "%s: heap: %s\n", argv[2], hp_error(&d.hp));
		rc = 1;
	}
	if (!rc && !strcmp(d.mode, "svg") && (el_heap_finish(&d.heap, &g, NULL) != 0 || write_svg(&d.hp) != 0)) {
		fprintf(stderr, "%s: heap: %s\n", argv[2], hp_error(&d.hp));
		rc = 1;
	}
	el_sorted_free(&d.sorted);
	el_heap_free(&d.heap);
	hp_free(&d.hp);
	el_gc_free(&d.gc);
	gel_free(&g);
	return rc;
}
