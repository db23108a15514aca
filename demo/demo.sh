#!/usr/bin/env bash
# demo/demo.sh BUILD_DIR - the main job of the quickstart, on a machine
# without Xen: the raw-disk way a HaLVM guest's profiles used to be kept,
# and what profsvc does with them.  Real GHC 9.0.2 profiles from
# tests/data/ghc are written by a model of the HaLVM writer into raw disk
# images (one clean run, one guest that crashed), imported into a profsvc
# store, listed, shown, and exported byte-exact.
#
# (When the capture path lands, this becomes: simulated Xen + profile-backend
# + a simulated HaLVM guest.)  Everything it creates lives in a temporary
# directory that it removes, except the exports it points you to.
set -euo pipefail
B=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
FIX=$SRC/tests/data/ghc/phases
PROFDB="$B/profdb"
MKDISK="$B/frontend-stub/halvm-mkdisk"
W=$(mktemp -d /tmp/profsvc-demo.XXXXXX)
OUT=${PROFSVC_DEMO_OUT:-$PWD/profsvc-demo-exports}
trap 'rm -rf "$W"' EXIT
export PROFSVC_DB=$W/profiles.db

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. The old way: a HaLVM guest writes its profiles to pre-sized raw disks"
echo "   (dd ... seek=64M; disk = [\"prof.disk,raw,xvdp1,rw\", \"hp.disk,raw,xvdp2,rw\"])."
echo "   The 'phases' program ran with +RTS -p -hc; here is what its disks hold:"
run "$MKDISK" "$FIX/phases-p-hc.prof" "$W/prof.disk"
run "$MKDISK" "$FIX/phases-p-hc.hp" "$W/hp.disk"
ls -ls "$W"/*.disk | awk '{printf "   %s: %s bytes apparent, %s KiB really used\n", $NF, $6, $1}'
echo "   A second guest crashed part-way through its heap profile (no .prof: GHC"
echo "   writes it only at exit):"
run "$MKDISK" --crash-at 60000 "$FIX/phases-killed-SIGKILL.hp" "$W/crashed-hp.disk"
run "$MKDISK" --crash-at 0 "$FIX/phases-p-hc.prof" "$W/crashed-prof.disk"

say "2. profsvc keeps every run in one SQLite store (here $PROFSVC_DB)"
run "$PROFDB" import-disk --name phases "$W/prof.disk" "$W/hp.disk"
run "$PROFDB" import-disk --name phases-crashed "$W/crashed-prof.disk" "$W/crashed-hp.disk" || true

say "3. The catalogue of runs"
run "$PROFDB" query runs

say "4. Everything known about run 1"
run "$PROFDB" show 1

say "5. Export: byte-exact .prof/.hp files"
rm -rf "$OUT"; mkdir -p "$OUT"
run "$PROFDB" export 1 -o "$OUT"
run "$PROFDB" export 2 -o "$OUT"
cmp "$OUT/phases-1.prof" "$FIX/phases-p-hc.prof" && echo "   phases-1.prof is byte-identical to GHC's output"
cmp "$OUT/phases-1.hp" "$FIX/phases-p-hc.hp" && echo "   phases-1.hp is byte-identical to GHC's output"
n=$(stat -c %s "$OUT/phases-crashed-2.hp")
cmp -n "$n" "$OUT/phases-crashed-2.hp" "$FIX/phases-killed-SIGKILL.hp" \
	&& echo "   phases-crashed-2.hp: the first $n bytes of the crashed guest's profile, ending on a whole sample:" \
	&& tail -n 2 "$OUT/phases-crashed-2.hp" | sed 's/^/     | /'

say "6. Integrity"
run "$PROFDB" check
echo
echo "Exports are in $OUT.  The store was temporary and has been removed."
