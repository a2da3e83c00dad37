/* SPDX-License-Identifier: MIT */
/*
 * rdma_api - the parts of the libibverbs/librdmacm API that rping and
 * perftest do not reach, run under uiw-run (tests/sh/compat.sh): both ends
 * of a connection in this one process, over loopback.
 *
 *   - a listener bound to 127.0.0.1 has no device (id->verbs NULL), as
 *     the kernel's rdma_cm gives none to loopback and wildcard binds; the
 *     device comes from rdma_get_devices();
 *   - event channels: a non-blocking channel answers EAGAIN when empty,
 *     and its fd polls readable when an event is queued; rdma_migrate_id
 *     moves an accepted id (and its later events) to another channel;
 *   - rdma_get_peer_addr/rdma_get_local_addr of an accepted id and of the
 *     initiator, rdma_get_src_port/rdma_get_dst_port;
 *   - private data both ways (CONNECT_REQUEST and ESTABLISHED), IRD/ORD in
 *     the request; rdma_reject with private data reaches the initiator as
 *     REJECTED with it;
 *   - QPs with send_ops_flags: ibv_wr_start/ibv_wr_rdma_write/ibv_wr_send
 *     with inline data/ibv_wr_complete; ibv_wr_* of an atomic fails the
 *     whole batch; work completions carry the QP's number;
 *   - what iWARP refuses: UD QPs, atomics (post fails, bad_wr set),
 *     ibv_modify_qp to SQD; ibv_get_async_event on a non-blocking fd:
 *     EAGAIN; ibv_close_device(rdma_cm_id.verbs): refused;
 *   - QPs with max_recv_wr 0 and max_send_wr 0: posting there EINVAL; a
 *     completion polled after its QP was destroyed still has its qp_num;
 *   - rdma_destroy_qp of a connected QP: at once, the id reports
 *     DISCONNECTED (and the peer's), the receive flushed;
 *   - initiator_depth and responder_resources 0 mean 0: a Read is refused
 *     on both sides (EINVAL), ibv_query_qp says 0;
 *   - an SRQ made by rdma_create_srq: ibv_query_srq, ibv_modify_srq
 *     refused (EOPNOTSUPP), a Send received through it; a Send finding it
 *     empty: TERMINATE, IBV_EVENT_QP_FATAL on both QPs from
 *     ibv_get_async_event; calls no installed program imports answered by
 *     the library (ibv_resize_cq, ibv_rereg_mr, ibv_reg_mr_iova, ...);
 *   - disconnect: DISCONNECTED on both sides, everything destroyed.
 *
 * The program is not linked with rdma-core: it finds every exported
 * function with dlsym() (under uiw-run, libuiw-rdma's), so it builds
 * without rdma-core's libraries; inline calls go through the structures,
 * as in any program.  Prints "ok: ..." per check, "FAIL: ..." and exits 1
 * at the first failure; every wait is bounded (5 s).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rdma_dl.h"

#undef ibv_reg_mr

F(ibv_alloc_pd);
F(ibv_dealloc_pd);
F(ibv_reg_mr);
F(ibv_dereg_mr);
F(ibv_create_cq);
F(ibv_destroy_cq);
F(ibv_create_qp);
F(ibv_modify_qp);
F(ibv_query_qp);
F(ibv_destroy_qp);
F(ibv_qp_to_qp_ex);
F(ibv_get_async_event);
F(ibv_close_device);
F(rdma_create_event_channel);
F(rdma_destroy_event_channel);
F(rdma_create_id);
F(rdma_destroy_id);
F(rdma_bind_addr);
F(rdma_listen);
F(rdma_resolve_addr);
F(rdma_resolve_route);
F(rdma_create_qp_ex);
F(rdma_destroy_qp);
F(rdma_connect);
F(rdma_accept);
F(rdma_reject);
F(rdma_disconnect);
F(rdma_get_cm_event);
F(rdma_ack_cm_event);
F(rdma_migrate_id);
F(rdma_event_str);
F(rdma_get_src_port);
F(rdma_get_dst_port);
F(ibv_ack_async_event);
F(ibv_query_srq);
F(ibv_modify_srq);
F(ibv_resize_cq);
F(ibv_rereg_mr);
F(ibv_reg_mr_iova);
F(ibv_query_qp_data_in_order);
F(ibv_get_pkey_index);
F(ibv_is_fork_initialized);
F(ibv_import_device);
F(rdma_create_srq);
F(rdma_destroy_srq);
F(rdma_notify);
F(rdma_join_multicast);
F(rdma_get_devices);

/* the next event of @ch within 5 s (the fd may be non-blocking) */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	for (int i = 0; i < 500; i++) {
		if (!p_rdma_get_cm_event(ch, &ev))
			return ev;
		CHECK(errno == EAGAIN, "rdma_get_cm_event: %s", strerror(errno));
		poll(&p, 1, 10);
	}
	die("no CM event within 5 s");
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev = next_event(ch);

	CHECK(ev->event == t, "event %s (status %d), want %s", p_rdma_event_str(ev->event), ev->status,
	      p_rdma_event_str(t));
	return ev;
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[4096];
};

/* @s's PD, CQ and registered buffer on @id's device */
static void side_objects(struct rdma_cm_id *id, struct side *s)
{
	s->pd = p_ibv_alloc_pd(id->verbs);
	CHECK(s->pd, "ibv_alloc_pd: %s", strerror(errno));
	s->cq = p_ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
	CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	s->mr = p_ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
}

static void make_qp(struct rdma_cm_id *id, struct side *s)
{
	struct ibv_qp_init_attr_ex a;

	side_objects(id, s);
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = s->cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 128;
	a.qp_type = IBV_QPT_RC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = s->pd;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
	CHECK(!p_rdma_create_qp_ex(id, &a), "rdma_create_qp_ex: %s", strerror(errno));
	CHECK(id->qp && id->qp->qp_num, "no QP (number) on the id");
}

