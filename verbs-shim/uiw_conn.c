/* SPDX-License-Identifier: MIT */
/*
 * The life of a connection as a sans-I/O state machine (uiw_conn.h; the
 * state table is docs/CONN.md).  Every decision about a connection's life
 * (handshake results, close policy and its bounds, which event, when) is
 * taken here; the caller only performs what uiw_conn_want() asks for and
 * reports how it went.
 */
#include "uiw_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Events, for "each at most once" (struct uiw_conn, @reported). */
enum uiw_conn_ev {
	EV_REQUEST,
	EV_ESTABLISHED,
	EV_REJECTED,
	EV_UNREACHABLE,
	EV_CONNECT_ERROR,
	EV_DISCONNECTED,
	EV_LOST,
};

#define BIT(e) (1u << (e))
#define EV_TERMINAL \
	(BIT(EV_REJECTED) | BIT(EV_UNREACHABLE) | BIT(EV_CONNECT_ERROR) | BIT(EV_DISCONNECTED))

void uiw_conn_cfg_init(struct uiw_conn_cfg *cfg, enum mpa_role role)
{
	memset(cfg, 0, sizeof(*cfg));
	mpa_cfg_init(&cfg->mpa, role);
	cfg->close_ns = UIW_CONN_CLOSE_NS;
	cfg->close_err_ns = UIW_CONN_CLOSE_ERR_NS;
}

