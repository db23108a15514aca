/*
 * test_writeback.c - the owner's write-behind of the data file
 * (store/store_writeback.c): a guest's bulk stream does not stay in the
 * page cache, and every byte of it reads back.
 *
 * 96 MiB of whole chunks are written through the store, 4 MiB a batch as
 * the backend commits them.  Then, once the write-behind thread has
 * caught up, at most a few MiB of the data file may still be in the page
 * cache (mincore on a mapping of the file): without the write-behind all
 * 96 MiB stay there until the kernel's own writeback and memory pressure
 * get to them.  Every chunk is then read back through the
 * store, from disk where it was dropped, and compared.
 */
#include "config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "testutil.h"

#define MIB (1u << 20)
#define TOTAL (96u * MIB)
#define BATCH (4u * MIB)
#define RANGE (4u * MIB) /* STORE_WRITEBACK_BYTES */

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tu_rand(&seed);
		memcpy(p + i, &v, 8);
	}
}

/* Pages of the file at path now in the page cache. */
static size_t resident_bytes(const char *path, size_t *file_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	REQUIRE(fd >= 0 && fstat(fd, &st) == 0, "open %s", path);
	*file_len = (size_t)st.st_size;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	REQUIRE(m != MAP_FAILED, "mmap %s", path);
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page, n = 0;
	unsigned char *vec = malloc(pages);
	REQUIRE(vec && mincore(m, (size_t)st.st_size, vec) == 0, "mincore");
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	munmap(m, (size_t)st.st_size);
	close(fd);
	return n * (size_t)page;
}

int main(void)
{
	char *db = tu_path("wb.db"), data_path[4200];
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1};
	struct store *s;
	char err[512];
	struct store_run run = {.domid = 3, .name = "bulk", .uuid = "u"};
	struct store_device *d;
	uint8_t *buf = malloc(BATCH);
	uint64_t seed = tu_seed(20261125);

	REQUIRE(store_open(&s, db, &o, err, sizeof(err)) == 0, "store_open: %s", err);
	snprintf(data_path, sizeof(data_path), "%s-data", db);
	REQUIRE(buf && store_run_begin(s, &run) == 0, "%s", store_errmsg(s));
	REQUIRE(store_device_create(s, run.run_id, "xvdb", 51728, 2 * TOTAL / 512, &d) == 0, "%s",
	        store_errmsg(s));
	for (uint64_t off = 0; off < TOTAL; off += BATCH) {
		fill(buf, BATCH, seed + off);
		struct store_segment seg = {off / 512, BATCH / 512, buf};
		REQUIRE(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 && store_batch_commit(s) == 0,
		        "batch at %llu: %s", (unsigned long long)off, store_errmsg(s));
	}

	/* Once the write-behind thread has caught up, at most the last range
	 * handed over (written out, kept) and what was written since are
	 * cached; on a loaded machine the thread may take a while. */
	struct statfs fs;
	int tmpfs = statfs(data_path, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	struct timespec t0, t;
	size_t file_len, cached;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		cached = resident_bytes(data_path, &file_len);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (tmpfs || cached <= 4 * (size_t)RANGE || t.tv_sec - t0.tv_sec >= 60)
			break;
		usleep(20000);
	}
	uint64_t dropped = store_writeback_count(s);
	CHECK(file_len >= TOTAL, "the data file holds %zu bytes, not the stream's %u (not written as slots)",
	      file_len, TOTAL);
	if (tmpfs)
		printf("test_writeback: %s is on tmpfs, whose pages are the file: residency not checked\n",
		       data_path);
	else
		CHECK(cached <= 4 * (size_t)RANGE, "%zu MiB of the %u MiB stream still in the page cache after 60 s",
		      cached / MIB, TOTAL / MIB);
	CHECK(dropped >= 1 && dropped < TOTAL / BATCH, "%llu ranges dropped", (unsigned long long)dropped);
	printf("test_writeback: %u MiB written, %llu ranges dropped, %zu KiB of the data file cached\n",
	       TOTAL / MIB, (unsigned long long)dropped, cached / 1024);

	/* every byte reads back, through the store, dropped or not */
	uint8_t *want = malloc(BATCH);
	REQUIRE(want, "out of memory");
	for (uint64_t off = 0; off < TOTAL; off += BATCH) {
		fill(want, BATCH, seed + off);
		memset(buf, 0xa5, BATCH);
		REQUIRE(store_read(d, off / 512, BATCH / 512, buf) == 0, "read at %llu: %s",
		        (unsigned long long)off, store_errmsg(s));
		CHECK(memcmp(buf, want, BATCH) == 0, "the stream differs at %llu MiB", (unsigned long long)(off / MIB));
	}
	store_device_release(d);
	store_close(s);
	free(want);
	free(buf);
	free(db);
	return tu_finish("test_writeback");
}
