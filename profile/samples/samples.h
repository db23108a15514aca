/*
 * samples.h - stack samples of a guest, taken from dom0 (profile-backend's
 * sampler), as a byte stream and as a model, and what they become: folded
 * stacks, `perf script` text, pprof's profile.proto (gzipped), speedscope
 * JSON, and a time profile (time_profile.h) so that top, flame, diff and
 * the report show them as they show a .prof.
 *
 *   samples_stream.c  the stream: records encoded (the sampler) and read
 *                     incrementally (the views; a fuzz target)
 *   samples_group.c   what every export starts from (samples_int.h): frames
 *                     grouped into functions, their names, stacks counted
 *   samples_export.c  folded stacks, perf script text, speedscope JSON
 *   samples_pprof.c   pprof's profile.proto, gzipped
 *   samples_tree.c    the time profile
 *
 * No SQLite, no Xen.
 *
 * ## The stream (the bytes of a run's device "samples", role 'samples')
 * Little-endian.  Records back to back, each an 8-byte head
 *     u16 type, u16 0, u32 length of the payload (<= SAMPLES_MAX_RECORD)
 * then the payload.  A record's first byte is never 0 (types are
 * 1..255): a zero byte where a record would start is padding, zeros up
 * to the next SAMPLES_SECTOR boundary, after which the stream goes on (the
 * writer appends whole sectors and rewrites the last; a later sampler of
 * the same run starts at the next sector).  A stream cut inside a record (a crash) ends at the last whole
 * record; the reader says the stream was cut.  Strings are u16 length +
 * bytes (any bytes: the guest's names are hostile; no NUL inside).
 *
 *  BEGIN  (1)  a sampler starts: u32 format (1), u32 hz, u64 start_unix_ns,
 *              u32 vcpus (0: not known yet, at most SAMPLES_MAX_VCPUS),
 *              str program.  Frame ids start again from 1.
 *  FRAME  (2)  u32 id (the previous id + 1), u8 kind (enum samples_kind),
 *              u8 0, u16 mapping (0: none; else a MAPPING's id in this
 *              segment), u64 addr, u32 line (0: none), str name,
 *              str module, str file.  addr is the sampled address (a
 *              return address for a caller), a frame one address; an
 *              older writer wrote the symbol's address and mapping 0.
 *  SAMPLE (3)  u64 t_ns (since BEGIN's start), u32 vcpu, u32 weight (1),
 *              u16 depth, u16 stop (walk.h's enum walk_stop),
 *              u32 frame ids[depth], the leaf first
 *  LOST   (4)  u64 t_ns, u32 count, u32 reason (enum samples_lost)
 *  RATE   (5)  u64 t_ns, u32 hz: the rate from here on (the budget lowered it)
 *  END    (6)  u64 t_ns, u32 reason (enum samples_end)
 *  MAPPING (8) u32 id (the previous id + 1, from 1 in each segment), u32 0,
 *              u64 start, u64 limit (past its end), u64 offset (the file
 *              offset mapped at start), str file (the path the guest
 *              mapped, or [kernel.kallsyms]), str build_id (hex, "" when
 *              none): an object the frames' addresses lie in, so that an
 *              address can be named again later from the object's file.
 *  TIME   (7)  u64 ns: the time the next SAMPLE stands for: its vCPU's CPU
 *              time since that vCPU's last sample (as perf's cpu-clock
 *              counts: a vCPU the host did not run for is not charged for
 *              standing still), or for an [idle] one the wall time since
 *              then.  A SAMPLE without one stands for weight x 1e9 / hz
 *              ns (a sampler that could not tell, an older one).
 * An unknown type is skipped by its length (newer writers still read:
 * an older reader takes every sample for weight x 1e9 / hz).
 *
 * What the reader refuses (the stream stops there, samples_error names
 * the record's offset and what is wrong; what came before is kept): a
 * length over SAMPLES_MAX_RECORD; a known record whose payload is not
 * exactly its fields; a record other than BEGIN before the first BEGIN;
 * a format other than 1; 0 Hz (BEGIN, RATE); a FRAME id other than the
 * next, a kind outside samples_kind, a NUL inside a string (refused, not
 * replaced: the writer takes C strings, so a NUL is damage); a SAMPLE of
 * depth 0 or over SAMPLES_MAX_DEPTH, of weight 0, of a vCPU not below its
 * BEGIN's vcpus, or naming a frame id not defined in its segment.  The
 * u8 and u16 fields written 0 are not checked (but a FRAME's mapping
 * must be 0 or a MAPPING of its segment); a MAPPING id other than the
 * next, a limit not above its start, a NUL in its strings.  A frame is
 * kept once over all segments, known by kind, name, module, file, line,
 * address and mapping; a mapping by all its fields.
 */
