/* SPDX-License-Identifier: MIT */
/*
 * RDMAP operations through memory: two complete stacks (MPA + DDP/RDMAP QP,
 * each with its own STag table and PD) in one process, joined by a staging
 * buffer standing for the TCP connection, one thread doing both ends, so the
 * figure is the per-core cost of iWARP on both sides.
 *
 *  transmit: rdmap_qp_progress() queues FPDUs that reference registered
 *            memory; mpa_tx_pending() is gathered into the "wire" buffer:
 *            the copy the kernel makes on send;
 *  receive:  mpa_rx_lend() says where the next octets go (registered memory
 *            for tagged segments, the posted receive buffer for Sends),
 *            they are copied there from the wire (the copy the kernel makes
 *            in readv), and mpa_rx_ack() accounts them.
 *
 * RDMA Write and Send go from A (the MPA initiator) to B; RDMA Read pulls
 * from B to A.  Up to the send queue depth (and, for Reads, ORD; for Sends,
 * the receives B has posted) operations are kept in flight: the loop posts,
 * pumps both directions, and reposts as completions arrive.  Operation k
 * uses slot k mod n of a window of n messages in each buffer, so the memory
 * touched is the same whatever the message size; memcpy of the same
 * messages over the same window is measured alongside (the baseline), and
 * so is the two-copy pipeline alone (memcpy into a wire buffer, then out of
 * it: the bound of this harness, since every payload octet is copied twice
 * as between two hosts).  At the end of each row the destination window
 * must equal the source, or the program fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_util.h"
#include "mpa.h"
#include "memwire.h"
#include "rdmap.h"

#define RL_WIRE_CAP   (256u * 1024) /* octets per gathering send (socket buffer) */
#define RL_TX_IOV_MAX 1024	    /* IOV_MAX: iovecs per sendmsg */
#define RL_RX_IOV_MAX 64	    /* iovecs per readv */
#define RL_EMSS_LO    1460	    /* Ethernet, 1500-octet MTU */
#define RL_EMSS_LOOP  65483	    /* loopback: 65536-octet MTU */
#define RL_SQ_DEPTH   128
#define RL_RQ_DEPTH   128
#define RL_IRD_ORD    16
#define RL_TX_DEPTH   128  /* FPDUs MPA may queue */
#define RL_CALL_OPS   256  /* operations per timed call, at most */
#define RL_PIECES     4096 /* 2copy: FPDUs per wire */

enum rl_op { RL_WRITE, RL_READ, RL_SEND };

static const char *const rl_op_name[] = {"Write", "Read", "Send"};

struct rl_ctx;

struct rl_host {
	struct mpa_conn c;
	struct ddp_mem mem;
	struct ddp_pd pd;
	struct rdmap_qp qp;
	struct ddp_mr *src_mr, *dst_mr;
	uint64_t nsc; /* successful send-queue completions */
	uint64_t nrc; /* successful receive completions */
	struct rl_ctx *x;
};

struct rl_ctx {
	struct rl_host a; /* initiator */
	struct rl_host b; /* responder */
	/* buffers of RL window octets, A's and B's */
	uint8_t *a_src, *a_dst, *b_src, *b_dst;
	uint8_t *wire;
	struct iovec *tx_iov;
	size_t win;  /* octets of each buffer: nslots messages fit in it */
	size_t size; /* message size */
	uint64_t nslots;
	uint32_t mulpdu; /* negotiated for this row */
	enum rl_op op;
	uint64_t posted;  /* operations posted by A */
	uint64_t rposted; /* receives posted by B */
	unsigned call_ops;
	uint64_t copy_slot; /* baselines: next slot */
	struct {
		uint8_t *dst;
		size_t off, len;
	} pieces[RL_PIECES]; /* 2copy: what the wire holds */
	int err;	     /* first failure, -errno */
	const char *what;
};

static void rl_fail(struct rl_ctx *x, int err, const char *what)
{
	if (!x->err) {
		x->err = err ? err : -EIO;
		x->what = what;
	}
}

