/* SPDX-License-Identifier: MIT */
/*
 * Error paths with MPA markers on (RFC 5044 §4.3): where the markers of a
 * TERMINATE fall once the FPDUs queued before it were discarded
 * (mpa_tx_discard(), RFC 5040 §6.2.1), and whether a receiver parses such
 * a stream.  Every stream is checked with a marker codec of this file's
 * own, written from the RFC text and sharing nothing with mpa/: a marker
 * at every 512th octet counted from the first FPDU of full operation, its
 * FPDUPTR pointing back to the ULPDU_Length of the FPDU holding it (0
 * between FPDUs, the marker then belonging to the next FPDU), every marker
 * inside the CRC of the FPDU holding it.
 *
 *  - discard_then_term: MPA alone (a tp_pair, CRC on and off): FPDUs
 *    queued at chosen stream offsets, some sent, some lent to a send in
 *    flight, the rest discarded, then a TERMINATE; the octets on the wire
 *    are checked, then parsed by a receiver through mpa_rx() and through
 *    mpa_rx_lend()/ack in seeded chunks;
 *  - rx_misplaced: the same streams with the TERMINATE's markers where a
 *    wrong recomputation would put them: the receiver must refuse it;
 *  - rdmap_term: two RDMAP QPs (an rp_pair, markers both ways): a bad
 *    Write draws a TERMINATE from a responder with Sends queued, at chosen
 *    offsets of its stream, and the initiator receives it;
 *  - rdmap_term_stalled: the same while the peer stalls: part of a Send
 *    went out, a send is in flight when the error comes, the TERMINATE
 *    waits for it and follows the rest of the Send.
 * The geometry each case is meant to have (a marker inside the discarded
 * part, right at its end, inside the TERMINATE...) is asserted, so that a
 * change of sizes cannot silently turn a case into another one.
 */
#include "tests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"
#include "memwire.h"
#include "rdmap_pair.h"

/* ---- the independent marker codec ---- */

#define MK_PERIOD 512
#define MK_LEN	  4

/* RFC 5044 §4.1: PAD makes ULPDU_Length + ULPDU a multiple of four */
static size_t mk_pad(size_t ulpdu)
{
	return (4 - ((2 + ulpdu) & 3)) & 3;
}

/* §4.3: "the MPA Markers MUST be inserted immediately preceding the first
 * FPDU of Full Operation Phase, and at every 512th octet of the TCP octet
 * stream thereafter": position 0 is the first octet of full operation. */
static int mk_at(uint64_t pos)
{
	return pos % MK_PERIOD == 0;
}

size_t tu_mk_wrap(const uint8_t *fpdu, size_t n, uint64_t pos, int crc, uint8_t *out)
{
	size_t o = 0, crc_at[4] = {0};
	uint64_t len_pos = 0;
	int started = 0;

	for (size_t k = 0; k < n; k++) {
		if (mk_at(pos + o)) {
			/* FPDUPTR: octets from the start of ULPDU_Length to the
			 * marker, 0 for a marker between FPDUs */
			out[o] = 0;
			out[o + 1] = 0;
			put_be16(out + o + 2, started ? (uint16_t)(pos + o - len_pos) : 0);
			o += MK_LEN;
		}
		if (!started) {
			started = 1;
			len_pos = pos + o;
		}
		if (k + 4 >= n)
			crc_at[k + 4 - n] = o;
		out[o++] = fpdu[k];
	}
	if (crc) {
		/* §4.4: from the first octet (a leading marker's) through PAD,
		 * markers included, a marker right after PAD too */
		uint8_t le[4];

		put_le32(le, crc32c(out, crc_at[0]));
		for (int i = 0; i < 4; i++)
			out[crc_at[i]] = le[i];
	}
	return o;
}

/* Wire octets of an FPDU of @ulpdu octets going out at stream position @pos. */
static size_t mk_wire_len(uint64_t pos, size_t ulpdu)
{
	size_t n = 2 + ulpdu + mk_pad(ulpdu) + 4, o = 0;

	for (size_t k = 0; k < n; k++) {
		if (mk_at(pos + o))
			o += MK_LEN;
		o++;
	}
	return o;
}

/* Markers at wire positions in [lo, hi)? */
static int mk_in(uint64_t lo, uint64_t hi)
{
	return lo < hi && (lo + MK_PERIOD - 1) / MK_PERIOD * MK_PERIOD < hi;
}

ssize_t tu_mk_unwrap(const uint8_t *in, size_t len, int crc, uint8_t *out, size_t cap, char *why,
		     size_t why_len)
{
	size_t i = 0, o = 0;

#define MK_FAIL(...)                                 \
	do {                                         \
		snprintf(why, why_len, __VA_ARGS__); \
		return -1;                           \
	} while (0)
	while (i < len) {
		size_t f0 = i, need = 6, got = 0, crc_wire = 0;
		uint64_t len_pos;
		uint8_t *p = out + o;

		if (mk_at(i)) {
			if (i + MK_LEN > len)
				MK_FAIL("stream ends inside the marker at %zu", i);
			if (get_be16(in + i) != 0 || get_be16(in + i + 2) != 0)
				MK_FAIL("marker at %zu between FPDUs reads %02x%02x %02x%02x, not 0",
					i, in[i], in[i + 1], in[i + 2], in[i + 3]);
			i += MK_LEN;
		}
		len_pos = i;
		while (got < need) {
			if (i == len)
				MK_FAIL("stream ends inside the FPDU at %zu (%zu of %zu octets)",
					(size_t)len_pos, got, need);
			if (mk_at(i)) {
				uint16_t ptr;

				if (i + MK_LEN > len)
					MK_FAIL("stream ends inside the marker at %zu", i);
				ptr = get_be16(in + i + 2);
				/* the transmitter's reserved field and low two bits are 0 */
				if (get_be16(in + i) != 0 || ptr != i - len_pos)
					MK_FAIL("marker at %zu reads %02x%02x %04x, expected FPDUPTR "
						"%04x (FPDU at %zu)",
						i, in[i], in[i + 1], ptr, (unsigned)(i - len_pos),
						(size_t)len_pos);
				if (got > need - 4)
					MK_FAIL("marker at %zu inside a CRC field", i);
				i += MK_LEN;
				continue;
			}
			if (got == need - 4)
				crc_wire = i;
			if (o + got >= cap)
				MK_FAIL("output full");
			p[got++] = in[i++];
			if (got == 2) {
				size_t ul = get_be16(p);

				need = 2 + ul + mk_pad(ul) + 4;
			}
		}
		if (crc) {
			uint32_t want = crc32c(in + f0, crc_wire - f0);

			if (get_le32(p + need - 4) != want)
				MK_FAIL("FPDU at %zu: CRC %08x, expected %08x (markers included)",
					(size_t)len_pos, get_le32(p + need - 4), want);
			/* the same FPDU without markers carries its own CRC */
			put_le32(p + need - 4, crc32c(p, need - 4));
		}
		o += need;
	}
#undef MK_FAIL
	return (ssize_t)o;
}