#ifndef PROFSVC_SAMPLES_H
#define PROFSVC_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SAMPLES_FORMAT 1u
#define SAMPLES_MAX_RECORD 65536u
#define SAMPLES_MAX_DEPTH 1024u
#define SAMPLES_SECTOR 512u
#define SAMPLES_MAX_VCPUS 4096u
#define SAMPLES_MAX_MAPPINGS 4096u /* distinct over a stream; a segment's ids are u16 */

enum samples_rec {
	SAMPLES_REC_BEGIN = 1,
	SAMPLES_REC_FRAME = 2,
	SAMPLES_REC_SAMPLE = 3,
	SAMPLES_REC_LOST = 4,
	SAMPLES_REC_RATE = 5,
	SAMPLES_REC_END = 6,
	SAMPLES_REC_TIME = 7,
	SAMPLES_REC_MAPPING = 8,
};

enum samples_kind {
	SAMPLES_KIND_C = 0,       /* a C function (or an address with no symbol) */
	SAMPLES_KIND_HASKELL = 1, /* Haskell code, name decoded, module set */
	SAMPLES_KIND_ROOT = 2,    /* a made-up root: [GC], [idle], [unknown] */
	SAMPLES_KIND_KERNEL = 3,  /* a PV Linux guest's kernel */
};

enum samples_lost { SAMPLES_LOST_BUDGET = 1, SAMPLES_LOST_PAUSE = 2, SAMPLES_LOST_STORE = 3 };
enum samples_end { SAMPLES_END_DOMAIN = 1, SAMPLES_END_STOPPED = 2, SAMPLES_END_TIME = 3 };

/* ---- writing (the sampler) ---------------------------------------------- */

struct samples_buf {
	uint8_t *data;
	size_t len, cap;
};
void samples_buf_free(struct samples_buf *b);
/* Each appends one record; 0, or -1 when out of memory or a field is too
 * long (a string past 65535 bytes is cut, not refused, at a UTF-8
 * character; a FRAME's three strings are cut, the longest first, so that
 * the record fits SAMPLES_MAX_RECORD).  samples_put_sample refuses what
 * the reader would (depth 0 or over SAMPLES_MAX_DEPTH, weight 0, stop
 * over 65535).  A NULL string is written "". */
int samples_put_begin(struct samples_buf *b, uint32_t hz, uint64_t start_unix_ns, uint32_t vcpus,
                      const char *program);
struct samples_frame {
	enum samples_kind kind;
	uint64_t addr;
	uint32_t line;
	char *name, *module, *file; /* never NULL in a model ("" when none) */
	uint32_t mapping;           /* writing: the segment's MAPPING id; in a model:
	                               the index in mappings + 1; 0: none */
};
int samples_put_frame(struct samples_buf *b, uint32_t id, const struct samples_frame *f);
struct samples_mapping {
	uint64_t start, limit, offset;
	char *file, *build_id;      /* never NULL in a model */
};
int samples_put_mapping(struct samples_buf *b, uint32_t id, const struct samples_mapping *m);
int samples_put_sample(struct samples_buf *b, uint64_t t_ns, uint32_t vcpu, uint32_t weight,
                       const uint32_t *ids_leaf_first, uint32_t depth, uint32_t stop);
int samples_put_lost(struct samples_buf *b, uint64_t t_ns, uint32_t count, uint32_t reason);
int samples_put_rate(struct samples_buf *b, uint64_t t_ns, uint32_t hz);
int samples_put_end(struct samples_buf *b, uint64_t t_ns, uint32_t reason);
int samples_put_time(struct samples_buf *b, uint64_t ns);

/* ---- reading ------------------------------------------------------------- */

struct samples_sample {
	uint64_t t_ns;        /* since the first BEGIN's start */
	uint32_t vcpu, weight;
	uint32_t depth, stop;
	uint32_t hz;          /* the rate it was taken at: its BEGIN's or the last RATE's */
	uint64_t ns;          /* the time it stands for (its TIME's, else weight x 1e9 / hz) */
	int cpu_time;         /* ns is its vCPU's CPU time (a TIME came with it) */
	size_t at;            /* frames: pool[at .. at + depth), leaf first */
};

