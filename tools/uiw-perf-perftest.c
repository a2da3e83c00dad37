/* SPDX-License-Identifier: MIT */
/*
 * uiw-perf-perftest.c - uiw-perf --perftest: perftest's own rdma_cm
 * exchange (ib_write_bw/ib_read_bw/ib_send_bw -R), so that perftest's
 * programs can be the peer of a uiwarp one.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uiw_verbs.h"
#include "uiw-perf.h"

/*
 * perftest's rdma_cm mode (ib_*_bw -R), as docs/perftest-interop.md sets it
 * out: a first RC connection to PORT carries the exchanges (each a Send of
 * at most 56 octets into a 56-octet receive, the client first, then the
 * server, in lock-step), then the data connection goes to the same PORT.
 * One QP, iterations only.
 */
#define PT_VERSION	"6.06" /* perftest 4.5's VERSION: >= 5.70, 8-octet iters */
#define PT_VERSION_LEN	16
#define PT_DEST_LEN	56
#define PT_CYCLE_BUFFER 4096 /* perftest's page size, exchanged */
#define PT_CACHE_LINE	64
#define PT_MTU		"5" /* IBV_MTU_4096: the peer keeps its own (smaller) */
#define PT_CRECV	4
#define PT_CSLOT	64
#define PT_RETRIES	10
#define PT_WAIT_MS	30000
#define PT_WRID_CREDIT	(1ull << 62)
#define PT_CREDIT_SLOTS 8 /* credit Writes in flight (32 octets of the credit MR) */

struct pt_dest {
	uint32_t lid, out_reads, qpn, psn, rkey;
	uint64_t vaddr;
};

struct pt {
	struct opts *o;
	int server;
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cm_id *listen;
	/* the exchange connection */
	struct uiw_cm_id *cid;
	struct uiw_qp *cqp;
	struct uiw_cq *cscq, *crcq;
	uint8_t *cbuf; /* send area, then PT_CRECV receive slots */
	struct uiw_mr *cmr;
	int c_est, c_disc;
	/* the data connection */
	struct uiw_cm_id *did;
	struct uiw_qp *dqp;
	struct uiw_cq *dcq;
	int d_est, d_disc;
	uint8_t *buf;
	size_t buflen;
	struct uiw_mr *mr;
	volatile uint32_t *credit; /* send_bw: where the receiver Writes its count */
	struct uiw_mr *credit_mr;
	struct pt_dest my, rem;
	unsigned rx;	/* send_bw: receive depth (perftest's rx_depth) */
	uint32_t cycle; /* max of both sides' cycle buffers */
	uint32_t cline; /* and cache lines */
	char rem_version[PT_VERSION_LEN + 1];
	int closing, d_closing;
	struct uiw_cm_event req; /* a CONNECT_REQUEST waiting for us */
	int have_req;
};

static void pt_put32(uint8_t *b, uint32_t v)
{
	v = htobe32(v);
	memcpy(b, &v, 4);
}

static uint32_t pt_get32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return be32toh(v);
}

static void pt_put64(uint8_t *b, uint64_t v)
{
	v = htobe64(v);
	memcpy(b, &v, 8);
}

static uint64_t pt_get64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
	return be64toh(v);
}

static void pt_putd(uint8_t *b, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	pt_put64(b, v);
}

