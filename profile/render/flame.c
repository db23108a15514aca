/*
 * flame.c - flame graphs from the call tree (flame.h).
 *
 * The tree is GHC's: one node per cost-centre stack, parents first.  A
 * node's box is as wide as its value with everything below it, and its
 * children sit on it left to right in GHC's order.  Names are the guest's:
 * folded lines show them as spelled (safe_text_spelled: a backslash is
 * itself, controls are \xNN, and ';', the frame separator, is \x3b), the
 * JSON carries the exact text (safe_text_json_bytes), the SVG goes
 * through markup_text.
 *
 * The SVG is interactive as flamegraph.pl's are (click to zoom, search,
 * labels fitted): flame.js, compiled in, is its last element, in CDATA.
 * Each frame's title is its full name, its value and share, and the cost
 * centre's source location (SRC) where the profile has one.
 *
 * May call: prof_model.c (tp_stack, time_profile.h), prof_compare.c (stack paths),
 * util/safe_text (markup, JSON, folded text).
 */
#include "config.h"

#include "flame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/prof/prof_compare.h"
#include "util/safe_text.h"

int flame_values(const struct time_profile *p, enum flame_by by, uint64_t **self, uint64_t **total)
{
	size_t n = p->nnodes ? p->nnodes : 1;
	uint64_t *s = calloc(n, sizeof(*s)), *t = calloc(n, sizeof(*t));
	if (!s || !t) {
		free(s);
		free(t);
		return -1;
	}
	int exact = p->has_ticks || p->format == TP_JSON;
	double whole = by == FLAME_TIME ? (double)p->total_ticks : (double)p->total_alloc;
	if (!exact && whole <= 0)
		whole = 1000; /* no totals at all: per mille */
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *nd = &p->nodes[i];
		if (exact)
			s[i] = by == FLAME_TIME ? nd->ticks : nd->bytes;
		else {
			double v = (by == FLAME_TIME ? nd->time : nd->alloc) * whole / 100.0;
			s[i] = v > 0 && v < 1.8e19 ? (uint64_t)llround(v) : 0;
		}
		t[i] = s[i];
	}
	for (size_t i = p->nnodes; i-- > 0;) {
		uint32_t up = p->nodes[i].parent;
		if (up != TP_NONE)
			t[up] = t[up] > UINT64_MAX - t[i] ? UINT64_MAX : t[up] + t[i];
	}
	*self = s;
	*total = t;
	return 0;
}

/* "Module.name" for a folded line: as spelled, ';' as \x3b. */
static void frame_name(FILE *f, const struct tp_cc *c)
{
	const char *parts[2] = {c->module, c->name};
	for (int k = c->module[0] ? 0 : 1; k < 2; k++) { /* a sampled C function has no module */
		safe_text_spelled(f, parts[k], ";");
		if (k == 0)
			fputc('.', f);
	}
}

int flame_folded(FILE *f, const struct time_profile *p, enum flame_by by)
{
	uint64_t *self, *total;
	uint32_t *path = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*path));
	if (!path || flame_values(p, by, &self, &total) != 0) {
		free(path);
		return -1;
	}
	for (size_t i = 0; i < p->nnodes && !ferror(f); i++) { /* a reader gone: no more to write */
		if (!self[i])
			continue;
		size_t d = tp_stack(p, (uint32_t)i, path);
		while (d-- > 0) {
			frame_name(f, &p->ccs[p->nodes[path[d]].cc]);
			fputc(d ? ';' : ' ', f);
		}
		fprintf(f, "%llu\n", (unsigned long long)self[i]);
	}
	free(path);
	free(self);
	free(total);
	return ferror(f) ? -1 : 0;
}

int flame_json(FILE *f, const struct time_profile *p, enum flame_by by)
{
	uint64_t *self, *total;
	uint32_t *path = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*path));
	if (!path || flame_values(p, by, &self, &total) != 0) {
		free(path);
		return -1;
	}
	fprintf(f, "{\"by\":\"%s\",\"unit\":\"%s\",\"stacks\":[", by == FLAME_TIME ? "time" : "alloc",
	        by == FLAME_TIME ? "ticks" : "bytes");
	int first = 1;
	for (size_t i = 0; i < p->nnodes; i++) {
		if (!self[i])
			continue;
		size_t d = tp_stack(p, (uint32_t)i, path);
		fputs(first ? "\n{\"frames\":[" : ",\n{\"frames\":[", f);
		first = 0;
		for (size_t k = d; k-- > 0;) {
			const struct tp_cc *c = &p->ccs[p->nodes[path[k]].cc];
			fputs(k + 1 < d ? ",{\"module\":" : "{\"module\":", f);
			safe_text_json_bytes(f, c->module);
			fputs(",\"name\":", f);
			safe_text_json_bytes(f, c->name);
			fputc('}', f);
		}
		fprintf(f, "],\"value\":%llu}", (unsigned long long)self[i]);
	}
	fputs(first ? "]}\n" : "\n]}\n", f);
	free(path);
	free(self);
	free(total);
	return ferror(f) ? -1 : 0;
}

