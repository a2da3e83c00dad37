/* SPDX-License-Identifier: MIT */
/*
 * MPA transmit: FPDUs built as iovecs over the caller's memory (RFC 5044
 * §4.1), markers every 512 octets of the stream counted from the first FPDU
 * (§4.3), CRC32C over the whole FPDU, markers included (§4.4).  Payload is
 * read once, by the CRC, and copied once, by the kernel.
 */
#include "mpa_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"

int mpa_enter_full(struct mpa_conn *c)
{
	unsigned depth = c->cfg.tx_depth;
	uint32_t mulpdu, fpdu_max;
	unsigned mk = 0, iov_per;

	if (c->cfg.tx_ulpdu_max)
		mulpdu =
			c->cfg.tx_ulpdu_max > MPA_MULPDU_MAX ? MPA_MULPDU_MAX : c->cfg.tx_ulpdu_max;
	else
		mulpdu = mpa_mulpdu(c->cfg.emss, c->tx_markers);
	fpdu_max = MPA_HDR_LEN + mulpdu + 3 + MPA_CRC_LEN;
	if (c->tx_markers)
		mk = fpdu_max / (MPA_MARKER_PERIOD - MPA_MARKER_LEN) + 3;
	/* head, tail, payload; each marker adds itself and splits one run */
	iov_per = 2 + c->cfg.tx_max_sge + 2 * mk;
	/* 0: enough FPDUs for about 512 KiB in flight, 8..128 of them */
	if (!depth) {
		depth = (512u << 10) / fpdu_max;
		depth = depth < 8 ? 8 : depth > 128 ? 128 : depth;
		c->cfg.tx_depth = depth;
	}

	c->tx_slots = calloc(depth, sizeof(*c->tx_slots));
	c->tx_iov_pool = calloc((size_t)depth * iov_per, sizeof(struct iovec));
	c->tx_mk_pool = mk ? calloc((size_t)depth * mk, MPA_MARKER_LEN) : NULL;
	if (!c->tx_slots || !c->tx_iov_pool || (mk && !c->tx_mk_pool)) {
		mpa_tx_teardown(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < depth; i++) {
		c->tx_slots[i].iov = c->tx_iov_pool + (size_t)i * iov_per;
		c->tx_slots[i].mk = mk ? c->tx_mk_pool + (size_t)i * mk * MPA_MARKER_LEN : NULL;
	}
	c->tx_iov_per_slot = iov_per;
	c->tx_mk_per_slot = mk;
	c->tx_flat_cap = mk ? fpdu_max + (size_t)mk * MPA_MARKER_LEN : 0;
	c->tx_mulpdu = mulpdu;
	c->tx_head = c->tx_count = 0;
	c->tx_off = 0;
	c->tx_lent = 0;
	c->tx_pos = 0;
	c->tx_next_marker = 0;
	c->tx_queued_bytes = 0;
	mpa_rx_full_init(c);
	c->state = MPA_S_FULL;
	return 0;
}

void mpa_tx_teardown(struct mpa_conn *c)
{
	for (unsigned i = 0; c->tx_slots && i < c->cfg.tx_depth; i++)
		free(c->tx_slots[i].flat);
	free(c->tx_slots);
	free(c->tx_iov_pool);
	free(c->tx_mk_pool);
	free(c->tx_bounce);
	c->tx_slots = NULL;
	c->tx_iov_pool = NULL;
	c->tx_mk_pool = NULL;
	c->tx_bounce = NULL;
	c->tx_count = 0;
}

unsigned mpa_tx_space(const struct mpa_conn *c)
{
	return c->tx_slots ? c->cfg.tx_depth - c->tx_count : 0;
}

/* Builder state for one FPDU's iovecs. */
struct fpdu_build {
	struct mpa_conn *c;
	struct mpa_tx_slot *s;
	uint64_t pos;
	uint64_t len_pos;
	unsigned nmk;
	int started;
};

static void emit(struct fpdu_build *b, const uint8_t *p, size_t len)
{
	struct mpa_conn *c = b->c;

	while (len) {
		size_t run = len;

		if (c->tx_markers) {
			if (b->pos == c->tx_next_marker) {
				/* RFC 5044 §4.3: FPDUPTR is 0 for a marker right
				 * before ULPDU_Length, else "the number of octets in
				 * the TCP stream from the beginning of the ULPDU
				 * Length field to the first octet of the Marker". */
				uint8_t *m = b->s->mk + (size_t)b->nmk++ * MPA_MARKER_LEN;
				uint16_t ptr = b->started ? (uint16_t)(b->pos - b->len_pos) : 0;

				put_be16(m, 0);
				put_be16(m + 2, ptr);
				b->s->iov[b->s->niov].iov_base = m;
				b->s->iov[b->s->niov++].iov_len = MPA_MARKER_LEN;
				b->pos += MPA_MARKER_LEN;
				c->tx_next_marker += MPA_MARKER_PERIOD;
				continue;
			}
			if (run > c->tx_next_marker - b->pos)
				run = (size_t)(c->tx_next_marker - b->pos);
		}
		if (!b->started) {
			b->started = 1;
			b->len_pos = b->pos;
		}
		b->s->iov[b->s->niov].iov_base = (void *)(uintptr_t)p;
		b->s->iov[b->s->niov++].iov_len = run;
		b->pos += run;
		p += run;
		len -= run;
	}
}

/* @s's iovecs, in order, into @dst; returns the octets copied (@s->len) */
static size_t slot_gather(const struct mpa_tx_slot *s, uint8_t *dst)
{
	size_t off = 0;

	for (unsigned j = 0; j < s->niov; j++) {
		memcpy(dst + off, s->iov[j].iov_base, s->iov[j].iov_len);
		off += s->iov[j].iov_len;
	}
	return off;
}

/*
 * Markers on: copy @s's wire octets into one run, its flat buffer.  With a
 * marker every 508 octets an FPDU of 64 KiB is some 260 iovecs: the kernel
 * walked them one by one in every send and the CRC ran once per piece
 * (the sending thread saturated at 1.1-1.6 GB/s, 70% of it in the kernel);
 * one copy here makes the send one iovec and the CRC one call.  The
 * payload is read now, at queue time, where the kernel would have read it
 * when sending (verbs leave the buffer the application's only after the
 * completion either way); @s->iov keeps naming the sources, so
 * deregistration sees the same references as without markers.  Returns 0
 * (no memory: the iovecs are sent as they are).
 */
static int tx_flatten(struct mpa_conn *c, struct mpa_tx_slot *s)
{
	s->flat_used = 0;
	if (!s->flat && !(s->flat = malloc(c->tx_flat_cap)))
		return 0;
	if (s->len > c->tx_flat_cap)
		return 0; /* cannot happen: the slot's iovecs are sized from the same bound */
	slot_gather(s, s->flat);
	s->flat_used = 1;
	return 1;
}

/* The CRC into @s's tail (PAD first) and into the flat copy, where the
 * tail's octets landed (a marker may split the CRC field). */
static void flat_crc(struct mpa_tx_slot *s, unsigned pad, uint32_t crc)
{
	size_t off = 0;

	put_le32(s->tail + pad, crc);
	for (unsigned j = 0; j < s->niov; j++) {
		const uint8_t *b = s->iov[j].iov_base;

		if (b >= s->tail && b < s->tail + sizeof(s->tail))
			memcpy(s->flat + off, b, s->iov[j].iov_len);
		off += s->iov[j].iov_len;
	}
}

int mpa_tx_fpdu(struct mpa_conn *c, const void *hdr, size_t hdr_len, const struct iovec *payload,
		int iovcnt, void *cookie)
{
	struct fpdu_build b;
	struct mpa_tx_slot *s;
	size_t ulpdu = hdr_len;
	unsigned pad;

	if (!c->tx_slots || c->state == MPA_S_REJECTED)
		return -ENOTCONN;
	if (hdr_len > MPA_TX_HDR_MAX || iovcnt < 0)
		return -EINVAL;
	if ((unsigned)iovcnt > c->cfg.tx_max_sge)
		return -E2BIG;
	for (int i = 0; i < iovcnt; i++)
		ulpdu += payload[i].iov_len;
	if (ulpdu > c->tx_mulpdu)
		return -EMSGSIZE;
	if (c->tx_count == c->cfg.tx_depth)
		return -EAGAIN;

	s = &c->tx_slots[(c->tx_head + c->tx_count) % c->cfg.tx_depth];
	s->niov = 0;
	s->cookie = cookie;
	put_be16(s->head, (uint16_t)ulpdu);
	if (hdr_len)
		memcpy(s->head + MPA_HDR_LEN, hdr, hdr_len);
	/* RFC 5044 §4.1: "The pad data MUST be set to zero by the sender" */
	pad = (4 - ((MPA_HDR_LEN + ulpdu) & 3)) & 3;
	memset(s->tail, 0, sizeof(s->tail));

	b.c = c;
	b.s = s;
	b.pos = c->tx_pos;
	b.len_pos = c->tx_pos;
	b.nmk = 0;
	b.started = 0;
	emit(&b, s->head, MPA_HDR_LEN + hdr_len);
	for (int i = 0; i < iovcnt; i++)
		emit(&b, payload[i].iov_base, payload[i].iov_len);
	emit(&b, s->tail, pad + MPA_CRC_LEN);
	s->len = (size_t)(b.pos - c->tx_pos);

	c->copies.tx_queued += ulpdu - hdr_len;
	/* "When sending an FPDU, the sender MUST include a CRC field"; when
	 * CRCs are off it "may contain any value": we send zero, as siw does. */
	if (c->tx_markers && tx_flatten(c, s)) {
		c->copies.tx_copied += ulpdu - hdr_len;
		if (c->crc_on)
			flat_crc(s, pad, crc32c_final(crc32c_update(crc32c_init(), s->flat,
								    s->len - MPA_CRC_LEN)));
	} else if (c->crc_on) {
		uint32_t crc = crc32c_update_iov(crc32c_init(), s->iov, (int)s->niov,
						 s->len - MPA_CRC_LEN);

		put_le32(s->tail + pad, crc32c_final(crc));
	}
	c->tx_pos = b.pos;
	c->tx_count++;
	c->tx_fpdus_queued++;
	c->tx_queued_bytes += s->len;
	return 0;
}

int mpa_tx_discard(struct mpa_conn *c)
{
	unsigned keep = 0, dropped;
	size_t drop = 0, held = c->tx_off + c->tx_lent, total = 0, off = 0;
	uint8_t *copy = NULL;

	if (!c->tx_slots || !c->tx_count)
		return 0;
	/* FPDUs partly sent, or handed to a send the engine has in flight
	 * (mpa_tx_pending() not yet followed by mpa_tx_advance()), stay: the
	 * stream would lose its framing, and the engine's advance its meaning. */
	while (keep < c->tx_count && total < held)
		total += c->tx_slots[(c->tx_head + keep++) % c->cfg.tx_depth].len;
	if (keep) {
		/* Error path only: the copy buffer is not worth keeping for every
		 * connection.  The head may already live in an older copy: copy
		 * before freeing it. */
		copy = malloc(total);
		/* out of memory: the kept FPDUs keep pointing at the caller's
		 * memory (-ENOMEM below), but those not started still go: they
		 * must not be sent for work the layer above completes in error */
		for (unsigned i = 0; copy && i < keep; i++) {
			struct mpa_tx_slot *s = &c->tx_slots[(c->tx_head + i) % c->cfg.tx_depth];
			size_t start = off;

			/* from the flat copy if any: the octets the CRC and the
			 * part already sent were taken from */
			if (s->flat_used) {
				memcpy(copy + off, s->flat, s->len);
				off += s->len;
			} else {
				off += slot_gather(s, copy + off);
			}
			s->iov[0].iov_base = copy + start;
			s->iov[0].iov_len = off - start;
			s->niov = 1;
			s->flat_used = 0;
		}
		if (copy) {
			free(c->tx_bounce);
			c->tx_bounce = copy;
		}
	}
	for (unsigned i = keep; i < c->tx_count; i++)
		drop += c->tx_slots[(c->tx_head + i) % c->cfg.tx_depth].len;
	dropped = c->tx_count - keep;
	c->tx_count = keep;
	c->tx_queued_bytes -= drop;
	/* the next FPDU starts where the kept ones end; markers stay every
	 * 512 octets of the stream (RFC 5044 §4.3) */
	c->tx_pos -= drop;
	if (c->tx_markers)
		c->tx_next_marker =
			(c->tx_pos + MPA_MARKER_PERIOD - 1) / MPA_MARKER_PERIOD * MPA_MARKER_PERIOD;
	return keep && !copy ? -ENOMEM : (int)dropped;
}

/* RFC 5044 §7.1.2 rule 4: a responder sends no FPDU before it received and
 * validated one; after an error only the TERMINATE needs to leave. */
static int tx_gate_open(const struct mpa_conn *c)
{
	if (!c->tx_slots || c->state == MPA_S_REJECTED)
		return 0;
	return c->cfg.role == MPA_ROLE_INITIATOR || c->rx_fpdus > 0 || c->state == MPA_S_ERROR;
}

size_t mpa_tx_pending_bytes(const struct mpa_conn *c)
{
	return (c->hs_tx_len - c->hs_tx_off) + (tx_gate_open(c) ? c->tx_queued_bytes : 0);
}

int mpa_tx_pending(struct mpa_conn *c, struct iovec *iov, int max)
{
	int cnt = 0;
	size_t skip = c->tx_off;

	if (max <= 0)
		return 0;
	if (c->hs_tx_off < c->hs_tx_len) {
		iov[cnt].iov_base = c->hs_tx + c->hs_tx_off;
		iov[cnt++].iov_len = c->hs_tx_len - c->hs_tx_off;
	}
	c->tx_lent = 0;
	if (!tx_gate_open(c))
		return cnt;
	for (unsigned i = 0; i < c->tx_count && cnt < max; i++) {
		struct mpa_tx_slot *s = &c->tx_slots[(c->tx_head + i) % c->cfg.tx_depth];

		if (s->flat_used) {
			iov[cnt].iov_base = s->flat + skip;
			iov[cnt++].iov_len = s->len - skip;
			c->tx_lent += s->len - skip;
			skip = 0;
			continue;
		}
		for (unsigned j = 0; j < s->niov && cnt < max; j++) {
			if (skip >= s->iov[j].iov_len) {
				skip -= s->iov[j].iov_len;
				continue;
			}
			iov[cnt].iov_base = (uint8_t *)s->iov[j].iov_base + skip;
			iov[cnt++].iov_len = s->iov[j].iov_len - skip;
			c->tx_lent += s->iov[j].iov_len - skip;
			skip = 0;
		}
	}
	return cnt;
}

int mpa_tx_advance(struct mpa_conn *c, size_t n)
{
	size_t k;

	if (n > mpa_tx_pending_bytes(c))
		return -EINVAL;
	k = c->hs_tx_len - c->hs_tx_off;
	if (k > n)
		k = n;
	c->hs_tx_off += k;
	n -= k;
	/* the send ended: whatever it did not take is no longer lent */
	c->tx_lent = 0;
	while (n) {
		struct mpa_tx_slot *s = &c->tx_slots[c->tx_head];
		size_t rem = s->len - c->tx_off;

		if (n < rem) {
			c->tx_off += n;
			c->tx_queued_bytes -= n;
			break;
		}
		n -= rem;
		c->tx_queued_bytes -= rem;
		c->tx_off = 0;
		c->tx_head = (c->tx_head + 1) % c->cfg.tx_depth;
		c->tx_count--;
		if (s->cookie && c->ops && c->ops->tx_done)
			c->ops->tx_done(c->arg, s->cookie);
	}
	return 0;
}

int mpa_tx_refs(const struct mpa_conn *c, uintptr_t lo, uintptr_t hi)
{
	if (!c->tx_slots)
		return 0;
	for (unsigned i = 0; i < c->tx_count; i++) {
		const struct mpa_tx_slot *s = &c->tx_slots[(c->tx_head + i) % c->cfg.tx_depth];

		if (mpa_iov_overlaps(s->iov, (int)s->niov, lo, hi))
			return 1;
	}
	return 0;
}
