/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_xprt.h - the RPC-over-RDMA version 1 transport (RFC 8166, with the
 * RFC 8797 connection private data) over the public uiwarp verbs API
 * (uiw_verbs.h) only: a Requester (client) and a Responder (server) that
 * carry opaque ONC RPC messages.  The RPC layer above (a libtirpc CLIENT or
 * SVCXPRT) encodes and decodes the RPC messages and says which argument and
 * result items are DDP-eligible; this layer chooses the RFC 8166 §3.5
 * message form, registers and exposes memory, moves chunks by RDMA Read and
 * Write, enforces credits and inline thresholds, and validates every
 * transport header it receives with the codec of rpcrdma.h.
 *
 * Everything is asynchronous and driven by a poll function per transport
 * (rpcrdma_clnt_poll(), rpcrdma_svc_poll()) which turns the uiwarp engine
 * and runs the callbacks.  A transport object is used by one thread at a
 * time and takes no locks.  It consumes every CM event of the context it is
 * given: give each requester, and each responder (listener with all its
 * connections), a context of its own.  Polled contexts (UIW_CTX_POLLED) are
 * preferred; progress-thread contexts work too (the poll functions then
 * sleep in poll(2) on a completion channel and the CM event fd).
 *
 * Names are rpcrdma_*: internal to libuiw (the shared library exports
 * uiw_* only); link libuiw.a.  Functions return 0 or -errno.  The full
 * reference is docs/RPCRDMA-transport.md.
 */
#ifndef UIW_RPCRDMA_XPRT_H
#define UIW_RPCRDMA_XPRT_H

#include <stddef.h>
#include <stdint.h>

#include "rpcrdma.h"
#include "uiw_verbs.h"

#define RPCRDMA_XPRT_PORT 20049 /* NFS/RDMA (RFC 5666 §9.1, RFC 8267) */

/* Limits of one call (requester) */
#define RPCRDMA_XPRT_MAX_ARGS	 8 /* DDP-eligible argument items (Read chunks) */
#define RPCRDMA_XPRT_MAX_RESULTS 4 /* result buffers (Write chunks) */
/* Limits of one reply (responder) */
#define RPCRDMA_XPRT_MAX_REPLY_ITEMS 8 /* DDP-eligible result items */
/* Decode caps of a received call (responder); a call above them gets ERR_CHUNK */
#define RPCRDMA_XPRT_MAX_READ_SEGS  16 /* Read list segments */
#define RPCRDMA_XPRT_MAX_WRITE	    4  /* Write chunks */
#define RPCRDMA_XPRT_MAX_SEGS	    32 /* segments of all Write chunks and the Reply chunk */
#define RPCRDMA_XPRT_MAX_CHUNK_SEGS 16 /* segments in one Write or Reply chunk */

#define RPCRDMA_XPRT_CREDITS_MAX 256

/* struct rpcrdma_xprt_opts.flags */
#define RPCRDMA_XO_NO_CM_PD	 0x1 /* send no RFC 8797 private data (peer assumes 1024/1024, no R) */
#define RPCRDMA_XO_NO_REMOTE_INV 0x2 /* clear R: never use/accept to use Send with Invalidate */
#define RPCRDMA_XO_NO_QUEUE	 0x4 /* requester: refuse calls beyond the credits with -EAGAIN */

/**
 * struct rpcrdma_xprt_opts - settings; NULL or zero fields take the defaults.
 * @inline_send:   largest message this side Sends, announced in RFC 8797
 *                 data (1024..262144, rounded down to KiB; default 4096)
 * @inline_recv:   size of the Receives this side posts, announced likewise
 *                 (default 4096)
 * @credits:       requester: calls in flight at most (slots; the credit
 *                 value requested); responder: Receives posted per
 *                 connection, the most it can ever grant (1..256, default 32)
 * @grant:         responder: credits granted at first (1..@credits,
 *                 default @credits); see rpcrdma_svc_set_grant()
 * @queue_max:     requester: calls waiting for a credit (default 256);
 *                 beyond it rpcrdma_clnt_call() returns -EAGAIN
 * @ddp_threshold: requester: an argument item shorter than this goes
 *                 inline when the call then still fits (default 1024)
 * @max_call:      responder: largest call, unreduced, it assembles
 *                 (default 1 MiB + 4 KiB); beyond it ERR_CHUNK
 * @max_reply:     responder: largest reduced reply or result item it
 *                 stages (default @max_call); beyond it ERR_CHUNK
 * @max_conns:     responder: connections at once (default 64); more are rejected
 * @connect_timeout_ms: requester: connection setup bound (default 10000)
 * @flags:         RPCRDMA_XO_*
 */
