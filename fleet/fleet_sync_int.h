/*
 * fleet_sync_int.h - what fleet_sync.c (which runs to push, and when) and
 * fleet_sync_send.c (a run's rows and bytes sent) share: a run as it is
 * here, and what could not be read of it.  Private to those two files.
 * May call: fleet_internal.h, store/store.h (the types it names).
 */
#ifndef PROFSVC_FLEET_SYNC_INT_H
#define PROFSVC_FLEET_SYNC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fleet_internal.h"
#include "store/store.h"

/* What of a device could not be read here: its first damaged range and how
 * many chunks or packets failed. */
struct dev_damage {
	char what[256];
	int64_t count;
};

struct local_run {
	struct store_run run;
	struct store_device_info *dev;
	struct dev_damage *dmg; /* one per device, as dev */
	size_t ndev, cap;
	char stamp[17];
	int64_t damaged;        /* devices left out */
	char partial_stamp[40]; /* stamp/digest when damaged */
};

/* Pushes run l (its rows, then its bytes by binary COPY) in one
 * transaction; *bytes: what was sent.  0, or -1 with f's error. */
int fleet_run_push(struct fleet *f, struct store *s, const char *host_id, struct local_run *l,
                   int64_t *bytes);
/* The run's devices read here and nothing sent, for their damage alone
 * (l->damaged, l->partial_stamp): 0, or -1. */
int fleet_run_verify(struct fleet *f, struct store *s, struct local_run *l);
/* What the catalogue says of device i of l left out (devices.damaged). */
void fleet_device_damage_text(const struct local_run *l, size_t i, char *out, size_t len);

#endif
