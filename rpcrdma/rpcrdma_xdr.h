/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_xdr.h - XDR streams that reduce and restore DDP-eligible data items
 * (RFC 8166 §3.4): the ONC RPC layer (rpc_clnt_rdma.c, rpc_svc_rdma.c)
 * encodes calls and replies through them so that large opaque items leave
 * the Payload stream as chunks without being copied, and decodes replies
 * whose result data an RDMA Write already placed.  Part of the sans-I/O
 * codec like rpcrdma.h (memory only: libtirpc's XDR type, no verbs, no
 * sockets).  Internal to libuiw.
 *
 * Encoding ("reducing"): the stream writes into a caller buffer like
 * xdrmem, but an XDR_PUTBYTES of at least @threshold octets (an opaque's
 * or a string's body) while diversion is on is not copied: the stream
 * records {position in the unreduced stream, address, length} and drops
 * the item's roundup padding (RFC 8166 §3.4.4.4), so the buffer holds the
 * reduced Payload stream.  At most @max_items items are diverted (later
 * ones are copied inline).
 *
 * Decoding ("restoring"): the stream reads a reduced Payload stream like
 * xdrmem; the first XDR_GETBYTES whose length equals the length the
 * Responder wrote into the Write chunk (@wlen, > 0) takes its octets from
 * the Write chunk buffer @wbuf instead (no copy when the destination is
 * @wbuf itself), and the roundup padding that follows is supplied as
 * zeros without consuming the stream.
 */
#ifndef UIW_RPCRDMA_XDR_H
#define UIW_RPCRDMA_XDR_H

#include <rpc/rpc.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_XDR_MAX_ITEMS 8

/** struct rpcrdma_ddp_item - a DDP-eligible data item taken out of the stream. */
struct rpcrdma_ddp_item {
	uint32_t pos;	  /* offset in the unreduced Payload stream (multiple of 4) */
	const void *addr; /* the item's octets (caller memory, not copied) */
	uint32_t len;	  /* octets, without roundup */
};

struct rpcrdma_xdr {
	XDR x;
	uint8_t *buf;
	u_int cap, pos; /* reduced stream: capacity, octets so far */
	u_int upos;	/* unreduced stream position */
	u_int skip_pad; /* roundup octets to drop (encode) or supply (decode) */
	int failed;	/* an operation ran past the buffer */
	/* encode */
	u_int threshold;
	int max_items, nitems;
	struct rpcrdma_ddp_item items[RPC_XDR_MAX_ITEMS];
	/* decode */
	const uint8_t *wbuf;
	u_int wlen;
	int wused;
	int armed;	  /* the Write chunk may stand in (decode_init: 1) */
	u_int inline_pad; /* roundup octets that may follow an inline body */
	xdrproc_t inner;  /* rpcrdma_xdr_results(): the results' own XDR routine */
};

/* An encoding stream over @buf/@cap; @threshold 0 or @max_items 0: no
 * diversion (a plain reduced == unreduced stream). */
void rpcrdma_xdr_encode_init(struct rpcrdma_xdr *s, void *buf, u_int cap, u_int threshold,
			     int max_items);

/* A decoding stream over @len octets at @buf; @wbuf/@wlen: the Write
 * chunk's data as the Responder wrote it (NULL/0: none). */
void rpcrdma_xdr_decode_init(struct rpcrdma_xdr *s, const void *buf, u_int len, const void *wbuf,
			     u_int wlen);

/*
 * rpcrdma_xdr_results() - an XDR routine for ar_results.proc that arms the
 * Write chunk and calls @s->inner: set s->armed = 0 and s->inner = xres
 * before xdr_replymsg(), so that nothing in the reply header (the
 * verifier's body) can be taken for the DDP-eligible result.
 */
bool_t rpcrdma_xdr_results(XDR *x, void *where);

#endif /* UIW_RPCRDMA_XDR_H */
