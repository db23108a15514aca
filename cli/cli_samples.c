/*
 * cli_samples.c - a run's stack samples exported (cli_samples.h): the
 * samples are read once, in one snapshot, and each output rendered from
 * them into its own file.
 *
 * May call: profile/samples/samples.h, store/store.h (show's summary, in the
 * caller's read: view_samples_feed_device reads it), view/ through
 * cli_view.h, cli_util.h, jansson.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "profile/samples/samples.h"
#include "store/store.h"
#include "view/view_json.h"
#include "cli_samples.h"
#include "cli_util.h"
#include "cli_view.h"

int samples_outputs_any(const struct samples_outputs *so)
{
	return so->folded || so->perf_script || so->pprof || so->speedscope;
}

struct samples_job {
	const struct samples_profile *p;
	char name[400];
	char comm[64];
};

static int render_folded(FILE *f, void *ctx)
{
	return samples_write_folded(f, ((struct samples_job *)ctx)->p);
}

static int render_perf_script(FILE *f, void *ctx)
{
	struct samples_job *j = ctx;
	return samples_write_perf_script(f, j->p, j->comm);
}

static int render_pprof(FILE *f, void *ctx)
{
	return samples_write_pprof(f, ((struct samples_job *)ctx)->p);
}

static int render_speedscope(FILE *f, void *ctx)
{
	struct samples_job *j = ctx;
	return samples_write_speedscope(f, j->p, j->name);
}

/* perf script's command name: the guest's name, with no blank (perf's
 * readers split the header on blanks). */
static void comm_of(const char *name, char *out, size_t len)
{
	size_t i = 0;
	for (; name[i] && i + 1 < len && i < 15; i++)
		out[i] = name[i] == ' ' || name[i] == '\t' || (unsigned char)name[i] < 0x20 ? '_' : name[i];
	out[i] = '\0';
	if (!i)
		snprintf(out, len, "guest");
}

int cli_samples_export(struct view *v, const struct view_run *run, const struct samples_outputs *so)
{
	struct samples_profile p;
	struct view_profile_read rd;
	struct view_err e;
	int rc = 1;

	cli_view_err(&e);
	if (view_read_samples(v, run, &p, &rd, &e) != 0)
		goto out;
	struct samples_job job = {&p, {0}, {0}};
	char what[96];
	view_profile_caption(&rd.run, job.name, sizeof(job.name));
	comm_of(rd.run.name, job.comm, sizeof(job.comm));
	snprintf(what, sizeof(what), "%zu samples of run %lld", p.nsamples, (long long)rd.run.run_id);
	rc = 0;
	if (so->folded)
		rc |= outfile_render(so->folded, render_folded, &job, what);
	if (so->perf_script)
		rc |= outfile_render(so->perf_script, render_perf_script, &job, what);
	if (so->pprof)
		rc |= outfile_render(so->pprof, render_pprof, &job, what);
	if (so->speedscope)
		rc |= outfile_render(so->speedscope, render_speedscope, &job, what);
out:
	samples_free(&p);
	return rc ? 1 : 0;
}

/* The samples' time span, from the first sample to the last. */
static double span_s(const struct samples_profile *p)
{
	if (!p->nsamples)
		return 0;
	return (double)(p->samples[p->nsamples - 1].t_ns - p->samples[0].t_ns) / 1e9;
}

int cli_samples_show(struct store *s, const struct store_run *run, json_t **json)
{
	struct store_device_info dev;
	struct samples_profile p;

	if (json)
		*json = NULL;
	if (store_find_device(s, run->run_id, STORE_SAMPLES_VDEV, &dev) != 0 || dev.role != STORE_ROLE_SAMPLES)
		return 0;
	struct view_err e;
	view_err_init(&e);
	samples_init(&p);
	if (view_samples_feed_device(s, &dev, &p, &e) != 0) {
		cli_err("run %lld: stack samples: %s", (long long)run->run_id, view_err_first(&e));
		samples_free(&p);
		return 1;
	}
	if (json) {
		*json = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:b, s:b}", "samples", (json_int_t)p.nsamples,
		                  "lost", (json_int_t)p.lost, "frames", (json_int_t)p.nframes, "hz", (json_int_t)p.hz,
		                  "vcpus", (json_int_t)p.vcpus, "seconds", span_s(&p),
		                  "program", view_json_guest(p.program ? p.program : ""), "ended", p.ended, "cut", p.cut);
	} else {
		printf("samples (taken from dom0)\n");
		/* the samples' own clock, first to last: not the run's duration */
		char span[32];
		view_format_duration(p.nsamples ? (int64_t)((p.samples[p.nsamples - 1].t_ns - p.samples[0].t_ns) / 1000) : 0,
		                     span, sizeof(span));
		printf("  taken           %zu (%llu lost) at %u Hz, %u vCPU%s; %s from the first to the last\n",
		       p.nsamples, (unsigned long long)p.lost, p.hz, p.vcpus, p.vcpus == 1 ? "" : "s", span);
		printf("  frames          %zu distinct\n", p.nframes);
		fputs("  program         ", stdout);
		safe_text_print(stdout, p.program ? p.program : "", 0);
		printf("\n  ended           %s\n", p.ended ? "yes" : p.cut ? "no: cut inside a record" : "no (still sampling, or cut)");
	}
	samples_free(&p);
	return 0;
}
