#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Extract fuzz seeds (and test vectors) for the MPA layer from real captures.

usage: tests/fuzz/make_seeds.py [--out tests/fuzz/corpus] [--test-data DIR]
                                [capture.pcap ...]

Reads classic pcap files (default: $UIW_CAPTURES/*.pcap, the project's
reference captures kept outside the repository), reassembles
every TCP connection that starts with an MPA Request/Reply exchange (RFC 5044
section 7.1) and writes:

  OUT/mpa_rr/<capture>-pkt<N>         one selector byte + the Request or Reply
                                      frame that starts in pcap record N
  OUT/mpa_deframer/<capture>-<dir>-pkt<N>
                                      two configuration bytes + the full-
                                      operation byte stream of one direction
                                      (i2r: initiator to responder, r2i: the
                                      reverse), from pcap record N on
  OUT/mpa_deframer/<capture>-hs-<dir>-pkt<N>
                                      the same with the handshake frame in
                                      front (the deframer's handshake mode)
  OUT/mpa_deframer/<capture>-i2r-markers[-crc]-pkt<N>
                                      the first ULPDUs of the i2r stream re-
                                      framed with markers (siw has none)

and, with --test-data, DIR/<capture>.{req,rep,i2r,r2i}: the raw frames and
streams that tests/test_mpa_rr.c replays.  Streams are cut at an FPDU
boundary so that the corpus stays small.

The selector and configuration bytes are those documented at the top of
tests/fuzz/fuzz_mpa_rr.c and tests/fuzz/fuzz_mpa_deframer.c.  Python 3
standard library only.
"""

import argparse
import glob
import os
import struct
import sys

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"

# fuzz_mpa_deframer.c, configuration byte 0
CFG_ROLE_INITIATOR = 0x01
CFG_CRC = 0x02
CFG_MARKERS = 0x04
CFG_HDR_MIN_14 = 0x08  # rx_hdr_min index 1: 14 octets (DDP tagged header)
CFG_P2P = 0x20
CFG_HANDSHAKE = 0x80
# configuration byte 1: chunk pattern (low nibble), receive path (bits 4-5)
CHUNK_WHOLE = 0x00
CHUNK_RANDOM_LEND = 0x37  # pseudo-random chunks, random path per chunk
CHUNK_WHOLE_LEND = 0x10  # everything at once, through mpa_rx_lend/ack
CHUNK_BIG_RANDOM = 0x3F  # pseudo-random chunks up to 16 KiB, random path

SEED_STREAM_MAX = 16 * 1024  # per seed, cut at an FPDU boundary
HS_STREAM_MAX = 2 * 1024
DATA_STREAM_MAX = 64 * 1024


def pcap_records(path):
    """Yield (index, link_type, frame bytes) for each record of a classic pcap."""
    with open(path, "rb") as f:
        d = f.read()
    if len(d) < 24:
        return
    magic = struct.unpack("<I", d[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        raise ValueError("%s: not a classic pcap file" % path)
    lt = struct.unpack(e + "I", d[20:24])[0]
    off, idx = 24, 0
    while off + 16 <= len(d):
        _, _, incl, _ = struct.unpack(e + "IIII", d[off:off + 16])
        off += 16
        yield idx, lt, d[off:off + incl]
        off += incl
        idx += 1


def ip_payload(lt, p):
    """Return (src, dst, tcp segment) or None."""
    if lt == 1:  # Ethernet
        if len(p) < 14:
            return None
        et = struct.unpack(">H", p[12:14])[0]
        p = p[14:]
        if et == 0x8100 and len(p) >= 4:
            et = struct.unpack(">H", p[2:4])[0]
            p = p[4:]
    elif lt == 113:  # Linux SLL
        p = p[16:]
    elif lt == 276:  # Linux SLL2
        p = p[20:]
    elif lt == 0:  # BSD loopback
        p = p[4:]
    elif lt not in (101, 228, 229):  # raw IP
        return None
    if not p:
        return None
    v = p[0] >> 4
    if v == 4:
        ihl = (p[0] & 15) * 4
        tot = struct.unpack(">H", p[2:4])[0]
        if p[9] != 6:
            return None
        return p[12:16], p[16:20], p[ihl:tot]
    if v == 6 and len(p) >= 40:
        plen = struct.unpack(">H", p[4:6])[0]
        if p[6] != 6:  # no extension headers expected on loopback
            return None
        return p[8:24], p[24:40], p[40:40 + plen]
    return None


def tcp_flows(path):
    """Reassemble the TCP flows of a capture: {(src,sport,dst,dport): flow}."""
    flows = {}
    for idx, lt, p in pcap_records(path):
        r = ip_payload(lt, p)
        if r is None:
            continue
        src, dst, t = r
        if len(t) < 20:
            continue
        sp, dp, seq = struct.unpack(">HHI", t[:8])
        doff = (t[12] >> 4) * 4
        flags = t[13]
        key = (src, sp, dst, dp)
        fl = flows.setdefault(key, {"isn": None, "segs": []})
        if flags & 0x02:  # SYN: data starts at seq + 1
            fl["isn"] = (seq + 1) & 0xFFFFFFFF
        pl = t[doff:]
        if pl:
            fl["segs"].append((seq, idx, pl))
    for fl in flows.values():
        segs = fl["segs"]
        base = fl["isn"] if fl["isn"] is not None else (segs[0][0] if segs else 0)
        data = bytearray()
        starts = []  # (stream offset, pcap index) of each new segment
        for seq, idx, pl in sorted(segs, key=lambda s: (s[0] - base) & 0xFFFFFFFF):
            rel = (seq - base) & 0xFFFFFFFF
            if rel > len(data):
                break  # a hole: keep the in-order prefix only
            new = pl[len(data) - rel:]
            if new:
                starts.append((len(data), idx))
                data += new
        fl["data"] = bytes(data)
        fl["starts"] = starts
    return flows


def pkt_at(flow, off):
    """pcap record index of the segment holding stream offset @off."""
    best = None
    for o, idx in flow["starts"]:
        if o <= off:
            best = idx
    return best if best is not None else 0


def rr_len(data):
    if len(data) < 20:
        return None
    return 20 + struct.unpack(">H", data[18:20])[0]


def cut_fpdus(stream, limit):
    """Longest prefix of whole FPDUs (no markers) not above @limit octets."""
    off = 0
    while off + 2 <= len(stream):
        ulpdu = struct.unpack(">H", stream[off:off + 2])[0]
        n = 2 + ulpdu
        n += (4 - n % 4) % 4 + 4
        if off + n > len(stream) or off + n > limit:
            break
        off += n
    return stream[:off]


def crc32c(data, crc=0xFFFFFFFF):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc


def split_fpdus(stream):
    """The ULPDUs of a marker-free stream."""
    out, off = [], 0
    while off + 2 <= len(stream):
        ulpdu = struct.unpack(">H", stream[off:off + 2])[0]
        out.append(stream[off + 2:off + 2 + ulpdu])
        n = 2 + ulpdu
        off += n + (4 - n % 4) % 4 + 4
    return out


def reframe(ulpdus, crc):
    """The same ULPDUs framed with markers (RFC 5044 section 4.3: one before
    the first FPDU and every 512 octets; FPDUPTR back to ULPDU_Length, 0
    between FPDUs) and CRCs over markers and PAD (section 4.4)."""
    out = bytearray()

    def put(data, start):
        for b in data:
            if len(out) % 512 == 0:
                ptr = 0 if start is None else len(out) - start
                out.extend(struct.pack(">HH", 0, ptr & 0xFFFF))
            out.append(b)

    for u in ulpdus:
        fpdu_start = len(out)
        body = struct.pack(">H", len(u)) + u
        body += bytes((4 - len(body) % 4) % 4)
        # a marker due right here falls between FPDUs: pointer 0, and
        # it belongs to (and is covered by the CRC of) this FPDU
        if len(out) % 512 == 0:
            out.extend(struct.pack(">HH", 0, 0))
        start = len(out)
        put(body, start)
        # a marker right after PAD is in this FPDU's CRC (section 4.4)
        if len(out) % 512 == 0:
            out.extend(struct.pack(">HH", 0, (len(out) - start) & 0xFFFF))
        if crc:
            c = crc32c(bytes(out[fpdu_start:])) ^ 0xFFFFFFFF
            trailer = struct.pack("<I", c)
        else:
            trailer = bytes(4)
        put(trailer, start)
    return bytes(out)


def connections(path):
    flows = tcp_flows(path)
    for key, fl in sorted(flows.items(), key=lambda kv: kv[1]["starts"][:1]):
        if not fl["data"].startswith(KEY_REQ):
            continue
        src, sp, dst, dp = key
        rev = flows.get((dst, dp, src, sp))
        if rev is None or not rev["data"].startswith(KEY_REP):
            continue
        yield fl, rev


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "corpus"))
    ap.add_argument("--test-data", default=None)
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args()
    caps = args.captures or sorted(glob.glob(os.path.join(os.environ.get("UIW_CAPTURES", "/nonexistent"), "*.pcap")))
    rr_dir = os.path.join(args.out, "mpa_rr")
    df_dir = os.path.join(args.out, "mpa_deframer")
    # these two directories are this script's alone: start them afresh
    for d in (rr_dir, df_dir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
    if args.test_data:
        os.makedirs(args.test_data, exist_ok=True)
    total = 0
    for cap in caps:
        name = os.path.splitext(os.path.basename(cap))[0]
        for nconn, (ini, rsp) in enumerate(connections(cap)):
            tag = name if nconn == 0 else "%s-c%d" % (name, nconn)
            qlen, plen = rr_len(ini["data"]), rr_len(rsp["data"])
            req, rep = ini["data"][:qlen], rsp["data"][:plen]
            i2r, r2i = ini["data"][qlen:], rsp["data"][plen:]
            crc = bool((req[16] | rep[16]) & 0x40)
            enhanced = req[17] == 2 and req[16] & 0x10 and len(req) >= 24
            p2p = bool(enhanced and req[20] & 0x80)
            # fuzz_mpa_rr: selector bit 0 = want_reply, bits 1-3 = pd_max index 0 (512)
            for sel, frame, fl in ((0x00, req, ini), (0x01, rep, rsp)):
                out = bytes([sel]) + frame
                write(os.path.join(rr_dir, "%s-pkt%d" % (tag, pkt_at(fl, 0))), out)
                total += len(out)
            b0 = (CFG_CRC if crc else 0) | CFG_HDR_MIN_14 | (CFG_P2P if p2p else 0)
            for d, stream, fl, off, role in (("i2r", i2r, ini, qlen, 0),
                                             ("r2i", r2i, rsp, plen, CFG_ROLE_INITIATOR)):
                if not stream:
                    continue
                body = cut_fpdus(stream, SEED_STREAM_MAX)
                pkt = pkt_at(fl, off)
                out = bytes([b0 | role, CHUNK_WHOLE]) + body
                write(os.path.join(df_dir, "%s-%s-pkt%d" % (tag, d, pkt)), out)
                total += len(out)
                frame = req if role == 0 else rep
                out = bytes([b0 | role | CFG_HANDSHAKE, CHUNK_RANDOM_LEND]) + frame + \
                    cut_fpdus(stream, HS_STREAM_MAX)
                write(os.path.join(df_dir, "%s-hs-%s-pkt%d" % (tag, d, pkt_at(fl, 0))), out)
                total += len(out)
            # the same ULPDUs with markers (and CRCs): siw sends no markers,
            # so these streams are re-framed, up to one large FPDU
            ul, size = [], 0
            for u in split_fpdus(i2r):
                ul.append(u)
                size += len(u)
                if size > 12 * 1024 or len(ul) >= 24:
                    break
            for c in (0, 1):
                b0m = CFG_HDR_MIN_14 | (CFG_P2P if p2p else 0) | CFG_MARKERS | \
                    (CFG_CRC if c else 0)
                out = bytes([b0m, CHUNK_BIG_RANDOM if c else CHUNK_WHOLE_LEND]) + reframe(ul, c)
                write(os.path.join(df_dir, "%s-i2r-markers%s-pkt%d" %
                                   (tag, "-crc" if c else "", pkt_at(ini, qlen))), out)
                total += len(out)
            if args.test_data:
                for ext, blob in (("req", req), ("rep", rep),
                                  ("i2r", cut_fpdus(i2r, DATA_STREAM_MAX)),
                                  ("r2i", cut_fpdus(r2i, DATA_STREAM_MAX))):
                    write(os.path.join(args.test_data, "%s.%s" % (tag, ext)), blob)
    print("make_seeds: %d octets of seeds in %s" % (total, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
