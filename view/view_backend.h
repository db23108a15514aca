/*
 * view_backend.h - asking the running profile-backend on this host, through
 * its control socket (<run dir>/backend.sock; the run directory is
 * $PROFSVC_RUN_DIR, else the configured one): what profdb and profdb serve
 * need of it (end a run before deleting it; its metrics), and where its
 * read service listens (read.sock beside it).
 *
 * May call: view_err.h.
 */
#ifndef PROFSVC_VIEW_BACKEND_H
#define PROFSVC_VIEW_BACKEND_H

#include <stddef.h>

#include "view_err.h"

/* The backend's read service: <run dir>/read.sock, where a reader that may
 * not open the store's files reads it (store_open_opts.read_socket); NULL
 * when the run directory is too long for a socket's path. */
const char *view_read_socket(void);

/* Sends the one-line command (its newline added) and reads the answer
 * until the backend closes, timeout_ms pass or max bytes came.  0 and a
 * malloc'd, NUL-terminated *reply (*len bytes, at least one) when it
 * answered; VIEW_BACKEND_NONE when no backend listens (or the run
 * directory's path cannot be a socket's), VIEW_BACKEND_FAILED when one
 * took the connection and gave no answer (a timeout, a close) or memory
 * ran out; why in e either way. */
#define VIEW_BACKEND_NONE (-1)
#define VIEW_BACKEND_FAILED (-2)
int view_backend_ask(const char *command, int timeout_ms, size_t max, char **reply, size_t *len,
                     struct view_err *e);
/* 1 when an answer is the backend turning the request away ("evicted:
 * ..." or "refused: ...", one line saying why): it was not done. */
int view_backend_turned_away(const char *reply);

#endif
