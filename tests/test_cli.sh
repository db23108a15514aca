#!/usr/bin/env bash
# test_cli.sh - profdb end to end, as a user runs it: import-disk of raw
# images made by the HaLVM writer model, query/show/export/export-disk,
# round trips byte for byte, and every kind of bad input: exit status 0/1/2,
# one clear line, no half-written output, guest names that try to escape.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
MNT=""
at_exit '[ -n "$MNT" ] && umount "$MNT" 2>/dev/null'

P="$FIX/leak/leak-p-hc.prof"
H="$FIX/leak/leak-p-hc.hp"
"$MKDISK" "$P" "$T/prof.disk" && "$MKDISK" "$H" "$T/hp.disk" || { echo "mkdisk failed"; exit 99; }

# --- nothing there yet ---------------------------------------------------------
expect 1 "no database at" -- "$PROFDB" query runs
expect 2 "" -- "$PROFDB"
expect 2 "unknown command" -- "$PROFDB" frobnicate
expect 0 "" -- "$PROFDB" --help
# the commands' options a user looks for in the overview (issue 34), each
# on its command's entry; report names --against's run as flame and the overview do
python3 - "$T/out" <<'PY' && ok || fail "profdb --help: $(cat "$T/out")"
import re, sys
text = open(sys.argv[1]).read()
entries = {}
for m in re.finditer(r'^  ([a-z-]+) (.*(?:\n {6,}\S.*)*)', text, re.M):
    entries.setdefault(m.group(1), '')
    entries[m.group(1)] += m.group(2)
want = {'heap': ['--sort'], 'export': ['--speedscope', '--ctf', '--chrome-trace'], 'watch': ['--json'],
        'sync': ['-q'], 'report': ['--against RUN0'], 'flame': ['--against RUN0']}
missing = [c + ' ' + o for c, opts in want.items() for o in opts if not re.search(re.escape(o) + r'\b', entries.get(c, ''))]
assert not missing, 'missing: %s' % missing
PY
for c in report flame; do
	"$PROFDB" $c --help 2>&1 | head -1 | grep -q -- '--against RUN0\]' && ok || fail "$c --help: $("$PROFDB" $c --help 2>&1 | head -1)"
done
expect 0 "" -- "$PROFDB" --version

# --- import, query, show ---------------------------------------------------------
expect 0 "" -- "$PROFDB" import-disk --name leak "$T/prof.disk" "$T/hp.disk"
grep -q "imported run 1 (leak)" "$T/out" && ok || fail "import output: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs
grep -Eq '^ +1 +leak +- .* complete +4064 +5559  \.prof, \.hp$' "$T/out" && ok || fail "query table: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs --json
[ "$(sqlite3 :memory: "select json_valid(readfile('$T/out'))")" = 1 ] && ok || fail "invalid JSON: $(cat "$T/out")"
grep -q '"prof_bytes":4064' "$T/out" && ok || fail "JSON prof_bytes"
expect 0 "" -- "$PROFDB" show 1
grep -q "status block    4064 bytes, closed" "$T/out" && ok || fail "show: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" show latest --json
[ "$(sqlite3 :memory: "select json_valid(readfile('$T/out'))")" = 1 ] && ok || fail "show --json invalid"

# read-only commands leave nothing beside a store they only read (a reader
# that may write opens read-write under query_only: the last close removes
# WAL mode's -wal and -shm, as a writer's does)
for c in "query runs" "show 1 --json" "top 1" "heap 1 --csv" "check" "du" "report 1 --json"; do
	# shellcheck disable=SC2086
	"$PROFDB" $c >/dev/null 2>&1
	[ ! -e "$PROFSVC_DB-wal" ] && [ ! -e "$PROFSVC_DB-shm" ] && ok ||
		fail "profdb $c left $(ls "$PROFSVC_DB"-* | tr '\n' ' ')beside the store"
done
# a store on a read-only filesystem (a snapshot, a backup): read as it is,
# though SQLite cannot create the -shm beside it (opened immutable; the
# path made an SQLite URI, so its odd characters must survive)
RO="$T/ro 50%?#x"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$RO" && cp "$PROFSVC_DB" "$PROFSVC_DB-data" "$RO/" &&
		mount --bind "$RO" "$RO" 2>/dev/null && mount -o remount,bind,ro "$RO" 2>/dev/null && {
		expect 0 "" -- "$PROFDB" --db "$RO/p.db" query runs
		grep -q ' leak ' "$T/out" && ok || fail "a read-only filesystem's store: $(cat "$T/out")"
		expect 0 "" -- "$PROFDB" --db "$RO/p.db" export 1 --prof "$T/frozen.prof"
		same "$T/frozen.prof" "$P"
		umount "$RO"
	}
fi

# --- export: byte-exact, every way ------------------------------------------------
expect 0 "" -- "$PROFDB" export 1 --prof "$T/out.prof" --hp "$T/out.hp"
same "$T/out.prof" "$P"
same "$T/out.hp" "$H"
"$PROFDB" export 1 --prof - 2>/dev/null >"$T/stdout.prof"
same "$T/stdout.prof" "$P"
mkdir "$T/dir"
expect 0 "" -- "$PROFDB" export latest -o "$T/dir"
same "$T/dir/leak-1.prof" "$P"
same "$T/dir/leak-1.hp" "$H"
expect 0 "" -- "$PROFDB" export-disk --size 64M 1 xvdp1 "$T/again.disk"
same "$T/again.disk" "$T/prof.disk"
expect 0 "" -- "$PROFDB" export-disk 1 hp "$T/again-hp.disk" --size 65536K
same "$T/again-hp.disk" "$T/hp.disk"
# export-disk -> import-disk -> export: still the same bytes
expect 0 "" -- "$PROFDB" import-disk "$T/again.disk"
expect 0 "" -- "$PROFDB" export 2 --prof "$T/rt.prof"
same "$T/rt.prof" "$P"

# --- a 32-bit guest (4-byte words) -------------------------------------------------
"$MKDISK" --word-size 4 --size 1M "$H" "$T/hp32.disk"
expect 0 "" -- "$PROFDB" import-disk --name g32 "$T/prof.disk" "$T/hp32.disk"
expect 0 "" -- "$PROFDB" export latest --hp "$T/hp32.hp"
same "$T/hp32.hp" "$H"

# --- a guest that crashed: not cleanly closed -----------------------------------------
"$MKDISK" --crash-at 3000 "$H" "$T/crash-hp.disk"
# (a heap profile alone: --hp)
expect 0 "not cleanly closed" -- "$PROFDB" import-disk --name crashy --hp "$T/crash-hp.disk"
expect 0 "not cleanly closed" -- "$PROFDB" export latest --hp "$T/crash.out"
n=$(stat -c %s "$T/crash.out")
[ "$n" -gt 0 ] && [ "$n" -le 3000 ] && cmp -s -n "$n" "$T/crash.out" "$H" && ok || fail "crashed export is not a prefix ($n bytes)"
tail -c 12 "$T/crash.out" | grep -q "END_SAMPLE" || tail -1 "$T/crash.out" | grep -q "^END_SAMPLE" && ok || fail "crashed export does not end on a sample"
expect 0 "" -- "$PROFDB" query runs --state crashed
grep -q crashy "$T/out" && ok || fail "--state crashed"

