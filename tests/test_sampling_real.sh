#!/usr/bin/env bash
# test_sampling_real.sh - black-box stack sampling on xensim of programs
# built the way Debian builds them, against Debian's perf on the same
# binaries.  Each program runs as a domain (xensim create --exec), sampled
# from dom0 by profile-backend sample WITHOUT --symbols: the backend finds
# the program's own ELF and its libraries from the program's mappings, at
# the bias each was loaded at, and walks its stacks through their DWARF
# CFI; the same binary runs natively under perf record --call-graph=dwarf,
# whose stacks the test folds itself ($T/NAME.perf.folded):
#  - a C program built with gcc -O2 -g -pie -fPIE (tests/sampling/debian.c:
#    position-independent, no frame pointers) whose comparison function
#    libc's qsort calls back: the leaf shares of crunch and by_key within
#    5 points of perf's; main;rounds;crunch whole (libc's start frames may
#    sit above main); libc's qsort between rounds;sort_some and by_key;
#  - an OCaml native program (ocamlopt -g, tests/sampling/hot_ml.ml): its
#    names demangled (camlHot_ml__crunch_NNN as Hot_ml.crunch), the leaf
#    shares of Hot_ml.crunch and Hot_ml.cool within 5 points of perf's,
#    Hot_ml.rounds above each;
#  - a program whose host takes half of one phase's time (tests/sampling/
#    contend.c, a rival on its CPU): its samples come at wall-clock ticks,
#    but the time they stand for is the vCPU's CPU time since the last
#    (perf script's periods): half and half, as perf's cpu-clock says;
#  - the C program's exports true to its samples: pprof's mappings the
#    program and libc with their build-ids (readelf -n), its locations the
#    sampled addresses with debian.c's lines (go tool pprof -raw, -lines),
#    perf script's every address inside the object it names;
#  - a stripped copy of the C program: its functions [unknown] when
#    sampled, named when read once a symbol file of its build-id is
#    kept (profdb symbols add), or served by debuginfod (a local HTTP
#    server); a file of another build under its build-id never used;
#  - in both, at most 5% of the samples with an [unknown] frame, where
#    perf names every frame (libc's static functions, msort_with_tmp and
#    __libc_start_call_main, have names only in libc6-dbg's debug file:
#    without it perf's stacks have [unknown] frames too, and the check is
#    skipped, saying so).
# Needs gcc; the OCaml part needs ocamlopt, the perf comparison perf
# (each skipped without it, except under CI=true, where all must be there).
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
alone_among_timed
with_xensim
keep_at_exit '"$T"/*.folded' '"$T"/*.out' '"$T"/*.err'
need gcc || exit 77

gcc -O2 -g -pie -fPIE -o "$T/debian" "$S/tests/sampling/debian.c" || { echo "cannot build debian.c"; exit 99; }
ml=no
if need ocamlopt; then
	# (built in T: ocamlopt writes its .cmi, .cmx and .o beside the source)
	mkdir -p "$T/ml" && cp "$S/tests/sampling/hot_ml.ml" "$T/ml/" &&
		(cd "$T/ml" && ocamlopt -g -o hot_ml hot_ml.ml) || { echo "cannot build hot_ml.ml"; exit 99; }
	ml=yes
fi

# within5 A B: A and B at most 5 points apart
within5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= 5 && d >= -5) }'; }
# part A B: A as a percentage of B
part() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", (b > 0) ? 100 * a / b : 0 }'; }
# top FOLDED: its five biggest stacks, for a failure's message
top() { sort -t' ' -k2 -nr "$1" | head -5 | tr '\n' '|'; }

# The patterns the checks use (awk EREs on a folded stack, root first).
C_CRUNCH='(^|;)crunch$'
C_BY_KEY='(^|;)by_key$'
C_CRUNCH_CHAIN='(^|;)main;rounds;crunch$'
# qsort calls qsort_r (a tail call: perf shows qsort_r, as __GI___qsort_r
# with libc6-dbg), which sorts through msort_with_tmp's recursion; a frame
# naming qsort right under sort_some, any frames between it and by_key
C_SORT_CHAIN='(^|;)main;rounds;sort_some;[^;]*qsort[^;]*(;[^;]+)*;by_key$'
ML_CRUNCH='(^|;)Hot_ml[.]crunch$'
ML_COOL='(^|;)Hot_ml[.]cool$'
ML_CRUNCH_CHAIN='(^|;)Hot_ml[.]rounds;Hot_ml[.]crunch$'
ML_COOL_CHAIN='(^|;)Hot_ml[.]rounds;Hot_ml[.]cool$'
UNKNOWN='(^|;)\[unknown\](;|$)'

