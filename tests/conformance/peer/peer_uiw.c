/* SPDX-License-Identifier: MIT */
/* peer_uiw.c - peer.h on uiwarp (uiw_verbs.h): the uiw_peer binary. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uiw_verbs.h"
#include "peer.h"

const char *p_impl = "uiw";

static struct uiw_context *ctx;
static struct uiw_pd *pd;
static struct uiw_cq *cq;
static struct uiw_comp_channel *ch;
static struct uiw_qp *qp;
static struct uiw_cm_id *lid, *cid;
static struct popts opts;
static const char *paddr;
static int pport;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void conv_ev(const struct uiw_cm_event *e, struct pev *ev)
{
	memset(ev, 0, sizeof(*ev));
	switch (e->event) {
	case UIW_CM_EVENT_CONNECT_REQUEST: ev->type = P_EV_REQUEST; break;
	case UIW_CM_EVENT_ESTABLISHED: ev->type = P_EV_ESTABLISHED; break;
	case UIW_CM_EVENT_REJECTED: ev->type = P_EV_REJECTED; break;
	case UIW_CM_EVENT_CONNECT_ERROR: ev->type = P_EV_CONNECT_ERROR; break;
	case UIW_CM_EVENT_UNREACHABLE: ev->type = P_EV_UNREACHABLE; break;
	case UIW_CM_EVENT_DISCONNECTED: ev->type = P_EV_DISCONNECTED; break;
	default: ev->type = P_EV_OTHER; break;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", uiw_event_str(e->event));
	if (!ev->name[0])
		snprintf(ev->name, sizeof(ev->name), "event %d", (int)e->event);
	ev->status = e->status;
	ev->pdlen = e->private_data_len;
	memcpy(ev->pd, e->private_data, e->private_data_len > 512 ? 512 : e->private_data_len);
	ev->ird = e->responder_resources;
	ev->ord = e->initiator_depth;
	ev->term_flags = e->term_flags;
	ev->term_layer = e->term_layer;
	ev->term_etype = e->term_etype;
	ev->term_ecode = e->term_ecode;
}

int p_init(int server, const char *addr, int port, const struct popts *o)
{
	struct uiw_context_attr a;
	int rc;

	opts = *o;
	paddr = addr;
	pport = port;
	memset(&a, 0, sizeof(a));
	a.crc = o->crc < 0 ? UIW_CRC_DEFAULT : o->crc ? UIW_CRC_ON : UIW_CRC_OFF;
	a.markers = o->markers;
	a.mpa_rev = o->mpa_rev;
	a.p2p = o->p2p;
	a.rtr = o->rtr;
	a.first_fpdu_delay_ms = o->fpdu_delay;
	a.pd_max = 0;
	rc = uiw_open_context(&ctx, &a);
	if (rc)
		return rc;
	if ((rc = uiw_alloc_pd(ctx, &pd)) || (rc = uiw_create_comp_channel(ctx, &ch)) ||
	    (rc = uiw_create_cq(ctx, o->sq + o->rq + 16, NULL, ch, &cq)))
		return rc;
	if (server) {
		if ((rc = uiw_create_id(ctx, NULL, &lid)) || (rc = uiw_listen(lid, addr, port, 4)))
			return rc;
		printf("peer: listening on %s port %u\n", addr, uiw_get_port(lid));
		fflush(stdout);
	} else {
		if ((rc = uiw_create_id(ctx, NULL, &cid)))
			return rc;
	}
	return 0;
}

int p_reg(size_t len, int access, struct pmr *mr)
{
	struct uiw_mr *m;
	int acc = 0, rc;

	memset(mr, 0, sizeof(*mr));
	mr->len = len;
	mr->addr = aligned_alloc(4096, (len + 4095) / 4096 * 4096 + 4096);
	if (!mr->addr)
		return -ENOMEM;
	memset(mr->addr, 0, len);
	if (access & P_ACC_LW)
		acc |= UIW_ACCESS_LOCAL_WRITE;
	if (access & P_ACC_RW)
		acc |= UIW_ACCESS_REMOTE_WRITE;
	if (access & P_ACC_RR)
		acc |= UIW_ACCESS_REMOTE_READ;
	rc = uiw_reg_mr(pd, mr->addr, len ? len : 1, acc, &m);
	if (rc)
		return rc;
	mr->h = m;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	return 0;
}

void p_dereg(struct pmr *mr)
{
	if (mr->h)
		uiw_dereg_mr(mr->h);
	mr->h = NULL;
}

static int make_qp(void)
{
	struct uiw_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = opts.sq;
	a.cap.max_recv_wr = opts.rq;
	a.cap.max_send_sge = opts.max_sge;
	a.cap.max_recv_sge = opts.max_sge;
	a.ird = opts.ird;
	a.ord = opts.ord;
	a.ext = opts.rfc7306 ? UIW_QP_EXT_RFC7306 : 0;
	return uiw_create_qp(pd, &a, &qp);
}

int p_client_qp(void)
{
	return make_qp();
}

int p_wait_request(struct pev *ev, int timeout_ms)
{
	struct uiw_cm_event e;
	int rc = uiw_get_cm_event(ctx, &e, timeout_ms);

	if (rc == -ETIMEDOUT) {
		memset(ev, 0, sizeof(*ev));
		ev->type = P_EV_TIMEOUT;
		snprintf(ev->name, sizeof(ev->name), "TIMEOUT");
		return 0;
	}
	if (rc)
		return rc;
	conv_ev(&e, ev);
	if (ev->type == P_EV_REQUEST) {
		cid = e.id;
		return make_qp();
	}
	return 0;
}

static int wait_event(struct pev *ev, int timeout_ms)
{
	struct uiw_cm_event e;
	int rc = uiw_get_cm_event(ctx, &e, timeout_ms);

	if (rc == -ETIMEDOUT) {
		memset(ev, 0, sizeof(*ev));
		ev->type = P_EV_TIMEOUT;
		snprintf(ev->name, sizeof(ev->name), "TIMEOUT");
		return 0;
	}
	if (rc)
		return rc;
	conv_ev(&e, ev);
	return 0;
}

int p_accept(const void *data, int len, struct pev *ev, int timeout_ms)
{
	struct uiw_conn_param p = { data, (uint16_t)len, (uint16_t)opts.ird, (uint16_t)opts.ord };
	int rc = uiw_accept(cid, qp, &p);

	if (rc)
		return rc;
	return wait_event(ev, timeout_ms);
}

int p_reject(const void *data, int len)
{
	return uiw_reject(cid, data, (uint16_t)len);
}

int p_connect(const void *data, int len, struct pev *ev, int timeout_ms)
{
	struct uiw_conn_param p = { data, (uint16_t)len, (uint16_t)opts.ird, (uint16_t)opts.ord };
	int rc = uiw_connect(cid, paddr, (uint16_t)pport, qp, &p);

	if (rc)
		return rc;
	return wait_event(ev, timeout_ms);
}

int p_post_recv(uint64_t id, struct psge *sg, int n)
{
	struct uiw_sge s[UIW_MAX_SGE];
	struct uiw_recv_wr wr = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		s[i].addr = (uintptr_t)sg[i].addr;
		s[i].length = sg[i].len;
		s[i].lkey = sg[i].lkey;
	}
	wr.wr_id = id;
	wr.sg_list = s;
	wr.num_sge = n;
	return uiw_post_recv(qp, &wr, NULL);
}

int p_post_send(uint64_t id, enum pop op, struct psge *sg, int n, uint64_t raddr, uint32_t rkey,
		uint32_t inv, unsigned flags)
{
	struct uiw_sge s[UIW_MAX_SGE];
	struct uiw_send_wr wr;
	int i;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		s[i].addr = (uintptr_t)sg[i].addr;
		s[i].length = sg[i].len;
		s[i].lkey = sg[i].lkey;
	}
	wr.wr_id = id;
	wr.sg_list = s;
	wr.num_sge = n;
	switch (op) {
	case P_WRITE: wr.opcode = UIW_WR_RDMA_WRITE; break;
	case P_READ: wr.opcode = UIW_WR_RDMA_READ; break;
	case P_SEND: wr.opcode = UIW_WR_SEND; break;
	case P_SEND_INV: wr.opcode = UIW_WR_SEND_WITH_INV; break;
	case P_ATOMIC_FADD: wr.opcode = UIW_WR_ATOMIC_FETCH_AND_ADD; break;
	}
	wr.invalidate_rkey = inv;
	if (op == P_ATOMIC_FADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (flags & P_F_SIGNALED)
		wr.send_flags |= UIW_SEND_SIGNALED;
	if (flags & P_F_SOLICITED)
		wr.send_flags |= UIW_SEND_SOLICITED;
	return uiw_post_send(qp, &wr, NULL);
}

static const char *wc_str(int s)
{
	switch (s) {
	case UIW_WC_SUCCESS: return "SUCCESS";
	case UIW_WC_LOC_LEN_ERR: return "LOC_LEN_ERR";
	case UIW_WC_LOC_QP_OP_ERR: return "LOC_QP_OP_ERR";
	case UIW_WC_LOC_PROT_ERR: return "LOC_PROT_ERR";
	case UIW_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
	case UIW_WC_REM_INV_REQ_ERR: return "REM_INV_REQ_ERR";
	case UIW_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	case UIW_WC_REM_OP_ERR: return "REM_OP_ERR";
	case UIW_WC_FATAL_ERR: return "FATAL_ERR";
	case UIW_WC_GENERAL_ERR: return "GENERAL_ERR";
	}
	return "?";
}

int p_poll(struct pwc *wc, int timeout_ms)
{
	struct uiw_wc w;
	long end = now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = uiw_poll_cq(cq, 1, &w);
		if (n == -EOVERFLOW)
			return n;
		if (n < 0)
			return n;
		if (n == 1)
			break;
		if (now_ms() >= end)
			return 0;
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	memset(wc, 0, sizeof(*wc));
	wc->id = w.wr_id;
	wc->status = w.status;
	snprintf(wc->status_str, sizeof(wc->status_str), "%s", wc_str(w.status));
	switch (w.opcode) {
	case UIW_WC_SEND: wc->opcode = P_WC_SEND; break;
	case UIW_WC_RDMA_WRITE: wc->opcode = P_WC_WRITE; break;
	case UIW_WC_RDMA_READ: wc->opcode = P_WC_READ; break;
	case UIW_WC_RECV: wc->opcode = P_WC_RECV; break;
	default: wc->opcode = P_WC_OTHER; break;
	}
	wc->byte_len = w.byte_len;
	wc->with_inv = !!(w.wc_flags & UIW_WC_WITH_INV);
	wc->inv_rkey = w.invalidated_rkey;
	wc->solicited = !!(w.wc_flags & UIW_WC_SOLICITED);
	wc->term = !!(w.wc_flags & UIW_WC_TERM);
	wc->term_layer = w.term_layer;
	wc->term_etype = w.term_etype;
	wc->term_ecode = w.term_ecode;
	return 1;
}

int p_arm(int solicited_only)
{
	return uiw_req_notify_cq(cq, solicited_only);
}

int p_wait_cq_event(int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	struct uiw_cq *c;
	void *cc;
	int rc;
	static int nb;

	if (!nb) {
		/* make the channel non-blocking so that the wait is bounded */
		fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
		nb = 1;
	}
	for (;;) {
		rc = uiw_get_cq_event(ch, &c, &cc);
		if (rc == 0) {
			uiw_ack_cq_events(c, 1);
			return 1;
		}
		if (rc != -EAGAIN)
			return rc;
		if (now_ms() >= end)
			return 0;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

int p_disconnect(void)
{
	return uiw_disconnect(cid);
}

int p_next_event(struct pev *ev, int timeout_ms)
{
	return wait_event(ev, timeout_ms);
}

void p_fini(void)
{
	if (cid)
		uiw_destroy_id(cid);
	if (lid)
		uiw_destroy_id(lid);
	cid = lid = NULL;
}