struct rpcrdma_xprt_opts {
	uint32_t inline_send;
	uint32_t inline_recv;
	uint32_t credits;
	uint32_t grant;
	uint32_t queue_max;
	uint32_t ddp_threshold;
	uint64_t max_call;
	uint64_t max_reply;
	uint32_t max_conns;
	int connect_timeout_ms;
	unsigned flags;
};

/**
 * struct rpcrdma_xprt_info - what a connection negotiated, and counters.
 * Requester: of its connection (counters survive reconnects).  Responder:
 * rpcrdma_svc_conn_info() of one connection, rpcrdma_svc_info() totals of
 * every connection so far (negotiated fields of the newest).
 * @connected:       the connection is up (svc_info: connections up)
 * @inline_send:     negotiated: largest message we Send
 * @inline_recv:     negotiated: largest message the peer Sends us
 * @credits:         requester: last grant received (1 before the first
 *                   reply); responder: the value granted now
 * @remote_inv:      both advertised R: replies may use Send with Invalidate
 * @peer_pd:         the peer sent valid RFC 8797 private data
 * @peer:            what it sent (the RFC 8797 §5.1 defaults when none)
 * @outstanding:     requester: calls sent, not answered; responder: calls
 *                   received, not answered
 * @queued:          requester: calls waiting for a credit
 * @max_outstanding: high-water mark of @outstanding
 * @connects:        connections established
 * @calls:           calls sent (requester) / handed up (responder)
 * @replies:         replies received / sent, RDMA_ERROR not included
 * @short_msgs, @chunked_msgs, @long_msgs: requester: calls by form;
 *                   responder: replies (inline, inline + Write chunks, Long)
 * @errors_sent, @err_vers_sent, @err_chunk_sent: responder: RDMA_ERROR sent
 * @errors_recv:     requester: RDMA_ERROR received
 * @discards:        messages dropped silently (RFC 8166 §4.5)
 * @unknown_xid:     requester: replies for no outstanding call (also in
 *                   @discards)
 * @read_bytes:      octets in Read chunks (exposed / pulled)
 * @write_bytes:     octets in Write chunks (reported written / written)
 * @reply_chunk_bytes: octets in Reply chunks
 * @inv_sent:        responder: replies sent with Send with Invalidate
 * @inv_recv:        requester: replies that invalidated one of the call's STags
 * @mr_regs:         requester: chunk registrations
 */
struct rpcrdma_xprt_info {
	int connected;
	uint32_t inline_send;
	uint32_t inline_recv;
	uint32_t credits;
	int remote_inv;
	int peer_pd;
	struct rpcrdma_cm_pd peer;
	uint32_t outstanding;
	uint32_t queued;
	uint32_t max_outstanding;
	uint64_t connects;
	uint64_t calls;
	uint64_t replies;
	uint64_t short_msgs, chunked_msgs, long_msgs;
	uint64_t errors_sent, err_vers_sent, err_chunk_sent;
	uint64_t errors_recv;
	uint64_t discards;
	uint64_t unknown_xid;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t reply_chunk_bytes;
	uint64_t inv_sent;
	uint64_t inv_recv;
	uint64_t mr_regs;
};

/* ------------------------------------------------------------------ */
/* Requester */

struct rpcrdma_clnt;

/** struct rpcrdma_item - a DDP-eligible XDR data item. */
struct rpcrdma_item {
	uint32_t position; /* XDR offset in the unreduced stream, multiple of 4 */
	const void *buf;
	uint32_t len; /* encoded length, without XDR roundup */
};