# ---- the programs natively under perf ---------------------------------------------
# fold_perf: perf script's text (comm,tid,ip,sym,dso, --no-inline
# --no-demangle) as folded stacks, root first, one line a distinct stack:
# a frame by its symbol's name (the version of a library's symbol,
# __libc_start_main@@GLIBC_2.34, left off; perf's inlined frames left out,
# as the sampler names a frame by the symbol its address is in), OCaml's
# names demangled by the sampler's rule (camlHot_ml__crunch_81 as
# Hot_ml.crunch: caml dropped, __ as ., $XX the byte XX, the trailing
# stamp dropped), perf's [unknown] kept, the kernel's frames dropped (the
# sampler sees a program's own stack only)
fold_perf() {
	awk '
	function demangle(s,   out, h) {
		sub(/@.*/, "", s)
		if (s !~ /^caml[A-Z]/) return s
		s = substr(s, 5); sub(/_[0-9]+$/, "", s); gsub(/__/, ".", s)
		out = ""
		while (match(s, /\$[0-9a-fA-F][0-9a-fA-F]/)) {
			h = tolower(substr(s, RSTART + 1, 2))
			out = out substr(s, 1, RSTART - 1) sprintf("%c", 16 * (index("0123456789abcdef", substr(h, 1, 1)) - 1) + index("0123456789abcdef", substr(h, 2, 1)) - 1)
			s = substr(s, RSTART + 3)
		}
		return out s
	}
	function flush(   i, st) {
		if (n) { st = f[n]; for (i = n - 1; i >= 1; i--) st = st ";" f[i]; count[st]++ }
		n = 0
	}
	/^[ \t]+[0-9a-f]+ / {
		if ($NF ~ /kernel\.kallsyms/) next
		sym = $2; for (i = 3; i < NF; i++) sym = sym " " $i
		f[++n] = demangle(sym); next
	}
	{ flush() } # a sample header, or the blank line after its frames
	END { flush(); for (st in count) print st, count[st] }' | sort
}
# perf_fold NAME PROGRAM ARGS...: the program run natively under perf
# record (DWARF unwinding, 999 Hz), folded into $T/NAME.perf.folded
perf_fold() {
	local name=$1
	shift
	perf record -q --call-graph=dwarf -F 999 -o "$T/$name.perf.data" "$@" >/dev/null 2>"$T/$name.perf.err" &&
		perf script -i "$T/$name.perf.data" --no-inline --no-demangle -F comm,tid,ip,sym,dso 2>>"$T/$name.perf.err" |
		fold_perf >"$T/$name.perf.folded" && [ -s "$T/$name.perf.folded" ]
	local rc=$?
	rm -f "$T/$name.perf.data" # (3 s of 8 KiB stack copies at 999 Hz: 25 MB)
	return $rc
}
perf=no
if need perf; then
	if perf_fold debian "$T/debian" 3 && { [ $ml = no ] || perf_fold hotml "$T/ml/hot_ml" 3; }; then
		perf=yes
	elif [ -n "${CI:-}" ]; then
		fail "perf record failed: $(cat "$T"/*.perf.err)"
	else
		echo "test_sampling_real: perf record failed, the comparison with perf skipped: $(cat "$T"/*.perf.err | head -3)"
	fi
fi
# pf NAME PATTERN: perf's share (- without perf)
pf() { if [ $perf = yes ]; then share "$T/$1.perf.folded" "$2"; else echo -; fi; }
if [ $perf = yes ]; then
	# the programs' profiles as they were written (perf's own figures:
	# crunch 68.5%, by_key 26.9%, Hot_ml.crunch 70.0%, Hot_ml.cool 30.0%,
	# every stack whole and named, with libc6-dbg)
	at_least "$(pf debian "$C_CRUNCH_CHAIN")" 60 && at_least "$(pf debian "$C_SORT_CHAIN")" 15 && ok ||
		fail "perf: debian.c's profile is not what it was written for: main;rounds;crunch $(pf debian "$C_CRUNCH_CHAIN")%, qsort..by_key $(pf debian "$C_SORT_CHAIN")%: $(top "$T/debian.perf.folded")"
	if [ $ml = yes ]; then
		at_least "$(pf hotml "$ML_CRUNCH_CHAIN")" 55 && at_least "$(pf hotml "$ML_COOL_CHAIN")" 15 && ok ||
			fail "perf: hot_ml.ml's profile is not what it was written for: rounds;crunch $(pf hotml "$ML_CRUNCH_CHAIN")%, rounds;cool $(pf hotml "$ML_COOL_CHAIN")%: $(top "$T/hotml.perf.folded")"
	fi
