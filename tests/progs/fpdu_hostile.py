#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fpdu_hostile.py - a scripted hostile iWARP peer over real TCP sockets.

  fpdu_hostile.py VICTIM [--only CASE[,CASE...]] [--list]

Starts VICTIM (tests/progs/uiw_victim.c, a uiwarp server on two polled
contexts with guarded memory per connection), completes the MPA handshake
(revision 1, CRC) once per case, and sends one malformed or abusive input
per connection: every error class of the RFC 5040/5041 TERMINATE table,
truncated and oversize FPDUs, a bad CRC, a wrong marker pointer, Read
Requests beyond IRD, a Send with no receive posted, Writes to
deregistered/invalidated/foreign-PD/read-only STags and one octet out of
bounds, TO wrap, a half FPDU then silence, a TERMINATE from the peer.  The
FPDUs are built here octet by octet (CRC32C and markers in Python), not by
uiwarp's own encoders.

Each case checks
  * on the wire: the TERMINATE the victim sends (layer/etype/code and the
    copy of the offending DDP/RDMAP header, RFC 5040 section 4.8), or, for
    the positive controls, the data it sends (Read Responses);
  * the victim's own report of the connection (uiw_victim prints one line
    when a connection has ended and every posted work request completed):
    the TERMINATE it sent or received, every posted receive completed (with
    an error unless the case delivered it), the QP in error, completions
    within 5 s, and every octet the peer was not granted unchanged (guards
    between the regions, the read-only, foreign, deregistered and
    invalidated regions, and the part of W not written legitimately);
  * a well-behaved connection held open during all cases stays unaffected
    (nothing arrives on it, and afterwards a Write and a Send on it work and
    verify), the victim's descriptors return to their count before the
    cases and its memory stays bounded.