/** struct rpcrdma_rbuf - memory for a DDP-eligible result (a Write chunk). */
struct rpcrdma_rbuf {
	void *buf;
	uint32_t len; /* capacity; 0: an empty Write chunk (the result comes inline) */
};

/* struct rpcrdma_call.form */
#define RPCRDMA_FORM_SHORT	 0x1  /* call sent inline, no Read chunk */
#define RPCRDMA_FORM_CHUNKED	 0x2  /* call sent inline with Read chunks */
#define RPCRDMA_FORM_LONG	 0x4  /* RDMA_NOMSG, Position Zero Read chunk */
#define RPCRDMA_FORM_REPLY_OFFER 0x8  /* a Reply chunk was provided */
#define RPCRDMA_FORM_LONG_REPLY	 0x10 /* the reply came in the Reply chunk */
#define RPCRDMA_FORM_INVALIDATED 0x20 /* the reply invalidated one of the call's STags */

/**
 * struct rpcrdma_call - one RPC transaction, owned by the caller; give it to
 * rpcrdma_clnt_call() and leave it (and every buffer it names) alone until
 * @done runs.  No allocation per call: the transport links it in place.
 * Set by the caller:
 * @msg, @msg_len:   the RPC call message, XDR, reduced (without the items
 *                   in @args); its first 4 octets are the XID (RFC 8166 §4.2.1)
 * @args, @nargs:    DDP-eligible argument items, in increasing position
 *                   (at most RPCRDMA_XPRT_MAX_ARGS)
 * @results, @nresults: result buffers, one Write chunk each, in the order
 *                   of the DDP-eligible results of the reply (at most
 *                   RPCRDMA_XPRT_MAX_RESULTS)
 * @reply, @reply_cap: where the reply message goes (the reduced reply)
 * @done:            completion callback (run from rpcrdma_clnt_poll(),
 *                   rpcrdma_clnt_reconnect() or rpcrdma_clnt_destroy())
 * @arg:             the caller's
 * Set on completion:
 * @status:          0, or -errno (docs/RPCRDMA-transport.md): -EREMOTEIO
 *                   RDMA_ERROR ERR_CHUNK, -EPROTONOSUPPORT RDMA_ERROR
 *                   ERR_VERS, -EMSGSIZE reply larger than @reply_cap
 *                   (@reply_len says how large), -ECONNRESET connection
 *                   lost with the call outstanding, -ECANCELED transport
 *                   destroyed, or the error of sending a queued call
 * @xid:             the XID
 * @reply_len:       octets of the reply in @reply
 * @result_len:      octets the Responder wrote into each Write chunk
 * @rdma_err, @vers_low, @vers_high: an RDMA_ERROR's contents
 * @form:            RPCRDMA_FORM_* (how it went)
 */
struct rpcrdma_call {
	const void *msg;
	uint32_t msg_len;
	const struct rpcrdma_item *args;
	uint32_t nargs;
	const struct rpcrdma_rbuf *results;
	uint32_t nresults;
	void *reply;
	uint32_t reply_cap;
	void (*done)(struct rpcrdma_call *call);
	void *arg;

	int status;
	uint32_t xid;
	uint32_t reply_len;
	uint32_t result_len[RPCRDMA_XPRT_MAX_RESULTS];
	uint32_t rdma_err, vers_low, vers_high;
	unsigned form;

	/* private to the transport */
	struct rpcrdma_call *q_next;
	int q_slot;
};

enum rpcrdma_clnt_state {
	RPCRDMA_CLNT_CONNECTING = 0,
	RPCRDMA_CLNT_UP = 1,
	RPCRDMA_CLNT_DOWN = 2 /* failed or lost: rpcrdma_clnt_reconnect() */
};

/**
 * rpcrdma_clnt_create() - a requester on @ctx that connects to @host:@port
 * (0: 20049), sending RFC 8797 private data.  Returns at once; the
 * connection comes up in rpcrdma_clnt_poll() (calls may be issued before:
 * they wait).  Returns 0 with *@out set, -EINVAL (bad @opts), -ENOMEM, or
 * the error of a verbs call (uiw_connect(): -EHOSTUNREACH, ...).
 */
