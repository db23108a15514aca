/*
 * cmd_retention.c - `profdb delete RUN...` and `profdb prune`: removing
 * runs, and giving their space back to dom0's disk.
 *
 * Safe beside a live backend: the store is opened as an ordinary writer
 * (store_open's busy timeout), each run goes in its own transaction, so
 * the backend's batches wait for one run's rows at most, never for the
 * whole command; a run still running is refused (its guest is writing
 * into it) unless --force.  What was selected is checked first, so bad
 * arguments delete nothing.  Space comes back through store_reclaim
 * (store/store_space.c): the database's free pages at once, the data
 * file's slots as soon as no reader can see them.
 *
 * May call: store/store.h, util/units.h, util/grow.h, view/view_json.h, view/view_backend.h, cli_util.h,
 *           cli_view.h (a run argument resolved), cli_json.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profsvc_paths.h"

#include "util/grow.h"
#include "util/units.h"
#include "view/view_backend.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char delete_usage[] =
	"usage: profdb delete RUN... [--force] [--json]\n"
	"  removes the runs and gives their space back; a running run only with --force:\n"
	"  the backend capturing it (its control socket in $PROFSVC_RUN_DIR, else\n"
	"  " PROFSVC_DEFAULT_RUN_DIR ") first closes its devices, so its guest sees its disks go\n";

static const char prune_usage[] =
	"usage: profdb prune [--older-than DUR] [--keep N] [--name GLOB] [--state S]\n"
	"                    [--dry-run] [--force] [--json]\n"
	"  removes the runs matching --name and --state that are not among the newest N\n"
	"  of them (--keep) and started more than DUR ago (--older-than: 90m, 12h, 30d,\n"
	"  2w); at least one of --older-than and --keep.  Running runs are left unless\n"
	"  --force (their devices closed first, as delete does).  --dry-run lists what\n"
	"  would go and deletes nothing.\n";

/* How long to wait for readers to move past a delete before leaving its
 * data-file slots to the backend (store_reclaim). */
#define RECLAIM_WAIT_MS 2000

struct runs {
	struct store_run *v;
	size_t n, cap;
};

static int push(struct runs *r, const struct store_run *run)
{
	if (GROW_FROM(r->v, r->cap, r->n + 1, 32) != 0) {
		cli_err("out of memory");
		return 1;
	}
	r->v[r->n++] = *run;
	return 0;
}

static int collect(void *ctx, const struct store_run *run)
{
	return push(ctx, run);
}

static void print_reclaim_text(const struct store_reclaim *rc)
{
	printf("space given back: %lld bytes of database, %lld bytes of data file",
	       (long long)(rc->db_pages_freed * rc->page_size),
	       (long long)(rc->slots_punched * (int64_t)STORE_CHUNK_BYTES));
	if (rc->slots_waiting)
		printf("; %lld bytes more once readers move on (the backend gives them back)",
		       (long long)(rc->slots_waiting * (int64_t)STORE_CHUNK_BYTES));
	printf("\n");
}

static json_t *reclaim_json(const struct store_reclaim *rc)
{
	return json_pack("{s:I, s:I, s:I}", "db_bytes", (json_int_t)(rc->db_pages_freed * rc->page_size),
	                 "data_bytes", (json_int_t)(rc->slots_punched * (int64_t)STORE_CHUNK_BYTES),
	                 "data_bytes_waiting", (json_int_t)(rc->slots_waiting * (int64_t)STORE_CHUNK_BYTES));
}

/* How long the backend may take to close a run's devices. */
#define END_RUN_TIMEOUT_MS 10000

/*
 * A running run is about to be deleted: the backend capturing it (its
 * control socket in $PROFSVC_RUN_DIR, else the configured run directory)
 * closes its devices through xenbus and ends it first, so that its guest
 * sees its disks go (Closing) instead of I/O errors on a disk still
 * connected.  END_CLOSED when it did; END_ELSEWHERE when no backend
 * listens there or the one there does not capture the run (nothing of
 * ours holds its devices: the delete goes on, said); END_REFUSED when a
 * backend took the request and did not do it (it turned the request away,
 * refused it, gave no answer): the run is then not deleted, since its
 * guest may still be writing through that backend.  Why in msg.
 */
enum end_run { END_CLOSED, END_ELSEWHERE, END_REFUSED };

static enum end_run backend_end_run(const char *db, int64_t run_id, char *msg, size_t msglen)
{
	char real[PATH_MAX], req[PATH_MAX + 64], *reply;
	size_t len;

