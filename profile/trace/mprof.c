/*
 * mprof.c - mirage-profile's trace packets: header checks, the event
 * decoder, and the CTF metadata for babeltrace2 (see mprof.h for the
 * format and where it comes from).
 *
 * May call: libc.
 */
#include "config.h"

#include <string.h>

#include "mprof.h"

const uint8_t mprof_uuid[16] = {0x05, 0x88, 0x3b, 0x8d, 0x52, 0x1a, 0x48, 0x7b,
                                0xb3, 0x97, 0x45, 0x6a, 0xb1, 0x50, 0x68, 0x0c};

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

void mprof_header_read(const uint8_t *p, struct mprof_header *h)
{
	h->magic = le32(p);
	memcpy(h->uuid, p + 4, 16);
	h->packet_bits = le32(p + 20);
	h->count = le16(p + 24);
	/* Two halves, low first: the writer avoids boxing an Int32. */
	h->content_bits = (uint32_t)le16(p + 26) | (uint32_t)le16(p + 28) << 16;
}

void mprof_header_write(uint8_t *p, const struct mprof_header *h)
{
	put32(p, h->magic);
	memcpy(p + 4, h->uuid, 16);
	put32(p + 20, h->packet_bits);
	put16(p + 24, h->count);
	put16(p + 26, (uint16_t)h->content_bits);
	put16(p + 28, (uint16_t)(h->content_bits >> 16));
}

void mprof_packet_span(size_t buf_bytes, unsigned i, size_t *off, size_t *len)
{
	size_t each = buf_bytes / MPROF_PACKETS;

	*off = each * i;
	*len = i == MPROF_PACKETS - 1 ? buf_bytes - *off : each;
}

const char *mprof_header_check(const struct mprof_header *h, size_t len)
{
	if (h->magic != MPROF_MAGIC)
		return "bad magic";
	if (memcmp(h->uuid, mprof_uuid, 16) != 0)
		return "not mirage-profile's trace uuid";
	/* The size is the packet's place in the buffer, fixed when the buffer
	 * was made: anything else is a header we cannot trust. */
	if ((uint64_t)h->packet_bits != (uint64_t)len * 8)
		return "packet size differs from the packet's place in the buffer";
	if (h->content_bits % 8 || h->content_bits < MPROF_HEADER_BYTES * 8 ||
	    h->content_bits > h->packet_bits)
		return "content size outside the packet";
	return NULL;
}

/* The fixed part of each event after its 9-byte header, and whether a
 * NUL-terminated string follows it. */
static const struct {
	const char *name;
	uint8_t fixed;
	uint8_t has_thread;
	uint8_t has_text;
} kinds[MPROF_EVENT_KINDS] = {
	[MPROF_CREATES] = {"creates", 17, 1, 0},
	[MPROF_READ] = {"read", 16, 1, 0},
	[MPROF_FULFILLS] = {"fulfills", 16, 1, 0},
	[MPROF_FAILS] = {"fails", 16, 1, 1},
	[MPROF_BECOMES] = {"becomes", 16, 1, 0},
	[MPROF_LABEL] = {"label", 8, 1, 1},
	[MPROF_INCREASE] = {"increase", 16, 1, 1},
	[MPROF_SWITCH] = {"switch", 8, 1, 0},
	[MPROF_GC] = {"gc", 8, 0, 0},
	[MPROF_SIGNAL] = {"signal", 16, 1, 0},
	[MPROF_TRY_READ] = {"try_read", 16, 1, 0},
	[MPROF_COUNTER] = {"counter", 16, 1, 1},
};

const char *mprof_event_name(unsigned id)
{
	return id < MPROF_EVENT_KINDS ? kinds[id].name : NULL;
}

static const char *const thread_types[] = {
	"Wait", "Task", "Bind", "Try", "Choose", "Pick", "Join", "Map",
	"Condition", "On_success", "On_failure", "On_termination", "On_any", "Ignore_result", "Async",
};

const char *mprof_thread_type_name(unsigned t)
{
	return t < sizeof(thread_types) / sizeof(thread_types[0]) ? thread_types[t] : NULL;
}

