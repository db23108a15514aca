#!/usr/bin/env bash
# test_view.sh - the commands that show a run (profdb heap), end to end as
# a user runs them on runs imported from HaLVM raw images: the summary,
# CSV, JSON and SVG outputs; a guest crashed mid-sample; several runs on
# one scale; hostile band names (markup, quotes, terminal escapes, bidi,
# invalid UTF-8) that must come out inert in every form; bad input and bad
# options with one clear line and the right exit status.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"

import leak "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.hp"                 # run 1
import phases "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"   # run 2

# --- the summary ------------------------------------------------------------------
expect 0 "" -- "$PROFDB" heap 1
grep -q "^run 1 leak (complete)" "$T/out" && ok || fail "summary caption: $(head -2 "$T/out")"
grep -q "17 samples over 1.53849 s" "$T/out" && ok || fail "summary samples: $(cat "$T/out")"
grep -q "6 bands shown, 14 trace bands dropped" "$T/out" && ok || fail "summary bands: $(cat "$T/out")"
# the largest band is listed first, as it is on top of the chart
sed -n 7p "$T/out" | grep -q "(304)samples/main.xs/main" && ok || fail "top band: $(sed -n 7p "$T/out")"
expect 0 "" -- "$PROFDB" heap latest --bands 3
grep -q "3 bands shown.* summed into OTHER" "$T/out" && grep -q "^  OTHER " "$T/out" && ok ||
	fail "--bands 3: $(cat "$T/out")"

# --- CSV: one row per sample, the bands in key order --------------------------------
expect 0 "" -- "$PROFDB" heap 1 --csv
[ "$(wc -l <"$T/out")" = 18 ] && ok || fail "CSV rows: $(wc -l <"$T/out")"
head -1 "$T/out" | grep -q '^time,"(304)samples/main.xs/main",' && ok || fail "CSV header: $(head -1 "$T/out")"
# every row sums to the chart's stacked total; the peak row is 164 MB
awk -F, 'NR>1 { s=0; for (i=2;i<=NF;i++) s+=$i; if (s>m) m=s } END { exit !(m > 1.6e8 && m < 1.7e8) }' \
	"$T/out" && ok || fail "CSV peak"

# --- JSON -------------------------------------------------------------------------------
expect 0 "" -- "$PROFDB" heap 1 2 --json
json_ok "$T/out" && ok || fail "heap --json invalid: $(head -c 300 "$T/out")"
python3 "$S/tests/json_shapes.py" heaps "$T/out" && ok || fail "heap --json of two runs not as docs/json.md says"
"$PROFDB" heap 1 --json >"$T/one.json" && python3 "$S/tests/json_shapes.py" heap "$T/one.json" && ok ||
	fail "heap --json of one run not as docs/json.md says"
grep -q '"samples":17' "$T/out" && grep -q '"trace_dropped":14' "$T/out" && ok || fail "JSON fields"

# --- SVG: one panel per run on one scale -------------------------------------------------
expect 0 "" -- "$PROFDB" heap 1 2 -o "$T/c.svg"
xml_ok "$T/c.svg" && ok || fail "SVG is not well-formed XML: $(cat "$T/xmlerr")"
[ "$(grep -c 'class="panel"' "$T/c.svg")" = 2 ] && ok || fail "SVG panels"
[ "$(grep -c 'class="band"' "$T/c.svg")" = $((6 + 14)) ] && ok ||
	fail "SVG bands: $(grep -c 'class="band"' "$T/c.svg")"
[ "$(stat -c %a "$T/c.svg")" = 644 ] || [ "$(stat -c %a "$T/c.svg")" = 600 ] && ok || fail "SVG mode"

# --- a profile that ends in the middle of a sample ----------------------------------------
# (The HaLVM writer's status block records flushed sizes, which end after a
# sample; a cut sample reaches us when a sample outgrows the stdio buffer or
# a damaged status block is salvaged.  Here the file itself is cut.)
HP="$FIX/phases/phases-hd-i0.01.hp"
# cut 20 bytes before the end of a band line after byte 60000
CUT=$(awk -v want=60000 '{ n += length($0) + 1; if (n > want && $0 !~ /SAMPLE/) { print n - 20; exit } }' "$HP")
head -c "$CUT" "$HP" >"$T/cut.hp"
import cut "$FIX/phases/phases-p-hc.prof" "$T/cut.hp"                             # run 3
expect 0 "cut in the sample at" -- "$PROFDB" heap 3
WHOLE=$(grep -c '^END_SAMPLE' <(head -c "$CUT" "$HP"))
grep -q "^  $WHOLE samples over" "$T/out" && ok || fail "cut run: want $WHOLE samples: $(sed -n 3p "$T/out")"
expect 0 "" -- "$PROFDB" heap 3 -o "$T/cut.svg"
grep -q "cut in the sample at" "$T/cut.svg" && ok || fail "the SVG does not say the run was cut"

# --- hostile band names ---------------------------------------------------------------
{
	printf 'JOB "evil <b>job</b> \033[2J"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
	for t in 0.0 0.5 1.0; do
		printf 'BEGIN_SAMPLE %s\n' $t
		printf '<script>alert(1)</script>\t1000\n'
		printf '"quoted" & <tag attr='"'"'x'"'"'>\t2000\n'
		printf '\033]0;pwned\007\033[31mred\t3000\n'
		printf 'rtl\342\200\256gnp.exe\t4000\n'
		printf 'bad\377\376utf8\t5000\n'
		printf '=HYPERLINK("http://x")\t6000\n'
		printf 'END_SAMPLE %s\n' $t
	done
} >"$T/evil.hp"
import evil "$FIX/leak/leak-p-hc.prof" "$T/evil.hp"                              # run 4
for form in "" "--csv" "--json" "-o $T/evil.svg"; do
	# shellcheck disable=SC2086
	expect 0 "" -- "$PROFDB" heap 4 $form
	if LC_ALL=C grep -q $'[\001-\010\013-\037\177]' "$T/out" "$T/err"; then
		fail "heap 4 $form: a raw control character reached the output"
	else ok; fi
	LC_ALL=C grep -q $'\342\200\256\|\377' "$T/out" && fail "heap 4 $form: bidi or invalid byte passed" || ok
