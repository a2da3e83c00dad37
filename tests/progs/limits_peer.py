#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""limits_peer.py - raw MPA peers for tests/sh/limits.sh.

  limits_peer.py flood PORT N SECS PID BOUND
        open N connections (non-blocking) to 127.0.0.1:PORT and send a
        complete, valid MPA Request (revision 1) on each one the kernel
        completes, for SECS seconds; meanwhile count the descriptors of
        process PID.  Exit 0 when it never held more than its count before
        the flood + BOUND, 1 otherwise.
  limits_peer.py sink HOLD
        listen on 127.0.0.1 (prints "port N"), take one connection, answer
        its MPA Request with an accepting Reply, then never read (a zero
        window once the small receive buffer fills); exit after HOLD s.
  limits_peer.py ird0 HOLD
        the same, but the Reply announces IRD 0 and ORD 0 (RFC 6581), and
        whatever comes afterwards is read and dropped.
"""
import os
import select
import socket
import struct
import sys
import time

REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
F_CRC = 0x40
F_ENH = 0x10


def nfds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def flood(port, n, secs, pid, bound):
    req = REQ_KEY + struct.pack(">BBH", F_CRC, 1, 0)
    base = nfds(pid)
    socks = []
    sent = set()
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    t0 = time.time()
    most = base
    while time.time() - t0 < secs:
        for i, s in enumerate(socks):
            if i in sent:
                continue
            try:
                s.getpeername()
            except OSError:
                continue
            try:
                s.send(req)
                sent.add(i)
            except OSError:
                pass
        f = nfds(pid)
        if f > most:
            most = f
        time.sleep(0.05)
    for s in socks:
        s.close()
    print("limits_peer: flood: %d connections, %d Requests sent; victim fds: %d before, "
          "at most %d (bound %d)" % (n, len(sent), base, most, base + bound), flush=True)
    if base < 0 or len(sent) <= bound:
        print("limits_peer: flood: inconclusive (victim gone, or too few Requests sent)",
              flush=True)
        return 2
    return 0 if most <= base + bound else 1


def recv_exact(s, n, deadline):
    b = b""
    while len(b) < n:
        left = deadline - time.time()
        if left <= 0:
            raise TimeoutError("short read")
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        d = s.recv(n - len(b))
        if not d:
            raise ConnectionError("closed")
        b += d
    return b


def responder(kind, hold):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    print("port %d" % ls.getsockname()[1], flush=True)
    ls.settimeout(30)
    s, _ = ls.accept()
    ls.close()
    dl = time.time() + 10
    hdr = recv_exact(s, 20, dl)
    if hdr[:16] != REQ_KEY:
        print("limits_peer: not an MPA Request", flush=True)
        return 1
    flags, rev, pdlen = struct.unpack(">BBH", hdr[16:20])
    pd = recv_exact(s, pdlen, dl)
    enh = rev == 2 and (flags & F_ENH)
    rflags = flags & F_CRC
    rpd = b""
    if enh:
        rflags |= F_ENH
        ird, ord_ = (16, 0) if kind == "sink" else (0, 0)
        rpd = struct.pack(">HH", ird, ord_)
    elif kind == "ird0":
        print("limits_peer: the Request is not RFC 6581 enhanced", flush=True)
        return 1
    s.sendall(REP_KEY + struct.pack(">BBH", rflags, rev, len(rpd)) + rpd)
    print("limits_peer: %s: Reply sent (Request rev %d, %d octets of private data)" %
          (kind, rev, len(pd)), flush=True)
    t0 = time.time()
    while time.time() - t0 < hold:
        if kind == "sink":
            time.sleep(0.2)
            continue
        r, _, _ = select.select([s], [], [], 0.2)
        if r:
            try:
                if not s.recv(65536):
                    break
            except OSError:
                break
    s.close()
    return 0


def main(argv):
    if len(argv) == 7 and argv[1] == "flood":
        return flood(int(argv[2]), int(argv[3]), float(argv[4]), int(argv[5]), int(argv[6]))
    if len(argv) == 3 and argv[1] in ("sink", "ird0"):
        return responder(argv[1], float(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
