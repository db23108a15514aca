#!/usr/bin/env bash
# test_sampling.sh - black-box stack sampling on xensim: real compiled
# programs run as domains (xensim create --exec) and sampled from dom0 by
# profile-backend sample, then read back through profdb:
#  - a C program built with frame pointers: its hot chain whole
#    (main;run_for;mid;hot), its leaf shares (of its two functions) within 5 points of what
#    Debian's perf record measures on the same binary run natively;
#  - a GHC program (ghc -O2 -g, not profiled): the hot worker found, and
#    its Haskell callers above it, which only the STG-stack walk finds;
#  - hostile "guests" whose frame pointers loop, point nowhere, are
#    random or a million frames deep, sampled beside an honest one that
#    must come out right; the backend stays up;
#  - a program that dies mid-sampling ends its sampling and its run;
#    --seconds ends the sampling and leaves the domain running;
#  - bad requests: no such domain, a domain that is not a program, a bad
#    rate, a guest kernel's map that is missing or a stub.
# Needs gcc; the GHC part needs ghc, the perf part perf (each skipped
# without it, except under CI=true, where all must be there).
# PROFSVC_VALGRIND=1 (make check-valgrind): the backend, sampler threads
# and all, runs under valgrind, which must find no error nor leak; the
# shares are not compared then (valgrind's pauses lower the rate).
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
alone_among_timed
with_xensim
keep_at_exit '"$T"/*.log' '"$T"/*.folded' '"$T"/*.out' '"$T"/*.png'
need gcc || exit 77

gcc -O0 -g -fno-omit-frame-pointer -no-pie -o "$T/hot" "$S/tests/sampling/hot.c" ||
	{ echo "cannot build hot.c"; exit 99; }
gcc -O1 -g -mno-red-zone -no-pie -o "$T/hostile" "$S/tests/sampling/hostile.c" ||
	{ echo "cannot build hostile.c"; exit 99; }
gcc -O1 -g -fno-omit-frame-pointer -no-pie -pthread -o "$T/restless" "$S/tests/sampling/restless.c" ||
	{ echo "cannot build restless.c"; exit 99; }
import plain "$FIX/phases/phases-p-hc.prof" "$FIX/phases/phases-hd-i0.01.hp" # run 1: no samples
start_xensim
if [ -n "$VG" ]; then
	$VG "$BACKEND" start --platform sim --db "$PROFSVC_DB" --foreground 2>"$T/backend.log" &
	BACKEND_PID=$!
	for _ in $(seq 300); do "$BACKEND" status >/dev/null 2>&1 && break; sleep 0.1; done
else
	start_backend
fi

run_of() { "$PROFDB" query runs --name "$1" --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2; }
# complete_run NAME TENTHS: its run once it has ended complete (within
# TENTHS tenths of a second), else whatever run it has
complete_run() {
	local r
	for _ in $(seq "$2"); do
		r=$(run_of "$1")
		[ -n "$r" ] && "$PROFDB" show "$r" --json | grep -q '"state":"complete"' && break
		sleep 0.1
	done
	echo "$r"
}
# sample NAME SECONDS HZ PROGRAM ARGS...: the program as a domain, sampled
# until it ends, its own ELF the symbols (none with NOSYMS=1); the summary
# in $T/NAME.out
sample() {
	local name=$1 secs=$2 hz=$3 dom syms
	shift 3
	dom=$("$XS" create --dir "$XENSIM_DIR" --name "$name" --console "$T/$name.console" --exec "$@") ||
		{ fail "$name: xensim create --exec"; return 1; }
	syms=(--symbols "$1")
	[ "${NOSYMS:-}" = 1 ] && syms=()
	"$BACKEND" sample "$dom" --hz "$hz" "${syms[@]}" >"$T/$name.out" 2>"$T/$name.err" ||
		{ fail "$name: sample: $(cat "$T/$name.err")"; return 1; }
	grep -q "samples" "$T/$name.out" && ok || fail "$name: no summary: $(cat "$T/$name.out")"
}
# of_two H C: H's percentage of H + C (a function's share of two)
of_two() { awk -v h="$1" -v c="$2" 'BEGIN { printf "%.1f\n", (h + c > 0) ? 100 * h / (h + c) : 0 }'; }

