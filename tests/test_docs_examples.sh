#!/usr/bin/env bash
# test_docs_examples.sh - every example command the README, docs/*.md and
# the man pages show runs: each profdb, profile-backend and xensim line
# tests/docs_check.py finds in their code blocks (a line with "[" is a
# synopsis, which test_docs_options.sh checks instead) is run against a
# store built as demo/demo.sh builds its own, and fails the test when it
# exits non-zero, crashes or overruns.
#
#  - The store: on the test's own xensim, profile-backend captures a
#    MirageOS guest's trace (run 1), a C program sampled from dom0 (run 2),
#    a HaLVM guest that crashes half-way (run 3) and one that writes its
#    .prof, .hp and eventlog to the end (run 4, `latest`), written by
#    frontend-stub from the GHC fixtures.  Each example runs in a directory
#    of its own, on a copy of that store, with prof.disk, hp.disk and
#    guest.cfg there for the examples that read them.
#  - The words an example uses for what the reader supplies are replaced
#    by the table in `value` below; a word in capitals the table lacks fails
#    the test, so a new placeholder gets a value before its example passes.
#  - An example that starts profile-backend runs in place of the test's
#    own backend (stopped first, started again after); xensim's examples
#    run in order on a simulated host of their own.  On a host with Xen,
#    profile-backend's examples are given --platform sim: every example
#    runs on the test's simulated hosts.
#  - Examples that need what the test cannot give (a PostgreSQL server)
#    are in the SKIP table with the reason, each by its text; one that is
#    neither run nor skipped cannot be, and a skip that names no example
#    any more fails too.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
EXSIM="$T/exsim" # the examples' own simulated host (/run/xensim, /tmp/xen)
ABS_B=$(cd "$B" && pwd) # the examples run in directories of their own
at_exit '"$XS" stop --dir "$EXSIM" >/dev/null 2>&1'

# --- the examples that are not run, and why ------------------------------------------
declare -A SKIP=(
	["profdb sync --to postgresql://profsvc@db.example.org/fleet"]="needs a PostgreSQL server (test_fleet.sh syncs to a private one)"
	["profdb --db postgresql://profsvc@db.example.org/fleet query runs --host xen7"]="needs a PostgreSQL server (test_fleet.sh reads a private one)"
	["profdb --db postgresql://profsvc@db.example.org/fleet export xen7:12 --prof out.prof --hp out.hp"]="needs a PostgreSQL server (test_fleet.sh exports through a private one)"
	["profile-backend start --sync postgresql://profsvc@db.example.org/fleet"]="needs a PostgreSQL server (test_systemd.sh starts the backend with --sync to a private one)"
)

# --- the store, as the demo builds it -----------------------------------------------
WAIT=$((10 * SLOW))
start_xensim
start_backend
# ended RUN: waits until run RUN has ended (the backend saw its domain go)
ended() {
	local i
	for ((i = 0; i < WAIT * 10; i++)); do
		"$PROFDB" query runs --json 2>/dev/null | python3 -c 'import json, sys
runs = {r["run_id"]: r["state"] for r in json.load(sys.stdin)["runs"]}
sys.exit(runs.get(int(sys.argv[1])) in (None, "running"))' "$1" && return 0
		sleep 0.1
	done
	echo "run $1 did not end"
	exit 99
}
setup() { "$@" >>"$T/setup.log" 2>&1 || { echo "setup: $*: $(tail -5 "$T/setup.log")"; exit 99; }; }
# run 1: a MirageOS guest's trace
D=$("$XS" create --dir "$XENSIM_DIR" --name mirage-web) || exit 99
setup "$STUB" --platform sim --mode mirage --domid "$D" --pages 16 --events 3000 --rate 15000
setup "$XS" destroy --dir "$XENSIM_DIR" "$D"
ended 1
# run 2: a C program sampled from dom0 (ELF, and DOMAIN's program)
setup cc -O0 -g -fno-omit-frame-pointer -no-pie -o "$T/hot" "$S/tests/sampling/hot.c"
D=$("$XS" create --dir "$XENSIM_DIR" --name hot-c --console "$T/hot.console" --exec "$T/hot" 1) || exit 99
setup "$BACKEND" sample "$D" --hz 199 --symbols "$T/hot"
ended 2
# run 3: a HaLVM guest that crashes half-way; run 4: one with its eventlog, to the end
printf '%s\n' 'name = "phases-crashy"' 'kernel = "phases.elf"' 'extra = "+RTS -p -hc"' \
	"disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc' ]" >"$T/crashy.cfg"
D=$("$BACKEND" create --platform sim "$T/crashy.cfg") || exit 99
# (the guest is killed with its domain, which the shell would say on stderr)
{ "$STUB" --platform sim --mode halvm --domid "$D" --prof "$FIX/phases/phases-p-hc.prof" \
	--hp "$FIX/phases/phases-killed-SIGKILL.hp" --crash-at 60000 >>"$T/setup.log" 2>&1; } 2>/dev/null
"$XS" destroy --dir "$XENSIM_DIR" "$D" >/dev/null 2>&1
ended 3
printf '%s\n' 'name = "phases"' 'kernel = "phases.elf"' 'extra = "+RTS -p -hc -l"' \
	"disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc'," \
	"         'vdev=xvdp3, backendtype=profsvc' ]" >"$T/guest.cfg"
D=$("$BACKEND" create --platform sim "$T/guest.cfg") || exit 99
setup "$STUB" --platform sim --mode halvm --domid "$D" --prof "$FIX/phases/phases-p-hc.prof" \
	--hp "$FIX/phases/phases-p-hc.hp" --eventlog "$S/tests/data/ghc-eventlog/churn-l-hT.eventlog"
