/*
 * store_intake_fold.c - layer 3 (the intake log): the folder, the thread
 * of the store that applies queued records to SQLite in groups, one
 * transaction each (store_intake.c says when and why).  Also what applies
 * records for recovery and for a batch that becomes SQL: a group's writes
 * with those a later one repeats left out, each device's row once.
 * May call: store_intake_rec.c, store_chunks.c (the transaction, chunks,
 * device rows), store_conn.c, util/xxh.h.  Called by
 * store_intake_recover.c and store_intake.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/xxh.h"

#include "store_intake_int.h"

/* A record's device is not in the database: deleted while the guest wrote
 * (or, replayed from a damaged log, never there).  Its handle refuses
 * writes from now on. */
static void note_gone(struct store_intake *in, int64_t device_id)
{
	pthread_mutex_lock(&in->mu);
	if (in->ngone < (int)(sizeof(in->gone) / sizeof(in->gone[0])))
		in->gone[in->ngone++] = device_id;
	pthread_mutex_unlock(&in->mu);
	atomic_fetch_add(&in->gone_gen, 1);
}

/* The capacity of a device, or -1 when it does not exist. */
static int64_t device_capacity(struct store *s, int64_t device_id)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEVICE_CAPACITY);
	int64_t cap = -1;

	if (!st)
		return -2;
	sqlite3_bind_int64(st, 1, device_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		cap = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		cap = -2;
	sqlite3_reset(st);
	return cap;
}

/* A write of a group being folded. */
struct group_op {
	int64_t dev;
	uint64_t sector;
	uint32_t nsect;
	int skip;             /* a later write of the group covers exactly these sectors */
	const uint8_t *data;
};

static uint64_t op_key_hash(const struct group_op *o)
{
	return XXH3_64bits(o, offsetof(struct group_op, skip));
}

/* Marks every op that a later op of the group writes again, sector for
 * sector (the HaLVM writer rewrites its status block after every page:
 * one of those per group is enough).  tab: 2 * n slots or more, zeroed. */
static void mark_rewritten(struct group_op *ops, size_t n, size_t *tab, size_t slots)
{
	for (size_t i = n; i-- > 0;) {
		size_t h = (size_t)op_key_hash(&ops[i]) & (slots - 1);
		for (;; h = (h + 1) & (slots - 1)) {
			size_t j = tab[h];
			if (!j) {
				tab[h] = i + 1;
				break;
			}
			const struct group_op *o = &ops[j - 1];
			if (o->dev == ops[i].dev && o->sector == ops[i].sector && o->nsect == ops[i].nsect) {
				ops[i].skip = 1;
				break;
			}
		}
	}
}

/*
 * Applies records (in sequence order) inside the open transaction, as if
 * one after the other, with the work a group saves: a write that a later
 * one of the group repeats exactly is left out, and each device's row is
 * written once, as the last record left it (the rows hold totals, not
 * increments).  checked: the records come from the log file (recovery),
 * so every write is checked against its device as the writer checked it
 * when it came from a guest; writes to a device that does not exist, or
 * out of its range, are left out.
 */
/* The writes of records, in order, and the last row each record gave a
 * device (*nd of them; the last record's row of a device wins). */
static void collect(const uint8_t *const *recs, size_t nrecs, struct group_op *ops, const uint8_t **devs,
                    size_t *nd)
{
	size_t k = 0;

	*nd = 0;
	for (size_t r = 0; r < nrecs; r++) {
		struct intake_hdr h;
		memcpy(&h, recs[r], sizeof(h));
		size_t off = sizeof(h);
		for (uint32_t i = 0; i < h.nops; i++) {
			struct intake_op op;
			memcpy(&op, recs[r] + off, sizeof(op));
			ops[k++] = (struct group_op){op.device_id, op.sector, op.nsect, 0, recs[r] + off + sizeof(op)};
			off += sizeof(op) + (size_t)op.nsect * STORE_SECTOR_SIZE;
		}
		for (uint32_t i = 0; i < h.ndevs; i++, off += sizeof(struct intake_dev)) {
			/* the last record's row of a device wins */
			int64_t id;
			memcpy(&id, recs[r] + off, sizeof(id));
			size_t j = 0;
			while (j < *nd && memcmp(devs[j], &id, sizeof(id)))
				j++;
			devs[j] = recs[r] + off;
			*nd += j == *nd;
		}
	}
}

