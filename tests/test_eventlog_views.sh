#!/bin/bash
# test_eventlog_views.sh - what profdb shows of a run's GHC eventlog, on
# real GHC 9.0.2 logs (tests/data/ghc-eventlog, tests/data/eventlog) put
# into runs as a HaLVM guest's raw images (halvm-mkdisk, import-disk):
#   - profdb events: ghc-events show's text byte for byte (the recorded
#     text when ghc-events is not installed), --type's lines those of
#     ghc-events' text, --json as documented and agreeing with the text;
#   - profdb gc: GC starts equal ghc-events' "starting GC" lines;
#     collections, generations, pauses and their percentiles, peaks and
#     elapsed time recomputed from ghc-events' text;
#   - profdb heap of a run with no .hp: the eventlog's heap samples, with
#     the same bands (hp2ps's key) as the .hp the same run wrote;
#   - a crashed guest's eventlog (halvm-mkdisk --crash-at): export cuts it
#     at its last whole event and says so, ghc-events reads the cut file,
#     events and gc read it with a warning;
#   - bad input: a run without an eventlog, a damaged eventlog (the
#     message names the damage's offset), an unknown --type.
#
# Owns only these checks; calls the built programs through tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"

DUMP="$B/tests/eventlog_dump"
[ -x "$DUMP" ] || { echo "tests/eventlog_dump not built (make check builds it)"; exit 99; }
GE=
need ghc-events && GE=$(command -v ghc-events) || echo "SKIP: ghc-events: the recorded texts stand in"
shape() { python3 "$S/tests/json_shapes.py" "$1" "$T/out" && ok || fail "$2: JSON not as documented: $(head -c 400 "$T/out")"; }
jx() { sqlite3 :memory: "select json_extract(readfile('$T/out'), '$1')"; }
jn() { sqlite3 :memory: "select json_array_length(readfile('$T/out'), '$1')"; }

# run_of NAME FILE [mkdisk options]: a run whose only device is FILE as its eventlog
run_of() {
	local name=$1 file=$2; shift 2
	"$MKDISK" --eventlog "$@" "$file" "$T/$name.disk" >/dev/null &&
		"$PROFDB" import-disk --name "$name" --eventlog "$T/$name.disk" >/dev/null 2>"$T/import.err" ||
		{ echo "import of $name failed: $(cat "$T/import.err")"; exit 99; }
	sqlite3 "$PROFSVC_DB" "select max(run_id) from runs"
}
# shown FILE OUT: ghc-events show's text of FILE (or the recorded one, FILE's .ghc-events-show.gz)
shown() {
	if [ -n "$GE" ]; then
		"$GE" show "$1" >"$2" 2>"$T/ge.err" && [ ! -s "$T/ge.err" ]
	else
		local rec=${1%.eventlog}.ghc-events-show.gz
		[ -e "$rec" ] && gunzip -c "$rec" >"$2"
	fi
}

# gc_from_text TEXT: profdb gc --json's figures recomputed from ghc-events show's lines
gc_from_text() {
	python3 - "$1" <<'EOF'
import math, re, sys
starts = coll = 0; gens = {}; live = heap = last = 0
open_at = {}; spans = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.match(r"(\d+): (?:cap (\d+): )?(.*)$", line.rstrip("\n"))
    if not m:
        continue
    t, cap, text = int(m.group(1)), m.group(2), m.group(3)
    last = max(last, t)
    if text == "starting GC":
        starts += 1; open_at[cap] = t
    elif text == "finished GC" and cap in open_at:
        spans.append((open_at.pop(cap), t))
    elif text.startswith("GC stats for heap capset"):
        coll += 1
        g = int(re.search(r"generation (\d+)", text).group(1)); gens[g] = gens.get(g, 0) + 1
    elif (s := re.match(r"size of heap capset \d+: (\d+) bytes", text)):
        heap = max(heap, int(s.group(1)))
    elif (s := re.match(r"live data in heap capset \d+: (\d+) bytes", text)):
        live = max(live, int(s.group(1)))
# a pause: a window in which any capability collects
spans.sort(); pauses = []
for a, b in spans:
    if pauses and a <= pauses[-1][1]:
        pauses[-1][1] = max(pauses[-1][1], b)
    else:
        pauses.append([a, b])
ls = sorted(b - a for a, b in pauses)
rank = lambda p: ls[max(1, math.ceil(p / 100 * len(ls))) - 1] if ls else 0
by_gen = [gens.get(i, 0) for i in range(max(gens) + 1)] if gens else [0]
print("gc_starts %d collections %d by_generation %s pauses %d total %d longest %d p50 %d p90 %d p99 %d elapsed %d live %d heap %d"
      % (starts, coll or starts, by_gen, len(ls), sum(ls), max(ls, default=0), rank(50), rank(90), rank(99),
         last, live, heap))
EOF
}
gc_from_json() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("gc_starts %d collections %d by_generation %s pauses %d total %d longest %d p50 %d p90 %d p99 %d elapsed %d live %d heap %d"
      % (d["gc_starts"], d["collections"], d["by_generation"], d["pauses"], d["total_pause_ns"], d["longest_pause_ns"],
         d["p50_ns"], d["p90_ns"], d["p99_ns"], d["elapsed_ns"], d["peak_live_bytes"], d["peak_heap_bytes"]))' "$1"
}
# bands FILE: a heap --json document's bands, one "name total peak other" a line
bands() { python3 -c 'import json,sys; [print(b["name"], b["total"], b["peak"], b["other"]) for b in json.load(open(sys.argv[1]))["bands"]]' "$1"; }

