/*
 * trace_timeline.c - the thread timeline's model of a MirageOS trace
 * (trace_timeline.h): two walks of the trace (trace_render_walk), the
 * first modelling the threads and counting what falls in the window, the
 * second writing arrows, run slices, GC pauses and counters, thinned to
 * the bounds.  Guest text (labels, counter names, exceptions) is written
 * by safe_text_json_inert: the exact text, JSON escapes, a byte that is
 * not UTF-8 as \udcNN (docs/json.md), < > & as \u escapes.
 *
 * May call: trace_render.c (the walk, stats), mprof.c (names),
 * util/safe_text (inert JSON).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/trace/trace_timeline.h"
#include "util/safe_text.h"

#define NONE UINT64_MAX

struct thread {
	uint64_t id, start, last, end;
	uint64_t parent;        /* NONE: not created in the trace */
	uint64_t nevents;
	char *label;            /* the latest label, or NULL */
	int ended, created;
	int type;               /* a creates' thread type, -1 none */
};

struct counter {
	char *name;
	int64_t value;
	uint64_t updates, in_window;
	int64_t lo, hi;
	int any;
	/* the second walk: the bucket being filled */
	size_t bucket;
	int have;
	uint64_t bt;
	int64_t bmin, bmax, blast;
	FILE *out;
	char *buf;
	size_t len;
	int first;
};

struct model {
	const struct tt_window *w;
	uint64_t from, to;
	/* threads: an open-addressing map id -> index */
	struct thread *th;
	size_t nth, capth;
	uint32_t *map;          /* index + 1, 0 empty */
	size_t capmap;
	uint64_t dropped;
	int oom;
	/* counts in the window (first walk) */
	uint64_t arrows, switches, gcs, events, labels;
	/* the run slice open */
	int running;
	uint64_t run_thread, run_since;
	/* counters */
	struct counter c[TT_MAX_COUNTERS];
	size_t nc;
	uint64_t counters_more;
	/* the second walk */
	int pass;
	uint64_t bfrom, bto;           /* the window's first and last ns, for the counters' columns */
	unsigned cols;
	uint64_t k_arrow, k_switch;    /* seen so far in the window */
	uint64_t s_arrow, s_switch;    /* strides */
	FILE *fa, *fs, *fg;
	int first_a, first_s, first_g;
	uint64_t g_bucket_w;           /* ns per GC mark when aggregated; 0: every pause */
	uint64_t g_b, g_start, g_end, g_n, g_pause;
	int g_have;
	uint64_t last_ts;
};

static uint64_t hash(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull;
}

static struct thread *find(struct model *m, uint64_t id)
{
	if (!m->capmap)
		return NULL;
	for (size_t i = (size_t)hash(id) & (m->capmap - 1);; i = (i + 1) & (m->capmap - 1)) {
		if (!m->map[i])
			return NULL;
		if (m->th[m->map[i] - 1].id == id)
			return &m->th[m->map[i] - 1];
	}
}

static int map_grow(struct model *m)
{
	size_t cap = m->capmap ? m->capmap * 2 : 1024;
	uint32_t *map = calloc(cap, sizeof(*map));
	if (!map)
		return -1;
	for (size_t k = 0; k < m->nth; k++) {
		size_t i = (size_t)hash(m->th[k].id) & (cap - 1);
		while (map[i])
			i = (i + 1) & (cap - 1);
		map[i] = (uint32_t)(k + 1);
	}
	free(m->map);
	m->map = map;
	m->capmap = cap;
	return 0;
}

/* The thread id, made when first seen at ts; NULL past the bound. */
static struct thread *thread_at(struct model *m, uint64_t id, uint64_t ts)
{
	struct thread *t = find(m, id);
	if (t || m->oom)
		return t;
	if (m->nth >= TT_TRACKED_THREADS) {
		m->dropped++;
		return NULL;
	}
	if ((m->nth + 1) * 2 > m->capmap && map_grow(m) != 0) {
		m->oom = 1;
		return NULL;
	}
	if (m->nth == m->capth) {
		size_t cap = m->capth ? m->capth * 2 : 256;
		struct thread *th = realloc(m->th, cap * sizeof(*th));
		if (!th) {
			m->oom = 1;
			return NULL;
		}
		m->th = th;
		m->capth = cap;
	}
	t = &m->th[m->nth++];
	*t = (struct thread){.id = id, .start = ts, .last = ts, .parent = NONE, .type = -1};
	size_t i = (size_t)hash(id) & (m->capmap - 1);
	while (m->map[i])
		i = (i + 1) & (m->capmap - 1);
	m->map[i] = (uint32_t)m->nth;
	return t;
}

