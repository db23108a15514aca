/*
 * store_watch.h - how a reader (profdb serve, profdb watch) learns that the store changed: a thread
 * watches the store's directory with inotify (the backend's every commit
 * writes the WAL) and, where inotify says nothing (another filesystem, a
 * store replaced under us), looks at the files' sizes and times every
 * half second.  Each change bumps a generation number; a page's event
 * stream waits for the number to move.  Nothing here reads the database:
 * waking up costs a stream one small query, never the backend anything.
 */
#ifndef PROFSVC_STORE_WATCH_H
#define PROFSVC_STORE_WATCH_H

#include <stdint.h>

struct store_watch;

/* Watches the store at db_path.  NULL with errno on failure. */
struct store_watch *store_watch_start(const char *db_path);
/* Wakes every waiter (they see store_watch_stopping()) and joins the thread;
 * waiters may still look at it until store_watch_free(). */
void store_watch_stop(struct store_watch *l);
void store_watch_free(struct store_watch *l);
int store_watch_stopping(const struct store_watch *l);
/* The current generation. */
uint64_t store_watch_generation(struct store_watch *l);
/* Waits until the generation differs from seen, the server stops, or
 * timeout_ms passes; returns the generation then. */
uint64_t store_watch_wait(struct store_watch *l, uint64_t seen, int timeout_ms);

#endif
