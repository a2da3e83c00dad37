/* SPDX-License-Identifier: MIT */
/*
 * RDMAP transmit: work requests and Read Responses cut into DDP segments
 * that each fit the MPA MULPDU (RFC 5041 §5), queued on the MPA connection
 * with their payload referenced in place.
 */
#include "rdmap_int.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"

static int send_terminate(struct rdmap_qp *qp)
{
	struct ddp_hdr h = {0};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX];
	size_t n;
	int ret;

	/* RFC 5040 §4.1: Terminate goes on untagged queue 2, one segment. */
	h.last = 1;
	h.dv = DDP_VERSION;
	h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_TERMINATE);
	h.qn = DDP_QN_TERMINATE;
	h.msn = qp->tx_msn[DDP_QN_TERMINATE];
	h.mo = 0;
	n = ddp_hdr_encode(buf, &h);
	n += rdmap_term_encode(&qp->term, buf + n);
	ret = mpa_tx_fpdu(qp->mpa, buf, n, NULL, 0, NULL);
	if (ret)
		return ret;
	qp->tx_msn[DDP_QN_TERMINATE]++;
	qp->term_sent = 1;
	qp->tx_fpdus++;
	qp_term_ev(qp, RDMAP_TERM_EV_SENT, &qp->term);
	return 1;
}

/*
 * RFC 5040 §7.1 rule 1: an error found while creating an outgoing message is
 * reported with a Terminate "sent instead of the request", its DDP and RDMA
 * header fields absent (local catastrophic error).
 */
void rdmap_local_fail(struct rdmap_qp *qp)
{
	if (qp->term_pending || qp->state == RDMAP_QPS_ERROR)
		return;
	memset(&qp->term, 0, sizeof(qp->term));
	qp->term.layer = TERM_LAYER_RDMAP;
	qp->term.etype = RDMAP_ETYPE_CATASTROPHIC;
	qp->term.ecode = RDMAP_ECODE_CATA_LOCAL;
	qp->term_pending = 1;
	qp->state = RDMAP_QPS_TERMINATE;
	/* nothing more is received either: the rest of an FPDU in progress
	 * would land in memory the coming flush gives back */
	if (qp->mpa)
		mpa_rx_stop(qp->mpa, -EPROTO);
}

/* Pick the next message to transmit; 0 if nothing can start now. */
static int tx_start_next(struct rdmap_qp *qp)
{
	struct rdmap_tx_msg *m = &qp->tx;

	/* RFC 5040 §5.5 rule 20: Read Responses go out in request order.
	 * They are served before new requests so that the peer's Reads are
	 * not starved by our own traffic. */
	if (qp->irq_count) {
		struct rdmap_irqe *e = &qp->irq[qp->irq_head % (qp->cfg.ird ? qp->cfg.ird : 1)];

		memset(m, 0, sizeof(*m));
		m->active = 1;
		m->kind = TXK_RRESP;
		m->irqe = e;
		m->total = e->size;
		m->sent = e->sent;
		return 1;
	}
	while (qp->sq_next < qp->sq_head + qp->sq_count) {
		struct rdmap_swqe *w = sq_at(qp, qp->sq_next);

		/* Fence: wait until every earlier Read has its response. */
		if ((w->wr.flags & RDMAP_WR_FENCE) && qp->orq_count)
			return 0;
		if (w->wr.opcode == RDMAP_WR_LOCAL_INV) {
			struct ddp_mr *mr = ddp_mr_lookup(qp->mem, w->wr.inv_stag);

			/* Local invalidate takes effect in order, here. */
			w->state = SWQE_DONE;
			if (ddp_stag_invalidate(qp->mem, w->wr.inv_stag, qp->pd)) {
				w->status = RDMAP_WC_LOC_PROT_ERR;
			} else if (mr && qp->mpa) {
				/* A peer's FPDU into the region, validated before,
				 * may be half placed (the engine's read may be
				 * lending the rest of it): the completion gives the
				 * memory back to the application, so it waits until
				 * the payload is in (rdmap_qp_progress()) */
				w->inv_lo = (uintptr_t)mr->addr;
				w->inv_hi = w->inv_lo + (uintptr_t)mr->length;
				if (mpa_rx_refs(qp->mpa, w->inv_lo, w->inv_hi)) {
					w->state = SWQE_HELD;
					qp->inv_held++;
				}
			}
			qp->sq_next++;
			rdmap_sq_complete_ready(qp);
			if (w->status != RDMAP_WC_SUCCESS) {
				rdmap_local_fail(qp);
				return 0;
			}
			continue;
		}
		/* ORD 0: the connection lowered ORD to the peer's IRD of 0
		 * (RFC 6581 §9.1) after this Read (or atomic) was posted; it
		 * can never go out.  It fails here, in its turn (what went
		 * before is sent), and the QP with it: what is behind it is
		 * flushed (verbs ordering), instead of everything waiting
		 * forever. */
		if (wr_uses_ord(w->wr.opcode) && qp->cfg.ord == 0) {
			w->status = RDMAP_WC_LOC_QP_OP_ERR;
			w->state = SWQE_DONE;
			qp->sq_next++;
			rdmap_sq_complete_ready(qp);
			rdmap_local_fail(qp);
			return 0;
		}
		/* ORD: queue locally rather than exceed the peer's IRD.  RFC
		 * 7306 §5.2: Atomic Requests share the Read Request queue "to
		 * reuse ... ORD/IRD flow control", so they count with Reads. */
		if (wr_uses_ord(w->wr.opcode) && qp->orq_count >= qp->cfg.ord)
			return 0;
		memset(m, 0, sizeof(*m));
		m->active = 1;
		m->kind = TXK_SQ;
		m->wqe = w;
		m->total = w->total;
		/* an untagged message's MSN on its queue (RFC 7306 §6.3:
		 * Immediate Data on queue 0, §5.2.1 rule 5: Atomic Requests on
		 * queue 1); a Write with Immediate takes its Immediate Data's
		 * now, for after the Write */
		if (w->wr.opcode == RDMAP_WR_SEND || w->wr.opcode == RDMAP_WR_SEND_INV ||
		    w->wr.opcode == RDMAP_WR_SEND_IMM || w->wr.opcode == RDMAP_WR_WRITE_IMM)
			m->msn = qp->tx_msn[DDP_QN_SEND]++;
		else if (wr_uses_ord(w->wr.opcode))
			m->msn = w->msn = qp->tx_msn[DDP_QN_READ_REQ]++;
		w->state = SWQE_SENDING;
		return 1;
	}
	return 0;
}

