/*
 * test_prof.c - the time-profile readers (profile/prof/time_profile.h): every
 * GHC fixture, text (-p, -P, -Pa) and JSON (-pj, including GHC 9.0's
 * unescaped quotes), parsed whole and in random pieces to the same tree;
 * the ranking starts with exactly the table of top cost centres GHC
 * itself wrote at the head of each text profile (its rows, order and
 * printed figures; -P's ticks and bytes); a table that is malformed, cut,
 * duplicated or not the tree's is set aside for the tree's figures, never
 * an error; a -p and a -pj profile of the same program give the same cost
 * centres and entries; GHC 7.10/8.0's layout without SRC; and malformed
 * or hostile input refused with the line named.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/prof/time_profile.h"
#include "testutil.h"

static uint64_t rng;

static int parse(struct time_profile *p, const void *data, size_t len, int pieces)
{
	const uint8_t *d = data;
	tp_init(p);
	for (size_t at = 0; at < len;) {
		size_t n = pieces ? 1 + tu_rand_below(&rng, tu_rand_below(&rng, 3) ? 40 : 5000) : len;
		if (n > len - at)
			n = len - at;
		if (tp_feed(p, d + at, n) != 0)
			return -1;
		at += n;
	}
	return tp_finish(p);
}

static void same_tree(const char *what, const struct time_profile *a, const struct time_profile *b)
{
	int same = a->nnodes == b->nnodes && a->nccs == b->nccs && a->total_ticks == b->total_ticks &&
	           a->total_alloc == b->total_alloc;
	for (size_t i = 0; same && i < a->nnodes; i++) {
		const struct tp_node *x = &a->nodes[i], *y = &b->nodes[i];
		same = x->cc == y->cc && x->parent == y->parent && x->entries == y->entries &&
		       x->time == y->time && x->alloc == y->alloc && x->ticks == y->ticks &&
		       x->bytes == y->bytes && x->no == y->no;
	}
	CHECK(same, "%s: a parse in pieces differs from one in one go", what);
}

/* GHC's own table of top cost centres: "name module [src] %time %alloc
 * [ticks bytes]".  The ranking by time starts with exactly its rows: the
 * same cost centres in the same order (ties as GHC ordered them), with
 * %time and %alloc as GHC printed them, and with -P its ticks and bytes,
 * which are the sums of the tree's; every other cost centre comes after
 * them.  (Summing the stacks' rounded percentages is up to 0.5 off on
 * these fixtures and departs from GHC's order at rank 6 to 13.) */
