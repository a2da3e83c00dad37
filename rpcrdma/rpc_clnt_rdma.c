/* SPDX-License-Identifier: MIT */
/*
 * rpc_clnt_rdma.c - the ONC RPC client over RPC-over-RDMA version 1 (rpc_rdma.h):
 * a libtirpc CLIENT whose clnt_call() is a Requester (RFC 8166 §3.5):
 *
 *  - the call is XDR-encoded through the reducing stream (rpcrdma_xdr.c); when
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
 *  - clnt_call() has one call outstanding (libtirpc's CLIENT is
 *    synchronous); clnt_rdma_call_start()/_wait() keep several in flight,
 *    each in a slot of its own (Send buffer, encode buffer, Reply chunk
 *    memory, registrations), never more than the credits the server
 *    granted (one until the first reply); slots + 1 receives are posted; a
 *    reply is matched to its call by XID and decoded into that call's
 *    result structure when it arrives (one for no call in flight is
 *    discarded and counted);
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

#define RR_SLOTS_MAX 64 /* calls in flight on one CLIENT at most */

struct call_mrs {
	struct uiw_mr *mr[RPC_XDR_MAX_ITEMS + 4];
	int n;
};

/* one call in flight: what its reply needs and what must live until then */
struct rr_slot {
	int used;      /* a call occupies the slot */
	int done;      /* its reply (or its failure) is in: wait() may take it */
	uint32_t xid;
	int64_t end;   /* now_ms() deadline */
	xdrproc_t xres;
	void *resp;
	struct rpc_rdma_buf result; /* the Write chunk's memory (len 0: none) */
	struct call_mrs m;	    /* registered for the call, dropped at its reply */
	struct rpcrdma_hdr h;	    /* the call's transport header (reply check) */
	struct rpcrdma_read_seg rd[RPC_XDR_MAX_ITEMS + 1];
	struct rpcrdma_seg wseg, rseg;
	struct rpcrdma_chunk wch;
	uint8_t *msg; /* the encoded (reduced) call; a Long call's Read chunk */
	size_t msgcap;
	uint8_t *rep; /* the Reply chunk's memory, allocated when first offered */
	size_t repcap;
	enum clnt_stat stat;
	struct rpc_err err;
};

struct rr_clnt {
	struct rr_opts o;
	CLIENT *cl;
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

	unsigned nslots;   /* calls in flight at most: min(credits, RR_SLOTS_MAX) */
	unsigned nrx;	   /* receives posted: nslots + 1 */
	unsigned outstanding;
	struct rr_slot slots[RR_SLOTS_MAX];

	uint8_t *rx; /* nrx receive slots of rxsz octets */
	uint32_t rxsz;
	struct uiw_mr *rx_mr;
	uint8_t *tx; /* nslots Send buffers: header + inline payload */
	uint32_t txsz;
	struct uiw_mr *tx_mr;

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

static void drop_mrs(struct call_mrs *m)
{
	for (int i = 0; i < m->n; i++)
		uiw_dereg_mr(m->mr[i]);
	m->n = 0;
}

/* every call in flight ends with @st: its memory is released (after the QP
 * is gone nothing more can be written into it) */
static void fail_outstanding(struct rr_clnt *c, enum clnt_stat st, int err)
{
	for (unsigned i = 0; i < c->nslots; i++) {
		struct rr_slot *sl = &c->slots[i];

		if (!sl->used || sl->done)
			continue;
		drop_mrs(&sl->m);
		sl->done = 1;
		sl->stat = st;
		memset(&sl->err, 0, sizeof(sl->err));
		sl->err.re_status = st;
		sl->err.re_errno = err;
	}
	c->outstanding = 0;
}

static void cl_teardown(struct rr_clnt *c, enum clnt_stat st, int err)
{
	int r[5] = { 0 };

	if (c->id && c->up)
		uiw_disconnect(c->id);
	if (c->id)
		r[0] = uiw_destroy_id(c->id);
	if (c->qp)
		r[1] = uiw_destroy_qp(c->qp);
	fail_outstanding(c, st, err);
	if (c->rx_mr)
		r[2] = uiw_dereg_mr(c->rx_mr);
	if (c->tx_mr)
		r[3] = uiw_dereg_mr(c->tx_mr);
	if (c->cq)
		r[4] = uiw_destroy_cq(c->cq);
	if (rr_debug())
		fprintf(stderr, "rpc_rdma: teardown: id %d qp %d mr %d %d cq %d\n", r[0], r[1], r[2], r[3],
			r[4]);
	c->qp = NULL;
	c->id = NULL;
	c->rx_mr = c->tx_mr = NULL;
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
	qa.cap.max_send_wr = 128 + 4 * c->nslots;
	qa.cap.max_recv_wr = c->nrx;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	rc = uiw_create_qp(c->pd, &qa, &c->qp);
	if (rc)
		goto fail;
	/* receives at our inline receive size: what we advertise */
	c->rxsz = c->o.inline_recv;
	free(c->rx);
	c->rx = aligned_alloc(64, (size_t)c->nrx * c->rxsz);
	c->txsz = c->o.inline_send;
	free(c->tx);
	c->tx = aligned_alloc(64, (size_t)c->nslots * c->txsz);
	if (!c->rx || !c->tx) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = uiw_reg_mr(c->pd, c->rx, (size_t)c->nrx * c->rxsz, UIW_ACCESS_LOCAL_WRITE, &c->rx_mr);
	if (!rc)
		rc = uiw_reg_mr(c->pd, c->tx, (size_t)c->nslots * c->txsz, 0, &c->tx_mr);
	for (unsigned i = 0; !rc && i < c->nrx; i++)
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
	cl_teardown(c, RPC_CANTSEND, -rc);
	return rc;
}

/* ---- calls ------------------------------------------------------------ */

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
	memset(&c->err, 0, sizeof(c->err));
	c->err.re_status = st;
	c->err.re_errno = err;
	return st;
}

