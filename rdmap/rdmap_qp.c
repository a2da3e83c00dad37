/* SPDX-License-Identifier: MIT */
/*
 * RDMAP queue pair: creation, work request posting, completion ordering
 * (RFC 5040 §5.5) and the move to ERROR with flushing (RFC 5040 §6.2).
 */
#include "rdmap_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rdmap_qp_init(struct rdmap_qp *qp, const struct rdmap_qp_cfg *cfg, struct ddp_mem *mem,
		  struct ddp_pd *pd, const struct rdmap_ops *ops, void *arg)
{
	memset(qp, 0, sizeof(*qp));
	if (cfg->ird > MPA_V2_IRD_ORD_MASK || cfg->ord > MPA_V2_IRD_ORD_MASK ||
	    cfg->max_inline > RDMAP_MAX_INLINE)
		return -EINVAL;
	qp->cfg = *cfg;
	qp->mem = mem;
	qp->pd = pd;
	qp->ops = ops;
	qp->arg = arg;
	/* a queue of 0 (none: posting to it is refused) still gets an entry,
	 * so that every array exists (destroy tells an initialised QP by @sq);
	 * no index into it is ever taken (its count stays 0) */
	qp->sq = calloc(cfg->max_send_wr ? cfg->max_send_wr : 1, sizeof(*qp->sq));
	qp->rq = calloc(cfg->max_recv_wr ? cfg->max_recv_wr : 1, sizeof(*qp->rq));
	qp->srq_cur = calloc(1, sizeof(*qp->srq_cur));
	qp->orq = calloc(cfg->ord ? cfg->ord : 1, sizeof(*qp->orq));
	qp->irq = calloc(cfg->ird ? cfg->ird : 1, sizeof(*qp->irq));
	if (cfg->max_inline && cfg->max_send_wr)
		qp->inline_buf = malloc((size_t)cfg->max_send_wr * cfg->max_inline);
	if (!qp->sq || !qp->rq || !qp->srq_cur || !qp->orq || !qp->irq ||
	    (cfg->max_inline && cfg->max_send_wr && !qp->inline_buf)) {
		/* the PD reference is taken below: destroy must not drop it */
		qp->pd = NULL;
		rdmap_qp_destroy(qp);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->max_send_wr; i++)
		qp->sq[i].inline_data =
			cfg->max_inline ? qp->inline_buf + (size_t)i * cfg->max_inline : NULL;
	/* RFC 5041 §5: MSNs start at 1 on every untagged queue. */
	for (int q = 0; q < DDP_NQUEUES; q++) {
		qp->tx_msn[q] = 1;
		qp->rxq[q].expect_msn = 1;
	}
	pd->refs++;
	qp->state = RDMAP_QPS_IDLE;
	return 0;
}

void rdmap_qp_destroy(struct rdmap_qp *qp)
{
	if (qp->pd && qp->sq)
		qp->pd->refs--;
	free(qp->sq);
	free(qp->rq);
	free(qp->srq_cur);
	free(qp->orq);
	free(qp->irq);
	free(qp->inline_buf);
	qp->sq = NULL;
	qp->rq = NULL;
	qp->srq_cur = NULL;
	qp->orq = NULL;
	qp->irq = NULL;
	qp->inline_buf = NULL;
}

