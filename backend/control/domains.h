/*
 * domains.h - is a domain alive?  Within a round of watch events (b->alive
 * set, by xenbus.c) each domain is asked once.  And each domain's budget
 * of xenstore watch events (struct be_xs_domain).  domains.c calls only
 * xenstore.
 */
#ifndef PROFSVC_BE_DOMAINS_H
#define PROFSVC_BE_DOMAINS_H

#include <stddef.h>
#include <stdint.h>

struct be_backend;

struct be_alive_cache {
	struct be_alive_cache_entry {
		uint32_t domid;
		int alive;
	} v[256];
	size_t n;
};

/* 1 if the domain lives. */
int be_domain_alive(struct be_backend *b, uint32_t domid);

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
struct be_xs_domain *be_xs_domain_get(struct be_backend *b, uint32_t domid, int create);
/* Frees the entries of domains without devices (all: every entry). */
void be_xs_domains_prune(struct be_backend *b, int all);

#endif
