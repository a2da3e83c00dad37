/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_xprt.c - the RPC-over-RDMA version 1 transport (RFC 8166, RFC
 * 8797) on the public uiwarp verbs API: a Requester (rpcrdma_clnt_*) and a
 * Responder (rpcrdma_svc_*).  docs/RPCRDMA-transport.md describes the API;
 * this file says why it does what it does.
 *
 * Memory:
 *  - Requester: per-credit slots allocated at create time, each with a
 *    Send buffer and room for the call's header (kept for
 *    rpcrdma_reply_check()); one ring of Receives.  The caller's buffers
 *    are registered per chunk (one MR each, so that every STag we expose
 *    belongs to one XID and may be invalidated remotely, RFC 8797 §4.1) and
 *    deregistered once the reply is in, before the caller sees it
 *    (RFC 8166 §4.4.1).  We never post a Local Invalidate: deregistration
 *    removes the STag whether or not the Responder invalidated it, so an
 *    STag is never invalidated twice.
 *  - Responder: per connection, one Receive per credit it can grant and
 *    twice as many request objects (a request still waiting for its reply
 *    Send to complete must not hold back a Receive: the Receive goes back
 *    before the reply leaves, RFC 8166 §3.3.1).  Each request has a pull
 *    buffer (Read chunks are RDMA Read straight into place) and a stage
 *    buffer (the reply); both grow on demand up to max_call/max_reply and
 *    are kept.
 *
 * wr_id: an object index shifted left by 3, the kind in the low 3 bits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpcrdma_xprt.h"

#define XP_INLINE_DEFAULT   4096
#define XP_CREDITS_DEFAULT  32
#define XP_QUEUE_DEFAULT    256
#define XP_DDP_THRESHOLD    1024
#define XP_MAX_CALL_DEFAULT ((1u << 20) + 4096)
#define XP_MAX_CONNS	    64
#define XP_CONNECT_TIMEOUT  10000
#define XP_RX_SPARE	    2  /* requester: Receives beyond the slots, for strays */
#define XP_SQ_PER_REQ	    72 /* responder: WRs one request may post at most */

enum { WR_RECV = 1, WR_SEND, WR_READ };
#define WRID(kind, idx) (((uint64_t)(idx) << 3) | (kind))
#define WR_KIND(id)	((unsigned)((id)&7))
#define WR_IDX(id)	((unsigned)((id) >> 3))

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t pad4(uint64_t n)
{
	return (n + 3) & ~(uint64_t)3;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- settings ----------------------------------------------------------- */

struct xp_opts {
	uint32_t inline_send, inline_recv, credits, grant, queue_max, ddp_threshold;
	uint64_t max_call, max_reply;
	uint32_t max_conns;
	int connect_timeout_ms;
	unsigned flags;
};

static int opts_resolve(const struct rpcrdma_xprt_opts *in, struct xp_opts *o)
{
	static const struct rpcrdma_xprt_opts zero;

	if (!in)
		in = &zero;
	if (in->flags &
	    ~(unsigned)(RPCRDMA_XO_NO_CM_PD | RPCRDMA_XO_NO_REMOTE_INV | RPCRDMA_XO_NO_QUEUE))
		return -EINVAL;
	if (in->credits > RPCRDMA_XPRT_CREDITS_MAX || in->grant > RPCRDMA_XPRT_CREDITS_MAX)
		return -EINVAL;
	if ((in->inline_send && in->inline_send < RPCRDMA_INLINE_MIN) ||
	    in->inline_send > RPCRDMA_INLINE_MAX ||
	    (in->inline_recv && in->inline_recv < RPCRDMA_INLINE_MIN) ||
	    in->inline_recv > RPCRDMA_INLINE_MAX)
		return -EINVAL;
	if (in->connect_timeout_ms < 0)
		return -EINVAL;
	/* sizes as the peer will decode them (multiples of 1024) */
	o->inline_send = (in->inline_send ? in->inline_send : XP_INLINE_DEFAULT) & ~1023u;
	o->inline_recv = (in->inline_recv ? in->inline_recv : XP_INLINE_DEFAULT) & ~1023u;
	o->credits = in->credits ? in->credits : XP_CREDITS_DEFAULT;
	o->grant = in->grant ? in->grant : o->credits;
	if (o->grant > o->credits)
		return -EINVAL;
	o->queue_max = in->queue_max ? in->queue_max : XP_QUEUE_DEFAULT;
	o->ddp_threshold = in->ddp_threshold ? in->ddp_threshold : XP_DDP_THRESHOLD;
	o->max_call = in->max_call ? in->max_call : XP_MAX_CALL_DEFAULT;
	o->max_reply = in->max_reply ? in->max_reply : o->max_call;
	if (o->max_call > UINT32_MAX || o->max_reply > UINT32_MAX)
		return -EINVAL;
	o->max_conns = in->max_conns ? in->max_conns : XP_MAX_CONNS;
	o->connect_timeout_ms =
		in->connect_timeout_ms ? in->connect_timeout_ms : XP_CONNECT_TIMEOUT;
	o->flags = in->flags;
	return 0;
}

/*
 * The private data we announce, and what we negotiate with: without RFC
 * 8797 data of ours the peer assumes 1024 both ways and no R (RFC 8797
 * §5.1), so we must assume the same of ourselves.
 */
static void own_pd(const struct xp_opts *o, struct rpcrdma_cm_pd *announce,
		   struct rpcrdma_cm_pd *effective)
{
	rpcrdma_cm_pd_init(announce, o->inline_send, o->inline_recv,
			   !(o->flags & RPCRDMA_XO_NO_REMOTE_INV));
	if (o->flags & RPCRDMA_XO_NO_CM_PD)
		rpcrdma_cm_pd_init(effective, RPCRDMA_INLINE_DEFAULT, RPCRDMA_INLINE_DEFAULT, 0);
	else
		*effective = *announce;
}

/*
 * Validate DDP-eligible items against a reduced message of @msg_len
 * octets: positions multiples of 4, at least 4 (the XID comes first),
 * increasing, each inside the reduced stream once the earlier items are
 * taken out (RFC 8166 §3.4.5: positions are in the unreduced stream).
 */
static int items_check(const struct rpcrdma_item *it, uint32_t n, uint32_t msg_len)
{
	uint64_t removed = 0, prev_r = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t p = it[i].position, r;

		if ((p & 3) || p < 4 || p < removed || (it[i].len && !it[i].buf))
			return -EINVAL;
		r = p - removed;
		if (r < prev_r || r > msg_len)
			return -EINVAL;
		prev_r = r;
		removed += pad4(it[i].len);
	}
	return 0;
}

/*
 * Write the message @msg with the items for which @inl[i] is set inserted
 * at their positions (zero XDR roundup after each) to @dst.  Returns the
 * octets written.
 */
static uint64_t xdr_splice(uint8_t *dst, const uint8_t *msg, uint32_t len,
			   const struct rpcrdma_item *it, uint32_t n, const uint8_t *inl)
{
	uint64_t removed = 0, off = 0, d = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = it[i].position - removed;

		removed += pad4(it[i].len);
		if (!inl[i])
			continue;
		memcpy(dst + d, msg + off, r - off);
		d += r - off;
		off = r;
		if (it[i].len)
			memcpy(dst + d, it[i].buf, it[i].len);
		d += it[i].len;
		while (d & 3)
			dst[d++] = 0;
	}
	memcpy(dst + d, msg + off, len - off);
	return d + len - off;
}

/* ---- waiting: polled contexts turn the engine; progress-thread ones sleep
 * in poll(2) on the completion channel and the CM event fd ---- */

/*
 * A completion channel always exists (cheap, and never armed on a polled
 * context): the mode is found out by the thread that polls, so that
 * creating the transport does not make the creating thread the owner of
 * a polled context's engine.
 */