int mprof_cursor_init(struct mprof_cursor *c, const uint8_t *packet, size_t len, uint64_t min_ts,
                      const char **why)
{
	struct mprof_header h;

	memset(c, 0, sizeof(*c));
	if (len < MPROF_HEADER_BYTES) {
		*why = "shorter than a packet header";
		return -1;
	}
	mprof_header_read(packet, &h);
	if ((*why = mprof_header_check(&h, len)))
		return -1;
	c->p = packet;
	c->pos = MPROF_HEADER_BYTES;
	c->end = mprof_content_bytes(&h);
	c->last_ts = min_ts;
	return 0;
}

static int stop(struct mprof_cursor *c, const char *why)
{
	c->why = why;
	c->pos = c->end;
	return 0;
}

int mprof_next(struct mprof_cursor *c, struct mprof_event *e)
{
	size_t at = c->pos, left = c->end - c->pos;

	if (!c->p || left == 0)
		return 0;
	if (left < 9)
		return stop(c, "an event header runs past the content");
	const uint8_t *q = c->p + at;
	memset(e, 0, sizeof(*e));
	e->ts = le64(q);
	e->id = q[8];
	e->offset = at;
	if (e->id >= MPROF_EVENT_KINDS)
		return stop(c, "unknown event id");
	/* The writer takes each timestamp from a monotonic clock as it adds
	 * the event: an older one is a torn or stale event (the writer died
	 * mid-event, or the packet is being cleared), not the guest's data. */
	if (e->ts < c->last_ts)
		return stop(c, "timestamp older than the event before");
	/* 292 years of a guest's clock: only a scribbled timestamp is larger,
	 * and readers keep times as signed 64-bit ns (babeltrace2 refuses the
	 * trace). */
	if (e->ts > (uint64_t)INT64_MAX)
		return stop(c, "timestamp beyond any clock");
	size_t fixed = kinds[e->id].fixed;
	if (left - 9 < fixed)
		return stop(c, "an event runs past the content");
	const uint8_t *f = q + 9;
	size_t end = at + 9 + fixed;
	e->has_thread = kinds[e->id].has_thread;
	if (e->has_thread) {
		e->thread = le64(f);
		f += 8;
	}
	if (fixed - (e->has_thread ? 8u : 0u) >= 8)
		e->value = le64(f);
	if (e->id == MPROF_CREATES)
		e->thread_type = f[8];
	if (kinds[e->id].has_text) {
		const uint8_t *s = c->p + end;
		const uint8_t *nul = memchr(s, 0, c->end - end);
		if (!nul)
			return stop(c, "a string runs past the content");
		e->text = (const char *)s;
		e->text_len = (size_t)(nul - s);
		end += e->text_len + 1;
	}
	e->end = end;
	c->pos = end;
	c->last_ts = e->ts;
	return 1;
}

int mprof_summarize(const uint8_t *packet, size_t len, uint64_t min_ts,
                    struct mprof_packet_summary *out)
{
	struct mprof_cursor c;
	struct mprof_event e;
	const char *why;

	memset(out, 0, sizeof(*out));
	if (mprof_cursor_init(&c, packet, len, min_ts, &why) != 0) {
		out->why = why;
		return -1;
	}
	out->sound_bytes = MPROF_HEADER_BYTES;
	while (mprof_next(&c, &e)) {
		if (out->events++ == 0)
			out->first_ts = e.ts;
		out->last_ts = e.ts;
		out->sound_bytes = e.end;
	}
	out->why = c.why;
	return 0;
}

/*
 * mirage-profile's own metadata, changed only where babeltrace2 needs it:
 *   - `major = 1; minor = 8;` (the CTF version; mirage-profile writes 0.1,
 *     which babeltrace2 refuses);
 *   - a clock class, `monotonic` in ns, that the event timestamp is mapped
 *     to (so that readers show times; the bytes are the same uint64);
 *   - an `env` block naming the guest and the run.
 * Every type, field and event is the same, in the same order.
 */