/* make_qp() with the receives from an SRQ of the id's own (rdma_create_srq) */
static void make_qp_srq(struct rdma_cm_id *id, struct side *s)
{
	struct ibv_srq_init_attr sa;
	struct ibv_qp_init_attr_ex a;

	side_objects(id, s);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	CHECK(!p_rdma_create_srq(id, s->pd, &sa) && id->srq, "rdma_create_srq: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = s->cq;
	a.srq = id->srq;
	a.cap.max_send_wr = 16;
	a.cap.max_send_sge = 1;
	a.qp_type = IBV_QPT_RC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = s->pd;
	CHECK(!p_rdma_create_qp_ex(id, &a), "rdma_create_qp_ex with an SRQ: %s", strerror(errno));
}

/* a Send of @len octets from @s's buffer, signaled: ibv_post_send()'s result */
static int post_send_buf(struct rdma_cm_id *id, struct side *s, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey};
	struct ibv_send_wr w, *bad = NULL;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = IBV_WR_SEND;
	w.send_flags = IBV_SEND_SIGNALED;
	w.sg_list = &sge;
	w.num_sge = 1;
	return ibv_post_send(id->qp, &w, &bad);
}

/* an id of @ch for @c (resolved, its QP made by @mk) that connects to @sin
 * with @cp; ADDR_RESOLVED and ROUTE_RESOLVED taken */
static struct rdma_cm_id *connect_id(struct rdma_event_channel *ch, const struct sockaddr_in *sin,
				     struct side *c, void (*mk)(struct rdma_cm_id *, struct side *),
				     struct rdma_conn_param *cp)
{
	struct rdma_cm_id *id;

	CHECK(!p_rdma_create_id(ch, &id, c, RDMA_PS_TCP), "rdma_create_id: %s", strerror(errno));
	CHECK(!p_rdma_resolve_addr(id, NULL, (struct sockaddr *)sin, 2000), "rdma_resolve_addr: %s",
	      strerror(errno));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!p_rdma_resolve_route(id, 2000), "rdma_resolve_route: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	mk(id, c);
	CHECK(!p_rdma_connect(id, cp), "rdma_connect: %s", strerror(errno));
	return id;
}

/* a connection from a new id on @cch to the listener on @lch (@sin): each
 * side gets its QP from @mk (make_qp() when NULL) before its connect or
 * accept (@ccp, @scp: their parameters); the accepted id in *@sidp */
static struct rdma_cm_id *pair_up(struct rdma_event_channel *lch, struct rdma_event_channel *cch,
				  const struct sockaddr_in *sin, struct side *c, struct side *s,
				  struct rdma_conn_param *ccp, struct rdma_conn_param *scp,
				  void (*mk)(struct rdma_cm_id *, struct side *), struct rdma_cm_id **sidp)
{
	struct rdma_cm_id *cid;
	struct rdma_cm_event *ev;

	if (!mk)
		mk = make_qp;
	cid = connect_id(cch, sin, c, mk, ccp);
	ev = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	*sidp = ev->id;
	if (ccp)
		CHECK(ev->param.conn.initiator_depth == ccp->responder_resources &&
			      ev->param.conn.responder_resources == ccp->initiator_depth,
		      "CONNECT_REQUEST: initiator_depth %u responder_resources %u, want %u %u",
		      ev->param.conn.initiator_depth, ev->param.conn.responder_resources,
		      ccp->responder_resources, ccp->initiator_depth);
	p_rdma_ack_cm_event(ev);
	mk(*sidp, s);
	CHECK(!p_rdma_accept(*sidp, scp), "rdma_accept: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_ESTABLISHED));
	return cid;
}

/* rdma_disconnect() and every object of the pair destroyed */
static void pair_down(struct rdma_event_channel *lch, struct rdma_event_channel *cch, struct rdma_cm_id *cid,
		      struct rdma_cm_id *sid, struct side *c, struct side *s)
{
	CHECK(!p_rdma_disconnect(cid), "rdma_disconnect: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_destroy_qp(cid);
	p_rdma_destroy_qp(sid);
	CHECK(!p_rdma_destroy_id(cid) && !p_rdma_destroy_id(sid), "rdma_destroy_id");
	CHECK(!p_ibv_dereg_mr(c->mr) && !p_ibv_dereg_mr(s->mr), "ibv_dereg_mr");
	CHECK(!p_ibv_destroy_cq(c->cq) && !p_ibv_destroy_cq(s->cq), "ibv_destroy_cq");
	CHECK(!p_ibv_dealloc_pd(c->pd) && !p_ibv_dealloc_pd(s->pd), "ibv_dealloc_pd");
}

/* an RDMA Read of 8 octets from @peer's buffer: ibv_post_send()'s result */
static int post_read(struct rdma_cm_id *id, struct side *s, struct side *peer)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = 8, .lkey = s->mr->lkey};
	struct ibv_send_wr w, *bad = NULL;

	memset(&w, 0, sizeof(w));
	w.wr_id = 99;
	w.opcode = IBV_WR_RDMA_READ;
	w.send_flags = IBV_SEND_SIGNALED;
	w.sg_list = &sge;
	w.num_sge = 1;
	w.wr.rdma.remote_addr = (uintptr_t)peer->buf;
	w.wr.rdma.rkey = peer->mr->rkey;
	return ibv_post_send(id->qp, &w, &bad);
}