/* ---- shared by the cases ---- */

#define WIRE_CAP (64 * 1024)
#define MAXF	 64

struct fpdu_list {
	size_t n;
	size_t off[MAXF], len[MAXF]; /* ULPDUs inside a plain (markers-off) stream */
};

/* Unwrap @w and split it into ULPDUs (into @plain, WIRE_CAP octets). */
static void unwrap_split(const uint8_t *w, size_t wl, int crc, uint8_t *plain, struct fpdu_list *fl,
			 const char *what)
{
	char why[160];
	ssize_t pl = tu_mk_unwrap(w, wl, crc, plain, WIRE_CAP, why, sizeof(why));
	size_t off = 0;

	ck_assert_msg(pl >= 0, "%s: %s", what, why);
	fl->n = 0;
	while (off < (size_t)pl) {
		size_t ul = get_be16(plain + off);

		ck_assert_uint_lt(fl->n, MAXF);
		fl->off[fl->n] = off + 2;
		fl->len[fl->n++] = ul;
		for (size_t k = 0; k < mk_pad(ul); k++)
			ck_assert_msg(plain[off + 2 + ul + k] == 0, "%s: PAD not zero", what);
		off += 2 + ul + mk_pad(ul) + 4;
	}
}

/* A 14-octet tagged-looking header (tp_ops reads the T bit) numbered @k. */
static void tagged_hdr(uint8_t *h, unsigned k)
{
	memset(h, 0, 14);
	h[0] = 0xC1;
	h[1] = 0x40;
	put_be32(h + 2, 0x1000 + k);
}

/* An untagged TERMINATE-looking ULPDU header (RFC 5040 §4.8: QN 2, MSN 1). */
static const uint8_t term_hdr18[18] = {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0};

/* ---- MPA alone: discard, then a TERMINATE ---- */

#define G_P0	   0x01 /* the TERMINATE starts at a marker position */
#define G_P8	   0x02 /* ... 8 octets after one (a recomputation rounding down misses) */
#define G_MK_DROP  0x04 /* a marker was in the discarded part (at its start included) */
#define G_DROP_END 0x08 /* the discarded part ends right at a marker position */
#define G_STRADDLE 0x10 /* a marker falls inside the TERMINATE */
#define G_PARTIAL  0x20 /* an FPDU partly sent is kept */
#define G_NODROP   0x40 /* nothing was discarded */
#define G_INFLIGHT 0x80 /* FPDUs lent to a send in flight are kept */

struct dcase {
	const char *name;
	uint32_t start;	   /* stream position where the queued FPDUs begin */
	uint16_t q[6];	   /* their ULPDU lengths (0 ends the list) */
	uint32_t sent;	   /* octets of them on the wire before the error */
	unsigned inflight; /* FPDUs then lent to a send still in flight (iovecs) */
	uint32_t adv;	   /* octets that send reports done after the discard */
	uint16_t term;	   /* the TERMINATE's ULPDU length */
	unsigned geo;	   /* G_*: what the case is meant to cover */
};

static const struct dcase dcases[] = {
	{"TERMINATE first, nothing queued", 0, {0}, 0, 0, 0, 46, G_P0 | G_NODROP},
	{"one FPDU dropped at the stream start", 0, {100}, 0, 0, 0, 46, G_P0 | G_MK_DROP},
	{"TERMINATE after fillers, nothing queued, at a marker",
	 1024,
	 {0},
	 0,
	 0,
	 0,
	 46,
	 G_P0 | G_NODROP},
	{"three dropped, a marker inside them", 300, {200, 200, 200}, 0, 0, 0, 46, G_MK_DROP},
	{"one dropped ending right at a marker", 812, {206}, 0, 0, 0, 46, G_DROP_END},
	{"dropped ending at a marker, long TERMINATE across it",
	 812,
	 {206},
	 0,
	 0,
	 0,
	 300,
	 G_DROP_END | G_STRADDLE},
	{"partial FPDU kept, ending at a marker, two dropped",
	 700,
	 {318, 100, 100},
	 10,
	 0,
	 0,
	 46,
	 G_P0 | G_PARTIAL | G_MK_DROP},
	{"partial FPDU kept, TERMINATE across a marker",
	 1900,
	 {134, 300, 300},
	 50,
	 0,
	 0,
	 46,
	 G_PARTIAL | G_STRADDLE | G_MK_DROP},
	{"partial FPDU kept, nothing dropped, TERMINATE across a marker",
	 1900,
	 {134},
	 50,
	 0,
	 0,
	 46,
	 G_PARTIAL | G_STRADDLE | G_NODROP},
	/* rounding the position down would lose the markers from here on: the
	 * TERMINATE reaches the next one */
	{"two dropped 8 octets after a marker, long TERMINATE",
	 2568,
	 {100, 100},
	 0,
	 0,
	 0,
	 600,
	 G_P8 | G_STRADDLE},
	{"sent part ends inside a marker, the rest dropped",
	 400,
	 {150, 150, 150},
	 114,
	 0,
	 0,
	 46,
	 G_PARTIAL},
	{"sent part ends right before a marker", 400, {150, 150, 150}, 112, 0, 0, 46, G_PARTIAL},
	{"two in flight, two dropped across a marker",
	 1000,
	 {200, 200, 200, 200},
	 0,
	 2,
	 30,
	 46,
	 G_INFLIGHT | G_MK_DROP},
	{"in flight after a partial send, ending at a marker",
	 700,
	 {318, 100},
	 20,
	 1,
	 100,
	 46,
	 G_PARTIAL | G_INFLIGHT | G_P0 | G_MK_DROP},
	{"several dropped, TERMINATE across two markers",
	 1500,
	 {500, 500, 500, 500, 500},
	 0,
	 0,
	 0,
	 700,
	 G_STRADDLE | G_MK_DROP},
};
#define NDCASES (int)(sizeof(dcases) / sizeof(dcases[0]))

