/*
 * xensim_xs.c - xensim's xenstored: the real wire protocol
 * (xen/io/xs_wire.h, Xen's docs/misc/xenstore.txt) over per-domain Unix
 * sockets, so clients use the real libxenstore unchanged.
 *
 * What it implements, as C xenstored does:
 *  - READ WRITE MKDIR RM DIRECTORY DIRECTORY_PART GET_PERMS SET_PERMS
 *    WATCH UNWATCH (an event at registration; @introduceDomain and
 *    @releaseDomain) TRANSACTION_START/END GET_DOMAIN_PATH INTRODUCE
 *    RELEASE IS_DOMAIN_INTRODUCED RESET_WATCHES;
 *  - relative paths resolve under /local/domain/<domid>, and watch events
 *    come back relative when the watch was;
 *  - permissions: dom0 may do anything; the owner (first entry) may do
 *    anything to its node; others get the entry naming them, else the
 *    default; new nodes inherit their parent's permissions and an
 *    unprivileged creator becomes the owner; only dom0 changes owners;
 *  - quotas for unprivileged domains: nodes, watches, transactions;
 *  - transactions see their own writes (a private copy of the tree taken
 *    at start) and fail with EAGAIN at commit if any node they read or
 *    wrote changed meanwhile (per-node generation counts);
 *  - a message longer than XENSTORE_PAYLOAD_MAX, or a client whose unread
 *    replies pile up, is dropped; every other client keeps being served.
 *
 * This file: the wire protocol (framing, one handler per operation) and
 * what the toolstack does in xenstore when domains come and go.  Its
 * parts (xensim_xs_parts.h): transactions, watches, connections, the
 * node tree.
 *
 * May call: every part in xensim_xs_parts.h, the event loop and log (xensim_loop.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xensim_xs_parts.h"

static uint8_t introduced[SIM_MAX_DOMID + 1];

/* ---- requests ------------------------------------------------------------------ */

/* Splits the payload into NUL-terminated strings; -1 if it is not. */
static int split(char *body, uint32_t len, char **v, int max)
{
	int n = 0;
	uint32_t i = 0;

	while (i < len && n < max) {
		char *nul = memchr(body + i, '\0', len - i);
		if (!nul)
			return -1;
		v[n++] = body + i;
		i = (uint32_t)(nul - body) + 1;
	}
	return n;
}

static int parse_perms(char **v, int n, struct xs_perm *out)
{
	for (int i = 0; i < n; i++) {
		char *end;
		if (!strchr("nrwb", v[i][0]) || !v[i][0] || !v[i][1])
			return -1;
		unsigned long id = strtoul(v[i] + 1, &end, 10);
		if (*end || id > SIM_MAX_DOMID)
			return -1;
		out[i].perm = v[i][0];
		out[i].id = (uint32_t)id;
	}
	return 0;
}

