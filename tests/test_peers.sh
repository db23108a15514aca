#!/usr/bin/env bash
# test_peers.sh - profdb's outputs read by the real programs they are made
# for: speedscope files checked against file-format-schema.json from
# speedscope's npm package and opened in speedscope's own page in headless
# Chromium (Debian's chromium), which must show the profile; SVG charts
# rendered by Chromium and written as PNG screenshots (kept with
# PROFSVC_KEEP=DIR, for a person to look at); the HTML report in Chromium,
# a hostile run's names inert and GHC's lambda countBigrams.\ drawn with
# one backslash.  The validator itself must reject a broken file, so this
# test can fail.
#
# Needs chromium and the npm packages of tests/peers (quickstart test
# installs both; PROFSVC_PEERS names their node_modules).  Without them
# the test is skipped (77), except under CI=true, where that is a failure.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
NM=${PROFSVC_PEERS:-$S/tests/peers/node_modules}

missing=""
need chromium node || exit 77
[ -f "$NM/speedscope/dist/release/file-format-schema.json" ] && [ -d "$NM/ajv" ] ||
	missing="$missing $NM/{speedscope,ajv}"
if [ -n "$missing" ]; then
	echo "test_peers: missing:$missing (quickstart test installs them)"
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
SCHEMA="$NM/speedscope/dist/release/file-format-schema.json"
PAGE="$NM/speedscope/dist/release/index.html"
validate() { node "$S/tests/peers/validate.cjs" "$NM" "$SCHEMA" "$1"; }
# chrome ARGS...: headless Chromium as root may run, on files only
chrome() {
	timeout 90 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--allow-file-access-from-files --user-data-dir="$T/chrome" "$@" 2>>"$T/chrome.log"
}
# speedscope_shows FILE NAME: speedscope's page loads FILE and names NAME
speedscope_shows() {
	echo "speedscope.loadFileFromBase64(\"p.speedscope.json\", \"$(base64 -w0 "$1")\")" >"$T/load.js"
	chrome --virtual-time-budget=10000 --enable-logging=stderr --v=0 --dump-dom \
		"file://$PAGE#localProfilePath=$T/load.js" >"$T/dom.html"
	grep -qF "$2" "$T/dom.html"
}
keep() { [ -n "${PROFSVC_KEEP:-}" ] && mkdir -p "$PROFSVC_KEEP" && cp "$@" "$PROFSVC_KEEP/"; return 0; }

import wordfreq "$FIX/wordfreq/wordfreq-P-hc.prof" "$FIX/wordfreq/wordfreq-P-hc.hp"     # run 1
import leak "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.hp"                          # run 2
import exprcalc "$FIX/exprcalc/exprcalc-pj.prof" "$FIX/exprcalc/exprcalc-hy.hp"          # run 3
{
	printf '\tX Time and Allocation Profiling Report  (Final)\n\n\t   evil\n\n'
	printf '\ttotal time  =        0.10 secs   (100 ticks @ 1000 us, 1 processor)\n'
	printf '\ttotal alloc =   1,000 bytes  (excludes profiling overheads)\n\n'
	printf 'COST CENTRE MODULE SRC no. entries %%time %%alloc %%time %%alloc\n\n'
	printf 'MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n'
	printf ' \033]0;pwned\007</script> Main a"b.hs:1 2 1 60.0 50.0 100.0 100.0\n'
	printf '  rtl\342\200\256gnp Bad\377Mod <no location info> 3 5 40.0 50.0 40.0 50.0\n'
} >"$T/evil.prof"
import "evil</title>" "$T/evil.prof" "$FIX/leak/leak-p-hc.hp"                           # run 4

# --- speedscope: the schema, then the page -------------------------------------------
for run in 1 2 3 4; do
	"$PROFDB" export $run --speedscope "$T/r$run.json" 2>"$T/err" || fail "export $run --speedscope: $(cat "$T/err")"
	out=$(validate "$T/r$run.json") && ok || fail "run $run's speedscope file is not valid: $out"
