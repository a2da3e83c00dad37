/* SPDX-License-Identifier: MIT */
/*
 * The engine: the only code of uiwarp that touches sockets.  A context has
 * one engine (attr.engine_threads: several), each a progress thread (or,
 * polled, the application's thread) running an io_uring loop for the
 * connections it was given.  It moves octets and performs what each
 * connection's state machine asks for (uiw_conn_want(): iovecs to read
 * into, iovecs to send, shutdown, reset, close, the next deadline); it
 * decides nothing about a connection's life.  Per connection it keeps at
 * most:
 *
 *  - on an established connection, direct non-blocking recvmsg() into the
 *    iovecs MPA lends (payload lands straight in registered memory, what
 *    follows it in the connection's look-ahead, deframed by copy) and a
 *    one-shot IORING_OP_POLL_ADD when the socket is empty (direct_ok());
 *    before that (the handshake), one IORING_OP_READV;
 *  - one IORING_OP_SENDMSG (MPA's queued FPDUs: what a direct sendmsg()
 *    left) and one control operation (IORING_OP_ACCEPT on a listener,
 *    IORING_OP_CONNECT on an initiator);
 *  - an IORING_OP_READ on an eventfd that the application's calls write to
 *    when they need the engine (a post to a connection while the engine
 *    waits in its ring, CM calls; receives posted to a connected QP do not);
 *  - the connection's deadlines (handshake, hold, drain, linger) bound the
 *    wait (io_uring_submit_and_wait_timeout(), CLOCK_MONOTONIC).
 *
 * The engine's lock is held while the thread runs the state machines and
 * released while it waits in the ring (docs/LOCKING.md); meanwhile an
 * application thread that polls or waits may take it and run a turn of
 * direct I/O itself (engine_app_turn(), engine_app_wait()).  Teardown: an id's socket is closed
 * only when no SQE of it is in flight, so no kernel operation ever outlives
 * the memory it uses.  The same holds for application memory (docs/API.md,
 * the memory contract): a QP is told when a read lent its memory or a send
 * of its FPDUs is in flight (id_io_sync()), flushes only once that ended,
 * and a failing QP's I/O is cancelled so that it ends within one turn.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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

/* ---- locks (docs/LOCKING.md) ---------------------------------------------- */

void eng_lock(struct uiw_engine *eng)
{
	lk_note_eng(eng->idx);
	pthread_mutex_lock(&eng->lock);
}

void eng_unlock(struct uiw_engine *eng)
{
	lk_unnote_eng(eng->idx);
	pthread_mutex_unlock(&eng->lock);
}

/* (@id's engine's lock held) @id joins its engine's list */
static void eng_add_id(struct uiw_cm_id *id)
{
	id->next = id->eng->ids;
	id->eng->ids = id;
}

/* (@eng's lock held) the ids other engines accepted for it join its list */
static void eng_take_inbox(struct uiw_engine *eng)
{
	struct uiw_cm_id *id;

	if (!__atomic_load_n(&eng->inbox_n, __ATOMIC_ACQUIRE))
		return;
	lk_lock(&eng->inbox_lock, UIW_LK_INBOX);
	while ((id = eng->inbox)) {
		eng->inbox = id->next;
		eng_add_id(id);
		engine_mark(id);
	}
	__atomic_store_n(&eng->inbox_n, 0, __ATOMIC_RELEASE);
	lk_unlock(&eng->inbox_lock, UIW_LK_INBOX);
}

static void eng_lock_all(struct uiw_context *ctx)
{
	for (unsigned i = 0; i < ctx->neng; i++) {
		eng_lock(&ctx->eng[i]);
		eng_take_inbox(&ctx->eng[i]);
	}
}

static void eng_unlock_all(struct uiw_context *ctx)
{
	for (unsigned i = ctx->neng; i--;)
		eng_unlock(&ctx->eng[i]);
}

void ctx_lock_all(struct uiw_context *ctx)
{
	lk_lock(&ctx->lock, UIW_LK_CTX);
	eng_lock_all(ctx);
}

void ctx_unlock_all(struct uiw_context *ctx)
{
	eng_unlock_all(ctx);
	lk_unlock(&ctx->lock, UIW_LK_CTX);
}

