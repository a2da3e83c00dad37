/* SPDX-License-Identifier: MIT */
/*
 * limits - resource bounds of the engine, for tests/sh/limits.sh (with the
 * raw peer tests/progs/limits_peer.py).
 *
 *   limits listen BACKLOG SECS   listen on 127.0.0.1 (port printed as
 *                                "port N") with BACKLOG and never answer a
 *                                connect request for SECS seconds: the
 *                                listener must hold at most min(BACKLOG,
 *                                256) connections (the shell counts fds)
 *   limits drain PORT disconnect|error LIMIT_MS
 *                                connect to a peer that completes the MPA
 *                                handshake and never reads, queue 32 MiB of
 *                                Sends, then uiw_disconnect() (or move the QP
 *                                to error): DISCONNECTED must come within
 *                                LIMIT_MS
 *   limits ord0 PORT             post a Read and a Send before connecting to
 *                                a peer that announces IRD 0: the Read must
 *                                complete with UIW_WC_LOC_QP_OP_ERR, the Send
 *                                with an error, within 5 s
 *   limits cqovf                 two contexts on 127.0.0.1: overflow the
 *                                client's send CQ (2 entries, 8 signaled
 *                                Writes): -EOVERFLOW, and the QP goes to
 *                                error: DISCONNECTED on both sides within 5 s
 *   limits queues                a send queue of 4, a receive queue of 8 and
 *                                an SRQ of 4 (not connected): chains one
 *                                longer than each fail with -ENOMEM at the
 *                                first WR that does not fit (*bad_wr), what
 *                                fits stays queued; after a connection the
 *                                queued receives and sends all complete
 *
 * Exit 0: as expected; 1: not; 2: set-up failed.  Every wait is bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

#define DRAIN_MSG (1u << 20)
#define DRAIN_N	  32

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int die(const char *what, int ret)
{
	fprintf(stderr, "limits: %s: %d (%s)\n", what, ret, strerror(ret < 0 ? -ret : ret));
	return 2;
}

/* One end: context, PD, buffer + MR, CQs, QP. */
struct end {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *scq, *rcq;
	struct uiw_qp *qp;
	struct uiw_mr *mr;
	void *buf;
	size_t len;
	struct uiw_cm_id *id;
};

static int end_open(struct end *e, size_t len, int scqe, unsigned sq)
{
	struct uiw_qp_init_attr qa;
	int ret;

	memset(e, 0, sizeof(*e));
	e->len = len;
	e->buf = calloc(1, len);
	if (!e->buf)
		return -ENOMEM;
	ret = uiw_open_context(&e->ctx, NULL);
	if (!ret)
		ret = uiw_alloc_pd(e->ctx, &e->pd);
	if (!ret)
		ret = uiw_reg_mr(e->pd, e->buf, len,
				 UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE |
					 UIW_ACCESS_REMOTE_READ,
				 &e->mr);
	if (!ret)
		ret = uiw_create_cq(e->ctx, scqe, NULL, NULL, &e->scq);
	if (!ret)
		ret = uiw_create_cq(e->ctx, 64, NULL, NULL, &e->rcq);
	if (ret)
		return ret;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = 8;
	return uiw_create_qp(e->pd, &qa, &e->qp);
}

static void end_close(struct end *e)
{
	if (e->id)
		uiw_destroy_id(e->id);
	if (e->qp)
		uiw_destroy_qp(e->qp);
	if (e->scq)
		uiw_destroy_cq(e->scq);
	if (e->rcq)
		uiw_destroy_cq(e->rcq);
	if (e->mr)
		uiw_dereg_mr(e->mr);
	if (e->pd)
		uiw_dealloc_pd(e->pd);
	if (e->ctx)
		uiw_close_context(e->ctx);
	free(e->buf);
}

/* Wait (at most @ms) for a CM event of @type on @ctx; other events are
 * printed and skipped.  0, or -ETIMEDOUT. */