static void check_top_table(const char *what, const char *text, const struct time_profile *p)
{
	size_t n;
	struct tp_row *rows = tp_rank(p, TP_BY_TIME, NULL, &n);
	REQUIRE(rows, "rank");
	const char *at = strstr(text, "\nCOST CENTRE");
	REQUIRE(at, "%s: no table of top cost centres", what);
	const char *head_end = strchr(at + 1, '\n'), *tk = strstr(at, " ticks");
	int ticks = tk && head_end && tk < head_end;
	CHECK(p->table == TP_TABLE_USED, "%s: GHC's table not taken: %s", what, p->table_note);
	at = strchr(at + 1, '\n');
	while (at && at[1] == '\n') /* the blank line under the header */
		at++;
	size_t k = 0;
	for (const char *line = at + 1; *line && *line != '\n'; k++) {
		const char *eol = strchr(line, '\n');
		char buf[4096];
		size_t len = (size_t)(eol - line) < sizeof(buf) - 1 ? (size_t)(eol - line) : sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = eol + 1;
		char name[1024], module[1024];
		int after = 0;
		REQUIRE(sscanf(buf, "%1023s %1023s%n", name, module, &after) == 2, "%s: %s", what, buf);
		/* the numbers from the right: %time %alloc [ticks bytes], as printed */
		const char *num[4];
		int nn = 0;
		char *e = buf + strlen(buf);
		while (nn < (ticks ? 4 : 2)) {
			while (e > buf && e[-1] == ' ')
				*--e = '\0';
			while (e > buf && e[-1] != ' ')
				e--;
			num[nn++] = e;
		}
		const char *want_time = num[nn - 1], *want_alloc = num[nn - 2];
		/* SRC: what lies between the module and the numbers */
		while (e > buf + after && e[-1] == ' ')
			e--;
		*e = '\0';
		char *src = buf + after;
		while (*src == ' ')
			src++;
		if (k >= n) {
			CHECK(0, "%s: GHC's table has more rows than our ranking", what);
			break;
		}
		const struct tp_row *r = &rows[k];
		const struct tp_cc *c = &p->ccs[r->cc];
		char got_time[32], got_alloc[32];
		snprintf(got_time, sizeof(got_time), "%.1f", r->time);
		snprintf(got_alloc, sizeof(got_alloc), "%.1f", r->alloc);
		CHECK(!strcmp(c->name, name) && !strcmp(c->module, module) && !strcmp(c->src, src) &&
		      !strcmp(got_time, want_time) && !strcmp(got_alloc, want_alloc) && r->listed == k + 1,
		      "%s: rank %zu is %s %s %s %s%% %s%%, GHC's table says %s %s %s %s%% %s%%", what, k + 1,
		      c->name, c->module, c->src, got_time, got_alloc, name, module, src, want_time,
		      want_alloc);
		if (ticks) /* -P: the tree's sums are exact, and GHC's */
			CHECK(r->ticks == strtoull(num[1], NULL, 10) && r->bytes == strtoull(num[0], NULL, 10),
			      "%s: %s ticks/bytes %llu/%llu, GHC says %s/%s", what, name,
			      (unsigned long long)r->ticks, (unsigned long long)r->bytes, num[1], num[0]);
		/* a cost centre no call reached (-pa) is in no stack */
		CHECK(r->stacks || (!strcmp(want_time, "0.0") && !strcmp(want_alloc, "0.0")),
		      "%s: %s has figures and no stack", what, name);
	}
	CHECK(k >= 6 && k == p->nlisted, "%s: %zu rows of GHC's table, %zu taken", what, k, p->nlisted);
	for (size_t i = k; i < n; i++)
		CHECK(!rows[i].listed && rows[i].stacks, "%s: rank %zu: listed after the table's rows", what,
		      i + 1);
	free(rows);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "name module entries" for every cost centre with entries, sorted. */
static char *entries_signature(const struct time_profile *p)
{
	size_t n;
	struct tp_row *rows = tp_rank(p, TP_BY_TIME, NULL, &n);
	char **lines = calloc(n + 1, sizeof(*lines));
	size_t total = 1, k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tp_cc *c = &p->ccs[rows[i].cc];
		/* the profiling system's own centres count differently per run;
		 * the text profile leaves out stacks that cost nothing (not -pa) */
		if (rows[i].entries == 0 || !strcmp(c->module, "MAIN") || !strcmp(c->module, "SYSTEM") || !strcmp(c->module, "GC") ||
		    !strcmp(c->module, "IDLE") || !strcmp(c->module, "PROFILING"))
			continue;
		if (asprintf(&lines[k], "%s %s %llu\n", c->name, c->module,
		             (unsigned long long)rows[i].entries) < 0)
			abort();
		total += strlen(lines[k++]);
	}
	qsort(lines, k, sizeof(*lines), by_name);
	char *s = calloc(1, total);
	for (size_t i = 0; i < k; i++) {
		strcat(s, lines[i]);
		free(lines[i]);
	}
	free(lines);
	free(rows);
	return s;
}

