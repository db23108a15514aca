#!/usr/bin/env bash
# test_eventlog_threadscope.sh - what profsvc exports of a captured GHC
# eventlog opens in Debian's threadscope (0.2.14), under Xvfb:
#  - a run whose guest wrote tests/data/eventlog/threaded.eventlog (two
#    capabilities) to xvdp3 and closed it: the export is byte-exact and
#    threadscope opens it: its window is titled with the file, it is still
#    up after loading, and a screenshot of it is drawn (many colours: the
#    activity graph and the two capabilities' lanes);
#  - a guest that crashed mid-log: the export cut at the last whole event
#    opens the same way (a log cut inside an event is what threadscope
#    refuses).
# The screenshots stay in the scratch directory (PROFSVC_KEEP_TMP=1 keeps
# it) and are copied to $PROFSVC_KEEP when set.
# Without threadscope or xvfb-run the test is skipped (77), except under
# CI=true, where that is a failure.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
EFIX="$S/tests/data/eventlog"

need threadscope xvfb-run xwininfo xwd convert || exit 77

# opens NAME FILE: threadscope opens FILE under Xvfb; its screenshot in
# $T/NAME.png; "ok" lines in $T/NAME.ts
opens() {
	cat >"$T/$1.sh" <<EOF
threadscope '$2' >'$T/$1.out' 2>&1 &
P=\$!
for i in \$(seq 120); do xwininfo -root -tree 2>/dev/null | grep -qF '$2 - ThreadScope' && break; sleep 0.25; done
xwininfo -root -tree 2>/dev/null | grep -qF '$2 - ThreadScope' && echo "ok window"
sleep 3
kill -0 \$P 2>/dev/null && echo "ok alive"
xwd -root -silent >'$T/$1.xwd'
kill \$P 2>/dev/null
wait \$P 2>/dev/null
exit 0
EOF
	timeout 120 xvfb-run -a -s "-screen 0 1280x900x24" bash "$T/$1.sh" >"$T/$1.ts" 2>&1
	# GTK finding no display is the X server's start failing (xvfb-run -a
	# once raced the previous server's exit in CI), not threadscope
	# reading the file: that one start is tried again, once
	if grep -q "Cannot initialize GUI" "$T/$1.out" 2>/dev/null; then
		sleep 2
		timeout 120 xvfb-run -a -s "-screen 0 1280x900x24" bash "$T/$1.sh" >"$T/$1.ts" 2>&1
	fi
	convert "$T/$1.xwd" "$T/$1.png" 2>/dev/null
	grep -q "ok window" "$T/$1.ts" && ok || fail "$1: threadscope shows no window for $2: $(cat "$T/$1.ts" "$T/$1.out" | head -5)"
	grep -q "ok alive" "$T/$1.ts" && ok || fail "$1: threadscope did not stay up on $2: $(head -5 "$T/$1.out")"
	local colours
	colours=$(convert "$T/$1.png" -format %k info: 2>/dev/null)
	[ "${colours:-0}" -gt 40 ] && ok || fail "$1: the screenshot has ${colours:-no} colours: nothing drawn"
}

keep_at_exit "$T/whole.png" "$T/cut.png"

# a guest that closed its eventlog
"$MKDISK" --eventlog "$EFIX/threaded.eventlog" "$T/whole.disk" >/dev/null || { echo "mkdisk failed"; exit 99; }
expect 0 "" -- "$PROFDB" import-disk --name whole --eventlog "$T/whole.disk"
expect 0 "" -- "$PROFDB" export latest --eventlog "$T/whole.eventlog"
same "$T/whole.eventlog" "$EFIX/threaded.eventlog"
opens whole "$T/whole.eventlog"

# a guest that crashed mid-log: cut at the last whole event
size=$(stat -c %s "$EFIX/threaded.eventlog")
"$MKDISK" --crash-at $((size * 2 / 3 + 5)) --eventlog "$EFIX/threaded.eventlog" "$T/crash.disk" >/dev/null ||
	{ echo "mkdisk --crash-at failed"; exit 99; }
expect 0 "" -- "$PROFDB" import-disk --name crashed --eventlog "$T/crash.disk"
expect 0 "cut at the last whole event" -- "$PROFDB" export latest --eventlog "$T/cut.eventlog"
cut=$(stat -c %s "$T/cut.eventlog")
[ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] && cmp -s -n "$cut" "$T/cut.eventlog" "$EFIX/threaded.eventlog" && ok ||
	fail "the cut export ($cut of $size bytes) is not the log's first bytes"
opens cut "$T/cut.eventlog"

finish test_eventlog_threadscope
