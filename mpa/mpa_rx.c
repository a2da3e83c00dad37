/* SPDX-License-Identifier: MIT */
/*
 * MPA receive: the handshake frames and the full-operation deframer
 * (RFC 5044 §4, §6).  One cursor (struct mpa_rx_state) says where the next
 * octet goes; mpa_rx() copies into it, mpa_rx_lend() walks a copy of it to
 * hand the engine a scatter list, and both advance it with rx_step().
 */
#include "mpa_int.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"

static inline size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static inline int in_marker(const struct mpa_conn *c, const struct mpa_rx_state *st)
{
	return c->rx_markers && st->pos >= st->next_marker;
}

static inline uint8_t *mk_buf(struct mpa_conn *c, const struct mpa_rx_state *st)
{
	return c->rx_mk[(st->next_marker / MPA_MARKER_PERIOD) % MPA_RX_MK_SLOTS];
}

static inline uint8_t *hdr_buf(struct mpa_conn *c, const struct mpa_rx_state *st)
{
	return c->rx_hdr[st->hdr_idx];
}

static void rx_fpdu_reset(struct mpa_conn *c, struct mpa_rx_state *st)
{
	st->part = MPA_RXP_HEAD;
	st->hdr_idx ^= 1;
	st->off = 0;
	st->need = MPA_HDR_LEN + c->cfg.rx_hdr_min;
	st->fpdu_started = 0;
	st->marker_bad = 0;
	st->ndst = 0;
	st->dst_idx = 0;
	st->dst_off = 0;
}

static void crc_flush(struct mpa_conn *c)
{
	if (c->rx_crc_n) {
		c->rx_crc = crc32c_update(c->rx_crc, c->rx_crc_p, c->rx_crc_n);
		c->rx_crc_n = 0;
	}
}

/* @n octets at @p are next in the CRC: one call per run of adjacent octets
 * (a marker split a copied FPDU into 128 runs of at most 508 octets, 256
 * CRC calls per 64 KiB FPDU; ISA-L's fixed cost per call made the CRC 39%
 * of the receiver's time with markers) */
static void crc_add(struct mpa_conn *c, const uint8_t *p, size_t n)
{
	if (c->rx_crc_n && c->rx_crc_p + c->rx_crc_n == p) {
		c->rx_crc_n += n;
		return;
	}
	crc_flush(c);
	c->rx_crc_p = p;
	c->rx_crc_n = n;
}

/* Called on entering full operation (rx side). */
void mpa_rx_full_init(struct mpa_conn *c)
{
	memset(&c->rx, 0, sizeof(c->rx));
	c->rx.next_marker = 0; /* RFC 5044 §4.3: a marker precedes the first FPDU */
	rx_fpdu_reset(c, &c->rx);
	c->rx_crc = crc32c_init();
	c->rx_crc_n = 0;
	c->rx_fpdus = 0;
	c->rx_ulpdu_avg = c->cfg.rx_ulpdu_max; /* none seen yet: assume large */
}

/*
 * Destination and size of the next contiguous run of octets for cursor @st.
 * Returns 1 with *@ptr and *@max set, or 0 if MPA takes no octets now.
 */
static int rx_cur(struct mpa_conn *c, const struct mpa_rx_state *st, uint8_t **ptr, size_t *max)
{
	size_t lim = SIZE_MAX;

	switch (c->state) {
	case MPA_S_REQ_WAIT:
	case MPA_S_REP_WAIT:
		*ptr = c->hs_rx + c->hs_rx_have;
		*max = c->hs_rx_need - c->hs_rx_have;
		return 1;
	case MPA_S_FULL:
		break;
	default:
		return 0;
	}
	if (in_marker(c, st)) {
		*ptr = mk_buf(c, st) + st->mk_have;
		*max = MPA_MARKER_LEN - st->mk_have;
		return 1;
	}
	if (c->rx_markers)
		lim = (size_t)(st->next_marker - st->pos);
	switch (st->part) {
	case MPA_RXP_HEAD:
	case MPA_RXP_HREST:
		*ptr = c->rx_hdr[st->hdr_idx] + st->off;
		*max = st->need - st->off;
		break;
	case MPA_RXP_PAYLOAD:
		*ptr = (uint8_t *)st->dst[st->dst_idx].iov_base + st->dst_off;
		*max = st->dst[st->dst_idx].iov_len - st->dst_off;
		break;
	case MPA_RXP_TRAILER:
		*ptr = c->rx_tail + st->off;
		*max = st->need - st->off;
		break;
	}
	*max = min_sz(*max, lim);
	return 1;
}