#define FW 1200.0
#define ROW 17.0
#define TOP 48.0
#define MAX_ROWS 300 /* deeper stacks are not drawn (they are in the folded form) */

/* A warm colour from the name, so a function keeps its colour. */
static void colour(const struct tp_cc *c, char out[8])
{
	uint32_t h = 2166136261u;
	for (const char *s = c->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (const char *s = c->module; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	snprintf(out, 8, "#%02x%02x%02x", 205 + (h & 0x1f) * 50 / 31, 80 + ((h >> 5) & 0x7f),
	         40 + ((h >> 12) & 0x3f));
}

/* Each node's share (percent of its profile's total, with everything
 * below it) in `before`, found by its path of frames; NAN where the path
 * is not in `before`. */
static double *before_shares(const struct time_profile *before, const struct time_profile *p,
                             enum flame_by by)
{
	size_t nb = before->nnodes, np = p->nnodes;
	uint64_t *kb = malloc((nb ? nb : 1) * sizeof(*kb)), *kp = malloc((np ? np : 1) * sizeof(*kp));
	uint64_t *self, *total, all = 0;
	double *share = malloc((np ? np : 1) * sizeof(*share));
	size_t cap = 16;
	while (cap < nb * 2 + 2)
		cap *= 2;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = calloc(cap, sizeof(*vals));
	int ok = kb && kp && share && keys && vals && flame_values(before, by, &self, &total) == 0;
	if (ok) {
		cmp_path_keys(before, kb);
		cmp_path_keys(p, kp);
		for (size_t i = 0; i < nb; i++)
			if (before->nodes[i].parent == TP_NONE)
				all += total[i];
		for (size_t i = 0; i < nb; i++) {
			size_t at = (size_t)(kb[i] * 0x9e3779b97f4a7c15ull >> 11) & (cap - 1);
			while (vals[at] && keys[at] != kb[i])
				at = (at + 1) & (cap - 1);
			keys[at] = kb[i];
			vals[at] = (uint32_t)i + 1; /* the first stack with that path */
		}
		for (size_t i = 0; i < np; i++) {
			size_t at = (size_t)(kp[i] * 0x9e3779b97f4a7c15ull >> 11) & (cap - 1);
			while (vals[at] && keys[at] != kp[i])
				at = (at + 1) & (cap - 1);
			share[i] = vals[at] && all ? 100.0 * (double)total[vals[at] - 1] / (double)all : NAN;
		}
		free(self);
		free(total);
	}
	free(kb);
	free(kp);
	free(keys);
	free(vals);
	if (!ok) {
		free(share);
		return NULL;
	}
	return share;
}

/* Red for a stack that grew, blue for one that shrank, by how much
 * (flamegraph.pl's difffolded colours); a new stack is full red. */
static void diff_colour(double delta, double most, char out[8])
{
	double k = isnan(delta) ? 1 : most > 0 ? fmin(1, fabs(delta) / most) : 0;
	int v = (int)(255 - 190 * k);
	if (isnan(delta) || delta > 0)
		snprintf(out, 8, "#ff%02x%02x", v, v);
	else
		snprintf(out, 8, "#%02x%02xff", v, v);
}

int flame_svg(FILE *f, const struct time_profile *p, enum flame_by by, const char *caption)
{
	return flame_svg_diff(f, NULL, p, by, caption, NULL);
}

/* What every frame of one graph is drawn with. */
struct flame_draw {
	const struct time_profile *p;
	const uint64_t *total;
	uint64_t all;      /* the roots' total */
	uint32_t maxd;     /* the deepest row drawn */
	const double *was; /* before_shares, or NULL */
	double most;       /* the largest change in share */
};

/* The roots' total and the deepest row drawn. */
static void flame_extent(struct flame_draw *d)
{
	const struct time_profile *p = d->p;
	d->all = 0;
	d->maxd = 0;
	for (size_t i = 0; i < p->nnodes; i++) {
		if (p->nodes[i].parent == TP_NONE)
			d->all = d->all > UINT64_MAX - d->total[i] ? UINT64_MAX : d->all + d->total[i];
		if (p->nodes[i].depth > d->maxd)
			d->maxd = p->nodes[i].depth;
	}
	if (d->maxd >= MAX_ROWS)
		d->maxd = MAX_ROWS - 1;
}

/* The largest change in share of a stack that was in the run before. */
static double most_change(const struct flame_draw *d)
{
	double most = 0;
	for (size_t i = 0; i < d->p->nnodes; i++)
		if (!isnan(d->was[i]) && d->all)
			most = fmax(most, fabs(100.0 * (double)d->total[i] / (double)d->all - d->was[i]));
	return most;
}

/* A -p profile's stacks carry their share rounded to 0.1%, so a stack
 * under 0.05% has none and is not drawn, and the chart's widths are
 * shares of what the rounded stacks sum to.  The line under the chart
 * says how much that is (-P and -pj carry ticks and bytes: nothing is
 * lost there, and there is no line). */
static void flame_unplaced(FILE *f, const struct flame_draw *d, enum flame_by by)
{
	const struct time_profile *p = d->p;
	if (p->has_ticks || p->format == TP_JSON)
		return;
	double sum = 0;
	for (size_t i = 0; i < p->nnodes; i++)
		sum += by == FLAME_TIME ? p->nodes[i].time : p->nodes[i].alloc;
	const char *what = by == FLAME_TIME ? "time" : "allocation";
	uint64_t whole = by == FLAME_TIME ? p->total_ticks : p->total_alloc;
	double y = TOP + ROW * (d->maxd + 1) + 18, lost = 100.0 - sum;
	fprintf(f, "<text class=\"unplaced\" x=\"10\" y=\"%.0f\" fill=\"#555\">-p profile: GHC "
	           "rounded each call stack's share to 0.1%%; they sum to %.1f%% of the %s",
	        y, sum, what);
	if (lost >= 0.05) {
		fprintf(f, ", so %.1f%% of it", lost);
		if (whole)
			fprintf(f, " (about %.0f of %llu %s)", lost * (double)whole / 100.0,
			        (unsigned long long)whole, by == FLAME_TIME ? "ticks" : "bytes");
		fputs(", in stacks rounded to 0.0%, is not drawn", f);
	} else {
		fputs(", and the widths are shares of that", f);
	}
	fputs("</text>\n", f);
}

/* The SVG's start, its caption and the program's command line, and the
 * controls the script shows (hidden without it: the static chart). */
static void flame_head(FILE *f, const struct flame_draw *d, enum flame_by by, const char *caption,
                       const char *against)
{
	double height = TOP + ROW * (d->maxd + 1) + 30;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flamegraph\" width=\"%.0f\" "
	           "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" data-width=\"%.0f\" "
	           "font-family=\"Verdana, sans-serif\" font-size=\"11\">\n"
	           "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf6\"/>\n"
	           "<text x=\"%.0f\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">",
	        FW, height, FW, height, FW, FW / 2);
	markup_text_cut(f, caption ? caption : "", 100);
	fprintf(f, " \xe2\x80\x94 %s%s", by == FLAME_TIME ? "time" : "allocation",
	        d->was ? " (red grew, blue shrank" : "");
	if (d->was && against && *against) {
		fputs(", against ", f);
		markup_text_cut(f, against, 100);
	}
	fprintf(f, "%s</text>\n<text x=\"%.0f\" y=\"38\" fill=\"#555\" text-anchor=\"middle\">",
	        d->was ? ")" : "", FW / 2);
	markup_text_cut(f, d->p->command ? d->p->command : "", 120);
	fprintf(f, "</text>\n<text class=\"fg-reset\" x=\"10\" y=\"22\" fill=\"#1565c0\" "
	           "cursor=\"pointer\" style=\"display:none\">Reset zoom</text>\n"
	           "<text class=\"fg-search\" x=\"%.0f\" y=\"22\" fill=\"#1565c0\" text-anchor=\"end\" "
	           "cursor=\"pointer\" style=\"display:none\">Search</text>\n"
	           "<text class=\"fg-matched\" x=\"%.0f\" y=\"%.0f\" fill=\"#555\" text-anchor=\"end\" "
	           "style=\"display:none\"></text>\n",
	        FW - 10, FW - 10, TOP + ROW * (d->maxd + 1) + 18);
}

/* How wide a character of the label is, in em, as Verdana or DejaVu Sans
 * (what a browser finds for "Verdana, sans-serif") draws it, rounded up:
 * the static chart's labels are cut by this; the script measures. */
static double char_em(unsigned char c)
{
	if (c >= 0x80)
		return 1.0; /* anything not ASCII: a CJK glyph is 1 em */
	if (strchr("iljI.,:;!|' ", c))
		return 0.36;
	if (strchr("frt()[]/\\-`\"", c))
		return 0.52;
	if (strchr("mwMW%@", c))
		return 1.02;
	if (c >= 'A' && c <= 'Z')
		return 0.8;
	if (strchr("#+<=>^~&", c))
		return 0.86;
	return 0.66;
}

#define FONT_PX 11.0
#define ELLIPSIS_EM 1.0

/* The frame's label cut to w - 6 (three units each side) by char_em,
 * with an ellipsis; the whole label, when cut, in data-full. */
static void flame_label(FILE *f, const char *name, double x, double y, double w)
{
	size_t cap = strlen(name) * 4 + 8;
	char *shown = malloc(cap);
	if (!shown)
		return;
	safe_text(shown, cap, name); /* what a person sees: controls as \xNN */
	double avail = w - 6, used = 0;
	size_t n = strlen(shown), cut = 0;
	int all = 1;
	for (size_t k = 0; k < n;) {
		size_t len = 1;
		while (k + len < n && (shown[k + len] & 0xc0) == 0x80)
			len++;
		used += char_em((unsigned char)shown[k]) * FONT_PX;
		if (used > avail) {
			all = 0;
			break;
		}
		k += len;
		if (used + ELLIPSIS_EM * FONT_PX <= avail)
			cut = k;
	}
	fprintf(f, "<text x=\"%.2f\" y=\"%.1f\"", x + 3, y);
	if (all) {
		fputc('>', f);
		markup_text(f, shown);
	} else {
		fputs(" data-full=\"", f);
		markup_text(f, shown);
		fputs("\">", f);
		if (cut >= 1 && avail >= 14) {
			shown[cut] = '\0';
			markup_text(f, shown);
			fputs("\xe2\x80\xa6", f);
		}
	}
	fputs("</text>", f);
	free(shown);
}

/* One frame: node i at x, w wide.  Its title: the frame's name, its value
 * and share, the cost centre's source location where the profile has one
 * (lines apart, as &#10;, so a frame stays one line of the file). */
static void flame_frame(FILE *f, const struct flame_draw *d, size_t i, double x, double w,
                        enum flame_by by)
{
	const struct tp_node *nd = &d->p->nodes[i];
	/* flame: the root at the bottom */
	double y = TOP + ROW * (d->maxd - nd->depth);
	const struct tp_cc *c = &d->p->ccs[nd->cc];
	char fill[8];
	double pct = d->all ? 100.0 * (double)d->total[i] / (double)d->all : 0;
	if (d->was)
		diff_colour(pct - d->was[i], d->most, fill);
	else
		colour(c, fill);
	fputs("<g class=\"frame\"><title>", f);
	if (c->module[0]) {
		markup_text(f, c->module);
		fputc('.', f);
	}
	markup_text(f, c->name);
	fprintf(f, "&#10;%llu %s, %.2f%%", (unsigned long long)d->total[i],
	        by == FLAME_TIME ? "ticks" : "bytes", pct);
	if (d->was && isnan(d->was[i]))
		fputs(" (new)", f);
	else if (d->was)
		fprintf(f, " (%+.2f%%)", pct - d->was[i]);
	if (c->src && c->src[0]) {
		fputs("&#10;", f);
		markup_text(f, c->src);
	}
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
	           "rx=\"2\"/>",
	        x, y, w, ROW - 1, fill);
	flame_label(f, c->name, x, y + ROW - 5, w);
	fputs("</g>\n", f);
}