# --- every fixture: events, gc and heap against ghc-events and the run's .hp --------------
for EV in "$S/tests/data/ghc-eventlog/churn-l-hT.eventlog" "$S/tests/data/eventlog/evprog.eventlog" \
	"$S/tests/data/eventlog/threaded.eventlog"; do
	base=$(basename "$EV" .eventlog)
	RUN=$(run_of "$base" "$EV")
	if ! shown "$EV" "$T/$base.show"; then
		fail "$base: no ghc-events show text: $(cat "$T/ge.err" 2>/dev/null)"
		continue
	fi
	# the whole text, byte for byte
	expect 0 "" -- "$PROFDB" events "$RUN"
	same "$T/out" "$T/$base.show"
	# --type: the lines of those types, as ghc-events words and orders them
	expect 0 "" -- "$PROFDB" events "$RUN" --type GC_START
	grep -E '^[0-9]+: (cap [0-9]+: )?starting GC$' "$T/$base.show" >"$T/$base.starts"
	same "$T/out" "$T/$base.starts"
	NSTARTS=$(wc -l <"$T/$base.starts")
	[ "$NSTARTS" -gt 0 ] && ok || fail "$base: ghc-events shows no GC"
	expect 0 "" -- "$PROFDB" events "$RUN" --type gc_start --type 10
	grep -E '^[0-9]+: (cap [0-9]+: )?(starting|finished) GC$' "$T/$base.show" >"$T/$base.gcs"
	same "$T/out" "$T/$base.gcs"
	# --json: as documented, its lines the text's, its count the text's
	expect 0 "" -- "$PROFDB" events "$RUN" --json; shape events "$base: events --json"
	python3 -c 'import json,sys; [print(e["line"]) for e in json.load(open(sys.argv[1]))["events"]]' "$T/out" >"$T/$base.jlines"
	sed -n '/^Events:$/,$p' "$T/$base.show" | sed '1d;$d' >"$T/$base.lines"
	same "$T/$base.jlines" "$T/$base.lines"
	[ "$(jx '$.whole') $(jx '$.cut_bytes') $(jx '$.bytes')" = "1 0 $(stat -c %s "$EV")" ] && ok ||
		fail "$base: events --json: whole $(jx '$.whole'), cut $(jx '$.cut_bytes'), bytes $(jx '$.bytes')"
	expect 0 "" -- "$PROFDB" events "$RUN" --json --type HEAP_SIZE
	[ "$(jx '$.events[0].name')" = HEAP_SIZE ] && [ "$(jn '$.events')" = "$(grep -c ': size of heap capset' "$T/$base.show")" ] && ok ||
		fail "$base: events --json --type HEAP_SIZE: $(head -c 300 "$T/out")"
	# gc: the GC starts are ghc-events' count; every figure recomputed from its text
	expect 0 "" -- "$PROFDB" gc "$RUN" --json; shape gc "$base: gc --json"
	[ "$(jx '$.gc_starts')" = "$NSTARTS" ] && ok || fail "$base: gc_starts $(jx '$.gc_starts'), ghc-events $NSTARTS"
	cp "$T/out" "$T/$base.gc.json"
	want=$(gc_from_text "$T/$base.show") got=$(gc_from_json "$T/$base.gc.json")
	[ "$got" = "$want" ] && ok || fail "$base: gc: profdb says '$got', ghc-events' text '$want'"
	COLL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["collections"])' "$T/$base.gc.json")
	LIVE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_live_bytes"])' "$T/$base.gc.json")
	expect 0 "" -- "$PROFDB" gc "$RUN"
	grep -q "^  GC starts       $NSTARTS$" "$T/out" && grep -q "^  collections     $COLL\b" "$T/out" &&
		grep -q "^  pauses .*longest" "$T/out" && grep -q "^  percentiles     p50 .* p90 .* p99 " "$T/out" &&
		grep -q "^  GC share  *[0-9.]*% of" "$T/out" && grep -q "^  peak live data  .*($LIVE bytes)" "$T/out" &&
		ok || fail "$base: gc's text: $(cat "$T/out")"
	# heap: no .hp, so the eventlog's samples, the same bands as the .hp the run wrote
	HP=${EV%.eventlog}.hp
	if [ -e "$HP" ]; then
		"$MKDISK" --hp "$HP" "$T/$base.hp.disk" >/dev/null && "$PROFDB" import-disk --name "$base-hp" --hp "$T/$base.hp.disk" >/dev/null 2>&1 || fail "$base: import of its .hp"
		HPRUN=$(sqlite3 "$PROFSVC_DB" "select max(run_id) from runs")
		expect 0 "" -- "$PROFDB" heap "$HPRUN" --json; bands "$T/out" >"$T/$base.hp.bands"
		expect 0 "" -- "$PROFDB" heap "$RUN" --json; shape heap "$base: heap --json from the eventlog"; bands "$T/out" >"$T/$base.el.bands"
		[ -s "$T/$base.hp.bands" ] && same "$T/$base.el.bands" "$T/$base.hp.bands"
		expect 0 "" -- "$PROFDB" heap "$RUN" -o "$T/$base.svg"
		xml_ok "$T/$base.svg" && ok || fail "$base: heap -o from the eventlog: $(cat "$T/xmlerr")"
	else
		echo "NOTE: no $HP beside $EV: its heap bands are not compared"
	fi
