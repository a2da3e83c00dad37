/* SPDX-License-Identifier: MIT */
/*
 * MPA connection setup: configuration, the Request/Reply exchange of
 * RFC 5044 §7.1.2 with the RFC 6581 revision-2 negotiation (IRD/ORD,
 * peer-to-peer mode and RTR), timeouts and error recording.
 */
#include "mpa_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

#define MPA_DEFAULT_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)

void mpa_cfg_init(struct mpa_cfg *cfg, enum mpa_role role)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->role = role;
	cfg->rev = MPA_REVISION_2;
	cfg->crc = 1;
	cfg->accept_markers = 1;
	cfg->rtr = MPA_RTR_ALL;
	cfg->ird = 16;
	cfg->ord = 16;
	cfg->pd_max = MPA_PD_MAX;
	cfg->emss = 1460;
	cfg->rx_ulpdu_max = MPA_ULPDU_MAX;
	cfg->tx_depth = 32;
	cfg->tx_max_sge = 8;
	cfg->timeout_ns = MPA_DEFAULT_TIMEOUT_NS;
}

int mpa_conn_init(struct mpa_conn *c, const struct mpa_cfg *cfg, const struct mpa_ops *ops,
		  void *arg)
{
	if (cfg->rev != MPA_REVISION_1 && cfg->rev != MPA_REVISION_2)
		return -EINVAL;
	if (cfg->p2p && cfg->rev != MPA_REVISION_2)
		return -EINVAL;
	if (cfg->pd_max > MPA_PD_MAX || cfg->rx_hdr_min > MPA_RX_HDR_MAX)
		return -EINVAL;
	if (cfg->ird > MPA_V2_IRD_ORD_MASK || cfg->ord > MPA_V2_IRD_ORD_MASK)
		return -EINVAL;
	if (cfg->tx_max_sge == 0 || cfg->rx_ulpdu_max > MPA_ULPDU_MAX)
		return -EINVAL;
	if (cfg->p2p && !(cfg->rtr & MPA_RTR_ALL))
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (c->cfg.pd_max == 0)
		c->cfg.pd_max = MPA_PD_MAX;
	c->ops = ops;
	c->arg = arg;
	c->state = MPA_S_IDLE;
	c->deadline = UINT64_MAX;
	return 0;
}

void mpa_conn_set_ops(struct mpa_conn *c, const struct mpa_ops *ops, void *arg)
{
	c->ops = ops;
	c->arg = arg;
}

void mpa_conn_destroy(struct mpa_conn *c)
{
	mpa_tx_teardown(c);
}

int mpa_fail(struct mpa_conn *c, uint8_t ecode, int err)
{
	if (c->state == MPA_S_ERROR)
		return c->err;
	c->state = MPA_S_ERROR;
	c->err = err;
	c->deadline = UINT64_MAX;
	if (ecode) {
		c->term_layer = MPA_TERM_LAYER_LLP;
		c->term_etype = MPA_TERM_ETYPE_LLP;
		c->term_ecode = ecode;
	}
	return err;
}

int mpa_conn_term(const struct mpa_conn *c, uint8_t *layer, uint8_t *etype, uint8_t *ecode)
{
	if (!c->term_ecode)
		return 0;
	*layer = c->term_layer;
	*etype = c->term_etype;
	*ecode = c->term_ecode;
	return 1;
}