/* Every frame wide enough to see, each child right of its elder siblings
 * above its parent. */
static void flame_frames(FILE *f, const struct flame_draw *d, double *x, double *next,
                         enum flame_by by)
{
	const struct time_profile *p = d->p;
	double scale = d->all ? (FW - 20) / (double)d->all : 0, root_x = 10;
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *nd = &p->nodes[i];
		if (nd->parent == TP_NONE) {
			x[i] = root_x;
			root_x += (double)d->total[i] * scale;
		} else {
			x[i] = next[nd->parent];
		}
		next[i] = x[i];
		if (nd->parent != TP_NONE)
			next[nd->parent] += (double)d->total[i] * scale;
		double w = (double)d->total[i] * scale;
		if (w < 0.3 || nd->depth > d->maxd)
			continue;
		flame_frame(f, d, i, x[i], w, by);
	}
}

int flame_svg_diff(FILE *f, const struct time_profile *before, const struct time_profile *p,
                   enum flame_by by, const char *caption, const char *against)
{
	uint64_t *self, *total;
	double *x = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*x));
	double *next = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*next)); /* a node's next free x */
	if (!x || !next || flame_values(p, by, &self, &total) != 0) {
		free(x);
		free(next);
		return -1;
	}
	struct flame_draw d = {.p = p, .total = total};
	flame_extent(&d);
	double *was = NULL;
	if (before) {
		if (!(was = before_shares(before, p, by))) {
			free(x);
			free(next);
			free(self);
			free(total);
			return -1;
		}
		d.was = was;
		d.most = most_change(&d);
	}
	flame_head(f, &d, by, caption, against);
	flame_frames(f, &d, x, next, by);
	flame_unplaced(f, &d, by);
	/* the script last: the frames are there when it runs */
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", flame_js);
	free(was);
	free(x);
	free(next);
	free(self);
	free(total);
	return ferror(f) ? -1 : 0;
}
