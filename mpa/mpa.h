/* SPDX-License-Identifier: MIT */
/*
 * MPA (RFC 5044, with RFC 6581 enhanced connection setup): the connection
 * setup frames and the FPDU framing of full operation, as a sans-I/O state
 * machine.  No sockets, clocks or threads here: the engine moves bytes and
 * passes the time in.
 *
 * Receive, two ways into the same state machine:
 *  - mpa_rx(): fed byte runs of any size, copies each byte once into its
 *    destination (handshake scratch, header scratch, or the payload
 *    destination the layer above lends);
 *  - mpa_rx_lend() / mpa_rx_ack(): the engine asks where the next bytes go,
 *    reads them from the socket straight there (readv), and acks the count.
 *    Payload lands directly in the memory the layer above chose; marker
 *    octets are routed to scratch.  The lend never reaches past the current
 *    FPDU except for the next FPDU's first 2 + rx_hdr_min octets, which every
 *    valid FPDU holds.
 *
 * The layer above sees an FPDU in three upcalls: rx_hdr_len (how much header
 * it needs), rx_begin (header complete: where does the payload go?) and
 * rx_end (whole FPDU received, CRC verified).  Payload may be placed before
 * the CRC is checked, as siw and hardware RNICs do; the layer above must
 * defer every effect other than placement into a destination it validated
 * (completions, invalidation, replies) to rx_end.  A CRC or framing error
 * never reaches rx_end and stops the connection.
 *
 * Transmit is pulled: mpa_tx_fpdu() queues an FPDU made of a small header
 * (copied) and payload iovecs (referenced, never copied), the engine gathers
 * mpa_tx_pending() iovecs into one sendmsg and reports progress with
 * mpa_tx_advance(); the tx_done upcall returns each FPDU's cookie once all of
 * its octets went to TCP.
 *
 * Errors: functions return 0, a byte count, or -errno.  An MPA-level
 * protocol failure puts the connection in MPA_S_ERROR and records the
 * TERMINATE triple (layer LLP, etype 0, ecode MPA_ECODE_*) for the layer
 * above to send (mpa_conn_term()); nothing further is delivered.
 */
#ifndef UIW_MPA_H
#define UIW_MPA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mpa_wire.h"

enum mpa_role { MPA_ROLE_INITIATOR = 0, MPA_ROLE_RESPONDER = 1 };

/* RFC 6581 ready-to-receive message kinds (bit mask for offers). */
enum mpa_rtr {
	MPA_RTR_NONE = 0,
	MPA_RTR_SEND = 1,  /* zero-length Send (B) */
	MPA_RTR_WRITE = 2, /* zero-length RDMA Write (C) */
	MPA_RTR_READ = 4,  /* zero-length RDMA Read (D) */
	MPA_RTR_ALL = 7
};

/**
 * struct mpa_rr - an MPA Request or Reply frame, decoded or to be built.
 * @reply:      1 for "MPA ID Rep Frame", 0 for "MPA ID Req Frame"
 * @markers:    M bit
 * @crc:        C bit
 * @reject:     R bit (meaningful in a Reply only)
 * @rev:        revision (1 or 2)
 * @enhanced:   RFC 6581 S bit with revision 2: the private data starts
 *              with the IRD/ORD words (ignored on receive with revision 1)
 * @p2p:        enhanced: peer-to-peer mode (A)
 * @rtr:        enhanced, p2p: RTR bits (enum mpa_rtr): the kinds the
 *              initiator can send (Request) or the responder accepts (Reply)
 * @ird, @ord:  enhanced: 14-bit IRD and ORD
 * @pd_len:     PD_Length on the wire (includes the IRD/ORD words)
 * @ulp_pd:     the ULP's private data (after the IRD/ORD words)
 * @ulp_pd_len: its length
 */
struct mpa_rr {
	int reply;
	int markers;
	int crc;
	int reject;
	uint8_t rev;
	int enhanced;
	int p2p;
	unsigned rtr;
	uint16_t ird;
	uint16_t ord;
	uint16_t pd_len;
	const uint8_t *ulp_pd;
	uint16_t ulp_pd_len;
};

