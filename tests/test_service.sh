#!/usr/bin/env bash
# test_service.sh - profile-backend as a service: a start that fails says
# why on the terminal and leaves the --db it was given untouched; the
# service manager's notifications (READY=1 once it serves, STATUS=,
# STOPPING=1); status and stop's LSB exit codes; SUB --help; the
# priorities and the journal fields of its log lines (--log-format=fields:
# what it would give journald, checked without one); a run whose backend
# and host were killed shown as such by readers, then ended crashed with
# the reason at the next start.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
# jv FILE EXPR: EXPR (Python, over the JSON document d) evaluated on FILE
jv() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
LISTENER=""
at_exit '[ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null'
chmod 700 "$PROFSVC_RUN_DIR"
start_xensim

# --- a start that fails says why, exits 1, and touches nothing ---------------------
# refused DB WORDS: the daemonised start with --db DB fails, its stderr
# names the reason (WORDS), and DB (when it exists) is byte for byte as it was.
refused() {
	local db=$1 words=$2 before="" after=""
	[ -f "$db" ] && before=$(sha256sum <"$db")
	expect 1 "$words" -- "$BACKEND" start --platform sim --db "$db"
	[ -f "$db" ] && after=$(sha256sum <"$db")
	[ "$before" = "$after" ] && ok || fail "start with --db $db changed it"
	grep -q "see the system log" "$T/err" && fail "start with --db $db gave no reason: $(cat "$T/err")" || ok
	"$BACKEND" status >/dev/null 2>&1
	[ $? = 3 ] && ok || fail "status after the failed start with --db $db is not 3 (not running)"
}
refused "$T/no/such/dir/p.db" "failed to start: cannot create directory $T/no/such/dir for the database: No such file or directory"
mkdir "$T/dir.db"
refused "$T/dir.db" "failed to start: $T/dir.db is not a regular file"
echo "not a database" >"$T/text.db"
refused "$T/text.db" "failed to start: $T/text.db is not a profsvc database (not even an SQLite file)"
sqlite3 "$T/foreign.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
refused "$T/foreign.db" "failed to start: $T/foreign.db is an SQLite database but not a profsvc store"
PROFSVC_DB="$T/newer.db" import newer "$FIX/leak/leak-p-hc.prof" "$FIX/leak/leak-p-hc.hp"
sqlite3 "$T/newer.db" "PRAGMA user_version = 99"
refused "$T/newer.db" "failed to start: database $T/newer.db has schema version 99, newer than this profsvc"

# --- status and stop when nothing runs (LSB) -------------------------------------
expect 3 "not running" -- "$BACKEND" status
expect 0 "not running" -- "$BACKEND" stop
expect 0 "not running" -- "$BACKEND" stop

# --- the command line: SUB --help is that subcommand's usage and what it does, on
# stdout (exit 0); --help alone, or an unknown command, the whole usage --------------
for sub in start stop status create attach detach; do
	expect 0 "" -- "$BACKEND" "$sub" --help
	head -1 "$T/out" | grep -q "^usage: profile-backend $sub" && ok || fail "$sub --help: $(head -2 "$T/out")"
	[ "$(wc -l <"$T/out")" -lt "$("$BACKEND" --help | wc -l)" ] && ok || fail "$sub --help is the whole usage"
	# the whole usage lists it with the line of description its own --help gives
	desc=$(awk 'NR > 1 && !/^ /{print; exit}' "$T/out")
	[ "$(grep -c '^usage' "$T/out")" = 1 ] && "$BACKEND" --help | grep -qxF "  $(printf '%-8s' "$sub") $desc" && ok ||
		fail "--help does not list $sub with its description '$desc'"
done
expect 0 "" -- "$BACKEND" --run-dir "$T/run" status -h
grep -q "^usage: profile-backend status \[--json\]" "$T/out" && ok || fail "status -h: $(head -2 "$T/out")"
expect 2 "PROFSVC_SYNC is not a postgresql:// URL" -- env PROFSVC_SYNC=mysql://x "$BACKEND" start --platform sim --run-dir "$T/run"
expect 0 "not running" -- env PROFSVC_SYNC=mysql://x "$BACKEND" --run-dir "$T/run" stop
expect 2 "usage: profile-backend start" -- "$BACKEND" frobnicate
grep -qF "profile-backend detach [--force] DOMAIN VDEV" "$T/err" && ok || fail "an unknown command's usage is cut short"

