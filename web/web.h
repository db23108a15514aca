/*
 * web.h - profdb serve: a read-only web view of the store (pages, a JSON
 * API, live event streams), on libmicrohttpd.  See README "profdb serve".
 *
 * May call (web/ as a whole): view/, store/, profile/, fleet/ (mirror.c),
 * util/, libmicrohttpd, jansson, libsystemd; nothing in cli/.
 */
#ifndef PROFSVC_WEB_H
#define PROFSVC_WEB_H

struct mirror;

#define WEB_ALLOW_HOSTS_MAX 16
struct web_opts {
	const char *db;        /* the store, opened read-only per request */
	const char *listen;    /* "127.0.0.1:8080", "[::1]:8080", ":8080" */
	int open_browser;      /* xdg-open the catalogue once listening */
	struct mirror *mirror; /* a fleet catalogue's mirror (db is its path), or NULL */
	const char *shown;     /* what it serves, for messages (NULL: db) */
	const char *allow_hosts[WEB_ALLOW_HOSTS_MAX]; /* --allow-host: names besides localhost, IP
	                                               * addresses and this machine's name */
	int nallow_hosts;
	int access_log;        /* --access-log: a line per request on stderr (the journal's
	                        * entries under systemd whatever it says) */
};

/* Serves until SIGINT or SIGTERM.  The exit status: 0, 1 (reported), or
 * WEB_EXIT_USAGE (2) for a --listen that is not an address. */
#define WEB_EXIT_USAGE 2
int web_serve(const struct web_opts *o);

#endif