static double pt_getd(const uint8_t *b)
{
	uint64_t v = pt_get64(b);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

/* struct pingpong_dest as perftest sends it: 56 octets, big-endian */
static void pt_dest_encode(const struct pt_dest *d, uint8_t *b)
{
	memset(b, 0, PT_DEST_LEN);
	pt_put32(b + 0, d->lid);
	pt_put32(b + 4, d->out_reads);
	pt_put32(b + 8, d->qpn);
	pt_put32(b + 12, d->psn);
	pt_put32(b + 16, d->rkey);
	pt_put64(b + 24, d->vaddr);
	/* 32..47 GID (zero), 48..51 SRQN (0), 52..55 GID index (-1) */
	pt_put32(b + 52, 0xffffffffu);
}

static void pt_dest_decode(const uint8_t *b, struct pt_dest *d)
{
	d->lid = pt_get32(b + 0);
	d->out_reads = pt_get32(b + 4);
	d->qpn = pt_get32(b + 8);
	d->psn = pt_get32(b + 12);
	d->rkey = pt_get32(b + 16);
	d->vaddr = pt_get64(b + 24);
}

static void pt_dest_print(const char *side, const struct pt_dest *d, enum test_id t)
{
	printf(" %s address: LID %#06x QPN %#06x PSN %#08x", side, d->lid, d->qpn, d->psn);
	if (t == T_READ_BW)
		printf(" OUT %#04x", d->out_reads);
	printf(" RKey %#08x VAddr %#016" PRIx64 "\n", d->rkey, d->vaddr);
}

static void pt_on_event(struct pt *p, const struct uiw_cm_event *ev)
{
	switch (ev->event) {
	case UIW_CM_EVENT_CONNECT_REQUEST:
		if (p->have_req) {
			uiw_reject(ev->id, NULL, 0);
			uiw_destroy_id(ev->id);
			return;
		}
		p->req = *ev;
		p->have_req = 1;
		return;
	case UIW_CM_EVENT_ESTABLISHED:
		if (ev->id == p->cid)
			p->c_est = 1;
		else if (ev->id == p->did)
			p->d_est = 1;
		return;
	case UIW_CM_EVENT_DISCONNECTED:
		if (ev->id == p->cid)
			p->c_disc = 1;
		else if (ev->id == p->did)
			p->d_disc = 1;
		else
			return;
		if (!p->closing && !(ev->id == p->did && p->d_closing))
			die(EXIT_ERR, "perftest peer: %s connection closed (status %d%s)",
			    ev->id == p->cid ? "exchange" : "data", ev->status,
			    ev->term_flags ? ", TERMINATE" : "");
		return;
	default:
		if (ev->id == p->cid || ev->id == p->did) {
			/* connect failures are handled by pt_connect() */
			p->req.event = ev->event;
			p->req.status = ev->status;
			if (ev->id == p->cid)
				p->c_est = -1;
			else
				p->d_est = -1;
		}
		return;
	}
}

/* wait up to @ms for CM events; returns when one was handled */
static int pt_cm_step(struct pt *p, int ms)
{
	struct uiw_cm_event ev;
	int ret = uiw_get_cm_event(p->ctx, &ev, ms);

	if (ret == -ETIMEDOUT)
		return 0;
	vcheck(ret, "uiw_get_cm_event");
	pt_on_event(p, &ev);
	return 1;
}

static void pt_cm_wait(struct pt *p, int *flag, int ms, const char *what)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	while (!*flag) {
		if (ms >= 0 && now_ns() > end)
			die(EXIT_ERR, "perftest peer: timed out waiting for %s", what);
		pt_cm_step(p, 100);
	}
}

static void pt_cpost_recv(struct pt *p, unsigned slot)
{
	struct uiw_sge sge = {
		.addr = (uintptr_t)(p->cbuf + PT_CSLOT * (1 + slot)),
		.length = PT_CSLOT,
		.lkey = p->cmr->lkey,
	};
	struct uiw_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};

	vcheck(uiw_post_recv(p->cqp, &wr, NULL), "uiw_post_recv (exchange)");
}

/* one message of the exchange, as perftest's rdma_write_data/_keys */
static void pt_csend(struct pt *p, const void *d, size_t n)
{
	struct uiw_sge sge = {
		.addr = (uintptr_t)p->cbuf, .length = (uint32_t)n, .lkey = p->cmr->lkey};
	struct uiw_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = UIW_WR_SEND,
		.send_flags = UIW_SEND_SIGNALED,
	};
	struct uiw_wc wc;
	int ret;

	memcpy(p->cbuf, d, n);
	vcheck(uiw_post_send(p->cqp, &wr, NULL), "uiw_post_send (exchange)");
	while ((ret = uiw_poll_cq(p->cscq, 1, &wc)) == 0)
		pt_cm_step(p, 1);
	vcheck(ret < 0 ? ret : 0, "uiw_poll_cq (exchange)");
	if (wc.status != UIW_WC_SUCCESS)
		die(EXIT_ERR, "perftest exchange: Send completed with status %d", wc.status);
}

