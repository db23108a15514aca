#!/bin/bash
# test_eventlog_capture.sh - GHC's eventlog captured from a third disk,
# xvdp3, on xensim: a HaLVM guest (frontend-stub --eventlog) writes it as
# it writes its .hp, the store keeps it as a device of role 'eventlog', and
# profdb gives it back byte for byte (export --eventlog, export-disk,
# import-disk --eventlog); a guest that crashes mid-write leaves the
# prefix it flushed, which export cuts at its last whole event and says so.  The eventlog is a real one:
# tests/data/ghc-eventlog (Churn.hs run with +RTS -l -hT).
#
# Owns only these checks; calls the built programs through tests/lib.sh.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim

EVDIR="$S/tests/data/ghc-eventlog"
EV="$EVDIR/churn-l-hT.eventlog" EVHP="$EVDIR/churn-l-hT.hp"
PROF="$FIX/phases/phases-p-hc.prof"
shape() { python3 "$S/tests/json_shapes.py" "$1" "$T/out" && ok || fail "$2: JSON not as documented: $(head -c 400 "$T/out")"; }
jx() { sqlite3 :memory: "select json_extract(readfile('$T/out'), '$1')"; }
# cfg NAME: $T/NAME.cfg, a HaLVM guest with its three profsvc disks
cfg() {
	printf '%s\n' "name = \"$1\"" 'kernel = "k"' \
		"disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc', 'vdev=xvdp3, backendtype=profsvc' ]" \
		>"$T/$1.cfg"
}
# wait_ended NAME: the run id of NAME once it ended (empty after 10 s)
wait_ended() {
	local r
	for _ in $(seq 100); do
		r=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = '$1' and state != 'running'" 2>/dev/null)
		[ -n "$r" ] && { echo "$r"; return 0; }
		sleep 0.1
	done
	return 1
}

start_xensim
# in the foreground, its log kept: each run's end names its files' sizes
"$BACKEND" start --platform sim --db "$PROFSVC_DB" --foreground >>"$T/backend.log" 2>&1 &
disown
for _ in $(seq 100); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.05; done
"$BACKEND" status >/dev/null 2>&1 || { echo "backend did not start: $(tail -3 "$T/backend.log")"; exit 99; }

# --- create knows xvdp3 ----------------------------------------------------------------------
cfg ev-guest
expect 0 "" -- "$BACKEND" create --platform sim --dry-run "$T/ev-guest.cfg"
grep -q '^# profsvc disk: xvdp3$' "$T/out" && grep -q '"vdev=xvdp3, script=block-profsvc, target=eventlog"' "$T/out" &&
	ok || fail "create --dry-run: xvdp3 not served: $(cat "$T/out")"

# --- a whole run: .prof, .hp and eventlog, each byte-exact -----------------------------------
DOM=$("$BACKEND" create --platform sim "$T/ev-guest.cfg") || { fail "create"; finish test_eventlog_capture; exit 1; }
mkdir -p "$T/ref"
"$STUB" --platform sim --mode halvm --domid "$DOM" --prof "$PROF" --hp "$EVHP" --eventlog "$EV" \
	--reference "$T/ref" >"$T/stub.log" 2>&1 && ok || fail "the guest failed: $(cat "$T/stub.log")"
grep -q "done: eventlog $(stat -c %s "$EV") bytes" "$T/stub.log" && ok || fail "stub: $(cat "$T/stub.log")"
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
RUN=$(wait_ended ev-guest) && ok || fail "the run never ended"
[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $RUN")" = complete ] && ok ||
	fail "a guest that closed its three files: run $(sqlite3 "$PROFSVC_DB" "select state, end_reason from runs where run_id = $RUN")"
grep -q "run $RUN.*ended complete (.prof $(stat -c %s "$PROF") bytes, .hp $(stat -c %s "$EVHP") bytes, eventlog $(stat -c %s "$EV") bytes)" "$T/backend.log" &&
	ok || fail "the backend's word of the run's end: $(grep "run $RUN" "$T/backend.log" | tail -2)"
