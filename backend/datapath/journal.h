/*
 * journal.h - responses recorded before they touch the ring, so that a
 * restarted backend publishes exactly what a killed one wrote.
 * journal.c calls blkif/ and log.c.
 */
#ifndef PROFSVC_BE_JOURNAL_H
#define PROFSVC_BE_JOURNAL_H

#include <stdint.h>

struct device;

int journal_open(struct device *d, uint32_t ring_ref0);
void journal_close(struct device *d);
void journal_remove(struct device *d);
void journal_recover(struct device *d);
void journal_begin(struct device *d, uint32_t start, uint32_t n, const uint64_t *ids,
                   const uint8_t *ops, const int16_t *status);
void journal_end(struct device *d);

#endif
