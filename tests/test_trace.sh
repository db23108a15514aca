#!/usr/bin/env bash
# test_trace.sh - MirageOS traces on xensim: profile-backend keeping the
# mirage-profile buffer of frontend-stub --mode mirage guests (what
# mirage-profile does, every event kind), checked against what each guest
# says it wrote (--event-log) and against babeltrace2 reading the export:
#  - every event kind round-trips, fields and timestamps, into the JSON
#    export and into babeltrace2's output; Chrome trace events and show;
#  - 25x the ring's size at a guest's normal rate: no packet lost;
#  - a guest that outruns the snapshots: the loss reported, with the right
#    packet numbers;
#  - a guest crashing inside an event; the backend SIGKILLed and restarted
#    mid-trace (one run, nothing lost);
#  - 32 tracing guests beside HaLVM guests;
#  - hostile guests (ref lists: garbage, too many pages, a thousand refs
#    for one page, refs not granted, rewritten; impossible headers; a
#    buffer scribbled on; a node flood), each beside an honest HaLVM guest
#    that must be served throughout.
# Needs babeltrace2 (skipped, 77, without it, except under CI=true).
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
alone_among_timed
with_xensim
keep_at_exit '"$T"/*.log'
CHECK="python3 $S/tests/trace_check.py"
BACKEND_ARGS=(--platform sim --db "$PROFSVC_DB" --max-trace-pages 64)
need babeltrace2 || exit 77

backend_up() {
	"$BACKEND" start "${BACKEND_ARGS[@]}" --foreground >>"$T/backend.log" 2>&1 &
	disown # its SIGKILL below is the test's, not news
	for _ in $(seq 100); do "$BACKEND" status >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "backend did not start: $(tail -3 "$T/backend.log")"
	exit 99
}
import plain "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp" # run 1: no trace
start_xensim
backend_up

run_of() { "$PROFDB" query runs --name "$1" --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2; }
state_of() { "$PROFDB" show "$1" --json | grep -o '"state":"[a-z]*"' | head -1 | cut -d'"' -f4; }
wait_ended() {
	local r
	for _ in $(seq 600); do
		r=$(run_of "$1")
		[ -n "$r" ] && [ "$(state_of "$r")" != running ] && { echo "$r"; return 0; }
		sleep 0.05
	done
	return 1
}
# mirage NAME STUB-ARGS...: a MirageOS guest from boot to destruction
# (LINGER=S: its domain destroyed S seconds after its program ended, as
# its grants last; UNTIL_RUN=1: not before the backend made its run, for a
# guest whose trace the backend is to refuse: it must have looked)
mirage() {
	local name=$1; shift
	local dom
	dom=$("$XS" create --dir "$XENSIM_DIR" --name "$name") || { fail "xensim create $name"; return 1; }
	{ "$STUB" --platform sim --mode mirage --domid "$dom" --event-log "$T/$name.jsonl" -q "$@" >"$T/$name.stub" 2>&1
	  echo "exit $?" >>"$T/$name.stub"; } 2>/dev/null # a crashing guest is killed by its domain's end
	case " $* " in
	*" --crash-at "*) ;; # killed by its domain's end
	*) grep -qx "exit 0" "$T/$name.stub" && ok || fail "$name: the guest failed: $(tail -5 "$T/$name.stub")" ;;
	esac
	[ -n "${LINGER:-}" ] && sleep "$LINGER"
	if [ -n "${UNTIL_RUN:-}" ]; then
		for _ in $(seq $((200 * SLOW))); do [ -n "$(run_of "$name")" ] && break; sleep 0.05; done
	fi
	"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null 2>&1
	# the backend takes its last look and unmaps the buffer: the domain
	# goes, it does not stay a zombie held by the backend's mapping
	for _ in $(seq 100); do "$XS" list --dir "$XENSIM_DIR" | grep -q "^$dom " || break; sleep 0.05; done
	"$XS" list --dir "$XENSIM_DIR" | grep -q "^$dom " &&
		fail "$name: domain $dom still there 5 s after its destruction: $("$XS" list --dir "$XENSIM_DIR" | grep "^$dom ")" || ok
	return 0
}
# exported NAME MODE: the run's trace exported three ways; the JSON checked
# against the guest's log (MODE as trace_check.py), the CTF read by
# babeltrace2 and checked against the JSON
exported() {
	local name=$1 mode=$2 r
	r=$(wait_ended "$name") || { fail "$name: no ended run"; return 1; }
	rm -rf "$T/$name.ctf"
	"$PROFDB" export "$r" --ctf "$T/$name.ctf" --trace-json "$T/$name.json" --chrome-trace "$T/$name.chrome.json" 2>"$T/err" ||
		{ fail "$name: export: $(cat "$T/err")"; return 1; }
	out=$($CHECK ref "$T/$name.json" "$T/$name.jsonl" "$mode") && ok || fail "$name: $out"
	[ -n "${VERBOSE:-}" ] && echo "$name: $out"
	babeltrace2 --clock-cycles --no-delta "$T/$name.ctf" >"$T/$name.bt" 2>"$T/$name.bt.err" && ok ||
		fail "$name: babeltrace2 refused the export: $(grep -m3 'ERROR\|CAUSED' "$T/$name.bt.err")"
	out=$($CHECK bt "$T/$name.json" "$T/$name.bt") && ok || fail "$name: $out"
	json_ok "$T/$name.chrome.json" && ok || fail "$name: the Chrome trace is not JSON"
	EXPORTED_RUN=$r
}

