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
 *    for the engine's timers and the deadlines, so svc_run() wakes when a
 *    connection, a call or a completion arrives; after a reply x_stat()
 *    says MOREREQS for poll_us (50 us) and x_recv() looks for the next call
 *    before svc_run() sleeps;
 *  - per connection, @credits receives of the inline receive size are
 *    posted, @credits granted in every reply, and @credits Send buffers
 *    kept, so that every call the peer may have outstanding can be
 *    answered; a call is decoded with rpcrdma_hdr_decode() and answered
 *    RDMA_ERROR (ERR_VERS, ERR_CHUNK) or dropped as RFC 8166 §4.5 says;
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
 * The one thread never waits for a peer.  svc_getreq_common() serves one
 * call at a time (xp_recv() hands it the next call that can be served,
 * xp_getargs() decodes its arguments, xp_reply() posts the reply), and
 * everything that depends on a peer runs without blocking (pick()):
 *  - a call with Read chunks has its Reads posted and waits, queued,
 *    until they are reported (one such call per connection at a time: the
 *    pull buffers are the connection's); meanwhile other calls are served;
 *  - a reply is posted and xp_reply() returns: its Writes read a copy of
 *    the Write chunk's data item in a reply buffer of the server's (the
 *    service's memory is its own again once svc_sendreply() returns, and
 *    a peer that stops reading would hold it for as long as it likes),
 *    the Writes and the Send go back to back (the send queue keeps their
 *    order), and the reply buffer goes back to the pool when the Send is
 *    reported complete;
 *  - a call is dispatched only when its connection has a free Send
 *    buffer, send queue room for the reply's WRs and reply memory within
 *    SV_CONN_OUT_MAX (SV_OUT_MAX for all connections; a connection that
 *    holds none may always go), else it waits queued and the server
 *    sleeps until a completion;
 *  - a reply or a pull not reported complete within wait_ms of its
 *    posting aborts its connection (checked on the tick), which drops its
 *    calls; its requester reconnects.
 *
 * Memory that posted work requests read or write is fenced: it is not
 * reused, deregistered or freed until the stack has reported the
 * completion (success or flush) of every WR that references it.  Each
 * chain of RDMA Reads or Writes signals only its last WR; completions of a
 * send queue come in the order its WRs were posted, so a reply's Send
 * completion covers its Writes.  A connection that fails is aborted (its
 * QP moved to error: a graceful disconnect would keep sending from that
 * memory for up to 10 s to a peer that stopped reading), a signaled
 * zero-length marker Write is posted behind everything (its flush stands
 * for the chains whose own signaled end was never posted or whose
 * completion was lost), and its CM id is destroyed, which shuts its socket
 * down and ends the I/O in flight; the rest goes once the marker is
 * reported (reap()), its reply buffers deregistered (which returns only
 * once the stack let go of them) and freed.
 */
#include "rpc_rdma_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
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
#define QCAP (MAX_CONNS * RR_CREDITS_MAX) /* calls not yet dispatched */
/* send queue depth: a Send per credit, a reply's Write and Reply chunk
 * segments and Send, a call's Read segments, the marker, and spare */
#define SV_SQ_CAP(credits) (2 * (credits) + 2 * RR_MAX_CHUNK_SEGS + 1 + RR_MAX_READ_SEGS + 8)
#define SV_WAIT_MS	   10000 /* default bound of a reply's or a pull's completion (wait_ms) */
#define SV_CHECK_MS	   20	 /* deadlines looked at (at most) this often */
#define SV_CONN_OUT_MAX	   (32u << 20) /* reply memory one connection holds before its calls wait */
#define SV_OUT_MAX	   (256u << 20) /* ... all connections together */
#define SV_POOL_MAX_N	   16	/* idle reply buffers kept */
#define SV_POOL_MAX_BYTES  (64u << 20)
#define SV_RB_ROUND	   (64u << 10) /* reply buffer sizes are multiples of this */
#define SV_RB_HUGE	   (2u << 20)  /* ... or of this, in huge pages, from this size on */

static __thread char svc_err[256];

/* slots (in SV_WRID) of the chains of RDMA Reads/Writes: which memory
 * their WRs reference */
#define WS_PULL	 0 /* Reads of a call's Read chunks, into cbuf or p0 */
#define WS_REPLY 1 /* Writes of a reply (Write chunk, Reply chunk), from its struct rbuf */
#define WS_FENCE 3 /* the marker behind everything of a failed connection */

/* a reply buffer: the encoded reply and a copy of its Write chunk's data
 * item, the source of the reply's RDMA Writes.  Held by the Send buffer
 * (struct txs) of the reply until that Send is reported complete, then
 * back in the server's pool */
struct rbuf {
	uint8_t *p;
	size_t cap;
	struct uiw_mr *mr;
	struct rbuf *next; /* in the pool */
};

/* a call's way from its receive to its reply (x_recv()'s pick()) */
enum {
	RQ_NEW,	  /* queued, its Read chunks not pulled yet */
	RQ_PULL,  /* RDMA Reads of its Read chunks posted (cn->pull_out) */
	RQ_READY, /* the unreduced call is complete: dispatch when a Send buffer is free */
	RQ_ERR,	  /* answer RDMA_ERROR (err) when a Send buffer is free */
};

struct sreq {
	struct sconn *cn;
	unsigned slot; /* its receive: re-posted when the call is answered or dropped */
	int state;     /* RQ_* */
	int phase;     /* RQ_PULL of a Long call: 1 its Position-Zero chunk, 2 the others */
	uint32_t err;  /* RQ_ERR: RPCRDMA_ERR_VERS or RPCRDMA_ERR_CHUNK */
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
	struct rpcrdma_xdr dec;
	int replied;
};

/* a reply's Send buffer and what the reply's WRs hold until that Send is
 * reported complete (a send queue completes in order: the Send's
 * completion reports the Writes posted before it too) */
struct txs {
	int busy;
	int wrs;	  /* WRs of the reply (Writes and the Send): send queue room */
	struct rbuf *rb;  /* the Writes' source, or NULL */
	int64_t t0;	  /* posted (mono_ms()): the reply's deadline is t0 + wait_ms */
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
	uint8_t *tx; /* ntx reply Send buffers */
	uint32_t txsz;
	struct uiw_mr *tx_mr;
	struct txs *txs;
	unsigned ntx;	  /* = credits: every call the peer may send can be answered */
	unsigned tx_busy; /* Send buffers in use */
	size_t out_bytes; /* reply buffers held by its Send buffers */
	int sq_used, sq_cap; /* send queue WRs counted until reported */
	uint8_t *cbuf; /* unreduced call with pulled chunks */
	size_t ccap;
	struct uiw_mr *c_mr;
	uint8_t *p0; /* a Long call's pulled payload */
	size_t p0cap;
	struct uiw_mr *p0_mr;
	struct sreq *reqs; /* one per receive slot */
	/* the call that owns cbuf/p0: its Reads are in flight (pull_out) or
	 * it waits for dispatch or is being served; one at a time */
	struct sreq *puller;
	int pull_out;	   /* WS_PULL chain posted, not reported yet */
	int pull_wrs;	   /* its WRs */
	int64_t pull_t0;   /* posted (mono_ms()) */
	int fence_out;	   /* WS_FENCE: the marker is posted, not yet reported */
	int fence_retry;   /* the marker could not be posted yet */
	int failed;	   /* aborted (conn_fail()): no more calls, its QP in error, id destroyed */
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
	/* calls received and not yet dispatched or answered (one per receive
	 * at most), in arrival order; pick() takes the first it can serve */
	struct sreq *q[QCAP];
	unsigned qh, qt;
	int more; /* pick() found work at its last look: x_stat() says MOREREQS */
	struct sreq *cur;
	struct rbuf *pool; /* idle reply buffers */
	unsigned pool_n;
	size_t pool_bytes;
	size_t out_bytes; /* reply buffers held by Sends of every connection */
	int64_t next_check; /* mono_ms() of the next deadline check */
	struct rpc_rdma_info info;
	int wait_ms; /* bound of a reply's or a pull's completion (opts) */
	uint64_t queue_full; /* calls refused: dispatch ring full */
	uint64_t cq_overflows;
};

/* ---- connections ------------------------------------------------------- */

/* a work request id names the connection by index AND generation: a
 * completion of a connection already freed (flushes arrive after the QP is
 * gone) must not be taken for the new connection in the same slot */
#define SV_WRID(cn, kind, slot)                                                                    \
	((uint64_t)(cn)->gen << 32 |                                                               \
	 RR_WRID(kind, (unsigned)((cn) - (cn)->sv->conns) << 12 | (unsigned)(slot)))

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

static int post_rx(struct sconn *cn, unsigned slot)
{
	struct uiw_sge sge = { (uintptr_t)(cn->rx + (size_t)slot * cn->rxsz), cn->rxsz, cn->rx_mr->lkey };
	struct uiw_recv_wr wr = { SV_WRID(cn, RR_WR_RECV, slot), NULL,
				  &sge, 1 },
			   *bad;

	return uiw_post_recv(cn->qp, &wr, &bad);
}

/* ---- reply buffers ------------------------------------------------------ */

/* deregister @b (uiw_dereg_mr() returns only once the stack let go of
 * it): 0, or -1 when the stack still holds it, and then its memory must be
 * kept rather than freed or reused */
static int rb_unreg(struct rbuf *b)
{
	if (b->mr && uiw_dereg_mr(b->mr)) {
		fprintf(stderr, "svc_rdma: a reply buffer is still referenced: leaked, not freed\n");
		return -1;
	}
	b->mr = NULL;
	return 0;
}

static void rb_free(struct rbuf *b)
{
	/* nothing references it any more (its WRs were reported, or its
	 * connection is gone) */
	if (!b || rb_unreg(b))
		return;
	free(b->p);
	free(b);
}

/* a reply buffer of at least @need octets: an idle one from the pool (the
 * smallest that fits) or a new one */
static struct rbuf *rb_get(struct rr_svc *sv, size_t need)
{
	struct rbuf **best = NULL, *b;

	for (struct rbuf **pp = &sv->pool; *pp; pp = &(*pp)->next)
		if ((*pp)->cap >= need && (!best || (*pp)->cap < (*best)->cap))
			best = pp;
	if (best) {
		b = *best;
		*best = b->next;
		b->next = NULL;
		sv->pool_n--;
		sv->pool_bytes -= b->cap;
		return b;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (need >= SV_RB_HUGE) {
		/* in huge pages where the kernel gives them: a fresh buffer is
		 * touched whole by the copy of a large result, and 4 KiB page
		 * faults cost about 12 us each in a VM (a 16 MiB reply took
		 * 50 ms of CPU, every other client waiting) */
		b->cap = (need + SV_RB_HUGE - 1) & ~(size_t)(SV_RB_HUGE - 1);
		b->p = aligned_alloc(SV_RB_HUGE, b->cap);
		if (b->p)
			madvise(b->p, b->cap, MADV_HUGEPAGE); /* advice only: failure is harmless */
	} else {
		b->cap = (need + SV_RB_ROUND - 1) & ~(size_t)(SV_RB_ROUND - 1);
		b->p = aligned_alloc(4096, b->cap);
	}
	if (!b->p || uiw_reg_mr(sv->pd, b->p, b->cap, 0, &b->mr)) {
		b->mr = NULL;
		rb_free(b);
		return NULL;
	}
	return b;
}

/* @b is no longer referenced by any WR: back to the pool, or freed when
 * the pool holds enough (the largest idle one goes first) */
static void rb_put(struct rr_svc *sv, struct rbuf *b)
{
	if (!b)
		return;
	b->next = sv->pool;
	sv->pool = b;
	sv->pool_n++;
	sv->pool_bytes += b->cap;
	while (sv->pool && (sv->pool_n > SV_POOL_MAX_N || sv->pool_bytes > SV_POOL_MAX_BYTES)) {
		struct rbuf **big = &sv->pool;

		for (struct rbuf **pp = &sv->pool; *pp; pp = &(*pp)->next)
			if ((*pp)->cap > (*big)->cap)
				big = pp;
		b = *big;
		*big = b->next;
		sv->pool_n--;
		sv->pool_bytes -= b->cap;
		rb_free(b);
	}
}

/* a reply buffer of a failed connection: deregistered (which returns only
 * once the stack let go of it), registered anew and pooled: its memory is
 * kept (a stalled requester's next call would otherwise fault in a fresh
 * buffer) */
static void rb_recycle(struct rr_svc *sv, struct rbuf *b)
{
	if (rb_unreg(b))
		return;
	if (uiw_reg_mr(sv->pd, b->p, b->cap, 0, &b->mr)) {
		b->mr = NULL;
		rb_free(b);
		return;
	}
	rb_put(sv, b);
}

/* Send buffer @t of @cn is reported complete (success: its reply's Writes
 * too); @keep: the connection failed, its reply buffer stays with the
 * connection until conn_free() */
static void tx_done(struct sconn *cn, unsigned t, int keep)
{
	struct txs *x = &cn->txs[t];

	if (!x->busy)
		return;
	x->busy = 0;
	cn->tx_busy--;
	cn->sq_used -= x->wrs;
	x->wrs = 0;
	if (x->rb && !keep) {
		cn->out_bytes -= x->rb->cap;
		cn->sv->out_bytes -= x->rb->cap;
		rb_put(cn->sv, x->rb);
		x->rb = NULL;
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

/* @cn failed: aborted, not closed gracefully (a graceful close keeps
 * sending what is queued, from memory the server may reuse, for up to
 * 10 s to a peer that stopped reading): its QP goes to error (every WR is
 * flushed), the marker posted behind everything fences what no signaled
 * completion will report, and its id is destroyed: its socket is shut
 * down, which ends the send in flight, and closed (uiw_destroy_id()
 * returns then).  Its calls not yet answered are dropped.  No
 * DISCONNECTED comes for it: reap() frees it */
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

/* drop the queued calls of @cn and compact the ring (left as holes, they
 * were counted, and calls of other connections queued later overwrote
 * unread ones) */
static void unqueue(struct rr_svc *sv, struct sconn *cn)
{
	unsigned w = sv->qh;

	for (unsigned i = sv->qh; i != sv->qt; i++) {
		struct sreq *r = sv->q[i % QCAP];

		if (r->cn != cn)
			sv->q[w++ % QCAP] = r;
	}
	sv->qt = w;
}

/* take the call at ring index @i out of the ring, order kept; returns the
 * index a scan at @i goes on from after its i++ */
static unsigned q_remove(struct rr_svc *sv, unsigned i)
{
	if (i == sv->qh) {
		sv->qh++;
		return i;
	}
	for (unsigned j = i; j + 1 != sv->qt; j++)
		sv->q[j % QCAP] = sv->q[(j + 1) % QCAP];
	sv->qt--;
	return i - 1;
}

static void conn_free(struct sconn *cn)
{
	struct rr_svc *sv = cn->sv;

	unqueue(sv, cn);
	if (sv->cur && sv->cur->cn == cn)
		sv->cur = NULL;
	/* the id first: it closes the connection without the reset and
	 * wait a live QP's uiw_destroy_qp() would do (conn_fail() destroyed
	 * it already) */
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
	/* its connection is closed (DISCONNECTED, or its id and QP
	 * destroyed): every WR was flushed and its I/O has ended */
	for (unsigned t = 0; cn->txs && t < cn->ntx; t++) {
		struct rbuf *b = cn->txs[t].rb;

		if (b) {
			cn->txs[t].rb = NULL;
			sv->out_bytes -= b->cap;
			if (cn->failed)
				rb_recycle(sv, b);
			else
				rb_put(sv, b);
		}
	}
	free(cn->rx);
	free(cn->tx);
	free(cn->txs);
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
	cn->ntx = sv->o.credits;
	cn->sq_cap = (int)SV_SQ_CAP(sv->o.credits);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = sv->cq;
	qa.cap.max_send_wr = (unsigned)cn->sq_cap;
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
	cn->tx = aligned_alloc(64, (size_t)cn->ntx * cn->txsz);
	cn->txs = calloc(cn->ntx, sizeof(struct txs));
	cn->reqs = calloc(sv->o.credits, sizeof(struct sreq));
	if (!cn->rx || !cn->tx || !cn->txs || !cn->reqs)
		goto fail;
	if (uiw_reg_mr(sv->pd, cn->rx, (size_t)sv->o.credits * cn->rxsz, UIW_ACCESS_LOCAL_WRITE, &cn->rx_mr) ||
	    uiw_reg_mr(sv->pd, cn->tx, (size_t)cn->ntx * cn->txsz, 0, &cn->tx_mr))
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

/* ---- calls ------------------------------------------------------------- */

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

/* a free Send buffer of @cn, or -1 */
static int tx_free(struct sconn *cn)
{
	if (cn->tx_busy >= cn->ntx)
		return -1;
	for (unsigned i = 0; i < cn->ntx; i++)
		if (!cn->txs[i].busy)
			return (int)i;
	return -1;
}

/* post the reply in Send buffer @t (@len octets; @inv: Send with
 * Invalidate of that STag), after the @wrs - 1 Writes of the reply */
static int post_send(struct sconn *cn, int t, uint32_t len, uint32_t inv, int wrs)
{
	struct uiw_sge sge = { (uintptr_t)(cn->tx + (size_t)t * cn->txsz), len, cn->tx_mr->lkey };
	struct uiw_send_wr wr, *bad;
	struct txs *x = &cn->txs[t];

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = SV_WRID(cn, RR_WR_SEND, t);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = inv ? UIW_WR_SEND_WITH_INV : UIW_WR_SEND;
	wr.invalidate_rkey = inv;
	wr.send_flags = UIW_SEND_SIGNALED;
	x->busy = 1;
	x->wrs = wrs;
	x->t0 = mono_ms();
	cn->tx_busy++;
	cn->sq_used += wrs;
	return uiw_post_send(cn->qp, &wr, &bad);
}

/* the RDMA_ERROR @err for @r, whose receive is re-posted first; -1 when no
 * Send buffer or no send queue room is free (@r waits, queued) */
static int send_err(struct rr_svc *sv, struct sreq *r)
{
	struct sconn *cn = r->cn;
	int t = tx_free(cn);
	ssize_t n;

	if (t < 0 || cn->sq_used + 2 > cn->sq_cap)
		return -1;
	n = rpcrdma_error_encode(cn->tx + (size_t)t * cn->txsz, cn->txsz, &r->h, sv->o.credits, r->err, 0);
	sv->info.rdma_errors++;
	post_rx(cn, r->slot);
	if (n <= 0 || post_send(cn, t, (uint32_t)n, 0, 1)) {
		DBG("error reply not sent: connection failed\n");
		conn_fail(cn);
	}
	return 0;
}

/* a call arrived in receive @slot of @cn (@len octets) */
static void on_call(struct rr_svc *sv, struct sconn *cn, unsigned slot, uint32_t len)
{
	struct sreq *r = &cn->reqs[slot];
	uint8_t *p = cn->rx + (size_t)slot * cn->rxsz;
	struct rpcrdma_dec_cfg cfg;
	struct rpcrdma_dec_err e;
	ssize_t hl;

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
	case RPCRDMA_V_SEND_ERR_CHUNK:
		/* answered in turn, when a Send buffer is free; the receive
		 * (and so @r) stays the call's until then */
		r->state = RQ_ERR;
		r->err = hl == -EPROTONOSUPPORT ? RPCRDMA_ERR_VERS : RPCRDMA_ERR_CHUNK;
		queue_req(sv, r);
		return;
	case RPCRDMA_V_ACCEPT:
		break;
	}
	rpcrdma_chunk_info(&r->h, &r->ci);
	r->xid = r->h.xid;
	r->hl = (uint32_t)hl;
	r->len = len;
	r->state = RQ_NEW;
	queue_req(sv, r);
}

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

/* post the Reads of one chain of @r's Read chunk segments @segs (n) into
 * @dst: 0 posted (RQ_PULL until reported), 1 nothing to read, -1 the
 * connection failed */
static int pull(struct sconn *cn, uint8_t *dst, uint32_t lkey, uint64_t len, const struct rpcrdma_seg *segs,
		uint32_t n)
{
	int posted = rr_post_rdma(cn->qp, 0, dst, lkey, len, segs, n, SV_WRID(cn, RR_WR_READ, WS_PULL));

	if (posted < 0) {
		conn_fail(cn);
		return -1;
	}
	if (!posted)
		return 1;
	cn->pull_out = 1;
	cn->pull_wrs = posted;
	cn->sq_used += posted;
	cn->pull_t0 = mono_ms();
	return 0;
}

/* the unreduced call of @r: pull its Read chunks into place, one call of a
 * connection at a time (one pull buffer per connection), without waiting:
 * 0 the call is complete (RQ_READY), 1 Reads are in flight (RQ_PULL, call
 * again once cn->pull_out is 0), -1 the call is answered ERR_CHUNK
 * (RQ_ERR) or its connection failed.
 *
 * Zero-length chunks and segments, as RFC 8166 has them (read from the
 * RFC's text): §3.4.3 names a segment of Length 0 an "empty segment", a
 * legal segment; §3.4.4 makes a chunk's length the sum of its segments';
 * §3.4.5 reinserts a Read chunk's octets at its Position.  So an empty
 * segment moves nothing and gets no RDMA Read (rr_post_rdma() skips it),
 * and a Read chunk whose segments are all empty reinserts zero octets:
 * when nothing was posted nothing is waited for.  Whether zero octets suit
 * the arguments is the ULP's to say (GARBAGE_ARGS, §4.5.2).  A
 * Position-Zero Read chunk of length 0 leaves an RDMA_NOMSG call without
 * any Payload stream, not even the XID (§3.2), the case §4.5.2 lists as
 * an XDR error (nowhere to hold the Payload stream): ERR_CHUNK.
 *
 * A Long call takes two steps: its Position-Zero chunk is pulled first
 * (phase 1), then the call is rebuilt from it with the other chunks
 * pulled at their positions (phase 2, reads issued from the rebuilt
 * offsets). */
static int assemble(struct rr_svc *sv, struct sreq *r)
{
	struct sconn *cn = r->cn;
	uint8_t *p = cn->rx + (size_t)r->slot * cn->rxsz;
	const uint8_t *red; /* the reduced Payload stream */
	uint64_t redlen, total, o = 0, ri = 0;
	uint32_t k = 0;
	int rc;

	if (r->ci.read_chunks)
		cn->puller = r; /* cbuf and p0 are its until it is answered */
	if (r->state == RQ_NEW && r->ci.long_call) {
		/* phase 1: the Position-Zero chunk */
		struct rpcrdma_seg s0[RR_MAX_READ_SEGS];
		uint32_t n0 = 0;

		if (!r->ci.pos0_len || r->ci.pos0_len > sv->o.max_call ||
		    grow(&cn->p0, &cn->p0cap, &cn->p0_mr, sv->pd, r->ci.pos0_len + 4, UIW_ACCESS_LOCAL_WRITE))
			goto err_chunk;
		for (uint32_t i = 0; i < r->h.nread; i++)
			if (r->h.read[i].position == 0)
				s0[n0++] = r->h.read[i].seg;
		r->state = RQ_PULL;
		r->phase = 1;
		rc = pull(cn, cn->p0, cn->p0_mr->lkey, r->ci.pos0_len, s0, n0);
		if (rc < 0)
			return -1;
		sv->info.read_chunk_octets += r->ci.pos0_len;
		if (rc == 0)
			return 1;
	}
	if (r->state == RQ_PULL && r->phase == 2) {
		/* phase 2 reported: the call is in cbuf (r->call_len) */
		r->call = cn->cbuf;
		goto ready;
	}
	if (r->ci.long_call) {
		red = cn->p0;
		redlen = r->ci.pos0_len;
	} else {
		red = p + r->hl;
		redlen = r->len - (uint64_t)r->hl;
	}
	if (r->ci.read_chunks == (r->ci.long_call ? 1u : 0u)) {
		r->call = red;
		r->call_len = (uint32_t)redlen;
		goto ready;
	}
	/* rebuild: reduced octets, then each chunk at its position; the
	 * Reads go out together, one chain */
	total = redlen + (r->ci.read_len - (r->ci.long_call ? r->ci.pos0_len : 0)) + 4 * r->h.nread;
	if (total > sv->o.max_call ||
	    grow(&cn->cbuf, &cn->ccap, &cn->c_mr, sv->pd, total, UIW_ACCESS_LOCAL_WRITE))
		goto err_chunk;
	{
		struct rpcrdma_seg sg[RR_MAX_READ_SEGS];
		uint8_t *dst[RR_MAX_READ_SEGS];
		uint32_t n = 0;
		uint64_t clen_all = 0;

		while (k < r->h.nread) {
			uint32_t pos = r->h.read[k].position;
			uint64_t clen = 0, before;

			if (pos == 0) { /* the Long call's own chunk */
				k++;
				continue;
			}
			if (pos < o || pos - o > redlen - ri)
				goto err_chunk; /* positions out of order or past the stream */
			before = pos - o;
			memcpy(cn->cbuf + o, red + ri, before);
			o += before;
			ri += before;
			while (k < r->h.nread && r->h.read[k].position == pos) {
				sg[n] = r->h.read[k].seg;
				dst[n] = cn->cbuf + o + clen;
				clen += r->h.read[k].seg.length;
				n++;
				k++;
			}
			o += clen;
			clen_all += clen;
			while (o % 4)
				cn->cbuf[o++] = 0;
		}
		memcpy(cn->cbuf + o, red + ri, redlen - ri);
		o += redlen - ri;
		r->call_len = (uint32_t)o;
		/* one Read per non-empty segment into its place, the last
		 * signaled */
		{
			int posted = 0, last = -1;

			for (uint32_t i = 0; i < n; i++)
				if (sg[i].length)
					last = (int)i;
			for (uint32_t i = 0; i < n; i++) {
				struct uiw_sge sge;
				struct uiw_send_wr wr, *bad;

				if (!sg[i].length)
					continue;
				memset(&wr, 0, sizeof(wr));
				sge.addr = (uintptr_t)dst[i];
				sge.length = sg[i].length;
				sge.lkey = cn->c_mr->lkey;
				wr.sg_list = &sge;
				wr.num_sge = 1;
				wr.opcode = UIW_WR_RDMA_READ;
				wr.wr.rdma.remote_addr = sg[i].offset;
				wr.wr.rdma.rkey = sg[i].handle;
				if ((int)i == last) {
					wr.wr_id = SV_WRID(cn, RR_WR_READ, WS_PULL);
					wr.send_flags = UIW_SEND_SIGNALED;
				}
				if (uiw_post_send(cn->qp, &wr, &bad)) {
					conn_fail(cn);
					return -1;
				}
				posted++;
			}
			sv->info.read_chunk_octets += clen_all;
			if (posted) {
				cn->pull_out = 1;
				cn->pull_wrs = posted;
				cn->sq_used += posted;
				cn->pull_t0 = mono_ms();
				r->state = RQ_PULL;
				r->phase = 2;
				return 1;
			}
			r->call = cn->cbuf;
		}
	}
ready:
	r->state = RQ_READY;
	sv->info.calls++;
	return 0;
err_chunk:
	if (cn->puller == r)
		cn->puller = NULL;
	r->state = RQ_ERR;
	r->err = RPCRDMA_ERR_CHUNK;
	return -1;
}

/* ---- completions ------------------------------------------------------- */

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
		if (slot == WS_PULL && cn->pull_out) {
			cn->pull_out = 0;
			cn->sq_used -= cn->pull_wrs;
			cn->pull_wrs = 0;
		}
		break;
	case RR_WR_WRITE:
		/* a reply's Writes: its Send's completion, after them,
		 * releases their memory */
		if (slot == WS_FENCE && cn->fence_out) {
			/* everything posted before it is reported too */
			cn->fence_out = 0;
			cn->pull_out = 0;
		}
		break;
	case RR_WR_SEND:
		if (slot < cn->ntx)
			tx_done(cn, slot, wc->status != UIW_WC_SUCCESS);
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

/* a connection whose reply or pull is not reported complete within
 * wait_ms of its posting (a peer that stopped reading TCP or does not
 * answer RDMA Read Requests) is aborted; checked every SV_CHECK_MS.  No
 * thread waits for it meanwhile: the other connections are served */
static void deadlines(struct rr_svc *sv)
{
	int64_t now = mono_ms();

	if (now < sv->next_check)
		return;
	sv->next_check = now + SV_CHECK_MS;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct sconn *cn = &sv->conns[i];
		int late = 0;

		if (!cn->used || cn->failed)
			continue;
		if (cn->pull_out && now - cn->pull_t0 > sv->wait_ms)
			late = 1;
		for (unsigned t = 0; !late && cn->tx_busy && t < cn->ntx; t++)
			if (cn->txs[t].busy && now - cn->txs[t].t0 > sv->wait_ms)
				late = 1;
		if (late) {
			DBG("connection %d: a reply or pull not complete after %d ms: aborted\n", i, sv->wait_ms);
			conn_fail(cn);
		}
	}
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

/* may a reply to a call of @cn be posted now: a Send buffer, send queue
 * room for its Writes, and reply memory within the bounds (a connection
 * holding none may always go: every connection makes progress) */
static int can_reply(struct rr_svc *sv, struct sconn *cn, const struct sreq *r)
{
	int wrs = 1 + (int)(r->h.nwrite ? r->h.write[0].nsegs : 0) + (int)(r->h.has_reply ? r->h.reply.nsegs : 0);

	if (cn->tx_busy >= cn->ntx || cn->sq_used + wrs + 1 > cn->sq_cap)
		return 0;
	return !cn->out_bytes || (cn->out_bytes < SV_CONN_OUT_MAX && sv->out_bytes < SV_OUT_MAX);
}

/* the first queued call that can be served now, after taking every step
 * that needs no wait (pulls posted, error replies sent); NULL: none */
static struct sreq *pick(struct rr_svc *sv)
{
	for (unsigned i = sv->qh; i != sv->qt; i++) {
		struct sreq *r = sv->q[i % QCAP];
		struct sconn *cn = r->cn;

		if (!cn->used || cn->failed) {
			i = q_remove(sv, i);
			continue;
		}
		if (r->state == RQ_NEW || (r->state == RQ_PULL && !cn->pull_out)) {
			if (r->state == RQ_NEW && r->ci.read_chunks &&
			    ((cn->puller && cn->puller != r) || cn->sq_used + (int)r->h.nread + 1 > cn->sq_cap))
				continue; /* the pull buffers are another call's */
			if (assemble(sv, r) < 0 && cn->failed)
				continue;
		}
		if (r->state == RQ_ERR) {
			if (send_err(sv, r) == 0)
				i = q_remove(sv, i);
			continue;
		}
		if (r->state == RQ_READY && can_reply(sv, cn, r)) {
			q_remove(sv, i);
			return r;
		}
	}
	return NULL;
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

/* @r is done with (answered, or dropped without a reply): its pull
 * buffers are free for the connection's next call */
static void call_done(struct sreq *r)
{
	if (r->cn && r->cn->puller == r)
		r->cn->puller = NULL;
}

static bool_t x_recv(SVCXPRT *x, struct rpc_msg *msg)
{
	struct rr_svc *sv = SV(x);
	struct sreq *r = NULL;

	if (sv->cur) {
		if (!sv->cur->replied && sv->cur->cn && !sv->cur->cn->failed)
			post_rx(sv->cur->cn, sv->cur->slot); /* a call that got no reply */
		call_done(sv->cur);
	}
	sv->cur = NULL;
	turn(sv);
	poll_cq(sv);
	deadlines(sv);
	reap(sv);
	for (;;) {
		if (cm_events(sv))
			uiw_progress(sv->ctx, 0); /* an accept: its MPA Reply leaves now */
		poll_cq(sv);
		r = pick(sv);
		if (r)
			break;
		/* shortly after a reply the next call is likely: look for it
		 * before svc_run() sleeps (poll_us) */
		if (!sv->spin_until || mono_us() >= sv->spin_until) {
			/* what pick() posted leaves now; a turn that brought
			 * completions is looked at before svc_run() sleeps (the
			 * context fd was read by that turn: nothing would wake
			 * it for them) */
			uiw_progress(sv->ctx, 0);
			if (poll_cq(sv))
				continue;
			sv->spin_until = 0;
			sv->more = 0;
			return FALSE;
		}
	}
	sv->more = 1; /* there may be another: svc_getreq_common() asks again */
	rpcrdma_xdr_decode_init(&r->dec, r->call, r->call_len, NULL, 0);
	if (!xdr_callmsg(&r->dec.x, msg)) {
		/* not an RPC call: drop it, keep the receive */
		post_rx(r->cn, r->slot);
		call_done(r);
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

	/* MOREREQS after a dispatch (another call may be ready) and within
	 * poll_us of the last reply: svc_getreq_common() then asks again at
	 * once and x_recv() looks for the next call.  Calls that wait (for
	 * their Reads, or for a Send buffer of a connection whose replies
	 * have not left) are not more requests: svc_run() sleeps until a
	 * completion, a connection or the tick wakes it */
	return sv->more || (sv->spin_until && mono_us() < sv->spin_until) ? XPRT_MOREREQS : XPRT_IDLE;
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

/* the reply to the call being served, posted without waiting: the reply
 * is encoded into a reply buffer of the server's; the first DDP-eligible
 * result of ddp_threshold octets or more, when the call offered a Write
 * chunk, is copied after it (svc_sendreply() hands the service's memory
 * back when this returns, and a peer may take its time to read the
 * Writes); the Writes (Write chunk, Reply chunk) and the Send go out back
 * to back (the send queue keeps their order) and the reply buffer is held
 * until the Send is reported complete.  pick() dispatched the call only
 * with a Send buffer and send queue room free */
static bool_t x_reply(SVCXPRT *x, struct rpc_msg *msg)
{
	struct rr_svc *sv = SV(x);
	struct sreq *r = sv->cur;
	struct sconn *cn;
	struct rpcrdma_hdr h;
	struct rpcrdma_chunk wret, rret;
	struct rpcrdma_seg wsegs[RR_MAX_CHUNK_SEGS], rsegs[RR_MAX_CHUNK_SEGS];
	struct rpcrdma_xdr s;
	size_t need, ioff = 0;
	ssize_t hl;
	int t, form, divert, wrs = 1, posted;
	uint32_t inv = 0;
	int fl = 0;
	struct rbuf *rb;

	if (!r || !r->cn || !r->cn->used)
		return FALSE;
	DBG("reply to xid %08x\n", r->xid);
	cn = r->cn;
	r->replied = 1;
	call_done(r);
	msg->rm_xid = r->rpc_xid; /* as svc_vc_reply(): svc_sendreply() leaves it to us */
	sv->cur = NULL;
	if (cn->failed) {
		/* failed while the service ran (a deadline, a flush) */
		return FALSE;
	}
	t = tx_free(cn);
	/* room for the encoded reply and, 64-aligned after it, the item */
	need = xdr_sizeof((xdrproc_t)xdr_replymsg, msg) + 128;
	rb = rb_get(sv, need);
	if (t < 0 || !rb)
		{ fl = __LINE__; goto fail; }
	/* one DDP-eligible result into the first Write chunk, if offered */
	divert = r->h.nwrite > 0 && r->h.write[0].nsegs > 0;
	rpcrdma_xdr_encode_init(&s, rb->p, (u_int)rb->cap, divert ? sv->o.ddp_threshold : 0, divert ? 1 : 0);
	if (!xdr_replymsg(&s.x, msg))
		{ fl = __LINE__; goto fail; }
	if (s.nitems && s.items[0].len > rpcrdma_chunk_len(&r->h.write[0])) {
		/* does not fit the chunk: inline after all */
		rpcrdma_xdr_encode_init(&s, rb->p, (u_int)rb->cap, 0, 0);
		if (!xdr_replymsg(&s.x, msg))
			{ fl = __LINE__; goto fail; }
	}
	if (s.nitems) {
		/* the copy that the Writes read: the service's memory is its
		 * own again when this returns */
		ioff = ((size_t)s.pos + 63) & ~(size_t)63;
		if (ioff + s.items[0].len > rb->cap)
			{ fl = __LINE__; goto fail; }
		memcpy(rb->p + ioff, s.items[0].addr, s.items[0].len);
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
		h.nwrite = 1;
		h.write = &wret;
	}
	hl = rpcrdma_hdr_len(&h);
	if (hl < 0)
		{ fl = __LINE__; goto fail; }
	form = rpcrdma_reply_form(&r->ci, (size_t)hl, s.pos, cn->inl.send_max);
	if (form < 0) {
		/* fits nowhere: ERR_CHUNK (§4.5.3), in the Send buffer pick()
		 * made sure of */
		rb_put(sv, rb);
		r->state = RQ_ERR;
		r->err = RPCRDMA_ERR_CHUNK;
		return send_err(sv, r) == 0 && !cn->failed;
	}
	/* from here on the reply buffer is the Send buffer's: a failure
	 * leaves it there, with the connection, until conn_free() */
	cn->txs[t].rb = rb;
	cn->out_bytes += rb->cap;
	sv->out_bytes += rb->cap;
	if (s.nitems) {
		posted = rr_post_rdma(cn->qp, 1, rb->p + ioff, rb->mr->lkey, s.items[0].len, r->h.write[0].segs,
				      r->h.write[0].nsegs, SV_WRID(cn, RR_WR_WRITE, WS_REPLY));
		if (posted < 0)
			{ fl = __LINE__; goto fail_held; }
		wrs += posted;
		sv->info.write_chunk_octets += s.items[0].len;
	}
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
		posted = rr_post_rdma(cn->qp, 1, rb->p, rb->mr->lkey, s.pos, rc->segs, rc->nsegs,
				      SV_WRID(cn, RR_WR_WRITE, WS_REPLY));
		if (posted < 0)
			{ fl = __LINE__; goto fail_held; }
		wrs += posted;
		sv->info.reply_chunk_octets += s.pos;
		h.proc = RPCRDMA_NOMSG;
		h.has_reply = 1;
		h.reply = rret;
		if (cn->inl.remote_inv && rc->nsegs)
			inv = rc->segs[0].handle;
	} else if (cn->inl.remote_inv && r->h.nwrite && r->h.write[0].nsegs) {
		inv = r->h.write[0].segs[0].handle;
	}
	hl = rpcrdma_hdr_encode(cn->tx + (size_t)t * cn->txsz, cn->txsz, &h, 0);
	if (hl < 0)
		{ fl = __LINE__; goto fail_held; }
	if (h.proc == RPCRDMA_MSG) {
		if ((size_t)hl + s.pos > cn->txsz)
			{ fl = __LINE__; goto fail_held; }
		memcpy(cn->tx + (size_t)t * cn->txsz + hl, rb->p, s.pos);
		hl += s.pos;
	}
	if (wrs == 1) {
		/* no Writes read it: the reply buffer is free again */
		cn->out_bytes -= rb->cap;
		sv->out_bytes -= rb->cap;
		cn->txs[t].rb = NULL;
		rb_put(sv, rb);
	}
	/* the receive goes back before the reply can release a new call */
	post_rx(cn, r->slot);
	if (post_send(cn, t, (uint32_t)hl, inv, wrs))
		{ fl = __LINE__; goto fail_posted; }
	uiw_progress(sv->ctx, 0); /* polled: the Send leaves now */
	if (sv->o.poll_us)
		sv->spin_until = mono_us() + sv->o.poll_us;
	DBG("reply posted: %zd octets, proc %u, %d WRs, inv %08x\n", hl, h.proc, wrs, inv);
	sv->info.replies++;
	return TRUE;
fail:
	rb_put(sv, rb);
	post_rx(cn, r->slot);
	DBG("reply failed at line %d\n", fl);
	conn_fail(cn);
	return FALSE;
fail_held:
	/* Writes may be posted from the reply buffer: it stays held (the
	 * Send buffer marked busy) until the connection is freed */
	cn->txs[t].busy = 1;
	cn->tx_busy++;
	post_rx(cn, r->slot);
fail_posted:
	DBG("reply failed at line %d\n", fl);
	conn_fail(cn);
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
	while (sv->pool) { /* no connection is left to read them */
		struct rbuf *b = sv->pool;

		sv->pool = b->next;
		rb_free(b);
	}
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
	    (rc = uiw_create_cq(sv->ctx, MAX_CONNS * (int)(sv->o.credits + SV_SQ_CAP(sv->o.credits)), sv, NULL, &sv->cq)) ||
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