/* The ops not rewritten later: runs of writes to one device, each where
 * the last ended, go together (whole chunks among them take the data
 * file); checked: as for intake_apply_records. */
static int apply_ops(struct store *s, const struct group_op *ops, size_t nops, int checked)
{
	struct store_segment segs[64];
	unsigned n = 0;
	int64_t dev = -1, cap = -1;
	int rc = 0;

	for (size_t i = 0; i < nops && !rc; i++) {
		const struct group_op *op = &ops[i];
		if (op->skip)
			continue;
		if (n && (op->dev != dev || n == 64 || segs[n - 1].sector + segs[n - 1].nsect != op->sector)) {
			rc = store_apply_writes(s, dev, segs, n);
			n = 0;
			if (rc)
				break;
		}
		if (checked && op->dev != dev) {
			cap = device_capacity(s, op->dev);
			if (cap == -2) {
				rc = store_sqlite_fail(s, "replaying the intake log");
				break;
			}
		}
		dev = op->dev;
		if (checked && (cap < 0 || op->nsect == 0 || op->sector >= (uint64_t)cap ||
		                op->nsect > (uint64_t)cap - op->sector))
			continue;
		segs[n++] = (struct store_segment){op->sector, op->nsect, op->data};
	}
	if (!rc && n)
		rc = store_apply_writes(s, dev, segs, n);
	return rc;
}

/* The devices' rows as the records left them. */
static int apply_devs(struct store *s, const uint8_t *const *devs, size_t nd)
{
	int rc = 0;

	for (size_t i = 0; i < nd && !rc; i++) {
		struct intake_dev v;
		struct store_device_info info;
		memcpy(&v, devs[i], sizeof(v));
		intake_device_info_of(&v, &info);
		int changed;
		if ((rc = store_device_row_write(s, &info, &changed)))
			break;
		if (!changed) {
			/* deleted under the writer: what was written for it goes */
			rc = store_device_data_drop(s, v.device_id);
			if (s->intake)
				note_gone(s->intake, v.device_id);
		}
	}
	return rc;
}

int intake_apply_records(struct store *s, const uint8_t *const *recs, size_t nrecs, int checked)
{
	size_t nops = 0, ndevs = 0, nd = 0;
	int rc = 0;

	for (size_t r = 0; r < nrecs; r++) {
		struct intake_hdr h;
		memcpy(&h, recs[r], sizeof(h));
		nops += h.nops;
		ndevs += h.ndevs;
	}
	size_t slots = 16;
	while (slots < 2 * nops)
		slots *= 2;
	struct group_op *ops = malloc((nops ? nops : 1) * sizeof(*ops));
	size_t *tab = calloc(slots, sizeof(*tab));
	const uint8_t **devs = malloc((ndevs ? ndevs : 1) * sizeof(*devs));
	if (!ops || !tab || !devs) {
		rc = store_fail(s, STORE_ENOMEM, "out of memory folding the intake log");
		goto out;
	}
	collect(recs, nrecs, ops, devs, &nd);
	mark_rewritten(ops, nops, tab, slots);
	rc = apply_ops(s, ops, nops, checked);
	if (!rc)
		rc = apply_devs(s, devs, nd);
out:
	free(ops);
	free(tab);
	free(devs);
	return rc;
}

int intake_apply_record(struct store *s, const uint8_t *rec, int checked)
{
	return intake_apply_records(s, &rec, 1, checked);
}

int intake_set_folded_seq(struct store *s, uint64_t seq)
{
	sqlite3_stmt *st = store_stmt(s, ST_META_SET_INTAKE);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, (int64_t)seq);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "recording what the intake log folded");
}