static void skip_empty_dst(struct mpa_rx_state *st)
{
	while (st->dst_idx < st->ndst && st->dst_off == st->dst[st->dst_idx].iov_len) {
		st->dst_idx++;
		st->dst_off = 0;
	}
}

static void enter_trailer(struct mpa_rx_state *st)
{
	st->part = MPA_RXP_TRAILER;
	st->off = 0;
	st->need = st->pad + MPA_CRC_LEN;
}

/* Header complete: validate, learn the payload destination. */
static int rx_hdr_done(struct mpa_conn *c, struct mpa_rx_state *st)
{
	size_t payload;
	unsigned flags = 0;
	int ndst = 0, ret;
	size_t sum = 0;

	if (st->part == MPA_RXP_HEAD) {
		st->ulpdu_len = get_be16(hdr_buf(c, st));
		c->rx_ulpdu_avg = (uint32_t)(((uint64_t)c->rx_ulpdu_avg * 3 + st->ulpdu_len) / 4);
		/* ULPDU_Length must fit our receive limit and hold the header the
		 * layer above needs; otherwise it cannot delimit a valid FPDU (the
		 * RFC has no closer code than "FPDU start error"). */
		if (st->ulpdu_len > c->cfg.rx_ulpdu_max || st->ulpdu_len < c->cfg.rx_hdr_min)
			return mpa_fail(c, MPA_ECODE_MARKER, -EPROTO);
		st->hdr_len = c->cfg.rx_hdr_min;
		if (c->ops && c->ops->rx_hdr_len) {
			ret = c->ops->rx_hdr_len(c->arg, hdr_buf(c, st) + MPA_HDR_LEN, st->hdr_len,
						 st->ulpdu_len);
			if (ret < 0)
				return mpa_fail(c, 0, ret);
			if ((size_t)ret < st->hdr_len || ret > MPA_RX_HDR_MAX)
				return mpa_fail(c, MPA_ECODE_LOCAL_CATA, -EINVAL);
			if ((size_t)ret > st->ulpdu_len)
				return mpa_fail(c, MPA_ECODE_MARKER, -EPROTO);
			st->hdr_len = (uint16_t)ret;
		}
		if (st->hdr_len > c->cfg.rx_hdr_min) {
			st->part = MPA_RXP_HREST;
			st->need = MPA_HDR_LEN + st->hdr_len;
			return 0;
		}
	}
	/*
	 * RFC 5044 §7.1.2 rule 4: "MPA Responder mode implementations MUST
	 * receive and validate at least one FPDU before sending any FPDUs".  An
	 * FPDU reaching an initiator that has not queued one yet broke that rule.
	 */
	if (c->cfg.role == MPA_ROLE_INITIATOR && c->tx_fpdus_queued == 0)
		return mpa_fail(c, MPA_ECODE_INVALID_RR, -EPROTO);
	if (c->cfg.role == MPA_ROLE_RESPONDER && c->p2p && c->rx_fpdus == 0) {
		/* RFC 6581 §5: the initiator "MUST NOT allow any later FULPDUs to
		 * be transmitted before the RTR indication".  The first FPDU must
		 * be an RTR of a kind we advertised (RFC 6581 names no code for the
		 * responder; we use 7, "no matching RTR"). */
		unsigned k;

		for (k = MPA_RTR_SEND; k <= MPA_RTR_READ; k <<= 1)
			if ((c->rtr & k) && mpa_rtr_match(k, hdr_buf(c, st) + MPA_HDR_LEN,
							  st->hdr_len, st->ulpdu_len))
				break;
		if (k > MPA_RTR_READ)
			return mpa_fail(c, MPA_ECODE_NO_MATCHING_RTR, -EPROTO);
		flags |= MPA_RX_F_RTR;
	}
	payload = (size_t)st->ulpdu_len - st->hdr_len;
	if (c->ops && c->ops->rx_begin) {
		ret = c->ops->rx_begin(c->arg, hdr_buf(c, st) + MPA_HDR_LEN, st->hdr_len,
				       st->ulpdu_len, flags, st->dst, &ndst);
		if (ret < 0)
			return mpa_fail(c, 0, ret);
	}
	if (ndst < 0 || ndst > MPA_RX_DST_MAX)
		return mpa_fail(c, MPA_ECODE_LOCAL_CATA, -EINVAL);
	for (int i = 0; i < ndst; i++)
		sum += st->dst[i].iov_len;
	if (sum != payload)
		return mpa_fail(c, MPA_ECODE_LOCAL_CATA, -EINVAL);
	st->ndst = (uint8_t)ndst;
	st->dst_idx = 0;
	st->dst_off = 0;
	st->flags = (uint8_t)flags;
	/* RFC 5044 §4.1: "The length of the pad is set so as to make the size
	 * of the FPDU an integral multiple of four." */
	st->pad = (uint8_t)((4 - ((MPA_HDR_LEN + st->ulpdu_len) & 3)) & 3);
	skip_empty_dst(st);
	if (payload) {
		st->part = MPA_RXP_PAYLOAD;
		st->off = 0;
		st->need = payload;
	} else {
		enter_trailer(st);
	}
	return 0;
}

