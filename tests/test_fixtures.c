/*
 * test_fixtures.c - every real GHC profile in tests/data/ghc written through
 * the store exactly as the HaLVM writer does (one request per commit, as the
 * guest has one request outstanding), then:
 *   - export is byte-identical to the profile;
 *   - export-disk is byte-identical to the raw image a raw-disk backend
 *     would have held, and the independent convert-profile model extracts
 *     the profile from it;
 *   - import of that raw image gives a run whose export is identical;
 *   - a guest crash at a random point exports exactly what convert-profile
 *     extracts from the crashed guest's raw image;
 *   - the database grows by at most 15% over the profile.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend-stub/halvm_writer.h"
#include "ref_convert_profile.h"
#include "store/store_export.h"
#include "testutil.h"

#define CAPACITY_SECTORS (32u * 1024 * 2) /* a 32 MiB disk, like a user's pre-sized file */
#define IMG_BYTES ((size_t)CAPACITY_SECTORS * 512)

struct sink {
	struct store *s;
	struct store_device *dev;
	uint8_t *img; /* the raw-disk backend's view */
	int fail;
};

static int submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct sink *k = ctx;
	struct store_segment seg = {sector, nsect, data};

	memcpy(k->img + sector * 512, data, (size_t)nsect * 512);
	if (store_batch_begin(k->s) || store_write(k->dev, &seg, 1) || store_batch_commit(k->s)) {
		fprintf(stderr, "store: %s\n", store_errmsg(k->s));
		k->fail = 1;
		return -1;
	}
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Exports a device; returns the bytes (malloc'd) or NULL. */
static uint8_t *export_device(struct store *s, int64_t device_id, size_t *len,
                              struct store_extract_report *rep, int salvage)
{
	struct store_device_info info;
	struct store_device *d;
	struct tu_buf b = {0};

	if (store_device_open(s, device_id, &d) != 0)
		return NULL;
	store_device_get_info(d, &info);
	store_device_release(d);
	store_read_begin(s);
	int rc = store_extract_profile(s, &info, salvage, tu_buf_cb, &b, rep);
	store_read_end(s);
	if (rc != 0) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p ? b.p : malloc(1);
}

struct result {
	double growth_ratio;
	off_t growth;
};

/* Writes one profile through the store like a HaLVM guest; checks all
 * exports.  stop_at < UINT64_MAX: the guest crashes there. */
static void run_one(const char *path, const uint8_t *file, size_t len, int ws, uint64_t stop_at)
{
	char *db = tu_path("fixture.db");
	char *disk = tu_path("export.disk");
	int is_hp = strstr(path, ".hp") != NULL;
	struct store_run run = {.domid = 3, .source = "capture"};
	struct sink k = {0};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	unlink(db);
	snprintf(run.name, sizeof(run.name), "%s", base);
	k.s = tu_open_store(db, STORE_OWNER);
	k.img = calloc(1, IMG_BYTES);
	REQUIRE(k.img, "out of memory");
	REQUIRE(store_run_begin(k.s, &run) == 0, "%s", store_errmsg(k.s));
	REQUIRE(store_device_create(k.s, run.run_id, is_hp ? "xvdp2" : "xvdp1", is_hp ? 51954 : 51953,
	                            CAPACITY_SECTORS, &k.dev) == 0,
	        "%s", store_errmsg(k.s));
	int64_t dev_id = store_device_id(k.dev);
	struct halvm_writer w;
	halvm_writer_init(&w, ws, submit, &k);
	CHECK(halvm_writer_replay(&w, file, len, is_hp, stop_at) == 0 && !k.fail, "%s: replay", base);
	int crashed = stop_at != UINT64_MAX;
	REQUIRE(store_run_end(k.s, run.run_id, crashed ? STORE_RUN_CRASHED : STORE_RUN_COMPLETE, 0) ==
	                0,
	        "%s", store_errmsg(k.s));

	/* What convert-profile makes of the raw-disk backend's image. */
	uint8_t *ref = NULL;
	size_t reflen = 0;
	enum ref_result rr = ref_convert_profile(k.img, IMG_BYTES, ws, &ref, &reflen);

	/* 1. export */
	struct store_extract_report rep;
	size_t outlen = 0;
	uint8_t *out = export_device(k.s, dev_id, &outlen, &rep, 0);
	if (!crashed) {
		CHECK(rr == REF_OK && reflen == len && memcmp(ref, file, len) == 0,
		      "%s (ws %d): reference reader disagrees with the file", base, ws);
		CHECK(out && outlen == len && memcmp(out, file, len) == 0,
		      "%s (ws %d): export differs from the profile (%zu vs %zu bytes)", base, ws,
		      outlen, len);
		CHECK(out && rep.how == STORE_EXTRACT_CLEAN, "%s: not clean (%d)", base, rep.how);
	} else if (rr == REF_CORRUPT) {
		/* The guest never wrote a status block: nothing to extract. */
		CHECK(!out && rep.header == STATUS_BLOCK_EMPTY,
		      "%s crash at %llu: export should refuse an unwritten status block", base,
		      (unsigned long long)stop_at);
	} else {
		CHECK(rr == REF_NOT_CLOSED, "%s crash: reference says %d", base, rr);
		CHECK(out && outlen == reflen && memcmp(out, ref, reflen) == 0,
		      "%s crash at %llu: export (%zu bytes) differs from convert-profile (%zu bytes)",
		      base, (unsigned long long)stop_at, outlen, reflen);
		CHECK(out && rep.how == STORE_EXTRACT_UNCLOSED, "%s crash: how %d", base, rep.how);
		CHECK(reflen <= len && memcmp(ref, file, reflen) == 0, "%s crash: not a prefix", base);
	}
	free(out);

	/* 2. export-disk equals the raw-disk backend's image */
	struct store_device_info info;
	store_device_get_info(k.dev, &info);
	int fd = open(disk, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0, "open %s", disk);
	store_read_begin(k.s);
	CHECK(store_export_disk(k.s, &info, fd) == 0, "%s: export-disk: %s", base,
	      store_errmsg(k.s));
	store_read_end(k.s);
	close(fd);
	size_t dlen = 0;
	uint8_t *dimg = tu_read_file(disk, &dlen);
	CHECK(dimg && dlen == IMG_BYTES && memcmp(dimg, k.img, IMG_BYTES) == 0,
	      "%s: export-disk differs from the raw image", base);

	/* 3. import-disk of the raw image round-trips */
	if (dimg && !crashed) {
		struct store_run irun = {.domid = -1, .name = "imported", .source = "import"};
		struct store_device *idev;
		REQUIRE(store_batch_begin(k.s) == 0 && store_run_begin(k.s, &irun) == 0 &&
		                store_device_create(k.s, irun.run_id, "xvdp1", 51953, CAPACITY_SECTORS,
		                                    &idev) == 0,
		        "%s", store_errmsg(k.s));
		fd = open(disk, O_RDONLY);
		CHECK(store_import_disk(idev, fd, dlen, &(uint64_t){0}, UINT64_MAX) == 0, "%s: import: %s", base,
		      store_errmsg(k.s));
		close(fd);
		REQUIRE(store_batch_commit(k.s) == 0, "%s", store_errmsg(k.s));
		out = export_device(k.s, store_device_id(idev), &outlen, &rep, 0);
		CHECK(out && outlen == len && memcmp(out, file, len) == 0,
		      "%s: import-disk round trip differs", base);
		free(out);
	}
	free(dimg);
	free(ref);
	store_close(k.s);
	free(k.img);
	unlink(disk);
	free(disk);
	free(db);
}

/* The database growth of one capture, in its own database. */
static void measure_growth(const char *name, const uint8_t *file, size_t len, int is_hp,
                           struct result *res)
{
	char *db = tu_path("growth.db");
	struct store_run run = {.domid = 3};
	struct sink k = {0};

	unlink(db);
	snprintf(run.name, sizeof(run.name), "%s", name);
	k.s = tu_open_store(db, STORE_OWNER);
	REQUIRE(store_run_begin(k.s, &run) == 0, "%s", store_errmsg(k.s));
	REQUIRE(store_device_create(k.s, run.run_id, is_hp ? "xvdp2" : "xvdp1", 51953,
	                            (len + (1 << 20)) / 512 + 2048, &k.dev) == 0,
	        "%s", store_errmsg(k.s));
	int64_t dev_id = store_device_id(k.dev);
	store_close(k.s);
	off_t before = file_size(db);
	k.s = tu_open_store(db, STORE_OWNER);
	REQUIRE(store_device_open(k.s, dev_id, &k.dev) == 0, "%s", store_errmsg(k.s));
	k.img = calloc(1, len + (2 << 20) + 512);
	struct halvm_writer w;
	halvm_writer_init(&w, 8, submit, &k);
	CHECK(halvm_writer_replay(&w, file, len, is_hp, UINT64_MAX) == 0, "%s: replay", name);
	REQUIRE(store_run_end(k.s, run.run_id, STORE_RUN_COMPLETE, 0) == 0, "%s",
	        store_errmsg(k.s));
	store_close(k.s); /* checkpoints: the WAL is folded in */
	res->growth = file_size(db) - before;
	res->growth_ratio = len ? (double)res->growth / (double)len : 0;
	free(k.img);
	unlink(db);
	free(db);
}

/* A large synthetic .prof-like text, for the headline growth figure. */
static uint8_t *synthetic_profile(size_t len)
{
	uint8_t *p = malloc(len);
	uint64_t rng = 42;
	size_t o = 0;

	while (o < len) {
		char line[160];
		int n = snprintf(line, sizeof(line),
		                 "  cost_centre_%llu  Module.Name  src/Module.hs:(%llu,1)-(%llu,40) "
		                 "%llu %llu 0.%llu 1.%llu\n",
		                 (unsigned long long)tu_rand_below(&rng, 100000),
		                 (unsigned long long)tu_rand_below(&rng, 999),
		                 (unsigned long long)tu_rand_below(&rng, 999),
		                 (unsigned long long)tu_rand_below(&rng, 1 << 20),
		                 (unsigned long long)tu_rand_below(&rng, 1 << 30),
		                 (unsigned long long)tu_rand_below(&rng, 9),
		                 (unsigned long long)tu_rand_below(&rng, 9));
		size_t take = (size_t)n < len - o ? (size_t)n : len - o;
		memcpy(p + o, line, take);
		o += take;
	}
	return p;
}

int main(void)
{
	char **list = tu_fixture_list();
	uint64_t rng = tu_seed(77);
	int n = 0, crashes = 0;

	printf("%-34s %10s %10s %7s\n", "profile", "bytes", "db growth", "ratio");
	for (char **p = list; *p; p++) {
		size_t len;
		uint8_t *file = tu_read_file(*p, &len);
		const char *base = strrchr(*p, '/') + 1;
		REQUIRE(file, "cannot read %s", *p);

		run_one(*p, file, len, 8, UINT64_MAX);
		if (n % 4 == 1)
			run_one(*p, file, len, 4, UINT64_MAX); /* a 32-bit guest */
		/* The guest crashes somewhere. */
		if (len > 0) {
			run_one(*p, file, len, 8, tu_rand_below(&rng, len + 1));
			crashes++;
		}
		struct result r;
		measure_growth(base, file, len, strstr(base, ".hp") != NULL, &r);
		printf("%-34s %10zu %10lld %7.3f\n", base, len, (long long)r.growth, r.growth_ratio);
		/* The bound is about what the pattern costs; below 64 KiB a
		 * single database page is already a few percent. */
		if (len >= 64 * 1024)
			CHECK(r.growth_ratio <= 1.15, "%s: database grew %.3fx the profile", base,
			      r.growth_ratio);
		free(file);
		n++;
	}
	/* Headline: a 16 MiB time profile and a 16 MiB heap profile pattern. */
	size_t big = 16u << 20;
	uint8_t *syn = synthetic_profile(big);
	struct result r;
	measure_growth("synthetic-16MiB.prof", syn, big, 0, &r);
	printf("%-34s %10zu %10lld %7.3f\n", "synthetic-16MiB.prof", big, (long long)r.growth,
	       r.growth_ratio);
	CHECK(r.growth_ratio <= 1.15, "synthetic .prof: database grew %.3fx", r.growth_ratio);
	free(syn);

	printf("%d profiles round-tripped, %d guest crashes checked\n", n, crashes);
	tu_free_list(list);
	return tu_finish("test_fixtures");
}