done
grep -q '<script>' "$T/evil.svg" && fail "SVG holds a raw <script>" || ok
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/evil.svg" && ok || fail "SVG does not show the name escaped"
xml_ok "$T/evil.svg" && ok || fail "hostile SVG not well-formed: $(cat "$T/xmlerr")"
"$PROFDB" heap 4 --json >"$T/out" && json_ok "$T/out" && ok || fail "hostile JSON invalid"
"$PROFDB" heap 4 --csv >"$T/out" && grep -q '"'"'"'=HYPERLINK(""http://x"")"' "$T/out" && ok ||
	fail "CSV formula not defused: $(cat "$T/out")"

# --- bad input and bad options -----------------------------------------------------------
import wrong "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.prof"               # run 5: a .prof on xvdp2
expect 1 "not a GHC heap profile" -- "$PROFDB" heap 5
head -c 3000 /dev/urandom >"$T/garbage.hp"
import garbage "$FIX/leak/leak-p-hc.prof" "$T/garbage.hp"                        # run 6
expect 1 "heap profile, line" -- "$PROFDB" heap 6
printf 'JOB "x"\nBEGIN_SAMPLE 0\nband\t-12\nEND_SAMPLE 0\n' >"$T/neg.hp"
import neg "$FIX/leak/leak-p-hc.prof" "$T/neg.hp"                                # run 7
expect 1 "line 3: negative band value" -- "$PROFDB" heap 7
printf 'JOB "x"\nBEGIN_SAMPLE 0\nband\t99999999999999999999999\nEND_SAMPLE 0\n' >"$T/big.hp"
import big "$FIX/leak/leak-p-hc.prof" "$T/big.hp"                                # run 8
expect 1 "does not fit in 64 bits" -- "$PROFDB" heap 8
expect 1 "no run 99" -- "$PROFDB" heap 99
expect 2 "--bands takes" -- "$PROFDB" heap 1 --bands x
expect 2 "--trace takes" -- "$PROFDB" heap 1 --trace 101
expect 2 "--trace takes" -- "$PROFDB" heap 1 --trace nan
expect 2 "--sort is" -- "$PROFDB" heap 1 --sort size
expect 2 "--csv takes one run" -- "$PROFDB" heap 1 2 --csv
expect 2 "choose one" -- "$PROFDB" heap 1 --csv --json
expect 2 "" -- "$PROFDB" heap
expect 1 "" -- "$PROFDB" heap 1 -o "$T/no/such/dir/c.svg"
[ ! -e "$T/no/such/dir/c.svg" ] && ok || fail "a half-written SVG was left"

# --- profdb top ----------------------------------------------------------------------------
expect 0 "" -- "$PROFDB" top 1
sed -n 6p "$T/out" | grep -Eq '^  histogram.step +Main +1500000 +46.6 +42.0 +46.6 +42.0$' && ok ||
	fail "top 1's first row: $(sed -n 6p "$T/out")"
# four lines of head, 20 rows, the line where GHC's table ends (its 8 rows are first) and
# the line under the table saying where the figures come from
[ "$(grep -c . "$T/out")" = $((4 + 20 + 2)) ] && ok || fail "top 1: 20 rows by default: $(cat "$T/out")"
sed -n 14p "$T/out" | grep -q "^  -- not in GHC's table" && ok || fail "top 1: where GHC's table ends: $(cat "$T/out")"
tail -1 "$T/out" | grep -q "GHC's own table for the 8 it lists; the rest summed over the call stacks" && ok ||
	fail "top 1: the line under the table: $(tail -1 "$T/out")"
expect 0 "" -- "$PROFDB" top 1 --by alloc -n 2
sed -n 6p "$T/out" | grep -q "histogram.step" && sed -n 7p "$T/out" | grep -q "^  samples " && ok ||
	fail "top --by alloc: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" top 1 --by inherited-time -n 1
sed -n 6p "$T/out" | grep -Eq '^  (MAIN|main) ' && ok || fail "top --by inherited-time: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" top 1 --module GHC.Float -n 0
[ "$(grep -c "GHC.Float" "$T/out")" = 1 ] && ok || fail "top --module: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" top 1 --json -n 0
json_ok "$T/out" && grep -q '"name":"histogram.step","module":"Main"' "$T/out" && ok || fail "top --json"
python3 "$S/tests/json_shapes.py" top "$T/out" && ok || fail "top --json not as docs/json.md says"
# -P columns, and a -pj profile, through the same command
import wordfreq "$FIX/wordfreq/wordfreq-P-hc.prof" "$FIX/wordfreq/wordfreq-P-hc.hp"           # run 9
expect 0 "" -- "$PROFDB" top 9 -n 1
sed -n 6p "$T/out" | grep -Eq 'countBigrams.*58.6 +18.9 .* 1876 +293442632$' && ok || fail "top -P: $(cat "$T/out")"
# GHC names a lambda countBigrams.\ : one backslash in every output, as
# the profile spells it (issue 33)
onebs() { # file, the name as spelled: there, and never with the backslash doubled
	grep -qF -- "$2" "$1" && ! grep -qF -- "${2//\\/\\\\}" "$1"
}
sed -n 6p "$T/out" | grep -q '^  countBigrams\.\\  *Main ' && ok || fail "top: countBigrams.\\ not as spelled: $(sed -n 6p "$T/out")"
pyname() { # file, python expression over d (the document) that must hold
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not eval(sys.argv[2]))' "$1" "$2"
}
"$PROFDB" top 9 --json >"$T/out" && pyname "$T/out" '"countBigrams.\\" in [c["name"] for c in d["cost_centres"]]' && ok ||
	fail "top --json: not the exact name countBigrams.\\: $(head -c 400 "$T/out")"
expect 0 "" -- "$PROFDB" heap 9
onebs "$T/out" '(327)countBigrams.\/countB...' && ok || fail "heap key: $(grep countBigrams "$T/out")"
expect 0 "" -- "$PROFDB" heap 9 --csv
head -1 "$T/out" | grep -qF ',"(327)countBigrams.\/countB...",' && onebs "$T/out" 'countBigrams.\/' && ok ||
	fail "heap --csv: $(head -1 "$T/out")"
"$PROFDB" heap 9 --json >"$T/out" && pyname "$T/out" '"(327)countBigrams.\\/countB..." in [b["name"] for b in d["bands"]]' && ok ||
	fail "heap --json: not the exact band name: $(head -c 400 "$T/out")"
