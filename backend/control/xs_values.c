/*
 * xs_values.c - parsing of xenstore values and watch paths (see
 * xs_values.h).  Everything here may come from a guest or a confused
 * toolstack: values are parsed strictly, never trusted for a length, and
 * a bad one produces a message naming it.
 *
 * May call: blkif.c (ABI names), vdev.c and common/ (options.h): pure
 * functions over strings.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/common/options.h"
#include "backend/common/vdev.h"
#include "xs_values.h"

int be_xsv_parse_u32(const char *v, uint32_t max, uint32_t *out)
{
	if (!v)
		return -1;
	/* strtoul would take leading space, a sign and "0x"-less overflow. */
	if (*v < '0' || *v > '9')
		return -2;
	errno = 0;
	char *end;
	unsigned long x = strtoul(v, &end, 10);
	if (*end || errno || x > max)
		return -2;
	*out = (uint32_t)x;
	return 0;
}

static int get_u32(be_xsv_get_fn get, void *ctx, const char *node, uint32_t max, uint32_t *out)
{
	char *v = get(ctx, node);
	int rc = be_xsv_parse_u32(v, max, out);
	free(v);
	return rc;
}

int be_xsv_frontend_ring(be_xsv_get_fn get, void *ctx, struct be_xsv_ring *r, char *why, size_t whylen)
{
	char node[32];

	memset(r, 0, sizeof(*r));
	int rc = get_u32(get, ctx, "ring-page-order", XSV_MAX_RING_PAGE_ORDER, &r->order);
	if (rc == -2) {
		snprintf(why, whylen, "frontend ring-page-order is not a number up to %u",
		         XSV_MAX_RING_PAGE_ORDER);
		return -1;
	}
	if (rc == -1)
		r->order = 0;
	r->pages = 1u << r->order;
	for (uint32_t i = 0; i < r->pages; i++) {
		/* Without ring-page-order: the single-page "ring-ref". */
		if (rc == -1)
			snprintf(node, sizeof(node), "ring-ref");
		else
			snprintf(node, sizeof(node), "ring-ref%u", i);
		if (get_u32(get, ctx, node, UINT32_MAX, &r->refs[i]) != 0) {
			snprintf(why, whylen, "frontend %s missing or not a number", node);
			return -1;
		}
	}
	if (get_u32(get, ctx, "event-channel", UINT32_MAX, &r->port) != 0) {
		snprintf(why, whylen, "frontend event-channel missing or not a number");
		return -1;
	}
	char *proto = get(ctx, "protocol");
	if (be_blkif_abi_parse(proto, &r->abi) != 0) {
		/* %.40s and no control characters: the value is the guest's. */
		char shown[41];
		size_t n = 0;
		for (const char *p = proto; p && *p && n < 40; p++)
			shown[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
		shown[n] = '\0';
		snprintf(why, whylen, "frontend protocol '%s' unknown (native, x86_32-abi or x86_64-abi)",
		         shown);
		free(proto);
		return -1;
	}
	free(proto);
	return 0;
}

int be_xsv_backend_dir(const char *frontend, const char *frontend_id, const char *dev, uint32_t domid,
                    uint32_t devid, char *vdev, size_t vdevlen)
{
	char expect[96];
	uint32_t feid;

	snprintf(expect, sizeof(expect), "/local/domain/%u/device/vbd/%u", domid, devid);
	if (!frontend || strcmp(frontend, expect) != 0)
		return -1;
	if (be_xsv_parse_u32(frontend_id, 32767, &feid) != 0 || feid != domid)
		return -1;
	if (!dev || strlen(dev) >= vdevlen || be_vdev_to_devid(dev) != (int64_t)devid)
		return -1;
	snprintf(vdev, vdevlen, "%s", dev);
	return 0;
}

/* Nodes of our own backend directory that only we write: their watch
 * events are our own writes coming back. */
int be_xsv_own_node(const char *node)
{
	static const char *const own[] = {
		"sectors", "sector-size", "physical-sector-size", "info", "feature-flush-cache",
		"feature-discard", "discard-granularity", "discard-alignment", "discard-secure",
		"feature-max-indirect-segments", "feature-persistent", "max-ring-page-order",
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(node, own[i]) == 0)
			return 1;
	return 0;
}

/* One path component as a strict decimal id. */
static int component_id(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	char buf[16];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return be_xsv_parse_u32(buf, max, out) == 0 ? 0 : -1;
}

enum be_xsv_path_kind be_xsv_backend_path(const char *root, const char *path, uint32_t *domid,
                                    uint32_t *devid)
{
	size_t rl = strlen(root);
	if (strncmp(path, root, rl) != 0)
		return XSV_PATH_OTHER;
	if (path[rl] == '\0')
		return XSV_PATH_ROOT;
	if (path[rl] != '/')
		return XSV_PATH_OTHER;
	const char *dom = path + rl + 1, *dev = strchr(dom, '/');
	if (component_id(dom, dev ? (size_t)(dev - dom) : strlen(dom), 32767, domid) != 0)
		return XSV_PATH_OTHER;
	if (!dev)
		return XSV_PATH_DOMAIN;
	dev++;
	const char *node = strchr(dev, '/');
	if (component_id(dev, node ? (size_t)(node - dev) : strlen(dev), UINT32_MAX, devid) != 0)
		return XSV_PATH_OTHER;
	if (node && be_xsv_own_node(node + 1))
		return XSV_PATH_OTHER;
	return XSV_PATH_DEVICE;
}

int be_xsv_trace_refs(const char *v, uint32_t max, uint32_t **out, uint32_t *count, const char **why)
{
	size_t n = 1;

	*out = NULL;
	for (const char *p = v; *p; p++)
		n += *p == ',';
	if (!*v) {
		*why = "is empty";
		return -1;
	}
	if (n > max) {
		*why = "lists more pages than allowed (--max-trace-pages)";
		return -1;
	}
	uint32_t *refs = calloc(n, sizeof(*refs));
	if (!refs) {
		*why = "out of memory";
		return -1;
	}
	const char *p = v;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = 0;
		const char *start = p;
		while (*p >= '0' && *p <= '9' && p - start < 11)
			r = r * 10 + (uint64_t)(*p++ - '0');
		if (p == start || r > UINT32_MAX || (*p != ',' && *p) || (*p == ',' && i + 1 == n)) {
			free(refs);
			*why = "is not a comma-separated list of grant refs";
			return -1;
		}
		refs[i] = (uint32_t)r;
		if (*p == ',')
			p++;
	}
	*out = refs;
	*count = (uint32_t)n;
	return 0;
}
