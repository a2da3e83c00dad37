#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Extract RPC-over-RDMA version 1 test vectors and fuzz seeds from a capture.

usage: tests/data/extract_rpcrdma.py [--data DIR] [--corpus DIR] [--check]
                                     [capture.pcap]

Reads a classic pcap (default: linux-nfs-over-siw-v3-v42.pcap in the
directory $UIW_CAPTURES, the project's reference captures kept outside the
repository: the Linux NFS client and
server over siw, an NFSv3 and an NFSv4.2 mount), reassembles every TCP
connection that starts with an MPA Request/Reply exchange, walks the FPDUs of
both directions (no markers: siw sends none; ULPDU_Length, ULPDU, PAD, CRC),
and reassembles every untagged RDMA Send (RDMAP opcodes 3-6, DDP queue 0) by
MSN and MO.  Every such message is one RPC-over-RDMA message (RFC 8166 §3.2).

Writes:
  DATA/rpcrdma_capture.bin  the MPA Request and Reply frames of each
                            connection (their private data holds the RFC 8797
                            message after the RFC 6581 IRD/ORD words) and
                            every Send message, in capture order.  Format:
                            "UIWRPCR1", then records of
                              u8 kind (1 Send, 2 MPA Request, 3 MPA Reply),
                              u8 connection, u8 direction (0 initiator to
                              responder, 1 back), u8 RDMAP opcode,
                              u32 MSN, u32 invalidated STag (Send with
                              Invalidate), u32 length, the octets, zero pad
                              to a multiple of 4 (big-endian integers)
  DATA/rpcrdma_vectors.h    what each record means, decoded here by an
                            independent Python reading of the RFC 8166 XDR
                            (and RFC 8797 for the private data), for
                            tests/test_rpcrdma_hdr.c to compare with the C
                            codec; also which record answers which call
  CORPUS/rpcrdma_hdr/*      fuzz seeds: one selector octet (0: generous caps,
                            see tests/fuzz/fuzz_rpcrdma_hdr.c) + one header
                            of each shape found, cut 8 octets after the
                            header, and hand-made headers of the kinds the
                            capture lacks (RDMA_ERROR, Long Call, ...)
  CORPUS/rpcrdma_cm/*       fuzz seeds: the private data of each MPA frame
                            (after and with the IRD/ORD words) and variants

--check only decodes and prints a summary.  Python 3 standard library only.
"""

import argparse
import os
import struct
import sys

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
CM_MAGIC = 0xF6AB0E18
PROC_NAMES = ["RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE", "RDMA_ERROR"]
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CAP = os.path.join(os.environ.get("UIW_CAPTURES", "."), "linux-nfs-over-siw-v3-v42.pcap")

KIND_SEND, KIND_MPA_REQ, KIND_MPA_REP = 1, 2, 3


# ---------------------------------------------------------------- pcap, TCP

def pcap_records(path):
    with open(path, "rb") as f:
        d = f.read()
    magic = struct.unpack("<I", d[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        raise ValueError("%s: not a classic pcap file" % path)
    link = struct.unpack(e + "I", d[20:24])[0]
    if link != 1:
        raise ValueError("%s: link type %d, expected Ethernet" % (path, link))
    off, idx = 24, 0
    while off + 16 <= len(d):
        incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        off += 16
        yield idx, d[off:off + incl]
        off += incl
        idx += 1


def tcp_segments(path):
    """(record, (src, sport, dst, dport), seq, flags, payload) of IPv4 TCP."""
    for idx, p in pcap_records(path):
        if len(p) < 14:
            continue
        et = struct.unpack(">H", p[12:14])[0]
        ip = p[14:]
        if et == 0x8100:
            et = struct.unpack(">H", p[16:18])[0]
            ip = p[18:]
        if et != 0x0800 or len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack(">H", ip[2:4])[0]
        t = ip[ihl:tot]
        sp, dp, seq = struct.unpack(">HHI", t[:8])
        doff = (t[12] >> 4) * 4
        yield idx, (ip[12:16], sp, ip[16:20], dp), seq, t[13], t[doff:]


def tcp_streams(path):
    """{flow key: reassembled in-order octets from the SYN on}."""
    flows = {}
    order = []
    for idx, key, seq, flags, pl in tcp_segments(path):
        fl = flows.get(key)
        if fl is None:
            fl = flows[key] = {"isn": None, "segs": [], "first": idx}
            order.append(key)
        if flags & 0x02:
            fl["isn"] = (seq + 1) & 0xFFFFFFFF
        if pl:
            fl["segs"].append((seq, pl))
    out = {}
    for key in order:
        fl = flows[key]
        if fl["isn"] is None:
            continue
        data = bytearray()
        for seq, pl in sorted(fl["segs"], key=lambda s: (s[0] - fl["isn"]) & 0xFFFFFFFF):
            rel = (seq - fl["isn"]) & 0xFFFFFFFF
            if rel > len(data):
                raise ValueError("hole in TCP stream %r" % (key,))
            data += pl[len(data) - rel:]
        out[key] = bytes(data)
    return order, out


# ---------------------------------------------------------------- MPA, DDP, RDMAP

def mpa_frame(stream, key):
    if not stream.startswith(key) or len(stream) < 20:
        return None
    return stream[:20 + struct.unpack(">H", stream[18:20])[0]]


def fpdus(stream):
    """ULPDUs of a marker-free FPDU stream (PAD and CRC skipped)."""
    off = 0
    while off + 2 <= len(stream):
        n = struct.unpack(">H", stream[off:off + 2])[0]
        if off + 2 + n > len(stream):
            break
        yield stream[off + 2:off + 2 + n]
        total = 2 + n
        off += total + (4 - total % 4) % 4 + 4


def sends(stream):
    """Reassembled untagged Sends: (opcode, msn, invalidate stag, message)."""
    partial = {}
    for u in fpdus(stream):
        tagged, last = u[0] & 0x80, u[0] & 0x40
        op = u[1] & 0x0F
        if tagged or op not in (3, 4, 5, 6):
            continue
        inv, qn, msn, mo = struct.unpack(">IIII", u[2:18])
        if qn != 0:
            raise ValueError("Send on queue %d" % qn)
        m = partial.setdefault(msn, bytearray())
        if mo != len(m):
            raise ValueError("MSN %d: MO %d after %d octets" % (msn, mo, len(m)))
        m += u[18:]
        if last:
            yield op, msn, inv if op in (4, 6) else 0, bytes(partial.pop(msn))


# ---------------------------------------------------------------- RFC 8166 XDR

class XdrError(Exception):
    pass


def decode_hdr(m):
    """An independent reading of RFC 8166 §4.1.2: a dict, or XdrError."""
    def word(o):
        if o + 4 > len(m):
            raise XdrError("truncated at %d" % o)
        return struct.unpack(">I", m[o:o + 4])[0]

    def seg(o):
        if o + 16 > len(m):
            raise XdrError("truncated segment at %d" % o)
        return struct.unpack(">IIQ", m[o:o + 16]), o + 16

    def chunk(o):
        n = word(o)
        o += 4
        segs = []
        for _ in range(n):
            s, o = seg(o)
            segs.append(s)
        return segs, o

    if len(m) < 28:
        raise XdrError("short")
    h = {"xid": word(0), "vers": word(4), "credits": word(8), "proc": word(12),
         "read": [], "write": [], "reply": None}
    if h["vers"] != 1 or h["proc"] not in (0, 1, 4):
        raise XdrError("version or procedure")
    o = 16
    if h["proc"] == 4:
        h["err"] = word(16)
        h["hdr_len"] = 20 if h["err"] == 2 else 28
        if h["err"] == 1:
            h["vers_low"], h["vers_high"] = word(20), word(24)
        return h
    while word(o):
        pos = word(o + 4)
        s, o = seg(o + 8)
        h["read"].append((pos,) + s)
    o += 4
    while word(o):
        segs, o = chunk(o + 4)
        h["write"].append(segs)
    o += 4
    if word(o):
        h["reply"], o = chunk(o + 4)
    else:
        o += 4
    h["hdr_len"] = o
    return h


def encode_hdr(h):
    """The XDR of a header dict (for the hand-made seeds)."""
    out = struct.pack(">IIII", h["xid"], h.get("vers", 1), h.get("credits", 0), h["proc"])
    if h["proc"] == 4:
        out += struct.pack(">I", h["err"])
        if h["err"] == 1:
            out += struct.pack(">II", h["vers_low"], h["vers_high"])
        return out
    if h["proc"] in (2, 3):
        return out + h.get("body", b"")
    for pos, hd, ln, off in h.get("read", []):
        out += struct.pack(">IIIIQ", 1, pos, hd, ln, off)
    out += struct.pack(">I", 0)
    for segs in h.get("write", []):
        out += struct.pack(">II", 1, len(segs))
        for s in segs:
            out += struct.pack(">IIQ", *s)
    out += struct.pack(">I", 0)
    if h.get("reply") is None:
        out += struct.pack(">I", 0)
    else:
        out += struct.pack(">II", 1, len(h["reply"]))
        for s in h["reply"]:
            out += struct.pack(">IIQ", *s)
    return out


def decode_cm(pd):
    """RFC 8797 private data: (offset, version, R, send size, recv size) or None."""
    for i in range(len(pd) - 3):
        if struct.unpack(">I", pd[i:i + 4])[0] == CM_MAGIC:
            if len(pd) - i < 8 or pd[i + 4] != 1:
                return None
            return (i, pd[i + 4], pd[i + 5] & 1, (pd[i + 6] + 1) * 1024,
                    (pd[i + 7] + 1) * 1024)
    return None


# ---------------------------------------------------------------- extraction

def extract(path):
    """Records: dicts with kind, conn, dir, op, msn, inv, data (+ decoded)."""
    order, streams = tcp_streams(path)
    recs = []
    conn = 0
    for key in order:
        s = streams.get(key)
        if s is None or not s.startswith(KEY_REQ):
            continue
        src, sp, dst, dp = key
        back = streams.get((dst, dp, src, sp))
        if back is None or not back.startswith(KEY_REP):
            continue
        req, rep = mpa_frame(s, KEY_REQ), mpa_frame(back, KEY_REP)
        recs.append({"kind": KIND_MPA_REQ, "conn": conn, "dir": 0, "op": 0, "msn": 0,
                     "inv": 0, "data": req})
        recs.append({"kind": KIND_MPA_REP, "conn": conn, "dir": 1, "op": 0, "msn": 0,
                     "inv": 0, "data": rep})
        # interleave the two directions by MSN so that a reply follows its call
        msgs = []
        for d, stream, frame in ((0, s, req), (1, back, rep)):
            for op, msn, inv, m in sends(stream[len(frame):]):
                msgs.append({"kind": KIND_SEND, "conn": conn, "dir": d, "op": op,
                             "msn": msn, "inv": inv, "data": m})
        msgs.sort(key=lambda r: (r["msn"], r["dir"]))
        recs.extend(msgs)
        conn += 1
    for r in recs:
        if r["kind"] == KIND_SEND:
            r["hdr"] = decode_hdr(r["data"])
        else:
            frame = r["data"]
            flags, rev, pdlen = frame[16], frame[17], struct.unpack(">H", frame[18:20])[0]
            pd = frame[20:20 + pdlen]
            ulp = pd[4:] if rev == 2 and flags & 0x10 else pd
            r["ulp_pd"] = ulp
            r["cm"] = decode_cm(ulp)
    # pair each reply with its call (same connection and XID, other direction)
    calls = {}
    for i, r in enumerate(recs):
        r["peer"] = -1
        if r["kind"] != KIND_SEND:
            continue
        k = (r["conn"], r["hdr"]["xid"])
        if r["dir"] == 0:
            calls[k] = i
        elif k in calls:
            r["peer"] = calls[k]
            recs[calls[k]]["peer"] = i
    return recs


def is_call(r):
    h = r["hdr"]
    if h["proc"] != 0:
        return r["dir"] == 0
    return struct.unpack(">I", r["data"][h["hdr_len"] + 4:h["hdr_len"] + 8])[0] == 0


# ---------------------------------------------------------------- output

def write_bin(path, recs):
    out = bytearray(b"UIWRPCR1")
    for r in recs:
        d = r["data"]
        out += struct.pack(">BBBBIII", r["kind"], r["conn"], r["dir"], r["op"], r["msn"],
                           r["inv"], len(d))
        out += d + bytes((4 - len(d) % 4) % 4)
    with open(path, "wb") as f:
        f.write(out)


def write_header(path, recs, capname):
    segs, rsegs, chunks, lines = [], [], [], []
    for r in recs:
        if r["kind"] != KIND_SEND:
            cm = r["cm"]
            lines.append("\t{.kind = %d, .conn = %d, .dir = %d, .len = %d, .cm_off = %d,\n"
                         "\t .cm_r = %d, .cm_send = %d, .cm_recv = %d, .peer = -1},"
                         % (r["kind"], r["conn"], r["dir"], len(r["data"]),
                            cm[0] if cm else -1, cm[2] if cm else 0, cm[3] if cm else 1024,
                            cm[4] if cm else 1024))
            continue
        h = r["hdr"]
        rfirst = len(rsegs)
        for rs in h["read"]:
            rsegs.append(rs)
        wfirst = len(chunks)
        for ch in h["write"]:
            chunks.append((len(segs), len(ch)))
            segs.extend(ch)
        pfirst = len(segs)
        if h["reply"] is not None:
            segs.extend(h["reply"])
        lines.append(
            "\t{.kind = 1, .conn = %d, .dir = %d, .op = %d, .msn = %d, .inv = 0x%08x,\n"
            "\t .len = %d, .hdr_len = %d, .xid = 0x%08x, .credits = %d, .proc = %d,\n"
            "\t .call = %d, .nread = %d, .read_first = %d, .nwrite = %d, .write_first = %d,\n"
            "\t .has_reply = %d, .reply_nsegs = %d, .reply_first = %d, .peer = %d},"
            % (r["conn"], r["dir"], r["op"], r["msn"], r["inv"], len(r["data"]),
               h["hdr_len"], h["xid"], h["credits"], h["proc"], 1 if is_call(r) else 0,
               len(h["read"]), rfirst, len(h["write"]), wfirst,
               1 if h["reply"] is not None else 0,
               len(h["reply"]) if h["reply"] is not None else 0, pfirst, r["peer"]))
    o = []
    o.append("/* SPDX-License-Identifier: MIT */")
    o.append("/*")
    o.append(" * Generated by tests/data/extract_rpcrdma.py from")
    o.append(" * %s: do not edit." % capname)
    o.append(" * The meaning of each record of rpcrdma_capture.bin, decoded by the")
    o.append(" * script's own reading of RFC 8166 §4.1.2 and RFC 8797 §4.")
    o.append(" */")
    o.append("#ifndef UIW_RPCRDMA_VECTORS_H")
    o.append("#define UIW_RPCRDMA_VECTORS_H")
    o.append("")
    o.append("/* clang-format off */")
    o.append("#include <stdint.h>")
    o.append("")
    o.append("struct rv_rec {")
    o.append("\tint kind; /* 1 Send, 2 MPA Request, 3 MPA Reply */")
    o.append("\tint conn, dir, op; /* connection, 0 initiator->responder, RDMAP opcode */")
    o.append("\tuint32_t msn, inv, len, hdr_len, xid, credits, proc;")
    o.append("\tint call; /* an RPC call (else a reply) */")
    o.append("\tuint32_t nread, read_first, nwrite, write_first;")
    o.append("\tint has_reply;")
    o.append("\tuint32_t reply_nsegs, reply_first;")
    o.append("\tint peer; /* index of the matching call or reply, -1 if none */")
    o.append("\tint cm_off, cm_r; /* MPA frames: RFC 8797 data offset (-1: none), R */")
    o.append("\tuint32_t cm_send, cm_recv;")
    o.append("};")
    o.append("")
    o.append("struct rv_rseg {")
    o.append("\tuint32_t position, handle, length;")
    o.append("\tuint64_t offset;")
    o.append("};")
    o.append("")
    o.append("struct rv_seg {")
    o.append("\tuint32_t handle, length;")
    o.append("\tuint64_t offset;")
    o.append("};")
    o.append("")
    o.append("struct rv_chunk {")
    o.append("\tuint32_t first, nsegs; /* in rv_segs */")
    o.append("};")
    o.append("")
    o.append("#define RV_NRECS %d" % len(recs))
    o.append("static const struct rv_rec rv_recs[RV_NRECS] = {")
    o.extend(lines)
    o.append("};")
    o.append("")
    o.append("#define RV_NRSEGS %d" % len(rsegs))
    o.append("static const struct rv_rseg rv_rsegs[RV_NRSEGS + 1] = {")
    for p, hd, ln, off in rsegs:
        o.append("\t{%d, 0x%08x, %d, 0x%016xull}," % (p, hd, ln, off))
    o.append("};")
    o.append("")
    o.append("#define RV_NCHUNKS %d" % len(chunks))
    o.append("static const struct rv_chunk rv_chunks[RV_NCHUNKS + 1] = {")
    for first, n in chunks:
        o.append("\t{%d, %d}," % (first, n))
    o.append("};")
    o.append("")
    o.append("#define RV_NSEGS %d" % len(segs))
    o.append("static const struct rv_seg rv_segs[RV_NSEGS + 1] = {")
    for hd, ln, off in segs:
        o.append("\t{0x%08x, %d, 0x%016xull}," % (hd, ln, off))
    o.append("};")
    o.append("/* clang-format on */")
    o.append("")
    o.append("#endif /* UIW_RPCRDMA_VECTORS_H */")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def shape(r):
    h = r["hdr"]
    return (r["dir"], h["proc"], len(h["read"]), tuple(len(c) for c in h["write"]),
            None if h["reply"] is None else len(h["reply"]))


