/*
 * metrics.h - the backend's counters as Prometheus text (metrics.c).
 */
#ifndef PROFSVC_METRICS_H
#define PROFSVC_METRICS_H

#include <stdio.h>

struct backend;
void metrics_text(struct backend *b, FILE *f);

#endif
