/*
 * test_heap.c - the .hp parser and hp2ps's band rules (profile/): every
 * GHC fixture parsed in random pieces agrees with one parse of the whole;
 * the bands we would chart, and their order, agree with the key of the
 * chart the real hp2ps (Debian's ghc package) draws, under its default
 * rules and -m, -t, -d; a file cut anywhere gives the samples before the
 * cut and says what it dropped, and hp2ps agrees on that prefix; hostile
 * and malformed input is refused with a message naming the line.
 *
 * Without hp2ps the comparison is skipped (exit 77 for it alone), except
 * under CI=true, where .ci/run installs it and its absence is a failure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "testutil.h"

static uint64_t rng;

/* Parses data in random pieces; 0 or -1 (message in p). */
static int parse_pieces(struct hp_profile *p, const uint8_t *data, size_t len, struct hp_tail *t)
{
	hp_init(p);
	size_t at = 0;
	while (at < len) {
		size_t n = 1 + tu_rand_below(&rng, tu_rand_below(&rng, 4) ? 64 : 8192);
		if (n > len - at)
			n = len - at;
		if (hp_feed(p, data + at, n) != 0)
			return -1;
		at += n;
	}
	return hp_finish(p, t);
}

/* The key of hp2ps's chart, top to bottom ("\n"-separated), or NULL.
 * With -m0 hp2ps draws no key: then "N bands", counted by their fills. */
static char *hp2ps_key(const uint8_t *data, size_t len, const char *flags)
{
	char *hp = tu_path("k.hp"), *ps = tu_path("k.ps"), cmd[8192];
	REQUIRE(tu_write_file(hp, data, len) == 0, "write %s", hp);
	unlink(ps);
	snprintf(cmd, sizeof(cmd), "cd '%s' && hp2ps %s k.hp >/dev/null 2>&1", tu_tmpdir(), flags);
	int st = system(cmd);
	size_t n;
	uint8_t *out = st == 0 ? tu_read_file(ps, &n) : NULL;
	free(hp);
	free(ps);
	if (!out)
		return NULL;
	/* A key entry: "HE10 setfont\nX Y moveto\n(NAME) show", listed bottom up. */
	char **names = NULL;
	size_t nn = 0;
	char *s = (char *)out;
	out[n - 1] = '\0';
	if (strstr(flags, "-m0")) {
		for (char *at = strstr(s, "\nfill\n"); at; at = strstr(at + 1, "\nfill\n"))
			nn++;
		char *key = malloc(32);
		snprintf(key, 32, "%zu bands\n", nn);
		free(out);
		return key;
	}
	for (char *at = strstr(s, "HE10 setfont\n"); at; at = strstr(at + 1, "HE10 setfont\n")) {
		char *l2 = strchr(at + 13, '\n');
		if (!l2 || l2[1] != '(')
			continue;
		/* A PostScript string: \( \) \\ are escapes. */
		char *end = l2 + 2, *name = malloc(strlen(end) + 1), *o = name;
		while (*end && !(*end == ')' && !strncmp(end, ") show\n", 7))) {
			if (*end == '\\' && end[1])
				end++;
			*o++ = *end++;
		}
		*o = '\0';
		names = realloc(names, (nn + 1) * sizeof(*names));
		names[nn++] = name;
	}
	size_t total = 1;
	for (size_t i = 0; i < nn; i++)
		total += strlen(names[i]) + 1;
	char *key = calloc(1, total);
	for (size_t i = nn; i-- > 0;) {
		strcat(key, names[i]);
		strcat(key, "\n");
		free(names[i]);
	}
	free(names);
	free(out);
	return key;
}

/* Our key, top to bottom, in the same form. */
static char *our_key(const struct hp_profile *p, const struct hp_chart_opts *o)
{
	struct hp_chart c;
	REQUIRE(hp_chart_make(p, o, &c) == 0, "chart");
	if (o->max_bands == 0) {
		char *key = malloc(32);
		snprintf(key, 32, "%zu bands\n", c.nbands);
		hp_chart_free(&c);
		return key;
	}
	size_t total = 1;
	for (size_t i = 0; i < c.nbands; i++)
		total += strlen(c.bands[i].name) + 1;
	char *key = calloc(1, total);
	for (size_t i = c.nbands; i-- > 0;) {
		strcat(key, c.bands[i].name);
		strcat(key, "\n");
	}
	hp_chart_free(&c);
	return key;
}

