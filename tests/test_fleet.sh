#!/usr/bin/env bash
# test_fleet.sh - the fleet catalogue against a real PostgreSQL server: a
# private one (initdb and pg_ctl in a scratch directory, as an unprivileged
# user, on a Unix socket), stopped at the end.  Two hosts' stores with the
# same run ids (one of them captured a HaLVM guest and a MirageOS trace
# with profile-backend) are synced into it: query runs lists both hosts,
# every export through PostgreSQL is byte-identical to the host's own, a
# repeated sync sends nothing, a sync killed mid-run or cut off by the
# server stopping leaves no partial run and the next completes it, a
# running run pushed with --include-running is replaced once it ends,
# hostile guest names come back as they went in, and a catalogue that is
# missing, newer or unreachable is refused with a clear line.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
export PROFSVC_DB="$T/a.db"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
	[ -n "${CI:-}" ] && { echo "test_fleet: PostgreSQL's server missing (quickstart test installs it)"; exit 1; }
	echo "test_fleet: PostgreSQL's server (initdb, pg_ctl) not installed: skipped"
	exit 77
fi
# the server refuses to run as root: as nobody then, in a directory of its own
AS=()
if [ "$(id -u)" = 0 ]; then
	AS=(runuser -u nobody --)
	chmod 711 "$T"
fi
PGD="$T/pg"
mkdir -p "$PGD/data" "$PGD/sock"
[ "$(id -u)" = 0 ] && chown -R nobody "$PGD"
pg() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w "$@" >>"$PGD/ctl.log" 2>&1; }
pg_up() { pg -o "-k $PGD/sock -c listen_addresses='' -c fsync=off" start; }
at_exit 'pg -m immediate stop'
keep_at_exit '"$T"/*.log' '"$PGD/log"'
"${AS[@]}" "$PGBIN/initdb" -D "$PGD/data" -U profsvc --auth=trust -E UTF8 --locale=C.UTF-8 >"$PGD/initdb.log" 2>&1 ||
	{ echo "initdb failed: $(tail -3 "$PGD/initdb.log")"; exit 99; }
pg_up || { echo "the server did not start: $(tail -3 "$PGD/log")"; exit 99; }
PSQL=(psql -X -q -t -A -h "$PGD/sock" -U profsvc)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE fleet" -c "CREATE DATABASE empty" -c "CREATE DATABASE newer" -c "CREATE DATABASE old" >/dev/null ||
	{ echo "createdb failed"; exit 99; }
URL="postgresql://profsvc@/fleet?host=$PGD/sock"
q() { "${PSQL[@]}" -d fleet -c "$1"; }
# as_host NAME CMD...: CMD with the hostname NAME (its own UTS namespace)
if [ "$(id -u)" = 0 ] && unshare --uts true 2>/dev/null; then
	as_host() { local h=$1; shift; unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"; }
else
	as_host() { shift; "$@"; }
fi
# jv FILE EXPR: a value of the JSON document d in FILE, compact (EXPR in Python)
jv() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2]), separators=(",", ":")))' "$1" "$2" 2>/dev/null; }

# --- host A: imports, a captured HaLVM guest and a MirageOS trace ------------------------
P="$FIX/leak/leak-p-hc.prof" H="$FIX/leak/leak-p-hc.hp"
import 'a-one' "$P" "$H"                                                        # A run 1
import $'evil\x1b[31m<script>"\xff\xfe\');DROP TABLE runs;--' "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp" # A run 2
start_xensim
start_backend
guest_cfg captured
sed "s|]$|, 'vdev=xvdp3, backendtype=profsvc' ]|" "$T/g.cfg" >"$T/ev.cfg" # and GHC's eventlog (schema 4's role)
EV="$S/tests/data/ghc-eventlog/churn-l-hT.eventlog"
DOM=$("$BACKEND" create --platform sim "$T/ev.cfg") || { echo "create failed"; exit 99; }
"$STUB" --mode halvm --domid "$DOM" --prof "$P" --hp "$H" --eventlog "$EV" -q >"$T/stub.log" 2>&1 || fail "the HaLVM guest: $(cat "$T/stub.log")"
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null                             # A run 3
MDOM=$("$XS" create --dir "$XENSIM_DIR" --name mirage-guest) || { echo "xensim create failed"; exit 99; }
"$STUB" --platform sim --mode mirage --domid "$MDOM" -q --pages 16 --events 3000 --rate 20000 >"$T/mstub.log" 2>&1 ||
	fail "the MirageOS guest: $(cat "$T/mstub.log")"
"$XS" destroy --dir "$XENSIM_DIR" "$MDOM" >/dev/null                            # A run 4
SDOM=$("$XS" create --dir "$XENSIM_DIR" --name sampled-guest --exec /bin/sleep 1) || { echo "xensim create --exec failed"; exit 99; }
"$BACKEND" sample "$SDOM" --hz 199 >"$T/sample.out" 2>&1 || fail "sampling a program: $(cat "$T/sample.out")" # A run 5
for _ in $(seq 200); do
	[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from runs where state = 'running'")" = 0 ] && break; sleep 0.05
done
[ "$(sqlite3 "$PROFSVC_DB" "select count(*) from runs where state != 'running'")" = 5 ] && ok ||
	fail "host A: runs $(sqlite3 "$PROFSVC_DB" "select run_id, name, state from runs")"

# --- host B: other profiles under the same run ids ------------------------------------------
BDB="$T/b.db"
PROFSVC_DB=$BDB import 'b-one' "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp" # B run 1
PROFSVC_DB=$BDB import 'b-two' "$P" "$H"                                                     # B run 2

# --- a reader never creates the catalogue ---------------------------------------------------
expect 1 "holds no profsvc catalogue yet" -- "$PROFDB" --db "$URL" query runs
expect 1 "no profsvc catalogue" -- "$PROFDB" --db "postgresql://profsvc@/empty?host=$PGD/sock" show 1
expect 2 "a fleet catalogue" -- "$PROFDB" --db "$URL" du
expect 2 "a fleet catalogue" -- "$PROFDB" --db "$URL" delete 1
expect 2 "sync needs --to" -- "$PROFDB" sync
expect 2 "postgresql:// URL" -- "$PROFDB" sync --to /tmp/x.db
expect 2 "--host picks a host of a fleet" -- "$PROFDB" query runs --host x

# --- both hosts synced ----------------------------------------------------------------------
expect 0 "" -- as_host host-a "$PROFDB" sync --to "$URL" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current", "complete")]')" = "[5,0,true]" ] && ok ||
	fail "sync of host A: $(cat "$T/out")"
