#!/usr/bin/env bash
# test_eventlog_peers.sh - the GHC eventlog decoder (profile/eventlog/ghc_eventlog.h)
# and its views (profile/eventlog/eventlog_summary.h), through tests/eventlog_dump,
# beside what GHC's own tools make of the same log:
#  - the fixtures (tests/data/eventlog: GHC 9.0.2 programs run with
#    +RTS -l -hT, one on the threaded RTS with two capabilities, their
#    eventlogs, their .hp and what ghc-events show printed), always: the
#    decoder's text is ghc-events show's byte for byte (the type table,
#    then every event's line in time order); the event count and every
#    type's count equal those of ghc-events' lines; GC starts equal its
#    GC starts, collections and pauses its GC statistics; the heap
#    samples' bands (hp2ps's key, every band's total and peak) equal the
#    .hp's; the log cut at offsets across it reads as the whole log's
#    first events, up to the whole prefix, which read alone gives the
#    same; a profiled build's -hc log's bands equal its .hp's (names
#    without the .hp's stack ids);
#  - a run made here, when Debian's ghc (9.0.2) and ghc-events
#    (libghc-ghc-events-dev) are installed: the same program compiled with
#    ghc -O2 -eventlog -rtsopts and run with +RTS -l -hT -i0.05, checked
#    the same ways against ghc-events show on the new log and the .hp the
#    run wrote; ghc-events shows the prefixes of cut logs as the decoder
#    does, and the -hc fixture too.
# Without ghc or ghc-events the second part is skipped (77, once the
# fixtures passed), except under CI=true, where that is a failure.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
DUMP="$B/tests/eventlog_dump"
EFIX="$S/tests/data/eventlog"

# The events section of ghc-events show's text, sorted.
events_of() { sed -n '/^Events:$/,$p' "$1" | sed '1d;/^$/d' | LC_ALL=C sort; }

# Per-type counts from ghc-events' words ("type N COUNT", as eventlog_dump
# counts prints them): each line's type from how ghc-events words it.
types_of() {
	sed -n '/^Events:$/,$p' "$1" | sed '1d;/^$/d' | sed -E 's/^[0-9]+: (cap [0-9]+: )?//' | awk '
	/^creating thread /               { t = 0;  } /^running thread /          { t = 1 }
	/^stopping thread /               { t = 2;  } /^thread [0-9]+ is runnable$/ { t = 3 }
	/^migrating thread /              { t = 4;  } /^waking up thread /        { t = 8 }
	/^starting GC$/                   { t = 9;  } /^finished GC$/             { t = 10 }
	/^requesting sequential GC$/      { t = 11; } /^requesting parallel GC$/  { t = 12 }
	/^GC idle$/                       { t = 20; } /^GC working$/              { t = 21 }
	/^GC done$/                       { t = 22; } /^creating spark thread /   { t = 15 }
	/^spark stats: /                  { t = 34; } /^spark created$/           { t = 35 }
	/^dud spark discarded$/           { t = 36; } /^overflowed spark discarded$/ { t = 37 }
	/^running a local spark$/         { t = 38; } /^stealing a spark from cap / { t = 39 }
	/^spark fizzled$/                 { t = 40; } /^spark GCed$/              { t = 41 }
	/^created capset /                { t = 25; } /^deleted capset /          { t = 26 }
	/^assigned cap /                  { t = 27; } /^removed cap /             { t = 28 }
	/^capset [0-9]+: RTS version /    { t = 29; } /^capset [0-9]+: args: /    { t = 30 }
	/^capset [0-9]+: env: /           { t = 31; } /^capset [0-9]+: pid /      { t = 32 }
	/^capset [0-9]+: parent pid /     { t = 33; } /^capset [0-9]+: wall clock time / { t = 43 }
	/^thread [0-9]+ has label /       { t = 44; }
	/^created cap [0-9]+$/            { t = 45; } /^deleted cap [0-9]+$/      { t = 46 }
	/^disabled cap /                  { t = 47; } /^enabled cap /             { t = 48 }
	/^allocated on heap capset /      { t = 49; } /^size of heap capset /     { t = 50 }
	/^live data in heap capset /      { t = 51; } /^heap stats for heap capset / { t = 52 }
	/^GC stats for heap capset /      { t = 53; } /^all caps stopped for GC$/ { t = 54 }
	/^task 0x[0-9a-f]+ created /      { t = 55; } /^task 0x[0-9a-f]+ migrated / { t = 56 }
	/^task 0x[0-9a-f]+ deleted$/      { t = 57; } /^marker: /                 { t = 58 }
	/^blocks size of heap capset /    { t = 91; }
	/^start heap profiling /          { t = 160; } /^cost centre [0-9]+ /     { t = 161 }
	/^start heap prof sample /        { t = 162; } /^heap prof sample .*, cost centre stack / { t = 163 }
	/^heap prof sample .*, label /    { t = 164; } /^end prof sample /        { t = 165 }
	{ if (t == "") t = 19; n[t]++; t = "" }   # the rest: user messages
	END { for (k in n) print "type " k " " n[k] }' | sort -k2,2n
}

