/*
 * journal.c - the response journal that makes restart-without-loss exact.
 *
 * Why: a ring slot holds a request until the backend writes the response
 * into the same slot.  Responses are written, then published by moving
 * rsp_prod.  A backend killed in between leaves slots that hold responses
 * (the request's operation and segment count overwritten by the id) while
 * rsp_prod still says "unanswered"; re-executing those slots would answer
 * garbage.  So before a batch's responses touch the ring they are recorded
 * here, in a small file mapped MAP_SHARED in the run directory (the page
 * cache keeps it across a SIGKILL).  On reconnect: if the ring's rsp_prod
 * still equals the journal's start, the responses are written and
 * published again from the journal (their data was committed before they
 * were written); if it is past them, they were published.  Requests after
 * them are re-executed as usual.
 *
 * A journal belongs to one ring: the first ring grant and the event
 * channel identify it, so a frontend that reconnected with a new ring finds
 * no stale journal.
 *
 * May call: blkif/ and log.c, common/ (state.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "journal.h"

#define JOURNAL_MAGIC 0x4a505253u /* "SRPJ" */
#define JOURNAL_SLOTS 512u        /* the biggest ring we accept */

struct journal_entry {
	uint64_t id;
	int16_t status;
	uint8_t op;
	uint8_t pad[5];
};

struct journal {
	uint32_t magic;
	uint32_t ring_ref0, remote_port;
	uint32_t start;
	uint32_t count; /* 0: nothing unpublished */
	uint32_t pad;
	struct journal_entry e[JOURNAL_SLOTS];
};

static void journal_path(const struct be_device *d, char *out, size_t len)
{
	snprintf(out, len, "%s/ring-%u-%u.journal", d->b->env.opt.run_dir, d->domid, d->devid);
}

/* Opens (creating) the device's journal; on failure restarts are merely
 * less exact, so it is logged and the device works without one. */
int be_journal_open(struct be_device *d, uint32_t ring_ref0)
{
	char path[512];
	int fd;

	be_journal_close(d);
	journal_path(d, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct journal)) != 0) {
		be_dlog_at(LOG_ERR, d, "response journal %s: %s (a restart may answer in-flight requests wrongly)",
		     path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *m = mmap(NULL, sizeof(struct journal), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	d->journal = m;
	struct journal *j = d->journal;
	if (j->magic != JOURNAL_MAGIC || j->ring_ref0 != ring_ref0 || j->remote_port != d->remote_port ||
	    j->count > JOURNAL_SLOTS) {
		/* Not this ring's: start clean. */
		memset(j, 0, offsetof(struct journal, e));
		j->ring_ref0 = ring_ref0;
		j->remote_port = d->remote_port;
		__atomic_store_n(&j->magic, JOURNAL_MAGIC, __ATOMIC_RELEASE);
	}
	return 0;
}

void be_journal_close(struct be_device *d)
{
	if (d->journal)
		munmap(d->journal, sizeof(struct journal));
	d->journal = NULL;
}

void be_journal_remove(struct be_device *d)
{
	char path[512];

	be_journal_close(d);
	journal_path(d, path, sizeof(path));
	unlink(path);
}

/* Called right after be_ring_attach() on (re)connect. */
void be_journal_recover(struct be_device *d)
{
	struct journal *j = d->journal;

	if (!j || j->count == 0)
		return;
	uint32_t shared = d->ring.rsp_prod_pvt; /* be_ring_attach read rsp_prod */
	if (shared == j->start && j->count <= d->ring.slots) {
		for (uint32_t i = 0; i < j->count; i++)
			be_blkif_write_response(d->ring.abi, be_ring_next_response(&d->ring), j->e[i].id, j->e[i].op,
			                     j->e[i].status);
		d->ring.req_cons = d->ring.rsp_prod_pvt;
		/* The guest may be asleep waiting for exactly these. */
		if (be_ring_push_responses(&d->ring))
			plat_evtchn_notify(d->b->env.evt, d->local_port);
		be_dlog_at(LOG_NOTICE, d, "published %u response(s) the previous backend wrote but did not publish",
		     j->count);
	}
	__atomic_store_n(&j->count, 0, __ATOMIC_RELEASE);
}

/* Before writing n responses starting at ring index start. */
void be_journal_begin(struct be_device *d, uint32_t start, uint32_t n, const uint64_t *ids,
                   const uint8_t *ops, const int16_t *status)
{
	struct journal *j = d->journal;

	if (!j || n > JOURNAL_SLOTS)
		return;
	__atomic_store_n(&j->count, 0, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++)
		j->e[i] = (struct journal_entry){ids[i], status[i], ops[i], {0}};
	j->start = start;
	__atomic_store_n(&j->count, n, __ATOMIC_RELEASE);
}

/* After the responses were published. */
void be_journal_end(struct be_device *d)
{
	if (d->journal)
		__atomic_store_n(&((struct journal *)d->journal)->count, 0, __ATOMIC_RELEASE);
}
