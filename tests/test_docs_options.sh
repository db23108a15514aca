#!/usr/bin/env bash
# test_docs_options.sh - the help, the man pages, the README and the bash
# completions say the same about the command lines, and what the code does
# (tests/docs_check.py says how): every subcommand and option of profdb,
# profile-backend and xensim, as each one's --help gives them, against the
# getopt tables of the sources, the man pages' SYNOPSIS, COMMANDS and
# OPTIONS, the README's synopses and completion/, both ways; every command
# line the README, docs/ and the man pages show uses real commands and
# options; /api/runs's limit and /api/runs/N/eventlog's type as web/ has
# them; docs/testing.md's suites and fast tier as Makefile.am's; the
# README's links and contents.  One check per comparison, one failure per
# difference.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
python3 "$S/tests/docs_check.py" options "$S" "$B" >"$T/out" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok: "*) ok ;;
	"problem: "*) fail "${line#problem: }" ;;
	esac
done <"$T/out"
# a checker that stops early (a Python error) is a failure too
[ $rc = 0 ] || [ "$fails" != 0 ] || fail "docs_check.py exited $rc: $(tail -5 "$T/out")"
[ "$pass" -gt 100 ] || fail "docs_check.py made only $pass comparisons: $(tail -3 "$T/out")"
tail -1 "$T/out"
finish test_docs_options