	if (!realpath(db, real)) {
		snprintf(msg, msglen, "%s: %s", db, strerror(errno));
		return END_REFUSED;
	}
	snprintf(req, sizeof(req), "end-run %lld %s", (long long)run_id, real);
	struct view_err e;
	view_err_init(&e);
	int asked = view_backend_ask(req, END_RUN_TIMEOUT_MS, 511, &reply, &len, &e);
	if (asked != 0) {
		snprintf(msg, msglen, "%s", view_err_first(&e));
		return asked == VIEW_BACKEND_NONE ? END_ELSEWHERE : END_REFUSED;
	}
	reply[strcspn(reply, "\n")] = '\0';
	enum end_run rc = strncmp(reply, "closed run ", 11) == 0 ? END_CLOSED
	                  : strncmp(reply, "not here: ", 10) == 0 ? END_ELSEWHERE
	                                                          : END_REFUSED;
	if (rc != END_CLOSED)
		snprintf(msg, msglen, "the backend: %s", reply);
	free(reply);
	return rc;
}

/*
 * Deletes the selected runs, one transaction each, then reclaims; prints
 * the result ({"deleted":[run..],"skipped":[..],"dry_run":b,"reclaimed":..}).
 * skipped: runs left with a reason.  0, or 1 (reported).
 */
static int delete_runs(const char *db, const struct runs *sel, json_t *skipped, int dry_run, int json)
{
	struct store *s = NULL;
	struct store_reclaim rec = {0};
	json_t *deleted = json_array();
	int64_t now = store_now_us();
	int rc = 0, have_rec = 0;

	if (!dry_run && sel->n > 0 && cli_open_store(&s, db, STORE_WRITE) != 0) {
		json_decref(deleted);
		json_decref(skipped);
		return 1;
	}
	for (size_t i = 0; i < sel->n; i++) {
		const struct store_run *r = &sel->v[i];
		char why[768];
		/* A run a live backend captures: its devices closed first, and
		 * the run kept when that backend did not close them. */
		enum end_run ended = END_CLOSED;
		if (!dry_run && r->state == STORE_RUN_RUNNING && !r->backend_gone && strcmp(r->source, "capture") == 0)
			ended = backend_end_run(db, r->run_id, why, sizeof(why));
		if (ended == END_REFUSED) {
			cli_err("run %lld not deleted: the backend did not close its devices first (%s); try "
			        "again, or stop its guest first",
			        (long long)r->run_id, why);
			rc = 1;
			continue;
		}
		if (ended == END_ELSEWHERE)
			cli_warn("run %lld: its devices could not be closed first (%s): its guest sees I/O errors "
			         "instead", (long long)r->run_id, why);
		if (!dry_run && store_run_delete(s, r->run_id) != 0) {
			cli_err("run %lld not deleted: %s", (long long)r->run_id, store_errmsg(s));
			rc = 1;
			continue;
		}
		json_array_append_new(deleted, view_json_run(r, now));
		if (!json) {
			printf("%s run %lld (", dry_run ? "would delete" : "deleted", (long long)r->run_id);
			safe_text_print(stdout, r->name, 0);
			printf(", %s)\n", store_run_state_name(r->state));
		}
	}
	if (s) {
		if (store_reclaim(s, RECLAIM_WAIT_MS, &rec) != 0) {
			cli_err("the runs are deleted but their space was not given back: %s (the "
			        "backend gives freed data slots back by itself; run 'profdb prune' or "
			        "'profdb delete' again for the database's pages)",
			        store_errmsg(s));
			rc = 1;
		} else {
			have_rec = 1;
		}
		store_close(s);
	}
	if (!json) {
		for (size_t i = 0; i < json_array_size(skipped); i++) {
			json_t *k = json_array_get(skipped, i);
			printf("kept run %lld (%s)\n",
			       (long long)json_integer_value(json_object_get(json_object_get(k, "run"), "run_id")),
			       json_string_value(json_object_get(k, "reason")));
		}
		if (have_rec)
			print_reclaim_text(&rec);
		else if (sel->n == 0)
			printf("nothing to delete\n");
		json_decref(deleted);
		json_decref(skipped);
		return fflush(stdout) == 0 ? rc : 1;
	}
	if (cli_json_print(json_pack("{s:o, s:o, s:b, s:o}", "deleted", deleted, "skipped", skipped, "dry_run",
	                         dry_run, "reclaimed", have_rec ? reclaim_json(&rec) : json_null())) != 0)
		rc = 1;
	return rc;
}

static int force_opt(int c, const char *arg, void *ctx)
{
	(void)arg;
	if (c != 'f')
		return CLI_NOT_MINE;
	*(int *)ctx = 1;
	return 0;
}

