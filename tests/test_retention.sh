#!/usr/bin/env bash
# test_retention.sh - profdb's one command-line style and its retention:
# global options anywhere, --help on every command, the documented JSON
# shapes (tests/json_shapes.py, docs/json.md), delete, prune (every
# filter, --dry-run), du, the space of deleted runs given back, and a
# delete beside a backend capturing another run, which stays byte-exact.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
jx() { sqlite3 :memory: "select json_extract(readfile('$T/out'), '$1')"; }
shape() { python3 "$S/tests/json_shapes.py" "$1" "$T/out" && ok || fail "$2: JSON not as documented: $(head -c 400 "$T/out")"; }
nruns() { sqlite3 "$PROFSVC_DB" "select count(*) from runs"; }
blocks() { stat -c %b "$PROFSVC_DB-data"; }

P="$FIX/leak/leak-p-hc.prof"
H="$FIX/leak/leak-p-hc.hp"
# a 60 KB profile: its chunk rows stay in the database (overflow pages)
head -c 45000 /dev/urandom | base64 >"$T/mid.prof"
import small "$T/mid.prof" "$H"                                               # run 1
# 4 MB profiles: whole 64 KiB chunks, kept in the data file's slots
head -c 3000000 /dev/urandom | base64 >"$T/big.prof"
"$MKDISK" --prof "$T/big.prof" "$T/big.disk" >/dev/null || { echo "mkdisk failed"; exit 99; }
for n in big-a big-b big-c; do
	"$PROFDB" import-disk --force --name $n "$T/big.disk" >/dev/null 2>&1 || { echo "import failed"; exit 99; }
done                                                                           # runs 2-4
import other "$P" "$H"                                                         # run 5

# --- global options anywhere, stopping at -- ------------------------------------------
mv "$PROFSVC_DB" "$T/q.db"; for f in -wal -shm -data; do [ -e "$PROFSVC_DB$f" ] && mv "$PROFSVC_DB$f" "$T/q.db$f"; done
expect 1 "no database at" -- "$PROFDB" query runs
for args in "--db $T/q.db query runs" "query runs --db $T/q.db" "--db=$T/q.db query runs" \
	"query runs --db=$T/q.db" "query --db $T/q.db runs" "show --db $T/q.db 1" "show 1 --db=$T/q.db"; do
	expect 0 "" -- "$PROFDB" $args
	grep -q small "$T/out" && ok || fail "'$args' did not read $T/q.db: $(cat "$T/out")"
done
expect 2 "unexpected argument '--db'" -- "$PROFDB" query runs -- --db "$T/q.db"
expect 2 "--db needs a path" -- "$PROFDB" query runs --db
expect 2 "--db needs a path" -- "$PROFDB" --db= query runs
expect 2 "unknown option" -- "$PROFDB" --frob query runs
expect 0 "" -- "$PROFDB" query runs --version
grep -q '^profdb (profsvc) ' "$T/out" && ok || fail "--version after the command: $(cat "$T/out")"
mv "$T/q.db" "$PROFSVC_DB"; for f in -wal -shm -data; do [ -e "$T/q.db$f" ] && mv "$T/q.db$f" "$PROFSVC_DB$f"; done

# --- every command's --help: its usage on stdout, exit 0; a bad option: 2 ---------------
for c in query show export export-disk import import-disk check heap top flame diff report serve watch delete prune du sync; do
	expect 0 "" -- "$PROFDB" $c --help
	grep -q "^usage: profdb $c" "$T/out" && ok || fail "$c --help: no usage on stdout: $(head -2 "$T/out")"
	[ ! -s "$T/err" ] && ok || fail "$c --help wrote to stderr: $(cat "$T/err")"
	expect 2 "" -- "$PROFDB" $c --no-such-option
done
expect 0 "" -- "$PROFDB" --help
for c in delete prune du import; do grep -q "^  $c" "$T/out" && ok || fail "profdb --help does not list $c"; done