static int open_channel(struct uiw_context *ctx, struct uiw_comp_channel **ch)
{
	int ret, fl;

	ret = uiw_create_comp_channel(ctx, ch);
	if (ret)
		return ret;
	fl = fcntl((*ch)->fd, F_GETFL);
	if (fl < 0 || fcntl((*ch)->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		uiw_destroy_comp_channel(*ch);
		*ch = NULL;
		return -EIO;
	}
	return 0;
}

static void channel_sleep(struct uiw_context *ctx, struct uiw_comp_channel *ch, int timeout_ms)
{
	struct pollfd p[2] = {{ch->fd, POLLIN, 0}, {uiw_cm_event_fd(ctx), POLLIN, 0}};
	struct uiw_cq *cq;
	void *cqc;

	if (poll(p, 2, timeout_ms) < 0)
		return;
	while (uiw_get_cq_event(ch, &cq, &cqc) == 0)
		uiw_ack_cq_events(cq, 1);
}

/* ---- Requester ---------------------------------------------------------- */

#define CL_MAX_MR (RPCRDMA_XPRT_MAX_ARGS + RPCRDMA_XPRT_MAX_RESULTS + 2)

struct clnt_slot {
	struct rpcrdma_call *call; /* outstanding (waiting for its reply) */
	int sending;		   /* its Send is not completed yet */
	uint8_t *tx;
	uint32_t nmr;
	struct uiw_mr *mr[CL_MAX_MR];
	/* the header as sent, for rpcrdma_reply_check() */
	struct rpcrdma_hdr h;
	struct rpcrdma_read_seg rd[RPCRDMA_XPRT_MAX_ARGS + 1];
	struct rpcrdma_chunk wc[RPCRDMA_XPRT_MAX_RESULTS];
	struct rpcrdma_seg ws[RPCRDMA_XPRT_MAX_RESULTS];
	struct rpcrdma_seg rs;
};

struct rpcrdma_clnt {
	struct uiw_context *ctx;
	struct uiw_comp_channel *ch;
	char *host;
	uint16_t port;
	struct xp_opts o;
	struct rpcrdma_cm_pd mine, mine_eff;

	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_cm_id *id;
	enum rpcrdma_clnt_state state;
	int err;
	int64_t deadline;
	struct rpcrdma_inline inl;
	struct rpcrdma_cm_pd peer;

	uint8_t *rx;
	struct uiw_mr *rx_mr;
	uint32_t rx_size;
	unsigned nrx;
	uint8_t *tx;
	struct uiw_mr *tx_mr;
	uint32_t tx_size;

	struct clnt_slot *slots;
	unsigned nslots;
	unsigned outstanding;
	uint32_t granted;

	struct rpcrdma_call *q_head, *q_tail; /* waiting for a credit */
	unsigned nq;
	struct rpcrdma_call *d_head, *d_tail; /* done, callback pending */

	/* decode scratch for replies */
	struct rpcrdma_chunk d_wc[RPCRDMA_XPRT_MAX_RESULTS];
	struct rpcrdma_seg d_segs[RPCRDMA_XPRT_MAX_RESULTS + 1];

	struct rpcrdma_xprt_info st;
};

static void q_push(struct rpcrdma_call **head, struct rpcrdma_call **tail, struct rpcrdma_call *c)
{
	c->q_next = NULL;
	if (*tail)
		(*tail)->q_next = c;
	else
		*head = c;
	*tail = c;
}

static struct rpcrdma_call *q_pop(struct rpcrdma_call **head, struct rpcrdma_call **tail)
{
	struct rpcrdma_call *c = *head;

	if (c) {
		*head = c->q_next;
		if (!*head)
			*tail = NULL;
		c->q_next = NULL;
	}
	return c;
}

static void cl_finish(struct rpcrdma_clnt *c, struct rpcrdma_call *call, int status)
{
	call->status = status;
	call->q_slot = -1;
	q_push(&c->d_head, &c->d_tail, call);
}

static void slot_release_mrs(struct clnt_slot *s)
{
	for (uint32_t i = 0; i < s->nmr; i++)
		uiw_dereg_mr(s->mr[i]);
	s->nmr = 0;
}

static int cl_post_rx(struct rpcrdma_clnt *c, unsigned i)
{
	struct uiw_sge sge = {(uintptr_t)(c->rx + (size_t)i * c->rx_size), c->rx_size,
			      c->rx_mr->lkey};
	struct uiw_recv_wr wr = {WRID(WR_RECV, i), NULL, &sge, 1};

	return uiw_post_recv(c->qp, &wr, NULL);
}

/* close the connection; calls outstanding complete with @status */
static void cl_conn_down(struct rpcrdma_clnt *c, int status)
{
	if (c->id) {
		uiw_destroy_id(c->id);
		c->id = NULL;
	}
	if (c->qp) {
		uiw_destroy_qp(c->qp);
		c->qp = NULL;
	}
	if (c->cq) {
		uiw_destroy_cq(c->cq);
		c->cq = NULL;
	}
	for (unsigned i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		slot_release_mrs(s);
		if (s->call)
			cl_finish(c, s->call, status);
		s->call = NULL;
		s->sending = 0;
	}
	c->outstanding = 0;
	c->st.outstanding = 0;
	c->st.connected = 0;
	if (c->state != RPCRDMA_CLNT_DOWN && status)
		c->err = status;
	c->state = RPCRDMA_CLNT_DOWN;
}

static int cl_connect(struct rpcrdma_clnt *c)
{
	struct uiw_qp_init_attr qa;
	struct uiw_conn_param cp;
	uint8_t pd[RPCRDMA_CM_LEN];
	int ret;

	ret = uiw_create_cq(c->ctx, (int)(c->nrx + c->nslots + 16), c, c->ch, &c->cq);
	if (ret)
		goto fail;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.cap.max_send_wr = c->nslots + 4;
	qa.cap.max_recv_wr = c->nrx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = uiw_create_qp(c->pd, &qa, &c->qp);
	if (ret)
		goto fail;
	for (unsigned i = 0; i < c->nrx; i++) {
		ret = cl_post_rx(c, i);
		if (ret)
			goto fail;
	}
	ret = uiw_create_id(c->ctx, c, &c->id);
	if (ret)
		goto fail;
	memset(&cp, 0, sizeof(cp));
	if (!(c->o.flags & RPCRDMA_XO_NO_CM_PD)) {
		cp.private_data = pd;
		cp.private_data_len = (uint16_t)rpcrdma_cm_encode(pd, sizeof(pd), &c->mine);
	}
	ret = uiw_connect(c->id, c->host, c->port, c->qp, &cp);
	if (ret)
		goto fail;
	c->state = RPCRDMA_CLNT_CONNECTING;
	c->err = 0;
	c->deadline = now_ms() + c->o.connect_timeout_ms;
	return 0;
fail:
	c->state = RPCRDMA_CLNT_CONNECTING; /* so that cl_conn_down records the error */
	cl_conn_down(c, ret);
	return ret;
}

static void cl_free(struct rpcrdma_clnt *c)
{
	if (c->rx_mr)
		uiw_dereg_mr(c->rx_mr);
	if (c->tx_mr)
		uiw_dereg_mr(c->tx_mr);
	if (c->pd)
		uiw_dealloc_pd(c->pd);
	if (c->ch)
		uiw_destroy_comp_channel(c->ch);
	free(c->rx);
	free(c->tx);
	free(c->slots);
	free(c->host);
	free(c);
}

int rpcrdma_clnt_create(struct uiw_context *ctx, const char *host, uint16_t port,
			const struct rpcrdma_xprt_opts *opts, struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt *c;
	int ret;

	*out = NULL;
	if (!ctx || !host)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = opts_resolve(opts, &c->o);
	if (ret) {
		free(c);
		return ret;
	}
	c->ctx = ctx;
	c->port = port ? port : RPCRDMA_XPRT_PORT;
	c->host = strdup(host);
	own_pd(&c->o, &c->mine, &c->mine_eff);
	c->nslots = c->o.credits;
	c->nrx = c->nslots + XP_RX_SPARE;
	c->rx_size = c->mine.recv_size;
	c->tx_size = c->mine.send_size;
	c->rx = aligned_alloc(64, (size_t)c->nrx * c->rx_size);
	c->tx = aligned_alloc(64, (size_t)c->nslots * c->tx_size);
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	ret = -ENOMEM;
	if (!c->host || !c->rx || !c->tx || !c->slots)
		goto fail;
	for (unsigned i = 0; i < c->nslots; i++)
		c->slots[i].tx = c->tx + (size_t)i * c->tx_size;
	ret = open_channel(ctx, &c->ch);
	if (ret)
		goto fail;
	ret = uiw_alloc_pd(ctx, &c->pd);
	if (ret)
		goto fail;
	ret = uiw_reg_mr(c->pd, c->rx, (size_t)c->nrx * c->rx_size, UIW_ACCESS_LOCAL_WRITE,
			 &c->rx_mr);
	if (ret)
		goto fail;
	ret = uiw_reg_mr(c->pd, c->tx, (size_t)c->nslots * c->tx_size, 0, &c->tx_mr);
	if (ret)
		goto fail;
	ret = cl_connect(c);
	if (ret)
		goto fail;
	*out = c;
	return 0;
fail:
	cl_free(c);
	return ret;
}

static int reg(struct rpcrdma_clnt *c, struct clnt_slot *s, const void *buf, uint32_t len,
	       int access, struct rpcrdma_seg *seg)
{
	struct uiw_mr *mr;
	int ret = uiw_reg_mr(c->pd, (void *)(uintptr_t)buf, len, access, &mr);

	if (ret)
		return ret;
	s->mr[s->nmr++] = mr;
	c->st.mr_regs++;
	seg->handle = mr->rkey;
	seg->length = len;
	seg->offset = (uintptr_t)buf;
	return 0;
}

/* octets of the header of a reply to @call that returns its Write list */
static uint32_t reply_hdr_len(const struct rpcrdma_call *call)
{
	uint32_t n = RPCRDMA_HDR_MIN;

	for (uint32_t i = 0; i < call->nresults; i++)
		n += 8 + (call->results[i].len ? RPCRDMA_SEG_LEN : 0);
	return n;
}

/* Build and post @call in slot @si.  On failure nothing stays registered. */
static int cl_send(struct rpcrdma_clnt *c, unsigned si, struct rpcrdma_call *call)
{
	struct clnt_slot *s = &c->slots[si];
	struct rpcrdma_hdr *h = &s->h;
	uint8_t inl[RPCRDMA_XPRT_MAX_ARGS];
	uint32_t send_max = c->inl.send_max, nchunk = 0, nz = 0;
	uint64_t extra = 0, hl, total;
	int offer_reply, lng = 0, ret;
	struct uiw_sge sge;
	struct uiw_send_wr wr;
	ssize_t n;

	if (send_max > c->tx_size)
		send_max = c->tx_size;
	for (uint32_t i = 0; i < call->nargs; i++) {
		uint32_t len = call->args[i].len;

		inl[i] = len < c->o.ddp_threshold;
		if (inl[i])
			extra += pad4(len);
		else
			nchunk++;
		if (len)
			nz++;
	}
	offer_reply = call->reply_cap &&
		      (uint64_t)call->reply_cap + reply_hdr_len(call) > c->inl.recv_max;
	/* header: fixed 16, Read list, Write list, Reply chunk */
	hl = 16 + 4 + 4 + 4;
	for (uint32_t i = 0; i < call->nresults; i++)
		hl += 8 + (call->results[i].len ? RPCRDMA_SEG_LEN : 0);
	if (offer_reply)
		hl += 4 + RPCRDMA_SEG_LEN;
	total = hl + (uint64_t)nchunk * (4 + RPCRDMA_READ_SEG_LEN) + call->msg_len + extra;
	if (total > send_max) {
		/* RFC 8166 §3.5.3 Long Call: the caller's message is the
		 * Position Zero Read chunk; every non-empty item a Read chunk */
		lng = 1;
		memset(inl, 1, sizeof(inl));
		for (uint32_t i = 0; i < call->nargs; i++)
			if (call->args[i].len)
				inl[i] = 0;
		total = hl + (uint64_t)(nz + 1) * (4 + RPCRDMA_READ_SEG_LEN);
		if (total > send_max)
			return -EMSGSIZE;
	}

	memset(h, 0, sizeof(*h));
	h->xid = call->xid;
	h->vers = RPCRDMA_VERSION;
	h->credits = c->nslots;
	h->proc = lng ? RPCRDMA_NOMSG : RPCRDMA_MSG;
	h->read = s->rd;
	h->write = s->wc;
	s->nmr = 0;
	call->form = 0;
	if (lng) {
		s->rd[0].position = 0;
		ret = reg(c, s, call->msg, call->msg_len, UIW_ACCESS_REMOTE_READ, &s->rd[0].seg);
		if (ret)
			goto fail;
		h->nread = 1;
		c->st.read_bytes += call->msg_len;
	}
	for (uint32_t i = 0; i < call->nargs; i++) {
		struct rpcrdma_read_seg *rs = &s->rd[h->nread];

		if (inl[i])
			continue;
		rs->position = call->args[i].position;
		ret = reg(c, s, call->args[i].buf, call->args[i].len, UIW_ACCESS_REMOTE_READ,
			  &rs->seg);
		if (ret)
			goto fail;
		h->nread++;
		c->st.read_bytes += call->args[i].len;
	}
	for (uint32_t i = 0; i < call->nresults; i++) {
		const struct rpcrdma_rbuf *rb = &call->results[i];

		s->wc[i].segs = &s->ws[i];
		s->wc[i].nsegs = 0;
		if (rb->len) {
			ret = reg(c, s, rb->buf, rb->len,
				  UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE, &s->ws[i]);
			if (ret)
				goto fail;
			s->wc[i].nsegs = 1;
		}
	}
	h->nwrite = call->nresults;
	if (offer_reply) {
		ret = reg(c, s, call->reply, call->reply_cap,
			  UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE, &s->rs);
		if (ret)
			goto fail;
		h->has_reply = 1;
		h->reply.nsegs = 1;
		h->reply.segs = &s->rs;
		call->form |= RPCRDMA_FORM_REPLY_OFFER;
	}
	n = rpcrdma_hdr_encode(s->tx, send_max, h, 0);
	if (n < 0) {
		ret = (int)n;
		goto fail;
	}
	total = (uint64_t)n;
	if (!lng)
		total += xdr_splice(s->tx + n, call->msg, call->msg_len, call->args, call->nargs,
				    inl);
	if (total > send_max) { /* cannot happen: sizes computed above */
		ret = -EMSGSIZE;
		goto fail;
	}
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)s->tx;
	sge.length = (uint32_t)total;
	sge.lkey = c->tx_mr->lkey;
	wr.wr_id = WRID(WR_SEND, si);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UIW_WR_SEND;
	wr.send_flags = UIW_SEND_SIGNALED;
	ret = uiw_post_send(c->qp, &wr, NULL);
	if (ret)
		goto fail;
	s->call = call;
	s->sending = 1;
	call->q_slot = (int)si;
	call->form |= lng	 ? RPCRDMA_FORM_LONG
		      : h->nread ? RPCRDMA_FORM_CHUNKED
				 : RPCRDMA_FORM_SHORT;
	if (lng)
		c->st.long_msgs++;
	else if (h->nread)
		c->st.chunked_msgs++;
	else
		c->st.short_msgs++;
	c->st.calls++;
	c->outstanding++;
	c->st.outstanding = c->outstanding;
	if (c->outstanding > c->st.max_outstanding)
		c->st.max_outstanding = c->outstanding;
	return 0;
fail:
	slot_release_mrs(s);
	return ret;
}

