/* SPDX-License-Identifier: MIT */
/*
 * rpc_rdma.c - the ONC RPC client over RPC-over-RDMA version 1 (rpc_rdma.h):
 * a libtirpc CLIENT whose clnt_call() is a Requester (RFC 8166 §3.5):
 *
 *  - the call is XDR-encoded through the reducing stream (rpc_xdr.c); when
 *    the whole call fits the negotiated inline threshold it goes inline
 *    (Short), else its large opaque items become Read chunks registered in
 *    place (Chunked), and if the reduced call still does not fit it goes as
 *    RDMA_NOMSG with a position-zero Read chunk (Long call);
 *  - a call offers a Reply chunk (the client's reply buffer) when its reply
 *    may not fit the inline threshold: always, unless the caller bounded
 *    the reply with CLSET_RDMA_REPLY_MAX (as Linux's client does from the
 *    procedure's largest reply); a reply of any size up to RR_MAX_REPLY can
 *    then come (Long reply); a Write chunk when the caller named a result
 *    buffer (CLSET_RDMA_RESULT_BUF);
 *  - one call is outstanding per CLIENT (libtirpc's CLIENT is synchronous),
 *    never more than the credits the server granted; two receives are
 *    posted; the reply's XID must match (others are discarded and counted);
 *  - memory is registered per chunk and deregistered after the reply
 *    (after a Send with Invalidate the named STag is already invalid).
 *
 * The client owns a polled uiwarp context: clnt_call() turns the engine
 * itself and sleeps in uiw_progress() while it waits.
 */
#include "rpc_rdma_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static __thread char clnt_err[512];

