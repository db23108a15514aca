/*
 * web_internal.h - what the server's parts share: a reply being built
 * (status, type, body in memory or streamed through a pipe), the request's query arguments, and the
 * entry points of pages.c, api.c and events.c that server.c routes to;
 * reply.c builds the replies, below them all.
 *
 * May call: store/store.h, store/store_watch.h, view/view_json.h,
 * access_log.h, activity.h, mirror.h (the types it names), jansson.
 */
#ifndef PROFSVC_WEB_INTERNAL_H
#define PROFSVC_WEB_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "store/store.h"
#include "store/store_watch.h"
#include "view/view_json.h"
#include "access_log.h"
#include "activity.h"
#include "mirror.h"

struct web_metrics;
struct web {
	const char *db;
	struct store_watch *live;   /* any change of the store (the catalogue) */
	struct activity *activity;  /* which run changed (run streams) */
	struct mirror *mirror;      /* over a fleet catalogue: db is its mirror */
	struct conn_guard *guard;   /* header deadline, connections per address */
	const char *const *allow_hosts; /* --allow-host names */
	int nallow_hosts;
	char own_host[256];         /* gethostname(): this machine's name */
	enum access_log_dest access_log; /* where each request's entry goes */
	struct web_metrics *metrics;     /* replies counted for /metrics (metrics.h) */
};

/* One response.  Rendered whole into memory before it is sent (a render
 * that fails half-way sends an error page, not half a page), or, run by
 * reply_stream, into a bounded pipe a connection drains (reply.c). */
struct reply_stream;
struct reply {
	int status;
	const char *type;         /* Content-Type */
	char disposition[160];    /* Content-Disposition, or "" */
	char *body;
	size_t len;
	FILE *f;                  /* open on body while rendering */
	const char *note;         /* X-Profsvc-Note, e.g. what salvage did */
	char note_buf[320];
	struct reply_stream *st;  /* reply_stream's: the first reply_open writes into it */
	int st_used;
	int expected;             /* a 5xx that is no fault (a catalogue loading): not logged */
};

/* A request's query argument, or NULL. */
typedef const char *(*arg_fn)(void *req, const char *key);

