#!/usr/bin/env python3
"""fleet_bench.py - make bench's figures for the fleet catalogue, against a
private PostgreSQL server started for the run (initdb and pg_ctl in a
scratch directory, fsync off for both sides alike):

- sync throughput: `profdb sync` of a store holding large runs, in MB/s of
  chunk bytes, against `psql \\copy` loading the same bytes (the binary
  COPY stream of the chunks the sync wrote) into a table of the same shape
  and keys, in the same run: the ratio says what sync adds to PostgreSQL's
  own bulk path (reading the store, the rows around the chunks).
- `profdb --db postgresql://... query runs` over 100,000 runs from 10 hosts
  (the rows a sync writes for a run, made in bulk with SQL): table and
  --json, target < 100 ms.
- guests beside an unreachable catalogue: capture_bench's HaLVM round trip
  (p50, p99) with `--sync` to a server that does not exist against without
  it, alternating; target: no added latency (ratio <= 1.05 at p50).

Every figure is the median of its rounds with their range.  The rows this
bench writes itself (the baseline's table, the 100,000 runs) take their
columns from the catalogue the sync made (fleet/fleet_schema.c's schema),
never from a list kept here: a column the schema gains is carried along.

usage: fleet_bench.py --build DIR --src DIR [--json FILE] [--quick]
"""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, tempfile, time

import benchlib
from benchlib import Broken


def med(v):
    return statistics.median(v) if v else None


def spread(v):
    return "%.1f (%.1f-%.1f)" % (med(v), min(v), max(v)) if v else "n/a"


class Server:
    """A private PostgreSQL on a Unix socket, as test_fleet.sh starts it."""

    def __init__(self, tmp):
        bins = sorted(glob.glob('/usr/lib/postgresql/*/bin'), key=lambda p: [int(x) for x in p.split('/')[4].split('.')])
        if not bins:
            raise Broken('the PostgreSQL server is not installed (Debian package postgresql; '
                         './quickstart test installs it)')
        benchlib.need('psql', 'postgresql')
        self.bin, self.dir = bins[-1], os.path.join(tmp, 'pg')
        self.sock = os.path.join(self.dir, 'sock')
        os.makedirs(os.path.join(self.dir, 'data'))
        os.makedirs(self.sock)
        self.as_user = []
        if os.getuid() == 0:
            os.chmod(tmp, 0o711)
            subprocess.run(['chown', '-R', 'nobody', self.dir], check=True)
            self.as_user = ['runuser', '-u', 'nobody', '--']
        subprocess.run(self.as_user + [self.bin + '/initdb', '-D', self.dir + '/data', '-U', 'profsvc',
                       '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'], check=True, stdout=subprocess.DEVNULL)
        self.ctl('-o', "-k %s -c listen_addresses='' -c fsync=off "
                 "-c max_wal_size=4GB -c shared_buffers=256MB" % self.sock, 'start')

    def ctl(self, *args):
        subprocess.run(self.as_user + [self.bin + '/pg_ctl', '-D', self.dir + '/data', '-l', self.dir + '/log',
                       '-w'] + list(args), check=True, stdout=subprocess.DEVNULL)

    def url(self, db):
        return 'postgresql://profsvc@/%s?host=%s' % (db, self.sock)

    def psql(self, db, *cmds, capture=False):
        args = ['psql', '-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-h', self.sock, '-U', 'profsvc', '-d', db]
        for c in cmds:
            args += ['-c', c]
        r = benchlib.run(args, env=dict(os.environ, PGOPTIONS='-c client_min_messages=warning'))
        return r.stdout.strip() if capture else None

    def columns(self, db, table):
        """The columns a row of table is written with, in the table's order:
        all but generated and identity ones (PostgreSQL makes those)."""
        cols = self.psql(db, "SELECT string_agg(column_name, ' ' ORDER BY ordinal_position) "
                         "FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '%s' "
                         "AND is_generated = 'NEVER' AND is_identity = 'NO'" % table, capture=True).split()
        if not cols:
            raise Broken('the catalogue has no table %s' % table)
        return cols

    def clone(self, db, table, template, source, set_cols):
        """INSERT INTO table rows made from the one row of template (a copy
        of a row the sync wrote), for each row of source: the columns in
        set_cols take those expressions, every other column the template's
        value.  A column set_cols names that the table lacks breaks the
        bench (the schema changed under it)."""
        cols = self.columns(db, table)
        gone = sorted(set(set_cols) - set(cols))
        if gone:
            raise Broken('the catalogue\'s %s has no column %s: fleet_bench sets it' % (table, ', '.join(gone)))
        return 'INSERT INTO %s (%s) SELECT %s FROM %s t, %s' % (
            table, ', '.join(cols), ', '.join(set_cols.get(c, 't.' + c) for c in cols), template, source)

    def recreate(self, db):
        self.psql('postgres', 'DROP DATABASE IF EXISTS %s' % db, 'CREATE DATABASE %s' % db)

    def stop(self):
        try:
            self.ctl('-m', 'immediate', 'stop')
        except subprocess.CalledProcessError:
            pass