/* UIW_RPC_DEBUG, read once (getenv is a scan of the environment) */
static int rr_debug(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("UIW_RPC_DEBUG") != NULL;
	return on;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#define NRX 2 /* receives posted: the reply of the call in flight + a spare */

struct rr_clnt {
	struct rr_opts o;
	char host[200];
	int port;
	rpcprog_t prog;
	rpcvers_t vers;
	struct timeval timeout;
	int timeout_set;
	struct rpc_err err;
	uint32_t xid;

	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_cm_id *id;
	int up;
	struct rpcrdma_inline inl;
	uint32_t granted;

	uint8_t *rx; /* NRX receive slots of inl.recv_max octets */
	uint32_t rxsz;
	struct uiw_mr *rx_mr;
	uint8_t *tx; /* the call's Send: header + inline payload */
	uint32_t txsz;
	struct uiw_mr *tx_mr;

	uint8_t *msg; /* the encoded (reduced) call */
	size_t msgcap;
	uint8_t *rep; /* the reply buffer, offered as the Reply chunk */
	size_t repcap;
	struct uiw_mr *rep_mr;

	struct rpc_rdma_buf result; /* CLSET_RDMA_RESULT_BUF, for the next call */
	int have_result;
	uint32_t reply_max; /* CLSET_RDMA_REPLY_MAX: 0 unknown */
	struct rpc_rdma_info info;
};

/* ---- shared helpers (also used by rpc_svc_rdma.c) ---------------------- */

void rr_opts_resolve(const struct rpc_rdma_opts *in, struct rr_opts *o)
{
	struct rpc_rdma_opts z;

	memset(&z, 0, sizeof(z));
	if (!in) {
		in = &z;
		z.remote_inv = 1;
	}
	o->inline_send = in->inline_send ? in->inline_send : RR_INLINE_DEFAULT;
	o->inline_recv = in->inline_recv ? in->inline_recv : RR_INLINE_DEFAULT;
	if (o->inline_send < RPCRDMA_INLINE_MIN)
		o->inline_send = RPCRDMA_INLINE_MIN;
	if (o->inline_recv < RPCRDMA_INLINE_MIN)
		o->inline_recv = RPCRDMA_INLINE_MIN;
	if (o->inline_send > RPCRDMA_INLINE_MAX)
		o->inline_send = RPCRDMA_INLINE_MAX;
	if (o->inline_recv > RPCRDMA_INLINE_MAX)
		o->inline_recv = RPCRDMA_INLINE_MAX;
	o->credits = in->credits ? in->credits : RR_CREDITS_DEFAULT;
	if (o->credits > RR_CREDITS_MAX)
		o->credits = RR_CREDITS_MAX;
	o->ddp_threshold = in->ddp_threshold ? in->ddp_threshold : RR_DDP_THRESHOLD;
	o->max_call = in->max_call ? in->max_call : RR_MAX_CALL_DEFAULT;
	o->remote_inv = in->remote_inv ? 1 : 0;
	o->no_cm_pd = in->no_cm_pd;
	o->crc = in->crc;
	o->connect_timeout_ms = in->connect_timeout_ms > 0 ? in->connect_timeout_ms : RR_CONNECT_TIMEOUT;
	o->poll_us = in->poll_us < 0 ? 0 : in->poll_us ? in->poll_us : RR_POLL_US;
	if (o->poll_us > 1000000)
		o->poll_us = 1000000;
}

int rr_cm_pd(const struct rr_opts *o, uint8_t *buf)
{
	struct rpcrdma_cm_pd pd;

	if (o->no_cm_pd)
		return 0;
	rpcrdma_cm_pd_init(&pd, o->inline_send, o->inline_recv, o->remote_inv);
	return (int)rpcrdma_cm_encode(buf, 8, &pd);
}

int rr_post_rdma(struct uiw_qp *qp, int write, uint8_t *laddr, uint32_t lkey, uint64_t len,
		 const struct rpcrdma_seg *segs, uint32_t n, uint64_t wrid)
{
	uint64_t off = 0;
	int posted = 0;

	for (uint32_t i = 0; i < n && off < len; i++) {
		struct uiw_sge sge;
		struct uiw_send_wr wr, *bad;
		uint64_t k = segs[i].length;
		int rc;

		if (k > len - off)
			k = len - off;
		if (!k)
			continue;
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)(laddr + off);
		sge.length = (uint32_t)k;
		sge.lkey = lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = write ? UIW_WR_RDMA_WRITE : UIW_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = segs[i].offset;
		wr.wr.rdma.rkey = segs[i].handle;
		off += k;
		if (off == len) {
			wr.wr_id = wrid;
			wr.send_flags = UIW_SEND_SIGNALED;
		}
		rc = uiw_post_send(qp, &wr, &bad);
		if (rc)
			return rc;
		posted++;
	}
	if (off != len)
		return -EMSGSIZE;
	return posted;
}