static void pair_markers(struct tp_pair *p, int crc)
{
	struct mpa_cfg a, b;

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.crc = b.crc = crc;
	a.markers = b.markers = 1;
	ck_assert_int_eq(tp_init(p, &a, &b, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(p), 0);
	ck_assert(p->ini.c.tx_markers && p->rsp.c.rx_markers && p->rsp.c.tx_markers);
	ck_assert_int_eq(p->ini.c.crc_on, crc);
}

/*
 * Payload sizes (after @hdr header octets) of FPDUs that take the stream
 * from @pos exactly to @target; returns their count.  Sizes are found with
 * this file's codec only.
 */
static int fill_plan(uint64_t pos, uint64_t target, size_t hdr, size_t *pl, int max)
{
	int n = 0;

	while (pos < target) {
		size_t found = SIZE_MAX;

		ck_assert_int_lt(n, max);
		for (size_t k = 0; k <= 1000 && found == SIZE_MAX; k++)
			if (pos + mk_wire_len(pos, hdr + k) == target)
				found = k;
		if (found == SIZE_MAX)
			found = target - pos > 1100 ? 800 : 1; /* get closer, then retry */
		pl[n++] = found;
		pos += mk_wire_len(pos, hdr + found);
	}
	ck_assert_uint_eq(pos, target);
	return n;
}

struct expect {
	uint8_t *buf; /* expected ULPDUs, back to back */
	size_t len, n, off[MAXF], ulen[MAXF];
};

static void expect_add(struct expect *e, const uint8_t *hdr, size_t hl, const uint8_t *pl,
		       size_t pn)
{
	ck_assert_uint_lt(e->n, MAXF);
	e->off[e->n] = e->len;
	e->ulen[e->n++] = hl + pn;
	memcpy(e->buf + e->len, hdr, hl);
	memcpy(e->buf + e->len + hl, pl, pn);
	e->len += hl + pn;
}

/* the ULPDUs of the plain stream are exactly @e's */
static void expect_check(const struct expect *e, const uint8_t *plain, const struct fpdu_list *fl,
			 const char *what)
{
	ck_assert_msg(fl->n == e->n, "%s: %zu FPDUs on the wire, expected %zu", what, fl->n, e->n);
	for (size_t i = 0; i < e->n; i++) {
		ck_assert_msg(fl->len[i] == e->ulen[i], "%s: FPDU %zu of %zu octets, expected %zu",
			      what, i, fl->len[i], e->ulen[i]);
		ck_assert_msg(memcmp(plain + fl->off[i], e->buf + e->off[i], e->ulen[i]) == 0,
			      "%s: FPDU %zu differs", what, i);
	}
}

/* Feed @w to @s's receive side (mode 0: mpa_rx whole; 1: lend/ack in
 * chunks of 1..97 octets); returns the first error or 0. */
static ssize_t feed(struct tp_side *s, const uint8_t *w, size_t wl, int mode, uint64_t *rng)
{
	size_t off = 0;

	while (off < wl) {
		size_t k = wl - off;
		ssize_t r;

		if (mode && k > 1) {
			size_t lim = 1 + (size_t)(tu_rand(rng) % 97);

			k = k < lim ? k : lim;
		}
		r = tp_feed(s, w + off, k, mode);
		if (r < 0)
			return r;
		ck_assert_int_gt(r, 0);
		off += (size_t)r;
	}
	return 0;
}

/* The receiver delivered exactly @e's ULPDUs (tp_ops: header by the T bit). */
static void rx_check(const struct tp_side *s, const struct expect *e, const char *what)
{
	size_t ho = 0, po = 0;

	ck_assert_msg((size_t)s->nend == e->n, "%s: receiver delivered %d FPDUs, expected %zu",
		      what, s->nend, e->n);
	for (size_t i = 0; i < e->n; i++) {
		const uint8_t *u = e->buf + e->off[i];
		size_t hl = (u[0] & 0x80) ? 14 : 18;

		ck_assert_uint_eq(s->ulpdu_lens[i], e->ulen[i]);
		ck_assert_msg(memcmp(s->hdrs + ho, u, hl) == 0, "%s: header %zu", what, i);
		ck_assert_msg(memcmp(s->payload + po, u + hl, e->ulen[i] - hl) == 0,
			      "%s: payload %zu", what, i);
		ho += hl;
		po += e->ulen[i] - hl;
	}
}

struct dresult {
	uint8_t *wire;
	size_t wl;
	uint64_t p; /* where the TERMINATE starts */
	struct expect e;
};

/* Run @c on the initiator of a fresh pair; the initiator's full-operation
 * octets end up in @r->wire. */
static void drun(const struct dcase *c, int crc, struct dresult *r)
{
	struct tp_pair p;
	struct mpa_conn *m = &p.ini.c;
	uint64_t rng = tu_seed() + c->start;
	static uint8_t pay[8][1100];
	uint8_t hdr[14], tpay[1100];
	size_t pl[32], qpos[6], qwire[6], nq = 0, kept = 0, done = 0, drop = 0;
	uint64_t pos = 0;
	struct iovec iov[64];
	int nf, ret;
	unsigned geo = 0;

	pair_markers(&p, crc);
	for (int i = 0; i < 8; i++)
		tu_rand_fill(&rng, pay[i], sizeof(pay[i]));
	tu_rand_fill(&rng, tpay, sizeof(tpay));
	r->wire = malloc(WIRE_CAP);
	r->e.buf = malloc(WIRE_CAP);
	ck_assert(r->wire && r->e.buf);
	r->wl = 0;
	r->e.len = r->e.n = 0;

	/* fillers, sent in full: the queued FPDUs begin at c->start */
	nf = fill_plan(0, c->start, 14, pl, 32);
	for (int i = 0; i < nf; i++) {
		tagged_hdr(hdr, (unsigned)i);
		ck_assert_int_eq(tp_send(&p.ini, hdr, 14, pay[i % 8], pl[i]), 0);
		expect_add(&r->e, hdr, 14, pay[i % 8], pl[i]);
	}
	r->wl = tp_drain(&p.ini, r->wire, WIRE_CAP);
	ck_assert_uint_eq(r->wl, c->start);

	/* the queued FPDUs, and where they fall */
	pos = c->start;
	for (; nq < 6 && c->q[nq]; nq++) {
		tagged_hdr(hdr, 100 + (unsigned)nq);
		ck_assert_int_eq(tp_send(&p.ini, hdr, 14, pay[nq], (size_t)c->q[nq] - 14), 0);
		qpos[nq] = pos;
		qwire[nq] = mk_wire_len(pos, c->q[nq]);
		pos += qwire[nq];
	}
	ck_assert_uint_eq(mpa_tx_pending_bytes(m), pos - c->start);
	if (c->sent)
		r->wl += mw_gather(m, r->wire + r->wl, c->sent, iov, 64);
	ck_assert_uint_eq(r->wl, c->start + c->sent);
	if (c->inflight) {
		/* a send of the next FPDUs (one iovec each with markers) is in
		 * flight when the error comes */
		ck_assert_int_eq(mpa_tx_pending(m, iov, (int)c->inflight), (int)c->inflight);
	}
	/* kept: every FPDU started on the wire or handed to the send (which
	 * begins with the first FPDU not wholly sent) */
	for (size_t i = 0; i < nq; i++) {
		if (qpos[i] < c->start + c->sent)
			kept = i + 1;
		if (qpos[i] + qwire[i] <= c->start + c->sent)
			done = i + 1;
	}
	if (c->inflight && done + c->inflight > kept)
		kept = done + c->inflight;
	for (size_t i = kept; i < nq; i++)
		drop += qwire[i];
	r->p = pos - drop;

	ret = mpa_tx_discard(m);
	ck_assert_msg(ret == (int)(nq - kept), "%s: discard returned %d, expected %zu", c->name,
		      ret, nq - kept);
	if (c->inflight) {
		size_t moved = 0;

		/* the kernel reads what it was lent (still valid after the
		 * discard), and the send ends with c->adv octets taken */
		for (unsigned i = 0; i < c->inflight && moved < c->adv; i++) {
			size_t k =
				iov[i].iov_len < c->adv - moved ? iov[i].iov_len : c->adv - moved;

			memcpy(r->wire + r->wl + moved, iov[i].iov_base, k);
			moved += k;
		}
		ck_assert_uint_eq(moved, c->adv);
		ck_assert_int_eq(mpa_tx_advance(m, c->adv), 0);
		r->wl += c->adv;
	}
	for (size_t i = 0; i < kept; i++) {
		tagged_hdr(hdr, 100 + (unsigned)i);
		expect_add(&r->e, hdr, 14, pay[i], (size_t)c->q[i] - 14);
	}
	ck_assert_int_eq(tp_send(&p.ini, term_hdr18, 18, tpay, (size_t)c->term - 18), 0);
	expect_add(&r->e, term_hdr18, 18, tpay, (size_t)c->term - 18);
	r->wl += tp_drain(&p.ini, r->wire + r->wl, WIRE_CAP - r->wl);
	ck_assert_uint_eq(mpa_tx_pending_bytes(m), 0);

	/* the case covers what it says */
	if (mk_at(r->p))
		geo |= G_P0;
	if (r->p % MK_PERIOD == 8)
		geo |= G_P8;
	if (drop && mk_in(r->p, r->p + drop))
		geo |= G_MK_DROP;
	if (drop && mk_at(r->p + drop))
		geo |= G_DROP_END;
	if (mk_in(r->p + 1, r->p + mk_wire_len(r->p, c->term)))
		geo |= G_STRADDLE;
	for (size_t i = 0; i < nq; i++)
		if (qpos[i] < c->start + c->sent && c->start + c->sent < qpos[i] + qwire[i])
			geo |= G_PARTIAL;
	if (!drop)
		geo |= G_NODROP;
	if (c->inflight)
		geo |= G_INFLIGHT;
	ck_assert_msg(geo == c->geo,
		      "%s: geometry 0x%x, meant 0x%x (TERMINATE at %llu, %zu dropped)", c->name,
		      geo, c->geo, (unsigned long long)r->p, drop);
	ck_assert_uint_eq(r->wl, r->p + mk_wire_len(r->p, c->term));
	tp_destroy(&p);
}

static void dresult_free(struct dresult *r)
{
	free(r->wire);
	free(r->e.buf);
}

START_TEST(discard_then_term)
{
	const struct dcase *c = &dcases[_i / 2];
	int crc = _i % 2;
	struct dresult r;
	struct fpdu_list fl;
	uint8_t *plain = malloc(WIRE_CAP);
	uint64_t rng = tu_seed();

	ck_assert_ptr_nonnull(plain);
	drun(c, crc, &r);
	unwrap_split(r.wire, r.wl, crc, plain, &fl, c->name);
	expect_check(&r.e, plain, &fl, c->name);
	/* the receiving side parses it, both ways in */
	for (int mode = 0; mode < 2; mode++) {
		struct tp_pair q;

		pair_markers(&q, crc);
		ck_assert_msg(feed(&q.rsp, r.wire, r.wl, mode, &rng) == 0,
			      "%s: receiver failed (mode %d)", c->name, mode);
		rx_check(&q.rsp, &r.e, c->name);
		ck_assert_int_eq(q.rsp.c.state, MPA_S_FULL);
		tp_destroy(&q);
	}
	dresult_free(&r);
	free(plain);
}
END_TEST

/*
 * The TERMINATE re-framed with its markers shifted by 4, 8, -8 or -4
 * octets (where a wrong recomputation of the next marker position puts
 * them): the receiver must deliver everything before it, never the
 * TERMINATE, and fail at the latest when more octets follow (zeros:
 * ULPDU_Length 0 is refused, and no marker of a misframed stream reads
 * right).  Shifts that frame this TERMINATE the same (no marker near it
 * either way) are left out; every case with a marker at or inside its
 * TERMINATE has some.
 */
START_TEST(rx_misplaced)
{
	static const int shifts[] = {4, 8, 504, 508};
	const struct dcase *c = &dcases[_i / 2];
	int crc = _i % 2, tried = 0;
	struct dresult r;
	uint8_t *plain = malloc(WIRE_CAP), *bad = calloc(1, 2 * WIRE_CAP);
	struct fpdu_list fl;
	uint64_t rng = tu_seed();
	size_t tw, last;

	ck_assert(plain && bad);
	drun(c, crc, &r);
	unwrap_split(r.wire, r.wl, crc, plain, &fl, c->name);
	last = fl.n - 1;
	/* the TERMINATE as a markers-off FPDU */
	tw = 2 + fl.len[last] + mk_pad(fl.len[last]) + 4;
	for (int si = 0; si < 4; si++) {
		int shift = shifts[si];
		size_t bl;

		memset(bad, 0, 2 * WIRE_CAP);
		memcpy(bad, r.wire, r.p);
		bl = r.p + tu_mk_wrap(plain + fl.off[last] - 2, tw, r.p + (uint64_t)shift, crc,
				      bad + r.p);
		if (bl == r.wl && memcmp(bad, r.wire, bl) == 0)
			continue;
		tried++;
		/* zeros after it: a receiver that waits for more comes to a verdict */
		bl += 70000;
		for (int mode = 0; mode < 2; mode++) {
			struct tp_pair q;
			ssize_t ret;
			uint8_t l, e, code = 0;

			pair_markers(&q, crc);
			ret = feed(&q.rsp, bad, bl, mode, &rng);
			ck_assert_msg(ret < 0, "%s, shift %d: the misframed TERMINATE was accepted",
				      c->name, shift);
			ck_assert_msg((size_t)q.rsp.nend == last,
				      "%s, shift %d: %d FPDUs delivered, expected %zu", c->name,
				      shift, q.rsp.nend, last);
			ck_assert_int_eq(q.rsp.c.state, MPA_S_ERROR);
			ck_assert(mpa_conn_term(&q.rsp.c, &l, &e, &code));
			ck_assert_msg(code == MPA_ECODE_MARKER || (crc && code == MPA_ECODE_CRC),
				      "%s, shift %d: TERMINATE code %u", c->name, shift, code);
			tp_destroy(&q);
		}
	}
	if (c->geo & (G_P0 | G_STRADDLE))
		ck_assert_msg(tried > 0, "%s: no shift changes the framing", c->name);
	dresult_free(&r);
	free(plain);
	free(bad);
}
END_TEST

/* ---- RDMAP: a TERMINATE after queued Sends are discarded ---- */

#define BUF_LEN	   8192
#define TGT_LEN	   4096
#define SEND_ID	   0x5100
#define BAD_WRITE  0x7700
#define RECV_ID	   0x6100
#define A_RECV_LEN 1100

struct rq {
	struct rp_pair p;
	int crc;
	uint8_t *abuf, *bbuf, *btgt;
	struct ddp_mr *amr, *bmr, *btmr;
	uint8_t *w[2]; /* full-operation octets a -> b, b -> a */
	size_t wl[2];
	int nbsend;
};

/* an rp_pair with markers both ways (half a megabyte of completions: on
 * the heap) */
static struct rq *rq_new(int crc, int lend)
{
	struct rdmap_qp_cfg qc = {.max_send_wr = 32, .max_recv_wr = 32, .ird = 2, .ord = 2};
	struct mpa_cfg ic, rc;
	uint64_t rng = tu_seed();
	struct rq *q = calloc(1, sizeof(*q));

	ck_assert_ptr_nonnull(q);
	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = crc;
	ic.markers = rc.markers = 1;
	ck_assert_int_eq(rp_init(&q->p, &ic, &rc, &qc, rng), 0);
	ck_assert(q->p.mpa.rsp.c.tx_markers && q->p.mpa.ini.c.rx_markers);
	ck_assert_int_eq(q->p.mpa.rsp.c.crc_on, crc);
	q->crc = crc;
	q->nbsend = 0;
	q->wl[0] = q->wl[1] = 0;
	if (lend) {
		q->p.lend = 1;
		q->p.max_chunk = 61;
	}
	q->abuf = malloc(BUF_LEN);
	q->bbuf = malloc(BUF_LEN);
	q->btgt = calloc(1, TGT_LEN);
	q->w[0] = malloc(WIRE_CAP);
	q->w[1] = malloc(WIRE_CAP);
	ck_assert(q->abuf && q->bbuf && q->btgt && q->w[0] && q->w[1]);
	tu_rand_fill(&rng, q->abuf, BUF_LEN);
	tu_rand_fill(&rng, q->bbuf, BUF_LEN);
	q->amr = rp_reg(&q->p.a, q->abuf, BUF_LEN, DDP_ACC_LOCAL_WRITE);
	q->bmr = rp_reg(&q->p.b, q->bbuf, BUF_LEN, DDP_ACC_LOCAL_WRITE);
	q->btmr = rp_reg(&q->p.b, q->btgt, TGT_LEN, DDP_ACC_ALL);
	ck_assert(q->amr && q->bmr && q->btmr);
	return q;
}

static void rq_free(struct rq *q)
{
	rp_destroy(&q->p);
	free(q->abuf);
	free(q->bbuf);
	free(q->btgt);
	free(q->w[0]);
	free(q->w[1]);
	free(q);
}

/* Move octets both ways until nothing moves, recording each direction. */
static void rq_pump(struct rq *q)
{
	for (int round = 0; round < 10000; round++) {
		size_t moved = 0;

		for (int dir = 0; dir < 2; dir++) {
			struct rp_host *from = dir ? &q->p.b : &q->p.a;
			struct rp_host *to = dir ? &q->p.a : &q->p.b;
			struct tp_side *side = dir ? &q->p.mpa.rsp : &q->p.mpa.ini;
			size_t n;

			rdmap_qp_progress(&from->qp);
			n = tp_drain(side, q->w[dir] + q->wl[dir], WIRE_CAP - q->wl[dir]);
			if (n && !to->conn_failed)
				rp_inject(&q->p, to, q->w[dir] + q->wl[dir], n);
			q->wl[dir] += n;
			moved += n;
		}
		if (!moved)
			return;
	}
	ck_abort_msg("pump did not settle");
}

static void post_recv(struct rp_host *h, struct ddp_mr *mr, uint8_t *buf, size_t len, uint64_t id)
{
	struct rdmap_recv_wr r = {0};

	r.wr_id = id;
	r.num_sge = 1;
	r.sge[0].addr = (uint64_t)(uintptr_t)buf;
	r.sge[0].length = (uint32_t)len;
	r.sge[0].lkey = mr->stag;
	ck_assert_int_eq(rdmap_post_recv(&h->qp, &r), 0);
}

static void post_send(struct rp_host *h, struct ddp_mr *mr, const uint8_t *buf, size_t len,
		      uint64_t id)
{
	struct rdmap_send_wr w = {0};

	w.wr_id = id;
	w.opcode = RDMAP_WR_SEND;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)buf;
	w.sge[0].length = (uint32_t)len;
	w.sge[0].lkey = mr->stag;
	ck_assert_int_eq(rdmap_post_send(&h->qp, &w), 0);
}