done

# --- a .hp disk the guest never wrote is no .hp: the eventlog's samples are drawn ---------------
EV="$S/tests/data/ghc-eventlog/churn-l-hT.eventlog"
truncate -s 1M "$T/zero.disk"
"$MKDISK" --eventlog "$EV" "$T/ev.disk" >/dev/null
"$PROFDB" import-disk --force --name unwritten-hp --hp "$T/zero.disk" --eventlog "$T/ev.disk" >/dev/null 2>&1 || fail "import-disk of an unwritten .hp beside an eventlog"
expect 0 "" -- "$PROFDB" heap latest --json; bands "$T/out" >"$T/unwritten.bands"
same "$T/unwritten.bands" "$T/churn-l-hT.hp.bands"
# the report draws them too
expect 0 "" -- "$PROFDB" report latest -o "$T/r.html"
grep -q 'ghc-prim:GHC.Types.:' "$T/r.html" && ok || fail "the report of a run with an eventlog and no .hp draws no heap band"

# --- a crashed guest: the flushed prefix cut at its last whole event -------------------------
EV="$S/tests/data/ghc-eventlog/churn-l-hT.eventlog"
CUT=30011
CR=$(run_of crashed "$EV" --crash-at $CUT)
FLUSHED=$(sqlite3 "$PROFSVC_DB" "select file_size from devices where run_id = $CR and closed = 0")
head -c "$FLUSHED" "$EV" >"$T/flushed.eventlog"
WHOLE=$("$DUMP" counts "$T/flushed.eventlog" | sed -n 's/^whole_prefix //p')
[ -n "$FLUSHED" ] && [ -n "$WHOLE" ] && [ "$WHOLE" -lt "$FLUSHED" ] && ok ||
	fail "the crashed guest flushed '$FLUSHED' bytes, whole events end at '$WHOLE'"
expect 0 "cut at the last whole event: $WHOLE of $FLUSHED bytes" -- "$PROFDB" export "$CR" --eventlog "$T/cut.eventlog"
[ "$(stat -c %s "$T/cut.eventlog")" = "$WHOLE" ] && cmp -s -n "$WHOLE" "$T/cut.eventlog" "$EV" && ok ||
	fail "the cut export is not the log's first $WHOLE bytes"
