#!/usr/bin/env bash
# test_layout.sh - the README's layout table and the folders' file maps
# match the tree (tests/layout_check.py says how): every top-level folder
# in the table and every folder the table names present, the files a row
# names there, and each file map (the first comment of D/D.h, `name.c
# description` lines) naming exactly the .c files of its folder; and the
# table's `./` row naming exactly the files at the top.  In a git
# checkout the tree is what git tracks; elsewhere (make distcheck) the
# files present under TOP_SRCDIR.  One failure per difference.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
python3 "$S/tests/layout_check.py" "$S" >"$T/out" 2>&1
rc=$?
while IFS= read -r line; do fail "$line"; done < <(grep -v '^layout: ' "$T/out")
[ $rc = 0 ] && ok
[ $rc = 0 ] || [ "$fails" != 0 ] || fail "layout_check.py exited $rc"
tail -1 "$T/out"
finish test_layout
