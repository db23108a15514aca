#!/usr/bin/env bash
# test_xlcfg.sh - `profile-backend create GUEST.cfg` reads the xl config as
# xl does (libxlutil): the forms a hand parser lost (disk not a list,
# backendtype=PROFSVC, blanks around '=', ';' after name), escapes in
# names, comments, trailing commas, positional disk specs; every fault
# refused with its own message naming file:line; what xl is handed (the
# file, then every disk, profsvc's in stock xl's script= form); and on xensim, a refused
# create leaves no domain and no run behind.
set -uo pipefail
. "${TOP_SRCDIR:-.}/tests/lib.sh"
with_xensim
C="$T/g.cfg"
# cfg TEXT: the guest config (printf's escapes)
cfg() { printf "$1" >"$C"; }
dry() { expect "$@" -- "$BACKEND" create --dry-run "$C"; }
# served VDEV...: the profsvc disks the dry run names, in order
served() {
	local want="" v
	for v in "$@"; do want+="# profsvc disk: $v"$'\n'; done
	[ "$(grep '^# profsvc disk:' "$T/out")" = "${want%$'\n'}" ] && ok ||
		fail "$(tr '\n' '|' <"$C"): served $(grep '^# profsvc disk:' "$T/out" | tr '\n' ' '), want $*"
}
# xl_disks LIST: what xl reads back from the dry run's output (its last
# disk list, each profsvc disk in stock xl's script=block-profsvc form),
# through profile-backend itself (libxlutil again)
xl_disks() {
	grep -v '^# profsvc disk:' "$T/out" >"$T/xl.cfg"
	"$BACKEND" create --dry-run "$T/xl.cfg" >"$T/xl.out" 2>"$T/xl.err" ||
		{ fail "the config for xl does not read back: $(cat "$T/xl.err")"; return; }
	grep -q '^# profsvc disk:' "$T/xl.out" && fail "xl would be given a profsvc disk: $(cat "$T/xl.cfg")"
	local got
	got=$(grep '^disk' "$T/xl.cfg" | tail -1)
	[ "$got" = "$1" ] && ok || fail "xl's disks: $got, want $1"
}

# --- the forms the hand parser lost or misread ---------------------------------------
cfg 'name = "g";\nmemory = 64;\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1; xl_disks 'disk = [ "vdev=xvdp1, script=block-profsvc, target=prof" ]'
cfg 'name="g" ; disk=["vdev=xvdp1,backendtype=profsvc","vdev=xvdp2,backendtype=profsvc"]'
dry 0 ""; served xvdp1 xvdp2
# the three disks of a guest that writes GHC's eventlog too (xvdp3)
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvdp2, backendtype=profsvc", "vdev=xvdp3, backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1 xvdp2 xvdp3
xl_disks 'disk = [ "vdev=xvdp1, script=block-profsvc, target=prof", "vdev=xvdp2, script=block-profsvc, target=hp", "vdev=xvdp3, script=block-profsvc, target=eventlog" ]'
cfg 'name = "g"\ndisk = "vdev=xvdp1, backendtype=profsvc"\n'
dry 1 "g.cfg:2: disk is a single string, not a list"
cfg 'name = "g"\n\ndisk = [ "vdev=xvdp1, backendtype=PROFSVC" ]\n'
dry 1 "g.cfg:3: disk entry 1: xl takes backendtype=profsvc exactly"
grep -q "unknown value for backendtype" "$T/err" && ok || fail "xl's own reason not shown: $(cat "$T/err")"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype = profsvc" ]\n'
dry 1 "g.cfg:2: disk entry 1: xl takes backendtype=profsvc exactly"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc " ]\n'
dry 1 "g.cfg:2: disk entry 1: xl takes backendtype=profsvc exactly"
# blanks where xl allows them: around the setting's '=', after a spec's commas
cfg 'name\t=   "g"\ndisk   =[\n  "  vdev=xvdp1,   backendtype=profsvc"\n]\n'
dry 0 ""; served xvdp1