/**
 * mpa_rr_parse() - decode a Request (@want_reply 0) or Reply (1) frame at
 * the start of @buf.  Never reads past the frame: the bytes after it are
 * the caller's.  @pd_max caps PD_Length (0 means the RFC's 512).
 * Returns the frame length, or
 *  -EAGAIN          @len holds less than the whole frame (nothing decoded)
 *  -EBADMSG         wrong key (a Reply where a Request was due, or garbage)
 *  -EPROTONOSUPPORT revision other than 1 or 2
 *  -EMSGSIZE        PD_Length above @pd_max (or above 512)
 *  -EPROTO          enhanced (S=1, Rev 2) with fewer than 4 private-data octets
 * @rr->ulp_pd points into @buf.
 */
ssize_t mpa_rr_parse(const uint8_t *buf, size_t len, int want_reply, uint16_t pd_max,
		     struct mpa_rr *rr);

/**
 * mpa_rr_build() - encode @rr into @buf (capacity @cap).  @enhanced (with
 * revision 2 only) sets S and adds the IRD/ORD words.  Returns the frame
 * length, -EINVAL for a bad revision, enhanced with revision 1, RTR bits
 * without p2p, or an IRD/ORD above 0x3FFF, -EMSGSIZE
 * if the private data would exceed 512 octets, -ENOBUFS if @cap is short.
 */
ssize_t mpa_rr_build(uint8_t *buf, size_t cap, const struct mpa_rr *rr);

/**
 * mpa_rtr_encode() - the ULPDU (DDP and RDMAP headers) of an RFC 6581 RTR
 * message of kind @rtr (exactly one bit) into @buf (at least 46 octets):
 * zero-length Write to STag 1 (14 octets), zero-length Read Request with
 * STag 1 source and sink, QN 1 MSN 1 (46 octets), or zero-length Send on
 * QN 0 MSN 1 (18 octets).  Returns the length or -EINVAL.
 */
ssize_t mpa_rtr_encode(unsigned rtr, uint8_t *buf, size_t cap);

/**
 * mpa_rtr_match() - 1 if the ULPDU header @hdr (@hdr_len octets of a
 * @ulpdu_len octet ULPDU) is an RTR of kind @rtr, else 0.
 */
int mpa_rtr_match(unsigned rtr, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len);

/**
 * mpa_mulpdu() - RFC 5044 §4.5: the largest ULPDU that fits one segment of
 * @emss octets, with or without markers; never below 128 nor above 64768
 * (RFC 5044 §3).
 */
uint32_t mpa_mulpdu(uint32_t emss, int markers);

/* Largest ULPDU header the layer above may ask MPA to collect. */
#define MPA_RX_HDR_MAX 72 /* RDMAP's largest: an RFC 7306 Atomic Request, 18 + 52 */
/* Largest header (beyond ULPDU_Length) a queued FPDU may carry. */
#define MPA_TX_HDR_MAX 96
/* Markers one mpa_rx_lend() may cover. */
#define MPA_RX_MK_SLOTS 16
/* Most payload destination iovecs the layer above may lend per FPDU. */
#define MPA_RX_DST_MAX 8

/* Flags passed to rx_begin/rx_end. */
#define MPA_RX_F_RTR 0x1 /* this FPDU is the peer's RFC 6581 RTR */

