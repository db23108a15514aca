/*
 * view_diff.c - one side of a comparison of two runs (view_diff.h).
 *
 * May call: view.h, view_profile.h, view_err.h, profile/.
 */
#include "config.h"

#include <string.h>

#include "view_diff.h"

int view_diff_side_load(struct view *v, const char *arg, struct view_diff_side *s,
                        struct view_err *e)
{
	struct view_profile_read hrd;
	int64_t id;
	char idbuf[32];

	memset(s, 0, sizeof(*s));
	tp_init(&s->tp);
	hp_init(&s->hp);
	if (view_resolve(v, arg, &id, e) != 0)
		return 1;
	view_run_ref(id, idbuf, sizeof(idbuf));
	s->have_tp = view_read_time_profile(v, idbuf, &s->tp, &s->rd, e) == 0;
	s->have_hp = view_read_heap_profile(v, idbuf, &s->hp, NULL, &hrd, e) == 0;
	if (!s->have_tp)
		s->rd = hrd;
	return !s->have_tp && !s->have_hp;
}

void view_diff_side_free(struct view_diff_side *s)
{
	tp_free(&s->tp);
	hp_free(&s->hp);
}