static void test_fixtures(void)
{
	char **list = tu_fixture_list();
	int text = 0, json = 0;
	for (char **f = list; *f; f++) {
		size_t len = strlen(*f), n;
		if (len < 5 || strcmp(*f + len - 5, ".prof") != 0)
			continue;
		const char *base = strrchr(*f, '/') + 1;
		uint8_t *data = tu_read_file(*f, &n);
		REQUIRE(data, "read %s", *f);
		if (n == 0 || strstr(base, "-hr.prof")) { /* a killed run; a retainer log */
			struct time_profile p;
			CHECK(parse(&p, data, n, 0) == -1, "%s: refused", base);
			tp_free(&p);
			free(data);
			continue;
		}
		struct time_profile whole, pieces;
		CHECK(parse(&whole, data, n, 0) == 0, "%s: %s", base, tp_error(&whole));
		CHECK(parse(&pieces, data, n, 1) == 0, "%s in pieces: %s", base, tp_error(&pieces));
		same_tree(base, &whole, &pieces);
		CHECK(whole.nnodes > 10 && whole.total_alloc > 0 && whole.total_ticks > 0 && whole.command,
		      "%s: tree and header", base);
		if (whole.format == TP_TEXT) {
			char *z = malloc(n + 1);
			memcpy(z, data, n);
			z[n] = '\0';
			check_top_table(base, z, &whole);
			free(z);
			text++;
		} else {
			/* -pj: no table, and exact ticks and bytes: the self figures
			 * are theirs over the totals, not sums of percentages */
			size_t k;
			struct tp_row *r = tp_rank(&whole, TP_BY_TIME, NULL, &k);
			REQUIRE(r, "rank");
			CHECK(whole.table == TP_TABLE_NONE && k > 10 &&
			      r[0].time == 100.0 * (double)r[0].ticks / (double)whole.total_ticks &&
			      r[0].alloc == 100.0 * (double)r[0].bytes / (double)whole.total_alloc,
			      "%s: self figures from ticks and bytes", base);
			for (size_t i = 1; i < k; i++)
				CHECK(r[i].ticks <= r[i - 1].ticks, "%s: rank %zu by ticks", base, i + 1);
			free(r);
			json++;
		}
		tp_free(&whole);
		tp_free(&pieces);
		free(data);
	}
	tu_free_list(list);
	printf("prof: %d text and %d JSON profiles\n", text, json);
	CHECK(text >= 7 && json >= 4, "fixtures: %d text, %d JSON", text, json);
}

/* -p and -pj of one program: the same cost centres with the same entries. */
static void test_text_vs_json(void)
{
	static const char *const pairs[][2] = {
		{"leak/leak-p-hc.prof", "leak/leak-pj.prof"},
		{"phases/phases-p-hc.prof", "phases/phases-pj.prof"},
		{"exprcalc/exprcalc-p.prof", "exprcalc/exprcalc-pj.prof"},
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct time_profile a, b;
		char path[4096];
		size_t n;
		snprintf(path, sizeof(path), "%s/tests/data/ghc/%s", tu_srcdir(), pairs[i][0]);
		uint8_t *d = tu_read_file(path, &n);
		REQUIRE(d && parse(&a, d, n, 0) == 0, "%s", pairs[i][0]);
		free(d);
		snprintf(path, sizeof(path), "%s/tests/data/ghc/%s", tu_srcdir(), pairs[i][1]);
		d = tu_read_file(path, &n);
		REQUIRE(d && parse(&b, d, n, 0) == 0, "%s: %s", pairs[i][1], tp_error(&b));
		free(d);
		char *sa = entries_signature(&a), *sb = entries_signature(&b);
		CHECK(!strcmp(sa, sb), "%s vs %s: cost centres or entries differ\n%s---\n%s", pairs[i][0],
		      pairs[i][1], sa, sb);
		free(sa);
		free(sb);
		tp_free(&a);
		tp_free(&b);
	}
	/* GHC 9.0's unescaped quote and raw tab in -pj names */
	char path[4096];
	size_t n;
	snprintf(path, sizeof(path), "%s/tests/data/ghc/exprcalc/exprcalc-pj.prof", tu_srcdir());
	uint8_t *d = tu_read_file(path, &n);
	struct time_profile p;
	REQUIRE(d && parse(&p, d, n, 1) == 0, "exprcalc-pj: %s", tp_error(&p));
	int found = 0;
	for (size_t i = 0; i < p.nccs; i++)
		found |= !strcmp(p.ccs[i].name, "eval\"binary\"op(+-*/%),<strict>;\xce\xbb");
	CHECK(found, "the -pj name with unescaped quotes was not read whole");
	tp_free(&p);
	free(d);
}

