/* SPDX-License-Identifier: MIT */
/*
 * MPA connection setup: the Request/Reply frames (RFC 5044 §7.1.1, RFC 6581
 * §6 and §9), the RTR messages (RFC 6581 §5, §9.2), the MULPDU (RFC 5044
 * §3, §4.5) and the handshake state machine (RFC 5044 §7.1.2, RFC 6581
 * §9), checked byte for byte against what Linux siw sent in the project's
 * reference captures (vectors in tests/data, made by
 * tests/fuzz/make_seeds.py).
 */
#include "tests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"
#include "mpa.h"

/* ------------------------------------------------------------------ */
/* Captured frames (Linux siw 6.1, rping; the NFS one with RFC 8797 data) */

struct siw_cap {
	const char *name; /* file stem in tests/data */
	const char *req;  /* hex, the whole Request */
	const char *rep;  /* hex, the whole Reply */
	/* fields of both frames */
	uint8_t rev;
	int crc;
	int enhanced;
	int p2p;
	unsigned req_rtr, rep_rtr;
	uint16_t req_ird, req_ord, rep_ird, rep_ord;
	uint16_t ulp_pd_len;
};

#define HEX_REQ_KEY "4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 "
#define HEX_REP_KEY "4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65 "

static const struct siw_cap caps[] = {
	{"siw-rping-rev1", HEX_REQ_KEY "00 01 00 00", HEX_REP_KEY "00 01 00 00", 1, 0, 0, 0, 0, 0,
	 0, 0, 0, 0, 0},
	{"siw-rping-rev2-nocrc", HEX_REQ_KEY "10 02 00 04 00 01 00 01",
	 HEX_REP_KEY "10 02 00 04 00 01 00 01", 2, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0},
	{"siw-rping-rev2-crc", HEX_REQ_KEY "50 02 00 04 00 01 00 01",
	 HEX_REP_KEY "50 02 00 04 00 01 00 01", 2, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0},
	/* A=1; the initiator offers Write and Read (C, D), siw picks Write */
	{"siw-rping-rev2-p2p-rtr", HEX_REQ_KEY "10 02 00 04 80 01 c0 01",
	 HEX_REP_KEY "10 02 00 04 80 01 80 01", 2, 0, 1, 1, MPA_RTR_WRITE | MPA_RTR_READ,
	 MPA_RTR_WRITE, 1, 1, 1, 1, 0},
	/* NFS client (IRD 128, ORD 0) and server: 8 octets of RFC 8797 data */
	{"linux-nfs-over-siw-v3-v42", HEX_REQ_KEY "10 02 00 0c 00 80 00 00 f6 ab 0e 18 01 01 03 03",
	 HEX_REP_KEY "10 02 00 0c 00 00 00 80 f6 ab 0e 18 01 00 03 03", 2, 0, 1, 0, 0, 0, 128, 0, 0,
	 128, 8},
};
#define NCAPS (int)(sizeof(caps) / sizeof(caps[0]))

/* The zero-length Write RTR frame siw sent in siw-rping-rev2-p2p-rtr.pcap. */
static const char siw_rtr_hex[] = "00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00"
				  "00 00 00 00";

/* ------------------------------------------------------------------ */
/* Helpers */

static uint8_t *read_vector(const char *stem, const char *ext, size_t *len)
{
	const char *dir = getenv("UIW_TEST_DATA");
	char path[512];
	uint8_t *buf;
	long sz;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%s", dir && *dir ? dir : "tests/data", stem, ext);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "missing test vector %s (tests/fuzz/make_seeds.py makes it)",
		      path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	ck_assert_int_ge(sz, 0);
	rewind(f);
	buf = malloc((size_t)sz + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

/* One FPDU without markers: ULPDU_Length, @ulpdu, PAD, CRC (or zero). */
static size_t mk_fpdu(uint8_t *out, const uint8_t *ulpdu, size_t len, int crc)
{
	size_t n = MPA_HDR_LEN + len;

	put_be16(out, (uint16_t)len);
	memcpy(out + MPA_HDR_LEN, ulpdu, len);
	while (n % 4)
		out[n++] = 0;
	put_le32(out + n, crc ? crc32c(out, n) : 0);
	return n + MPA_CRC_LEN;
}

/* Number of FPDUs in a marker-free stream, walking ULPDU_Length. */
static size_t count_fpdus(const uint8_t *s, size_t len)
{
	size_t off = 0, n = 0;

	while (off + 2 <= len) {
		size_t f = MPA_HDR_LEN + get_be16(s + off);

		f += (4 - f % 4) % 4 + MPA_CRC_LEN;
		ck_assert_uint_le(off + f, len);
		off += f;
		n++;
	}
	ck_assert_uint_eq(off, len);
	return n;
}

static void assert_term(const struct mpa_conn *c, uint8_t want)
{
	uint8_t layer = 0xff, etype = 0xff, ecode = 0xff;

	ck_assert_int_eq(c->state, MPA_S_ERROR);
	ck_assert_msg(mpa_conn_term(c, &layer, &etype, &ecode) == 1, "no TERMINATE recorded");
	ck_assert_uint_eq(layer, MPA_TERM_LAYER_LLP);
	ck_assert_uint_eq(etype, MPA_TERM_ETYPE_LLP);
	ck_assert_msg(ecode == want, "ecode %u (%s), want %u (%s)", ecode, mpa_ecode_name(ecode),
		      want, mpa_ecode_name(want));
}

static void assert_no_term(const struct mpa_conn *c)
{
	uint8_t layer, etype, ecode;

	ck_assert_int_eq(mpa_conn_term(c, &layer, &etype, &ecode), 0);
}

/* ------------------------------------------------------------------ */
/* Two endpoints and the layer above them */

enum { ANS_ACCEPT, ANS_REJECT, ANS_LATER };

#define HS_LOG 16 /* FPDUs whose header and flags are kept */

struct hs_side {
	struct mpa_conn c;
	/* what the layer above does */
	int answer; /* responder, in the request upcall */
	const void *ans_pd;
	size_t ans_pd_len;
	uint16_t ans_ird, ans_ord;
	int ans_ret;
	uint64_t now;	    /* passed to mpa_conn_accept() */
	int queue_in_reply; /* initiator: queue one FPDU in the reply upcall */
	/* what it saw */
	int nreq, nrep, nbegin, nend;
	struct mpa_rr rr;
	uint8_t pd[MPA_PD_MAX];
	unsigned begin_flags[HS_LOG], end_flags[HS_LOG];
	uint8_t hdr[HS_LOG][MPA_RX_HDR_MAX];
	size_t hdr_len[HS_LOG], ulpdu_len[HS_LOG];
	uint8_t payload[72 * 1024];
	size_t payload_len, payload_cur;
};

struct hs_pair {
	struct hs_side ini, rsp;
};

/* A zero-length tagged Write (DDP/RDMAP header only), STag 0x1234. */
static const uint8_t write_hdr[14] = {0xC1, 0x40, 0, 0, 0x12, 0x34};
/* An untagged Send, last, QN 0, MSN 1. */
static const uint8_t send_hdr[18] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

static void hs_record(struct hs_side *s, const struct mpa_rr *rr)
{
	s->rr = *rr;
	ck_assert_uint_le(rr->ulp_pd_len, MPA_PD_MAX);
	memcpy(s->pd, rr->ulp_pd, rr->ulp_pd_len);
	s->rr.ulp_pd = s->pd;
}

static void hs_request(void *arg, const struct mpa_rr *req)
{
	struct hs_side *s = arg;

	s->nreq++;
	hs_record(s, req);
	if (s->answer == ANS_ACCEPT)
		s->ans_ret = mpa_conn_accept(&s->c, s->ans_pd, s->ans_pd_len, s->ans_ird,
					     s->ans_ord, s->now);
	else if (s->answer == ANS_REJECT)
		s->ans_ret = mpa_conn_reject(&s->c, s->ans_pd, s->ans_pd_len);
}

static void hs_reply(void *arg, const struct mpa_rr *rep)
{
	struct hs_side *s = arg;

	s->nrep++;
	hs_record(s, rep);
	if (s->queue_in_reply && !rep->reject)
		ck_assert_int_eq(mpa_tx_fpdu(&s->c, write_hdr, sizeof(write_hdr), NULL, 0, NULL),
				 0);
}

static int hs_rx_hdr_len(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	(void)arg;
	(void)have;
	(void)ulpdu_len;
	return (hdr[0] & 0x80) ? 14 : 18;
}

static int hs_rx_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		       unsigned flags, struct iovec *dst, int *ndst)
{
	struct hs_side *s = arg;
	size_t pl = ulpdu_len - hdr_len;
	int i = s->nbegin++ % HS_LOG;

	/* long replays: keep the last HS_LOG headers, recycle the payload */
	if (s->payload_len + pl > sizeof(s->payload))
		s->payload_len = 0;
	s->begin_flags[i] = flags;
	memcpy(s->hdr[i], hdr, hdr_len);
	s->hdr_len[i] = hdr_len;
	s->ulpdu_len[i] = ulpdu_len;
	s->payload_cur = pl;
	*ndst = 0;
	if (pl) {
		dst[0].iov_base = s->payload + s->payload_len;
		dst[0].iov_len = pl;
		*ndst = 1;
	}
	return 0;
}

static int hs_rx_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		     unsigned flags)
{
	struct hs_side *s = arg;
	int i = s->nend++ % HS_LOG;

	ck_assert_int_eq(s->nend, s->nbegin);
	ck_assert_uint_eq(hdr_len, s->hdr_len[i]);
	ck_assert_uint_eq(ulpdu_len, s->ulpdu_len[i]);
	ck_assert_mem_eq(hdr, s->hdr[i], hdr_len);
	s->end_flags[i] = flags;
	s->payload_len += s->payload_cur;
	return 0;
}

static const struct mpa_ops hs_ops = {
	.request = hs_request,
	.reply = hs_reply,
	.rx_hdr_len = hs_rx_hdr_len,
	.rx_begin = hs_rx_begin,
	.rx_end = hs_rx_end,
};

