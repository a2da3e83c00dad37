/* SPDX-License-Identifier: MIT */
/*
 * Internal objects of the verbs shim.  Locks (docs/LOCKING.md, ranks in
 * uiw_lock.h): an engine's lock guards its ids, their connections and the
 * QPs bound to them; the context's lock object lifetimes and the CM calls,
 * which take every engine's lock as well; CQs, completion channels, CM
 * event queues and SRQs have leaf locks.  Only an id's engine thread
 * submits its sockets' I/O (struct uiw_engine).
 */
#ifndef UIW_INT_H
#define UIW_INT_H

#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <time.h>

#include "mpa.h"
#include "rdmap.h"
#include "uiw_conn.h"
#include "uiw_lock.h"
#include "uiw_verbs.h"

enum uiw_op_kind { UIW_OP_RX = 1, UIW_OP_TX, UIW_OP_MISC, UIW_OP_EFD, UIW_OP_POLL };

/* One kind of SQE in flight; its address is the SQE's user_data. */
struct uiw_op {
	enum uiw_op_kind kind;
	struct uiw_cm_id *id;
};

struct uiw_ev_node {
	struct uiw_ev_node *next;
	struct uiw_cm_event ev;
};

/*
 * One engine: an io_uring, the thread that alone submits to it (the
 * progress thread, or in polled mode the application's thread that first
 * turned it) and the connections (ids) it serves.  A context has
 * attr.engine_threads of them (polled: one); every id belongs to one engine
 * for its life (assigned round-robin when it is created or accepted), and
 * only that engine's thread services it and submits its I/O.  Each engine
 * has its own lock: engines run the protocol state machines in parallel.
 */
struct uiw_engine {
	struct uiw_context *ctx;
	unsigned idx;	      /* in ctx->eng[]: the order two engine locks are taken in */
	pthread_mutex_t lock; /* rank UIW_LK_ENG: everything below but the atomics */
	struct uiw_cm_id *ids; /* the ids it serves (linked by ->next) */
	/* ids another engine accepted for it (on_accepted()): moved to @ids
	 * by its next turn, or by ctx_lock_all() */
	pthread_mutex_t inbox_lock; /* rank UIW_LK_INBOX */
	struct uiw_cm_id *inbox;
	int inbox_n; /* atomic: @inbox is not empty */
	struct io_uring ring;
	int efd; /* written to wake the thread (engine_kick()) */
	uint64_t efd_buf;
	struct uiw_op efd_op;
	int efd_busy;
	pthread_t thread;
	int started; /* @thread runs */
	int spinning; /* this turn does not wait (timeout 0) */
	int progressed; /* this turn's service read or sent directly */
	unsigned nbusy; /* SQEs with an op whose completion has not come */
	/* ids to service on the next turn (engine_mark()); every id of this
	 * engine is serviced when @all_dirty is set (engine_wake(): an API
	 * call that may touch any id) or when @timer_due passed (the earliest
	 * deadline an id asked for when it was last serviced) */
	struct uiw_cm_id *dirty;
	int all_dirty; /* atomic: set by engine_wake() from any thread */
	uint64_t timer_due;
	int running;	   /* a thread is inside its turn (eng_run()) */
	/* atomic: 1 from just before the thread releases its lock to wait in
	 * its ring until that wait returned; a post made while it is 0 is
	 * seen by the thread's next service pass and needs no kick */
	int in_wait;
	int kicked; /* atomic: a kick was sent during this wait */
	int ring_disabled; /* created R_DISABLED: the first turn enables it */
	int ring_inited;   /* @ring exists (made by the thread that submits to it) */
	int init_done, init_ret; /* progress thread: its ring was made (0) or not (-errno) */
	int has_issuer;	   /* @issuer is the ring's single submitter */
	pthread_t issuer;
	/* Application turns (engine_app_turn(), progress-thread mode): a
	 * thread that polls an empty CQ runs the engine's direct I/O itself
	 * while the progress thread waits in its ring.  @app_turn: such a
	 * turn holds the lock now (the ring is not its to touch: get_sqe()
	 * refuses and sets @ring_wanted, and the progress thread is kicked
	 * at the end of the turn).  While they run, the progress thread arms
	 * no readiness polls (their wake-ups would be one per message again)
	 * and looks every UIW_APP_GRACE_NS.  @wait_until: when the progress
	 * thread's wait ends (UINT64_MAX: a completion or a kick), so that an
	 * application turn that sets an earlier deadline kicks it. */
	int app_turn;
	int ring_wanted;
	uint64_t app_last; /* atomic: engine_now_ns() of the last application turn */
	unsigned app_waiters; /* atomic: threads asleep in engine_app_wait() */
	/* the established connections' sockets (level-triggered EPOLLIN),
	 * for application turns: which to read, and what to sleep on */
	int epfd;
	int apps_active;   /* progress thread: it stays out of their way (eng_run()); written
			    * atomically under the lock, read by waiters without it */
	unsigned polls_lost; /* progress thread: readiness polls in a row an application read first */
	uint64_t wait_until;
};

