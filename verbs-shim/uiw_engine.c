/* SPDX-License-Identifier: MIT */
/*
 * The engine: the only code of uiwarp that touches sockets.  A context has
 * one engine (attr.engine_threads: several), each a progress thread (or,
 * polled, the application's thread) running an io_uring loop for the
 * connections it was given:
 *
 *  - per connection at most one IORING_OP_READV (into the iovecs that
 *    mpa_rx_lend() returns: payload lands straight in registered memory, no
 *    staging copy; then mpa_rx_ack()), one IORING_OP_SENDMSG (the iovecs of
 *    mpa_tx_pending(), then mpa_tx_advance()) and one control operation
 *    (IORING_OP_ACCEPT on a listener, IORING_OP_CONNECT on an initiator);
 *  - an IORING_OP_READ on an eventfd that the application's calls write to
 *    when they need the engine (a post to a connection while the engine
 *    waits in its ring, CM calls; receives posted to a connected QP do not);
 *  - MPA handshake deadlines (mpa_conn_next_timeout(), CLOCK_MONOTONIC)
 *    bound the wait (io_uring_wait_cqe_timeout()).
 *
 * The context mutex is held while the thread runs the state machines and
 * released while it waits in the ring; a lock-free data path is issue 7.
 * Connection teardown: an id's socket is closed only when no SQE of it is
 * in flight, so no kernel operation ever outlives the memory it uses.  The
 * same holds for application memory (docs/API.md, the memory contract): a
 * QP is told when a read lent its memory or a send of its FPDUs is in
 * flight (id_io_sync()), flushes only once that ended, and a failing QP's
 * I/O is cancelled so that it ends within one turn.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uiw_int.h"

/* Under valgrind: the kernel fills read buffers through io_uring, which
 * memcheck cannot see; say so, or every received octet reads as
 * uninitialised (tests/sh/valgrind.sh).  A few instructions otherwise. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define UIW_MEM_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#endif
#endif
#ifndef UIW_MEM_DEFINED
#define UIW_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define UIW_RING_DEPTH 256

uint64_t engine_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void engine_kick(struct uiw_engine *eng)
{
	uint64_t one = 1;

	if (eng->ctx->attr.mode == UIW_CTX_POLLED)
		return; /* no thread: the next poll turns the engine */
	/* EAGAIN (counter saturated) still means "awake": ignore the result. */
	if (write(eng->efd, &one, sizeof(one)) < 0)
		return;
}

/*
 * (lock held) Does @eng's thread need a kick to see what was just marked?
 * Not while it is outside its wait: it is then running its turn, or about
 * to take the lock for the next one, and services the dirty ids before it
 * waits again; and not twice in one wait.  Saves an eventfd write (and a
 * wake-up) per post: with 256 QPs posting one Write each, one per message.
 */
int engine_needs_kick(struct uiw_engine *eng)
{
	return eng->ctx->attr.mode != UIW_CTX_POLLED &&
	       __atomic_load_n(&eng->in_wait, __ATOMIC_SEQ_CST) &&
	       !__atomic_exchange_n(&eng->kicked, 1, __ATOMIC_SEQ_CST);
}

void engine_wake(struct uiw_context *ctx)
{
	for (unsigned i = 0; i < ctx->neng; i++) {
		__atomic_store_n(&ctx->eng[i].all_dirty, 1, __ATOMIC_RELEASE);
		engine_kick(&ctx->eng[i]);
	}
}

void engine_mark(struct uiw_cm_id *id)
{
	if (id->dirty)
		return;
	id->dirty = 1;
	id->dirty_next = id->eng->dirty;
	id->eng->dirty = id;
}

/* (lock held) the engine a new id is served by: round-robin */
static struct uiw_engine *engine_pick(struct uiw_context *ctx)
{
	return &ctx->eng[ctx->next_eng++ % ctx->neng];
}

/* (lock held) take @id off the dirty list before it is freed */
static void engine_unmark(struct uiw_cm_id *id)
{
	struct uiw_cm_id **pp;

	if (!id->dirty)
		return;
	for (pp = &id->eng->dirty; *pp; pp = &(*pp)->dirty_next)
		if (*pp == id) {
			*pp = id->dirty_next;
			break;
		}
	id->dirty = 0;
}

void engine_ev_push(struct uiw_context *ctx, const struct uiw_cm_event *ev)
{
	struct uiw_cm_id *id = ev->id;
	struct uiw_ev_node *n;
	uint64_t one = 1;

	/* the id's reserved nodes first: allocating here could fail, and an
	 * event lost would leave the application waiting (and a request's id
	 * nobody knows of) */
	if (id && id->ev_spare) {
		n = id->ev_spare;
		id->ev_spare = n->next;
	} else {
		n = malloc(sizeof(*n));
		if (!n)
			return; /* more events than UIW_ID_EVENTS: not expected */
	}
	n->next = NULL;
	n->ev = *ev;
	*ctx->ev_tail = n;
	ctx->ev_tail = &n->next;
	if (write(ctx->cm_efd, &one, sizeof(one)) < 0) {
		/* cannot saturate: one unit per queued event */
	}
	pthread_cond_broadcast(&ctx->cond);
}

static void id_event(struct uiw_cm_id *id, enum uiw_cm_event_type type, int status, const void *pd,
		     size_t pd_len)
{
	struct uiw_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event = type;
	ev.id = id;
	ev.status = status;
	if (type == UIW_CM_EVENT_CONNECT_REQUEST)
		ev.listen_id = id->listener;
	if (pd_len > sizeof(ev.private_data))
		pd_len = sizeof(ev.private_data);
	if (pd_len)
		memcpy(ev.private_data, pd, pd_len);
	ev.private_data_len = (uint16_t)pd_len;
	ev.responder_resources = id->peer_ird;
	ev.initiator_depth = id->peer_ord;
	ev.term_flags = id->term_flags;
	ev.term_layer = id->term[0];
	ev.term_etype = id->term[1];
	ev.term_ecode = id->term[2];
	engine_ev_push(id->ctx, &ev);
}

/* ---- MPA handshake upcalls (before the QP is bound) --------------------- */

static void hs_copy(struct uiw_cm_id *id, const struct mpa_rr *rr)
{
	id->hs_pd_len = rr->ulp_pd_len;
	if (rr->ulp_pd_len)
		memcpy(id->hs_pd, rr->ulp_pd, rr->ulp_pd_len);
	id->peer_ird = rr->ird;
	id->peer_ord = rr->ord;
}

static void hs_request(void *arg, const struct mpa_rr *req)
{
	struct uiw_cm_id *id = arg;

	hs_copy(id, req);
	id->got_request = 1;
}

static void hs_reply(void *arg, const struct mpa_rr *rep)
{
	struct uiw_cm_id *id = arg;

	hs_copy(id, rep);
	id->reply_reject = rep->reject;
	id->got_reply = 1;
}

static const struct mpa_ops hs_ops = {
	.request = hs_request,
	.reply = hs_reply,
};

/* The MPA configuration of a new connection, from the context's options. */
static void ctx_mpa_cfg(const struct uiw_context *ctx, enum mpa_role role, struct mpa_cfg *cfg)
{
	const struct uiw_context_attr *a = &ctx->attr;

	mpa_cfg_init(cfg, role);
	cfg->crc = a->crc != UIW_CRC_OFF;
	cfg->markers = !!a->markers;
	if (a->mpa_rev)
		cfg->rev = (uint8_t)a->mpa_rev;
	cfg->tx_ulpdu_max = a->fpdu_max;
	if (a->pd_max)
		cfg->pd_max = (uint16_t)a->pd_max;
	if (a->handshake_timeout_ms)
		cfg->timeout_ns = (uint64_t)a->handshake_timeout_ms * 1000000ull;
	cfg->p2p = role == MPA_ROLE_INITIATOR && a->p2p;
	if (a->rtr)
		cfg->rtr = a->rtr;
}

/* The context's TCP_USER_TIMEOUT (0: kernel default) and keepalive (0: off)
 * on a connection socket. */
