/*
 * store_writeback.c - write-behind for the owner's data file: what bulk
 * writes put there is written out as it comes, and leaves the page cache
 * once it is on disk.
 *
 * Why: whole chunks go to the data file through the page cache
 * (store_slots.c).  Left to the kernel, a guest streaming at page-cache
 * speed grows dom0's page cache by its whole stream; the kernel starts
 * writing back only at its background threshold (10% of dom0's memory,
 * which on a dom0 of 1-4 GiB is a few hundred MiB) and then throttles
 * every writer while its flusher catches up; and every new page the cache
 * takes has to be found first.  make bench saw it as round trips that
 * jump from one moment to the next: writes of 4 MiB batches went from
 * 1.7 ms to 10-80 ms once the page cache had grown by a gigabyte or so, so
 * that the fleet's worst guest waited 4-6 times its median at p99 (a raw
 * image in the page cache the same; one written with O_DIRECT, which
 * never grows the cache, 2).
 *
 * So the owner does what streaming writers do (Linus Torvalds' recipe for
 * it; PostgreSQL's *_flush_after and RocksDB's bytes_per_sync do the first
 * half): once the slots written since the last time span
 * STORE_WRITEBACK_BYTES, their writeback is started
 * (sync_file_range(SYNC_FILE_RANGE_WRITE): start it, do not wait), and the
 * range handed over the time before is waited for and dropped from the
 * page cache (POSIX_FADV_DONTNEED drops only clean pages).  The data
 * file's share of the page cache stays two ranges, the disk works all
 * along, and the pages the cache gives back are the ones the next writes
 * take.  In make bench the fleet's worst guest came down from 4.4 to 1.3
 * times its median, and one guest's stream from 330 to 1400 MB/s.  What
 * a reader wants of the data file later (an export) is read from disk.
 *
 * Why a thread: sync_file_range queues the I/O itself and blocks while
 * the device's queue is full, and the wait for the range before lasts as
 * long as the disk takes.  On the committing thread both were guests'
 * round trips (started inline, one guest's stream went from 310 to 241
 * MB/s).  The writer only notes what it wrote and hands each range over
 * (a queue of RANGES; a thread that far behind gets the newest one
 * grown), and the thread does the rest.
 *
 * Nothing about durability changes: under --durability process a write is
 * safe once it is in the page cache, under power the data file is
 * fdatasync'ed before the commit that names it; this only moves when the
 * kernel writes, and what it keeps cached.  The data file is opened once
 * and closed only by store_close, after this thread has stopped, so the
 * descriptor handed over stays valid.
 *
 * Layer 2 (store_internal.h).  May call: store_conn.c.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

#include "store_internal.h"

#define RANGES 32 /* handed over, not yet taken: past this the newest grows */

struct range {
	int fd;
	off_t lo, hi;
};

struct store_writeback {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct range q[RANGES]; /* handed over and not yet taken, oldest first */
	unsigned head, n;
	int stop;
	uint64_t dropped;       /* ranges written out and dropped (store_writeback_count) */
	/* the writer's side (the store has one user at a time): the slots
	 * written since the last hand-over */
	off_t note_lo, note_hi;
};

/* Waits for a range's writeback (starting it for pages dirty again) and
 * drops its clean pages from the page cache.  Failures change nothing:
 * the kernel writes the pages back and evicts them later, as it would
 * have anyway. */
static void drop_range(const struct range *r)
{
	(void)sync_file_range(r->fd, r->lo, r->hi - r->lo,
	                      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	(void)posix_fadvise(r->fd, r->lo, r->hi - r->lo, POSIX_FADV_DONTNEED);
}

/* Each range's writeback is started as it is taken, and the one before it
 * is then waited for and dropped: the disk always has the next range to
 * work on while the thread waits. */
static void *writeback_main(void *arg)
{
	struct store_writeback *wb = arg;
	struct range prev = {-1, 0, 0};

	store_thread_background("store-wb");

	pthread_mutex_lock(&wb->lock);
	while (!wb->stop) {
		if (wb->n == 0) {
			pthread_cond_wait(&wb->wake, &wb->lock);
			continue;
		}
		struct range r = wb->q[wb->head];
		wb->head = (wb->head + 1) % RANGES;
		wb->n--;
		pthread_mutex_unlock(&wb->lock);
		(void)sync_file_range(r.fd, r.lo, r.hi - r.lo, SYNC_FILE_RANGE_WRITE);
		if (prev.fd >= 0)
			drop_range(&prev);
		pthread_mutex_lock(&wb->lock);
		if (prev.fd >= 0)
			wb->dropped++;
		prev = r;
	}
	pthread_mutex_unlock(&wb->lock);
	/* The last range stays cached: the kernel writes it back as usual. */
	return NULL;
}

int store_writeback_start(struct store *s)
{
	struct store_writeback *wb = calloc(1, sizeof(*wb));

	if (!wb)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	pthread_mutex_init(&wb->lock, NULL);
	pthread_cond_init(&wb->wake, NULL);
	if (pthread_create(&wb->thread, NULL, writeback_main, wb) != 0) {
		pthread_mutex_destroy(&wb->lock);
		pthread_cond_destroy(&wb->wake);
		free(wb);
		return store_fail(s, STORE_ENOMEM, "cannot start the data file's write-behind thread");
	}
	s->writeback = wb;
	return 0;
}

void store_writeback_stop(struct store *s)
{
	struct store_writeback *wb = s->writeback;

	if (!wb)
		return;
	pthread_mutex_lock(&wb->lock);
	wb->stop = 1;
	pthread_cond_signal(&wb->wake);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
	pthread_mutex_destroy(&wb->lock);
	pthread_cond_destroy(&wb->wake);
	free(wb);
	s->writeback = NULL;
}

void store_writeback_note(struct store *s, off_t off, off_t len)
{
	struct store_writeback *wb = s->writeback;

	if (!wb || len <= 0 || s->data_fd < 0)
		return;
	if (wb->note_hi == wb->note_lo) {
		wb->note_lo = off;
		wb->note_hi = off + len;
	} else {
		if (off < wb->note_lo)
			wb->note_lo = off;
		if (off + len > wb->note_hi)
			wb->note_hi = off + len;
	}
	if (wb->note_hi - wb->note_lo < STORE_WRITEBACK_BYTES)
		return;
	pthread_mutex_lock(&wb->lock);
	if (wb->n < RANGES) {
		wb->q[(wb->head + wb->n) % RANGES] = (struct range){s->data_fd, wb->note_lo, wb->note_hi};
		wb->n++;
	} else {
		/* the thread is far behind (a slow disk): the newest range grows */
		struct range *last = &wb->q[(wb->head + wb->n - 1) % RANGES];
		if (wb->note_lo < last->lo)
			last->lo = wb->note_lo;
		if (wb->note_hi > last->hi)
			last->hi = wb->note_hi;
	}
	pthread_cond_signal(&wb->wake);
	pthread_mutex_unlock(&wb->lock);
	wb->note_lo = wb->note_hi = 0;
}

uint64_t store_writeback_count(struct store *s)
{
	struct store_writeback *wb = s->writeback;
	uint64_t n;

	if (!wb)
		return 0;
	pthread_mutex_lock(&wb->lock);
	n = wb->dropped;
	pthread_mutex_unlock(&wb->lock);
	return n;
}