/* how long the progress thread stays out of the way of application turns
 * after the last one (it then arms readiness polls again) */
#define UIW_APP_GRACE_NS 1000000ull
/* service passes of one application turn at most (engine_app_turn()) */
#define UIW_APP_PASSES 16
/* direct reads of one connection in one service, at most (id_service()) */
#define UIW_READS_PER_SERVICE 8

#define UIW_ENGINES_MAX 64

/* A queue of CM events: the context's own (uiw_get_cm_event()) or one made
 * by uiw_create_event_channel(); every id reports to one (@ch).  The queue
 * has its own lock (rank UIW_LK_EVCH), and its waiters their own condition:
 * an application waiting for a CM event holds no lock another thread needs. */
struct uiw_event_channel {
	struct uiw_context *ctx;
	pthread_mutex_t lock; /* @head, @tail, the eventfd's units */
	pthread_cond_t cond;  /* an event was queued */
	struct uiw_ev_node *head, **tail;
	int efd;       /* events queued (semaphore eventfd: one unit each) */
	unsigned nids; /* atomic: ids that report here */
	struct uiw_event_channel *next; /* ctx->channels (not the context's own) */
};

struct uiw_context {
	struct uiw_context_attr attr; /* MPA options for every connection */
	pthread_mutex_t lock; /* rank UIW_LK_CTX */
	pthread_cond_t cond;  /* (with @lock) ids finished, memory let go, engines started */
	struct ddp_mem mem; /* written under @lock and every engine's; @valid flags atomic */
	struct uiw_engine *eng; /* @neng of them; polled: one */
	unsigned neng;
	unsigned next_eng; /* atomic: round-robin assignment */
	int stop; /* atomic */
	struct uiw_event_channel evch;	   /* the context's own CM event queue */
	struct uiw_event_channel *channels; /* those of uiw_create_event_channel() */
	unsigned npd, ncq, nqp, nch, nsrq;
	unsigned nid; /* atomic: a connection request hands an id to the application */
	int efd_exported; /* polled: eng[0].efd registered with its ring (uiw_context_fd) */
	int no_app_turns; /* UIW_APP_TURNS=0 at open: engine_app_turn() never runs (measuring) */
	/* atomic: threads waiting on @cond for the engines (ctx_wait()): for
	 * connections to let go of memory (uiw_dereg_mr, uiw_modify_qp), for
	 * an id's socket to close (uiw_destroy_id); a progress thread then
	 * broadcasts, under @lock, each time it releases its engine's lock to
	 * wait in its ring */
	unsigned waiters;
	/* the statistics of connections gone (cm_id_free(), by any engine's
	 * thread: atomics) */
	struct uiw_context_stats gone;
};

struct uiw_pd {
	struct uiw_context *ctx;
	struct ddp_pd pd;
};

/* progress-thread mode: uiw_poll_cq() yields the CPU every this many empty polls */
#define UIW_POLL_YIELD 64

/*
 * A CQ has its own lock (rank UIW_LK_CQ, below the context's): a QP's
 * completion is written under its QP's engine's lock and the CQ's, and
 * uiw_poll_cq() and uiw_req_notify_cq() take the CQ's alone, so that an
 * application reaping completions never waits for an engine's turn.
 */
struct uiw_cq {
	struct uiw_context *ctx;
	pthread_mutex_t lock; /* @ring, @head, @count, @overflow, @armed */
	struct uiw_wc *ring;
	unsigned cap, head, count;
	unsigned empty_polls; /* empty uiw_poll_cq() calls (atomic, relaxed) */
	int overflow;
	int error; /* atomic: overflowed once: its QPs are moved to error (sticky) */
	unsigned refs; /* context lock */
	void *cq_context;
	struct uiw_comp_channel *channel;
	int armed;	      /* 0, UIW_ARM_ANY or UIW_ARM_SOLICITED */
	/* the channel's lock (struct uiw_channel_int) guards these three */
	unsigned ev_queued;   /* events in the channel not yet taken */
	unsigned ev_unacked;  /* events taken, not acknowledged */
	struct uiw_cq *ev_next; /* channel's list of CQs with ev_queued */
};

