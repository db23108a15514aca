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
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xen/io/xs_wire.h>

#include "xensim.h"

/* ---- the tree --------------------------------------------------------------- */

struct xs_perm {
	uint32_t id;
	char perm; /* 'n' 'r' 'w' 'b' */
};

struct xs_node {
	char *name;
	char *value;
	uint32_t vlen;
	struct xs_perm *perms;
	uint32_t nperms;
	struct xs_node *parent;
	struct xs_node **kids;
	uint32_t nkids, capkids;
	uint64_t gen;  /* last change to this node */
	uint64_t cgen; /* last change to its children */
};

/* A tree: the store itself, or a transaction's private copy. */
struct xs_tree {
	struct xs_node *root;
	int is_main; /* quota counts and watches apply */
};

struct xs_conn;

struct xs_watch {
	struct xs_conn *conn;
	char *path;  /* as registered (relative or absolute or @special) */
	char *abs;   /* canonical */
	char *token;
	struct xs_watch *next;
};

enum { OP_WRITE, OP_MKDIR, OP_RM, OP_SETPERMS };

struct xs_op {
	int type;
	char *path;
	char *value;
	uint32_t vlen;
	struct xs_perm *perms;
	uint32_t nperms;
	struct xs_op *next;
};

struct xs_access {
	char *path;
	int existed;
	int children; /* a directory listing: children changes conflict too */
	struct xs_access *next;
};

struct xs_tx {
	uint32_t id;
	uint64_t start_gen;
	struct xs_tree tree;
	struct xs_access *acc;
	struct xs_op *ops, **ops_tail;
	int32_t node_delta; /* nodes the conn's domain would gain */
	struct xs_tx *next;
};

struct xs_conn {
	struct ev_item it;
	uint32_t domid;
	uint8_t in[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX + 1];
	size_t inlen;
	uint8_t *out;
	size_t outlen, outcap, outoff;
	struct xs_tx *txs;
	uint32_t next_tx;
	uint32_t ntx;
	int dead;
	struct xs_conn *next;
};

static struct xs_tree store = {.is_main = 1};
static uint64_t gen;
static uint32_t node_count[SIM_MAX_DOMID + 1];
static uint32_t watch_count[SIM_MAX_DOMID + 1];
static uint8_t introduced[SIM_MAX_DOMID + 1];
static struct xs_watch *watches;
static struct xs_conn *conns;

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		sim_log("out of memory");
		abort();
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static struct xs_node *node_new(const char *name, struct xs_node *parent)
{
	struct xs_node *n = calloc(1, sizeof(*n));
	if (!n)
		abort();
	n->name = xstrdup(name);
	n->value = xmalloc(1);
	n->parent = parent;
	return n;
}

static void node_free(struct xs_tree *t, struct xs_node *n)
{
	for (uint32_t i = 0; i < n->nkids; i++)
		node_free(t, n->kids[i]);
	if (t->is_main && n->nperms && n->perms[0].id <= SIM_MAX_DOMID &&
	    node_count[n->perms[0].id])
		node_count[n->perms[0].id]--;
	free(n->kids);
	free(n->name);
	free(n->value);
	free(n->perms);
	free(n);
}

static struct xs_node *node_copy(const struct xs_node *n, struct xs_node *parent)
{
	struct xs_node *c = node_new(n->name, parent);

	free(c->value);
	c->value = xmalloc(n->vlen + 1);
	memcpy(c->value, n->value, n->vlen + 1);
	c->vlen = n->vlen;
	c->perms = xmalloc(n->nperms * sizeof(*c->perms));
	memcpy(c->perms, n->perms, n->nperms * sizeof(*c->perms));
	c->nperms = n->nperms;
	c->gen = n->gen;
	c->cgen = n->cgen;
	c->capkids = c->nkids = n->nkids;
	c->kids = xmalloc(n->nkids * sizeof(*c->kids));
	for (uint32_t i = 0; i < n->nkids; i++)
		c->kids[i] = node_copy(n->kids[i], c);
	return c;
}

static struct xs_node *child(const struct xs_node *n, const char *name, size_t len)
{
	for (uint32_t i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i]->name) == len && memcmp(n->kids[i]->name, name, len) == 0)
			return n->kids[i];
	return NULL;
}

static struct xs_node *lookup(struct xs_tree *t, const char *abs)
{
	struct xs_node *n = t->root;
	const char *p = abs + 1;

	while (n && *p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		n = child(n, p, len);
		p += len + (slash ? 1 : 0);
	}
	return n;
}

