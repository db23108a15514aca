/*
 * sink.h - the benchmark baselines (--sink null|raw|raw-direct): steps 4-5
 * of a batch with the store replaced.  sink.c calls raw_mirror.c (the raw
 * sink's image) and batch.c.
 */
#ifndef PROFSVC_BE_SINK_H
#define PROFSVC_BE_SINK_H

#include "backend/common/options.h"

struct backend;
struct batch;

const char *sink_name(enum sink s);
void sink_batch(struct backend *b, struct batch *bt);

#endif
