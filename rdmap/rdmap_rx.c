/* SPDX-License-Identifier: MIT */
/*
 * RDMAP/DDP receive: the MPA full-operation upcalls of a bound QP.
 * rx_begin validates each segment's DDP and RDMAP headers (RFC 5041 §7,
 * RFC 5040 §7.2) and lends MPA the exact destination (registered memory for
 * tagged segments, the posted receive buffer for Sends, QP scratch for Read
 * Requests and Terminates); rx_end acts on a segment only once MPA has
 * verified the whole FPDU, so that a corrupt FPDU has no effect beyond
 * placement into memory the peer was granted.
 */
#include "rdmap_int.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"

/*
 * What a message of each opcode is and does on receipt, one row per opcode
 * (the table, rx_ops[], is at the end of the file, after its handlers): a
 * new opcode is one row.  @place checks one segment and lends MPA its
 * destination (rx_begin, before the FPDU's CRC is known); @deliver acts on
 * it once MPA verified the FPDU (rx_end): for a tagged opcode each
 * segment, for an untagged one the complete message (@len its octets).
 */
typedef int (*rx_place_fn)(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
			   size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst);
typedef int (*rx_deliver_fn)(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			     size_t ulpdu_len, unsigned flags);

struct rx_op {
	uint8_t tagged;	     /* RFC 5040 §4.1 Figure 4: the DDP buffer model ... */
	uint8_t qn;	     /* ... and, untagged, the queue */
	uint8_t hdr_extra;   /* RDMAP header octets taken with the DDP header */
	uint8_t consumes_rq; /* a new message takes a posted receive */
	uint8_t ext;	     /* an RFC 7306 opcode: only with RDMAP_EXT_RFC7306 */
	uint8_t wc_flags;    /* RDMAP_WC_F_* of its receive completion */
	rx_place_fn place;
	rx_deliver_fn deliver; /* NULL: nothing beyond placement */
};

static const struct rx_op *rx_op_of(uint8_t op);
static size_t rx_hdr_extra(uint8_t op, size_t ulpdu_len);

int rdmap_rx_fail(struct rdmap_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode,
		  const uint8_t *hdr, size_t hdr_len, size_t seg_len)
{
	struct rdmap_term *t = &qp->term;

	/* RFC 5040 §7.1 rule 4: the first error is the one reported. */
	if (qp->term_pending || qp->state == RDMAP_QPS_ERROR)
		return -EPROTO;
	memset(t, 0, sizeof(*t));
	t->layer = layer;
	t->etype = etype;
	t->ecode = ecode;
	/*
	 * RFC 5040 §4.8 Figure 10: DDP and RDMAP errors on an incoming message
	 * carry its DDP header (and the Read Request header when that is the
	 * message); local catastrophic errors and LLP errors carry none.
	 */
	if (hdr && hdr_len >= DDP_TAGGED_HDR_LEN &&
	    !(layer == TERM_LAYER_RDMAP && etype == RDMAP_ETYPE_CATASTROPHIC)) {
		size_t dl = ddp_hdr_len(hdr[0]);

		t->hdrct = RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D;
		t->seg_len = (uint16_t)seg_len;
		memcpy(t->ddp_hdr, hdr, dl);
		t->ddp_hdr_len = (uint8_t)dl;
		if (layer == TERM_LAYER_RDMAP && !(hdr[0] & DDP_CTRL_T) &&
		    (hdr[1] & RDMAP_CTRL_OPCODE) == RDMAP_OP_READ_REQ &&
		    hdr_len >= DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN) {
			t->hdrct |= RDMAP_TERM_HDRCT_R;
			memcpy(t->rdma_hdr, hdr + DDP_UNTAGGED_HDR_LEN, RDMAP_RREQ_LEN);
		}
	}
	qp->term_pending = 1;
	qp->state = RDMAP_QPS_TERMINATE;
	return -EPROTO;
}

static int fail_ddp_tagged(struct rdmap_qp *qp, enum ddp_stag_err e, const uint8_t *hdr, size_t hl,
			   size_t seg)
{
	uint8_t code;

	switch (e) {
	case DDP_STAG_PD:
		code = DDP_ECODE_T_STAG_NOT_ASSOC;
		break;
	case DDP_STAG_BOUNDS:
		code = DDP_ECODE_T_BASE_BOUNDS;
		break;
	case DDP_STAG_WRAP:
		code = DDP_ECODE_T_TO_WRAP;
		break;
	case DDP_STAG_ACCESS:
		/* RFC 5041 has no tagged-buffer code for missing access rights;
		 * like siw we report "invalid STag", the closest match. */
	default:
		code = DDP_ECODE_T_INVALID_STAG;
		break;
	}
	return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, code, hdr, hl, seg);
}

