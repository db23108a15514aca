#!/bin/bash
# tests/fresh/check-fresh.sh - the README's first command on a bare Debian 12.
#
#   tests/fresh/check-fresh.sh TARBALL [COMMAND]       (make check-fresh)
#
# A used machine hides a missing install step: whatever an earlier session
# or CI's own list installed by hand makes a build pass that a new user's
# does not.  This check makes a Debian 12 root as bare as a new user's
# (debootstrap --variant=minbase, nothing else), copies the release tarball
# into root's home (a 0700 directory, as a new user's checkout is), and runs
# `./quickstart COMMAND` there (demo by default) as root in a chroot with
# its own mount and PID namespaces, to the demo's last line.  quickstart
# itself must install every package the command needs; nothing else is put
# in the root but the host's apt sources and resolv.conf, which a machine
# that can reach its Debian mirror has anyway.
#
# What is cached between runs (FRESH_CACHE, default /var/cache/profsvc-fresh):
# the minbase root as debootstrap made it (made again when the suite or the
# mirror change), the .debs apt fetched and apt's lists (bind-mounted into
# each new root, seeded from the host's own archive by hard links).  Each
# run starts from a fresh copy of the base; the copy is removed afterwards
# (FRESH_KEEP=1 keeps it and says where).  The network is used only to
# reach the Debian mirror, as check-xen's image build does.
#
# Output: one line "check-fresh: PASS ..." or "check-fresh: FAIL ..." with
# the reason and the log's tail.  Exit status: 0 passed, 1 failed, 77 not
# run (not root, or no debootstrap: under CI=true both are failures).
set -euo pipefail

TARBALL=${1:?usage: check-fresh.sh TARBALL [demo|test]}
COMMAND=${2:-demo}
C=${FRESH_CACHE:-/var/cache/profsvc-fresh}
SUITE=bookworm
MIRROR=${FRESH_MIRROR:-$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null;
                           awk '$1=="deb"{print $2}' /etc/apt/sources.list 2>/dev/null || true; } | grep -v security | head -1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# The demo's last line (demo/demo.sh): it got to the end.
LAST_LINE='^Try: PROFSVC_DB=.* query runs --json$'

say() { printf '[check-fresh %s] %s\n' "$(date +%T)" "$*" >&2; }
not_run() {
	echo "check-fresh: $*"
	[ "${CI:-}" = true ] && { echo "check-fresh: FAIL (under CI=true it must run)"; exit 1; }
	exit 77
}
[ "$(id -u)" = 0 ] || not_run "needs root (debootstrap, chroot, namespaces): not run"
command -v debootstrap >/dev/null || not_run "debootstrap missing (apt-get install debootstrap): not run"
command -v unshare >/dev/null || not_run "unshare missing (util-linux): not run"
[ -f "$TARBALL" ] || { echo "check-fresh: FAIL: no tarball $TARBALL (make dist)"; exit 1; }
TARBALL=$(cd "$(dirname "$TARBALL")" && pwd)/$(basename "$TARBALL")

t0=$(date +%s)
mkdir -p "$C/archives/partial" "$C/lists/partial" "$C/debootstrap"
# ---- the base: debootstrap minbase, made once per suite and mirror --------
stamp="$SUITE $MIRROR minbase 1"
if [ "$(cat "$C/base.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$C/base/usr/bin/apt-get" ]; then
	rm -rf "$C/base" "$C/base.new" "$C/base.stamp"
	say "debootstrap $SUITE (minbase) from $MIRROR into $C/base"
	if ! debootstrap --variant=minbase --cache-dir="$C/debootstrap" "$SUITE" "$C/base.new" "$MIRROR" \
		>"$C/debootstrap.log" 2>&1; then
		echo "check-fresh: FAIL: debootstrap failed (is $MIRROR reachable?)"; tail -20 "$C/debootstrap.log"; exit 1
	fi
	rm -rf "$C/base.new/var/cache/apt/archives"/*.deb "$C/base.new/var/lib/apt/lists"/*
	mv "$C/base.new" "$C/base"
	echo "$stamp" >"$C/base.stamp"
fi
# apt's archive seeded from the host's: the same .deb files, hard-linked
# (or copied across file systems) once; apt checks each one's hash.
if [ -d /var/cache/apt/archives ] && [ ! -e "$C/archives/.seeded" ]; then
	cp -aln /var/cache/apt/archives/*.deb "$C/archives/" 2>/dev/null ||
		cp -an /var/cache/apt/archives/*.deb "$C/archives/" 2>/dev/null || true
	touch "$C/archives/.seeded"
fi
t_base=$(date +%s)

# ---- this run's root: a copy of the base --------------------------------
W=$(mktemp -d "${TMPDIR:-/var/tmp}/profsvc-fresh.XXXXXX")
R=$W/root
cleanup() {
	if [ "${FRESH_KEEP:-}" = 1 ]; then say "keeping $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
cp -a "$C/base" "$R"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/"
	rm -f "$R/etc/apt/sources.list"
fi
# No service starts inside the root (as in any chroot install).
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"; chmod +x "$R/usr/sbin/policy-rc.d"
tar -C "$R/root" -xzf "$TARBALL"
top=$(basename "$TARBALL" .tar.gz)
[ -x "$R/root/$top/quickstart" ] || { echo "check-fresh: FAIL: $TARBALL holds no $top/quickstart"; exit 1; }
chmod 0700 "$R/root"

# ---- quickstart COMMAND, as a new user types it ---------------------------
# Inside new mount and PID namespaces: the mounts go with them, and every
# process the command leaves behind (a daemon the demo did not stop) is
# killed when the namespace's first process ends.
say "./quickstart $COMMAND in a bare $SUITE root ($R)"
rc=0
unshare --mount --pid --fork --mount-proc="$R/proc" /bin/bash -c '
	set -e
	R=$1 C=$2
	mount --bind "$C/archives" "$R/var/cache/apt/archives"
	mount --bind "$C/lists" "$R/var/lib/apt/lists"
	mount -t sysfs sysfs "$R/sys"
	mount --bind /dev "$R/dev"
	mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts" 2>/dev/null || true
	mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
	mount -t tmpfs -o mode=0755 tmpfs "$R/run"
	exec chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/$3 && exec ./quickstart $4" </dev/null
' check-fresh "$R" "$C" "$top" "$COMMAND" >"$W/quickstart.log" 2>&1 || rc=$?
t_end=$(date +%s)
cp "$W/quickstart.log" "${FRESH_LOG:-/dev/null}" 2>/dev/null || true

last=$(grep -v '^[[:space:]]*$' "$W/quickstart.log" | tail -1)
times="$((t_end - t0)) s: base $((t_base - t0)) s, quickstart $((t_end - t_base)) s"
if [ "$rc" = 0 ] && { [ "$COMMAND" != demo ] || printf '%s\n' "$last" | grep -qE "$LAST_LINE"; }; then
	echo "check-fresh: PASS ./quickstart $COMMAND on a bare Debian 12 ($times)"
	exit 0
fi
echo "check-fresh: FAIL ./quickstart $COMMAND on a bare Debian 12 (exit $rc; $times); its last lines:"
tail -25 "$W/quickstart.log" | sed 's/^/  | /'
exit 1
