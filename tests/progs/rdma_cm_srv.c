/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm_srv - the server side of librdmacm as the kernel's RDMA CM
 * defines it, run under uiw-run (tests/sh/dropin_cm.sh): both ends in this
 * one process, over loopback.
 *
 *   - rdma_bind_addr takes the port at once: bound to port 0,
 *     rdma_get_src_port (and rdma_get_local_addr) say which, and that is
 *     the port rdma_listen listens on and a client connects to (qperf
 *     -cm1 tells its client this port before it listens); a second id on
 *     the same address and port: EADDRINUSE, on the wildcard address and
 *     that port: EADDRNOTAVAIL (the kernel's cma_check_port()); an id
 *     bound and destroyed without listening leaves the port free, and so
 *     does a listener destroyed;
 *   - rdma_listen(id, 0) and (id, -1), the kernel's maximum: 200
 *     connections initiated at once (every rdma_connect before the first
 *     accept) are all requested, accepted and established, none refused or
 *     timed out (cmtime, ucmatose: rdma_listen(id, 0));
 *   - rdma_migrate_id of a listener with K CONNECT_REQUESTs queued on its
 *     channel (the count read from the channel fd's eventfd counter,
 *     /proc/self/fdinfo, so that none is taken): all K arrive on the new
 *     channel in their order, none stays on the old, where an event of
 *     another id stays; a request after the move arrives on the new
 *     channel too; the new ids' ESTABLISHED and DISCONNECTED follow there;
 *   - rdma_disconnect returns what the kernel's returns on iWARP
 *     (iw_cm_disconnect()): EINVAL for a new, bound, resolved or listening
 *     id; 0 for a request not answered, a request rejected, a connect
 *     rejected, a connection closed by the peer first (DISCONNECTED still
 *     queued, and taken), after our own rdma_disconnect (again and again),
 *     after the peer reset the connection (perftest -D), after
 *     rdma_destroy_qp.
 *
 * Arguments name the parts to run (migrate, disconnect, bind, backlog);
 * none: all.  As tests/progs/rdma_api.c, the program is not linked with rdma-core: it
 * finds every function with dlsym() (under uiw-run, libuiw-rdma's).
 * Prints "ok: ..." per check, "FAIL: ..." and exits 1 at the first
 * failure; every wait is bounded.
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_dl.h"

F(ibv_alloc_pd);
F(ibv_dealloc_pd);
F(ibv_create_cq);
F(ibv_destroy_cq);
F(rdma_create_event_channel);
F(rdma_destroy_event_channel);
F(rdma_create_id);
F(rdma_destroy_id);
F(rdma_bind_addr);
F(rdma_listen);
F(rdma_resolve_addr);
F(rdma_resolve_route);
F(rdma_create_qp);
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

/* the connections of the backlog test, and how long a wait may last: TCP
 * retries a lost SYN after 1 s, 3 s, 7 s...; a connection that had to is
 * what the test is about, so it waits long enough to see it fail */
#define NCONN 200
#define WAIT_MS 5000
#define BURST_WAIT_MS 60000

static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static struct rdma_event_channel *channel(void)
{
	struct rdma_event_channel *ch = p_rdma_create_event_channel();

	CHECK(ch, "rdma_create_event_channel: %s", strerror(errno));
	nonblock(ch->fd);
	return ch;
}

/* the next event of @ch within @ms, or NULL */
static struct rdma_cm_event *event_within(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	for (int i = 0; i <= ms / 10; i++) {
		if (!p_rdma_get_cm_event(ch, &ev))
			return ev;
		CHECK(errno == EAGAIN, "rdma_get_cm_event: %s", strerror(errno));
		poll(&p, 1, 10);
	}
	return NULL;
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev = event_within(ch, WAIT_MS);

	CHECK(ev, "no CM event within 5 s, want %s", p_rdma_event_str(t));
	CHECK(ev->event == t, "event %s (status %d), want %s", p_rdma_event_str(ev->event), ev->status,
	      p_rdma_event_str(t));
	return ev;
}

static void expect_none(struct rdma_event_channel *ch, const char *what)
{
	struct rdma_cm_event *ev;

	if (!p_rdma_get_cm_event(ch, &ev))
		die("%s: an event %s (status %d) is there", what, p_rdma_event_str(ev->event), ev->status);
	CHECK(errno == EAGAIN, "%s: rdma_get_cm_event: %s", what, strerror(errno));
}

/* the events queued on @ch, not taking any: the channel's fd is an
 * eventfd counting them, and the kernel shows its counter in fdinfo */
static long queued(struct rdma_event_channel *ch)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ch->fd);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "eventfd-count:", 14))
			n = strtol(line + 14, NULL, 16);
	fclose(f);
	CHECK(n >= 0, "%s: no eventfd-count (the channel fd is not an eventfd)", path);
	return n;
}

