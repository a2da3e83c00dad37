/* SPDX-License-Identifier: MIT */
/*
 * DDP/RDMAP error injection.  Hand-built FPDUs go into the receive side of
 * the responder ("the victim", host b of an rp_pair with CRCs on and no
 * markers) straight after the handshake, so that its stream starts at an
 * FPDU boundary the initiator's MPA never used.  For every check of
 * RFC 5041 §7 and RFC 5040 §7.2 the victim must:
 *  - send exactly one TERMINATE (RFC 5040 §4.8), byte for byte: QN 2, MSN 1,
 *    MO 0, the Layer/EType/Code of Figure 9, HdrCt, the DDP Segment Length
 *    and the offending headers copied as injected;
 *  - go to ERROR, tell its consumer (ops->error) and flush every work
 *    request in posting order;
 *  - place nothing in registered memory and deliver nothing;
 *  - take no further input.
 * Each case runs twice: whole FPDUs through mpa_rx(), and through
 * mpa_rx_lend()/ack with the stream cut into runs of 1..5 octets.  Then the silent cases
 * (zero-length Read and Write with garbage STags), a TERMINATE received in RFC and in siw bit
 * order, and unit tests of the header codecs and of ddp_stag_check()'s order.  Expected codes
 * follow the research digest (rfc5040-5041.md §1 and table 2.7); where rdmap_rx.c made a documented
 * choice among defensible codes, the test pins that choice and says so.
 */
/* RAND_set_rand_method() (deprecated in OpenSSL 3): the stand-in RAND_bytes()
 * of the STag tests */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "tests.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/rand.h>

#include "byteorder.h"
#include "crc32c.h"
#include "rdmap_pair.h"

#define TGT_SIZE 8192 /* the remotely accessible region */
#define RBUF_LEN 128  /* two receive buffers of 64 octets */
#define RECV_LEN 64
#define SBUF_LEN 64
#define WIRE_CAP (256 * 1024)
#define SEGS_MAX 4096

#define RECV_ID0 0x1100
#define SEND_ID0 0x2100

#define HM RDMAP_TERM_HDRCT_M
#define HD RDMAP_TERM_HDRCT_D
#define HR RDMAP_TERM_HDRCT_R

struct victim {
	struct rp_pair p;
	struct ddp_pd pd2; /* a second PD on the victim's STag table */
	uint8_t *tgt, *tgt_ref;
	uint8_t *rbuf, *rbuf_ref;
	uint8_t *sbuf;
	struct ddp_mr *tgt_mr, *rbuf_mr, *sbuf_mr;
	int nrecv, nsend; /* work requests posted on the victim */
	uint8_t *wire;	  /* what the victim transmitted */
	size_t wire_len;
};

static uint64_t va(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/*
 * ---- the same error paths with MPA markers on (test_mpa_markers_err.c has
 * the marker-specific cases) ----
 * The "markers" test case runs the TERMINATE cases again with vmk set by
 * its fixture: the victim's connection has markers both ways, injected
 * FPDUs get markers at the victim's receive position and the captured
 * stream is checked (markers, FPDUPTRs, CRCs over them) and stripped of
 * them by tests.h's independent codec before parse_wire() reads it.
 */
static int vmk;		/* markers on in the victim's connection */
static uint64_t vmk_rx; /* stream position of the next injected octet */
static uint8_t vmk_plain[256 * 1024];

static void vmk_on(void)
{
	vmk = 1;
}

static void vmk_off(void)
{
	vmk = 0;
}

/* Inject the markers-off FPDU @f (@n octets) into the victim; with markers
 * on it is re-framed at the victim's position and a CRC that was made
 * wrong on purpose stays wrong by the same bits. */
static ssize_t vmk_inject(struct rp_pair *p, uint8_t *f, size_t n)
{
	static uint8_t w[8192];
	uint32_t delta;
	size_t wl;

	if (!vmk)
		return rp_inject(p, &p->b, f, n);
	ck_assert_uint_le(n + n / 64 + 8, sizeof(w));
	delta = get_le32(f + n - 4) ^ crc32c(f, n - 4);
	wl = tu_mk_wrap(f, n, vmk_rx, 1, w);
	put_le32(w + wl - 4, get_le32(w + wl - 4) ^ delta);
	vmk_rx += wl;
	return rp_inject(p, &p->b, w, wl);
}

/* The captured stream without its markers (checked); parse_wire's input. */
static const uint8_t *vmk_unwrap(const uint8_t *w, size_t *len)
{
	char why[160];
	ssize_t n;

	if (!vmk)
		return w;
	n = tu_mk_unwrap(w, *len, 1, vmk_plain, sizeof(vmk_plain), why, sizeof(why));
	ck_assert_msg(n >= 0, "victim's stream with markers: %s", why);
	*len = (size_t)n;
	return vmk_plain;
}

/* @ext: RDMAP_EXT_* of both QPs */
static struct victim *victim_new_cfg(uint16_t ird, unsigned rsp_tx_depth, unsigned ext)
{
	struct victim *v = calloc(1, sizeof(*v));
	struct rdmap_qp_cfg q = {
		.max_send_wr = 8, .max_recv_wr = 8, .ird = ird, .ord = 2, .ext = ext};
	struct mpa_cfg ic, rc;
	uint64_t rng = tu_seed();

	ck_assert_ptr_nonnull(v);
	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = 1;
	ic.markers = rc.markers = vmk;
	vmk_rx = 0;
	if (rsp_tx_depth)
		rc.tx_depth = rsp_tx_depth;
	ck_assert_int_eq(rp_init(&v->p, &ic, &rc, &q, rng), 0);
	ck_assert(v->p.mpa.rsp.c.crc_on && v->p.mpa.rsp.c.rx_markers == vmk &&
		  v->p.mpa.rsp.c.tx_markers == vmk);
	ddp_pd_init(&v->p.b.mem, &v->pd2);
	ck_assert_uint_ne(v->pd2.handle, v->p.b.pd.handle);
	v->tgt = malloc(TGT_SIZE);
	v->tgt_ref = malloc(TGT_SIZE);
	v->rbuf = malloc(RBUF_LEN);
	v->rbuf_ref = malloc(RBUF_LEN);
	v->sbuf = malloc(SBUF_LEN);
	v->wire = malloc(WIRE_CAP);
	ck_assert(v->tgt && v->tgt_ref && v->rbuf && v->rbuf_ref && v->sbuf && v->wire);
	tu_rand_fill(&rng, v->tgt, TGT_SIZE);
	tu_rand_fill(&rng, v->rbuf, RBUF_LEN);
	tu_rand_fill(&rng, v->sbuf, SBUF_LEN);
	memcpy(v->tgt_ref, v->tgt, TGT_SIZE);
	memcpy(v->rbuf_ref, v->rbuf, RBUF_LEN);
	v->tgt_mr = rp_reg(&v->p.b, v->tgt, TGT_SIZE, DDP_ACC_ALL);
	v->rbuf_mr = rp_reg(&v->p.b, v->rbuf, RBUF_LEN, DDP_ACC_LOCAL_WRITE);
	v->sbuf_mr = rp_reg(&v->p.b, v->sbuf, SBUF_LEN, DDP_ACC_LOCAL_WRITE);
	ck_assert(v->tgt_mr && v->rbuf_mr && v->sbuf_mr);
	return v;
}

static struct victim *victim_new(void)
{
	return victim_new_cfg(2, 0, 0);
}

static void victim_free(struct victim *v)
{
	rp_destroy(&v->p);
	free(v->tgt);
	free(v->tgt_ref);
	free(v->rbuf);
	free(v->rbuf_ref);
	free(v->sbuf);
	free(v->wire);
	free(v);
}

static struct ddp_mr *vreg(struct victim *v, struct ddp_pd *pd, void *buf, size_t len,
			   unsigned access)
{
	struct ddp_mr *mr = NULL;

	ck_assert_int_eq(ddp_mr_reg(&v->p.b.mem, pd, buf, len, access, &mr), 0);
	return mr;
}

/* @nrecv receives of RECV_LEN octets and @nsend signaled Sends of 16 octets,
 * posted on the victim and not progressed. */
static void victim_post(struct victim *v, int nrecv, int nsend)
{
	for (int i = 0; i < nrecv; i++) {
		struct rdmap_recv_wr r = {0};

		r.wr_id = RECV_ID0 + (uint64_t)v->nrecv;
		r.num_sge = 1;
		r.sge[0].addr = va(v->rbuf + (size_t)(v->nrecv % 2) * RECV_LEN);
		r.sge[0].length = RECV_LEN;
		r.sge[0].lkey = v->rbuf_mr->stag;
		ck_assert_int_eq(rdmap_post_recv(&v->p.b.qp, &r), 0);
		v->nrecv++;
	}
	for (int i = 0; i < nsend; i++) {
		struct rdmap_send_wr w = {0};

		w.wr_id = SEND_ID0 + (uint64_t)v->nsend;
		w.opcode = RDMAP_WR_SEND;
		w.flags = RDMAP_WR_SIGNALED;
		w.num_sge = 1;
		w.sge[0].addr = va(v->sbuf);
		w.sge[0].length = 16;
		w.sge[0].lkey = v->sbuf_mr->stag;
		ck_assert_int_eq(rdmap_post_send(&v->p.b.qp, &w), 0);
		v->nsend++;
	}
}

/* ---- building segments by hand (not with the codec under test) ---- */

static uint8_t ddp_ctrl(int tagged, int last, unsigned dv)
{
	return (uint8_t)((tagged ? 0x80 : 0) | (last ? 0x40 : 0) | (dv & 3));
}

static uint8_t rd_ctrl(unsigned rv, unsigned op)
{
	return (uint8_t)((rv & 3) << 6 | (op & 0xF));
}

static size_t hdr_tagged(uint8_t *s, uint8_t c0, uint8_t c1, uint32_t stag, uint64_t to)
{
	s[0] = c0;
	s[1] = c1;
	put_be32(s + 2, stag);
	put_be64(s + 6, to);
	return 14;
}

static size_t hdr_untagged(uint8_t *s, uint8_t c0, uint8_t c1, uint32_t inv, uint32_t qn,
			   uint32_t msn, uint32_t mo)
{
	s[0] = c0;
	s[1] = c1;
	put_be32(s + 2, inv);
	put_be32(s + 6, qn);
	put_be32(s + 10, msn);
	put_be32(s + 14, mo);
	return 18;
}

static size_t payload(uint8_t *s, size_t len)
{
	memset(s, 0xA5, len);
	return len;
}

/* A valid-looking RDMA Write of @len octets (last segment). */
static size_t mk_write(uint8_t *s, uint32_t stag, uint64_t to, size_t len)
{
	size_t n = hdr_tagged(s, ddp_ctrl(1, 1, 1), rd_ctrl(1, RDMAP_OP_WRITE), stag, to);

	return n + payload(s + n, len);
}

/* An untagged segment of opcode @op with @len payload octets. */
static size_t mk_untagged(uint8_t *s, unsigned op, uint32_t inv, uint32_t qn, uint32_t msn,
			  uint32_t mo, int last, size_t len)
{
	size_t n = hdr_untagged(s, ddp_ctrl(0, last, 1), rd_ctrl(1, op), inv, qn, msn, mo);

	return n + payload(s + n, len);
}

static size_t mk_send(uint8_t *s, uint32_t msn, size_t len)
{
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, msn, 0, 1, len);
}

/* An RDMA Read Request (RFC 5040 §4.4), one segment on QN 1. */
static size_t mk_rreq(uint8_t *s, uint32_t msn, uint32_t sink_stag, uint64_t sink_to, uint32_t size,
		      uint32_t src_stag, uint64_t src_to)
{
	size_t n = hdr_untagged(s, ddp_ctrl(0, 1, 1), rd_ctrl(1, RDMAP_OP_READ_REQ), 0,
				DDP_QN_READ_REQ, msn, 0);

	put_be32(s + n + RDMAP_RREQ_OFF_SINK_STAG, sink_stag);
	put_be64(s + n + RDMAP_RREQ_OFF_SINK_TO, sink_to);
	put_be32(s + n + RDMAP_RREQ_OFF_SIZE, size);
	put_be32(s + n + RDMAP_RREQ_OFF_SRC_STAG, src_stag);
	put_be64(s + n + RDMAP_RREQ_OFF_SRC_TO, src_to);
	return n + RDMAP_RREQ_LEN;
}

/* ULPDU_Length, ULPDU, PAD, CRC32C (RFC 5044 §4.1, §4.4). */
static size_t fpdu_build(uint8_t *out, const uint8_t *ulpdu, size_t len)
{
	size_t pad = (4 - ((2 + len) & 3)) & 3;

	put_be16(out, (uint16_t)len);
	memcpy(out + 2, ulpdu, len);
	memset(out + 2 + len, 0, pad);
	put_le32(out + 2 + len + pad, crc32c(out, 2 + len + pad));
	return 2 + len + pad + 4;
}

static ssize_t vinject(struct victim *v, const uint8_t *ulpdu, size_t len)
{
	uint8_t f[SEGS_MAX + 8];

	ck_assert_uint_le(len, SEGS_MAX);
	return vmk_inject(&v->p, f, fpdu_build(f, ulpdu, len));
}

/* Everything the victim transmits from now on, appended to v->wire. */
static size_t vcapture(struct victim *v)
{
	size_t total = 0, n;

	while ((n = rp_capture(&v->p, &v->p.b, v->wire + v->wire_len, WIRE_CAP - v->wire_len))) {
		v->wire_len += n;
		total += n;
	}
	return total;
}

struct fpdu_view {
	const uint8_t *u; /* ULPDU */
	size_t len;
};

/* Split the captured stream into FPDUs, checking PAD and CRC of each. */
static int parse_wire(const struct victim *v, struct fpdu_view *f, int max)
{
	size_t off = 0, wl = v->wire_len;
	const uint8_t *w = vmk_unwrap(v->wire, &wl);
	int n = 0;

	while (off < wl) {
		size_t len, pad;

		ck_assert_uint_ge(wl - off, 2);
		len = get_be16(w + off);
		pad = (4 - ((2 + len) & 3)) & 3;
		ck_assert_uint_le(off + 2 + len + pad + 4, wl);
		for (size_t i = 0; i < pad; i++)
			ck_assert_uint_eq(w[off + 2 + len + i], 0);
		ck_assert_uint_eq(get_le32(w + off + 2 + len + pad), crc32c(w + off, 2 + len + pad));
		ck_assert_int_lt(n, max);
		f[n].u = w + off + 2;
		f[n].len = len;
		n++;
		off += 2 + len + pad + 4;
	}
	return n;
}

static int is_terminate(const struct fpdu_view *f)
{
	return f->len >= 18 && !(f->u[0] & DDP_CTRL_T) &&
	       (f->u[1] & RDMAP_CTRL_OPCODE) == RDMAP_OP_TERMINATE;
}

/*
 * The victim sent exactly one TERMINATE, last, for the segment @seg (the
 * ULPDU as injected, @seg_len octets), and told its consumer the same.
 * Other FPDUs before it are allowed only if @others (work the victim
 * queued on MPA before the error).
 */