# check LOG GHC_EVENTS_TEXT HP WHAT: the decoder against ghc-events' text
# and the .hp of the same run.
check() {
	local log=$1 ge=$2 hp=$3 what=$4
	"$DUMP" show "$log" >"$T/mine.txt" 2>"$T/err" && ok || fail "$what: eventlog_dump show: $(cat "$T/err")"
	events_of "$T/mine.txt" >"$T/mine.sorted"
	events_of "$ge" >"$T/theirs.sorted"
	if cmp -s "$T/mine.sorted" "$T/theirs.sorted"; then ok; else
		fail "$what: lines differ from ghc-events show's: $(diff "$T/mine.sorted" "$T/theirs.sorted" | head -5)"
	fi
	# and the whole text, byte for byte: the header's table, then the
	# events in ghc-events' order (by time, stably)
	if cmp -s "$T/mine.txt" "$ge"; then ok; else
		fail "$what: show's text differs from ghc-events': $(diff "$T/mine.txt" "$ge" | head -5)"
	fi
	"$DUMP" counts "$log" >"$T/counts" 2>"$T/err" && ok || fail "$what: eventlog_dump counts: $(cat "$T/err")"
	local n
	n=$(wc -l <"$T/theirs.sorted")
	grep -qx "events $n" "$T/counts" && ok || fail "$what: $(grep '^events' "$T/counts"), ghc-events $n"
	grep '^type ' "$T/counts" | sort -k2,2n >"$T/mine.types.n"
	types_of "$ge" >"$T/theirs.types.n"
	if cmp -s "$T/mine.types.n" "$T/theirs.types.n"; then ok; else
		fail "$what: per-type counts differ: $(diff "$T/mine.types.n" "$T/theirs.types.n" | head -6)"
	fi
	grep -qx 'ended 1' "$T/counts" && grep -qx 'cut 0' "$T/counts" && ok || fail "$what: not read to its end"
	"$DUMP" gc "$log" >"$T/gc" 2>"$T/err" && ok || fail "$what: eventlog_dump gc: $(cat "$T/err")"
	# GC starts as ghc-events counts them; collections one a GC statistics
	# event (the same in the non-threaded RTS: one capability)
	n=$(grep -c ': starting GC$' "$ge")
	[ "$n" -gt 0 ] && grep -qx "starts $n" "$T/gc" && ok ||
		fail "$what: $(grep starts "$T/gc"), ghc-events: $n GC starts"
	n=$(grep -c ': GC stats for heap capset ' "$ge")
	grep -qx "collections $n" "$T/gc" && grep -qx "pauses $n" "$T/gc" && ok ||
		fail "$what: $(grep -E '^(collections|pauses) ' "$T/gc" | tr '\n' ' '), ghc-events: $n GC statistics"
	awk '/^(pauses|gen0) / { v[$1] = $2 } END { exit !(v["pauses"] > 0 && v["gen0"] > 0) }' "$T/gc" && ok ||
		fail "$what: GC figures: $(tr '\n' ' ' <"$T/gc")"
	# the heap samples' bands and the .hp's, through hp2ps's rules: the
	# .hp has two more (empty) samples, the first and last
	"$DUMP" bands "$log" >"$T/bands.el" 2>"$T/err" && ok || fail "$what: eventlog_dump bands: $(cat "$T/err")"
	"$DUMP" hpbands "$hp" >"$T/bands.hp" 2>"$T/err" && ok || fail "$what: eventlog_dump hpbands: $(cat "$T/err")"
	local sel shp
	sel=$(sed -n 's/^samples //p' "$T/bands.el")
	shp=$(sed -n 's/^samples //p' "$T/bands.hp")
	[ "${sel:-0}" -gt 0 ] && [ "$((sel + 2))" = "$shp" ] && ok || fail "$what: $sel samples in the eventlog, $shp in the .hp"
	grep -q '^key ' "$T/bands.el" && cmp -s <(grep '^key ' "$T/bands.el") <(grep '^key ' "$T/bands.hp") && ok ||
		fail "$what: hp2ps's key differs from the .hp's: $(diff <(grep '^key ' "$T/bands.el") <(grep '^key ' "$T/bands.hp") | head -6)"
	# the heap view draws them: an SVG with a path per band of the key
	"$DUMP" svg "$log" >"$T/heap.svg" 2>"$T/err" && xml_ok "$T/heap.svg" &&
		[ "$(grep -c '<path' "$T/heap.svg")" -ge "$(grep -c '^key ' "$T/bands.el")" ] && ok ||
		fail "$what: the heap SVG: $(cat "$T/err" "$T/xmlerr" 2>/dev/null | head -3)"
	# every band, the trace elements hp2ps drops included: total and peak
	if cmp -s <(grep '^band ' "$T/bands.el" | LC_ALL=C sort) <(grep '^band ' "$T/bands.hp" | LC_ALL=C sort); then ok; else
		fail "$what: bands differ from the .hp's: $(diff <(grep '^band ' "$T/bands.el" | LC_ALL=C sort) <(grep '^band ' "$T/bands.hp" | LC_ALL=C sort) | head -6)"
	fi
}