# --- a corrupt status block: refused, then salvaged -------------------------------------
cp "$T/prof.disk" "$T/bad.disk"
printf '\x55' | dd of="$T/bad.disk" bs=1 seek=100 conv=notrunc status=none
expect 0 "header block corrupted" -- "$PROFDB" import-disk --name bad "$T/bad.disk"
id_bad=$("$PROFDB" query runs --name bad --json | grep -o '"run_id":[0-9]*' | cut -d: -f2)
expect 1 "header block corrupted" -- "$PROFDB" export "$id_bad" --prof "$T/bad.prof"
[ ! -e "$T/bad.prof" ] && ok || fail "a refused export left a file"
ls "$T" | grep -q "tmp\." && fail "a temporary file was left behind" || ok
expect 0 "salvaged: status block damaged: 31 of 32 copies agree" -- "$PROFDB" export "$id_bad" --prof "$T/bad.prof" --salvage
same "$T/bad.prof" "$P"
# status block wiped entirely: salvage by extent
cp "$T/prof.disk" "$T/wiped.disk"
dd if=/dev/urandom of="$T/wiped.disk" bs=512 count=1 conv=notrunc status=none
expect 0 "" -- "$PROFDB" import-disk --name wiped "$T/wiped.disk"
expect 0 "no usable status block" -- "$PROFDB" export latest --prof "$T/wiped.prof" --salvage
same "$T/wiped.prof" "$P"

# --- bit rot: one byte flipped in a stored chunk ---------------------------------------
ROT="$T/rot.db"
RH="$FIX/exprcalc/exprcalc-hc-i0.01.hp" # 273604 bytes: chunks 0-4
"$MKDISK" --size 1M "$RH" "$T/rot-hp.disk" || { echo "mkdisk failed"; exit 99; }
expect 0 "" -- "$PROFDB" --db "$ROT" import-disk --name rot --hp "$T/rot-hp.disk"
expect 0 "" -- "$PROFDB" --db "$ROT" check
[ "$(wc -l <"$T/out")" = 1 ] && grep -q ": ok, 5 chunks and 0 trace packets verified$" "$T/out" && ok ||
	fail "a clean store's check: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$ROT" check --quick
grep -q ": ok (--quick: checksums not verified)$" "$T/out" && ok || fail "check --quick: $(cat "$T/out")"
# byte 150000 of the device: chunk 2 (bytes 131072-196607), the file's byte
# 149488; import-disk put the chunk in a slot of the data file
python3 - "$ROT" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
dev = db.execute("SELECT device_id FROM devices WHERE vdev = 'xvdp2'").fetchone()[0]
slot = db.execute("SELECT slot FROM chunks WHERE key = ?", ((dev << 32) | 2,)).fetchone()[0]
assert slot is not None, "chunk 2 is not in the data file"
with open(sys.argv[1] + "-data", "r+b") as f:
    f.seek(slot * 65536 + 150000 - 131072)
    b = f.read(1)
    f.seek(slot * 65536 + 150000 - 131072)
    f.write(bytes([b[0] ^ 0x20]))
PY
expect 1 "run 1, device xvdp2 (id 1): bytes 131072-196607 (chunk 2) fail their checksum" -- "$PROFDB" --db "$ROT" check
tail -1 "$T/err" | grep -q "damaged: 1 of 5 chunks and 0 of 0 trace packets fail their checksums$" && ok ||
	fail "check's summary: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 2 ] && [ ! -s "$T/out" ] && ok || fail "check's lines: $(cat "$T/out" "$T/err")"
expect 0 "" -- "$PROFDB" --db "$ROT" check --quick
expect 1 "" -- "$PROFDB" --db "$ROT" check --json
python3 "$S/tests/json_shapes.py" check "$T/out" && ok || fail "check --json not as documented: $(cat "$T/out")"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["check"]; sys.exit(not (c["ok"] is False and c["checksum_failures"] == 1 and c["damaged"][0]["chunk"] == 2 and c["damaged"][0]["offset"] == 131072))' "$T/out" &&
	ok || fail "check --json: $(cat "$T/out")"
expect 1 "run 1, device xvdp2 (id 1): bytes 131072-196607 (chunk 2) fail their checksum" -- \
	"$PROFDB" --db "$ROT" export 1 --hp "$T/rot.hp"
[ ! -e "$T/rot.hp" ] && ok || fail "a refused export left a file"
expect 0 "bytes 131072-196607 (chunk 2) fail their checksum: not sound, salvaged as zeros" -- \
	"$PROFDB" --db "$ROT" export 1 --hp "$T/rot.hp" --salvage
# what is sound is GHC's: the file's bytes before and after chunk 2's
[ "$(stat -c %s "$T/rot.hp")" = 273604 ] && cmp -s -n 130560 "$T/rot.hp" "$RH" &&
	cmp -s -i 196096 "$T/rot.hp" "$RH" && [ "$(head -c 196096 "$T/rot.hp" | tail -c 65536 | tr -d '\0' | wc -c)" = 0 ] &&
	ok || fail "salvaged export: $(cmp "$T/rot.hp" "$RH")"
# the views refuse wrong data with the same words
expect 1 "bytes 131072-196607 (chunk 2) fail their checksum" -- "$PROFDB" --db "$ROT" heap 1
# a store of schema 8 (before checksums): read as it is, nothing verified and
# said so; its next writer computes the sums once, says so, and they verify
cp "$T/rot-hp.disk" "$T/v8-hp.disk"
expect 0 "" -- "$PROFDB" --db "$T/v8.db" import-disk --name v8 --hp "$T/v8-hp.disk"
sqlite3 "$T/v8.db" "ALTER TABLE chunks DROP COLUMN sum; ALTER TABLE trace_packets DROP COLUMN sum; PRAGMA user_version = 8" ||
	fail "making a schema-8 store"
expect 0 "" -- "$PROFDB" --db "$T/v8.db" check
grep -q ": ok, 0 chunks and 0 trace packets verified; an older store's data has no checksums" "$T/out" && ok ||
	fail "check of a schema-8 store: $(cat "$T/out")"
expect 0 "upgraded to checksums: computed those of 5 stored chunks and 0 trace packets" -- \
	"$PROFDB" --db "$T/v8.db" import-disk --name v9 --prof "$T/prof.disk"
expect 0 "" -- "$PROFDB" --db "$T/v8.db" check
grep -q ": ok, 6 chunks and 0 trace packets verified$" "$T/out" && ok || fail "check of the upgraded store: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$T/v8.db" export 1 --hp "$T/v8.hp"
same "$T/v8.hp" "$RH"
# SQLite's own damage (an index that no longer matches its table, for
# every row): the first five problems, then the one summary line
cp "$ROT" "$T/idx.db" && cp "$ROT-data" "$T/idx.db-data"
for i in 2 3 4 5 6 7; do
	"$MKDISK" --prof "$P" "$T/idx$i.disk" >/dev/null && "$PROFDB" --db "$T/idx.db" import-disk --name "idx$i" "$T/idx$i.disk" >/dev/null 2>&1
done
sqlite3 "$T/idx.db" "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, 'UNIQUE (run_id, vdev)', 'UNIQUE (run_id, devid)') WHERE name = 'devices'" ||
	fail "damaging the index"
expect 1 "missing from index" -- "$PROFDB" --db "$T/idx.db" check --quick
[ "$(wc -l <"$T/err")" = 6 ] && tail -1 "$T/err" | grep -q "damaged: SQLite's checks found 7 problems (the first named above) (--quick" &&
	ok || fail "check of a damaged index: $(cat "$T/err")"
# and so does profdb serve: an error, not the wrong bytes
if need curl; then
	"$PROFDB" --db "$ROT" serve --listen 127.0.0.1:0 2>"$T/serve-rot.log" &
	RS=$!
	for _ in $(seq 100); do grep -q 'serving' "$T/serve-rot.log" && break; sleep 0.1; done
	RURL="http://127.0.0.1:$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve-rot.log" | head -1 | cut -d: -f2)"
	code=$(curl -s --max-time 10 -o "$T/rot-body" -w '%{http_code}' "$RURL/runs/1/hp")
	[ "$code" = 500 ] && grep -q "bytes 131072-196607 (chunk 2) fail their checksum" "$T/rot-body" && ok ||
		fail "serve's /runs/1/hp of damaged data: $code $(head -c 300 "$T/rot-body")"
	kill $RS; wait $RS 2>/dev/null
