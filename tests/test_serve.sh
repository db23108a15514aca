#!/usr/bin/env bash
# test_serve.sh - profdb serve and profdb watch against a store that
# profile-backend is filling on xensim, from a simulated HaLVM guest that
# writes its heap profile at a GHC-like pace (frontend-stub --pace):
#  - the HTTP surface: every page, download and API path; byte-exact
#    downloads; the headers every reply carries; 4xx for methods, paths,
#    arguments and oversized or malformed requests; a stalled client and a
#    stalled event stream delay nobody; a store that is replaced or damaged
#    gives an error page and serving goes on; the backend restarting too;
#  - the event stream: samples as the guest writes them, then the end;
#  - the catalogue's filters; the comparison offered against earlier runs
#    of the same guest; bounded connections; a warning for --listen off
#    loopback;
#  - profdb watch: one line per sample when not a terminal, the top-like
#    view on a terminal of its own (tests/pty_run.py), exit at the end;
#  - in headless Chromium (tests/peers/serve_browser.cjs): the catalogue and
#    the run page live with no reload, the end of the run, hostile names
#    inert and shown as spelled, no console error, screenshots with something drawn (kept with
#    PROFSVC_KEEP=DIR); the compare page at desktop and phone sizes (its
#    sections' order, a band one colour in both heaps, the warning for heap
#    profiles of different kinds) and the catalogue's compare links;
#    (tests/peers/pages_browser.cjs) the catalogue, run and compare pages
#    at 1400x1000 and 390x844: the top cost centres first, as profdb top
#    gives them, not zoomed out, nothing wider than the screen, flame rows
#    at least 14 px on the phone, a link to the catalogue, sizes with units.
# The browser part needs chromium and tests/peers' npm packages (skipped,
# 77, without them, except under CI=true).  PROFSVC_VALGRIND=1 (make
# check-valgrind) runs the server under valgrind instead, without the
# browser part: any memory error or leak fails its exit status.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SERVE_PID=
at_exit '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null'
keep_at_exit '"$T"/*.png'
with_browser
[ -n "$VG" ] && [ $browser = yes ] && browser=valgrind

# a run with hostile names everywhere, imported before the backend owns the store
{
	printf '\tX Time and Allocation Profiling Report  (Final)\n\n\t   evil\n\n'
	printf '\ttotal time  =        0.10 secs   (100 ticks @ 1000 us, 1 processor)\n'
	printf '\ttotal alloc =   1,000 bytes  (excludes profiling overheads)\n\n'
	printf 'COST CENTRE MODULE SRC no. entries %%time %%alloc %%time %%alloc\n\n'
	printf 'MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n'
	printf ' </script><script>window.__xss=1</script> Main a"b.hs:1 2 1 50.0 50.0 100.0 100.0\n'
	printf '  <img/src=x/onerror=window.__xss=1> Bad\377Mod <no location info> 3 5 40.0 50.0 40.0 50.0\n'
	printf '  lambda.\\ Main <no location info> 4 1 10.0 0.0 10.0 0.0\n'
} >"$T/evil.prof"
sed 's/^\(MAIN\|(.*\)\t/<\/script><img\/src=x\/onerror=window.__xss=1>\1\t/' "$FIX/leak/leak-p-hc.hp" >"$T/evil.hp"
import "x\"><img src=x onerror=window.__xss=1></title></script><script>window.__xss=1</script>$(printf '\033]0;pwned\007')" \
	"$T/evil.prof" "$T/evil.hp"                                                   # run 1
EVIL=1
# a second later: a time between the imported run's start and the live one's (since= filters)
sleep 1.1
MID=$(date -u +%Y-%m-%dT%H:%M:%S)

start_xensim
start_backend
guest_cfg live-guest

