/*
 * halvm_writer.c - request-exact model of the HaLVM profile writer.
 *
 * The odd parts are deliberate, because they are what the real guest does
 * and what the backend and store must cope with:
 *  - the status block is built in the first 512 bytes of the data page, so
 *    after a flush the partial sector kept for the next write sits in front
 *    of stale status-block words, and those words go to disk past the end of
 *    the file;
 *  - after a flush the same sector is written again, longer, by the next
 *    write (last write wins).
 *
 * May call: the status block's layout (profile/disk/status_block.h), libc;
 * its requests go out through the caller's callbacks.
 */
#include "config.h"

#include <string.h>

#include "profile/disk/status_block.h"
#include "halvm_writer.h"

void halvm_writer_init(struct halvm_writer *w, int word_size, halvm_submit_fn submit, void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->block = 1;
	w->word_size = word_size == 4 ? 4 : 8;
	w->submit = submit;
	w->ctx = ctx;
}

static int write_status(struct halvm_writer *w, int closed)
{
	status_block_encode(w->page, w->size, (uint64_t)closed, w->word_size);
	return w->submit(w->ctx, 0, w->page, 1);
}

static unsigned sectors_for(size_t bytes)
{
	return (unsigned)((bytes + HALVM_SECTOR_SIZE - 1) / HALVM_SECTOR_SIZE);
}

int halvm_writer_append(struct halvm_writer *w, const void *data, size_t len)
{
	const uint8_t *p = data;
	int rc;

	while (len > 0) {
		size_t n = HALVM_PAGE_SIZE - w->fill;
		if (n > len)
			n = len;
		memcpy(w->page + w->fill, p, n);
		w->fill += n;
		w->size += n;
		p += n;
		len -= n;
		if (w->fill == HALVM_PAGE_SIZE) {
			if ((rc = w->submit(w->ctx, w->block, w->page, HALVM_PAGE_SIZE / HALVM_SECTOR_SIZE)))
				return rc;
			if ((rc = write_status(w, 0)))
				return rc;
			w->block += HALVM_PAGE_SIZE / HALVM_SECTOR_SIZE;
			w->fill = 0;
		}
	}
	return 0;
}

int halvm_writer_flush(struct halvm_writer *w)
{
	uint8_t partial[HALVM_SECTOR_SIZE];
	size_t whole = w->fill / HALVM_SECTOR_SIZE, keep = w->fill % HALVM_SECTOR_SIZE;
	int rc;

	if (w->fill > 0 && (rc = w->submit(w->ctx, w->block, w->page, sectors_for(w->fill))))
		return rc;
	memcpy(partial, w->page + whole * HALVM_SECTOR_SIZE, keep);
	if ((rc = write_status(w, 0)))
		return rc;
	w->block += whole;
	memcpy(w->page, partial, keep); /* the rest of that sector: stale status words */
	w->fill = keep;
	return 0;
}

int halvm_writer_close(struct halvm_writer *w)
{
	int rc;

	if (w->fill > 0 && (rc = w->submit(w->ctx, w->block, w->page, sectors_for(w->fill))))
		return rc;
	return write_status(w, 1);
}

int halvm_writer_replay(struct halvm_writer *w, const uint8_t *file, size_t len, int kind,
                        uint64_t stop_at)
{
	static const char mark[] = "END_SAMPLE";
	size_t pos = 0;
	int rc;

	while (pos < len) {
		size_t next = len;
		int flush = 0;
		if (kind == HALVM_REPLAY_EVENTLOG) {
			next = len - pos < HALVM_EVENTLOG_FLUSH_BYTES ? len : pos + HALVM_EVENTLOG_FLUSH_BYTES;
			flush = 1;
		} else if (kind == HALVM_REPLAY_HP) {
			/* Up to and including the next END_SAMPLE line. */
			for (size_t i = pos; i + sizeof(mark) - 1 <= len; i++) {
				if ((i == 0 || file[i - 1] == '\n') &&
				    memcmp(file + i, mark, sizeof(mark) - 1) == 0) {
					const uint8_t *nl = memchr(file + i, '\n', len - i);
					next = nl ? (size_t)(nl - file) + 1 : len;
					flush = 1;
					break;
				}
			}
		}
		size_t n = next - pos;
		if (w->size + n >= stop_at)
			return halvm_writer_append(w, file + pos, (size_t)(stop_at - w->size));
		if ((rc = halvm_writer_append(w, file + pos, n)))
			return rc;
		pos = next;
		if (flush && (rc = halvm_writer_flush(w)))
			return rc;
	}
	if (w->size >= stop_at)
		return 0;
	return halvm_writer_close(w);
}
