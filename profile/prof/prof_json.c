/*
 * prof_json.c - reading GHC's -pj time profile as it arrives (time_profile.h).
 *
 * A byte-at-a-time tokenizer feeds a small structural reader that knows
 * GHC's layout: the top object's totals, "cost_centres" (id, label,
 * module, src_loc, is_caf) and "profile", a tree of {id, entries, alloc,
 * ticks, children}.  Nothing is buffered but the token being read, so a
 * profile of any size costs only its tree.
 *
 * Why not a JSON library: GHC 9.0 writes a '"' inside a name unescaped
 * (`"label": "eval"binary"op"`) and TABs raw, which any strict parser
 * rejects, and speedscope with it.  Here a quote ends a string only when
 * what follows it (after white space) could follow a string in JSON: one
 * of , : } ] or the end.  A name holding `",` would still be misread;
 * GHC's names never do.
 *
 * May call: the model (prof_model.c), util/grow.h.  Called by prof_feed.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time_profile.h"
#include "util/grow.h"

enum role { R_IGNORE, R_TOP, R_CCS, R_CC, R_NODE, R_CHILDREN, R_RTS_ARGS };

struct frame {
	char kind;         /* '{' or '[' */
	enum role role;
	char key[32];      /* the current key in an object ("" after its value) */
	/* R_CC / R_NODE fields */
	int64_t id;
	int have_id, is_caf;
	char *label, *module, *src;
	uint64_t entries, alloc, ticks;
	uint32_t node;     /* R_NODE: made (when "children" starts), else TP_NONE */
	uint32_t parent;   /* R_NODE: the parent node */
};

enum lex { L_VALUE, L_STRING, L_ESCAPE, L_UNICODE, L_QUOTE, L_ATOM };

struct json_state {
	enum lex lex;
	char *tok;
	size_t tok_len, tok_cap;
	size_t held_ws;      /* L_QUOTE: white space seen after the quote */
	char ws[64];
	unsigned uni, uni_digits;
	int after_key;       /* the last string was followed by ':' */
	struct frame *st;
	size_t depth, cap;
	int done;
	/* cost-centre ids to table indexes */
	int64_t *ids;
	uint32_t *idx;
	size_t nids, ids_cap;
	char *rts;           /* "-p -hc" */
};

static struct json_state *js(struct time_profile *p)
{
	if (!p->json)
		p->json = calloc(1, sizeof(struct json_state));
	return p->json;
}

static void frame_clear(struct frame *f)
{
	free(f->label);
	free(f->module);
	free(f->src);
	f->label = f->module = f->src = NULL;
}

void tp_json_free(struct time_profile *p)
{
	struct json_state *j = p->json;
	if (!j)
		return;
	for (size_t i = 0; i < j->depth; i++)
		frame_clear(&j->st[i]);
	free(j->st);
	free(j->tok);
	free(j->ids);
	free(j->idx);
	free(j->rts);
	free(j);
	p->json = NULL;
}

static int tok_add(struct time_profile *p, struct json_state *j, char c)
{
	if (j->tok_len + 2 > j->tok_cap) {
		if (j->tok_cap >= TP_MAX_LINE)
			return tp_fail(p, "a JSON string or number longer than %u bytes", TP_MAX_LINE);
		if (GROW_FROM(j->tok, j->tok_cap, j->tok_len + 2, 64) != 0)
			return tp_fail(p, "out of memory");
	}
	j->tok[j->tok_len++] = c;
	j->tok[j->tok_len] = '\0';
	return 0;
}

/* ---- cost-centre ids ------------------------------------------------------------ */

static uint32_t id_find(struct json_state *j, int64_t id)
{
	if (!j->ids_cap)
		return TP_NONE;
	size_t at = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15ull >> 7) & (j->ids_cap - 1);
	for (; j->idx[at] != TP_NONE; at = (at + 1) & (j->ids_cap - 1))
		if (j->ids[at] == id)
			return j->idx[at];
	return TP_NONE;
}

