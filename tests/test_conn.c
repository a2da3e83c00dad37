/* SPDX-License-Identifier: MIT */
/*
 * uiw_conn without sockets: two connections joined by an in-memory TCP
 * model (a byte pipe each way with a window, FIN, RST, and Linux's RST on
 * closing with unread data) and a fake clock.  The harness does what the
 * engine does with a socket: it performs each want, one read and one send
 * in flight per side, and reports how they ended.
 */
#include <errno.h>
#include <string.h>

#include "tests.h"
#include "uiw_conn.h"

#define MS	  1000000ull
#define S	  1000000000ull
#define PIPE_CAP  16384
#define TERM_MARK 0x47 /* second header octet of our stand-in TERMINATE */
#define SINK_CAP  (1u << 20)

struct pipe {
	uint8_t buf[PIPE_CAP];
	size_t len;
	int fin; /* the writer shut its send side: EOF once @len is read */
	int rst; /* reset: reads and writes fail */
};

struct side {
	struct uiw_conn c;
	struct pipe *out, *in;
	struct side *peer;
	const char *name;
	/* the socket */
	const uint64_t *now; /* the pair's clock, for inputs made from upcalls */
	int rx_busy, tx_busy, closed, reset_sent, reading, silent;
	int tx_fail; /* the next send fails with this -errno (a local error) */
	struct iovec *rx, *tx;
	int rx_n, tx_n;
	uint64_t deadline;
	/* the layer above */
	int est_ret, drained_val;
	int queue_on_drained; /* FPDUs the layer above still queues when asked */
	int lost_term;	      /* on lost: queue a TERMINATE (1) or abandon it (2) */
	int accept_in_req;    /* accept from inside the request upcall */
	int copy_reads;	      /* read into a buffer of our own (uiw_conn_on_read_copy) */
	uint8_t rxdata[SINK_CAP];
	size_t rxlen, hdr_len;
	unsigned nfpdu, tx_done;
	uint8_t hdr[64];
	/* events */
	int n_req, n_est, n_rej, n_unr, n_cerr, n_lost, n_disc;
	int unr_err, cerr_err, lost_err;
	struct uiw_conn_disc disc;
	uint8_t pd[MPA_PD_MAX];
	uint16_t pd_len;
	int actions; /* progress counter */
};

struct pair {
	struct side a, b; /* a: initiator, b: responder */
	struct pipe ab, ba;
	uint64_t now;
};

static uint8_t pattern[SINK_CAP];

static void pattern_init(void)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 7 + (i >> 8));
}

/* ---- the layer above: an FPDU sink with a DDP-sized header -------------- */

static int sink_hdr_len(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	(void)arg;
	(void)hdr;
	(void)have;
	(void)ulpdu_len;
	return 14;
}

static int sink_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		      unsigned flags, struct iovec *dst, int *ndst)
{
	struct side *s = arg;
	size_t pl = ulpdu_len - hdr_len;

	(void)flags;
	memcpy(s->hdr, hdr, hdr_len);
	s->hdr_len = hdr_len;
	if (s->rxlen + pl > SINK_CAP)
		return -ENOSPC;
	*ndst = 0;
	if (pl) {
		dst[0].iov_base = s->rxdata + s->rxlen;
		dst[0].iov_len = pl;
		*ndst = 1;
	}
	return 0;
}

static int sink_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len, unsigned flags)
{
	struct side *s = arg;

	(void)hdr;
	(void)flags;
	s->rxlen += ulpdu_len - hdr_len;
	s->nfpdu++;
	if (s->hdr[1] == TERM_MARK) {
		/* the peer's TERMINATE: layer 2 etype 3 ecode 4 (made up) */
		uiw_conn_term(&s->c, *s->now, UIW_CONN_TERM_KIND_RECEIVED, s->hdr[2], s->hdr[3],
			      s->hdr[4]);
		uiw_conn_qp_error(&s->c, *s->now);
	}
	return 0;
}

static void sink_tx_done(void *arg, void *cookie)
{
	struct side *s = arg;

	(void)cookie;
	s->tx_done++;
}

static const struct mpa_ops sink_ops = {
	.rx_hdr_len = sink_hdr_len,
	.rx_begin = sink_begin,
	.rx_end = sink_end,
	.tx_done = sink_tx_done,
};

/* Queue one FPDU: a 14-octet header (tagged) and @len octets of the pattern. */
static int send_fpdu(struct side *s, size_t off, size_t len, uint8_t mark)
{
	uint8_t hdr[14] = {0x80, mark, 1, 2, 3};
	struct iovec iov = {pattern + off, len};

	return mpa_tx_fpdu(&s->c.mpa, hdr, sizeof(hdr), &iov, len ? 1 : 0, s);
}

/* ---- upcalls ------------------------------------------------------------ */

/* Every test checks that no event comes twice, nor after a terminal one. */
static void first_event(const struct side *s, int n)
{
	ck_assert_msg(n == 0, "%s: event reported twice", s->name);
	ck_assert_msg(s->n_rej + s->n_unr + s->n_cerr + s->n_disc == 0,
		      "%s: event after a terminal event", s->name);
}

static void copy_pd(struct side *s, const struct uiw_conn_info *i)
{
	memcpy(s->pd, i->pd, i->pd_len);
	s->pd_len = i->pd_len;
}

static void on_request(void *arg, const struct uiw_conn_info *req)
{
	struct side *s = arg;

	first_event(s, s->n_req);
	s->n_req++;
	copy_pd(s, req);
	if (s->accept_in_req)
		ck_assert_int_eq(uiw_conn_accept(&s->c, *s->now, "in-upcall", 9, 4, 4), 0);
}

static int on_established(void *arg, const struct uiw_conn_info *info)
{
	struct side *s = arg;

	first_event(s, s->n_est);
	if (s->est_ret)
		return s->est_ret;
	s->n_est++;
	if (s->c.cfg.mpa.role == MPA_ROLE_INITIATOR)
		copy_pd(s, info);
	mpa_conn_set_ops(&s->c.mpa, &sink_ops, s);
	return 0;
}

static void on_rejected(void *arg, const struct uiw_conn_info *rep)
{
	struct side *s = arg;

	first_event(s, s->n_rej);
	s->n_rej++;
	copy_pd(s, rep);
}

static void on_unreachable(void *arg, int err)
{
	struct side *s = arg;

	first_event(s, s->n_unr);
	s->n_unr++;
	s->unr_err = err;
}

