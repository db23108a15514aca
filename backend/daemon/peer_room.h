/*
 * peer_room.h - the room of a socket the run directory's group shares
 * with root: who gets a place when a client connects (peer_room.c).  Both
 * of the backend's sockets use it, the control socket and the read
 * service.  Calls nothing.
 */
#ifndef PROFSVC_BE_PEER_ROOM_H
#define PROFSVC_BE_PEER_ROOM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A place as the socket sees it. */
struct be_peer_slot {
	int used;
	uid_t uid;       /* the peer's user (SO_PEERCRED) */
	int priv;        /* root or the backend's own user */
	uint64_t seq;    /* accept order: the oldest has the smallest */
	int evictable;   /* may be dropped for a newcomer (nothing of it under way) */
};

enum be_peer_place { PEER_FREE, PEER_EVICT, PEER_REFUSE };

/* Where a newcomer of user uid (priv: root or ours) goes among the n
 * places: PEER_FREE (*idx a free place), PEER_EVICT (*idx the place of
 * the client to drop for it, and why, the line to tell that client's
 * reason), or PEER_REFUSE (why: the newcomer's reason).  per_user: the
 * most places one unprivileged user holds. */
enum be_peer_place be_peer_room_place(const struct be_peer_slot *slots, size_t n, int per_user, uid_t uid, int priv,
                                size_t *idx, char *why, size_t whylen);

#endif
