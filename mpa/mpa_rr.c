/* SPDX-License-Identifier: MIT */
/*
 * MPA Request/Reply frames (RFC 5044 §7.1.1, RFC 6581 §5), RTR messages
 * (RFC 6581 §6) and the MULPDU formula (RFC 5044 §4.5).
 */
#include "mpa.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"

ssize_t mpa_rr_parse(const uint8_t *buf, size_t len, int want_reply, uint16_t pd_max,
		     struct mpa_rr *rr)
{
	const char *key = want_reply ? MPA_KEY_REP : MPA_KEY_REQ;
	uint16_t pd_len;
	uint8_t flags, rev;

	if (pd_max == 0 || pd_max > MPA_PD_MAX)
		pd_max = MPA_PD_MAX;
	if (len < MPA_RR_HDR_LEN)
		return -EAGAIN;
	/*
	 * RFC 5044 §7.1.1: "Responder mode receivers MUST check this field for
	 * the same value, and close the connection and report an error locally
	 * if any other value is detected."  (Likewise for initiators.)
	 */
	if (memcmp(buf, key, MPA_KEY_LEN) != 0)
		return -EBADMSG;
	flags = buf[MPA_RR_OFF_FLAGS];
	rev = buf[MPA_RR_OFF_REV];
	pd_len = get_be16(buf + MPA_RR_OFF_PDLEN);
	/*
	 * "MPA receivers compliant with this version of the specification MUST
	 * check this field.  If the MPA receiver cannot interoperate with the
	 * received version, then it MUST close the connection".  We speak 1 and
	 * 2 (RFC 6581); siw also takes 0, a pre-RFC draft we do not implement.
	 */
	if (rev != MPA_REVISION_1 && rev != MPA_REVISION_2)
		return -EPROTONOSUPPORT;
	/* "... or if the length of the Private Data field exceeds 512 octets,
	 * the receiver MUST close the connection" */
	if (pd_len > pd_max)
		return -EMSGSIZE;
	/* RFC 6581 §6: "if the 'S' flag is set, Private Data MUST begin with
	 * enhanced RDMA connection establishment data" */
	if (rev >= MPA_REVISION_2 && (flags & MPA_RR_FLAG_ENHANCED) && pd_len < MPA_V2_IRDORD_LEN)
		return -EPROTO;
	if (len < (size_t)MPA_RR_HDR_LEN + pd_len)
		return -EAGAIN;

	memset(rr, 0, sizeof(*rr));
	rr->reply = want_reply ? 1 : 0;
	rr->markers = !!(flags & MPA_RR_FLAG_MARKERS);
	rr->crc = !!(flags & MPA_RR_FLAG_CRC);
	/* R "is set to zero, and not checked on reception in the MPA Request" */
	rr->reject = want_reply ? !!(flags & MPA_RR_FLAG_REJECT) : 0;
	rr->enhanced = rev >= MPA_REVISION_2 && (flags & MPA_RR_FLAG_ENHANCED);
	rr->rev = rev;
	rr->pd_len = pd_len;
	rr->ulp_pd = buf + MPA_RR_HDR_LEN;
	rr->ulp_pd_len = pd_len;
	if (rr->enhanced) {
		uint16_t w0 = get_be16(buf + MPA_RR_HDR_LEN);
		uint16_t w1 = get_be16(buf + MPA_RR_HDR_LEN + 2);

		rr->p2p = !!(w0 & MPA_V2_PEER_TO_PEER);
		/* RFC 6581 §9.2: "On reception, if Control Flag A is set to 0,
		 * then Control Flags B, C, and D MUST be ignored." */
		rr->rtr = !rr->p2p ? 0
				   : ((w0 & MPA_V2_RTR_SEND) ? MPA_RTR_SEND : 0) |
					     ((w1 & MPA_V2_RTR_WRITE) ? MPA_RTR_WRITE : 0) |
					     ((w1 & MPA_V2_RTR_READ) ? MPA_RTR_READ : 0);
		rr->ird = w0 & MPA_V2_IRD_ORD_MASK;
		rr->ord = w1 & MPA_V2_IRD_ORD_MASK;
		rr->ulp_pd += MPA_V2_IRDORD_LEN;
		rr->ulp_pd_len -= MPA_V2_IRDORD_LEN;
	}
	return (ssize_t)MPA_RR_HDR_LEN + pd_len;
}