static void on_connect_error(void *arg, int err)
{
	struct side *s = arg;

	first_event(s, s->n_cerr);
	s->n_cerr++;
	s->cerr_err = err;
}

static void on_lost(void *arg, int err)
{
	struct side *s = arg;

	first_event(s, s->n_lost);
	s->n_lost++;
	s->lost_err = err;
	if (s->lost_term == 1 && send_fpdu(s, 0, 0, TERM_MARK) == 0)
		uiw_conn_term(&s->c, *s->now, UIW_CONN_TERM_KIND_SENT, 2, 3, 4);
	else if (s->lost_term)
		uiw_conn_term(&s->c, *s->now, UIW_CONN_TERM_KIND_ABANDONED, 2, 3, 4);
}

static int on_drained(void *arg)
{
	struct side *s = arg;

	/* like rdmap_qp_close(): asking progresses the send queue */
	if (s->queue_on_drained > 0) {
		s->queue_on_drained--;
		ck_assert_int_eq(send_fpdu(s, 0, 64, 0), 0);
		return 0;
	}
	return s->drained_val;
}

static void on_disconnected(void *arg, const struct uiw_conn_disc *d)
{
	struct side *s = arg;

	first_event(s, s->n_disc);
	ck_assert_int_eq(s->n_est, 1); /* DISCONNECTED only after ESTABLISHED */
	s->n_disc++;
	s->disc = *d;
}

static const struct uiw_conn_ops ops = {
	.request = on_request,
	.established = on_established,
	.rejected = on_rejected,
	.unreachable = on_unreachable,
	.connect_error = on_connect_error,
	.lost = on_lost,
	.drained = on_drained,
	.disconnected = on_disconnected,
};

/* ---- the TCP model ------------------------------------------------------ */

/* a RST: what either side had not read yet is gone */
static void do_reset(struct side *s)
{
	s->out->rst = 1;
	s->in->rst = 1;
	s->out->len = 0;
	s->in->len = 0;
}

static void do_close(struct side *s, int reset)
{
	if (s->tx_busy) {
		s->tx_busy = 0;
		uiw_conn_on_sent(&s->c, 0, -ECANCELED);
	}
	if (s->rx_busy) {
		s->rx_busy = 0;
		uiw_conn_on_read(&s->c, 0, -ECANCELED);
	}
	/* Linux answers a close with unread data by a RST */
	if (reset || s->in->len)
		do_reset(s);
	else
		s->out->fin = 1;
	s->reset_sent = reset || s->in->len;
	s->closed = 1;
}

/* One turn of @s's "engine"; returns 1 when something happened. */
static int step(struct pair *p, struct side *s)
{
	struct uiw_conn_want w;
	enum uiw_conn_state st = s->c.state;
	int acted = 0;

	if (s->closed || s->silent)
		return 0;
	if (s->rx_busy) {
		struct pipe *in = s->in;

		if (in->rst) {
			s->rx_busy = 0;
			uiw_conn_on_read(&s->c, p->now, -ECONNRESET);
			acted = 1;
		} else if (in->len && s->reading && s->copy_reads) {
			/* an odd size: FPDUs and headers split anywhere */
			uint8_t tmp[777];
			size_t k = in->len < sizeof(tmp) ? in->len : sizeof(tmp);

			memcpy(tmp, in->buf, k);
			memmove(in->buf, in->buf + k, in->len - k);
			in->len -= k;
			s->rx_busy = 0;
			uiw_conn_on_read_copy(&s->c, p->now, tmp, (ssize_t)k);
			acted = 1;
		} else if (in->len && s->reading) {
			size_t k = 0;

			for (int i = 0; i < s->rx_n && k < in->len; i++) {
				size_t m = s->rx[i].iov_len;

				if (m > in->len - k)
					m = in->len - k;
				memcpy(s->rx[i].iov_base, in->buf + k, m);
				k += m;
			}
			memmove(in->buf, in->buf + k, in->len - k);
			in->len -= k;
			s->rx_busy = 0;
			uiw_conn_on_read(&s->c, p->now, (ssize_t)k);
			acted = 1;
		} else if (!in->len && in->fin && s->reading) {
			s->rx_busy = 0;
			uiw_conn_on_read(&s->c, p->now, 0);
			acted = 1;
		}
	}
	if (s->tx_busy) {
		struct pipe *out = s->out;

		if (s->tx_fail) {
			s->tx_busy = 0;
			uiw_conn_on_sent(&s->c, p->now, s->tx_fail);
			s->tx_fail = 0;
			acted = 1;
		} else if (out->rst || s->peer->closed) {
			do_reset(s->peer); /* a closed peer answers with a RST */
			s->tx_busy = 0;
			uiw_conn_on_sent(&s->c, p->now, -ECONNRESET);
			acted = 1;
		} else if (out->len < PIPE_CAP) {
			size_t k = 0;

			for (int i = 0; i < s->tx_n && out->len < PIPE_CAP; i++) {
				size_t m = s->tx[i].iov_len;

				if (m > PIPE_CAP - out->len)
					m = PIPE_CAP - out->len;
				memcpy(out->buf + out->len, s->tx[i].iov_base, m);
				out->len += m;
				k += m;
				if (m < s->tx[i].iov_len)
					break;
			}
			s->tx_busy = 0;
			uiw_conn_on_sent(&s->c, p->now, (ssize_t)k);
			acted = 1;
		}
	}
	uiw_conn_want(&s->c, p->now,
		      (s->rx_busy ? 0 : UIW_CONN_RX_IDLE) | (s->tx_busy ? 0 : UIW_CONN_TX_IDLE),
		      &w);
	s->deadline = w.deadline;
	if (w.tx) {
		s->tx_busy = 1;
		s->tx = w.tx;
		s->tx_n = w.tx_n;
		acted = 1;
	}
	if (w.rx) {
		s->rx_busy = 1;
		s->rx = w.rx;
		s->rx_n = w.rx_n;
		acted = 1;
	}
	if (w.shut_wr) {
		ck_assert_int_eq(s->out->fin, 0); /* asked once */
		s->out->fin = 1;
		acted = 1;
	}
	if (w.close) {
		do_close(s, w.reset);
		acted = 1;
	}
	if (st != s->c.state)
		acted = 1;
	s->actions += acted;
	return acted;
}

