/*
 * ghc_eventlog_fields.c - the events the eventlog decoder knows
 * (ghc_eventlog.h): their fields read from a payload (gel_fields, for
 * ghc_eventlog.c), and the names of their types and of a thread's stop
 * status, as ghc-events words them.
 *
 * May call: ghc_eventlog.h's types, libc.
 */
#include "config.h"

#include <string.h>

#include "ghc_eventlog.h"
#include "ghc_eventlog_int.h"

/* ---- payloads -------------------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t n, at;
	int short_;                   /* a field ran past the payload */
};

static const uint8_t *take(struct rd *r, size_t k)
{
	if (r->n - r->at < k) {
		r->short_ = 1;
		r->at = r->n;
		return NULL;
	}
	const uint8_t *p = r->p + r->at;
	r->at += k;
	return p;
}

static uint8_t rd8(struct rd *r)
{
	const uint8_t *p = take(r, 1);
	return p ? p[0] : 0;
}

static uint16_t rd16(struct rd *r)
{
	const uint8_t *p = take(r, 2);
	return p ? be16(p) : 0;
}

static uint32_t rd32(struct rd *r)
{
	const uint8_t *p = take(r, 4);
	return p ? be32(p) : 0;
}

static uint64_t rd64(struct rd *r)
{
	const uint8_t *p = take(r, 8);
	return p ? be64(p) : 0;
}

/* The rest of the payload as one string (messages are not NUL-ended). */
static void rd_rest(struct rd *r, struct gel_event *ev)
{
	if (ev->nstrs < GEL_MAX_STRS)
		ev->strs[ev->nstrs++] = (struct gel_str){(const char *)r->p + r->at, r->n - r->at};
	r->at = r->n;
}

/* A NUL-ended string; the last one may end with the payload (the copy the
 * decoder made has a NUL after it). */
static void rd_cstr(struct rd *r, struct gel_event *ev)
{
	const uint8_t *s = r->p + r->at;
	const uint8_t *nul = memchr(s, 0, r->n - r->at);
	size_t len = nul ? (size_t)(nul - s) : r->n - r->at;
	if (ev->nstrs < GEL_MAX_STRS)
		ev->strs[ev->nstrs++] = (struct gel_str){(const char *)s, len};
	r->at += len + (nul != NULL);
}

static void rd_gc_stats(struct rd *r, struct gel_event *ev)
{
	ev->capset = rd32(r);
	ev->gc.gen = rd16(r);
	ev->gc.copied = rd64(r);
	ev->gc.slop = rd64(r);
	ev->gc.frag = rd64(r);
	ev->gc.par_n_threads = rd32(r);
	ev->gc.par_max_copied = rd64(r);
	ev->gc.par_tot_copied = rd64(r);
	/* GHC >= 7.10 adds the balanced figure: 58 bytes, not 50 */
	if (r->n - r->at >= 8) {
		ev->gc.par_balanced_copied = rd64(r);
		ev->gc.has_balanced = 1;
	}
}

static void rd_heap_prof(struct rd *r, struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_HEAP_PROF_BEGIN:
		ev->prof_id = rd8(r);
		ev->value = rd64(r);
		ev->arg32 = rd32(r);
		for (int i = 0; i < 5 && !r->short_; i++)
			rd_cstr(r, ev);
		break;
	case GEL_HEAP_PROF_COST_CENTRE:
		ev->arg32 = rd32(r);
		for (int i = 0; i < 3 && !r->short_; i++)
			rd_cstr(r, ev);
		ev->flags = rd8(r);
		break;
	case GEL_HEAP_PROF_SAMPLE_BEGIN:
	case GEL_HEAP_PROF_SAMPLE_END:
		ev->value = rd64(r);
		break;
	case GEL_HEAP_PROF_SAMPLE_STRING:
		ev->prof_id = rd8(r);
		ev->value = rd64(r);
		rd_cstr(r, ev);
		break;
	case GEL_HEAP_PROF_SAMPLE_COST_CENTRE:
		ev->prof_id = rd8(r);
		ev->value = rd64(r);
		ev->depth = rd8(r);
		ev->stack = take(r, 4u * ev->depth);
		break;
	}
}

