#!/bin/bash
# tests/xen/score.sh LOG - the score of a real-Xen run (xen-e2e.sh's output,
# as ./quickstart test keeps it): the spoiled rounds named, the checks of
# the last round (only the last round counts: a spoiled one before it says
# nothing about profsvc), then "real Xen: N passed, N failed".  A log
# with no complete round scores one failure.
set -uo pipefail
log=$1
{ grep -a 'spoiled (\|misbehaved:' "$log" || true; } | sed 's/^\[xen-e2e [0-9:]*\] /xen: /'
awk '/^\[xen-e2e [0-9:]*\] round [0-9]+$/ { n = 0 } /^(PASS|FAIL) / { l[n++] = "xen: " $0 }
     END { for (i = 0; i < n; i++) print l[i] }' "$log"
res=$(awk '/^\[xen-e2e [0-9:]*\] round [0-9]+$/ { r = "" } /^[0-9]+ passed, [0-9]+ failed$/ { r = $1 " " $3 }
           END { print r }' "$log")
if [ -n "$res" ]; then
	echo "real Xen: ${res% *} passed, ${res#* } failed"
else
	echo "real Xen: 0 passed, 1 failed"
fi
