/*
 * domains.c - is a domain alive?  Asked of xenstore, and within a round
 * of watch events asked once per domain (xenbus.c opens the round): a
 * domain that dies meanwhile fires @releaseDomain, which is the next
 * round.  Shared by the control plane (xenbus.c, runs.c, trace.c); calls
 * only xenstore.  Also where each domain's budget of xenstore events is
 * kept (xenbus.c spends it, xenbus_state.c asks whether a domain's
 * frontends are watched).
 *
 * May call: common/ (state.h), xenstore.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <xenstore.h>

#include "backend/common/state.h"
#include "backend/control/domains.h"

int domain_alive(struct backend *b, uint32_t domid)
{
	char path[64];
	unsigned len;
	struct alive_cache *c = b->alive;

	for (size_t i = 0; c && i < c->n; i++)
		if (c->v[i].domid == domid)
			return c->v[i].alive;
	snprintf(path, sizeof(path), "/local/domain/%u/domid", domid);
	char *v = xs_read(b->xs, XBT_NULL, path, &len);
	free(v);
	int alive = v != NULL && xs_is_domain_introduced(b->xs, domid);
	if (c && c->n < sizeof(c->v) / sizeof(c->v[0]))
		c->v[c->n++] = (struct alive_cache_entry){domid, alive};
	return alive;
}

struct xs_domain *xs_domain_get(struct backend *b, uint32_t domid, int create)
{
	for (struct xs_domain *x = b->xs_domains; x; x = x->next)
		if (x->domid == domid)
			return x;
	if (!create)
		return NULL;
	struct xs_domain *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->domid = domid;
	x->tokens = -1; /* full, once first spent */
	x->next = b->xs_domains;
	b->xs_domains = x;
	return x;
}

void xs_domains_prune(struct backend *b, int all)
{
	for (struct xs_domain **p = &b->xs_domains; *p;) {
		struct xs_domain *x = *p;
		int used = 0;
		for (struct device *d = b->devices; d && !used && !all; d = d->next)
			used = d->domid == x->domid;
		if (used) {
			p = &x->next;
			continue;
		}
		*p = x->next;
		free(x);
	}
}
