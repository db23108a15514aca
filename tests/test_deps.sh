#!/usr/bin/env bash
# test_deps.sh - quickstart installs what the tests, the demo and the build
# need (tests/deps_check.py says how): every program they call is minbase's,
# the project's, or in tests/programs.tsv with a package of quickstart's
# lists; every library configure asks for comes from a package in
# quickstart's demo list and in the README's dom0 apt-get line.  One failure
# per problem.  A fast, static check: `make check-fresh` is the slow one
# that proves it on a bare Debian 12.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
python3 "$S/tests/deps_check.py" "$S" >"$T/out" 2>&1
rc=$?
while IFS= read -r line; do fail "$line"; done < <(grep -v '^deps: ' "$T/out")
[ $rc = 0 ] && ok
[ $rc = 0 ] || [ "$fails" != 0 ] || fail "deps_check.py exited $rc"
tail -1 "$T/out"

# The check itself: it finds a program a test calls that no list installs,
# a table row whose package quickstart does not install, and a package
# quickstart's demo list lacks.  (A copy of the tree's files it reads.)
P="$T/planted"
mkdir -p "$P/.ci"
cp "$S/configure.ac" "$S/README.md" "$S/Makefile.am" "$S/quickstart" "$P/"
cp -r "$S/demo" "$S/bench" "$P/"
(cd "$S" && find tests -path tests/peers/node_modules -prune -o -type f -print) | while IFS= read -r f; do
	mkdir -p "$P/$(dirname "$f")" && cp "$S/$f" "$P/$f"
done
planted() { # WHAT WORDS: the check of $P fails and says WORDS
	python3 "$P/tests/deps_check.py" "$P" >"$T/pout" 2>&1 && { fail "$1: not found"; return; }
	grep -q -- "$2" "$T/pout" && ok || fail "$1: the check did not say '$2': $(head -3 "$T/pout")"
}
python3 "$P/tests/deps_check.py" "$P" >"$T/pout" 2>&1 && ok || fail "the copy fails before anything is planted: $(head -3 "$T/pout")"
# a test calling a program of a package no list has (curl's row gone)
grep -v '^curl	' "$S/tests/programs.tsv" >"$P/tests/programs.tsv"
printf 'curl -s http://localhost/ >/dev/null\n' >"$P/tests/test_planted.sh"
planted "a program called that the table lacks" "curl"
cp "$S/tests/programs.tsv" "$P/tests/"
# a need the table lacks, for a program this machine does not have
printf 'command -v no-such-peer-xyz >/dev/null || exit 77\n' >"$P/tests/test_planted.sh"
planted "a declared need the table lacks" "no-such-peer-xyz"
rm -f "$P/tests/test_planted.sh"
# a benchmark's peer (bench/benchlib.py's need) the table lacks
printf "import benchlib\nbenchlib.need('no-such-bench-peer-xyz', 'x')\n" >"$P/bench/planted_bench.py"
planted "a benchmark's declared peer the table lacks" "no-such-bench-peer-xyz"
rm -f "$P/bench/planted_bench.py"
# a row whose package quickstart does not install
printf 'curl\tno-such-package-xyz\tplanted\n' >>"$P/tests/programs.tsv"
printf 'curl -s http://localhost/ >/dev/null\n' >"$P/tests/test_planted.sh"
planted "a row's package quickstart lacks" "no-such-package-xyz"
cp "$S/tests/programs.tsv" "$P/tests/"; rm -f "$P/tests/test_planted.sh"
# a library configure asks for, from a package quickstart's demo list lacks
if command -v dpkg-query >/dev/null && pkg-config --exists libdw 2>/dev/null; then
	sed 's/ libdw-dev / /' "$S/quickstart" >"$P/quickstart"
	planted "a configure library quickstart's demo list lacks" "libdw-dev's, not in quickstart's demo list"
	cp "$S/quickstart" "$P/quickstart"
	sed 's/ libdw-dev / /' "$S/README.md" >"$P/README.md"
	planted "a configure library the README's apt-get line lacks" "libdw-dev's, not in README"
fi
finish test_deps