static void check_term(struct victim *v, const char *what, uint8_t layer, uint8_t etype,
		       uint8_t ecode, uint8_t hdrct, const uint8_t *seg, size_t seg_len, int others)
{
	struct fpdu_view f[64];
	const struct rdmap_term *et = &v->p.b.err_term;
	size_t dl = (hdrct & HD) ? ((seg[0] & DDP_CTRL_T) ? 14 : 18) : 0;
	size_t want = 18 + 4 + ((hdrct & (HM | HD)) ? 2 : 0) + dl + ((hdrct & HR) ? 28 : 0);
	uint8_t term_ddp[18];
	const uint8_t *t;
	int n;

	/* RFC 5040 §4.1/§5.4: untagged, L, DV 1; RV 1 opcode 7; Invalidate
	 * STag 0; QN 2, MSN 1 (the one Terminate of the stream), MO 0 */
	tu_hex("41 47  00000000  00000002 00000001 00000000", term_ddp, sizeof(term_ddp));
	vcapture(v);
	n = parse_wire(v, f, 64);
	ck_assert_msg(n >= 1, "%s: no TERMINATE sent", what);
	for (int i = 0; i < n - 1; i++) {
		ck_assert_msg(!is_terminate(&f[i]), "%s: more than one TERMINATE", what);
		ck_assert_msg(others, "%s: FPDU %d sent before the TERMINATE", what, i);
	}
	ck_assert_msg(is_terminate(&f[n - 1]), "%s: last FPDU is not a TERMINATE", what);
	t = f[n - 1].u;
	ck_assert_msg(memcmp(t, term_ddp, 18) == 0, "%s: TERMINATE DDP header", what);
	ck_assert_msg(t[18] == (layer << 4 | etype) && t[19] == ecode,
		      "%s: TERMINATE %u/%u/0x%02x, expected %u/%u/0x%02x", what, t[18] >> 4,
		      t[18] & 0xF, t[19], layer, etype, ecode);
	ck_assert_msg(t[20] == hdrct && t[21] == 0, "%s: HdrCt octets %02x %02x, expected %02x 00",
		      what, t[20], t[21], hdrct);
	ck_assert_msg(f[n - 1].len == want, "%s: TERMINATE ULPDU of %zu octets, expected %zu", what,
		      f[n - 1].len, want);
	if (hdrct & (HM | HD))
		ck_assert_msg(get_be16(t + 22) == seg_len,
			      "%s: DDP Segment Length %u, expected %zu", what, get_be16(t + 22),
			      seg_len);
	if (hdrct & HD)
		ck_assert_msg(memcmp(t + 24, seg, dl) == 0, "%s: copied DDP header differs", what);
	if (hdrct & HR)
		ck_assert_msg(memcmp(t + 24 + dl, seg + 18, 28) == 0,
			      "%s: copied Read Request header differs", what);

	/* the consumer was told, once, with the same cause */
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(v->p.b.nerr, 1);
	ck_assert_int_eq(v->p.b.err_received, 0);
	ck_assert_uint_eq(et->layer, layer);
	ck_assert_uint_eq(et->etype, etype);
	ck_assert_uint_eq(et->ecode, ecode);
	ck_assert_uint_eq(et->hdrct, hdrct);
	if (hdrct & HD) {
		ck_assert_uint_eq(et->seg_len, seg_len);
		ck_assert_uint_eq(et->ddp_hdr_len, dl);
		ck_assert_mem_eq(et->ddp_hdr, seg, dl);
	}
	if (hdrct & HR)
		ck_assert_mem_eq(et->rdma_hdr, seg + 18, 28);
}

/* Every work request posted on the victim completed, in posting order, with
 * a flush status and no cause attached; no receive was delivered.  The
 * first receive gets @first_recv when a Send failed in it (local length). */
static void check_flushed_first(struct victim *v, enum rdmap_wc_status first_recv)
{
	struct rp_host *b = &v->p.b;

	ck_assert_int_eq(b->nrwc, v->nrecv);
	for (int i = 0; i < b->nrwc; i++) {
		ck_assert_uint_eq(b->rwc[i].wr_id, RECV_ID0 + (uint64_t)i);
		ck_assert_int_eq(b->rwc[i].status, i ? RDMAP_WC_WR_FLUSH_ERR : first_recv);
		ck_assert_int_eq(b->rwc[i].opcode, RDMAP_WC_RECV);
	}
	ck_assert_int_eq(b->nswc, v->nsend);
	for (int i = 0; i < b->nswc; i++) {
		ck_assert_uint_eq(b->swc[i].wr_id, SEND_ID0 + (uint64_t)i);
		ck_assert_int_eq(b->swc[i].status, RDMAP_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(b->swc[i].opcode, RDMAP_WC_SEND);
		ck_assert_uint_eq(b->swc[i].flags & RDMAP_WC_F_TERM, 0);
	}
	ck_assert_uint_eq(b->qp.sq_count, 0);
	ck_assert_uint_eq(b->qp.rq_count, 0);
}

static void check_flushed(struct victim *v)
{
	check_flushed_first(v, RDMAP_WC_WR_FLUSH_ERR);
}

/* After the error: a perfectly valid Write is refused and places nothing,
 * nothing more is transmitted, nobody is told anything more. */
static void check_dead(struct victim *v, int rbuf_may_change)
{
	uint8_t seg[64];
	size_t n = mk_write(seg, v->tgt_mr->stag, va(v->tgt), 32);
	int nrwc = v->p.b.nrwc, nswc = v->p.b.nswc;

	ck_assert_int_lt(vinject(v, seg, n), 0);
	ck_assert_uint_eq(vcapture(v), 0);
	ck_assert_int_eq(v->p.b.nerr, 1);
	ck_assert_int_eq(v->p.b.nrwc, nrwc);
	ck_assert_int_eq(v->p.b.nswc, nswc);
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_ERROR);
	ck_assert_msg(memcmp(v->tgt, v->tgt_ref, TGT_SIZE) == 0, "target memory changed");
	if (!rbuf_may_change)
		ck_assert_msg(memcmp(v->rbuf, v->rbuf_ref, RBUF_LEN) == 0,
			      "receive buffers changed");
	/* work posted now is accepted and flushed at once (rdmap.h) */
	victim_post(v, 1, 1);
	ck_assert_int_eq(v->p.b.nrwc, nrwc + 1);
	ck_assert_uint_eq(v->p.b.rwc[nrwc].wr_id, RECV_ID0 + (uint64_t)v->nrecv - 1);
	ck_assert_int_eq(v->p.b.rwc[nrwc].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(v->p.b.nswc, nswc + 1);
	ck_assert_uint_eq(v->p.b.swc[nswc].wr_id, SEND_ID0 + (uint64_t)v->nsend - 1);
	ck_assert_int_eq(v->p.b.swc[nswc].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(vcapture(v), 0);
}

/* ---- the error table ---- */

#define F_NORECV 0x1 /* post no receive */
#define F_PLACED 0x2 /* the Send payload may have been placed (error found at rx_end) */
#define F_PREFIX 0x4 /* build() injects valid segments first; rp_inject of those must succeed */
#define F_EXT	 0x8 /* the victim has RFC 7306's extensions enabled */

struct err_case {
	const char *name;
	size_t (*build)(struct victim *v, uint8_t *seg);
	uint8_t layer, etype, ecode, hdrct;
	unsigned flags;
};

/* RDMA Write: DDP tagged buffer errors (RFC 5041 §7.2, table 2.7) */

static size_t b_w_unknown(struct victim *v, uint8_t *s)
{
	/* index bit 23 flipped: no slot of a 1024-entry table */
	return mk_write(s, v->tgt_mr->stag ^ 0x80000000u, va(v->tgt), 16);
}

static size_t b_w_badkey(struct victim *v, uint8_t *s)
{
	return mk_write(s, v->tgt_mr->stag ^ 0x5Au, va(v->tgt), 16);
}

static size_t b_w_otherpd(struct victim *v, uint8_t *s)
{
	struct ddp_mr *mr = vreg(v, &v->pd2, v->tgt, TGT_SIZE, DDP_ACC_ALL);

	return mk_write(s, mr->stag, va(v->tgt) + 64, 16);
}

static size_t b_w_noaccess(struct victim *v, uint8_t *s)
{
	struct ddp_mr *mr =
		vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_READ);

	return mk_write(s, mr->stag, va(v->tgt) + 64, 16);
}

static size_t b_w_below(struct victim *v, uint8_t *s)
{
	return mk_write(s, v->tgt_mr->stag, va(v->tgt) - 1, 16);
}

static size_t b_w_above(struct victim *v, uint8_t *s)
{
	/* TO + len = end + 1 */
	return mk_write(s, v->tgt_mr->stag, va(v->tgt) + TGT_SIZE - 15, 16);
}

static size_t b_w_wrap(struct victim *v, uint8_t *s)
{
	return mk_write(s, v->tgt_mr->stag, UINT64_MAX - 7, 16);
}

static size_t b_w_invalidated(struct victim *v, uint8_t *s)
{
	ck_assert_int_eq(ddp_stag_invalidate(&v->p.b.mem, v->tgt_mr->stag, &v->p.b.pd), 0);
	return mk_write(s, v->tgt_mr->stag, va(v->tgt), 16);
}

static size_t b_w_stale(struct victim *v, uint8_t *s)
{
	struct ddp_mem *m = &v->p.b.mem;
	struct ddp_mr *mr = vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_ALL), *again;
	struct ddp_mr **fill = calloc(m->nslots, sizeof(*fill));
	uint32_t old = mr->stag, n = 0;

	/* the slot is reused: the others taken (a registration takes a random
	 * free slot), the region deregistered and registered again; the new
	 * STag differs (its key always does) */
	ck_assert_ptr_nonnull(fill);
	while (m->nfree)
		fill[n++] = vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_ALL);
	ddp_mr_dereg(m, mr);
	again = vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_ALL);
	ck_assert_ptr_eq(again, mr);
	ck_assert_uint_ne(again->stag & 0xFF, old & 0xFF);
	while (n)
		ddp_mr_dereg(m, fill[--n]);
	free(fill);
	return mk_write(s, old, va(v->tgt), 16);
}

/* Versions */

static size_t b_dv0_tagged(struct victim *v, uint8_t *s)
{
	size_t n = mk_write(s, v->tgt_mr->stag, va(v->tgt), 16);

	s[0] = ddp_ctrl(1, 1, 0);
	return n;
}

static size_t b_dv2_tagged(struct victim *v, uint8_t *s)
{
	size_t n = mk_write(s, v->tgt_mr->stag, va(v->tgt), 16);

	s[0] = ddp_ctrl(1, 1, 2);
	return n;
}

static size_t b_dv0_untagged(struct victim *v, uint8_t *s)
{
	size_t n = mk_send(s, 1, 8);

	(void)v;
	s[0] = ddp_ctrl(0, 1, 0);
	return n;
}

static size_t b_dv2_untagged(struct victim *v, uint8_t *s)
{
	size_t n = mk_send(s, 1, 8);

	(void)v;
	s[0] = ddp_ctrl(0, 1, 2);
	return n;
}

static size_t b_rv_tagged(struct victim *v, uint8_t *s, unsigned rv)
{
	size_t n = mk_write(s, v->tgt_mr->stag, va(v->tgt), 16);

	s[1] = rd_ctrl(rv, RDMAP_OP_WRITE);
	return n;
}

static size_t b_rv0_tagged(struct victim *v, uint8_t *s)
{
	return b_rv_tagged(v, s, 0);
}

static size_t b_rv2_tagged(struct victim *v, uint8_t *s)
{
	return b_rv_tagged(v, s, 2);
}

static size_t b_rv3_tagged(struct victim *v, uint8_t *s)
{
	return b_rv_tagged(v, s, 3);
}

static size_t b_rv_untagged(uint8_t *s, unsigned rv)
{
	size_t n = mk_send(s, 1, 8);

	s[1] = rd_ctrl(rv, RDMAP_OP_SEND);
	return n;
}

static size_t b_rv0_untagged(struct victim *v, uint8_t *s)
{
	(void)v;
	return b_rv_untagged(s, 0);
}

static size_t b_rv2_untagged(struct victim *v, uint8_t *s)
{
	(void)v;
	return b_rv_untagged(s, 2);
}

static size_t b_rv3_rreq(struct victim *v, uint8_t *s)
{
	size_t n = mk_rreq(s, 1, 0x1234, 0, 16, v->tgt_mr->stag, va(v->tgt));

	s[1] = rd_ctrl(3, RDMAP_OP_READ_REQ);
	return n;
}

/* Opcode / model mismatches (table 2.7: 0/2/0x06) */

/* A valid-looking tagged segment (a Write of @len octets into the target)
 * carrying RDMAP opcode @op instead. */
static size_t tagged_as(struct victim *v, uint8_t *s, unsigned op, size_t len)
{
	size_t n = mk_write(s, v->tgt_mr->stag, va(v->tgt), len);

	s[1] = rd_ctrl(1, op);
	return n;
}

static size_t b_send_tagged(struct victim *v, uint8_t *s)
{
	return tagged_as(v, s, RDMAP_OP_SEND, 16);
}

static size_t b_write_untagged(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_WRITE, 0, DDP_QN_SEND, 1, 0, 1, 8);
}

static size_t b_rresp_untagged(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_READ_RESP, 0, DDP_QN_SEND, 1, 0, 1, 8);
}

static size_t b_rreq_tagged(struct victim *v, uint8_t *s)
{
	return tagged_as(v, s, RDMAP_OP_READ_REQ, 28);
}

static size_t b_term_tagged(struct victim *v, uint8_t *s)
{
	return tagged_as(v, s, RDMAP_OP_TERMINATE, 4);
}

/* Untagged buffer errors (RFC 5041 §7.1, §7.2) */

static size_t b_qn3(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND, 0, 3, 1, 0, 1, 8);
}

static size_t b_qn_huge(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND_SE, 0, 0xFFFFFFFFu, 1, 0, 1, 8);
}

static size_t b_send_qn1(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_READ_REQ, 1, 0, 1, 8);
}

static size_t b_send_qn2(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_TERMINATE, 1, 0, 1, 8);
}

static size_t b_rreq_qn0(struct victim *v, uint8_t *s)
{
	size_t n = mk_rreq(s, 1, 0x1234, 0, 16, v->tgt_mr->stag, va(v->tgt));

	put_be32(s + DDP_OFF_QN, DDP_QN_SEND);
	return n;
}

static size_t b_msn2(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_send(s, 2, 8);
}

static size_t b_msn0(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_send(s, 0, 8);
}

static size_t b_rreq_msn2(struct victim *v, uint8_t *s)
{
	return mk_rreq(s, 2, 0x1234, 0, 16, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_term_msn2(struct victim *v, uint8_t *s)
{
	size_t n = mk_untagged(s, RDMAP_OP_TERMINATE, 0, DDP_QN_TERMINATE, 2, 0, 1, 0);

	(void)v;
	memcpy(s + n, "\x20\x02\x00\x00", 4);
	return n + 4;
}

static size_t b_mo4(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, 1, 4, 1, 8);
}

static size_t b_too_long(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_send(s, 1, RECV_LEN + 1);
}

static size_t b_no_recv(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_send(s, 1, 8);
}

static size_t b_no_recv_zero(struct victim *v, uint8_t *s)
{
	/* RFC 5040 §5.3: "A zero-length Send Message Type MUST consume an
	 * Untagged Buffer at the Data Sink." */
	(void)v;
	return mk_send(s, 1, 0);
}

/* A multi-segment Send whose first segment is valid (injected here, placed),
 * then a second segment breaking the message. */
static void inject_first_half(struct victim *v)
{
	uint8_t s[64];
	size_t n = mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, 1, 0, 0, 24);

	ck_assert_int_gt(vinject(v, s, n), 0);
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(v->p.b.nrwc, 0);
}