/* Run both sides until neither moves, without advancing the clock. */
static void settle(struct pair *p)
{
	for (int i = 0; i < 100000; i++)
		if (!step(p, &p->a) + !step(p, &p->b) == 2)
			return;
	ck_abort_msg("no quiescence");
}

/* Settle, then move the clock from deadline to deadline up to @t. */
static void run_until(struct pair *p, uint64_t t)
{
	settle(p);
	for (;;) {
		uint64_t d = UINT64_MAX;

		if (!p->a.closed && !p->a.silent)
			d = p->a.deadline;
		if (!p->b.closed && !p->b.silent && p->b.deadline < d)
			d = p->b.deadline;
		if (d > t)
			break;
		if (d > p->now)
			p->now = d;
		settle(p);
	}
	if (p->now < t)
		p->now = t;
	settle(p);
}

static void side_init(struct pair *p, struct side *s, enum mpa_role role, const char *name)
{
	struct uiw_conn_cfg cfg;

	uiw_conn_cfg_init(&cfg, role);
	cfg.mpa.rx_hdr_min = 14;
	cfg.mpa.timeout_ns = 1 * S;
	ck_assert_int_eq(uiw_conn_init(&s->c, &cfg, &ops, s), 0);
	s->name = name;
	s->reading = 1;
	s->drained_val = 1;
	s->now = &p->now;
}

static void pair_init(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	pattern_init();
	p->now = 1000 * S;
	side_init(p, &p->a, MPA_ROLE_INITIATOR, "initiator");
	side_init(p, &p->b, MPA_ROLE_RESPONDER, "responder");
	p->a.out = &p->ab;
	p->a.in = &p->ba;
	p->b.out = &p->ba;
	p->b.in = &p->ab;
	p->a.peer = &p->b;
	p->b.peer = &p->a;
}

static void pair_destroy(struct pair *p)
{
	uiw_conn_destroy(&p->a.c);
	uiw_conn_destroy(&p->b.c);
}

/* TCP connects; the handshake runs up to the responder's Request. */
static void pair_connect(struct pair *p, const char *pd)
{
	ck_assert_int_eq(uiw_conn_start(&p->a.c, p->now, pd, pd ? strlen(pd) : 0), 0);
	ck_assert_int_eq(p->a.c.state, UIW_CONN_CONNECTING);
	ck_assert_int_eq(uiw_conn_start(&p->b.c, p->now, NULL, 0), 0);
	uiw_conn_on_connected(&p->a.c, p->now, 0, 0);
	ck_assert_int_eq(p->a.c.state, UIW_CONN_HANDSHAKE);
	settle(p);
}

/* Connected and established both ways. */
static void pair_up(struct pair *p)
{
	pair_connect(p, NULL);
	ck_assert_int_eq(p->b.n_req, 1);
	ck_assert_int_eq(uiw_conn_accept(&p->b.c, p->now, NULL, 0, 4, 4), 0);
	settle(p);
	ck_assert_int_eq(p->a.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p->b.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p->a.n_est, 1);
	ck_assert_int_eq(p->b.n_est, 1);
	/* RFC 5044 7.1.2 rule 4: the responder sends no FPDU before it
	 * received one; the initiator's first (an RTR in peer-to-peer mode)
	 * opens its send side */
	ck_assert_int_eq(send_fpdu(&p->a, 0, 0, 0), 0);
	settle(p);
	ck_assert_uint_eq(p->b.nfpdu, 1);
	p->b.nfpdu = 0;
	p->a.tx_done = 0;
}

/* Nothing but what the test expects was reported. */
static void no_errors(const struct side *s)
{
	ck_assert_int_eq(s->n_rej, 0);
	ck_assert_int_eq(s->n_unr, 0);
	ck_assert_int_eq(s->n_cerr, 0);
}

/* DISCONNECTED once, without a TERMINATE or a reset of ours, with @status:
 * 0 (a clean close) or the error that ended the stream */
static void broken_disc(const struct side *s, int status)
{
	ck_assert_int_eq(s->c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(s->n_disc, 1);
	ck_assert_int_eq(s->disc.status, status);
	ck_assert_int_eq(s->disc.term_flags, 0);
	ck_assert_int_eq(s->disc.reset, 0);
	ck_assert_int_eq(s->reset_sent, 0);
	no_errors(s);
}

/* A clean DISCONNECTED, once. */
static void clean_disc(const struct side *s)
{
	broken_disc(s, 0);
}

/* ---- handshake ---------------------------------------------------------- */

START_TEST(hs_private_data)
{
	struct pair p;

	pair_init(&p);
	pair_connect(&p, "hello");
	ck_assert_int_eq(p.b.c.state, UIW_CONN_REQUEST);
	ck_assert_int_eq(p.b.n_req, 1);
	ck_assert_int_eq(p.b.pd_len, 5);
	ck_assert_mem_eq(p.b.pd, "hello", 5);
	ck_assert_int_eq(p.b.n_est, 0);
	/* the application takes its time: nothing times out meanwhile */
	run_until(&p, p.now + 30 * S);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_REQUEST);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED); /* ...but the initiator gave up */
	ck_assert_int_eq(p.a.n_cerr, 1);
	ck_assert_int_eq(p.a.cerr_err, -ETIMEDOUT);
	pair_destroy(&p);

	pair_init(&p);
	pair_connect(&p, "hello");
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, "world!", 6, 4, 4), 0);
	ck_assert_int_eq(p.b.n_est, 1);
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, NULL, 0, 4, 4), -EINVAL);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.a.n_est, 1);
	ck_assert_int_eq(p.a.pd_len, 6);
	ck_assert_mem_eq(p.a.pd, "world!", 6);
	ck_assert_int_eq(p.a.deadline, UINT64_MAX);
	ck_assert_int_eq(p.b.deadline, UINT64_MAX);
	no_errors(&p.a);
	no_errors(&p.b);
	pair_destroy(&p);
}
END_TEST

START_TEST(hs_accept_in_upcall)
{
	struct pair p;

	pair_init(&p);
	p.b.accept_in_req = 1;
	pair_connect(&p, "x");
	ck_assert_int_eq(p.b.n_req, 1);
	ck_assert_int_eq(p.b.n_est, 1);
	ck_assert_int_eq(p.a.n_est, 1);
	ck_assert_mem_eq(p.a.pd, "in-upcall", 9);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_UP);
	pair_destroy(&p);
}
END_TEST