static const char old_layout[] =
	"\tWed Jan 13 12:00 2016 Time and Allocation Profiling Report  (Final)\n\n"
	"\t   halvm-app +RTS -p -RTS\n\n"
	"\ttotal time  =        0.10 secs   (100 ticks @ 1000 us, 1 processor)\n"
	"\ttotal alloc =   1,234,567 bytes  (excludes profiling overheads)\n\n"
	"COST CENTRE MODULE  %time %alloc\n\nmain        Main     90.0   80.0\ngo          Main     10.0   20.0\n\n\n"
	"                                                      individual     inherited\n"
	"COST CENTRE MODULE                    no.     entries  %time %alloc   %time %alloc\n\n"
	"MAIN        MAIN                       44           0    0.0    0.0   100.0  100.0\n"
	" main       Main                       88           0   90.0   80.0   100.0  100.0\n"
	"  go        Main                       89          10   10.0   20.0    10.0   20.0\n"
	"   go       Main                       90          90    0.0    0.0     0.0    0.0\n";

static void test_old_layout(void)
{
	struct time_profile p;
	REQUIRE(parse(&p, old_layout, sizeof(old_layout) - 1, 1) == 0, "%s", tp_error(&p));
	CHECK(!p.has_src && !p.has_ticks && p.nnodes == 4 && p.total_alloc == 1234567 &&
	      p.total_ticks == 100 && p.command && !strcmp(p.command, "halvm-app +RTS -p -RTS"),
	      "GHC 7.10 layout: header and tree");
	CHECK(p.nodes[2].parent == 1 && p.nodes[3].parent == 2 && p.nodes[3].depth == 3,
	      "the tree's shape");
	CHECK(p.table == TP_TABLE_USED && p.nlisted == 2, "GHC 7.10's table without SRC: %d %s",
	      (int)p.table, p.table_note);
	size_t n;
	struct tp_row *r = tp_rank(&p, TP_BY_ENTRIES, NULL, &n);
	CHECK(r && !strcmp(p.ccs[r[0].cc].name, "go") && r[0].entries == 100 && r[0].stacks == 2 &&
	      r[0].inh_time == 10.0, "recursive go: entries summed, inherited counted once");
	free(r);
	r = tp_rank(&p, TP_BY_TIME, "MAIN", &n);
	CHECK(r && n == 1, "--module MAIN: %zu rows", n);
	free(r);
	tp_free(&p);
}

