#!/bin/bash
# test_trace_timeline.sh - a MirageOS trace where people look at it, with
# frontend-stub --mode mirage guests on xensim (as tests/test_trace.sh):
#   - the thread timeline's model (/api/runs/N/trace-timeline) against
#     babeltrace2's event list of the same trace (tests/trace_timeline_check.py):
#     every thread, every creates and read arrow (and the other kinds), each
#     thread's start, parent, label and end, the run slices, GC pauses and
#     counters; a thread's events (?thread=); a window (?from=&to=) holds
#     only what is in it; bad arguments refused;
#   - bounded: a trace of 300,000 events gives a model and a run page of
#     bounded size, saying what it thinned;
#   - the downloads: trace.ctf.tar, extracted, read by babeltrace2 as the
#     export's directory is; trace.chrome.json is the Chrome trace export,
#     JSON; the page links both; the routes in the man page;
#   - the events' JSON (export --trace-json) carries the exact label text;
#   - profdb watch of a live trace run: "trace ..." lines growing, and
#     --json's {"trace": ...};
#   - the run page of a trace run has no heap chart; in headless Chromium
#     (tests/peers/trace_browser.cjs) at 1400x1000 and 390x844: the timeline
#     drawn, wheel and key zoom, drag pan, a click on a thread lists its
#     events, a hostile label inert, and a live guest's timeline growing on
#     the page with no reload (screenshots in the scratch directory).
# Needs babeltrace2 (skipped, 77, without it, except under CI=true).
#
# Owns only these checks; calls the built programs through tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SERVE_PID= STUB_PID= WATCH_PID=
at_exit '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; [ -n "$STUB_PID" ] && kill "$STUB_PID" 2>/dev/null; [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null'
keep_at_exit '"$T"/*.png'
CHECK="python3 $S/tests/trace_timeline_check.py"
need babeltrace2 || exit 77
with_browser

import plain "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp" # run 1: no trace
start_xensim
"$BACKEND" start --platform sim --db "$PROFSVC_DB" --max-trace-pages 256 --foreground >>"$T/backend.log" 2>&1 &
disown
for _ in $(seq 100); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.05; done
"$BACKEND" status >/dev/null 2>&1 || { echo "backend did not start: $(tail -3 "$T/backend.log")"; exit 99; }

