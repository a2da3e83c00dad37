#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Make the replay vectors of tests/test_replay.c from real captures.

usage: tests/data/make_replay.py [--out tests/data/replay] [capture.pcap ...]

Default inputs: every pcap in $UIW_CAPTURES (the project's reference
captures, kept outside the repository) and every pcap in
tests/data/captures/ (uiwarp <-> Linux siw traffic copied from the
conformance harness, build-vm/results/<case>/<case>.pcap).

For every TCP connection that starts with an MPA Request/Reply exchange
(RFC 5044 section 7.1) it writes OUT/<name>.{req,rep,i2r,r2i}: the Request,
the Reply and the two full-operation byte streams (i2r: initiator to
responder, r2i: the reverse), reassembled as tests/fuzz/make_seeds.py does
(its code is imported, not changed), and OUT/<name>.expect: what tshark
decoded, one line per FPDU, the i2r FPDUs first, then the r2i ones, each in
stream order.  A line is space-separated key=value pairs, every value in
hexadecimal without "0x"; a key is present only when tshark showed the field:

  d        direction: 0 i2r, 1 r2i            (always)
  len      iwarp_mpa.ulpdulength              (always)
  crc      iwarp_mpa.crc_check, or iwarp_mpa.crc when no CRC is negotiated:
           the four trailer octets read big-endian, as tshark shows them
  crcok    1: tshark says "Good CRC32", 0: bad (only with crc_check)
  t l dv   iwarp_ddp.tagged_flag, last_flag, dv
  stag to  iwarp_ddp.stag, tagged_offset                    (tagged)
  qn msn mo  iwarp_ddp.qn, msn, mo                          (untagged)
  rv op    iwarp_rdma.version, opcode
  inv      iwarp_rdma.inval_stag                  (Send with Invalidate)
  rsvd     iwarp_rdma.reserved: the 32-bit RsvdULP of the other untagged
           messages
  sinkstag sinkto rsz srcstag srcto
           iwarp_rdma.sinkstag, sinkto, rdmardsz, srcstag, srcto (Read Req)
  layer etype ecode hm hd hr
           iwarp_rdma.term_layer, term_etype_*, term_errcode_*,
           term_hdrct_m, hdrct_d, hdrct_r                   (Terminate)

The first line of the file is a comment ("# ...") with the capture, the
connection's TCP endpoints, and the FPDU count per direction.  Then two
lines give the Request and the Reply as tshark decoded them:

  req|rep m=<iwarp_mpa.marker_flag> c=<crc_flag> r=<rej_flag> res=<res>
          rev=<rev> pdlen=<pdlength> pd=<privatedata octets, hex>

(tshark shows the RFC 6581 S bit as part of "res", 0x10, and the IRD/ORD
words as the first four octets of the private data.)  The FPDU lines follow.

