/*
 * speedscope.c - writing speedscope's JSON file format (speedscope.h).
 *
 * Each call-tree node with a value of its own becomes one sample: its
 * stack of frames (root first) with that value as the sample's weight, as
 * speedscope's own importers for folded stacks do.  Strings go through
 * report_json_string, so the file is valid JSON and speedscope shows a
 * guest's control characters and bidi overrides as visible escapes
 * instead of obeying them.
 */
#include "config.h"

#include "speedscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "report.h"
#include "util/safe_text.h"

static int profile(FILE *f, const struct time_profile *p, enum flame_by by, const char *name,
                   uint32_t *path)
{
	uint64_t *self, *total, sum = 0;
	if (flame_values(p, by, &self, &total) != 0)
		return -1;
	/* Time in milliseconds when the tick length is known. */
	double unit = by == FLAME_TIME && p->tick_us > 0 ? p->tick_us / 1000.0 : 1;
	const char *units = by == FLAME_ALLOC ? "bytes" : p->tick_us > 0 ? "milliseconds" : "none";
	for (size_t i = 0; i < p->nnodes; i++)
		sum += self[i];
	fputs("{\"type\":\"sampled\",\"name\":", f);
	report_json_string(f, name);
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.17g,\"samples\":[", units,
	        (double)sum * unit);
	int first = 1;
	for (size_t i = 0; i < p->nnodes; i++) {
		if (!self[i])
			continue;
		size_t d = tp_stack(p, (uint32_t)i, path);
		fputs(first ? "[" : ",[", f);
		first = 0;
		while (d-- > 0)
			fprintf(f, "%u%s", p->nodes[path[d]].cc, d ? "," : "");
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	first = 1;
	for (size_t i = 0; i < p->nnodes; i++)
		if (self[i]) {
			fprintf(f, "%s%.17g", first ? "" : ",", (double)self[i] * unit);
			first = 0;
		}
	fputs("]}", f);
	free(self);
	free(total);
	return 0;
}

int speedscope_write(FILE *f, const struct time_profile *p, const char *name)
{
	uint32_t *path = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*path));
	if (!path)
		return -1;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"profdb (profsvc " PACKAGE_VERSION ")\",\"name\":",
	      f);
	report_json_string(f, name);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < p->nccs; i++) {
		const struct tp_cc *c = &p->ccs[i];
		char *full = malloc(strlen(c->module) + strlen(c->name) + 2);
		if (!full) {
			free(path);
			return -1;
		}
		sprintf(full, "%s%s%s", c->module, c->module[0] ? "." : "", c->name);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		report_json_string(f, full);
		free(full);
		if (c->src[0]) {
			fputs(",\"file\":", f);
			report_json_string(f, c->src);
		}
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	char label[600];
	snprintf(label, sizeof(label), "%s: time", name);
	int rc = profile(f, p, FLAME_TIME, label, path);
	fputc(',', f);
	snprintf(label, sizeof(label), "%s: allocation", name);
	rc |= profile(f, p, FLAME_ALLOC, label, path);
	fputs("]}\n", f);
	free(path);
	return rc || ferror(f) ? -1 : 0;
}
