#!/usr/bin/env bash
# test_demo.sh - what a newcomer meets: the demo (demo/demo.sh) run to its
# end into the scratch directory, then its store looked at as they would:
#  - what the demo left: a guest with GHC's eventlog (xvdp3; its run page
#    draws the GC timeline, its .hp downloads), the first guest booted a
#    second time (the catalogue links the two runs' comparison, so does
#    the later run's page), a MirageOS trace, stack samples;
#  - the catalogue says what each run holds: query runs' HOLDS, --json's
#    holds, trace_packets, trace_events and samples (the samples show
#    counts), the page's holds column;
#  - one duration everywhere: query runs, show, its JSON, the run page and
#    the catalogue page, on the demo's runs and on runs whose start and end
#    are set to a table of durations whose text is written here (the one
#    rule: 15ms, 12.3s, 3m20s, 1h02m, 2d03h, cut, never rounded up);
#  - top (and flame) of a run sampled from dom0, which has no .prof: its
#    samples, saying so;
#  - a run of GHC's eventlog alone with one heap sample (profdb import):
#    its page says so instead of an empty chart, and links no .hp;
#  - in headless Chromium (tests/peers/catalogue_browser.cjs): the
#    catalogue's durations and holds as the server wrote them, after its
#    script drew them again and as query runs says; two runs ticked give
#    their comparison's link, kept across a redraw, and lead to it; the
#    catalogue on a phone; the run pages drawn (screenshots in the scratch
#    directory, PROFSVC_KEEP=DIR keeps them).
# The browser part needs chromium and tests/peers' npm packages (skipped
# without them, except under CI=true).
#
# Owns only these checks; runs the demo and the built programs through
# tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_browser
# the demo samples at 499 Hz and writes a MirageOS trace: not beside the
# suites whose timing that breaks (lib.sh)
alone_among_timed

# --- the demo, to its end ----------------------------------------------------------------
DEMO="$T/demo"
if ! PROFSVC_DEMO_OUT="$DEMO" timeout $((300 * SLOW)) bash "$S/demo/demo.sh" "$B" >"$T/demo.log" 2>&1; then
	fail "the demo failed: $(tail -20 "$T/demo.log")"
	finish test_demo
	exit 1
fi
ok
grep -q '^The store (.*) and the exports are in ' "$T/demo.log" && ok || fail "the demo's last lines: $(tail -3 "$T/demo.log")"
export PROFSVC_DB="$DEMO/profiles.db"
keep_at_exit "'$T'/*.png"
"$PROFDB" query runs --json >"$T/runs.json" && ok || fail "query runs --json"
python3 "$S/tests/json_shapes.py" runs "$T/runs.json" && ok || fail "query runs --json not as docs/json.md says"
# run_of NAME [N]: the id of NAME's Nth run (1: the first, -1 the last)
run_of() {
	python3 -c 'import json, sys; r = [x["run_id"] for x in json.load(open(sys.argv[1]))["runs"] if x["name"] == sys.argv[2]]; print(r[int(sys.argv[3])] if r else "")' \
		"$T/runs.json" "$1" "${2:-0}"
}
FIRST=$(run_of phases 0) AGAIN=$(run_of phases -1) EV=$(run_of threaded) TRACE=$(run_of mirage-web) HOT=$(run_of hot-c)
[ -n "$FIRST" ] && [ -n "$AGAIN" ] && [ "$AGAIN" != "$FIRST" ] && ok || fail "the demo has not booted 'phases' twice: runs $FIRST and $AGAIN"
[ -n "$EV" ] && [ -n "$TRACE" ] && [ -n "$HOT" ] && ok || fail "the demo's runs: eventlog $EV, trace $TRACE, samples $HOT"