static int wait_event(struct uiw_context *ctx, enum uiw_cm_event_type type, int ms,
		      struct uiw_cm_event *out)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	struct uiw_cm_event ev;

	for (;;) {
		uint64_t t = now_ms();

		if (t >= end)
			return -ETIMEDOUT;
		if (uiw_get_cm_event(ctx, &ev, (int)(end - t)))
			continue;
		if (ev.event == type) {
			if (out)
				*out = ev;
			return 0;
		}
		fprintf(stderr, "limits: event %s (status %d) while waiting for %s\n",
			uiw_event_str(ev.event), ev.status, uiw_event_str(type));
		if (ev.event != UIW_CM_EVENT_ESTABLISHED && ev.event != UIW_CM_EVENT_CONNECT_REQUEST)
			return -ECONNABORTED;
	}
}

static int do_listen(int backlog, int secs)
{
	struct uiw_context *ctx;
	struct uiw_cm_id *lid;
	int ret;

	ret = uiw_open_context(&ctx, NULL);
	if (ret)
		return die("uiw_open_context", ret);
	ret = uiw_create_id(ctx, NULL, &lid);
	if (!ret)
		ret = uiw_listen(lid, "127.0.0.1", 0, backlog);
	if (ret)
		return die("uiw_listen", ret);
	printf("port %u\n", uiw_get_port(lid));
	fflush(stdout);
	/* never take an event: every connect request waits for us */
	sleep((unsigned)secs);
	uiw_destroy_id(lid);
	uiw_close_context(ctx);
	return 0;
}

static int connect_to(struct end *e, int port)
{
	int ret = uiw_create_id(e->ctx, NULL, &e->id);

	if (!ret)
		ret = uiw_connect(e->id, "127.0.0.1", (uint16_t)port, e->qp, NULL);
	if (ret)
		return ret;
	return wait_event(e->ctx, UIW_CM_EVENT_ESTABLISHED, 10000, NULL);
}

static int do_drain(int port, int to_error, int limit_ms)
{
	struct uiw_send_wr wr, *bad;
	struct uiw_sge sge;
	struct end e;
	uint64_t t0, dt;
	int ret, posted = 0;

	ret = end_open(&e, DRAIN_MSG, 2 * DRAIN_N, DRAIN_N);
	if (ret)
		return die("set-up", ret);
	ret = connect_to(&e, port);
	if (ret)
		return die("connect", ret);
	for (int i = 0; i < DRAIN_N; i++) {
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)e.buf;
		sge.length = DRAIN_MSG;
		sge.lkey = e.mr->lkey;
		wr.wr_id = (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_SEND;
		wr.send_flags = UIW_SEND_SIGNALED;
		if (uiw_post_send(e.qp, &wr, &bad))
			break;
		posted++;
	}
	usleep(500000); /* the peer's window closes */
	{
		struct uiw_wc wc[2 * DRAIN_N];
		int n = uiw_poll_cq(e.scq, 2 * DRAIN_N, wc);

		printf("limits: drain: %d Sends posted, %d completed before the close\n", posted,
		       n);
		if (n >= posted) {
			printf("limits: drain: the peer took everything: no zero window\n");
			return 2;
		}
	}
	t0 = now_ms();
	if (to_error) {
		struct uiw_qp_attr qa;

		memset(&qa, 0, sizeof(qa));
		qa.qp_state = UIW_QPS_ERR;
		ret = uiw_modify_qp(e.qp, &qa, UIW_QP_STATE);
	} else {
		ret = uiw_disconnect(e.id);
	}
	if (ret)
		return die(to_error ? "uiw_modify_qp" : "uiw_disconnect", ret);
	ret = wait_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, limit_ms, NULL);
	dt = now_ms() - t0;
	if (ret) {
		printf("limits: drain %s: no DISCONNECTED within %d ms\n",
		       to_error ? "error" : "disconnect", limit_ms);
		/* the context cannot be closed with the connection stuck: exit */
		fflush(stdout);
		_exit(1);
	}
	printf("limits: drain %s: DISCONNECTED after %llu ms\n", to_error ? "error" : "disconnect",
	       (unsigned long long)dt);
	end_close(&e);
	return 0;
}