static int fail_rdmap_prot(struct rdmap_qp *qp, enum ddp_stag_err e, const uint8_t *hdr, size_t hl,
			   size_t seg)
{
	static const uint8_t codes[] = {
		[DDP_STAG_INVALID] = RDMAP_ECODE_INVALID_STAG,
		[DDP_STAG_PD] = RDMAP_ECODE_STAG_NOT_ASSOC,
		[DDP_STAG_ACCESS] = RDMAP_ECODE_ACCESS,
		[DDP_STAG_BOUNDS] = RDMAP_ECODE_BASE_BOUNDS,
		[DDP_STAG_WRAP] = RDMAP_ECODE_TO_WRAP,
	};

	return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT, codes[e], hdr, hl, seg);
}

static int rx_hdr_len(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	(void)arg;
	(void)have;
	if (hdr[0] & DDP_CTRL_T)
		return DDP_TAGGED_HDR_LEN;
	/* A small fixed RDMAP header (the Read Request's) is taken with the
	 * DDP header, so that it never needs a payload buffer. */
	return DDP_UNTAGGED_HDR_LEN + rx_hdr_extra(hdr[1] & RDMAP_CTRL_OPCODE, ulpdu_len);
}

static struct rdmap_swqe *orq_head(struct rdmap_qp *qp)
{
	if (!qp->orq_count)
		return NULL;
	return &qp->sq[qp->orq[qp->orq_head % qp->cfg.ord]];
}

/* the destination of a tagged segment of @len octets at (@h->stag,
 * @h->to), which the STag must grant with @access */
static int tagged_dst(struct rdmap_qp *qp, const struct ddp_hdr *h, unsigned access, const uint8_t *raw,
		      size_t hl, size_t ulpdu_len, struct iovec *dst, int *ndst)
{
	size_t len = ulpdu_len - hl;
	struct ddp_mr *mr;
	enum ddp_stag_err e = ddp_stag_check(qp->mem, h->stag, qp->pd, access, h->to, len, &mr);

	if (e != DDP_STAG_OK)
		return fail_ddp_tagged(qp, e, raw, hl, ulpdu_len);
	dst[0].iov_base = mr->addr + (h->to - mr->va);
	dst[0].iov_len = len;
	*ndst = 1;
	return 0;
}

static int place_write(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
		       size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	(void)op;
	(void)flags;
	/* siw accepts a zero-length Write before any STag check (it is
	 * how RFC 6581's Write RTR works): nothing is placed. */
	if (ulpdu_len == hl)
		return 0;
	return tagged_dst(qp, h, DDP_ACC_REMOTE_WRITE, raw, hl, ulpdu_len, dst, ndst);
}

static int place_read_resp(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
			   size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	size_t len = ulpdu_len - hl;
	struct rdmap_swqe *w = orq_head(qp);

	(void)op;
	(void)flags;
	if (qp->rtr_rresp_pending) {
		/* the answer to our RFC 6581 Read RTR comes first */
		if (len || !h->last)
			return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS,
					     raw, hl, ulpdu_len);
		return 0;
	}
	/* A Read Response must answer a Read Request we sent, the oldest
	 * outstanding (not an Atomic Request: RFC 7306 §7, Read and Atomic
	 * responses come in request order). */
	if (!w || w->wr.opcode != RDMAP_WR_READ)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_UNEXPECTED_OP,
				     raw, hl, ulpdu_len);
	/* It must land where that request asked, in order. */
	if (h->stag != w->wr.sge[0].lkey)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_INVALID_STAG, raw,
				     hl, ulpdu_len);
	if (h->to != w->wr.sge[0].addr + qp->rx_rresp_placed || qp->rx_rresp_placed + len > w->total)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS, raw,
				     hl, ulpdu_len);
	if (len == 0)
		return 0;
	return tagged_dst(qp, h, DDP_ACC_LOCAL_WRITE, raw, hl, ulpdu_len, dst, ndst);
}

/* the receive a Send places into: the shared receive taken by its first
 * segment, or the head of the QP's receive queue */
static struct rdmap_rwqe *send_rwqe(struct rdmap_qp *qp)
{
	return qp->srq ? qp->srq_cur : &qp->rq[qp->rq_head % qp->cfg.max_recv_wr];
}