fi

# --- a damaged .prof, everywhere it is met (issue 44 item 6) -----------------------------
# a run with both profiles whose .prof's chunk 2 fails its checksum, beside
# a sound run of the same profiles: every view says the bytes fail their
# checksum, which bytes, and profdb check; never "no readable time
# profile", and no download answers 404 for it
DMG="$T/dmg.db" PA="$FIX/exprcalc/exprcalc-Pa.prof" # 186601 bytes: chunks 0-2
DWORDS="run 1, device xvdp1 (id 1): bytes 131072-196607 (chunk 2) fail their checksum"
"$MKDISK" --prof "$PA" "$T/dmg-p.disk" >/dev/null && "$MKDISK" --hp "$RH" "$T/dmg-h.disk" >/dev/null &&
	"$PROFDB" --db "$DMG" import-disk --name dmg "$T/dmg-p.disk" "$T/dmg-h.disk" >/dev/null 2>&1 &&
	"$PROFDB" --db "$DMG" import-disk --name dmg "$T/dmg-p.disk" "$T/dmg-h.disk" >/dev/null 2>&1 ||
	fail "importing the runs to damage"
python3 - "$DMG" <<'PY' || fail "could not damage the .prof"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
dev = db.execute("SELECT device_id FROM devices WHERE vdev = 'xvdp1' AND run_id = 1").fetchone()[0]
slot = db.execute("SELECT slot FROM chunks WHERE key = ?", ((dev << 32) | 2,)).fetchone()[0]
with open(sys.argv[1] + "-data", "r+b") as f:
    f.seek(slot * 65536 + 1000)
    b = f.read(1)
    f.seek(slot * 65536 + 1000)
    f.write(bytes([b[0] ^ 0x20]))
PY
expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" check
for c in "top 1" "flame 1" "flame 1 -o $T/dmg.svg"; do
	expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" $c
done
expect 0 "" -- "$PROFDB" --db "$DMG" heap 1 # the .hp is sound
# diff: the heap compared, the call stacks said to be damaged; exit 1
expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" diff 1 2
grep -q "call stacks: not compared (run 1's .prof fails its checksum" "$T/out" && grep -q "heap bands: 75 in all" "$T/out" &&
	ok || fail "diff of a damaged .prof: $(head -5 "$T/out")"
expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" diff 2 1 --json
# report: the page written with what is sound and the damage at its top;
# exit 1, as check's (a store losing data is an error, not news)
expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" report 1 -o "$T/dmg.html"
grep -q "written without what fails its checksum" "$T/err" && grep -q "class=\"warn\">the time profile (.prof) is not shown.*$DWORDS.*profdb check" "$T/dmg.html" &&
	! grep -q "no readable time profile" "$T/dmg.html" && grep -q 'id="heap"' "$T/dmg.html" && ok ||
	fail "report of a damaged .prof: $(cat "$T/err"; grep -o 'class="warn">[^<]*' "$T/dmg.html")"
expect 1 "$DWORDS" -- "$PROFDB" --db "$DMG" report 2 --against 1 -o "$T/dmg-cmp.html"
grep -q "Run 1&#39;s time profile (.prof) is not compared: $DWORDS" "$T/dmg-cmp.html" && ! grep -q "Only run 2 has a time profile" "$T/dmg-cmp.html" &&
	ok || fail "the comparison with a damaged .prof: $(grep -o 'class="warn">[^<]*' "$T/dmg-cmp.html")"
