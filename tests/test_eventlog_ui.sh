#!/bin/bash
# test_eventlog_ui.sh - a run's GHC eventlog where people look at it:
#   - profdb report: the timeline section has one GC bar per pause (profdb
#     gc's count), each of its generation, a lane per capability, the
#     heap size and live data lines, the user markers labelled; guest
#     text in markers escaped; no section for a run without an eventlog;
#   - profdb watch: GC and heap lines ("gc ...", {"gc": ...}) for a run
#     with an eventlog, growing while the guest writes it, and the
#     eventlog's heap samples as its bands when the run has no .hp;
#   - profdb diff: both runs' GC figures side by side (text and JSON);
#   - profdb serve: /api/runs/N/eventlog is the section; in headless
#     Chromium (tests/peers/eventlog_browser.cjs) the run page's timeline
#     is drawn, hover names a pause's generation and duration, zoom works,
#     no page logs an error, and a live guest on xensim (frontend-stub
#     --eventlog --pace) makes the page's pauses and its heap chart (the
#     eventlog's samples: the run has no .hp) grow with no reload, the
#     timeline fetched again on the run stream's "eventlog" events (the
#     eventlog's size, growing; none in a run without an eventlog) and
#     keeping its zoom.
#     Screenshots stay in the scratch directory (PROFSVC_KEEP keeps them).
#
# Owns only these checks; calls the built programs through tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SERVE_PID= STUB_PID= WATCH_PID=
at_exit '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; [ -n "$STUB_PID" ] && kill "$STUB_PID" 2>/dev/null; [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null'
keep_at_exit '"$T"/*.png'
with_browser
shape() { python3 "$S/tests/json_shapes.py" "$1" "$T/out" && ok || fail "$2: JSON not as documented: $(head -c 400 "$T/out")"; }
jx() { sqlite3 :memory: "select json_extract(readfile('$T/out'), '$1')"; }
EL="$S/tests/data/eventlog"

# run_of NAME FILE: a run whose only device is FILE as its eventlog
run_of() {
	"$MKDISK" --eventlog "$2" "$T/$1.disk" >/dev/null &&
		"$PROFDB" import-disk --name "$1" --eventlog "$T/$1.disk" >/dev/null 2>"$T/import.err" ||
		{ echo "import of $1 failed: $(cat "$T/import.err")"; exit 99; }
	sqlite3 "$PROFSVC_DB" "select max(run_id) from runs"
}

# hostile.eventlog: GC pauses and user markers whose labels are markup,
# written as GHC writes the format (header of event types, then events)
python3 - "$T/hostile.eventlog" <<'EOF'
import struct, sys
out = bytearray(b"hdrb" b"hetb")
def etype(num, size, desc):
    global out
    d = desc.encode()
    out += b"etb\0" + struct.pack(">HHI", num, size, len(d)) + d + struct.pack(">I", 0) + b"ete\0"
etype(9, 0, "Start GC"); etype(10, 0, "Stop GC"); etype(58, 0xffff, "User marker")
out += b"hete" b"hdre" b"datb"
def ev(t, num, payload=None):
    global out
    out += struct.pack(">HQ", num, t)
    if payload is not None:
        out += struct.pack(">H", len(payload)) + payload
t = 1000
for i in range(5):
    ev(t, 9); ev(t + 200000, 10); t += 1000000
ev(1500000, 58, b'</svg><script>window.__xss=1</script>')
ev(2500000, 58, b'a "quoted" & <b>bold</b> \x1b[31m')
out += struct.pack(">H", 0xffff)
open(sys.argv[1], "wb").write(out)
EOF

R1=$(run_of evprog "$EL/evprog.eventlog")       # 218 collections, 2 markers, one capability
R2=$(run_of threaded "$EL/threaded.eventlog")   # 121 collections, two capabilities
R3=$(run_of hostile "$T/hostile.eventlog")
import plain "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.hp"
R4=$(sqlite3 "$PROFSVC_DB" "select max(run_id) from runs")