#define UIW_ARM_ANY	  1
#define UIW_ARM_SOLICITED 2

/* The public struct uiw_comp_channel is the first member. */
struct uiw_channel_int {
	struct uiw_comp_channel pub;
	pthread_mutex_t lock; /* rank UIW_LK_CCH: the queue and its CQs' ev_* */
	struct uiw_cq *ev_head, **ev_tail;
};

struct uiw_srq {
	struct uiw_context *ctx;
	pthread_mutex_t lock; /* rank UIW_LK_SRQ: @srq's queue (QPs of any engine take from it) */
	struct uiw_pd *pd;
	struct rdmap_srq srq;
	unsigned max_sge;
	unsigned refs;
};

struct uiw_qp {
	struct uiw_context *ctx;
	struct uiw_srq *srq;
	unsigned max_send_sge, max_recv_sge; /* enforced per WR */
	struct uiw_pd *pd;
	struct uiw_cq *send_cq, *recv_cq;
	struct rdmap_qp qp;
	/* the engine whose lock guards the QP: its connection's (set by
	 * uiw_connect()/uiw_accept() under every engine's lock), before that
	 * one chosen at creation; read without a lock by qp_lock() */
	struct uiw_engine *eng;
	struct uiw_cm_id *id; /* attached connection */
	uint32_t qp_num;      /* 24 bits, unique in the process (uiw_qp_num()) */
	struct uiw_qp *qpn_next; /* the process's table of QP numbers */
	void *context;	      /* the application's (uiw_qp_set_context()): atomic */
};

/* What an id is: the connection's own life is in its struct uiw_conn. */
enum uiw_id_state {
	UIW_ID_IDLE = 0,
	UIW_ID_LISTEN,
	UIW_ID_CONN, /* a connection: @conn decides, the engine performs */
	UIW_ID_DEAD  /* socket closed */
};

/* The most CM events one id reports: a responder's CONNECT_REQUEST,
 * ESTABLISHED and DISCONNECTED (an initiator: ESTABLISHED and DISCONNECTED,
 * or one error event); an id serves one connection. */
#define UIW_ID_EVENTS 3

struct uiw_cm_id {
	struct uiw_context *ctx;
	struct uiw_event_channel *ch; /* where its events go (uiw_migrate_id()) */
	struct uiw_engine *eng; /* the engine that serves it, for its life */
	void *context; /* the application's: atomic (uiw_set_id_context()) */
	struct uiw_cm_id *next;	      /* eng->ids or eng->inbox */
	struct uiw_cm_id *dirty_next; /* in eng->dirty while @dirty */
	int dirty;
	struct uiw_cm_id *listener;
	enum uiw_id_state state;
	uint64_t accept_after; /* listener: no accept before (engine_now_ns) */
	unsigned pending_max;  /* listener: see UIW_HS_PENDING_MAX (from the backlog) */
	/* listener (atomic): connections it accepted still in the handshake
	 * or waiting for the application; each counts itself out once
	 * (@pending), from its own engine */
	unsigned npending;
	int pending;
	int fd;
	uint16_t port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	/* initiator: the local address to connect from (uiw_bind_addr()); srclen 0: the kernel's choice */
	struct sockaddr_storage src;
	socklen_t srclen;
	/* uiw_bind_addr(): the socket bound then (SO_REUSEADDR), kept until
	 * uiw_listen() listens on it or uiw_connect() connects it; -1: none */
	int bfd;
	/* in the process's table of bound ids (uiw_cm.c: btab), from
	 * uiw_bind_addr() or uiw_listen() until the id is freed: @baddr, the
	 * address and port bound, as the kernel's rdma_cm port space */
	int in_btab;
	struct sockaddr_storage baddr;
	/* bound to one address family only (the kernel's afonly): always
	 * for IPv4, for IPv6 as the bound socket's IPV6_V6ONLY; two ids so
	 * bound share a port when their families differ */
	int bafonly;
	/* uiw_set_afonly() was called (the kernel's CMA_OPTION_AFONLY), with
	 * @afonly; else IPv6 follows net.ipv6.bindv6only, as sockets do */
	int afonly_set, afonly;
	struct uiw_cm_id *bnext;
	/* the connection's addresses, recorded when its TCP connection was
	 * made (accepted, or connected) and kept after it ended; a
	 * listener's local address (uiw_get_local_addr/uiw_get_peer_addr) */
	struct sockaddr_storage local, peer;
	int has_local, has_peer;
	/* initiator: the further addresses the host name resolved to, tried in
	 * turn when a TCP connect fails (ialt: the next one) */
	struct sockaddr_storage *alt;
	unsigned nalt, ialt;
	int user_owned; /* the application holds it (else the engine frees it) */
	int destroying;