# --- every event kind, three ways ----------------------------------------------------
mirage kinds --pages 64 --events 2400 --rate 20000
exported kinds exact
R=$EXPORTED_RUN
"$PROFDB" show "$R" --json >"$T/show.json"
for k in creates read fulfills fails becomes label increase switch gc signal try_read counter; do
	n=$(sqlite3 :memory: "select json_extract(readfile('$T/show.json'), '\$.trace.per_event.$k')")
	[ "${n:-0}" -gt 0 ] && ok || fail "show: no '$k' event counted ($n)"
done
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/show.json'), '\$.trace.events')")" = 2400 ] && ok ||
	fail "show: events $(grep -o '"events":[0-9]*' "$T/show.json")"
"$PROFDB" query runs --name kinds --json >"$T/kinds-runs.json"
[ "$(sqlite3 :memory: "select json_extract(readfile('$T/kinds-runs.json'), '\$.runs[0].trace_bytes') > 0")" = 1 ] && ok ||
	fail "query runs: no trace_bytes for a trace run: $("$PROFDB" query runs --name kinds --json)"
"$PROFDB" show "$R" >"$T/show.txt"
grep -q '^  GC pauses       200, ' "$T/show.txt" && grep -q '^  counter         bytes_rx = ' "$T/show.txt" &&
	grep -q '^  packets         .* kept (.*), 0 lost$' "$T/show.txt" && ok || fail "show's trace section: $(grep -A12 '^trace' "$T/show.txt")"
for ph in X C i M; do
	grep -q "\"ph\":\"$ph\"" "$T/kinds.chrome.json" && ok || fail "Chrome trace: no '$ph' event"
done
# a thread run slice is named by its label, and escaped as JSON
grep -q '"name":"<script>x</script>"' "$T/kinds.chrome.json" && ok || fail "Chrome trace: no labelled slice"
# The report (and so profdb serve's run page): the trace's section, drawn
"$PROFDB" report "$R" -o "$T/kinds.html" 2>"$T/err" && ok || fail "report of a trace run: $(cat "$T/err")"
grep -q 'no .prof device' "$T/err" && fail "report: complains about profile devices a MirageOS run never has" || ok
for want in '<section id="trace">' '<p class="note" id="trace-gc">' '<div id="trace-tl">' '<script type="application/json" id="trace-tl-data">' \
	'<table class="facts" id="trace-counter-key">' \
	'<table class="facts" id="trace-labels">' '&lt;script&gt;x&lt;/script&gt;'; do
	grep -qF "$want" "$T/kinds.html" && ok || fail "report: no '$want'"