expect 0 "" -- "$PROFDB" --db "$DMG" report 2 -o "$T/sound.html" # the sound run
if need curl; then
	"$PROFDB" --db "$DMG" serve --listen 127.0.0.1:0 2>"$T/serve-dmg.log" &
	RS=$!
	for _ in $(seq 100); do grep -q 'serving' "$T/serve-dmg.log" && break; sleep 0.1; done
	RURL="http://127.0.0.1:$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve-dmg.log" | head -1 | cut -d: -f2)"
	# the run page and the report download: the damage said, the heap drawn
	for p in /runs/1 /runs/1/report.html; do
		code=$(curl -s --max-time 10 -o "$T/dmg-body" -w '%{http_code}' "$RURL$p")
		[ "$code" = 200 ] && grep -q "is not shown.*$DWORDS.*profdb check" "$T/dmg-body" &&
			! grep -q "no readable time profile" "$T/dmg-body" && ok ||
			fail "$p of a damaged .prof: $code $(grep -o 'class="warn">[^<]*' "$T/dmg-body" | head -3)"
	done
	# the .prof's downloads and the API: an error of the server's with the store's words, never 404
	for p in /runs/1/prof /runs/1/speedscope.json /runs/1/folded /api/runs/1/tree; do
		code=$(curl -s --max-time 10 -o "$T/dmg-body" -w '%{http_code}' "$RURL$p")
		[ "$code" = 500 ] && grep -q "$DWORDS" "$T/dmg-body" && grep -q "profdb check" "$T/dmg-body" && ok ||
			fail "$p of a damaged .prof: $code $(head -c 300 "$T/dmg-body")"
	done
	code=$(curl -s --max-time 10 -o "$T/dmg-body" -w '%{http_code}' "$RURL/api/diff?a=1&b=2")
	[ "$code" = 200 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "stacks" not in d and d["bands"] and "fail their checksum" in d["damaged"], d.keys()' "$T/dmg-body" &&
		ok || fail "/api/diff with a damaged .prof: $code $(head -c 300 "$T/dmg-body")"
	[ "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$RURL/runs/2/speedscope.json")" = 200 ] && ok ||
		fail "the sound run's speedscope.json"
	kill $RS; wait $RS 2>/dev/null
fi

# --- filters ------------------------------------------------------------------------
expect 0 "" -- "$PROFDB" query runs --name 'lea?'
[ "$(grep -c leak "$T/out")" = 1 ] && ok || fail "--name glob: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs --limit 2
[ "$(wc -l <"$T/out")" = 3 ] && ok || fail "--limit 2: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs --since 1d
expect 0 "" -- "$PROFDB" query runs --since 2026-01-01T00:00Z
expect 2 "--state must be" -- "$PROFDB" query runs --state sideways
expect 2 "--since" -- "$PROFDB" query runs --since yesterday
# An age older than the epoch is "since always" (it once overflowed a
# signed integer: UBSan abort, wrong filter in a plain build).
all=$("$PROFDB" query runs --json | grep -o '"run_id"' | wc -l)
expect 0 "" -- "$PROFDB" query runs --since 999999999w --json
[ "$(grep -o '"run_id"' "$T/out" | wc -l)" = "$all" ] && ok || fail "--since 999999999w does not list all $all runs"
expect 0 "" -- "$PROFDB" query runs --since 999999999d
expect 2 "--limit" -- "$PROFDB" query runs --limit -3
expect 2 "" -- "$PROFDB" query nothing

# --- bad run ids, devices, paths ------------------------------------------------------
expect 1 "no run 999" -- "$PROFDB" show 999
expect 1 "not a run id" -- "$PROFDB" show abc
expect 1 "not a run id" -- "$PROFDB" export 0
expect 1 "no device xvdq9" -- "$PROFDB" export-disk 1 xvdq9 "$T/x.disk"
expect 2 "standard output" -- "$PROFDB" export-disk 1 xvdp1 -
expect 2 "both go to standard output" -- "$PROFDB" export 1 --prof - --hp -
expect 1 "not a directory" -- "$PROFDB" export 1 -o "$T/prof.disk"
# special files: a FIFO or a character device is written in place as a
# stream, never renamed over (as root that replaced /dev/null with a file)
mkfifo "$T/fifo"
"$PROFDB" export 1 --prof "$T/direct.prof" >/dev/null 2>&1
cat "$T/fifo" >"$T/fifo.out" & CATP=$!
expect 0 "" -- "$PROFDB" export 1 --prof "$T/fifo" --force
wait $CATP
[ -p "$T/fifo" ] && ok || fail "export --force replaced the FIFO"
same "$T/fifo.out" "$T/direct.prof"
expect 1 "exists; nothing exported" -- "$PROFDB" export 1 --prof "$T/fifo"
cat "$T/fifo" >"$T/fifo.svg" & CATP=$!
expect 0 "" -- "$PROFDB" flame 1 -o "$T/fifo"
wait $CATP
[ -p "$T/fifo" ] && grep -q '</svg>' "$T/fifo.svg" && ok || fail "flame -o FIFO: replaced, or no SVG came through"
expect 0 "" -- "$PROFDB" flame 1 -o /dev/null
[ -c /dev/null ] && ok || fail "flame -o /dev/null: no longer a device"
expect 1 "not a regular file" -- "$PROFDB" export-disk --force 1 xvdp1 "$T/fifo"
[ -p "$T/fifo" ] && ok || fail "export-disk replaced the FIFO"
expect 1 "No such file" -- "$PROFDB" export 1 --prof "$T/nodir/x.prof"
expect 1 "cannot open" -- "$PROFDB" import-disk "$T/missing.disk"
: >"$T/empty.disk"
expect 1 "empty" -- "$PROFDB" import-disk "$T/empty.disk"
expect 2 "" -- "$PROFDB" import-disk a b c
# A FIFO is refused at once (open() waited for a writer forever).
mkfifo "$T/fifo.disk"
timeout 10 "$PROFDB" import-disk "$T/fifo.disk" >"$T/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "not a regular file" "$T/out" && ok || fail "import-disk of a FIFO: exit $rc: $(cat "$T/out")"

# --- import-disk knows what it is given; refusals store nothing ---------------------------
nruns() { "$PROFDB" query runs --json | grep -o '"run_id"' | wc -l; }
n0=$(nruns)
expect 1 "hp.disk holds a heap profile (its data begins with a JOB line), not a .prof" -- "$PROFDB" import-disk "$T/hp.disk"
expect 1 "prof.disk holds a time profile (.prof), not a .hp" -- "$PROFDB" import-disk "$T/prof.disk" "$T/prof.disk"
expect 1 "prof.disk holds a time profile" -- "$PROFDB" import-disk --hp "$T/prof.disk"
head -c 4M /dev/zero >"$T/zero.disk"
expect 1 "zero.disk is all zeros" -- "$PROFDB" import-disk "$T/zero.disk"
expect 1 "README.md is not a HaLVM profile disk" -- "$PROFDB" import-disk "$S/README.md"
expect 1 "README.md is not a HaLVM profile disk" -- "$PROFDB" import-disk "$T/prof.disk" "$S/README.md"
expect 2 "not both" -- "$PROFDB" import-disk --hp "$T/hp.disk" "$T/prof.disk"
[ "$(nruns)" = "$n0" ] && ok || fail "a refused import stored a run"
# a heap profile alone, and the pair through --prof/--hp
expect 0 "" -- "$PROFDB" import-disk --name hponly --hp "$T/hp.disk"
grep -q "imported run .* (hponly), .hp: 5559 bytes$" "$T/out" && ok || fail "--hp alone: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" export latest --hp "$T/hponly.hp"
same "$T/hponly.hp" "$H"
expect 1 "no .prof device" -- "$PROFDB" export latest --prof "$T/hponly.prof"
expect 0 "" -- "$PROFDB" import-disk --hp "$T/hp.disk" --prof "$T/prof.disk"
expect 0 "" -- "$PROFDB" export latest --prof "$T/both.prof" --hp "$T/both.hp"
same "$T/both.prof" "$P"
same "$T/both.hp" "$H"
# --force takes images as they are (a .prof on xvdp2)
expect 0 "" -- "$PROFDB" import-disk --force --name forced "$T/prof.disk" "$T/prof.disk"

# --- import: the plain files GHC wrote, each exported back byte for byte -------------------
# every .prof, .hp and eventlog of the fixtures (tests/data), one run each
# (GHC's retainer log, leak-hr.prof, and a killed run's empty .prof aside)
for f in $(find "$S/tests/data" -name '*.prof' -o -name '*.hp' -o -name '*.eventlog' | sort); do
	case $f in */leak-hr.prof | */phases-killed-SIGKILL.prof) continue ;; esac
	"$PROFDB" import --json "$f" >"$T/imp.json" 2>"$T/err" || { fail "import $f: $(cat "$T/err")"; continue; }
	id=$(sqlite3 :memory: "select json_extract(readfile('$T/imp.json'), '\$.run.run_id')")
	ext=${f##*.}
	"$PROFDB" export "$id" --"$ext" "$T/back.$ext" >/dev/null 2>"$T/err" && cmp -s "$T/back.$ext" "$f" && ok ||
		fail "import $f, export --$ext: not the same bytes: $(cat "$T/err")"
	rm -f "$T/back.$ext"
done
python3 "$S/tests/json_shapes.py" import "$T/imp.json" && ok || fail "import --json not as documented: $(cat "$T/imp.json")"
# three files, one run: named after the first, each role told by its bytes (in any order)
EVF="$S/tests/data/ghc-eventlog/churn-l-hT.eventlog"
expect 0 "" -- "$PROFDB" import "$EVF" "$H" "$P"
grep -q "^imported run [0-9]* (churn-l-hT), .prof: 4064 bytes, .hp: 5559 bytes, eventlog: $(stat -c %s "$EVF") bytes$" "$T/out" &&
	ok || fail "import of three: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" export latest -o "$T/three"
id=$("$PROFDB" query runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')
same "$T/three/churn-l-hT-$id.prof" "$P"; same "$T/three/churn-l-hT-$id.hp" "$H"; same "$T/three/churn-l-hT-$id.eventlog" "$EVF"
expect 0 "" -- "$PROFDB" show latest
grep -q "state           complete" "$T/out" && grep -q "source          import" "$T/out" && ok || fail "show of an import: $(head -12 "$T/out")"
# --name; a killed program's empty .prof left out, with a warning
expect 0 "left out" -- "$PROFDB" import --name killed "$FIX/phases/phases-killed-SIGKILL.prof" "$FIX/phases/phases-killed-SIGKILL.hp"
grep -q "(killed), .hp: " "$T/out" && ! grep -q ".prof:" "$T/out" && ok || fail "import of a killed run: $(cat "$T/out")"
# refused, storing nothing: two of a kind, no profile, a retainer log, only empty files, a FIFO, no file
n0=$(nruns)
expect 1 "both a heap profile" -- "$PROFDB" import "$H" "$H"
expect 1 "README.md is not a profile GHC wrote" -- "$PROFDB" import "$S/README.md"
expect 1 "retainer profiling log" -- "$PROFDB" import "$FIX/leak/leak-hr.prof"
expect 1 "raw disk image" -- "$PROFDB" import "$T/prof.disk"
expect 1 "nothing to import" -- "$PROFDB" import "$FIX/phases/phases-killed-SIGKILL.prof"
expect 1 "not a regular file" -- "$PROFDB" import "$T/fifo.disk"
expect 1 "cannot open" -- "$PROFDB" import "$T/no-such.prof"
expect 2 "" -- "$PROFDB" import
expect 2 "at most 3" -- "$PROFDB" import "$P" "$H" "$EVF" "$P"
[ "$(nruns)" = "$n0" ] && ok || fail "a refused import stored a run"
# --force: what its bytes do not say, its name does
cp "$FIX/leak/leak-hr.prof" "$T/retainer.prof"
expect 0 "" -- "$PROFDB" import --force "$T/retainer.prof"
expect 0 "" -- "$PROFDB" export latest --prof "$T/retainer-back.prof"; same "$T/retainer-back.prof" "$T/retainer.prof"
expect 0 "" -- "$PROFDB" import --help
grep -q "^usage: profdb import \[--name NAME\] \[--force\] \[--json\] FILE...$" "$T/out" && ok || fail "import --help: $(head -2 "$T/out")"
expect 0 "" -- "$PROFDB" --help
grep -q "^  import \[--name NAME\] \[--force\] \[--json\] FILE...$" "$T/out" && ok || fail "profdb --help does not list import"

# --- export: makes -o DIR, replaces nothing unless --force ---------------------------------
expect 0 "" -- "$PROFDB" export 1 -o "$T/made/deep/er"
[ "$(stat -c %a "$T/made/deep/er")" = "$(printf '%o' $((0755 & ~$(umask))))" ] && ok || fail "-o made mode $(stat -c %a "$T/made/deep/er")"
same "$T/made/deep/er/leak-1.prof" "$P"
printf 'mine' >"$T/made/deep/er/leak-1.hp"
rm "$T/made/deep/er/leak-1.prof"
expect 1 "leak-1.hp exists; nothing exported (--force replaces it)" -- "$PROFDB" export 1 -o "$T/made/deep/er"
[ ! -e "$T/made/deep/er/leak-1.prof" ] && [ "$(cat "$T/made/deep/er/leak-1.hp")" = mine ] && ok || fail "a refused export wrote"
expect 0 "" -- "$PROFDB" export 1 -o "$T/made/deep/er" --force
same "$T/made/deep/er/leak-1.hp" "$H"
expect 1 "out.prof exists" -- "$PROFDB" export 1 --prof "$T/out.prof"
expect 1 "out.hp exists" -- "$PROFDB" export 1 --hp "$T/out.hp"
expect 0 "" -- "$PROFDB" export 1 --prof "$T/out.prof" --hp "$T/out.hp" --force
same "$T/out.prof" "$P"
expect 1 "made: not a directory" -- "$PROFDB" export 1 -o "$T/prof.disk/made"
# export-disk: by default the data rounded up to a MiB, not the device's size
expect 0 "" -- "$PROFDB" export-disk 1 xvdp1 "$T/small.disk"
[ "$(stat -c %s "$T/small.disk")" = 1048576 ] && ok || fail "export-disk default size $(stat -c %s "$T/small.disk")"
cmp -s "$T/small.disk" "$T/prof.disk" -n 1048576 && ok || fail "export-disk default: not the image's first MiB"
# a guest that also wrote its disk's last sector, far past its file: the
# image holds the file by default (not the whole sparse disk), and says so
cp "$T/prof.disk" "$T/far.disk"
truncate -s 64M "$T/far.disk"
printf 'far' | dd of="$T/far.disk" bs=512 seek=$((64 * 2048 - 1)) conv=notrunc status=none
expect 0 "" -- "$PROFDB" import-disk --name far "$T/far.disk"
expect 0 "far past its file's end" -- "$PROFDB" export-disk latest xvdp1 "$T/far-out.disk"
[ "$(stat -c %s "$T/far-out.disk")" = 1048576 ] && ok || fail "export-disk of a far write: $(stat -c %s "$T/far-out.disk") bytes"
expect 0 "" -- "$PROFDB" import-disk --name far-again "$T/far-out.disk"
expect 0 "" -- "$PROFDB" export latest --prof "$T/far.prof"
same "$T/far.prof" "$P"
FAR=$("$PROFDB" query runs --json | python3 -c 'import json, sys; print([r["run_id"] for r in json.load(sys.stdin)["runs"] if r["name"] == "far"][0])')
expect 0 "" -- "$PROFDB" export-disk --size 64M "$FAR" xvdp1 "$T/far-all.disk"
cmp -s "$T/far-all.disk" "$T/far.disk" && ok || fail "export-disk --size 64M of the far write: not the disk it was"
# a status block claiming 1 TiB over 64 KiB: listings show what is held
python3 -c '
import struct, sys
size, closed = 1099511626752, 1
w = [size, closed] + [x for i in range(2, 64, 2) for x in (size ^ i, closed ^ i)]
open(sys.argv[1], "wb").write(struct.pack("<64Q", *w) + b"x" * 65024)' "$T/claim.disk"
expect 0 "" -- "$PROFDB" import-disk --force --name claim "$T/claim.disk"
grep -q '.prof: 65024 bytes' "$T/out" && ok || fail "import-disk of a 1 TiB claim said: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs --json
python3 -c 'import json, sys; r = [r for r in json.load(open(sys.argv[1]))["runs"] if r["name"] == "claim"][0]; sys.exit(r["prof_bytes"] != 65024)' "$T/out" &&
	ok || fail "query runs shows the claim: $(grep -o '"name":"claim"[^}]*' "$T/out")"
expect 0 "" -- "$PROFDB" query runs
grep -E '^ *[0-9]+ +claim ' "$T/out" | grep -qw 65024 && ok || fail "query runs (text) shows: $(grep claim "$T/out")"
expect 0 "" -- "$PROFDB" export-disk --size 64K 1 xvdp1 "$T/exact.disk"
[ "$(stat -c %s "$T/exact.disk")" = 65536 ] && ok || fail "export-disk --size 64K: $(stat -c %s "$T/exact.disk")"
cmp -s -n 65536 "$T/exact.disk" "$T/prof.disk" && ok || fail "export-disk --size 64K: not the image's first 64 KiB"
expect 1 "holds 65536 bytes; give at least that" -- "$PROFDB" export-disk --size 65024 1 xvdp1 "$T/short.disk"
[ ! -e "$T/short.disk" ] && ok || fail "a refused export-disk left a file"
expect 2 "whole 512-byte sectors" -- "$PROFDB" export-disk --size 1000 1 xvdp1 "$T/odd.disk"
expect 2 "whole 512-byte sectors" -- "$PROFDB" export-disk --size lots 1 xvdp1 "$T/odd.disk"
# every output, not only the profiles: an image, a speedscope file
expect 1 "small.disk exists; nothing exported (--force replaces it)" -- "$PROFDB" export-disk 1 xvdp1 "$T/small.disk"
expect 0 "" -- "$PROFDB" export-disk --force --size 64K 1 xvdp1 "$T/small.disk"
[ "$(stat -c %s "$T/small.disk")" = 65536 ] && ok || fail "export-disk --force did not replace the image"
printf 'mine' >"$T/mine.json"
expect 1 "mine.json exists; nothing exported" -- "$PROFDB" export 1 --speedscope "$T/mine.json"
[ "$(cat "$T/mine.json")" = mine ] && ok || fail "a refused --speedscope wrote"
expect 0 "" -- "$PROFDB" export 1 --speedscope "$T/mine.json" --force
grep -q speedscope "$T/mine.json" && ok || fail "export --speedscope --force did not replace the file"
# a 20,000-deep -pj chain: the speedscope file grows with the tree (as
# sampled stacks, each written whole, it was 457 MB for a 1.3 MB profile)
python3 -c '
import sys
n = 20000
ccs = ",".join("{\"id\": %d, \"label\": \"f%d\", \"module\": \"Deep\", \"src_loc\": \"Deep.hs:%d:1\", \"is_caf\": false}" % (i, i, i) for i in range(1, n + 1))
head = "{\"program\": \"deep\", \"arguments\": [\"deep\"], \"rts_arguments\": [\"-pj\"], \"end_time\": \"Sat Nov 21 07:40 2026\", \"initial_capabilities\": 0, \"total_time\": 1.0, \"total_ticks\": %d, \"tick_interval\": 1000, \"total_alloc\": %d, \"cost_centres\": [%s], \"profile\": " % (n, 64 * n, ccs)
body = "".join("{\"id\": %d, \"entries\": 1, \"alloc\": 64, \"ticks\": 1, \"children\": [" % i for i in range(1, n + 1)) + "]}" * n
open(sys.argv[1], "w").write(head + body + "}\n")' "$T/deep-pj.prof"
"$MKDISK" --prof "$T/deep-pj.prof" "$T/deep.disk" >/dev/null
expect 0 "" -- "$PROFDB" import-disk --name deep "$T/deep.disk"
expect 0 "" -- "$PROFDB" export latest --speedscope "$T/deep.speedscope.json"
psize=$(stat -c %s "$T/deep-pj.prof") ssize=$(stat -c %s "$T/deep.speedscope.json")
[ "$ssize" -lt $((10 * psize)) ] && ok || fail "speedscope of a 20,000-deep chain: $ssize bytes for a $psize-byte profile"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["profiles"]:
    ev, depth, deepest = p["events"], 0, 0
    for e in ev:
        depth += 1 if e["type"] == "O" else -1
        deepest = max(deepest, depth)
        assert depth >= 0
    assert p["type"] == "evented" and depth == 0 and deepest == 20000, (p["type"], depth, deepest)
    assert abs(ev[-1]["at"] - p["endValue"]) < 1e-6 * max(1, p["endValue"]), (ev[-1]["at"], p["endValue"])
' "$T/deep.speedscope.json" && ok || fail "the deep chain's speedscope profiles are not 20,000 nested frames"

# --- guest-controlled names -----------------------------------------------------------
expect 0 "" -- "$PROFDB" import-disk --name '../../etc/x' "$T/prof.disk"
mkdir "$T/safe"
expect 0 "" -- "$PROFDB" export latest -o "$T/safe"
[ "$(ls "$T/safe")" = "_etc_x-$("$PROFDB" query runs --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2).prof" ] && ok || fail "escaping name: $(ls -R "$T/safe")"
[ ! -e "$T/etc" ] && ok || fail "export escaped its directory"
expect 0 "" -- "$PROFDB" import-disk --name "$(printf 'evil\033[2J\nname\x01')" "$T/prof.disk"
expect 0 "" -- "$PROFDB" query runs
grep -q $'\033' "$T/out" && fail "escape sequence reached the terminal" || ok
grep -q 'evil\\x1b\[2J\\x0aname\\x01' "$T/out" && ok || fail "name not shown escaped: $(tail -1 "$T/out")"
expect 0 "" -- "$PROFDB" query runs --json
[ "$(sqlite3 :memory: "select json_valid(readfile('$T/out'))")" = 1 ] && ok || fail "JSON with control characters invalid"
# C1 controls (U+009B is a CSI by itself) and bidi overrides (U+202E makes
# what follows read backwards) through every output: the table, show,
# JSON, and the import message.
c1name=$(printf 'c1\xc2\x9b31mred\xe2\x80\xaetxt.exe')
expect 0 "" -- "$PROFDB" import-disk --name "$c1name" "$T/prof.disk"
grep -q $'\xc2\x9b\|\xe2\x80\xae' "$T/out" && fail "import message: C1/bidi control reached the terminal" || ok
grep -q 'c1\\u009b31mred\\u202etxt.exe' "$T/out" && ok || fail "import message: name not escaped: $(cat "$T/out")"
# JSON carries the exact name (docs/json.md), the controls written as JSON's
# \u escapes, so the document itself is as inert as the table: the table
# shows the escapes as text, the JSON text reads the same, and a JSON
# reader gets the name's own characters back.
for cmd in "query runs" "show latest" "query runs --json" "show latest --json"; do
	expect 0 "" -- "$PROFDB" $cmd
	grep -q $'\xc2\x9b\|\xe2\x80\xae' "$T/out" && fail "$cmd: C1/bidi control reached the output" || ok
	grep -q 'c1\\u009b31mred\\u202etxt.exe' "$T/out" && ok || fail "$cmd: name not escaped: $(cat "$T/out")"
done
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["run"]["name"] != "c1\u009b31mred\u202etxt.exe")' \
	"$T/out" && ok || fail "show --json: not the exact name: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" import-disk --name "$(printf 'bad\xff\xfeutf8\\')" "$T/prof.disk"
expect 0 "" -- "$PROFDB" query runs --json
[ "$(sqlite3 :memory: "select json_valid(readfile('$T/out'))")" = 1 ] && ok || fail "JSON with invalid UTF-8 invalid"
# a byte that is not UTF-8 is U+DC00 + byte ("surrogateescape"): the exact
# bytes come back; the backslash is one
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["runs"][-1]["name"].encode("utf-8", "surrogateescape") != b"bad\xff\xfeutf8\\")' "$T/out" && ok ||
	fail "query runs --json: invalid bytes not kept: $(tail -c 400 "$T/out")"

