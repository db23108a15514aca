/*
 * store_export.c - profiles and disk images out of the store, raw images in.
 *
 * Profile extraction reproduces convert-profile exactly (see
 * docs/halvm-profile-protocol.md): read sector 0, refuse it if any XOR copy
 * disagrees, take `size` bytes from byte 512.  Salvage is ours, and says
 * what it did, because a user reading a salvaged profile must know where its
 * end came from.
 *
 * Layer 6 (store_internal.h).  May call: store_catalog.c, store_data.c,
 * store_conn.c, profile/eventlog/ghc_eventlog.c (an unclosed eventlog's cut).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/eventlog/ghc_eventlog.h"
#include "store_export.h"
#include "store_internal.h"

struct copy_ctx {
	uint8_t *buf;
	uint64_t base;
};

static int copy_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct copy_ctx *c = ctx;

	if (data)
		memcpy(c->buf + (off - c->base), data, len);
	else
		memset(c->buf + (off - c->base), 0, len);
	return 0;
}

static int read_bytes(struct store *s, int64_t dev, uint64_t off, void *buf, size_t len)
{
	struct copy_ctx c = {buf, off};

	return store_read_range(s, dev, off, len, copy_cb, &c);
}

static int is_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Salvage without a usable status block: the file is taken to end at the
 * last non-zero byte the guest wrote.  Text profiles never contain NULs, so
 * only genuine trailing data is lost if the file really ended in zeros. */
static int salvage_by_extent(struct store *s, const struct store_device_info *dev,
                             uint64_t *size, char *note, size_t notelen)
{
	uint64_t end = dev->written_end_sector * (uint64_t)STORE_SECTOR_SIZE;
	uint64_t cap = dev->capacity_sectors * (uint64_t)STORE_SECTOR_SIZE;
	uint8_t *buf = malloc(STORE_CHUNK_BYTES);
	uint64_t last = 0; /* one past the last non-zero byte */
	int rc = 0, cut = 0;

	if (!buf)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	if (end > cap)
		end = cap;
	while (end > STORE_SECTOR_SIZE && !last) {
		uint64_t from = end > STORE_CHUNK_BYTES + STORE_SECTOR_SIZE ? end - STORE_CHUNK_BYTES
		                                                            : STORE_SECTOR_SIZE;
		if ((rc = read_bytes(s, dev->device_id, from, buf, (size_t)(end - from))))
			goto out;
		for (size_t i = (size_t)(end - from); i > 0; i--)
			if (buf[i - 1]) {
				last = from + i;
				break;
			}
		end = from;
	}
	*size = last > STORE_SECTOR_SIZE ? last - STORE_SECTOR_SIZE : 0;

	/* A partially written last sector may end in stale status-block words
	 * (the writer builds the status block in its data page).  Profiles are
	 * text: cut binary bytes after the last newline. */
	if (*size > 0 && dev->role != STORE_ROLE_EVENTLOG) { /* (an eventlog is binary: its cut is eventlog_cut's) */
		size_t tail = *size < 4096 ? (size_t)*size : 4096;
		uint64_t from = STORE_SECTOR_SIZE + *size - tail;
		if ((rc = read_bytes(s, dev->device_id, from, buf, tail)))
			goto out;
		size_t nl = tail;
		while (nl > 0 && buf[nl - 1] != '\n')
			nl--;
		for (size_t i = nl; i < tail; i++)
			if (buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\r') {
				cut = 1;
				break;
			}
		if (cut && nl > 0)
			*size -= tail - nl;
		else
			cut = 0;
	}
	snprintf(note, notelen,
	         "no usable status block; recovered %llu bytes up to the last data the guest "
	         "wrote%s",
	         (unsigned long long)*size,
	         cut ? " (binary garbage after the last newline removed)" : "");
out:
	free(buf);
	return rc;
}

struct cut_ctx {
	struct gel_decoder d;
};

static int cut_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	static const uint8_t zeros[4096];
	struct cut_ctx *c = ctx;

	(void)off;
	if (data)
		return gel_feed(&c->d, data, len) < 0;
	while (len > 0) { /* a hole reads as zeros */
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		if (gel_feed(&c->d, zeros, n) < 0)
			return 1;
		len -= n;
	}
	return 0;
}

/*
 * How many of the `size` bytes an unclosed eventlog's status block records
 * (or salvage found) are extracted: the one place an extraction is cut
 * short.  The guest flushes its eventlog a buffer at a time, so what it
 * flushed before it crashed (or so far, while it runs) may end inside an
 * event: the device's first `size` bytes from byte 512 (this snapshot) go
 * through the eventlog decoder, which keeps one event at most (bounded
 * memory, linear time), and the extraction ends where its last whole event
 * does.  A log damaged before its end is cut where the damage starts, and
 * rep->cut names the offset.
 */
static int eventlog_cut(struct store *s, const struct store_device_info *dev, uint64_t size,
                        struct store_extract_report *rep, uint64_t *keep)
{
	struct cut_ctx c;
	struct gel_tail tail;
	int rc;

