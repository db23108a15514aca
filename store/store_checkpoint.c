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
 * Why the writer proves freed slots unseen itself past a bound: the thread
 * runs at nice 19 (store_thread_background), so that its copy and fsyncs
 * never hold a core a guest's round trip wants, and on a host whose cores
 * are busy at normal priority it is starved.  How long freed slots waited
 * then depended on the scheduler, not on the store: test_faults' slot-space
 * case (4 MiB rewritten 64 times) held 93 MiB of data file in CI's
 * sanitized build at load 6-9 on 2 cores, against 7 MiB idle.  Measured
 * here (sanitized build, two busy loops at nice 0, load 3-5): the thread's
 * checkpoints took 35 ms of wall time on average and up to 300 ms for
 * about 0.3 ms of CPU, 85-90% of it waiting for a CPU
 * (/proc/thread-self/schedstat); its RESTARTs mostly succeeded (80-88%; the
 * rest failed because the writer was mid-batch, none because of a reader),
 * but the generations came up to 0.48 s apart, with up to 716 slots (44 MiB)
 * freed between two.  So the owner counts the slots it freed that wait
 * (freed in this generation or the one before: the older ones are
 * reclaimable), and when they pass STORE_SLOTS_PROVE, the writer itself,
 * at the end of its commit, proves that no reader can see them: one
 * PASSIVE checkpoint that copies the whole WAL (store_space.c says why a
 * whole copy proves it; better than bringing the WAL to a restart, which
 * needs no reader at all on the WAL, and two of them).  The next batch then
 * gives every slot waiting back (store_slots_reclaim).  The checkpoint lock
 * is one: past STORE_SLOTS_HOLD the thread starts no new checkpoint, and
 * the writer waits for one in progress to end (priority inversion: a
 * starved thread holds the writer up, as its RESTART's write lock already
 * did; the backend may not raise the thread's priority: its unit grants no
 * capability).  Its cost is in docs/performance.md.
 *
 * THE INVARIANTS:
 *   (1) A slot the owner frees carries the generation it was freed in
 *       (wal_gen, store_slots.c), and is given back once wal_gen has grown
 *       by two since (two WAL restarts: the transaction that freed it may
 *       itself be the first of a generation), or once a proof covers its
 *       generation (below slots_proven_end).
 *   (2) wal_gen grows by one at each WAL restart the owner's hook sees, and
 *       by one at each proof, so that no slot freed after a proof carries a
 *       generation the proof covers.
 *   (3) waiting[0] + waiting[1] counts at least the slots the owner freed
 *       and (1) does not yet give back: a slot is counted when freed, in
 *       waiting[0]; a restart moves waiting[0] to waiting[1] and drops the
 *       old waiting[1] (now reclaimable); a proof, or store_give_back
 *       when it gave back every slot waiting, drops them all.  (A batch
 *       rolled back leaves its frees counted, and a give-back of only
 *       some drops none: one proof too early, never one too late.)
 *   (4) The proof is decided and made in the hook of the commit that took
 *       waiting past the bound, on the thread that committed, and the
 *       connection is one thread's at a time (store_internal.h, invariant
 *       5): no batch frees a slot between the count and the proof.  So what
 *       the owner's freed slots hold of the data file is at most
 *       STORE_SLOTS_PROVE slots plus one batch's (BATCH_BYTES_MAX, 4 MiB),
 *       whatever the load, unless a reader is behind the newest commit:
 *       its snapshot may name them, and they wait for it (tried again every
 *       STORE_FREED_WAKE slots more; --max-store-bytes bounds that).
 *   (5) The writer waits for the thread only while the thread is in a
 *       checkpoint, which waits for no one (RESTART with no busy timeout;
 *       PASSIVE never waits): the wait ends.
 *
 * Layer 2 (store_internal.h): counts the WAL's generations for the data
 * file's slots (wal_restarted, writer_prove).  May call: store_conn.c.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	/* The writer's own proofs (invariants 3-5). */
	pthread_cond_t idle;  /* busy went back to 0 */
	int hold;             /* the writer is about to checkpoint: start none */
	int64_t waiting[2];   /* slots the owner freed in this generation, and in the one before */
	int64_t prove_at;     /* waiting at which the writer tries again; 0: STORE_SLOTS_PROVE */
	int prove_frames;     /* WAL frames when a proof last failed */
	struct store_slot_proofs stats;
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

/* Slots waiting (invariant 3) past which the thread starts no checkpoint
 * (8 MiB), and past which the writer proves them unseen itself (16 MiB).
 * Idle, the thread's restarts keep what waits below the first (see
 * docs/performance.md): the writer's checkpoints are for a thread that
 * falls behind. */
#define STORE_SLOTS_HOLD 128
#define STORE_SLOTS_PROVE 256
/* A proof that failed is tried again after this many more WAL frames
 * (about 1 MiB) even if no slot was freed meanwhile. */
#define STORE_PROVE_FRAMES 250

