/* SPDX-License-Identifier: MIT */
/*
 * rpc_svc_rdma.c - the ONC RPC server transport over RPC-over-RDMA version
 * 1 (rpc_rdma.h): one libtirpc SVCXPRT for a listener and all of its
 * connections, a Responder (RFC 8166):
 *
 *  - a polled uiwarp context turned by svc_run()'s own thread (one wake-up
 *    per call; the progress thread of earlier versions cost two thread
 *    switches per call); the SVCXPRT's descriptor is an epoll set of the
 *    context's I/O fd (uiw_context_fd()), the CM event fd and a 100 ms tick
 *    for the engine's timers, so svc_run() wakes when a connection or a
 *    call arrives; after a reply x_stat() says MOREREQS for poll_us (50
 *    us) and x_recv() looks for the next call before svc_run() sleeps;
 *  - per connection, @credits receives of the inline receive size are
 *    posted and @credits granted in every reply; a call is decoded with
 *    rpcrdma_hdr_decode() and answered RDMA_ERROR (ERR_VERS, ERR_CHUNK) or
 *    dropped as RFC 8166 §4.5 says;
 *  - Read chunks are pulled by RDMA Read straight into their place in the
 *    unreduced call (a position-zero chunk is the call itself), roundup
 *    restored; the dispatch routine decodes the arguments from it;
 *  - the reply is encoded through the reducing stream: when the call
 *    offered a Write chunk, the first opaque result of ddp_threshold octets
 *    or more is RDMA-written into it; a reply over the inline threshold
 *    goes into the Reply chunk (RDMA_NOMSG); one that fits nowhere is
 *    answered ERR_CHUNK; with remote invalidation on both sides the reply is
 *    a Send with Invalidate of the Reply (or first Write) chunk's STag.
 *
 * svc_getreq_common() serves one call at a time: xp_recv() hands it the
 * next complete call, xp_getargs() decodes its arguments, xp_reply() sends
 * the reply; the receive is re-posted before the reply leaves.
 *
 * Memory that posted work requests read or write is fenced: it is not
 * reused, deregistered or freed until the stack has reported the
 * completion (success or flush) of every WR that references it.  Each
 * chain of RDMA Reads or Writes signals only its last WR, whose id names
 * the memory (WS_* below); completions of a send queue come in the order
 * its WRs were posted, so that completion covers the whole chain.  A
 * connection that fails is aborted (its QP moved to error: a graceful
 * disconnect would keep sending from that memory for up to 10 s to a peer
 * that stopped reading), a signaled zero-length marker Write is posted
 * behind everything (its flush stands for the chains whose own signaled
 * end was never posted or whose completion was lost), and its CM id is
 * destroyed, which shuts its socket down and ends the I/O in flight; the
 * rest goes once the marker is reported (reap()).  xp_reply() returns
 * only once the service's result memory (the source of a Write chunk) is
 * no longer referenced, since the service may reuse it as soon as
 * svc_sendreply() returns; a reply buffer still referenced is retired,
 * kept until its connection is freed, and the next reply gets a new one.
 */
#include "rpc_rdma_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
static int dbg_on = -1; /* UIW_RPC_DEBUG, read once */
#define DBG(...)                                                                                   \
	do {                                                                                       \
		if (dbg_on < 0)                                                                    \
			dbg_on = getenv("UIW_RPC_DEBUG") != NULL;                                  \
		if (dbg_on)                                                                        \
			fprintf(stderr, "svc_rdma: " __VA_ARGS__);                                 \
	} while (0)
#define NTX	  8 /* reply Send buffers per connection */
#define QCAP	  (MAX_CONNS * RR_CREDITS_MAX) /* calls waiting for dispatch */
/* send queue depth: Read or Write chunk segments, reply Sends and spare */
#define SV_SEND_WR (4 * RR_MAX_CHUNK_SEGS + NTX + 8)

static __thread char svc_err[256];

/* slots (in SV_WRID) of the chains of RDMA Reads/Writes: which memory
 * their WRs reference */
#define WS_PULL	  0 /* Reads of a call's Read chunks, into cbuf or p0 */
#define WS_RESULT 1 /* Writes of a Write chunk, from the service's result memory */
#define WS_RCHUNK 2 /* Writes of a Reply chunk, from a struct rbuf */
#define WS_FENCE  3 /* the marker behind everything of a failed connection */

/* a reply encode buffer, also the source of Reply chunk Writes */
struct rbuf {
	uint8_t *p;
	size_t cap;
	struct uiw_mr *mr;
	int out;     /* Reply chunk Write chains from it not yet reported complete */
	int retired; /* no longer the server's: freed once out is 0 */
};

struct sreq {
	struct sconn *cn;
	unsigned slot; /* its receive */
	uint32_t xid;
	struct rpcrdma_hdr h;
	struct rpcrdma_read_seg rs[RR_MAX_READ_SEGS];
	struct rpcrdma_chunk wch[RR_MAX_WRITE];
	struct rpcrdma_seg segs[RR_MAX_SEGS];
	struct rpcrdma_chunk_info ci;
	uint32_t hl, len; /* header length, octets received */
	uint32_t rpc_xid; /* the RPC header's (the reply must carry it) */
	const uint8_t *call; /* the unreduced call */
	uint32_t call_len;
	struct rpc_xdr dec;
	int replied;
};

struct sconn {
	struct rr_svc *sv;
	int used, up;
	struct uiw_cm_id *id;
	struct uiw_qp *qp;
	struct rpcrdma_inline inl;
	uint8_t *rx;
	uint32_t rxsz;
	struct uiw_mr *rx_mr;
	uint8_t *tx; /* NTX reply Sends */
	uint32_t txsz;
	struct uiw_mr *tx_mr;
	int tx_busy[NTX];
	uint8_t *cbuf; /* unreduced call with pulled chunks */
	size_t ccap;
	struct uiw_mr *c_mr;
	uint8_t *p0; /* a Long call's pulled payload */
	size_t p0cap;
	struct uiw_mr *p0_mr;
	struct sreq *reqs; /* one per receive slot */
	/* chains posted whose completion (success or flush) is not reported
	 * yet: their memory is not reused, deregistered or freed meanwhile */
	int pull_out;	  /* WS_PULL: cbuf or p0 */
	int result_out;	  /* WS_RESULT: the service's result memory */
	struct rbuf *rb;  /* WS_RCHUNK: the reply buffer a chain reads, or a retired one */
	int rb_chain;	  /* that chain is not reported complete yet */
	int fence_out;	  /* WS_FENCE: the marker is posted, not yet reported */
	int fence_retry;  /* the marker could not be posted yet */
	int failed;	  /* aborted (conn_fail()): no more calls, its QP in error, id destroyed */
	int64_t failed_ms; /* when (mono_ms()) */
	uint32_t gen; /* generation of this slot's connection (SV_WRID) */
};

