#!/usr/bin/env bash
# test_samples_peers.sh - the samples stream's exports (profile/samples/samples.h)
# read by the programs they are made for, from a deterministic stream of a
# HaLVM guest's Haskell and C frames in two segments (tests/samples_gen):
#  - go tool pprof reads the gzipped profile.proto: every function's flat
#    and cumulative sample counts equal those of the folded stacks, the
#    top function is the most-sampled leaf, CPU time is a millisecond a
#    sample at 1000 Hz;
#  - speedscope's own schema (its npm package, checked with ajv as
#    test_peers.sh does) accepts the speedscope file and rejects a broken
#    one; its names decode to the guest's exact bytes (a lone surrogate
#    \udcNN for a byte that is not UTF-8);
#  - the perf script text, collapsed by the shape FlameGraph's
#    stackcollapse-perf.pl and speedscope's perf importer read (their
#    patterns, in Python here: FlameGraph is not packaged), gives exactly
#    the folded stacks;
#  - the time profile's top cost centre is the most-sampled leaf.
#
# Needs go (golang-go) and the npm packages of tests/peers (PROFSVC_PEERS
# names their node_modules).  Without them the test is skipped (77),
# except under CI=true, where that is a failure.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
NM=${PROFSVC_PEERS:-$S/tests/peers/node_modules}
GEN="$B/tests/samples_gen"

missing=""
need go node || exit 77
[ -f "$NM/speedscope/dist/release/file-format-schema.json" ] && [ -d "$NM/ajv" ] ||
	missing="$missing $NM/{speedscope,ajv}"
if [ -n "$missing" ]; then
	echo "test_samples_peers: missing:$missing (apt-get install golang-go; npm ci --prefix tests/peers)"
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
SCHEMA="$NM/speedscope/dist/release/file-format-schema.json"
validate() { node "$S/tests/peers/validate.cjs" "$NM" "$SCHEMA" "$1"; }
export GOCACHE="$T/gocache" PPROF_TMPDIR="$T/pprof" GOTOOLCHAIN=local

"$GEN" stream "$T/s.bin" && ok || fail "samples_gen stream"
"$GEN" export "$T/s.bin" "$T" 2>"$T/err" && ok || fail "samples_gen export: $(cat "$T/err")"
keep_at_exit '"$T"/samples.*'

# The folded stacks' figures: "flat NAME COUNT" (the leaf's samples) and
# "cum NAME COUNT" (samples whose stack holds NAME), then "total COUNT".
python3 - "$T/samples.folded" >"$T/folded.figures" <<'EOF'
import sys, collections
flat, cum, total = collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    frames, count = stack.split(";"), int(count)
    flat[frames[-1]] += count
    for name in set(frames):
        cum[name] += count
    total += count
for name in sorted(cum):
    print(f"flat {name} {flat[name]}")
    print(f"cum {name} {cum[name]}")
print(f"total {total}")
EOF
[ "$(tail -1 "$T/folded.figures")" = "total 3000" ] && ok || fail "folded: $(tail -1 "$T/folded.figures") samples, not 3000"

# --- go tool pprof ------------------------------------------------------------------------
go tool pprof -top -sample_index=samples "$T/samples.pb.gz" >"$T/pprof.top" 2>"$T/pprof.err" && ok ||
	fail "go tool pprof: $(cat "$T/pprof.err")"
python3 - "$T/pprof.top" >"$T/pprof.figures" <<'EOF'
import sys, re
total = None
rows = []
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    m = re.search(r"of (\d+) total", line)
    if m:
        total = int(m.group(1))
    f = line.split(None, 5)
    if len(f) == 6 and f[0].isdigit() and f[1].endswith("%"):
        rows.append((f[5].rstrip("\n"), int(f[0]), int(f[3])))
for name, flat, cum in sorted(rows):
    print(f"flat {name} {flat}")
    print(f"cum {name} {cum}")
print(f"total {total}")
EOF
if diff "$T/folded.figures" "$T/pprof.figures" >"$T/diff"; then ok; else
	fail "pprof's counts differ from the folded stacks': $(cat "$T/diff")"