static void touch(struct thread *t, uint64_t ts)
{
	if (!t)
		return;
	t->nevents++;
	if (ts > t->last)
		t->last = ts;
}

static int in_window(const struct model *m, uint64_t a, uint64_t b)
{
	return b >= m->from && a <= m->to;
}

/* The other thread an event names (an arrow's), or NONE. */
static uint64_t other_of(const struct mprof_event *e)
{
	switch (e->id) {
	case MPROF_CREATES:
	case MPROF_READ:
	case MPROF_SIGNAL:
	case MPROF_TRY_READ:
	case MPROF_FULFILLS:
	case MPROF_FAILS:
	case MPROF_BECOMES:
		return e->value;
	default:
		return NONE;
	}
}

/* An arrow's ends: data flows from a read's source to the reader; a
 * thread creates, resolves or becomes the other. */
static void arrow_ends(const struct mprof_event *e, uint64_t *from, uint64_t *to)
{
	int in = e->id == MPROF_READ || e->id == MPROF_TRY_READ || e->id == MPROF_SIGNAL;
	*from = in ? e->value : e->thread;
	*to = in ? e->thread : e->value;
}

static struct counter *counter_of(struct model *m, const char *name)
{
	for (size_t i = 0; i < m->nc; i++)
		if (strcmp(m->c[i].name, name) == 0)
			return &m->c[i];
	if (m->nc == TT_MAX_COUNTERS || m->pass == 2) { /* the second walk makes none */
		m->counters_more += m->pass == 1;
		return NULL;
	}
	char *n = strdup(name);
	if (!n) {
		m->oom = 1;
		return NULL;
	}
	m->c[m->nc] = (struct counter){.name = n};
	return &m->c[m->nc++];
}

static void sep(FILE *f, int *first)
{
	if (!*first)
		fputc(',', f);
	*first = 0;
}

/* ---- the second walk's writers ---------------------------------------------- */