/* Handshake upcalls (before the QPs take the connections over). */
static void rl_request(void *arg, const struct mpa_rr *req)
{
	struct rl_ctx *x = arg;
	int ret;

	(void)req;
	ret = mpa_conn_accept(&x->b.c, NULL, 0, RL_IRD_ORD, RL_IRD_ORD, 0);
	if (ret)
		rl_fail(x, ret, "mpa_conn_accept");
}

static void rl_reply(void *arg, const struct mpa_rr *rep)
{
	struct rl_ctx *x = arg;

	if (rep->reject)
		rl_fail(x, -ECONNREFUSED, "the responder rejected");
}

static const struct mpa_ops rl_hs_ops = {
	.request = rl_request,
	.reply = rl_reply,
};

/* The completion queue: counted, never stored; any failure is fatal. */
static void rl_complete(void *arg, int recv, const struct rdmap_wc *wc)
{
	struct rl_host *h = arg;
	struct rl_ctx *x = h->x;

	if (wc->status != RDMAP_WC_SUCCESS) {
		rl_fail(x, -EIO, recv ? "a receive completed in error" : "a WR completed in error");
		return;
	}
	if (wc->byte_len != x->size) {
		rl_fail(x, -EMSGSIZE, "a completion with the wrong byte count");
		return;
	}
	if (recv)
		h->nrc++;
	else
		h->nsc++;
}

static void rl_error(void *arg, const struct rdmap_term *t, int received)
{
	struct rl_host *h = arg;
	struct rl_ctx *x = h->x;

	rl_fail(x, -EPROTO, received ? "TERMINATE received" : "QP moved to error");
	if (t)
		fprintf(stderr, "uiw-bench-rdmap_loop: %s TERMINATE: %s\n",
			received ? "received" : "sent",
			rdmap_term_name(t->layer, t->etype, t->ecode));
}

static const struct rdmap_ops rl_qp_ops = {
	.complete = rl_complete,
	.error = rl_error,
};

static int rl_host_init(struct rl_host *h, uint8_t *src, uint8_t *dst, size_t len,
			unsigned dst_access)
{
	struct rdmap_qp_cfg q = {.max_send_wr = RL_SQ_DEPTH,
				 .max_recv_wr = RL_RQ_DEPTH,
				 .ird = RL_IRD_ORD,
				 .ord = RL_IRD_ORD};
	int ret = ddp_mem_init(&h->mem, 16);

	if (ret)
		return ret;
	ddp_pd_init(&h->mem, &h->pd);
	ret = ddp_mr_reg(&h->mem, &h->pd, src, len, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_READ,
			 &h->src_mr);
	if (!ret)
		ret = ddp_mr_reg(&h->mem, &h->pd, dst, len, dst_access, &h->dst_mr);
	if (!ret)
		ret = rdmap_qp_init(&h->qp, &q, &h->mem, &h->pd, &rl_qp_ops, h);
	return ret;
}

static void rl_teardown(struct rl_ctx *x)
{
	struct rl_host *hs[2] = {&x->a, &x->b};

	for (int i = 0; i < 2; i++) {
		rdmap_qp_destroy(&hs[i]->qp);
		ddp_mem_destroy(&hs[i]->mem);
		mpa_conn_destroy(&hs[i]->c);
	}
}