struct rr_svc {
	struct rr_opts o;
	SVCXPRT *xprt;
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	int tfd; /* the 100 ms tick: engine timers run when it turns */
	int64_t spin_until; /* mono_us(): look for the next call until then */
	struct uiw_cm_id *listen;
	int port, epfd;
	uint32_t next_gen;
	struct sconn conns[MAX_CONNS];
	/* calls complete and waiting for dispatch (one per receive at most) */
	struct sreq *q[QCAP];
	unsigned qh, qt;
	struct sreq *cur;
	struct rbuf *rb; /* the reply encode buffer (NULL: none yet) */
	struct rpc_rdma_info info;
	int wait_ms; /* bound of one wait for a Read, Write or Send (opts) */
	uint64_t queue_full; /* calls refused: dispatch ring full */
	uint64_t cq_overflows;
	int waiting; /* inside a wait (wait_out, fence_wait, tx_slot, a Long reply's Send) */
};

/* ---- connections ------------------------------------------------------- */

/* a work request id names the connection by index AND generation: a
 * completion of a connection already freed (flushes arrive after the QP is
 * gone) must not be taken for the new connection in the same slot */
#define SV_WRID(cn, kind, slot)                                                                    \
	((uint64_t)(cn)->gen << 32 |                                                               \
	 RR_WRID(kind, (unsigned)((cn) - (cn)->sv->conns) << 12 | (unsigned)(slot)))

static int post_rx(struct sconn *cn, unsigned slot)
{
	struct uiw_sge sge = { (uintptr_t)(cn->rx + (size_t)slot * cn->rxsz), cn->rxsz, cn->rx_mr->lkey };
	struct uiw_recv_wr wr = { SV_WRID(cn, RR_WR_RECV, slot), NULL,
				  &sge, 1 },
			   *bad;

	return uiw_post_recv(cn->qp, &wr, &bad);
}

static void rb_free(struct rbuf *b)
{
	if (!b)
		return;
	if (b->mr)
		uiw_dereg_mr(b->mr);
	free(b->p);
	free(b);
}

/* the Reply chunk chain of @cn is reported complete: the server's
 * buffer may be reused.  A retired one (its connection failed) stays
 * with the connection until conn_free(): a flush may be reported before
 * the I/O in flight has ended, and holding it until the connection is
 * gone costs nothing */
static void rb_release(struct sconn *cn)
{
	struct rbuf *b = cn->rb;

	if (!b || !cn->rb_chain)
		return;
	cn->rb_chain = 0;
	if (b->out)
		b->out--;
	if (!b->retired || !cn->failed) {
		cn->rb = NULL;
		if (b->retired && !b->out)
			rb_free(b);
	}
}

/* the reply buffer of at least @need octets: the server's, or a new one
 * (the old one is freed, or retired while a chain still reads it) */
static struct rbuf *rb_get(struct rr_svc *sv, size_t need)
{
	struct rbuf *b = sv->rb;

	if (b && b->cap >= need && !b->out)
		return b;
	if (b) {
		if (b->out)
			b->retired = 1;
		else
			rb_free(b);
	}
	sv->rb = b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->cap = (need + 4095) & ~(size_t)4095;
	b->p = aligned_alloc(4096, b->cap);
	if (!b->p || uiw_reg_mr(sv->pd, b->p, b->cap, UIW_ACCESS_LOCAL_WRITE, &b->mr)) {
		rb_free(b);
		sv->rb = NULL;
		return NULL;
	}
	return b;
}

/* the server's reply buffer, if a chain still reads it, is retired: it
 * goes when the chain's completion is reported; the next reply gets a
 * new one */
static void rb_retire(struct rr_svc *sv)
{
	if (sv->rb && sv->rb->out) {
		sv->rb->retired = 1;
		sv->rb = NULL;
	}
}

/* a signaled zero-length RDMA Write with the id of WS_FENCE: on a QP in
 * error it completes at once, flushed, behind every WR posted before it */
static int post_marker(struct sconn *cn)
{
	struct uiw_send_wr wr, *bad;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = SV_WRID(cn, RR_WR_WRITE, WS_FENCE);
	wr.opcode = UIW_WR_RDMA_WRITE;
	wr.send_flags = UIW_SEND_SIGNALED;
	rc = uiw_post_send(cn->qp, &wr, &bad);
	cn->fence_out = rc == 0;
	cn->fence_retry = rc != 0;
	return rc;
}

static int64_t mono_ms(void);

/* @cn failed: aborted, not closed gracefully (a graceful close keeps
 * sending what is queued, from memory the server may reuse, for up to
 * 10 s to a peer that stopped reading): its QP goes to error (every WR is
 * flushed), the marker posted behind everything fences what no signaled
 * completion will report, and its id is destroyed: its socket is shut
 * down, which ends the send in flight, and closed (uiw_destroy_id()
 * returns then).  No DISCONNECTED comes for it: reap() frees it */
static void conn_fail(struct sconn *cn)
{
	struct uiw_qp_attr a;

	if (!cn->used || cn->failed)
		return;
	cn->failed = 1;
	cn->failed_ms = mono_ms();
	memset(&a, 0, sizeof(a));
	a.qp_state = UIW_QPS_ERR;
	if (cn->qp) {
		uiw_modify_qp(cn->qp, &a, UIW_QP_STATE);
		post_marker(cn);
	}
	if (cn->id) {
		uiw_destroy_id(cn->id);
		cn->id = NULL;
	}
	DBG("connection %u aborted (%lld ms)\n", (unsigned)(cn - cn->sv->conns),
	    (long long)(mono_ms() - cn->failed_ms));
}

