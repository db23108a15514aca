/*
 * quota.h - what a run's writes cost in dom0's disk (--max-run-bytes):
 * 64 KiB per chunk a run touches.  A set of chunks and its arithmetic;
 * quota.c calls only the store's chunk size.
 */
#ifndef PROFSVC_BE_QUOTA_H
#define PROFSVC_BE_QUOTA_H

#include <stddef.h>
#include <stdint.h>

/* The chunks a run has touched. */
struct be_chunk_set {
	uint64_t *keys;
	size_t n, cap;
};

/* Admits a write of nsect sectors at sector of device devid if the chunks
 * it touches for the first time fit under limit; *added says which (for
 * be_quota_release).  0 admitted, -1 refused. */
int be_quota_admit(struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect, uint64_t limit,
                uint64_t *added);
/* Gives back what be_quota_admit added (the write failed). */
void be_quota_release(struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t added);
/* A chunk the store already holds (a restarted backend, a disk back). */
int be_quota_note_stored(struct be_chunk_set *cs, uint32_t devid, uint64_t chunk);
/* Bytes of new chunks a write would take (0: it rewrites held ones). */
uint64_t be_quota_fresh(const struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect);
uint64_t be_quota_charged(const struct be_chunk_set *cs);
void be_quota_free(struct be_chunk_set *cs);

#endif