done
# the validator rejects a broken file (a unit the format does not have)
sed 's/"unit":"bytes"/"unit":"furlongs"/' "$T/r1.json" >"$T/broken.json"
validate "$T/broken.json" >/dev/null && fail "the schema check accepted a broken file" || ok
grep -q '"unit":"milliseconds","startValue":0,"endValue":3204' "$T/r1.json" && ok ||
	fail "run 1's time profile is not 3204 ms: $(head -c 400 "$T/r1.json")"
for run in 1 3 4; do
	name=$("$PROFDB" query runs --json | sed -n "s/.*{\"run\":$run,\"name\":\"\\([^\"]*\\)\".*/\\1/p")
	want="run $run"
	if speedscope_shows "$T/r$run.json" "$want"; then ok; else
		fail "speedscope's page does not show run $run ($name): $(sed 's/<[^>]*>/ /g' "$T/dom.html" | tr -s ' ' | head -c 300)"
	fi
done
grep -q 'Main.countBigrams' "$T/r1.json" && ok || fail "frame names"
# no page error but the software-GL notices headless Chromium always prints
grep 'CONSOLE' "$T/chrome.log" | grep -iv 'webgl\|GL Driver\|speedscope v' | grep -i 'error\|exception' &&
	fail "speedscope's page logged errors" || ok
chrome --virtual-time-budget=10000 --window-size=1200,700 --screenshot="$T/speedscope.png" \
	"file://$PAGE#localProfilePath=$T/load.js" >/dev/null
[ -s "$T/speedscope.png" ] && ok || fail "no speedscope screenshot"

# --- the SVG charts as a browser draws them ------------------------------------------
"$PROFDB" heap 1 2 -o "$T/heap.svg" 2>/dev/null || fail "heap -o"
"$PROFDB" flame 1 -o "$T/flame.svg" 2>/dev/null || fail "flame -o"
"$PROFDB" heap 4 -o "$T/evil-heap.svg" 2>/dev/null || fail "heap 4 -o"
for svg in heap flame evil-heap; do
	chrome --window-size=1000,900 --screenshot="$T/$svg.png" "file://$T/$svg.svg" >/dev/null
	# a drawn chart is not one flat colour: count distinct bytes in the image
	if [ -s "$T/$svg.png" ] && [ "$(od -An -tu1 -v "$T/$svg.png" | tr -s ' ' '\n' | sort -u | wc -l)" -gt 100 ]; then
		ok
	else
		fail "Chromium did not draw $svg.svg"
	fi
done
# --- hp2ps's "bytes x seconds": the heap chart's header says what hp2ps's title does -----
if need hp2ps; then
	i=0
	for hp in "$FIX/wordfreq/wordfreq-P-hc.hp" "$FIX/leak/leak-p-hc.hp" "$FIX/exprcalc/exprcalc-hy.hp"; do
		i=$((i + 1))
		cp "$hp" "$T/hp2ps-$i.hp" && (cd "$T" && hp2ps "hp2ps-$i.hp") 2>/dev/null
		theirs=$(grep -ao '([0-9,]* bytes x seconds)' "$T/hp2ps-$i.ps" | tr -d '(),' | cut -d' ' -f1)
		"$PROFDB" heap $i -o "$T/area-$i.svg" 2>/dev/null
		ours=$(grep -o '<text class="area"[^>]*>[0-9,]* bytes x seconds<' "$T/area-$i.svg" | sed 's/.*>\([0-9,]*\) .*/\1/' | tr -d ,)
		[ -n "$theirs" ] && [ -n "$ours" ] && [ $((ours - theirs)) -le 1 ] && [ $((theirs - ours)) -le 1 ] && ok ||
			fail "run $i: bytes x seconds: ours [$ours], hp2ps's [$theirs] ($(basename "$hp"))"
	done
elif [ -n "${CI:-}" ]; then
	fail "hp2ps missing"
fi

