/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the DDP segment header codec (RFC 5041 §4) and the
 * RDMAP Terminate header codec (RFC 5040 §4.8) on arbitrary octets.
 *
 * Input: one selector octet, then the octets to decode.
 *  selector bit 0  also decode the input as a Terminate header
 *                  (the DDP header is decoded every time)
 *
 * Each codec gets its own exact-size heap copy of the octets, so that
 * AddressSanitizer sees a read one octet past what it was given.
 *
 * DDP: whatever decodes must re-encode to the same octets, with the
 * reserved control bits cleared (RFC 5041 §4.2: "MUST be set to zero by the
 * sender"), and decode again to the same fields; -EAGAIN exactly when the
 * input is shorter than the header its T bit announces.
 *
 * Terminate: whatever decodes must re-encode (RFC bit order) and decode
 * again to the same cause and copied headers; an encoding never exceeds
 * RDMAP_TERM_MAX, and what was encoded is never read as siw's layout.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "rdmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

static int ddp_hdr_eq(const struct ddp_hdr *a, const struct ddp_hdr *b)
{
	return a->tagged == b->tagged && a->last == b->last && a->dv == b->dv &&
	       a->ulp_ctrl == b->ulp_ctrl && a->stag == b->stag && a->to == b->to &&
	       a->ulp_word == b->ulp_word && a->qn == b->qn && a->msn == b->msn && a->mo == b->mo;
}

static void fuzz_ddp(const uint8_t *p, size_t len)
{
	struct ddp_hdr h, h2;
	uint8_t enc[DDP_UNTAGGED_HDR_LEN];
	ssize_t hl;
	size_t el;

	hl = ddp_hdr_decode(p, len, &h);
	if (len == 0 || len < ddp_hdr_len(p[0])) {
		CHECK(hl == -EAGAIN);
		return;
	}
	CHECK(hl == (ssize_t)ddp_hdr_len(p[0]));
	CHECK(h.tagged == !!(p[0] & DDP_CTRL_T) && h.last == !!(p[0] & DDP_CTRL_L));
	CHECK(h.dv == (p[0] & DDP_CTRL_DV_MASK));
	/* fields of the other buffer model stay zero */
	if (h.tagged)
		CHECK(!h.ulp_word && !h.qn && !h.msn && !h.mo);
	else
		CHECK(!h.stag && !h.to);

	el = ddp_hdr_encode(enc, &h);
	CHECK(el == (size_t)hl);
	CHECK(enc[0] == (p[0] & ~DDP_CTRL_RSVD));
	CHECK(memcmp(enc + 1, p + 1, el - 1) == 0);
	CHECK(ddp_hdr_decode(enc, el, &h2) == hl);
	CHECK(ddp_hdr_eq(&h, &h2));
	/* one octet short of the header is -EAGAIN, whatever follows */
	CHECK(ddp_hdr_decode(enc, el - 1, &h2) == -EAGAIN);
}

static int term_eq(const struct rdmap_term *a, const struct rdmap_term *b)
{
	if (a->layer != b->layer || a->etype != b->etype || a->ecode != b->ecode ||
	    a->hdrct != b->hdrct)
		return 0;
	if ((a->hdrct & (RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D)) && a->seg_len != b->seg_len)
		return 0;
	if (a->hdrct & RDMAP_TERM_HDRCT_D) {
		if (a->ddp_hdr_len != b->ddp_hdr_len ||
		    memcmp(a->ddp_hdr, b->ddp_hdr, a->ddp_hdr_len))
			return 0;
	}
	if ((a->hdrct & RDMAP_TERM_HDRCT_R) && memcmp(a->rdma_hdr, b->rdma_hdr, RDMAP_RREQ_LEN))
		return 0;
	return 1;
}

static void fuzz_term(const uint8_t *p, size_t len)
{
	struct rdmap_term t, t2;
	uint8_t enc[RDMAP_TERM_MAX + 8];
	size_t el;
	int ret;

	ret = rdmap_term_decode(p, len, &t);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (len < RDMAP_TERM_CTRL_LEN)
		CHECK(ret == -EBADMSG);
	if (ret)
		return;
	CHECK(t.layer < 16 && t.etype < 16);
	CHECK(!(t.hdrct & ~(RDMAP_TERM_HDRCT_M | RDMAP_TERM_HDRCT_D | RDMAP_TERM_HDRCT_R)));
	if (t.hdrct & RDMAP_TERM_HDRCT_D)
		CHECK(t.ddp_hdr_len == DDP_TAGGED_HDR_LEN || t.ddp_hdr_len == DDP_UNTAGGED_HDR_LEN);
	/* the name table must cover every triple a peer can send */
	CHECK(rdmap_term_name(t.layer, t.etype, t.ecode) != NULL);

	memset(enc, 0xEE, sizeof(enc));
	el = rdmap_term_encode(&t, enc);
	CHECK(el <= RDMAP_TERM_MAX);
	CHECK(enc[el] == 0xEE);			/* nothing written past the length returned */
	CHECK(enc[3] == 0 && !(enc[2] & 0x1F)); /* reserved bits zero */
	ret = rdmap_term_decode(enc, el, &t2);
	CHECK(ret == 0);
	CHECK(!t2.siw_layout);
	CHECK(term_eq(&t, &t2));
	/* the encoding is exactly as long as it needs to be */
	if (el > RDMAP_TERM_CTRL_LEN)
		CHECK(rdmap_term_decode(enc, el - 1, &t2) == -EBADMSG);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel;
	uint8_t *copy;
	size_t len;

	if (size < 1)
		return 0;
	sel = data[0];
	len = size - 1;
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	/* a zero-length input must not be read: give it a pointer past the end */
	memcpy(copy, data + 1, len);
	fuzz_ddp(len ? copy : copy + 1, len);
	if (sel & 1) {
		free(copy);
		copy = malloc(len ? len : 1);
		if (!copy)
			return 0;
		memcpy(copy, data + 1, len);
		fuzz_term(len ? copy : copy + 1, len);
	}
	free(copy);
	return 0;
}
