/*
 * store_intake.c - the owner's intake log: how a batch is acknowledged in a
 * few microseconds and still survives a crash of the writer.
 *
 * Why: a SQLite commit of one HaLVM request (4 KiB of profile, or the
 * 512-byte status block) costs 30-40 us: WAL frames for two overflow pages
 * and the device row, each checksummed, several pwrites and lock calls.
 * The HaLVM writer has one request in flight and the profiled program waits
 * on it, so that is added to the program being measured.  But a crash of
 * the process loses nothing that has reached the kernel: a batch only has
 * to be in the page cache before it is acknowledged.
 *
 * How: store_batch_commit() appends the batch as one record to <db>-intake
 * (a memcpy into the shared mapping of the file; with --durability power
 * also an msync) and returns.  A
 * thread of the store, the folder, applies queued records to SQLite in
 * groups, one transaction per group, which also records the last sequence
 * number applied (meta.intake_seq).  At open the owner applies the records
 * of the log that SQLite does not have yet (a crash between the append and
 * the fold), then serves.
 *
 * The record (little-endian, 8-byte aligned):
 *   header   magic "PSIK", version, seq, the store's tag (from
 *            meta.store_id: a log never applies to another store), length,
 *            counts of ops and device rows
 *   ops      {kind=write, nsect, device_id, sector} + nsect * 512 bytes
 *   devices  the batch's device rows as they stand after it (counters,
 *            status block), written as they are by the fold
 *   trailer  XXH3-64 of everything before it
 * A record is applied whole or not at all (its fold is one transaction, or
 * part of one); one torn by a crash fails its hash and was never
 * acknowledged.  The log is a ring of INTAKE_RING bytes: a record goes
 * at `tail` (or at offset 0 when it does not fit before the end) into
 * space whose records are all folded; a writer that outruns the folder by
 * a whole ring waits for it.  Recovery reads the whole ring, finds every
 * sound record (each is self-checking, wherever it starts), and applies
 * those SQLite does not have, in sequence order.
 *
 * What goes through the log: batches of writes of up to INTAKE_BATCH_MAX
 * bytes.  A batch that reads, discards, keeps a trace packet or writes more
 * becomes an SQL transaction on the spot (store_promote: the folder is
 * drained first, so order is kept), as does everything outside batches
 * (store_quiet).  Bulk data gains nothing from the log (it would be written
 * twice); small requests are what the round trip is made of.
 *
 * Threads: the folder and the writer's thread never use the connection at
 * once.  The folder folds only while the writer has not asked for quiet;
 * store_quiet() waits for the folder to be idle and holds it until the next
 * record is queued.  Errors the folder meets are kept here and given to the
 * writer at its next call; while the folder fails (a full disk) a batch
 * with writes is refused at its commit, after one more try to fold, and
 * reads see what is acknowledged through the records still in memory
 * (store_intake_overlay), as they saw it in SQLite before.
 *
 * Readers see what is folded: the live view lags the guest by the fold
 * (about a millisecond) and never shows what a restart would not have.
 *
 * The log is layer 3 of the store (store_internal.h), in four files, each
 * calling only those before it: the record (store_intake_rec.c), the
 * folder (store_intake_fold.c), recovery (store_intake_recover.c), and
 * this one: the writer's side (commit, quiet, the overlay of reads while
 * folding fails), open and close.
 * May call: those three, store_chunks.c (handles of deleted devices),
 * store_conn.c.  Called by the open batch (store_data.c) and, to open
 * and close it, by store_open.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_intake.h"
#include "store_intake_int.h"

/* ---- the writer's side ------------------------------------------------------------------ */

int store_intake_begin(struct store *s)
{
	struct store_intake *in = s->intake;

	if (!in->cur) {
		pthread_mutex_lock(&in->mu);
		if ((in->cur = in->spare)) {
			in->spare = in->cur->next;
			in->nspare--;
		}
		pthread_mutex_unlock(&in->mu);
		if (!in->cur && !(in->cur = calloc(1, sizeof(*in->cur))))
			return store_fail(s, STORE_ENOMEM, "out of memory starting a batch");
	}
	in->cur->len = 0;
	in->cur_data = 0;
	int rc = intake_rec_reserve(s, in->cur, sizeof(struct intake_hdr));
	if (rc)
		return rc;
	memset(in->cur->data, 0, sizeof(struct intake_hdr));
	in->cur->len = sizeof(struct intake_hdr);
	return 0;
}

