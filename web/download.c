/*
 * download.c - a run's raw profile (/runs/N/prof, hp, eventlog: the bytes
 * the guest wrote), read piece by piece as the client takes it
 * (web_internal.h, download_open).
 *
 * Why pieces, each in a read transaction of its own (view_pieces): a
 * reply read inside one transaction to its end kept that snapshot open
 * for as long as its client took, and a client reading at 100 B/s kept
 * every byte the guests wrote meanwhile in the -wal (26 -> 87 MB over
 * two 16 MB guests, never checkpointed while it read).  Now a piece
 * (DOWNLOAD_PIECE bytes) is read in its own short transaction and copied
 * out, and nothing is held between pieces: the WAL is checkpointed
 * whatever the client's pace.  The pieces are consistent: a finished
 * run's bytes never change, and a running guest only appends, so a
 * download of a running run is the file as it was when the download
 * began (its status block's size then), as export gives it.
 *
 * Why the connection's own thread reads them: a piece is read when
 * libmicrohttpd asks for more (download_read, its content reader), so a
 * slow client holds its connection's thread and one piece of memory,
 * and no thread of its own besides (a reply rendered by reply_stream
 * holds a second one, parked on its full pipe).
 *
 * What the client gets: a download that fits one piece is read at once
 * and sent whole (reply, with its length; an error page when it cannot be
 * read).  A bigger one has its length and its headers sent once its first
 * piece is read (damage in it: an error page, 500); damage or a deleted
 * run found later cuts the reply there: the connection closes short of
 * the length, so no client takes it for a whole file (curl: exit 18), and
 * serve logs "cut after N bytes".  A salvaged read says so in
 * X-Profsvc-Note (known before the first byte).
 *
 * May call: view/view_profile.h, reply.c (web_internal.h), libmicrohttpd's
 * content reader codes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "view/view_profile.h"
#include "web_internal.h"

#define DOWNLOAD_PIECE (256 * 1024)

struct download {
	struct view v;
	struct view_pieces p;
	char *buf;
	size_t len, off;             /* the piece read, and how much of it was given */
	uint64_t sent;
	struct access_entry *access;
	char url[160];
};

struct fill {
	char *buf;
	size_t len;
};

static int to_buf(void *ctx, const void *data, size_t len)
{
	struct fill *f = ctx;
	memcpy(f->buf + f->len, data, len);
	f->len += len;
	return 0;
}

/* The next piece into d->buf: 0, or 1 with the reason in e. */
static int next_piece(struct download *d, struct view_err *e)
{
	struct fill f = {d->buf, 0};
	int rc = view_pieces_next(&d->v, &d->p, DOWNLOAD_PIECE, to_buf, &f, e);
	d->len = f.len;
	d->off = 0;
	return rc;
}

static void download_done(struct download *d)
{
	view_close(&d->v);
	free(d->buf);
	free(d);
}

int download_open(struct web *w, int64_t id, const char *what, struct reply *r, struct download **out,
                  uint64_t *size)
{
	char idbuf[32];
	struct view_err e;
	*out = NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	view_err_init(&e);
	struct download *d = calloc(1, sizeof(*d));
	if (!d || !(d->buf = malloc(DOWNLOAD_PIECE))) {
		free(d);
		reply_error(r, 503, 0, "out of memory");
		return -1;
	}
	/* damaged stored data is the server's trouble (500), not a missing file */
	int unopened = view_open(&d->v, w->db, &e) != 0;
	struct view_run run;
	view_run_at(&run, id);
	if (unopened || view_pieces_begin(&d->v, &run, what, &d->p, &e) != 0 || next_piece(d, &e) != 0) {
		reply_error(r, unopened ? 503 : e.damaged ? 500 : 404, 0, "%s", view_err_first(&e));
		download_done(d);
		return -1;
	}
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->status = 200;
	r->type = "application/octet-stream";
	snprintf(r->disposition, sizeof(r->disposition), "attachment; filename=\"run-%s.%s\"", idbuf, what);
	if (d->p.rd.salvaged) {
		snprintf(r->note_buf, sizeof(r->note_buf), "salvaged: %s", d->p.rd.note);
		r->note = r->note_buf;
	}
	if (d->p.at == d->p.size) { /* one piece: sent whole */
		r->body = d->buf;
		r->len = d->len;
		d->buf = NULL;
		download_done(d);
		return 0;
	}
	*out = d;
	*size = d->p.size;
	return 0;
}

void download_set_access(struct download *d, struct access_entry *a, const char *url)
{
	d->access = a;
	snprintf(d->url, sizeof(d->url), "%s", url);
}

long download_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct download *d = cls;
	(void)pos;
	if (d->off == d->len) {
		struct view_err e;
		view_err_init(&e);
		if (d->p.at == d->p.size)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (next_piece(d, &e) != 0 || d->len == 0) {
			fprintf(stderr, "profdb: %s: cut after %llu bytes: %d: %s\n", d->url,
			        (unsigned long long)d->sent, e.damaged ? 500 : 503,
			        e.n ? view_err_first(&e) : "nothing was read");
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	size_t n = d->len - d->off < max ? d->len - d->off : max;
	memcpy(buf, d->buf + d->off, n);
	d->off += n;
	d->sent += n;
	if (d->access)
		d->access->bytes += n;
	return (long)n;
}

void download_free(void *cls)
{
	download_done(cls);
}