int rdmap_qp_bind(struct rdmap_qp *qp, struct mpa_conn *c)
{
	if (qp->state != RDMAP_QPS_IDLE || c->cfg.rx_hdr_min != DDP_TAGGED_HDR_LEN)
		return -EINVAL;
	/*
	 * A connection that failed right after entering full operation
	 * (insufficient IRD, no matching RTR: RFC 6581 §9.1, §9.2 "MUST send a
	 * TERM message") still needs its TERMINATE sent: bind, send, ERROR.
	 */
	if (c->state == MPA_S_ERROR && c->tx_slots && c->term_ecode) {
		qp->mpa = c;
		mpa_conn_set_ops(c, &rdmap_mpa_ops, qp);
		qp->state = RDMAP_QPS_RTS;
		rdmap_qp_conn_failed(qp, c->err);
		return -ECONNABORTED;
	}
	if (c->state != MPA_S_FULL)
		return -EINVAL;
	/* We must serve as many inbound Reads as MPA announced for us.  A
	 * peer-to-peer responder with IRD 0 offered only a Read RTR announced
	 * the one slot that RTR needs (RFC 6581 §9.2): the IRD table always
	 * has one. */
	if (c->enhanced && c->p2p && c->cfg.role == MPA_ROLE_RESPONDER && qp->cfg.ird == 0 &&
	    c->ird == 1 && c->rtr == MPA_RTR_READ)
		qp->cfg.ird = 1;
	if (c->enhanced && c->ird != MPA_V2_IRD_ORD_ULP && qp->cfg.ird < c->ird)
		return -EINVAL;
	qp->mpa = c;
	mpa_conn_set_ops(c, &rdmap_mpa_ops, qp);
	/* RFC 6581 §9.1: never more Read Requests outstanding than the peer's
	 * IRD; 0x3FFF leaves the values to us. */
	if (c->enhanced && c->peer_ird != MPA_V2_IRD_ORD_ULP && c->peer_ird < qp->cfg.ord)
		qp->cfg.ord = c->peer_ird;
	/* The RFC 6581 RTR that MPA sent for us used MSN 1 of its queue, and a
	 * Read RTR will be answered by a zero-length Read Response. */
	if (c->p2p && c->cfg.role == MPA_ROLE_INITIATOR) {
		if (c->rtr == MPA_RTR_SEND)
			qp->tx_msn[DDP_QN_SEND] = 2;
		if (c->rtr == MPA_RTR_READ) {
			qp->tx_msn[DDP_QN_READ_REQ] = 2;
			qp->rtr_rresp_pending = 1;
		}
	}
	qp->state = RDMAP_QPS_RTS;
	return 0;
}

/* Validate an SGE for local use: a valid region of this PD covering it,
 * with @access (LOCAL_WRITE for receive buffers and Read sinks). */
static int sge_check(struct rdmap_qp *qp, const struct rdmap_sge *sge, unsigned access)
{
	if (sge->length == 0)
		return 0;
	return ddp_stag_check(qp->mem, sge->lkey, qp->pd, access, sge->addr, sge->length, NULL) ==
			       DDP_STAG_OK
		       ? 0
		       : -EPERM;
}

static uint64_t sge_total(const struct rdmap_sge *sge, int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += sge[i].length;
	return t;
}

int rdmap_sge_map(const struct rdmap_sge *sge, int nsge, uint64_t off, uint64_t len,
		  struct iovec *iov, int max)
{
	int n = 0;

	for (int i = 0; i < nsge && len; i++) {
		uint64_t take;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (n == max)
			return -E2BIG;
		take = sge[i].length - off;
		if (take > len)
			take = len;
		iov[n].iov_base = (void *)(uintptr_t)(sge[i].addr + off);
		iov[n++].iov_len = (size_t)take;
		len -= take;
		off = 0;
	}
	return len ? -ERANGE : n;
}

static void emit_wc(struct rdmap_qp *qp, int recv, const struct rdmap_wc *wc)
{
	if (qp->ops && qp->ops->complete)
		qp->ops->complete(qp->arg, recv, wc);
}

/* the completion opcode of each work request opcode: a new opcode is a row */
static const enum rdmap_wc_opcode wr_wc_opcode[] = {
	[RDMAP_WR_WRITE] = RDMAP_WC_RDMA_WRITE, [RDMAP_WR_READ] = RDMAP_WC_RDMA_READ,
	[RDMAP_WR_SEND] = RDMAP_WC_SEND,	[RDMAP_WR_SEND_INV] = RDMAP_WC_SEND,
	[RDMAP_WR_LOCAL_INV] = RDMAP_WC_LOCAL_INV,
	[RDMAP_WR_WRITE_IMM] = RDMAP_WC_RDMA_WRITE,
	[RDMAP_WR_SEND_IMM] = RDMAP_WC_SEND,
	[RDMAP_WR_ATOMIC_FADD] = RDMAP_WC_FETCH_ADD,
	[RDMAP_WR_ATOMIC_CSWAP] = RDMAP_WC_COMP_SWAP,
};

static enum rdmap_wc_opcode wc_opcode(enum rdmap_wr_opcode op)
{
	/* rdmap_post_send() takes no other opcode */
	return (unsigned)op < sizeof(wr_wc_opcode) / sizeof(wr_wc_opcode[0]) ? wr_wc_opcode[op] : RDMAP_WC_SEND;
}

/* RFC 5040 §5.5 rule 15: "RDMA Operations MUST be Completed at the Local
 * Peer in the order that they were submitted by the ULP." */
