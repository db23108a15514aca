/*
 * batch.c - refusing one request of a batch (batch.h): its status set,
 * done with, its error left for the store's counters.  Calls only log.c.
 *
 * May call: log.c, common/ (state.h), libc.
 */
#include "config.h"

#include "backend/common/log.h"
#include "batch.h"

void be_batch_fail(struct be_pending_req *it, int16_t status, const char *why)
{
	/* Also runs on the worker: only the item is touched here. */
	it->status = status;
	it->pending = 0;
	it->noted = 0; /* counted in the store by the worker or at finish */
	be_bdebug("dom%u %s: request %llu (op %u) refused: %s", it->d->domid, it->d->vdev,
	       (unsigned long long)it->req.id, it->req.operation, why);
}