python3 "$S/tests/json_shapes.py" sync "$T/out" && ok || fail "sync --json not as documented: $(cat "$T/out")"
expect 0 "" -- as_host host-b "$PROFDB" --db "$BDB" sync --to "$URL"
grep -q "^2 runs pushed" "$T/out" && ok || fail "sync of host B: $(cat "$T/out")"
[ "$(q "select count(*) from runs") $(q "select count(*) from hosts")" = "7 2" ] && ok ||
	fail "the catalogue holds $(q "select host_id, run_id from runs")"

# --- --since: only the runs started since then; the next sync without it the rest -------------
CDB="$T/c.db"
PROFSVC_DB=$CDB import 'c-old' "$P" "$H"
sleep 1.1
MID=$(date -u +%Y-%m-%dT%H:%M:%S)
PROFSVC_DB=$CDB import 'c-new' "$P" "$H"
"${PSQL[@]}" -d postgres -c "CREATE DATABASE since" >/dev/null
SURL="postgresql://profsvc@/since?host=$PGD/sock"
sq() { "${PSQL[@]}" -d since -c "$1"; }
expect 0 "" -- "$PROFDB" --db "$CDB" sync --to "$SURL" --since "$MID" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current")]')" = "[1,0]" ] &&
	[ "$(sq "select string_agg(convert_from(name, 'UTF8'), ',' order by run_id) from runs")" = c-new ] && ok ||
	fail "sync --since $MID: $(cat "$T/out"); the catalogue: $(sq "select run_id, convert_from(name, 'UTF8') from runs")"
expect 0 "" -- "$PROFDB" --db "$CDB" sync --to "$SURL" --since 1h --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current")]')" = "[1,1]" ] &&
	[ "$(sq "select string_agg(convert_from(name, 'UTF8'), ',' order by run_id) from runs")" = c-old,c-new ] && ok ||
	fail "sync --since 1h after --since $MID: $(cat "$T/out")"
expect 2 "--since: 'yesterday' is not a UTC time" -- "$PROFDB" --db "$CDB" sync --to "$SURL" --since yesterday

# --- query runs: both hosts' runs, a host column, --host -------------------------------------
expect 0 "" -- "$PROFDB" --db "$URL" query runs
[ "$(grep -c . "$T/out")" = 8 ] && grep -q "^HOST " "$T/out" && ok || fail "fleet query runs: $(cat "$T/out")"
if [ "$(id -u)" = 0 ]; then
	grep -q '^host-a .* a-one ' "$T/out" && grep -q '^host-b .* b-two ' "$T/out" && ok ||
		fail "fleet query runs: hostnames: $(cat "$T/out")"
	expect 0 "" -- "$PROFDB" --db "$URL" query runs --host host-b --json
	[ "$(jv "$T/out" '[r["name"] for r in d["runs"]]')" = '["b-one","b-two"]' ] && ok || fail "--host host-b: $(cat "$T/out")"
fi
HA=$(sqlite3 "$PROFSVC_DB" "select value from meta where key = 'store_id'")
HB=$(sqlite3 "$BDB" "select value from meta where key = 'store_id'")
expect 0 "" -- "$PROFDB" --db "$URL" query runs --host "${HB:0:8}" --json
[ "$(jv "$T/out" 'sorted(set((r["run_id"], r["host_id"]) for r in d["runs"]))' | tr '()' '[]')" = "[[1,\"$HB\"],[2,\"$HB\"]]" ] && ok ||
	fail "--host by a host id prefix: $(cat "$T/out")"
python3 "$S/tests/json_shapes.py" fleet_runs "$T/out" && ok || fail "fleet query runs --json not as documented"
expect 1 "no host 'nosuch'" -- "$PROFDB" --db "$URL" query runs --host nosuch
expect 0 "" -- "$PROFDB" --db "$URL" query runs --host "${HB:0:8}"
[ "$(grep -c . "$T/out")" = 3 ] && ok || fail "--host in the table: $(cat "$T/out")"
# the table and --json list the same runs in the same order
"$PROFDB" --db "$URL" query runs | awk 'NR > 1 { print $2 }' >"$T/t.ids"
"$PROFDB" --db "$URL" query runs --json >"$T/j.json" &&
	python3 -c 'import json, sys; [print(r["run_id"]) for r in json.load(open(sys.argv[1]))["runs"]]' "$T/j.json" >"$T/j.ids"
same "$T/t.ids" "$T/j.ids"
expect 0 "" -- "$PROFDB" --db "$URL" query runs --state complete --name 'b-*' --limit 1 --json
[ "$(jv "$T/out" '[r["name"] for r in d["runs"]]')" = '["b-two"]' ] && ok || fail "--name --limit over the fleet: $(cat "$T/out")"
# a hostile guest's name: the same JSON as the host's own listing
"$PROFDB" query runs --json >"$T/l.json" && jv "$T/l.json" 'd["runs"][1]["name"]' >"$T/local-name"
"$PROFDB" --db "$URL" query runs --host "$HA" --json >"$T/f.json" && jv "$T/f.json" 'd["runs"][1]["name"]' >"$T/fleet-name"
same "$T/local-name" "$T/fleet-name"
grep -q 'DROP' "$T/fleet-name" && ! grep -q $'\x1b' "$T/fleet-name" && ok || fail "the hostile name: $(cat -v "$T/fleet-name")"
[ "$(q "select count(*) from runs")" = 7 ] && ok || fail "the hostile name changed the catalogue"
# the bytes as the guest gave them, in a bytea
[ "$(q "select encode(name, 'hex') from runs where host_id = '$HA' and run_id = 2")" = \
  "$(sqlite3 "$PROFSVC_DB" "select hex(name) from runs where run_id = 2" | tr A-F a-f)" ] && ok ||
	fail "the hostile name's bytes differ in PostgreSQL"

# --- runs named across hosts -----------------------------------------------------------------
expect 1 "more than one host" -- "$PROFDB" --db "$URL" show 1
expect 1 "no run" -- "$PROFDB" --db "$URL" show 9
expect 1 "not a run" -- "$PROFDB" --db "$URL" show x:y
expect 0 "" -- "$PROFDB" --db "$URL" show "${HA:0:6}:3"
grep -q "name *captured" "$T/out" && ok || fail "show HOST:3: $(head -3 "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" show 4 --json
[ "$(jv "$T/out" 'd["run"]["name"]')" = '"mirage-guest"' ] && ok || fail "show 4 (only on host A): $(head -c 300 "$T/out")"