def handmade():
    """Headers the capture lacks, as (name, octets) seeds."""
    seg = (0x11223344, 4096, 0x00007F0000001000)
    xid = 0x0BADCAFE
    payload = struct.pack(">II", xid, 0)  # RPC XID, CALL
    out = [
        ("err-vers", encode_hdr({"xid": xid, "proc": 4, "err": 1, "vers_low": 1,
                                 "vers_high": 1})),
        ("err-chunk", encode_hdr({"xid": xid, "proc": 4, "err": 2})),
        ("err-chunk-padded", encode_hdr({"xid": xid, "proc": 4, "err": 2}) + bytes(8)),
        ("msgp", encode_hdr({"xid": xid, "proc": 2, "body": bytes(20)})),
        ("done", encode_hdr({"xid": xid, "proc": 3}) + bytes(12)),
        ("vers2", encode_hdr({"xid": xid, "vers": 2, "proc": 0}) + payload),
        ("long-call", encode_hdr({"xid": xid, "proc": 1, "read": [(0,) + seg, (0,) + seg],
                                  "reply": [seg]})),
        ("two-read-chunks", encode_hdr({"xid": xid, "proc": 0,
                                        "read": [(112,) + seg, (112,) + seg, (260,) + seg]})
         + payload),
        ("write-list-3", encode_hdr({"xid": xid, "proc": 0,
                                     "write": [[seg, seg, seg], [], [seg, seg]]}) + payload),
        ("all-lists", encode_hdr({"xid": xid, "proc": 0, "read": [(8,) + seg],
                                  "write": [[seg]], "reply": [seg, seg]}) + payload),
    ]
    return out