# --- the flame graph, clicked and searched (issue 33) ------------------------------------
# run 1's standalone SVG and its report page in Chromium (tests/peers/
# flame_browser.cjs): a click on countWords zooms to it, a search for
# countBigrams marks those frames and shows their share of the whole, which
# is the folded stacks' (nested frames once), and no label spills out of
# its box, with script and without
"$PROFDB" flame 1 >"$T/wf.folded" && "$PROFDB" report 1 -o "$T/wf-flame.html" 2>/dev/null || fail "flame/report 1"
share=$(python3 -c '
import re, sys
tot = hit = 0
for line in open(sys.argv[1]):
    stack, v = line.rsplit(" ", 1)
    tot += int(v)
    hit += int(v) if any(re.search("countBigrams", f) for f in stack.split(";")) else 0
print("%.2f" % (100.0 * hit / tot))' "$T/wf.folded")
out=$(timeout 120 node "$S/tests/peers/flame_browser.cjs" "$NM" "$T/flame.svg" "$T/wf-flame.html" Main.countWords countBigrams "$share" "$T" 2>&1)
echo "$out" | grep -q '^flame browser: [0-9]* checks, 0 failed' && ok || fail "flame graph in Chromium: $out"

# --- the HTML report, as a browser runs it -------------------------------------------------
# dom FILE [HASH]: the page after its script ran
dom() {
	chrome --virtual-time-budget=5000 --enable-logging=stderr --v=0 --dump-dom "file://$1${2:+#$2}" >"$T/dom.html"
}
"$PROFDB" report 2 -o "$T/report.html" 2>"$T/err" && ok || fail "report 2: $(cat "$T/err")"
# ours: the chart's data, the script, the tree's data, two calls into it,
# and the flame graph's own (flame.js, inside its SVG)
[ "$(grep -o '<script' "$T/report.html" | wc -l)" = 6 ] && ok || fail "report: not exactly our six script elements"
grep -q 'http-equiv="Content-Security-Policy" content="default-src .none.' "$T/report.html" && ok ||
	fail "report: no Content-Security-Policy"
grep -Eq '(src|href)="(https?:)?//' "$T/report.html" && fail "report: loads something from the network" || ok
: >"$T/chrome.log"
dom "$T/report.html"
grep -q 'data-ready="1"' "$T/dom.html" && ok || fail "report: the script did not finish: $(tail -5 "$T/chrome.log")"
grep 'CONSOLE' "$T/chrome.log" | grep -iv 'webgl\|GL Driver' | grep -i 'error\|uncaught' &&
	fail "report: the page logged errors" || ok
# the key lists hp2ps's bands, top first, as profdb heap does (guest text
# decoded from the JSON keeps its visible escapes, as the page shows them)
want=$("$PROFDB" heap 2 --json | python3 -c 'import json, sys; print("\n".join(b["name"] for b in json.load(sys.stdin)["bands"]))')
got=$(grep -o 'class="name" title="[^"]*"' "$T/dom.html" | sed 's/.*title="\(.*\)"/\1/')
[ -n "$want" ] && [ "$want" = "$got" ] && ok || fail "report key differs from profdb heap: want [$want] got [$got]"
[ "$(grep -o 'class="band"' "$T/dom.html" | wc -l)" = 6 ] && ok || fail "report: not 6 drawn bands"
# the page's chart as the SVG's (issue 33): hp2ps's bytes x seconds, the
# axis's unit and its round ticks
grep -q 'class="area"[^>]*>166,302,970 bytes x seconds<' "$T/dom.html" && ok ||
	fail "report: no bytes x seconds: $(grep -o 'class="area"[^>]*>[^<]*' "$T/dom.html")"
[ "$(grep -o 'class="ytick"[^>]*>[^<]*' "$T/dom.html" | sed 's/.*>//' | tr '\n' ' ')" = "0 20 MB 40 MB 60 MB 80 MB 100 MB 120 MB 140 MB 160 MB " ] &&
	grep -q 'class="yunit"[^>]*>bytes<' "$T/dom.html" && ok ||
	fail "report: the y axis: $(grep -o 'class="y[a-z]*"[^>]*>[^<]*' "$T/dom.html" | sed 's/.*>//' | tr '\n' ' ')"
# the tree opens its first two levels and the path to the hot spot (the
# stack with the most time of its own): never hidden under a closed node
"$PROFDB" report 2 --json >"$T/report.json"
python3 - "$T/report.json" "$T/dom.html" <<'PY' && ok || fail "report: the tree's rows: $(grep -o '[0-9]* of [0-9]* call stacks shown' "$T/dom.html")"
import json, re, sys
ns = json.load(open(sys.argv[1]))["tree"]["nodes"]
dom = open(sys.argv[2]).read()
hot = max(range(len(ns)), key=lambda i: (ns[i]["time"], -i))
opened = {i for i, n in enumerate(ns) if n["depth"] < 2}
a = ns[hot]["parent"]
while a >= 0:
    opened.add(a); a = ns[a]["parent"]
def seen(i):
    a = ns[i]["parent"]
    while a >= 0:
        if a not in opened: return False
        a = ns[a]["parent"]
    return True
want = sum(seen(i) for i in range(len(ns)))
assert ns[hot]["depth"] >= 2, "the hot spot is not below the levels opened anyway: the check proves nothing"
assert '%d of %d call stacks shown' % (want, len(ns)) in dom, want
assert 'data-node="%d"' % hot in dom, 'the hot spot is not shown'
PY
# the flat table of the top cost centres comes first, profdb top's rows
first=$(grep -o '<table[^>]*>' "$T/dom.html" | head -1)
case $first in *'id="top-table"'*) ok ;; *) fail "report: the first table is $first, not the top cost centres" ;; esac
"$PROFDB" top 2 -n 1 --json | python3 -c 'import json, sys, re, html
c = json.load(sys.stdin)["cost_centres"][0]
row = re.search(r"id=\"top-table\".*?<tbody>\s*<tr>(.*?)</tr>", open(sys.argv[1]).read(), re.S).group(1)
cells = [html.unescape(re.sub("<[^>]*>", "", x)) for x in re.findall(r"<td[^>]*>(.*?)</td>", row)]
want = [c["name"], c["module"], "%.1f" % c["time"], "%.1f" % c["alloc"], "{:,}".format(c["entries"]), c["src"]]
sys.exit(0 if cells == want else print(cells, want) or 1)' "$T/dom.html" && ok || fail "report: the top table's first row is not profdb top's"
# a report file links nowhere it cannot go: no catalogue there
grep -q 'href="/"' "$T/report.html" && fail "report: a link to a catalogue a file does not have" || ok
grep -q 'class="frame"' "$T/dom.html" && ok || fail "report: no flame graph"
chrome --virtual-time-budget=5000 --window-size=1300,1800 --screenshot="$T/report.png" "file://$T/report.html" >/dev/null
# a view in the hash: lines, the bottom band hidden, the tree searched
dom "$T/report.html" "mode=line&hide=0&q=histogram&sort=alloc"
[ "$(grep -o 'class="band"' "$T/dom.html" | wc -l)" = 5 ] && ok || fail "report: hiding a band"
grep -q 'class="key off" data-band="0"' "$T/dom.html" && ok || fail "report: the hidden band's key is not off"
grep -q 'fill="none"' "$T/dom.html" && ok || fail "report: line mode draws no lines"
rows=$(grep -o '<tr data-node="[0-9]*">' "$T/dom.html" | wc -l)
# histogram twice, histogram.step, and their ancestors MAIN, main, main.h, CAF
[ "$rows" = 7 ] && ok || fail "report: search 'histogram' shows $rows rows"
grep -q 'th data-col="alloc" class="sorted"' "$T/dom.html" && ok || fail "report: sort by alloc"
# a hostile run: nothing it named is markup or a live control in the page
"$PROFDB" report 4 -o "$T/evil.html" 2>/dev/null && ok || fail "report 4"
[ "$(grep -o '<script' "$T/evil.html" | wc -l)" = 6 ] && ok || fail "hostile report: a seventh <script"
LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/evil.html" &&
	fail "hostile report: a raw control, bidi or invalid byte" || ok