static void hs_cfgs(struct mpa_cfg *a, struct mpa_cfg *b)
{
	mpa_cfg_init(a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(b, MPA_ROLE_RESPONDER);
	a->rx_hdr_min = b->rx_hdr_min = 14;
}

/* Initialise and start both sides; the responder accepts with "acc", 8, 8. */
static void hs_init(struct hs_pair *p, const struct mpa_cfg *a, const struct mpa_cfg *b,
		    const void *pd, size_t pd_len)
{
	memset(p, 0, sizeof(*p));
	p->rsp.answer = ANS_ACCEPT;
	p->rsp.ans_pd = "acc";
	p->rsp.ans_pd_len = 3;
	p->rsp.ans_ird = 8;
	p->rsp.ans_ord = 8;
	ck_assert_int_eq(mpa_conn_init(&p->ini.c, a, &hs_ops, &p->ini), 0);
	ck_assert_int_eq(mpa_conn_init(&p->rsp.c, b, &hs_ops, &p->rsp), 0);
	ck_assert_int_eq(mpa_conn_start(&p->rsp.c, NULL, 0, 0), 0);
	ck_assert_int_eq(mpa_conn_start(&p->ini.c, pd, pd_len, 0), 0);
}

static void hs_destroy(struct hs_pair *p)
{
	mpa_conn_destroy(&p->ini.c);
	mpa_conn_destroy(&p->rsp.c);
}

/* Take everything @s has to send (marking it sent) into @wire. */
static size_t hs_take(struct hs_side *s, uint8_t *wire, size_t cap)
{
	size_t total = 0;
	struct iovec iov[64];
	int n;

	while ((n = mpa_tx_pending(&s->c, iov, 64)) > 0) {
		size_t moved = 0;

		for (int i = 0; i < n; i++) {
			ck_assert_uint_le(total + moved + iov[i].iov_len, cap);
			memcpy(wire + total + moved, iov[i].iov_base, iov[i].iov_len);
			moved += iov[i].iov_len;
		}
		ck_assert_int_eq(mpa_tx_advance(&s->c, moved), 0);
		total += moved;
	}
	ck_assert_uint_eq(mpa_tx_pending_bytes(&s->c), 0);
	return total;
}

/*
 * Feed @len octets to @s in pieces of @step octets (0: all at once) through
 * mpa_rx() (@lend 0) or mpa_rx_lend()/mpa_rx_ack() (@lend 1).  Returns the
 * octets taken or the first error.
 */
static ssize_t hs_feed(struct hs_side *s, const uint8_t *in, size_t len, size_t step, int lend)
{
	size_t off = 0;

	while (off < len) {
		size_t k = step && step < len - off ? step : len - off;

		if (!lend) {
			ssize_t r = mpa_rx(&s->c, in + off, k);

			if (r < 0)
				return r;
			off += (size_t)r;
			if ((size_t)r < k)
				break;
			continue;
		}
		for (size_t used = 0; used < k;) {
			struct iovec iov[8];
			int n = mpa_rx_lend(&s->c, iov, 8), ret;
			size_t got = 0;

			if (n < 0)
				return n;
			if (n == 0)
				return (ssize_t)(off + used);
			for (int i = 0; i < n && used + got < k; i++) {
				size_t m = iov[i].iov_len;

				if (m > k - used - got)
					m = k - used - got;
				memcpy(iov[i].iov_base, in + off + used + got, m);
				got += m;
			}
			ck_assert_uint_gt(got, 0);
			ret = mpa_rx_ack(&s->c, got);
			if (ret < 0)
				return ret;
			used += got;
		}
		off += k;
	}
	return (ssize_t)off;
}

/* Move what @from has to @to; everything must be taken. */
static size_t hs_move(struct hs_side *from, struct hs_side *to, size_t step, int lend)
{
	static uint8_t wire[72 * 1024];
	size_t n = hs_take(from, wire, sizeof(wire));

	ck_assert_int_eq(hs_feed(to, wire, n, step, lend), (ssize_t)n);
	return n;
}

/* Request, Reply (and in peer-to-peer mode the RTR) with whole transfers. */
static void hs_run(struct hs_pair *p)
{
	hs_move(&p->ini, &p->rsp, 0, 0);
	hs_move(&p->rsp, &p->ini, 0, 0);
	ck_assert_int_eq(p->ini.c.state, MPA_S_FULL);
	ck_assert_int_eq(p->rsp.c.state, MPA_S_FULL);
	if (p->ini.c.p2p)
		hs_move(&p->ini, &p->rsp, 0, 0);
}

/* One FPDU each way (initiator first, RFC 5044 §7.1.2 rule 4), delivered. */
static void hs_exchange(struct hs_pair *p)
{
	static const uint8_t data[5] = "hello";
	struct iovec iov = {(void *)(uintptr_t)data, sizeof(data)};
	int ni = p->ini.nend, nr = p->rsp.nend;

	ck_assert_int_eq(mpa_tx_fpdu(&p->ini.c, send_hdr, 18, &iov, 1, NULL), 0);
	hs_move(&p->ini, &p->rsp, 0, 0);
	ck_assert_int_eq(p->rsp.nend, nr + 1);
	ck_assert_mem_eq(p->rsp.payload + p->rsp.payload_len - 5, data, 5);
	ck_assert_int_eq(mpa_tx_fpdu(&p->rsp.c, send_hdr, 18, &iov, 1, NULL), 0);
	hs_move(&p->rsp, &p->ini, 0, 0);
	ck_assert_int_eq(p->ini.nend, ni + 1);
	ck_assert_mem_eq(p->ini.payload + p->ini.payload_len - 5, data, 5);
}

/* ------------------------------------------------------------------ */
/* mpa_rr_build / mpa_rr_parse */

static void assert_rr_eq(const struct mpa_rr *got, const struct mpa_rr *want)
{
	ck_assert_int_eq(got->reply, want->reply);
	ck_assert_int_eq(got->markers, want->markers);
	ck_assert_int_eq(got->crc, want->crc);
	ck_assert_int_eq(got->reject, want->reply ? want->reject : 0);
	ck_assert_uint_eq(got->rev, want->rev);
	ck_assert_int_eq(got->enhanced, want->enhanced);
	ck_assert_int_eq(got->p2p, want->p2p);
	ck_assert_uint_eq(got->rtr, want->rtr);
	ck_assert_uint_eq(got->ird, want->enhanced ? want->ird : 0);
	ck_assert_uint_eq(got->ord, want->enhanced ? want->ord : 0);
	ck_assert_uint_eq(got->ulp_pd_len, want->ulp_pd_len);
	if (want->ulp_pd_len)
		ck_assert_mem_eq(got->ulp_pd, want->ulp_pd, want->ulp_pd_len);
}

/*
 * Every flag combination, private-data length, p2p/RTR setting and IRD/ORD
 * value: the bytes are exactly RFC 5044 Figure 8 (with RFC 6581 §6, §9) and
 * parse back to the same fields.  _i: 0 revision 1, 1 revision 2 without S,
 * 2 revision 2 enhanced.
 */
START_TEST(rr_roundtrip)
{
	static const uint16_t pd_lens[] = {0, 1, 252, 256, 508, 512};
	static const uint16_t irds[] = {0, 1, 0x3FFF};
	static const struct {
		int p2p;
		unsigned rtr;
	} modes[] = {{0, 0},
		     {1, 0},
		     {1, MPA_RTR_SEND},
		     {1, MPA_RTR_WRITE},
		     {1, MPA_RTR_READ},
		     {1, MPA_RTR_WRITE | MPA_RTR_READ},
		     {1, MPA_RTR_ALL}};
	uint8_t pd[MPA_PD_MAX], buf[MPA_RR_HDR_LEN + MPA_PD_MAX + 8];
	uint64_t rng = tu_seed() ^ 0x4d5041;
	int enhanced = _i == 2;
	unsigned count = 0;
	size_t nl = sizeof(pd_lens) / sizeof(pd_lens[0]);
	size_t nm = enhanced ? sizeof(modes) / sizeof(modes[0]) : 1, nr = enhanced ? 9 : 1;

	tu_rand_fill(&rng, pd, sizeof(pd));
	/* one index over reply x flags x length x mode x IRD/ORD */
	for (size_t k = 0; k < 2 * 8 * nl * nm * nr; k++) {
		size_t r = k % nr, m = k / nr % nm, l = k / nr / nm % nl;
		unsigned f = (unsigned)(k / nr / nm / nl % 8);
		int reply = (int)(k / nr / nm / nl / 8);
		struct mpa_rr rr = {0}, out;
		size_t wire_pd = pd_lens[l] + (enhanced ? 4u : 0u);
		ssize_t n;

		rr.reply = reply;
		rr.markers = !!(f & 1);
		rr.crc = !!(f & 2);
		rr.reject = !!(f & 4);
		rr.rev = _i == 0 ? 1 : 2;
		rr.enhanced = enhanced;
		rr.p2p = modes[m].p2p;
		rr.rtr = modes[m].rtr;
		rr.ird = irds[r % 3];
		rr.ord = irds[r / 3];
		rr.ulp_pd = pd;
		rr.ulp_pd_len = pd_lens[l];
		memset(buf, 0xEE, sizeof(buf));
		n = mpa_rr_build(buf, sizeof(buf), &rr);
		if (wire_pd > MPA_PD_MAX) {
			ck_assert_int_eq(n, -EMSGSIZE);
			continue;
		}
		ck_assert_int_eq(n, (ssize_t)(MPA_RR_HDR_LEN + wire_pd));
		/* the octets, field by field */
		ck_assert_mem_eq(buf, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);
		ck_assert_uint_eq(buf[16], (rr.markers ? 0x80 : 0) | (rr.crc ? 0x40 : 0) |
						   (reply && rr.reject ? 0x20 : 0) |
						   (enhanced ? 0x10 : 0));
		ck_assert_uint_eq(buf[17], rr.rev);
		ck_assert_uint_eq(get_be16(buf + 18), wire_pd);
		if (enhanced) {
			uint16_t w0 = get_be16(buf + 20), w1 = get_be16(buf + 22);

			ck_assert_uint_eq(w0 & 0x3FFF, rr.ird);
			ck_assert_uint_eq(w1 & 0x3FFF, rr.ord);
			ck_assert_uint_eq(!!(w0 & 0x8000), rr.p2p);
			ck_assert_uint_eq(!!(w0 & 0x4000), !!(rr.rtr & MPA_RTR_SEND));
			ck_assert_uint_eq(!!(w1 & 0x8000), !!(rr.rtr & MPA_RTR_WRITE));
			ck_assert_uint_eq(!!(w1 & 0x4000), !!(rr.rtr & MPA_RTR_READ));
		}
		if (pd_lens[l])
			ck_assert_mem_eq(buf + 20 + (enhanced ? 4 : 0), pd, pd_lens[l]);
		ck_assert_uint_eq(buf[n], 0xEE); /* nothing written past the frame */
		memset(&out, 0x5A, sizeof(out));
		ck_assert_int_eq(mpa_rr_parse(buf, (size_t)n, reply, 0, &out), n);
		assert_rr_eq(&out, &rr);
		ck_assert_uint_eq(out.pd_len, wire_pd);
		ck_assert_ptr_eq(out.ulp_pd, buf + 20 + (enhanced ? 4 : 0));
		count++;
	}
	/* 2 x 8 x 6 frames, or with S 2 x 8 x 5 x 7 x 9 (no 512 + 4) */
	ck_assert_uint_eq(count, enhanced ? 5040 : 96);
}
END_TEST

/* Arguments mpa_rr_build() refuses, and a short buffer it never overruns. */
START_TEST(rr_build_errors)
{
	uint8_t pd[MPA_PD_MAX + 1] = {0}, buf[600];
	struct mpa_rr rr = {0};

	rr.rev = 0;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.rev = 3;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.rev = 1;
	rr.enhanced = 1;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.rev = 2;
	rr.rtr = MPA_RTR_WRITE; /* RFC 6581 §9.2: B, C, D need A */
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.p2p = 1;
	rr.rtr = 8;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.rtr = 0;
	rr.ird = 0x4000;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.ird = 0;
	rr.ord = 0x4000;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.ord = 0;
	rr.enhanced = 0; /* p2p needs the IRD/ORD words */
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EINVAL);
	rr.p2p = 0;
	rr.ulp_pd = pd;
	rr.ulp_pd_len = 513;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EMSGSIZE);
	rr.enhanced = 1;
	rr.ulp_pd_len = 509;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), -EMSGSIZE);
	rr.ulp_pd_len = 508;
	ck_assert_int_eq(mpa_rr_build(buf, sizeof(buf), &rr), 532);
	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(mpa_rr_build(buf, 531, &rr), -ENOBUFS);
	ck_assert_int_eq(mpa_rr_build(buf, 0, &rr), -ENOBUFS);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xEE);
}
END_TEST

/* The captured siw frames decode to the expected fields, and building the
 * same fields gives the same octets. */
START_TEST(rr_siw_frames)
{
	const struct siw_cap *cp = &caps[_i];
	uint8_t want[2][64], got[64];
	size_t wl[2];

	wl[0] = tu_hex(cp->req, want[0], sizeof(want[0]));
	wl[1] = tu_hex(cp->rep, want[1], sizeof(want[1]));
	/* the hex above is what make_seeds.py took out of the capture */
	for (int reply = 0; reply < 2; reply++) {
		size_t fl;
		uint8_t *f = read_vector(cp->name, reply ? "rep" : "req", &fl);

		ck_assert_uint_eq(fl, wl[reply]);
		ck_assert_mem_eq(f, want[reply], fl);
		free(f);
	}
	for (int reply = 0; reply < 2; reply++) {
		struct mpa_rr rr, exp = {0};
		size_t len = wl[reply];
		uint8_t *copy = malloc(len); /* exactly the frame: ASan sees overreads */

		ck_assert_ptr_nonnull(copy);
		memcpy(copy, want[reply], len);
		exp.reply = reply;
		exp.crc = cp->crc;
		exp.rev = cp->rev;
		exp.enhanced = cp->enhanced;
		exp.p2p = cp->p2p;
		exp.rtr = reply ? cp->rep_rtr : cp->req_rtr;
		exp.ird = reply ? cp->rep_ird : cp->req_ird;
		exp.ord = reply ? cp->rep_ord : cp->req_ord;
		exp.ulp_pd = want[reply] + 20 + (cp->enhanced ? 4 : 0);
		exp.ulp_pd_len = cp->ulp_pd_len;
		ck_assert_int_eq(mpa_rr_parse(copy, len, reply, 0, &rr), (ssize_t)len);
		assert_rr_eq(&rr, &exp);
		/* siw's private-data cap is 256 */
		ck_assert_int_eq(mpa_rr_parse(copy, len, reply, 256, &rr), (ssize_t)len);
		exp.ulp_pd = rr.ulp_pd;
		ck_assert_int_eq(mpa_rr_build(got, sizeof(got), &rr), (ssize_t)len);
		ck_assert_mem_eq(got, want[reply], len);
		free(copy);
	}
}
END_TEST

