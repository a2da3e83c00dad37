/* SPDX-License-Identifier: MIT */
/* DDP segment header codec (RFC 5041 §4.2-§4.4). */
#include "ddp.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"

ssize_t ddp_hdr_decode(const uint8_t *p, size_t len, struct ddp_hdr *h)
{
	size_t hl;

	if (len < 1)
		return -EAGAIN;
	hl = ddp_hdr_len(p[DDP_OFF_CTRL]);
	if (len < hl)
		return -EAGAIN;
	memset(h, 0, sizeof(*h));
	h->tagged = !!(p[DDP_OFF_CTRL] & DDP_CTRL_T);
	h->last = !!(p[DDP_OFF_CTRL] & DDP_CTRL_L);
	h->dv = p[DDP_OFF_CTRL] & DDP_CTRL_DV_MASK;
	h->ulp_ctrl = p[DDP_OFF_RSVDULP];
	if (h->tagged) {
		h->stag = get_be32(p + DDP_OFF_STAG);
		h->to = get_be64(p + DDP_OFF_TO);
	} else {
		h->ulp_word = get_be32(p + DDP_OFF_RSVDULP2);
		h->qn = get_be32(p + DDP_OFF_QN);
		h->msn = get_be32(p + DDP_OFF_MSN);
		h->mo = get_be32(p + DDP_OFF_MO);
	}
	return (ssize_t)hl;
}

size_t ddp_hdr_encode(uint8_t *p, const struct ddp_hdr *h)
{
	/* RFC 5041 §4.2: reserved bits "MUST be set to zero by the sender" */
	p[DDP_OFF_CTRL] = (uint8_t)((h->tagged ? DDP_CTRL_T : 0) | (h->last ? DDP_CTRL_L : 0) |
				    (h->dv & DDP_CTRL_DV_MASK));
	p[DDP_OFF_RSVDULP] = h->ulp_ctrl;
	if (h->tagged) {
		put_be32(p + DDP_OFF_STAG, h->stag);
		put_be64(p + DDP_OFF_TO, h->to);
		return DDP_TAGGED_HDR_LEN;
	}
	put_be32(p + DDP_OFF_RSVDULP2, h->ulp_word);
	put_be32(p + DDP_OFF_QN, h->qn);
	put_be32(p + DDP_OFF_MSN, h->msn);
	put_be32(p + DDP_OFF_MO, h->mo);
	return DDP_UNTAGGED_HDR_LEN;
}
