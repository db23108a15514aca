#!/usr/bin/env bash
# run.sh - `make bench`: every benchmark in bench/, one after another, from
# the build tree (the current directory), with the same flags (make's
# BENCH_FLAGS: --quick for a short round), then bench/results.json.
#
#   bash SRCDIR/bench/run.sh SRCDIR [FLAGS...]
#
# Owns the list of benchmarks: every bench/*_bench.c and bench/*_bench.py
# of the source tree must be run here, or the run is broken (a bench left
# out of make bench would rot unseen).  A bench is broken when it exits
# non-zero (a harness error, a failed command, a missing peer, a crash) or
# writes no JSON; the others still run, and the run exits 1 naming the
# broken ones.  A target met or missed is a figure and never changes the
# exit status.  Prints each bench's time and the total (--quick is meant to
# fit a CI run: docs/performance.md, "--quick").
set -u
S=$1
shift
FLAGS=("$@")
export TOP_SRCDIR=$S TOP_BUILDDIR=$PWD
mkdir -p bench
broken=() ran=() times=()
t_all=$SECONDS

# bench NAME SOURCE CMD...: runs CMD (FLAGS and --json bench/NAME.json
# added) as the bench NAME, whose program is bench/SOURCE.
bench() {
	local name=$1 src=$2 t0=$SECONDS rc
	shift 2
	ran+=("$src")
	rm -f "bench/$name.json"
	echo "=== make bench: $name ($src)"
	"$@" "${FLAGS[@]}" --json "bench/$name.json"
	rc=$?
	times+=("$name $((SECONDS - t0)) s")
	if [ "$rc" != 0 ]; then
		broken+=("$name (exit status $rc)")
	elif ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "bench/$name.json" 2>/dev/null; then
		broken+=("$name (no figures in bench/$name.json)")
	fi
}

# capture_bench: the backend's run directory (response journals) on tmpfs,
# as /run/profsvc is on a host
capture() {
	local rd rc
	rd=$(mktemp -d /dev/shm/profsvc-bench-run.XXXXXX 2>/dev/null || mktemp -d)
	PROFSVC_TEST_RUN_DIR=$rd ./bench/capture_bench "$@"
	rc=$?
	rm -rf "$rd"
	return $rc
}

bench store store_bench.c ./bench/store_bench --profdb ./profdb
bench capture capture_bench.c capture
bench view view_bench.py python3 "$S/bench/view_bench.py" --build . --src "$S"
bench live live_bench.py python3 "$S/bench/live_bench.py" --build . --src "$S"
bench trace trace_bench.py python3 "$S/bench/trace_bench.py" --build . --src "$S"
bench fleet fleet_bench.py python3 "$S/bench/fleet_bench.py" --build . --src "$S"
bench sampling sample_bench.c ./bench/sample_bench
bench eventlog eventlog_bench.py python3 "$S/bench/eventlog_bench.py" --build . --src "$S"

for f in "$S"/bench/*_bench.c "$S"/bench/*_bench.py; do
	[ -e "$f" ] || continue
	case " ${ran[*]} " in
	*" ${f##*/} "*) ;;
	*) broken+=("bench/${f##*/} (not run: bench/run.sh has no line for it)") ;;
	esac
done

# bench/results.json: every bench's figures under its name, the host, the
# flags, what broke
python3 - "$S" "${FLAGS[*]}" "${broken[@]}" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], 'bench'))
import benchlib
out = {'host': {'cpu': benchlib.cpu_model(), 'line': benchlib.host_line()}, 'flags': sys.argv[2],
       'broken': sys.argv[3:]}
for name in ('store', 'capture', 'view', 'live', 'trace', 'fleet', 'sampling', 'eventlog'):
    try:
        with open('bench/%s.json' % name) as f:
            out[name] = json.load(f)
    except (OSError, ValueError):
        out[name] = None
with open('bench/results.json', 'w') as f:
    json.dump(out, f)
print('wrote bench/results.json')
EOF

echo "make bench: $((SECONDS - t_all)) s in all (${FLAGS[*]:-full size}): $(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"
if [ ${#broken[@]} -gt 0 ]; then
	printf 'make bench: BROKEN: %s\n' "${broken[@]}" >&2
	exit 1
fi
echo "make bench: every bench ran to its end"