struct samples_profile {
	uint32_t hz;               /* the first BEGIN's */
	uint64_t start_unix_ns;
	uint32_t vcpus;
	char *program;
	struct samples_frame *frames;  /* distinct frames over every segment */
	size_t nframes;
	struct samples_mapping *mappings; /* distinct mappings over every segment */
	size_t nmappings;
	struct samples_sample *samples;
	size_t nsamples;
	uint32_t *pool;                /* frame indexes (into frames) */
	size_t npool;
	uint64_t lost;                 /* samples the sampler could not take */
	uint32_t segments;             /* BEGIN records seen */
	int ended;                     /* an END record was read */
	int cut;                       /* the stream stopped inside a record */
	uint64_t fed;
	/* reader state */
	void *priv;
	int failed;
	char err[256];
};

void samples_init(struct samples_profile *p);
void samples_free(struct samples_profile *p);
/* Bytes in any pieces; 0, or -1 with samples_error() (a malformed record:
 * a sample naming a frame never defined, a record too long, ...).  Memory
 * is bounded by the model, not by what records claim. */
int samples_feed(struct samples_profile *p, const void *data, size_t len);
/* The end of the bytes: sets cut when they stopped inside a record. */
int samples_finish(struct samples_profile *p);
const char *samples_error(const struct samples_profile *p);

/* ---- what they become (samples_export.c, samples_pprof.c, samples_tree.c) -- */

/* Names in every export: frames are grouped into functions by (kind,
 * name, module), a frame with no name being its own function, named by
 * its address ("0x401000"); a function is "Module.name" (Haskell) or its
 * name.  Names show as spelled: in folded, perf script and pprof text a
 * backslash stays one backslash and only controls, bidi controls and
 * bytes that are not UTF-8 are shown \xNN / \uNNNN (safe_text_spelled:
 * terminals that show these files obey nothing); speedscope's JSON
 * carries the exact bytes (safe_text_json_bytes: a byte that is not
 * UTF-8 is the lone surrogate \udcNN).
 *
 * "root;...;leaf COUNT" lines, a line a distinct stack of functions in
 * the order first sampled, COUNT the samples' weights; ';' is \x3b and
 * a newline \x0a as in flame.h's folded output (the same form). */
int samples_write_folded(FILE *f, const struct samples_profile *p);
/* `perf script` text as `perf record -g` gives it: a sample is
 *     COMM VCPU [VCPU] SEC.USEC: PERIOD cpu-clock:
 * (the vCPU as the thread; the time since the first BEGIN; the period in
 * nanoseconds, the time it stands for: its CPU time, else its weight
 * times 1e9 / its rate), then a line a frame,
 * leaf first, "\tADDR NAME+0x0 (DSO)" (ADDR the sampled address; the
 * offset into the symbol is not known; DSO: the file name of the object
 * it lies in, else a Haskell frame's program, a C frame's module,
 * [unknown] or [kernel.kallsyms]; no white space in it), then a blank line.  COMM
 * is comm, or the program when NULL, white space as \x20, in brackets
 * when shorter than 2 bytes (the readers' pattern needs 2).  The shape
 * FlameGraph's stackcollapse-perf.pl and speedscope's importer read; they
 * count a sample once whatever its weight (the sampler writes 1). */
int samples_write_perf_script(FILE *f, const struct samples_profile *p, const char *comm);
/* pprof's profile.proto, gzipped: sample types samples/count and
 * cpu/nanoseconds (a sample a distinct stack of frames), period, a
 * mapping an object the frames lie in (its addresses, file offset, file
 * and build-id; a stream from before mappings has one, the program's,
 * over every address), functions and lines known (nothing for pprof to
 * symbolize), a location a frame (the sampled address, its mapping, one
 * line: function and line), a function a function (name "Module.name",
 * system_name the symbol's, filename), string_table[0] "". */
int samples_write_pprof(FILE *f, const struct samples_profile *p);
/* speedscope's file format: shared frames (a function each: name, and
 * file and line of its first frame with a line), one sampled profile per
 * vCPU that has samples ("vCPU N", in nanoseconds: samples root first,
 * weights); written as it goes, in space linear in the samples. */
int samples_write_speedscope(FILE *f, const struct samples_profile *p, const char *name);

struct time_profile;
/* The samples as a time profile: a cost centre per function (name,
 * module, "file:line" of its first known line or ""), a call-tree node
 * per stack path, a tick per sample of weight 1 (tick_us = 1e6 / hz, the
 * first BEGIN's) or, when the sampler told CPU times (TIME), a tick per
 * microsecond a sample stands for (tick_us = 1), inherited ticks
 * (tp_finish) and the time percentages.
 * 0, or -1 (tp_error says why) when out of memory or when there is no
 * sample.  tp_free() it either way. */
int samples_to_time_profile(const struct samples_profile *p, struct time_profile *out);

#endif
