#!/bin/bash
# tests/xen/xen-e2e.sh - profsvc on real Xen: Xen 4.17 + a Debian dom0 under
# QEMU (TCG), with PV Linux guests whose kernel blkfront is the peer.
# Started from ../shared/tools/xen-qemu/xen-e2e.sh (Debian packages only);
# this one is ours and needs nothing outside the repository.
#
#   tests/xen/xen-e2e.sh [build|boot|all|clean]        (default: all)
#
# Environment:
#   TOP_SRCDIR, TOP_BUILDDIR  the source tree and a plain (not sanitized) build
#   XQ_WORK      where images are built (default /var/tmp/profsvc-xen)
#   XQ_MIRROR    Debian archive for debootstrap (default: the one apt uses)
#   XQ_TIMEOUT   QEMU wall-clock limit per round in s (default 900: a round
#                took 652 s on a 2-core machine with scenarios 11-13, which
#                added 83 s of it)
#   XQ_SILENCE   s without any serial output after which the host is taken
#                as hung and QEMU is stopped (default 240; the dom0 prints a
#                heartbeat every 20 s, and every test step is bounded)
#   XQ_ROUNDS    at most this many rounds, a new one only when the last
#                was spoiled (default 6; see rounds())
#   XQ_BUDGET    s from the first round after which no new round starts
#                unless a whole one (XQ_TIMEOUT) still fits (default 2400)
#   XQ_STALL     s without a new test line after which the round is taken as
#                stalled (default 330; every test step is bounded below that)
#   XQ_XEN_ARGS  Xen's command line beyond the console and dom0 memory
#                (default: spec-ctrl=eager-fpu, see boot())
#   XQ_CPU       QEMU's -cpu (default: see boot())
#   XQ_FLEET     no: start no fleet catalogue (scenario 10 then fails; for
#                tests/test_xen_harness.sh, whose stand-in QEMU needs none)
#   XQ_STRESS    N: before the scenarios, N guests in a row each created
#                the moment the one before powered off (hunting races in
#                the toolstack path; local use, default 0); with
#                XQ_STRESS_DISKS=no those guests have no disks at all
#                (is it the backend, or the host, when something breaks?)
#
# The fleet catalogue (scenario 10) is a private PostgreSQL on this host,
# one per round, which the dom0 reaches through QEMU's user network (its
# e1000 NIC; 10.0.2.2 is this host's loopback), as a dom0 reaches a
# catalogue server on the network.
#
# The dom0 runs tests/xen/dom0-tests.sh, which prints one "XENTEST: PASS|FAIL"
# line per check and "XENTEST: RESULT N passed, N failed".  Exit status: 0
# all passed, 1 some failed, 2 the run did not complete.
set -euo pipefail

SRC=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BLD=${TOP_BUILDDIR:-$SRC}
XQ_TIMEOUT=${XQ_TIMEOUT:-900}
XQ_SILENCE=${XQ_SILENCE:-240}
XQ_STALL=${XQ_STALL:-330}
XQ_ROUNDS=${XQ_ROUNDS:-6}
XQ_BUDGET=${XQ_BUDGET:-2400}
# What the dom0 kernel prints when a program dies of a fault (with
# print-fatal-signals=1; SIGKILL and SIGTERM are not faults).  dom0-tests.sh's
# F_RE is the same.
DOM0_FAULT='potentially unexpected fatal signal|traps: |segfault at'
XQ_STRESS=${XQ_STRESS:-0}
XQ_CPU=${XQ_CPU:-max,-smap,-smep,-avx,-avx2,-fma,-f16c,-vaes,-vpclmulqdq}
XQ_XEN_ARGS=${XQ_XEN_ARGS-spec-ctrl=eager-fpu}
W=${XQ_WORK:-/var/tmp/profsvc-xen}
SUITE=bookworm
MIRROR=${XQ_MIRROR:-$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null;
                         awk '$1=="deb"{print $2}' /etc/apt/sources.list 2>/dev/null || true; } | grep -v security | head -1)}
