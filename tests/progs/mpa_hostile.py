#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mpa_hostile.py - a hostile TCP peer for an MPA listener (tests/sh/hostile.sh).

  mpa_hostile.py probe KIND PORT   send one malformed MPA Request and wait
                                   (at most 20 s) for the listener to close
                                   the connection; prints what came back and
                                   after how long.  Exit 0: closed, with no
                                   Reply that accepts; 1 otherwise.
      KIND: badkey   key "MPA ID Req Fxxxx"
            pd513    PD_Length 513 (RFC 5044 §7.1.4: over 512, close)
            rev3     revision 3
            half     10 octets of a Request, then silence (slowloris: the
                     handshake timeout, 10 s, must end it)
  mpa_hostile.py flood PORT N HOLD open N connections at once (non-blocking),
                                   every other one sends half a Request; hold
                                   them HOLD seconds, close them; prints how
                                   many the kernel completed.

All on 127.0.0.1.
"""
import select
import socket
import struct
import sys
import time

REQ_KEY = b"MPA ID Req Frame"


def request(key=REQ_KEY, flags=0x40, rev=1, pd=b""):
    return key + struct.pack(">BBH", flags, rev, len(pd)) + pd


def probe(kind, port):
    if kind == "badkey":
        msg = request(key=b"MPA ID Req Fxxxx")
    elif kind == "pd513":
        msg = request(pd=b"\x00" * 513)
    elif kind == "rev3":
        msg = request(rev=3)
    elif kind == "half":
        msg = request()[:10]
    else:
        print("mpa_hostile: unknown probe %s" % kind)
        return 2
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    t0 = time.time()
    s.sendall(msg)
    got = b""
    closed = False
    while time.time() - t0 < 20:
        r, _, _ = select.select([s], [], [], 0.5)
        if not r:
            continue
        try:
            d = s.recv(4096)
        except (ConnectionResetError, OSError):
            closed = True
            break
        if not d:
            closed = True
            break
        got += d
    dt = time.time() - t0
    s.close()
    accepted = len(got) >= 20 and got[:16] == b"MPA ID Rep Frame" and not (got[16] & 0x20)
    print("mpa_hostile: probe %s: %s after %.1f s, %d octets back%s" %
          (kind, "closed" if closed else "NOT closed", dt, len(got),
           " (an accepting Reply!)" if accepted else ""))
    return 0 if closed and not accepted else 1


def flood(port, n, hold):
    socks = []
    t0 = time.time()
    for i in range(n):
        try:
            s = socket.socket()
        except OSError as e:  # out of descriptors here: flood with what we have
            print("mpa_hostile: flood: stopped at %d sockets: %s" % (i, e), flush=True)
            break
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    # wait (briefly) for the kernel to complete what it can, then send half
    # a Request on every other connection that is up
    time.sleep(1)
    up = 0
    for i, s in enumerate(socks):
        try:
            s.getpeername()
        except OSError:
            continue
        up += 1
        if i % 2:
            try:
                s.send(request()[:10])
            except OSError:
                pass
    print("mpa_hostile: flood: %d connections opened, %d established, %.1f s" %
          (len(socks), up, time.time() - t0), flush=True)
    time.sleep(hold)
    for s in socks:
        s.close()
    print("mpa_hostile: flood: closed", flush=True)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "probe":
        return probe(argv[2], int(argv[3]))
    if len(argv) == 5 and argv[1] == "flood":
        return flood(int(argv[2]), int(argv[3]), float(argv[4]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