/* Whole FPDU in: check it (RFC 5044 §6) and deliver it. */
static int rx_fpdu_done(struct mpa_conn *c, struct mpa_rx_state *st)
{
	int ret;

	/* RFC 5044 §4.4: "Verify that the calculated CRC-32c value is the same
	 * as the received CRC-32c value found in the FPDU CRC field.  If not,
	 * the receiver MUST treat the FPDU as an invalid FPDU."  The field is
	 * sent least significant octet first (RFC 5044 Figure 5). */
	crc_flush(c);
	if (c->crc_on && crc32c_final(c->rx_crc) != get_le32(c->rx_tail + st->pad))
		return mpa_fail(c, MPA_ECODE_CRC, -EPROTO);
	/* §8 code 3: "In the event that the CRC is valid, received MPA Marker
	 * (if enabled) and ULPDU Length fields do not agree on the start of an
	 * FPDU" */
	if (st->marker_bad)
		return mpa_fail(c, MPA_ECODE_MARKER, -EPROTO);
	if (c->ops && c->ops->rx_end) {
		ret = c->ops->rx_end(c->arg, hdr_buf(c, st) + MPA_HDR_LEN, st->hdr_len,
				     st->ulpdu_len, st->flags);
		if (ret < 0)
			return mpa_fail(c, 0, ret);
	}
	if (c->state != MPA_S_FULL)
		return c->state == MPA_S_ERROR ? c->err : 0;
	if (c->rx_fpdus++ == 0 && c->cfg.role == MPA_ROLE_RESPONDER)
		c->deadline = UINT64_MAX; /* RTR (or first FPDU) arrived */
	rx_fpdu_reset(c, st);
	c->rx_crc = crc32c_init();
	return 0;
}

static void rx_marker_done(struct mpa_conn *c, struct mpa_rx_state *st, int dry)
{
	if (!dry) {
		/* RFC 5044 §4.2: "the receivers MUST always treat these [two low
		 * bits] as zero"; RESERVED is ignored.  A marker before the
		 * ULPDU_Length field is 0; any other points back to it. */
		uint16_t ptr = get_be16(mk_buf(c, st) + 2) & 0xFFFC;
		uint64_t want = st->fpdu_started ? st->next_marker - st->len_pos : 0;

		if (ptr != want)
			st->marker_bad = 1;
	}
	st->mk_have = 0;
	st->next_marker += MPA_MARKER_PERIOD;
}

/*
 * Account @n octets that landed at the cursor's current run.  @dry walks a
 * copy for mpa_rx_lend(): no CRC, no checks, no upcalls, and it returns 1
 * where the next destination depends on octets not yet received.
 */