static void sock_user_timeout(const struct uiw_context *ctx, int fd)
{
	unsigned ut = ctx->attr.tcp_user_timeout_ms;
	int ka = (int)((ctx->attr.tcp_keepalive_ms + 999) / 1000), one = 1, cnt = 3;

	if (ut)
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
	if (ka) {
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &ka, sizeof(ka));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &ka, sizeof(ka));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	}
}

static void sock_setup(struct uiw_cm_id *id, struct mpa_cfg *cfg)
{
	int one = 1, mss = 0;
	socklen_t len = sizeof(mss);

	setsockopt(id->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sock_user_timeout(id->ctx, id->fd); /* accepted sockets (again for connected) */
	/* The FPDU size follows the path MSS (RFC 5044 §8: MULPDU from EMSS). */
	if (!getsockopt(id->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) && mss > 0)
		cfg->emss = (uint32_t)mss;
	cfg->rx_hdr_min = DDP_TAGGED_HDR_LEN;
	cfg->tx_depth = 0; /* from the FPDU size: about 512 KiB queued */
}

/* Stop all I/O of @id: the socket is closed once nothing is in flight. */
static void id_abort(struct uiw_cm_id *id)
{
	if (id->fd >= 0)
		shutdown(id->fd, SHUT_RDWR);
	id->rx_done = 1;
	id->tx_shut = 1;
	if (id->misc_busy)
		id->cancel_misc = 1;
	if (id->state != UIW_ID_LISTEN)
		id->state = UIW_ID_CLOSING;
}

/* A close that could not send what it had queued in time (the peer stopped
 * reading): abort.  SO_LINGER 0 makes the close a RST that frees the
 * kernel's send queue; the shutdown ends the send and read in flight. */
static void id_drain_abort(struct uiw_cm_id *id)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (id->fd >= 0)
		setsockopt(id->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	id->was_reset = !id->tx_shut;
	id->drain_until = 0;
	id_abort(id);
}

/* The connection failed: flush the QP, or report the handshake failure. */
static void id_conn_failed(struct uiw_cm_id *id, int err, int eof)
{
	if (id->qp && id->qp->qp.state != RDMAP_QPS_IDLE) {
		/* bound: send MPA's TERMINATE if any, keep reading until EOF */
		rdmap_qp_conn_failed(&id->qp->qp, err);
		if (eof)
			id->rx_done = 1;
		else
			id->rx_discard = 1;
		id->state = UIW_ID_CLOSING;
		return;
	}
	if (id->mpa_inited && id->mpa.cfg.role == MPA_ROLE_INITIATOR && !id->reported &&
	    !id->destroying) {
		id->reported = 1;
		id_event(id, UIW_CM_EVENT_CONNECT_ERROR, err ? err : -ECONNRESET, NULL, 0);
	}
	id_abort(id);
}

static void after_handshake(struct uiw_cm_id *id)
{
	int ret;

	if (id->got_request) {
		id->got_request = 0;
		if (id->destroying)
			return;
		id->state = UIW_ID_REQ;
		id->user_owned = 1; /* the application must accept/reject and destroy it */
		id->ctx->nid++;
		id_event(id, UIW_CM_EVENT_CONNECT_REQUEST, 0, id->hs_pd, id->hs_pd_len);
	}
	if (id->got_reply) {
		id->got_reply = 0;
		if (id->reply_reject) {
			id->reported = 1;
			id_event(id, UIW_CM_EVENT_REJECTED, -ECONNREFUSED, id->hs_pd,
				 id->hs_pd_len);
			id_abort(id);
			return;
		}
		ret = rdmap_qp_bind(&id->qp->qp, &id->mpa);
		if (ret) {
			id->reported = 1;
			id_event(id, UIW_CM_EVENT_CONNECT_ERROR, ret, NULL, 0);
			if (ret == -ECONNABORTED) { /* the QP sends the TERMINATE */
				id->rx_discard = 1;
				id->state = UIW_ID_CLOSING;
			} else {
				id_abort(id);
			}
			return;
		}
		id->state = UIW_ID_UP;
		id->established = 1;
		if (id->ctx->attr.first_fpdu_delay_ms)
			id->tx_hold_until =
				engine_now_ns() + id->ctx->attr.first_fpdu_delay_ms * 1000000ull;
		id_event(id, UIW_CM_EVENT_ESTABLISHED, 0, id->hs_pd, id->hs_pd_len);
	}
}

static void id_init_ops(struct uiw_cm_id *id)
{
	id->fd = -1;
	id->op_rx = (struct uiw_op){UIW_OP_RX, id};
	id->op_tx = (struct uiw_op){UIW_OP_TX, id};
	id->op_misc = (struct uiw_op){UIW_OP_MISC, id};
	id->op_poll = (struct uiw_op){UIW_OP_POLL, id};
}

static void id_free_spares(struct uiw_cm_id *id)
{
	struct uiw_ev_node *n;

	while ((n = id->ev_spare)) {
		id->ev_spare = n->next;
		free(n);
	}
}

/* A zeroed id with its UIW_ID_EVENTS event nodes, or NULL. */
static struct uiw_cm_id *id_alloc(void)
{
	struct uiw_cm_id *id = calloc(1, sizeof(*id));

	for (int i = 0; id && i < UIW_ID_EVENTS; i++) {
		struct uiw_ev_node *n = malloc(sizeof(*n));

		if (!n) {
			id_free_spares(id);
			free(id);
			return NULL;
		}
		n->next = id->ev_spare;
		id->ev_spare = n;
	}
	return id;
}

/* ---- completions -------------------------------------------------------- */

static void on_rx(struct uiw_cm_id *id, int res)
{
	int ret, cancelled = id->rx_cancel;

	id->rx_busy = 0;
	id->rx_app = 0;
	id->rx_cancel = 0;
	if (id->rx_done)
		return;
	/* cancelled because the QP is failing: nothing was read; the next
	 * lend finds the receive stopped and reads into the discard buffer */
	if (res == -ECANCELED && cancelled)
		return;
	if (id->rx_discard) {
		if (res <= 0)
			id->rx_done = 1;
		return;
	}
	if (res == 0 || res == -ECONNRESET || res == -EPIPE) {
		id_conn_failed(id, res ? res : 0, 1);
		id->rx_done = 1;
		return;
	}
	if (res < 0) {
		id_conn_failed(id, res, 1);
		id->rx_done = 1;
		return;
	}
	if (id->rx_staged) {
		UIW_MEM_DEFINED(id->stage, (size_t)res);
	} else {
		size_t left = (size_t)res;

		for (int i = 0; i < id->rx_niov && left; i++) {
			size_t k = id->rx_iov[i].iov_len < left ? id->rx_iov[i].iov_len : left;

			UIW_MEM_DEFINED(id->rx_iov[i].iov_base, k);
			left -= k;
		}
	}
	if (id->rx_staged) {
		ssize_t used;

		id->rx_staged = 0;
		used = mpa_rx(&id->mpa, id->stage, (size_t)res);
		ret = used < 0 ? (int)used : 0;
		if (used >= 0 && (size_t)used < (size_t)res) {
			/* MPA exited (only in the handshake, which never stages) */
			id->rx_done = 1;
			id->close_after_tx = 1;
		}
	} else {
		ret = mpa_rx_ack(&id->mpa, (size_t)res);
	}
	after_handshake(id);
	if (ret < 0 && id->state != UIW_ID_DEAD) {
		if (ret == -ECONNREFUSED) { /* refused by policy: the Reject is queued */
			id->rx_done = 1;
			id->close_after_tx = 1;
			id->state = UIW_ID_CLOSING;
			return;
		}
		id_conn_failed(id, ret, 0);
	}
}

static void on_tx(struct uiw_cm_id *id, int res)
{
	int cancelled = id->tx_cancel;

	id->tx_busy = 0;
	id->tx_cancel = 0;
	if (res == -ECANCELED && cancelled) {
		/* nothing of it was sent: the FPDUs are no longer lent, and the
		 * QP may now cut its queue for the TERMINATE */
		mpa_tx_advance(&id->mpa, 0);
		return;
	}
	if (res < 0) {
		id->tx_shut = 1;
		if (!id->rx_done)
			id_conn_failed(id, res, 0);
		return;
	}
	mpa_tx_advance(&id->mpa, (size_t)res);
}

static void on_misc(struct uiw_cm_id *id, int res)
{
	struct uiw_context *ctx = id->ctx;
	struct mpa_cfg cfg;

	id->misc_busy = 0;
	id->cancel_misc = 0;
	if (id->state == UIW_ID_LISTEN) {
		struct uiw_cm_id *c;

		if (res < 0 || id->destroying) {
			if (res >= 0)
				close(res);
			else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM)
				/* out of fds or memory: the connection stays in
				 * the backlog; retry later, do not spin */
				id->accept_after = engine_now_ns() + UIW_ACCEPT_BACKOFF_NS;
			return;
		}
		c = id_alloc();
		if (!c) {
			close(res);
			id->accept_after = engine_now_ns() + UIW_ACCEPT_BACKOFF_NS;
			return;
		}
		id_init_ops(c);
		c->ctx = ctx;
		c->eng = engine_pick(ctx);
		c->fd = res;
		c->listener = id;
		ctx_mpa_cfg(ctx, MPA_ROLE_RESPONDER, &cfg);
		sock_setup(c, &cfg);
		if (mpa_conn_init(&c->mpa, &cfg, &hs_ops, c)) {
			close(res);
			id_free_spares(c);
			free(c);
			return;
		}
		c->mpa_inited = 1;
		mpa_conn_start(&c->mpa, NULL, 0, engine_now_ns());
		c->state = UIW_ID_MPA;
		c->next = ctx->ids;
		ctx->ids = c;
		engine_mark(c);
		if (c->eng != id->eng)
			engine_kick(c->eng); /* its first I/O goes on its own ring */
		return;
	}
	if (id->state != UIW_ID_TCP_CONNECTING)
		return;
	if (res < 0 && !id->destroying && id->ialt < id->nalt) {
		/* the name resolved to further addresses: try the next one
		 * (a new socket: the family may differ); id_service() starts
		 * its connect */
		const struct sockaddr_storage *a = &id->alt[id->ialt++];
		int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0) {
			sock_user_timeout(ctx, fd);
			close(id->fd);
			id->fd = fd;
			id->addr = *a;
			id->addrlen = a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							       : sizeof(struct sockaddr_in);
			return;
		}
	}
	if (res < 0) {
		if (!id->destroying) {
			/* as librdmacm reports iWARP: a refused TCP connection is
			 * REJECTED, one that timed out or found no route
			 * UNREACHABLE */
			id->reported = 1;
			id_event(id, res == -ECONNREFUSED ? UIW_CM_EVENT_REJECTED
							  : UIW_CM_EVENT_UNREACHABLE,
				 res, NULL, 0);
		}
		id_abort(id);
		return;
	}
	ctx_mpa_cfg(ctx, MPA_ROLE_INITIATOR, &cfg);
	sock_setup(id, &cfg);
	cfg.ird = id->qp->qp.cfg.ird;
	cfg.ord = id->qp->qp.cfg.ord;
	res = mpa_conn_init(&id->mpa, &cfg, &hs_ops, id);
	if (!res) {
		id->mpa_inited = 1;
		res = mpa_conn_start(&id->mpa, id->conn_pd, id->conn_pd_len, engine_now_ns());
	}
	if (res) {
		id->reported = 1;
		id_event(id, UIW_CM_EVENT_CONNECT_ERROR, res, NULL, 0);
		id_abort(id);
		return;
	}
	id->state = UIW_ID_MPA;
}