fi
top_leaf=$(grep '^flat ' "$T/folded.figures" | sort -k3,3nr | head -1 | cut -d' ' -f2-)
pprof_top=$(awk '$2 ~ /%$/ && $1 ~ /^[0-9]+$/ { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print; exit }' "$T/pprof.top")
flat_top=$(awk '$2 ~ /%$/ && $1 ~ /^[0-9]+$/ { print $1; exit }' "$T/pprof.top")
[ "$top_leaf" = "Data.Map.Internal.insert 1221" ] && [ "$pprof_top $flat_top" = "$top_leaf" ] && ok ||
	fail "top function: folded [$top_leaf], pprof [$pprof_top $flat_top]"
go tool pprof -top "$T/samples.pb.gz" >"$T/pprof.cpu" 2>>"$T/pprof.err" && ok || fail "pprof, CPU time"
grep -q 'Total samples = 3000ms' "$T/pprof.cpu" && grep -q '1221ms .*Data.Map.Internal.insert$' "$T/pprof.cpu" && ok ||
	fail "pprof's CPU time: $(head -8 "$T/pprof.cpu")"
go tool pprof -top -lines -sample_index=samples "$T/samples.pb.gz" 2>/dev/null >"$T/pprof.lines"
grep -q ' Main.countWords Main.hs:22$' "$T/pprof.lines" && grep -q ' Data.Map.Internal.insert Data/Map/Internal.hs:600$' "$T/pprof.lines" &&
	ok || fail "pprof's files and lines: $(cat "$T/pprof.lines")"

# --- speedscope's schema ----------------------------------------------------------------------
out=$(validate "$T/samples.speedscope.json") && ok || fail "the speedscope file is not valid: $out"
sed 's/"unit":"nanoseconds"/"unit":"furlongs"/' "$T/samples.speedscope.json" >"$T/broken.json"
validate "$T/broken.json" >/dev/null && fail "the schema check accepted a broken file" || ok
python3 - "$T/samples.speedscope.json" <<'EOF' && ok || fail "speedscope file's contents"
import sys, json
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = [f["name"] for f in d["shared"]["frames"]]
# the guest's bytes come back exactly: a byte not UTF-8 as U+DC00 + byte
assert b'we"ird\\name \xff' in [n.encode("utf-8", "surrogateescape") for n in names], names
assert "Data.Map.Internal.insert" in names
fr = d["shared"]["frames"][names.index("Main.countWords")]
assert fr.get("file") == "Main.hs" and fr.get("line") == 22, fr
profs = d["profiles"]
assert [p["name"] for p in profs] == ["vCPU 0", "vCPU 1"], [p["name"] for p in profs]
assert sum(len(p["samples"]) for p in profs) == 3000
for p in profs:
    assert len(p["samples"]) == len(p["weights"]) and p["endValue"] == sum(p["weights"])
    assert all(s[0] == names.index("hs_main") or names[s[0]] == "[GC]" for s in p["samples"]), "root first"
EOF

# --- perf script, collapsed as stackcollapse-perf.pl and speedscope read it -------------------
python3 - "$T/samples.perf" "$T/samples.folded" <<'EOF' && ok || fail "perf script collapsed differs from the folded stacks"
import sys, re, collections
event = re.compile(r"^(\S.+?)\s+(\d+)(?:/(\d+))?\s+")   # both readers' header pattern
evname = re.compile(r"(\S+):\s*$")
frame = re.compile(r"^\s*(\w+)\s*(.+) \((\S*)\)")     # both readers' frame pattern
got, want = collections.Counter(), collections.Counter()
blocks = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read().split("\n\n")
for block in filter(None, (b.strip("\n") for b in blocks)):
    lines = block.split("\n")
    m = event.match(lines[0])
    assert m and m.group(1) == "halvm-wordfreq" and evname.search(lines[0]).group(1) == "cpu-clock", lines[0]
    stack = []
    for line in lines[1:]:
        f = frame.match(line)
        assert f, line
        stack.append(re.sub(r"\+0x[\da-f]+$", "", f.group(2)).replace(";", "\\x3b"))
    got[";".join(reversed(stack))] += 1
for line in open(sys.argv[2], encoding="utf-8", errors="surrogateescape"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    want[stack] += int(count)
if got != want:
    print("perf:", sorted(got.items()), "\nfolded:", sorted(want.items()))
    sys.exit(1)
EOF

# --- the time profile (top, flame, diff read it) ---------------------------------------------------
[ "$(head -1 "$T/samples.top")" = "$(printf 'Data.Map.Internal\tinsert\t1221')" ] && ok ||
	fail "the time profile's top cost centre: $(head -1 "$T/samples.top")"

finish test_samples_peers