# --- JSON: one documented shape per object ------------------------------------------------
expect 0 "" -- "$PROFDB" query runs --json; shape runs "query runs"
[ "$(sqlite3 :memory: "select json_array_length(readfile('$T/out'), '\$.runs')")" = 5 ] && ok || fail "query runs --json: not 5 runs"
expect 0 "" -- "$PROFDB" show 1 --json; shape show "show"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.devices[0].status.file_size')")" = "$(stat -c %s "$T/mid.prof")" ] && ok || fail "show: status.file_size"
expect 0 "" -- "$PROFDB" check --json; shape check "check"
expect 0 "" -- "$PROFDB" du --json; shape du "du"
expect 0 "" -- "$PROFDB" prune --keep 0 --dry-run --json; shape delete "prune --dry-run"

# --- delete: checked first, so a bad argument deletes nothing -----------------------------
expect 1 "no run 99" -- "$PROFDB" delete 1 99
expect 1 "not a run id" -- "$PROFDB" delete 1 x
expect 2 "at least one RUN" -- "$PROFDB" delete
[ "$(nruns)" = 5 ] && ok || fail "a refused delete deleted runs"
# a run still marked running (as a guest's is) is refused without --force
sqlite3 "$PROFSVC_DB" "update runs set state = 'running', ended_us = NULL where run_id = 5"
expect 1 "still running" -- "$PROFDB" delete 1 5
[ "$(nruns)" = 5 ] && ok || fail "delete of a running run deleted something"

# --- space given back: the data file's blocks and the database's pages -------------------
before=$(blocks)
expect 0 "" -- "$PROFDB" delete 2 --json; shape delete "delete"
after=$(blocks)
[ $(((before - after) * 512)) -ge 3900000 ] && ok || fail "delete gave back $(((before - after) * 512)) bytes of the data file, not a run's 4 MB"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.reclaimed.data_bytes')")" -ge 3900000 ] && ok || fail "delete --json: reclaimed $(cat "$T/out")"
[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from runs where run_id = 2")" = 0 ] && ok || fail "run 2 still there"
expect 0 "" -- "$PROFDB" check
expect 0 "" -- "$PROFDB" delete 1
grep -q "deleted run 1 (small, complete)" "$T/out" && ok || fail "delete output: $(cat "$T/out")"

# --- prune: filters, --keep, --older-than, --dry-run -----------------------------------------
import p-one "$P" "$H"; import p-two "$P" "$H"; import q-one "$P" "$H"  # runs 6, 7, 8
expect 2 "needs --older-than" -- "$PROFDB" prune
expect 2 "is not a duration" -- "$PROFDB" prune --older-than 3x
expect 2 "is not a duration" -- "$PROFDB" prune --older-than -3d
expect 2 "--state must be" -- "$PROFDB" prune --keep 1 --state old
expect 2 "unexpected argument" -- "$PROFDB" prune --keep 1 7
n0=$(nruns)
expect 0 "" -- "$PROFDB" prune --keep 0 --dry-run
[ "$(nruns)" = "$n0" ] && ok || fail "--dry-run deleted runs"
grep -q "would delete run 6 (p-one" "$T/out" && ok || fail "dry run output: $(cat "$T/out")"
grep -q "kept run 5 (running" "$T/out" && ok || fail "dry run: the running run not named as kept: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" prune --older-than 1d --json
[ "$(nruns)" = "$n0" ] && ok || fail "--older-than 1d deleted new runs"
# run 6 started 40 days ago: --older-than 30d takes it, and nothing else
sqlite3 "$PROFSVC_DB" "update runs set started_us = started_us - 40 * 86400 * 1000000 where run_id = 6"
expect 0 "" -- "$PROFDB" prune --older-than 30d --json
[ "$(sqlite3 :memory: "select group_concat(j.value ->> 'run_id') from json_each(readfile('$T/out'), '\$.deleted') j")" = 6 ] && ok || fail "--older-than 30d: $(cat "$T/out")"
# --name and --keep: the newest N of the matching runs stay
import p-three "$P" "$H"                                                     # run 9
expect 0 "" -- "$PROFDB" prune --name 'p-*' --keep 1
[ "$(sqlite3 "$PROFSVC_DB" "select group_concat(name) from (select name from runs order by run_id)")" = "big-b,big-c,other,q-one,p-three" ] &&
	ok || fail "--name 'p-*' --keep 1 left: $(sqlite3 "$PROFSVC_DB" "select group_concat(name) from runs")"
