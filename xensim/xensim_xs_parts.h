/*
 * xensim_xs_parts.h - the parts of xensim's xenstored and how they
 * meet (what the rest of xensim sees is in xensim_xenstored.h).  Each
 * part calls only those below it, and the event loop and log
 * (xensim_loop.h):
 *
 *   xensim_xs.c        the wire protocol: framing, one handler per
 *                      operation, domains introduced and released, start/stop
 *   xensim_xs_tx.c     transactions: a private copy of the tree, the log of
 *                      their ops, the commit's conflict check; a modifying
 *                      op run in a transaction or on the store
 *   xensim_xs_watch.c  watches: registering them, firing them when the
 *                      store changes; an op applied to the store and told
 *   xensim_xs_conn.c   connections: their output, replies, dropping them
 *   xensim_xs_tree.c   the node tree: nodes, permissions, the node quota's
 *                      counts, paths, the four modifying ops
 *
 * May call: platform/sim_proto.h (the wire), xensim_xenstored.h.
 */
#ifndef PROFSVC_XENSIM_XS_PARTS_H
#define PROFSVC_XENSIM_XS_PARTS_H

#include <errno.h> /* before xs_wire.h: its table of error names */
#include <stddef.h>
#include <stdint.h>

#include <xen/io/xs_wire.h>

#include "platform/sim_proto.h"
#include "xensim_xenstored.h"

/* ---- the node tree (xensim_xs_tree.c) --------------------------------------- */

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
	uint32_t nkids;
	size_t capkids;
	uint64_t gen;  /* last change to this node */
	uint64_t cgen; /* last change to its children */
};

/* A tree: the store itself, or a transaction's private copy. */
struct xs_tree {
	struct xs_node *root;
	int is_main; /* quota counts and watches apply */
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

/* The store. */
extern struct xs_tree xs_store;

/* malloc and strdup that never return NULL (out of memory: abort). */
void *xs_alloc(size_t n);
char *xs_strdup(const char *s);
struct xs_node *xs_node_new(const char *name, struct xs_node *parent);
void xs_node_free(struct xs_tree *t, struct xs_node *n);
/* A deep copy; xs_node_drop_copy() frees one detached from any tree. */
struct xs_node *xs_node_copy(const struct xs_node *n, struct xs_node *parent);
void xs_node_drop_copy(struct xs_node *copy);
struct xs_node *xs_lookup(struct xs_tree *t, const char *abs);
int xs_can_read(const struct xs_node *n, uint32_t domid);
void xs_set_perms(struct xs_tree *t, struct xs_node *n, const struct xs_perm *p, uint32_t np);
/* Applies one op.  *delta: nodes gained (or lost) by domid.  0 or an errno. */
int xs_apply_op(struct xs_tree *t, uint32_t domid, const struct xs_op *op, int32_t *delta);
/* The store's generation: it counts every change. */
uint64_t xs_gen(void);
/* Nodes of the store a domain owns (its node quota's count). */
uint32_t xs_node_count(uint32_t domid);
/* Canonical absolute path into out, for a client of domain domid (relative
 * paths are under its /local/domain/<domid>); special (@...) paths only if
 * allowed.  0 or EINVAL. */
int xs_canonical(uint32_t domid, const char *in, char *out, size_t len, int allow_special);

/* ---- connections (xensim_xs_conn.c) -------------------------------------------- */

struct xs_tx;

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

/* Queues a message and sends what the socket takes now. */
void xs_send_msg(struct xs_conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
                 const void *body, size_t len);
void xs_flush_out(struct xs_conn *c);
void xs_reply_ok(struct xs_conn *c, const struct xsd_sockmsg *req);
void xs_reply_err(struct xs_conn *c, const struct xsd_sockmsg *req, int err);
/* Closes its socket and marks it dead; it is freed by xs_reap(). */
void xs_conn_drop(struct xs_conn *c, const char *why);
/* Drops every connection of domid (all of them: UINT32_MAX). */
void xs_conn_drop_domain(uint32_t domid, const char *why);
/* Unlinks one dead connection for the caller to free (xs_conn_free), or NULL. */
struct xs_conn *xs_conn_take_dead(void);
void xs_conn_free(struct xs_conn *c);

/* ---- watches (xensim_xs_watch.c) ----------------------------------------------- */

/* path changed: watches on it or on an ancestor fire, if their owner may
 * read perm_node (the node as it is, or was before a removal). */
void xs_fire(const char *path, const struct xs_node *perm_node);
/* Special watches (@introduceDomain, @releaseDomain): dom0's only. */
void xs_fire_special(const char *name);
/* Applies op to the store and fires the watches it concerns. */
int xs_store_apply(uint32_t domid, const struct xs_op *op, int32_t *delta);
/* XS_WATCH, XS_UNWATCH */
void xs_op_watch(struct xs_req *r);
void xs_op_unwatch(struct xs_req *r);
/* Frees the watches of connection c (XS_RESET_WATCHES), or those of every
 * dead connection (c NULL: xs_reap()). */
void xs_watches_free(const struct xs_conn *c);

/* ---- transactions (xensim_xs_tx.c) --------------------------------------------- */

struct xs_tx *xs_tx_find(struct xs_conn *c, uint32_t id);
/* The private tree a transaction reads and writes. */
struct xs_tree *xs_tx_tree(struct xs_tx *tx);
/* Records that the transaction read abs (children: its list of children). */
void xs_tx_note(struct xs_tx *tx, const char *abs, int children);
/* Ends all the connection's transactions without committing. */
void xs_tx_remove_all(struct xs_conn *c);
/* Runs a modifying op in a transaction (recorded) or on the store: 0 or an
 * errno.  What the op owned that the log keeps is taken from op (NULL). */
int xs_modify(struct xs_conn *c, struct xs_tx *tx, struct xs_op *op);
/* XS_TRANSACTION_START, XS_TRANSACTION_END */
void xs_op_transaction_start(struct xs_req *r);
void xs_op_transaction_end(struct xs_req *r);

#endif
