#!/usr/bin/env bash
# demo/demo.sh BUILD_DIR - the quickstart's main job, on a machine without
# Xen: a simulated Xen (xensim), profile-backend serving it, and two
# simulated HaLVM guests that write real GHC 9.0.2 profiles (tests/data/ghc)
# to xvdp1/xvdp2 exactly as the HaLVM runtime does.  The first runs to the
# end; the second crashes half-way.  Then profdb lists the runs and exports
# them, and the exports are compared byte for byte with GHC's own files.
# A third guest is followed live, and a MirageOS guest's mirage-profile
# trace is captured beside them and read by babeltrace2.  Then a C program
# and a GHC one (when ghc is there) run as domains and are sampled from
# dom0, their stacks walked, Haskell's included.  Last, a guest writes
# GHC's eventlog to a third disk (xvdp3: the GC timeline), and the first
# guest boots again, so its two runs compare (the catalogue links them).
# Everything it starts, it stops; the store and the exports stay for a look.
set -euo pipefail
B=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
FIX=$SRC/tests/data/ghc/phases
OUT=${PROFSVC_DEMO_OUT:-$PWD/profsvc-demo}
W=$(mktemp -d /tmp/profsvc-demo.XXXXXX)
export XENSIM_DIR=$W/xen PROFSVC_RUN_DIR=$W/run PROFSVC_DB=$OUT/profiles.db
XENSIM="$B/xensim/xensim"
BACKEND="$B/profile-backend"
STUB="$B/frontend-stub/frontend-stub"
PROFDB="$B/profdb"

