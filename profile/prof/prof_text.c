/*
 * prof_text.c - reading GHC's text .prof, a line at a time (time_profile.h).
 *
 * The header gives the title, the command line and the totals.  Then
 * GHC's table of top cost centres, one row each ("name module [src]
 * %time %alloc [ticks bytes]", the columns its own header names), kept
 * for tp_finish to check against the tree (prof_table.c); a row that is
 * not one sets the table aside, never fails the parse.  The tree starts
 * after its column header, which says which columns follow:
 *
 *   COST CENTRE  MODULE  [SRC]  no.  entries  %time %alloc  %time %alloc  [ticks bytes]
 *
 * A row is indented one space per depth.  Name and module never hold a
 * space, SRC can ("<no location info>"), so a row (of the tree or of the
 * table) is read from both ends: name and module from the left, the
 * numbers from the right, and SRC is what lies between.
 *
 * May call: the model (prof_model.c), GHC's table (prof_table.c),
 * util/grow.h.  Called by prof_feed.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time_profile.h"
#include "util/grow.h"

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* "2,689,858,952" or "1501": a whole number; -1 if not one. */
static int parse_count(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;
	for (; s < end; s++) {
		if (*s == ',')
			continue;
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		digits++;
	}
	*out = v;
	return digits ? 0 : -1;
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

static void header_line(struct time_profile *p, char *t)
{
	uint64_t v;
	char *a, *b;
	if (!strncmp(t, "total time", 10)) {
		/* total time  =        1.50 secs   (1501 ticks @ 1000 us, 1 processor) */
		if ((a = strchr(t, '=')))
			p->total_secs = strtod(a + 1, NULL);
		if ((a = strchr(t, '(')) && (b = strstr(a, " ticks")) && parse_count(a + 1, b, &v) == 0)
			p->total_ticks = v;
		if ((a = strchr(t, '@')))
			p->tick_us = strtod(a + 1, NULL);
		if (!isfinite(p->total_secs) || p->total_secs < 0)
			p->total_secs = 0;
		if (!isfinite(p->tick_us) || p->tick_us < 0)
			p->tick_us = 0;
	} else if (!strncmp(t, "total alloc", 11)) {
		if ((a = strchr(t, '='))) {
			a = trim(a + 1);
			b = strchr(a, ' ');
			if (parse_count(a, b ? b : a + strlen(a), &v) == 0)
				p->total_alloc = v;
		}
	}
}

static int set_text(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -1;
}

#define MAX_TOKENS 16

/* A row cut in place: the name and module from the left (tok), nnum
 * numbers from the right (num), the source location between them (*src,
 * "" when there is none).  0; 1 when there is no name and module; 2 when
 * there are fewer numbers. */
static int split_row(char *s, int nnum, char *tok[2], char *num[MAX_TOKENS], char **src)
{
	int nt = 0;
	/* name, module from the left */
	while (nt < 2) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 1;
		tok[nt++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
	char *rest = s;
	/* the numbers from the right */
	char *e = rest + strlen(rest);
	for (int k = nnum - 1; k >= 0; k--) {
		while (e > rest && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = '\0';
		char *b = e;
		while (b > rest && b[-1] != ' ' && b[-1] != '\t')
			b--;
		if (b == e)
			return 2;
		num[k] = b;
		e = b;
	}
	while (e > rest && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	static char nothing[] = "";
	*src = e > rest ? trim(rest) : nothing; /* rest is num[0] when no SRC */
	return 0;
}

/* A call-tree row's fields (split_row), or the parse fails. */
static int row_fields(struct time_profile *p, char *s, char *tok[2], char *num[MAX_TOKENS],
                      char **src)
{
	int rc = split_row(s, p->col_numbers, tok, num, src);
	if (rc == 1)
		return tp_fail(p, "a call-tree row needs a name, a module and %d numbers",
		               p->col_numbers);
	if (rc)
		return tp_fail(p, "a call-tree row needs %d numbers after the name and module",
		               p->col_numbers);
	if (!p->has_src && **src)
		return tp_fail(p, "unexpected text '%.40s' between the module and the numbers", *src);
	return 0;
}

/* A row of GHC's table of top cost centres, kept for tp_finish.  One
 * that is not "name module [src] %time %alloc [ticks bytes]" sets the
 * table aside (the tree's figures are then used): 0 all the same. */
static int table_row(struct time_profile *p, char *line)
{
	char *tok[2], *num[MAX_TOKENS], *src;
	struct tp_table_row r = {0};
	int four = p->table_numbers == 4;
	if (split_row(line, p->table_numbers, tok, num, &src) != 0 || (!p->table_src && *src) ||
	    parse_pct(num[0], &r.time) != 0 || parse_pct(num[1], &r.alloc) != 0 ||
	    (four && (parse_count(num[2], num[2] + strlen(num[2]), &r.ticks) != 0 ||
	              parse_count(num[3], num[3] + strlen(num[3]), &r.bytes) != 0))) {
		tp_table_set_aside(p, "line %llu, in GHC's table of top cost centres, is not 'name "
		                      "module%s %%time %%alloc%s'",
		                   (unsigned long long)p->line_no, p->table_src ? " src" : "",
		                   four ? " ticks bytes" : "");
		return 0;
	}
	r.line_no = p->line_no;
	return tp_table_add(p, tok[0], tok[1], src, &r) != 0 ? tp_fail(p, "out of memory") : 0;
}

/* A row's numbers into its node. */
static int row_numbers(struct time_profile *p, char *const num[MAX_TOKENS], struct tp_node *n)
{
	uint64_t no;
	if (parse_count(num[0], num[0] + strlen(num[0]), &no) != 0 || no > INT64_MAX)
		return tp_fail(p, "the cost-centre number '%.40s' is not a number", num[0]);
	n->no = (int64_t)no;
	if (parse_count(num[1], num[1] + strlen(num[1]), &n->entries) != 0)
		return tp_fail(p, "entries '%.40s' is not a whole number", num[1]);
	double *pct[4] = {&n->time, &n->alloc, &n->inh_time, &n->inh_alloc};
	for (int k = 0; k < 4; k++)
		if (parse_pct(num[2 + k], pct[k]) != 0)
			return tp_fail(p, "'%.40s' is not a percentage", num[2 + k]);
	if (p->has_ticks) {
		if (parse_count(num[6], num[6] + strlen(num[6]), &n->ticks) != 0 ||
		    parse_count(num[7], num[7] + strlen(num[7]), &n->bytes) != 0)
			return tp_fail(p, "ticks and bytes must be whole numbers");
	}
	return 0;
}

static int tree_row(struct time_profile *p, char *line)
{
	size_t depth = 0;
	while (line[depth] == ' ')
		depth++;
	char *tok[2], *num[MAX_TOKENS], *src = NULL;
	struct tp_node n = {0};
	if (row_fields(p, line + depth, tok, num, &src) != 0 || row_numbers(p, num, &n) != 0)
		return -1;

	if (depth > p->nstack)
		return tp_fail(p, "the call tree's indentation jumps from depth %zu to %zu", p->nstack,
		               depth);
	if (depth >= TP_MAX_DEPTH)
		return tp_fail(p, "a call tree deeper than %u", TP_MAX_DEPTH);
	uint32_t parent = depth ? p->stack[depth - 1] : TP_NONE;
	uint32_t cc = tp_cc_get(p, tok[0], tok[1], src, !strcmp(tok[0], "CAF"), -1);
	if (cc == TP_NONE)
		return tp_fail(p, "out of memory");
	if (tp_node_add(p, cc, parent, &n) != 0)
		return -1;
	if (GROW_FROM(p->stack, p->stack_cap, depth + 1, 64) != 0)
		return tp_fail(p, "out of memory");
	p->stack[depth] = (uint32_t)(p->nnodes - 1);
	p->nstack = depth + 1;
	return 0;
}

int tp_text_line(struct time_profile *p, char *line, size_t len)
{
	if (memchr(line, '\0', len))
		return tp_fail(p, "a NUL byte");
	if (p->in_tree) {
		char *t = trim(line);
		if (!*t)
			return 0;
		return tree_row(p, line);
	}
	char *t = trim(line);
	if (!*t) {
		if (p->table_at == 1) /* the blank line under the table's header */
			p->table_at = 2;
		else if (p->table_at == 2 || p->table_at == 3) /* the end of its rows, or no rows */
			p->table_at = 4;
		return 0;
	}
	if (!p->title) {
		if (!strncmp(t, "JOB ", 4) || !strcmp(t, "JOB"))
			return tp_fail(p, "not a GHC time profile (.prof): it starts with JOB, as a heap "
			                  "profile (.hp) does");
		if (!strstr(t, "Profiling Report") && !strstr(t, "Profiling report"))
			return tp_fail(p, "not a GHC time profile (.prof): it starts with '%.24s'", t);
		return set_text(&p->title, t) ? tp_fail(p, "out of memory") : 0;
	}
	if (!strncmp(t, "COST CENTRE", 11) && strstr(t, " no.") && strstr(t, "entries")) {
		p->has_src = strstr(t, " SRC ") != NULL;
		p->has_ticks = strstr(t, " ticks") && strstr(t, " bytes");
		p->col_numbers = p->has_ticks ? 8 : 6;
		p->in_tree = 1;
		return 0;
	}
	if (p->table_at == 0 && !strncmp(t, "COST CENTRE", 11) && strstr(t, "%time") &&
	    strstr(t, "%alloc")) {
		/* GHC's table of top cost centres: its header */
		p->table_src = strstr(t, " SRC ") != NULL;
		p->table_numbers = strstr(t, " ticks") && strstr(t, " bytes") ? 4 : 2;
		p->table_at = 1;
		return 0;
	}
	if (p->table_at >= 1 && p->table_at <= 3) {
		p->table_at = 3;
		return p->table == TP_TABLE_IGNORED ? 0 : table_row(p, t);
	}
	if (!strncmp(t, "total ", 6)) {
		header_line(p, t);
		return 0;
	}
	if (!p->command && p->line_no <= 8)
		return set_text(&p->command, t) ? tp_fail(p, "out of memory") : 0;
	return 0; /* the "individual inherited" line */
}