static struct rr_slot *slot_of_xid(struct rr_clnt *c, uint32_t xid)
{
	for (unsigned i = 0; i < c->nslots; i++)
		if (c->slots[i].used && !c->slots[i].done && c->slots[i].xid == xid)
			return &c->slots[i];
	return NULL;
}

static void slot_end(struct rr_clnt *c, struct rr_slot *sl, enum clnt_stat st, int err)
{
	drop_mrs(&sl->m);
	sl->done = 1;
	if (c->outstanding)
		c->outstanding--;
	sl->stat = st;
	if (st != RPC_SUCCESS || err) {
		memset(&sl->err, 0, sizeof(sl->err));
		sl->err.re_status = st;
		sl->err.re_errno = err;
	}
}

/* the reply in receive @rx (@blen octets) for its call, decoded into the
 * call's result structure; the receive is posted again */
static void on_reply(struct rr_clnt *c, unsigned rx, uint32_t blen)
{
	struct rpcrdma_read_seg rrs[RR_MAX_READ_SEGS];
	struct rpcrdma_seg segs[RR_MAX_SEGS];
	struct rpcrdma_chunk rwc[RR_MAX_WRITE];
	struct rpcrdma_dec_cfg cfg = { rrs, RR_MAX_READ_SEGS, rwc, RR_MAX_WRITE, segs, RR_MAX_SEGS,
				       RR_MAX_CHUNK_SEGS, RPCRDMA_DF_SHORT_ERROR };
	uint8_t *p = c->rx + (size_t)rx * c->rxsz;
	struct rpcrdma_hdr r;
	struct rr_slot *sl;
	struct rpcrdma_xdr d;
	struct rpc_msg msg;
	const uint8_t *payload;
	uint32_t paylen, wlen = 0;
	ssize_t hl;

	memset(&r, 0, sizeof(r));
	hl = rpcrdma_hdr_decode(p, blen, &cfg, &r, NULL);
	sl = hl >= 0 ? slot_of_xid(c, r.xid) : NULL;
	if (rr_debug())
		fprintf(stderr, "rpc_rdma: reply %u octets: decode %zd proc %u xid %08x (%s)\n", blen, hl,
			r.proc, r.xid, sl ? "a call in flight" : "no call");
	if (rpcrdma_rx_verdict(hl, &r, 0) != RPCRDMA_V_ACCEPT || !sl) {
		/* §4.5: a Requester discards what it cannot use */
		c->info.rdma_errors += hl < 0;
		post_rx(c, rx);
		return;
	}
	c->info.replies++;
	if (r.credits)
		c->granted = r.credits;
	c->info.credits = r.credits;
	if (r.proc == RPCRDMA_ERROR) {
		c->info.rdma_errors++;
		post_rx(c, rx);
		snprintf(clnt_err, sizeof(clnt_err), "RDMA_ERROR %s from the server%s",
			 r.err == RPCRDMA_ERR_VERS ? "ERR_VERS" : "ERR_CHUNK",
			 r.err != RPCRDMA_ERR_VERS && !sl->h.has_reply
				 ? " (no Reply chunk was offered: is CLSET_RDMA_REPLY_MAX too small?)"
				 : "");
		slot_end(c, sl, RPC_CANTDECODERES, EPROTO);
		return;
	}
	if (rpcrdma_reply_check(&sl->h, &r, NULL)) {
		/* the reply names memory the call did not offer: the server
		 * is broken, the connection is not to be trusted */
		post_rx(c, rx);
		slot_end(c, sl, RPC_CANTDECODERES, EPROTO);
		cl_teardown(c, RPC_CANTRECV, ECONNABORTED);
		return;
	}
	if (r.nwrite && r.write[0].nsegs) {
		wlen = (uint32_t)rpcrdma_chunk_len(&r.write[0]);
		c->info.write_chunk_octets += wlen;
	}
	if (r.proc == RPCRDMA_NOMSG) {
		uint64_t rl = r.has_reply ? rpcrdma_chunk_len(&r.reply) : 0;

		payload = sl->rep;
		paylen = rl > sl->repcap ? (uint32_t)sl->repcap : (uint32_t)rl;
		/* the RPC reply in the Reply chunk must carry the header's
		 * rdma_xid, the call's (RFC 8166 §4.5.2 lists a mismatch as an
		 * XDR error; the codec checks it for RDMA_MSG, where the RPC
		 * message follows the header): else discarded as an RDMA_MSG
		 * would be, before anything is decoded into the caller's
		 * result, and the call goes on waiting */
		if (!payload || paylen < 4 ||
		    ((uint32_t)payload[0] << 24 | (uint32_t)payload[1] << 16 | (uint32_t)payload[2] << 8 | payload[3]) !=
			    sl->xid) {
			c->info.rdma_errors++;
			post_rx(c, rx);
			return;
		}
		c->info.reply_chunk_octets += paylen;
	} else {
		payload = p + hl;
		paylen = blen - (uint32_t)hl;
	}
	memset(&msg, 0, sizeof(msg));
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = sl->resp;
	msg.acpted_rply.ar_results.proc = (xdrproc_t)rpcrdma_xdr_results;
	rpcrdma_xdr_decode_init(&d, payload, paylen, wlen ? sl->result.buf : NULL, wlen);
	d.armed = 0; /* the chunk stands in only inside the results */
	d.inner = sl->xres;
	/* the XID was checked above (RDMA_NOMSG) or by the codec (RDMA_MSG) */
	if (!payload || !xdr_replymsg(&d.x, &msg)) {
		post_rx(c, rx);
		slot_end(c, sl, RPC_CANTDECODERES, 0);
		return;
	}
	post_rx(c, rx);
	drop_mrs(&sl->m);
	memset(&sl->err, 0, sizeof(sl->err));
	_seterr_reply(&msg, &sl->err);
	if (sl->err.re_status == RPC_SUCCESS && !AUTH_VALIDATE(c->cl->cl_auth, &msg.acpted_rply.ar_verf)) {
		sl->err.re_status = RPC_AUTHERROR;
		sl->err.re_why = AUTH_INVALIDRESP;
	}
	/* only an accepted reply has a verifier: in a denied one the union
	 * holds rejected_reply fields there (found by fuzz_rpcrdma_xdr) */
	if (msg.rm_reply.rp_stat == MSG_ACCEPTED && msg.acpted_rply.ar_verf.oa_base) {
		XDR fx;

		fx.x_op = XDR_FREE;
		xdr_opaque_auth(&fx, &msg.acpted_rply.ar_verf);
	}
	/* the call ends with the status and details the reply gave (a
	 * PROG_MISMATCH's version range, an auth error's reason) */
	sl->done = 1;
	if (c->outstanding)
		c->outstanding--;
	sl->stat = sl->err.re_status;
}