START_TEST(hs_reject)
{
	struct pair p;

	pair_init(&p);
	pair_connect(&p, "please");
	ck_assert_int_eq(uiw_conn_reject(&p.b.c, p.now, "no", 2), 0);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSING_EOF);
	ck_assert_int_eq(uiw_conn_reject(&p.b.c, p.now, "no", 2), -EINVAL);
	ck_assert_int_eq(uiw_conn_disconnect(&p.b.c, p.now), -EINVAL);
	settle(&p);
	/* the Reject went out, then the responder's FIN, then both closed */
	ck_assert_int_eq(p.a.n_rej, 1);
	ck_assert_int_eq(p.a.pd_len, 2);
	ck_assert_mem_eq(p.a.pd, "no", 2);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSED);
	ck_assert(p.a.closed && p.b.closed);
	ck_assert_int_eq(p.b.reset_sent, 0);
	ck_assert_int_eq(p.a.n_cerr + p.a.n_est + p.a.n_disc + p.a.n_unr, 0);
	ck_assert_int_eq(p.b.n_est + p.b.n_disc + p.b.n_lost, 0);
	run_until(&p, p.now + 60 * S); /* nothing more, ever */
	ck_assert_int_eq(p.a.n_rej, 1);
	ck_assert_int_eq(p.a.n_cerr, 0);
	pair_destroy(&p);
}
END_TEST

/* The application rejects and destroys the id before the Reject left: the
 * initiator sees the connection end in the handshake. */
START_TEST(hs_reject_then_close)
{
	struct pair p;

	pair_init(&p);
	pair_connect(&p, NULL);
	ck_assert_int_eq(uiw_conn_reject(&p.b.c, p.now, NULL, 0), 0);
	uiw_conn_abort(&p.b.c, 0);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSED);
	settle(&p);
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(p.a.n_rej, 0);
	ck_assert_int_eq(p.a.n_cerr, 1);
	ck_assert_int_eq(p.a.cerr_err, -ECONNRESET);
	ck_assert_int_eq(p.b.n_est + p.b.n_disc + p.b.n_lost, 0);
	pair_destroy(&p);
}
END_TEST

START_TEST(hs_timeout_initiator)
{
	struct pair p;

	pair_init(&p);
	p.b.silent = 1; /* accepted by the kernel, never served */
	pair_connect(&p, NULL);
	ck_assert_int_eq(p.a.deadline, p.now + 1 * S);
	run_until(&p, p.now + 1 * S - 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_HANDSHAKE);
	ck_assert_int_eq(p.a.n_cerr, 0);
	run_until(&p, p.now + 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	ck_assert(p.a.closed);
	ck_assert_int_eq(p.a.n_cerr, 1);
	ck_assert_int_eq(p.a.cerr_err, -ETIMEDOUT);
	ck_assert_int_eq(p.a.n_est + p.a.n_rej + p.a.n_disc + p.a.n_unr, 0);
	pair_destroy(&p);
}
END_TEST

START_TEST(hs_timeout_responder)
{
	struct pair p;

	pair_init(&p);
	p.a.silent = 1; /* connects, never sends its Request */
	ck_assert_int_eq(uiw_conn_start(&p.a.c, p.now, NULL, 0), 0);
	ck_assert_int_eq(uiw_conn_start(&p.b.c, p.now, NULL, 0), 0);
	run_until(&p, p.now + 1 * S - 1);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_HANDSHAKE);
	run_until(&p, p.now + 1);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSED);
	ck_assert(p.b.closed);
	/* a responder's application never heard of it */
	ck_assert_int_eq(p.b.n_req + p.b.n_est + p.b.n_cerr + p.b.n_disc + p.b.n_lost, 0);
	pair_destroy(&p);
}
END_TEST

START_TEST(hs_unreachable)
{
	struct pair p;
	struct uiw_conn_want w;

	pair_init(&p);
	ck_assert_int_eq(uiw_conn_start(&p.a.c, p.now, NULL, 0), 0);
	uiw_conn_want(&p.a.c, p.now, UIW_CONN_RX_IDLE | UIW_CONN_TX_IDLE, &w);
	ck_assert(!w.rx && !w.tx && !w.close && w.deadline == UINT64_MAX);
	uiw_conn_on_connected(&p.a.c, p.now, -ECONNREFUSED, 0);
	uiw_conn_on_connected(&p.a.c, p.now, -ECONNREFUSED, 0);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(p.a.n_unr, 1);
	ck_assert_int_eq(p.a.unr_err, -ECONNREFUSED);
	ck_assert_int_eq(p.a.n_cerr, 0);
	uiw_conn_want(&p.a.c, p.now, UIW_CONN_RX_IDLE | UIW_CONN_TX_IDLE, &w);
	ck_assert(w.close && !w.reset);
	pair_destroy(&p);
}
END_TEST

/* The layer above refuses to bind: the initiator reports CONNECT_ERROR. */
START_TEST(hs_bind_fails)
{
	struct pair p;

	pair_init(&p);
	p.a.est_ret = -ENOMEM;
	pair_connect(&p, NULL);
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, NULL, 0, 4, 4), 0);
	settle(&p);
	ck_assert_int_eq(p.a.n_cerr, 1);
	ck_assert_int_eq(p.a.cerr_err, -ENOMEM);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	/* the responder sees the initiator's FIN while up */
	ck_assert_int_eq(p.b.n_lost, 1);
	ck_assert_int_eq(p.b.lost_err, 0);
	clean_disc(&p.b);
	ck_assert_int_eq(p.a.n_disc, 0);
	pair_destroy(&p);
}
END_TEST

/* The initiator holds its first FPDU after the Reply (first_fpdu_delay). */
START_TEST(hs_hold)
{
	struct pair p;

	pair_init(&p);
	p.a.c.cfg.hold_ns = 5 * MS;
	pair_connect(&p, NULL);
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, NULL, 0, 4, 4), 0);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_HELD);
	ck_assert_int_eq(p.a.n_est, 1);
	ck_assert_int_eq(send_fpdu(&p.a, 0, 100, 0), 0);
	ck_assert_int_eq(send_fpdu(&p.b, 0, 100, 0), 0);
	settle(&p);
	ck_assert_int_eq(p.a.deadline, p.now + 5 * MS);
	ck_assert_int_eq(p.b.nfpdu, 0); /* held */
	ck_assert_int_eq(p.a.nfpdu, 0); /* and so is b's (rule 4) */
	run_until(&p, p.now + 5 * MS - 1);
	ck_assert_int_eq(p.b.nfpdu, 0);
	run_until(&p, p.now + 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.b.nfpdu, 1);
	ck_assert_int_eq(p.a.nfpdu, 1);
	pair_destroy(&p);
}
END_TEST