/* ---- per-id service ----------------------------------------------------- */

static struct io_uring_sqe *get_sqe(struct uiw_engine *eng)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&eng->ring);

	if (!sqe) {
		io_uring_submit(&eng->ring);
		sqe = io_uring_get_sqe(&eng->ring);
	}
	return sqe;
}

/* an SQE of @op: its completion is counted out in handle_cqe() */
static void sqe_op(struct uiw_engine *eng, struct io_uring_sqe *sqe, struct uiw_op *op)
{
	io_uring_sqe_set_data(sqe, op);
	eng->nbusy++;
}

static int inflight(const struct uiw_cm_id *id)
{
	return id->rx_busy || id->tx_busy || id->misc_busy || id->poll_busy;
}

/* Tell the QP whether kernel I/O in flight may use WR or MR memory (a send
 * of queued FPDUs, a read lent a destination): while it may, the QP's move
 * to ERROR does not flush its work requests (their memory would be the
 * application's again under the kernel's feet) and a TERMINATE waits;
 * going idle performs what waited. */
static void id_io_sync(struct uiw_cm_id *id)
{
	struct rdmap_qp *qp = id_bound_qp(id);

	if (qp)
		rdmap_qp_set_io_busy(qp, id->tx_busy || (id->rx_busy && id->rx_app));
}

int engine_inflight_refs(const struct uiw_cm_id *id, uintptr_t lo, uintptr_t hi)
{
	return (id->tx_busy && mpa_iov_overlaps(id->tx_iov, (int)id->tx_msg.msg_iovlen, lo, hi)) ||
	       (id->rx_busy && id->rx_app && mpa_iov_overlaps(id->rx_iov, id->rx_niov, lo, hi));
}

static void id_free(struct uiw_cm_id *id)
{
	if (id->mpa_inited)
		mpa_conn_destroy(&id->mpa);
	id_free_spares(id);
	free(id->alt);
	free(id->stage);
	free(id);
}

/*
 * Where the next read goes (id->rx_iov, id->rx_staged); returns the iovec
 * count, 0 when nothing is to be read now.
 */
static int rx_lend(struct uiw_cm_id *id)
{
	struct iovec *iov = id->rx_iov;
	int n;

	id->rx_staged = 0;
	if (id->rx_discard) {
		iov[0].iov_base = id->discard;
		iov[0].iov_len = sizeof(id->discard);
		return 1;
	}
	n = mpa_rx_lend(&id->mpa, iov, UIW_RX_IOV);
	if (n < 0) {
		id_conn_failed(id, n, 0);
		return 0;
	}
	if (n == 0 && (id->mpa.state == MPA_S_REJECTED || id->mpa.state == MPA_S_ERROR)) {
		/* MPA exited (Reject exchanged): read nothing more */
		id->rx_done = 1;
		id->close_after_tx = 1;
		return 0;
	}
	if (n > 0 && id->mpa.state == MPA_S_FULL) {
		size_t due = 0;

		for (int i = 0; i < n && due < UIW_RX_STAGE_MIN; i++)
			due += iov[i].iov_len;
		if (due < UIW_RX_STAGE_MIN) {
			if (!id->stage)
				id->stage = malloc(UIW_RX_STAGE);
			if (id->stage) {
				iov[0].iov_base = id->stage;
				iov[0].iov_len = UIW_RX_STAGE;
				n = 1;
				id->rx_staged = 1;
			}
		}
	}
	return n;
}

/*
 * Polled contexts read and send on established connections directly: a
 * non-blocking recvmsg()/sendmsg() when the engine turns, as a busy-polling
 * TCP application would, instead of an IORING_OP_READV that the kernel runs
 * as task work when data arrives and an IORING_OP_SENDMSG issued by the
 * next io_uring_enter().  A turn that neither submits nor has anything in
 * flight then makes no io_uring_enter() at all.  Measured: the 8-byte
 * poll-mode Send half round trip 4.35 -> 3.7-4.1 us (TCP busy-poll 3.06).
 * A send the socket does not take whole goes by io_uring (which waits for
 * room); a turn that waits (not uiw_poll_cq()'s spinning one) arms a
 * one-shot IORING_OP_POLL_ADD when the socket is empty, and its completion
 * reads at once.  Not with an exported context fd (uiw_context_fd(): the
 * application sleeps on it and completions must announce data), nor in
 * the handshake or while closing.
 */