# --state: only crashed runs
"$MKDISK" --crash-at 3000 "$H" "$T/crash.disk" >/dev/null
"$PROFDB" import-disk --name crashy --hp "$T/crash.disk" >/dev/null 2>&1                # run 10
expect 0 "" -- "$PROFDB" prune --state crashed --keep 0
[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from runs where state = 'crashed'")" = 0 ] && ok || fail "--state crashed left crashed runs"
[ "$(nruns)" = 5 ] && ok || fail "--state crashed deleted other runs: $(sqlite3 "$PROFSVC_DB" "select group_concat(name) from runs")"
# a running run goes only with --force
expect 0 "" -- "$PROFDB" prune --keep 0 --state running
[ "$(nruns)" = 5 ] && ok || fail "prune deleted a running run without --force"
expect 0 "" -- "$PROFDB" delete 5 --force
[ "$(nruns)" = 4 ] && ok || fail "delete --force of a running run"

# --- du ----------------------------------------------------------------------------------------
expect 0 "" -- "$PROFDB" du -n 1 --json; shape du "du -n 1"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.du.runs[0].run_id') || ',' || json_array_length(readfile('$T/out'), '\$.du.runs')")" = 3,1 ] &&
	ok || fail "du: the biggest run is not run 3 (the first of two of 4 MB): $(cat "$T/out")"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.du.data.allocated_bytes')")" = "$(($(blocks) * 512))" ] && ok || fail "du: data file allocated bytes"
expect 0 "" -- "$PROFDB" du
grep -q "data file" "$T/out" && ok || fail "du text: $(cat "$T/out")"
# sizes as every view writes them (the report's facts, the pages): "4.2 MB
# (4,194,304 bytes)", under 1000 bytes "512 B"; the same bytes as --json
"$PROFDB" du --json >"$T/du.json"
python3 - "$T/out" "$T/du.json" <<'PY' && ok || fail "du: sizes not as the views write them: $(cat "$T/out")"
import json, re, sys
text, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["du"]
SIZE = r"(\d+ B|\d+(\.\d)? [kMGTPE]B \(([\d,]+) bytes\))"
def size(s):
    m = re.fullmatch(SIZE, s)
    assert m, "not a size: %r" % s
    return int(m.group(3).replace(",", "")) if m.group(3) else int(s.split()[0])
lines = text.splitlines()
files = {"database": "database", "WAL": "wal", "data file": "data"}
for l in lines[1:4]:
    what, rest = l[2:13].strip(), l[13:]
    if d[files[what]] is None:
        assert rest == "-", l
        continue
    m = re.fullmatch(SIZE + " allocated, " + SIZE + " apparent", rest)
    assert m, l
    a, b = rest.split(" allocated, ")
    assert size(a) == d[files[what]]["allocated_bytes"] and size(b[:-len(" apparent")]) == d[files[what]]["apparent_bytes"], l
assert size(re.match(r"  free +(.*) of database pages", lines[4]).group(1)) == d["free_db_bytes"], lines[4]
assert size(re.match(r"  freed +(.*) of data-file slots", lines[5]).group(1)) == d["reclaimable_data_bytes"], lines[5]
rows = [l for l in lines[7:] if l.strip()]
assert len(rows) == len(d["runs"]) >= 1, rows
for l, r in zip(rows, d["runs"]):
    cells = re.split(r"  +", l.strip())
    assert int(cells[0]) == r["run_id"] and [size(c) for c in cells[1:]] == [r["bytes"], r["db_bytes"], r["data_bytes"]], l
print("ok")
PY
expect 2 "" -- "$PROFDB" du -n x