static void conn_free(struct sconn *cn)
{
	struct rr_svc *sv = cn->sv;

	/* calls of this connection still queued are dropped: the ring is
	 * compacted, so that they no longer count (left as holes, they did,
	 * and calls of other connections queued later overwrote unread ones) */
	{
		unsigned w = sv->qh;

		for (unsigned i = sv->qh; i != sv->qt; i++) {
			struct sreq *r = sv->q[i % QCAP];

			if (r && r->cn != cn)
				sv->q[w++ % QCAP] = r;
		}
		sv->qt = w;
	}
	if (sv->cur && sv->cur->cn == cn)
		sv->cur = NULL;
	/* the id first: uiw_destroy_qp() refuses a QP its id still holds
	 * (conn_fail() destroyed it already) */
	if (cn->id)
		uiw_destroy_id(cn->id);
	if (cn->qp)
		uiw_destroy_qp(cn->qp);
	if (cn->rx_mr)
		uiw_dereg_mr(cn->rx_mr);
	if (cn->tx_mr)
		uiw_dereg_mr(cn->tx_mr);
	if (cn->c_mr)
		uiw_dereg_mr(cn->c_mr);
	if (cn->p0_mr)
		uiw_dereg_mr(cn->p0_mr);
	/* its connection is closed (DISCONNECTED, its id destroyed): every
	 * WR was flushed and reported, a completion not taken yet included */
	rb_release(cn);
	if (cn->rb && cn->rb->retired)
		rb_free(cn->rb);
	cn->rb = NULL;
	free(cn->rx);
	free(cn->tx);
	free(cn->cbuf);
	free(cn->p0);
	free(cn->reqs);
	memset(cn, 0, sizeof(*cn));
	cn->sv = sv;
}

static void on_request(struct rr_svc *sv, struct uiw_cm_event *ev)
{
	struct sconn *cn = NULL;
	struct uiw_qp_init_attr qa;
	struct uiw_conn_param cp;
	struct rpcrdma_cm_pd mine, peer;
	uint8_t pd[8];
	ssize_t pret;
	int rc = -ENOMEM;

	for (int i = 0; i < MAX_CONNS; i++)
		if (!sv->conns[i].used) {
			cn = &sv->conns[i];
			break;
		}
	if (!cn) {
		uiw_reject(ev->id, NULL, 0);
		uiw_destroy_id(ev->id);
		return;
	}
	cn->used = 1;
	cn->gen = ++sv->next_gen;
	cn->id = ev->id;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = sv->cq;
	qa.cap.max_send_wr = SV_SEND_WR;
	qa.cap.max_recv_wr = sv->o.credits;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (uiw_create_qp(sv->pd, &qa, &cn->qp))
		goto fail;
	rpcrdma_cm_pd_init(&mine, sv->o.inline_send, sv->o.inline_recv, sv->o.remote_inv);
	pret = rpcrdma_cm_decode(ev->private_data, ev->private_data_len, &peer);
	rpcrdma_cm_negotiate(&mine, &peer, pret, &cn->inl);
	cn->rxsz = sv->o.inline_recv;
	cn->txsz = sv->o.inline_send;
	cn->rx = aligned_alloc(64, (size_t)sv->o.credits * cn->rxsz);
	cn->tx = aligned_alloc(64, (size_t)NTX * cn->txsz);
	cn->reqs = calloc(sv->o.credits, sizeof(struct sreq));
	if (!cn->rx || !cn->tx || !cn->reqs)
		goto fail;
	if (uiw_reg_mr(sv->pd, cn->rx, (size_t)sv->o.credits * cn->rxsz, UIW_ACCESS_LOCAL_WRITE, &cn->rx_mr) ||
	    uiw_reg_mr(sv->pd, cn->tx, (size_t)NTX * cn->txsz, 0, &cn->tx_mr))
		goto fail;
	for (unsigned i = 0; i < sv->o.credits; i++)
		if (post_rx(cn, i))
			goto fail;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = (uint16_t)rr_cm_pd(&sv->o, pd);
	rc = uiw_accept(cn->id, cn->qp, &cp);
	if (rc)
		goto fail;
	sv->info.inline_send = cn->inl.send_max;
	sv->info.inline_recv = cn->inl.recv_max;
	sv->info.remote_inv = cn->inl.remote_inv;
	sv->info.peer_pd = cn->inl.peer_pd;
	return;
fail:
	DBG("accept failed: %d\n", rc);
	if (cn->id && !cn->qp)
		uiw_reject(cn->id, NULL, 0);
	conn_free(cn);
}

static struct sconn *conn_of_id(struct rr_svc *sv, struct uiw_cm_id *id)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (sv->conns[i].used && sv->conns[i].id == id)
			return &sv->conns[i];
	return NULL;
}

static int cm_events(struct rr_svc *sv)
{
	struct uiw_cm_event ev;
	int n = 0;

	while (uiw_get_cm_event(sv->ctx, &ev, 0) == 0) {
		struct sconn *cn;

		n++;
		DBG("cm event %s status %d\n", uiw_event_str(ev.event), ev.status);
		switch (ev.event) {
		case UIW_CM_EVENT_CONNECT_REQUEST:
			on_request(sv, &ev);
			break;
		case UIW_CM_EVENT_ESTABLISHED:
			cn = conn_of_id(sv, ev.id);
			if (cn)
				cn->up = 1;
			break;
		default: /* DISCONNECTED, CONNECT_ERROR, ... */
			cn = conn_of_id(sv, ev.id);
			if (cn)
				conn_free(cn);
			break;
		}
	}
	return n;
}

/* ---- completions ------------------------------------------------------- */

static void queue_req(struct rr_svc *sv, struct sreq *r)
{
	if (sv->qt - sv->qh >= QCAP) {
		/* cannot happen while every live connection holds at most its
		 * credits here; never overwrite a call waiting for dispatch:
		 * fail this connection instead (its requester reconnects) */
		sv->queue_full++;
		DBG("dispatch ring full (%u): connection failed\n", QCAP);
		conn_fail(r->cn);
		return;
	}
	sv->q[sv->qt++ % QCAP] = r;
}

static int send_hdr_only(struct sconn *cn, const uint8_t *buf, size_t len);

static int grow(uint8_t **buf, size_t *cap, struct uiw_mr **mr, struct uiw_pd *pd, size_t need, int acc)
{
	uint8_t *n;

	if (need <= *cap && *buf)
		return 0;
	if (*mr)
		uiw_dereg_mr(*mr);
	*mr = NULL;
	free(*buf);
	*cap = 0;
	n = aligned_alloc(4096, (need + 4095) & ~(size_t)4095);
	*buf = n;
	if (!n)
		return -ENOMEM;
	*cap = (need + 4095) & ~(size_t)4095;
	return uiw_reg_mr(pd, n, *cap, acc, mr);
}

static int wait_out(struct rr_svc *sv, struct sconn *cn, int *out);