# serve, on a port of the kernel's choosing
$VG "$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
SERVE_PID=$!
for _ in $(seq 300); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
[ -n "$PORT" ] && ok || { fail "serve did not start: $(cat "$T/serve.log")"; finish test_serve; exit 1; }
URL="http://127.0.0.1:$PORT"
grep -q 'not loopback' "$T/serve.log" && fail "a loopback address warned: $(cat "$T/serve.log")" || ok
# get PATH [curl options]: the status code; the body in $T/body, headers in $T/hdr
get() { local p=$1; shift; curl -s --max-time $((10 * SLOW)) -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$URL$p"; }
status() { local want=$1; shift; local got; got=$(get "$@"); [ "$got" = "$want" ] && ok || fail "GET $1: $got, want $want: $(head -c 200 "$T/body")"; }

# --- the HTTP surface ------------------------------------------------------------
for p in / "/runs/$EVIL" "/runs/$EVIL/prof" "/runs/$EVIL/hp" "/runs/$EVIL/folded" "/runs/$EVIL/speedscope.json" \
	"/runs/$EVIL/report.html" "/compare?a=$EVIL&b=$EVIL" /api/runs "/api/runs/$EVIL" "/api/runs/$EVIL/heap" \
	"/api/runs/$EVIL/tree" "/api/diff?a=$EVIL&b=$EVIL"; do
	status 200 "$p"
	grep -qi '^X-Content-Type-Options: nosniff' "$T/hdr" && grep -qi "^Content-Security-Policy: default-src 'none'" "$T/hdr" &&
		ok || fail "$p: headers lack nosniff or the CSP: $(cat "$T/hdr")"
done
get "/runs/$EVIL/prof" >/dev/null; same "$T/body" "$T/evil.prof"
get "/runs/$EVIL/hp" >/dev/null; same "$T/body" "$T/evil.hp"
grep -qi '^Content-Disposition: attachment; filename="run-1.hp"' "$T/hdr" && ok || fail "no attachment name: $(cat "$T/hdr")"
get "/runs/$EVIL/report.html" >/dev/null
[ "$(grep -o '<script' "$T/body" | wc -l)" = 6 ] && ok || fail "report.html download: $(grep -o '<script' "$T/body" | wc -l) <script elements, want 6 (the flame graph has its own)"
# a downloaded report is a file on its own: no link to this server's pages
grep -q 'href="/' "$T/body" && fail "report.html download: links to the server: $(grep -o 'href="/[^"]*"' "$T/body" | head -3)" || ok
# every served page links back to the catalogue
for p in "/runs/$EVIL" "/compare?a=$EVIL&b=$EVIL"; do
	get "$p" >/dev/null
	grep -q '<a class="home" href="/">' "$T/body" && ok || fail "$p: no link to the catalogue"
done
for p in "/api/runs" "/api/runs/$EVIL" "/api/runs/$EVIL/heap?since=3" "/api/runs/$EVIL/tree" "/api/diff?a=$EVIL&b=$EVIL"; do
	get "$p" >/dev/null
	json_ok "$T/body" && ok || fail "$p is not JSON: $(head -c 200 "$T/body")"
	grep -q '<script\|<img' "$T/body" && fail "$p: a guest's markup unescaped" || ok
done
# guest text is the exact text once parsed (docs/json.md): markup, ESC and
# BEL themselves, one backslash, a byte that is not UTF-8 as U+DC00 + byte
get "/api/runs/$EVIL/tree" >/dev/null
python3 -c 'import json, sys
ns = json.load(open(sys.argv[1]))["nodes"]
names = {n["name"] for n in ns}
mods = {n["module"].encode("utf-8", "surrogateescape") for n in ns}
sys.exit(not ({"lambda.\\", "</script><script>window.__xss=1</script>"} <= names and b"Bad\xffMod" in mods))' "$T/body" &&
	ok || fail "/api/runs/$EVIL/tree: not the exact names: $(head -c 600 "$T/body")"
LC_ALL=C grep -q $'[\001-\010\013-\037\177]\|\377' "$T/body" && fail "/api/runs/$EVIL/tree: a raw control or byte" || ok
get "/api/runs/$EVIL" >/dev/null
python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["name"] != "x\"><img src=x onerror=window.__xss=1></title></script><script>window.__xss=1</script>\x1b]0;pwned\x07")' \
	"$T/body" && ok || fail "/api/runs/$EVIL: not the exact name: $(head -c 300 "$T/body")"
get "/runs/$EVIL/folded" >/dev/null
grep -qx 'MAIN.MAIN;Main.</script><script>window.__xss=1</script>;Main.lambda.\\ 10' "$T/body" && ok || fail "/runs/$EVIL/folded: not one backslash: $(cat "$T/body")"
get "/runs/$EVIL/speedscope.json" >/dev/null
python3 -c 'import json, sys; sys.exit("Main.lambda.\\" not in [f["name"] for f in json.load(open(sys.argv[1]))["shared"]["frames"]])' \
	"$T/body" && ok || fail "/runs/$EVIL/speedscope.json: not the exact name: $(head -c 600 "$T/body")"
# /api/runs is the documented run object (docs/json.md), the very one of
# profdb query runs --json
get /api/runs >/dev/null
python3 "$S/tests/json_shapes.py" api_runs "$T/body" && ok || fail "/api/runs not as docs/json.md says"
"$PROFDB" query runs --json >"$T/cli.json"
python3 -c 'import json, sys; a, b = (json.load(open(f))["runs"][0] for f in sys.argv[1:]); sys.exit(a != b)' "$T/body" "$T/cli.json" &&
	ok || fail "/api/runs and query runs --json differ: $(head -c 300 "$T/body") / $(head -c 300 "$T/cli.json")"
n=$(grep -c BEGIN_SAMPLE "$T/evil.hp")
get "/api/runs/$EVIL/heap?since=3" >/dev/null
[ "$(sqlite3 :memory: "select json_array_length(json_extract(readfile('$T/body'), '\$.samples'))")" = $((n - 3)) ] && ok ||
	fail "heap since 3: not the last $((n - 3)) samples"
get / >/dev/null
grep -q '<script>window.__xss\|<img src=x' "$T/body" && fail "catalogue: a guest name is markup" || ok
grep -q $'\033' "$T/body" && fail "catalogue: a raw ESC" || ok
# refused: methods, paths, arguments, oversized and malformed requests
status 405 / -X POST
status 405 /api/runs -X DELETE
for p in /nope /runs/0 /runs/01 /runs/99999999999999999999 "/runs/$EVIL/../../etc/passwd" "/runs/%2e%2e/x" \
	/runs/1/x /api/nope /api/runs/1/x /static/../../etc/passwd; do
	status 404 "$p" --path-as-is
done
status 404 /runs/4242
grep -q 'no run 4242' "$T/body" && ok || fail "no clear error for a missing run: $(cat "$T/body")"
for p in "/?state=bogus" "/?since=yesterdayish" "/?limit=0" "/api/runs?limit=x" "/api/runs/1/heap?since=-1" \
	"/compare?a=1" "/compare?a=x&b=1" "/api/diff?a=1"; do
	status 400 "$p"
done
code=$(get / -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)")
case $code in 413|431|000) ok ;; *) fail "a 40 KB header got $code" ;; esac
for req in 'GARBAGE\r\n\r\n' 'GET / HTTP/9.9\r\n\r\n' 'GET /\x01\x02 HTTP/1.1\r\nHost: x\r\n\r\n' \
	'GET / HTTP/1.1\r\nNo colon here\r\n\r\n'; do
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf "$req" >&3 && reply=$(timeout 5 head -c 12 <&3); exec 3<&-
	# a line that is not HTTP at all is dropped without a reply
	case $reply in "HTTP/1.1 4"* | "HTTP/1.1 505") ok ;; "") [ "$req" = 'GARBAGE\r\n\r\n' ] && ok || fail "no reply to '$req'" ;;
	*) fail "the malformed request '$req' got '$reply'" ;; esac