/* ---- connection -------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void cl_teardown(struct rr_clnt *c)
{
	int r[6] = { 0 };

	if (c->id && c->up)
		uiw_disconnect(c->id);
	if (c->id)
		r[0] = uiw_destroy_id(c->id);
	if (c->qp)
		r[1] = uiw_destroy_qp(c->qp);
	if (c->rx_mr)
		r[2] = uiw_dereg_mr(c->rx_mr);
	if (c->tx_mr)
		r[3] = uiw_dereg_mr(c->tx_mr);
	if (c->rep_mr)
		r[4] = uiw_dereg_mr(c->rep_mr);
	if (c->cq)
		r[5] = uiw_destroy_cq(c->cq);
	if (rr_debug())
		fprintf(stderr, "rpc_rdma: teardown: id %d qp %d mr %d %d %d cq %d\n", r[0], r[1], r[2], r[3],
			r[4], r[5]);
	c->qp = NULL;
	c->id = NULL;
	c->rx_mr = c->tx_mr = c->rep_mr = NULL;
	c->cq = NULL;
	c->up = 0;
}

static int post_rx(struct rr_clnt *c, unsigned slot)
{
	struct uiw_sge sge = { (uintptr_t)(c->rx + (size_t)slot * c->rxsz), c->rxsz, c->rx_mr->lkey };
	struct uiw_recv_wr wr = { RR_WRID(RR_WR_RECV, slot), NULL, &sge, 1 }, *bad;

	return uiw_post_recv(c->qp, &wr, &bad);
}

static int cl_connect(struct rr_clnt *c)
{
	struct uiw_qp_init_attr qa;
	struct uiw_conn_param cp;
	struct uiw_cm_event ev;
	struct rpcrdma_cm_pd mine, peer;
	uint8_t pd[8];
	int64_t end;
	ssize_t pret;
	int rc;

	memset(&qa, 0, sizeof(qa));
	rc = uiw_create_cq(c->ctx, 256, NULL, NULL, &c->cq);
	if (rc)
		goto fail;
	qa.send_cq = qa.recv_cq = c->cq;
	qa.cap.max_send_wr = 128;
	qa.cap.max_recv_wr = NRX;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	rc = uiw_create_qp(c->pd, &qa, &c->qp);
	if (rc)
		goto fail;
	/* receives at our inline receive size: what we advertise */
	c->rxsz = c->o.inline_recv;
	free(c->rx);
	c->rx = aligned_alloc(64, (size_t)NRX * c->rxsz);
	c->txsz = c->o.inline_send;
	free(c->tx);
	c->tx = aligned_alloc(64, c->txsz);
	if (!c->rx || !c->tx) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = uiw_reg_mr(c->pd, c->rx, (size_t)NRX * c->rxsz, UIW_ACCESS_LOCAL_WRITE, &c->rx_mr);
	if (!rc)
		rc = uiw_reg_mr(c->pd, c->tx, c->txsz, 0, &c->tx_mr);
	for (unsigned i = 0; !rc && i < NRX; i++)
		rc = post_rx(c, i);
	if (rc)
		goto fail;
	rc = uiw_create_id(c->ctx, c, &c->id);
	if (rc)
		goto fail;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = (uint16_t)rr_cm_pd(&c->o, pd);
	rc = uiw_connect(c->id, c->host, (uint16_t)c->port, c->qp, &cp);
	if (rc)
		goto fail;
	end = now_ms() + c->o.connect_timeout_ms;
	for (;;) {
		int64_t left = end - now_ms();

		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto fail;
		}
		uiw_progress(c->ctx, left > 100 ? 100 : (int)left);
		rc = uiw_get_cm_event(c->ctx, &ev, 0);
		if (rc == -EAGAIN || rc == -ETIMEDOUT)
			continue;
		if (rc)
			goto fail;
		if (ev.event == UIW_CM_EVENT_ESTABLISHED)
			break;
		rc = ev.status ? ev.status : -ECONNREFUSED;
		snprintf(clnt_err, sizeof(clnt_err), "%s:%d: %s (%s)", c->host, c->port,
			 uiw_event_str(ev.event), strerror(-rc));
		goto fail_msg;
	}
	c->up = 1;
	rpcrdma_cm_pd_init(&mine, c->o.inline_send, c->o.inline_recv, c->o.remote_inv);
	pret = rpcrdma_cm_decode(ev.private_data, ev.private_data_len, &peer);
	rpcrdma_cm_negotiate(&mine, &peer, pret, &c->inl);
	if (c->o.no_cm_pd) /* we sent none: the server assumes 1024 both ways */
		c->inl.send_max = c->inl.send_max < RPCRDMA_INLINE_DEFAULT ? c->inl.send_max
									   : RPCRDMA_INLINE_DEFAULT;
	if (c->inl.send_max > c->txsz)
		c->inl.send_max = c->txsz;
	c->granted = 1; /* until the first reply grants more (RFC 8166 §3.3.1) */
	c->info.inline_send = c->inl.send_max;
	c->info.inline_recv = c->inl.recv_max;
	c->info.remote_inv = c->inl.remote_inv;
	c->info.peer_pd = c->inl.peer_pd;
	return 0;
fail:
	snprintf(clnt_err, sizeof(clnt_err), "%s:%d: %s", c->host, c->port, strerror(-rc));
fail_msg:
	cl_teardown(c);
	return rc;
}