/* A connected pair for one row of the table. */
static int rl_setup(struct rl_ctx *x, enum rl_op op, size_t size, uint32_t emss, int crc)
{
	struct mpa_cfg ci, cr;
	int ret;

	memset(&x->a, 0, sizeof(x->a));
	memset(&x->b, 0, sizeof(x->b));
	x->a.x = x->b.x = x;
	x->op = op;
	x->size = size;
	x->nslots = x->win / size;
	x->call_ops = x->nslots < RL_CALL_OPS ? (unsigned)x->nslots : RL_CALL_OPS;
	x->posted = x->rposted = 0;
	x->copy_slot = 0;
	x->err = 0;
	x->what = NULL;

	mpa_cfg_init(&ci, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&cr, MPA_ROLE_RESPONDER);
	ci.emss = cr.emss = emss;
	/* Either side's C bit turns CRCs on (RFC 5044 §7.1.1): both say off. */
	ci.crc = cr.crc = crc;
	ci.rx_hdr_min = cr.rx_hdr_min = DDP_TAGGED_HDR_LEN;
	ci.tx_depth = cr.tx_depth = RL_TX_DEPTH;
	ci.ird = ci.ord = cr.ird = cr.ord = RL_IRD_ORD;
	ret = mpa_conn_init(&x->a.c, &ci, &rl_hs_ops, x);
	if (!ret)
		ret = mpa_conn_init(&x->b.c, &cr, &rl_hs_ops, x);
	if (!ret)
		ret = mpa_conn_start(&x->b.c, NULL, 0, 0);
	if (!ret)
		ret = mpa_conn_start(&x->a.c, NULL, 0, 0);
	for (int round = 0; !ret && round < 4; round++) {
		int r1 = mw_move_hs(&x->a.c, &x->b.c, x->wire, RL_WIRE_CAP);
		int r2 = r1 < 0 ? r1 : mw_move_hs(&x->b.c, &x->a.c, x->wire, RL_WIRE_CAP);

		ret = r1 < 0 ? r1 : r2 < 0 ? r2 : 0;
		if (!ret && x->a.c.state == MPA_S_FULL && x->b.c.state == MPA_S_FULL)
			break;
	}
	if (!ret && x->err)
		ret = x->err;
	if (!ret && (x->a.c.state != MPA_S_FULL || x->b.c.state != MPA_S_FULL))
		ret = -EPROTO;
	if (ret) {
		fprintf(stderr, "uiw-bench-rdmap_loop: handshake failed: %s (%s / %s)\n",
			strerror(-ret), mpa_state_name(x->a.c.state), mpa_state_name(x->b.c.state));
		return ret;
	}
	/* The variant must be the one reported. */
	if (x->a.c.crc_on != crc || x->b.c.crc_on != crc ||
	    mpa_tx_mulpdu(&x->a.c) != mpa_mulpdu(emss, 0)) {
		fprintf(stderr,
			"uiw-bench-rdmap_loop: negotiated crc %d/%d MULPDU %u, wanted crc %d "
			"MULPDU %u\n",
			x->a.c.crc_on, x->b.c.crc_on, mpa_tx_mulpdu(&x->a.c), crc,
			mpa_mulpdu(emss, 0));
		return -EPROTO;
	}
	x->mulpdu = mpa_tx_mulpdu(&x->a.c);
	ret = rl_host_init(&x->a, x->a_src, x->a_dst, x->win, DDP_ACC_LOCAL_WRITE);
	if (!ret)
		ret = rl_host_init(&x->b, x->b_src, x->b_dst, x->win,
				   DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_WRITE);
	if (!ret)
		ret = rdmap_qp_bind(&x->a.qp, &x->a.c);
	if (!ret)
		ret = rdmap_qp_bind(&x->b.qp, &x->b.c);
	if (ret)
		fprintf(stderr, "uiw-bench-rdmap_loop: QP setup failed: %s\n", strerror(-ret));
	return ret;
}

/* The send side of one host: progress the QP, gather what is pending into
 * the wire until it is full or nothing is left (a sendmsg per round). */
static size_t rl_transmit(struct rl_ctx *x, struct rl_host *h)
{
	size_t wired = 0;

	while (wired < RL_WIRE_CAP) {
		size_t moved;

		rdmap_qp_progress(&h->qp);
		/* completes Sends and Writes whose last octet went out */
		moved = mw_gather(&h->c, x->wire + wired, RL_WIRE_CAP - wired, x->tx_iov,
				  RL_TX_IOV_MAX);
		if (!moved)
			break;
		wired += moved;
	}
	return wired;
}

/* The receive side of one "readv" per lend: lend, copy, ack. */
static void rl_receive(struct rl_ctx *x, struct rl_host *h, const uint8_t *in, size_t len)
{
	ssize_t r = mw_lend_feed(&h->c, in, len);

	if (r >= 0 && (size_t)r != len)
		r = -EPROTO;
	if (r < 0) {
		rl_fail(x, (int)r, "mpa_rx_lend/ack");
		rdmap_qp_conn_failed(&h->qp, (int)r);
	}
}

/* Move bytes both ways once; returns octets moved. */
static size_t rl_pump(struct rl_ctx *x)
{
	size_t n1 = rl_transmit(x, &x->a), n2;

	if (n1)
		rl_receive(x, &x->b, x->wire, n1);
	n2 = rl_transmit(x, &x->b);
	if (n2)
		rl_receive(x, &x->a, x->wire, n2);
	return n1 + n2;
}

