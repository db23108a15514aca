/*
 * store_intake_int.h - what the intake log's own files share (layer 3 of
 * store_internal.h): the record's layout, the ring, the folder's state
 * (struct store_intake) and the functions one file of the log gives the
 * next.  The files, bottom up, each calling only those below it:
 *   store_intake_rec.c      the record: built, sealed, checked, read
 *   store_intake_fold.c     the folder: records applied to SQLite
 *   store_intake_recover.c  what the log holds beyond SQLite, at open
 *   store_intake.c          the writer's side, open and close
 * Not for the rest of the store: it uses store_intake.h.
 */
#ifndef PROFSVC_STORE_INTAKE_INT_H
#define PROFSVC_STORE_INTAKE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "store_internal.h"

#define INTAKE_MAGIC 0x4b495350u /* "PSIK" */
#define INTAKE_VERSION 1
#define INTAKE_KIND_WRITE 1
/* The ring's size: the log file never grows past it.  At the HaLVM
 * writer's pace (a 4 KiB request every 10-100 us) it holds 10-100 ms of
 * requests, far more than the folder lags. */
#define INTAKE_RING (4u << 20)
/* A record is at most this (INTAKE_BATCH_MAX of data (store_intake.h),
 * its ops, device rows). */
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

static inline int64_t intake_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---- store_intake_rec.c --------------------------------------------------------------- */

/* Grows r to hold more bytes past its length. */
int intake_rec_reserve(struct store *s, struct intake_rec *r, size_t more);
void intake_rec_free(struct intake_rec *r);
/* Ends the open batch's record: the rows of the devices it changed, its
 * header (sequence, the store's tag, length) and its trailer. */
int intake_rec_seal(struct store *s, const struct store_device *dirty);
/* A device row of a record as the store's. */
void intake_device_info_of(const struct intake_dev *v, struct store_device_info *d);
/* Copies into buf what the writes of rec (its ops on device dev) put in
 * [sector, sector + nsect). */
void intake_overlay_record(const uint8_t *rec, size_t len, int64_t dev, uint64_t sector, uint64_t nsect,
                           uint8_t *buf);
/* The tag of the store whose meta.store_id is store_id. */
uint64_t intake_tag_of(const char *store_id);
/* 0 and its length when p holds a sound record of the store with this
 * tag (store_intake_parse, as recovery reads the log). */
int intake_rec_parse(const uint8_t *p, size_t avail, uint64_t tag, size_t *len);

/* ---- store_intake_fold.c -------------------------------------------------------------- */

/* Applies records (in sequence order) inside the open transaction;
 * checked: they come from the log file (recovery). */
int intake_apply_records(struct store *s, const uint8_t *const *recs, size_t nrecs, int checked);
int intake_apply_record(struct store *s, const uint8_t *rec, int checked);
/* Records meta.intake_seq: the newest record in SQLite. */
int intake_set_folded_seq(struct store *s, uint64_t seq);
/* With mu held: folds what is queued.  0, or the fold's error. */
int intake_fold_queued(struct store *s);
/* The folder's thread (arg: the store). */
void *intake_folder_main(void *arg);

/* ---- store_intake_recover.c ------------------------------------------------------------- */

/* Applies what the log in fd holds beyond SQLite (*applied_out: how many
 * records more); sets the next sequence number. */
int intake_recover(struct store *s, int fd, const char *path, uint64_t *applied_out);

#endif