static int rx_step(struct mpa_conn *c, struct mpa_rx_state *st, const uint8_t *p, size_t n, int dry)
{
	if (c->state == MPA_S_REQ_WAIT || c->state == MPA_S_REP_WAIT) {
		if (dry)
			return 1;
		c->hs_rx_have += n;
		if (c->hs_rx_have < c->hs_rx_need)
			return 0;
		return mpa_hs_frame_done(c);
	}
	if (in_marker(c, st)) {
		st->pos += n;
		if (!dry && c->crc_on)
			crc_add(c, p, n);
		st->mk_have = (uint8_t)(st->mk_have + n);
		if (st->mk_have == MPA_MARKER_LEN)
			rx_marker_done(c, st, dry);
		return 0;
	}
	st->pos += n;
	if (!dry && c->crc_on) {
		/* RFC 5044 §4.4: the CRC covers everything from ULPDU_Length (or a
		 * marker right before it) through PAD, not the CRC field. */
		size_t k = n;

		if (st->part == MPA_RXP_TRAILER)
			k = st->off >= st->pad ? 0 : min_sz(n, st->pad - st->off);
		if (k)
			crc_add(c, p, k);
	}
	if (st->part == MPA_RXP_HEAD && st->off == 0 && !st->fpdu_started) {
		st->fpdu_started = 1;
		st->len_pos = st->pos - n;
	}
	st->off += n;
	switch (st->part) {
	case MPA_RXP_HEAD:
	case MPA_RXP_HREST:
		if (st->off < st->need)
			return 0;
		return dry ? 1 : rx_hdr_done(c, st);
	case MPA_RXP_PAYLOAD:
		st->dst_off += n;
		skip_empty_dst(st);
		if (st->off == st->need)
			enter_trailer(st);
		return 0;
	case MPA_RXP_TRAILER:
		if (st->off < st->need)
			return 0;
		if (dry) {
			rx_fpdu_reset(c, st);
			return 0;
		}
		return rx_fpdu_done(c, st);
	}
	return 0;
}

static int rx_gate(struct mpa_conn *c)
{
	if (c->state == MPA_S_ERROR)
		return c->err;
	return 0;
}

ssize_t mpa_rx(struct mpa_conn *c, const uint8_t *in, size_t len)
{
	size_t used = 0;
	int ret = rx_gate(c);

	if (ret)
		return ret;
	while (used < len) {
		uint8_t *ptr;
		size_t max, n;

		if (!rx_cur(c, &c->rx, &ptr, &max))
			break;
		n = min_sz(max, len - used);
		memcpy(ptr, in + used, n);
		if (c->rx.part == MPA_RXP_PAYLOAD && !in_marker(c, &c->rx))
			c->copies.rx_copied += n;
		/* the CRC reads the input, where runs are adjacent */
		ret = rx_step(c, &c->rx, in + used, n, 0);
		used += n;
		if (ret < 0) {
			c->rx_crc_n = 0;
			return ret;
		}
	}
	crc_flush(c);
	/*
	 * Octets after the Request before our Reply: the initiator sent before
	 * "the implementation SHOULD enter Full MPA/DDP Operation" at its end,
	 * i.e. before it could know our marker and CRC choice (§7.1.2 rule 2).
	 */
	if (used < len && c->state == MPA_S_REQ_RCVD)
		return mpa_fail(c, MPA_ECODE_INVALID_RR, -EPROTO);
	return (ssize_t)used;
}

static int rx_lend(struct mpa_conn *c, struct iovec *iov, int max)
{
	struct mpa_rx_state st;
	int cnt = 0;
	int ret = rx_gate(c);

	if (ret)
		return ret;
	if (c->state == MPA_S_REQ_WAIT || c->state == MPA_S_REP_WAIT) {
		uint8_t *ptr;
		size_t n;

		if (max < 1)
			return 0;
		rx_cur(c, &c->rx, &ptr, &n);
		iov[0].iov_base = ptr;
		iov[0].iov_len = n;
		c->rx_lent = n;
		return 1;
	}
	if (c->state != MPA_S_FULL)
		return 0;
	st = c->rx;
	while (cnt < max) {
		uint8_t *ptr;
		size_t n;

		/* each marker of the walk needs its own scratch slot */
		if (in_marker(c, &st) && st.next_marker - c->rx.next_marker >=
						 (uint64_t)MPA_RX_MK_SLOTS * MPA_MARKER_PERIOD)
			break;
		if (!rx_cur(c, &st, &ptr, &n))
			break;
		iov[cnt].iov_base = ptr;
		iov[cnt].iov_len = n;
		cnt++;
		if (rx_step(c, &st, ptr, n, 1))
			break;
	}
	c->rx_lent = 0;
	for (int i = 0; i < cnt; i++)
		c->rx_lent += iov[i].iov_len;
	return cnt;
}