# --- names: xl's escapes, and every fault its own message ------------------------------
cfg 'name = "q\\"x"\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1
cfg 'memory = 64\n'
dry 1 'g.cfg: no name = "...": xl needs'
cfg 'memory = 64\nname = g\n'
dry 1 "g.cfg:2: config parsing error near \`g'"
cfg 'name = [ "g" ]\n'
dry 1 "g.cfg:1: name is a list"
cfg '\n\nname = ""\n'
dry 1 "g.cfg:3: name is empty"
cfg 'name = "g\n'
dry 1 "g.cfg:1: config parsing error"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc"\n'
dry 1 "g.cfg:2: config parsing error"
cfg 'name = "g" # a comment\n# disk = [ "x" ]\n'
dry 0 ""; served

# --- disk lists -------------------------------------------------------------------------
# comments and a trailing comma inside the list; an ordinary disk kept for xl
cfg 'name = "g"\ndisk = [ "file:/srv/a b.img,xvda,w",   # xl'"'"'s\n  # "vdev=xvdp3, backendtype=profsvc",\n  "vdev=xvdp1, backendtype=profsvc", ]\n'
dry 0 ""; served xvdp1; xl_disks 'disk = [ "file:/srv/a b.img,xvda,w", "vdev=xvdp1, script=block-profsvc, target=prof" ]'
# quotes and backslashes in a kept spec survive the round trip
cfg 'name = "g"\ndisk = [ '"'"'file:/srv/o"b\\\\x.img,xvda,w'"'"', "vdev=xvdp2,backendtype=profsvc" ]\n'
dry 0 ""; served xvdp2; xl_disks 'disk = [ "file:/srv/o\"b\\x.img,xvda,w", "vdev=xvdp2, script=block-profsvc, target=hp" ]'
# `+=` appends to the list, as in xl
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\ndisk += [ "vdev=xvdp2, backendtype=profsvc", "file:/a,xvda,w" ]\n'
dry 0 ""; served xvdp1 xvdp2; xl_disks 'disk = [ "vdev=xvdp1, script=block-profsvc, target=prof", "vdev=xvdp2, script=block-profsvc, target=hp", "file:/a,xvda,w" ]'
cfg 'name = "g"\ndisk = [ ]\n'
dry 0 ""; served
grep -q "^# profile-backend" "$T/out" && fail "a config with no profsvc disk was rewritten" || ok
# the positional form: target, format, vdev, access
cfg 'name = "g"\ndisk = [ ",,xvdp1,w,backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1
cfg 'name = "g"\ndisk = [ "/srv/p.img,,xvdp1,w,backendtype=profsvc" ]\n'
dry 1 "g.cfg:2: disk entry 1 '/srv/p.img,,xvdp1,w,backendtype=profsvc' has a target"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc, target=/srv/p.img" ]\n'
dry 1 "has a target; a profsvc disk has none"
# target= takes the rest of the spec: this backendtype is part of a path
cfg 'name = "g"\ndisk = [ "vdev=xvda, target=/srv/x,backendtype=profsvc" ]\n'
dry 0 ""; served
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, format=qcow2, backendtype=profsvc" ]\n'
dry 1 "g.cfg:2: disk entry 1 'vdev=xvdp1, format=qcow2, backendtype=profsvc' has a format other than raw"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, format=raw, backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, access=ro, backendtype=profsvc" ]\n'
dry 1 "is read-only"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, devtype=cdrom, backendtype=profsvc" ]\n'
dry 1 "is a cdrom"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, script=/etc/xen/scripts/block, backendtype=profsvc" ]\n'
dry 1 "has a script"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backend=driverdom, backendtype=profsvc" ]\n'
dry 1 "names a backend domain"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backend=0, backendtype=profsvc" ]\n'
dry 0 ""; served xvdp1
cfg 'name = "g"\ndisk = [ "vdev=hda, backendtype=profsvc" ]\n'
dry 1 "has a vdev that is not a Xen disk name"
cfg 'name = "g"\ndisk = [ "backendtype=profsvc" ]\n'
dry 1 "no vdev specified"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, vdev=xvdp2, backendtype=profsvc" ]\n'
dry 1 "vdev respecified"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, frobnicate=1, backendtype=profsvc" ]\n'
dry 1 "g.cfg:2: disk entry 1"
cfg 'name = "g"\ndisk = [ [ "vdev=xvdp1, backendtype=profsvc" ] ]\n'
dry 1 "g.cfg:2: disk entry 1 is a list"
# an ordinary disk xl would refuse is refused before anything is made
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvda, format=bogus, target=/x" ]\n'
dry 1 "g.cfg:2: disk entry 2 'vdev=xvda, format=bogus, target=/x' is not a disk xl accepts"
# duplicates: among profsvc disks, and with xl's own (by device number)
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc",\n         "vdev=xvdp1, backendtype=profsvc" ]\n'
dry 1 "g.cfg:2: disk entries 1 and 2 are both xvdp1"
cfg 'name = "g"\ndisk = [ "phy:/dev/vg/p,xvdp2,w", "vdev=xvdp2, backendtype=profsvc" ]\n'
dry 1 "disk entries 1 and 2 are both xvdp2"
cfg 'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvdp2, target=/x" ]\n'
dry 0 ""; served xvdp1

