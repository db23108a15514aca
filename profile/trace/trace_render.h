/*
 * trace_render.h - a kept MirageOS trace (its packets in sequence order)
 * walked event by event and written out: the CTF stream babeltrace2
 * reads, the events as JSON, Chrome's trace-event JSON (Perfetto,
 * chrome://tracing, speedscope), the CTF trace as one tar file, and the
 * facts `profdb show` prints.
 * No SQLite, no Xen: the packets come from the caller (cli/cli_trace.c).
 */
#ifndef PROFSVC_TRACE_RENDER_H
#define PROFSVC_TRACE_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mprof.h"

struct mprof_trace_packet {
	uint64_t seq;
	const uint8_t *bytes;
	size_t len;
	int final;
};

struct mprof_trace {
	const struct mprof_trace_packet *p; /* in seq order */
	size_t n;
	const char *name;  /* the guest's (hostile) */
	long long run_id;
};

/* Every sound event in order.  Timestamps must not go back across
 * packets either: a packet is cut at its first torn event.  cb returns
 * non-zero to stop (returned). */
typedef int (*mprof_event_cb)(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e);
int trace_render_walk(const struct mprof_trace *t, mprof_event_cb cb, void *ctx);

/* What a trace holds. */
#define MPROF_STATS_COUNTERS 64
struct mprof_stats {
	uint64_t kept, lost, events;
	uint64_t lost_ranges;          /* gaps in the sequence */
	uint64_t cut;                  /* packets cut at a torn event */
	int final;
	uint64_t first_ts, last_ts;
	uint64_t per_kind[MPROF_EVENT_KINDS];
	uint64_t gc_count, gc_total_ns, gc_max_ns;
	uint64_t labels;
	struct mprof_counter {
		char name[64];         /* cut */
		int64_t value;         /* the last `counter`, or the sum of `increase` */
		uint64_t updates;
	} counters[MPROF_STATS_COUNTERS];
	size_t ncounters;
	uint64_t counters_dropped;     /* names beyond MPROF_STATS_COUNTERS */
};
void trace_render_stats(const struct mprof_trace *t, struct mprof_stats *s);

/* The CTF stream file: the packets in order, each with its content size
 * cut after its last sound event (the bytes are otherwise the guest's). */
int trace_render_ctf_stream(FILE *f, const struct mprof_trace *t);
/* The CTF trace (metadata and stream: the directory `export --ctf`
 * writes) as one ustar file, for a download: a directory dir/ (at most 80
 * bytes, ours), dir/metadata and dir/mprof_stream; mtime: the files'
 * time (seconds since the epoch).  0, or -1. */
int trace_render_ctf_tar(FILE *f, const struct mprof_trace *t, const char *dir, long long mtime);
/* {"run":..,"guest":..,"packets":{..},"events":[{"seq":..,"ts":..,"event":..,...}]} */
int trace_render_json(FILE *f, const struct mprof_trace *t);
/* Chrome's trace-event format: Lwt thread run slices (switch to switch)
 * named by their labels, GC pauses, counters, and the other events as
 * instants. */
int trace_render_chrome(FILE *f, const struct mprof_trace *t);
/* The lost sequence ranges, "3-7, 12" style, into out. */
void trace_render_lost_ranges(const struct mprof_trace *t, char *out, size_t len);

#endif