static void gc_flush(struct model *m)
{
	if (!m->g_have)
		return;
	sep(m->fg, &m->first_g);
	fprintf(m->fg, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", m->g_start, m->g_end, m->g_n, m->g_pause);
	m->g_have = 0;
}

static void gc_add(struct model *m, uint64_t start, uint64_t end, uint64_t pause)
{
	uint64_t b = m->g_bucket_w ? (start < m->from ? 0 : (start - m->from) / m->g_bucket_w) : 0;
	if (m->g_have && (!m->g_bucket_w || b != m->g_b))
		gc_flush(m);
	if (!m->g_have) {
		m->g_have = 1;
		m->g_b = b;
		m->g_start = start;
		m->g_end = end;
		m->g_n = 0;
		m->g_pause = 0;
	}
	if (end > m->g_end)
		m->g_end = end;
	m->g_n++;
	m->g_pause += pause;
}

static void point_flush(struct counter *c)
{
	if (!c->have || !c->out)
		return;
	sep(c->out, &c->first);
	fprintf(c->out, "[%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", c->bt, c->bmin, c->bmax, c->blast);
	c->have = 0;
}

/* An update at ts: a point of its own while the window has no more
 * updates than columns, else into its column's min, max and last.  The
 * columns divide the window actually shown (the whole trace: its first
 * to its last event), never [0, 2^64): that width overflowed to 0 and
 * every update of a whole trace fell in one column (1,667 updates of
 * bytes_rx drawn as one point). */
static void point_add(struct model *m, struct counter *c, uint64_t ts)
{
	size_t b = 0;
	if (c->in_window > m->cols && m->bto > m->bfrom) {
		if (ts > m->bto)
			b = m->cols - 1;
		else if (ts > m->bfrom)
			b = (size_t)((double)(ts - m->bfrom) / ((double)(m->bto - m->bfrom) + 1.0) * m->cols);
		if (b >= m->cols)
			b = m->cols - 1;
		if (c->have && b != c->bucket)
			point_flush(c);
	} else {
		point_flush(c); /* every update a point */
	}
	if (!c->have) {
		c->have = 1;
		c->bucket = b;
		c->bmin = c->bmax = c->value;
	}
	c->bt = ts;
	c->blast = c->value;
	if (c->value < c->bmin)
		c->bmin = c->value;
	if (c->value > c->bmax)
		c->bmax = c->value;
}

static void slice_end(struct model *m, uint64_t ts)
{
	if (!m->running)
		return;
	m->running = 0;
	if (!in_window(m, m->run_since, ts))
		return;
	if (m->pass == 1) {
		m->switches++;
		return;
	}
	if (m->k_switch++ % m->s_switch)
		return;
	sep(m->fs, &m->first_s);
	fprintf(m->fs, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", m->run_thread, m->run_since, ts);
}

static int walk(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct model *m = ctx;
	(void)pk;
	m->last_ts = e->ts;
	if (m->pass == 1)
		m->events++;
	/* run slices: switch to switch (thread -1: the guest blocked) */
	if (e->id == MPROF_SWITCH) {
		slice_end(m, e->ts);
		if (e->thread != NONE) {
			m->running = 1;
			m->run_thread = e->thread;
			m->run_since = e->ts;
			if (m->pass == 1)
				touch(thread_at(m, e->thread, e->ts), e->ts);
		}
		return m->oom;
	}
	if (e->id == MPROF_GC) {
		uint64_t start = e->ts >= e->value ? e->ts - e->value : 0;
		if (!in_window(m, start, e->ts))
			return 0;
		if (m->pass == 1)
			m->gcs++;
		else
			gc_add(m, start, e->ts, e->value);
		return 0;
	}
	if (e->id == MPROF_INCREASE || e->id == MPROF_COUNTER) {
		struct counter *c = counter_of(m, e->text ? e->text : "");
		if (!c)
			return m->oom;
		c->value = e->id == MPROF_COUNTER ? (int64_t)e->value : (int64_t)((uint64_t)c->value + e->value);
		if (m->pass == 1) {
			c->updates++;
			if (!c->any || c->value < c->lo)
				c->lo = c->value;
			if (!c->any || c->value > c->hi)
				c->hi = c->value;
			c->any = 1;
			if (in_window(m, e->ts, e->ts))
				c->in_window++;
		} else if (in_window(m, e->ts, e->ts)) {
			point_add(m, c, e->ts);
		}
		return 0;
	}
	uint64_t other = other_of(e);
	if (m->pass == 1) {
		struct thread *t = e->has_thread && e->thread != NONE ? thread_at(m, e->thread, e->ts) : NULL;
		touch(t, e->ts);
		if (e->id == MPROF_LABEL && t) {
			m->labels++;
			char *l = strdup(e->text ? e->text : "");
			if (!l)
				return m->oom = 1;
			free(t->label);
			t->label = l;
		}
		if (other != NONE) {
			struct thread *o = thread_at(m, other, e->ts);
			/* the thread pointer may have moved with the table */
			t = e->has_thread && e->thread != NONE ? find(m, e->thread) : NULL;
			touch(o, e->ts);
			if (o && e->id == MPROF_CREATES && !o->created) {
				o->created = 1;
				o->start = e->ts < o->start ? e->ts : o->start;
				o->parent = e->thread;
				o->type = e->thread_type;
			}
			if (o && (e->id == MPROF_FULFILLS || e->id == MPROF_FAILS)) {
				o->ended = 1;
				o->end = e->ts;
			}
			if (t && e->id == MPROF_BECOMES) {
				t->ended = 1;
				t->end = e->ts;
			}
			if (in_window(m, e->ts, e->ts))
				m->arrows++;
		}
		return m->oom;
	}
	if (other != NONE && in_window(m, e->ts, e->ts) && m->k_arrow++ % m->s_arrow == 0) {
		uint64_t from, to;
		arrow_ends(e, &from, &to);
		sep(m->fa, &m->first_a);
		fprintf(m->fa, "[\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", mprof_event_name(e->id), from, to, e->ts);
	}
	return 0;
}

static uint64_t thread_end(const struct thread *t)
{
	return t->ended && t->end > t->last ? t->end : t->last;
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->nth; i++)
		free(m->th[i].label);
	free(m->th);
	free(m->map);
	for (size_t i = 0; i < m->nc; i++)
		free(m->c[i].name);
}

static void u64_or_null(FILE *f, uint64_t v)
{
	if (v == NONE)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, v);
}

/* ---- threads, grouped by label ---------------------------------------------------- */

struct entry {
	const char *label;   /* NULL: none */
	uint64_t start, id;
	uint32_t idx;        /* into the model's threads */
	uint32_t group;      /* its group, or TT_MAX_GROUPS: the rest */
};