/* ---- one call ---------------------------------------------------------- */

struct call_mrs {
	struct uiw_mr *mr[RPC_XDR_MAX_ITEMS + 4];
	int n;
};

static void drop_mrs(struct call_mrs *m)
{
	for (int i = 0; i < m->n; i++)
		uiw_dereg_mr(m->mr[i]);
	m->n = 0;
}

static int reg(struct rr_clnt *c, struct call_mrs *m, const void *addr, size_t len, int acc,
	       uint32_t *stag)
{
	struct uiw_mr *mr;
	int rc = uiw_reg_mr(c->pd, (void *)(uintptr_t)addr, len ? len : 1, acc, &mr);

	if (rc)
		return rc;
	m->mr[m->n++] = mr;
	*stag = mr->rkey;
	return 0;
}

static enum clnt_stat fail_call(struct rr_clnt *c, enum clnt_stat st, int err)
{
	c->err.re_status = st;
	c->err.re_errno = err;
	return st;
}

/* wait for the reply to @xid; returns the rx slot, its length, or -errno */
static int wait_reply(struct rr_clnt *c, uint32_t xid, int64_t end, struct rpcrdma_hdr *h,
		      struct rpcrdma_read_seg *rs, struct rpcrdma_chunk *wc_, struct rpcrdma_seg *segs,
		      ssize_t *hlen, uint32_t *blen, uint32_t *inv)
{
	struct uiw_wc wc[16];
	int64_t spin_end = 0;

	for (;;) {
		int n = uiw_poll_cq(c->cq, 16, wc);

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			struct rpcrdma_dec_cfg cfg = { rs, RR_MAX_READ_SEGS, wc_, RR_MAX_WRITE, segs, RR_MAX_SEGS,
						       RR_MAX_CHUNK_SEGS, RPCRDMA_DF_SHORT_ERROR };
			unsigned slot = RR_WR_SLOT(wc[i].wr_id);
			uint8_t *p;

			if (wc[i].status != UIW_WC_SUCCESS) {
				if (rr_debug())
					fprintf(stderr, "rpc_rdma: completion %llx status %d opcode %d term %d/%d/%d\n",
						(unsigned long long)wc[i].wr_id, wc[i].status, wc[i].opcode,
						wc[i].term_layer, wc[i].term_etype, wc[i].term_ecode);
				c->up = 0;
				return -ECONNRESET;
			}
			if (RR_WR_KIND(wc[i].wr_id) != RR_WR_RECV)
				continue;
			p = c->rx + (size_t)slot * c->rxsz;
			*hlen = rpcrdma_hdr_decode(p, wc[i].byte_len, &cfg, h, NULL);
			if (rr_debug())
				fprintf(stderr, "rpc_rdma: reply %u octets: decode %zd proc %u xid %08x (want %08x)\n",
					wc[i].byte_len, *hlen, h->proc, h->xid, xid);
			if (rpcrdma_rx_verdict(*hlen, h, 0) != RPCRDMA_V_ACCEPT || h->xid != xid) {
				/* §4.5: a Requester discards what it cannot use */
				c->info.rdma_errors += *hlen < 0;
				post_rx(c, slot);
				continue;
			}
			*blen = wc[i].byte_len;
			*inv = (wc[i].wc_flags & UIW_WC_WITH_INV) ? wc[i].invalidated_rkey : 0;
			return (int)slot;
		}
		if (now_ms() >= end)
			return -ETIMEDOUT;
		if (!n) {
			if (!spin_end)
				spin_end = now_us() + c->o.poll_us;
			if (now_us() >= spin_end)
				uiw_progress(c->ctx, 5);
		}
	}
}

