# tests/lib.sh - what the shell tests share.  Every shell test sources it
# first, before anything else it does:
#
#     set -uo pipefail
#     . "${TOP_SRCDIR:-.}/tests/lib.sh"
#
# The preamble it runs gives the test:
#  - B (the build tree, $TOP_BUILDDIR) and S (the source tree, $TOP_SRCDIR);
#  - T, a private scratch directory ($TMPDIR/profsvc-NAME.XXXXXX for
#    tests/test_NAME.sh), with PROFSVC_DB=$T/p.db in the environment;
#  - the programs: PROFDB, MKDISK, XS (xensim), BACKEND (profile-backend),
#    STUB (frontend-stub); the GHC fixtures: FIX;
#  - PROFSVC_VALGRIND=1 (make check-valgrind): VG, the valgrind command to
#    put before a program whose memory errors and leaks must fail its exit
#    status (9), and SLOW, the factor for the test's timeouts (1 without);
#  - on exit: the simulated host and the backend stopped (with_xensim),
#    what at_exit asked for done, then T removed (PROFSVC_KEEP_TMP=1 keeps
#    it and says where).
# A system test then calls with_xensim (a simulated host of its own:
# XENSIM_DIR=$T/xen, PROFSVC_RUN_DIR=$T/run) and starts what it needs with
# start_xensim and start_backend.  The rest: counting checks, running a
# command and checking its exit status and message, importing a GHC profile
# pair as a run the way old HaLVM raw images are, checking JSON and XML.
B=${TOP_BUILDDIR:-.}
S=${TOP_SRCDIR:-.}
NAME=$(basename "$0" .sh)
NAME=${NAME#test_}
T=$(mktemp -d "${TMPDIR:-/tmp}/profsvc-$NAME.XXXXXX") || { echo "no scratch directory"; exit 99; }
export PROFSVC_DB="$T/p.db"
PROFDB="$B/profdb"
MKDISK="$B/frontend-stub/halvm-mkdisk"
XS="$B/xensim/xensim"
BACKEND="$B/profile-backend"
STUB="$B/frontend-stub/frontend-stub"
FIX="$S/tests/data/ghc"
VG= SLOW=1
if [ "${PROFSVC_VALGRIND:-}" = 1 ]; then
	SLOW=10
	VG="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect"
fi

lib_xensim=no
lib_at_exit=()
# at_exit CMD: CMD (shell text, evaluated then) runs on exit, once the
# backend and xensim are stopped and before T is removed
at_exit() { lib_at_exit+=("$1"); }
# keep_at_exit FILE...: with PROFSVC_KEEP=DIR, the FILEs (shell words,
# evaluated on exit: quote them, globs allowed) are copied into DIR on exit
keep_at_exit() {
	at_exit "[ -n \"\${PROFSVC_KEEP:-}\" ] && mkdir -p \"\$PROFSVC_KEEP\" && cp $* \"\$PROFSVC_KEEP/\" 2>/dev/null"
}
lib_exit() {
	if [ $lib_xensim = yes ]; then
		"$BACKEND" stop >/dev/null 2>&1
		"$XS" stop --dir "$XENSIM_DIR" >/dev/null 2>&1
	fi
	local cmd
	for cmd in "${lib_at_exit[@]}"; do eval "$cmd"; done
	if [ -n "${PROFSVC_KEEP_TMP:-}" ]; then echo "test_$NAME: keeping $T"; else rm -rf "$T"; fi
}
trap lib_exit EXIT
# with_xensim: the test's own simulated host and backend run directory
# (exported for every program it runs), both stopped on exit
with_xensim() {
	export XENSIM_DIR="$T/xen" PROFSVC_RUN_DIR="$T/run"
	mkdir -p "$PROFSVC_RUN_DIR"
	lib_xensim=yes
}
# alone_among_timed: waits until no other suite that called it in this
# build runs, and holds that until this one exits.  For the suites whose
# timing the other's load breaks under `make -j check`: test_trace.sh's
# guests overwrite their rings in a fraction of a second, and
# test_sampling.sh's 999 Hz pauses interrupt the other CPU (beside it,
# on a VM whose interrupts cost 50 us, test_trace.sh's HaLVM writes timed
# out and a trace was not mapped in time under the sanitizers).  The lock
# is a file outside the build tree (distcheck wants nothing left there),
# held by a watcher of this shell, not by the shell itself, whose every
# program (a backend left running, say) would inherit and hold it; a
# suite waits 20 minutes at most, then runs anyway.
alone_among_timed() {
	command -v flock >/dev/null && command -v mkfifo >/dev/null || return 0
	local key me=$$
	key=$(printf '%s' "$B" | cksum | cut -d' ' -f1)
	mkfifo "$T/timed.fifo" || return 0
	(
		exec 8>"${TMPDIR:-/tmp}/profsvc-timed-$key.lock"
		flock -w 1200 8
		echo go >"$T/timed.fifo"
		while kill -0 "$me" 2>/dev/null; do sleep 0.5; done
	) </dev/null >/dev/null 2>&1 &
	read -r _ <"$T/timed.fifo"
}
# start_xensim: the simulated host in $XENSIM_DIR (exit 99 when it fails)
start_xensim() { "$XS" start --dir "$XENSIM_DIR" >/dev/null || { echo "xensim start failed"; exit 99; }; }
# start_backend [OPTION...]: profile-backend daemonised on it, serving
# $PROFSVC_DB (exit 99 when it fails)
start_backend() {
	"$BACKEND" start --platform sim --db "$PROFSVC_DB" "$@" >/dev/null || { echo "backend start failed"; exit 99; }
}
# guest_cfg NAME: $T/g.cfg, the xl config of a HaLVM guest NAME with both
# profiles on profsvc disks (xvdp1, xvdp2)
guest_cfg() {
	printf '%s\n' "name = \"$1\"" 'kernel = "k"' \
		"disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc' ]" >"$T/g.cfg"
}

# (the sampling suites' folded-stack figures)
# share FOLDED PATTERN: the percentage of samples whose stack matches
share() {
	awk -v pat="$2" '{ n = $NF; total += n; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ pat) hit += n }
	                 END { printf "%.1f\n", total ? 100 * hit / total : 0 }' "$1"
}
# at_least A B: A >= B (decimals)
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

fails=0
pass=0
ok()   { pass=$((pass + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect STATUS WORDS -- CMD...: runs CMD, checks its exit status and that
# stderr contains WORDS (when not empty)
expect() {
	local want=$1 words=$2; shift 3
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		fail "'$*' exited $got, want $want; stderr: $(head -3 "$T/err")"
	elif [ -n "$words" ] && ! grep -qi -- "$words" "$T/err"; then
		fail "'$*' stderr lacks '$words': $(cat "$T/err")"
	else
		ok
	fi
}
same() { if cmp -s "$1" "$2"; then ok; else fail "$1 and $2 differ"; fi; }
json_ok() { [ "$(sqlite3 :memory: "select json_valid(readfile('$1'))")" = 1 ]; }
xml_ok() { python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" 2>"$T/xmlerr"; }
# need PROG...: 0 when every PROG is on the PATH.  When one is not, under
# CI (CI set) the test fails there (exit 1): quickstart test installs every
# peer, so a missing one is a missing install step, never a skip; the
# message names the Debian package (tests/programs.tsv, which
# tests/deps_check.py holds to quickstart's lists).  Elsewhere it says
# what is missing and returns 1, for the caller to skip what needs it.
need() {
	local p missing="" pkgs=""
	for p in "$@"; do command -v "$p" >/dev/null || missing="$missing $p"; done
	[ -z "$missing" ] && return 0
	for p in $missing; do
		pkgs="$pkgs $(awk -F'\t' -v p="$p" '$1 == p { split($2, a, "|"); print a[1] }' "$S/tests/programs.tsv" 2>/dev/null)"
	done
	echo "test_$NAME: missing:$missing (Debian package:$pkgs; quickstart test installs it)"
	[ -n "${CI:-}" ] && exit 1
	return 1
}
# with_browser: NM, tests/peers' npm packages (PROFSVC_PEERS names
# another node_modules), and browser=yes when chromium, node and
# puppeteer-core are there; browser=no when not, and under CI=true the
# test stops there (exit 1: quickstart test installs them)
with_browser() {
	NM=${PROFSVC_PEERS:-$S/tests/peers/node_modules}
	browser=yes
	command -v chromium >/dev/null && command -v node >/dev/null && [ -d "$NM/puppeteer-core" ] && return 0
	browser=no
	[ -z "${CI:-}" ] && return 0
	echo "test_$NAME: chromium, node or $NM/puppeteer-core missing (quickstart test installs them)"
	exit 1
}
# browser_check SECONDS SCRIPT SHOT... -- ARG...: with browser=yes, node
# runs tests/peers/SCRIPT (NM, then the ARGs) within SECONDS: its exit
# status is a check and its last line is shown; each SHOT, a screenshot it
# takes into T, is a check.  Says so when the browser checks are skipped.
browser_check() {
	local secs=$1 script=$2 shots=() out f
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do shots+=("$1"); shift; done
	shift
	if [ "$browser" != yes ]; then
		echo "test_$NAME: SKIP the browser checks (chromium, node or $NM/puppeteer-core missing)"
		return 0
	fi
	out=$(timeout "$secs" node "$S/tests/peers/$script" "$NM" "$@" 2>&1)
	[ $? = 0 ] && ok || fail "browser: $out"
	echo "$out" | tail -1
	for f in "${shots[@]}"; do
		[ -s "$T/$f" ] && ok || fail "no screenshot $f"
	done
	echo "test_$NAME: screenshots in $T (PROFSVC_KEEP=DIR keeps them)"
}
# import NAME PROF HP [halvm-mkdisk options for the .hp]: a run from a
# GHC profile pair, through raw images as the HaLVM writer makes them
# (--force: the views are also fed a .prof as the .hp, and garbage)
import() {
	local name=$1 prof=$2 hp=$3; shift 3
	"$MKDISK" --prof "$prof" "$T/p.disk" >/dev/null && "$MKDISK" --hp "$@" "$hp" "$T/h.disk" >/dev/null &&
		"$PROFDB" import-disk --force --name "$name" "$T/p.disk" "$T/h.disk" >/dev/null 2>&1 ||
		{ echo "import of $name failed"; exit 99; }
}
# the summary line and exit status every shell test ends with
finish() {
	echo "$1: $pass checks passed, $fails failed"
	[ "$fails" = 0 ]
}