# --- damaged and foreign databases ------------------------------------------------------
head -c 10000 /dev/urandom >"$T/junk.db"
expect 1 "not a profsvc database" -- "$PROFDB" --db "$T/junk.db" query runs
sqlite3 "$T/other.db" "create table t(x)"
expect 1 "not a profsvc store" -- "$PROFDB" --db "$T/other.db" query runs
cp "$PROFSVC_DB" "$T/newer.db"
sqlite3 "$T/newer.db" "pragma user_version=99"
expect 1 "newer than this profsvc" -- "$PROFDB" --db "$T/newer.db" query runs
expect 1 "newer than this profsvc" -- "$PROFDB" --db "$T/newer.db" import-disk "$T/prof.disk"
[ "$(sqlite3 "$T/newer.db" 'pragma user_version')" = 99 ] && ok || fail "newer database modified"
# A negative schema version (a damaged header; it once indexed the
# migrations out of bounds: tests/fuzz/fuzz_store_open).
cp "$PROFSVC_DB" "$T/negative.db"
sqlite3 "$T/negative.db" "pragma user_version=-251"
expect 1 "which no profsvc writes" -- "$PROFDB" --db "$T/negative.db" query runs
expect 1 "which no profsvc writes" -- "$PROFDB" --db "$T/negative.db" import-disk "$T/prof.disk"
[ "$(sqlite3 "$T/negative.db" 'pragma user_version')" = -251 ] && ok || fail "damaged database modified"
# Truncated to less than a page: SQLite would call it empty and a writer
# would start a new store over it (tests/fuzz/fuzz_store_open).
head -c 2000 "$PROFSVC_DB" >"$T/short.db"
cp "$T/short.db" "$T/short.orig"
expect 1 "truncated" -- "$PROFDB" --db "$T/short.db" import-disk "$T/prof.disk"
expect 1 "truncated" -- "$PROFDB" --db "$T/short.db" query runs
cmp -s "$T/short.db" "$T/short.orig" && ok || fail "truncated database modified"
expect 0 "" -- "$PROFDB" check
# A damaged v1 store in rollback-journal mode: the writer's switch to WAL
# rewrote its header before the upgrade found the damage and refused it
# (tests/fuzz/fuzz_store_open).  Refused untouched now.
cp "$S/tests/fuzz/corpus/fuzz_store_open/regress-rollback-journal" "$T/rollback.db"
expect 1 "is damaged" -- "$PROFDB" --db "$T/rollback.db" import-disk "$T/prof.disk"
cmp -s "$T/rollback.db" "$S/tests/fuzz/corpus/fuzz_store_open/regress-rollback-journal" && ok || fail "damaged rollback-journal database modified"
# A sound store switched out of WAL by hand is used, and back in WAL.
cp "$PROFSVC_DB" "$T/delete.db"
[ "$(sqlite3 "$T/delete.db" 'pragma journal_mode=delete')" = delete ] && ok || fail "could not leave WAL"
expect 0 "" -- "$PROFDB" --db "$T/delete.db" import-disk "$T/prof.disk"
[ "$(sqlite3 "$T/delete.db" 'pragma journal_mode')" = wal ] && ok || fail "store not back in WAL"
# A row the schema forbids (NULL state: what a damaged file can hold; found
# by tests/fuzz/fuzz_store_open, which crashed on it): listed, no crash.
cp "$PROFSVC_DB" "$T/nullstate.db"
sqlite3 "$T/nullstate.db" "pragma writable_schema=on; update sqlite_master set sql=replace(sql, 'state           TEXT NOT NULL', 'state TEXT') where name='runs';" 2>/dev/null
sqlite3 "$T/nullstate.db" "update runs set state = NULL where run_id = 1"
[ "$(sqlite3 "$T/nullstate.db" 'select count(*) from runs where state is null')" = 1 ] && ok || fail "could not damage the test database"
expect 0 "" -- "$PROFDB" --db "$T/nullstate.db" query runs
expect 0 "" -- "$PROFDB" --db "$T/nullstate.db" show 1

