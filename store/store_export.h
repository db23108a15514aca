/*
 * store_export.h - getting profiles and disk images out of the store, and
 * old raw disk images in.  No files are named here: callers pass
 * descriptors or callbacks, so the CLI owns temp-file-and-rename.
 *
 * May call: store.h's types, profile/disk/status_block.h (the status
 * block an exported disk image gets).
 */
#ifndef PROFSVC_STORE_EXPORT_H
#define PROFSVC_STORE_EXPORT_H

#include "profile/disk/status_block.h"
#include "store.h"

enum store_extract_how {
	STORE_EXTRACT_CLEAN,     /* valid status block, closed */
	STORE_EXTRACT_UNCLOSED,  /* valid status block, not closed (convert-profile warns) */
	STORE_EXTRACT_MAJORITY,  /* salvaged: most XOR copies agreed */
	STORE_EXTRACT_EXTENT,    /* salvaged: no usable block, bytes up to the last written data */
};

struct store_extract_report {
	enum status_block_result header; /* what sector 0 held */
	enum store_extract_how how;
	uint64_t size;                   /* bytes produced */
	int votes, copies;               /* for STORE_EXTRACT_MAJORITY */
	char note[256];                  /* one line saying what was done, for salvage */
	/* An eventlog the guest did not close: what became of its end (its
	 * flushed prefix may end inside an event: "cut at the last whole
	 * event: N of M bytes"), for the user; else "". */
	char cut[384];
};

/*
 * Produces exactly the bytes convert-profile would extract from the
 * device's raw image: `size` bytes from byte 512, size from the status block.
 * A corrupt or empty status block, or a size beyond the device, is refused
 * (STORE_ECORRUPT, message in store_errmsg) unless salvage is set.  The
 * output callback gets the bytes in order (data == NULL: that many zeros).
 * Call inside store_read_begin() for a consistent snapshot.
 */
int store_extract_profile(struct store *s, const struct store_device_info *dev, int salvage,
                          store_range_cb out, void *ctx, struct store_extract_report *rep);

/* What store_extract_profile would produce, without producing it: rep
 * (its size, how it was found), or the same refusal.  The one place an
 * extraction is cut short: an eventlog the guest did not close (see
 * store_export.c, eventlog_cut). */
int store_profile_extent(struct store *s, const struct store_device_info *dev, int salvage,
                         struct store_extract_report *rep);

/* Writes a sparse raw image (capacity_sectors * 512 bytes) of the device to
 * fd, which must be an empty regular file. */
int store_export_disk(struct store *s, const struct store_device_info *dev, int fd);

/* Copies the raw image in fd (size bytes) into the device, inside the
 * caller's batch: from *pos, at most max bytes of the image (whole
 * chunks), advancing *pos (== size when done).  A caller importing a big
 * image commits a batch per call, so that no transaction holds the write
 * lock for long (one 1.5 GB import in one transaction once held it 17 s
 * and live guests' writes failed).  Holes and all-zero chunks are
 * skipped. */
int store_import_disk(struct store_device *d, int fd, uint64_t size, uint64_t *pos, uint64_t max);

/* The same for a plain profile file (a .prof, .hp or eventlog as GHC
 * wrote it, size bytes, not empty): its bytes go from sector 1, as a
 * guest writes them, and once the last is in (*pos == size), sector 0
 * gets the status block of a closed file of that size, so export gives
 * back the file byte for byte.  Inside the caller's batch, at most max
 * bytes a call. */
int store_import_file(struct store_device *d, int fd, uint64_t size, uint64_t *pos, uint64_t max);

#endif