# --- report: the timeline's bars, generations, lanes and markers --------------------------------
# check_report RUN LANES: the report of RUN against profdb gc's and events' figures
check_report() {
	local run=$1 lanes=$2 html="$T/report-$1.html"
	expect 0 "" -- "$PROFDB" report "$run" -o "$html"
	expect 0 "" -- "$PROFDB" gc "$run" --json
	local pauses gens0 gens1 markers
	pauses=$(jx '$.pauses') gens0=$(jx '$.by_generation[0]') gens1=$(jx '$.by_generation[1]')
	markers=$("$PROFDB" events "$run" --type USER_MARKER | wc -l)
	[ "$(grep -o '<rect class="gc"' "$html" | wc -l)" = "$pauses" ] && [ "$pauses" -gt 0 ] && ok ||
		fail "run $run: $(grep -o '<rect class="gc"' "$html" | wc -l) GC bars, profdb gc: $pauses pauses"
	grep -q "<section id=\"timeline\" data-pauses=\"$pauses\" data-markers=\"$markers\">" "$html" && ok ||
		fail "run $run: the section's counts: $(grep -o '<section id="timeline"[^>]*>' "$html")"
	grep -q "<td id=\"tl-pauses\">$pauses</td>" "$html" && ok || fail "run $run: the GC figures lack the pauses"
	if [ "$(jx '$.collections')" = "$pauses" ]; then # a collection a pause: each bar is its generation's
		[ "$(grep -o 'class="gc"[^>]*data-gen="0"' "$html" | wc -l)" = "$gens0" ] &&
			[ "$(grep -o 'class="gc"[^>]*data-gen="1"' "$html" | wc -l)" = "${gens1:-0}" ] && ok ||
			fail "run $run: bars by generation differ from by_generation [$gens0, $gens1]"
	fi
	[ "$(grep -o '<g class="lane"' "$html" | wc -l)" = "$lanes" ] && ok ||
		fail "run $run: $(grep -o '<g class="lane"' "$html" | wc -l) capability lanes, want $lanes"
	[ "$(grep -o 'class="tl-mlabel"' "$html" | wc -l)" = "$markers" ] && ok ||
		fail "run $run: $(grep -o 'class="tl-mlabel"' "$html" | wc -l) marker labels, want $markers"
	[ "$(grep -o '<line class="marker"' "$html" | wc -l)" = "$markers" ] && ok || fail "run $run: marker lines"
}
check_report "$R1" 1
check_report "$R2" 2
check_report "$R3" 0
grep -o 'class="tl-mlabel"[^>]*>[^<]*' "$T/report-$R1.html" | sed 's/.*>//' | tr '\n' ' ' | grep -qx 'start end ' && ok ||
	fail "run $R1's markers are not labelled start, end: $(grep -o 'class="tl-mlabel"[^>]*>[^<]*' "$T/report-$R1.html")"
grep -q '<polyline class="heap-size"' "$T/report-$R1.html" && grep -q '<polyline class="heap-live"' "$T/report-$R1.html" &&
	ok || fail "run $R1: no heap size and live data lines"
# the run has no .hp: the heap chart is drawn from the eventlog's samples
grep -q '<section id="heap">' "$T/report-$R1.html" && ok || fail "run $R1: no heap bands from its eventlog"
# hostile markers: text, never markup
H="$T/report-$R3.html"
grep -q '&lt;/svg&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;' "$H" && ok || fail "the hostile marker is not escaped"
grep -q '</svg><script>window.__xss' "$H" && fail "a marker's markup reached the report" || ok
grep -q 'a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt; \\x1b\[31m' "$H" && ok ||
	fail "the second marker's quotes, & and ESC: $(grep -o 'class="tl-mlabel"[^>]*>[^<]*<title>[^<]*' "$H" | tail -1)"
python3 -c 'import sys, xml.etree.ElementTree as E; s = open(sys.argv[1]).read(); E.fromstring(s[s.index("<svg id=\"tl-svg\""):s.index("<div id=\"tl-tip\">")])' "$H" 2>"$T/xmlerr" &&
	ok || fail "the hostile timeline's SVG is not well-formed XML: $(cat "$T/xmlerr")"
