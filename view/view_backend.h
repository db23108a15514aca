/*
 * view_backend.h - asking the running profile-backend on this host, through
 * its control socket (<run dir>/backend.sock; the run directory is
 * $PROFSVC_RUN_DIR, else the configured one): what profdb and profdb serve
 * need of it (end a run before deleting it; its metrics).
 */
#ifndef PROFSVC_VIEW_BACKEND_H
#define PROFSVC_VIEW_BACKEND_H

#include <stddef.h>

/* Sends the one-line command (its newline added) and reads the answer
 * until the backend closes, timeout_ms pass or max bytes came.  0 and a
 * malloc'd, NUL-terminated *reply (*len bytes) when it answered; -1 and
 * why in msg (no backend listening, a timeout, out of memory). */
int view_backend_ask(const char *command, int timeout_ms, size_t max, char **reply, size_t *len,
                     char *msg, size_t msglen);

#endif