done
grep -q '<script>x</script>' "$T/kinds.html" && fail "report: a guest's label as markup" || ok
"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE=$!
for _ in $(seq 100); do grep -q serving "$T/serve.log" && break; sleep 0.05; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
curl -s --noproxy '*' "http://127.0.0.1:$PORT/runs/$R" >"$T/page.html"
grep -qF '<section id="trace">' "$T/page.html" && ok || fail "serve: the run page has no trace section: $(head -c 300 "$T/page.html")"
kill $SERVE; wait $SERVE 2>/dev/null
# The Chrome trace in speedscope's own page (headless Chromium), when the
# test peers are installed (./quickstart test installs them)
NM=${PROFSVC_PEERS:-$(cd "$S" && pwd)/tests/peers/node_modules}
PAGE="$NM/speedscope/dist/release/index.html"
if need chromium && [ -f "$PAGE" ]; then
	echo "speedscope.loadFileFromBase64(\"kinds.trace.json\", \"$(base64 -w0 "$T/kinds.chrome.json")\")" >"$T/load.js"
	chrome() {
		timeout 90 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
			--allow-file-access-from-files --user-data-dir="$T/chrome" --virtual-time-budget=10000 "$@" \
			2>>"$T/chrome.log"
	}
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$PAGE#localProfilePath=$T/load.js" >"$T/dom.html"
	grep -q 'kinds (pid 1), Lwt threads (tid 1)' "$T/dom.html" && ok ||
		fail "speedscope's page does not show the Lwt threads: $(sed 's/<[^>]*>/ /g' "$T/dom.html" | tr -s ' ' | head -c 300); $(grep -v 'dbus\|GL Driver' "$T/chrome.log" | tail -3)"
	grep 'CONSOLE' "$T/chrome.log" | grep -iv 'webgl\|GL Driver\|speedscope v' | grep -i 'error\|exception\|warn' &&
		fail "speedscope's page logged errors or warnings" || ok
	chrome --window-size=1200,700 --screenshot="$T/speedscope-trace.png" "file://$PAGE#localProfilePath=$T/load.js" >/dev/null
	[ -s "$T/speedscope-trace.png" ] && ok || fail "no screenshot of the trace in speedscope"
	chrome --window-size=1000,1400 --screenshot="$T/report-trace.png" "file://$T/kinds.html" >/dev/null
	# a drawn page is not one flat colour: count distinct bytes in the image
	[ -s "$T/report-trace.png" ] && [ "$(od -An -tu1 -v "$T/report-trace.png" | tr -s ' ' '\n' | sort -u | wc -l)" -gt 100 ] &&
		ok || fail "Chromium did not draw the trace's report"
	[ -n "${PROFSVC_KEEP:-}" ] && mkdir -p "$PROFSVC_KEEP" && cp "$T/speedscope-trace.png" "$T/report-trace.png" "$PROFSVC_KEEP/"
elif [ -n "${CI:-}" ]; then
	fail "chromium or speedscope ($PAGE) missing under CI"
fi
expect 1 "no MirageOS trace" -- "$PROFDB" export 1 --ctf "$T/none" # the imported HaLVM run
# a view the trace run cannot give says what the run holds
expect 1 "no .prof device (xvdp1); it holds a MirageOS trace (mprof)" -- "$PROFDB" top "$R"
expect 1 "no .hp device (xvdp2); it holds a MirageOS trace (mprof)" -- "$PROFDB" heap "$R" -o "$T/none.svg"
expect 1 "not empty" -- "$PROFDB" export "$R" --ctf "$T/kinds.ctf"

# --- 25x the ring at a guest's pace: nothing lost ------------------------------------
# 8000 events/s fill a 64 KiB ring in about 200 ms: a quarter of the rate
# the backend keeps up with (docs/performance.md), and room for a stall of
# the backend's loop on a test host busy with other suites (2 cores,
# sanitizers; a 16 KiB ring's 50 ms lost a packet so in CI).  Outrunning
# the snapshots is the next test's job.  Half-way the whole host stops
# for 0.4 s (the guest and the backend, as a busy CI VM is descheduled):
# a guest does not then write the lost time in one burst past the ring
# (the stub once did, and seven packets were lost), and the backend takes
# up its looks where it left them.
(
	sleep 3
	sp=$(pgrep -f -- "--event-log $T/hundred.jsonl") bp=$(cat "$PROFSVC_RUN_DIR/profile-backend.pid")
	[ -n "$sp" ] && [ -n "$bp" ] && kill -STOP $sp "$bp" && sleep 0.4 && kill -CONT "$bp" $sp && echo stopped >"$T/hundred.stop"
) &
mirage hundred --pages 16 --events 64000 --rate 8000
wait $!
[ -s "$T/hundred.stop" ] && ok || fail "hundred: the host was not stopped half-way (guest or backend not found)"
exported hundred exact
bytes=$(sqlite3 "$PROFSVC_DB" "select sum(bytes) from trace_packets join devices using (device_id) join runs using (run_id) where name = 'hundred'")
[ "${bytes:-0}" -ge $((25 * 65536)) ] && ok || fail "hundred: only $bytes bytes kept (25x a 64 KiB ring wanted)"