static void pt_crecv(struct pt *p, void *d, size_t n)
{
	struct uiw_wc wc;
	int ret;

	while ((ret = uiw_poll_cq(p->crcq, 1, &wc)) == 0) {
		if (p->c_disc)
			die(EXIT_ERR, "perftest peer closed the exchange connection early");
		pt_cm_step(p, 1);
	}
	vcheck(ret < 0 ? ret : 0, "uiw_poll_cq (exchange)");
	if (wc.status != UIW_WC_SUCCESS)
		die(EXIT_ERR, "perftest exchange: receive completed with status %d", wc.status);
	if (wc.byte_len != n)
		die(EXIT_ERR,
		    "perftest exchange: expected %zu octets, got %u (not perftest 4.5's "
		    "exchange, or another test or option on the peer)",
		    n, wc.byte_len);
	memcpy(d, p->cbuf + PT_CSLOT * (1 + wc.wr_id), n);
	pt_cpost_recv(p, (unsigned)wc.wr_id);
}

/* ctx_xchg_data: the client sends first */
static void pt_xchg(struct pt *p, const void *mine, void *theirs, size_t n)
{
	if (p->server) {
		pt_crecv(p, theirs, n);
		pt_csend(p, mine, n);
	} else {
		pt_csend(p, mine, n);
		pt_crecv(p, theirs, n);
	}
}

/* ctx_hand_shake: a struct pingpong_dest each way */
static void pt_hand_shake(struct pt *p, const struct pt_dest *mine, struct pt_dest *theirs)
{
	uint8_t a[PT_DEST_LEN], b[PT_DEST_LEN];

	pt_dest_encode(mine, a);
	pt_xchg(p, a, b, PT_DEST_LEN);
	if (theirs)
		pt_dest_decode(b, theirs);
}

static void pt_open(struct pt *p)
{
	struct uiw_context_attr a = {0};

	a.mode = UIW_CTX_PROGRESS_THREAD;
	a.crc = p->o->crc ? UIW_CRC_ON : UIW_CRC_OFF;
	a.markers = p->o->markers;
	/* Linux siw as responder drops an FPDU that follows its Reply at once */
	a.first_fpdu_delay_ms = 50;
	vcheck(uiw_open_context(&p->ctx, &a), "uiw_open_context");
	(void)uiw_crc32c("", 0);
	vcheck(uiw_alloc_pd(p->ctx, &p->pd), "uiw_alloc_pd");
	p->cbuf = aligned_alloc(4096, 4096);
	if (!p->cbuf)
		die(EXIT_ERR, "out of memory");
	memset(p->cbuf, 0, 4096);
	vcheck(uiw_reg_mr(p->pd, p->cbuf, 4096, UIW_ACCESS_LOCAL_WRITE, &p->cmr), "uiw_reg_mr");
	vcheck(uiw_create_cq(p->ctx, 16, NULL, NULL, &p->cscq), "uiw_create_cq");
	vcheck(uiw_create_cq(p->ctx, 16, NULL, NULL, &p->crcq), "uiw_create_cq");
}

static void pt_make_cqp(struct pt *p)
{
	struct uiw_qp_init_attr qa = {0};

	qa.send_cq = p->cscq;
	qa.recv_cq = p->crcq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = PT_CRECV;
	vcheck(uiw_create_qp(p->pd, &qa, &p->cqp), "uiw_create_qp (exchange)");
	for (unsigned i = 0; i < PT_CRECV; i++)
		pt_cpost_recv(p, i);
}

static void pt_make_dqp(struct pt *p, unsigned ird)
{
	const struct opts *o = p->o;
	struct uiw_qp_init_attr qa = {0};
	size_t need;
	int n;

	n = (int)(o->tx_depth + p->rx + 16);
	vcheck(uiw_create_cq(p->ctx, n, NULL, NULL, &p->dcq), "uiw_create_cq");
	qa.send_cq = p->dcq;
	qa.recv_cq = p->dcq;
	qa.cap.max_send_wr = o->tx_depth + 8;
	qa.cap.max_recv_wr = p->rx ? p->rx : 1;
	if (o->test == T_READ_BW) {
		qa.ird = (uint16_t)ird;
		qa.ord = (uint16_t)ird;
	}
	vcheck(uiw_create_qp(p->pd, &qa, &p->dqp), "uiw_create_qp");
	/* the peer may touch [vaddr, vaddr + max(size, cycle buffer)) */
	need = o->size > p->cycle ? o->size : p->cycle;
	need = (need * 2 + 4095) & ~(size_t)4095;
	p->buflen = need;
	p->buf = aligned_alloc(4096, need);
	if (!p->buf)
		die(EXIT_ERR, "out of memory (%zu octets)", need);
	memset(p->buf, 0, need);
	vcheck(uiw_reg_mr(p->pd, p->buf, need,
			  UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ,
			  &p->mr),
	       "uiw_reg_mr");
	p->credit = (volatile uint32_t *)(p->cbuf + 2048);
	vcheck(uiw_reg_mr(p->pd, p->cbuf + 2048, 64,
			  UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE, &p->credit_mr),
	       "uiw_reg_mr");
}