static int cl_free_slot(struct rpcrdma_clnt *c)
{
	for (unsigned i = 0; i < c->nslots; i++)
		if (!c->slots[i].call && !c->slots[i].sending)
			return (int)i;
	return -1;
}

static int cl_can_send(struct rpcrdma_clnt *c)
{
	uint32_t limit = c->granted < c->nslots ? c->granted : c->nslots;

	return c->state == RPCRDMA_CLNT_UP && c->outstanding < limit;
}

/* send queued calls while credits and slots allow */
static int cl_dispatch(struct rpcrdma_clnt *c)
{
	int n = 0;

	while (c->q_head && cl_can_send(c)) {
		int si = cl_free_slot(c);
		struct rpcrdma_call *call;
		int ret;

		if (si < 0)
			break;
		call = q_pop(&c->q_head, &c->q_tail);
		c->nq--;
		ret = cl_send(c, (unsigned)si, call);
		if (ret)
			cl_finish(c, call, ret);
		n++;
	}
	c->st.queued = c->nq;
	return n;
}

int rpcrdma_clnt_call(struct rpcrdma_clnt *c, struct rpcrdma_call *call)
{
	int ret, si;

	if (!call || !call->done || !call->msg || call->msg_len < 4 ||
	    call->nargs > RPCRDMA_XPRT_MAX_ARGS || call->nresults > RPCRDMA_XPRT_MAX_RESULTS ||
	    (call->nargs && !call->args) || (call->nresults && !call->results) ||
	    (call->reply_cap && !call->reply))
		return -EINVAL;
	for (uint32_t i = 0; i < call->nresults; i++)
		if (call->results[i].len && !call->results[i].buf)
			return -EINVAL;
	ret = items_check(call->args, call->nargs, call->msg_len);
	if (ret)
		return ret;
	call->xid = get_be32(call->msg);
	call->status = 0;
	call->reply_len = 0;
	memset(call->result_len, 0, sizeof(call->result_len));
	call->rdma_err = call->vers_low = call->vers_high = 0;
	call->form = 0;
	call->q_next = NULL;
	call->q_slot = -1;
	if (c->state == RPCRDMA_CLNT_DOWN)
		return -ENOTCONN;
	/* FIFO: nothing overtakes a queued call */
	if (!c->q_head && cl_can_send(c) && (si = cl_free_slot(c)) >= 0)
		return cl_send(c, (unsigned)si, call);
	if ((c->o.flags & RPCRDMA_XO_NO_QUEUE) || c->nq >= c->o.queue_max)
		return -EAGAIN;
	q_push(&c->q_head, &c->q_tail, call);
	c->nq++;
	c->st.queued = c->nq;
	return 0;
}

static struct clnt_slot *cl_find_xid(struct rpcrdma_clnt *c, uint32_t xid)
{
	for (unsigned i = 0; i < c->nslots; i++)
		if (c->slots[i].call && c->slots[i].call->xid == xid)
			return &c->slots[i];
	return NULL;
}

