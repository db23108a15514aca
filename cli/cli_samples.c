/*
 * cli_samples.c - a run's stack samples exported (cli_samples.h): the
 * samples are read once, in one snapshot, and each output rendered from
 * them into its own file; and shown as samples (top --samples: how they
 * were taken, their functions' self and total, a sandwich).
 *
 * May call: profile/samples/samples.h, store/store.h (show's summary, in the
 * caller's read: view_samples_feed_device reads it), view/ through
 * cli_view.h, cli_util.h, cli_json.h, jansson.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "profile/samples/samples.h"
#include "store/store.h"
#include "view/view_json.h"
#include "cli_json.h"
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

/* ---- top --samples: the samples as samples ---------------------------------------- */

/* A module as the table shows it: a file's name without its directory
 * (perf report's "Shared Object"), a Haskell module whole. */
static const char *module_cell(const char *m)
{
	const char *slash = strrchr(m, '/');
	return slash && slash[1] ? slash + 1 : m;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The header: how the run was sampled, and what the shares are of. */
static void print_sampling(const struct view_sampled *s, const struct view_sample_sel *sel)
{
	const struct view_sampling *h = &s->how;
	char span[32], all[32];
	view_format_duration((int64_t)(h->span_ns / 1000), span, sizeof(span));
	view_format_duration((int64_t)(h->total_ns / 1000), all, sizeof(all));
	printf("  sampled at %u Hz", h->hz_asked);
	if (h->hz_kept != h->hz_asked)
		printf(" (lowered to %u Hz by the sampler's budget)", h->hz_kept);
	printf(", %llu samples (%llu lost), %u vCPU%s, over %s; %u sampler%s\n", (unsigned long long)h->samples,
	       (unsigned long long)h->lost, h->vcpus, h->vcpus == 1 ? "" : "s", span, h->segments,
	       h->segments == 1 ? "" : "s");
	if (h->cpu_time)
		printf("  shares by CPU time: a sample weighs its vCPU's CPU time since its last one (%s in all)\n", all);
	else if (h->some_cpu_time)
		printf("  shares by CPU time where the sampler told it, else 1/rate a sample (%s in all)\n", all);
	else
		printf("  shares by samples: each weighs 1/rate (%s in all)\n", all);
	const struct view_focus *f = sel->focus;
	if (view_focus_any(f)) {
		fputs("  kept by", stdout);
		for (size_t i = 0; i < f->nfocus; i++) {
			fputs(" --focus '", stdout);
			safe_text_print(stdout, f->focus_src[i], 0);
			fputc('\'', stdout);
		}
		for (size_t i = 0; i < f->nignore; i++) {
			fputs(" --ignore '", stdout);
			safe_text_print(stdout, f->ignore_src[i], 0);
			fputc('\'', stdout);
		}
		printf(": %llu of %llu samples, %.1f%% of the time (the shares are of all of it)\n",
		       (unsigned long long)s->kept_n, (unsigned long long)s->scope_n, share(s->kept_ns, s->scope_ns));
	}
}

static void print_row(const struct view_sampled *s, const struct view_fn_row *r)
{
	const struct view_fn *f = &s->fns[r->fn];
	fputs("  ", stdout);
	safe_text_print(stdout, f->name, 32);
	fputc(' ', stdout);
	safe_text_print(stdout, module_cell(f->module), 20);
	printf(" %9llu %9llu %6.1f %6.1f  ", (unsigned long long)r->self_n, (unsigned long long)r->total_n,
	       share(r->self_ns, s->scope_ns), share(r->total_ns, s->scope_ns));
	safe_text_print(stdout, f->src, 0);
	fputc('\n', stdout);
}

/* A caller or callee: its samples with the call, their share of all the
 * time and of the function's. */
static void print_edge(const struct view_sampled *s, const struct view_fn_row *r, const char *none, uint64_t of)
{
	const struct view_fn *f = r->fn == VIEW_FN_NONE ? NULL : &s->fns[r->fn];
	fputs("    ", stdout);
	safe_text_print(stdout, f ? f->name : none, 30);
	fputc(' ', stdout);
	safe_text_print(stdout, f ? module_cell(f->module) : "", 20);
	printf(" %9llu %6.1f %6.1f  ", (unsigned long long)r->total_n, share(r->total_ns, s->scope_ns),
	       share(r->total_ns, of));
	safe_text_print(stdout, f ? f->src : "", 0);
	fputc('\n', stdout);
}

static void print_sandwich(const struct view_sampled *s, const struct view_sandwich *w, const char *name)
{
	fputs("\n  sandwich of ", stdout);
	safe_text_print(stdout, name, 0);
	printf(": self %llu samples %.1f%%, total %llu samples %.1f%%\n", (unsigned long long)w->me.self_n,
	       share(w->me.self_ns, s->scope_ns), (unsigned long long)w->me.total_n, share(w->me.total_ns, s->scope_ns));
	printf("  %-32s %-20s %9s %6s %6s\n", "CALLERS (the function right above)", "MODULE", "samples", "%all",
	       "%func");
	for (size_t i = 0; i < w->ncallers; i++)
		print_edge(s, &w->callers[i], "(root)", w->me.total_ns);
	printf("  %-32s %-20s %9s %6s %6s\n", "CALLEES (the function right below)", "MODULE", "samples", "%all",
	       "%func");
	for (size_t i = 0; i < w->ncallees; i++)
		print_edge(s, &w->callees[i], "(self)", w->me.total_ns);
	puts("  (a sample counts once for each caller and callee; calls of the function by itself are left out)");
}

static void print_top(const struct view_sampled *s, const struct view_sample_sel *sel,
                      const struct cli_sampled_opts *o, const struct view_profile_read *rd)
{
	char caption[400];
	view_profile_caption(&rd->run, caption, sizeof(caption));
	safe_text_print(stdout, caption, 0);
	fputc('\n', stdout);
	print_sampling(s, sel);
	printf("\n  %-32s %-20s %9s %9s %6s %6s  %s\n", "FUNCTION", "MODULE", "self", "total", "self%", "total%",
	       "SOURCE");
	size_t shown = 0;
	for (size_t i = 0; i < s->nrows && (!o->limit || shown < o->limit); i++) {
		const struct view_fn *f = &s->fns[s->rows[i].fn];
		if (o->module && strcmp(f->module, o->module) && strcmp(module_cell(f->module), o->module))
			continue;
		print_row(s, &s->rows[i]);
		shown++;
	}
	printf("\n  self, total: samples with the function as the leaf, and anywhere on the stack (once each);\n"
	       "  self%%, total%%: their share of the time of the %llu samples\n", (unsigned long long)s->scope_n);
}

static int by_total(const void *a, const void *b)
{
	const struct view_fn_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

int cli_samples_top(struct view *v, const struct view_run *run, const struct cli_sampled_opts *o)
{
	struct samples_profile p;
	struct view_profile_read rd;
	struct view_err e;
	struct view_sampled s = {0};
	struct view_sandwich w = {0};
	struct view_sample_sel sel = {0, 0, -1, o->focus};
	uint8_t *mask = NULL;
	int rc = 1;

	cli_view_err(&e);
	if (view_read_samples(v, run, &p, &rd, &e) != 0)
		goto out;
	if (p.nsamples == 0) {
		cli_err("run %lld has no stack samples yet", (long long)run->id);
		goto out;
	}
	if (view_sampled_make(&s, &p, &sel) != 0 || !(mask = calloc(s.nfns ? s.nfns : 1, 1)))
		goto oom;
	if (o->by_total)
		qsort(s.rows, s.nrows, sizeof(*s.rows), by_total);
	if (o->sandwich && view_sampled_find(&s, o->sandwich, mask) == 0) {
		cli_err("run %lld's samples have no function '%s'", (long long)run->id, o->sandwich);
		rc = EXIT_USAGE;
		goto out;
	}
	if (o->sandwich && view_sandwich_make(&s, mask, &w) != 0)
		goto oom;
	if (o->json) {
		json_t *j = view_sampled_json(&s, &sel, (size_t)o->limit, o->sandwich ? &w : NULL);
		if (j)
			json_object_set_new(j, "run", view_json_run(&rd.run, store_now_us()));
		rc = cli_json_print(j);
		goto out;
	}
	print_top(&s, &sel, o, &rd);
	if (o->sandwich)
		print_sandwich(&s, &w, o->sandwich);
	rc = fflush(stdout) != 0;
	if (rc)
		cli_err("standard output: %s", strerror(errno));
	goto out;
oom:
	cli_err("out of memory reading run %lld's samples", (long long)run->id);
out:
	free(mask);
	view_sandwich_free(&w);
	view_sampled_free(&s);
	samples_free(&p);
	return rc;
}
