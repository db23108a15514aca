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
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "store_intake.h"
#include "store_internal.h"

#define INTAKE_MAGIC 0x4b495350u /* "PSIK" */
#define INTAKE_VERSION 1
#define INTAKE_KIND_WRITE 1
/* The ring's size: the log file never grows past it.  At the HaLVM
 * writer's pace (a 4 KiB request every 10-100 us) it holds 10-100 ms of
 * requests, far more than the folder lags. */
#define INTAKE_RING (4u << 20)
/* A record is at most this (INTAKE_BATCH_MAX of data, its ops, device rows). */
#define INTAKE_REC_MAX (1u << 20)
/* A fold takes at most this much into one transaction. */
#define INTAKE_GROUP_BYTES (16u << 20)
/*
 * When the folder folds.  A fold is an SQLite transaction, about 100 us of
 * CPU whatever its size; folded every millisecond, those transactions
 * overlapped enough of a guest's round trips to triple their 99th
 * percentile on a 2-core host (make bench).  So records wait: until the
 * guest pauses (no record for QUIET: the end of a burst, such as a HaLVM
 * guest's heap sample, is in SQLite a millisecond later), but never longer
 * than MAX_LAG (a guest writing without pause), or until EAGER bytes wait
 * (a quarter of the ring: the writer never waits for space), or at once
 * when someone waits for the fold (store_quiet, a full ring).
 */
#define INTAKE_QUIET_NS 1000000LL
/* Folded records whose buffers are kept for new batches: enough for the
 * HaLVM writer's (a page and its op: 8 KiB buffers) between two folds, at
 * most 1 MiB (kept for every size, they held 32 MiB beside 128 busy Linux
 * guests). */
#define INTAKE_SPARES 128
#define INTAKE_SPARE_CAP 8192u
#define INTAKE_MAX_LAG_NS 20000000LL
#define INTAKE_EAGER_BYTES (INTAKE_RING / 4)

struct intake_hdr {
	uint32_t magic;
	uint16_t version, flags;
	uint64_t seq;
	uint64_t tag;
	uint32_t len;   /* the whole record, trailer included */
	uint32_t nops;
	uint32_t ndevs;
	uint32_t pad;
};

struct intake_op {
	uint8_t kind;
	uint8_t pad[3];
	uint32_t nsect;
	int64_t device_id;
	uint64_t sector;
};

struct intake_dev {
	int64_t device_id;
	int64_t write_requests, write_bytes, read_requests, read_bytes;
	int64_t flush_requests, discard_requests, errors;
	uint64_t written_end_sector;
	int64_t file_size, status_updated_us;
	int32_t status, closed, word_size, pad;
};

_Static_assert(sizeof(struct intake_hdr) == 40, "intake header layout");
_Static_assert(sizeof(struct intake_op) == 24, "intake op layout");
_Static_assert(sizeof(struct intake_dev) == 104, "intake device layout");

/* One record, in memory from the append until it is folded. */
struct intake_rec {
	struct intake_rec *next;
	size_t len, cap;
	uint64_t off;  /* where it is in the ring */
	uint8_t *data; /* the record as written to the log */
};

struct store_intake {
	char path[4200];     /* the log file */
	int fd;
	uint8_t *map;        /* the ring, MAP_SHARED: an append is a memcpy */
	uint64_t tag;
	uint64_t tail;       /* the end of the newest record in the ring */
	uint64_t next_seq;
	struct intake_rec *cur; /* the open batch's record */
	uint64_t cur_data;      /* its data bytes */

	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t wake;  /* to the folder: work, quiet asked, stop */
	pthread_cond_t idle;  /* from the folder: a group done */
	struct intake_rec *head, *last; /* folded in this order */
	struct intake_rec *spare;       /* folded records, their buffers kept for new batches */
	int nspare;
	size_t queued;
	uint64_t queued_seq;  /* the newest record queued */
	uint64_t folded_seq;  /* the newest record in SQLite */
	int busy;             /* the folder is folding */
	int waiters;          /* threads waiting for a fold: fold now */
	int64_t oldest_ns, newest_ns; /* when the oldest and the newest queued record came */
	int asleep;           /* it waits for a wake-up, not a timeout */
	int hold;             /* the writer uses the connection: do not fold */
	int paused;           /* tests: records stay in the log only */
	int inject;           /* tests: every fold fails as on a full disk */
	int stop;
	int failed;           /* the last fold failed: errcode, errmsg */
	int replaced;         /* the database at the path is not ours: refuse */
	int errcode;
	char errmsg[512];
	/* Devices found deleted by a fold: their handles refuse writes. */
	int64_t gone[32];
	int ngone;
	atomic_uint gone_gen;
	unsigned gone_seen;
	uint64_t folds, folded_records; /* for tests and status */
	uint64_t fold_us;               /* time spent folding */
};

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---- the record ------------------------------------------------------------------ */

