#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""midop_peer.py - the application acts while a peer operation is half done.

  midop_peer.py VICTIM [--only NAME[,NAME...]] [--list] [-v]

A raw iWARP peer over real TCP sockets (MPA revision 1 with CRC; the FPDU,
marker and CRC32C helpers are those of fpdu_hostile.py, imported) against
VICTIM (tests/progs/midop_victim.c, a uiwarp server driven line by line over
its stdin).  One victim process and one connection per case, so that a
crash ends one case only.  The peer sends part of an operation, tells the
victim to act (uiw_modify_qp to ERR, uiw_dereg_mr, then fill the memory
with the "after release" pattern 0xEE, mprotect it PROT_NONE or munmap it),
waits for the victim's answer, then sends the rest or starts reading.
What is checked: released memory is never read or written afterwards
(no 0xEE octet reaches the peer; a region filled with 0xEE after its
release still holds only 0xEE at the end; no crash or sanitizer report on
a PROT_NONE or unmapped region), every work request completes exactly once,
the QP is in error, and the connection ends (DISCONNECTED) within a bound.

Cases (inbound ones in three modes: thread = progress-thread context,
polled = UIW_CTX_POLLED, markers = progress thread with MPA markers):

  read_flush_CUT_ACT_MODE   the victim's 256 KiB RDMA Read into S; the peer
        sends Read Response FPDUs of 16 KiB up to CUT (half: after 8 of 16
        FPDUs; mid: in the middle of the 9th; last: in the middle of the
        16th); the victim moves its QP to ERR, takes the Read's flush, fills
        S with 0xEE (ACT prot: and mprotects it PROT_NONE); the rest follows.
  send_flush_CUT_ACT_MODE   the same with a 64 KiB Send (4 FPDUs) into four
        posted 64 KiB receives (every receive flushed exactly once).
  write_release_ACT_MODE    half an inbound RDMA Write FPDU to W (61440
        octets, 8 KiB sent; ACT staged: 12 KiB, 4 KiB sent); the victim moves
        the QP to ERR, deregisters W, then unmaps it (unmap), fills it with
        0xEE (fill), or fills and mprotects it (staged); the rest follows.
  read_src_release_ACT      the peer's 32 MiB Read Request from R with the
        peer's socket not read (SO_RCVBUF 4 KiB); the victim deregisters R
        and fills it with 0xEE (ACT unmap/prot: then unmaps it or makes it
        PROT_NONE); the peer reads until the end: no 0xEE octet may arrive.
  write_src_release_ACT     the victim's 8 MiB RDMA Write from L, peer not
        reading; QP to ERR, the Write's flush, dereg L, fill 0xEE (unmap:
        then munmap); the peer reads all: no 0xEE octet may arrive.
  stuck_term / stuck_term_modify   the peer stops reading, the victim posts
        200 64 KiB Writes that fill the transmit path, the peer sends one
        invalid FPDU (an untagged Send on QN 3): within 5 s the QP must be in
        error, every WR completed exactly once, DISCONNECTED with a cause
        (status or TERMINATE flags); _modify: uiw_modify_qp(ERR) 0.3 s after
        the bad FPDU must take effect at once.

  term_destroy / term_destroy_stalled   as stuck_term, and 0.3 s after the
        bad FPDU (its TERMINATE queued behind the Writes) the application
        destroys the connection's id: the TERMINATE that is due must still
        leave, then a FIN (not a reset): the peer starts reading 0.5 s
        into uiw_destroy_id() and must see the TERMINATE then EOF;
        _stalled: the peer never reads, and uiw_destroy_id() must return
        within DESTROY_BOUND s all the same.  _smallwin: the peer's
        SO_RCVBUF is 4 KiB (small FPDUs, many in the transmit path).
  term_destroy_polled   a polled victim, frozen with its transmit path
        full, gets the invalid FPDU, takes one engine turn (the TERMINATE
        is due, not yet sent) and destroys the id at once: the TERMINATE
        still reaches the peer, then EOF.
  destroy_unread   a polled victim holds 1 MiB of the peer's Writes unread
        in its socket when the application destroys the id: the peer sees
        a FIN, not a reset.

Prints one line per case (PASS/FAIL name: detail) and "N passed, M failed";
exit 0 when all passed.  Every wait is bounded (longer with UIW_SAN set);
each victim is killed and reaped however the case ends.
"""
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import queue
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpdu_hostile as fh  # noqa: E402  (CRC32C, FPDU builders, Peer)

SLOW = 4 if os.environ.get("UIW_SAN") else 1
# case 4: the bound (s) from the invalid FPDU to the QP in error, every WR
# completed and DISCONNECTED (the library's own timers are not slowed down
# by sanitizers as much as its CPU work); and how long a peer that neither
# reads nor closes is held at most before the victim must have ended it
BOUND4 = 8 if SLOW > 1 else 5
HOLD4 = 15 if SLOW > 1 else 12
EE = 0xEE  # what released memory holds: "after release"
PERIOD = 65521
_BASE = [(k * 13 + (k >> 8) * 7) & 0xFF for k in range(PERIOD)]
_PAT = {}
VERBOSE = False


def pat2(seed):
    """midop_victim's region pattern for @seed, twice (for slicing)."""
    if seed not in _PAT:
        p = bytes(((b + seed) & 0x7F) for b in _BASE)
        _PAT[seed] = p + p
    return _PAT[seed]