def encode_seeds():
    """Header descriptions for the fuzz target's encode mode (selector bit 7),
    laid out as encode_mode() in tests/fuzz/fuzz_rpcrdma_hdr.c reads them."""
    def seg(h, ln, off):
        return struct.pack(">IIQ", h, ln, off)
    head = struct.pack(">IIH", 0x0BADCAFE, 32, 1024)  # xid, credits, capacity
    s1, s2 = seg(0x11223344, 4096, 0x7F0000001000), seg(0x55667788, 512, 0x7F0000002000)
    return [
        ("msg", bytes([0]) + head + bytes([2]) + struct.pack(">H", 28) + s1 +
         struct.pack(">H", 28) + s2 + bytes([1, 2]) + s1 + s2 + bytes([1, 1]) + s1),
        ("nomsg-long-call", bytes([1]) + head + bytes([1]) + struct.pack(">H", 0) + s1 +
         bytes([0, 0])),
        ("nomsg-long-reply", bytes([1]) + head + bytes([0, 1, 0, 1, 1]) + s2),
        ("err-chunk-padded", bytes([0x80 | 4]) + head + bytes([2, 1, 1])),
        ("err-vers", bytes([4]) + head + bytes([1, 1, 1])),
    ]


def write_corpus(corpus, recs):
    hdr_dir = os.path.join(corpus, "rpcrdma_hdr")
    cm_dir = os.path.join(corpus, "rpcrdma_cm")
    for d in (hdr_dir, cm_dir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):  # these directories are this script's alone
            os.unlink(os.path.join(d, f))
    seen = {}
    for i, r in enumerate(recs):
        if r["kind"] == KIND_SEND:
            k = shape(r)
            seen[k] = seen.get(k, 0) + 1
            if seen[k] > 2:
                continue
            cut = r["data"][:r["hdr"]["hdr_len"] + 8]
            name = "c%d-%s-msn%d-%s" % (r["conn"], "call" if r["dir"] == 0 else "reply",
                                         r["msn"], PROC_NAMES[r["hdr"]["proc"]].lower())
            with open(os.path.join(hdr_dir, name), "wb") as f:
                f.write(b"\x00" + cut)
        elif r["conn"] == 0:
            tag = "req" if r["kind"] == KIND_MPA_REQ else "rep"
            frame = r["data"]
            pd = frame[20:]
            for name, data in (("linux-%s" % tag, r["ulp_pd"]),
                               ("linux-%s-irdord" % tag, pd)):
                with open(os.path.join(cm_dir, name), "wb") as f:
                    f.write(data)
    for name, data in handmade():
        with open(os.path.join(hdr_dir, "made-" + name), "wb") as f:
            f.write(b"\x00" + data)
    for name, data in encode_seeds():
        with open(os.path.join(hdr_dir, "enc-" + name), "wb") as f:
            f.write(b"\x80" + data)
    cm_made = [
        ("made-unaligned", b"\x01\x02\x03" + struct.pack(">IBBBB", CM_MAGIC, 1, 0xFF, 0, 255)),
        ("made-version2", struct.pack(">IBBBB", CM_MAGIC, 2, 1, 3, 3) + bytes(8)),
        ("made-truncated", struct.pack(">IBB", CM_MAGIC, 1, 1)),
        ("made-other", b"not RPC-over-RDMA private data"),
    ]
    for name, data in cm_made:
        with open(os.path.join(cm_dir, name), "wb") as f:
            f.write(data)