# --- what each run holds: --json, then the table -----------------------------------------
"$PROFDB" show "$HOT" --json >"$T/hot.json"
python3 - "$T/runs.json" "$FIRST" "$AGAIN" "$EV" "$TRACE" "$HOT" "$(sqlite3 :memory: "select json_extract(readfile('$T/hot.json'), '\$.samples.samples')")" <<'PY' && ok || fail "query runs --json: what the runs hold"
import json, sys
runs = {r["run_id"]: r for r in json.load(open(sys.argv[1]))["runs"]}
first, again, ev, trace, hot, nsamples = (int(a) for a in sys.argv[2:8])
def holds(i, want):
    assert runs[i]["holds"] == want, (i, runs[i]["holds"], want)
holds(first, ["prof", "hp"]); holds(again, ["prof", "hp"]); holds(ev, ["hp", "eventlog"])
holds(trace, ["trace"]); holds(hot, ["samples"])
t = runs[trace]
assert (t["trace_packets"], t["trace_events"]) == (50, 30000), t   # the demo's guest: 30,000 events
assert runs[hot]["samples"] == nsamples > 0 and runs[hot]["samples_bytes"] > 0, runs[hot]
assert all(runs[i]["samples"] is None and runs[i]["trace_packets"] is None for i in (first, ev)), "counts of nothing"
# holds lists exactly the kinds with a size
for r in runs.values():
    have = [k for k, f in (("prof", "prof_bytes"), ("hp", "hp_bytes"), ("eventlog", "eventlog_bytes"),
                           ("trace", "trace_bytes"), ("samples", "samples_bytes")) if r[f] is not None]
    assert r["holds"] == have, r
print("ok")
PY
# the table's HOLDS: in words, with the counts
expect 0 "" -- "$PROFDB" query runs
cp "$T/out" "$T/table.txt"
head -1 "$T/table.txt" | grep -q ' HOLDS$' && ok || fail "query runs: no HOLDS column: $(head -1 "$T/table.txt")"
holds_of() { awk -v r="$1" '$1 == r { sub(/^.*  /, ""); print }' "$T/table.txt"; }
[ "$(holds_of "$FIRST")" = ".prof, .hp" ] && [ "$(holds_of "$EV")" = ".hp, eventlog" ] &&
	[ "$(holds_of "$TRACE")" = "trace (50 packets, 30,000 events)" ] && ok ||
	fail "query runs' HOLDS: $(cat "$T/table.txt")"
holds_of "$HOT" | grep -Eq '^samples \([0-9]{1,3}(,[0-9]{3})*\)$' && ok || fail "query runs' HOLDS of a sampled run: $(holds_of "$HOT")"

# --- top of a sampled run: its samples, saying so -----------------------------------------
expect 0 "has no .prof: its stack samples are shown" -- "$PROFDB" top "$HOT" -n 3
cp "$T/out" "$T/top.txt"
"$PROFDB" top "$HOT" -n 3 --samples >"$T/top-s.txt" 2>/dev/null
same "$T/top.txt" "$T/top-s.txt"
grep -q '^  hot ' "$T/top.txt" && ok || fail "top of the sampled run: $(cat "$T/top.txt")"
expect 0 "has no .prof" -- "$PROFDB" flame "$HOT"
[ -s "$T/out" ] && ok || fail "flame of the sampled run: no stacks"
expect 1 "no .prof device" -- "$PROFDB" top "$EV"

# --- one duration everywhere: runs whose start and end are set by hand -------------------
# DELTA_US TEXT: what every view writes for a run of that duration
cat >"$T/durations" <<'EOF'
0 0ms
999 0ms
1000 1ms
59999 59ms
999999 999ms
1000000 1.0s
1050000 1.0s
1990000 1.9s
59999999 59.9s
60000000 1m00s
3599999999 59m59s
3600000000 1h00m
86399000000 23h59m
86400000000 1d00h
17298000000000 200d05h
EOF
T0=1795000000000000
while read -r us text; do
	import "dur-$us" "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.hp" # (lib.sh: through import-disk)
	id=$(sqlite3 "$PROFSVC_DB" "select max(run_id) from runs")
	sqlite3 "$PROFSVC_DB" "update runs set started_us = $T0, ended_us = $T0 + $us where run_id = $id" || fail "setting run $id's times"
	echo "$id $us $text" >>"$T/durations.ids"