struct mpa_ops {
	/* Responder: a valid Request arrived.  Answer with mpa_conn_accept()
	 * or mpa_conn_reject(), from the upcall or later. */
	void (*request)(void *arg, const struct mpa_rr *req);
	/* Initiator: a valid Reply arrived.  If it rejects, the connection is
	 * in MPA_S_REJECTED; otherwise in full operation (and the RTR, in
	 * peer-to-peer mode, is already queued). */
	void (*reply)(void *arg, const struct mpa_rr *rep);
	/* Optional: total ULPDU header length given the first @have octets
	 * (rx_hdr_min of them).  Return @have..MPA_RX_HDR_MAX, or -errno
	 * (the layer above records its own TERMINATE). */
	int (*rx_hdr_len)(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len);
	/* Header complete: fill @dst (at most MPA_RX_DST_MAX) with the
	 * destination of the @ulpdu_len - @hdr_len payload octets, exactly
	 * covering them; set *@ndst.  Return 0 or -errno. */
	int (*rx_begin)(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
			unsigned flags, struct iovec *dst, int *ndst);
	/* The FPDU is complete and valid (CRC, markers).  Return 0 or -errno. */
	int (*rx_end)(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		      unsigned flags);
	/* Every octet of the FPDU queued with @cookie went to TCP. */
	void (*tx_done)(void *arg, void *cookie);
};

/**
 * struct mpa_cfg - connection parameters (mpa_cfg_init() sets defaults).
 * @role:         initiator or responder
 * @rev:          initiator: revision to request (1 or 2); default 2
 * @crc:          C bit; default 1 (RFC 5044 §4.4: "The default configuration
 *                for a connection MUST be to use CRCs")
 * @markers:      M bit: require markers in FPDUs sent to us; default 0
 * @accept_markers: honour a peer's M bit (RFC 5044 §4.3 says all senders
 *                MUST be able to); 0 refuses such peers as siw does; default 1
 * @p2p:          initiator: request peer-to-peer mode (revision 2)
 * @rtr:          RTR kinds offered (initiator) or acceptable (responder);
 *                default MPA_RTR_ALL
 * @ird, @ord:    IRD and ORD announced in revision 2; default 16, 16
 * @strict_ird:   initiator: fail (MPA_ECODE_INSUFFICIENT_IRD) when the
 *                responder's IRD is below our ORD instead of lowering ORD
 *                (RFC 6581 §9.1 allows lowering; siw's "relaxed" mode)
 * @pd_max:       cap on PD_Length sent and accepted, 0..512 (siw: 256);
 *                default 512
 * @emss:         TCP effective MSS, for the transmit MULPDU; default 1460
 * @tx_ulpdu_max: cap on transmitted ULPDUs (0: derived from @emss); at most
 *                64768 (RFC 5044 §3)
 * @rx_ulpdu_max: largest ULPDU accepted; default 65535
 * @rx_hdr_min:   ULPDU header octets collected before rx_hdr_len (DDP: 14);
 *                a shorter ULPDU is a framing error
 * @tx_depth:     FPDUs that can be queued for transmit; default 32; 0: sized
 *                on entering full operation for about 512 KiB (8..128)
 * @tx_max_sge:   payload iovecs per FPDU; default 8
 * @timeout_ns:   handshake timeout (Request, Reply, and the RTR); default 10 s
 */
struct mpa_cfg {
	enum mpa_role role;
	uint8_t rev;
	int crc;
	int markers;
	int accept_markers;
	int p2p;
	unsigned rtr;
	uint16_t ird;
	uint16_t ord;
	int strict_ird;
	uint16_t pd_max;
	uint32_t emss;
	uint32_t tx_ulpdu_max;
	uint32_t rx_ulpdu_max;
	uint16_t rx_hdr_min;
	unsigned tx_depth;
	unsigned tx_max_sge;
	uint64_t timeout_ns;
};

enum mpa_state {
	MPA_S_IDLE = 0, /* not started */
	MPA_S_REQ_WAIT, /* responder: waiting for the Request */
	MPA_S_REQ_RCVD, /* responder: Request delivered, ULP to accept or reject */
	MPA_S_REP_WAIT, /* initiator: Request queued, waiting for the Reply */
	MPA_S_FULL,	/* full operation */
	MPA_S_REJECTED, /* a Reject was sent or received: MPA has exited */
	MPA_S_ERROR	/* failed: nothing more is delivered */
};