done
# a stalled client (half a request) and a stalled event stream delay nobody
exec 4<>"/dev/tcp/127.0.0.1/$PORT"; printf 'GET / HTTP/1.1\r\nHost: x\r\n' >&4
exec 5<>"/dev/tcp/127.0.0.1/$PORT"; printf 'GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&5
t0=$(date +%s%N); status 200 /api/runs; t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -lt $((3000 * SLOW)) ] && ok || fail "a request took $(((t1 - t0) / 1000000)) ms beside stalled clients"
# bounded connections: 80 idle ones from one address are not all kept (48
# at most per address: a new one takes the place of the oldest idle one),
# a request among them is served, and once they go the server serves
# again; a client trickling header lines is cut off at the header deadline
python3 - "$PORT" $SLOW <<'PY' >"$T/conns" 2>&1 && ok || fail "connection limit: $(cat "$T/conns")"
import socket, sys, time, urllib.request
port, slow = int(sys.argv[1]), int(sys.argv[2])
socks = [socket.create_connection(('127.0.0.1', port)) for _ in range(80)]
time.sleep(1.0 * slow)
kept = 0
for s in socks:
    s.setblocking(False)
    try:
        kept += s.recv(1) != b''  # a reply without a request: not expected either
    except BlockingIOError:
        kept += 1  # still open, waiting for a request
    except OSError:
        pass  # reset: closed by the server
assert 1 <= kept <= 48, 'the server kept %d of 80 idle connections from one address' % kept
# a new client is served while its address's cap is full of idle
# connections: it takes the place of the oldest (they all come from
# 127.0.0.1 through an ssh tunnel)
urllib.request.urlopen('http://127.0.0.1:%d/api/runs' % port, timeout=5 * slow).read()
for s in socks:
    s.close()
# headers trickled a line a second are cut off by the header deadline (10 s)
tr = [socket.create_connection(('127.0.0.1', port)) for _ in range(8)]
for s in tr:
    s.sendall(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n')
start, cut = time.time(), 0
while time.time() - start < 20 * slow and cut < len(tr):
    time.sleep(1)
    cut = 0
    for s in tr:
        try:
            s.sendall(b'X-Slow: 1\r\n')
            s.setblocking(False)
            try:
                cut += s.recv(1) == b''
            except BlockingIOError:
                pass
            s.setblocking(True)
        except OSError:
            cut += 1
took = time.time() - start
assert cut == len(tr), '%d of %d trickling clients cut after %.0f s' % (cut, len(tr), took)
assert took >= 8, 'cut after %.1f s, before the 10 s deadline' % took
print('trickle cut after %.1f s' % took)
for s in tr:
    s.close()
deadline = time.time() + 10 * slow
while True:
    try:
        urllib.request.urlopen('http://127.0.0.1:%d/api/runs' % port, timeout=5 * slow).read()
        break
    except OSError as e:
        assert time.time() < deadline, 'not serving again after the connections closed: %s' % e
        time.sleep(0.2)
print('kept', kept)
PY
# event streams whose clients hang up go within seconds on an idle store
# (they were noticed only at the next change or keep-alive: 128 of them
# held every connection for over a minute)
python3 - "$PORT" $SLOW "$SERVE_PID" <<'PY' >"$T/streams" 2>&1 && ok || fail "closed event streams: $(cat "$T/streams")"
import socket, sys, time
port, slow, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def threads():
    return int([l for l in open('/proc/%s/status' % pid) if l.startswith('Threads:')][0].split()[1])
base = threads()
socks = []
for i in range(40):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    socks.append(s)
for s in socks:
    s.settimeout(10 * slow)
    got = b''
    while b'hello' not in got:
        more = s.recv(4096)
        assert more, 'the stream closed before its hello event: %r' % got
        got += more
busy = threads()
assert busy >= base + 30, 'the streams made %d threads (from %d)' % (busy, base)
for s in socks:
    s.close()
deadline = time.time() + 5 * slow
while threads() > base + 2:
    assert time.time() < deadline, '%d threads %ds after 40 streams closed (%d before them)' % (threads(), 5 * slow, base)
    time.sleep(0.1)
print('threads', base, busy, threads())
PY
# --listen another address: served, with a warning that anyone reaching it reads the store
"$PROFDB" serve --listen 0.0.0.0:0 2>"$T/serve-any.log" &
ANY=$!
for _ in $(seq $((100 * SLOW))); do grep -q 'serving' "$T/serve-any.log" && break; sleep 0.1; done
grep -q 'not loopback: anyone who can reach it can read every run' "$T/serve-any.log" && ok ||
	fail "--listen 0.0.0.0: no warning: $(cat "$T/serve-any.log")"
APORT=$(grep -o 'http://0\.0\.0\.0:[0-9]*' "$T/serve-any.log" | head -1 | cut -d: -f3)
[ "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:${APORT:-1}/api/runs")" = 200 ] && ok ||
	fail "--listen 0.0.0.0:0 does not serve: $(cat "$T/serve-any.log")"
kill $ANY; wait $ANY 2>/dev/null

# --- the Host header (DNS rebinding): only this server's names are answered ------------
[ "$(get /api/runs -H 'Host: evil.example.com')" = 421 ] && grep -q "does not answer to the name 'evil.example.com'" "$T/body" &&
	grep -q '"status": *421' "$T/body" && ok || fail "Host: evil.example.com got $(head -c 300 "$T/body")"
[ "$(get / -H 'Host: evil.example.com:8080')" = 421 ] && grep -q 'allow-host' "$T/body" && ok || fail "the page for another Host"
for h in "localhost:9000" "LOCALHOST" "127.0.0.1:$PORT" "10.1.2.3" "[::1]:8080" "$(hostname)" "localhost."; do
	[ "$(get /api/runs -H "Host: $h")" = 200 ] && ok || fail "Host: $h refused ($(head -c 200 "$T/body"))"
done
for h in "localhost:80:80" "::1" "[::1" "a b" "localhost:x" "profsvc.example"; do
	[ "$(get /api/runs -H "Host: $h")" != 200 ] && ok || fail "Host: $h answered"
done
[ "$(get /api/runs -H 'Host:' -0)" = 200 ] && ok || fail "a request with no Host (HTTP/1.0) refused"
"$PROFDB" serve --listen 127.0.0.1:0 --allow-host profsvc.example --allow-host Other.Example 2>"$T/serve-ah.log" &
AH=$!
for _ in $(seq $((100 * SLOW))); do grep -q 'serving' "$T/serve-ah.log" && break; sleep 0.1; done
AHPORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve-ah.log" | head -1 | cut -d: -f2)
for h in profsvc.example:8080 other.example evil.example; do
	code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -H "Host: $h" "http://127.0.0.1:${AHPORT:-1}/api/runs")
	want=200; [ "$h" = evil.example ] && want=421
	[ "$code" = "$want" ] && ok || fail "--allow-host: Host $h got $code, want $want"
