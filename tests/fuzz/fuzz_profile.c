/*
 * fuzz_profile.c - libFuzzer target: every profile parser the project has.
 *
 *  1. The HaLVM writer's replay (frontend-stub/halvm_writer.c), which
 *     splits a .hp into samples at END_SAMPLE lines and writes a .prof at
 *     exit: any bytes as a .hp or .prof, written into a raw image, must
 *     come back byte-exact through the reference convert-profile
 *     (tests/ref_convert_profile.c), with 8- or 4-byte words, and through
 *     the store (import then export), and a replay cut short like a crash
 *     must come back as a prefix of the file.
 *  2. Extraction of any raw image: the store's extraction
 *     (store_extract_profile, what `profdb export` runs) against the
 *     independent reference; same verdict, same bytes.  Salvage never
 *     crashes and never produces more than the device holds.
 *
 * Input: [mode][cut 2][bytes...].
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frontend-stub/halvm_writer.h"
#include "profile/disk/status_block.h"
#include "store/store.h"
#include "store/store_export.h"
#include "tests/ref_convert_profile.h"

struct image {
	uint8_t *b;
	size_t len;
};

static int image_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct image *im = ctx;
	size_t end = (size_t)(sector + nsect) * 512;
	if (end > im->len) {
		im->b = realloc(im->b, end);
		memset(im->b + im->len, 0, end - im->len);
		im->len = end;
	}
	memcpy(im->b + sector * 512, data, (size_t)nsect * 512);
	return 0;
}

static struct store *st;
static char dbpath[96];
static unsigned uses;

static void store_fresh(void)
{
	char err[256];
	if (st && uses < 500)
		return;
	if (st) {
		store_close(st);
		store_remove_files(dbpath);
	} else {
		/* A directory of our own: writers refuse shared ones. */
		snprintf(dbpath, sizeof(dbpath), "/dev/shm/profsvc-fuzz-profile-%d", (int)getpid());
		mkdir(dbpath, 0700);
		snprintf(dbpath, sizeof(dbpath), "/dev/shm/profsvc-fuzz-profile-%d/p.db", (int)getpid());
		unlink(dbpath);
	}
	struct store_open_opts o = {.mode = STORE_WRITE};
	if (store_open(&st, dbpath, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_profile: %s\n", err);
		abort();
	}
	uses = 0;
}

struct outbuf {
	uint8_t *b;
	size_t len;
};

static int out_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct outbuf *o = ctx;
	assert(off == 512 + o->len); /* device offsets, in order, from byte 512 */
	o->b = realloc(o->b, o->len + len + 1);
	if (data)
		memcpy(o->b + o->len, data, len);
	else
		memset(o->b + o->len, 0, len);
	o->len += len;
	return 0;
}

/* Imports the image as xvdp2 of a new run; extracts it (salvage or not). */
static int store_extract(const struct image *im, int salvage, struct outbuf *out,
                         struct store_extract_report *rep)
{
	store_fresh();
	uses++;
	struct store_run run = {.domid = 1};
	snprintf(run.name, sizeof(run.name), "fuzz");
	if (store_batch_begin(st) != 0 || store_run_begin(st, &run) != 0)
		abort();
	struct store_device *d;
	uint64_t cap = (im->len + 511) / 512;
	if (store_device_create(st, run.run_id, "xvdp2", 51954, cap ? cap : 1, &d) != 0)
		abort();
	int fd = memfd_create("img", MFD_CLOEXEC);
	assert(fd >= 0);
	if (im->len && write(fd, im->b, im->len) != (ssize_t)im->len)
		abort();
	if (store_import_disk(d, fd, im->len, &(uint64_t){0}, UINT64_MAX) != 0) {
		fprintf(stderr, "import: %s\n", store_errmsg(st));
		abort();
	}
	close(fd);
	if (store_batch_commit(st) != 0)
		abort();
	struct store_device_info info;
	store_device_release(d);
	assert(store_find_device(st, run.run_id, "xvdp2", &info) == 0);
	memset(out, 0, sizeof(*out));
	assert(store_read_begin(st) == 0);
	int rc = store_extract_profile(st, &info, salvage, out_cb, out, rep);
	store_read_end(st);
	return rc;
}

/* What the store counts as written of an imported image: up to the end of
 * its last 64 KiB chunk holding a non-zero byte (store_import_disk skips
 * zero chunks), less the status block's sector. */