dom "$T/evil.html"
grep -q 'data-ready="1"' "$T/dom.html" && ok || fail "hostile report: the script failed"
grep -q '\\x1b\]0;pwned\\x07&lt;/script&gt;' "$T/dom.html" && ok ||
	fail "hostile report: the escaped name is not shown: $(grep -o 'pwned.\{0,40\}' "$T/dom.html" | head -2)"
chrome --virtual-time-budget=5000 --window-size=1300,1400 --screenshot="$T/evil-report.png" "file://$T/evil.html" >/dev/null
# GHC's lambda countBigrams.\ as the profile spells it, one backslash, in
# what the page's script drew from the exact JSON: the heap key and the
# tree (the search opens it there); the JSON itself left out
"$PROFDB" report 1 -o "$T/wf.html" 2>/dev/null && ok || fail "report 1"
dom "$T/wf.html" "q=countBigrams"
python3 - "$T/dom.html" <<'PY' && ok || fail "report 1: countBigrams.\\ not shown with one backslash: $(grep -o 'countBigrams[^<]\{0,20\}' "$T/dom.html" | sort -u | head -5)"
import re, sys
page = re.sub(r"<script.*?</script>", "", open(sys.argv[1], encoding="utf-8").read(), flags=re.S)
key = re.findall(r"\(327\)countBigrams[^<]*", page)
rows = re.findall(r">countBigrams[^<]*<", page)
sys.exit(not (key and all(k.startswith("(327)countBigrams.\\/countB") for k in key)
              and ">countBigrams.\\<" in rows and "countBigrams.\\\\" not in page))