void rdmap_sq_complete_ready(struct rdmap_qp *qp)
{
	while (qp->sq_count) {
		struct rdmap_swqe *w = sq_at(qp, qp->sq_head);

		if (w->state != SWQE_DONE)
			break;
		if ((w->wr.flags & RDMAP_WR_SIGNALED) || w->status != RDMAP_WC_SUCCESS) {
			struct rdmap_wc wc = {0};

			wc.wr_id = w->wr.wr_id;
			wc.status = w->status;
			wc.opcode = wc_opcode(w->wr.opcode);
			wc.byte_len = w->byte_len;
			emit_wc(qp, 0, &wc);
		}
		qp->sq_head++;
		qp->sq_count--;
		if (qp->sq_next < qp->sq_head)
			qp->sq_next = qp->sq_head;
	}
}

static void flush_one_send(struct rdmap_qp *qp, struct rdmap_swqe *w, enum rdmap_wc_status st,
			   const struct rdmap_term *t)
{
	struct rdmap_wc wc = {0};

	wc.wr_id = w->wr.wr_id;
	wc.status = st;
	wc.opcode = wc_opcode(w->wr.opcode);
	if (t) {
		wc.flags |= RDMAP_WC_F_TERM;
		wc.term = *t;
	}
	emit_wc(qp, 0, &wc);
}

/* The status a TERMINATE received from the peer gives the operation it hit. */
static enum rdmap_wc_status term_status(const struct rdmap_term *t)
{
	switch (t->layer) {
	case TERM_LAYER_RDMAP:
		if (t->etype == RDMAP_ETYPE_REMOTE_PROT)
			return RDMAP_WC_REM_ACCESS_ERR;
		if (t->etype == RDMAP_ETYPE_REMOTE_OP)
			return RDMAP_WC_REM_OP_ERR;
		return RDMAP_WC_FATAL_ERR;
	case TERM_LAYER_DDP:
		if (t->etype == DDP_ETYPE_TAGGED)
			return RDMAP_WC_REM_ACCESS_ERR;
		if (t->etype == DDP_ETYPE_UNTAGGED)
			return RDMAP_WC_REM_INV_REQ_ERR;
		return RDMAP_WC_FATAL_ERR;
	default:
		return RDMAP_WC_FATAL_ERR;
	}
}

/* The move to ERROR's completions: every outstanding work request, in
 * order; the cause recorded by rdmap_qp_to_error(). */
static void qp_flush(struct rdmap_qp *qp)
{
	const struct rdmap_term *t = qp->err_has_cause ? &qp->err_cause : NULL;
	int received = qp->err_received;
	int first = 1;

	qp->flush_pending = 0;
	/* The work requests complete below, and their memory is the
	 * application's again: nothing still queued on MPA may point into it
	 * (send_terminate() already dropped what was queued before our
	 * TERMINATE, which stays).  No send is in flight (io_busy), so the
	 * queue can be cut. */
	if (qp->mpa && !qp->term_sent)
		mpa_tx_discard(qp->mpa);
	/* Completed-but-unreported entries at the head keep their status. */
	rdmap_sq_complete_ready(qp);
	/*
	 * RFC 5040 §6.2.1 (abortive termination): outstanding work requests
	 * complete in error.  The oldest send-side operation gets the cause of
	 * a TERMINATE the peer sent; every other is flushed.
	 */
	while (qp->sq_count) {
		struct rdmap_swqe *w = sq_at(qp, qp->sq_head);
		enum rdmap_wc_status st = RDMAP_WC_WR_FLUSH_ERR;

		int with_term = 0;

		/* Entries here sit behind one that had not finished (the ones
		 * finished at the head went out just above): even one that
		 * finished itself is flushed, so that nothing succeeds after a
		 * failure on the queue (verbs ordering). */
		if (first && received && t && w->state != SWQE_POSTED && w->state != SWQE_DONE &&
		    w->state != SWQE_HELD) {
			st = term_status(t);
			with_term = 1;
		} else if (w->state == SWQE_SENDING && w->status != RDMAP_WC_SUCCESS) {
			/* failed locally while being sent (its memory went away) */
			st = w->status;
		}
		flush_one_send(qp, w, st, with_term ? t : NULL);
		first = 0;
		qp->sq_head++;
		qp->sq_count--;
	}
	qp->sq_next = qp->sq_head;
	qp->inv_held = 0;
	qp->orq_count = 0;
	qp->irq_count = 0;
	qp->tx.active = 0;
	if (qp->srq_cur_valid) {
		/* the shared receive taken for a Send that never finished */
		struct rdmap_wc wc = {0};

		wc.wr_id = qp->srq_cur->wr.wr_id;
		wc.status = qp->rx_wqe_status ? (enum rdmap_wc_status)qp->rx_wqe_status
					      : RDMAP_WC_WR_FLUSH_ERR;
		wc.opcode = RDMAP_WC_RECV;
		qp->srq_cur_valid = 0;
		qp->rx_wqe_status = 0;
		emit_wc(qp, 1, &wc);
	}
	while (qp->rq_count) {
		struct rdmap_rwqe *r = &qp->rq[qp->rq_head % qp->cfg.max_recv_wr];
		struct rdmap_wc wc = {0};

		wc.wr_id = r->wr.wr_id;
		/* the receive a failed Send was placing says why (local length or
		 * protection); the rest are flushed */
		wc.status = qp->rx_wqe_status ? (enum rdmap_wc_status)qp->rx_wqe_status
					      : RDMAP_WC_WR_FLUSH_ERR;
		qp->rx_wqe_status = 0;
		wc.opcode = RDMAP_WC_RECV;
		emit_wc(qp, 1, &wc);
		qp->rq_head++;
		qp->rq_count--;
	}
	if (qp->ops && qp->ops->error)
		qp->ops->error(qp->arg, t, received);
}