static int direct_ok(const struct uiw_cm_id *id)
{
	return id->ctx->attr.mode == UIW_CTX_POLLED && !id->ctx->efd_exported &&
	       id->mpa_inited && id->mpa.state == MPA_S_FULL && !id->rx_discard && !id->linger_until;
}

static void rx_direct(struct uiw_cm_id *id)
{
	struct io_uring_sqe *sqe;
	struct msghdr mh;
	ssize_t r;
	int n = rx_lend(id);

	if (n <= 0)
		return;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = id->rx_iov;
	mh.msg_iovlen = (size_t)n;
	r = recvmsg(id->fd, &mh, MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		/* a turn that waits is woken by the poll; a spinning one
		 * (uiw_poll_cq) tries again, and arms nothing: the poll's
		 * wake-up would cost the sender's side of every message */
		if (!id->poll_busy && !id->eng->spinning && (sqe = get_sqe(id->eng))) {
			io_uring_prep_poll_add(sqe, id->fd, POLLIN);
			sqe_op(id->eng, sqe, &id->op_poll);
			id->poll_busy = 1;
		}
		engine_mark(id);
		return;
	}
	id->rx_reads++;
	id->rx_staged_reads += (uint64_t)id->rx_staged;
	id->rx_niov = n;
	id->rx_busy = 1; /* as for a read in flight: on_rx() ends it */
	id->eng->progressed = 1;
	on_rx(id, r < 0 ? -errno : (int)r);
	engine_mark(id); /* more may be there, and what came may call for I/O */
}

/* Ask the kernel to cancel @op of @id (once: *@sent); its completion
 * comes as usual, with -ECANCELED or with what it did before. */
static void op_cancel(struct uiw_cm_id *id, struct uiw_op *op, int *sent)
{
	struct io_uring_sqe *sqe;

	if (*sent || !(sqe = get_sqe(id->eng)))
		return;
	io_uring_prep_cancel(sqe, op, 0);
	io_uring_sqe_set_data(sqe, NULL);
	*sent = 1;
}

