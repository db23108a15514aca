/*
 * trace_timeline_model.c - the thread timeline's model of a MirageOS trace
 * (trace_timeline_model.h): the first walk of the trace models its threads
 * and counts what falls in the window; the second writes arrows, run
 * slices, GC pauses and counters' points to their streams, thinned to the
 * bounds the first counted.  And what a live trace holds so far.
 *
 * May call: trace_render.c (the walk), mprof.c (names), util/grow.h, libc.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_timeline_model.h"
#include "util/grow.h"

static uint64_t hash(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull;
}

static struct tt_thread *find(struct tt_model *m, uint64_t id)
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

static int map_grow(struct tt_model *m)
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
static struct tt_thread *thread_at(struct tt_model *m, uint64_t id, uint64_t ts)
{
	struct tt_thread *t = find(m, id);
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
	if (GROW_FROM(m->th, m->capth, m->nth + 1, 256) != 0) {
		m->oom = 1;
		return NULL;
	}
	t = &m->th[m->nth++];
	*t = (struct tt_thread){.id = id, .start = ts, .last = ts, .parent = TT_NONE, .type = -1};
	size_t i = (size_t)hash(id) & (m->capmap - 1);
	while (m->map[i])
		i = (i + 1) & (m->capmap - 1);
	m->map[i] = (uint32_t)m->nth;
	return t;
}

static void touch(struct tt_thread *t, uint64_t ts)
{
	if (!t)
		return;
	t->nevents++;
	if (ts > t->last)
		t->last = ts;
}

int tt_in_window(const struct tt_model *m, uint64_t a, uint64_t b)
{
	return b >= m->from && a <= m->to;
}

/* The other thread an event names (an arrow's), or TT_NONE. */
uint64_t tt_other_of(const struct mprof_event *e)
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
		return TT_NONE;
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

static struct tt_counter *counter_of(struct tt_model *m, const char *name)
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
	m->c[m->nc] = (struct tt_counter){.name = n};
	return &m->c[m->nc++];
}

static void sep(FILE *f, int *first)
{
	if (!*first)
		fputc(',', f);
	*first = 0;
}

/* ---- the second walk's writers ---------------------------------------------- */