void rdmap_qp_to_error(struct rdmap_qp *qp, const struct rdmap_term *t, int received)
{
	if (qp->state == RDMAP_QPS_ERROR)
		return;
	qp->state = RDMAP_QPS_ERROR;
	qp->err_has_cause = t != NULL;
	if (t)
		qp->err_cause = *t;
	qp->err_received = received;
	/* Nothing more is placed: the rest of an FPDU in progress would land in
	 * memory the flush below gives back (a receive buffer, a Read's sink)
	 * or that the application may deregister next. */
	if (qp->mpa)
		mpa_rx_stop(qp->mpa, received ? -ECONNRESET : -EPIPE);
	if (qp->io_busy) {
		/* the engine's I/O may still use that memory: flush when it
		 * ended (rdmap_qp_set_io_busy(0)); the engine cancels it */
		qp->flush_pending = 1;
		return;
	}
	qp_flush(qp);
}

void rdmap_qp_set_io_busy(struct rdmap_qp *qp, int busy)
{
	qp->io_busy = busy;
	if (busy)
		return;
	if (qp->flush_pending)
		qp_flush(qp);
	else if (qp->term_pending && !qp->term_sent)
		rdmap_qp_progress(qp); /* the TERMINATE waited for the send */
}

int rdmap_qp_mem_refs(struct rdmap_qp *qp, uintptr_t lo, uintptr_t hi)
{
	if (!qp->mpa || lo >= hi)
		return 0;
	return mpa_rx_refs(qp->mpa, lo, hi) || mpa_tx_refs(qp->mpa, lo, hi);
}

int rdmap_qp_mem_revoke(struct rdmap_qp *qp, uintptr_t lo, uintptr_t hi)
{
	int rx, tx;

	if (!qp->mpa || lo >= hi)
		return 0;
	rx = mpa_rx_refs(qp->mpa, lo, hi);
	tx = mpa_tx_refs(qp->mpa, lo, hi);
	if (!rx && !tx)
		return 0;
	if (rx && (qp->state == RDMAP_QPS_RTS || qp->state == RDMAP_QPS_CLOSING)) {
		/* as if the segment had found its destination invalid */
		if (qp->rx_hdr.tagged) {
			rdmap_rx_fail(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_INVALID_STAG,
				      qp->rx_hdr_raw, qp->rx_hdr_len, qp->rx_ulpdu_len);
		} else {
			qp->rx_wqe_status = RDMAP_WC_LOC_PROT_ERR;
			rdmap_rx_fail(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
				      RDMAP_ECODE_CATA_LOCAL, qp->rx_hdr_raw, qp->rx_hdr_len,
				      qp->rx_ulpdu_len);
		}
	} else if (qp->state == RDMAP_QPS_RTS || qp->state == RDMAP_QPS_CLOSING) {
		rdmap_local_fail(qp);
	}
	mpa_rx_stop(qp->mpa, -EPROTO);
	return 1;
}