run_of() { sqlite3 "$PROFSVC_DB" "select max(run_id) from runs where name = '$1'" 2>/dev/null; }
state_of() { sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $1" 2>/dev/null; }
# mirage NAME STUB-ARGS...: a MirageOS guest from boot to destruction
mirage() {
	local name=$1 dom; shift
	dom=$("$XS" create --dir "$XENSIM_DIR" --name "$name") || { fail "xensim create $name"; return 1; }
	"$STUB" --platform sim --mode mirage --domid "$dom" -q "$@" >"$T/$name.stub" 2>&1 || fail "$name: $(cat "$T/$name.stub")"
	"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null 2>&1
	for _ in $(seq 200); do r=$(run_of "$name"); [ -n "$r" ] && [ "$(state_of "$r")" != running ] && break; sleep 0.05; done
}

# --- the model against babeltrace2 -------------------------------------------------------
mirage kinds --pages 64 --events 2400 --rate 20000
R=$(run_of kinds)
"$PROFDB" export "$R" --ctf "$T/kinds.ctf" --trace-json "$T/kinds.json" --chrome-trace "$T/kinds.chrome.json" 2>"$T/err" &&
	ok || fail "export: $(cat "$T/err")"
babeltrace2 --clock-cycles --no-delta "$T/kinds.ctf" >"$T/kinds.bt" 2>"$T/bt.err" && ok || fail "babeltrace2: $(head -3 "$T/bt.err")"

"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE_PID=$!
for _ in $(seq 300); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
URL="http://127.0.0.1:${PORT:-1}"
get() { curl -s --max-time 30 -o "$T/body" -w '%{http_code}' "$URL$1"; }

[ "$(get "/api/runs/$R/trace-timeline")" = 200 ] && cp "$T/body" "$T/tl.json" && json_ok "$T/tl.json" && ok ||
	fail "GET /api/runs/$R/trace-timeline: $(head -c 300 "$T/body")"
out=$($CHECK model "$T/tl.json" "$T/kinds.bt") && ok || fail "$out"
python3 "$S/tests/json_shapes.py" trace_timeline "$T/tl.json" && ok || fail "the model is not as docs/json.md says"
echo "$out"
# a thread's events: the one with the most
TID=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(max(d["threads"], key=lambda t: t["events"])["id"])' "$T/tl.json")
[ "$(get "/api/runs/$R/trace-timeline?thread=$TID")" = 200 ] && cp "$T/body" "$T/thread.json" && ok || fail "?thread=$TID: $(head -c 300 "$T/body")"
out=$($CHECK thread "$T/thread.json" "$T/kinds.bt" "$TID") && ok || fail "$out"
python3 "$S/tests/json_shapes.py" trace_thread "$T/thread.json" && ok || fail "?thread= is not as docs/json.md says"
# a window: the middle third, only what is in it
read -r T0 T1 < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["t0"], d["t1"])' "$T/tl.json")
A=$((T0 + (T1 - T0) / 3)) B=$((T0 + 2 * (T1 - T0) / 3))
[ "$(get "/api/runs/$R/trace-timeline?from=$A&to=$B")" = 200 ] && cp "$T/body" "$T/win.json" && ok || fail "a window: $(head -c 300 "$T/body")"
python3 - "$T/win.json" "$T/tl.json" "$A" "$B" <<'PY' && ok || fail "the window's model"
import json, sys
w, whole, a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4])
assert (w["from"], w["to"]) == (a, b), (w["from"], w["to"])
assert all(t["end"] >= a and t["start"] <= b for t in w["threads"]), "a thread outside the window"
assert all(a <= x[3] <= b for x in w["arrows"]), "an arrow outside the window"
want = [x for x in whole["arrows"] if a <= x[3] <= b]
assert w["arrows"] == want, "the window's arrows are not the run's in it: %d vs %d" % (len(w["arrows"]), len(want))
assert 0 < len(w["threads"]) < len(whole["threads"]), (len(w["threads"]), len(whole["threads"]))
PY
for q in "from=5" "from=9&to=3" "from=x&to=9" "thread=-1" "thread=1x" "thread=18446744073709551616" "cols=0" "cols=4001" "cols=x"; do
	[ "$(get "/api/runs/$R/trace-timeline?$q")" = 400 ] && ok || fail "?$q: $(head -c 200 "$T/body")"
done
# 2^64-1 is mirage-profile's "no thread" (a switch to it: the guest
# blocked), never a thread: it matched every event without a thread or
# another thread (every GC, counter, label...)
code=$(get "/api/runs/$R/trace-timeline?thread=18446744073709551615")
[ "$code" = 400 ] && grep -q 'no thread' "$T/body" && ok ||
	fail "?thread=18446744073709551615 (the \"no thread\" marker): $code, $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d.get("events", [])), "events listed, e.g.", d.get("events", [])[:3])' "$T/body" 2>/dev/null || head -c 200 "$T/body")"
[ "$(get "/api/runs/1/trace-timeline")" = 404 ] && grep -q 'has no MirageOS trace' "$T/body" && ok ||
	fail "a run without a trace: $(head -c 300 "$T/body")"

# --- the downloads --------------------------------------------------------------------------
[ "$(get "/runs/$R")" = 200 ] && cp "$T/body" "$T/page.html" && ok || fail "the run page"
grep -q "href=\"/runs/$R/trace.ctf.tar\"" "$T/page.html" && grep -q "href=\"/runs/$R/trace.chrome.json\"" "$T/page.html" &&
	ok || fail "the run page does not link the trace's downloads"
grep -q 'id="heap"' "$T/page.html" && fail "a trace run's page has a heap section" || ok
grep -q 'id="trace-tl-data"' "$T/page.html" && grep -q "data-api=\"/api/runs/$R/trace-timeline\"" "$T/page.html" && ok ||
	fail "the run page has no thread timeline"