int rpcrdma_clnt_create(struct uiw_context *ctx, const char *host, uint16_t port,
			const struct rpcrdma_xprt_opts *opts, struct rpcrdma_clnt **out);

/**
 * rpcrdma_clnt_call() - start @call.  Sent now if connected and a credit and
 * a slot are free, else queued (FIFO).  Returns 0 (@call->done will run),
 * -EINVAL (bad message or items), -ENOTCONN (connection down), -EAGAIN
 * (queue full, or no credit with RPCRDMA_XO_NO_QUEUE), -EMSGSIZE (the call
 * cannot be sent in any form), or the -errno of a registration or post
 * (then @done will not run).
 */
int rpcrdma_clnt_call(struct rpcrdma_clnt *c, struct rpcrdma_call *call);

/**
 * rpcrdma_clnt_call_sync() - rpcrdma_clnt_call() and poll until it is done
 * (overwrites @call->done and @call->arg).  After @timeout_ms (-1: none)
 * the connection is reset (rpcrdma_clnt_reconnect()) to take the call back
 * and -ETIMEDOUT is returned.  Returns @call->status or a submit error.
 */
int rpcrdma_clnt_call_sync(struct rpcrdma_clnt *c, struct rpcrdma_call *call, int timeout_ms);

/**
 * rpcrdma_clnt_poll() - turn the engine (waiting up to @timeout_ms, 0: not,
 * -1: until something happens) and process what came: CM events,
 * replies, completions, queued calls; run callbacks.  Returns the number
 * of events handled (>= 0), or -EBUSY (another thread owns the polled
 * context).
 */
int rpcrdma_clnt_poll(struct rpcrdma_clnt *c, int timeout_ms);

/** rpcrdma_clnt_state() - RPCRDMA_CLNT_*; rpcrdma_clnt_error() the -errno of the last failure. */
enum rpcrdma_clnt_state rpcrdma_clnt_state(const struct rpcrdma_clnt *c);
int rpcrdma_clnt_error(const struct rpcrdma_clnt *c);

/**
 * rpcrdma_clnt_reconnect() - tear the connection down (calls outstanding
 * complete with -ECONNRESET, queued ones stay queued) and connect again;
 * the settings are renegotiated from the new peer's private data.
 * Returns 0 (connecting), or as rpcrdma_clnt_create().
 */
int rpcrdma_clnt_reconnect(struct rpcrdma_clnt *c);

/** rpcrdma_clnt_info() - negotiated values and counters. */
void rpcrdma_clnt_info(const struct rpcrdma_clnt *c, struct rpcrdma_xprt_info *info);

/**
 * rpcrdma_clnt_destroy() - close and free @c; calls not yet done complete
 * with -ECANCELED first.  The context stays the caller's.
 */
void rpcrdma_clnt_destroy(struct rpcrdma_clnt *c);

/* ------------------------------------------------------------------ */
/* Responder */

struct rpcrdma_svc;
struct rpcrdma_svc_conn;

/**
 * struct rpcrdma_svc_req - one call being served.  Read-only for the upper
 * layer except @user.  Valid from the call callback until
 * rpcrdma_svc_reply() or rpcrdma_svc_drop() returns; @msg until then too.
 * @conn:       its connection
 * @xid:        the XID
 * @msg, @msg_len: the call, contiguous and unreduced (Read chunks pulled
 *              and reinserted at their positions, XDR roundup restored)
 * @nwrite:     Write chunks the Requester provided (DDP-eligible results
 *              beyond them go inline)
 * @write_cap:  their capacities (0: an empty Write chunk)
 * @reply_chunk, @reply_cap: a Reply chunk exists, its capacity
 * @reply_inline_max: largest reduced reply that goes inline
 * @user:       the upper layer's
 */
struct rpcrdma_svc_req {
	struct rpcrdma_svc_conn *conn;
	uint32_t xid;
	const uint8_t *msg;
	uint32_t msg_len;
	uint32_t nwrite;
	uint64_t write_cap[RPCRDMA_XPRT_MAX_WRITE];
	int reply_chunk;
	uint64_t reply_cap;
	uint32_t reply_inline_max;
	void *user;
};