int rdmap_qp_close(struct rdmap_qp *qp)
{
	if (qp->state == RDMAP_QPS_RTS)
		qp->state = RDMAP_QPS_CLOSING;
	if (qp->state != RDMAP_QPS_CLOSING)
		return qp->state == RDMAP_QPS_ERROR;
	rdmap_qp_progress(qp);
	return qp->sq_count == 0 && qp->irq_count == 0 && !qp->tx.active &&
	       mpa_tx_pending_bytes(qp->mpa) == 0;
}

void rdmap_qp_modify_error(struct rdmap_qp *qp)
{
	/* a TERMINATE still to be queued may go out after the flush */
	rdmap_qp_to_error(qp, NULL, 0);
}

int rdmap_send_check(struct rdmap_qp *qp, const struct rdmap_send_wr *wr, unsigned ahead)
{
	uint64_t total;
	unsigned access = 0;

	if (wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE)
		return -EINVAL;
	if (!qp->cfg.max_send_wr)
		return -EINVAL; /* no send queue: not even a flush can be held */
	if (qp->state == RDMAP_QPS_CLOSING || qp->state == RDMAP_QPS_TERMINATE)
		return -EPIPE;
	switch (wr->opcode) {
	case RDMAP_WR_READ:
		/* one sink buffer: the Read Request carries a single sink STag;
		 * no SGE is a zero-length Read (sink STag 0, as libibverbs allows) */
		if (wr->num_sge > 1 || (wr->flags & RDMAP_WR_INLINE))
			return -EINVAL;
		if (qp->cfg.ord == 0)
			return -EINVAL;
		access = DDP_ACC_LOCAL_WRITE;
		break;
	case RDMAP_WR_WRITE:
	case RDMAP_WR_SEND:
	case RDMAP_WR_SEND_INV:
		break;
	case RDMAP_WR_LOCAL_INV:
		if (wr->num_sge)
			return -EINVAL;
		break;
	case RDMAP_WR_WRITE_IMM:
	case RDMAP_WR_SEND_IMM:
	case RDMAP_WR_ATOMIC_FADD:
	case RDMAP_WR_ATOMIC_CSWAP:
		/* never sent to a peer that may not know them (RFC 7306 §1.1) */
		if (!(qp->cfg.ext & RDMAP_EXT_RFC7306))
			return -EOPNOTSUPP;
		if (wr->opcode == RDMAP_WR_SEND_IMM) {
			/* RFC 7306 has no Send carrying both data and an
			 * immediate: Immediate Data is a message of its own */
			if (sge_total(wr->sge, wr->num_sge))
				return -EINVAL;
		} else if (wr_is_atomic(wr->opcode)) {
			/* the original value lands in one 8-octet buffer; the
			 * target is a 64-bit aligned word (RFC 7306 §5.2.1) */
			if (wr->num_sge != 1 || wr->sge[0].length != 8 ||
			    (wr->flags & RDMAP_WR_INLINE) || (wr->remote_addr & 7))
				return -EINVAL;
			if (qp->cfg.ord == 0)
				return -EINVAL;
			access = DDP_ACC_LOCAL_WRITE;
		}
		break;
	default:
		return -EINVAL;
	}
	total = sge_total(wr->sge, wr->num_sge);
	if (total > UINT32_MAX)
		return -EINVAL;
	if ((wr->flags & RDMAP_WR_INLINE) && total > qp->cfg.max_inline)
		return -EINVAL;
	if (ahead >= qp->cfg.max_send_wr - qp->sq_count)
		return -ENOMEM;
	if (!(wr->flags & RDMAP_WR_INLINE))
		for (int i = 0; i < wr->num_sge; i++)
			if (sge_check(qp, &wr->sge[i], access))
				return -EPERM;
	return 0;
}

int rdmap_post_send(struct rdmap_qp *qp, const struct rdmap_send_wr *wr)
{
	struct rdmap_swqe *w;
	uint64_t total;
	int ret = rdmap_send_check(qp, wr, 0);

	if (ret)
		return ret;
	total = sge_total(wr->sge, wr->num_sge);
	w = sq_at(qp, qp->sq_head + qp->sq_count);
	w->wr = *wr;
	w->total = total;
	w->state = SWQE_POSTED;
	w->status = RDMAP_WC_SUCCESS;
	w->byte_len = (uint32_t)total;
	if (wr->flags & RDMAP_WR_INLINE) {
		uint64_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(w->inline_data + off, (void *)(uintptr_t)wr->sge[i].addr,
			       wr->sge[i].length);
			off += wr->sge[i].length;
		}
		if (qp->mpa) /* a user-space copy of payload, as MPA's */
			qp->mpa->copies.tx_copied += total;
		w->wr.num_sge = total ? 1 : 0;
		w->wr.sge[0].addr = (uint64_t)(uintptr_t)w->inline_data;
		w->wr.sge[0].length = (uint32_t)total;
		w->wr.sge[0].lkey = 0;
	}
	qp->sq_count++;
	if (qp->state == RDMAP_QPS_ERROR) {
		/* accepted, and flushed at once (as verbs do on a QP in error) */
		w->state = SWQE_DONE;
		w->status = RDMAP_WC_WR_FLUSH_ERR;
		rdmap_sq_complete_ready(qp);
	}
	return 0;
}

