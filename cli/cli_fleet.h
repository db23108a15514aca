/*
 * cli_fleet.h - profdb over a fleet catalogue (--db postgresql://...): the
 * commands that read a run get it copied from PostgreSQL into a private
 * store of this process (removed when it exits), and read it there with
 * the code that reads a host's own store.
 */
#ifndef PROFSVC_CLI_FLEET_H
#define PROFSVC_CLI_FLEET_H

#include <stdint.h>

#include "../fleet/fleet.h"

/* The read commands that work over a catalogue; 1 for them. */
int cli_fleet_command_ok(const char *cmd);
/* A reader of the catalogue at url, connected once per process; NULL
 * after printing why. */
struct fleet *cli_fleet(const char *url);
/* The private store runs are copied into (created on first use). */
const char *cli_fleet_store(const char *url);
/* A run argument (N, HOST:N, latest, HOST:latest) copied into the private
 * store once; its id there.  Prints the error itself. */
int cli_fleet_resolve(const char *arg, int64_t *local_id);
/* 1 while profdb reads a catalogue (set by cli_fleet_store). */
int cli_fleet_active(void);

#endif