# xen-blkback as Debian's xen init script loads it: profile-backend must
# take stock xl's script=block-profsvc disks from it (scenario 9).
# e1000: the NIC through which the dom0 reaches the fleet catalogue.
DOM0_MODULES="xenfs xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xen-blkback loop e1000"
FIXTURES="leak/leak-p-hc.prof leak/leak-p-hc.hp phases/phases-p-hc.prof phases/phases-hd-i0.01.hp exprcalc/exprcalc-p.prof"
# GHC 9.0.2's eventlog of a two-capability program, for the xvdp3 disk
EVENTLOG_FIXTURE=threaded.eventlog

log() { printf '[xen-e2e %s] %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }

host_packages() {
	local pkgs="qemu-system-x86 debootstrap cpio busybox-static gcc libc6-dev postgresql"
	local missing=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "installing host packages:$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
}

build() {
	local t0; t0=$(now)
	host_packages
	[ -x "$BLD/profile-backend" ] || { log "no build in $BLD (make first)"; exit 2; }
	if ldd "$BLD/profile-backend" | grep -q libasan; then
		log "$BLD is a sanitizer build; use a plain build (configure without --enable-sanitizers)"
		exit 2
	fi
	apt-cache show xen-hypervisor-4.17-amd64 >/dev/null 2>&1 || apt-get update -qq
	mkdir -p "$W/debs"
	# ---- Xen hypervisor + kernel, from Debian packages ------------------------
	local kpkg; kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
	KVER=${kpkg#linux-image-}
	(cd "$W/debs" && rm -f ./*.deb && apt-get download -q xen-hypervisor-4.17-amd64 "$kpkg" 2>&1 | grep -v unsandboxed >&2 || true)
	rm -rf "$W/x"; mkdir -p "$W/x"
	for d in "$W"/debs/*.deb; do dpkg-deb -x "$d" "$W/x"; done
	zcat "$W/x/boot/xen-4.17-amd64.gz" > "$W/xen"
	cp "$W/x/boot/vmlinuz-$KVER" "$W/vmlinuz"

	# ---- dom0 root: debootstrap minbase + xen-utils + profsvc's libraries -----
	local R=$W/rootfs
	# profdb links libmicrohttpd and jansson (profdb serve) and libpq (the
	# fleet catalogue); babeltrace2
	# reads the MirageOS trace scenario's export; strace lists the system
	# calls of the backend confined as its unit confines it (scenario 14); the stamp names the
	# packages, so a root made with an older list is made again
	local DOM0_PKGS="xen-utils-4.17 xenstore-utils kmod procps libsqlite3-0 libaio1 libmicrohttpd12 libjansson4 libxxhash0 libpq5 babeltrace2 strace"
	if [ "$(cat "$W/rootfs.stamp" 2>/dev/null)" != "$DOM0_PKGS" ]; then
		rm -rf "$R"
		log "debootstrap $SUITE (minbase) from $MIRROR"
		debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" > "$W/debootstrap.log" 2>&1
		cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/" 2>/dev/null || true
		rm -f "$R/etc/apt/sources.list"
		printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"; chmod +x "$R/usr/sbin/policy-rc.d"
		log "installing xen-utils-4.17 and profsvc's runtime libraries into the dom0 root"
		chroot "$R" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $DOM0_PKGS" > "$W/chroot-apt.log" 2>&1
		rm -rf "$R"/var/cache/apt/* "$R"/var/lib/apt/lists/* "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/locale/* "$R"/usr/share/info/*
		echo "$DOM0_PKGS" > "$W/rootfs.stamp"
	fi
	rm -rf "$R/lib/modules"; mkdir -p "$R/lib/modules/$KVER"
	local M=$W/x/lib/modules/$KVER
	cp "$M"/modules.order "$M"/modules.builtin* "$R/lib/modules/$KVER/"
	for m in $DOM0_MODULES; do
		f=$(find "$M/kernel" -name "$m.ko*" | head -1); [ -n "$f" ] || { log "module $m not found"; exit 1; }
		mkdir -p "$R/lib/modules/$KVER/$(dirname "${f#$M/}")"; cp "$f" "$R/lib/modules/$KVER/${f#$M/}"
	done
	chroot "$R" depmod "$KVER"
	cp /bin/busybox "$R/bin/busybox"
	cat > "$R/etc/default/xen" <<'EOF'
XENSTORED=/usr/lib/xen-4.17/bin/xenstored
XENSTORED_ARGS=
XENCONSOLED_ARGS="--log=guest --log-dir=/var/log/xen/console"
EOF

	# ---- profsvc itself, as a user installs it --------------------------------
	log "make install DESTDIR=<dom0 root>"
	# (the hotplug script where libxl looks for it: Debian's Xen scripts)
	make -s -C "$BLD" install DESTDIR="$R" prefix=/usr/local xenscriptdir=/etc/xen/scripts >/dev/null
	[ -x "$R/etc/xen/scripts/block-profsvc" ] || { log "make install put no block-profsvc in /etc/xen/scripts"; exit 1; }
	# The store and run directories, as systemd-tmpfiles makes them from the
	# installed entry at boot (this dom0's /init is no systemd).
	local type path mode
	while read -r type path mode _; do
		if [ "$type" = d ]; then install -d -m "$mode" "$R$path"; fi
	done < "$R/usr/local/lib/tmpfiles.d/profsvc.conf"
	# Test tools, from the build tree: the conformance test, and the
	# simulated guest (installed off the PATH, in pkglibexecdir)
	make -s -C "$BLD" tests/test_xenstore tests/xen/inspect-probe >/dev/null
	cp "$BLD/tests/test_xenstore" "$BLD/frontend-stub/frontend-stub" "$BLD/tests/xen/inspect-probe" "$R/usr/local/bin/"
	rm -rf "$R/root/profsvc"; mkdir -p "$R/root/profsvc/fixtures"
	for f in $FIXTURES; do cp "$SRC/tests/data/ghc/$f" "$R/root/profsvc/fixtures/"; done
	cp "$SRC/tests/data/eventlog/$EVENTLOG_FIXTURE" "$R/root/profsvc/fixtures/"
	cp "$SRC/tests/xen/dom0-tests.sh" "$R/root/profsvc/"
	echo "$XQ_STRESS ${XQ_STRESS_DISKS:-yes}" > "$R/root/profsvc/stress"
	# Scenario 14: the system calls profile-backend.service allows
	# (SystemCallFilter=@system-service), as this host's systemd expands the
	# set, one name a line; the dom0 has no systemd to ask.
	expand_filter() {
		systemd-analyze syscall-filter "$1" | awk 'NR > 1 && NF && $1 !~ /^#/ { print $1 }' |
			while read -r n; do case $n in @*) expand_filter "$n" ;; *) echo "$n" ;; esac; done
	}
	expand_filter @system-service | sort -u > "$R/root/profsvc/system-service.syscalls"
	[ -s "$R/root/profsvc/system-service.syscalls" ] || { log "systemd-analyze syscall-filter gave nothing"; exit 1; }

	# ---- the PV guest: same kernel, busybox, blkfront, the HaLVM-layout writer -
	local D=$W/domu-root
	rm -rf "$D"; mkdir -p "$D"/{bin,dev,proc,sys,lib,tmp,fixtures}
	cp /bin/busybox "$D/bin/busybox"
	cp "$(find "$M/kernel" -name 'xen-blkfront.ko*' | head -1)" "$D/lib/"
	# The host check (dom0-tests.sh): do registers survive a context switch?
	gcc -static -O2 -std=c11 -Wall -Wextra -Werror -o "$R/usr/local/bin/fpu-probe" "$SRC/tests/xen/fpu-probe.c"
	gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$SRC" -I"$BLD" -o "$D/bin/halvm-blk-writer" "$SRC/tests/xen/halvm-blk-writer.c" \
		"$SRC/frontend-stub/halvm_writer.c" "$SRC/profile/disk/status_block.c"
	for f in $FIXTURES; do cp "$SRC/tests/data/ghc/$f" "$D/fixtures/"; done
	cp "$SRC/tests/data/eventlog/$EVENTLOG_FIXTURE" "$D/fixtures/"
	# Scenarios 11-13 (looking into a domain, sampling it): programs the
	# guest runs that the dom0 samples, the same binary on both sides (the
	# dom0's is --symbols).  Static: the guest's root is busybox and nothing
	# else.  (The guest kernel's symbols for xenctx come from the dom0's
	# /proc/kallsyms, the same kernel: Debian's System.map is a stub that
	# points at the -dbg package.)
	gcc -O0 -g -fno-omit-frame-pointer -static -no-pie -o "$D/bin/hot" "$SRC/tests/sampling/hot.c"
	cp "$D/bin/hot" "$R/root/profsvc/hot"
	# The GHC one only where Debian's ghc is there and links statically;
	# without it scenario 13 says it was skipped and why.
	rm -f "$R/root/profsvc/hoths" "$R/root/profsvc/hoths.why"
	if ! command -v ghc >/dev/null; then
		echo "no ghc on the host that built the images" > "$R/root/profsvc/hoths.why"
	elif ! { mkdir -p "$W/hs" && cp "$SRC/tests/sampling/Hot.hs" "$W/hs/" &&
	         (cd "$W/hs" && ghc -O2 -g -v0 -static -optl-static -optl-pthread Hot.hs -o hoths) >"$W/hs/ghc.log" 2>&1; }; then
		{ echo "ghc -static -optl-static failed:"; tail -5 "$W/hs/ghc.log"; } > "$R/root/profsvc/hoths.why"
	else
		cp "$W/hs/hoths" "$D/bin/hoths"
		cp "$W/hs/hoths" "$R/root/profsvc/hoths"
	fi
	[ -f "$R/root/profsvc/hoths.why" ] && log "scenario 13 will be skipped: $(head -1 "$R/root/profsvc/hoths.why")"
	cat > "$D/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
insmod /lib/xen-blkfront.ko*
# profsvc_prof=, profsvc_hp=, profsvc_eventlog= (then written to xvdp3
# too), profsvc_delay=, profsvc_wait= (tenths of a second to wait for the
# disks), profsvc_after= (poweroff, reboot, or hold:
# stay up until destroyed) come from the kernel command line.
# /sbin/poweroff and /sbin/reboot are what the kernel runs for `xl shutdown`
# and `xl reboot`.
mkdir -p /sbin; printf '#!/bin/busybox sh\nexec /bin/busybox poweroff -f\n' >/sbin/poweroff; chmod +x /sbin/poweroff
printf '#!/bin/busybox sh\nexec /bin/busybox reboot -f\n' >/sbin/reboot; chmod +x /sbin/reboot
for a in $(cat /proc/cmdline); do case "$a" in profsvc_*=*) eval "${a#profsvc_}";; esac; done
i=0; while { [ ! -b /dev/xvdp1 ] || [ ! -b /dev/xvdp2 ] || { [ -n "$eventlog" ] && [ ! -b /dev/xvdp3 ]; }; } &&
	[ $i -lt "${wait:-600}" ]; do sleep 0.1; i=$((i+1)); done
if [ -b /dev/xvdp1 ] && [ -b /dev/xvdp2 ]; then
	echo "DOMU: xvdp1 $(cat /sys/block/xvdp1/size) sectors, xvdp2 $(cat /sys/block/xvdp2/size) sectors"
	if halvm-blk-writer --delay-us "${delay:-0}" --hp "/fixtures/$hp" --prof "/fixtures/$prof" \
		${eventlog:+--eventlog "/fixtures/$eventlog"}; then
		echo "DOMU: profiles written"
	else
		echo "DOMU: WRITE ERROR"
	fi
else
	echo "DOMU: no xvdp1/xvdp2"; ls /sys/block
fi
# spin: a user process that never ends (the dom0 looks into its vCPU);
# hot, hoths: a program of known profile for profsvc_secs= CPU seconds,
# then its output (sampled from the dom0).
case "${after:-poweroff}" in
reboot) echo "DOMU: rebooting"; sync; reboot -f ;;
hold) echo "DOMU: holding"; sleep 600 ;;
spin) echo "DOMU: spinning"; while :; do :; done ;;
hot|hoths)
	echo "DOMU: $after start"
	/bin/$after "${secs:-10}" >/tmp/out 2>&1
	rc=$?
	echo "DOMU: $after done rc=$rc output $(cat /tmp/out)" ;;
esac
echo "DOMU: powering off"
sync; poweroff -f
EOF
	chmod +x "$D/init"
	(cd "$D" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/root/profsvc/guest-initrd.img"
	cp "$W/vmlinuz" "$R/root/profsvc/guest-vmlinuz"

	# ---- dom0 /init ----------------------------------------------------------------
	cat > "$R/init" <<'EOF'
#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run; mkdir -p /run/lock /var/log/xen/console /var/lib/xen
ln -sfn /proc/self/fd /dev/fd; for i in 0:stdin 1:stdout 2:stderr; do ln -sfn /proc/self/fd/${i%%:*} /dev/${i#*:}; done
exec </dev/console >/dev/console 2>&1
modprobe -a xenfs xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xen-blkback loop e1000
# The network to the fleet catalogue (QEMU's user network: this dom0 is
# 10.0.2.15, the host 10.0.2.2).
busybox hostname xen-dom0
busybox ip link set lo up
for n in /sys/class/net/*; do
	n=${n##*/}; [ "$n" = lo ] && continue
	busybox ip link set "$n" up && busybox ip addr add 10.0.2.15/24 dev "$n" && break
done
busybox syslogd -O /var/log/messages
/etc/init.d/xen start >/dev/null
# A heartbeat: a host that hears nothing for minutes knows the dom0 (or Xen)
# froze, rather than waiting for a test step.
# And a watchdog: no progress from the script for 120 s (every step is
# bounded below that or marks progress) and it is unstuck, see --unstick.
( while sleep 20; do read -r up _ </proc/uptime; echo "XENHB $up"
	if [ -f /tmp/xentest.progress ] &&
	   [ $(( $(date +%s) - $(stat -c %Y /tmp/xentest.progress) )) -ge 120 ]; then
		bash /root/profsvc/dom0-tests.sh --unstick; : >/tmp/xentest.progress
	fi; done ) &
bash /root/profsvc/dom0-tests.sh
sync
busybox poweroff -f || echo o > /proc/sysrq-trigger
sleep 30
EOF
	chmod +x "$R/init"
	log "packing dom0 initramfs"
	(cd "$R" && find . | cpio -o -H newc --quiet) > "$W/dom0.cpio"
	rm -rf "$W/x" "$W/domu-root"
	log "build done in $(elapsed "$t0" "$(now)") s; dom0.cpio $(du -m "$W/dom0.cpio" | cut -f1) MiB"
}

# stream OUT SHOWN: the XENTEST lines of serial log OUT after the first
# SHOWN, to stderr; prints how many there are now.
stream() {
	local n; n=$(tr -d '\r' < "$1" | grep -a -c 'XENTEST:' || true)
	[ "$n" -gt "$2" ] && tr -d '\r' < "$1" | grep -a 'XENTEST:' | sed -n "$(($2 + 1)),${n}p" | sed 's/^.*XENTEST: //' >&2
	echo "$n"
}

# ---- the fleet catalogue -------------------------------------------------------
# A private PostgreSQL for one round, on 127.0.0.1 (QEMU's user network
# takes the dom0's connections to 10.0.2.2:PORT there): initdb as nobody,
# trust authentication, an empty database "fleet".  Sets PG_PORT.
PGD=$W/pg
pg_start() {
	local pgbin i
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] || { log "PostgreSQL's server is not installed (Debian package postgresql)"; return 1; }
	pg_stop
	rm -rf "$PGD"; mkdir -p "$PGD"; chown nobody "$PGD"
	runuser -u nobody -- "$pgbin/initdb" -D "$PGD/data" -U profsvc --auth=trust -E UTF8 --locale=C.UTF-8 \
		>"$PGD/initdb.log" 2>&1 || { log "initdb failed: $(tail -3 "$PGD/initdb.log")"; return 1; }
	for i in 1 2 3 4 5; do
		PG_PORT=$((20000 + RANDOM % 20000))
		runuser -u nobody -- "$pgbin/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w \
			-o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PGD" start >"$PGD/ctl.log" 2>&1 && break
		PG_PORT=""
	done
	[ -n "$PG_PORT" ] || { log "the fleet catalogue's PostgreSQL did not start: $(tail -3 "$PGD/log")"; return 1; }
	"$pgbin/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U profsvc -d postgres -c "CREATE DATABASE fleet" >>"$PGD/ctl.log" 2>&1 ||
		{ log "CREATE DATABASE fleet failed: $(tail -3 "$PGD/ctl.log")"; return 1; }
	PG_BIN=$pgbin
	log "fleet catalogue: PostgreSQL on 127.0.0.1:$PG_PORT (the dom0's 10.0.2.2:$PG_PORT)"
}
pg_stop() {
	[ -s "$PGD/data/postmaster.pid" ] || return 0
	runuser -u nobody -- "${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}/pg_ctl" \
		-D "$PGD/data" -m immediate -w stop >/dev/null 2>&1 || true
}

boot() {
	[ -s "$W/dom0.cpio" ] || { log "nothing built; run build first"; exit 2; }
	local out=$W/serial.log t0; t0=$(now)
	PG_PORT=""
	[ "${XQ_FLEET:-yes}" = no ] || pg_start || return 2
	log "booting Xen under qemu (TCG), timeout ${XQ_TIMEOUT}s, serial log $out"
	: > "$out"; rm -f "$W/qemu.pid"
	# -smap,-smep: with them the dom0 faults at once in Xen's
	# create_bounce_frame under TCG.  spec-ctrl=eager-fpu (XQ_XEN_ARGS):
	# on this AMD-looking CPU Xen switches FPU state lazily, relying on #NM,
	# which TCG does not raise for XSAVE/XRSTOR with CR0.TS set; dom0
	# programs then ran with another context's XMM registers and crashed
	# or spun (docs/xen-in-qemu.md; tests/xen/fpu-probe.c shows it).  No
	# AVX: less state to get wrong, and glibc's AVX2 string code was where
	# it showed first.
	# print-fatal-signals: a dom0 program that dies of a signal is logged
	# with its registers, see spoiled().
	log "qemu -cpu $XQ_CPU; Xen: ${XQ_XEN_ARGS:-(defaults)}"
	qemu-system-x86_64 -accel tcg -cpu "$XQ_CPU" -m 3072 -smp 2 \
		-display none -monitor none -serial stdio -nodefaults -no-reboot \
		-pidfile "$W/qemu.pid" -kernel "$W/xen" \
		-netdev user,id=net0 -device e1000,netdev=net0,romfile= \
		-append "console=com1 com1=115200,8n1 dom0_mem=1536M,max:1536M $XQ_XEN_ARGS" \
		-initrd "$W/vmlinuz console=hvc0 print-fatal-signals=1 profsvc_pg=$PG_PORT rdinit=/init,$W/dom0.cpio" \
		< /dev/null > "$out" 2>&1 &
	local qpid="" deadline=$(( $(date +%s) + XQ_TIMEOUT ))
	for i in $(seq 1 50); do [ -s "$W/qemu.pid" ] && break; sleep 0.2; done
	qpid=$(cat "$W/qemu.pid" 2>/dev/null || true)
	[ -n "$qpid" ] || { log "qemu did not start"; tail "$out" >&2; return 2; }
	# (stopped by a signal: QEMU and the catalogue go too, and no round follows)
	trap 'kill "$qpid" 2>/dev/null || true; pg_stop' EXIT
	trap 'kill "$qpid" 2>/dev/null || true; pg_stop; exit 2' INT TERM
	local shown=0 progress; progress=$(date +%s)
	while kill -0 "$qpid" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$deadline" ]; then log "TIMEOUT: killing qemu"; kill "$qpid"; break; fi
		if [ "$shown" -gt 0 ] && [ $(( $(date +%s) - progress )) -ge "$XQ_STALL" ]; then
			log "no new test line for ${XQ_STALL} s although every step is bounded: the dom0 test script itself is stuck; killing qemu"
			kill "$qpid"; break
		fi
		if [ $(( $(date +%s) - $(stat -c %Y "$out") )) -ge "$XQ_SILENCE" ]; then
			log "no serial output for ${XQ_SILENCE} s although the dom0 prints a heartbeat every 20 s: Xen or the dom0 kernel hung; killing qemu"
			kill "$qpid"; break
		fi
		# Stream the scenario lines as they come.
		local n; n=$(stream "$out" "$shown")
		[ "$n" -gt "$shown" ] && shown=$n progress=$(date +%s)
		sleep 1
	done
	wait 2>/dev/null || true
	pg_stop
	trap - EXIT INT TERM
	stream "$out" "$shown" >/dev/null
	log "qemu ran $(elapsed "$t0" "$(now)") s"
	local result; result=$(tr -d '\r' < "$out" | { grep -a -o 'XENTEST: RESULT .*' || true; } | tail -1 | sed 's/XENTEST: RESULT //')
	if [ -z "$result" ]; then log "the run did not complete (see $out)"; tail -30 "$out" >&2; return 2; fi
	echo "$result"
	case "$result" in *" 0 failed") return 0 ;; *) return 1 ;; esac
}