# a run without an eventlog has no timeline
expect 0 "" -- "$PROFDB" report "$R4" -o "$T/report-plain.html"
grep -q 'id="timeline"' "$T/report-plain.html" && fail "a run without an eventlog has a timeline" || ok

# --- watch and diff of finished runs --------------------------------------------------------------
expect 0 "" -- "$PROFDB" watch "$R1"
grep -q '^gc t=3\.610 collections=218 pauses=218 total_pause_ms=[0-9.]* longest_ms=[0-9.]* heap=[0-9]* live=[0-9]*$' "$T/out" &&
	grep -q "^run $R1 ended: complete$" "$T/out" && ok || fail "watch $R1: $(cat "$T/out")"
# the run has no .hp: its bands are the eventlog's 11 heap samples
[ "$(grep -c '^sample [0-9]* t=' "$T/out")" = 11 ] && grep -q '^sample 10 t=3\.585 ' "$T/out" && ok ||
	fail "watch $R1: not the eventlog's 11 heap samples: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" watch "$R2" --json
head -1 "$T/out" >"$T/first" && mv "$T/first" "$T/out" && shape watch_gc "watch --json's gc line"
[ "$(jx '$.gc.collections')" = 121 ] && ok || fail "watch --json: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" diff "$R1" "$R2"
grep -q "^GC (GHC's eventlogs) *before *after *change$" "$T/out" &&
	grep -Eq '^collections +218 +121 +-97$' "$T/out" && grep -Eq '^pauses +218 +121 +-97$' "$T/out" &&
	grep -Eq '^  generation 1 +23 +16 +-7$' "$T/out" && ok || fail "diff's GC figures: $(head -20 "$T/out")"
expect 0 "" -- "$PROFDB" diff "$R1" "$R2" --json
[ "$(jx '$.gc.before.pauses')/$(jx '$.gc.after.pauses')" = 218/121 ] && ok || fail "diff --json's gc: $(head -c 300 "$T/out")"
jx '$.gc' >"$T/gc.json" && mv "$T/gc.json" "$T/out" && shape diff_gc "diff --json's gc"
expect 0 "" -- "$PROFDB" diff "$R1" "$R4"
grep -q "GC (GHC" "$T/out" && fail "diff showed GC figures for a run without an eventlog" || ok

# --- serve: the section's own path, a live guest ---------------------------------------------------
start_xensim
"$BACKEND" start --platform sim --db "$PROFSVC_DB" --foreground >>"$T/backend.log" 2>&1 &
disown
for _ in $(seq 100); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.05; done
"$BACKEND" status >/dev/null 2>&1 || { echo "backend did not start: $(tail -3 "$T/backend.log")"; exit 99; }
"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE_PID=$!
for _ in $(seq 300); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
URL="http://127.0.0.1:${PORT:-1}"
get() { curl -s --max-time 10 -o "$T/body" -w '%{http_code}' "$URL$1"; }
[ "$(get "/api/runs/$R1/eventlog")" = 200 ] && grep -q "^<section id=\"timeline\" data-pauses=\"218\"" "$T/body" &&
	[ "$(grep -o '<rect class="gc"' "$T/body" | wc -l)" = 218 ] && ok || fail "GET /api/runs/$R1/eventlog: $(head -c 300 "$T/body")"
grep -q 'data-follow' "$T/body" && fail "a finished run's section follows" || ok
[ "$(get "/api/runs/$R4/eventlog")" = 404 ] && grep -q 'has no eventlog' "$T/body" && ok ||
	fail "a run without an eventlog: $(head -c 300 "$T/body")"
