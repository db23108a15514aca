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
struct chunk_set {
	uint64_t *keys;
	size_t n, cap;
};

/* Admits a write of nsect sectors at sector of device devid if the chunks
 * it touches for the first time fit under limit; *added says which (for
 * quota_release).  0 admitted, -1 refused. */
int quota_admit(struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect, uint64_t limit,
                uint64_t *added);
/* Gives back what quota_admit added (the write failed). */
void quota_release(struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t added);
/* A chunk the store already holds (a restarted backend, a disk back). */
int quota_note_stored(struct chunk_set *cs, uint32_t devid, uint64_t chunk);
/* Bytes of new chunks a write would take (0: it rewrites held ones). */
uint64_t quota_fresh(const struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect);
uint64_t quota_charged(const struct chunk_set *cs);
void quota_free(struct chunk_set *cs);

#endif