/* a call arrived in receive @slot of @cn (@len octets) */
static void on_call(struct rr_svc *sv, struct sconn *cn, unsigned slot, uint32_t len)
{
	struct sreq *r = &cn->reqs[slot];
	uint8_t *p = cn->rx + (size_t)slot * cn->rxsz;
	struct rpcrdma_dec_cfg cfg;
	struct rpcrdma_dec_err e;
	ssize_t hl;
	uint8_t ebuf[32];

	memset(r, 0, sizeof(*r));
	r->cn = cn;
	r->slot = slot;
	cfg = (struct rpcrdma_dec_cfg){ r->rs, RR_MAX_READ_SEGS, r->wch, RR_MAX_WRITE, r->segs, RR_MAX_SEGS,
					RR_MAX_CHUNK_SEGS, 0 };
	hl = rpcrdma_hdr_decode(p, len, &cfg, &r->h, &e);
	DBG("call %u octets: decode %zd (%s), proc %u\n", len, hl, rpcrdma_reason_name(e.reason), r->h.proc);
	switch (rpcrdma_rx_verdict(hl, &r->h, 1)) {
	case RPCRDMA_V_DROP:
		post_rx(cn, slot);
		return;
	case RPCRDMA_V_SEND_ERR_VERS:
	case RPCRDMA_V_SEND_ERR_CHUNK: {
		uint32_t err = hl == -EPROTONOSUPPORT ? RPCRDMA_ERR_VERS : RPCRDMA_ERR_CHUNK;
		ssize_t n = rpcrdma_error_encode(ebuf, sizeof(ebuf), &r->h, sv->o.credits, err, 0);

		sv->info.rdma_errors++;
		post_rx(cn, slot);
		if (n > 0)
			send_hdr_only(cn, ebuf, (size_t)n);
		return;
	}
	case RPCRDMA_V_ACCEPT:
		break;
	}
	rpcrdma_chunk_info(&r->h, &r->ci);
	r->xid = r->h.xid;
	r->hl = (uint32_t)hl;
	r->len = len;
	queue_req(sv, r);
}

/* the unreduced call of @r: pull its Read chunks into place (at dispatch
 * time, so that one buffer per connection serves every call); 0 or -1
 * (answered with ERR_CHUNK, or the connection is broken).
 *
 * Zero-length chunks and segments, as RFC 8166 has them (read from the
 * RFC's text): §3.4.3 names a segment of Length 0 an "empty segment", a
 * legal segment; §3.4.4 makes a chunk's length the sum of its segments';
 * §3.4.5 reinserts a Read chunk's octets at its Position.  So an empty
 * segment moves nothing and gets no RDMA Read (rr_post_rdma() skips it),
 * and a Read chunk whose segments are all empty reinserts zero octets:
 * when nothing was posted nothing is waited for (the wait for a
 * completion that could not come held the server for its whole bound).
 * Whether zero octets suit the arguments is the ULP's to say (GARBAGE_ARGS,
 * §4.5.2).  A Position-Zero Read chunk of length 0 leaves an RDMA_NOMSG
 * call without any Payload stream, not even the XID (§3.2), the case
 * §4.5.2 lists as an XDR error (nowhere to hold the Payload stream):
 * ERR_CHUNK. */
static int assemble(struct rr_svc *sv, struct sreq *r)
{
	struct sconn *cn = r->cn;
	unsigned slot = r->slot;
	uint8_t *p = cn->rx + (size_t)slot * cn->rxsz;
	uint32_t len = r->len;
	ssize_t hl = r->hl;
	uint8_t ebuf[32];

	{
		const uint8_t *red; /* the reduced Payload stream */
		uint64_t redlen, total;
		uint32_t i;

		if (r->ci.long_call) {
			/* pull the position-zero chunk first */
			struct rpcrdma_seg s0[RR_MAX_READ_SEGS];
			uint32_t n0 = 0;

			int posted;

			if (!r->ci.pos0_len || r->ci.pos0_len > sv->o.max_call ||
			    grow(&cn->p0, &cn->p0cap, &cn->p0_mr, sv->pd, r->ci.pos0_len + 4,
				 UIW_ACCESS_LOCAL_WRITE))
				goto err_chunk;
			for (i = 0; i < r->h.nread; i++)
				if (r->h.read[i].position == 0)
					s0[n0++] = r->h.read[i].seg;
			cn->pull_out = 1;
			posted = rr_post_rdma(cn->qp, 0, cn->p0, cn->p0_mr->lkey, r->ci.pos0_len, s0, n0,
					      SV_WRID(cn, RR_WR_READ, WS_PULL));
			if (!posted)
				cn->pull_out = 0;
			if (posted < 0 || (posted > 0 && wait_out(sv, cn, &cn->pull_out)))
				goto broken;
			red = cn->p0;
			redlen = r->ci.pos0_len;
			sv->info.read_chunk_octets += redlen;
		} else {
			red = p + hl;
			redlen = len - (uint64_t)hl;
		}
		total = redlen + (r->ci.read_len - (r->ci.long_call ? r->ci.pos0_len : 0)) + 4 * r->h.nread;
		if (r->ci.read_chunks == (r->ci.long_call ? 1u : 0u)) {
			r->call = red;
			r->call_len = (uint32_t)redlen;
		} else {
			/* rebuild: reduced octets, then each chunk at its position */
			uint64_t o = 0, ri = 0;
			uint32_t k = 0;

			if (total > sv->o.max_call ||
			    grow(&cn->cbuf, &cn->ccap, &cn->c_mr, sv->pd, total, UIW_ACCESS_LOCAL_WRITE))
				goto err_chunk;
			while (k < r->h.nread) {
				uint32_t pos = r->h.read[k].position, n = 0;
				struct rpcrdma_seg sg[RR_MAX_READ_SEGS];
				uint64_t clen = 0, before;
				int posted;

				if (pos == 0) { /* the Long call's own chunk */
					k++;
					continue;
				}
				while (k < r->h.nread && r->h.read[k].position == pos) {
					sg[n++] = r->h.read[k].seg;
					clen += r->h.read[k].seg.length;
					k++;
				}
				if (pos < o || pos - o > redlen - ri)
					goto err_chunk; /* positions out of order or past the stream */
				before = pos - o;
				memcpy(cn->cbuf + o, red + ri, before);
				o += before;
				ri += before;
				cn->pull_out = 1;
				posted = rr_post_rdma(cn->qp, 0, cn->cbuf + o, cn->c_mr->lkey, clen, sg, n,
						      SV_WRID(cn, RR_WR_READ, WS_PULL));
				if (!posted)
					cn->pull_out = 0;
				if (posted < 0 || (posted > 0 && wait_out(sv, cn, &cn->pull_out)))
					goto broken;
				sv->info.read_chunk_octets += clen;
				o += clen;
				while (o % 4)
					cn->cbuf[o++] = 0;
			}
			memcpy(cn->cbuf + o, red + ri, redlen - ri);
			o += redlen - ri;
			r->call = cn->cbuf;
			r->call_len = (uint32_t)o;
		}
	}
	sv->info.calls++;
	return 0;
err_chunk: {
	ssize_t n = rpcrdma_error_encode(ebuf, sizeof(ebuf), &r->h, sv->o.credits, RPCRDMA_ERR_CHUNK, 0);

	sv->info.rdma_errors++;
	post_rx(cn, slot);
	if (n > 0)
		send_hdr_only(cn, ebuf, (size_t)n);
	return -1;
}
broken:
	/* the pull buffers are this connection's: no later call of it is
	 * assembled, and they go with it (conn_free()) */
	conn_fail(cn);
	return -1;
}