/* Threads, GCs, messages and block markers; 1 if known. */
static int rd_threads(struct rd *r, struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_CREATE_THREAD: case GEL_RUN_THREAD: case GEL_THREAD_RUNNABLE:
	case GEL_CREATE_SPARK_THREAD:
		ev->thread = rd32(r);
		return 1;
	case GEL_STOP_THREAD:
		ev->thread = rd32(r);
		ev->status = rd16(r);
		ev->blocked_on = rd32(r);
		return 1;
	case GEL_MIGRATE_THREAD: case GEL_THREAD_WAKEUP:
		ev->thread = rd32(r);
		ev->arg16 = rd16(r);
		return 1;
	case GEL_GC_START: case GEL_GC_END: case GEL_REQUEST_SEQ_GC: case GEL_REQUEST_PAR_GC:
	case GEL_GC_IDLE: case GEL_GC_WORK: case GEL_GC_DONE: case GEL_GC_GLOBAL_SYNC:
	case GEL_HACK_BUG_T9003:
		return 1;
	case GEL_LOG_MSG: case GEL_USER_MSG: case GEL_USER_MARKER:
		rd_rest(r, ev);
		return 1;
	case GEL_BLOCK_MARKER:
		ev->value = rd32(r);
		ev->value2 = rd64(r);
		ev->arg16 = rd16(r);
		return 1;
	case GEL_THREAD_LABEL:
		ev->thread = rd32(r);
		rd_rest(r, ev);
		return 1;
	}
	return 0;
}

/* Capability sets, capabilities, the process, tasks; 1 if known. */
static int rd_system(struct rd *r, struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_CAPSET_CREATE: case GEL_CAPSET_ASSIGN_CAP: case GEL_CAPSET_REMOVE_CAP:
		ev->capset = rd32(r);
		ev->arg16 = rd16(r);
		return 1;
	case GEL_CAPSET_DELETE:
		ev->capset = rd32(r);
		return 1;
	case GEL_RTS_IDENTIFIER:
		ev->capset = rd32(r);
		rd_rest(r, ev);
		return 1;
	case GEL_PROGRAM_ARGS: case GEL_PROGRAM_ENV:
		ev->capset = rd32(r);
		ev->all_strs = (const char *)r->p + r->at;
		ev->all_len = r->n - r->at;
		while (r->at < r->n)
			rd_cstr(r, ev);
		return 1;
	case GEL_OSPROCESS_PID: case GEL_OSPROCESS_PPID:
		ev->capset = rd32(r);
		ev->value = rd32(r);
		return 1;
	case GEL_WALL_CLOCK_TIME:
		ev->capset = rd32(r);
		ev->value = rd64(r);
		ev->arg32 = rd32(r);
		return 1;
	case GEL_CAP_CREATE: case GEL_CAP_DELETE: case GEL_CAP_DISABLE: case GEL_CAP_ENABLE:
		ev->arg16 = rd16(r);
		return 1;
	case GEL_TASK_CREATE:
		ev->value = rd64(r);
		ev->arg16 = rd16(r);
		ev->value2 = rd64(r);
		return 1;
	case GEL_TASK_MIGRATE:
		ev->value = rd64(r);
		ev->arg16 = rd16(r);
		ev->arg16b = rd16(r);
		return 1;
	case GEL_TASK_DELETE:
		ev->value = rd64(r);
		return 1;
	}
	return 0;
}

/* The heap's figures, GC statistics and heap profile samples; 1 if known. */
static int rd_heap(struct rd *r, struct gel_event *ev)
{
	switch (ev->type) {
	case GEL_HEAP_ALLOCATED: case GEL_HEAP_SIZE: case GEL_HEAP_LIVE: case GEL_BLOCKS_SIZE:
		ev->capset = rd32(r);
		ev->value = rd64(r);
		return 1;
	case GEL_HEAP_INFO_GHC:
		ev->capset = rd32(r);
		ev->heap_info.gens = rd16(r);
		ev->heap_info.max_heap = rd64(r);
		ev->heap_info.alloc_area = rd64(r);
		ev->heap_info.mblock = rd64(r);
		ev->heap_info.block = rd64(r);
		return 1;
	case GEL_GC_STATS_GHC:
		rd_gc_stats(r, ev);
		return 1;
	case GEL_HEAP_PROF_BEGIN: case GEL_HEAP_PROF_COST_CENTRE: case GEL_HEAP_PROF_SAMPLE_BEGIN:
	case GEL_HEAP_PROF_SAMPLE_END: case GEL_HEAP_PROF_SAMPLE_STRING: case GEL_HEAP_PROF_SAMPLE_COST_CENTRE:
		rd_heap_prof(r, ev);
		return 1;
	}
	return 0;
}

int gel_fields(struct gel_event *ev, size_t size, int *is_short)
{
	struct rd r = {ev->payload, size, 0, 0};
	int known = rd_threads(&r, ev) || rd_system(&r, ev) || rd_heap(&r, ev);
	*is_short = r.short_;
	return known;
}

/* ---- names ------------------------------------------------------------------ */