uint64_t store_intake_batch_bytes(const struct store *s)
{
	return s->intake->cur_data;
}

int store_intake_add_writes(struct store *s, int64_t device_id, const struct store_segment *segs, unsigned n)
{
	struct store_intake *in = s->intake;
	struct intake_rec *r = in->cur;
	size_t need = 0;

	for (unsigned i = 0; i < n; i++)
		need += sizeof(struct intake_op) + (size_t)segs[i].nsect * STORE_SECTOR_SIZE;
	int rc = intake_rec_reserve(s, r, need);
	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		struct intake_op op = {.kind = INTAKE_KIND_WRITE, .nsect = segs[i].nsect,
		                       .device_id = device_id, .sector = segs[i].sector};
		size_t bytes = (size_t)segs[i].nsect * STORE_SECTOR_SIZE;
		memcpy(r->data + r->len, &op, sizeof(op));
		memcpy(r->data + r->len + sizeof(op), segs[i].data, bytes);
		r->len += sizeof(op) + bytes;
		in->cur_data += bytes;
		((struct intake_hdr *)r->data)->nops++;
	}
	return 0;
}

/* Marks the handles of devices a fold found deleted (the writer's thread). */
static void take_gone(struct store *s)
{
	struct store_intake *in = s->intake;
	unsigned gen = atomic_load(&in->gone_gen);

	if (gen == in->gone_seen)
		return;
	pthread_mutex_lock(&in->mu);
	for (int i = 0; i < in->ngone; i++)
		store_device_mark_gone(s, in->gone[i]);
	in->ngone = 0;
	pthread_mutex_unlock(&in->mu);
	in->gone_seen = gen;
}

/* The folder's error, as the store's (the writer's thread). */
static int report(struct store *s)
{
	struct store_intake *in = s->intake;
	snprintf(s->errmsg, sizeof(s->errmsg), "%s", in->errmsg);
	return in->errcode ? in->errcode : STORE_EIO;
}

/* With mu held: waits until nothing is queued, folding here when the folder
 * has failed (one more try, on this thread).  0, or the fold's error. */
static int drain_locked(struct store *s)
{
	struct store_intake *in = s->intake;

	for (;;) {
		while (in->busy)
			pthread_cond_wait(&in->idle, &in->mu);
		if (!in->head)
			return 0;
		if (in->failed) {
			if (intake_fold_queued(s))
				return -1;
			continue;
		}
		/* the folder may be asleep, or waiting for more: it folds now */
		in->waiters++;
		pthread_cond_signal(&in->wake);
		pthread_cond_wait(&in->idle, &in->mu);
		in->waiters--;
	}
}

int store_quiet(struct store *s)
{
	struct store_intake *in = s->intake;

	if (!in)
		return 0;
	pthread_mutex_lock(&in->mu);
	int rc = drain_locked(s);
	/* Until the next record the connection is the writer's.  Not after a
	 * failure: the caller gives up without touching the connection, and
	 * the folder's own retries must go on (an idle guest's acknowledged
	 * writes reach SQLite once the disk has room again). */
	if (!rc)
		in->hold = 1;
	pthread_mutex_unlock(&in->mu);
	take_gone(s);
	return rc ? report(s) : 0;
}

int store_intake_check(struct store *s)
{
	struct store_intake *in = s->intake;

	take_gone(s);
	pthread_mutex_lock(&in->mu);
	int replaced = in->replaced;
	pthread_mutex_unlock(&in->mu);
	return replaced ? report(s) : 0;
}

/* Where in the ring a record of len bytes can go now without covering a
 * record not folded yet, or -1 (with mu held).  The records not folded
 * lie from the queue's head round to tail. */
