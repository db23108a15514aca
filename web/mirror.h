/*
 * mirror.h - profdb serve over a fleet catalogue: a private store mirroring
 * it (mirror.c says how and why).
 *
 * May call: fleet/fleet.h, util/deadline.h, util/id_index.h, pthreads
 * (mirror.c).
 */
#ifndef PROFSVC_WEB_MIRROR_H
#define PROFSVC_WEB_MIRROR_H

#include <stddef.h>
#include <stdint.h>

struct mirror;

/* Connects to the catalogue at url, makes the private store and fills it
 * with every run's rows from a thread, which then keeps it current.  It
 * waits up to a second for that first look: one that fails by then fails
 * the start (-1 with a reason in err); a longer one goes on while the
 * server answers (mirror_loaded). */
int mirror_start(struct mirror **out, const char *url, char *err, size_t len);
/* 1 once the first look has copied every run's rows, else 0 with *met
 * (if not NULL) the runs copied so far.  Never waits. */
int mirror_loaded(const struct mirror *m, long long *met);
/* The private store's path (what the server serves). */
const char *mirror_path(const struct mirror *m);
/* Before a request reads run local_id's bytes: fetched once.  0, or -1
 * with a reason in err (the run still lists, without its bytes). */
int mirror_ensure(struct mirror *m, int64_t local_id, char *err, size_t len);
/* Stops the thread, removes the private store. */
void mirror_stop(struct mirror *m);

#endif