/* The P2P RTR frame siw sent is mpa_rtr_encode(MPA_RTR_WRITE), framed. */
START_TEST(rr_siw_rtr_frame)
{
	uint8_t want[32], ulpdu[64], fpdu[80];
	size_t wl = tu_hex(siw_rtr_hex, want, sizeof(want));
	ssize_t n = mpa_rtr_encode(MPA_RTR_WRITE, ulpdu, sizeof(ulpdu));

	ck_assert_int_eq(n, 14);
	ck_assert_uint_eq(get_be16(want), 0x000e);
	ck_assert_uint_eq(mk_fpdu(fpdu, ulpdu, (size_t)n, 0), wl);
	ck_assert_mem_eq(fpdu, want, wl);
	ck_assert(mpa_rtr_match(MPA_RTR_WRITE, want + 2, 14, 14));
}
END_TEST

static void frame_with_pd(uint8_t *buf, int reply, uint8_t flags, uint8_t rev, uint16_t pd_len)
{
	memcpy(buf, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);
	buf[16] = flags;
	buf[17] = rev;
	put_be16(buf + 18, pd_len);
	for (unsigned i = 0; i < pd_len && i < MPA_PD_MAX + 64; i++)
		buf[20 + i] = (uint8_t)(i * 7 + 1);
}

/* Keys, revisions, PD_Length caps and the enhanced minimum (RFC 5044
 * §7.1.1, RFC 6581 §6). */
START_TEST(rr_parse_errors)
{
	static uint8_t buf[MPA_RR_HDR_LEN + 600];
	struct mpa_rr rr;
	int reply = _i;

	/* good frame as a control */
	frame_with_pd(buf, reply, 0x10, 2, 4);
	ck_assert_int_eq(mpa_rr_parse(buf, 24, reply, 0, &rr), 24);
	/* the other key: an Initiator/Initiator or Responder/Responder start */
	ck_assert_int_eq(mpa_rr_parse(buf, 24, !reply, 0, &rr), -EBADMSG);
	/* any other key */
	for (int i = 0; i < MPA_KEY_LEN; i++) {
		buf[i] ^= 0x20;
		ck_assert_int_eq(mpa_rr_parse(buf, 24, reply, 0, &rr), -EBADMSG);
		buf[i] ^= 0x20;
	}
	/* revisions other than 1 and 2 (siw also takes 0: we do not) */
	for (int rev = 0; rev < 256; rev++) {
		frame_with_pd(buf, reply, 0, (uint8_t)rev, 0);
		ck_assert_int_eq(mpa_rr_parse(buf, 20, reply, 0, &rr),
				 rev == 1 || rev == 2 ? 20 : -EPROTONOSUPPORT);
	}
	/* PD_Length above 512, whatever pd_max says */
	frame_with_pd(buf, reply, 0, 1, 513);
	ck_assert_int_eq(mpa_rr_parse(buf, 533, reply, 0, &rr), -EMSGSIZE);
	ck_assert_int_eq(mpa_rr_parse(buf, 533, reply, 512, &rr), -EMSGSIZE);
	ck_assert_int_eq(mpa_rr_parse(buf, 533, reply, 600, &rr), -EMSGSIZE);
	/* decided on the header alone */
	ck_assert_int_eq(mpa_rr_parse(buf, 20, reply, 0, &rr), -EMSGSIZE);
	frame_with_pd(buf, reply, 0, 1, 0xFFFF);
	ck_assert_int_eq(mpa_rr_parse(buf, 20, reply, 0, &rr), -EMSGSIZE);
	frame_with_pd(buf, reply, 0, 1, 512);
	ck_assert_int_eq(mpa_rr_parse(buf, 532, reply, 0, &rr), 532);
	/* a configured cap (siw: 256) */
	frame_with_pd(buf, reply, 0, 2, 257);
	ck_assert_int_eq(mpa_rr_parse(buf, 277, reply, 256, &rr), -EMSGSIZE);
	ck_assert_int_eq(mpa_rr_parse(buf, 277, reply, 257, &rr), 277);
	frame_with_pd(buf, reply, 0x10, 2, 256);
	ck_assert_int_eq(mpa_rr_parse(buf, 276, reply, 256, &rr), 276);
	ck_assert_uint_eq(rr.ulp_pd_len, 252);
	/* enhanced needs the IRD/ORD words; revision 1 ignores S */
	for (uint16_t l = 0; l < 4; l++) {
		frame_with_pd(buf, reply, 0x10, 2, l);
		ck_assert_int_eq(mpa_rr_parse(buf, 20 + l, reply, 0, &rr), -EPROTO);
		frame_with_pd(buf, reply, 0x10, 1, l);
		ck_assert_int_eq(mpa_rr_parse(buf, 20 + l, reply, 0, &rr), 20 + l);
		ck_assert_int_eq(rr.enhanced, 0);
		ck_assert_uint_eq(rr.ulp_pd_len, l);
		frame_with_pd(buf, reply, 0x00, 2, l);
		ck_assert_int_eq(mpa_rr_parse(buf, 20 + l, reply, 0, &rr), 20 + l);
	}
	/* Res bits are "not checked on reception"; R only means something in
	 * a Reply */
	frame_with_pd(buf, reply, 0x2F, 1, 0);
	ck_assert_int_eq(mpa_rr_parse(buf, 20, reply, 0, &rr), 20);
	ck_assert_int_eq(rr.reject, reply);
	ck_assert_int_eq(rr.markers | rr.crc, 0);
	/* RFC 6581 §9.2: with A = 0, B, C and D are ignored */
	frame_with_pd(buf, reply, 0x10, 2, 4);
	put_be16(buf + 20, 0x4000 | 7);
	put_be16(buf + 22, 0xC000 | 9);
	ck_assert_int_eq(mpa_rr_parse(buf, 24, reply, 0, &rr), 24);
	ck_assert_int_eq(rr.p2p, 0);
	ck_assert_uint_eq(rr.rtr, 0);
	ck_assert_uint_eq(rr.ird, 7);
	ck_assert_uint_eq(rr.ord, 9);
}
END_TEST

/* Every prefix of a valid frame is incomplete (nothing decoded, nothing read
 * past it); extra octets after it are never taken. */
START_TEST(rr_parse_prefixes)
{
	static const uint16_t lens[] = {0, 1, 4, 100, 256, 512};
	uint8_t frame[MPA_RR_HDR_LEN + MPA_PD_MAX + 16];
	uint16_t pd_len = lens[_i % 6];
	int reply = _i / 6;
	size_t flen = MPA_RR_HDR_LEN + pd_len;
	struct mpa_rr rr, untouched;

	frame_with_pd(frame, reply, pd_len >= 4 ? 0xD0 : 0xC0, pd_len >= 4 ? 2 : 1, pd_len);
	memset(frame + flen, 0xAB, 16);
	for (size_t k = 0; k < flen; k++) {
		uint8_t *p = malloc(k ? k : 1);

		ck_assert_ptr_nonnull(p);
		memcpy(p, frame, k);
		memset(&rr, 0x5A, sizeof(rr));
		memset(&untouched, 0x5A, sizeof(untouched));
		ck_assert_int_eq(mpa_rr_parse(p, k, reply, 0, &rr), -EAGAIN);
		ck_assert_mem_eq(&rr, &untouched, sizeof(rr));
		free(p);
	}
	for (size_t extra = 0; extra <= 16; extra++) {
		ck_assert_int_eq(mpa_rr_parse(frame, flen + extra, reply, 0, &rr), (ssize_t)flen);
		ck_assert_uint_eq(rr.pd_len, pd_len);
		ck_assert_ptr_eq(rr.ulp_pd + rr.ulp_pd_len, frame + flen);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* RTR messages (RFC 6581 §5, §9.2; layouts RFC 5041 §4, RFC 5040 §4) */

START_TEST(rtr_encode_exact)
{
	static const char write_hex[] = "c1 40 00 00 00 01 00 00 00 00 00 00 00 00";
	static const char send_hex[] = "41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00";
	static const char read_hex[] = "41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00"
				       "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00"
				       "00 00 00 01 00 00 00 00 00 00 00 00";
	uint8_t want[64], buf[64];
	size_t wl;

	wl = tu_hex(write_hex, want, sizeof(want));
	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf)), (ssize_t)wl);
	ck_assert_mem_eq(buf, want, wl);
	ck_assert_uint_eq(buf[wl], 0xEE);
	wl = tu_hex(send_hex, want, sizeof(want));
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf)), (ssize_t)wl);
	ck_assert_mem_eq(buf, want, wl);
	wl = tu_hex(read_hex, want, sizeof(want));
	ck_assert_uint_eq(wl, 46);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf)), (ssize_t)wl);
	ck_assert_mem_eq(buf, want, wl);
	/* short buffers, and anything but exactly one kind */
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_WRITE, buf, 13), -ENOBUFS);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_SEND, buf, 17), -ENOBUFS);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_READ, buf, 45), -ENOBUFS);
	for (unsigned k = 0; k < 16; k++)
		if (k != MPA_RTR_SEND && k != MPA_RTR_WRITE && k != MPA_RTR_READ)
			ck_assert_int_eq(mpa_rtr_encode(k, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* Header length a DDP receiver collects for each kind. */
static size_t rtr_hdr_len(unsigned k)
{
	return k == MPA_RTR_WRITE ? 14 : 18;
}

START_TEST(rtr_match_kinds)
{
	static const unsigned kinds[3] = {MPA_RTR_SEND, MPA_RTR_WRITE, MPA_RTR_READ};
	uint8_t m[64];

	for (int a = 0; a < 3; a++) {
		ssize_t n = mpa_rtr_encode(kinds[a], m, sizeof(m));

		ck_assert_int_gt(n, 0);
		for (int b = 0; b < 3; b++)
			ck_assert_int_eq(
				mpa_rtr_match(kinds[b], m, rtr_hdr_len(kinds[a]), (size_t)n),
				a == b);
		/* a longer header view is fine; a shorter one is not enough */
		ck_assert_int_eq(mpa_rtr_match(kinds[a], m, (size_t)n, (size_t)n), 1);
		ck_assert_int_eq(mpa_rtr_match(kinds[a], m, rtr_hdr_len(kinds[a]) - 1, (size_t)n),
				 0);
		/* not a kind */
		ck_assert_int_eq(mpa_rtr_match(0, m, (size_t)n, (size_t)n), 0);
		ck_assert_int_eq(mpa_rtr_match(MPA_RTR_ALL, m, (size_t)n, (size_t)n), 0);
	}
}
END_TEST

/* One field off at a time: never an RTR.  _i: kind index. */
START_TEST(rtr_match_mismatch)
{
	static const unsigned kinds[3] = {MPA_RTR_SEND, MPA_RTR_WRITE, MPA_RTR_READ};
	unsigned k = kinds[_i];
	size_t hl = rtr_hdr_len(k);
	uint8_t m[64], x[64];
	ssize_t n = mpa_rtr_encode(k, m, sizeof(m));

	ck_assert_int_gt(n, 0);
	/* wrong ULPDU length */
	ck_assert_int_eq(mpa_rtr_match(k, m, hl, (size_t)n + 1), 0);
	ck_assert_int_eq(mpa_rtr_match(k, m, hl, (size_t)n - 1), 0);
	ck_assert_int_eq(mpa_rtr_match(k, m, hl, (size_t)n + 4), 0);
	/* other opcodes, other DDP control (tagged/untagged, not last, version) */
	for (unsigned op = 0; op < 16; op++) {
		memcpy(x, m, (size_t)n);
		x[1] = (uint8_t)(0x40 | op);
		if (x[1] != m[1])
			ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
	}
	memcpy(x, m, (size_t)n);
	x[0] ^= 0x40; /* L = 0 */
	ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
	memcpy(x, m, (size_t)n);
	x[0] ^= 0x80; /* T flipped */
	ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
	memcpy(x, m, (size_t)n);
	x[1] ^= 0xC0; /* RDMAP version 0 */
	ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
	if (k == MPA_RTR_WRITE) {
		/* TO not zero */
		for (int i = 6; i < 14; i++) {
			memcpy(x, m, (size_t)n);
			x[i] = 1;
			ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
		}
		/* any STag is a Write RTR (peers other than siw may not use 1) */
		memcpy(x, m, (size_t)n);
		put_be32(x + 2, 0xdeadbeef);
		ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 1);
		return;
	}
	/* QN: Send on 0, Read Request on 1 */
	for (uint32_t qn = 0; qn < 4; qn++) {
		memcpy(x, m, (size_t)n);
		put_be32(x + 6, qn);
		ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n),
				 qn == (k == MPA_RTR_READ ? 1u : 0u));
	}
	/* MSN must be 1: the first message of its queue */
	for (uint32_t msn = 0; msn < 4; msn++) {
		memcpy(x, m, (size_t)n);
		put_be32(x + 10, msn);
		ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), msn == 1);
	}
	memcpy(x, m, (size_t)n);
	put_be32(x + 10, 0x80000001u);
	ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
	/* MO not zero */
	memcpy(x, m, (size_t)n);
	put_be32(x + 14, 4);
	ck_assert_int_eq(mpa_rtr_match(k, x, hl, (size_t)n), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* MULPDU (RFC 5044 §4.5; range §3) */

static uint32_t mulpdu_ref(uint32_t emss, int markers)
{
	int64_t m = (int64_t)emss - (6 + (int64_t)emss % 4);

	if (markers)
		m -= 4 * (((int64_t)emss + 511) / 512);
	/* §4.5: "MUST NOT shrink the MULPDU below 128 octets"; §3: "The range
	 * of MULPDU values MUST be between 128 octets and 64768 octets" */
	if (m < 128)
		m = 128;
	if (m > 64768)
		m = 64768;
	return (uint32_t)m;
}

START_TEST(mulpdu_formula)
{
	/* by hand from the §4.5 formulas */
	ck_assert_uint_eq(mpa_mulpdu(1460, 0), 1454);
	ck_assert_uint_eq(mpa_mulpdu(1460, 1), 1442);
	ck_assert_uint_eq(mpa_mulpdu(1448, 0), 1442);
	ck_assert_uint_eq(mpa_mulpdu(1448, 1), 1430);
	ck_assert_uint_eq(mpa_mulpdu(536, 0), 530);
	ck_assert_uint_eq(mpa_mulpdu(536, 1), 522);
	ck_assert_uint_eq(mpa_mulpdu(513, 1), 513 - (6 + 8 + 1));
	ck_assert_uint_eq(mpa_mulpdu(512, 1), 512 - (6 + 4));
	ck_assert_uint_eq(mpa_mulpdu(1461, 0), 1461 - 7);
	/* small segments: never below 128 */
	ck_assert_uint_eq(mpa_mulpdu(100, 0), 128);
	ck_assert_uint_eq(mpa_mulpdu(100, 1), 128);
	ck_assert_uint_eq(mpa_mulpdu(0, 1), 128);
	ck_assert_uint_eq(mpa_mulpdu(135, 0), 128);
	ck_assert_uint_eq(mpa_mulpdu(136, 0), 130);
	ck_assert_uint_eq(mpa_mulpdu(139, 1), 128);
	ck_assert_uint_eq(mpa_mulpdu(140, 1), 130);
	/* every EMSS below the §3 cap (see mulpdu_max for the rest) */
	for (uint32_t e = 0; e < 64768; e++) {
		ck_assert_uint_eq(mpa_mulpdu(e, 0), mulpdu_ref(e, 0));
		ck_assert_uint_eq(mpa_mulpdu(e, 1), mulpdu_ref(e, 1));
	}
}
END_TEST

/* Loopback MSS: the §4.5 formula gives 65474 (64962 with markers), above
 * the §3 maximum of 64768. */
START_TEST(mulpdu_max)
{
	ck_assert_uint_eq(mpa_mulpdu(65483, 0), 64768);
	ck_assert_uint_eq(mpa_mulpdu(65483, 1), 64768);
	ck_assert_uint_eq(mpa_mulpdu(UINT32_MAX, 0), 64768);
	ck_assert_uint_eq(mpa_mulpdu(UINT32_MAX, 1), 64768);
	for (uint32_t e = 64768; e < 140000; e++) {
		ck_assert_uint_eq(mpa_mulpdu(e, 0), mulpdu_ref(e, 0));
		ck_assert_uint_eq(mpa_mulpdu(e, 1), mulpdu_ref(e, 1));
	}
}
END_TEST

/*
 * A connection never offers the layer above more than 64768 (RFC 5044 §3),
 * whatever tx_ulpdu_max says: a larger FPDU with markers spans more than
 * 65535 octets, and FPDUPTR (16 bits) can no longer point back to its
 * ULPDU_Length, so the receiver sees a marker error.  _i: via tx_ulpdu_max
 * (0) or a jumbo EMSS (1).
 */
START_TEST(mulpdu_conn_max_with_markers)
{
	static uint8_t payload[65536], wire[70000];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct iovec iov;
	uint32_t m;
	size_t n;
	ssize_t r;

	hs_cfgs(&a, &b);
	b.markers = 1; /* the initiator sends with markers */
	if (_i == 0)
		a.tx_ulpdu_max = 65535;
	else
		a.emss = 100000;
	hs_init(&p, &a, &b, NULL, 0);
	hs_run(&p);
	ck_assert(p.ini.c.tx_markers);
	m = mpa_tx_mulpdu(&p.ini.c);
	iov.iov_base = payload;
	iov.iov_len = m - 14;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13);
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, write_hdr, 14, &iov, 1, NULL), 0);
	iov.iov_len++;
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, write_hdr, 14, &iov, 1, NULL), -EMSGSIZE);
	n = hs_take(&p.ini, wire, sizeof(wire));
	r = hs_feed(&p.rsp, wire, n, 4096, _i);
	ck_assert_msg(r == (ssize_t)n,
		      "%u-octet ULPDU with markers (%zu on the wire): error %zd, %s", m, n, r,
		      mpa_ecode_name(p.rsp.c.term_ecode));
	ck_assert_uint_le(n, 65535);
	ck_assert_uint_le(m, 64768);
	ck_assert_uint_ge(m, 64768 - 64);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_FULL);
	ck_assert_int_eq(p.rsp.nend, 1);
	ck_assert_uint_eq(p.rsp.payload_len, m - 14);
	ck_assert_mem_eq(p.rsp.payload, payload, m - 14);
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Handshakes (RFC 5044 §7.1.2) */