expect 0 "" -- "$PROFDB" export "$RUN" --eventlog "$T/e.eventlog"
same "$T/e.eventlog" "$EV"
grep -q "xvdp3 -> $T/e.eventlog ($(stat -c %s "$EV") bytes)" "$T/out" && ok || fail "export says: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" export "$RUN" --eventlog - ; same "$T/out" "$EV"
# every profile to a directory, named NAME-RUN.EXT
expect 0 "" -- "$PROFDB" export "$RUN" -o "$T/all" --json; shape export "export -o"
same "$T/all/ev-guest-$RUN.eventlog" "$EV"; same "$T/all/ev-guest-$RUN.hp" "$EVHP"; same "$T/all/ev-guest-$RUN.prof" "$PROF"
[ "$(jx '$.exported[2].vdev') $(jx '$.exported[2].bytes')" = "xvdp3 $(stat -c %s "$EV")" ] && ok ||
	fail "export --json: $(cat "$T/out")"
expect 1 "exists" -- "$PROFDB" export "$RUN" -o "$T/all"
expect 2 "--hp and --eventlog cannot both go to standard output" -- "$PROFDB" export "$RUN" --hp - --eventlog -
expect 2 "--prof and --eventlog name the same file" -- "$PROFDB" export "$RUN" --prof "$T/x" --eventlog "$T/x"
# show and its JSON name the role
expect 0 "" -- "$PROFDB" show "$RUN"
grep -q "device xvdp3 (devid 51955, role eventlog)" "$T/out" && grep -q "status block    $(stat -c %s "$EV") bytes, closed" "$T/out" &&
	ok || fail "show: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" show "$RUN" --json; shape show "show --json"
[ "$(jx '$.devices[2].role') $(jx '$.devices[2].status.file_size') $(jx '$.devices[2].status.closed')" = "eventlog $(stat -c %s "$EV") 1" ] &&
	ok || fail "show --json: $(cat "$T/out")"
# query runs: the eventlog's size, in its own column once a run has one
expect 0 "" -- "$PROFDB" query runs --json; shape runs "query runs --json"
[ "$(jx '$.runs[0].eventlog_bytes') $(jx '$.runs[0].prof_bytes')" = "$(stat -c %s "$EV") $(stat -c %s "$PROF")" ] && ok ||
	fail "query runs --json: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" query runs
head -1 "$T/out" | grep -q "HP    EVENTLOG  HOLDS$" && grep -q " complete .* $(stat -c %s "$EV")  \.prof, \.hp, eventlog$" "$T/out" && ok ||
	fail "query runs: $(cat "$T/out")"