# --- a guest that outruns the snapshots: the loss, reported right --------------------
mirage outrun --pages 1 --events 60000 --rate 0
exported outrun lost
lost=$(sqlite3 :memory: "select json_extract(readfile('$T/outrun.json'), '\$.packets.lost')")
[ "${lost:-0}" -gt 0 ] && ok || fail "outrun: a 1-page ring written flat out lost nothing?"
grep -q 'trace run .*: packets [0-9]*-[0-9]* lost: the guest overwrote them' "$T/backend.log" && ok ||
	fail "outrun: the loss was not logged"

# --- a guest crashing inside an event --------------------------------------------------
mirage crash --pages 16 --events 20000 --rate 8000 --crash-at 7777 # the pace of "hundred"
# killed by its domain's destruction, after logging exactly the events before
[ "$(wc -l <"$T/crash.jsonl")" = 7777 ] && grep -q 'exit 137' "$T/crash.stub" && ok ||
	fail "crash: the stub did not crash at event 7777: $(wc -l <"$T/crash.jsonl") events, $(cat "$T/crash.stub")"
exported crash crash

# --- the backend SIGKILLed and restarted mid-trace ----------------------------------------
# A 256 KiB ring, 2 s of events: a sanitized backend restarts in well
# under that (it once needed more than the 0.24 s of a 64 KiB ring).
mirage restart --pages 64 --events 40000 --rate 5000 &
GUEST=$!
for k in 1 2; do
	sleep 2.5
	pid=$(cat "$PROFSVC_RUN_DIR/profile-backend.pid")
	kill -9 "$pid"
	# its pid file's lock free before the next start: a process being torn
	# down still holds it (under load that took more than the 0.1 s once
	# waited, and the new start said "already running")
	for _ in $(seq 200); do flock -n "$PROFSVC_RUN_DIR/profile-backend.pid" true && break; sleep 0.02; done
	backend_up
done
wait $GUEST
exported restart exact
[ "$("$PROFDB" query runs --name restart --json | grep -o '"run_id"' | wc -l)" = 1 ] && ok ||
	fail "restart: more than one run for one boot"
grep -q 'trace run .*: resumed: ' "$T/backend.log" && ok || fail "restart: the trace was not resumed"

# --- 32 tracing guests beside HaLVM guests ----------------------------------------------------
halvm() { # NAME: a HaLVM guest through profile-backend create, writing a fixture pair
	printf 'name = "%s"\nkernel = "k"\ndisk = [ '"'"'vdev=xvdp1, backendtype=profsvc'"'"', '"'"'vdev=xvdp2, backendtype=profsvc'"'"' ]\n' "$1" >"$T/$1.cfg"
	local dom
	dom=$("$BACKEND" create --platform sim "$T/$1.cfg") || { fail "create $1"; return 1; }
	"$STUB" --platform sim --mode halvm --domid "$dom" --prof "$FIX/phases/phases-p-hc.prof" \
		--hp "$FIX/phases/phases-hd-i0.01.hp" -q >"$T/$1.stub" 2>&1 || fail "$1: the HaLVM guest failed: $(cat "$T/$1.stub")"
	"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null 2>&1
}
halvm_ok() { # NAME: its run complete and its exports identical
	local r
	r=$(wait_ended "$1") || { fail "$1: no ended run"; return; }
	"$PROFDB" export "$r" --prof "$T/$1.prof" --hp "$T/$1.hp" >/dev/null 2>&1
	cmp -s "$T/$1.prof" "$FIX/phases/phases-p-hc.prof" && cmp -s "$T/$1.hp" "$FIX/phases/phases-hd-i0.01.hp" &&
		ok || fail "$1: HaLVM exports differ"
}
pids=()
# 32 traces at once, each 2.5 packets of a 4-packet ring (256 KiB): a trace
# is kept from when the backend maps it, and with 36 guests starting at once
# under the sanitizers the last were mapped more than 3 s after they began
# (their first packet overwritten).  Wrapping rings are the other tests'.
for i in $(seq 32); do mirage "fleet-$i" --pages 64 --events 6000 --rate 1500 & pids+=($!); done
for i in 1 2 3 4; do halvm "halvm-$i" & pids+=($!); done
wait "${pids[@]}"
for i in $(seq 32); do exported "fleet-$i" exact; done
for i in 1 2 3 4; do halvm_ok "halvm-$i"; done