/* Receive parts of full operation (internal, exposed for the state copy). */
enum mpa_rx_part { MPA_RXP_HEAD, MPA_RXP_HREST, MPA_RXP_PAYLOAD, MPA_RXP_TRAILER };

/* The receive cursor; kept apart so that mpa_rx_lend() can walk a copy. */
struct mpa_rx_state {
	uint64_t pos;	      /* octets of full operation received (markers included) */
	uint64_t next_marker; /* stream position of the next marker */
	uint64_t len_pos;     /* position of the current FPDU's ULPDU_Length */
	enum mpa_rx_part part;
	size_t off;  /* octets of the current part received */
	size_t need; /* size of the current part */
	uint16_t ulpdu_len;
	uint16_t hdr_len;
	uint8_t pad;
	uint8_t mk_have;      /* octets of the current marker received */
	uint8_t fpdu_started; /* an octet of the current FPDU proper was received */
	uint8_t marker_bad;
	uint8_t flags;	 /* MPA_RX_F_* of the current FPDU */
	uint8_t hdr_idx; /* which rx_hdr buffer the current FPDU uses */
	uint8_t ndst;
	uint8_t dst_idx;
	size_t dst_off;
	struct iovec dst[MPA_RX_DST_MAX];
};

struct mpa_tx_slot;

/*
 * Payload octets (ULPDU octets after the layer above's header) by how they
 * moved in user space: received straight into their destination by the
 * reader (lent) or copied there by MPA (mpa_rx(), a look-ahead); queued for
 * transmit, and of those copied by MPA (markers on: an FPDU made flat).
 * The benchmark's "copies per octet" are copied / total on each side.
 */
struct mpa_copy_stats {
	uint64_t rx_direct;
	uint64_t rx_copied;
	uint64_t tx_queued;
	uint64_t tx_copied;
};

struct mpa_conn {
	struct mpa_cfg cfg;
	const struct mpa_ops *ops;
	void *arg;
	enum mpa_state state;
	int err; /* -errno once in MPA_S_ERROR */

	/* negotiated */
	uint8_t rev;
	int enhanced; /* RFC 6581 S: IRD/ORD words exchanged */
	int crc_on;
	int tx_markers;
	int rx_markers;
	int p2p;
	unsigned rtr; /* peer-to-peer: initiator: the RTR kind sent;
			 responder: the kinds advertised (and accepted) */
	uint16_t peer_ird;
	uint16_t peer_ord;
	uint16_t ird; /* our announced IRD and ORD (ORD lowered to the peer's IRD) */
	uint16_t ord;
	uint32_t tx_mulpdu;

	/* TERMINATE triple of an MPA-level failure (0 when none). */
	uint8_t term_layer;
	uint8_t term_etype;
	uint8_t term_ecode;

	uint64_t deadline; /* UINT64_MAX: none */

	/* handshake frames */
	uint8_t hs_rx[MPA_RR_HDR_LEN + MPA_PD_MAX];
	size_t hs_rx_have;
	size_t hs_rx_need;
	uint8_t hs_tx[MPA_RR_HDR_LEN + MPA_PD_MAX];
	size_t hs_tx_len;
	size_t hs_tx_off;

	/* full-operation receive */
	struct mpa_rx_state rx;
	uint32_t rx_crc;
	/* octets still to be added to rx_crc: consecutive runs that are
	 * adjacent in memory (a look-ahead: markers and payload together)
	 * go to the CRC in one call; flushed before the CRC is compared and
	 * when mpa_rx()/mpa_rx_ack() return */
	const uint8_t *rx_crc_p;
	size_t rx_crc_n;
	/* A lend may reach into the next FPDU's header while the current one
	 * is still needed, and over several markers: hence two header buffers
	 * and a ring of marker buffers. */
	uint8_t rx_hdr[2][MPA_HDR_LEN + MPA_RX_HDR_MAX];
	uint8_t rx_tail[8];
	uint8_t rx_mk[MPA_RX_MK_SLOTS][MPA_MARKER_LEN];
	uint64_t rx_fpdus;
	size_t rx_lent; /* octets of the last mpa_rx_lend() not yet acked */
	const uint8_t *rx_ahead; /* the look-ahead of the last lend, or NULL */
	size_t rx_ahead_lent;
	/* received ULPDU_Length, a moving average (weight 1/4: a dozen FPDUs
	 * turn it): how large the peer's FPDUs are, for a reader choosing its
	 * look-ahead */
	uint32_t rx_ulpdu_avg;
	struct mpa_copy_stats copies;

