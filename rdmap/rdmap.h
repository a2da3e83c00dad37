/* SPDX-License-Identifier: MIT */
/*
 * RDMAP (RFC 5040) over DDP (RFC 5041) over MPA: the queue pair as a sans-I/O
 * state machine.  The QP is bound to a connected struct mpa_conn whose
 * full-operation upcalls it takes over (rdmap_qp_bind()); from then on:
 *
 *  - work requests go in with rdmap_post_send() / rdmap_post_recv();
 *  - rdmap_qp_progress() turns them into FPDUs queued on the MPA connection
 *    (Read Responses and a pending TERMINATE first), as far as MPA's transmit
 *    queue has room; the engine calls it after posting and after every
 *    mpa_tx_advance();
 *  - received FPDUs are placed straight into registered memory through the
 *    MPA lend/ack contract (the rx_begin upcall returns the destination);
 *  - completions come out through ops->complete in the order RFC 5040 §5.5
 *    demands (in posting order per queue).
 *
 * Every error a receiver can detect is answered with a TERMINATE carrying
 * the layer, type and code of RFC 5040 §4.8 and the offending headers; the
 * QP then goes to ERROR and every outstanding work request completes with a
 * flush status.  Nothing here blocks, allocates on the data path, or reads a
 * clock.
 */
#ifndef UIW_RDMAP_H
#define UIW_RDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "ddp.h"
#include "ddp_mem.h"
#include "mpa.h"
#include "rdmap_wire.h"

#define RDMAP_MAX_SGE 6 /* as siw */
#define RDMAP_MAX_INLINE 65536 /* octets of inline data per send WR */

struct rdmap_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum rdmap_wr_opcode {
	RDMAP_WR_WRITE,
	RDMAP_WR_READ,
	RDMAP_WR_SEND,
	RDMAP_WR_SEND_INV,
	RDMAP_WR_LOCAL_INV,
	/* RFC 7306, on a QP with RDMAP_EXT_RFC7306 only (else -EOPNOTSUPP) */
	RDMAP_WR_WRITE_IMM,   /* an RDMA Write, then an Immediate Data message */
	RDMAP_WR_SEND_IMM,    /* an Immediate Data message alone: no payload */
	RDMAP_WR_ATOMIC_FADD, /* FetchAdd of @compare_add; the original into sge[0] */
	RDMAP_WR_ATOMIC_CSWAP /* CmpSwap: @compare_add compared, @swap stored */
};

#define RDMAP_WR_SIGNALED  0x1
#define RDMAP_WR_SOLICITED 0x2
#define RDMAP_WR_FENCE	   0x4
#define RDMAP_WR_INLINE	   0x8

struct rdmap_send_wr {
	uint64_t wr_id;
	enum rdmap_wr_opcode opcode;
	unsigned flags;
	struct rdmap_sge sge[RDMAP_MAX_SGE];
	int num_sge;
	uint64_t remote_addr; /* Write/Read: remote tagged offset */
	uint32_t rkey;	      /* Write/Read: remote STag */
	uint32_t inv_stag;    /* Send with Invalidate: remote STag; local invalidate: local STag */
	/* WRITE_IMM, SEND_IMM: the 32-bit immediate as verbs hold it (network
	 * order in memory): its four octets open the 8 of Immediate Data */
	uint32_t imm_data;
	uint64_t compare_add; /* atomics: FetchAdd's addend, CmpSwap's compare */
	uint64_t swap;	      /* CmpSwap: the value stored on a match */
};

struct rdmap_recv_wr {
	uint64_t wr_id;
	struct rdmap_sge sge[RDMAP_MAX_SGE];
	int num_sge;
};

/* Completion status, with the values of enum ibv_wc_status. */
enum rdmap_wc_status {
	RDMAP_WC_SUCCESS = 0,
	RDMAP_WC_LOC_LEN_ERR = 1,
	RDMAP_WC_LOC_QP_OP_ERR = 2,
	RDMAP_WC_LOC_PROT_ERR = 4,
	RDMAP_WC_WR_FLUSH_ERR = 5,
	RDMAP_WC_REM_INV_REQ_ERR = 9,
	RDMAP_WC_REM_ACCESS_ERR = 10,
	RDMAP_WC_REM_OP_ERR = 11,
	RDMAP_WC_FATAL_ERR = 19,
	RDMAP_WC_GENERAL_ERR = 21
};