ssize_t mpa_rr_build(uint8_t *buf, size_t cap, const struct mpa_rr *rr)
{
	size_t extra = rr->enhanced ? MPA_V2_IRDORD_LEN : 0;
	size_t pd_len = extra + rr->ulp_pd_len;
	uint8_t flags = 0;

	if (rr->rev != MPA_REVISION_1 && rr->rev != MPA_REVISION_2)
		return -EINVAL;
	if (rr->enhanced && rr->rev < MPA_REVISION_2)
		return -EINVAL;
	/* RFC 6581 §9.2: "If Control Flag A is set to 0, then Control Flags B,
	 * C, and D MUST also be set to 0." */
	if (rr->ird > MPA_V2_IRD_ORD_MASK || rr->ord > MPA_V2_IRD_ORD_MASK ||
	    (rr->rtr & ~(unsigned)MPA_RTR_ALL) || (rr->rtr && !rr->p2p) ||
	    ((rr->p2p || rr->rtr) && !rr->enhanced))
		return -EINVAL;
	if (pd_len > MPA_PD_MAX)
		return -EMSGSIZE;
	if (cap < MPA_RR_HDR_LEN + pd_len)
		return -ENOBUFS;

	memcpy(buf, rr->reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);
	if (rr->markers)
		flags |= MPA_RR_FLAG_MARKERS;
	if (rr->crc)
		flags |= MPA_RR_FLAG_CRC;
	if (rr->reply && rr->reject)
		flags |= MPA_RR_FLAG_REJECT;
	if (rr->enhanced)
		flags |= MPA_RR_FLAG_ENHANCED;
	buf[MPA_RR_OFF_FLAGS] = flags;
	buf[MPA_RR_OFF_REV] = rr->rev;
	put_be16(buf + MPA_RR_OFF_PDLEN, (uint16_t)pd_len);
	if (extra) {
		uint16_t w0 = rr->ird, w1 = rr->ord;

		if (rr->p2p)
			w0 |= MPA_V2_PEER_TO_PEER;
		if (rr->rtr & MPA_RTR_SEND)
			w0 |= MPA_V2_RTR_SEND;
		if (rr->rtr & MPA_RTR_WRITE)
			w1 |= MPA_V2_RTR_WRITE;
		if (rr->rtr & MPA_RTR_READ)
			w1 |= MPA_V2_RTR_READ;
		put_be16(buf + MPA_RR_HDR_LEN, w0);
		put_be16(buf + MPA_RR_HDR_LEN + 2, w1);
	}
	if (rr->ulp_pd_len)
		memcpy(buf + MPA_RR_HDR_LEN + extra, rr->ulp_pd, rr->ulp_pd_len);
	return (ssize_t)(MPA_RR_HDR_LEN + pd_len);
}

/*
 * DDP (RFC 5041 §4) and RDMAP (RFC 5040 §4) header octets of the RTR
 * messages.  Only this much of DDP/RDMAP is known here; the full codecs live
 * in ddp/ and rdmap/.
 */
#define RTR_DDP_TAGGED_LAST   0xC1 /* T=1 L=1 DV=1 */
#define RTR_DDP_UNTAGGED_LAST 0x41 /* T=0 L=1 DV=1 */
#define RTR_RDMAP_WRITE	      0x40 /* RV=1, opcode 0 */
#define RTR_RDMAP_READ_REQ    0x41 /* RV=1, opcode 1 */
#define RTR_RDMAP_SEND	      0x43 /* RV=1, opcode 3 */
#define RTR_TAGGED_HDR	      14
#define RTR_UNTAGGED_HDR      18
#define RTR_READ_REQ_LEN      28