/* ---- established -------------------------------------------------------- */

/* 20 rounds of FPDUs both ways (round r: a sends FPDUs of 1 + r*ka % ma
 * octets, b of b0 + r*kb % mb: 0 is an empty one), each side queueing
 * until MPA's queue is full, then everything delivered in order; @copy:
 * both sides read through their own buffer (uiw_conn_on_read_copy). */
static void data_rounds(int copy, unsigned ka, size_t ma, size_t b0, unsigned kb, size_t mb)
{
	struct pair p;
	size_t off_a = 0, off_b = 0;

	pair_init(&p);
	p.a.copy_reads = p.b.copy_reads = copy;
	pair_up(&p);
	for (int round = 0; round < 20; round++) {
		size_t la = 1 + (size_t)(round * ka) % ma, lb = b0 + (size_t)(round * kb) % mb;

		while (send_fpdu(&p.a, off_a, la, 0) == 0)
			off_a += la;
		while (send_fpdu(&p.b, off_b, lb, 0) == 0)
			off_b += lb;
		settle(&p);
	}
	ck_assert_uint_gt(off_a, 100000);
	ck_assert_uint_eq(p.b.rxlen, off_a);
	ck_assert_uint_eq(p.a.rxlen, off_b);
	ck_assert_mem_eq(p.b.rxdata, pattern, off_a);
	ck_assert_mem_eq(p.a.rxdata, pattern, off_b);
	ck_assert_uint_eq(p.a.tx_done, p.b.nfpdu);
	ck_assert_uint_eq(p.b.tx_done, p.a.nfpdu);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.a.n_lost + p.b.n_lost + p.a.n_disc + p.b.n_disc, 0);
	pair_destroy(&p);
}

START_TEST(data_both_ways)
{
	data_rounds(0, 37, 1300, 0, 91, 1300);
}
END_TEST

/* The same through the caller's own buffer (uiw_conn_on_read_copy()), the
 * handshake included, in reads that split anywhere. */
START_TEST(data_copy_reads)
{
	data_rounds(1, 53, 1500, 1, 29, 900);
}
END_TEST

/* Does @s's read in flight end in the look-ahead @ahead of @len octets? */
static int lend_ends_in(const struct side *s, const uint8_t *ahead, size_t len)
{
	return s->rx_busy && s->rx_n > 0 && s->rx[s->rx_n - 1].iov_base == ahead &&
	       s->rx[s->rx_n - 1].iov_len == len;
}

/* Every read in full operation ends in a look-ahead whose size follows the
 * peer's FPDUs: UIW_CONN_AHEAD while they are large (the big buffer is
 * never allocated), UIW_CONN_AHEAD_BIG once they average under
 * UIW_CONN_SMALL_FPDU, and back.  Whatever the reads' sizes, every payload
 * octet arrives once, read in place or copied, and large FPDUs are mostly
 * read in place. */
START_TEST(data_ahead_policy)
{
	struct pair p;
	size_t off = 0, big = 10000, small = 100; /* the sink holds 1 MiB */
	const struct mpa_copy_stats *cs = &p.b.c.mpa.copies;

	pair_init(&p);
	p.a.c.cfg.mpa.emss = 16000; /* FPDUs of 10 KB: the pipe holds 16 KiB */
	pair_up(&p);
	for (int phase = 0; phase < 3; phase++) {
		size_t len = phase == 1 ? small : big;
		int rounds = phase == 1 ? 40 : 4, per = phase == 1 ? 32 : 8;
		uint64_t direct0 = 0, copied0 = 0;

		for (int round = 0; round < rounds; round++) {
			/* the first round of a phase is the policy's to turn */
			if (round == 1) {
				direct0 = cs->rx_direct;
				copied0 = cs->rx_copied;
			}
			for (int i = 0; i < per; i++) {
				ck_assert_int_eq(send_fpdu(&p.a, off, len, 0), 0);
				off += len;
			}
			settle(&p);
		}
		ck_assert_uint_eq(p.b.rxlen, off);
		if (phase == 1) {
			ck_assert_msg(lend_ends_in(&p.b, p.b.c.ahead_big, UIW_CONN_AHEAD_BIG),
				      "small FPDUs: the read does not end in the large look-ahead");
		} else {
			ck_assert_msg(lend_ends_in(&p.b, p.b.c.ahead, UIW_CONN_AHEAD),
				      "large FPDUs: the read does not end in the small look-ahead");
			/* reads of at most the pipe's 16 KiB: one FPDU and
			 * 1 KiB of the next copied each */
			ck_assert_uint_gt(cs->rx_direct - direct0, 8 * (cs->rx_copied - copied0));
		}
		if (phase == 0)
			ck_assert_ptr_null(p.b.c.ahead_big);
	}
	ck_assert_uint_eq(cs->rx_direct + cs->rx_copied, off);
	ck_assert_mem_eq(p.b.rxdata, pattern, off);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_UP);
	pair_destroy(&p);
}
END_TEST

/* A CRC error: the receiver stops delivering, drops the rest, closes. */
START_TEST(data_crc_error)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	ck_assert_int_eq(send_fpdu(&p.a, 0, 500, 0), 0);
	/* let a's send reach the pipe, corrupt it there, then deliver */
	p.b.reading = 0;
	settle(&p);
	ck_assert_uint_gt(p.ab.len, 500);
	p.ab.buf[100] ^= 0x01;
	p.b.reading = 1;
	settle(&p);
	ck_assert_int_eq(p.b.n_lost, 1);
	ck_assert_int_lt(p.b.lost_err, 0);
	ck_assert_uint_eq(p.b.nfpdu, 0);
	/* b sent FIN after its failure (its status says why: no TERMINATE
	 * at this layer); a saw the FIN and closed cleanly */
	clean_disc(&p.a);
	broken_disc(&p.b, p.b.lost_err);
	pair_destroy(&p);
}
END_TEST

/* ---- graceful close ----------------------------------------------------- */