/* _i: bit 0 revision 2, bit 1 one octet at a time, bit 2 lend/ack path. */
START_TEST(hs_basic)
{
	struct mpa_cfg a, b;
	struct hs_pair p;
	int rev = (_i & 1) ? 2 : 1;
	size_t step = (_i & 2) ? 1 : 0, x = rev == 2 ? 4 : 0;
	int lend = !!(_i & 4);

	hs_cfgs(&a, &b);
	a.rev = (uint8_t)rev;
	hs_init(&p, &a, &b, "hello", 5);
	ck_assert_int_eq(p.ini.c.state, MPA_S_REP_WAIT);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_WAIT);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 0);
	ck_assert_uint_eq(hs_move(&p.ini, &p.rsp, step, lend), 20 + x + 5);
	ck_assert_int_eq(p.rsp.nreq, 1);
	ck_assert_int_eq(p.rsp.rr.reply, 0);
	ck_assert_uint_eq(p.rsp.rr.rev, rev);
	ck_assert_int_eq(p.rsp.rr.enhanced, rev == 2);
	ck_assert_int_eq(p.rsp.rr.crc, 1);
	ck_assert_uint_eq(p.rsp.rr.ulp_pd_len, 5);
	ck_assert_mem_eq(p.rsp.pd, "hello", 5);
	ck_assert_int_eq(p.rsp.ans_ret, 0);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_FULL);
	ck_assert_uint_eq(hs_move(&p.rsp, &p.ini, step, lend), 20 + x + 3);
	ck_assert_int_eq(p.ini.nrep, 1);
	ck_assert_int_eq(p.ini.rr.reply, 1);
	ck_assert_int_eq(p.ini.rr.reject, 0);
	ck_assert_uint_eq(p.ini.rr.rev, rev);
	ck_assert_mem_eq(p.ini.pd, "acc", 3);
	ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
	ck_assert_uint_eq(p.ini.c.rev, rev);
	ck_assert_uint_eq(p.rsp.c.rev, rev);
	ck_assert_int_eq(p.ini.c.enhanced, rev == 2);
	ck_assert_int_eq(p.rsp.c.enhanced, rev == 2);
	ck_assert(p.ini.c.crc_on && p.rsp.c.crc_on);
	if (rev == 2) {
		/* RFC 6581 §9.1: both see what the other announced */
		ck_assert_uint_eq(p.rsp.c.peer_ird, 16);
		ck_assert_uint_eq(p.rsp.c.peer_ord, 16);
		ck_assert_uint_eq(p.ini.c.peer_ird, 8);
		ck_assert_uint_eq(p.ini.c.peer_ord, 8);
	}
	ck_assert_uint_eq(mpa_conn_next_timeout(&p.ini.c), UINT64_MAX);
	ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), UINT64_MAX);
	hs_exchange(&p);
	hs_destroy(&p);
}
END_TEST

/* C in either frame turns CRCs on for both (RFC 5044 §7.1.1).  _i: bit 0
 * initiator asks, bit 1 responder asks. */
START_TEST(hs_crc)
{
	static const uint8_t data[5] = "12345";
	struct iovec iov = {(void *)(uintptr_t)data, 5};
	int ci = _i & 1, cr = !!(_i & 2), on = ci || cr;
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n;

	hs_cfgs(&a, &b);
	a.crc = ci;
	b.crc = cr;
	hs_init(&p, &a, &b, NULL, 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(!!(wire[16] & MPA_RR_FLAG_CRC), ci);
	ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_uint_eq(!!(wire[16] & MPA_RR_FLAG_CRC), on);
	ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
	ck_assert_int_eq(p.ini.c.crc_on, on);
	ck_assert_int_eq(p.rsp.c.crc_on, on);
	/* the CRC field: CRC32C when on, zero when off */
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, send_hdr, 18, &iov, 1, NULL), 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 32);
	ck_assert_uint_eq(get_le32(wire + 28), on ? crc32c(wire, 28) : 0);
	/* and the receiver checks it exactly when on */
	wire[31] ^= 0x01;
	if (on) {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), -EPROTO);
		assert_term(&p.rsp.c, MPA_ECODE_CRC);
		ck_assert_int_eq(p.rsp.nend, 0);
	} else {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
		ck_assert_int_eq(p.rsp.nend, 1);
		ck_assert_mem_eq(p.rsp.payload, data, 5);
	}
	hs_destroy(&p);
}
END_TEST

/* M declares the markers the sender of the frame wants to receive.  _i:
 * bit 0 initiator asks, bit 1 responder asks. */
START_TEST(hs_markers)
{
	static const uint8_t data[5] = "12345";
	struct iovec iov = {(void *)(uintptr_t)data, 5};
	int mi = _i & 1, mr = !!(_i & 2);
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n;

	hs_cfgs(&a, &b);
	a.markers = mi;
	b.markers = mr;
	hs_init(&p, &a, &b, NULL, 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(!!(wire[16] & MPA_RR_FLAG_MARKERS), mi);
	ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_uint_eq(!!(wire[16] & MPA_RR_FLAG_MARKERS), mr);
	ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
	ck_assert_int_eq(p.ini.c.tx_markers, mr);
	ck_assert_int_eq(p.ini.c.rx_markers, mi);
	ck_assert_int_eq(p.rsp.c.tx_markers, mi);
	ck_assert_int_eq(p.rsp.c.rx_markers, mr);
	/* the first FPDU starts with a marker exactly when the peer asked */
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, send_hdr, 18, &iov, 1, NULL), 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 32 + (mr ? 4 : 0));
	ck_assert_uint_eq(get_be16(wire + (mr ? 4 : 0)), 23);
	if (mr)
		ck_assert_uint_eq(get_be32(wire), 0);
	ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
	ck_assert_int_eq(p.rsp.nend, 1);
	ck_assert_int_eq(mpa_tx_fpdu(&p.rsp.c, send_hdr, 18, &iov, 1, NULL), 0);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_uint_eq(n, 32 + (mi ? 4 : 0));
	ck_assert_int_eq(hs_feed(&p.ini, wire, n, 1, 1), (ssize_t)n);
	ck_assert_int_eq(p.ini.nend, 1);
	ck_assert_mem_eq(p.ini.payload, data, 5);
	hs_destroy(&p);
}
END_TEST

/* Private data reaches the other side intact, both ways.  _i: length index
 * (0, 1, 100, 252) times revision. */
