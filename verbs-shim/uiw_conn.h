/* SPDX-License-Identifier: MIT */
/*
 * uiw_conn: the life of one iWARP connection (TCP connect result, MPA
 * handshake, full operation, graceful and abortive close, linger, drain,
 * TERMINATE) as a sans-I/O state machine.  No sockets, clocks, threads or
 * allocation on the data path (one look-ahead buffer is allocated the first
 * time a peer's FPDUs are small): the caller moves the bytes, passes the time
 * in and performs what uiw_conn_want() asks for; the connection reports what
 * happened through struct uiw_conn_ops.  docs/CONN.md has the state table.
 *
 * It wraps a struct mpa_conn for the handshake frames and the FPDU stream:
 * received octets go where MPA lends them, sent octets come from MPA's
 * queue.  Once established, the layer above (RDMAP) rebinds MPA's upcalls
 * (mpa_conn_set_ops(&c->mpa, ...)) and queues FPDUs with mpa_tx_fpdu().
 *
 * Driving it:
 *   uiw_conn_want(c, now, idle, &w)  what to do now: a read into w.rx (when
 *                                   no read is in flight), a gathering send
 *                                   of w.tx (when no send is), shutdown of
 *                                   the send side, reset, close, and the
 *                                   time of the next uiw_conn_on_timer()
 *   uiw_conn_on_read(c, now, res)   a read of w.rx ended: octets, 0 (EOF), -errno
 *   uiw_conn_on_read_copy(c, now, buf, res)  a read into the caller's buffer
 *   uiw_conn_on_sent(c, now, res)   a send of w.tx ended: octets, -errno
 *   uiw_conn_on_timer(c, now)       a deadline may have passed
 * The iovecs of a want stay valid until the matching on_read/on_sent.
 */
#ifndef UIW_CONN_H
#define UIW_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "mpa.h"

/* Internal to the library, not part of its ABI: the version script exports
 * every uiw_* name, so these are hidden explicitly. */
#pragma GCC visibility push(hidden)

enum uiw_conn_state {
	UIW_CONN_IDLE = 0,	  /* not started */
	UIW_CONN_CONNECTING,	  /* initiator: TCP connect in flight */
	UIW_CONN_HANDSHAKE,	  /* MPA Request/Reply exchange */
	UIW_CONN_REQUEST,	  /* responder: Request reported, awaiting accept/reject */
	UIW_CONN_HELD,		  /* initiator: established, first FPDU held until a deadline */
	UIW_CONN_UP,		  /* full operation */
	UIW_CONN_CLOSING,	  /* graceful close: queued octets go, then FIN; receive delivers */
	UIW_CONN_CLOSING_DISCARD, /* failed: queued octets (a TERMINATE) go, then FIN; receive
				     dropped */
	UIW_CONN_CLOSING_EOF, /* receive over (peer FIN, Reject exchanged): queued go, FIN, close */
	UIW_CONN_LINGER,      /* FIN sent after a graceful close: deliver until the peer's FIN */
	UIW_CONN_LINGER_DISCARD, /* send side over after a failure: drop until the peer's FIN */
	UIW_CONN_CLOSED		 /* over: close the socket (abortively if want.reset) */
};

/* The DISCONNECTED event's TERMINATE flags (the values of UIW_CM_TERM_*). */
#define UIW_CONN_TERM_SENT     1
#define UIW_CONN_TERM_RECEIVED 2
#define UIW_CONN_TERM_RESET    4

/* What the peer's Request or Reply carried. */
struct uiw_conn_info {
	const uint8_t *pd; /* the ULP's private data */
	uint16_t pd_len;
	uint16_t ird, ord; /* the peer's (RFC 6581), 0 when not exchanged */
};

/* How an established connection ended. */
struct uiw_conn_disc {
	int status;	    /* -ECONNABORTED when a TERMINATE was sent or received, else the
			     * stream's first error (-ECONNRESET, -EPIPE, -ETIMEDOUT: see @err), else 0 */
	uint8_t term_flags; /* UIW_CONN_TERM_* */
	uint8_t term_layer, term_etype, term_ecode;
	int reset; /* we ended it with a RST */
};

/*
 * Upcalls.  Each event is reported at most once; after CONNECT_ERROR,
 * UNREACHABLE, REJECTED or DISCONNECTED nothing more is.  Inputs may be
 * called from inside an upcall.
 */
