/*
 * mirror_raw.c - --mirror-raw DIR: a copy of a device's data beside the
 * store, as a sparse raw image (NAME-runN-xvdp1.img), for users who still
 * want disk images.  libaio, O_DIRECT where the filesystem allows it;
 * writes are submitted after the store commit and never waited for on the
 * guest's path (up to 64 in flight per device).  A mirror that fails is
 * logged once and dropped; the store is the record.
 *
 * The benchmarks' raw sink (sink.c, --sink raw=DIR) writes an image
 * opened here too: mirror_open with sink set opens it for reading back,
 * mirror_reap marks its failed writes, mirror_close closes it.
 *
 * May call: log.c and libaio, common/ (state.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_AIO
#include <libaio.h>
#endif

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "raw_mirror.h"

static void safe_name(const char *s, char *out, size_t len)
{
	size_t o = 0;
	for (; *s && o + 1 < len && o < 48; s++) {
		char c = *s;
		out[o++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		                           c == '-' || c == '_'
		                   ? c
		                   : '_';
	}
	out[o] = '\0';
}

int be_raw_mirror_open(struct be_device *d, const char *dir, int direct, int sink)
{
	struct be_raw_mirror *m = calloc(1, sizeof(*m));
	char name[64];
	struct store_device_info si;

	if (!m)
		return -1;
	safe_name(d->run ? d->run->name : "guest", name, sizeof(name));
	snprintf(m->path, sizeof(m->path), "%s/%s-run%lld-%s.img", dir, name,
	         d->run ? (long long)d->run->run_id : 0LL, d->vdev);
	/* The sink reads back (READ requests); the mirror only writes. */
	int flags = (sink ? O_RDWR : O_WRONLY) | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	m->sink = sink;
	m->fd = direct ? open(m->path, flags | O_DIRECT, 0600) : -1;
	m->direct = m->fd >= 0;
	if (m->fd < 0 && (!direct || errno == EINVAL)) /* tmpfs and friends */
		m->fd = open(m->path, flags, 0600);
	store_device_get_info(d->sdev, &si);
	if (m->fd < 0 || ftruncate(m->fd, (off_t)(si.capacity_sectors * 512)) != 0) {
		be_dlog_at(LOG_ERR, d, "raw mirror %s: %s", m->path, strerror(errno));
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		return -1;
	}
#ifdef HAVE_AIO
	if (io_setup(RAW_MIRROR_DEPTH, &m->ctx) != 0) {
		be_dlog_at(LOG_WARNING, d, "raw mirror: io_setup failed; using pwrite");
		m->ctx = 0;
	}
#endif
	d->mirror = m;
	be_dlog_at(LOG_INFO, d, "raw %s %s (%s)", sink ? "image" : "mirror", m->path, m->direct ? "O_DIRECT" : "buffered");
	return 0;
}

#ifdef HAVE_AIO
int be_raw_mirror_reap(struct be_device *d, long min)
{
	struct be_raw_mirror *m = d->mirror;
	struct io_event ev[RAW_MIRROR_DEPTH];
	int failed = 0;

	while (m->inflight > 0) {
		int n = io_getevents(m->ctx, min > 0 ? min : 0, RAW_MIRROR_DEPTH, ev, NULL);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			int bad = (long)ev[i].res < 0 || ev[i].res != ev[i].obj->u.c.nbytes;
			failed |= bad;
			if (m->sink) {
				if (bad)
					*(int16_t *)ev[i].data = -1;
			} else {
				free(ev[i].data);
			}
			free(ev[i].obj);
		}
		m->inflight -= (unsigned)n;
		min -= n;
		if (min <= 0)
			break;
	}
	return failed ? -1 : 0;
}
#endif

static void drop(struct be_device *d, const char *why)
{
	be_dlog_at(LOG_WARNING, d, "raw mirror %s dropped: %s (the store keeps everything)", d->mirror->path, why);
	be_raw_mirror_close(d);
}

void be_raw_mirror_write(struct be_device *d, uint64_t sector, const void *data, uint32_t nsect)
{
	struct be_raw_mirror *m = d->mirror;
	size_t len = (size_t)nsect * 512;
	void *buf;

	if (!m)
		return;
	/* O_DIRECT wants aligned memory; a private copy also lets the write
	 * outlive the batch buffer. */
	if (posix_memalign(&buf, 4096, len) != 0) {
		drop(d, "out of memory");
		return;
	}
	memcpy(buf, data, len);
#ifdef HAVE_AIO
	if (m->ctx) {
		if (m->inflight >= RAW_MIRROR_DEPTH && be_raw_mirror_reap(d, 1) != 0) {
			free(buf);
			drop(d, "write failed");
			return;
		}
		struct iocb *cb = malloc(sizeof(*cb));
		if (!cb) {
			free(buf);
			drop(d, "out of memory");
			return;
		}
		io_prep_pwrite(cb, m->fd, buf, len, (long long)(sector * 512));
		cb->data = buf;
		if (io_submit(m->ctx, 1, &cb) != 1) {
			free(cb);
			free(buf);
			drop(d, "io_submit failed");
			return;
		}
		m->inflight++;
		if (be_raw_mirror_reap(d, 0) != 0)
			drop(d, "write failed");
		return;
	}
#endif
	ssize_t n = pwrite(m->fd, buf, len, (off_t)(sector * 512));
	free(buf);
	if (n != (ssize_t)len)
		drop(d, n < 0 ? strerror(errno) : "short write");
}

void be_raw_mirror_close(struct be_device *d)
{
	struct be_raw_mirror *m = d->mirror;

	if (!m)
		return;
	d->mirror = NULL;
#ifdef HAVE_AIO
	if (m->ctx) {
		struct be_device tmp = {.mirror = m};
		be_raw_mirror_reap(&tmp, (long)m->inflight);
		io_destroy(m->ctx);
	}
#endif
	fsync(m->fd);
	close(m->fd);
	free(m);
}