static void cl_recv(struct rpcrdma_clnt *c, const struct uiw_wc *wc)
{
	unsigned ri = WR_IDX(wc->wr_id);
	const uint8_t *buf;
	struct rpcrdma_dec_cfg cfg;
	struct rpcrdma_hdr h;
	struct rpcrdma_dec_err e;
	struct clnt_slot *s;
	struct rpcrdma_call *call;
	ssize_t ret;
	uint32_t len;

	if (wc->status != UIW_WC_SUCCESS || ri >= c->nrx)
		return; /* flushed: the connection is going down */
	buf = c->rx + (size_t)ri * c->rx_size;
	len = wc->byte_len <= c->rx_size ? wc->byte_len : c->rx_size;
	memset(&cfg, 0, sizeof(cfg));
	cfg.write = c->d_wc;
	cfg.max_write = RPCRDMA_XPRT_MAX_RESULTS;
	cfg.segs = c->d_segs;
	cfg.max_segs = RPCRDMA_XPRT_MAX_RESULTS + 1;
	cfg.max_chunk_segs = 1;
	/* Linux svcrdma sends 20-octet ERR_CHUNK messages (docs/RPCRDMA.md 1.7) */
	cfg.flags = RPCRDMA_DF_SHORT_ERROR;
	ret = rpcrdma_hdr_decode(buf, len, &cfg, &h, &e);
	if (rpcrdma_rx_verdict(ret, &h, 0) != RPCRDMA_V_ACCEPT) {
		c->st.discards++; /* RFC 8166 §4.5: a Requester discards silently */
		goto repost;
	}
	s = cl_find_xid(c, h.xid);
	if (!s) {
		c->st.unknown_xid++;
		c->st.discards++;
		goto repost;
	}
	call = s->call;
	if (h.proc != RPCRDMA_ERROR &&
	    (rpcrdma_reply_check(&s->h, &h, &e) ||
	     (h.proc == RPCRDMA_NOMSG && (!h.has_reply || !s->h.has_reply)))) {
		c->st.discards++;
		goto repost;
	}
	/* RFC 8166 §3.3.1: "The granted value MUST NOT be zero": treat it as 1 */
	c->granted = h.credits ? h.credits : 1;
	c->st.credits = c->granted;
	if (wc->wc_flags & UIW_WC_WITH_INV) {
		for (uint32_t i = 0; i < s->nmr; i++)
			if (s->mr[i]->rkey == wc->invalidated_rkey) {
				call->form |= RPCRDMA_FORM_INVALIDATED;
				c->st.inv_recv++;
				break;
			}
	}
	if (h.proc == RPCRDMA_ERROR) {
		call->rdma_err = h.err;
		call->vers_low = h.vers_low;
		call->vers_high = h.vers_high;
		c->st.errors_recv++;
		ret = h.err == RPCRDMA_ERR_VERS ? -EPROTONOSUPPORT : -EREMOTEIO;
	} else {
		for (uint32_t i = 0; i < h.nwrite && i < RPCRDMA_XPRT_MAX_RESULTS; i++) {
			uint64_t w = rpcrdma_chunk_len(&h.write[i]);

			call->result_len[i] = (uint32_t)w;
			c->st.write_bytes += w;
		}
		if (h.proc == RPCRDMA_NOMSG) {
			uint64_t r = rpcrdma_chunk_len(&h.reply);

			call->reply_len = (uint32_t)r;
			call->form |= RPCRDMA_FORM_LONG_REPLY;
			c->st.reply_chunk_bytes += r;
			ret = 0;
		} else {
			uint32_t plen = len - (uint32_t)ret;

			call->reply_len = plen;
			if (plen > call->reply_cap) {
				plen = call->reply_cap;
				ret = -EMSGSIZE;
			} else {
				ret = 0;
			}
			if (plen)
				memcpy(call->reply, buf + (len - call->reply_len), plen);
		}
		c->st.replies++;
	}
	/* RFC 8166 §4.4.1: the Responder loses access before the caller sees it */
	slot_release_mrs(s);
	s->call = NULL;
	c->outstanding--;
	c->st.outstanding = c->outstanding;
	cl_finish(c, call, (int)ret);
repost:
	if (cl_post_rx(c, ri)) {
		/* the QP is closing; DISCONNECTED will follow */
	}
}

static int cl_poll_cq(struct rpcrdma_clnt *c)
{
	struct uiw_wc wc[16];
	int n = 0, k;

	while (c->cq && (k = uiw_poll_cq(c->cq, 16, wc)) != 0) {
		if (k < 0) {
			/* completions lost: we cannot know which calls finished */
			if (c->id)
				uiw_disconnect(c->id);
			break;
		}
		for (int i = 0; i < k; i++) {
			if (WR_KIND(wc[i].wr_id) == WR_RECV)
				cl_recv(c, &wc[i]);
			else if (WR_IDX(wc[i].wr_id) < c->nslots)
				c->slots[WR_IDX(wc[i].wr_id)].sending = 0;
		}
		n += k;
	}
	return n;
}

static int cl_cm_event(struct rpcrdma_clnt *c, const struct uiw_cm_event *ev)
{
	if (ev->id != c->id)
		return 0;
	switch (ev->event) {
	case UIW_CM_EVENT_ESTABLISHED: {
		ssize_t pret = rpcrdma_cm_decode(ev->private_data, ev->private_data_len, &c->peer);

		rpcrdma_cm_negotiate(&c->mine_eff, &c->peer, pret, &c->inl);
		c->state = RPCRDMA_CLNT_UP;
		c->granted = 1; /* RFC 8166 §3.3.3: one credit until the first reply */
		c->st.connected = 1;
		c->st.connects++;
		c->st.credits = 1;
		c->st.inline_send = c->inl.send_max < c->tx_size ? c->inl.send_max : c->tx_size;
		c->st.inline_recv = c->inl.recv_max;
		c->st.remote_inv = c->inl.remote_inv;
		c->st.peer_pd = c->inl.peer_pd;
		c->st.peer = c->peer;
		break;
	}
	case UIW_CM_EVENT_DISCONNECTED:
		/* replies that arrived before the close still count */
		cl_poll_cq(c);
		cl_conn_down(c, -ECONNRESET);
		c->err = ev->status ? ev->status : -ECONNRESET;
		break;
	default: /* REJECTED, UNREACHABLE, CONNECT_ERROR */
		cl_conn_down(c, ev->status ? ev->status : -ECONNREFUSED);
		break;
	}
	return 1;
}

static int cl_deliver(struct rpcrdma_clnt *c)
{
	struct rpcrdma_call *call;
	int n = 0;

	while ((call = q_pop(&c->d_head, &c->d_tail))) {
		call->done(call);
		n++;
	}
	return n;
}

static int cl_work(struct rpcrdma_clnt *c)
{
	struct uiw_cm_event ev;
	int n = 0;

	while (uiw_get_cm_event(c->ctx, &ev, 0) == 0)
		n += cl_cm_event(c, &ev) + 1;
	n += cl_poll_cq(c);
	if (c->state == RPCRDMA_CLNT_CONNECTING && now_ms() > c->deadline) {
		cl_conn_down(c, -ETIMEDOUT);
		n++;
	}
	n += cl_dispatch(c);
	n += cl_deliver(c);
	return n;
}

int rpcrdma_clnt_poll(struct rpcrdma_clnt *c, int timeout_ms)
{
	int n = cl_work(c), ret;

	if (n || !timeout_ms)
		return n;
	ret = uiw_progress(c->ctx, timeout_ms);
	if (ret == -EBUSY)
		return ret;
	if (ret == -EINVAL) { /* progress-thread context */
		if (c->cq)
			uiw_req_notify_cq(c->cq, 0);
		n = cl_work(c);
		if (n)
			return n;
		channel_sleep(c->ctx, c->ch, timeout_ms);
	}
	return cl_work(c);
}

static void sync_done(struct rpcrdma_call *call)
{
	*(int *)call->arg = 1;
}

int rpcrdma_clnt_call_sync(struct rpcrdma_clnt *c, struct rpcrdma_call *call, int timeout_ms)
{
	int64_t end = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
	int done = 0, ret;

	call->done = sync_done;
	call->arg = &done;
	ret = rpcrdma_clnt_call(c, call);
	if (ret)
		return ret;
	while (!done) {
		int64_t left = end - now_ms();

		if (left <= 0) {
			rpcrdma_clnt_reconnect(c);
			rpcrdma_clnt_poll(c, 0);
			if (!done) { /* still queued: take it out */
				struct rpcrdma_call **pp = &c->q_head;

				c->q_tail = NULL;
				while (*pp) {
					if (*pp == call) {
						*pp = call->q_next;
						c->nq--;
						continue;
					}
					c->q_tail = *pp;
					pp = &(*pp)->q_next;
				}
				c->st.queued = c->nq;
			}
			return -ETIMEDOUT;
		}
		ret = rpcrdma_clnt_poll(c, left > 100 ? 100 : (int)left);
		if (ret < 0)
			return ret;
	}
	return call->status;
}

enum rpcrdma_clnt_state rpcrdma_clnt_state(const struct rpcrdma_clnt *c)
{
	return c->state;
}

int rpcrdma_clnt_error(const struct rpcrdma_clnt *c)
{
	return c->err;
}

int rpcrdma_clnt_reconnect(struct rpcrdma_clnt *c)
{
	int ret;

	cl_conn_down(c, -ECONNRESET);
	ret = cl_connect(c);
	cl_deliver(c);
	return ret;
}

void rpcrdma_clnt_info(const struct rpcrdma_clnt *c, struct rpcrdma_xprt_info *info)
{
	*info = c->st;
	info->connected = c->state == RPCRDMA_CLNT_UP;
}

void rpcrdma_clnt_destroy(struct rpcrdma_clnt *c)
{
	struct rpcrdma_call *call;

	if (!c)
		return;
	cl_conn_down(c, -ECANCELED);
	while ((call = q_pop(&c->q_head, &c->q_tail)))
		cl_finish(c, call, -ECANCELED);
	c->nq = 0;
	cl_deliver(c);
	cl_free(c);
}

/* ---- Responder ---------------------------------------------------------- */

enum { RQ_FREE = 0, RQ_READING, RQ_DELIVERED, RQ_SENDING };

struct svc_req {
	struct rpcrdma_svc_req pub; /* first: the upper layer's view */
	unsigned idx;
	int state;
	int rx; /* Receive buffer held (the call may point into it), or -1 */
	struct svc_req *next_free;
	/* the call's header */
	struct rpcrdma_hdr h;
	struct rpcrdma_read_seg rd[RPCRDMA_XPRT_MAX_READ_SEGS];
	struct rpcrdma_chunk wc[RPCRDMA_XPRT_MAX_WRITE];
	struct rpcrdma_seg segs[RPCRDMA_XPRT_MAX_SEGS];
	/* the reply's copy of the Write list and Reply chunk (§3.4.6) */
	struct rpcrdma_chunk rwc[RPCRDMA_XPRT_MAX_WRITE];
	struct rpcrdma_seg rsegs[RPCRDMA_XPRT_MAX_SEGS];
	uint8_t *pull;
	uint64_t pull_cap;
	struct uiw_mr *pull_mr;
	uint8_t *stage;
	uint64_t stage_cap;
	struct uiw_mr *stage_mr;
};

