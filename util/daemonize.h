/*
 * daemonize.h - starting a daemon the way both profile-backend and xensim
 * do: fork, a session of its own, standard streams on /dev/null, and the
 * parent waiting until the child says it serves (or has died), so that
 * `start` returns only once the daemon is usable and can say whether it is.
 */
#ifndef PROFSVC_DAEMONIZE_H
#define PROFSVC_DAEMONIZE_H

#include <sys/types.h>

/* In the child: returns 0 and *ready_fd, to which the child writes one
 * byte once it serves (then closes it).  In the parent: returns the
 * child's pid once that byte came; -1 if the child died first or the fork
 * failed (a fork or pipe failure is printed as "prog: ..."). */
pid_t daemonize(const char *prog, int *ready_fd);

#endif