# ---- under valgrind: one program sampled, then the backend's verdict -------------
if [ -n "$VG" ]; then
	sample hotc 2 199 "$T/hot" 2
	"$PROFDB" export 2 --folded "$T/c.folded" --pprof "$T/c.pprof" 2>"$T/err" && ok || fail "export: $(cat "$T/err")"
	dom=$("$XS" create --dir "$XENSIM_DIR" --name cut --exec "$T/hot" 5)
	timeout 2 "$BACKEND" sample "$dom" --symbols "$T/hot" >/dev/null 2>&1 # hung up on: the sampling stops
	"$BACKEND" stop >/dev/null
	wait $BACKEND_PID && ok || fail "the backend under valgrind exited $? (9: errors): $(grep -v '^profile-backend' "$T/backend.log" | head -40)"
	finish test_sampling
	exit
fi

# ---- a C program with frame pointers --------------------------------------------
sample hotc 3 499 "$T/hot" 3
r=$(run_of hotc)
"$PROFDB" export "$r" --folded "$T/c.folded" 2>"$T/err" && ok || fail "export --folded: $(cat "$T/err")"
chain=$(share "$T/c.folded" '(^|;)main;run_for;mid;hot$')
cold=$(share "$T/c.folded" '(^|;)main;run_for;cold$')
at_least "$chain" 60 && ok || fail "C: main;run_for;mid;hot holds $chain% of the samples, expected most: $(sort -k2 -nr -t' ' "$T/c.folded" | head -5)"
at_least "$cold" 5 && ok || fail "C: main;run_for;cold holds $cold%"
"$PROFDB" top "$r" --samples -n 5 >"$T/top.out" 2>"$T/err" && ok || fail "top --samples: $(cat "$T/err")"
"$PROFDB" show "$r" --json >"$T/show.json" && python3 "$S/tests/json_shapes.py" show "$T/show.json" && ok ||
	fail "show --json of a sampled run not as docs/json.md says"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["samples"]; assert s["samples"] > 500 and s["hz"] == 499 and s["ended"], s' \
	"$T/show.json" && ok || fail "show's samples summary: $(cat "$T/show.json")"
