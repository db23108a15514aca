/*
 * xensim_xs_tx.c - the xenstored's transactions: each sees its own writes
 * (a private copy of the tree taken at start, its ops logged), and fails
 * with EAGAIN at commit if any node it read or wrote changed meanwhile
 * (per-node generation counts), or with ENOSPC if the ops would take its
 * domain past the node quota; at most XS_QUOTA_TRANSACTIONS open per
 * unprivileged connection.  Also where a modifying op runs, in a
 * transaction or on the store.
 *
 * May call: xensim_xs_watch.c (an op applied to the store and told),
 * xensim_xs_conn.c (replies), xensim_xs_tree.c.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xensim_xs_parts.h"

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

struct xs_tx *xs_tx_find(struct xs_conn *c, uint32_t id)
{
	for (struct xs_tx *t = c->txs; t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

void xs_tx_note(struct xs_tx *tx, const char *abs, int children)
{
	for (struct xs_access *a = tx->acc; a; a = a->next)
		if (strcmp(a->path, abs) == 0) {
			a->children |= children;
			return;
		}
	struct xs_access *a = xs_alloc(sizeof(*a));
	a->path = xs_strdup(abs);
	a->existed = xs_lookup(&tx->tree, abs) != NULL;
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
	xs_node_free(&tx->tree, tx->tree.root);
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

struct xs_tree *xs_tx_tree(struct xs_tx *tx)
{
	return &tx->tree;
}

void xs_tx_remove_all(struct xs_conn *c)
{
	while (c->txs)
		tx_remove(c, c->txs);
}

/* 0, EAGAIN (conflict) or ENOSPC (quota) */
static int tx_commit(struct xs_conn *c, struct xs_tx *tx)
{
	for (struct xs_access *a = tx->acc; a; a = a->next) {
		struct xs_node *n = xs_lookup(&xs_store, a->path);
		if (a->existed ? !n || n->gen > tx->start_gen ||
		                         (a->children && n->cgen > tx->start_gen)
		               : n != NULL)
			return EAGAIN;
	}
	if (c->domid != 0 && tx->node_delta > 0 &&
	    xs_node_count(c->domid) + (uint32_t)tx->node_delta > XS_QUOTA_NODES)
		return ENOSPC;
	/* No conflict: the ops find the store as the copy found it. */
	for (struct xs_op *o = tx->ops; o; o = o->next) {
		int32_t d = 0;
		xs_store_apply(c->domid, o, &d);
	}
	return 0;
}

int xs_modify(struct xs_conn *c, struct xs_tx *tx, struct xs_op *op)
{
	int32_t delta = 0;
	int rc;

	if (tx) {
		xs_tx_note(tx, op->path, op->type != OP_WRITE && op->type != OP_SETPERMS);
		if (c->domid && op->type != OP_RM && op->type != OP_SETPERMS && !xs_lookup(&tx->tree, op->path) &&
		    xs_node_count(c->domid) + (uint32_t)(tx->node_delta > 0 ? tx->node_delta : 0) >=
		            XS_QUOTA_NODES)
			return ENOSPC;
		rc = xs_apply_op(&tx->tree, c->domid, op, &delta);
		if (rc)
			return rc;
		tx->node_delta += delta;
		struct xs_op *copy = xs_alloc(sizeof(*copy));
		*copy = *op;
		copy->next = NULL;
		*tx->ops_tail = copy;
		tx->ops_tail = &copy->next;
		op->path = NULL; /* moved into the log */
		op->value = NULL;
		op->perms = NULL;
		return 0;
	}
	if (c->domid && !xs_lookup(&xs_store, op->path) && op->type != OP_RM &&
	    op->type != OP_SETPERMS && xs_node_count(c->domid) >= XS_QUOTA_NODES)
		return ENOSPC;
	return xs_store_apply(c->domid, op, &delta);
}

void xs_op_transaction_start(struct xs_req *r)
{
	struct xs_conn *c = r->c;

	if (r->tx) {
		xs_reply_err(c, r->h, EBUSY);
		return;
	}
	if (c->domid && c->ntx >= XS_QUOTA_TRANSACTIONS) {
		xs_reply_err(c, r->h, ENOSPC);
		return;
	}
	struct xs_tx *x = calloc(1, sizeof(*x));
	if (!x)
		abort();
	x->id = ++c->next_tx ? c->next_tx : ++c->next_tx;
	x->start_gen = xs_gen();
	x->tree.root = xs_node_copy(xs_store.root, NULL);
	x->ops_tail = &x->ops;
	x->next = c->txs;
	c->txs = x;
	c->ntx++;
	char id[16];
	int len = snprintf(id, sizeof(id), "%u", x->id) + 1;
	xs_send_msg(c, r->h->type, r->h->req_id, 0, id, (size_t)len);
}

void xs_op_transaction_end(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	char **v = r->v;

	if (!r->tx || r->n < 1 || (strcmp(v[0], "T") && strcmp(v[0], "F"))) {
		xs_reply_err(c, r->h, r->tx ? EINVAL : ENOENT);
		return;
	}
	int err = strcmp(v[0], "T") == 0 ? tx_commit(c, r->tx) : 0;
	tx_remove(c, r->tx);
	if (err)
		xs_reply_err(c, r->h, err);
	else
		xs_reply_ok(c, r->h);
}