# --- exports through PostgreSQL, byte for byte the host's ----------------------------------------
for h in A B; do
	if [ $h = A ]; then db=$PROFSVC_DB id=$HA; else db=$BDB id=$HB; fi
	for r in $(sqlite3 "$db" "select run_id from runs where run_id in (select run_id from devices where role = 'prof')"); do
		rm -f "$T"/l.* "$T"/f.*
		"$PROFDB" --db "$db" export "$r" --prof "$T/l.prof" --hp "$T/l.hp" --salvage >/dev/null 2>&1
		expect 0 "" -- "$PROFDB" --db "$URL" export "$id:$r" --prof "$T/f.prof" --hp "$T/f.hp" --salvage
		[ -s "$T/l.prof" ] && same "$T/l.prof" "$T/f.prof" || fail "host $h run $r: .prof"
		[ -s "$T/l.hp" ] && same "$T/l.hp" "$T/f.hp" || fail "host $h run $r: .hp"
		"$PROFDB" --db "$db" export-disk "$r" xvdp1 "$T/l.disk" >/dev/null 2>&1
		expect 0 "" -- "$PROFDB" --db "$URL" export-disk "$id:$r" xvdp1 "$T/f.disk"
		same "$T/l.disk" "$T/f.disk"
	done
done
same "$T/f.prof" "$P" # B run 2 is the leak pair
# the captured guest's eventlog (role 'eventlog') through the catalogue as on the host
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:3" --eventlog "$T/f.eventlog"
same "$T/f.eventlog" "$EV"
# and its events and GCs, as on the host
"$PROFDB" events 3 >"$T/l3.events" 2>/dev/null && "$PROFDB" gc 3 >"$T/l3.gc" 2>/dev/null || fail "events, gc of run 3 on the host"
expect 0 "" -- "$PROFDB" --db "$URL" events "$HA:3"; same "$T/out" "$T/l3.events"
expect 0 "" -- "$PROFDB" --db "$URL" gc "$HA:3"
[ "$(sed 1d "$T/out")" = "$(sed 1d "$T/l3.gc")" ] && ok || fail "gc over the fleet: $(cat "$T/out")"
"$PROFDB" export-disk 3 xvdp3 "$T/l3.disk" >/dev/null 2>&1
expect 0 "" -- "$PROFDB" --db "$URL" export-disk "$HA:3" xvdp3 "$T/f3.disk"
same "$T/l3.disk" "$T/f3.disk"
expect 0 "" -- "$PROFDB" --db "$URL" show "$HA:3" --json
[ "$(jv "$T/out" 'd["run"]["eventlog_bytes"]')" = "$(stat -c %s "$EV")" ] && ok || fail "show over the fleet: eventlog_bytes $(jv "$T/out" 'd["run"]')"
[ "$(q "select role from devices where host_id = '$HA' and run_id = 3 and vdev = 'xvdp3'")" = eventlog ] &&
	ok || fail "the catalogue's row of the eventlog device: $(q "select vdev, role from devices where run_id = 3")"
rm -rf "$T/l.ctf" "$T/f.ctf"
"$PROFDB" export 4 --ctf "$T/l.ctf" --trace-json "$T/l.json" >/dev/null 2>&1
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:4" --ctf "$T/f.ctf" --trace-json "$T/f.json"
diff -r "$T/l.ctf" "$T/f.ctf" >/dev/null && [ -s "$T/f.ctf/metadata" ] && ok || fail "the trace's CTF export differs"
same "$T/l.json" "$T/f.json"
"$PROFDB" show 4 --json >"$T/l.show" && jv "$T/l.show" 'd["trace"]' >"$T/l.trace"
"$PROFDB" --db "$URL" show "$HA:4" --json >"$T/f.show" && jv "$T/f.show" 'd["trace"]' >"$T/f.trace"
same "$T/l.trace" "$T/f.trace"
# a run sampled from dom0: its samples through the catalogue as on the host
"$PROFDB" export 5 --folded "$T/l.folded" --pprof "$T/l.pb.gz" >/dev/null 2>&1
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:5" --folded "$T/f.folded" --pprof "$T/f.pb.gz"
[ -s "$T/l.folded" ] && same "$T/l.folded" "$T/f.folded" || fail "the sampled run's folded stacks through the catalogue"
same "$T/l.pb.gz" "$T/f.pb.gz"
# the viewing commands read a fleet's run as the host's
for cmd in "top 3 -n 5" "heap 3 --csv" "flame 3 --json"; do
	set -- $cmd
	"$PROFDB" "$@" >"$T/l.view" 2>&1
	"$PROFDB" --db "$URL" "$1" "$HA:$2" "${@:3}" >"$T/f.view" 2>&1
	same "$T/l.view" "$T/f.view"
done
expect 0 "" -- "$PROFDB" --db "$URL" diff "$HA:1" "$HB:2" --json
grep -q '"a-one"' "$T/out" && grep -q '"b-two"' "$T/out" && ok || fail "diff across hosts: $(head -c 300 "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" report "$HB:1" -o "$T/r.html"
grep -q 'b-one' "$T/r.html" && ok || fail "report over the fleet"
# nothing of the private copies is left behind
ls "${TMPDIR:-/tmp}" | grep -q '^profdb-fleet\.' && fail "private copies left in ${TMPDIR:-/tmp}" || ok

# --- profdb serve over the catalogue: every host's runs, from a private mirror ---------------
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$T/serve-tmp"
TMPDIR="$T/serve-tmp" PROFDB_SERVE_FULL_LOOK_EVERY=2 "$PROFDB" --db "$URL" serve --listen 127.0.0.1:$PORT >"$T/serve.log" 2>&1 &
SERVE=$!
WEB="http://127.0.0.1:$PORT"
for _ in $(seq 100); do curl -sf "$WEB/api/runs" >"$T/api.json" 2>/dev/null && break; sleep 0.1; done
[ "$(jv "$T/api.json" 'len(d["runs"])')" = "$(q "select count(*) from runs")" ] && ok ||
	fail "serve over the fleet: /api/runs lists $(jv "$T/api.json" 'len(d["runs"])') runs: $(cat "$T/serve.log")"
grep -q "the fleet catalogue postgresql://profsvc@/fleet?host=.*: 7 runs" "$T/serve.log" && ok ||
	fail "serve's first line: $(head -2 "$T/serve.log")"