# cuts LOG WHAT [PEER]: the log cut at offsets across it reads the whole
# log's first events, up to the whole prefix; with PEER, ghc-events reads
# the same events from the cut log.
cuts() {
	local log=$1 what=$2 peer=${3:-} size at bad=0
	size=$(stat -c %s "$log")
	"$DUMP" lines "$log" >"$T/whole.lines"
	for at in 0 3 100 2000 $((size / 7)) $((size / 3 + 1)) $((size / 2 + 5)) $((size - 3)) $((size - 2)) $((size - 1)); do
		head -c "$at" "$log" >"$T/cut.eventlog"
		"$DUMP" counts "$T/cut.eventlog" >"$T/cut.counts" 2>"$T/err" || { bad=1; fail "$what: cut at $at: $(cat "$T/err")"; continue; }
		local n prefix
		n=$(sed -n 's/^events //p' "$T/cut.counts")
		prefix=$(sed -n 's/^whole_prefix //p' "$T/cut.counts")
		[ "$prefix" -le "$at" ] || { bad=1; fail "$what: cut at $at: prefix $prefix"; }
		"$DUMP" lines "$T/cut.eventlog" >"$T/cut.lines"
		cmp -s "$T/cut.lines" <(head -n "$n" "$T/whole.lines") || { bad=1; fail "$what: cut at $at: not the whole log's first $n events"; }
		# the prefix alone is a log of the same events
		head -c "$prefix" "$log" >"$T/prefix.eventlog"
		"$DUMP" counts "$T/prefix.eventlog" | grep -qx "events $n" || { bad=1; fail "$what: cut at $at: its prefix reads otherwise"; }
		if [ -n "$peer" ] && [ "$prefix" -gt 0 ]; then
			ghc-events show "$T/prefix.eventlog" >"$T/cut.ge" 2>&1 || { bad=1; fail "$what: ghc-events on the prefix of a cut at $at: $(tail -1 "$T/cut.ge")"; continue; }
			"$DUMP" show "$T/prefix.eventlog" | cmp -s - "$T/cut.ge" ||
				{ bad=1; fail "$what: cut at $at: ghc-events reads other events"; }
		fi
	done
	[ $bad = 0 ] && ok
}

