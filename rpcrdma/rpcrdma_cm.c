/* SPDX-License-Identifier: MIT */
/*
 * RFC 8797: RDMA-CM private data for RPC-over-RDMA version 1 (inline
 * thresholds and remote invalidation), and the negotiation of RFC 8797 §4.2
 * with RFC 8166 §3.3.3's 1024-octet default.
 *
 *   0: Format Identifier 0xf6ab0e18
 *   4: Version (1)   5: Reserved (7 bits) | R (bit 15 of the word)
 *   6: Send Size     7: Receive Size      (size = (value + 1) * 1024)
 */
#include "rpcrdma.h"

#include <errno.h>
#include <string.h>

#include "byteorder.h"

#define CM_OFF_VERSION 4
#define CM_OFF_FLAGS   5
#define CM_OFF_SEND    6
#define CM_OFF_RECV    7

uint8_t rpcrdma_cm_size_encode(uint32_t bytes)
{
	/* §4.2: "dividing its actual buffer size, in octets, by 1024 and
	 * subtracting one from the result" */
	uint32_t v = bytes / 1024;

	if (v == 0)
		return 0;
	return v - 1 > 255 ? 255 : (uint8_t)(v - 1);
}

uint32_t rpcrdma_cm_size_decode(uint8_t v)
{
	/* §4.2: "it adds one to the encoded value and then multiplies that
	 * result by 1024" */
	return ((uint32_t)v + 1) * 1024;
}

void rpcrdma_cm_pd_init(struct rpcrdma_cm_pd *pd, uint32_t send_size, uint32_t recv_size,
			int remote_inv)
{
	pd->remote_inv = !!remote_inv;
	pd->send_size = rpcrdma_cm_size_decode(rpcrdma_cm_size_encode(send_size));
	pd->recv_size = rpcrdma_cm_size_decode(rpcrdma_cm_size_encode(recv_size));
}

ssize_t rpcrdma_cm_encode(uint8_t *buf, size_t cap, const struct rpcrdma_cm_pd *pd)
{
	if (cap < RPCRDMA_CM_LEN)
		return -EMSGSIZE;
	put_be32(buf, RPCRDMA_CM_MAGIC);
	buf[CM_OFF_VERSION] = RPCRDMA_CM_VERSION;
	/* "Senders MUST set these [Reserved] bits to zero" */
	buf[CM_OFF_FLAGS] = pd->remote_inv ? RPCRDMA_CM_F_REMOTE_INV : 0;
	buf[CM_OFF_SEND] = rpcrdma_cm_size_encode(pd->send_size);
	buf[CM_OFF_RECV] = rpcrdma_cm_size_encode(pd->recv_size);
	return RPCRDMA_CM_LEN;
}

static void cm_defaults(struct rpcrdma_cm_pd *pd)
{
	/* §5.1: "the peer MUST behave as if a Private Data message was
	 * received in which (1) bit 15 of the Flags field is zero and (2)
	 * both Size fields contain the value zero." */
	pd->remote_inv = 0;
	pd->send_size = RPCRDMA_INLINE_DEFAULT;
	pd->recv_size = RPCRDMA_INLINE_DEFAULT;
}

ssize_t rpcrdma_cm_decode(const uint8_t *buf, size_t len, struct rpcrdma_cm_pd *pd)
{
	size_t i;

	cm_defaults(pd);
	/* §5.2: "the buffer containing the received Private Data is searched
	 * for the Format Identifier word.  The offset of the Format Identifier
	 * is not restricted to any alignment." */
	for (i = 0; i + 4 <= len; i++)
		if (get_be32(buf + i) == RPCRDMA_CM_MAGIC)
			break;
	if (i + 4 > len)
		return -ENOENT;
	/* "the receiver should check that the format version number field
	 * contains a valid and recognized version number and the size of the
	 * content does not overrun the length of the buffer" */
	if (len - i < RPCRDMA_CM_LEN)
		return -EBADMSG;
	if (buf[i + CM_OFF_VERSION] != RPCRDMA_CM_VERSION)
		return -EPROTONOSUPPORT;
	/* "receivers MUST ignore their [Reserved bits'] value" */
	pd->remote_inv = !!(buf[i + CM_OFF_FLAGS] & RPCRDMA_CM_F_REMOTE_INV);
	pd->send_size = rpcrdma_cm_size_decode(buf[i + CM_OFF_SEND]);
	pd->recv_size = rpcrdma_cm_size_decode(buf[i + CM_OFF_RECV]);
	return (ssize_t)i;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void rpcrdma_cm_negotiate(const struct rpcrdma_cm_pd *mine, const struct rpcrdma_cm_pd *peer,
			  ssize_t peer_ret, struct rpcrdma_inline *out)
{
	struct rpcrdma_cm_pd def;

	if (peer_ret < 0) {
		cm_defaults(&def);
		peer = &def;
	}
	/* §4.2: "The client uses the smaller of its own send size and the
	 * server's reported receive size as the client-to-server inline
	 * threshold.  The server uses the smaller of its own send size and
	 * the client's reported receive size as the server-to-client inline
	 * threshold."  The receive side is the same rule seen from the
	 * other end. */
	out->send_max = min_u32(mine->send_size, peer->recv_size);
	out->recv_max = min_u32(mine->recv_size, peer->send_size);
	/* §4.1 (R): "When either peer on a connection clears this flag, the
	 * responder MUST use only RDMA Send when transmitting RPC Replies." */
	out->remote_inv = mine->remote_inv && peer->remote_inv;
	out->peer_pd = peer_ret >= 0;
}