static int64_t place(const struct store_intake *in, size_t len)
{
	if (!in->head)
		return in->tail + len <= INTAKE_RING ? (int64_t)in->tail : 0;
	uint64_t h = in->head->off;
	if (in->tail > h) { /* [h, tail) taken: after tail, or from 0 up to h */
		if (in->tail + len <= INTAKE_RING)
			return (int64_t)in->tail;
		return len <= h ? 0 : -1;
	}
	/* wrapped: [h, end) and [0, tail) taken */
	return in->tail + len <= h ? (int64_t)in->tail : -1;
}

int store_intake_commit(struct store *s, const struct store_device *dirty)
{
	struct store_intake *in = s->intake;
	struct intake_rec *r = in->cur;
	int rc, writes = ((struct intake_hdr *)r->data)->nops > 0;

	if ((rc = intake_rec_seal(s, dirty)))
		return rc;
	struct intake_hdr *h = (struct intake_hdr *)r->data;

	/* Room in the ring; while the folder fails, one more try to fold, and
	 * a batch that writes is refused.  A batch without writes (reads: its
	 * data is already read, only its counters are in the record) goes in
	 * if it fits, and is refused, not kept waiting, if it does not: with
	 * the ring full and every fold failing, nothing would ever make room
	 * (a guest reading back its disk on a full dom0 once hung the backend
	 * here), and its reads are answered all the same. */
	pthread_mutex_lock(&in->mu);
	int64_t off;
	for (;;) {
		if (in->failed && !in->busy && intake_fold_queued(s) != 0 && (writes || place(in, r->len) < 0)) {
			rc = -1;
			break;
		}
		if ((off = place(in, r->len)) >= 0)
			break;
		in->waiters++;
		pthread_cond_signal(&in->wake);
		pthread_cond_wait(&in->idle, &in->mu);
		in->waiters--;
	}
	pthread_mutex_unlock(&in->mu);
	if (rc)
		return report(s);
	/* Into the page cache through the mapping: no system call, and no
	 * file time to update per append (a pwrite did both, with a journal
	 * handle for the inode's mtime). */
	memcpy(in->map + off, r->data, r->len);
	if (s->durability == STORE_DURABLE_POWER) {
		long page = sysconf(_SC_PAGESIZE);
		uint64_t from = (uint64_t)off & ~(uint64_t)(page - 1);
		if (msync(in->map + from, (uint64_t)off + r->len - from, MS_SYNC) != 0)
			return store_fail(s, STORE_EIO, "syncing the intake log %s: %s", s->intake->path,
			                  strerror(errno));
	}
	in->next_seq++;
	in->cur = NULL;
	r->off = (uint64_t)off;
	int64_t now = intake_mono_ns();
	pthread_mutex_lock(&in->mu);
	in->tail = (uint64_t)off + r->len;
	r->next = NULL;
	in->newest_ns = now;
	if (in->last) {
		in->last->next = r;
	} else {
		in->head = r;
		in->oldest_ns = now;
	}
	in->last = r;
	in->queued += r->len;
	in->queued_seq = h->seq;
	in->hold = 0;
	/* A folder that waits for a burst to end is not woken (no system
	 * call in the round trip); one with nothing queued is, once. */
	if (in->asleep) {
		in->asleep = 0;
		pthread_cond_signal(&in->wake);
	}
	pthread_mutex_unlock(&in->mu);
	return 0;
}

int store_intake_overlay(struct store *s, int64_t dev, uint64_t sector, uint64_t nsect, uint8_t *buf)
{
	struct store_intake *in = s->intake;

	pthread_mutex_lock(&in->mu);
	for (const struct intake_rec *r = in->head; r; r = r->next)
		intake_overlay_record(r->data, r->len, dev, sector, nsect, buf);
	pthread_mutex_unlock(&in->mu);
	if (in->cur && in->cur->len > sizeof(struct intake_hdr))
		intake_overlay_record(in->cur->data, in->cur->len, dev, sector, nsect, buf);
	return 0;
}