enum rdmap_wc_opcode {
	RDMAP_WC_SEND,
	RDMAP_WC_RDMA_WRITE,
	RDMAP_WC_RDMA_READ,
	RDMAP_WC_LOCAL_INV,
	RDMAP_WC_RECV,
	RDMAP_WC_COMP_SWAP,
	RDMAP_WC_FETCH_ADD,
	RDMAP_WC_RECV_RDMA_WITH_IMM /* Immediate Data right after an RDMA Write */
};

#define RDMAP_WC_F_WITH_INV  0x1 /* a Send with Invalidate invalidated @inv_stag */
#define RDMAP_WC_F_SOLICITED 0x2 /* Send with Solicited Event */
#define RDMAP_WC_F_TERM	     0x4 /* @term holds the cause of the failure */
#define RDMAP_WC_F_WITH_IMM  0x8 /* Immediate Data: @imm_data is valid */

/* A TERMINATE's cause (sent or received). */
struct rdmap_term {
	uint8_t layer;
	uint8_t etype;
	uint8_t ecode;
	uint8_t hdrct;	    /* RDMAP_TERM_HDRCT_* */
	uint8_t siw_layout; /* received: the control field came in siw's bit order */
	uint16_t seg_len;
	uint8_t ddp_hdr[DDP_UNTAGGED_HDR_LEN];
	uint8_t ddp_hdr_len;
	uint8_t rdma_hdr[RDMAP_RREQ_LEN];
};

struct rdmap_wc {
	uint64_t wr_id;
	enum rdmap_wc_status status;
	enum rdmap_wc_opcode opcode;
	uint32_t byte_len;
	unsigned flags;
	uint32_t inv_stag;
	uint32_t imm_data; /* RDMAP_WC_F_WITH_IMM: octets 0-3 of the Immediate Data */
	struct rdmap_term term;
};

enum rdmap_qp_state {
	RDMAP_QPS_IDLE = 0,  /* created, not bound to a connection */
	RDMAP_QPS_RTS,	     /* bound, operating */
	RDMAP_QPS_CLOSING,   /* graceful close: no new work, draining */
	RDMAP_QPS_TERMINATE, /* a TERMINATE is being sent */
	RDMAP_QPS_ERROR	     /* everything flushed */
};

enum rdmap_term_ev {
	RDMAP_TERM_EV_SENT,
	RDMAP_TERM_EV_RECEIVED,
	RDMAP_TERM_EV_ABANDONED,
};

struct rdmap_ops {
	/* A work completion; @recv tells the receive queue from the send queue. */
	void (*complete)(void *arg, int recv, const struct rdmap_wc *wc);
	/* The QP left RTS: @t is the TERMINATE received from the peer, or the one
	 * sent, or NULL for a local move to error. */
	void (*error)(void *arg, const struct rdmap_term *t, int received);
	/* A TERMINATE was queued for sending, arrived from the peer, or could
	 * not be queued (the connection must then be reset: the way out that
	 * cannot be blocked).  Reported once each, before the move to error. */
	void (*term)(void *arg, enum rdmap_term_ev ev, const struct rdmap_term *t);
};

struct rdmap_qp_cfg {
	unsigned max_send_wr; /* 0: no send queue (posting is refused) */
	unsigned max_recv_wr; /* 0: no receive queue (an inbound Send is "no buffer") */
	unsigned max_inline; /* octets of inline data per send WR */
	uint16_t ird;	     /* inbound Read and Atomic Requests served at once */
	uint16_t ord;	     /* outbound Read and Atomic Requests outstanding at once */
	unsigned ext;	     /* RDMAP_EXT_*: protocol extensions the stream uses */
};

/*
 * RFC 7306 (atomics, Immediate Data) has no negotiation on the wire (its
 * §1.1 leaves it to the ULP): a QP uses it only when the layer above knows
 * the peer does too.  Without it, the extension opcodes are refused on post
 * (-EOPNOTSUPP) and answered on receipt as RFC 7306 §1.1 says a peer
 * without them does (RDMAP / Remote Operation / Unexpected OpCode).
 */
#define RDMAP_EXT_RFC7306 0x1

struct rdmap_swqe;
struct rdmap_rwqe;

