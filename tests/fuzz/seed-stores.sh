#!/bin/bash
# tests/fuzz/seed-stores.sh BUILDDIR - makes fuzz_store_open's seeds: small
# real stores written by this build's halvm-mkdisk and profdb (a complete
# run; a crashed one with 4-byte words beside it), checkpointed into one
# file each.
set -eu
BLD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$HERE/corpus/fuzz_store_open
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT"
# Tiny profiles keep the seeds (and the fuzzer's inputs) small: a few pages.
prof=$T/t.prof hp=$T/t.hp
printf '\tTime and Allocation Profiling Report  (Final)\n\n\ttotal time  =  0.00 secs\n' >"$prof"
{ printf 'JOB "seed"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
  for i in 1 2 3 4 5 6; do printf 'BEGIN_SAMPLE 0.%d\nMAIN\t%d\nEND_SAMPLE 0.%d\n' $i $((i * 48)) $i; done; } >"$hp"
mk() { "$BLD/frontend-stub/halvm-mkdisk" "$@" >/dev/null; }
mk --prof "$prof" "$T/p.disk"
mk --hp "$hp" "$T/h.disk"
mk --hp --word-size 4 --crash-at 100 "$hp" "$T/h4.disk"
"$BLD/profdb" --db "$T/one.db" import-disk --name seed "$T/p.disk" "$T/h.disk" >/dev/null
cp "$T/one.db" "$T/two.db"
"$BLD/profdb" --db "$T/two.db" import-disk --name crashed "$T/h4.disk" >/dev/null 2>&1 || true
for db in one two; do
	sqlite3 "$T/$db.db" 'PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
	cp "$T/$db.db" "$OUT/store-$db"
done
ls -l "$OUT"