expect 0 "" -- "$PROFDB" heap 9 -o "$T/wf.svg"
xml_ok "$T/wf.svg" && onebs "$T/wf.svg" '(327)countBigrams.\/countB...' && ok || fail "heap SVG key: $(grep -o 'countBigrams[^<]*' "$T/wf.svg" | head -3)"
expect 0 "" -- "$PROFDB" flame 9 -o "$T/wf-flame.svg"
xml_ok "$T/wf-flame.svg" && onebs "$T/wf-flame.svg" 'countBigrams.\&#10;1876 ticks' && ok ||
	fail "flame SVG: $(grep -o 'countBigrams[^<]*' "$T/wf-flame.svg" | head -3)"
"$PROFDB" flame 9 --json >"$T/out" && pyname "$T/out" '"countBigrams.\\" in [f["name"] for s in d["stacks"] for f in s["frames"]]' && ok ||
	fail "flame --json: not the exact name: $(grep -o '.\{40\}countBigrams.\{20\}' "$T/out" | head -3)"
"$PROFDB" export 9 --speedscope "$T/wf.speedscope.json" >/dev/null 2>&1 &&
	pyname "$T/wf.speedscope.json" '"Main.countBigrams.\\" in [f["name"] for f in d["shared"]["frames"]]' && ok ||
	fail "speedscope: not the exact name: $(grep -o '.\{20\}countBigrams.\{20\}' "$T/wf.speedscope.json" | head -3)"
"$PROFDB" report 9 --json >"$T/out" && pyname "$T/out" '"countBigrams.\\" in [n["name"] for n in d["tree"]["nodes"]] and "(327)countBigrams.\\/countB..." in [b["name"] for b in d["heap"]["bands"]]' && ok ||
	fail "report --json: not the exact names: $(head -c 400 "$T/out")"
"$PROFDB" diff 9 9 -n 0 --json >"$T/out" && pyname "$T/out" 'any(s["stack"].endswith(";Main.countBigrams.\\") for s in d["stacks"]) and "countBigrams.\\/countB..." in [b["band"] for b in d["bands"]]' && ok ||
	fail "diff --json: not the exact names: $(head -c 400 "$T/out")"
expect 0 "" -- "$PROFDB" diff 9 9 -n 0
onebs "$T/out" 'Main.countBigrams.\' && ok || fail "diff: $(grep countBigrams "$T/out")"
import leakpj "$FIX/leak/leak-pj.prof" "$FIX/leak/leak-p-hc.hp"                             # run 10
expect 0 "" -- "$PROFDB" top 10 -n 0 --json
json_ok "$T/out" && grep -q '"format":"json".*"name":"histogram.step","module":"Main"' "$T/out" && ok ||
	fail "top of -pj: $(cat "$T/out")"
# hostile cost-centre names
{
	printf '\tX Time and Allocation Profiling Report  (Final)\n\n\t   evil \033[2J +RTS -p\n\n'
	printf '\ttotal time  =        0.10 secs   (100 ticks @ 1000 us, 1 processor)\n'
	printf '\ttotal alloc =   1,000 bytes  (excludes profiling overheads)\n\n'
	printf 'COST CENTRE MODULE SRC no. entries %%time %%alloc %%time %%alloc\n\n'
	printf 'MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n'
	printf ' \033]0;pwned\007 Main a.hs:1 2 1 50.0 50.0 100.0 100.0\n'
	printf '  rtl\342\200\256gnp Bad\377Mod <no location info> 3 5 40.0 40.0 50.0 50.0\n'
	printf '  semi;colon<svg> Main x 4 1 10.0 10.0 10.0 10.0\n'
} >"$T/evil.prof"
import evilprof "$T/evil.prof" "$FIX/leak/leak-p-hc.hp"                                      # run 11
for form in "" "--json"; do
	# shellcheck disable=SC2086
	expect 0 "" -- "$PROFDB" top 11 $form
	LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" "$T/err" &&
		fail "top 11 $form: a raw control, bidi or invalid byte reached the output" || ok
done
json_ok "$T/out" && grep -q '\\u202e' "$T/out" && ok || fail "hostile top JSON: $(cat "$T/out")"
# the terminal shows the controls as escapes; the JSON is the exact text:
# a JSON reader gets ESC and BEL themselves, and the module's byte 0xff
# back as U+DCFF (surrogateescape)
expect 0 "" -- "$PROFDB" top 11
grep -qF '\x1b]0;pwned\x07 ' "$T/out" && grep -qF 'rtl\u202egnp ' "$T/out" && grep -qF 'Bad\xffMod' "$T/out" && ok ||
	fail "hostile top: controls not shown as escapes: $(cat "$T/out")"
"$PROFDB" top 11 --json >"$T/out" && python3 -c 'import json, sys
ccs = json.load(open(sys.argv[1]))["cost_centres"]
names = {c["name"] for c in ccs}
mods = {c["module"].encode("utf-8", "surrogateescape") for c in ccs}
sys.exit(not ("\x1b]0;pwned\x07" in names and "rtl\u202egnp" in names and b"Bad\xffMod" in mods))' "$T/out" && ok ||
	fail "hostile top --json: not the exact names: $(cat "$T/out")"
"$PROFDB" report 11 --json >"$T/out" && python3 -c 'import json, sys
nodes = json.load(open(sys.argv[1]))["tree"]["nodes"]
sys.exit(not any(n["module"].encode("utf-8", "surrogateescape") == b"Bad\xffMod" and n["name"] == "rtl\u202egnp"
                 for n in nodes))' "$T/out" && ! LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" && ok ||
	fail "hostile report --json: not the exact names, or not inert: $(head -c 600 "$T/out")"
# bad input and options
# --- profdb flame ---------------------------------------------------------------------------
expect 0 "" -- "$PROFDB" flame 9
[ "$(awk '{ s += $NF } END { print s }' "$T/out")" = 3204 ] && ok || fail "folded ticks do not sum to 3204"
grep -Evq '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$T/out" && fail "a folded line out of form: $(grep -Ev '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$T/out" | head -2)" || ok
grep -qx 'MAIN.MAIN;Main.main;Main.main.bigr;Main.countBigrams;Main.countBigrams.\\ 1876' "$T/out" && ok ||
	fail "folded: the countBigrams lambda, one backslash: $(grep countBigrams "$T/out")"