/* wait (bounded) until @ch holds @n events */
static void wait_queued(struct rdma_event_channel *ch, long n, const char *what)
{
	for (int i = 0; i < WAIT_MS / 10; i++) {
		if (queued(ch) >= n)
			return;
		usleep(10000);
	}
	die("%s: %ld events queued after 5 s, want %ld", what, queued(ch), n);
}

/* a call that must fail with @err */
#define FAILS_WITH(call, err, ...)                                                            \
	do {                                                                                   \
		errno = 0;                                                                     \
		int r_ = (call);                                                               \
		CHECK(r_ == -1 && errno == (err), __VA_ARGS__);                                \
	} while (0)

static struct sockaddr_in sin_of(const char *a, uint16_t port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static struct rdma_cm_id *new_id(struct rdma_event_channel *ch, void *ctx)
{
	struct rdma_cm_id *id;

	CHECK(!p_rdma_create_id(ch, &id, ctx, RDMA_PS_TCP), "rdma_create_id: %s", strerror(errno));
	return id;
}

static int bind_to(struct rdma_cm_id *id, const char *a, uint16_t port)
{
	struct sockaddr_in s = sin_of(a, port);

	return p_rdma_bind_addr(id, (struct sockaddr *)&s);
}

/* a small QP on @id (one CQ and PD for all) */
static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	CHECK(!p_rdma_create_qp(id, pd, &a), "rdma_create_qp: %s", strerror(errno));
}

/* an id of @ch, resolved to 127.0.0.1:@port (its events taken), with a QP */
static struct rdma_cm_id *resolved_id(struct rdma_event_channel *ch, uint16_t port, void *ctx)
{
	struct sockaddr_in dst = sin_of("127.0.0.1", port);
	struct rdma_cm_id *id = new_id(ch, ctx);

	CHECK(!p_rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), "rdma_resolve_addr: %s",
	      strerror(errno));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!p_rdma_resolve_route(id, 2000), "rdma_resolve_route: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(id);
	return id;
}

/* rdma_connect() with one octet of private data, @tag */
static void connect_tagged(struct rdma_cm_id *id, uint8_t tag)
{
	struct rdma_conn_param cp;

	memset(&cp, 0, sizeof(cp));
	cp.private_data = &tag;
	cp.private_data_len = 1;
	cp.responder_resources = cp.initiator_depth = 1;
	CHECK(!p_rdma_connect(id, &cp), "rdma_connect: %s", strerror(errno));
}

static void accept_id(struct rdma_cm_id *id)
{
	struct rdma_conn_param cp;

	make_qp(id);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = cp.initiator_depth = 1;
	CHECK(!p_rdma_accept(id, &cp), "rdma_accept: %s", strerror(errno));
}

static void drop_id(struct rdma_cm_id *id)
{
	if (id->qp)
		p_rdma_destroy_qp(id);
	CHECK(!p_rdma_destroy_id(id), "rdma_destroy_id: %s", strerror(errno));
}

/* a listener of @ch bound to @a:0, listening with @backlog; its port (as
 * rdma_listen() leaves it: test_bind() checks the port of the bind) */
static struct rdma_cm_id *listener(struct rdma_event_channel *ch, const char *a, int backlog, uint16_t *port)
{
	struct rdma_cm_id *l = new_id(ch, NULL);

