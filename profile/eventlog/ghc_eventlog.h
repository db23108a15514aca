/*
 * ghc_eventlog.h - GHC's binary eventlog (+RTS -l) decoded as it arrives:
 * bytes in any pieces, one callback per whole event, the event's payload
 * read into named fields for the event types users look at.
 *
 * The format (GHC's rts/include/rts/EventLogFormat.h; docs/eventlog.md):
 *
 *   "hdrb" "hetb"                         big-endian throughout
 *   per event type: "etb\0" u16 number, u16 size (0xffff: variable),
 *                   u32 description length, description,
 *                   u32 extra length, extra bytes, "ete\0"
 *   "hete" "hdre" "datb"
 *   per event:      u16 type, u64 time (ns since the RTS started),
 *                   u16 payload length (variable-size types only), payload
 *   0xffff                                 the end of the data
 *
 * Events come in blocks (EVENT_BLOCK_MARKER: u32 block size from the
 * marker's first byte, u64 end time, u16 capability, 0xffff for none), so
 * every event is told its capability; they are not in global time order.
 *
 * Invariants:
 *  1. An event is given to the callback only once all its bytes are here:
 *     a log cut anywhere yields every whole event before the cut, and
 *     gel_whole_prefix() is where the last whole one ends.
 *  2. An event type is read by the size the header declares for it, so a
 *     type this decoder does not know (a newer GHC's) is skipped whole; a
 *     known type whose payload is shorter than its fields is delivered
 *     with decoded = 0.
 *  3. Memory is bounded whatever the input: at most GEL_MAX_TYPES types,
 *     descriptions up to GEL_MAX_DESC bytes, extra info up to
 *     GEL_MAX_EXTRA, one unit (the largest is an event of 64 KiB) held
 *     while incomplete.  Every byte is consumed once: linear time.
 *  4. The first malformed unit stops the decoder with one message naming
 *     its offset; every later call fails the same way, and what was
 *     delivered before stays valid.
 *
 * No SQLite, no Xen.  May call: libc.
 */
#ifndef PROFSVC_GHC_EVENTLOG_H
#define PROFSVC_GHC_EVENTLOG_H

#include <stddef.h>
#include <stdint.h>

/* Event type numbers (GHC 9.0's EventLogFormat.h). */
enum {
	GEL_CREATE_THREAD = 0,
	GEL_RUN_THREAD = 1,
	GEL_STOP_THREAD = 2,
	GEL_THREAD_RUNNABLE = 3,
	GEL_MIGRATE_THREAD = 4,
	GEL_THREAD_WAKEUP = 8,
	GEL_GC_START = 9,
	GEL_GC_END = 10,
	GEL_REQUEST_SEQ_GC = 11,
	GEL_REQUEST_PAR_GC = 12,
	GEL_CREATE_SPARK_THREAD = 15,
	GEL_LOG_MSG = 16,
	GEL_BLOCK_MARKER = 18,
	GEL_USER_MSG = 19,
	GEL_GC_IDLE = 20,
	GEL_GC_WORK = 21,
	GEL_GC_DONE = 22,
	GEL_CAPSET_CREATE = 25,
	GEL_CAPSET_DELETE = 26,
	GEL_CAPSET_ASSIGN_CAP = 27,
	GEL_CAPSET_REMOVE_CAP = 28,
	GEL_RTS_IDENTIFIER = 29,
	GEL_PROGRAM_ARGS = 30,
	GEL_PROGRAM_ENV = 31,
	GEL_OSPROCESS_PID = 32,
	GEL_OSPROCESS_PPID = 33,
	GEL_WALL_CLOCK_TIME = 43,
	GEL_THREAD_LABEL = 44,
	GEL_CAP_CREATE = 45,
	GEL_CAP_DELETE = 46,
	GEL_CAP_DISABLE = 47,
	GEL_CAP_ENABLE = 48,
	GEL_HEAP_ALLOCATED = 49,
	GEL_HEAP_SIZE = 50,
	GEL_HEAP_LIVE = 51,
	GEL_HEAP_INFO_GHC = 52,
	GEL_GC_STATS_GHC = 53,
	GEL_GC_GLOBAL_SYNC = 54,
	GEL_TASK_CREATE = 55,
	GEL_TASK_MIGRATE = 56,
	GEL_TASK_DELETE = 57,
	GEL_USER_MARKER = 58,
	GEL_HACK_BUG_T9003 = 59,
	GEL_BLOCKS_SIZE = 91,
	GEL_HEAP_PROF_BEGIN = 160,
	GEL_HEAP_PROF_COST_CENTRE = 161,
	GEL_HEAP_PROF_SAMPLE_BEGIN = 162,
	GEL_HEAP_PROF_SAMPLE_COST_CENTRE = 163,
	GEL_HEAP_PROF_SAMPLE_STRING = 164,
	GEL_HEAP_PROF_SAMPLE_END = 165,
};