struct rpcrdma_svc_conn {
	struct rpcrdma_svc *svc;
	struct rpcrdma_svc_conn *next;
	struct uiw_cm_id *id;
	struct uiw_qp *qp;
	struct uiw_cq *cq;
	int up, dead, reported;
	struct rpcrdma_inline inl;
	struct rpcrdma_cm_pd peer;
	uint8_t *rx;
	struct uiw_mr *rx_mr;
	uint32_t rx_size;
	unsigned nrx;
	struct svc_req *reqs;
	unsigned nreq;
	struct svc_req *free;
	unsigned ndeliv; /* requests held by the upper layer */
	unsigned nserve; /* calls received, not yet answered */
	/* Receives whose message waits for a free request */
	unsigned *dq_rx;
	uint32_t *dq_len;
	unsigned dq_head, dq_n;
	struct rpcrdma_xprt_info st;
};

struct rpcrdma_svc {
	struct uiw_context *ctx;
	struct uiw_comp_channel *ch;
	struct xp_opts o;
	struct rpcrdma_cm_pd mine, mine_eff;
	struct rpcrdma_svc_ops ops;
	void *arg;
	struct uiw_pd *pd;
	struct uiw_cm_id *lid;
	uint16_t port;
	uint32_t grant;
	struct rpcrdma_svc_conn *conns;
	unsigned nconns;
	struct rpcrdma_xprt_info tot; /* of connections already freed */
	struct rpcrdma_xprt_info last;
};

static int buf_grow(struct uiw_pd *pd, uint8_t **buf, uint64_t *cap, struct uiw_mr **mr,
		    uint64_t need, uint64_t max, int access)
{
	uint64_t n = *cap ? *cap : 4096;
	uint8_t *p;
	int ret;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -EMSGSIZE;
	while (n < need)
		n *= 2;
	if (n > max)
		n = max;
	if (*mr) {
		uiw_dereg_mr(*mr);
		*mr = NULL;
	}
	free(*buf);
	*cap = 0;
	p = aligned_alloc(64, (size_t)((n + 63) & ~(uint64_t)63));
	*buf = p;
	if (!p)
		return -ENOMEM;
	ret = uiw_reg_mr(pd, p, (size_t)n, access, mr);
	if (ret) {
		free(p);
		*buf = NULL;
		return ret;
	}
	*cap = n;
	return 0;
}

static int sv_post_rx(struct rpcrdma_svc_conn *k, unsigned i)
{
	struct uiw_sge sge = {(uintptr_t)(k->rx + (size_t)i * k->rx_size), k->rx_size,
			      k->rx_mr->lkey};
	struct uiw_recv_wr wr = {WRID(WR_RECV, i), NULL, &sge, 1};

	return uiw_post_recv(k->qp, &wr, NULL);
}

static void req_free(struct rpcrdma_svc_conn *k, struct svc_req *r)
{
	r->state = RQ_FREE;
	r->rx = -1;
	r->next_free = k->free;
	k->free = r;
}

/* give the Receive back before anything answers the call (RFC 8166 §3.3.1) */
static void req_repost(struct rpcrdma_svc_conn *k, struct svc_req *r)
{
	if (r->rx >= 0 && !k->dead)
		sv_post_rx(k, (unsigned)r->rx);
	r->rx = -1;
}

static void sv_update_max(struct rpcrdma_svc_conn *k)
{
	k->st.outstanding = k->nserve;
	if (k->nserve > k->st.max_outstanding)
		k->st.max_outstanding = k->nserve;
}

static int post_send(struct rpcrdma_svc_conn *k, struct svc_req *r, uint32_t len, uint32_t inv)
{
	struct uiw_sge sge = {(uintptr_t)r->stage, len, r->stage_mr->lkey};
	struct uiw_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WRID(WR_SEND, r->idx);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = inv ? UIW_WR_SEND_WITH_INV : UIW_WR_SEND;
	wr.invalidate_rkey = inv;
	wr.send_flags = UIW_SEND_SIGNALED;
	return uiw_post_send(k->qp, &wr, NULL);
}

/* the connection cannot go on (RFC 8166 §4.5.4: a lost reply closes it) */
static void sv_fail(struct rpcrdma_svc_conn *k)
{
	if (k->id && !k->dead)
		uiw_disconnect(k->id);
}

/* answer the call in @r with RDMA_ERROR @err; @r must hold its header's fixed fields */
static void sv_send_error(struct rpcrdma_svc_conn *k, struct svc_req *r, uint32_t err)
{
	ssize_t n = rpcrdma_error_encode(r->stage, r->stage_cap, &r->h, k->svc->grant, err,
					 RPCRDMA_EF_PAD_MIN);

	req_repost(k, r);
	if (n < 0 || post_send(k, r, (uint32_t)n, 0)) {
		sv_fail(k);
		req_free(k, r);
		return;
	}
	r->state = RQ_SENDING;
	k->st.errors_sent++;
	if (err == RPCRDMA_ERR_VERS)
		k->st.err_vers_sent++;
	else
		k->st.err_chunk_sent++;
}

static uint32_t reply_inline_max(const struct rpcrdma_svc_conn *k, const struct rpcrdma_hdr *h)
{
	struct rpcrdma_hdr rh = *h;
	ssize_t hl;

	rh.nread = 0;
	rh.proc = RPCRDMA_MSG;
	hl = rpcrdma_hdr_len(&rh);
	if (hl < 0 || (uint64_t)hl >= k->inl.send_max)
		return 0;
	return k->inl.send_max - (uint32_t)hl;
}

static void sv_deliver(struct rpcrdma_svc_conn *k, struct svc_req *r)
{
	struct rpcrdma_svc *s = k->svc;

	r->pub.conn = k;
	r->pub.xid = r->h.xid;
	r->pub.nwrite = r->h.nwrite;
	for (uint32_t i = 0; i < RPCRDMA_XPRT_MAX_WRITE; i++)
		r->pub.write_cap[i] = i < r->h.nwrite ? rpcrdma_chunk_len(&r->h.write[i]) : 0;
	r->pub.reply_chunk = r->h.has_reply;
	r->pub.reply_cap = r->h.has_reply ? rpcrdma_chunk_len(&r->h.reply) : 0;
	r->pub.reply_inline_max = reply_inline_max(k, &r->h);
	r->pub.user = NULL;
	r->state = RQ_DELIVERED;
	k->ndeliv++;
	k->st.calls++;
	s->ops.call(&r->pub, s->arg);
}

/* a Read WR held back so that only the last one of a call is signalled */
struct pend_read {
	int have;
	struct uiw_send_wr wr;
	struct uiw_sge sge;
};

static int pend_flush(struct rpcrdma_svc_conn *k, struct pend_read *p)
{
	if (!p->have)
		return 0;
	p->have = 0;
	p->wr.sg_list = &p->sge;
	return uiw_post_send(k->qp, &p->wr, NULL);
}

/* post RDMA Reads of [@a, @a + @n) of the chunk made of @segs into @dst */
static int read_range(struct rpcrdma_svc_conn *k, struct svc_req *r,
		      const struct rpcrdma_read_seg *segs, uint32_t nsegs, uint64_t a, uint64_t n,
		      uint8_t *dst, struct pend_read *p)
{
	uint64_t base = 0;

	for (uint32_t i = 0; i < nsegs && n; i++) {
		uint64_t sl = segs[i].seg.length, from, m;
		int ret;

		if (a >= base + sl) {
			base += sl;
			continue;
		}
		from = a - base;
		m = sl - from < n ? sl - from : n;
		ret = pend_flush(k, p);
		if (ret)
			return ret;
		memset(&p->wr, 0, sizeof(p->wr));
		p->sge.addr = (uintptr_t)dst;
		p->sge.length = (uint32_t)m;
		p->sge.lkey = r->pull_mr->lkey;
		p->wr.num_sge = 1;
		p->wr.opcode = UIW_WR_RDMA_READ;
		p->wr.wr.rdma.remote_addr = segs[i].seg.offset + from;
		p->wr.wr.rdma.rkey = segs[i].seg.handle;
		p->have = 1;
		dst += m;
		a += m;
		n -= m;
		base += sl;
	}
	return n ? -EMSGSIZE : 0;
}

struct rchunk {
	uint32_t pos, first, nsegs;
	uint64_t len;
};

/*
 * A call arrived in Receive @rx (@len octets) and gets request @r.
 */