static int by_label(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->label != y->label) {
		if (!x->label || !y->label)
			return x->label ? -1 : 1; /* no label last */
		int c = strcmp(x->label, y->label);
		if (c)
			return c;
	}
	return x->start < y->start ? -1 : x->start > y->start ? 1 : x->id < y->id ? -1 : x->id > y->id;
}

static int same_label(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct group {
	size_t first, n;     /* its entries */
	uint64_t quota, shown;
};

static int by_size(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->n > y->n ? -1 : x->n < y->n ? 1 : x->first < y->first ? -1 : x->first > y->first;
}

static void write_thread(FILE *f, const struct thread *th, int first)
{
	fprintf(f, "%s{\"id\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"ended\":%s,\"parent\":",
	        first ? "" : ",", th->id, th->start, thread_end(th), th->ended ? "true" : "false");
	u64_or_null(f, th->parent);
	fputs(",\"label\":", f);
	if (th->label)
		safe_text_json_inert(f, th->label);
	else
		fputs("null", f);
	fputs(",\"type\":", f);
	const char *tn = th->type >= 0 ? mprof_thread_type_name((unsigned)th->type) : NULL;
	if (tn)
		fprintf(f, "\"%s\"", tn);
	else if (th->type >= 0)
		fprintf(f, "%d", th->type);
	else
		fputs("null", f);
	fprintf(f, ",\"events\":%" PRIu64 "}", th->nevents);
}

/* "threads": the window's threads by label, then start; "groups": the
 * TT_MAX_GROUPS most common labels (null: no label), each with its
 * threads in the window and those shown.  Past TT_MAX_THREADS, each
 * group (the rest of the labels counting as one) keeps TT_GROUP_MIN of
 * its threads or all it has, and the rest of the bound is shared out by
 * size, each group evenly thinned in its start order.  0, or -1 when out
 * of memory. */
static int write_threads(FILE *f, const struct model *m, uint64_t *nin, uint64_t *more_labels, uint64_t *more_n,
                         uint64_t *more_shown)
{
	struct entry *e = malloc((m->nth ? m->nth : 1) * sizeof(*e));
	struct group *g = NULL;
	size_t n = 0, ng = 0;
	if (!e)
		return -1;
	for (size_t i = 0; i < m->nth; i++)
		if (in_window(m, m->th[i].start, thread_end(&m->th[i])))
			e[n++] = (struct entry){m->th[i].label, m->th[i].start, m->th[i].id, (uint32_t)i, TT_MAX_GROUPS};
	qsort(e, n, sizeof(*e), by_label);
	for (size_t i = 0; i < n; i++)
		ng += i == 0 || !same_label(e[i - 1].label, e[i].label);
	if (!(g = calloc(ng ? ng : 1, sizeof(*g)))) {
		free(e);
		return -1;
	}
	ng = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || !same_label(e[i - 1].label, e[i].label))
			g[ng++] = (struct group){.first = i};
		g[ng - 1].n++;
	}
	qsort(g, ng, sizeof(*g), by_size);
	size_t listed = ng < TT_MAX_GROUPS ? ng : TT_MAX_GROUPS;
	/* the rest of the labels: one group, its entries gathered (in label order) */
	struct group rest = {0};
	for (size_t k = 0; k < ng; k++)
		for (size_t i = g[k].first; i < g[k].first + g[k].n; i++)
			e[i].group = k < listed ? (uint32_t)k : TT_MAX_GROUPS;
	for (size_t k = listed; k < ng; k++)
		rest.n += g[k].n;
	/* quotas: everything when it fits, else a floor for each and the rest by size */
	uint64_t base = 0, spare = 0;
	for (size_t k = 0; k <= listed; k++) {
		struct group *x = k < listed ? &g[k] : &rest;
		x->quota = n <= TT_MAX_THREADS ? x->n : x->n < TT_GROUP_MIN ? x->n : TT_GROUP_MIN;
		base += x->quota;
	}
	if (n > TT_MAX_THREADS && base < TT_MAX_THREADS) {
		spare = TT_MAX_THREADS - base;
		for (size_t k = 0; k <= listed; k++) {
			struct group *x = k < listed ? &g[k] : &rest;
			x->quota += (uint64_t)((double)spare * (double)(x->n - x->quota) / (double)(n - base));
		}
	}
	/* written in label order, each group evenly thinned to exactly its
	 * quota: its k-th thread is taken when k * quota / n steps up */
	uint64_t seen[TT_MAX_GROUPS + 1] = {0};
	int first = 1;
	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < n; i++) {
		struct group *x = e[i].group < listed ? &g[e[i].group] : &rest;
		uint64_t k = seen[e[i].group < listed ? e[i].group : TT_MAX_GROUPS]++;
		if (k * x->quota / x->n == (k + 1) * x->quota / x->n)
			continue;
		write_thread(f, &m->th[e[i].idx], first);
		first = 0;
		x->shown++;
	}
	fputs("],\"groups\":[", f);
	for (size_t k = 0; k < listed; k++) {
		fputs(k ? ",{\"label\":" : "{\"label\":", f);
		const char *l = e[g[k].first].label;
		if (l)
			safe_text_json_inert(f, l);
		else
			fputs("null", f);
		fprintf(f, ",\"threads\":%" PRIu64 ",\"shown\":%" PRIu64 "}", (uint64_t)g[k].n, g[k].shown);
	}
	fputc(']', f);
	*nin = n;
	*more_labels = ng - listed;
	*more_n = rest.n;
	*more_shown = rest.shown;
	free(g);
	free(e);
	return 0;
}