static const char *st_name(enum uiw_wc_status s)
{
	switch (s) {
	case UIW_WC_SUCCESS:
		return "SUCCESS";
	case UIW_WC_LOC_QP_OP_ERR:
		return "LOC_QP_OP_ERR";
	case UIW_WC_WR_FLUSH_ERR:
		return "WR_FLUSH_ERR";
	default:
		return "other";
	}
}

static int do_ord0(int port)
{
	struct uiw_send_wr wr[2], *bad;
	struct uiw_sge sge[2];
	struct uiw_wc wc[4];
	struct uiw_qp_attr qa;
	struct end e;
	uint64_t end;
	int ret, got = 0, ok;
	enum uiw_wc_status st[2] = {0, 0};

	ret = end_open(&e, 4096, 16, 8);
	if (ret)
		return die("set-up", ret);
	/* before the connection: ORD is the QP's (16), the Read is taken */
	memset(wr, 0, sizeof(wr));
	sge[0].addr = (uintptr_t)e.buf;
	sge[0].length = 64;
	sge[0].lkey = e.mr->lkey;
	wr[0].wr_id = 0;
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = UIW_WR_RDMA_READ;
	wr[0].send_flags = UIW_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = 0x1000;
	wr[0].wr.rdma.rkey = 0x1234;
	wr[0].next = &wr[1];
	sge[1] = sge[0];
	wr[1].wr_id = 1;
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 1;
	wr[1].opcode = UIW_WR_SEND;
	wr[1].send_flags = UIW_SEND_SIGNALED;
	ret = uiw_post_send(e.qp, wr, &bad);
	if (ret)
		return die("uiw_post_send before connecting", ret);
	ret = connect_to(&e, port);
	if (ret)
		return die("connect", ret);
	uiw_query_qp(e.qp, &qa);
	printf("limits: ord0: connected, ORD %u\n", qa.ord);
	end = now_ms() + 5000;
	while (got < 2 && now_ms() < end) {
		int n = uiw_poll_cq(e.scq, 4, wc);

		for (int i = 0; i < n; i++)
			if (wc[i].wr_id < 2) {
				st[wc[i].wr_id] = wc[i].status;
				got++;
			}
		if (n <= 0)
			usleep(10000);
	}
	printf("limits: ord0: %d of 2 completions: Read %s, Send %s\n", got, got ? st_name(st[0]) : "-",
	       got > 1 ? st_name(st[1]) : "-");
	ok = got == 2 && st[0] == UIW_WC_LOC_QP_OP_ERR && st[1] != UIW_WC_SUCCESS;
	if (!ok) {
		fflush(stdout);
		_exit(1);
	}
	/* the QP failed: the connection ends */
	if (wait_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, 10000, NULL))
		printf("limits: ord0: no DISCONNECTED\n");
	end_close(&e);
	return 0;
}