static int have_hp2ps;

static void compare(const char *what, const struct hp_profile *p, const uint8_t *data, size_t len,
                    const char *flags, const struct hp_chart_opts *o)
{
	if (!have_hp2ps)
		return;
	char *theirs = hp2ps_key(data, len, flags);
	char *ours = our_key(p, o);
	CHECK(theirs && strcmp(theirs, ours) == 0, "%s (hp2ps %s): key differs\nhp2ps:\n%sours:\n%s",
	      what, flags, theirs ? theirs : "(hp2ps failed)\n", ours);
	free(theirs);
	free(ours);
}

/* Names hp2ps can read: it splits on white space. */
static int hp2ps_readable(const struct hp_profile *p)
{
	for (size_t i = 0; i < p->nbands; i++)
		if (strpbrk(p->bands[i].name, " \t\v\f\r"))
			return 0;
	return 1;
}

static struct hp_point first_point(const struct hp_band *b)
{
	struct hp_cursor c = HP_CURSOR_INIT;
	struct hp_point pt = {0, 0};
	hp_next(b, &c, &pt);
	return pt;
}

static void same_model(const char *what, const struct hp_profile *a, const struct hp_profile *b)
{
	int same = a->nsamples == b->nsamples && a->nbands == b->nbands && a->nmarks == b->nmarks;
	for (size_t i = 0; same && i < a->nsamples; i++)
		same = a->times[i] == b->times[i];
	for (size_t i = 0; same && i < a->nbands; i++) {
		const struct hp_band *x = &a->bands[i], *y = &b->bands[i];
		same = x->npts == y->npts && x->total == y->total && strcmp(x->name, y->name) == 0;
		struct hp_cursor cx = HP_CURSOR_INIT, cy = HP_CURSOR_INIT;
		struct hp_point px, py;
		while (same && hp_next(x, &cx, &px))
			same = hp_next(y, &cy, &py) && px.sample == py.sample && px.bytes == py.bytes;
	}
	CHECK(same, "%s: a parse in pieces differs from a parse in one go", what);
}

static void test_fixtures(void)
{
	char **list = tu_fixture_list();
	int files = 0, compared = 0;
	for (char **f = list; *f; f++) {
		size_t len = strlen(*f);
		if (len < 3 || strcmp(*f + len - 3, ".hp") != 0)
			continue;
		const char *base = strrchr(*f, '/') + 1;
		size_t n;
		uint8_t *data = tu_read_file(*f, &n);
		REQUIRE(data, "read %s", *f);
		struct hp_profile whole, pieces;
		struct hp_tail t;
		hp_init(&whole);
		CHECK(hp_feed(&whole, data, n) == 0 && hp_finish(&whole, &t) == 0, "%s: %s", base,
		      hp_error(&whole));
		CHECK(t.dropped_bytes == 0 && !t.partial_sample, "%s: a whole file drops nothing", base);
		CHECK(whole.nsamples >= 2 && whole.job && whole.date && whole.sample_unit &&
		      whole.value_unit, "%s: header and samples", base);
		CHECK(parse_pieces(&pieces, data, n, NULL) == 0, "%s: in pieces: %s", base,
		      hp_error(&pieces));
		same_model(base, &whole, &pieces);
		hp_free(&pieces);
		files++;

		if (hp2ps_readable(&whole)) {
			struct hp_chart_opts o;
			hp_chart_defaults(&o);
			compare(base, &whole, data, n, "", &o);
			o.max_bands = 5;
			compare(base, &whole, data, n, "-m5", &o);
			o.max_bands = 0;
			compare(base, &whole, data, n, "-m0", &o);
			hp_chart_defaults(&o);
			o.trace_pct = 0;
			compare(base, &whole, data, n, "-t0", &o);
			o.trace_pct = 5;
			compare(base, &whole, data, n, "-t5", &o);
			hp_chart_defaults(&o);
			o.sort = HP_SORT_STDDEV;
			compare(base, &whole, data, n, "-d", &o);
			compared++;

			/* Cut at random places: ours on the cut file, hp2ps on
			 * the file cut after its last complete sample. */
			for (int k = 0; k < 4; k++) {
				size_t cut = (size_t)tu_rand_below(&rng, n);
				struct hp_profile part;
				struct hp_tail pt;
				CHECK(parse_pieces(&part, data, cut, &pt) == 0, "%s cut at %zu: %s", base,
				      cut, hp_error(&part));
				/* The end of the last END_SAMPLE line; an unterminated
				 * one at the cut counts once it has a digit. */
				size_t good = 0;
				for (size_t i = 0; i + 11 <= cut; i++)
					if ((i == 0 || data[i - 1] == '\n') &&
					    !memcmp(data + i, "END_SAMPLE ", 11)) {
						const uint8_t *nl = memchr(data + i, '\n', cut - i);
						if (nl)
							good = (size_t)(nl - data) + 1;
						else if (i + 11 < cut)
							good = cut;
					}
				CHECK(pt.dropped_bytes == (good ? cut - good : pt.dropped_bytes),
				      "%s cut at %zu: dropped %llu, expected %zu", base, cut,
				      (unsigned long long)pt.dropped_bytes, cut - good);
				if (part.nsamples >= 2) {
					char what[300];
					snprintf(what, sizeof(what), "%s cut at %zu", base, cut);
					hp_chart_defaults(&o);
					compare(what, &part, data, good, "", &o);
				}
				hp_free(&part);
			}
		}
		hp_free(&whole);
		free(data);
	}
	tu_free_list(list);
	printf("heap: %d fixtures parsed, %d compared with hp2ps\n", files, compared);
	CHECK(files >= 20, "only %d .hp fixtures", files);
	CHECK(!have_hp2ps || compared >= 15, "only %d fixtures compared with hp2ps", compared);
}