const char *mpa_state_name(enum mpa_state s)
{
	static const char *const names[] = {"idle",	  "request-wait", "request-received",
					    "reply-wait", "full",	  "rejected",
					    "error"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *mpa_ecode_name(uint8_t ecode)
{
	switch (ecode) {
	case MPA_ECODE_TCP_LOST:
		return "TCP connection lost";
	case MPA_ECODE_CRC:
		return "MPA CRC error";
	case MPA_ECODE_MARKER:
		return "MPA marker / FPDU start error";
	case MPA_ECODE_INVALID_RR:
		return "invalid MPA Request/Reply frame";
	case MPA_ECODE_LOCAL_CATA:
		return "local catastrophic error";
	case MPA_ECODE_INSUFFICIENT_IRD:
		return "insufficient IRD";
	case MPA_ECODE_NO_MATCHING_RTR:
		return "no matching RTR";
	default:
		return "unknown MPA error";
	}
}

static int hs_queue(struct mpa_conn *c, const struct mpa_rr *rr)
{
	ssize_t n = mpa_rr_build(c->hs_tx, sizeof(c->hs_tx), rr);

	if (n < 0)
		return (int)n;
	if ((size_t)n - MPA_RR_HDR_LEN > c->cfg.pd_max)
		return -EMSGSIZE;
	c->hs_tx_len = (size_t)n;
	c->hs_tx_off = 0;
	return 0;
}

static uint64_t deadline_after(uint64_t now, uint64_t t)
{
	return now > UINT64_MAX - t ? UINT64_MAX - 1 : now + t;
}

int mpa_conn_start(struct mpa_conn *c, const void *pd, size_t pd_len, uint64_t now)
{
	if (c->state != MPA_S_IDLE)
		return -EINVAL;
	if (c->cfg.role == MPA_ROLE_RESPONDER) {
		c->state = MPA_S_REQ_WAIT;
	} else {
		struct mpa_rr rr = {0};
		int ret;

		if (pd_len > MPA_PD_MAX)
			return -EMSGSIZE;
		rr.rev = c->cfg.rev;
		/* siw and iw_cxgb4 always send revision 2 enhanced */
		rr.enhanced = c->cfg.rev >= MPA_REVISION_2;
		rr.markers = c->cfg.markers;
		rr.crc = c->cfg.crc;
		rr.p2p = c->cfg.p2p;
		rr.rtr = c->cfg.p2p ? c->cfg.rtr : 0;
		rr.ird = c->cfg.ird;
		rr.ord = c->cfg.ord;
		rr.ulp_pd = pd;
		rr.ulp_pd_len = (uint16_t)pd_len;
		ret = hs_queue(c, &rr);
		if (ret)
			return ret;
		c->state = MPA_S_REP_WAIT;
	}
	c->hs_rx_have = 0;
	c->hs_rx_need = MPA_RR_HDR_LEN;
	c->deadline = deadline_after(now, c->cfg.timeout_ns);
	return 0;
}

static void negotiate_common(struct mpa_conn *c, const struct mpa_rr *peer)
{
	/* RFC 5044 §7.1.1 C: "When this bit is '1' in either the MPA Request
	 * Frame or MPA Reply Frame, CRCs MUST be generated and checked by both
	 * endpoints." */
	c->crc_on = c->cfg.crc || peer->crc;
	/* M: "declares that Markers are REQUIRED in FPDUs sent from" the other
	 * side: the peer's bit governs our transmit, ours our receive. */
	c->tx_markers = peer->markers;
	c->rx_markers = c->cfg.markers;
	c->enhanced = peer->enhanced;
	if (peer->enhanced) {
		/* RFC 6581 §9.1: "The responder and initiator MUST pass the
		 * peer's provided IRD and ORD values to the ULP" */
		c->peer_ird = peer->ird;
		c->peer_ord = peer->ord;
	}
}

/* The initiator's pick among the kinds both sides allow (RFC 6581 §1.1:
 * "at the initiator's sole discretion"): Write, then Read, then Send.  A
 * Write RTR costs the responder nothing; a Read needs an ORD slot here and an
 * IRD slot there; a Send consumes a posted receive. */
static unsigned choose_rtr(unsigned allowed, uint16_t ord)
{
	if (allowed & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if ((allowed & MPA_RTR_READ) && ord > 0)
		return MPA_RTR_READ;
	if (allowed & MPA_RTR_SEND)
		return MPA_RTR_SEND;
	return MPA_RTR_NONE;
}

static int hs_request_done(struct mpa_conn *c, const struct mpa_rr *rr)
{
	c->rev = rr->rev;
	if (rr->markers && !c->cfg.accept_markers) {
		/* Policy refusal (siw does the same): a Reject Reply, then MPA exits. */
		struct mpa_rr rep = {0};

		rep.reply = 1;
		rep.reject = 1;
		rep.rev = rr->rev;
		rep.enhanced = rr->enhanced;
		rep.crc = c->cfg.crc;
		rep.ird = c->cfg.ird;
		rep.ord = c->cfg.ord;
		if (hs_queue(c, &rep) == 0) {
			c->state = MPA_S_REJECTED;
			c->deadline = UINT64_MAX;
			c->err = -ECONNREFUSED;
			return -ECONNREFUSED;
		}
		return mpa_fail(c, 0, -ECONNREFUSED);
	}
	negotiate_common(c, rr);
	c->p2p = rr->enhanced && rr->p2p;
	/*
	 * RFC 6581 §9.2: the responder "SHOULD set the corresponding Control
	 * Flag" for each offered kind it supports, and "If the responder does
	 * not support any of the initiator-specified RTR indication options,
	 * then the responder MUST set at least one RTR indication type option
	 * it supports."
	 */
	if (c->p2p) {
		c->rtr = rr->rtr & c->cfg.rtr;
		if (!c->rtr)
			c->rtr = (c->cfg.rtr & MPA_RTR_WRITE) ? MPA_RTR_WRITE
							      : choose_rtr(c->cfg.rtr, 1);
	}
	c->state = MPA_S_REQ_RCVD;
	c->deadline = UINT64_MAX; /* the ULP's decision is not MPA's to time */
	if (c->ops && c->ops->request)
		c->ops->request(c->arg, rr);
	return 0;
}

static int hs_reply_done(struct mpa_conn *c, const struct mpa_rr *rr)
{
	int ret;

	/* The responder answers with the request's revision and S bit (RFC 6581
	 * §10: "If the responder receives an enhanced MPA message, it MUST
	 * respond with an enhanced MPA message", and the unenhanced likewise). */
	if (rr->rev != c->cfg.rev || rr->enhanced != (c->cfg.rev >= MPA_REVISION_2))
		return mpa_fail(c, MPA_ECODE_INVALID_RR, -EPROTO);
	c->rev = rr->rev;
	c->deadline = UINT64_MAX;
	if (rr->reject) {
		/* RFC 5044 §7.1.2 rule 3: "if the Rejected Connection bit is set to
		 * '1', the implementation MUST exit MPA, leaving the TCP connection
		 * open." */
		if (rr->enhanced) {
			c->peer_ird = rr->ird;
			c->peer_ord = rr->ord;
		}
		c->state = MPA_S_REJECTED;
		c->err = -ECONNREFUSED;
		if (c->ops && c->ops->reply)
			c->ops->reply(c->arg, rr);
		return 0;
	}
	if (rr->markers && !c->cfg.accept_markers)
		return mpa_fail(c, 0, -ECONNREFUSED);
	negotiate_common(c, rr);
	c->ird = c->cfg.ird;
	c->ord = c->cfg.ord;
	c->p2p = c->cfg.p2p && rr->enhanced && rr->p2p;
	ret = mpa_enter_full(c);
	if (ret)
		return mpa_fail(c, 0, ret);
	if (rr->enhanced) {
		/*
		 * RFC 6581 §9.1: "the initiator MUST set its IRD at least to the
		 * responder ORD and its ORD at most to the responder IRD"; 0x3FFF
		 * leaves the local value to the ULP.  Our IRD is what the layer
		 * above provisioned: if the responder's ORD needs more, "it MUST
		 * send a TERM message ... Error Code 6".
		 */
		if (rr->ord != MPA_V2_IRD_ORD_ULP && rr->ord > c->ird)
			return mpa_fail(c, MPA_ECODE_INSUFFICIENT_IRD, -EPROTO);
		if (rr->ird != MPA_V2_IRD_ORD_ULP && rr->ird < c->ord) {
			if (c->cfg.strict_ird)
				return mpa_fail(c, MPA_ECODE_INSUFFICIENT_IRD, -EPROTO);
			c->ord = rr->ird;
		}
	}
	/* RFC 6581 §9.2: "If Control Flag A is 1 in the MPA Request message, then
	 * the responder MUST set Control Flag A to 1 in the MPA reply" (siw
	 * fails the connection the same way). */
	if (c->cfg.p2p && !c->p2p)
		return mpa_fail(c, MPA_ECODE_NO_MATCHING_RTR, -EPROTO);
	if (c->p2p) {
		uint8_t rtr[64];
		ssize_t n;

		/* RFC 6581 §9.2: "If the initiator is not able to generate any of
		 * the responder-supported RTR indications, then it MUST send a TERM
		 * message ... Error Code 7." */
		c->rtr = choose_rtr(rr->rtr & c->cfg.rtr, c->ord);
		if (c->rtr == MPA_RTR_NONE)
			return mpa_fail(c, MPA_ECODE_NO_MATCHING_RTR, -EPROTO);
		n = mpa_rtr_encode(c->rtr, rtr, sizeof(rtr));
		if (n >= 0)
			ret = mpa_tx_fpdu(c, rtr, (size_t)n, NULL, 0, NULL);
		if (n < 0 || ret)
			return mpa_fail(c, MPA_ECODE_LOCAL_CATA, n < 0 ? (int)n : ret);
	}
	if (c->ops && c->ops->reply)
		c->ops->reply(c->arg, rr);
	return 0;
}

int mpa_hs_frame_done(struct mpa_conn *c)
{
	int want_reply = c->state == MPA_S_REP_WAIT;
	struct mpa_rr rr;
	ssize_t n = mpa_rr_parse(c->hs_rx, c->hs_rx_have, want_reply, c->cfg.pd_max, &rr);

	if (n == -EAGAIN && c->hs_rx_have == MPA_RR_HDR_LEN) {
		/* Header valid so far: now wait for the private data. */
		c->hs_rx_need = MPA_RR_HDR_LEN + get_be16(c->hs_rx + MPA_RR_OFF_PDLEN);
		return 0;
	}
	if (n < 0)
		return mpa_fail(c, MPA_ECODE_INVALID_RR, -EPROTO);
	return want_reply ? hs_reply_done(c, &rr) : hs_request_done(c, &rr);
}

int mpa_conn_accept(struct mpa_conn *c, const void *pd, size_t pd_len, uint16_t ird, uint16_t ord,
		    uint64_t now)
{
	struct mpa_rr rep = {0};
	int ret;

	if (c->state != MPA_S_REQ_RCVD)
		return -EINVAL;
	if (ird > MPA_V2_IRD_ORD_MASK || ord > MPA_V2_IRD_ORD_MASK)
		return -EINVAL;
	if (pd_len > MPA_PD_MAX)
		return -EMSGSIZE;
	rep.reply = 1;
	rep.rev = c->rev;
	rep.enhanced = c->enhanced;
	rep.markers = c->cfg.markers;
	rep.crc = c->crc_on;
	if (c->enhanced) {
		/* RFC 6581 §9.1: "The responder MUST set its ORD at most to the
		 * initiator IRD."  A zero-length Read RTR needs one IRD slot
		 * ("the responder IRD can be set to 1"): with IRD 0 the
		 * responder no longer accepts a Read RTR when it accepts
		 * another kind (an IRD of 0 is the ULP's wish: no Reads), and
		 * takes the one slot only when Read is all that is left. */
		if (c->peer_ird != MPA_V2_IRD_ORD_ULP && ord > c->peer_ird)
			ord = c->peer_ird;
		if (c->p2p && (c->rtr & MPA_RTR_READ) && ird == 0) {
			if (c->rtr & ~(unsigned)MPA_RTR_READ)
				c->rtr &= ~(unsigned)MPA_RTR_READ;
			else
				ird = 1;
		}
		rep.ird = ird;
		rep.ord = ord;
		/* "The responder MUST respond to an initiator ORD value of 0x3FFF
		 * by ... setting the IRD to 0x3FFF in its reply message", and to
		 * an initiator IRD of 0x3FFF with ORD 0x3FFF. */
		if (c->peer_ord == MPA_V2_IRD_ORD_ULP)
			rep.ird = MPA_V2_IRD_ORD_ULP;
		if (c->peer_ird == MPA_V2_IRD_ORD_ULP)
			rep.ord = MPA_V2_IRD_ORD_ULP;
		/* "If Control Flag A is 1 in the MPA Request message, then the
		 * responder MUST set Control Flag A to 1 in the MPA reply" */
		rep.p2p = c->p2p;
		rep.rtr = c->p2p ? c->rtr : 0;
	}
	rep.ulp_pd = pd;
	rep.ulp_pd_len = (uint16_t)pd_len;
	ret = hs_queue(c, &rep);
	if (ret)
		return ret;
	c->ird = ird;
	c->ord = ord;
	ret = mpa_enter_full(c);
	if (ret) {
		c->hs_tx_len = 0;
		return ret;
	}
	/* Peer-to-peer: the RTR must arrive in time (our bound; RFC 6581 sets
	 * none). */
	c->deadline = c->p2p ? deadline_after(now, c->cfg.timeout_ns) : UINT64_MAX;
	return 0;
}

int mpa_conn_reject(struct mpa_conn *c, const void *pd, size_t pd_len)
{
	struct mpa_rr rep = {0};
	int ret;

	if (c->state != MPA_S_REQ_RCVD)
		return -EINVAL;
	if (pd_len > MPA_PD_MAX)
		return -EMSGSIZE;
	rep.reply = 1;
	rep.reject = 1;
	rep.rev = c->rev;
	rep.enhanced = c->enhanced;
	rep.markers = c->cfg.markers;
	rep.crc = c->crc_on;
	if (c->enhanced) {
		rep.ird = c->cfg.ird;
		rep.ord = c->cfg.ord;
	}
	rep.ulp_pd = pd;
	rep.ulp_pd_len = (uint16_t)pd_len;
	ret = hs_queue(c, &rep);
	if (ret)
		return ret;
	c->state = MPA_S_REJECTED;
	c->deadline = UINT64_MAX;
	return 0;
}

uint64_t mpa_conn_next_timeout(const struct mpa_conn *c)
{
	return c->deadline;
}

int mpa_conn_timeout(struct mpa_conn *c, uint64_t now)
{
	if (c->deadline == UINT64_MAX || now < c->deadline)
		return 0;
	/* In full operation only the peer-to-peer RTR is awaited. */
	return mpa_fail(c, c->state == MPA_S_FULL ? MPA_ECODE_NO_MATCHING_RTR : 0, -ETIMEDOUT);
}