/* take completions; with @wait, when there are none, poll for poll_us and
 * then sleep in the engine (at most 5 ms).  Returns 0, or -errno when the
 * connection failed (every call in flight then ended) */
static int turn(struct rr_clnt *c, int wait, int64_t *spin_end)
{
	struct uiw_wc wc[16];
	int n = uiw_poll_cq(c->cq, 16, wc);

	if (n < 0) {
		cl_teardown(c, RPC_CANTRECV, -n);
		return n;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != UIW_WC_SUCCESS) {
			if (rr_debug())
				fprintf(stderr, "rpc_rdma: completion %llx status %d opcode %d term %d/%d/%d\n",
					(unsigned long long)wc[i].wr_id, wc[i].status, wc[i].opcode,
					wc[i].term_layer, wc[i].term_etype, wc[i].term_ecode);
			c->up = 0;
			cl_teardown(c, RPC_CANTRECV, ECONNRESET);
			return -ECONNRESET;
		}
		if (RR_WR_KIND(wc[i].wr_id) == RR_WR_RECV)
			on_reply(c, RR_WR_SLOT(wc[i].wr_id), wc[i].byte_len);
		if (!c->qp) /* on_reply() tore the connection down */
			return -ECONNABORTED;
	}
	if (!n && wait) {
		if (!*spin_end)
			*spin_end = now_us() + c->o.poll_us;
		if (now_us() >= *spin_end)
			uiw_progress(c->ctx, 5);
	}
	return 0;
}