/* Ties: equal totals fall as hp2ps's hash table and selection sort put them. */
static void test_ties(void)
{
	char buf[16384];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "JOB \"ties\"\nDATE \"d\"\n"
	                                                "SAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\n");
	for (int s = 0; s < 3; s++) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "BEGIN_SAMPLE %d.0\n", s);
		for (int b = 0; b < 30; b++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "band_%c%d\t%d\n", 'a' + b % 7, b,
			                      100 * (1 + b % 4));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "END_SAMPLE %d.0\n", s);
	}
	struct hp_profile p;
	hp_init(&p);
	REQUIRE(hp_feed(&p, buf, n) == 0 && hp_finish(&p, NULL) == 0, "%s", hp_error(&p));
	struct hp_chart_opts o;
	hp_chart_defaults(&o);
	compare("ties", &p, (const uint8_t *)buf, n, "", &o);
	o.max_bands = 0;
	compare("ties", &p, (const uint8_t *)buf, n, "-m0", &o);
	o.sort = HP_SORT_STDDEV;
	o.max_bands = 20;
	compare("ties", &p, (const uint8_t *)buf, n, "-d", &o);
	struct hp_chart c;
	hp_chart_defaults(&o);
	REQUIRE(hp_chart_make(&p, &o, &c) == 0, "chart");
	CHECK(c.nbands == 20 && c.merged_other == 11 && !strcmp(c.bands[0].name, "OTHER"),
	      "30 bands: 19 and OTHER (%zu bands, %zu merged)", c.nbands, c.merged_other);
	double sum = 0;
	for (size_t i = 0; i < c.nbands; i++)
		sum += c.bands[i].values[1];
	CHECK(sum == 7300 && c.ymax == 7300, "every byte is in a band: %g of 7300, ymax %g", sum,
	      c.ymax);
	hp_chart_free(&c);
	hp_free(&p);
}