# Every pause so far (this domain's) in the backend's pause histogram: as
# many as the ticks that paused (a busy program: most; at most its samples
# and those lost), cumulative buckets.
python3 - "$PROFSVC_RUN_DIR/backend.sock" "$T/show.json" >"$T/hist.out" 2>&1 <<'PY' && ok || fail "the pause histogram: $(cat "$T/hist.out")"
import json, re, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"metrics\n")
text = b"".join(iter(lambda: s.recv(65536), b"")).decode()
fam = "profsvc_backend_sample_pause_seconds"
assert "# TYPE %s histogram" % fam in text, "no histogram family"
buckets = [(m[0], float(m[1])) for m in re.findall(r'^%s_bucket\{le="([^"]+)"\} (\d+)$' % fam, text, re.M)]
count = float(re.search(r"^%s_count (\d+)$" % fam, text, re.M).group(1))
total = float(re.search(r"^%s_sum ([0-9.e+-]+)$" % fam, text, re.M).group(1))
les = [float(le) for le, _ in buckets[:-1]]
assert len(buckets) >= 10 and buckets[-1][0] == "+Inf" and buckets[-1][1] == count, buckets
assert les == sorted(les) and 0.0001 in les, les
assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
summary = json.load(open(sys.argv[2]))["samples"]
samples, lost = summary["samples"], summary.get("lost", 0)
# a pause whose stack was not stored is lost; one that found no thread
# stopped within 20 ms would be neither (never seen)
assert samples / 2 <= count <= samples + lost, (count, samples, lost)
assert 1e-6 <= total / count <= 0.02, total / count
print("pauses", count, "mean us", 1e6 * total / count)
PY
awk '$1 == "hot" { found = 1 } END { exit !found }' "$T/top.out" && ok || fail "top --samples: no hot: $(cat "$T/top.out")"
"$PROFDB" flame "$r" --samples -o "$T/c.svg" 2>"$T/err" && xml_ok "$T/c.svg" && ok || fail "flame --samples: $(cat "$T/err")"
# The same binary natively under perf: the leaf shares agree within 5
# points, as shares of the program's own two functions.  Of all samples,
# ours put a few more in the program's one system call (clock_gettime,
# an [unknown] leaf: libc has no symbols here) than the time it takes:
# a pause's stop comes at the thread's first entry into the kernel after
# it was asked for, and on a host whose interrupts of another CPU take
# 50-70 us (a VM's) a system call is often that entry (4% of the samples
# there, against perf's 75.2 / 24.4% for hot / cold and ours 72.8 /
# 23.1).  That share is bounded here too.
if need perf && perf record -q -F 999 -g -o "$T/perf.data" "$T/hot" 3 >/dev/null 2>"$T/perf.err"; then
	perf report -i "$T/perf.data" --stdio --no-children --sort sym 2>/dev/null >"$T/perf.out"
	p_hot=$(awk '/\] hot$/ { gsub("%", "", $1); print $1; exit }' "$T/perf.out")
	p_cold=$(awk '/\] cold$/ { gsub("%", "", $1); print $1; exit }' "$T/perf.out")
	our_hot=$(share "$T/c.folded" '(^|;)hot$')
	our_cold=$(share "$T/c.folded" '(^|;)cold$')
	p_of=$(of_two "${p_hot:-0}" "${p_cold:-0}")
	our_of=$(of_two "$our_hot" "$our_cold")
	if [ -n "$p_hot" ] && [ -n "$p_cold" ] && [ -n "$our_of" ] && awk -v a="$p_of" -v b="$our_of" 'BEGIN { d = a - b; exit !(d <= 5 && d >= -5) }'; then ok
	else fail "C: hot's share of hot and cold: perf ${p_of}% (${p_hot:-?}/${p_cold:-?}), ours $our_of% ($our_hot/$our_cold)"; fi
	at_least "$(awk -v h="$our_hot" -v c="$our_cold" 'BEGIN { print h + c }')" 90 && ok ||
		fail "C: hot and cold hold only $our_hot + $our_cold% of the samples"
	echo "test_sampling: hot's leaf share: perf $p_hot% (of hot and cold $p_of%), sampled from dom0 $our_hot% ($our_of%)"
elif [ -n "${CI:-}" ]; then
	fail "perf record failed: $(cat "$T/perf.err")"
fi