static void sv_handle(struct rpcrdma_svc_conn *k, struct svc_req *r, unsigned rx, uint32_t len)
{
	struct rpcrdma_svc *s = k->svc;
	uint8_t *buf = k->rx + (size_t)rx * k->rx_size;
	struct rpcrdma_dec_cfg cfg;
	struct rpcrdma_dec_err e;
	struct rchunk ch[RPCRDMA_XPRT_MAX_READ_SEGS];
	uint32_t nch = 0, first = 0;
	uint64_t red_len, total, inserted = 0, prev_r = 0, src, dst;
	const uint8_t *payload;
	int pos0 = 0, ret;
	struct pend_read last = {0};
	ssize_t hl;

	r->rx = (int)rx;
	memset(&cfg, 0, sizeof(cfg));
	cfg.read = r->rd;
	cfg.max_read = RPCRDMA_XPRT_MAX_READ_SEGS;
	cfg.write = r->wc;
	cfg.max_write = RPCRDMA_XPRT_MAX_WRITE;
	cfg.segs = r->segs;
	cfg.max_segs = RPCRDMA_XPRT_MAX_SEGS;
	cfg.max_chunk_segs = RPCRDMA_XPRT_MAX_CHUNK_SEGS;
	hl = rpcrdma_hdr_decode(buf, len, &cfg, &r->h, &e);
	switch (rpcrdma_rx_verdict(hl, &r->h, 1)) {
	case RPCRDMA_V_ACCEPT:
		break;
	case RPCRDMA_V_SEND_ERR_VERS:
		sv_send_error(k, r, RPCRDMA_ERR_VERS);
		return;
	case RPCRDMA_V_SEND_ERR_CHUNK:
		sv_send_error(k, r, RPCRDMA_ERR_CHUNK);
		return;
	default:
		k->st.discards++;
		req_repost(k, r);
		req_free(k, r);
		return;
	}
	/* group the Read list into chunks: consecutive segments of one
	 * position; positions strictly increasing (we cannot place a chunk
	 * whose position goes back) */
	for (uint32_t i = 0; i < r->h.nread; i++) {
		if (i && r->rd[i].position == r->rd[i - 1].position) {
			ch[nch - 1].nsegs++;
			ch[nch - 1].len += r->rd[i].seg.length;
			continue;
		}
		if (i && r->rd[i].position < r->rd[i - 1].position)
			goto err_chunk;
		ch[nch].pos = r->rd[i].position;
		ch[nch].first = i;
		ch[nch].nsegs = 1;
		ch[nch].len = r->rd[i].seg.length;
		nch++;
	}
	pos0 = nch && ch[0].pos == 0;
	/* RDMA_NOMSG needs the Position Zero Read chunk for its Payload
	 * stream (a Reply chunk alone is a Long Reply's, not a call's);
	 * RDMA_MSG carries its stream inline and cannot also have one */
	if ((r->h.proc == RPCRDMA_NOMSG) != pos0)
		goto err_chunk;
	if (pos0) {
		red_len = ch[0].len;
		payload = NULL;
		first = 1;
	} else {
		red_len = len - (uint64_t)hl;
		payload = buf + hl;
	}
	for (uint32_t i = first; i < nch; i++) {
		uint64_t rp;

		if (ch[i].pos < inserted)
			goto err_chunk;
		rp = ch[i].pos - inserted;
		if (rp < prev_r || rp > red_len)
			goto err_chunk;
		prev_r = rp;
		inserted += pad4(ch[i].len);
	}
	total = red_len + inserted;
	if (total > s->o.max_call || total < 4)
		goto err_chunk;
	k->nserve++;
	sv_update_max(k);
	if (!nch) {
		/* a Short call: deliver it from the Receive buffer */
		r->pub.msg = payload;
		r->pub.msg_len = (uint32_t)red_len;
		sv_deliver(k, r);
		return;
	}
	ret = buf_grow(s->pd, &r->pull, &r->pull_cap, &r->pull_mr, total, s->o.max_call,
		       UIW_ACCESS_LOCAL_WRITE);
	if (ret) {
		k->nserve--;
		goto err_chunk;
	}
	/* place each piece of the reduced stream and each chunk where it
	 * belongs in the unreduced one; Reads go straight into place */
	src = 0;
	dst = 0;
	inserted = 0;
	for (uint32_t i = first; i <= nch; i++) {
		uint64_t rp = i < nch ? ch[i].pos - inserted : red_len;
		uint64_t n = rp - src;

		if (n) {
			ret = 0;
			if (pos0)
				ret = read_range(k, r, &r->rd[ch[0].first], ch[0].nsegs, src, n,
						 r->pull + dst, &last);
			else
				memcpy(r->pull + dst, payload + src, n);
			if (ret)
				goto err_post;
		}
		src = rp;
		dst += n;
		if (i == nch)
			break;
		if (ch[i].len) {
			ret = read_range(k, r, &r->rd[ch[i].first], ch[i].nsegs, 0, ch[i].len,
					 r->pull + dst, &last);
			if (ret)
				goto err_post;
		}
		dst += ch[i].len;
		while (dst & 3)
			r->pull[dst++] = 0;
		inserted += pad4(ch[i].len);
		k->st.read_bytes += ch[i].len;
	}
	if (pos0)
		k->st.read_bytes += ch[0].len;
	r->pub.msg = r->pull;
	r->pub.msg_len = (uint32_t)total;
	if (!last.have) {
		sv_deliver(k, r);
		return;
	}
	last.wr.wr_id = WRID(WR_READ, r->idx);
	last.wr.send_flags = UIW_SEND_SIGNALED;
	ret = pend_flush(k, &last);
	if (ret)
		goto err_post;
	r->state = RQ_READING;
	return;
err_post:
	/* some Reads may be posted into the pull buffer: the request stays
	 * busy until the connection, which goes now (§4.5.4), is dead */
	r->state = RQ_READING;
	sv_fail(k);
	return;
err_chunk:
	sv_send_error(k, r, RPCRDMA_ERR_CHUNK);
}

static void sv_read_done(struct rpcrdma_svc_conn *k, struct svc_req *r, const struct uiw_wc *wc)
{
	if (r->state != RQ_READING)
		return;
	if (wc->status != UIW_WC_SUCCESS) {
		k->nserve--;
		req_free(k, r);
		return;
	}
	/* a Long Call's stream came by RDMA: its XID must be the header's
	 * (RFC 8166 §4.5.2) */
	if (r->h.proc == RPCRDMA_NOMSG && get_be32(r->pub.msg) != r->h.xid) {
		k->nserve--;
		sv_send_error(k, r, RPCRDMA_ERR_CHUNK);
		return;
	}
	sv_deliver(k, r);
}

static void sv_drain_deferred(struct rpcrdma_svc_conn *k)
{
	while (k->dq_n && k->free && !k->dead) {
		struct svc_req *r = k->free;
		unsigned rx = k->dq_rx[k->dq_head];
		uint32_t len = k->dq_len[k->dq_head];

		k->free = r->next_free;
		k->dq_head = (k->dq_head + 1) % k->nrx;
		k->dq_n--;
		sv_handle(k, r, rx, len);
	}
}

static void sv_recv(struct rpcrdma_svc_conn *k, const struct uiw_wc *wc)
{
	unsigned rx = WR_IDX(wc->wr_id);
	uint32_t len;

	if (wc->status != UIW_WC_SUCCESS || rx >= k->nrx)
		return;
	len = wc->byte_len <= k->rx_size ? wc->byte_len : k->rx_size;
	if (k->dq_n < k->nrx) {
		k->dq_rx[(k->dq_head + k->dq_n) % k->nrx] = rx;
		k->dq_len[(k->dq_head + k->dq_n) % k->nrx] = len;
		k->dq_n++;
	}
	sv_drain_deferred(k);
}

static int sv_poll_conn(struct rpcrdma_svc_conn *k)
{
	struct uiw_wc wc[16];
	int n = 0, m;

	while (k->cq && (m = uiw_poll_cq(k->cq, 16, wc)) != 0) {
		if (m < 0) {
			sv_fail(k);
			break;
		}
		for (int i = 0; i < m; i++) {
			unsigned idx = WR_IDX(wc[i].wr_id);

			switch (WR_KIND(wc[i].wr_id)) {
			case WR_RECV:
				sv_recv(k, &wc[i]);
				break;
			case WR_READ:
				if (idx < k->nreq)
					sv_read_done(k, &k->reqs[idx], &wc[i]);
				break;
			case WR_SEND:
				if (idx < k->nreq && k->reqs[idx].state == RQ_SENDING)
					req_free(k, &k->reqs[idx]);
				if (wc[i].status != UIW_WC_SUCCESS)
					sv_fail(k);
				break;
			default:
				break;
			}
		}
		n += m;
	}
	sv_drain_deferred(k);
	return n;
}

static void sv_conn_free(struct rpcrdma_svc_conn *k)
{
	struct rpcrdma_svc *s = k->svc;

	if (k->id)
		uiw_destroy_id(k->id);
	if (k->qp)
		uiw_destroy_qp(k->qp);
	if (k->cq)
		uiw_destroy_cq(k->cq);
	for (unsigned i = 0; k->reqs && i < k->nreq; i++) {
		struct svc_req *r = &k->reqs[i];

		if (r->pull_mr)
			uiw_dereg_mr(r->pull_mr);
		if (r->stage_mr)
			uiw_dereg_mr(r->stage_mr);
		free(r->pull);
		free(r->stage);
	}
	if (k->rx_mr)
		uiw_dereg_mr(k->rx_mr);
	/* keep the totals */
	s->tot.connects += k->st.connects;
	s->tot.calls += k->st.calls;
	s->tot.replies += k->st.replies;
	s->tot.short_msgs += k->st.short_msgs;
	s->tot.chunked_msgs += k->st.chunked_msgs;
	s->tot.long_msgs += k->st.long_msgs;
	s->tot.errors_sent += k->st.errors_sent;
	s->tot.err_vers_sent += k->st.err_vers_sent;
	s->tot.err_chunk_sent += k->st.err_chunk_sent;
	s->tot.discards += k->st.discards;
	s->tot.read_bytes += k->st.read_bytes;
	s->tot.write_bytes += k->st.write_bytes;
	s->tot.reply_chunk_bytes += k->st.reply_chunk_bytes;
	s->tot.inv_sent += k->st.inv_sent;
	if (k->st.max_outstanding > s->tot.max_outstanding)
		s->tot.max_outstanding = k->st.max_outstanding;
	free(k->rx);
	free(k->reqs);
	free(k->dq_rx);
	free(k->dq_len);
	free(k);
}

