/*
 * domains.c - is a domain alive?  Asked of xenstore, and within a round
 * of watch events asked once per domain (xenbus.c opens the round): a
 * domain that dies meanwhile fires @releaseDomain, which is the next
 * round.  Shared by the control plane (xenbus.c, runs.c, trace.c); calls
 * only xenstore.  Also where each domain's budget of xenstore events is
 * kept (xenbus.c spends it, xenbus_state.c asks whether a domain's
 * frontends are watched), and the counts of those events (xenbus.c and
 * trace.c count, status reads).
 *
 * May call: common/ (state.h), xenstore.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <xenstore.h>

#include "backend/common/state.h"
#include "domains.h"

struct be_domains {
	struct xs_handle *xs;
	/* The round's answers (in_round: a round is open). */
	int in_round;
	struct {
		uint32_t domid;
		int alive;
	} alive[256];
	size_t nalive;
	struct be_xs_domain *budgets;
	struct be_xs_stats stats;
};

struct be_domains *be_domains_new(struct xs_handle *xs)
{
	struct be_domains *dm = calloc(1, sizeof(*dm));
	if (dm)
		dm->xs = xs;
	return dm;
}

void be_domains_free(struct be_domains *dm)
{
	if (!dm)
		return;
	be_xs_domains_prune(dm, NULL, 1);
	free(dm);
}

int be_domain_alive(struct be_domains *dm, uint32_t domid)
{
	char path[64];
	unsigned len;

	for (size_t i = 0; dm->in_round && i < dm->nalive; i++)
		if (dm->alive[i].domid == domid)
			return dm->alive[i].alive;
	snprintf(path, sizeof(path), "/local/domain/%u/domid", domid);
	char *v = xs_read(dm->xs, XBT_NULL, path, &len);
	free(v);
	int alive = v != NULL && xs_is_domain_introduced(dm->xs, domid);
	if (dm->in_round && dm->nalive < sizeof(dm->alive) / sizeof(dm->alive[0])) {
		dm->alive[dm->nalive].domid = domid;
		dm->alive[dm->nalive++].alive = alive;
	}
	return alive;
}

void be_domains_round_begin(struct be_domains *dm)
{
	dm->in_round = 1;
	dm->nalive = 0;
}

void be_domains_round_end(struct be_domains *dm)
{
	dm->in_round = 0;
	dm->nalive = 0;
}

struct be_xs_domain *be_xs_domain_get(struct be_domains *dm, uint32_t domid, int create)
{
	for (struct be_xs_domain *x = dm->budgets; x; x = x->next)
		if (x->domid == domid)
			return x;
	if (!create)
		return NULL;
	struct be_xs_domain *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->domid = domid;
	x->tokens = -1; /* full, once first spent */
	x->next = dm->budgets;
	dm->budgets = x;
	return x;
}

struct be_xs_domain *be_xs_domains_first(struct be_domains *dm)
{
	return dm->budgets;
}

void be_xs_domains_prune(struct be_domains *dm, const struct be_device *devices, int all)
{
	for (struct be_xs_domain **p = &dm->budgets; *p;) {
		struct be_xs_domain *x = *p;
		int used = 0;
		for (const struct be_device *d = devices; d && !used && !all; d = d->next)
			used = d->domid == x->domid;
		if (used) {
			p = &x->next;
			continue;
		}
		*p = x->next;
		free(x);
	}
}

void be_domains_count(struct be_domains *dm, enum be_xs_counter c)
{
	switch (c) {
	case BE_XS_EVENTS:
		dm->stats.events++;
		break;
	case BE_XS_DEFERRED:
		dm->stats.deferred++;
		break;
	case BE_XS_ROUNDS:
		dm->stats.rounds++;
		break;
	case BE_XS_UNWATCHED:
		dm->stats.unwatched++;
		break;
	}
}

void be_domains_stats(const struct be_domains *dm, struct be_xs_stats *out)
{
	*out = dm->stats;
}
