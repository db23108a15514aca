/*
 * runs.h - one run per guest boot, ended when the domain dies.  runs.c
 * calls domains.c, sync_push.c, quota.c, log.c and the store.
 */
#ifndef PROFSVC_BE_RUNS_H
#define PROFSVC_BE_RUNS_H

#include <stdint.h>

struct be_domains;
struct be_env;
struct be_run;
struct be_sync_push;

/* Its state: the runs being captured (struct be_run, common/state.h),
 * and how many ended. */
struct be_runs;

/* sync: where an ended run is pushed (NULL: no --sync). */
struct be_runs *be_runs_new(const struct be_env *env, struct be_domains *dm, struct be_sync_push *sync);
/* Forgets every run (the backend stops: they go on in the store) and
 * frees rs (NULL: nothing). */
void be_runs_free(struct be_runs *rs);

/* The run of the domain's current boot, resumed or started; NULL with
 * *gone set when the domain is already being torn down. */
struct be_run *be_run_for_domain(struct be_runs *rs, uint32_t domid, int *gone);
/* A device of r (a disk, its trace, its samples) was added or is gone. */
void be_run_device_added(struct be_run *r);
void be_run_device_gone(struct be_runs *rs, struct be_run *r, int domain_dead);
/* At start: runs still marked running whose domains are gone are ended. */
void be_runs_reconcile(struct be_runs *rs);
/* After @releaseDomain: runs without devices whose domain died end. */
void be_runs_domains_changed(struct be_runs *rs);
/* Retries ending the runs the store could not end; the milliseconds until
 * the next try, or -1 when none waits. */
int be_runs_retry_ends(struct be_runs *rs);
/* The run being captured with this id, or NULL. */
struct be_run *be_run_find(struct be_runs *rs, int64_t run_id);
/* Ends r in the store now (why kept with it), before it is deleted: its
 * devices were closed; r is forgotten once nothing points at it.  0, or
 * -1 when the store refused (logged; it is closed all the same). */
int be_run_close(struct be_runs *rs, struct be_run *r, const char *why);
/* The runs being captured, newest first (then ->next), for status. */
const struct be_run *be_runs_first(const struct be_runs *rs);
/* How many runs ended in the store so far (their freed space is given
 * back once the guests are quiet: io_worker.c). */
uint64_t be_runs_ended(const struct be_runs *rs);

#endif