/* Returns 1 when the engine freed @id (an id the application never saw). */
static int id_service(struct uiw_cm_id *id, uint64_t now, uint64_t *deadline)
{
	struct uiw_context *ctx = id->ctx;
	struct io_uring_sqe *sqe;
	struct rdmap_qp *qp = id->qp && id->qp->qp.state != RDMAP_QPS_IDLE ? &id->qp->qp : NULL;
	int n;

	if (id->fd < 0)
		return 0;
	if (id->cancel_misc && id->misc_busy && (sqe = get_sqe(id->eng))) {
		io_uring_prep_cancel(sqe, &id->op_misc, 0);
		io_uring_sqe_set_data(sqe, NULL);
		id->cancel_misc = 0;
	}
	if (id->state == UIW_ID_LISTEN) {
		if (id->destroying) {
			if (!id->misc_busy) {
				close(id->fd);
				id->fd = -1;
				id->state = UIW_ID_DEAD;
				pthread_cond_broadcast(&ctx->cond);
			}
			return 0;
		}
		if (!id->misc_busy && id->accept_after > now) {
			if (id->accept_after < *deadline)
				*deadline = id->accept_after;
			return 0;
		}
		if (!id->misc_busy) {
			unsigned pending = 0;

			/* in the handshake, or waiting for the application's
			 * accept/reject: both hold an fd and an id */
			for (struct uiw_cm_id *c = ctx->ids; c; c = c->next)
				pending += c->listener == id &&
					   (c->state == UIW_ID_MPA || c->state == UIW_ID_REQ);
			if (pending >= id->pending_max) {
				/* handshakes end (or time out), the application
				 * answers: look again soon */
				if (now + 10000000ull < *deadline)
					*deadline = now + 10000000ull;
				return 0;
			}
		}
		if (!id->misc_busy && (sqe = get_sqe(id->eng))) {
			io_uring_prep_accept(sqe, id->fd, NULL, NULL, SOCK_CLOEXEC);
			sqe_op(id->eng, sqe, &id->op_misc);
			id->misc_busy = 1;
		}
		return 0;
	}
	if (id->state == UIW_ID_TCP_CONNECTING) {
		if (!id->misc_busy && !id->destroying && (sqe = get_sqe(id->eng))) {
			io_uring_prep_connect(sqe, id->fd, (struct sockaddr *)&id->addr,
					      id->addrlen);
			sqe_op(id->eng, sqe, &id->op_misc);
			id->misc_busy = 1;
		}
		if (id->destroying && !id->misc_busy)
			id_abort(id);
		else
			return 0;
	}

	/* handshake deadlines (Request, Reply, and a p2p responder's RTR) */
	if (id->mpa_inited &&
	    (id->state == UIW_ID_MPA || id->state == UIW_ID_REQ || id->state == UIW_ID_UP)) {
		uint64_t t = mpa_conn_next_timeout(&id->mpa);

		if (t <= now) {
			int r = mpa_conn_timeout(&id->mpa, now);

			if (r < 0)
				id_conn_failed(id, r, 0);
		} else if (t < *deadline) {
			*deadline = t;
		}
	}

	if (qp) {
		/* a CQ of this QP overflowed: the QP goes to error (as with a
		 * verbs CQ error), which closes the connection; one sending a
		 * TERMINATE gets there by itself */
		if ((qp->state == RDMAP_QPS_RTS || qp->state == RDMAP_QPS_CLOSING) &&
		    (id->qp->send_cq->error || id->qp->recv_cq->error))
			rdmap_qp_modify_error(qp);
		rdmap_qp_progress(qp);
		if (id->state == UIW_ID_CLOSING && qp->state == RDMAP_QPS_CLOSING &&
		    rdmap_qp_close(qp))
			id->close_after_tx = 1;
		if (qp->state == RDMAP_QPS_ERROR)
			id->close_after_tx = 1;
		/* The QP is failing and waits for our I/O to end before it
		 * flushes (or cuts its queue for the TERMINATE): a peer that
		 * stopped reading, or sends nothing more, would hold it there
		 * for ever.  Cancel what is in flight; whatever it already
		 * moved is accounted when its completion comes. */
		if (qp->io_busy && (qp->flush_pending || (qp->term_pending && !qp->term_sent))) {
			if (id->tx_busy)
				op_cancel(id, &id->op_tx, &id->tx_cancel);
			if (id->rx_busy && id->rx_app)
				op_cancel(id, &id->op_rx, &id->rx_cancel);
		}
		/* the TERMINATE could not be queued: reset instead */
		if (qp->term_abandoned && !id->tx_shut)
			id_drain_abort(id);
	}

	/* closing (uiw_disconnect(), an error, a Reject): what is queued must
	 * leave within UIW_LINGER_NS (UIW_LINGER_ERR_NS once the QP is in
	 * error), else the connection is aborted; a peer advertising a zero
	 * window would otherwise hold the QP, fd and buffers forever */
	if (!id->tx_shut && (id->close_after_tx || id->state == UIW_ID_CLOSING)) {
		if (!id->drain_until)
			id->drain_until = now + (qp && qp->state == RDMAP_QPS_ERROR ? UIW_LINGER_ERR_NS
										   : UIW_LINGER_NS);
		if (now >= id->drain_until)
			id_drain_abort(id);
		else if (id->drain_until < *deadline)
			*deadline = id->drain_until;
	}

	/* transmit (held for a while after the Reply: first_fpdu_delay_ms) */
	if (id->tx_hold_until) {
		if (now < id->tx_hold_until) {
			if (id->tx_hold_until < *deadline)
				*deadline = id->tx_hold_until;
		} else {
			id->tx_hold_until = 0;
		}
	}
	if (!id->tx_busy && !id->tx_shut && !id->tx_hold_until) {
		n = mpa_tx_pending(&id->mpa, id->tx_iov, UIW_TX_IOV);
		if (n > 0) {
			memset(&id->tx_msg, 0, sizeof(id->tx_msg));
			id->tx_msg.msg_iov = id->tx_iov;
			id->tx_msg.msg_iovlen = (size_t)n;
		}
		if (n > 0 && direct_ok(id)) {
			/* polled: send now (non-blocking); what the socket
			 * does not take goes by io_uring, which waits for room */
			ssize_t r = sendmsg(id->fd, &id->tx_msg, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (r > 0) {
				mpa_tx_advance(&id->mpa, (size_t)r);
				engine_mark(id);
				id->eng->progressed = 1;
				n = -1; /* more may be queued: the next turn looks */
			} else if (r < 0 && errno != EAGAIN) {
				on_tx(id, -errno);
				id->eng->progressed = 1;
				n = -1;
			}
		}
		if (n > 0 && (sqe = get_sqe(id->eng))) {
			io_uring_prep_sendmsg(sqe, id->fd, &id->tx_msg, MSG_NOSIGNAL);
			sqe_op(id->eng, sqe, &id->op_tx);
			id->tx_busy = 1;
			id_io_sync(id);
		} else if (n == 0 && id->close_after_tx) {
			shutdown(id->fd, SHUT_WR);
			id->tx_shut = 1;
			/* wait for the peer's FIN, but not forever: after an
			 * abortive close (QP in error, TERMINATE or not)
			 * UIW_LINGER_ERR_NS, after a graceful close UIW_LINGER_NS */
			id->linger_until = now + (qp && qp->state == RDMAP_QPS_ERROR ? UIW_LINGER_ERR_NS
										     : UIW_LINGER_NS);
		}
	}
	if (id->linger_until && !id->rx_done) {
		if (now >= id->linger_until) {
			shutdown(id->fd, SHUT_RD); /* the read in flight ends with 0 */
			id->rx_discard = 1;
			id->linger_until = 0;
		} else if (id->linger_until < *deadline) {
			*deadline = id->linger_until;
		}
	}

	/* receive */
	if (!id->rx_busy && !id->rx_done) {
		if (direct_ok(id)) {
			rx_direct(id);
		} else if ((n = rx_lend(id)) > 0 && (sqe = get_sqe(id->eng))) {
			id->rx_reads++;
			id->rx_staged_reads += (uint64_t)id->rx_staged;
			io_uring_prep_readv(sqe, id->fd, id->rx_iov, (unsigned)n, 0);
			id->rx_niov = n;
			sqe_op(id->eng, sqe, &id->op_rx);
			id->rx_busy = 1;
			id->rx_app = !id->rx_staged && !id->rx_discard && id->mpa.state == MPA_S_FULL;
			id_io_sync(id);
		}
	}

	/* finished: close the socket once nothing is in flight */
	if (id->rx_done && id->tx_shut && !inflight(id)) {
		close(id->fd);
		id->fd = -1;
		id->state = UIW_ID_DEAD;
		if (qp)
			rdmap_qp_conn_failed(qp, -ENOTCONN); /* flush whatever is left */
		if (id->established && !id->destroying) {
			struct uiw_qp *uq = id->qp;

			id->established = 0;
			if (uq && (uq->qp.term_received || uq->qp.term_sent || uq->qp.term_abandoned)) {
				const struct rdmap_term *t =
					uq->qp.term_received ? &uq->qp.peer_term : &uq->qp.term;

				id->term_flags = uq->qp.term_received ? UIW_CM_TERM_RECEIVED
								      : UIW_CM_TERM_SENT;
				/* ours could not be queued, or did not leave within
				 * the drain bound: the connection was reset */
				if (!uq->qp.term_received && (uq->qp.term_abandoned || id->was_reset))
					id->term_flags |= UIW_CM_TERM_RESET;
				id->term[0] = t->layer;
				id->term[1] = t->etype;
				id->term[2] = t->ecode;
			}
			id_event(id, UIW_CM_EVENT_DISCONNECTED,
				 id->term_flags ? -ECONNABORTED : 0, NULL, 0);
		}
		pthread_cond_broadcast(&ctx->cond);
		if (!id->user_owned)
			return 1;
	}
	return 0;
}

static void handle_cqe(struct uiw_engine *eng, struct io_uring_cqe *cqe)
{
	struct uiw_op *op = io_uring_cqe_get_data(cqe);

	if (!op)
		return; /* a cancel request */
	eng->nbusy--;
	if (op->kind != UIW_OP_EFD)
		engine_mark(op->id);
	switch (op->kind) {
	case UIW_OP_EFD:
		eng->efd_busy = 0;
		break;
	case UIW_OP_RX:
		on_rx(op->id, cqe->res);
		id_io_sync(op->id);
		break;
	case UIW_OP_TX:
		on_tx(op->id, cqe->res);
		id_io_sync(op->id);
		break;
	case UIW_OP_MISC:
		on_misc(op->id, cqe->res);
		break;
	case UIW_OP_POLL:
		/* readable (or closed): read now, not in the next turn */
		op->id->poll_busy = 0;
		if (!op->id->rx_busy && !op->id->rx_done && op->id->fd >= 0 && direct_ok(op->id))
			rx_direct(op->id);
		break;
	}
}

/*
 * Service the ids of @eng that need it (lock held): every one when a full
 * scan was asked for (engine_wake()) or a deadline is due, else only the
 * ids marked since (completions of their I/O, posted work requests).  A
 * full scan costs one id_service() per connection: with 1024 connections on
 * a context, doing it on every turn made the engine O(connections) per
 * completion.  @deadline gets the earliest deadline seen; eng->timer_due
 * remembers it for the turns that do not look at every id.
 */
static void service_ids(struct uiw_engine *eng, uint64_t now, uint64_t *deadline)
{
	struct uiw_context *ctx = eng->ctx;
	struct uiw_cm_id **pp, *list;

	if (__atomic_exchange_n(&eng->all_dirty, 0, __ATOMIC_ACQ_REL) || now >= eng->timer_due) {
		while ((list = eng->dirty)) {
			eng->dirty = list->dirty_next;
			list->dirty = 0;
		}
		for (pp = &ctx->ids; *pp;) {
			struct uiw_cm_id *id = *pp;

			if (id->eng == eng && id_service(id, now, deadline)) {
				*pp = id->next;
				engine_unmark(id);
				id_free(id);
			} else {
				pp = &id->next;
			}
		}
		eng->timer_due = *deadline;
		return;
	}
	list = eng->dirty;
	eng->dirty = NULL;
	while (list) {
		struct uiw_cm_id *id = list;

		list = id->dirty_next;
		id->dirty = 0;
		if (id_service(id, now, deadline)) {
			for (pp = &ctx->ids; *pp && *pp != id; pp = &(*pp)->next)
				;
			if (*pp)
				*pp = id->next;
			engine_unmark(id);
			id_free(id);
		}
	}
	if (*deadline < eng->timer_due)
		eng->timer_due = *deadline;
	if (eng->timer_due < *deadline)
		*deadline = eng->timer_due;
}

/*
 * One turn of @eng (context lock held): service its ids, submit, wait up to
 * @timeout_ns for a completion (0: do not wait; UINT64_MAX: until one comes)
 * with the lock released, then handle what came.  Only one thread turns an
 * engine at a time: a caller that finds it busy returns at once (polled
 * mode with several threads).
 */
static void eng_run(struct uiw_engine *eng, uint64_t timeout_ns)
{
	struct uiw_context *ctx = eng->ctx;
	uint64_t now = engine_now_ns(), deadline = UINT64_MAX;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned head, seen = 0;

	if (eng->running)
		return;
	if (eng->ring_disabled) {
		/* the first thread to turn the engine becomes the ring's only
		 * submitter (IORING_SETUP_SINGLE_ISSUER) */
		if (syscall(__NR_io_uring_register, eng->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
			    NULL, 0) < 0)
			return;
		eng->ring_disabled = 0;
		eng->issuer = pthread_self();
		eng->has_issuer = 1;
	} else if (eng->has_issuer && !pthread_equal(eng->issuer, pthread_self())) {
		return; /* polled mode: another thread owns the ring */
	}
	eng->running = 1;
	eng->spinning = timeout_ns == 0;
	eng->progressed = 0;
	service_ids(eng, now, &deadline);
	/* direct reads and sends (polled) made progress in the service pass
	 * itself, where completions may have come: do not wait for I/O now */
	if (eng->progressed)
		deadline = now;
	if (ctx->attr.mode != UIW_CTX_POLLED && !eng->efd_busy && (sqe = get_sqe(eng))) {
		io_uring_prep_read(sqe, eng->efd, &eng->efd_buf, sizeof(eng->efd_buf), 0);
		sqe_op(eng, sqe, &eng->efd_op);
		eng->efd_busy = 1;
	}
	if (timeout_ns != UINT64_MAX && (deadline == UINT64_MAX || deadline > now + timeout_ns))
		deadline = now + timeout_ns;
	__atomic_store_n(&eng->kicked, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&eng->in_wait, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ctx->lock);
	if (deadline <= now) {
		/* submit and run pending task work, no wait: in one enter,
		 * so that deferred work never stays queued (a registered
		 * eventfd is signalled only when the queue was empty) */
		if (!eng->spinning || io_uring_sq_ready(&eng->ring) || eng->nbusy)
			io_uring_submit_and_get_events(&eng->ring);
		/* else: nothing to submit and nothing in flight (a polled
		 * context reading and sending directly): no enter at all, a
		 * busy-polling turn is then one recvmsg() per connection */
	} else if (deadline != UINT64_MAX) {
		uint64_t d = deadline - now;
		struct __kernel_timespec ts = {.tv_sec = (long long)(d / 1000000000ull),
					       .tv_nsec = (long long)(d % 1000000000ull)};

		io_uring_submit_and_wait_timeout(&eng->ring, &cqe, 1, &ts, NULL);
	} else {
		io_uring_submit_and_wait(&eng->ring, 1);
	}
	__atomic_store_n(&eng->in_wait, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&ctx->lock);
	io_uring_for_each_cqe(&eng->ring, head, cqe)
	{
		handle_cqe(eng, cqe);
		seen++;
	}
	io_uring_cq_advance(&eng->ring, seen);
	eng->running = 0;
	/* uiw_dereg_mr()/uiw_modify_qp() wait for I/O to end: tell them */
	if (ctx->fence_waiters)
		pthread_cond_broadcast(&ctx->cond);
	if (seen && ctx->attr.mode == UIW_CTX_POLLED && ctx->efd_exported) {
		/* What came is acted on (the next reads posted, sends made) by
		 * the next turn, which submits it together with whatever the
		 * application posts meanwhile: submitting the re-armed reads
		 * here put a read attempt and a poll arm (~0.9 us measured)
		 * between a message's arrival and the application's answer.
		 * An application that sleeps on uiw_context_fd() is told to
		 * turn the engine again. */
		uint64_t one = 1;

		if (write(eng->efd, &one, sizeof(one)) < 0)
			return; /* saturated: it is readable anyway */
	}
}

void engine_run(struct uiw_context *ctx, uint64_t timeout_ns)
{
	eng_run(&ctx->eng[0], timeout_ns);
}

/* polled: the engine is being turned, or belongs to another thread */
int engine_polled_busy(const struct uiw_context *ctx)
{
	const struct uiw_engine *eng = &ctx->eng[0];

	return eng->running || (eng->has_issuer && !pthread_equal(eng->issuer, pthread_self()));
}

struct timespec engine_realtime_after(long ns)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ns;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

/* Wait on the context's condition variable (lock held), or in polled mode
 * turn the engine meanwhile.  @dl: absolute CLOCK_REALTIME deadline or NULL. */
int engine_wait(struct uiw_context *ctx, const struct timespec *dl)
{
	if (ctx->attr.mode == UIW_CTX_POLLED && !engine_polled_busy(ctx)) {
		struct timespec now;
		uint64_t wait = 10000000ull; /* re-check conditions every 10 ms */

		if (dl) {
			int64_t left;

			clock_gettime(CLOCK_REALTIME, &now);
			left = (int64_t)(dl->tv_sec - now.tv_sec) * 1000000000ll +
			       (dl->tv_nsec - now.tv_nsec);
			if (left <= 0)
				return ETIMEDOUT;
			if ((uint64_t)left < wait)
				wait = (uint64_t)left;
		}
		engine_run(ctx, wait);
		return 0;
	}
	if (ctx->attr.mode == UIW_CTX_POLLED) {
		/* another thread turns the engine: sleep briefly */
		struct timespec t = engine_realtime_after(1000000L);

		if (dl && (dl->tv_sec < t.tv_sec || (dl->tv_sec == t.tv_sec && dl->tv_nsec < t.tv_nsec)))
			t = *dl;
		return pthread_cond_timedwait(&ctx->cond, &ctx->lock, &t);
	}
	if (dl)
		return pthread_cond_timedwait(&ctx->cond, &ctx->lock, dl);
	return pthread_cond_wait(&ctx->cond, &ctx->lock);
}

static void *engine_main(void *arg)
{
	struct uiw_engine *eng = arg;
	struct uiw_context *ctx = eng->ctx;

	pthread_mutex_lock(&ctx->lock);
	while (!ctx->stop) {
		eng_run(eng, UINT64_MAX);
		if (eng->ring_disabled) {
			/* the ring could not be enabled (the turn did nothing):
			 * do not spin holding the lock; retry in 100 ms */
			struct timespec t = engine_realtime_after(100000000L);

			pthread_cond_timedwait(&ctx->cond, &ctx->lock, &t);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

static void eng_destroy(struct uiw_engine *eng)
{
	/* Closing the ring cancels and waits for whatever was still in
	 * flight, so it goes before the memory those operations use. */
	io_uring_queue_exit(&eng->ring);
	close(eng->efd);
}

static int eng_init(struct uiw_context *ctx, struct uiw_engine *eng)
{
	int ret;

	eng->ctx = ctx;
	eng->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (eng->efd < 0)
		return -errno;
	eng->efd_op.kind = UIW_OP_EFD;
	/* One thread submits (the progress thread, or in polled mode the
	 * application's): completions are then run as deferred task work when
	 * that thread asks for events, without the cross-CPU locking and
	 * wake-ups of the default mode.  Older kernels: plain ring. */
	ret = io_uring_queue_init(UIW_RING_DEPTH, &eng->ring,
				  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
					  IORING_SETUP_R_DISABLED);
	if (ret == -EINVAL)
		ret = io_uring_queue_init(UIW_RING_DEPTH, &eng->ring, 0);
	else if (!ret)
		eng->ring_disabled = 1; /* the issuer enables it on its first turn */
	if (ret)
		close(eng->efd);
	return ret;
}

int engine_start(struct uiw_context *ctx)
{
	unsigned n = ctx->attr.engine_threads ? ctx->attr.engine_threads : 1, i;
	int ret;

	ctx->eng = calloc(n, sizeof(*ctx->eng));
	if (!ctx->eng)
		return -ENOMEM;
	ctx->cm_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (ctx->cm_efd < 0) {
		ret = -errno;
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		ret = eng_init(ctx, &ctx->eng[i]);
		if (ret)
			goto out_eng;
	}
	ctx->neng = n;
	if (ctx->attr.mode == UIW_CTX_POLLED)
		return 0;
	for (i = 0; i < n; i++) {
		ret = -pthread_create(&ctx->eng[i].thread, NULL, engine_main, &ctx->eng[i]);
		if (ret) {
			engine_stop(ctx); /* joins the threads started */
			return ret;
		}
		ctx->eng[i].started = 1;
	}
	return 0;
out_eng:
	while (i--)
		eng_destroy(&ctx->eng[i]);
	close(ctx->cm_efd);
out_free:
	free(ctx->eng);
	ctx->eng = NULL;
	return ret;
}

void engine_stop(struct uiw_context *ctx)
{
	struct uiw_cm_id *id;

	pthread_mutex_lock(&ctx->lock);
	ctx->stop = 1;
	pthread_mutex_unlock(&ctx->lock);
	for (unsigned i = 0; i < ctx->neng; i++) {
		if (!ctx->eng[i].started)
			continue;
		engine_kick(&ctx->eng[i]);
		pthread_join(ctx->eng[i].thread, NULL);
	}
	for (unsigned i = 0; i < ctx->neng; i++)
		eng_destroy(&ctx->eng[i]);
	/* ids the application never saw (handshakes in progress) */
	while ((id = ctx->ids)) {
		ctx->ids = id->next;
		if (id->fd >= 0)
			close(id->fd);
		id_free(id);
	}
	close(ctx->cm_efd);
	free(ctx->eng);
	ctx->eng = NULL;
	ctx->neng = 0;
}

/* ---- connection manager API ---------------------------------------------- */

int uiw_create_id(struct uiw_context *ctx, void *context, struct uiw_cm_id **out)
{
	struct uiw_cm_id *id = id_alloc();

	*out = NULL;
	if (!id)
		return -ENOMEM;
	id->ctx = ctx;
	id->context = context;
	id->user_owned = 1;
	id_init_ops(id);
	pthread_mutex_lock(&ctx->lock);
	id->eng = engine_pick(ctx);
	id->next = ctx->ids;
	ctx->ids = id;
	ctx->nid++;
	pthread_mutex_unlock(&ctx->lock);
	*out = id;
	return 0;
}

void *uiw_id_context(struct uiw_cm_id *id)
{
	return id->context;
}

int uiw_destroy_id(struct uiw_cm_id *id)
{
	struct uiw_context *ctx = id->ctx;
	struct uiw_ev_node **pe;
	struct uiw_cm_id **pp;

	struct timespec dl;
	int graceful;

	pthread_mutex_lock(&ctx->lock);
	id->destroying = 1;
	/* a Reject still being sent goes out first (bounded: 2 s) */
	graceful = id->state == UIW_ID_CLOSING && id->close_after_tx && !id->tx_shut && !id->qp;
	dl = engine_realtime_after(2000000000L);
	if (id->fd >= 0 && !graceful) {
		if (id->state == UIW_ID_LISTEN) {
			shutdown(id->fd, SHUT_RDWR);
			if (id->misc_busy)
				id->cancel_misc = 1;
		} else {
			id_abort(id);
		}
	}
	if (id->state == UIW_ID_LISTEN) {
		/* handshakes it accepted that the application never saw end too */
		for (struct uiw_cm_id *c = ctx->ids; c; c = c->next)
			if (c->listener == id && !c->user_owned && c->fd >= 0)
				id_abort(c);
	}
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	pthread_mutex_lock(&ctx->lock);
	while (id->fd >= 0) {
		if (engine_wait(ctx, graceful ? &dl : NULL) == ETIMEDOUT && graceful) {
			graceful = 0;
			id_abort(id);
			pthread_mutex_unlock(&ctx->lock);
			engine_wake(ctx);
			pthread_mutex_lock(&ctx->lock);
		}
	}
	for (pp = &ctx->ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	}
	engine_unmark(id);
	/* events naming this id would dangle */
	for (pe = &ctx->ev_head; *pe;) {
		struct uiw_ev_node *e = *pe;

		if (e->ev.id == id) {
			uint64_t v;

			*pe = e->next;
			free(e);
			if (read(ctx->cm_efd, &v, sizeof(v)) < 0) {
				/* nonblocking; one unit per queued event */
			}
		} else {
			if (e->ev.listen_id == id)
				e->ev.listen_id = NULL;
			pe = &e->next;
		}
	}
	ctx->ev_tail = &ctx->ev_head;
	while (*ctx->ev_tail)
		ctx->ev_tail = &(*ctx->ev_tail)->next;
	for (struct uiw_cm_id *c = ctx->ids; c; c = c->next)
		if (c->listener == id)
			c->listener = NULL;
	if (id->qp) {
		/* the QP keeps working state only; it must not reach the MPA conn */
		if (id->qp->qp.state != RDMAP_QPS_IDLE)
			rdmap_qp_conn_failed(&id->qp->qp, -ENOTCONN);
		id->qp->id = NULL;
		id->qp->qp.mpa = NULL;
	}
	ctx->nid--;
	pthread_mutex_unlock(&ctx->lock);
	id_free(id);
	return 0;
}

/* getaddrinfo()'s failure as -errno: a name that does not resolve is -ENXIO,
 * a temporary failure of the resolver -EAGAIN (never -EHOSTUNREACH, which
 * is a routing failure) */
static int gai_errno(int r)
{
	switch (r) {
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -ENXIO;
	case EAI_AGAIN:
		return -EAGAIN;
	default:
		return -ENXIO;
	}
}

/*
 * @host:@port into @ss (getaddrinfo: literals and names; the first result);
 * with @alt, the further results (up to UIW_ADDR_MAX in all) into *@alt
 * (malloc'd, NULL when none) and their count into *@nalt.
 */
#define UIW_ADDR_MAX 16
static int resolve_addr(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss,
			socklen_t *len, struct sockaddr_storage **alt, unsigned *nalt)
{
	struct addrinfo hints, *res = NULL;
	char serv[8];
	int r;

	if (alt) {
		*alt = NULL;
		*nalt = 0;
	}
	memset(ss, 0, sizeof(*ss));
	if (!host || !*host) {
		/* any address: IPv6 dual-stack when the host has IPv6, else IPv4 */
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0) {
			close(fd);
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_any;
			s6->sin6_port = htons(port);
			*len = sizeof(*s6);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
			s4->sin_port = htons(port);
			*len = sizeof(*s4);
		}
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(serv, sizeof(serv), "%u", (unsigned)port);
	errno = 0;
	r = getaddrinfo(host, serv, &hints, &res);
	if (r)
		return gai_errno(r);
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	if (alt) {
		unsigned n = 0;

		for (struct addrinfo *ai = res->ai_next; ai && n < UIW_ADDR_MAX - 1; ai = ai->ai_next)
			n += ai->ai_addrlen <= sizeof(*ss);
		if (n && !(*alt = calloc(n, sizeof(**alt)))) {
			freeaddrinfo(res);
			return -ENOMEM;
		}
		n = 0;
		for (struct addrinfo *ai = res->ai_next; ai && n < UIW_ADDR_MAX - 1; ai = ai->ai_next)
			if (ai->ai_addrlen <= sizeof(*ss))
				memcpy(&(*alt)[n++], ai->ai_addr, ai->ai_addrlen);
		*nalt = n;
	}
	freeaddrinfo(res);
	return 0;
}

static uint16_t ss_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

int uiw_listen(struct uiw_cm_id *id, const char *host, uint16_t port, int backlog)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa;
	socklen_t len;
	int fd, one = 1, zero = 0, ret;

	ret = resolve_addr(host, port, 1, &sa, &len, NULL, NULL);
	if (ret)
		return ret;
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa.ss_family == AF_INET6 && (!host || !*host))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, backlog)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	pthread_mutex_lock(&ctx->lock);
	if (id->state != UIW_ID_IDLE || id->fd >= 0) {
		pthread_mutex_unlock(&ctx->lock);
		close(fd);
		return -EINVAL;
	}
	id->fd = fd;
	id->port = ss_port(&sa);
	id->pending_max = backlog > 0 && backlog < UIW_HS_PENDING_MAX ? (unsigned)backlog
								       : UIW_HS_PENDING_MAX;
	id->state = UIW_ID_LISTEN;
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	return 0;
}

uint16_t uiw_get_port(struct uiw_cm_id *id)
{
	uint16_t p;

	pthread_mutex_lock(&id->ctx->lock);
	p = id->port;
	pthread_mutex_unlock(&id->ctx->lock);
	return p;
}

int uiw_connect(struct uiw_cm_id *id, const char *host, uint16_t port, struct uiw_qp *qp,
		const struct uiw_conn_param *param)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa, *alt = NULL;
	socklen_t salen;
	unsigned nalt = 0;
	int fd, ret;

	if (!host || !qp || qp->ctx != ctx)
		return -EINVAL;
	if (param && param->private_data_len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (param && param->private_data_len && !param->private_data)
		return -EINVAL;
	if (param) {
		/* the context's cap on PD_Length, less RFC 6581's IRD/ORD words */
		unsigned cap = ctx->attr.pd_max ? ctx->attr.pd_max : MPA_PD_MAX;

		if (ctx->attr.mpa_rev != 1)
			cap = cap > 8 ? cap - 8 : 0;
		if (param->private_data_len > cap)
			return -EMSGSIZE;
	}
	ret = resolve_addr(host, port, 0, &sa, &salen, &alt, &nalt);
	if (ret)
		return ret;
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		free(alt);
		return ret;
	}
	sock_user_timeout(ctx, fd); /* bounds the SYN retries too */
	pthread_mutex_lock(&ctx->lock);
	if (id->state != UIW_ID_IDLE || id->fd >= 0 || qp->id || qp->qp.state != RDMAP_QPS_IDLE) {
		pthread_mutex_unlock(&ctx->lock);
		close(fd);
		free(alt);
		return -EINVAL;
	}
	id->fd = fd;
	id->addr = sa;
	id->addrlen = salen;
	free(id->alt);
	id->alt = alt;
	id->nalt = nalt;
	id->ialt = 0;
	id->qp = qp;
	qp->id = id;
	if (param) {
		/* MPA announces what the QP serves, lowered to the application's
		 * wish (RFC 6581 §9.1); the QP checks the same at bind time. */
		if (param->responder_resources && param->responder_resources < qp->qp.cfg.ird)
			qp->qp.cfg.ird = param->responder_resources;
		if (param->initiator_depth && param->initiator_depth < qp->qp.cfg.ord)
			qp->qp.cfg.ord = param->initiator_depth;
		id->conn_pd_len = param->private_data_len;
		if (param->private_data_len)
			memcpy(id->conn_pd, param->private_data, param->private_data_len);
	}
	id->state = UIW_ID_TCP_CONNECTING;
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	return 0;
}