	/* full-operation transmit */
	struct mpa_tx_slot *tx_slots;
	struct iovec *tx_iov_pool;
	uint8_t *tx_mk_pool;
	uint8_t *tx_bounce; /* copy of a partly sent FPDU kept by mpa_tx_discard() */
	unsigned tx_iov_per_slot;
	unsigned tx_mk_per_slot;
	size_t tx_flat_cap; /* markers on: the largest FPDU on the wire */
	unsigned tx_head;  /* oldest queued slot */
	unsigned tx_count; /* queued slots */
	size_t tx_off;	   /* octets of the oldest slot already sent */
	size_t tx_lent;	   /* FPDU octets the last mpa_tx_pending() handed out, not yet advanced */
	uint64_t tx_pos;   /* full-operation octets queued (markers included) */
	uint64_t tx_next_marker;
	size_t tx_queued_bytes; /* octets in queued FPDUs not yet sent */
	uint64_t tx_fpdus_queued;
};

/** mpa_cfg_init() - defaults for @role (see struct mpa_cfg). */
void mpa_cfg_init(struct mpa_cfg *cfg, enum mpa_role role);

/**
 * mpa_conn_init() - prepare @c.  Returns 0 or -EINVAL for an inconsistent
 * @cfg (revision not 1/2, peer-to-peer with revision 1, pd_max > 512,
 * rx_hdr_min > MPA_RX_HDR_MAX, IRD/ORD above 0x3FFF, tx_depth 0).
 */
int mpa_conn_init(struct mpa_conn *c, const struct mpa_cfg *cfg, const struct mpa_ops *ops,
		  void *arg);

/**
 * mpa_conn_set_ops() - rebind the upcalls, e.g. when the consumer "binds DDP
 * to MPA" (RFC 5044 §7.1) on entering full operation.
 */
void mpa_conn_set_ops(struct mpa_conn *c, const struct mpa_ops *ops, void *arg);

/** mpa_conn_destroy() - free what the connection allocated. */
void mpa_conn_destroy(struct mpa_conn *c);

/**
 * mpa_conn_start() - initiator: queue the Request with @pd (the ULP's
 * private data); responder: start waiting for the Request (@pd unused).
 * @now starts the handshake timeout.  Returns 0, -EMSGSIZE if @pd does not
 * fit pd_max, -EINVAL if not idle.
 */
int mpa_conn_start(struct mpa_conn *c, const void *pd, size_t pd_len, uint64_t now);

/**
 * mpa_conn_accept() - responder: answer the Request with an accepting Reply
 * carrying @pd, and enter full operation.  @now (the caller's clock, as
 * passed to mpa_conn_timeout()) starts the wait for a peer-to-peer RTR; an
 * accept from inside the request upcall must pass the same clock.  @ird and @ord are announced in a
 * revision-2 Reply (ORD at most the peer's IRD).  Peer-to-peer with @ird 0:
 * a Read RTR is no longer accepted when another kind is, else the IRD
 * announced is 1 (the RTR's slot).  Returns 0, -EINVAL if no Request is
 * pending, -EMSGSIZE, -ENOMEM.
 */
int mpa_conn_accept(struct mpa_conn *c, const void *pd, size_t pd_len, uint16_t ird, uint16_t ord,
		    uint64_t now);