static int rx_untagged(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
		       size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	const struct rx_op *ro = rx_op_of(op);
	struct rdmap_rx_queue *q;

	/* RFC 5041 §7: QN must name a queue, and the queue RDMAP uses for
	 * this opcode (RFC 5040 Figure 4). */
	if (h->qn >= DDP_NQUEUES || h->qn != ro->qn)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_QN,
				     raw, hl, ulpdu_len);
	q = &qp->rxq[h->qn];
	if (!q->active) {
		/* A new message: the next MSN of this queue, starting at MO 0. */
		struct rdmap_srq *srq =
			ro->consumes_rq && !(flags & MPA_RX_F_RTR) ? qp->srq : NULL;
		uint8_t ec = 0;

		/* a shared queue is looked at and taken from under its lock
		 * (other QPs' threads take from it too) */
		if (srq && srq->lock)
			srq->lock(srq->lock_arg, 1);
		if (ro->consumes_rq && !(flags & MPA_RX_F_RTR) &&
		    (srq ? srq->count == 0 : qp->rq_count == 0))
			ec = DDP_ECODE_U_INVALID_MSN_NOBUF;
		else if (h->msn != q->expect_msn)
			ec = DDP_ECODE_U_INVALID_MSN_RANGE;
		else if (h->mo != 0)
			ec = DDP_ECODE_U_INVALID_MO;
		if (!ec && srq) {
			/* the message owns the shared receive from its first segment */
			*qp->srq_cur = srq->rq[srq->head % srq->max_wr];
			srq->head++;
			srq->count--;
			qp->srq_cur_valid = 1;
		}
		if (srq && srq->lock)
			srq->lock(srq->lock_arg, 0);
		if (ec)
			return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, ec, raw, hl,
					     ulpdu_len);
		q->active = 1;
		q->msn = h->msn;
		q->placed = 0;
		q->opcode = op;
	} else {
		/* The continuation of the message in progress, in order. */
		if (h->msn != q->msn)
			return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
					     DDP_ECODE_U_INVALID_MSN_RANGE, raw, hl, ulpdu_len);
		if (h->mo != q->placed)
			return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
					     DDP_ECODE_U_INVALID_MO, raw, hl, ulpdu_len);
		if (op != q->opcode)
			return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
					     RDMAP_ECODE_UNEXPECTED_OP, raw, hl, ulpdu_len);
	}
	return ro->place(qp, h, op, raw, hl, ulpdu_len, flags, dst, ndst);
}

static int place_send(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
		      size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	struct rdmap_rx_queue *q = &qp->rxq[h->qn];
	size_t len = ulpdu_len - hl;
	struct rdmap_rwqe *r;
	int n;

	(void)op;
	if (flags & MPA_RX_F_RTR) {
		/* RFC 6581 zero-length Send RTR: consumes no buffer. */
		if (len || !h->last)
			return rdmap_rx_fail(qp, TERM_LAYER_LLP, MPA_TERM_ETYPE_LLP, MPA_ECODE_NO_MATCHING_RTR,
					     raw, hl, ulpdu_len);
		return 0;
	}
	r = send_rwqe(qp);
	if (q->placed + len > r->cap) {
		qp->rx_wqe_status = RDMAP_WC_LOC_LEN_ERR;
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSG_TOO_LONG, raw,
				     hl, ulpdu_len);
	}
	if (!len)
		return 0;
	/* the receive buffers may have been deregistered since posting */
	for (int i = 0; i < r->wr.num_sge; i++)
		if (r->wr.sge[i].length &&
		    ddp_stag_check(qp->mem, r->wr.sge[i].lkey, qp->pd, DDP_ACC_LOCAL_WRITE, r->wr.sge[i].addr,
				   r->wr.sge[i].length, NULL) != DDP_STAG_OK) {
			qp->rx_wqe_status = RDMAP_WC_LOC_PROT_ERR;
			return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
					     RDMAP_ECODE_CATA_LOCAL, raw, hl, ulpdu_len);
		}
	n = rdmap_sge_map(r->wr.sge, r->wr.num_sge, q->placed, len, dst, MPA_RX_DST_MAX);
	if (n < 0)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATA_LOCAL,
				     raw, hl, ulpdu_len);
	*ndst = n;
	return 0;
}

static int place_read_req(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
			  size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	(void)op;
	(void)flags;
	(void)dst;
	(void)ndst;
	/* One segment holding exactly the Read Request header. */
	if (hl != DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN || ulpdu_len != hl || !h->last)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSG_TOO_LONG, raw,
				     hl, ulpdu_len);
	/* RFC 5040 §5.2.1 / RFC 6581: a peer that exceeds our IRD. */
	if (qp->irq_count >= qp->cfg.ird)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_CATA_LOCAL,
				     raw, hl, ulpdu_len);
	return 0;
}

static int place_term(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
		      size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	struct rdmap_rx_queue *q = &qp->rxq[h->qn];
	size_t len = ulpdu_len - hl;

	(void)op;
	(void)flags;
	if (q->placed + len > sizeof(qp->rx_term_buf) || !h->last)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSG_TOO_LONG, raw,
				     hl, ulpdu_len);
	if (len) {
		dst[0].iov_base = qp->rx_term_buf + q->placed;
		dst[0].iov_len = len;
		*ndst = 1;
	}
	return 0;
}

static int rx_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len, unsigned flags,
		    struct iovec *dst, int *ndst)
{
	struct rdmap_qp *qp = arg;
	const struct rx_op *ro;
	struct ddp_hdr h;
	uint8_t op;

