/*
 * fuzz_store_open.c - libFuzzer target: opening a damaged database.  The
 * input is a database file (seeds are real stores; libFuzzer damages
 * them).  A reader opens it, lists runs and devices, extracts every
 * profile (plain and salvage) and checks integrity; then a writer opens
 * it.  Asserted, beyond "no crash, no leak": the reader never changes a
 * byte of the file, and every failure comes with a message.
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

#include "store/store.h"
#include "store/store_export.h"

static char path[96];

static void remove_all(void)
{
	store_remove_files(path);
}

static int put_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ok ? 0 : -1;
}

static int same_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint8_t *b = malloc(size + 1);
	ssize_t n = read(fd, b, size + 1);
	close(fd);
	int same = n == (ssize_t)size && memcmp(b, data, size) == 0;
	free(b);
	return same;
}

static int sink(void *ctx, uint64_t off, const void *data, size_t len)
{
	(void)data;
	(void)off;
	*(uint64_t *)ctx += len;
	return 0;
}

static int each_device(void *ctx, const struct store_device_info *dev)
{
	struct store *s = ctx;
	for (int salvage = 0; salvage < 2; salvage++) {
		struct store_extract_report rep;
		uint64_t total = 0;
		int rc = store_extract_profile(s, dev, salvage, sink, &total, &rep);
		if (rc != 0)
			assert(store_errmsg(s)[0]);
		else
			assert(total == rep.size);
	}
	return 0;
}

static int each_run(void *ctx, const struct store_run *run)
{
	struct store *s = ctx;
	struct store_run again;
	if (store_get_run(s, run->run_id, &again) == 0)
		assert(again.run_id == run->run_id);
	store_list_devices(s, run->run_id, each_device, s);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		/* A directory of our own: writers refuse shared ones. */
		snprintf(path, sizeof(path), "/dev/shm/profsvc-fuzz-store-%d", (int)getpid());
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "/dev/shm/profsvc-fuzz-store-%d/s.db", (int)getpid());
	}
	remove_all();
	if (put_file(data, size) != 0)
		abort();

	struct store *s;
	char err[512];
	struct store_open_opts ro = {.mode = STORE_READ, .busy_timeout_ms = 1};
	int rc = store_open(&s, path, &ro, err, sizeof(err));
	if (rc == 0) {
		if (store_read_begin(s) == 0) {
			store_list_runs(s, NULL, each_run, s);
			store_read_end(s);
		}
		char report[1024];
		store_check_integrity(s, report, sizeof(report));
		store_close(s);
	} else {
		assert(err[0]);
	}
	assert(same_file(data, size)); /* a reader writes nothing */

	struct store_open_opts rw = {.mode = STORE_WRITE, .busy_timeout_ms = 1};
	rc = store_open(&s, path, &rw, err, sizeof(err));
	if (rc == 0) {
		struct store_run run = {.domid = 1};
		snprintf(run.name, sizeof(run.name), "fuzz");
		if (store_run_begin(s, &run) == 0)
			store_run_end(s, run.run_id, STORE_RUN_COMPLETE, 0);
		store_close(s);
	} else {
		assert(err[0]);
		/* Refused: left as it was. */
		assert(same_file(data, size));
	}
	remove_all();
	return 0;
}
