/*
 * cli_samples.h - profdb's exports of a run's stack samples
 * (cli_samples.c): folded stacks, `perf script` text, pprof, speedscope,
 * each written whole or not at all (cli_util's outfiles); and top
 * --samples, the samples shown as samples (view/view_sampled.h).
 *
 * May call: profile/samples/samples.h, store/store.h, view/ through cli_view.h,
 * cli_util.h, cli_json.h, jansson (cli_samples.c).
 */
#ifndef PROFSVC_CLI_SAMPLES_H
#define PROFSVC_CLI_SAMPLES_H

#include <stdint.h>

struct samples_outputs {
	const char *folded, *perf_script, *pprof, *speedscope;
};

/* 1 when any is asked for. */
int samples_outputs_any(const struct samples_outputs *so);
/* Writes the outputs asked for from run's samples: 0, or 1 (reported). */
struct view;
struct view_run;
int cli_samples_export(struct view *v, const struct view_run *run, const struct samples_outputs *so);

/* top --samples: the functions of run's samples (their self and total
 * shares by the time each sample stands for), what focus and ignore keep,
 * and the sandwich of one function.  0, 1 or EXIT_USAGE (reported). */
struct view_focus;
struct cli_sampled_opts {
	const struct view_focus *focus;
	const char *sandwich, *module;
	uint64_t limit;
	int json, by_total;
};
int cli_samples_top(struct view *v, const struct view_run *run, const struct cli_sampled_opts *o);

struct store;
struct store_run;
typedef struct json_t json_t;
/* show's summary of the run's stack samples: printed (json NULL), or as
 * the object of docs/json.md into *json (NULL when the run has none).
 * 0, or 1 (reported). */
int cli_samples_show(struct store *s, const struct store_run *run, json_t **json);

#endif