done <"$T/durations"
expect 0 "" -- "$PROFDB" query runs
cp "$T/out" "$T/table.txt"
"$PROFDB" query runs --json >"$T/runs.json"
while read -r id us text; do
	got=$(awk -v r="$id" '$1 == r { print $5 }' "$T/table.txt")
	[ "$got" = "$text" ] && ok || fail "query runs: a run of $us us lasted '$got', want '$text'"
	"$PROFDB" show "$id" >"$T/show.txt" 2>&1
	grep -qx "  duration        $text" "$T/show.txt" && ok || fail "show $id: $(grep duration "$T/show.txt"), want $text"
	[ "$(python3 -c 'import json, sys; print([r["duration_us"] for r in json.load(open(sys.argv[1]))["runs"] if r["run_id"] == int(sys.argv[2])][0])' "$T/runs.json" "$id")" = "$us" ] &&
		ok || fail "query runs --json: run $id's duration_us is not $us"
done <"$T/durations.ids"

# --- serve: the pages ------------------------------------------------------------------------
"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE_PID=$!
at_exit "kill $SERVE_PID 2>/dev/null"
for _ in $(seq $((100 * SLOW))); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
[ -n "$PORT" ] && ok || { fail "serve did not start: $(cat "$T/serve.log")"; finish test_demo; exit 1; }
URL="http://127.0.0.1:$PORT"
get() { curl -s --max-time $((10 * SLOW)) -o "$T/body" -w '%{http_code}' "$URL$1"; }
# the catalogue as the server writes it: every run's duration and holds as query runs'
[ "$(get /)" = 200 ] && ok || fail "GET /"
python3 - "$T/body" "$T/table.txt" <<'PY' && ok || fail "the catalogue page and query runs disagree"
import html, re, sys
page, table = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
cells = {}
for m in re.finditer(r'<tr data-run="(\d+)" class="(\w+)">(.*?)</tr>', page):
    dur = re.search(r'<td class="num dur">([^<]*)</td>', m.group(3)).group(1)
    holds = html.unescape(re.search(r'<td class="holds">([^<]*)</td>', m.group(3)).group(1))
    cells[m.group(1)] = (dur, holds)
bad = []
for line in table[1:]:
    f = line.split()
    holds = re.split(r"  +", line.strip())[-1]
    if cells.get(f[0]) != (f[4], holds):
        bad.append((f[0], cells.get(f[0]), (f[4], holds)))
assert len(cells) == len(table) - 1 and not bad, bad[:5]
print("ok")
PY
# ... and every run page's duration
while read -r id us text; do
	get "/runs/$id" >/dev/null
	grep -q "<td>duration</td><td>$text</td>" "$T/body" && ok || fail "/runs/$id: $(grep -o '<td>duration</td><td>[^<]*' "$T/body"), want $text"
done <"$T/durations.ids"
for id in "$FIRST" "$EV" "$TRACE" "$HOT"; do
	get "/runs/$id" >/dev/null
	want=$(awk -v r="$id" '$1 == r { print $5 }' "$T/table.txt")
	grep -q "<td>duration</td><td>$want</td>" "$T/body" && ok || fail "/runs/$id: $(grep -o '<td>duration</td><td>[^<]*' "$T/body"), query runs: $want"
done
# the second boot: its comparison from the catalogue and from its page
get / >/dev/null
grep -q "<tr data-run=\"$AGAIN\".*<a class=\"compare\" href=\"/compare?a=$FIRST&amp;b=$AGAIN\">vs $FIRST</a>" "$T/body" && ok ||
	fail "the catalogue links no comparison of runs $FIRST and $AGAIN"
grep -q 'id="compare-picked"' "$T/body" && grep -q "<input type=\"checkbox\" class=\"pick\" value=\"$EV\"" "$T/body" && ok ||
	fail "the catalogue has no boxes to tick runs to compare"