done
kill $AH; wait $AH 2>/dev/null
# no --access-log on a terminal-style stderr: no line per request
! grep -q ' GET /api/runs ' "$T/serve-ah.log" && ok || fail "requests logged without --access-log: $(cat "$T/serve-ah.log")"
# --access-log: one line per request, when its reply has gone (a stream's
# when it ends), the client's path escaped
"$PROFDB" serve --listen 127.0.0.1:0 --access-log 2>"$T/serve-al.log" &
AL=$!
for _ in $(seq $((100 * SLOW))); do grep -q 'serving' "$T/serve-al.log" && break; sleep 0.1; done
ALURL="http://127.0.0.1:$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve-al.log" | head -1 | cut -d: -f2)"
curl -s --max-time 5 -o "$T/al-runs" "$ALURL/api/runs"
curl -s --max-time 5 -I -o /dev/null "$ALURL/runs/1"
curl -s --max-time 5 -o /dev/null "$ALURL/no%1b%5b2Jpe"
curl -s --max-time 2 -o "$T/al-ev" "$ALURL/api/events"
kill $AL; wait $AL 2>/dev/null
grep -Eq "^profdb: 127\.0\.0\.1 GET /api/runs 200 $(stat -c %s "$T/al-runs") bytes [0-9.]+ ms$" "$T/serve-al.log" && ok ||
	fail "--access-log: no line for GET /api/runs with its size: $(cat "$T/serve-al.log")"
grep -Eq '^profdb: 127\.0\.0\.1 HEAD /runs/1 200 0 bytes ' "$T/serve-al.log" && ok || fail "--access-log: HEAD: $(cat "$T/serve-al.log")"
grep -qF 'GET /no\x1b[2Jpe 404 ' "$T/serve-al.log" && ! grep -q $'\033' "$T/serve-al.log" && ok ||
	fail "--access-log: the client's path not escaped: $(cat -v "$T/serve-al.log")"
grep -Eq "^profdb: 127\.0\.0\.1 GET /api/events 200 $(stat -c %s "$T/al-ev") bytes [0-9]{4,}\.[0-9] ms$" "$T/serve-al.log" && ok ||
	fail "--access-log: the event stream's line (its bytes, over a second): $(cat "$T/serve-al.log")"
expect 2 "at most 16 names" -- "$PROFDB" serve $(for i in $(seq 17); do printf -- '--allow-host h%d ' "$i"; done)

