#!/bin/bash
# tests/test_xen_harness.sh - the real-Xen harness's own logic, without Xen:
# tests/xen/xen-e2e.sh's rounds (which round is spoiled, when another one
# runs, when none may) and tests/xen/score.sh (only the last round scores),
# with a stand-in qemu-system-x86_64 that replays serial logs, one a round.
set -uo pipefail
SRC=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
P=0 F=0
ok() { echo "PASS: $*"; P=$((P + 1)); }
bad() { echo "FAIL: $*"; F=$((F + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }

# The stand-in: writes its pid where -pidfile says, prints the next log of
# $FAKE_LOGS (round1, round2, ...) as the serial console, exits.
mkdir -p "$T/bin"
cat >"$T/bin/qemu-system-x86_64" <<'EOF'
#!/bin/bash
while [ $# -gt 0 ]; do [ "$1" = -pidfile ] && { echo $$ >"$2"; shift; }; shift; done
n=$(( $(cat "$FAKE_LOGS/count" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$FAKE_LOGS/count"
sleep 0.3
cat "$FAKE_LOGS/round$n" 2>/dev/null
exit 0
EOF
chmod +x "$T/bin/qemu-system-x86_64"

clean='XENTEST: PASS 1 a
XENTEST: PASS 2 b
XENTEST: RESULT 2 passed, 0 failed'
failed='XENTEST: PASS 1 a
XENTEST: FAIL 2 b
XENTEST: RESULT 1 passed, 1 failed'
fault='[  12.3] traps: seq[812] general protection fault ip:7f0 sp:7ff error:0 in libc.so.6
[  12.3] potentially unexpected fatal signal 11.
[  12.3] CPU: 0 PID: 812 Comm: seq Not tainted 6.1.0-28-amd64'
stuck='XENTEST: STUCK pid 900 sleep spinning for 61 s: killed'
probe='XENTEST: FAIL 0 host: dom0 programs keep their SSE registers across context switches'
incomplete='XENTEST: PASS 1 a'

# scenario NAME ENV... -- LOG... : xen-e2e.sh boot with the logs as rounds;
# leaves the exit status in $RC and the output in $T/NAME.out.
scenario() {
	local name=$1 i=0; shift
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
	local w=$T/$name; mkdir -p "$w/logs"; echo x >"$w/dom0.cpio"
	for l in "$@"; do i=$((i + 1)); printf '%s\n' "$l" >"$w/logs/round$i"; done
	RC=0
	env PATH="$T/bin:$PATH" FAKE_LOGS="$w/logs" XQ_WORK="$w" XQ_FLEET=no XQ_SILENCE=30 XQ_STALL=30 XQ_TIMEOUT=30 \
		"${env[@]}" "$SRC/tests/xen/xen-e2e.sh" boot >"$T/$name.out" 2>&1 || RC=$?
	ROUNDS=$(cat "$w/logs/count" 2>/dev/null || echo 0)
	SCORE=$("$SRC/tests/xen/score.sh" "$T/$name.out" | tail -1)
}

scenario clean -- "$clean"
check "a clean round stands: exit 0, one round" test "$RC:$ROUNDS" = 0:1
check "a clean round scores 2 passed" test "$SCORE" = "real Xen: 2 passed, 0 failed"

scenario sound-fail -- "$failed" "$clean"
check "a failure on a sound host is final: exit 1, no second round" test "$RC:$ROUNDS" = 1:1
check "it scores its failure" test "$SCORE" = "real Xen: 1 passed, 1 failed"

scenario fault -- "$failed
$fault" "$clean"
check "a failed round with a dom0 fault is spoiled and run again" test "$RC:$ROUNDS" = 0:2
check "the spoiled round names the faulting program" grep -q 'programs faulted in the dom0: *1 seq' "$T/fault.out"
check "only the last round scores" test "$SCORE" = "real Xen: 2 passed, 0 failed"
check "score names the spoiled round" sh -c "'$SRC/tests/xen/score.sh' '$T/fault.out' | grep -q '^xen: round 1 spoiled'"

scenario stuck -- "$failed
$stuck" "$failed
$stuck" "$failed
$fault" "$clean"
check "spoiled rounds are run again until one stands (4 rounds)" test "$RC:$ROUNDS" = 0:4

scenario probe -- "$probe
XENTEST: RESULT 1 passed, 1 failed" "$clean"
check "corrupted registers (fpu-probe) spoil a round" test "$RC:$ROUNDS" = 0:2

scenario incomplete -- "$incomplete" "$clean"
check "a round that did not complete is spoiled and run again" test "$RC:$ROUNDS" = 0:2

scenario limit XQ_ROUNDS=3 -- "$failed
$fault" "$failed
$fault" "$failed
$fault" "$clean"
check "XQ_ROUNDS=3: no fourth round, the failure stands" test "$RC:$ROUNDS" = 1:3
check "it says why no round is left" grep -q 'no round is left (XQ_ROUNDS=3)' "$T/limit.out"

scenario budget XQ_BUDGET=20 -- "$failed
$fault" "$clean"
check "XQ_BUDGET: no round starts that would not fit" test "$RC:$ROUNDS" = 1:1
check "it says so" grep -q 'does not fit in XQ_BUDGET=20' "$T/budget.out"

scenario never-complete XQ_ROUNDS=2 -- "$incomplete" "$incomplete"
check "rounds that never complete: exit 2" test "$RC:$ROUNDS" = 2:2
check "an incomplete run scores a failure" test "$SCORE" = "real Xen: 0 passed, 1 failed"

echo "test_xen_harness: $P passed, $F failed"
[ "$F" = 0 ]
