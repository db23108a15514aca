/*
 * daemon.h - profile-backend as a daemon (start), and stop and status as
 * clients of its control socket.  daemon.c calls every part below it: the
 * control plane, the data path, the control socket, log.c, util/.
 */
#ifndef PROFSVC_BE_DAEMON_H
#define PROFSVC_BE_DAEMON_H

struct options;

int daemon_start(struct options *o);
int daemon_stop(const struct options *o);
int daemon_status(const struct options *o);
/* Asks the running backend to sample a domain and waits until it is done
 * (the summary on stdout); interrupted, the sampling stops.  The exit code. */
int daemon_sample(const struct options *o, const char *domain);

#endif
