#!/usr/bin/env python3
"""live_bench.py - make bench's figures for profdb serve, live: the latency
from a heap sample's commit to its Server-Sent Event reaching a page, and
the server's CPU, with 1 and with 64 guests writing on xensim.

Each simulated HaLVM guest (frontend-stub --pace, as GHC's -i) logs the
CLOCK_MONOTONIC time each flushed sample was acknowledged (the backend acks
only after its commit); a page here is an event-stream client that notes
when each sample's event arrives (Python's monotonic clock is the same
clock).  The latency of a sample is arrival minus acknowledgement: the
server's whole share, from the commit to the event on the page's socket.
With 64 guests, 8 pages each watch one of them.  Guests sample at GHC's
default interval (-i0.1, frontend-stub --pace 100), and once at twice that
rate.  Medians and p99 over every
sample watched; the server's CPU from /proc/PID/stat over the writing.

GHC's eventlog, live: a guest writes evprog.eventlog (frontend-stub
--eventlog --pace 100: a 2 KiB buffer flushed every 0.1 s; once every
0.02 s) and logs when
each flush was acknowledged (--flush-log); its run page is open in headless
Chromium (bench/eventlog_page.cjs, puppeteer-core from tests/peers), which
notes the frame after each timeline redraw and the eventlog size that
redraw has at least.  A flush's latency is from its acknowledgement to the
first redraw having its bytes: the server's eventlog event, the page's
fetch of the section, its parse and redraw.  Flushes acknowledged before
the page's first redraw are not counted.  Needs chromium, node and
puppeteer-core (PROFSVC_PEERS or tests/peers/node_modules): without them
the bench is broken (exit 1), as it is when a guest, a command or the
page fails, or a round measures nothing.  A target is a figure, never the
exit status.  --quick: one round of each, the guests writing the first 40
heap samples of the profile (4 s at -i0.1) instead of all 193.

usage: live_bench.py --build DIR --src DIR [--json FILE] [--quick] [--runs N] [--only eventlog]
"""
import argparse, http.client, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile
import threading, time

import benchlib
from benchlib import Broken

QUICK_SAMPLES = 40


def first_samples(src, dst, n):
    """The heap profile src cut after its n-th sample, into dst."""
    out, k = [], 0
    with open(src, encoding='latin-1') as f:
        for line in f:
            out.append(line)
            if line.startswith('END_SAMPLE'):
                k += 1
                if k == n:
                    break
    with open(dst, 'w', encoding='latin-1') as f:
        f.writelines(out)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else None


class Page(threading.Thread):
    """An event-stream client: (samples so far, arrival ns) per event."""

    def __init__(self, port, run):
        super().__init__(daemon=True)
        self.port, self.run_id, self.seen, self.ended, self.since = port, run, [], False, None

    def run(self):
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=120)
        c.request('GET', '/api/runs/%d/events' % self.run_id)
        r = c.getresponse()
        event = None
        for line in r:
            t = time.monotonic_ns()
            line = line.decode('utf-8', 'replace').rstrip('\n')
            if line.startswith('event: '):
                event = line[7:]
                if event == 'hello':
                    self.since = t  # samples acknowledged before the page came are not latency
            elif line.startswith('data: ') and event in ('heap', 'samples'):
                d = json.loads(line[6:])
                n = len(d['heap']['times']) if event == 'heap' else d['from'] + len(d['times'])
                self.seen.append((n, t))
            elif line.startswith('data: ') and event == 'end':
                self.ended = True
                break