	CHECK(!bind_to(l, a, 0), "rdma_bind_addr(%s:0): %s", a, strerror(errno));
	CHECK(!p_rdma_listen(l, backlog), "rdma_listen(%d): %s", backlog, strerror(errno));
	*port = ntohs(p_rdma_get_src_port(l));
	CHECK(*port, "rdma_get_src_port of a listener: 0");
	return l;
}

/* ---- rdma_bind_addr ------------------------------------------------------- */

static void test_bind(void)
{
	struct rdma_event_channel *ch = channel(), *cch = channel();
	struct rdma_cm_id *a, *b, *c, *cid, *sid;
	struct rdma_cm_event *ev;
	struct sockaddr_in *la;
	uint16_t port, q;

	/* bound to port 0: the port is known before rdma_listen */
	a = new_id(ch, NULL);
	CHECK(!bind_to(a, "127.0.0.1", 0), "rdma_bind_addr(127.0.0.1:0): %s", strerror(errno));
	port = ntohs(p_rdma_get_src_port(a));
	CHECK(port, "rdma_get_src_port after rdma_bind_addr(127.0.0.1:0): 0");
	la = (struct sockaddr_in *)rdma_get_local_addr(a);
	CHECK(la->sin_family == AF_INET && la->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		      ntohs(la->sin_port) == port,
	      "rdma_get_local_addr after the bind: family %d port %u", la->sin_family, ntohs(la->sin_port));
	printf("ok: rdma_bind_addr(127.0.0.1:0): rdma_get_src_port %u, rdma_get_local_addr the same\n", port);

	/* the kernel's port space: no second id on it */
	b = new_id(ch, NULL);
	FAILS_WITH(bind_to(b, "127.0.0.1", port), EADDRINUSE,
		   "a second rdma_bind_addr(127.0.0.1:%u): %s, want EADDRINUSE", port, strerror(errno));
	c = new_id(ch, NULL);
	FAILS_WITH(bind_to(c, "0.0.0.0", port), EADDRNOTAVAIL,
		   "rdma_bind_addr(0.0.0.0:%u) with 127.0.0.1:%u bound: %s, want EADDRNOTAVAIL", port, port,
		   strerror(errno));
	CHECK(!bind_to(c, "127.0.0.1", 0), "rdma_bind_addr after a refused one: %s", strerror(errno));
	printf("ok: a second id on 127.0.0.1:%u: EADDRINUSE; on 0.0.0.0:%u: EADDRNOTAVAIL\n", port, port);

	/* it listens where it is bound, and a client reaches it there */
	CHECK(!p_rdma_listen(a, 0), "rdma_listen: %s", strerror(errno));
	CHECK(ntohs(p_rdma_get_src_port(a)) == port, "rdma_listen moved the port from %u to %u", port,
	      ntohs(p_rdma_get_src_port(a)));
	cid = resolved_id(cch, port, NULL);
	connect_tagged(cid, 7);
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	sid = ev->id;
	CHECK(ev->listen_id == a, "CONNECT_REQUEST of another listener");
	p_rdma_ack_cm_event(ev);
	accept_id(sid);
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	CHECK(ntohs(p_rdma_get_dst_port(cid)) == port && ntohs(p_rdma_get_src_port(sid)) == port,
	      "the connection's ports: client's destination %u, server's source %u, want %u",
	      ntohs(p_rdma_get_dst_port(cid)), ntohs(p_rdma_get_src_port(sid)), port);
	printf("ok: rdma_listen on the bound port %u; a client connected to it\n", port);
	drop_id(cid);
	drop_id(sid);
	while ((ev = event_within(ch, 0)))
		p_rdma_ack_cm_event(ev); /* the accepted id's DISCONNECTED, if it came */

	/* a listener destroyed frees its port */
	drop_id(a);
	CHECK(!bind_to(b, "127.0.0.1", port), "rdma_bind_addr(127.0.0.1:%u) after its listener was destroyed: %s",
	      port, strerror(errno));
	drop_id(b);

	/* and so does an id bound, never listening */
	q = ntohs(p_rdma_get_src_port(c));
	drop_id(c);
	c = new_id(ch, NULL);
	CHECK(!bind_to(c, "127.0.0.1", q), "rdma_bind_addr(127.0.0.1:%u) after the id bound there was "
	      "destroyed: %s", q, strerror(errno));
	drop_id(c);
	printf("ok: a listener destroyed and an id bound and destroyed without listening free their ports\n");

	/* the qperf server: any address, port 0, the port read, then listen */
	a = new_id(ch, NULL);
	CHECK(!bind_to(a, "0.0.0.0", 0), "rdma_bind_addr(0.0.0.0:0): %s", strerror(errno));
	port = ntohs(p_rdma_get_src_port(a));
	CHECK(port, "rdma_get_src_port after rdma_bind_addr(0.0.0.0:0): 0");
	CHECK(!p_rdma_listen(a, 0), "rdma_listen: %s", strerror(errno));
	CHECK(ntohs(p_rdma_get_src_port(a)) == port, "rdma_listen moved the port from %u to %u", port,
	      ntohs(p_rdma_get_src_port(a)));
	cid = resolved_id(cch, port, NULL);
	connect_tagged(cid, 8);
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	sid = ev->id;
	p_rdma_ack_cm_event(ev);
	accept_id(sid);
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	p_rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	printf("ok: rdma_bind_addr(0.0.0.0:0), rdma_get_src_port %u, rdma_listen: connected there\n", port);
	drop_id(cid);
	drop_id(sid);
	drop_id(a);
	while ((ev = event_within(ch, 0)))
		p_rdma_ack_cm_event(ev);
	while ((ev = event_within(cch, 0)))
		p_rdma_ack_cm_event(ev);
	p_rdma_destroy_event_channel(ch);
	p_rdma_destroy_event_channel(cch);
}