static uint8_t send_opcode(const struct rdmap_send_wr *wr)
{
	int se = !!(wr->flags & RDMAP_WR_SOLICITED);

	if (wr->opcode == RDMAP_WR_SEND_INV)
		return se ? RDMAP_OP_SEND_SE_INV : RDMAP_OP_SEND_INV;
	return se ? RDMAP_OP_SEND_SE : RDMAP_OP_SEND;
}

/* Octets of the next segment: the rest of the message, at most what fits
 * beside a @hdr octet DDP header in one MULPDU (RFC 5041 §5). */
static uint64_t next_seg(const struct rdmap_tx_msg *m, uint32_t mulpdu, size_t hdr)
{
	uint64_t seg = m->total - m->sent;

	return seg > mulpdu - hdr ? mulpdu - hdr : seg;
}

static void tx_msg_done(struct rdmap_qp *qp, struct rdmap_tx_msg *m);

/*
 * RFC 7306 §5.2.1 Figure 4: the Atomic Request header of @wr into @p.  The
 * verbs operations are the plain ones, so the masks make the RFC's masked
 * forms (§5.1.1, §5.1.2 pseudo-code) equal to them: FetchAdd with Add Mask
 * 0 is a 64-bit add with carry through every bit; CmpSwap with both masks
 * all ones compares and swaps the whole word.  The fields FetchAdd does not
 * use are sent as §5.2.1 says: Compare Data 0, Compare Mask all ones.
 */
static size_t atomic_req_encode(const struct rdmap_send_wr *wr, uint32_t req_id, uint8_t *p)
{
	int cswap = wr->opcode == RDMAP_WR_ATOMIC_CSWAP;

	put_be32(p + RDMAP_AREQ_OFF_OPCODE, cswap ? RDMAP_AOP_CMPSWAP : RDMAP_AOP_FETCHADD);
	/* the requester's choice (§5.2.1): its MSN, unique among the
	 * requests outstanding */
	put_be32(p + RDMAP_AREQ_OFF_REQ_ID, req_id);
	put_be32(p + RDMAP_AREQ_OFF_STAG, wr->rkey);
	put_be64(p + RDMAP_AREQ_OFF_TO, wr->remote_addr);
	put_be64(p + RDMAP_AREQ_OFF_ADD_SWAP, cswap ? wr->swap : wr->compare_add);
	put_be64(p + RDMAP_AREQ_OFF_ADD_SWAP_MASK, cswap ? UINT64_MAX : 0);
	put_be64(p + RDMAP_AREQ_OFF_CMP, cswap ? wr->compare_add : 0);
	put_be64(p + RDMAP_AREQ_OFF_CMP_MASK, UINT64_MAX);
	return RDMAP_AREQ_LEN;
}