/* a opens b's transmit gate with one Send, then b Sends fillers to a until
 * its stream is at @target (q->nbsend of them). */
static void rq_prelude(struct rq *q, uint64_t target)
{
	size_t pl[32];
	int n;

	post_recv(&q->p.b, q->bmr, q->bbuf, 64, RECV_ID);
	post_send(&q->p.a, q->amr, q->abuf, 16, SEND_ID);
	rq_pump(q);
	ck_assert_int_eq(q->p.b.nrwc, 1);
	ck_assert_int_eq(q->p.b.rwc[0].status, RDMAP_WC_SUCCESS);
	/* RDMAP Sends: an 18-octet untagged header, then the payload */
	n = fill_plan(0, target, 18, pl, 32);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_le(pl[i], A_RECV_LEN);
		post_recv(&q->p.a, q->amr, q->abuf + A_RECV_LEN * (size_t)(i % 4), A_RECV_LEN,
			  RECV_ID + 1 + (uint64_t)i);
		post_send(&q->p.b, q->bmr, q->bbuf + 64 * (size_t)i, pl[i],
			  SEND_ID + (uint64_t)q->nbsend++);
		rq_pump(q);
	}
	ck_assert_uint_eq(q->wl[1], target);
	ck_assert_int_eq(q->p.a.nrwc, n);
	ck_assert_int_eq(q->p.b.nswc, n);
}