#define GEL_VARIABLE 0xffffu      /* a type's size in the header: variable */
#define GEL_MAX_TYPES 4096u       /* GHC 9.0 declares 75 */
#define GEL_MAX_DESC 4096u        /* GHC's longest description is ~60 bytes */
#define GEL_MAX_EXTRA 65536u      /* GHC writes none */
#define GEL_MAX_STRS 8u           /* strings read out of one payload */

/* One event type as the header declares it. */
struct gel_type {
	uint16_t num;
	uint16_t size;                /* payload bytes, or GEL_VARIABLE */
	char *desc;                   /* NUL-terminated, NULs inside replaced */
};

struct gel_str {
	const char *s;                /* NUL-terminated (the decoder adds one) */
	size_t len;
};

struct gel_gc_stats {                 /* EVENT_GC_STATS_GHC */
	uint16_t gen;
	uint64_t copied, slop, frag;
	uint32_t par_n_threads;
	uint64_t par_max_copied, par_tot_copied;
	uint64_t par_balanced_copied; /* when has_balanced */
	int has_balanced;
};

struct gel_heap_info {                /* EVENT_HEAP_INFO_GHC */
	uint16_t gens;
	uint64_t max_heap, alloc_area, mblock, block;
};

/*
 * One whole event.  Pointers are valid only during the callback.  Which
 * fields are set depends on type (all others are 0):
 *   thread events        thread; STOP status, blocked_on; MIGRATE/WAKEUP arg16
 *   capset events        capset; CREATE arg16 = type; ASSIGN/REMOVE arg16 = cap
 *   CAP_* events         arg16 = cap
 *   HEAP_* / BLOCKS_SIZE capset, value = bytes
 *   GC_STATS_GHC         capset, gc;   HEAP_INFO_GHC capset, heap_info
 *   PID/PPID             capset, value = pid
 *   WALL_CLOCK_TIME      capset, value = seconds, arg32 = nanoseconds
 *   TASK_*               value = task id; CREATE arg16 = cap, value2 = kernel tid;
 *                        MIGRATE arg16 = cap, arg16b = new cap
 *   messages, markers    strs[0] (LOG_MSG, USER_MSG, USER_MARKER)
 *   THREAD_LABEL         thread, strs[0];  RTS_IDENTIFIER capset, strs[0]
 *   PROGRAM_ARGS/ENV     capset, strs[0..nstrs) (truncated at GEL_MAX_STRS;
 *                        all_strs has them NUL-separated, all_len bytes)
 *   BLOCK_MARKER         value = block size, value2 = end time, arg16 = cap
 *   HEAP_PROF_BEGIN      prof_id, value = sampling period, arg32 = breakdown,
 *                        strs[0..5) the filters
 *   HEAP_PROF_COST_CENTRE arg32 = cc id, strs[0..3) label, module, srcloc,
 *                        flags (1: CAF)
 *   HEAP_PROF_SAMPLE_BEGIN/END value = era
 *   HEAP_PROF_SAMPLE_STRING prof_id, value = residency, strs[0] label
 *   HEAP_PROF_SAMPLE_COST_CENTRE prof_id, value = residency, depth, stack
 *                        (depth big-endian u32 cost centre ids, innermost first)
 */