fi

# ---- the same binaries as domains, sampled without --symbols ------------------------
start_xensim
start_backend
run_of() { "$PROFDB" query runs --name "$1" --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2; }
# sample_real NAME PROGRAM ARGS...: the program as a domain, sampled at
# 499 Hz until it ends with no --symbols; its summary in $T/NAME.out, its
# samples folded in $T/NAME.folded
sample_real() {
	local name=$1 dom r
	shift
	dom=$("$XS" create --dir "$XENSIM_DIR" --name "$name" --console "$T/$name.console" --exec "$@") ||
		{ fail "$name: xensim create --exec"; return 1; }
	timeout $((120 * SLOW)) "$BACKEND" sample "$dom" --hz 499 >"$T/$name.out" 2>"$T/$name.err" ||
		{ fail "$name: sample: $(cat "$T/$name.err")"; return 1; }
	grep -q "samples" "$T/$name.out" && ok || fail "$name: no summary: $(cat "$T/$name.out")"
	r=$(run_of "$name")
	"$PROFDB" export "$r" --folded "$T/$name.folded" 2>"$T/$name.export.err" && [ -s "$T/$name.folded" ] && ok ||
		{ fail "$name: export --folded of run '$r': $(cat "$T/$name.export.err")"; return 1; }
}
# unknown_check LABEL NAME: at most 5% of NAME's samples with an [unknown]
# frame, where perf names every frame of (nearly) every sample (1%: a
# sample or two caught where perf cannot unwind); skipped, saying why,
# where it does not or without perf
unknown_check() {
	local p o
	p=$(pf "$2" "$UNKNOWN")
	o=$(share "$T/$2.folded" "$UNKNOWN")
	if [ "$p" = - ]; then
		echo "test_sampling_real: $1: [unknown] frames in $o% of the samples; not checked without perf"
	elif at_least 1 "$p"; then
		at_least 5 "$o" && ok ||
			fail "$1: $o% of the samples have an [unknown] frame (perf: $p%): $(grep -F '[unknown]' "$T/$2.folded" | sort -t' ' -k2 -nr | head -3 | tr '\n' '|')"
	else
		echo "test_sampling_real: $1: perf itself leaves [unknown] frames in $p% of its samples (libc6-dbg missing?); ours $o%, not checked"
	fi
}