static const char metadata_text[] =
	"/* CTF 1.8 */\n"
	"/* mirage-profile's trace metadata (commit cf0aa525), as CTF 1.8 with a clock */\n"
	"typealias integer { size = 8; align = 8; signed = false; base = 10; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; base = hex; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; base = hex; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; base = hex; } := uint64_t;\n"
	"typealias integer { size = 64; align = 8; signed = true; base = 10; } := int64_t;\n"
	"\n"
	"trace {\n"
	"\tmajor = 1;\n"
	"\tminor = 8;\n"
	"\tuuid = \"" MPROF_UUID_TEXT "\";\n"
	"\tbyte_order = le;\n"
	"\tpacket.header := struct {\n"
	"\t\tuint32_t magic;\n"
	"\t\tuint8_t  uuid[16];\n"
	"\t};\n"
	"};\n"
	"\n"
	"clock {\n"
	"\tname = monotonic;\n"
	"\tdescription = \"the guest's monotonic clock\";\n"
	"\tfreq = 1000000000;\n"
	"\tabsolute = false;\n"
	"};\n"
	"\n"
	"typealias integer { size = 64; align = 8; signed = false; base = 10;"
	" map = clock.monotonic.value; } := uint64_clock_t;\n"
	"\n"
	"enum thread_type : uint8_t {\n"
	"\tWait = 0,\n\tTask = 1,\n\tBind = 2,\n\tTry = 3,\n\tChoose = 4,\n\tPick = 5,\n\tJoin = 6,\n"
	"\tMap = 7,\n\tCondition = 8,\n\tOn_success = 9,\n\tOn_failure = 10,\n\tOn_termination = 11,\n"
	"\tOn_any = 12,\n\tIgnore_result = 13,\n\tAsync = 14,\n"
	"};\n"
	"\n"
	"struct event_header {\n"
	"\tuint64_clock_t timestamp;\n"
	"\tenum : uint8_t {\n"
	"\t\tcreates = 0,\n\t\tread = 1,\n\t\tfulfills = 2,\n\t\tfails = 3,\n\t\tbecomes = 4,\n"
	"\t\tlabel = 5,\n\t\tincrease = 6,\n\t\tswitch = 7,\n\t\tgc = 8,\n\t\tsignal = 9,\n"
	"\t\ttry_read = 10,\n\t\tcounter = 11,\n"
	"\t} id;\n"
	"} align (8);\n"
	"\n"
	"struct thread_context {\n"
	"\tuint64_t thread;\n"
	"} align (8);\n"
	"\n"
	"stream {\n"
	"\tpacket.context := struct {\n"
	"\t\tuint32_t packet_size;\n"
	"\t\tuint16_t stream_packet_count;\n"
	"\t\tuint32_t content_size;\n"
	"\t};\n"
	"\tevent.header := struct event_header;\n"
	"};\n"
	"\n"
	"event {\n\tname = creates;\n\tid = 0;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t child;\n\t\tenum thread_type thread_type;\n\t};\n};\n\n"
	"event {\n\tname = read;\n\tid = 1;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t source;\n\t};\n};\n\n"
	"event {\n\tname = fulfills;\n\tid = 2;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t resolvee;\n\t};\n};\n\n"
	"event {\n\tname = fails;\n\tid = 3;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t resolvee;\n\t\tstring exn;\n\t};\n};\n\n"
	"event {\n\tname = becomes;\n\tid = 4;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t sleeper;\n\t};\n};\n\n"
	"event {\n\tname = label;\n\tid = 5;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tstring label;\n\t};\n};\n\n"
	"event {\n\tname = increase;\n\tid = 6;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tint64_t amount;\n\t\tstring counter;\n\t};\n};\n\n"
	"event {\n\tname = switch;\n\tid = 7;\n\tcontext := struct thread_context;\n};\n\n"
	"event {\n\tname = gc;\n\tid = 8;\n"
	"\tfields := struct {\n\t\tuint64_t duration_ns;\n\t};\n};\n\n"
	"event {\n\tname = signal;\n\tid = 9;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t source;\n\t};\n};\n\n"
	"event {\n\tname = try_read;\n\tid = 10;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tuint64_t source;\n\t};\n};\n\n"
	"event {\n\tname = counter;\n\tid = 11;\n\tcontext := struct thread_context;\n"
	"\tfields := struct {\n\t\tint64_t value;\n\t\tstring counter;\n\t};\n};\n";

void mprof_write_metadata(FILE *f, const char *env_name, long long run_id)
{
	fputs(metadata_text, f);
	/* A CTF string literal from a guest's name: only characters that
	 * need no escape in any reader's grammar pass; the rest are '_'. */
	fputs("\nenv {\n\tdomain = \"unikernel\";\n\tguest = \"", f);
	for (const char *s = env_name ? env_name : ""; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		            ch == '-' || ch == '_' || ch == '.' || ch == ' ' || ch == ':';
		fputc(plain ? ch : '_', f);
	}
	fprintf(f, "\";\n\trun = %lld;\n\ttracer_name = \"mirage-profile\";\n};\n", run_id);
}