/* ---- rdma_listen's backlog ------------------------------------------------ */

static void test_backlog(int backlog)
{
	struct rdma_event_channel *lch = channel(), *cch = channel();
	static struct rdma_cm_id *cids[NCONN], *sids[NCONN];
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l;
	unsigned nreq = 0, nsest = 0, ncest = 0;
	uint16_t port;
	struct timespec t0, t1;

	l = listener(lch, "127.0.0.1", backlog, &port);
	for (unsigned i = 0; i < NCONN; i++)
		cids[i] = resolved_id(cch, port, (void *)(uintptr_t)(i + 1));
	/* all at once: every connect before the first accept */
	for (unsigned i = 0; i < NCONN; i++)
		connect_tagged(cids[i], (uint8_t)i);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (nreq < NCONN || nsest < NCONN || ncest < NCONN) {
		long ms;

		ev = event_within(lch, 0);
		if (ev) {
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
				CHECK(nreq < NCONN, "more CONNECT_REQUESTs than connects");
				sids[nreq++] = ev->id;
				p_rdma_ack_cm_event(ev);
				accept_id(sids[nreq - 1]);
				continue;
			}
			CHECK(ev->event == RDMA_CM_EVENT_ESTABLISHED, "backlog %d: the server got %s (status %d)",
			      backlog, p_rdma_event_str(ev->event), ev->status);
			nsest++;
			p_rdma_ack_cm_event(ev);
			continue;
		}
		ev = event_within(cch, 0);
		if (ev) {
			CHECK(ev->event == RDMA_CM_EVENT_ESTABLISHED,
			      "backlog %d: connection %lu of %d: %s (status %d) after %u requests, %u established",
			      backlog, (unsigned long)(uintptr_t)ev->id->context, NCONN, p_rdma_event_str(ev->event),
			      ev->status, nreq, ncest);
			ncest++;
			p_rdma_ack_cm_event(ev);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		CHECK(ms < BURST_WAIT_MS, "backlog %d: after %d s: %u requests, %u and %u established of %d",
		      backlog, BURST_WAIT_MS / 1000, nreq, nsest, ncest, NCONN);
		usleep(2000);
	}
	printf("ok: rdma_listen(id, %d): %d connections initiated at once, all requested, accepted and "
	       "established\n",
	       backlog, NCONN);
	for (unsigned i = 0; i < NCONN; i++) {
		drop_id(cids[i]);
		drop_id(sids[i]);
	}
	drop_id(l);
	while ((ev = event_within(lch, 0)))
		p_rdma_ack_cm_event(ev);
	while ((ev = event_within(cch, 0)))
		p_rdma_ack_cm_event(ev);
	p_rdma_destroy_event_channel(lch);
	p_rdma_destroy_event_channel(cch);
}