struct uiw_conn_ops {
	/* responder: a valid Request arrived; answer with uiw_conn_accept()
	 * or uiw_conn_reject(), now or later */
	void (*request)(void *arg, const struct uiw_conn_info *req);
	/* full operation (initiator: the Reply; responder: the accept): bind
	 * the layer above to c->mpa.  Return 0 (ESTABLISHED; DISCONNECTED will
	 * follow), -ECONNABORTED (it queued a TERMINATE: the connection closes
	 * after sending it) or another -errno (the connection is closed).  An
	 * initiator's failure is reported as CONNECT_ERROR with that code. */
	int (*established)(void *arg, const struct uiw_conn_info *info);
	/* initiator: the peer rejected (its Reply's private data) */
	void (*rejected)(void *arg, const struct uiw_conn_info *rep);
	/* initiator: the TCP connect failed */
	void (*unreachable)(void *arg, int err);
	/* initiator: the handshake failed (timeout, EOF, protocol error) */
	void (*connect_error)(void *arg, int err);
	/* established: the stream under the layer above ended (0: the peer's
	 * FIN) or failed (-errno); it moves to error and may queue MPA's
	 * TERMINATE (then calls uiw_conn_term()) */
	void (*lost)(void *arg, int err);
	/* established and closing: 1 when the layer above will queue nothing
	 * more (its send queue and Reads are done), so TCP may be shut; NULL
	 * means always */
	int (*drained)(void *arg);
	/* established: the connection is over; the layer above flushes */
	void (*disconnected)(void *arg, const struct uiw_conn_disc *d);
};

struct uiw_conn_cfg {
	struct mpa_cfg mpa; /* role, options; emss may be updated by uiw_conn_on_connected() */
	/* graceful close: how long queued octets may take to leave before a
	 * reset, and then how long we wait for the peer's FIN */
	uint64_t close_ns;
	uint64_t close_err_ns; /* the same after a failure (QP error, TERMINATE) */
	uint64_t hold_ns;      /* initiator: no FPDU this long after the Reply (0: none) */
};

/* Default bounds: 10 s after a graceful close (a peer may be slow to read or
 * to answer with its FIN), 2 s after a failure (nothing useful is left to
 * deliver, only the TERMINATE to get out). */
#define UIW_CONN_CLOSE_NS     10000000000ull
#define UIW_CONN_CLOSE_ERR_NS 2000000000ull

void uiw_conn_cfg_init(struct uiw_conn_cfg *cfg, enum mpa_role role);

/* one read gathers into at most this many iovecs; one send this many */
#define UIW_CONN_RX_IOV	 32
#define UIW_CONN_TX_IOV	 256
#define UIW_CONN_DISCARD 2048
/*
 * Every read in full operation ends in a look-ahead (mpa_rx_lend_ahead()):
 * after the octets MPA lends straight into their destinations, a buffer of
 * ours catches what follows, so one read takes a whole message however
 * the peer cut it into FPDUs (64754 + 782 payload octets for 64 KiB at
 * the largest MULPDU), and only what the look-ahead caught is copied: the
 * short FPDU and the first octets of the next.  Its size is a policy: small
 * (UIW_CONN_AHEAD) while the peer's FPDUs are large, so that large
 * payloads are read where they belong; large (UIW_CONN_AHEAD_BIG,
 * allocated the first time) while they average under UIW_CONN_SMALL_FPDU,
 * where one read per FPDU costs more than copying (a peer with a 1500
 * octet path sends some 45 FPDUs per 64 KiB), and with markers (a lend
 * covers MPA_RX_MK_SLOTS of them, some 8 KiB).
 */
#define UIW_CONN_AHEAD	    1024
#define UIW_CONN_AHEAD_BIG  65536
#define UIW_CONN_SMALL_FPDU 8192