int reply_open(struct reply *r, int status, const char *type);
/* Closes the stream; -1 when rendering ran out of memory. */
int reply_close(struct reply *r);
/* An HTML error page (or a JSON {"error":...} when json) with the message. */
void reply_error(struct reply *r, int status, int json, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Compact JSON with < > & as \u escapes: inert even if someone puts it
 * inside HTML; guest text as view_json_guest says (view_json_dumps).
 * Malloc'd; NULL when out of memory. */
char *json_dump_inert(const json_t *v);
/* A jansson value as the reply (stolen). */
void reply_json(struct reply *r, json_t *v);

/*
 * A reply rendered in pieces: fn(w, ctx, r) runs in a thread of its own,
 * and what its first reply_open's r->f gets goes through a pipe of
 * REPLY_STREAM_BYTES that the connection drains as the client reads, so
 * a reply holds that much whatever its size and a slow reader holds no
 * more.  fn reads what it shows in one snapshot and closes its view
 * before it writes the body: the pipe fills at the client's pace, and a
 * read transaction held over it would keep the WAL from being
 * checkpointed (a raw download is read in pieces: download.c).  Until the
 * pipe first fills, nothing is sent: a reply that fits is sent whole (with
 * its Content-Length), and an error found by then is an error page as
 * before (fn's reply_error).  Once the pipe filled, the status, type,
 * disposition and note are sent as they were then and the rest goes
 * chunked; a failure past that point (damaged data found midway, a write
 * error) cuts the connection after the bytes before it: the chunked body
 * has no last chunk, so the client sees an incomplete transfer, never a
 * complete file (and the server logs it).  Returns 0 with the outcome:
 * *whole (r filled, sent by send_reply) or *st (hand it to
 * reply_stream_response); -1 when no thread could start (r is a 500).
 */
#define REPLY_STREAM_BYTES (1024 * 1024)
typedef void (*reply_fn)(struct web *w, void *ctx, struct reply *r);
int reply_stream(struct web *w, reply_fn fn, void *ctx, void (*ctx_free)(void *), struct reply *r,
                 struct reply_stream **st);
/* libmicrohttpd's content reader of a stream that filled its pipe (the
 * status and headers of r as they were then are in *hdr), and its free
 * (the producer is stopped, its thread ends on its own). */
long reply_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
void reply_stream_free(void *cls);
const struct reply *reply_stream_headers(struct reply_stream *st);
/* The request's access-log entry, whose bytes the stream counts. */
void reply_stream_set_access(struct reply_stream *st, struct access_entry *a, const char *url);

/*
 * download.c: a run's raw profile (what: "prof", "hp", "eventlog") read
 * in pieces, each in a read transaction of its own, by the connection's
 * thread as the client takes it.  Returns 0 with either r filled (a
 * download of one piece, whole) and *d NULL, or *d (its status, type,
 * disposition and note in r; *size its length) for
 * download_read/download_free, libmicrohttpd's content reader and its
 * free; -1 with r an error page (500 for damaged data, 404 for none).
 */
struct download;
int download_open(struct web *w, int64_t id, const char *what, struct reply *r, struct download **d,
                  uint64_t *size);
/* The request's access-log entry, whose bytes the download counts, and
 * its URL (for the log line of a download cut short). */
void download_set_access(struct download *d, struct access_entry *a, const char *url);
long download_read(void *cls, uint64_t pos, char *buf, size_t max);
void download_free(void *cls);

/* The most runs one catalogue page or /api/runs reply holds. */
#define WEB_MAX_LIMIT 5000
/* args.c: "12" -> 12; -1 unless a run id (decimal, no leading zero, at
 * most 18 digits). */
int64_t web_run_id(const char *s, size_t len);
/* /api/runs/N/trace-timeline's arguments: ?from=NS&to=NS (both, from <=
 * to; neither: whole), ?thread=ID (never UINT64_MAX, mirage-profile's "no
 * thread"), ?cols=N (1..WEB_TRACE_MAX_COLS: the columns a counter is
 * drawn in, 0 when not given).  0, or -1 with the reason in err. */
#define WEB_TRACE_MAX_COLS 4000 /* TT_MAX_COLS */
struct web_trace_args {
	int whole;
	uint64_t from, to;
	int has_thread;
	uint64_t thread;
	unsigned cols;
};
int web_trace_args(arg_fn arg, void *req, struct web_trace_args *out, char *err, size_t len);
/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", ":8080" (loopback): 0, or
 * -1 when it is none of those. */
struct sockaddr_storage;
int web_parse_listen(const char *s, struct sockaddr_storage *ss, int *v6, int *loopback);
/* 1 when a request's Host header (NULL: none) names this server: an IP
 * address, localhost, own (this machine's name) or one of allowed (any
 * port, any case); 0 otherwise (answered 421). */
int web_host_allowed(const char *host, const char *const *allowed, int nallowed, const char *own);
/* view_json_guest, view_json_run, view_json_device: ../view/view_json.h */
json_t *api_run_object(const struct store_run *r, int64_t now_us);

/* pages.c */
void page_catalogue(struct web *w, arg_fn arg, void *req, struct reply *r);
void page_run(struct web *w, int64_t id, struct reply *r);
void page_compare(struct web *w, arg_fn arg, void *req, struct reply *r);
/* GET /api/runs/N/eventlog: the run's eventlog timeline, the report's
 * section alone (HTML), with data-follow while the run lasts */
void page_timeline(struct web *w, int64_t id, struct reply *r);
/* GET /api/runs/N/trace-timeline: a MirageOS trace's thread timeline
 * (profile/trace/trace_timeline.h), ?from=&to= a window, ?thread= its events */
void page_trace_timeline(struct web *w, int64_t id, arg_fn arg, void *req, struct reply *r);
/* GET /runs/N/<what>: speedscope.json, folded, samples.pb.gz (a sampled
 * run), trace.ctf.tar, trace.chrome.json (a MirageOS trace), report.html
 * (prof, hp and eventlog are download.c's) */
void page_download(struct web *w, int64_t id, const char *what, struct reply *r);

/* api.c */
void api_runs(struct web *w, arg_fn arg, void *req, struct reply *r);
void api_run(struct web *w, int64_t id, struct reply *r);
void api_heap(struct web *w, int64_t id, arg_fn arg, void *req, struct reply *r);
void api_tree(struct web *w, int64_t id, struct reply *r);
void api_diff(struct web *w, arg_fn arg, void *req, struct reply *r);
/* args.c: the catalogue filter from ?name=&state=&since=&limit=; 0, or
 * -1 with the reason in err. */
struct store_run_filter;
int web_filter(arg_fn arg, void *req, struct store_run_filter *f, char *err, size_t len);
/* The runs the filter selects, as a JSON array (NULL with reason). */
json_t *api_run_list(struct web *w, const struct store_run_filter *f, char *err, size_t len);

/* events.c: Server-Sent Event streams, one thread per connection. */
struct event_stream;
struct event_stream *events_run(struct web *w, int64_t id);
struct event_stream *events_catalogue(struct web *w, const struct store_run_filter *f,
                                      const char *name);
/* libmicrohttpd's content reader: blocks until there is something to send. */
/* The client's socket, which a waiting stream looks at to notice a hang-up. */
void events_set_client(struct event_stream *e, int fd);
/* The request's access-log entry (may be NULL), taken by the stream:
 * written with the bytes it sent when the stream ends. */
struct access_entry;
void events_set_access(struct event_stream *e, struct access_entry *a);
long events_read(void *cls, uint64_t pos, char *buf, size_t max);
void events_free(void *cls);

#endif