def expect(seed, off, n):
    p = pat2(seed)
    out = bytearray()
    while n:
        k = off % PERIOD
        take = min(n, PERIOD)
        out += p[k:k + take]
        off += take
        n -= take
    return bytes(out)


class Fail(Exception):
    """The case cannot go on (a check that the rest depends on failed)."""


class VictimGone(Exception):
    pass


# ---- the victim process ------------------------------------------------------
class Victim:
    def __init__(self, path, args):
        wrap = os.environ.get("UIW_VICTIM_WRAP", "").split()
        self.p = subprocess.Popen(wrap + [path] + args, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.q = queue.Queue()
        self.log = []
        self.err = []
        self.t_out = threading.Thread(target=self._out, daemon=True)
        self.t_err = threading.Thread(target=self._err, daemon=True)
        self.t_out.start()
        self.t_err.start()
        line = self._answer(20 * SLOW, "start")
        if not line.startswith("listening port="):
            raise Fail("victim did not start: %r" % line)
        self.port = int(line.split()[1].split("=")[1])

    def _out(self):
        for line in self.p.stdout:
            line = line.rstrip("\n")
            self.log.append(line)
            if line.startswith(("ok ", "err ", "listening")):
                self.q.put(line)
        self.q.put(None)

    def _err(self):
        for line in self.p.stderr:
            self.err.append(line.rstrip("\n"))

    def death(self):
        """How the victim ended, with a sanitizer excerpt if any."""
        try:
            rc = self.p.wait(3 * SLOW)
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None:
            what = "stopped answering"
        elif rc < 0:
            try:
                what = "killed by %s" % signal.Signals(-rc).name
            except ValueError:
                what = "killed by signal %d" % -rc
        else:
            what = "exited with %d" % rc
        ex = self.san_excerpt()
        return what + (" [%s]" % ex if ex else "")

    def san_excerpt(self):
        self.t_err.join(1)
        lines = self.err
        head = [ln for ln in lines if "ERROR: AddressSanitizer" in ln or "runtime error" in ln
                or "LeakSanitizer" in ln]
        if not head:
            return ""
        i = lines.index(head[0])
        frames = []
        for ln in lines[i + 1:]:
            s = ln.strip()
            if s.startswith("#") and " in " in s:
                frames.append(s.split(" in ", 1)[1].split(" ")[0])
                if len(frames) == 4:
                    break
        h = head[0].split("ERROR: ")[-1].strip()
        h = h.split(" (pc ")[0]
        return h + (" at " + " < ".join(frames) if frames else "")

    def _answer(self, timeout, what):
        try:
            ln = self.q.get(timeout=timeout)
        except queue.Empty:
            raise VictimGone("victim did not answer %r within %.0f s (hung)" % (what, timeout))
        if ln is None:
            raise VictimGone("victim died during %r: %s" % (what, self.death()))
        return ln

    def cmd(self, line, timeout=None):
        timeout = timeout or 5 * SLOW
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            raise VictimGone("victim died before %r: %s" % (line, self.death()))
        ln = self._answer(timeout, line)
        if ln.startswith("err "):
            raise Fail("victim refused %r: %s" % (line, ln))
        w = ln.split()
        return dict(kv.split("=", 1) for kv in w[2:] if "=" in kv)

    def region(self, name, size, acc):
        r = self.cmd("region %s %d %s" % (name, size, acc))
        return int(r["stag"], 16), int(r["addr"], 16), int(r["seed"])

    def finish(self, errs):
        """quit; the exit status and stderr are checked."""
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            self.p.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            rc = self.p.wait(5 * SLOW)
        except subprocess.TimeoutExpired:
            errs.append("victim hung in its teardown (uiw_destroy_id/destroy_qp/close_context)")
            return
        ex = self.san_excerpt()
        if rc != 0 or ex:
            errs.append("victim at exit: %s" % self.death())

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()
            except (OSError, ValueError):
                pass


# ---- the connection ----------------------------------------------------------
class Conn(fh.Peer):
    """fpdu_hostile's Peer, connected with socket options set before connect
    (a small SO_RCVBUF), and with a receive side that counts CRC errors
    instead of stopping at them."""

    def __init__(self, port, rcvbuf=0):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(5 * SLOW)
        s.connect(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s = s
        # MPA revision 1 Request asking for CRC (C), no markers from the victim
        s.sendall(fh.REQ_KEY + struct.pack(">BBH", 0x40, 1, 0))
        rep = self.recv_exact(20)
        if rep[:16] != fh.REP_KEY:
            raise Fail("no MPA Reply: %r" % rep)
        flags, rev, pdlen = struct.unpack(">BBH", rep[16:20])
        self.reply_pd = self.recv_exact(pdlen)
        if flags & 0x20:
            raise Fail("the victim rejected the connection")
        self.markers = bool(flags & 0x80)  # the victim wants markers from us
        self.crc = True
        self.txoff = 0
        self.rxbuf = bytearray()
        self.nbig = 0
        self.closed = False
        self.eof = self.reset = self.timed_out = False
        self.crc_bad = self.crc_checked = self.nfpdu = 0

    def _fill(self, n, deadline):
        while len(self.rxbuf) < n:
            if self.eof or self.reset:
                return False
            left = deadline - time.time()
            if left <= 0:
                self.timed_out = True
                return False
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                continue
            try:
                d = self.s.recv(262144)
            except (ConnectionResetError, OSError):
                self.reset = True
                return False
            if not d:
                self.eof = True
                return False
            self.rxbuf += d
        return True

    def next_fpdu(self, deadline):
        """The next ULPDU from the victim; None at EOF, reset or @deadline."""
        if not self._fill(2, deadline):
            return None
        ln = struct.unpack(">H", self.rxbuf[:2])[0]
        tot = 2 + ln
        tot += (4 - tot % 4) % 4
        if not self._fill(tot + 4, deadline):
            return None
        self.nfpdu += 1
        # pure-Python CRC32C: small FPDUs always, large ones 1 in 32
        if ln < 1024 or self.nfpdu % 32 == 1:
            self.crc_checked += 1
            got = struct.unpack("<I", self.rxbuf[tot:tot + 4])[0]
            if fh.crc32c(self.rxbuf[:tot]) != got:
                self.crc_bad += 1
        u = bytes(self.rxbuf[2:2 + ln])
        del self.rxbuf[:tot + 4]
        return u

    def send_rest(self, data):
        """Send @data; '' or why it did not all go."""
        try:
            self.s.sendall(data)
        except socket.timeout:
            return "the victim did not take the rest (%d octets) within %d s" % (len(data),
                                                                                5 * SLOW)
        except OSError as e:
            return "sending the rest: %s" % e
        return ""

    def to_eof(self, secs):
        """Read (and drop) until the victim's EOF; a short description."""
        dl = time.time() + secs
        n = 0
        terms = []
        while True:
            u = self.next_fpdu(dl)
            if u is None:
                break
            n += 1
            t, op, f, hl = fh.decode(u)
            if op == fh.OP_TERM and not t:
                terms.append(term_of(u, hl))
        end = "EOF" if self.eof else "reset" if self.reset else "no EOF within %.0f s" % secs
        return end, n, terms


def victim_queues(c):
    """(send queue, receive queue) of the victim's socket in octets, from
    /proc/net/tcp, or None if that cannot be read."""
    mine = "%04X" % c.s.getsockname()[1]
    theirs = "%04X" % c.s.getpeername()[1]
    try:
        with open("/proc/net/tcp") as f:
            for ln in f:
                w = ln.split()
                if len(w) > 4 and w[1].endswith(":" + theirs) and w[2].endswith(":" + mine):
                    tx, rx = w[4].split(":")
                    return int(tx, 16), int(rx, 16)
    except OSError:
        return None
    return None


def victim_rxq(c):
    q = victim_queues(c)
    return None if q is None else q[1]


def wait_stalled(c):
    """The peer does not read: wait until the victim's send queue is not
    empty and has stopped growing for 100 ms (its transmit path is full)."""
    dl = time.time() + 3 * SLOW
    last, same = None, 0
    while time.time() < dl and same < 5:
        q = victim_queues(c)
        if q is None:
            time.sleep(0.3 * SLOW)
            return
        same = same + 1 if q[0] and q[0] == last else 0
        last = q[0]
        time.sleep(0.02)
    time.sleep(0.05)


def let_victim_take(c):
    """Before the victim acts: its engine must have read (and placed) what
    was sent so far.  Wait until its socket is empty, then a little more for
    the turn that handles the read."""
    dl = time.time() + 3 * SLOW
    while time.time() < dl:
        q = victim_rxq(c)
        if q is None:
            time.sleep(0.15 * SLOW)
            return
        if q == 0:
            break
        time.sleep(0.005)
    time.sleep(0.05 * SLOW)


def term_of(u, hl):
    b = u[hl:hl + 2]
    return "%d/%d/%d" % (b[0] >> 4, b[0] & 0xF, b[1]) if len(b) == 2 else "?"


# ---- checks shared by the cases ----------------------------------------------
def wait_disc(v, e, ms, what="after the peer closed"):
    d = v.cmd("waitdisc %d" % ms, timeout=ms / 1000 + 5 * SLOW)
    if d["got"] != "1":
        e.append("no DISCONNECTED within %d ms %s" % (ms, what))
    return d


def end_checks(v, e, regions=(), wrs=None, want_st="5"):
    """After the peer closed: DISCONNECTED, released regions untouched, each
    WR of @wrs completed once with @want_st, nothing duplicated or unknown."""
    wait_disc(v, e, 3000 * SLOW)
    for name in regions:
        r = v.cmd("check %s 0xee" % name)
        if r["bad"] != "0":
            e.append("%s octets of %s written after its release (first at +%s)"
                     % (r["bad"], name, r["first"]))
    for wid in wrs or ():
        r = v.cmd("wcs %d" % wid)
        if r["n"] != "1" or r["st"] != want_st:
            e.append("WR %d completed %s times (statuses %s), want once with %s"
                     % (wid, r["n"], r["st"], want_st))
    rep = v.cmd("report")
    if rep["qp"] != "6":
        e.append("QP state %s at the end, want 6 (ERR)" % rep["qp"])
    if rep["dup"] != "0":
        e.append("%s WRs completed more than once" % rep["dup"])
    if rep["unknown"] != "0":
        e.append("%s completions for WRs never posted" % rep["unknown"])
    if rep["missing"] != "0":
        e.append("%s WRs never completed" % rep["missing"])
    if rep["overflow"] != "0":
        e.append("CQ overflow")
    return rep


def flushed_once(v, e, wr_id, what):
    """After uiw_modify_qp(ERR): WR @wr_id completes exactly once, flushed (5)."""
    w = v.cmd("waitwc %d %d" % (wr_id, 2000 * SLOW))
    if w["n"] != "1" or w["st"] != "5":
        e.append("the %s completed %s times (statuses %s) after uiw_modify_qp(ERR), "
                 "want once, flushed (5)" % (what, w["n"], w["st"]))


def modify_err(v, e):
    r = v.cmd("err")
    if r["rc"] != "0" or r["state"] != "6":
        e.append("uiw_modify_qp(ERR) rc %s, QP state %s right after (want 6)"
                 % (r["rc"], r["state"]))
    return r


def first_fpdu(c):
    # MPA revision 1: the initiator's FPDU comes first (a zero-length Write,
    # which places nothing and is accepted before any STag check)
    c.send(fh.tagged(fh.OP_WRITE, 0, 0))


def cut_at(frames, cut):
    """Octets to send before the victim acts: all FPDUs before the cut, plus
    half of the cut FPDU for mid/last."""
    n = len(frames)
    if cut == "half":
        return sum(len(f) for f in frames[:n // 2])
    if cut == "mid":
        return sum(len(f) for f in frames[:n // 2]) + len(frames[n // 2]) // 2
    return sum(len(f) for f in frames[:n - 1]) + len(frames[-1]) // 2


def rest_and_close(c, rest, e, info):
    why = c.send_rest(rest)
    if why:
        info.append(why)
    end, n, terms = c.to_eof(3 * SLOW)
    if end != "EOF" and end != "reset":
        e.append("the victim's side did not end: %s" % end)
    info.append("peer saw %s after %d FPDUs%s" % (end, n, " TERMINATE " + ",".join(terms)
                                                  if terms else ""))
    c.close()


# ---- 1a: RDMA Read response half in, QP to ERR ---------------------------------
SEG = 16384


def c_read_flush(v, e, info, cut, act):
    sst, sva, _ = v.region("S", 262144, "l")
    c = Conn(v.port)
    first_fpdu(c)
    rid = int(v.cmd("read S 262144 0x5a5a0001 0x100000")["id"])
    u = c.next_fpdu(time.time() + 5 * SLOW)
    if u is None:
        raise Fail("no Read Request from the victim")
    t, op, f, hl = fh.decode(u)
    if t or op != fh.OP_RREQ:
        raise Fail("first FPDU from the victim is not a Read Request: %s" % u[:18].hex())
    sink_stag, sink_to, size, src_stag, src_to = struct.unpack(">IQIIQ", u[hl:hl + 28])
    if (sink_stag, sink_to, size) != (sst, sva, 262144):
        raise Fail("Read Request sink %08x:%x size %d, want %08x:%x 262144"
                   % (sink_stag, sink_to, size, sst, sva))
    data = bytes((j * 7 + 3) & 0x7F for j in range(SEG))
    n = size // SEG
    frames = [c.frame(fh.tagged(fh.OP_RRESP, sink_stag, sink_to + k * SEG, data,
                                last=k == n - 1)) for k in range(n)]
    stream = b"".join(frames)
    k = cut_at(frames, cut)
    c.send_raw(stream[:k])
    let_victim_take(c)
    modify_err(v, e)
    flushed_once(v, e, rid, "Read")
    v.cmd("fill S 0xee")
    if act == "prot":
        v.cmd("prot S none")
    rest_and_close(c, stream[k:], e, info)
    end_checks(v, e, ["S"], [rid])


# ---- 1b: Send half in, QP to ERR -------------------------------------------------
def c_send_flush(v, e, info, cut, act):
    v.region("B", 4 * 65536, "l")
    first = int(v.cmd("recv B 4 65536")["first"])
    ids = list(range(first, first + 4))
    c = Conn(v.port)
    first_fpdu(c)
    n = 4
    frames = [c.frame(fh.untagged(fh.OP_SEND, 0, 1, k * SEG, fh.sp(SEG), last=k == n - 1))
              for k in range(n)]
    stream = b"".join(frames)
    k = cut_at(frames, cut)
    c.send_raw(stream[:k])
    let_victim_take(c)
    modify_err(v, e)
    w = v.cmd("waitall %d" % (2000 * SLOW))
    if w["missing"] != "0":
        e.append("%s receives not flushed %s ms after uiw_modify_qp(ERR)"
                 % (w["missing"], w["ms"]))
    for wid in ids:
        r = v.cmd("wcs %d" % wid)
        if r["n"] != "1" or r["st"] != "5":
            e.append("receive %d: %s completions (%s) right after the flush, want one (5)"
                     % (wid, r["n"], r["st"]))
    v.cmd("fill B 0xee")
    if act == "prot":
        v.cmd("prot B none")
    rest_and_close(c, stream[k:], e, info)
    end_checks(v, e, ["B"], ids)


# ---- 3a: inbound Write half in, QP to ERR, dereg, release --------------------------
def c_write_release(v, e, info, act):
    wst, wva, _ = v.region("W", 65536, "w")
    c = Conn(v.port)
    first_fpdu(c)
    plen, sent = (12288, 4096) if act == "staged" else (61440, 8192)
    f = c.frame(fh.tagged(fh.OP_WRITE, wst, wva, bytes((j * 5 + 1) & 0x7F for j in range(plen))))
    k = 2 + 14 + sent + (4 * (sent // 508 + 1) if c.markers else 0)  # inside the payload
    c.send_raw(f[:k])
    let_victim_take(c)
    modify_err(v, e)
    d = v.cmd("dereg W")
    if d["rc"] != "0":
        e.append("uiw_dereg_mr rc %s" % d["rc"])
    if act == "unmap":
        v.cmd("unmap W")
    else:
        v.cmd("fill W 0xee")
        if act == "staged":
            v.cmd("prot W none")
    rest_and_close(c, f[k:], e, info)
    end_checks(v, e, [] if act == "unmap" else ["W"])


# ---- 2: the peer's Read of R, R released meanwhile ---------------------------------
def read_stream(c, secs, seed, base, kind, total):
    """Read FPDUs until the end; count octets of the after-release pattern
    and octets that are not the region's original content.  Once all @total
    octets came, the end is waited for 1 s more only."""
    dl = time.time() + secs
    st = dict(octets=0, ee=0, badfpdu=0, first_ee=None, terms=[], other=0)
    while True:
        if st["octets"] >= total:
            dl = min(dl, time.time() + 1)
        u = c.next_fpdu(dl)
        if u is None:
            break
        t, op, f, hl = fh.decode(u)
        if t and op == kind:
            d = u[hl:]
            off = f["to"] - base
            ee = d.count(EE)
            if ee:
                st["ee"] += ee
                if st["first_ee"] is None:
                    st["first_ee"] = off + d.index(EE)
            if d != expect(seed, off, len(d)):
                st["badfpdu"] += 1
            st["octets"] += len(d)
        elif op == fh.OP_TERM and not t:
            st["terms"].append(term_of(u, hl))
        else:
            st["other"] += 1
    st["end"] = ("EOF" if c.eof else "reset" if c.reset else
                 "no end within 1 s of the last octet" if st["octets"] >= total else
                 "no end within %.0f s" % secs)
    st["complete"] = st["octets"] >= total
    return st


def judge_stream(st, e, info, c):
    if st["ee"]:
        e.append("%d octets of 0xEE (written into the region after its release) reached the "
                 "peer, the first at offset %d" % (st["ee"], st["first_ee"]))
    if st["badfpdu"] > (1 if st["ee"] else 0) and not st["ee"]:
        e.append("%d FPDUs with data that is not the region's content" % st["badfpdu"])
    if st["end"] not in ("EOF", "reset") and not (st["complete"] and not st["ee"]):
        # (all of it arrived unchanged: the operation was allowed to finish)
        e.append("the stream did not end: %s" % st["end"])
    info.append("%.1f MiB arrived, then %s%s; %d of %d sampled CRCs bad"
                % (st["octets"] / 1048576.0, st["end"],
                   " after TERMINATE " + ",".join(st["terms"]) if st["terms"] else "",
                   c.crc_bad, c.crc_checked))


def c_read_src_release(v, e, info, act):
    size = 32 << 20
    rst, rva, seed = v.region("R", size, "r")
    c = Conn(v.port, rcvbuf=4096)
    first_fpdu(c)
    c.send(fh.read_req(1, 0x77, 0, size, rst, rva))
    wait_stalled(c)  # the victim's transmit path fills up
    d = v.cmd("dereg R", timeout=10 * SLOW)
    info.append("dereg returned in %s ms" % d["ms"])
    if d["rc"] != "0":
        e.append("uiw_dereg_mr rc %s" % d["rc"])
    v.cmd("fill R 0xee")
    if act == "unmap":
        v.cmd("unmap R")
    elif act == "prot":
        v.cmd("prot R none")
    st = read_stream(c, 20 * SLOW, seed, 0, fh.OP_RRESP, size)
    judge_stream(st, e, info, c)
    c.close()
    wait_disc(v, e, 3000 * SLOW)
    rep = v.cmd("report")
    if rep["unknown"] != "0" or rep["dup"] != "0":
        e.append("completions: %s unknown, %s duplicated" % (rep["unknown"], rep["dup"]))


# ---- 3b: the victim's Write from L, L released after the flush ----------------------
def c_write_src_release(v, e, info, act):
    size = 8 << 20
    _, _, seed = v.region("L", size, "l")
    c = Conn(v.port, rcvbuf=4096)
    first_fpdu(c)
    wid = int(v.cmd("write L %d 0x99 0 1" % size)["first"])
    wait_stalled(c)
    modify_err(v, e)
    flushed_once(v, e, wid, "Write")
    d = v.cmd("dereg L")
    if d["rc"] != "0":
        e.append("uiw_dereg_mr rc %s" % d["rc"])
    v.cmd("fill L 0xee")
    if act == "unmap":
        v.cmd("unmap L")
    st = read_stream(c, 4 * (2 if SLOW > 1 else 1), seed, 0, fh.OP_WRITE, size)
    judge_stream(st, e, info, c)
    c.close()
    end_checks(v, e, [], [wid])


# ---- 4: transmit path full, then an invalid FPDU -------------------------------------
def c_stuck_term(v, e, info, modify, rcvbuf=0):
    v.region("L", 1 << 20, "l")
    v.region("B", 4 * 4096, "l")
    v.cmd("recv B 4 4096")
    # default buffers: the victim's MSS stays 65483, its FPDUs ~64 KiB, and
    # its transmit ring (8 of them) all handed to the send in flight; with a
    # 4 KiB SO_RCVBUF (_smallwin) TCP halves the MSS to 2048 (half the
    # peer's window) and the ring holds 128 small FPDUs
    c = Conn(v.port, rcvbuf=rcvbuf)
    first_fpdu(c)
    v.cmd("write L 65536 0x99 0 200")
    wait_stalled(c)  # the Writes fill the victim's transmit path
    bound = BOUND4 * 1000
    c.send(fh.untagged(fh.OP_SEND, 3, 1, 0, b"x" * 16))  # DDP: invalid QN (1/2/1)
    t0 = time.time()

    def left(total_ms):
        return max(0, total_ms - (time.time() - t0) * 1000)

    if modify:
        time.sleep(0.3)
        r = v.cmd("err")
        if r["state"] != "6":
            e.append("uiw_modify_qp(ERR) %.1f s after the bad FPDU: QP state %s right after, "
                     "want 6 (ERR)" % (time.time() - t0, r["state"]))
    w = v.cmd("waitall %d" % left(bound), timeout=bound / 1000 + 5 * SLOW)
    el = (time.time() - t0) * 1000
    if w["missing"] != "0":
        e.append("%s of 204 WRs not completed %.0f ms after the bad FPDU" % (w["missing"], el))
    q = v.cmd("query")
    if q["state"] != "6":
        e.append("QP state %s %.0f ms after the bad FPDU, want 6 (ERR)" % (q["state"], el))
    d = v.cmd("waitdisc %d" % left(bound), timeout=bound / 1000 + 5 * SLOW)
    if d["got"] != "1" and not modify:
        # the peer still does not read nor close: the victim must end the
        # connection by itself, and flush every WR when it does
        d = v.cmd("waitdisc %d" % left(HOLD4 * 1000), timeout=HOLD4 + 5 * SLOW)
        el = (time.time() - t0) * 1000
        if d["got"] == "1":
            e.append("DISCONNECTED only %.0f ms after the bad FPDU" % el)
        else:
            e.append("no DISCONNECTED %.0f ms after the bad FPDU (peer neither reading nor "
                     "closing)" % el)
        w2 = v.cmd("waitall 500")
        if w2["missing"] != "0":
            e.append("%s WRs still not completed %.0f ms after the bad FPDU%s"
                     % (w2["missing"], (time.time() - t0) * 1000,
                        ", after DISCONNECTED" if d["got"] == "1" else ""))
    el = (time.time() - t0) * 1000
    if d["got"] != "1":
        if modify:
            e.append("no DISCONNECTED %.0f ms after the bad FPDU (peer neither reading nor "
                     "closing)" % el)
    elif not modify and d["status"] == "0" and d["term"] == "none":
        e.append("DISCONNECTED without a cause (status 0, no TERMINATE flags)")
    else:
        info.append("DISCONNECTED status %s term %s" % (d["status"], d["term"]))
    end, n, terms = c.to_eof(3 * SLOW)
    info.append("peer then read %d FPDUs, %s%s" % (n, end, ", TERMINATE " + ",".join(terms)
                                                  if terms else ", no TERMINATE"))
    c.close()
    v.cmd("waitall %d" % (1000 * SLOW), timeout=10 * SLOW)
    rep = v.cmd("report")
    info.append("at the end QP state %s, completions (status:count) %s" % (rep["qp"],
                                                                          rep["hist"]))
    if rep["dup"] != "0" or rep["unknown"] != "0":
        e.append("completions: %s duplicated, %s unknown" % (rep["dup"], rep["unknown"]))
    if rep["missing"] != "0":
        e.append("%s WRs never completed (also after the peer read and closed)"
                 % rep["missing"])


# ---- 5: the application destroys the id while a TERMINATE is due --------------------
# how long uiw_destroy_id() may wait for a TERMINATE that a peer does not read
DESTROY_BOUND = 3 * SLOW


def c_term_destroy(v, e, info, stalled, rcvbuf=0):
    v.region("L", 1 << 20, "l")
    v.region("B", 4 * 4096, "l")
    v.cmd("recv B 4 4096")
    c = Conn(v.port, rcvbuf=rcvbuf)
    first_fpdu(c)
    v.cmd("write L 65536 0x99 0 200")
    wait_stalled(c)
    c.send(fh.untagged(fh.OP_SEND, 3, 1, 0, b"x" * 16))  # DDP: invalid QN (1/2/1)
    time.sleep(0.3)  # the victim has read it: its TERMINATE waits behind the Writes
    q = v.cmd("query")
    if q["state"] != "6":
        e.append("QP state %s 0.3 s after the bad FPDU, want 6 (ERR)" % q["state"])
    res = {}

    def destroy():
        try:
            res["d"] = v.cmd("destroy", timeout=DESTROY_BOUND + 10 * SLOW)
        except Exception as x:  # reported below
            res["x"] = x

    th = threading.Thread(target=destroy)
    t0 = time.time()
    th.start()
    if not stalled:
        time.sleep(0.5)
        end, n, terms = c.to_eof(3 * SLOW)
        info.append("peer read %d FPDUs, %s%s" % (n, end, ", TERMINATE " + ",".join(terms)
                                                  if terms else ", no TERMINATE"))
        if not terms:
            e.append("the TERMINATE due when the application destroyed the id never left")
        elif terms[-1] != "1/2/1":
            e.append("TERMINATE %s, want 1/2/1 (DDP, untagged, invalid QN)" % terms[-1])
        if end != "EOF":
            e.append("the stream ended by %s after the TERMINATE, want a FIN" % end)
    th.join(DESTROY_BOUND + 15 * SLOW)
    el = time.time() - t0
    if "x" in res:
        raise res["x"]
    if "d" not in res:
        e.append("uiw_destroy_id() had not returned %.1f s after it was called" % el)
        return
    ms = float(res["d"]["ms"])
    info.append("uiw_destroy_id() took %.0f ms" % ms)
    if ms > DESTROY_BOUND * 1000:
        e.append("uiw_destroy_id() took %.0f ms, bound %d s" % (ms, DESTROY_BOUND))
    if stalled:
        end, n, terms = c.to_eof(3 * SLOW)
        info.append("peer then read %d FPDUs, %s" % (n, end))
    c.close()
    v.cmd("waitall %d" % (1000 * SLOW), timeout=10 * SLOW)
    rep = v.cmd("report")
    if rep["dup"] != "0" or rep["unknown"] != "0":
        e.append("completions: %s duplicated, %s unknown" % (rep["dup"], rep["unknown"]))
    if rep["missing"] != "0":
        e.append("%s WRs never completed" % rep["missing"])


def c_term_destroy_polled(v, e, info):
    """A polled victim, frozen with its transmit path full (the peer not
    reading), gets an invalid FPDU; it takes one engine turn (which reads
    the FPDU: a TERMINATE is due, not yet sent) and destroys the id right
    after: the TERMINATE must still reach the peer once it reads, then EOF;
    uiw_destroy_id() within DESTROY_BOUND."""
    v.region("L", 1 << 20, "l")
    v.region("B", 4 * 4096, "l")
    v.cmd("recv B 4 4096")
    c = Conn(v.port)
    first_fpdu(c)
    v.cmd("write L 65536 0x99 0 200")
    wait_stalled(c)
    v.cmd("freeze")
    c.send(fh.untagged(fh.OP_SEND, 3, 1, 0, b"x" * 16))  # DDP: invalid QN (1/2/1)
    time.sleep(0.2)  # in the victim's socket, not yet read
    res = {}

    def destroy():
        try:
            res["d"] = v.cmd("destroy turn", timeout=DESTROY_BOUND + 10 * SLOW)
        except Exception as x:  # reported below
            res["x"] = x

    th = threading.Thread(target=destroy)
    th.start()
    time.sleep(0.5)
    end, n, terms = c.to_eof(3 * SLOW)
    info.append("peer read %d FPDUs, %s%s" % (n, end, ", TERMINATE " + ",".join(terms)
                                              if terms else ", no TERMINATE"))
    if not terms:
        e.append("the TERMINATE due when the application destroyed the id never left")
    if end != "EOF":
        e.append("the stream ended by %s after the TERMINATE, want a FIN" % end)
    th.join(DESTROY_BOUND + 15 * SLOW)
    if "x" in res:
        raise res["x"]
    if "d" not in res:
        e.append("uiw_destroy_id() did not return")
    else:
        info.append("uiw_destroy_id() took %s ms" % res["d"]["ms"])
        if float(res["d"]["ms"]) > DESTROY_BOUND * 1000:
            e.append("uiw_destroy_id() took %s ms, bound %d s" % (res["d"]["ms"], DESTROY_BOUND))
    c.close()


def c_destroy_unread(v, e, info):
    """A polled victim (its engine runs only inside its commands) holds 1 MiB
    of the peer's valid Writes unread in its socket when the application
    destroys the id: the peer must see the end of the stream as a FIN, not
    a reset (a socket closed with unread input is reset by its kernel)."""
    wst, wva, _ = v.region("W", 65536, "w")
    c = Conn(v.port)
    first_fpdu(c)
    v.cmd("query")  # the victim takes the first FPDU
    v.cmd("freeze")  # and then nothing more until it destroys the id
    chunk = bytes((j * 3 + 1) & 0x7F for j in range(16384))
    data = b"".join(c.frame(fh.tagged(fh.OP_WRITE, wst, wva + (k % 4) * 16384, chunk))
                    for k in range(64))
    c.s.settimeout(2 * SLOW)
    try:
        c.s.sendall(data)
    except socket.timeout:
        pass  # what the victim's socket took is enough
    time.sleep(0.2)
    q = victim_rxq(c)
    info.append("unread in the victim's socket: %s octets" % q)
    if not q:
        e.append("nothing unread in the victim's socket: the case tests nothing")
    d = v.cmd("destroy", timeout=DESTROY_BOUND + 10 * SLOW)
    info.append("uiw_destroy_id() took %s ms" % d["ms"])
    end, n, terms = c.to_eof(3 * SLOW)
    info.append("peer read %d FPDUs, %s" % (n, end))
    if end != "EOF":
        e.append("the stream ended by %s, want a FIN" % end)
    c.close()


# ---- the case table ---------------------------------------------------------------
CASES = []
MODES = [("thread", []), ("polled", ["--polled"]), ("markers", ["--markers"])]
for mname, margs in MODES:
    for cut in ("half", "mid", "last"):
        for act in ("fill", "prot"):
            CASES.append(("read_flush_%s_%s_%s" % (cut, act, mname), margs,
                          lambda v, e, i, cut=cut, act=act: c_read_flush(v, e, i, cut, act)))
    for cut in ("half", "mid", "last"):
        for act in ("fill", "prot"):
            CASES.append(("send_flush_%s_%s_%s" % (cut, act, mname), margs,
                          lambda v, e, i, cut=cut, act=act: c_send_flush(v, e, i, cut, act)))
    for act in ("fill", "unmap", "staged"):
        CASES.append(("write_release_%s_%s" % (act, mname), margs,
                      lambda v, e, i, act=act: c_write_release(v, e, i, act)))
for act in ("fill", "unmap", "prot"):
    CASES.append(("read_src_release_%s" % act, [],
                  lambda v, e, i, act=act: c_read_src_release(v, e, i, act)))
for act in ("fill", "unmap"):
    CASES.append(("write_src_release_%s" % act, [],
                  lambda v, e, i, act=act: c_write_src_release(v, e, i, act)))
CASES.append(("stuck_term", [], lambda v, e, i: c_stuck_term(v, e, i, False)))
CASES.append(("stuck_term_modify", [], lambda v, e, i: c_stuck_term(v, e, i, True)))
CASES.append(("destroy_unread", ["--polled"], c_destroy_unread))
CASES.append(("term_destroy_polled", ["--polled"], c_term_destroy_polled))
CASES.append(("term_destroy", [], lambda v, e, i: c_term_destroy(v, e, i, False)))
CASES.append(("term_destroy_stalled", [], lambda v, e, i: c_term_destroy(v, e, i, True)))
CASES.append(("term_destroy_smallwin", [], lambda v, e, i: c_term_destroy(v, e, i, False, 4096)))
CASES.append(("term_destroy_stalled_smallwin", [],
              lambda v, e, i: c_term_destroy(v, e, i, True, 4096)))
CASES.append(("stuck_term_smallwin", [], lambda v, e, i: c_stuck_term(v, e, i, False, 4096)))


def run_case(path, name, args, fn):
    errs, info = [], []
    v = None
    t0 = time.time()
    try:
        v = Victim(path, args)
        fn(v, errs, info)
        v.finish(errs)
    except VictimGone as ex:
        errs.insert(0, str(ex))
    except Fail as ex:
        errs.append(str(ex))
    except (OSError, RuntimeError, KeyError, ValueError) as ex:
        errs.append("%s: %s" % (type(ex).__name__, ex))
    finally:
        if v:
            v.kill()
    dt = time.time() - t0
    if errs:
        print("FAIL %s: %s (%s) [%.1f s]" % (name, "; ".join(errs), "; ".join(info), dt))
    else:
        print("PASS %s: %s [%.1f s]" % (name, "; ".join(info), dt))
    if v and (VERBOSE or (errs and os.environ.get("MIDOP_LOG"))):
        for ln in v.log:
            if not ln.startswith("wc ") or VERBOSE:
                print("     | " + ln)
        for ln in v.err[:40]:
            print("     ! " + ln)
    sys.stdout.flush()
    return not errs


def main():
    global VERBOSE
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if "--list" in args:
        for name, _, _ in CASES:
            print(name)
        return 0
    VERBOSE = "-v" in args
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1].split(",")
    path = args[0]
    # timeout(1) ends us with SIGTERM: unwind, so that the victim of the
    # case in progress is killed and reaped (run_case's finally)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    npass = nfail = 0
    for name, cargs, fn in CASES:
        if only and name not in only:
            continue
        if run_case(path, name, cargs, fn):
            npass += 1
        else:
            nfail += 1
    print("%d passed, %d failed" % (npass, nfail))
    return 0 if nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