struct uiw_engine *qp_lock(struct uiw_qp *qp)
{
	for (;;) {
		struct uiw_engine *eng = __atomic_load_n(&qp->eng, __ATOMIC_ACQUIRE);

		eng_lock(eng);
		/* uiw_connect()/uiw_accept() move a QP to its connection's
		 * engine, holding every engine's lock: once this one is held
		 * the QP cannot move */
		if (__atomic_load_n(&qp->eng, __ATOMIC_RELAXED) == eng)
			return eng;
		eng_unlock(eng);
	}
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
 * (@eng's lock held) Does @eng's thread need a kick to see what was just marked?
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

struct uiw_engine *engine_pick(struct uiw_context *ctx)
{
	return &ctx->eng[__atomic_fetch_add(&ctx->next_eng, 1, __ATOMIC_RELAXED) % ctx->neng];
}

/* (its engine's lock held) take @id off the dirty list before it is freed */
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

/* (ctx_lock_all() held) a new id: the engine that serves it for its life,
 * round-robin, and on its list */
void engine_id_fresh(struct uiw_cm_id *id)
{
	id->eng = engine_pick(id->ctx);
	eng_add_id(id);
}

/* (its engine's lock held) @id is about to be freed: off its engine's
 * lists (by the CM, or by the engine for an id the application never saw) */
void engine_id_gone(struct uiw_cm_id *id)
{
	struct uiw_cm_id **pp;

	for (pp = &id->eng->ids; *pp; pp = &(*pp)->next)
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	engine_unmark(id);
}

/* ---- completions -------------------------------------------------------- */

static void on_rx(struct uiw_cm_id *id, int res)
{
	int cancelled = id->rx_cancel;

	id->rx_busy = 0;
	id->rx_app = 0;
	id->rx_cancel = 0;
	if (id->closing)
		return; /* the connection is over: the octets go nowhere */
	/* cancelled because the QP is failing: nothing was read; the next
	 * read goes where the connection says then */
	if (res == -ECANCELED && cancelled)
		return;
	if (res > 0) {
		size_t left = (size_t)res;
		const struct iovec *iov = id->conn.rx_iov;

		for (int i = 0; i < id->rx_niov && left; i++) {
			size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;

			UIW_MEM_DEFINED(iov[i].iov_base, k);
			left -= k;
		}
	}
	uiw_conn_on_read(&id->conn, engine_now_ns(), res);
}

static void on_tx(struct uiw_cm_id *id, int res)
{
	int cancelled = id->tx_cancel;

	id->tx_busy = 0;
	id->tx_cancel = 0;
	/* cancelled: nothing of it was sent, the FPDUs are no longer lent and
	 * the QP may now cut its queue for the TERMINATE */
	if (res == -ECANCELED && cancelled)
		res = 0;
	uiw_conn_on_sent(&id->conn, engine_now_ns(), res);
}

/* TCP_NODELAY: FPDUs are whole messages, nothing waits for more */
static void sock_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void on_accepted(struct uiw_cm_id *id, int res)
{
	struct uiw_context *ctx = id->ctx;
	struct uiw_cm_id *c;
	struct uiw_engine *other;

	if (res < 0 || id->destroying) {
		if (res >= 0)
			close(res);
		else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM)
			/* out of fds or memory: the connection stays in the
			 * backlog; retry later, do not spin */
			id->accept_after = engine_now_ns() + UIW_ACCEPT_BACKOFF_NS;
		return;
	}
	c = cm_id_alloc(ctx);
	if (!c) {
		close(res);
		id->accept_after = engine_now_ns() + UIW_ACCEPT_BACKOFF_NS;
		return;
	}
	c->eng = engine_pick(ctx);
	c->fd = res;
	c->listener = id;
	c->pending = 1;
	__atomic_add_fetch(&id->npending, 1, __ATOMIC_RELAXED);
	cm_id_set_channel(c, id->ch); /* its events go where its listener's do */
	cm_sock_addrs(c);
	sock_nodelay(res);
	cm_sock_user_timeout(ctx, res);
	if (cm_conn_accepted(c, engine_now_ns())) {
		close(res);
		c->fd = -1;
		cm_pending_done(c);
		cm_id_free(c);
		return;
	}
	if (c->eng == id->eng) {
		eng_add_id(c);
		engine_mark(c);
		return;
	}
	/* another engine's: its lock cannot be taken under this one's (the
	 * order is by index), so it is handed over; its first I/O goes on its
	 * own ring.  Once the inbox lock is released @c belongs to that
	 * engine, which may take it, find its peer gone and free it before
	 * this thread runs again: nothing of @c is read after the unlock. */
	other = c->eng;
	lk_lock(&other->inbox_lock, UIW_LK_INBOX);
	c->next = other->inbox;
	other->inbox = c;
	__atomic_store_n(&other->inbox_n, 1, __ATOMIC_RELEASE);
	lk_unlock(&other->inbox_lock, UIW_LK_INBOX);
	engine_kick(other);
}

static void on_misc(struct uiw_cm_id *id, int res)
{
	uint32_t emss = 0;

	id->misc_busy = 0;
	id->misc_cancel = 0;
	if (id->state == UIW_ID_LISTEN) {
		on_accepted(id, res);
		return;
	}
	if (id->state != UIW_ID_CONN || id->conn.state != UIW_CONN_CONNECTING)
		return;
	while (res < 0 && id->ialt < id->nalt) {
		/* the name resolved to further addresses: try the next one
		 * (a new socket: the family may differ; one that differs from
		 * a bound source address is skipped); id_service() starts its
		 * connect */
		const struct sockaddr_storage *a = &id->alt[id->ialt++];
		int fd = cm_conn_socket(id, a);

		if (fd >= 0) {
			close(id->fd);
			id->fd = fd;
			id->addr = *a;
			id->addrlen = cm_sa_len(a);
			return;
		}
	}
	if (res >= 0) {
		cm_sock_addrs(id);
		sock_nodelay(id->fd);
		emss = cm_sock_emss(id->fd); /* the FPDU size follows it (RFC 5044 §8) */
	}
	uiw_conn_on_connected(&id->conn, engine_now_ns(), res < 0 ? res : 0, emss);
}

/* ---- per-id service ----------------------------------------------------- */

static struct io_uring_sqe *get_sqe(struct uiw_engine *eng)
{
	struct io_uring_sqe *sqe;

	/* an application turn: the ring is the progress thread's (its only
	 * submitter, and it may be flushing the queue right now, outside the
	 * lock); it is kicked at the end of the turn to do what needed it */
	if (eng->app_turn) {
		eng->ring_wanted = 1;
		return NULL;
	}
	sqe = io_uring_get_sqe(&eng->ring);
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
	return (id->tx_busy && mpa_iov_overlaps(id->conn.tx_iov, id->tx_niov, lo, hi)) ||
	       (id->rx_busy && id->rx_app && mpa_iov_overlaps(id->conn.rx_iov, id->rx_niov, lo, hi));
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

/*
 * Established connections are read and sent directly: a non-blocking
 * recvmsg()/sendmsg() when the engine turns, as a TCP application would,
 * instead of an IORING_OP_READV that the kernel runs as task work when data
 * arrives and an IORING_OP_SENDMSG issued by the next io_uring_enter().  A
 * turn that neither submits nor has anything in flight then makes no
 * io_uring_enter() at all; and any thread holding the engine's lock may do
 * it, so an application's thread runs the engine itself
 * (engine_app_turn()) without touching the ring, which only the progress
 * thread may.  Measured (polled mode, where it began): the 8-byte Send half
 * round trip 4.35 -> 3.7-4.1 us (TCP busy-poll 3.06).  A send the socket
 * does not take whole goes by io_uring (which waits for room); a turn that
 * waits (not a spinning one) arms a one-shot IORING_OP_POLL_ADD when the
 * socket is empty, and its completion reads at once.  No read holds
 * application memory once the lock is released.  Not with an exported
 * context fd (uiw_context_fd(): the application sleeps on it and
 * completions must announce data), nor in the handshake or once the
 * connection failed or sent its FIN.
 */
static int direct_ok(const struct uiw_cm_id *id)
{
	enum uiw_conn_state s = id->conn.state;

	return !id->ctx->efd_exported && id->state == UIW_ID_CONN && !id->closing &&
	       (s == UIW_CONN_UP || s == UIW_CONN_HELD || s == UIW_CONN_CLOSING);
}

/* @id reads directly from now on: its socket joins the engine's epoll set,
 * which tells application turns what to read and what to sleep on */
static void ep_add(struct uiw_cm_id *id)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = id};