const char *uiw_conn_state_name(enum uiw_conn_state s)
{
	static const char *const n[] = {
		"idle",	   "connecting",      "handshake",   "request", "held",		  "up",
		"closing", "closing-discard", "closing-eof", "linger",	"linger-discard", "closed"};

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static uint64_t after(uint64_t now, uint64_t t)
{
	return now > UINT64_MAX - 1 - t ? UINT64_MAX - 1 : now + t;
}

/* Report @ev unless it (or any terminal event) already was. */
static int ev_once(struct uiw_conn *c, enum uiw_conn_ev ev)
{
	if ((c->reported & BIT(ev)) || (c->reported & EV_TERMINAL))
		return 0;
	c->reported |= BIT(ev);
	return 1;
}

/* The layer above is bound to the stream (ESTABLISHED was reported). */
static int bound(const struct uiw_conn *c)
{
	return !!(c->reported & BIT(EV_ESTABLISHED));
}

/* States whose send side still sends (or will send) MPA's queue. */
static int tx_open(enum uiw_conn_state s)
{
	return s == UIW_CONN_HANDSHAKE || s == UIW_CONN_REQUEST || s == UIW_CONN_HELD ||
	       s == UIW_CONN_UP || s == UIW_CONN_CLOSING || s == UIW_CONN_CLOSING_DISCARD ||
	       s == UIW_CONN_CLOSING_EOF;
}

/* States whose received octets go to MPA. */
static int rx_delivers(enum uiw_conn_state s)
{
	return s == UIW_CONN_HANDSHAKE || s == UIW_CONN_REQUEST || s == UIW_CONN_HELD ||
	       s == UIW_CONN_UP || s == UIW_CONN_CLOSING || s == UIW_CONN_LINGER;
}

/* States with MPA deadlines (Request, Reply, a peer-to-peer RTR). */
static int mpa_timed(enum uiw_conn_state s)
{
	return s == UIW_CONN_HANDSHAKE || s == UIW_CONN_REQUEST || s == UIW_CONN_HELD ||
	       s == UIW_CONN_UP;
}

static void to_closed(struct uiw_conn *c, int reset)
{
	struct uiw_conn_disc d;

	if (c->state == UIW_CONN_CLOSED)
		return;
	c->state = UIW_CONN_CLOSED;
	c->deadline = UINT64_MAX;
	if (reset)
		c->reset = 1;
	if (!bound(c) || !ev_once(c, EV_DISCONNECTED))
		return;
	memset(&d, 0, sizeof(d));
	if (c->term_flags & UIW_CONN_TERM_RECEIVED) {
		/* the peer's TERMINATE says why; ours (if any) only answered it */
		d.term_flags = UIW_CONN_TERM_RECEIVED;
		d.term_layer = c->term_rcvd[0];
		d.term_etype = c->term_rcvd[1];
		d.term_ecode = c->term_rcvd[2];
	} else if (c->term_flags & UIW_CONN_TERM_SENT) {
		d.term_flags = c->term_flags & (UIW_CONN_TERM_SENT | UIW_CONN_TERM_RESET);
		/* ours did not leave in time: the peer may never have seen it */
		if (c->reset)
			d.term_flags |= UIW_CONN_TERM_RESET;
		d.term_layer = c->term_sent[0];
		d.term_etype = c->term_sent[1];
		d.term_ecode = c->term_sent[2];
	}
	d.status = d.term_flags ? -ECONNABORTED : c->err;
	d.reset = c->reset;
	if (c->ops->disconnected)
		c->ops->disconnected(c->arg, &d);
}

/* What ended the stream, kept for DISCONNECTED: the first error only. */
static void first_err(struct uiw_conn *c, int err)
{
	if (err < 0 && !c->err)
		c->err = err;
}

/* Before ESTABLISHED: an initiator is told, a responder's application
 * never heard of the connection (or only of its Request) */
static void handshake_failed(struct uiw_conn *c, int err)
{
	if (c->cfg.mpa.role == MPA_ROLE_INITIATOR && ev_once(c, EV_CONNECT_ERROR) &&
	    c->ops->connect_error)
		c->ops->connect_error(c->arg, err ? err : -ECONNRESET);
	to_closed(c, 0);
}

/* Enter a closing state: the drain bound starts with the first close. */
static void closing(struct uiw_conn *c, enum uiw_conn_state s, uint64_t now, uint64_t bound_ns)
{
	int was_closing = c->state == UIW_CONN_CLOSING || c->state == UIW_CONN_CLOSING_DISCARD ||
			  c->state == UIW_CONN_CLOSING_EOF || c->state == UIW_CONN_LINGER ||
			  c->state == UIW_CONN_LINGER_DISCARD;

	if (!was_closing)
		c->deadline = after(now, bound_ns);
	c->state = s;
}

/*
 * The stream failed under an established connection: the peer's FIN or a
 * read error (@rx_over: nothing more to read), or a protocol error (the
 * rest is read and dropped until EOF).  The layer above is told once.
 */
static void stream_failed(struct uiw_conn *c, uint64_t now, int err, int rx_over)
{
	first_err(c, err);
	if (!bound(c)) {
		if (c->state == UIW_CONN_HANDSHAKE || c->state == UIW_CONN_REQUEST ||
		    c->state == UIW_CONN_CONNECTING)
			handshake_failed(c, err);
		else if (rx_over && c->state == UIW_CONN_CLOSING_DISCARD)
			c->state = UIW_CONN_CLOSING_EOF;
		else if (c->state != UIW_CONN_CLOSING_DISCARD)
			to_closed(c, 0);
		return;
	}
	if (ev_once(c, EV_LOST) && c->ops->lost)
		c->ops->lost(c->arg, err);
	if (c->state == UIW_CONN_CLOSED)
		return; /* the layer above abandoned its TERMINATE: reset */
	if (tx_open(c->state))
		closing(c, rx_over ? UIW_CONN_CLOSING_EOF : UIW_CONN_CLOSING_DISCARD, now,
			c->cfg.close_err_ns);
	else if (rx_over)
		to_closed(c, 0);
	else
		c->state = UIW_CONN_LINGER_DISCARD;
}

/* Full operation: the layer above binds (and reports ESTABLISHED). */
static int established(struct uiw_conn *c, uint64_t now)
{
	int r = c->ops->established ? c->ops->established(c->arg, &c->hs) : 0;

	if (c->state == UIW_CONN_CLOSED)
		return r ? r : -ECONNRESET;
	if (!r) {
		c->reported |= BIT(EV_ESTABLISHED);
		if (c->cfg.mpa.role == MPA_ROLE_INITIATOR && c->cfg.hold_ns) {
			/* Linux siw hands the socket to its QP only after sending
			 * the Reply and drops an FPDU that arrives in between */
			c->state = UIW_CONN_HELD;
			c->deadline = after(now, c->cfg.hold_ns);
		} else {
			c->state = UIW_CONN_UP;
			c->deadline = UINT64_MAX;
		}
		return 0;
	}
	if (c->cfg.mpa.role == MPA_ROLE_INITIATOR && ev_once(c, EV_CONNECT_ERROR) &&
	    c->ops->connect_error)
		c->ops->connect_error(c->arg, r);
	if (r == -ECONNABORTED) /* the layer above queued a TERMINATE: send it */
		closing(c, UIW_CONN_CLOSING_DISCARD, now, c->cfg.close_err_ns);
	else
		to_closed(c, 0);
	return r;
}

/* What the handshake frame just received (mpa_rx_ack() returned @ret) means. */
static void after_handshake(struct uiw_conn *c, uint64_t now, int ret)
{
	if (c->hs_got) {
		c->hs_got = 0;
		if (c->cfg.mpa.role == MPA_ROLE_RESPONDER && c->mpa.state == MPA_S_REQ_RCVD) {
			c->state = UIW_CONN_REQUEST;
			c->deadline = UINT64_MAX; /* the application's answer is not timed here */
			if (ev_once(c, EV_REQUEST) && c->ops->request)
				c->ops->request(c->arg, &c->hs);
		} else if (c->cfg.mpa.role == MPA_ROLE_INITIATOR &&
			   c->mpa.state == MPA_S_REJECTED) {
			if (ev_once(c, EV_REJECTED) && c->ops->rejected)
				c->ops->rejected(c->arg, &c->hs);
			to_closed(c, 0);
			return;
		} else if (c->cfg.mpa.role == MPA_ROLE_INITIATOR && c->mpa.state == MPA_S_FULL) {
			established(c, now);
		}
	}
	if (ret >= 0 || c->state == UIW_CONN_CLOSED)
		return;
	if (ret == -ECONNREFUSED && c->mpa.state == MPA_S_REJECTED) {
		/* refused by policy: the Reject is queued, MPA exited */
		closing(c, UIW_CONN_CLOSING_EOF, now, c->cfg.close_ns);
		return;
	}
	stream_failed(c, now, ret, 0);
}

static void hs_record(struct uiw_conn *c, const struct mpa_rr *rr)
{
	c->hs.pd_len = rr->ulp_pd_len;
	if (rr->ulp_pd_len)
		memcpy(c->hs_pd, rr->ulp_pd, rr->ulp_pd_len);
	c->hs.pd = c->hs_pd;
	c->hs.ird = rr->ird;
	c->hs.ord = rr->ord;
	c->hs_got = 1;
}

/* MPA's upcalls during the handshake only record: the frame is acted on
 * once mpa_rx_ack() returned, outside MPA's receive path */
static void hs_request(void *arg, const struct mpa_rr *req)
{
	hs_record(arg, req);
}

static void hs_reply(void *arg, const struct mpa_rr *rep)
{
	hs_record(arg, rep);
}

static const struct mpa_ops hs_ops = {
	.request = hs_request,
	.reply = hs_reply,
};

int uiw_conn_init(struct uiw_conn *c, const struct uiw_conn_cfg *cfg,
		  const struct uiw_conn_ops *ops, void *arg)
{
	static const struct uiw_conn_ops none;

	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->ops = ops ? ops : &none;
	c->arg = arg;
	c->state = UIW_CONN_IDLE;
	c->deadline = UINT64_MAX;
	c->hs.pd = c->hs_pd;
	return 0;
}

void uiw_conn_destroy(struct uiw_conn *c)
{
	free(c->ahead_big);
	c->ahead_big = NULL;
	if (c->mpa_inited)
		mpa_conn_destroy(&c->mpa);
	c->mpa_inited = 0;
}

static int mpa_begin(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len)
{
	int r = mpa_conn_init(&c->mpa, &c->cfg.mpa, &hs_ops, c);

	if (r)
		return r;
	c->mpa_inited = 1;
	r = mpa_conn_start(&c->mpa, pd, pd_len, now);
	if (r)
		return r;
	c->state = UIW_CONN_HANDSHAKE;
	c->deadline = UINT64_MAX; /* MPA keeps the handshake's own */
	return 0;
}

int uiw_conn_start(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len)
{
	if (c->state != UIW_CONN_IDLE)
		return -EINVAL;
	if (c->cfg.mpa.role == MPA_ROLE_RESPONDER)
		return mpa_begin(c, now, NULL, 0);
	if (pd_len > sizeof(c->conn_pd))
		return -EMSGSIZE;
	if (pd_len)
		memcpy(c->conn_pd, pd, pd_len);
	c->conn_pd_len = (uint16_t)pd_len;
	c->state = UIW_CONN_CONNECTING;
	return 0;
}

void uiw_conn_on_connected(struct uiw_conn *c, uint64_t now, int err, uint32_t emss)
{
	if (c->state != UIW_CONN_CONNECTING)
		return;
	if (err < 0) {
		if (ev_once(c, EV_UNREACHABLE) && c->ops->unreachable)
			c->ops->unreachable(c->arg, err);
		to_closed(c, 0);
		return;
	}
	if (emss)
		c->cfg.mpa.emss = emss;
	err = mpa_begin(c, now, c->conn_pd, c->conn_pd_len);
	if (err)
		handshake_failed(c, err);
}

/* What the next read takes: MPA's lend, with the look-ahead its peer's
 * FPDU sizes call for (UIW_CONN_AHEAD).  With markers a lend stops after
 * MPA_RX_MK_SLOTS markers (8 KiB): the large look-ahead keeps one read per
 * 64 KiB there too. */
static int rx_lend(struct uiw_conn *c)
{
	uint8_t *ahead = c->ahead;
	size_t len = sizeof(c->ahead);

	if (c->mpa.state == MPA_S_FULL &&
	    (c->mpa.rx_markers || c->mpa.rx_ulpdu_avg < UIW_CONN_SMALL_FPDU)) {
		if (!c->ahead_big)
			c->ahead_big = malloc(UIW_CONN_AHEAD_BIG);
		if (c->ahead_big) { /* else the small one: slower, not wrong */
			ahead = c->ahead_big;
			len = UIW_CONN_AHEAD_BIG;
		}
	}
	return mpa_rx_lend_ahead(&c->mpa, c->rx_iov, UIW_CONN_RX_IOV, ahead, len);
}

/* MPA took received octets and returned @ret (0 or -errno). */
static void rx_taken(struct uiw_conn *c, uint64_t now, int ret)
{
	if (c->state == UIW_CONN_HANDSHAKE || c->state == UIW_CONN_REQUEST)
		after_handshake(c, now, ret);
	else if (ret < 0)
		stream_failed(c, now, ret, 0);
}

void uiw_conn_on_read(struct uiw_conn *c, uint64_t now, ssize_t res)
{
	if (rx_delivers(c->state)) {
		if (res > 0) {
			rx_taken(c, now, mpa_rx_ack(&c->mpa, (size_t)res));
		} else if (c->state == UIW_CONN_LINGER) {
			first_err(c, (int)res);
			to_closed(c, 0); /* the peer's FIN (or a reset) after ours */
		} else {
			stream_failed(c, now, (int)res, 1);
		}
		return;
	}
	if (res > 0)
		return; /* dropped (discard), or a late completion */
	if (c->state == UIW_CONN_CLOSING_DISCARD)
		c->state = UIW_CONN_CLOSING_EOF;
	else if (c->state == UIW_CONN_LINGER_DISCARD)
		to_closed(c, 0);
}

void uiw_conn_on_read_copy(struct uiw_conn *c, uint64_t now, const void *buf, ssize_t res)
{
	ssize_t used;

	if (res <= 0 || !rx_delivers(c->state)) {
		uiw_conn_on_read(c, now, res);
		return;
	}
	used = mpa_rx(&c->mpa, buf, (size_t)res);
	rx_taken(c, now, used < 0 ? (int)used : 0);
	/* octets MPA did not take (it exited) are dropped: the next want
	 * finds MPA exited and stops reading */
}

void uiw_conn_on_sent(struct uiw_conn *c, uint64_t now, ssize_t res)
{
	if (!c->mpa_inited)
		return;
	if (res >= 0) {
		mpa_tx_advance(&c->mpa, (size_t)res);
		return;
	}
	mpa_tx_advance(&c->mpa, 0); /* nothing is lent any more */
	if (!tx_open(c->state))
		return;
	first_err(c, (int)res);
	if (!bound(c)) {
		if (c->state == UIW_CONN_HANDSHAKE || c->state == UIW_CONN_REQUEST)
			handshake_failed(c, (int)res);
		else
			to_closed(c, 0);
		return;
	}
	if (c->state == UIW_CONN_CLOSING_EOF) {
		to_closed(c, 0);
		return;
	}
	if (ev_once(c, EV_LOST) && c->ops->lost)
		c->ops->lost(c->arg, (int)res);
	if (c->state == UIW_CONN_CLOSED)
		return;
	/* the send side is gone: read (and drop) until the peer ends too */
	closing(c, UIW_CONN_LINGER_DISCARD, now, c->cfg.close_err_ns);
}

void uiw_conn_on_timer(struct uiw_conn *c, uint64_t now)
{
	if (mpa_timed(c->state) && c->mpa_inited) {
		int r = mpa_conn_timeout(&c->mpa, now);

		if (r < 0) {
			stream_failed(c, now, r, 0);
			return;
		}
	}
	if (c->deadline > now)
		return;
	switch (c->state) {
	case UIW_CONN_HELD:
		c->state = UIW_CONN_UP;
		c->deadline = UINT64_MAX;
		break;
	case UIW_CONN_CLOSING:
	case UIW_CONN_CLOSING_DISCARD:
	case UIW_CONN_CLOSING_EOF:
		/* queued octets did not leave in time (the peer stopped
		 * reading): a RST frees the kernel's send queue */
		first_err(c, -ETIMEDOUT);
		to_closed(c, 1);
		break;
	case UIW_CONN_LINGER:
	case UIW_CONN_LINGER_DISCARD:
		to_closed(c, 0); /* the peer's FIN did not come */
		break;
	default:
		break;
	}
}

static int drained(struct uiw_conn *c)
{
	return !bound(c) || !c->ops->drained || c->ops->drained(c->arg);
}

/* States that send what is queued, then FIN. */
static int is_closing(enum uiw_conn_state s)
{
	return s == UIW_CONN_CLOSING || s == UIW_CONN_CLOSING_DISCARD || s == UIW_CONN_CLOSING_EOF;
}

/* Everything queued left: FIN, then wait for the peer's (unless it came). */
static void shut_wr(struct uiw_conn *c, uint64_t now, struct uiw_conn_want *w)
{
	int graceful = c->state == UIW_CONN_CLOSING;

	w->shut_wr = 1;
	if (c->state == UIW_CONN_CLOSING_EOF) {
		to_closed(c, 0);
		return;
	}
	c->state = graceful ? UIW_CONN_LINGER : UIW_CONN_LINGER_DISCARD;
	c->deadline = after(now, graceful ? c->cfg.close_ns : c->cfg.close_err_ns);
}

void uiw_conn_want(struct uiw_conn *c, uint64_t now, unsigned idle, struct uiw_conn_want *w)
{
	enum uiw_conn_state prev;
	int n;

	uiw_conn_on_timer(c, now);
	memset(w, 0, sizeof(*w));
	do {
		prev = c->state;
		if ((idle & UIW_CONN_TX_IDLE) && tx_open(c->state) && c->state != UIW_CONN_HELD &&
		    !w->tx) {
			n = mpa_tx_pending(&c->mpa, c->tx_iov, UIW_CONN_TX_IOV);
			if (n == 0 && is_closing(c->state)) {
				/* asking may make the layer above queue more
				 * (rdmap_qp_close() progresses): look again */
				int done = drained(c);

				n = tx_open(c->state)
					    ? mpa_tx_pending(&c->mpa, c->tx_iov, UIW_CONN_TX_IOV)
					    : 0;
				if (n == 0 && done && is_closing(c->state))
					shut_wr(c, now, w);
			}
			if (n > 0) {
				w->tx = c->tx_iov;
				w->tx_n = n;
			}
		}
		if ((idle & UIW_CONN_RX_IDLE) && !w->rx) {
			if (rx_delivers(c->state)) {
				n = rx_lend(c);
				if (n > 0) {
					w->rx = c->rx_iov;
					w->rx_n = n;
				} else if (n < 0) {
					stream_failed(c, now, n, 0);
				} else if (c->mpa.state == MPA_S_REJECTED ||
					   c->mpa.state == MPA_S_ERROR) {
					/* MPA exited: nothing more is read */
					if (c->state == UIW_CONN_LINGER)
						to_closed(c, 0);
					else
						closing(c, UIW_CONN_CLOSING_EOF, now,
							c->cfg.close_ns);
				}
			} else if (c->state == UIW_CONN_CLOSING_DISCARD ||
				   c->state == UIW_CONN_LINGER_DISCARD) {
				c->rx_iov[0].iov_base = c->discard;
				c->rx_iov[0].iov_len = sizeof(c->discard);
				w->rx = c->rx_iov;
				w->rx_n = 1;
			}
		}
	} while (c->state != prev && c->state != UIW_CONN_CLOSED);
	/* a read lent to MPA stays right for a discard state: on_read drops it */
	if (c->state == UIW_CONN_CLOSED) {
		if (w->tx)
			mpa_tx_advance(&c->mpa, 0);
		w->tx = NULL;
		w->tx_n = 0;
		w->rx = NULL;
		w->rx_n = 0;
		w->close = 1;
		w->reset = c->reset;
	}
	w->deadline = c->deadline;
	if (mpa_timed(c->state) && c->mpa_inited) {
		uint64_t t = mpa_conn_next_timeout(&c->mpa);

		if (t < w->deadline)
			w->deadline = t;
	}
}

int uiw_conn_accept(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len, uint16_t ird,
		    uint16_t ord)
{
	int r;

	if (c->state != UIW_CONN_REQUEST)
		return -EINVAL;
	r = mpa_conn_accept(&c->mpa, pd, pd_len, ird, ord, now);
	if (r)
		return r;
	return established(c, now);
}

int uiw_conn_reject(struct uiw_conn *c, uint64_t now, const void *pd, size_t pd_len)
{
	int r;

	if (c->state != UIW_CONN_REQUEST)
		return -EINVAL;
	r = mpa_conn_reject(&c->mpa, pd, pd_len);
	if (r)
		return r;
	/* MPA exits once the Reject is sent (RFC 5044 §7.1.2) */
	closing(c, UIW_CONN_CLOSING_EOF, now, c->cfg.close_ns);
	return 0;
}

int uiw_conn_disconnect(struct uiw_conn *c, uint64_t now)
{
	if (c->state != UIW_CONN_UP && c->state != UIW_CONN_HELD)
		return -EINVAL;
	closing(c, UIW_CONN_CLOSING, now, c->cfg.close_ns);
	return 0;
}

void uiw_conn_abort(struct uiw_conn *c, int reset)
{
	c->reported |= EV_TERMINAL; /* the application asked: nothing to tell it */
	to_closed(c, reset);
}

void uiw_conn_reset(struct uiw_conn *c, int err)
{
	if (c->state == UIW_CONN_CLOSED)
		return;
	/* an initiator still in its handshake is told it failed; once
	 * established, to_closed() reports DISCONNECTED */
	if (!bound(c) && c->cfg.mpa.role == MPA_ROLE_INITIATOR && ev_once(c, EV_CONNECT_ERROR) &&
	    c->ops->connect_error)
		c->ops->connect_error(c->arg, err);
	first_err(c, err); /* DISCONNECTED says why */
	to_closed(c, 1);
}

void uiw_conn_qp_error(struct uiw_conn *c, uint64_t now)
{
	switch (c->state) {
	case UIW_CONN_HELD:
	case UIW_CONN_UP:
	case UIW_CONN_CLOSING:
		closing(c, UIW_CONN_CLOSING_DISCARD, now, c->cfg.close_err_ns);
		break;
	case UIW_CONN_LINGER:
		c->state = UIW_CONN_LINGER_DISCARD;
		break;
	default:
		break;
	}
}

void uiw_conn_term(struct uiw_conn *c, uint64_t now, enum uiw_conn_term_kind kind, uint8_t layer,
		   uint8_t etype, uint8_t ecode)
{
	(void)now;
	switch (kind) {
	case UIW_CONN_TERM_KIND_RECEIVED:
		if (!(c->term_flags & UIW_CONN_TERM_RECEIVED)) {
			c->term_rcvd[0] = layer;
			c->term_rcvd[1] = etype;
			c->term_rcvd[2] = ecode;
		}
		c->term_flags |= UIW_CONN_TERM_RECEIVED;
		break;
	case UIW_CONN_TERM_KIND_SENT:
	case UIW_CONN_TERM_KIND_ABANDONED:
		if (!(c->term_flags & UIW_CONN_TERM_SENT)) {
			c->term_sent[0] = layer;
			c->term_sent[1] = etype;
			c->term_sent[2] = ecode;
		}
		c->term_flags |= UIW_CONN_TERM_SENT;
		if (kind == UIW_CONN_TERM_KIND_ABANDONED) {
			/* the way out that cannot be blocked: reset */
			c->term_flags |= UIW_CONN_TERM_RESET;
			if (tx_open(c->state))
				to_closed(c, 1);
		}
		break;
	}
}