/* encode and send one call; on success its slot is in flight */
static enum clnt_stat rr_start(struct rr_clnt *c, rpcproc_t proc, xdrproc_t xargs, void *argsp,
			       xdrproc_t xres, void *resp, const struct rpc_rdma_buf *result,
			       struct timeval tmo, uint32_t *xidp)
{
	struct rr_slot *sl = NULL;
	struct rpcrdma_hdr *h;
	struct rpcrdma_xdr s;
	struct rpc_msg msg;
	unsigned idx = 0;
	int rc, divert;
	size_t need;
	ssize_t hl;
	uint32_t paylen, xid;
	uint8_t *tx;
	int64_t end, spin_end = 0;

	/* as clnt_vc: a timeout set with CLSET_TIMEOUT overrides the call's */
	if (c->timeout_set || tmo.tv_sec < 0 || (!tmo.tv_sec && !tmo.tv_usec))
		tmo = c->timeout;
	end = now_ms() + (int64_t)tmo.tv_sec * 1000 + tmo.tv_usec / 1000;
	if (!c->up && (rc = cl_connect(c)))
		return fail_call(c, RPC_CANTSEND, -rc);
	/* a free slot and a credit: never more in flight than granted
	 * (RFC 8166 §3.3.1); replies of other calls are taken meanwhile */
	for (;;) {
		if (c->outstanding < c->granted) {
			for (unsigned i = 0; i < c->nslots && !sl; i++)
				if (!c->slots[i].used) {
					sl = &c->slots[i];
					idx = i;
				}
			if (sl)
				break;
		}
		if (now_ms() >= end)
			return fail_call(c, RPC_TIMEDOUT, 0);
		if (turn(c, 1, &spin_end) || !c->up)
			return fail_call(c, RPC_CANTSEND, ECONNRESET);
	}
	xid = ++c->xid;
	memset(&sl->err, 0, sizeof(sl->err));
	sl->m.n = 0;
	sl->xid = xid;
	sl->end = end;
	sl->xres = xres;
	sl->resp = resp;
	sl->result = result && result->buf && result->len ? *result : (struct rpc_rdma_buf){ NULL, 0 };

	/* encode: plain when it fits inline, else with DDP-eligible items out */
	need = 64 + 2 * (MAX_AUTH_BYTES + 8) + xdr_sizeof(xargs, argsp);
	if (need > sl->msgcap) {
		uint8_t *nm = realloc(sl->msg, need);

		if (!nm)
			return fail_call(c, RPC_SYSTEMERROR, ENOMEM);
		sl->msg = nm;
		sl->msgcap = need;
	}
	divert = need > c->inl.send_max;
	memset(&msg, 0, sizeof(msg));
	msg.rm_xid = xid;
	msg.rm_direction = CALL;
	msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	msg.rm_call.cb_prog = c->prog;
	msg.rm_call.cb_vers = c->vers;
	rpcrdma_xdr_encode_init(&s, sl->msg, (u_int)sl->msgcap, 0, 0);
	if (!xdr_callhdr(&s.x, &msg) || !xdr_u_int32_t(&s.x, &proc) || !AUTH_MARSHALL(c->cl->cl_auth, &s.x))
		return fail_call(c, RPC_CANTENCODEARGS, 0);
	if (divert) {
		s.threshold = c->o.ddp_threshold;
		s.max_items = RPC_XDR_MAX_ITEMS;
	}
	if (!xargs(&s.x, argsp))
		return fail_call(c, RPC_CANTENCODEARGS, 0);