/* connect @id's slot (exchange or data) with retries, as perftest's client */
static void pt_connect(struct pt *p, int data, unsigned ird)
{
	struct uiw_conn_param cp = {0};
	const char *what = data ? "data connection" : "exchange connection";

	if (data && p->o->test == T_READ_BW) {
		cp.responder_resources = (uint16_t)ird;
		cp.initiator_depth = (uint16_t)ird;
	}
	for (int i = 0;; i++) {
		struct uiw_cm_id *id;
		int *est = data ? &p->d_est : &p->c_est;

		vcheck(uiw_create_id(p->ctx, NULL, &id), "uiw_create_id");
		if (data)
			p->did = id;
		else
			p->cid = id;
		*est = 0;
		int ret = uiw_connect(id, p->o->server, (uint16_t)p->o->port,
				      data ? p->dqp : p->cqp, &cp);

		if (ret == -ENXIO || ret == -EAGAIN)
			die(EXIT_ERR, "cannot resolve %s: %s", p->o->server,
			    resolve_error(p->o->server));
		vcheck(ret, "uiw_connect");
		pt_cm_wait(p, est, PT_WAIT_MS, what);
		if (*est > 0)
			return;
		if (i + 1 >= PT_RETRIES)
			die(EXIT_ERR,
			    "perftest peer %s port %u: %s failed: %s (status %d), %d tries",
			    p->o->server, p->o->port, what, uiw_event_str(p->req.event),
			    p->req.status, PT_RETRIES);
		if (data)
			p->did = NULL;
		else
			p->cid = NULL;
		uiw_destroy_id(id);
		usleep(100000);
	}
}

static struct uiw_cm_id *pt_accept(struct pt *p, int data, unsigned *ird)
{
	struct uiw_cm_id *id;
	struct uiw_conn_param cp = {0};

	pt_cm_wait(p, &p->have_req, data ? PT_WAIT_MS : -1, "the perftest client");
	p->have_req = 0;
	id = p->req.id;
	if (data) {
		unsigned want = p->o->outs;

		if (p->req.initiator_depth > want)
			want = p->req.initiator_depth;
		if (p->req.responder_resources > want)
			want = p->req.responder_resources;
		if (want > 16383)
			want = 16383;
		*ird = want;
		p->did = id;
		pt_make_dqp(p, want);
		if (p->o->test == T_READ_BW) {
			cp.responder_resources = (uint16_t)want;
			cp.initiator_depth = (uint16_t)want;
		}
		vcheck(uiw_accept(id, p->dqp, &cp), "uiw_accept");
	} else {
		p->cid = id;
		vcheck(uiw_accept(id, p->cqp, &cp), "uiw_accept");
	}
	return id;
}

/* the sizes and options perftest derives, as it does (force_dependecies) */
static void pt_derive(struct pt *p)
{
	struct opts *o = p->o;

	if (o->tx_depth > o->iters)
		o->tx_depth = (unsigned)o->iters;
	if (o->size > 8192 && !(o->given & G_CQMOD)) /* perftest: no moderation */
		o->cq_mod = 1;
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (o->test == T_SEND_BW) {
		p->rx = o->rx_depth;
		if (p->rx > o->iters)
			p->rx = (unsigned)o->iters;
		if (p->rx % 2)
			p->rx++;
	}
}