# --- a read-only database still answers queries ---------------------------------------------
cp "$PROFSVC_DB" "$T/ro.db"
cp "$PROFSVC_DB-data" "$T/ro.db-data" # imports store whole chunks there: a backup takes both
chmod 0444 "$T/ro.db" "$T/ro.db-data"
expect 0 "" -- "$PROFDB" --db "$T/ro.db" query runs
expect 0 "" -- env PROFSVC_DB="$T/ro.db" "$PROFDB" export 1 --prof "$T/ro.prof"
same "$T/ro.prof" "$P"

# --- a full disk while exporting: clear error, nothing left behind ----------------------------
if [ "$(id -u)" = 0 ] && mkdir -p "$T/full" && mount -t tmpfs -o size=12k tmpfs "$T/full" 2>/dev/null; then
	MNT="$T/full"
	big="$FIX/exprcalc/exprcalc-hc-i0.01.hp"
	"$MKDISK" "$big" "$T/big.disk"
	expect 0 "" -- "$PROFDB" import-disk --name big --hp "$T/big.disk"
	expect 1 "No space left" -- "$PROFDB" export latest --hp "$MNT/big.hp"
	[ -z "$(ls -A "$MNT")" ] && ok || fail "a full disk left files: $(ls -A "$MNT")"
	umount "$MNT"; MNT=""
