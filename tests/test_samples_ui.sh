#!/usr/bin/env bash
# test_samples_ui.sh - a sampled run's page where people look at it: a run
# of known stacks (tests/samples_gen.c's known_stream) in a store, its page
# in profdb serve and its saved report in headless Chromium
# (tests/peers/samples_browser.cjs): the Samples section first, saying how
# the run was sampled; the functions' figures exact; a brushed range of the
# strip selecting exactly the samples in it; focus, ignore and a vCPU
# keeping exactly the expected samples; a clicked function's sandwich; the
# view kept in the URL; a phone; the hostile module text inert
# (screenshots in the scratch directory).
#
# Owns only these checks; calls the built programs through tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SERVE_PID=
at_exit '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null'
keep_at_exit '"$T"/*.png'
with_browser

R=$("$B/tests/samples_gen" store "$PROFSVC_DB" known "known") && ok || fail "samples_gen store: $R"
"$PROFDB" report "$R" -o "$T/report.html" 2>"$T/err" && ok || fail "report: $(cat "$T/err")"
# the page's data: every sample, its stacks and functions, guest text inert
grep -q 'id="samples-data">{"hz":100,"vcpus":2,"fns":\[' "$T/report.html" &&
	! grep -q 'known<b>' "$T/report.html" && ok || fail "the report's samples data: $(grep -o 'id="samples-data".\{0,200\}' "$T/report.html")"
# no GHC cost-centre table first
! grep -q 'id="top-table"' "$T/report.html" && ok || fail "a sampled run's page shows GHC's top cost centres"

"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE_PID=$!
for _ in $(seq 300); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
URL="http://127.0.0.1:${PORT:-1}"
[ "$(curl -s --max-time 30 -o "$T/page.html" -w '%{http_code}' "$URL/runs/$R")" = 200 ] &&
	grep -q 'id="samples-how">Sampled from dom0 at 100 Hz asked, 50 Hz kept' "$T/page.html" && ok ||
	fail "GET /runs/$R: $(grep -o 'id="samples-how".\{0,200\}' "$T/page.html")"

browser_check 200 samples_browser.cjs samples-1400.png samples-sandwich-1400.png samples-390.png \
	-- "$URL" "$R" "$T" "$T/report.html"

finish test_samples_ui