/* Folds records [first, up to n of them] in one transaction. */
static int fold(struct store *s, struct intake_rec *first, size_t n, uint64_t last_seq)
{
	if (s->intake->inject)
		return store_fail(s, STORE_ENOSPC, "folding the intake log: no space left (injected by a test)");
	const uint8_t **recs = malloc(n * sizeof(*recs));
	if (!recs)
		return store_fail(s, STORE_ENOMEM, "out of memory folding the intake log");
	size_t i = 0;
	for (struct intake_rec *r = first; r && i < n; r = r->next)
		recs[i++] = r->data;
	int rc = store_txn_begin_unchecked(s);
	if (!rc)
		rc = intake_apply_records(s, recs, n, 0);
	if (!rc)
		rc = intake_set_folded_seq(s, last_seq);
	if (!rc)
		rc = store_txn_commit(s);
	else
		store_txn_rollback(s);
	free(recs);
	return rc;
}

/* fold(), its time counted in fold_us. */
static int fold_timed(struct store *s, struct intake_rec *first, size_t n, uint64_t last_seq)
{
	struct store_intake *in = s->intake;
	struct timespec ta, tb;

	clock_gettime(CLOCK_MONOTONIC, &ta);
	int rc = fold(s, first, n, last_seq);
	clock_gettime(CLOCK_MONOTONIC, &tb);
	in->fold_us += (uint64_t)((tb.tv_sec - ta.tv_sec) * 1000000 + (tb.tv_nsec - ta.tv_nsec) / 1000);
	return rc;
}

/* The n records from first to glast (bytes in all, the newest last) are
 * folded: out of the queue, their buffers kept for new batches (a fresh
 * 8 KiB buffer per batch cost page faults in the guest's round trip).
 * With mu not held; returns the record after glast. */
static struct intake_rec *retire(struct store_intake *in, struct intake_rec *first, struct intake_rec *glast,
                                 size_t n, size_t bytes, uint64_t last)
{
	struct intake_rec *next;
	struct intake_rec *keep = NULL, *keep_last = NULL, *drop = NULL;
	int nkeep = 0;
	pthread_mutex_lock(&in->mu);
	next = glast->next; /* the writer may have appended after glast */
	in->head = next;
	if (!next)
		in->last = NULL;
	else
		in->oldest_ns = intake_mono_ns(); /* (the records left came after the group began) */
	in->queued -= bytes;
	in->folded_seq = last;
	in->folds++;
	in->folded_records += n;
	int room = INTAKE_SPARES - in->nspare;
	pthread_mutex_unlock(&in->mu);
	for (struct intake_rec *q = first, *qn; q != next; q = qn) {
		qn = q->next;
		if (nkeep < room && q->cap <= INTAKE_SPARE_CAP) {
			q->next = keep;
			keep = q;
			if (!keep_last)
				keep_last = q;
			nkeep++;
		} else {
			q->next = drop;
			drop = q;
		}
	}
	while (drop) {
		struct intake_rec *q = drop;
		drop = q->next;
		intake_rec_free(q);
	}
	pthread_mutex_lock(&in->mu);
	if (keep) {
		keep_last->next = in->spare;
		in->spare = keep;
		in->nspare += nkeep;
	}
	pthread_cond_broadcast(&in->idle); /* room in the ring */
	pthread_mutex_unlock(&in->mu);
	return next;
}

/*
 * Folds what is queued; with mu held on entry and exit, but not while it
 * folds: the writer appends and places records meanwhile, and every step
 * here under mu is O(1) (the writer's round trip waits on mu).  The
 * records stay queued until their transaction commits (reads and the
 * ring's space go by the queue).  0, or the fold's error (in errcode).
 */