static int parse_domid(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > SIM_MAX_DOMID)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* XS_READ, XS_DIRECTORY, XS_DIRECTORY_PART, XS_GET_PERMS */
static void op_read(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	struct xsd_sockmsg *h = r->h;
	char **v = r->v, *abs = r->abs;
	int n = r->n;

	if (n < 1 || xs_canonical(c->domid, v[0], abs, sizeof(r->abs), 0)) {
		xs_reply_err(c, h, EINVAL);
		return;
	}
	if (r->tx)
		xs_tx_note(r->tx, abs, h->type == XS_DIRECTORY || h->type == XS_DIRECTORY_PART);
	struct xs_node *node = xs_lookup(r->t, abs);
	if (!node) {
		xs_reply_err(c, h, ENOENT);
		return;
	}
	if (!xs_can_read(node, c->domid)) {
		xs_reply_err(c, h, EACCES);
		return;
	}
	if (h->type == XS_READ) {
		xs_send_msg(c, h->type, h->req_id, h->tx_id, node->value, node->vlen);
		return;
	}
	char buf[XENSTORE_PAYLOAD_MAX * 2];
	size_t len = 0;
	if (h->type == XS_GET_PERMS) {
		for (uint32_t i = 0; i < node->nperms; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%c%u", node->perms[i].perm,
			                        node->perms[i].id) + 1;
		xs_send_msg(c, h->type, h->req_id, h->tx_id, buf, len);
		return;
	}
	size_t skip = 0;
	if (h->type == XS_DIRECTORY_PART) {
		char *end;
		if (n < 2 || !*v[1] || (skip = strtoul(v[1], &end, 10), *end)) {
			xs_reply_err(c, h, EINVAL);
			return;
		}
		len = (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)node->cgen) + 1;
	}
	size_t pos = 0;
	for (uint32_t i = 0; i < node->nkids; i++) {
		size_t kl = strlen(node->kids[i]->name) + 1;
		if (pos + kl <= skip) {
			pos += kl;
			continue;
		}
		if (len + kl + 1 > XENSTORE_PAYLOAD_MAX) {
			if (h->type == XS_DIRECTORY) {
				xs_reply_err(c, h, E2BIG);
				return;
			}
			break; /* the client asks again from here */
		}
		memcpy(buf + len, node->kids[i]->name, kl);
		len += kl;
		pos += kl;
	}
	if (h->type == XS_DIRECTORY_PART && pos >= skip) {
		size_t total = 0;
		for (uint32_t i = 0; i < node->nkids; i++)
			total += strlen(node->kids[i]->name) + 1;
		if (pos == total)
			buf[len++] = '\0'; /* an empty name: the end */
	}
	xs_send_msg(c, h->type, h->req_id, h->tx_id, buf, len);
}

/* XS_WRITE, XS_MKDIR, XS_RM, XS_SET_PERMS */
static void op_modify(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	struct xsd_sockmsg *h = r->h;
	char *body = r->body;
	struct xs_op op = {0};
	char *nul = memchr(body, '\0', h->len);

	if (!nul || xs_canonical(c->domid, body, r->abs, sizeof(r->abs), 0)) {
		xs_reply_err(c, h, EINVAL);
		return;
	}
	op.path = xs_strdup(r->abs);
	if (h->type == XS_WRITE) {
		op.type = OP_WRITE;
		op.vlen = h->len - (uint32_t)(nul - body) - 1;
		op.value = xs_alloc(op.vlen + 1);
		memcpy(op.value, nul + 1, op.vlen);
	} else if (h->type == XS_MKDIR) {
		op.type = OP_MKDIR;
	} else if (h->type == XS_RM) {
		op.type = OP_RM;
	} else {
		op.type = OP_SETPERMS;
		op.nperms = r->n > 1 ? (uint32_t)(r->n - 1) : 0;
		op.perms = xs_alloc((op.nperms ? op.nperms : 1) * sizeof(*op.perms));
		if (r->n < 2 || parse_perms(r->v + 1, r->n - 1, op.perms) != 0) {
			free(op.path);
			free(op.perms);
			xs_reply_err(c, h, EINVAL);
			return;
		}
	}
	int err = xs_modify(c, r->tx, &op);
	free(op.path);
	free(op.value);
	free(op.perms);
	if (err)
		xs_reply_err(c, h, err);
	else
		xs_reply_ok(c, h);
}

static void op_reset_watches(struct xs_req *r)
{
	xs_watches_free(r->c);
	xs_tx_remove_all(r->c);
	xs_reply_ok(r->c, r->h);
}

static void op_get_domain_path(struct xs_req *r)
{
	uint32_t d;

	if (r->n < 1 || parse_domid(r->v[0], &d)) {
		xs_reply_err(r->c, r->h, EINVAL);
		return;
	}
	char path[64];
	int len = snprintf(path, sizeof(path), "/local/domain/%u", d) + 1;
	xs_send_msg(r->c, r->h->type, r->h->req_id, r->h->tx_id, path, (size_t)len);
}

static void op_is_domain_introduced(struct xs_req *r)
{
	uint32_t d;

	if (r->n < 1 || parse_domid(r->v[0], &d)) {
		xs_reply_err(r->c, r->h, EINVAL);
		return;
	}
	xs_send_msg(r->c, r->h->type, r->h->req_id, r->h->tx_id, introduced[d] || d == 0 ? "T" : "F", 2);
}