static int rec_reserve(struct store *s, struct intake_rec *r, size_t more)
{
	if (r->len + more <= r->cap)
		return 0;
	size_t cap = r->cap ? r->cap : 8192;
	while (cap < r->len + more)
		cap *= 2;
	uint8_t *p = realloc(r->data, cap);
	if (!p)
		return store_fail(s, STORE_ENOMEM, "out of memory taking in a batch");
	r->data = p;
	r->cap = cap;
	return 0;
}

static void rec_free(struct intake_rec *r)
{
	if (r) {
		free(r->data);
		free(r);
	}
}

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
	int rc = rec_reserve(s, in->cur, sizeof(struct intake_hdr));
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
	int rc = rec_reserve(s, r, need);
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

static int add_device(struct store *s, const struct store_device_info *d)
{
	struct intake_rec *r = s->intake->cur;
	struct intake_dev v = {
		.device_id = d->device_id, .write_requests = d->write_requests, .write_bytes = d->write_bytes,
		.read_requests = d->read_requests, .read_bytes = d->read_bytes,
		.flush_requests = d->flush_requests, .discard_requests = d->discard_requests,
		.errors = d->errors, .written_end_sector = d->written_end_sector, .file_size = d->file_size,
		.status_updated_us = d->status_updated_us, .status = (int32_t)d->status, .closed = d->closed,
		.word_size = d->word_size,
	};
	int rc = rec_reserve(s, r, sizeof(v));
	if (rc)
		return rc;
	memcpy(r->data + r->len, &v, sizeof(v));
	r->len += sizeof(v);
	((struct intake_hdr *)r->data)->ndevs++;
	return 0;
}

/* ---- the folder --------------------------------------------------------------------- */

static void device_info_of(const struct intake_dev *v, struct store_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->device_id = v->device_id;
	d->write_requests = v->write_requests;
	d->write_bytes = v->write_bytes;
	d->read_requests = v->read_requests;
	d->read_bytes = v->read_bytes;
	d->flush_requests = v->flush_requests;
	d->discard_requests = v->discard_requests;
	d->errors = v->errors;
	d->written_end_sector = v->written_end_sector;
	d->file_size = v->file_size;
	d->status_updated_us = v->status_updated_us;
	d->status = v->status == STORE_STATUS_OK      ? STORE_STATUS_OK
	            : v->status == STORE_STATUS_CORRUPT ? STORE_STATUS_CORRUPT
	                                                : STORE_STATUS_NONE;
	d->closed = v->closed != 0;
	d->word_size = v->word_size;
}

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
static int apply_records(struct store *s, const uint8_t *const *recs, size_t nrecs, int checked)
{
	size_t nops = 0, ndevs = 0;
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
	size_t k = 0, nd = 0;
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
			while (j < nd && memcmp(devs[j], &id, sizeof(id)))
				j++;
			devs[j] = recs[r] + off;
			nd += j == nd;
		}
	}
	mark_rewritten(ops, nops, tab, slots);

	/* runs of writes to one device, each where the last ended, go
	 * together: whole chunks among them take the data file */
	struct store_segment segs[64];
	unsigned n = 0;
	int64_t dev = -1, cap = -1;
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
	for (size_t i = 0; i < nd && !rc; i++) {
		struct intake_dev v;
		struct store_device_info info;
		memcpy(&v, devs[i], sizeof(v));
		device_info_of(&v, &info);
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
out:
	free(ops);
	free(tab);
	free(devs);
	return rc;
}

static int apply_record(struct store *s, const uint8_t *rec, int checked)
{
	return apply_records(s, &rec, 1, checked);
}

