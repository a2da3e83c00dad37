/* SPDX-License-Identifier: MIT */
/*
 * rpc_rdma_int.h - shared by the ONC RPC client (rpc_clnt_rdma.c) and server
 * (rpc_svc_rdma.c) over RPC-over-RDMA version 1.  Internal to libuiw.
 */
#ifndef UIW_RPC_RDMA_INT_H
#define UIW_RPC_RDMA_INT_H

#include <stdint.h>

#include "rpc_rdma.h"
#include "rpcrdma_xdr.h"
#include "rpcrdma.h"
#include "uiw_verbs.h"

/* defaults of struct rpc_rdma_opts */
#define RR_INLINE_DEFAULT   4096
#define RR_CREDITS_DEFAULT  32
#define RR_CREDITS_MAX	    128
#define RR_DDP_THRESHOLD    1024
#define RR_MAX_CALL_DEFAULT ((16u << 20) + (64u << 10))
#define RR_MAX_REPLY	    ((16u << 20) + (64u << 10)) /* client reply buffer (Reply chunk) */
#define RR_CONNECT_TIMEOUT  10000
#define RR_POLL_US	    50 /* client: busy-poll for a reply this long first */
/* room for an RDMA_MSG reply header with a one-segment Write chunk */
#define RR_REPLY_HDR_MAX 64

/* decode caps for a received header */
#define RR_MAX_READ_SEGS  16
#define RR_MAX_WRITE	  4
#define RR_MAX_SEGS	  32
#define RR_MAX_CHUNK_SEGS 16

/* wr_id kinds (low 8 bits), slot in the bits above */
enum { RR_WR_RECV = 1, RR_WR_SEND, RR_WR_READ, RR_WR_WRITE };
#define RR_WRID(kind, slot) ((uint64_t)(slot) << 8 | (kind))
#define RR_WR_KIND(id)	    ((unsigned)((id)&0xff))
#define RR_WR_SLOT(id)	    ((unsigned)((id) >> 8))

/* resolved settings */
struct rr_opts {
	uint32_t inline_send, inline_recv, credits, ddp_threshold;
	uint64_t max_call;
	int remote_inv, no_cm_pd, crc, connect_timeout_ms, poll_us;
};

void rr_opts_resolve(const struct rpc_rdma_opts *in, struct rr_opts *o);

/* our RFC 8797 private data into @buf (8 octets), or 0 octets with no_cm_pd */
int rr_cm_pd(const struct rr_opts *o, uint8_t *buf);

/* post RDMA Reads or Writes moving @len octets between local @laddr (MR
 * @lkey) and the remote segments @segs (n), signaling only the last with
 * @wrid; returns the number of WRs posted or -errno.  Empty segments get
 * no WR: with @len 0 nothing is posted, 0 is returned and no completion
 * will come (the caller must not wait for one) */
int rr_post_rdma(struct uiw_qp *qp, int write, uint8_t *laddr, uint32_t lkey, uint64_t len,
		 const struct rpcrdma_seg *segs, uint32_t n, uint64_t wrid);

#endif /* UIW_RPC_RDMA_INT_H */
