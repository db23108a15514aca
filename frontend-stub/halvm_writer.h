/*
 * halvm_writer.h - the HaLVM runtime's profile-file writer, reproduced
 * request for request (docs/halvm-profile-protocol.md, "Write pattern"):
 * a 4096-byte page, data from sector 1, the status block rewritten in
 * sector 0 after every full page, flush and close.
 *
 * It only generates the write requests; a callback delivers them (to the
 * store directly in tests, to a blkif ring in the frontend-stub, to a raw
 * image for reference disks).
 */
#ifndef PROFSVC_HALVM_WRITER_H
#define PROFSVC_HALVM_WRITER_H

#include <stddef.h>
#include <stdint.h>

#define HALVM_PAGE_SIZE 4096u
#define HALVM_SECTOR_SIZE 512u

/* One BLKIF_OP_WRITE: nsect sectors of data at sector.  Non-zero aborts. */
typedef int (*halvm_submit_fn)(void *ctx, uint64_t sector, const void *data, unsigned nsect);

struct halvm_writer {
	uint8_t page[HALVM_PAGE_SIZE];
	size_t fill;        /* bytes of the page holding file data */
	uint64_t block;     /* sector the page will be written at */
	uint64_t size;      /* bytes appended to the file so far */
	int word_size;      /* 8 (x86_64 guest) or 4 (32-bit guest) */
	halvm_submit_fn submit;
	void *ctx;
};

void halvm_writer_init(struct halvm_writer *w, int word_size, halvm_submit_fn submit, void *ctx);
/* fwrite/fprintf: appends, writing every page that fills. */
int halvm_writer_append(struct halvm_writer *w, const void *data, size_t len);
/* fflush: the partial page, then the status block; keeps the partial sector. */
int halvm_writer_flush(struct halvm_writer *w);
/* fclose: what is left, then the status block with closed = 1. */
int halvm_writer_close(struct halvm_writer *w);

/* What halvm_writer_replay writes (0 and 1 as the is_hp it once took). */
#define HALVM_REPLAY_PROF 0
#define HALVM_REPLAY_HP 1
#define HALVM_REPLAY_EVENTLOG 2

/* GHC's eventlog (+RTS -l, on xvdp3) is handed to the file a buffer of
 * events at a time and flushed after each: the status block moves on
 * every this many bytes, mostly inside an event. */
#define HALVM_EVENTLOG_FLUSH_BYTES 2048u

/*
 * Replays a whole profile the way GHC's RTS writes it: a heap profile (.hp)
 * is flushed after every END_SAMPLE line; an eventlog after every
 * HALVM_EVENTLOG_FLUSH_BYTES; a time profile is written and closed at
 * exit.  stop_at (or UINT64_MAX) ends the replay like a crash once that
 * many file bytes were appended: no close.  Returns 0, or the first
 * non-zero submit result.
 */
int halvm_writer_replay(struct halvm_writer *w, const uint8_t *file, size_t len, int kind,
                        uint64_t stop_at);

#endif
