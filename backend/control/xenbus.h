/*
 * xenbus.h - device discovery: xenstore watch events, handled in rounds,
 * and the devices they name looked at again (xenbus_state.c moves each
 * one).  xenbus.c calls xenbus_state.c, domains.c, xl_disks.c,
 * xs_values.c, the data path's io_quiesce, log.c and xenstore; it tells
 * runs and traces of a round through the listener below, which the daemon
 * wires.
 */
#ifndef PROFSVC_BE_XENBUS_H
#define PROFSVC_BE_XENBUS_H

#include <stdint.h>

struct backend;
struct device;

/* What xenbus tells the rest of the control plane (runs, traces) in a
 * round of watch events; the daemon wires it, so that xenbus calls none of
 * them by name.  note_event: a watch of theirs fired (tokens "intro",
 * "mprof"), 1 to act this round; domains_changed: some domain died (after
 * its devices went); round: the round's end, when note_event asked. */
struct xenbus_listener {
	int (*note_event)(struct backend *b, const char *path, const char *token);
	void (*domains_changed)(struct backend *b);
	void (*round)(struct backend *b);
};
int xenbus_init(struct backend *b, const struct xenbus_listener *l);
/* Watches fired: every event queued now is noted (path and token as
 * xenstore gave them), then acted on once per device, domain or kind. */
void xenbus_watch_events(struct backend *b);
/* Re-reads everything (at start and after @releaseDomain). */
void xenbus_scan(struct backend *b);
void xenbus_shutdown(struct backend *b);
struct device *device_by_port(struct backend *b, uint32_t port);
/* Frontends' xenstore events past their rate, looked at later: acts on
 * those that are due and returns the ms until the next one is, or -1. */
int xenbus_deferred_run(struct backend *b);

#endif