# --- sd_notify: READY=1 once it serves, STATUS=, STOPPING=1 ------------------------
python3 "$S/tests/notify_listen.py" "$T/notify.sock" "$T/notify.txt" &
LISTENER=$!
for _ in $(seq 600); do [ -S "$T/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET="$T/notify.sock" "$BACKEND" start --platform sim --foreground --log-format=fields \
	>"$T/backend.out" 2>"$T/backend.log" &
BPID=$!
ready=no
for _ in $(seq 600); do
	if grep -q 'READY=1' "$T/notify.txt" 2>/dev/null; then
		# READY=1 came: it serves already (its control socket answers)
		"$BACKEND" status >/dev/null 2>&1 && ready=yes || ready=early
		break
	fi
	sleep 0.05
done
[ $ready = yes ] && ok || fail "READY=1: $ready; notifications: $(cat "$T/notify.txt" 2>/dev/null)"
grep -q 'READY=1.*MAINPID' "$T/notify.txt" && fail "--foreground sent MAINPID (it is the main pid)" || ok
expect 0 "" -- "$BACKEND" status
# options before the command as after it (one CLI style): the running
# backend's run directory, then another with no backend in it
expect 0 "" -- "$BACKEND" --run-dir "$PROFSVC_RUN_DIR" status
expect 3 "not running" -- "$BACKEND" --run-dir "$T" --platform sim status
grep -q 'STATUS=serving 0 devices' "$T/notify.txt" && ok || fail "no STATUS=serving 0 devices: $(cat "$T/notify.txt")"
guest_cfg svc-guest
DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || { fail "create"; finish test_service; exit 1; }
"$STUB" --mode halvm --domid "$DOM" --prof "$FIX/leak/leak-p-hc.prof" --hp "$FIX/leak/leak-p-hc.hp" -q \
	>"$T/stub.log" 2>&1 || fail "the guest failed: $(cat "$T/stub.log")"
for _ in $(seq 600); do grep -q 'STATUS=serving 2 devices' "$T/notify.txt" && break; sleep 0.05; done
grep -q 'STATUS=serving 2 devices' "$T/notify.txt" && ok || fail "no STATUS=serving 2 devices: $(cat "$T/notify.txt")"
# status --json: the backend object of docs/json.md, both disks in it
expect 0 "" -- "$BACKEND" status --json
python3 "$S/tests/json_shapes.py" backend "$T/out" && ok || fail "status --json not as docs/json.md says: $(head -c 600 "$T/out")"
[ "$(jv "$T/out" "sorted((x['domid'], x['vdev']) for x in d['backend']['devices'])")" = \
  "[($DOM, 'xvdp1'), ($DOM, 'xvdp2')]" ] && ok || fail "status --json devices: $(cat "$T/out")"
[ "$(jv "$T/out" "[r['name'] for r in d['backend']['runs']]")" = "['svc-guest']" ] && ok || fail "status --json runs: $(cat "$T/out")"
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
for _ in $(seq 600); do grep -q 'ended complete' "$T/backend.log" && break; sleep 0.05; done
grep -q 'STOPPING=1' "$T/notify.txt" && fail "STOPPING=1 before the stop" || ok
expect 0 "" -- "$BACKEND" stop
wait $BPID
[ $? = 0 ] && ok || fail "the backend's exit status after SIGTERM"
grep -q 'STOPPING=1' "$T/notify.txt" && ok || fail "no STOPPING=1 on SIGTERM: $(cat "$T/notify.txt")"

# --- its log: priorities and journal fields --------------------------------------
# field LINE-WORDS FIELDS...: the event whose MESSAGE contains LINE-WORDS
# carries every one of FIELDS (KEY=value lines)
field() {
	local words=$1; shift
	local ev
	ev=$(awk -v RS= -v w="$words" 'index($0, w) { print; exit }' "$T/backend.log")
	[ -n "$ev" ] || { fail "no log event '$words': $(head -c 2000 "$T/backend.log")"; return; }
	for f in "$@"; do
		grep -qxF -- "$f" <<<"$ev" && ok || fail "event '$words' lacks $f: $ev"
	done
	grep -qx 'SYSLOG_IDENTIFIER=profile-backend' <<<"$ev" && ok || fail "event '$words' lacks SYSLOG_IDENTIFIER"
}
RUN=$("$PROFDB" query runs --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2)
field "started: platform sim" PRIORITY=5
field "run $RUN: started (svc-guest" PRIORITY=5 "DOMID=$DOM" "RUN=$RUN"
field "dom$DOM xvdp1 run $RUN: connected" PRIORITY=5 "DOMID=$DOM" VDEV=xvdp1 "RUN=$RUN"
field "dom$DOM xvdp2 run $RUN: connected" PRIORITY=5 "DOMID=$DOM" VDEV=xvdp2 "RUN=$RUN"
field "run $RUN: ended complete" PRIORITY=5 "DOMID=$DOM" "RUN=$RUN"
field "signal 15: stopping" PRIORITY=5
# an error: the store refused (err, 3), with --foreground on stderr too
expect 1 "has schema version 99" -- "$BACKEND" start --platform sim --foreground --log-format=fields --db "$T/newer.db"
grep -qx 'PRIORITY=3' "$T/err" && ok || fail "the refused store is not logged at err: $(cat "$T/err")"
# a guest refused (warning, 4): a device whose backend directory lies
"$BACKEND" start --platform sim --foreground --log-format=fields >>"$T/warn.log" 2>&1 &
BPID=$!
for _ in $(seq 600); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.05; done
DOM=$("$XS" create --dir "$XENSIM_DIR" --name hostile)
"$BACKEND" attach --platform sim "$DOM" vdev=xvdc >/dev/null || fail "attach xvdc to the hostile guest"
"$STUB" --mode hostile --domid "$DOM" --seed 1 -q >"$T/hostile.log" 2>&1
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null 2>&1
"$BACKEND" stop >/dev/null
wait $BPID
awk -v RS= '/PRIORITY=4/ && /DOMID=/' "$T/warn.log" | grep -q . && ok ||
	fail "no warning naming a domain from a hostile guest: $(head -c 3000 "$T/warn.log")"
grep -qx 'PRIORITY=7' "$T/warn.log" && fail "debug lines without -v: $(grep -m1 -B3 -A3 'PRIORITY=7' "$T/warn.log")" || ok
# info (6) and, with -v, debug (7): a raw mirror opened, xenbus state changes
mkdir -p "$T/mirror"
"$BACKEND" start --platform sim --foreground -v --log-format=fields --mirror-raw "$T/mirror" >"$T/info.log" 2>&1 &
BPID=$!
for _ in $(seq 600); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.05; done
sed 's/svc-guest/svc-info/' "$T/g.cfg" >"$T/i.cfg"
DOM=$("$BACKEND" create --platform sim "$T/i.cfg") || fail "create svc-info"
"$STUB" --mode halvm --domid "$DOM" --prof "$FIX/leak/leak-p-hc.prof" --hp "$FIX/leak/leak-p-hc.hp" -q >"$T/stub.log" 2>&1 ||
	fail "the guest with a mirror failed: $(cat "$T/stub.log")"
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
"$BACKEND" stop >/dev/null
wait $BPID
awk -v RS= '/PRIORITY=6/ && /raw mirror/ && /VDEV=xvdp1/' "$T/info.log" | grep -q . && ok ||
	fail "no info line for the raw mirror: $(head -c 3000 "$T/info.log")"
awk -v RS= '/PRIORITY=7/ && /frontend .* -> Connected/' "$T/info.log" | grep -q . && ok ||
	fail "no debug line for a frontend state change under -v: $(head -c 3000 "$T/info.log")"

# --- runs whose backend is gone ---------------------------------------------------
"$BACKEND" start --platform sim >/dev/null || fail "start for the stale run"
DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || { fail "create"; finish test_service; exit 1; }
"$STUB" --mode halvm --domid "$DOM" --prof "$FIX/phases/phases-p-hc.prof" --hp "$FIX/phases/phases-hd-i0.01.hp" \
	--pace 100 -q >"$T/slow.log" 2>&1 &
GUEST=$!
STALE=""
for _ in $(seq 600); do
	"$PROFDB" query runs --state running --json >"$T/runs.json" 2>/dev/null
	STALE=$(jv "$T/runs.json" "d['runs'][-1]['run_id'] if d['runs'] else ''")
	[ -n "$STALE" ] && break
	sleep 0.05
done
[ -n "$STALE" ] || { fail "no running run"; finish test_service; exit 1; }
"$PROFDB" query runs --state running --json >"$T/runs.json"
[ "$(jv "$T/runs.json" "[(type(r['duration_us']).__name__, r['state'], r['backend_alive']) for r in d['runs'] if r['run_id'] == $STALE]")" = "[('int', 'running', True)]" ] && ok ||
	fail "a live backend's run is not shown alive: $("$PROFDB" query runs --state running --json)"
kill -9 "$(cat "$PROFSVC_RUN_DIR/profile-backend.pid")" "$(cat "$XENSIM_DIR/xensim.pid")"
kill "$GUEST" 2>/dev/null
wait "$GUEST" 2>/dev/null
# the kernel drops the backend's lock once it is dead, an instant after the signal
for _ in $(seq 600); do "$PROFDB" query runs | grep -q 'backend down' && break; sleep 0.05; done
expect 0 "" -- "$PROFDB" query runs
grep -E "^ *$STALE .* \? +running \(backend down\)" "$T/out" >/dev/null && ok ||
	fail "query runs does not show run $STALE as backend down (duration ?): $(cat "$T/out")"
# the columns stay aligned: PROF ends where its header ends on every line
python3 - "$T/out" <<'PY' && ok || fail "query runs' columns move with a backend-down row: $(cat "$T/out")"
import sys
lines = open(sys.argv[1]).read().splitlines()
end = lines[0].index('PROF') + len('PROF')
for l in lines[1:]:
    cell = l[:end].split()[-1]
    assert l[end - 1] != ' ' and (cell == '-' or cell.isdigit()), (end, l)
PY
expect 0 "" -- "$PROFDB" query runs --state running --json
[ "$(jv "$T/out" "[(r['duration_us'], r['state'], r['backend_alive']) for r in d['runs'] if r['run_id'] == $STALE]")" = "[(None, 'running', False)]" ] && ok ||
	fail "query runs --json: run $STALE not backend_alive false with no duration: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" show "$STALE"
grep -q 'state *running (backend down' "$T/out" && ok || fail "show $STALE: $(cat "$T/out")"
grep -q 'duration *unknown' "$T/out" && ok || fail "show $STALE: the duration still counts: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" show "$STALE" --json
[ "$(jv "$T/out" "d['run']['backend_alive']")" = False ] && ok || fail "show --json $STALE: $(cat "$T/out")"
# A new host without the domain: the next start ends the run, with the reason.
export XENSIM_DIR="$T/xen2"
"$XS" start --dir "$XENSIM_DIR" >/dev/null || { fail "xensim start (2)"; finish test_service; exit 1; }
"$BACKEND" start --platform sim >/dev/null || fail "restart after the kill"
expect 0 "" -- "$PROFDB" show "$STALE"
grep -q 'state *crashed (domain gone while no backend ran)' "$T/out" && ok ||
	fail "show $STALE after the restart: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" show "$STALE" --json
[ "$(jv "$T/out" "(d['run']['state'], d['run']['backend_alive'], d['run']['end_reason'])")" = "('crashed', None, 'domain gone while no backend ran')" ] && ok ||
	fail "show --json $STALE after the restart: $(cat "$T/out")"
"$BACKEND" stop >/dev/null || fail "stop"
finish test_service