static void test_bad_input(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"", "empty"},
		{"JOB \"x\"\nDATE \"y\"\n", "line 1: not a GHC time profile (.prof): it starts with JOB"},
		{"garbage\n", "line 1: not a GHC time profile"},
		{"\tX Time and Allocation Profiling Report  (Final)\n\tcmd\n", "no call tree"},
		{"\tX Profiling Report\nCOST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n"
		 "MAIN MAIN <built-in> 1 0 0.0 0.0 100.0\n", "line 3: the cost-centre number '<built-in>'"},
		{"\tX Profiling Report\nCOST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n"
		 "MAIN MAIN <built-in> 1 -4 0.0 0.0 100.0 100.0\n", "line 3: entries"},
		{"\tX Profiling Report\nCOST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n"
		 "MAIN MAIN <built-in> 1 0 nan 0.0 100.0 100.0\n", "line 3: 'nan' is not a percentage"},
		{"\tX Profiling Report\nCOST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n"
		 "MAIN MAIN x 1 0 0.0 0.0 100.0 100.0\n   deep M x 2 0 0.0 0.0 0.0 0.0\n",
		 "line 4: the call tree's indentation jumps"},
		{"\tX Profiling Report\nCOST CENTRE MODULE no. entries %time %alloc %time %alloc\n"
		 "MAIN MAIN 1 99999999999999999999999 0.0 0.0 100.0 100.0\n", "line 3: entries"},
		{"{\"cost_centres\": [{\"id\": 1, \"label\": \"a\", \"module\": \"M\"}], \"profile\": "
		 "{\"id\": 2, \"entries\": 1, \"children\": []}}", "names cost centre 2"},
		{"{\"cost_centres\": [{\"id\": 1, \"label\": \"a\", \"module\": \"M\"},"
		 "{\"id\": 1, \"label\": \"b\", \"module\": \"M\"}]}", "cost centre id 1 twice"},
		{"{\"cost_centres\": [{\"id\": 1, \"label\": \"a\", \"module\": \"M\"}], \"profile\": "
		 "{\"id\": 1, \"children\": [", "ends early"},
		{"{\"profile\": {\"id\": 1, \"entries\": -3}}", "where a count was expected"},
		{"[1, 2]", "line 1: not a GHC time profile"},
		{"{\"a\": 1}}", "unbalanced"},
		{"{\"a\": @}", "unexpected '@'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct time_profile p;
		int rc = parse(&p, cases[i].text, strlen(cases[i].text), 0);
		CHECK(rc == -1 && strstr(tp_error(&p), cases[i].want), "case %zu: got '%s', want '%s'", i,
		      tp_error(&p), cases[i].want);
		tp_free(&p);
	}
	/* a deep -pj tree is refused, not a stack overflow */
	size_t depth = 2 * TP_MAX_DEPTH + 20, cap = depth * 40 + 200, n = 0;
	char *deep = malloc(cap);
	n += (size_t)snprintf(deep + n, cap - n, "{\"cost_centres\": [{\"id\": 1, \"label\": \"a\", "
	                                         "\"module\": \"M\"}], \"profile\": ");
	for (size_t i = 0; i < depth / 2; i++)
		n += (size_t)snprintf(deep + n, cap - n, "{\"id\": 1, \"children\": [");
	struct time_profile p;
	CHECK(parse(&p, deep, n, 0) == -1 && strstr(tp_error(&p), "deeper than"), "deep JSON: %s",
	      tp_error(&p));
	tp_free(&p);
	free(deep);
}

/* A -p profile with GHC's table given, over one tree: main 50%, b and a
 * 20% each (GHC's table orders the tie b first, by its ticks; the tree
 * would put a first, by its allocation), c in two stacks that sum to
 * 0.9% (left out: under 1%), d 0.2% of the time and 9.1% of the
 * allocation (listed for that).  GHC's table comes first, then c. */
static const char table_head[] =
	"\tX Time and Allocation Profiling Report  (Final)\n\n\t   t +RTS -p -RTS\n\n"
	"\ttotal time  =        1.00 secs   (1000 ticks @ 1000 us, 1 processor)\n"
	"\ttotal alloc = 1,000,000 bytes  (excludes profiling overheads)\n\n";
static const char table_good[] =
	"COST CENTRE MODULE SRC %time %alloc\n\n"
	"main Main m.hs:1 50.0 40.9\nb Main m.hs:2 20.0 20.0\na Main m.hs:3 20.0 30.0\n"
	"d Main <no location info> 0.2 9.1\n\n\n";
static const char table_tree[] =
	"                                  individual      inherited\n"
	"COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n\n"
	"MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n"
	" main Main m.hs:1 2 1 49.95 41.0 100.0 100.0\n"
	"  a Main m.hs:3 3 1 20.0 30.0 20.0 30.0\n"
	"  b Main m.hs:2 4 1 20.0 20.0 20.0 20.0\n"
	"  c Main m.hs:4 5 1 0.5 0.0 0.5 0.0\n"
	"  d Main <no location info> 6 1 0.2 9.0 0.6 9.0\n"
	"   c Main m.hs:4 7 1 0.4 0.0 0.4 0.0\n";