# ---- a GHC program, not profiled ---------------------------------------------------
if need ghc; then
	mkdir -p "$T/hs" && cp "$S/tests/sampling/Hot.hs" "$T/hs/" &&
		(cd "$T/hs" && ghc -O2 -g -rtsopts -v0 Hot.hs -o hot) || { echo "cannot build Hot.hs"; exit 99; }
	sample hoths 3 499 "$T/hs/hot" 3
	r=$(run_of hoths)
	"$PROFDB" export "$r" --folded "$T/hs.folded" 2>"$T/err" && ok || fail "export --folded (GHC): $(cat "$T/err")"
	# GHC -O2 names the workers $wouter, $wmiddle, $wcrunchHot
	leaf=$(share "$T/hs.folded" '(^|;)Main[.]([$]w)?crunchHot$')
	callers=$(share "$T/hs.folded" 'Main[.]([$]w)?outer;Main[.]([$]w)?middle;Main[.]([$]w)?crunchHot$')
	at_least "$leaf" 50 && ok || fail "GHC: Main.crunchHot is the leaf of $leaf% of the samples: $(sort -k2 -nr -t' ' "$T/hs.folded" | head -5)"
	at_least "$callers" 30 && ok ||
		fail "GHC: Main.outer;Main.middle;Main.crunchHot in $callers% of the samples (the STG walk's callers): $(sort -t' ' -k2 -nr "$T/hs.folded" | head -5)"
	echo "test_sampling: GHC: crunchHot leaf $leaf%, with its Haskell callers $callers%"
	# A program that lives in its collector: the GC's time under [GC],
	# none of the program's frames under it; the rest its own stacks.
	cp "$S/tests/sampling/Alloc.hs" "$T/hs/" && (cd "$T/hs" && ghc -O2 -g -rtsopts -v0 Alloc.hs -o alloc) ||
		{ echo "cannot build Alloc.hs"; exit 99; }
	sample alloc 2 499 "$T/hs/alloc" 1
	"$PROFDB" export "$(run_of alloc)" --folded "$T/alloc.folded" 2>"$T/err" && ok || fail "export (GC): $(cat "$T/err")"
	gc=$(share "$T/alloc.folded" '^\[GC\];')
	at_least "$gc" 40 && ok || fail "GC: [GC] holds $gc% of a program that spends most of its time collecting"
	grep -q '^\[GC\];.*Main[.]' "$T/alloc.folded" && fail "GC: Haskell frames under [GC]: $(grep '^\[GC\];.*Main[.]' "$T/alloc.folded" | head -3)" || ok
	echo "test_sampling: GC: [GC] holds $gc% of Alloc's samples"
fi

# ---- an idle domain: its samples [idle] ----------------------------------------------
# (all but the tick or two that may find sleep on its CPU as it starts or
# after its sleep: 192 [idle] and one stack once)
NOSYMS=1 sample idle 1 199 /bin/sleep 1
"$PROFDB" export "$(run_of idle)" --folded "$T/idle.folded" 2>"$T/err" && ok || fail "export (idle): $(cat "$T/err")"
idle=$(share "$T/idle.folded" '^\[idle\]$')
at_least "$idle" 97 && ok || fail "idle: [idle] $idle% of the samples: $(sort -t' ' -k2 -nr "$T/idle.folded" | head -3)"

# ---- the exports, read by the tools they are for ---------------------------------------
r=$(run_of hotc)
"$PROFDB" export "$r" --pprof "$T/c.pb.gz" --speedscope "$T/c.speedscope.json" --perf-script "$T/c.perf" 2>"$T/err" && ok ||
	fail "export --pprof --speedscope --perf-script: $(cat "$T/err")"
if need go; then
	GOCACHE="$T/gocache" PPROF_TMPDIR="$T/pprof" GOTOOLCHAIN=local go tool pprof -top -sample_index=samples "$T/c.pb.gz" \
		>"$T/pprof.out" 2>"$T/err" && ok || fail "go tool pprof: $(cat "$T/err")"
	awk 'f && NF >= 6 { print $NF; exit } /flat%/ { f = 1 }' "$T/pprof.out" | grep -qx hot && ok ||
		fail "go tool pprof's top function is not hot: $(head -12 "$T/pprof.out")"
fi
NM=${PROFSVC_PEERS:-$S/tests/peers/node_modules}
if [ -f "$NM/speedscope/dist/release/file-format-schema.json" ] && need node; then
	node "$S/tests/peers/validate.cjs" "$NM" "$NM/speedscope/dist/release/file-format-schema.json" \
		"$T/c.speedscope.json" >"$T/err" 2>&1 && ok || fail "speedscope's schema refused the export: $(head -5 "$T/err")"
	# speedscope's own page loads the speedscope file, and its perf
	# importer the perf script text (as test_peers.sh loads the .prof's)
	if need chromium; then
		for f in c.speedscope.json c.perf; do
			echo "speedscope.loadFileFromBase64(\"$f\", \"$(base64 -w0 "$T/$f")\")" >"$T/load.js"
			timeout 90 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
				--allow-file-access-from-files --user-data-dir="$T/chrome" --virtual-time-budget=10000 --dump-dom \
				"file://$NM/speedscope/dist/release/index.html#localProfilePath=$T/load.js" >"$T/ss.html" 2>/dev/null
			# it draws on a canvas: the profile's name in the title says it loaded
			grep -q '<title>[^<]*hotc[^<]* - speedscope</title>' "$T/ss.html" && ok ||
				fail "speedscope's page does not show $f: $(sed 's/<[^>]*>/ /g' "$T/ss.html" | tr -s ' ' | head -c 300)"
		done
	fi