static uint64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * A refused connect is tried again for about 500 ms before the program
 * hears of it (the library's retry, for perftest -R).  An id destroyed
 * while a retry is due must take the retry with it: no event for it later,
 * no access to it (AddressSanitizer in make check SAN=address), whichever
 * moment of the retries the destruction falls on.
 */
static void retry_then_destroy(void)
{
	static const unsigned delays_ms[] = {0, 3, 10, 25, 45, 110};
	struct rdma_event_channel *ch = p_rdma_create_event_channel();
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);
	struct rdma_cm_event *ev;
	struct side ctl, v;
	struct rdma_cm_id *id;
	uint64_t t0, took;
	int fd;

	CHECK(ch, "rdma_create_event_channel: %s", strerror(errno));
	/* a port that refuses: bound, never listening, held for the test */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
		      !getsockname(fd, (struct sockaddr *)&sin, &sl),
	      "a bound socket: %s", strerror(errno));

	/* the control: the refusal reaches the program only after the retries */
	memset(&ctl, 0, sizeof(ctl));
	t0 = ms_now();
	id = connect_id(ch, &sin, &ctl, make_qp, NULL);
	ev = expect(ch, RDMA_CM_EVENT_REJECTED);
	took = ms_now() - t0;
	CHECK(ev->id == id, "REJECTED for another id");
	CHECK(took >= 400, "the refusal came after %llu ms: no retries to race", (unsigned long long)took);
	p_rdma_ack_cm_event(ev);
	p_rdma_destroy_qp(id);
	CHECK(!p_rdma_destroy_id(id), "rdma_destroy_id");
	CHECK(!p_ibv_dereg_mr(ctl.mr) && !p_ibv_destroy_cq(ctl.cq) && !p_ibv_dealloc_pd(ctl.pd), "tear down");

	for (unsigned i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
		memset(&v, 0, sizeof(v));
		id = connect_id(ch, &sin, &v, make_qp, NULL);
		usleep(delays_ms[i] * 1000);
		p_rdma_destroy_qp(id);
		CHECK(!p_rdma_destroy_id(id), "rdma_destroy_id %u ms into the retries: %s", delays_ms[i],
		      strerror(errno));
		CHECK(!p_ibv_dereg_mr(v.mr) && !p_ibv_destroy_cq(v.cq) && !p_ibv_dealloc_pd(v.pd),
		      "tear down");
	}
	/* past every retry's time: nothing for the destroyed ids */
	usleep(700 * 1000);
	nonblock(ch->fd);
	CHECK(p_rdma_get_cm_event(ch, &ev) && errno == EAGAIN, "an event after the ids were destroyed");
	close(fd);
	p_rdma_destroy_event_channel(ch);
	printf("ok: a refused connect reported after %llu ms of retries; ids destroyed 0..110 ms into "
	       "them: no event, no access afterwards\n",
	       (unsigned long long)took);
}

