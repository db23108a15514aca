/*
 * store_checkpoint.c - the owner's background WAL checkpointer.
 *
 * Why a thread: with synchronous=NORMAL a checkpoint fsyncs the WAL and the
 * database.  Done by the writer (SQLite's auto-checkpoint), that fsync and
 * the WAL-to-database copy land on whichever guest request happens to cross
 * the threshold, and they halve bulk throughput.  A second connection in its
 * own thread runs PASSIVE checkpoints instead, concurrently with the writer,
 * which never blocks on them.
 *
 * Why the writer still checkpoints sometimes: a PASSIVE checkpoint only
 * copies the frames that exist when it starts, and SQLite restarts the WAL
 * only once every frame is copied.  A writer that never pauses would let the
 * WAL grow without bound; past STORE_WAL_HARD_FRAMES the writer checkpoints
 * itself (nothing is appended meanwhile, so that one completes).
 *
 * Why it sometimes asks for a RESTART: slots of the data file that a
 * rewrite freed are given back only after the WAL has started over twice
 * (store_slots.c), and under a writer that never pauses PASSIVE
 * checkpoints never let it: the WAL restarted about once per 3-4 GiB of
 * guest data, and a guest rewriting 4 MiB held 2 GiB of dead slots after
 * 2 GB of writes.  While freed slots wait, each checkpoint therefore
 * also tries SQLITE_CHECKPOINT_RESTART without waiting: it fails at once
 * if a reader is still on the WAL (its snapshot may name the slots) or
 * the writer is mid-batch; otherwise it copies the few frames appended
 * since the PASSIVE pass, holding the writer for that long, and the next
 * commit starts the WAL over.
 *
 * Layer 2 (store_internal.h): counts the WAL's generations for the data
 * file's slots (wal_restarted).  May call: store_conn.c.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

#define STORE_WAL_SOFT_FRAMES 1000   /* wake the checkpointer (~4 MiB) */
#define STORE_WAL_HARD_FRAMES 16384  /* writer checkpoints itself (~64 MiB) */

struct store_checkpointer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	sqlite3 *db;
	int pending;  /* work requested */
	int busy;     /* a checkpoint is running */
	int stop;
	int running;
	int copied;   /* frames of this WAL generation already checkpointed */
	int seen;     /* WAL frames at the last commit */
	int wal_fd;   /* <db>-wal, read-only: its header tells restarts */
	uint64_t wal_salts;
	int restarts_wanted; /* WAL restarts freed slots still wait for */
	int64_t freed;       /* slots freed since the checkpointer was last woken */
};

/* Wake the checkpointer (to try a RESTART) after this many freed slots
 * (2 MiB) even if the WAL grew little: a bulk rewrite frees a slot per
 * 64 KiB of guest data but writes only a few WAL frames per batch (three
 * for 4 MiB), so waking by frames alone (every STORE_WAL_SOFT_FRAMES / 4)
 * let 80 batches of rewrites free their slots before the WAL could
 * start over.  A generation per 2 MiB freed keeps what waits to a few
 * MiB while checkpoints are quick; its cost, a checkpoint of the few
 * frames since the last one, per 2 MiB of data. */
#define STORE_FREED_WAKE 32

/* The WAL header's salts: SQLite changes them whenever the WAL starts over
 * (restart, or a new file after a truncating checkpoint), and only then.
 * The frame count alone cannot tell a restart from a small first commit.
 * 0 if unknown. */
static uint64_t wal_generation(struct store *s, struct store_checkpointer *c)
{
	uint8_t h[8];
	uint64_t v = 0;

	if (c->wal_fd < 0) {
		char path[4200];
		snprintf(path, sizeof(path), "%s-wal", s->path);
		c->wal_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (c->wal_fd < 0 || pread(c->wal_fd, h, sizeof(h), 16) != (ssize_t)sizeof(h))
		return 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | h[i];
	return v;
}

static void *checkpoint_main(void *arg)
{
	struct store_checkpointer *c = arg;

	store_thread_background("store-ckpt");
	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->pending && !c->stop)
			pthread_cond_wait(&c->wake, &c->lock);
		if (c->stop)
			break;
		c->pending = 0;
		c->busy = 1;
		pthread_mutex_unlock(&c->lock);
		/* Errors (a busy reader, a full disk) are not fatal here: the
		 * frames stay in the WAL and the next attempt copies them. */
		int log = 0, ckpt = 0;
		pthread_mutex_lock(&c->lock);
		int restart = c->restarts_wanted > 0;
		pthread_mutex_unlock(&c->lock);
		if (restart) {
			/* One checkpoint, not a PASSIVE one and then this: when the
			 * writer or a reader is busy it copies what it may, as
			 * PASSIVE would, and fails (busy: next time).  Each pass
			 * costs two fsyncs; two passes per wake-up kept the thread
			 * busy twice as long, and wake-ups while it is busy are
			 * lost, so freed slots waited longer. */
			sqlite3_busy_timeout(c->db, 0); /* never wait for anyone */
			(void)sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_RESTART, &log, &ckpt);
			sqlite3_busy_timeout(c->db, 1000);
		} else {
			sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &ckpt);
		}
		pthread_mutex_lock(&c->lock);
		c->busy = 0;
		if (ckpt > c->copied)
			c->copied = ckpt;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* A WAL generation more: the data file's slots freed two generations ago
 * may be given back (store_slots_reclaim, at the next batch). */