def make_store(b, tmp, runs, mb):
    """A store of `runs` runs, each a .prof of about `mb` MB of random text."""
    db = os.path.join(tmp, 'big.db')
    prof = os.path.join(tmp, 'big.prof')
    with open(prof, 'w') as f:
        f.write(subprocess.run(['base64', '-w', '100'], input=os.urandom(mb * 750000),
                               stdout=subprocess.PIPE, check=True).stdout.decode())
    disk = os.path.join(tmp, 'big.disk')
    subprocess.run([b + '/frontend-stub/halvm-mkdisk', '--prof', prof, disk], check=True, stdout=subprocess.DEVNULL)
    for i in range(runs):
        subprocess.run([b + '/profdb', '--db', db, 'import-disk', '--force', '--name', 'big-%d' % i, disk],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.unlink(disk)
    return db


def bench_sync(srv, b, tmp, rounds, runs, mb):
    store = make_store(b, tmp, runs, mb)
    stream = os.path.join(tmp, 'chunks.copy')
    sync_mbs, copy_mbs, nbytes = [], [], 0
    for k in range(rounds):
        srv.recreate('fleet')
        t = time.monotonic()
        out = subprocess.run([b + '/profdb', '--db', store, 'sync', '--to', srv.url('fleet'), '--json'],
                             check=True, stdout=subprocess.PIPE).stdout
        dt = time.monotonic() - t
        nbytes = json.loads(out)['sync']['bytes']
        sync_mbs.append(nbytes / dt / 1e6)
        if k == 0:  # the same rows, as PostgreSQL's own binary COPY stream:
            # the whole table, every column the schema has, so that the
            # stream and copy_t (LIKE chunks) have one shape by construction
            srv.psql('fleet', "\\copy chunks TO '%s' (FORMAT binary)" % stream)
        srv.psql('fleet', 'DROP TABLE IF EXISTS copy_t', 'CREATE TABLE copy_t (LIKE chunks INCLUDING ALL)')
        t = time.monotonic()
        srv.psql('fleet', "\\copy copy_t FROM '%s' (FORMAT binary)" % stream)
        dt = time.monotonic() - t
        copy_mbs.append(nbytes / dt / 1e6)
    ratios = [s / c for s, c in zip(sync_mbs, copy_mbs)]
    return {'bytes': nbytes, 'runs': runs, 'sync_mb_s': sync_mbs, 'psql_copy_mb_s': copy_mbs,
            'ratio': ratios}


def bench_query(srv, b, src, tmp, rounds, hosts, per_host):
    srv.recreate('fleet_q')
    # the schema, from a sync of a store of one run
    one = os.path.join(tmp, 'one.db')
    disk = os.path.join(tmp, 'one.disk')
    subprocess.run([b + '/frontend-stub/halvm-mkdisk', '--prof', src + '/tests/data/ghc/leak/leak-p-hc.prof', disk],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([b + '/profdb', '--db', one, 'import-disk', disk], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([b + '/profdb', '--db', one, 'sync', '-q', '--to', srv.url('fleet_q')], check=True)
    now_us = int(time.time() * 1e6)
    # the host and the run that sync wrote are the templates: every column
    # this does not set keeps what the product wrote there
    srv.psql('fleet_q', 'CREATE TABLE host_t AS SELECT * FROM hosts LIMIT 1',
             'CREATE TABLE run_t AS SELECT * FROM runs LIMIT 1')
    make_hosts = srv.clone('fleet_q', 'hosts', 'host_t', 'generate_series(1, %d) h' % hosts, {
        'host_id': "md5('host' || h)", 'hostname': "convert_to('xen' || h, 'UTF8')",
        'first_sync_us': str(now_us), 'last_sync_us': str(now_us)})
    make_runs = srv.clone('fleet_q', 'runs', 'run_t', 'generate_series(1, %d) h, generate_series(1, %d) r'
                          % (hosts, per_host), {
        'host_id': "md5('host' || h)", 'host_no': "(SELECT host_no FROM hosts WHERE host_id = md5('host' || h))",
        'run_id': 'r', 'domid': '100 + r % 500', 'name': "convert_to('guest-' || (r % 300), 'UTF8')",
        'uuid': "convert_to(md5(h || '-' || r), 'UTF8')",
        'started_us': '%d - (%d - r)::bigint * 60000000' % (now_us, per_host),
        'ended_us': '%d - (%d - r)::bigint * 60000000 + 5000000' % (now_us, per_host),
        'state': "CASE WHEN r % 7 = 0 THEN 'crashed' ELSE 'complete' END", 'host': "convert_to('xen' || h, 'UTF8')",
        'prof_bytes': '40960 + r', 'hp_bytes': '81920 + r', 'stamp': "'stamp'", 'synced_us': str(now_us)})
    srv.psql('fleet_q', 'DELETE FROM hosts', make_hosts, make_runs, 'DROP TABLE host_t, run_t', 'ANALYZE runs')
    n = int(srv.psql('fleet_q', 'SELECT count(*) FROM runs', capture=True))
    if n != hosts * per_host:
        raise Broken('made %d runs, meant %d' % (n, hosts * per_host))
    out = {'runs': n, 'hosts': hosts}

    def timed(extra):
        times = []
        for _ in range(rounds):
            t = time.monotonic()
            subprocess.run([b + '/profdb', '--db', srv.url('fleet_q'), 'query', 'runs'] + extra, check=True,
                           stdout=subprocess.DEVNULL)
            times.append((time.monotonic() - t) * 1000)
        return times

    # just after the rows came in, before autovacuum marked their pages
    # all-visible (the listing then cannot read its index alone)
    out['table_unvacuumed_ms'] = timed([])
    srv.psql('fleet_q', 'VACUUM runs')  # what autovacuum does soon after a sync
    out['all_visible_pages'] = srv.psql('fleet_q', "SELECT relallvisible || '/' || relpages FROM pg_class "
                                        "WHERE relname = 'runs'", capture=True)
    for label, extra in (('table', []), ('json', ['--json']), ('one_host', ['--host', 'xen3'])):
        out[label + '_ms'] = timed(extra)
    # the floor: PostgreSQL's own client copying the listing's rows to
    # nowhere (the same query, the same binary COPY)
    times = []
    for _ in range(rounds):
        t = time.monotonic()
        srv.psql('fleet_q', "\\copy (SELECT listing FROM runs ORDER BY started_us, host_no, run_id) "
                 "TO '/dev/null' (FORMAT binary)")
        times.append((time.monotonic() - t) * 1000)
    out['psql_copy_ms'] = times
    return out


def bench_guests(b, src, rounds):
    """capture_bench's HaLVM round trip, store sink, with and without --sync
    to a catalogue whose socket directory does not exist, alternating."""
    res = {'without': {'p50': [], 'p99': []}, 'with_unreachable_sync': {'p50': [], 'p99': []}}
    tmp = tempfile.mkdtemp(prefix='profsvc-fleet-bench-')
    try:
        for k in range(rounds):
            for mode in ('without', 'with_unreachable_sync'):
                env = dict(os.environ, TOP_SRCDIR=src, TOP_BUILDDIR=b)
                rd = tempfile.mkdtemp(prefix='profsvc-bench-run.', dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
                env['PROFSVC_TEST_RUN_DIR'] = rd
                if mode != 'without':
                    env['PROFSVC_BACKEND_EXTRA'] = '--sync postgresql://nobody@/fleet?host=%s/nowhere' % tmp
                js = os.path.join(tmp, 'cap.json')
                subprocess.run([b + '/bench/capture_bench', '--only', 'store', '--workload', 'halvm',
                                '--no-callgrind', '--json', js], env=env, check=True, stdout=subprocess.DEVNULL)
                shutil.rmtree(rd, ignore_errors=True)
                h = json.load(open(js))['sinks']['store']['halvm']
                res[mode]['p50'].append(h['p50_us'])
                res[mode]['p99'].append(h['p99_us'])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res['p50_ratio'] = [w / o for w, o in zip(res['with_unreachable_sync']['p50'], res['without']['p50'])]
    res['p99_ratio'] = [w / o for w, o in zip(res['with_unreachable_sync']['p99'], res['without']['p99'])]
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--json')
    ap.add_argument('--quick', action='store_true')
    a = ap.parse_args()
    b, src = os.path.abspath(a.build), os.path.abspath(a.src)
    benchlib.quick_note('fleet_bench', a.quick)
    tmp = tempfile.mkdtemp(prefix='profsvc-fleet-bench.')
    srv = None
    try:
        srv = Server(tmp)
        print('fleet_bench: sync throughput ...', file=sys.stderr)
        sync = bench_sync(srv, b, tmp, 3, 2 if a.quick else 4, 4 if a.quick else 24)
        print('fleet_bench: query runs over the fleet ...', file=sys.stderr)
        query = bench_query(srv, b, src, tmp, 5 if a.quick else 11, 10, 1000 if a.quick else 10000)
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print('fleet_bench: guests beside an unreachable catalogue ...', file=sys.stderr)
    # (15 pairs: one pair's ratio moves by 10% from noise alone)
    guests = bench_guests(b, src, 3 if a.quick else 15)

    print('\nfleet benchmark: a private PostgreSQL %s; medians (min-max)\n' % os.path.basename(os.path.dirname(srv.bin)))
    print('  sync of %d runs, %.1f MB of chunks:' % (sync['runs'], sync['bytes'] / 1e6))
    print('    profdb sync MB/s               %s' % spread(sync['sync_mb_s']))
    print('    psql \\copy of the same MB/s    %s' % spread(sync['psql_copy_mb_s']))
    r = sync['ratio']
    print('    sync / psql \\copy              %.2f (%.2f-%.2f)  (for reference)' % (med(r), min(r), max(r)))
    print('  query runs over %d runs from %d hosts (pages all-visible: %s):'
          % (query['runs'], query['hosts'], query['all_visible_pages']))
    names = {'table': 'table', 'json': '--json', 'one_host': '--host (one host)',
             'table_unvacuumed': 'table, before autovacuum', 'psql_copy': 'psql \\copy of its rows'}
    for label in ('table', 'json', 'one_host', 'table_unvacuumed', 'psql_copy'):
        v = query[label + '_ms']
        target = '  (< 100 ms)  %s' % ('met' if med(v) < 100 else 'MISSED') if label == 'table' else \
            '  (for reference)'
        print('    %-30s %s ms%s' % (names[label], spread(v), target))
    print('  HaLVM round trip beside an unreachable catalogue (--sync), against without:')
    for p in ('p50', 'p99'):
        print('    %s us: without %s, with %s' % (p, spread(guests['without'][p]),
                                                 spread(guests['with_unreachable_sync'][p])))
    r = guests['p50_ratio']
    print('    p50 with / without              %.2f (%.2f-%.2f)  (<= 1.05)  %s' %
          (med(r), min(r), max(r), 'met' if med(r) <= 1.05 else 'MISSED'))
    r = guests['p99_ratio']
    print('    p99 with / without              %.2f (%.2f-%.2f)  (for reference)' % (med(r), min(r), max(r)))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'sync': sync, 'query': query, 'guests': guests}, f)


if __name__ == '__main__':
    benchlib.main('fleet_bench', main)