ssize_t mpa_rtr_encode(unsigned rtr, uint8_t *buf, size_t cap)
{
	size_t len;

	switch (rtr) {
	case MPA_RTR_WRITE:
		len = RTR_TAGGED_HDR;
		break;
	case MPA_RTR_READ:
		len = RTR_UNTAGGED_HDR + RTR_READ_REQ_LEN;
		break;
	case MPA_RTR_SEND:
		len = RTR_UNTAGGED_HDR;
		break;
	default:
		return -EINVAL;
	}
	if (cap < len)
		return -ENOBUFS;
	memset(buf, 0, len);
	if (rtr == MPA_RTR_WRITE) {
		buf[0] = RTR_DDP_TAGGED_LAST;
		buf[1] = RTR_RDMAP_WRITE;
		put_be32(buf + 2, MPA_RTR_STAG); /* STag 1, TO 0 */
		return (ssize_t)len;
	}
	buf[0] = RTR_DDP_UNTAGGED_LAST;
	buf[1] = rtr == MPA_RTR_READ ? RTR_RDMAP_READ_REQ : RTR_RDMAP_SEND;
	put_be32(buf + 6, rtr == MPA_RTR_READ ? 1 : 0); /* QN */
	put_be32(buf + 10, 1);				/* MSN 1 */
	/* MO 0; Read Request: sink STag 1, sink TO 0, size 0, source STag 1, TO 0 */
	if (rtr == MPA_RTR_READ) {
		put_be32(buf + RTR_UNTAGGED_HDR, MPA_RTR_STAG);
		put_be32(buf + RTR_UNTAGGED_HDR + 16, MPA_RTR_STAG);
	}
	return (ssize_t)len;
}

int mpa_rtr_match(unsigned rtr, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len)
{
	switch (rtr) {
	case MPA_RTR_WRITE:
		/* zero-length tagged Write; siw and Chelsio use STag 1, other
		 * peers may not, so the STag is not compared */
		return ulpdu_len == RTR_TAGGED_HDR && hdr_len >= RTR_TAGGED_HDR &&
		       hdr[0] == RTR_DDP_TAGGED_LAST && hdr[1] == RTR_RDMAP_WRITE &&
		       get_be64(hdr + 6) == 0;
	case MPA_RTR_READ:
	case MPA_RTR_SEND:
		if (hdr_len < RTR_UNTAGGED_HDR)
			return 0;
		if (ulpdu_len !=
		    (rtr == MPA_RTR_READ ? RTR_UNTAGGED_HDR + RTR_READ_REQ_LEN : RTR_UNTAGGED_HDR))
			return 0;
		return hdr[0] == RTR_DDP_UNTAGGED_LAST &&
		       hdr[1] == (rtr == MPA_RTR_READ ? RTR_RDMAP_READ_REQ : RTR_RDMAP_SEND) &&
		       get_be32(hdr + 6) == (rtr == MPA_RTR_READ ? 1u : 0u) &&
		       get_be32(hdr + 10) == 1 && get_be32(hdr + 14) == 0;
	default:
		return 0;
	}
}

uint32_t mpa_mulpdu(uint32_t emss, int markers)
{
	uint32_t ovh = 6 + emss % 4;
	uint32_t m;

	/* RFC 5044 §4.5:
	 * with markers:    MULPDU = EMSS - (6 + 4 * Ceiling(EMSS / 512) + EMSS mod 4)
	 * without markers: MULPDU = EMSS - (6 + EMSS mod 4) */
	if (markers)
		ovh += 4 * ((emss + 511) / 512);
	m = emss > ovh ? emss - ovh : 0;
	/* "the MPA on TCP sender MUST NOT shrink the MULPDU below 128 octets" */
	if (m < MPA_MULPDU_MIN)
		m = MPA_MULPDU_MIN;
	if (m > MPA_MULPDU_MAX)
		m = MPA_MULPDU_MAX;
	return m;
}