/**
 * mpa_conn_reject() - responder: answer with a Reply with R=1 carrying @pd;
 * MPA then exits (RFC 5044 §7.1.2 rule 2), leaving TCP to the ULP once the
 * frame is sent.  Returns 0, -EINVAL, -EMSGSIZE.
 */
int mpa_conn_reject(struct mpa_conn *c, const void *pd, size_t pd_len);

/**
 * mpa_conn_next_timeout() - absolute deadline (in the caller's clock) at
 * which mpa_conn_timeout() must be called, or UINT64_MAX for none.
 */
uint64_t mpa_conn_next_timeout(const struct mpa_conn *c);

/**
 * mpa_conn_timeout() - check the deadline against @now.  Returns 0 if
 * nothing expired, or -ETIMEDOUT (connection now in MPA_S_ERROR).
 */
int mpa_conn_timeout(struct mpa_conn *c, uint64_t now);

/**
 * mpa_conn_term() - the TERMINATE triple of the MPA-level failure, if any.
 * Returns 1 and fills the triple, or 0 when MPA recorded none.
 */
int mpa_conn_term(const struct mpa_conn *c, uint8_t *layer, uint8_t *etype, uint8_t *ecode);

/** mpa_state_name() - printable state name. */
const char *mpa_state_name(enum mpa_state s);

/** mpa_ecode_name() - printable name of an MPA TERMINATE error code. */
const char *mpa_ecode_name(uint8_t ecode);

/**
 * mpa_rx() - feed @len octets received from TCP.  Returns octets consumed:
 * fewer than @len when MPA stops taking bytes (a Reject was exchanged: MPA
 * has exited and the rest belongs to whoever reads next).  Octets after a
 * Request that the ULP has not answered yet are early data from the
 * initiator (RFC 5044 §7.1.2): they fail the connection with
 * MPA_ECODE_INVALID_RR, so an engine must not read past the Request before
 * it accepts (mpa_rx_lend() lends nothing in that state).
 * Returns -errno on failure: -EPROTO protocol error with the TERMINATE triple
 * recorded, or the layer above's error (the connection is then in
 * MPA_S_ERROR); -ECONNREFUSED when a responder refuses a Request by policy
 * (markers with accept_markers 0): the connection is then in MPA_S_REJECTED
 * with the Reject Reply queued for sending.
 */
ssize_t mpa_rx(struct mpa_conn *c, const uint8_t *in, size_t len);

/**
 * mpa_rx_lend() - where the next received octets must go, as up to @max
 * iovecs, in order.  Returns the count, 0 if MPA takes no bytes now, or the
 * error.  Valid until the next receive-side call into @c (mpa_rx,
 * mpa_rx_lend, mpa_rx_ack, accept/reject); transmit calls may come in
 * between while a read into the lend is in flight.
 */
int mpa_rx_lend(struct mpa_conn *c, struct iovec *iov, int max);

/**
 * mpa_rx_lend_ahead() - mpa_rx_lend(), and in full operation @ahead
 * (@ahead_len octets, the caller's scratch) appended as the last iovec: a
 * read into the lend then needs not stop where the next destination
 * depends on octets not received yet (the next FPDU's header).  The
 * octets a read puts into @ahead go through the copying deframer when
 * acked (a small FPDU whole, the rest of a header, the first octets of the
 * next payload), so one read per message takes a large payload straight
 * into its destination and copies only what followed it.  @ahead must stay
 * valid until the ack.  Returns as mpa_rx_lend().
 */
int mpa_rx_lend_ahead(struct mpa_conn *c, struct iovec *iov, int max, uint8_t *ahead,
		      size_t ahead_len);

/**
 * mpa_rx_ack() - @n octets were written into the iovecs of the last
 * mpa_rx_lend() or mpa_rx_lend_ahead(), in order.  Octets in the
 * look-ahead are copied to where they belong; those MPA does not take
 * (it left full operation on the way) are dropped.  Returns 0, -EINVAL if
 * @n is more than was lent, or -errno as mpa_rx().
 */
int mpa_rx_ack(struct mpa_conn *c, size_t n);