/* Hostile names and values; every malformed line named. */
static void test_bad_input(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"\tTue Nov 21 2026 Time and Allocation Profiling Report  (Final)\n", "not a GHC heap profile"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\na\t-5\nEND_SAMPLE 0\n", "line 3: negative"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\na\t99999999999999999999\nEND_SAMPLE 0\n", "line 3: band value"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\na\t1.5\nEND_SAMPLE 0\n", "line 3: an integer must"},
		{"JOB \"x\"\nBEGIN_SAMPLE 2\nEND_SAMPLE 2\nBEGIN_SAMPLE 1\n", "line 4: samples out of"},
		{"JOB \"x\"\nBEGIN_SAMPLE -1\n", "line 2: BEGIN_SAMPLE needs"},
		{"JOB \"x\"\nBEGIN_SAMPLE nan\n", "line 2: BEGIN_SAMPLE needs"},
		{"JOB \"x\"\nBEGIN_SAMPLE 1e999\n", "line 2: BEGIN_SAMPLE needs"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\nBEGIN_SAMPLE 1\n", "line 3: BEGIN_SAMPLE inside"},
		{"JOB \"x\"\nEND_SAMPLE 0\n", "line 2: END_SAMPLE without"},
		{"JOB \"x\"\na\t5\n", "line 2: a band line outside"},
		{"JOB \"x\nDATE \"y\"\n", "line 1: JOB's string has no closing quote"},
		{"JOB x\n", "line 1: a quoted string"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\n\t5\nEND_SAMPLE 0\n", "line 3: a band with an empty name"},
		{"JOB \"x\"\nBEGIN_SAMPLE 0\nnovalue\nEND_SAMPLE 0\n", "line 3: a band line needs"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hp_profile p;
		hp_init(&p);
		int rc = hp_feed(&p, cases[i].text, strlen(cases[i].text));
		if (rc == 0)
			rc = hp_finish(&p, NULL);
		CHECK(rc == -1 && strstr(hp_error(&p), cases[i].want), "case %zu: got '%s', want '%s'", i,
		      hp_error(&p), cases[i].want);
		hp_free(&p);
	}

	/* Names with markup, quotes, controls, invalid UTF-8, spaces and tabs
	 * come through as they are (escaping is the renderers' job). */
	static const char hostile[] =
		"JOB \"a \"\"quoted\"\" job\"\nDATE \"d\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\n"
		"BEGIN_SAMPLE 0.5\n<script>alert(1)</script>\t10\nname with\ttab\t20\n"
		"\x1b]0;pwned\x07\t30\n\xff\xfe{x}\t40\n(,) a b\t50\nEND_SAMPLE 0.5\n";
	struct hp_profile p;
	hp_init(&p);
	CHECK(hp_feed(&p, hostile, sizeof(hostile) - 1) == 0 && hp_finish(&p, NULL) == 0, "%s",
	      hp_error(&p));
	CHECK(p.job && !strcmp(p.job, "a \"quoted\" job"), "JOB with doubled quotes: %s", p.job);
	CHECK(p.nbands == 5 && !strcmp(p.bands[1].name, "name with\ttab") &&
	      !strcmp(p.bands[4].name, "(,) a b") && p.bands[4].total == 50,
	      "names split at the last tab");
	hp_free(&p);

	/* A line longer than the limit is refused, without holding it all. */
	hp_init(&p);
	char *big = malloc(HP_MAX_LINE + 100);
	memset(big, 'a', HP_MAX_LINE + 100);
	CHECK(hp_feed(&p, "JOB \"x\"\nBEGIN_SAMPLE 0\n", 23) == 0 &&
	      hp_feed(&p, big, HP_MAX_LINE + 100) == -1 && strstr(hp_error(&p), "longer than"),
	      "long line: %s", hp_error(&p));
	free(big);
	hp_free(&p);

	/* The same name twice in one sample is summed, as hp2ps does. */
	static const char twice[] = "JOB \"x\"\nBEGIN_SAMPLE 0\na\t5\na\t7\nEND_SAMPLE 0\n";
	hp_init(&p);
	CHECK(hp_feed(&p, twice, sizeof(twice) - 1) == 0 && p.nbands == 1 && p.bands[0].npts == 1 &&
	      first_point(&p.bands[0]).bytes == 12, "a name twice in a sample");
	hp_free(&p);
}

int main(void)
{
	rng = tu_seed(0x4850);
	have_hp2ps = system("command -v hp2ps >/dev/null 2>&1") == 0;
	if (!have_hp2ps) {
		const char *ci = getenv("CI");
		fprintf(stderr, "hp2ps not found (Debian package ghc): the comparison is %s\n",
		        ci && *ci ? "required under CI" : "skipped");
		if (ci && *ci)
			tu_failures++;
	}
	test_fixtures();
	test_ties();
	test_bad_input();
	return tu_finish("test_heap");
}