id_of() { jv "$T/api.json" "[r['run_id'] for r in d['runs'] if r['name'] == '$1'][0]"; }
BID=$(id_of b-two) CID=$(id_of captured) EID=$(jv "$T/api.json" "[r['run_id'] for r in d['runs'] if 'DROP' in r['name']][0]")
curl -sf "$WEB/runs/$BID/prof" -o "$T/web.prof" && same "$T/web.prof" "$P" || fail "the served .prof of b-two"
curl -sf "$WEB/runs/$CID/hp" -o "$T/web.hp" && same "$T/web.hp" "$H" || fail "the served .hp of captured"
curl -sf "$WEB/runs/$BID" -o "$T/web.html" && grep -q 'b-two' "$T/web.html" && grep -q '<svg' "$T/web.html" && ok ||
	fail "the run page of b-two: $(head -c 300 "$T/web.html")"
curl -sf "$WEB/runs/$EID" -o "$T/evil.html"
grep -q '&lt;script&gt;' "$T/evil.html" && ! grep -q '<script>"' "$T/evil.html" && ok || fail "the hostile name in the run page"
curl -sf "$WEB/compare?a=$BID&b=$CID" -o "$T/cmp.html" && grep -q 'b-two' "$T/cmp.html" && ok || fail "compare across hosts"
curl -s -o /dev/null -w '%{http_code}' "$WEB/runs/9999" | grep -q 404 && ok || fail "an unknown run over the fleet"
# a run a host pushes appears while the page is open
PROFSVC_DB=$BDB import arrives-later "$P" "$H"
as_host host-b "$PROFDB" --db "$BDB" sync -q --to "$URL" || fail "sync of arrives-later"
for _ in $(seq 100); do
	curl -sf "$WEB/api/runs" >"$T/api.json" && grep -q arrives-later "$T/api.json" && break; sleep 0.1
done
grep -q arrives-later "$T/api.json" && ok || fail "a run pushed while serving did not appear"
curl -sf "$WEB/runs/$(id_of arrives-later)/prof" -o "$T/late.prof" && same "$T/late.prof" "$P" || fail "its .prof"
if need chromium; then
	chrome() {
		timeout 90 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
			--user-data-dir="$T/chrome" "$@" 2>>"$T/chrome.log"
	}
	# (the catalogue keeps an event stream open: --timeout ends the load)
	chrome --window-size=1200,800 --timeout=4000 --screenshot="$T/fleet-catalogue.png" "$WEB/" >/dev/null
	chrome --timeout=4000 --dump-dom "$WEB/" >"$T/fleet-dom.html"
	# every run under its host's name, fetched ones too
	if [ "$(id -u)" = 0 ]; then
		[ "$(grep -o '<td class="host">[^<]*</td>' "$T/fleet-dom.html" | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" = \
		  '5 <td 3 <td ' ] && grep -q '<td class="host">host-a</td>' "$T/fleet-dom.html" && ok ||
			fail "the catalogue page in Chromium: host column $(grep -o '<td class="host">[^<]*</td>' "$T/fleet-dom.html" | sort | uniq -c)"
	fi
	chrome --window-size=1200,1400 --virtual-time-budget=5000 --screenshot="$T/fleet-run.png" "$WEB/runs/$BID" >/dev/null
	for png in fleet-catalogue fleet-run; do # drawn: not one flat colour
		[ -s "$T/$png.png" ] && [ "$(od -An -tu1 -v "$T/$png.png" | tr -s ' ' '\n' | sort -u | wc -l)" -gt 100 ] &&
			ok || fail "Chromium did not draw $png"
	done
	[ -n "${PROFSVC_KEEP:-}" ] && mkdir -p "$PROFSVC_KEEP" && cp "$T"/fleet-*.png "$PROFSVC_KEEP/"
elif [ -n "${CI:-}" ]; then
	fail "chromium missing under CI"
fi
# a run whose row was written before the newest the mirror has seen (a long
# sync committing late, or another host's): still found
q "INSERT INTO runs SELECT host_id, host_no, run_id + 1000, domid, convert_to('committed-late', 'UTF8'), uuid,
   started_us, ended_us, state, host, backend_version, source, end_reason, prof_bytes, hp_bytes, trace_bytes, 0,
   stamp, synced_us - 60000000 FROM runs WHERE name = convert_to('arrives-later', 'UTF8')" >/dev/null
for _ in $(seq 100); do
	curl -sf "$WEB/api/runs" >"$T/api.json" && grep -q committed-late "$T/api.json" && break; sleep 0.1
done
grep -q committed-late "$T/api.json" && ok || fail "a run whose row is older than the newest seen did not appear"
q "DELETE FROM runs WHERE name = convert_to('committed-late', 'UTF8')" >/dev/null
# a run deleted from the catalogue leaves the served one at the next full look
for _ in $(seq 100); do
	curl -sf "$WEB/api/runs" >"$T/api.json" && ! grep -q committed-late "$T/api.json" && break; sleep 0.1
done
grep -q committed-late "$T/api.json" && fail "a run deleted from the catalogue is still served" || ok
kill $SERVE; wait $SERVE 2>/dev/null
[ -z "$(ls "$T/serve-tmp")" ] && ok || fail "serve left its mirror: $(ls "$T/serve-tmp")"
# a catalogue whose first look takes long (a million runs: seconds; here
# made slow): serve answers at once, every page saying it is loading (503,
# nothing shown as if it were the whole catalogue), then the runs
PROFDB_SERVE_FIRST_LOOK_PAUSE_MS=3000 TMPDIR="$T/serve-tmp" "$PROFDB" --db "$URL" serve --listen 127.0.0.1:$PORT >"$T/serve.log" 2>&1 &
SERVE=$!
for _ in $(seq 100); do code=$(curl -s -o "$T/api.json" -w '%{http_code}' "$WEB/api/runs" 2>/dev/null); [ "$code" != 000 ] && break; sleep 0.05; done
[ "$code" = 503 ] && grep -q "is loading: 0 runs copied so far" "$T/api.json" && ok ||
	fail "serve over a catalogue still loading: $code $(cat "$T/api.json")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$WEB/healthz")" = 503 ] && ok || fail "/healthz while loading is not 503"
grep -q "loading its runs" "$T/serve.log" && ! grep -q ": 503$" "$T/serve.log" && ok ||
	fail "serve's log while loading: $(cat "$T/serve.log")"
for _ in $(seq 100); do curl -sf "$WEB/api/runs" >"$T/api.json" 2>/dev/null && break; sleep 0.1; done
[ "$(jv "$T/api.json" 'len(d["runs"])')" = "$(q "select count(*) from runs")" ] && ok ||
	fail "serve over the fleet after loading: $(cat "$T/api.json" "$T/serve.log")"
kill $SERVE; wait $SERVE 2>/dev/null

