/*
 * eventlog_show.c - one line of text per eventlog event, worded as
 * `ghc-events show` words it (eventlog_summary.h), so the two can be put
 * side by side: "time: cap N: what happened".
 *
 * The program arguments and environment are printed as a Haskell list of
 * strings (show's escapes), the rest as plain text; a type this file has
 * no words for prints "Unknown event type N".  el_sorted keeps the lines
 * and writes them stably sorted by time, which is ghc-events show's order.
 *
 * May call: ghc_eventlog_fields.c (gel_stop_status), util/grow.h, libc.
 */
#include "config.h"

#include "eventlog_summary.h"
#include "util/grow.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *capset_type(uint16_t t)
{
	switch (t) {
	case 1: return "CapsetCustom";
	case 2: return "CapsetOsProcess";
	case 3: return "CapsetClockDomain";
	}
	return "CapsetUnknown";
}

static const char *breakdown(uint32_t b)
{
	static const char *const names[] = {
		"unknown", "cost centre", "module", "closure description", "type description",
		"retainer", "biography", "closure type",
	};
	return b < sizeof(names) / sizeof(names[0]) ? names[b] : "unknown";
}

static void put_bytes(FILE *f, const char *s, size_t n)
{
	fwrite(s, 1, n, f);
}

/* One code point from s[0..n): its value and length (a bad byte is U+FFFD). */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	unsigned need = s[0] >= 0xf0 ? 3 : s[0] >= 0xe0 ? 2 : s[0] >= 0xc0 ? 1 : 0;
	uint32_t c = need == 3 ? s[0] & 7u : need == 2 ? s[0] & 15u : s[0] & 31u;
	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if (!need || need >= n)
		return 0xfffd;
	for (unsigned i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		c = c << 6 | (s[i] & 0x3fu);
	}
	*len = need + 1u;
	return c;
}

/* Haskell's show of a String: its escapes, "\&" where a number or "\SO"
 * would run into what follows. */
static void put_hs_string(FILE *f, const char *str, size_t n)
{
	static const char *const ctrl[32] = {
		"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "a", "b", "t", "n", "v", "f", "r", "SO", "SI",
		"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
	};
	const unsigned char *s = (const unsigned char *)str;
	int numeric = 0, so = 0; /* the last escape was a number, or \SO */
	fputc('"', f);
	for (size_t i = 0, len = 0; i < n; i += len) {
		uint32_t c = utf8_next(s + i, n - i, &len);
		if ((numeric && c >= '0' && c <= '9') || (so && c == 'H'))
			fputs("\\&", f);
		numeric = so = 0;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (int)c);
		else if (c < 32) {
			fprintf(f, "\\%s", ctrl[c]);
			so = c == 14;
		} else if (c == 127)
			fputs("\\DEL", f);
		else if (c < 127)
			fputc((int)c, f);
		else {
			fprintf(f, "\\%" PRIu32, c);
			numeric = 1;
		}
	}
	fputc('"', f);
}

static void put_hs_list(FILE *f, const struct gel_event *ev)
{
	const char *s = ev->all_strs;
	size_t n = ev->all_len;
	fputc('[', f);
	for (int first = 1; n > 0; first = 0) {
		const char *nul = memchr(s, 0, n);
		size_t len = nul ? (size_t)(nul - s) : n;
		if (!first)
			fputc(',', f);
		put_hs_string(f, s, len);
		s += len + (nul != NULL);
		n -= len + (nul != NULL);
	}
	fputc(']', f);
}

static uint64_t pl64(const struct gel_event *ev, size_t at)
{
	uint64_t v = 0;
	for (size_t i = 0; i < 8 && at + i < ev->size; i++)
		v = v << 8 | ev->payload[at + i];
	return v;
}

/* Spark events: read from the payload here (nothing else uses them). */
static int spark_text(FILE *f, const struct gel_event *ev)
{
	switch (ev->type) {
	case 34:
		if (ev->size < 56)
			return 0;
		fprintf(f, "spark stats: %" PRIu64 " created, %" PRIu64 " converted, %" PRIu64 " remaining (%" PRIu64
		        " overflowed, %" PRIu64 " dud, %" PRIu64 " GC'd, %" PRIu64 " fizzled)",
		        pl64(ev, 0), pl64(ev, 24), pl64(ev, 48), pl64(ev, 16), pl64(ev, 8), pl64(ev, 32), pl64(ev, 40));
		return 1;
	case 35: fputs("spark created", f); return 1;
	case 36: fputs("dud spark discarded", f); return 1;
	case 37: fputs("overflowed spark discarded", f); return 1;
	case 38: fputs("running a local spark", f); return 1;
	case 39:
		if (ev->size < 2)
			return 0;
		fprintf(f, "stealing a spark from cap %u", (unsigned)(ev->payload[0] << 8 | ev->payload[1]));
		return 1;
	case 40: fputs("spark fizzled", f); return 1;
	case 41: fputs("spark GCed", f); return 1;
	}
	return 0;
}

