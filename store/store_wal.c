/*
 * store_wal.c - the store's -wal file read as SQLite's recovery reads it,
 * to find what recovery would silently leave out.
 *
 * SQLite's WAL (its file format page, "WAL File Format"): a 32-byte
 * header (magic, version, page size, checkpoint sequence, two salts, a
 * checksum of its first 24 bytes), then frames of a 24-byte header (page
 * number, the database's size in pages on a commit frame and 0 on the
 * others, the two salts, a checksum) and one page.  The checksums are
 * cumulative: each frame's is computed over its first 8 header bytes and
 * its page, seeded with the previous frame's (the header's for the first).
 * Recovery keeps the frames from the first on while their salts are the
 * header's and their checksums hold, up to the last commit among them;
 * it stops at the first that fails.  That is right for what a crash tore
 * off the end.  It is silent loss when sound frames of the same
 * generation (the header's salts) follow the one that fails: a flipped
 * bit in the middle of a -wal, and every commit after it is gone, while
 * the older frames before it shadow newer pages of the database (a -wal
 * that a clean stop left full of frames already checkpointed: readers saw
 * 3 of 7 runs, and `check` said ok).  The frames after a failed one can
 * still be told sound: a frame's checksum is seeded with the checksum its
 * predecessor's header holds, whatever that frame's own bytes.
 *
 * Layer 1 (store_internal.h): files only, the -wal through a descriptor
 * of its own and the database's pages through store_raw_fd's (closing a
 * descriptor of the database would drop SQLite's locks).  May call:
 * store_conn.c.  store_open.c calls it, before a connection that may
 * write opens the store, and for `profdb check`.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

#define WAL_HDR 32
#define FRAME_HDR 24

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* SQLite's WAL checksum over len bytes (a multiple of 8), seeded with s. */
static void wal_sum(const uint8_t *p, size_t len, int big, uint32_t s[2])
{
	uint32_t s0 = s[0], s1 = s[1];
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint32_t a = big ? be32(p + i) : le32(p + i), b = big ? be32(p + i + 4) : le32(p + i + 4);
		s0 += a + s1;
		s1 += b + s0;
	}
	s[0] = s0;
	s[1] = s1;
}