int trace_timeline_json(FILE *f, const struct mprof_trace *t, const struct tt_window *w)
{
	struct model m = {.w = w, .pass = 1};
	struct mprof_stats st;
	char *ba = NULL, *bs = NULL, *bg = NULL;
	size_t la = 0, ls = 0, lg = 0;
	int rc = -1;

	trace_render_stats(t, &st);
	m.from = w->whole ? 0 : w->from;
	m.to = w->whole ? UINT64_MAX : w->to;
	trace_render_walk(t, walk, &m);
	slice_end(&m, m.last_ts);
	if (m.oom)
		goto out;
	uint64_t from = w->whole ? st.first_ts : m.from, to = w->whole ? st.last_ts : m.to;
	/* the second walk, thinned to the bounds */
	m.pass = 2;
	m.bfrom = from > st.first_ts ? from : st.first_ts; /* the columns span what there is */
	m.bto = to < st.last_ts ? to : st.last_ts;
	m.cols = w->cols >= 1 && w->cols <= TT_MAX_COLS ? w->cols : TT_MAX_POINTS;
	m.running = 0;
	m.s_arrow = m.arrows > TT_MAX_ARROWS ? (m.arrows + TT_MAX_ARROWS - 1) / TT_MAX_ARROWS : 1;
	m.s_switch = m.switches > TT_MAX_SWITCHES ? (m.switches + TT_MAX_SWITCHES - 1) / TT_MAX_SWITCHES : 1;
	m.g_bucket_w = m.gcs > TT_MAX_GC ? (to - from) / TT_MAX_GC + 1 : 0;
	m.first_a = m.first_s = m.first_g = 1;
	m.fa = open_memstream(&ba, &la);
	m.fs = open_memstream(&bs, &ls);
	m.fg = open_memstream(&bg, &lg);
	for (size_t i = 0; i < m.nc; i++) {
		m.c[i].value = 0;
		m.c[i].first = 1;
		m.c[i].out = open_memstream(&m.c[i].buf, &m.c[i].len);
		if (!m.c[i].out)
			m.oom = 1;
	}
	if (!m.fa || !m.fs || !m.fg || m.oom)
		goto out;
	trace_render_walk(t, walk, &m);
	slice_end(&m, m.last_ts);
	gc_flush(&m);
	for (size_t i = 0; i < m.nc; i++)
		point_flush(&m.c[i]);

	fprintf(f, "{\"run\":%lld,\"guest\":", t->run_id);
	safe_text_json_inert(f, t->name ? t->name : "");
	fprintf(f, ",\"t0\":%" PRIu64 ",\"t1\":%" PRIu64 ",\"from\":%" PRIu64 ",\"to\":%" PRIu64
	           ",\"events\":%" PRIu64 ",\"ended\":%s,\"packets\":{\"kept\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
	        st.first_ts, st.last_ts, from, to, st.events, st.final ? "true" : "false", st.kept, st.lost);
	/* threads in the window, by label, each group thinned on its own */
	uint64_t nin = 0, more_labels = 0, more_n = 0, more_shown = 0;
	if (write_threads(f, &m, &nin, &more_labels, &more_n, &more_shown) != 0)
		goto out;
	fflush(m.fa);
	fflush(m.fs);
	fflush(m.fg);
	fprintf(f, ",\"groups_more\":{\"labels\":%" PRIu64 ",\"threads\":%" PRIu64 ",\"shown\":%" PRIu64 "}",
	        more_labels, more_n, more_shown);
	fprintf(f, ",\"threads_total\":%" PRIu64 ",\"threads_dropped\":%" PRIu64 ",\"arrows\":[", nin, m.dropped);
	fwrite(ba, 1, la, f);
	fprintf(f, "],\"arrows_total\":%" PRIu64 ",\"switches\":[", m.arrows);
	fwrite(bs, 1, ls, f);
	fprintf(f, "],\"switches_total\":%" PRIu64 ",\"gc\":[", m.switches);
	fwrite(bg, 1, lg, f);
	fprintf(f, "],\"gc_total\":%" PRIu64 ",\"counters\":[", m.gcs);
	for (size_t i = 0; i < m.nc; i++) {
		struct counter *c = &m.c[i];
		fflush(c->out);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		safe_text_json_inert(f, c->name);
		fprintf(f, ",\"lo\":%" PRId64 ",\"hi\":%" PRId64 ",\"last\":%" PRId64 ",\"updates\":%" PRIu64
		           ",\"in_window\":%" PRIu64 ",\"points\":[",
		        c->lo, c->hi, c->value, c->updates, c->in_window);
		fwrite(c->buf, 1, c->len, f);
		fputs("]}", f);
	}
	fprintf(f, "],\"counters_more\":%" PRIu64 ",\"labels\":%" PRIu64 "}\n", m.counters_more, m.labels);
	rc = ferror(f) ? -1 : 0;
out:
	if (m.fa)
		fclose(m.fa);
	if (m.fs)
		fclose(m.fs);
	if (m.fg)
		fclose(m.fg);
	for (size_t i = 0; i < m.nc; i++) {
		if (m.c[i].out)
			fclose(m.c[i].out);
		free(m.c[i].buf);
	}
	free(ba);
	free(bs);
	free(bg);
	model_free(&m);
	return rc;
}