static void heap_prof_begin(FILE *f, const struct gel_event *ev)
{
	fprintf(f, "start heap profiling %u at sampling period %" PRIu64 " broken down by %s", ev->prof_id, ev->value,
	        breakdown(ev->arg32));
	int any = 0;
	for (unsigned i = 0; i < ev->nstrs; i++) {
		if (!ev->strs[i].len)
			continue;
		fputs(any ? "" : " filtered by ", f);
		put_bytes(f, ev->strs[i].s, ev->strs[i].len);
		fputs(", ", f);
		any = 1;
	}
}

static void cc_stack(FILE *f, const struct gel_event *ev)
{
	for (unsigned i = 0; i < ev->depth; i++) {
		const uint8_t *p = ev->stack + 4 * i;
		fprintf(f, "%s%" PRIu32, i ? ", " : "",
		        (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
	}
}

static int thread_text(FILE *f, const struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_CREATE_THREAD: fprintf(f, "creating thread %" PRIu32, ev->thread); return 1;
	case GEL_RUN_THREAD: fprintf(f, "running thread %" PRIu32, ev->thread); return 1;
	case GEL_STOP_THREAD:
		/* a black hole's owner, when the RTS says who it is */
		if (ev->status == 8 && ev->blocked_on)
			fprintf(f, "stopping thread %" PRIu32 " (blocked on black hole owned by thread %" PRIu32 ")",
			        ev->thread, ev->blocked_on);
		else
			fprintf(f, "stopping thread %" PRIu32 " (%s)", ev->thread, gel_stop_status(ev->status));
		return 1;
	case GEL_THREAD_RUNNABLE: fprintf(f, "thread %" PRIu32 " is runnable", ev->thread); return 1;
	case GEL_MIGRATE_THREAD: fprintf(f, "migrating thread %" PRIu32 " to cap %u", ev->thread, ev->arg16); return 1;
	case GEL_THREAD_WAKEUP: fprintf(f, "waking up thread %" PRIu32 " on cap %u", ev->thread, ev->arg16); return 1;
	case GEL_CREATE_SPARK_THREAD: fprintf(f, "creating spark thread %" PRIu32, ev->thread); return 1;
	case GEL_THREAD_LABEL:
		fprintf(f, "thread %" PRIu32 " has label \"", ev->thread);
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		fputc('"', f);
		return 1;
	case GEL_TASK_CREATE:
		fprintf(f, "task 0x%" PRIx64 " created on cap %u with OS kernel thread %" PRIu64, ev->value, ev->arg16,
		        ev->value2);
		return 1;
	case GEL_TASK_MIGRATE:
		fprintf(f, "task 0x%" PRIx64 " migrated from cap %u to cap %u", ev->value, ev->arg16, ev->arg16b);
		return 1;
	case GEL_TASK_DELETE: fprintf(f, "task 0x%" PRIx64 " deleted", ev->value); return 1;
	}
	return 0;
}

static int gc_text(FILE *f, const struct gel_event *ev)
{
	const char *plain = NULL;
	switch (ev->type) {
	case GEL_REQUEST_SEQ_GC: plain = "requesting sequential GC"; break;
	case GEL_REQUEST_PAR_GC: plain = "requesting parallel GC"; break;
	case GEL_GC_START: plain = "starting GC"; break;
	case GEL_GC_END: plain = "finished GC"; break;
	case GEL_GC_WORK: plain = "GC working"; break;
	case GEL_GC_IDLE: plain = "GC idle"; break;
	case GEL_GC_DONE: plain = "GC done"; break;
	case GEL_GC_GLOBAL_SYNC: plain = "all caps stopped for GC"; break;
	case GEL_GC_STATS_GHC:
		fprintf(f, "GC stats for heap capset %" PRIu32 ": generation %u, %" PRIu64 " bytes copied, %" PRIu64
		        " bytes slop, %" PRIu64 " bytes fragmentation, %" PRIu32 " par threads, %" PRIu64
		        " bytes max par copied, %" PRIu64 " bytes total par copied",
		        ev->capset, ev->gc.gen, ev->gc.copied, ev->gc.slop, ev->gc.frag, ev->gc.par_n_threads,
		        ev->gc.par_max_copied, ev->gc.par_tot_copied);
		if (ev->gc.has_balanced)
			fprintf(f, ", %" PRIu64 " bytes balanced par copied", ev->gc.par_balanced_copied);
		return 1;
	case GEL_HEAP_ALLOCATED:
		fprintf(f, "allocated on heap capset %" PRIu32 ": %" PRIu64 " total bytes till now", ev->capset, ev->value);
		return 1;
	case GEL_HEAP_SIZE:
		fprintf(f, "size of heap capset %" PRIu32 ": %" PRIu64 " bytes", ev->capset, ev->value);
		return 1;
	case GEL_BLOCKS_SIZE:
		fprintf(f, "blocks size of heap capset %" PRIu32 ": %" PRIu64 " bytes", ev->capset, ev->value);
		return 1;
	case GEL_HEAP_LIVE:
		fprintf(f, "live data in heap capset %" PRIu32 ": %" PRIu64 " bytes", ev->capset, ev->value);
		return 1;
	case GEL_HEAP_INFO_GHC:
		fprintf(f, "heap stats for heap capset %" PRIu32 ": generations %u, %" PRIu64 " bytes max heap size, %" PRIu64
		        " bytes alloc area size, %" PRIu64 " bytes mblock size, %" PRIu64 " bytes block size",
		        ev->capset, ev->heap_info.gens, ev->heap_info.max_heap, ev->heap_info.alloc_area,
		        ev->heap_info.mblock, ev->heap_info.block);
		return 1;
	default:
		return 0;
	}
	fputs(plain, f);
	return 1;
}

static int cap_text(FILE *f, const struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_CAP_CREATE: fprintf(f, "created cap %u", ev->arg16); return 1;
	case GEL_CAP_DELETE: fprintf(f, "deleted cap %u", ev->arg16); return 1;
	case GEL_CAP_DISABLE: fprintf(f, "disabled cap %u", ev->arg16); return 1;
	case GEL_CAP_ENABLE: fprintf(f, "enabled cap %u", ev->arg16); return 1;
	case GEL_CAPSET_CREATE:
		fprintf(f, "created capset %" PRIu32 " of type %s", ev->capset, capset_type(ev->arg16));
		return 1;
	case GEL_CAPSET_DELETE: fprintf(f, "deleted capset %" PRIu32, ev->capset); return 1;
	case GEL_CAPSET_ASSIGN_CAP: fprintf(f, "assigned cap %u to capset %" PRIu32, ev->arg16, ev->capset); return 1;
	case GEL_CAPSET_REMOVE_CAP: fprintf(f, "removed cap %u from capset %" PRIu32, ev->arg16, ev->capset); return 1;
	case GEL_OSPROCESS_PID: fprintf(f, "capset %" PRIu32 ": pid %" PRIu64, ev->capset, ev->value); return 1;
	case GEL_OSPROCESS_PPID: fprintf(f, "capset %" PRIu32 ": parent pid %" PRIu64, ev->capset, ev->value); return 1;
	case GEL_WALL_CLOCK_TIME:
		fprintf(f, "capset %" PRIu32 ": wall clock time %" PRIu64 "s %" PRIu32 "ns (unix epoch)", ev->capset,
		        ev->value, ev->arg32);
		return 1;
	case GEL_RTS_IDENTIFIER:
		fprintf(f, "capset %" PRIu32 ": RTS version \"", ev->capset);
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		fputc('"', f);
		return 1;
	case GEL_PROGRAM_ARGS:
	case GEL_PROGRAM_ENV:
		fprintf(f, "capset %" PRIu32 ": %s: ", ev->capset, ev->type == GEL_PROGRAM_ARGS ? "args" : "env");
		put_hs_list(f, ev);
		return 1;
	}
	return 0;
}