	/* the connection's life (UIW_ID_CONN): handshake, close, linger,
	 * drain, TERMINATE; its ops (uiw_cm.c) turn what it reports into CM
	 * events and QP transitions */
	struct uiw_conn conn;
	struct uiw_qp *qp;
	/* the connection ended after ESTABLISHED: DISCONNECTED is reported
	 * once the socket is closed and the QP flushed */
	int disc_pending;
	struct uiw_conn_disc disc;

	/* I/O bookkeeping (uiw_engine.c) */
	struct uiw_op op_rx, op_tx, op_misc, op_poll;
	int rx_busy, tx_busy, misc_busy;
	int poll_busy; /* polled direct receive: an IORING_OP_POLL_ADD in flight */
	int in_ep;     /* its socket is in its engine's epoll set (ep_add()) */
	int rx_app;    /* the read in flight was lent application memory (not the discard buffer) */
	int rx_cancel, tx_cancel, misc_cancel; /* an IORING_OP_ASYNC_CANCEL was sent for that op */
	int closing; /* @conn is over: I/O in flight is being ended, then close */
	int rx_niov; /* iovecs of the read in flight (conn.rx_iov) */
	int tx_niov; /* iovecs of the send in flight (conn.tx_iov) */
	struct msghdr tx_msg;
	uint64_t rx_reads, rx_reads_app; /* statistics (uiw_context_stats) */

	/* CM event nodes allocated with the id (UIW_ID_EVENTS), taken by
	 * cm_ev_push(): no event is lost to a failed allocation */
	struct uiw_ev_node *ev_spare;
};

/* The QP bound to @id's connection (its stream is @id's MPA connection), or NULL. */
static inline struct rdmap_qp *id_bound_qp(struct uiw_cm_id *id)
{
	struct uiw_qp *uq = id->qp;

	return uq && uq->qp.state != RDMAP_QPS_IDLE && uq->qp.mpa == &id->conn.mpa ? &uq->qp : NULL;
}

/* Internal entry points: not uiw_-prefixed, so the version script keeps them local. */

/* Locks (uiw_engine.c).  eng_lock(): one engine's.  ctx_lock_all(): the
 * context's, then every engine's in index order, with every engine's inbox
 * moved to its ids: what the CM calls and the calls that change memory or
 * a QP's life hold, so that they see every id and no engine turns
 * meanwhile.  qp_lock(): the engine of @qp, locked (the QP's data path). */
void eng_lock(struct uiw_engine *eng);
void eng_unlock(struct uiw_engine *eng);
void ctx_lock_all(struct uiw_context *ctx);
void ctx_unlock_all(struct uiw_context *ctx);
struct uiw_engine *qp_lock(struct uiw_qp *qp);
/* (ctx_lock_all() held) wait on ctx->cond for the engines, with every
 * engine's lock released meanwhile (a polled context: turn the engine);
 * @dl: absolute CLOCK_REALTIME deadline or NULL.  Returns ETIMEDOUT or 0. */
int ctx_wait(struct uiw_context *ctx, const struct timespec *dl);
/* every id of @ctx (ctx_lock_all() held) */
#define ctx_for_each_id(ctx, i, id)                                                                \
	for (unsigned i = 0; i < (ctx)->neng; i++)                                                  \
		for (struct uiw_cm_id *id = (ctx)->eng[i].ids; id; id = id->next)
/* the engine a new id or QP is served by: round-robin */
struct uiw_engine *engine_pick(struct uiw_context *ctx);
/* a listener's connection left the handshake or the application's answer
 * (or goes): count it out of its listener's npending, once */
void cm_pending_done(struct uiw_cm_id *c);
uint64_t engine_now_ns(void);
void engine_wake(struct uiw_context *ctx);
/* engine_mark() - (@id's engine's lock held) service @id on its engine's next turn;
 * engine_kick() then wakes that engine's progress thread without asking for
 * a full scan (the data path: uiw_post_send).  engine_wake() asks every
 * engine of the context for a full scan. */