static int id_put(struct json_state *j, int64_t id, uint32_t cc)
{
	if ((j->nids + 1) * 2 > j->ids_cap) {
		size_t cap = j->ids_cap ? j->ids_cap * 2 : 64;
		int64_t *ids = malloc(cap * sizeof(*ids));
		uint32_t *idx = malloc(cap * sizeof(*idx));
		if (!ids || !idx) {
			free(ids);
			free(idx);
			return -1;
		}
		memset(idx, 0xff, cap * sizeof(*idx));
		for (size_t i = 0; i < j->ids_cap; i++) {
			if (j->idx[i] == TP_NONE)
				continue;
			size_t at = (size_t)((uint64_t)j->ids[i] * 0x9e3779b97f4a7c15ull >> 7) & (cap - 1);
			while (idx[at] != TP_NONE)
				at = (at + 1) & (cap - 1);
			ids[at] = j->ids[i];
			idx[at] = j->idx[i];
		}
		free(j->ids);
		free(j->idx);
		j->ids = ids;
		j->idx = idx;
		j->ids_cap = cap;
	}
	size_t at = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15ull >> 7) & (j->ids_cap - 1);
	while (j->idx[at] != TP_NONE)
		at = (at + 1) & (j->ids_cap - 1);
	j->ids[at] = id;
	j->idx[at] = cc;
	j->nids++;
	return 0;
}

/* ---- structure -------------------------------------------------------------------- */

static struct frame *top(struct json_state *j)
{
	return j->depth ? &j->st[j->depth - 1] : NULL;
}

static int make_node(struct time_profile *p, struct json_state *j, struct frame *f)
{
	if (f->node != TP_NONE)
		return 0;
	if (!f->have_id)
		return tp_fail(p, "a call-tree node without an id");
	uint32_t cc = id_find(j, f->id);
	if (cc == TP_NONE)
		return tp_fail(p, "the call tree names cost centre %lld, which cost_centres lacks",
		               (long long)f->id);
	struct tp_node n = {.no = f->id, .entries = f->entries, .ticks = f->ticks, .bytes = f->alloc};
	if (f->parent != TP_NONE && p->nodes[f->parent].depth + 1 >= TP_MAX_DEPTH)
		return tp_fail(p, "a call tree deeper than %u", TP_MAX_DEPTH);
	if (tp_node_add(p, cc, f->parent, &n) != 0)
		return -1;
	f->node = (uint32_t)(p->nnodes - 1);
	return 0;
}

static int open_container(struct time_profile *p, struct json_state *j, char kind)
{
	struct frame *up = top(j);
	enum role role = R_IGNORE;
	uint32_t parent = TP_NONE;
	if (j->done)
		return tp_fail(p, "more JSON after the profile's end");
	if (!up)
		role = kind == '{' ? R_TOP : R_IGNORE;
	else if (up->role == R_TOP && kind == '[' && !strcmp(up->key, "cost_centres"))
		role = R_CCS;
	else if (up->role == R_TOP && kind == '[' && !strcmp(up->key, "rts_arguments"))
		role = R_RTS_ARGS;
	else if (up->role == R_TOP && kind == '{' && !strcmp(up->key, "profile"))
		role = R_NODE;
	else if (up->role == R_CCS && kind == '{')
		role = R_CC;
	else if (up->role == R_NODE && kind == '[' && !strcmp(up->key, "children")) {
		if (make_node(p, j, up) != 0)
			return -1;
		role = R_CHILDREN;
	} else if (up->role == R_CHILDREN && kind == '{') {
		role = R_NODE;
		parent = j->st[j->depth - 2].node;
	}
	if (!up && kind != '{')
		return tp_fail(p, "not a GHC -pj profile: it is not a JSON object");
	if (j->depth >= 2 * (size_t)TP_MAX_DEPTH + 8)
		return tp_fail(p, "JSON nested deeper than %u", 2 * TP_MAX_DEPTH + 8);
	if (GROW_FROM(j->st, j->cap, j->depth + 1, 32) != 0)
		return tp_fail(p, "out of memory");
	struct frame *f = &j->st[j->depth++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->role = role;
	f->node = TP_NONE;
	f->parent = parent;
	return 0;
}

static int close_container(struct time_profile *p, struct json_state *j, char kind)
{
	struct frame *f = top(j);
	if (!f || f->kind != (kind == '}' ? '{' : '['))
		return tp_fail(p, "unbalanced '%c' in the JSON", kind);
	int rc = 0;
	if (f->role == R_CC) {
		if (!f->have_id || !f->label || !f->module)
			rc = tp_fail(p, "a cost centre without id, label or module");
		else if (id_find(j, f->id) != TP_NONE)
			rc = tp_fail(p, "cost centre id %lld twice", (long long)f->id);
		else {
			uint32_t cc = tp_cc_get(p, f->label, f->module, f->src ? f->src : "", f->is_caf, f->id);
			if (cc == TP_NONE || id_put(j, f->id, cc) != 0)
				rc = tp_fail(p, "out of memory");
		}
	} else if (f->role == R_NODE) {
		rc = make_node(p, j, f);
	}
	frame_clear(f);
	j->depth--;
	if (j->depth == 0)
		j->done = 1;
	if (j->depth)
		top(j)->key[0] = '\0';
	return rc;
}

static int number_of(struct time_profile *p, const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s || *s == '-')
		return tp_fail(p, "'%.40s' where a count was expected", s);
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9' || v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return tp_fail(p, "'%.40s' where a count was expected", s);
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*out = v;
	return 0;
}