static struct time_profile *table_case(const char *table, enum tp_table want, const char *note)
{
	static struct time_profile p;
	char text[4096];
	snprintf(text, sizeof(text), "%s%s%s", table_head, table, table_tree);
	REQUIRE(parse(&p, text, strlen(text), 1) == 0, "%s", tp_error(&p));
	CHECK(p.table == want && strstr(p.table_note, note) && p.nnodes == 7,
	      "table case '%.60s': state %d, note '%s'", table, (int)p.table, p.table_note);
	return &p;
}

/* The names of the ranking by `by`, "a b c", into out. */
static const char *order(struct time_profile *p, enum tp_by by, char *out, size_t cap)
{
	size_t n, len = 0;
	struct tp_row *r = tp_rank(p, by, NULL, &n);
	REQUIRE(r, "rank");
	out[0] = '\0';
	for (size_t i = 0; i < n && len + 40 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", p->ccs[r[i].cc].name);
	free(r);
	return out;
}

static void test_table(void)
{
	char got[512];
	struct time_profile *p = table_case(table_good, TP_TABLE_USED, "");
	CHECK(!strcmp(order(p, TP_BY_TIME, got, sizeof(got)), "main b a d c MAIN"), "by time: %s", got);
	CHECK(!strcmp(order(p, TP_BY_ALLOC, got, sizeof(got)), "main a b d c MAIN"), "by alloc: %s", got);
	size_t n;
	struct tp_row *r = tp_rank(p, TP_BY_TIME, NULL, &n);
	CHECK(n == 6 && r[0].time == 50.0 && r[0].alloc == 40.9 && r[0].listed == 1 && r[3].alloc == 9.1 &&
	      r[4].listed == 0 && r[4].stacks == 2 && fabs(r[4].time - 0.9) < 1e-9 && p->nlisted == 4,
	      "GHC's figures for the listed, the tree's for c");
	free(r);
	r = tp_rank(p, TP_BY_INH_TIME, NULL, &n);
	CHECK(n == 6 && r[0].inh_time == 100.0 && r[1].inh_time == 100.0 && r[2].inh_time == 20.0 &&
	      fabs(r[4].inh_time - 0.9) < 1e-9, "inherited: the tree's");
	free(r);
	tp_free(p);

	/* -pa: a cost centre no call reached, listed with nothing */
	p = table_case("COST CENTRE MODULE SRC %time %alloc\n\n"
	               "main Main m.hs:1 50.0 40.9\nb Main m.hs:2 20.0 20.0\na Main m.hs:3 20.0 30.0\n"
	               "d Main <no location info> 0.2 9.1\nc Main m.hs:4 0.9 0.0\nnever Main m.hs:9 0.0 0.0\n"
	               "MAIN MAIN <built-in> 0.0 0.0\n\n",
	               TP_TABLE_USED, "");
	r = tp_rank(p, TP_BY_TIME, NULL, &n);
	CHECK(n == 7 && !strcmp(p->ccs[r[5].cc].name, "never") && r[5].stacks == 0 && r[5].listed == 6,
	      "-pa: a listed cost centre with no stack is a row");
	free(r);
	tp_free(p);

	/* set aside, the tree's figures used, no error */
	static const struct {
		const char *table, *note;
	} aside[] = {
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0\n\n", "line 10, in GHC's table"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0 nan\n\n", "is not 'name module src"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 70.0 40.9\n\n", "not what the call tree"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0 40.9\nmain Main m.hs:1 50.0 40.9\n\n",
		 "twice (line 11)"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0 40.9\nz Main z.hs 1.0 0.0\n\n",
		 "no call stack has (line 11)"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nn Main z.hs 0.0 0.0\nn Main z.hs 0.0 0.0\nmain Main m.hs:1 50.0 "
		 "40.9\nb Main m.hs:2 20.0 20.0\na Main m.hs:3 20.0 30.0\nd Main <no location info> 0.2 9.1\n\n",
		 "twice (line 11)"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0 40.9\nb Main m.hs:2 20.0 20.0\n\n",
		 "leaves out a cost centre over 1%"},
		{"COST CENTRE MODULE SRC %time %alloc\n\nmain Main m.hs:1 50.0 40.9\n"
		 "                                  individual      inherited\n", "line 11, in GHC's table"},
		{"COST CENTRE MODULE %time %alloc\n\nmain Main m.hs:1 50.0 40.9\n\n", "is not 'name module %time"},
		{"COST CENTRE MODULE SRC %time %alloc ticks bytes\n\nmain Main m.hs:1 50.0 40.9\n\n",
		 "%time %alloc ticks bytes'"},
	};
	for (size_t i = 0; i < sizeof(aside) / sizeof(aside[0]); i++) {
		p = table_case(aside[i].table, TP_TABLE_IGNORED, aside[i].note);
		CHECK(!strcmp(order(p, TP_BY_TIME, got, sizeof(got)), "main a b c d MAIN"), "case %zu: %s", i, got);
		r = tp_rank(p, TP_BY_TIME, NULL, &n);
		CHECK(n == 6 && r[0].time == 49.95 && r[0].listed == 0, "case %zu: the tree's figures", i);
		free(r);
		tp_free(p);
	}
	/* no table: the tree's; an empty one likewise */
	p = table_case("", TP_TABLE_NONE, "");
	tp_free(p);
	p = table_case("COST CENTRE MODULE SRC %time %alloc\n\n\n", TP_TABLE_NONE, "");
	tp_free(p);
	/* a profile cut inside its table: no tree, as before */
	char cut[2048];
	snprintf(cut, sizeof(cut), "%sCOST CENTRE MODULE SRC %%time %%alloc\n\nmain Main m.hs:1 50", table_head);
	struct time_profile q;
	CHECK(parse(&q, cut, strlen(cut), 1) == -1 && strstr(tp_error(&q), "no call tree"), "cut: %s",
	      tp_error(&q));
	tp_free(&q);
}