# --- a live guest: the event stream, watch, and the browser ------------------------
DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || { fail "create"; finish test_serve; exit 1; }
HP="$FIX/phases/phases-hd-i0.01.hp"
NS=$(grep -c BEGIN_SAMPLE "$HP")
( "$STUB" --mode halvm --domid "$DOM" --prof "$FIX/phases/phases-p-hc.prof" --hp "$HP" --pace 60 -q >"$T/stub.log" 2>&1
  echo "stub exit $?" >>"$T/stub.log"; sleep 1; "$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null ) &
GUEST=$!
for _ in $(seq 50); do [ "$(get /api/runs/2 >/dev/null; sqlite3 :memory: "select json_extract(readfile('$T/body'), '\$.state')")" = running ] && break; sleep 0.1; done
LIVE=2
"$PROFDB" watch $LIVE >"$T/watch.txt" 2>&1 &
WATCH=$!
"$PROFDB" watch $LIVE --json -n 3 >"$T/watch.json" 2>&1 &
WATCHJ=$!
# and on a terminal of its own (100 x 30), the top-like view
python3 "$S/tests/pty_run.py" "$T/watch.tty" 100 30 $((120 * SLOW)) -- "$PROFDB" watch $LIVE &
WATCHT=$!
timeout $((SLOW > 1 ? 10 : 3)) curl -sN "$URL/api/runs/$LIVE/events" >"$T/ev.txt"
grep -q '^event: heap' "$T/ev.txt" && ok || fail "event stream: no heap event: $(head -c 300 "$T/ev.txt")"
[ "$(grep -c '^event: samples' "$T/ev.txt")" -ge 3 ] && ok || fail "event stream: fewer than 3 sample events in 3 s: $(grep -c '^event:' "$T/ev.txt") events"
if [ $browser = yes ]; then
	out=$(node "$S/tests/peers/serve_browser.cjs" "$NM" "$URL" $LIVE $EVIL "$T" 2>&1)
	echo "$out" | grep '^FAIL' | while read -r line; do echo "$line" >&2; done
	echo "$out" | tail -1
	echo "$out" | grep -q '^browser: [0-9]* checks, 0 failed' && ok || fail "the browser checks (above)"
fi
wait $GUEST
grep -q 'stub exit 0' "$T/stub.log" && ok || fail "the live guest failed: $(cat "$T/stub.log")"
for _ in $(seq 100); do kill -0 $WATCH 2>/dev/null || break; sleep 0.1; done
kill -0 $WATCH 2>/dev/null && { fail "watch did not exit when the run ended"; kill $WATCH; } || ok
wait $WATCH && ok || fail "watch exited $?"
[ "$(grep -c '^sample ' "$T/watch.txt")" = "$NS" ] && ok || fail "watch printed $(grep -c '^sample ' "$T/watch.txt") sample lines, want $NS"
tail -1 "$T/watch.txt" | grep -q "run $LIVE ended: complete" && ok || fail "watch's last line: $(tail -1 "$T/watch.txt")"
# --json: a JSON object a line, each sample once in order with at most 3
# bands, then the run object at its end
wait $WATCHJ && ok || fail "watch --json exited $?"
python3 - "$T/watch.json" "$NS" "$LIVE" <<'PY' && ok || fail "watch --json: $(head -c 400 "$T/watch.json")"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
samples = [d["sample"] for d in docs[:-1]]
assert [s["index"] for s in samples] == list(range(int(sys.argv[2]))), "sample indexes"
assert all(len(s["bands"]) <= 3 and s["total"] >= sum(b["bytes"] for b in s["bands"]) for s in samples)
assert any(len(s["bands"]) == 3 for s in samples), "no sample with 3 bands"
assert all(s["bands"][i]["bytes"] >= s["bands"][i + 1]["bytes"] for s in samples for i in range(len(s["bands"]) - 1))
end = docs[-1]["end"]
assert end["run_id"] == int(sys.argv[3]) and end["state"] == "complete", end
PY
timeout $((5 * SLOW)) curl -sN "$URL/api/runs/$LIVE/events" >"$T/ev2.txt"
grep -q '^event: end' "$T/ev2.txt" && ok || fail "an ended run's stream does not end"
status 200 "/runs/$LIVE"
grep -q 'id="cost-centres"' "$T/body" && ok || fail "the ended run's page has no cost centres"
get "/runs/$LIVE/hp" >/dev/null; same "$T/body" "$HP"
# a guest that dies half-way (run 3): an open stream says so, and the page too
sed 's/live-guest/crash-guest/' "$T/g.cfg" >"$T/c.cfg"
CDOM=$("$BACKEND" create --platform sim "$T/c.cfg") || fail "create crash-guest"
"$STUB" --mode halvm --domid "$CDOM" --prof "$FIX/phases/phases-p-hc.prof" --hp "$HP" --pace 60 \
	--crash-at $(($(wc -c <"$HP") / 2)) -q >"$T/crash-stub.log" 2>&1 &
CSTUB=$!
timeout $((30 * SLOW)) curl -sN "$URL/api/runs/3/events" >"$T/ev3.txt" &
CURL3=$!
{ wait $CSTUB; } 2>/dev/null # killed at --crash-at, its domain with it
"$XS" destroy --dir "$XENSIM_DIR" "$CDOM" >/dev/null 2>&1
wait $CURL3
grep -q '^event: samples' "$T/ev3.txt" && grep -A1 '^event: end' "$T/ev3.txt" | grep -q '"state": *"crashed"' && ok ||
	fail "the crashed guest's stream: $(grep -A1 '^event: end' "$T/ev3.txt"; tail -c 300 "$T/ev3.txt")"
status 200 /runs/3
grep -q '<td>state</td><td>crashed</td>' "$T/body" && ok || fail "run 3's page does not say crashed: $(grep -o '<section id="facts">.\{0,600\}' "$T/body")"
# the terminal view: redrawn as samples arrived (their count rising
# frame by frame to all of them), the largest bands with a sparkline each,
# nothing wider than the terminal, and no escape sequence but its own
wait $WATCHT && ok || fail "watch on a terminal exited $?: $(tail -c 300 "$T/watch.tty" | od -c | tail -5)"
python3 - "$T/watch.tty" "$NS" "$LIVE" <<'PY' && ok || fail "watch on a terminal: $(tail -c 600 "$T/watch.tty")"
import re, sys
raw = open(sys.argv[1], 'rb').read().decode('utf-8').replace('\r\n', '\n')
ns, run = int(sys.argv[2]), sys.argv[3]
CLEAR = '\x1b[H\x1b[2J'
frames = raw.split(CLEAR)[1:]
assert re.search(r'[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]', ''.join(frames)) is None, 'an escape or control besides the redraw'
counts = [int(m.group(1)) for f in frames for m in [re.search(r'^(\d+) samples', f, re.M)] if m]
assert len(counts) == len(frames) and len(frames) >= 3, '%d frames, %d with a sample count' % (len(frames), len(counts))
assert counts == sorted(counts) and len(set(counts)) >= 3, 'sample counts by frame: %s' % counts
last = frames[-1]
assert counts[-1] == ns and last.rstrip().endswith('run %s ended: complete' % run), 'the last frame: %r' % last[-300:]
bands = [l for l in last.split('\n') if re.search('[\u2581-\u2588]', l)]
assert 3 <= len(bands) <= 12, '%d band lines with a sparkline' % len(bands)
assert re.search(r' total +heap now, by band', last), 'no total line'
assert all(len(l) <= 100 for f in frames for l in f.split('\n')), 'a line wider than the terminal'
PY
# a finished run with hostile names: one frame, nothing of the names' escapes
python3 "$S/tests/pty_run.py" "$T/watch-evil.tty" 80 24 $((20 * SLOW)) -- "$PROFDB" watch $EVIL && ok ||
	fail "watch $EVIL on a terminal exited $?"
python3 - "$T/watch-evil.tty" <<'PY' && ok || fail "watch of the hostile run: $(od -c "$T/watch-evil.tty" | head -20)"
import re, sys
raw = open(sys.argv[1], 'rb').read().decode('utf-8', 'strict').replace('\r\n', '\n')
rest = raw.split('\x1b[H\x1b[2J')
assert len(rest) == 2 and rest[0] == '', 'not one frame'
assert re.search('[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]', rest[1]) is None, 'a control, C1 or bidi character of the guest reached the terminal'
assert 'ended: complete' in rest[1]
PY
# the catalogue's filters filter (run 1 imported, run 2 the live guest's, run 3 crashed)
rows() { get "$1" >/dev/null; grep -o 'data-run="[0-9]*"' "$T/body" | tr -dc '0-9\n' | tr '\n' ' '; }
for f in "name=live-*|2 " "name=nobody|" "state=complete|1 2 " "state=crashed|3 " "state=running|" \
	"since=$MID|2 3 " "since=2099-01-01|" "since=1h|1 2 3 " "name=live-guest&state=complete&since=$MID|2 " "limit=1|3 "; do
	got=$(rows "/?${f%%|*}")
	[ "$got" = "${f#*|}" ] && ok || fail "catalogue /?${f%%|*}: runs '$got', want '${f#*|}'"
done
get "/api/runs?name=live-*&state=complete" >/dev/null
[ "$(python3 -c 'import json,sys; print([r["run_id"] for r in json.load(open(sys.argv[1]))["runs"]])' "$T/body")" = "[2]" ] &&
	ok || fail "/api/runs?name=live-*: $(head -c 300 "$T/body")"
expect 1 "no run 999" -- "$PROFDB" watch 999
expect 2 "" -- "$PROFDB" watch

# --- /healthz and /metrics (Prometheus's text format): serve's, the store's, the backend's
status 200 /healthz
[ "$(cat "$T/body")" = ok ] && ok || fail "/healthz: $(cat "$T/body")"
status 200 /metrics
grep -qi '^content-type: text/plain; version=0.0.4' "$T/hdr" && ok || fail "/metrics content type: $(cat "$T/hdr")"
cp "$T/body" "$T/metrics.txt"
metric() { awk -v k="$1" '$1 == k { print $2 }' "$T/metrics.txt"; }
[ "$(metric profsvc_backend_reachable)" = 1 ] && ok || fail "/metrics: the backend not reached: $(grep reachable "$T/metrics.txt")"
[ "$(metric profsvc_backend_batches_total)" -gt 0 ] 2>/dev/null && ok || fail "/metrics: no batches from the backend"
[ "$(metric profsvc_backend_commit_seconds_count)" = "$(metric 'profsvc_backend_commit_seconds_bucket{le="+Inf"}')" ] &&
	[ "$(metric profsvc_backend_commit_seconds_count)" -gt 0 ] && ok || fail "/metrics: the commit histogram"
ncomplete=$("$PROFDB" query runs --json --state complete | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
[ "$(metric 'profsvc_store_runs{state="complete"}')" = "$ncomplete" ] && ok ||
	fail "/metrics: runs complete $(metric 'profsvc_store_runs{state="complete"}'), query says $ncomplete"
[ "$(metric 'profsvc_serve_replies_total{code="404"}')" -gt 0 ] 2>/dev/null && ok || fail "/metrics: the 404s sent are not counted"
# every sample line is NAME{labels} VALUE of a family declared with HELP and TYPE
python3 - "$T/metrics.txt" <<'PY' && ok || fail "/metrics is not Prometheus's text format"
import re, sys
typed, bad = set(), []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"# TYPE ([a-z_:][a-z0-9_:]*) (counter|gauge|histogram)$", line)
    if m:
        typed.add(m.group(1)); continue
    if line.startswith("# HELP "):
        continue
    m = re.match(r'([a-z_:][a-z0-9_:]*)(\{[a-z_]+="[^"\\\n]*"(,[a-z_]+="[^"\\\n]*")*\})? (-?[0-9.e+]+|\+Inf)$', line)
    base = m and re.sub(r"_(bucket|sum|count)$", "", m.group(1))
    if not m or (m.group(1) not in typed and base not in typed):
        bad.append(line)
if bad:
    print("\n".join(bad[:5])); sys.exit(1)
PY
if need promtool; then
	promtool check metrics <"$T/metrics.txt" >"$T/promtool.txt" 2>&1 && ok || fail "promtool check metrics: $(head -5 "$T/promtool.txt")"
fi
# a damaged store: /healthz says so (503), /metrics still answers
printf 'not a database' >"$T/garbage.db"
"$PROFDB" --db "$T/garbage.db" serve --listen 127.0.0.1:0 2>"$T/serve-g.log" &
GS=$!
for _ in $(seq $((100 * SLOW))); do grep -q 'serving' "$T/serve-g.log" && break; sleep 0.1; done
GURL="http://127.0.0.1:$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve-g.log" | head -1 | cut -d: -f2)"
[ "$(curl -s --max-time $((10 * SLOW)) -o "$T/gh" -w '%{http_code}' "$GURL/healthz")" = 503 ] && grep -q "not a profsvc database" "$T/gh" && ok ||
	fail "/healthz of a damaged store: $(cat "$T/gh")"
