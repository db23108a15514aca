/*
 * metrics.h - the backend's counters as Prometheus text (metrics.c).
 */
#ifndef PROFSVC_METRICS_H
#define PROFSVC_METRICS_H

#include <stdio.h>

struct be_backend;
void be_metrics_text(struct be_backend *b, FILE *f);

#endif