START_TEST(hs_private_data)
{
	static const size_t lens[4] = {0, 1, 100, 252};
	size_t ql = lens[_i % 4], pl = lens[3 - _i % 4];
	int rev = _i < 4 ? 1 : 2;
	uint8_t qpd[256], ppd[256];
	uint64_t rng = tu_seed() + (uint64_t)_i;
	struct mpa_cfg a, b;
	struct hs_pair p;

	tu_rand_fill(&rng, qpd, sizeof(qpd));
	tu_rand_fill(&rng, ppd, sizeof(ppd));
	hs_cfgs(&a, &b);
	a.rev = (uint8_t)rev;
	a.pd_max = b.pd_max = 256; /* as siw: 252 is the most with revision 2 */
	hs_init(&p, &a, &b, qpd, ql);
	p.rsp.ans_pd = ppd;
	p.rsp.ans_pd_len = pl;
	ck_assert_uint_eq(hs_move(&p.ini, &p.rsp, _i & 1, 0), 20 + ql + (rev == 2 ? 4 : 0));
	ck_assert_int_eq(p.rsp.nreq, 1);
	ck_assert_uint_eq(p.rsp.rr.pd_len, ql + (rev == 2 ? 4 : 0));
	ck_assert_uint_eq(p.rsp.rr.ulp_pd_len, ql);
	if (ql)
		ck_assert_mem_eq(p.rsp.pd, qpd, ql);
	ck_assert_uint_eq(hs_move(&p.rsp, &p.ini, _i & 1, 1), 20 + pl + (rev == 2 ? 4 : 0));
	ck_assert_int_eq(p.ini.nrep, 1);
	ck_assert_uint_eq(p.ini.rr.ulp_pd_len, pl);
	if (pl)
		ck_assert_mem_eq(p.ini.pd, ppd, pl);
	ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
	hs_destroy(&p);
}
END_TEST

/* The limits: 512 octets on the wire (RFC 5044 §7.1.1), 508 for the ULP
 * with revision 2 (RFC 6581 §9), and a configured pd_max both ways. */
START_TEST(hs_private_data_limits)
{
	static uint8_t pd[MPA_PD_MAX + 1];
	static uint8_t wire[1024];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct mpa_conn c;
	size_t n;

	hs_cfgs(&a, &b);
	ck_assert_int_eq(mpa_conn_init(&c, &a, &hs_ops, NULL), 0);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 509, 0), -EMSGSIZE);
	ck_assert_int_eq(c.state, MPA_S_IDLE);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 513, 0), -EMSGSIZE);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 508, 0), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&c), 532);
	mpa_conn_destroy(&c);
	a.rev = 1;
	ck_assert_int_eq(mpa_conn_init(&c, &a, &hs_ops, NULL), 0);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 513, 0), -EMSGSIZE);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 512, 0), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&c), 532);
	mpa_conn_destroy(&c);
	a.rev = 2;
	a.pd_max = 256;
	ck_assert_int_eq(mpa_conn_init(&c, &a, &hs_ops, NULL), 0);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 253, 0), -EMSGSIZE);
	ck_assert_int_eq(mpa_conn_start(&c, pd, 252, 0), 0);
	mpa_conn_destroy(&c);
	a.pd_max = 513;
	ck_assert_int_eq(mpa_conn_init(&c, &a, &hs_ops, NULL), -EINVAL);
	a.pd_max = 0;

	/* a responder capped at 256 refuses 253 octets of revision-2 data ... */
	b.pd_max = 256;
	hs_init(&p, &a, &b, pd, 253);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 20 + 257);
	ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), -EPROTO);
	assert_term(&p.rsp.c, MPA_ECODE_INVALID_RR);
	ck_assert_int_eq(p.rsp.nreq, 0);
	hs_destroy(&p);
	/* ... and will not send more than its cap either */
	hs_init(&p, &a, &b, pd, 10);
	p.rsp.answer = ANS_LATER;
	hs_move(&p.ini, &p.rsp, 0, 0);
	ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, pd, 253, 8, 8, 0), -EMSGSIZE);
	ck_assert_int_eq(mpa_conn_reject(&p.rsp.c, pd, 253), -EMSGSIZE);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
	ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, pd, 252, 8, 8, 0), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 20 + 256);
	hs_destroy(&p);
}
END_TEST

/* A Reject with private data: both ends leave MPA and take no more octets
 * (RFC 5044 §7.1.2 rules 2 and 3).  _i: bit 0 revision 2, bit 1 reject
 * from the request upcall (else later), bit 2 no private data. */
START_TEST(hs_reject)
{
	static const uint8_t junk[10] = "0123456789";
	const char *rpd = (_i & 4) ? "" : "sorry";
	size_t rpl = strlen(rpd), x = (_i & 1) ? 4 : 0;
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct iovec iov[2];
	size_t n;

	hs_cfgs(&a, &b);
	a.rev = (_i & 1) ? 2 : 1;
	hs_init(&p, &a, &b, "hi", 2);
	p.rsp.answer = (_i & 2) ? ANS_REJECT : ANS_LATER;
	p.rsp.ans_pd = rpd;
	p.rsp.ans_pd_len = rpl;
	hs_move(&p.ini, &p.rsp, 0, 0);
	ck_assert_int_eq(p.rsp.nreq, 1);
	if (!(_i & 2)) {
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
		ck_assert_int_eq(mpa_conn_reject(&p.rsp.c, rpd, rpl), 0);
	}
	ck_assert_int_eq(p.rsp.c.state, MPA_S_REJECTED);
	ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, NULL, 0, 1, 1, 0), -EINVAL);
	ck_assert_int_eq(mpa_conn_reject(&p.rsp.c, NULL, 0), -EINVAL);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_uint_eq(n, 20 + x + rpl);
	ck_assert(wire[16] & MPA_RR_FLAG_REJECT);
	ck_assert_uint_eq(wire[17], a.rev);
	/* the Reply and whatever follows in one buffer: only the Reply is taken */
	memcpy(wire + n, junk, sizeof(junk));
	ck_assert_int_eq(mpa_rx(&p.ini.c, wire, n + sizeof(junk)), (ssize_t)n);
	ck_assert_int_eq(p.ini.c.state, MPA_S_REJECTED);
	ck_assert_int_eq(p.ini.c.err, -ECONNREFUSED);
	ck_assert_int_eq(p.ini.nrep, 1);
	ck_assert_int_eq(p.ini.rr.reject, 1);
	ck_assert_uint_eq(p.ini.rr.ulp_pd_len, rpl);
	if (rpl)
		ck_assert_mem_eq(p.ini.pd, rpd, rpl);
	/* neither side takes octets or FPDUs any more; no TERMINATE */
	ck_assert_int_eq(mpa_rx(&p.ini.c, junk, sizeof(junk)), 0);
	ck_assert_int_eq(mpa_rx(&p.rsp.c, junk, sizeof(junk)), 0);
	ck_assert_int_eq(mpa_rx_lend(&p.ini.c, iov, 2), 0);
	ck_assert_int_eq(mpa_rx_lend(&p.rsp.c, iov, 2), 0);
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, write_hdr, 14, NULL, 0, NULL), -ENOTCONN);
	ck_assert_int_eq(mpa_tx_fpdu(&p.rsp.c, write_hdr, 14, NULL, 0, NULL), -ENOTCONN);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.ini.c), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 0);
	assert_no_term(&p.ini.c);
	assert_no_term(&p.rsp.c);
	ck_assert_int_eq(p.ini.nbegin + p.rsp.nbegin, 0);
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Peer-to-peer mode and RTR (RFC 6581 §5, §9.2) */

/* chosen: by the initiator when the responder's IRD is 1; chosen0: when it
 * is 0 (the responder then drops Read from what it accepts, unless Read is
 * all that was offered: then it announces IRD 1 for the RTR) */
static const struct {
	unsigned offered, chosen, chosen0;
} p2p_cases[] = {
	{MPA_RTR_SEND, MPA_RTR_SEND, MPA_RTR_SEND},
	{MPA_RTR_WRITE, MPA_RTR_WRITE, MPA_RTR_WRITE},
	{MPA_RTR_READ, MPA_RTR_READ, MPA_RTR_READ},
	{MPA_RTR_ALL, MPA_RTR_WRITE, MPA_RTR_WRITE},
	{MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_WRITE, MPA_RTR_WRITE},
	{MPA_RTR_SEND | MPA_RTR_READ, MPA_RTR_READ, MPA_RTR_SEND},
};
#define NP2P (int)(sizeof(p2p_cases) / sizeof(p2p_cases[0]))

/* The initiator's RTR is its first FPDU; the responder flags it, then sends.
 * _i: case, byte-by-byte or not, responder IRD 0 or 1. */
START_TEST(hs_p2p_rtr)
{
	unsigned offered = p2p_cases[_i % NP2P].offered;
	size_t step = (_i / NP2P) % 2;
	uint16_t ird = (uint16_t)(_i / (2 * NP2P));
	unsigned chosen = ird ? p2p_cases[_i % NP2P].chosen : p2p_cases[_i % NP2P].chosen0;
	unsigned accepted = ird || offered == MPA_RTR_READ ? offered : offered & ~(unsigned)MPA_RTR_READ;
	uint16_t ann_ird = ird || offered == MPA_RTR_READ ? 1 : 0; /* the responder's announced IRD */
	uint8_t wire[256], ulpdu[64], want[128];
	struct mpa_cfg a, b;
	struct hs_pair p;
	ssize_t ul;
	size_t n;

	hs_cfgs(&a, &b);
	a.p2p = 1;
	a.rtr = offered;
	hs_init(&p, &a, &b, NULL, 0);
	p.rsp.ans_ird = ird;
	p.rsp.now = 100;
	hs_move(&p.ini, &p.rsp, step, 0);
	ck_assert_int_eq(p.rsp.rr.p2p, 1);
	ck_assert_uint_eq(p.rsp.rr.rtr, offered);
	ck_assert_int_eq(p.rsp.c.p2p, 1);
	ck_assert_uint_eq(p.rsp.c.rtr, accepted);
	ck_assert_uint_eq(p.rsp.c.ird, ann_ird);
	ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), 100 + b.timeout_ns);
	hs_move(&p.rsp, &p.ini, step, 0);
	ck_assert_int_eq(p.ini.rr.p2p, 1);
	ck_assert_uint_eq(p.ini.rr.rtr, accepted);
	ck_assert_uint_eq(p.ini.rr.ird, ann_ird);
	ck_assert_int_eq(p.ini.c.p2p, 1);
	ck_assert_uint_eq(p.ini.c.rtr, chosen);
	/* the RTR is queued before the reply upcall returns, and nothing else */
	ul = mpa_rtr_encode(chosen, ulpdu, sizeof(ulpdu));
	ck_assert_int_gt(ul, 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, mk_fpdu(want, ulpdu, (size_t)ul, 1));
	ck_assert_mem_eq(wire, want, n);
	ck_assert_int_eq(hs_feed(&p.rsp, wire, n, step, 1), (ssize_t)n);
	ck_assert_int_eq(p.rsp.nend, 1);
	ck_assert_uint_eq(p.rsp.begin_flags[0], MPA_RX_F_RTR);
	ck_assert_uint_eq(p.rsp.end_flags[0], MPA_RX_F_RTR);
	ck_assert_uint_eq(p.rsp.ulpdu_len[0], (size_t)ul);
	ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), UINT64_MAX);
	/* later FPDUs are ordinary */
	hs_exchange(&p);
	ck_assert_uint_eq(p.rsp.begin_flags[1], 0);
	ck_assert_uint_eq(p.rsp.end_flags[1], 0);
	ck_assert_uint_eq(p.ini.end_flags[0], 0);
	hs_destroy(&p);
}
END_TEST

/* The responder's acceptable set excludes everything offered: the Reply
 * still names one kind (RFC 6581 §9.2 "MUST set at least one"), and the
 * initiator fails with code 7. */