static int do_cqovf(void)
{
	struct uiw_cm_event ev;
	struct uiw_send_wr wr, *bad;
	struct uiw_sge sge;
	struct uiw_wc wc[8];
	struct uiw_cm_id *lid;
	struct end s, c;
	int ret, n, ovf = 0, got = 0, ok = 1;
	uint64_t t0;

	ret = end_open(&s, 65536, 16, 8);
	if (!ret)
		ret = end_open(&c, 65536, 2, 16);
	if (ret)
		return die("set-up", ret);
	ret = uiw_create_id(s.ctx, NULL, &lid);
	if (!ret)
		ret = uiw_listen(lid, "127.0.0.1", 0, 4);
	if (!ret)
		ret = uiw_create_id(c.ctx, NULL, &c.id);
	if (!ret)
		ret = uiw_connect(c.id, "127.0.0.1", uiw_get_port(lid), c.qp, NULL);
	if (!ret)
		ret = wait_event(s.ctx, UIW_CM_EVENT_CONNECT_REQUEST, 10000, &ev);
	if (!ret) {
		s.id = ev.id;
		ret = uiw_accept(s.id, s.qp, NULL);
	}
	if (!ret)
		ret = wait_event(s.ctx, UIW_CM_EVENT_ESTABLISHED, 10000, NULL);
	if (!ret)
		ret = wait_event(c.ctx, UIW_CM_EVENT_ESTABLISHED, 10000, NULL);
	if (ret)
		return die("connect", ret);
	for (int i = 0; i < 8; i++) {
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)c.buf;
		sge.length = 256;
		sge.lkey = c.mr->lkey;
		wr.wr_id = (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_RDMA_WRITE;
		wr.send_flags = UIW_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)s.buf + 256u * (unsigned)i;
		wr.wr.rdma.rkey = s.mr->rkey;
		ret = uiw_post_send(c.qp, &wr, &bad);
		if (ret)
			return die("uiw_post_send", ret);
	}
	t0 = now_ms();
	/* no poll: the CQ of 2 overflows; the QP must go to error and the
	 * connection close on both sides */
	if (wait_event(c.ctx, UIW_CM_EVENT_DISCONNECTED, 5000, NULL)) {
		printf("limits: cqovf: client: no DISCONNECTED within 5 s after the overflow\n");
		fflush(stdout);
		_exit(1);
	}
	printf("limits: cqovf: client DISCONNECTED after %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	if (wait_event(s.ctx, UIW_CM_EVENT_DISCONNECTED, 5000, NULL)) {
		printf("limits: cqovf: server: no DISCONNECTED\n");
		ok = 0;
	}
	for (int i = 0; i < 10; i++) {
		n = uiw_poll_cq(c.scq, 8, wc);
		if (n == -EOVERFLOW)
			ovf++;
		else if (n > 0)
			got += n;
	}
	printf("limits: cqovf: -EOVERFLOW %d time(s), %d completion(s) kept\n", ovf, got);
	if (ovf != 1 || got != 2)
		ok = 0;
	/* a WR posted now is flushed (the QP is in error) */
	ret = uiw_post_send(c.qp, &wr, &bad);
	n = uiw_poll_cq(c.scq, 8, wc);
	if (ret || n != 1 || wc[0].status != UIW_WC_WR_FLUSH_ERR) {
		printf("limits: cqovf: a WR after the overflow: post %d, poll %d\n", ret, n);
		ok = 0;
	}
	uiw_destroy_id(lid);
	end_close(&c);
	end_close(&s);
	return ok ? 0 : 1;
}

/* A chain of @n WRs at @wrs; the result of posting it, and the index of
 * *bad_wr (-1: NULL). */
static int post_chain_send(struct uiw_qp *qp, struct uiw_send_wr *wrs, int n, int *bad_i)
{
	struct uiw_send_wr *bad = NULL;
	int ret;

	for (int i = 0; i < n; i++)
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	ret = uiw_post_send(qp, wrs, &bad);
	*bad_i = bad ? (int)(bad - wrs) : -1;
	return ret;
}

static int post_chain_recv(struct uiw_qp *qp, struct uiw_srq *srq, struct uiw_recv_wr *wrs, int n,
			   int *bad_i)
{
	struct uiw_recv_wr *bad = NULL;
	int ret;

	for (int i = 0; i < n; i++)
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	ret = srq ? uiw_post_srq_recv(srq, wrs, &bad) : uiw_post_recv(qp, wrs, &bad);
	*bad_i = bad ? (int)(bad - wrs) : -1;
	return ret;
}