/* XS_INTRODUCE, XS_RELEASE: dom0 only */
static void op_introduce_release(struct xs_req *r)
{
	struct xsd_sockmsg *h = r->h;
	uint32_t d;

	if (r->c->domid != 0) {
		xs_reply_err(r->c, h, EACCES);
		return;
	}
	if (r->n < (h->type == XS_INTRODUCE ? 3 : 1) || parse_domid(r->v[0], &d) || d == 0) {
		xs_reply_err(r->c, h, EINVAL);
		return;
	}
	introduced[d] = h->type == XS_INTRODUCE;
	xs_reply_ok(r->c, h);
	xs_fire_special(h->type == XS_INTRODUCE ? "@introduceDomain" : "@releaseDomain");
}

/* One handler per operation, as C xenstored has; the rest (CONTROL,
 * RESUME, SET_TARGET, ...) are not for clients of a backend: ENOSYS. */
static void (*const ops[XS_TYPE_COUNT])(struct xs_req *) = {
	[XS_READ] = op_read,
	[XS_DIRECTORY] = op_read,
	[XS_DIRECTORY_PART] = op_read,
	[XS_GET_PERMS] = op_read,
	[XS_WRITE] = op_modify,
	[XS_MKDIR] = op_modify,
	[XS_RM] = op_modify,
	[XS_SET_PERMS] = op_modify,
	[XS_WATCH] = xs_op_watch,
	[XS_UNWATCH] = xs_op_unwatch,
	[XS_RESET_WATCHES] = op_reset_watches,
	[XS_TRANSACTION_START] = xs_op_transaction_start,
	[XS_TRANSACTION_END] = xs_op_transaction_end,
	[XS_GET_DOMAIN_PATH] = op_get_domain_path,
	[XS_IS_DOMAIN_INTRODUCED] = op_is_domain_introduced,
	[XS_INTRODUCE] = op_introduce_release,
	[XS_RELEASE] = op_introduce_release,
};

static void handle(struct xs_conn *c, struct xsd_sockmsg *h, char *body)
{
	char *v[XENSTORE_PAYLOAD_MAX / 2 + 1];
	struct xs_req r = {.c = c, .h = h, .body = body, .v = v, .t = &xs_store};

	if (h->tx_id) {
		r.tx = xs_tx_find(c, h->tx_id);
		if (!r.tx) {
			xs_reply_err(c, h, ENOENT);
			return;
		}
		r.t = xs_tx_tree(r.tx);
	}
	r.n = split(body, h->len, v, (int)(sizeof(v) / sizeof(v[0])));
	if (h->type < XS_TYPE_COUNT && ops[h->type])
		ops[h->type](&r);
	else
		xs_reply_err(c, h, ENOSYS);
}

/* ---- connections -------------------------------------------------------------- */

void xs_conn_event(struct ev_item *it, int readable, int writable)
{
	struct xs_conn *c = (struct xs_conn *)it;

	if (writable)
		xs_flush_out(c);
	while (readable && !c->dead) {
		ssize_t n = ev_io(c->it.fd, EV_RECV, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen, 0);
		if (n == 0)
			break;
		if (n < 0) {
			xs_conn_drop(c, "closed");
			break;
		}
		c->inlen += (size_t)n;
		/* Process every complete message in the buffer. */
		while (!c->dead && c->inlen >= sizeof(struct xsd_sockmsg)) {
			struct xsd_sockmsg h;
			memcpy(&h, c->in, sizeof(h));
			if (h.len > XENSTORE_PAYLOAD_MAX) {
				xs_conn_drop(c, "message longer than XENSTORE_PAYLOAD_MAX");
				break;
			}
			size_t total = sizeof(h) + h.len;
			if (c->inlen < total)
				break;
			char body[XENSTORE_PAYLOAD_MAX + 1];
			memcpy(body, c->in + sizeof(h), h.len);
			body[h.len] = '\0';
			memmove(c->in, c->in + total, c->inlen - total);
			c->inlen -= total;
			handle(c, &h, body);
		}
	}
	if (!c->dead)
		xs_flush_out(c);
}