struct gel_event {
	uint16_t type;
	int32_t cap;                  /* from the enclosing block, -1 for none */
	uint64_t time_ns;
	uint64_t offset;              /* of the event's first byte in the log */
	uint32_t size;                /* payload bytes */
	const uint8_t *payload;
	int known;                    /* a type this decoder reads fields of */
	int decoded;                  /* 1: the fields below were read */

	uint32_t thread, capset, arg32, blocked_on;
	uint16_t status, arg16, arg16b;
	uint64_t value, value2;
	uint8_t prof_id, flags, depth;
	const uint8_t *stack;
	struct gel_gc_stats gc;
	struct gel_heap_info heap_info;
	struct gel_str strs[GEL_MAX_STRS];
	unsigned nstrs;
	const char *all_strs;
	size_t all_len;
};

/* Called once per whole event.  Nonzero stops the decoder for good after
 * this event: gel_feed returns 1, now and on every later call (the rest
 * of the piece is not read); gel_whole_prefix() ends with this event. */
typedef int (*gel_event_fn)(void *ctx, const struct gel_event *ev);

enum gel_phase { GEL_IN_HEADER, GEL_IN_DATA, GEL_ENDED };

struct gel_decoder {
	gel_event_fn fn;
	void *ctx;
	enum gel_phase phase;
	unsigned hdr_step;            /* which header marker is expected next */
	/* the header's types: a page of 256 slots per high byte of the number */
	uint16_t *slot_pages[256];    /* index + 1 into types, 0: undeclared */
	struct gel_type *types;
	size_t ntypes, types_cap;
	/* the unit being gathered when it spans pieces (invariant 3) */
	uint8_t *pend;
	size_t pend_len, pend_need, pend_cap;
	uint8_t *scratch;             /* the payload being delivered, NUL-ended */
	size_t scratch_cap;
	/* the enclosing block */
	int32_t block_cap;
	uint64_t block_end;
	/* counts */
	uint64_t fed;                 /* bytes given so far */
	uint64_t consumed;            /* bytes of whole units */
	uint64_t whole_prefix;        /* invariant 1 */
	uint64_t events;              /* delivered, block markers included */
	uint64_t unknown_events;      /* of types this decoder does not read */
	uint64_t blocks;
	uint64_t max_time, backwards; /* events earlier than one before them */
	uint64_t last_time;
	int failed, stopped;
	char err[256];
};

/* fn may be NULL (the decoder then only checks and counts). */
void gel_init(struct gel_decoder *d, gel_event_fn fn, void *ctx);
void gel_free(struct gel_decoder *d);

/* Decodes len more bytes: 0, 1 when the callback stopped it, or -1 with
 * gel_error() (invariant 4). */
int gel_feed(struct gel_decoder *d, const void *data, size_t len);

/* What the end of the input left. */
struct gel_tail {
	int header_done;              /* the header was whole */
	int ended;                    /* the data-end marker was read */
	uint64_t cut_bytes;           /* bytes after the last whole unit */
	uint64_t whole_prefix;
};
/* The input ends: 0 when the log is whole (header, events, end marker),
 * 1 when it was cut (tail says where), -1 after an error. */
int gel_finish(struct gel_decoder *d, struct gel_tail *tail);

/* Bytes from the start that hold only whole events (and the whole
 * header): where a crashed guest's log is cut.  0 before the header is
 * whole. */
uint64_t gel_whole_prefix(const struct gel_decoder *d);

const char *gel_error(const struct gel_decoder *d);

/* A declared type (NULL if not declared). */
const struct gel_type *gel_type_of(const struct gel_decoder *d, uint16_t num);

/* A short name for a type number GHC 9.0 defines ("GC_START"), or NULL. */
const char *gel_type_name(uint16_t num);

/* EVENT_STOP_THREAD's status as words ("heap overflow"); never NULL. */
const char *gel_stop_status(uint16_t status);
#endif
