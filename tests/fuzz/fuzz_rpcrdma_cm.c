/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: RFC 8797 CM private data (rpcrdma/rpcrdma_cm.c).
 *
 * Input: the private data as received (after the MPA IRD/ORD words, or
 * with them).  rpcrdma_cm_decode() on a buffer of exactly that size: a
 * result must be the first Format Identifier in the buffer, with version 1
 * and eight octets present, decode to sizes 1024..262144 in steps of 1024,
 * and re-encode to the same eight octets with the Reserved bits cleared
 * (decode -> encode -> decode gives the same values); a failure must leave
 * the RFC 8797 §5.1 defaults.  Then the negotiation from both ends, with
 * our own sizes taken from the first two octets: each direction's
 * threshold is the same number seen from either end, never above what
 * either side announced, and remote invalidation needs both R bits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "rpcrdma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

static int size_ok(uint32_t s)
{
	return s >= RPCRDMA_INLINE_MIN && s <= RPCRDMA_INLINE_MAX && s % 1024 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_pd pd, pd2, mine;
	struct rpcrdma_inline a, b;
	uint8_t *in, out[RPCRDMA_CM_LEN];
	ssize_t r;

	in = malloc(size ? size : 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	r = rpcrdma_cm_decode(in, size, &pd);
	if (r >= 0) {
		size_t off = (size_t)r;

		CHECK(off + RPCRDMA_CM_LEN <= size);
		CHECK(get_be32(in + off) == RPCRDMA_CM_MAGIC && in[off + 4] == 1);
		for (size_t i = 0; i < off; i++)
			CHECK(get_be32(in + i) != RPCRDMA_CM_MAGIC);
		CHECK(size_ok(pd.send_size) && size_ok(pd.recv_size));
		CHECK(pd.remote_inv == (in[off + 5] & 1));
		CHECK(rpcrdma_cm_encode(out, sizeof(out), &pd) == RPCRDMA_CM_LEN);
		CHECK(rpcrdma_cm_encode(out, sizeof(out) - 1, &pd) == -EMSGSIZE);
		CHECK(memcmp(out, in + off, 5) == 0 && out[5] == (in[off + 5] & 1));
		CHECK(out[6] == in[off + 6] && out[7] == in[off + 7]);
		CHECK(rpcrdma_cm_decode(out, sizeof(out), &pd2) == 0);
		CHECK(pd2.remote_inv == pd.remote_inv && pd2.send_size == pd.send_size &&
		      pd2.recv_size == pd.recv_size);
	} else {
		CHECK(r == -ENOENT || r == -EBADMSG || r == -EPROTONOSUPPORT);
		CHECK(!pd.remote_inv && pd.send_size == 1024 && pd.recv_size == 1024);
		if (r == -ENOENT)
			for (size_t i = 0; i + 4 <= size; i++)
				CHECK(get_be32(in + i) != RPCRDMA_CM_MAGIC);
	}

	/* our own end: sizes from the first octets, any value */
	rpcrdma_cm_pd_init(&mine, size > 0 ? (uint32_t)in[0] * 1100u : 0,
			   size > 1 ? (uint32_t)in[1] * 1100u : 0, size > 2 && (in[2] & 1));
	CHECK(size_ok(mine.send_size) && size_ok(mine.recv_size));
	rpcrdma_cm_negotiate(&mine, &pd, r, &a);
	rpcrdma_cm_negotiate(&pd, &mine, 0, &b);
	CHECK(a.peer_pd == (r >= 0));
	CHECK(a.send_max <= mine.send_size && a.send_max <= pd.recv_size);
	CHECK(a.recv_max <= mine.recv_size && a.recv_max <= pd.send_size);
	CHECK(a.send_max >= RPCRDMA_INLINE_MIN && a.recv_max >= RPCRDMA_INLINE_MIN);
	CHECK(a.send_max == b.recv_max && a.recv_max == b.send_max);
	CHECK(a.remote_inv == (mine.remote_inv && pd.remote_inv));
	CHECK(a.remote_inv == b.remote_inv);
	free(in);
	return 0;
}