/* A scalar value: a string (is_string) or an atom (number, true, ...). */
static int value(struct time_profile *p, struct json_state *j, const char *v, int is_string)
{
	struct frame *f = top(j);
	if (!f)
		return tp_fail(p, "not a GHC -pj profile: it is not a JSON object");
	const char *k = f->key;
	uint64_t u;
	int rc = 0;
	char **dst = NULL;

	if (f->role == R_TOP) {
		if (!strcmp(k, "program") && is_string)
			dst = &p->command;
		else if (!strcmp(k, "end_time") && is_string)
			dst = &p->title;
		else if (!strcmp(k, "total_time") && !is_string) {
			double d = strtod(v, NULL);
			p->total_secs = isfinite(d) && d >= 0 ? d : 0;
		} else if (!strcmp(k, "total_ticks") && !is_string)
			rc = number_of(p, v, &p->total_ticks);
		else if (!strcmp(k, "tick_interval") && !is_string)
			rc = number_of(p, v, &u), p->tick_us = (double)u;
		else if (!strcmp(k, "total_alloc") && !is_string)
			rc = number_of(p, v, &p->total_alloc);
	} else if (f->role == R_RTS_ARGS && is_string) {
		size_t n = (j->rts ? strlen(j->rts) + 1 : 0) + strlen(v) + 1;
		char *r = malloc(n);
		if (!r)
			return tp_fail(p, "out of memory");
		snprintf(r, n, "%s%s%s", j->rts ? j->rts : "", j->rts ? " " : "", v);
		free(j->rts);
		j->rts = r;
	} else if (f->role == R_CC || f->role == R_NODE) {
		if (!strcmp(k, "id") && !is_string) {
			char *end;
			errno = 0;
			long long id = strtoll(v, &end, 10);
			if (*end || errno)
				return tp_fail(p, "id '%.40s' is not a whole number", v);
			f->id = id;
			f->have_id = 1;
		} else if (f->role == R_CC && is_string) {
			dst = !strcmp(k, "label") ? &f->label : !strcmp(k, "module") ? &f->module
			      : !strcmp(k, "src_loc") ? &f->src : NULL;
		} else if (f->role == R_CC && !strcmp(k, "is_caf")) {
			f->is_caf = !strcmp(v, "true");
		} else if (f->role == R_NODE && !is_string) {
			if (!strcmp(k, "entries"))
				rc = number_of(p, v, &f->entries);
			else if (!strcmp(k, "alloc"))
				rc = number_of(p, v, &f->alloc);
			else if (!strcmp(k, "ticks"))
				rc = number_of(p, v, &f->ticks);
		}
	}
	if (dst) {
		free(*dst);
		if (!(*dst = strdup(v)))
			return tp_fail(p, "out of memory");
	}
	f->key[0] = '\0';
	return rc;
}

/* A complete string token: a key if ':' followed (decided by the caller). */
static int string_done(struct time_profile *p, struct json_state *j, char next)
{
	struct frame *f = top(j);
	if (next == ':') {
		if (!f || f->kind != '{')
			return tp_fail(p, "a key outside an object");
		snprintf(f->key, sizeof(f->key), "%s", j->tok ? j->tok : "");
		j->after_key = 1;
		return 0;
	}
	return value(p, j, j->tok ? j->tok : "", 1);
}

static int atom_done(struct time_profile *p, struct json_state *j)
{
	const char *t = j->tok ? j->tok : "";
	if (strcmp(t, "true") && strcmp(t, "false") && strcmp(t, "null")) {
		char *end;
		errno = 0;
		double d = strtod(t, &end);
		if (*end || !*t || errno == ERANGE || !isfinite(d))
			return tp_fail(p, "'%.40s' is not a JSON value", t);
	}
	return value(p, j, t, 0);
}

/* A structural character or the start of a token. */
static int structural(struct time_profile *p, struct json_state *j, char c)
{
	switch (c) {
	case ' ': case '\t': case '\r': case '\n':
		return 0;
	case '{': case '[':
		return open_container(p, j, c);
	case '}': case ']':
		return close_container(p, j, c);
	case ':':
		if (!j->after_key)
			return tp_fail(p, "a ':' without a key");
		j->after_key = 0;
		return 0;
	case ',':
		return 0;
	case '"':
		j->lex = L_STRING;
		j->tok_len = 0;
		if (j->tok)
			j->tok[0] = '\0';
		return 0;
	default:
		if ((c >= '0' && c <= '9') || c == '-' || (c >= 'a' && c <= 'z')) {
			j->lex = L_ATOM;
			j->tok_len = 0;
			return tok_add(p, j, c);
		}
		return tp_fail(p, "unexpected '%c' in the JSON", c);
	}
}

