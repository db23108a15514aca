/*
 * domains.h - is a domain alive?  Within a round of watch events (b->alive
 * set, by xenbus.c) each domain is asked once.  domains.c calls only
 * xenstore.
 */
#ifndef PROFSVC_BE_DOMAINS_H
#define PROFSVC_BE_DOMAINS_H

#include <stddef.h>
#include <stdint.h>

struct backend;

struct alive_cache {
	struct alive_cache_entry {
		uint32_t domid;
		int alive;
	} v[256];
	size_t n;
};

/* 1 if the domain lives. */
int domain_alive(struct backend *b, uint32_t domid);

#endif
