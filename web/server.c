/*
 * server.c - profdb serve's HTTP server (web.h): libmicrohttpd, one thread
 * per connection, routing (a table of the paths served, routes[]), limits
 * and the headers every reply carries.
 *
 * Why libmicrohttpd: it is the HTTP server library Debian packages for C
 * (libmicrohttpd-dev), small, maintained by GNU, with the limits a server
 * facing untrusted clients needs built in (connections in all and per
 * address, request memory, idle timeouts), and a thread per connection
 * suits Server-Sent Events: a stream blocks in its own thread while it
 * waits for the store to change, and a slow or stalled client holds up
 * nobody else.
 *
 * Connections: at most MAX_CONNECTIONS; a client has CONN_HEADER_DEADLINE_S
 * to send its headers and an address at most CONN_PER_ADDRESS connections
 * (conn_guard.c: a new client takes the place of a slow one).
 * What is refused: anything but GET and HEAD (405), requests bigger than
 * 32 KiB of headers (libmicrohttpd answers 431), a path that is not one of
 * the routes below (404; no path ever reaches the filesystem), arguments
 * that do not parse (400), a Host header that is not this server's name
 * (421: web_host_allowed, against DNS rebinding).  The store is opened read-only for each request
 * (and once per event stream), so a replaced, locked or damaged store
 * gives an error page and the next request tries again.
 *
 * May call: libmicrohttpd, store/store.h and store/store_watch.h (the
 * server's threads, the store's changes), web_internal.h (reply.c,
 * pages.c, api.c, events.c, download.c, args.c), metrics.h,
 * access_log.h, activity.h, conn_guard.h, mirror.h, libc.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "access_log.h"
#include "conn_guard.h"
#include "metrics.h"
#include "web.h"
#include "web_internal.h"

#define MAX_CONNECTIONS 128
#define REQUEST_MEMORY (32 * 1024)
#define IDLE_TIMEOUT_S 30

/* The server's own messages on stderr, as profdb's other commands say
 * theirs. */
static const char web_prog[] = "profdb";

static void say(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", web_prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void web_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void web_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

static void web_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void web_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

static const char page_csp[] = "default-src 'none'; style-src 'unsafe-inline'; script-src "
                               "'unsafe-inline'; connect-src 'self'; img-src data:; base-uri "
                               "'none'; form-action 'self'; frame-ancestors 'none'";

/* ---- routing ------------------------------------------------------------------------ */

static const char *conn_arg(void *req, const char *key)
{
	return MHD_lookup_connection_value(req, MHD_GET_ARGUMENT_KIND, key);
}

static void common_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "Content-Security-Policy", page_csp);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply *r, const char *url, struct access_entry *a)
{
	if (r->f)
		reply_close(r);
	if (a) {
		a->status = r->status;
		a->bytes = strcmp(a->method, "HEAD") ? r->len : 0;
	}
	if (r->status >= 500 && !r->expected)
		fprintf(stderr, "%s: %s: %d\n", web_prog, url, r->status);
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(r->len, r->body ? r->body : (void *)"", r->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(r->body);
		return MHD_NO;
	}
	r->body = NULL;
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", r->type ? r->type : "text/plain; charset=utf-8");
	if (r->disposition[0])
		MHD_add_response_header(resp, "Content-Disposition", r->disposition);
	if (r->note)
		MHD_add_response_header(resp, "X-Profsvc-Note", r->note);
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A reply rendered in pieces (reply_stream): whole when it fitted one
 * pipe, else its headers now and the rest as the client reads it. */
static enum MHD_Result send_streamed(struct MHD_Connection *c, struct web *w, reply_fn fn, void *ctx,
                                     void (*ctx_free)(void *), const char *url, struct access_entry *a)
{
	struct reply r = {0};
	struct reply_stream *st;
	if (reply_stream(w, fn, ctx, ctx_free, &r, &st) != 0 || !st)
		return send_reply(c, &r, url, a);
	const struct reply *h = reply_stream_headers(st);
	if (a)
		a->status = h->status;
	reply_stream_set_access(st, a, url);
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
	        (MHD_ContentReaderCallback)reply_stream_read, st, reply_stream_free);
	if (!resp) {
		reply_stream_free(st);
		return MHD_NO;
	}
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", h->type ? h->type : "text/plain; charset=utf-8");
	if (h->disposition[0])
		MHD_add_response_header(resp, "Content-Disposition", h->disposition);
	if (h->note)
		MHD_add_response_header(resp, "X-Profsvc-Note", h->note);
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)h->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A run's raw profile (prof, hp, eventlog): whole when it is one piece,
 * else read piece by piece by this connection's thread (download.c), its
 * length known. */
