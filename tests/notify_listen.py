#!/usr/bin/env python3
# notify_listen.py SOCKET OUT - stands in for systemd's notification socket
# in test_service.sh: binds an AF_UNIX datagram socket at SOCKET and writes
# each sd_notify message it receives to OUT as one line (its assignments
# joined by spaces), flushed at once, until it is killed.
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a") as f:
    while True:
        msg = s.recv(65536).decode("utf-8", "replace")
        f.write(" ".join(msg.split("\n")) + "\n")
        f.flush()
