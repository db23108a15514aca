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
 * A text profile also opens with GHC's own table of top cost centres
 * ("COST CENTRE MODULE SRC %time %alloc [ticks bytes]"): each one's self
 * figures summed by GHC from exact ticks and words, then rounded once,
 * where the tree's figures are rounded per stack (a cost centre over
 * 28,057 stacks summed to 2.7 points off).  It is checked against the
 * tree at the end (prof_table.c) and its figures are then the ranking's
 * (tp_rank); a table that is malformed or disagrees with the tree is set
 * aside, never an error: the tree wins (see p->table).
 *
 * No SQLite, no Xen.
 *
 * May call: util/id_index, profile/common/parse_util.
 */
#ifndef PROFSVC_TIME_PROFILE_H
#define PROFSVC_TIME_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/id_index.h"
#include "profile/common/parse_util.h"

#define TP_MAX_LINE (1u << 20)
#define TP_MAX_DEPTH 100000u
#define TP_NONE UINT32_MAX

struct tp_cc {
	char *name, *module, *src; /* src "" when the profile has none */
	int is_caf;
	/* 1 + its row in GHC's table of top cost centres when the profile's
	 * table lists it and was taken (p->table == TP_TABLE_USED), with the
	 * self %time and %alloc GHC printed there; else 0. */
	uint32_t listed;
	double listed_time, listed_alloc;
};

/* A row of GHC's table as read, until tp_finish checks it (prof_table.c). */
struct tp_table_row {
	char *name, *module, *src;
	double time, alloc;
	uint64_t ticks, bytes;   /* when the table has those columns */
	uint64_t line_no;
};

/* GHC's table of top cost centres: none (JSON, or a text profile without
 * one), taken, or set aside (malformed, or not the tree's: table_note
 * says where and why). */
enum tp_table { TP_TABLE_NONE, TP_TABLE_USED, TP_TABLE_IGNORED };

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
	enum tp_table table;     /* GHC's table of top cost centres */
	size_t nlisted;          /* the cost centres it lists (TP_TABLE_USED) */
	char table_note[200];    /* TP_TABLE_IGNORED: why (no guest bytes in it) */

	/* parser state */
	uint64_t line_no, fed;
	struct pf_lines lines;   /* text: the line being read */
	int in_tree;             /* text: past the tree's column header */
	int col_numbers;         /* text: numbers at the right of a row */
	int table_at;            /* text: 0 before GHC's table, 1 its header read, 2 the
	                          * blank line under it, 3 in its rows, 4 past it */
	int table_numbers, table_src; /* text: its columns (2 or 4 numbers; SRC) */
	struct tp_table_row *trows; /* text: its rows, until tp_finish */
	size_t ntrows, trows_cap;
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
 * over the outermost nodes only (a recursive call is not counted twice).
 * The self %time and %alloc: GHC's table's where it lists the cost centre
 * (listed), else from the ticks and bytes where the profile has them
 * (-P, -pj: exact), else the sum of the stacks' rounded percentages. */
struct tp_row {
	uint32_t cc;
	uint64_t entries, ticks, bytes, inh_ticks, inh_bytes;
	double time, alloc, inh_time, inh_alloc;
	size_t stacks;      /* nodes (call stacks) it appears in (0: a cost
	                     * centre GHC's table lists that no call reached) */
	uint32_t listed;    /* 1 + its row in GHC's table, or 0 */
};

enum tp_by { TP_BY_TIME, TP_BY_ALLOC, TP_BY_ENTRIES, TP_BY_INH_TIME, TP_BY_INH_ALLOC };

/* Every cost centre (of module, if not NULL) as a row, the largest by `by`
 * first; *n rows.  By time or alloc, the cost centres GHC's table lists
 * come first, as GHC orders them (the table is by ticks; equal figures
 * keep its order), then the rest: GHC leaves out only those under 1% of
 * the time and of the allocation, and theirs are the less exact figures.
 * NULL when out of memory (or *n == 0). */
struct tp_row *tp_rank(const struct time_profile *p, enum tp_by by, const char *module, size_t *n);

/* Internal to the readers.  The model they build (prof_model.c), called
 * by the readers (prof_text.c, prof_json.c): */
int tp_fail(struct time_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t tp_cc_get(struct time_profile *p, const char *name, const char *module, const char *src,
                   int is_caf, int64_t id);
/* The cost centre of that name, module and src, or TP_NONE. */
uint32_t tp_cc_find(const struct time_profile *p, const char *name, const char *module, const char *src);
int tp_node_add(struct time_profile *p, uint32_t cc, uint32_t parent, struct tp_node *n);
/* The readers, called by tp_feed, tp_finish and tp_free (prof_feed.c): */
int tp_text_line(struct time_profile *p, char *line, size_t len);
int tp_json_feed(struct time_profile *p, const char *data, size_t len);
int tp_json_finish(struct time_profile *p);
void tp_json_free(struct time_profile *p);
/* GHC's table (prof_table.c): a row kept (prof_text.c), set aside with
 * the reason (no guest bytes), checked against the tree and taken or set
 * aside (tp_finish), its rows freed (tp_finish, tp_free).  0, or -1 when
 * out of memory. */
int tp_table_add(struct time_profile *p, const char *name, const char *module, const char *src,
                 const struct tp_table_row *figures);
void tp_table_set_aside(struct time_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tp_table_finish(struct time_profile *p);
void tp_table_free_rows(struct time_profile *p);

#endif