void engine_mark(struct uiw_cm_id *id);
void engine_kick(struct uiw_engine *eng);
int engine_needs_kick(struct uiw_engine *eng);
int engine_start(struct uiw_context *ctx);
void engine_stop(struct uiw_context *ctx);
/* polled contexts: turn the context's (only) engine */
void engine_run(struct uiw_context *ctx, uint64_t timeout_ns);
/* (nothing held) progress-thread mode: a turn of direct I/O by the caller
 * (1: it read or sent, 0: nothing to do, -1: the engine was busy) */
int engine_app_turn(struct uiw_context *ctx);
/* (nothing held) progress-thread mode: a turn, then sleep until a
 * connection or @fd is readable (bounded); 1: not possible, sleep on @fd;
 * -EINTR: a signal */
int engine_app_wait(struct uiw_context *ctx, int fd);
int engine_polled_busy(const struct uiw_context *ctx);

/* A listener keeps at most min(backlog, UIW_HS_PENDING_MAX) connections
 * (backlog <= 0: UIW_HS_PENDING_MAX) in the MPA handshake or waiting for the
 * application (CONNECT_REQUEST reported, no uiw_accept()/uiw_reject() yet);
 * beyond it, connections wait in the kernel's backlog.  Bounds the fds and
 * memory a flood of connections can take: those that never finish the
 * handshake (dropped after the handshake timeout) and those that finish it
 * while the application does not answer (kept until it does). */
#define UIW_HS_PENDING_MAX 256
/* after accept() failed for want of fds or memory, retry this much later
 * instead of at once (which would spin) */
#define UIW_ACCEPT_BACKOFF_NS (100 * 1000000ull)
/* (@id's engine's lock held) does @id's kernel I/O in flight use memory in [lo, hi)? */
int engine_inflight_refs(const struct uiw_cm_id *id, uintptr_t lo, uintptr_t hi);
/* CLOCK_REALTIME @ns from now (for pthread_cond_timedwait, engine_wait) */
struct timespec engine_realtime_after(long ns);
/* How long uiw_dereg_mr() and uiw_modify_qp() wait for the engines to let
 * go of memory: cancelling a read or send in flight takes one engine turn */
#define UIW_FENCE_WAIT_NS 2000000000L
extern const struct rdmap_ops verbs_qp_ops;

/* The connection manager (uiw_cm.c) for the engine (the id's engine's lock held). */
/* a zeroed id with its event nodes (NULL: no memory); freed by cm_id_free() */
struct uiw_cm_id *cm_id_alloc(struct uiw_context *ctx);
void cm_id_free(struct uiw_cm_id *id);
/* @id reports to @ch from now on (an accepted id: its listener's) */
void cm_id_set_channel(struct uiw_cm_id *id, struct uiw_event_channel *ch);
/* a connection accepted on @listener: its uiw_conn, started (0 or -errno) */
int cm_conn_accepted(struct uiw_cm_id *id, uint64_t now);
/* the socket of @id was closed and nothing is in flight: report
 * DISCONNECTED if the connection had ended after ESTABLISHED */
void cm_conn_closed(struct uiw_cm_id *id);
/* record the local and peer addresses of @id's connected socket */
/* an event channel of uiw_create_event_channel() goes: its fd, lock and
 * condition, its memory (nothing may be queued or report there) */
void cm_channel_free(struct uiw_event_channel *ch);
void cm_sock_addrs(struct uiw_cm_id *id);
/* TCP socket options of a connection (TCP_USER_TIMEOUT, keepalive) */
void cm_sock_user_timeout(const struct uiw_context *ctx, int fd);
/* the path's MSS of a connected socket (0: unknown): the FPDU size follows it */
uint32_t cm_sock_emss(int fd);
/* the length of an IPv4 or IPv6 socket address, by its family */
socklen_t cm_sa_len(const struct sockaddr_storage *a);
/* a connecting socket for @id's next destination @a: options, and bound to
 * the address of uiw_bind_addr() if any; the fd or -errno */
int cm_conn_socket(const struct uiw_cm_id *id, const struct sockaddr_storage *a);
/* the engine's side of the CM: the id's I/O may start (listener, connect) */
void engine_id_fresh(struct uiw_cm_id *id);
void engine_id_gone(struct uiw_cm_id *id);
/* (@id's engine's lock held, any thread) send @id's small queue now; 1: the engine must look */
int engine_send_now(struct uiw_cm_id *id);
/* the most queued octets engine_send_now() sends from the posting thread */
#define UIW_SEND_NOW_MAX 16384

#endif /* UIW_INT_H */
