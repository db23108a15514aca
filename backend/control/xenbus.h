/*
 * xenbus.h - device discovery: xenstore watch events, handled in rounds,
 * and the devices they name looked at again (xenbus_state.c moves each
 * one).  xenbus.c calls xenbus_state.c, domains.c, xl_disks.c,
 * xs_values.c, the data path's be_worker_quiesce, log.c and xenstore; it tells
 * runs and traces of a round through the listener below, which the daemon
 * wires.
 */
#ifndef PROFSVC_BE_XENBUS_H
#define PROFSVC_BE_XENBUS_H

#include <stdint.h>

struct be_backend;
struct be_device;

/* What xenbus tells the rest of the control plane (runs, traces) in a
 * round of watch events; the daemon wires it, so that xenbus calls none of
 * them by name.  note_event: a watch of theirs fired (tokens "intro",
 * "mprof"), 1 to act this round; domains_changed: some domain died (after
 * its devices went); round: the round's end, when note_event asked. */
struct be_xenbus_listener {
	int (*note_event)(struct be_backend *b, const char *path, const char *token);
	void (*domains_changed)(struct be_backend *b);
	void (*round)(struct be_backend *b);
};
int be_xenbus_init(struct be_backend *b, const struct be_xenbus_listener *l);
/* Watches fired: every event queued now is noted (path and token as
 * xenstore gave them), then acted on once per device, domain or kind. */
void be_xenbus_watch_events(struct be_backend *b);
/* Re-reads everything (at start and after @releaseDomain). */
void be_xenbus_scan(struct be_backend *b);
void be_xenbus_shutdown(struct be_backend *b);
struct be_device *be_device_by_port(struct be_backend *b, uint32_t port);
/* Frontends' xenstore events past their rate, looked at later: acts on
 * those that are due and returns the ms until the next one is, or -1. */
int be_xenbus_deferred_run(struct be_backend *b);

#endif