# --- a repeated sync sends nothing -------------------------------------------------------------
before=$(q "select count(*), sum(length(data)) from chunks")
expect 0 "" -- as_host host-a "$PROFDB" sync --to "$URL" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current", "bytes")]')" = "[0,5,0]" ] && ok || fail "sync again: $(cat "$T/out")"
[ "$(q "select count(*), sum(length(data)) from chunks")" = "$before" ] && [ "$(q "select count(*) from runs")" = 8 ] &&
	ok || fail "a repeated sync changed the catalogue"

# --- a running run: pushed as it is with --include-running, replaced once ended ----------------------
LP="$FIX/phases/phases-p-hc.prof" LH="$FIX/phases/phases-hd-i0.01.hp"
sed 's/captured/slow-guest/' "$T/g.cfg" >"$T/s.cfg"
SDOM=$("$BACKEND" create --platform sim "$T/s.cfg") || fail "create slow-guest"
( "$STUB" --mode halvm --domid "$SDOM" --prof "$LP" --hp "$LH" --pace 40 -q >"$T/sstub.log" 2>&1
  echo "stub exit $?" >>"$T/sstub.log"; "$XS" destroy --dir "$XENSIM_DIR" "$SDOM" >/dev/null ) &
GUEST=$!
SLOW=
for _ in $(seq 100); do
	SLOW=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'slow-guest' and
	        (select sum(write_bytes) from devices where devices.run_id = runs.run_id) > 4096" 2>/dev/null)
	[ -n "$SLOW" ] && break; sleep 0.1
done
[ -n "$SLOW" ] && ok || fail "the slow guest's run never appeared"
expect 0 "" -- "$PROFDB" sync --to "$URL" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "running")]')" = "[0,1]" ] && ok || fail "a running run was pushed: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" sync --to "$URL" --include-running --json
[ "$(jv "$T/out" 'd["sync"]["pushed"]')" = 1 ] && [ "$(q "select state from runs where host_id = '$HA' and run_id = $SLOW")" = running ] &&
	ok || fail "--include-running: $(cat "$T/out")"
wait $GUEST
grep -q 'stub exit 0' "$T/sstub.log" && ok || fail "the slow guest failed: $(cat "$T/sstub.log")"
for _ in $(seq 100); do
	[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $SLOW")" = complete ] && break; sleep 0.1
done
expect 0 "" -- "$PROFDB" sync --to "$URL" --json
[ "$(jv "$T/out" 'd["sync"]["pushed"]')" = 1 ] && [ "$(q "select state from runs where host_id = '$HA' and run_id = $SLOW")" = complete ] &&
	[ "$(q "select count(*) from runs")" = 9 ] && ok || fail "the ended run did not replace its running copy: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:$SLOW" --prof "$T/s.prof" --hp "$T/s.hp"
same "$T/s.prof" "$LP"
same "$T/s.hp" "$LH"
"$BACKEND" stop >/dev/null

# --- interrupted: the client killed, then the server stopped, mid-run -----------------------------
head -c 48000000 /dev/urandom | base64 -w 100 >"$T/big.prof"
"$MKDISK" --prof "$T/big.prof" "$T/big.disk" >/dev/null && "$PROFDB" import-disk --force --name big "$T/big.disk" >/dev/null 2>&1 ||
	{ echo "import of the big run failed"; exit 99; }
BIG=$(sqlite3 "$PROFSVC_DB" "select max(run_id) from runs")
copying() { [ "$(q "select count(*) from pg_stat_activity where application_name = 'profdb sync' and query like 'COPY%'")" != 0 ]; }
# interrupt HOW: a sync of the big run cut off mid-COPY; 0 when it was
interrupt() {
	"$PROFDB" sync --to "$URL" >"$T/int.out" 2>&1 &
	local pid=$! caught=1
	for _ in $(seq 2000); do
		if copying; then
			if [ "$1" = client ]; then kill -9 $pid; else pg -m immediate stop; fi
			caught=0; break
		fi
		kill -0 $pid 2>/dev/null || break
		sleep 0.005
	done
	wait $pid; echo "exit $?" >>"$T/int.out"
	return $caught
}
if interrupt client; then
	ok
	[ "$(q "select count(*) from runs where host_id = '$HA' and run_id = $BIG")" = 0 ] && ok || fail "a killed sync left part of run $BIG"
	[ "$(q "select count(*) from chunks c where not exists (select 1 from devices d where d.host_id = c.host_id and d.device_id = c.device_id)")" = 0 ] &&
		ok || fail "a killed sync left chunks behind"
else
	fail "the sync of a 64 MB run ended before it could be killed: $(cat "$T/int.out")"
fi
if interrupt server; then
	ok
	grep -q "sync stopped" "$T/int.out" && grep -q "exit 1" "$T/int.out" && ok || fail "a sync cut off by the server: $(cat "$T/int.out")"
	pg_up || { echo "the server did not restart"; exit 99; }
	[ "$(q "select count(*) from runs where host_id = '$HA' and run_id = $BIG")" = 0 ] && ok || fail "a cut-off sync left part of run $BIG"
else
	fail "the sync of a 64 MB run ended before the server could be stopped: $(cat "$T/int.out")"
	pg_up
fi
expect 0 "" -- "$PROFDB" sync --to "$URL" --json
[ "$(jv "$T/out" 'd["sync"]["pushed"]')" = 1 ] && ok || fail "the sync after interruptions: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:$BIG" --prof "$T/big.out"
same "$T/big.out" "$T/big.prof"
[ "$(q "select count(*) from runs")" = 10 ] && ok || fail "runs duplicated: $(q "select count(*) from runs")"

# --- profile-backend --sync: each run pushed as it ends; a server away delays no guest --------
in_catalogue() { [ "$(q "select count(*) from runs where name = convert_to('$1', 'UTF8') and state != 'running'")" = 1 ]; }
wait_catalogue() { for _ in $(seq 300); do in_catalogue "$1" && return 0; sleep 0.05; done; return 1; }
status_json() { "$BACKEND" status --json >"$T/st.json" 2>/dev/null; }
guest() { # guest NAME: a HaLVM guest from create to destroy, its stub's exit in $T/NAME.stub
	local dom
	sed "s/captured/$1/" "$T/g.cfg" >"$T/$1.cfg"
	dom=$("$BACKEND" create --platform sim "$T/$1.cfg") || { fail "create $1"; return 1; }
	"$STUB" --mode halvm --domid "$dom" --prof "$LP" --hp "$LH" -q >"$T/$1.stub" 2>&1; echo "exit $?" >>"$T/$1.stub"
	"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null
}
import offline "$P" "$H" # ended while no backend pushed: found by the catch-up at start
"$BACKEND" start --platform sim --db "$PROFSVC_DB" --sync "$URL" >/dev/null || { echo "backend start --sync failed"; exit 99; }
wait_catalogue offline && ok || fail "the catch-up at start did not push a run that ended before it"
guest pushed-live
grep -q "exit 0" "$T/pushed-live.stub" && ok || fail "pushed-live: $(cat "$T/pushed-live.stub")"
wait_catalogue pushed-live && ok || fail "a run that ended was not pushed by the backend"
status_json && python3 "$S/tests/json_shapes.py" backend "$T/st.json" && ok || fail "status --json with --sync: $(cat "$T/st.json")"
[ "$(jv "$T/st.json" '[d["backend"]["sync"][k] for k in ("connected", "waiting")]')" = "[true,0]" ] && ok ||
	fail "status after a push: $(cat "$T/st.json")"