expect 0 "" -- "$PROFDB" flame 9 --by alloc
[ "$(awk '{ s += $NF } END { printf "%d", s }' "$T/out")" -gt 1500000000 ] && ok || fail "folded bytes"
expect 0 "" -- "$PROFDB" flame 1 -o "$T/f.svg"
xml_ok "$T/f.svg" && [ "$(grep -c 'class="frame"' "$T/f.svg")" -ge 10 ] && ok || fail "flame SVG"
# interactive as flamegraph.pl's (issue 33): its script inside, in CDATA; every
# frame's title its name, value and share, and the cost centre's SRC as the
# .prof spells it wherever the profile has one; no label longer than its box
# can hold by flame.c's estimate (the browser's measure: test_peers.sh)
python3 - "$T/f.svg" "$FIX/leak/leak-p-hc.prof" <<'PY' && ok || fail "flame SVG: script, titles or SRC"
import re, sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
scripts = root.findall(N + "script")
assert len(scripts) == 1 and "profsvcFlame" in scripts[0].text, "no script"
src = {}  # (module, name) -> SRC, from the .prof's call tree (names here hold no spaces)
tree = False
for line in open(sys.argv[2], encoding="utf-8"):
    f = line.split()
    if f[:3] == ["COST", "CENTRE", "MODULE"] and "no." in f:
        tree = True
    elif tree and len(f) >= 9:
        src[f[1] + "." + f[0]] = (f[0], f[2])
frames = root.findall(N + "g[@class='frame']")
assert len(frames) >= 10
for g in frames:
    t = g.find(N + "title").text.split("\n")
    name, want = src.get(t[0], (None, None))
    assert re.fullmatch(r"\d+ ticks, \d+\.\d\d%", t[1]), t
    assert want and len(t) == 3 and t[2] == want, (t, want)
    label = g.find(N + "text")
    full = label.get("data-full")
    assert (full is None) == (label.text == name) or full == name, (label.text, full)
    assert full is None or not label.text or label.text.endswith("\u2026"), label.text
print("ok")
PY
grep -qF '&#10;src/leak/Leak.hs:(23,1)-(24,57)</title>' "$T/f.svg" && ok || fail "flame SVG: histogram's source location: $(grep -o '<title>Main.histogram[^<]*' "$T/f.svg" | head -2)"
for form in "" "-o $T/evil-flame.svg"; do
	# shellcheck disable=SC2086
	expect 0 "" -- "$PROFDB" flame 11 $form
	LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" "$T/err" &&
		fail "flame 11 $form: a raw control, bidi or invalid byte reached the output" || ok
done
"$PROFDB" flame 11 >"$T/out" 2>&1
grep -q 'Main.semi\\x3bcolon<svg> ' "$T/out" && ok || fail "folded: ';' in a name not escaped: $(cat "$T/out")"
xml_ok "$T/evil-flame.svg" && ! grep -q '<svg> ' "$T/evil-flame.svg" && ok || fail "hostile flame SVG"
expect 2 "--by is" -- "$PROFDB" flame 1 --by speed
# --json: the same stacks and values as the folded lines
expect 0 "" -- "$PROFDB" flame 9 --json
json_ok "$T/out" && [ "$(sqlite3 :memory: "select sum(json_extract(value, '\$.value')) from json_each(json_extract(readfile('$T/out'), '\$.stacks'))")" = 3204 ] &&
	ok || fail "flame --json: not JSON or the values do not sum to 3204"
[ "$(sqlite3 :memory: "select json_array_length(json_extract(readfile('$T/out'), '\$.stacks'))")" = "$("$PROFDB" flame 9 | wc -l)" ] &&
	ok || fail "flame --json: not one stack per folded line"
expect 0 "" -- "$PROFDB" flame 11 --json
json_ok "$T/out" && grep -q 'semi;colon\\u003csvg\|semi;colon<svg>' "$T/out" && ! LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" &&
	ok || fail "hostile flame --json: $(head -c 300 "$T/out")"
expect 2 "one or the other" -- "$PROFDB" flame 1 --json -o "$T/x.svg"

# --- profdb diff -----------------------------------------------------------------------------
# the same program rebuilt: GHC renumbers -hc stacks and generated names;
# one cost centre got slower
sed -e 's/^(\([0-9]*\))/(9\1)/' -e 's/sat_s\([a-zA-Z0-9]*\)/sat_sQ\1/' "$FIX/phases/phases-hd-i0.01.hp" >"$T/rebuilt.hp"
sed 's/^\(   *phaseSet  *Main .* 6 \)  *15.3/\1 25.3/' "$FIX/phases/phases-p-hc.prof" >"$T/slower.prof"
grep -q ' 25.3 ' "$T/slower.prof" || { echo "test_view: could not make slower.prof"; exit 99; }
import before "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"            # run 12
import after "$T/slower.prof" "$T/rebuilt.hp"                                            # run 13
expect 0 "" -- "$PROFDB" diff 12 13
sed -n '/^call stacks/,/^$/p' "$T/out" | sed -n 3p | grep -Eq '^ +15.3 +25.3 +\+10.0 .*Main.phaseSet$' && ok ||
	fail "diff: the slower stack is not the top mover: $(cat "$T/out")"
grep -q "^heap bands: 51 in all" "$T/out" && ok || fail "diff: renamed bands not matched: $(grep 'heap bands' "$T/out")"
sed -n '/^heap bands/,$p' "$T/out" | awk 'NR > 2 && $1 != $2 { bad = 1 } END { exit bad }' && ok ||
	fail "diff: a rebuilt band's peak changed: $(sed -n '/^heap bands/,$p' "$T/out" | head -5)"
grep -q '<Main.sat_\*>' "$T/out" && ok || fail "diff: generated names not folded"
expect 0 "" -- "$PROFDB" flame 13 --against 12 -o "$T/diff-flame.svg"
xml_ok "$T/diff-flame.svg" && ok || fail "differential flame graph not well-formed"
grep -o '<title>Main.phaseSet&#10;[^<]*</title><rect[^>]*fill="#ff[0-9a-f]*"' "$T/diff-flame.svg" | grep -q '(+' && ok ||
	fail "differential flame: phaseSet is not red and grown: $(grep -o 'phaseSet&#10;[^<]*</title><rect[^>]*>' "$T/diff-flame.svg")"