if [ -n "$GE" ]; then
	"$GE" show "$T/cut.eventlog" >"$T/cut.show" 2>"$T/cut.err" && [ ! -s "$T/cut.err" ] && ok ||
		fail "ghc-events show on the cut export: $(head -3 "$T/cut.err")"
	expect 0 "not closed by the guest" -- "$PROFDB" events "$CR"
	grep -q "cut at the last whole event: $WHOLE of $FLUSHED bytes" "$T/err" && ok || fail "events' warning: $(cat "$T/err")"
	# ghc-events shows a log without its end marker as a whole one
	same "$T/out" "$T/cut.show"
	expect 0 "not closed by the guest" -- "$PROFDB" gc "$CR" --json; shape gc "gc --json of a crashed guest"
	[ "$(jx '$.whole')" = 0 ] && [ "$(gc_from_json "$T/out")" = "$(gc_from_text "$T/cut.show")" ] && ok ||
		fail "gc of the crashed guest: '$(gc_from_json "$T/out")', ghc-events' text '$(gc_from_text "$T/cut.show")'"
	expect 0 "" -- "$PROFDB" events "$CR" --json
	[ "$(jx '$.whole')" = 0 ] && ok || fail "events --json of a crashed guest: whole $(jx '$.whole')"
fi

# --- bad input --------------------------------------------------------------------------------
"$MKDISK" --hp "$S/tests/data/ghc-eventlog/churn-l-hT.hp" "$T/only-hp.disk" >/dev/null &&
	"$PROFDB" import-disk --name only-hp --hp "$T/only-hp.disk" >/dev/null 2>&1 || fail "import of a .hp alone"
NOEV=$(sqlite3 "$PROFSVC_DB" "select max(run_id) from runs")
expect 1 "run $NOEV has no .eventlog device (xvdp3)" -- "$PROFDB" events "$NOEV"
expect 1 "run $NOEV has no .eventlog device (xvdp3)" -- "$PROFDB" gc "$NOEV" --json
[ ! -s "$T/out" ] && ok || fail "gc --json of a run without an eventlog printed: $(cat "$T/out")"
expect 1 "no run" -- "$PROFDB" events 9999
expect 2 "--type takes an event type's name" -- "$PROFDB" events "$NOEV" --type NO_SUCH_EVENT
expect 2 "usage" -- "$PROFDB" gc
# damaged: an undeclared event type where an event starts, past the header
head -c 20000 "$EV" >"$T/part.eventlog"
AT=$("$DUMP" counts "$T/part.eventlog" | sed -n 's/^whole_prefix //p')
cp "$EV" "$T/damaged.eventlog"
printf '\377\376' | dd of="$T/damaged.eventlog" bs=1 seek="$AT" conv=notrunc status=none
DMG=$(run_of damaged "$T/damaged.eventlog")
"$DUMP" counts "$T/damaged.eventlog" >/dev/null 2>"$T/dump.err"
grep -q "offset $AT: " "$T/dump.err" && ok || fail "the decoder's word on the damage: $(cat "$T/dump.err")"
expect 1 "run $DMG: eventlog damaged: offset $AT: " -- "$PROFDB" events "$DMG"
[ ! -s "$T/out" ] && ok || fail "events of a damaged eventlog printed $(wc -c <"$T/out") bytes"
expect 1 "run $DMG: eventlog damaged: offset $AT: " -- "$PROFDB" gc "$DMG"
expect 1 "run $DMG: eventlog damaged: offset $AT: " -- "$PROFDB" heap "$DMG"
# not an eventlog at all (forced in): the header's first marker is refused, at offset 0
"$MKDISK" --eventlog "$S/tests/data/ghc-eventlog/churn-l-hT.hp" "$T/text.disk" >/dev/null
"$PROFDB" import-disk --force --name text --eventlog "$T/text.disk" >/dev/null 2>&1 || fail "import-disk --force of a text file as an eventlog"
expect 1 "eventlog damaged: offset 0: .*not a GHC eventlog" -- "$PROFDB" events latest
# an eventlog that ends before its first heap sample: heap says so
head -c "$AT" "$EV" >"$T/noheap.eventlog"
NOHP=$(run_of noheap "$T/noheap.eventlog")
expect 1 "run $NOHP has no .hp and its eventlog no whole heap sample yet" -- "$PROFDB" heap "$NOHP"

finish test_eventlog_views