static int full_pread(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

struct frame_ref {
	uint32_t pgno;
	uint32_t frame; /* 1-based */
};

static int cmp_ref(const void *a, const void *b)
{
	const struct frame_ref *x = a, *y = b;
	if (x->pgno != y->pgno)
		return x->pgno < y->pgno ? -1 : 1;
	return x->frame < y->frame ? 1 : x->frame > y->frame ? -1 : 0; /* newest first */
}

static int bits_differ(const uint8_t *a, const uint8_t *b, size_t len)
{
	int n = 0;
	for (size_t i = 0; i < len; i++)
		n += __builtin_popcount((unsigned)(a[i] ^ b[i]));
	return n;
}

/* Whether every page the generation's frames hold is the database's
 * already (a -wal a checkpoint left behind): the newest copy of each page
 * equal to the database's page, the failed frame's copy within a few
 * flipped bits of it.  1 yes, 0 no, -1 could not tell. */
static int frames_in_db(const char *db_path, int wal_fd, uint32_t pgsz, const struct frame_ref *refs,
                        size_t nrefs, uint32_t bad)
{
	struct frame_ref *v = malloc(nrefs * sizeof(*v));
	uint8_t *a = malloc(pgsz), *b = malloc(pgsz);
	int fd = store_raw_fd(db_path), stale = -1;

	if (!v || !a || !b || fd < 0)
		goto out;
	memcpy(v, refs, nrefs * sizeof(*v));
	qsort(v, nrefs, sizeof(*v), cmp_ref);
	stale = 1;
	for (size_t i = 0; i < nrefs && stale == 1; i++) {
		if (i > 0 && v[i].pgno == v[i - 1].pgno)
			continue; /* an older copy */
		off_t at = WAL_HDR + (off_t)(v[i].frame - 1) * (FRAME_HDR + pgsz) + FRAME_HDR;
		if (full_pread(wal_fd, a, pgsz, at) != 0) {
			stale = -1;
			break;
		}
		if (full_pread(fd, b, pgsz, (off_t)(v[i].pgno - 1) * pgsz) != 0) {
			stale = 0; /* the database has no such page */
			break;
		}
		int diff = bits_differ(a, b, pgsz);
		if (diff != 0 && !(v[i].frame == bad && diff <= 16))
			stale = 0;
	}
out:
	free(v);
	free(a);
	free(b);
	return stale;
}

/* What the header says that the frames are read by. */
struct wal_walk {
	int big;              /* checksums big-endian (the magic's low bit) */
	uint32_t pgsz;
	uint32_t salt1, salt2; /* the generation */
	uint32_t sum[2];      /* the header's checksum, which the chain starts from */
};

/* The header at the start of fd into r and w: 1 when frames follow that
 * SQLite would read, 0 when not (r says why), -1 when unreadable. */
static int read_wal_header(int fd, struct store_wal_report *r, struct wal_walk *w)
{
	uint8_t hdr[WAL_HDR];

	if (full_pread(fd, hdr, sizeof(hdr), 0) != 0)
		return -1;
	uint32_t magic = be32(hdr), pgsz = be32(hdr + 8);
	if (pgsz == 1)
		pgsz = 65536;
	if ((magic & ~1u) != 0x377f0682u || pgsz < 512 || pgsz > 65536 || (pgsz & (pgsz - 1))) {
		/* not a WAL SQLite would read at all: it starts over */
		r->header_bad = 1;
		return 0;
	}
	w->big = magic & 1;
	uint32_t sum[2] = {0, 0};
	wal_sum(hdr, 24, w->big, sum);
	w->salt1 = be32(hdr + 16);
	w->salt2 = be32(hdr + 20);
	w->sum[0] = be32(hdr + 24);
	w->sum[1] = be32(hdr + 28);
	w->pgsz = pgsz;
	r->header_bad = sum[0] != w->sum[0] || sum[1] != w->sum[1];
	r->page_size = pgsz;
	return 1;
}

/* Every frame of fd, as recovery chains them and each against its
 * predecessor's sum, into r; the pages they hold into refs (*nrefs).
 * 0, or -1 when unreadable. */
static int walk_frames(int fd, struct wal_walk *w, struct store_wal_report *r, struct frame_ref *refs,
                       size_t *nrefs)
{
	uint32_t pgsz = w->pgsz;
	uint8_t *buf = malloc(FRAME_HDR + pgsz);
	uint32_t chain[2] = {w->sum[0], w->sum[1]}, prev[2] = {w->sum[0], w->sum[1]};
	int broken = r->header_bad;

	if (!buf)
		return -1;
	if (broken)
		r->first_bad = 1; /* recovery keeps nothing */
	for (uint32_t f = 1; f <= (uint32_t)r->frames; f++) {
		off_t at = WAL_HDR + (off_t)(f - 1) * (FRAME_HDR + pgsz);
		if (full_pread(fd, buf, FRAME_HDR + pgsz, at) != 0) {
			free(buf);
			return -1;
		}
		uint32_t pgno = be32(buf), commit = be32(buf + 4);
		uint32_t want[2] = {be32(buf + 16), be32(buf + 20)};
		if (r->header_bad && f == 1) {
			/* the header's own bytes are not to be trusted: the
			 * generation is the first frame's */
			w->salt1 = be32(buf + 8);
			w->salt2 = be32(buf + 12);
		}
		int ours = be32(buf + 8) == w->salt1 && be32(buf + 12) == w->salt2 && pgno != 0;
		uint32_t local[2] = {prev[0], prev[1]};
		wal_sum(buf, 8, w->big, local);
		wal_sum(buf + FRAME_HDR, pgsz, w->big, local);
		int sound = ours && local[0] == want[0] && local[1] == want[1];
		prev[0] = want[0];
		prev[1] = want[1];
		if (!broken) {
			wal_sum(buf, 8, w->big, chain);
			wal_sum(buf + FRAME_HDR, pgsz, w->big, chain);
			if (ours && chain[0] == want[0] && chain[1] == want[1]) {
				r->kept++;
				if (commit)
					r->kept_commits++, r->recovered = f;
				refs[(*nrefs)++] = (struct frame_ref){pgno, f};
				continue;
			}
			broken = 1;
			r->first_bad = f;
			if (ours)
				refs[(*nrefs)++] = (struct frame_ref){pgno, f}; /* its page counts for staleness */
			continue;
		}
		if (!sound)
			continue;
		r->sound_after++;
		if (commit)
			r->commits_after++;
		refs[(*nrefs)++] = (struct frame_ref){pgno, f};
	}
	free(buf);
	return 0;
}

int store_wal_scan(const char *db_path, struct store_wal_report *r)
{
	char path[4200];
	struct stat st;
	struct wal_walk w;
	struct frame_ref *refs = NULL;
	size_t nrefs = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s-wal", db_path);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	r->bytes = st.st_size;
	if (st.st_size < WAL_HDR) {
		rc = 0;
		goto out;
	}
	if ((rc = read_wal_header(fd, r, &w)) <= 0)
		goto out; /* 0: nothing SQLite would read; -1: unreadable */
	rc = -1;
	int64_t frames = (st.st_size - WAL_HDR) / (FRAME_HDR + (int64_t)w.pgsz);
	if (frames > UINT32_MAX - 1)
		frames = UINT32_MAX - 1;
	r->frames = frames;
	if (frames == 0) {
		rc = 0;
		goto out;
	}
	if (!(refs = malloc((size_t)frames * sizeof(*refs))) || walk_frames(fd, &w, r, refs, &nrefs) != 0)
		goto out;
	r->damaged = r->commits_after > 0;
	if (r->damaged)
		r->stale = frames_in_db(db_path, fd, w.pgsz, refs, nrefs, r->first_bad);
	rc = 0;
out:
	free(refs);
	close(fd);
	return rc;
}

void store_wal_describe(const char *db_path, const struct store_wal_report *r, char *out, size_t len)
{
	char where[160];

	if (r->header_bad)
		snprintf(where, sizeof(where), "its header fails its checksum, so SQLite's recovery reads none of its %lld frames",
		         (long long)r->frames);
	else
		snprintf(where, sizeof(where),
		         "SQLite's recovery stops at frame %lld of %lld, whose checksum or salts fail",
		         (long long)r->first_bad, (long long)r->frames);
	int n = snprintf(out, len,
	                 "%s-wal: %s, and %lld sound frames holding %lld commits follow it: readers see the store "
	                 "without those commits, and writers refuse it (their first write would make the loss "
	                 "permanent). ",
	                 db_path, where, (long long)r->sound_after, (long long)r->commits_after);
	if (n < 0 || (size_t)n >= len)
		return;
	if (r->stale == 1)
		snprintf(out + n, len - (size_t)n,
		         "Every page they hold is in the database already (a -wal left after a checkpoint): with no "
		         "profsvc process using the store, empty it (truncate -s 0 %s-wal) and the store is whole",
		         db_path);
	else
		snprintf(out + n, len - (size_t)n,
		         "They hold pages the database lacks: keep a copy of the store's files, then restore it from a "
		         "backup, or move the -wal aside to keep the store as of its last checkpoint");
}