expect 2 "needs -o" -- "$PROFDB" flame 13 --against 12
expect 0 "" -- "$PROFDB" diff 12 13 --json -n 0
json_ok "$T/out" && ok || fail "diff --json invalid"
python3 "$S/tests/json_shapes.py" diff "$T/out" && ok || fail "diff --json not as docs/json.md says"
expect 0 "" -- "$PROFDB" diff 11 11
LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" && fail "diff: a raw control reached the terminal" || ok
expect 2 "" -- "$PROFDB" diff 12
expect 2 "-n takes" -- "$PROFDB" diff 12 13 -n x

import hpasprof "$FIX/leak/leak-p-hc.hp" "$FIX/leak/leak-p-hc.hp"                            # run 14
expect 1 "it starts with JOB" -- "$PROFDB" top 14
expect 1 "no profile in common" -- "$PROFDB" diff 14 5     # only a .hp vs only a .prof
import killed "$FIX/phases/phases-killed-SIGKILL.prof" "$FIX/leak/leak-p-hc.hp"              # run 15
expect 1 "time profile" -- "$PROFDB" top 15
expect 2 "--by is" -- "$PROFDB" top 1 --by speed
expect 2 "-n takes" -- "$PROFDB" top 1 -n -3
expect 2 "" -- "$PROFDB" top
expect 1 "no run 99" -- "$PROFDB" top 99

# GHC's table disagrees with a tree edited under it (run 13's phaseSet): set aside, said so
expect 0 "not what the call tree sums to" -- "$PROFDB" top 13
grep -Eq '^  phaseSet +Main .* 25.3 ' "$T/out" && tail -1 "$T/out" | grep -q "GHC's table set aside" && ok ||
	fail "top 13: the tree's figures: $(cat "$T/out")"

# --- profdb report --json: the report's data ------------------------------------------------
expect 0 "" -- "$PROFDB" report 12 --json
json_ok "$T/out" && ok || fail "report --json is not JSON: $(head -c 300 "$T/out")"
[ "$(sqlite3 :memory: "select json_array_length(json_extract(readfile('$T/out'), '\$.tree.nodes')) > 10 and json_array_length(json_extract(readfile('$T/out'), '\$.heap.bands')) > 3")" = 1 ] &&
	ok || fail "report --json lacks the tree or the heap chart"
expect 0 "" -- "$PROFDB" report 11 --json
json_ok "$T/out" && ! grep -q '<svg>\|</' "$T/out" && ! LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\342\200\256\|\377' "$T/out" &&
	ok || fail "hostile report --json: $(head -c 300 "$T/out")"
expect 2 "one or the other" -- "$PROFDB" report 1 --json -o "$T/x.html"

