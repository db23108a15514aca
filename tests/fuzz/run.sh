#!/bin/bash
# tests/fuzz/run.sh - runs libFuzzer targets for a while each (make fuzz).
#   tests/fuzz/run.sh [TARGET...]      FUZZ_SECONDS (default 60) per target,
#                                      FUZZ_JOBS (default: the CPUs) at once
# Each target starts from its seed corpus (tests/fuzz/corpus/TARGET, read
# only) plus what earlier runs in this build directory found
# (tests/fuzz/work/TARGET).  Prints one line per target with its CPU time,
# executions and crashes; a crash or leak leaves the input in
# tests/fuzz/crashes/ and fails the run.
set -u
SRC=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BLD=${TOP_BUILDDIR:-.}
SECS=${FUZZ_SECONDS:-60}
TARGETS=${*:-"fuzz_blkif fuzz_xs_values fuzz_xs_wire fuzz_status_block fuzz_profile fuzz_store_open fuzz_safe_text fuzz_heap fuzz_prof fuzz_web_args fuzz_mprof fuzz_xlcfg fuzz_intake fuzz_fleet_copy fuzz_units fuzz_walk_ghc fuzz_samples fuzz_pagetable fuzz_walk_fp fuzz_walk_cfi fuzz_kallsyms fuzz_eventlog fuzz_read_request fuzz_read_reply"}
declare -A MAXLEN=([fuzz_blkif]=20000 [fuzz_xs_values]=4096 [fuzz_xs_wire]=16384
	[fuzz_status_block]=600 [fuzz_profile]=40000 [fuzz_store_open]=200000 [fuzz_safe_text]=4096 [fuzz_heap]=16384 [fuzz_prof]=16384 [fuzz_mprof]=20000 [fuzz_xlcfg]=8192 [fuzz_intake]=65536 [fuzz_fleet_copy]=8192 [fuzz_units]=64 [fuzz_walk_ghc]=16384 [fuzz_samples]=20000 [fuzz_pagetable]=1024 [fuzz_walk_fp]=8192 [fuzz_walk_cfi]=8192 [fuzz_kallsyms]=65536 [fuzz_eventlog]=65536 [fuzz_read_request]=4200 [fuzz_read_reply]=600000)
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p "$BLD/tests/fuzz/crashes"
# fuzz_one TARGET: runs it; its verdict line(s) into TARGET.result, exit 0 if it passed
fuzz_one() {
	local t=$1 bin=$BLD/tests/fuzz/$1 work=$BLD/tests/fuzz/work/$1 log=$BLD/tests/fuzz/$1.log res=$BLD/tests/fuzz/$1.result
	[ -x "$bin" ] || { echo "fuzz: FAIL $t: not built (make fuzz builds it with clang)" >"$res"; return 1; }
	mkdir -p "$work"
	TIMEFORMAT='%U %S'
	{ time "$bin" -max_total_time="$SECS" -max_len="${MAXLEN[$t]:-4096}" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$BLD/tests/fuzz/crashes/$t-" \
		"$work" "$SRC/tests/fuzz/corpus/$t" >"$log" 2>&1; echo "rc $?" >>"$log"; } 2>"$log.time"
	local u s cpu execs rc
	read -r u s <"$log.time"
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", u + s }')
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rc=$(sed -n 's/^rc //p' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		echo "fuzz: PASS $t: ${SECS} s, ${cpu} CPU-s, ${execs:-0} executions, corpus $(ls "$work" | wc -l) + $(ls "$SRC/tests/fuzz/corpus/$t" 2>/dev/null | wc -l) seeds" >"$res"
		return 0
	fi
	{ echo "fuzz: FAIL $t (exit $rc; input in $BLD/tests/fuzz/crashes/):"
	  grep -E 'ERROR|SUMMARY|Assertion|runtime error' "$log" | head -5 | sed 's/^/  /'; } >"$res"
	return 1
}
# JOBS targets at once (each libFuzzer process is one thread); the
# verdicts printed in the targets' order
running=0
for t in $TARGETS; do
	rm -f "$BLD/tests/fuzz/$t.result"
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$t" &
	running=$((running + 1))
done
wait
fails=0
for t in $TARGETS; do
	cat "$BLD/tests/fuzz/$t.result" 2>/dev/null || echo "fuzz: FAIL $t (no verdict)"
	grep -q '^fuzz: PASS' "$BLD/tests/fuzz/$t.result" 2>/dev/null || fails=$((fails + 1))
done
exit $((fails > 0))
