/* SPDX-License-Identifier: MIT */
/*
 * test_rpc_clnt.c - the RDMA CLIENT of rpc_rdma.h (clnt_rdma_create(),
 * clnt_call(), clnt_rdma_call_start()/_wait()) against a hostile
 * RPC-over-RDMA server written here on plain uiw_verbs.h: a thread that
 * accepts connections one after the other and answers each call as its
 * procedure number says:
 *
 *   1  an ordinary reply: RDMA_MSG, the argument + 1 as the result
 *   2  first a reply with another XID (discarded), then the reply
 *   3  first a reply with a Read list (RFC 8166 §4.3.1: discarded), then
 *      the reply
 *   4  RDMA_ERROR ERR_VERS: the call fails, the connection stays
 *   5  a reply naming a Write chunk the call did not offer: the call fails
 *      and the client drops the connection (§4.5: the server cannot be
 *      trusted); the next call reconnects
 *   6  no reply: the call times out, the next call reconnects
 *   7  an RPC body that is not an RPC reply: RPC_CANTDECODERES
 *   8  first a 20-octet message (discarded: under 28 octets), then the reply
 *   9  held: the server answers once 4 calls of procedure 9 are in, in the
 *      reverse order (XID matching with calls in flight)
 *  11  first a Long reply (RDMA_NOMSG: the RPC reply RDMA-written into the
 *      call's Reply chunk) whose RPC reply carries another XID than the
 *      header's rdma_xid and the call's (discarded, RFC 8166 §4.5.2), then
 *      the reply inline (RDMA_MSG)
 *  12  only such a Long reply with another XID: the call times out
 *  13  a Long reply with the right XID
 *
 * The server grants 4 credits, so 8 calls started at once go out 4 at a
 * time.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rpc_rdma.h"
#include "rpcrdma.h"
#include "tests.h"
#include "uiw_verbs.h"

#define HS_NRX	   16
#define HS_RXSZ	   4096
#define HS_CREDITS 4
#define HS_PROG	   0x20759999u

struct hostile {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cm_id *listen;
	int port;
	volatile int stop;
	pthread_t th;
	int conns; /* connections accepted so far */
	/* the connection being served */
	struct uiw_cm_id *id;
	struct uiw_qp *qp;
	struct uiw_cq *cq;
	struct uiw_mr *mr;
	uint8_t *buf; /* HS_NRX receive slots, then 8 send slots */
	unsigned tx;
	/* held calls of procedure 9: xid and argument */
	uint32_t held_xid[4], held_arg[4];
	int nheld;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void hs_post_rx(struct hostile *hs, unsigned i)
{
	struct uiw_sge sge = { (uintptr_t)(hs->buf + (size_t)i * HS_RXSZ), HS_RXSZ, hs->mr->lkey };
	struct uiw_recv_wr wr = { i, NULL, &sge, 1 }, *bad;

	ck_assert_int_eq(uiw_post_recv(hs->qp, &wr, &bad), 0);
}

/* Send @len octets from the next send slot (filled by @fill) */
static uint8_t *hs_slot(struct hostile *hs)
{
	return hs->buf + (size_t)(HS_NRX + hs->tx % 8) * HS_RXSZ;
}

static void hs_send(struct hostile *hs, size_t len)
{
	struct uiw_sge sge = { (uintptr_t)hs_slot(hs), (uint32_t)len, hs->mr->lkey };
	struct uiw_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1000 + hs->tx;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UIW_WR_SEND;
	hs->tx++;
	uiw_post_send(hs->qp, &wr, &bad); /* the client may be gone: not fatal */
}

/* an RDMA_MSG reply to @xid: transport header (@read/@write: add a Read list
 * or a Write chunk the call did not offer) then an accepted RPC reply with
 * the result @res, or 8 octets of junk */