	/* the header: Read list, Write list, Reply chunk */
	h = &sl->h;
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = RPCRDMA_VERSION;
	h->credits = c->o.credits;
	h->proc = RPCRDMA_MSG;
	for (int i = 0; i < s.nitems; i++) {
		sl->rd[i].position = s.items[i].pos;
		sl->rd[i].seg.length = s.items[i].len;
		sl->rd[i].seg.offset = (uintptr_t)s.items[i].addr;
		if ((rc = reg(c, &sl->m, s.items[i].addr, s.items[i].len, UIW_ACCESS_REMOTE_READ,
			      &sl->rd[i].seg.handle)))
			goto sys;
		c->info.read_chunk_octets += s.items[i].len;
	}
	h->nread = (uint32_t)s.nitems;
	h->read = sl->rd;
	if (sl->result.len) {
		sl->wseg.length = sl->result.len;
		sl->wseg.offset = (uintptr_t)sl->result.buf;
		if ((rc = reg(c, &sl->m, sl->result.buf, sl->result.len,
			      UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE, &sl->wseg.handle)))
			goto sys;
		sl->wch.nsegs = 1;
		sl->wch.segs = &sl->wseg;
		h->nwrite = 1;
		h->write = &sl->wch;
	}
	/* a Reply chunk only when the reply may not fit inline (RFC 8166
	 * §3.5.4: a Responder prefers it to inline, so offering one with
	 * every call would make every reply an RDMA Write plus a Send).  It
	 * is registered per call like every chunk: with remote invalidation
	 * the server may invalidate its STag (RFC 8797 §4.1) */
	if (!c->reply_max || (uint64_t)c->reply_max + RR_REPLY_HDR_MAX > c->inl.recv_max) {
		size_t rl = c->reply_max && c->reply_max < RR_MAX_REPLY ? c->reply_max : RR_MAX_REPLY;

		if (rl > sl->repcap) {
			free(sl->rep);
			sl->repcap = 0;
			sl->rep = aligned_alloc(4096, (rl + 4095) & ~(size_t)4095);
			if (!sl->rep) {
				rc = -ENOMEM;
				goto sys;
			}
			sl->repcap = rl;
		}
		if ((rc = reg(c, &sl->m, sl->rep, rl, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE,
			      &sl->rseg.handle)))
			goto sys;
		sl->rseg.length = (uint32_t)rl;
		sl->rseg.offset = (uintptr_t)sl->rep;
		h->has_reply = 1;
		h->reply.nsegs = 1;
		h->reply.segs = &sl->rseg;
		c->info.reply_chunks_offered++;
	}
	hl = rpcrdma_hdr_len(h);
	if (hl < 0) {
		rc = (int)hl;
		goto sys;
	}
	tx = c->tx + (size_t)idx * c->txsz;
	if ((size_t)hl + s.pos > c->inl.send_max) {
		/* Long call: the reduced call goes by a position-zero Read chunk */
		if (s.nitems >= RPC_XDR_MAX_ITEMS + 1) {
			rc = -E2BIG;
			goto sys;
		}
		memmove(sl->rd + 1, sl->rd, sizeof(sl->rd[0]) * (size_t)s.nitems);
		sl->rd[0].position = 0;
		sl->rd[0].seg.length = (uint32_t)s.pos;
		sl->rd[0].seg.offset = (uintptr_t)sl->msg;
		if ((rc = reg(c, &sl->m, sl->msg, s.pos, UIW_ACCESS_REMOTE_READ, &sl->rd[0].seg.handle)))
			goto sys;
		h->nread++;
		h->proc = RPCRDMA_NOMSG;
		c->info.read_chunk_octets += s.pos;
		hl = rpcrdma_hdr_encode(tx, c->txsz, h, 0);
		if (hl < 0 || (size_t)hl > c->inl.send_max) {
			rc = hl < 0 ? (int)hl : -EMSGSIZE;
			goto sys;
		}
		paylen = 0;
	} else {
		hl = rpcrdma_hdr_encode(tx, c->txsz, h, 0);
		if (hl < 0) {
			rc = (int)hl;
			goto sys;
		}
		memcpy(tx + hl, sl->msg, s.pos);
		paylen = s.pos;
	}
	{
		struct uiw_sge sge = { (uintptr_t)tx, (uint32_t)hl + paylen, c->tx_mr->lkey };
		struct uiw_send_wr wr, *bad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = RR_WRID(RR_WR_SEND, idx);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_SEND;
		wr.send_flags = UIW_SEND_SIGNALED;
		rc = uiw_post_send(c->qp, &wr, &bad);
		if (rc) {
			drop_mrs(&sl->m);
			cl_teardown(c, RPC_CANTSEND, -rc);
			return fail_call(c, RPC_CANTSEND, -rc);
		}
	}
	sl->used = 1;
	sl->done = 0;
	c->outstanding++;
	c->info.calls++;
	if (c->outstanding > c->info.max_outstanding)
		c->info.max_outstanding = c->outstanding;
	*xidp = xid;
	return RPC_SUCCESS;
sys:
	drop_mrs(&sl->m);
	return fail_call(c, RPC_SYSTEMERROR, -rc);
}