setup "$XS" destroy --dir "$XENSIM_DIR" "$D"
ended 4
# the store at rest, copied once; the backend again for the examples that ask it
setup "$BACKEND" stop
mkdir -p "$T/pristine"
cp "$T"/p.db* "$T/pristine/"
start_backend
# the files the examples name: old raw images, a guest's config
setup "$MKDISK" --prof "$FIX/phases/phases-p-hc.prof" "$T/prof.disk"
setup "$MKDISK" --hp "$FIX/phases/phases-p-hc.hp" "$T/hp.disk"
# and the plain files GHC writes (profdb import)
cp "$FIX/phases/phases-p-hc.prof" "$T/app.prof"
cp "$FIX/phases/phases-p-hc.hp" "$T/app.hp"
cp "$S/tests/data/eventlog/threaded.eventlog" "$T/app.eventlog"

# --- the placeholders: what each word stands for ------------------------------------------
# value WORD SECTION: the word to run in place of WORD (in the section SECTION
# of its page), or WORD itself; 1 for a capitalised word the table lacks.
n=0
value() {
	n=$((n + 1))
	case $1 in
	RUN) # the run the section is about
		case $2 in
		"MirageOS traces") v=1 ;;
		"Sampling any guest from dom0") v=2 ;;
		*) v=4 ;;
		esac ;;
	F | FILE) v="$W/file-$n" ;;  # a new file
	DIR) v="$W/dir-$n" ;;        # a new directory
	ELF) v="$T/hot" ;;           # the program the domain runs
	FUNC) v=hot ;;               # a function of run 2's program
	REGEX) v=cold ;;             # a regular expression over its names
	DOMAIN) # a domain of its own: the C program, running for a second
		v=$("$XS" create --dir "$XENSIM_DIR" --name "hot-$n" --console "$T/hot.console" --exec "$T/hot" 1) ||
			return 1 ;;
	/run/xensim | /tmp/xen) v=$EXSIM ;;
	profdb) v=$ABS_B/profdb ;;
	profile-backend) v=$ABS_B/profile-backend ;;
	xensim) v=$ABS_B/xensim/xensim ;;
	*[A-Z]*)
		[[ $1 =~ ^[A-Z][A-Z0-9_]*$ ]] && return 1
		v=$1 ;;
	*) v=$1 ;;
	esac
}

# --- every example --------------------------------------------------------------------
python3 "$S/tests/docs_check.py" examples "$S" >"$T/examples" || { echo "docs_check.py examples failed"; exit 99; }
[ -s "$T/examples" ] || { echo "no example found"; exit 99; }
declare -A used=()
i=0
while IFS=$'\t' read -r file line section cmd; do
	i=$((i + 1))
	where="$file:$line: '$cmd'"
	if [ -n "${SKIP[$cmd]+x}" ]; then
		used[$cmd]=1
		echo "test_docs_examples: SKIP $where: ${SKIP[$cmd]}"
		ok
		continue
	fi
	if [[ $cmd == *[\'\"\$\`\;\&\|\<\>\(\)\*\?\\]* ]]; then
		fail "$where: quotes or shell syntax in an example: run it by hand or give it a SKIP with the reason"
		continue
	fi
	W="$T/ex-$i"
	mkdir -p "$W/store"
	cp "$T"/pristine/p.db* "$W/store/"
	cp "$T/prof.disk" "$T/hp.disk" "$T/guest.cfg" "$T/app.prof" "$T/app.hp" "$T/app.eventlog" "$W/"
	argv=() bad=
	for w in $cmd; do
		value "$w" "$section" || { bad=$w; break; }
		argv+=("$v")
	done
	if [ -n "$bad" ]; then
		fail "$where: '$bad' has no value in the table of placeholders (tests/test_docs_examples.sh, value)"
		continue
	fi
	# on a host with Xen, profile-backend would choose it: the test's host is simulated
	if [ "${argv[0]}" = "$ABS_B/profile-backend" ] && [ -e /dev/xen/evtchn ] && [[ " ${argv[*]} " != *" --platform "* ]]; then
		argv+=(--platform sim)
	fi
	daemon=no
	if [ "${argv[0]}" = "$ABS_B/profile-backend" ] && [ "${argv[1]:-}" = start ]; then
		daemon=yes
		"$BACKEND" stop >/dev/null 2>&1
	fi
	(cd "$W" && PROFSVC_DB="$W/store/p.db" timeout $((30 * SLOW)) "${argv[@]}") </dev/null >"$W/out" 2>"$W/err"
	rc=$?
	if [ $daemon = yes ]; then
		"$BACKEND" status >/dev/null 2>&1 || [ $rc != 0 ] || { rc=1; echo "no backend runs after it" >>"$W/err"; }
		"$BACKEND" stop >/dev/null 2>&1
		start_backend
	fi
	if [ $rc = 124 ]; then
		fail "$where: still running after $((30 * SLOW)) s"
	elif [ $rc -gt 128 ]; then
		fail "$where: killed by signal $((rc - 128)): $(tail -5 "$W/err")"
	elif [ $rc != 0 ]; then
		fail "$where: exited $rc: $(head -5 "$W/err")"
	elif grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$W/err"; then
		fail "$where: $(grep -Em3 'AddressSanitizer|LeakSanitizer|runtime error:' "$W/err")"
	else
		ok
	fi
done <"$T/examples"
for cmd in "${!SKIP[@]}"; do
	[ -n "${used[$cmd]+x}" ] || fail "the SKIP table names an example no page shows any more: '$cmd'"
done
echo "test_docs_examples: $i examples"
finish test_docs_examples