/* ---- rdma_migrate_id of a listener ------------------------------------------ */

#define KREQ 5

static void test_migrate(void)
{
	struct rdma_event_channel *old = channel(), *neu = channel(), *cch = channel();
	struct rdma_cm_id *l, *x, *cids[KREQ + 1], *sids[KREQ + 1];
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	uint16_t port;

	l = listener(old, "127.0.0.1", 0, &port);
	x = new_id(old, NULL); /* an id that stays on the old channel */
	/* one at a time, each queued before the next: their order is known */
	for (unsigned i = 0, n = 0; i < KREQ; i++) {
		cids[i] = resolved_id(cch, port, NULL);
		connect_tagged(cids[i], (uint8_t)i);
		wait_queued(old, ++n, "a CONNECT_REQUEST on the listener's channel");
		if (i == 1) {
			/* an event of another id among them */
			dst = sin_of("127.0.0.1", port);
			CHECK(!p_rdma_resolve_addr(x, NULL, (struct sockaddr *)&dst, 2000), "rdma_resolve_addr: %s",
			      strerror(errno));
			wait_queued(old, ++n, "ADDR_RESOLVED");
		}
	}
	CHECK(queued(old) == KREQ + 1, "%ld events on the old channel, want %d", queued(old), KREQ + 1);
	CHECK(!p_rdma_migrate_id(l, neu), "rdma_migrate_id: %s", strerror(errno));
	CHECK(queued(old) == 1, "after rdma_migrate_id of the listener: %ld events on the old channel, "
	      "want 1 (another id's)", queued(old));
	CHECK(queued(neu) == KREQ, "after rdma_migrate_id: %ld events on the new channel, want %d", queued(neu),
	      KREQ);
	for (unsigned i = 0; i < KREQ; i++) {
		ev = expect(neu, RDMA_CM_EVENT_CONNECT_REQUEST);
		CHECK(ev->listen_id == l, "a CONNECT_REQUEST of another listener");
		CHECK(ev->param.conn.private_data_len >= 1 && *(const uint8_t *)ev->param.conn.private_data == i,
		      "CONNECT_REQUEST %u on the new channel is connection %u's", i,
		      ev->param.conn.private_data_len ? *(const uint8_t *)ev->param.conn.private_data : 255);
		CHECK(ev->id->channel == neu, "the new id of request %u is not on the new channel", i);
		sids[i] = ev->id;
		p_rdma_ack_cm_event(ev);
	}
	ev = expect(old, RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK(ev->id == x, "ADDR_RESOLVED of another id");
	p_rdma_ack_cm_event(ev);
	printf("ok: rdma_migrate_id of a listener with %d CONNECT_REQUESTs queued: all on the new channel, in "
	       "order; another id's event stays on the old\n",
	       KREQ);

	/* a request after the move */
	cids[KREQ] = resolved_id(cch, port, NULL);
	connect_tagged(cids[KREQ], KREQ);
	ev = expect(neu, RDMA_CM_EVENT_CONNECT_REQUEST);
	sids[KREQ] = ev->id;
	p_rdma_ack_cm_event(ev);
	expect_none(old, "the old channel after a request that came after the move");
	printf("ok: a CONNECT_REQUEST after the move: on the new channel\n");

	/* the new ids' later events follow them */
	for (unsigned i = 0; i <= KREQ; i++) {
		accept_id(sids[i]);
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
		ev = expect(neu, RDMA_CM_EVENT_ESTABLISHED);
		CHECK(ev->id == sids[i], "ESTABLISHED of another id");
		p_rdma_ack_cm_event(ev);
	}
	for (unsigned i = 0; i <= KREQ; i++) {
		CHECK(!p_rdma_disconnect(cids[i]), "rdma_disconnect: %s", strerror(errno));
		p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		ev = expect(neu, RDMA_CM_EVENT_DISCONNECTED);
		CHECK(ev->id == sids[i], "DISCONNECTED of another id");
		p_rdma_ack_cm_event(ev);
	}
	expect_none(old, "the old channel at the end");
	printf("ok: the accepted ids' ESTABLISHED and DISCONNECTED on the new channel, none on the old\n");
	for (unsigned i = 0; i <= KREQ; i++) {
		drop_id(cids[i]);
		drop_id(sids[i]);
	}
	drop_id(x);
	drop_id(l);
	p_rdma_destroy_event_channel(old);
	p_rdma_destroy_event_channel(neu);
	p_rdma_destroy_event_channel(cch);
}

/* ---- rdma_disconnect ---------------------------------------------------------- */

/* a connection to @l (@port) of @lch: client and server ids */
static void pair(struct rdma_event_channel *lch, struct rdma_event_channel *cch, uint16_t port,
		 struct rdma_cm_id **cid, struct rdma_cm_id **sid)
{
	struct rdma_cm_event *ev;

	*cid = resolved_id(cch, port, NULL);
	connect_tagged(*cid, 1);
	ev = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	*sid = ev->id;
	p_rdma_ack_cm_event(ev);
	accept_id(*sid);
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_ESTABLISHED));
}