const char *gel_type_name(uint16_t num)
{
	switch (num) {
	case GEL_CREATE_THREAD: return "CREATE_THREAD";
	case GEL_RUN_THREAD: return "RUN_THREAD";
	case GEL_STOP_THREAD: return "STOP_THREAD";
	case GEL_THREAD_RUNNABLE: return "THREAD_RUNNABLE";
	case GEL_MIGRATE_THREAD: return "MIGRATE_THREAD";
	case GEL_THREAD_WAKEUP: return "THREAD_WAKEUP";
	case GEL_GC_START: return "GC_START";
	case GEL_GC_END: return "GC_END";
	case GEL_REQUEST_SEQ_GC: return "REQUEST_SEQ_GC";
	case GEL_REQUEST_PAR_GC: return "REQUEST_PAR_GC";
	case GEL_CREATE_SPARK_THREAD: return "CREATE_SPARK_THREAD";
	case GEL_LOG_MSG: return "LOG_MSG";
	case GEL_BLOCK_MARKER: return "BLOCK_MARKER";
	case GEL_USER_MSG: return "USER_MSG";
	case GEL_GC_IDLE: return "GC_IDLE";
	case GEL_GC_WORK: return "GC_WORK";
	case GEL_GC_DONE: return "GC_DONE";
	case GEL_CAPSET_CREATE: return "CAPSET_CREATE";
	case GEL_CAPSET_DELETE: return "CAPSET_DELETE";
	case GEL_CAPSET_ASSIGN_CAP: return "CAPSET_ASSIGN_CAP";
	case GEL_CAPSET_REMOVE_CAP: return "CAPSET_REMOVE_CAP";
	case GEL_RTS_IDENTIFIER: return "RTS_IDENTIFIER";
	case GEL_PROGRAM_ARGS: return "PROGRAM_ARGS";
	case GEL_PROGRAM_ENV: return "PROGRAM_ENV";
	case GEL_OSPROCESS_PID: return "OSPROCESS_PID";
	case GEL_OSPROCESS_PPID: return "OSPROCESS_PPID";
	case GEL_WALL_CLOCK_TIME: return "WALL_CLOCK_TIME";
	case GEL_THREAD_LABEL: return "THREAD_LABEL";
	case GEL_CAP_CREATE: return "CAP_CREATE";
	case GEL_CAP_DELETE: return "CAP_DELETE";
	case GEL_CAP_DISABLE: return "CAP_DISABLE";
	case GEL_CAP_ENABLE: return "CAP_ENABLE";
	case GEL_HEAP_ALLOCATED: return "HEAP_ALLOCATED";
	case GEL_HEAP_SIZE: return "HEAP_SIZE";
	case GEL_HEAP_LIVE: return "HEAP_LIVE";
	case GEL_HEAP_INFO_GHC: return "HEAP_INFO_GHC";
	case GEL_GC_STATS_GHC: return "GC_STATS_GHC";
	case GEL_GC_GLOBAL_SYNC: return "GC_GLOBAL_SYNC";
	case GEL_TASK_CREATE: return "TASK_CREATE";
	case GEL_TASK_MIGRATE: return "TASK_MIGRATE";
	case GEL_TASK_DELETE: return "TASK_DELETE";
	case GEL_USER_MARKER: return "USER_MARKER";
	case GEL_HACK_BUG_T9003: return "HACK_BUG_T9003";
	case GEL_BLOCKS_SIZE: return "BLOCKS_SIZE";
	case GEL_HEAP_PROF_BEGIN: return "HEAP_PROF_BEGIN";
	case GEL_HEAP_PROF_COST_CENTRE: return "HEAP_PROF_COST_CENTRE";
	case GEL_HEAP_PROF_SAMPLE_BEGIN: return "HEAP_PROF_SAMPLE_BEGIN";
	case GEL_HEAP_PROF_SAMPLE_COST_CENTRE: return "HEAP_PROF_SAMPLE_COST_CENTRE";
	case GEL_HEAP_PROF_SAMPLE_STRING: return "HEAP_PROF_SAMPLE_STRING";
	case GEL_HEAP_PROF_SAMPLE_END: return "HEAP_PROF_SAMPLE_END";
	}
	return NULL;
}

/* Status values: 1-5 are how a thread returned to the scheduler, 6 and up
 * why a blocked one is blocked (EventLogFormat.h's comment). */
const char *gel_stop_status(uint16_t status)
{
	static const char *const words[] = {
		"no status", "heap overflow", "stack overflow", "thread yielding", "thread blocked",
		"thread finished", "making a foreign call", "blocked on an MVar", "blocked on a black hole",
		"blocked on I/O read", "blocked on I/O write", "blocked on threadDelay", "blocked in STM retry",
		"blocked on asyncDoProc", "blocked in a foreign call", "blocked in a foreign call",
		"blocked in throwTo", "thread migrating", "blocked in MsgGlobalise", "no status",
		"blocked reading an MVar",
	};
	return status < sizeof(words) / sizeof(words[0]) ? words[status] : "unknown status";
}