static void hs_reply(struct hostile *hs, uint32_t xid, uint32_t rxid, uint32_t res, int read, int write,
		     int junk)
{
	struct rpcrdma_read_seg rs = { 0, { 0x1234, 64, 0x1000 } };
	struct rpcrdma_seg ws = { 0x4321, 64, 0x2000 };
	struct rpcrdma_chunk wc = { 1, &ws };
	struct rpcrdma_hdr h;
	uint8_t *p = hs_slot(hs);
	ssize_t hl;

	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = 1;
	h.credits = HS_CREDITS;
	h.proc = RPCRDMA_MSG;
	if (read) {
		h.nread = 1;
		h.read = &rs;
	}
	if (write) {
		h.nwrite = 1;
		h.write = &wc;
	}
	hl = rpcrdma_hdr_encode(p, HS_RXSZ, &h, 0);
	ck_assert_int_gt(hl, 0);
	if (junk) {
		/* the XID (the transport checks that much), then no RPC reply */
		put32(p + hl, rxid);
		memcpy(p + hl + 4, "NOTANRPC", 8);
		hs_send(hs, (size_t)hl + 12);
		return;
	}
	put32(p + hl, rxid);
	put32(p + hl + 4, 1);	   /* REPLY */
	put32(p + hl + 8, 0);	   /* MSG_ACCEPTED */
	put32(p + hl + 12, 0);	   /* verifier AUTH_NONE */
	put32(p + hl + 16, 0);	   /* ... of length 0 */
	put32(p + hl + 20, 0);	   /* SUCCESS */
	put32(p + hl + 24, res);   /* the result */
	hs_send(hs, (size_t)hl + 28);
}

/* a Long reply (RDMA_NOMSG) to the call @h: an accepted RPC reply of
 * XID @rxid and result @res RDMA-written into the call's Reply chunk,
 * then the transport header (rdma_xid: the call's) returning the chunk
 * with the length written */