/* RFC 7306 §6.3: one Immediate Data message (with Solicited Event when
 * asked), untagged on queue 0, 8 octets: the verbs immediate's four, then
 * four zeros.  It ends a Send with Immediate or a Write with Immediate. */
static int tx_imm(struct rdmap_qp *qp, struct rdmap_tx_msg *m)
{
	const struct rdmap_send_wr *wr = &m->wqe->wr;
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN];
	struct ddp_hdr h = {0};
	size_t hl;
	int ret;

	h.dv = DDP_VERSION;
	h.last = 1;
	h.ulp_ctrl = RDMAP_CTRL((wr->flags & RDMAP_WR_SOLICITED) ? RDMAP_OP_IMM_SE : RDMAP_OP_IMM);
	h.qn = DDP_QN_SEND;
	h.msn = m->msn;
	hl = ddp_hdr_encode(hdr, &h);
	memcpy(hdr + hl, &wr->imm_data, 4);
	memset(hdr + hl + 4, 0, RDMAP_IMM_LEN - 4);
	ret = mpa_tx_fpdu(qp->mpa, hdr, hl + RDMAP_IMM_LEN, NULL, 0, m->wqe);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	qp->tx_fpdus++;
	tx_msg_done(qp, m);
	return 1;
}

/* RFC 7306 §5.2.2: the Atomic Response to an executed request, on queue 3
 * with that queue's next MSN, in the order of the requests (with Read
 * Responses: rule 8, and §7's "RDMA Read Response Message will not be
 * generated until Atomic Response Message has been generated"). */
static int tx_atomic_resp(struct rdmap_qp *qp, struct rdmap_tx_msg *m)
{
	struct rdmap_irqe *e = m->irqe;
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN + RDMAP_ARESP_LEN];
	struct ddp_hdr h = {0};
	size_t hl;
	int ret;

	/* it is at the head of the responses now; it may still wait for a
	 * queued Read Response that reads its word */
	ret = rdmap_atomic_run(qp, e, 1);
	if (ret <= 0)
		return ret;
	h.dv = DDP_VERSION;
	h.last = 1;
	h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_ATOMIC_RESP);
	h.qn = DDP_QN_ATOMIC_RESP;
	h.msn = qp->tx_msn[DDP_QN_ATOMIC_RESP];
	hl = ddp_hdr_encode(hdr, &h);
	put_be32(hdr + hl + RDMAP_ARESP_OFF_REQ_ID, e->req_id);
	put_be64(hdr + hl + RDMAP_ARESP_OFF_ORIG, e->orig);
	ret = mpa_tx_fpdu(qp->mpa, hdr, hl + RDMAP_ARESP_LEN, NULL, 0, NULL);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	qp->tx_msn[DDP_QN_ATOMIC_RESP]++;
	qp->tx_fpdus++;
	tx_msg_done(qp, m);
	return 1;
}

/* Queue the next segment of the current message.  1 queued, 0 no room,
 * -errno on failure. */