	*ndst = 0;
	if (qp->state != RDMAP_QPS_RTS && qp->state != RDMAP_QPS_CLOSING)
		return -EPIPE;
	if (ddp_hdr_decode(hdr, hdr_len, &h) < 0)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_CATASTROPHIC,
				     DDP_ECODE_CATASTROPHIC, hdr, hdr_len, ulpdu_len);
	qp->rx_hdr = h;
	qp->rx_hdr_len = hdr_len;
	qp->rx_ulpdu_len = ulpdu_len;
	memcpy(qp->rx_hdr_raw, hdr, hdr_len);
	/* RFC 5041 §7: "invalid DDP version" for either buffer model */
	if (h.dv != DDP_VERSION)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP,
				     h.tagged ? DDP_ETYPE_TAGGED : DDP_ETYPE_UNTAGGED,
				     h.tagged ? DDP_ECODE_T_INVALID_DDPV : DDP_ECODE_U_INVALID_DDPV,
				     hdr, hdr_len, ulpdu_len);
	/* RFC 5040 §7.2: "The RDMA Version MUST be valid."  Version 0 (the RDMA
	 * Consortium draft) goes with MPA revision 0, which we do not speak. */
	if ((h.ulp_ctrl >> RDMAP_CTRL_RV_SHIFT) != RDMAP_VERSION)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_INVALID_RDMAPV, hdr, hdr_len, ulpdu_len);
	op = h.ulp_ctrl & RDMAP_CTRL_OPCODE;
	/* "The RDMA OpCode MUST be valid", and carried by the right model.  An
	 * RFC 7306 opcode on a stream without the extensions gets what RFC
	 * 7306 §1.1 says a peer without them answers: Unexpected OpCode. */
	ro = rx_op_of(op);
	if (!ro || ro->tagged != h.tagged || (ro->ext && !(qp->cfg.ext & RDMAP_EXT_RFC7306)))
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_UNEXPECTED_OP, hdr, hdr_len, ulpdu_len);
	if (h.tagged)
		return ro->place(qp, &h, op, hdr, hdr_len, ulpdu_len, flags, dst, ndst);
	return rx_untagged(qp, &h, op, hdr, hdr_len, ulpdu_len, flags, dst, ndst);
}

static void rx_send_done(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, uint64_t len)
{
	struct rdmap_rwqe *r = send_rwqe(qp);
	struct rdmap_wc wc = {0};

	wc.wr_id = r->wr.wr_id;
	wc.status = RDMAP_WC_SUCCESS;
	wc.opcode = RDMAP_WC_RECV;
	wc.byte_len = (uint32_t)len;
	wc.flags = rx_op_of(op)->wc_flags;
	if (wc.flags & RDMAP_WC_F_WITH_INV)
		wc.inv_stag = h->ulp_word;
	if (wc.flags & RDMAP_WC_F_WITH_IMM) {
		/* RFC 7306 §6: "an RDMA Write Message followed by an Immediate
		 * Data Operation has the same behavior as the RDMA Write with
		 * Immediate Data operation found in InfiniBand": the receive
		 * says so, with the Write's length, as IB's does.  Verbs have
		 * 32 bits of immediate: the first four of the eight octets. */
		memcpy(&wc.imm_data, qp->rx_hdr_raw + DDP_UNTAGGED_HDR_LEN, 4);
		wc.byte_len = 0;
		if (qp->rx_last_write) {
			wc.opcode = RDMAP_WC_RECV_RDMA_WITH_IMM;
			wc.byte_len = (uint32_t)qp->rx_write_len;
		}
	}
	if (qp->srq) {
		qp->srq_cur_valid = 0;
	} else {
		qp->rq_head++;
		qp->rq_count--;
	}
	if (qp->ops && qp->ops->complete)
		qp->ops->complete(qp->arg, 1, &wc);
}

static int rx_read_request(struct rdmap_qp *qp, const uint8_t *raw, size_t hl, size_t ulpdu_len)
{
	const uint8_t *rr = raw + DDP_UNTAGGED_HDR_LEN;
	struct rdmap_irqe *e = &qp->irq[(qp->irq_head + qp->irq_count) % qp->cfg.ird];
	uint32_t size = get_be32(rr + RDMAP_RREQ_OFF_SIZE);
	uint32_t src_stag = get_be32(rr + RDMAP_RREQ_OFF_SRC_STAG);
	uint64_t src_to = get_be64(rr + RDMAP_RREQ_OFF_SRC_TO);

	memset(e, 0, sizeof(*e));
	e->sink_stag = get_be32(rr + RDMAP_RREQ_OFF_SINK_STAG);
	e->sink_to = get_be64(rr + RDMAP_RREQ_OFF_SINK_TO);
	e->size = size;
	if (size) {
		struct ddp_mr *mr;
		enum ddp_stag_err err = ddp_stag_check(qp->mem, src_stag, qp->pd,
						       DDP_ACC_REMOTE_READ, src_to, size, &mr);

		/* RFC 5040 §7.2: Data Source STag checks, reported by RDMAP as
		 * remote protection errors with the Read Request header. */
		if (err != DDP_STAG_OK)
			return fail_rdmap_prot(qp, err, raw, hl, ulpdu_len);
		(void)mr;
		e->src_stag = src_stag;
		e->src_to = src_to;
	}
	/* RFC 5040 §5.2.1: a zero-length Read is answered by a zero-length
	 * Read Response, its STags unchecked. */
	qp->irq_count++;
	return 0;
}

