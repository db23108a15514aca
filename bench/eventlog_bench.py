#!/usr/bin/env python3
"""eventlog_bench.py - make bench's figures for GHC eventlogs: does decoding
keep up with the guest?

A large eventlog is made from a real one (tests/data/eventlog/threaded.eventlog,
GHC 9.0.2, two capabilities): its header once, then its events - whole
blocks, as the RTS writes them - repeated until the file holds --mb MB,
then the end marker.  It is decoded by:
  - the decoder alone (tests/eventlog_dump counts: every event read into its
    fields, nothing printed), MB/s;
  - `profdb events` of a run holding it (decoded, sorted, printed as text),
    MB/s;
  - Debian's `ghc-events show` (the reference reader, libghc-ghc-events-dev),
    MB/s, in the same run: the ratio ours / ghc-events.
Target: the decoder >= 200 MB/s.  Medians of --runs runs (3) with their
spread (--quick: 2 runs of a 16 MB log).  A target is a figure, never the
exit status; ghc-events is needed (its figures are the baseline), and
without it, or when a command fails, the bench is broken (exit 1).

usage: eventlog_bench.py --build DIR --src DIR [--json FILE] [--quick] [--runs N] [--mb N]
"""
import argparse, json, os, shutil, statistics, struct, subprocess, sys, tempfile, time

import benchlib


def big_eventlog(src, dst, mb):
    """The fixture's header, its events repeated to about mb MB, the end."""
    data = open(src, 'rb').read()
    start = data.index(b'datb') + 4
    assert data[-2:] == b'\xff\xff', 'the fixture does not end with the end marker'
    header, events = data[:start], data[start:-2]
    want = mb << 20
    with open(dst, 'wb') as f:
        f.write(header)
        n = 0
        while n < want:
            f.write(events)
            n += len(events)
        f.write(b'\xff\xff')
    return os.path.getsize(dst)


def timed(argv, env=None):
    t0 = time.monotonic()
    benchlib.run(argv, stdout=subprocess.DEVNULL, env=env)
    return time.monotonic() - t0


def summary(v):
    return {'median': statistics.median(v), 'min': min(v), 'max': max(v), 'runs': v}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--json')
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--mb', type=int, default=0)
    a = ap.parse_args()
    mb = a.mb or (16 if a.quick else 64)
    runs = 2 if a.quick else a.runs
    benchlib.quick_note('eventlog_bench', a.quick)
    ghc_events = benchlib.need('ghc-events', 'libghc-ghc-events-dev')
    t = tempfile.mkdtemp(prefix='profsvc-eventlogbench.')
    try:
        log = t + '/big.eventlog'
        size = big_eventlog(a.src + '/tests/data/eventlog/threaded.eventlog', log, mb)
        dump = a.build + '/tests/eventlog_dump'
        if not os.path.exists(dump):
            subprocess.run(['make', '-s', '-C', a.build, 'tests/eventlog_dump'], check=True)
        env = dict(os.environ, PROFSVC_DB=t + '/p.db')
        mkdisk = a.build + '/frontend-stub/halvm-mkdisk'
        disk_mib = (size >> 20) + 2
        subprocess.run([mkdisk, '--size', str(disk_mib << 20), '--eventlog', log, t + '/e.disk'], check=True,
                       stdout=subprocess.DEVNULL)
        benchlib.run([a.build + '/profdb', 'import-disk', '--eventlog', t + '/e.disk'], env=env)
        ours, profdb, theirs = [], [], []
        for _ in range(runs):  # interleaved: each round measures all three
            ours.append(size / timed([dump, 'counts', log]) / 1e6)
            profdb.append(size / timed([a.build + '/profdb', 'events', 'latest'], env=env) / 1e6)
            theirs.append(size / timed([ghc_events, 'show', log]) / 1e6)
        res = {'bytes': size, 'decoder_mb_s': summary(ours), 'profdb_events_mb_s': summary(profdb)}
        print('eventlog (%.0f MB from a real GHC 9.0.2 log; %d runs, median (min-max)):' % (size / 1e6, runs))
        print('  decoder alone                %7.1f MB/s (%.1f-%.1f)  target >= 200: %s'
              % (statistics.median(ours), min(ours), max(ours), 'met' if min(ours) >= 200 else 'NOT MET'))
        print('  profdb events (text)         %7.1f MB/s (%.1f-%.1f)' % (statistics.median(profdb), min(profdb), max(profdb)))
        ratio = [o / g for o, g in zip(ours, theirs)]
        res['ghc_events_show_mb_s'] = summary(theirs)
        res['decoder_over_ghc_events'] = summary(ratio)
        res['profdb_events_over_ghc_events'] = summary([p / g for p, g in zip(profdb, theirs)])
        print('  ghc-events show (baseline)   %7.1f MB/s (%.1f-%.1f)' % (statistics.median(theirs), min(theirs), max(theirs)))
        print('  decoder / ghc-events         %7.1fx (%.1f-%.1f)' % (statistics.median(ratio), min(ratio), max(ratio)))
        print('  profdb events / ghc-events   %7.1fx' % statistics.median(res['profdb_events_over_ghc_events']['runs']))
        if a.json:
            with open(a.json, 'w') as f:
                json.dump(res, f)
    finally:
        shutil.rmtree(t, ignore_errors=True)


if __name__ == '__main__':
    benchlib.main('eventlog_bench', main)