int main(void)
{
	struct rdma_event_channel *lch, *cch, *mch;
	struct rdma_cm_id *lid, *cid, *sid, *rid;
	struct ibv_context *dev;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct rdma_conn_param cp;
	struct side srv, cli;
	char pd_req[100], pd_rep[40];
	struct ibv_wc wc;
	uint16_t port;

	LOAD(ibv_alloc_pd); LOAD(ibv_dealloc_pd); LOAD(ibv_reg_mr); LOAD(ibv_dereg_mr);
	LOAD(ibv_create_cq); LOAD(ibv_destroy_cq); LOAD(ibv_create_qp); LOAD(ibv_modify_qp); LOAD(ibv_query_qp); LOAD(ibv_destroy_qp);
	LOAD(ibv_qp_to_qp_ex); LOAD(ibv_get_async_event); LOAD(ibv_close_device);
	LOAD(rdma_create_event_channel); LOAD(rdma_destroy_event_channel); LOAD(rdma_create_id);
	LOAD(rdma_destroy_id); LOAD(rdma_bind_addr); LOAD(rdma_listen); LOAD(rdma_resolve_addr);
	LOAD(rdma_resolve_route); LOAD(rdma_create_qp_ex); LOAD(rdma_destroy_qp); LOAD(rdma_connect);
	LOAD(rdma_accept); LOAD(rdma_reject); LOAD(rdma_disconnect); LOAD(rdma_get_cm_event);
	LOAD(rdma_ack_cm_event); LOAD(rdma_migrate_id); LOAD(rdma_event_str);
	LOAD(rdma_get_src_port); LOAD(rdma_get_dst_port);
	LOAD(ibv_ack_async_event); LOAD(ibv_query_srq); LOAD(ibv_modify_srq); LOAD(ibv_resize_cq);
	LOAD(ibv_rereg_mr); LOAD(ibv_reg_mr_iova); LOAD(ibv_query_qp_data_in_order);
	LOAD(ibv_get_pkey_index); LOAD(ibv_is_fork_initialized); LOAD(ibv_import_device);
	LOAD(rdma_create_srq); LOAD(rdma_destroy_srq); LOAD(rdma_notify); LOAD(rdma_join_multicast);
	LOAD(rdma_get_devices);
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));

	/* ---- channels, listener on a kernel-chosen port */
	lch = p_rdma_create_event_channel();
	cch = p_rdma_create_event_channel();
	mch = p_rdma_create_event_channel();
	CHECK(lch && cch && mch, "rdma_create_event_channel: %s", strerror(errno));
	nonblock(cch->fd);
	CHECK(p_rdma_get_cm_event(cch, &ev) && errno == EAGAIN, "empty non-blocking channel: not EAGAIN");
	printf("ok: an empty non-blocking event channel answers EAGAIN\n");
	CHECK(!p_rdma_create_id(lch, &lid, NULL, RDMA_PS_TCP), "rdma_create_id: %s", strerror(errno));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	CHECK(!p_rdma_bind_addr(lid, (struct sockaddr *)&sin), "rdma_bind_addr: %s", strerror(errno));
	CHECK(!p_rdma_listen(lid, 4), "rdma_listen: %s", strerror(errno));
	port = ntohs(lid->route.addr.src_sin.sin_port);
	CHECK(port, "no port after rdma_listen on port 0");
	printf("ok: listening on 127.0.0.1 port %u (kernel-chosen)\n", port);
	/* as the kernel's rdma_cm (cma_any_addr()): an id bound to a loopback
	 * address, like the wildcard, has no device; the device comes from
	 * rdma_get_devices() */
	CHECK(!lid->verbs, "a listener bound to 127.0.0.1 has a device");
	{
		struct ibv_context **devs = p_rdma_get_devices(NULL);

		CHECK(devs && devs[0], "rdma_get_devices: no device");
		dev = devs[0];
	}
	printf("ok: the loopback listener has no device (id->verbs NULL); rdma_get_devices gives uiw0\n");

	/* ---- what iWARP refuses, and the context of the CM */
	{
		struct ibv_context *v = dev;
		struct ibv_pd *pd = p_ibv_alloc_pd(v);
		struct ibv_cq *cq = p_ibv_create_cq(v, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
					      .cap = {.max_send_wr = 1, .max_recv_wr = 1}};
		struct ibv_async_event ae;

		CHECK(pd && cq, "PD/CQ on rdma_cm_id.verbs: %s", strerror(errno));
		CHECK(!p_ibv_create_qp(pd, &qa) && errno == EOPNOTSUPP, "a UD QP: not EOPNOTSUPP");
		nonblock(v->async_fd);
		CHECK(p_ibv_get_async_event(v, &ae) && errno == EAGAIN, "no async event: not EAGAIN");
		CHECK(p_ibv_close_device(v) != 0, "ibv_close_device(rdma_cm_id.verbs) succeeded");
		CHECK(!p_ibv_destroy_cq(cq) && !p_ibv_dealloc_pd(pd), "destroy CQ/PD");
		printf("ok: UD QP EOPNOTSUPP, async fd non-blocking EAGAIN, the CM's device not closable\n");
	}

	/* ---- a QP without receive queue and one without send queue */
	{
		struct ibv_context *v = dev;
		struct ibv_pd *pd = p_ibv_alloc_pd(v);
		struct ibv_cq *cq = p_ibv_create_cq(v, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					      .cap = {.max_send_wr = 4, .max_recv_wr = 0}};
		struct ibv_qp_init_attr qia;
		struct ibv_qp_attr at;
		struct ibv_recv_wr rw, *bad_r = NULL;
		struct ibv_send_wr sw, *bad_s = NULL;
		struct ibv_qp *nr, *ns;

		CHECK(pd && cq, "PD/CQ: %s", strerror(errno));
		nr = p_ibv_create_qp(pd, &qa);
		CHECK(nr && qa.cap.max_recv_wr == 0, "a QP with max_recv_wr 0: %s", strerror(errno));
		memset(&rw, 0, sizeof(rw));
		CHECK(ibv_post_recv(nr, &rw, &bad_r) == EINVAL && bad_r == &rw,
		      "ibv_post_recv on a QP without receive queue: not EINVAL");
		CHECK(!p_ibv_query_qp(nr, &at, IBV_QP_CAP, &qia) && at.cap.max_recv_wr == 0 &&
			      at.cap.max_send_wr == 4,
		      "ibv_query_qp: max_recv_wr %u max_send_wr %u, want 0 4", at.cap.max_recv_wr,
		      at.cap.max_send_wr);
		qa.cap.max_send_wr = 0;
		qa.cap.max_recv_wr = 4;
		ns = p_ibv_create_qp(pd, &qa);
		CHECK(ns && qa.cap.max_send_wr == 0, "a QP with max_send_wr 0: %s", strerror(errno));
		memset(&sw, 0, sizeof(sw));
		sw.opcode = IBV_WR_SEND;
		CHECK(ibv_post_send(ns, &sw, &bad_s) == EINVAL && bad_s == &sw,
		      "ibv_post_send on a QP without send queue: not EINVAL");
		/* a receive flushed, then its QP destroyed: the completion
		 * still names the QP by number */
		{
			struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
			uint32_t qpn = ns->qp_num;
			struct ibv_wc wc1;

			rw.wr_id = 5;
			CHECK(!ibv_post_recv(ns, &rw, &bad_r), "ibv_post_recv");
			CHECK(!p_ibv_modify_qp(ns, &err, IBV_QP_STATE), "ibv_modify_qp to ERR");
			CHECK(!p_ibv_destroy_qp(ns), "ibv_destroy_qp");
			CHECK(poll_one(cq, &wc1) == 1 && wc1.wr_id == 5 && wc1.status == IBV_WC_WR_FLUSH_ERR &&
				      wc1.qp_num == qpn && qpn,
			      "the flushed receive: wr_id %llu status %d qp_num %u, want 5 %d %u",
			      (unsigned long long)wc1.wr_id, wc1.status, wc1.qp_num, IBV_WC_WR_FLUSH_ERR, qpn);
		}
		CHECK(!p_ibv_destroy_qp(nr) && !p_ibv_destroy_cq(cq) && !p_ibv_dealloc_pd(pd),
		      "destroy QP/CQ/PD");
		printf("ok: QPs with max_recv_wr 0 and max_send_wr 0: posting there EINVAL; a completion "
		       "polled after its QP was destroyed has its number\n");
	}

	/* ---- a connection with private data both ways */
	CHECK(!p_rdma_create_id(cch, &cid, &cli, RDMA_PS_TCP), "rdma_create_id: %s", strerror(errno));
	sin.sin_port = htons(port);
	CHECK(!p_rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sin, 2000), "rdma_resolve_addr: %s",
	      strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!p_rdma_resolve_route(cid, 2000), "rdma_resolve_route: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	CHECK(cid->verbs && cid->route.addr.src_addr.sa_family == AF_INET, "route: no verbs/source");
	make_qp(cid, &cli);
	for (unsigned i = 0; i < sizeof(pd_req); i++)
		pd_req[i] = (char)(i * 7 + 1);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd_req;
	cp.private_data_len = sizeof(pd_req);
	cp.responder_resources = 4;
	cp.initiator_depth = 3;
	CHECK(!p_rdma_connect(cid, &cp), "rdma_connect: %s", strerror(errno));
	ev = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	sid = ev->id;
	CHECK(ev->listen_id == lid && sid != lid, "CONNECT_REQUEST: listen_id/id wrong");
	CHECK(ev->param.conn.private_data_len >= sizeof(pd_req) &&
		      !memcmp(ev->param.conn.private_data, pd_req, sizeof(pd_req)),
	      "CONNECT_REQUEST: private data (%u octets) differs", ev->param.conn.private_data_len);
	CHECK(ev->param.conn.initiator_depth == 4 && ev->param.conn.responder_resources == 3,
	      "CONNECT_REQUEST: initiator_depth %u responder_resources %u, want 4 3 (the peer's IRD, ORD)",
	      ev->param.conn.initiator_depth, ev->param.conn.responder_resources);
	p_rdma_ack_cm_event(ev);
	printf("ok: CONNECT_REQUEST with the 100 octets of private data and the peer's IRD/ORD\n");
	CHECK(!p_rdma_migrate_id(sid, mch), "rdma_migrate_id: %s", strerror(errno));
	CHECK(sid->channel == mch, "rdma_migrate_id: the id's channel is not the new one");
	make_qp(sid, &srv);
	memset(pd_rep, 'R', sizeof(pd_rep));
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd_rep;
	cp.private_data_len = sizeof(pd_rep);
	cp.responder_resources = 3;
	cp.initiator_depth = 4;
	CHECK(!p_rdma_accept(sid, &cp), "rdma_accept: %s", strerror(errno));
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK(ev->param.conn.private_data_len >= sizeof(pd_rep) &&
		      !memcmp(ev->param.conn.private_data, pd_rep, sizeof(pd_rep)),
	      "ESTABLISHED: the accept's private data did not arrive");
	p_rdma_ack_cm_event(ev);
	p_rdma_ack_cm_event(expect(mch, RDMA_CM_EVENT_ESTABLISHED));
	CHECK(cid->qp->state == IBV_QPS_RTS, "client QP state %d, want RTS", cid->qp->state);
	printf("ok: ESTABLISHED on both sides (the accepted id's on the channel it migrated to), "
	       "the accept's private data at the initiator\n");

	/* ---- the addresses of the connection, on both ids */
	{
		struct sockaddr_in *sp = (struct sockaddr_in *)rdma_get_peer_addr(sid);
		struct sockaddr_in *sl = (struct sockaddr_in *)rdma_get_local_addr(sid);
		struct sockaddr_in *cl = (struct sockaddr_in *)rdma_get_local_addr(cid);
		struct sockaddr_in *cp_ = (struct sockaddr_in *)rdma_get_peer_addr(cid);

		CHECK(sp->sin_family == AF_INET && sp->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
			      sp->sin_port && sp->sin_port == cl->sin_port,
		      "accepted id: rdma_get_peer_addr family %d port %u, the initiator's port %u",
		      sp->sin_family, ntohs(sp->sin_port), ntohs(cl->sin_port));
		CHECK(sl->sin_family == AF_INET && sl->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
			      ntohs(sl->sin_port) == port,
		      "accepted id: rdma_get_local_addr port %u, want %u", ntohs(sl->sin_port), port);
		CHECK(ntohs(cp_->sin_port) == port && p_rdma_get_dst_port(cid) == htons(port) &&
			      p_rdma_get_src_port(sid) == htons(port) &&
			      p_rdma_get_dst_port(sid) == cl->sin_port && p_rdma_get_src_port(cid) == cl->sin_port,
		      "rdma_get_src_port/rdma_get_dst_port disagree with the addresses");
		printf("ok: rdma_get_peer_addr/rdma_get_local_addr of the accepted id (127.0.0.1 port %u), "
		       "the initiator's source port, rdma_get_src_port/rdma_get_dst_port\n",
		       ntohs(cl->sin_port));
	}

	/* ---- ibv_wr_*: a Write then a Send with inline data, one batch */
	{
		struct ibv_qp_ex *qx = p_ibv_qp_to_qp_ex(cid->qp);
		struct ibv_recv_wr rw, *bad_r;
		struct ibv_sge sge = {.addr = (uintptr_t)srv.buf + 1024, .length = 64, .lkey = srv.mr->lkey};
		static const char inl[] = "inline data of a Send";
		int got_w = 0, got_s = 0;

		memset(&rw, 0, sizeof(rw));
		rw.wr_id = 7;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CHECK(!ibv_post_recv(sid->qp, &rw, &bad_r), "ibv_post_recv");
		CHECK(qx, "ibv_qp_to_qp_ex: %s", strerror(errno));
		memset(cli.buf, 'W', 512);
		ibv_wr_start(qx);
		qx->wr_id = 1;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(qx, srv.mr->rkey, (uintptr_t)srv.buf);
		ibv_wr_set_sge(qx, cli.mr->lkey, (uintptr_t)cli.buf, 512);
		qx->wr_id = 2;
		ibv_wr_send(qx);
		ibv_wr_set_inline_data(qx, (void *)inl, sizeof(inl));
		CHECK(!ibv_wr_complete(qx), "ibv_wr_complete failed");
		for (int i = 0; i < 2; i++) {
			CHECK(poll_one(cli.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
			      "send completion %d: status %d", i, wc.status);
			CHECK(wc.qp_num == cid->qp->qp_num, "wc.qp_num %u, QP %u", wc.qp_num, cid->qp->qp_num);
			got_w += wc.wr_id == 1 && wc.opcode == IBV_WC_RDMA_WRITE;
			got_s += wc.wr_id == 2 && wc.opcode == IBV_WC_SEND;
		}
		CHECK(got_w == 1 && got_s == 1, "completions of the Write and the Send: %d %d", got_w, got_s);
		CHECK(poll_one(srv.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      wc.wr_id == 7 && wc.byte_len == sizeof(inl) && wc.qp_num == sid->qp->qp_num,
		      "receive: status %d opcode %d len %u", wc.status, wc.opcode, wc.byte_len);
		CHECK(!memcmp(srv.buf + 1024, inl, sizeof(inl)), "the inline Send's data differs");
		for (int i = 0; i < 512; i++)
			CHECK(srv.buf[i] == 'W', "the Write's data differs at %d", i);
		printf("ok: ibv_wr_rdma_write + ibv_wr_send with inline data in one batch: data and "
		       "completions (qp_num %u)\n", cid->qp->qp_num);

		ibv_wr_start(qx);
		qx->wr_id = 3;
		ibv_wr_rdma_write(qx, srv.mr->rkey, (uintptr_t)srv.buf);
		ibv_wr_set_sge(qx, cli.mr->lkey, (uintptr_t)cli.buf, 8);
		ibv_wr_atomic_fetch_add(qx, srv.mr->rkey, (uintptr_t)srv.buf, 1);
		CHECK(ibv_wr_complete(qx) == EOPNOTSUPP, "a batch with an atomic: not EOPNOTSUPP");
		CHECK(ibv_poll_cq(cli.cq, 1, &wc) == 0, "a refused batch posted something");
		printf("ok: a batch with ibv_wr_atomic_fetch_add: EOPNOTSUPP, nothing posted\n");
	}
	{
		struct ibv_sge sge = {.addr = (uintptr_t)cli.buf, .length = 8, .lkey = cli.mr->lkey};
		struct ibv_send_wr w1, w2, *bad = NULL;
		struct ibv_qp_attr qa = {.qp_state = IBV_QPS_SQD};

		memset(&w1, 0, sizeof(w1));
		memset(&w2, 0, sizeof(w2));
		w1.wr_id = 10;
		w1.opcode = IBV_WR_RDMA_WRITE;
		w1.send_flags = IBV_SEND_SIGNALED;
		w1.sg_list = &sge;
		w1.num_sge = 1;
		w1.wr.rdma.remote_addr = (uintptr_t)srv.buf;
		w1.wr.rdma.rkey = srv.mr->rkey;
		w1.next = &w2;
		w2 = w1;
		w2.next = NULL;
		w2.wr_id = 11;
		w2.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		CHECK(ibv_post_send(cid->qp, &w1, &bad) == EOPNOTSUPP && bad == &w2,
		      "a chain with an atomic: not EOPNOTSUPP at the atomic");
		CHECK(poll_one(cli.cq, &wc) == 1 && wc.wr_id == 10 && wc.status == IBV_WC_SUCCESS,
		      "the Write before the atomic did not complete");
		CHECK(p_ibv_modify_qp(cid->qp, &qa, IBV_QP_STATE) == EINVAL, "modify_qp to SQD: not EINVAL");
		printf("ok: ibv_post_send of Write + atomic: EOPNOTSUPP with bad_wr at the atomic, the "
		       "Write done; modify_qp to SQD: EINVAL\n");
	}

	/* ---- a second initiator, rejected with private data */
	{
		struct rdma_cm_event *e;
		static const char why[] = "not today";

		CHECK(!p_rdma_create_id(cch, &rid, NULL, RDMA_PS_TCP), "rdma_create_id");
		CHECK(!p_rdma_resolve_addr(rid, NULL, (struct sockaddr *)&sin, 2000), "rdma_resolve_addr");
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
		CHECK(!p_rdma_resolve_route(rid, 2000), "rdma_resolve_route");
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
		{
			struct side *r = calloc(1, sizeof(*r));

			make_qp(rid, r);
			CHECK(!p_rdma_connect(rid, NULL), "rdma_connect: %s", strerror(errno));
			e = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
			CHECK(!p_rdma_reject(e->id, why, sizeof(why)), "rdma_reject: %s", strerror(errno));
			struct rdma_cm_id *rejected = e->id;
			p_rdma_ack_cm_event(e);
			e = expect(cch, RDMA_CM_EVENT_REJECTED);
			CHECK(e->id == rid && e->param.conn.private_data_len >= sizeof(why) &&
				      !memcmp(e->param.conn.private_data, why, sizeof(why)),
			      "REJECTED without the reject's private data");
			p_rdma_ack_cm_event(e);
			CHECK(!p_rdma_destroy_id(rejected), "destroy the rejected id");
			p_rdma_destroy_qp(rid);
			CHECK(!p_rdma_destroy_id(rid), "destroy the refused id");
			CHECK(!p_ibv_dereg_mr(r->mr) && !p_ibv_destroy_cq(r->cq) && !p_ibv_dealloc_pd(r->pd),
			      "tear down the refused side");
			free(r);
		}
		printf("ok: rdma_reject with private data: REJECTED with it at the initiator\n");
	}

	/* ---- IRD and ORD of 0 (rdma_conn_param's zeros): no Read either way */
	{
		struct side c2, s2;
		struct rdma_cm_id *c2id, *s2id;
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;

		memset(&c2, 0, sizeof(c2));
		memset(&s2, 0, sizeof(s2));
		memset(&cp, 0, sizeof(cp));
		c2id = pair_up(lch, cch, &sin, &c2, &s2, &cp, NULL, NULL, &s2id);
		CHECK(post_read(c2id, &c2, &s2) == EINVAL, "a Read with ORD 0: not EINVAL");
		CHECK(post_read(s2id, &s2, &c2) == EINVAL, "a Read to a peer with IRD 0: not EINVAL");
		CHECK(!p_ibv_query_qp(c2id->qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC, &qia) &&
			      qa.max_rd_atomic == 0 && qa.max_dest_rd_atomic == 0,
		      "ibv_query_qp: max_rd_atomic %u max_dest_rd_atomic %u, want 0 0", qa.max_rd_atomic,
		      qa.max_dest_rd_atomic);
		CHECK(ibv_poll_cq(c2.cq, 1, &wc) == 0 && ibv_poll_cq(s2.cq, 1, &wc) == 0,
		      "a refused Read completed");
		pair_down(lch, cch, c2id, s2id, &c2, &s2);
		printf("ok: initiator_depth and responder_resources 0: IRD/ORD 0 in the request, a Read "
		       "refused (EINVAL) on both sides\n");
	}

	/* ---- ibv_destroy_qp of a connected QP: reset at once (no wait for a
	 * close), the id stays and reports DISCONNECTED, the receive flushed */
	{
		struct side c3, s3;
		struct rdma_cm_id *c3id, *s3id;
		struct ibv_recv_wr rw, *bad_r;
		struct ibv_sge sge;
		uint64_t t0;
		uint32_t qpn;
		long ms;

		memset(&c3, 0, sizeof(c3));
		memset(&s3, 0, sizeof(s3));
		c3id = pair_up(lch, cch, &sin, &c3, &s3, NULL, NULL, NULL, &s3id);
		memset(&rw, 0, sizeof(rw));
		sge.addr = (uintptr_t)s3.buf;
		sge.length = 64;
		sge.lkey = s3.mr->lkey;
		rw.wr_id = 33;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CHECK(!ibv_post_recv(s3id->qp, &rw, &bad_r), "ibv_post_recv");
		qpn = s3id->qp->qp_num;
		t0 = ms_now();
		p_rdma_destroy_qp(s3id);
		ms = (long)(ms_now() - t0);
		CHECK(!s3id->qp, "rdma_destroy_qp of a connected QP: still on the id");
		CHECK(ms < 180, "rdma_destroy_qp of a connected QP took %ld ms", ms);
		CHECK(poll_one(s3.cq, &wc) == 1 && wc.wr_id == 33 && wc.status == IBV_WC_WR_FLUSH_ERR &&
			      wc.qp_num == qpn,
		      "the receive of the destroyed QP: wr_id %llu status %d", (unsigned long long)wc.wr_id,
		      wc.status);
		ev = expect(lch, RDMA_CM_EVENT_DISCONNECTED);
		CHECK(ev->id == s3id, "DISCONNECTED of another id");
		p_rdma_ack_cm_event(ev);
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		p_rdma_destroy_qp(c3id);
		CHECK(!p_rdma_destroy_id(c3id) && !p_rdma_destroy_id(s3id), "rdma_destroy_id");
		CHECK(!p_ibv_dereg_mr(c3.mr) && !p_ibv_dereg_mr(s3.mr) && !p_ibv_destroy_cq(c3.cq) &&
			      !p_ibv_destroy_cq(s3.cq) && !p_ibv_dealloc_pd(c3.pd) && !p_ibv_dealloc_pd(s3.pd),
		      "tear down");
		printf("ok: rdma_destroy_qp of a connected QP: %ld ms, its receive flushed, DISCONNECTED on "
		       "both sides, the ids destroyed after\n", ms);
	}

	/* ---- an SRQ (rdma_create_srq, ibv_post_srq_recv, ibv_query_srq), the
	 * asynchronous event of a QP whose connection ends with a TERMINATE
	 * (a Send finding the SRQ empty), and the calls no installed program
	 * imports, answered by the library, not rdma-core */
	{
		struct side c4, s4;
		struct rdma_cm_id *c4id, *s4id;
		struct ibv_context *v = dev;
		struct ibv_srq_attr sa;
		struct ibv_recv_wr rw, *bad_r;
		struct ibv_sge sge;
		struct ibv_async_event ae;
		struct ibv_mr *m2;
		int fatal_c = 0, fatal_s = 0;
		static char iova_buf[64];

		memset(&c4, 0, sizeof(c4));
		memset(&s4, 0, sizeof(s4));
		c4id = pair_up(lch, cch, &sin, &c4, &s4, NULL, NULL, make_qp_srq, &s4id);
		CHECK(!p_ibv_query_srq(s4id->srq, &sa) && sa.max_wr >= 4 && sa.max_sge >= 1,
		      "ibv_query_srq: max_wr %u max_sge %u", sa.max_wr, sa.max_sge);
		sa.srq_limit = 1;
		CHECK(p_ibv_modify_srq(s4id->srq, &sa, IBV_SRQ_LIMIT) == EOPNOTSUPP,
		      "ibv_modify_srq(IBV_SRQ_LIMIT): not EOPNOTSUPP");
		memset(&rw, 0, sizeof(rw));
		sge.addr = (uintptr_t)s4.buf;
		sge.length = 64;
		sge.lkey = s4.mr->lkey;
		rw.wr_id = 44;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CHECK(!ibv_post_srq_recv(s4id->srq, &rw, &bad_r), "ibv_post_srq_recv");
		memcpy(c4.buf, "through the SRQ", 16);
		CHECK(!post_send_buf(c4id, &c4, 16, 45), "ibv_post_send (Send)");
		CHECK(poll_one(s4.cq, &wc) == 1 && wc.wr_id == 44 && wc.status == IBV_WC_SUCCESS &&
			      wc.opcode == IBV_WC_RECV && wc.byte_len == 16 && wc.qp_num == s4id->qp->qp_num &&
			      !memcmp(s4.buf, "through the SRQ", 16),
		      "the Send through the SRQ: wr_id %llu status %d opcode %d len %u qp_num %u",
		      (unsigned long long)wc.wr_id, wc.status, wc.opcode, wc.byte_len, wc.qp_num);
		CHECK(poll_one(c4.cq, &wc) == 1 && wc.wr_id == 45 && wc.status == IBV_WC_SUCCESS,
		      "the Send's completion: status %d", wc.status);
		printf("ok: an SRQ from rdma_create_srq: ibv_query_srq, ibv_modify_srq EOPNOTSUPP, a Send "
		       "received through it\n");

		/* a Send with the SRQ empty: TERMINATE, both QPs fatal */
		CHECK(!post_send_buf(c4id, &c4, 16, 46), "ibv_post_send (Send)");
		for (int i = 0; i < 500 && !(fatal_c && fatal_s); i++) {
			struct pollfd p = {.fd = v->async_fd, .events = POLLIN};

			if (p_ibv_get_async_event(v, &ae)) {
				CHECK(errno == EAGAIN, "ibv_get_async_event: %s", strerror(errno));
				poll(&p, 1, 10);
				continue;
			}
			CHECK(ae.event_type == IBV_EVENT_QP_FATAL &&
				      (ae.element.qp == c4id->qp || ae.element.qp == s4id->qp),
			      "async event %d on %p, want IBV_EVENT_QP_FATAL on a QP of the pair",
			      ae.event_type, (void *)ae.element.qp);
			fatal_c |= ae.element.qp == c4id->qp;
			fatal_s |= ae.element.qp == s4id->qp;
			p_ibv_ack_async_event(&ae);
		}
		CHECK(fatal_c && fatal_s, "IBV_EVENT_QP_FATAL: client %d server %d, want both", fatal_c, fatal_s);
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
		printf("ok: a Send finding the SRQ empty: TERMINATE, IBV_EVENT_QP_FATAL on both QPs, "
		       "DISCONNECTED on both sides\n");

		/* calls that no installed program imports: the library's answers */
		CHECK(p_ibv_resize_cq(s4.cq, 128) == EOPNOTSUPP, "ibv_resize_cq: not EOPNOTSUPP");
		errno = 0;
		CHECK(p_ibv_rereg_mr(s4.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE) ==
				      IBV_REREG_MR_ERR_CMD &&
			      errno == EOPNOTSUPP,
		      "ibv_rereg_mr: not IBV_REREG_MR_ERR_CMD/EOPNOTSUPP");
		m2 = p_ibv_reg_mr_iova(s4.pd, iova_buf, sizeof(iova_buf), (uintptr_t)iova_buf,
				       IBV_ACCESS_LOCAL_WRITE);
		CHECK(m2 && !p_ibv_dereg_mr(m2), "ibv_reg_mr_iova with the address as IOVA: %s", strerror(errno));
		CHECK(!p_ibv_reg_mr_iova(s4.pd, iova_buf, sizeof(iova_buf), 4096, IBV_ACCESS_LOCAL_WRITE) &&
			      errno == EOPNOTSUPP,
		      "ibv_reg_mr_iova with another IOVA: not EOPNOTSUPP");
		CHECK(p_ibv_query_qp_data_in_order(s4id->qp, IBV_WR_RDMA_WRITE, 0) == 0,
		      "ibv_query_qp_data_in_order: not 0");
		CHECK(p_ibv_get_pkey_index(v, 1, htobe16(0xffff)) == 0, "ibv_get_pkey_index(0xffff): not 0");
		CHECK(p_ibv_is_fork_initialized() == IBV_FORK_UNNEEDED, "ibv_is_fork_initialized: not UNNEEDED");
		CHECK(!p_ibv_import_device(-1) && errno == EOPNOTSUPP, "ibv_import_device: not EOPNOTSUPP");
		CHECK(p_rdma_notify(s4id, IBV_EVENT_COMM_EST) == 0, "rdma_notify: not 0");
		CHECK(p_rdma_join_multicast(s4id, (struct sockaddr *)&sin, NULL) == -1 && errno == EOPNOTSUPP,
		      "rdma_join_multicast: not EOPNOTSUPP");
		p_rdma_destroy_qp(c4id);
		p_rdma_destroy_qp(s4id);
		p_rdma_destroy_srq(c4id);
		p_rdma_destroy_srq(s4id);
		CHECK(!c4id->srq && !s4id->srq, "rdma_destroy_srq left the SRQ on the id");
		CHECK(!p_rdma_destroy_id(c4id) && !p_rdma_destroy_id(s4id), "rdma_destroy_id");
		CHECK(!p_ibv_dereg_mr(c4.mr) && !p_ibv_dereg_mr(s4.mr) && !p_ibv_destroy_cq(c4.cq) &&
			      !p_ibv_destroy_cq(s4.cq) && !p_ibv_dealloc_pd(c4.pd) && !p_ibv_dealloc_pd(s4.pd),
		      "tear down");
		printf("ok: ibv_resize_cq and ibv_rereg_mr EOPNOTSUPP (the MR kept), ibv_reg_mr_iova, "
		       "ibv_query_qp_data_in_order 0, ibv_get_pkey_index, fork UNNEEDED, imports and "
		       "multicast EOPNOTSUPP, rdma_notify 0, rdma_destroy_srq\n");
	}

	retry_then_destroy();

	/* ---- disconnect and tear down */
	{
		struct pollfd p = {.fd = cch->fd, .events = POLLIN};

		CHECK(!p_rdma_disconnect(cid), "rdma_disconnect: %s", strerror(errno));
		CHECK(poll(&p, 1, 5000) == 1, "the client's channel fd did not become readable");
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		p_rdma_ack_cm_event(expect(mch, RDMA_CM_EVENT_DISCONNECTED));
		printf("ok: DISCONNECTED on both sides (channel fd readable)\n");
	}
	p_rdma_destroy_qp(cid);
	p_rdma_destroy_qp(sid);
	CHECK(!cid->qp && !sid->qp, "rdma_destroy_qp left the QP on the id");
	CHECK(!p_rdma_destroy_id(cid) && !p_rdma_destroy_id(sid) && !p_rdma_destroy_id(lid), "rdma_destroy_id");
	CHECK(!p_ibv_dereg_mr(cli.mr) && !p_ibv_dereg_mr(srv.mr), "ibv_dereg_mr");
	CHECK(!p_ibv_destroy_cq(cli.cq) && !p_ibv_destroy_cq(srv.cq), "ibv_destroy_cq");
	CHECK(!p_ibv_dealloc_pd(cli.pd) && !p_ibv_dealloc_pd(srv.pd), "ibv_dealloc_pd");
	p_rdma_destroy_event_channel(lch);
	p_rdma_destroy_event_channel(cch);
	p_rdma_destroy_event_channel(mch);
	printf("ok: everything destroyed\n");
	return 0;
}