/* The oldest outstanding Read or atomic @w has its answer: it leaves the
 * ORQ and completes in posting order (RFC 5040 §5.5). */
static void orq_done(struct rdmap_qp *qp, struct rdmap_swqe *w)
{
	w->state = SWQE_DONE;
	qp->orq_head++;
	qp->orq_count--;
	rdmap_sq_complete_ready(qp);
}

static int deliver_read_resp(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			     size_t ulpdu_len, unsigned flags)
{
	struct rdmap_swqe *w = orq_head(qp);

	(void)op;
	(void)flags;
	if (qp->rtr_rresp_pending) {
		qp->rtr_rresp_pending = 0;
		return 0;
	}
	if (!w) /* place_read_resp found one: the ORQ cannot be empty here */
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_UNEXPECTED_OP,
				     qp->rx_hdr_raw, qp->rx_hdr_len, ulpdu_len);
	qp->rx_rresp_placed += len;
	if (h->last) {
		/* RFC 5040 §5.5 rule 19: the Read completes once its Response is
		 * delivered, and in order. */
		w->byte_len = (uint32_t)qp->rx_rresp_placed;
		if (qp->rx_rresp_placed != w->total)
			return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS,
					     qp->rx_hdr_raw, qp->rx_hdr_len, ulpdu_len);
		qp->rx_rresp_placed = 0;
		orq_done(qp, w);
		rdmap_qp_progress(qp); /* ORD or fence may have held work */
	}
	return 0;
}

static int deliver_send(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			size_t ulpdu_len, unsigned flags)
{
	int ret;

	if (flags & MPA_RX_F_RTR)
		return 0;
	if (rx_op_of(op)->wc_flags & RDMAP_WC_F_WITH_INV) {
		/* RFC 5040 §7.2: "The Invalidate STag MUST be valid" and "MUST be
		 * associated to this RDMAP Stream"; a foreign one "cannot be
		 * invalidated" (§5.3, Figure 10: remote protection errors). */
		ret = ddp_stag_invalidate(qp->mem, h->ulp_word, qp->pd);
		if (ret)
			return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT,
					     ret == -EACCES ? RDMAP_ECODE_CANT_INVALIDATE : RDMAP_ECODE_INVALID_STAG,
					     qp->rx_hdr_raw, qp->rx_hdr_len, ulpdu_len);
	}
	rx_send_done(qp, h, op, len);
	return 0;
}

static int deliver_read_req(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			    size_t ulpdu_len, unsigned flags)
{
	int ret;

	(void)h;
	(void)op;
	(void)len;
	(void)flags;
	ret = rx_read_request(qp, qp->rx_hdr_raw, qp->rx_hdr_len, ulpdu_len);
	if (ret)
		return ret;
	rdmap_qp_progress(qp);
	return 0;
}

static int deliver_term(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			size_t ulpdu_len, unsigned flags)
{
	struct rdmap_term t;

	(void)h;
	(void)op;
	(void)ulpdu_len;
	(void)flags;
	if (rdmap_term_decode(qp->rx_term_buf, len, &t))
		memset(&t, 0, sizeof(t));
	qp->term_received = 1;
	qp->peer_term = t;
	qp_term_ev(qp, RDMAP_TERM_EV_RECEIVED, &qp->peer_term);
	/* RFC 5040 §5.4: a Terminate ends the stream; nothing is sent back. */
	rdmap_qp_to_error(qp, &qp->peer_term, 1);
	return -ECONNRESET;
}

static int rx_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len, unsigned flags)
{
	struct rdmap_qp *qp = arg;
	const struct ddp_hdr *h = &qp->rx_hdr;
	uint8_t op = h->ulp_ctrl & RDMAP_CTRL_OPCODE;
	const struct rx_op *ro = rx_op_of(op);
	size_t len = ulpdu_len - hdr_len;
	struct rdmap_rx_queue *q;
	int ret;

	(void)hdr;
	/* The QP left operation while this FPDU was arriving (the application
	 * moved it to error, a TERMINATE is due): it has no effect.  MPA's
	 * receive was stopped then, so this is a guard only. */
	if (qp->state != RDMAP_QPS_RTS && qp->state != RDMAP_QPS_CLOSING)
		return -EPIPE;
	qp->rx_fpdus++;
	if (h->tagged) {
		if (op == RDMAP_OP_WRITE && !(flags & MPA_RX_F_RTR)) {
			/* the length of the Write an Immediate Data may follow */
			if (qp->rx_last_write != 2)
				qp->rx_write_len = 0;
			qp->rx_write_len += len;
			qp->rx_last_write = h->last ? 1 : 2;
		} else if (h->last) {
			qp->rx_last_write = 0;
		}
		return ro->deliver ? ro->deliver(qp, h, op, len, ulpdu_len, flags) : 0;
	}
	/* untagged: the message is delivered once its last segment is */
	q = &qp->rxq[h->qn];
	q->placed += len;
	if (!h->last)
		return 0;
	q->active = 0;
	q->expect_msn++;
	ret = ro->deliver ? ro->deliver(qp, h, op, (size_t)q->placed, ulpdu_len, flags) : 0;
	/* an Immediate Data (delivered just now) pairs with the Write right
	 * before it only */
	qp->rx_last_write = 0;
	return ret;
}

