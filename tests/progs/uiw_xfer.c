/* SPDX-License-Identifier: MIT */
/*
 * uiw_xfer - bulk RDMA Write transfer with end-to-end verification, for the
 * network-namespace test (tests/sh/netns.sh) and by hand.
 *
 *   uiw_xfer -s [-a ADDR] [-p PORT] [-r RING] [--slots N]
 *   uiw_xfer -c ADDR -p PORT -b TOTAL [-m MSG] [--seed N] [--verify pattern|crc32c]
 *
 * The server registers a ring (default 64 MiB) split into slots (default 4)
 * and announces its address, STag and geometry in the MPA Reply's private
 * data.  The client RDMA Writes round after round: round r fills slot
 * r % slots with a pattern seeded by (seed, r), every 64-bit word a function
 * of its offset, so stale, misplaced or corrupted data shows.  After the
 * Writes of a round the client Sends a message naming the round; RDMAP
 * delivers it after the Writes are placed, the server checks the slot (every
 * octet against the pattern, or a CRC32C the client computed the same way)
 * and answers with a Send.  A slot is written again only after the server
 * answered for its previous round, so up to `slots` rounds are in flight and
 * the checking overlaps the transfer.  Any mismatch, error completion or
 * unexpected CM event ends both sides with a message and exit status 1; no
 * progress for --timeout seconds (default 30) is an error too.  When the
 * connection is lost, the program waits (up to 10 s) for the completion of
 * every work request still posted and reports how many completed with an
 * error status and how long after the first sign of the loss the last came.
 *
 * The wire structures are in host byte order: both ends run this program on
 * one machine (the magic number catches anything else).
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

#define XF_MAGIC     0x58574955u /* "UIWX" */
#define XF_VERSION   1
#define XF_RING_DEF  (64ull << 20)
#define XF_SLOTS_DEF 4
#define XF_SLOTS_MAX 16
#define XF_MSG_DEF   (1u << 20)
#define XF_SQ_DEPTH  256
#define XF_RQ_DEPTH  (XF_SLOTS_MAX + 2)
#define XF_MSGBUF    64 /* one control message */
#define XF_NBUF	     (2 * XF_SLOTS_MAX + 2)
#define XF_ALIGN     4096

enum xf_verify { XF_VERIFY_PATTERN = 0, XF_VERIFY_CRC = 1 };

/* Client -> server, in the MPA Request. */
struct xf_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t total;
	uint64_t seed;
	uint32_t msg;
	uint32_t verify;
};

/* Server -> client, in the MPA Reply. */
struct xf_welcome {
	uint32_t magic;
	uint32_t version;
	uint64_t ring_addr;
	uint64_t slot_size;
	uint32_t rkey;
	uint32_t slots;
};

enum xf_type { XF_ROUND = 1, XF_ACK = 2 };

/* Client -> server after a round's Writes (Send); server -> client (Send). */
struct xf_msg {
	uint32_t magic;
	uint32_t type;
	uint64_t round;
	uint64_t len;
	uint32_t crc;	   /* XF_ROUND: CRC32C of the round (--verify crc32c) */
	uint32_t status;   /* XF_ACK: 0 verified, else 1 */
	uint64_t bad_off;  /* XF_ACK, status 1: offset of the first bad octet in the slot */
	uint8_t want, got; /* ... its expected and found values */
};