void xs_reap(void)
{
	struct xs_conn *c;

	xs_watches_free(NULL);
	while ((c = xs_conn_take_dead())) {
		xs_tx_remove_all(c);
		xs_conn_free(c);
	}
}

/* ---- domains ------------------------------------------------------------------- */

static void toolstack_write(const char *path, const char *value, const struct xs_perm *perms,
                            uint32_t np)
{
	struct xs_op op = {.type = OP_WRITE, .path = (char *)path, .value = (char *)value,
	                   .vlen = value ? (uint32_t)strlen(value) : 0};
	int32_t d = 0;

	if (!value)
		op.type = OP_MKDIR;
	xs_apply_op(&xs_store, 0, &op, &d);
	struct xs_node *n = xs_lookup(&xs_store, path);
	if (n && perms)
		xs_set_perms(&xs_store, n, perms, np);
	xs_fire(path, n);
}

int xs_domain_introduce(uint32_t domid, const char *name, const char *uuid)
{
	char p[256], v[64];
	/* As libxl: the domain reads its home but owns only some subtrees. */
	struct xs_perm ro[2] = {{0, 'n'}, {domid, 'r'}};
	struct xs_perm rw[1] = {{domid, 'n'}};
	static const char *const owned[] = {"device", "control", "data", "drivers", "feature",
	                                    "attr", "error"};

	if (domid == 0) {
		toolstack_write("/local/domain/0/name", "Domain-0", NULL, 0);
		toolstack_write("/local/domain/0/domid", "0", NULL, 0);
		return 0;
	}
	snprintf(p, sizeof(p), "/local/domain/%u", domid);
	toolstack_write(p, "", ro, 2);
	snprintf(p, sizeof(p), "/vm/%s", uuid);
	toolstack_write(p, "", ro, 2);
	snprintf(p, sizeof(p), "/vm/%s/uuid", uuid);
	toolstack_write(p, uuid, ro, 2);
	snprintf(p, sizeof(p), "/vm/%s/name", uuid);
	toolstack_write(p, name, ro, 2);
	snprintf(p, sizeof(p), "/local/domain/%u/vm", domid);
	snprintf(v, sizeof(v), "/vm/%s", uuid);
	toolstack_write(p, v, ro, 2);
	snprintf(p, sizeof(p), "/local/domain/%u/name", domid);
	toolstack_write(p, name, ro, 2);
	snprintf(p, sizeof(p), "/local/domain/%u/domid", domid);
	snprintf(v, sizeof(v), "%u", domid);
	toolstack_write(p, v, ro, 2);
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		snprintf(p, sizeof(p), "/local/domain/%u/%s", domid, owned[i]);
		toolstack_write(p, NULL, rw, 1);
	}
	introduced[domid] = 1;
	xs_fire_special("@introduceDomain");
	return 0;
}

void xs_domain_release(uint32_t domid, const char *uuid)
{
	char p[256];

	xs_conn_drop_domain(domid, "its domain was destroyed");
	introduced[domid] = 0;
	xs_fire_special("@releaseDomain");
	/* As the toolstack does after a destroy. */
	snprintf(p, sizeof(p), "/local/domain/%u", domid);
	struct xs_op rm = {.type = OP_RM, .path = p};
	int32_t d = 0;
	xs_store_apply(0, &rm, &d);
	snprintf(p, sizeof(p), "/vm/%s", uuid);
	xs_apply_op(&xs_store, 0, &rm, &d);
}

int xs_server_init(void)
{
	struct xs_perm root = {0, 'n'};

	xs_store.root = xs_node_new("", NULL);
	xs_set_perms(&xs_store, xs_store.root, &root, 1);
	toolstack_write("/local", NULL, NULL, 0);
	toolstack_write("/local/domain", NULL, NULL, 0);
	toolstack_write("/vm", NULL, NULL, 0);
	toolstack_write("/tool", NULL, NULL, 0);
	return 0;
}

void xs_server_fini(void)
{
	xs_conn_drop_domain(UINT32_MAX, "closed");
	xs_reap();
	xs_node_free(&xs_store, xs_store.root);
	xs_store.root = NULL;
}