int store_intake_folding_fails(struct store *s)
{
	struct store_intake *in = s->intake;
	pthread_mutex_lock(&in->mu);
	int failed = in->failed && in->head;
	pthread_mutex_unlock(&in->mu);
	return failed;
}

void store_intake_hold(struct store *s, int on)
{
	struct store_intake *in = s->intake;
	pthread_mutex_lock(&in->mu);
	while (on && in->busy)
		pthread_cond_wait(&in->idle, &in->mu);
	in->hold = on;
	pthread_mutex_unlock(&in->mu);
}

void store_intake_abort(struct store *s)
{
	if (s->intake && s->intake->cur) {
		s->intake->cur->len = 0;
		s->intake->cur_data = 0;
	}
}

/* The batch taken in so far, into the SQL transaction store_promote() has
 * just begun (the folder drained and held): it goes on as SQL. */
int store_intake_replay(struct store *s)
{
	struct intake_rec *r = s->intake->cur;
	int rc = 0;

	if (r && r->len > sizeof(struct intake_hdr))
		rc = intake_apply_record(s, r->data, 0);
	store_intake_abort(s);
	return rc;
}

/*
 * The ring as a file of INTAKE_RING bytes, all of them written (zeros, not
 * holes or preallocated extents: a store through the mapping never has to
 * allocate a block, so it never meets a full disk there), mapped shared.
 * Everything in it is folded by now.
 */
static int map_ring(struct store *s)
{
	struct store_intake *in = s->intake;
	static const uint8_t zeros[65536];
	struct stat st;

	if (fstat(in->fd, &st) != 0)
		return store_fail(s, STORE_EIO, "the intake log %s: %s", in->path, strerror(errno));
	if (st.st_size > (off_t)INTAKE_RING && ftruncate(in->fd, INTAKE_RING) != 0)
		return store_fail(s, STORE_EIO, "the intake log %s: %s", in->path, strerror(errno));
	for (off_t off = st.st_size < (off_t)INTAKE_RING ? st.st_size : (off_t)INTAKE_RING; off < (off_t)INTAKE_RING;) {
		size_t n = (size_t)((off_t)INTAKE_RING - off) < sizeof(zeros) ? (size_t)((off_t)INTAKE_RING - off)
		                                                               : sizeof(zeros);
		ssize_t w = pwrite(in->fd, zeros, n, off);
		if (w <= 0)
			return store_fail(s, w < 0 && (errno == ENOSPC || errno == EDQUOT) ? STORE_ENOSPC : STORE_EIO,
			                  "making the intake log %s (%u KiB): %s", in->path, INTAKE_RING >> 10,
			                  w < 0 ? strerror(errno) : "short write");
		off += w;
	}
	in->map = mmap(NULL, INTAKE_RING, PROT_READ | PROT_WRITE, MAP_SHARED, in->fd, 0);
	if (in->map == MAP_FAILED) {
		in->map = NULL;
		return store_fail(s, STORE_ENOMEM, "mapping the intake log %s: %s", in->path, strerror(errno));
	}
	return 0;
}

