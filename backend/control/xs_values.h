/*
 * xs_values.h - parsing what the backend reads from xenstore: the
 * frontend's ring description (guest-controlled), the toolstack's backend
 * directory, and the paths of watch events.  Pure functions over strings,
 * no xenstore handle, so that all of it can be fuzzed (tests/fuzz).
 * xs_values.c calls blkif.c and vdev.c.
 */
#ifndef PROFSVC_XS_VALUES_H
#define PROFSVC_XS_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "backend/blkif/blkif.h"

#define XSV_MAX_RING_PAGE_ORDER 4u /* up to 16 ring pages */

/* Strict decimal: digits only, no sign, no space, no leading '+', at most
 * max.  0 ok, -1 v is NULL (absent), -2 malformed or too large. */
int be_xsv_parse_u32(const char *v, uint32_t max, uint32_t *out);

/* Returns a malloc'd value of node in the directory being read, or NULL. */
typedef char *(*be_xsv_get_fn)(void *ctx, const char *node);

struct be_xsv_ring {
	uint32_t order, pages;
	uint32_t refs[1u << XSV_MAX_RING_PAGE_ORDER];
	uint32_t port;
	enum be_blkif_abi abi;
};

/* Reads ring-page-order, ring-ref or ring-ref0..N-1, event-channel and
 * protocol as Linux blkback does.  0, or -1 with *why naming the value. */
int be_xsv_frontend_ring(be_xsv_get_fn get, void *ctx, struct be_xsv_ring *out, char *why, size_t whylen);

/* The toolstack's entries in our backend directory must describe the
 * device the path names: frontend = /local/domain/<domid>/device/vbd/<devid>,
 * frontend-id = domid, dev = the vdev whose number is devid.  0 (and vdev
 * copied out), or -1. */
int be_xsv_backend_dir(const char *frontend, const char *frontend_id, const char *dev, uint32_t domid,
                    uint32_t devid, char *vdev, size_t vdevlen);

/* A path under our backend root, from a watch event. */
enum be_xsv_path_kind {
	XSV_PATH_OTHER,  /* not ours, malformed, or a node we write ourselves */
	XSV_PATH_ROOT,   /* the root itself: rescan everything */
	XSV_PATH_DOMAIN, /* <root>/<domid> */
	XSV_PATH_DEVICE, /* <root>/<domid>/<devid>[/<node>] */
};
enum be_xsv_path_kind be_xsv_backend_path(const char *root, const char *path, uint32_t *domid,
                                    uint32_t *devid);

/* A mirage-profile guest's data/mprof/ring-ref: grant refs, decimal,
 * comma-separated, no sign, space or empty item, each below 2^32, 1..max
 * of them.  0 with a malloc'd array, or -1 with *why. */
int be_xsv_trace_refs(const char *v, uint32_t max, uint32_t **out, uint32_t *count, const char **why);

/* Nodes of the backend directory that we write (their events are ours). */
int be_xsv_own_node(const char *node);

#endif