static void graceful_from(struct side *x, struct side *y, struct pair *p)
{
	ck_assert_int_eq(send_fpdu(x, 0, 1000, 0), 0);
	ck_assert_int_eq(uiw_conn_disconnect(&x->c, p->now), 0);
	ck_assert_int_eq(x->c.state, UIW_CONN_CLOSING);
	ck_assert_int_eq(uiw_conn_disconnect(&x->c, p->now), -EINVAL);
	settle(p);
	/* x sent its data, then FIN; y delivered it, answered FIN; both over */
	ck_assert_uint_eq(y->rxlen, 1000);
	ck_assert_int_eq(y->n_lost, 1);
	ck_assert_int_eq(y->lost_err, 0);
	ck_assert_int_eq(x->n_lost, 0);
	clean_disc(x);
	clean_disc(y);
}

START_TEST(close_graceful_initiator)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	graceful_from(&p.a, &p.b, &p);
	pair_destroy(&p);
}
END_TEST

START_TEST(close_graceful_responder)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	graceful_from(&p.b, &p.a, &p);
	pair_destroy(&p);
}
END_TEST

START_TEST(close_graceful_both)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	/* the FINs cross: each side shuts before it reads the other's */
	p.a.reading = p.b.reading = 0;
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	ck_assert_int_eq(uiw_conn_disconnect(&p.b.c, p.now), 0);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_LINGER);
	ck_assert(p.ab.fin && p.ba.fin);
	p.a.reading = p.b.reading = 1;
	settle(&p);
	ck_assert_int_eq(p.a.n_lost + p.b.n_lost, 0); /* FIN came in linger: no loss */
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);
}
END_TEST

/* The layer above still queues FPDUs when asked whether it is drained:
 * they leave before the FIN, and nothing waits for another turn. */
START_TEST(close_drain_queues_more)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	p.a.queue_on_drained = 3;
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	settle(&p);
	ck_assert_int_eq(p.a.queue_on_drained, 0);
	ck_assert_uint_eq(p.b.nfpdu, 3);
	ck_assert_uint_eq(p.b.rxlen, 3 * 64);
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);
}
END_TEST

/* The peer's FIN before ours: we are still draining (the layer above has
 * work outstanding), the receive side ends, we finish and close at once. */
START_TEST(fin_before_our_shut)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	p.a.drained_val = 0;
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	ck_assert_int_eq(uiw_conn_disconnect(&p.b.c, p.now), 0);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSING_EOF);
	ck_assert_int_eq(p.a.n_lost, 1);
	ck_assert_int_eq(p.ab.fin, 0);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_LINGER);
	p.a.drained_val = 1;
	run_until(&p, p.now + 1 * MS);
	ck_assert_int_eq(p.ab.fin, 1);
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);
}
END_TEST

/* The peer's FIN after ours, late (inside the linger), and never. */
START_TEST(fin_after_our_shut)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	p.b.silent = 1; /* b's application and engine are stuck */
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER);
	ck_assert_int_eq(p.ab.fin, 1);
	ck_assert_int_eq(p.a.deadline, p.now + UIW_CONN_CLOSE_NS);
	run_until(&p, p.now + 9 * S);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER);
	p.b.silent = 0;
	settle(&p);
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);

	/* never: closed when the linger ends, not before, without a reset */
	pair_init(&p);
	pair_up(&p);
	p.b.silent = 1;
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	settle(&p);
	run_until(&p, p.now + UIW_CONN_CLOSE_NS - 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER);
	ck_assert_int_eq(p.a.n_disc, 0);
	run_until(&p, p.now + 1);
	clean_disc(&p.a);
	pair_destroy(&p);
}
END_TEST

/* The peer's FIN while up, with data still coming from it first. */
START_TEST(fin_while_up)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	ck_assert_int_eq(send_fpdu(&p.b, 0, 700, 0), 0);
	ck_assert_int_eq(uiw_conn_disconnect(&p.b.c, p.now), 0);
	settle(&p);
	ck_assert_uint_eq(p.a.rxlen, 700);
	ck_assert_mem_eq(p.a.rxdata, pattern, 700);
	ck_assert_int_eq(p.a.n_lost, 1);
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);
}
END_TEST

/* ---- abortive close ----------------------------------------------------- */

/* The peer resets while our send is blocked on its full window. */
START_TEST(rst_mid_send)
{
	struct pair p;
	size_t off = 0;

	pair_init(&p);
	pair_up(&p);
	p.b.reading = 0;
	while (send_fpdu(&p.a, off, 1200, 0) == 0)
		off += 1200;
	settle(&p);
	ck_assert(p.a.tx_busy); /* the send waits for room */
	ck_assert_uint_eq(p.ab.len, PIPE_CAP);
	uiw_conn_abort(&p.b.c, 1); /* b's application destroys its end */
	settle(&p);
	ck_assert(p.b.closed && p.b.reset_sent);
	ck_assert_int_eq(p.b.n_disc, 0); /* the application asked for it */
	ck_assert_int_eq(p.a.n_lost, 1);
	ck_assert_int_eq(p.a.lost_err, -ECONNRESET);
	/* a did not reset: the peer did, and DISCONNECTED says so */
	broken_disc(&p.a, -ECONNRESET);
	pair_destroy(&p);
}
END_TEST

/* The peer stops reading: the graceful close cannot drain, and is aborted
 * with a RST once the drain bound passed. */
