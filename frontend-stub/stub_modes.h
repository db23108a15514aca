/*
 * stub_modes.h - the frontend-stub's modes that have a file of their own,
 * called by stub.c's main: hostile (stub_hostile.c) and mirage
 * (stub_mirage.c).  Each returns the stub's exit code.
 *
 * May call: what the modes share (stub_ctx.c).
 */
#ifndef PROFSVC_STUB_MODES_H
#define PROFSVC_STUB_MODES_H

#include "stub_ctx.h"

int run_hostile(struct stub_ctx *c);
int run_mirage(struct stub_ctx *c);

#endif