int store_intake_open(struct store *s, uint64_t *recovered)
{
	struct store_intake *in = calloc(1, sizeof(*in));
	char path[4200];
	int rc;

	*recovered = 0;
	if (!in)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	in->fd = -1;
	/* adaptive: the writer and the folder hold it for a few instructions
	 * each; a waiter spins rather than sleeps (a futex wake-up is several
	 * microseconds in the guest's round trip) */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&in->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&in->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&in->idle, NULL);
	s->intake = in;
	in->tag = intake_tag_of(s->store_id);
	if (s->intake_path)
		snprintf(path, sizeof(path), "%s", s->intake_path);
	else
		snprintf(path, sizeof(path), "%s-intake", s->path);
	snprintf(in->path, sizeof(in->path), "%s", path);
	in->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (in->fd < 0) {
		rc = store_fail(s, errno == ENOSPC ? STORE_ENOSPC : STORE_EIO,
		                "cannot open the intake log %s: %s", path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = store_fail(s, STORE_EIO, "the intake log %s is not a regular file", path);
		goto fail;
	}
	if ((rc = intake_recover(s, in->fd, in->path, recovered)))
		goto fail;
	/* A log an earlier start kept elsewhere (another --durability puts it
	 * in the run directory or beside the database): applied too, then
	 * removed. */
	char other[4200];
	snprintf(other, sizeof(other), "%s-intake", s->path);
	const char *others[] = {strcmp(other, in->path) ? other : NULL, s->intake_other};
	for (int i = 0; i < 2; i++) {
		if (!others[i] || !strcmp(others[i], in->path))
			continue;
		int ofd = open(others[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (ofd < 0)
			continue;
		rc = intake_recover(s, ofd, others[i], recovered);
		close(ofd);
		if (rc)
			goto fail;
		unlink(others[i]);
	}
	in->tail = 0;
	if ((rc = map_ring(s)))
		goto fail;
	if (pthread_create(&in->thread, NULL, intake_folder_main, s) != 0) {
		rc = store_fail(s, STORE_ENOMEM, "cannot start the store's folder thread");
		goto fail;
	}
	in->started = 1;
	return 0;
fail:
	store_intake_close(s);
	return rc;
}

void store_intake_close(struct store *s)
{
	struct store_intake *in = s->intake;

	if (!in)
		return;
	if (in->started) {
		pthread_mutex_lock(&in->mu);
		in->hold = 0;
		/* What cannot be folded now stays in the log for the next open;
		 * a log all folded is emptied, so that a clean stop leaves none
		 * (and a database moved away later leaves no stale log). */
		int drained = drain_locked(s) == 0 && !in->replaced;
		in->stop = 1;
		pthread_cond_signal(&in->wake);
		pthread_mutex_unlock(&in->mu);
		pthread_join(in->thread, NULL);
		if (in->map)
			munmap(in->map, INTAKE_RING);
		in->map = NULL;
		if (drained && in->fd >= 0 && ftruncate(in->fd, 0) != 0) {
			/* a log of folded records is harmless: recovery skips them */
		}
	}
	while (in->head) {
		struct intake_rec *r = in->head;
		in->head = r->next;
		intake_rec_free(r);
	}
	while (in->spare) {
		struct intake_rec *r = in->spare;
		in->spare = r->next;
		intake_rec_free(r);
	}
	intake_rec_free(in->cur);
	if (in->map)
		munmap(in->map, INTAKE_RING);
	if (in->fd >= 0)
		close(in->fd);
	pthread_mutex_destroy(&in->mu);
	pthread_cond_destroy(&in->wake);
	pthread_cond_destroy(&in->idle);
	free(in);
	s->intake = NULL;
}

int store_intake_parse(const uint8_t *p, size_t avail, uint64_t tag, size_t *len)
{
	return intake_rec_parse(p, avail, tag, len);
}

/* A test's knob, set under the lock, the folder woken to see it. */
static void set_knob(struct store *s, int *knob, int v)
{
	struct store_intake *in = s->intake;
	pthread_mutex_lock(&in->mu);
	*knob = v;
	pthread_cond_signal(&in->wake);
	pthread_mutex_unlock(&in->mu);
}

void store_intake_pause(struct store *s, int paused)
{
	if (s->intake)
		set_knob(s, &s->intake->paused, paused);
}

void store_intake_inject_failure(struct store *s, int on)
{
	if (s->intake)
		set_knob(s, &s->intake->inject, on);
}

void store_intake_stats(const struct store *s, struct store_intake_stats *out)
{
	struct store_intake *in = s->intake;

	memset(out, 0, sizeof(*out));
	out->recovered = s->intake_recovered;
	if (!in)
		return;
	pthread_mutex_lock(&in->mu);
	out->folds = in->folds;
	out->fold_us = in->fold_us;
	out->folded_records = in->folded_records;
	out->queued_bytes = in->queued;
	out->folded_seq = in->folded_seq;
	out->queued_seq = in->queued_seq;
	pthread_mutex_unlock(&in->mu);
}