static size_t b_cont_mo_gap(struct victim *v, uint8_t *s)
{
	inject_first_half(v);
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, 1, 28, 1, 8);
}

static size_t b_cont_msn(struct victim *v, uint8_t *s)
{
	inject_first_half(v);
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, 2, 24, 1, 8);
}

static size_t b_cont_opcode(struct victim *v, uint8_t *s)
{
	inject_first_half(v);
	return mk_untagged(s, RDMAP_OP_SEND_SE, 0, DDP_QN_SEND, 1, 24, 1, 8);
}

static size_t b_cont_too_long(struct victim *v, uint8_t *s)
{
	inject_first_half(v);
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_SEND, 1, 24, 1, RECV_LEN - 24 + 1);
}

/* Send with Invalidate (RFC 5040 §5.3, §7.2) */

static struct ddp_mr *inv_victim_mr;

static size_t b_sinv_foreign(struct victim *v, uint8_t *s)
{
	inv_victim_mr = vreg(v, &v->pd2, v->tgt, TGT_SIZE, DDP_ACC_ALL);
	return mk_untagged(s, RDMAP_OP_SEND_INV, inv_victim_mr->stag, DDP_QN_SEND, 1, 0, 1, 8);
}

static size_t b_sinv_unknown(struct victim *v, uint8_t *s)
{
	inv_victim_mr = v->tgt_mr;
	return mk_untagged(s, RDMAP_OP_SEND_SE_INV, v->tgt_mr->stag ^ 0x80000000u, DDP_QN_SEND, 1,
			   0, 1, 8);
}

/* Read Response with no Read outstanding (table 2.7: 0/2/0x06) */

static size_t b_rresp_unsolicited(struct victim *v, uint8_t *s)
{
	return tagged_as(v, s, RDMAP_OP_READ_RESP, 16);
}

static size_t b_rresp_unsolicited_zero(struct victim *v, uint8_t *s)
{
	size_t n = mk_write(s, 0xDEADBEEF, 0, 0);

	(void)v;
	s[1] = rd_ctrl(1, RDMAP_OP_READ_RESP);
	return n;
}

/* Read Request source checks (RFC 5040 §7.2 4a-4e: remote protection, R set) */

static size_t b_rr_invalid(struct victim *v, uint8_t *s)
{
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag ^ 0xC3u, va(v->tgt));
}

static size_t b_rr_otherpd(struct victim *v, uint8_t *s)
{
	struct ddp_mr *mr = vreg(v, &v->pd2, v->tgt, TGT_SIZE, DDP_ACC_ALL);

	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, mr->stag, va(v->tgt));
}

static size_t b_rr_noread(struct victim *v, uint8_t *s)
{
	struct ddp_mr *mr =
		vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_WRITE);

	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, mr->stag, va(v->tgt));
}

static size_t b_rr_below(struct victim *v, uint8_t *s)
{
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag, va(v->tgt) - 1);
}

static size_t b_rr_above(struct victim *v, uint8_t *s)
{
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag, va(v->tgt) + TGT_SIZE - 15);
}

static size_t b_rr_wrap(struct victim *v, uint8_t *s)
{
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 0xFFFFFFFFu, v->tgt_mr->stag, UINT64_MAX - 15);
}

static size_t b_rr_invalidated(struct victim *v, uint8_t *s)
{
	ck_assert_int_eq(ddp_stag_invalidate(&v->p.b.mem, v->tgt_mr->stag, &v->p.b.pd), 0);
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_rr_payload(struct victim *v, uint8_t *s)
{
	/* Figure 5: a Read Request carries no ULP payload */
	size_t n = mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag, va(v->tgt));

	return n + payload(s + n, 4);
}

static size_t b_rr_short(struct victim *v, uint8_t *s)
{
	/* the 28-octet Read Request header cut to 20 */
	return mk_rreq(s, 1, 0xABCD0102, 0x1000, 16, v->tgt_mr->stag, va(v->tgt)) - 8;
}

/* ---- RFC 7306: Atomic Requests, Atomic Responses, Immediate Data ---- */

/* An Atomic Request (RFC 7306 §5.2.1 Figure 4), one segment on QN 1. */
static size_t mk_areq(uint8_t *s, uint32_t qn, uint32_t msn, unsigned aop, uint32_t stag,
		      uint64_t to)
{
	size_t n =
		hdr_untagged(s, ddp_ctrl(0, 1, 1), rd_ctrl(1, RDMAP_OP_ATOMIC_REQ), 0, qn, msn, 0);

	put_be32(s + n, aop);
	put_be32(s + n + 4, 0x7E57AB1Du);
	put_be32(s + n + 8, stag);
	put_be64(s + n + 12, to);
	put_be64(s + n + 20, 0x0101010101010101ull); /* add/swap data */
	put_be64(s + n + 28, 0);		     /* add mask: a plain add */
	put_be64(s + n + 36, 0);		     /* compare data */
	put_be64(s + n + 44, UINT64_MAX);	     /* compare mask */
	return n + 52;
}

static size_t b_at_unknown(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag ^ 0x5Au, va(v->tgt));
}

static size_t b_at_otherpd(struct victim *v, uint8_t *s)
{
	struct ddp_mr *mr = vreg(v, &v->pd2, v->tgt, TGT_SIZE, DDP_ACC_ALL);

	return mk_areq(s, 1, 1, 0, mr->stag, va(v->tgt));
}

static size_t b_at_noatomic(struct victim *v, uint8_t *s)
{
	/* every right but REMOTE_ATOMIC */
	struct ddp_mr *mr =
		vreg(v, &v->p.b.pd, v->tgt, TGT_SIZE, DDP_ACC_ALL & ~DDP_ACC_REMOTE_ATOMIC);

	return mk_areq(s, 1, 1, 2, mr->stag, va(v->tgt));
}

static size_t b_at_below(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt) - 8);
}

static size_t b_at_above(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 2, v->tgt_mr->stag, va(v->tgt) + TGT_SIZE);
}

static size_t b_at_wrap(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, UINT64_MAX - 7);
}

static size_t b_at_invalidated(struct victim *v, uint8_t *s)
{
	ck_assert_int_eq(ddp_stag_invalidate(&v->p.b.mem, v->tgt_mr->stag, &v->p.b.pd), 0);
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_at_misaligned(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt) + 4);
}

static size_t b_at_misaligned_bad_stag(struct victim *v, uint8_t *s)
{
	/* alignment is checked before the STag (RFC 7306 §8.2's list) */
	return mk_areq(s, 1, 1, 2, 0xDEADBEEF, va(v->tgt) + 1);
}

static size_t b_at_aop1(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 1, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_at_aop15(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 15, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_at_payload(struct victim *v, uint8_t *s)
{
	size_t n = mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt));

	return n + payload(s + n, 8);
}

static size_t b_at_short(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt)) - 4;
}

static size_t b_at_notlast(struct victim *v, uint8_t *s)
{
	size_t n = mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt));

	s[0] = ddp_ctrl(0, 0, 1);
	return n;
}

static size_t b_at_qn0(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 0, 1, 0, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_at_qn3(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 3, 1, 0, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_at_msn2(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 2, 0, v->tgt_mr->stag, va(v->tgt));
}

/* An Atomic Response (§5.2.2 Figure 6) with nothing outstanding. */
static size_t b_aresp_unsolicited(struct victim *v, uint8_t *s)
{
	size_t n = hdr_untagged(s, ddp_ctrl(0, 1, 1), rd_ctrl(1, RDMAP_OP_ATOMIC_RESP), 0,
				DDP_QN_ATOMIC_RESP, 1, 0);

	(void)v;
	put_be32(s + n, 1);
	put_be64(s + n + 4, 0x1122334455667788ull);
	return n + 12;
}

static size_t b_aresp_qn1(struct victim *v, uint8_t *s)
{
	size_t n = b_aresp_unsolicited(v, s);

	put_be32(s + DDP_OFF_QN, DDP_QN_READ_REQ);
	return n;
}

/* Immediate Data (§6.2 Figure 7): @len octets (8 is right) on @qn. */
static size_t mk_imm(uint8_t *s, unsigned op, uint32_t qn, uint32_t msn, size_t len)
{
	return mk_untagged(s, op, 0, qn, msn, 0, 1, len);
}

static size_t b_imm_norecv(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM, DDP_QN_SEND, 1, 8);
}

static size_t b_imm_4(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM_SE, DDP_QN_SEND, 1, 4);
}

static size_t b_imm_12(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM, DDP_QN_SEND, 1, 12);
}

static size_t b_imm_qn1(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM, DDP_QN_READ_REQ, 1, 8);
}

static size_t b_imm_msn2(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM_SE, DDP_QN_SEND, 2, 8);
}

static size_t b_at_plain(struct victim *v, uint8_t *s)
{
	return mk_areq(s, 1, 1, 0, v->tgt_mr->stag, va(v->tgt));
}

static size_t b_imm_plain(struct victim *v, uint8_t *s)
{
	(void)v;
	return mk_imm(s, RDMAP_OP_IMM, DDP_QN_SEND, 1, 8);
}

static size_t b_at_tagged(struct victim *v, uint8_t *s)
{
	/* §5.2.1 rule 1: an Atomic Request references an untagged buffer */
	return tagged_as(v, s, RDMAP_OP_ATOMIC_REQ, 52);
}

static size_t b_imm_tagged(struct victim *v, uint8_t *s)
{
	return tagged_as(v, s, RDMAP_OP_IMM_SE, 8);
}

static size_t b_qn3_ext(struct victim *v, uint8_t *s)
{
	/* queue 3 exists with the extensions, but not for a Send */
	(void)v;
	return mk_untagged(s, RDMAP_OP_SEND, 0, DDP_QN_ATOMIC_RESP, 1, 0, 1, 8);
}