/* A shared receive queue: QPs that use it take one receive per incoming
 * Send message, in posting order, when the message starts. */
struct rdmap_srq {
	struct ddp_mem *mem;
	struct ddp_pd *pd;
	struct rdmap_rwqe *rq;
	unsigned max_wr, head, count;
	/* optional: called (1, then 0) around a QP's look at and take from
	 * the queue, when QPs of several threads share it; rdmap_srq_post()
	 * is the caller's to serialise with it */
	void (*lock)(void *arg, int lock);
	void *lock_arg;
};
struct rdmap_irqe;

/* Transmit of one message, segment by segment. */
struct rdmap_tx_msg {
	int active;
	int kind; /* internal: SQ WQE, Read Response, TERMINATE */
	struct rdmap_swqe *wqe;
	struct rdmap_irqe *irqe;
	uint64_t total;
	uint64_t sent;
	uint32_t msn;
	int imm_phase; /* a Write with Immediate: the Write is out, its Immediate Data is next */
};

/* Receive of the current message on one untagged queue. */
struct rdmap_rx_queue {
	uint32_t expect_msn; /* next new message */
	int active;	     /* a message is being placed */
	uint32_t msn;
	uint64_t placed;
	uint8_t opcode;
};

struct rdmap_qp {
	enum rdmap_qp_state state;
	struct rdmap_qp_cfg cfg;
	const struct rdmap_ops *ops;
	void *arg;
	struct mpa_conn *mpa;
	struct ddp_mem *mem;
	struct ddp_pd *pd;

	/* send queue: [sq_head, sq_head + sq_count) posted and not completed;
	 * sq_next: next one to start transmitting */
	struct rdmap_swqe *sq;
	uint8_t *inline_buf;
	unsigned sq_head, sq_count, sq_next;
	unsigned inv_held; /* send queue entries in SWQE_HELD */
	/* outstanding Read Requests we sent, in order (indices into sq) */
	unsigned *orq;
	unsigned orq_head, orq_count;
	/* receive queue, or a shared one: the receive taken from it for the
	 * Send message in progress is held in srq_cur */
	struct rdmap_rwqe *rq;
	unsigned rq_head, rq_count;
	struct rdmap_srq *srq;
	struct rdmap_rwqe *srq_cur;
	int srq_cur_valid;
	int rx_wqe_status; /* a Send failed in the head receive: its status */
	/* inbound Read Requests to answer, in order */
	struct rdmap_irqe *irq;
	unsigned irq_head, irq_count;

	uint32_t tx_msn[DDP_NQUEUES]; /* next MSN per untagged queue */
	struct rdmap_tx_msg tx;
	struct rdmap_rx_queue rxq[DDP_NQUEUES];
	/* the segment being received */
	struct ddp_hdr rx_hdr;
	uint8_t rx_hdr_raw[DDP_UNTAGGED_HDR_LEN + RDMAP_HDR_EXTRA_MAX];
	size_t rx_hdr_len;
	size_t rx_ulpdu_len;
	uint8_t rx_term_buf[RDMAP_TERM_MAX];
	uint64_t rx_rresp_placed; /* Read Response octets placed for the ORQ head */
	int rtr_rresp_pending;	  /* p2p initiator: the Read RTR's zero-length response is due */
	/* RFC 7306 §6: Immediate Data right after a complete RDMA Write
	 * completes as RECV_RDMA_WITH_IMM with the Write's length */
	int rx_last_write;     /* the last message received was an RDMA Write */
	uint64_t rx_write_len; /* its octets (or so far, while it arrives) */

	/* TERMINATE: to send (error detected here) or received */
	int term_pending;
	int term_sent;
	struct rdmap_term term;
	uint8_t term_wire[RDMAP_TERM_MAX];
	int term_received;
	struct rdmap_term peer_term;

	/*
	 * Memory lifetime.  @io_busy: the engine has kernel I/O in flight that
	 * may read or write WR or MR memory (a send of queued FPDUs, a read
	 * lent into a destination); set with rdmap_qp_set_io_busy().  While it
	 * is set, the move to ERROR does not flush (the work requests' memory
	 * would be the application's again while the kernel still uses it) and
	 * a TERMINATE is not queued (queued FPDUs cannot be dropped under a
	 * send): @flush_pending says the flush waits, and the engine cancels
	 * its I/O.
	 */
	int io_busy;
	int flush_pending;
	int term_abandoned; /* the TERMINATE could not be queued: reset TCP */
	struct rdmap_term err_cause; /* what moved the QP to ERROR (err_has_cause) */
	int err_has_cause, err_received;