START_TEST(hs_p2p_no_match)
{
	static const struct {
		unsigned offered, acceptable, advertised;
		uint16_t ini_ord;
	} cases[] = {
		{MPA_RTR_SEND, MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_WRITE, 16},
		{MPA_RTR_WRITE, MPA_RTR_READ, MPA_RTR_READ, 16},
		{MPA_RTR_READ, MPA_RTR_SEND, MPA_RTR_SEND, 16},
		{MPA_RTR_SEND | MPA_RTR_READ, MPA_RTR_WRITE, MPA_RTR_WRITE, 16},
		/* a Read RTR needs an ORD slot */
		{MPA_RTR_READ, MPA_RTR_READ, MPA_RTR_READ, 0},
	};
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct mpa_rr rr;
	size_t n;

	hs_cfgs(&a, &b);
	a.p2p = 1;
	a.rtr = cases[_i].offered;
	a.ord = cases[_i].ini_ord;
	b.rtr = cases[_i].acceptable;
	hs_init(&p, &a, &b, NULL, 0);
	hs_move(&p.ini, &p.rsp, 0, 0);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_FULL);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_int_eq(mpa_rr_parse(wire, n, 1, 0, &rr), (ssize_t)n);
	ck_assert_int_eq(rr.p2p, 1);
	ck_assert_uint_eq(rr.rtr, cases[_i].advertised);
	ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), -EPROTO);
	assert_term(&p.ini.c, MPA_ECODE_NO_MATCHING_RTR);
	ck_assert_int_eq(mpa_rx(&p.ini.c, wire, 1), -EPROTO);
	/* no RTR left, but the TERMINATE can be queued */
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.ini.c), 0);
	ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, send_hdr, 18, NULL, 0, NULL), 0);
	ck_assert_uint_gt(mpa_tx_pending_bytes(&p.ini.c), 0);
	hs_destroy(&p);
}
END_TEST

/* The responder's first FPDU in peer-to-peer mode must be an RTR of a kind it
 * advertised.  _i: 0 a Send, 1 a Read RTR (only Write advertised), 2 a Write
 * RTR with a TO, 3 the Write RTR (accepted). */
START_TEST(hs_p2p_first_fpdu)
{
	uint8_t wire[256], ulpdu[64];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n, ul;

	hs_cfgs(&a, &b);
	a.p2p = 1;
	b.rtr = MPA_RTR_WRITE;
	hs_init(&p, &a, &b, NULL, 0);
	hs_move(&p.ini, &p.rsp, 0, 0);
	hs_move(&p.rsp, &p.ini, 0, 0);
	ck_assert_uint_eq(p.ini.c.rtr, MPA_RTR_WRITE);
	hs_take(&p.ini, wire, sizeof(wire)); /* the real RTR goes nowhere */
	switch (_i) {
	case 0:
		memcpy(ulpdu, send_hdr, 18);
		memcpy(ulpdu + 18, "x", 1);
		ul = 19;
		break;
	case 1:
		ul = (size_t)mpa_rtr_encode(MPA_RTR_READ, ulpdu, sizeof(ulpdu));
		break;
	case 2:
		ul = (size_t)mpa_rtr_encode(MPA_RTR_WRITE, ulpdu, sizeof(ulpdu));
		ulpdu[13] = 4;
		break;
	default:
		ul = (size_t)mpa_rtr_encode(MPA_RTR_WRITE, ulpdu, sizeof(ulpdu));
		break;
	}
	n = mk_fpdu(wire, ulpdu, ul, 1);
	if (_i < 3) {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), -EPROTO);
		assert_term(&p.rsp.c, MPA_ECODE_NO_MATCHING_RTR);
		ck_assert_int_eq(p.rsp.nbegin, 0);
	} else {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
		ck_assert_uint_eq(p.rsp.end_flags[0], MPA_RX_F_RTR);
		/* the second Write RTR is just a zero-length Write */
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
		ck_assert_uint_eq(p.rsp.end_flags[1], 0);
	}
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* IRD/ORD (RFC 6581 §9.1) */

START_TEST(hs_ird_ord_negotiation)
{
	struct mpa_cfg a, b;
	struct hs_pair p;

	hs_cfgs(&a, &b);
	a.ird = 16;
	a.ord = 16;
	a.strict_ird = _i;
	hs_init(&p, &a, &b, NULL, 0);
	p.rsp.ans_ird = 4;
	p.rsp.ans_ord = 32;
	hs_move(&p.ini, &p.rsp, 0, 0);
	ck_assert_uint_eq(p.rsp.rr.ird, 16);
	ck_assert_uint_eq(p.rsp.rr.ord, 16);
	ck_assert_uint_eq(p.rsp.c.peer_ird, 16);
	ck_assert_uint_eq(p.rsp.c.peer_ord, 16);
	/* "The responder MUST set its ORD at most to the initiator IRD." */
	ck_assert_uint_eq(p.rsp.c.ord, 16);
	ck_assert_uint_eq(p.rsp.c.ird, 4);
	if (!_i) {
		hs_move(&p.rsp, &p.ini, 0, 0);
		ck_assert_uint_eq(p.ini.rr.ird, 4);
		ck_assert_uint_eq(p.ini.rr.ord, 16);
		ck_assert_uint_eq(p.ini.c.peer_ird, 4);
		ck_assert_uint_eq(p.ini.c.peer_ord, 16);
		/* "its ORD at most to the responder IRD" */
		ck_assert_uint_eq(p.ini.c.ord, 4);
		ck_assert_uint_eq(p.ini.c.ird, 16);
	} else {
		/* strict: lowering the ORD is not acceptable */
		static uint8_t wire[256];
		size_t n = hs_take(&p.rsp, wire, sizeof(wire));

		ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), -EPROTO);
		assert_term(&p.ini.c, MPA_ECODE_INSUFFICIENT_IRD);
	}
	hs_destroy(&p);
}
END_TEST

/* A Reply built by hand: revision 2, enhanced, the given IRD/ORD. */
static size_t reply_frame(uint8_t *buf, uint16_t ird, uint16_t ord, int crc)
{
	struct mpa_rr rr = {0};

	rr.reply = 1;
	rr.rev = 2;
	rr.enhanced = 1;
	rr.crc = crc;
	rr.ird = ird;
	rr.ord = ord;
	return (size_t)mpa_rr_build(buf, 64, &rr);
}

/* The responder's ORD above our IRD (a responder that ignored RFC 6581
 * §9.1): code 6.  _i picks the responder ORD: 17 fails, 16 and 0x3FFF do
 * not (0x3FFF: "leave its local endpoint IRD value unchanged"). */
START_TEST(hs_ird_insufficient)
{
	static const uint16_t ords[] = {17, 0x3FFE, 16, 0, MPA_V2_IRD_ORD_ULP};
	uint16_t ord = ords[_i];
	uint8_t wire[64];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n;

	hs_cfgs(&a, &b);
	a.ird = 16;
	a.ord = 4;
	hs_init(&p, &a, &b, NULL, 0);
	hs_take(&p.ini, wire, sizeof(wire));
	n = reply_frame(wire, 8, ord, 1);
	if (ord != MPA_V2_IRD_ORD_ULP && ord > 16) {
		ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), -EPROTO);
		assert_term(&p.ini.c, MPA_ECODE_INSUFFICIENT_IRD);
	} else {
		ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
		ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
		ck_assert_uint_eq(p.ini.c.ird, 16);
		ck_assert_uint_eq(p.ini.c.ord, 4);
		ck_assert_uint_eq(p.ini.c.peer_ord, ord);
	}
	hs_destroy(&p);
}
END_TEST

/* 0x3FFF: "automatic negotiation ... is not desired" (RFC 6581 §9.1).
 * _i: 0 initiator ORD 0x3FFF, 1 initiator IRD 0x3FFF, 2 both, 3 a responder
 * IRD of 0x3FFF leaves the initiator ORD alone. */
START_TEST(hs_ird_ord_ulp)
{
	struct mpa_cfg a, b;
	struct hs_pair p;
	uint8_t wire[64];
	size_t n;

	hs_cfgs(&a, &b);
	a.ird = (_i == 1 || _i == 2) ? MPA_V2_IRD_ORD_ULP : 16;
	a.ord = (_i == 0 || _i == 2) ? MPA_V2_IRD_ORD_ULP : 16;
	hs_init(&p, &a, &b, NULL, 0);
	p.rsp.ans_ird = 4;
	p.rsp.ans_ord = 32;
	if (_i == 3) {
		hs_take(&p.ini, wire, sizeof(wire));
		n = reply_frame(wire, MPA_V2_IRD_ORD_ULP, 2, 0);
		ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
		ck_assert_uint_eq(p.ini.c.ord, 16);
		ck_assert_uint_eq(p.ini.c.ird, 16);
		ck_assert_uint_eq(p.ini.c.peer_ird, MPA_V2_IRD_ORD_ULP);
		hs_destroy(&p);
		return;
	}
	hs_move(&p.ini, &p.rsp, 0, 0);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
	/* "The responder MUST respond to an initiator ORD value of 0x3FFF by
	 * leaving its local endpoint IRD value unchanged and setting the IRD
	 * to 0x3FFF in its reply message", and IRD likewise with ORD. */
	ck_assert_uint_eq(p.ini.rr.ird, a.ord == MPA_V2_IRD_ORD_ULP ? MPA_V2_IRD_ORD_ULP : 4);
	ck_assert_uint_eq(p.ini.rr.ord, a.ird == MPA_V2_IRD_ORD_ULP ? MPA_V2_IRD_ORD_ULP : 16);
	ck_assert_uint_eq(p.rsp.c.ird, 4);
	ck_assert_uint_eq(p.rsp.c.ord, a.ird == MPA_V2_IRD_ORD_ULP ? 32 : 16);
	/* and the initiator keeps its own values */
	ck_assert_uint_eq(p.ini.c.ird, a.ird);
	ck_assert_uint_eq(p.ini.c.ord, a.ord == MPA_V2_IRD_ORD_ULP ? MPA_V2_IRD_ORD_ULP : 4);
	ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
	hs_destroy(&p);
}
END_TEST

/* IRD/ORD of 0, and revision 1 (no IRD/ORD words at all). */
START_TEST(hs_ird_ord_zero_and_rev1)
{
	struct mpa_cfg a, b;
	struct hs_pair p;

	hs_cfgs(&a, &b);
	a.ird = 0;
	a.ord = 0;
	hs_init(&p, &a, &b, NULL, 0);
	p.rsp.ans_ird = 0;
	p.rsp.ans_ord = 5;
	hs_run(&p);
	ck_assert_uint_eq(p.ini.rr.ird, 0);
	ck_assert_uint_eq(p.ini.rr.ord, 0);
	ck_assert_uint_eq(p.ini.c.ird, 0);
	ck_assert_uint_eq(p.ini.c.ord, 0);
	hs_destroy(&p);

	hs_cfgs(&a, &b);
	a.rev = 1;
	hs_init(&p, &a, &b, NULL, 0);
	hs_run(&p);
	ck_assert_int_eq(p.rsp.rr.enhanced, 0);
	ck_assert_uint_eq(p.rsp.rr.pd_len, 0);
	ck_assert_uint_eq(p.ini.rr.pd_len, 3);
	ck_assert_uint_eq(p.rsp.c.peer_ird + p.rsp.c.peer_ord, 0);
	ck_assert_uint_eq(p.ini.c.peer_ird + p.ini.c.peer_ord, 0);
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Refusals and early octets */

/* accept_markers = 0 (siw): _i 0 the responder refuses M=1 with a Reject
 * Reply, 1 the initiator refuses a Reply with M=1, 2 no markers: no refusal. */
START_TEST(hs_accept_markers_refused)
{
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct mpa_rr rr;
	size_t n;

	hs_cfgs(&a, &b);
	a.accept_markers = 0;
	b.accept_markers = 0;
	a.markers = _i == 0;
	b.markers = _i == 1;
	hs_init(&p, &a, &b, NULL, 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	if (_i == 0) {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), -ECONNREFUSED);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REJECTED);
		ck_assert_int_eq(p.rsp.nreq, 0);
		n = hs_take(&p.rsp, wire, sizeof(wire));
		ck_assert_int_eq(mpa_rr_parse(wire, n, 1, 0, &rr), (ssize_t)n);
		ck_assert_int_eq(rr.reject, 1);
		ck_assert_int_eq(rr.markers, 0);
		ck_assert_int_eq(rr.enhanced, 1);
		ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
		ck_assert_int_eq(p.ini.c.state, MPA_S_REJECTED);
		ck_assert_int_eq(p.ini.rr.reject, 1);
		assert_no_term(&p.rsp.c);
	} else {
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 0), (ssize_t)n);
		n = hs_take(&p.rsp, wire, sizeof(wire));
		if (_i == 1) {
			ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), -ECONNREFUSED);
			ck_assert_int_eq(p.ini.c.state, MPA_S_ERROR);
			ck_assert_int_eq(p.ini.nrep, 0);
			assert_no_term(&p.ini.c);
		} else {
			ck_assert_int_eq(hs_feed(&p.ini, wire, n, 0, 0), (ssize_t)n);
			ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
		}
	}
	hs_destroy(&p);
}
END_TEST

/*
 * The Reply and the responder's first FPDU in one buffer.  _i: 0 the
 * initiator queued its first FPDU in the reply upcall (legal: exactly all
 * octets taken), 1 it did not ("early data": code 4), 2 peer-to-peer (the
 * queued RTR makes it legal), 3 as 0 with CRCs off.
 */