# --- beside a backend capturing a guest: the guest's run stays byte-exact -------------------
start_xensim
start_backend
guest_cfg live-guest
DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || { fail "create"; finish test_retention; exit 1; }
LP="$FIX/phases/phases-p-hc.prof" LH="$FIX/phases/phases-hd-i0.01.hp"
( "$STUB" --mode halvm --domid "$DOM" --prof "$LP" --hp "$LH" --pace 60 -q >"$T/stub.log" 2>&1
  echo "stub exit $?" >>"$T/stub.log"; sleep 1; "$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null ) &
GUEST=$!
LIVE=
for _ in $(seq 100); do
	LIVE=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'live-guest' and state = 'running'" 2>/dev/null)
	[ -n "$LIVE" ] && break; sleep 0.1
done
[ -n "$LIVE" ] && ok || fail "the live guest's run never appeared"
expect 1 "still running" -- "$PROFDB" delete "$LIVE"
expect 0 "" -- "$PROFDB" delete 4 --json
# given back now, or left to the backend when a reader still sees it
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.reclaimed.data_bytes') + json_extract(readfile('$T/out'), '\$.reclaimed.data_bytes_waiting')")" -ge 3900000 ] &&
	ok || fail "delete beside the backend: space $(cat "$T/out")"
expect 0 "" -- "$PROFDB" prune --keep 0 --name 'big-*'
expect 0 "" -- "$PROFDB" prune --keep 0 --json
grep -q "\"reason\":\"running" "$T/out" && ok || fail "prune beside the guest: its run not kept: $(cat "$T/out")"
# A second guest, writing, whose run is pruned with --force: the backend
# closes its devices first, so the guest sees its disk go (its backend
# Closing) and never an I/O error; the run goes, the backend goes on
# serving the first guest, and nothing of the pruned run is left.
sed 's/live-guest/doomed-guest/' "$T/g.cfg" >"$T/d.cfg"
DDOM=$("$BACKEND" create --platform sim "$T/d.cfg") || fail "create doomed-guest"
( "$STUB" --mode halvm --domid "$DDOM" --prof "$LP" --hp "$LH" --pace 60 -q >"$T/dstub.log" 2>&1
  echo "stub exit $?" >>"$T/dstub.log"; "$XS" destroy --dir "$XENSIM_DIR" "$DDOM" >/dev/null ) &
DGUEST=$!
DOOMED=
for _ in $(seq 100); do
	DOOMED=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'doomed-guest' and state = 'running' and
	         (select sum(write_bytes) from devices where devices.run_id = runs.run_id) > 8192" 2>/dev/null)
	[ -n "$DOOMED" ] && break; sleep 0.1
done
[ -n "$DOOMED" ] && ok || fail "the doomed guest's run never appeared"
expect 0 "" -- "$PROFDB" prune --keep 0 --name 'doomed-*' --state running --force --json
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.deleted[0].run_id')")" = "$DOOMED" ] && ok ||
	fail "prune --force did not delete the running run $DOOMED: $(cat "$T/out")"
[ ! -s "$T/err" ] && ok || fail "prune --force of a captured run: $(cat "$T/err")"
wait $DGUEST
grep -q "the disk went away" "$T/dstub.log" && ok || fail "the pruned run's guest did not see its disk close: $(cat "$T/dstub.log")"
grep -q "Block write failed" "$T/dstub.log" && fail "the pruned run's guest got I/O errors: $(cat "$T/dstub.log")" || ok
"$BACKEND" status >/dev/null && ok || fail "the backend stopped answering after its live run was pruned"
[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from runs where run_id = $DOOMED") $(sqlite3 "$PROFSVC_DB" "select count(*) from devices where run_id = $DOOMED")" = "0 0" ] &&
	ok || fail "the pruned run came back: $(sqlite3 "$PROFSVC_DB" "select * from runs where run_id = $DOOMED")"
# A third, whose run is deleted where profdb cannot reach the backend (its
# control socket elsewhere): profdb says so, the guest gets an I/O error,
# and the backend, told by the store that the run is gone, closes the
# run's devices at once and lets the run go (it once tried to end it in
# the store every second, forever, once its domain was gone).
sed 's/live-guest/lost-guest/' "$T/g.cfg" >"$T/l.cfg"
LDOM=$("$BACKEND" create --platform sim "$T/l.cfg") || fail "create lost-guest"
( "$STUB" --mode halvm --domid "$LDOM" --prof "$LP" --hp "$LH" --pace 60 -q >"$T/lstub.log" 2>&1
  echo "stub exit $?" >>"$T/lstub.log"; sleep 3; "$XS" destroy --dir "$XENSIM_DIR" "$LDOM" >/dev/null ) &
LGUEST=$!
LOST=
for _ in $(seq 100); do
	LOST=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'lost-guest' and state = 'running' and
	       (select sum(write_bytes) from devices where devices.run_id = runs.run_id) > 8192" 2>/dev/null)
	[ -n "$LOST" ] && break; sleep 0.1
done
[ -n "$LOST" ] && ok || fail "the lost guest's run never appeared"
mkdir -p "$T/elsewhere"
PROFSVC_RUN_DIR="$T/elsewhere" expect 0 "could not be closed first" -- "$PROFDB" delete "$LOST" --force
held=
for _ in $(seq 40); do
	held=$("$BACKEND" status --json | python3 -c "import json,sys; d=json.load(sys.stdin)['backend']
print(sum(1 for x in d['devices'] if x['domid'] == $LDOM and x['run_id'] == $LOST))")
	[ "$held" = 0 ] && break; sleep 0.1
done
[ "$held" = 0 ] && ok || fail "the backend still holds $held devices of the deleted run $LOST"
wait $LGUEST
for _ in $(seq 30); do
	held=$("$BACKEND" status --json | python3 -c "import json,sys; d=json.load(sys.stdin)['backend']
print(sum(1 for x in d['runs'] if x['run_id'] == $LOST))")
	[ "$held" = 0 ] && break; sleep 0.1
done
[ "$held" = 0 ] && ok || fail "the backend still holds the deleted run $LOST: $("$BACKEND" status)"
wait $GUEST
grep -q 'stub exit 0' "$T/stub.log" && ok || fail "the live guest failed: $(cat "$T/stub.log")"
for _ in $(seq 100); do
	[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $LIVE")" = complete ] && break; sleep 0.1
done
# no chunk of a device that is gone (the pruned run's later writes)
[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from chunks where (rowid >> 32) not in (select device_id from devices)")" = 0 ] &&
	ok || fail "chunks of the pruned run's devices are left in the store"
expect 0 "" -- "$PROFDB" export "$LIVE" --prof "$T/live.prof" --hp "$T/live.hp"
same "$T/live.prof" "$LP"
same "$T/live.hp" "$LH"
[ "$(nruns)" = 1 ] && ok || fail "runs left: $(sqlite3 "$PROFSVC_DB" "select group_concat(run_id) from runs")"
"$BACKEND" stop >/dev/null
expect 0 "" -- "$PROFDB" check
# database pages: a guest's small writes are kept in SQLite, and deleting
# its run gives their pages back to the filesystem (incremental vacuum)
pages=$(sqlite3 "$PROFSVC_DB" "pragma page_count")
size=$(stat -c %s "$PROFSVC_DB")
expect 0 "" -- "$PROFDB" delete "$LIVE" --json
[ "$(sqlite3 "$PROFSVC_DB" "pragma page_count")" -lt $((pages - 10)) ] && ok || fail "the database kept its pages ($pages before, $(sqlite3 "$PROFSVC_DB" "pragma page_count") after)"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.reclaimed.db_bytes')")" -gt 40000 ] && ok || fail "delete --json: db_bytes $(cat "$T/out")"
sqlite3 "$PROFSVC_DB" "pragma wal_checkpoint(truncate)" >/dev/null
[ "$(stat -c %s "$PROFSVC_DB")" -lt "$size" ] && ok || fail "the database file did not shrink from $size bytes"

# --- import-disk --json: the new run with its devices, as show prints them ----------------
"$MKDISK" --hp "$H" "$T/h.disk" >/dev/null
expect 0 "" -- "$PROFDB" import-disk --json --name js --hp "$T/h.disk"; shape import "import-disk"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/out'), '\$.run.name') || ' ' || json_extract(readfile('$T/out'), '\$.devices[0].status.file_size')")" = "js $(stat -c %s "$H")" ] &&
	ok || fail "import-disk --json: $(head -c 300 "$T/out")"

# --- export, export-disk --json: the files written ------------------------------------------
expect 0 "" -- "$PROFDB" export latest -o "$T/exp" --json; shape export "export"
[ "$(jx '$.exported[0].vdev') $(jx '$.exported[0].bytes')" = "xvdp2 $(stat -c %s "$H")" ] && cmp -s "$H" "$(jx '$.exported[0].path')" &&
	ok || fail "export --json: $(head -c 300 "$T/out")"
expect 2 "cannot go there too" -- "$PROFDB" export latest --hp - --json
expect 0 "" -- "$PROFDB" export-disk --json latest xvdp2 "$T/exp/h.img"; shape export "export-disk"
[ "$(jx '$.exported[0].bytes')" = "$(stat -c %s "$T/exp/h.img")" ] && ok || fail "export-disk --json: $(cat "$T/out")"

finish test_retention