static enum MHD_Result send_download(struct MHD_Connection *c, struct web *w, int64_t id, const char *what,
                                     const char *url, struct access_entry *a)
{
	struct reply r = {0};
	struct download *d;
	uint64_t size = 0;
	if (download_open(w, id, what, &r, &d, &size) != 0 || !d)
		return send_reply(c, &r, url, a);
	if (a)
		a->status = r.status;
	download_set_access(d, a, url);
	struct MHD_Response *resp = MHD_create_response_from_callback(size, 64 * 1024,
	        (MHD_ContentReaderCallback)download_read, d, download_free);
	if (!resp) {
		download_free(d);
		return MHD_NO;
	}
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", r.type);
	MHD_add_response_header(resp, "Content-Disposition", r.disposition);
	if (r.note)
		MHD_add_response_header(resp, "X-Profsvc-Note", r.note);
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)r.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* What a streamed page renders: its route, copied (the producer's thread
 * outlives nothing of the request's). */
struct page_job {
	enum { JOB_RUN, JOB_DOWNLOAD, JOB_COMPARE, JOB_TIMELINE, JOB_API_HEAP, JOB_API_TREE } kind;
	int64_t id;
	char what[64];
	char a[32], b[32];
	int has_a, has_b;
};

static const char *job_arg(void *req, const char *key)
{
	struct page_job *j = req;
	if (strcmp(key, "a") == 0)
		return j->has_a ? j->a : NULL;
	if (strcmp(key, "b") == 0)
		return j->has_b ? j->b : NULL;
	if (strcmp(key, "since") == 0) /* /api/runs/N/heap's, kept in a */
		return j->has_a ? j->a : NULL;
	return NULL;
}

static void page_job_run(struct web *w, void *ctx, struct reply *r)
{
	struct page_job *j = ctx;
	if (j->kind == JOB_RUN)
		page_run(w, j->id, r);
	else if (j->kind == JOB_DOWNLOAD)
		page_download(w, j->id, j->what, r);
	else if (j->kind == JOB_TIMELINE)
		page_timeline(w, j->id, r);
	else if (j->kind == JOB_API_HEAP)
		api_heap(w, j->id, job_arg, j, r);
	else if (j->kind == JOB_API_TREE)
		api_tree(w, j->id, r);
	else
		page_compare(w, job_arg, j, r);
}

static enum MHD_Result send_page(struct MHD_Connection *c, struct web *w, struct page_job *j, const char *url,
                                 struct access_entry *a)
{
	struct page_job *copy = malloc(sizeof(*copy));
	if (!copy)
		return MHD_NO;
	*copy = *j;
	return send_streamed(c, w, page_job_run, copy, free, url, a);
}

/* An argument of at most cap - 1 bytes into buf (a longer one is refused
 * by the page as it would be: cut to something that is no run id). */
static int copy_arg(struct MHD_Connection *c, const char *key, char *buf, size_t cap)
{
	const char *v = conn_arg(c, key);
	if (!v)
		return 0;
	if (strlen(v) >= cap)
		snprintf(buf, cap, "x");
	else
		snprintf(buf, cap, "%s", v);
	return 1;
}

/* The stream takes the request's log entry: it is written when the stream
 * ends, with what it sent. */
static enum MHD_Result send_stream(struct MHD_Connection *c, struct event_stream *e, void **state)
{
	if (!e)
		return MHD_NO;
	struct access_entry *a = *state;
	if (a)
		a->status = MHD_HTTP_OK;
	events_set_access(e, a);
	*state = NULL;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	events_set_client(e, ci ? ci->connect_fd : -1);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, (MHD_ContentReaderCallback)events_read, e, events_free);
	if (!resp) {
		events_free(e);
		return MHD_NO;
	}
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* The client's address as text in out (cap bytes), or "". */
static const char *client_address(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	out[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)cap);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)cap);
	return out;
}

