/*
 * xensim_hv_grant.c - the hypervisor's grant tables: a domain shares
 * pages (a fresh page and ref each, all or nothing) and ends them; another
 * maps or copies them.  The checks are where Xen makes them: a map or copy
 * names a domain and a ref; the entry must be in use, granted to the
 * caller, not ended, and writable for a writable map or a copy into the
 * guest.  A mapped grant cannot be freed: ending it only stops new maps
 * and copies, and the page goes when the last mapping does (and with it,
 * maybe, a dying domain).
 *
 * May call: xensim_hv_wire.c (replies), xensim_hv_dom.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xensim_hv_parts.h"

struct map_handle {
	uint32_t id;
	uint32_t domid, incarnation;
	uint32_t n;
	uint32_t *refs;
	struct map_handle *next;
};

static uint32_t replybuf[2 * SIM_MAX_ITEMS];

static int check_grant(struct domain *d, uint32_t ref, uint32_t caller, int write)
{
	if (ref >= SIM_GRANT_ENTRIES || !d->gt[ref].in_use || d->gt[ref].ended)
		return SIM_GNTST_BAD_GNTREF;
	if (d->gt[ref].grantee != caller || (write && d->gt[ref].readonly))
		return SIM_GNTST_PERMISSION_DENIED;
	return SIM_GNTST_OKAY;
}

static void release_map(struct map_handle *m)
{
	struct domain *d = hv_domain(m->domid);

	if (d && d->incarnation == m->incarnation) {
		for (uint32_t i = 0; i < m->n; i++) {
			struct grant *g = &d->gt[m->refs[i]];
			if (g->map_count && --g->map_count == 0 && g->ended)
				hv_free_grant(d, m->refs[i]);
		}
		d->maps_held -= m->n;
		hv_reap_domain(d);
	}
	free(m->refs);
	free(m);
}

void hv_grants_end(struct domain *d)
{
	for (uint32_t r = 0; r < SIM_GRANT_ENTRIES; r++) {
		struct grant *g = &d->gt[r];
		if (!g->in_use)
			continue;
		g->ended = 1;
		if (!g->map_count)
			hv_free_grant(d, r);
	}
}

void hv_maps_release(struct hv_conn *c)
{
	while (c->maps) {
		struct map_handle *m = c->maps;
		c->maps = m->next;
		release_map(m);
	}
}

void hv_op_share(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t n = m->n; /* pages wanted */
	if (n == 0 || n > SIM_MAX_ITEMS || m->a[0] > SIM_MAX_DOMID) {
		hv_reply_err(c, m, EINVAL);
		return;
	}
	/* Pages and refs first, all or nothing. */
	uint32_t got = 0;
	for (uint32_t pfn = 0; pfn < SIM_DOMAIN_PAGES && got < n; pfn++)
		if (!(me->page_used[pfn / 8] & (1u << (pfn % 8))))
			replybuf[2 * got++ + 1] = pfn;
	uint32_t refs = 0;
	for (uint32_t r = FIRST_REF; r < SIM_GRANT_ENTRIES && refs < n; r++)
		if (!me->gt[r].in_use)
			replybuf[2 * refs++] = r;
	if (got < n || refs < n) {
		hv_reply_err(c, m, ENOSPC);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ref = replybuf[2 * i], pfn = replybuf[2 * i + 1];
		me->page_used[pfn / 8] |= (uint8_t)(1u << (pfn % 8));
		me->gt[ref] = (struct grant){1, (uint8_t)!m->a[1], 0, m->a[0], pfn, 0};
	}
	m->n = n;
	hv_reply(c, m, replybuf, 2 * n * sizeof(uint32_t), -1);
}

void hv_op_unshare(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;
	const uint32_t *words = req->words;

	for (uint32_t i = 0; i < m->n; i++) {
		uint32_t ref = words[i];
		if (ref >= SIM_GRANT_ENTRIES || !me->gt[ref].in_use)
			continue;
		if (me->gt[ref].map_count)
			me->gt[ref].ended = 1; /* freed when the backend unmaps */
		else
			hv_free_grant(me, ref);
	}
	hv_reply_ok(c, m);
}

void hv_op_map(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	const uint32_t *words = req->words;

	struct domain *d = hv_running_domain(m->a[0]);
	if (!d) {
		hv_reply_err(c, m, ESRCH);
		return;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		int st = check_grant(d, words[i], c->domid, (int)m->a[1]);
		if (st != SIM_GNTST_OKAY) {
			hv_reply_err(c, m, st == SIM_GNTST_BAD_GNTREF ? EINVAL : EACCES);
			return;
		}
	}
	struct map_handle *h = calloc(1, sizeof(*h));
	uint32_t *refs = malloc(m->n * sizeof(*refs));
	if (!h || !refs) {
		free(h);
		free(refs);
		hv_reply_err(c, m, ENOMEM);
		return;
	}
	memcpy(refs, words, m->n * sizeof(*refs));
	*h = (struct map_handle){++c->next_handle, d->domid, d->incarnation, m->n, refs, c->maps};
	c->maps = h;
	for (uint32_t i = 0; i < m->n; i++) {
		d->gt[refs[i]].map_count++;
		replybuf[i] = d->gt[refs[i]].pfn;
	}
	d->maps_held += m->n;
	m->a[0] = h->id;
	m->a[1] = d->incarnation;
	hv_reply(c, m, replybuf, m->n * sizeof(uint32_t), d->memfd);
}

void hv_op_unmap(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;

	for (struct map_handle **h = &c->maps; *h; h = &(*h)->next)
		if ((*h)->id == m->a[0]) {
			struct map_handle *x = *h;
			*h = x->next;
			release_map(x);
			hv_reply_ok(c, m);
			return;
		}
	hv_reply_err(c, m, EINVAL);
}

void hv_op_copy(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	const uint8_t *items = req->items;

	const struct sim_copy_seg *segs = (const struct sim_copy_seg *)items;
	struct domain *d = hv_running_domain(m->a[0]);
	if (!d) {
		hv_reply_err(c, m, ESRCH);
		return;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		int st = segs[i].domid != d->domid ? SIM_GNTST_BAD_DOMAIN
		         : (uint32_t)segs[i].offset + segs[i].len > SIM_PAGE_SIZE
		                 ? SIM_GNTST_BAD_COPY_ARG
		                 : check_grant(d, segs[i].ref, c->domid, (int)segs[i].to_guest);
		replybuf[2 * i] = (uint32_t)st;
		replybuf[2 * i + 1] = st == SIM_GNTST_OKAY ? d->gt[segs[i].ref].pfn : 0;
	}
	m->a[1] = d->incarnation;
	hv_reply(c, m, replybuf, 2 * m->n * sizeof(uint32_t), d->memfd);
}
