/*
 * daemonize.h - starting a daemon the way both profile-backend and xensim
 * do: fork, a session of its own, standard streams on /dev/null, and the
 * parent waiting until the child says it serves (or why it cannot), so
 * that `start` returns only once the daemon is usable and, when it is not,
 * says why on the terminal that started it (a machine without syslog
 * would otherwise lose the reason).
 */
#ifndef PROFSVC_DAEMONIZE_H
#define PROFSVC_DAEMONIZE_H

#include <stddef.h>
#include <sys/types.h>

/* In the child: returns 0 and *ready_fd, on which the child then calls
 * daemonize_ready() once it serves or daemonize_failed() with the reason.
 * In the parent: returns the child's pid once it is ready; -1 if it failed
 * (its reason in why, "" if it died without one) or the fork failed (a
 * fork or pipe failure is printed as "prog: ..."). */
pid_t daemonize_why(const char *prog, int *ready_fd, char *why, size_t whylen);
/* daemonize_why() without the reason. */
pid_t daemonize(const char *prog, int *ready_fd);
/* The child serves: the parent returns its pid.  Closes ready_fd. */
void daemonize_ready(int ready_fd);
/* The child will not serve: the parent gets why.  Closes ready_fd. */
void daemonize_failed(int ready_fd, const char *why);
/* A daemon's stop signals: SIGTERM, SIGINT and SIGHUP blocked and read
 * from the signalfd returned (non-blocking, close-on-exec; -1 with errno
 * when it cannot be made); SIGPIPE ignored. */
int daemonize_signal_fd(void);

#endif