int uiw_accept(struct uiw_cm_id *id, struct uiw_qp *qp, const struct uiw_conn_param *param)
{
	struct uiw_context *ctx = id->ctx;
	const void *pd = NULL;
	size_t pd_len = 0;
	uint16_t ird, ord;
	int ret;

	if (param && param->private_data_len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (param && param->private_data_len && !param->private_data)
		return -EINVAL;
	if (param) {
		pd = param->private_data;
		pd_len = param->private_data_len;
	}
	pthread_mutex_lock(&ctx->lock);
	if (id->state != UIW_ID_REQ || !qp || qp->ctx != ctx || qp->id ||
	    qp->qp.state != RDMAP_QPS_IDLE) {
		ret = -EINVAL;
		goto out_unlock;
	}
	ird = qp->qp.cfg.ird;
	ord = qp->qp.cfg.ord;
	if (param && param->responder_resources && param->responder_resources < ird)
		ird = param->responder_resources;
	if (param && param->initiator_depth && param->initiator_depth < ord)
		ord = param->initiator_depth;
	ret = mpa_conn_accept(&id->mpa, pd, pd_len, ird, ord, engine_now_ns());
	if (ret)
		goto out_unlock;
	/* the QP serves what was announced (RFC 6581 §9.1) */
	qp->qp.cfg.ird = ird;
	qp->qp.cfg.ord = ord;
	id->qp = qp;
	qp->id = id;
	ret = rdmap_qp_bind(&qp->qp, &id->mpa);
	if (ret) {
		/* -ECONNABORTED: the QP sends MPA's TERMINATE, then we close */
		id->rx_discard = 1;
		id->state = UIW_ID_CLOSING;
		if (ret != -ECONNABORTED)
			id_abort(id);
		goto out_unlock;
	}
	id->state = UIW_ID_UP;
	id->established = 1;
	id_event(id, UIW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
out_unlock:
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	return ret;
}

int uiw_reject(struct uiw_cm_id *id, const void *pd, uint16_t len)
{
	struct uiw_context *ctx = id->ctx;
	int ret;

	if (len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (len && !pd)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (id->state != UIW_ID_REQ) {
		ret = -EINVAL;
	} else {
		ret = mpa_conn_reject(&id->mpa, pd, len);
		if (!ret) {
			/* MPA exits once the Reject is sent (RFC 5044 §7.1.2) */
			id->rx_done = 1;
			id->close_after_tx = 1;
			id->state = UIW_ID_CLOSING;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	return ret;
}

int uiw_disconnect(struct uiw_cm_id *id)
{
	struct uiw_context *ctx = id->ctx;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (id->state != UIW_ID_UP || !id->qp) {
		ret = -EINVAL;
	} else {
		rdmap_qp_close(&id->qp->qp);
		id->state = UIW_ID_CLOSING;
	}
	pthread_mutex_unlock(&ctx->lock);
	engine_wake(ctx);
	return ret;
}

int uiw_get_cm_event(struct uiw_context *ctx, struct uiw_cm_event *ev, int timeout_ms)
{
	struct timespec dl;
	struct uiw_ev_node *e;
	int ret = 0;

	if (!ev)
		return -EINVAL;
	dl = engine_realtime_after(timeout_ms > 0 ? (long)timeout_ms * 1000000L : 0);
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->ev_head && ctx->attr.mode == UIW_CTX_POLLED)
		engine_run(ctx, 0);
	while (!ctx->ev_head && !ret) {
		if (timeout_ms < 0)
			engine_wait(ctx, NULL);
		else if (timeout_ms == 0)
			ret = -ETIMEDOUT;
		else if (engine_wait(ctx, &dl) == ETIMEDOUT)
			ret = ctx->ev_head ? 0 : -ETIMEDOUT;
	}
	if (!ret) {
		uint64_t v;

		if (read(ctx->cm_efd, &v, sizeof(v)) < 0) {
			/* nonblocking; one unit per queued event */
		}
		e = ctx->ev_head;
		ctx->ev_head = e->next;
		if (!ctx->ev_head)
			ctx->ev_tail = &ctx->ev_head;
		*ev = e->ev;
		free(e);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int uiw_progress(struct uiw_context *ctx, int timeout_ms)
{
	int ret = 0;

	if (ctx->attr.mode != UIW_CTX_POLLED)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (engine_polled_busy(ctx)) {
		ret = -EBUSY;
	} else {
		if (ctx->efd_exported) {
			uint64_t v;

			/* the readiness of uiw_context_fd() is consumed here:
			 * what it announced is taken by this turn */
			if (read(ctx->eng[0].efd, &v, sizeof(v)) < 0)
				v = 0; /* EAGAIN: nothing was announced */
		}
		engine_run(ctx, timeout_ms < 0 ? UINT64_MAX : (uint64_t)timeout_ms * 1000000ull);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int uiw_context_fd(struct uiw_context *ctx)
{
	int ret;

	if (ctx->attr.mode != UIW_CTX_POLLED)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->efd_exported) {
		ret = ctx->eng[0].efd;
	} else if (!ctx->eng[0].ring_disabled && engine_polled_busy(ctx)) {
		ret = -EBUSY; /* only the ring's submitter may register */
	} else {
		/* the kernel signals a registered eventfd when a completion is
		 * posted and, with DEFER_TASKRUN, when deferred completion
		 * work is queued for the submitter (Linux 6.1 and later) */
		ret = io_uring_register_eventfd(&ctx->eng[0].ring, ctx->eng[0].efd);
		if (!ret) {
			ctx->efd_exported = 1;
			ret = ctx->eng[0].efd;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int uiw_cm_event_fd(struct uiw_context *ctx)
{
	return ctx->cm_efd;
}

const char *uiw_event_str(enum uiw_cm_event_type ev)
{
	switch (ev) {
	case UIW_CM_EVENT_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case UIW_CM_EVENT_CONNECT_ERROR:
		return "CONNECT_ERROR";
	case UIW_CM_EVENT_UNREACHABLE:
		return "UNREACHABLE";
	case UIW_CM_EVENT_REJECTED:
		return "REJECTED";
	case UIW_CM_EVENT_ESTABLISHED:
		return "ESTABLISHED";
	case UIW_CM_EVENT_DISCONNECTED:
		return "DISCONNECTED";
	}
	return "?";
}
