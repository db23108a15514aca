/*
 * store_intake_recover.c - layer 3 (the intake log): recovery, at open.
 * What a log file holds beyond what SQLite has (a crash between an append
 * and its fold) is found, record by record, and applied in sequence order
 * before the store serves.
 * May call: store_intake_fold.c (applying records), store_intake_rec.c,
 * store_chunks.c (the transaction), store_conn.c, util/grow.h.  Called by
 * store_intake.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_intake_int.h"
#include "util/grow.h"

static int get_folded_seq(struct store *s, uint64_t *seq)
{
	sqlite3_stmt *st = store_stmt(s, ST_META_GET_INTAKE);
	if (!st)
		return STORE_EIO;
	int rc = sqlite3_step(st);
	*seq = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "reading the intake log's place");
}

struct found {
	uint64_t seq;
	size_t off, len;
};

static int by_seq(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The sound records of this store in ring[0, size) past folded, into
 * *found (*nfound of them, malloc'ed); *foreign: records of another store
 * were seen. */
static int scan_ring(struct store *s, const uint8_t *ring, size_t size, uint64_t folded, struct found **found,
                     size_t *nfound, int *foreign)
{
	struct store_intake *in = s->intake;
	size_t capfound = 0;

	for (size_t off = 0; off + sizeof(struct intake_hdr) + 8 <= size;) {
		uint32_t magic;
		memcpy(&magic, ring + off, sizeof(magic));
		size_t len;
		if (magic != INTAKE_MAGIC) {
			off += 8;
			continue;
		}
		struct intake_hdr h;
		memcpy(&h, ring + off, sizeof(h));
		if (intake_rec_parse(ring + off, size - off, h.tag, &len) != 0) {
			off += 8;
			continue;
		}
		if (h.tag != in->tag) {
			*foreign = 1;
		} else if (h.seq > folded) {
			if (GROW_FROM(*found, capfound, *nfound + 1, 64) != 0)
				return store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
			(*found)[(*nfound)++] = (struct found){h.seq, off, len};
		}
		off += len;
	}
	return 0;
}

/* The found records (in sequence order) in groups of up to a group's
 * bytes, one transaction each; *top: the newest applied. */
static int apply_found(struct store *s, const uint8_t *ring, const struct found *found, size_t nfound,
                       uint64_t *top, uint64_t *applied_out)
{
	int rc = 0;
	const uint8_t **group = malloc((nfound ? nfound : 1) * sizeof(*group));
	if (!group)
		return store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
	for (size_t i = 0; i < nfound && !rc;) {
		size_t n = 0, bytes = 0;
		uint64_t last = *top;
		for (; i < nfound && (n == 0 || bytes + found[i].len <= INTAKE_GROUP_BYTES); i++) {
			if (n && found[i].seq == last)
				continue; /* (cannot happen: a seq is written once) */
			group[n++] = ring + found[i].off;
			bytes += found[i].len;
			last = found[i].seq;
		}
		if ((rc = store_txn_begin(s)))
			break;
		if ((rc = intake_apply_records(s, group, n, 1)) || (rc = intake_set_folded_seq(s, last)) ||
		    (rc = store_txn_commit(s))) {
			store_txn_rollback(s);
			break;
		}
		*applied_out += n;
		*top = last;
	}
	free(group);
	return rc;
}

/*
 * What the log holds beyond what SQLite has: every sound record of this
 * store in the ring, wherever it starts (a record checks itself), whose
 * sequence number is past meta.intake_seq, applied in sequence order, in
 * transactions of up to a group's size.  Sets the next sequence number.
 */
int intake_recover(struct store *s, int fd, const char *path, uint64_t *applied_out)
{
	struct store_intake *in = s->intake;
	uint64_t folded, top;
	struct found *found = NULL;
	size_t nfound = 0;
	uint8_t *ring = NULL;
	int rc, foreign = 0;
	struct stat st;

	if ((rc = get_folded_seq(s, &folded)))
		return rc;
	top = folded;
	if (fstat(fd, &st) != 0)
		return store_fail(s, STORE_EIO, "reading the intake log %s: %s", path, strerror(errno));
	/* A ring is INTAKE_RING bytes; a bigger file is not one of ours to
	 * trust further (only its ring's worth is read). */
	size_t size = (size_t)(st.st_size < (off_t)INTAKE_RING + INTAKE_REC_MAX ? st.st_size
	                                                                        : (off_t)INTAKE_RING + INTAKE_REC_MAX);
	if (size && !(ring = malloc(size)))
		return store_fail(s, STORE_ENOMEM, "out of memory reading the intake log");
	if (size && pread(fd, ring, size, 0) != (ssize_t)size) {
		rc = store_fail(s, STORE_EIO, "reading the intake log %s: %s", path, strerror(errno));
		goto out;
	}
	if ((rc = scan_ring(s, ring, size, folded, &found, &nfound, &foreign)))
		goto out;
	if (foreign && !nfound) {
		rc = store_fail(s, STORE_ENOTDB,
		                "the intake log %s holds writes of another store (a database no longer at %s): nothing "
		                "of it can be applied here; move it away to use this database",
		                path, s->path);
		goto out;
	}
	if (nfound)
		qsort(found, nfound, sizeof(*found), by_seq);
	if ((rc = apply_found(s, ring, found, nfound, &top, applied_out)))
		goto out;
	in->next_seq = top + 1;
	in->folded_seq = in->queued_seq = top;
out:
	free(found);
	free(ring);
	return rc;
}