def summary(recs):
    from collections import Counter
    c = Counter()
    for r in recs:
        if r["kind"] != KIND_SEND:
            c["mpa " + ("request" if r["kind"] == KIND_MPA_REQ else "reply")] += 1
            continue
        h = r["hdr"]
        side = "call" if is_call(r) else "reply"
        c["%s %s" % (side, PROC_NAMES[h["proc"]])] += 1
        if h["read"]:
            c["%s with Read list" % side] += 1
        if h["write"]:
            c["%s with Write list" % side] += 1
        if h["reply"] is not None:
            c["%s with Reply chunk" % side] += 1
        if r["op"] in (4, 6):
            c["Send with Invalidate"] += 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=HERE)
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "fuzz", "corpus"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("capture", nargs="?", default=DEFAULT_CAP)
    args = ap.parse_args()
    recs = extract(args.capture)
    for k, v in sorted(summary(recs).items()):
        print("extract_rpcrdma: %-28s %d" % (k, v), file=sys.stderr)
    if args.check:
        return 0
    write_bin(os.path.join(args.data, "rpcrdma_capture.bin"), recs)
    write_header(os.path.join(args.data, "rpcrdma_vectors.h"), recs,
                 os.path.basename(args.capture))
    write_corpus(os.path.normpath(args.corpus), recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