static enum clnt_stat rr_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp, xdrproc_t xres,
			      void *resp, struct timeval tmo)
{
	struct rr_clnt *c = (struct rr_clnt *)cl->cl_private;
	struct rpcrdma_read_seg rd[RPC_XDR_MAX_ITEMS + 1], rrs[RR_MAX_READ_SEGS];
	struct rpcrdma_seg wseg, rseg, segs[RR_MAX_SEGS];
	struct rpcrdma_chunk wch, rwc[RR_MAX_WRITE];
	struct rpcrdma_hdr h, r;
	struct call_mrs m = { .n = 0 };
	struct rpc_xdr s, d;
	struct rpc_msg msg;
	struct rpc_rdma_buf result = c->result;
	int have_result = c->have_result, slot, rc, divert;
	size_t need;
	ssize_t hl;
	uint32_t xid, blen = 0, inv = 0, wlen = 0;
	const uint8_t *payload;
	uint32_t paylen;
	int64_t end;

	c->have_result = 0;
	/* as clnt_vc: a timeout set with CLSET_TIMEOUT overrides the call's */
	if (c->timeout_set || tmo.tv_sec < 0 || (!tmo.tv_sec && !tmo.tv_usec))
		tmo = c->timeout;
	end = now_ms() + (int64_t)tmo.tv_sec * 1000 + tmo.tv_usec / 1000;
	if (!c->up && (rc = cl_connect(c)))
		return fail_call(c, RPC_CANTSEND, -rc);
	xid = ++c->xid;

	/* encode: plain when it fits inline, else with DDP-eligible items out */
	need = 64 + 2 * (MAX_AUTH_BYTES + 8) + xdr_sizeof(xargs, argsp);
	if (need > c->msgcap) {
		uint8_t *nm = realloc(c->msg, need);

		if (!nm)
			return fail_call(c, RPC_SYSTEMERROR, ENOMEM);
		c->msg = nm;
		c->msgcap = need;
	}
	divert = need > c->inl.send_max;
	{
		memset(&msg, 0, sizeof(msg));
		msg.rm_xid = xid;
		msg.rm_direction = CALL;
		msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
		msg.rm_call.cb_prog = c->prog;
		msg.rm_call.cb_vers = c->vers;
		rpc_xdr_encode_init(&s, c->msg, (u_int)c->msgcap, 0, 0);
		if (!xdr_callhdr(&s.x, &msg) || !xdr_u_int32_t(&s.x, &proc) ||
		    !AUTH_MARSHALL(cl->cl_auth, &s.x))
			return fail_call(c, RPC_CANTENCODEARGS, 0);
		if (divert) {
			s.threshold = c->o.ddp_threshold;
			s.max_items = RPC_XDR_MAX_ITEMS;
		}
		if (!xargs(&s.x, argsp))
			return fail_call(c, RPC_CANTENCODEARGS, 0);
	}

	/* the header: Read list, Write list, Reply chunk */
	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = RPCRDMA_VERSION;
	h.credits = c->o.credits;
	h.proc = RPCRDMA_MSG;
	for (int i = 0; i < s.nitems; i++) {
		rd[i].position = s.items[i].pos;
		rd[i].seg.length = s.items[i].len;
		rd[i].seg.offset = (uintptr_t)s.items[i].addr;
		if ((rc = reg(c, &m, s.items[i].addr, s.items[i].len, UIW_ACCESS_REMOTE_READ,
			      &rd[i].seg.handle)))
			goto sys;
		c->info.read_chunk_octets += s.items[i].len;
	}
	h.nread = (uint32_t)s.nitems;
	h.read = rd;
	if (have_result && result.buf && result.len) {
		wseg.length = result.len;
		wseg.offset = (uintptr_t)result.buf;
		if ((rc = reg(c, &m, result.buf, result.len, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE,
			      &wseg.handle)))
			goto sys;
		wch.nsegs = 1;
		wch.segs = &wseg;
		h.nwrite = 1;
		h.write = &wch;
	}
	/* a Reply chunk only when the reply may not fit inline (RFC 8166
	 * §3.5.4: a Responder prefers it to inline, so offering one with
	 * every call would make every reply an RDMA Write plus a Send).  It
	 * is registered per call like every chunk: with remote invalidation
	 * the server may invalidate its STag (RFC 8797 §4.1) */
	if (!c->reply_max || (uint64_t)c->reply_max + RR_REPLY_HDR_MAX > c->inl.recv_max) {
		size_t rl = c->reply_max && c->reply_max < c->repcap ? c->reply_max : c->repcap;

		if ((rc = reg(c, &m, c->rep, rl, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE,
			      &rseg.handle)))
			goto sys;
		rseg.length = (uint32_t)rl;
		rseg.offset = (uintptr_t)c->rep;
		h.has_reply = 1;
		h.reply.nsegs = 1;
		h.reply.segs = &rseg;
		c->info.reply_chunks_offered++;
	}
	hl = rpcrdma_hdr_len(&h);
	if (hl < 0) {
		rc = (int)hl;
		goto sys;
	}
	if ((size_t)hl + s.pos > c->inl.send_max) {
		/* Long call: the reduced call goes by a position-zero Read chunk */
		if (s.nitems >= RPC_XDR_MAX_ITEMS + 1) {
			rc = -E2BIG;
			goto sys;
		}
		memmove(rd + 1, rd, sizeof(rd[0]) * (size_t)s.nitems);
		rd[0].position = 0;
		rd[0].seg.length = (uint32_t)s.pos;
		rd[0].seg.offset = (uintptr_t)c->msg;
		if ((rc = reg(c, &m, c->msg, s.pos, UIW_ACCESS_REMOTE_READ, &rd[0].seg.handle)))
			goto sys;
		h.nread++;
		h.proc = RPCRDMA_NOMSG;
		c->info.read_chunk_octets += s.pos;
		hl = rpcrdma_hdr_encode(c->tx, c->txsz, &h, 0);
		if (hl < 0 || (size_t)hl > c->inl.send_max) {
			rc = hl < 0 ? (int)hl : -EMSGSIZE;
			goto sys;
		}
		paylen = 0;
	} else {
		hl = rpcrdma_hdr_encode(c->tx, c->txsz, &h, 0);
		if (hl < 0) {
			rc = (int)hl;
			goto sys;
		}
		memcpy(c->tx + hl, c->msg, s.pos);
		paylen = s.pos;
	}
	{
		struct uiw_sge sge = { (uintptr_t)c->tx, (uint32_t)hl + paylen, c->tx_mr->lkey };
		struct uiw_send_wr wr, *bad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = RR_WRID(RR_WR_SEND, 0);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_SEND;
		wr.send_flags = UIW_SEND_SIGNALED;
		rc = uiw_post_send(c->qp, &wr, &bad);
		if (rc) {
			c->up = 0;
			drop_mrs(&m);
			return fail_call(c, RPC_CANTSEND, -rc);
		}
	}
	c->info.calls++;

	slot = wait_reply(c, xid, end, &r, rrs, rwc, segs, &hl, &blen, &inv);
	if (slot < 0) {
		drop_mrs(&m);
		if (slot == -ETIMEDOUT) {
			/* a late reply might still RDMA Write into what we
			 * deregistered: start afresh */
			cl_teardown(c);
			return fail_call(c, RPC_TIMEDOUT, 0);
		}
		cl_teardown(c);
		return fail_call(c, RPC_CANTRECV, -slot);
	}
	(void)inv;
	c->info.replies++;
	if (r.credits)
		c->granted = r.credits;
	c->info.credits = r.credits;
	if (r.proc == RPCRDMA_ERROR) {
		c->info.rdma_errors++;
		post_rx(c, (unsigned)slot);
		drop_mrs(&m);
		snprintf(clnt_err, sizeof(clnt_err), "RDMA_ERROR %s from the server%s",
			 r.err == RPCRDMA_ERR_VERS ? "ERR_VERS" : "ERR_CHUNK",
			 r.err != RPCRDMA_ERR_VERS && !h.has_reply
				 ? " (no Reply chunk was offered: is CLSET_RDMA_REPLY_MAX too small?)"
				 : "");
		return fail_call(c, RPC_CANTDECODERES, EPROTO);
	}
	if (rpcrdma_reply_check(&h, &r, NULL)) {
		post_rx(c, (unsigned)slot);
		drop_mrs(&m);
		cl_teardown(c);
		return fail_call(c, RPC_CANTDECODERES, EPROTO);
	}
	if (r.nwrite && r.write[0].nsegs) {
		wlen = (uint32_t)rpcrdma_chunk_len(&r.write[0]);
		c->info.write_chunk_octets += wlen;
	}
	if (r.proc == RPCRDMA_NOMSG) {
		uint64_t rl = r.has_reply ? rpcrdma_chunk_len(&r.reply) : 0;

		payload = c->rep;
		paylen = rl > c->repcap ? (uint32_t)c->repcap : (uint32_t)rl;
		c->info.reply_chunk_octets += paylen;
	} else {
		payload = c->rx + (size_t)slot * c->rxsz + hl;
		paylen = blen - (uint32_t)hl;
	}
	memset(&msg, 0, sizeof(msg));
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = resp;
	msg.acpted_rply.ar_results.proc = (xdrproc_t)rpc_xdr_results;
	rpc_xdr_decode_init(&d, payload, paylen, wlen ? result.buf : NULL, wlen);
	d.armed = 0; /* the chunk stands in only inside the results */
	d.inner = xres;
	if (!xdr_replymsg(&d.x, &msg) || msg.rm_xid != xid) {
		post_rx(c, (unsigned)slot);
		drop_mrs(&m);
		return fail_call(c, RPC_CANTDECODERES, 0);
	}
	post_rx(c, (unsigned)slot);
	drop_mrs(&m);
	_seterr_reply(&msg, &c->err);
	if (c->err.re_status == RPC_SUCCESS && !AUTH_VALIDATE(cl->cl_auth, &msg.acpted_rply.ar_verf)) {
		c->err.re_status = RPC_AUTHERROR;
		c->err.re_why = AUTH_INVALIDRESP;
	}
	/* only an accepted reply has a verifier: in a denied one the union
	 * holds rejected_reply fields there (found by fuzz_rpc_xdr) */
	if (msg.rm_reply.rp_stat == MSG_ACCEPTED && msg.acpted_rply.ar_verf.oa_base) {
		XDR fx;

		fx.x_op = XDR_FREE;
		xdr_opaque_auth(&fx, &msg.acpted_rply.ar_verf);
	}
	return c->err.re_status;
sys:
	drop_mrs(&m);
	return fail_call(c, RPC_SYSTEMERROR, -rc);
}