Exit 0 when every check passes.  Every wait is bounded; the victim is
killed and reaped on exit.
"""
import os
import queue
import select
import socket
import struct
import subprocess
import sys
import threading
import time

# ---- CRC32C (Castagnoli), reflected, table-driven --------------------------
_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# ---- wire constants ----------------------------------------------------------
REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
OP_WRITE, OP_RREQ, OP_RRESP, OP_SEND, OP_SEND_INV, OP_SEND_SE, OP_SEND_SE_INV, OP_TERM = range(8)
# RFC 7306 section 4.1, Figure 2
OP_IMM, OP_IMM_SE, OP_AREQ, OP_ARESP = range(8, 12)
TIMEOUT = float(os.environ.get("HOSTILE_TIMEOUT", "10"))


def gp(off, n):
    """What a legitimate Write of W[off, off+n) carries (uiw_victim grant_pat)."""
    return bytes(((off + j) * 131 + 7) & 0xFF for j in range(n))


def sp(n):
    """Payload of a legitimate Send."""
    return bytes((j * 13 + 1) & 0xFF for j in range(n))


def tagged(op, stag, to, payload=b"", last=True, dv=1, rv=1):
    ctrl = 0x80 | (0x40 if last else 0) | (dv & 3)
    return struct.pack(">BBIQ", ctrl, ((rv & 3) << 6) | (op & 0xF), stag, to) + payload


def untagged(op, qn, msn, mo=0, payload=b"", last=True, inv=0, dv=1, rv=1):
    ctrl = (0x40 if last else 0) | (dv & 3)
    return struct.pack(">BBIIII", ctrl, ((rv & 3) << 6) | (op & 0xF), inv, qn, msn, mo) + payload


def read_req(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged(OP_RREQ, 1, msn, 0, struct.pack(">IQIIQ", sink_stag, sink_to, size,
                                                      src_stag, src_to))


def atomic_req(msn, aop, stag, to, data=1, data_mask=0, cmp=0, cmp_mask=0xFFFFFFFFFFFFFFFF,
               qn=1, req_id=0x11223344):
    """RFC 7306 section 5.2.1 Atomic Request: 52 octets after the DDP header."""
    return untagged(OP_AREQ, qn, msn, 0, struct.pack(">IIIQQQQQ", aop, req_id, stag, to, data,
                                                       data_mask, cmp, cmp_mask))


class Peer:
    """One MPA connection to the victim, full operation after connect()."""

    def __init__(self, port, case_pd, p2p=False):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pd = case_pd.encode()
        if p2p:
            # RFC 6581: revision 2, enhanced (S), IRD/ORD 4 with the
            # peer-to-peer bit (A) and only the zero-length Write RTR (C)
            pd = struct.pack(">HH", 0x8000 | 4, 0x8000 | 4) + pd
            self.s.sendall(REQ_KEY + struct.pack(">BBH", 0x50, 2, len(pd)) + pd)
        else:
            self.s.sendall(REQ_KEY + struct.pack(">BBH", 0x40, 1, len(pd)) + pd)
        rep = self.recv_exact(20)
        if rep[:16] != REP_KEY:
            raise RuntimeError("no MPA Reply: %r" % rep)
        flags, rev, pdlen = struct.unpack(">BBH", rep[16:20])
        self.reply_pd = self.recv_exact(pdlen)
        if flags & 0x20:
            raise RuntimeError("rejected")
        self.markers = bool(flags & 0x80)  # the victim wants markers from us
        self.crc = True  # we asked (C), so CRCs are used both ways
        self.txoff = 0  # octets sent in full operation (marker positions)
        self.rxbuf = bytearray()
        self.nbig = 0
        self.closed = False

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            d = self.s.recv(n - len(b))
            if not d:
                raise RuntimeError("connection closed during the handshake")
            b += d
        return b

    # -- transmit ------------------------------------------------------------
    def frame(self, ulpdu, bad_crc=False, length=None):
        """The octets of one FPDU carrying @ulpdu (markers and CRC added)."""
        ln = len(ulpdu) if length is None else length
        body = struct.pack(">H", ln) + ulpdu
        body += b"\0" * ((4 - len(body) % 4) % 4)
        out = b""
        start = self.txoff
        pos = self.txoff
        for i in range(len(body)):
            if self.markers and pos % 512 == 0:
                out += struct.pack(">HH", 0, (pos - start) & 0xFFFF)
                pos += 4
            out += body[i:i + 1]
            pos += 1
        crc = crc32c(out) if self.crc else 0
        if bad_crc:
            crc ^= 0x00010000
        c = struct.pack("<I", crc)
        for i in range(4):
            if self.markers and pos % 512 == 0:
                out += struct.pack(">HH", 0, (pos - start) & 0xFFFF)
                pos += 4
            out += c[i:i + 1]
            pos += 1
        self.txoff = pos
        return out

    def send_raw(self, data):
        self.s.sendall(data)

    def send(self, ulpdu, **kw):
        self.s.sendall(self.frame(ulpdu, **kw))

    # -- receive -------------------------------------------------------------
    def fill(self, n, deadline):
        while len(self.rxbuf) < n:
            left = deadline - time.time()
            if left <= 0:
                return False
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return False
            try:
                d = self.s.recv(65536)
            except OSError:
                d = b""
            if not d:
                self.closed = True
                return False
            self.rxbuf += d
        return True

    def recv_fpdu(self, timeout=TIMEOUT):
        """The next ULPDU from the victim (CRC checked), or None on EOF/timeout."""
        dl = time.time() + timeout
        if not self.fill(2, dl):
            return None
        ln = struct.unpack(">H", self.rxbuf[:2])[0]
        tot = 2 + ln
        tot += (4 - tot % 4) % 4
        if not self.fill(tot + 4, dl):
            return None
        got = struct.unpack("<I", self.rxbuf[tot:tot + 4])[0]
        # pure-Python CRC32C runs at ~1 MB/s: large FPDUs (the 3000 Read
        # Responses of read_beyond_ird) are checked one in 50
        self.nbig += ln >= 1024
        want = crc32c(self.rxbuf[:tot]) if ln < 1024 or self.nbig % 50 == 1 else got
        ulpdu = bytes(self.rxbuf[2:2 + ln])
        del self.rxbuf[:tot + 4]
        if got != want:
            raise RuntimeError("victim sent an FPDU with a bad CRC (%08x, want %08x)" % (got, want))
        return ulpdu

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def decode(u):
    """(tagged, opcode, fields dict, header length) of a DDP/RDMAP ULPDU."""
    ctrl, rctl = u[0], u[1]
    op = rctl & 0xF
    if ctrl & 0x80:
        stag, to = struct.unpack(">IQ", u[2:14])
        return True, op, {"stag": stag, "to": to, "last": bool(ctrl & 0x40)}, 14
    inv, qn, msn, mo = struct.unpack(">IIII", u[2:18])
    return False, op, {"inv": inv, "qn": qn, "msn": msn, "mo": mo, "last": bool(ctrl & 0x40)}, 18


class Ctx:
    """What the victim announced in its ready message."""

    def __init__(self, text):
        self.reg = {}
        self.nrecv = 0
        for w in text.split():
            k, v = w.split("=", 1)
            if len(k) == 1:
                st, ad = v.split(":")
                self.reg[k] = (int(st, 16), int(ad, 16))
            elif k == "rcrc":
                self.rcrc = int(v, 16)
            elif k == "nrecv":
                self.nrecv = int(v)

    def stag(self, r):
        return self.reg[r][0]

    def addr(self, r):
        return self.reg[r][1]


def ready(p):
    """The regions, from the MPA Reply; then, as MPA revision 1 wants the
    initiator to send first, a zero-length RDMA Write to W, and the ready
    Send (the victim has invalidated I by then)."""
    c0 = Ctx(p.reply_pd.decode())
    p.send(tagged(OP_WRITE, c0.stag("W"), c0.addr("W")))
    u = p.recv_fpdu()
    if u is None:
        raise RuntimeError("no ready message from the victim")
    t, op, f, hl = decode(u)
    if t or op != OP_SEND or f["qn"] != 0 or f["msn"] != 1:
        raise RuntimeError("first FPDU is not the ready Send: %r" % u[:18])
    return Ctx(u[hl:].decode())


# ---- cases --------------------------------------------------------------------
# Each: name, private-data extras, markers port?, action(peer, ctx) -> the
# offending ULPDU (for the header copy check) or None, expected TERMINATE
# (layer, etype, code) or None, expected successful receives and their
# payloads, whether the case gets a Read Response first.
CASES = []
STATS = {"hdr_copies": 0, "terms": 0, "closed": 0}


def case(name, term, extra="", markers=False, ok=(), rresp=0, p2p=False, aresp=0,
         aresp_any=False):
    def deco(fn):
        CASES.append(dict(name=name, term=term, extra=extra, markers=markers, fn=fn,
                          ok=list(ok), rresp=rresp, p2p=p2p, aresp=aresp,
                          aresp_any=aresp_any))
        return fn
    return deco


def hit(p, u):
    """Send the offending ULPDU @u; returned for the header-copy check."""
    p.send(u)
    return u


@case("write_ok", None, "grant=0:64")
def _(p, c):
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)))


@case("write_last_octet_ok", None, "grant=4032:64")
def _(p, c):
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W") + 4032, gp(4032, 64)))


@case("write_multi_segment_ok", None, "grant=100:3000")
def _(p, c):
    for off in range(100, 3100, 1000):
        p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W") + off, gp(off, 1000),
                      last=off == 2100))


@case("write_unknown_stag", (1, 1, 0))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W") ^ 0x80000000, c.addr("W"), b"x" * 64))


@case("write_wrong_key", (1, 1, 0))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W") ^ 0x5A, c.addr("W"), b"x" * 64))


@case("write_deregistered", (1, 1, 0))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("D"), c.addr("D"), b"x" * 64))


@case("write_invalidated", (1, 1, 0))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("I"), c.addr("I"), b"x" * 64))


@case("write_foreign_pd", (1, 1, 2))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("F"), c.addr("F"), b"x" * 64))


@case("write_read_only", (1, 1, 0))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("R"), c.addr("R"), b"x" * 64))


@case("write_one_below", (1, 1, 1))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W") - 1, b"x" * 64))


@case("write_one_past_end", (1, 1, 1))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W") + 4096 - 63, b"x" * 64))


@case("write_second_segment_past_end", (1, 1, 1), "grant=0:4000")
def _(p, c):
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 4000), last=False))
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W") + 4000, b"y" * 97))


@case("write_to_wrap", (1, 1, 3))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), 0xFFFFFFFFFFFFFFF0, b"x" * 64))


@case("write_ddp_version_0", (1, 1, 4))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W"), b"x" * 64, dv=0))


@case("write_ddp_version_2", (1, 1, 4))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W"), b"x" * 64, dv=2))


@case("write_rdmap_version_0", (0, 2, 5))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W"), b"x" * 64, rv=0))


@case("send_ok", None, ok=[sp(100)])
def _(p, c):
    p.send(untagged(OP_SEND, 0, 1, 0, sp(100)))


@case("send_two_segments_ok", None, ok=[sp(256)])
def _(p, c):
    p.send(untagged(OP_SEND, 0, 1, 0, sp(256)[:128], last=False))
    p.send(untagged(OP_SEND, 0, 1, 128, sp(256)[128:]))


@case("send_no_receive_posted", (1, 2, 2), "recv=0")
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, sp(10)))


@case("send_zero_length_no_receive", (1, 2, 2), "recv=0")
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, b""))


@case("send_too_long", (1, 2, 5))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, sp(257)))


@case("send_ddp_version_0", (1, 2, 6))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, sp(10), dv=0))


@case("send_rdmap_version_2", (0, 2, 5))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, sp(10), rv=2))


@case("send_queue_3", (1, 2, 1))
def _(p, c):
    return hit(p, untagged(OP_SEND, 3, 1, 0, sp(10)))


@case("send_msn_0", (1, 2, 3))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 0, 0, sp(10)))


# uiwarp, like Linux siw, takes Sends in MSN order only: an MSN other than the
# next one is "MSN range not valid" (0x03), also when it names a receive not
# posted ("no buffer", 0x02, is for the next MSN with no receive posted)
@case("send_msn_beyond_receives", (1, 2, 3))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1 + c.nrecv, 0, sp(10)))


@case("send_first_segment_mo_4", (1, 2, 4))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 4, sp(10)))


@case("send_continuation_mo_gap", (1, 2, 4))
def _(p, c):
    p.send(untagged(OP_SEND, 0, 1, 0, sp(64), last=False))
    return hit(p, untagged(OP_SEND, 0, 1, 100, sp(10)))


@case("send_tagged", (0, 2, 6))
def _(p, c):
    return hit(p, tagged(OP_SEND, c.stag("W"), c.addr("W"), sp(10)))


@case("write_untagged", (0, 2, 6))
def _(p, c):
    return hit(p, untagged(OP_WRITE, 0, 1, 0, sp(10)))


@case("unknown_opcode_12", (0, 2, 6))
def _(p, c):
    return hit(p, untagged(12, 0, 1, 0, sp(10)))


@case("read_response_unsolicited", (0, 2, 6))
def _(p, c):
    return hit(p, tagged(OP_RRESP, c.stag("W"), c.addr("W"), b"x" * 64))


@case("send_inv_foreign_pd", (0, 1, 9))
def _(p, c):
    return hit(p, untagged(OP_SEND_INV, 0, 1, 0, sp(10), inv=c.stag("F")))


@case("send_inv_unknown", (0, 1, 0))
def _(p, c):
    return hit(p, untagged(OP_SEND_INV, 0, 1, 0, sp(10), inv=c.stag("D")))


@case("read_ok", None, rresp=1)
def _(p, c):
    p.send(read_req(1, 0x11223344, 0x1000, 64, c.stag("R"), c.addr("R")))


@case("read_no_remote_read", (0, 1, 2))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("O"), c.addr("O")))


@case("read_one_past_end", (0, 1, 1))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("R"), c.addr("R") + 4096 - 63))


@case("read_deregistered", (0, 1, 0))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("D"), c.addr("D")))


@case("read_foreign_pd", (0, 1, 3))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("F"), c.addr("F")))


@case("read_to_wrap", (0, 1, 4))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("R"), 0xFFFFFFFFFFFFFFF0))


@case("read_beyond_ird", (0, 2, 7), "ird=1")
def _(p, c):
    # 3000 Read Requests of 4 KiB at once, their responses not read until all
    # are sent: the victim answers while its socket takes the responses, and
    # once TCP backs up a second request arrives while one is outstanding
    reqs = [read_req(m, 0x11223344, 0, 4096, c.stag("R"), c.addr("R")) for m in range(1, 3001)]
    p.send_raw(b"".join(p.frame(u) for u in reqs))
    return None  # which one is refused depends on TCP


@case("read_request_with_payload", (1, 2, 5))
def _(p, c):
    return hit(p, read_req(1, 0x11223344, 0x1000, 64, c.stag("R"), c.addr("R")) + b"extra")


# ---- RFC 7306 (ext=1: the victim's QP uses it; W, I, D, F grant atomics,
# R and O do not).  The target word is never changed by a refused request
# (mem=ok: W's first octets are granted only to atomic_ok).
@case("atomic_ok", None, "ext=1 grant=0:8 any=1", aresp=1)
def _(p, c):
    p.send(atomic_req(1, 0, c.stag("W"), c.addr("W"), 5))


@case("atomic_no_atomic_right", (0, 1, 2), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 0, c.stag("O"), c.addr("O")))


@case("atomic_misaligned", (0, 2, 7), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 2, c.stag("W"), c.addr("W") + 4))


@case("atomic_one_past_end", (0, 1, 1), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 0, c.stag("W"), c.addr("W") + 4096))


@case("atomic_invalidated", (0, 1, 0), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 2, c.stag("I"), c.addr("I")))


@case("atomic_deregistered", (0, 1, 0), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 0, c.stag("D"), c.addr("D")))


@case("atomic_foreign_pd", (0, 1, 3), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 0, c.stag("F"), c.addr("F")))


@case("atomic_unknown_opcode", (0, 2, 6), "ext=1")
def _(p, c):
    return hit(p, atomic_req(1, 1, c.stag("W"), c.addr("W")))


@case("atomic_beyond_ird", (0, 2, 7), "ext=1 ird=1", aresp_any=True)
def _(p, c):
    # Read Requests of 4 KiB and Atomic Requests in turn, the answers not
    # read: the victim answers what its IRD allows as it reads (Read and
    # Atomic Responses, in request order); once TCP backs up, a request
    # arrives while one is outstanding (atomics count against IRD with
    # Reads, RFC 7306 section 5.2)
    reqs = []
    for m in range(1, 3001):
        if m % 2:
            reqs.append(read_req(m, 0x11223344, 0, 4096, c.stag("R"), c.addr("R")))
        else:
            # a CmpSwap whose masks are 0: it matches and stores nothing
            reqs.append(atomic_req(m, 2, c.stag("W"), c.addr("W") + 8, 0, 0, 1, 0))
    p.send_raw(b"".join(p.frame(u) for u in reqs))
    return None  # which one is refused depends on TCP


@case("atomic_extensions_off", (0, 2, 6))
def _(p, c):
    # RFC 7306 section 1.1: a peer without the extensions answers so
    return hit(p, atomic_req(1, 0, c.stag("W"), c.addr("W")))


@case("immediate_no_receive_posted", (1, 2, 2), "ext=1 recv=0")
def _(p, c):
    return hit(p, untagged(OP_IMM, 0, 1, 0, b"\1\2\3\4\0\0\0\0"))


@case("immediate_12_octets", (1, 2, 5), "ext=1")
def _(p, c):
    return hit(p, untagged(OP_IMM_SE, 0, 1, 0, b"\1" * 12))


@case("bad_crc", (2, 0, 2), "grant=0:64 maybe=1")
def _(p, c):
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)), bad_crc=True)


@case("ulpdu_length_4", (2, 0, 3))
def _(p, c):
    # followed by a valid FPDU: the victim reads 16 octets before it looks
    # at ULPDU_Length (a lone 12-octet FPDU is just an incomplete one)
    p.send(b"\xc1\x40\x00\x00", length=4)
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W")))


@case("untagged_ulpdu_length_16", (2, 0, 3))
def _(p, c):
    p.send(untagged(OP_SEND, 0, 1, 0)[:16])


@case("ulpdu_length_65535_write", (1, 1, 1))
def _(p, c):
    return hit(p, tagged(OP_WRITE, c.stag("W"), c.addr("W"), b"z" * (65535 - 14)))


@case("ulpdu_length_65535_send", (1, 2, 5))
def _(p, c):
    return hit(p, untagged(OP_SEND, 0, 1, 0, b"z" * (65535 - 18)))


@case("markers_write_ok", None, "grant=0:2000", markers=True)
def _(p, c):
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 1000), last=False))
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W") + 1000, gp(1000, 1000)))


@case("markers_wrong_pointer", (2, 0, 3), "grant=0:1000 maybe=1", markers=True)
def _(p, c):
    # what comes before the bad marker may be placed (the STag and bounds
    # are valid): the Write carries what W may legitimately hold
    data = bytearray(p.frame(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 1000))))
    # the marker 512 octets into the stream points 8 octets off; the CRC is
    # recomputed so that only the pointer is wrong
    m = 512 - (p.txoff - len(data))
    ptr = struct.unpack(">H", data[m + 2:m + 4])[0]
    data[m + 2:m + 4] = struct.pack(">H", ptr + 8)
    data[-4:] = struct.pack("<I", crc32c(bytes(data[:-4])))
    p.send_raw(bytes(data))


@case("markers_missing", (2, 0, 2), "grant=0:1000 any=1", markers=True)
def _(p, c):
    # the victim required markers: it takes 4 octets of payload for each
    # marker (W, the valid target, gets shifted data: "any"), and the CRC
    # then fails (RFC 5044 section 8: code 3, marker and ULPDU_Length
    # disagreeing, is for an FPDU whose CRC is valid); a second FPDU
    # supplies the octets it waits for
    p.markers = False
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 1000)))
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)))


@case("terminate_from_peer", "received")
def _(p, c):
    term = struct.pack(">BBBB", (0 << 4) | 1, 0, 0, 0)  # RDMAP, remote protection, STag
    p.send(untagged(OP_TERM, 2, 1, 0, term))


@case("terminate_two_segments", (1, 2, 5))
def _(p, c):
    # a TERMINATE is one segment (RFC 5040 section 4.8: its header and the
    # copies fit); a first segment without the L bit is refused
    u = untagged(OP_TERM, 2, 1, 0, struct.pack(">BBBB", 1, 0, 0, 0), last=False)
    p.send(u)
    p.send(untagged(OP_TERM, 2, 1, 4, b"\0" * 8))
    return u


@case("terminate_oversize", (1, 2, 5))
def _(p, c):
    # 4 octets of control, 2 of segment length, a DDP and an RDMAP header:
    # 52 at most; 64 is too long
    return hit(p, untagged(OP_TERM, 2, 1, 0, struct.pack(">BBBB", 1, 0, 0xE0, 0) + b"\0" * 60))


@case("p2p_first_fpdu_not_rtr", (2, 0, 7), p2p=True)
def _(p, c):
    # RFC 6581 peer-to-peer: the initiator's first FPDU must be the RTR it
    # offered (a zero-length Write to STag 1); a Send instead is refused
    return hit(p, untagged(OP_SEND, 0, 1, 0, sp(10)))


@case("p2p_rtr_ok", None, "grant=0:64", p2p=True)
def _(p, c):
    # positive control: the zero-length Write RTR, then a Write
    p.send(tagged(OP_WRITE, 1, 0))
    p.send(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)))


@case("half_fpdu_then_silence", "lost", "grant=0:64 maybe=1")
def _(p, c):
    # slowloris in full operation: the victim holds the connection (a slow
    # peer is legal; TCP keepalive, when set, ends a dead one), sends nothing
    # and keeps serving the others; then we close
    f = p.frame(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)))
    p.send_raw(f[:30])
    r, _, _ = select.select([p.s], [], [], 3.0)
    if r:
        raise RuntimeError("the victim sent or closed during the silence")


@case("half_fpdu_then_close", "lost", "grant=0:64 maybe=1")
def _(p, c):
    f = p.frame(tagged(OP_WRITE, c.stag("W"), c.addr("W"), gp(0, 64)))
    p.send_raw(f[:30])
    time.sleep(0.3)


# ---- driver ---------------------------------------------------------------------
class Victim:
    def __init__(self, path):
        # UIW_VICTIM_WRAP: a command to run the victim under (valgrind)
        wrap = os.environ.get("UIW_VICTIM_WRAP", "").split()
        self.p = subprocess.Popen(wrap + [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        self.q = queue.Queue()
        self.log = []
        threading.Thread(target=self._reader, daemon=True).start()
        line = self.line(60)
        while line is not None and line.startswith("=="):  # valgrind's banner
            line = self.line(60)
        if not line or "listening" not in line:
            raise RuntimeError("victim did not start: %r" % line)
        w = line.split()
        self.port, self.mport = int(w[3]), int(w[5])

    def _reader(self):
        for line in self.p.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def line(self, timeout):
        try:
            ln = self.q.get(timeout=timeout)
        except queue.Empty:
            return None
        if ln is not None:
            self.log.append(ln)
        return ln

    def end_of(self, name, timeout=TIMEOUT):
        dl = time.time() + timeout
        while time.time() < dl:
            ln = self.line(dl - time.time())
            if ln is None:
                return None
            if ln.startswith("victim: end case=%s " % name):
                return dict(kv.split("=", 1) for kv in ln.split()[2:])
            if "case=%s:" % name in ln:
                print("  victim: " + ln)
        return None

    def status(self, key):
        with open("/proc/%d/status" % self.p.pid) as f:
            for ln in f:
                if ln.startswith(key):
                    return int(ln.split()[1])
        return -1

    def nfds(self):
        return len(os.listdir("/proc/%d/fd" % self.p.pid))

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return "killed after 60 s"


def check_term(u, want, sent):
    """Problems with the TERMINATE ULPDU @u, given the offending ULPDU @sent."""
    t, op, f, hl = decode(u)
    if t or op != OP_TERM or f["qn"] != 2 or f["msn"] != 1 or f["mo"] != 0:
        return ["not a TERMINATE on QN 2, MSN 1, MO 0: %s" % u[:18].hex()]
    b = u[hl:]
    layer, etype, code, hdrct = b[0] >> 4, b[0] & 0xF, b[1], b[2]
    errs = []
    if (layer, etype, code) != want:
        errs.append("TERMINATE %d/%d/0x%02x, want %d/%d/0x%02x" % ((layer, etype, code) + want))
    rest = b[4:]
    if hdrct & 0x80:  # M: DDP segment length
        rest = rest[2:]
    if sent is not None and hdrct & 0x40:  # D: the offending DDP header copied
        hl2 = 14 if sent[0] & 0x80 else 18
        if rest[:hl2] != sent[:hl2]:
            errs.append("copied DDP header %s is not the offending one %s" %
                        (rest[:hl2].hex(), sent[:hl2].hex()))
        else:
            STATS["hdr_copies"] += 1
    return errs


def run_case(v, cs):
    errs = []
    extra = cs["extra"]
    pdtext = "case=%s %s" % (cs["name"], extra)
    p = Peer(v.mport if cs["markers"] else v.port, pdtext.strip(), cs["p2p"])
    if cs["p2p"]:
        # the first FPDU must be the RTR: the regions come from the Reply
        # (after its IRD/ORD words), the victim sends nothing before
        c = Ctx(p.reply_pd[4:].decode())
    else:
        c = ready(p)
    sent = cs["fn"](p, c)
    term = cs["term"]
    got_term = None
    aresp_got = None
    aresp_n = 0
    rresp = 0
    dl = time.time() + TIMEOUT
    while time.time() < dl and (isinstance(term, tuple) or cs["rresp"] > rresp or
                                (cs["aresp"] and aresp_got is None)):
        u = p.recv_fpdu(max(0.1, dl - time.time()))
        if u is None:
            break
        t, op, f, hl = decode(u)
        if op == OP_ARESP and not t and cs["aresp"]:
            aresp_got = u
            if f["qn"] != 3 or f["msn"] != 1 or len(u) != hl + 12 or u[hl:hl + 4] != b"\x11\x22\x33\x44":
                errs.append("Atomic Response wrong: %s" % u.hex())
            break
        if op == OP_ARESP and not t and cs["aresp_any"]:
            # answered within IRD before the one refused: in order, each
            # the 12 octets of RFC 7306 section 5.2.2
            aresp_n += 1
            if f["qn"] != 3 or f["msn"] != aresp_n or len(u) != hl + 12 or \
                    u[hl:hl + 4] != b"\x11\x22\x33\x44":
                errs.append("Atomic Response %d wrong: %s" % (aresp_n, u.hex()))
            continue
        if op == OP_RRESP and t:
            rresp += 1
            if cs["rresp"] == 1:
                data = u[hl:]
                if f["stag"] != 0x11223344 or len(data) != 64 or crc32c(data) != c.rcrc:
                    errs.append("Read Response wrong: STag %08x, %d octets" % (f["stag"], len(data)))
            continue
        if op == OP_TERM:
            got_term = u
            break
        errs.append("unexpected FPDU from the victim: %s" % u[:18].hex())
    if isinstance(term, tuple):
        if got_term is None:
            errs.append("no TERMINATE within %.0f s (closed: %s)" % (TIMEOUT, p.closed))
        else:
            STATS["terms"] += 1
            errs += check_term(got_term, term, sent)
            # RFC 5040 section 7: after a TERMINATE the LLP connection is
            # torn down: the victim closes its side (we have not closed ours)
            t0 = time.time()
            while not p.closed and time.time() - t0 < 5:
                if p.recv_fpdu(max(0.1, 5 - (time.time() - t0))) is not None:
                    errs.append("an FPDU after the TERMINATE")
                    break
            if not p.closed:
                errs.append("the victim did not close TCP within 5 s of its TERMINATE")
            else:
                STATS["closed"] += 1
    if cs["name"] == "read_beyond_ird":
        print("     (%d Read Responses before the TERMINATE)" % rresp)
    elif cs["rresp"] and rresp != cs["rresp"]:
        errs.append("%d Read Responses, want %d" % (rresp, cs["rresp"]))
    if cs["aresp"] and aresp_got is None:
        errs.append("no Atomic Response")
    if term is None or term == "received":
        time.sleep(0.05)
    p.close()
    r = v.end_of(cs["name"])
    if r is None:
        return errs + ["no report from the victim"], None
    # the victim's view
    if isinstance(term, tuple):
        want = "sent:%d/%d/%d" % term
        if r["term"] != want:
            errs.append("victim term=%s, want %s" % (r["term"], want))
    elif term == "received":
        if r["term"] != "received:0/1/0":
            errs.append("victim term=%s, want received:0/1/0" % r["term"])
    elif r["term"] != "none":
        errs.append("victim term=%s, want none" % r["term"])
    if int(r["recv"]) != c.nrecv:
        errs.append("%s of %d posted receives completed" % (r["recv"], c.nrecv))
    want_ok = len(cs["ok"])
    if int(r["ok"]) != want_ok:
        errs.append("%s receives succeeded, want %d" % (r["ok"], want_ok))
    if want_ok:
        crcs = ["%d:%08x" % (len(x), crc32c(x)) for x in cs["ok"]]
        if r["crc"] != ",".join(crcs):
            errs.append("received %s, want %s" % (r["crc"], ",".join(crcs)))
    if r["qp"] != "6":
        errs.append("QP state %s, want 6 (error)" % r["qp"])
    if float(r["wait_ms"]) > 5000:
        errs.append("completions took %s ms after the end" % r["wait_ms"])
    if r["mem"] != "ok":
        errs.append("memory: %s" % r["mem"])
    return errs, r


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if "--list" in args:
        for cs in CASES:
            print(cs["name"])
        return 0
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1].split(",")
    # self-check of the CRC32C against RFC 5044 Figure 5 (marker, Send of 24 zeros)
    fig5 = bytes.fromhex("00000000" "002a" "4143" "00000000" "00000000" "00000001" "00000000") + b"\0" * 24
    if struct.pack("<I", crc32c(fig5)) != bytes.fromhex("52239983"):
        print("fpdu_hostile: CRC32C self-check against RFC 5044 Figure 5 failed")
        return 1
    v = Victim(args[0])
    fails = 0
    try:
        good = Peer(v.port, "case=good grant=0:128")
        gctx = ready(good)
        time.sleep(0.2)
        fd0, rss0 = v.nfds(), v.status("VmRSS:")
        print("fpdu_hostile: victim pid %d ports %d/%d; well-behaved connection up; %d fds, RSS %d kB"
              % (v.p.pid, v.port, v.mport, fd0, rss0))
        n = 0
        for cs in CASES:
            if only and cs["name"] not in only:
                continue
            n += 1
            try:
                res = run_case(v, cs)
            except (RuntimeError, OSError) as e:
                res = (["%s: %s" % (type(e).__name__, e)], None)
            errs, r = res if isinstance(res, tuple) else (res, None)
            if errs:
                fails += 1
                print("FAIL %-32s %s" % (cs["name"], "; ".join(errs)))
                if r:
                    print("     victim: %s" % " ".join("%s=%s" % kv for kv in r.items()))
            else:
                print("ok   %-32s term %-15s recv %s/%s ok, WR statuses %s, %s ms, memory %s"
                      % (cs["name"], r["term"], r["ok"], r["recv"], r["status"], r["wait_ms"],
                         r["mem"]))
        # the well-behaved connection: nothing arrived on it, and it still works
        r, _, _ = select.select([good.s], [], [], 0)
        if r:
            fails += 1
            print("FAIL well-behaved connection got data or was closed during the cases")
        good.send(tagged(OP_WRITE, gctx.stag("W"), gctx.addr("W"), gp(0, 128)))
        good.send(untagged(OP_SEND, 0, 1, 0, sp(200)))
        time.sleep(0.1)
        good.close()
        r = v.end_of("good")
        want_crc = "200:%08x" % crc32c(sp(200))
        if not r or r["term"] != "none" or r["ok"] != "1" or r["crc"] != want_crc or r["mem"] != "ok":
            fails += 1
            print("FAIL well-behaved connection: %s" % r)
        else:
            print("ok   well-behaved connection held through %d cases: Write and Send verified" % n)
        time.sleep(0.3)
        fd1, rss1, hwm = v.nfds(), v.status("VmRSS:"), v.status("VmHWM:")
        print("fpdu_hostile: victim after the cases: %d fds (before: %d), RSS %d kB (before: %d), peak %d kB"
              % (fd1, fd0, rss1, rss0, hwm))
        if fd1 > fd0 - 1:  # the well-behaved connection's socket is gone too
            fails += 1
            print("FAIL victim descriptors did not return: %d, %d before the cases (with one more connection)" % (fd1, fd0))
        if rss1 - rss0 > 16384:
            fails += 1
            print("FAIL victim RSS grew by %d kB" % (rss1 - rss0))
    finally:
        rc = v.stop()
    if rc != 0:
        fails += 1
        print("FAIL the victim exited with %s" % rc)
    for ln in v.log:
        if "outstanding" in ln or "failed" in ln or ln.startswith("=="):
            print("  " + ln)
    print("fpdu_hostile: %d TERMINATEs decoded, %d with the offending DDP header copied and "
          "checked, %d followed by the victim closing TCP" % (STATS["terms"], STATS["hdr_copies"],
                                                           STATS["closed"]))
    print("fpdu_hostile: %d case(s) failed" % fails if fails else "fpdu_hostile: all passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