/* a Writes to an STag b never issued: b answers with 1/1/0x00 (RFC 5041 §7.2) */
static void rq_bad_write(struct rq *q)
{
	struct rdmap_send_wr w = {0};

	w.wr_id = BAD_WRITE;
	w.opcode = RDMAP_WR_WRITE;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)q->abuf;
	w.sge[0].length = 32;
	w.sge[0].lkey = q->amr->stag;
	w.remote_addr = (uint64_t)(uintptr_t)q->btgt;
	w.rkey = q->btmr->stag ^ 0x00010000u;
	ck_assert_int_eq(rdmap_post_send(&q->p.a.qp, &w), 0);
}

/*
 * b's whole stream, markers and CRCs checked: @nfill Sends, then the
 * TERMINATE 1/1/0x00 for
 * a's Write; a received it: QP in ERROR with b's cause, its Write failed
 * with a remote access error.
 */
static void rq_check(struct rq *q, size_t nfill, const char *what)
{
	uint8_t *plain = malloc(WIRE_CAP);
	struct fpdu_list fl;
	const uint8_t *t;

	ck_assert_ptr_nonnull(plain);
	unwrap_split(q->w[1], q->wl[1], q->crc, plain, &fl, what);
	ck_assert_msg(fl.n == nfill + 1, "%s: b sent %zu FPDUs, expected %zu", what, fl.n,
		      nfill + 1);
	for (size_t i = 0; i < nfill; i++)
		ck_assert_msg((plain[fl.off[i] + 1] & 0xF) == RDMAP_OP_SEND,
			      "%s: FPDU %zu is not a Send", what, i);
	t = plain + fl.off[nfill];
	/* RFC 5040 §4.8: untagged QN 2 MSN 1; 1/1/0x00 with M and D, the
	 * Write's 14-octet DDP header */
	ck_assert_msg(t[0] == 0x41 && t[1] == 0x47, "%s: last FPDU is not a TERMINATE", what);
	ck_assert_uint_eq(get_be32(t + 6), DDP_QN_TERMINATE);
	ck_assert_uint_eq(get_be32(t + 10), 1);
	ck_assert_uint_eq(t[18], 0x11);
	ck_assert_uint_eq(t[19], 0x00);
	ck_assert_uint_eq(t[20], RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D);
	ck_assert_uint_eq(fl.len[nfill], 18 + 4 + 2 + 14);
	ck_assert_uint_eq(t[24] & 0x80, 0x80);
	ck_assert_uint_eq(get_be32(t + 26), q->btmr->stag ^ 0x00010000u);
	/* a took it: ERROR, told once, with b's cause */
	ck_assert_int_eq(q->p.a.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(q->p.a.nerr, 1);
	ck_assert_int_eq(q->p.a.err_received, 1);
	ck_assert_uint_eq(q->p.a.err_term.layer, 1);
	ck_assert_uint_eq(q->p.a.err_term.etype, 1);
	ck_assert_uint_eq(q->p.a.err_term.ecode, 0);
	ck_assert_int_eq(q->p.b.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(q->p.b.nerr, 1);
	ck_assert_int_eq(q->p.b.err_received, 0);
	free(plain);
}

struct rcase {
	const char *name;
	uint32_t at;	  /* b's stream position when its Sends are queued */
	uint16_t pl[4];	  /* the Sends b has queued (payload octets; 0 ends) */
	uint32_t partial; /* stalled: octets of them sent before the error */
	uint32_t adv;	  /* stalled: octets the in-flight send took */
	unsigned geo;	  /* G_* of the TERMINATE's start and the dropped part */
};

static const struct rcase rcases[] = {
	{"no Send queued, TERMINATE at a marker", 1024, {0}, 0, 0, G_P0 | G_NODROP},
	{"one Send dropped, TERMINATE at a marker", 1536, {200}, 0, 0, G_P0 | G_MK_DROP},
	{"three Sends dropped across a marker", 900, {200, 200, 200}, 0, 0, G_MK_DROP},
	{"one Send dropped ending at a marker", 1400, {110}, 0, 0, G_DROP_END},
	{"two Sends dropped, TERMINATE across a marker",
	 2008,
	 {300, 300},
	 0,
	 0,
	 G_STRADDLE | G_MK_DROP},
	{"two Sends dropped 8 octets after a marker", 1032, {100, 100}, 0, 0, G_P8},
};
#define NRCASES (int)(sizeof(rcases) / sizeof(rcases[0]))

static unsigned rgeo(uint64_t p, uint64_t drop)
{
	unsigned geo = 0;

	if (mk_at(p))
		geo |= G_P0;
	if (p % MK_PERIOD == 8)
		geo |= G_P8;
	if (drop && mk_in(p, p + drop))
		geo |= G_MK_DROP;
	if (drop && mk_at(p + drop))
		geo |= G_DROP_END;
	if (mk_in(p + 1, p + mk_wire_len(p, 18 + 4 + 2 + 14)))
		geo |= G_STRADDLE;
	if (!drop)
		geo |= G_NODROP;
	return geo;
}

START_TEST(rdmap_term)
{
	const struct rcase *c = &rcases[_i / 4];
	int crc = _i % 2, lend = (_i / 2) % 2;
	struct rq *q;
	size_t nq = 0, nfill;
	uint64_t pos, drop = 0;

	q = rq_new(crc, lend);
	rq_prelude(q, c->at);
	nfill = (size_t)q->nbsend;
	/* b's Sends go onto MPA, not onto the wire */
	pos = c->at;
	for (; nq < 4 && c->pl[nq]; nq++) {
		post_send(&q->p.b, q->bmr, q->bbuf + 2048 + 256 * nq, c->pl[nq],
			  SEND_ID + (uint64_t)q->nbsend++);
		drop += mk_wire_len(pos + drop, 18 + (size_t)c->pl[nq]);
	}
	ck_assert_int_eq(rdmap_qp_progress(&q->p.b.qp), (int)nq);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&q->p.mpa.rsp.c), drop);
	ck_assert_msg(rgeo(c->at, drop) == c->geo, "%s: geometry 0x%x, meant 0x%x", c->name,
		      rgeo(c->at, drop), c->geo);
	/* the bad Write reaches b alone first: b's Sends are still queued */
	rq_bad_write(q);
	ck_assert_int_eq(rdmap_qp_progress(&q->p.a.qp), 1);
	{
		size_t n = tp_drain(&q->p.mpa.ini, q->w[0] + q->wl[0], WIRE_CAP - q->wl[0]);

		ck_assert_int_lt(rp_inject(&q->p, &q->p.b, q->w[0] + q->wl[0], n), 0);
		q->wl[0] += n;
	}
	rq_pump(q);
	rq_check(q, nfill, c->name);
	ck_assert_uint_eq(q->wl[1], c->at + mk_wire_len(c->at, 18 + 4 + 2 + 14));
	/* b's queued Sends were flushed, none completed */
	ck_assert_int_eq(q->p.b.nswc, q->nbsend);
	for (size_t i = nfill; i < (size_t)q->nbsend; i++)
		ck_assert_int_eq(q->p.b.swc[i].status, RDMAP_WC_WR_FLUSH_ERR);
	rq_free(q);
}
END_TEST