static void rr_abort(CLIENT *cl)
{
	(void)cl;
}

static void rr_geterr(CLIENT *cl, struct rpc_err *e)
{
	*e = ((struct rr_clnt *)cl->cl_private)->err;
}

static bool_t rr_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	XDR x;

	(void)cl;
	x.x_op = XDR_FREE;
	return xres(&x, resp);
}

static void rr_destroy(CLIENT *cl)
{
	struct rr_clnt *c = (struct rr_clnt *)cl->cl_private;

	cl_teardown(c);
	{
		int a = c->pd ? uiw_dealloc_pd(c->pd) : 0, b = c->ctx ? uiw_close_context(c->ctx) : 0;

		if (rr_debug())
			fprintf(stderr, "rpc_rdma: destroy: pd %d context %d\n", a, b);
	}
	if (cl->cl_auth)
		AUTH_DESTROY(cl->cl_auth);
	free(c->rx);
	free(c->tx);
	free(c->msg);
	free(c->rep);
	free(c);
	free(cl->cl_netid);
	free(cl);
}

static bool_t rr_control(CLIENT *cl, u_int req, void *info)
{
	struct rr_clnt *c = (struct rr_clnt *)cl->cl_private;

	switch (req) {
	case CLSET_TIMEOUT:
		c->timeout = *(struct timeval *)info;
		c->timeout_set = 1;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = c->timeout;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = c->xid;
		return TRUE;
	case CLSET_XID:
		c->xid = *(uint32_t *)info - 1;
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = (uint32_t)c->vers;
		return TRUE;
	case CLSET_VERS:
		c->vers = *(uint32_t *)info;
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = (uint32_t)c->prog;
		return TRUE;
	case CLSET_PROG:
		c->prog = *(uint32_t *)info;
		return TRUE;
	case CLGET_FD:
		*(int *)info = -1;
		return TRUE;
	case CLSET_RDMA_RESULT_BUF:
		c->result = *(struct rpc_rdma_buf *)info;
		c->have_result = 1;
		return TRUE;
	case CLSET_RDMA_REPLY_MAX:
		c->reply_max = *(u_int *)info;
		return TRUE;
	case CLGET_RDMA_REPLY_MAX:
		*(u_int *)info = c->reply_max;
		return TRUE;
	case CLGET_RDMA_INFO:
		*(struct rpc_rdma_info *)info = c->info;
		((struct rpc_rdma_info *)info)->credits = c->granted;
		return TRUE;
	case CLSET_RDMA_RECONNECT:
		cl_teardown(c);
		return cl_connect(c) == 0;
	default:
		return FALSE;
	}
}