int cmd_delete(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {delete_usage, "h", opts, -1, force_opt};
	struct runs sel = {0};
	struct store *s;
	int force = 0, json = 0, rc = cli_parse_opts(&spec, argc, argv, &force, &json);

	if (rc != CLI_GO_ON)
		return rc;
	if (optind >= argc) {
		cli_err("delete needs at least one RUN (a run id from 'profdb query runs', or 'latest')");
		fputs(delete_usage, stderr);
		return EXIT_USAGE;
	}
	rc = 1;
	/* Every run checked before any is deleted: a typo deletes nothing. */
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_need_files(s, "delete") != 0)
		goto out;
	for (int i = optind; i < argc; i++) {
		struct store_run r;
		struct view_run run;
		if (cli_resolve_host(s, argv[i], &run) != 0)
			goto out;
		int64_t id = run.id;
		if (store_get_run(s, id, &r) != 0) {
			cli_err("%s; nothing deleted", store_errmsg(s));
			goto out;
		}
		if (r.state == STORE_RUN_RUNNING && !force) {
			cli_err("run %lld is still running (its guest may be writing into it): nothing "
			        "deleted; wait until it ends, or add --force to delete it anyway",
			        (long long)id);
			goto out;
		}
		int dup = 0;
		for (size_t k = 0; k < sel.n; k++)
			dup |= sel.v[k].run_id == id;
		if (!dup && push(&sel, &r) != 0)
			goto out;
	}
	store_close(s);
	s = NULL;
	rc = delete_runs(db, &sel, json_array(), 0, json);
out:
	store_close(s);
	free(sel.v);
	return rc;
}

static int by_run_id_desc(const void *a, const void *b)
{
	const struct store_run *x = a, *y = b;
	return x->run_id < y->run_id ? 1 : x->run_id > y->run_id ? -1 : 0;
}

/* What prune is asked: the catalogue's filters (--name, --state),
 * --older-than and --keep (-1: not given), --dry-run, --force, --json. */
struct prune_opts {
	struct store_run_filter f;
	int64_t older, keep;
	int dry, force, json;
};

static int prune_opt(int c, const char *arg, void *ctx)
{
	struct prune_opts *o = ctx;
	uint64_t v;

	switch (c) {
	case 'o':
		if (units_parse_duration(arg, &o->older) != 0) {
			cli_err("--older-than: '%s' is not a duration (90m, 12h, 30d, 2w)", arg);
			return EXIT_USAGE;
		}
		return 0;
	case 'k':
		if (view_parse_u64(arg, &v) != 0 || v > INT64_MAX) {
			cli_err("--keep must be a number of runs (0 or more), not '%s'", arg);
			return EXIT_USAGE;
		}
		o->keep = (int64_t)v;
		return 0;
	case 'd':
		o->dry = 1;
		return 0;
	case 'f':
		o->force = 1;
		return 0;
	}
	return cli_filter_opt(c, arg, store_now_us(), &o->f);
}

static int parse_options(int argc, char **argv, struct prune_opts *o)
{
	static const struct option opts[] = {
		{"older-than", required_argument, NULL, 'o'}, {"keep", required_argument, NULL, 'k'},
		{"name", required_argument, NULL, 'n'},       {"state", required_argument, NULL, 's'},
		{"dry-run", no_argument, NULL, 'd'},          {"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},             {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {prune_usage, "h", opts, -1, prune_opt};
	int rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	if (optind < argc) {
		cli_err("unexpected argument '%s' (prune selects runs by its options; 'profdb delete "
		        "RUN' deletes given runs)",
		        argv[optind]);
		return EXIT_USAGE;
	}
	if (o->older < 0 && o->keep < 0) {
		cli_err("prune needs --older-than DUR or --keep N (or both): without them it would "
		        "delete every matching run");
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

/* Of all the matching runs (newest first), those prune lets go into sel;
 * running ones into skipped unless --force.  0, or 1 (reported). */
static int select_runs(const struct runs *all, const struct prune_opts *o, int64_t now, struct runs *sel,
                       json_t *skipped)
{
	for (size_t i = 0; i < all->n; i++) {
		const struct store_run *r = &all->v[i];
		if (o->keep >= 0 && (int64_t)i < o->keep)
			continue;
		if (o->older >= 0 && r->started_us > now - o->older)
			continue;
		if (r->state == STORE_RUN_RUNNING && !o->force) {
			json_array_append_new(skipped, json_pack("{s:o, s:s}", "run", view_json_run(r, now), "reason",
			                                         "running (--force deletes it)"));
			continue;
		}
		if (push(sel, r) != 0)
			return 1;
	}
	return 0;
}

int cmd_prune(const char *db, int argc, char **argv)
{
	struct prune_opts o = {.f = {.state = -1}, .older = -1, .keep = -1};
	struct runs all = {0}, sel = {0};
	struct store *s;
	int64_t now = store_now_us();
	int rc = parse_options(argc, argv, &o);

	if (rc != CLI_GO_ON)
		return rc;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	rc = 1;
	if (!o.dry && cli_need_files(s, "prune") != 0)
		goto out;
	int lrc = store_list_runs(s, &o.f, collect, &all);
	if (lrc) {
		if (lrc < 0)
			cli_err("%s", store_errmsg(s));
		goto out;
	}
	store_close(s);
	s = NULL;
	qsort(all.v, all.n, sizeof(*all.v), by_run_id_desc); /* newest first */
	json_t *skipped = json_array();
	if (select_runs(&all, &o, now, &sel, skipped) != 0) {
		json_decref(skipped);
		goto out;
	}
	rc = delete_runs(db, &sel, skipped, o.dry, o.json);
out:
	store_close(s);
	free(all.v);
	free(sel.v);
	return rc;
}