static int prof_text(FILE *f, const struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_LOG_MSG:
	case GEL_USER_MSG:
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		return 1;
	case GEL_USER_MARKER:
		fputs("marker: ", f);
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		return 1;
	case GEL_HEAP_PROF_BEGIN:
		heap_prof_begin(f, ev);
		return 1;
	case GEL_HEAP_PROF_COST_CENTRE:
		fprintf(f, "cost centre %" PRIu32 " ", ev->arg32);
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		fputs(" in ", f);
		put_bytes(f, ev->strs[1].s, ev->strs[1].len);
		fputs(" at ", f);
		put_bytes(f, ev->strs[2].s, ev->strs[2].len);
		fputs(ev->flags & 1 ? " CAF" : "", f);
		return 1;
	case GEL_HEAP_PROF_SAMPLE_BEGIN: fprintf(f, "start heap prof sample %" PRIu64, ev->value); return 1;
	case GEL_HEAP_PROF_SAMPLE_END: fprintf(f, "end prof sample %" PRIu64, ev->value); return 1;
	case GEL_HEAP_PROF_SAMPLE_STRING:
		fprintf(f, "heap prof sample %u, residency %" PRIu64 ", label ", ev->prof_id, ev->value);
		put_bytes(f, ev->strs[0].s, ev->strs[0].len);
		return 1;
	case GEL_HEAP_PROF_SAMPLE_COST_CENTRE:
		fprintf(f, "heap prof sample %u, residency %" PRIu64 ", cost centre stack ", ev->prof_id, ev->value);
		cc_stack(f, ev);
		return 1;
	}
	return 0;
}