/* the connection is gone: stop everything but the requests the upper layer holds */
static void sv_conn_dead(struct rpcrdma_svc_conn *k)
{
	if (k->dead)
		return;
	k->dead = 1;
	k->up = 0;
	k->st.connected = 0;
	if (k->id) {
		uiw_destroy_id(k->id);
		k->id = NULL;
	}
	for (unsigned i = 0; i < k->nreq; i++) {
		struct svc_req *r = &k->reqs[i];

		if (r->state == RQ_READING) {
			k->nserve--;
			req_free(k, r);
		} else if (r->state == RQ_SENDING) {
			req_free(k, r);
		}
	}
	k->dq_n = 0;
	if (k->reported && k->svc->ops.conn)
		k->svc->ops.conn(k, 0, k->svc->arg);
}

static void sv_accept(struct rpcrdma_svc *s, const struct uiw_cm_event *ev)
{
	struct rpcrdma_svc_conn *k;
	struct uiw_qp_init_attr qa;
	struct uiw_conn_param cp;
	uint8_t pd[RPCRDMA_CM_LEN];
	ssize_t pret;
	int ret, tried = 0;

	if (s->nconns >= s->o.max_conns) {
		uiw_reject(ev->id, NULL, 0);
		uiw_destroy_id(ev->id);
		return;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		uiw_reject(ev->id, NULL, 0);
		uiw_destroy_id(ev->id);
		return;
	}
	k->svc = s;
	k->id = ev->id;
	k->nrx = s->o.credits;
	k->nreq = 2 * s->o.credits;
	k->rx_size = s->mine.recv_size;
	k->rx = aligned_alloc(64, (size_t)k->nrx * k->rx_size);
	k->reqs = calloc(k->nreq, sizeof(*k->reqs));
	k->dq_rx = calloc(k->nrx, sizeof(*k->dq_rx));
	k->dq_len = calloc(k->nrx, sizeof(*k->dq_len));
	ret = -ENOMEM;
	if (!k->rx || !k->reqs || !k->dq_rx || !k->dq_len)
		goto fail;
	pret = rpcrdma_cm_decode(ev->private_data, ev->private_data_len, &k->peer);
	rpcrdma_cm_negotiate(&s->mine_eff, &k->peer, pret, &k->inl);
	ret = uiw_reg_mr(s->pd, k->rx, (size_t)k->nrx * k->rx_size, UIW_ACCESS_LOCAL_WRITE,
			 &k->rx_mr);
	if (ret)
		goto fail;
	for (unsigned i = 0; i < k->nreq; i++) {
		struct svc_req *r = &k->reqs[i];

		r->idx = i;
		ret = buf_grow(s->pd, &r->stage, &r->stage_cap, &r->stage_mr, s->mine.send_size,
			       UINT32_MAX, UIW_ACCESS_LOCAL_WRITE);
		if (ret)
			goto fail;
		req_free(k, r);
	}
	ret = uiw_create_cq(s->ctx, (int)(k->nreq * XP_SQ_PER_REQ + k->nrx + 16), k, s->ch, &k->cq);
	if (ret)
		goto fail;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = k->cq;
	qa.cap.max_send_wr = k->nreq * XP_SQ_PER_REQ;
	qa.cap.max_recv_wr = k->nrx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = uiw_create_qp(s->pd, &qa, &k->qp);
	if (ret)
		goto fail;
	for (unsigned i = 0; i < k->nrx; i++) {
		ret = sv_post_rx(k, i);
		if (ret)
			goto fail;
	}
	memset(&cp, 0, sizeof(cp));
	if (!(s->o.flags & RPCRDMA_XO_NO_CM_PD)) {
		cp.private_data = pd;
		cp.private_data_len = (uint16_t)rpcrdma_cm_encode(pd, sizeof(pd), &s->mine);
	}
	tried = 1;
	ret = uiw_accept(k->id, k->qp, &cp);
	if (ret)
		goto fail;
	k->st.inline_send = k->inl.send_max;
	k->st.inline_recv = k->inl.recv_max;
	k->st.remote_inv = k->inl.remote_inv;
	k->st.peer_pd = k->inl.peer_pd;
	k->st.peer = k->peer;
	k->next = s->conns;
	s->conns = k;
	s->nconns++;
	return;
fail:
	if (!tried)
		uiw_reject(k->id, NULL, 0);
	sv_conn_free(k);
}

static struct rpcrdma_svc_conn *sv_find(struct rpcrdma_svc *s, struct uiw_cm_id *id)
{
	for (struct rpcrdma_svc_conn *k = s->conns; k; k = k->next)
		if (k->id == id)
			return k;
	return NULL;
}

static int sv_work(struct rpcrdma_svc *s)
{
	struct uiw_cm_event ev;
	struct rpcrdma_svc_conn *k, **pk;
	int n = 0;

	while (uiw_get_cm_event(s->ctx, &ev, 0) == 0) {
		n++;
		if (ev.event == UIW_CM_EVENT_CONNECT_REQUEST) {
			sv_accept(s, &ev);
			continue;
		}
		k = sv_find(s, ev.id);
		if (!k)
			continue;
		if (ev.event == UIW_CM_EVENT_ESTABLISHED) {
			k->up = 1;
			k->reported = 1;
			k->st.connected = 1;
			k->st.connects = 1;
			s->last = k->st;
			if (s->ops.conn)
				s->ops.conn(k, 1, s->arg);
		} else {
			sv_conn_dead(k);
		}
	}
	for (k = s->conns; k; k = k->next)
		if (!k->dead)
			n += sv_poll_conn(k);
	/* free the dead connections nobody references any more */
	for (pk = &s->conns; (k = *pk);) {
		if (k->dead && !k->ndeliv) {
			*pk = k->next;
			s->nconns--;
			sv_conn_free(k);
			continue;
		}
		pk = &k->next;
	}
	return n;
}

int rpcrdma_svc_poll(struct rpcrdma_svc *s, int timeout_ms)
{
	int n = sv_work(s), ret;

	if (n || !timeout_ms)
		return n;
	ret = uiw_progress(s->ctx, timeout_ms);
	if (ret == -EBUSY)
		return ret;
	if (ret == -EINVAL) { /* progress-thread context */
		for (struct rpcrdma_svc_conn *k = s->conns; k; k = k->next)
			if (k->cq)
				uiw_req_notify_cq(k->cq, 0);
		n = sv_work(s);
		if (n)
			return n;
		channel_sleep(s->ctx, s->ch, timeout_ms);
	}
	return sv_work(s);
}

int rpcrdma_svc_create(struct uiw_context *ctx, const char *host, uint16_t port,
		       const struct rpcrdma_xprt_opts *opts, const struct rpcrdma_svc_ops *ops,
		       void *arg, struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *s;
	int ret;

	*out = NULL;
	if (!ctx || !ops || !ops->call)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = opts_resolve(opts, &s->o);
	if (ret)
		goto out_free;
	s->ctx = ctx;
	s->ops = *ops;
	s->arg = arg;
	s->grant = s->o.grant;
	own_pd(&s->o, &s->mine, &s->mine_eff);
	ret = open_channel(ctx, &s->ch);
	if (ret)
		goto out_free;
	ret = uiw_alloc_pd(ctx, &s->pd);
	if (ret)
		goto out_ch;
	ret = uiw_create_id(ctx, s, &s->lid);
	if (ret)
		goto out_pd;
	ret = uiw_listen(s->lid, host, port, 64);
	if (ret)
		goto out_id;
	s->port = uiw_get_port(s->lid);
	*out = s;
	return 0;
out_id:
	uiw_destroy_id(s->lid);
out_pd:
	uiw_dealloc_pd(s->pd);
out_ch:
	if (s->ch)
		uiw_destroy_comp_channel(s->ch);
out_free:
	free(s);
	return ret;
}

uint16_t rpcrdma_svc_port(const struct rpcrdma_svc *s)
{
	return s->port;
}

int rpcrdma_svc_set_grant(struct rpcrdma_svc *s, uint32_t grant)
{
	if (!grant || grant > s->o.credits)
		return -EINVAL;
	s->grant = grant;
	return 0;
}

static struct svc_req *req_of(struct rpcrdma_svc_req *pub)
{
	return (struct svc_req *)pub; /* pub is the first member */
}

int rpcrdma_svc_drop(struct rpcrdma_svc_req *req)
{
	struct svc_req *r = req_of(req);
	struct rpcrdma_svc_conn *k = req->conn;

	if (r->state != RQ_DELIVERED)
		return -EINVAL;
	k->ndeliv--;
	k->nserve--;
	k->st.outstanding = k->nserve;
	req_repost(k, r);
	req_free(k, r);
	return 0;
}

/* post RDMA Writes of @n octets at @src (in the stage buffer) into the
 * chunk @c, recording the lengths written in @out (same segments) */
static int write_chunk(struct rpcrdma_svc_conn *k, struct svc_req *r, const struct rpcrdma_chunk *c,
		       struct rpcrdma_chunk *out, const uint8_t *src, uint64_t n)
{
	for (uint32_t i = 0; i < c->nsegs; i++) {
		uint64_t m = c->segs[i].length < n ? c->segs[i].length : n;
		struct uiw_sge sge = {(uintptr_t)src, (uint32_t)m, r->stage_mr->lkey};
		struct uiw_send_wr wr;
		int ret;

		out->segs[i] = c->segs[i];
		out->segs[i].length = (uint32_t)m;
		if (!m)
			continue;
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = c->segs[i].offset;
		wr.wr.rdma.rkey = c->segs[i].handle;
		ret = uiw_post_send(k->qp, &wr, NULL);
		if (ret)
			return ret;
		src += m;
		n -= m;
	}
	return 0;
}