static void hs_long_reply(struct hostile *hs, const struct rpcrdma_hdr *call, uint32_t rxid, uint32_t res)
{
	struct rpcrdma_seg seg;
	struct rpcrdma_hdr h;
	struct uiw_sge sge;
	struct uiw_send_wr wr, *bad;
	uint8_t *p = hs_slot(hs);
	ssize_t hl;

	ck_assert(call->has_reply && call->reply.nsegs == 1 && call->reply.segs[0].length >= 28);
	put32(p, rxid);
	put32(p + 4, 1);  /* REPLY */
	put32(p + 8, 0);  /* MSG_ACCEPTED */
	put32(p + 12, 0); /* verifier AUTH_NONE */
	put32(p + 16, 0); /* ... of length 0 */
	put32(p + 20, 0); /* SUCCESS */
	put32(p + 24, res);
	sge = (struct uiw_sge){ (uintptr_t)p, 28, hs->mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2000 + hs->tx;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UIW_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = call->reply.segs[0].offset;
	wr.wr.rdma.rkey = call->reply.segs[0].handle;
	hs->tx++;
	uiw_post_send(hs->qp, &wr, &bad);
	seg = call->reply.segs[0];
	seg.length = 28;
	memset(&h, 0, sizeof(h));
	h.xid = call->xid;
	h.vers = 1;
	h.credits = HS_CREDITS;
	h.proc = RPCRDMA_NOMSG;
	h.has_reply = 1;
	h.reply.nsegs = 1;
	h.reply.segs = &seg;
	hl = rpcrdma_hdr_encode(hs_slot(hs), HS_RXSZ, &h, 0);
	ck_assert_int_gt(hl, 0);
	hs_send(hs, (size_t)hl);
}

/* one call received in slot @i (@len octets) */
static void hs_call(struct hostile *hs, unsigned i, uint32_t len)
{
	const uint8_t *m = hs->buf + (size_t)i * HS_RXSZ;
	struct rpcrdma_read_seg rs[4];
	struct rpcrdma_chunk wc[2];
	struct rpcrdma_seg segs[8];
	struct rpcrdma_dec_cfg cfg = { rs, 4, wc, 2, segs, 8, 8, 0 };
	struct rpcrdma_hdr h;
	const uint8_t *b;
	uint32_t proc, arg, cred_len, verf_len;
	ssize_t hl = rpcrdma_hdr_decode(m, len, &cfg, &h, NULL);

	ck_assert_int_gt(hl, 0);
	ck_assert_uint_eq(h.proc, RPCRDMA_MSG);
	b = m + hl;
	/* xid, CALL, rpcvers, prog, vers, proc, cred, verf, argument */
	proc = get32(b + 20);
	cred_len = get32(b + 28);
	verf_len = get32(b + 32 + ((cred_len + 3) & ~3u) + 4);
	arg = get32(b + 32 + ((cred_len + 3) & ~3u) + 8 + ((verf_len + 3) & ~3u));
	hs_post_rx(hs, i);
	switch (proc) {
	case 1:
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 0, 0);
		break;
	case 2:
		hs_reply(hs, h.xid ^ 0x5a5a0000u, h.xid ^ 0x5a5a0000u, 0, 0, 0, 0);
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 0, 0);
		break;
	case 3:
		hs_reply(hs, h.xid, h.xid, 0, 1, 0, 0);
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 0, 0);
		break;
	case 4: {
		uint8_t *p = hs_slot(hs);
		ssize_t n;

		/* as a server that supports another version range would */
		n = rpcrdma_error_encode(p, HS_RXSZ, &h, HS_CREDITS, RPCRDMA_ERR_VERS, 0);
		ck_assert_int_gt(n, 0);
		hs_send(hs, (size_t)n);
		break;
	}
	case 5:
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 1, 0);
		break;
	case 6:
		break; /* silence */
	case 7:
		hs_reply(hs, h.xid, h.xid, 0, 0, 0, 1);
		break;
	case 8: {
		uint8_t *p = hs_slot(hs);

		memset(p, 0, 20);
		put32(p, h.xid);
		hs_send(hs, 20);
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 0, 0);
		break;
	}
	case 10: { /* PROG_MISMATCH 2..5 */
		uint8_t *p = hs_slot(hs);
		struct rpcrdma_hdr r;
		ssize_t n;

		memset(&r, 0, sizeof(r));
		r.xid = h.xid;
		r.vers = 1;
		r.credits = HS_CREDITS;
		r.proc = RPCRDMA_MSG;
		n = rpcrdma_hdr_encode(p, HS_RXSZ, &r, 0);
		ck_assert_int_gt(n, 0);
		put32(p + n, h.xid);
		put32(p + n + 4, 1);  /* REPLY */
		put32(p + n + 8, 0);  /* MSG_ACCEPTED */
		put32(p + n + 12, 0); /* verifier AUTH_NONE */
		put32(p + n + 16, 0);
		put32(p + n + 20, 2); /* PROG_MISMATCH */
		put32(p + n + 24, 2); /* low */
		put32(p + n + 28, 5); /* high */
		hs_send(hs, (size_t)n + 32);
		break;
	}
	case 11:
		hs_long_reply(hs, &h, h.xid ^ 0x5a5a0000u, 0xbad);
		hs_reply(hs, h.xid, h.xid, arg + 1, 0, 0, 0);
		break;
	case 12:
		hs_long_reply(hs, &h, h.xid ^ 0x5a5a0000u, 0xbad);
		break;
	case 13:
		hs_long_reply(hs, &h, h.xid, arg + 1);
		break;
	case 9:
		ck_assert_int_lt(hs->nheld, 4);
		hs->held_xid[hs->nheld] = h.xid;
		hs->held_arg[hs->nheld] = arg;
		if (++hs->nheld == 4) {
			for (int k = 3; k >= 0; k--)
				hs_reply(hs, hs->held_xid[k], hs->held_xid[k], hs->held_arg[k] + 1, 0, 0, 0);
			hs->nheld = 0;
		}
		break;
	default:
		hs_reply(hs, h.xid, h.xid, 0, 0, 0, 1);
		break;
	}
}

static void hs_drop(struct hostile *hs)
{
	if (hs->id) {
		uiw_disconnect(hs->id);
		uiw_destroy_id(hs->id);
	}
	if (hs->qp)
		uiw_destroy_qp(hs->qp);
	if (hs->mr)
		uiw_dereg_mr(hs->mr);
	if (hs->cq)
		uiw_destroy_cq(hs->cq);
	free(hs->buf);
	hs->id = NULL;
	hs->qp = NULL;
	hs->mr = NULL;
	hs->cq = NULL;
	hs->buf = NULL;
	hs->nheld = 0;
}