# --- short-lived guests (issue 44): six guests tracing 2000 events flat
# out, each destroyed 100-500 ms after its program ended: each has its run
# and its whole trace.  (They got 1 to 5 runs of 6 over three tries: the
# simulated guest ended its grants as its program ended, every map after
# that failed once, and no run was recorded.  Not 0 ms: a guest destroyed
# within milliseconds of writing its node dies before a backend under the
# sanitizers on a loaded host maps it, 7 ms once, and its pages die with
# it, as on Xen.)
pids=()
for i in 0 1 2 3 4 5; do
	LINGER=$(printf '0.%03d' $((100 + 80 * i))) mirage "short-$i" --pages 16 --events 2000 --rate 0 & pids+=($!)
done
wait "${pids[@]}"
for i in 0 1 2 3 4 5; do exported "short-$i" exact; done

# --- hostile guests, each beside an honest HaLVM guest ----------------------------------------
hostile() { # KIND MIRAGE-ARGS...
	local kind=$1; shift
	halvm "honest-$kind" &
	local h=$!
	mirage "hostile-$kind" --hostile "$kind" "$@"
	wait $h
	halvm_ok "honest-$kind"
	"$BACKEND" status >/dev/null 2>&1 && ok || fail "$kind: the backend is gone: $(tail -5 "$T/backend.log")"
}
# no_trace NAME WHY: nothing was mapped, and the run says so: its trace
# device kept no packet, its end reason and show's trace section give WHY
# (it once recorded no run at all: the loss was a line in the log)
no_trace() {
	local r
	r=$(wait_ended "$1") || { fail "$1: no run says what was lost"; return; }
	"$PROFDB" show "$r" >"$T/$1.show"
	grep -q '^  packets         0 kept (0 bytes)' "$T/$1.show" && grep -q "^  ended           never mapped: .*$2" "$T/$1.show" &&
		"$PROFDB" show "$r" --json | grep -q "\"end_reason\":\"trace not captured: [^\"]*$2" && ok ||
		fail "$1: the run does not say that its trace was not captured ($2): $(cat "$T/$1.show")"
}
# (each kept alive until the backend made its run: under a host loaded
# to 9, refs-many's guest, alive 0.1 s, was destroyed before the backend
# looked at it, and its check failed)
UNTIL_RUN=1 hostile refs-garbage --pages 4 --events 2000 --rate 20000
no_trace hostile-refs-garbage 'is not a comma-separated list of grant refs (8,x,9): not mapped'
grep -q 'ring-ref is not a comma-separated list of grant refs (8,x,9): not mapped' "$T/backend.log" && ok ||
	fail "refs-garbage: not logged"
UNTIL_RUN=1 hostile refs-many --pages 1 --events 2000 --rate 20000
no_trace hostile-refs-many 'lists more pages than allowed'
grep -q 'ring-ref lists more pages than allowed (--max-trace-pages) (.*): not mapped' "$T/backend.log" && ok ||
	fail "refs-many: not logged"
UNTIL_RUN=1 hostile refs-ungranted --pages 4 --events 2000 --rate 20000
no_trace hostile-refs-ungranted 'cannot map the 4 pages of /local/domain/[0-9]*/data/mprof/ring-ref read-only: Invalid argument'
grep -q 'cannot map the 4 pages of /local/domain/[0-9]*/data/mprof/ring-ref read-only' "$T/backend.log" && ok ||
	fail "refs-ungranted: not logged"
[ "$(grep -c 'dom[0-9]* trace.*cannot map the 4 pages' "$T/backend.log")" -le 2 ] && ok ||
	fail "refs-ungranted: every retry logged: $(grep -c 'cannot map the 4 pages' "$T/backend.log") lines"