# Why the last round cannot be judged, if it cannot: the emulated host broke
# under it.  Under QEMU's TCG, Xen and the dom0 now and then corrupt the
# memory of dom0 programs (seen: tail, xl, profdb crashing on wild pointers,
# a guest kernel image read back corrupt from the dom0's page cache; see
# docs/xen-in-qemu.md).  No program of ours can do that to another process,
# so such a round says nothing about profsvc either way.
spoiled() {
	# grep reads the file itself: `tr | grep -q` under pipefail fails
	# whenever grep quits early and tr gets SIGPIPE.
	local out=$W/serial.log why=""
	if grep -aqE "$DOM0_FAULT" "$out"; then
		why="programs faulted in the dom0:$(grep -aoE 'Comm: [^ ]+' "$out" | sed 's/Comm: //' | sort | uniq -c | tr -s ' \n' ' ')"
	fi
	if grep -aq 'XENTEST: STUCK' "$out"; then
		why="${why:+$why; }stuck programs killed:$(grep -ao 'XENTEST: STUCK pid [0-9]* [^ ]*' "$out" | awk '{print $5}' | tr '\n' ' ')"
	fi
	if grep -aq 'XENTEST: FAIL 0 host:' "$out"; then
		why="${why:+$why; }fpu-probe saw dom0 registers corrupted"
	fi
	grep -aq 'XENTEST: RESULT' "$out" || why="${why:+$why; }the round did not complete"
	echo "$why"
}