static void add_child(struct xs_node *parent, struct xs_node *kid)
{
	if (parent->nkids == parent->capkids) {
		parent->capkids = parent->capkids ? parent->capkids * 2 : 4;
		struct xs_node **k = realloc(parent->kids, parent->capkids * sizeof(*k));
		if (!k)
			abort();
		parent->kids = k;
	}
	parent->kids[parent->nkids++] = kid;
}

static void remove_child(struct xs_node *parent, struct xs_node *kid)
{
	for (uint32_t i = 0; i < parent->nkids; i++)
		if (parent->kids[i] == kid) {
			memmove(&parent->kids[i], &parent->kids[i + 1],
			        (parent->nkids - i - 1) * sizeof(*parent->kids));
			parent->nkids--;
			return;
		}
}

static char perm_of(const struct xs_node *n, uint32_t domid)
{
	if (domid == 0 || n->perms[0].id == domid)
		return 'b';
	for (uint32_t i = 1; i < n->nperms; i++)
		if (n->perms[i].id == domid)
			return n->perms[i].perm;
	return n->perms[0].perm;
}

static int can_read(const struct xs_node *n, uint32_t domid)
{
	char p = perm_of(n, domid);
	return p == 'r' || p == 'b';
}

static int can_write(const struct xs_node *n, uint32_t domid)
{
	char p = perm_of(n, domid);
	return p == 'w' || p == 'b';
}

/* ---- paths ------------------------------------------------------------------ */

static int valid_chars(const char *p)
{
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '/' || *p == '_' || *p == '@'))
			return 0;
	return 1;
}

/* Canonical absolute path into out; special (@...) paths only if allowed. */
static int canonical(const struct xs_conn *c, const char *in, char *out, size_t len,
                     int allow_special)
{
	if (in[0] == '@') {
		if (!allow_special || !valid_chars(in) || strchr(in, '/') || strlen(in) >= len)
			return EINVAL;
		strcpy(out, in);
		return 0;
	}
	int n = in[0] == '/' ? snprintf(out, len, "%s", in)
	                     : snprintf(out, len, "/local/domain/%u/%s", c->domid, in);
	if (n < 0 || (size_t)n >= len || n > XENSTORE_ABS_PATH_MAX)
		return EINVAL;
	if (in[0] != '/' && (strlen(in) == 0 || strlen(in) > XENSTORE_REL_PATH_MAX))
		return EINVAL;
	/* '@' is a valid character; only a leading one makes a path special. */
	if (!valid_chars(out) || strstr(out, "//") || (n > 1 && out[n - 1] == '/'))
		return EINVAL;
	return 0;
}

/* The event path a watcher sees: relative if it registered relative. */
static const char *as_seen(const struct xs_watch *w, const char *abs)
{
	if (w->path[0] == '/' || w->path[0] == '@')
		return abs;
	size_t hl = strlen(w->abs) - strlen(w->path); /* "/local/domain/N/" */
	return strncmp(abs, w->abs, hl) == 0 ? abs + hl : abs;
}

/* ---- output ------------------------------------------------------------------ */

static void conn_drop(struct xs_conn *c, const char *why);

static void out_append(struct xs_conn *c, const void *data, size_t len)
{
	if (c->dead)
		return;
	if (c->outlen - c->outoff + len > XS_OUTBUF_MAX) {
		conn_drop(c, "not reading its replies/watch events");
		return;
	}
	if (c->outlen + len > c->outcap) {
		if (c->outoff) {
			memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
			c->outlen -= c->outoff;
			c->outoff = 0;
		}
		while (c->outlen + len > c->outcap)
			c->outcap = c->outcap ? c->outcap * 2 : 4096;
		uint8_t *o = realloc(c->out, c->outcap);
		if (!o)
			abort();
		c->out = o;
	}
	memcpy(c->out + c->outlen, data, len);
	c->outlen += len;
}