	if (!id->in_ep && !epoll_ctl(id->eng->epfd, EPOLL_CTL_ADD, id->fd, &ev))
		id->in_ep = 1;
}

/* @id no longer reads (its connection is over): out of the set before its
 * socket and the id go (a readable socket nobody reads would wake the
 * set's sleepers for ever) */
static void ep_del(struct uiw_cm_id *id)
{
	if (id->in_ep)
		epoll_ctl(id->eng->epfd, EPOLL_CTL_DEL, id->fd, NULL);
	id->in_ep = 0;
}

/* Send @w's iovecs: directly (polled) or by io_uring. */
/* @w's iovecs as @id's send message (for a direct send or the ring's). */
static void tx_msg_set(struct uiw_cm_id *id, const struct uiw_conn_want *w)
{
	memset(&id->tx_msg, 0, sizeof(id->tx_msg));
	id->tx_msg.msg_iov = w->tx;
	id->tx_msg.msg_iovlen = (size_t)w->tx_n;
	id->tx_niov = w->tx_n;
}

/* A non-blocking sendmsg() of @id's send message from the calling thread.
 * Returns 1 when it sent or failed (reported to the connection), 0 when the
 * socket had no room (nothing reported: the iovecs are still lent). */
static int tx_direct(struct uiw_cm_id *id, uint64_t now)
{
	ssize_t r = sendmsg(id->fd, &id->tx_msg, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	uiw_conn_on_sent(&id->conn, now, r < 0 ? -errno : r);
	return 1;
}

static void tx_start(struct uiw_cm_id *id, const struct uiw_conn_want *w, uint64_t now)
{
	struct io_uring_sqe *sqe;

	tx_msg_set(id, w);
	/* polled: send now (non-blocking); what the socket does not take
	 * goes by io_uring, which waits for room */
	if (direct_ok(id) && tx_direct(id, now)) {
		engine_mark(id); /* more may be queued: the next turn looks */
		id->eng->progressed = 1;
		return;
	}
	sqe = get_sqe(id->eng);
	if (!sqe) {
		uiw_conn_on_sent(&id->conn, now, 0); /* nothing left: asked again next turn */
		engine_mark(id);
		return;
	}
	io_uring_prep_sendmsg(sqe, id->fd, &id->tx_msg, MSG_NOSIGNAL);
	sqe_op(id->eng, sqe, &id->op_tx);
	id->tx_busy = 1;
	id_io_sync(id);
}

/* Read into @w's iovecs (MPA's lend and the connection's look-ahead),
 * directly (polled) or by io_uring. */
static void rx_start(struct uiw_cm_id *id, const struct uiw_conn_want *w)
{
	struct io_uring_sqe *sqe;
	struct iovec *iov = w->rx;
	int n = w->rx_n;
	/* a read lends application memory only when MPA's cursor is inside a
	 * payload (the lend starts there); one that starts at a header or a
	 * trailer lends the connection's scratch only (the walk stops at the
	 * next header, and the look-ahead is ours), so a failing QP need not
	 * cancel it: a TERMINATE already in the socket is still read (siw's
	 * "no buffer" after fio's Sends, conformance fio-u2s-send) */
	int app = id->conn.mpa.state == MPA_S_FULL && iov[0].iov_base != id->conn.discard &&
		  id->conn.mpa.rx.part == MPA_RXP_PAYLOAD;

	id->rx_niov = n;
	if (direct_ok(id)) {
		struct msghdr mh;
		ssize_t r;

		ep_add(id);
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)n;
		r = recvmsg(id->fd, &mh, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			/* a turn that waits is woken by the poll; a spinning one
			 * (uiw_poll_cq) tries again, and arms nothing: the poll's
			 * wake-up would cost the sender's side of every message */
			if (!id->poll_busy && !id->eng->spinning && !id->eng->apps_active &&
			    (sqe = get_sqe(id->eng))) {
				io_uring_prep_poll_add(sqe, id->fd, POLLIN);
				sqe_op(id->eng, sqe, &id->op_poll);
				id->poll_busy = 1;
			}
			/* the engine's own turns look again next turn; an
			 * application turn learns from the epoll set when there
			 * is more, but must not leave a connection that no
			 * poll covers to a progress thread that is not out of
			 * the way (it arms the poll, kicked for it) */
			if (!id->eng->app_turn || !id->in_ep) {
				engine_mark(id);
			} else if (!id->poll_busy && !id->eng->apps_active) {
				engine_mark(id);
				id->eng->ring_wanted = 1;
			}
			return;
		}
		id->rx_reads++;
		id->rx_reads_app += (uint64_t)id->eng->app_turn;
		id->rx_busy = 1; /* as for a read in flight: on_rx() ends it */
		id->eng->progressed = 1;
		on_rx(id, r < 0 ? -errno : (int)r);
		engine_mark(id); /* more may be there, and what came may call for I/O */
		return;
	}
	sqe = get_sqe(id->eng);
	if (!sqe) {
		engine_mark(id);
		return;
	}
	id->rx_reads++;
	io_uring_prep_readv(sqe, id->fd, iov, (unsigned)n, 0);
	sqe_op(id->eng, sqe, &id->op_rx);
	id->rx_busy = 1;
	id->rx_app = app;
	id_io_sync(id);
}

/* The connection is over: end the I/O in flight (the socket's shutdown ends
 * a read and a send, the cancel a connect); the socket is closed once all
 * of it completed.  @reset: SO_LINGER 0 makes the close a RST that frees
 * the kernel's send queue (a peer that stopped reading cannot hold it);
 * then no FIN goes first (a shutdown for writing would send one, and the
 * peer would take the end for a clean close): the read ends by a shutdown
 * for reading only, a send in flight by a cancel. */
