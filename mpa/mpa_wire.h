/* SPDX-License-Identifier: MIT */
/*
 * MPA on-wire formats and codes: RFC 5044 §4 (FPDU, Marker, CRC), §7.1.1
 * (Request/Reply frames) and RFC 6581 (revision 2: IRD/ORD words, peer-to-peer
 * mode, ready-to-receive (RTR) messages).
 */
#ifndef UIW_MPA_WIRE_H
#define UIW_MPA_WIRE_H

/* RFC 5044 §7.1.1, Figure 8: MPA Request/Reply frame. */
#define MPA_KEY_LEN	 16
#define MPA_KEY_REQ	 "MPA ID Req Frame"
#define MPA_KEY_REP	 "MPA ID Rep Frame"
#define MPA_RR_HDR_LEN	 20 /* key(16) flags(1) rev(1) PD_Length(2) */
#define MPA_RR_OFF_FLAGS 16
#define MPA_RR_OFF_REV	 17
#define MPA_RR_OFF_PDLEN 18

#define MPA_RR_FLAG_MARKERS 0x80 /* M: markers required toward the sender */
#define MPA_RR_FLAG_CRC	    0x40 /* C: CRC preferred */
#define MPA_RR_FLAG_REJECT  0x20 /* R: rejected connection (Reply only) */
/*
 * RFC 6581 §6, S: "One, if the Private Data begins with the enhanced RDMA
 * connection establishment data; 0 otherwise."  Meaningful with Rev >= 2
 * only ("To use any enhanced connection establishment feature, this MUST be
 * set to two or higher"); siw and iw_cxgb4 call it MPA_RR_FLAG_ENHANCED.
 */
#define MPA_RR_FLAG_ENHANCED 0x10
#define MPA_RR_FLAG_RES_MASK 0x0F

#define MPA_REVISION_1 1
#define MPA_REVISION_2 2

/* RFC 5044 §7.1.1: "The Private Data field MUST be between 0 and 512 octets" */
#define MPA_PD_MAX 512

/*
 * RFC 6581 §9: the first four private-data octets of an enhanced (S=1)
 * frame, two big-endian 16-bit words.
 *   word 0: |A|B| IRD (14) |   A = peer-to-peer, B = zero-length Send RTR
 *   word 1: |C|D| ORD (14) |   C = zero-length Write RTR, D = zero-length Read RTR
 */
#define MPA_V2_IRDORD_LEN   4
#define MPA_V2_PEER_TO_PEER 0x8000 /* in the IRD word */
#define MPA_V2_RTR_SEND	    0x4000 /* in the IRD word */
#define MPA_V2_RTR_WRITE    0x8000 /* in the ORD word */
#define MPA_V2_RTR_READ	    0x4000 /* in the ORD word */
#define MPA_V2_IRD_ORD_MASK 0x3FFF
/* RFC 6581 §9.1: all ones: "automatic negotiation ... is not desired" */
#define MPA_V2_IRD_ORD_ULP 0x3FFF

/* RFC 5044 §4.1-§4.3: FPDU and Marker. */
#define MPA_HDR_LEN	  2 /* ULPDU_Length */
#define MPA_CRC_LEN	  4
#define MPA_MARKER_LEN	  4
#define MPA_MARKER_PERIOD 512
#define MPA_ULPDU_MAX	  65535
/* RFC 5044 §4.5: "MPA MUST NOT provide a MULPDU smaller than 128."
 * RFC 5044 §3: "The range of MULPDU values MUST be between 128 octets and
 * 64768 octets, inclusive."  (Receivers still take ULPDU_Length up to 65535.) */
#define MPA_MULPDU_MIN 128
#define MPA_MULPDU_MAX 64768

/* RFC 5040 §7 / RFC 5044 §8: TERMINATE layer and the LLP (MPA) error codes. */
#define MPA_TERM_LAYER_LLP	   2
#define MPA_TERM_ETYPE_LLP	   0
#define MPA_ECODE_TCP_LOST	   0x01 /* TCP connection closed, terminated or lost */
#define MPA_ECODE_CRC		   0x02 /* received MPA CRC does not match */
#define MPA_ECODE_MARKER	   0x03 /* Marker and ULPDU_Length disagree on FPDU start */
#define MPA_ECODE_INVALID_RR	   0x04 /* invalid MPA Request or Reply frame */
#define MPA_ECODE_LOCAL_CATA	   0x05 /* local catastrophic error */
#define MPA_ECODE_INSUFFICIENT_IRD 0x06 /* RFC 6581: insufficient IRD resources */
#define MPA_ECODE_NO_MATCHING_RTR  0x07 /* RFC 6581: no matching RTR model */

/*
 * DDP/RDMAP header bytes of the RFC 6581 RTR messages (RFC 5041 §4, RFC 5040
 * §4): control words and the STag siw and Chelsio expect in a zero-length
 * Write or Read RTR (hardware drops tagged DDP with STag 0).
 */
#define MPA_RTR_STAG 1u

#endif /* UIW_MPA_WIRE_H */
