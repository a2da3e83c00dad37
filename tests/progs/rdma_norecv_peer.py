#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rdma_norecv_peer.py - an rping client that breaks iWARP's one rule
(tests/sh/compat.sh): a Send needs a posted receive, now.

  rdma_norecv_peer.py PORT [N]

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
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpdu_hostile as fh  # noqa: E402


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    port = int(argv[1])
    n = int(argv[2]) if len(argv) == 3 else 8
    p = fh.Peer(port, "")
    info = struct.pack(">QII", 0x1000, 0x1234, 64)  # rping_rdma_info: buf, rkey, size
    out = b"".join(p.frame(fh.untagged(fh.OP_SEND, 0, msn, 0, info)) for msn in range(1, n + 1))
    p.send_raw(out)
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
            print("terminate %d/%d/0x%02x after %d FPDUs" % (layer, etype, code, got))
            return 0 if (layer, etype, code) == (1, 2, 2) else 1
        # the server's RDMA Read Request for the buffer advertised: ignored


if __name__ == "__main__":
    sys.exit(main(sys.argv))