pg -m immediate stop
guest while-away
grep -q "exit 0" "$T/while-away.stub" && ok || fail "a guest beside an unreachable catalogue: $(cat "$T/while-away.stub")"
AWAY=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'while-away'")
for _ in $(seq 100); do
	[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $AWAY")" = complete ] && break; sleep 0.05
done
expect 0 "" -- "$PROFDB" export "$AWAY" --prof "$T/away.prof" --hp "$T/away.hp"
same "$T/away.prof" "$LP"
for _ in $(seq 100); do
	status_json && [ "$(jv "$T/st.json" 'd["backend"]["sync"]["last_error"] is not None and not d["backend"]["sync"]["connected"]')" = true ] && break
	sleep 0.05
done
[ "$(jv "$T/st.json" 'd["backend"]["sync"]["waiting"] + d["backend"]["sync"]["catch_up"]')" -ge 1 ] &&
	[ "$(jv "$T/st.json" 'd["backend"]["sync"]["last_error"] is not None')" = true ] && ok ||
	fail "status while the catalogue is away: $(cat "$T/st.json")"
"$BACKEND" status | grep -q "^fleet catalogue .*not connected, .*waiting" && ok || fail "status text: $("$BACKEND" status | grep fleet)"
pg_up || { echo "the server did not restart"; exit 99; }
for _ in $(seq 400); do in_catalogue while-away && break; sleep 0.05; done
in_catalogue while-away && ok || fail "a run that ended while the catalogue was away was not pushed once it came back"
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:$AWAY" --prof "$T/away2.prof"
same "$T/away2.prof" "$LP"
"$BACKEND" stop >/dev/null && ok || fail "stop with --sync"
[ "$(q "select count(*) from runs")" = 13 ] && ok || fail "the catalogue holds $(q "select count(*) from runs") runs, not 13"

# --- a session holding this host's sync lock: the sync waits lock_timeout, then says who may hold it
"${PSQL[@]}" -d fleet -c "select pg_advisory_lock(hashtextextended('$HA', 0)), pg_sleep(60)" >/dev/null 2>&1 &
HOLD=$!
for _ in $(seq 100); do [ "$(q "select count(*) from pg_locks where locktype = 'advisory' and granted")" -ge 1 ] && break; sleep 0.1; done
"$MKDISK" --prof "$LP" "$T/locked.disk" >/dev/null && "$PROFDB" import-disk --name locked "$T/locked.disk" >/dev/null 2>&1 ||
	fail "import a run to push"
SECONDS=0
expect 1 "waited 2 s for a lock another session holds" -- env PROFSVC_FLEET_LOCK_TIMEOUT=2 "$PROFDB" sync --to "$URL"
[ "$SECONDS" -lt 20 ] && ok || fail "the sync waited ${SECONDS}s with lock_timeout 2 s"
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
q "select pg_terminate_backend(pid) from pg_stat_activity where query like '%pg_sleep(60)%' and pid != pg_backend_pid()" >/dev/null
expect 0 "" -- "$PROFDB" sync --to "$URL"
in_catalogue locked && ok || fail "the run was not pushed once the lock was free"

# --- catalogues this profdb must not read ---------------------------------------------------------
"$PROFDB" sync --to "postgresql://profsvc@/newer?host=$PGD/sock" -q >/dev/null 2>&1 || fail "sync into a new database"
"${PSQL[@]}" -d newer -c "update profsvc_meta set value = '99' where key = 'schema_version'" >/dev/null
expect 1 "newer than this profdb" -- "$PROFDB" --db "postgresql://profsvc@/newer?host=$PGD/sock" query runs
expect 1 "newer than this profdb" -- "$PROFDB" sync --to "postgresql://profsvc@/newer?host=$PGD/sock"
# a version no profsvc writes (another host's hand): refused by readers and
# writers alike, never used (it once wrapped to a negative int and indexed
# the migrations: every host's sync crashed); and one too long to be read whole
for v in 999999999999999 -5 2147483648 99999999999999999999999999999999999999999999999999; do
	"${PSQL[@]}" -d newer -c "update profsvc_meta set value = '$v' where key = 'schema_version'" >/dev/null
	want="which no profsvc writes"
	[ "$v" = -5 ] && want="not profsvc's"
	expect 1 "$want" -- "$PROFDB" --db "postgresql://profsvc@/newer?host=$PGD/sock" query runs
	expect 1 "$want" -- "$PROFDB" sync --to "postgresql://profsvc@/newer?host=$PGD/sock"
done
# a device row no store could hold (2^63-1 sectors written, once an
# overflow of export-disk's size): reading the run refuses it, naming the
# row; the listing still works; the row put back, the run reads again
wes=$(q "select written_end_sector from devices where host_id = '$HA' and run_id = $AWAY and vdev = 'xvdp1'")
q "update devices set written_end_sector = 9223372036854775807 where host_id = '$HA' and run_id = $AWAY and vdev = 'xvdp1'" >/dev/null
expect 1 "written_end_sector 9223372036854775807 is past its capacity" -- "$PROFDB" --db "$URL" export-disk "$HA:$AWAY" xvdp1 "$T/bad.disk"
expect 1 "this run cannot be read from the catalogue" -- "$PROFDB" --db "$URL" export "$HA:$AWAY" --prof "$T/bad.prof"
expect 0 "" -- "$PROFDB" --db "$URL" query runs
[ ! -e "$T/bad.disk" ] && ok || fail "export-disk of a damaged row left $(stat -c %s "$T/bad.disk") bytes"
q "update devices set written_end_sector = $wes where host_id = '$HA' and run_id = $AWAY and vdev = 'xvdp1'" >/dev/null
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:$AWAY" --prof "$T/away3.prof"
same "$T/away3.prof" "$LP"
# checksums: every chunk and trace packet the sync sent carries one
[ "$(q "select count(*) from chunks where sum is null")" = 0 ] && [ "$(q "select count(*) from chunks")" -gt 0 ] &&
	[ "$(q "select count(*) from trace_packets where sum is null")" = 0 ] && ok ||
	fail "chunks without their checksum in the catalogue: $(q "select count(*) from chunks where sum is null")"