	gel_init(&c.d, NULL, NULL);
	rc = store_read_range(s, dev->device_id, STORE_SECTOR_SIZE, size, cut_cb, &c);
	if (rc < 0) {
		gel_free(&c.d);
		return rc;
	}
	if (c.d.failed) {
		*keep = gel_whole_prefix(&c.d);
		snprintf(rep->cut, sizeof(rep->cut),
		         "cut at the last whole event before the damage: %llu of %llu bytes (%s)",
		         (unsigned long long)*keep, (unsigned long long)size, gel_error(&c.d));
	} else {
		int cut = gel_finish(&c.d, &tail) != 0;
		*keep = tail.whole_prefix; /* past an end marker: its stale bytes */
		if (!cut)
			snprintf(rep->cut, sizeof(rep->cut), "whole: %llu of %llu bytes, up to its end marker",
			         (unsigned long long)*keep, (unsigned long long)size);
		else
			snprintf(rep->cut, sizeof(rep->cut),
			         "cut at the last whole event: %llu of %llu bytes%s",
			         (unsigned long long)*keep, (unsigned long long)size,
			         tail.header_done ? "" : " (its header is not whole)");
	}
	gel_free(&c.d);
	return 0;
}

int store_profile_extent(struct store *s, const struct store_device_info *dev, int salvage,
                         struct store_extract_report *rep)
{
	uint8_t blk[STATUS_BLOCK_SIZE];
	struct status_block sb;
	uint64_t max;
	int rc;

	memset(rep, 0, sizeof(*rep));
	/* One sector holds a status block and nothing else: convert-profile
	 * extracts an empty file from it if the block says size 0, so do we
	 * (tests/fuzz/fuzz_profile found the difference). */
	if (dev->capacity_sectors < 1)
		return store_fail(s, STORE_EINVAL, "device %s is too small to hold a profile",
		                  dev->vdev);
	max = (dev->capacity_sectors - 1) * (uint64_t)STORE_SECTOR_SIZE;
	if ((rc = read_bytes(s, dev->device_id, 0, blk, sizeof(blk))))
		return rc;
	/* A file never extends past what the guest wrote: a status block
	 * that claims more (2^40 bytes, in one write) would otherwise be
	 * exported as that many zeros. */
	uint64_t written = store_device_written_bytes(dev);
	if (written < max)
		max = written;
	rep->header = status_block_decode(blk, &sb);
	if (rep->header == STATUS_BLOCK_VALID && sb.size <= max) {
		rep->how = sb.closed ? STORE_EXTRACT_CLEAN : STORE_EXTRACT_UNCLOSED;
		rep->size = sb.size;
	} else if (!salvage) {
		if (rep->header == STATUS_BLOCK_EMPTY)
			return store_fail(s, STORE_ECORRUPT,
			                  "%s of run %lld has no status block: the guest never wrote "
			                  "this file (GHC writes the .prof only at exit)",
			                  dev->vdev, (long long)dev->run_id);
		if (rep->header == STATUS_BLOCK_CORRUPT)
			return store_fail(s, STORE_ECORRUPT,
			                  "%s of run %lld: header block corrupted (its XOR copies "
			                  "disagree; convert-profile refuses it); --salvage recovers what "
			                  "is there",
			                  dev->vdev, (long long)dev->run_id);
		return store_fail(s, STORE_ECORRUPT,
		                  "%s of run %lld: status block claims %llu bytes but the guest wrote "
		                  "only %llu; --salvage recovers what is there",
		                  dev->vdev, (long long)dev->run_id, (unsigned long long)sb.size,
		                  (unsigned long long)max);
	} else {
		rep->votes = status_block_majority(blk, &sb, &rep->copies);
		if (rep->header != STATUS_BLOCK_EMPTY && rep->votes * 2 > rep->copies &&
		    sb.size <= max) {
			rep->how = STORE_EXTRACT_MAJORITY;
			rep->size = sb.size;
			snprintf(rep->note, sizeof(rep->note),
			         "status block damaged: %d of %d copies agree on size %llu, %s; used "
			         "that",
			         rep->votes, rep->copies, (unsigned long long)sb.size,
			         sb.closed ? "closed" : "not closed");
		} else {
			rep->how = STORE_EXTRACT_EXTENT;
			if ((rc = salvage_by_extent(s, dev, &rep->size, rep->note, sizeof(rep->note))))
				return rc;
		}
	}
	if (dev->role == STORE_ROLE_EVENTLOG && rep->how != STORE_EXTRACT_CLEAN) {
		uint64_t keep = rep->size;
		if ((rc = eventlog_cut(s, dev, rep->size, rep, &keep)))
			return rc;
		if (keep < rep->size)
			rep->size = keep;
	}
	return 0;
}

int store_extract_profile(struct store *s, const struct store_device_info *dev, int salvage,
                          store_range_cb out, void *ctx, struct store_extract_report *rep)
{
	int rc = store_profile_extent(s, dev, salvage, rep);
	return rc ? rc : store_read_range(s, dev->device_id, STORE_SECTOR_SIZE, rep->size, out, ctx);
}

struct disk_ctx {
	struct store *s;
	int fd;
};