static inline size_t rl_slot_off(const struct rl_ctx *x, uint64_t k)
{
	return (size_t)(k % x->nslots) * x->size;
}

/* B keeps RL_RQ_DEPTH receives posted, receive k on slot k. */
static int rl_post_recvs(struct rl_ctx *x)
{
	while (x->rposted - x->b.nrc < RL_RQ_DEPTH) {
		struct rdmap_recv_wr r;
		size_t off = rl_slot_off(x, x->rposted);
		int ret;

		r.wr_id = x->rposted;
		r.num_sge = 1;
		r.sge[0].addr = (uint64_t)(uintptr_t)(x->b_dst + off);
		r.sge[0].length = (uint32_t)x->size;
		r.sge[0].lkey = x->b.dst_mr->stag;
		ret = rdmap_post_recv(&x->b.qp, &r);
		if (ret) {
			rl_fail(x, ret, "rdmap_post_recv");
			return ret;
		}
		x->rposted++;
	}
	return 0;
}

/* A posts operation k on slot k while the send queue (and for Sends, the
 * receives B posted) has room. */
static int rl_post_ops(struct rl_ctx *x, uint64_t limit)
{
	while (x->posted < limit && x->posted - x->a.nsc < RL_SQ_DEPTH) {
		struct rdmap_send_wr w;
		size_t off = rl_slot_off(x, x->posted);
		int ret;

		if (x->op == RL_SEND && x->posted >= x->rposted)
			break; /* would arrive before its receive: no credit */
		memset(&w, 0, sizeof(w));
		w.wr_id = x->posted;
		w.flags = RDMAP_WR_SIGNALED;
		w.num_sge = 1;
		w.sge[0].length = (uint32_t)x->size;
		switch (x->op) {
		case RL_WRITE:
			w.opcode = RDMAP_WR_WRITE;
			w.sge[0].addr = (uint64_t)(uintptr_t)(x->a_src + off);
			w.sge[0].lkey = x->a.src_mr->stag;
			w.rkey = x->b.dst_mr->stag;
			w.remote_addr = (uint64_t)(uintptr_t)(x->b_dst + off);
			break;
		case RL_READ:
			w.opcode = RDMAP_WR_READ;
			w.sge[0].addr = (uint64_t)(uintptr_t)(x->a_dst + off);
			w.sge[0].lkey = x->a.dst_mr->stag;
			w.rkey = x->b.src_mr->stag;
			w.remote_addr = (uint64_t)(uintptr_t)(x->b_src + off);
			break;
		case RL_SEND:
			w.opcode = RDMAP_WR_SEND;
			w.sge[0].addr = (uint64_t)(uintptr_t)(x->a_src + off);
			w.sge[0].lkey = x->a.src_mr->stag;
			break;
		}
		ret = rdmap_post_send(&x->a.qp, &w);
		if (ret) {
			rl_fail(x, ret, "rdmap_post_send");
			return ret;
		}
		x->posted++;
	}
	return 0;
}

/*
 * Run until @n more operations completed at A, posting beyond them (up to
 * @post_ahead) so that the pipeline stays full across calls.  A Send
 * completes at A once sent; B's receive completes in the same pump.
 */
static void rl_run(struct rl_ctx *x, uint64_t n, int post_ahead)
{
	uint64_t target = x->a.nsc + n;
	uint64_t limit = post_ahead ? UINT64_MAX : target;
	unsigned idle = 0;

	while (x->a.nsc < target && !x->err) {
		if (x->op == RL_SEND && rl_post_recvs(x))
			return;
		if (rl_post_ops(x, limit))
			return;
		if (rl_pump(x)) {
			idle = 0;
		} else if (++idle > 2) {
			rl_fail(x, -EPIPE, "the pump stalled");
			return;
		}
	}
}

/* Complete everything posted and move every octet. */
static void rl_drain(struct rl_ctx *x)
{
	rl_run(x, x->posted - x->a.nsc, 0);
	for (int i = 0; i < 4 && !x->err && rl_pump(x); i++)
		;
	if (!x->err && x->op == RL_SEND && x->b.nrc != x->posted)
		rl_fail(x, -EIO, "Sends completed without their receives");
}

