/*
 * reply.c - a reply being built (web_internal.h): status, type and body in
 * memory, or rendered by a thread of its own into a bounded pipe that the
 * connection drains (reply_stream), an error page or JSON error, and JSON
 * made inert for HTML.  The
 * bottom of web/: pages.c, api.c, events.c and server.c call it, it calls
 * none of them.
 *
 * May call: view/view_json.h, util/safe_text.h (markup, inert JSON), web_assets.h, jansson.
 */
#define _GNU_SOURCE /* fopencookie */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "util/safe_text.h"
#include "view/view_json.h"
#include "web_assets.h"
#include "web_internal.h"

/* ---- a reply streamed (web_internal.h, reply_stream) ------------------------------- */

struct reply_stream {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *ring;               /* REPLY_STREAM_BYTES, allocated at the first write */
	size_t head, len;         /* the bytes waiting, from head (wrapping) */
	int full;                 /* the pipe filled before the headers went: send them */
	int committed;            /* the headers went: the status cannot change now */
	int done;                 /* fn returned */
	int failed;               /* past the headers: the client gets a cut reply */
	int aborted;              /* the client went: writes fail, fn ends early */
	int refs;                 /* the producer's and the connection's */
	int open;                 /* r.f is the pipe's */
	struct reply r;           /* fn's */
	struct reply hdr;         /* r as it was when the headers went */
	char err[300];            /* why it was cut */
	struct web *w;
	reply_fn fn;
	void *ctx;
	void (*ctx_free)(void *);
	struct access_entry *access;
	char url[160];
	uint64_t sent;
};

static void stream_unref(struct reply_stream *st)
{
	pthread_mutex_lock(&st->mu);
	int last = --st->refs == 0;
	pthread_mutex_unlock(&st->mu);
	if (!last)
		return;
	if (st->ctx_free)
		st->ctx_free(st->ctx);
	free(st->r.body);
	free(st->ring);
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

/* The pipe's write end (fopencookie): blocks while the pipe is full; 0
 * once the client went (the FILE's error then). */
static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
	struct reply_stream *st = cookie;
	size_t done = 0;
	pthread_mutex_lock(&st->mu);
	if (!st->ring && !st->aborted && !(st->ring = malloc(REPLY_STREAM_BYTES)))
		st->aborted = 1;
	while (done < n) {
		while (st->len == REPLY_STREAM_BYTES && !st->aborted) {
			if (!st->committed && !st->full) {
				st->full = 1; /* the first piece: the connection sends the headers */
				pthread_cond_broadcast(&st->cv);
			}
			pthread_cond_wait(&st->cv, &st->mu);
		}
		if (st->aborted)
			break;
		size_t tail = (st->head + st->len) % REPLY_STREAM_BYTES;
		size_t room = REPLY_STREAM_BYTES - st->len, run = REPLY_STREAM_BYTES - tail;
		size_t k = n - done < room ? n - done : room;
		if (k > run)
			k = run;
		memcpy(st->ring + tail, buf + done, k);
		st->len += k;
		done += k;
		pthread_cond_broadcast(&st->cv);
	}
	int gone = st->aborted;
	pthread_mutex_unlock(&st->mu);
	return gone ? 0 : (ssize_t)n; /* 0: an error (fopencookie(3): never negative) */
}

static void *stream_main(void *arg)
{
	struct reply_stream *st = arg;
	st->fn(st->w, st->ctx, &st->r);
	if (st->r.f)
		reply_close(&st->r);
	pthread_mutex_lock(&st->mu);
	st->done = 1;
	if (st->committed && (st->r.body || st->r.status != st->hdr.status)) {
		st->failed = 1;
		if (!st->err[0])
			snprintf(st->err, sizeof(st->err), "the reply could not be finished (status %d)", st->r.status);
	}
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	stream_unref(st);
	return NULL;
}

/* r's headers, copied (note may point into r itself). */
static void copy_reply_head(struct reply *to, const struct reply *from)
{
	to->status = from->status;
	to->type = from->type;
	memcpy(to->disposition, from->disposition, sizeof(to->disposition));
	memcpy(to->note_buf, from->note_buf, sizeof(to->note_buf));
	to->note = from->note == from->note_buf ? to->note_buf : from->note;
}

int reply_stream(struct web *w, reply_fn fn, void *ctx, void (*ctx_free)(void *), struct reply *r,
                 struct reply_stream **out)
{
	*out = NULL;
	struct reply_stream *st = calloc(1, sizeof(*st));
	pthread_t t;
	pthread_attr_t attr;
	if (!st) {
		if (ctx_free)
			ctx_free(ctx);
		reply_error(r, 500, 0, "out of memory");
		return -1;
	}
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	st->refs = 2;
	st->w = w;
	st->fn = fn;
	st->ctx = ctx;
	st->ctx_free = ctx_free;
	st->r.st = st;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &attr, stream_main, st);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		st->refs = 1;
		stream_unref(st);
		reply_error(r, 503, 0, "no thread for the reply: %s", strerror(rc));
		return -1;
	}
	pthread_mutex_lock(&st->mu);
	while (!st->done && !st->full)
		pthread_cond_wait(&st->cv, &st->mu);
	if (!st->done) { /* the first piece is ready: the headers go as they are now */
		st->committed = 1;
		copy_reply_head(&st->hdr, &st->r);
		pthread_mutex_unlock(&st->mu);
		*out = st;
		return 0;
	}
	pthread_mutex_unlock(&st->mu);
	/* done within one pipe: a whole reply, as a reply built in memory */
	free(r->body);
	copy_reply_head(r, &st->r);
	if (st->r.body) {
		r->body = st->r.body;
		r->len = st->r.len;
		st->r.body = NULL;
	} else if (st->r.st_used && st->r.status < 500) {
		r->body = malloc(st->len ? st->len : 1);
		r->len = st->len;
		if (!r->body)
			reply_error(r, 500, 0, "out of memory");
		else if (st->len)
			memcpy(r->body, st->ring, st->len);
	} else {
		r->body = NULL;
		r->len = 0;
	}
	stream_unref(st);
	return 0;
}

