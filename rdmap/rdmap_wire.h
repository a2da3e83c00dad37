/* SPDX-License-Identifier: MIT */
/*
 * RDMAP on-wire formats and codes (RFC 5040 §4, and the extensions of RFC
 * 7306: atomics and Immediate Data).  The RDMAP control octet is DDP's
 * RsvdULP octet: RV(0xC0) Rsvd(0x30) Opcode(0x0F).
 *
 * RFC 7306's sections are cited from its last draft
 * (draft-ietf-storm-rdmap-ext-10, whose wire values match the IANA
 * registries RFC 7306 created and whose Appendix A.2 erratum 4443 quotes);
 * docs/CONFORMANCE.md says what could not be read in the RFC itself.
 */
#ifndef UIW_RDMAP_WIRE_H
#define UIW_RDMAP_WIRE_H

#include "ddp_wire.h"

#define RDMAP_VERSION	    1
#define RDMAP_CTRL_RV_SHIFT 6
#define RDMAP_CTRL_OPCODE   0x0F
#define RDMAP_CTRL(op)	    ((uint8_t)(RDMAP_VERSION << RDMAP_CTRL_RV_SHIFT | (op)))

/* RFC 5040 §4.1 Figure 4 */
enum rdmap_opcode {
	RDMAP_OP_WRITE = 0,
	RDMAP_OP_READ_REQ = 1,
	RDMAP_OP_READ_RESP = 2,
	RDMAP_OP_SEND = 3,
	RDMAP_OP_SEND_INV = 4,
	RDMAP_OP_SEND_SE = 5,
	RDMAP_OP_SEND_SE_INV = 6,
	RDMAP_OP_TERMINATE = 7,
	RDMAP_NOPCODES = 8,
	/* RFC 7306 §4.1 Figure 2 (IANA "RDMAP Message Operation Codes"):
	 * only on a stream that enabled the extensions */
	RDMAP_OP_IMM = 8,
	RDMAP_OP_IMM_SE = 9,
	RDMAP_OP_ATOMIC_REQ = 10,
	RDMAP_OP_ATOMIC_RESP = 11
};

/* RFC 5040 §4.4: RDMA Read Request header (after the untagged DDP header). */
#define RDMAP_RREQ_LEN		 28
#define RDMAP_RREQ_OFF_SINK_STAG 0
#define RDMAP_RREQ_OFF_SINK_TO	 4
#define RDMAP_RREQ_OFF_SIZE	 12
#define RDMAP_RREQ_OFF_SRC_STAG	 16
#define RDMAP_RREQ_OFF_SRC_TO	 20

/*
 * RFC 7306 §5.2.1 Figure 4: Atomic Request header (after the untagged DDP
 * header, QN 1), 52 octets, big-endian.  The AOpCode is the low nibble of
 * the first word (28 reserved bits above it); the Request Identifier is
 * chosen by the requester and echoed in the response.
 */
#define RDMAP_AREQ_LEN		     52
#define RDMAP_AREQ_OFF_OPCODE	     0
#define RDMAP_AREQ_OFF_REQ_ID	     4
#define RDMAP_AREQ_OFF_STAG	     8
#define RDMAP_AREQ_OFF_TO	     12
#define RDMAP_AREQ_OFF_ADD_SWAP	     20
#define RDMAP_AREQ_OFF_ADD_SWAP_MASK 28
#define RDMAP_AREQ_OFF_CMP	     36
#define RDMAP_AREQ_OFF_CMP_MASK	     44
#define RDMAP_AREQ_AOPCODE	     0x0F

/* RFC 7306 §5.1, Figure 5 (IANA "RDMAP Message Atomic Operation Subcodes");
 * 1 is reserved, and both are mandatory for an RNIC with atomics. */
#define RDMAP_AOP_FETCHADD 0
#define RDMAP_AOP_CMPSWAP  2

/* RFC 7306 §5.2.2 Figure 6: Atomic Response header (QN 3), 12 octets. */
#define RDMAP_ARESP_LEN	       12
#define RDMAP_ARESP_OFF_REQ_ID 0
#define RDMAP_ARESP_OFF_ORIG   4

/* RFC 7306 §6.2 Figure 7: Immediate Data, exactly 8 octets (QN 0). */
#define RDMAP_IMM_LEN 8

/* The largest RDMAP header taken with an untagged DDP header. */
#define RDMAP_HDR_EXTRA_MAX RDMAP_AREQ_LEN

/*
 * RFC 5040 §4.8: Terminate header.  Terminate Control is Layer(4) EType(4)
 * Error Code(8) then HdrCt M D R (bits 16, 17, 18), 13 reserved bits; then
 * the DDP Segment Length (16), the terminated DDP header (14 or 18 octets)
 * and the terminated RDMA Read Request header (28 octets), as HdrCt says.
 */
#define RDMAP_TERM_CTRL_LEN   4
#define RDMAP_TERM_HDRCT_M    0x80 /* octet 2: DDP Segment Length valid */
#define RDMAP_TERM_HDRCT_D    0x40 /* octet 2: DDP header included */
#define RDMAP_TERM_HDRCT_R    0x20 /* octet 2: RDMAP header included */
#define RDMAP_TERM_SEGLEN_LEN 2
#define RDMAP_TERM_MAX \
	(RDMAP_TERM_CTRL_LEN + RDMAP_TERM_SEGLEN_LEN + DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN)

/* RDMAP layer error types and codes (RFC 5040 §4.8 Figure 9). */
#define RDMAP_ETYPE_CATASTROPHIC 0
#define RDMAP_ETYPE_REMOTE_PROT	 1
#define RDMAP_ETYPE_REMOTE_OP	 2

#define RDMAP_ECODE_INVALID_STAG    0x00
#define RDMAP_ECODE_BASE_BOUNDS	    0x01
#define RDMAP_ECODE_ACCESS	    0x02
#define RDMAP_ECODE_STAG_NOT_ASSOC  0x03
#define RDMAP_ECODE_TO_WRAP	    0x04
#define RDMAP_ECODE_INVALID_RDMAPV  0x05
#define RDMAP_ECODE_UNEXPECTED_OP   0x06
#define RDMAP_ECODE_CATA_LOCAL	    0x07
#define RDMAP_ECODE_CATA_GLOBAL	    0x08
#define RDMAP_ECODE_CANT_INVALIDATE 0x09
#define RDMAP_ECODE_UNSPECIFIED	    0xFF

#endif /* UIW_RDMAP_WIRE_H */
