#!/usr/bin/env python3
"""trace_bench.py - make bench's figures for MirageOS traces on xensim.

1. What keeping a trace costs the backend: its CPU (utime + stime from
   /proc) per MB of packets kept, with 8 frontend-stub --mode mirage guests
   writing at a steady rate, against the backend's CPU over the same time
   with the same guests not sharing a buffer (the baseline: the guests
   alone, measured in the same run).
2. The event rate a guest can sustain without losing a packet, for a ring
   of 16 pages (64 KiB) and of 256 pages (1 MiB, what mirage-profile's
   examples share): the highest rate of a doubling then halving search at
   which a 2 s trace keeps every packet.
Medians of --runs runs (3) with their spread.  --quick: one run, the cost
over 1 s, the search with 0.5 s traces and one halving step.  A target is
a figure, never the exit status; a guest or command that fails, or a cost
trace the backend did not keep, breaks the bench (exit 1).

usage: trace_bench.py --build DIR --src DIR [--json FILE] [--quick] [--runs N]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

import benchlib
from benchlib import Broken


def cpu_ticks(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Host:
    def __init__(self, build):
        self.b = build
        self.t = tempfile.mkdtemp(prefix='profsvc-tracebench.')
        self.env = dict(os.environ, XENSIM_DIR=self.t + '/xen', PROFSVC_RUN_DIR=self.t + '/run',
                        PROFSVC_DB=self.t + '/p.db')
        os.makedirs(self.t + '/run')
        self.sh([self.b + '/xensim/xensim', 'start', '--dir', self.t + '/xen'])
        self.sh([self.b + '/profile-backend', 'start', '--platform', 'sim'])
        with open(self.t + '/run/profile-backend.pid') as f:
            self.pid = int(f.read())

    def sh(self, argv, **kw):
        return benchlib.run(argv, env=self.env, **kw).stdout

    def guests(self, n, args, prefix):
        doms = [self.sh([self.b + '/xensim/xensim', 'create', '--name', '%s-%d' % (prefix, i)]).strip()
                for i in range(n)]
        procs = [subprocess.Popen([self.b + '/frontend-stub/frontend-stub', '--platform', 'sim', '--mode',
                                   'mirage', '--domid', d, '-q'] + args, env=self.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for d in doms]
        return doms, procs

    def finish(self, doms, procs):
        for d, p in zip(doms, procs):
            benchlib.check_exit('frontend-stub --mode mirage of domain %s' % d, p)
        for d in doms:
            self.sh([self.b + '/xensim/xensim', 'destroy', d])
        time.sleep(0.3)

    def trace(self, name):
        runs = json.loads(self.sh([self.b + '/profdb', 'query', 'runs', '--name', name, '--json']))
        r = runs[-1]['run_id'] if isinstance(runs, list) else runs['runs'][-1]['run_id']
        show = json.loads(self.sh([self.b + '/profdb', 'show', str(r), '--json']))
        return show.get('trace')

    def close(self):
        subprocess.run([self.b + '/profile-backend', 'stop'], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run([self.b + '/xensim/xensim', 'stop', '--dir', self.t + '/xen'], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.t, ignore_errors=True)


def cost(host, k, seconds, rate):
    """Backend CPU ms per MB kept, and the baseline CPU ms over the same time."""
    hz = os.sysconf('SC_CLK_TCK')
    events = int(rate * seconds)
    # baseline: the same guests, no buffer shared (a refused list: nothing mapped)
    t0 = cpu_ticks(host.pid)
    doms, procs = host.guests(8, ['--pages', '16', '--events', str(events), '--rate', str(rate),
                                  '--hostile', 'refs-garbage'], 'base%d' % k)
    host.finish(doms, procs)
    base_ms = (cpu_ticks(host.pid) - t0) * 1000 / hz
    t0 = cpu_ticks(host.pid)
    doms, procs = host.guests(8, ['--pages', '16', '--events', str(events), '--rate', str(rate)], 'cost%d' % k)
    host.finish(doms, procs)
    ms = (cpu_ticks(host.pid) - t0) * 1000 / hz
    mb = lost = 0
    for i in range(8):
        tr = host.trace('cost%d-%d' % (k, i))
        if not tr:
            raise Broken('guest cost%d-%d: its run has no trace' % (k, i))
        mb += tr['bytes'] / 1e6
        lost += tr['packets_lost']
    return ms, base_ms, mb, lost


def sustainable(host, pages, tag, quick):
    """Highest events/s at which a 2 s trace (--quick: 0.5 s) keeps every
    packet."""
    rate, best, n = 20000, 0, 0

    def clean(rate):
        nonlocal n
        n += 1
        name = '%s-%d' % (tag, n)
        doms, procs = host.guests(1, ['--pages', str(pages), '--events', str(int(rate * (0.5 if quick else 2))),
                                      '--rate', str(int(rate))], name)
        host.finish(doms, procs)
        tr = host.trace(name + '-0')
        return tr is not None and tr['packets_lost'] == 0

    while rate <= 5e6 and clean(rate):
        best, rate = rate, rate * 2
    lo, hi = best, rate
    for _ in range(1 if quick else 4):
        mid = (lo + hi) / 2
        if clean(mid):
            lo = mid
        else:
            hi = mid
    return lo


def summary(v):
    return {'median': statistics.median(v), 'min': min(v), 'max': max(v), 'runs': v}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--json')
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--runs', type=int, default=3)
    a = ap.parse_args()
    runs = 1 if a.quick else a.runs
    benchlib.quick_note('trace_bench', a.quick)
    per_mb, base, rate16, rate256 = [], [], [], []
    for k in range(runs):
        host = Host(os.path.abspath(a.build))
        try:
            ms, base_ms, mb, lost = cost(host, k, 1 if a.quick else 3, 20000)
            if not mb:
                raise Broken('the 8 guests\' traces kept no bytes')
            per_mb.append((ms - base_ms) / mb if mb else float('nan'))
            base.append(base_ms)
            rate16.append(sustainable(host, 16, 'r16x%d' % k, a.quick))
            rate256.append(sustainable(host, 256, 'r256x%d' % k, a.quick))
        finally:
            host.close()
    res = {'backend_cpu_ms_per_mb': summary(per_mb), 'baseline_cpu_ms': summary(base),
           'sustained_events_per_s_64k': summary(rate16), 'sustained_events_per_s_1m': summary(rate256)}
    print('traces (8 guests at 20000 events/s; %d runs, median (min-max)):' % runs)
    print('  baseline: backend CPU, guests sharing nothing  %.1f ms (%.1f-%.1f) over the same time'
          % (statistics.median(base), min(base), max(base)))
    print('  backend CPU per MB kept        %.1f ms (%.1f-%.1f), over its CPU with the guests sharing nothing'
          % (res['backend_cpu_ms_per_mb']['median'], min(per_mb), max(per_mb)))
    print('  events/s kept without loss     64 KiB ring: %.0f (%.0f-%.0f); 1 MiB ring: %.0f (%.0f-%.0f)'
          % (statistics.median(rate16), min(rate16), max(rate16), statistics.median(rate256), min(rate256),
             max(rate256)))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(res, f)


if __name__ == '__main__':
    benchlib.main('trace_bench', main)