code=$(curl -s --max-time $((10 * SLOW)) -o "$T/gm" -w '%{http_code}' "$GURL/metrics")
grep -qx 'profsvc_store_readable 0' "$T/gm" && ok || fail "/metrics of a damaged store: $code $(head -c 300 "$T/gm"; tail -3 "$T/serve-g.log")"
kill $GS; wait $GS 2>/dev/null
# Prometheus itself scrapes it (Debian's prometheus; required under CI)
if need prometheus; then
	PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: profsvc\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
		"$PORT" >"$T/prom.yml"
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" --web.listen-address="127.0.0.1:$PPORT" \
		>"$T/prom.log" 2>&1 &
	PROM=$!
	scraped() {
		curl -s --max-time 2 "http://127.0.0.1:$PPORT/api/v1/query?query=profsvc_store_runs%7Bstate%3D%22complete%22%7D" >"$T/prom.json" &&
			python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["data"]["result"]; sys.exit(not r or r[0]["value"][1] != sys.argv[2])' \
				"$T/prom.json" "$ncomplete"
	}
	for _ in $(seq $((300 * SLOW))); do scraped && break; sleep 0.1; done
	scraped && ok || fail "prometheus did not scrape profsvc_store_runs: $(cat "$T/prom.json"; tail -5 "$T/prom.log")"
	curl -s --max-time 2 "http://127.0.0.1:$PPORT/api/v1/targets" | grep -q '"health":"up"' && ok ||
		fail "prometheus's target is not up: $(tail -5 "$T/prom.log")"
	kill $PROM; wait $PROM 2>/dev/null