static void rl_call(void *arg)
{
	struct rl_ctx *x = arg;

	rl_run(x, x->call_ops, 1);
}

/* The baseline: the same messages, one memcpy each, over the same window. */
static void copy_call(void *arg)
{
	struct rl_ctx *x = arg;
	const uint8_t *src = x->op == RL_READ ? x->b_src : x->a_src;
	uint8_t *dst = x->op == RL_READ ? x->a_dst : x->b_dst;

	for (unsigned i = 0; i < x->call_ops; i++) {
		size_t off = rl_slot_off(x, x->copy_slot++);

		memcpy(dst + off, src + off, x->size);
	}
	bench_clobber(dst);
}

/*
 * The bound of this harness: the two copies alone.  Each message is cut
 * into segments as the QP cuts it, and each segment's payload is copied into
 * the wire where its FPDU puts it (after ULPDU_Length and the DDP header,
 * PAD and CRC after it: the payload is no longer aligned as in the source,
 * which costs memcpy dearly); each time the wire is full (a sendmsg) the
 * pieces are copied out to their slots (the readv side).
 */
static void copy2_flush(struct rl_ctx *x, size_t *w, unsigned *np)
{
	bench_clobber(x->wire);
	for (unsigned i = 0; i < *np; i++)
		memcpy(x->pieces[i].dst, x->wire + x->pieces[i].off, x->pieces[i].len);
	*w = 0;
	*np = 0;
}

static void copy2_call(void *arg)
{
	struct rl_ctx *x = arg;
	const uint8_t *src = x->op == RL_READ ? x->b_src : x->a_src;
	uint8_t *dst = x->op == RL_READ ? x->a_dst : x->b_dst;
	size_t hl = x->op == RL_SEND ? DDP_UNTAGGED_HDR_LEN : DDP_TAGGED_HDR_LEN;
	size_t seg = x->mulpdu - hl;
	size_t w = 0;
	unsigned np = 0;

	for (unsigned i = 0; i < x->call_ops; i++) {
		size_t off = rl_slot_off(x, x->copy_slot++);

		for (size_t done = 0; done < x->size;) {
			size_t k = x->size - done < seg ? x->size - done : seg;
			size_t head = MPA_HDR_LEN + hl;
			size_t fpdu = (head + k + 3) / 4 * 4 + MPA_CRC_LEN;

			if (w + fpdu > RL_WIRE_CAP || np == RL_PIECES)
				copy2_flush(x, &w, &np);
			memcpy(x->wire + w + head, src + off + done, k);
			x->pieces[np].dst = dst + off + done;
			x->pieces[np].off = w + head;
			x->pieces[np++].len = k;
			w += fpdu;
			done += k;
		}
	}
	copy2_flush(x, &w, &np);
	bench_clobber(dst);
}

/* One clean round over fresh data; 0 if every slot arrived where it should. */
static int rl_verify(struct rl_ctx *x, uint64_t seed)
{
	uint8_t *src = x->op == RL_READ ? x->b_src : x->a_src;
	uint8_t *dst = x->op == RL_READ ? x->a_dst : x->b_dst;
	size_t span = (size_t)x->nslots * x->size;

	rl_drain(x);
	if (x->err)
		return -1;
	bench_fill(src, span, seed);
	memset(dst, 0, x->win);
	/* every slot exactly once */
	rl_run(x, x->nslots, 0);
	rl_drain(x);
	if (x->err)
		return -1;
	if (memcmp(dst, src, span)) {
		size_t i = 0;

		while (dst[i] == src[i])
			i++;
		fprintf(stderr,
			"uiw-bench-rdmap_loop: %s %zu: destination differs from source at "
			"octet %zu\n",
			rl_op_name[x->op], x->size, i);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw-bench-rdmap_loop [--help] [--quick] [--sizes LIST] [--op OP] "
		"[--crc off|on]\n"
		"RDMA Write, RDMA Read and Send between two uiwarp stacks joined by memory, one\n"
		"thread doing both ends: messages/s and GB/s of payload per core, beside memcpy of\n"
		"the same messages and the two-copy (send + receive) bound, for EMSS 65483\n"
		"(loopback) with CRC off and on, and one line with EMSS 1460.\n");
	bench_usage_common(f);
	fprintf(f, "  --op OP        only write, read or send (e.g. to profile one path)\n"
		   "  --crc off|on   only that CRC variant (the EMSS 1460 line comes with off)\n");
}