PY
# against another run: the movers, a differential flame graph, both heaps in one colour per band
sed 's/^\(   *phaseSet  *Main .* 6 \)  *15.3/\1 25.3/' "$FIX/phases/phases-p-hc.prof" >"$T/slower.prof"
import before "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"           # run 5
import after "$T/slower.prof" "$FIX/phases/phases-hd-i0.01.hp"                           # run 6
"$PROFDB" report 6 --against 5 -o "$T/against.html" 2>"$T/err" && ok || fail "report --against: $(cat "$T/err")"
: >"$T/chrome.log"
dom "$T/against.html"
grep -q 'data-ready="1"' "$T/dom.html" && ok || fail "report --against: the script did not finish"
grep 'CONSOLE' "$T/chrome.log" | grep -iv 'webgl\|GL Driver' | grep -i 'error\|uncaught' &&
	fail "report --against: the page logged errors" || ok
grep -q 'Compared with run 5 before (complete)' "$T/dom.html" && ok || fail "report --against: no comparison section"
sed -n '/id="changes"/,/<\/table>/p' "$T/dom.html" | grep -m1 '<tr><td>' |
	grep -q '<td>15.3</td><td>25.3</td><td class="up">+10.0</td>.*Main.phaseSet</td>' && ok ||
	fail "report --against: phaseSet is not the top mover: $(sed -n '/id="changes"/,/<\/table>/p' "$T/dom.html" | grep -m1 '<tr><td>')"
grep -q 'id="flame-diff"' "$T/dom.html" && ok || fail "report --against: no differential flame graph"
python3 - "$T/dom.html" <<'PY' && ok || fail "report --against: the two heaps are not drawn in one colour per band"
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
def fills(id):
    svg = re.search(r'<svg id="%s".*?</svg>' % id, page, re.S)
    return dict(re.findall(r'<path [^>]*data-key="([^"]*)" fill="([^"]*)"', svg.group(0))) if svg else {}
a, b = fills("heap-a"), fills("heap-b")
sys.exit(not (len(a) > 2 and a == b))
PY
chrome --virtual-time-budget=5000 --window-size=1300,2600 --screenshot="$T/against.png" "file://$T/against.html" >/dev/null
expect 1 "no run 99" -- "$PROFDB" report 6 --against 99
keep "$T"/*.png

finish test_peers