/* Per-process options and objects. */
struct xf {
	/* options */
	int server;
	const char *addr;
	unsigned port;
	uint64_t total;
	uint32_t msg;
	uint64_t seed;
	int seed_set;
	enum uiw_crc_policy crc;
	enum xf_verify verify;
	uint64_t ring;
	unsigned slots;
	int timeout_s;
	uint64_t inject;	  /* client: corrupt one octet of this round + 1 (0: none) */
	unsigned user_timeout_ms; /* TCP_USER_TIMEOUT of the connection (0: default) */
	unsigned keepalive_ms;	  /* TCP keepalive (0: off) */
	/* objects */
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_comp_channel *ch;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_cm_id *lid, *id;
	uint8_t *data; /* server: the ring; client: the source, as large */
	struct uiw_mr *data_mr;
	uint8_t *msgs; /* XF_NBUF send buffers, then XF_RQ_DEPTH receive buffers */
	struct uiw_mr *msg_mr;
	/* geometry */
	uint64_t slot_size;
	uint64_t rounds;
	/* progress */
	uint64_t last_progress_ms;
	unsigned sq_out; /* signaled send WRs not completed yet */
	unsigned rq_out; /* receive WRs posted, not completed yet */
	int lost_event;	 /* xf_wait_wc: the CM event that ended the connection */
	int lost_status;
	const char *who;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *g_who = "uiw_xfer";

__attribute__((format(printf, 1, 2))) static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", g_who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

__attribute__((format(printf, 1, 2))) static void info(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", g_who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* ---- the pattern ---------------------------------------------------------- */

/* splitmix64's finalizer: a bijection of 64-bit words that mixes well. */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

#define XF_GOLDEN 0x9E3779B97F4A7C15ull

static uint64_t round_base(uint64_t seed, uint64_t round)
{
	return mix64(seed ^ mix64((round + 1) * 0xD1B54A32D192ED03ull));
}

/* Word @i of a round; stored little-endian so octet k of the round is
 * byte k % 8 of word k / 8 on any host. */
static inline uint64_t pat_word(uint64_t base, uint64_t i)
{
	return mix64(base + i * XF_GOLDEN);
}

static void pat_fill(uint8_t *p, uint64_t len, uint64_t seed, uint64_t round)
{
	uint64_t base = round_base(seed, round), n = len / 8, i;

	for (i = 0; i < n; i++) {
		uint64_t w = htole64(pat_word(base, i));

		memcpy(p + i * 8, &w, 8);
	}
	if (len % 8) {
		uint64_t w = pat_word(base, n);

		for (uint64_t k = 0; k < len % 8; k++)
			p[n * 8 + k] = (uint8_t)(w >> (8 * k));
	}
}

/* Returns the offset of the first octet of @p that differs from the
 * pattern, or @len when all match. */
static uint64_t pat_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t round)
{
	uint64_t base = round_base(seed, round), n = len / 8, i, off;

	for (i = 0; i < n; i++) {
		uint64_t w = htole64(pat_word(base, i)), v;

		memcpy(&v, p + i * 8, 8);
		if (v != w)
			break;
	}
	for (off = i * 8; off < len; off++)
		if (p[off] != (uint8_t)(pat_word(base, off / 8) >> (8 * (off % 8))))
			return off;
	return len;
}

static uint8_t pat_octet(uint64_t seed, uint64_t round, uint64_t off)
{
	return (uint8_t)(pat_word(round_base(seed, round), off / 8) >> (8 * (off % 8)));
}

/* ---- completions and events, every wait bounded ------------------------ */

static const char *wc_status_str(enum uiw_wc_status s)
{
	switch (s) {
	case UIW_WC_SUCCESS:
		return "SUCCESS";
	case UIW_WC_LOC_LEN_ERR:
		return "LOC_LEN_ERR";
	case UIW_WC_LOC_QP_OP_ERR:
		return "LOC_QP_OP_ERR";
	case UIW_WC_LOC_PROT_ERR:
		return "LOC_PROT_ERR";
	case UIW_WC_WR_FLUSH_ERR:
		return "WR_FLUSH_ERR";
	case UIW_WC_REM_INV_REQ_ERR:
		return "REM_INV_REQ_ERR";
	case UIW_WC_REM_ACCESS_ERR:
		return "REM_ACCESS_ERR";
	case UIW_WC_REM_OP_ERR:
		return "REM_OP_ERR";
	case UIW_WC_FATAL_ERR:
		return "FATAL_ERR";
	case UIW_WC_GENERAL_ERR:
		return "GENERAL_ERR";
	}
	return "?";
}

static void report_wc(const struct uiw_wc *wc, const char *what)
{
	if (wc->status == UIW_WC_WR_FLUSH_ERR)
		err("%s: a work request was flushed: the connection closed, or the QP failed",
		    what);
	if (wc->wc_flags & UIW_WC_TERM)
		err("%s: completion status %s (%d), opcode %d, wr_id 0x%" PRIx64
		    ", TERMINATE layer %u type %u code %u",
		    what, wc_status_str(wc->status), (int)wc->status, (int)wc->opcode, wc->wr_id,
		    wc->term_layer, wc->term_etype, wc->term_ecode);
	else
		err("%s: completion status %s (%d), opcode %d, wr_id 0x%" PRIx64, what,
		    wc_status_str(wc->status), (int)wc->status, (int)wc->opcode, wc->wr_id);
}

/*
 * Up to @n completions into @wc; waits on the completion channel and the CM
 * event fd.  Returns the count (> 0), -ETIMEDOUT after timeout_s seconds
 * without any completion, -ECONNRESET when the connection ended (a CM event
 * arrived while the CQ was empty; reported), or another -errno.
 */
static int xf_wait_wc(struct xf *x, struct uiw_wc *wc, int n)
{
	for (;;) {
		struct pollfd pfd[2];
		int64_t left;
		int ret;

		ret = uiw_poll_cq(x->cq, n, wc);
		if (ret > 0) {
			x->last_progress_ms = now_ms();
			return ret;
		}
		if (ret < 0) {
			err("uiw_poll_cq: %s", strerror(-ret));
			return ret;
		}
		if (x->id) {
			struct uiw_cm_event ev;

			ret = uiw_get_cm_event(x->ctx, &ev, 0);
			if (ret == 0) {
				err("unexpected CM event %s (status %d: %s)",
				    uiw_event_str(ev.event), ev.status, strerror(-ev.status));
				x->lost_event = (int)ev.event;
				x->lost_status = ev.status;
				return -ECONNRESET;
			}
		}
		ret = uiw_req_notify_cq(x->cq, 0);
		if (ret) {
			err("uiw_req_notify_cq: %s", strerror(-ret));
			return ret;
		}
		ret = uiw_poll_cq(x->cq, n, wc);
		if (ret != 0) {
			if (ret > 0)
				x->last_progress_ms = now_ms();
			return ret;
		}
		left = (int64_t)(x->last_progress_ms + (uint64_t)x->timeout_s * 1000) -
		       (int64_t)now_ms();
		if (left <= 0) {
			err("no progress for %d s", x->timeout_s);
			return -ETIMEDOUT;
		}
		pfd[0] = (struct pollfd){.fd = x->ch->fd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = uiw_cm_event_fd(x->ctx), .events = POLLIN};
		ret = poll(pfd, 2, left > 1000 ? 1000 : (int)left);
		if (ret < 0 && errno != EINTR) {
			err("poll: %s", strerror(errno));
			return -errno;
		}
		if (ret > 0 && (pfd[0].revents & POLLIN)) {
			struct uiw_cq *ecq;
			void *ectx;

			ret = uiw_get_cq_event(x->ch, &ecq, &ectx);
			if (ret) {
				err("uiw_get_cq_event: %s", strerror(-ret));
				return ret;
			}
			uiw_ack_cq_events(ecq, 1);
		}
	}
}

/* The next CM event, waiting up to timeout_s; -ETIMEDOUT reported. */
static int xf_wait_event(struct xf *x, struct uiw_cm_event *ev, const char *what)
{
	int ret = uiw_get_cm_event(x->ctx, ev, x->timeout_s * 1000);

	if (ret == -ETIMEDOUT)
		err("no CM event within %d s (waiting for %s)", x->timeout_s, what);
	else if (ret)
		err("uiw_get_cm_event: %s", strerror(-ret));
	return ret;
}

/* ---- setup and teardown ---------------------------------------------------- */

static int xf_setup(struct xf *x)
{
	struct uiw_context_attr ca = {.crc = x->crc, .tcp_user_timeout_ms = x->user_timeout_ms,
				   .tcp_keepalive_ms = x->keepalive_ms};
	struct uiw_qp_init_attr qa = {0};
	size_t msgs_len = (size_t)(XF_NBUF + XF_RQ_DEPTH) * XF_MSGBUF;
	int ret;

	ret = uiw_open_context(&x->ctx, &ca);
	if (ret) {
		err("uiw_open_context: %s", strerror(-ret));
		return ret;
	}
	ret = uiw_alloc_pd(x->ctx, &x->pd);
	if (!ret)
		ret = uiw_create_comp_channel(x->ctx, &x->ch);
	if (!ret)
		ret = uiw_create_cq(x->ctx, XF_SQ_DEPTH + XF_RQ_DEPTH + 16, x, x->ch, &x->cq);
	if (ret) {
		err("PD/channel/CQ: %s", strerror(-ret));
		return ret;
	}
	qa.send_cq = x->cq;
	qa.recv_cq = x->cq;
	qa.cap.max_send_wr = XF_SQ_DEPTH;
	qa.cap.max_recv_wr = XF_RQ_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = uiw_create_qp(x->pd, &qa, &x->qp);
	if (ret) {
		err("uiw_create_qp: %s", strerror(-ret));
		return ret;
	}
	if (posix_memalign((void **)&x->msgs, XF_ALIGN, msgs_len)) {
		err("cannot allocate %zu octets", msgs_len);
		return -ENOMEM;
	}
	memset(x->msgs, 0, msgs_len);
	ret = uiw_reg_mr(x->pd, x->msgs, msgs_len, UIW_ACCESS_LOCAL_WRITE, &x->msg_mr);
	if (ret) {
		err("uiw_reg_mr: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* The server's ring, or the client's source (as large as the ring). */
static int xf_setup_data(struct xf *x, uint64_t len)
{
	int ret;

	if (len > SIZE_MAX || posix_memalign((void **)&x->data, XF_ALIGN, (size_t)len)) {
		err("cannot allocate %" PRIu64 " octets", len);
		return -ENOMEM;
	}
	memset(x->data, 0, (size_t)len);
	ret = uiw_reg_mr(x->pd, x->data, (size_t)len,
			 UIW_ACCESS_LOCAL_WRITE | (x->server ? UIW_ACCESS_REMOTE_WRITE : 0),
			 &x->data_mr);
	if (ret)
		err("uiw_reg_mr (%" PRIu64 " octets): %s", len, strerror(-ret));
	return ret;
}

/* Frees what exists; returns 0, or the first error (reported). */
static int xf_teardown(struct xf *x)
{
	int ret, first = 0;

#define XF_DO(call)                                           \
	do {                                                  \
		ret = (call);                                 \
		if (ret) {                                    \
			err("%s: %s", #call, strerror(-ret)); \
			if (!first)                           \
				first = ret;                  \
		}                                             \
	} while (0)
	if (x->id)
		XF_DO(uiw_destroy_id(x->id));
	if (x->lid)
		XF_DO(uiw_destroy_id(x->lid));
	if (x->qp)
		XF_DO(uiw_destroy_qp(x->qp));
	if (x->data_mr)
		XF_DO(uiw_dereg_mr(x->data_mr));
	if (x->msg_mr)
		XF_DO(uiw_dereg_mr(x->msg_mr));
	if (x->cq)
		XF_DO(uiw_destroy_cq(x->cq));
	if (x->ch)
		XF_DO(uiw_destroy_comp_channel(x->ch));
	if (x->pd)
		XF_DO(uiw_dealloc_pd(x->pd));
	if (x->ctx)
		XF_DO(uiw_close_context(x->ctx));
#undef XF_DO
	free(x->data);
	free(x->msgs);
	return first;
}

static uint8_t *sbuf(struct xf *x, uint64_t i)
{
	return x->msgs + (i % XF_NBUF) * XF_MSGBUF;
}

static uint8_t *rbuf(struct xf *x, uint64_t i)
{
	return x->msgs + (XF_NBUF + i) * XF_MSGBUF;
}

#define WR_WRITE 0x1000000000000000ull
#define WR_SEND	 0x2000000000000000ull
#define WR_RECV	 0x3000000000000000ull
#define WR_KIND	 0xf000000000000000ull

static int post_recv(struct xf *x, unsigned i)
{
	struct uiw_sge sge = {(uintptr_t)rbuf(x, i), XF_MSGBUF, x->msg_mr->lkey};
	struct uiw_recv_wr wr = {.wr_id = WR_RECV | i, .sg_list = &sge, .num_sge = 1};
	int ret = uiw_post_recv(x->qp, &wr, NULL);

	if (ret)
		err("uiw_post_recv: %s", strerror(-ret));
	else
		x->rq_out++;
	return ret;
}

static int post_msg(struct xf *x, uint64_t i, const struct xf_msg *m)
{
	struct uiw_sge sge = {(uintptr_t)sbuf(x, i), sizeof(*m), x->msg_mr->lkey};
	struct uiw_send_wr wr = {
		.wr_id = WR_SEND | i,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = UIW_WR_SEND,
		.send_flags = UIW_SEND_SIGNALED,
	};
	int ret;

	memcpy(sbuf(x, i), m, sizeof(*m));
	ret = uiw_post_send(x->qp, &wr, NULL);
	if (ret)
		err("uiw_post_send (Send): %s", strerror(-ret));
	else
		x->sq_out++;
	return ret;
}

static int msg_ok(const struct uiw_wc *wc, const struct xf_msg *m, enum xf_type type)
{
	return wc->byte_len == sizeof(*m) && m->magic == XF_MAGIC && m->type == (uint32_t)type;
}

/* ---- a lost connection: every posted work request must complete ---------- */

#define XF_DRAIN_S 10 /* how long xf_lost() waits for the rest */

/* Up to @n completions, waiting until @deadline_ms at most; CM events are
 * taken and remembered (the first) on the way.  Returns the count, 0 at
 * the deadline, or -errno. */
static int xf_wait_wc_until(struct xf *x, struct uiw_wc *wc, int n, uint64_t deadline_ms)
{
	for (;;) {
		struct uiw_cm_event ev;
		struct pollfd pfd[2];
		int64_t left;
		int ret;

		ret = uiw_poll_cq(x->cq, n, wc);
		if (ret)
			return ret;
		while (x->id && uiw_get_cm_event(x->ctx, &ev, 0) == 0)
			if (x->lost_event < 0) {
				x->lost_event = (int)ev.event;
				x->lost_status = ev.status;
			}
		ret = uiw_req_notify_cq(x->cq, 0);
		if (!ret)
			ret = uiw_poll_cq(x->cq, n, wc);
		if (ret)
			return ret;
		left = (int64_t)deadline_ms - (int64_t)now_ms();
		if (left <= 0)
			return 0;
		pfd[0] = (struct pollfd){.fd = x->ch->fd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = uiw_cm_event_fd(x->ctx), .events = POLLIN};
		ret = poll(pfd, 2, left > 100 ? 100 : (int)left);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0 && (pfd[0].revents & POLLIN)) {
			struct uiw_cq *ecq;
			void *ectx;

			if (!uiw_get_cq_event(x->ch, &ecq, &ectx))
				uiw_ack_cq_events(ecq, 1);
		}
	}
}

/*
 * The connection is lost: an error completion (@wc[0], then the rest of
 * its batch, @n in all) or a CM event (@n 0, x->lost_event).  Takes the
 * completion of every work request still posted, for up to XF_DRAIN_S
 * seconds, and reports on one line how many there were, how many
 * completed with an error status and how long after the first sign of the
 * loss the last one came (netns.sh reads the line).  Returns -EIO, or
 * -ETIMEDOUT when some work request never completed.
 */
static int xf_lost(struct xf *x, const struct uiw_wc *wc, int n)
{
	unsigned posted = x->sq_out + x->rq_out, errs = 0, flushed = 0, ok = 0, early = 0, missing;
	uint64_t t0 = now_ms(), t_last = t0;
	struct uiw_wc more[64];
	char first[96];

	if (n > 0)
		snprintf(first, sizeof(first), "a %s completion", wc_status_str(wc[0].status));
	else
		snprintf(first, sizeof(first), "CM event %s, status %d",
			 x->lost_event >= 0 ? uiw_event_str((enum uiw_cm_event_type)x->lost_event)
					    : "?",
			 x->lost_status);
	for (;;) {
		for (int i = 0; i < n; i++) {
			switch (wc[i].wr_id & WR_KIND) {
			case WR_WRITE:
			case WR_SEND:
				if (x->sq_out)
					x->sq_out--;
				break;
			case WR_RECV:
				if (x->rq_out)
					x->rq_out--;
				break;
			default:
				break;
			}
			if (wc[i].status == UIW_WC_SUCCESS) {
				/* completions come in order: a success before
				 * the first error was done before the loss (the
				 * first sign was a CM event that overtook it) */
				if (errs)
					ok++;
				else
					posted--, early++;
			} else {
				errs++;
				flushed += wc[i].status == UIW_WC_WR_FLUSH_ERR;
			}
			t_last = now_ms();
		}
		if (!x->sq_out && !x->rq_out)
			break;
		n = xf_wait_wc_until(x, more, (int)(sizeof(more) / sizeof(more[0])),
				     t0 + XF_DRAIN_S * 1000);
		if (n <= 0) {
			if (n < 0)
				err("uiw_poll_cq: %s", strerror(-n));
			break;
		}
		wc = more;
	}
	missing = x->sq_out + x->rq_out;
	err("connection lost (first sign: %s): %u work requests were posted, %u completed "
	    "with an error status (%u flushed), %u successfully, %u never (waited up to %d s); "
	    "the last %.3f s after the first sign (%u more had completed successfully before "
	    "the loss)",
	    first, posted, errs, flushed, ok, missing, XF_DRAIN_S, (double)(t_last - t0) / 1000.0,
	    early);
	return missing ? -ETIMEDOUT : -EIO;
}

static void print_final(struct xf *x, uint64_t bytes, double secs)
{
	printf("%s: %" PRIu64 " bytes in %.3f s: %.3f GB/s (%" PRIu64 " rounds of up to %" PRIu64
	       " octets, verify %s, seed 0x%" PRIx64 ")\n",
	       x->who, bytes, secs, secs > 0 ? (double)bytes / secs / 1e9 : 0.0, x->rounds,
	       x->slot_size, x->verify == XF_VERIFY_CRC ? "crc32c" : "pattern", x->seed);
	fflush(stdout);
}

/* Progress every ~10% of @total; @next_pct is the next mark. */
static void progress(struct xf *x, uint64_t done, unsigned *next_pct, double t0)
{
	if (done * 100 < (uint64_t)*next_pct * x->total && done != x->total)
		return;
	while (*next_pct <= 100 && done * 100 >= (uint64_t)*next_pct * x->total)
		*next_pct += 10;
	{
		double dt = now_s() - t0;

		info("%3u%% %" PRIu64 " bytes verified, %.2f s, %.3f GB/s",
		     (unsigned)(done * 100 / x->total), done, dt,
		     dt > 0 ? (double)done / dt / 1e9 : 0.0);
	}
}

/* ---- server ---------------------------------------------------------------- */

static int serve(struct xf *x)
{
	struct uiw_cm_event ev;
	struct xf_hello h;
	struct xf_welcome w = {0};
	struct uiw_conn_param cp = {0};
	struct uiw_wc wc[32];
	uint64_t round = 0, verified = 0;
	unsigned next_pct = 10;
	double t0 = 0, t_end;
	int ret;

	x->slot_size = (x->ring / x->slots) & ~(uint64_t)(XF_ALIGN - 1);
	ret = xf_setup(x);
	if (!ret)
		ret = xf_setup_data(x, x->slot_size * x->slots);
	if (ret)
		return ret;
	ret = uiw_create_id(x->ctx, x, &x->lid);
	if (!ret)
		ret = uiw_listen(x->lid, x->addr, (uint16_t)x->port, 4);
	if (ret) {
		err("listen on %s port %u: %s", x->addr ? x->addr : "0.0.0.0", x->port,
		    strerror(-ret));
		return ret;
	}
	printf("uiw_xfer: listening on %s port %u\n", x->addr ? x->addr : "0.0.0.0",
	       uiw_get_port(x->lid));
	fflush(stdout);

	ret = xf_wait_event(x, &ev, "a connection request");
	if (ret)
		return ret;
	if (ev.event != UIW_CM_EVENT_CONNECT_REQUEST) {
		err("unexpected CM event %s (status %d)", uiw_event_str(ev.event), ev.status);
		return -EPROTO;
	}
	x->id = ev.id;
	if (ev.private_data_len != sizeof(h)) {
		static const char why[] = "uiw_xfer: bad hello";

		err("connection request with %u octets of private data, not a uiw_xfer client",
		    ev.private_data_len);
		uiw_reject(x->id, why, sizeof(why));
		return -EPROTO;
	}
	memcpy(&h, ev.private_data, sizeof(h));
	if (h.magic != XF_MAGIC || h.version != XF_VERSION || !h.total || !h.msg ||
	    h.verify > XF_VERIFY_CRC) {
		static const char why[] = "uiw_xfer: bad hello";

		err("bad hello (magic 0x%x version %u total %" PRIu64 " msg %u verify %u)", h.magic,
		    h.version, h.total, h.msg, h.verify);
		uiw_reject(x->id, why, sizeof(why));
		return -EPROTO;
	}
	x->total = h.total;
	x->seed = h.seed;
	x->msg = h.msg;
	x->verify = (enum xf_verify)h.verify;
	x->rounds = (x->total + x->slot_size - 1) / x->slot_size;
	info("client wants %" PRIu64 " bytes (%" PRIu64 " rounds of %" PRIu64
	     " in %u slots), msg %u, seed 0x%" PRIx64 ", verify %s",
	     x->total, x->rounds, x->slot_size, x->slots, x->msg, x->seed,
	     x->verify == XF_VERIFY_CRC ? "crc32c" : "pattern");
	for (unsigned i = 0; i < x->slots + 2; i++) {
		ret = post_recv(x, i);
		if (ret)
			return ret;
	}
	w.magic = XF_MAGIC;
	w.version = XF_VERSION;
	w.ring_addr = (uintptr_t)x->data;
	w.slot_size = x->slot_size;
	w.rkey = x->data_mr->rkey;
	w.slots = x->slots;
	cp.private_data = &w;
	cp.private_data_len = sizeof(w);
	ret = uiw_accept(x->id, x->qp, &cp);
	if (ret) {
		err("uiw_accept: %s", strerror(-ret));
		return ret;
	}
	ret = xf_wait_event(x, &ev, "ESTABLISHED");
	if (ret)
		return ret;
	if (ev.event != UIW_CM_EVENT_ESTABLISHED) {
		err("unexpected CM event %s (status %d), wanted ESTABLISHED",
		    uiw_event_str(ev.event), ev.status);
		return -EPROTO;
	}
	t0 = now_s();
	x->last_progress_ms = now_ms();

	while (round < x->rounds || x->sq_out) {
		int n = xf_wait_wc(x, wc, (int)(sizeof(wc) / sizeof(wc[0])));

		if (n < 0) {
			err("after %" PRIu64 " of %" PRIu64 " bytes verified (round %" PRIu64 ")",
			    verified, x->total, round);
			return n == -ECONNRESET ? xf_lost(x, NULL, 0) : n;
		}
		for (int i = 0; i < n; i++) {
			const struct uiw_wc *c = &wc[i];
			unsigned ri = (unsigned)(c->wr_id & 0xffff);
			struct xf_msg m, a = {0};
			uint64_t len, bad;
			uint8_t *slot;

			if (c->status == UIW_WC_WR_FLUSH_ERR && round == x->rounds &&
			    (c->wr_id & WR_KIND) == WR_RECV)
				continue; /* all done; the client closed before our last
					   * answer's completion was taken */
			if (c->status != UIW_WC_SUCCESS) {
				report_wc(c, "server");
				err("after %" PRIu64 " of %" PRIu64
				    " bytes verified (round %" PRIu64 ")",
				    verified, x->total, round);
				return xf_lost(x, c, n - i);
			}
			if ((c->wr_id & WR_KIND) == WR_SEND) {
				x->sq_out--;
				continue;
			}
			if ((c->wr_id & WR_KIND) != WR_RECV) {
				err("completion with unknown wr_id 0x%" PRIx64, c->wr_id);
				return -EPROTO;
			}
			x->rq_out--;
			memcpy(&m, rbuf(x, ri), sizeof(m));
			len = x->total - round * x->slot_size;
			if (len > x->slot_size)
				len = x->slot_size;
			if (!msg_ok(c, &m, XF_ROUND) || m.round != round || m.len != len) {
				err("bad round message (%u octets, magic 0x%x, type %u, round %" PRIu64
				    ", len %" PRIu64 "), expected round %" PRIu64 " of %" PRIu64
				    " octets",
				    c->byte_len, m.magic, m.type, m.round, m.len, round, len);
				return -EPROTO;
			}
			slot = x->data + (round % x->slots) * x->slot_size;
			a.magic = XF_MAGIC;
			a.type = XF_ACK;
			a.round = round;
			a.len = len;
			if (x->verify == XF_VERIFY_CRC) {
				uint32_t crc = uiw_crc32c(slot, len);

				if (crc != m.crc) {
					a.status = 1;
					a.bad_off = pat_check(slot, len, x->seed, round);
					err("round %" PRIu64 " (slot %" PRIu64 ", %" PRIu64
					    " octets): CRC32C 0x%08x, the client's 0x%08x",
					    round, round % x->slots, len, crc, m.crc);
				}
			} else {
				bad = pat_check(slot, len, x->seed, round);
				if (bad != len) {
					a.status = 1;
					a.bad_off = bad;
				}
			}
			if (a.status && a.bad_off < len) {
				a.want = pat_octet(x->seed, round, a.bad_off);
				a.got = slot[a.bad_off];
				err("MISMATCH in round %" PRIu64 " at stream offset %" PRIu64
				    " (slot %" PRIu64 " offset %" PRIu64
				    "): expected 0x%02x, found 0x%02x",
				    round, round * x->slot_size + a.bad_off, round % x->slots,
				    a.bad_off, a.want, a.got);
			}
			ret = post_msg(x, round, &a);
			if (ret)
				return ret;
			if (a.status) {
				/* Let the client hear it, then fail.  Graceful close:
				 * an abortive one (uiw_destroy_id) could reset the
				 * connection before the answer leaves. */
				ret = uiw_disconnect(x->id);
				if (ret) {
					err("uiw_disconnect: %s", strerror(-ret));
					return -EBADMSG;
				}
				ret = xf_wait_event(x, &ev, "DISCONNECTED");
				if (!ret && ev.event != UIW_CM_EVENT_DISCONNECTED)
					err("unexpected CM event %s (status %d), wanted "
					    "DISCONNECTED",
					    uiw_event_str(ev.event), ev.status);
				return -EBADMSG;
			}
			ret = post_recv(x, ri);
			if (ret)
				return ret;
			round++;
			verified += len;
			progress(x, verified, &next_pct, t0);
		}
	}
	t_end = now_s();

	/* the client disconnects after the last answer */
	ret = xf_wait_event(x, &ev, "DISCONNECTED");
	if (ret)
		return ret;
	if (ev.event != UIW_CM_EVENT_DISCONNECTED) {
		err("unexpected CM event %s (status %d), wanted DISCONNECTED",
		    uiw_event_str(ev.event), ev.status);
		return -EPROTO;
	}
	x->who = "uiw_xfer: server: verified";
	print_final(x, verified, t_end - t0);
	return 0;
}

/* ---- client ---------------------------------------------------------------- */

static int run_client(struct xf *x)
{
	struct uiw_cm_event ev;
	struct xf_hello h = {0};
	struct xf_welcome w;
	struct uiw_conn_param cp = {0};
	struct uiw_wc wc[64];
	uint64_t next = 0, acked = 0, verified = 0;
	uint64_t post_round = UINT64_MAX, post_off = 0, post_len = 0;
	uint32_t post_crc = 0;
	unsigned next_pct = 10;
	double t0, t_end;
	int ret;

	ret = xf_setup(x);
	if (ret)
		return ret;
	for (unsigned i = 0; i < XF_SLOTS_MAX + 2; i++) {
		ret = post_recv(x, i);
		if (ret)
			return ret;
	}
	h.magic = XF_MAGIC;
	h.version = XF_VERSION;
	h.total = x->total;
	h.seed = x->seed;
	h.msg = x->msg;
	h.verify = x->verify;
	cp.private_data = &h;
	cp.private_data_len = sizeof(h);
	ret = uiw_create_id(x->ctx, x, &x->id);
	if (!ret)
		ret = uiw_connect(x->id, x->addr, (uint16_t)x->port, x->qp, &cp);
	if (ret) {
		err("uiw_connect %s port %u: %s", x->addr, x->port, strerror(-ret));
		return ret;
	}
	ret = xf_wait_event(x, &ev, "ESTABLISHED");
	if (ret)
		return ret;
	if (ev.event != UIW_CM_EVENT_ESTABLISHED) {
		err("connecting to %s port %u: %s (status %d: %s)", x->addr, x->port,
		    uiw_event_str(ev.event), ev.status, strerror(-ev.status));
		return -ECONNREFUSED;
	}
	if (ev.private_data_len != sizeof(w)) {
		err("the server's reply has %u octets of private data, not a uiw_xfer server",
		    ev.private_data_len);
		return -EPROTO;
	}
	memcpy(&w, ev.private_data, sizeof(w));
	if (w.magic != XF_MAGIC || w.version != XF_VERSION || !w.slots || w.slots > XF_SLOTS_MAX ||
	    !w.slot_size || w.slot_size > (1ull << 40)) {
		err("bad welcome (magic 0x%x version %u, %u slots of %" PRIu64 ")", w.magic,
		    w.version, w.slots, w.slot_size);
		return -EPROTO;
	}
	x->slots = w.slots;
	x->slot_size = w.slot_size;
	/* the source: one slot per round in flight, as the server's ring */
	ret = xf_setup_data(x, x->slot_size * x->slots);
	if (ret)
		return ret;
	x->rounds = (x->total + x->slot_size - 1) / x->slot_size;
	info("connected to %s port %u: %" PRIu64 " bytes in %" PRIu64 " rounds of %" PRIu64
	     " (%u slots), msg %u, seed 0x%" PRIx64 ", verify %s",
	     x->addr, x->port, x->total, x->rounds, x->slot_size, x->slots, x->msg, x->seed,
	     x->verify == XF_VERIFY_CRC ? "crc32c" : "pattern");

	t0 = now_s();
	x->last_progress_ms = now_ms();
	while (acked < x->rounds || x->sq_out) {
		int n;

		/* post what the window and the send queue allow */
		while (x->sq_out < XF_SQ_DEPTH) {
			uint64_t slot;
			uint8_t *src;

			if (post_round == UINT64_MAX) {
				/* start round @next if its slot is free */
				if (next >= x->rounds || next - acked >= x->slots)
					break;
				post_round = next++;
				post_off = 0;
				post_len = x->total - post_round * x->slot_size;
				if (post_len > x->slot_size)
					post_len = x->slot_size;
				src = x->data + (post_round % x->slots) * x->slot_size;
				pat_fill(src, post_len, x->seed, post_round);
				post_crc =
					x->verify == XF_VERIFY_CRC ? uiw_crc32c(src, post_len) : 0;
				if (x->inject == post_round + 1) {
					/* --inject-error: the checker must catch this */
					src[post_len / 3] ^= 0x40;
					info("corrupting octet %" PRIu64 " of round %" PRIu64
					     " on purpose (--inject-error)",
					     post_len / 3, post_round);
				}
			}
			slot = post_round % x->slots;
			src = x->data + slot * x->slot_size;
			if (post_off < post_len) {
				uint64_t l = post_len - post_off;
				struct uiw_sge sge;
				struct uiw_send_wr wr = {
					.wr_id = WR_WRITE | post_round,
					.sg_list = &sge,
					.num_sge = 1,
					.opcode = UIW_WR_RDMA_WRITE,
					.send_flags = UIW_SEND_SIGNALED,
				};

				if (l > x->msg)
					l = x->msg;
				sge = (struct uiw_sge){(uintptr_t)(src + post_off), (uint32_t)l,
						       x->data_mr->lkey};
				wr.wr.rdma.remote_addr =
					w.ring_addr + slot * x->slot_size + post_off;
				wr.wr.rdma.rkey = w.rkey;
				ret = uiw_post_send(x->qp, &wr, NULL);
				if (ret == -ENOMEM)
					break; /* send queue full: wait */
				if (ret) {
					err("uiw_post_send (RDMA Write): %s", strerror(-ret));
					return ret;
				}
				x->sq_out++;
				post_off += l;
			} else {
				struct xf_msg m = {0};

				m.magic = XF_MAGIC;
				m.type = XF_ROUND;
				m.round = post_round;
				m.len = post_len;
				m.crc = post_crc;
				ret = post_msg(x, post_round, &m);
				if (ret)
					return ret;
				post_round = UINT64_MAX;
			}
		}

		n = xf_wait_wc(x, wc, (int)(sizeof(wc) / sizeof(wc[0])));
		if (n < 0) {
			err("after %" PRIu64 " of %" PRIu64 " bytes verified (%" PRIu64
			    " rounds answered)",
			    verified, x->total, acked);
			return n == -ECONNRESET ? xf_lost(x, NULL, 0) : n;
		}
		for (int i = 0; i < n; i++) {
			const struct uiw_wc *c = &wc[i];
			unsigned ri = (unsigned)(c->wr_id & 0xffff);
			struct xf_msg a;
			uint64_t len;

			if (c->status != UIW_WC_SUCCESS) {
				report_wc(c, "client");
				err("after %" PRIu64 " of %" PRIu64 " bytes verified (%" PRIu64
				    " rounds answered)",
				    verified, x->total, acked);
				return xf_lost(x, c, n - i);
			}
			switch (c->wr_id & WR_KIND) {
			case WR_WRITE:
			case WR_SEND:
				x->sq_out--;
				break;
			case WR_RECV:
				x->rq_out--;
				memcpy(&a, rbuf(x, ri), sizeof(a));
				len = x->total - acked * x->slot_size;
				if (len > x->slot_size)
					len = x->slot_size;
				if (!msg_ok(c, &a, XF_ACK) || a.round != acked || a.len != len) {
					err("bad answer (%u octets, magic 0x%x, type %u, round %" PRIu64
					    ", len %" PRIu64 "), expected round %" PRIu64
					    " of %" PRIu64 " octets",
					    c->byte_len, a.magic, a.type, a.round, a.len, acked,
					    len);
					return -EPROTO;
				}
				if (a.status && a.bad_off >= a.len) {
					err("the server found a CRC32C mismatch in round %" PRIu64
					    " (but every octet matches the pattern now)",
					    a.round);
					return -EBADMSG;
				}
				if (a.status) {
					err("the server found a MISMATCH in round %" PRIu64
					    " at stream offset %" PRIu64
					    ": expected 0x%02x, found 0x%02x",
					    a.round, a.round * x->slot_size + a.bad_off, a.want,
					    a.got);
					return -EBADMSG;
				}
				verified += a.len;
				acked++;
				ret = post_recv(x, ri);
				if (ret)
					return ret;
				progress(x, verified, &next_pct, t0);
				break;
			default:
				err("completion with unknown wr_id 0x%" PRIx64, c->wr_id);
				return -EPROTO;
			}
		}
	}
	t_end = now_s();
	if (verified != x->total) {
		err("%" PRIu64 " bytes verified, %" PRIu64 " expected", verified, x->total);
		return -EPROTO;
	}

	/* graceful close: both sides see DISCONNECTED, receives flush */
	ret = uiw_disconnect(x->id);
	if (ret) {
		err("uiw_disconnect: %s", strerror(-ret));
		return ret;
	}
	ret = xf_wait_event(x, &ev, "DISCONNECTED");
	if (ret)
		return ret;
	if (ev.event != UIW_CM_EVENT_DISCONNECTED) {
		err("unexpected CM event %s (status %d), wanted DISCONNECTED",
		    uiw_event_str(ev.event), ev.status);
		return -EPROTO;
	}
	x->who = "uiw_xfer: client: wrote";
	print_final(x, verified, t_end - t0);
	return 0;
}

/* ---- command line ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw_xfer -s [-a ADDR] [-p PORT] [-r RING] [--slots N] [options]\n"
		"       uiw_xfer -c ADDR -p PORT -b TOTAL [-m MSG] [--seed N] [options]\n"
		"\n"
		"RDMA Write TOTAL octets from the client into a ring of the server, round by\n"
		"round; the server checks every octet of every round before its slot is\n"
		"written again.  Progress goes to stderr every 10%%, the result line to\n"
		"stdout; exit status 0 only when everything was written and verified.\n"
		"\n"
		"  -s, --server          serve one client, then exit\n"
		"  -a, --addr ADDR       server: IPv4 address to listen on (default any)\n"
		"  -p, --port PORT       server: port (0, the default: the kernel picks; the\n"
		"                        line \"uiw_xfer: listening on ADDR port N\" says which)\n"
		"  -r, --ring SIZE       server: ring size (default 64M); the client takes as\n"
		"                        much memory for its source\n"
		"      --slots N         server: rounds in flight, the ring split in N (1..%d,\n"
		"                        default %d)\n"
		"  -c, --client ADDR     connect to ADDR\n"
		"  -b, --bytes TOTAL     client: octets to write (suffixes K, M, G: powers of 2)\n"
		"  -m, --msg-size SIZE   client: octets per RDMA Write (default 1M)\n"
		"      --seed N          client: pattern seed (default: time and pid, printed)\n"
		"      --verify MODE     client: pattern (default: the server regenerates the\n"
		"                        pattern and compares every octet) or crc32c (the\n"
		"                        client sends each round's CRC32C; the server compares)\n"
		"      --crc on|off      MPA CRC: on asks for it (the default), off does not\n"
		"                        (it is used anyway when the peer asks)\n"
		"  -t, --timeout SEC     give up after SEC seconds without progress (default 30)\n"
		"      --user-timeout MS TCP_USER_TIMEOUT of the connection (uiw_context_attr's\n"
		"                        tcp_user_timeout_ms): unacknowledged data or a zero\n"
		"                        window for MS milliseconds ends it (0: kernel default)\n"
		"      --keepalive MS    TCP keepalive (tcp_keepalive_ms): an idle connection\n"
		"                        probes its peer after MS and every MS (0: off)\n"
		"      --inject-error R  client: corrupt one octet of round R's source after\n"
		"                        computing its pattern (and CRC), to show that the\n"
		"                        server catches it (exit status 1 on both sides)\n"
		"  -h, --help            this text\n",
		XF_SLOTS_MAX, XF_SLOTS_DEF);
}

/* "64M", "1G", "4096": binary suffixes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B' && shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

enum { OPT_SLOTS = 256, OPT_SEED, OPT_VERIFY, OPT_CRC, OPT_INJECT, OPT_USER_TIMEOUT, OPT_KEEPALIVE };

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"server", no_argument, NULL, 's'},
		{"addr", required_argument, NULL, 'a'},
		{"port", required_argument, NULL, 'p'},
		{"ring", required_argument, NULL, 'r'},
		{"slots", required_argument, NULL, OPT_SLOTS},
		{"client", required_argument, NULL, 'c'},
		{"bytes", required_argument, NULL, 'b'},
		{"msg-size", required_argument, NULL, 'm'},
		{"seed", required_argument, NULL, OPT_SEED},
		{"verify", required_argument, NULL, OPT_VERIFY},
		{"crc", required_argument, NULL, OPT_CRC},
		{"timeout", required_argument, NULL, 't'},
		{"inject-error", required_argument, NULL, OPT_INJECT},
		{"user-timeout", required_argument, NULL, OPT_USER_TIMEOUT},
		{"keepalive", required_argument, NULL, OPT_KEEPALIVE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct xf x = {0};
	uint64_t v;
	int c, ret, total_set = 0, port_set = 0;
	char *end;

	setvbuf(stderr, NULL, _IOLBF, 0);
	x.ring = XF_RING_DEF;
	x.slots = XF_SLOTS_DEF;
	x.msg = XF_MSG_DEF;
	x.timeout_s = 30;
	x.lost_event = -1;
	while ((c = getopt_long(argc, argv, "sa:p:r:c:b:m:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			x.server = 1;
			break;
		case 'a':
			x.addr = optarg;
			break;
		case 'c':
			x.addr = optarg;
			x.server = 0;
			break;
		case 'p':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || v > 65535) {
				fprintf(stderr, "uiw_xfer: bad port '%s'\n", optarg);
				return 2;
			}
			x.port = (unsigned)v;
			port_set = 1;
			break;
		case 'r':
			if (parse_size(optarg, &x.ring) || x.ring < XF_ALIGN) {
				fprintf(stderr, "uiw_xfer: bad ring size '%s' (at least 4K)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_SLOTS:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !v || v > XF_SLOTS_MAX) {
				fprintf(stderr, "uiw_xfer: --slots wants 1..%d\n", XF_SLOTS_MAX);
				return 2;
			}
			x.slots = (unsigned)v;
			break;
		case 'b':
			if (parse_size(optarg, &x.total) || !x.total) {
				fprintf(stderr, "uiw_xfer: bad total '%s'\n", optarg);
				return 2;
			}
			total_set = 1;
			break;
		case 'm':
			if (parse_size(optarg, &v) || !v || v > (1u << 30)) {
				fprintf(stderr, "uiw_xfer: bad message size '%s' (1..1G)\n",
					optarg);
				return 2;
			}
			x.msg = (uint32_t)v;
			break;
		case OPT_SEED:
			errno = 0;
			x.seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "uiw_xfer: bad seed '%s'\n", optarg);
				return 2;
			}
			x.seed_set = 1;
			break;
		case OPT_VERIFY:
			if (!strcmp(optarg, "pattern")) {
				x.verify = XF_VERIFY_PATTERN;
			} else if (!strcmp(optarg, "crc32c") || !strcmp(optarg, "crc")) {
				x.verify = XF_VERIFY_CRC;
			} else {
				fprintf(stderr, "uiw_xfer: --verify pattern|crc32c\n");
				return 2;
			}
			break;
		case OPT_CRC:
			if (!strcmp(optarg, "on")) {
				x.crc = UIW_CRC_ON;
			} else if (!strcmp(optarg, "off")) {
				x.crc = UIW_CRC_OFF;
			} else {
				fprintf(stderr, "uiw_xfer: --crc on|off\n");
				return 2;
			}
			break;
		case 't':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !v || v > 3600) {
				fprintf(stderr, "uiw_xfer: --timeout wants 1..3600 seconds\n");
				return 2;
			}
			x.timeout_s = (int)v;
			break;
		case OPT_INJECT:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || v == UINT64_MAX) {
				fprintf(stderr, "uiw_xfer: bad --inject-error round '%s'\n",
					optarg);
				return 2;
			}
			x.inject = v + 1;
			break;
		case OPT_USER_TIMEOUT:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || v > 3600000) {
				fprintf(stderr, "uiw_xfer: --user-timeout wants 0..3600000 ms\n");
				return 2;
			}
			x.user_timeout_ms = (unsigned)v;
			break;
		case OPT_KEEPALIVE:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || v > 3600000) {
				fprintf(stderr, "uiw_xfer: --keepalive wants 0..3600000 ms\n");
				return 2;
			}
			x.keepalive_ms = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "uiw_xfer: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!x.server && (!x.addr || !port_set || !total_set)) {
		fprintf(stderr, "uiw_xfer: give -s, or -c ADDR -p PORT -b TOTAL (see --help)\n");
		return 2;
	}
	if (x.server && x.ring / x.slots < XF_ALIGN) {
		fprintf(stderr, "uiw_xfer: ring too small for %u slots\n", x.slots);
		return 2;
	}
	if (!x.server && !x.seed_set)
		x.seed = mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	g_who = x.server ? "uiw_xfer: server" : "uiw_xfer: client";
	ret = x.server ? serve(&x) : run_client(&x);
	if (xf_teardown(&x) && !ret)
		ret = -EIO;
	if (ret) {
		err("FAILED (%s)", strerror(-ret));
		return 1;
	}
	return 0;
}
