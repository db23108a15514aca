/*
 * fuzz_intake.c - libFuzzer target: the owner's recovery of a damaged or
 * hostile intake log (store/store_intake_recover.c).  A fresh store with two
 * devices is made once; for each input, its database is put back and the
 * input becomes the log beside it, then an owner opens the store (and
 * applies what the log holds).  Records carry a hash, so that bytes
 * libFuzzer flips would only ever be refused as damaged: the input is
 * therefore read as a list of records, each given the store's tag and a
 * correct hash before it is written, so that what recovery applies (ops,
 * sectors, lengths, device rows) is as hostile as the input.  Asserted,
 * beyond "no crash, no leak": an open that fails says why, and a store
 * that opens is sound (integrity check) and reads back in full.
 *
 * The record layout (store_intake.c): magic u32, version u16, flags u16,
 * seq u64, tag u64 @16, len u32 @24, nops u32, ndevs u32, pad u32, then
 * ops and device rows, then XXH3-64 of everything before it.
 */
#include "config.h"

#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/xxh.h"

#include "store/store.h"

static char dir[96], path[128], logpath[160];
static uint8_t *tmpl;
static size_t tmpl_len;
static uint64_t tag;

static void make_template(void)
{
	snprintf(dir, sizeof(dir), "/dev/shm/profsvc-fuzz-intake-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/s.db", dir);
	snprintf(logpath, sizeof(logpath), "%s-intake", path);
	store_remove_files(path);
	struct store_open_opts o = {.mode = STORE_OWNER};
	struct store *s;
	char err[512];
	if (store_open(&s, path, &o, err, sizeof(err)) != 0)
		abort();
	struct store_run run = {.domid = 1, .name = "fuzz"};
	struct store_device *d;
	uint8_t sec[512] = {'x'};
	struct store_segment seg = {3, 1, sec};
	if (store_run_begin(s, &run) || store_device_create(s, run.run_id, "xvdp2", 51954, 4096, &d) ||
	    store_batch_begin(s) || store_write(d, &seg, 1) || store_batch_commit(s) ||
	    store_device_create(s, run.run_id, "xvdb", 51728, 300, &d))
		abort();
	store_close(s);
	/* the tag: the first 16 hex digits of meta.store_id, as the log has it */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"select value from meta where key = 'store_id'\"", path);
	FILE *p = popen(cmd, "r");
	char id[64] = "";
	if (!p || !fgets(id, sizeof(id), p))
		abort();
	pclose(p);
	for (int i = 0; i < 16; i++)
		tag = tag << 4 | (uint64_t)(id[i] <= '9' ? id[i] - '0' : id[i] - 'a' + 10);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		abort();
	tmpl_len = (size_t)st.st_size;
	tmpl = malloc(tmpl_len);
	if (read(fd, tmpl, tmpl_len) != (ssize_t)tmpl_len)
		abort();
	close(fd);
	store_remove_files(path);
}

static void put(const char *p, const uint8_t *data, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static int sink(void *ctx, uint64_t off, const void *data, size_t len)
{
	(void)off;
	(void)data;
	*(uint64_t *)ctx += len;
	return 0;
}

static int read_device(void *ctx, const struct store_device_info *d)
{
	struct store *s = ctx;
	uint64_t got = 0;
	int rc = store_read_range(s, d->device_id, 0, d->capacity_sectors * 512, sink, &got);
	assert(rc == 0 && got == d->capacity_sectors * 512);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!tmpl)
		make_template();
	/* The input as records: each one's length from its header (at
	 * least a header and a hash, at most what is left, a multiple of 8),
	 * given the store's tag and its hash. */
	uint8_t *log = calloc(1, size + 64);
	size_t out = 0;
	for (size_t in = 0; in + 48 <= size;) {
		uint32_t len;
		memcpy(&len, data + in + 24, 4);
		len &= ~7u;
		if (len < 48 || len > size - in)
			len = (uint32_t)((size - in) & ~(size_t)7);
		memcpy(log + out, data + in, len);
		memcpy(log + out + 16, &tag, 8);
		memcpy(log + out + 24, &len, 4);
		uint64_t h = XXH3_64bits(log + out, len - 8);
		memcpy(log + out + len - 8, &h, 8);
		out += len;
		in += len;
	}
	put(path, tmpl, tmpl_len);
	put(logpath, log, out);
	free(log);

	struct store_open_opts o = {.mode = STORE_OWNER, .intake = 1, .busy_timeout_ms = 1};
	struct store *s;
	char err[512];
	int rc = store_open(&s, path, &o, err, sizeof(err));
	if (rc == 0) {
		char report[1024];
		assert(store_check_integrity(s, report, sizeof(report)) == 0);
		assert(store_list_devices(s, 1, read_device, s) == 0);
		store_close(s);
	} else {
		assert(err[0]);
	}
	store_remove_files(path);
	return 0;
}
