/*
 * xensim_xs_watch.c - the xenstored's watches: registering and removing
 * them (with the per-domain quota), and firing them as C xenstored does
 * when the store changes: a change to a path reaches watches on it or on
 * an ancestor whose owner may read the node, relative if the watch was
 * registered relative; a removal also reaches watches exactly on each
 * removed descendant; @introduceDomain and @releaseDomain only dom0's.
 * Every watch fires once when it is registered.
 *
 * May call: xensim_xs_conn.c (sending events and replies),
 * xensim_xs_tree.c, the log (xensim_loop.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xensim_xs_parts.h"

struct xs_watch {
	struct xs_conn *conn;
	char *path;  /* as registered (relative or absolute or @special) */
	char *abs;   /* canonical */
	char *token;
	struct xs_watch *next;
};

static struct xs_watch *watches;

/* The event path a watcher sees: relative if it registered relative. */
static const char *as_seen(const struct xs_watch *w, const char *abs)
{
	if (w->path[0] == '/' || w->path[0] == '@')
		return abs;
	size_t hl = strlen(w->abs) - strlen(w->path); /* "/local/domain/N/" */
	return strncmp(abs, w->abs, hl) == 0 ? abs + hl : abs;
}

static void send_event(struct xs_watch *w, const char *path)
{
	const char *seen = as_seen(w, path);
	size_t pl = strlen(seen) + 1, tl = strlen(w->token) + 1;
	char *body = xs_alloc(pl + tl);

	memcpy(body, seen, pl);
	memcpy(body + pl, w->token, tl);
	xs_send_msg(w->conn, XS_WATCH_EVENT, 0, 0, body, pl + tl);
	free(body);
}

/* path changed: watches on it or on an ancestor fire, if their owner may
 * read perm_node (the node as it is, or was before a removal). */
void xs_fire(const char *path, const struct xs_node *perm_node)
{
	size_t pl = strlen(path);

	for (struct xs_watch *w = watches; w; w = w->next) {
		size_t wl = strlen(w->abs);
		if (w->conn->dead || w->abs[0] == '@')
			continue;
		if (wl > pl || strncmp(path, w->abs, wl) != 0 ||
		    (path[wl] != '\0' && path[wl] != '/' && wl != 1))
			continue;
		if (perm_node && !xs_can_read(perm_node, w->conn->domid))
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
		if (!w->conn->dead && strcmp(w->abs, path) == 0 && xs_can_read(node, w->conn->domid))
			send_event(w, path);
	for (uint32_t i = 0; i < node->nkids; i++)
		fire_removed_exact(path, node->kids[i]);
}

/* A removal, as C xenstored reports it: the removed node's path to watches
 * on it or above, and each removed descendant's path to watches exactly on
 * that descendant.  A watch on a path that never existed hears nothing. */
static void fire_removed(const char *path, const struct xs_node *old)
{
	xs_fire(path, old);
	for (uint32_t i = 0; old && i < old->nkids; i++)
		fire_removed_exact(strcmp(path, "/") ? path : "", old->kids[i]);
}

void xs_fire_special(const char *name)
{
	/* Special watches: only dom0 is told about domains coming and going. */
	for (struct xs_watch *w = watches; w; w = w->next)
		if (!w->conn->dead && w->conn->domid == 0 && strcmp(w->abs, name) == 0)
			send_event(w, name);
}

int xs_store_apply(uint32_t domid, const struct xs_op *op, int32_t *delta)
{
	struct xs_node *before = xs_lookup(&xs_store, op->path);
	struct xs_node *copy = op->type == OP_RM && before ? xs_node_copy(before, NULL) : NULL;
	int rc = xs_apply_op(&xs_store, domid, op, delta);

	if (rc == 0) {
		if (op->type == OP_RM)
			fire_removed(op->path, copy);
		else
			xs_fire(op->path, xs_lookup(&xs_store, op->path));
	}
	if (copy)
		xs_node_drop_copy(copy);
	return rc;
}

/* ---- registering ---------------------------------------------------------------- */

/* Watches that count against domid's quota: those of its live connections. */
uint32_t xs_watch_count(uint32_t domid)
{
	uint32_t n = 0;
	for (struct xs_watch *w = watches; w; w = w->next)
		n += !w->conn->dead && w->conn->domid == domid;
	return n;
}

static void watch_free(struct xs_watch *x)
{
	free(x->path);
	free(x->abs);
	free(x->token);
	free(x);
}

/* The link to the watch c registered on path with token, or NULL. */
static struct xs_watch **find_watch(const struct xs_conn *c, const char *path, const char *token)
{
	for (struct xs_watch **w = &watches; *w; w = &(*w)->next)
		if ((*w)->conn == c && strcmp((*w)->path, path) == 0 && strcmp((*w)->token, token) == 0)
			return w;
	return NULL;
}

/* A watch's arguments: its path (made absolute in r->abs) and token; 0, or
 * -1 replied EINVAL. */
static int watch_args(struct xs_req *r)
{
	if (r->n < 2 || xs_canonical(r->c->domid, r->v[0], r->abs, sizeof(r->abs), 1)) {
		xs_reply_err(r->c, r->h, EINVAL);
		return -1;
	}
	return 0;
}

void xs_op_watch(struct xs_req *r)
{
	struct xs_conn *c = r->c;
	char **v = r->v;

	if (watch_args(r) != 0)
		return;
	if (find_watch(c, v[0], v[1])) {
		xs_reply_err(c, r->h, EEXIST);
		return;
	}
	if (c->domid && xs_watch_count(c->domid) >= XS_QUOTA_WATCHES) {
		xs_reply_err(c, r->h, E2BIG);
		return;
	}
	struct xs_watch *w = xs_alloc(sizeof(*w));
	w->conn = c;
	w->path = xs_strdup(v[0]);
	w->abs = xs_strdup(r->abs);
	w->token = xs_strdup(v[1]);
	w->next = watches;
	watches = w;
	xs_reply_ok(c, r->h);
	send_event(w, w->abs); /* the event every watch fires at once */
}

void xs_op_unwatch(struct xs_req *r)
{
	struct xs_watch **w, *x;

	if (watch_args(r) != 0)
		return;
	if (!(w = find_watch(r->c, r->v[0], r->v[1]))) {
		xs_reply_err(r->c, r->h, ENOENT);
		return;
	}
	x = *w;
	*w = x->next;
	watch_free(x);
	xs_reply_ok(r->c, r->h);
}

void xs_watches_free(const struct xs_conn *c)
{
	for (struct xs_watch **w = &watches; *w;) {
		struct xs_watch *x = *w;
		if (c ? x->conn != c : !x->conn->dead) {
			w = &x->next;
			continue;
		}
		*w = x->next;
		watch_free(x);
	}
}
