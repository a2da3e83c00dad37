/* SPDX-License-Identifier: MIT */
/* peer_ibv.c - peer.h on rdma-core (libibverbs + librdmacm): the siw_peer
 * binary, run in the VM over siw0.  MPA options (CRC, revision, markers,
 * peer-to-peer) are siw's module parameters there, not ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "peer.h"

const char *p_impl = "siw";

static struct rdma_event_channel *ec;
static struct rdma_cm_id *lid, *cid;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_comp_channel *ch;
static struct popts opts;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int ird_of(void)
{
	return opts.ird ? opts.ird : 16;
}

static int ord_of(void)
{
	return opts.ord ? opts.ord : 16;
}

/* the next CM event within timeout_ms: 0 (ev filled, *raw acked), -errno */
static int get_event(struct pev *ev, int timeout_ms, struct rdma_cm_id **evid)
{
	struct pollfd pfd = { ec->fd, POLLIN, 0 };
	struct rdma_cm_event *e;
	int n;

	memset(ev, 0, sizeof(*ev));
	ev->term_flags = -1;
	n = poll(&pfd, 1, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0) {
		ev->type = P_EV_TIMEOUT;
		snprintf(ev->name, sizeof(ev->name), "TIMEOUT");
		return 0;
	}
	if (rdma_get_cm_event(ec, &e))
		return -errno;
	switch (e->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: ev->type = P_EV_REQUEST; break;
	case RDMA_CM_EVENT_ESTABLISHED: ev->type = P_EV_ESTABLISHED; break;
	case RDMA_CM_EVENT_REJECTED: ev->type = P_EV_REJECTED; break;
	case RDMA_CM_EVENT_CONNECT_ERROR: ev->type = P_EV_CONNECT_ERROR; break;
	case RDMA_CM_EVENT_UNREACHABLE: ev->type = P_EV_UNREACHABLE; break;
	case RDMA_CM_EVENT_DISCONNECTED: ev->type = P_EV_DISCONNECTED; break;
	default: ev->type = P_EV_OTHER; break;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", rdma_event_str(e->event));
	ev->status = e->status;
	ev->ird = e->param.conn.responder_resources;
	ev->ord = e->param.conn.initiator_depth;
	if (e->param.conn.private_data && e->param.conn.private_data_len) {
		ev->pdlen = e->param.conn.private_data_len;
		memcpy(ev->pd, e->param.conn.private_data, ev->pdlen);
	}
	if (evid)
		*evid = e->id;
	rdma_ack_cm_event(e);
	return 0;
}

static int expect(enum rdma_cm_event_type want, int timeout_ms)
{
	struct pev ev;
	int rc = get_event(&ev, timeout_ms, NULL);

	if (rc)
		return rc;
	if (strcmp(ev.name, rdma_event_str(want))) {
		fprintf(stderr, "peer: %s while waiting for %s (status %d)\n", ev.name,
			rdma_event_str(want), ev.status);
		return -EPROTO;
	}
	return 0;
}

static int resolve(const char *addr, int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { 0 }, *ai;
	char ps[16];

	hints.ai_family = AF_INET;
	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(addr, ps, &hints, &ai))
		return -EHOSTUNREACH;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static int verbs_objs(struct ibv_context *vc)
{
	if (!vc)
		return -ENODEV;
	pd = ibv_alloc_pd(vc);
	ch = ibv_create_comp_channel(vc);
	if (!pd || !ch)
		return -ENOMEM;
	cq = ibv_create_cq(vc, opts.sq + opts.rq + 16, NULL, ch, 0);
	return cq ? 0 : -ENOMEM;
}

int p_init(int server, const char *addr, int port, const struct popts *o)
{
	struct sockaddr_storage ss;
	int rc;

	opts = *o;
	ec = rdma_create_event_channel();
	if (!ec)
		return -errno;
	if ((rc = resolve(addr, port, &ss)))
		return rc;
	if (server) {
		if (rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(lid, (struct sockaddr *)&ss) || rdma_listen(lid, 4))
			return -errno;
		if ((rc = verbs_objs(lid->verbs)))
			return rc;
		printf("peer: listening on %s port %d\n", addr, port);
		fflush(stdout);
		return 0;
	}
	if (rdma_create_id(ec, &cid, NULL, RDMA_PS_TCP))
		return -errno;
	if (rdma_resolve_addr(cid, NULL, (struct sockaddr *)&ss, 5000))
		return -errno;
	if ((rc = expect(RDMA_CM_EVENT_ADDR_RESOLVED, 6000)))
		return rc;
	if (rdma_resolve_route(cid, 5000))
		return -errno;
	if ((rc = expect(RDMA_CM_EVENT_ROUTE_RESOLVED, 6000)))
		return rc;
	return verbs_objs(cid->verbs);
}

int p_reg(size_t len, int access, struct pmr *mr)
{
	struct ibv_mr *m;
	int acc = 0;

	memset(mr, 0, sizeof(*mr));
	mr->len = len;
	mr->addr = aligned_alloc(4096, (len + 4095) / 4096 * 4096 + 4096);
	if (!mr->addr)
		return -ENOMEM;
	memset(mr->addr, 0, len);
	if (access & P_ACC_LW)
		acc |= IBV_ACCESS_LOCAL_WRITE;
	if (access & P_ACC_RW)
		acc |= IBV_ACCESS_REMOTE_WRITE;
	if (access & P_ACC_RR)
		acc |= IBV_ACCESS_REMOTE_READ;
	m = ibv_reg_mr(pd, mr->addr, len ? len : 1, acc);
	if (!m)
		return -errno;
	mr->h = m;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	return 0;
}

void p_dereg(struct pmr *mr)
{
	if (mr->h)
		ibv_dereg_mr(mr->h);
	mr->h = NULL;
}

static int make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = opts.sq;
	a.cap.max_recv_wr = opts.rq;
	a.cap.max_send_sge = opts.max_sge;
	a.cap.max_recv_sge = opts.max_sge;
	return rdma_create_qp(id, pd, &a) ? -errno : 0;
}