/**
 * struct rpcrdma_svc_ops - callbacks of a responder, run from
 * rpcrdma_svc_poll().
 * @call: a call arrived; answer with rpcrdma_svc_reply() (now or later)
 *        or rpcrdma_svc_drop()
 * @conn: a connection came up (@up 1) or went down (0); may be NULL
 */
struct rpcrdma_svc_ops {
	void (*call)(struct rpcrdma_svc_req *req, void *arg);
	void (*conn)(struct rpcrdma_svc_conn *conn, int up, void *arg);
};

/**
 * rpcrdma_svc_create() - a responder listening on @host (NULL: any):@port
 * (0: the kernel chooses, see rpcrdma_svc_port()) in @ctx.  Returns 0,
 * -EINVAL (bad @opts, no @ops->call), -ENOMEM, or uiw_listen()'s error.
 */
int rpcrdma_svc_create(struct uiw_context *ctx, const char *host, uint16_t port,
		       const struct rpcrdma_xprt_opts *opts, const struct rpcrdma_svc_ops *ops,
		       void *arg, struct rpcrdma_svc **out);

/** rpcrdma_svc_port() - the port it listens on. */
uint16_t rpcrdma_svc_port(const struct rpcrdma_svc *s);

/**
 * rpcrdma_svc_poll() - as rpcrdma_clnt_poll() for the listener and every
 * connection.  Returns events handled (>= 0), or -EBUSY.
 */
int rpcrdma_svc_poll(struct rpcrdma_svc *s, int timeout_ms);

/**
 * rpcrdma_svc_reply() - answer @req with the reduced reply @msg (@len
 * octets; its XID first) and the DDP-eligible result items @items (in
 * position order).  Items go by RDMA Write into the Requester's Write
 * chunks in order, inline when it provided no (or an empty) chunk for
 * them; the message goes inline, or into the Reply chunk (RDMA_NOMSG) when
 * larger than the reply inline threshold.  Everything is copied before
 * it returns.  Returns 0; -EINVAL (XID differs, bad items: @req stays
 * valid); otherwise @req is finished: -EMSGSIZE (fits nowhere: RDMA_ERROR
 * ERR_CHUNK was sent instead, RFC 8166 §4.5.3), -ENOTCONN (connection
 * gone), -ENOMEM, or a post error (the connection is closed, §4.5.4).
 */
int rpcrdma_svc_reply(struct rpcrdma_svc_req *req, const void *msg, uint32_t len,
		      const struct rpcrdma_item *items, uint32_t nitems);

/** rpcrdma_svc_drop() - finish @req without a reply (the credit stays used
 * at the Requester until it reconnects).  Returns 0. */
int rpcrdma_svc_drop(struct rpcrdma_svc_req *req);

/**
 * rpcrdma_svc_set_grant() - credits granted in replies from now on, on
 * every connection (1..opts.credits).  Returns 0 or -EINVAL.
 */
int rpcrdma_svc_set_grant(struct rpcrdma_svc *s, uint32_t grant);

/** rpcrdma_svc_close() - close @conn (abortively); it goes down in the next poll. */
void rpcrdma_svc_close(struct rpcrdma_svc_conn *conn);

/** rpcrdma_svc_info(), rpcrdma_svc_conn_info() - see struct rpcrdma_xprt_info. */
void rpcrdma_svc_info(const struct rpcrdma_svc *s, struct rpcrdma_xprt_info *info);
void rpcrdma_svc_conn_info(const struct rpcrdma_svc_conn *conn, struct rpcrdma_xprt_info *info);

/**
 * rpcrdma_svc_destroy() - close every connection and the listener and free
 * @s.  Returns 0, or -EBUSY while a request handed to @ops->call is neither
 * replied nor dropped (nothing is freed).
 */
int rpcrdma_svc_destroy(struct rpcrdma_svc *s);

#endif /* UIW_RPCRDMA_XPRT_H */