static void pt_header(struct pt *p)
{
	const struct opts *o = p->o;

	printf("%s\n", dashes);
	printf("                    %s\n", tests[o->test].title);
	printf(" uiw-perf (uiwarp %s) --perftest %s", uiw_version(),
	       p->server ? "server" : "client");
	if (o->server)
		printf(" of %s port %u", o->server, o->port);
	printf("\n");
	printf(" Peer            : perftest version %s, rdma_cm (-R) exchange\n", p->rem_version);
	printf(" Transport       : iWARP (RDMAP/DDP/MPA) over TCP, RC\n");
	printf(" Number of qps   : 1            Completion    : busy-poll (progress thread)\n");
	printf(" TX depth        : %-8u     CQ moderation : %u\n", o->tx_depth, o->cq_mod);
	if (o->test == T_SEND_BW)
		printf(" RX depth        : %-8u     Flow control  : perftest credits (RDMA Write)\n",
		       p->rx);
	if (o->test == T_READ_BW)
		printf(" Outstand reads  : %u\n", o->outs);
	printf(" MPA CRC         : %-8s     MPA markers   : %s\n", onoff(o->crc),
	       onoff(o->markers));
	printf(" Cycle buffer    : %-8u     Cache line    : %u\n", p->cycle, p->cline);
	printf("%s\n", dashes);
	pt_dest_print("local", &p->my, o->test);
	pt_dest_print("remote", &p->rem, o->test);
	printf("%s\n", dashes);
	printf(" %-10s %-14s %-18s %-20s %s\n", "#bytes", "#iterations", "BW peak[MB/sec]",
	       "BW average[MB/sec]", "MsgRate[Mpps]");
	fflush(stdout);
}

/* after a failed completion: say how the connection ended */
static void pt_why(struct pt *p)
{
	struct uiw_cm_event ev;
	uint64_t end = now_ns() + 500000000ull;

	while (now_ns() < end)
		if (!uiw_get_cm_event(p->ctx, &ev, 100) && ev.event == UIW_CM_EVENT_DISCONNECTED)
			fprintf(stderr,
				"%s: %s connection: DISCONNECTED status %d, TERMINATE %s "
				"%u/%u/%u\n",
				prog, ev.id == p->did ? "data" : "exchange", ev.status,
				ev.term_flags == UIW_CM_TERM_SENT	? "sent"
				: ev.term_flags == UIW_CM_TERM_RECEIVED ? "received"
									: "none",
				ev.term_layer, ev.term_etype, ev.term_ecode);
}

static void pt_wc_check(const struct uiw_wc *wc, const char *what)
{
	if (wc->status != UIW_WC_SUCCESS)
		die(EXIT_ERR, "%s completed with status %d (opcode %d%s, TERMINATE %u/%u/%u)", what,
		    wc->status, wc->opcode, wc->wc_flags & UIW_WC_TERM ? "" : ", no TERM",
		    wc->term_layer, wc->term_etype, wc->term_ecode);
}

/* client: the timed run (perftest's run_iter_bw) */
static void pt_client_run(struct pt *p, struct bw_result *r)
{
	const struct opts *o = p->o;
	uint64_t iters = o->iters, posted = 0, done = 0, t0, t1;
	struct samples smp = {0};
	struct uiw_sge sge = {.addr = (uintptr_t)p->buf, .length = o->size, .lkey = p->mr->lkey};
	struct uiw_send_wr wr = {.sg_list = &sge, .num_sge = 1};
	struct uiw_wc wc[16];

	switch (o->test) {
	case T_WRITE_BW:
		wr.opcode = UIW_WR_RDMA_WRITE;
		break;
	case T_READ_BW:
		wr.opcode = UIW_WR_RDMA_READ;
		break;
	default:
		wr.opcode = UIW_WR_SEND;
		break;
	}
	wr.wr.rdma.remote_addr = p->rem.vaddr;
	wr.wr.rdma.rkey = p->rem.rkey;
	t0 = now_ns();
	samples_push(&smp, t0, 0);
	while (done < iters) {
		while (posted < iters && posted - done < o->tx_depth) {
			int ret;

			if (o->test == T_SEND_BW &&
			    (uint32_t)(posted + 1 - *p->credit) >= p->rx) /* perftest's window */
				break;
			wr.wr_id = posted;
			wr.send_flags = (posted % o->cq_mod == o->cq_mod - 1 || posted == iters - 1)
						? UIW_SEND_SIGNALED
						: 0;
			ret = uiw_post_send(p->dqp, &wr, NULL);
			if (ret == -ENOMEM)
				break;
			vcheck(ret, "uiw_post_send");
			posted++;
		}
		int n = uiw_poll_cq(p->dcq, 16, wc);

		vcheck(n < 0 ? n : 0, "uiw_poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != UIW_WC_SUCCESS)
				fprintf(stderr,
					"%s: posted %" PRIu64 ", done %" PRIu64 ", credit %u\n",
					prog, posted, done, *p->credit);
			if (wc[i].status != UIW_WC_SUCCESS)
				pt_why(p);
			pt_wc_check(&wc[i], "a data WR");
			done = wc[i].wr_id + 1;
			samples_push(&smp, now_ns(), done * o->size);
		}
	}
	t1 = now_ns();
	bw_compute(&smp, o->size, iters, t0, t1, r);
	samples_free(&smp);
}