elif [ -n "${CI:-}" ]; then
	fail "speedscope's schema missing ($NM)"
fi
grep -c '^$' "$T/c.perf" | awk -v n="$(awk '{ s += $NF } END { print s }' "$T/c.folded")" '{ exit !($1 >= n - 1 && $1 <= n) }' && ok ||
	fail "perf script: not one block a sample ($(grep -c '^$' "$T/c.perf") blank lines)"

# ---- hostile stacks beside an honest program ------------------------------------------
# (in subshells: their own ok/fail counts are lost, so each one's exit
# status is counted here, and its summary looked at again)
declare -A bad_pid
for mode in loop random deep wild; do
	sample "bad-$mode" 2 199 "$T/hostile" "$mode" 2 &
	bad_pid[$mode]=$!
done
sample honest 3 499 "$T/hot" 3
for mode in loop random deep wild; do
	wait "${bad_pid[$mode]}" && ok || fail "hostile $mode: xensim create or sample failed: $(cat "$T/bad-$mode.err" 2>/dev/null)"
	grep -q "samples" "$T/bad-$mode.out" && ok || fail "hostile $mode: $(cat "$T/bad-$mode.out" "$T/bad-$mode.err")"
done
r=$(run_of honest)
"$PROFDB" export "$r" --folded "$T/honest.folded" 2>"$T/err" && ok || fail "export honest: $(cat "$T/err")"
# walked whole beside them: its stacks reach main through run_for (where
# the leaf lands depends on the host's load: a descheduled program is
# caught in its clock_gettime call more often than a running one)
whole=$(share "$T/honest.folded" '(^|;)main;run_for(;|$)')
at_least "$whole" 90 && ok || fail "honest beside hostile: main;run_for in $whole% of its stacks"
# and its leaves are its own: of the samples in its two functions, hot's
# whole chain holds most, as it does alone (~75%).  The rest, caught in
# clock_gettime, grows with the host's load: under the sanitizers beside
# other suites hot's chain once held only 26% of all the samples.
chain=$(share "$T/honest.folded" '(^|;)main;run_for;mid;hot$')
cold_chain=$(share "$T/honest.folded" '(^|;)main;run_for;cold$')
chain_of=$(of_two "$chain" "$cold_chain")
at_least "$chain_of" 55 && at_least "$(awk -v h="$chain" -v c="$cold_chain" 'BEGIN { print h + c }')" 10 && ok ||
	fail "honest beside hostile: main;run_for;mid;hot $chain%, main;run_for;cold $cold_chain% ($chain_of% of the two): $(sort -t' ' -k2 -nr "$T/honest.folded" | head -5)"
"$BACKEND" status >/dev/null && ok || fail "the backend is down after the hostile guests"