elif [ "${CI:-}" = true ]; then
	fail "prometheus is not installed (quickstart installs it)"
fi

# --- the backend restarts, the store is damaged and replaced: serving goes on ----------
"$BACKEND" stop >/dev/null; "$BACKEND" start --platform sim --db "$PROFSVC_DB" >/dev/null
status 200 /
"$BACKEND" stop >/dev/null
# the same guest twice more (runs 4 and 5): a run's page offers it against
# the earlier runs of that name, the newest first, and that comparison is served
import live-guest "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"
import live-guest "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"
status 200 /runs/5
offers=$(grep -o '<a href="/compare?a=[0-9]*&amp;b=5">against run [0-9]* (' "$T/body" | grep -o 'a=[0-9]*' | tr '\n' ' ')
[ "$offers" = "a=4 a=2 " ] && ok ||
	fail "run 5's page offers '$offers', want runs 4 then 2: $(grep -o '<p class="links">.*' "$T/body" | head -c 600)"
status 200 /runs/4
grep -q '<a href="/compare?a=2&amp;b=4">against run 2 (' "$T/body" && ok || fail "run 4's page offers no comparison with run 2"
grep -q 'against run [135]' "$T/body" && fail "run 4's page offers another guest's or a later run" || ok
status 200 "/compare?a=2&b=4"
grep -q '<section id="compared"><h2>Compared with' "$T/body" && ok || fail "/compare?a=2&b=4 has no comparison"
# the compare page (issue 33): one guest's heap profiles by cost-centre
# stack (runs 6 and 8, the first killed early) and by closure description
# (run 7): the page warns when the kinds differ, and only then; so does the
# report file of the same comparison
import kinds-guest "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-killed-SIGKILL.hp"        # run 6, -hc
import kinds-guest "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp"              # run 7, -hd
import kinds-guest "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-p-hc.hp"                  # run 8, -hc
status 200 "/compare?a=6&b=7"
grep -q 'id="kind-warning"' "$T/body" && grep -q 'by cost-centre stacks (-hc), run 7&#39;s by closure descriptions (-hd)' "$T/body" &&
	ok || fail "/compare?a=6&b=7 (-hc against -hd): no warning that the kinds differ: $(grep -o '<section id="compared">.\{0,900\}' "$T/body")"
for p in "/compare?a=6&b=8" "/compare?a=4&b=5"; do
	status 200 "$p"
	grep -q 'id="kind-warning"' "$T/body" && fail "$p: a warning that the kinds differ, for two of one kind" || ok
	sections=$(grep -o '<section [^>]*id="[a-z-]*"' "$T/body" | grep -o 'id="[a-z-]*"' | tr '\n' ' ')
	[ "$sections" = 'id="compared" id="flame-diff" id="heap-compare" id="changes" ' ] && ok ||
		fail "$p: sections $sections, want what was compared, the flame graph, the heaps, the movers"
done
# the catalogue offers each run with an earlier run of its guest that
# comparison, the earlier run as a (catalogue.js's table: in the browser)
get / >/dev/null
links=$(grep -o '<tr data-run="[0-9]*".*</tr>' "$T/body" | sed -n 's/^<tr data-run="\([0-9]*\)".*href="\/compare?a=\([0-9]*\)&amp;b=\([0-9]*\)".*/\1:\2-\3/p' | tr '\n' ' ')
[ "$links" = "4:2-4 5:4-5 7:6-7 8:7-8 " ] && ok || fail "the catalogue's compare links: '$links', want 4:2-4 5:4-5 7:6-7 8:7-8"
"$PROFDB" report 7 --against 6 -o "$T/kinds.html" 2>"$T/err" && grep -q 'id="kind-warning"' "$T/kinds.html" &&
	grep -q 'id="heap-a"' "$T/kinds.html" && ok || fail "report 7 --against 6: not the compare page: $(cat "$T/err")"
if [ $browser = yes ]; then
	# at 1400x1000 and on a phone (390x844): the sections' order, one
	# colour per band in both heaps, the kind warning, the catalogue's links
	out=$(node "$S/tests/peers/serve_browser.cjs" "$NM" "$URL" compare "$T" 4 5 6 8 6 7 2>&1)
	echo "$out" | grep '^FAIL' | while read -r line; do echo "$line" >&2; done
	echo "$out" | tail -1
	echo "$out" | grep -q '^browser: [0-9]* checks, 0 failed' && ok || fail "the compare page in the browser (above)"
	# the pages at 1400x1000 and on a phone: the top cost centres first (run
	# 4's first row as profdb top's), not zoomed, nothing past the screen's
	# edge, flame rows a finger can tap, a link to the catalogue, sizes with units
	out=$(node "$S/tests/peers/pages_browser.cjs" "$NM" "$URL" "$T" "$("$PROFDB" top 4 -n 1 --json)" 4 7 -- 4 5 2>&1)
	echo "$out" | grep '^FAIL' | while read -r line; do echo "$line" >&2; done
	echo "$out" | tail -1
	echo "$out" | grep -q '^pages: [0-9]* checks, 0 failed' && ok || fail "the pages on a desktop and a phone (above)"
