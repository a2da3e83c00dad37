/* SPDX-License-Identifier: MIT */
/*
 * The public verbs and CM API end to end: two contexts (server and client)
 * in one process, each with its progress thread, over real TCP sockets on
 * 127.0.0.1 with kernel-chosen ports.  Every wait is bounded (10 s).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "uiw_verbs.h"

#define TV_WAIT_MS 10000
#define TV_BUF	   (1u << 20)

struct tv_side {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_cm_id *id;
	uint8_t *buf;
	struct uiw_mr *mr;
};

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * MPA options the data test runs under (both sides use the same): the
 * defaults (revision 2, CRC), no CRC, markers with CRC, revision 1, and
 * small FPDUs.  NULL: defaults.
 */
static const struct uiw_context_attr tv_attrs[] = {
	{.crc = UIW_CRC_DEFAULT},	   {.crc = UIW_CRC_OFF},
	{.crc = UIW_CRC_ON, .markers = 1}, {.mpa_rev = 1},
	{.fpdu_max = 1000, .markers = 1},
	/* three progress threads: the accepted connection is served by
	 * another engine than the listener that accepted it */
	{.engine_threads = 3},
};
static const struct uiw_context_attr *tv_attr;
static int tv_cqe = 256; /* CQ size of the next side_init() */
static unsigned tv_ext;	 /* uiw_qp_init_attr.ext of the next side_init() */

static void side_init(struct tv_side *s)
{
	struct uiw_qp_init_attr qa = {0};

	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(uiw_open_context(&s->ctx, tv_attr), 0);
	ck_assert_int_eq(uiw_alloc_pd(s->ctx, &s->pd), 0);
	ck_assert_int_eq(uiw_create_cq(s->ctx, tv_cqe, NULL, NULL, &s->cq), 0);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = 64;
	qa.ext = tv_ext;
	ck_assert_int_eq(uiw_create_qp(s->pd, &qa, &s->qp), 0);
	s->buf = aligned_alloc(64, 2 * TV_BUF);
	ck_assert_ptr_nonnull(s->buf);
	memset(s->buf, 0, 2 * TV_BUF);
	ck_assert_int_eq(uiw_reg_mr(s->pd, s->buf, 2 * TV_BUF,
				    UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE |
					    UIW_ACCESS_REMOTE_READ | UIW_ACCESS_REMOTE_ATOMIC,
				    &s->mr),
			 0);
	ck_assert_uint_eq(s->mr->lkey, s->mr->rkey);
}

static void side_fini(struct tv_side *s)
{
	if (s->id)
		ck_assert_int_eq(uiw_destroy_id(s->id), 0);
	ck_assert_int_eq(uiw_destroy_qp(s->qp), 0);
	ck_assert_int_eq(uiw_dereg_mr(s->mr), 0);
	ck_assert_int_eq(uiw_destroy_cq(s->cq), 0);
	ck_assert_int_eq(uiw_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(uiw_close_context(s->ctx), 0);
	free(s->buf);
}

static void want_event(struct uiw_context *ctx, enum uiw_cm_event_type type,
		       struct uiw_cm_event *ev)
{
	int ret = uiw_get_cm_event(ctx, ev, TV_WAIT_MS);

	ck_assert_msg(ret == 0, "no CM event (%d), wanted %s", ret, uiw_event_str(type));
	ck_assert_msg(ev->event == type, "event %s (status %d), wanted %s",
		      uiw_event_str(ev->event), ev->status, uiw_event_str(type));
}

static void want_wc(struct uiw_cq *cq, struct uiw_wc *wc)
{
	uint64_t end = ms_now() + TV_WAIT_MS;
	int n;

	while ((n = uiw_poll_cq(cq, 1, wc)) == 0 && ms_now() < end)
		usleep(50);
	ck_assert_msg(n == 1, "no completion within %d ms (%d)", TV_WAIT_MS, n);
}

static void post_recv(struct tv_side *s, uint64_t wr_id, void *addr, uint32_t len)
{
	struct uiw_sge sge = {(uintptr_t)addr, len, s->mr->lkey};
	struct uiw_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1};

	ck_assert_int_eq(uiw_post_recv(s->qp, &wr, NULL), 0);
}

static void post_send(struct tv_side *s, enum uiw_wr_opcode op, uint64_t wr_id, void *addr,
		      uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct uiw_sge sge = {(uintptr_t)addr, len, s->mr->lkey};
	struct uiw_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = UIW_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(uiw_post_send(s->qp, &wr, NULL), 0);
}

/* Server @srv listens, client @cli connects; private data both ways. */
static void connect_pair(struct tv_side *srv, struct tv_side *cli, struct uiw_cm_id **lid)
{
	static const char cpd[] = "hello from the client";
	static const char spd[] = "welcome, says the server";
	struct uiw_conn_param cp = {cpd, sizeof(cpd), 0, 0};
	struct uiw_conn_param sp = {spd, sizeof(spd), 0, 0};
	struct uiw_cm_event ev;
	uint16_t port;

	ck_assert_int_eq(uiw_create_id(srv->ctx, NULL, lid), 0);
	ck_assert_int_eq(uiw_listen(*lid, "127.0.0.1", 0, 8), 0);
	port = uiw_get_port(*lid);
	ck_assert_uint_ne(port, 0);
	ck_assert_int_eq(uiw_create_id(cli->ctx, cli, &cli->id), 0);
	ck_assert_ptr_eq(uiw_id_context(cli->id), cli);
	ck_assert_int_eq(uiw_connect(cli->id, "127.0.0.1", port, cli->qp, &cp), 0);

	want_event(srv->ctx, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	ck_assert_ptr_eq(ev.listen_id, *lid);
	ck_assert_uint_eq(ev.private_data_len, sizeof(cpd));
	ck_assert_mem_eq(ev.private_data, cpd, sizeof(cpd));
	/* MPA revision 2 carries the IRD; revision 1 carries none */
	if (!tv_attr || tv_attr->mpa_rev != 1)
		ck_assert_uint_eq(ev.responder_resources, 16);
	srv->id = ev.id;
	ck_assert_int_eq(uiw_accept(srv->id, srv->qp, &sp), 0);
	want_event(srv->ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.id, srv->id);

	want_event(cli->ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.id, cli->id);
	ck_assert_uint_eq(ev.private_data_len, sizeof(spd));
	ck_assert_mem_eq(ev.private_data, spd, sizeof(spd));
}

static void disconnect_pair(struct tv_side *srv, struct tv_side *cli)
{
	struct uiw_cm_event ev;

	ck_assert_int_eq(uiw_disconnect(cli->id), 0);
	want_event(cli->ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	want_event(srv->ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
}

/*
 * The test thread writes server memory that the server's engine reads or
 * wrote, ordered by the TCP exchange, which ThreadSanitizer cannot see (in a
 * real deployment the two sides are separate processes).  A call on the
 * server's context (its mutex) before and after makes the order visible:
 * uiw_query_qp() always takes it (uiw_poll_cq() on an empty CQ does not).
 */
static void ctx_sync(struct tv_side *s)
{
	struct uiw_qp_attr attr;

	ck_assert_int_eq(uiw_query_qp(s->qp, &attr), 0);
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	tu_rand_fill(&seed, p, n);
}

START_TEST(test_verbs_data)
{
	static const uint32_t sizes[] = {0, 1, 65536, TV_BUF};
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_wc wc;
	uint64_t seed = tu_seed();

	tv_attr = &tv_attrs[_i];
	side_init(&srv);
	side_init(&cli);
	connect_pair(&srv, &cli, &lid);

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];
		uint8_t *sdst = srv.buf, *csrc = cli.buf, *cdst = cli.buf + TV_BUF;

		/* RDMA Write, then a Send that arrives after the placed data */
		fill(csrc, n, seed + i);
		ctx_sync(&srv);
		memset(sdst, 0, TV_BUF);
		ctx_sync(&srv);
		post_recv(&srv, 100 + i, srv.buf + TV_BUF, 16);
		post_send(&cli, UIW_WR_RDMA_WRITE, 1, csrc, n, (uintptr_t)sdst, srv.mr->rkey);
		post_send(&cli, UIW_WR_SEND, 2, csrc, 0, 0, 0);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_RDMA_WRITE);
		ck_assert_uint_eq(wc.wr_id, 1);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.opcode, UIW_WC_SEND);
		want_wc(srv.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
		ck_assert_uint_eq(wc.wr_id, 100 + i);
		ck_assert_uint_eq(wc.byte_len, 0);
		ck_assert(memcmp(sdst, csrc, n) == 0);

		/* RDMA Read of the server's memory */
		ctx_sync(&srv);
		fill(sdst, n, seed + 50 + i);
		ctx_sync(&srv);
		memset(cdst, 0, TV_BUF);
		post_send(&cli, UIW_WR_RDMA_READ, 3, cdst, n, (uintptr_t)sdst, srv.mr->rkey);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_RDMA_READ);
		ck_assert_uint_eq(wc.wr_id, 3);
		ck_assert(memcmp(sdst, cdst, n) == 0);

		/* Send into a posted receive */
		fill(csrc, n, seed + 100 + i);
		ctx_sync(&srv);
		memset(sdst, 0, TV_BUF);
		ctx_sync(&srv);
		post_recv(&srv, 200 + i, sdst, TV_BUF);
		post_send(&cli, UIW_WR_SEND, 4, csrc, n, 0, 0);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_SEND);
		want_wc(srv.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
		ck_assert_uint_eq(wc.wr_id, 200 + i);
		ck_assert_uint_eq(wc.byte_len, n);
		ck_assert(memcmp(sdst, csrc, n) == 0);
	}
	ck_assert_int_eq(uiw_poll_cq(srv.cq, 1, &wc), 0);
	ck_assert_int_eq(uiw_poll_cq(cli.cq, 1, &wc), 0);

	disconnect_pair(&srv, &cli);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
	tv_attr = NULL;
}
END_TEST