/*
 * The peer stalls: the first of b's queued Sends went out in part, a send
 * of the rest is in flight (io_busy) when a's bad Write arrives.  The
 * TERMINATE waits for that send to end, then follows the rest of the Send
 * that had started, whose markers and the TERMINATE's must all hold.
 */
static const struct rcase scases[] = {
	{"partial Send ends at a marker", 700, {300, 100}, 40, 100, G_P0 | G_MK_DROP},
	{"partial Send, TERMINATE across a marker",
	 1900,
	 {116, 200, 200},
	 20,
	 30,
	 G_STRADDLE | G_MK_DROP},
	{"sent part ends inside a marker", 400, {150, 150}, 114, 2, 0},
	{"in-flight send takes nothing", 2568, {100, 100}, 8, 0, 0},
};
#define NSCASES (int)(sizeof(scases) / sizeof(scases[0]))

START_TEST(rdmap_term_stalled)
{
	const struct rcase *c = &scases[_i / 2];
	int crc = _i % 2;
	struct rq *q;
	struct mpa_conn *m;
	struct iovec iov[8];
	size_t nq = 0, nfill, first, moved = 0;
	uint64_t drop = 0, pos;
	int n;

	q = rq_new(crc, 1);
	m = &q->p.mpa.rsp.c;
	rq_prelude(q, c->at);
	nfill = (size_t)q->nbsend;
	for (; nq < 4 && c->pl[nq]; nq++)
		post_send(&q->p.b, q->bmr, q->bbuf + 2048 + 256 * nq, c->pl[nq],
			  SEND_ID + (uint64_t)q->nbsend++);
	post_recv(&q->p.a, q->amr, q->abuf, A_RECV_LEN, RECV_ID + 100);
	ck_assert_int_eq(rdmap_qp_progress(&q->p.b.qp), (int)nq);
	first = mk_wire_len(c->at, 18 + (size_t)c->pl[0]);
	pos = c->at + first;
	for (size_t i = 1; i < nq; i++) {
		size_t k = mk_wire_len(pos, 18 + (size_t)c->pl[i]);

		drop += k;
		pos += k;
	}
	ck_assert_uint_eq(mpa_tx_pending_bytes(m), first + drop);
	ck_assert_uint_lt(c->partial + c->adv, first);
	ck_assert_msg(rgeo(c->at + first, drop) == c->geo, "%s: geometry 0x%x, meant 0x%x", c->name,
		      rgeo(c->at + first, drop), c->geo);
	/* part of the first Send reaches a; then a send of everything queued
	 * is in flight, and the peer takes nothing more for now */
	q->wl[1] += mw_gather(m, q->w[1] + q->wl[1], c->partial, iov, 8);
	ck_assert_int_eq(rp_inject(&q->p, &q->p.a, q->w[1] + c->at, c->partial),
			 (ssize_t)c->partial);
	rdmap_qp_set_io_busy(&q->p.b.qp, 1);
	n = mpa_tx_pending(m, iov, 8);
	ck_assert_int_eq(n, (int)nq);
	/* the bad Write arrives meanwhile */
	rq_bad_write(q);
	ck_assert_int_eq(rdmap_qp_progress(&q->p.a.qp), 1);
	{
		size_t k = tp_drain(&q->p.mpa.ini, q->w[0] + q->wl[0], WIRE_CAP - q->wl[0]);

		ck_assert_int_lt(rp_inject(&q->p, &q->p.b, q->w[0] + q->wl[0], k), 0);
		q->wl[0] += k;
	}
	/* no TERMINATE under a send in flight */
	ck_assert_int_eq(rdmap_qp_progress(&q->p.b.qp), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(m), first - c->partial + drop);
	/* the send ends having taken c->adv octets; the engine goes idle */
	for (int i = 0; i < n && moved < c->adv; i++) {
		size_t k = iov[i].iov_len < c->adv - moved ? iov[i].iov_len : c->adv - moved;

		memcpy(q->w[1] + q->wl[1] + moved, iov[i].iov_base, k);
		moved += k;
	}
	ck_assert_int_eq(mpa_tx_advance(m, c->adv), 0);
	ck_assert_int_eq(rp_inject(&q->p, &q->p.a, q->w[1] + q->wl[1], c->adv), (ssize_t)c->adv);
	q->wl[1] += c->adv;
	rdmap_qp_set_io_busy(&q->p.b.qp, 0);
	rq_pump(q);
	/* the Send that had started went out whole, then the TERMINATE */
	rq_check(q, nfill + 1, c->name);
	ck_assert_uint_eq(q->wl[1], c->at + first + mk_wire_len(c->at + first, 18 + 4 + 2 + 14));
	/* a received that Send before the TERMINATE */
	ck_assert_int_ge(q->p.a.nrwc, (int)nfill + 1);
	ck_assert_uint_eq(q->p.a.rwc[nfill].wr_id, RECV_ID + 100);
	ck_assert_int_eq(q->p.a.rwc[nfill].status, RDMAP_WC_SUCCESS);
	ck_assert_uint_eq(q->p.a.rwc[nfill].byte_len, c->pl[0]);
	ck_assert_mem_eq(q->abuf, q->bbuf + 2048, c->pl[0]);
	rq_free(q);
}
END_TEST