START_TEST(zero_window_drain_abort)
{
	struct pair p;
	size_t off = 0;

	pair_init(&p);
	pair_up(&p);
	p.b.reading = 0;
	while (send_fpdu(&p.a, off, 1200, 0) == 0)
		off += 1200;
	settle(&p);
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	settle(&p);
	ck_assert_int_eq(p.a.deadline, p.now + UIW_CONN_CLOSE_NS);
	run_until(&p, p.now + UIW_CONN_CLOSE_NS - 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSING);
	ck_assert_int_eq(p.ab.fin, 0);
	run_until(&p, p.now + 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	ck_assert(p.a.closed && p.a.reset_sent);
	ck_assert_int_eq(p.a.n_disc, 1);
	ck_assert_int_eq(p.a.disc.reset, 1);
	ck_assert_int_eq(p.a.disc.term_flags, 0);
	/* not a clean close: the drain bound passed (docs/CONN.md question 1) */
	ck_assert_int_eq(p.a.disc.status, -ETIMEDOUT);
	/* b's read fails with the reset when it reads again */
	p.b.reading = 1;
	settle(&p);
	ck_assert_int_eq(p.b.n_lost, 1);
	ck_assert_int_eq(p.b.lost_err, -ECONNRESET);
	broken_disc(&p.b, -ECONNRESET);
	ck_assert_int_eq(p.a.n_disc, 1);
	pair_destroy(&p);
}
END_TEST

/* A local send error, the peer silent: the read side is bounded by the
 * error linger (the engine today waits for the read without a bound). */
START_TEST(send_error_bounded)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	p.b.silent = 1;
	p.a.tx_fail = -EIO;
	ck_assert_int_eq(send_fpdu(&p.a, 0, 100, 0), 0);
	settle(&p);
	ck_assert_int_eq(p.a.n_lost, 1);
	ck_assert_int_eq(p.a.lost_err, -EIO);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER_DISCARD);
	ck_assert_int_eq(p.ab.fin, 0); /* the send side failed: no FIN asked */
	run_until(&p, p.now + UIW_CONN_CLOSE_ERR_NS - 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_LINGER_DISCARD);
	run_until(&p, p.now + 1);
	broken_disc(&p.a, -EIO);
	pair_destroy(&p);
}
END_TEST

/* A QP error after a graceful close keeps the close's drain bound (the
 * engine's first-setting-wins rule, docs/CONN.md open question 3). */
START_TEST(close_then_qp_error)
{
	struct pair p;
	size_t off = 0;

	pair_init(&p);
	pair_up(&p);
	p.b.reading = 0;
	while (send_fpdu(&p.a, off, 1200, 0) == 0)
		off += 1200;
	settle(&p);
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), 0);
	run_until(&p, p.now + 1 * S);
	uiw_conn_qp_error(&p.a.c, p.now);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSING_DISCARD);
	ck_assert_int_eq(p.a.deadline, p.now - 1 * S + UIW_CONN_CLOSE_NS);
	run_until(&p, p.now + UIW_CONN_CLOSE_NS - 1 * S);
	ck_assert(p.a.closed && p.a.reset_sent);
	ck_assert_int_eq(p.a.disc.reset, 1);
	pair_destroy(&p);
}
END_TEST

/* Peer-to-peer: the responder waits for the initiator's RTR; it never
 * comes: the responder's TERMINATE goes out, FIN, the linger ends. */
START_TEST(p2p_rtr_timeout)
{
	struct pair p;

	pair_init(&p);
	p.a.c.cfg.mpa.p2p = 1;
	p.b.lost_term = 1;
	pair_connect(&p, NULL);
	ck_assert_int_eq(p.b.n_req, 1);
	p.a.silent = 1; /* never reads the Reply, never sends its RTR */
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, NULL, 0, 4, 4), 0);
	settle(&p);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_UP);
	ck_assert_int_eq(p.b.deadline, p.now + 1 * S);
	run_until(&p, p.now + 1 * S - 1);
	ck_assert_int_eq(p.b.n_lost, 0);
	run_until(&p, p.now + 1);
	ck_assert_int_eq(p.b.n_lost, 1);
	ck_assert_int_eq(p.b.lost_err, -ETIMEDOUT);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_LINGER_DISCARD);
	ck_assert_int_eq(p.ba.fin, 1);
	run_until(&p, p.now + UIW_CONN_CLOSE_ERR_NS);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(p.b.n_disc, 1);
	ck_assert_int_eq(p.b.disc.term_flags, UIW_CONN_TERM_SENT);
	ck_assert_int_eq(p.b.disc.status, -ECONNABORTED);
	ck_assert_int_eq(p.b.disc.reset, 0);
	pair_destroy(&p);
}
END_TEST

/* RFC 5044 rule 4 holds a responder's FPDUs until it received one; a
 * graceful close then sends the FIN without them (docs/CONN.md open
 * question 6): this test pins today's behaviour. */
START_TEST(responder_close_before_first_fpdu)
{
	struct pair p;

	pair_init(&p);
	pair_connect(&p, NULL);
	ck_assert_int_eq(uiw_conn_accept(&p.b.c, p.now, NULL, 0, 4, 4), 0);
	settle(&p);
	ck_assert_int_eq(send_fpdu(&p.b, 0, 300, 0), 0);
	ck_assert_int_eq(uiw_conn_disconnect(&p.b.c, p.now), 0);
	settle(&p);
	ck_assert_uint_eq(p.a.rxlen, 0);
	ck_assert_uint_eq(p.b.tx_done, 0);
	ck_assert_uint_gt(mpa_tx_space(&p.b.c.mpa), 0);
	clean_disc(&p.a);
	clean_disc(&p.b);
	pair_destroy(&p);
}
END_TEST

/* ---- TERMINATE ---------------------------------------------------------- */

/* A protocol error: the receiver queues a TERMINATE, the peer gets it. */
START_TEST(term_sent_received)
{
	struct pair p;

	pair_init(&p);
	pair_up(&p);
	p.b.lost_term = 1;
	ck_assert_int_eq(send_fpdu(&p.a, 0, 500, 0), 0);
	p.b.reading = 0;
	settle(&p);
	p.ab.buf[200] ^= 0x80; /* the CRC fails at b */
	p.b.reading = 1;
	settle(&p);
	ck_assert_int_eq(p.b.n_lost, 1);
	ck_assert_int_eq(p.b.c.state, UIW_CONN_CLOSED);
	ck_assert_int_eq(p.b.n_disc, 1);
	ck_assert_int_eq(p.b.disc.term_flags, UIW_CONN_TERM_SENT);
	ck_assert_int_eq(p.b.disc.status, -ECONNABORTED);
	ck_assert_int_eq(p.b.disc.term_layer, 2);
	ck_assert_int_eq(p.b.disc.term_etype, 3);
	ck_assert_int_eq(p.b.disc.term_ecode, 4);
	ck_assert_int_eq(p.b.disc.reset, 0);
	ck_assert_int_eq(p.a.n_disc, 1);
	ck_assert_int_eq(p.a.disc.term_flags, UIW_CONN_TERM_RECEIVED);
	ck_assert_int_eq(p.a.disc.status, -ECONNABORTED);
	ck_assert_int_eq(p.a.disc.term_layer, 1);
	ck_assert_int_eq(p.a.disc.term_etype, 2);
	ck_assert_int_eq(p.a.disc.term_ecode, 3);
	ck_assert_int_eq(p.a.reset_sent + p.b.reset_sent, 0);
	pair_destroy(&p);
}
END_TEST