/* take completions; @cn/@flag: also wait until *flag is set */
static void on_wc(struct rr_svc *sv, struct uiw_wc *wc)
{
	unsigned s = RR_WR_SLOT(wc->wr_id) & 0xffffff, ci = s >> 12, slot = s & 0xfff;
	struct sconn *cn;

	if (ci >= MAX_CONNS)
		return;
	cn = &sv->conns[ci];
	if (!cn->used || cn->gen != (uint32_t)(wc->wr_id >> 32))
		return; /* a connection freed since: its flushes are not ours */
	/* reported, success or flush: the WR's memory is free of it */
	switch (RR_WR_KIND(wc->wr_id)) {
	case RR_WR_READ:
	case RR_WR_WRITE:
		if (slot == WS_PULL && cn->pull_out)
			cn->pull_out--;
		else if (slot == WS_RESULT && cn->result_out)
			cn->result_out--;
		else if (slot == WS_RCHUNK)
			rb_release(cn);
		else if (slot == WS_FENCE && cn->fence_out) {
			/* everything posted before it is reported too */
			cn->fence_out = 0;
			cn->pull_out = 0;
			cn->result_out = 0;
			rb_release(cn);
		}
		break;
	case RR_WR_SEND:
		if (slot < NTX)
			cn->tx_busy[slot] = 0;
		break;
	default:
		break;
	}
	if (wc->status != UIW_WC_SUCCESS) {
		DBG("completion %llx status %d opcode %d term %d/%d/%d\n", (unsigned long long)wc->wr_id,
		    wc->status, wc->opcode, wc->term_layer, wc->term_etype, wc->term_ecode);
		conn_fail(cn);
		return;
	}
	DBG("completion conn %u kind %u slot %u len %u\n", ci, RR_WR_KIND(wc->wr_id), slot, wc->byte_len);
	if (RR_WR_KIND(wc->wr_id) == RR_WR_RECV)
		on_call(sv, cn, slot, wc->byte_len);
}

/* the CQ overflowed: completions were lost (a receive: a credit gone; a
 * Send: its buffer busy for ever), which connections is not known: every
 * connection is failed (their requesters reconnect) */
static void cq_lost(struct rr_svc *sv)
{
	sv->cq_overflows++;
	fprintf(stderr, "svc_rdma: completion queue overflow: every connection failed\n");
	for (int i = 0; i < MAX_CONNS; i++) {
		struct sconn *cn = &sv->conns[i];

		if (cn->used && !cn->failed)
			conn_fail(&sv->conns[i]);
		else if (cn->used && cn->fence_out)
			cn->fence_retry = 1; /* its marker's completion may be lost too */
	}
}

static int poll_cq(struct rr_svc *sv)
{
	struct uiw_wc wc[16];
	int n, total = 0;

	while ((n = uiw_poll_cq(sv->cq, 16, wc)) != 0) {
		if (n < 0) {
			if (n != -EOVERFLOW)
				break;
			cq_lost(sv); /* reported once: what is queued comes next */
			total++;
			continue;
		}
		for (int i = 0; i < n; i++)
			on_wc(sv, &wc[i]);
		total += n;
	}
	return total;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#define SV_WAIT_MS 10000 /* default bound of a wait for a Write, Read or Send (wait_ms) */

/* wait (bounded by wait_ms) until the chain counted in *@out is reported
 * complete, turning the engine and taking other completions meanwhile (a
 * call that arrives meanwhile is queued); -EIO when @cn failed or the
 * bound ran out: the chain may still be outstanding */
static int wait_out(struct rr_svc *sv, struct sconn *cn, int *out)
{
	struct uiw_wc wc;
	int64_t end = 0;
	int rc = 0;

	sv->waiting++;
	while (*out) {
		int n = uiw_poll_cq(sv->cq, 1, &wc);

		if (n == 1) {
			on_wc(sv, &wc);
			continue;
		}
		if (n == -EOVERFLOW)
			cq_lost(sv); /* fails @cn too */
		if (cn->failed || !cn->used) {
			rc = -EIO;
			break;
		}
		if (!end)
			end = mono_ms() + sv->wait_ms;
		else if (mono_ms() > end) {
			rc = -EIO;
			break;
		}
		uiw_progress(sv->ctx, 1); /* sleep until I/O, at most 1 ms */
	}
	sv->waiting--;
	return rc;
}

/* @cn failed (conn_fail()): wait, without a bound, until the chain counted
 * in *@out is reported complete (its flush, or the marker's behind it).
 * For the service's result memory: it is the service's again when
 * xp_reply() returns, so this returns only once nothing references it.
 * The stack reports the flushes of a QP moved to error once its I/O in
 * flight has ended (at most 2 s, when the connection is reset) */
static void fence_wait(struct rr_svc *sv, struct sconn *cn, int *out)
{
	int64_t t0 = mono_ms();
	uint64_t ovf = sv->cq_overflows;
	int said = 0;

	sv->waiting++;
	while (cn->used && *out) {
		if (sv->cq_overflows != ovf) { /* the completion may be lost */
			ovf = sv->cq_overflows;
			cn->fence_retry = 1;
		}
		if (cn->fence_retry)
			post_marker(cn);
		if (poll_cq(sv))
			continue;
		if (!said && mono_ms() - t0 > sv->wait_ms) {
			fprintf(stderr, "svc_rdma: %d ms after its connection was aborted, a reply's memory "
					"is still referenced by a work request: waiting for its completion\n",
				sv->wait_ms);
			said = 1;
		}
		uiw_progress(sv->ctx, 1);
	}
	sv->waiting--;
}

static int tx_free(struct sconn *cn)
{
	for (int i = 0; i < NTX; i++)
		if (!cn->tx_busy[i])
			return i;
	return -EIO;
}

static int tx_slot(struct rr_svc *sv, struct sconn *cn)
{
	int64_t end = 0;
	int t;

	sv->waiting++;
	for (;;) {
		t = tx_free(cn);
		if (t >= 0)
			break;
		poll_cq(sv);
		if (cn->failed || !cn->used)
			break;
		if (!end)
			end = mono_ms() + sv->wait_ms;
		else if (mono_ms() > end)
			break;
		uiw_progress(sv->ctx, 1);
	}
	sv->waiting--;
	return t;
}

static int post_send(struct sconn *cn, int slot, uint32_t len, uint32_t inv)
{
	struct uiw_sge sge = { (uintptr_t)(cn->tx + (size_t)slot * cn->txsz), len, cn->tx_mr->lkey };
	struct uiw_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = SV_WRID(cn, RR_WR_SEND, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = inv ? UIW_WR_SEND_WITH_INV : UIW_WR_SEND;
	wr.invalidate_rkey = inv;
	wr.send_flags = UIW_SEND_SIGNALED;
	cn->tx_busy[slot] = 1;
	return uiw_post_send(cn->qp, &wr, &bad);
}

/* an RDMA_ERROR reply (ERR_VERS, ERR_CHUNK); when it cannot leave (no Send
 * buffer within wait_ms, the QP broken) the connection is failed: its
 * requester would otherwise wait for the answer for ever */
static int send_hdr_only(struct sconn *cn, const uint8_t *buf, size_t len)
{
	/* within a wait (its completions brought this call) no nested wait:
	 * a peer that sends bad headers and reads nothing would nest them
	 * as deep as it sends */
	int t = cn->sv->waiting ? tx_free(cn) : tx_slot(cn->sv, cn);

	if (t >= 0 && len <= cn->txsz) {
		memcpy(cn->tx + (size_t)t * cn->txsz, buf, len);
		if (post_send(cn, t, (uint32_t)len, 0))
			t = -EIO;
	} else {
		t = -EIO;
	}
	if (t < 0) {
		DBG("error reply not sent: connection failed\n");
		conn_fail(cn);
		return -EIO;
	}
	uiw_progress(cn->sv->ctx, 0);
	return 0;
}

/* ---- SVCXPRT ops ------------------------------------------------------- */

static struct rr_svc *SV(SVCXPRT *x)
{
	return (struct rr_svc *)x->xp_p1;
}

/* the SVCXPRT's fd woke svc_run(): the tick consumed, the engine turned */
static void turn(struct rr_svc *sv)
{
	uint64_t v;

	if (read(sv->tfd, &v, sizeof(v)) < 0)
		v = 0; /* EAGAIN: not the tick */
	uiw_progress(sv->ctx, 0);
}

/* connections that failed (conn_fail()) are freed once the marker behind
 * their WRs is reported (or, should its completion be lost to a CQ
 * overflow, 10 s later: their socket is closed, nothing is in flight) */
static void reap(struct rr_svc *sv)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct sconn *cn = &sv->conns[i];

		if (!cn->used || !cn->failed || cn->id)
			continue;
		if (cn->fence_retry)
			post_marker(cn);
		if ((!cn->fence_out && !cn->fence_retry) || mono_ms() - cn->failed_ms > 10000)
			conn_free(cn);
	}
}