int p_client_qp(void)
{
	return make_qp(cid);
}

int p_wait_request(struct pev *ev, int timeout_ms)
{
	struct rdma_cm_id *id = NULL;
	int rc = get_event(ev, timeout_ms, &id);

	if (rc || ev->type != P_EV_REQUEST)
		return rc;
	cid = id;
	return make_qp(cid);
}

int p_accept(const void *data, int len, struct pev *ev, int timeout_ms)
{
	struct rdma_conn_param p;

	memset(&p, 0, sizeof(p));
	p.private_data = data;
	p.private_data_len = (uint8_t)len;
	p.responder_resources = ird_of();
	p.initiator_depth = ord_of();
	if (rdma_accept(cid, &p))
		return -errno;
	return get_event(ev, timeout_ms, NULL);
}

int p_reject(const void *data, int len)
{
	return rdma_reject(cid, data, (uint8_t)len) ? -errno : 0;
}

int p_connect(const void *data, int len, struct pev *ev, int timeout_ms)
{
	struct rdma_conn_param p;

	memset(&p, 0, sizeof(p));
	p.private_data = data;
	p.private_data_len = (uint8_t)len;
	p.responder_resources = ird_of();
	p.initiator_depth = ord_of();
	p.retry_count = 7;
	if (rdma_connect(cid, &p))
		return -errno;
	return get_event(ev, timeout_ms, NULL);
}

int p_post_recv(uint64_t id, struct psge *sg, int n)
{
	struct ibv_sge s[8];
	struct ibv_recv_wr wr, *bad;
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
	return -ibv_post_recv(cid->qp, &wr, &bad);
}

int p_post_send(uint64_t id, enum pop op, struct psge *sg, int n, uint64_t raddr, uint32_t rkey,
		uint32_t inv, unsigned flags)
{
	struct ibv_sge s[8];
	struct ibv_send_wr wr, *bad;
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
	case P_WRITE: wr.opcode = IBV_WR_RDMA_WRITE; break;
	case P_READ: wr.opcode = IBV_WR_RDMA_READ; break;
	case P_SEND: wr.opcode = IBV_WR_SEND; break;
	case P_SEND_INV: wr.opcode = IBV_WR_SEND_WITH_INV; break;
	case P_ATOMIC_FADD: wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD; break;
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == P_ATOMIC_FADD) {
		/* siw has no atomics: its provider refuses this post */
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	}
	if (op == P_SEND_INV) {
		wr.invalidate_rkey = inv;
		/* rdma-core 44's siw provider takes the STag to invalidate from
		 * wr.rdma.rkey (push_send_wqe), not from invalidate_rkey */
		wr.wr.rdma.rkey = inv;
	}
	if (flags & P_F_SIGNALED)
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (flags & P_F_SOLICITED)
		wr.send_flags |= IBV_SEND_SOLICITED;
	return -ibv_post_send(cid->qp, &wr, &bad);
}

int p_poll(struct pwc *wc, int timeout_ms)
{
	struct ibv_wc w;
	long end = now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, &w);
		if (n < 0)
			return -EIO;
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
	snprintf(wc->status_str, sizeof(wc->status_str), "%s", ibv_wc_status_str(w.status));
	switch (w.opcode) {
	case IBV_WC_SEND: wc->opcode = P_WC_SEND; break;
	case IBV_WC_RDMA_WRITE: wc->opcode = P_WC_WRITE; break;
	case IBV_WC_RDMA_READ: wc->opcode = P_WC_READ; break;
	case IBV_WC_RECV: wc->opcode = P_WC_RECV; break;
	default: wc->opcode = P_WC_OTHER; break;
	}
	if (w.status != IBV_WC_SUCCESS && !(w.opcode & IBV_WC_RECV) && w.opcode > IBV_WC_RECV)
		wc->opcode = P_WC_OTHER;
	wc->byte_len = w.byte_len;
	wc->with_inv = !!(w.wc_flags & IBV_WC_WITH_INV);
	wc->inv_rkey = w.invalidated_rkey;
	wc->solicited = -1;
	return 1;
}

int p_arm(int solicited_only)
{
	return -ibv_req_notify_cq(cq, solicited_only);
}

int p_wait_cq_event(int timeout_ms)
{
	struct pollfd pfd = { ch->fd, POLLIN, 0 };
	struct ibv_cq *c;
	void *cc;
	int n = poll(&pfd, 1, timeout_ms);

	if (n <= 0)
		return n < 0 ? -errno : 0;
	if (ibv_get_cq_event(ch, &c, &cc))
		return -errno;
	ibv_ack_cq_events(c, 1);
	return 1;
}

int p_disconnect(void)
{
	return rdma_disconnect(cid) ? -errno : 0;
}

int p_next_event(struct pev *ev, int timeout_ms)
{
	return get_event(ev, timeout_ms, NULL);
}

void p_fini(void)
{
	/* the process exits right after: the kernel cleans up */
}
