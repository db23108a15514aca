/*
 * domains.h - is a domain alive?  Within a round of watch events
 * (be_domains_round_begin .. _end, xenbus.c's) each domain is asked once.
 * And each domain's budget of xenstore watch events (struct
 * be_xs_domain), and the counts of those events status shows.
 * domains.c calls only xenstore.
 */
#ifndef PROFSVC_BE_DOMAINS_H
#define PROFSVC_BE_DOMAINS_H

#include <stddef.h>
#include <stdint.h>

struct be_device;
struct xs_handle;

/* Its state: the round's answers, the budgets, the counts. */
struct be_domains;

struct be_domains *be_domains_new(struct xs_handle *xs);
/* Frees dm and every budget (NULL: nothing). */
void be_domains_free(struct be_domains *dm);

/* 1 if the domain lives. */
int be_domain_alive(struct be_domains *dm, uint32_t domid);
/* A round of watch events: from begin to end, each domain's liveness is
 * asked of xenstore once (one that dies meanwhile fires @releaseDomain,
 * which is the next round). */
void be_domains_round_begin(struct be_domains *dm);
void be_domains_round_end(struct be_domains *dm);

/* A domain's budget of xenstore events (xenbus.c spends it): the watch
 * events of all its devices' frontend state nodes share one token bucket;
 * a domain out of tokens has those watches dropped and its devices'
 * state polled instead, until a back-off passes. */
struct be_xs_domain {
	uint32_t domid;
	double tokens;              /* events it may still have acted on now */
	int64_t tokens_us;          /* when tokens was last topped up */
	int unwatched;              /* its frontends' watches dropped: polled */
	int64_t poll_at_us;         /* the next look at its devices (unwatched) */
	int64_t rewatch_at_us;      /* when its watches are set again */
	int64_t backoff_us;         /* how long the last drop lasted */
	int64_t rewatched_us;       /* when its watches were last set again */
	uint64_t events;            /* watch events it caused, all told */
	struct be_xs_domain *next;
};
/* The domain's entry; made when create (NULL without memory or when not
 * made). */
struct be_xs_domain *be_xs_domain_get(struct be_domains *dm, uint32_t domid, int create);
/* Every entry, in no order (then ->next). */
struct be_xs_domain *be_xs_domains_first(struct be_domains *dm);
/* Frees the entries of domains without a device on the list devices
 * (all: every entry). */
void be_xs_domains_prune(struct be_domains *dm, const struct be_device *devices, int all);

/* xenstore watch events, as status counts them: seen, past a domain's or
 * a trace node's rate (deferred), rounds that drained the data path to
 * act on some, and watches dropped for a flood (unwatched). */
enum be_xs_counter { BE_XS_EVENTS, BE_XS_DEFERRED, BE_XS_ROUNDS, BE_XS_UNWATCHED };
struct be_xs_stats {
	uint64_t events, deferred, rounds, unwatched;
};
void be_domains_count(struct be_domains *dm, enum be_xs_counter c);
void be_domains_stats(const struct be_domains *dm, struct be_xs_stats *out);

#endif