/* The TERMINATE cannot even be queued (the send side is full): reset. */
START_TEST(term_abandoned)
{
	struct pair p;
	size_t off = 0;

	pair_init(&p);
	pair_up(&p);
	p.b.reading = 0;
	do {
		while (send_fpdu(&p.a, off, 1200, 0) == 0)
			off += 1200;
		settle(&p);
	} while (mpa_tx_space(&p.a.c.mpa) > 0);
	ck_assert_int_eq(send_fpdu(&p.a, 0, 0, TERM_MARK), -EAGAIN);
	uiw_conn_term(&p.a.c, p.now, UIW_CONN_TERM_KIND_ABANDONED, 2, 2, 2);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSED);
	settle(&p);
	ck_assert(p.a.closed && p.a.reset_sent);
	ck_assert_int_eq(p.a.n_disc, 1);
	ck_assert_int_eq(p.a.disc.term_flags, UIW_CONN_TERM_SENT | UIW_CONN_TERM_RESET);
	ck_assert_int_eq(p.a.disc.status, -ECONNABORTED);
	ck_assert_int_eq(p.a.disc.term_ecode, 2);
	ck_assert_int_eq(p.a.disc.reset, 1);
	pair_destroy(&p);
}
END_TEST

/* The TERMINATE is queued behind data the peer never reads: after the
 * error drain bound (2 s) the connection is reset. */
START_TEST(term_queued_not_sent)
{
	struct pair p;
	size_t off = 0;

	pair_init(&p);
	pair_up(&p);
	p.b.reading = 0;
	for (int i = 0; i < 20; i++, off += 1200)
		ck_assert_int_eq(send_fpdu(&p.a, off, 1200, 0), 0);
	settle(&p);
	ck_assert_int_eq(send_fpdu(&p.a, 0, 0, TERM_MARK), 0);
	uiw_conn_term(&p.a.c, p.now, UIW_CONN_TERM_KIND_SENT, 2, 2, 9);
	uiw_conn_qp_error(&p.a.c, p.now);
	settle(&p);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSING_DISCARD);
	run_until(&p, p.now + UIW_CONN_CLOSE_ERR_NS - 1);
	ck_assert_int_eq(p.a.c.state, UIW_CONN_CLOSING_DISCARD);
	run_until(&p, p.now + 1);
	ck_assert(p.a.closed && p.a.reset_sent);
	ck_assert_int_eq(p.a.disc.term_flags, UIW_CONN_TERM_SENT | UIW_CONN_TERM_RESET);
	ck_assert_int_eq(p.a.disc.term_ecode, 9);
	ck_assert_int_eq(p.a.disc.reset, 1);
	ck_assert_int_eq(p.a.n_disc, 1);
	pair_destroy(&p);
}
END_TEST

/* ---- each event once ---------------------------------------------------- */

START_TEST(events_once)
{
	struct pair p;
	struct uiw_conn_want w;

	pair_init(&p);
	pair_up(&p);
	graceful_from(&p.a, &p.b, &p);
	/* inputs after the end change nothing and report nothing */
	uiw_conn_on_read(&p.a.c, p.now, 0);
	uiw_conn_on_read(&p.a.c, p.now, -ECONNRESET);
	uiw_conn_on_sent(&p.a.c, p.now, -EPIPE);
	uiw_conn_on_timer(&p.a.c, UINT64_MAX - 1);
	uiw_conn_qp_error(&p.a.c, p.now);
	uiw_conn_term(&p.a.c, p.now, UIW_CONN_TERM_KIND_ABANDONED, 1, 1, 1);
	ck_assert_int_eq(uiw_conn_disconnect(&p.a.c, p.now), -EINVAL);
	uiw_conn_abort(&p.a.c, 1);
	uiw_conn_want(&p.a.c, p.now, UIW_CONN_RX_IDLE | UIW_CONN_TX_IDLE, &w);
	ck_assert(w.close && !w.rx && !w.tx && !w.shut_wr);
	ck_assert_int_eq(p.a.n_disc, 1);
	ck_assert_int_eq(p.a.n_est, 1);
	ck_assert_int_eq(p.a.n_lost, 0);
	no_errors(&p.a);
	pair_destroy(&p);
}
END_TEST

Suite *conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("handshake");

	tcase_add_test(tc, hs_private_data);
	tcase_add_test(tc, hs_accept_in_upcall);
	tcase_add_test(tc, hs_reject);
	tcase_add_test(tc, hs_reject_then_close);
	tcase_add_test(tc, hs_timeout_initiator);
	tcase_add_test(tc, hs_timeout_responder);
	tcase_add_test(tc, hs_unreachable);
	tcase_add_test(tc, hs_bind_fails);
	tcase_add_test(tc, hs_hold);
	suite_add_tcase(s, tc);
	tc = tcase_create("established");
	tcase_add_test(tc, data_both_ways);
	tcase_add_test(tc, data_copy_reads);
	tcase_add_test(tc, data_ahead_policy);
	tcase_add_test(tc, data_crc_error);
	suite_add_tcase(s, tc);
	tc = tcase_create("close");
	tcase_add_test(tc, close_graceful_initiator);
	tcase_add_test(tc, close_graceful_responder);
	tcase_add_test(tc, close_graceful_both);
	tcase_add_test(tc, close_drain_queues_more);
	tcase_add_test(tc, fin_before_our_shut);
	tcase_add_test(tc, fin_after_our_shut);
	tcase_add_test(tc, fin_while_up);
	tcase_add_test(tc, rst_mid_send);
	tcase_add_test(tc, zero_window_drain_abort);
	tcase_add_test(tc, send_error_bounded);
	tcase_add_test(tc, close_then_qp_error);
	tcase_add_test(tc, responder_close_before_first_fpdu);
	suite_add_tcase(s, tc);
	tc = tcase_create("terminate");
	tcase_add_test(tc, term_sent_received);
	tcase_add_test(tc, term_abandoned);
	tcase_add_test(tc, term_queued_not_sent);
	tcase_add_test(tc, p2p_rtr_timeout);
	tcase_add_test(tc, events_once);
	suite_add_tcase(s, tc);
	return s;
}
