#!/usr/bin/env python3
"""view_bench.py - `make bench`'s viewing figures (issue 15's targets), each
against its baseline measured in the same run: the heap chart of a 7 MB,
10,000-sample .hp against hp2ps on the same file; the HTML report against
2x hp2ps, and its time from opening to drawn chart in headless Chromium;
peak memory of the parse against the largest sample plus the bands; top
and diff on two 7 MB .prof files.  Medians of --runs (5; --quick: 3, and
2 of each page in Chromium) with min and max; a target is a figure, never
the exit status (bench/view.json).  Its peers, hp2ps and Chromium, are
needed: without one the bench is broken (exit 1), as it is when a command
fails or a page never says it drew its chart.

usage: view_bench.py --build DIR --src DIR [--runs N] [--json FILE] [--quick]
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

import benchlib
from benchlib import Broken


def make_hp(src, path, samples):
    """A long heap profile from a real one: its samples cycled, times rising."""
    text = open(src, encoding='latin-1').read()
    head = text[:text.index('BEGIN_SAMPLE')]
    bodies = re.findall(r'BEGIN_SAMPLE [^\n]*\n(.*?)END_SAMPLE', text, re.S)
    bodies = [b for b in bodies if b]
    largest = 0
    with open(path, 'w', encoding='latin-1') as f:
        f.write(head)
        for i in range(samples):
            b = bodies[i % len(bodies)]
            largest = max(largest, len(b))
            t = '%.6f' % (i * 0.01)
            f.write('BEGIN_SAMPLE %s\n%sEND_SAMPLE %s\n' % (t, b, t))
    return largest


def make_prof(src, path, copies, slower=None):
    """A big time profile: the fixture's call tree under MAIN, copied with
    renamed cost centres (and one made slower, for diff)."""
    lines = open(src, encoding='latin-1').read().split('\n')
    at = next(i for i, l in enumerate(lines) if l.startswith('COST CENTRE') and ' no.' in l)
    tree = [l for l in lines[at + 2:] if l.strip()]
    with open(path, 'w', encoding='latin-1') as f:
        f.write('\n'.join(lines[:at + 2]) + '\n' + tree[0] + '\n')
        for k in range(copies):
            for l in tree[1:]:
                m = re.match(r'( +)(\S+)(.*)', l)
                name = '%s_%d' % (m.group(2), k)
                rest = m.group(3)
                if slower and k == 0 and m.group(2) == slower:
                    rest = re.sub(r'(\d+\.\d)(\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d\s*)$',
                                  lambda x: '%.1f%s' % (float(x.group(1)) + 10, x.group(2)), rest)
                f.write('%s%s%s\n' % (m.group(1), name, rest))


def measure(cmd, runs, env=None, cwd=None):
    """Wall seconds and peak RSS (KiB) of each of `runs` runs."""
    out = []
    for _ in range(runs):
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.monotonic() - t0
        err = p.stderr.read().decode(errors='replace')
        p.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise Broken('%s exited with status %d: %s' % (' '.join(cmd), os.waitstatus_to_exitcode(status),
                                                           err[-400:]))
        out.append((dt, ru.ru_maxrss))
    return out


def stats(xs):
    return {'median': statistics.median(xs), 'min': min(xs), 'max': max(xs), 'n': len(xs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--json')
    ap.add_argument('--quick', action='store_true')
    a = ap.parse_args()
    runs = 3 if a.quick else a.runs
    page_runs = 2 if a.quick else a.runs
    benchlib.quick_note('view_bench', a.quick)
    hp2ps = benchlib.need('hp2ps', 'ghc')
    chromium = benchlib.need('chromium', 'chromium')
    profdb = os.path.join(a.build, 'profdb')
    mkdisk = os.path.join(a.build, 'frontend-stub', 'halvm-mkdisk')
    fix = os.path.join(a.src, 'tests', 'data', 'ghc')
    work = tempfile.mkdtemp(prefix='profsvc-vbench.')
    os.chmod(work, 0o700)
    env = dict(os.environ, PROFSVC_DB=os.path.join(work, 'p.db'))
    res = {}
    try:
        hp = os.path.join(work, 'big.hp')
        largest = make_hp(os.path.join(fix, 'phases', 'phases-hd-i0.01.hp'), hp, 10000)
        prof_a, prof_b = os.path.join(work, 'a.prof'), os.path.join(work, 'b.prof')
        make_prof(os.path.join(fix, 'exprcalc', 'exprcalc-Pa.prof'), prof_a, 54)
        make_prof(os.path.join(fix, 'exprcalc', 'exprcalc-Pa.prof'), prof_b, 54, slower='genExpr')
        for name, prof in (('a', prof_a), ('b', prof_b)):
            for dev, f, flag in (('p', prof, '--prof'), ('h', hp, '--hp')):
                subprocess.run([mkdisk, flag, f, os.path.join(work, dev + '.disk')],
                               check=True, stdout=subprocess.DEVNULL)
            subprocess.run([profdb, 'import-disk', '--name', name, os.path.join(work, 'p.disk'),
                            os.path.join(work, 'h.disk')], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # a one-sample profile: what profdb heap needs before any data
        small = os.path.join(work, 'small.hp')
        with open(small, 'w') as f:
            f.write('JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
                    'BEGIN_SAMPLE 0\nEND_SAMPLE 0\nBEGIN_SAMPLE 1\na\t1\nEND_SAMPLE 1\n')
        subprocess.run([mkdisk, '--hp', small, os.path.join(work, 'h.disk')], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([profdb, 'import-disk', '--name', 'small', os.path.join(work, 'p.disk'),
                        os.path.join(work, 'h.disk')], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # the same two .prof files as runs without a heap profile (4 and 5):
        # diff then times the call stacks alone, as the target names it
        for prof in (prof_a, prof_b):
            subprocess.run([mkdisk, '--prof', prof, os.path.join(work, 'p.disk')], check=True,
                           stdout=subprocess.DEVNULL)
            subprocess.run([profdb, 'import-disk', os.path.join(work, 'p.disk')], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        hp_mb, prof_mb = os.path.getsize(hp) / 1e6, os.path.getsize(prof_a) / 1e6
        print('view bench: %.1f MB .hp (10000 samples, largest %d bytes), two %.1f MB .prof files'
              % (hp_mb, largest, prof_mb))

        rows = []
        base = measure([hp2ps, hp], runs, cwd=work)
        b = stats([t for t, _ in base])
        rows.append(('hp2ps big.hp (baseline)', b, stats([m for _, m in base]), None))
        heap = measure([profdb, 'heap', '1', '-o', os.path.join(work, 'h.svg')], runs, env)
        h = stats([t for t, _ in heap])
        rows.append(('profdb heap -o svg', h, stats([m for _, m in heap]), b and h['median'] / b['median']))
        rep = measure([profdb, 'report', '1', '-o', os.path.join(work, 'r.html')], runs, env)
        r = stats([t for t, _ in rep])
        rows.append(('profdb report', r, stats([m for _, m in rep]), b and r['median'] / b['median']))
        top = measure([profdb, 'top', '1'], runs, env)
        rows.append(('profdb top (7 MB .prof)', stats([t for t, _ in top]), stats([m for _, m in top]), None))
        diff = measure([profdb, 'diff', '1', '2'], runs, env)
        rows.append(('profdb diff (.prof and .hp, both)', stats([t for t, _ in diff]),
                     stats([m for _, m in diff]), None))
        diff = measure([profdb, 'diff', '4', '5'], runs, env)
        rows.append(('profdb diff (two 7 MB .prof)', stats([t for t, _ in diff]),
                     stats([m for _, m in diff]), None))
        print('\n  %-38s %22s %18s %8s' % ('', 'seconds med (min-max)', 'peak RSS MiB', 'ratio'))
        for name, t, m, ratio in rows:
            print('  %-38s %8.3f (%.3f-%.3f) %10.1f %8s' % (name, t['median'], t['min'], t['max'],
                                                           m['median'] / 1024,
                                                           '%.2f' % ratio if ratio else '-'))
            res[name] = {'seconds': t, 'rss_kib': m, 'ratio_to_hp2ps': ratio}

        # memory: the parse alone (bench/hp_mem), against the largest sample plus the bands
        mem = json.loads(subprocess.run([os.path.join(a.build, 'bench', 'hp_mem'), hp], check=True,
                                        capture_output=True, text=True).stdout)
        grew = (mem['rss_after_kib'] - mem['rss_before_kib']) * 1024
        bound = mem['point_bytes'] + 4 * mem['largest_sample_bytes']
        mem['bound_bytes'] = bound
        mem['ratio_to_bound'] = grew / bound
        res['memory'] = mem
        print('\n  parse memory: %.1f MiB for %d samples, %d bands; bound 4x largest sample (%d B) '
              '+ the bands\' %d points at 12 B (%.1f MiB) = %.1f MiB: ratio %.2f '
              '(the points stored encoded in %.1f MiB)'
              % (grew / 2**20, mem['samples'], mem['bands'], mem['largest_sample_bytes'],
                 mem['points'], mem['point_bytes'] / 2**20, bound / 2**20, grew / bound,
                 mem['stored_bytes'] / 2**20))

        def drawn_in_chromium(url, extra=()):
            """Seconds from opening url to its chart drawn, as the page
            says (data-drawn-ms); Broken when it does not say."""
            out = subprocess.run(['timeout', '120', chromium, '--headless=new', '--no-sandbox', '--disable-gpu']
                                 + list(extra) + ['--user-data-dir=' + os.path.join(work, 'chrome'),
                                                  '--virtual-time-budget=20000', '--dump-dom', url],
                                 capture_output=True, text=True)
            m = re.search(r'data-drawn-ms="(\d+)"', out.stdout)
            if not m:
                raise Broken('%s in headless Chromium: no chart drawn (no data-drawn-ms; exit status %d): %s'
                             % (url, out.returncode, out.stderr.strip()[-400:]))
            return int(m.group(1)) / 1000

        d = stats([drawn_in_chromium('file://' + os.path.join(work, 'r.html')) for _ in range(page_runs)])
        res['report opened to chart drawn (chromium)'] = {'seconds': d}
        print('  report opened to chart drawn in headless Chromium: %.3f s (%.3f-%.3f)'
              % (d['median'], d['min'], d['max']))
        # the same run's page from profdb serve (run 1: the 10,000-sample .hp)
        senv = {k: v for k, v in env.items() if not k.lower().endswith('_proxy')}
        serve = subprocess.Popen([profdb, 'serve', '--listen', '127.0.0.1:0'], env=senv,
                                 stderr=subprocess.PIPE, text=True)
        try:
            m = re.search(r'127\.0\.0\.1:(\d+)', serve.stderr.readline())
            if not m:
                raise Broken('profdb serve did not say where it listens')
            served = [drawn_in_chromium('http://127.0.0.1:%s/runs/1' % m.group(1), ['--no-proxy-server'])
                      for _ in range(page_runs)]
        finally:
            serve.terminate()
            serve.wait()
        d = stats(served)
        res['served run page opened to chart drawn (chromium)'] = {'seconds': d}
        print('  profdb serve\'s /runs/1, opened to chart drawn in headless Chromium: %.3f s (%.3f-%.3f)'
              % (d['median'], d['min'], d['max']))
        res['files'] = {'hp_mb': hp_mb, 'prof_mb': prof_mb}
        print('  (medians of %d runs, %d of each page, with min-max)' % (runs, page_runs))
        if a.json:
            with open(a.json, 'w') as f:
                json.dump(res, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    benchlib.main('view_bench', main)