static void hs_accept(struct hostile *hs, struct uiw_cm_event *ev)
{
	struct uiw_qp_init_attr qa;
	struct uiw_conn_param cp;
	struct rpcrdma_cm_pd pd;
	uint8_t pdb[8];

	if (hs->id) { /* one connection at a time: the old one is gone */
		hs_drop(hs);
	}
	memset(&qa, 0, sizeof(qa));
	ck_assert_int_eq(uiw_create_cq(hs->ctx, 64, NULL, NULL, &hs->cq), 0);
	qa.send_cq = qa.recv_cq = hs->cq;
	qa.cap.max_send_wr = 32;
	qa.cap.max_recv_wr = HS_NRX;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ck_assert_int_eq(uiw_create_qp(hs->pd, &qa, &hs->qp), 0);
	hs->buf = aligned_alloc(64, (size_t)(HS_NRX + 8) * HS_RXSZ);
	ck_assert_ptr_nonnull(hs->buf);
	ck_assert_int_eq(uiw_reg_mr(hs->pd, hs->buf, (size_t)(HS_NRX + 8) * HS_RXSZ, UIW_ACCESS_LOCAL_WRITE,
				    &hs->mr),
			 0);
	for (unsigned i = 0; i < HS_NRX; i++)
		hs_post_rx(hs, i);
	hs->id = ev->id;
	rpcrdma_cm_pd_init(&pd, HS_RXSZ, HS_RXSZ, 0);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdb;
	cp.private_data_len = (uint16_t)rpcrdma_cm_encode(pdb, sizeof(pdb), &pd);
	ck_assert_int_eq(uiw_accept(hs->id, hs->qp, &cp), 0);
	hs->conns++;
}

static void *hs_main(void *arg)
{
	struct hostile *hs = arg;

	while (!__atomic_load_n(&hs->stop, __ATOMIC_ACQUIRE)) {
		struct uiw_cm_event ev;
		struct uiw_wc wc[8];
		int n;

		if (uiw_get_cm_event(hs->ctx, &ev, hs->qp ? 0 : 20) == 0) {
			if (ev.event == UIW_CM_EVENT_CONNECT_REQUEST)
				hs_accept(hs, &ev);
			else if (ev.event == UIW_CM_EVENT_DISCONNECTED && ev.id == hs->id)
				hs_drop(hs);
			continue;
		}
		if (!hs->cq)
			continue;
		n = uiw_poll_cq(hs->cq, 8, wc);
		for (int k = 0; k < n; k++)
			if (wc[k].status == UIW_WC_SUCCESS && wc[k].opcode == UIW_WC_RECV)
				hs_call(hs, (unsigned)wc[k].wr_id, wc[k].byte_len);
		if (n <= 0)
			usleep(200);
	}
	hs_drop(hs);
	return NULL;
}

static struct hostile hs;

static void hs_start(void)
{
	memset(&hs, 0, sizeof(hs));
	ck_assert_int_eq(uiw_open_context(&hs.ctx, NULL), 0);
	ck_assert_int_eq(uiw_alloc_pd(hs.ctx, &hs.pd), 0);
	ck_assert_int_eq(uiw_create_id(hs.ctx, NULL, &hs.listen), 0);
	ck_assert_int_eq(uiw_listen(hs.listen, "127.0.0.1", 0, 8), 0);
	hs.port = uiw_get_port(hs.listen);
	ck_assert_int_gt(hs.port, 0);
	ck_assert_int_eq(pthread_create(&hs.th, NULL, hs_main, &hs), 0);
}

static void hs_stop(void)
{
	__atomic_store_n(&hs.stop, 1, __ATOMIC_RELEASE);
	pthread_join(hs.th, NULL);
	uiw_destroy_id(hs.listen);
	uiw_dealloc_pd(hs.pd);
	uiw_close_context(hs.ctx);
}

static bool_t xdr_u32(XDR *x, void *p)
{
	return xdr_u_int32_t(x, p);
}