cleanup() {
	"$BACKEND" stop >/dev/null 2>&1 || true
	"$XENSIM" stop >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
quiet() { printf '$ %s\n' "$*"; "$@" >/dev/null; }

rm -rf "$OUT"
mkdir -p "$OUT" "$PROFSVC_RUN_DIR"

say "1. A simulated Xen host: hypervisor + xenstored (xensim), and profile-backend in its dom0"
run "$XENSIM" start --dir "$XENSIM_DIR"
run "$BACKEND" start --platform sim --db "$PROFSVC_DB"

say "2. A HaLVM guest, configured the new way (no disk files to pre-size)"
cat >"$W/phases.cfg" <<'EOF'
name = "phases"
kernel = "phases.elf"
extra = "+RTS -p -hc"
disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc' ]
EOF
sed 's/^/   | /' "$W/phases.cfg"
printf '$ %s\n' "profile-backend create phases.cfg"
DOM=$("$BACKEND" create --platform sim "$W/phases.cfg")
echo "   domain $DOM created; the guest runs the 'phases' program with profiling on:"
run "$STUB" --mode halvm --domid "$DOM" --prof "$FIX/phases-p-hc.prof" --hp "$FIX/phases-p-hc.hp"
echo "   The program exited; the toolstack destroys the domain:"
run "$XENSIM" destroy "$DOM"

say "3. A second guest that crashes half-way through its heap profile"
sed 's/"phases"/"phases-crashy"/' "$W/phases.cfg" >"$W/crashy.cfg"
DOM2=$("$BACKEND" create --platform sim "$W/crashy.cfg")
echo "   domain $DOM2 created"
run "$STUB" --mode halvm --domid "$DOM2" --hp "$FIX/phases-killed-SIGKILL.hp" --prof "$FIX/phases-p-hc.prof" --crash-at 60000 2>/dev/null ||
	echo "   (the guest died with its domain, as a crashed HaLVM guest does under on_crash=destroy)"
sleep 0.5 # the backend sees @releaseDomain and ends the run

say "4. What profile-backend recorded (profdb query runs)"
run "$PROFDB" query runs
echo
run "$PROFDB" show 1 | sed -n '1,12p'

say "5. Export, byte-exact"
run "$PROFDB" export 1 -o "$OUT"
run "$PROFDB" export 2 -o "$OUT" || true
cmp "$OUT/phases-1.prof" "$FIX/phases-p-hc.prof" && echo "   phases-1.prof is byte-identical to what GHC wrote"
cmp "$OUT/phases-1.hp" "$FIX/phases-p-hc.hp" && echo "   phases-1.hp is byte-identical to what GHC wrote"
n=$(stat -c %s "$OUT/phases-crashy-2.hp")
cmp -n "$n" "$OUT/phases-crashy-2.hp" "$FIX/phases-killed-SIGKILL.hp" &&
	echo "   phases-crashy-2.hp: the first $n bytes of the crashed guest's heap profile, up to its last flushed sample:" &&
	tail -n 2 "$OUT/phases-crashy-2.hp" | sed 's/^/     | /'

say "6. Look at it: the cost centres, the heap, a report"
run "$PROFDB" top 1 -n 6
echo
run "$PROFDB" heap 1 --bands 6
echo
run "$PROFDB" heap 1 2 -o "$OUT/heap.svg"
run "$PROFDB" flame 1 -o "$OUT/flame.svg"
run "$PROFDB" report 1 -o "$OUT/report.html"
run "$PROFDB" diff 1 2 -n 4
echo "   Open $OUT/report.html in any browser (it needs no network)."

say "7. Live: a guest's heap followed while it writes (nothing added to the guest)"
sed 's/"phases"/"phases-live"/' "$W/phases.cfg" >"$W/live.cfg"
DOM3=$("$BACKEND" create --platform sim "$W/live.cfg")
( "$STUB" --mode halvm --domid "$DOM3" --hp "$FIX/phases-hd-i0.01.hp" --prof "$FIX/phases-p-hc.prof" --pace 20 -q
  "$XENSIM" destroy "$DOM3" >/dev/null ) &
sleep 0.3
printf '$ %s\n' "profdb watch 3   (one line per sample when not a terminal; every 40th shown)"
"$PROFDB" watch 3 | awk 'NR % 40 == 1 || /ended/' | cut -c1-110
wait
echo "   In a browser, the same live: $PROFDB serve (http://127.0.0.1:8080/), every run, its report, comparisons."

say "8. A MirageOS guest beside them: its mirage-profile trace, kept as it runs"
echo "   The guest shares its trace buffer read-only with dom0 (data/mprof/ring-ref);"
echo "   the backend keeps every packet of it in the guest's run:"
DOM4=$("$XENSIM" create --name mirage-web)
run "$STUB" --mode mirage --domid "$DOM4" --pages 16 --events 30000 --rate 15000
run "$XENSIM" destroy "$DOM4"
sleep 0.3
run "$PROFDB" show 4 | sed -n '/^trace/,$p'
run "$PROFDB" export 4 --ctf "$OUT/mirage-4.ctf" --chrome-trace "$OUT/mirage-4.trace.json"
if command -v babeltrace2 >/dev/null; then
	printf '$ %s
' "babeltrace2 $OUT/mirage-4.ctf | head -4"
	{ babeltrace2 "$OUT/mirage-4.ctf" || true; } | head -4 | cut -c1-140 # head closes the pipe early
fi
echo "   $OUT/mirage-4.trace.json opens in Perfetto (ui.perfetto.dev), chrome://tracing or speedscope."

say "9. Any program, sampled from dom0 as a black box: no profiling build"
echo "   A domain that is a program (xensim create --exec; on Xen, any 64-bit PV guest),"
echo "   paused 499 times a second, its stacks walked, the samples in its run:"
cc -O0 -g -fno-omit-frame-pointer -no-pie -o "$W/hot" "$SRC/tests/sampling/hot.c"
DOM5=$("$XENSIM" create --name hot-c --exec "$W/hot" 2)
run "$BACKEND" sample "$DOM5" --hz 499 --symbols "$W/hot"
run "$PROFDB" top 5 --samples -n 4
if command -v ghc >/dev/null; then
	echo "   A GHC -O2 program: its Haskell callers too, from the STG stack (perf cannot):"
	mkdir -p "$W/hs" && cp "$SRC/tests/sampling/Hot.hs" "$W/hs/"
	(cd "$W/hs" && ghc -O2 -g -v0 Hot.hs -o hot)
	DOM6=$("$XENSIM" create --name hot-haskell --exec "$W/hs/hot" 2)
	run "$BACKEND" sample "$DOM6" --hz 499 --symbols "$W/hs/hot"
	printf '$ %s\n' "profdb export 6 --folded - | sort -k2 -nr | head -2"
	"$PROFDB" export 6 --folded - | sort -t' ' -k2 -nr | head -2 | cut -c1-140
fi
run "$PROFDB" export 5 --pprof "$OUT/hot-5.pb.gz" --speedscope "$OUT/hot-5.speedscope.json"
echo "   go tool pprof -top $OUT/hot-5.pb.gz, or speedscope, read them."

say "10. GHC's eventlog on a third disk, and the first guest booted again"
EVFIX=$SRC/tests/data/eventlog
cat >"$W/threaded.cfg" <<'EOF'
name = "threaded"
kernel = "threaded.elf"
extra = "+RTS -N2 -l -hT -i0.01"
disk = [ 'vdev=xvdp2, backendtype=profsvc', 'vdev=xvdp3, backendtype=profsvc' ]
EOF
sed 's/^/   | /' "$W/threaded.cfg"
echo "   A guest run with +RTS -l writes GHC's eventlog (GCs, heap, threads) to xvdp3:"
DOM7=$("$BACKEND" create --platform sim "$W/threaded.cfg")
run "$STUB" --mode halvm --domid "$DOM7" --hp "$EVFIX/threaded.hp" --eventlog "$EVFIX/threaded.eventlog"
run "$XENSIM" destroy "$DOM7"
sleep 0.3
EV=$("$PROFDB" query runs --name threaded | awk 'NR > 1 { r = $1 } END { print r }')
run "$PROFDB" gc "$EV"
run "$PROFDB" report "$EV" -o "$OUT/report-eventlog.html"
echo "   Its report, and its page in profdb serve, draw the GC timeline: each pause, heap, threads."
echo
echo "   'phases' boots again, with other arguments: a second run of the same guest."
DOM8=$("$BACKEND" create --platform sim "$W/phases.cfg")
run "$STUB" --mode halvm --domid "$DOM8" --prof "$FIX/phases-pj.prof" --hp "$FIX/phases-hc-l.hp"
run "$XENSIM" destroy "$DOM8"
sleep 0.3
AGAIN=$("$PROFDB" query runs --name phases | awk 'NR > 1 { r = $1 } END { print r }')
run "$PROFDB" diff 1 "$AGAIN" -n 3
run "$PROFDB" report "$AGAIN" --against 1 -o "$OUT/compare.html"
echo "   In profdb serve, the catalogue links run $AGAIN to its comparison with run 1 (any two"
echo "   runs ticked there compare too), as does run $AGAIN's page."
echo
run "$PROFDB" query runs

say "11. Integrity, and shutting everything down"
run "$PROFDB" check
run "$BACKEND" stop
run "$XENSIM" stop --dir "$XENSIM_DIR"
echo
echo "The store ($PROFSVC_DB) and the exports are in $OUT."
echo "Try: PROFSVC_DB=$PROFSVC_DB $PROFDB query runs --json"
