/*
 * cli_samples.h - profdb's exports of a run's stack samples
 * (cli_samples.c): folded stacks, `perf script` text, pprof, speedscope,
 * each written whole or not at all (cli_util's outfiles).
 */
#ifndef PROFSVC_CLI_SAMPLES_H
#define PROFSVC_CLI_SAMPLES_H

struct samples_outputs {
	const char *folded, *perf_script, *pprof, *speedscope;
};

/* 1 when any is asked for. */
int samples_outputs_any(const struct samples_outputs *so);
/* Writes the outputs asked for from RUN's samples: 0, or 1 (reported). */
int cli_samples_export(const char *db, const char *arg, const struct samples_outputs *so);

#endif