static int set_folded_seq(struct store *s, uint64_t seq)
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
		rc = apply_records(s, recs, n, 0);
	if (!rc)
		rc = set_folded_seq(s, last_seq);
	if (!rc)
		rc = store_txn_commit(s);
	else
		store_txn_rollback(s);
	free(recs);
	return rc;
}

/*
 * Folds what is queued; with mu held on entry and exit, but not while it
 * folds: the writer appends and places records meanwhile, and every step
 * here under mu is O(1) (the writer's round trip waits on mu).  The
 * records stay queued until their transaction commits (reads and the
 * ring's space go by the queue).  0, or the fold's error (in errcode).
 */
static int fold_queued(struct store *s)
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
		struct timespec ta, tb;
		clock_gettime(CLOCK_MONOTONIC, &ta);
		rc = fold(s, first, n, last);
		clock_gettime(CLOCK_MONOTONIC, &tb);
		in->fold_us += (uint64_t)((tb.tv_sec - ta.tv_sec) * 1000000 + (tb.tv_nsec - ta.tv_nsec) / 1000);
		if (rc == STORE_ENOSPC && n > 1) {
			group = bytes / 2;
			rc = 0;
			more = 1;
			continue;
		}
		if (rc)
			break;
		/* folded: out of the queue, their buffers kept for new batches
		 * (a fresh 8 KiB buffer per batch cost page faults in the
		 * guest's round trip) */
		struct intake_rec *next = glast->next;
		struct intake_rec *keep = NULL, *keep_last = NULL, *drop = NULL;
		int nkeep = 0;
		pthread_mutex_lock(&in->mu);
		next = glast->next; /* the writer may have appended after glast */
		in->head = next;
		if (!next)
			in->last = NULL;
		else
			in->oldest_ns = mono_ns(); /* (the records left came after the group began) */
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
			rec_free(q);
		}
		pthread_mutex_lock(&in->mu);
		if (keep) {
			keep_last->next = in->spare;
			in->spare = keep;
			in->nspare += nkeep;
		}
		pthread_cond_broadcast(&in->idle); /* room in the ring */
		pthread_mutex_unlock(&in->mu);
		first = next;
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