# --- top is GHC's own table -----------------------------------------------------------------
# Every fixture with GHC's table of top cost centres at its head (-p, -P, -Pa, the heap-
# exhausted run, the SIGINTed one): top's first N rows, as a table and as JSON, are the
# table's N rows, in its order, with %time and %alloc as GHC printed them (and -P's ticks and
# bytes).  Summing the call stacks' rounded percentages instead was up to 0.5 off and left
# GHC's order at rank 6 (wordfreq-P-hc) to 13 (exprcalc-P); exprcalc-Pa lost the two cost
# centres no call reached.
tables=0
for f in "$FIX"/*/*.prof; do
	grep -Eq '^COST CENTRE .*%time +%alloc( +ticks +bytes)? *$' "$f" || continue
	n=$(awk '!st && /^COST CENTRE/ && !/ no\./ { st = 1; next } st && NF { n++; next } st && n { exit } END { print n + 0 }' "$f")
	import "$(basename "$f" .prof)" "$f" "$FIX/leak/leak-p-hc.hp"
	if "$PROFDB" top latest -n $((n + 1)) >"$T/top.txt" 2>"$T/err" &&
		"$PROFDB" top latest -n "$n" --json >"$T/top.json" 2>>"$T/err"; then
		python3 "$S/tests/ghc_table.py" "$f" "$T/top.json" "$T/top.txt" && ok || fail "top is not GHC's table"
	else
		fail "top of $(basename "$f"): $(cat "$T/err")"
	fi
	tables=$((tables + 1))
done
[ "$tables" = 8 ] && ok || fail "GHC's table in $tables fixtures, want 8 (-p, -P, -Pa, heap overflow, SIGINT)"

# --- a -p profile's flame graph says what it could not place -----------------------------------
expect 0 "" -- "$PROFDB" flame 1 -o "$T/f.svg"
grep -q '<text class="unplaced"[^>]*>-p profile: GHC rounded each call stack.s share to 0.1%; they sum to 100.2% of the time, and the widths' "$T/f.svg" &&
	ok || fail "flame of -p: no line on rounding: $(grep -o '<text class="unplaced".*' "$T/f.svg")"
expect 0 "" -- "$PROFDB" flame 9 -o "$T/f.svg"
grep -q 'class="unplaced"' "$T/f.svg" && fail "flame of -P (drawn from ticks): a line on rounding" || ok
# 900 ticks in main and 250 stacks of 0.04% (0.0 as GHC writes them): 10% cannot be placed
{
	printf '\tX Time and Allocation Profiling Report  (Final)\n\n\t   tiny +RTS -p\n\n'
	printf '\ttotal time  =        1.00 secs   (1000 ticks @ 1000 us, 1 processor)\n'
	printf '\ttotal alloc =   1,000 bytes  (excludes profiling overheads)\n\n'
	printf 'COST CENTRE MODULE SRC no. entries %%time %%alloc %%time %%alloc\n\n'
	printf 'MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n'
	printf ' main Main a.hs:1 2 1 90.0 100.0 100.0 100.0\n'
	for i in $(seq 3 252); do printf '  f%s Main a.hs:%s %s 1 0.0 0.0 0.0 0.0\n' "$i" "$i" "$i"; done
} >"$T/tiny.prof"
import tiny "$T/tiny.prof" "$FIX/leak/leak-p-hc.hp"
expect 0 "" -- "$PROFDB" flame latest -o "$T/f.svg"
xml_ok "$T/f.svg" && grep -q 'they sum to 90.0% of the time, so 10.0% of it (about 100 of 1000 ticks), in stacks rounded to 0.0%, is not drawn</text>' "$T/f.svg" &&
	ok || fail "flame: the time it could not place: $(grep -o '<text class="unplaced".*' "$T/f.svg")"
expect 0 "" -- "$PROFDB" flame latest --by alloc -o "$T/f.svg"
grep -q 'they sum to 100.0% of the allocation, and the widths' "$T/f.svg" && ok ||
	fail "flame --by alloc: $(grep -o '<text class="unplaced".*' "$T/f.svg")"
# --- heap charts as hp2ps draws them (issue 33) -------------------------------------------------
# the y axis says its unit ("bytes", as hp2ps's legend) and its ticks are
# round (a step of 1, 2 or 5 x 10^n, in kB/MB/GB as hp2ps's k/M); the header
# has hp2ps's "bytes x seconds" (compared with hp2ps's own in test_peers.sh)
heap_axes() { # svg: every panel's ticks round, labelled in one unit, the unit named
	python3 - "$1" <<'PY'
import math, re, sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
for axes in root.iter(N + "g"):
    if axes.get("class") != "axes":
        continue
    unit = [t for t in axes.iter(N + "text") if t.get("class") == "yunit"]
    assert len(unit) == 1 and unit[0].text == "bytes", "no y unit"
    ticks = [t for t in axes.iter(N + "text") if t.get("class") == "ytick"]
    vals = [float(t.get("data-value")) for t in ticks]
    assert len(vals) >= 3 and vals[0] == 0, vals
    step = vals[1]
    m = step / 10 ** math.floor(math.log10(step))
    assert min(abs(m - r) for r in (1, 2, 5)) < 1e-9, ("not 1, 2 or 5 x 10^n", step)
    units = set()
    for t, v in zip(ticks, vals):
        assert abs(v / step - round(v / step)) < 1e-9, (v, step)
        if v == 0:
            assert t.text == "0", t.text
            continue
        n, u = re.fullmatch(r"([0-9.]+) (kB|MB|GB)|([0-9]+)()", t.text).group(1, 2) if " " in t.text else (t.text, "")
        units.add(u)
        assert abs(float(n) * {"": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[u] - v) < 1e-6 * v, (t.text, v)
    assert len(units) == 1, units
print("ok")
PY
}
expect 0 "" -- "$PROFDB" heap 1 2 -o "$T/c.svg"
heap_axes "$T/c.svg" && grep -q '<text class="ytick"[^>]*>160 MB</text>' "$T/c.svg" && ok ||
	fail "heap SVG: the y axis: $(grep -o '<text class="y[a-z]*"[^>]*>[^<]*' "$T/c.svg" | head -12)"
grep -q '<text class="area"[^>]*>166,302,970 bytes x seconds</text>' "$T/c.svg" && ok ||
	fail "heap SVG: no bytes x seconds: $(grep -o '<text class="area"[^>]*>[^<]*' "$T/c.svg")"
# a chart of 1500 samples: its bands have no outline (it would be all one
# saw); a short one keeps a thin one; a band whose name the key cuts has
# the whole name as its key entry's title
LONG="(42)a/band/whose/name/is/much/longer/than/the/key/has/room/for/at/all"
python3 -c '
import sys
long = sys.argv[1]
print("JOB \"many\"\nDATE \"today\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"")
for k in range(1500):
    t = k * 0.01
    print("BEGIN_SAMPLE %.2f" % t)
    print("%s\t%d" % (long, 1000 + 37 * (k % 50)))
    print("short\t%d" % (5000 + 11 * (k % 90)))
    print("END_SAMPLE %.2f" % t)' "$LONG" >"$T/many.hp"
import many "$FIX/leak/leak-p-hc.prof" "$T/many.hp"
expect 0 "" -- "$PROFDB" heap latest -o "$T/many.svg"
python3 - "$T/many.svg" "$T/c.svg" "$LONG" <<'PY' && ok || fail "heap SVG: outlines or the key's titles"
import sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
def bands(f):
    return [p for p in E.parse(f).getroot().iter(N + "path") if p.get("class") == "band"]
many, few = bands(sys.argv[1]), bands(sys.argv[2])
assert len(many) == 2 and all(p.get("stroke") == "none" or float(p.get("stroke-width", "1")) <= 0.5 for p in many)
assert all(p.get("stroke") == "none" for p in many), "1500 samples, outlined"
assert all(p.get("stroke") != "none" and float(p.get("stroke-width")) <= 0.5 for p in few), "a short chart lost its outlines"
entries = [g for g in E.parse(sys.argv[1]).getroot().iter(N + "g") if g.get("class") == "key-entry"]
cut = [g for g in entries if g.find(N + "text").text != g.find(N + "title").text]
assert len(entries) == 2 and len(cut) == 1, len(cut)
assert cut[0].find(N + "title").text == sys.argv[3] and cut[0].find(N + "text").text.endswith("..."), cut[0].find(N + "text").text
assert sys.argv[3].startswith(cut[0].find(N + "text").text[:-3])
print("ok")
PY
heap_axes "$T/many.svg" && grep -q '>7 kB</text>\|>8 kB</text>' "$T/many.svg" && ok ||
	fail "heap SVG of many samples: the y axis: $(grep -o '<text class="ytick"[^>]*>[^<]*' "$T/many.svg")"
# --- several runs' heaps: a band one colour in every panel (as the compare
# page has it), though its rank differs from run to run; one run's panel
# keeps hp2ps's colours by rank
import hc-early "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-killed-SIGKILL.hp"
HC1=$("$PROFDB" query runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')
import hc-late "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-p-hc.hp"
expect 0 "" -- "$PROFDB" heap "$HC1" latest -o "$T/two.svg"
python3 - "$T/two.svg" <<'PY' && ok || fail "heap A B -o: a band of two colours"
import sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
panels = [g for g in root.iter(N + "g") if g.get("class") == "panel"]
assert len(panels) == 2, len(panels)
def fills(p):
    key = {e.find(N + "title").text: e.find(N + "rect").get("fill")
           for e in p.iter(N + "g") if e.get("class") == "key-entry"}
    band = {b.find(N + "title").text.split(" \u2014 ")[0]: b.get("fill")
            for b in p.iter(N + "path") if b.get("class") == "band"}
    return key, band
(k0, b0), (k1, b1) = fills(panels[0]), fills(panels[1])
both = sorted(set(k0) & set(k1))
assert len(both) >= 5, both
bad = [n for n in both if k0[n] != k1[n] or b0[n] != b1[n] or k0[n] != b0[n]]
assert not bad, "two colours: %s" % [(n, k0[n], k1[n]) for n in bad[:4]]
# the ranks differ between the runs (else the check proves nothing)
order = lambda k: [n for n in k if n in both]
assert order(k0) != order(k1), "the same order in both runs"
print("ok")
PY
"$PROFDB" heap "$HC1" -o "$T/one-a.svg" >/dev/null 2>&1
python3 - "$T/one-a.svg" <<'PY' && ok || fail "heap RUN -o: not hp2ps's colours by rank"
import sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
keys = [e.find(N + "rect").get("fill") for e in E.parse(sys.argv[1]).getroot().iter(N + "g") if e.get("class") == "key-entry"]
assert keys[:3] == ["#1f77b4", "#aec7e8", "#ff7f0e"], keys[:3]
PY

# --- diff of two heap profiles of different kinds warns, as the compare page
# does (runs 1 and 2: -hc and -hd); of one kind it does not
expect 0 "different kinds: run 1's is by cost-centre stacks (-hc), run 2's by closure descriptions (-hd)" -- "$PROFDB" diff 1 2 -n 1
"$PROFDB" report 2 --against 1 -o "$T/k.html" >/dev/null 2>&1
grep -q "$(sed -n 's/^profdb: warning: //p' "$T/err" | sed 's/'"'"'/\&#39;/g')" "$T/k.html" && ok ||
	fail "diff's warning is not the compare page's: $(cat "$T/err")"
expect 0 "" -- "$PROFDB" diff "$HC1" latest -n 1
grep -q "different kinds" "$T/err" && fail "diff of two -hc runs warns: $(cat "$T/err")" || ok

# --- a heap profile of one sample (a short run's eventlog, -hT): no empty
# chart; the summary, the SVG and the report say so, the report lists its bands
"$MKDISK" --eventlog "$S/tests/data/ghc-eventlog/churn-l-hT.eventlog" "$T/one.disk" >/dev/null &&
	"$PROFDB" import-disk --name one-sample --eventlog "$T/one.disk" >/dev/null || fail "import of churn-l-hT"
expect 0 "" -- "$PROFDB" heap latest
grep -q "^  1 sample only, at 0.434231 s (a chart needs two): 33M$" "$T/out" && ok || fail "heap of one sample: $(sed -n 3p "$T/out")"
expect 0 "" -- "$PROFDB" heap latest -o "$T/one.svg"
grep -q '>one sample only (0.434 s): no chart</text>' "$T/one.svg" && xml_ok "$T/one.svg" && ok || fail "heap -o of one sample: no note"
"$PROFDB" report latest -o "$T/one.html" >/dev/null 2>&1
grep -q 'id="heap-note" data-samples="1">The heap profile has one sample only, at 0.434 s' "$T/one.html" &&
	grep -q '<tr><td>ghc-prim:GHC.Types.:</td><td class="num">24 MB (24,326,280 bytes)</td></tr>' "$T/one.html" &&
	! grep -q 'id="heap-data"' "$T/one.html" && ok || fail "report of one heap sample: $(grep -o 'id="heap-note".\{0,300\}' "$T/one.html")"

# --- stack samples shown as samples (top --samples), focus and ignore, the
# sandwich: a run of known stacks (tests/samples_gen.c's known_stream: 1000
# samples of 10 or 20 ms of CPU time, 13 s in all; memmove under a recursive
# msort 400 (4 s), by_key under msort 200 (2 s), work 300 (6 s), [idle] 100
# (1 s); 100 Hz asked, 50 kept, 7 lost, 2 vCPUs), and a .prof run cut too
KN=$("$B/tests/samples_gen" store "$T/p.db" known known) && ok || fail "samples_gen store: $KN"
row() { grep -E "^  $1 " "$T/out" | head -1 | sed 's/  */ /g'; }
expect 0 "" -- "$PROFDB" top "$KN" --samples
grep -q "^  sampled at 100 Hz (lowered to 50 Hz by the sampler's budget), 1000 samples (7 lost), 2 vCPUs" "$T/out" &&
	grep -q "^  shares by CPU time" "$T/out" && ok || fail "top --samples: the header: $(sed -n 2,3p "$T/out")"
