"""benchlib.py - what the Python benchmarks of `make bench` share:

- the host line each prints first: the CPU model (/proc/cpuinfo), the CPUs
  it may use and the kernel, so that a reader of two runs' figures can tell
  a change of host from a change of code;
- the peers a bench needs (need()): one that is missing breaks the bench,
  which never reports a baseline it did not measure;
- commands run as checks (run()): one that fails breaks the bench, and its
  stderr is shown;
- the exit status (main()): 0 when the bench measured everything it
  prints, 1 when it is broken (a missing peer, a failed command, a harness
  error, a crash).  A target met or missed is a figure, never an exit
  status, with or without --quick (docs/performance.md, "--quick").
"""
import os, platform, shutil, subprocess, sys, time, traceback


class Broken(Exception):
    """The bench could not measure what it reports: a harness error, a
    failed command or a missing peer (never a missed target)."""


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (x86's 'model name', other
    architectures' 'Model' or 'cpu model')."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                key, _, value = line.partition(':')
                if key.strip() in ('model name', 'Model', 'cpu model') and value.strip():
                    return ' '.join(value.split())
    except OSError:
        pass
    return 'unknown (no model name in /proc/cpuinfo)'


def host_line():
    return 'host CPU: %s; %d CPUs usable; Linux %s' % (cpu_model(), len(os.sched_getaffinity(0)),
                                                       platform.release())


def need(program, package):
    """The path of a peer program; Broken when it is not installed."""
    path = shutil.which(program)
    if not path:
        raise Broken('%s is not installed (Debian package %s; ./quickstart test installs it): '
                     'its figures cannot be measured' % (program, package))
    return path


def need_peers_module(src, module):
    """tests/peers' npm packages (PROFSVC_PEERS names another
    node_modules) holding module; Broken when it is not there."""
    nm = os.path.abspath(os.environ.get('PROFSVC_PEERS') or os.path.join(src, 'tests/peers/node_modules'))
    if not os.path.isdir(os.path.join(nm, module)):
        raise Broken('%s/%s is missing (npm ci --prefix tests/peers; ./quickstart test installs it)'
                     % (nm, module))
    return nm


def run(argv, **kw):
    """subprocess.run that must succeed (stdout and stderr captured as
    text unless told otherwise); Broken, with the end of its stderr, if
    it exits non-zero."""
    kw.setdefault('stdout', subprocess.PIPE)
    kw.setdefault('stderr', subprocess.PIPE)
    kw.setdefault('text', True)
    r = subprocess.run(argv, **kw)
    if r.returncode != 0:
        err = r.stderr if isinstance(r.stderr, str) else (r.stderr or b'').decode(errors='replace')
        raise Broken('%s exited with status %d: %s' % (' '.join(map(str, argv)), r.returncode,
                                                       (err or '').strip()[-800:]))
    return r


def check_exit(name, proc):
    """A Popen'd process that has ended: Broken unless it exited 0."""
    rc = proc.wait()
    if rc != 0:
        raise Broken('%s exited with status %d' % (name, rc))


def quick_note(name, quick):
    """Says, under --quick, what its figures are for."""
    if quick:
        print('%s: --quick: few rounds, small sizes; the figures show the bench runs, and no target is '
              'enforced (nor is one in a full run: a target is a figure)' % name, flush=True)


def main(name, fn):
    """Runs fn() (the bench; its return value is ignored), after the host
    line; exits 0, or 1 with the reason on stderr when it is broken."""
    t0 = time.monotonic()
    print('%s: %s' % (name, host_line()), flush=True)
    try:
        fn()
    except Broken as e:
        print('%s: BROKEN: %s' % (name, e), file=sys.stderr, flush=True)
        sys.exit(1)
    except subprocess.CalledProcessError as e:
        err = e.stderr.decode(errors='replace') if isinstance(e.stderr, bytes) else (e.stderr or '')
        print('%s: BROKEN: %s exited with status %d: %s' % (name, ' '.join(map(str, e.cmd)), e.returncode,
                                                           err.strip()[-800:]), file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception:
        traceback.print_exc()
        print('%s: BROKEN: the bench crashed (above)' % name, file=sys.stderr, flush=True)
        sys.exit(1)
    print('%s: measured in %.0f s' % (name, time.monotonic() - t0), flush=True)
    sys.exit(0)