# --- files that are not configs ------------------------------------------------------------
printf 'name = "g\377\376"\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\n' >"$C"
dry 0 ""; served xvdp1
printf 'name = "g"\0\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\n' >"$C"
dry 1 "g.cfg:1: a NUL byte: not an xl config"
head -c 2000000 /dev/zero | tr '\0' '#' >"$C"
dry 1 "larger than 1 MiB: not an xl config"
expect 1 "$T/none.cfg: No such file" -- "$BACKEND" create --dry-run "$T/none.cfg"
expect 1 "is a directory" -- "$BACKEND" create --dry-run "$T"
expect 1 "not a config xl can read" -- "$BACKEND" create --dry-run "$S/README.md"

# --- on xensim: created as named, or nothing left behind --------------------------------------
start_xensim
start_backend
domains() { "$XS" list --dir "$XENSIM_DIR" | awk 'NR > 1 { print $NF }' | sort | tr '\n' ' '; }
before=$(domains)
cfg 'name = "q\\"x";\ndisk=[ "vdev=xvdp1,  backendtype=profsvc", ]\n'
expect 0 "" -- "$BACKEND" create --platform sim "$C"
dom=$(cat "$T/out")
"$XS" list --dir "$XENSIM_DIR" | grep -q "^$dom .* q\"x\$" && ok || fail "no domain q\"x: $("$XS" list --dir "$XENSIM_DIR")"
for _ in $(seq 50); do "$PROFDB" query runs --json 2>/dev/null | grep -q '"name":"q\\"x"' && break; sleep 0.1; done
"$PROFDB" query runs --json | grep -q '"name":"q\\"x"' && ok || fail "no run named q\"x: $("$PROFDB" query runs 2>&1)"
"$XS" destroy --dir "$XENSIM_DIR" "$dom" >/dev/null
before=$(domains)
runs_before=$("$PROFDB" query runs 2>/dev/null | wc -l)
for bad in 'name = "dup"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvdp1, backendtype=profsvc" ]\n' \
	'name = "dup"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "vdev=xvdp2, backendtype=PROFSVC" ]\n' \
	'name = "dup"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "file:/x,xvdp1,w" ]\n'; do
	cfg "$bad"
	expect 1 "g.cfg:2:" -- "$BACKEND" create --platform sim "$C"
done
sleep 0.5 # a run would start as soon as a device appeared
[ "$(domains)" = "$before" ] && ok || fail "a refused create left a domain: $(domains), was $before"
"$PROFDB" query runs >"$T/runs" 2>&1
[ "$(wc -l <"$T/runs")" = "$runs_before" ] && ! grep -q dup "$T/runs" && ok ||
	fail "a refused create left a run: $(cat "$T/runs")"

