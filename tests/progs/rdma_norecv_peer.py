#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rdma_norecv_peer.py - an rping client that breaks iWARP's one rule
(tests/sh/compat.sh): a Send needs a posted receive, now.

  rdma_norecv_peer.py PORT [N] [GAP_MS] [end]

Connects to an rping server on 127.0.0.1:PORT (MPA revision 1, CRC, built
by tests/progs/fpdu_hostile.py's Peer), sends rping's first message (a
16-octet Send advertising a buffer) and right behind it N-1 more Sends
(default 8) in one write.  rping posts one receive at a time and reposts it
only after its completion thread has run, so the second or a later Send
finds no receive posted: the server's stack must end the connection with
a TERMINATE "no buffer" (RFC 5041: DDP layer, untagged buffer error, code
0x02).  Prints "terminate L/T/0xCC after N FPDUs" or what came instead;
exit 0 when the TERMINATE is the "no buffer" one, 1 otherwise.  Every
wait is bounded (HOSTILE_TIMEOUT, default 10 s).

GAP_MS > 0 sends the first Send alone and the others GAP_MS later: the
server has reposted its receive by then, so the second Send takes it and
arrives out of turn for rping's protocol (uiw-ping -s -P gives up on the
connection), and the third finds no receive: the TERMINATE is due while
the application tears the connection down, and must still leave first.
"end": after the TERMINATE, read on to the end of the stream; "then FIN"
passes, "then RST" or silence fails (the server must close with a FIN
after its TERMINATE, not reset).
"""
import socket
import time
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpdu_hostile as fh  # noqa: E402


def stream_end(p):
    """How the stream ends after the TERMINATE: FIN, RST, silence or more data."""
    if p.rxbuf:
        return "%d more octets" % len(p.rxbuf)
    p.s.settimeout(fh.TIMEOUT)
    try:
        d = p.s.recv(65536)
    except ConnectionResetError:
        return "RST"
    except socket.timeout:
        return "silence"
    except OSError as e:
        return "error %s" % e
    return "FIN" if not d else "%d more octets" % len(d)


def main(argv):
    if len(argv) not in (2, 3, 4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    port = int(argv[1])
    n = int(argv[2]) if len(argv) >= 3 else 8
    gap = int(argv[3]) if len(argv) >= 4 else 0
    end = len(argv) == 5 and argv[4] == "end"
    p = fh.Peer(port, "")
    info = struct.pack(">QII", 0x1000, 0x1234, 64)  # rping_rdma_info: buf, rkey, size
    fpdus = [p.frame(fh.untagged(fh.OP_SEND, 0, msn, 0, info)) for msn in range(1, n + 1)]
    if gap > 0:
        p.send_raw(fpdus[0])
        time.sleep(gap / 1000.0)
        fpdus = fpdus[1:]
    try:
        p.send_raw(b"".join(fpdus))
    except OSError as e:
        print("sending failed: %s" % e)
        return 1
    got = 0
    while True:
        u = p.recv_fpdu()
        if u is None:
            print("no TERMINATE: the connection %s after %d FPDUs" %
                  ("closed" if p.closed else "went silent", got))
            return 1
        got += 1
        t, op, f, hl = fh.decode(u)
        if not t and op == fh.OP_TERM:
            b = u[hl:]
            layer, etype, code = b[0] >> 4, b[0] & 0xF, b[1]
            how = "" if not end else ", then " + stream_end(p)
            print("terminate %d/%d/0x%02x after %d FPDUs%s" % (layer, etype, code, got, how))
            return 0 if (layer, etype, code) == (1, 2, 2) and how in ("", ", then FIN") else 1
        # the server's RDMA Read Request for the buffer advertised: ignored


if __name__ == "__main__":
    sys.exit(main(sys.argv))