fi
# another process asks for the store in exclusive locking mode, to write:
# while serve's readers are open, their shared locks keep it out (it gets
# "database is locked"); if it gets in (no reader open at that instant),
# it holds the store mid-write (the sqlite3 shell then cannot read it) and
# a read-only reader keeps serving the last committed state.  Either way
# serve answers, with nothing of the uncommitted write.
python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0.2)
try:
    c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')
    c.execute(\"INSERT INTO meta(key, value) VALUES ('test-lock', '')\")  # a write takes the lock; rolled back
except sqlite3.OperationalError as e:
    open(sys.argv[3], 'w').write(str(e)); sys.exit(0)
open(sys.argv[2], 'w').close(); time.sleep(9); c.execute('ROLLBACK')" "$PROFSVC_DB" "$T/locked" "$T/kept-out" &
LOCKER=$!
for _ in $(seq 50); do [ -e "$T/locked" ] || [ -e "$T/kept-out" ] && break; sleep 0.1; done
if [ -e "$T/locked" ]; then
	sqlite3 -cmd ".timeout 200" "$PROFSVC_DB" "select 1 from runs limit 1" >/dev/null 2>&1 &&
		fail "the lock does not hold (the sqlite3 shell read the store)" || ok
else
	grep -q "database is locked" "$T/kept-out" 2>/dev/null && ok || fail "the exclusive writer: neither in nor kept out: $(cat "$T/kept-out" 2>/dev/null)"
fi
status 200 /
grep -q 'data-run="2"' "$T/body" && ! grep -q 'test-lock' "$T/body" && ok || fail "a locked store: the catalogue: $(grep -o 'class="error"[^<]*' "$T/body")"
status 200 "/api/runs/$LIVE"
wait $LOCKER
cp "$PROFSVC_DB" "$T/saved.db"
mv "$PROFSVC_DB" "$T/aside.db"
status 503 /
grep -q "$PROFSVC_DB" "$T/body" && ok || fail "no store: the error page does not name it: $(cat "$T/body")"
head -c 8192 /dev/urandom >"$PROFSVC_DB"
status 503 /api/runs
grep -q '"error"' "$T/body" && ok || fail "a damaged store: no JSON error"
status 503 "/runs/$LIVE"
mv "$T/aside.db" "$PROFSVC_DB"
status 200 "/runs/$LIVE"
# --- the catalogue page by page: a bounded limit, before= for older runs
[ "$(get '/api/runs?limit=5001')" = 400 ] && grep -q 'from 1 to 5000' "$T/body" && ok || fail "limit=5001: $(head -c 200 "$T/body")"
[ "$(get '/api/runs?before=x1')" = 400 ] && ok || fail "before=x1 accepted"
[ "$(get '/api/runs?limit=100000')" = 400 ] && ok || fail "limit=100000 accepted"
"$MKDISK" --prof "$FIX/phases/phases-p-hc.prof" "$T/page.disk" >/dev/null
for i in 1 2 3 4; do "$PROFDB" import-disk --name "page-$i" "$T/page.disk" >/dev/null || fail "import page-$i"; done
get /api/runs >/dev/null && cp "$T/body" "$T/all.json"
get '/api/runs?limit=2' >/dev/null && cp "$T/body" "$T/p1.json"
python3 "$S/tests/json_shapes.py" api_runs "$T/p1.json" && ok || fail "a page of /api/runs not as docs/json.md says"
B1=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["before"])' "$T/p1.json")
get "/api/runs?limit=2&before=$B1" >/dev/null && cp "$T/body" "$T/p2.json"
python3 - "$T/all.json" "$T/p1.json" "$T/p2.json" <<'PY' && ok || fail "paging /api/runs: $(cat "$T/p1.json" | head -c 300)"
import json, sys
ids = lambda f: [r["run_id"] for r in json.load(open(f))["runs"]]
a, p1, p2 = ids(sys.argv[1]), ids(sys.argv[2]), ids(sys.argv[3])
assert len(a) >= 4, a
assert p1 == a[-2:] and p2 == a[-4:-2], (a, p1, p2)
assert json.load(open(sys.argv[1]))["before"] is None
PY
[ "$(get '/?limit=2&name=*')" = 200 ] && grep -q "id=\"older\" href=\"/?before=$B1&amp;name=\*&amp;limit=2\"" "$T/body" && ok ||
	fail "the catalogue page's link to older runs: $(grep -o '<p class="older">.*</p>' "$T/body")"

kill -0 $SERVE_PID && ok || fail "serve died"

# --- stopping -------------------------------------------------------------------------
kill -TERM $SERVE_PID
for _ in $(seq 300); do kill -0 $SERVE_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $SERVE_PID 2>/dev/null && fail "serve did not stop on SIGTERM" || ok
wait $SERVE_PID && ok || fail "serve exited $? on SIGTERM${VG:+ (9: valgrind found errors): $(grep -v 'serving\|stopping' "$T/serve.log" | head -40)}"
SERVE_PID=
exec 4<&- 5<&-
# the systemd unit make install puts beside it: systemd's own check
if need systemd-analyze; then
	sed -e "s|%BINDIR%|$(cd "$B" && pwd)|" -e 's|%DOCDIR%|/usr/share/doc/profsvc|' -e 's|%LOCALSTATEDIR%|/var|' \
		"$S/systemd/profdb-serve.service.in" >"$T/profdb-serve.service"
	systemd-analyze verify "$T/profdb-serve.service" >"$T/verify" 2>&1 && ! [ -s "$T/verify" ] && ok ||
		fail "systemd-analyze verify profdb-serve.service: $(cat "$T/verify")"
fi
expect 2 "not ADDR:PORT" -- "$PROFDB" serve --listen nonsense
expect 2 "" -- "$PROFDB" serve extra
finish test_serve