static double max_d(double a, double b)
{
	return a > b ? a : b;
}

static int rl_row(struct rl_ctx *x, enum rl_op op, size_t size, uint32_t emss, int crc,
		  const struct bench_timing *t, uint64_t seed)
{
	char sz[32];
	double g, m, m2;
	int ret;

	ret = rl_setup(x, op, size, emss, crc);
	if (ret)
		goto out;
	/* correct before timing, and still correct after */
	ret = -1;
	if (rl_verify(x, seed))
		goto out_broken;
	/* The three are timed in turns, run by run, and the best of each kept:
	 * a slow phase of a shared machine then hits all of them alike. */
	g = m = m2 = 0;
	for (unsigned r = 0; r < t->runs; r++) {
		struct bench_timing one = {.run_ms = t->run_ms, .runs = 1};
		size_t bytes = x->call_ops * size;

		g = max_d(g, bench_gbps(rl_call, x, bytes, &one));
		if (x->err)
			goto out_broken;
		m = max_d(m, bench_gbps(copy_call, x, bytes, &one));
		m2 = max_d(m2, bench_gbps(copy2_call, x, bytes, &one));
	}
	if (rl_verify(x, seed + 1000))
		goto out_broken;
	printf("%-5s %8s %6u %4s %9.3f %8.2f %8.2f %6.2f %8.2f %6.2f\n", rl_op_name[op],
	       bench_fmt_size(sz, sizeof(sz), size), emss, crc ? "on" : "off",
	       g * 1e9 / (double)size / 1e6, g, m, g / m, m2, g / m2);
	fflush(stdout);
	ret = 0;
	goto out;

out_broken:
	fprintf(stderr,
		"uiw-bench-rdmap_loop: %s %s, EMSS %u, CRC %s: the path is broken%s%s%s%s "
		"(QP A %s, B %s; MPA A %s, B %s): no figure reported\n",
		rl_op_name[op], bench_fmt_size(sz, sizeof(sz), size), emss, crc ? "on" : "off",
		x->err ? ": " : "", x->err ? strerror(-x->err) : "", x->what ? " in " : "",
		x->what ? x->what : "", rdmap_qp_state_name(x->a.qp.state),
		rdmap_qp_state_name(x->b.qp.state), mpa_state_name(x->a.c.state),
		mpa_state_name(x->b.c.state));
out:
	rl_teardown(x);
	return ret;
}