int intake_fold_queued(struct store *s)
{
	struct store_intake *in = s->intake;
	int rc = 0;

	if (in->busy || !in->head)
		return 0; /* the other thread folds: its result counts */
	struct intake_rec *first = in->head, *end = in->last; /* the producer appends after end */
	in->busy = 1;
	pthread_mutex_unlock(&in->mu);
	/* The folder's thread: store_fail() writes its messages into the
	 * folder's buffer, not into the store's, which belongs to the writer's
	 * thread. */
	struct store_errbuf_to was = store_errbuf_redirect((struct store_errbuf_to){in, in->errmsg});
	/*
	 * The database replaced or removed under us: what was acknowledged is
	 * still folded, into the file we have open (wherever it went now), and
	 * new batches are refused (the writer's own check says why and what to
	 * do), as they were before the log.  A clean stop then empties the
	 * log; after a crash the next start refuses it, as another store's.
	 */
	int replaced = store_identity_stat(s) != 0, refuse = 0;
	/*
	 * A group's transaction needs room for all of it (pages, then the
	 * WAL's copy of them); on a nearly full disk a smaller one may still
	 * fit.  So a group the disk had no room for is tried again in halves,
	 * down to one record: what fits is folded (and its ring space freed),
	 * and the folder does not wait for a large hole to appear at once.
	 */
	size_t group = INTAKE_GROUP_BYTES;
	for (int more = 1; more && !rc;) {
		/* one transaction of up to a group's bytes */
		size_t n = 0, bytes = 0;
		struct intake_rec *r = first, *glast = first;
		for (; r && (n == 0 || bytes + r->len <= group); r = r->next) {
			bytes += r->len;
			glast = r;
			n++;
			if (r == end)
				break;
		}
		more = glast != end;
		uint64_t last = ((struct intake_hdr *)glast->data)->seq;
		rc = fold_timed(s, first, n, last);
		if (rc == STORE_ENOSPC && n > 1) {
			group = bytes / 2;
			rc = 0;
			more = 1;
			continue;
		}
		if (rc)
			break;
		first = retire(in, first, glast, n, bytes, last);
	}
	if (!rc && replaced)
		refuse = store_identity_stat(s); /* its message, for the writer */
	store_errbuf_redirect(was);
	pthread_mutex_lock(&in->mu);
	in->busy = 0;
	if (refuse) {
		in->replaced = 1;
		in->errcode = refuse;
	}
	in->failed = rc != 0;
	if (rc)
		in->errcode = rc;
	pthread_cond_broadcast(&in->idle);
	return rc;
}

void *intake_folder_main(void *arg)
{
	struct store *s = arg;
	struct store_intake *in = s->intake;

	store_thread_background("store-fold");
	pthread_mutex_lock(&in->mu);
	while (!in->stop) {
		if (in->head && !in->hold && !in->failed && !in->paused) {
			int64_t now = intake_mono_ns();
			int64_t due = in->newest_ns + INTAKE_QUIET_NS;
			if (in->oldest_ns + INTAKE_MAX_LAG_NS < due)
				due = in->oldest_ns + INTAKE_MAX_LAG_NS;
			if (in->waiters || in->queued >= INTAKE_EAGER_BYTES || now >= due) {
				intake_fold_queued(s);
				continue;
			}
			struct timespec t = {(time_t)(due / 1000000000LL), (long)(due % 1000000000LL)};
			pthread_cond_timedwait(&in->wake, &in->mu, &t);
			continue;
		}
		if (in->head && in->failed && !in->hold) {
			/* A failing fold is retried by the writer's calls (they
			 * report its error); here only now and then. */
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			t.tv_sec += 1;
			if (pthread_cond_timedwait(&in->wake, &in->mu, &t) == ETIMEDOUT && !in->hold && !in->stop &&
			    !in->busy && in->head)
				intake_fold_queued(s);
			continue;
		}
		/* nothing to fold (or the writer holds the connection): until a
		 * record, a drain or the stop wakes it */
		in->asleep = 1;
		pthread_cond_wait(&in->wake, &in->mu);
		in->asleep = 0;
	}
	pthread_mutex_unlock(&in->mu);
	return NULL;
}
