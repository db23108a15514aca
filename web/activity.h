/*
 * activity.h - which runs changed, for profdb serve's run streams: one
 * thread looks at every running run's stamp (store_running_activity) each
 * time the store changes, and counts a change for each run whose stamp
 * moved, appeared or left the running set.  A stream then waits for its
 * own run's count to move, so a page costs nothing while other guests
 * write, and the store sees one small query per change however many pages
 * are open.
 *
 * May call: store/store.h, store/store_watch.h, util/deadline.h,
 * view/view_backend.h, pthreads (activity.c).
 */
#ifndef PROFSVC_ACTIVITY_H
#define PROFSVC_ACTIVITY_H

#include <stdint.h>

struct store_watch;
struct activity;

struct activity *activity_start(const char *db, struct store_watch *w);
/* Stops the thread (after store_watch_stop, which wakes it); frees. */
void activity_free(struct activity *a);
/* The run's change count now. */
uint64_t activity_count(struct activity *a, int64_t run_id);
/* Waits until the run's count differs from seen, the watch stops, or
 * timeout_ms passes; returns the count then. */
uint64_t activity_wait(struct activity *a, int64_t run_id, uint64_t seen, int timeout_ms);

#endif