# --- the fixture --------------------------------------------------------------------------
zcat "$EFIX/evprog.ghc-events-show.gz" >"$T/fixture.ge"
check "$EFIX/evprog.eventlog" "$T/fixture.ge" "$EFIX/evprog.hp" fixture
cuts "$EFIX/evprog.eventlog" fixture
# the threaded RTS on two capabilities: blocks of both, migrations, tasks,
# spark counters, a GC on both at once (one pause, one statistics event)
zcat "$EFIX/threaded.ghc-events-show.gz" >"$T/threaded.ge"
check "$EFIX/threaded.eventlog" "$T/threaded.ge" "$EFIX/threaded.hp" "threaded fixture"
cuts "$EFIX/threaded.eventlog" "threaded fixture"
[ "$(grep -c ': starting GC$' "$T/threaded.ge")" -gt "$(grep -c ': GC stats for' "$T/threaded.ge")" ] && ok ||
	fail "threaded fixture: no collection on both capabilities"
keep_at_exit '"$T"/*.txt' '"$T"/*.sorted' '"$T"/bands.*' '"$T"/gc'

# --- the profiled fixture: a cost-centre heap profile (-hc) --------------------------------------
# The .hp names a band "(ccs id)cc/cc/..." cut at 25 characters with "...";
# the eventlog has no stack id, so each .hp band must have one of ours
# with its total and peak and its name without "(id)", whole.
HC="$EFIX/evprog-prof-hc"
"$DUMP" counts "$HC.eventlog" >"$T/hc.counts" 2>"$T/err" && grep -qx 'ended 1' "$T/hc.counts" && ok ||
	fail "-hc fixture: $(cat "$T/err")"
"$DUMP" bands "$HC.eventlog" >"$T/hc.el" 2>"$T/err" && "$DUMP" hpbands "$HC.hp" >"$T/hc.hp" 2>>"$T/err" && ok ||
	fail "-hc fixture: bands: $(cat "$T/err")"
python3 - "$T/hc.el" "$T/hc.hp" <<'EOF' && ok || fail "-hc fixture: bands differ from the .hp's"
import re, sys
def bands(path):
    out = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        if line.startswith("band "):
            name, total, peak = line[5:].rstrip("\n").rsplit("\t", 2)
            out.append((name, int(total), int(peak)))
    return out
ours, theirs = bands(sys.argv[1]), bands(sys.argv[2])
assert len(ours) == len(theirs) > 5, (len(ours), len(theirs))
left = list(ours)
for name, total, peak in theirs:
    bare = re.sub(r"^\(\d+\)", "", name)
    match = [b for b in left if b[1:] == (total, peak) and
             (b[0] == bare or (bare.endswith("...") and b[0].startswith(bare[:-3])))]
    assert match, f"no band of ours for {name} {total} {peak}"
    left.remove(match[0])
EOF

# --- a run made here ------------------------------------------------------------------------
if ! need ghc ghc-events; then
	echo "test_eventlog_peers: the fixture was checked"
	# a failure on the fixture is a failure, peers or not
	finish test_eventlog_peers || exit 1
	exit 77
fi
mkdir -p "$T/run" && cp "$EFIX/evprog.hs" "$T/run/Main.hs"
(cd "$T/run" && ghc -O2 -eventlog -rtsopts -o evprog Main.hs) >"$T/ghc.out" 2>&1 && ok ||
	fail "ghc: $(tail -5 "$T/ghc.out")"
(cd "$T/run" && ./evprog +RTS -l -hT -i0.05 -RTS) >"$T/run.out" 2>&1 && ok || fail "the program: $(tail -3 "$T/run.out")"
if [ -s "$T/run/evprog.eventlog" ] && [ -s "$T/run/evprog.hp" ]; then
	ghc-events show "$T/run/evprog.eventlog" >"$T/run.ge" 2>"$T/err" && ok || fail "ghc-events show: $(cat "$T/err")"
	check "$T/run/evprog.eventlog" "$T/run.ge" "$T/run/evprog.hp" "a run made here"
	cuts "$T/run/evprog.eventlog" "a run made here" ghc-events
	# the profiled fixture's lines too (cost centres, their samples)
	ghc-events show "$HC.eventlog" >"$T/hc.ge" 2>"$T/err" && "$DUMP" show "$HC.eventlog" >"$T/hc.txt" &&
		cmp -s "$T/hc.ge" "$T/hc.txt" && ok ||
		fail "-hc fixture: show's text differs from ghc-events': $(diff "$T/hc.ge" "$T/hc.txt" | head -4)"
else
	fail "the run wrote no eventlog or no .hp"
fi

finish test_eventlog_peers