/*
 * RFC 7306 §6.3: Immediate Data is one untagged message on queue 0 that
 * takes a posted receive (checked by rx_untagged) and carries "exactly 8
 * bytes" (taken with the header: nothing is placed in the receive's
 * buffers).  The RFC names no TERMINATE for another length; this is the
 * one RDMAP gives a Read Request of the wrong size.
 */
static int place_imm(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, const uint8_t *raw,
		     size_t hl, size_t ulpdu_len, unsigned flags, struct iovec *dst, int *ndst)
{
	(void)op;
	(void)flags;
	(void)dst;
	(void)ndst;
	if (hl != DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN || ulpdu_len != hl || !h->last)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				     DDP_ECODE_U_MSG_TOO_LONG, raw, hl, ulpdu_len);
	return 0;
}

/* RFC 7306 §5.2.1: an Atomic Request is one segment holding its 52-octet
 * header (RDMAP takes it with the DDP header), counted against IRD with the
 * Read Requests it shares queue 1 with (§5.2 rule 4 of the response). */
static int place_atomic_req(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op,
			    const uint8_t *raw, size_t hl, size_t ulpdu_len, unsigned flags,
			    struct iovec *dst, int *ndst)
{
	(void)op;
	(void)flags;
	(void)dst;
	(void)ndst;
	if (hl != DDP_UNTAGGED_HDR_LEN + RDMAP_AREQ_LEN || ulpdu_len != hl || !h->last)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				     DDP_ECODE_U_MSG_TOO_LONG, raw, hl, ulpdu_len);
	if (qp->irq_count >= qp->cfg.ird)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_CATA_LOCAL, raw, hl, ulpdu_len);
	return 0;
}

/*
 * The word an atomic targets, if its STag still grants it (it was checked
 * when the request was delivered; the application may have deregistered
 * or invalidated the region since).
 */
static uint64_t *atomic_target(struct rdmap_qp *qp, const struct rdmap_irqe *e)
{
	struct ddp_mr *mr;

	if (ddp_stag_check(qp->mem, e->src_stag, qp->pd, DDP_ACC_REMOTE_ATOMIC, e->src_to, 8,
			   &mr) != DDP_STAG_OK)
		return NULL;
	return (uint64_t *)(void *)(mr->addr + (e->src_to - mr->va));
}

/*
 * An atomic executes in request order with the Read Requests of its queue:
 * once every earlier Read Response was generated (RFC 7306 §7, "RDMA Read
 * Response Message will not be generated until Atomic Response Message has
 * been generated" and its mirror), so that a Read before it reads the value
 * before it; and once no FPDU queued on the stream still reads the word (a
 * Read Response is sent from memory in place: changing the word under it
 * would change data whose CRC is taken).  Delivered at the head with
 * nothing queued, it runs at once, before any later message is placed;
 * otherwise just before its response (a later Write may then land first,
 * which §7 allows: "Atomic -> RDMA Write ... MAY be Placed before").
 */
int rdmap_atomic_run(struct rdmap_qp *qp, struct rdmap_irqe *e, int at_head)
{
	uint64_t *w;

	if (e->executed)
		return 1;
	if (!at_head)
		return 0;
	w = atomic_target(qp, e);
	if (!w)
		return -EFAULT;
	if (qp->mpa && mpa_tx_refs(qp->mpa, (uintptr_t)w, (uintptr_t)w + 8))
		return 0;
	e->orig = rdmap_atomic_apply(w, e->aop, e->data, e->data_mask, e->cmp, e->cmp_mask);
	e->executed = 1;
	return 1;
}

/*
 * An Atomic Request, delivered (RFC 7306 §5.4 rule 3: "MUST NOT start
 * processing until ... Delivered"): validated now, every error answered
 * with the target untouched (§5.1.1, §5.1.2), then executed (see
 * rdmap_atomic_run()) and answered in order with Read Responses.
 */