#define DISC_OK(id, what)                                                                      \
	CHECK(!p_rdma_disconnect(id), "rdma_disconnect %s: %s, want 0 (the kernel's iWARP CM)", what, \
	      strerror(errno))
#define DISC_EINVAL(id, what)                                                                  \
	FAILS_WITH(p_rdma_disconnect(id), EINVAL, "rdma_disconnect %s: %s, want EINVAL", what,       \
		   errno ? strerror(errno) : "success")

static void test_disconnect(void)
{
	struct rdma_event_channel *lch = channel(), *cch = channel();
	struct rdma_cm_id *l, *id, *cid, *sid;
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	uint16_t port;

	/* no connection ever: EINVAL */
	id = new_id(cch, NULL);
	DISC_EINVAL(id, "of a new id");
	CHECK(!bind_to(id, "127.0.0.1", 0), "rdma_bind_addr: %s", strerror(errno));
	DISC_EINVAL(id, "of a bound id");
	drop_id(id);
	l = listener(lch, "127.0.0.1", 0, &port);
	DISC_EINVAL(l, "of a listener");
	id = new_id(cch, NULL);
	dst = sin_of("127.0.0.1", port);
	CHECK(!p_rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), "rdma_resolve_addr: %s",
	      strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	DISC_EINVAL(id, "after ADDR_RESOLVED");
	CHECK(!p_rdma_resolve_route(id, 2000), "rdma_resolve_route: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	DISC_EINVAL(id, "after ROUTE_RESOLVED");
	drop_id(id);
	printf("ok: rdma_disconnect of a new, bound, resolved or listening id: EINVAL\n");

	/* a request not answered yet (the kernel: nothing done), then rejected;
	 * the initiator's connect rejected */
	cid = resolved_id(cch, port, NULL);
	connect_tagged(cid, 2);
	ev = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	sid = ev->id;
	p_rdma_ack_cm_event(ev);
	DISC_OK(sid, "of a request not answered");
	/* with private data: a Reject without any is taken for a refused TCP
	 * connection by the library's retry of those (see uiw_rdma_cm.c,
	 * retry_refused()), and the connect is made again */
	CHECK(!p_rdma_reject(sid, "no", 2), "rdma_reject after rdma_disconnect: %s", strerror(errno));
	DISC_OK(sid, "of a request rejected");
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	p_rdma_ack_cm_event(ev);
	DISC_OK(cid, "of an id whose connect was rejected");
	drop_id(cid);
	drop_id(sid);
	printf("ok: rdma_disconnect of a request not answered, a request rejected, a connect rejected: 0\n");

	/* the peer disconnects first: 0 with its DISCONNECTED queued, twice,
	 * once it is taken, and after it is acknowledged */
	pair(lch, cch, port, &cid, &sid);
	DISC_OK(sid, "of an established connection");
	wait_queued(cch, 1, "the peer's DISCONNECTED");
	DISC_OK(cid, "after the peer disconnected (DISCONNECTED queued, not taken)");
	DISC_OK(cid, "a second time after the peer disconnected");
	ev = expect(cch, RDMA_CM_EVENT_DISCONNECTED);
	DISC_OK(cid, "with the DISCONNECTED taken, not acknowledged");
	p_rdma_ack_cm_event(ev);
	DISC_OK(cid, "after DISCONNECTED");
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
	DISC_OK(sid, "a second time, after our own DISCONNECTED");
	printf("ok: rdma_disconnect after the peer disconnected first, twice, after DISCONNECTED: 0\n");
	drop_id(cid);
	drop_id(sid);

	/* our own close, called again while it is under way */
	pair(lch, cch, port, &cid, &sid);
	DISC_OK(cid, "of an established connection");
	DISC_OK(cid, "again right after it");
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
	DISC_OK(cid, "after our own DISCONNECTED");
	DISC_OK(sid, "after the peer's close");
	drop_id(cid);
	drop_id(sid);
	printf("ok: rdma_disconnect twice in a row, then after DISCONNECTED: 0\n");

	/* the peer resets the connection (perftest -D: its server destroys
	 * the id): the client's rdma_disconnect after DISCONNECTED */
	pair(lch, cch, port, &cid, &sid);
	drop_id(sid);
	ev = expect(cch, RDMA_CM_EVENT_DISCONNECTED);
	p_rdma_ack_cm_event(ev);
	DISC_OK(cid, "after the peer reset the connection");
	drop_id(cid);

	/* our QP destroyed under the connection (a reset) */
	pair(lch, cch, port, &cid, &sid);
	p_rdma_destroy_qp(cid);
	DISC_OK(cid, "after rdma_destroy_qp of the connection");
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
	DISC_OK(cid, "after rdma_destroy_qp and DISCONNECTED");
	drop_id(cid);
	drop_id(sid);
	printf("ok: rdma_disconnect after the peer reset the connection, after rdma_destroy_qp: 0\n");

	drop_id(l);
	while ((ev = event_within(lch, 0)))
		p_rdma_ack_cm_event(ev);
	p_rdma_destroy_event_channel(lch);
	p_rdma_destroy_event_channel(cch);
}

/* @name is to run: no arguments run every part */
static int part(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	setvbuf(stdout, NULL, _IOLBF, 0);
	LOAD(ibv_alloc_pd); LOAD(ibv_dealloc_pd); LOAD(ibv_create_cq); LOAD(ibv_destroy_cq);
	LOAD(rdma_create_event_channel); LOAD(rdma_destroy_event_channel); LOAD(rdma_create_id);
	LOAD(rdma_destroy_id); LOAD(rdma_bind_addr); LOAD(rdma_listen); LOAD(rdma_resolve_addr);
	LOAD(rdma_resolve_route); LOAD(rdma_create_qp); LOAD(rdma_destroy_qp); LOAD(rdma_connect);
	LOAD(rdma_accept); LOAD(rdma_reject); LOAD(rdma_disconnect); LOAD(rdma_get_cm_event);
	LOAD(rdma_ack_cm_event); LOAD(rdma_migrate_id); LOAD(rdma_event_str);
	LOAD(rdma_get_src_port); LOAD(rdma_get_dst_port);

	/* the CM's device: one PD and CQ for every QP here */
	ch = channel();
	id = new_id(ch, NULL);
	pd = p_ibv_alloc_pd(id->verbs);
	CHECK(pd, "ibv_alloc_pd: %s", strerror(errno));
	cq = p_ibv_create_cq(id->verbs, 4 * NCONN + 64, NULL, NULL, 0);
	CHECK(cq, "ibv_create_cq: %s", strerror(errno));
	drop_id(id);
	p_rdma_destroy_event_channel(ch);

	if (part(argc, argv, "migrate"))
		test_migrate();
	if (part(argc, argv, "disconnect"))
		test_disconnect();
	if (part(argc, argv, "bind"))
		test_bind();
	if (part(argc, argv, "backlog")) {
		test_backlog(0);
		test_backlog(-1);
	}

	CHECK(!p_ibv_destroy_cq(cq), "ibv_destroy_cq: %s", strerror(errno));
	CHECK(!p_ibv_dealloc_pd(pd), "ibv_dealloc_pd: %s", strerror(errno));
	printf("ok: all done\n");
	return 0;
}