def cpu_ticks(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def one(a, guests, pages, pace):
    b = a.build
    w = tempfile.mkdtemp(prefix='profsvc-lbench.')
    env = dict(os.environ, XENSIM_DIR=w + '/xen', PROFSVC_RUN_DIR=w + '/run', PROFSVC_DB=w + '/p.db')
    for k in ('http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY'):
        env.pop(k, None)
    os.makedirs(w + '/run')
    hp = os.path.join(a.src, 'tests/data/ghc/phases/phases-hd-i0.01.hp')
    if a.quick:
        first_samples(hp, w + '/quick.hp', QUICK_SAMPLES)
        hp = w + '/quick.hp'
    prof = os.path.join(a.src, 'tests/data/ghc/phases/phases-p-hc.prof')
    run = lambda *c, **k: subprocess.run(c, env=env, check=True, capture_output=True, text=True, **k)
    serve = None
    try:
        run(b + '/xensim/xensim', 'start', '--dir', w + '/xen')
        run(b + '/profile-backend', 'start', '--platform', 'sim', '--db', w + '/p.db')
        serve = subprocess.Popen([b + '/profdb', 'serve', '--listen', '127.0.0.1:0'], env=env,
                                 stderr=subprocess.PIPE, text=True)
        port = int(re.search(r'127\.0\.0\.1:(\d+)', serve.stderr.readline()).group(1))
        doms = []
        for i in range(guests):
            cfg = '%s/g%d.cfg' % (w, i)
            with open(cfg, 'w') as f:
                f.write('name = "lb-%d"\nkernel = "k"\ndisk = [ \'vdev=xvdp1, backendtype=profsvc\', '
                        '\'vdev=xvdp2, backendtype=profsvc\' ]\n' % i)
            doms.append(int(run(b + '/profile-backend', 'create', '--platform', 'sim', cfg).stdout))
        stubs = [subprocess.Popen([b + '/frontend-stub/frontend-stub', '--mode', 'halvm', '--domid', str(d),
                                   '--hp', hp, '--prof', prof, '--pace', str(pace), '-q',
                                   '--sample-log', '%s/s%d.log' % (w, i)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for i, d in enumerate(doms)]
        # the runs of the watched guests, as the backend starts them
        ids = {}
        for _ in range(200):
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            c.request('GET', '/api/runs?limit=1000')
            for r in json.loads(c.getresponse().read())['runs']:
                ids[r['name']] = r['run_id']
            if all(('lb-%d' % i) in ids for i in range(pages)):
                break
            time.sleep(0.05)
        watchers = [Page(port, ids['lb-%d' % i]) for i in range(pages)]
        for p in watchers:
            p.start()
        t0, c0 = time.monotonic(), cpu_ticks(serve.pid)
        for i, s in enumerate(stubs):
            benchlib.check_exit('frontend-stub of guest lb-%d' % i, s)
        t1, c1 = time.monotonic(), cpu_ticks(serve.pid)
        for d in doms:
            run(b + '/xensim/xensim', 'destroy', '--dir', w + '/xen', str(d))
        for p in watchers:
            p.join(timeout=20)
        lat = []
        for i, p in enumerate(watchers):
            ack = {}
            with open('%s/s%d.log' % (w, i)) as f:
                for line in f:
                    k, ns = line.split()
                    ack[int(k)] = int(ns)
            prev = 0
            for n, t in p.seen:
                for k in range(prev, n):
                    if k in ack and p.since is not None and ack[k] >= p.since:
                        lat.append((t - ack[k]) / 1e6)
                prev = max(prev, n)
        cpu = (c1 - c0) / os.sysconf('SC_CLK_TCK') / (t1 - t0) * 100
        return lat, cpu, all(p.ended for p in watchers)
    finally:
        if serve:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=10)
        subprocess.run([b + '/profile-backend', 'stop'], env=env, capture_output=True)
        subprocess.run([b + '/xensim/xensim', 'stop', '--dir', w + '/xen'], env=env, capture_output=True)
        shutil.rmtree(w, ignore_errors=True)


def eventlog_round(a, nm, pace):
    """One guest writing GHC's eventlog, its page open: (latencies ms, page errors)."""
    b = a.build
    w = tempfile.mkdtemp(prefix='profsvc-elbench.')
    env = dict(os.environ, XENSIM_DIR=w + '/xen', PROFSVC_RUN_DIR=w + '/run', PROFSVC_DB=w + '/p.db')
    for k in ('http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY'):
        env.pop(k, None)
    os.makedirs(w + '/run')
    el = os.path.join(a.src, 'tests/data/eventlog/evprog.eventlog')
    run = lambda *c, **k: subprocess.run(c, env=env, check=True, capture_output=True, text=True, **k)
    serve = page = stub = None
    try:
        run(b + '/xensim/xensim', 'start', '--dir', w + '/xen')
        run(b + '/profile-backend', 'start', '--platform', 'sim', '--db', w + '/p.db')
        serve = subprocess.Popen([b + '/profdb', 'serve', '--listen', '127.0.0.1:0'], env=env,
                                 stderr=subprocess.PIPE, text=True)
        port = int(re.search(r'127\.0\.0\.1:(\d+)', serve.stderr.readline()).group(1))
        page = subprocess.Popen(['node', os.path.join(a.src, 'bench/eventlog_page.cjs'), nm], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if page.stdout.readline().strip() != 'launched':
            raise Broken('the browser did not start (bench/eventlog_page.cjs)')
        cfg = w + '/g.cfg'
        with open(cfg, 'w') as f:
            f.write('name = "el-live"\nkernel = "k"\ndisk = [ ' +
                    ', '.join("'vdev=xvdp%d, backendtype=profsvc'" % i for i in (1, 2, 3)) + ' ]\n')
        dom = int(run(b + '/profile-backend', 'create', '--platform', 'sim', cfg).stdout)
        stub = subprocess.Popen([b + '/frontend-stub/frontend-stub', '--mode', 'halvm', '--domid', str(dom),
                                 '--eventlog', el, '--pace', str(pace), '-q', '--flush-log', w + '/f.log'],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rid = None
        for _ in range(200):
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            c.request('GET', '/api/runs?limit=10')
            rid = next((r['run_id'] for r in json.loads(c.getresponse().read())['runs']
                        if r['name'] == 'el-live'), None)
            if rid is not None:
                break
            time.sleep(0.02)
        if rid is None:
            raise Broken('the guest el-live never had a run in profdb serve')
        # the guest held off its CPU while the page opens: one that wrote
        # its last flush first (a second at 0.02 s; Chromium can take
        # longer on a busy host) leaves the page nothing to redraw
        stub.send_signal(signal.SIGSTOP)
        page.stdin.write('http://127.0.0.1:%d/runs/%d\n' % (port, rid))
        page.stdin.flush()
        ready = page.stdout.readline().strip() == 'ready'
        stub.send_signal(signal.SIGCONT)
        if not ready:
            raise Broken('the run page did not open in the browser (bench/eventlog_page.cjs)')
        benchlib.check_exit('frontend-stub --eventlog', stub)
        run(b + '/xensim/xensim', 'destroy', '--dir', w + '/xen', str(dom))
        time.sleep(1)
        out, _ = page.communicate(timeout=60)
        if page.returncode != 0:
            raise Broken('bench/eventlog_page.cjs exited with status %d' % page.returncode)
        drawn, errors = [], None
        for line in out.splitlines():
            f = line.split()
            if f[0] == 'errors':
                errors = int(f[1])
            elif f[0] != 'null':
                drawn.append((int(f[0]), int(f[1])))
        acks = []
        with open(w + '/f.log') as f:
            for line in f:
                pos, ns = line.split()
                acks.append((int(pos), int(ns)))
        lat = []
        if drawn:
            since = drawn[0][1]
            for pos, ns in acks:
                if ns < since:
                    continue
                t = next((t for by, t in drawn if by >= pos), None)
                if t is not None:
                    lat.append((t - ns) / 1e6)
        return lat, errors, len(acks), len(drawn)
    finally:
        for p in (stub, page):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        if serve:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=10)
        subprocess.run([b + '/profile-backend', 'stop'], env=env, capture_output=True)
        subprocess.run([b + '/xensim/xensim', 'stop', '--dir', w + '/xen'], env=env, capture_output=True)
        shutil.rmtree(w, ignore_errors=True)


def browser_peers(a):
    """The node_modules holding puppeteer-core; Broken without it, node or
    chromium (asked first: a missing peer stops the bench before it runs)."""
    benchlib.need('chromium', 'chromium')
    benchlib.need('node', 'nodejs')
    return benchlib.need_peers_module(a.src, 'puppeteer-core')


def eventlog_live(a, runs, res, nm):
    print('\nprofdb serve, live: an eventlog flush acknowledged to its timeline redrawn on the page (Chromium)')
    print('  %-36s %10s %10s %10s %10s' % ('', 'p50 ms', 'p99 ms', 'flushes', 'redraws'))
    # a buffer every 0.1 s, and five times as often: events coalesce while
    # a fetch is in flight
    for pace in (100, 20):
        p50s, p99s, every, redraws, errs = [], [], [], 0, 0
        for _ in range(runs):
            lat, errors, flushes, nd = eventlog_round(a, nm, pace)
            if not lat:
                raise Broken('eventlog flushed every %g s: no flush reached the page (%d flushes, %d redraws, '
                             'page errors %s)' % (pace / 1000, flushes, nd, errors))
            p50s.append(pct(lat, 50))
            p99s.append(pct(lat, 99))
            every += lat
            redraws += nd
            errs += errors or 0
        name = '1 guest, 1 page, eventlog flushed every %g s' % (pace / 1000)
        med = lambda v: statistics.median(v) if v else float('nan')
        print('  %-36s %10.1f %10.1f %10d %10d   (median of %d rounds: p50 %.1f..%.1f, p99 %.1f..%.1f; '
              'all flushes: p50 %.1f, p99 %.1f; page errors %d)'
              % (name, med(p50s), med(p99s), len(every), redraws, runs, min(p50s or [0]), max(p50s or [0]),
                 min(p99s or [0]), max(p99s or [0]), pct(every, 50) or 0, pct(every, 99) or 0, errs))
        res[name] = {'p50_ms': p50s, 'p99_ms': p99s, 'flushes': len(every), 'redraws': redraws,
                     'all_p50_ms': pct(every, 50), 'all_p99_ms': pct(every, 99), 'page_errors': errs}
    print('  target: p50 < 100 ms (issue 32)')


def main():
    global a
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--json')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--only', choices=['eventlog'], help='only the eventlog page\'s figures')
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    runs = 1 if a.quick else a.runs
    benchlib.quick_note('live_bench', a.quick)
    nm = browser_peers(a)
    res = {}
    if a.only == 'eventlog':
        eventlog_live(a, runs, res, nm)
        if a.json:
            with open(a.json, 'w') as f:
                json.dump(res, f, indent=1)
        return
    print('\nprofdb serve, live: a sample\'s commit (the guest\'s acknowledged flush) to its event on a page')
    print('  %-36s %10s %10s %10s %12s' % ('', 'p50 ms', 'p99 ms', 'samples', 'server CPU'))
    # GHC samples the heap every 0.1 s by default (-i0.1); the last row
    # writes twice as fast
    for guests, pages, pace in ((1, 1, 100), (64, 8, 100), (64, 8, 50)):
        p50s, p99s, cpus, n = [], [], [], 0
        for _ in range(runs):
            lat, cpu, ended = one(a, guests, pages, pace)
            if not lat:
                raise Broken('%d guests, %d pages: no sample reached a page' % (guests, pages))
            if not ended:
                raise Broken('%d guests, %d pages: a page never had its run\'s end event' % (guests, pages))
            p50s.append(pct(lat, 50))
            p99s.append(pct(lat, 99))
            cpus.append(cpu)
            n += len(lat)
        name = '%d guest%s, %d page%s, -i%g' % (guests, 's' if guests > 1 else '', pages,
                                               's' if pages > 1 else '', pace / 1000)
        med = lambda v: statistics.median(v) if v else float('nan')
        print('  %-36s %10.1f %10.1f %10d %11.1f%%   (median of %d; p99 %.1f..%.1f, CPU %.1f..%.1f%%)'
              % (name, med(p50s), med(p99s), n, med(cpus), runs, min(p99s or [0]), max(p99s or [0]),
                 min(cpus), max(cpus)))
        res[name] = {'p50_ms': p50s, 'p99_ms': p99s, 'server_cpu_pct': cpus, 'samples': n}
    print('  targets: p50 < 50 ms, p99 < 250 ms; server CPU < 5% of one core (64 guests at GHC\'s '
          'default -i0.1, 8 pages)')
    eventlog_live(a, runs, res, nm)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(res, f, indent=1)


if __name__ == '__main__':
    benchlib.main('live_bench', main)