static void pt_post_data_recv(struct pt *p, uint64_t i)
{
	struct uiw_sge sge = {.addr = (uintptr_t)p->buf, .length = p->o->size, .lkey = p->mr->lkey};
	struct uiw_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1};

	vcheck(uiw_post_recv(p->dqp, &wr, NULL), "uiw_post_recv");
}

/* send_bw server: receive iters Sends, repost, return credits by RDMA Write
 * (perftest's run_iter_bw_server on iWARP) */
static void pt_server_recv(struct pt *p, uint64_t *posted, struct bw_result *r)
{
	const struct opts *o = p->o;
	uint64_t rcnt = 0, t0 = 0, t1, wdone = 0, wposted = 0;
	unsigned credit_cnt = p->rx / 3 ? p->rx / 3 : 1;
	struct samples smp = {0};
	struct uiw_sge sge = {.length = 4};
	struct uiw_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = UIW_WR_RDMA_WRITE,
		.send_flags = UIW_SEND_SIGNALED,
	};
	struct uiw_wc wc[16];
	uint32_t *cv = (uint32_t *)(p->cbuf + 2048 + 32);

	/* the count leaves from registered memory: a slot of the credit MR */
	sge.lkey = p->credit_mr->lkey;
	wr.wr.rdma.remote_addr = p->rem.vaddr;
	wr.wr.rdma.rkey = p->rem.rkey;
	while (rcnt < o->iters) {
		int n = uiw_poll_cq(p->dcq, 16, wc);

		vcheck(n < 0 ? n : 0, "uiw_poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].wr_id & PT_WRID_CREDIT) {
				pt_wc_check(&wc[i], "a credit Write");
				wdone++;
				continue;
			}
			if (wc[i].status != UIW_WC_SUCCESS)
				fprintf(stderr,
					"%s: received %" PRIu64 ", posted %" PRIu64
					", credit Writes %" PRIu64 "/%" PRIu64 "\n",
					prog, rcnt, *posted, wdone, wposted);
			if (wc[i].status != UIW_WC_SUCCESS)
				pt_why(p);
			pt_wc_check(&wc[i], "a receive");
			if (!rcnt) {
				t0 = now_ns();
				samples_push(&smp, t0, 0);
			}
			rcnt++;
			if (*posted < o->iters)
				pt_post_data_recv(p, (*posted)++);
			if ((rcnt % p->rx) % credit_cnt == 0) {
				/* a slot per Write in flight: the engine may read
				 * (and checksum) the source until it completes */
				while (wposted - wdone >= PT_CREDIT_SLOTS) {
					struct uiw_wc w;
					int m = uiw_poll_cq(p->dcq, 1, &w);

					vcheck(m < 0 ? m : 0, "uiw_poll_cq");
					if (m == 1 && (w.wr_id & PT_WRID_CREDIT)) {
						pt_wc_check(&w, "a credit Write");
						wdone++;
					} else if (m == 1) {
						die(EXIT_ERR,
						    "internal: receive while draining credits");
					}
				}
				/* perftest's credit: the receive count, 32 bits, host order */
				cv[wposted % PT_CREDIT_SLOTS] = (uint32_t)rcnt;
				sge.addr = (uintptr_t)&cv[wposted % PT_CREDIT_SLOTS];
				wr.wr_id = PT_WRID_CREDIT | wposted;
				vcheck(uiw_post_send(p->dqp, &wr, NULL), "uiw_post_send (credit)");
				wposted++;
			}
			if (rcnt % o->cq_mod == 0 || rcnt == o->iters)
				samples_push(&smp, now_ns(), rcnt * o->size);
		}
	}
	t1 = now_ns();
	/* let the last credit Writes leave */
	for (uint64_t end = now_ns() + 2000000000ull; wdone < wposted && now_ns() < end;) {
		int n = uiw_poll_cq(p->dcq, 16, wc);

		vcheck(n < 0 ? n : 0, "uiw_poll_cq");
		for (int i = 0; i < n; i++)
			if (wc[i].wr_id & PT_WRID_CREDIT)
				wdone++;
	}
	bw_compute(&smp, o->size, o->iters, t0, t1, r);
	samples_free(&smp);
}