static void *folder_main(void *arg)
{
	struct store *s = arg;
	struct store_intake *in = s->intake;

	store_thread_background("store-fold");
	pthread_mutex_lock(&in->mu);
	while (!in->stop) {
		if (in->head && !in->hold && !in->failed && !in->paused) {
			int64_t now = mono_ns();
			int64_t due = in->newest_ns + INTAKE_QUIET_NS;
			if (in->oldest_ns + INTAKE_MAX_LAG_NS < due)
				due = in->oldest_ns + INTAKE_MAX_LAG_NS;
			if (in->waiters || in->queued >= INTAKE_EAGER_BYTES || now >= due) {
				fold_queued(s);
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
				fold_queued(s);
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

/* ---- the writer's side ------------------------------------------------------------------ */

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
			if (fold_queued(s))
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

	for (const struct store_device *d = dirty; d; d = d->next_dirty)
		if ((rc = add_device(s, &d->pending)))
			return rc;
	if ((rc = rec_reserve(s, r, sizeof(uint64_t))))
		return rc;
	if (r->len + sizeof(uint64_t) > INTAKE_REC_MAX)
		return store_fail(s, STORE_EINVAL, "a batch of %zu bytes is too big for the intake log", r->len);
	struct intake_hdr *h = (struct intake_hdr *)r->data;
	h->magic = INTAKE_MAGIC;
	h->version = INTAKE_VERSION;
	h->seq = in->next_seq;
	h->tag = in->tag;
	h->len = (uint32_t)(r->len + sizeof(uint64_t));
	uint64_t hash = XXH3_64bits(r->data, r->len);
	memcpy(r->data + r->len, &hash, sizeof(hash));
	r->len += sizeof(hash);

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
		if (in->failed && !in->busy && fold_queued(s) != 0 && (writes || place(in, r->len) < 0)) {
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
	int64_t now = mono_ns();
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

/* Copies into buf what the writes of rec (its ops on device dev) put in
 * [sector, sector + nsect). */
static void overlay_record(const uint8_t *rec, size_t len, int64_t dev, uint64_t sector, uint64_t nsect,
                           uint8_t *buf)
{
	struct intake_hdr h;
	size_t off = sizeof(h);

	memcpy(&h, rec, sizeof(h));
	for (uint32_t i = 0; i < h.nops && off + sizeof(struct intake_op) <= len; i++) {
		struct intake_op op;
		memcpy(&op, rec + off, sizeof(op));
		const uint8_t *data = rec + off + sizeof(op);
		off += sizeof(op) + (size_t)op.nsect * STORE_SECTOR_SIZE;
		if (op.device_id != dev)
			continue;
		uint64_t lo = op.sector > sector ? op.sector : sector;
		uint64_t hi = op.sector + op.nsect < sector + nsect ? op.sector + op.nsect : sector + nsect;
		if (lo < hi)
			memcpy(buf + (lo - sector) * STORE_SECTOR_SIZE, data + (lo - op.sector) * STORE_SECTOR_SIZE,
			       (hi - lo) * STORE_SECTOR_SIZE);
	}
}

int store_intake_overlay(struct store *s, int64_t dev, uint64_t sector, uint64_t nsect, uint8_t *buf)
{
	struct store_intake *in = s->intake;

	pthread_mutex_lock(&in->mu);
	for (const struct intake_rec *r = in->head; r; r = r->next)
		overlay_record(r->data, r->len, dev, sector, nsect, buf);
	pthread_mutex_unlock(&in->mu);
	if (in->cur && in->cur->len > sizeof(struct intake_hdr))
		overlay_record(in->cur->data, in->cur->len, dev, sector, nsect, buf);
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
		rc = apply_record(s, r->data, 0);
	store_intake_abort(s);
	return rc;
}

/* ---- open, recovery, close -------------------------------------------------------------- */

static uint64_t tag_of(const char *store_id)
{
	/* meta.store_id: 32 hex digits; the first 16 name the store here */
	uint64_t v = 0;
	for (int i = 0; i < 16 && store_id[i]; i++) {
		char c = store_id[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 0;
		v = v << 4 | d;
	}
	return v ? v : 1;
}

int store_intake_parse(const uint8_t *p, size_t avail, uint64_t tag, size_t *len)
{
	struct intake_hdr h;

	if (avail < sizeof(h) + sizeof(uint64_t))
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.magic != INTAKE_MAGIC || h.version != INTAKE_VERSION || h.tag != tag || h.len > avail ||
	    h.len < sizeof(h) + sizeof(uint64_t) || h.len % 8 || h.len > INTAKE_REC_MAX)
		return -1;
	uint64_t want, got = XXH3_64bits(p, h.len - sizeof(uint64_t));
	memcpy(&want, p + h.len - sizeof(uint64_t), sizeof(want));
	if (want != got)
		return -1;
	/* the body: ops and their data, then device rows, exactly */
	size_t off = sizeof(h), end = h.len - sizeof(uint64_t);
	for (uint32_t i = 0; i < h.nops; i++) {
		struct intake_op op;
		if (end - off < sizeof(op))
			return -1;
		memcpy(&op, p + off, sizeof(op));
		if (op.kind != INTAKE_KIND_WRITE || op.nsect == 0 ||
		    (uint64_t)op.nsect * STORE_SECTOR_SIZE > end - off - sizeof(op))
			return -1;
		off += sizeof(op) + (size_t)op.nsect * STORE_SECTOR_SIZE;
	}
	if ((end - off) != (size_t)h.ndevs * sizeof(struct intake_dev))
		return -1;
	*len = h.len;
	return 0;
}

static int get_folded_seq(struct store *s, uint64_t *seq)
{
	sqlite3_stmt *st = store_stmt(s, ST_META_GET_INTAKE);
	if (!st)
		return STORE_EIO;
	int rc = sqlite3_step(st);
	*seq = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "reading the intake log's place");
}

struct found {
	uint64_t seq;
	size_t off, len;
};

static int by_seq(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What the log holds beyond what SQLite has: every sound record of this
 * store in the ring, wherever it starts (a record checks itself), whose
 * sequence number is past meta.intake_seq, applied in sequence order, in
 * transactions of up to a group's size.  Sets the next sequence number.
 */
static int recover(struct store *s, int fd, const char *path, uint64_t *applied_out)
{
	struct store_intake *in = s->intake;
	uint64_t folded, top;
	struct found *found = NULL;
	size_t nfound = 0, capfound = 0;
	uint8_t *ring = NULL;
	int rc, foreign = 0;
	struct stat st;

	if ((rc = get_folded_seq(s, &folded)))
		return rc;
	top = folded;
	if (fstat(fd, &st) != 0)
		return store_fail(s, STORE_EIO, "reading the intake log %s: %s", path, strerror(errno));
	/* A ring is INTAKE_RING bytes; a bigger file is not one of ours to
	 * trust further (only its ring's worth is read). */
	size_t size = (size_t)(st.st_size < (off_t)INTAKE_RING + INTAKE_REC_MAX ? st.st_size
	                                                                        : (off_t)INTAKE_RING + INTAKE_REC_MAX);
	if (size && !(ring = malloc(size)))
		return store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
	if (size && pread(fd, ring, size, 0) != (ssize_t)size) {
		rc = store_fail(s, STORE_EIO, "reading the intake log %s: %s", path, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off + sizeof(struct intake_hdr) + 8 <= size;) {
		uint32_t magic;
		memcpy(&magic, ring + off, sizeof(magic));
		size_t len;
		if (magic != INTAKE_MAGIC) {
			off += 8;
			continue;
		}
		struct intake_hdr h;
		memcpy(&h, ring + off, sizeof(h));
		if (store_intake_parse(ring + off, size - off, h.tag, &len) != 0) {
			off += 8;
			continue;
		}
		if (h.tag != in->tag) {
			foreign = 1;
		} else if (h.seq > folded) {
			if (nfound == capfound) {
				capfound = capfound ? capfound * 2 : 64;
				struct found *f = realloc(found, capfound * sizeof(*f));
				if (!f) {
					rc = store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
					goto out;
				}
				found = f;
			}
			found[nfound++] = (struct found){h.seq, off, len};
		}
		off += len;
	}
	if (foreign && !nfound) {
		rc = store_fail(s, STORE_ENOTDB,
		                "the intake log %s holds writes of another store (a database no longer at %s): nothing "
		                "of it can be applied here; move it away to use this database",
		                path, s->path);
		goto out;
	}
	if (nfound)
		qsort(found, nfound, sizeof(*found), by_seq);
	/* in groups of up to a group's bytes, one transaction each */
	const uint8_t **group = malloc((nfound ? nfound : 1) * sizeof(*group));
	if (!group) {
		rc = store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
		goto out;
	}
	for (size_t i = 0; i < nfound && !rc;) {
		size_t n = 0, bytes = 0;
		uint64_t last = top;
		for (; i < nfound && (n == 0 || bytes + found[i].len <= INTAKE_GROUP_BYTES); i++) {
			if (n && found[i].seq == last)
				continue; /* (cannot happen: a seq is written once) */
			group[n++] = ring + found[i].off;
			bytes += found[i].len;
			last = found[i].seq;
		}
		if ((rc = store_txn_begin(s)))
			break;
		if ((rc = apply_records(s, group, n, 1)) || (rc = set_folded_seq(s, last)) || (rc = store_txn_commit(s))) {
			store_txn_rollback(s);
			break;
		}
		*applied_out += n;
		top = last;
	}
	free(group);
	if (rc)
		goto out;
	in->next_seq = top + 1;
	in->folded_seq = in->queued_seq = top;
out:
	free(found);
	free(ring);
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
	in->tag = tag_of(s->store_id);
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
	if ((rc = recover(s, in->fd, in->path, recovered)))
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
		rc = recover(s, ofd, others[i], recovered);
		close(ofd);
		if (rc)
			goto fail;
		unlink(others[i]);
	}
	in->tail = 0;
	if ((rc = map_ring(s)))
		goto fail;
	if (pthread_create(&in->thread, NULL, folder_main, s) != 0) {
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
		rec_free(r);
	}
	while (in->spare) {
		struct intake_rec *r = in->spare;
		in->spare = r->next;
		rec_free(r);
	}
	rec_free(in->cur);
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