# --- a stock xl disk (script=block-profsvc), as libxl writes it: taken and served ------------
# `attach ... vdev=xvdp1,script=block-profsvc` writes the directories as xl
# does for that disk line (backend/vbd, the script's path); what libxl does
# next is played by hand: online=0 and Closing to remove it, and the
# directories removed once the backend says Closed.
DOM=$("$XS" create --dir "$XENSIM_DIR" --name xl-guest) || fail "xensim create xl-guest"
XSR() { XENSTORED_PATH="$XENSIM_DIR/dom0/xs.sock" "$@"; }
expect 0 "" -- "$BACKEND" attach --platform sim "$DOM" vdev=xvdp1,script=block-profsvc vdev=xvdp2,script=block-profsvc
BE=/local/domain/0/backend/vbd/$DOM
"$STUB" --mode halvm --domid "$DOM" --prof "$FIX/leak/leak-p-hc.prof" --hp "$FIX/phases/phases-hd-i0.01.hp" -q \
	>"$T/stub.log" 2>&1 && ok || fail "the guest on stock xl's disks failed: $(cat "$T/stub.log")"
R=$("$PROFDB" query runs --name xl-guest --json | grep -o '"run_id":[0-9]*' | tail -1 | cut -d: -f2)
"$PROFDB" export "$R" --prof "$T/xl.prof" --hp "$T/xl.hp" >/dev/null 2>&1
cmp -s "$T/xl.prof" "$FIX/leak/leak-p-hc.prof" && cmp -s "$T/xl.hp" "$FIX/phases/phases-hd-i0.01.hp" && ok ||
	fail "stock xl disks: exports differ from what the guest wrote (run ${R:-none})"
# libxl's removal (online=0, Closing, wait for Closed, remove): the
# backend closes it at once (a paused or dead guest would never answer)
expect 0 "" -- "$BACKEND" detach --platform sim "$DOM" xvdp1
grep -q "detached xvdp1 from domain $DOM" "$T/out" && ok || fail "detach said: $(cat "$T/out")"
# a new attach of the same disk in the same boot is the same disk again
expect 0 "" -- "$BACKEND" attach --platform sim "$DOM" vdev=xvdp1,script=block-profsvc
expect 0 "" -- "$BACKEND" detach --platform sim "$DOM" xvdp1
expect 0 "" -- "$BACKEND" detach --platform sim "$DOM" xvdp2
"$PROFDB" export "$R" --prof "$T/xl2.prof" >/dev/null 2>&1
cmp -s "$T/xl2.prof" "$FIX/leak/leak-p-hc.prof" && ok || fail "after detach and attach again, the .prof differs"
# attach returns once the backend has taken the disk, as block-profsvc's
# "add" holds libxl: a backend slow to look (stopped here for a second)
# still sees the disk before a detach that follows at once, and says
# Closed (a disk first seen while being removed is never taken)
BPID=$(cat "$PROFSVC_RUN_DIR/profile-backend.pid")
kill -STOP "$BPID"
( sleep 1; kill -CONT "$BPID" ) &
expect 0 "" -- "$BACKEND" attach --platform sim "$DOM" vdev=xvdp3,script=block-profsvc
expect 0 "" -- "$BACKEND" detach --platform sim "$DOM" xvdp3 # 1 (and "did not reach Closed") before
wait
# a backend that never takes it: attach fails after 10 s and leaves nothing
kill -STOP "$BPID"
expect 1 "not taken by profile-backend within 10 s" -- "$BACKEND" attach --platform sim "$DOM" vdev=xvdp4,script=block-profsvc
kill -CONT "$BPID"
# nothing left of it: attaching it again is not "already has a device"
expect 0 "" -- "$BACKEND" attach --platform sim "$DOM" vdev=xvdp4,script=block-profsvc
expect 0 "" -- "$BACKEND" detach --platform sim "$DOM" xvdp4
"$XS" destroy --dir "$XENSIM_DIR" "$DOM" >/dev/null

finish test_xlcfg
