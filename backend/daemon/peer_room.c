/*
 * peer_room.c - who gets a place on a socket shared by peer user
 * (peer_room.h).  The rules, by the peer's credentials (SO_PEERCRED):
 *   (1) a user other than root and the backend's own (an unprivileged
 *       one) holds at most per_user places: its next client takes the
 *       place of its own oldest, never another user's; when none of its
 *       own may be dropped, the newcomer is refused;
 *   (2) a client of root or of the backend's user is never dropped for
 *       another user's: when every place is taken, a privileged newcomer
 *       takes the place of an unprivileged user's oldest client (a
 *       privileged one's only when nobody else holds one); an unprivileged
 *       newcomer takes the place of the oldest client of the unprivileged
 *       user holding the most places, when that user holds more than one
 *       place more than the newcomer's, else it is refused;
 *   (3) only a client that may be dropped (evictable: its callers say
 *       what that is) ever is.
 * Why: the run directory is the group's when shared (profdb serve's user
 * reads through it), and a member's flood of connections once took every
 * place, root's `profile-backend status` and the end-run of `profdb delete
 * --force` included.
 *
 * Calls nothing (libc).
 *
 * May call: libc only.
 */
#include "config.h"

#include <stdio.h>

#include "peer_room.h"

static size_t held_by(const struct be_peer_slot *s, size_t n, uid_t uid)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i].used && !s[i].priv && s[i].uid == uid;
	return k;
}

/* The oldest evictable place of user uid (any user's: any), privileged or
 * not (priv); n when none. */
static size_t oldest(const struct be_peer_slot *s, size_t n, int any, uid_t uid, int priv)
{
	size_t best = n;
	for (size_t i = 0; i < n; i++)
		if (s[i].used && s[i].evictable && s[i].priv == priv && (any || s[i].uid == uid) &&
		    (best == n || s[i].seq < s[best].seq))
			best = i;
	return best;
}

enum be_peer_place be_peer_room_place(const struct be_peer_slot *s, size_t n, int per_user, uid_t uid, int priv,
                                size_t *idx, char *why, size_t whylen)
{
	size_t v = n;
	if (!priv && held_by(s, n, uid) >= (size_t)per_user) {
		v = oldest(s, n, 0, uid, 0);
		if (v == n) {
			snprintf(why, whylen, "user %u has %d requests under way here (at most %d at once per user); "
			         "try again", (unsigned)uid, per_user, per_user);
			return PEER_REFUSE;
		}
		snprintf(why, whylen, "user %u opened another connection (at most %d at once per user: the "
		         "oldest makes room); try again", (unsigned)uid, per_user);
		*idx = v;
		return PEER_EVICT;
	}
	for (size_t i = 0; i < n; i++)
		if (!s[i].used) {
			*idx = i;
			return PEER_FREE;
		}
	if (priv) {
		v = oldest(s, n, 1, 0, 0);
		if (v == n)
			v = oldest(s, n, 1, 0, 1);
		snprintf(why, whylen, "every place is taken and %s needs one; try again",
		         uid == 0 ? "root" : "the backend's user");
	} else {
		size_t mine = held_by(s, n, uid), most = 0;
		uid_t top = 0;
		for (size_t i = 0; i < n; i++) {
			size_t k = s[i].used && !s[i].priv ? held_by(s, n, s[i].uid) : 0;
			if (k > most && oldest(s, n, 0, s[i].uid, 0) != n) {
				most = k;
				top = s[i].uid;
			}
		}
		if (most > mine + 1)
			v = oldest(s, n, 0, top, 0);
		snprintf(why, whylen, "every place is taken and user %u holds %zu of the %zu; try again", (unsigned)top,
		         most, n);
	}
	if (v == n) {
		snprintf(why, whylen, "every place is taken (%zu), by clients none of which may be dropped for this "
		         "one; try again", n);
		return PEER_REFUSE;
	}
	*idx = v;
	return PEER_EVICT;
}