static const struct err_case err_cases[] = {
	/* DDP tagged buffer errors on an RDMA Write */
	{"write: unknown STag index", b_w_unknown, 1, 1, 0x00, HM | HD, 0},
	{"write: wrong STag key", b_w_badkey, 1, 1, 0x00, HM | HD, 0},
	{"write: STag of another PD", b_w_otherpd, 1, 1, 0x02, HM | HD, 0},
	/* rdmap_rx.c's documented choice (RFC 5041 has no code; siw does the same) */
	{"write: no REMOTE_WRITE", b_w_noaccess, 1, 1, 0x00, HM | HD, 0},
	{"write: TO = base - 1", b_w_below, 1, 1, 0x01, HM | HD, 0},
	{"write: TO + len = end + 1", b_w_above, 1, 1, 0x01, HM | HD, 0},
	{"write: TO wraps", b_w_wrap, 1, 1, 0x03, HM | HD, 0},
	{"write: invalidated STag", b_w_invalidated, 1, 1, 0x00, HM | HD, 0},
	{"write: stale STag of a reused slot", b_w_stale, 1, 1, 0x00, HM | HD, 0},
	/* versions */
	{"tagged DV 0", b_dv0_tagged, 1, 1, 0x04, HM | HD, 0},
	{"tagged DV 2", b_dv2_tagged, 1, 1, 0x04, HM | HD, 0},
	{"untagged DV 0", b_dv0_untagged, 1, 2, 0x06, HM | HD, 0},
	{"untagged DV 2", b_dv2_untagged, 1, 2, 0x06, HM | HD, 0},
	/* RV 0 (the RDMA Consortium's version): rejected as siw does, see rdmap_rx.c */
	{"tagged RV 0", b_rv0_tagged, 0, 2, 0x05, HM | HD, 0},
	{"tagged RV 2", b_rv2_tagged, 0, 2, 0x05, HM | HD, 0},
	{"tagged RV 3", b_rv3_tagged, 0, 2, 0x05, HM | HD, 0},
	{"untagged RV 0", b_rv0_untagged, 0, 2, 0x05, HM | HD, 0},
	{"untagged RV 2", b_rv2_untagged, 0, 2, 0x05, HM | HD, 0},
	/* RFC 5040 §7.1 rule 3: an RDMAP error on a Read Request carries it */
	{"read request RV 3", b_rv3_rreq, 0, 2, 0x05, HM | HD | HR, 0},
	/* opcode carried by the wrong model */
	{"Send opcode, tagged", b_send_tagged, 0, 2, 0x06, HM | HD, 0},
	{"Write opcode, untagged", b_write_untagged, 0, 2, 0x06, HM | HD, 0},
	{"Read Response opcode, untagged", b_rresp_untagged, 0, 2, 0x06, HM | HD, 0},
	{"Read Request opcode, tagged", b_rreq_tagged, 0, 2, 0x06, HM | HD, 0},
	{"Terminate opcode, tagged", b_term_tagged, 0, 2, 0x06, HM | HD, 0},
	/* untagged buffer errors */
	{"Send on QN 3", b_qn3, 1, 2, 0x01, HM | HD, 0},
	{"Send SE on QN 0xFFFFFFFF", b_qn_huge, 1, 2, 0x01, HM | HD, 0},
	{"Send on QN 1", b_send_qn1, 1, 2, 0x01, HM | HD, 0},
	{"Send on QN 2", b_send_qn2, 1, 2, 0x01, HM | HD, 0},
	{"Read Request on QN 0", b_rreq_qn0, 1, 2, 0x01, HM | HD, 0},
	{"Send MSN 2 (1 expected)", b_msn2, 1, 2, 0x03, HM | HD, 0},
	{"Send MSN 0 (1 expected)", b_msn0, 1, 2, 0x03, HM | HD, 0},
	{"Read Request MSN 2 (1 expected)", b_rreq_msn2, 1, 2, 0x03, HM | HD, 0},
	{"Terminate MSN 2 (1 expected)", b_term_msn2, 1, 2, 0x03, HM | HD, 0},
	{"Send first segment MO 4", b_mo4, 1, 2, 0x04, HM | HD, 0},
	{"Send longer than the receive", b_too_long, 1, 2, 0x05, HM | HD, 0},
	{"Send with no receive posted", b_no_recv, 1, 2, 0x02, HM | HD, F_NORECV},
	{"zero-length Send with no receive", b_no_recv_zero, 1, 2, 0x02, HM | HD, F_NORECV},
	{"Send continuation with an MO gap", b_cont_mo_gap, 1, 2, 0x04, HM | HD,
	 F_PLACED | F_PREFIX},
	{"Send continuation with another MSN", b_cont_msn, 1, 2, 0x03, HM | HD,
	 F_PLACED | F_PREFIX},
	{"Send continuation with another opcode", b_cont_opcode, 0, 2, 0x06, HM | HD,
	 F_PLACED | F_PREFIX},
	{"Send continuation beyond the receive", b_cont_too_long, 1, 2, 0x05, HM | HD,
	 F_PLACED | F_PREFIX},
	/* Send with Invalidate: found once the message is complete (rx_end) */
	{"Send with Invalidate of another PD's STag", b_sinv_foreign, 0, 1, 0x09, HM | HD,
	 F_PLACED},
	{"Send with SE and Invalidate of an unknown STag", b_sinv_unknown, 0, 1, 0x00, HM | HD,
	 F_PLACED},
	/* Read Response nobody asked for */
	{"Read Response, no Read outstanding", b_rresp_unsolicited, 0, 2, 0x06, HM | HD, 0},
	{"zero-length Read Response, no Read outstanding", b_rresp_unsolicited_zero, 0, 2, 0x06,
	 HM | HD, 0},
	/* Read Request data source checks */
	{"Read Request: invalid source STag", b_rr_invalid, 0, 1, 0x00, HM | HD | HR, 0},
	{"Read Request: source STag of another PD", b_rr_otherpd, 0, 1, 0x03, HM | HD | HR, 0},
	{"Read Request: source lacks REMOTE_READ", b_rr_noread, 0, 1, 0x02, HM | HD | HR, 0},
	{"Read Request: source TO = base - 1", b_rr_below, 0, 1, 0x01, HM | HD | HR, 0},
	{"Read Request: source TO + size = end + 1", b_rr_above, 0, 1, 0x01, HM | HD | HR, 0},
	{"Read Request: source TO + size wraps", b_rr_wrap, 0, 1, 0x04, HM | HD | HR, 0},
	{"Read Request: invalidated source STag", b_rr_invalidated, 0, 1, 0x00, HM | HD | HR, 0},
	/* rdmap_rx.c's choice: a DDP "message too long" (digest: 0/2/0xFF or 0x06 also fit) */
	{"Read Request carrying payload", b_rr_payload, 1, 2, 0x05, HM | HD, 0},
	{"Read Request header cut short", b_rr_short, 1, 2, 0x05, HM | HD, 0},
	/* RFC 7306 on a stream without its extensions: §1.1, "Remote
	 * Operation Error / Unexpected OpCode" */
	{"Atomic Request, extensions off", b_at_plain, 0, 2, 0x06, HM | HD, 0},
	{"Immediate Data, extensions off", b_imm_plain, 0, 2, 0x06, HM | HD, 0},
	{"Atomic Response, extensions off", b_aresp_unsolicited, 0, 2, 0x06, HM | HD, 0},
	/* RFC 7306 Atomic Requests: §8.1, an incoming message's TERMINATE
	 * carries its DDP header, "the Terminated RDMA Header field is set to
	 * zero" (no R); the target's checks are RFC 5040's Remote Protection
	 * codes (RFC 7306 names none) */
	{"Atomic Request: invalid STag", b_at_unknown, 0, 1, 0x00, HM | HD, F_EXT},
	{"Atomic Request: STag of another PD", b_at_otherpd, 0, 1, 0x03, HM | HD, F_EXT},
	{"Atomic Request: no REMOTE_ATOMIC", b_at_noatomic, 0, 1, 0x02, HM | HD, F_EXT},
	{"Atomic Request: TO = base - 8", b_at_below, 0, 1, 0x01, HM | HD, F_EXT},
	{"Atomic Request: TO = end", b_at_above, 0, 1, 0x01, HM | HD, F_EXT},
	{"Atomic Request: TO + 8 wraps", b_at_wrap, 0, 1, 0x04, HM | HD, F_EXT},
	{"Atomic Request: invalidated STag", b_at_invalidated, 0, 1, 0x00, HM | HD, F_EXT},
	/* §8.2: misaligned is Remote Operation / "Catastrophic Error,
	 * Localized to RDMAP Stream", found before the STag's checks */
	{"Atomic Request: TO not 8-aligned", b_at_misaligned, 0, 2, 0x07, HM | HD, F_EXT},
	{"Atomic Request: misaligned, bad STag", b_at_misaligned_bad_stag, 0, 2, 0x07, HM | HD,
	 F_EXT},
	/* §5.2.1 rule 4 names no code: Unexpected OpCode (rdmap_rx.c's choice) */
	{"Atomic Request: AOpCode 1 (reserved)", b_at_aop1, 0, 2, 0x06, HM | HD, F_EXT},
	{"Atomic Request: AOpCode 15", b_at_aop15, 0, 2, 0x06, HM | HD, F_EXT},
	/* sizes: what a Read Request of the wrong size gets */
	{"Atomic Request carrying payload", b_at_payload, 1, 2, 0x05, HM | HD, F_EXT},
	{"Atomic Request header cut short", b_at_short, 1, 2, 0x05, HM | HD, F_EXT},
	{"Atomic Request in two segments", b_at_notlast, 1, 2, 0x05, HM | HD, F_EXT},
	{"Atomic Request on QN 0", b_at_qn0, 1, 2, 0x01, HM | HD, F_EXT},
	{"Atomic Request on QN 3", b_at_qn3, 1, 2, 0x01, HM | HD, F_EXT},
	{"Atomic Request MSN 2 (1 expected)", b_at_msn2, 1, 2, 0x03, HM | HD, F_EXT},
	{"Atomic Response, no atomic outstanding", b_aresp_unsolicited, 0, 2, 0x06, HM | HD, F_EXT},
	{"Atomic Response on QN 1", b_aresp_qn1, 1, 2, 0x01, HM | HD, F_EXT},
	{"Send on QN 3, extensions on", b_qn3_ext, 1, 2, 0x01, HM | HD, F_EXT},
	{"Atomic Request opcode, tagged", b_at_tagged, 0, 2, 0x06, HM | HD, F_EXT},
	{"Immediate Data opcode, tagged", b_imm_tagged, 0, 2, 0x06, HM | HD, F_EXT},
	/* Immediate Data: a receive is consumed (§6.3), exactly 8 octets */
	{"Immediate Data with no receive posted", b_imm_norecv, 1, 2, 0x02, HM | HD,
	 F_EXT | F_NORECV},
	{"Immediate Data of 4 octets", b_imm_4, 1, 2, 0x05, HM | HD, F_EXT},
	{"Immediate Data of 12 octets", b_imm_12, 1, 2, 0x05, HM | HD, F_EXT},
	{"Immediate Data on QN 1", b_imm_qn1, 1, 2, 0x01, HM | HD, F_EXT},
	{"Immediate Data MSN 2 (1 expected)", b_imm_msn2, 1, 2, 0x03, HM | HD, F_EXT},
};
#define NCASES (int)(sizeof(err_cases) / sizeof(err_cases[0]))

/* @lend 0: whole FPDUs through mpa_rx(); 1: through mpa_rx_lend()/ack with
 * the stream cut into runs of 1..5 octets.  The answer must not differ. */
static void run_case(const struct err_case *c, int lend)
{
	struct victim *v = victim_new_cfg(2, 0, (c->flags & F_EXT) ? RDMAP_EXT_RFC7306 : 0);
	uint8_t seg[SEGS_MAX];
	size_t n;
	ssize_t r;

	inv_victim_mr = NULL;
	if (lend) {
		v->p.lend = 1;
		v->p.max_chunk = 5;
	}
	victim_post(v, (c->flags & F_NORECV) ? 0 : 2, 2);
	n = c->build(v, seg);
	r = vinject(v, seg, n);
	ck_assert_msg(r < 0, "%s: injection accepted (%zd)", c->name, r);
	check_term(v, c->name, c->layer, c->etype, c->ecode, c->hdrct, seg, n, 0);
	/* a Send longer than its receive: that receive fails with a length error */
	check_flushed_first(v, strncmp(c->name, "Send", 4) == 0 && c->layer == 1 && c->etype == 2 &&
					       c->ecode == 0x05
				       ? RDMAP_WC_LOC_LEN_ERR
				       : RDMAP_WC_WR_FLUSH_ERR);
	if (inv_victim_mr)
		ck_assert_msg(inv_victim_mr->valid, "%s: the STag was invalidated", c->name);
	check_dead(v, c->flags & F_PLACED);
	victim_free(v);
}

START_TEST(inject_error)
{
	run_case(&err_cases[_i], 0);
	run_case(&err_cases[_i], 1);
}
END_TEST

/* Unknown opcodes 8..15 in both models: 0/2/0x06 (RFC 5040 §7.2 "The RDMA
 * OpCode MUST be valid"). */
START_TEST(unknown_opcode)
{
	unsigned op = 8 + (unsigned)(_i % 8);
	int tagged = _i >= 8;
	struct victim *v = victim_new();
	uint8_t seg[64];
	size_t n;

	victim_post(v, 2, 1);
	if (tagged)
		n = mk_write(seg, v->tgt_mr->stag, va(v->tgt), 16);
	else
		n = mk_send(seg, 1, 16);
	seg[1] = rd_ctrl(1, op);
	ck_assert_int_lt(vinject(v, seg, n), 0);
	check_term(v, "unknown opcode", 0, 2, 0x06, HM | HD, seg, n, 0);
	check_flushed(v);
	check_dead(v, 0);
	victim_free(v);
}
END_TEST

/*
 * A peer exceeding our IRD: the victim has IRD 2 and a transmit queue of 2
 * FPDUs, so two large Read Requests stay outstanding (their responses cannot
 * be queued yet) and the third one overflows.  RDMAP 0/2/0x07 with the Read
 * Request header (RFC 5040 §7.1 rule 3; siw sends the same code without R).
 */
START_TEST(read_beyond_ird)
{
	struct victim *v = victim_new_cfg(2, 2, 0);
	uint8_t seg[3][64];
	size_t n[3];
	struct fpdu_view f[64];
	int nf;

	victim_post(v, 2, 1);
	for (int i = 0; i < 3; i++)
		n[i] = mk_rreq(seg[i], (uint32_t)i + 1, 0x5100 + (uint32_t)i, 0x7000 * (uint64_t)i,
			       6000, v->tgt_mr->stag, va(v->tgt) + 100 * (uint64_t)i);
	ck_assert_int_gt(vinject(v, seg[0], n[0]), 0);
	ck_assert_int_gt(vinject(v, seg[1], n[1]), 0);
	ck_assert_uint_eq(v->p.b.qp.irq_count, 2);
	ck_assert_int_lt(vinject(v, seg[2], n[2]), 0);
	check_term(v, "IRD overflow", 0, 2, 0x07, HM | HD | HR, seg[2], n[2], 1);
	/* whatever went before the TERMINATE is the start of the first answer
	 * (its sink TO is 0, so the TO is the offset into the source) */
	nf = parse_wire(v, f, 64);
	for (int i = 0; i < nf - 1; i++) {
		ck_assert_uint_eq(f[i].u[0], ddp_ctrl(1, 0, 1));
		ck_assert_uint_eq(f[i].u[1], rd_ctrl(1, RDMAP_OP_READ_RESP));
		ck_assert_uint_eq(get_be32(f[i].u + 2), 0x5100);
		ck_assert_uint_lt(get_be64(f[i].u + 6), 6000);
		ck_assert_mem_eq(f[i].u + 14, v->tgt + get_be64(f[i].u + 6), f[i].len - 14);
	}
	check_flushed(v);
	check_dead(v, 0);
	victim_free(v);
}
END_TEST

/* RFC 5040 §5.2.1: a zero-length Read Request "MUST NOT validate the Data
 * Source STag and Data Source Tagged Offset" and gets a zero-length Read
 * Response carrying the sink STag and TO as sent. */
START_TEST(zero_length_read)
{
	struct victim *v = victim_new();
	uint8_t seg[64], resp[14];
	struct fpdu_view f[8];
	size_t n;

	victim_post(v, 2, 0);
	for (uint32_t msn = 1; msn <= 2; msn++) {
		uint64_t sink_to = 0x1122334455667788ull + msn;

		v->wire_len = 0;
		n = mk_rreq(seg, msn, 0xCAFEBA00 + msn, sink_to, 0, 0xDEADBEEF, UINT64_MAX);
		ck_assert_int_eq(vinject(v, seg, n),
				 (ssize_t)(n + 2 + 4 + ((4 - (2 + n) % 4) % 4)));
		vcapture(v);
		ck_assert_int_eq(parse_wire(v, f, 8), 1);
		ck_assert_uint_eq(f[0].len, 14);
		hdr_tagged(resp, ddp_ctrl(1, 1, 1), rd_ctrl(1, RDMAP_OP_READ_RESP),
			   0xCAFEBA00 + msn, sink_to);
		ck_assert_mem_eq(f[0].u, resp, 14);
	}
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(v->p.b.nerr, 0);
	ck_assert_int_eq(v->p.b.nrwc, 0);
	ck_assert_uint_eq(v->p.b.qp.irq_count, 0);
	/* still in business: a real Write lands */
	n = mk_write(seg, v->tgt_mr->stag, va(v->tgt) + 8, 16);
	ck_assert_int_gt(vinject(v, seg, n), 0);
	ck_assert_mem_eq(v->tgt + 8, seg + 14, 16);
	ck_assert_mem_eq(v->tgt + 24, v->tgt_ref + 24, TGT_SIZE - 24);
	ck_assert_mem_eq(v->tgt, v->tgt_ref, 8);
	victim_free(v);
}
END_TEST

/*
 * RFC 7306 against literal octets, not the codec under test: hand-built
 * Atomic Requests (FetchAdd, then CmpSwap with masks), a Write then
 * Immediate Data, and Immediate Data with SE are accepted by a victim with
 * the extensions; the Atomic Responses are byte for byte §5.2.2's (QN 3,
 * MSN 1 and 2, opcode 0xB, the Request Identifier echoed, the value
 * before), and the receives complete as RFC 7306 §6 says.
 */
