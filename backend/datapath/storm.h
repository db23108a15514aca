/*
 * storm.h - event channel storms (XSA-332).  A wake-up that found no
 * request; and the unmask of drained ports (ms to the next delayed one,
 * or -1).  storm.c calls log.c, the store's clock and the platform.
 */
#ifndef PROFSVC_BE_STORM_H
#define PROFSVC_BE_STORM_H

struct be_device;
struct plat_evtchn;

void be_storm_empty_wakeup(struct be_device *d);
/* Of the devices on the list devices. */
int be_storm_unmask_ports(struct plat_evtchn *evt, struct be_device *devices);

#endif