static int64_t mono_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

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
		if (c->hold)
			continue; /* the writer checkpoints (invariant 4): it wakes us again after */
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
		pthread_cond_broadcast(&c->idle);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* A WAL generation more: the data file's slots freed two generations ago
 * may be given back (store_slots_reclaim, at the next batch).  c->lock held. */
static void wal_restarted(struct store *s, struct store_checkpointer *c)
{
	s->wal_gen++;
	s->reclaim_due = 1;
	c->waiting[1] = c->waiting[0]; /* invariant 3 */
	c->waiting[0] = 0;
	if (c->restarts_wanted > 0)
		c->restarts_wanted--;
}

/* In the hook of a commit that left more than STORE_SLOTS_PROVE slots
 * waiting (invariant 4): the writer proves that no reader can see them, and
 * the next batch gives them all back.  db: the writer's connection, with no
 * transaction open.  c->lock held on entry and on return. */
static void writer_prove(struct store *s, struct store_checkpointer *c, sqlite3 *db, int frames)
{
	int64_t t0 = mono_us();

	c->hold = 1;
	while (c->busy) /* its checkpoint holds the lock ours needs (invariant 5) */
		pthread_cond_wait(&c->idle, &c->lock);
	int64_t t1 = mono_us();
	pthread_mutex_unlock(&c->lock);
	int log = -1, ckpt = -1;
	int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &ckpt);
	int64_t t2 = mono_us();
	pthread_mutex_lock(&c->lock);
	c->stats.proofs++;
	c->stats.wait_us += t1 - t0;
	c->stats.prove_us += t2 - t1;
	if (t2 - t0 > c->stats.max_us)
		c->stats.max_us = t2 - t0;
	if (rc == SQLITE_OK && log >= 0 && log == ckpt) {
		/* Every reader is at the newest commit, in which no row names a
		 * slot waiting now (invariants 1, 2). */
		s->slots_proven_end = ++s->wal_gen;
		s->reclaim_due = 1;
		c->stats.given += c->waiting[0] + c->waiting[1];
		c->waiting[0] = c->waiting[1] = 0;
		c->restarts_wanted = 0;
		c->prove_at = 0;
		c->hold = 0;
		if (ckpt > c->copied)
			c->copied = ckpt;
	} else {
		/* A reader behind, or another process's checkpoint: again once
		 * STORE_FREED_WAKE more slots wait, or the WAL grew by
		 * STORE_PROVE_FRAMES (a writer that frees nothing more must not
		 * keep the thread held).  The thread stays held meanwhile: the
		 * next try is near, and what it could copy the writer's tries
		 * copy. */
		c->stats.failed++;
		c->prove_at = c->waiting[0] + c->waiting[1] + STORE_FREED_WAKE;
		c->prove_frames = frames;
	}
}

/* After fewer slots wait (a restart, store_give_back): the usual bound
 * again, and the thread free once no proof is near.  c->lock held. */
static void proofs_settle(struct store_checkpointer *c)
{
	int64_t waiting = c->waiting[0] + c->waiting[1];
	if (waiting <= STORE_SLOTS_PROVE)
		c->prove_at = 0;
	if (waiting <= STORE_SLOTS_HOLD)
		c->hold = 0;
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
				pthread_mutex_lock(&c->lock);
				wal_restarted(s, c);
				pthread_mutex_unlock(&c->lock);
			}
			c->wal_salts = salts;
		}
		pthread_mutex_lock(&c->lock);
		proofs_settle(c); /* a restart may have dropped what waits */
		int64_t waiting = c->waiting[0] + c->waiting[1];
		int64_t at = c->prove_at ? c->prove_at : STORE_SLOTS_PROVE;
		/* Near a proof the thread starts no checkpoint: the writer will
		 * want the checkpoint lock (invariant 5). */
		c->hold = waiting > at - (STORE_SLOTS_PROVE - STORE_SLOTS_HOLD);
		if (waiting > at || (c->prove_at && (frames < c->prove_frames ||
		                                      frames >= c->prove_frames + STORE_PROVE_FRAMES)))
			writer_prove(s, c, db, frames);
		pthread_mutex_unlock(&c->lock);
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
		    !c->pending && !c->busy && !c->hold) {
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
	c->waiting[0] += freed; /* invariant 3 */
	pthread_mutex_unlock(&c->lock);
}

void store_checkpointer_given_back(struct store *s)
{
	struct store_checkpointer *c = s->checkpointer;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->waiting[0] = c->waiting[1] = 0; /* invariant 3 */
	proofs_settle(c);
	pthread_mutex_unlock(&c->lock);
}

int store_slot_proofs(struct store *s, struct store_slot_proofs *out)
{
	struct store_checkpointer *c = s->checkpointer;
	memset(out, 0, sizeof(*out));
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	out->waiting = c->waiting[0] + c->waiting[1];
	pthread_mutex_unlock(&c->lock);
	return 0;
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
	pthread_cond_init(&c->idle, NULL);
	if (pthread_create(&c->thread, NULL, checkpoint_main, c) != 0) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->wake);
		pthread_cond_destroy(&c->idle);
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
	pthread_cond_destroy(&c->idle);
	free(c);
	s->checkpointer = NULL;
}
