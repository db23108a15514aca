/*
 * test_slots.c - the data file's freed slots (store/store_slots.c): a
 * rewritten chunk's old slot is reused once no reader can see it, never
 * before, and the space comes back without waiting for more writes.
 *
 * An owner rewrites one 4 MiB region (64 whole chunks) 200 times.  A
 * reader takes a snapshot a quarter of the way and holds it while 100
 * more rewrites go on: it must still read its version, byte for byte,
 * however many slots were freed and reused around it.  Then, with the
 * reader gone, store_give_back (what the backend calls when its guests
 * are quiet) gives back everything that waited: the data file is the
 * live data and its header, allocated and in size (reused, not grown),
 * after the writes, and after a reopen, and `check` finds nothing wrong.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "testutil.h"

#define MIB (1u << 20)
#define REGION (4u * MIB)
#define REWRITES 200
#define SNAPSHOT_AT 50
#define SNAPSHOT_HELD 100

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tu_rand(&seed);
		memcpy(p + i, &v, 8);
	}
}

static void file_size(const char *path, int64_t *allocated, int64_t *apparent)
{
	struct stat st;
	REQUIRE(stat(path, &st) == 0, "stat %s", path);
	*allocated = (int64_t)st.st_blocks * 512;
	*apparent = (int64_t)st.st_size;
}

static void check_ok(struct store *s, const char *when)
{
	char report[1024];
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "%s: check says %s", when, report);
}

int main(void)
{
	char *db = tu_path("slots.db"), data[4200];
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1};
	struct store *s, *r = NULL;
	char err[512];
	struct store_run run = {.domid = 3, .name = "rewrite", .uuid = "u"};
	struct store_device *d;
	uint8_t *buf = malloc(REGION), *want = malloc(REGION);
	uint64_t seed = tu_seed(20261126);
	/* allocated: the live data, twice, and a few MiB; in size also the
	 * free slots below the live ones (not grown by every rewrite: 804 MiB
	 * without reuse) */
	const int64_t bound = 2 * (int64_t)REGION + 4 * MIB, size_bound = 64 * (int64_t)MIB;

	REQUIRE(buf && want, "out of memory");
	snprintf(data, sizeof(data), "%s-data", db);
	REQUIRE(store_open(&s, db, &o, err, sizeof(err)) == 0, "store_open: %s", err);
	REQUIRE(store_run_begin(s, &run) == 0, "%s", store_errmsg(s));
	REQUIRE(store_device_create(s, run.run_id, "xvdb", 51728, 2 * REGION / 512, &d) == 0, "%s",
	        store_errmsg(s));
	int64_t dev = store_device_id(d), worst = 0, alloc, size;
	for (int v = 0; v <= REWRITES; v++) {
		if (v == REWRITES) {
			/* The guest pauses before its last version, as the backend
			 * sees guests do: what no reader sees is given back then
			 * (the backend does so once its guests have been quiet), so
			 * the last version takes the lowest slots, whatever the
			 * checkpointer's pace while the rewrites ran. */
			int64_t w = -1;
			for (int tries = 0; tries < 100 && w != 0; tries++) {
				if (tries)
					usleep(50 * 1000);
				REQUIRE(store_give_back(s, &w) == 0, "store_give_back: %s", store_errmsg(s));
			}
		}
		fill(buf, REGION, seed + (uint64_t)v);
		struct store_segment seg = {0, REGION / 512, buf};
		REQUIRE(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 && store_batch_commit(s) == 0,
		        "rewrite %d: %s", v, store_errmsg(s));
		if (v == SNAPSHOT_AT) {
			r = tu_open_store(db, STORE_READ);
			REQUIRE(store_read_begin(r) == 0, "%s", store_errmsg(r));
			struct tu_buf got = {0};
			REQUIRE(store_read_range(r, dev, 0, REGION, tu_buf_cb, &got) == 0, "%s", store_errmsg(r));
			CHECK(got.len == REGION && memcmp(got.p, buf, REGION) == 0, "the reader's first read differs");
			free(got.p);
		}
		if (r && v == SNAPSHOT_AT + SNAPSHOT_HELD) {
			/* the snapshot still reads version SNAPSHOT_AT */
			struct tu_buf got = {0};
			fill(want, REGION, seed + SNAPSHOT_AT);
			REQUIRE(store_read_range(r, dev, 0, REGION, tu_buf_cb, &got) == 0, "%s", store_errmsg(r));
			CHECK(got.len == REGION && memcmp(got.p, want, REGION) == 0,
			      "a reader's snapshot changed under it while %d rewrites freed and reused slots",
			      SNAPSHOT_HELD);
			free(got.p);
			store_read_end(r);
			store_close(r);
			r = NULL;
		}
		file_size(data, &alloc, &size);
		worst = alloc > worst ? alloc : worst;
	}
	/* Past 16 MiB of freed slots the writer proves them unseen itself
	 * (store_checkpoint.c): while the reader held its snapshot that
	 * failed (it may name them), and once it was gone it gave them back. */
	struct store_slot_proofs pr;
	REQUIRE(store_slot_proofs(s, &pr) == 0, "%s", store_errmsg(s));
	printf("test_slots: the writer's proofs: %lld, %lld held up by the reader, %lld slots given back\n",
	       (long long)pr.proofs, (long long)pr.failed, (long long)pr.given);
	CHECK(pr.failed > 0 && pr.given >= SNAPSHOT_HELD * (int64_t)(REGION / (64 * 1024)),
	      "the writer's proofs: %lld held up by the reader (none is wrong), %lld slots given back (fewer than the "
	      "%d the reader held)",
	      (long long)pr.failed, (long long)pr.given, SNAPSHOT_HELD * (int)(REGION / (64 * 1024)));
	/* As the backend does while its guests are quiet: again a little
	 * later while the checkpointer's own pass makes it wait. */
	int64_t waiting = -1;
	for (int tries = 0; tries < 100 && waiting != 0; tries++) {
		if (tries)
			usleep(50 * 1000);
		REQUIRE(store_give_back(s, &waiting) == 0, "store_give_back: %s", store_errmsg(s));
	}
	file_size(data, &alloc, &size);
	printf("test_slots: %d MiB rewritten over %u MiB: data file at most %lld KiB allocated, then %lld KiB "
	       "(%lld KiB in size), %lld slots waiting\n",
	       (REWRITES + 1) * (int)(REGION / MIB), REGION / MIB, (long long)(worst / 1024),
	       (long long)(alloc / 1024), (long long)(size / 1024), (long long)waiting);
	CHECK(waiting == 0, "%lld freed slots still wait with no reader", (long long)waiting);
	CHECK(alloc <= bound && size <= size_bound,
	      "the data file holds %lld KiB (%lld KiB in size) for %u MiB of live data", (long long)(alloc / 1024),
	      (long long)(size / 1024), REGION / MIB);
	struct store_space sp;
	REQUIRE(store_space(s, &sp) == 0, "%s", store_errmsg(s));
	CHECK(sp.slots_in_use == REGION / (64 * 1024) && sp.slots_freed == 0, "%lld slots in use, %lld waiting",
	      (long long)sp.slots_in_use, (long long)sp.slots_freed);
	check_ok(s, "after the rewrites");
	store_device_release(d);
	store_close(s);

	/* a restart keeps it so, and the last version reads back */
	REQUIRE(store_open(&s, db, &o, err, sizeof(err)) == 0, "store_open: %s", err);
	file_size(data, &alloc, &size);
	CHECK(alloc <= bound && size <= size_bound, "reopened, the data file holds %lld KiB (%lld KiB in size)",
	      (long long)(alloc / 1024), (long long)(size / 1024));
	check_ok(s, "reopened");
	struct tu_buf got = {0};
	fill(want, REGION, seed + REWRITES);
	REQUIRE(store_read_range(s, dev, 0, REGION, tu_buf_cb, &got) == 0, "%s", store_errmsg(s));
	CHECK(got.len == REGION && memcmp(got.p, want, REGION) == 0, "the last version does not read back");
	free(got.p);
	store_close(s);
	free(want);
	free(buf);
	free(db);
	return tu_finish("test_slots");
}