int rdmap_post_recv(struct rdmap_qp *qp, const struct rdmap_recv_wr *wr)
{
	struct rdmap_rwqe *r;

	if (wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE)
		return -EINVAL;
	if (!qp->cfg.max_recv_wr || qp->srq)
		return -EINVAL; /* no receive queue of its own */
	if (qp->rq_count == qp->cfg.max_recv_wr)
		return -ENOMEM;
	for (int i = 0; i < wr->num_sge; i++)
		if (sge_check(qp, &wr->sge[i], DDP_ACC_LOCAL_WRITE))
			return -EPERM;
	if (qp->state == RDMAP_QPS_ERROR) {
		struct rdmap_wc wc = {0};

		wc.wr_id = wr->wr_id;
		wc.status = RDMAP_WC_WR_FLUSH_ERR;
		wc.opcode = RDMAP_WC_RECV;
		emit_wc(qp, 1, &wc);
		return 0;
	}
	r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->cfg.max_recv_wr];
	r->wr = *wr;
	r->cap = sge_total(wr->sge, wr->num_sge);
	qp->rq_count++;
	return 0;
}

int rdmap_srq_init(struct rdmap_srq *srq, unsigned max_wr, struct ddp_mem *mem, struct ddp_pd *pd)
{
	memset(srq, 0, sizeof(*srq));
	if (!max_wr)
		return -EINVAL;
	srq->rq = calloc(max_wr, sizeof(*srq->rq));
	if (!srq->rq)
		return -ENOMEM;
	srq->max_wr = max_wr;
	srq->mem = mem;
	srq->pd = pd;
	return 0;
}

void rdmap_srq_destroy(struct rdmap_srq *srq)
{
	free(srq->rq);
	srq->rq = NULL;
	srq->count = 0;
}

int rdmap_srq_post(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr)
{
	struct rdmap_rwqe *r;

	if (wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE)
		return -EINVAL;
	if (srq->count == srq->max_wr)
		return -ENOMEM;
	for (int i = 0; i < wr->num_sge; i++)
		if (wr->sge[i].length &&
		    ddp_stag_check(srq->mem, wr->sge[i].lkey, srq->pd, DDP_ACC_LOCAL_WRITE,
				   wr->sge[i].addr, wr->sge[i].length, NULL) != DDP_STAG_OK)
			return -EPERM;
	r = &srq->rq[(srq->head + srq->count) % srq->max_wr];
	r->wr = *wr;
	r->cap = sge_total(wr->sge, wr->num_sge);
	srq->count++;
	return 0;
}

int rdmap_qp_set_srq(struct rdmap_qp *qp, struct rdmap_srq *srq)
{
	if (qp->state != RDMAP_QPS_IDLE || srq->pd != qp->pd || srq->mem != qp->mem)
		return -EINVAL;
	qp->srq = srq;
	return 0;
}

void rdmap_qp_conn_failed(struct rdmap_qp *qp, int err)
{
	struct rdmap_term t = {0};

	(void)err;
	if (qp->state == RDMAP_QPS_ERROR)
		return;
	if (qp->term_pending) {
		rdmap_qp_progress(qp); /* the TERMINATE our receive path recorded */
		return;
	}
	if (qp->mpa && mpa_conn_term(qp->mpa, &t.layer, &t.etype, &t.ecode)) {
		/* RFC 5040 Figure 10: LLP errors carry no copied headers. */
		qp->term = t;
		qp->term_pending = 1;
		qp->state = RDMAP_QPS_TERMINATE;
		rdmap_qp_progress(qp);
		return;
	}
	rdmap_qp_to_error(qp, NULL, 0);
}

const char *rdmap_qp_state_name(enum rdmap_qp_state s)
{
	static const char *const n[] = {"idle", "rts", "closing", "terminate", "error"};

	return (unsigned)s < 5 ? n[s] : "?";
}
