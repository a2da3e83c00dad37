/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: mpa_rr_parse() on arbitrary octets, and for every frame
 * it accepts, mpa_rr_build() of the decoded fields must give a frame that
 * parses back to the same fields and equals the input except where the
 * receiver ignores bits (RFC 5044 §7.1.1 Res, R in a Request; RFC 6581 §6 S
 * with revision 1; §9.2 B, C, D with A = 0).
 *
 * Input: one selector octet, then the frame.
 *   bit 0     want_reply
 *   bits 1-3  pd_max: 0 (the RFC's 512), 1, 4, 16, 252, 256, 508, 512
 *   bit 4     pd_max from the next two octets instead (any value, even > 512)
 * The frame is copied into a buffer of exactly its size so that ASan sees
 * any read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t pd_max_tab[8] = {0, 1, 4, 16, 252, 256, 508, 512};

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

static void same_fields(const struct mpa_rr *a, const struct mpa_rr *b)
{
	CHECK(a->reply == b->reply && a->markers == b->markers && a->crc == b->crc);
	CHECK(a->reject == b->reject && a->rev == b->rev && a->enhanced == b->enhanced);
	CHECK(a->p2p == b->p2p && a->rtr == b->rtr && a->ird == b->ird && a->ord == b->ord);
	CHECK(a->pd_len == b->pd_len && a->ulp_pd_len == b->ulp_pd_len);
	CHECK(a->ulp_pd_len == 0 || memcmp(a->ulp_pd, b->ulp_pd, a->ulp_pd_len) == 0);
}

/* The octets a receiver must ignore, cleared as mpa_rr_build() leaves them. */
static void canonical(uint8_t *f, const struct mpa_rr *rr)
{
	uint8_t keep = MPA_RR_FLAG_MARKERS | MPA_RR_FLAG_CRC;

	if (rr->reply)
		keep |= MPA_RR_FLAG_REJECT;
	if (rr->enhanced)
		keep |= MPA_RR_FLAG_ENHANCED;
	f[MPA_RR_OFF_FLAGS] &= keep;
	if (rr->enhanced && !rr->p2p) {
		f[MPA_RR_HDR_LEN] &= (uint8_t) ~(MPA_V2_RTR_SEND >> 8);
		f[MPA_RR_HDR_LEN + 2] &= (uint8_t) ~((MPA_V2_RTR_WRITE | MPA_V2_RTR_READ) >> 8);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpa_rr rr, rr2;
	uint8_t out[MPA_RR_HDR_LEN + MPA_PD_MAX], *in, *canon;
	uint16_t pd_max, eff_max;
	ssize_t n, m;
	int want_reply;

	if (size < 1)
		return 0;
	want_reply = data[0] & 1;
	pd_max = pd_max_tab[(data[0] >> 1) & 7];
	if (data[0] & 0x10) {
		if (size < 3)
			return 0;
		pd_max = get_be16(data + 1);
		data += 2;
		size -= 2;
	}
	data++;
	size--;
	eff_max = pd_max == 0 || pd_max > MPA_PD_MAX ? MPA_PD_MAX : pd_max;

	in = malloc(size ? size : 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	n = mpa_rr_parse(in, size, want_reply, pd_max, &rr);
	if (n < 0) {
		CHECK(n == -EAGAIN || n == -EBADMSG || n == -EPROTONOSUPPORT || n == -EMSGSIZE ||
		      n == -EPROTO);
		/* The verdict depends on the 20-octet header alone: more octets
		 * never turn an error into a frame (only -EAGAIN may change). */
		if (n != -EAGAIN)
			CHECK(size >= MPA_RR_HDR_LEN);
		free(in);
		return 0;
	}

	/* A frame: its length, within the buffer, within pd_max. */
	CHECK((size_t)n <= size && n >= MPA_RR_HDR_LEN);
	CHECK((size_t)n == (size_t)MPA_RR_HDR_LEN + rr.pd_len && rr.pd_len <= eff_max);
	CHECK(rr.reply == want_reply && (rr.rev == 1 || rr.rev == 2));
	CHECK(rr.ulp_pd >= in + MPA_RR_HDR_LEN && rr.ulp_pd + rr.ulp_pd_len == in + n);
	CHECK(!rr.enhanced || rr.ulp_pd_len + MPA_V2_IRDORD_LEN == rr.pd_len);
	CHECK(rr.ird <= MPA_V2_IRD_ORD_MASK && rr.ord <= MPA_V2_IRD_ORD_MASK);
	CHECK(!(rr.rtr & ~(unsigned)MPA_RTR_ALL) && (rr.p2p || !rr.rtr));
	CHECK(!rr.reject || want_reply);

	/* Exactly the frame: one octet short is incomplete, the same frame
	 * alone parses identically. */
	CHECK(mpa_rr_parse(in, (size_t)n - 1, want_reply, pd_max, &rr2) == -EAGAIN);
	CHECK(mpa_rr_parse(in, (size_t)n, want_reply, pd_max, &rr2) == n);
	same_fields(&rr, &rr2);
	/* the other key never matches */
	CHECK(mpa_rr_parse(in, (size_t)n, !want_reply, pd_max, &rr2) == -EBADMSG);

	/* Round trip through the builder. */
	m = mpa_rr_build(out, sizeof(out), &rr);
	CHECK(m == n);
	CHECK(mpa_rr_parse(out, (size_t)m, want_reply, pd_max, &rr2) == m);
	same_fields(&rr, &rr2);
	canon = malloc((size_t)n);
	if (!canon)
		abort();
	memcpy(canon, in, (size_t)n);
	canonical(canon, &rr);
	CHECK(memcmp(canon, out, (size_t)n) == 0);
	/* A buffer one octet short is refused, never overrun. */
	CHECK(mpa_rr_build(out, (size_t)n - 1, &rr) == -ENOBUFS);
	free(canon);
	free(in);
	return 0;
}
