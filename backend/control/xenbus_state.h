/*
 * xenbus_state.h - the per-device XenbusState machine (xenbus_state.c), as
 * discovery (xenbus.c) and the daemon drive it.  It calls runs.c,
 * domains.c, xl_disks.c, xs_values.c and the data path, never xenbus.c.
 */
#ifndef PROFSVC_BE_XENBUS_STATE_H
#define PROFSVC_BE_XENBUS_STATE_H

#include <stdint.h>

struct be_backend;
struct be_device;

/* "Connected" for XB_CONNECTED; "?" past Closed. */
const char *be_xenbus_state_name(int s);

/* A device of ours (xl: stock xl's vbd) first seen: on b->devices, not
 * yet looked at; NULL without memory. */
struct be_device *be_device_new(struct be_backend *b, int xl, uint32_t domid, uint32_t devid);
/* Looks again at one device and moves it along; may free it. */
void be_device_refresh(struct be_device *d);
/* 1 when its frontend's state (read now, nothing else) asks nothing new
 * of the device, so that a look at it can be skipped; 0 otherwise. */
int be_device_frontend_unchanged(struct be_device *d);
/* Removes a device: closed, its nodes removed, its run told. */
void be_device_free(struct be_device *d, int domain_dead, const char *why);
/* The backend stops: a device (unlinked by the caller) closed and freed,
 * its xenstore nodes left for the next start. */
void be_device_drop(struct be_device *d);
/* Removes .../profsvc/<domid> when it holds no device (and, with
 * only_if_dead, when the domain is gone). */
void be_remove_domain_dir_if_empty(struct be_backend *b, uint32_t domid, int only_if_dead);

/* Closes every device of run r (its run is to be deleted): Closing, its
 * ring and store device let go, never connected again in this boot; the
 * run told (be_run_device_gone).  The pipeline must be drained.  Returns how
 * many were closed. */
int be_devices_close_run(struct be_backend *b, struct be_run *r);

/* Disconnects (to Closing) the devices whose ring io.c found bogus. */
void be_xenbus_fail_broken(struct be_backend *b);

#endif