static void pt_report_send(struct pt *p, const struct bw_result *r, struct bw_result *rem)
{
	uint8_t a[8], b[8];

	/* xchg_bw_reports: size, iters (8 octets from version 5.33), peak, avg, rate */
	pt_put64(a, r->size);
	pt_xchg(p, a, b, 8);
	rem->size = (uint32_t)pt_get64(b);
	pt_put64(a, r->msgs);
	pt_xchg(p, a, b, 8);
	rem->msgs = pt_get64(b);
	pt_putd(a, r->peak);
	pt_xchg(p, a, b, 8);
	rem->peak = pt_getd(b);
	pt_putd(a, r->avg);
	pt_xchg(p, a, b, 8);
	rem->avg = pt_getd(b);
	pt_putd(a, r->rate);
	pt_xchg(p, a, b, 8);
	rem->rate = pt_getd(b);
}

static void pt_print_bw(const struct bw_result *r)
{
	printf(" %-10" PRIu32 " %-14" PRIu64 " %-18.2f %-20.2f %.6f\n", r->size, r->msgs, r->peak,
	       r->avg, r->rate);
	fflush(stdout);
}

static void pt_close(struct pt *p)
{
	uint64_t end;

	p->closing = 1;
	if (p->did && p->d_est > 0 && !p->d_disc)
		uiw_disconnect(p->did);
	if (p->cid && p->c_est > 0 && !p->c_disc)
		uiw_disconnect(p->cid);
	end = now_ns() + 5000000000ull;
	while (((p->did && p->d_est > 0 && !p->d_disc) || (p->cid && p->c_est > 0 && !p->c_disc)) &&
	       now_ns() < end)
		pt_cm_step(p, 100);
	if (p->did)
		uiw_destroy_id(p->did);
	if (p->cid)
		uiw_destroy_id(p->cid);
	if (p->listen)
		uiw_destroy_id(p->listen);
	/* the process ends here: the library's resources go with it */
}

