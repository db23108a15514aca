#!/usr/bin/env bash
# test_systemd.sh - the installed units under a real systemd: this build is
# installed (make install DESTDIR) into a copy-on-write overlay of this
# machine's root, and systemd boots in it as PID 1 of its own PID, mount
# and network namespaces (a container, as systemd-nspawn would make, without
# nspawn's need for a system bus; systemd brings up its own loopback).  Inside, the units run exactly as installed, but
# for a drop-in that points profile-backend at xensim (this machine has no
# Xen; the unit's ConditionPathExists=/proc/xen/capabilities is reset too):
#   - profile-backend.service is Type=notify: `systemctl start` returns once
#     it serves (READY=1), with its STATUS= text; ExecStartPre makes the
#     user profsvc and the store and run directories (2750 root:profsvc)
#     from the sysusers and tmpfiles entries; the store's files 0600, which
#     user profsvc may not open; read.sock and backend.sock 0660 profsvc;
#   - profdb-serve.service starts after it and serves the store on
#     127.0.0.1:8080 as user profsvc, through the backend's read service,
#     while a guest writes (the run live, then complete); with the backend
#     stopped it says to start it; profsvc may ask the control socket for
#     status, never end a run;
#   - the journal has the backend's lines with their fields: journalctl
#     DOMID=N and RUN=N find the guest's events, at notice; profdb serve's
#     access log is there too, one entry per request with HTTP_* fields;
#   - Restart=on-failure: a SIGKILLed backend is restarted by systemd in
#     the middle of a guest's writes, and the guest's profiles are still
#     exported byte for byte (restart without loss, under systemd);
#   - a start that fails (the store is a directory) fails the unit, and the
#     journal says why at err;
#   - the documented --sync drop-in (docs/examples/sync.conf) pushes a run
#     to a PostgreSQL on 127.0.0.1 with password authentication;
#   - profsvc-prune.service applies the retention policy of its file in
#     /etc/default, and its timer enables;
#   - systemctl stop ends both cleanly; enable/disable follow [Install].
# Needs root, unshare(1) and overlayfs; without them it is skipped (77),
# except under CI=true, where it fails.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
B=$(cd "$B" && pwd)
S=$(cd "$S" && pwd)

