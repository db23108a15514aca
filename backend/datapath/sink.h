/*
 * sink.h - the benchmark baselines (--sink null|raw|raw-direct): steps 4-5
 * of a batch with the store replaced.  sink.c calls raw_mirror.c (the raw
 * sink's image) and batch.c.
 */
#ifndef PROFSVC_BE_SINK_H
#define PROFSVC_BE_SINK_H

#include "backend/common/options.h"

struct be_batch;

const char *be_sink_name(enum be_sink s);
/* Steps 4-5 of bt with the store replaced by sink (not SINK_STORE). */
void be_sink_batch(enum be_sink sink, struct be_batch *bt);

#endif
