/* SPDX-License-Identifier: MIT */
/*
 * DDP on-wire formats and codes (RFC 5041 §4, §7).  All fields are
 * big-endian and are
 * read and written with byteorder.h, never through struct casts.
 *
 *   +0 control: T(0x80) L(0x40) Rsvd(0x3C) DV(0x03)
 *   +1 RsvdULP octet (RDMAP control: RV(0xC0) Rsvd(0x30) Opcode(0x0F))
 *   tagged:   +2 STag(32) +6 TO(64)                         14 octets
 *   untagged: +2 RsvdULP(32) +6 QN(32) +10 MSN(32) +14 MO(32) 18 octets
 */
#ifndef UIW_DDP_WIRE_H
#define UIW_DDP_WIRE_H

#define DDP_CTRL_T	 0x80
#define DDP_CTRL_L	 0x40
#define DDP_CTRL_RSVD	 0x3C
#define DDP_CTRL_DV_MASK 0x03
#define DDP_VERSION	 1

#define DDP_TAGGED_HDR_LEN   14
#define DDP_UNTAGGED_HDR_LEN 18

#define DDP_OFF_CTRL	 0
#define DDP_OFF_RSVDULP	 1
#define DDP_OFF_STAG	 2
#define DDP_OFF_TO	 6
#define DDP_OFF_RSVDULP2 2 /* untagged: 32-bit RsvdULP (RDMAP Invalidate STag) */
#define DDP_OFF_QN	 6
#define DDP_OFF_MSN	 10
#define DDP_OFF_MO	 14

/* Untagged queues used by RDMAP (RFC 5040 §4.1 Figure 4; queue 3 is RFC
 * 7306's, valid only on a stream with its extensions enabled). */
#define DDP_QN_SEND	   0
#define DDP_QN_READ_REQ	   1
#define DDP_QN_TERMINATE   2
#define DDP_QN_ATOMIC_RESP 3
#define DDP_NQUEUES	   4

/* Terminate layers and DDP error types/codes (RFC 5040 §4.8). */
#define TERM_LAYER_RDMAP 0
#define TERM_LAYER_DDP	 1
#define TERM_LAYER_LLP	 2

#define DDP_ETYPE_CATASTROPHIC 0
#define DDP_ETYPE_TAGGED       1
#define DDP_ETYPE_UNTAGGED     2

#define DDP_ECODE_CATASTROPHIC	      0x00 /* unspecified catastrophic */
#define DDP_ECODE_T_INVALID_STAG      0x00
#define DDP_ECODE_T_BASE_BOUNDS	      0x01
#define DDP_ECODE_T_STAG_NOT_ASSOC    0x02
#define DDP_ECODE_T_TO_WRAP	      0x03
#define DDP_ECODE_T_INVALID_DDPV      0x04
#define DDP_ECODE_U_INVALID_QN	      0x01
#define DDP_ECODE_U_INVALID_MSN_NOBUF 0x02
#define DDP_ECODE_U_INVALID_MSN_RANGE 0x03
#define DDP_ECODE_U_INVALID_MO	      0x04
#define DDP_ECODE_U_MSG_TOO_LONG      0x05
#define DDP_ECODE_U_INVALID_DDPV      0x06

#endif /* UIW_DDP_WIRE_H */