# one byte flipped in the catalogue's copy: reading the run refuses it, naming run, device and bytes
wk="host_id = '$HA' and chunk = 0 and device_id = (select device_id from devices where host_id = '$HA' and run_id = $AWAY and vdev = 'xvdp1')"
q "update chunks set data = set_byte(data, 1000, get_byte(data, 1000) # 32) where $wk" >/dev/null
expect 1 "the catalogue's copy of run $AWAY of host ${HA:0:8}, device id [0-9]*: bytes 0-[0-9]* (chunk 0) fail their checksum" -- \
	"$PROFDB" --db "$URL" export "$HA:$AWAY" --prof "$T/rot.prof"
[ ! -e "$T/rot.prof" ] && ok || fail "an export of damaged catalogue data left a file"
q "update chunks set data = set_byte(data, 1000, get_byte(data, 1000) # 32) where $wk" >/dev/null
expect 0 "" -- "$PROFDB" --db "$URL" export "$HA:$AWAY" --prof "$T/away4.prof"
same "$T/away4.prof" "$LP"
# a host's store with a byte flipped (issue 44): its sync pushes the run
# without the damaged device, names it, sends none of its bytes, marks it
# there, and goes on to the runs after it; every later sync says so again
# without sending it, until the damage is repaired (the run then pushed
# whole) or the run deleted.  (It once stopped every sync at that run for
# ever, each saying "the next sync goes on".)
RDB="$T/rotten.db"
"$MKDISK" --prof "$LP" "$T/rotten.disk" >/dev/null && "$MKDISK" --hp "$H" "$T/rotten-hp.disk" >/dev/null &&
	"$PROFDB" --db "$RDB" import-disk --name rotten "$T/rotten.disk" "$T/rotten-hp.disk" >/dev/null 2>&1 &&
	"$PROFDB" --db "$RDB" import-disk --name after-rotten "$T/rotten.disk" >/dev/null 2>&1 ||
	fail "import the runs to damage"
# flip_rotten [RUN]: byte 700 of the run's (1) xvdp1 chunk 0 flipped (again: put back)
flip_rotten() {
	python3 - "$RDB" "${1:-1}" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
slot = db.execute("SELECT slot FROM chunks WHERE key = (SELECT device_id FROM devices WHERE run_id = ? AND vdev = 'xvdp1') << 32", (int(sys.argv[2]),)).fetchone()[0]
with open(sys.argv[1] + "-data", "r+b") as f:
    f.seek(slot * 65536 + 700); b = f.read(1); f.seek(slot * 65536 + 700); f.write(bytes([b[0] ^ 1]))
PY
}
flip_rotten
RH=$(sqlite3 "$RDB" "select value from meta where key = 'store_id'")
expect 1 "run 1, device xvdp1 (id 1): bytes 0-65535 (chunk 0) fail their checksum" -- \
	"$PROFDB" --db "$RDB" sync --to "$URL"
grep -q "run 1 pushed without a device" "$T/err" && grep -q "^1 run there without a device whose bytes fail their checksum here" "$T/out" &&
	ok || fail "a sync meeting a damaged chunk: $(cat "$T/out" "$T/err")"
rq() { q "select $1 from runs where host_id = '$RH' and run_id = $2"; }
[ "$(rq "convert_from(name, 'UTF8')" 2)" = after-rotten ] && ok || fail "the run after the damaged one was not pushed"
[ "$(rq "damaged is not null" 1)" = t ] && [ "$(rq "damaged is null" 2)" = t ] &&
	[ "$(q "select count(*) from devices where host_id = '$RH' and run_id = 1 and damaged is not null")" = 1 ] &&
	q "select convert_from(damaged, 'UTF8') from devices where host_id = '$RH' and run_id = 1 and vdev = 'xvdp1'::bytea" |
		grep -q "bytes 0-65535 (chunk 0) fail their checksum; its bytes are not in the catalogue" && ok ||
	fail "the catalogue's marks: $(q "select run_id, vdev, convert_from(damaged, 'UTF8') from devices where host_id = '$RH'")"
[ "$(q "select count(*) from chunks c join devices d using (host_id, device_id) where d.host_id = '$RH' and d.run_id = 1 and d.vdev = 'xvdp1'::bytea")" = 0 ] &&
	ok || fail "bytes of the damaged device reached the catalogue"
# there: shown partial; the sound device exported byte for byte, the damaged one not at all
expect 0 "" -- "$PROFDB" --db "$URL" show "$RH:1"
grep -q "partial in the catalogue: device xvdp1 left out: run 1, device xvdp1 (id 1): bytes 0-65535 (chunk 0) fail their checksum" "$T/out" &&
	ok || fail "show of a partial run: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" export "$RH:1" --hp "$T/rotten-cat.hp"
same "$T/rotten-cat.hp" "$H"
expect 1 "" -- "$PROFDB" --db "$URL" export "$RH:1" --prof "$T/rotten-cat.prof"
[ ! -e "$T/rotten-cat.prof" ] && ok || fail "the damaged device exported from the catalogue"
# the next sync: the same damage said again, nothing sent
expect 1 "run 1 pushed without a device" -- "$PROFDB" --db "$RDB" sync --to "$URL" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current", "damaged", "bytes", "complete")]')" = "[0,1,1,0,true]" ] &&
	ok || fail "the sync after: $(cat "$T/out")"
python3 "$S/tests/json_shapes.py" sync "$T/out" && ok || fail "sync --json not as documented: $(cat "$T/out")"
# repaired: pushed whole, marks gone, exported byte for byte
flip_rotten
expect 0 "" -- "$PROFDB" --db "$RDB" sync --to "$URL" --json
[ "$(jv "$T/out" '[d["sync"][k] for k in ("pushed", "current", "damaged")]')" = "[1,1,0]" ] &&
	[ "$(rq "damaged is null" 1)" = t ] && [ "$(q "select count(*) from devices where host_id = '$RH' and damaged is not null")" = 0 ] &&
	ok || fail "the sync once repaired: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" --db "$URL" export "$RH:1" --prof "$T/rotten-cat.prof"