! grep -Eqi "entries|%alloc|ticks|bytes|total alloc" "$T/out" && ok || fail "top --samples: GHC's columns: $(cat "$T/out")"
# name, module (the ELF file's name: hostile text shown inert), self, total, self%, total%, source
[ "$(row work)" = ' work known<b>&\x1b[1m 300 300 46.2 46.2 known.c:20' ] &&
	[ "$(row memmove)" = ' memmove libc.so.6 400 400 30.8 30.8 ' ] &&
	[ "$(row main)" = ' main known<b>&\x1b[1m 0 900 0.0 92.3 known.c:10' ] &&
	[ "$(row msort)" = ' msort known<b>&\x1b[1m 0 600 0.0 46.2 known.c:30' ] && ok ||
	fail "top --samples rows: $(cat "$T/out")"
# the first row by self time; by total (--by inherited-time) main first
sed -n 6p "$T/out" | grep -q "^  work " && ok || fail "top --samples: first row $(sed -n 6p "$T/out")"
expect 0 "" -- "$PROFDB" top "$KN" --samples --by inherited-time -n 2
sed -n 6p "$T/out" | grep -q "^  main " && [ "$(grep -c 'known.c' "$T/out")" = 2 ] && ok || fail "top --samples --by inherited-time: $(cat "$T/out")"
expect 2 "time (self) or inherited-time" -- "$PROFDB" top "$KN" --samples --by alloc
expect 0 "" -- "$PROFDB" top "$KN" --samples --json -n 0
python3 "$S/tests/json_shapes.py" top_samples "$T/out" && ok || fail "top --samples --json not as docs/json.md says"
pyname "$T/out" 'd["sampling"]["hz_asked"] == 100 and d["sampling"]["hz_kept"] == 50 and d["sampling"]["lost"] == 7 and d["sampling"]["weighed_by"] == "cpu_time" and d["selection"]["ns"] == 13 * 10**9 and {f["name"]: (f["self_samples"], f["total_samples"], f["total_ns"]) for f in d["functions"]} == {"work": (300, 300, 6e9), "memmove": (400, 400, 4e9), "by_key": (200, 200, 2e9), "[idle]": (100, 100, 1e9), "main": (0, 900, 12e9), "msort": (0, 600, 6e9)} and d["functions"][0]["module"] == "/srv/known<b>&\x1b[1m"' && ok ||
	fail "top --samples --json figures: $(head -c 600 "$T/out")"