grep -q '<script>x</script>' "$T/page.html" && fail "a hostile label is markup on the page" || ok
code=$(curl -s --max-time 30 -D "$T/hdr" -o "$T/dl.tar" -w '%{http_code}' "$URL/runs/$R/trace.ctf.tar")
[ "$code" = 200 ] && grep -qi "^content-type: application/x-tar" "$T/hdr" && grep -qi "filename=\"run-$R.ctf.tar\"" "$T/hdr" &&
	ok || fail "GET trace.ctf.tar: $code $(cat "$T/hdr")"
mkdir -p "$T/x" && tar -xf "$T/dl.tar" -C "$T/x" && [ "$(tar -tf "$T/dl.tar" | sort | tr '\n' ' ')" = "run-$R.ctf/ run-$R.ctf/metadata run-$R.ctf/mprof_stream " ] &&
	ok || fail "the tar: $(tar -tvf "$T/dl.tar" 2>&1 | head -5)"
cmp -s "$T/x/run-$R.ctf/mprof_stream" "$T/kinds.ctf/mprof_stream" && cmp -s "$T/x/run-$R.ctf/metadata" "$T/kinds.ctf/metadata" &&
	ok || fail "the tar's files are not the export's"
babeltrace2 --clock-cycles --no-delta "$T/x/run-$R.ctf" >"$T/dl.bt" 2>"$T/bt.err" && cmp -s "$T/dl.bt" "$T/kinds.bt" &&
	[ "$(wc -l <"$T/dl.bt")" = 2400 ] && ok || fail "babeltrace2 of the downloaded trace: $(head -3 "$T/bt.err")"
code=$(curl -s --max-time 30 -D "$T/hdr" -o "$T/dl.chrome.json" -w '%{http_code}' "$URL/runs/$R/trace.chrome.json")
[ "$code" = 200 ] && grep -qi "^content-type: application/json" "$T/hdr" && cmp -s "$T/dl.chrome.json" "$T/kinds.chrome.json" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(e["ph"]=="X" and e["cat"]=="gc" for e in d["traceEvents"]); assert any(e["ph"]=="B" for e in d["traceEvents"])' "$T/dl.chrome.json" &&
	ok || fail "GET trace.chrome.json: $code"
[ "$(get /runs/1/trace.ctf.tar)" = 404 ] && ok || fail "a run without a trace's tar: $(head -c 200 "$T/body")"
for p in /runs/N/trace.ctf.tar /runs/N/trace.chrome.json /api/runs/N/trace-timeline; do
	grep -q "$p" "$S/man/profdb.1.scd" && grep -q "$p" "$S/README.md" && ok || fail "$p not in the man page and the README"
done
# the events' JSON: labels as the guest spelled them (the hostile one included)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l={e["label"] for e in d["events"] if e["event"]=="label"}; assert "<script>x</script>" in l and "http-server" in l, l' "$T/kinds.json" &&
	ok || fail "the events' JSON labels"

