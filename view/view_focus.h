/*
 * view_focus.h - focus and ignore (pprof's -focus and -ignore) for every
 * view of a profile (view_focus.c): regular expressions over function
 * names, a stack kept when a frame matches a focus one (any of them; no
 * focus: every stack) and none matches an ignore one; a time profile's
 * call tree cut to the stacks kept, for top and flame of a .prof or of
 * stack samples, and the same test on one sample's functions
 * (view_sampled.h).  A name matches as a function is shown
 * ("Module.name") or by its name alone.  POSIX extended regular
 * expressions, unanchored (as pprof's are), over the guest's bytes.
 *
 * May call: profile/prof/time_profile.h, libc.
 */
#ifndef PROFSVC_VIEW_FOCUS_H
#define PROFSVC_VIEW_FOCUS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#define VIEW_FOCUS_MAX 8 /* of each kind */

struct view_focus {
	size_t nfocus, nignore;
	regex_t focus[VIEW_FOCUS_MAX], ignore[VIEW_FOCUS_MAX];
	const char *focus_src[VIEW_FOCUS_MAX], *ignore_src[VIEW_FOCUS_MAX]; /* as given (borrowed) */
};

void view_focus_init(struct view_focus *f);
void view_focus_free(struct view_focus *f);
/* Adds a focus (ignore 0) or an ignore (ignore 1) expression (kept by
 * reference): 0, or -1 with why (the regex library's words, or "more
 * than 8") in err. */
int view_focus_add(struct view_focus *f, int ignore, const char *re, char *err, size_t errlen);
/* 1 when f filters anything. */
int view_focus_any(const struct view_focus *f);
/* Does the function (its name and module; module "" for none) match a
 * focus expression (ignore 0) or an ignore one (ignore 1)? */
int view_focus_match(const struct view_focus *f, int ignore, const char *name, const char *module);

struct time_profile;
/* Cuts p's call tree to the stacks f keeps, in place: a node whose stack
 * (it and its callers) has no focus match or has an ignore match loses
 * its own figures (ticks, bytes, time, alloc, entries), a node with no
 * kept node at or under it is removed, inherited figures are summed
 * again, and GHC's table is no longer used (its figures are the whole
 * profile's).  The totals stay the whole profile's, so the shares are of
 * the whole (pprof's).  *kept_pct: the share of the time in the stacks
 * kept (by ticks, else by the stacks' percentages).  0, or -1 when out
 * of memory (p unchanged). */
int view_focus_profile(const struct view_focus *f, struct time_profile *p, double *kept_pct);

#endif
