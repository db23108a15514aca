# tests/lib.sh - what the shell tests share (sourced by test_cli.sh,
# test_view.sh, test_peers.sh): counting checks, running a command and
# checking its exit status and message, importing a GHC profile pair as a
# run the way old HaLVM raw images are, and checking JSON and XML.
# The caller sets B, S, T (a scratch directory) and PROFSVC_DB first.
PROFDB="$B/profdb"
MKDISK="$B/frontend-stub/halvm-mkdisk"
FIX="$S/tests/data/ghc"
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