	/* statistics */
	uint64_t tx_fpdus, rx_fpdus;
};

/** rdmap_qp_init() - create a QP in @pd; queues sized from @cfg.  Returns 0,
 * -EINVAL, -ENOMEM. */
int rdmap_qp_init(struct rdmap_qp *qp, const struct rdmap_qp_cfg *cfg, struct ddp_mem *mem,
		  struct ddp_pd *pd, const struct rdmap_ops *ops, void *arg);
void rdmap_qp_destroy(struct rdmap_qp *qp);

/**
 * rdmap_qp_bind() - attach to @c (in full operation): the QP takes over its
 * full-operation upcalls and moves to RTS.  ORD is lowered to the peer's
 * IRD when MPA negotiated one.  Returns 0; -EINVAL (not in full operation,
 * rx_hdr_min not 14, or the QP's IRD below the IRD MPA announced); or
 * -ECONNABORTED when MPA failed right after entering full operation with a
 * TERMINATE to send (RFC 6581 codes 6 and 7): the QP then sends it and goes
 * to ERROR.
 */
int rdmap_qp_bind(struct rdmap_qp *qp, struct mpa_conn *c);

/** The MPA upcalls a bound QP uses (exposed for engines that wrap them). */
extern const struct mpa_ops rdmap_mpa_ops;

/**
 * rdmap_post_send() - validate and queue @wr.  Returns 0, -EINVAL (bad
 * opcode, SGE count, Read with more than one SGE, inline too long, no send
 * queue; an atomic whose one SGE is not 8 octets or whose remote address is
 * not 8-aligned; a Send with Immediate with payload), -EOPNOTSUPP (an RFC
 * 7306 opcode on a QP without RDMAP_EXT_RFC7306), -ENOMEM
 * (send queue full), -EPIPE (QP closing or not yet bound is fine: work waits
 * for rdmap_qp_bind()), or -EPERM for an SGE whose lkey is not valid for local
 * use in this PD (as ibv_post_send reports errors synchronously).  On a QP in
 * ERROR the request is accepted and completes with a flush status.
 */
int rdmap_post_send(struct rdmap_qp *qp, const struct rdmap_send_wr *wr);

/**
 * rdmap_send_check() - what rdmap_post_send() would answer for @wr if
 * @ahead requests were queued before it, without queuing anything: 0 or
 * the same -errno (-ENOMEM when fewer than @ahead + 1 slots are free).  A
 * chain checked this way, then posted under the same lock, is queued
 * whole or not at all (ibv_wr_complete()).
 */
int rdmap_send_check(struct rdmap_qp *qp, const struct rdmap_send_wr *wr, unsigned ahead);

/** rdmap_post_recv() - as rdmap_post_send() for the receive queue (-EINVAL
 * too when the QP has none: max_recv_wr 0, or receives from an SRQ). */
int rdmap_post_recv(struct rdmap_qp *qp, const struct rdmap_recv_wr *wr);

/** rdmap_srq_init() - a shared receive queue of @max_wr receives in @pd.
 * Returns 0, -EINVAL, -ENOMEM. */
int rdmap_srq_init(struct rdmap_srq *srq, unsigned max_wr, struct ddp_mem *mem, struct ddp_pd *pd);
void rdmap_srq_destroy(struct rdmap_srq *srq);

/** rdmap_srq_post() - queue a receive: 0, -EINVAL, -ENOMEM (full), -EPERM (bad lkey). */
int rdmap_srq_post(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr);

/** rdmap_qp_set_srq() - @qp (not yet bound, same PD) takes receives from @srq.
 * Returns 0, -EINVAL. */
int rdmap_qp_set_srq(struct rdmap_qp *qp, struct rdmap_srq *srq);

/**
 * rdmap_qp_progress() - queue as many FPDUs on the MPA connection as fit.
 * Returns the number queued, or -errno.
 */
int rdmap_qp_progress(struct rdmap_qp *qp);

