/*
 * fuzz_mprof.c - libFuzzer target: a MirageOS trace as the backend keeps
 * it (profile/trace/mprof.c, profile/trace/trace_render.c), from bytes a guest chose.
 * Input: byte 0 picks the packet size (64 + 16 * b bytes), byte 1 the
 * sequence gaps; the rest is cut into packets, each given a sound header
 * half the time (so that events get decoded) and left as it is otherwise.
 * Every writer runs over it.  Asserted: the CTF stream written has sound
 * headers and content that walks to its end with no torn event (what
 * babeltrace2 needs), every packet kept; the JSON and Chrome documents
 * are written whole; the report's HTML section carries no markup from the
 * guest.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/trace/trace_render.h"
#include "profile/trace/trace_timeline.h"
#include "profile/trace/trace_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	size_t len = 64 + 16 * (size_t)data[0];
	uint8_t gaps = data[1];
	data += 2, size -= 2;
	size_t n = size / len;
	if (n == 0 || n > 64)
		return 0;
	uint8_t *buf = malloc(n * len);
	struct mprof_trace_packet *p = calloc(n, sizeof(*p));
	memcpy(buf, data, n * len);
	uint64_t seq = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t *pk = buf + i * len;
		if (pk[0] & 1) {
			struct mprof_header h;
			mprof_header_read(pk, &h);
			h.magic = MPROF_MAGIC;
			memcpy(h.uuid, mprof_uuid, 16);
			h.packet_bits = (uint32_t)(len * 8);
			h.content_bits = (uint32_t)((MPROF_HEADER_BYTES + h.content_bits % (len - MPROF_HEADER_BYTES + 1)) * 8);
			mprof_header_write(pk, &h);
		}
		seq += 1 + ((gaps >> (i % 8)) & 1);
		p[i] = (struct mprof_trace_packet){seq, pk, len, i == n - 1};
	}
	struct mprof_trace t = {p, n, "fuzz\"<guest>\xff", 7};
	struct mprof_stats st;
	trace_render_stats(&t, &st);
	assert(st.kept == n);

	char *doc = NULL;
	size_t doclen = 0;
	FILE *f = open_memstream(&doc, &doclen);
	assert(trace_render_ctf_stream(f, &t) == 0);
	fclose(f);
	/* What babeltrace2 would read: every packet written has a sound header
	 * and walks to its content's end. */
	uint64_t last = 0;
	assert(doclen % len == 0);
	for (size_t off = 0; off < doclen; off += len) {
		struct mprof_cursor c;
		struct mprof_event e;
		const char *why;
		assert(mprof_cursor_init(&c, (const uint8_t *)doc + off, len, last, &why) == 0);
		while (mprof_next(&c, &e)) {
			assert(e.ts >= last && e.ts <= (uint64_t)INT64_MAX);
			last = e.ts;
		}
		assert(c.why == NULL);
	}
	free(doc);

	f = open_memstream(&doc, &doclen);
	assert(trace_render_json(f, &t) == 0);
	fclose(f);
	assert(doclen > 0 && doc[doclen - 2] == '}');
	free(doc);
	f = open_memstream(&doc, &doclen);
	assert(trace_render_chrome(f, &t) == 0);
	mprof_write_metadata(f, t.name, t.run_id);
	fclose(f);
	free(doc);
	/* the report's section: no guest byte may open markup (its two
	 * script elements are ours: the timeline's model and its script) */
	f = open_memstream(&doc, &doclen);
	assert(trace_view_html(f, &t, "/api/runs/1/trace-timeline") == 0);
	fclose(f);
	const char *sc = memmem(doc, doclen, "<script", 7);
	size_t nscript = 0;
	for (; sc; sc = memmem(sc + 1, doclen - (size_t)(sc + 1 - doc), "<script", 7))
		nscript++;
	assert(!strstr(doc, "<guest>") && nscript == 2);
	free(doc);
	/* the timeline's model, a window of it, a thread's events, the tar */
	f = open_memstream(&doc, &doclen);
	assert(trace_timeline_json(f, &t, &(struct tt_window){.whole = 1}) == 0);
	assert(trace_timeline_json(f, &t, &(struct tt_window){.from = 100, .to = 1u << 30}) == 0);
	/* a counter's columns, few and over every ns there is */
	assert(trace_timeline_json(f, &t, &(struct tt_window){.from = 0, .to = UINT64_MAX, .cols = 3}) == 0);
	assert(trace_timeline_thread_json(f, &t, 1) == 0);
	fclose(f);
	assert(!memchr(doc, '<', doclen)); /* inert inside a script element */
	free(doc);
	f = open_memstream(&doc, &doclen);
	assert(trace_render_ctf_tar(f, &t, "run-1.ctf", 0) == 0);
	fclose(f);
	assert(doclen % 512 == 0);
	free(doc);
	char lost[256];
	trace_render_lost_ranges(&t, lost, sizeof(lost));
	free(p);
	free(buf);
	return 0;
}
