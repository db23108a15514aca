/*
 * time_profile.h - a GHC time profile (.prof) as one model, whichever way
 * GHC wrote it, and the incremental parser that fills it:
 *
 *  - text, as GHC 9.0 writes it with -p, -P (ticks and bytes columns) and
 *    -pa/-Pa (wide columns), and the older layout of GHC 7.10/8.0 (HaLVM's
 *    era: no SRC column);
 *  - the JSON of -pj, which GHC 9.0 does not always write as valid JSON
 *    (a '"' in a name is not escaped, TABs are raw): strings end at a quote
 *    that the JSON grammar can continue from.
 *
 * The model is the call tree (one node per cost-centre stack, in GHC's
 * order, parents first) over a table of cost centres, with entries,
 * individual and inherited time and allocation (percentages, and ticks and
 * bytes where the profile has them), and the header.  Bytes arrive in any
 * pieces and are not kept: memory is the tree.  Everything is hostile; a
 * malformed line stops the parse with a message naming it.
 *
 * No SQLite, no Xen.
 */
#ifndef PROFSVC_TIME_PROFILE_H
#define PROFSVC_TIME_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/id_index.h"
#include "parse_util.h"

#define TP_MAX_LINE (1u << 20)
#define TP_MAX_DEPTH 100000u
#define TP_NONE UINT32_MAX

struct tp_cc {
	char *name, *module, *src; /* src "" when the profile has none */
	int is_caf;
};

struct tp_node {
	uint32_t cc;        /* index into ccs */
	uint32_t parent;    /* index into nodes, or TP_NONE for a root */
	uint32_t depth;
	int64_t no;         /* GHC's "no." (text) or cost-centre id (JSON) */
	uint64_t entries;
	double time, alloc;           /* individual, percent of the total */
	double inh_time, inh_alloc;   /* inherited (this node and below), percent */
	uint64_t ticks, bytes;        /* individual; when has_ticks */
	uint64_t inh_ticks, inh_bytes;
};

enum tp_format { TP_UNKNOWN, TP_TEXT, TP_JSON };

struct time_profile {
	enum tp_format format;
	char *title;             /* "Sat Nov 21 07:40 2026 Time and Allocation ..." */
	char *command;           /* "leak +RTS -p -hc -RTS" */
	double total_secs;
	uint64_t total_ticks, total_alloc;
	double tick_us;
	int has_src, has_ticks;  /* the columns the profile carries */
	struct tp_cc *ccs;
	size_t nccs;
	struct tp_node *nodes;
	size_t nnodes;

	/* parser state */
	uint64_t line_no, fed;
	struct pf_lines lines;   /* text: the line being read */
	int in_tree;             /* text: past the tree's column header */
	int col_numbers;         /* text: numbers at the right of a row */
	uint32_t *stack;         /* open ancestors (text: by depth) */
	size_t nstack, stack_cap;
	size_t ccs_cap, nodes_cap;
	struct id_index cc_index; /* ccs by name, module and src (ids: index + 1) */
	void *json;              /* the JSON reader's state */
	int failed, finished;
	char err[256];
};

void tp_init(struct time_profile *p);
void tp_free(struct time_profile *p);
/* 0, or -1 with tp_error() (and every later call fails the same way). */
int tp_feed(struct time_profile *p, const void *data, size_t len);
/* The end: computes inherited ticks and bytes; fails on a profile with no
 * call tree ("a .hp given where a .prof is expected"). */
int tp_finish(struct time_profile *p);
const char *tp_error(const struct time_profile *p);

/* The nodes from node up to its root into path (node first); returns how
 * many.  path holds p->nnodes entries at most. */
size_t tp_stack(const struct time_profile *p, uint32_t node, uint32_t *path);

/* One cost centre over all its stacks, as GHC's table of top cost centres
 * counts it: individual figures summed over every node; inherited ones
 * over the outermost nodes only (a recursive call is not counted twice). */
struct tp_row {
	uint32_t cc;
	uint64_t entries, ticks, bytes, inh_ticks, inh_bytes;
	double time, alloc, inh_time, inh_alloc;
	size_t stacks;      /* nodes (call stacks) it appears in */
};

enum tp_by { TP_BY_TIME, TP_BY_ALLOC, TP_BY_ENTRIES, TP_BY_INH_TIME, TP_BY_INH_ALLOC };

/* Every cost centre (of module, if not NULL) as a row, the largest by `by`
 * first; *n rows.  NULL when out of memory (or *n == 0). */
struct tp_row *tp_rank(const struct time_profile *p, enum tp_by by, const char *module, size_t *n);

/* Internal to the readers.  The model they build (prof_model.c), called
 * by the readers (prof_text.c, prof_json.c): */
int tp_fail(struct time_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t tp_cc_get(struct time_profile *p, const char *name, const char *module, const char *src,
                   int is_caf, int64_t id);
int tp_node_add(struct time_profile *p, uint32_t cc, uint32_t parent, struct tp_node *n);
/* The readers, called by tp_feed, tp_finish and tp_free (prof_feed.c): */
int tp_text_line(struct time_profile *p, char *line, size_t len);
int tp_json_feed(struct time_profile *p, const char *data, size_t len);
int tp_json_finish(struct time_profile *p);
void tp_json_free(struct time_profile *p);

#endif