static bool_t x_recv(SVCXPRT *x, struct rpc_msg *msg)
{
	struct rr_svc *sv = SV(x);
	struct sreq *r = NULL;

	if (sv->cur && !sv->cur->replied && sv->cur->cn && !sv->cur->cn->failed)
		post_rx(sv->cur->cn, sv->cur->slot); /* a call that got no reply */
	sv->cur = NULL;
	turn(sv);
	poll_cq(sv);
	reap(sv);
	for (;;) {
		if (cm_events(sv))
			uiw_progress(sv->ctx, 0); /* an accept: its MPA Reply leaves now */
		poll_cq(sv);
		while (sv->qh != sv->qt && !r) {
			r = sv->q[sv->qh++ % QCAP];
			if (r && (!r->cn || !r->cn->used || r->cn->failed || assemble(sv, r)))
				r = NULL;
		}
		if (r)
			break;
		/* shortly after a reply the next call is likely: look for it
		 * before svc_run() sleeps (poll_us) */
		if (!sv->spin_until || mono_us() >= sv->spin_until) {
			sv->spin_until = 0;
			return FALSE;
		}
	}
	rpc_xdr_decode_init(&r->dec, r->call, r->call_len, NULL, 0);
	if (!xdr_callmsg(&r->dec.x, msg)) {
		/* not an RPC call: drop it, keep the receive */
		post_rx(r->cn, r->slot);
		return FALSE;
	}
	DBG("dispatch xid %08x prog %u vers %u proc %u\n", (unsigned)msg->rm_xid, (unsigned)msg->rm_call.cb_prog,
	    (unsigned)msg->rm_call.cb_vers, (unsigned)msg->rm_call.cb_proc);
	r->rpc_xid = msg->rm_xid;
	sv->cur = r;
	x->xp_verf.oa_flavor = AUTH_NONE;
	x->xp_verf.oa_length = 0;
	return TRUE;
}

static enum xprt_stat x_stat(SVCXPRT *x)
{
	struct rr_svc *sv = SV(x);

	/* MOREREQS also within poll_us of the last reply: svc_getreq_common()
	 * then asks again at once and x_recv() looks for the next call */
	return sv->qh != sv->qt || (sv->spin_until && mono_us() < sv->spin_until) ? XPRT_MOREREQS
										 : XPRT_IDLE;
}

static bool_t x_getargs(SVCXPRT *x, xdrproc_t xa, void *ap)
{
	struct rr_svc *sv = SV(x);

	if (!sv->cur)
		return FALSE;
	return xa(&sv->cur->dec.x, ap);
}

static bool_t x_freeargs(SVCXPRT *x, xdrproc_t xa, void *ap)
{
	XDR fx;

	(void)x;
	fx.x_op = XDR_FREE;
	return xa(&fx, ap);
}