tshark runs here, at generation time only; the test reads the files.  The
FPDU count tshark reports per direction must equal what the reassembly
finds, or the connection is left out (with a message).  Long connections
are cut to a prefix of at most --max-stream octets per direction, at an
FPDU boundary, the expect file cut to match.
"""

import argparse
import glob
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fuzz"))
import make_seeds  # noqa: E402  (pcap reading and TCP reassembly)

TSHARK = ["tshark", "-n", "-o", "tcp.try_heuristic_first:TRUE",
          "--disable-heuristic", "rpcrdma_iwarp", "-T", "pdml"]

# (output key, tshark field(s)), in output order
FIELDS = [
    ("len", ["iwarp_mpa.ulpdulength"]),
    ("crc", ["iwarp_mpa.crc_check", "iwarp_mpa.crc"]),
    ("t", ["iwarp_ddp.tagged_flag"]),
    ("l", ["iwarp_ddp.last_flag"]),
    ("dv", ["iwarp_ddp.dv"]),
    ("stag", ["iwarp_ddp.stag"]),
    ("to", ["iwarp_ddp.tagged_offset"]),
    ("qn", ["iwarp_ddp.qn"]),
    ("msn", ["iwarp_ddp.msn"]),
    ("mo", ["iwarp_ddp.mo"]),
    ("rv", ["iwarp_rdma.version"]),
    ("op", ["iwarp_rdma.opcode"]),
    ("inv", ["iwarp_rdma.inval_stag"]),
    ("rsvd", ["iwarp_rdma.reserved"]),
    ("sinkstag", ["iwarp_rdma.sinkstag"]),
    ("sinkto", ["iwarp_rdma.sinkto"]),
    ("rsz", ["iwarp_rdma.rdmardsz"]),
    ("srcstag", ["iwarp_rdma.srcstag"]),
    ("srcto", ["iwarp_rdma.srcto"]),
    ("layer", ["iwarp_rdma.term_layer"]),
    ("etype", ["iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_etype_ddp",
               "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_etype"]),
    ("ecode", ["iwarp_rdma.term_errcode_rdma", "iwarp_rdma.term_errcode_ddp_tagged",
               "iwarp_rdma.term_errcode_ddp_untagged", "iwarp_rdma.term_errcode_llp",
               "iwarp_rdma.term_errcode"]),
    ("hm", ["iwarp_rdma.term_hdrct_m"]),
    ("hd", ["iwarp_rdma.hdrct_d"]),
    ("hr", ["iwarp_rdma.hdrct_r"]),
]


def ip_str(raw):
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


def tshark_fpdus(pcap):
    """{(src, sport, dst, dport): [fields dict per FPDU, in frame order]}"""
    out = subprocess.run(TSHARK + ["-r", pcap], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    root = ET.fromstring(out)
    res, rr = {}, {}
    for pkt in root.iter("packet"):
        addr = {}
        cur = None
        for proto in pkt.findall("proto"):
            name = proto.get("name")
            fields = {}
            for f in proto.iter("field"):
                fields.setdefault(f.get("name"), f)
            if name in ("ip", "ipv6"):
                pre = "ip" if name == "ip" else "ipv6"
                addr["src"] = fields[pre + ".src"].get("show")
                addr["dst"] = fields[pre + ".dst"].get("show")
            elif name == "tcp":
                addr["sport"] = int(fields["tcp.srcport"].get("show"))
                addr["dport"] = int(fields["tcp.dstport"].get("show"))
            elif name == "iwarp_mpa":
                if "iwarp_mpa.req" in fields or "iwarp_mpa.rep" in fields:
                    key = (addr["src"], addr["sport"], addr["dst"], addr["dport"])
                    rr.setdefault(key, fields)
                if "iwarp_mpa.fpdu" not in fields:
                    cur = None
                    continue
                if "iwarp_mpa.markers" in fields:
                    raise SystemExit("%s: markers are not handled" % pcap)
                key = (addr["src"], addr["sport"], addr["dst"], addr["dport"])
                cur = dict(fields)
                res.setdefault(key, []).append(cur)
            elif name == "iwarp_ddp_rdmap" and cur is not None:
                for k, v in fields.items():
                    cur.setdefault(k, v)
                cur = None
    return res, rr


def rr_line(kind, f):
    """The Request or Reply as tshark decoded it."""
    vals = [kind]
    for key, n in (("m", "marker_flag"), ("c", "crc_flag"), ("r", "rej_flag"),
                   ("res", "res"), ("rev", "rev"), ("pdlen", "pdlength")):
        vals.append("%s=%x" % (key, int(f["iwarp_mpa." + n].get("show"), 0)))
    pd = f.get("iwarp_mpa.privatedata")
    vals.append("pd=%s" % (pd.get("value") if pd is not None else ""))
    return " ".join(vals)


def line(d, f):
    parts = ["d=%d" % d]
    for key, names in FIELDS:
        for n in names:
            if n in f:
                if f[n].get("show").count(":"):  # FT_BYTES
                    v = int(f[n].get("value"), 16)
                else:
                    v = int(f[n].get("show"), 0)
                parts.append("%s=%x" % (key, v))
                if n == "iwarp_mpa.crc_check":
                    sn = f[n].get("showname")
                    parts.append("crcok=%d" % (1 if "Good" in sn else 0))
                break
    return " ".join(parts)


def fpdu_lens(stream):
    out, off = [], 0
    while off + 2 <= len(stream):
        n = 2 + int.from_bytes(stream[off:off + 2], "big")
        n += (4 - n % 4) % 4 + 4
        if off + n > len(stream):
            break
        out.append(n)
        off += n
    return out, off


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "replay"))
    ap.add_argument("--max-stream", type=int, default=1024 * 1024)
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args()
    caps = args.captures or (sorted(glob.glob(os.path.join(os.environ.get("UIW_CAPTURES", "/nonexistent"), "*.pcap"))) +
                             sorted(glob.glob(os.path.join(HERE, "captures", "*.pcap"))))
    os.makedirs(args.out, exist_ok=True)
    names = []
    for cap in caps:
        base = os.path.splitext(os.path.basename(cap))[0]
        flows = make_seeds.tcp_flows(cap)
        ts, tsrr = tshark_fpdus(cap)
        nconn = 0
        conns = sorted(((k, fl) for k, fl in flows.items()
                        if fl["data"].startswith(make_seeds.KEY_REQ)),
                       key=lambda kv: kv[1]["starts"][:1])
        for key, ini in conns:
            src, sp, dst, dp = key
            rsp = flows.get((dst, dp, src, sp))
            if rsp is None or not rsp["data"].startswith(make_seeds.KEY_REP):
                continue
            tag = base if nconn == 0 else "%s-c%d" % (base, nconn)
            nconn += 1
            qlen = make_seeds.rr_len(ini["data"])
            plen = make_seeds.rr_len(rsp["data"])
            req, rep = ini["data"][:qlen], rsp["data"][:plen]
            if rep[16] & 0x20:
                print("%s: rejected, no full operation: left out" % tag, file=sys.stderr)
                continue
            lines, streams, counts, ok = [], [], [], True
            for d, fl, hs, k in ((0, ini, qlen, (ip_str(src), sp, ip_str(dst), dp)),
                                 (1, rsp, plen, (ip_str(dst), dp, ip_str(src), sp))):
                stream = fl["data"][hs:]
                lens, whole = fpdu_lens(stream)
                tsf = ts.get(k, [])
                if whole != len(stream) or len(tsf) != len(lens):
                    print("%s d=%d: reassembly %d FPDUs (%d/%d octets), tshark %d: left out"
                          % (tag, d, len(lens), whole, len(stream), len(tsf)),
                          file=sys.stderr)
                    ok = False
                    break
                # cut at an FPDU boundary
                n, size = 0, 0
                while n < len(lens) and size + lens[n] <= args.max_stream:
                    size += lens[n]
                    n += 1
                for f in tsf[:n]:
                    lines.append(line(d, f))
                streams.append(stream[:size])
                counts.append((n, len(lens)))
            if not ok:
                continue
            hdr = "# %s %s:%d -> %s:%d i2r %d/%d r2i %d/%d FPDUs (kept/total)" % (
                os.path.basename(cap), ip_str(src), sp, ip_str(dst), dp,
                counts[0][0], counts[0][1], counts[1][0], counts[1][1])
            kq = (ip_str(src), sp, ip_str(dst), dp)
            kp = (ip_str(dst), dp, ip_str(src), sp)
            if kq not in tsrr or kp not in tsrr:
                print("%s: tshark did not decode the Request/Reply: left out" % tag,
                      file=sys.stderr)
                continue
            lines[:0] = [rr_line("req", tsrr[kq]), rr_line("rep", tsrr[kp])]
            write(os.path.join(args.out, tag + ".req"), req)
            write(os.path.join(args.out, tag + ".rep"), rep)
            write(os.path.join(args.out, tag + ".i2r"), streams[0])
            write(os.path.join(args.out, tag + ".r2i"), streams[1])
            write(os.path.join(args.out, tag + ".expect"),
                  ("\n".join([hdr] + lines) + "\n").encode())
            names.append(tag)
            print("%s: i2r %d/%d r2i %d/%d FPDUs" % (tag, counts[0][0], counts[0][1],
                                                    counts[1][0], counts[1][1]),
                  file=sys.stderr)
    print("make_replay: %d connections in %s" % (len(names), args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