# ---- the C program: -O2 -g -pie, no frame pointers, a callback from libc --------------
if sample_real debian "$T/debian" 3; then
	F="$T/debian.folded"
	o_crunch=$(share "$F" "$C_CRUNCH") o_by_key=$(share "$F" "$C_BY_KEY")
	p_crunch=$(pf debian "$C_CRUNCH") p_by_key=$(pf debian "$C_BY_KEY")
	if [ $perf = yes ]; then
		within5 "$o_crunch" "$p_crunch" && within5 "$o_by_key" "$p_by_key" && ok ||
			fail "C: leaf shares: crunch perf $p_crunch%, ours $o_crunch%; by_key perf $p_by_key%, ours $o_by_key%: $(top "$F")"
	fi
	chain=$(share "$F" "$C_CRUNCH_CHAIN")
	at_least "$chain" 60 && ok ||
		fail "C: main;rounds;crunch holds $chain% of the samples (perf $(pf debian "$C_CRUNCH_CHAIN")%), expected most: $(top "$F")"
	sorted=$(share "$F" "$C_SORT_CHAIN")
	sorted_of=$(part "$sorted" "$o_by_key")
	at_least "$o_by_key" 10 && at_least "$sorted_of" 80 && ok ||
		fail "C: by_key under main;rounds;sort_some;qsort... in $sorted_of% of its $o_by_key% (perf $(pf debian "$C_SORT_CHAIN")% of $p_by_key%): $(grep 'by_key [0-9]*$' "$F" | sort -t' ' -k2 -nr | head -3 | tr '\n' '|')"
	unknown_check C debian
	# exports true to the samples: pprof's mappings are the objects with
	# their build-ids, its locations the sampled addresses (crunch's loop
	# at more than one), its lines debian.c's; perf script's addresses
	# lie in the objects it names
	if need go; then
		r=$(run_of debian)
		"$PROFDB" export "$r" --pprof "$T/debian.pb.gz" --perf-script "$T/debian.perf" 2>"$T/err" && ok ||
			fail "C: export --pprof --perf-script: $(cat "$T/err")"
		go tool pprof -raw "$T/debian.pb.gz" >"$T/debian.raw" 2>"$T/err" || fail "C: go tool pprof -raw: $(cat "$T/err")"
		bid() { LC_ALL=C readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }
		libc=$(awk '$NF ~ /libc[.]so/ && $2 ~ /x/ { print $NF; exit }' /proc/self/maps)
		grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $T/debian $(bid "$T/debian") " "$T/debian.raw" &&
			grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $libc $(bid "$libc") " "$T/debian.raw" && ok ||
			fail "C: pprof's mappings are not the program and libc with their build-ids: $(sed -n '/^Mappings/,$p' "$T/debian.raw" | tr '\n' '|')"
		n=$(awk '/^Locations/ { on = 1 } on && $4 == "crunch" && $5 ~ /debian[.]c:[0-9]+$/ { print $2 }' "$T/debian.raw" | sort -u | wc -l)
		[ "$n" -ge 2 ] && ok || fail "C: crunch at $n sampled addresses in pprof's locations: $(grep -m5 crunch "$T/debian.raw" | tr '\n' '|')"
		go tool pprof -lines -top -nodecount=3 "$T/debian.pb.gz" 2>/dev/null | grep -Eq ' crunch [^ ]*debian[.]c:[0-9]+$' && ok ||
			fail "C: go tool pprof -lines does not give crunch's lines: $(go tool pprof -lines -top -nodecount=3 "$T/debian.pb.gz" 2>&1 | tail -3 | tr '\n' '|')"
		# every frame's address in perf script lies in a mapping of the
		# object it names
		python3 - "$T/debian.perf" "$T/debian.raw" >"$T/err" 2>&1 <<'PY' && ok || fail "C: perf script's addresses: $(cat "$T/err")"
import re, sys
maps = []
on = False
for line in open(sys.argv[2]):
    if line.startswith("Mappings"): on = True; continue
    m = re.match(r"\d+: 0x([0-9a-f]+)/0x([0-9a-f]+)/0x[0-9a-f]+ (\S+)", line) if on else None
    if m: maps.append((int(m[1], 16), int(m[2], 16), m[3].rsplit("/", 1)[-1]))
frames = bad = 0
for line in open(sys.argv[1]):
    m = re.match(r"\t([0-9a-f]+) .*\((\S+)\)$", line)
    if not m or m[2] == "[unknown]": continue
    frames += 1
    a = int(m[1], 16)
    if not any(lo <= a < hi and dso == m[2] for lo, hi, dso in maps): bad += 1
assert frames > 100 and bad == 0, (frames, bad, maps)
print(frames, "frames")
PY
	fi
	echo "test_sampling_real: C -O2 -pie: leaf crunch perf $p_crunch% ours $o_crunch%, by_key perf $p_by_key% ours $o_by_key%;" \
		"main;rounds;crunch perf $(pf debian "$C_CRUNCH_CHAIN")% ours $chain%, by_key under sort_some;qsort perf $(pf debian "$C_SORT_CHAIN")% ours $sorted%;" \
		"[unknown] perf $(pf debian "$UNKNOWN")% ours $(share "$F" "$UNKNOWN")%"
fi