/* the STag a Send with Invalidate names: one of this call's (RFC 8797 §4.1) */
static uint32_t inv_stag(const struct svc_req *r)
{
	for (uint32_t i = 0; i < r->h.nwrite; i++)
		if (r->h.write[i].nsegs)
			return r->h.write[i].segs[0].handle;
	if (r->h.has_reply && r->h.reply.nsegs)
		return r->h.reply.segs[0].handle;
	if (r->h.nread)
		return r->rd[0].seg.handle;
	return 0;
}

int rpcrdma_svc_reply(struct rpcrdma_svc_req *req, const void *msg, uint32_t len,
		      const struct rpcrdma_item *items, uint32_t nitems)
{
	struct svc_req *r = req_of(req);
	struct rpcrdma_svc_conn *k = req->conn;
	struct rpcrdma_svc *s = k->svc;
	uint8_t inl[RPCRDMA_XPRT_MAX_REPLY_ITEMS];
	int use[RPCRDMA_XPRT_MAX_REPLY_ITEMS];
	struct rpcrdma_chunk_info ci;
	struct rpcrdma_hdr rh;
	uint64_t payload = len, wbytes = 0, off;
	uint32_t wi = 0, segi = 0, send_max = k->inl.send_max, inv;
	ssize_t hl;
	int form, ret;

	if (r->state != RQ_DELIVERED)
		return -EINVAL;
	if (!msg || len < 4 || get_be32(msg) != req->xid || nitems > RPCRDMA_XPRT_MAX_REPLY_ITEMS ||
	    (nitems && !items) || items_check(items, nitems, len))
		return -EINVAL;
	k->ndeliv--;
	k->nserve--;
	k->st.outstanding = k->nserve;
	if (k->dead) {
		req_free(k, r);
		return -ENOTCONN;
	}
	/* RFC 8166 §4.3.2.1: Write chunks take the results in order; an
	 * empty chunk, or none left, means inline (§4.3.2.3) */
	for (uint32_t i = 0; i < nitems; i++) {
		use[i] = -1;
		inl[i] = 1;
		if (wi < r->h.nwrite) {
			const struct rpcrdma_chunk *c = &r->h.write[wi];

			if (c->nsegs) {
				if (items[i].len > rpcrdma_chunk_len(c))
					goto too_big;
				use[i] = (int)wi;
				inl[i] = 0;
				wbytes += items[i].len;
			}
			wi++;
		}
		if (inl[i])
			payload += pad4(items[i].len);
	}
	/* the reply's header: the Write list and the Reply chunk copied with
	 * the lengths written (§3.4.6, §4.3.3) */
	memset(&rh, 0, sizeof(rh));
	rh.xid = r->h.xid;
	rh.vers = RPCRDMA_VERSION;
	rh.credits = s->grant;
	rh.proc = RPCRDMA_MSG;
	rh.nwrite = r->h.nwrite;
	rh.write = r->rwc;
	for (uint32_t i = 0; i < r->h.nwrite; i++) {
		r->rwc[i].nsegs = r->h.write[i].nsegs;
		r->rwc[i].segs = &r->rsegs[segi];
		for (uint32_t j = 0; j < r->h.write[i].nsegs; j++) {
			r->rsegs[segi + j] = r->h.write[i].segs[j];
			r->rsegs[segi + j].length = 0;
		}
		segi += r->h.write[i].nsegs;
	}
	if (r->h.has_reply) {
		rh.has_reply = 1;
		rh.reply.nsegs = r->h.reply.nsegs;
		rh.reply.segs = &r->rsegs[segi];
		for (uint32_t j = 0; j < r->h.reply.nsegs; j++) {
			r->rsegs[segi + j] = r->h.reply.segs[j];
			r->rsegs[segi + j].length = 0;
		}
	}
	hl = rpcrdma_hdr_len(&rh);
	if (hl < 0)
		goto too_big;
	rpcrdma_chunk_info(&r->h, &ci);
	form = rpcrdma_reply_form(&ci, (size_t)hl, payload, send_max);
	if (form < 0 || payload > s->o.max_reply || wbytes > s->o.max_reply)
		goto too_big;
	ret = buf_grow(s->pd, &r->stage, &r->stage_cap, &r->stage_mr,
		       send_max + wbytes + (form == RPCRDMA_NOMSG ? payload : 0),
		       (uint64_t)send_max + 2 * s->o.max_reply, UIW_ACCESS_LOCAL_WRITE);
	if (ret == -EMSGSIZE)
		goto too_big;
	if (ret) {
		/* no memory for the reply: the call gets ERR_CHUNK if the
		 * old stage buffer is gone too, the connection closes */
		req_repost(k, r);
		sv_fail(k);
		req_free(k, r);
		return ret;
	}
	/* result items into their Write chunks */
	off = send_max;
	for (uint32_t i = 0; i < nitems; i++) {
		if (use[i] < 0)
			continue;
		if (items[i].len)
			memcpy(r->stage + off, items[i].buf, items[i].len);
		ret = write_chunk(k, r, &r->h.write[use[i]], &r->rwc[use[i]], r->stage + off,
				  items[i].len);
		if (ret)
			goto err_post;
		off += items[i].len;
		k->st.write_bytes += items[i].len;
	}
	if (form == RPCRDMA_NOMSG) {
		/* a Long Reply: the stream goes into the Reply chunk (§3.5.3) */
		xdr_splice(r->stage + off, msg, len, items, nitems, inl);
		ret = write_chunk(k, r, &r->h.reply, &rh.reply, r->stage + off, payload);
		if (ret)
			goto err_post;
		rh.proc = RPCRDMA_NOMSG;
		k->st.reply_chunk_bytes += payload;
		k->st.long_msgs++;
		payload = 0;
	} else if (wbytes) {
		k->st.chunked_msgs++;
	} else {
		k->st.short_msgs++;
	}
	hl = rpcrdma_hdr_encode(r->stage, send_max, &rh, 0);
	if (hl < 0) {
		ret = (int)hl;
		goto err_post;
	}
	if (rh.proc == RPCRDMA_MSG)
		xdr_splice(r->stage + hl, msg, len, items, nitems, inl);
	/* the Receive goes back before the reply can bring the next call */
	req_repost(k, r);
	inv = k->inl.remote_inv ? inv_stag(r) : 0;
	ret = post_send(k, r, (uint32_t)(hl + payload), inv);
	if (ret)
		goto err_post;
	if (inv)
		k->st.inv_sent++;
	r->state = RQ_SENDING;
	k->st.replies++;
	return 0;
too_big:
	/* RFC 8166 §4.5.3: "no RPC-level reply is possible for that XID" */
	sv_send_error(k, r, RPCRDMA_ERR_CHUNK);
	return -EMSGSIZE;
err_post:
	/* Writes may be posted from the stage buffer: the request stays busy
	 * until the connection, which goes now (§4.5.4), is dead */
	req_repost(k, r);
	r->state = RQ_SENDING;
	sv_fail(k);
	return ret;
}

void rpcrdma_svc_close(struct rpcrdma_svc_conn *conn)
{
	sv_fail(conn);
}

void rpcrdma_svc_conn_info(const struct rpcrdma_svc_conn *conn, struct rpcrdma_xprt_info *info)
{
	*info = conn->st;
	info->credits = conn->svc->grant;
	info->connected = conn->up && !conn->dead;
}

void rpcrdma_svc_info(const struct rpcrdma_svc *s, struct rpcrdma_xprt_info *info)
{
	*info = s->tot;
	info->inline_send = s->last.inline_send;
	info->inline_recv = s->last.inline_recv;
	info->remote_inv = s->last.remote_inv;
	info->peer_pd = s->last.peer_pd;
	info->peer = s->last.peer;
	info->credits = s->grant;
	info->connected = 0;
	info->outstanding = 0;
	for (const struct rpcrdma_svc_conn *k = s->conns; k; k = k->next) {
		const struct rpcrdma_xprt_info *t = &k->st;

		info->connected += k->up && !k->dead;
		info->connects += t->connects;
		info->outstanding += t->outstanding;
		info->calls += t->calls;
		info->replies += t->replies;
		info->short_msgs += t->short_msgs;
		info->chunked_msgs += t->chunked_msgs;
		info->long_msgs += t->long_msgs;
		info->errors_sent += t->errors_sent;
		info->err_vers_sent += t->err_vers_sent;
		info->err_chunk_sent += t->err_chunk_sent;
		info->discards += t->discards;
		info->read_bytes += t->read_bytes;
		info->write_bytes += t->write_bytes;
		info->reply_chunk_bytes += t->reply_chunk_bytes;
		info->inv_sent += t->inv_sent;
		if (t->max_outstanding > info->max_outstanding)
			info->max_outstanding = t->max_outstanding;
	}
}

int rpcrdma_svc_destroy(struct rpcrdma_svc *s)
{
	struct rpcrdma_svc_conn *k;

	if (!s)
		return 0;
	for (k = s->conns; k; k = k->next)
		if (k->ndeliv)
			return -EBUSY;
	while ((k = s->conns)) {
		s->conns = k->next;
		k->reported = 0; /* no callbacks from here */
		sv_conn_dead(k);
		sv_conn_free(k);
	}
	uiw_destroy_id(s->lid);
	uiw_dealloc_pd(s->pd);
	if (s->ch)
		uiw_destroy_comp_channel(s->ch);
	free(s);
	return 0;
}
