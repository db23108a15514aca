/*
 * runs.h - one run per guest boot, ended when the domain dies.  runs.c
 * calls domains.c, sync_push.c, quota.c, log.c and the store.
 */
#ifndef PROFSVC_BE_RUNS_H
#define PROFSVC_BE_RUNS_H

#include <stdint.h>

struct be_backend;
struct be_run;

/* The run of the domain's current boot, resumed or started; NULL with
 * *gone set when the domain is already being torn down. */
struct be_run *be_run_for_domain(struct be_backend *b, uint32_t domid, int *gone);
void be_run_device_gone(struct be_backend *b, struct be_run *r, int domain_dead);
/* At start: runs still marked running whose domains are gone are ended. */
void be_runs_reconcile(struct be_backend *b);
/* After @releaseDomain: runs without devices whose domain died end. */
void be_runs_domains_changed(struct be_backend *b);
/* Retries ending the runs the store could not end; the milliseconds until
 * the next try, or -1 when none waits. */
int be_runs_retry_ends(struct be_backend *b);
/* The run being captured with this id, or NULL. */
struct be_run *be_run_find(struct be_backend *b, int64_t run_id);
/* Ends r in the store now (why kept with it), before it is deleted: its
 * devices were closed; r is forgotten once nothing points at it.  0, or
 * -1 when the store refused (logged; it is closed all the same). */
int be_run_close(struct be_backend *b, struct be_run *r, const char *why);

#endif
