#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the DDP/RDMAP fuzz targets.

usage: tests/fuzz/make_rdmap_seeds.py [--out tests/fuzz/corpus] [capture.pcap ...]

  OUT/rdmap_rx/<name>   inputs of tests/fuzz/fuzz_rdmap_rx.c: one
                        configuration octet, then records (an FPDU: kind
                        octet, ULPDU_Length, ULPDU; an action: 0x80|n, arg).
                        Hand-made operations, valid and invalid: RDMA Write,
                        Send (with Invalidate, Solicited), Read Request,
                        Read Response, Terminate, and every error the
                        receive path answers with a TERMINATE; then the
                        full-operation FPDU streams of the real captures
                        (default $UIW_CAPTURES/*.pcap), as they are
                        and with their STags and TOs mapped onto the
                        harness's regions.
  OUT/ddp_hdr/<name>    inputs of tests/fuzz/fuzz_ddp_hdr.c: a selector octet
                        (bit 0: decode as a Terminate header too), then the
                        octets: the DDP headers and Terminate headers above
                        and those of the captures.

The formats and the harness's regions (named by STag (0x10 + i) << 8 | key,
the key 0 plus one per revalidation, which the harness maps onto the region's
random STag; TOs relative to the region) are documented at the top of the two
fuzz targets.  The pcap reader and the MPA stream reassembly are those of
make_seeds.py.  Python 3 standard library only.
"""

import argparse
import glob
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_seeds import connections, rr_len, split_fpdus  # noqa: E402

# fuzz_rdmap_rx.c configuration octet
CFG_CRC = 0x01
CFG_VICTIM_INITIATOR = 0x02
CFG_LEND = 0x04
CFG_CHUNK = lambda k: (k & 3) << 3  # noqa: E731
CFG_EXT = 0x20  # RFC 7306 on both QPs
CFG_NO_WORK = 0x40
CFG_SMALL = 0x80

# FPDU record kinds
K_BAD_CRC = 0x01
K_RAW_TO = 0x02
K_NO_DRAIN = 0x04
K_TO_FROM_END = 0x08

# actions (0x80 | n, then an argument octet)
A_RECV, A_READ, A_WRITE, A_SEND, A_LINV, A_DEREG, A_REVAL, A_CLOSE, A_ERROR, A_TCPCLOSE, \
    A_ATOMIC, A_IMM = range(12)

# the harness's regions
R_WRITE, R_READSRC, R_LOCAL, R_OTHERPD, R_INVAL, R_SRC = range(6)


def stag(region, key=0):
    return (0x10 + region) << 8 | key


PEER = 0x00AB0000

# RDMAP opcodes (RFC 5040 section 4.1, Figure 4)
OP_WRITE, OP_READ_REQ, OP_READ_RESP, OP_SEND, OP_SEND_INV, OP_SEND_SE, OP_SEND_SE_INV, \
    OP_TERMINATE = range(8)
# RFC 7306 section 4.1, Figure 2
OP_IMM, OP_IMM_SE, OP_ATOMIC_REQ, OP_ATOMIC_RESP = range(8, 12)
AOP_FETCHADD, AOP_CMPSWAP = 0, 2

SEED_MAX = 12 * 1024  # capture streams, per seed


def tagged(op, st, to, payload=b"", last=True, dv=1, rv=1):
    ctrl = 0x80 | (0x40 if last else 0) | dv
    return bytes([ctrl, rv << 6 | op]) + struct.pack(">IQ", st, to) + payload


def untagged(op, qn, msn, mo=0, payload=b"", last=True, inv=0, dv=1, rv=1):
    ctrl = (0x40 if last else 0) | dv
    return bytes([ctrl, rv << 6 | op]) + struct.pack(">IIII", inv, qn, msn, mo) + payload


def rreq(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged(OP_READ_REQ, 1, msn,
                    payload=struct.pack(">IQIIQ", sink_stag, sink_to, size, src_stag, src_to))


def term(layer, etype, ecode, hdrct=0, seg_len=0, ddp=b"", rdma=b"", siw=False):
    """RFC 5040 section 4.8 Terminate header; siw=True: siw's bit order."""
    if siw:
        b0 = etype << 4 | layer
        b2 = (1 if hdrct & 0x80 else 0) | (2 if hdrct & 0x40 else 0) | (4 if hdrct & 0x20 else 0)
    else:
        b0 = layer << 4 | etype
        b2 = hdrct
    out = bytes([b0, ecode, b2, 0])
    if hdrct & 0xC0:
        out += struct.pack(">H", seg_len)
    if hdrct & 0x40:
        out += ddp
    if hdrct & 0x20:
        out += rdma
    return out


def areq(msn, aop, st, to, data_=0, data_mask=0, cmp=0, cmp_mask=0xFFFFFFFFFFFFFFFF, req_id=None,
         qn=1):
    """RFC 7306 section 5.2.1 Atomic Request (52 octets after the DDP header)."""
    return untagged(OP_ATOMIC_REQ, qn, msn, payload=struct.pack(
        ">IIIQQQQQ", aop, msn if req_id is None else req_id, st, to, data_, data_mask, cmp, cmp_mask))


def aresp(msn, req_id, orig, qn=3):
    return untagged(OP_ATOMIC_RESP, qn, msn, payload=struct.pack(">IQ", req_id, orig))


def terminate_fpdu(t, msn=1):
    return untagged(OP_TERMINATE, 2, msn, payload=t)


def rec(ulpdu, kind=0):
    return bytes([kind]) + struct.pack(">H", len(ulpdu)) + ulpdu


def act(n, arg=0):
    return bytes([0x80 | n, arg])


def data(n, seed=1):
    return bytes((seed * 73 + i * 7) & 0xFF for i in range(n))


def hand_seeds():
    """(name, config, records): operations the victim accepts, then errors."""
    s = []
    w = lambda st, to, n, **k: rec(tagged(OP_WRITE, st, to, data(n), **k))  # noqa: E731
    send = lambda msn, n, mo=0, last=True, op=OP_SEND, inv=0: rec(  # noqa: E731
        untagged(op, 0, msn, mo, data(n, msn), last=last, inv=inv))
    # RDMA Write: whole, segmented, zero-length, to the last octet
    s.append(("write", 0, w(stag(R_WRITE), 100, 200)))
    s.append(("write-segments", 0, w(stag(R_WRITE), 0, 1000, last=False) +
              w(stag(R_WRITE), 1000, 1000, last=False) + w(stag(R_WRITE), 2000, 2096)))
    s.append(("write-zero", 0, rec(tagged(OP_WRITE, 1, 0))))
    s.append(("write-end", 0, w(stag(R_WRITE), 4095, 1) +
              rec(tagged(OP_WRITE, stag(R_WRITE), 2, data(2)), K_TO_FROM_END)))
    # Write errors (RFC 5041 section 7.2, RFC 5040 section 7)
    s.append(("write-bounds", 0, w(stag(R_WRITE), 4000, 200) +
              rec(tagged(OP_WRITE, stag(R_WRITE), 1, data(2)), K_TO_FROM_END)))
    s.append(("write-to-wrap", 0, rec(tagged(OP_WRITE, stag(R_WRITE), 0xFFFFFFFFFFFFFFF0,
                                             data(64)), K_RAW_TO)))
    s.append(("write-below-base", 0, rec(tagged(OP_WRITE, stag(R_WRITE), 0, data(64)),
                                         K_RAW_TO)))
    s.append(("write-no-rights", 0, w(stag(R_READSRC), 0, 64)))
    s.append(("write-local-only", 0, w(stag(R_LOCAL), 0, 64)))
    s.append(("write-other-pd", 0, w(stag(R_OTHERPD), 0, 64)))
    s.append(("write-invalidated", 0, w(stag(R_INVAL), 0, 64)))
    s.append(("write-revalidated", 0, act(A_REVAL, R_INVAL) + w(stag(R_INVAL, 1), 0, 64) +
              w(stag(R_INVAL), 64, 64)))
    s.append(("write-stale-key", 0, w(stag(R_WRITE, 1), 0, 64)))
    s.append(("write-unknown-stag", 0, w(0x00123400, 0, 64)))
    s.append(("write-dereg", 0, w(stag(R_WRITE), 0, 64) + act(A_DEREG, R_WRITE) +
              w(stag(R_WRITE), 0, 64)))
    s.append(("write-local-inv", 0, w(stag(R_WRITE), 0, 64) + act(A_LINV, R_WRITE) +
              w(stag(R_WRITE), 0, 64)))
    s.append(("write-bad-ddp-version", 0, rec(tagged(OP_WRITE, stag(R_WRITE), 0, data(8), dv=0))))
    s.append(("write-bad-rdmap-version", 0, rec(tagged(OP_WRITE, stag(R_WRITE), 0, data(8),
                                                       rv=0))))
    s.append(("write-untagged", 0, rec(untagged(OP_WRITE, 0, 1, payload=data(8)))))
    s.append(("write-crc", CFG_CRC, w(stag(R_WRITE), 8, 512) + w(stag(R_WRITE), 600, 10)))
    s.append(("write-bad-crc", CFG_CRC, w(stag(R_WRITE), 8, 512) +
              rec(tagged(OP_WRITE, stag(R_WRITE), 600, data(100)), K_BAD_CRC)))
    s.append(("write-lend-bytes", CFG_LEND | CFG_CHUNK(1), w(stag(R_WRITE), 3, 77) +
              w(stag(R_WRITE), 90, 1)))
    s.append(("write-lend-chunks", CFG_LEND | CFG_CHUNK(3) | CFG_CRC,
              w(stag(R_WRITE), 0, 3000) + w(stag(R_WRITE), 3000, 1000)))
    s.append(("write-initiator", CFG_VICTIM_INITIATOR | CFG_CHUNK(3), w(stag(R_WRITE), 0, 300)))
    # Send (RFC 5040 section 5.3) into the four standard receives
    s.append(("send", 0, send(1, 200) + send(2, 424) + send(3, 437) + send(4, 64)))
    s.append(("send-segments", CFG_CHUNK(2), send(1, 100, last=False) +
              send(1, 100, mo=100, last=False) + send(1, 300, mo=200) + send(2, 0)))
    s.append(("send-se-inv", 0, send(1, 10, op=OP_SEND_SE) +
              send(2, 20, op=OP_SEND_INV, inv=stag(R_WRITE)) +
              send(3, 30, op=OP_SEND_SE_INV, inv=stag(R_SRC)) + w(stag(R_WRITE), 0, 8)))
    s.append(("send-inv-foreign", 0, send(1, 10, op=OP_SEND_INV, inv=stag(R_OTHERPD))))
    s.append(("send-inv-unknown", 0, send(1, 10, op=OP_SEND_INV, inv=0x00999900)))
    s.append(("send-too-long", 0, send(1, 513)))
    s.append(("send-too-long-segments", 0, send(1, 500, last=False) + send(1, 100, mo=500)))
    s.append(("send-no-buffer", CFG_NO_WORK, send(1, 8)))
    s.append(("send-posted-later", CFG_NO_WORK, act(A_RECV, 0x1A) + send(1, 64) +
              act(A_RECV, 0xFF) + send(2, 256)))
    s.append(("send-bad-msn", 0, send(2, 8)))
    s.append(("send-bad-mo", 0, send(1, 8, mo=8)))
    s.append(("send-bad-mo-segment", 0, send(1, 8, last=False) + send(1, 8, mo=9)))
    s.append(("send-msn-change", 0, send(1, 8, last=False) + send(2, 8, mo=8)))
    s.append(("send-bad-qn", 0, rec(untagged(OP_SEND, 1, 1, payload=data(8)))))
    s.append(("send-qn-3", 0, rec(untagged(OP_SEND, 3, 1, payload=data(8)))))
    s.append(("send-opcode-change", 0, send(1, 8, last=False) +
              rec(untagged(OP_SEND_SE, 0, 1, 8, data(8)))))
    s.append(("send-tagged", 0, rec(tagged(OP_SEND, stag(R_WRITE), 0, data(8)))))
    s.append(("send-recv-dereg", 0, act(A_DEREG, R_LOCAL) + send(1, 8)))
    s.append(("send-small-queues", CFG_SMALL, send(1, 8) + send(2, 8) + send(3, 8)))
    s.append(("send-bad-ddp-version", 0, rec(untagged(OP_SEND, 0, 1, payload=data(8), dv=2))))
    # Read Request (RFC 5040 section 4.4): the victim answers with a Read Response
    s.append(("rreq", 0, rec(rreq(1, PEER | 1, 0x1000, 256, stag(R_READSRC), 0)) +
              rec(rreq(2, PEER | 2, 0, 4096, stag(R_READSRC), 0)) +
              rec(rreq(3, PEER | 3, 0, 0, 0, 0))))
    s.append(("rreq-queued", CFG_CHUNK(3), rec(rreq(1, PEER | 1, 0, 4096, stag(R_READSRC), 0),
                                                K_NO_DRAIN) +
              rec(rreq(2, PEER | 2, 0, 4096, stag(R_READSRC), 0), K_NO_DRAIN) +
              rec(rreq(3, PEER | 3, 0, 4096, stag(R_READSRC), 0), K_NO_DRAIN) +
              rec(rreq(4, PEER | 4, 0, 4096, stag(R_READSRC), 0), K_NO_DRAIN) +
              rec(rreq(5, PEER | 5, 0, 4096, stag(R_READSRC), 0), K_NO_DRAIN)))
    # the victim's transmit queue (32 FPDUs) fills up, then IRD 1 overflows
    s.append(("rreq-ird-overflow", CFG_SMALL, b"".join(
        rec(rreq(m, PEER, 0, 4096, stag(R_READSRC), 0), K_NO_DRAIN) for m in range(1, 13))))
    s.append(("rreq-no-rights", 0, rec(rreq(1, PEER, 0, 16, stag(R_WRITE), 0))))
    s.append(("rreq-bounds", 0, rec(rreq(1, PEER, 0, 4097, stag(R_READSRC), 0))))
    s.append(("rreq-end", 0, rec(rreq(1, PEER, 0, 16, stag(R_READSRC), 16), K_TO_FROM_END) +
              rec(rreq(2, PEER, 0, 17, stag(R_READSRC), 16), K_TO_FROM_END)))
    s.append(("rreq-other-pd", 0, rec(rreq(1, PEER, 0, 16, stag(R_OTHERPD), 0))))
    s.append(("rreq-invalid", 0, rec(rreq(1, PEER, 0, 16, stag(R_INVAL), 0))))
    s.append(("rreq-short", 0, rec(untagged(OP_READ_REQ, 1, 1, payload=data(20)))))
    s.append(("rreq-long", 0, rec(rreq(1, PEER, 0, 16, stag(R_READSRC), 0) + data(4))))
    s.append(("rreq-not-last", 0, rec(untagged(OP_READ_REQ, 1, 1, last=False, payload=struct.pack(
        ">IQIIQ", PEER, 0, 16, stag(R_READSRC), 0)))))
    s.append(("rreq-bad-msn", 0, rec(rreq(2, PEER, 0, 16, stag(R_READSRC), 0))))
    s.append(("rreq-crc-lend", CFG_CRC | CFG_LEND | CFG_CHUNK(2),
              rec(rreq(1, PEER, 0, 1000, stag(R_READSRC), 100))))
    # Read Response (RFC 5040 section 4.5) to the victim's three Reads
    resp = w(stag(R_WRITE), 0, 4) + \
        rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048, data(256))) + \
        rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2304, data(600), last=False)) + \
        rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2904, data(400))) + \
        rec(tagged(OP_READ_RESP, stag(R_LOCAL), 3400))
    s.append(("rresp", 0, resp))
    s.append(("rresp-initiator", CFG_VICTIM_INITIATOR, resp[len(w(stag(R_WRITE), 0, 4)):]))
    s.append(("rresp-crc-chunks", CFG_CRC | CFG_LEND | CFG_CHUNK(3), resp))
    s.append(("rresp-unexpected", CFG_NO_WORK, w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048, data(16)))))
    s.append(("rresp-wrong-stag", 0, w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_WRITE), 2048, data(16)))))
    s.append(("rresp-wrong-to", 0, w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2049, data(16)))))
    s.append(("rresp-too-long", 0, w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048, data(300)))))
    s.append(("rresp-too-short", 0, w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048, data(100)))))
    s.append(("rresp-sink-dereg", 0, w(stag(R_WRITE), 0, 4) + act(A_DEREG, R_LOCAL) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048, data(256)))))
    s.append(("rresp-fenced", CFG_NO_WORK, act(A_READ, 0x88) + act(A_SEND, 0x40) +
              act(A_WRITE, 3) + w(stag(R_WRITE), 0, 4) +
              rec(tagged(OP_READ_RESP, stag(R_LOCAL), 2048 + 128, data(16 * 17)))))
    # Terminate from the peer (RFC 5040 section 4.8), RFC and siw bit order
    ddp = tagged(OP_WRITE, 0x00010000, 0)
    s.append(("term-ddp", 0, rec(terminate_fpdu(term(1, 1, 0, 0xC0, 64, ddp)))))
    s.append(("term-siw", 0, rec(terminate_fpdu(term(1, 1, 0, 0xC0, 64, ddp, siw=True)))))
    s.append(("term-rdmap-rreq", 0, rec(terminate_fpdu(
        term(0, 1, 2, 0xE0, 46, rreq(1, 1, 0, 16, 2, 0)[:18], rreq(1, 1, 0, 16, 2, 0)[18:])))))
    s.append(("term-llp", CFG_VICTIM_INITIATOR, rec(terminate_fpdu(term(2, 0, 2)))))
    s.append(("term-short", 0, rec(terminate_fpdu(b"\x10"))))
    s.append(("term-segmented", 0, rec(untagged(OP_TERMINATE, 2, 1, payload=b"\x11\x00",
                                                last=False))))
    s.append(("term-too-long", 0, rec(terminate_fpdu(term(1, 1, 0) + bytes(60)))))
    # opcodes that do not exist, framing the MPA layer refuses
    s.append(("opcode-8", 0, rec(untagged(8, 0, 1, payload=data(4)))))
    s.append(("opcode-15-tagged", 0, rec(tagged(15, stag(R_WRITE), 0, data(4)))))
    s.append(("ulpdu-short", 0, rec(data(10)) + rec(data(30))))
    # local actions between FPDUs
    s.append(("actions", 0, act(A_RECV, 0x21) + act(A_READ, 0x10) + act(A_WRITE, 9) +
              act(A_SEND, 0x35) + act(A_SEND, 0x0E) + send(1, 20) + act(A_LINV, R_LOCAL) +
              send(2, 20) + act(A_CLOSE) + w(stag(R_WRITE), 0, 8)))
    s.append(("close", CFG_VICTIM_INITIATOR, act(A_CLOSE) + w(stag(R_WRITE), 0, 8) +
              rec(rreq(1, PEER, 0, 16, stag(R_READSRC), 0)) + act(A_WRITE, 1)))
    s.append(("local-inv-foreign", 0, act(A_LINV, R_OTHERPD) + act(A_WRITE, 0xFF) +
              w(stag(R_WRITE), 0, 8)))
    s.append(("post-after-error", CFG_VICTIM_INITIATOR, act(A_ERROR) + act(A_WRITE, 0xFF) +
              act(A_READ, 0x11) + act(A_RECV, 2) + w(stag(R_WRITE), 0, 8)))
    s.append(("error-then-write", 0, act(A_ERROR) + w(stag(R_WRITE), 0, 8) + act(A_RECV, 1)))
    s.append(("tcp-close", 0, send(1, 4) + act(A_TCPCLOSE) + w(stag(R_WRITE), 0, 8)))
    # RFC 7306 (config bit 5): atomics into FZ_R_WRITE, Immediate Data,
    # what the victim posts itself, and every refusal
    E = CFG_EXT
    imm = lambda msn, n=8, op=OP_IMM: rec(untagged(op, 0, msn, payload=data(n, msn)))  # noqa: E731
    s.append(("atomic-fetchadd", E, rec(areq(1, AOP_FETCHADD, stag(R_WRITE), 8, 5)) +
              rec(areq(2, AOP_FETCHADD, stag(R_WRITE), 8, 0x0101010101010101, 0x8080808080808080)) +
              rec(areq(3, AOP_CMPSWAP, stag(R_WRITE), 4088, 7, 0xFFFFFFFFFFFFFFFF, 0, 0)) +
              rec(rreq(4, PEER, 0, 16, stag(R_WRITE), 0))))
    s.append(("atomic-crc-lend", E | CFG_CRC | CFG_LEND | CFG_CHUNK(2),
              rec(areq(1, AOP_CMPSWAP, stag(R_WRITE), 16, 1, 0xFF, 0, 0xFF)) +
              w(stag(R_WRITE), 16, 8) + rec(areq(2, AOP_FETCHADD, stag(R_WRITE), 16, 1))))
    s.append(("atomic-from-end", E, rec(areq(1, AOP_FETCHADD, stag(R_WRITE), 8, 1), K_TO_FROM_END) +
              rec(areq(2, AOP_FETCHADD, stag(R_WRITE), 0, 1), K_TO_FROM_END)))
    s.append(("atomic-ird-overflow", E | CFG_SMALL, b"".join(
        rec(areq(m, AOP_FETCHADD, stag(R_WRITE), 8 * m, m), K_NO_DRAIN) for m in range(1, 5))))
    for nm, a in (("no-atomic-right", areq(1, AOP_FETCHADD, stag(R_READSRC), 0, 1)),
                  ("other-pd", areq(1, AOP_FETCHADD, stag(R_OTHERPD), 0, 1)),
                  ("invalidated", areq(1, AOP_CMPSWAP, stag(R_INVAL), 0, 1)),
                  ("misaligned", areq(1, AOP_FETCHADD, stag(R_WRITE), 4, 1)),
                  ("aop-1", areq(1, 1, stag(R_WRITE), 0, 1)),
                  ("wrong-qn", areq(1, AOP_FETCHADD, stag(R_WRITE), 0, 1, qn=0)),
                  ("long", areq(1, AOP_FETCHADD, stag(R_WRITE), 0, 1) + data(8))):
        s.append(("atomic-" + nm, E, rec(a)))
    s.append(("atomic-ext-off", 0, rec(areq(1, AOP_FETCHADD, stag(R_WRITE), 0, 1))))
    s.append(("imm", E, imm(1) + imm(2, op=OP_IMM_SE) + w(stag(R_WRITE), 0, 100) + imm(3)))
    s.append(("imm-bad", E, imm(1, 12)))
    s.append(("imm-no-buffer", E | CFG_NO_WORK, imm(1)))
    s.append(("aresp-unexpected", E, rec(aresp(1, 1, 42))))
    s.append(("ext-posts", E | CFG_NO_WORK, w(stag(R_WRITE), 0, 4) + act(A_ATOMIC, 0) +
              act(A_ATOMIC, 9) + act(A_IMM, 3) + act(A_IMM, 2) + act(A_RECV, 0) +
              rec(aresp(1, 1, 0x1122334455667788)) + rec(aresp(2, 2, 7)) + imm(1)))
    s.append(("ext-posts-off", CFG_NO_WORK, act(A_ATOMIC, 0) + act(A_IMM, 1) + w(stag(R_WRITE), 0, 4)))
    return s


def remap(u):
    """A capture's ULPDU with its STags and TOs moved onto the harness's
    regions, so that the operation can succeed."""
    if len(u) < 14:
        return u
    b = bytearray(u)
    op = b[1] & 0x0F
    if b[0] & 0x80:
        n = len(u) - 14
        region = R_LOCAL if op == OP_READ_RESP else R_WRITE
        to = struct.unpack(">Q", u[6:14])[0] % max(1, 4096 - n)
        if op == OP_READ_RESP:
            to = 2048  # the victim's first Read
        b[2:14] = struct.pack(">IQ", stag(region), to)
    elif op == OP_READ_REQ and len(u) >= 46:
        size = min(struct.unpack(">I", u[30:34])[0], 4096)
        b[30:46] = struct.pack(">IIQ", size, stag(R_READSRC), 0)
    elif op in (OP_SEND_INV, OP_SEND_SE_INV):
        b[2:6] = struct.pack(">I", stag(R_SRC))
    return bytes(b)


def capture_seeds(caps):
    """(name, config, records, ulpdus) for each full-operation direction."""
    out = []
    for cap in caps:
        name = os.path.splitext(os.path.basename(cap))[0]
        for nconn, (ini, rsp) in enumerate(connections(cap)):
            if nconn > 1:
                break
            tag = name if nconn == 0 else "%s-c%d" % (name, nconn)
            qlen, plen = rr_len(ini["data"]), rr_len(rsp["data"])
            req, rep = ini["data"][:qlen], rsp["data"][:plen]
            if (req[16] | rep[16]) & 0x80:
                continue  # markers: the harness runs without them
            crc = CFG_CRC if (req[16] | rep[16]) & 0x40 else 0
            for d, stream, role in (("i2r", ini["data"][qlen:], 0),
                                    ("r2i", rsp["data"][plen:], CFG_VICTIM_INITIATOR)):
                ul = []
                size = 0
                for u in split_fpdus(stream):
                    if size + len(u) + 3 > SEED_MAX:
                        break
                    ul.append(u)
                    size += len(u) + 3
                if not ul:
                    continue
                out.append(("%s-%s" % (tag, d), crc | role, b"".join(rec(u) for u in ul), ul))
                out.append(("%s-%s-mapped" % (tag, d), crc | role | CFG_LEND | CFG_CHUNK(3),
                            b"".join(rec(remap(u)) for u in ul), None))
    return out


def ddp_seeds(hand, caps):
    """Selector + header octets: DDP headers (selector 0) and Terminate headers
    (selector 1) from the hand-made ULPDUs and the captures."""
    seen = set()
    out = []

    def add(name, sel, blob):
        if (sel, blob) in seen:
            return
        seen.add((sel, blob))
        out.append((name, bytes([sel]) + blob))

    def walk(name, records, limit=64):
        i = 1
        start = len(out)
        while i < len(records) and len(out) - start < limit:
            c = records[i]
            if c & 0x80:
                i += 2
                continue
            n = struct.unpack(">H", records[i + 1:i + 3])[0]
            u = records[i + 3:i + 3 + n]
            i += 3 + n
            if len(u) < 14:
                continue
            hl = 14 if u[0] & 0x80 else 18
            add("%s-ddp%d" % (name, i), 0, u[:hl + (28 if (u[1] & 15) == 1 else 0)])
            if not u[0] & 0x80 and (u[1] & 15) == OP_TERMINATE:
                add("%s-term%d" % (name, i), 1, u[18:])

    for name, cfg, records in hand:
        walk(name, bytes([cfg]) + records)
    for name, cfg, records, _ in caps:
        walk(name, bytes([cfg]) + records, 12)
    return out


def write(path, blob):
    with open(path, "wb") as f:
        f.write(blob)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "corpus"))
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args()
    caps = args.captures or sorted(glob.glob(os.path.join(os.environ.get("UIW_CAPTURES", "/nonexistent"), "*.pcap")))
    rx_dir = os.path.join(args.out, "rdmap_rx")
    hdr_dir = os.path.join(args.out, "ddp_hdr")
    os.makedirs(rx_dir, exist_ok=True)
    os.makedirs(hdr_dir, exist_ok=True)
    total = 0
    hand = hand_seeds()
    for name, cfg, records in hand:
        blob = bytes([cfg]) + records
        write(os.path.join(rx_dir, name), blob)
        total += len(blob)
    capseeds = capture_seeds(caps)
    for name, cfg, records, _ in capseeds:
        blob = bytes([cfg]) + records
        write(os.path.join(rx_dir, name), blob)
        total += len(blob)
    for name, blob in ddp_seeds(hand, capseeds):
        write(os.path.join(hdr_dir, name), blob)
        total += len(blob)
    print("make_rdmap_seeds: %d octets of seeds in %s" % (total, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