/* Does one of the @n iovecs at @iov overlap [@lo, @hi)? */
static inline int mpa_iov_overlaps(const struct iovec *iov, int n, uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < n; i++) {
		uintptr_t b = (uintptr_t)iov[i].iov_base;

		if (b < hi && lo < b + iov[i].iov_len)
			return 1;
	}
	return 0;
}

/**
 * mpa_rx_stop() - the layer above gives up on the receive stream (its QP left
 * operation, or a destination it lent was released): nothing more is placed
 * or delivered, the connection is in MPA_S_ERROR (no TERMINATE triple is
 * recorded here: the layer above has its own, or none) and later receive
 * calls return @err.  A current FPDU's destination is forgotten.  No effect
 * outside full operation.
 */
void mpa_rx_stop(struct mpa_conn *c, int err);

/**
 * mpa_rx_refs() - 1 when the rest of the current FPDU's payload destination
 * (what rx_begin lent) overlaps [@lo, @hi), else 0 (also once stopped).
 */
int mpa_rx_refs(const struct mpa_conn *c, uintptr_t lo, uintptr_t hi);

/**
 * mpa_tx_refs() - 1 when an FPDU still queued for transmit references
 * memory in [@lo, @hi) (payload iovecs given to mpa_tx_fpdu()).
 */
int mpa_tx_refs(const struct mpa_conn *c, uintptr_t lo, uintptr_t hi);

/** mpa_tx_mulpdu() - the largest ULPDU mpa_tx_fpdu() takes now. */
static inline uint32_t mpa_tx_mulpdu(const struct mpa_conn *c)
{
	return c->tx_mulpdu;
}

/** mpa_tx_space() - FPDUs that can be queued now. */
unsigned mpa_tx_space(const struct mpa_conn *c);

/**
 * mpa_tx_fpdu() - queue one FPDU whose ULPDU is @hdr (copied, at most
 * MPA_TX_HDR_MAX octets) followed by the @iovcnt payload iovecs (referenced
 * until tx_done(@cookie); no upcall for a NULL cookie).  Adds markers and PAD and computes the CRC.
 * Allowed after a receive error too, so that a TERMINATE can be sent.
 * Returns 0, -ENOTCONN outside full operation,
 * -EMSGSIZE above the MULPDU, -E2BIG for too many iovecs, -EAGAIN when the
 * queue is full.
 */
int mpa_tx_fpdu(struct mpa_conn *c, const void *hdr, size_t hdr_len, const struct iovec *payload,
		int iovcnt, void *cookie);

/**
 * mpa_tx_pending() - up to @max iovecs of queued octets, in order, for one
 * gathering send (the handshake frame first).  Returns the count (0: none).
 */
int mpa_tx_pending(struct mpa_conn *c, struct iovec *iov, int max);

/**
 * mpa_tx_discard() - drop every queued FPDU that has not started to go out
 * (no tx_done for them).  An FPDU partly sent is kept, or the stream would
 * lose its framing, but its octets are copied first: afterwards nothing
 * queued references the caller's memory.  For a layer above that completes
 * its work in error (RDMAP's move to ERROR).  Returns the number dropped,
 * or -ENOMEM if the copy cannot be made: the FPDUs not started are dropped
 * all the same, the kept ones still reference the caller's memory (the
 * connection should then be closed without sending more).
 */
int mpa_tx_discard(struct mpa_conn *c);

/** mpa_tx_pending_bytes() - octets queued and not yet sent. */
size_t mpa_tx_pending_bytes(const struct mpa_conn *c);

/**
 * mpa_tx_advance() - the send of mpa_tx_pending()'s iovecs ended, @n octets
 * of them went to TCP (0 for a send that was cancelled): nothing is lent
 * any more.  Calls tx_done for every FPDU now fully sent.  Returns 0 or
 * -EINVAL if @n is more than was pending.
 */
int mpa_tx_advance(struct mpa_conn *c, size_t n);

#endif /* UIW_MPA_H */