static enum clnt_stat call(CLIENT *cl, rpcproc_t proc, uint32_t arg, uint32_t *res)
{
	struct timeval tmo = { 5, 0 };

	*res = 0;
	return clnt_call(cl, proc, (xdrproc_t)xdr_u32, (caddr_t)&arg, (xdrproc_t)xdr_u32, (caddr_t)res, tmo);
}

static CLIENT *connect_client(void)
{
	struct rpc_rdma_opts o = { .remote_inv = 1, .credits = 16, .crc = -1 };
	CLIENT *cl = clnt_rdma_create("127.0.0.1", hs.port, HS_PROG, 1, &o);
	u_int rm = 256;

	ck_assert_msg(cl != NULL, "clnt_rdma_create: %s", clnt_rdma_strerror());
	clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&rm);
	return cl;
}

START_TEST(test_rpc_clnt_hostile_server)
{
	struct rpc_rdma_info ri;
	struct timeval shorter = { 0, 300000 };
	CLIENT *cl;
	uint32_t res;

	hs_start();
	cl = connect_client();
	ck_assert_int_eq(call(cl, 1, 41, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 42);
	/* a reply with another XID, one with a Read list, one of 20 octets:
	 * each discarded, the real reply taken */
	ck_assert_int_eq(call(cl, 2, 1, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 2);
	ck_assert_int_eq(call(cl, 3, 2, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 3);
	ck_assert_int_eq(call(cl, 8, 3, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 4);
	ck_assert_int_eq(hs.conns, 1);
	/* a Long reply whose RPC reply (in the Reply chunk) carries another
	 * XID than its header and the call: discarded, the inline reply after
	 * it taken.  The client offers a Reply chunk only when its reply may
	 * not fit inline: CLSET_RDMA_REPLY_MAX 0 (unknown) for this call */
	{
		u_int rm = 0, small = 256;

		ck_assert(clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&rm));
		ck_assert_int_eq(call(cl, 13, 40, &res), RPC_SUCCESS); /* a good one */
		ck_assert_uint_eq(res, 41);
		ck_assert_int_eq(call(cl, 11, 4, &res), RPC_SUCCESS);
		ck_assert_uint_eq(res, 5);
		ck_assert(clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&small));
		ck_assert_int_eq(hs.conns, 1);
	}
	/* a PROG_MISMATCH reply: the status and the range (what rpcinfo
	 * uses to list the versions) */
	{
		struct rpc_err e;

		ck_assert_int_eq(call(cl, 10, 0, &res), RPC_PROGVERSMISMATCH);
		clnt_geterr(cl, &e);
		ck_assert_int_eq(e.re_status, RPC_PROGVERSMISMATCH);
		ck_assert_uint_eq(e.re_vers.low, 2);
		ck_assert_uint_eq(e.re_vers.high, 5);
	}
	/* RDMA_ERROR and a body that is no RPC reply: the call fails, the
	 * connection stays */
	ck_assert_int_eq(call(cl, 4, 0, &res), RPC_CANTDECODERES);
	ck_assert_int_eq(call(cl, 7, 0, &res), RPC_CANTDECODERES);
	ck_assert_int_eq(call(cl, 1, 9, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 10);
	ck_assert_int_eq(hs.conns, 1);
	/* a Write chunk the call did not offer: the client hangs up; the
	 * next call reconnects */
	ck_assert_int_eq(call(cl, 5, 0, &res), RPC_CANTDECODERES);
	ck_assert_int_eq(call(cl, 1, 19, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 20);
	ck_assert_int_eq(hs.conns, 2);
	/* silence: a timeout, then a new connection */
	ck_assert(clnt_control(cl, CLSET_TIMEOUT, (char *)&shorter));
	ck_assert_int_eq(call(cl, 6, 0, &res), RPC_TIMEDOUT);
	ck_assert_int_eq(call(cl, 1, 29, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 30);
	ck_assert_int_eq(hs.conns, 3);
	/* only a Long reply with another XID: discarded, so a timeout (and a
	 * new connection), never its result */
	{
		u_int rm = 0, small = 256;

		ck_assert(clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&rm));
		res = 0;
		ck_assert_int_eq(call(cl, 12, 0, &res), RPC_TIMEDOUT);
		ck_assert_uint_ne(res, 0xbad);
		ck_assert(clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&small));
		ck_assert_int_eq(call(cl, 1, 34, &res), RPC_SUCCESS);
		ck_assert_uint_eq(res, 35);
		ck_assert_int_eq(hs.conns, 4);
	}
	ck_assert(clnt_control(cl, CLGET_RDMA_INFO, (char *)&ri));
	ck_assert_uint_eq(ri.credits, HS_CREDITS);
	/* CLSET_RDMA_RECONNECT: settings negotiated again */
	ck_assert(clnt_control(cl, CLSET_RDMA_RECONNECT, NULL));
	ck_assert_int_eq(call(cl, 1, 39, &res), RPC_SUCCESS);
	ck_assert_uint_eq(res, 40);
	ck_assert_int_eq(hs.conns, 5);
	cl->cl_auth = NULL;
	clnt_destroy(cl);
	hs_stop();
}
END_TEST

START_TEST(test_rpc_clnt_inflight)
{
	struct timeval tmo = { 5, 0 };
	struct rpc_rdma_info ri;
	uint32_t tag[8], arg[8], res[8];
	uint32_t r1;
	CLIENT *cl;

	hs_start();
	cl = connect_client();
	/* the first reply grants HS_CREDITS */
	ck_assert_int_eq(call(cl, 1, 0, &r1), RPC_SUCCESS);
	/* 8 calls of procedure 9: the server answers each 4 in reverse; the
	 * client never has more than the 4 credits out */
	for (int i = 0; i < 8; i++) {
		arg[i] = 100 * (uint32_t)i;
		res[i] = 0;
		ck_assert_int_eq(clnt_rdma_call_start(cl, 9, (xdrproc_t)xdr_u32, (caddr_t)&arg[i],
						      (xdrproc_t)xdr_u32, (caddr_t)&res[i], NULL, tmo, &tag[i]),
				 RPC_SUCCESS);
	}
	for (int i = 7; i >= 0; i--) /* any order */
		ck_assert_int_eq(clnt_rdma_call_wait(cl, tag[i]), RPC_SUCCESS);
	for (int i = 0; i < 8; i++)
		ck_assert_uint_eq(res[i], arg[i] + 1);
	ck_assert(clnt_control(cl, CLGET_RDMA_INFO, (char *)&ri));
	ck_assert_uint_eq(ri.max_outstanding, HS_CREDITS);
	ck_assert_uint_eq(ri.outstanding, 0);
	/* a call that fails ends only itself; one in flight with it is fine */
	{
		uint32_t a = 5, b = 0, t1, t2, rr = 0;

		ck_assert_int_eq(clnt_rdma_call_start(cl, 4, (xdrproc_t)xdr_u32, (caddr_t)&a, (xdrproc_t)xdr_u32,
						      (caddr_t)&b, NULL, tmo, &t1),
				 RPC_SUCCESS);
		ck_assert_int_eq(clnt_rdma_call_start(cl, 1, (xdrproc_t)xdr_u32, (caddr_t)&a, (xdrproc_t)xdr_u32,
						      (caddr_t)&rr, NULL, tmo, &t2),
				 RPC_SUCCESS);
		ck_assert_int_eq(clnt_rdma_call_wait(cl, t2), RPC_SUCCESS);
		ck_assert_uint_eq(rr, 6);
		ck_assert_int_eq(clnt_rdma_call_wait(cl, t1), RPC_CANTDECODERES);
	}
	/* an unknown tag */
	ck_assert_int_eq(clnt_rdma_call_wait(cl, 0xdeadbeef), RPC_SYSTEMERROR);
	cl->cl_auth = NULL;
	clnt_destroy(cl);
	hs_stop();
}
END_TEST

Suite *rpc_clnt_suite(void)
{
	Suite *s = suite_create("rpc_clnt");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rpc_clnt_hostile_server);
	tcase_add_test(tc, test_rpc_clnt_inflight);
	suite_add_tcase(s, tc);
	return s;
}