START_TEST(hs_reply_with_first_fpdu)
{
	static const uint8_t data[4] = "data";
	uint8_t wire[512], ulpdu[32];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n, f, f2;
	ssize_t r;

	hs_cfgs(&a, &b);
	a.p2p = _i == 2;
	a.crc = b.crc = _i != 3;
	hs_init(&p, &a, &b, NULL, 0);
	p.ini.queue_in_reply = _i == 0 || _i == 3;
	hs_move(&p.ini, &p.rsp, 0, 0);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	memcpy(ulpdu, send_hdr, 18);
	memcpy(ulpdu + 18, data, 4);
	f = mk_fpdu(wire + n, ulpdu, 22, _i != 3);
	ulpdu[13] = 2;
	f2 = mk_fpdu(wire + n + f, ulpdu, 22, _i != 3);
	/* the Reply, one FPDU and 5 octets of the next */
	r = mpa_rx(&p.ini.c, wire, n + f + 5);
	if (_i == 1) {
		ck_assert_int_eq(r, -EPROTO);
		assert_term(&p.ini.c, MPA_ECODE_INVALID_RR);
		ck_assert_int_eq(p.ini.nbegin, 0);
		ck_assert_int_eq(p.ini.nrep, 1);
	} else {
		ck_assert_int_eq(r, (ssize_t)(n + f + 5));
		ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
		ck_assert_int_eq(p.ini.nend, 1);
		ck_assert_mem_eq(p.ini.payload, data, 4);
		ck_assert_int_eq(mpa_rx(&p.ini.c, wire + n + f + 5, f2 - 5), (ssize_t)(f2 - 5));
		ck_assert_int_eq(p.ini.nend, 2);
	}
	hs_destroy(&p);
}
END_TEST

/* Octets after the Request before the answer (RFC 5044 §7.1.2 rule 2: the
 * initiator sent before it could know our choice).  _i: 0 in the same
 * buffer, 1 in a later one, 2 none (then accepting works), 3 via lend. */
START_TEST(hs_request_then_bytes)
{
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct iovec iov[4];
	size_t n;

	hs_cfgs(&a, &b);
	hs_init(&p, &a, &b, "x", 1);
	p.rsp.answer = ANS_LATER;
	n = hs_take(&p.ini, wire, sizeof(wire));
	wire[n] = 0;
	switch (_i) {
	case 0:
		ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, n + 1), -EPROTO);
		ck_assert_int_eq(p.rsp.nreq, 1);
		assert_term(&p.rsp.c, MPA_ECODE_INVALID_RR);
		break;
	case 1:
		ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, n), (ssize_t)n);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
		ck_assert_int_eq(mpa_rx(&p.rsp.c, wire + n, 1), -EPROTO);
		assert_term(&p.rsp.c, MPA_ECODE_INVALID_RR);
		ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, NULL, 0, 1, 1, 0), -EINVAL);
		break;
	case 2:
		ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, n), (ssize_t)n);
		ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, 0), 0);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
		ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, NULL, 0, 1, 1, 0), 0);
		hs_move(&p.rsp, &p.ini, 0, 0);
		hs_exchange(&p);
		break;
	default:
		ck_assert_int_eq(hs_feed(&p.rsp, wire, n, 0, 1), (ssize_t)n);
		/* MPA wants no octets until the layer above answers */
		ck_assert_int_eq(mpa_rx_lend(&p.rsp.c, iov, 4), 0);
		ck_assert_int_eq(mpa_rx_ack(&p.rsp.c, 1), -EINVAL);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
		break;
	}
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Timeouts (RFC 5044 §7.1.2: "SHOULD put a timeout on waiting") */

START_TEST(hs_timeouts)
{
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct mpa_conn c;
	struct hs_pair p;
	uint64_t t0 = 1000000, to = 5000;

	hs_cfgs(&a, &b);
	a.timeout_ns = b.timeout_ns = to;
	switch (_i) {
	case 0: /* responder waiting for the Request */
	case 1: /* initiator waiting for the Reply */
		ck_assert_int_eq(mpa_conn_init(&c, _i ? &a : &b, &hs_ops, NULL), 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&c), UINT64_MAX);
		ck_assert_int_eq(mpa_conn_start(&c, NULL, 0, t0), 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&c), t0 + to);
		ck_assert_int_eq(mpa_conn_timeout(&c, t0 + to - 1), 0);
		ck_assert_int_eq(c.state, _i ? MPA_S_REP_WAIT : MPA_S_REQ_WAIT);
		ck_assert_int_eq(mpa_conn_timeout(&c, t0 + to), -ETIMEDOUT);
		ck_assert_int_eq(c.state, MPA_S_ERROR);
		assert_no_term(&c); /* no FPDU can carry a TERMINATE yet */
		ck_assert_uint_eq(mpa_conn_next_timeout(&c), UINT64_MAX);
		ck_assert_int_eq(mpa_rx(&c, wire, 1), -ETIMEDOUT);
		mpa_conn_destroy(&c);
		break;
	case 2: /* peer-to-peer responder waiting for the RTR */
	case 3: /* ... which arrives in time */
		a.p2p = 1;
		hs_init(&p, &a, &b, NULL, 0);
		p.rsp.now = t0;
		hs_move(&p.ini, &p.rsp, 0, 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), t0 + to);
		hs_move(&p.rsp, &p.ini, 0, 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.ini.c), UINT64_MAX);
		ck_assert_int_eq(mpa_conn_timeout(&p.rsp.c, t0 + to - 1), 0);
		if (_i == 2) {
			ck_assert_int_eq(mpa_conn_timeout(&p.rsp.c, t0 + to), -ETIMEDOUT);
			assert_term(&p.rsp.c, MPA_ECODE_NO_MATCHING_RTR);
			ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, 1), -ETIMEDOUT);
		} else {
			hs_move(&p.ini, &p.rsp, 1, 0);
			ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), UINT64_MAX);
			ck_assert_int_eq(mpa_conn_timeout(&p.rsp.c, UINT64_MAX - 1), 0);
			ck_assert_int_eq(p.rsp.c.state, MPA_S_FULL);
		}
		hs_destroy(&p);
		break;
	default: /* frames in time clear the deadlines; the ULP's answer is untimed */
		hs_init(&p, &a, &b, NULL, 0);
		p.rsp.answer = ANS_LATER;
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), to);
		hs_move(&p.ini, &p.rsp, 0, 0);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_REQ_RCVD);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), UINT64_MAX);
		ck_assert_int_eq(mpa_conn_timeout(&p.rsp.c, UINT64_MAX - 1), 0);
		ck_assert_int_eq(mpa_conn_accept(&p.rsp.c, NULL, 0, 1, 1, t0), 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.rsp.c), UINT64_MAX);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.ini.c), to);
		hs_move(&p.rsp, &p.ini, 0, 0);
		ck_assert_uint_eq(mpa_conn_next_timeout(&p.ini.c), UINT64_MAX);
		ck_assert_int_eq(mpa_conn_timeout(&p.ini.c, UINT64_MAX - 1), 0);
		ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
		hs_destroy(&p);
		break;
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad frames over the wire: code 4, decided on the 20-octet header */

static const struct {
	int to_initiator;
	const char *key;
	uint8_t flags, rev;
	uint16_t pd_len;
	uint16_t pd_max; /* receiver's cap, 0: default */
} bad_frames[] = {
	{0, MPA_KEY_REP, 0x40, 2, 0, 0}, /* a Reply where a Request is due */
	{0, "MPA ID Req Framf", 0x40, 1, 0, 0},
	{0, "mpa id req frame", 0x40, 1, 0, 0},
	{0, MPA_KEY_REQ, 0x40, 0, 0, 0}, /* revision 0 (pre-RFC) */
	{0, MPA_KEY_REQ, 0x40, 3, 0, 0},
	{0, MPA_KEY_REQ, 0x40, 1, 513, 0},
	{0, MPA_KEY_REQ, 0x50, 2, 257, 256},
	{0, MPA_KEY_REQ, 0x50, 2, 2, 0}, /* S without the IRD/ORD words */
	{1, MPA_KEY_REQ, 0x50, 2, 4, 0}, /* a Request where a Reply is due */
	{1, MPA_KEY_REP, 0x50, 0, 4, 0},
	{1, MPA_KEY_REP, 0x50, 3, 4, 0},
	{1, MPA_KEY_REP, 0x50, 2, 513, 0},
	{1, MPA_KEY_REP, 0x50, 2, 300, 256},
	{1, MPA_KEY_REP, 0x50, 2, 3, 0},
};
#define NBAD (int)(sizeof(bad_frames) / sizeof(bad_frames[0]))

/* _i: frame index, and whole (first half) or one octet at a time. */
START_TEST(hs_bad_frames)
{
	int k = _i % NBAD, bytewise = _i >= NBAD;
	static uint8_t wire[MPA_RR_HDR_LEN + 600];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct hs_side *to;
	size_t n;

	hs_cfgs(&a, &b);
	if (bad_frames[k].to_initiator)
		a.pd_max = bad_frames[k].pd_max;
	else
		b.pd_max = bad_frames[k].pd_max;
	hs_init(&p, &a, &b, NULL, 0);
	to = bad_frames[k].to_initiator ? &p.ini : &p.rsp;
	hs_take(&p.ini, wire, sizeof(wire));
	memcpy(wire, bad_frames[k].key, MPA_KEY_LEN);
	wire[16] = bad_frames[k].flags;
	wire[17] = bad_frames[k].rev;
	put_be16(wire + 18, bad_frames[k].pd_len);
	memset(wire + 20, 0, bad_frames[k].pd_len);
	n = 20 + bad_frames[k].pd_len;
	if (bytewise) {
		/* refused at the 20th octet, before any private data */
		for (size_t i = 0; i < 19; i++)
			ck_assert_int_eq(mpa_rx(&to->c, wire + i, 1), 1);
		ck_assert_int_eq(mpa_rx(&to->c, wire + 19, 1), -EPROTO);
	} else {
		ck_assert_int_eq(mpa_rx(&to->c, wire, n), -EPROTO);
	}
	assert_term(&to->c, MPA_ECODE_INVALID_RR);
	ck_assert_int_eq(to->nreq + to->nrep, 0);
	ck_assert_int_eq(mpa_rx(&to->c, wire, n), -EPROTO);
	hs_destroy(&p);
}
END_TEST

/* The Reply must have the Request's revision and S bit (RFC 6581 §10: "If
 * the responder receives an enhanced MPA message, it MUST respond with an
 * enhanced MPA message"; siw refuses anything else).  _i: 0 a rev-2
 * initiator gets a rev-1 Reply, 1 a rev-2 Reply without S, 2 a rev-1
 * initiator gets a rev-2 Reply, 3 rev 1 both (fine). */
START_TEST(hs_reply_revision)
{
	static const struct {
		uint8_t ini_rev, rep_rev, rep_flags;
		int ok;
	} cases[] = {
		{2, 1, 0x40, 0},
		{2, 2, 0x40, 0},
		{1, 2, 0x50, 0},
		{1, 1, 0x40, 1},
	};
	uint8_t wire[64];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n = 24;

	hs_cfgs(&a, &b);
	a.rev = cases[_i].ini_rev;
	hs_init(&p, &a, &b, NULL, 0);
	hs_take(&p.ini, wire, sizeof(wire));
	memcpy(wire, MPA_KEY_REP, MPA_KEY_LEN);
	wire[16] = cases[_i].rep_flags;
	wire[17] = cases[_i].rep_rev;
	put_be16(wire + 18, 4);
	put_be32(wire + 20, 0x00080008);
	if (cases[_i].ok) {
		ck_assert_int_eq(mpa_rx(&p.ini.c, wire, n), (ssize_t)n);
		ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
		ck_assert_uint_eq(p.ini.rr.ulp_pd_len, 4);
	} else {
		ck_assert_int_eq(mpa_rx(&p.ini.c, wire, n), -EPROTO);
		assert_term(&p.ini.c, MPA_ECODE_INVALID_RR);
		ck_assert_int_eq(p.ini.nrep, 0);
	}
	hs_destroy(&p);
}
END_TEST

/* The responder answers in kind (RFC 6581 §10, RFC 5044 §7.1.1; E4: revision
 * 1 stays accepted).  _i: 0 revision 1 (S ignored), 1 revision 2 without S,
 * 2 revision 2 enhanced. */