static void wal_restarted(struct store *s)
{
	s->wal_gen++;
	s->reclaim_due = 1;
}

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
	struct store *s = ctx;
	struct store_checkpointer *c = s->checkpointer;

	(void)name;
	if (c && s->bulk_file) {
		/* The WAL restarted: a generation for the data file's slots. */
		uint64_t salts = wal_generation(s, c);
		if (salts && salts != c->wal_salts) {
			if (c->wal_salts) {
				wal_restarted(s);
				pthread_mutex_lock(&c->lock);
				if (c->restarts_wanted > 0)
					c->restarts_wanted--;
				pthread_mutex_unlock(&c->lock);
			}
			c->wal_salts = salts;
		}
	}
	if (frames >= STORE_WAL_HARD_FRAMES) {
		sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (c) {
			pthread_mutex_lock(&c->lock);
			c->seen = frames;
			pthread_mutex_unlock(&c->lock);
		}
	} else if (c) {
		/* Once per STORE_WAL_SOFT_FRAMES new frames.  A writer that never
		 * pauses (a HaLVM guest commits every 100 us) keeps the WAL from
		 * restarting, so "the WAL is long" stays true after a checkpoint;
		 * waking on it after every commit ran a checkpoint, and its two
		 * fsyncs, per commit: 40% of the round trip. */
		pthread_mutex_lock(&c->lock);
		if (frames < c->seen)
			c->copied = 0; /* the WAL restarted */
		c->seen = frames;
		/* Sooner while freed slots wait for restarts. */
		int every = c->restarts_wanted > 0 ? STORE_WAL_SOFT_FRAMES / 4 : STORE_WAL_SOFT_FRAMES;
		if ((frames >= c->copied + every || (c->restarts_wanted > 0 && c->freed >= STORE_FREED_WAKE)) &&
		    !c->pending && !c->busy) {
			c->pending = 1;
			c->freed = 0;
			pthread_cond_signal(&c->wake);
		}
		pthread_mutex_unlock(&c->lock);
	}
	return SQLITE_OK;
}

void store_checkpointer_want_restarts(struct store *s, int64_t freed)
{
	struct store_checkpointer *c = s->checkpointer;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->restarts_wanted = 2; /* a freed slot waits for two generations */
	c->freed += freed;
	pthread_mutex_unlock(&c->lock);
}

int store_checkpointer_start(struct store *s)
{
	struct store_checkpointer *c = calloc(1, sizeof(*c));

	if (!c)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	if (sqlite3_open_v2(s->path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		int rc = store_fail(s, STORE_EIO, "opening the checkpointer connection: %s",
		                    c->db ? sqlite3_errmsg(c->db) : "out of memory");
		sqlite3_close(c->db);
		free(c);
		return rc;
	}
	sqlite3_busy_timeout(c->db, 1000);
	/* A connection learns the database is in WAL mode only when it first
	 * reads it; until then a checkpoint is a silent no-op. */
	if (sqlite3_exec(c->db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) != SQLITE_OK) {
		int rc = store_fail(s, STORE_EIO, "opening the checkpointer connection: %s",
		                    sqlite3_errmsg(c->db));
		sqlite3_close(c->db);
		free(c);
		return rc;
	}
	c->wal_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	if (pthread_create(&c->thread, NULL, checkpoint_main, c) != 0) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->wake);
		sqlite3_close(c->db);
		free(c);
		return store_fail(s, STORE_ENOMEM, "cannot start the checkpointer thread");
	}
	c->running = 1;
	s->checkpointer = c;
	/* Replaces SQLite's own auto-checkpoint on the writer connection. */
	sqlite3_wal_hook(s->db, wal_hook, s);
	return 0;
}

void store_checkpointer_stop(struct store *s)
{
	struct store_checkpointer *c = s->checkpointer;

	if (!c)
		return;
	sqlite3_wal_hook(s->db, NULL, NULL);
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	if (c->running)
		pthread_join(c->thread, NULL);
	sqlite3_close(c->db);
	if (c->wal_fd >= 0)
		close(c->wal_fd);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	free(c);
	s->checkpointer = NULL;
}