# total % right under recursion: memmove's and by_key's total never below their self
pyname "$T/out" 'all(f["total_pct"] >= f["self_pct"] for f in d["functions"])' && ok || fail "top --samples: a total below its self"
# focus keeps exactly the samples with a matching frame; ignore drops them; together
expect 0 "" -- "$PROFDB" top "$KN" --samples --focus by_key --json
pyname "$T/out" 'd["selection"]["kept_samples"] == 200 and d["selection"]["kept_ns"] == 2 * 10**9 and sorted(f["name"] for f in d["functions"]) == ["by_key", "main", "msort"]' && ok ||
	fail "--focus by_key: $(head -c 400 "$T/out")"
expect 0 "" -- "$PROFDB" top "$KN" --samples --ignore 'idle|work' --json
pyname "$T/out" 'd["selection"]["kept_samples"] == 600' && ok || fail "--ignore 'idle|work': $(head -c 400 "$T/out")"
expect 0 "" -- "$PROFDB" top "$KN" --samples --focus msort --ignore memmove
grep -q "kept by --focus 'msort' --ignore 'memmove': 200 of 1000 samples, 15.4% of the time" "$T/out" && ok ||
	fail "--focus with --ignore: $(sed -n 4p "$T/out")"
expect 0 "" -- "$PROFDB" top "$KN" --samples --focus memmove --focus '^work$' --json
pyname "$T/out" 'd["selection"]["kept_samples"] == 700 and d["selection"]["focus"] == ["memmove", "^work$"]' && ok || fail "two --focus: $(head -c 300 "$T/out")"
expect 2 "--focus '(':" -- "$PROFDB" top "$KN" --samples --focus '('
expect 2 "--ignore '\[':" -- "$PROFDB" flame "$KN" --ignore '['
# the flame graph's stacks, the same cut (ticks: microseconds of CPU time)
expect 0 "" -- "$PROFDB" flame "$KN" --samples --focus by_key
[ "$(cat "$T/out")" = "main;msort;msort;by_key 2000000" ] && ok || fail "flame --focus by_key: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" flame "$KN" --samples --ignore 'idle|work' --ignore by_key
[ "$(cat "$T/out")" = "main;msort;msort;msort;memmove 4000000" ] && ok || fail "flame --ignore: $(cat "$T/out")"
expect 1 "no call stack is left" -- "$PROFDB" flame "$KN" --samples --focus nothing-matches
# the sandwich: msort's callers and callees, its recursion left out
expect 0 "" -- "$PROFDB" top "$KN" --samples --sandwich msort
grep -q "^  sandwich of msort: self 0 samples 0.0%, total 600 samples 46.2%" "$T/out" &&
	[ "$(grep -A1 '^  CALLERS' "$T/out" | tail -1 | sed 's/  */ /g')" = ' main known<b>&\x1b[1m 600 46.2 100.0 known.c:10' ] &&
	[ "$(grep -A2 '^  CALLEES' "$T/out" | tail -2 | sed 's/  */ /g' | tr '\n' '|')" = ' memmove libc.so.6 400 30.8 66.7 | by_key known<b>&\x1b[1m 200 15.4 33.3 known.c:40|' ] && ok ||
	fail "top --sandwich msort: $(sed -n '/sandwich/,$p' "$T/out")"
expect 0 "" -- "$PROFDB" top "$KN" --samples --sandwich work --json
python3 "$S/tests/json_shapes.py" top_sandwich "$T/out" && pyname "$T/out" '[(e["name"], e["samples"]) for e in d["sandwich"]["callers"]] == [("main", 300)] and [(e["name"], e["samples"], e["function_pct"]) for e in d["sandwich"]["callees"]] == [("(self)", 300, 100.0)]' && ok ||
	fail "top --sandwich work --json: $(head -c 600 "$T/out")"
expect 2 "no function 'nosuch'" -- "$PROFDB" top "$KN" --samples --sandwich nosuch
expect 2 "--sandwich is for" -- "$PROFDB" top 1 --sandwich main
# a .prof run: focus and ignore cut its call tree (GHC's table is then set aside)
expect 0 "" -- "$PROFDB" top 1 -n 0 --json
pyname "$T/out" 'd["ghc_table"] == "used"' && ok || fail "top 1: GHC's table used"
expect 0 "" -- "$PROFDB" top 1 -n 0 --json --focus histogram
python3 - "$T/out" <<'PY' && ok || fail "top --focus of a .prof: $(head -c 600 "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
cc = {c["name"]: c for c in d["cost_centres"]}
assert d["ghc_table"] == "none", d["ghc_table"]
assert abs(cc["histogram.step"]["time"] - 46.6) < 0.3, cc["histogram.step"]
assert all("histogram" in n or c["time"] == 0 or c["inherited_time"] >= c["time"] for n, c in cc.items())
assert not any(n.startswith("samples") for n in cc), sorted(cc)
PY
expect 0 "" -- "$PROFDB" top 1 --focus histogram --ignore 'histogram.step'
grep -q "the stacks kept hold" "$T/out" && ! grep -q "^  histogram.step " "$T/out" && ok || fail "top --focus --ignore of a .prof: $(cat "$T/out")"
"$PROFDB" flame 1 >"$T/all.folded" && "$PROFDB" flame 1 --ignore histogram.step >"$T/ign.folded" &&
	[ "$(grep -c 'histogram.step' "$T/ign.folded")" = 0 ] &&
	[ "$(grep -v 'histogram.step' "$T/all.folded")" = "$(cat "$T/ign.folded")" ] && ok ||
	fail "flame --ignore of a .prof: not the other stacks: $(diff "$T/all.folded" "$T/ign.folded" | head)"

finish test_view