/**
 * rdmap_qp_conn_failed() - the connection failed underneath (MPA receive
 * error, TCP reset or close): send the MPA layer's TERMINATE if MPA
 * recorded one, else go straight to ERROR.  @err is the engine's -errno.
 */
void rdmap_qp_conn_failed(struct rdmap_qp *qp, int err);

/**
 * rdmap_qp_close() - graceful close (RFC 5040 §6.2): no new work is taken
 * (posting returns -EPIPE), what is queued is still sent.  Returns 1 when the
 * send side has drained (nothing queued, no Read outstanding either way), so
 * the engine may close TCP; call again after progress until it does.  The
 * final move to ERROR, flushing the receive queue, comes with
 * rdmap_qp_conn_failed() when TCP closes.
 */
int rdmap_qp_close(struct rdmap_qp *qp);

/** rdmap_qp_modify_error() - the application moves the QP to ERROR (also
 * from TERMINATE: the flush does not wait for the TERMINATE to be queued). */
void rdmap_qp_modify_error(struct rdmap_qp *qp);

/**
 * rdmap_qp_set_io_busy() - the engine says whether kernel I/O that may use
 * WR or MR memory is in flight on the QP's connection.  Going idle performs
 * a flush that waited for it (see struct rdmap_qp, @io_busy).  Sans-I/O
 * users never set it: then the move to ERROR flushes at once.
 */
void rdmap_qp_set_io_busy(struct rdmap_qp *qp, int busy);

/**
 * rdmap_qp_mem_refs() - 1 when the QP's stream still references memory in
 * [@lo, @hi): the rest of the FPDU being received lands there, or an FPDU
 * queued for transmit reads from there.  Work requests and inbound Read
 * Requests are not counted: their memory is checked again (STag, bounds)
 * for every segment.
 */
int rdmap_qp_mem_refs(struct rdmap_qp *qp, uintptr_t lo, uintptr_t hi);

/**
 * rdmap_qp_mem_revoke() - [@lo, @hi) is being released (deregistration,
 * invalidation) while the stream still references it (rdmap_qp_mem_refs()):
 * the QP fails as a real RNIC's would when a segment's memory goes away.
 * An FPDU being placed there gets the TERMINATE of an invalid STag (a Write
 * or Read Response) or of a local catastrophic error (a Send's receive
 * buffer, which completes with LOC_PROT_ERR); an FPDU queued for transmit
 * from there makes a local catastrophic error (RFC 5040 §7.1 rule 1).  The
 * receive stream stops at once; the transmit queue is dropped when the
 * TERMINATE is queued (after the engine's I/O ended).  Returns 1 when the
 * QP referenced the range, 0 otherwise (nothing done).
 */
int rdmap_qp_mem_revoke(struct rdmap_qp *qp, uintptr_t lo, uintptr_t hi);

/**
 * rdmap_term_encode() - the Terminate header for @t into @buf; returns its
 * length.  RFC bit order (siw sends its own, see rdmap_term_decode()).
 */
size_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf);

/**
 * rdmap_term_decode() - parse a received Terminate header (@len octets).
 * Recognises siw's bit order (Layer in the low nibble, HdrCt in the low bits
 * of octet 2) and says so in @t->siw_layout.  Returns 0 or -EBADMSG.
 */
int rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t);

/**
 * rdmap_atomic_apply() - execute RFC 7306 atomic operation @aop
 * (RDMAP_AOP_FETCHADD or _CMPSWAP, with the Atomic Request's data, masks and
 * compare value) on the aligned word at @p, atomically (rdmap_atomic.c);
 * returns the word's value before it.  rdmap_masked_add() is FetchAdd's
 * arithmetic alone (§5.1.1: each set bit of @mask ends a field).
 */
uint64_t rdmap_atomic_apply(uint64_t *p, unsigned aop, uint64_t data, uint64_t data_mask,
			    uint64_t cmp, uint64_t cmp_mask);
uint64_t rdmap_masked_add(uint64_t orig, uint64_t add, uint64_t mask);

/** rdmap_term_name() - the description of the TERMINATE triple (static). */
const char *rdmap_term_name(uint8_t layer, uint8_t etype, uint8_t ecode);

const char *rdmap_qp_state_name(enum rdmap_qp_state s);

#endif /* UIW_RDMAP_H */
