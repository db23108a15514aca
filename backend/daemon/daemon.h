/*
 * daemon.h - profile-backend as a daemon (start), and stop and status as
 * clients of its control socket.  daemon.c calls every part below it: the
 * control plane, the data path, the control socket, log.c, util/.
 */
#ifndef PROFSVC_BE_DAEMON_H
#define PROFSVC_BE_DAEMON_H

struct be_options;

int be_daemon_start(struct be_options *o);
int be_daemon_stop(const struct be_options *o);
int be_daemon_status(const struct be_options *o);
/* Asks the running backend to sample a domain and waits until it is done
 * (the summary on stdout); interrupted, the sampling stops.  The exit code. */
int be_daemon_sample(const struct be_options *o, const char *domain);

#endif
