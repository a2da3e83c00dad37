#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""close_first_proxy.py - a listener that refuses the way a port forwarder
does, then forwards (tests/sh/compat.sh).

  close_first_proxy.py TARGET_PORT N

Listens on 127.0.0.1 with a port the kernel picks and prints it on the
first line of standard output.  Its first N connections are accepted and
closed at once, before a byte is read: what a client sees through a
forwarder (qemu's user-mode network) when the real server refuses or is
not listening yet.  The next connection is relayed, both ways, to
127.0.0.1:TARGET_PORT until either side closes; then the proxy exits 0.
Prints "closed N, relayed 1" at the end.  Every wait is bounded (30 s):
exit 1 when nothing came.
"""
import select
import socket
import sys

TIMEOUT = 30.0


def relay(a, b):
    socks = [a, b]
    while True:
        r, _, _ = select.select(socks, [], [], TIMEOUT)
        if not r:
            return
        for s in r:
            data = s.recv(65536)
            if not data:
                return
            (b if s is a else a).sendall(data)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    target, n = int(argv[1]), int(argv[2])
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    ls.settimeout(TIMEOUT)
    print(ls.getsockname()[1], flush=True)
    closed = 0
    try:
        while closed < n:
            c, _ = ls.accept()
            c.close()
            closed += 1
        c, _ = ls.accept()
    except socket.timeout:
        print(f"closed {closed}, relayed 0: no connection within {TIMEOUT:.0f} s", flush=True)
        return 1
    ls.close()
    up = socket.create_connection(("127.0.0.1", target), timeout=TIMEOUT)
    relay(c, up)
    c.close()
    up.close()
    print(f"closed {closed}, relayed 1", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