static int disk_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct disk_ctx *c = ctx;
	const uint8_t *p = data;

	if (!data || is_zero(p, len))
		return 0; /* stays a hole */
	while (len > 0) {
		ssize_t n = pwrite(c->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return store_fail(c->s, errno == ENOSPC ? STORE_ENOSPC : STORE_EIO,
			                  "writing the disk image: %s", strerror(errno));
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int store_export_disk(struct store *s, const struct store_device_info *dev, int fd)
{
	uint64_t size = dev->capacity_sectors * (uint64_t)STORE_SECTOR_SIZE;
	struct disk_ctx c = {s, fd};

	if (ftruncate(fd, (off_t)size) != 0)
		return store_fail(s, errno == EFBIG ? STORE_EINVAL : STORE_EIO,
		                  "cannot size the disk image to %llu bytes: %s",
		                  (unsigned long long)size, strerror(errno));
	return store_read_range(s, dev->device_id, 0,
	                        dev->written_end_sector * (uint64_t)STORE_SECTOR_SIZE, disk_cb, &c);
}

static int read_full(int fd, uint8_t *buf, size_t len, off_t off, size_t *got)
{
	*got = 0;
	while (*got < len) {
		ssize_t n = pread(fd, buf + *got, len - *got, off + (off_t)*got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

int store_import_disk(struct store_device *d, int fd, uint64_t size, uint64_t *from, uint64_t max)
{
	struct store *s = d->s;
	uint8_t *buf;
	off_t pos = (off_t)*from;
	uint64_t stop = max < size - *from ? *from + max : size;
	int rc = 0;

	if (!store_in_batch(s))
		return store_fail(s, STORE_EINVAL, "store_import_disk outside a batch");
	buf = malloc(STORE_CHUNK_BYTES);
	if (!buf)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	while ((uint64_t)pos < stop) {
		/* Skip holes cheaply where the filesystem reports them. */
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO) {
			pos = (off_t)size; /* only a hole remains */
			break;
		}
		if (data >= 0 && data > pos)
			pos = data - data % (off_t)STORE_CHUNK_BYTES;
		if ((uint64_t)pos >= stop)
			break;
		size_t want = STORE_CHUNK_BYTES, got;
		if ((uint64_t)pos + want > size)
			want = (size_t)(size - (uint64_t)pos);
		int err = read_full(fd, buf, want, pos, &got);
		if (err) {
			rc = store_fail(s, STORE_EIO, "reading the disk image: %s", strerror(-err));
			break;
		}
		if (got == 0) {
			pos = (off_t)size; /* the file is shorter than it was */
			break;
		}
		/* A final partial sector reads as if zero-padded. */
		size_t padded = (got + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE * STORE_SECTOR_SIZE;
		memset(buf + got, 0, padded - got);
		if (!is_zero(buf, padded)) {
			struct store_segment seg = {(uint64_t)pos / STORE_SECTOR_SIZE,
			                            (uint32_t)(padded / STORE_SECTOR_SIZE), buf};
			if ((rc = store_write(d, &seg, 1)))
				break;
		}
		pos += (off_t)got;
	}
	free(buf);
	*from = (uint64_t)pos < size ? (uint64_t)pos : size;
	return rc;
}

int store_import_file(struct store_device *d, int fd, uint64_t size, uint64_t *from, uint64_t max)
{
	struct store *s = d->s;
	uint8_t *buf;
	uint64_t pos = *from, stop = max < size - *from ? *from + max : size;
	int rc = 0;

	if (!store_in_batch(s))
		return store_fail(s, STORE_EINVAL, "store_import_file outside a batch");
	if (size == 0)
		return store_fail(s, STORE_EINVAL, "an empty file is no profile");
	buf = malloc(STORE_CHUNK_BYTES);
	if (!buf)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	while (pos < stop) {
		size_t want = STORE_CHUNK_BYTES, got;
		if (pos + want > size)
			want = (size_t)(size - pos);
		int err = read_full(fd, buf, want, (off_t)pos, &got);
		if (err || got < want) {
			rc = store_fail(s, STORE_EIO, "reading the file: %s", err ? strerror(-err) : "it shrank");
			break;
		}
		/* the file from sector 1, its last sector zero-padded; zeros are
		 * holes, but the last piece is written: the status block may not
		 * claim more than was written */
		size_t padded = (got + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE * STORE_SECTOR_SIZE;
		memset(buf + got, 0, padded - got);
		if (pos + got == size || !is_zero(buf, padded)) {
			struct store_segment seg = {1 + pos / STORE_SECTOR_SIZE, (uint32_t)(padded / STORE_SECTOR_SIZE), buf};
			if ((rc = store_write(d, &seg, 1)))
				break;
		}
		pos += got;
	}
	if (rc == 0 && pos == size) {
		/* whole: the status block a guest writes when it closes the file */
		memset(buf, 0, STORE_SECTOR_SIZE);
		status_block_encode(buf, size, 1, 8);
		struct store_segment seg = {0, 1, buf};
		rc = store_write(d, &seg, 1);
	}
	free(buf);
	*from = pos;
	return rc;
}