# --- bounded: 300,000 events ---------------------------------------------------------------
mirage big --pages 256 --events 300000 --rate 2000000
RB=$(run_of big)
[ "$(get "/api/runs/$RB/trace-timeline")" = 200 ] && cp "$T/body" "$T/big.json" && ok || fail "the big trace's model"
size=$(stat -c %s "$T/big.json")
python3 - "$T/big.json" <<'PY' && ok || fail "the big trace's model is not bounded ($size bytes)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["events"] > 100000, d["events"]
assert len(d["threads"]) <= 2000 < d["threads_total"], (len(d["threads"]), d["threads_total"])
assert len(d["arrows"]) <= 4000 < d["arrows_total"], (len(d["arrows"]), d["arrows_total"])
assert len(d["gc"]) <= 1500 < d["gc_total"] == sum(g[2] for g in d["gc"]), (len(d["gc"]), d["gc_total"])
assert all(len(c["points"]) <= 600 for c in d["counters"])
# a point per column with updates (the whole trace's columns were [0, 2^64): one point each)
assert all(c["in_window"] > 10000 and len(c["points"]) >= 100 for c in d["counters"]), [(c["in_window"], len(c["points"])) for c in d["counters"]]
# threads by label: every thread of the window in a group, each group keeping 8 (or all) of its own
assert sum(g["threads"] for g in d["groups"]) + d["groups_more"]["threads"] == d["threads_total"], (d["groups"], d["groups_more"])
assert all(g["shown"] >= min(g["threads"], 8) for g in d["groups"]) and len(d["groups"]) >= 5, d["groups"]
PY
[ "$(get "/api/runs/$RB/trace-timeline?cols=1400")" = 200 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(150 <= len(c["points"]) <= 1400 for c in d["counters"]), [len(c["points"]) for c in d["counters"]]' "$T/body" &&
	ok || fail "?cols=1400: $(head -c 300 "$T/body")"
[ "$size" -lt 1500000 ] && ok || fail "the big trace's model is $size bytes"
[ "$(get "/runs/$RB")" = 200 ] && [ "$(stat -c %s "$T/body")" -lt 2000000 ] && ok ||
	fail "the big trace's page is $(stat -c %s "$T/body") bytes"
echo "test_trace_timeline: 300,000-event trace: model $size bytes, page $(stat -c %s "$T/body") bytes"

# --- live: watch and the page ------------------------------------------------------------------
DOM=$("$XS" create --dir "$XENSIM_DIR" --name live)
"$STUB" --platform sim --mode mirage --domid "$DOM" -q --pages 4 --events 12000 --rate 400 >"$T/live.stub" 2>&1 &
STUB_PID=$!
LIVE=
for _ in $(seq 100); do LIVE=$(run_of live); [ -n "$LIVE" ] && break; sleep 0.1; done
[ -n "$LIVE" ] && ok || fail "the live run never started"
"$PROFDB" watch "${LIVE:-0}" >"$T/watch.out" 2>"$T/watch.err" &
WATCH_PID=$!
"$PROFDB" watch "${LIVE:-0}" --json >"$T/watch.json" 2>"$T/watch.jerr" &
WATCH2_PID=$!
"$PROFDB" report "$R" -o "$T/report.html" 2>"$T/err" && ok || fail "report: $(cat "$T/err")"
browser_check 200 trace_browser.cjs trace-1400.png trace-1400-zoomed.png trace-390.png trace-live.png \
	trace-big-1400.png trace-big-390.png trace-big-folded.png \
	-- "$URL" "$R" "${LIVE:--}" "$T" "$T/report.html" "${RB:--}"
wait "$STUB_PID" && ok || fail "the live guest: $(cat "$T/live.stub")"
STUB_PID=
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
wait "$WATCH_PID"
WATCH_PID=
wait "$WATCH2_PID"
n=$(grep -c '^trace t=' "$T/watch.out")
read -ra ev <<<"$(grep -o 'events=[0-9]*' "$T/watch.out" | cut -d= -f2 | tr '\n' ' ')"
[ "${n:-0}" -ge 3 ] && [ "${ev[-1]:-0}" -gt "${ev[0]:-0}" ] && ok || fail "watch's trace lines: $(head -5 "$T/watch.out")"
grep -q 'threads=[1-9][0-9]* alive=[0-9]* gc=[0-9]* ' "$T/watch.out" && grep -q 'bytes_rx=' "$T/watch.out" && ok ||
	fail "watch's trace line lacks figures: $(head -2 "$T/watch.out")"
tail -1 "$T/watch.out" | grep -q "run $LIVE ended" && ok || fail "watch's end: $(tail -2 "$T/watch.out")"
[ "$(grep -c 'waiting for\|heap' "$T/watch.out")" = 0 ] && ok || fail "watch spoke of a heap for a trace run"
python3 - "$T/watch.json" <<'PY' && ok || fail "watch --json: $(head -c 400 "$T/watch.json")"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
tr = [d["trace"] for d in docs if "trace" in d]
assert len(tr) >= 3 and tr[-1]["events"] > tr[0]["events"], [t["events"] for t in tr]
assert set(tr[0]) == {"events", "packets_kept", "packets_lost", "threads", "threads_alive", "gc_pauses", "gc_total_ns",
                      "gc_longest_ns", "span_ns", "ended", "counters"}, set(tr[0])
assert "end" in docs[-1]
PY
grep '^{"trace"' "$T/watch.json" | tail -1 >"$T/wt.json" && python3 "$S/tests/json_shapes.py" watch_trace "$T/wt.json" && ok ||
	fail "watch's trace object is not as docs/json.md says"
finish test_trace_timeline