# the report's facts give its size
expect 0 "" -- "$PROFDB" report "$RUN" -o "$T/r.html"
# (as the pages write sizes: "12 kB (12,345 bytes)")
EVB=$(stat -c %s "$EV" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
grep -q "<td>eventlog</td><td>[0-9.]* [kMG]B ($EVB bytes)<" "$T/r.html" && ok ||
	fail "report: no eventlog fact of $EVB bytes: $(grep -o '<td>eventlog</td>.\{0,40\}' "$T/r.html" | head -2)"
# the reference image the guest's writes make on a raw disk is what export-disk gives
expect 0 "" -- "$PROFDB" export-disk "$RUN" xvdp3 "$T/e.disk"
cmp -s -n "$(stat -c %s "$T/e.disk")" "$T/e.disk" "$T/ref/eventlog.disk" && ok || fail "export-disk differs from the reference image"
expect 0 "" -- "$PROFDB" export-disk --json "$RUN" eventlog "$T/e2.disk"; shape export "export-disk --json"
same "$T/e.disk" "$T/e2.disk"

# --- import-disk --eventlog: the image round trip, and images in the wrong place --------------
expect 0 "" -- "$PROFDB" import-disk --name back --eventlog "$T/e.disk" --json; shape import "import-disk --eventlog"
BACK=$(jx '$.run.run_id')
[ "$(jx '$.devices[0].vdev') $(jx '$.devices[0].role') $(jx '$.run.state')" = "xvdp3 eventlog complete" ] && ok ||
	fail "import-disk --eventlog: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" export "$BACK" --eventlog "$T/back.eventlog"; same "$T/back.eventlog" "$EV"
expect 0 "" -- "$PROFDB" export-disk "$BACK" xvdp3 "$T/back.disk"; same "$T/back.disk" "$T/e.disk"
"$MKDISK" --eventlog "$EV" "$T/mk.disk" >/dev/null && ok || fail "halvm-mkdisk --eventlog"
"$MKDISK" "$EVHP" "$T/mkhp.disk" >/dev/null && "$MKDISK" "$PROF" "$T/mkp.disk" >/dev/null || fail "halvm-mkdisk"
expect 0 "" -- "$PROFDB" import-disk --prof "$T/mkp.disk" --hp "$T/mkhp.disk" --eventlog "$T/mk.disk"
grep -q "eventlog: $(stat -c %s "$EV") bytes" "$T/out" && ok || fail "import-disk says: $(cat "$T/out")"
expect 0 "" -- "$PROFDB" export latest --eventlog "$T/mk.eventlog" --hp "$T/mk.hp"; same "$T/mk.eventlog" "$EV"; same "$T/mk.hp" "$EVHP"
expect 1 "holds GHC's eventlog" -- "$PROFDB" import-disk --hp "$T/mk.disk"
expect 1 "holds GHC's eventlog" -- "$PROFDB" import-disk "$T/mk.disk"
expect 1 "not an eventlog" -- "$PROFDB" import-disk --eventlog "$T/mkp.disk"
expect 1 "holds a heap profile" -- "$PROFDB" import-disk --eventlog "$T/mkhp.disk"
expect 2 "not both" -- "$PROFDB" import-disk --eventlog "$T/mk.disk" "$T/mkp.disk"
expect 0 "" -- "$PROFDB" import-disk --name no-eventlog --hp "$T/mkhp.disk"
expect 1 "has no .eventlog device (xvdp3)" -- "$PROFDB" export latest --eventlog "$T/none.eventlog"
expect 1 "has no device xvdp3" -- "$PROFDB" export-disk latest xvdp3 "$T/none.disk"
expect 0 "" -- "$PROFDB" import-disk --force --name forced --eventlog "$T/mkp.disk"
# a status block damaged by the guest (its copies disagree): imported, refused by export unless --salvage
cp "$T/mk.disk" "$T/bad.disk"
printf '\377' | dd of="$T/bad.disk" bs=1 seek=40 conv=notrunc status=none
expect 0 "header block corrupted" -- "$PROFDB" import-disk --name damaged --eventlog "$T/bad.disk"
expect 1 "header block corrupted" -- "$PROFDB" export latest --eventlog "$T/bad.eventlog"
[ ! -e "$T/bad.eventlog" ] && ok || fail "a refused export left a file"
expect 0 "salvaged" -- "$PROFDB" export latest --eventlog "$T/bad.eventlog" --salvage
same "$T/bad.eventlog" "$EV"
# a status block claiming far more than the guest wrote: refused, bounded
python3 -c 'import struct,sys; b=struct.pack("<QQ", 1<<40, 1); b+=b"".join(struct.pack("<QQ", (1<<40)^i, 1^i) for i in range(2, 64, 2)); sys.stdout.buffer.write(b)' |
	dd of="$T/huge.disk" bs=512 count=1 conv=notrunc status=none
dd if="$T/mk.disk" of="$T/huge.disk" bs=512 skip=1 seek=1 count=200 conv=notrunc status=none
expect 0 "claims" -- "$PROFDB" import-disk --name huge --eventlog "$T/huge.disk"
expect 1 "claims 1099511627776 bytes but the guest wrote only" -- "$PROFDB" export latest --eventlog "$T/huge.eventlog"

# --- a guest that crashes mid-write: the flushed prefix cut at its last whole event, and export says so --------------------
cfg ev-crash
CUT=30000
DOM=$("$BACKEND" create --platform sim "$T/ev-crash.cfg") || fail "create ev-crash"
"$STUB" --platform sim --mode halvm --domid "$DOM" --eventlog "$EV" --crash-at $CUT >"$T/crash.log" 2>&1 &
{ wait $!; } 2>/dev/null # killed at --crash-at, its domain with it
grep -q "crashed after $CUT of" "$T/crash.log" && ok || fail "the guest did not crash as asked: $(cat "$T/crash.log")"
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null 2>&1
CR=$(wait_ended ev-crash) && ok || fail "the crashed run never ended"
[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $CR")" = crashed ] && ok || fail "run $CR not crashed"
FLUSHED=$(sqlite3 "$PROFSVC_DB" "select file_size from devices where run_id = $CR and vdev = 'xvdp3' and closed = 0")
# what the guest flushed: its last whole flush or page before the crash
[ -n "$FLUSHED" ] && [ "$FLUSHED" -gt $((CUT - 4096)) ] && [ "$FLUSHED" -le $CUT ] && ok ||
	fail "the status block of the crashed guest says '$FLUSHED' bytes"
# the flushed prefix ends inside an event: export cuts it at the last whole one, where the
# decoder says the whole events of those bytes end, and says so
head -c "$FLUSHED" "$EV" >"$T/flushed.eventlog"
WHOLE=$("$B/tests/eventlog_dump" counts "$T/flushed.eventlog" | sed -n 's/^whole_prefix //p')
[ -n "$WHOLE" ] && [ "$WHOLE" -lt "$FLUSHED" ] && [ "$WHOLE" -gt $((FLUSHED - 65536)) ] && ok ||
	fail "the flushed prefix's whole events end at '$WHOLE' of $FLUSHED bytes"
expect 0 "eventlog not cleanly closed" -- "$PROFDB" export "$CR" --eventlog "$T/cr.eventlog"
grep -q "exported $WHOLE bytes, cut at the last whole event: $WHOLE of $FLUSHED bytes" "$T/err" && ok ||
	fail "export of a crashed guest says: $(cat "$T/err")"
[ "$(stat -c %s "$T/cr.eventlog")" = "$WHOLE" ] && cmp -s -n "$WHOLE" "$T/cr.eventlog" "$EV" && ok ||
	fail "the crashed guest's eventlog is not the $WHOLE-byte prefix"
# GHC's own reader takes the cut log without a complaint
if need ghc-events; then
	ghc-events show "$T/cr.eventlog" >"$T/cr.show" 2>"$T/cr.show.err" && [ ! -s "$T/cr.show.err" ] && ok ||
		fail "ghc-events show on the cut export: $(head -3 "$T/cr.show.err")"
	[ "$(grep -c ': starting GC$' "$T/cr.show")" -gt 0 ] && ok || fail "ghc-events shows no GC in the cut export"
else
	echo "SKIP: the cut export not read by ghc-events"
fi
expect 0 "" -- "$PROFDB" export-disk "$CR" xvdp3 "$T/cr.disk"
expect 0 "not cleanly closed" -- "$PROFDB" import-disk --eventlog "$T/cr.disk"
expect 0 "eventlog not cleanly closed" -- "$PROFDB" export latest --eventlog "$T/cr2.eventlog"
same "$T/cr2.eventlog" "$T/cr.eventlog"

# --- profdb serve: the run page offers the eventlog, its download is the guest's bytes ----------
"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE=$!
for _ in $(seq 300); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
WEB="http://127.0.0.1:${PORT:-1}"
curl -sf --max-time 10 "$WEB/runs/$RUN" >"$T/page.html" && grep -q "/runs/$RUN/eventlog" "$T/page.html" && ok ||
	fail "the run page lists no eventlog download: $(cat "$T/serve.log")"
curl -sf --max-time 10 -o "$T/web.eventlog" -D "$T/web.headers" "$WEB/runs/$RUN/eventlog" && ok || fail "GET /runs/$RUN/eventlog"
same "$T/web.eventlog" "$EV"
grep -qi "filename=\"run-$RUN.eventlog\"" "$T/web.headers" && ok || fail "download headers: $(cat "$T/web.headers")"
curl -sf --max-time 10 -o "$T/webcr.eventlog" "$WEB/runs/$CR/eventlog" && same "$T/webcr.eventlog" "$T/cr.eventlog" ||
	fail "the crashed guest's eventlog download"
curl -sf --max-time 10 "$WEB/api/runs/$RUN" >"$T/out" && [ "$(jx '$.devices[2].role')" = eventlog ] && ok ||
	fail "/api/runs/$RUN: $(head -c 300 "$T/out")"
kill "$SERVE"; wait "$SERVE" 2>/dev/null

finish test_eventlog_capture