else
	echo "note: not root or no tmpfs mount; skipped the full-disk export check"
fi

# --- users who are not root get told why ---------------------------------------------------
# (no backend runs for this test: a reader that may not open a store's
# files finds no read service in this run directory)
export PROFSVC_RUN_DIR="$T/norun"
# (profdb copied where nobody may run it: the build tree may be in root's
# 0700 home; and nobody's working directory is T, not one nobody cannot
# enter)
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && runuser -u nobody -- true 2>/dev/null; then
	mkdir -m 755 "$T/nr" "$T/bin"
	cp "$PROFDB" "$T/bin/profdb" && chmod 0755 "$T/bin/profdb"
	cp "$PROFSVC_DB" "$T/nr/p.db"
	chmod 755 "$T"
	as_nr() { (cd "$T" && runuser -u nobody -- "$T/bin/profdb" "$@"); }
	# (root's alone: read through a backend's read service, and none runs)
	expect 1 "its readers go through profile-backend, which is not running" -- as_nr --db "$T/nr/p.db" query runs
	grep -q "start it (profile-backend start, or systemctl start profile-backend), or run as root" "$T/err" && ok ||
		fail "the reader of a store root's alone was not told what to do: $(cat "$T/err")"
	chmod 644 "$T/nr/p.db"
	expect 1 "write access to its directory" -- as_nr --db "$T/nr/p.db" query runs
	expect 1 "read-only" -- as_nr --db "$T/nr/p.db" import-disk "$T/prof.disk"
	chmod 700 "$T"
else
	echo "note: not root (or no runuser): skipped the non-root access checks"
fi

# --- database files are root-only -------------------------------------------------------------
[ "$(stat -c %a "$PROFSVC_DB")" = 600 ] && ok || fail "database mode $(stat -c %a "$PROFSVC_DB")"

# --- a store in a directory shared with a group (2750): its files 0600
# all the same (read access to a live SQLite store is lock access), the
# -wal and -shm gone with the last connection; a member of the group may
# not open them, and reads through the backend's read service, which says
# to start the backend when none runs (test_shared.sh reads through one);
# a store whose directory is root's alone stays 0600 too -------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && getent group nogroup >/dev/null; then
	SH="$T/shared"
	mkdir -p "$SH" && chgrp nogroup "$SH" && chmod 2750 "$SH"
	chmod o+x "$T" # the reader walks to it
	"$PROFDB" --db "$SH/profiles.db" import-disk --name shared "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 && ok ||
		fail "import-disk into a shared directory"
	m=$(stat -c '%a %G' "$SH/profiles.db" 2>&1)
	[ "$m" = "600 nogroup" ] && [ ! -e "$SH/profiles.db-wal" ] && [ ! -e "$SH/profiles.db-shm" ] && ok ||
		fail "a store in a shared directory: $m, $(ls "$SH") (want 600 nogroup, no -wal or -shm)"
	as_nobody() { (cd "$T" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
	# (a copy: the build tree may be where nobody cannot go)
	mkdir -p "$T/bin" && cp "$PROFDB" "$T/bin/profdb" && chmod 0755 "$T/bin" "$T/bin/profdb"
	as_nobody head -c 1 "$SH/profiles.db" >/dev/null 2>&1 && fail "user nobody opened a shared store's database" || ok
	expect 1 "its readers go through profile-backend, which is not running (nothing answers on $T/norun/read.sock" -- \
		as_nobody "$T/bin/profdb" --db "$SH/profiles.db" query runs
	# a store that is not shared: no -wal or -shm left, files 0600
	NS="$T/notshared"
	mkdir -m 0700 "$NS"
	"$PROFDB" --db "$NS/profiles.db" import-disk --name ns "$T/prof.disk" >/dev/null 2>&1 && ok || fail "import-disk (not shared)"
	[ "$(stat -c %a "$NS/profiles.db")" = 600 ] && [ ! -e "$NS/profiles.db-wal" ] && ok ||
		fail "a store root's alone: $(ls -l "$NS")"
	chmod o-x "$T"
fi

# --- a clean stop leaves no frames in the -wal (issue 44).  A store shared
# with a group keeps its -wal for readers; it kept hundreds of frames
# already in the database, and one bit flipped in the middle of them made
# SQLite's recovery stop there: the older pages before it shadowed the
# database's (3 of 7 runs listed, `check` ok, a writer made it permanent).
# Now every writer's close empties it; and `check` reads the -wal as
# recovery does, finding frames that fail while sound commits follow.
# flip_wal FILE: one bit of the middle frame's page flipped ("K of N"), or
# "none" when the file has no frame
flip_wal() {
	python3 - "$1" <<'PY'
import struct, sys
import os
w = open(sys.argv[1], 'rb').read() if os.path.exists(sys.argv[1]) else b''

psz = struct.unpack('>I', w[8:12])[0] if len(w) >= 32 else 4096
psz = 65536 if psz == 1 else psz
n = (len(w) - 32) // (24 + psz) if len(w) >= 32 else 0
if n == 0:
    print('none')
    sys.exit()
k = n // 2
off = 32 + k * (24 + psz) + 24 + 100
with open(sys.argv[1], 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x10]))
print('%d of %d' % (k + 1, n))
PY
}
wal_frames() { python3 -c 'import os, sys; s = os.path.getsize(sys.argv[1]) if os.path.exists(sys.argv[1]) else 0; print(max(0, (s - 32) // 4120))' "$1"; }
# wal_empty FILE: the -wal holds no frame (absent: removed by the last
# connection's close, or there and empty)
wal_empty() { [ ! -e "$1" ] || [ "$(stat -c %s "$1")" = 0 ]; }
WS="$T/walshared"
mkdir -p "$WS" && chmod 2750 "$WS" # shared with its group (once, the -wal persisted there)
for i in 1 2 3 4 5 6 7; do
	"$PROFDB" --db "$WS/p.db" import-disk --name "wal$i" "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 || fail "import-disk wal$i"