int el_show_event(FILE *f, const struct gel_event *ev)
{
	if (ev->type == GEL_BLOCK_MARKER)
		return 0;
	fprintf(f, "%" PRIu64 ": ", ev->time_ns);
	if (ev->cap >= 0)
		fprintf(f, "cap %d: ", (int)ev->cap);
	int done = ev->decoded && (thread_text(f, ev) || gc_text(f, ev) || cap_text(f, ev) || prof_text(f, ev));
	if (!done && !spark_text(f, ev))
		fprintf(f, "Unknown event type %u", ev->type);
	fputc('\n', f);
	return ferror(f) ? -1 : 1;
}

int el_show_types(FILE *f, const struct gel_decoder *d)
{
	fputs("Event Types:\n", f);
	for (size_t i = 0; i < d->ntypes; i++) {
		const struct gel_type *t = &d->types[i];
		if (t->size == GEL_VARIABLE)
			fprintf(f, "%u: %s (size variable)\n", t->num, t->desc);
		else
			fprintf(f, "%u: %s (size %u)\n", t->num, t->desc, t->size);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- in time order ------------------------------------------------------- */

int el_sorted_init(struct el_sorted *s, size_t max_bytes)
{
	memset(s, 0, sizeof(*s));
	s->max_bytes = max_bytes;
	s->mem = open_memstream(&s->text, &s->text_len);
	return s->mem ? 0 : -1;
}

void el_sorted_free(struct el_sorted *s)
{
	if (s->mem)
		fclose(s->mem);
	free(s->text);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

int el_sorted_add(struct el_sorted *s, const struct gel_event *ev)
{
	if (s->failed || !s->mem)
		return -1;
	long at = ftell(s->mem);
	int rc = el_show_event(s->mem, ev);
	long end = ftell(s->mem);
	if (rc < 0 || at < 0 || end < at || (size_t)end > s->max_bytes) {
		s->failed = 1;
		return -1;
	}
	if (rc == 0)
		return 0;
	if (s->nlines == s->lines_cap && GROW_FROM(s->lines, s->lines_cap, s->nlines + 1, 1024) != 0) {
		s->failed = 1;
		return -1;
	}
	s->lines[s->nlines++] = (struct el_line){ev->time_ns, (size_t)at, (size_t)(end - at)};
	return 0;
}

/* By time, then by place: a stable sort whatever qsort does. */
static int cmp_line(const void *a, const void *b)
{
	const struct el_line *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int el_sorted_write(struct el_sorted *s, FILE *f)
{
	if (s->failed || !s->mem || fflush(s->mem) != 0)
		return -1;
	if (s->nlines) /* qsort's array must not be NULL, even empty */
		qsort(s->lines, s->nlines, sizeof(*s->lines), cmp_line);
	for (size_t i = 0; i < s->nlines; i++)
		fwrite(s->text + s->lines[i].at, 1, s->lines[i].len, f);
	return ferror(f) ? -1 : 0;
}
