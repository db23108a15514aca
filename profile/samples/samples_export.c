/*
 * samples_export.c - the stack samples (samples.h) as the text and JSON
 * formats other tools read: folded stacks, `perf script` text and
 * speedscope JSON, on the functions and stacks of samples_group.c.
 * Names in the text formats as spelled (samples_group.c); speedscope's
 * JSON carries the exact bytes (safe_text_json_bytes).
 *
 * May call: samples_group.c (functions, names, stacks), util/safe_text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "samples_int.h"
#include "util/safe_text.h"

/* ---- folded stacks -------------------------------------------------------------- */

int samples_write_folded(FILE *f, const struct samples_profile *p)
{
	struct samples_funcs fs;
	struct samples_stacks st;
	if (samples_funcs_build(&fs, p) != 0)
		return -1;
	if (samples_stacks_count(&st, p, &fs) != 0)
		return samples_funcs_free(&fs), -1;
	/* in the order each stack was first sampled; root first on the line */
	for (size_t i = 0; i < st.n; i++) {
		const struct samples_stack *s = &st.s[i];
		for (uint32_t k = s->depth; k-- > 0;) {
			samples_put_label(f, &p->frames[fs.first[st.ids[s->at + k]]], ";");
			fputc(k ? ';' : ' ', f);
		}
		fprintf(f, "%llu\n", (unsigned long long)s->count);
	}
	samples_stacks_free(&st);
	samples_funcs_free(&fs);
	return ferror(f) ? -1 : 0;
}

/* ---- perf script ------------------------------------------------------------------ */

/* The object a frame is in, as perf names it: no white space in it. */
static void put_dso(FILE *f, const struct samples_profile *p, const struct samples_frame *fr)
{
	const char *dso = fr->kind == SAMPLES_KIND_HASKELL ? p->program : fr->module;
	if (fr->mapping) {
		/* the object it lies in, by its file's name */
		const char *file = p->mappings[fr->mapping - 1].file, *slash = strrchr(file, '/');
		dso = slash && slash[1] ? slash + 1 : file;
	}
	if (fr->kind == SAMPLES_KIND_KERNEL && !dso[0])
		dso = "[kernel.kallsyms]";
	if (fr->kind == SAMPLES_KIND_ROOT || !dso || !dso[0])
		dso = "[unknown]";
	safe_text_spelled(f, dso, " ");
}

/* perf's command field: no white space, at least two bytes (the
 * readers' pattern "^(\S.+?)\s+(\d+)" needs them). */
static void put_comm(FILE *f, const char *comm)
{
	size_t n = strlen(comm);
	if (n < 2)
		fputc('[', f);
	safe_text_spelled(f, comm, " ");
	if (n < 2)
		fputc(']', f);
}

int samples_write_perf_script(FILE *f, const struct samples_profile *p, const char *comm)
{
	if (!comm)
		comm = p->program ? p->program : "";
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		put_comm(f, comm);
		fprintf(f, " %u [%03u] %llu.%06llu: %llu cpu-clock:\n", s->vcpu, s->vcpu,
		        (unsigned long long)(s->t_ns / 1000000000ull),
		        (unsigned long long)(s->t_ns % 1000000000ull / 1000),
		        (unsigned long long)s->ns);
		for (uint32_t k = 0; k < s->depth; k++) {
			const struct samples_frame *fr = &p->frames[p->pool[s->at + k]];
			/* the offset into the symbol is not known: +0x0 */
			fprintf(f, "\t%llx ", (unsigned long long)fr->addr);
			samples_put_label(f, fr, NULL);
			fputs("+0x0 (", f);
			put_dso(f, p, fr);
			fputs(")\n", f);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- speedscope ---------------------------------------------------------------------- */

static int json_frame(FILE *f, const struct samples_profile *p, const struct samples_funcs *fs, size_t i)
{
	const struct samples_frame *fr = &p->frames[fs->first[i]];
	char *name = samples_raw_label(fr);
	if (!name)
		return -1;
	fputs(i ? ",{\"name\":" : "{\"name\":", f);
	safe_text_json_bytes(f, name);
	free(name);
	const struct samples_frame *at = fs->lined[i] != SAMPLES_NO_FRAME ? &p->frames[fs->lined[i]] : fr;
	if (at->file[0]) {
		fputs(",\"file\":", f);
		safe_text_json_bytes(f, at->file);
	}
	if (fs->lined[i] != SAMPLES_NO_FRAME)
		fprintf(f, ",\"line\":%u", at->line);
	fputc('}', f);
	return 0;
}

/* Samples in vCPU order, each vCPU's in stream order. */
struct by_vcpu {
	uint32_t vcpu;
	size_t i;
};

static int by_vcpu_cmp(const void *a, const void *b)
{
	const struct by_vcpu *x = a, *y = b;
	return x->vcpu != y->vcpu ? (x->vcpu < y->vcpu ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* One vCPU's sampled profile: its samples idx[from .. to). */
static void json_profile(FILE *f, const struct samples_profile *p, const struct samples_funcs *fs,
                         const struct by_vcpu *idx, size_t from, size_t to)
{
	uint64_t sum = 0;
	for (size_t j = from; j < to; j++)
		sum += p->samples[idx[j].i].ns;
	fprintf(f, "%s{\"type\":\"sampled\",\"name\":\"vCPU %u\",\"unit\":\"nanoseconds\",\"startValue\":0,"
	        "\"endValue\":%llu,\"samples\":[",
	        from ? "," : "", p->samples[idx[from].i].vcpu, (unsigned long long)sum);
	for (size_t j = from; j < to; j++) {
		const struct samples_sample *s = &p->samples[idx[j].i];
		fputs(j > from ? ",[" : "[", f);
		for (uint32_t k = s->depth; k-- > 0;)
			fprintf(f, "%u%s", fs->of_frame[p->pool[s->at + k]], k ? "," : "");
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	for (size_t j = from; j < to; j++)
		fprintf(f, "%s%llu", j > from ? "," : "",
		        (unsigned long long)p->samples[idx[j].i].ns);
	fputs("]}", f);
}

int samples_write_speedscope(FILE *f, const struct samples_profile *p, const char *name)
{
	struct samples_funcs fs;
	struct by_vcpu *idx = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*idx));
	if (!idx || samples_funcs_build(&fs, p) != 0)
		return free(idx), -1;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"profsvc " PACKAGE_VERSION "\",\"name\":", f);
	safe_text_json_bytes(f, name ? name : p->program ? p->program : "");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	int rc = 0;
	for (size_t i = 0; i < fs.n && rc == 0; i++)
		rc = json_frame(f, p, &fs, i);
	fputs("]},\"profiles\":[", f);
	for (size_t i = 0; i < p->nsamples; i++)
		idx[i] = (struct by_vcpu){p->samples[i].vcpu, i};
	qsort(idx, p->nsamples, sizeof(*idx), by_vcpu_cmp);
	for (size_t from = 0, to; from < p->nsamples; from = to) {
		for (to = from + 1; to < p->nsamples && idx[to].vcpu == idx[from].vcpu;)
			to++;
		json_profile(f, p, &fs, idx, from, to);
	}
	fputs("]}\n", f);
	free(idx);
	samples_funcs_free(&fs);
	return rc || ferror(f) ? -1 : 0;
}
