/*
 * view_samples.c - a run's stack samples from the store (view_samples.h).
 * The device's bytes are the samples stream from sector 0; holes read as
 * zeros, which the stream reads as padding, so a damaged or unwritten
 * range costs what it held and no more.
 *
 * May call: store/store.h, profile/samples/samples.h,
 * profile/prof/time_profile.h, view.h, view_err.h, view_profile.c,
 * view_symbols.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "profile/prof/time_profile.h"
#include "view_samples.h"
#include "view_symbols.h"

static int feed_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	static const uint8_t zeros[65536];
	struct samples_profile *p = ctx;
	(void)off;
	while (len) {
		size_t n = data ? len : len < sizeof(zeros) ? len : sizeof(zeros);
		if (samples_feed(p, data ? data : zeros, n) != 0)
			return 1;
		len -= n;
	}
	return 0;
}

int view_samples_feed_device(struct store *s, const struct store_device_info *dev, struct samples_profile *p,
                             struct view_err *e)
{
	uint64_t len = dev->written_end_sector * (uint64_t)STORE_SECTOR_SIZE;
	int r = store_read_range(s, dev->device_id, 0, len, feed_cb, p);
	if (r < 0) {
		view_error(e, "%s", store_errmsg(s));
		return -1;
	}
	if (r > 0 || samples_finish(p) != 0) {
		view_error(e, "%s", samples_error(p));
		return VIEW_SAMPLES_REFUSED;
	}
	return 0;
}

void view_count_samples(struct store *s, struct store_run *r, uint64_t *budget)
{
	struct store_device_info dev;
	struct samples_profile p;

	r->samples = -1;
	if (r->samples_bytes < 0)
		return;
	uint64_t bytes = (uint64_t)r->samples_bytes;
	if (budget && (bytes > VIEW_SAMPLES_COUNT_MAX || bytes > *budget))
		return;
	if (store_find_device(s, r->run_id, STORE_SAMPLES_VDEV, &dev) != 0 || dev.role != STORE_ROLE_SAMPLES)
		return;
	if (budget)
		*budget -= bytes;
	samples_init(&p);
	if (view_samples_feed_device(s, &dev, &p, NULL) == 0)
		r->samples = (int64_t)p.nsamples;
	samples_free(&p);
}

int view_read_samples(struct view *v, const struct view_run *run, struct samples_profile *p,
                      struct view_profile_read *rd, struct view_err *e)
{
	struct store_device_info dev;
	int64_t id = run->id;

	samples_init(p);
	memset(rd, 0, sizeof(*rd));
	if (view_snapshot(v, e) != 0)
		return -1;
	if (store_get_run(v->s, id, &rd->run) != 0) {
		view_error(e, "%s", store_errmsg(v->s));
		return -1;
	}
	if (store_find_device(v->s, id, STORE_SAMPLES_VDEV, &dev) != 0 || dev.role != STORE_ROLE_SAMPLES) {
		view_error(e, "run %lld has no stack samples (take them with 'profile-backend sample DOMAIN' "
		           "while its guest runs)", (long long)id);
		return -1;
	}
	/* (a stream failing its checksums is said as the store's error, not
	 * yet as damage: view_damage would change serve's status for it) */
	struct view_err fe;
	view_err_init(&fe);
	int r = view_samples_feed_device(v->s, &dev, p, &fe);
	if (r == VIEW_SAMPLES_REFUSED) {
		view_error(e, "run %lld: stack samples, %s", (long long)id, view_err_first(&fe));
		return -1;
	}
	if (r != 0) {
		view_error(e, "%s", view_err_first(&fe));
		return -1;
	}
	rd->bytes = dev.written_end_sector * (uint64_t)STORE_SECTOR_SIZE;
	/* addresses the sampler could not name, named from symbol files found
	 * since (by build-id) */
	view_symbolize(v->symbols, p, e);
	if (p->cut)
		view_warn(e, "run %lld: the samples stop inside a record (the sampler was cut off): the whole "
		          "ones are shown", (long long)id);
	return 0;
}

int view_read_samples_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                              struct view_profile_read *rd, struct view_err *e)
{
	struct samples_profile sp;
	tp_init(p);
	if (view_read_samples(v, run, &sp, rd, e) != 0) {
		samples_free(&sp);
		return -1;
	}
	int rc = 0;
	if (sp.nsamples == 0) {
		view_error(e, "run %lld has no stack samples yet", (long long)rd->run.run_id);
		rc = -1;
	} else if (samples_to_time_profile(&sp, p) != 0) {
		view_error(e, "out of memory");
		rc = -1;
	}
	samples_free(&sp);
	return rc;
}

int view_read_time_profile_or_samples(struct view *v, const struct view_run *run, struct time_profile *p,
                                      struct view_profile_read *rd, int *from_samples, struct view_err *e)
{
	struct store_device_info dev;
	*from_samples = 0;
	memset(rd, 0, sizeof(*rd));
	if (view_snapshot(v, e) != 0) {
		tp_init(p);
		return -1;
	}
	if (store_find_device(v->s, run->id, "xvdp1", &dev) != 0 &&
	    store_find_device(v->s, run->id, STORE_SAMPLES_VDEV, &dev) == 0) {
		*from_samples = 1;
		return view_read_samples_profile(v, run, p, rd, e);
	}
	return view_read_time_profile(v, run, p, rd, e);
}