/* ---- the routes ---------------------------------------------------------------------- */

/* A request as a route sees it. */
struct request {
	struct MHD_Connection *c;
	struct web *w;
	const char *url;
	void **state;      /* its access-log entry, which a stream takes */
	int api;           /* under /api/: its errors are JSON */
	int64_t id;        /* the run of a pattern's N, else -1 */
	const char *rest;  /* what follows N and its '/': "", "hp", "heap/x" */
};

/* A route answers: it fills r and sends it (reply_now), or sends a reply
 * of its own kind (a page in pieces, a download, an event stream). */
typedef enum MHD_Result (*route_fn)(struct request *q, struct reply *r);

static enum MHD_Result reply_now(struct request *q, struct reply *r)
{
	return send_reply(q->c, r, q->url, *q->state);
}

static enum MHD_Result route_catalogue(struct request *q, struct reply *r)
{
	page_catalogue(q->w, conn_arg, q->c, r);
	return reply_now(q, r);
}

static enum MHD_Result route_run(struct request *q, struct reply *r)
{
	(void)r;
	return send_page(q->c, q->w, &(struct page_job){.kind = JOB_RUN, .id = q->id}, q->url, *q->state);
}

/* /runs/N/prof, hp, eventlog: the raw profiles (download.c). */
static enum MHD_Result route_raw(struct request *q, struct reply *r)
{
	(void)r;
	return send_download(q->c, q->w, q->id, q->rest, q->url, *q->state);
}

/* /runs/N/WHAT: the run's derived files (page_download says which there
 * are). */
static enum MHD_Result route_run_file(struct request *q, struct reply *r)
{
	struct page_job j = {.kind = JOB_DOWNLOAD, .id = q->id};
	if (strlen(q->rest) >= sizeof(j.what)) {
		reply_error(r, 404, 0, "no such file of a run");
		return reply_now(q, r);
	}
	snprintf(j.what, sizeof(j.what), "%s", q->rest);
	return send_page(q->c, q->w, &j, q->url, *q->state);
}

static enum MHD_Result route_no_run(struct request *q, struct reply *r)
{
	reply_error(r, 404, 0, "no such page: runs are /runs/N, N a run id");
	return reply_now(q, r);
}

static enum MHD_Result route_compare(struct request *q, struct reply *r)
{
	(void)r;
	struct page_job j = {.kind = JOB_COMPARE};
	j.has_a = copy_arg(q->c, "a", j.a, sizeof(j.a));
	j.has_b = copy_arg(q->c, "b", j.b, sizeof(j.b));
	return send_page(q->c, q->w, &j, q->url, *q->state);
}

static enum MHD_Result route_api_runs(struct request *q, struct reply *r)
{
	api_runs(q->w, conn_arg, q->c, r);
	return reply_now(q, r);
}

static enum MHD_Result route_api_run(struct request *q, struct reply *r)
{
	api_run(q->w, q->id, r);
	return reply_now(q, r);
}

static enum MHD_Result route_api_heap(struct request *q, struct reply *r)
{
	(void)r;
	struct page_job j = {.kind = JOB_API_HEAP, .id = q->id};
	j.has_a = copy_arg(q->c, "since", j.a, sizeof(j.a));
	return send_page(q->c, q->w, &j, q->url, *q->state);
}

static enum MHD_Result route_api_tree(struct request *q, struct reply *r)
{
	(void)r;
	return send_page(q->c, q->w, &(struct page_job){.kind = JOB_API_TREE, .id = q->id}, q->url, *q->state);
}

static enum MHD_Result route_api_events(struct request *q, struct reply *r)
{
	(void)r;
	return send_stream(q->c, events_run(q->w, q->id), q->state);
}