# ---- profdb serve: a sampled run's page and files ---------------------------------------
if need curl; then
	"$PROFDB" serve --listen 127.0.0.1:0 2>"$T/serve.log" &
	SERVE_PID=$!
	for _ in $(seq 100); do grep -q 'serving' "$T/serve.log" && break; sleep 0.1; done
	PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$T/serve.log" | head -1 | cut -d: -f2)
	r=$(run_of hotc)
	code=$(curl -s -o "$T/page.html" -w '%{http_code}' "http://127.0.0.1:$PORT/runs/$r")
	[ "$code" = 200 ] && grep -q '<svg' "$T/page.html" && grep -q '>mid<' "$T/page.html" && ok ||
		fail "serve: run $r's page ($code) has no flame graph of its samples"
	grep -q "/runs/$r/prof\"" "$T/page.html" && fail "serve: a sampled run's page links a .prof it has not" || ok
	for f in folded speedscope.json samples.pb.gz; do
		code=$(curl -s -o "$T/dl.$f" -w '%{http_code}' "http://127.0.0.1:$PORT/runs/$r/$f")
		[ "$code" = 200 ] && [ -s "$T/dl.$f" ] && ok || fail "serve: /runs/$r/$f: $code"
	done
	cmp -s "$T/dl.folded" "$T/c.folded" && ok || fail "serve's folded stacks differ from profdb export's"
	# the page in a real browser: the flame graph drawn, its frames named
	if need chromium; then
		timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1280,1400 \
			--screenshot="$T/run.png" --dump-dom "http://127.0.0.1:$PORT/runs/$r" >"$T/dom.html" 2>/dev/null
		n=$(grep -o '<g class="frame"[ >]' "$T/dom.html" | wc -l) # (the flame graph's script may give it a style)
		[ "$n" -ge 4 ] && grep -q '>hot<' "$T/dom.html" && ok ||
			fail "chromium: the sampled run's flame graph has $n frames"
	elif [ -n "${CI:-}" ]; then
		fail "chromium missing"
	fi
	kill $SERVE_PID; wait $SERVE_PID 2>/dev/null
fi

# ---- every fresh xensim gives its first domain a uuid of its own (random, v4) ---------------
for i in 1 2; do
	"$XS" start --dir "$T/x$i" >/dev/null && "$XS" create --dir "$T/x$i" --name first >/dev/null &&
		"$XS" list --dir "$T/x$i" | awk '$NF == "first" { print $3 }' >"$T/uuid$i"
	"$XS" stop --dir "$T/x$i" >/dev/null
done
[ -s "$T/uuid1" ] && ! cmp -s "$T/uuid1" "$T/uuid2" && grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$T/uuid1" && ok ||
	fail "two fresh xensims' first domains: uuids $(cat "$T/uuid1") and $(cat "$T/uuid2")"

# ---- a restless program: the sampler is its tracer -----------------------------------------
# Threads made and ended all the time (seized as they come, gone mid-pause),
# signals it sends itself (each must reach its handler: a stop that is not
# the sampler's delivers its signal), a SIGSTOP that must hold every thread
# until its SIGCONT (a group-stop is left stopped): the program says what
# it saw, as it would untraced; its run ends complete.
sample restless 0 999 "$T/restless" 50
grep -q "restless: 0 signals lost of 50, 150 threads, 5 of 5 stops held" "$T/restless.console" &&
	grep -q "domain ended" "$T/restless.out" && ok ||
	fail "a restless program sampled at 999 Hz: $(cat "$T/restless.console" "$T/restless.out")"
r=$(complete_run restless 100)
[ -n "$r" ] && "$PROFDB" show "$r" --json | grep -q '"state":"complete"' && ok ||
	fail "the restless program's run: $("$PROFDB" show "$r" 2>&1)"
# Three restless programs and a hot one sampled at once: one sampling
# thread traces them all (not a thread per domain), and each status a
# wait takes, during whichever domain's pause, reaches its own program.
BPID=$(cat "$PROFSVC_RUN_DIR/profile-backend.pid")
threads() { ls "/proc/$BPID/task" | wc -l; }
before=$(threads)
pids=()
# (in the background without ok/fail, which a subshell would not count)
together() { # NAME PROGRAM ARGS...
	local name=$1 dom
	shift
	dom=$("$XS" create --dir "$XENSIM_DIR" --name "$name" --console "$T/$name.console" --exec "$@") &&
		"$BACKEND" sample "$dom" --hz 999 --symbols "$1" >"$T/$name.out" 2>&1
}
for i in 1 2 3; do together "restless$i" "$T/restless" 50 & pids+=($!); done
together hot4 "$T/hot" 3 & pids+=($!)
sleep 1.5
during=$(threads)
wait "${pids[@]}"
for i in 1 2 3; do
	grep -q "restless: 0 signals lost of 50, 150 threads, 5 of 5 stops held" "$T/restless$i.console" &&
		grep -q "domain ended" "$T/restless$i.out" && ok ||
		fail "restless$i beside three others: $(cat "$T/restless$i.console" "$T/restless$i.out")"
