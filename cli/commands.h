/*
 * commands.h - the profdb subcommands.  Each takes the resolved database
 * path and its own argv (argv[0] is the command name) and returns the exit
 * status: 0 ok, 1 error (already reported), 2 usage.
 *
 * May call: nothing (each cmd_*.c says what it calls).
 */
#ifndef PROFSVC_COMMANDS_H
#define PROFSVC_COMMANDS_H

int cmd_query(const char *db, int argc, char **argv);
int cmd_show(const char *db, int argc, char **argv);
int cmd_export(const char *db, int argc, char **argv);
int cmd_export_disk(const char *db, int argc, char **argv);
int cmd_import(const char *db, int argc, char **argv);
int cmd_import_disk(const char *db, int argc, char **argv);
int cmd_check(const char *db, int argc, char **argv);
int cmd_heap(const char *db, int argc, char **argv);
int cmd_top(const char *db, int argc, char **argv);
int cmd_flame(const char *db, int argc, char **argv);
int cmd_diff(const char *db, int argc, char **argv);
int cmd_report(const char *db, int argc, char **argv);
int cmd_serve(const char *db, int argc, char **argv);
int cmd_watch(const char *db, int argc, char **argv);
int cmd_delete(const char *db, int argc, char **argv);
int cmd_prune(const char *db, int argc, char **argv);
int cmd_du(const char *db, int argc, char **argv);
int cmd_sync(const char *db, int argc, char **argv);
int cmd_events(const char *db, int argc, char **argv);
int cmd_gc(const char *db, int argc, char **argv);
int cmd_symbols(const char *db, int argc, char **argv);

#endif