[ "$(get /api/runs/9999/eventlog)" = 404 ] && ok || fail "an unknown run's eventlog: $(head -c 300 "$T/body")"
[ "$(get "/runs/$R1")" = 200 ] && grep -q 'id="tl-svg"' "$T/body" && ok || fail "the run page has no timeline"
# a run's event stream: its eventlog's size for a run with one, nothing for one without
curl -s --max-time 10 "$URL/api/runs/$R1/events" >"$T/ev-r1"
grep -q '^event: eventlog$' "$T/ev-r1" && grep -q "^data: {\"bytes\":$(stat -c %s "$EL/evprog.eventlog")}$" "$T/ev-r1" &&
	grep -q '^event: end$' "$T/ev-r1" && ok || fail "run $R1's event stream: $(head -c 400 "$T/ev-r1")"
curl -s --max-time 10 "$URL/api/runs/$R4/events" >"$T/ev-r4"
grep -q '^event: end$' "$T/ev-r4" && ! grep -q '^event: eventlog' "$T/ev-r4" && ok ||
	fail "run $R4 (no eventlog)'s event stream: $(head -c 400 "$T/ev-r4")"

# a live guest: its eventlog (evprog's: 218 collections, 11 heap samples
# spread over the log) written 2 KiB at a time, 300 ms apart
printf '%s\n' 'name = "ev-live"' 'kernel = "k"' \
	"disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc', 'vdev=xvdp3, backendtype=profsvc' ]" \
	>"$T/ev-live.cfg"
DOM=$("$BACKEND" create --platform sim "$T/ev-live.cfg") || { fail "create ev-live"; finish test_eventlog_ui; exit 1; }
"$STUB" --platform sim --mode halvm --domid "$DOM" --eventlog "$EL/evprog.eventlog" --pace 300 >"$T/stub.log" 2>&1 &
STUB_PID=$!
LIVE=
for _ in $(seq 100); do
	LIVE=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'ev-live' and state = 'running'" 2>/dev/null)
	[ -n "$LIVE" ] && break
	sleep 0.1
done
[ -n "$LIVE" ] && ok || fail "the live run never started: $(cat "$T/stub.log")"
# its stream says the eventlog's size as it grows: two sizes, the second larger
timeout 60 curl -sN "$URL/api/runs/${LIVE:-0}/events" 2>/dev/null | grep -m2 '^data: {"bytes":' >"$T/ev-live"
read -ra sizes <<<"$(grep -o '[0-9]*' "$T/ev-live" | tr '\n' ' ')"
[ ${#sizes[@]} = 2 ] && [ "${sizes[1]}" -gt "${sizes[0]}" ] && ok || fail "the live run's eventlog events: $(cat "$T/ev-live")"
"$PROFDB" watch "${LIVE:-0}" >"$T/watch.out" 2>"$T/watch.err" &
WATCH_PID=$!
browser_check 120 eventlog_browser.cjs eventlog-timeline.png eventlog-timeline-zoomed.png eventlog-timeline-live.png \
	-- "$URL" "$R1" 218 2 "${LIVE:--}" "$T"
wait "$STUB_PID" && ok || fail "the live guest: $(cat "$T/stub.log")"
STUB_PID=
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
wait "$WATCH_PID"
WATCH_PID=
# watch saw the collections grow while the guest wrote, and the end
n=$(grep -c '^gc t=' "$T/watch.out")
[ "$n" -ge 2 ] && ok || fail "watch printed $n gc lines for a live run: $(cat "$T/watch.out" "$T/watch.err")"
grep -o 'collections=[0-9]*' "$T/watch.out" | cut -d= -f2 | sort -nc && ok || fail "watch's collections went down: $(cat "$T/watch.out")"
[ "$(grep '^gc t=' "$T/watch.out" | tail -1 | grep -o 'collections=[0-9]*')" = collections=218 ] && ok ||
	fail "watch's last gc line is not the whole log's 218 collections: $(tail -3 "$T/watch.out")"
grep -q "^run $LIVE ended: " "$T/watch.out" && ok || fail "watch did not see the end: $(tail -2 "$T/watch.out")"
[ "$(grep -c '^sample [0-9]* t=' "$T/watch.out")" = 11 ] && ok ||
	fail "watch of the live run: not the eventlog's 11 heap samples: $(grep '^sample' "$T/watch.out")"

finish test_eventlog_ui