START_TEST(hs_reply_mirrors_request)
{
	uint8_t wire[64];
	struct mpa_cfg a, b;
	struct hs_pair p;
	struct mpa_rr rr;
	size_t n;

	hs_cfgs(&a, &b);
	hs_init(&p, &a, &b, NULL, 0);
	hs_take(&p.ini, wire, sizeof(wire));
	memcpy(wire, MPA_KEY_REQ, MPA_KEY_LEN);
	wire[16] = _i == 1 ? 0x00 : 0x10;
	wire[17] = _i == 0 ? 1 : 2;
	put_be16(wire + 18, 4);
	put_be32(wire + 20, 0x00050006);
	ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, 24), 24);
	ck_assert_int_eq(p.rsp.c.state, MPA_S_FULL);
	ck_assert_uint_eq(p.rsp.rr.ulp_pd_len, _i == 2 ? 0 : 4);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_int_eq(mpa_rr_parse(wire, n, 1, 0, &rr), (ssize_t)n);
	ck_assert_uint_eq(rr.rev, _i == 0 ? 1 : 2);
	ck_assert_int_eq(rr.enhanced, _i == 2);
	ck_assert_uint_eq(wire[16] & MPA_RR_FLAG_ENHANCED, _i == 2 ? MPA_RR_FLAG_ENHANCED : 0);
	ck_assert_uint_eq(rr.pd_len, _i == 2 ? 7 : 3);
	if (_i == 2) {
		ck_assert_uint_eq(rr.ird, 8);
		ck_assert_uint_eq(rr.ord, 5); /* at most the initiator IRD */
	}
	hs_destroy(&p);
}
END_TEST

/* RFC 5044 §7.1.2 rule 4: the responder's FPDUs stay queued until it has
 * received and validated one.  _i: 0 client-server, 1 peer-to-peer (the
 * RTR opens the gate). */
START_TEST(hs_responder_gating)
{
	static const uint8_t data[4] = "resp";
	struct iovec iov = {(void *)(uintptr_t)data, 4}, v[8];
	uint8_t wire[256];
	struct mpa_cfg a, b;
	struct hs_pair p;
	size_t n;

	hs_cfgs(&a, &b);
	a.p2p = _i;
	hs_init(&p, &a, &b, NULL, 0);
	hs_move(&p.ini, &p.rsp, 0, 0);
	/* queued before the Reply is even sent: the Reply goes, the FPDU not */
	ck_assert_int_eq(mpa_tx_fpdu(&p.rsp.c, send_hdr, 18, &iov, 1, NULL), 0);
	ck_assert_int_eq(mpa_tx_pending(&p.rsp.c, v, 8), 1);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 20 + 4 + 3);
	hs_move(&p.rsp, &p.ini, 0, 0);
	ck_assert_int_eq(mpa_tx_pending(&p.rsp.c, v, 8), 0);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 0);
	ck_assert_int_eq(mpa_tx_advance(&p.rsp.c, 1), -EINVAL);
	ck_assert_uint_eq(mpa_tx_space(&p.rsp.c), b.tx_depth - 1);
	if (!_i)
		ck_assert_int_eq(mpa_tx_fpdu(&p.ini.c, write_hdr, 14, NULL, 0, NULL), 0);
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 20);
	/* all but the CRC's last octet: not validated yet */
	ck_assert_int_eq(mpa_rx(&p.rsp.c, wire, n - 1), (ssize_t)(n - 1));
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 0);
	ck_assert_int_eq(mpa_rx(&p.rsp.c, wire + n - 1, 1), 1);
	ck_assert_int_eq(p.rsp.nend, 1);
	ck_assert_uint_eq(mpa_tx_pending_bytes(&p.rsp.c), 2 + 22 + 4);
	hs_move(&p.rsp, &p.ini, 0, 0);
	ck_assert_int_eq(p.ini.nend, 1);
	ck_assert_mem_eq(p.ini.payload, data, 4);
	hs_destroy(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Against siw's own bytes: our endpoints configured as siw was send what
 * siw sent, and take in the rest of siw's streams. */

static void siw_like_cfgs(const struct siw_cap *cp, struct mpa_cfg *a, struct mpa_cfg *b)
{
	hs_cfgs(a, b);
	a->rev = cp->rev;
	a->crc = cp->crc;
	a->ird = cp->req_ird;
	a->ord = cp->req_ord;
	a->p2p = cp->p2p;
	a->rtr = cp->p2p ? cp->req_rtr : MPA_RTR_ALL;
	a->pd_max = b->pd_max = 256;
	b->crc = 0;		/* siw copies the initiator's C */
	b->rtr = MPA_RTR_WRITE; /* siw picks the Write RTR */
	b->accept_markers = 0;
}

START_TEST(hs_siw_exact_bytes)
{
	const struct siw_cap *cp = &caps[_i];
	uint8_t req[64], rep[64], wire[256], rtr[32];
	size_t ql = tu_hex(cp->req, req, sizeof(req));
	size_t pl = tu_hex(cp->rep, rep, sizeof(rep));
	size_t x = cp->enhanced ? 4 : 0, n;
	struct mpa_cfg a, b;
	struct hs_pair p;

	siw_like_cfgs(cp, &a, &b);
	hs_init(&p, &a, &b, req + 20 + x, cp->ulp_pd_len);
	p.rsp.ans_pd = rep + 20 + x;
	p.rsp.ans_pd_len = cp->ulp_pd_len;
	p.rsp.ans_ird = cp->rep_ird;
	p.rsp.ans_ord = cp->rep_ord;
	/* our Request is siw's */
	n = hs_take(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, ql);
	ck_assert_mem_eq(wire, req, ql);
	/* siw's Request makes our responder answer with siw's Reply */
	ck_assert_int_eq(hs_feed(&p.rsp, req, ql, 1, 0), (ssize_t)ql);
	ck_assert_int_eq(p.rsp.ans_ret, 0);
	n = hs_take(&p.rsp, wire, sizeof(wire));
	ck_assert_uint_eq(n, pl);
	ck_assert_mem_eq(wire, rep, pl);
	/* siw's Reply takes our initiator to full operation (and the RTR out) */
	ck_assert_int_eq(hs_feed(&p.ini, rep, pl, 0, 0), (ssize_t)pl);
	ck_assert_int_eq(p.ini.c.state, MPA_S_FULL);
	ck_assert_int_eq(p.ini.c.crc_on, cp->crc);
	n = hs_take(&p.ini, wire, sizeof(wire));
	if (cp->p2p) {
		ck_assert_uint_eq(n, tu_hex(siw_rtr_hex, rtr, sizeof(rtr)));
		ck_assert_mem_eq(wire, rtr, n);
	} else {
		ck_assert_uint_eq(n, 0);
	}
	hs_destroy(&p);
}
END_TEST

/* siw's full-operation streams, both directions, through both receive
 * paths: every FPDU delivered (for the -crc capture: every CRC checked). */
START_TEST(hs_siw_replay)
{
	const struct siw_cap *cp = &caps[_i % NCAPS];
	int mode = _i / NCAPS; /* 0 whole, 1 octet by octet, 2 lend in 7s, 3 random */
	uint8_t req[64], rep[64];
	size_t ql = tu_hex(cp->req, req, sizeof(req));
	size_t pl = tu_hex(cp->rep, rep, sizeof(rep));
	size_t x = cp->enhanced ? 4 : 0, i2r_len, r2i_len;
	uint8_t *i2r = read_vector(cp->name, "i2r", &i2r_len);
	uint8_t *r2i = read_vector(cp->name, "r2i", &r2i_len);
	uint64_t rng = tu_seed() ^ (uint64_t)_i << 32;
	struct mpa_cfg a, b;
	struct hs_pair p;

	siw_like_cfgs(cp, &a, &b);
	hs_init(&p, &a, &b, req + 20 + x, cp->ulp_pd_len);
	p.rsp.ans_ird = cp->rep_ird;
	p.rsp.ans_ord = cp->rep_ord;
	p.ini.queue_in_reply = 1;
	ck_assert_int_eq(hs_feed(&p.rsp, req, ql, 0, 0), (ssize_t)ql);
	ck_assert_int_eq(hs_feed(&p.ini, rep, pl, 0, 0), (ssize_t)pl);
	ck_assert_int_eq(p.rsp.c.crc_on, cp->crc);
	ck_assert_int_eq(p.ini.c.crc_on, cp->crc);
	for (int dir = 0; dir < 2; dir++) {
		struct hs_side *s = dir ? &p.ini : &p.rsp;
		const uint8_t *in = dir ? r2i : i2r;
		size_t len = dir ? r2i_len : i2r_len, off = 0;

		while (off < len) {
			size_t k = len - off;
			int lend = 0;

			if (mode == 1) {
				k = 1;
			} else if (mode == 2) {
				k = 7;
				lend = 1;
			} else if (mode == 3) {
				k = 1 + (size_t)(tu_rand(&rng) % 3000);
				lend = (int)(tu_rand(&rng) & 1);
			}
			if (k > len - off)
				k = len - off;
			ck_assert_int_eq(hs_feed(s, in + off, k, 0, lend), (ssize_t)k);
			off += k;
		}
		ck_assert_int_eq(s->c.state, MPA_S_FULL);
		ck_assert_int_eq(s->nend, (int)count_fpdus(in, len));
		ck_assert_uint_eq(s->c.rx.pos, len);
	}
	if (cp->p2p) {
		ck_assert_uint_eq(p.rsp.end_flags[0], MPA_RX_F_RTR);
		ck_assert_uint_eq(p.rsp.ulpdu_len[0], 14);
	}
	hs_destroy(&p);
	free(i2r);
	free(r2i);
}
END_TEST

Suite *mpa_rr_suite(void)
{
	Suite *s = suite_create("mpa_rr");
	TCase *tc = tcase_create("frames");

	tcase_add_loop_test(tc, rr_roundtrip, 0, 3);
	tcase_add_test(tc, rr_build_errors);
	tcase_add_loop_test(tc, rr_siw_frames, 0, NCAPS);
	tcase_add_test(tc, rr_siw_rtr_frame);
	tcase_add_loop_test(tc, rr_parse_errors, 0, 2);
	tcase_add_loop_test(tc, rr_parse_prefixes, 0, 12);
	suite_add_tcase(s, tc);

	tc = tcase_create("rtr_mulpdu");
	tcase_add_test(tc, rtr_encode_exact);
	tcase_add_test(tc, rtr_match_kinds);
	tcase_add_loop_test(tc, rtr_match_mismatch, 0, 3);
	tcase_add_test(tc, mulpdu_formula);
	tcase_add_test(tc, mulpdu_max);
	tcase_add_loop_test(tc, mulpdu_conn_max_with_markers, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("handshake");
	tcase_add_loop_test(tc, hs_basic, 0, 8);
	tcase_add_loop_test(tc, hs_crc, 0, 4);
	tcase_add_loop_test(tc, hs_markers, 0, 4);
	tcase_add_loop_test(tc, hs_private_data, 0, 8);
	tcase_add_test(tc, hs_private_data_limits);
	tcase_add_loop_test(tc, hs_reject, 0, 8);
	tcase_add_loop_test(tc, hs_p2p_rtr, 0, 4 * NP2P);
	tcase_add_loop_test(tc, hs_p2p_no_match, 0, 5);
	tcase_add_loop_test(tc, hs_p2p_first_fpdu, 0, 4);
	tcase_add_loop_test(tc, hs_ird_ord_negotiation, 0, 2);
	tcase_add_loop_test(tc, hs_ird_insufficient, 0, 5);
	tcase_add_loop_test(tc, hs_ird_ord_ulp, 0, 4);
	tcase_add_test(tc, hs_ird_ord_zero_and_rev1);
	tcase_add_loop_test(tc, hs_accept_markers_refused, 0, 3);
	tcase_add_loop_test(tc, hs_reply_with_first_fpdu, 0, 4);
	tcase_add_loop_test(tc, hs_request_then_bytes, 0, 4);
	tcase_add_loop_test(tc, hs_timeouts, 0, 5);
	tcase_add_loop_test(tc, hs_bad_frames, 0, 2 * NBAD);
	tcase_add_loop_test(tc, hs_reply_revision, 0, 4);
	tcase_add_loop_test(tc, hs_reply_mirrors_request, 0, 3);
	tcase_add_loop_test(tc, hs_responder_gating, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("siw");
	tcase_add_loop_test(tc, hs_siw_exact_bytes, 0, NCAPS);
	tcase_add_loop_test(tc, hs_siw_replay, 0, 4 * NCAPS);
	suite_add_tcase(s, tc);
	return s;
}