int mpa_rx_lend_ahead(struct mpa_conn *c, struct iovec *iov, int max, uint8_t *ahead,
		      size_t ahead_len)
{
	int cnt;

	c->rx_ahead = NULL;
	c->rx_ahead_lent = 0;
	/* outside full operation octets after a handshake frame belong to
	 * whoever reads next (the Request's early data is an error): none */
	if (c->state != MPA_S_FULL || !ahead || !ahead_len || max < 2)
		return rx_lend(c, iov, max);
	cnt = rx_lend(c, iov, max - 1);
	if (cnt <= 0)
		return cnt;
	iov[cnt].iov_base = ahead;
	iov[cnt].iov_len = ahead_len;
	c->rx_ahead = ahead;
	c->rx_ahead_lent = ahead_len;
	return cnt + 1;
}

int mpa_rx_lend(struct mpa_conn *c, struct iovec *iov, int max)
{
	return mpa_rx_lend_ahead(c, iov, max, NULL, 0);
}

int mpa_rx_ack(struct mpa_conn *c, size_t n)
{
	int ret = rx_gate(c);

	if (ret)
		return ret;
	/* Octets beyond the lend would land where nobody wrote them. */
	if (n > c->rx_lent + c->rx_ahead_lent)
		return -EINVAL;
	if (n > c->rx_lent) {
		/* the direct part whole, then what the look-ahead caught */
		size_t extra = n - c->rx_lent;
		const uint8_t *ahead = c->rx_ahead;
		ssize_t r;

		c->rx_ahead = NULL;
		c->rx_ahead_lent = 0;
		ret = mpa_rx_ack(c, c->rx_lent);
		if (ret < 0)
			return ret;
		if (c->state != MPA_S_FULL)
			return 0; /* MPA stopped taking octets: the rest is dropped */
		r = mpa_rx(c, ahead, extra);
		return r < 0 ? (int)r : 0;
	}
	c->rx_lent -= n;
	c->rx_ahead = NULL; /* a read ends the lend: what it did not reach is free */
	c->rx_ahead_lent = 0;
	while (n) {
		uint8_t *ptr;
		size_t max, k;

		if (!rx_cur(c, &c->rx, &ptr, &max)) {
			c->rx_crc_n = 0;
			return -EINVAL;
		}
		k = min_sz(max, n);
		if (c->rx.part == MPA_RXP_PAYLOAD && !in_marker(c, &c->rx))
			c->copies.rx_direct += k;
		ret = rx_step(c, &c->rx, ptr, k, 0);
		if (ret < 0) {
			c->rx_crc_n = 0;
			return ret;
		}
		n -= k;
	}
	crc_flush(c);
	return 0;
}

void mpa_rx_stop(struct mpa_conn *c, int err)
{
	if (c->state != MPA_S_FULL)
		return;
	mpa_fail(c, 0, err);
	c->rx.ndst = 0;
	c->rx.dst_idx = 0;
	c->rx_lent = 0;
	c->rx_ahead = NULL;
	c->rx_ahead_lent = 0;
	c->rx_crc_n = 0;
}

int mpa_rx_refs(const struct mpa_conn *c, uintptr_t lo, uintptr_t hi)
{
	const struct mpa_rx_state *st = &c->rx;
	struct iovec rest;

	if (c->state != MPA_S_FULL || st->part != MPA_RXP_PAYLOAD || st->dst_idx >= st->ndst)
		return 0;
	/* the current destination from the octet the cursor is at, then the rest */
	rest.iov_base = (uint8_t *)st->dst[st->dst_idx].iov_base + st->dst_off;
	rest.iov_len = st->dst[st->dst_idx].iov_len - st->dst_off;
	return mpa_iov_overlaps(&rest, 1, lo, hi) ||
	       mpa_iov_overlaps(st->dst + st->dst_idx + 1, st->ndst - st->dst_idx - 1, lo, hi);
}
