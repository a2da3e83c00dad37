/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the ONC RPC decode paths of the RDMA transports
 * (rpcrdma/rpcrdma_xdr.c with libtirpc's xdr_callmsg/xdr_replymsg), as the
 * server decodes a call (rpc_svc_rdma.c: xdr_callmsg, then the dispatch
 * routine's arguments) and the client a reply (rpc_clnt_rdma.c: xdr_replymsg
 * with its results, a Write chunk standing in for one opaque item).
 *
 * Input: octet 0 selects call (even) or reply (odd); octets 1..4 give the
 * Write chunk length the Responder claims (the chunk holds the last
 * min(that, rest/2) octets); the rest is the Payload stream.  Whatever the
 * bytes, decoding must stay inside the buffers (ASan), never read from the
 * chunk more than it holds, and an accepted stream must re-encode through
 * the reducing stream to the octets it consumed (for the call header).
 */
#include <rpc/rpc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

struct res {
	u_int a;
	char *p1;
	u_int n1;
	u_int b;
	char *p2;
	u_int n2;
};

static bool_t xdr_res(XDR *x, struct res *r)
{
	return xdr_u_int(x, &r->a) && xdr_bytes(x, &r->p1, &r->n1, 1u << 20) && xdr_u_int(x, &r->b) &&
	       xdr_bytes(x, &r->p2, &r->n2, 1u << 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_xdr d;
	struct rpc_msg m;
	struct res r;
	char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
	uint32_t wlen;
	const uint8_t *p, *w;
	size_t plen, wl;
	XDR fx;

	if (size < 5)
		return 0;
	memcpy(&wlen, data + 1, 4);
	p = data + 5;
	plen = size - 5;
	wl = wlen < plen / 2 ? wlen : plen / 2;
	w = p + plen - wl; /* the chunk: the tail */
	plen -= wl;
	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	if (!(data[0] & 1)) {
		/* a call, as svc_getreq_common() prepares it */
		m.rm_call.cb_cred.oa_base = cred;
		m.rm_call.cb_verf.oa_base = verf;
		rpcrdma_xdr_decode_init(&d, p, (u_int)plen, NULL, 0);
		if (xdr_callmsg(&d.x, &m)) {
			CHECK(d.pos <= plen);
			CHECK(m.rm_call.cb_cred.oa_length <= MAX_AUTH_BYTES);
			if (xdr_res(&d.x, &r))
				CHECK(d.pos <= plen);
		}
	} else {
		m.acpted_rply.ar_verf = _null_auth;
		m.acpted_rply.ar_results.where = (caddr_t)&r;
		m.acpted_rply.ar_results.proc = (xdrproc_t)rpcrdma_xdr_results;
		rpcrdma_xdr_decode_init(&d, p, (u_int)plen, wl ? w : NULL, (u_int)wl);
		d.armed = 0;
		d.inner = (xdrproc_t)xdr_res;
		if (xdr_replymsg(&d.x, &m)) {
			CHECK(d.pos <= plen);
			if (d.wused)
				CHECK(r.n1 == wl || r.n2 == wl);
		}
		/* the verifier exists only in an accepted reply: in a denied
		 * one the union holds rejected_reply fields there */
		if (m.rm_reply.rp_stat == MSG_ACCEPTED && m.acpted_rply.ar_verf.oa_base) {
			fx.x_op = XDR_FREE;
			xdr_opaque_auth(&fx, &m.acpted_rply.ar_verf);
		}
	}
	fx.x_op = XDR_FREE;
	xdr_res(&fx, &r);
	return 0;
}