static int do_queues(void)
{
	struct end e;
	struct uiw_srq *srq = NULL;
	struct uiw_srq_init_attr sa = {.max_wr = 4, .max_sge = 1};
	struct uiw_send_wr sw[6];
	struct uiw_recv_wr rw[10];
	struct uiw_sge sge;
	int ret, bad, ok = 1;

	ret = end_open(&e, 65536, 64, 4);
	if (!ret)
		ret = uiw_create_srq(e.pd, &sa, &srq);
	if (ret)
		return die("set-up", ret);
	sge.addr = (uintptr_t)e.buf;
	sge.length = 64;
	sge.lkey = e.mr->lkey;
	memset(sw, 0, sizeof(sw));
	for (int i = 0; i < 6; i++) {
		sw[i].wr_id = (uint64_t)i;
		sw[i].sg_list = &sge;
		sw[i].num_sge = 1;
		sw[i].opcode = UIW_WR_SEND;
		sw[i].send_flags = UIW_SEND_SIGNALED;
	}
	/* send queue of 4: a chain of 3, then a chain of 3 (the 2nd WR of it
	 * does not fit) */
	ret = post_chain_send(e.qp, sw, 3, &bad);
	if (ret) {
		printf("limits: queues: 3 sends into 4: %d\n", ret);
		ok = 0;
	}
	ret = post_chain_send(e.qp, sw + 3, 3, &bad);
	printf("limits: queues: send queue 4, 6 posted: %d, bad_wr = WR %d\n", ret, bad + 3);
	if (ret != -ENOMEM || bad != 1)
		ok = 0;
	memset(rw, 0, sizeof(rw));
	for (int i = 0; i < 10; i++) {
		rw[i].wr_id = (uint64_t)i;
		rw[i].sg_list = &sge;
		rw[i].num_sge = 1;
	}
	ret = post_chain_recv(e.qp, NULL, rw, 10, &bad);
	printf("limits: queues: receive queue 8, 10 posted: %d, bad_wr = WR %d\n", ret, bad);
	if (ret != -ENOMEM || bad != 8)
		ok = 0;
	ret = post_chain_recv(NULL, srq, rw, 5, &bad);
	printf("limits: queues: SRQ 4, 5 posted: %d, bad_wr = WR %d\n", ret, bad);
	if (ret != -ENOMEM || bad != 4)
		ok = 0;
	/* what fits stays queued: moving the QP to error flushes exactly the
	 * 4 sends and 8 receives */
	{
		struct uiw_qp_attr qa = {.qp_state = UIW_QPS_ERR};
		struct uiw_wc wc[16];
		int ns = 0, nr = 0;
		uint64_t t0 = now_ms();

		uiw_modify_qp(e.qp, &qa, UIW_QP_STATE);
		while ((ns < 4 || nr < 8) && now_ms() - t0 < 5000) {
			int n = uiw_poll_cq(e.scq, 16, wc);

			ns += n > 0 ? n : 0;
			n = uiw_poll_cq(e.rcq, 16, wc);
			nr += n > 0 ? n : 0;
			if (ns < 4 || nr < 8)
				usleep(1000);
		}
		printf("limits: queues: flushed %d sends, %d receives\n", ns, nr);
		if (ns != 4 || nr != 8)
			ok = 0;
	}
	uiw_destroy_srq(srq);
	end_close(&e);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "listen"))
		return do_listen(atoi(argv[2]), atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "drain"))
		return do_drain(atoi(argv[2]), !strcmp(argv[3], "error"), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "ord0"))
		return do_ord0(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "cqovf"))
		return do_cqovf();
	if (argc == 2 && !strcmp(argv[1], "queues"))
		return do_queues();
	fprintf(stderr, "usage: limits listen BACKLOG SECS | drain PORT disconnect|error LIMIT_MS |"
			" ord0 PORT | cqovf | queues\n");
	return 2;
}
