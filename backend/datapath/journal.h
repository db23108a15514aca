/*
 * journal.h - responses recorded before they touch the ring, so that a
 * restarted backend publishes exactly what a killed one wrote.
 * journal.c calls blkif/ and log.c.
 */
#ifndef PROFSVC_BE_JOURNAL_H
#define PROFSVC_BE_JOURNAL_H

#include <stdint.h>

struct be_device;

int be_journal_open(struct be_device *d, uint32_t ring_ref0);
void be_journal_close(struct be_device *d);
void be_journal_remove(struct be_device *d);
void be_journal_recover(struct be_device *d);
void be_journal_begin(struct be_device *d, uint32_t start, uint32_t n, const uint64_t *ids,
                   const uint8_t *ops, const int16_t *status);
void be_journal_end(struct be_device *d);

#endif