START_TEST(ext_literal_octets)
{
	struct victim *v = victim_new_cfg(2, 0, RDMAP_EXT_RFC7306);
	uint64_t *word = (uint64_t *)(void *)(v->tgt + 64), before;
	uint8_t seg[128], want[30];
	struct fpdu_view f[8];
	size_t n;

	victim_post(v, 2, 0);
	memcpy(&before, word, 8);
	/* FetchAdd 0x0101010101010101, Add Mask 0, Request Identifier 0x7E57AB1D */
	n = mk_areq(seg, 1, 1, 0, v->tgt_mr->stag, va(word));
	ck_assert_int_gt(vinject(v, seg, n), 0);
	vcapture(v);
	ck_assert_int_eq(parse_wire(v, f, 8), 1);
	ck_assert_uint_eq(f[0].len, 30);
	tu_hex("41 4b 00000000 00000003 00000001 00000000  7e57ab1d", want, 22);
	put_be64(want + 22, before);
	ck_assert_mem_eq(f[0].u, want, 30);
	ck_assert_uint_eq(*word, before + 0x0101010101010101ull);
	/* CmpSwap (AOpCode 2): compare the low byte only, swap the high byte only */
	n = mk_areq(seg, 1, 2, 2, v->tgt_mr->stag, va(word));
	put_be32(seg + 18 + 4, 0x0BADF00D);
	put_be64(seg + 18 + 20, 0xAB00000000000000ull);			 /* swap data */
	put_be64(seg + 18 + 28, 0xFF00000000000000ull);			 /* swap mask */
	put_be64(seg + 18 + 36, (before + 0x0101010101010101ull) & 0xFF); /* compare data */
	put_be64(seg + 18 + 44, 0xFF);					 /* compare mask */
	memcpy(&before, word, 8);
	v->wire_len = 0;
	ck_assert_int_gt(vinject(v, seg, n), 0);
	vcapture(v);
	ck_assert_int_eq(parse_wire(v, f, 8), 1);
	tu_hex("41 4b 00000000 00000003 00000002 00000000  0badf00d", want, 22);
	put_be64(want + 22, before);
	ck_assert_mem_eq(f[0].u, want, 30);
	ck_assert_uint_eq(*word, (before & 0x00FFFFFFFFFFFFFFull) | 0xAB00000000000000ull);
	/* the rest of the region untouched */
	ck_assert_mem_eq(v->tgt, v->tgt_ref, 64);
	ck_assert_mem_eq(v->tgt + 72, v->tgt_ref + 72, TGT_SIZE - 72);
	/* a Write of 16 octets, then Immediate Data 01 02 03 04 + 4 octets */
	n = mk_write(seg, v->tgt_mr->stag, va(v->tgt) + 256, 16);
	ck_assert_int_gt(vinject(v, seg, n), 0);
	n = hdr_untagged(seg, ddp_ctrl(0, 1, 1), rd_ctrl(1, 8), 0, 0, 1, 0);
	tu_hex("01020304 a5a5a5a5", seg + n, 8);
	ck_assert_int_gt(vinject(v, seg, n + 8), 0);
	ck_assert_int_eq(v->p.b.nrwc, 1);
	ck_assert_int_eq(v->p.b.rwc[0].status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(v->p.b.rwc[0].opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(v->p.b.rwc[0].byte_len, 16);
	ck_assert_uint_eq(v->p.b.rwc[0].flags, RDMAP_WC_F_WITH_IMM);
	ck_assert_mem_eq(&v->p.b.rwc[0].imm_data, "\x01\x02\x03\x04", 4);
	/* Immediate Data with SE (opcode 9), alone: a RECV */
	n = hdr_untagged(seg, ddp_ctrl(0, 1, 1), rd_ctrl(1, 9), 0, 0, 2, 0);
	tu_hex("fffefdfc 00000000", seg + n, 8);
	ck_assert_int_gt(vinject(v, seg, n + 8), 0);
	ck_assert_int_eq(v->p.b.nrwc, 2);
	ck_assert_int_eq(v->p.b.rwc[1].opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(v->p.b.rwc[1].byte_len, 0);
	ck_assert_uint_eq(v->p.b.rwc[1].flags, RDMAP_WC_F_WITH_IMM | RDMAP_WC_F_SOLICITED);
	ck_assert_mem_eq(&v->p.b.rwc[1].imm_data, "\xff\xfe\xfd\xfc", 4);
	/* no receive buffer was written */
	ck_assert_mem_eq(v->rbuf, v->rbuf_ref, RBUF_LEN);
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(v->p.b.nerr, 0);
	victim_free(v);
}
END_TEST

/* RFC 7306 §5.2: Atomic Requests share IRD with Read Requests (§5.2.2
 * rule 4): two large Reads whose responses cannot all be queued fill an IRD
 * of 2, and an Atomic Request then overflows it, as a third Read would
 * (C8: 0/2/0x07; no RDMA header for an Atomic Request, §8.1). */
START_TEST(atomic_beyond_ird)
{
	struct victim *v = victim_new_cfg(2, 2, RDMAP_EXT_RFC7306);
	uint8_t seg[3][128];
	size_t n[3];

	victim_post(v, 2, 1);
	for (int i = 0; i < 2; i++)
		n[i] = mk_rreq(seg[i], (uint32_t)i + 1, 0x5100 + (uint32_t)i, 0x7000 * (uint64_t)i, 6000,
			       v->tgt_mr->stag, va(v->tgt) + 100 * (uint64_t)i);
	n[2] = mk_areq(seg[2], DDP_QN_READ_REQ, 3, 0, v->tgt_mr->stag, va(v->tgt) + 4096);
	ck_assert_int_gt(vinject(v, seg[0], n[0]), 0);
	ck_assert_int_gt(vinject(v, seg[1], n[1]), 0);
	ck_assert_uint_eq(v->p.b.qp.irq_count, 2);
	ck_assert_int_lt(vinject(v, seg[2], n[2]), 0);
	check_term(v, "IRD overflow by an atomic", 0, 2, 0x07, HM | HD, seg[2], n[2], 1);
	check_flushed(v);
	check_dead(v, 0);
	victim_free(v);
}
END_TEST

/* RFC 7306 §5.2.2 rule 7: an Atomic Response that does not answer the
 * oldest outstanding atomic (another Request Identifier) is an error
 * (0/2/0x06, C11's code); the atomic's result buffer is not written. */
START_TEST(atomic_response_mismatch)
{
	struct victim *v = victim_new_cfg(2, 0, RDMAP_EXT_RFC7306);
	struct rdmap_send_wr w = {0};
	uint8_t seg[64], ref[8];
	struct fpdu_view f[8];
	size_t n;

	victim_post(v, 2, 0);
	memcpy(ref, v->sbuf, 8);
	/* the responder sends only after the initiator's first FPDU (RFC
	 * 5044 §7.1.2): a zero-length Write, which places nothing */
	n = mk_write(seg, 0xDEADBEEF, 0, 0);
	ck_assert_int_eq(vinject(v, seg, n), 20);
	w.wr_id = 0x77;
	w.opcode = RDMAP_WR_ATOMIC_FADD;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0] = (struct rdmap_sge){va(v->sbuf), 8, v->sbuf_mr->stag};
	w.rkey = 0x12345678;
	w.remote_addr = 0x1000;
	w.compare_add = 1;
	ck_assert_int_eq(rdmap_post_send(&v->p.b.qp, &w), 0);
	vcapture(v);
	ck_assert_int_eq(parse_wire(v, f, 8), 1);
	/* the victim's own Atomic Request: QN 1, MSN 1, Request Identifier 1 */
	ck_assert_uint_eq(f[0].len, 70);
	ck_assert_uint_eq(f[0].u[1], rd_ctrl(1, RDMAP_OP_ATOMIC_REQ));
	ck_assert_uint_eq(get_be32(f[0].u + 6), 1);
	ck_assert_uint_eq(get_be32(f[0].u + 10), 1);
	ck_assert_uint_eq(get_be32(f[0].u + 18 + 4), 1);
	v->wire_len = 0;
	n = hdr_untagged(seg, ddp_ctrl(0, 1, 1), rd_ctrl(1, RDMAP_OP_ATOMIC_RESP), 0, DDP_QN_ATOMIC_RESP, 1, 0);
	put_be32(seg + n, 2); /* not 1 */
	put_be64(seg + n + 4, 0x5555555555555555ull);
	n += 12;
	ck_assert_int_lt(vinject(v, seg, n), 0);
	check_term(v, "Atomic Response for another request", 0, 2, 0x06, HM | HD, seg, n, 0);
	ck_assert_int_eq(v->p.b.nswc, 1);
	ck_assert_uint_eq(v->p.b.swc[0].wr_id, 0x77);
	ck_assert_int_eq(v->p.b.swc[0].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(v->p.b.swc[0].opcode, RDMAP_WC_FETCH_ADD);
	ck_assert_mem_eq(v->sbuf, ref, 8);
	victim_free(v);
}
END_TEST

/* RFC 5041 §5.2 / RFC 5040 §2.1: a zero-length Write checks no STag and
 * places nothing (RFC 6581's Write RTR relies on it). */
START_TEST(zero_length_write)
{
	struct victim *v = victim_new();
	uint8_t seg[64];
	size_t n;

	victim_post(v, 2, 0);
	n = mk_write(seg, 0xDEADBEEF, 0xFFFFFFFFFFFFFFF0ull, 0);
	ck_assert_int_eq(vinject(v, seg, n), 20);
	n = mk_write(seg, v->tgt_mr->stag ^ 0xFF, 0, 0);
	seg[0] = ddp_ctrl(1, 0, 1); /* not last either: nothing to say about it */
	ck_assert_int_eq(vinject(v, seg, n), 20);
	ck_assert_uint_eq(vcapture(v), 0);
	ck_assert_int_eq(v->p.b.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(v->p.b.nerr, 0);
	ck_assert_int_eq(v->p.b.nrwc, 0);
	ck_assert_mem_eq(v->tgt, v->tgt_ref, TGT_SIZE);
	ck_assert_mem_eq(v->rbuf, v->rbuf_ref, RBUF_LEN);
	/* and the stream carries on */
	n = mk_send(seg, 1, 10);
	ck_assert_int_gt(vinject(v, seg, n), 0);
	ck_assert_int_eq(v->p.b.nrwc, 1);
	ck_assert_int_eq(v->p.b.rwc[0].status, RDMAP_WC_SUCCESS);
	ck_assert_uint_eq(v->p.b.rwc[0].byte_len, 10);
	victim_free(v);
}
END_TEST

/* IRD 0: the first Read Request already overflows. */
START_TEST(read_with_ird_0)
{
	struct victim *v = victim_new_cfg(0, 0, 0);
	uint8_t seg[64];
	size_t n;

	victim_post(v, 1, 1);
	n = mk_rreq(seg, 1, 0x5100, 0, 0, 0, 0);
	ck_assert_int_lt(vinject(v, seg, n), 0);
	check_term(v, "IRD 0", 0, 2, 0x07, HM | HD | HR, seg, n, 0);
	check_flushed(v);
	check_dead(v, 0);
	victim_free(v);
}
END_TEST

/*
 * The victim as Read requester: a Read Response must land where the
 * request asked, in order, and no further (RFC 5040 §5.2.2 allows the
 * check; table 2.7: 1/1/0x00 for the STag, 1/1/0x01 for TO and length).
 * The Read is handed to MPA first (it stays queued: the gate is closed).
 */
START_TEST(read_response_mismatch)
{
	struct victim *v = victim_new();
	struct rp_host *b = &v->p.b;
	struct rdmap_send_wr w = {0};
	uint8_t seg[128];
	uint64_t sink = va(v->tgt) + 1024;
	size_t n = 0;
	uint8_t ecode = 0;
	ssize_t r;

	victim_post(v, 2, 0);
	w.wr_id = SEND_ID0;
	w.opcode = RDMAP_WR_READ;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = sink;
	w.sge[0].length = 32;
	w.sge[0].lkey = v->tgt_mr->stag;
	w.rkey = 0x12345678;
	w.remote_addr = 0x9000;
	ck_assert_int_eq(rdmap_post_send(&b->qp, &w), 0);
	v->nsend = 1;
	ck_assert_int_eq(rdmap_qp_progress(&b->qp), 1);
	ck_assert_uint_eq(b->qp.orq_count, 1);
	switch (_i) {
	case 0: /* another STag, valid and writable */
		n = mk_write(seg, vreg(v, &b->pd, v->tgt, TGT_SIZE, DDP_ACC_ALL)->stag, sink, 16);
		ecode = 0x00;
		break;
	case 1: /* not where asked */
		n = mk_write(seg, v->tgt_mr->stag, sink + 4, 16);
		ecode = 0x01;
		break;
	case 2: /* more than asked */
		n = mk_write(seg, v->tgt_mr->stag, sink, 33);
		ecode = 0x01;
		break;
	case 3: /* less than asked, and last: found at rx_end, after placement */
		n = mk_write(seg, v->tgt_mr->stag, sink, 16);
		ecode = 0x01;
		break;
	}
	seg[1] = rd_ctrl(1, RDMAP_OP_READ_RESP);
	r = vinject(v, seg, n);
	ck_assert_int_lt(r, 0);
	check_term(v, "read response mismatch", 1, 1, ecode, HM | HD, seg, n, 1);
	ck_assert_int_eq(b->nswc, 1);
	ck_assert_uint_eq(b->swc[0].wr_id, SEND_ID0);
	ck_assert_int_eq(b->swc[0].opcode, RDMAP_WC_RDMA_READ);
	ck_assert_int_ne(b->swc[0].status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(b->nrwc, 2);
	ck_assert_int_eq(b->rwc[0].status, RDMAP_WC_WR_FLUSH_ERR);
	if (_i == 3) {
		/* the 16 octets placed are the only change */
		ck_assert_mem_eq(v->tgt + 1024, seg + 14, 16);
		memcpy(v->tgt_ref + 1024, seg + 14, 16);
	}
	ck_assert_mem_eq(v->tgt, v->tgt_ref, TGT_SIZE);
	victim_free(v);
}
END_TEST

/*
 * MPA-level failures reach RDMAP through rdmap_qp_conn_failed(): the victim
 * sends MPA's TERMINATE, Layer LLP with no headers (RFC 5040 Figure 10):
 * a CRC error (RFC 5044 §8 code 2) and a ULPDU_Length too short to hold a
 * DDP header (code 3, the closest).  A bad CRC is found after placement,
 * which only touched memory the Write was allowed to reach.
 */
START_TEST(llp_errors)
{
	struct victim *v = victim_new();
	uint8_t seg[64], f[128];
	size_t n, fl;
	uint8_t ecode;

	victim_post(v, 2, 1);
	n = mk_write(seg, v->tgt_mr->stag, va(v->tgt) + 256, 16);
	fl = fpdu_build(f, seg, n);
	if (_i == 0) {
		f[fl - 1] ^= 0x01;
		ecode = MPA_ECODE_CRC;
	} else {
		put_be16(f, 10);
		ecode = MPA_ECODE_MARKER;
	}
	ck_assert_int_lt(vmk_inject(&v->p, f, fl), 0);
	check_term(v, "LLP error", 2, 0, ecode, 0, seg, n, 0);
	check_flushed(v);
	if (_i == 0) {
		ck_assert_mem_eq(v->tgt + 256, seg + 14, 16);
		memcpy(v->tgt_ref + 256, seg + 14, 16);
	}
	check_dead(v, 0);
	victim_free(v);
}
END_TEST

/* ---- a TERMINATE received from the peer ---- */

struct rx_term_case {
	const char *name;
	const char *hex; /* the Terminate header after the DDP header */
	uint8_t layer, etype, ecode, hdrct, siw;
	enum rdmap_wc_status status;
};

static const struct rx_term_case rx_term_cases[] = {
	/* RFC order: DDP tagged invalid STag, M D, 14-octet header */
	{"RFC 1/1/0x00 M D", "11 00 C0 00 00 1E  C1 40 12 34 56 78 00 00 00 00 00 00 10 00", 1, 1,
	 0, HM | HD, 0, RDMAP_WC_REM_ACCESS_ERR},
	/* RFC order: RDMAP remote operation 0x07 with M D R (what we send on IRD overflow) */
	{"RFC 0/2/0x07 M D R",
	 "02 07 E0 00 00 2E  41 41 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00 00"
	 " 00 00 51 00 00 00 00 00 00 00 00 00 00 00 17 70 12 34 56 78 00 00 00 00 00 00 00 00",
	 0, 2, 7, HM | HD | HR, 0, RDMAP_WC_REM_OP_ERR},
	/* RFC order: DDP untagged, message too long */
	{"RFC 1/2/0x05 M D",
	 "12 05 C0 00 00 59  41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00", 1, 2, 5,
	 HM | HD, 0, RDMAP_WC_REM_INV_REQ_ERR},
	/* RFC order: LLP CRC error, no headers */
	{"RFC 2/0/0x02", "20 02 00 00", 2, 0, 2, 0, 0, RDMAP_WC_FATAL_ERR},
	/* RFC order: RDMAP remote protection, access rights */
	{"RFC 0/1/0x02", "01 02 00 00", 0, 1, 2, 0, 0, RDMAP_WC_REM_ACCESS_ERR},
	/* siw order (seen on the wire from siw 6.1): LLP CRC error */
	{"siw 2/0/0x02", "02 02 00 00", 2, 0, 2, 0, 1, RDMAP_WC_FATAL_ERR},
	/* siw order: its IRD overflow, 0/2/0x07 with M D and the 18-octet header */
	{"siw 0/2/0x07 M D",
	 "20 07 03 00 00 2E  41 41 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00 00", 0, 2, 7,
	 HM | HD, 1, RDMAP_WC_REM_OP_ERR},
	/* siw order: DDP untagged message too long (siw's 0x02 would look alike) */
	{"siw 1/2/0x05 M D",
	 "21 05 03 00 00 59  41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00", 1, 2, 5,
	 HM | HD, 1, RDMAP_WC_REM_INV_REQ_ERR},
	/* siw order: DDP tagged base/bounds, 14-octet header */
	{"siw 1/1/0x01 M D", "11 01 03 00 00 1E  C1 40 12 34 56 78 00 00 00 00 00 00 10 00", 1, 1,
	 1, HM | HD, 1, RDMAP_WC_REM_ACCESS_ERR},
};
#define NRXTERM (int)(sizeof(rx_term_cases) / sizeof(rx_term_cases[0]))

START_TEST(terminate_received)
{
	const struct rx_term_case *c = &rx_term_cases[_i];
	struct victim *v = victim_new();
	struct rp_host *b = &v->p.b;
	uint8_t seg[128], th[64];
	size_t tl = tu_hex(c->hex, th, sizeof(th)), n;
	struct fpdu_view f[8];
	int nf;

	/* W0 and W1 handed to MPA (in progress), W2 still posted */
	victim_post(v, 2, 2);
	ck_assert_int_eq(rdmap_qp_progress(&b->qp), 2);
	victim_post(v, 0, 1);
	n = hdr_untagged(seg, ddp_ctrl(0, 1, 1), rd_ctrl(1, RDMAP_OP_TERMINATE), 0,
			 DDP_QN_TERMINATE, 1, 0);
	memcpy(seg + n, th, tl);
	n += tl;
	ck_assert_int_lt(vinject(v, seg, n), 0);

	ck_assert_int_eq(b->qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(b->nerr, 1);
	ck_assert_int_eq(b->err_received, 1);
	ck_assert_msg(b->err_term.siw_layout == c->siw, "%s: siw_layout %u", c->name,
		      b->err_term.siw_layout);
	ck_assert_msg(b->err_term.layer == c->layer && b->err_term.etype == c->etype &&
			      b->err_term.ecode == c->ecode,
		      "%s: decoded %u/%u/0x%02x", c->name, b->err_term.layer, b->err_term.etype,
		      b->err_term.ecode);
	ck_assert_uint_eq(b->err_term.hdrct, c->hdrct);
	if (c->hdrct & HD) {
		size_t dl = (th[6] & DDP_CTRL_T) ? 14 : 18;

		ck_assert_uint_eq(b->err_term.seg_len, get_be16(th + 4));
		ck_assert_uint_eq(b->err_term.ddp_hdr_len, dl);
		ck_assert_mem_eq(b->err_term.ddp_hdr, th + 6, dl);
		if (c->hdrct & HR)
			ck_assert_mem_eq(b->err_term.rdma_hdr, th + 6 + dl, 28);
	}
	/* the oldest operation in progress carries the cause; the rest flush */
	ck_assert_int_eq(b->nswc, 3);
	ck_assert_uint_eq(b->swc[0].wr_id, SEND_ID0);
	ck_assert_msg(b->swc[0].status == c->status, "%s: status %d, expected %d", c->name,
		      b->swc[0].status, c->status);
	ck_assert(b->swc[0].flags & RDMAP_WC_F_TERM);
	ck_assert_uint_eq(b->swc[0].term.layer, c->layer);
	ck_assert_uint_eq(b->swc[0].term.etype, c->etype);
	ck_assert_uint_eq(b->swc[0].term.ecode, c->ecode);
	for (int i = 1; i < 3; i++) {
		ck_assert_uint_eq(b->swc[i].wr_id, SEND_ID0 + (uint64_t)i);
		ck_assert_int_eq(b->swc[i].status, RDMAP_WC_WR_FLUSH_ERR);
		ck_assert_uint_eq(b->swc[i].flags & RDMAP_WC_F_TERM, 0);
	}
	ck_assert_int_eq(b->nrwc, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(b->rwc[i].wr_id, RECV_ID0 + (uint64_t)i);
		ck_assert_int_eq(b->rwc[i].status, RDMAP_WC_WR_FLUSH_ERR);
	}
	/* RFC 5040 §5.4: no TERMINATE goes back */
	vcapture(v);
	nf = parse_wire(v, f, 8);
	for (int i = 0; i < nf; i++)
		ck_assert_msg(!is_terminate(&f[i]), "%s: a TERMINATE answered a TERMINATE",
			      c->name);
	ck_assert_int_lt(vinject(v, seg, n), 0);
	ck_assert_int_eq(b->nerr, 1);
	victim_free(v);
}
END_TEST

/*
 * A flushed work request hands its memory back to the application: nothing
 * of it may be read afterwards.  The victim's Send is queued on MPA (not yet
 * on the wire: the responder's transmit gate is still closed) when a bad
 * Write arrives; once the Send completes in error the application reuses its
 * buffer, and the octets on the wire must not be the reused ones.
 */
START_TEST(flushed_send_not_read_later)
{
	struct victim *v = victim_new();
	struct rp_host *b = &v->p.b;
	uint8_t seg[64];
	size_t n, k;
	int scribbled = 0;

	victim_post(v, 1, 1);
	ck_assert_int_eq(rdmap_qp_progress(&b->qp), 1);
	n = mk_write(seg, v->tgt_mr->stag ^ 0x80000000u, va(v->tgt), 16);
	ck_assert_int_lt(vinject(v, seg, n), 0);
	do {
		if (!scribbled && b->nswc) {
			ck_assert_int_ne(b->swc[0].status, RDMAP_WC_SUCCESS);
			memset(v->sbuf, 0xEE, SBUF_LEN);
			scribbled = 1;
		}
		k = rp_capture(&v->p, b, v->wire + v->wire_len, WIRE_CAP - v->wire_len);
		v->wire_len += k;
	} while (k);
	ck_assert(scribbled);
	{
		static const uint8_t ee[16] = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE,
					       0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};

		ck_assert_msg(memmem(v->wire, v->wire_len, ee, sizeof(ee)) == NULL,
			      "the payload of a flushed Send was read after its completion");
	}
	check_term(v, "flushed send", 1, 1, 0x00, HM | HD, seg, n, 1);
	victim_free(v);
}
END_TEST

/* ---- unit tests of the codecs and the STag check ---- */

START_TEST(ddp_hdr_codec)
{
	uint64_t rng = tu_seed() ^ 0xDD9;

	for (int i = 0; i < 2000; i++) {
		struct ddp_hdr h = {0}, d;
		uint8_t buf[32], ref[18];
		size_t hl;

		h.tagged = (int)(tu_rand(&rng) & 1);
		h.last = (int)(tu_rand(&rng) & 1);
		h.dv = (uint8_t)(tu_rand(&rng) & 3);
		h.ulp_ctrl = (uint8_t)tu_rand(&rng);
		if (h.tagged) {
			h.stag = (uint32_t)tu_rand(&rng);
			h.to = tu_rand(&rng);
			hdr_tagged(ref, ddp_ctrl(1, h.last, h.dv), h.ulp_ctrl, h.stag, h.to);
		} else {
			h.ulp_word = (uint32_t)tu_rand(&rng);
			h.qn = (uint32_t)tu_rand(&rng);
			h.msn = (uint32_t)tu_rand(&rng);
			h.mo = (uint32_t)tu_rand(&rng);
			hdr_untagged(ref, ddp_ctrl(0, h.last, h.dv), h.ulp_ctrl, h.ulp_word, h.qn,
				     h.msn, h.mo);
		}
		memset(buf, 0x77, sizeof(buf));
		hl = ddp_hdr_encode(buf, &h);
		ck_assert_uint_eq(hl, h.tagged ? 14 : 18);
		ck_assert_mem_eq(buf, ref, hl);
		ck_assert_uint_eq(buf[hl], 0x77); /* nothing beyond the header */
		ck_assert_int_eq(ddp_hdr_decode(buf, hl, &d), (ssize_t)hl);
		ck_assert_int_eq(d.tagged, h.tagged);
		ck_assert_int_eq(d.last, h.last);
		ck_assert_uint_eq(d.dv, h.dv);
		ck_assert_uint_eq(d.ulp_ctrl, h.ulp_ctrl);
		ck_assert_uint_eq(d.stag, h.stag);
		ck_assert_uint_eq(d.to, h.to);
		ck_assert_uint_eq(d.ulp_word, h.ulp_word);
		ck_assert_uint_eq(d.qn, h.qn);
		ck_assert_uint_eq(d.msn, h.msn);
		ck_assert_uint_eq(d.mo, h.mo);
		/* every truncation asks for more */
		for (size_t k = 0; k < hl; k++)
			ck_assert_int_eq(ddp_hdr_decode(buf, k, &d), -EAGAIN);
	}
	{
		/* reserved control bits: ignored on receive, never sent */
		uint8_t buf[18] = {0xFD, 0x41};
		struct ddp_hdr d, e = {0};

		ck_assert_int_eq(ddp_hdr_decode(buf, 14, &d), 14);
		ck_assert(d.tagged && d.last);
		ck_assert_uint_eq(d.dv, 1);
		e = d;
		e.dv = 0xFF;
		ddp_hdr_encode(buf, &e);
		ck_assert_uint_eq(buf[0], 0xC3);
	}
}
END_TEST

static void term_roundtrip(const struct rdmap_term *t, const uint8_t *want, size_t want_len)
{
	uint8_t buf[RDMAP_TERM_MAX + 8];
	struct rdmap_term d;
	size_t n;

	memset(buf, 0x55, sizeof(buf));
	n = rdmap_term_encode(t, buf);
	ck_assert_uint_eq(n, want_len);
	ck_assert_mem_eq(buf, want, want_len);
	ck_assert_uint_eq(buf[n], 0x55);
	ck_assert_int_eq(rdmap_term_decode(buf, n, &d), 0);
	ck_assert_uint_eq(d.layer, t->layer);
	ck_assert_uint_eq(d.etype, t->etype);
	ck_assert_uint_eq(d.ecode, t->ecode);
	ck_assert_uint_eq(d.hdrct, t->hdrct);
	ck_assert_uint_eq(d.siw_layout, 0);
	if (t->hdrct & (HM | HD))
		ck_assert_uint_eq(d.seg_len, t->seg_len);
	if (t->hdrct & HD) {
		ck_assert_uint_eq(d.ddp_hdr_len, t->ddp_hdr_len);
		ck_assert_mem_eq(d.ddp_hdr, t->ddp_hdr, t->ddp_hdr_len);
	}
	if (t->hdrct & HR)
		ck_assert_mem_eq(d.rdma_hdr, t->rdma_hdr, 28);
	/* every truncation of a header that needs more is refused, reading
	 * nothing beyond it (exact-size heap copies, for ASan) */
	for (size_t k = 0; k < n; k++) {
		uint8_t *p = malloc(k);

		ck_assert_ptr_nonnull(p);
		memcpy(p, buf, k);
		ck_assert_msg(rdmap_term_decode(p, k, &d) == -EBADMSG, "prefix %zu of %zu accepted",
			      k, n);
		free(p);
	}
}

START_TEST(term_codec)
{
	struct rdmap_term t;
	uint8_t want[RDMAP_TERM_MAX];
	size_t wl;

	/* LLP CRC, no headers: 20 02 00 00 */
	memset(&t, 0, sizeof(t));
	t.layer = 2;
	t.ecode = 2;
	wl = tu_hex("20 02 00 00", want, sizeof(want));
	term_roundtrip(&t, want, wl);

	/* DDP tagged bounds, M D, 14-octet header */
	memset(&t, 0, sizeof(t));
	t.layer = 1;
	t.etype = 1;
	t.ecode = 1;
	t.hdrct = HM | HD;
	t.seg_len = 0x1E;
	t.ddp_hdr_len = 14;
	tu_hex("C1 40 12 34 56 78 00 00 00 00 00 00 10 00", t.ddp_hdr, 14);
	wl = tu_hex("11 01 C0 00 00 1E C1 40 12 34 56 78 00 00 00 00 00 00 10 00", want,
		    sizeof(want));
	term_roundtrip(&t, want, wl);

	/* RDMAP remote protection on a Read Request: M D R, 18 + 28 */
	memset(&t, 0, sizeof(t));
	t.etype = 1;
	t.ecode = 4;
	t.hdrct = HM | HD | HR;
	t.seg_len = 46;
	t.ddp_hdr_len = 18;
	tu_hex("41 41 00 00 00 00 00 00 00 01 00 00 00 07 00 00 00 00", t.ddp_hdr, 18);
	for (int i = 0; i < 28; i++)
		t.rdma_hdr[i] = (uint8_t)(0xA0 + i);
	wl = 0;
	want[wl++] = 0x01;
	want[wl++] = 0x04;
	want[wl++] = 0xE0;
	want[wl++] = 0x00;
	want[wl++] = 0x00;
	want[wl++] = 46;
	memcpy(want + wl, t.ddp_hdr, 18);
	wl += 18;
	memcpy(want + wl, t.rdma_hdr, 28);
	wl += 28;
	ck_assert_uint_eq(wl, RDMAP_TERM_MAX);
	term_roundtrip(&t, want, wl);

	/* M alone: the segment length, no header */
	memset(&t, 0, sizeof(t));
	t.layer = 1;
	t.etype = 2;
	t.ecode = 3;
	t.hdrct = HM;
	t.seg_len = 0x1234;
	wl = tu_hex("12 03 80 00 12 34", want, sizeof(want));
	term_roundtrip(&t, want, wl);

	/* reserved bits are never sent */
	memset(&t, 0, sizeof(t));
	t.layer = 0x12;
	t.etype = 0x13;
	t.ecode = 0x06;
	t.hdrct = 0x1F;
	wl = rdmap_term_encode(&t, want);
	ck_assert_uint_eq(wl, 4);
	ck_assert_uint_eq(want[0], 0x23);
	ck_assert_uint_eq(want[2], 0);
	ck_assert_uint_eq(want[3], 0);
}
END_TEST

/* siw's bit order (Layer in the low nibble, M D R = 0x01 0x02 0x04) and the
 * ambiguous cases (digest §5.1): decided by the HdrCt position, then by
 * which reading names a defined Layer/EType/Code of RFC 5040 Figure 9. */
START_TEST(term_decode_layouts)
{
	static const struct {
		const char *hex;
		uint8_t layer, etype, ecode, hdrct, siw;
	} v[] = {
		{"20 02 00 00", 2, 0, 2, 0, 0}, /* RFC LLP CRC */
		{"02 02 00 00", 2, 0, 2, 0, 1}, /* siw LLP CRC: 0/2/0x02 is undefined */
		{"20 01 00 00", 2, 0, 1, 0, 0}, /* RFC LLP TCP lost */
		{"02 01 00 00", 2, 0, 1, 0, 1}, /* siw LLP TCP lost: 0/2/0x01 undefined */
		{"02 06 00 00", 0, 2, 6, 0, 0}, /* RFC unexpected opcode: 2/0/0x06 is
						   defined too (insufficient IRD), keep RFC */
		{"01 09 00 00", 0, 1, 9, 0, 0}, /* RFC can't invalidate */
		{"21 05 00 00", 1, 2, 5, 0, 1}, /* siw only: 2/1 undefined */
		{"12 05 00 00", 1, 2, 5, 0, 0}, /* RFC only */
		{"20 07 03 00 00 2E 41 41 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00 00", 0, 2, 7,
		 HM | HD, 1}, /* siw IRD overflow */
		{"02 07 C0 00 00 2E 41 41 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00 00", 0, 2, 7,
		 HM | HD, 0}, /* the same in RFC order */
		{"02 07 DF FF 00 2E 41 41 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00 00", 0, 2, 7,
		 HM | HD, 0}, /* reserved bits ignored */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t buf[64];
		size_t n = tu_hex(v[i].hex, buf, sizeof(buf));
		struct rdmap_term t;

		ck_assert_msg(rdmap_term_decode(buf, n, &t) == 0, "%s: refused", v[i].hex);
		ck_assert_msg(t.siw_layout == v[i].siw && t.layer == v[i].layer &&
				      t.etype == v[i].etype && t.ecode == v[i].ecode &&
				      t.hdrct == v[i].hdrct,
			      "%s: decoded %u/%u/0x%02x hdrct %02x siw %u", v[i].hex, t.layer,
			      t.etype, t.ecode, t.hdrct, t.siw_layout);
		if (t.hdrct & HD) {
			ck_assert_uint_eq(t.seg_len, 0x2E);
			ck_assert_uint_eq(t.ddp_hdr_len, 18);
			ck_assert_mem_eq(t.ddp_hdr, buf + 6, 18);
		}
	}
}
END_TEST

/* ddp_stag_check(): valid, PD, rights, wrap, bounds, in that order. */
START_TEST(stag_check_order)
{
	static uint8_t mem[4096];
	struct ddp_mem m;
	struct ddp_pd pd1, pd2;
	struct ddp_mr *a, *lw, *o, *r = NULL;
	uint64_t base = va(mem);

	ck_assert_int_eq(ddp_mem_init(&m, 16), 0);
	ddp_pd_init(&m, &pd1);
	ddp_pd_init(&m, &pd2);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd1, mem, sizeof(mem), DDP_ACC_ALL, &a), 0);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd1, mem, sizeof(mem), DDP_ACC_LOCAL_WRITE, &lw), 0);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd2, mem, sizeof(mem), DDP_ACC_LOCAL_WRITE, &o), 0);

	/* success, at both edges, sets the region */
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, DDP_ACC_REMOTE_WRITE, base, 4096, &r),
			 DDP_STAG_OK);
	ck_assert_ptr_eq(r, a);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, DDP_ACC_ALL, base + 4095, 1, NULL),
			 DDP_STAG_OK);
	ck_assert_int_eq(
		ddp_stag_check(&m, a->stag, &pd1, DDP_ACC_REMOTE_READ, base + 4096, 0, NULL),
		DDP_STAG_OK);
	/* each failure alone */
	ck_assert_int_eq(ddp_stag_check(&m, a->stag ^ 1, &pd1, 0, base, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag ^ 0x80000000u, &pd1, 0, base, 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd2, 0, base, 1, NULL), DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_check(&m, lw->stag, &pd1, DDP_ACC_REMOTE_READ, base, 1, NULL),
			 DDP_STAG_ACCESS);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, 0, UINT64_MAX, 2, NULL), DDP_STAG_WRAP);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, 0, base - 1, 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, 0, base + 4096, 1, NULL),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, 0, base + 1, 4096, NULL),
			 DDP_STAG_BOUNDS);
	/* several at once: the first in order wins */
	ck_assert_int_eq(
		ddp_stag_check(&m, o->stag ^ 2, &pd1, DDP_ACC_REMOTE_WRITE, UINT64_MAX, 9, NULL),
		DDP_STAG_INVALID); /* key, PD, rights, wrap */
	ck_assert_int_eq(
		ddp_stag_check(&m, o->stag, &pd1, DDP_ACC_REMOTE_WRITE, UINT64_MAX, 9, NULL),
		DDP_STAG_PD); /* PD, rights, wrap */
	ck_assert_int_eq(
		ddp_stag_check(&m, lw->stag, &pd1, DDP_ACC_REMOTE_WRITE, UINT64_MAX, 9, NULL),
		DDP_STAG_ACCESS); /* rights, wrap, bounds */
	ck_assert_int_eq(
		ddp_stag_check(&m, a->stag, &pd1, DDP_ACC_REMOTE_WRITE, UINT64_MAX, 9, NULL),
		DDP_STAG_WRAP); /* wrap, bounds */
	ck_assert_int_eq(
		ddp_stag_check(&m, a->stag, &pd1, DDP_ACC_REMOTE_WRITE, base - 1, UINT64_MAX, NULL),
		DDP_STAG_WRAP); /* wrap, base */
	/* invalidation: only from the owning PD; then refused; then re-keyed */
	{
		uint32_t old = a->stag;

		ck_assert_int_eq(ddp_stag_invalidate(&m, old, &pd2), -EACCES);
		ck_assert_int_eq(a->valid, 1);
		ck_assert_int_eq(ddp_stag_invalidate(&m, old ^ 4, &pd1), -ENOENT);
		ck_assert_int_eq(ddp_stag_invalidate(&m, old, &pd1), 0);
		ck_assert_int_eq(ddp_stag_check(&m, old, &pd2, DDP_ACC_ALL, 0, 0, NULL),
				 DDP_STAG_INVALID); /* before PD */
		ck_assert_int_eq(ddp_stag_invalidate(&m, old, &pd1), -ENOENT);
		ck_assert_int_eq(ddp_mr_revalidate(&m, a), 0);
		ck_assert_uint_ne(a->stag, old);
		ck_assert_ptr_eq(ddp_mr_lookup(&m, a->stag), a); /* a new STag, same slot */
		ck_assert_int_eq(ddp_stag_check(&m, old, &pd1, 0, base, 1, NULL), DDP_STAG_INVALID);
		ck_assert_int_eq(ddp_stag_check(&m, a->stag, &pd1, 0, base, 1, NULL), DDP_STAG_OK);
	}
	/* deregistration: the STag is refused, and stays refused when the slot
	 * is reused (the others taken first: a registration takes a random
	 * free slot) */
	{
		uint32_t old = lw->stag;
		struct ddp_mr *again, *fill;

		while (m.nfree)
			ck_assert_int_eq(
				ddp_mr_reg(&m, &pd2, mem, sizeof(mem), DDP_ACC_LOCAL_WRITE, &fill),
				0);
		ddp_mr_dereg(&m, lw);
		ck_assert_int_eq(ddp_stag_check(&m, old, &pd1, 0, base, 1, NULL), DDP_STAG_INVALID);
		ck_assert_ptr_null(ddp_mr_lookup(&m, old));
		ck_assert_int_eq(
			ddp_mr_reg(&m, &pd1, mem, sizeof(mem), DDP_ACC_LOCAL_WRITE, &again), 0);
		ck_assert_ptr_eq(again, lw); /* same slot */
		ck_assert_uint_ne(again->stag, old);
		ck_assert_int_eq(ddp_stag_check(&m, old, &pd1, 0, base, 1, NULL), DDP_STAG_INVALID);
	}
	ddp_mem_destroy(&m);
}
END_TEST

