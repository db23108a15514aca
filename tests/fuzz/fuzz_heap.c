/*
 * fuzz_heap.c - libFuzzer target for the .hp parser, hp2ps's band rules
 * and the SVG chart (profile/): any bytes, fed whole and in pieces of a
 * size the input picks, give the same model or the same error; a chart
 * of whatever parsed, with options the input picks, holds every value it
 * shows and no more; the SVG's markup is only ours (every '<' and '>' of a
 * guest's name escaped, so they stay balanced and no <script appears).
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/heap/heap_svg.h"

static int parse(struct hp_profile *p, const uint8_t *d, size_t n, size_t piece, struct hp_tail *t)
{
	hp_init(p);
	for (size_t at = 0; at < n; at += piece)
		if (hp_feed(p, d + at, n - at < piece ? n - at : piece) != 0)
			return -1;
	return hp_finish(p, t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t ctl = data[0], piece = data[1];
	data += 2;
	size -= 2;

	struct hp_profile a, b;
	struct hp_tail ta, tb;
	int ra = parse(&a, data, size, size ? size : 1, &ta);
	int rb = parse(&b, data, size, 1 + piece % 64, &tb);
	assert(ra == rb);
	assert(ra != 0 || strcmp(hp_error(&a), hp_error(&b)) == 0);
	assert(a.nsamples == b.nsamples && a.nbands == b.nbands);
	if (ra == 0)
		assert(ta.dropped_bytes == tb.dropped_bytes && ta.dropped_bytes <= size);
	for (size_t i = 1; i < a.nsamples; i++)
		assert(a.times[i] >= a.times[i - 1]);

	if (ra == 0 && a.nsamples) {
		struct hp_chart_opts o = {.trace_pct = (ctl & 7) * 0.75, .max_bands = (size_t)(ctl >> 4),
		                          .sort = (ctl & 8) ? HP_SORT_STDDEV : HP_SORT_AREA};
		struct hp_chart c;
		assert(hp_chart_make(&a, &o, &c) == 0);
		assert(o.max_bands == 0 || c.nbands <= o.max_bands);
		assert(c.nbands + c.dropped_trace + (c.merged_other ? c.merged_other - 1 : 0) <= a.nbands);
		struct hp_cursor *cur = calloc(a.nbands ? a.nbands : 1, sizeof(*cur));
		for (size_t k = 0; cur && k < c.nsamples; k++) {
			double shown = 0, all = 0;
			for (size_t i = 0; i < c.nbands; i++)
				shown += c.bands[i].values[k];
			for (size_t i = 0; i < a.nbands; i++)
				all += (double)hp_band_at(&a.bands[i], &cur[i], (uint32_t)k);
			assert(shown <= all * (1 + 1e-9) && shown <= c.ymax * (1 + 1e-9));
		}
		free(cur);
		char *svg = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&svg, &len);
		struct heap_svg_panel p = {&a, &c, "run 1 fuzz (crashed)", "a note"};
		assert(f && heap_svg_write(f, &p, 1) == 0);
		/* several panels: a band one colour in all (heap_colours.c, its names' keys) */
		struct heap_svg_panel two[2] = {p, {&a, &c, "run 2", NULL}};
		assert(heap_svg_write(f, two, 2) == 0);
		fclose(f);
		size_t lt = 0, gt = 0;
		for (size_t i = 0; i < len; i++) {
			lt += svg[i] == '<';
			gt += svg[i] == '>';
			assert((unsigned char)svg[i] >= 0x20 || svg[i] == '\n');
		}
		assert(lt == gt && !strstr(svg, "<script"));
		free(svg);
		hp_chart_free(&c);
	}
	hp_free(&a);
	hp_free(&b);
	return 0;
}
