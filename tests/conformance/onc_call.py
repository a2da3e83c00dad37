#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""onc_call.py HOST PORT PROG VERS [PROC]: one ONC RPC call (RFC 5531) over
TCP with record marking, AUTH_NONE, no arguments, straight to PORT (no
rpcbind: through a qemu hostfwd port the guest's rpcbind is unreachable).
PROC 0 (default) is NULL; for MOUNT (100005) version 3 PROC 5 (EXPORT) the
export list is decoded and printed.  Exit 0 when the reply is MSG_ACCEPTED
with SUCCESS.  Python 3 standard library only."""
import os
import socket
import struct
import sys


def recv_record(s):
    data = b""
    while True:
        hdr = b""
        while len(hdr) < 4:
            chunk = s.recv(4 - len(hdr))
            if not chunk:
                raise EOFError("connection closed")
            hdr += chunk
        mark, = struct.unpack(">I", hdr)
        n = mark & 0x7FFFFFFF
        while n:
            chunk = s.recv(min(n, 65536))
            if not chunk:
                raise EOFError("connection closed")
            data += chunk
            n -= len(chunk)
        if mark & 0x80000000:
            return data


def main():
    if len(sys.argv) not in (5, 6):
        sys.stderr.write(__doc__ + "\n")
        return 2
    host, port, prog, vers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0), int(sys.argv[4])
    proc = int(sys.argv[5]) if len(sys.argv) == 6 else 0
    xid = os.getpid() & 0xFFFFFFFF
    call = struct.pack(">IIIIII", xid, 0, 2, prog, vers, proc) + struct.pack(">IIII", 0, 0, 0, 0)
    s = socket.create_connection((host, port), timeout=20)
    s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
    r = recv_record(s)
    s.close()
    rxid, mtype, rstat = struct.unpack_from(">III", r, 0)
    if rxid != xid or mtype != 1:
        print("bad reply: xid %#x type %d" % (rxid, mtype))
        return 1
    if rstat != 0:
        print("MSG_DENIED")
        return 1
    flavor, vlen = struct.unpack_from(">II", r, 12)
    off = 20 + (vlen + 3) // 4 * 4
    astat, = struct.unpack_from(">I", r, off)
    off += 4
    if astat != 0:
        print("accept_stat %d" % astat)
        return 1
    print("prog %d vers %d proc %d: SUCCESS (%d octets of results)" % (prog, vers, proc, len(r) - off))
    if prog == 100005 and proc == 5:
        while struct.unpack_from(">I", r, off)[0]:
            off += 4
            n, = struct.unpack_from(">I", r, off)
            path = r[off + 4:off + 4 + n].decode(errors="replace")
            off += 4 + (n + 3) // 4 * 4
            groups = []
            while struct.unpack_from(">I", r, off)[0]:
                off += 4
                n, = struct.unpack_from(">I", r, off)
                groups.append(r[off + 4:off + 4 + n].decode(errors="replace"))
                off += 4 + (n + 3) // 4 * 4
            off += 4
            print("export %s %s" % (path, " ".join(groups)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
