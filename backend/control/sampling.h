/*
 * sampling.h - the daemon's side of black-box sampling (sampling.c): a
 * domain sampled on request (`profile-backend sample`, through the control
 * socket) gets a sampler thread (backend/sampling/sampler.h) and a device
 * "samples" in its run (one run per boot, made for it when the domain has
 * no profsvc disk); what the sampler emits is queued and appended to that
 * device by the event loop, in store batches at most every
 * SAMPLING_FLUSH_MS, so a reader sees new samples within a second.
 * struct be_sampling is its state.  sampling.c may call the sampler,
 * runs.c, domains.c, the data path's be_worker_quiesce, quota.c, log.c,
 * the store and xenstore; the daemon and control_socket.c call it.
 */
#ifndef PROFSVC_BE_SAMPLING_H
#define PROFSVC_BE_SAMPLING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct be_backend;
struct be_run;

/* Its state: the domains sampled, their pauses, --sample-hz's domains. */
struct be_sampling;

/* NULL without memory. */
struct be_sampling *be_sampling_new(void);
/* After be_sampling_shutdown (NULL: nothing). */
void be_sampling_free(struct be_sampling *sp);

#define SAMPLING_FLUSH_MS 200

struct be_sampling_request {
	const char *domain;   /* a domid or a domain's name */
	uint32_t hz;
	uint64_t duration_us; /* 0: until the domain ends, or the asker hangs up */
	const char *symbols;  /* an absolute path, or NULL */
	const char *kernel_symbols; /* a guest kernel's System.map: an absolute path, or NULL */
};

/* Starts sampling: 0 and the domid, or -1 with a message.  The domain is
 * opened on the sampler's thread; its run comes once it is (a domain that
 * cannot be sampled gets none, and its summary says why). */
int be_sampling_start(struct be_backend *b, const struct be_sampling_request *rq, uint32_t *domid, char *err,
                   size_t errlen);
/* Stops a domain's sampling (its asker hung up). */
void be_sampling_stop(struct be_backend *b, uint32_t domid);
/* Run r is being deleted: a sampler storing into it stops. */
void be_sampling_run_closed(struct be_backend *b, struct be_run *r);
/* 1 and a summary line when the domain's sampling has finished (and
 * everything it took is stored; "error: ..." when it could not start); 0
 * while it runs; -1 when the domain is not being sampled. */
int be_sampling_result(struct be_sampling *sp, uint32_t domid, char *line, size_t len);
/* Stores what the samplers queued, ends the finished ones; the ms until
 * it wants to run again, or -1 when nothing is sampled. */
int be_sampling_poll(struct be_backend *b);
void be_sampling_shutdown(struct be_backend *b);
/* start --sample-hz: every domain not sampled yet gets a sampler, until it
 * ends (after @introduceDomain, and at start). */
void be_sampling_new_domains(struct be_backend *b);
/* Some domain died: its noted kernel (KERNEL_ROOT) goes, and --sample-hz
 * forgets it. */
void be_sampling_domains_changed(struct be_backend *b);
void be_sampling_status(const struct be_sampling *sp, FILE *f);
/* Its Prometheus families (daemon/metrics.c). */
void be_sampling_metrics(const struct be_sampling *sp, FILE *f);

#endif
