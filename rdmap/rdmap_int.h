/* SPDX-License-Identifier: MIT */
/* Internal glue between the RDMAP source files. */
#ifndef UIW_RDMAP_INT_H
#define UIW_RDMAP_INT_H

#include "rdmap.h"

/* SWQE_HELD: a local invalidate took effect, its completion waits for a
 * peer's FPDU being placed into the region (rdmap_qp_progress()) */
enum swqe_state { SWQE_POSTED, SWQE_SENDING, SWQE_SENT, SWQE_HELD, SWQE_DONE };

struct rdmap_swqe {
	struct rdmap_send_wr wr;
	uint64_t total;
	enum swqe_state state;
	enum rdmap_wc_status status;
	uint32_t byte_len;
	uint32_t msn;	      /* an atomic's: its QN 1 MSN, sent as its Request Identifier */
	uint8_t *inline_data; /* copy of the payload when RDMAP_WR_INLINE */
	uintptr_t inv_lo, inv_hi; /* SWQE_HELD: the invalidated region */
};

struct rdmap_rwqe {
	struct rdmap_recv_wr wr;
	uint64_t cap;
};

struct rdmap_irqe {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	/* the source, checked again for every segment: the region may be
	 * deregistered or invalidated while the response goes out */
	uint32_t src_stag;
	uint64_t src_to;
	uint64_t sent;
	/* an RFC 7306 Atomic Request (its target in src_stag/src_to): the
	 * operation, executed when it was delivered or, when it had to wait
	 * (rdmap_rx.c: atomic_may_run()), just before its response goes out;
	 * the response carries the identifier and the value found */
	int atomic, executed;
	uint8_t aop;
	uint32_t req_id;
	uint64_t data, data_mask, cmp, cmp_mask;
	uint64_t orig;
};

/* Execute the atomic of @e now if nothing forbids it (1), else 0; -EFAULT
 * when its target is no longer valid (deregistered, invalidated). */
int rdmap_atomic_run(struct rdmap_qp *qp, struct rdmap_irqe *e, int at_head);

/* Requests that take an ORD slot and complete on their response. */
static inline int wr_uses_ord(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_READ || op == RDMAP_WR_ATOMIC_FADD || op == RDMAP_WR_ATOMIC_CSWAP;
}

static inline int wr_is_atomic(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_ATOMIC_FADD || op == RDMAP_WR_ATOMIC_CSWAP;
}

enum tx_kind { TXK_SQ, TXK_RRESP };

/* Tell the layer above about a TERMINATE (struct rdmap_ops, @term). */
static inline void qp_term_ev(struct rdmap_qp *qp, enum rdmap_term_ev ev, const struct rdmap_term *t)
{
	if (qp->ops && qp->ops->term)
		qp->ops->term(qp->arg, ev, t);
}

static inline struct rdmap_swqe *sq_at(struct rdmap_qp *qp, unsigned i)
{
	return &qp->sq[i % qp->cfg.max_send_wr];
}

/* Record a TERMINATE caused by the incoming segment (@hdr of @hdr_len
 * octets, @seg_len = ULPDU length): the QP stops receiving and sends it. */
int rdmap_rx_fail(struct rdmap_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode,
		  const uint8_t *hdr, size_t hdr_len, size_t seg_len);

/* MPA upcall: an FPDU with a cookie was sent. */
void rdmap_tx_done(void *arg, void *cookie);

/* Leave RTS: flush every outstanding work request, tell the consumer. */
void rdmap_qp_to_error(struct rdmap_qp *qp, const struct rdmap_term *t, int received);

/* A local error while building an outgoing message: TERMINATE (local
 * catastrophic, RFC 5040 §7.1 rule 1), then ERROR. */
void rdmap_local_fail(struct rdmap_qp *qp);

/* Deliver completions that are ready at the head of the send queue. */
void rdmap_sq_complete_ready(struct rdmap_qp *qp);

/* Map [off, off+len) of an SGE list onto iovecs; returns count or -errno. */
int rdmap_sge_map(const struct rdmap_sge *sge, int nsge, uint64_t off, uint64_t len,
		  struct iovec *iov, int max);

#endif /* UIW_RDMAP_INT_H */