UNTIL_RUN=1 hostile too-big --pages 65 --events 2000 --rate 20000
no_trace hostile-too-big 'lists more pages than allowed'
grep -q 'lists more pages than allowed (--max-trace-pages)' "$T/backend.log" && ok || fail "too-big: not logged"
# a guest that writes its refs before it grants them (ended, then granted
# again 300 ms later): the map tried again while the domain lives, the
# whole trace kept
hostile late-grant --pages 16 --events 3000 --rate 5000
exported hostile-late-grant exact
grep -q 'dom[0-9]* trace run [0-9]*: mapped at try [0-9]*' "$T/backend.log" && ok || fail "late-grant: no retried map logged"
hostile rewrite --pages 16 --events 6000 --rate 5000
exported hostile-rewrite exact
grep -q 'rewritten with another list while mapped: ignored' "$T/backend.log" && ok || fail "rewrite: not logged"
for kind in headers scribble; do
	hostile "$kind" --pages 4 --events 20000 --rate 20000 --seed 7
	r=$(wait_ended "hostile-$kind") || { fail "$kind: no run"; continue; }
	rm -rf "$T/$kind.ctf"
	"$PROFDB" export "$r" --ctf "$T/$kind.ctf" --trace-json "$T/$kind.json" >/dev/null 2>&1 && ok || fail "$kind: export"
	babeltrace2 --clock-cycles --no-delta "$T/$kind.ctf" >"$T/$kind.bt" 2>"$T/$kind.bt.err" && ok ||
		fail "$kind: babeltrace2 refused the export: $(grep -m3 'CAUSED' "$T/$kind.bt.err")"
	out=$($CHECK bt "$T/$kind.json" "$T/$kind.bt") && ok || fail "$kind: $out"
done
hostile flood --pages 4 --events 2000 --rate 20000
grep -q 'xenstore event flood on /local/domain/[0-9]*/data/mprof/ring-ref' "$T/backend.log" && ok || fail "flood: not logged"

expect 0 "" -- "$PROFDB" check
# The simulated host stopping under the backend: the backend stops too (its
# hung-up event channel once kept it reading EOF at a core's full speed).
"$XS" stop --dir "$XENSIM_DIR" >/dev/null 2>&1
for _ in $(seq 100); do "$BACKEND" status >/dev/null 2>&1 || break; sleep 0.05; done
! "$BACKEND" status >/dev/null 2>&1 && grep -q 'closed under us (the simulated host stopped?): stopping' "$T/backend.log" &&
	ok || fail "the backend outlived its host: $(tail -2 "$T/backend.log")"
"$BACKEND" stop >/dev/null 2>&1

# --- bit rot in a kept packet: check names it, the exports refuse it -------------------
# (the last trace kept: a byte of its first packet flipped on the disk)
r=$(python3 - "$PROFSVC_DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run, dev, sector = db.execute("SELECT d.run_id, t.device_id, t.sector FROM trace_packets t JOIN devices d "
                              "USING (device_id) ORDER BY t.device_id DESC, t.seq LIMIT 1").fetchone()
print(run)
off = sector * 512 + 40
key = (dev << 32) | (off // 65536)
data, slot = db.execute("SELECT data, slot FROM chunks WHERE key = ?", (key,)).fetchone()
if slot is None:
    b = bytearray(data); b[off % 65536] ^= 0x08
    db.execute("UPDATE chunks SET data = ? WHERE key = ?", (bytes(b), key)); db.commit()
else:
    with open(sys.argv[1] + "-data", "r+b") as f:
        f.seek(slot * 65536 + off % 65536); x = f.read(1)
        f.seek(slot * 65536 + off % 65536); f.write(bytes([x[0] ^ 0x08]))
PY
) || fail "damaging a trace packet"
expect 1 "(trace packet [0-9]*) fail their checksum" -- "$PROFDB" check
tail -1 "$T/err" | grep -q "damaged: 1 of [0-9]* chunks and 1 of [0-9]* trace packets fail their checksums" && ok ||
	fail "check's summary of a damaged packet: $(tail -1 "$T/err")"
expect 1 "run $r, device mprof (id [0-9]*): bytes [0-9]*-[0-9]* (chunk [0-9]*) fail their checksum" -- \
	"$PROFDB" export "$r" --trace-json "$T/rot.json"
[ ! -e "$T/rot.json" ] && ok || fail "an export of a damaged trace left a file"
finish test_trace
