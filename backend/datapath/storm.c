/*
 * storm.c - event channel storms (XSA-332): a guest that notifies without
 * queueing requests makes the backend wake, look at its ring and find
 * nothing, over and over.  Ports are unmasked only once their ring is
 * drained, and a device that woke us 1000 times in under a second with
 * nothing to do has its unmask delayed by 10 ms each time, so that it
 * cannot take the loop from the other guests.
 *
 * Owns no state of its own: what it keeps is the device's (port_masked,
 * spurious, unmask_at_us); it is given the event channels and the list.
 *
 * May call: log.c, the store's clock and the platform, common/ (state.h).
 */
#include "config.h"

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "storm.h"

void be_storm_empty_wakeup(struct be_device *d)
{
	int64_t t = store_now_us();

	if (t - d->spurious_since_us > 1000000) {
		d->spurious_since_us = t;
		d->spurious = 0;
	}
	if (++d->spurious == 1000)
		be_dlog_at(LOG_WARNING, d, "event storm (1000 empty notifications in under a second): delaying unmask");
	if (d->spurious >= 1000)
		d->unmask_at_us = t + 10000;
}

/* Unmasks the ports of devices whose rings are drained; returns the
 * epoll timeout (ms) the next delayed unmask needs, or -1. */
int be_storm_unmask_ports(struct plat_evtchn *evt, struct be_device *devices)
{
	int64_t now = store_now_us(), next = -1;

	for (struct be_device *d = devices; d; d = d->next) {
		if (!d->port_masked || !d->connected || d->work != WORK_IDLE)
			continue;
		if (d->unmask_at_us > now) {
			int64_t wait = (d->unmask_at_us - now) / 1000 + 1;
			next = next < 0 || wait < next ? wait : next;
			continue;
		}
		plat_evtchn_unmask(evt, d->local_port);
		d->port_masked = 0;
	}
	return (int)next;
}