/* The codec itself against RFC 5044 Figures 5 and 6 (annotated hex dumps). */
START_TEST(codec_rfc_figures)
{
	uint8_t fig5[64], fig6[64], plain[128], w[128], send[48];
	char why[160];
	size_t n5, n6, n;
	ssize_t pl;

	n5 = tu_hex("00 00 00 00  00 2a 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"
		    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		    " 52 23 99 83",
		    fig5, sizeof(fig5));
	n6 = tu_hex("00 2a 41 43 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 00  00 00 00 14"
		    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		    " 84 92 58 98",
		    fig6, sizeof(fig6));
	/* Figure 5: the first FPDU of the stream, a marker before it */
	memset(send, 0, sizeof(send));
	tu_hex("00 2a 41 43 00 00 00 00 00 00 00 00 00 00 00 01", send, sizeof(send));
	put_le32(send + 44, 0);
	n = tu_mk_wrap(send, 48, 0, 1, w);
	ck_assert_uint_eq(n, n5);
	ck_assert_mem_eq(w, fig5, n5);
	/* Figure 6: the second FPDU at 0x1ec, a marker at 0x200 inside it */
	send[15] = 2;
	n = tu_mk_wrap(send, 48, 0x1ec, 1, w);
	ck_assert_uint_eq(n, n6);
	ck_assert_mem_eq(w, fig6, n6);
	ck_assert_uint_eq(mk_wire_len(0x1ec, 42), n6);
	/* unwrap sees Figure 5 as a stream and finds nothing wrong */
	pl = tu_mk_unwrap(fig5, n5, 1, plain, sizeof(plain), why, sizeof(why));
	ck_assert_msg(pl == 48, "%s", why);
	/* a wrong FPDUPTR, a missing marker, a bad CRC are all found */
	fig5[3] = 4;
	ck_assert_int_lt(tu_mk_unwrap(fig5, n5, 0, plain, sizeof(plain), why, sizeof(why)), 0);
	ck_assert_int_lt(tu_mk_unwrap(fig5 + 4, n5 - 4, 0, plain, sizeof(plain), why, sizeof(why)),
			 0);
	fig5[3] = 0;
	fig5[n5 - 1] ^= 1;
	ck_assert_int_lt(tu_mk_unwrap(fig5, n5, 1, plain, sizeof(plain), why, sizeof(why)), 0);
	ck_assert_int_eq(tu_mk_unwrap(fig5, n5, 0, plain, sizeof(plain), why, sizeof(why)), 48);
}
END_TEST

Suite *mpa_markers_err_suite(void)
{
	Suite *s = suite_create("mpa_markers_err");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, codec_rfc_figures);
	suite_add_tcase(s, tc);
	tc = tcase_create("mpa");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, discard_then_term, 0, 2 * NDCASES);
	tcase_add_loop_test(tc, rx_misplaced, 0, 2 * NDCASES);
	suite_add_tcase(s, tc);
	tc = tcase_create("rdmap");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, rdmap_term, 0, 4 * NRCASES);
	tcase_add_loop_test(tc, rdmap_term_stalled, 0, 2 * NSCASES);
	suite_add_tcase(s, tc);
	return s;
}