static void gc_flush(struct tt_model *m)
{
	if (!m->g_have)
		return;
	sep(m->fg, &m->first_g);
	fprintf(m->fg, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", m->g_start, m->g_end, m->g_n, m->g_pause);
	m->g_have = 0;
}

static void gc_add(struct tt_model *m, uint64_t start, uint64_t end, uint64_t pause)
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

static void point_flush(struct tt_counter *c)
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
static void point_add(struct tt_model *m, struct tt_counter *c, uint64_t ts)
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

static void slice_end(struct tt_model *m, uint64_t ts)
{
	if (!m->running)
		return;
	m->running = 0;
	if (!tt_in_window(m, m->run_since, ts))
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

/* A counter's update (increase, or counter: set): its figures in the
 * first walk, its points in the second. */
static int counter_event(struct tt_model *m, const struct mprof_event *e)
{
	struct tt_counter *c = counter_of(m, e->text ? e->text : "");
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
		if (tt_in_window(m, e->ts, e->ts))
			c->in_window++;
	} else if (tt_in_window(m, e->ts, e->ts)) {
		point_add(m, c, e->ts);
	}
	return 0;
}

/* The first walk's threads: an event of a thread (its label) naming
 * another (other, or TT_NONE): the other's creation, its end or the
 * thread's, an arrow counted in the window. */
static int thread_event(struct tt_model *m, const struct mprof_event *e, uint64_t other)
{
	struct tt_thread *t = e->has_thread && e->thread != TT_NONE ? thread_at(m, e->thread, e->ts) : NULL;
	touch(t, e->ts);
	if (e->id == MPROF_LABEL && t) {
		m->labels++;
		char *l = strdup(e->text ? e->text : "");
		if (!l)
			return m->oom = 1;
		free(t->label);
		t->label = l;
	}
	if (other != TT_NONE) {
		struct tt_thread *o = thread_at(m, other, e->ts);
		/* the thread pointer may have moved with the table */
		t = e->has_thread && e->thread != TT_NONE ? find(m, e->thread) : NULL;
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
		if (tt_in_window(m, e->ts, e->ts))
			m->arrows++;
	}
	return m->oom;
}

static int walk(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct tt_model *m = ctx;
	(void)pk;
	m->last_ts = e->ts;
	if (m->pass == 1)
		m->events++;
	/* run slices: switch to switch (thread -1: the guest blocked) */
	if (e->id == MPROF_SWITCH) {
		slice_end(m, e->ts);
		if (e->thread != TT_NONE) {
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
		if (!tt_in_window(m, start, e->ts))
			return 0;
		if (m->pass == 1)
			m->gcs++;
		else
			gc_add(m, start, e->ts, e->value);
		return 0;
	}
	if (e->id == MPROF_INCREASE || e->id == MPROF_COUNTER)
		return counter_event(m, e);
	uint64_t other = tt_other_of(e);
	if (m->pass == 1)
		return thread_event(m, e, other);
	if (other != TT_NONE && tt_in_window(m, e->ts, e->ts) && m->k_arrow++ % m->s_arrow == 0) {
		uint64_t from, to;
		arrow_ends(e, &from, &to);
		sep(m->fa, &m->first_a);
		fprintf(m->fa, "[\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", mprof_event_name(e->id), from, to, e->ts);
	}
	return 0;
}

uint64_t tt_thread_end(const struct tt_thread *t)
{
	return t->ended && t->end > t->last ? t->end : t->last;
}

void tt_model_free(struct tt_model *m)
{
	for (size_t i = 0; i < m->nth; i++)
		free(m->th[i].label);
	free(m->th);
	free(m->map);
	for (size_t i = 0; i < m->nc; i++)
		free(m->c[i].name);
}

int tt_model_first(struct tt_model *m, const struct mprof_trace *t)
{
	trace_render_walk(t, walk, m);
	slice_end(m, m->last_ts);
	return m->oom ? -1 : 0;
}

/* The second walk, over [from, to] and thinned to the bounds by what the
 * first counted: arrows, run slices, GC marks and each counter's points
 * written to their streams.  0, or -1 when out of memory. */
int tt_model_second(struct tt_model *m, const struct mprof_trace *t, const struct mprof_stats *st, uint64_t from,
                       uint64_t to, struct tt_streams *b)
{
	m->pass = 2;
	m->bfrom = from > st->first_ts ? from : st->first_ts; /* the columns span what there is */
	m->bto = to < st->last_ts ? to : st->last_ts;
	m->cols = m->w->cols >= 1 && m->w->cols <= TT_MAX_COLS ? m->w->cols : TT_MAX_POINTS;
	m->running = 0;
	m->s_arrow = m->arrows > TT_MAX_ARROWS ? (m->arrows + TT_MAX_ARROWS - 1) / TT_MAX_ARROWS : 1;
	m->s_switch = m->switches > TT_MAX_SWITCHES ? (m->switches + TT_MAX_SWITCHES - 1) / TT_MAX_SWITCHES : 1;
	m->g_bucket_w = m->gcs > TT_MAX_GC ? (to - from) / TT_MAX_GC + 1 : 0;
	m->first_a = m->first_s = m->first_g = 1;
	m->fa = open_memstream(&b->ba, &b->la);
	m->fs = open_memstream(&b->bs, &b->ls);
	m->fg = open_memstream(&b->bg, &b->lg);
	for (size_t i = 0; i < m->nc; i++) {
		m->c[i].value = 0;
		m->c[i].first = 1;
		m->c[i].out = open_memstream(&m->c[i].buf, &m->c[i].len);
		if (!m->c[i].out)
			m->oom = 1;
	}
	if (!m->fa || !m->fs || !m->fg || m->oom)
		return -1;
	trace_render_walk(t, walk, m);
	slice_end(m, m->last_ts);
	gc_flush(m);
	for (size_t i = 0; i < m->nc; i++)
		point_flush(&m->c[i]);
	fflush(m->fa);
	fflush(m->fs);
	fflush(m->fg);
	return 0;
}

void tt_streams_free(struct tt_model *m, struct tt_streams *b)
{
	if (m->fa)
		fclose(m->fa);
	if (m->fs)
		fclose(m->fs);
	if (m->fg)
		fclose(m->fg);
	for (size_t i = 0; i < m->nc; i++) {
		if (m->c[i].out)
			fclose(m->c[i].out);
		free(m->c[i].buf);
	}
	free(b->ba);
	free(b->bs);
	free(b->bg);
}

/* ---- live figures ---------------------------------------------------------------- */

int tt_model_live(const struct mprof_trace *t, struct tt_live *out)
{
	struct tt_model m = {.pass = 1, .from = 0, .to = UINT64_MAX};
	memset(out, 0, sizeof(*out));
	trace_render_walk(t, walk, &m);
	if (m.oom) {
		tt_model_free(&m);
		return -1;
	}
	out->threads = m.nth;
	for (size_t i = 0; i < m.nth; i++)
		out->alive += !m.th[i].ended;
	out->threads_dropped = m.dropped;
	tt_model_free(&m);
	return 0;
}