# Rounds on the same images until one can be judged: another round only
# when the last one failed and was spoiled (above), at most XQ_ROUNDS, and
# only while a whole round (XQ_TIMEOUT) still fits in XQ_BUDGET seconds
# from the first.  A round that fails on a sound host is final; a round
# whose checks all passed stands, faults or not (they are printed either
# way).  With a spoil rate p a false red needs every round spoiled: p^k
# for k rounds (docs/xen-in-qemu.md).
rounds() {
	local r=0 rc why t0; t0=$(date +%s)
	while :; do
		r=$((r + 1))
		log "round $r"
		rc=0; boot || rc=$?
		why=$(spoiled)
		[ -n "$why" ] && log "round $r: the emulated host misbehaved: $why"
		[ "$rc" = 0 ] && return 0
		[ -n "$why" ] || return "$rc"
		if [ "$r" -ge "$XQ_ROUNDS" ]; then
			log "round $r spoiled ($why), and no round is left (XQ_ROUNDS=$XQ_ROUNDS)"
			return "$rc"
		fi
		if [ $(( $(date +%s) - t0 + XQ_TIMEOUT )) -gt "$XQ_BUDGET" ]; then
			log "round $r spoiled ($why), and another round of up to ${XQ_TIMEOUT} s does not fit in XQ_BUDGET=${XQ_BUDGET} s"
			return "$rc"
		fi
		log "round $r spoiled ($why): its results do not count; running the round once more"
	done
}

case "${1:-all}" in
	build) build ;;
	boot) rounds ;;
	all) build; rounds ;;
	clean) rm -rf "$W" ;;
	*) echo "usage: $0 [build|boot|all|clean]" >&2; exit 2 ;;
esac