const struct reply *reply_stream_headers(struct reply_stream *st)
{
	return &st->hdr;
}

void reply_stream_set_access(struct reply_stream *st, struct access_entry *a, const char *url)
{
	st->access = a;
	snprintf(st->url, sizeof(st->url), "%s", url);
}

long reply_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reply_stream *st = cls;
	(void)pos;
	pthread_mutex_lock(&st->mu);
	while (!st->len && !st->done)
		pthread_cond_wait(&st->cv, &st->mu);
	if (st->len) {
		size_t run = REPLY_STREAM_BYTES - st->head, n = st->len < max ? st->len : max;
		if (n > run)
			n = run;
		memcpy(buf, st->ring + st->head, n);
		st->head = (st->head + n) % REPLY_STREAM_BYTES;
		st->len -= n;
		st->sent += n;
		if (st->access)
			st->access->bytes += n;
		pthread_cond_broadcast(&st->cv);
		pthread_mutex_unlock(&st->mu);
		return (long)n;
	}
	int failed = st->failed;
	if (failed)
		fprintf(stderr, "profdb: %s: cut after %llu bytes: %s\n", st->url, (unsigned long long)st->sent,
		        st->err);
	pthread_mutex_unlock(&st->mu);
	return failed ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
}

void reply_stream_free(void *cls)
{
	struct reply_stream *st = cls;
	pthread_mutex_lock(&st->mu);
	st->aborted = 1;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	stream_unref(st);
}

/* ---- a reply --------------------------------------------------------------------- */

int reply_open(struct reply *r, int status, const char *type)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->status = status;
	r->type = type;
	if (r->st && !r->st_used) { /* reply_stream's: the first body goes through its pipe */
		r->st_used = 1;
		r->f = fopencookie(r->st, "w", (cookie_io_functions_t){.write = stream_write});
		if (!r->f) {
			r->status = 500;
			return -1;
		}
		r->st->open = 1;
		return 0;
	}
	r->f = open_memstream(&r->body, &r->len);
	if (!r->f) {
		r->status = 500;
		return -1;
	}
	return 0;
}

int reply_close(struct reply *r)
{
	if (!r->f)
		return -1;
	int bad = ferror(r->f);
	bad |= fclose(r->f) != 0;
	r->f = NULL;
	if (r->st && r->st->open) {
		struct reply_stream *st = r->st;
		st->open = 0;
		if (!bad)
			return 0;
		pthread_mutex_lock(&st->mu);
		if (!st->err[0])
			snprintf(st->err, sizeof(st->err), "%s", st->aborted ? "the client went" : "a write failed");
		pthread_mutex_unlock(&st->mu);
		r->status = 500; /* before the headers went: a 500; after, a cut */
		r->type = "text/plain; charset=utf-8";
		return -1;
	}
	if (bad) {
		free(r->body);
		r->body = NULL;
		r->len = 0;
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
		return -1;
	}
	return 0;
}

void reply_error(struct reply *r, int status, int json, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->f)
		reply_close(r);
	if (r->st) {
		pthread_mutex_lock(&r->st->mu);
		int committed = r->st->committed;
		snprintf(r->st->err, sizeof(r->st->err), "%d: %.280s", status, msg);
		pthread_mutex_unlock(&r->st->mu);
		if (committed) { /* the headers went: only a cut can say it now */
			r->status = status;
			return;
		}
	}
	r->disposition[0] = '\0';
	r->note = NULL;
	/* a streamed reply's page of error is whole in memory, never in its
	 * pipe: a 5xx's bytes in the pipe are a render's that failed midway,
	 * which are dropped (the error pages of 500 and 503 went empty) */
	if (r->st)
		r->st_used = 1;
	if (json) {
		reply_json(r, json_pack("{s:o, s:i}", "error", view_json_guest(msg), "status", status));
		r->status = status;
		return;
	}
	if (reply_open(r, status, "text/html; charset=utf-8") != 0)
		return;
	fprintf(r->f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%d "
	              "\xe2\x80\x94 profsvc</title>\n<style>\n%s</style></head>\n<body>\n<header><h1>"
	              "<a href=\"/\">profsvc</a> \xc2\xb7 error %d</h1></header>\n<main>\n"
	              "<p class=\"error\" id=\"error\">",
	        status, web_css, status);
	markup_text(r->f, msg);
	fputs("</p>\n<p><a href=\"/\">the run catalogue</a></p>\n</main></body></html>\n", r->f);
	reply_close(r);
}

void reply_json(struct reply *r, json_t *v)
{
	if (r->f)
		reply_close(r);
	free(r->body);
	r->body = json_dump_inert(v);
	json_decref(v);
	r->len = r->body ? strlen(r->body) : 0;
	r->type = "application/json";
	if (!r->body) {
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
	} else if (!r->status) {
		r->status = 200;
	}
}

char *json_dump_inert(const json_t *v)
{
	/* guest text as view_json_guest says; any value (api.c writes a
	 * document piece by piece); inert as util/safe_text makes it */
	return safe_text_json_inert_doc(view_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY));
}