skip() {
	echo "test_systemd: $* (a root shell on Linux with overlayfs runs it)"
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
[ "$(id -u)" = 0 ] || skip "not root"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
[ -x /lib/systemd/systemd ] || skip "no /lib/systemd/systemd (systemd)"
unshare --mount --pid --fork true 2>/dev/null || skip "unshare --mount --pid refused here"

# The configured directories, as make expands them (see test_install.sh).
dirs=$(printf 'print-dirs:\n\t@echo "$(sbindir)|$(bindir)|$(pkglibexecdir)|$(localstatedir)|$(runstatedir)|$(systemdunitdir)|$(prefix)|$(sysconfdir)|$(docdir)"\n' |
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$B" -f Makefile -f - print-dirs) || { echo "cannot read the directories from $B/Makefile"; exit 99; }
IFS='|' read -r sbindir bindir libexec statedir rundir unitdir prefix confdir docdir <<<"$dirs"
simdir=$libexec
"$B/config.status" --config | grep -q -- "--enable-simulators-in-path" && simdir=$bindir
SANITIZED=""
"$B/config.status" --config | grep -q -- "--enable-sanitizers" && SANITIZED=yes

# What runs inside, as a oneshot unit of the booted systemd.  It writes one
# line per check to /profsvc-test/result ("ok ..." or "FAIL ...") and DONE.
mkdir -p "$T/share"
cp "$S/tests/data/ghc/phases/phases-p-hc.prof" "$S/tests/data/ghc/phases/phases-hd-i0.01.hp" "$T/share/"
cat >"$T/share/env" <<EOF
SBIN=$sbindir
BIN=$bindir
SIM=$simdir
DB=$statedir/lib/profsvc/profiles.db
RUNDIR=$rundir/profsvc
CONF=$confdir
DOCDIR=$docdir
EOF
cat >"$T/share/inner.sh" <<'INNER'
#!/bin/bash
# Inside the container: every check against the units as installed.
set -u
. /profsvc-test/env
R=/profsvc-test/result
exec 3>>"$R" >/profsvc-test/inner.log 2>&1
ok()   { echo "ok $*" >&3; }
fail() { echo "FAIL $*" >&3; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; return 1; fi; }
prop() { systemctl show -P "$2" "$1"; }
export XENSIM_DIR=/run/xensim
PROFDB="$BIN/profdb"
api() { python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:8080"+sys.argv[1], timeout=5).read().decode())' "$1"; }
jq_py() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
waitfor() { local n=$1; shift; for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done; return 1; }

# As right after make install, before any reboot: the directories that the
# tmpfiles entry makes at boot are not there yet.
rm -rf "$(dirname "$DB")" "$RUNDIR"
systemctl start profile-backend.service
check "systemctl start profile-backend (Type=notify: returns once READY=1)" test $? = 0
systemctl is-active -q profile-backend.service ||
	{ systemctl status --no-pager -l profile-backend.service; journalctl --no-pager -u profile-backend.service | tail -20; }
check "profile-backend active/running" test "$(prop profile-backend ActiveState)/$(prop profile-backend SubState)" = active/running
check "its STATUS= text reached systemd" test "$(prop profile-backend StatusText)" = "serving 0 devices"
check "ExecStartPre made the user profsvc (sysusers.d)" id profsvc
check "ExecStartPre made the store's directory 2750 root:profsvc" test "$(stat -c '%a %U:%G' "$(dirname "$DB")")" = "2750 root:profsvc"
check "ExecStartPre made the run directory 2750 root:profsvc" test "$(stat -c '%a %U:%G' "$RUNDIR")" = "2750 root:profsvc"
check "the control socket: 0660, group profsvc" test "$(stat -c '%a %G' "$RUNDIR/backend.sock")" = "660 profsvc"
check "the read service's socket: 0660, group profsvc" test "$(stat -c '%a %G' "$RUNDIR/read.sock")" = "660 profsvc"
check "profile-backend status under systemd" "$SBIN/profile-backend" status
check "its main pid is the one systemd tracks" test "$(prop profile-backend MainPID)" = "$(cat "$RUNDIR/profile-backend.pid")"

systemctl start profdb-serve.service
check "systemctl start profdb-serve" test $? = 0
check "profdb-serve is ordered after profile-backend" grep -qw profile-backend.service <<<"$(prop profdb-serve After)"
check "profdb-serve's memory bounded (MemoryMax $(prop profdb-serve MemoryMax))" test "$(prop profdb-serve MemoryMax)" = 1073741824
check "profdb-serve below the backend (Nice $(prop profdb-serve Nice), CPUWeight $(prop profdb-serve CPUWeight))" \
	test "$(prop profdb-serve Nice)" = 10 -a "$(prop profdb-serve CPUWeight)" = 20
check "profdb-serve answers on 127.0.0.1:8080" waitfor 50 api /api/runs

cat >/root/g.cfg <<'CFG'
name = "unit-guest"
kernel = "k"
disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc' ]
CFG
DOM=$("$SBIN/profile-backend" create --platform sim /root/g.cfg)
check "create a guest on xensim" test -n "$DOM"
# Slow enough that it is still writing when the backend is killed below.
"$SIM/frontend-stub" --mode halvm --domid "$DOM" --prof /profsvc-test/phases-p-hc.prof \
	--hp /profsvc-test/phases-hd-i0.01.hp --pace 20 -q >/root/stub.log 2>&1 &
GUEST=$!
live() { api /api/runs | jq_py "[r['state'] for r in d['runs'] if r['name'] == 'unit-guest'] == ['running']" | grep -qx True; }
check "profdb serve shows the guest's run live" waitfor 100 live
RUN=$("$PROFDB" query runs --json | jq_py "[r['run_id'] for r in d['runs'] if r['name'] == 'unit-guest'][0]")
check "the serving STATUS= text counts its disks" waitfor 100 test "$(prop profile-backend StatusText)" = "serving 2 devices"
# The guest has written some heap samples: kill the backend under it.
samples_over() {
	api "/api/runs/$RUN/heap?since=0" >/root/heap.json 2>/root/heap.err
	[ "$(jq_py "len(d['samples'])" </root/heap.json 2>>/root/heap.err)" -gt "$1" ]
}
check "the guest writes heap samples" waitfor 600 samples_over 5 ||
	{ echo "run '$RUN'"; head -c 600 /root/heap.json; cat /root/heap.err; }
OLDPID=$(prop profile-backend MainPID)
systemctl kill -s KILL profile-backend.service
restarted() { [ "$(prop profile-backend NRestarts)" = 1 ] && [ "$(prop profile-backend SubState)" = running ] &&
	[ "$(prop profile-backend MainPID)" != "$OLDPID" ]; }
check "Restart=on-failure: systemd restarted the SIGKILLed backend" waitfor 100 restarted
wait "$GUEST"
check "the guest finished without an I/O error across the restart" test $? = 0
"$SIM/xensim" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null
ended() { "$PROFDB" query runs --json | jq_py "[r['state'] for r in d['runs'] if r['run_id'] == $RUN]" | grep -qx "\['complete'\]"; }
check "the run ended complete" waitfor 100 ended
rm -rf /root/x; mkdir /root/x
"$PROFDB" export "$RUN" --prof /root/x/p.prof --hp /root/x/h.hp >/dev/null
check "the .prof exported byte for byte" cmp -s /root/x/p.prof /profsvc-test/phases-p-hc.prof
check "the .hp exported byte for byte" cmp -s /root/x/h.hp /profsvc-test/phases-hd-i0.01.hp
check "profdb serve shows the run complete" test "$(api "/api/runs/$RUN" | jq_py "d['state']")" = complete
check "profdb serve hands out the .prof byte for byte" cmp -s <(api "/runs/$RUN/prof") /profsvc-test/phases-p-hc.prof

check "profdb serve's /healthz under its unit" test "$(api /healthz)" = ok
check "profdb serve's /metrics reaches the backend from its sandbox" grep -qx 'profsvc_backend_reachable 1' <<<"$(api /metrics)"
# (the data file once a chunk has gone there; this guest's may all be rows)
modes=$(for f in "$DB" "$DB-wal" "$DB-shm" "$DB-data"; do [ "$f" = "$DB-data" ] && [ ! -e "$f" ] || stat -c '%a %U:%G' "$f" 2>&1; done | sort -u)
check "the store's database, -wal, -shm (and data file): 0600 root:profsvc ($modes)" test "$modes" = "600 root:profsvc"
# (exit 0: opened, 1: permission denied, anything else: the check itself failed)
opens() { setpriv --reuid=profsvc --regid=profsvc --clear-groups python3 -c 'import sys
try:
    open(sys.argv[1], "rb")
except PermissionError:
    sys.exit(1)' "$1" 2>/dev/null; }
opened=""
for f in "$DB" "$DB-shm" "$DB-wal"; do opens "$f"; rc=$?; [ $rc = 1 ] || opened="$opened $f($rc)"; done
check "user profsvc may not open the database, its -shm or -wal (opened:${opened:- none})" test -z "$opened"
check "its intake log stays root's alone" test "$(stat -c '%a' "$RUNDIR/$(basename "$DB")-intake" 2>&1)" = 600
check "profdb serve runs with no capability" test "$(prop profdb-serve CapabilityBoundingSet)" = ""
check "profdb serve runs as user profsvc, not root" test "$(ps -o user= -p "$(prop profdb-serve MainPID)")" = profsvc
# The group may ask the backend for status and metrics, never act.
asks() { setpriv --reuid=profsvc --regid=profsvc --clear-groups python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while True:
    b = s.recv(65536)
    if not b: break
    out += b
sys.stdout.write(out.decode())' "$RUNDIR/backend.sock" "$1"; }
check "user profsvc asks the backend's status" grep -q "^profile-backend " <<<"$(asks status)"
check "user profsvc may not end a run through the control socket" grep -q "^not allowed" <<<"$(asks "end-run $RUN")"
check "...and the run is still there" test "$(api "/api/runs/$RUN" | jq_py "d['state']")" = complete
check "profdb serve never failed (NRestarts=0)" test "$(prop profdb-serve NRestarts)" = 0 ||
	journalctl --no-pager -o cat -u profdb-serve.service | tail -40

# The journal: the backend's own fields, as `journalctl DOMID=` users expect.
journalctl --sync 2>/dev/null
J=$(journalctl --no-pager -o cat _SYSTEMD_UNIT=profile-backend.service DOMID="$DOM")
check "journalctl DOMID=$DOM finds the guest's disks connecting" grep -q "dom$DOM xvdp1 run $RUN: connected" <<<"$J"
check "journalctl DOMID=$DOM finds the run's end" grep -q "run $RUN: ended complete" <<<"$J"
check "journalctl RUN=$RUN VDEV=xvdp2 finds that disk" grep -q "dom$DOM xvdp2 run $RUN: connected" \
	<<<"$(journalctl --no-pager -o cat RUN="$RUN" VDEV=xvdp2)"
check "a run's start is at notice (PRIORITY=5)" grep -q "run $RUN: started" \
	<<<"$(journalctl --no-pager -o cat -p notice..notice _SYSTEMD_UNIT=profile-backend.service)"
check "profdb-serve's access log: journalctl HTTP_PATH= HTTP_STATUS= finds the download" \
	grep -q "GET /runs/$RUN/prof 200 " <<<"$(journalctl --no-pager -o cat -u profdb-serve.service HTTP_PATH="/runs/$RUN/prof" HTTP_STATUS=200)"
check "its entries are at info, with the bytes sent" grep -qx "$(stat -c %s /profsvc-test/phases-p-hc.prof)" \
	<<<"$(journalctl --no-pager -n 1 -o json -u profdb-serve.service HTTP_PATH="/runs/$RUN/prof" -p info..info | jq_py "d['HTTP_BYTES']" 2>/dev/null | tail -1)"
check "no error in the backend's journal" test -z "$(journalctl --no-pager -o cat -p err _SYSTEMD_UNIT=profile-backend.service)"
check "the restarted backend says it started again" test "$(journalctl --no-pager -o cat _SYSTEMD_UNIT=profile-backend.service | grep -c 'started: platform sim')" -ge 2

# --sync under the unit: the documented drop-in (TCP allowed, the password
# file handed over by LoadCredential= and named by PGPASSFILE) pushes the run to a fleet catalogue, a PostgreSQL on
# 127.0.0.1 that asks for a password (scram-sha-256).
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
if [ -x "$PGBIN/initdb" ] && id postgres >/dev/null 2>&1; then
	PGD=/var/lib/profsvc-test-pg
	rm -rf "$PGD"; mkdir -p "$PGD"; chown postgres "$PGD"
	echo fleet-pw-7 >"$PGD/pw"; chown postgres "$PGD/pw"
	runuser -u postgres -- "$PGBIN/initdb" -D "$PGD/data" -U profsvc --auth-local=trust \
		--auth-host=scram-sha-256 --pwfile="$PGD/pw" >"$PGD/initdb.log" 2>&1
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w \
		-o "-c listen_addresses=127.0.0.1 -p 5433 -k $PGD -c fsync=off" start >/dev/null 2>&1
	PGPASSWORD=fleet-pw-7 "$PGBIN/createdb" -h 127.0.0.1 -p 5433 -U profsvc fleet
	check "a PostgreSQL with password authentication on 127.0.0.1:5433" test $? = 0
	mkdir -p /etc/profsvc /etc/systemd/system/profile-backend.service.d
	printf '127.0.0.1:5433:fleet:profsvc:fleet-pw-7\n' >/etc/profsvc/pgpass
	chmod 600 /etc/profsvc/pgpass
	sed 's|^Environment=PROFSVC_SYNC=.*|Environment=PROFSVC_SYNC=postgresql://profsvc@127.0.0.1:5433/fleet|' \
		"$DOCDIR/examples/sync.conf" >/etc/systemd/system/profile-backend.service.d/sync.conf
	systemctl daemon-reload
	systemctl restart profile-backend.service
	check "the backend restarts with the sync drop-in" systemctl is-active -q profile-backend.service ||
		{ systemctl cat profile-backend.service; journalctl --no-pager -o cat -u profile-backend.service | tail -30; }
	pushed() {
		[ "$(PGPASSWORD=fleet-pw-7 "$PGBIN/psql" -h 127.0.0.1 -p 5433 -U profsvc -d fleet -tAc \
			"SELECT count(*) FROM runs WHERE name = 'unit-guest' AND state = 'complete'" 2>/dev/null)" = 1 ]
	}
	check "--sync from the drop-in pushed the run to the catalogue over TCP" waitfor 300 pushed ||
		{ "$SBIN/profile-backend" status; systemctl show -p Environment profile-backend.service
		  journalctl --no-pager -o cat -u profile-backend.service | tail -20; }
	check "profile-backend status shows the sync connected" grep -q "^fleet catalogue .*: connected, " <<<"$("$SBIN/profile-backend" status)"
	rm /etc/systemd/system/profile-backend.service.d/sync.conf
	systemctl daemon-reload
	systemctl restart profile-backend.service
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGD/data" -w stop >/dev/null 2>&1
else
	fail "no PostgreSQL server (initdb) to sync to"
fi

# Retention: profsvc-prune.service applies the policy file's PROFSVC_PRUNE.
check "the policy file is installed, its default commented" grep -q '^#PROFSVC_PRUNE=' "$CONF/default/profsvc-prune"
echo 'PROFSVC_PRUNE="--keep 0 --name unit-guest"' >>"$CONF/default/profsvc-prune"
systemctl start profsvc-prune.service
check "systemctl start profsvc-prune (the policy applied)" test $? = 0
check "profsvc-prune removed the run the policy let go" sh -c "! '$PROFDB' show '$RUN' >/dev/null 2>&1"
journalctl --sync 2>/dev/null
check "the journal says which run went" grep -q "deleted run $RUN" <<<"$(journalctl --no-pager -o cat -u profsvc-prune.service)"
systemctl enable --now profsvc-prune.timer >/dev/null 2>&1
check "profsvc-prune.timer enabled and waiting (next $(prop profsvc-prune.timer NextElapseUSecRealtime))" \
	test "$(prop profsvc-prune.timer ActiveState)/$(systemctl is-enabled profsvc-prune.timer)" = active/enabled
systemctl disable --now profsvc-prune.timer >/dev/null 2>&1

# stop, then a start that cannot succeed: the unit fails and the journal says why.
# Serve (user profsvc) lists the runs as root's profdb does, through the
# backend; with the backend stopped it says to start it.
check "profdb serve, as profsvc, lists the runs as profdb does" \
	test "$(api /api/runs | jq_py "len(d['runs'])")" = "$("$PROFDB" --db "$DB" query runs --json | jq_py "len(d['runs'])")"
systemctl stop profile-backend.service
healthz() { python3 -c 'import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen("http://127.0.0.1:8080/healthz", timeout=5)
except urllib.error.HTTPError as e:
    sys.stdout.write("%d %s" % (e.code, e.read().decode()))'; }
check "with the backend stopped, profdb serve says to start it (/healthz: $(healthz | head -c 200))" \
	grep -q "^503 .*profile-backend, which is not running.*start it" <<<"$(healthz)"
systemctl stop profdb-serve.service profile-backend.service
check "systemctl stop: profile-backend inactive, result success" test "$(prop profile-backend ActiveState)/$(prop profile-backend Result)" = inactive/success
check "systemctl stop: profdb-serve inactive" test "$(prop profdb-serve ActiveState)" = inactive
"$SBIN/profile-backend" status >/dev/null 2>&1
check "profile-backend status after the stop: 3 (not running)" test $? = 3
mv "$DB" /root/moved.db; rm -f "$DB-wal" "$DB-shm" "$DB-data"*
mkdir "$DB"
systemctl start profile-backend.service
check "a start with a directory as the store fails the unit" test $? != 0
check "the unit's result after a failed start is exit-code" test "$(prop profile-backend Result)" = exit-code
said_why() {
	journalctl --sync 2>/dev/null
	# (by its identifier: journald may not learn the unit of a process
	# that exits at once)
	journalctl --no-pager -o cat -p err SYSLOG_IDENTIFIER=profile-backend | grep -q "is not a regular file"
}
check "the journal says why at err" waitfor 100 said_why
systemctl stop profile-backend.service
systemctl reset-failed profile-backend.service 2>/dev/null

systemctl enable profile-backend.service profdb-serve.service >/dev/null 2>&1
check "systemctl enable (WantedBy=multi-user.target)" test "$(systemctl is-enabled profile-backend.service)/$(systemctl is-enabled profdb-serve.service)" = enabled/enabled
systemctl disable profile-backend.service profdb-serve.service >/dev/null 2>&1
check "systemctl disable" test "$(systemctl is-enabled profile-backend.service)" = disabled
echo DONE >&3
INNER
chmod +x "$T/share/inner.sh"

# The container: an overlay of / (writes go to a tmpfs), this build
# installed into it, the units installed and a drop-in, then systemd.
cat >"$T/boot.sh" <<BOOT
set -e
mkdir -p "$T/ov"
mount -t tmpfs tmpfs "$T/ov"
mkdir -p "$T/ov/up" "$T/ov/work" "$T/ov/root"
mount -t overlay overlay -o lowerdir=/,upperdir="$T/ov/up",workdir="$T/ov/work" "$T/ov/root"
R="$T/ov/root"
make -s -C "$B" install DESTDIR="\$R" >"$T/install.log" 2>&1
# Whatever the prefix, systemd reads units from /etc/systemd/system.
E="\$R/etc/systemd/system"
mkdir -p "\$E"
# /tmp as it is: a build's prefix may be there (make distcheck's is), so
# no tmpfs over it and no boot-time clean-up of it (tmpfiles.d's tmp.conf).
ln -sf /dev/null "\$E/tmp.mount"
mkdir -p "\$R/etc/tmpfiles.d"
: >"\$R/etc/tmpfiles.d/tmp.conf"
cp "\$R$unitdir/profile-backend.service" "\$R$unitdir/profdb-serve.service" "\$R$unitdir/profsvc-prune.service" \
	"\$R$unitdir/profsvc-prune.timer" "\$E/"
rm -rf "\$R$statedir/lib/profsvc" "\$R$rundir/profsvc"
mkdir -p "\$E/profile-backend.service.d" "\$R/profsvc-test"
mount --bind "$T/share" "\$R/profsvc-test"
cat >"\$E/profile-backend.service.d/xensim.conf" <<U
# This test machine has no Xen: the simulated host instead.
[Unit]
ConditionPathExists=
Requires=xensim.service
After=xensim.service
[Service]
ExecStart=
ExecStart=$sbindir/profile-backend start --foreground --platform sim --sim-dir /run/xensim --db $statedir/lib/profsvc/profiles.db --run-dir $rundir/profsvc
ReadWritePaths=/run/xensim
U
if [ -n "$SANITIZED" ]; then
	# LeakSanitizer stops the world with ptrace at exit, which the
	# sandboxed units' system-call filters forbid (a oneshot then never
	# ends): leaks are the other tiers' to find (valgrind, test_faults).
	for u in profile-backend profdb-serve profsvc-prune; do
		mkdir -p "\$E/\$u.service.d"
		printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' >"\$E/\$u.service.d/sanitizers.conf"
	done
fi
case "$sbindir" in
/tmp/*)
	# make distcheck installs under /tmp, which the units' PrivateTmp=
	# hides from them; a real install's prefix is /usr.
	for u in profile-backend profdb-serve profsvc-prune; do
		mkdir -p "\$E/\$u.service.d"
		printf '[Service]\nPrivateTmp=no\n' >"\$E/\$u.service.d/prefix-in-tmp.conf"
	done ;;
esac
cat >"\$E/xensim.service" <<U
[Service]
Type=forking
ExecStart=$simdir/xensim start --dir /run/xensim
ExecStop=$simdir/xensim stop --dir /run/xensim
U
cat >"\$E/profsvc-test.service" <<U
[Unit]
After=basic.target
[Service]
Type=oneshot
ExecStart=/profsvc-test/inner.sh
# The checks take about 100 s on a plain build (a PostgreSQL made and
# started among them), twice that and more under the sanitizers.
TimeoutStartSec=420
ExecStopPost=/bin/systemctl poweroff --no-block
U
cat >"\$E/profsvc-test.target" <<U
[Unit]
Requires=basic.target profsvc-test.service
After=basic.target
U
mount -t proc proc "\$R/proc"
mount --rbind /sys "\$R/sys"
mount --rbind /dev "\$R/dev"
: >"$T/console.log"
mount --bind "$T/console.log" "\$R/dev/console"
# Shared propagation inside this namespace (as a booted system has it;
# systemd does not set it in a container): systemd makes each unit's
# credentials directory (LoadCredential=) in a namespace of its own and
# moves it into place, which a private root never shows.
mount --make-rshared "\$R"
export container=other
exec chroot "\$R" /lib/systemd/systemd --unit=profsvc-test.target --log-target=console --log-level=notice
BOOT
: >"$T/share/result"
timeout -k 10 480 unshare --mount --pid --fork --uts --net --propagation private bash "$T/boot.sh" >"$T/boot.log" 2>&1
rc=$?
# systemd's poweroff in a PID namespace ends PID 1 with SIGINT (130).
if ! grep -qx DONE "$T/share/result"; then
	echo "test_systemd: the container did not finish (exit $rc)"
	echo "--- boot"; tail -20 "$T/boot.log"; echo "--- console"; tail -40 "$T/console.log"
	echo "--- inner"; tail -40 "$T/share/inner.log" 2>/dev/null
	grep -q "mount: .*overlay" "$T/boot.log" && skip "no overlayfs here"
fi
pass=$(grep -c '^ok ' "$T/share/result")
fails=$(grep -c '^FAIL ' "$T/share/result")
grep '^FAIL ' "$T/share/result" | sed 's/^FAIL /FAIL: /' >&2
if [ "$fails" != 0 ] || ! grep -qx DONE "$T/share/result"; then
	echo "--- inside the container"; tail -60 "$T/share/inner.log"
fi
grep -qx DONE "$T/share/result" || fails=$((fails + 1))
echo "test_systemd: $pass checks passed, $fails failed"
[ "$fails" = 0 ]
