#!/usr/bin/env python3
"""pty_run.py - runs a command with a terminal of its own (a pseudo-terminal
of COLS x ROWS), as a user's shell would, and keeps every byte it wrote
there: how the tests see what a terminal view (profdb watch) draws.

usage: pty_run.py OUT COLS ROWS TIMEOUT -- CMD [ARG...]

Writes the command's terminal output to OUT and exits with the command's
exit status (124 if it was still running after TIMEOUT seconds: it is then
sent SIGTERM, as timeout(1) does).
"""
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time


def main():
    if len(sys.argv) < 7 or sys.argv[5] != '--':
        sys.exit(__doc__)
    out, cols, rows, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    proc = subprocess.Popen(sys.argv[6:], stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    end = time.monotonic() + limit
    timed_out = False
    with open(out, 'wb') as f:
        while True:
            left = end - time.monotonic()
            if left <= 0 and not timed_out:
                timed_out = True
                proc.send_signal(signal.SIGTERM)
                end = time.monotonic() + 5
                continue
            r, _, _ = select.select([master], [], [], max(left, 0.05))
            if not r:
                if timed_out and proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal closed it
                break
            if not data:
                break
            f.write(data)
    rc = proc.wait()
    sys.exit(124 if timed_out else rc)


if __name__ == '__main__':
    main()
