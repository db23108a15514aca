/*
 * xensim_xs_tree.c - the xenstored's node tree: nodes and their copies,
 * permissions as C xenstored checks them, the per-domain node counts the
 * node quota reads, paths made canonical, and the four modifying ops
 * (write, mkdir, rm, set-perms) on the store or a transaction's copy.
 *
 * Permissions: dom0 may do anything; the owner (first entry) may do
 * anything to its node; others get the entry naming them, else the
 * default; new nodes inherit their parent's permissions and an
 * unprivileged creator becomes the owner; only dom0 changes owners.
 *
 * May call: the log (sim_log, xensim_loop.h), util/grow.h.  The bottom of the xenstored
 * (xensim_xs_parts.h): it calls none of its other parts.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "xensim_xs_parts.h"

struct xs_tree xs_store = {.is_main = 1};
static uint64_t gen;
static uint32_t node_count[SIM_MAX_DOMID + 1];

uint64_t xs_gen(void)
{
	return gen;
}

uint32_t xs_node_count(uint32_t domid)
{
	return node_count[domid];
}

void *xs_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		sim_log("out of memory");
		abort();
	}
	return p;
}

char *xs_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xs_alloc(n), s, n);
}

struct xs_node *xs_node_new(const char *name, struct xs_node *parent)
{
	struct xs_node *n = calloc(1, sizeof(*n));
	if (!n)
		abort();
	n->name = xs_strdup(name);
	n->value = xs_alloc(1);
	n->parent = parent;
	return n;
}

void xs_node_free(struct xs_tree *t, struct xs_node *n)
{
	for (uint32_t i = 0; i < n->nkids; i++)
		xs_node_free(t, n->kids[i]);
	if (t->is_main && n->nperms && n->perms[0].id <= SIM_MAX_DOMID &&
	    node_count[n->perms[0].id])
		node_count[n->perms[0].id]--;
	free(n->kids);
	free(n->name);
	free(n->value);
	free(n->perms);
	free(n);
}

struct xs_node *xs_node_copy(const struct xs_node *n, struct xs_node *parent)
{
	struct xs_node *c = xs_node_new(n->name, parent);

	free(c->value);
	c->value = xs_alloc(n->vlen + 1);
	memcpy(c->value, n->value, n->vlen + 1);
	c->vlen = n->vlen;
	c->perms = xs_alloc(n->nperms * sizeof(*c->perms));
	memcpy(c->perms, n->perms, n->nperms * sizeof(*c->perms));
	c->nperms = n->nperms;
	c->gen = n->gen;
	c->cgen = n->cgen;
	c->capkids = c->nkids = n->nkids;
	c->kids = xs_alloc(n->nkids * sizeof(*c->kids));
	for (uint32_t i = 0; i < n->nkids; i++)
		c->kids[i] = xs_node_copy(n->kids[i], c);
	return c;
}

void xs_node_drop_copy(struct xs_node *copy)
{
	struct xs_tree tmp = {copy, 0};
	xs_node_free(&tmp, copy);
}

static struct xs_node *child(const struct xs_node *n, const char *name, size_t len)
{
	for (uint32_t i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i]->name) == len && memcmp(n->kids[i]->name, name, len) == 0)
			return n->kids[i];
	return NULL;
}

struct xs_node *xs_lookup(struct xs_tree *t, const char *abs)
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
	if (GROW_FROM(parent->kids, parent->capkids, (size_t)parent->nkids + 1, 4) != 0)
		abort();
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

int xs_can_read(const struct xs_node *n, uint32_t domid)
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
int xs_canonical(uint32_t domid, const char *in, char *out, size_t len, int allow_special)
{
	if (in[0] == '@') {
		if (!allow_special || !valid_chars(in) || strchr(in, '/') || strlen(in) >= len)
			return EINVAL;
		strcpy(out, in);
		return 0;
	}
	int n = in[0] == '/' ? snprintf(out, len, "%s", in)
	                     : snprintf(out, len, "/local/domain/%u/%s", domid, in);
	if (n < 0 || (size_t)n >= len || n > XENSTORE_ABS_PATH_MAX)
		return EINVAL;
	if (in[0] != '/' && (strlen(in) == 0 || strlen(in) > XENSTORE_REL_PATH_MAX))
		return EINVAL;
	/* '@' is a valid character; only a leading one makes a path special. */
	if (!valid_chars(out) || strstr(out, "//") || (n > 1 && out[n - 1] == '/'))
		return EINVAL;
	return 0;
}

/* ---- tree operations (on the store or a transaction's copy) -------------------------- */

void xs_set_perms(struct xs_tree *t, struct xs_node *n, const struct xs_perm *p, uint32_t np)
{
	if (t->is_main && n->nperms && node_count[n->perms[0].id])
		node_count[n->perms[0].id]--;
	free(n->perms);
	n->perms = xs_alloc(np * sizeof(*p));
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
			char *name = xs_alloc(len + 1);
			memcpy(name, p, len);
			name[len] = '\0';
			k = xs_node_new(name, n);
			free(name);
			struct xs_perm *perms = xs_alloc(n->nperms * sizeof(*perms));
			memcpy(perms, n->perms, n->nperms * sizeof(*perms));
			if (domid != 0)
				perms[0].id = domid; /* an unprivileged creator owns it */
			xs_set_perms(t, k, perms, n->nperms);
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
int xs_apply_op(struct xs_tree *t, uint32_t domid, const struct xs_op *op, int32_t *delta)
{
	struct xs_node *n = xs_lookup(t, op->path);
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
		n->value = xs_alloc(op->vlen + 1);
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
			return xs_lookup(t, parent) ? 0 : ENOENT;
		}
		if (!n->parent)
			return EINVAL; /* the root */
		if (!can_write(n, domid))
			return EACCES;
		*delta -= (int32_t)nodes_below(n, domid);
		remove_child(n->parent, n);
		n->parent->cgen = ++gen;
		n->parent->gen = gen;
		xs_node_free(t, n);
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
		xs_set_perms(t, n, op->perms, op->nperms);
		n->gen = ++gen;
		break;
	}
	return 0;
}