# ---- a stripped program, named later from its symbols by build-id ---------------------
# The sampler keeps each address with the build-id of its object; a run of
# a stripped build shows its own functions as [unknown] until a symbol
# file of that build-id turns up: profdb symbols add, or debuginfod.
strip -o "$T/debian-stripped" "$T/debian" || { echo "cannot strip"; exit 99; }
export PROFSVC_SYMBOLS="$T/symbols"
if sample_real stripped "$T/debian-stripped" 2; then
	r=$(run_of stripped)
	before=$(share "$T/stripped.folded" '(^|;)\[unknown\]$')
	at_least "$before" 90 && ok || fail "stripped: the leaf is [unknown] in only $before% of the samples before its symbols are known: $(top "$T/stripped.folded")"
	# a file of another build under this build-id's name is not used
	id=$(LC_ALL=C readelf -n "$T/debian" | awk '/Build ID:/ { print $3 }')
	gcc -O1 -g -o "$T/other" "$S/tests/sampling/debian.c" && mkdir -p "$T/symbols/.build-id/${id:0:2}" &&
		cp "$T/other" "$T/symbols/.build-id/${id:0:2}/${id:2}.debug"
	"$PROFDB" export "$r" --folded "$T/wrong.folded" 2>"$T/wrong.err" && grep -q "not the build-id it is filed under" "$T/wrong.err" &&
		at_least "$(share "$T/wrong.folded" '(^|;)\[unknown\]$')" 90 && ok ||
		fail "stripped: a symbol file of another build was used: $(cat "$T/wrong.err"): $(top "$T/wrong.folded")"
	rm -rf "$T/symbols"
	"$PROFDB" symbols add "$T/debian" >"$T/add.out" 2>&1 && grep -q "build-id $id" "$T/add.out" && ok ||
		fail "symbols add: $(cat "$T/add.out")"
	"$PROFDB" symbols add "$T/debian-stripped" >"$T/add2.out" 2>&1 && fail "symbols add of a stripped file succeeded" ||
		{ grep -q "no symbols" "$T/add2.out" && ok || fail "symbols add of a stripped file: $(cat "$T/add2.out")"; }
	"$PROFDB" export "$r" --folded "$T/named.folded" 2>"$T/err" && ok || fail "stripped: export after symbols add: $(cat "$T/err")"
	named=$(share "$T/named.folded" "$C_CRUNCH_CHAIN")
	at_least "$named" 60 && ok || fail "stripped: named from its symbols, main;rounds;crunch holds $named%: $(top "$T/named.folded")"
	# the same from a debuginfod server (its protocol: GET /buildid/ID/debuginfo)
	rm -rf "$T/symbols"
	mkdir -p "$T/dbgd/buildid/$id" && cp "$T/debian" "$T/dbgd/buildid/$id/debuginfo"
	python3 -m http.server --bind 127.0.0.1 --directory "$T/dbgd" 0 >"$T/dbgd.log" 2>&1 &
	dpid=$!
	for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' "$T/dbgd.log" | head -1 | cut -d' ' -f2); [ -n "$port" ] && break; sleep 0.1; done
	DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$T/dbgd-cache" \
		"$PROFDB" export "$r" --folded "$T/dbgd.folded" 2>"$T/err" && ok || fail "stripped: export with debuginfod: $(cat "$T/err")"
	kill $dpid 2>/dev/null
	from_dbgd=$(share "$T/dbgd.folded" "$C_CRUNCH_CHAIN")
	at_least "$from_dbgd" 60 && ok || fail "stripped: named through debuginfod, main;rounds;crunch holds $from_dbgd%: $(top "$T/dbgd.folded") (server log: $(tail -3 "$T/dbgd.log"))"
	echo "test_sampling_real: stripped: leaf [unknown] in $before% of the samples; named from its symbols added later, main;rounds;crunch $named%; through debuginfod $from_dbgd%"
fi
unset PROFSVC_SYMBOLS

# ---- the OCaml program: ocamlopt -g ---------------------------------------------------
if [ $ml = yes ] && sample_real hotml "$T/ml/hot_ml" 3; then
	F="$T/hotml.folded"
	o_crunch=$(share "$F" "$ML_CRUNCH") o_cool=$(share "$F" "$ML_COOL")
	p_crunch=$(pf hotml "$ML_CRUNCH") p_cool=$(pf hotml "$ML_COOL")
	if [ $perf = yes ]; then
		within5 "$o_crunch" "$p_crunch" && within5 "$o_cool" "$p_cool" && ok ||
			fail "OCaml: leaf shares: Hot_ml.crunch perf $p_crunch%, ours $o_crunch%; Hot_ml.cool perf $p_cool%, ours $o_cool%: $(top "$F")"
	fi
	chain=$(share "$F" "$ML_CRUNCH_CHAIN") cool_chain=$(share "$F" "$ML_COOL_CHAIN")
	at_least "$chain" 50 && at_least "$cool_chain" 15 && ok ||
		fail "OCaml: Hot_ml.rounds;Hot_ml.crunch holds $chain% of the samples (perf $(pf hotml "$ML_CRUNCH_CHAIN")%), Hot_ml.rounds;Hot_ml.cool $cool_chain% (perf $(pf hotml "$ML_COOL_CHAIN")%): $(top "$F")"
	unknown_check OCaml hotml
	echo "test_sampling_real: OCaml: leaf Hot_ml.crunch perf $p_crunch% ours $o_crunch%, Hot_ml.cool perf $p_cool% ours $o_cool%;" \
		"rounds;crunch perf $(pf hotml "$ML_CRUNCH_CHAIN")% ours $chain%; [unknown] perf $(pf hotml "$UNKNOWN")% ours $(share "$F" "$UNKNOWN")%"
