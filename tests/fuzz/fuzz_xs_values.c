/*
 * fuzz_xs_values.c - libFuzzer target: what the backend parses out of
 * xenstore (backend/control/xs_values.c, backend/common/vdev.c).  The input is a
 * frontend directory as "node=value" lines (values are the guest's), then
 * the same lines as watch-event paths and backend-directory entries.
 * Asserted: a ring description that parses has 1..16 pages, a known ABI
 * and every ref present; numbers parse only from plain decimal; a device
 * path parses only under the root with in-range ids; vdev names and
 * device numbers round-trip; a trace ref list parses only from decimal
 * items and commas, one ref per item, within the limit.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/control/xs_values.h"

int64_t be_vdev_to_devid(const char *vdev);
int be_devid_to_vdev(uint32_t devid, char *out, size_t len);

struct dir {
	char *node[64], *value[64];
	int n;
};

static char *dir_get(void *ctx, const char *node)
{
	struct dir *d = ctx;
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->node[i], node) == 0)
			return strdup(d->value[i]);
	return NULL;
}

static int plain_decimal(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct dir d = {.n = 0};
	char *lines[64];
	int nlines = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && nlines < 64;
	     l = strtok_r(NULL, "\n", &save)) {
		lines[nlines++] = l;
	}
	/* Parse the lines as a directory before strtok-ing them further. */
	char *copies[64];
	for (int i = 0; i < nlines; i++) {
		copies[i] = strdup(lines[i]);
		char *eq = strchr(copies[i], '=');
		if (eq && d.n < 64) {
			*eq = '\0';
			d.node[d.n] = copies[i];
			d.value[d.n++] = eq + 1;
		}
	}

	struct be_xsv_ring r;
	char why[200];
	why[0] = '\0';
	if (be_xsv_frontend_ring(dir_get, &d, &r, why, sizeof(why)) == 0) {
		assert(r.pages >= 1 && r.pages <= 16 && (r.pages & (r.pages - 1)) == 0);
		assert(r.abi == BLKIF_ABI_NATIVE || r.abi == BLKIF_ABI_X86_32 || r.abi == BLKIF_ABI_X86_64);
		char *port = dir_get(&d, "event-channel");
		assert(port && plain_decimal(port));
		free(port);
	} else {
		assert(why[0]);
		for (const char *p = why; *p; p++)
			assert(*p >= 0x20 && *p < 0x7f); /* guest bytes never reach a log raw */
	}

	for (int i = 0; i < nlines; i++) {
		uint32_t v, domid = 0, devid = 0;
		if (be_xsv_parse_u32(lines[i], UINT32_MAX, &v) == 0)
			assert(plain_decimal(lines[i]));
		enum be_xsv_path_kind k = be_xsv_backend_path("/local/domain/0/backend/profsvc", lines[i], &domid, &devid);
		if (k != XSV_PATH_OTHER)
			assert(strncmp(lines[i], "/local/domain/0/backend/profsvc", 31) == 0);
		if (k == XSV_PATH_DOMAIN || k == XSV_PATH_DEVICE)
			assert(domid <= 32767);
		uint32_t *refs = NULL, nrefs = 0;
		const char *twhy = NULL;
		if (be_xsv_trace_refs(lines[i], 1024, &refs, &nrefs, &twhy) == 0) {
			size_t commas = 0;
			for (const char *p = lines[i]; *p; p++) {
				assert((*p >= '0' && *p <= '9') || *p == ',');
				commas += *p == ',';
			}
			assert(nrefs == commas + 1 && nrefs <= 1024 && refs);
			free(refs);
		} else {
			assert(twhy && !refs);
		}
		int64_t id = be_vdev_to_devid(lines[i]);
		if (id >= 0) {
			char back[32];
			assert(be_devid_to_vdev((uint32_t)id, back, sizeof(back)) == 0);
			assert(be_vdev_to_devid(back) == id);
		}
		char vdev[16];
		if (i + 2 < nlines && be_xsv_backend_dir(lines[i], lines[i + 1], lines[i + 2], domid, devid,
		                                      vdev, sizeof(vdev)) == 0)
			assert(be_vdev_to_devid(vdev) == (int64_t)devid);
	}
	for (int i = 0; i < nlines; i++)
		free(copies[i]);
	free(text);
	return 0;
}