static void begin_close(struct uiw_cm_id *id, int reset)
{
	ep_del(id);
	id->closing = 1;
	if (reset) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		setsockopt(id->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		shutdown(id->fd, SHUT_RD);
		if (id->tx_busy)
			op_cancel(id, &id->op_tx, &id->tx_cancel);
	} else {
		shutdown(id->fd, SHUT_RDWR);
	}
	if (id->misc_busy)
		op_cancel(id, &id->op_misc, &id->misc_cancel);
}

/*
 * Before a close that is not a reset: drop what the peer sent that nobody
 * will read.  A TCP socket closed with unread input is reset by the kernel
 * (RFC 2525), and the RST reaches the peer's reader before the FIN that
 * shutdown() already queued: a peer that sent more after our TERMINATE, or
 * before an application's teardown, would see a reset after 0 octets
 * instead of the TERMINATE and the end of the stream.  siw reads its
 * sockets on arrival, so its closes are FINs too.  MSG_TRUNC: TCP discards
 * without copying (the buffer is there for checkers such as valgrind,
 * which take it as written); bounded (1 MiB), as a peer may go on sending.
 */
static void sock_discard_input(int fd)
{
	char sink[16384];

	for (int i = 0; i < 64; i++) {
		ssize_t r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT | MSG_TRUNC);

		if (r <= 0)
			break;
	}
}

/* Perform what the connection wants now; its next deadline into *@deadline. */
static void conn_perform(struct uiw_cm_id *id, uint64_t now, unsigned idle, uint64_t *deadline)
{
	struct uiw_conn_want w;

	uiw_conn_want(&id->conn, now, idle, &w);
	if (w.close) {
		begin_close(id, w.reset);
		return;
	}
	if (w.tx)
		tx_start(id, &w, now);
	if (w.shut_wr)
		shutdown(id->fd, SHUT_WR);
	if (w.rx && !id->closing)
		rx_start(id, &w);
	if (w.deadline < *deadline)
		*deadline = w.deadline;
}

/*
 * (@id's engine's lock held, any thread) Send what @id's connection has queued from the
 * calling thread (the application's, posting), instead of handing it to the
 * engine's thread.  In the progress-thread mode every message cost two
 * cross-thread hand-offs per side: the post kicked the thread, which sent;
 * the thread reaped, which woke the application.  This removes the first.
 * Only a small queue (UIW_SEND_NOW_MAX octets: no large copy into the
 * socket under the engine's lock), with no send in flight, on an
 * established connection, and with plain non-blocking syscalls: the ring
 * belongs to the engine's thread.  Once the socket took the whole queue,
 * RDMAP queues what did not fit in the MPA queue (a post of more WRs than
 * its transmit depth) and that goes too, within the same octet bound: the
 * engine's thread is not woken for it, so nothing else would send it.
 * Returns 1 when the engine's thread must still look at @id (a rest the
 * socket did not take, more than the bound, a close).
 */
int engine_send_now(struct uiw_cm_id *id)
{
	size_t budget = UIW_SEND_NOW_MAX;
	struct uiw_conn_want w;
	struct rdmap_qp *qp;
	uint64_t now;

	if (id->ctx->attr.mode == UIW_CTX_POLLED || id->state != UIW_ID_CONN || id->closing ||
	    id->tx_busy || id->conn.state != UIW_CONN_UP)
		return 1;
	for (;;) {
		size_t pending = mpa_tx_pending_bytes(&id->conn.mpa);

		if (pending > budget)
			return 1;
		budget -= pending;
		now = engine_now_ns();
		uiw_conn_want(&id->conn, now, UIW_CONN_TX_IDLE, &w);
		if (w.close)
			return 1;
		if (w.shut_wr)
			shutdown(id->fd, SHUT_WR);
		if (!w.tx)
			return w.shut_wr || id->conn.state != UIW_CONN_UP;
		tx_msg_set(id, &w);
		if (!tx_direct(id, now)) {
			uiw_conn_on_sent(&id->conn, now, 0); /* the engine's send waits for room */
			return 1;
		}
		if (id->conn.state != UIW_CONN_UP)
			return 1;
		if (mpa_tx_pending_bytes(&id->conn.mpa))
			continue; /* the socket took part: the next try tells */
		qp = id_bound_qp(id);
		if (!qp || rdmap_qp_progress(qp) <= 0)
			return 0;
	}
}

/* Returns 1 when the engine freed @id (an id the application never saw). */
/* The QP is failing and waits for our I/O to end before it flushes (or
 * cuts its queue for the TERMINATE): a peer that stopped reading, or sends
 * nothing more, would hold it there for ever.  Cancel what is in flight;
 * whatever it already moved is accounted when its completion comes. */
static void io_end_for_qp(struct uiw_cm_id *id, struct rdmap_qp *qp)
{
	if (qp->io_busy && (qp->flush_pending || (qp->term_pending && !qp->term_sent))) {
		if (id->tx_busy)
			op_cancel(id, &id->op_tx, &id->tx_cancel);
		if (id->rx_busy && id->rx_app)
			op_cancel(id, &id->op_rx, &id->rx_cancel);
	}
}