done
wal_empty "$WS/p.db-wal" && ok ||
	fail "profdb's writers left $(wal_frames "$WS/p.db-wal") frames in a shared store's -wal"
flipped=$(flip_wal "$WS/p.db-wal")
expect 0 "" -- "$PROFDB" --db "$WS/p.db" query runs --state complete
[ "$(grep -c ' wal[1-7] ' "$T/out")" = 7 ] && ok ||
	fail "after a bit flipped in the -wal (frame $flipped), $(grep -c ' wal[1-7] ' "$T/out") of 7 runs listed complete: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$WS/p.db" check
# frames kept on purpose: a reader's snapshot held up the close of the
# last import (its checkpoint gives up after 2 s), so its frames stay
WP="$T/walplant"
mkdir -p "$WP" && chmod 2750 "$WP"
for i in 1 2 3 4 5 6; do
	"$PROFDB" --db "$WP/p.db" import-disk --name "wp$i" "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 || fail "import-disk wp$i"
done
python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN"); c.execute("SELECT count(*) FROM runs").fetchall()
print("reading", flush=True); time.sleep(60)' "$WP/p.db" >"$T/reader.out" 2>&1 &
RDR=$!
for _ in $(seq 100); do grep -q reading "$T/reader.out" && break; sleep 0.05; done
"$PROFDB" --db "$WP/p.db" import-disk --name wp7 "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 || fail "import-disk wp7"
kill $RDR; wait $RDR 2>/dev/null
kept=$(wal_frames "$WP/p.db-wal")
[ "$kept" -ge 8 ] && ok || fail "the reader's snapshot kept $kept frames in the -wal (the test needs some)"
cp -a "$WP" "$T/walstale"
flipped=$(flip_wal "$WP/p.db-wal")
expect 1 "recovery stops at frame" -- "$PROFDB" --db "$WP/p.db" check
grep -q "They hold pages the database lacks" "$T/err" && tail -1 "$T/err" | grep -q ": damaged" && ok ||
	fail "check of a -wal damaged in frame $flipped: $(cat "$T/err")"
expect 1 "" -- "$PROFDB" --db "$WP/p.db" check --json
python3 "$S/tests/json_shapes.py" check "$T/out" && grep -q '"ok":false' "$T/out" && ok || fail "check --json of a damaged -wal: $(cat "$T/out")"
cp "$WP/p.db" "$T/db.before"
expect 1 "recovery stops at frame" -- "$PROFDB" --db "$WP/p.db" import-disk --name wp8 "$T/prof.disk"
expect 0 "" -- "$PROFDB" --db "$WP/p.db" query runs # read, and not checkpointed by the reader's close
same "$WP/p.db" "$T/db.before"
# the same frames once checkpointed, kept by a persistent -wal's close (as
# every clean stop left them before): the fix is to empty the -wal
sqlite3 "$T/walstale/p.db" ".filectrl persist_wal 1" "PRAGMA wal_checkpoint" >/dev/null || fail "checkpointing the kept -wal"
[ "$(wal_frames "$T/walstale/p.db-wal")" -ge 8 ] && ok || fail "the persistent -wal lost its frames"
flipped=$(flip_wal "$T/walstale/p.db-wal")
expect 1 "Every page they hold is in the database already" -- "$PROFDB" --db "$T/walstale/p.db" check
truncate -s 0 "$T/walstale/p.db-wal"
expect 0 "" -- "$PROFDB" --db "$T/walstale/p.db" query runs --state complete
[ "$(grep -c ' wp[1-7] ' "$T/out")" = 7 ] && ok || fail "the -wal emptied as check said: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$T/walstale/p.db" check

# --- xensim as a daemon: an owner-only log that shows names escaped, and a
# stop that does not claim it is "already running" while it waits ----------
SD="$T/sim"
if "$XS" start --dir "$SD" >"$T/out" 2>&1; then
	"$XS" create --dir "$SD" --name "$(printf 'evil\033]0;t\007\nxensim 00:00:00.000 forged')" >/dev/null 2>&1
	[ "$(stat -c %a "$SD/xensim.log")" = 600 ] && ok || fail "xensim.log mode $(stat -c %a "$SD/xensim.log")"
	grep -q $'\033\|\007' "$SD/xensim.log" && fail "xensim.log holds raw control characters" || ok
	grep -q 'evil\\x1b]0;t\\x07\\x0axensim 00:00:00.000 forged' "$SD/xensim.log" && ok ||
		fail "xensim.log does not show the name escaped: $(cat "$SD/xensim.log")"
	"$XS" stop --dir "$SD" >"$T/out" 2>&1 && ok || fail "xensim stop: $(cat "$T/out")"
	grep -q "already running" "$T/out" && fail "xensim stop said: $(cat "$T/out")" || ok
else
	fail "xensim start: $(cat "$T/out")"
fi

# --- the backend's clean stop empties the -wal too: 7 runs (3 guests, 4
# imports beside it) in a shared store, the backend stopped, a bit flipped
# in the -wal if anything is left there: all 7 listed, check ok -----------
with_xensim
start_xensim
WB="$T/walbackend"
mkdir -p "$WB" && chmod 2750 "$WB"
"$BACKEND" start --platform sim --db "$WB/p.db" >/dev/null || { echo "backend start failed"; exit 99; }
guest_cfg walguest
for i in 1 2 3; do
	DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || fail "create walguest $i"
	"$STUB" --platform sim --mode halvm --domid "$DOM" --prof "$P" --hp "$H" >"$T/stub.log" 2>&1 ||
		fail "guest $i: $(tail -2 "$T/stub.log")"
	"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
	"$PROFDB" --db "$WB/p.db" import-disk --name "walimp$i" "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 || fail "import beside the backend"
done
"$PROFDB" --db "$WB/p.db" import-disk --name walimp4 "$T/prof.disk" "$T/hp.disk" >/dev/null 2>&1 || fail "import beside the backend"
for _ in $(seq 100); do
	[ "$(sqlite3 "$WB/p.db" "select count(*) from runs where state = 'complete'")" = 7 ] && break
	sleep 0.1
done
"$BACKEND" stop >/dev/null 2>&1 && ok || fail "backend stop"
wal_empty "$WB/p.db-wal" && ok ||
	fail "the backend's stop left $(wal_frames "$WB/p.db-wal") frames in a shared store's -wal"
flipped=$(flip_wal "$WB/p.db-wal")
expect 0 "" -- "$PROFDB" --db "$WB/p.db" query runs --state complete
[ "$(grep -c ' wal\(guest\|imp[1-4]\) ' "$T/out")" = 7 ] && ok ||
	fail "after a bit flipped in the -wal (frame $flipped) of a store the backend stopped: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$WB/p.db" check

finish test_cli