static bool_t x_reply(SVCXPRT *x, struct rpc_msg *msg)
{
	struct rr_svc *sv = SV(x);
	struct sreq *r = sv->cur;
	struct sconn *cn;
	struct rpcrdma_hdr h;
	struct rpcrdma_chunk wret, rret;
	struct rpcrdma_seg wsegs[RR_MAX_CHUNK_SEGS], rsegs[RR_MAX_CHUNK_SEGS];
	struct rpc_xdr s;
	size_t need;
	ssize_t hl;
	int t, form, divert;
	uint32_t inv = 0;
	int fl = 0;
	struct rbuf *rb;

	if (!r || !r->cn || !r->cn->used)
		return FALSE;
	DBG("reply to xid %08x\n", r->xid);
	cn = r->cn;
	r->replied = 1;
	msg->rm_xid = r->rpc_xid; /* as svc_vc_reply(): svc_sendreply() leaves it to us */
	sv->cur = NULL;
	need = xdr_sizeof((xdrproc_t)xdr_replymsg, msg) + 64;
	rb = rb_get(sv, need);
	if (!rb)
		{ fl = __LINE__; goto fail; }
	/* one DDP-eligible result into the first Write chunk, if offered */
	divert = r->h.nwrite > 0 && r->h.write[0].nsegs > 0;
	rpc_xdr_encode_init(&s, rb->p, (u_int)rb->cap, divert ? sv->o.ddp_threshold : 0, divert ? 1 : 0);
	if (!xdr_replymsg(&s.x, msg))
		{ fl = __LINE__; goto fail; }
	if (s.nitems && s.items[0].len > rpcrdma_chunk_len(&r->h.write[0])) {
		/* does not fit the chunk: inline after all */
		rpc_xdr_encode_init(&s, rb->p, (u_int)rb->cap, 0, 0);
		if (!xdr_replymsg(&s.x, msg))
			{ fl = __LINE__; goto fail; }
	}
	memset(&h, 0, sizeof(h));
	h.xid = r->xid;
	h.vers = RPCRDMA_VERSION;
	h.credits = sv->o.credits;
	h.proc = RPCRDMA_MSG;
	if (r->h.nwrite) {
		/* the Write list comes back with the lengths written (§3.4.6) */
		const struct rpcrdma_chunk *w = &r->h.write[0];
		uint64_t left = s.nitems ? s.items[0].len : 0;

		wret.nsegs = w->nsegs;
		wret.segs = wsegs;
		for (uint32_t i = 0; i < w->nsegs; i++) {
			wsegs[i] = w->segs[i];
			wsegs[i].length = (uint32_t)(left < w->segs[i].length ? left : w->segs[i].length);
			left -= wsegs[i].length;
		}
		if (s.nitems) {
			/* the item's octets go straight from the result memory */
			struct uiw_mr *mr;
			int posted;

			if (uiw_reg_mr(sv->pd, (void *)(uintptr_t)s.items[0].addr, s.items[0].len, 0, &mr))
				{ fl = __LINE__; goto fail; }
			cn->result_out = 1;
			posted = rr_post_rdma(cn->qp, 1, (uint8_t *)(uintptr_t)s.items[0].addr, mr->lkey,
					      s.items[0].len, w->segs, w->nsegs, SV_WRID(cn, RR_WR_WRITE, WS_RESULT));
			if (!posted)
				cn->result_out = 0;
			if (posted < 0 || (posted > 0 && wait_out(sv, cn, &cn->result_out))) {
				/* not written within wait_ms, or the connection
				 * failed: the service reuses its result memory
				 * once this returns, so the connection is aborted
				 * and the memory kept (and registered) until the
				 * Writes reading it are reported complete (a
				 * graceful close kept sending from it for 10 s
				 * while the service filled it with another
				 * client's data) */
				DBG("Write chunk not written: connection aborted, fencing the result memory\n");
				conn_fail(cn);
				fence_wait(sv, cn, &cn->result_out);
				uiw_dereg_mr(mr);
				{ fl = __LINE__; goto fail; }
			}
			/* the Write left: the result memory is the caller's again */
			uiw_dereg_mr(mr);
			sv->info.write_chunk_octets += s.items[0].len;
		}
		h.nwrite = 1;
		h.write = &wret;
	}
	hl = rpcrdma_hdr_len(&h);
	if (hl < 0)
		{ fl = __LINE__; goto fail; }
	form = rpcrdma_reply_form(&r->ci, (size_t)hl, s.pos, cn->inl.send_max);
	if (form == RPCRDMA_NOMSG) {
		const struct rpcrdma_chunk *rc = &r->h.reply;
		uint64_t left = s.pos;

		rret.nsegs = rc->nsegs;
		rret.segs = rsegs;
		for (uint32_t i = 0; i < rc->nsegs; i++) {
			rsegs[i] = rc->segs[i];
			rsegs[i].length = (uint32_t)(left < rc->segs[i].length ? left : rc->segs[i].length);
			left -= rsegs[i].length;
		}
		/* counted even when only some of its WRs get posted: then the
		 * marker of conn_fail() reports for them */
		rb->out++;
		cn->rb = rb;
		cn->rb_chain = 1;
		if (rr_post_rdma(cn->qp, 1, rb->p, rb->mr->lkey, s.pos, rc->segs, rc->nsegs,
				 SV_WRID(cn, RR_WR_WRITE, WS_RCHUNK)) < 0)
			{ fl = __LINE__; goto fail; }
		sv->info.reply_chunk_octets += s.pos;
		h.proc = RPCRDMA_NOMSG;
		h.has_reply = 1;
		h.reply = rret;
		if (cn->inl.remote_inv && rc->nsegs)
			inv = rc->segs[0].handle;
	} else if (form < 0) {
		uint8_t ebuf[32];
		ssize_t n = rpcrdma_error_encode(ebuf, sizeof(ebuf), &r->h, sv->o.credits, RPCRDMA_ERR_CHUNK, 0);

		post_rx(cn, r->slot);
		sv->info.rdma_errors++;
		return n > 0 && send_hdr_only(cn, ebuf, (size_t)n) == 0;
	} else if (cn->inl.remote_inv && r->h.nwrite && r->h.write[0].nsegs) {
		inv = r->h.write[0].segs[0].handle;
	}
	t = tx_slot(sv, cn);
	if (t < 0)
		{ fl = __LINE__; goto fail; }
	hl = rpcrdma_hdr_encode(cn->tx + (size_t)t * cn->txsz, cn->txsz, &h, 0);
	if (hl < 0)
		{ fl = __LINE__; goto fail; }
	if (h.proc == RPCRDMA_MSG) {
		if ((size_t)hl + s.pos > cn->txsz)
			{ fl = __LINE__; goto fail; }
		memcpy(cn->tx + (size_t)t * cn->txsz + hl, rb->p, s.pos);
		hl += s.pos;
	}
	/* the receive goes back before the reply can release a new call */
	post_rx(cn, r->slot);
	if (post_send(cn, t, (uint32_t)hl, inv))
		{ fl = __LINE__; goto fail; }
	uiw_progress(sv->ctx, 0); /* polled: the Send leaves now */
	if (sv->o.poll_us)
		sv->spin_until = mono_us() + sv->o.poll_us;
	DBG("reply sent: %zd octets, proc %u, inv %08x\n", hl, h.proc, inv);
	sv->info.replies++;
	if (h.proc == RPCRDMA_NOMSG) {
		/* wait for the Send (its completion reports the Reply chunk
		 * Writes before it too), bounded and asleep: a peer that stops
		 * reading TCP never lets it complete; then the connection is
		 * aborted and the reply buffer retired until its Writes are
		 * reported complete (the next reply gets a new one) */
		int64_t end = mono_ms() + sv->wait_ms;

		sv->waiting++;
		while (cn->used && !cn->failed && cn->tx_busy[t]) {
			if (poll_cq(sv))
				continue;
			if (mono_ms() > end) {
				DBG("reply Send not complete after %d ms: connection aborted\n", sv->wait_ms);
				conn_fail(cn);
				break;
			}
			uiw_progress(sv->ctx, 1); /* sleep until I/O, at most 1 ms */
		}
		sv->waiting--;
		if (cn->failed || !cn->used) {
			rb_retire(sv);
			return FALSE;
		}
	}
	return TRUE;
fail:
	DBG("reply failed at line %d\n", fl);
	post_rx(cn, r->slot);
	conn_fail(cn);
	rb_retire(sv);
	return FALSE;
}