fi
# ---- CPU time, not wall time: a phase the host takes half of ----------------------------
# contend.c's two phases do the same work; a rival on the program's CPU
# runs during phase_b, which so takes about twice the wall time.  The
# samples are taken at wall-clock ticks (about two thirds in phase_b),
# but each counts for the CPU time its vCPU ran since the last one, so
# the profile's time (perf script's periods, what top and flame weigh
# by) splits as perf's cpu-clock does: half and half.
gcc -O2 -g -pie -fPIE -o "$T/contend" "$S/tests/sampling/contend.c" || { echo "cannot build contend.c"; exit 99; }
# time_share PERFSCRIPT PATTERN: the percentage of the periods of the
# samples one of whose frames' names matches
time_share() {
	awk -v pat="$2" '/^[^\t].*cpu-clock:$/ { if (n) tot += per; per = $(NF - 1); n = 1; hit = 0; next }
	                 /^\t/ { if (!hit && $2 ~ pat) { hit = 1; got += per } }
	                 END { if (n) tot += per; printf "%.1f\n", tot ? 100 * got / tot : 0 }' "$1"
}
if sample_real contend "$T/contend" 3; then
	r=$(run_of contend)
	"$PROFDB" export "$r" --perf-script "$T/contend.perf" 2>"$T/err" && ok || fail "contend: export --perf-script: $(cat "$T/err")"
	t_a=$(time_share "$T/contend.perf" '^phase_a[+]') t_b=$(time_share "$T/contend.perf" '^phase_b[+]')
	w_a=$(share "$T/contend.folded" '(^|;)phase_a(;|$)') w_b=$(share "$T/contend.folded" '(^|;)phase_b(;|$)')
	cpu_b=$(part "$t_b" "$(awk -v a="$t_a" -v b="$t_b" 'BEGIN { print a + b }')")
	wall_b=$(part "$w_b" "$(awk -v a="$w_a" -v b="$w_b" 'BEGIN { print a + b }')")
	p_b=-
	if [ $perf = yes ] && perf record -q -e cpu-clock -F 999 --no-inherit --call-graph=dwarf -o "$T/contend.perf.data" \
		"$T/contend" 3 >/dev/null 2>"$T/contend.perf.err"; then
		perf script -i "$T/contend.perf.data" --no-inline --no-demangle -F comm,tid,ip,sym,dso 2>/dev/null | fold_perf >"$T/contend.perf.folded"
		rm -f "$T/contend.perf.data"
		pa=$(share "$T/contend.perf.folded" '(^|;)phase_a(;|$)') pb=$(share "$T/contend.perf.folded" '(^|;)phase_b(;|$)')
		p_b=$(part "$pb" "$(awk -v a="$pa" -v b="$pb" 'BEGIN { print a + b }')")
		within5 "$p_b" 50 || fail "perf: contend.c's phase_b holds $p_b% of its two phases' CPU time, not half"
	fi
	# the wall-clock ticks do see the phase the host slowed (the check
	# below could fail), and the time is the CPU's
	at_least "$wall_b" 57 && ok || fail "contend: phase_b holds only $wall_b% of the samples: the rival did not slow it"
	within5 "$cpu_b" 50 && { [ "$p_b" = - ] || within5 "$cpu_b" "$p_b"; } && ok ||
		fail "contend: phase_b holds $cpu_b% of the two phases' time (perf $p_b%, samples $wall_b%): not CPU time"
	echo "test_sampling_real: CPU time: phase_b holds $wall_b% of the wall-clock samples, $cpu_b% of the time they stand for (perf's cpu-clock $p_b%)"
fi
finish test_sampling_real