static void flush_out(struct xs_conn *c)
{
	while (!c->dead && c->outoff < c->outlen) {
		ssize_t n = ev_io(c->it.fd, EV_SEND, c->out + c->outoff, c->outlen - c->outoff, 0);
		if (n == 0)
			break;
		if (n < 0) {
			conn_drop(c, "write failed");
			return;
		}
		c->outoff += (size_t)n;
	}
	if (c->dead)
		return;
	if (c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	loop_mod(&c->it, c->outlen > 0);
}

static void send_msg(struct xs_conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
                     const void *body, size_t len)
{
	struct xsd_sockmsg h = {type, req_id, tx_id, (uint32_t)len};
	out_append(c, &h, sizeof(h));
	out_append(c, body, len);
	/* Send now: watch events go to connections other than the one being
	 * served, and nobody else would flush them.  What does not fit waits
	 * for EPOLLOUT. */
	flush_out(c);
}

static void reply_ok(struct xs_conn *c, const struct xsd_sockmsg *req)
{
	send_msg(c, req->type, req->req_id, req->tx_id, "OK", 3);
}

static void reply_err(struct xs_conn *c, const struct xsd_sockmsg *req, int err)
{
	const char *name = "EINVAL";
	for (size_t i = 0; i < sizeof(xsd_errors) / sizeof(xsd_errors[0]); i++)
		if (xsd_errors[i].errnum == err) {
			name = xsd_errors[i].errstring;
			break;
		}
	send_msg(c, XS_ERROR, req->req_id, req->tx_id, name, strlen(name) + 1);
}

/* ---- watches ---------------------------------------------------------------- */

static void send_event(struct xs_watch *w, const char *path)
{
	const char *seen = as_seen(w, path);
	size_t pl = strlen(seen) + 1, tl = strlen(w->token) + 1;
	char *body = xmalloc(pl + tl);

	memcpy(body, seen, pl);
	memcpy(body + pl, w->token, tl);
	send_msg(w->conn, XS_WATCH_EVENT, 0, 0, body, pl + tl);
	free(body);
}

/* path changed: watches on it or on an ancestor fire, if their owner may
 * read perm_node (the node as it is, or was before a removal). */
static void fire(const char *path, const struct xs_node *perm_node)
{
	size_t pl = strlen(path);

	for (struct xs_watch *w = watches; w; w = w->next) {
		size_t wl = strlen(w->abs);
		if (w->conn->dead || w->abs[0] == '@')
			continue;
		if (wl > pl || strncmp(path, w->abs, wl) != 0 ||
		    (path[wl] != '\0' && path[wl] != '/' && wl != 1))
			continue;
		if (perm_node && !can_read(perm_node, w->conn->domid))
			continue;
		send_event(w, path);
	}
}

/* Exact watches on parent/<node> and on everything below it. */
static void fire_removed_exact(const char *parent, const struct xs_node *node)
{
	char path[XENSTORE_ABS_PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", parent, node->name);
	for (struct xs_watch *w = watches; w; w = w->next)
		if (!w->conn->dead && strcmp(w->abs, path) == 0 && can_read(node, w->conn->domid))
			send_event(w, path);
	for (uint32_t i = 0; i < node->nkids; i++)
		fire_removed_exact(path, node->kids[i]);
}

/* A removal, as C xenstored reports it: the removed node's path to watches
 * on it or above, and each removed descendant's path to watches exactly on
 * that descendant.  A watch on a path that never existed hears nothing. */
static void fire_removed(const char *path, const struct xs_node *old)
{
	fire(path, old);
	for (uint32_t i = 0; old && i < old->nkids; i++)
		fire_removed_exact(strcmp(path, "/") ? path : "", old->kids[i]);
}

static void fire_special(const char *name)
{
	/* Special watches: only dom0 is told about domains coming and going. */
	for (struct xs_watch *w = watches; w; w = w->next)
		if (!w->conn->dead && w->conn->domid == 0 && strcmp(w->abs, name) == 0)
			send_event(w, name);
}

/* ---- tree operations (on the store or a transaction's copy) -------------------------- */

static void set_perms(struct xs_tree *t, struct xs_node *n, const struct xs_perm *p, uint32_t np)
{
	if (t->is_main && n->nperms && node_count[n->perms[0].id])
		node_count[n->perms[0].id]--;
	free(n->perms);
	n->perms = xmalloc(np * sizeof(*p));
	memcpy(n->perms, p, np * sizeof(*p));
	n->nperms = np;
	if (t->is_main)
		node_count[p[0].id]++;
}

/* Creates abs and any missing parents.  Permission: the nearest existing
 * ancestor must be writable.  *created counts nodes the caller's domain
 * gains.  Returns the node or NULL with *err. */
static struct xs_node *create_path(struct xs_tree *t, const char *abs, uint32_t domid,
                                   int *err, int32_t *created)
{
	struct xs_node *n = t->root;
	const char *p = abs + 1;
	int checked = 0;

	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct xs_node *k = child(n, p, len);
		if (!k) {
			if (!checked && !can_write(n, domid)) {
				*err = EACCES;
				return NULL;
			}
			checked = 1;
			char *name = xmalloc(len + 1);
			memcpy(name, p, len);
			name[len] = '\0';
			k = node_new(name, n);
			free(name);
			struct xs_perm *perms = xmalloc(n->nperms * sizeof(*perms));
			memcpy(perms, n->perms, n->nperms * sizeof(*perms));
			if (domid != 0)
				perms[0].id = domid; /* an unprivileged creator owns it */
			set_perms(t, k, perms, n->nperms);
			free(perms);
			k->gen = ++gen;
			add_child(n, k);
			n->cgen = gen;
			if (created && k->perms[0].id == domid)
				(*created)++;
		}
		n = k;
		p += len + (slash ? 1 : 0);
	}
	return n;
}

static uint32_t nodes_below(const struct xs_node *n, uint32_t domid)
{
	uint32_t c = n->perms[0].id == domid;
	for (uint32_t i = 0; i < n->nkids; i++)
		c += nodes_below(n->kids[i], domid);
	return c;
}

/* Applies one op.  *delta: nodes gained (or lost) by domid. */
static int apply_op(struct xs_tree *t, uint32_t domid, const struct xs_op *op, int32_t *delta)
{
	struct xs_node *n = lookup(t, op->path);
	int err = 0;

	switch (op->type) {
	case OP_WRITE:
	case OP_MKDIR:
		if (n && !can_write(n, domid))
			return EACCES;
		if (!n && !(n = create_path(t, op->path, domid, &err, delta)))
			return err;
		if (op->type == OP_MKDIR)
			break;
		free(n->value);
		n->value = xmalloc(op->vlen + 1);
		memcpy(n->value, op->value, op->vlen);
		n->value[op->vlen] = '\0';
		n->vlen = op->vlen;
		n->gen = ++gen;
		break;
	case OP_RM:
		if (!n) {
			/* As C xenstored: removing what is not there is fine, as
			 * long as its parent is. */
			char parent[XENSTORE_ABS_PATH_MAX + 64];
			snprintf(parent, sizeof(parent), "%s", op->path);
			char *slash = strrchr(parent, '/');
			if (slash == parent)
				slash[1] = '\0';
			else if (slash)
				*slash = '\0';
			return lookup(t, parent) ? 0 : ENOENT;
		}
		if (!n->parent)
			return EINVAL; /* the root */
		if (!can_write(n, domid))
			return EACCES;
		*delta -= (int32_t)nodes_below(n, domid);
		remove_child(n->parent, n);
		n->parent->cgen = ++gen;
		n->parent->gen = gen;
		node_free(t, n);
		break;
	case OP_SETPERMS:
		if (!n)
			return ENOENT;
		if (!can_write(n, domid))
			return EACCES;
		if (domid != 0 && op->perms[0].id != n->perms[0].id)
			return EPERM; /* only dom0 gives nodes away */
		if (n->perms[0].id == domid && op->perms[0].id != domid)
			(*delta)--;
		set_perms(t, n, op->perms, op->nperms);
		n->gen = ++gen;
		break;
	}
	return 0;
}

/* ---- transactions ------------------------------------------------------------ */

static struct xs_tx *find_tx(struct xs_conn *c, uint32_t id)
{
	for (struct xs_tx *t = c->txs; t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

static void tx_note(struct xs_tx *tx, const char *abs, int children)
{
	for (struct xs_access *a = tx->acc; a; a = a->next)
		if (strcmp(a->path, abs) == 0) {
			a->children |= children;
			return;
		}
	struct xs_access *a = xmalloc(sizeof(*a));
	a->path = xstrdup(abs);
	a->existed = lookup(&tx->tree, abs) != NULL;
	a->children = children;
	a->next = tx->acc;
	tx->acc = a;
}

static void tx_free(struct xs_tx *tx)
{
	while (tx->acc) {
		struct xs_access *a = tx->acc;
		tx->acc = a->next;
		free(a->path);
		free(a);
	}
	while (tx->ops) {
		struct xs_op *o = tx->ops;
		tx->ops = o->next;
		free(o->path);
		free(o->value);
		free(o->perms);
		free(o);
	}
	node_free(&tx->tree, tx->tree.root);
	free(tx);
}

static void tx_remove(struct xs_conn *c, struct xs_tx *tx)
{
	for (struct xs_tx **p = &c->txs; *p; p = &(*p)->next)
		if (*p == tx) {
			*p = tx->next;
			break;
		}
	c->ntx--;
	tx_free(tx);
}

/* 0, EAGAIN (conflict) or ENOSPC (quota) */
static int tx_commit(struct xs_conn *c, struct xs_tx *tx)
{
	for (struct xs_access *a = tx->acc; a; a = a->next) {
		struct xs_node *n = lookup(&store, a->path);
		if (a->existed ? !n || n->gen > tx->start_gen ||
		                         (a->children && n->cgen > tx->start_gen)
		               : n != NULL)
			return EAGAIN;
	}
	if (c->domid != 0 && tx->node_delta > 0 &&
	    node_count[c->domid] + (uint32_t)tx->node_delta > XS_QUOTA_NODES)
		return ENOSPC;
	/* No conflict: the ops find the store as the copy found it. */
	for (struct xs_op *o = tx->ops; o; o = o->next) {
		struct xs_node *before = lookup(&store, o->path);
		struct xs_node *copy = o->type == OP_RM && before ? node_copy(before, NULL) : NULL;
		int32_t d = 0;
		if (apply_op(&store, c->domid, o, &d) == 0) {
			if (o->type == OP_RM)
				fire_removed(o->path, copy);
			else
				fire(o->path, lookup(&store, o->path));
		}
		if (copy) {
			struct xs_tree tmp = {copy, 0};
			node_free(&tmp, copy);
		}
	}
	return 0;
}

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

/* Runs a modifying op in a transaction (recorded) or on the store. */
static int do_modify(struct xs_conn *c, struct xs_tx *tx, struct xs_op *op)
{
	int32_t delta = 0;
	int rc;

	if (tx) {
		tx_note(tx, op->path, op->type != OP_WRITE && op->type != OP_SETPERMS);
		if (c->domid && op->type != OP_RM && op->type != OP_SETPERMS && !lookup(&tx->tree, op->path) &&
		    node_count[c->domid] + (uint32_t)(tx->node_delta > 0 ? tx->node_delta : 0) >=
		            XS_QUOTA_NODES)
			return ENOSPC;
		rc = apply_op(&tx->tree, c->domid, op, &delta);
		if (rc)
			return rc;
		tx->node_delta += delta;
		struct xs_op *copy = xmalloc(sizeof(*copy));
		*copy = *op;
		copy->next = NULL;
		*tx->ops_tail = copy;
		tx->ops_tail = &copy->next;
		op->path = NULL; /* moved into the log */
		op->value = NULL;
		op->perms = NULL;
		return 0;
	}
	struct xs_node *before = lookup(&store, op->path);
	if (c->domid && !before && op->type != OP_RM && op->type != OP_SETPERMS &&
	    node_count[c->domid] >= XS_QUOTA_NODES)
		return ENOSPC;
	struct xs_node *copy = op->type == OP_RM && before ? node_copy(before, NULL) : NULL;
	rc = apply_op(&store, c->domid, op, &delta);
	if (rc == 0) {
		if (op->type == OP_RM)
			fire_removed(op->path, copy);
		else
			fire(op->path, lookup(&store, op->path));
	}
	if (copy) {
		struct xs_tree tmp = {copy, 0};
		node_free(&tmp, copy);
	}
	return rc;
}

/* A request being handled: its connection and header, the body split at
 * NULs (v[0..n-1]), the transaction it runs in (if any) and the tree it
 * sees, and room for its path made absolute. */
struct xs_req {
	struct xs_conn *c;
	struct xsd_sockmsg *h;
	char *body;
	char **v;
	int n;
	struct xs_tx *tx;
	struct xs_tree *t;
	char abs[XENSTORE_ABS_PATH_MAX + 64];
};

/* XS_READ, XS_DIRECTORY, XS_DIRECTORY_PART, XS_GET_PERMS */
static void op_read(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	struct xsd_sockmsg *h = r->h;
	char **v = r->v, *abs = r->abs;
	int n = r->n;

	if (n < 1 || canonical(c, v[0], abs, sizeof(r->abs), 0)) {
		reply_err(c, h, EINVAL);
		return;
	}
	if (r->tx)
		tx_note(r->tx, abs, h->type == XS_DIRECTORY || h->type == XS_DIRECTORY_PART);
	struct xs_node *node = lookup(r->t, abs);
	if (!node) {
		reply_err(c, h, ENOENT);
		return;
	}
	if (!can_read(node, c->domid)) {
		reply_err(c, h, EACCES);
		return;
	}
	if (h->type == XS_READ) {
		send_msg(c, h->type, h->req_id, h->tx_id, node->value, node->vlen);
		return;
	}
	char buf[XENSTORE_PAYLOAD_MAX * 2];
	size_t len = 0;
	if (h->type == XS_GET_PERMS) {
		for (uint32_t i = 0; i < node->nperms; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%c%u", node->perms[i].perm,
			                        node->perms[i].id) + 1;
		send_msg(c, h->type, h->req_id, h->tx_id, buf, len);
		return;
	}
	size_t skip = 0;
	if (h->type == XS_DIRECTORY_PART) {
		char *end;
		if (n < 2 || !*v[1] || (skip = strtoul(v[1], &end, 10), *end)) {
			reply_err(c, h, EINVAL);
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
				reply_err(c, h, E2BIG);
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
	send_msg(c, h->type, h->req_id, h->tx_id, buf, len);
}

/* XS_WRITE, XS_MKDIR, XS_RM, XS_SET_PERMS */
static void op_modify(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	struct xsd_sockmsg *h = r->h;
	char *body = r->body;
	struct xs_op op = {0};
	char *nul = memchr(body, '\0', h->len);

	if (!nul || canonical(c, body, r->abs, sizeof(r->abs), 0)) {
		reply_err(c, h, EINVAL);
		return;
	}
	op.path = xstrdup(r->abs);
	if (h->type == XS_WRITE) {
		op.type = OP_WRITE;
		op.vlen = h->len - (uint32_t)(nul - body) - 1;
		op.value = xmalloc(op.vlen + 1);
		memcpy(op.value, nul + 1, op.vlen);
	} else if (h->type == XS_MKDIR) {
		op.type = OP_MKDIR;
	} else if (h->type == XS_RM) {
		op.type = OP_RM;
	} else {
		op.type = OP_SETPERMS;
		op.nperms = r->n > 1 ? (uint32_t)(r->n - 1) : 0;
		op.perms = xmalloc((op.nperms ? op.nperms : 1) * sizeof(*op.perms));
		if (r->n < 2 || parse_perms(r->v + 1, r->n - 1, op.perms) != 0) {
			free(op.path);
			free(op.perms);
			reply_err(c, h, EINVAL);
			return;
		}
	}
	int err = do_modify(c, r->tx, &op);
	free(op.path);
	free(op.value);
	free(op.perms);
	if (err)
		reply_err(c, h, err);
	else
		reply_ok(c, h);
}

static void watch_free(struct xs_conn *c, struct xs_watch *x)
{
	watch_count[c->domid]--;
	free(x->path);
	free(x->abs);
	free(x->token);
	free(x);
}

static void op_watch(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	char **v = r->v;

	if (r->n < 2 || canonical(c, v[0], r->abs, sizeof(r->abs), 1)) {
		reply_err(c, r->h, EINVAL);
		return;
	}
	for (struct xs_watch *w = watches; w; w = w->next)
		if (w->conn == c && strcmp(w->path, v[0]) == 0 && strcmp(w->token, v[1]) == 0) {
			reply_err(c, r->h, EEXIST);
			return;
		}
	if (c->domid && watch_count[c->domid] >= XS_QUOTA_WATCHES) {
		reply_err(c, r->h, E2BIG);
		return;
	}
	struct xs_watch *w = xmalloc(sizeof(*w));
	w->conn = c;
	w->path = xstrdup(v[0]);
	w->abs = xstrdup(r->abs);
	w->token = xstrdup(v[1]);
	w->next = watches;
	watches = w;
	watch_count[c->domid]++;
	reply_ok(c, r->h);
	send_event(w, w->abs); /* the event every watch fires at once */
}

static void op_unwatch(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	char **v = r->v;

	if (r->n < 2 || canonical(c, v[0], r->abs, sizeof(r->abs), 1)) {
		reply_err(c, r->h, EINVAL);
		return;
	}
	for (struct xs_watch **w = &watches; *w; w = &(*w)->next)
		if ((*w)->conn == c && strcmp((*w)->path, v[0]) == 0 && strcmp((*w)->token, v[1]) == 0) {
			struct xs_watch *x = *w;
			*w = x->next;
			watch_free(c, x);
			reply_ok(c, r->h);
			return;
		}
	reply_err(c, r->h, ENOENT);
}

static void op_reset_watches(struct xs_req *r)
{
	struct xs_conn *c = r->c;

	for (struct xs_watch **w = &watches; *w;) {
		struct xs_watch *x = *w;
		if (x->conn != c) {
			w = &x->next;
			continue;
		}
		*w = x->next;
		watch_free(c, x);
	}
	while (c->txs)
		tx_remove(c, c->txs);
	reply_ok(c, r->h);
}

static void op_transaction_start(struct xs_req *r)
{
	struct xs_conn *c = r->c;

	if (r->tx) {
		reply_err(c, r->h, EBUSY);
		return;
	}
	if (c->domid && c->ntx >= XS_QUOTA_TRANSACTIONS) {
		reply_err(c, r->h, ENOSPC);
		return;
	}
	struct xs_tx *x = calloc(1, sizeof(*x));
	if (!x)
		abort();
	x->id = ++c->next_tx ? c->next_tx : ++c->next_tx;
	x->start_gen = gen;
	x->tree.root = node_copy(store.root, NULL);
	x->ops_tail = &x->ops;
	x->next = c->txs;
	c->txs = x;
	c->ntx++;
	char id[16];
	int len = snprintf(id, sizeof(id), "%u", x->id) + 1;
	send_msg(c, r->h->type, r->h->req_id, 0, id, (size_t)len);
}

static void op_transaction_end(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	char **v = r->v;

	if (!r->tx || r->n < 1 || (strcmp(v[0], "T") && strcmp(v[0], "F"))) {
		reply_err(c, r->h, r->tx ? EINVAL : ENOENT);
		return;
	}
	int err = strcmp(v[0], "T") == 0 ? tx_commit(c, r->tx) : 0;
	tx_remove(c, r->tx);
	if (err)
		reply_err(c, r->h, err);
	else
		reply_ok(c, r->h);
}

static void op_get_domain_path(struct xs_req *r)
{
	uint32_t d;

	if (r->n < 1 || parse_domid(r->v[0], &d)) {
		reply_err(r->c, r->h, EINVAL);
		return;
	}
	char path[64];
	int len = snprintf(path, sizeof(path), "/local/domain/%u", d) + 1;
	send_msg(r->c, r->h->type, r->h->req_id, r->h->tx_id, path, (size_t)len);
}

static void op_is_domain_introduced(struct xs_req *r)
{
	uint32_t d;

	if (r->n < 1 || parse_domid(r->v[0], &d)) {
		reply_err(r->c, r->h, EINVAL);
		return;
	}
	send_msg(r->c, r->h->type, r->h->req_id, r->h->tx_id, introduced[d] || d == 0 ? "T" : "F", 2);
}

/* XS_INTRODUCE, XS_RELEASE: dom0 only */
static void op_introduce_release(struct xs_req *r)
{
	struct xsd_sockmsg *h = r->h;
	uint32_t d;

	if (r->c->domid != 0) {
		reply_err(r->c, h, EACCES);
		return;
	}
	if (r->n < (h->type == XS_INTRODUCE ? 3 : 1) || parse_domid(r->v[0], &d) || d == 0) {
		reply_err(r->c, h, EINVAL);
		return;
	}
	introduced[d] = h->type == XS_INTRODUCE;
	reply_ok(r->c, h);
	fire_special(h->type == XS_INTRODUCE ? "@introduceDomain" : "@releaseDomain");
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
	[XS_WATCH] = op_watch,
	[XS_UNWATCH] = op_unwatch,
	[XS_RESET_WATCHES] = op_reset_watches,
	[XS_TRANSACTION_START] = op_transaction_start,
	[XS_TRANSACTION_END] = op_transaction_end,
	[XS_GET_DOMAIN_PATH] = op_get_domain_path,
	[XS_IS_DOMAIN_INTRODUCED] = op_is_domain_introduced,
	[XS_INTRODUCE] = op_introduce_release,
	[XS_RELEASE] = op_introduce_release,
};

static void handle(struct xs_conn *c, struct xsd_sockmsg *h, char *body)
{
	char *v[XENSTORE_PAYLOAD_MAX / 2 + 1];
	struct xs_req r = {.c = c, .h = h, .body = body, .v = v, .t = &store};

	if (h->tx_id) {
		r.tx = find_tx(c, h->tx_id);
		if (!r.tx) {
			reply_err(c, h, ENOENT);
			return;
		}
		r.t = &r.tx->tree;
	}
	r.n = split(body, h->len, v, (int)(sizeof(v) / sizeof(v[0])));
	if (h->type < XS_TYPE_COUNT && ops[h->type])
		ops[h->type](&r);
	else
		reply_err(c, h, ENOSYS);
}

/* ---- connections -------------------------------------------------------------- */

static void conn_drop(struct xs_conn *c, const char *why)
{
	if (c->dead)
		return;
	if (sim_verbose || strcmp(why, "closed"))
		sim_log("xenstore: dom%u client dropped: %s", c->domid, why);
	c->dead = 1;
	loop_del(&c->it);
	close(c->it.fd);
	c->it.fd = -1;
	/* Its watches and transactions stay until xs_reap(): we may be inside
	 * fire(), walking the watch list, or inside tx_commit() of one of its
	 * own transactions (a commit's watch event can fail to reach it). */
	for (struct xs_watch *w = watches; w; w = w->next)
		if (w->conn == c)
			watch_count[c->domid]--;
	/* freed by xs_reap() once the event loop's batch is done */
}

void xs_reap(void)
{
	for (struct xs_watch **w = &watches; *w;) {
		struct xs_watch *x = *w;
		if (!x->conn->dead) {
			w = &x->next;
			continue;
		}
		*w = x->next;
		free(x->path);
		free(x->abs);
		free(x->token);
		free(x);
	}
	for (struct xs_conn **p = &conns; *p;) {
		struct xs_conn *c = *p;
		if (!c->dead) {
			p = &c->next;
			continue;
		}
		*p = c->next;
		while (c->txs)
			tx_remove(c, c->txs);
		free(c->out);
		free(c);
	}
}

void xs_accept(int fd, uint32_t domid)
{
	struct xs_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->it.kind = EV_XS_CONN;
	c->it.fd = fd;
	c->domid = domid;
	c->next = conns;
	conns = c;
	if (loop_add(&c->it, 0) != 0)
		conn_drop(c, "cannot watch its socket");
}

uint32_t xs_watch_count(uint32_t domid)
{
	return domid <= SIM_MAX_DOMID ? watch_count[domid] : 0;
}

size_t xs_conn_count(void)
{
	size_t n = 0;
	for (struct xs_conn *c = conns; c; c = c->next)
		n += !c->dead;
	return n;
}

void xs_conn_event(struct ev_item *it, int readable, int writable)
{
	struct xs_conn *c = (struct xs_conn *)it;

	if (writable)
		flush_out(c);
	while (readable && !c->dead) {
		ssize_t n = ev_io(c->it.fd, EV_RECV, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen, 0);
		if (n == 0)
			break;
		if (n < 0) {
			conn_drop(c, "closed");
			break;
		}
		c->inlen += (size_t)n;
		/* Process every complete message in the buffer. */
		while (!c->dead && c->inlen >= sizeof(struct xsd_sockmsg)) {
			struct xsd_sockmsg h;
			memcpy(&h, c->in, sizeof(h));
			if (h.len > XENSTORE_PAYLOAD_MAX) {
				conn_drop(c, "message longer than XENSTORE_PAYLOAD_MAX");
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
		flush_out(c);
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
	apply_op(&store, 0, &op, &d);
	struct xs_node *n = lookup(&store, path);
	if (n && perms)
		set_perms(&store, n, perms, np);
	fire(path, n);
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
	fire_special("@introduceDomain");
	return 0;
}

void xs_domain_release(uint32_t domid, const char *uuid)
{
	char p[256];

	for (struct xs_conn *c = conns; c; c = c->next)
		if (c->domid == domid)
			conn_drop(c, "its domain was destroyed");
	introduced[domid] = 0;
	fire_special("@releaseDomain");
	/* As the toolstack does after a destroy. */
	snprintf(p, sizeof(p), "/local/domain/%u", domid);
	struct xs_op rm = {.type = OP_RM, .path = p};
	int32_t d = 0;
	struct xs_node *before = lookup(&store, p);
	struct xs_node *copy = before ? node_copy(before, NULL) : NULL;
	if (apply_op(&store, 0, &rm, &d) == 0)
		fire_removed(p, copy);
	if (copy) {
		struct xs_tree tmp = {copy, 0};
		node_free(&tmp, copy);
	}
	snprintf(p, sizeof(p), "/vm/%s", uuid);
	apply_op(&store, 0, &rm, &d);
}

int xs_server_init(void)
{
	struct xs_perm root = {0, 'n'};

	store.root = node_new("", NULL);
	set_perms(&store, store.root, &root, 1);
	toolstack_write("/local", NULL, NULL, 0);
	toolstack_write("/local/domain", NULL, NULL, 0);
	toolstack_write("/vm", NULL, NULL, 0);
	toolstack_write("/tool", NULL, NULL, 0);
	return 0;
}

void xs_server_fini(void)
{
	for (struct xs_conn *c = conns; c; c = c->next)
		conn_drop(c, "closed");
	xs_reap();
	node_free(&store, store.root);
	store.root = NULL;
}