/* everything of @sv and @x but the libtirpc registration */
static void sv_release(struct rr_svc *sv, SVCXPRT *x)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (sv->conns[i].used) {
			if (sv->conns[i].id)
				uiw_disconnect(sv->conns[i].id);
			conn_free(&sv->conns[i]);
		}
	if (sv->listen)
		uiw_destroy_id(sv->listen);
	rb_free(sv->rb); /* no connection is left to read it */
	if (sv->cq)
		uiw_destroy_cq(sv->cq);
	if (sv->pd)
		uiw_dealloc_pd(sv->pd);
	if (sv->ctx)
		uiw_close_context(sv->ctx);
	if (sv->epfd >= 0)
		close(sv->epfd);
	if (sv->tfd >= 0)
		close(sv->tfd);
	free(sv);
	free(x->xp_p3);
	free(x);
}

static void x_destroy(SVCXPRT *x)
{
	xprt_unregister(x);
	sv_release(SV(x), x);
}

static bool_t x_control(SVCXPRT *x, const u_int rq, void *in)
{
	(void)x;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops rr_xp_ops = { x_recv, x_stat, x_getargs, x_reply, x_freeargs, x_destroy };
static const struct xp_ops2 rr_xp_ops2 = { x_control };

SVCXPRT *svc_rdma_create(const char *addr, int port, const struct rpc_rdma_opts *opts)
{
	struct rr_svc *sv = calloc(1, sizeof(*sv));
	SVCXPRT *x = calloc(1, sizeof(*x));
	struct uiw_context_attr ca;
	struct epoll_event ee;
	int rc = -ENOMEM;

	svc_err[0] = 0;
	if (!sv || !x)
		goto fail;
	sv->epfd = -1;
	sv->tfd = -1;
	for (int i = 0; i < MAX_CONNS; i++)
		sv->conns[i].sv = sv;
	rr_opts_resolve(opts, &sv->o);
	sv->wait_ms = SV_WAIT_MS;
	if (opts && opts->wait_ms > 0)
		sv->wait_ms = opts->wait_ms;
	else if (getenv("UIW_RPC_WAIT_MS") && atoi(getenv("UIW_RPC_WAIT_MS")) > 0)
		sv->wait_ms = atoi(getenv("UIW_RPC_WAIT_MS"));
	memset(&ca, 0, sizeof(ca));
	/* polled: svc_run()'s thread turns the engine itself, one wake-up per
	 * call (a progress thread cost two thread switches per call) */
	ca.mode = UIW_CTX_POLLED;
	ca.crc = sv->o.crc > 0 ? UIW_CRC_ON : sv->o.crc == 0 ? UIW_CRC_OFF : UIW_CRC_DEFAULT;
	if ((rc = uiw_open_context(&sv->ctx, &ca)) || (rc = uiw_alloc_pd(sv->ctx, &sv->pd)) ||
	    /* every receive and every send WR of every connection may
	     * complete (or flush) before the next poll */
	    (rc = uiw_create_cq(sv->ctx, MAX_CONNS * (int)(sv->o.credits + SV_SEND_WR), sv, NULL, &sv->cq)) ||
	    (rc = uiw_create_id(sv->ctx, sv, &sv->listen)) ||
	    (rc = uiw_listen(sv->listen, addr ? addr : "0.0.0.0", (uint16_t)port, 64))) {
		snprintf(svc_err, sizeof(svc_err), "%s", strerror(-rc));
		goto fail;
	}
	sv->port = uiw_get_port(sv->listen);
	/* svc_run() sleeps on an epoll set of the context's I/O fd, the CM
	 * event fd and a tick that turns the engine at least every 100 ms
	 * (its timers), first at once: the first turn, in svc_run()'s thread,
	 * makes that thread the polled context's owner */
	rc = uiw_context_fd(sv->ctx);
	if (rc < 0) {
		snprintf(svc_err, sizeof(svc_err), "uiw_context_fd: %s", strerror(-rc));
		goto fail;
	}
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	sv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	{
		struct itimerspec its = { { 0, 100 * 1000000L }, { 0, 1 } };

		if (sv->epfd < 0 || sv->tfd < 0 || timerfd_settime(sv->tfd, 0, &its, NULL) ||
		    epoll_ctl(sv->epfd, EPOLL_CTL_ADD, rc, &ee) ||
		    epoll_ctl(sv->epfd, EPOLL_CTL_ADD, uiw_cm_event_fd(sv->ctx), &ee) ||
		    epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->tfd, &ee)) {
			rc = -errno;
			snprintf(svc_err, sizeof(svc_err), "epoll: %s", strerror(-rc));
			goto fail;
		}
	}
	x->xp_fd = sv->epfd;
	x->xp_port = (u_short)sv->port;
	x->xp_ops = &rr_xp_ops;
	x->xp_ops2 = &rr_xp_ops2;
	x->xp_p1 = sv;
	x->xp_netid = NULL;
	/* libtirpc keeps its per-transport extension (flags and the SVCAUTH
	 * that svc_getreq_common() fills) behind xp_p3; its allocator is not
	 * exported, so provide zeroed room for it (two words and a flag) */
	x->xp_p3 = calloc(1, 64);
	if (!x->xp_p3) {
		rc = -ENOMEM;
		goto fail;
	}
	sv->xprt = x;
	xprt_register(x);
	return x;
fail:
	if (!svc_err[0])
		snprintf(svc_err, sizeof(svc_err), "%s", strerror(-rc));
	if (sv && x) {
		sv_release(sv, x);
		return NULL;
	}
	free(sv);
	free(x);
	return NULL;
}

int svc_rdma_port(SVCXPRT *x)
{
	return x ? SV(x)->port : -1;
}

void svc_rdma_info(SVCXPRT *x, struct rpc_rdma_info *info)
{
	*info = SV(x)->info;
	info->credits = SV(x)->o.credits;
}

const char *svc_rdma_strerror(void)
{
	return svc_err[0] ? svc_err : "no error";
}