/* A listener that accepts TCP but never answers the MPA Request: the
 * connect fails with -ETIMEDOUT after the configured handshake timeout. */
START_TEST(test_verbs_handshake_timeout)
{
	static const struct uiw_context_attr a = {.handshake_timeout_ms = 300};
	struct sockaddr_in sin = {0};
	socklen_t sl = sizeof(sin);
	struct tv_side cli;
	struct uiw_cm_event ev;
	uint64_t t0;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(lfd, 0);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	tv_attr = &a;
	side_init(&cli);
	tv_attr = NULL;
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	t0 = ms_now();
	ck_assert_int_eq(uiw_connect(cli.id, "127.0.0.1", ntohs(sin.sin_port), cli.qp, NULL), 0);
	want_event(cli.ctx, UIW_CM_EVENT_CONNECT_ERROR, &ev);
	ck_assert_int_eq(ev.status, -ETIMEDOUT);
	ck_assert_uint_ge(ms_now() - t0, 250);
	side_fini(&cli);
	close(lfd);
}
END_TEST

START_TEST(test_verbs_reject)
{
	static const char cpd[] = "may I?";
	static const char rpd[] = "no: server full";
	struct uiw_conn_param cp = {cpd, sizeof(cpd), 0, 0};
	struct tv_side srv, cli;
	struct uiw_cm_id *lid, *ev_id;
	struct uiw_cm_event ev;

	side_init(&srv);
	side_init(&cli);
	ck_assert_int_eq(uiw_create_id(srv.ctx, NULL, &lid), 0);
	ck_assert_int_eq(uiw_listen(lid, "127.0.0.1", 0, 8), 0);
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	ck_assert_int_eq(uiw_connect(cli.id, "127.0.0.1", uiw_get_port(lid), cli.qp, &cp), 0);
	want_event(srv.ctx, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	ck_assert_mem_eq(ev.private_data, cpd, sizeof(cpd));
	ev_id = ev.id;
	ck_assert_int_eq(uiw_reject(ev.id, rpd, sizeof(rpd)), 0);
	ck_assert_int_eq(uiw_accept(ev.id, srv.qp, NULL), -EINVAL); /* answered already */
	want_event(cli.ctx, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_ptr_eq(ev.id, cli.id);
	ck_assert_uint_eq(ev.private_data_len, sizeof(rpd));
	ck_assert_mem_eq(ev.private_data, rpd, sizeof(rpd));
	ck_assert_int_ne(ev.status, 0);
	/* the rejected id is the server's to destroy (side_fini) */
	srv.id = ev_id;
	{
		struct uiw_cm_event e2;

		ck_assert_int_eq(uiw_get_cm_event(srv.ctx, &e2, 0), -ETIMEDOUT);
	}
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

/* The server's child id must be destroyed too; keep it from the reject. */
START_TEST(test_verbs_reject_destroy_child)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;

	side_init(&srv);
	side_init(&cli);
	ck_assert_int_eq(uiw_create_id(srv.ctx, NULL, &lid), 0);
	ck_assert_int_eq(uiw_listen(lid, "127.0.0.1", 0, 8), 0);
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	ck_assert_int_eq(uiw_connect(cli.id, "127.0.0.1", uiw_get_port(lid), cli.qp, NULL), 0);
	want_event(srv.ctx, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	ck_assert_uint_eq(ev.private_data_len, 0);
	srv.id = ev.id;
	ck_assert_int_eq(uiw_reject(srv.id, NULL, 0), 0);
	want_event(cli.ctx, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_uint_eq(ev.private_data_len, 0);
	ck_assert_int_eq(uiw_close_context(srv.ctx), -EBUSY); /* objects remain */
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

START_TEST(test_verbs_unreachable)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	struct tv_side cli;
	struct uiw_cm_event ev;
	int fd;

	/* a port that was just free and has no listener */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);

	side_init(&cli);
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	ck_assert_int_eq(uiw_connect(cli.id, "127.0.0.1", ntohs(sa.sin_port), cli.qp, NULL), 0);
	/* a refused TCP connection is REJECTED, as librdmacm reports it on
	 * iWARP (UNREACHABLE is for timeouts and routing failures) */
	want_event(cli.ctx, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_uint_eq(ev.private_data_len, 0);
	close(fd);
	/* bad arguments */
	{
		struct uiw_cm_id *id;

		ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &id), 0);
		/* a name that does not resolve: -ENXIO, not a routing error */
		ck_assert_int_eq(uiw_connect(id, "not-an-address.invalid", 1, cli.qp, NULL),
				 -ENXIO);
		ck_assert_int_eq(uiw_listen(id, "not-an-address.invalid", 0, 1), -ENXIO);
		/* the QP is attached to cli.id already */
		ck_assert_int_eq(uiw_connect(id, "::1", 1, cli.qp, NULL), -EINVAL);
		ck_assert_int_eq(uiw_destroy_id(id), 0);
	}
	side_fini(&cli);
}
END_TEST

/*
 * A name that resolves to several addresses: this test program's own
 * getaddrinfo() (it comes before libc's for the library linked into it)
 * answers TV_TWO_NAME with 127.0.0.2 first, where nothing listens, then
 * 127.0.0.1; TV_NONE_NAME with 127.0.0.2 and 127.0.0.3.  Every other name
 * goes to the real getaddrinfo().  The entries are allocated as glibc's
 * freeaddrinfo() frees them (the address in the same block).
 */
#define TV_TWO_NAME  "uiw-two-addresses.test"
#define TV_NONE_NAME "uiw-no-listener.test"

static struct addrinfo *tv_ai(const char *ip, const char *service, struct addrinfo *next)
{
	struct addrinfo *ai = calloc(1, sizeof(*ai) + sizeof(struct sockaddr_in));
	struct sockaddr_in *sin = (struct sockaddr_in *)(ai + 1);

	if (!ai)
		return next;
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(service ? service : "0"));
	inet_pton(AF_INET, ip, &sin->sin_addr);
	ai->ai_family = AF_INET;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_protocol = IPPROTO_TCP;
	ai->ai_addrlen = sizeof(*sin);
	ai->ai_addr = (struct sockaddr *)sin;
	ai->ai_next = next;
	return ai;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

	if (node && !strcmp(node, TV_TWO_NAME)) {
		*res = tv_ai("127.0.0.2", service, tv_ai("127.0.0.1", service, NULL));
		return *res ? 0 : EAI_MEMORY;
	}
	if (node && !strcmp(node, TV_NONE_NAME)) {
		*res = tv_ai("127.0.0.2", service, tv_ai("127.0.0.3", service, NULL));
		return *res ? 0 : EAI_MEMORY;
	}
	*(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
	if (!real)
		return EAI_SYSTEM;
	return real(node, service, hints, res);
}

/* uiw_connect() tries every address a name resolves to, in order */
START_TEST(test_verbs_multi_address)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;
	uint16_t port;

	side_init(&srv);
	side_init(&cli);
	ck_assert_int_eq(uiw_create_id(srv.ctx, NULL, &lid), 0);
	ck_assert_int_eq(uiw_listen(lid, "127.0.0.1", 0, 8), 0); /* not on 127.0.0.2 */
	port = uiw_get_port(lid);
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	ck_assert_int_eq(uiw_connect(cli.id, TV_TWO_NAME, port, cli.qp, NULL), 0);
	want_event(srv.ctx, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	srv.id = ev.id;
	ck_assert_int_eq(uiw_accept(srv.id, srv.qp, NULL), 0);
	want_event(cli.ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.id, cli.id);
	want_event(srv.ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);

	/* no address has a listener: one REJECTED, after the last one */
	side_init(&cli);
	ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
	ck_assert_int_eq(uiw_connect(cli.id, TV_NONE_NAME, port, cli.qp, NULL), 0);
	want_event(cli.ctx, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_int_eq(uiw_get_cm_event(cli.ctx, &ev, 200), -ETIMEDOUT);
	side_fini(&cli);
}
END_TEST

START_TEST(test_verbs_disconnect_flush)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;
	struct uiw_wc wc;

	side_init(&srv);
	side_init(&cli);
	connect_pair(&srv, &cli, &lid);
	for (int i = 0; i < 4; i++)
		post_recv(&srv, 10 + (uint64_t)i, srv.buf + (size_t)i * 4096, 4096);
	post_recv(&cli, 20, cli.buf, 4096);
	ck_assert_int_eq(uiw_disconnect(cli.id), 0);
	ck_assert_int_eq(uiw_disconnect(cli.id), -EINVAL);
	want_event(cli.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	want_event(srv.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	ck_assert_ptr_eq(ev.id, srv.id);
	for (int i = 0; i < 4; i++) {
		want_wc(srv.cq, &wc);
		ck_assert_uint_eq(wc.wr_id, 10 + (uint64_t)i);
		ck_assert_int_eq(wc.status, UIW_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
	}
	want_wc(cli.cq, &wc);
	ck_assert_uint_eq(wc.wr_id, 20);
	ck_assert_int_eq(wc.status, UIW_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

/* A CQ of N entries holds exactly N completions: the N+1st, and not the
 * Nth, overflows it (-EOVERFLOW once, the QP goes to error). */
START_TEST(test_verbs_cq_full)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_qp_attr qa;
	struct uiw_wc wc[8];
	uint64_t end;
	int n = 0, got;

	side_init(&srv);
	tv_cqe = 4;
	side_init(&cli);
	tv_cqe = 256;
	connect_pair(&srv, &cli, &lid);
	for (int i = 0; i < 4; i++)
		post_send(&cli, UIW_WR_RDMA_WRITE, 1 + (uint64_t)i, cli.buf, 64,
			  (uintptr_t)srv.buf, srv.mr->rkey);
	/* the four completions fill the CQ to the brim: nothing is lost (a
	 * Write completes when handed to TCP: long before this wait ends) */
	usleep((useconds_t)tu_ms(300) * 1000);
	ck_assert_int_eq(uiw_query_qp(cli.qp, &qa), 0);
	ck_assert_int_eq(qa.qp_state, UIW_QPS_RTS);
	got = uiw_poll_cq(cli.cq, 8, wc);
	ck_assert_int_eq(got, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(wc[i].wr_id, 1 + (uint64_t)i);
		ck_assert_int_eq(wc[i].status, UIW_WC_SUCCESS);
	}
	/* five more without polling: the fifth is lost, said once */
	for (int i = 0; i < 5; i++)
		post_send(&cli, UIW_WR_RDMA_WRITE, 10 + (uint64_t)i, cli.buf, 64,
			  (uintptr_t)srv.buf, srv.mr->rkey);
	end = ms_now() + TV_WAIT_MS;
	while ((got = uiw_poll_cq(cli.cq, 0, wc)) != -EOVERFLOW && ms_now() < end)
		usleep(100);
	ck_assert_int_eq(got, -EOVERFLOW);
	while ((got = uiw_poll_cq(cli.cq, 8, wc)) > 0)
		n += got;
	ck_assert_int_ge(n, 4);
	end = ms_now() + TV_WAIT_MS;
	do {
		ck_assert_int_eq(uiw_query_qp(cli.qp, &qa), 0);
	} while (qa.qp_state != UIW_QPS_ERR && ms_now() < end && !usleep(1000));
	ck_assert_int_eq(qa.qp_state, UIW_QPS_ERR);
	ck_assert_int_eq(uiw_destroy_id(cli.id), 0);
	cli.id = NULL;
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

/* A Write to an STag the server never registered: TERMINATE, both close. */
START_TEST(test_verbs_remote_access_error)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	int flushed = 0;

	side_init(&srv);
	side_init(&cli);
	connect_pair(&srv, &cli, &lid);
	post_recv(&srv, 30, srv.buf, 4096);
	post_recv(&cli, 40, cli.buf + TV_BUF, 4096);
	post_send(&cli, UIW_WR_RDMA_WRITE, 1, cli.buf, 4096, (uintptr_t)srv.buf,
		  srv.mr->rkey ^ 0x55);
	want_event(cli.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	want_event(srv.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	/* the server's receive and the client's receive end in error */
	want_wc(srv.cq, &wc);
	ck_assert_uint_eq(wc.wr_id, 30);
	ck_assert_int_ne(wc.status, UIW_WC_SUCCESS);
	while (uiw_poll_cq(cli.cq, 1, &wc) == 1) {
		if (wc.wr_id == 40) {
			ck_assert_int_eq(wc.status, UIW_WC_WR_FLUSH_ERR);
			flushed = 1;
		}
	}
	ck_assert(flushed);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

/* Destroying a connected id: its QP flushes, the peer sees DISCONNECTED.
 * (uiw_destroy_qp() of the live QP: verbs_api/test_api_destroy_live_qp.) */
START_TEST(test_verbs_destroy_connected)
{
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;
	struct uiw_wc wc;

	side_init(&srv);
	side_init(&cli);
	connect_pair(&srv, &cli, &lid);
	post_recv(&srv, 50, srv.buf, 4096);
	post_recv(&cli, 60, cli.buf, 4096);
	ck_assert_int_eq(uiw_destroy_id(srv.id), 0);
	srv.id = NULL;
	want_wc(srv.cq, &wc);
	ck_assert_uint_eq(wc.wr_id, 50);
	ck_assert_int_eq(wc.status, UIW_WC_WR_FLUSH_ERR);
	want_event(cli.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	want_wc(cli.cq, &wc);
	ck_assert_uint_eq(wc.wr_id, 60);
	ck_assert_int_eq(wc.status, UIW_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(uiw_get_cm_event(srv.ctx, &ev, 0), -ETIMEDOUT);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

START_TEST(test_verbs_api_errors)
{
	struct uiw_context *ctx;
	struct uiw_context_attr a = {.mode = (enum uiw_ctx_mode)7};
	struct uiw_cq *cq;
	struct uiw_pd *pd;
	struct uiw_mr *mr;
	struct uiw_cm_event ev;
	uint8_t b[16];

	ck_assert_int_eq(uiw_open_context(&ctx, &a), -EINVAL);
	/* engines: at most 64, and one only in a polled context */
	a = (struct uiw_context_attr){.engine_threads = 65};
	ck_assert_int_eq(uiw_open_context(&ctx, &a), -EINVAL);
	a = (struct uiw_context_attr){.mode = UIW_CTX_POLLED, .engine_threads = 2};
	ck_assert_int_eq(uiw_open_context(&ctx, &a), -EINVAL);
	a.engine_threads = 1;
	ck_assert_int_eq(uiw_open_context(&ctx, &a), 0);
	ck_assert_int_eq(uiw_close_context(ctx), 0);
	ck_assert_int_eq(uiw_open_context(&ctx, NULL), 0);
	ck_assert_int_eq(uiw_create_cq(ctx, 0, NULL, NULL, &cq), -EINVAL);
	ck_assert_int_eq(uiw_alloc_pd(ctx, &pd), 0);
	ck_assert_int_eq(uiw_reg_mr(pd, b, sizeof(b), 0x80, &mr), -EINVAL);
	ck_assert_int_eq(uiw_reg_mr(pd, b, sizeof(b), UIW_ACCESS_LOCAL_WRITE, &mr), 0);
	ck_assert_int_eq(uiw_dealloc_pd(pd), -EBUSY);
	ck_assert_int_eq(uiw_get_cm_event(ctx, &ev, 10), -ETIMEDOUT);
	ck_assert_int_eq(uiw_dereg_mr(mr), 0);
	ck_assert_int_eq(uiw_dealloc_pd(pd), 0);
	ck_assert_int_eq(uiw_close_context(ctx), 0);
}
END_TEST

/*
 * A server in a fork()ed process: the client Writes 512 KiB to the server's
 * [1.5 MiB, 2 MiB), Reads its [1 MiB, 1.5 MiB), Sends, and disconnects; the
 * server checks the Write and the Send and exits 0.
 */
START_TEST(test_verbs_fork)
{
	struct {
		uint64_t addr;
		uint32_t rkey;
		uint16_t port;
	} info = {0};
	int pfd[2];
	pid_t pid;
	int status = -1;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tv_side srv;
		struct uiw_cm_id *lid;
		struct uiw_cm_event ev;
		struct uiw_wc wc;
		int ok = 1;

		close(pfd[0]);
		alarm(20); /* a stuck child never outlives the test */
		side_init(&srv);
		if (uiw_create_id(srv.ctx, NULL, &lid) || uiw_listen(lid, "127.0.0.1", 0, 8))
			_exit(2);
		info.port = uiw_get_port(lid);
		info.addr = (uintptr_t)srv.buf;
		info.rkey = srv.mr->rkey;
		if (write(pfd[1], &info, sizeof(info)) != sizeof(info))
			_exit(3);
		if (uiw_get_cm_event(srv.ctx, &ev, TV_WAIT_MS) ||
		    ev.event != UIW_CM_EVENT_CONNECT_REQUEST)
			_exit(4);
		srv.id = ev.id;
		for (uint32_t i = 0; i < TV_BUF / 2; i++)
			srv.buf[TV_BUF + i] = (uint8_t)(i * 7);
		post_recv(&srv, 1, srv.buf, 16);
		if (uiw_accept(srv.id, srv.qp, NULL))
			_exit(5);
		/* the client Writes, Reads, then Sends "done"; then disconnects */
		if (uiw_get_cm_event(srv.ctx, &ev, TV_WAIT_MS) ||
		    ev.event != UIW_CM_EVENT_ESTABLISHED)
			_exit(6);
		if (uiw_get_cm_event(srv.ctx, &ev, TV_WAIT_MS) ||
		    ev.event != UIW_CM_EVENT_DISCONNECTED)
			_exit(7);
		if (uiw_poll_cq(srv.cq, 1, &wc) != 1 || wc.status != UIW_WC_SUCCESS)
			ok = 0;
		for (uint32_t i = 0; i < TV_BUF / 2; i++)
			if (srv.buf[TV_BUF * 3 / 2 + i] != (uint8_t)(i ^ 0x5a))
				ok = 0;
		uiw_destroy_id(lid);
		side_fini(&srv);
		_exit(ok ? 0 : 8);
	}
	close(pfd[1]);
	{
		struct tv_side cli;
		struct uiw_cm_event ev;
		struct uiw_wc wc;
		uint64_t end;
		pid_t r;

		ck_assert_int_eq(read(pfd[0], &info, sizeof(info)), sizeof(info));
		close(pfd[0]);
		side_init(&cli);
		ck_assert_int_eq(uiw_create_id(cli.ctx, NULL, &cli.id), 0);
		ck_assert_int_eq(uiw_connect(cli.id, "127.0.0.1", info.port, cli.qp, NULL), 0);
		want_event(cli.ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
		for (uint32_t i = 0; i < TV_BUF / 2; i++)
			cli.buf[i] = (uint8_t)(i ^ 0x5a);
		post_send(&cli, UIW_WR_RDMA_WRITE, 1, cli.buf, TV_BUF / 2,
			  info.addr + TV_BUF * 3 / 2, info.rkey);
		post_send(&cli, UIW_WR_RDMA_READ, 2, cli.buf + TV_BUF, TV_BUF / 2,
			  info.addr + TV_BUF, info.rkey);
		post_send(&cli, UIW_WR_SEND, 3, cli.buf, 4, 0, 0);
		for (int i = 1; i <= 3; i++) {
			want_wc(cli.cq, &wc);
			ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
			ck_assert_uint_eq(wc.wr_id, (uint64_t)i);
		}
		for (uint32_t i = 0; i < TV_BUF / 2; i++)
			ck_assert_uint_eq(cli.buf[TV_BUF + i], (uint8_t)(i * 7));
		ck_assert_int_eq(uiw_disconnect(cli.id), 0);
		want_event(cli.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
		side_fini(&cli);

		end = ms_now() + TV_WAIT_MS;
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 && ms_now() < end)
			usleep(1000);
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ck_abort_msg("server process did not exit");
		}
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
}
END_TEST

/*
 * @n connections between @sctx (a listener on 127.0.0.1, into *@lid) and
 * @cctx: client QP cqp[i] connects with private data i, and the server
 * accepts each request on sqp[i] as it arrives; returns once all 2 * @n
 * ESTABLISHED events came.  The ids go into sid[] and cid[].
 */
/* the last objects of te_connect_all()'s two contexts, and the contexts */
static void te_close_pair(struct uiw_pd *spd, struct uiw_pd *cpd, struct uiw_context *sctx,
			  struct uiw_context *cctx)
{
	ck_assert_int_eq(uiw_dealloc_pd(spd), 0);
	ck_assert_int_eq(uiw_dealloc_pd(cpd), 0);
	ck_assert_int_eq(uiw_close_context(sctx), 0);
	ck_assert_int_eq(uiw_close_context(cctx), 0);
}

static void te_connect_all(struct uiw_context *sctx, struct uiw_context *cctx, unsigned n,
			   struct uiw_qp **sqp, struct uiw_qp **cqp, struct uiw_cm_id **lid,
			   struct uiw_cm_id **sid, struct uiw_cm_id **cid)
{
	struct uiw_cm_event ev;
	unsigned established = 0;
	uint16_t port;

	ck_assert_int_eq(uiw_create_id(sctx, NULL, lid), 0);
	ck_assert_int_eq(uiw_listen(*lid, "127.0.0.1", 0, (int)n), 0);
	port = uiw_get_port(*lid);
	for (unsigned i = 0; i < n; i++) {
		struct uiw_conn_param cp = {&i, sizeof(i), 0, 0};

		sid[i] = NULL;
		ck_assert_int_eq(uiw_create_id(cctx, NULL, &cid[i]), 0);
		ck_assert_int_eq(uiw_connect(cid[i], "127.0.0.1", port, cqp[i], &cp), 0);
	}
	/* accept in arrival order: the private data names the connection */
	while (established < 2 * n) {
		struct uiw_context *c = established & 1 ? cctx : sctx;
		int r = uiw_get_cm_event(c, &ev, 0);

		if (r == -ETIMEDOUT) {
			c = c == sctx ? cctx : sctx;
			r = uiw_get_cm_event(c, &ev, TV_WAIT_MS / 10);
			if (r == -ETIMEDOUT)
				continue;
		}
		ck_assert_int_eq(r, 0);
		if (ev.event == UIW_CM_EVENT_CONNECT_REQUEST) {
			unsigned k;

			ck_assert_uint_eq(ev.private_data_len, sizeof(k));
			memcpy(&k, ev.private_data, sizeof(k));
			ck_assert_uint_lt(k, n);
			ck_assert_ptr_null(sid[k]);
			sid[k] = ev.id;
			ck_assert_int_eq(uiw_accept(sid[k], sqp[k], NULL), 0);
			continue;
		}
		ck_assert_msg(ev.event == UIW_CM_EVENT_ESTABLISHED, "event %s (%d)",
			      uiw_event_str(ev.event), ev.status);
		established++;
	}
}

/* te_connect_all()'s connections: each client disconnects, both sides see
 * DISCONNECTED; then every id, QP and the listener go */
static void te_disconnect_all(struct uiw_context *sctx, struct uiw_context *cctx, unsigned n,
			      struct uiw_qp **sqp, struct uiw_qp **cqp, struct uiw_cm_id *lid,
			      struct uiw_cm_id **sid, struct uiw_cm_id **cid)
{
	struct uiw_cm_event ev;

	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(uiw_disconnect(cid[i]), 0);
		want_event(cctx, UIW_CM_EVENT_DISCONNECTED, &ev);
		want_event(sctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	}
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(uiw_destroy_id(cid[i]), 0);
		ck_assert_int_eq(uiw_destroy_id(sid[i]), 0);
		ck_assert_int_eq(uiw_destroy_qp(cqp[i]), 0);
		ck_assert_int_eq(uiw_destroy_qp(sqp[i]), 0);
	}
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
}

/*
 * Several engine threads per context (uiw_context_attr.engine_threads):
 * TE_CONNS connections between a server context with 4 engines and a client
 * context with 3, all moving data at once (each: an RDMA Write of TE_LEN
 * octets, a Send of TE_LEN octets, an RDMA Read of TE_LEN octets back),
 * every octet checked; then every connection is disconnected and every
 * object destroyed.  Connections are spread round-robin over the engines,
 * so accepted connections are served by other engines than the listener.
 */
#define TE_CONNS 8
#define TE_LEN	 (256u << 10)

START_TEST(test_verbs_engines)
{
	struct uiw_context_attr sa = {.engine_threads = 4}, ca = {.engine_threads = 3};
	struct uiw_context *sctx, *cctx;
	struct uiw_pd *spd, *cpd;
	struct uiw_cq *scq, *ccq;
	struct uiw_mr *smr, *cmr;
	struct uiw_qp *sqp[TE_CONNS], *cqp[TE_CONNS];
	struct uiw_cm_id *lid, *sid[TE_CONNS], *cid[TE_CONNS];
	struct uiw_qp_init_attr qa = {0};
	struct uiw_wc wc;
	/* per connection: client [src | read-back], server [write dst | recv dst] */
	size_t per = 2 * (size_t)TE_LEN;
	uint8_t *sbuf = calloc(TE_CONNS, per), *cbuf = calloc(TE_CONNS, per);
	uint64_t seed = tu_seed();
	unsigned cdone = 0, sdone = 0;

	ck_assert_ptr_nonnull(sbuf);
	ck_assert_ptr_nonnull(cbuf);
	ck_assert_int_eq(uiw_open_context(&sctx, &sa), 0);
	ck_assert_int_eq(uiw_open_context(&cctx, &ca), 0);
	ck_assert_int_eq(uiw_alloc_pd(sctx, &spd), 0);
	ck_assert_int_eq(uiw_alloc_pd(cctx, &cpd), 0);
	ck_assert_int_eq(uiw_create_cq(sctx, 256, NULL, NULL, &scq), 0);
	ck_assert_int_eq(uiw_create_cq(cctx, 256, NULL, NULL, &ccq), 0);
	ck_assert_int_eq(uiw_reg_mr(spd, sbuf, TE_CONNS * per,
				    UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE |
					    UIW_ACCESS_REMOTE_READ,
				    &smr),
			 0);
	ck_assert_int_eq(uiw_reg_mr(cpd, cbuf, TE_CONNS * per, UIW_ACCESS_LOCAL_WRITE, &cmr), 0);
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (unsigned i = 0; i < TE_CONNS; i++) {
		qa.send_cq = qa.recv_cq = scq;
		ck_assert_int_eq(uiw_create_qp(spd, &qa, &sqp[i]), 0);
		qa.send_cq = qa.recv_cq = ccq;
		ck_assert_int_eq(uiw_create_qp(cpd, &qa, &cqp[i]), 0);
		tu_rand_fill(&seed, cbuf + i * per, TE_LEN);
	}
	te_connect_all(sctx, cctx, TE_CONNS, sqp, cqp, &lid, sid, cid);
	/* everything at once: Write, Send, Read on every connection */
	for (unsigned i = 0; i < TE_CONNS; i++) {
		uint8_t *src = cbuf + i * per, *back = src + TE_LEN;
		uint8_t *wdst = sbuf + i * per, *rdst = wdst + TE_LEN;
		struct uiw_sge rs = {(uintptr_t)rdst, TE_LEN, smr->lkey};
		struct uiw_recv_wr rw = {.wr_id = 100 + i, .sg_list = &rs, .num_sge = 1};
		struct uiw_sge ss = {(uintptr_t)src, TE_LEN, cmr->lkey};
		struct uiw_sge bs = {(uintptr_t)back, TE_LEN, cmr->lkey};
		struct uiw_send_wr w[3] = {
			{.wr_id = 1, .sg_list = &ss, .num_sge = 1, .opcode = UIW_WR_RDMA_WRITE},
			{.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = UIW_WR_SEND,
			 .send_flags = UIW_SEND_SIGNALED},
			{.wr_id = 300 + i, .sg_list = &bs, .num_sge = 1, .opcode = UIW_WR_RDMA_READ,
			 .send_flags = UIW_SEND_SIGNALED},
		};

		w[0].next = &w[1];
		w[1].next = &w[2];
		w[0].wr.rdma.remote_addr = (uintptr_t)wdst;
		w[0].wr.rdma.rkey = smr->rkey;
		w[2].wr.rdma.remote_addr = (uintptr_t)wdst; /* what the Write placed */
		w[2].wr.rdma.rkey = smr->rkey;
		ck_assert_int_eq(uiw_post_recv(sqp[i], &rw, NULL), 0);
		ck_assert_int_eq(uiw_post_send(cqp[i], w, NULL), 0);
	}
	{
		uint64_t end = ms_now() + TV_WAIT_MS;

		while ((cdone < 2 * TE_CONNS || sdone < TE_CONNS) && ms_now() < end) {
			int n = uiw_poll_cq(ccq, 1, &wc);

			if (n == 1) {
				ck_assert_msg(wc.status == UIW_WC_SUCCESS, "client wc status %d",
					      (int)wc.status);
				cdone++;
			}
			if (uiw_poll_cq(scq, 1, &wc) == 1) {
				ck_assert_msg(wc.status == UIW_WC_SUCCESS, "server wc status %d",
					      (int)wc.status);
				ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
				ck_assert_uint_eq(wc.byte_len, TE_LEN);
				sdone++;
			} else if (n == 0) {
				usleep(100);
			}
		}
	}
	ck_assert_uint_eq(cdone, 2 * TE_CONNS);
	ck_assert_uint_eq(sdone, TE_CONNS);
	for (unsigned i = 0; i < TE_CONNS; i++) {
		uint8_t *src = cbuf + i * per;

		ck_assert_msg(memcmp(sbuf + i * per, src, TE_LEN) == 0, "Write %u", i);
		ck_assert_msg(memcmp(sbuf + i * per + TE_LEN, src, TE_LEN) == 0, "Send %u", i);
		ck_assert_msg(memcmp(src + TE_LEN, src, TE_LEN) == 0, "Read %u", i);
	}
	te_disconnect_all(sctx, cctx, TE_CONNS, sqp, cqp, lid, sid, cid);
	ck_assert_int_eq(uiw_dereg_mr(smr), 0);
	ck_assert_int_eq(uiw_dereg_mr(cmr), 0);
	ck_assert_int_eq(uiw_destroy_cq(scq), 0);
	ck_assert_int_eq(uiw_destroy_cq(ccq), 0);
	te_close_pair(spd, cpd, sctx, cctx);
	free(sbuf);
	free(cbuf);
}
END_TEST

/*
 * The per-engine locks (docs/LOCKING.md) under load: a server context with
 * 3 engines serves TS_CONNS connections whose QPs share one SRQ and one CQ;
 * the client's QPs (2 engines) are driven by TS_THREADS application threads
 * at once, each posting Sends on its own connections; meanwhile a server
 * thread registers and deregisters a region in a loop (every engine's lock,
 * the STag table the engines look up in).  The server's thread reposts
 * each shared receive as it reaps it and only then grants the client a
 * credit, so no Send can find the SRQ empty.  Every message arrives once,
 * in order per connection, with its payload; under TSan (make check-tsan)
 * and the lock-order record of sanitizer builds.
 */
#define TS_CONNS   6
#define TS_THREADS 3
#define TS_MSGS	   150
#define TS_LEN	   4096u
#define TS_RECVS   32

struct ts_client {
	struct uiw_qp *qp[TS_CONNS / TS_THREADS];
	struct uiw_cq *cq[TS_CONNS / TS_THREADS];
	unsigned conn0; /* the first connection's index */
	uint8_t *buf;	/* TS_CONNS / TS_THREADS * TS_LEN, registered */
	uint32_t lkey;
	int *credits; /* atomic: receives the server has posted and not yet seen used */
	int failed;
};

static uint8_t ts_byte(unsigned conn, unsigned seq, unsigned i)
{
	return (uint8_t)(conn * 31 + seq * 7 + i);
}

static void *ts_client_main(void *arg)
{
	struct ts_client *c = arg;
	unsigned sent[TS_CONNS / TS_THREADS] = {0}, done[TS_CONNS / TS_THREADS] = {0};
	unsigned total = 0;
	uint64_t end = ms_now() + 6 * TV_WAIT_MS;

	while (total < TS_CONNS / TS_THREADS * TS_MSGS && ms_now() < end && !c->failed) {
		for (unsigned k = 0; k < TS_CONNS / TS_THREADS; k++) {
			struct uiw_wc wc;
			int cr;

			while (uiw_poll_cq(c->cq[k], 1, &wc) == 1) {
				if (wc.status != UIW_WC_SUCCESS)
					c->failed = 1;
				done[k]++;
				total++;
			}
			/* one Send in flight per connection (its buffer is reused) */
			if (sent[k] == TS_MSGS || sent[k] != done[k])
				continue;
			cr = __atomic_load_n(c->credits, __ATOMIC_ACQUIRE);
			if (cr <= 0 || !__atomic_compare_exchange_n(c->credits, &cr, cr - 1, 0,
								    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue;
			{
				uint8_t *p = c->buf + k * TS_LEN;
				unsigned conn = c->conn0 + k, seq = sent[k];
				struct uiw_sge sg = {(uintptr_t)p, TS_LEN, c->lkey};
				struct uiw_send_wr w = {.wr_id = seq, .sg_list = &sg, .num_sge = 1,
							.opcode = UIW_WR_SEND,
							.send_flags = UIW_SEND_SIGNALED};

				memcpy(p, &conn, 4);
				memcpy(p + 4, &seq, 4);
				for (unsigned i = 8; i < TS_LEN; i++)
					p[i] = ts_byte(conn, seq, i);
				if (uiw_post_send(c->qp[k], &w, NULL))
					c->failed = 1;
				sent[k]++;
			}
		}
		sched_yield();
	}
	if (total != TS_CONNS / TS_THREADS * TS_MSGS)
		c->failed = 1;
	return NULL;
}

struct ts_churn {
	struct uiw_pd *pd;
	int stop; /* atomic */
	unsigned rounds, failed;
};

static void *ts_churn_main(void *arg)
{
	struct ts_churn *t = arg;
	static uint8_t region[8192];

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		struct uiw_mr *mr;

		if (uiw_reg_mr(t->pd, region, sizeof(region), UIW_ACCESS_LOCAL_WRITE, &mr) ||
		    uiw_dereg_mr(mr))
			t->failed++;
		t->rounds++;
		usleep(200);
	}
	return NULL;
}

START_TEST(test_verbs_engines_shared)
{
	struct uiw_context_attr sa = {.engine_threads = 3}, ca = {.engine_threads = 2};
	struct uiw_context *sctx, *cctx;
	struct uiw_pd *spd, *cpd;
	struct uiw_cq *scq;
	struct uiw_srq *srq;
	struct uiw_mr *smr, *cmr[TS_THREADS];
	struct uiw_qp *sqp[TS_CONNS], *cqp[TS_CONNS];
	struct uiw_cm_id *lid, *sid[TS_CONNS], *cid[TS_CONNS];
	struct uiw_srq_init_attr sra = {.max_wr = TS_RECVS, .max_sge = 1};
	struct uiw_qp_init_attr qa = {0};
	struct ts_client cl[TS_THREADS];
	struct ts_churn churn = {0};
	pthread_t th[TS_THREADS], cth;
	uint8_t *rbuf = calloc(TS_RECVS, TS_LEN);
	unsigned next_seq[TS_CONNS] = {0}, got = 0;
	int credits = TS_RECVS;
	uint64_t end;

	ck_assert_ptr_nonnull(rbuf);
	ck_assert_int_eq(uiw_open_context(&sctx, &sa), 0);
	ck_assert_int_eq(uiw_open_context(&cctx, &ca), 0);
	ck_assert_int_eq(uiw_alloc_pd(sctx, &spd), 0);
	ck_assert_int_eq(uiw_alloc_pd(cctx, &cpd), 0);
	ck_assert_int_eq(uiw_create_cq(sctx, 2 * TS_RECVS + 2 * TS_CONNS, NULL, NULL, &scq), 0);
	ck_assert_int_eq(uiw_create_srq(spd, &sra, &srq), 0);
	ck_assert_int_eq(uiw_reg_mr(spd, rbuf, (size_t)TS_RECVS * TS_LEN, UIW_ACCESS_LOCAL_WRITE,
				    &smr),
			 0);
	for (unsigned r = 0; r < TS_RECVS; r++) {
		struct uiw_sge sg = {(uintptr_t)(rbuf + r * TS_LEN), TS_LEN, smr->lkey};
		struct uiw_recv_wr rw = {.wr_id = r, .sg_list = &sg, .num_sge = 1};

		ck_assert_int_eq(uiw_post_srq_recv(srq, &rw, NULL), 0);
	}
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (unsigned i = 0; i < TS_CONNS; i++) {
		qa.send_cq = qa.recv_cq = scq;
		qa.srq = srq;
		ck_assert_int_eq(uiw_create_qp(spd, &qa, &sqp[i]), 0);
	}
	memset(cl, 0, sizeof(cl));
	for (unsigned t = 0; t < TS_THREADS; t++) {
		cl[t].conn0 = t * (TS_CONNS / TS_THREADS);
		cl[t].credits = &credits;
		cl[t].buf = calloc(TS_CONNS / TS_THREADS, TS_LEN);
		ck_assert_ptr_nonnull(cl[t].buf);
		ck_assert_int_eq(uiw_reg_mr(cpd, cl[t].buf, TS_CONNS / TS_THREADS * TS_LEN,
					    UIW_ACCESS_LOCAL_WRITE, &cmr[t]),
				 0);
		cl[t].lkey = cmr[t]->lkey;
		for (unsigned k = 0; k < TS_CONNS / TS_THREADS; k++) {
			struct uiw_qp_init_attr ca_qp = {0};

			ck_assert_int_eq(uiw_create_cq(cctx, 8, NULL, NULL, &cl[t].cq[k]), 0);
			ca_qp.send_cq = ca_qp.recv_cq = cl[t].cq[k];
			ca_qp.cap.max_send_wr = 4;
			ca_qp.cap.max_recv_wr = 1;
			ca_qp.cap.max_send_sge = 1;
			ca_qp.cap.max_recv_sge = 1;
			ck_assert_int_eq(uiw_create_qp(cpd, &ca_qp, &cl[t].qp[k]), 0);
		}
	}
	for (unsigned i = 0; i < TS_CONNS; i++)
		cqp[i] = cl[i / (TS_CONNS / TS_THREADS)].qp[i % (TS_CONNS / TS_THREADS)];
	te_connect_all(sctx, cctx, TS_CONNS, sqp, cqp, &lid, sid, cid);
	churn.pd = spd;
	ck_assert_int_eq(pthread_create(&cth, NULL, ts_churn_main, &churn), 0);
	for (unsigned t = 0; t < TS_THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, ts_client_main, &cl[t]), 0);
	end = ms_now() + 6 * TV_WAIT_MS;
	while (got < TS_CONNS * TS_MSGS && ms_now() < end) {
		struct uiw_wc wc;
		unsigned conn, seq;

		if (uiw_poll_cq(scq, 1, &wc) != 1) {
			usleep(50);
			continue;
		}
		ck_assert_msg(wc.status == UIW_WC_SUCCESS, "server wc status %d", (int)wc.status);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, TS_LEN);
		ck_assert_uint_lt(wc.wr_id, TS_RECVS);
		{
			const uint8_t *p = rbuf + wc.wr_id * TS_LEN;
			struct uiw_sge sg = {(uintptr_t)p, TS_LEN, smr->lkey};
			struct uiw_recv_wr rw = {.wr_id = wc.wr_id, .sg_list = &sg, .num_sge = 1};

			memcpy(&conn, p, 4);
			memcpy(&seq, p + 4, 4);
			ck_assert_uint_lt(conn, TS_CONNS);
			ck_assert_msg(seq == next_seq[conn], "connection %u: message %u, want %u", conn,
				      seq, next_seq[conn]);
			for (unsigned i = 8; i < TS_LEN; i++)
				if (p[i] != ts_byte(conn, seq, i))
					ck_abort_msg("connection %u message %u: octet %u", conn, seq, i);
			next_seq[conn]++;
			got++;
			ck_assert_int_eq(uiw_post_srq_recv(srq, &rw, NULL), 0);
			__atomic_add_fetch(&credits, 1, __ATOMIC_ACQ_REL);
		}
	}
	for (unsigned t = 0; t < TS_THREADS; t++)
		pthread_join(th[t], NULL);
	__atomic_store_n(&churn.stop, 1, __ATOMIC_RELEASE);
	pthread_join(cth, NULL);
	ck_assert_uint_eq(got, TS_CONNS * TS_MSGS);
	for (unsigned t = 0; t < TS_THREADS; t++)
		ck_assert_msg(!cl[t].failed, "client thread %u", t);
	ck_assert_uint_eq(churn.failed, 0);
	ck_assert_uint_gt(churn.rounds, 0);
	te_disconnect_all(sctx, cctx, TS_CONNS, sqp, cqp, lid, sid, cid);
	for (unsigned t = 0; t < TS_THREADS; t++) {
		for (unsigned k = 0; k < TS_CONNS / TS_THREADS; k++)
			ck_assert_int_eq(uiw_destroy_cq(cl[t].cq[k]), 0);
		ck_assert_int_eq(uiw_dereg_mr(cmr[t]), 0);
		free(cl[t].buf);
	}
	ck_assert_int_eq(uiw_dereg_mr(smr), 0);
	ck_assert_int_eq(uiw_destroy_srq(srq), 0);
	ck_assert_int_eq(uiw_destroy_cq(scq), 0);
	te_close_pair(spd, cpd, sctx, cctx);
	free(rbuf);
}
END_TEST

/* an RFC 7306 WR from @s: atomics on the peer's word at @raddr (result into
 * @res), immediates with @imm; returns uiw_post_send()'s answer */
static int post_ext(struct tv_side *s, enum uiw_wr_opcode op, uint64_t wr_id, void *res, uint32_t len,
		    uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint32_t imm)
{
	struct uiw_sge sge = {(uintptr_t)res, len, s->mr->lkey};
	struct uiw_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = op,
		.send_flags = UIW_SEND_SIGNALED,
	};
	struct uiw_send_wr *bad = NULL;
	int ret;

	if (op == UIW_WR_ATOMIC_CMP_AND_SWP || op == UIW_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	wr.imm_data = imm;
	ret = uiw_post_send(s->qp, &wr, &bad);
	ck_assert_ptr_eq(bad, ret ? &wr : NULL);
	return ret;
}

/*
 * RFC 7306 over real sockets, for each way the two sides may have set
 * UIW_QP_EXT_RFC7306 (_i bit 0: server, bit 1: client):
 *  - both: FetchAdd and CmpSwap return the old value and update the
 *    server's word; Write with Immediate lands before its receive
 *    completes (RECV_RDMA_WITH_IMM, the Write's length, the immediate);
 *    Send with Immediate completes a receive with no data;
 *  - the client without: every extension opcode is refused by
 *    uiw_post_send() with -EOPNOTSUPP, and the connection carries on;
 *  - the client with, the server without (as a peer that does not
 *    implement RFC 7306): the server answers the Atomic Request with RFC
 *    7306 §1.1's TERMINATE (RDMAP, Remote Operation, Unexpected OpCode),
 *    its memory untouched, and the client's WR fails with that cause.
 */
START_TEST(test_verbs_rfc7306)
{
	int srv_ext = _i & 1, cli_ext = !!(_i & 2);
	struct tv_side srv, cli;
	struct uiw_cm_id *lid;
	struct uiw_cm_event ev;
	struct uiw_qp_attr qa;
	struct uiw_wc wc;
	uint64_t *word, *res;

	tv_ext = srv_ext ? UIW_QP_EXT_RFC7306 : 0;
	side_init(&srv);
	tv_ext = cli_ext ? UIW_QP_EXT_RFC7306 : 0;
	side_init(&cli);
	tv_ext = 0;
	ck_assert_int_eq(uiw_query_qp(cli.qp, &qa), 0);
	ck_assert_uint_eq(qa.ext, cli_ext ? UIW_QP_EXT_RFC7306 : 0);
	connect_pair(&srv, &cli, &lid);
	word = (uint64_t *)(void *)(srv.buf + 4096);
	res = (uint64_t *)(void *)(cli.buf + 8192);
	*word = 40;
	ctx_sync(&srv);
	if (!cli_ext) {
		static const enum uiw_wr_opcode ops[] = {UIW_WR_ATOMIC_FETCH_AND_ADD, UIW_WR_ATOMIC_CMP_AND_SWP,
							 UIW_WR_RDMA_WRITE_WITH_IMM, UIW_WR_SEND_WITH_IMM};

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			ck_assert_int_eq(post_ext(&cli, ops[i], i, res, ops[i] == UIW_WR_SEND_WITH_IMM ? 0 : 8,
						  (uintptr_t)word, srv.mr->rkey, 2, 0, 0),
					 -EOPNOTSUPP);
		/* nothing went out: an ordinary Read still sees the word as it was */
		post_send(&cli, UIW_WR_RDMA_READ, 9, res, 8, (uintptr_t)word, srv.mr->rkey);
		want_wc(cli.cq, &wc);
		ck_assert_uint_eq(wc.wr_id, 9);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_uint_eq(*res, 40);
		disconnect_pair(&srv, &cli);
	} else if (!srv_ext) {
		ck_assert_int_eq(post_ext(&cli, UIW_WR_ATOMIC_FETCH_AND_ADD, 1, res, 8, (uintptr_t)word,
					  srv.mr->rkey, 2, 0, 0),
				 0);
		want_wc(cli.cq, &wc);
		ck_assert_uint_eq(wc.wr_id, 1);
		ck_assert_int_eq(wc.status, UIW_WC_REM_OP_ERR);
		ck_assert_int_eq(wc.opcode, UIW_WC_FETCH_ADD);
		ck_assert_uint_ne(wc.wc_flags & UIW_WC_TERM, 0);
		ck_assert_uint_eq(wc.term_layer, 0);
		ck_assert_uint_eq(wc.term_etype, 2);
		ck_assert_uint_eq(wc.term_ecode, 6);
		want_event(cli.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
		ck_assert_uint_eq(ev.term_flags & UIW_CM_TERM_RECEIVED, UIW_CM_TERM_RECEIVED);
		want_event(srv.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
		ck_assert_uint_eq(ev.term_flags & UIW_CM_TERM_SENT, UIW_CM_TERM_SENT);
		ck_assert_uint_eq(ev.term_ecode, 6);
		ctx_sync(&srv);
		ck_assert_uint_eq(*word, 40);
	} else {
		uint8_t *dst = srv.buf + 65536, *src = cli.buf + 65536;

		ck_assert_int_eq(post_ext(&cli, UIW_WR_ATOMIC_FETCH_AND_ADD, 1, res, 8, (uintptr_t)word,
					  srv.mr->rkey, 2, 0, 0),
				 0);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_FETCH_ADD);
		ck_assert_uint_eq(wc.byte_len, 8);
		ck_assert_uint_eq(res[0], 40);
		ck_assert_int_eq(post_ext(&cli, UIW_WR_ATOMIC_CMP_AND_SWP, 2, res + 1, 8, (uintptr_t)word,
					  srv.mr->rkey, 42, 7, 0),
				 0);
		ck_assert_int_eq(post_ext(&cli, UIW_WR_ATOMIC_CMP_AND_SWP, 3, res + 2, 8, (uintptr_t)word,
					  srv.mr->rkey, 42, 9, 0),
				 0);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.opcode, UIW_WC_COMP_SWAP);
		want_wc(cli.cq, &wc);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_uint_eq(res[1], 42); /* matched: now 7 */
		ck_assert_uint_eq(res[2], 7);  /* did not */
		ctx_sync(&srv);
		ck_assert_uint_eq(*word, 7);
		/* Write with Immediate, then Send with Immediate (solicited) */
		fill(src, 100000, 7306);
		post_recv(&srv, 50, srv.buf + TV_BUF, 64);
		post_recv(&srv, 51, srv.buf + TV_BUF + 64, 64);
		ck_assert_int_eq(post_ext(&cli, UIW_WR_RDMA_WRITE_WITH_IMM, 4, src, 100000, (uintptr_t)dst,
					  srv.mr->rkey, 0, 0, htonl(0xC0FFEE01)),
				 0);
		ck_assert_int_eq(post_ext(&cli, UIW_WR_SEND_WITH_IMM, 5, NULL, 0, 0, 0, 0, 0, htonl(0xC0FFEE02)),
				 0);
		want_wc(srv.cq, &wc);
		ck_assert_uint_eq(wc.wr_id, 50);
		ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV_RDMA_WITH_IMM);
		ck_assert_uint_eq(wc.byte_len, 100000);
		ck_assert_uint_eq(wc.wc_flags & UIW_WC_WITH_IMM, UIW_WC_WITH_IMM);
		ck_assert_uint_eq(ntohl(wc.imm_data), 0xC0FFEE01);
		ctx_sync(&srv);
		ck_assert_mem_eq(dst, src, 100000);
		want_wc(srv.cq, &wc);
		ck_assert_uint_eq(wc.wr_id, 51);
		ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, 0);
		ck_assert_uint_eq(ntohl(wc.imm_data), 0xC0FFEE02);
		for (int k = 0; k < 2; k++) {
			want_wc(cli.cq, &wc);
			ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
			ck_assert_int_eq(wc.opcode, k ? UIW_WC_SEND : UIW_WC_RDMA_WRITE);
		}
		disconnect_pair(&srv, &cli);
	}
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	side_fini(&cli);
	side_fini(&srv);
}
END_TEST

/*
 * A connection accepted by one engine and handed to another (engine_threads
 * > 1) whose peer resets it before sending any MPA octet: the other engine
 * may take it from its inbox, find the socket reset and free it at once, so
 * the accepting engine must not touch it after the hand-over (it read
 * c->eng after the inbox lock was released: a use-after-free any peer could
 * trigger, which ThreadSanitizer and ASan report here).  TR_ROUNDS raw
 * sockets connect and reset (SO_LINGER 0) as fast as they can; no CM event
 * may come of them, and a real connection afterwards is accepted and works.
 */
#define TR_ROUNDS 1000

START_TEST(test_verbs_engines_reset)
{
	struct uiw_context_attr sa = {.engine_threads = 4};
	struct uiw_context *sctx, *cctx;
	struct uiw_pd *spd, *cpd;
	struct uiw_cq *scq, *ccq;
	struct uiw_qp *sqp, *cqp;
	struct uiw_cm_id *lid, *sid, *cid;
	struct uiw_qp_init_attr qa = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct uiw_cm_event ev;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct linger lg = {1, 0};
	uint16_t port;
	unsigned done = 0;
	uint64_t end = ms_now() + 3 * TV_WAIT_MS;

	ck_assert_int_eq(uiw_open_context(&sctx, &sa), 0);
	ck_assert_int_eq(uiw_create_id(sctx, NULL, &lid), 0);
	ck_assert_int_eq(uiw_listen(lid, "127.0.0.1", 0, 256), 0);
	port = uiw_get_port(lid);
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while (done < TR_ROUNDS && ms_now() < end) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		/* the reset at different moments: before the accept, right
		 * after it, once the other engine has the connection */
		if (done % 4 == 1)
			sched_yield();
		else if (done % 4 == 2)
			usleep(100);
		else if (done % 4 == 3)
			usleep(1000);
		close(fd); /* RST */
		done++;
	}
	ck_assert_uint_eq(done, TR_ROUNDS);
	ck_assert_int_eq(uiw_get_cm_event(sctx, &ev, 100), -ETIMEDOUT);
	/* the listener still serves */
	ck_assert_int_eq(uiw_open_context(&cctx, NULL), 0);
	ck_assert_int_eq(uiw_alloc_pd(sctx, &spd), 0);
	ck_assert_int_eq(uiw_alloc_pd(cctx, &cpd), 0);
	ck_assert_int_eq(uiw_create_cq(sctx, 4, NULL, NULL, &scq), 0);
	ck_assert_int_eq(uiw_create_cq(cctx, 4, NULL, NULL, &ccq), 0);
	qa.send_cq = qa.recv_cq = scq;
	ck_assert_int_eq(uiw_create_qp(spd, &qa, &sqp), 0);
	qa.send_cq = qa.recv_cq = ccq;
	ck_assert_int_eq(uiw_create_qp(cpd, &qa, &cqp), 0);
	ck_assert_int_eq(uiw_create_id(cctx, NULL, &cid), 0);
	ck_assert_int_eq(uiw_connect(cid, "127.0.0.1", port, cqp, NULL), 0);
	want_event(sctx, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	sid = ev.id;
	ck_assert_int_eq(uiw_accept(sid, sqp, NULL), 0);
	want_event(sctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	want_event(cctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_int_eq(uiw_disconnect(cid), 0);
	want_event(cctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	want_event(sctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	ck_assert_int_eq(uiw_destroy_id(cid), 0);
	ck_assert_int_eq(uiw_destroy_id(sid), 0);
	ck_assert_int_eq(uiw_destroy_id(lid), 0);
	ck_assert_int_eq(uiw_destroy_qp(sqp), 0);
	ck_assert_int_eq(uiw_destroy_qp(cqp), 0);
	ck_assert_int_eq(uiw_destroy_cq(scq), 0);
	ck_assert_int_eq(uiw_destroy_cq(ccq), 0);
	ck_assert_int_eq(uiw_dealloc_pd(spd), 0);
	ck_assert_int_eq(uiw_dealloc_pd(cpd), 0);
	ck_assert_int_eq(uiw_close_context(cctx), 0);
	ck_assert_int_eq(uiw_close_context(sctx), 0);
}
END_TEST

Suite *verbs_suite(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_verbs_api_errors);
	tcase_add_loop_test(tc, test_verbs_data, 0, (int)(sizeof(tv_attrs) / sizeof(tv_attrs[0])));
	tcase_add_test(tc, test_verbs_handshake_timeout);
	tcase_add_test(tc, test_verbs_reject);
	tcase_add_test(tc, test_verbs_reject_destroy_child);
	tcase_add_test(tc, test_verbs_unreachable);
	tcase_add_test(tc, test_verbs_multi_address);
	tcase_add_test(tc, test_verbs_disconnect_flush);
	tcase_add_test(tc, test_verbs_remote_access_error);
	tcase_add_test(tc, test_verbs_cq_full);
	tcase_add_test(tc, test_verbs_destroy_connected);
	tcase_add_test(tc, test_verbs_fork);
	tcase_add_test(tc, test_verbs_engines);
	tcase_add_test(tc, test_verbs_engines_shared);
	tcase_add_test(tc, test_verbs_engines_reset);
	tcase_add_loop_test(tc, test_verbs_rfc7306, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