static int deliver_atomic_req(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			      size_t ulpdu_len, unsigned flags)
{
	const uint8_t *raw = qp->rx_hdr_raw, *a = raw + DDP_UNTAGGED_HDR_LEN;
	size_t hl = qp->rx_hdr_len;
	unsigned aop = get_be32(a + RDMAP_AREQ_OFF_OPCODE) & RDMAP_AREQ_AOPCODE;
	struct rdmap_irqe *e;
	enum ddp_stag_err err;
	struct ddp_mr *mr;
	uint32_t stag = get_be32(a + RDMAP_AREQ_OFF_STAG);
	uint64_t to = get_be64(a + RDMAP_AREQ_OFF_TO);

	(void)h;
	(void)op;
	(void)len;
	(void)flags;
	/* §5.2.1 rule 4: "an error MUST be surfaced" for an operation code
	 * the RNIC does not support; no code is named: this is the one RFC
	 * 5040 has for an operation it does not know. */
	if (aop != RDMAP_AOP_FETCHADD && aop != RDMAP_AOP_CMPSWAP)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_UNEXPECTED_OP, raw, hl, ulpdu_len);
	/* §8.2: a Tagged Offset that is not 64-bit aligned is "Remote
	 * Operation Error" / "Catastrophic Error, Localized to RDMAP Stream";
	 * checked first, from the header alone, as §8.2 lists it */
	if (to & 7)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_CATA_LOCAL, raw, hl, ulpdu_len);
	/* The target's STag, in RFC 5040 §7.2's order (valid, this stream's
	 * PD, access, wrap, bounds), with the remote-atomic right: RFC 7306
	 * names no codes, these are RFC 5040's for a Read's data source. */
	err = ddp_stag_check(qp->mem, stag, qp->pd, DDP_ACC_REMOTE_ATOMIC, to, 8, &mr);
	if (err != DDP_STAG_OK)
		return fail_rdmap_prot(qp, err, raw, hl, ulpdu_len);
	/* a region whose address and tagged offset differ by other than a
	 * multiple of 8 puts an aligned offset on an unaligned word: the CPU
	 * cannot update it atomically, so it is refused like a misaligned
	 * offset */
	if ((uintptr_t)(mr->addr + (to - mr->va)) & 7)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_CATA_LOCAL, raw, hl, ulpdu_len);
	e = &qp->irq[(qp->irq_head + qp->irq_count) % qp->cfg.ird];
	memset(e, 0, sizeof(*e));
	e->atomic = 1;
	e->aop = (uint8_t)aop;
	e->req_id = get_be32(a + RDMAP_AREQ_OFF_REQ_ID);
	e->src_stag = stag;
	e->src_to = to;
	e->data = get_be64(a + RDMAP_AREQ_OFF_ADD_SWAP);
	e->data_mask = get_be64(a + RDMAP_AREQ_OFF_ADD_SWAP_MASK);
	e->cmp = get_be64(a + RDMAP_AREQ_OFF_CMP);
	e->cmp_mask = get_be64(a + RDMAP_AREQ_OFF_CMP_MASK);
	/* the region was valid just now: no -EFAULT here */
	(void)rdmap_atomic_run(qp, e, qp->irq_count == 0);
	qp->irq_count++;
	rdmap_qp_progress(qp);
	return 0;
}

/* RFC 7306 §5.2.2: an Atomic Response is one 12-octet segment on queue 3
 * answering the oldest outstanding request, which must be an atomic (rule
 * 8: responses come in request order, Reads' and atomics' alike). */
static int place_atomic_resp(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op,
			     const uint8_t *raw, size_t hl, size_t ulpdu_len, unsigned flags,
			     struct iovec *dst, int *ndst)
{
	struct rdmap_swqe *w = orq_head(qp);

	(void)op;
	(void)flags;
	(void)dst;
	(void)ndst;
	if (hl != DDP_UNTAGGED_HDR_LEN + RDMAP_ARESP_LEN || ulpdu_len != hl || !h->last)
		return rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
				     DDP_ECODE_U_MSG_TOO_LONG, raw, hl, ulpdu_len);
	if (!w || !wr_is_atomic(w->wr.opcode))
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_UNEXPECTED_OP, raw, hl, ulpdu_len);
	return 0;
}

static int deliver_atomic_resp(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
			       size_t ulpdu_len, unsigned flags)
{
	const uint8_t *a = qp->rx_hdr_raw + DDP_UNTAGGED_HDR_LEN;
	struct rdmap_swqe *w = orq_head(qp);
	uint64_t orig = get_be64(a + RDMAP_ARESP_OFF_ORIG);
	struct rdmap_sge *sge;

	(void)h;
	(void)op;
	(void)len;
	(void)flags;
	/* §5.2.2 rule 7: a response that does not answer the request it must
	 * ("Original Request Identifier") is an error; RFC 7306 names no code:
	 * this is RDMAP's for a Read Response without its Read */
	if (!w || !wr_is_atomic(w->wr.opcode) || get_be32(a + RDMAP_ARESP_OFF_REQ_ID) != w->msn)
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
				     RDMAP_ECODE_UNEXPECTED_OP, qp->rx_hdr_raw, qp->rx_hdr_len,
				     ulpdu_len);
	/* the original value goes to the WR's buffer, checked again now: the
	 * application may have deregistered it since posting */
	sge = &w->wr.sge[0];
	if (ddp_stag_check(qp->mem, sge->lkey, qp->pd, DDP_ACC_LOCAL_WRITE, sge->addr, 8, NULL) !=
	    DDP_STAG_OK) {
		w->status = RDMAP_WC_LOC_PROT_ERR;
		orq_done(qp, w);
		return rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
				     RDMAP_ECODE_CATA_LOCAL, qp->rx_hdr_raw, qp->rx_hdr_len,
				     ulpdu_len);
	}
	memcpy((void *)(uintptr_t)sge->addr, &orig, 8);
	w->byte_len = 8;
	/* §5.4 rule 7: the atomic completes once its response is delivered,
	 * and (RFC 5040 §5.5) in posting order */
	orq_done(qp, w);
	rdmap_qp_progress(qp); /* ORD or a fence may have held work */
	return 0;
}