int main(int argc, char **argv)
{
	static const size_t def_sizes[] = {64, 4096, 64 * 1024, 1024 * 1024};
	struct bench_args a = {0};
	struct bench_timing t = {.run_ms = 50, .runs = 5};
	size_t sizes[BENCH_SIZES_MAX], win;
	int nsizes, status = 0, only_op = -1, only_crc = -1;
	struct rl_ctx *x;

	for (int i = 1; i < argc; i++) {
		int r = bench_arg_common(&a, argc, argv, &i);

		if (r < 0)
			return 2;
		if (r == 0 && i + 1 < argc && strcmp(argv[i], "--op") == 0) {
			for (only_op = 0; only_op < 3; only_op++)
				if (strcasecmp(argv[i + 1], rl_op_name[only_op]) == 0)
					break;
			if (only_op == 3) {
				fprintf(stderr,
					"uiw-bench-rdmap_loop: --op: write, read or send\n");
				return 2;
			}
			i++;
			continue;
		}
		if (r == 0 && i + 1 < argc && strcmp(argv[i], "--crc") == 0) {
			if (strcmp(argv[i + 1], "off") && strcmp(argv[i + 1], "on")) {
				fprintf(stderr, "uiw-bench-rdmap_loop: --crc: off or on\n");
				return 2;
			}
			only_crc = strcmp(argv[i + 1], "on") == 0;
			i++;
			continue;
		}
		if (r == 0) {
			fprintf(stderr, "uiw-bench-rdmap_loop: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.nsizes) {
		nsizes = a.nsizes;
		memcpy(sizes, a.sizes, sizeof(size_t) * (size_t)nsizes);
	} else {
		nsizes = (int)(sizeof(def_sizes) / sizeof(def_sizes[0]));
		memcpy(sizes, def_sizes, sizeof(def_sizes));
	}
	win = 4u << 20;
	if (a.quick) {
		t.run_ms = 5;
		t.runs = 2;
		win = 1u << 20;
	}
	for (int i = 0; i < nsizes; i++) {
		if (sizes[i] > UINT32_MAX) {
			fprintf(stderr,
				"uiw-bench-rdmap_loop: %zu: a message is at most 4 GiB - 1\n",
				sizes[i]);
			return 2;
		}
		if (sizes[i] > win)
			win = sizes[i];
	}

	x = calloc(1, sizeof(*x));
	if (!x)
		return 1;
	x->win = win;
	x->a_src = bench_alloc(win, 0x5eed);
	x->a_dst = bench_alloc(win, 0);
	x->b_src = bench_alloc(win, 0xbeef);
	x->b_dst = bench_alloc(win, 0);
	x->wire = bench_alloc(RL_WIRE_CAP, 0);
	x->tx_iov = calloc(RL_TX_IOV_MAX, sizeof(*x->tx_iov));
	if (!x->a_src || !x->a_dst || !x->b_src || !x->b_dst || !x->wire || !x->tx_iov) {
		fprintf(stderr, "uiw-bench-rdmap_loop: out of memory\n");
		status = 1;
		goto out_free;
	}

	printf("uiwarp RDMAP through memory: two stacks (MPA + DDP/RDMAP QP), one thread doing "
	       "both ends.\nWrite and Send A -> B, Read B -> A; up to %u WRs in flight (ORD %u, "
	       "%u receives posted).\nGB/s of payload per core (1 GB = 10^9 octets), best of %u "
	       "runs of >= %u ms; window %zu MiB per buffer.\n"
	       "tx: rdmap_qp_progress + mpa_tx_pending gathered into a %u KiB wire buffer (the "
	       "send copy);\nrx: mpa_rx_lend + memcpy + mpa_rx_ack (readv), placed straight into "
	       "registered memory.\nmemcpy: the same messages copied once over the same window; "
	       "2copy: into a wire buffer\n(at the offsets the FPDUs give the payload) and out again, "
	       "the bound of this harness\n(each octet is copied twice, as between hosts).%s\n\n",
	       RL_SQ_DEPTH, RL_IRD_ORD, RL_RQ_DEPTH, t.runs, t.run_ms, win >> 20, RL_WIRE_CAP >> 10,
	       a.quick ? "\n(--quick: indicative only)" : "");
	printf("%-5s %8s %6s %4s %9s %8s %8s %6s %8s %6s\n", "op", "size", "EMSS", "CRC", "Mmsg/s",
	       "GB/s", "memcpy", "ratio", "2copy", "of2cp");
	fflush(stdout);

	for (int crc = 0; crc <= 1; crc++) {
		if (only_crc >= 0 && crc != only_crc)
			continue;
		for (int o = 0; o < 3; o++) {
			if (only_op >= 0 && o != only_op)
				continue;
			for (int s = 0; s < nsizes; s++)
				if (rl_row(x, (enum rl_op)o, sizes[s], RL_EMSS_LOOP, crc, &t,
					   1 + (uint64_t)o * 64 + (uint64_t)s * 2 +
						   (uint64_t)crc)) {
					status = 1;
					goto out_free;
				}
		}
	}
	/* Ethernet-sized FPDUs: the per-FPDU cost at the message size */
	if (only_crc <= 0 && (only_op < 0 || only_op == RL_WRITE) &&
	    rl_row(x, RL_WRITE, a.nsizes ? sizes[0] : 64 * 1024, RL_EMSS_LO, 0, &t, 999))
		status = 1;

out_free:
	free(x->tx_iov);
	free(x->wire);
	free(x->a_src);
	free(x->a_dst);
	free(x->b_src);
	free(x->b_dst);
	free(x);
	return status;
}