static int tx_segment(struct rdmap_qp *qp)
{
	struct rdmap_tx_msg *m = &qp->tx;
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN + RDMAP_HDR_EXTRA_MAX];
	struct iovec iov[RDMAP_MAX_SGE];
	struct ddp_hdr h = {0};
	uint32_t mulpdu = mpa_tx_mulpdu(qp->mpa);
	uint64_t seg = 0;
	size_t hl;
	int niov = 0, last, ret;
	void *cookie = NULL;

	h.dv = DDP_VERSION;
	if (m->kind == TXK_RRESP && m->irqe->atomic)
		return tx_atomic_resp(qp, m);
	if (m->kind == TXK_SQ && (m->wqe->wr.opcode == RDMAP_WR_SEND_IMM ||
				  (m->wqe->wr.opcode == RDMAP_WR_WRITE_IMM && m->imm_phase)))
		return tx_imm(qp, m);
	if (m->kind == TXK_RRESP) {
		struct rdmap_irqe *e = m->irqe;

		seg = next_seg(m, mulpdu, DDP_TAGGED_HDR_LEN);
		h.tagged = 1;
		h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_READ_RESP);
		h.stag = e->sink_stag;
		h.to = e->sink_to + m->sent;
		if (seg) {
			struct ddp_mr *mr;

			/* the source was checked with the request; it may have
			 * been deregistered or invalidated since: every segment
			 * is read only from a region valid now */
			if (ddp_stag_check(qp->mem, e->src_stag, qp->pd, DDP_ACC_REMOTE_READ,
					   e->src_to + m->sent, seg, &mr) != DDP_STAG_OK)
				return -EFAULT;
			iov[0].iov_base = mr->addr + (e->src_to + m->sent - mr->va);
			iov[0].iov_len = (size_t)seg;
			niov = 1;
		}
	} else {
		struct rdmap_swqe *w = m->wqe;
		const struct rdmap_send_wr *wr = &w->wr;

		switch (wr->opcode) {
		case RDMAP_WR_WRITE:
		case RDMAP_WR_WRITE_IMM:
			seg = next_seg(m, mulpdu, DDP_TAGGED_HDR_LEN);
			h.tagged = 1;
			h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_WRITE);
			h.stag = wr->rkey;
			h.to = wr->remote_addr + m->sent;
			break;
		case RDMAP_WR_READ:
			h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_READ_REQ);
			h.qn = DDP_QN_READ_REQ;
			h.msn = m->msn;
			break;
		case RDMAP_WR_ATOMIC_FADD:
		case RDMAP_WR_ATOMIC_CSWAP:
			/* RFC 7306 §5.2.1 rule 5: on the Read Request queue */
			h.ulp_ctrl = RDMAP_CTRL(RDMAP_OP_ATOMIC_REQ);
			h.qn = DDP_QN_READ_REQ;
			h.msn = m->msn;
			break;
		default: /* Send variants */
			seg = next_seg(m, mulpdu, DDP_UNTAGGED_HDR_LEN);
			h.ulp_ctrl = RDMAP_CTRL(send_opcode(wr));
			h.qn = DDP_QN_SEND;
			h.msn = m->msn;
			h.mo = (uint32_t)m->sent;
			/* RFC 5040 §4.1: the Invalidate STag rides in RsvdULP */
			if (wr->opcode == RDMAP_WR_SEND_INV)
				h.ulp_word = wr->inv_stag;
			break;
		}
		if (seg) {
			/* the SGEs were checked when posted; a region may have
			 * been deregistered or invalidated since (the WR then
			 * fails with a local protection error) */
			if (!(wr->flags & RDMAP_WR_INLINE))
				for (int i = 0; i < wr->num_sge; i++)
					if (wr->sge[i].length &&
					    ddp_stag_check(qp->mem, wr->sge[i].lkey, qp->pd, 0,
							   wr->sge[i].addr, wr->sge[i].length,
							   NULL) != DDP_STAG_OK) {
						w->status = RDMAP_WC_LOC_PROT_ERR;
						return -EFAULT;
					}
			niov = rdmap_sge_map(wr->sge, wr->num_sge, m->sent, seg, iov,
					     RDMAP_MAX_SGE);
			if (niov < 0)
				return niov;
		}
	}
	last = (m->sent + seg == m->total);
	if (m->kind == TXK_SQ && wr_uses_ord(m->wqe->wr.opcode))
		last = 1; /* a Read or Atomic Request is one segment */
	h.last = last;
	hl = ddp_hdr_encode(hdr, &h);
	if (m->kind == TXK_SQ && wr_is_atomic(m->wqe->wr.opcode)) {
		hl += atomic_req_encode(&m->wqe->wr, m->msn, hdr + hl);
		seg = m->total; /* the whole message is "sent" in one segment */
	} else if (m->kind == TXK_SQ && m->wqe->wr.opcode == RDMAP_WR_READ) {
		const struct rdmap_send_wr *wr = &m->wqe->wr;

		/* RFC 5040 §4.4 */
		put_be32(hdr + hl + RDMAP_RREQ_OFF_SINK_STAG, wr->sge[0].lkey);
		put_be64(hdr + hl + RDMAP_RREQ_OFF_SINK_TO, wr->sge[0].addr);
		put_be32(hdr + hl + RDMAP_RREQ_OFF_SIZE, (uint32_t)m->total);
		put_be32(hdr + hl + RDMAP_RREQ_OFF_SRC_STAG, wr->rkey);
		put_be64(hdr + hl + RDMAP_RREQ_OFF_SRC_TO, wr->remote_addr);
		hl += RDMAP_RREQ_LEN;
		seg = m->total; /* the whole message is "sent" in one segment */
	}
	/* the FPDU that ends a Send or Write completes it when it is sent;
	 * a Write with Immediate ends with its Immediate Data (tx_imm) */
	if (last && m->kind == TXK_SQ && !wr_uses_ord(m->wqe->wr.opcode) &&
	    m->wqe->wr.opcode != RDMAP_WR_WRITE_IMM)
		cookie = m->wqe;
	ret = mpa_tx_fpdu(qp->mpa, hdr, hl, iov, niov, cookie);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	qp->tx_fpdus++;
	m->sent += seg;
	if (!last)
		return 1;
	if (m->kind == TXK_SQ && m->wqe->wr.opcode == RDMAP_WR_WRITE_IMM) {
		m->imm_phase = 1; /* the Immediate Data message comes next */
		return 1;
	}
	tx_msg_done(qp, m);
	return 1;
}