/* ---- one thread's events ------------------------------------------------------- */

struct one {
	FILE *f;
	uint64_t id, n, more;
};

static int one_event(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct one *o = ctx;
	(void)pk;
	int mine = e->has_thread && e->thread == o->id && e->id != MPROF_GC;
	uint64_t other = other_of(e);
	if (!mine && other != o->id)
		return 0;
	if (o->n == TT_MAX_THREAD_EVENTS) {
		o->more++;
		return 0;
	}
	fprintf(o->f, "%s{\"ts\":%" PRIu64 ",\"event\":\"%s\",\"thread\":%" PRIu64, o->n++ ? "," : "", e->ts,
	        mprof_event_name(e->id), e->thread);
	if (other != NONE)
		fprintf(o->f, ",\"other\":%" PRIu64, other);
	if (e->id == MPROF_CREATES) {
		const char *tn = mprof_thread_type_name(e->thread_type);
		if (tn)
			fprintf(o->f, ",\"type\":\"%s\"", tn);
	}
	if (e->text && (e->id == MPROF_LABEL || e->id == MPROF_FAILS)) {
		fputs(",\"text\":", o->f);
		safe_text_json_inert(o->f, e->text);
	}
	fputc('}', o->f);
	return 0;
}

int trace_timeline_thread_json(FILE *f, const struct mprof_trace *t, uint64_t thread)
{
	struct one o = {f, thread, 0, 0};
	fprintf(f, "{\"thread\":%" PRIu64 ",\"events\":[", thread);
	if (thread != NONE) /* "no thread" is none: it would match every event without one */
		trace_render_walk(t, one_event, &o);
	fprintf(f, "],\"more\":%" PRIu64 "}\n", o.more);
	return ferror(f) ? -1 : 0;
}

/* ---- live figures ---------------------------------------------------------------- */

int trace_timeline_live(const struct mprof_trace *t, struct tt_live *out)
{
	struct model m = {.pass = 1, .from = 0, .to = UINT64_MAX};
	memset(out, 0, sizeof(*out));
	trace_render_walk(t, walk, &m);
	if (m.oom) {
		model_free(&m);
		return -1;
	}
	out->threads = m.nth;
	for (size_t i = 0; i < m.nth; i++)
		out->alive += !m.th[i].ended;
	out->threads_dropped = m.dropped;
	model_free(&m);
	return 0;
}
