/*
 * view_diff.c - one side of a comparison of two runs (view_diff.h).
 *
 * May call: view.h, view_profile.h, view_samples.h, view_eventlog.h,
 * view_err.h, profile/.
 */
#include "config.h"

#include <string.h>

#include "view_diff.h"
#include "view_eventlog.h"
#include "view_samples.h"

int view_diff_side_load(struct view *v, const struct view_run *run, struct view_diff_side *s,
                        struct view_err *e)
{
	struct view_profile_read hrd;
	memset(&hrd, 0, sizeof(hrd));

	memset(s, 0, sizeof(*s));
	el_gc_init(&s->gc);
	tp_init(&s->tp);
	hp_init(&s->hp);
	/* a run sampled from dom0 (no .prof) compares by its samples */
	int from_samples;
	s->have_tp = view_read_time_profile_or_samples(v, run, &s->tp, &s->rd, &from_samples, e) == 0;
	struct store_device_info dev;
	/* a sampled run without a .hp is not missing one */
	s->have_hp = !(from_samples && store_find_device(v->s, run->id, "xvdp2", &dev) != 0) &&
	             view_read_heap_profile(v, run, &s->hp, NULL, &hrd, e) == 0;
	s->tp_damaged = !s->have_tp && s->rd.damage[0];
	s->hp_damaged = !s->have_hp && hrd.damage[0];
	if (!s->have_tp)
		s->rd = hrd;
	if (view_snapshot(v, NULL) == 0 && store_find_device(v->s, run->id, "eventlog", &dev) == 0) {
		struct view_eventlog el;
		s->have_gc = view_read_eventlog_gc(v, run, &s->gc, &el, e) == 0;
		if (s->have_gc && !s->have_tp && !s->have_hp)
			s->rd = el.rd;
		view_eventlog_free(&el);
	}
	return !s->have_tp && !s->have_hp && !s->have_gc ? -1 : 0;
}

void view_diff_side_free(struct view_diff_side *s)
{
	tp_free(&s->tp);
	hp_free(&s->hp);
	el_gc_free(&s->gc);
}