static int id_service(struct uiw_cm_id *id, uint64_t now, uint64_t *deadline)
{
	struct io_uring_sqe *sqe;
	struct rdmap_qp *qp = id_bound_qp(id);

	if (id->fd < 0)
		return 0;
	if (id->state == UIW_ID_LISTEN) {
		if (id->destroying) {
			if (id->misc_busy)
				op_cancel(id, &id->op_misc, &id->misc_cancel);
			if (!id->misc_busy) {
				close(id->fd);
				id->fd = -1;
				id->state = UIW_ID_DEAD; /* eng_wake_waiters() tells */
			}
			return 0;
		}
		if (!id->misc_busy && id->accept_after > now) {
			if (id->accept_after < *deadline)
				*deadline = id->accept_after;
			return 0;
		}
		if (!id->misc_busy) {
			/* in the handshake, or waiting for the application's
			 * accept/reject: both hold an fd and an id */
			unsigned pending = __atomic_load_n(&id->npending, __ATOMIC_RELAXED);

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
	if (id->state != UIW_ID_CONN)
		return 0;
	if (id->conn.state == UIW_CONN_CONNECTING) {
		if (!id->misc_busy && (sqe = get_sqe(id->eng))) {
			io_uring_prep_connect(sqe, id->fd, (struct sockaddr *)&id->addr,
					      id->addrlen);
			sqe_op(id->eng, sqe, &id->op_misc);
			id->misc_busy = 1;
		}
		return 0;
	}

	if (qp && !id->closing) {
		/* a CQ of this QP overflowed: the QP goes to error (as with a
		 * verbs CQ error), which closes the connection; one sending a
		 * TERMINATE gets there by itself */
		if ((qp->state == RDMAP_QPS_RTS || qp->state == RDMAP_QPS_CLOSING) &&
		    (__atomic_load_n(&id->qp->send_cq->error, __ATOMIC_RELAXED) ||
		     __atomic_load_n(&id->qp->recv_cq->error, __ATOMIC_RELAXED)))
			rdmap_qp_modify_error(qp);
		rdmap_qp_progress(qp);
		io_end_for_qp(id, qp);
	}
	/* a direct read that brought octets: perform again at once (the next
	 * FPDU is usually there already), not in a turn of its own, which
	 * cost an io_uring_enter() per message (bounded: a peer that keeps
	 * sending) */
	for (int k = 0; k < UIW_READS_PER_SERVICE && !id->closing; k++) {
		uint64_t reads = id->rx_reads;

		conn_perform(id, now,
			     (id->rx_busy ? 0 : UIW_CONN_RX_IDLE) | (id->tx_busy ? 0 : UIW_CONN_TX_IDLE),
			     deadline);
		if (id->rx_reads == reads || !direct_ok(id))
			break;
		now = engine_now_ns();
	}
	if (!id->closing) {
		/* a deadline in there (MPA's wait for the RTR) may have failed
		 * the QP while a read lent it memory */
		if (qp && !id->closing)
			io_end_for_qp(id, qp);
	}

	/* a reset's cancel of the send in flight that found no SQE: again
	 * (the connection, closed, keeps how: begin_close() had @conn.reset) */
	if (id->closing && id->conn.reset && id->tx_busy)
		op_cancel(id, &id->op_tx, &id->tx_cancel);
	/* over: close the socket once nothing is in flight */
	if (id->closing && !inflight(id)) {
		if (!id->conn.reset)
			sock_discard_input(id->fd);
		close(id->fd);
		id->fd = -1;
		id->state = UIW_ID_DEAD;
		if (qp)
			rdmap_qp_conn_failed(qp, -ENOTCONN); /* flush whatever is left */
		cm_conn_closed(id); /* and eng_wake_waiters() tells the waiters */
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
		if (!op->id->rx_busy && op->id->fd >= 0 && direct_ok(op->id)) {
			uint64_t dl = UINT64_MAX; /* the id is marked: its next service sets it */
			int progressed = eng->progressed;

			eng->progressed = 0;
			conn_perform(op->id, engine_now_ns(), UIW_CONN_RX_IDLE, &dl);
			/* an application turn read it first: the wake-up was lost */
			eng->polls_lost = eng->progressed ? 0 : eng->polls_lost + 1;
			eng->progressed |= progressed;
		}
		break;
	}
}

/* id_service(), then count a listener's connection out of its pending
 * ones once it left the handshake and the application's answer */
static int id_service_count(struct uiw_cm_id *id, uint64_t now, uint64_t *deadline)
{
	struct uiw_engine *eng = id->eng;
	int wanted = eng->ring_wanted, freed;

	eng->ring_wanted = 0;
	freed = id_service(id, now, deadline);
	/* an application turn could not do what @id needed of the ring (an
	 * accept, a connect, a cancel, a send the socket did not take): it
	 * stays marked, for the progress thread's next turn */
	if (eng->ring_wanted && !freed)
		engine_mark(id);
	eng->ring_wanted |= wanted;

	if (id->pending && (freed || id->state != UIW_ID_CONN ||
			    (id->conn.state != UIW_CONN_HANDSHAKE && id->conn.state != UIW_CONN_REQUEST)))
		cm_pending_done(id);
	return freed;
}

/*
 * Service the ids of @eng that need it (its lock held): every one when a full
 * scan was asked for (engine_wake()) or a deadline is due, else only the
 * ids marked since (completions of their I/O, posted work requests).  A
 * full scan costs one id_service() per connection: with 1024 connections on
 * a context, doing it on every turn made the engine O(connections) per
 * completion.  @deadline gets the earliest deadline seen; eng->timer_due
 * remembers it for the turns that do not look at every id.
 */
static void service_ids(struct uiw_engine *eng, uint64_t now, uint64_t *deadline)
{
	struct uiw_cm_id **pp, *list;

	if (__atomic_exchange_n(&eng->all_dirty, 0, __ATOMIC_ACQ_REL) || now >= eng->timer_due) {
		while ((list = eng->dirty)) {
			eng->dirty = list->dirty_next;
			list->dirty = 0;
		}
		for (pp = &eng->ids; *pp;) {
			struct uiw_cm_id *id = *pp;

			if (id_service_count(id, now, deadline)) {
				*pp = id->next;
				engine_unmark(id);
				cm_id_free(id);
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
		if (id_service_count(id, now, deadline)) {
			engine_id_gone(id);
			cm_id_free(id);
		}
	}
	if (*deadline < eng->timer_due)
		eng->timer_due = *deadline;
	if (eng->timer_due < *deadline)
		*deadline = eng->timer_due;
}

/* A progress thread about to wait in its ring, its engine's lock released:
 * threads waiting in ctx_wait() for what its last turns did are woken,
 * under the context's lock (their condition was checked under it, so the
 * broadcast cannot fall between their check and their wait).  Polled
 * contexts do not: their waiters turn the engine themselves, or look
 * again within 1 ms (ctx_wait()). */
static void eng_wake_waiters(struct uiw_engine *eng)
{
	struct uiw_context *ctx = eng->ctx;

	if (ctx->attr.mode == UIW_CTX_POLLED || !__atomic_load_n(&ctx->waiters, __ATOMIC_ACQUIRE))
		return;
	lk_lock(&ctx->lock, UIW_LK_CTX);
	pthread_cond_broadcast(&ctx->cond);
	lk_unlock(&ctx->lock, UIW_LK_CTX);
}

/*
 * One turn of @eng (its lock held): service its ids, submit, wait up to
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
	int spin;

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
	if (ctx->attr.mode != UIW_CTX_POLLED) {
		/* application threads turn the engine themselves: arm no
		 * readiness polls, look again when they may have stopped */
		int was = eng->apps_active;

		/* Application threads that poll CQs or wait in
		 * engine_app_wait() read what arrives themselves, and this
		 * thread's readiness polls then find nothing (lost): it stops
		 * arming them while they do.  But a program that spins on
		 * memory between polls (ib_write_lat) needs them, and so does
		 * a receiver whose application is busy with what it got: the
		 * two threads then read and complete in parallel (qperf's
		 * rc_bw, which has no flow control, overran its receiver 3
		 * times in 10 when a waiter kept this thread out regardless).
		 * So only readiness polls lost twice in a row keep them off,
		 * and only while application turns go on (a waiter, or a turn
		 * within UIW_APP_GRACE_NS). */
		__atomic_store_n(&eng->apps_active,
				 eng->polls_lost >= 2 &&
					 (__atomic_load_n(&eng->app_waiters, __ATOMIC_ACQUIRE) ||
					  now - __atomic_load_n(&eng->app_last, __ATOMIC_RELAXED) <
						  UIW_APP_GRACE_NS),
				 __ATOMIC_RELAXED);
		if (was && !eng->apps_active) {
			/* every connection arms its poll again */
			eng->polls_lost = 0;
			__atomic_store_n(&eng->all_dirty, 1, __ATOMIC_RELEASE);
		}
		if (eng->apps_active && timeout_ns > UIW_APP_GRACE_NS)
			timeout_ns = UIW_APP_GRACE_NS;
	}
	eng_take_inbox(eng);
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
	eng->wait_until = deadline;
	__atomic_store_n(&eng->in_wait, 1, __ATOMIC_SEQ_CST);
	/* application turns may run (and change the engine's fields) from
	 * here until the lock is taken back: what the wait needs is copied */
	spin = eng->spinning;
	eng_unlock(eng);
	eng_wake_waiters(eng);
	if (deadline <= now) {
		/* submit and run pending task work, no wait: in one enter,
		 * so that deferred work never stays queued (a registered
		 * eventfd is signalled only when the queue was empty) */
		if (!spin || io_uring_sq_ready(&eng->ring) || eng->nbusy)
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
	eng_lock(eng);
	io_uring_for_each_cqe(&eng->ring, head, cqe)
	{
		handle_cqe(eng, cqe);
		seen++;
	}
	io_uring_cq_advance(&eng->ring, seen);
	eng->running = 0;
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

/*
 * (nothing held) Progress-thread mode: the calling thread polled an empty
 * CQ or waits for a completion; it runs a turn of the engine itself, if it
 * can take the engine without waiting (the progress thread is in its ring,
 * or idle).  The turn is the polled mode's spinning one: direct
 * recvmsg()/sendmsg() on the established connections the epoll set says are
 * readable and those marked, no ring (get_sqe() refuses; what needed it is
 * left marked and the progress thread kicked), no wait.  A busy-polling
 * application then receives, places and completes in its own thread, as a
 * TCP application reads its socket: no hand-off from the progress thread,
 * whose readiness polls stay unarmed while such turns run
 * (UIW_APP_GRACE_NS).  Only with one engine: a CQ may be fed by several.
 * Cancellation is held off for the turn: recvmsg() and write() are
 * cancellation points, and the turn holds the engine's lock (rping cancels
 * its thread in ibv_get_cq_event()).
 */
int engine_app_turn(struct uiw_context *ctx)
{
	struct uiw_engine *eng;
	struct epoll_event ev[64];
	uint64_t now, deadline = UINT64_MAX;
	int kick, spinning, progressed, cs, n;

	if (ctx->attr.mode == UIW_CTX_POLLED || ctx->neng != 1 || ctx->no_app_turns ||
	    __atomic_load_n(&ctx->stop, __ATOMIC_RELAXED))
		return -1;
	eng = &ctx->eng[0];
	if (pthread_mutex_trylock(&eng->lock))
		return -1;
	lk_note_eng(eng->idx);
	/* the progress thread's own turn is running (not its wait), or it has
	 * not enabled its ring yet */
	if ((eng->running && !__atomic_load_n(&eng->in_wait, __ATOMIC_SEQ_CST)) || eng->ring_disabled) {
		eng_unlock(eng);
		return -1;
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	now = engine_now_ns();
	__atomic_store_n(&eng->app_last, now, __ATOMIC_RELAXED);
	spinning = eng->spinning; /* the progress thread's turn, if it waits */
	progressed = eng->progressed;
	eng->app_turn = 1;
	eng->spinning = 1;
	eng->progressed = 0;
	eng->ring_wanted = 0;
	eng_take_inbox(eng);
	/* the set holds established connections only, each removed before
	 * its id can go (ep_del() under this lock) */
	n = epoll_wait(eng->epfd, ev, (int)(sizeof(ev) / sizeof(ev[0])), 0);
	for (int i = 0; i < n; i++)
		engine_mark(ev[i].data.ptr);
	/* until nothing moves: what a read brought may call for a send (a
	 * Read Response), a send that went may let the next FPDUs out; the
	 * progress thread, asleep in its ring, would not look at what is
	 * left marked (bounded: a peer that keeps sending) */
	n = 0;
	for (int pass = 0; pass < UIW_APP_PASSES; pass++) {
		eng->progressed = 0;
		service_ids(eng, pass ? engine_now_ns() : now, &deadline);
		n |= eng->progressed;
		if (!eng->progressed || !eng->dirty)
			break;
	}
	eng->app_turn = 0;
	eng->spinning = spinning;
	eng->progressed = progressed;
	/* the ring is needed (a send the socket did not take, a close, an
	 * accept), work is left, or a deadline comes before the progress
	 * thread would look */
	kick = eng->ring_wanted || eng->dirty || deadline < eng->wait_until;
	if (kick && engine_needs_kick(eng))
		engine_kick(eng);
	eng_unlock(eng);
	eng_wake_waiters(eng);
	pthread_setcancelstate(cs, NULL);
	return n;
}

static void app_wait_end(void *arg)
{
	struct uiw_engine *eng = arg;

	__atomic_sub_fetch(&eng->app_waiters, 1, __ATOMIC_RELEASE);
}

/*
 * (nothing held) Progress-thread mode, a thread about to sleep until @fd (a
 * completion channel's) is readable: a turn of its own, then poll() on @fd
 * and the engine's epoll set, so that the octets of the completion it
 * waits for wake this thread, not the progress thread, which would then
 * wake it (two wake-ups per message where TCP has one).  While it sleeps
 * the progress thread arms no readiness polls.  Bounded (100 ms: deadlines
 * and the progress thread's events are rechecked), and a cancellation point
 * (poll(); nothing is held across it).  Returns 0 after a turn or a sleep
 * (the caller looks at @fd again), 1 when the caller must sleep on @fd
 * alone, as before: several engines, or the set stays readable with
 * nothing for this thread to read (a connection the engine does not read
 * directly; the progress thread is then told to take over at once);
 * -EINTR: a signal ended the wait (eintr_reported()).
 */
/*
 * A signal interrupted the wait.  read(2) on the eventfd, where the thread
 * slept before, is restarted after a handler installed with SA_RESTART
 * (perftest's SIGALRM, by signal()) and fails with EINTR otherwise
 * (qperf's timer ends its wait so); poll() always fails.  Which signal
 * came is not known here: EINTR is reported when some handler of the
 * process lacks SA_RESTART.  Rare (a signal), so the scan's cost does not
 * matter.
 */
static int eintr_reported(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) || (!(sa.sa_flags & SA_SIGINFO) &&
						  (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)))
			continue; /* no handler (or a signal glibc keeps for itself) */
		if (!(sa.sa_flags & SA_RESTART))
			return 1;
	}
	return 0;
}

static int app_wait_loop(struct uiw_context *ctx, struct uiw_engine *eng, int fd)
{
	struct pollfd p[2];
	int r, idle = 0;

	for (;;) {
		/* A turn of its own, and the connections' sockets to sleep on,
		 * only while the progress thread stays out of the way (threads
		 * polling CQs keep reading first).  Otherwise the progress
		 * thread reads and completes and this thread sleeps on @fd
		 * alone, as before engine v3: a waiter that also turned the
		 * engine and woke on every socket fought it for the lock and
		 * the CPU (64 KiB Writes, event mode: 12-20% lost). */
		int out = __atomic_load_n(&eng->apps_active, __ATOMIC_RELAXED);
		int set;

		r = out ? engine_app_turn(ctx) : 0;
		set = out && r >= 0;
		p[0] = (struct pollfd){.fd = fd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = eng->epfd, .events = POLLIN};
		/* the engine busy with another thread's turn: look again soon */
		if (poll(p, set ? 2 : 1, r < 0 ? 1 : 100) < 0)
			return errno == EINTR && eintr_reported() ? -EINTR : 0;
		if (p[0].revents || !set || !(p[1].revents & POLLIN))
			return 0; /* @fd, a timeout or a busy engine: the caller looks */
		if (r > 0)
			idle = 0;
		else if (++idle >= 3)
			return 1;
	}
}

int engine_app_wait(struct uiw_context *ctx, int fd)
{
	struct uiw_engine *eng;
	volatile int ret = 0; /* set between the cleanup push and pop (a setjmp) */

	if (ctx->attr.mode == UIW_CTX_POLLED || ctx->neng != 1 || ctx->no_app_turns)
		return 1;
	eng = &ctx->eng[0];
	__atomic_add_fetch(&eng->app_waiters, 1, __ATOMIC_ACQUIRE);
	pthread_cleanup_push(app_wait_end, eng);
	ret = app_wait_loop(ctx, eng, fd);
	pthread_cleanup_pop(1);
	if (ret == 1) {
		/* readable, and nothing read: the progress thread arms its
		 * polls again and reads (its readiness polls are one-shot) */
		__atomic_store_n(&eng->app_last, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&eng->all_dirty, 1, __ATOMIC_RELEASE);
		engine_kick(eng);
	}
	return ret;
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

int ctx_wait(struct uiw_context *ctx, const struct timespec *dl)
{
	int ret;

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
		/* the engine's lock is held (ctx_lock_all()) */
		engine_run(ctx, wait);
		return 0;
	}
	__atomic_add_fetch(&ctx->waiters, 1, __ATOMIC_ACQ_REL);
	eng_unlock_all(ctx);
	if (ctx->attr.mode == UIW_CTX_POLLED) {
		/* another thread turns the engine: sleep briefly */
		struct timespec t = engine_realtime_after(1000000L);

		if (dl && (dl->tv_sec < t.tv_sec || (dl->tv_sec == t.tv_sec && dl->tv_nsec < t.tv_nsec)))
			t = *dl;
		ret = pthread_cond_timedwait(&ctx->cond, &ctx->lock, &t);
	} else if (dl) {
		ret = pthread_cond_timedwait(&ctx->cond, &ctx->lock, dl);
	} else {
		ret = pthread_cond_wait(&ctx->cond, &ctx->lock);
	}
	__atomic_sub_fetch(&ctx->waiters, 1, __ATOMIC_ACQ_REL);
	eng_lock_all(ctx);
	return ret;
}

/* One thread submits (the progress thread, or in polled mode the
 * application's): completions are then run as deferred task work when that
 * thread asks for events, without the cross-CPU locking and wake-ups of the
 * default mode.  Older kernels: plain ring. */
static int eng_ring_init(struct uiw_engine *eng)
{
	int ret = io_uring_queue_init(UIW_RING_DEPTH, &eng->ring,
				      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
					      IORING_SETUP_R_DISABLED);

	if (ret == -EINVAL)
		ret = io_uring_queue_init(UIW_RING_DEPTH, &eng->ring, 0);
	else if (!ret)
		eng->ring_disabled = 1; /* the issuer enables it on its first turn */
	eng->ring_inited = !ret;
	return ret;
}

/*
 * A progress thread creates its ring, turns it until the context stops, and
 * closes it.  The ring is the thread's from end to end because the kernel
 * notifies the task that created a ring when it is torn down: made by the
 * application's thread, every uiw_close_context() left that thread's next
 * epoll_wait() failing with EINTR (libfabric's event queue wait stopped on
 * it; test verbs_api/test_api_close_no_eintr).
 */
static void *engine_main(void *arg)
{
	struct uiw_engine *eng = arg;
	struct uiw_context *ctx = eng->ctx;
	int ret = eng_ring_init(eng);

	lk_lock(&ctx->lock, UIW_LK_CTX);
	eng->init_ret = ret;
	eng->init_done = 1;
	pthread_cond_broadcast(&ctx->cond);
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	eng_lock(eng);
	while (!ret && !__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE)) {
		eng_run(eng, UINT64_MAX);
		if (eng->ring_disabled) {
			/* the ring could not be enabled (the turn did nothing):
			 * do not spin holding the lock; retry in 100 ms */
			eng_unlock(eng);
			usleep(100000);
			eng_lock(eng);
		}
	}
	eng_unlock(eng);
	/* closing the ring cancels and waits for what is still in flight:
	 * the ids' memory is still there (engine_stop() frees it after) */
	if (eng->ring_inited)
		io_uring_queue_exit(&eng->ring);
	eng->ring_inited = 0;
	return NULL;
}

static void eng_destroy(struct uiw_engine *eng)
{
	/* Closing the ring cancels and waits for whatever was still in
	 * flight, so it goes before the memory those operations use. */
	if (eng->ring_inited)
		io_uring_queue_exit(&eng->ring);
	eng->ring_inited = 0;
	close(eng->efd);
	eng->efd = -1;
	close(eng->epfd);
	eng->epfd = -1;
}

static int eng_init(struct uiw_context *ctx, struct uiw_engine *eng, unsigned idx)
{
	eng->ctx = ctx;
	eng->idx = idx;
	eng->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (eng->efd < 0)
		return -errno;
	eng->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (eng->epfd < 0) {
		int ret = -errno;

		close(eng->efd);
		eng->efd = -1;
		return ret;
	}
	pthread_mutex_init(&eng->lock, NULL);
	pthread_mutex_init(&eng->inbox_lock, NULL);
	eng->efd_op.kind = UIW_OP_EFD;
	return 0;
}

int engine_start(struct uiw_context *ctx)
{
	unsigned n = ctx->attr.engine_threads ? ctx->attr.engine_threads : 1, i;
	sigset_t all, old;
	int ret;

	ctx->eng = calloc(n, sizeof(*ctx->eng));
	if (!ctx->eng)
		return -ENOMEM;
	ctx->evch.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (ctx->evch.efd < 0) {
		ret = -errno;
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		ret = eng_init(ctx, &ctx->eng[i], i);
		if (ret)
			goto out_eng;
	}
	ctx->neng = n;
	/* UIW_APP_TURNS=0: the progress thread alone moves data (as before
	 * engine v3), to measure what application turns bring */
	ctx->no_app_turns = getenv("UIW_APP_TURNS") && !strcmp(getenv("UIW_APP_TURNS"), "0");
	if (ctx->attr.mode == UIW_CTX_POLLED) {
		/* the application's thread is the ring's submitter: its own */
		ret = eng_ring_init(&ctx->eng[0]);
		if (ret) {
			engine_stop(ctx);
			return ret;
		}
		return 0;
	}
	/* the threads start with every signal blocked: a process-directed
	 * signal the application blocks in its own threads and reads from a
	 * signalfd (tgtd's SIGUSR2 from its I/O workers) would otherwise be
	 * delivered to an engine thread, and its default action end the
	 * process */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n; i++) {
		ret = -pthread_create(&ctx->eng[i].thread, NULL, engine_main, &ctx->eng[i]);
		if (ret)
			break;
		ctx->eng[i].started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		engine_stop(ctx); /* joins the threads started */
		return ret;
	}
	/* each thread made its ring: wait for the outcome */
	ret = 0;
	lk_lock(&ctx->lock, UIW_LK_CTX);
	for (i = 0; i < n; i++) {
		while (!ctx->eng[i].init_done)
			pthread_cond_wait(&ctx->cond, &ctx->lock);
		if (ctx->eng[i].init_ret && !ret)
			ret = ctx->eng[i].init_ret;
	}
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	if (ret)
		engine_stop(ctx);
	return ret;
out_eng:
	while (i--) {
		eng_destroy(&ctx->eng[i]);
		pthread_mutex_destroy(&ctx->eng[i].inbox_lock);
		pthread_mutex_destroy(&ctx->eng[i].lock);
	}
	close(ctx->evch.efd);
out_free:
	free(ctx->eng);
	ctx->eng = NULL;
	return ret;
}