done
grep -q "domain ended" "$T/hot4.out" && ! grep -q " 0 samples" "$T/hot4.out" && ok ||
	fail "hot4 beside three restless programs: $(cat "$T/hot4.out")"
[ "$during" -le $((before + 2)) ] && ok ||
	fail "four domains sampled took the backend from $before to $during threads (one sampling thread wanted)"

# ---- a program that dies mid-sampling; bad requests ------------------------------------
# (2 s of CPU: under sanitizers on a loaded host 0.3 s was over before
# the sampler came)
dom=$("$XS" create --dir "$XENSIM_DIR" --name short --exec "$T/hot" 2)
"$BACKEND" sample "$dom" --symbols "$T/hot" >"$T/short.out" 2>&1 && grep -q "domain ended" "$T/short.out" && ok ||
	fail "a program ending mid-sampling: $(cat "$T/short.out")"
# --seconds: the sampling ends at its time (its last tick the last before
# it), the domain runs on: a program with 4 s of CPU to go is still there
dom=$("$XS" create --dir "$XENSIM_DIR" --name timed --exec "$T/hot" 4)
"$BACKEND" sample "$dom" --hz 199 --seconds 1 --symbols "$T/hot" >"$T/timed.out" 2>&1 &&
	grep -q "time is up" "$T/timed.out" && ok || fail "sample --seconds 1: $(cat "$T/timed.out")"
"$XS" list --dir "$XENSIM_DIR" | awk '$NF == "timed" { f = 1 } END { exit !f }' && ok ||
	fail "the domain sampled for 1 s did not run on: $("$XS" list --dir "$XENSIM_DIR")"
"$PROFDB" show "$(run_of timed)" --json >"$T/timed.json" 2>"$T/err" &&
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["samples"]; n = s["samples"] + s.get("lost", 0); assert 20 <= n <= 240, s' \
		"$T/timed.json" && ok || fail "1 s at 199 Hz: $(cat "$T/timed.json" "$T/err")"
"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null
expect 1 "no domain 'nosuch'" -- "$BACKEND" sample nosuch
plain=$("$XS" create --dir "$XENSIM_DIR" --name notaprogram)
expect 1 "not a program" -- "$BACKEND" sample "$plain"
expect 2 "--hz takes 1..10000" -- "$BACKEND" sample "$plain" --hz 0
[ -z "$(run_of notaprogram)" ] && ok || fail "a domain that cannot be sampled got a run"
# a guest kernel's map that is missing, or Debian's System.map stub
expect 2 "--kernel-symbols $T/nosuch.map: No such file" -- "$BACKEND" sample "$plain" --kernel-symbols "$T/nosuch.map"
echo "ffffffffffffffff B The real System.map is in the linux-image-6.1.0-56-amd64-dbg package" >"$T/stub.map"
stubdom=$("$XS" create --dir "$XENSIM_DIR" --name stubmap --exec "$T/hot" 1)
expect 1 "not a kernel's System.map" -- "$BACKEND" sample "$stubdom" --kernel-symbols "$T/stub.map"
[ -z "$(run_of stubmap)" ] && ok || fail "a domain sampled with a stub map got a run"
expect 1 "has no stack samples" -- "$PROFDB" top 1 --samples

