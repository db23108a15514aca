#!/usr/bin/env bash
# test_shared.sh - a store and a backend shared with a group (README, "A
# store shared with a group"), seen from a member of the group who is
# hostile: user nobody in group nogroup, the group of the store's and the
# run directory (2750 root:nogroup), beside root and a guest on xensim.
#   - the control socket: nobody's flood of connections never turns root's
#     `profile-backend status` (60 calls) or end-run away; nobody's own
#     clients past its share are evicted with a line that says so, and its
#     `status` says it was turned away rather than failing silently;
#     `profdb delete --force` keeps a running run whose end-run a backend
#     refused.
# Needs root, setpriv and group nogroup; without them it is skipped (77),
# except under CI=true, where it fails.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"

skip() {
	echo "test_shared: $* (a root shell runs it)"
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
[ "$(id -u)" = 0 ] || skip "not root"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
getent group nogroup >/dev/null && id nobody >/dev/null 2>&1 || skip "no user nobody or group nogroup"

with_xensim
# nobody walks to the shared directories, and runs copies of the programs
# (the build tree may be in root's 0700 home)
chmod 711 "$T"
SH="$T/shared"
mkdir -p "$SH" "$T/bin" "$T/nb"
chgrp nogroup "$SH" "$PROFSVC_RUN_DIR" && chmod 2750 "$SH" "$PROFSVC_RUN_DIR"
chmod 0777 "$T/nb"
cp "$PROFDB" "$BACKEND" "$T/bin/" && chmod 0755 "$T/bin" "$T/bin/"*
export PROFSVC_DB="$SH/p.db"
as_nobody() { (cd "$T/nb" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
# a python3 nobody may run (the PATH's may be in root's home)
NB_PY=/usr/bin/python3
[ -x "$NB_PY" ] || NB_PY=$(command -v python3)
NB_PROFDB="$T/bin/profdb"
NB_BACKEND="$T/bin/profile-backend"

start_xensim
start_backend

# flood SOCKET SECONDS: connections to SOCKET as fast as they go, 64 held
# open and never asking anything, for SECONDS; prints how many it made
cat >"$T/flood.py" <<'PY'
import socket, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
held, n, end = [], 0, time.time() + secs
while time.time() < end:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(0.5)
    try:
        s.connect(path)
    except OSError:
        s.close()
        time.sleep(0.001)
        continue
    n += 1
    held.append(s)
    if len(held) > 64:
        held.pop(0).close()
print(n)
PY
# ask SOCKET LINE: one request, its whole answer on stdout
cat >"$T/ask.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])  # blocking: a full backlog is waited for, as profile-backend does
s.settimeout(15)
try:
    s.sendall(sys.argv[2].encode() + b"\n")
except OSError:
    pass
out = b""
while True:
    try:
        b = s.recv(65536)
    except OSError:
        break
    if not b:
        break
    out += b
sys.stdout.write(out.decode(errors="replace"))
PY
chmod 0644 "$T/flood.py" "$T/ask.py"
CTL="$PROFSVC_RUN_DIR/backend.sock"

# --- the control socket: a member's flood never turns root away ---------------------------
[ "$(stat -c '%a %G' "$CTL")" = "660 nogroup" ] && ok || fail "backend.sock: $(stat -c '%a %G' "$CTL") (want 660 nogroup)"
as_nobody "$NB_PY" "$T/flood.py" "$CTL" 25 >"$T/flood.n" 2>&1 &
FLOOD=$!
sleep 0.5
bad=0 silent=0
for i in $(seq 60); do
	"$BACKEND" status >"$T/st.out" 2>"$T/st.err"
	rc=$?
	if [ $rc != 0 ] || ! head -1 "$T/st.out" | grep -q "^profile-backend "; then
		bad=$((bad + 1))
		[ -s "$T/st.err" ] || silent=$((silent + 1))
		echo "status call $i: exit $rc: $(head -c 300 "$T/st.err")"
	fi
done
[ $bad = 0 ] && ok || fail "root's profile-backend status failed $bad times of 60 ($silent without a word) beside nobody's flood"
bad=0
for i in $(seq 20); do
	python3 "$T/ask.py" "$CTL" "end-run 999999 $PROFSVC_DB" >"$T/er.out" 2>&1
	grep -q "^not here: run 999999 is not being captured" "$T/er.out" || { bad=$((bad + 1)); echo "end-run $i: $(cat "$T/er.out")"; }
done
[ $bad = 0 ] && ok || fail "root's end-run went unanswered $bad times of 20 beside nobody's flood"
# nobody's own status, among its flood: answered, or turned away saying so
silent=0
for i in $(seq 20); do
	as_nobody "$NB_BACKEND" status >"$T/st.out" 2>"$T/st.err"
	rc=$?
	if [ $rc != 0 ] && ! grep -q "turned this request away: \(evicted\|refused\): " "$T/st.err"; then
		silent=$((silent + 1))
		echo "nobody's status $i: exit $rc: $(head -c 300 "$T/st.err")"
	fi
done
[ $silent = 0 ] && ok || fail "nobody's status failed $silent times of 20 without saying it was turned away"
wait $FLOOD
[ "$(cat "$T/flood.n")" -gt 100 ] && ok || fail "the flood made $(cat "$T/flood.n") connections"
# past its share, nobody's oldest client is evicted, and told
cat >"$T/share.py" <<'PY'
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    held.append(s)
    time.sleep(0.05)
try:
    print(held[0].recv(512).decode(errors="replace").strip())
except OSError as e:
    print("no line:", e)
PY
chmod 0644 "$T/share.py"
as_nobody "$NB_PY" "$T/share.py" "$CTL" 5 >"$T/share.out" 2>&1
grep -q "^evicted: user 65534 opened another connection (at most 4 at once per user" "$T/share.out" && ok ||
	fail "nobody's oldest of 5 clients was not told it was evicted: $(cat "$T/share.out")"
python3 "$T/share.py" "$CTL" 5 >"$T/share.out" 2>&1
grep -q "^no line: timed out" "$T/share.out" && ok || fail "root's oldest of 5 clients was evicted: $(cat "$T/share.out")"

# --- delete --force keeps a running run whose end-run a backend refused ---------------------
guest_cfg kept-guest
DOM=$("$BACKEND" create --platform sim "$T/g.cfg") || fail "create kept-guest"
( "$STUB" --mode halvm --domid "$DOM" --prof "$FIX/phases/phases-p-hc.prof" --hp "$FIX/phases/phases-hd-i0.01.hp" \
	--pace 40 -q >"$T/stub.log" 2>&1; echo "stub exit $?" >>"$T/stub.log" ) &
GUEST=$!
RUN=
for _ in $(seq 100); do
	RUN=$(sqlite3 "$PROFSVC_DB" "select run_id from runs where name = 'kept-guest' and state = 'running'" 2>/dev/null)
	[ -n "$RUN" ] && break; sleep 0.1
done
[ -n "$RUN" ] && ok || fail "the guest's run never appeared"
# a backend that turns every request away, in a run directory of its own
mkdir -p "$T/fake"
python3 - "$T/fake/backend.sock" >"$T/fake.log" 2>&1 <<'PY' &
import os, socket, sys
srv = socket.socket(socket.AF_UNIX)
srv.bind(sys.argv[1])
srv.listen(8)
while True:
    c, _ = srv.accept()
    c.settimeout(2)
    try:
        c.recv(4096)
        c.sendall(b"evicted: the control socket is full and root needs the room; try again\n")
    except OSError:
        pass
    c.close()
PY
FAKE=$!
at_exit "kill $FAKE 2>/dev/null"
for _ in $(seq 50); do [ -S "$T/fake/backend.sock" ] && break; sleep 0.1; done
expect 1 "run $RUN not deleted: the backend did not close its devices first (the backend: evicted: " -- \
	env PROFSVC_RUN_DIR="$T/fake" "$PROFDB" delete --force "$RUN"
[ "$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $RUN")" = running ] && ok ||
	fail "delete --force went on without its end-run: run $RUN is '$(sqlite3 "$PROFSVC_DB" "select state from runs where run_id = $RUN")'"
kill $FAKE 2>/dev/null
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null 2>&1
wait $GUEST 2>/dev/null

finish test_shared
