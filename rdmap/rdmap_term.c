/* SPDX-License-Identifier: MIT */
/* Terminate header codec and names (RFC 5040 §4.8). */
#include "rdmap_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "byteorder.h"

size_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf)
{
	size_t n = RDMAP_TERM_CTRL_LEN;

	/* "Layer: 4 bits", "EType: 4 bits", "Error Code: 8 bits", then HdrCt
	 * M, D, R at bits 16-18; "Reserved: 13 bits ... MUST be set to zero" */
	buf[0] = (uint8_t)((t->layer & 0xF) << 4 | (t->etype & 0xF));
	buf[1] = t->ecode;
	buf[2] = t->hdrct & (RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D | RDMAP_TERM_HDRCT_R);
	buf[3] = 0;
	/* "DDP Segment Length ... MUST be present when the D bit is set." */
	if (t->hdrct & (RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D)) {
		put_be16(buf + n, t->seg_len);
		n += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->hdrct & RDMAP_TERM_HDRCT_D) {
		memcpy(buf + n, t->ddp_hdr, t->ddp_hdr_len);
		n += t->ddp_hdr_len;
	}
	if (t->hdrct & RDMAP_TERM_HDRCT_R) {
		memcpy(buf + n, t->rdma_hdr, RDMAP_RREQ_LEN);
		n += RDMAP_RREQ_LEN;
	}
	return n;
}

/* Is @layer/@etype/@ecode a cause RFC 5040 Figure 9 defines (RFC 5044 §8
 * and RFC 6581 for the LLP codes)?  The code matters: siw's "02 02" (LLP CRC)
 * read in RFC order is 0/2/0x02, a defined layer and type but no code. */
static int plausible(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	switch (layer) {
	case TERM_LAYER_RDMAP:
		if (etype == RDMAP_ETYPE_CATASTROPHIC)
			return 1; /* "Any value in this field is acceptable" */
		if (ecode == RDMAP_ECODE_UNSPECIFIED)
			return etype <= RDMAP_ETYPE_REMOTE_OP;
		if (etype == RDMAP_ETYPE_REMOTE_PROT)
			return ecode <= RDMAP_ECODE_TO_WRAP || ecode == RDMAP_ECODE_CANT_INVALIDATE;
		if (etype == RDMAP_ETYPE_REMOTE_OP)
			return ecode >= RDMAP_ECODE_INVALID_RDMAPV &&
			       ecode <= RDMAP_ECODE_CANT_INVALIDATE;
		return 0;
	case TERM_LAYER_DDP:
		if (etype == DDP_ETYPE_CATASTROPHIC)
			return ecode == DDP_ECODE_CATASTROPHIC;
		if (etype == DDP_ETYPE_TAGGED)
			return ecode <= DDP_ECODE_T_INVALID_DDPV;
		if (etype == DDP_ETYPE_UNTAGGED)
			return ecode >= DDP_ECODE_U_INVALID_QN && ecode <= DDP_ECODE_U_INVALID_DDPV;
		return 0;
	case TERM_LAYER_LLP:
		return etype == MPA_TERM_ETYPE_LLP && ecode >= MPA_ECODE_TCP_LOST &&
		       ecode <= MPA_ECODE_NO_MATCHING_RTR;
	default:
		return 0;
	}
}

int rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t)
{
	uint8_t rfc_l, rfc_e, siw_l, siw_e, hdrct;
	size_t n = RDMAP_TERM_CTRL_LEN;
	int rfc_ok, siw_ok;

	memset(t, 0, sizeof(*t));
	if (len < RDMAP_TERM_CTRL_LEN)
		return -EBADMSG;
	rfc_l = buf[0] >> 4;
	rfc_e = buf[0] & 0xF;
	siw_l = buf[0] & 0xF;
	siw_e = buf[0] >> 4;
	rfc_ok = plausible(rfc_l, rfc_e, buf[1]);
	siw_ok = plausible(siw_l, siw_e, buf[1]);
	/*
	 * siw builds the control field from little-endian bitfields: Layer in
	 * the low nibble, HdrCt M/D/R as 0x01/0x02/0x04 of octet 2 (seen on
	 * the wire from siw 6.1).  Decide by which reading is a defined
	 * layer/type/code, then by where the HdrCt bits are.
	 */
	if (rfc_ok && !siw_ok) {
		t->siw_layout = 0;
	} else if (!rfc_ok && siw_ok) {
		t->siw_layout = 1;
	} else {
		t->siw_layout = (buf[2] & 0x07) && !(buf[2] & 0xE0);
	}
	if (t->siw_layout) {
		t->layer = siw_l;
		t->etype = siw_e;
		hdrct = (uint8_t)(((buf[2] & 1) ? RDMAP_TERM_HDRCT_M : 0) |
				  ((buf[2] & 2) ? RDMAP_TERM_HDRCT_D : 0) |
				  ((buf[2] & 4) ? RDMAP_TERM_HDRCT_R : 0));
	} else {
		t->layer = rfc_l;
		t->etype = rfc_e;
		hdrct = buf[2] & 0xE0;
	}
	t->ecode = buf[1];
	t->hdrct = hdrct;
	if (hdrct & (RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D)) {
		if (len < n + RDMAP_TERM_SEGLEN_LEN)
			return -EBADMSG;
		t->seg_len = get_be16(buf + n);
		n += RDMAP_TERM_SEGLEN_LEN;
	}
	if (hdrct & RDMAP_TERM_HDRCT_D) {
		size_t dl;

		if (len < n + 1)
			return -EBADMSG;
		dl = ddp_hdr_len(buf[n]);
		if (len < n + dl)
			return -EBADMSG;
		memcpy(t->ddp_hdr, buf + n, dl);
		t->ddp_hdr_len = (uint8_t)dl;
		n += dl;
	}
	if (hdrct & RDMAP_TERM_HDRCT_R) {
		if (len < n + RDMAP_RREQ_LEN)
			return -EBADMSG;
		memcpy(t->rdma_hdr, buf + n, RDMAP_RREQ_LEN);
	}
	return 0;
}

const char *rdmap_term_name(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	static const char *const rdmap_codes[] = {"invalid STag",
						  "base or bounds violation",
						  "access rights violation",
						  "STag not associated with RDMAP stream",
						  "TO wrap",
						  "invalid RDMAP version",
						  "unexpected opcode",
						  "catastrophic error, localized to RDMAP stream",
						  "catastrophic error, global",
						  "STag cannot be invalidated"};
	static const char *const ddp_tagged[] = {"invalid STag", "base or bounds violation",
						 "STag not associated with DDP stream", "TO wrap",
						 "invalid DDP version"};
	static const char *const ddp_untagged[] = {"?",
						   "invalid QN",
						   "invalid MSN - no buffer available",
						   "invalid MSN - MSN range is not valid",
						   "invalid MO",
						   "DDP message too long for available buffer",
						   "invalid DDP version"};

	switch (layer) {
	case TERM_LAYER_RDMAP:
		if (ecode == RDMAP_ECODE_UNSPECIFIED)
			return "RDMAP: unspecified error";
		return ecode < 10 ? rdmap_codes[ecode] : "RDMAP: unknown error code";
	case TERM_LAYER_DDP:
		if (etype == DDP_ETYPE_CATASTROPHIC)
			return "DDP: local catastrophic";
		if (etype == DDP_ETYPE_TAGGED)
			return ecode < 5 ? ddp_tagged[ecode] : "DDP tagged: unknown error code";
		if (etype == DDP_ETYPE_UNTAGGED)
			return ecode >= 1 && ecode < 7 ? ddp_untagged[ecode]
						       : "DDP untagged: unknown error code";
		return "DDP: unknown error type";
	case TERM_LAYER_LLP:
		return mpa_ecode_name(ecode);
	default:
		return "unknown layer";
	}
}