static enum MHD_Result route_api_eventlog(struct request *q, struct reply *r)
{
	(void)r;
	return send_page(q->c, q->w, &(struct page_job){.kind = JOB_TIMELINE, .id = q->id}, q->url, *q->state);
}

static enum MHD_Result route_api_trace_timeline(struct request *q, struct reply *r)
{
	page_trace_timeline(q->w, q->id, conn_arg, q->c, r);
	return reply_now(q, r);
}

static enum MHD_Result route_api_no_path(struct request *q, struct reply *r)
{
	reply_error(r, 404, 1, "no such API path (a run has heap, tree, events, eventlog and trace-timeline)");
	return reply_now(q, r);
}

static enum MHD_Result route_api_no_run(struct request *q, struct reply *r)
{
	reply_error(r, 404, 1, "no such API path: /api/runs/N, N a run id");
	return reply_now(q, r);
}

static enum MHD_Result route_metrics(struct request *q, struct reply *r)
{
	page_metrics(q->w, r);
	return reply_now(q, r);
}

static enum MHD_Result route_healthz(struct request *q, struct reply *r)
{
	page_healthz(q->w, r);
	return reply_now(q, r);
}

static enum MHD_Result route_api_diff(struct request *q, struct reply *r)
{
	api_diff(q->w, conn_arg, q->c, r);
	return reply_now(q, r);
}

static enum MHD_Result route_api_catalogue_events(struct request *q, struct reply *r)
{
	struct store_run_filter f;
	char err[300];
	if (web_filter(conn_arg, q->c, &f, err, sizeof(err)) != 0) {
		reply_error(r, 400, 1, "%s", err);
		return reply_now(q, r);
	}
	return send_stream(q->c, events_catalogue(q->w, &f, f.name_glob), q->state);
}

static enum MHD_Result route_none(struct request *q, struct reply *r)
{
	reply_error(r, 404, q->api, "no such page");
	return reply_now(q, r);
}

#define ROUTE_WHILE_LOADING 1u /* answers while a fleet catalogue's mirror loads */
#define ROUTE_RUNS_AB 2u       /* its ?a= and ?b= are runs (into the mirror first) */

/*
 * Every path served, the first that matches taking the request.  A
 * pattern is the path as it is, but for a segment N, a run id (web_run_id:
 * decimal, no leading zero), and a last *, whatever follows (nothing
 * too).  Every route is GET (HEAD the same, without the body): any other
 * method was refused before the table is looked at (405, whatever the
 * path).  Over a fleet catalogue, N's run and a ROUTE_RUNS_AB route's
 * runs are brought into the mirror before the route runs.
 */
static const struct route {
	const char *pattern;
	unsigned flags;
	route_fn fn;
} routes[] = {
	{"/", 0, route_catalogue},
	{"/runs/N", 0, route_run},
	{"/runs/N/", 0, route_run},
	{"/runs/N/prof", 0, route_raw},
	{"/runs/N/hp", 0, route_raw},
	{"/runs/N/eventlog", 0, route_raw},
	{"/runs/N/*", 0, route_run_file},
	{"/runs/*", 0, route_no_run},
	{"/compare", ROUTE_RUNS_AB, route_compare},
	{"/api/runs", 0, route_api_runs},
	{"/api/runs/N", 0, route_api_run},
	{"/api/runs/N/", 0, route_api_run},
	{"/api/runs/N/heap", 0, route_api_heap},
	{"/api/runs/N/tree", 0, route_api_tree},
	{"/api/runs/N/events", 0, route_api_events},
	{"/api/runs/N/eventlog", 0, route_api_eventlog},
	{"/api/runs/N/trace-timeline", 0, route_api_trace_timeline},
	{"/api/runs/N/*", 0, route_api_no_path},
	{"/api/runs/*", 0, route_api_no_run},
	{"/metrics", ROUTE_WHILE_LOADING, route_metrics},
	{"/healthz", 0, route_healthz},
	{"/api/diff", 0, route_api_diff},
	{"/api/events", 0, route_api_catalogue_events},
	{"*", 0, route_none},
};