struct uiw_conn {
	enum uiw_conn_state state;
	struct uiw_conn_cfg cfg;
	const struct uiw_conn_ops *ops;
	void *arg;
	struct mpa_conn mpa;
	int mpa_inited;
	/* the deadline of the current state: handshake (MPA's own), hold,
	 * drain (closing) or linger; UINT64_MAX: none */
	uint64_t deadline;
	unsigned reported; /* events reported (1 << enum uiw_conn_ev) */
	/* how it ends, for DISCONNECTED */
	uint8_t term_flags;
	uint8_t term_sent[3], term_rcvd[3];
	int reset;
	/* the first error of the stream (-errno: a reset by the peer, a send
	 * that failed, our reset when the drain bound expired): DISCONNECTED's
	 * status when no TERMINATE says more; 0: it ended cleanly */
	int err;
	/* the Request's private data until the TCP connect is done */
	uint8_t conn_pd[MPA_PD_MAX];
	uint16_t conn_pd_len;
	/* the peer's Request/Reply, kept for the events */
	uint8_t hs_pd[MPA_PD_MAX];
	struct uiw_conn_info hs;
	int hs_got; /* MPA delivered the Request or Reply (upcall) */
	struct iovec rx_iov[UIW_CONN_RX_IOV];
	struct iovec tx_iov[UIW_CONN_TX_IOV];
	uint8_t discard[UIW_CONN_DISCARD];
	uint8_t ahead[UIW_CONN_AHEAD];
	uint8_t *ahead_big; /* UIW_CONN_AHEAD_BIG octets, or NULL */
};

/* The caller's I/O that is not in flight (uiw_conn_want()'s @idle). */
#define UIW_CONN_RX_IDLE 1
#define UIW_CONN_TX_IDLE 2

struct uiw_conn_want {
	struct iovec *rx; /* read into these (NULL: no read now) */
	int rx_n;
	struct iovec *tx; /* send these in one gathering send (NULL: none) */
	int tx_n;
	int shut_wr;	   /* shutdown(SHUT_WR) now (asked once) */
	int reset;	   /* close with a RST (SO_LINGER 0) */
	int close;	   /* over: end the I/O in flight, then close the socket */
	uint64_t deadline; /* call uiw_conn_on_timer() then (UINT64_MAX: none) */
};

int uiw_conn_init(struct uiw_conn *c, const struct uiw_conn_cfg *cfg,
		  const struct uiw_conn_ops *ops, void *arg);
void uiw_conn_destroy(struct uiw_conn *c);

/* initiator: the TCP connect starts (@pd: the Request's private data);
 * responder: the socket is accepted, wait for the Request.  0 or -errno. */
int uiw_conn_start(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len);
/* initiator: the TCP connect ended (@err 0 or -errno); @emss: the path's
 * MSS (0: the configured one) */
void uiw_conn_on_connected(struct uiw_conn *c, uint64_t now, int err, uint32_t emss);
void uiw_conn_on_read(struct uiw_conn *c, uint64_t now, ssize_t res);
/* the same for a read the caller made into its own buffer @buf instead of
 * w.rx (small FPDUs: one read gathers many, MPA's copying deframer places
 * them); the lent iovecs are then left unused */
void uiw_conn_on_read_copy(struct uiw_conn *c, uint64_t now, const void *buf, ssize_t res);
void uiw_conn_on_sent(struct uiw_conn *c, uint64_t now, ssize_t res);
void uiw_conn_on_timer(struct uiw_conn *c, uint64_t now);
void uiw_conn_want(struct uiw_conn *c, uint64_t now, unsigned idle, struct uiw_conn_want *w);

/* application requests; 0 or -errno (-EINVAL: not in a state that allows it) */
int uiw_conn_accept(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len, uint16_t ird,
		    uint16_t ord);
int uiw_conn_reject(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len);
int uiw_conn_disconnect(struct uiw_conn *c, uint64_t now);
/* the application gives the connection up (destroys it): closed at once,
 * with a RST if @reset, and no event is reported any more */
void uiw_conn_abort(struct uiw_conn *c, int reset);

/* the application resets the connection but keeps it (uiw_destroy_qp() of
 * a live QP): closed at once with a RST, and reported: DISCONNECTED once
 * established, else CONNECT_ERROR with @err to an initiator */
void uiw_conn_reset(struct uiw_conn *c, int err);

/* the layer above moved to error: receive is dropped from now on, what it
 * queued (its TERMINATE) leaves within close_err_ns, then FIN */
void uiw_conn_qp_error(struct uiw_conn *c, uint64_t now);

enum uiw_conn_term_kind {
	UIW_CONN_TERM_KIND_SENT,      /* our TERMINATE is queued */
	UIW_CONN_TERM_KIND_RECEIVED,  /* the peer's arrived */
	UIW_CONN_TERM_KIND_ABANDONED, /* ours could not be queued: reset instead */
};
void uiw_conn_term(struct uiw_conn *c, uint64_t now, enum uiw_conn_term_kind kind, uint8_t layer,
		   uint8_t etype, uint8_t ecode);

const char *uiw_conn_state_name(enum uiw_conn_state s);

#pragma GCC visibility pop

#endif /* UIW_CONN_H */