# ---- start --sample-hz: every new domain, its config's kernel the symbols ----------------
"$BACKEND" stop >/dev/null
start_backend --sample-hz 199
printf 'name = "fromcfg"\nkernel = "%s"\nextra = "1"\n' "$T/hot" >"$T/k.cfg"
"$BACKEND" create --platform sim "$T/k.cfg" >"$T/create.out" 2>"$T/err" && ok || fail "create a program's domain: $(cat "$T/err")"
r=$(complete_run fromcfg 100)
"$PROFDB" export "$r" --folded "$T/cfg.folded" 2>"$T/err" && ok || fail "export (--sample-hz): $(cat "$T/err")"
chain=$(share "$T/cfg.folded" '(^|;)main;run_for;mid;hot$')
at_least "$chain" 50 && ok || fail "--sample-hz with the kernel's symbols: main;run_for;mid;hot $chain%: $(head -3 "$T/cfg.folded")"
# Many domains at once: their flushes share store batches, several of them
# a flush (BATCH_BYTES); every domain's stream whole, its samples its own
# (a sleep: [idle] but for its start)
many=40
for i in $(seq $many); do
	"$XS" create --dir "$XENSIM_DIR" --name "many$i" --exec /bin/sleep 1.5 >/dev/null || fail "create many$i"
done
bad=
for i in $(seq $many); do
	r=$(complete_run "many$i" 150)
	"$PROFDB" show "$r" --json >"$T/many.json" 2>"$T/err" &&
		python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["samples"]; assert 150 <= s["samples"] <= 400 and s["ended"], s' \
			"$T/many.json" 2>/dev/null &&
		"$PROFDB" export "$r" --folded "$T/many.folded" --force 2>"$T/err" && at_least "$(share "$T/many.folded" '^\[idle\]$')" 90 ||
		bad="$bad many$i(run $r: $(grep -o "\"samples\":{[^}]*}" "$T/many.json"; cat "$T/err"))"
done
[ -z "$bad" ] && ok || fail "$many domains sampled at once, not every stream whole:$bad"
# A config's kernel that is no ELF (a PV Linux guest's is a bzImage): the
# domain is still sampled, by addresses (the log says why)
printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/hot" >"$T/not-elf.sh" && chmod +x "$T/not-elf.sh"
printf 'name = "notelf"\nkernel = "%s"\nextra = "1"\n' "$T/not-elf.sh" >"$T/n.cfg"
"$BACKEND" create --platform sim "$T/n.cfg" >/dev/null 2>"$T/err" && ok || fail "create with a kernel that is no ELF: $(cat "$T/err")"
r=$(complete_run notelf 100)
"$PROFDB" export "$r" --folded "$T/n.folded" 2>"$T/err" && [ -s "$T/n.folded" ] && ok ||
	fail "a kernel that is no ELF: no samples ($(cat "$T/err"); $(grep notelf -A2 "$T/backend.log" | tail -3))"
# A HaLVM guest (the frontend-stub as its kernel) writing its profiles to
# its disks while sampled: one run, its .prof, .hp and samples.
printf 'name = "halvm-sampled"\nkernel = "%s"\nextra = "--mode halvm --platform sim -q --pace 20 --prof %s --hp %s"\n' \
	"$STUB" "$FIX/leak/leak-hr.prof" "$FIX/leak/leak-hr.hp" >"$T/h.cfg"
echo 'disk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvdp2, backendtype=profsvc" ]' >>"$T/h.cfg"
"$BACKEND" create --platform sim "$T/h.cfg" >/dev/null 2>"$T/err" && ok || fail "create a sampled HaLVM guest: $(cat "$T/err")"
r=$(complete_run halvm-sampled 150)
devs=$("$PROFDB" show "$r" | grep -c '^device ')
[ "$devs" = 3 ] && ok || fail "the sampled HaLVM guest's run has $devs devices, not .prof, .hp and samples: $("$PROFDB" show "$r" | grep '^device')"
"$PROFDB" export "$r" --hp "$T/h.hp" --force >/dev/null 2>&1 && cmp -s "$T/h.hp" "$FIX/leak/leak-hr.hp" && ok ||
	fail "the sampled HaLVM guest's .hp is not byte-exact"
"$PROFDB" export "$r" --folded "$T/h.folded" 2>"$T/err" && [ -s "$T/h.folded" ] && ok || fail "its samples: $(cat "$T/err")"
finish test_sampling