get "/runs/$AGAIN" >/dev/null
grep -q "<a href=\"/compare?a=$FIRST&amp;b=$AGAIN\">against run $FIRST (" "$T/body" && ok || fail "run $AGAIN's page offers no comparison with run $FIRST"
[ "$(get "/compare?a=$FIRST&b=$AGAIN")" = 200 ] && grep -q '<section id="compared">' "$T/body" && ok || fail "/compare?a=$FIRST&b=$AGAIN"
# the eventlog's run: the GC timeline, its .hp linked and downloadable
get "/runs/$EV" >/dev/null
grep -q 'id="timeline"' "$T/body" && grep -q "href=\"/runs/$EV/hp\"" "$T/body" && ok || fail "run $EV's page: no timeline or no .hp link"
[ "$(get "/runs/$EV/hp")" = 200 ] && cmp -s "$T/body" "$S/tests/data/eventlog/threaded.hp" && ok || fail "/runs/$EV/hp is not the guest's .hp"
# GHC's eventlog alone, with one heap sample: said, and no .hp to link
"$PROFDB" import --name churn "$S/tests/data/ghc-eventlog/churn-l-hT.eventlog" >/dev/null 2>&1 || fail "import of churn-l-hT.eventlog"
ONE=$("$PROFDB" query runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')
get "/runs/$ONE" >/dev/null
grep -q "href=\"/runs/$ONE/hp\"" "$T/body" && fail "run $ONE's page links a .hp it has not ($(get "/runs/$ONE/hp"))" || ok
grep -q 'id="heap-note" data-samples="1">The heap profile has one sample only' "$T/body" && ! grep -q 'id="heap-svg"' "$T/body" && ok ||
	fail "run $ONE's page: not said that its heap has one sample: $(grep -o 'id="heap-note".\{0,200\}' "$T/body")"
grep -q "href=\"/runs/$ONE/eventlog\"" "$T/body" && [ "$(get "/runs/$ONE/eventlog")" = 200 ] && ok || fail "run $ONE's eventlog link"

# --- in the browser ------------------------------------------------------------------------------
# what query runs shows of every finished run: [duration, holds]
"$PROFDB" query runs >"$T/table.txt"
CLI=$(python3 -c '
import json, re, sys
rows = open(sys.argv[1]).read().splitlines()[1:]
print(json.dumps({r.split()[0]: [r.split()[4], re.split(r"  +", r.strip())[-1]] for r in rows}))' "$T/table.txt")
if [ "$browser" = yes ]; then
	timeout $((120 * SLOW)) node "$S/tests/peers/catalogue_browser.cjs" "$NM" "$URL" "$T" "$CLI" "$T/ticked" "$FIRST" "$AGAIN" \
		-- "$EV" "$ONE" "$HOT" "$TRACE" >"$T/browser.out" 2>&1 &
	NODE=$!
	# once the script has ticked two runs, a new run: the catalogue draws its table again
	for _ in $(seq $((600 * SLOW))); do [ -e "$T/ticked" ] || ! kill -0 $NODE 2>/dev/null && break; sleep 0.1; done
	[ -e "$T/ticked" ] && { "$PROFDB" import --name late "$FIX/leak/leak-p-hc.hp" >/dev/null 2>&1 || fail "import of a late run"; }
	wait $NODE && ok || fail "browser: $(grep '^FAIL' "$T/browser.out" | head -20)"
	tail -1 "$T/browser.out"
	for f in catalogue-desktop catalogue-ticked catalogue-phone compare "run-$EV" "run-$ONE" "run-$HOT"; do
		[ -s "$T/$f.png" ] && ok || fail "no screenshot $f.png"
	done
	echo "test_demo: screenshots in $T (PROFSVC_KEEP=DIR keeps them)"
else
	echo "test_demo: SKIP the browser checks (chromium, node or $NM/puppeteer-core missing)"
fi
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID" 2>/dev/null
finish test_demo
