/*
 * read_service.h - the backend's read service: <run-dir>/read.sock, where
 * readers that may not open the store's files (its files are 0600: read
 * access to a live SQLite store is lock access) read it through the
 * backend, in the protocol of store/store_wire.h.  Its own thread and its
 * own read-only connection: guests never wait on a reader.
 * read_service.c calls store/ (store.h, store_wire.h), peer_room.c, log.c.
 */
#ifndef PROFSVC_BE_READ_SERVICE_H
#define PROFSVC_BE_READ_SERVICE_H

#include <stddef.h>
#include <stdint.h>

struct be_read_service;

/* Clients at once, in all and of one user other than root and ours. */
#define READ_CLIENTS_MAX 48
#define READ_PER_USER_MAX 8
/* A connection with no request under way is closed after this long; a
 * request must arrive whole, and a reply be read whole, within these. */
#define READ_IDLE_US (30 * 1000000LL)
#define READ_REQUEST_US (5 * 1000000LL)
#define READ_REPLY_US (10 * 1000000LL)

/* Listens on <run_dir>/read.sock (mode 0660 when shared: the run
 * directory grants its group read and search; else 0600) and serves the
 * store at db (already open by this process's owner) on a thread of its
 * own.  NULL, and why in err, when it cannot. */
struct be_read_service *be_read_service_start(const char *db, const char *run_dir, int shared, char *err, size_t errlen);
/* Stops the thread, drops every client, removes the socket, closes its
 * connection (before the owner's: store_open.c's last connection). */
void be_read_service_stop(struct be_read_service *rs);

/* What it did, for status and metrics. */
struct be_read_service_counts {
	uint64_t requests, clients, turned_away, dropped;
	int open;
};
void be_read_service_counts(struct be_read_service *rs, struct be_read_service_counts *out);

#endif
