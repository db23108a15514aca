/*
 * status_block.h - the HaLVM profiling status block (sector 0 of xvdp1 and
 * xvdp2): encode, decode, and majority-vote salvage.
 *
 * Layout (../docs/halvm-profile-protocol.md): 512 bytes of guest machine
 * words, little-endian, 8 bytes on x86_64 and 4 bytes on a 32-bit guest.
 * word 0 = file size, word 1 = closed flag, then for i = 2, 4, ... to the
 * end of the block: word i = size ^ i, word i+1 = closed ^ i.
 */
#ifndef PROFSVC_STATUS_BLOCK_H
#define PROFSVC_STATUS_BLOCK_H

#include <stdint.h>

#define STATUS_BLOCK_SIZE 512

enum status_block_result {
	STATUS_BLOCK_VALID,   /* every copy agrees (8- or 4-byte words) */
	STATUS_BLOCK_EMPTY,   /* all zero: the guest never wrote it */
	STATUS_BLOCK_CORRUPT, /* copies disagree: convert-profile refuses it */
};

struct status_block {
	uint64_t size;   /* file size in bytes */
	uint64_t closed; /* raw closed word: 0 = not cleanly closed */
	int word_size;   /* 8 or 4 */
};

enum status_block_result status_block_decode(const uint8_t blk[STATUS_BLOCK_SIZE],
                                             struct status_block *out);
void status_block_encode(uint8_t blk[STATUS_BLOCK_SIZE], uint64_t size, uint64_t closed,
                         int word_size);

/* For a corrupt block: the (size, closed) pair that most copies agree on,
 * over both word layouts.  Returns the number of agreeing copies and sets
 * *total to the number of copies in the winning layout. */
int status_block_majority(const uint8_t blk[STATUS_BLOCK_SIZE], struct status_block *out,
                          int *total);

#endif