/* -P: the table's ticks and bytes must be the tree's sums exactly. */
static void test_table_ticks(void)
{
	char path[4096];
	size_t n;
	snprintf(path, sizeof(path), "%s/tests/data/ghc/wordfreq/wordfreq-P-hc.prof", tu_srcdir());
	char *d = (char *)tu_read_file(path, &n);
	REQUIRE(d, "%s", path);
	/* one tick moved from a listed cost centre's row in the table */
	char *row = strstr(d, "\ncountWords.\\ ");
	char *t = row ? strstr(row, "   792 ") : NULL;
	REQUIRE(t, "countWords row");
	memcpy(t, "   793 ", 7);
	struct time_profile p;
	CHECK(parse(&p, d, n, 0) == 0 && p.table == TP_TABLE_IGNORED &&
	      strstr(p.table_note, "not what the call tree sums to (line 11)"),
	      "a tick off: %d '%s'", (int)p.table, p.table_note);
	size_t k;
	struct tp_row *r = tp_rank(&p, TP_BY_TIME, NULL, &k);
	CHECK(r && k > 20 && r[0].ticks == 1876 && fabs(r[0].time - 100.0 * 1876 / 3204) < 1e-9,
	      "set aside: the figures from ticks");
	free(r);
	tp_free(&p);
	free(d);
}

int main(void)
{
	rng = tu_seed(0x5052);
	test_fixtures();
	test_text_vs_json();
	test_old_layout();
	test_bad_input();
	test_table();
	test_table_ticks();
	return tu_finish("test_prof");
}
