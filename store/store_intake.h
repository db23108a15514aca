/*
 * store_intake.h - the owner's intake log (store_intake.c, the files it
 * names): batches are acknowledged once appended to <db>-intake and folded
 * into SQLite by a thread of the store.  The store's own modules call
 * these (the data path, store_data.c, and store_open.c, which opens and
 * closes it); users of the store only choose it (store_open_opts.intake)
 * and may read its figures.  All of it is defined in store_intake.c.
 */
#ifndef PROFSVC_STORE_INTAKE_H
#define PROFSVC_STORE_INTAKE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A batch of writes bigger than this becomes an SQL transaction instead
 * (bulk data would be written twice for nothing). */
#define INTAKE_BATCH_MAX (32u << 10)

struct store_device;

/* Opens <db>-intake, applies what SQLite lacks of it (*recovered: how many
 * records), starts the folder. */
int store_intake_open(struct store *s, uint64_t *recovered);
/* Folds what it can, stops the folder, empties a log whose every record is
 * folded. */
void store_intake_close(struct store *s);

/* The writer's side of a batch: begin, writes, commit (append: the batch
 * is acknowledged), abort. */
int store_intake_begin(struct store *s);
int store_intake_add_writes(struct store *s, int64_t device_id, const struct store_segment *segs, unsigned n);
uint64_t store_intake_batch_bytes(const struct store *s);
int store_intake_commit(struct store *s, const struct store_device *dirty);
void store_intake_abort(struct store *s);
/* At a batch's start: the handles of devices found deleted are marked,
 * and a database replaced under the folder refuses it.  0, or why. */
int store_intake_check(struct store *s);
/* The folder fails (a full disk) with records not folded: reads must add
 * them (store_intake_overlay) to what SQLite has. */
int store_intake_folding_fails(struct store *s);
/* While folding fails, the writer reads SQLite on the connection the
 * folder retries on: held (on = 1: once no fold is under way) for the
 * read, given back after (on = 0). */
void store_intake_hold(struct store *s, int on);
/* Copies into buf (nsect sectors from sector of device dev) what the
 * acknowledged records not folded yet, then the open batch, wrote there. */
int store_intake_overlay(struct store *s, int64_t dev, uint64_t sector, uint64_t nsect, uint8_t *buf);
/* The batch taken in so far, applied to the SQL transaction that
 * store_promote() began for it. */
int store_intake_replay(struct store *s);

/* Checks one record of the log as recovery reads it (tests/fuzz): 0 and its
 * length when p holds a sound record of the store with this tag. */
int store_intake_parse(const uint8_t *p, size_t avail, uint64_t tag, size_t *len);

struct store_intake_stats {
	uint64_t folds;           /* transactions the folder committed */
	uint64_t folded_records;  /* batches folded by them */
	uint64_t fold_us;         /* the time they took */
	uint64_t queued_bytes;    /* appended, not folded yet */
	uint64_t queued_seq, folded_seq;
	uint64_t recovered;       /* records the open applied from the log */
};
void store_intake_stats(const struct store *s, struct store_intake_stats *out);
/* Tests: with paused set the folder folds nothing, so that records stay in
 * the log only (a writer that then fills the ring, or asks for quiet,
 * waits until it is unset). */
void store_intake_pause(struct store *s, int paused);
/* Tests: with on set every fold fails as on a full disk (STORE_ENOSPC). */
void store_intake_inject_failure(struct store *s, int on);

#endif