/* Whether path matches pattern (routes[]'s rules); N's run id into *id
 * and what follows it and its '/' into *rest. */
static int route_match(const char *pattern, const char *path, int64_t *id, const char **rest)
{
	char before = '\0';
	*id = -1;
	*rest = "";
	while (*pattern) {
		if (*pattern == '*')
			return 1;
		if (*pattern == 'N' && before == '/' && (pattern[1] == '/' || !pattern[1])) {
			size_t n = strcspn(path, "/");
			if ((*id = web_run_id(path, n)) < 0)
				return 0;
			*rest = path[n] == '/' ? path + n + 1 : path + n;
			path += n;
			before = *pattern++;
			continue;
		}
		if (*pattern != *path)
			return 0;
		before = *pattern++;
		path++;
	}
	return !*path;
}

static const struct route *route_find(struct request *q)
{
	size_t n = sizeof(routes) / sizeof(routes[0]);
	for (size_t i = 0; i < n; i++)
		if (route_match(routes[i].pattern, q->url, &q->id, &q->rest))
			return &routes[i];
	return &routes[n - 1]; /* (never: the last, "*", matches every path) */
}

/* Over a fleet catalogue: until the mirror's first look is done (a
 * million runs: seconds) every page but /metrics says how far it got,
 * rather than show part of the catalogue as if it were all of it (and
 * /metrics's store figures are the mirror's so far); then a run's bytes
 * come into the mirror on the first request that reads them (mirror.c).
 * 0, or -1 with r the error to send. */
static int mirror_gate(struct request *q, const struct route *rt, struct reply *r)
{
	long long met;
	if (!(rt->flags & ROUTE_WHILE_LOADING) && !mirror_loaded(q->w->mirror, &met)) {
		reply_error(r, 503, q->api,
		            "the fleet catalogue is loading: %lld runs copied so far; every page answers once "
		            "all are (reload in a few seconds)",
		            met);
		r->expected = 1;
		return -1;
	}
	int64_t ids[2] = {q->id, -1};
	if (rt->flags & ROUTE_RUNS_AB) {
		const char *a = conn_arg(q->c, "a"), *b = conn_arg(q->c, "b");
		ids[0] = a ? web_run_id(a, strlen(a)) : -1;
		ids[1] = b ? web_run_id(b, strlen(b)) : -1;
	}
	for (int i = 0; i < 2; i++) {
		char err[1024];
		if (ids[i] > 0 && mirror_ensure(q->w->mirror, ids[i], err, sizeof(err)) != 0) {
			reply_error(r, 502, q->api, "run %lld could not be read from the fleet catalogue: %s",
			            (long long)ids[i], err);
			return -1;
		}
	}
	return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct web *w = cls;
	struct reply r = {0};
	struct request q = {c, w, url, state, strncmp(url, "/api/", 5) == 0, -1, ""};
	conn_guard_headers_done(w->guard, c);
	(void)version;
	(void)upload;
	if (!*state) { /* its status and time are counted (/metrics), if not logged */
		char client[64];
		*state = access_entry_new(method, url, client_address(c, client, sizeof(client)));
	}

	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!web_host_allowed(host, w->allow_hosts, w->nallow_hosts, w->own_host)) {
		*upload_size = 0;
		reply_error(&r, 421, q.api,
		            "this server does not answer to the name '%.200s' (a guard against DNS rebinding): "
		            "reach it by localhost, its IP address or its host name, or start it with "
		            "--allow-host NAME",
		            host);
		return reply_now(&q, &r);
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		*upload_size = 0;
		reply_error(&r, 405, q.api, "only GET and HEAD are served here");
		return reply_now(&q, &r);
	}
	const struct route *rt = route_find(&q);
	if (w->mirror && mirror_gate(&q, rt, &r) != 0)
		return reply_now(&q, &r);
	return rt->fn(&q, &r);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
	struct web *w = cls;
	(void)toe;
	struct access_entry *a = *con_cls;
	if (a)
		web_metrics_reply(w->metrics, a->status, access_entry_age_us(a), 0);
	access_entry_finish(w->access_log, a);
	*con_cls = NULL;
	conn_guard_request_done(w->guard, c);
}