/* ddp_mr_reg()'s documented refusals (ddp_mem.h). */
START_TEST(mr_reg_refusals)
{
	static uint8_t mem[64];
	struct ddp_mem m;
	struct ddp_pd pd;
	struct ddp_mr *mr;

	ck_assert_int_eq(ddp_mem_init(&m, 4), 0);
	ddp_pd_init(&m, &pd);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), 0x8, &mr), -EINVAL);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_REMOTE_WRITE, &mr), -EINVAL);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, (void *)(uintptr_t)(UINTPTR_MAX - 3), 8,
				    DDP_ACC_LOCAL_WRITE, &mr),
			 -EINVAL);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, NULL, 0, DDP_ACC_LOCAL_WRITE, &mr), -EINVAL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr), 0);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr), -ENOSPC);
	ck_assert_uint_eq(pd.refs, 4);
	ddp_mem_destroy(&m);
}
END_TEST

/*
 * A stand-in for RAND_bytes() (RAND_set_rand_method(), restored by
 * fake_rand_off()): octets all 0, which ddp_mem takes as the smallest draw
 * every time (slot: the first free; index: the lowest allowed; key: the
 * lowest allowed), or, with fake_rand_fail, a failure that leaves an entry
 * on OpenSSL's error queue, as a real one does.
 */