/* The current message has gone out whole. */
static void tx_msg_done(struct rdmap_qp *qp, struct rdmap_tx_msg *m)
{
	m->active = 0;
	if (m->kind == TXK_RRESP) {
		qp->irq_head++;
		qp->irq_count--;
	} else {
		struct rdmap_swqe *w = m->wqe;

		w->state = SWQE_SENT;
		qp->sq_next++;
		if (wr_uses_ord(w->wr.opcode)) {
			unsigned slot = (qp->orq_head + qp->orq_count) % qp->cfg.ord;

			qp->orq[slot] = (unsigned)(w - qp->sq);
			qp->orq_count++;
		}
	}
}

/* Local invalidates held for a peer's FPDU into their region: complete
 * those the receive cursor left (in order, with what follows them). */
static void inv_release(struct rdmap_qp *qp)
{
	int done = 0;

	for (unsigned i = qp->sq_head; i != qp->sq_next && qp->inv_held; i++) {
		struct rdmap_swqe *w = sq_at(qp, i);

		if (w->state == SWQE_HELD && !mpa_rx_refs(qp->mpa, w->inv_lo, w->inv_hi)) {
			w->state = SWQE_DONE;
			qp->inv_held--;
			done = 1;
		}
	}
	if (done)
		rdmap_sq_complete_ready(qp);
}

int rdmap_qp_progress(struct rdmap_qp *qp)
{
	int n = 0, ret;

	if (!qp->mpa)
		return 0;
	if (qp->inv_held)
		inv_release(qp);
	if (qp->term_pending && !qp->term_sent) {
		/* A send in flight may use every queued FPDU: the queue can be
		 * cut once it ended (the engine cancels it, and calls again
		 * through rdmap_qp_set_io_busy()). */
		if (qp->io_busy)
			return 0;
		/* RFC 5040 §6.2.1: after a Terminate "the state of all outstanding
		 * RDMA Messages is indeterminate"; what has not started to leave
		 * is dropped rather than sent ahead of it, and makes room for it. */
		mpa_tx_discard(qp->mpa);
		if (!mpa_tx_space(qp->mpa)) {
			/* cannot happen with a queue of two or more FPDUs (at most
			 * the one partly sent stays): the QP must reach ERROR all
			 * the same, so the TERMINATE is abandoned and the engine
			 * resets the connection */
			qp->term_abandoned = 1;
			qp_term_ev(qp, RDMAP_TERM_EV_ABANDONED, &qp->term);
			rdmap_qp_to_error(qp, &qp->term, 0);
			return 0;
		}
		ret = send_terminate(qp);
		if (ret < 0) {
			qp->term_abandoned = 1;
			qp_term_ev(qp, RDMAP_TERM_EV_ABANDONED, &qp->term);
			rdmap_qp_to_error(qp, &qp->term, 0);
			return ret;
		}
		rdmap_qp_to_error(qp, &qp->term, 0);
		return 1;
	}
	if (qp->state != RDMAP_QPS_RTS && qp->state != RDMAP_QPS_CLOSING)
		return 0;
	while (mpa_tx_space(qp->mpa)) {
		if (!qp->tx.active && !tx_start_next(qp))
			break;
		if (qp->state != RDMAP_QPS_RTS && qp->state != RDMAP_QPS_CLOSING)
			break;
		ret = tx_segment(qp);
		if (ret < 0) {
			rdmap_local_fail(qp);
			break;
		}
		if (ret == 0)
			break;
		n++;
	}
	/* a local error above: its TERMINATE goes out now */
	if (qp->term_pending && !qp->term_sent)
		return n + rdmap_qp_progress(qp);
	return n;
}

/* MPA upcall: every octet of an FPDU went to TCP. */
void rdmap_tx_done(void *arg, void *cookie)
{
	struct rdmap_qp *qp = arg;
	struct rdmap_swqe *w = cookie;

	/* After a flush the entry is gone (completed in error). */
	if (qp->state == RDMAP_QPS_ERROR)
		return;
	/* RFC 5040 §5.5 rule 14: a Send or Write is complete at the source once
	 * the DDP layer completed it (handed to the LLP). */
	if (w->state == SWQE_SENT)
		w->state = SWQE_DONE;
	rdmap_sq_complete_ready(qp);
}