/* wait for the call @xid started with rr_start(); its slot is freed */
static enum clnt_stat rr_wait(struct rr_clnt *c, uint32_t xid)
{
	struct rr_slot *sl = NULL;
	int64_t spin_end = 0;

	for (unsigned i = 0; i < c->nslots && !sl; i++)
		if (c->slots[i].used && c->slots[i].xid == xid)
			sl = &c->slots[i];
	if (!sl)
		return fail_call(c, RPC_SYSTEMERROR, EINVAL);
	while (!sl->done) {
		if (now_ms() >= sl->end) {
			/* a late reply might still RDMA Write into memory of
			 * this call: the connection goes, every call in flight
			 * ends (RPC_TIMEDOUT for this one) */
			cl_teardown(c, RPC_CANTRECV, ETIMEDOUT);
			sl->stat = RPC_TIMEDOUT;
			memset(&sl->err, 0, sizeof(sl->err));
			sl->err.re_status = RPC_TIMEDOUT;
			break;
		}
		if (turn(c, 1, &spin_end))
			break;
	}
	sl->used = 0;
	c->err = sl->err;
	c->err.re_status = sl->stat;
	return sl->stat;
}

static enum clnt_stat rr_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp, xdrproc_t xres,
			      void *resp, struct timeval tmo)
{
	struct rr_clnt *c = (struct rr_clnt *)cl->cl_private;
	struct rpc_rdma_buf result = c->have_result ? c->result : (struct rpc_rdma_buf){ NULL, 0 };
	enum clnt_stat st;
	uint32_t xid;

	c->have_result = 0;
	st = rr_start(c, proc, xargs, argsp, xres, resp, &result, tmo, &xid);
	if (st != RPC_SUCCESS)
		return st;
	return rr_wait(c, xid);
}

enum clnt_stat clnt_rdma_call_start(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
				    xdrproc_t xres, void *resp, const struct rpc_rdma_buf *result,
				    struct timeval timeout, uint32_t *tag)
{
	struct rr_clnt *c;

	if (!cl || !tag || cl->cl_ops->cl_call != rr_call)
		return RPC_SYSTEMERROR;
	c = (struct rr_clnt *)cl->cl_private;
	return rr_start(c, proc, xargs, argsp, xres, resp, result, timeout, tag);
}

enum clnt_stat clnt_rdma_call_wait(CLIENT *cl, uint32_t tag)
{
	if (!cl || cl->cl_ops->cl_call != rr_call)
		return RPC_SYSTEMERROR;
	return rr_wait((struct rr_clnt *)cl->cl_private, tag);
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

	cl_teardown(c, RPC_CANTRECV, ESHUTDOWN);
	{
		int a = c->pd ? uiw_dealloc_pd(c->pd) : 0, b = c->ctx ? uiw_close_context(c->ctx) : 0;

		if (rr_debug())
			fprintf(stderr, "rpc_rdma: destroy: pd %d context %d\n", a, b);
	}
	if (cl->cl_auth)
		AUTH_DESTROY(cl->cl_auth);
	free(c->rx);
	free(c->tx);
	for (unsigned i = 0; i < RR_SLOTS_MAX; i++) {
		free(c->slots[i].msg);
		free(c->slots[i].rep);
	}
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
		((struct rpc_rdma_info *)info)->outstanding = c->outstanding;
		return TRUE;
	case CLSET_RDMA_RECONNECT:
		cl_teardown(c, RPC_CANTRECV, ECONNRESET);
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
	c->nslots = c->o.credits < RR_SLOTS_MAX ? c->o.credits : RR_SLOTS_MAX;
	c->nrx = c->nslots + 1;
	c->cl = cl;
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
	/* uiw_connect(): -ENXIO is a host name that does not resolve */
	rpc_createerr.cf_stat = rc == -ENXIO ? RPC_UNKNOWNHOST : RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = -rc;
	if (c) {
		if (c->pd)
			uiw_dealloc_pd(c->pd);
		if (c->ctx)
			uiw_close_context(c->ctx);
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