static struct clnt_ops rr_ops = { rr_call, rr_abort, rr_geterr, rr_freeres, rr_destroy, rr_control };

CLIENT *clnt_rdma_create(const char *host, int port, rpcprog_t prog, rpcvers_t vers,
			 const struct rpc_rdma_opts *opts)
{
	struct uiw_context_attr ca;
	struct rr_clnt *c;
	CLIENT *cl;
	int rc;

	clnt_err[0] = 0;
	if (!host || port < 0 || port > 65535) {
		snprintf(clnt_err, sizeof(clnt_err), "bad host or port");
		rpc_createerr.cf_stat = RPC_UNKNOWNHOST;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	cl = calloc(1, sizeof(*cl));
	if (!c || !cl)
		goto nomem;
	rr_opts_resolve(opts, &c->o);
	snprintf(c->host, sizeof(c->host), "%s", host);
	c->port = port ? port : RPC_RDMA_PORT;
	c->prog = prog;
	c->vers = vers;
	c->timeout.tv_sec = 25;
	c->xid = (uint32_t)getpid() * 2654435761u ^ (uint32_t)now_ms() * 40503u;
	c->repcap = RR_MAX_REPLY;
	c->rep = aligned_alloc(4096, c->repcap);
	if (!c->rep)
		goto nomem;
	memset(&ca, 0, sizeof(ca));
	ca.mode = UIW_CTX_POLLED;
	ca.crc = c->o.crc > 0 ? UIW_CRC_ON : c->o.crc == 0 ? UIW_CRC_OFF : UIW_CRC_DEFAULT;
	ca.first_fpdu_delay_ms = 50; /* Linux siw as responder, see uiw_verbs.h */
	rc = uiw_open_context(&c->ctx, &ca);
	if (!rc)
		rc = uiw_alloc_pd(c->ctx, &c->pd);
	if (rc) {
		snprintf(clnt_err, sizeof(clnt_err), "uiwarp context: %s", strerror(-rc));
		goto fail;
	}
	rc = cl_connect(c);
	if (rc)
		goto fail;
	cl->cl_ops = &rr_ops;
	cl->cl_private = (char *)c;
	cl->cl_auth = authnone_create();
	cl->cl_netid = strdup("rdma");
	cl->cl_tp = NULL;
	return cl;
nomem:
	rc = -ENOMEM;
	snprintf(clnt_err, sizeof(clnt_err), "out of memory");
fail:
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = -rc;
	if (c) {
		if (c->pd)
			uiw_dealloc_pd(c->pd);
		if (c->ctx)
			uiw_close_context(c->ctx);
		free(c->rep);
		free(c->rx);
		free(c->tx);
	}
	free(c);
	free(cl);
	return NULL;
}

const char *clnt_rdma_strerror(void)
{
	return clnt_err[0] ? clnt_err : "no error";
}