static int fake_rand_fail;
static const RAND_METHOD *real_rand;

static int fake_rand_bytes(unsigned char *buf, int num)
{
	if (fake_rand_fail) {
		ERR_raise(ERR_LIB_RAND, RAND_R_ERROR_RETRIEVING_ENTROPY);
		return 0;
	}
	memset(buf, 0, (size_t)num);
	return 1;
}

static int fake_rand_status(void)
{
	return !fake_rand_fail;
}

static const RAND_METHOD fake_rand = {.bytes = fake_rand_bytes, .status = fake_rand_status};

static void fake_rand_on(int fail)
{
	fake_rand_fail = fail;
	real_rand = RAND_get_rand_method();
	ck_assert_ptr_nonnull(real_rand);
	ck_assert_int_eq(RAND_set_rand_method(&fake_rand), 1);
}

static void fake_rand_off(void)
{
	ck_assert_int_eq(RAND_set_rand_method(real_rand), 1);
}

/* Issue 8 §6: every STag is drawn at random (tables differ from the first
 * STag on), a reused slot's key changes, and a deregistered or invalidated
 * STag is refused (ddp_mr_lookup() finds nothing valid; the injection cases
 * "write: invalidated STag" / "stale STag of a reused slot" show the
 * TERMINATE a peer gets for one).  stag_unpredictable measures the rest. */
START_TEST(stag_hygiene)
{
	static uint8_t mem[64];
	struct ddp_mem m;
	struct ddp_pd pd;
	struct ddp_mr *mr, *again;
	uint32_t first[8], s0, s1;
	int differ = 0;

	/* eight tables: their first STags are not all the same (a fixed
	 * sequence would fail this always; a random one fails with p < 2^-100) */
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(ddp_mem_init(&m, 16), 0);
		ddp_pd_init(&m, &pd);
		ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr), 0);
		first[i] = mr->stag;
		ddp_mem_destroy(&m);
		differ |= first[i] != first[0];
	}
	ck_assert_msg(differ, "every STag table started with STag %#x", first[0]);

	ck_assert_int_eq(ddp_mem_init(&m, 1), 0); /* one slot: re-registration reuses it */
	ddp_pd_init(&m, &pd);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr), 0);
	s0 = mr->stag;
	ck_assert_ptr_eq(ddp_mr_lookup(&m, s0), mr);
	ddp_mr_dereg(&m, mr);
	ck_assert_ptr_null(ddp_mr_lookup(&m, s0)); /* deregistered: refused */
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &again), 0);
	s1 = again->stag;
	ck_assert_ptr_eq(again, mr);		 /* the same slot ... */
	ck_assert_uint_ne(s1 & 0xff, s0 & 0xff); /* ... always with a new key */
	/* the old STag stays refused, as a peer's Write would find it */
	ck_assert_ptr_null(ddp_mr_lookup(&m, s0));
	ck_assert_int_eq(ddp_stag_check(&m, s0, &pd, DDP_ACC_REMOTE_WRITE, (uintptr_t)mem, 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(&m, s1, &pd, DDP_ACC_REMOTE_WRITE, (uintptr_t)mem, 1, NULL),
			 DDP_STAG_OK);
	/* invalidated: refused until revalidated, which draws a new STag */
	ck_assert_int_eq(ddp_stag_invalidate(&m, s1, &pd), 0);
	ck_assert_int_eq(ddp_stag_check(&m, s1, &pd, DDP_ACC_REMOTE_WRITE, (uintptr_t)mem, 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_mr_revalidate(&m, again), 0);
	ck_assert_uint_ne(again->stag & 0xff, s1 & 0xff);
	ck_assert_int_eq(ddp_stag_check(&m, s1, &pd, DDP_ACC_REMOTE_WRITE, (uintptr_t)mem, 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(&m, again->stag, &pd, DDP_ACC_REMOTE_WRITE, (uintptr_t)mem, 1,
					NULL),
			 DDP_STAG_OK);
	ddp_mr_dereg(&m, again);
	ddp_mem_destroy(&m);
}
END_TEST

/* STags 0 and 1 are never handed out (siw's RTR uses 1), by registration or
 * revalidation, even when every draw is the smallest: slot 0 of a one-slot
 * table, whose index would be 0 with r = 0, and keys alternating 1, 0. */
START_TEST(stag_never_0_or_1)
{
	static uint8_t mem[64];
	struct ddp_mem m;
	struct ddp_pd pd;
	struct ddp_mr *z;

	fake_rand_on(0);
	ck_assert_int_eq(ddp_mem_init(&m, 1), 0);
	ddp_pd_init(&m, &pd);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &z), 0);
	/* the smallest STag slot 0 may have: index nslots (r = 1), key 1 */
	ck_assert_uint_eq(z->stag, 1u << 8 | 1);
	for (int i = 0; i < 600; i++) {
		ck_assert_int_eq(ddp_stag_invalidate(&m, z->stag, &pd), 0);
		ck_assert_int_eq(ddp_mr_revalidate(&m, z), 0);
		ck_assert_msg(z->stag > 1, "revalidation handed out STag %u", z->stag);
		ck_assert_ptr_eq(ddp_mr_lookup(&m, z->stag), z);
	}
	for (int i = 0; i < 600; i++) {
		ddp_mr_dereg(&m, z);
		ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &z), 0);
		ck_assert_msg(z->stag > 1, "registration handed out STag %u", z->stag);
		ck_assert_ptr_eq(ddp_mr_lookup(&m, z->stag), z);
	}
	ddp_mem_destroy(&m);
	fake_rand_off();
	/* the same with real draws, in a small table */
	ck_assert_int_eq(ddp_mem_init(&m, 2), 0);
	ddp_pd_init(&m, &pd);
	for (int i = 0; i < 2000; i++) {
		ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &z), 0);
		ck_assert_msg(z->stag > 1, "registration handed out STag %u", z->stag);
		ddp_mr_dereg(&m, z);
	}
	ddp_mem_destroy(&m);
}
END_TEST

/* RAND_bytes() failing: registration and revalidation return -EIO and
 * change nothing (no slot taken, the region still invalid under its old
 * STag), OpenSSL's error queue is as it was (an entry of the application's
 * stays, RAND's are dropped); ddp_mem_init() fails with -EIO too.  Once
 * RAND_bytes() works again, so do they. */
