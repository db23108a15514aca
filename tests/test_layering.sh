#!/usr/bin/env bash
# test_layering.sh - the layers the README and the head comments state
# hold in the product's real includes (tests/layering_check.py says how):
# the folder order of README.md's Layout section ("**Folder order.**"),
# the store's numbered layers (store/store_internal.h), no circle of
# includes between modules, and every file's "May call:" list naming
# what it includes and nothing that does not exist.  One failure per
# problem.  First the checker is shown failing on a copy of the tree with
# a back-include planted (store/ including cli/), a circle (two heap
# modules including each other), a store file including a layer above
# it, a May call naming a file that does not exist, an include its May
# call omits and one written through '..' (README's one include style);
# then it runs on
# the tree itself.  In a git checkout the tree is what git tracks;
# elsewhere (make distcheck) the files present under TOP_SRCDIR.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
CHECK="$S/tests/layering_check.py"

# the copy the plants go into
mkdir -p "$T/tree"
if [ "$(git -C "$S" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$S" && pwd -P)" ]; then
	(cd "$S" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null)
else
	tar -C "$S" -cf - --exclude='./_*' --exclude=./autom4te.cache --exclude=./build-aux .
fi | tar -C "$T/tree" -xf - || fail "cannot copy the tree"

# plant WHAT FILE PATTERN SED: FILE edited by SED in the copy, the checker
# must fail and print a line matching PATTERN; the file is put back after
plant() {
	local what=$1 file=$2 pattern=$3 sed=$4
	cp "$T/tree/$file" "$T/saved"
	sed -i "$sed" "$T/tree/$file"
	if cmp -s "$T/tree/$file" "$T/saved"; then
		fail "$what: the plant changed nothing in $file"
	else
		python3 "$CHECK" "$T/tree" >"$T/plant.out" 2>&1
		local rc=$?
		if [ $rc = 1 ] && grep -Eq -- "$pattern" "$T/plant.out"; then
			ok
			echo "$what: $(grep -E -- "$pattern" "$T/plant.out" | head -1)"
		else
			fail "$what: layering_check.py exited $rc without saying /$pattern/: $(head -5 "$T/plant.out")"
		fi
	fi
	cp "$T/saved" "$T/tree/$file"
}
python3 "$CHECK" "$T/tree" >"$T/copy.out" 2>&1 || fail "the unplanted copy fails: $(head -5 "$T/copy.out")"
plant "a back-include" store/store_space.c \
	'^store/store_space\.c: includes cli/cli_util\.h, but cli/ is above store/ in the folder order' \
	'0,/^#include "store_internal.h"/s//#include "store_internal.h"\n#include "cli\/cli_util.h"/'
plant "a circle" profile/heap/heap_colours.c \
	'^a circle of includes: profile/heap/heap_(colours|svg) -> profile/heap/heap_(svg|colours) -> ' \
	'0,/^#include "heap_colours.h"/s//&\n#include "heap_svg.h"/'
plant "a store layer below its call" store/store_conn.c \
	'^store/store_conn\.c: includes store/store_intake\.h, of layer 3, above its own \(1\)' \
	'0,/^#include "store_internal.h"/s//&\n#include "store_intake.h"/'
plant "a May call that lies" util/units.c \
	'^util/units\.c: May call names util/nonesuch\.c, which is no file of the product' \
	's/^ \* May call: libc only\./ * May call: util\/nonesuch.c, libc only./'
plant "an include the May call omits" fleet/fleet_pg.c \
	'^fleet/fleet_pg\.c: includes util/units\.h, which its May call list does not name' \
	'0,/^#include "fleet_internal.h"/s//&\n#include "util\/units.h"/'
plant "an include in another style" view/view_format.c \
	'^view/view_format\.c: #include "\.\./util/utc_time\.h" is written "util/utc_time\.h"' \
	's/^#include "util\/utc_time.h"/#include "..\/util\/utc_time.h"/'

# the tree itself
python3 "$CHECK" "$S" >"$T/out" 2>&1
rc=$?
while IFS= read -r line; do fail "$line"; done < <(grep -v '^layering: ' "$T/out")
[ $rc = 0 ] && ok
[ $rc = 0 ] || [ "$fails" != 0 ] || fail "layering_check.py exited $rc"
tail -1 "$T/out"
finish test_layering