same "$T/rotten-cat.prof" "$LP"
# a run damaged before its first sync, then deleted here: the sync goes
# on, exit 0 (the catalogue keeps what it was given)
"$PROFDB" --db "$RDB" import-disk --name rotten-three "$T/rotten.disk" >/dev/null 2>&1 || fail "import a third run"
flip_rotten 3
expect 1 "run 3 pushed without a device" -- "$PROFDB" --db "$RDB" sync --to "$URL"
"$PROFDB" --db "$RDB" import-disk --name last-rotten "$T/rotten.disk" >/dev/null 2>&1 || fail "import a fourth run"
expect 0 "" -- "$PROFDB" --db "$RDB" delete 3
expect 0 "" -- "$PROFDB" --db "$RDB" sync --to "$URL"
[ "$(rq "convert_from(name, 'UTF8')" 4)" = last-rotten ] && ok || fail "the run after the damaged one (deleted) was not pushed"
# a catalogue at schema 1 (before runs.listing): refused by readers with
# what to do; a sync upgrades it, and the rows it held list as before
OLD="postgresql://profsvc@/old?host=$PGD/sock"
"$PROFDB" sync --to "$OLD" -q >/dev/null 2>&1 || fail "sync into the database 'old'"
expect 0 "" -- "$PROFDB" --db "$OLD" query runs
cp "$T/out" "$T/old-before"
# (schema 1 knew no eventlog: the captured guest's is not in it)
"${PSQL[@]}" -d old -c "DELETE FROM devices WHERE role = 'eventlog'" -c "ALTER TABLE runs DROP COLUMN listing" \
	-c "ALTER TABLE chunks DROP COLUMN sum" -c "ALTER TABLE trace_packets DROP COLUMN sum" \
	-c "ALTER TABLE runs DROP COLUMN damaged" -c "ALTER TABLE devices DROP COLUMN damaged" \
	-c "CREATE INDEX runs_listing ON runs(started_us, host_no, run_id) INCLUDE (domid, name, ended_us, state, prof_bytes, hp_bytes)" \
	-c "UPDATE profsvc_meta SET value = '1' WHERE key = 'schema_version'" >/dev/null || fail "making a schema-1 catalogue"
expect 1 "catalogue schema 1; a sync from this host" -- "$PROFDB" --db "$OLD" query runs
expect 0 "" -- "$PROFDB" sync --to "$OLD"
[ "$("${PSQL[@]}" -d old -tA -c "SELECT value FROM profsvc_meta WHERE key = 'schema_version'")" = 6 ] && ok ||
	fail "the sync did not upgrade the catalogue to schema 6"
# (schema 5's checksums: the upgrade's sync sent every run again, with them)
[ "$("${PSQL[@]}" -d old -tA -c "SELECT count(*) FROM chunks WHERE sum IS NULL")" = 0 ] && ok ||
	fail "the upgraded catalogue's chunks lack checksums"
expect 0 "" -- "$PROFDB" --db "$OLD" query runs
[ "$(grep -c . "$T/out")" -ge 3 ] && cmp -s "$T/out" "$T/old-before" && ok ||
	fail "the upgraded catalogue lists otherwise: $(diff "$T/old-before" "$T/out" | head -5)"
# a host that never syncs again: its chunks of before schema 5 get their
# checksums from another host's sync, and rot in them is then seen
"${PSQL[@]}" -d old -c "UPDATE chunks SET sum = NULL" >/dev/null
nulls=$("${PSQL[@]}" -d old -tA -c "SELECT count(*) FROM chunks WHERE sum IS NULL")
ODB="$T/other-host.db"
"$PROFDB" --db "$ODB" import-disk --name other "$T/rotten.disk" >/dev/null 2>&1 || fail "import into another host's store"
"$PROFDB" --db "$ODB" sync --to "$OLD" --json >"$T/out" 2>"$T/err"
[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["sync"]["summed"])' <"$T/out" 2>/dev/null)" = "$nulls" ] &&
	[ "$nulls" -gt 0 ] && ok ||
	fail "another host's sync gave $nulls unsummed chunks: $(cat "$T/out" "$T/err")"
[ "$("${PSQL[@]}" -d old -tA -c "SELECT count(*) FROM chunks WHERE sum IS NULL")" = 0 ] && ok ||
	fail "chunks still without checksums after the backfill"
# a listing row that is not one (a row changed by hand): refused, not misread
"${PSQL[@]}" -d old -c "ALTER TABLE runs DROP CONSTRAINT runs_state_check" -c "UPDATE runs SET state = 'odd' WHERE run_id = 1" >/dev/null
expect 0 "" -- "$PROFDB" --db "$OLD" query runs
grep -q " crashed " "$T/out" && ok || fail "a run of an unknown state is not listed as crashed: $(cat "$T/out")"
# unreachable: a clear line, and never the password
expect 1 "cannot connect" -- "$PROFDB" --db "postgresql://profsvc:s3cret-pw@/fleet?host=$T/nowhere" query runs
grep -q s3cret "$T/err" && fail "the password was printed: $(cat "$T/err")" || ok
expect 1 "cannot connect" -- "$PROFDB" sync --to "postgresql://profsvc:s3cret-pw@/fleet?host=$T/nowhere"
grep -q s3cret "$T/err" "$T/out" && fail "the password was printed" || ok

# --- credentials from libpq's own sources: a password in PGPASSFILE, never in the URL -------------
q "ALTER USER profsvc PASSWORD 'pw-in-the-file-42'" >/dev/null
sed 's/trust$/scram-sha-256/' "$PGD/data/pg_hba.conf" >"$T/hba" && cat "$T/hba" >"$PGD/data/pg_hba.conf" && pg reload ||
	fail "switching the server to passwords"
expect 1 "password" -- env -u PGPASSFILE -u PGPASSWORD "$PROFDB" --db "$URL" query runs
printf '%s:*:*:profsvc:pw-in-the-file-42\n' "$PGD/sock" >"$T/pgpass" && chmod 600 "$T/pgpass"
export PGPASSFILE="$T/pgpass"
expect 0 "" -- "$PROFDB" --db "$URL" query runs
[ "$(grep -c . "$T/out")" -ge 11 ] && ok || fail "query runs with the password from PGPASSFILE: $(head -3 "$T/out")"
import late "$P" "$H"
expect 0 "" -- "$PROFDB" sync --to "$URL"
grep -q "^1 run pushed" "$T/out" && ok || fail "sync with the password from PGPASSFILE: $(cat "$T/out")"
expect 1 "password authentication failed" -- "$PROFDB" --db "postgresql://profsvc:wrong-pw-77@/fleet?host=$PGD/sock" query runs
grep -q "wrong-pw-77" "$T/err" && fail "a password was printed: $(cat "$T/err")" || ok

finish test_fleet