void engine_stop(struct uiw_context *ctx)
{
	struct uiw_cm_id *id;

	__atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < ctx->neng; i++) {
		if (!ctx->eng[i].started)
			continue;
		engine_kick(&ctx->eng[i]);
		pthread_join(ctx->eng[i].thread, NULL);
	}
	for (unsigned i = 0; i < ctx->neng; i++)
		eng_destroy(&ctx->eng[i]);
	/* ids the application never saw (handshakes in progress), after the
	 * rings whose operations used them are closed */
	for (unsigned i = 0; i < ctx->neng; i++) {
		struct uiw_engine *eng = &ctx->eng[i];

		for (int inbox = 0; inbox < 2; inbox++) {
			struct uiw_cm_id **list = inbox ? &eng->inbox : &eng->ids;

			while ((id = *list)) {
				*list = id->next;
				if (id->fd >= 0)
					close(id->fd);
				cm_id_free(id);
			}
		}
		pthread_mutex_destroy(&eng->inbox_lock);
		pthread_mutex_destroy(&eng->lock);
	}
	close(ctx->evch.efd);
	free(ctx->eng);
	ctx->eng = NULL;
	ctx->neng = 0;
}

int uiw_progress(struct uiw_context *ctx, int timeout_ms)
{
	int ret = 0;

	if (ctx->attr.mode != UIW_CTX_POLLED)
		return -EINVAL;
	eng_lock(&ctx->eng[0]);
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
	eng_unlock(&ctx->eng[0]);
	return ret;
}

int uiw_context_fd(struct uiw_context *ctx)
{
	int ret;

	if (ctx->attr.mode != UIW_CTX_POLLED)
		return -EINVAL;
	eng_lock(&ctx->eng[0]);
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
	eng_unlock(&ctx->eng[0]);
	return ret;
}