static int utf8_add(struct time_profile *p, struct json_state *j, unsigned cp)
{
	if (cp == 0)
		cp = 0xfffd; /* no NUL inside a name */
	char b[4];
	int n;
	if (cp < 0x80) { b[0] = (char)cp; n = 1; }
	else if (cp < 0x800) { b[0] = (char)(0xc0 | cp >> 6); b[1] = (char)(0x80 | (cp & 0x3f)); n = 2; }
	else { b[0] = (char)(0xe0 | cp >> 12); b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	       b[2] = (char)(0x80 | (cp & 0x3f)); n = 3; }
	for (int i = 0; i < n; i++)
		if (tok_add(p, j, b[i]) != 0)
			return -1;
	return 0;
}

static int byte(struct time_profile *p, struct json_state *j, char c)
{
	switch (j->lex) {
	case L_VALUE:
		return structural(p, j, c);
	case L_STRING:
		if (c == '"') {
			j->lex = L_QUOTE;
			j->held_ws = 0;
			return 0;
		}
		if (c == '\\') {
			j->lex = L_ESCAPE;
			return 0;
		}
		if (c == '\0')
			return tp_fail(p, "a NUL byte in a string");
		return tok_add(p, j, c);
	case L_ESCAPE: {
		j->lex = L_STRING;
		const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
		const char *at = strchr(from, c);
		if (c == 'u') {
			j->lex = L_UNICODE;
			j->uni = j->uni_digits = 0;
			return 0;
		}
		if (!at || !c)
			return tp_fail(p, "a bad escape '\\%c' in a string", c ? c : '0');
		return tok_add(p, j, to[at - from]);
	}
	case L_UNICODE: {
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return tp_fail(p, "a bad \\u escape in a string");
		j->uni = j->uni * 16 + (unsigned)d;
		if (++j->uni_digits < 4)
			return 0;
		j->lex = L_STRING;
		return utf8_add(p, j, j->uni);
	}
	case L_QUOTE:
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			if (j->held_ws < sizeof(j->ws))
				j->ws[j->held_ws] = c;
			j->held_ws++;
			return 0;
		}
		if (c == ',' || c == ':' || c == '}' || c == ']') {
			j->lex = L_VALUE;
			if (string_done(p, j, c) != 0)
				return -1;
			return structural(p, j, c);
		}
		/* GHC's unescaped quote: it was part of the string. */
		if (tok_add(p, j, '"') != 0)
			return -1;
		for (size_t i = 0; i < j->held_ws; i++)
			if (tok_add(p, j, i < sizeof(j->ws) ? j->ws[i] : ' ') != 0)
				return -1;
		j->lex = L_STRING;
		return byte(p, j, c);
	case L_ATOM:
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == '-' ||
		    c == '+' || c == 'E')
			return tok_add(p, j, c);
		j->lex = L_VALUE;
		if (atom_done(p, j) != 0)
			return -1;
		return structural(p, j, c);
	}
	return 0;
}

int tp_json_feed(struct time_profile *p, const char *data, size_t len)
{
	struct json_state *j = js(p);
	if (!j)
		return tp_fail(p, "out of memory");
	for (size_t i = 0; i < len; i++) {
		p->fed++;
		if (byte(p, j, data[i]) != 0)
			return -1;
		if (data[i] == '\n')
			p->line_no++;
	}
	return 0;
}

int tp_json_finish(struct time_profile *p)
{
	struct json_state *j = js(p);
	if (!j)
		return tp_fail(p, "out of memory");
	if (j->lex == L_QUOTE) {
		j->lex = L_VALUE;
		if (string_done(p, j, '\0') != 0)
			return -1;
	}
	if (j->lex == L_ATOM) {
		j->lex = L_VALUE;
		if (atom_done(p, j) != 0)
			return -1;
	}
	if (j->lex != L_VALUE || j->depth)
		return tp_fail(p, "the JSON profile ends early (cut by a crash?)");
	if (p->command && j->rts) {
		size_t n = strlen(p->command) + strlen(j->rts) + 16;
		char *c = malloc(n);
		if (c) {
			snprintf(c, n, "%s +RTS %s -RTS", p->command, j->rts);
			free(p->command);
			p->command = c;
		}
	}
	return 0;
}