START_TEST(stag_rand_failure)
{
	static uint8_t mem[64];
	struct ddp_mem m, m2;
	struct ddp_pd pd;
	struct ddp_mr *mr = NULL, *held;
	uint32_t old;
	int ret = 0, n;

	ck_assert_int_eq(ddp_mem_init(&m, 8), 0);
	ddp_pd_init(&m, &pd);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &held), 0);
	ck_assert_int_eq(ddp_stag_invalidate(&m, held->stag, &pd), 0);
	old = held->stag;
	ERR_clear_error();
	ERR_raise(ERR_LIB_USER, 42); /* the application's */
	fake_rand_on(1);
	/* the octets drawn at init last a few registrations, then -EIO */
	for (n = 0; n < DDP_RND_BUF && ret == 0; n++) {
		ret = ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr);
		if (!ret)
			ddp_mr_dereg(&m, mr);
	}
	ck_assert_int_eq(ret, -EIO);
	ck_assert_uint_eq(m.nfree, 7);
	ck_assert_uint_eq(pd.refs, 1);
	ck_assert_int_eq(ddp_mr_revalidate(&m, held), -EIO);
	ck_assert_uint_eq(held->stag, old);
	ck_assert_int_eq(held->valid, 0);
	ck_assert_ptr_eq(ddp_mr_lookup(&m, old), held);
	ck_assert_int_eq(ERR_GET_LIB(ERR_peek_last_error()), ERR_LIB_USER);
	ck_assert_int_eq(ERR_GET_REASON(ERR_get_error()), 42);
	ck_assert_uint_eq(ERR_peek_error(), 0);
	ck_assert_int_eq(ddp_mem_init(&m2, 4), -EIO);
	ck_assert_uint_eq(ERR_peek_error(), 0);
	fake_rand_off();
	ck_assert_int_eq(ddp_mr_revalidate(&m, held), 0);
	ck_assert_uint_ne(held->stag, old);
	ck_assert_int_eq(ddp_mr_reg(&m, &pd, mem, sizeof(mem), DDP_ACC_ALL, &mr), 0);
	ck_assert_uint_eq(m.nfree, 6);
	ddp_mem_destroy(&m);
}
END_TEST

/*
 * STags are not predictable (RFC 5040 §8.1.1 #8, RFC 5042 §5.1.2).  10^5
 * registrations in a table of 4096 slots, with churn: regions held and
 * released, released ones often registered again at once, some invalidated
 * and revalidated; the table in turn half full, near full, near empty.
 * Every STag handed out (registration or revalidation) is recorded, and no
 * STag seen lets one predict another better than chance:
 *  (a) no difference between consecutive STags occurs more than SU_MULT
 *      times (a counter-like allocator repeats one difference throughout),
 *      so previous + commonest difference predicts at most SU_MULT STags;
 *  (b) nor does previous + the difference seen last (the stride), overall,
 *      nor, for a reused slot, its last STag + its own last stride;
 *  (c) each of the 20 bits the table size does not fix (the key, bits 0-7,
 *      and the index above the slot, bits 20-31: the index mod 4096 is the
 *      slot) is 1 in half the STags, within SU_SIGMA sigma;
 *  (d) when a slot is used again (re-registration or revalidation), its
 *      new key never equals its old one (ddp_mem's guarantee), no key
 *      difference (new - old mod 256) is more frequent than chance (1/255),
 *      and its index is its old one at most at chance rate (1/4096), within
 *      SU_SIGMA sigma;
 *  (e) no STag is 0 or 1; a slot's old STag never finds the registration
 *      that reuses the slot; at the end the live STags are distinct, each
 *      finds its region, and every dead STag finds nothing unless it
 *      equals a live one by chance (counted: at most SU_MULT).
 * The churn comes from tu_seed(); the STags from ddp_mem's own generator,
 * so a correct one fails by chance, with p < 10^-6 per run (the bounds are
 * 6 sigma, SU_MULT far above the 2 seen at most in 300 runs).  Every failed
 * criterion is reported in one message.
 */
#define SU_SLOTS  4096u
#define SU_REGS	  100000u
#define SU_EVENTS (2 * SU_REGS) /* registrations and revalidations */
#define SU_MULT	  4
#define SU_SIGMA  6

struct su {
	struct ddp_mem m;
	struct ddp_pd pd;
	struct ddp_mr *live[SU_SLOTS];
	uint32_t nlive;
	uint32_t last[SU_SLOTS];   /* the STag a slot had last (0: never used) */
	uint32_t *seq, nseq;	   /* every STag handed out, in order */
	uint32_t *dead, ndead;	   /* every STag deregistered or invalidated */
	uint32_t stride[SU_SLOTS]; /* its last STag - the one before (0: none yet) */
	uint32_t nreg, nreuse, key_same, index_same, stale_hits, stride_hits;
	uint32_t calls_failed; /* ddp_mem calls that did not return 0 */
	uint32_t keyd[256];    /* new key - old key of a reused slot */
};

static int su_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The most frequent value of @v[0..@n) (sorted in place) and its count. */
static uint32_t su_mode(uint32_t *v, size_t n, uint32_t *value)
{
	uint32_t best = 0;

	qsort(v, n, sizeof(*v), su_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j] == v[i]; j++)
			;
		if (j - i > best) {
			best = (uint32_t)(j - i);
			*value = v[i];
		}
	}
	return best;
}

/* @mr was just handed out its STag. */
static void su_record(struct su *t, struct ddp_mr *mr)
{
	uint32_t slot = (uint32_t)(mr - t->m.slots), st = mr->stag, old = t->last[slot];

	t->seq[t->nseq++] = st;
	if (old) {
		t->nreuse++;
		t->key_same += (st & 0xFF) == (old & 0xFF);
		t->index_same += st >> 8 == old >> 8;
		t->keyd[(uint8_t)(st - old)]++;
		t->stale_hits += ddp_mr_lookup(&t->m, old) != NULL;
		t->stride_hits += st - old == t->stride[slot];
		t->stride[slot] = st - old;
	}
	t->last[slot] = st;
}

static void su_reg(struct su *t)
{
	static uint8_t buf[64];
	struct ddp_mr *mr = NULL;

	if (ddp_mr_reg(&t->m, &t->pd, buf, sizeof(buf), DDP_ACC_ALL, &mr)) {
		t->calls_failed++;
		return;
	}
	t->live[t->nlive++] = mr;
	t->nreg++;
	su_record(t, mr);
}

/* Append to @rep (of @cap) and count a failed criterion. */
static void __attribute__((format(printf, 4, 5)))
su_fail(char *rep, size_t cap, int *nfail, const char *fmt, ...)
{
	size_t len = strlen(rep);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep + len, cap - len, fmt, ap);
	va_end(ap);
	(*nfail)++;
}

START_TEST(stag_unpredictable)
{
	static const uint32_t fill[5] = {2048, 4092, 128, 3000, 1024};
	struct su *t = calloc(1, sizeof(*t));
	uint64_t rng = tu_seed() ^ 0x57A6;
	uint32_t *d, *live, mode = 0, n, nreuse, hits = 0, chance = 0, bad_dead = 0;
	char rep[2048] = "";
	int nfail = 0;
	double sd;

	ck_assert_ptr_nonnull(t);
	t->seq = malloc(SU_EVENTS * sizeof(uint32_t));
	t->dead = malloc(SU_EVENTS * sizeof(uint32_t));
	d = malloc(SU_EVENTS * sizeof(uint32_t));
	live = malloc(SU_SLOTS * sizeof(uint32_t));
	ck_assert(t->seq && t->dead && d && live);
	ck_assert_int_eq(ddp_mem_init(&t->m, SU_SLOTS), 0);
	ddp_pd_init(&t->m, &t->pd);

	/* (no ck_assert in the loop: each one is a write to Check's pipe) */
	while (t->nreg < SU_REGS && t->nseq < SU_EVENTS - 2 && !t->calls_failed) {
		uint32_t target = fill[t->nreg / 10000 % 5];
		uint64_t x = tu_rand(&rng);
		uint32_t i;
		struct ddp_mr *mr;

		if (t->nlive < target && (t->nlive == 0 || (x & 3))) {
			su_reg(t);
			continue;
		}
		if (!t->nlive)
			continue;
		i = (uint32_t)((x >> 8) % t->nlive);
		mr = t->live[i];
		t->dead[t->ndead++] = mr->stag;
		if ((x >> 40) % 8 < 2) { /* invalidate and revalidate */
			if (ddp_stag_invalidate(&t->m, mr->stag, &t->pd) ||
			    ddp_mr_revalidate(&t->m, mr))
				t->calls_failed++;
			else
				su_record(t, mr);
			continue;
		}
		ddp_mr_dereg(&t->m, mr);
		t->live[i] = t->live[--t->nlive];
		if ((x >> 4) & 1) /* registered again at once */
			su_reg(t);
	}
	n = t->nseq;
	nreuse = t->nreuse;
	if (t->calls_failed || t->nreg < SU_REGS)
		su_fail(rep, sizeof(rep), &nfail,
			"%u registrations (of %u), a registration, invalidation or "
			"revalidation failed: %u\n",
			t->nreg, SU_REGS, t->calls_failed);

	/* (e) never 0 or 1; a stale STag never found the slot's next region */
	for (uint32_t i = 0; i < n; i++)
		if (t->seq[i] <= 1)
			su_fail(rep, sizeof(rep), &nfail, "(e) STag %u handed out\n", t->seq[i]);
	if (t->stale_hits)
		su_fail(rep, sizeof(rep), &nfail,
			"(e) %u stale STags found the region that reused their slot\n",
			t->stale_hits);
	/* (c) the bits the table size does not fix: within SU_SIGMA sigma of n/2 */
	sd = sqrt(n / 4.0);
	for (int b = 0; b < 32; b++) {
		uint32_t ones = 0;

		if (b >= 8 && b < 20) /* the slot: index mod 4096 */
			continue;
		for (uint32_t i = 0; i < n; i++)
			ones += t->seq[i] >> b & 1;
		if (fabs(ones - n / 2.0) > SU_SIGMA * sd)
			su_fail(rep, sizeof(rep), &nfail, "(c) bit %d is 1 in %u of %u STags\n", b,
				ones, n);
	}
	/* (a) differences between consecutive STags */
	for (uint32_t i = 1; i < n; i++)
		d[i - 1] = t->seq[i] - t->seq[i - 1];
	if ((hits = su_mode(d, n - 1, &mode)) > SU_MULT)
		su_fail(rep, sizeof(rep), &nfail,
			"(a) consecutive STags differ by %#x %u times in %u\n", mode, hits, n - 1);
	/* (b) the stride seen last, overall and per slot */
	hits = 0;
	for (uint32_t i = 2; i < n; i++)
		hits += t->seq[i] - t->seq[i - 1] == t->seq[i - 1] - t->seq[i - 2];
	if (hits > SU_MULT)
		su_fail(rep, sizeof(rep), &nfail,
			"(b) previous + last difference predicted %u of %u STags\n", hits, n - 2);
	if (t->stride_hits > SU_MULT)
		su_fail(rep, sizeof(rep), &nfail,
			"(b) a slot's last STag + its last difference predicted its next %u "
			"times\n",
			t->stride_hits);
	/* (d) a reused slot's key and index, against chance */
	{
		double e_idx = t->nreuse / (double)SU_SLOTS, e_kd = t->nreuse / 255.0;
		uint32_t kd_max = 0, kd_at = 0;

		if (t->key_same)
			su_fail(rep, sizeof(rep), &nfail,
				"(d) a reused slot kept its key %u times in %u\n", t->key_same,
				t->nreuse);
		if (t->index_same > e_idx + SU_SIGMA * sqrt(e_idx) + 1)
			su_fail(rep, sizeof(rep), &nfail,
				"(d) a reused slot kept its index %u times in %u (chance %.0f)\n",
				t->index_same, t->nreuse, e_idx);
		for (int k = 1; k < 256; k++)
			if (t->keyd[k] > kd_max) {
				kd_max = t->keyd[k];
				kd_at = (uint32_t)k;
			}
		if (kd_max > e_kd + SU_SIGMA * sqrt(e_kd))
			su_fail(rep, sizeof(rep), &nfail,
				"(d) a reused slot's key grew by %u %u times in %u (chance %.0f)\n",
				kd_at, kd_max, t->nreuse, e_kd);
	}
	/* (e) the live STags: distinct, each finds its region; the dead ones
	 * find nothing but by an equality with a live one */
	for (uint32_t i = 0; i < t->nlive; i++) {
		live[i] = t->live[i]->stag;
		if (ddp_mr_lookup(&t->m, live[i]) != t->live[i])
			su_fail(rep, sizeof(rep), &nfail, "(e) live STag %#x not found\n", live[i]);
	}
	if (t->nlive && su_mode(live, t->nlive, &mode) > 1)
		su_fail(rep, sizeof(rep), &nfail, "(e) live STag %#x twice\n", mode);
	for (uint32_t i = 0; i < t->ndead; i++) {
		if (bsearch(&t->dead[i], live, t->nlive, sizeof(*live), su_cmp))
			chance++;
		else if (ddp_mr_lookup(&t->m, t->dead[i]))
			bad_dead++;
	}
	if (bad_dead || chance > SU_MULT)
		su_fail(rep, sizeof(rep), &nfail,
			"(e) of %u dead STags, %u are found, %u equal a live one\n", t->ndead,
			bad_dead, chance);

	for (uint32_t i = 0; i < t->nlive; i++)
		ddp_mr_dereg(&t->m, t->live[i]);
	ddp_mem_destroy(&t->m);
	free(live);
	free(d);
	free(t->dead);
	free(t->seq);
	free(t);
	ck_assert_msg(!nfail, "STags are predictable (%u STags, %u slot reuses):\n%s", n, nreuse,
		      rep);
}
END_TEST

Suite *rdmap_err_suite(void)
{
	Suite *s = suite_create("rdmap_err");
	TCase *inj = tcase_create("inject");
	TCase *rx = tcase_create("terminate_rx");
	TCase *unit = tcase_create("unit");
	TCase *mk = tcase_create("markers");

	tcase_add_loop_test(inj, inject_error, 0, NCASES);
	tcase_add_loop_test(inj, unknown_opcode, 0, 16);
	tcase_add_test(inj, read_beyond_ird);
	tcase_add_test(inj, zero_length_read);
	tcase_add_test(inj, zero_length_write);
	tcase_add_test(inj, ext_literal_octets);
	tcase_add_test(inj, atomic_beyond_ird);
	tcase_add_test(inj, atomic_response_mismatch);
	tcase_add_test(inj, read_with_ird_0);
	tcase_add_loop_test(inj, read_response_mismatch, 0, 4);
	tcase_add_loop_test(inj, llp_errors, 0, 2);
	tcase_add_test(inj, flushed_send_not_read_later);
	suite_add_tcase(s, inj);
	tcase_add_loop_test(rx, terminate_received, 0, NRXTERM);
	suite_add_tcase(s, rx);
	tcase_add_test(unit, ddp_hdr_codec);
	tcase_add_test(unit, term_codec);
	tcase_add_test(unit, term_decode_layouts);
	tcase_add_test(unit, stag_check_order);
	tcase_add_test(unit, mr_reg_refusals);
	tcase_add_test(unit, stag_never_0_or_1);
	tcase_add_test(unit, stag_hygiene);
	tcase_add_test(unit, stag_rand_failure);
	tcase_add_test(unit, stag_unpredictable);
	suite_add_tcase(s, unit);
	/* the TERMINATE cases again, markers on (vmk) */
	tcase_add_checked_fixture(mk, vmk_on, vmk_off);
	tcase_set_timeout(mk, 60);
	tcase_add_loop_test(mk, inject_error, 0, NCASES);
	tcase_add_loop_test(mk, unknown_opcode, 0, 16);
	tcase_add_test(mk, read_beyond_ird);
	tcase_add_test(mk, atomic_beyond_ird);
	tcase_add_test(mk, read_with_ird_0);
	tcase_add_loop_test(mk, read_response_mismatch, 0, 4);
	tcase_add_loop_test(mk, llp_errors, 0, 2);
	tcase_add_test(mk, flushed_send_not_read_later);
	tcase_add_loop_test(mk, terminate_received, 0, NRXTERM);
	suite_add_tcase(s, mk);
	return s;
}