static uint64_t written_bytes(const struct image *im)
{
	uint64_t end = 0;
	for (uint64_t pos = 0; pos < im->len; pos += 65536) {
		uint64_t n = im->len - pos < 65536 ? im->len - pos : 65536;
		for (uint64_t i = 0; i < n; i++)
			if (im->b[pos + i]) {
				end = pos + (n + 511) / 512 * 512;
				break;
			}
	}
	return end > 512 ? end - 512 : 0;
}

static void check_extraction(const struct image *img)
{
	/* A disk is whole sectors: pad, as the device the store makes is. */
	struct image padded = {NULL, (img->len + 511) / 512 * 512};
	padded.b = calloc(1, padded.len ? padded.len : 1);
	if (img->len)
		memcpy(padded.b, img->b, img->len);
	const struct image *im = &padded;

	struct outbuf out;
	struct store_extract_report rep;
	uint8_t blk[512] = {0};
	memcpy(blk, im->b, im->len < 512 ? im->len : 512);
	struct status_block sb;
	int ws = status_block_decode(blk, &sb) == STATUS_BLOCK_VALID ? sb.word_size : 8;

	uint8_t *ref = NULL;
	size_t reflen = 0;
	enum ref_result rr = ref_convert_profile(im->b, im->len, ws, &ref, &reflen);
	int rc = store_extract(im, 0, &out, &rep);
	if ((rr == REF_OK || rr == REF_NOT_CLOSED) && reflen > written_bytes(im)) {
		/* convert-profile pads a claim past the data with zeros (from a
		 * sparse image, a terabyte of them); the store never exports
		 * past what was written, unless salvaging. */
		assert(rc != 0);
	} else if (rr == REF_OK || rr == REF_NOT_CLOSED) {
		if (rc != 0)
			fprintf(stderr, "reference extracted %zu bytes (%s), the store refused: %s\n", reflen,
			        rr == REF_OK ? "closed" : "not closed", store_errmsg(st));
		assert(rc == 0);
		assert(out.len == reflen && (reflen == 0 || memcmp(out.b, ref, reflen) == 0));
		assert(rep.how == (rr == REF_OK ? STORE_EXTRACT_CLEAN : STORE_EXTRACT_UNCLOSED));
	} else {
		assert(rc != 0); /* convert-profile refuses it: so do we, unless salvaging */
	}
	free(out.b);
	free(ref);
	if (rc != 0) {
		rc = store_extract(im, 1, &out, &rep);
		if (rc == 0)
			assert(out.len <= im->len);
		free(out.b);
	}
	free(padded.b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3 || size > 1 << 20)
		return 0;
	int mode = data[0];
	uint64_t cut = (uint64_t)data[1] | (uint64_t)data[2] << 8;
	data += 3;
	size -= 3;

	if (mode & 0x80) {
		/* Any bytes as a raw image. */
		struct image im = {malloc(size ? size : 1), size};
		memcpy(im.b, data, size);
		check_extraction(&im);
		free(im.b);
		return 0;
	}
	/* Any bytes as a profile, through the writer and back. */
	int is_hp = mode & 1, ws = mode & 2 ? 4 : 8, crash = mode & 4;
	struct image im = {NULL, 0};
	struct halvm_writer w;
	halvm_writer_init(&w, ws, image_submit, &im);
	assert(halvm_writer_replay(&w, data, size, is_hp, crash ? cut : UINT64_MAX) == 0);
	uint8_t *ref = NULL;
	size_t reflen = 0;
	enum ref_result rr = ref_convert_profile(im.b, im.len, ws, &ref, &reflen);
	/* stop_at == size still stops before the close: a crash after the
	 * last byte.  Only stop_at beyond the file lets it close. */
	if ((!crash || cut > size) && size > 0) {
		assert(rr == REF_OK);
		assert(reflen == size && memcmp(ref, data, size) == 0);
	} else if (rr == REF_OK || rr == REF_NOT_CLOSED) {
		/* Cut short: what was written (whole pages, flushed samples) is
		 * a prefix of the file. */
		assert(reflen <= size && (reflen == 0 || memcmp(ref, data, reflen) == 0));
	}
	free(ref);
	if (im.len)
		check_extraction(&im);
	free(im.b);
	return 0;
}