static int deliver_imm(struct rdmap_qp *qp, const struct ddp_hdr *h, uint8_t op, size_t len,
		       size_t ulpdu_len, unsigned flags)
{
	(void)ulpdu_len;
	(void)flags;
	rx_send_done(qp, h, op, len);
	return 0;
}

/* RFC 5040 §4.1 Figure 4 and RFC 7306 §4.1 Figure 2 (model and queue of
 * each opcode) and what each does: see struct rx_op. */
static const struct rx_op rx_ops[16] = {
	[RDMAP_OP_WRITE] = { .tagged = 1, .place = place_write },
	[RDMAP_OP_READ_REQ] = { .qn = DDP_QN_READ_REQ, .hdr_extra = RDMAP_RREQ_LEN,
				.place = place_read_req, .deliver = deliver_read_req },
	[RDMAP_OP_READ_RESP] = { .tagged = 1, .place = place_read_resp, .deliver = deliver_read_resp },
	[RDMAP_OP_SEND] = { .qn = DDP_QN_SEND, .consumes_rq = 1, .place = place_send, .deliver = deliver_send },
	[RDMAP_OP_SEND_INV] = { .qn = DDP_QN_SEND, .consumes_rq = 1, .wc_flags = RDMAP_WC_F_WITH_INV,
				.place = place_send, .deliver = deliver_send },
	[RDMAP_OP_SEND_SE] = { .qn = DDP_QN_SEND, .consumes_rq = 1, .wc_flags = RDMAP_WC_F_SOLICITED,
			       .place = place_send, .deliver = deliver_send },
	[RDMAP_OP_SEND_SE_INV] = { .qn = DDP_QN_SEND, .consumes_rq = 1,
				   .wc_flags = RDMAP_WC_F_SOLICITED | RDMAP_WC_F_WITH_INV,
				   .place = place_send, .deliver = deliver_send },
	[RDMAP_OP_TERMINATE] = { .qn = DDP_QN_TERMINATE, .place = place_term, .deliver = deliver_term },
	[RDMAP_OP_IMM] = { .qn = DDP_QN_SEND, .ext = 1, .consumes_rq = 1, .hdr_extra = RDMAP_IMM_LEN,
			   .wc_flags = RDMAP_WC_F_WITH_IMM, .place = place_imm, .deliver = deliver_imm },
	[RDMAP_OP_IMM_SE] = { .qn = DDP_QN_SEND, .ext = 1, .consumes_rq = 1, .hdr_extra = RDMAP_IMM_LEN,
			      .wc_flags = RDMAP_WC_F_WITH_IMM | RDMAP_WC_F_SOLICITED, .place = place_imm,
			      .deliver = deliver_imm },
	[RDMAP_OP_ATOMIC_REQ] = { .qn = DDP_QN_READ_REQ, .ext = 1, .hdr_extra = RDMAP_AREQ_LEN,
				  .place = place_atomic_req, .deliver = deliver_atomic_req },
	[RDMAP_OP_ATOMIC_RESP] = { .qn = DDP_QN_ATOMIC_RESP, .ext = 1, .hdr_extra = RDMAP_ARESP_LEN,
				   .place = place_atomic_resp, .deliver = deliver_atomic_resp },
};

/* the row of @op, or NULL for an opcode RDMAP does not define */
static const struct rx_op *rx_op_of(uint8_t op)
{
	return op < 16 && rx_ops[op].place ? &rx_ops[op] : NULL;
}

/* RDMAP header octets that come with @op's DDP header, when the ULPDU
 * (@ulpdu_len octets) holds them */
static size_t rx_hdr_extra(uint8_t op, size_t ulpdu_len)
{
	const struct rx_op *ro = rx_op_of(op);

	if (!ro || !ro->hdr_extra || ulpdu_len < (size_t)DDP_UNTAGGED_HDR_LEN + ro->hdr_extra)
		return 0;
	return ro->hdr_extra;
}

const struct mpa_ops rdmap_mpa_ops = {
	.rx_hdr_len = rx_hdr_len,
	.rx_begin = rx_begin,
	.rx_end = rx_end,
	.tx_done = rdmap_tx_done,
};