/* ---- the daemon --------------------------------------------------------------------- */

static void open_browser(const char *url)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("xdg-open", "xdg-open", url, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		web_warn("--open: cannot start xdg-open; open %s yourself", url);
}

/* w set up for o: its counters, the watch of the store, which run changed
 * and the connections' guard.  0, or 1 (said why). */
static int web_start(struct web *w, const struct web_opts *o)
{
	static struct web_metrics counts; /* zero, and not on this stack */
	w->db = o->db;
	w->metrics = &counts;
	w->live = store_watch_start(o->db);
	w->mirror = o->mirror;
	w->allow_hosts = o->allow_hosts;
	w->nallow_hosts = o->nallow_hosts;
	w->access_log = access_log_dest(o->access_log);
	if (gethostname(w->own_host, sizeof(w->own_host) - 1) != 0)
		w->own_host[0] = '\0';
	if (!w->live || !(w->activity = activity_start(o->db, w->live)) || !(w->guard = conn_guard_start())) {
		web_err("cannot watch %s for changes: %s", o->db, strerror(errno));
		activity_free(w->activity);
		if (w->live) {
			store_watch_stop(w->live);
			store_watch_free(w->live);
		}
		return 1;
	}
	return 0;
}

static void web_stop(struct web *w)
{
	activity_free(w->activity);
	store_watch_free(w->live);
	conn_guard_stop(w->guard);
}

/* "profdb: serving DB at URL": the address d listens on (the port the
 * system chose for port 0) into url. */
static void say_serving(struct MHD_Daemon *d, struct sockaddr_storage *ss, int v6, const struct web_opts *o,
                        char *url, size_t len)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char host[64];
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
	snprintf(url, len, v6 ? "http://[%s]:%u/" : "http://%s:%u/", host, info ? (unsigned)info->port : 0);
	fprintf(stderr, "%s: serving %s at %s (read-only; Ctrl-C stops)\n", web_prog,
	        o->shown ? o->shown : o->db, url);
}

int web_serve(const struct web_opts *o)
{
	struct sockaddr_storage ss;
	int v6 = 0, loopback = 1;
	const char *listen = o->listen ? o->listen : "127.0.0.1:8080";
	if (web_parse_listen(listen, &ss, &v6, &loopback) != 0) {
		web_err("--listen: '%s' is not ADDR:PORT (127.0.0.1:8080, [::1]:8080, :8080)", listen);
		return WEB_EXIT_USAGE;
	}
	struct stat st;
	if (!o->mirror && stat(o->db, &st) != 0)
		web_warn("no store at %s yet: pages say so until profile-backend creates it", o->db);
	if (!loopback)
		web_warn("listening on %s, not loopback: anyone who can reach it can read every run in "
		         "the store (there is no authentication)", listen);

	store_tune_for_threads();
	/* signals are taken by sigwait below, in this thread only */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	static struct web w;
	if (web_start(&w, o) != 0)
		return 1;
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, handle, &w,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		/* per address: conn_guard, which makes room for a new client */
		MHD_OPTION_NOTIFY_CONNECTION, conn_guard_notify, w.guard,
		MHD_OPTION_NOTIFY_COMPLETED, request_completed, &w,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_END);
	if (!d) {
		web_err("cannot listen on %s: %s (is another server there? try --listen 127.0.0.1:PORT)",
		        listen, strerror(errno));
		store_watch_stop(w.live);
		web_stop(&w);
		return 1;
	}
	char url[128];
	say_serving(d, &ss, v6, o, url, sizeof(url));
	if (o->open_browser)
		open_browser(url);
	int sig;
	sigwait(&sigs, &sig);
	fprintf(stderr, "%s: stopping (%s)\n", web_prog, sig == SIGINT ? "SIGINT" : "SIGTERM");
	store_watch_stop(w.live); /* event streams see it and end */
	MHD_stop_daemon(d);
	web_stop(&w);
	return 0;
}