void pt_run(struct opts *o)
{
	struct pt pt = {0}, *p = &pt;
	char ver[PT_VERSION_LEN] = {0};
	uint8_t a[PT_DEST_LEN], b[PT_DEST_LEN];
	struct pt_dest zero = {0};
	struct bw_result r = {0}, rem = {0};
	unsigned ird = o->outs;
	uint64_t rposted = 0;

	p->o = o;
	p->server = !o->server;
	pt_derive(p);
	pt_open(p);
	pt_make_cqp(p);

	/* 1. the exchange connection (no private data; perftest asks IRD = ORD
	 * = 0, uiw-perf the library's default: nothing Reads on it) */
	if (p->server) {
		vcheck(uiw_create_id(p->ctx, NULL, &p->listen), "uiw_create_id");
		vcheck(uiw_listen(p->listen, o->bind, (uint16_t)o->port, 4), "uiw_listen");
		listening_line(o, uiw_get_port(p->listen));
		pt_accept(p, 0, NULL);
		pt_cm_wait(p, &p->c_est, PT_WAIT_MS, "the exchange connection");
		if (p->c_est < 0)
			die(EXIT_ERR, "exchange connection failed: %s",
			    uiw_event_str(p->req.event));
	} else {
		pt_connect(p, 0, 0);
	}

	/* 2. versions (16 octets, NUL-padded), cycle buffer and cache line
	 * (4 octets each, big-endian), MTU ("%d", 2 octets) */
	strncpy(ver, PT_VERSION, sizeof(ver) - 1);
	pt_xchg(p, ver, p->rem_version, PT_VERSION_LEN);
	p->rem_version[PT_VERSION_LEN] = 0;
	if (strtod(p->rem_version, NULL) < 5.70)
		die(EXIT_ERR,
		    "perftest peer: version '%s' (need 5.70 or later, perftest 4.5's "
		    "is 6.06)",
		    p->rem_version);
	pt_put32(a, PT_CYCLE_BUFFER);
	pt_xchg(p, a, b, 4);
	p->cycle = pt_get32(b) > PT_CYCLE_BUFFER ? pt_get32(b) : PT_CYCLE_BUFFER;
	pt_put32(a, PT_CACHE_LINE);
	pt_xchg(p, a, b, 4);
	p->cline = pt_get32(b) > PT_CACHE_LINE ? pt_get32(b) : PT_CACHE_LINE;
	memset(a, 0, sizeof(a));
	memcpy(a, PT_MTU, sizeof(PT_MTU));
	pt_xchg(p, a, b, 2);

	/* 3. a sync, the data connection to the same port, a sync */
	pt_hand_shake(p, &zero, NULL);
	if (p->server) {
		pt_accept(p, 1, &ird);
		pt_cm_wait(p, &p->d_est, PT_WAIT_MS, "the data connection");
		if (p->d_est < 0)
			die(EXIT_ERR, "data connection failed: %s", uiw_event_str(p->req.event));
	} else {
		pt_make_dqp(p, o->outs);
		pt_connect(p, 1, o->outs);
	}
	pt_hand_shake(p, &zero, NULL);

	/* 4. the addresses: three exchanges of struct pingpong_dest (one QP) */
	p->my.lid = 0;
	p->my.out_reads = o->test == T_READ_BW ? ird : 1;
	p->my.qpn = 1;
	p->my.psn = (uint32_t)(now_ns() ^ (uint64_t)getpid()) & 0xffffff;
	if (o->test == T_SEND_BW) { /* ctx_alloc_credit: the credit word instead */
		p->my.rkey = p->credit_mr->rkey;
		p->my.vaddr = (uintptr_t)p->credit;
	} else {
		p->my.rkey = p->mr->rkey;
		p->my.vaddr = (uintptr_t)p->buf;
	}
	pt_hand_shake(p, &p->my, &p->rem);
	pt_hand_shake(p, &p->my, &p->rem);
	pt_hand_shake(p, &p->my, &p->rem);
	pt_header(p);

	/* 5. the run */
	if (o->test == T_SEND_BW) {
		if (p->server) /* ctx_set_recv_wqes: rx_depth receives */
			for (; rposted < p->rx; rposted++)
				pt_post_data_recv(p, rposted);
		pt_hand_shake(p, &p->my, NULL);
		if (p->server)
			pt_server_recv(p, &rposted, &r);
		else
			pt_client_run(p, &r);
		pt_print_bw(&r);
	} else if (p->server) {
		/* passive: wait for the client's end, then take its report; a
		 * uiw-perf client closes the data connection first */
		p->d_closing = 1;
		pt_hand_shake(p, &p->my, NULL);
		pt_report_send(p, &r, &rem);
		pt_print_bw(&rem);
	} else {
		uint64_t t;

		pt_client_run(p, &r);
		pt_print_bw(&r);
		/* A Write completes once TCP has it, and perftest's server tears
		 * the data connection down (RST) as soon as the exchange
		 * connection says the client is done: close the data connection
		 * gracefully first, so that every Write has reached the peer */
		t = now_ns();
		p->d_closing = 1;
		vcheck(uiw_disconnect(p->did), "uiw_disconnect");
		pt_cm_wait(p, &p->d_disc, PT_WAIT_MS, "the data connection's graceful close");
		printf(" data connection closed gracefully %.1f ms after the last completion\n",
		       (double)(now_ns() - t) / 1e6);
		pt_hand_shake(p, &p->my, NULL);
		pt_report_send(p, &r, &rem);
	}
	printf("%s\n", dashes);
	fflush(stdout);
	/* 6. ctx_close_connection: a last sync, then disconnect (the peer may
	 * close as soon as it has our half) */
	p->closing = 1;
	pt_hand_shake(p, &p->my, NULL);
	/* perftest disconnects after its last message; closing first makes
	 * siw complete that Send, already on the wire, with an error (the
	 * perftest server then fails).  Give the peer time to go first (a
	 * client 2 s, a server 5 s: two uiw-perf end after 2 s). */
	for (uint64_t end = now_ns() + (p->server ? 5000000000ull : 2000000000ull);
	     !p->c_disc && now_ns() < end;)
		pt_cm_step(p, 100);
	pt_close(p);
}

