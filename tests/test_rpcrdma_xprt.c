/* SPDX-License-Identifier: MIT */
/*
 * The RPC-over-RDMA transport (rpcrdma/rpcrdma_xprt.h): a Requester and a
 * Responder, uiwarp to uiwarp over real TCP sockets on 127.0.0.1 with
 * kernel-chosen ports, driven from one thread (polled contexts) unless a
 * test says otherwise.  Hostile peers are plain uiw QPs that Send raw
 * transport headers.  Every wait is bounded; no sleeps synchronise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpcrdma.h"
#include "rpcrdma_xprt.h"
#include "tests.h"
#include "uiw_verbs.h"

#define W_MS	10000
#define MAXHELD 64

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t p4(uint32_t n)
{
	return (n + 3) & ~3u;
}

/* ---- a Responder whose behaviour each test sets ---- */

struct srv;
typedef void (*handler_fn)(struct srv *v, struct rpcrdma_svc_req *req);

struct srv {
	struct uiw_context *ctx;
	struct rpcrdma_svc *s;
	handler_fn handler; /* NULL: hold the request */
	struct rpcrdma_svc_req *held[MAXHELD];
	unsigned nheld, maxheld, ncalls, ups, downs;
	/* what the next call must be (NULL: anything) */
	const uint8_t *expect;
	uint32_t expect_len;
	unsigned ok, bad;
	/* reply script */
	const uint8_t *rmsg;
	uint32_t rlen;
	const struct rpcrdma_item *ritems;
	uint32_t nritems;
	int last_ret;
	struct rpcrdma_svc_req last; /* copy of the last request's view */
	struct rpcrdma_svc_conn *conn;
};

struct cli {
	struct uiw_context *ctx;
	struct rpcrdma_clnt *c;
};

/* what pump() turns */
static struct rpcrdma_clnt *g_clnt;
static struct rpcrdma_svc *g_svc;
static struct uiw_context *g_raw[2];

static void pump(void)
{
	if (g_clnt)
		ck_assert_int_ge(rpcrdma_clnt_poll(g_clnt, 0), 0);
	if (g_svc)
		ck_assert_int_ge(rpcrdma_svc_poll(g_svc, 0), 0);
	for (int i = 0; i < 2; i++) {
		if (g_raw[i]) {
			int r = uiw_progress(g_raw[i], 0);

			ck_assert(r == 0 || r == -EINVAL);
		}
	}
}

#define WAIT(cond)                                                         \
	do {                                                               \
		uint64_t end_ = ms_now() + W_MS;                           \
		while (!(cond) && ms_now() < end_)                         \
			pump();                                            \
		ck_assert_msg((cond), "timed out waiting for: %s", #cond); \
	} while (0)

static void on_call(struct rpcrdma_svc_req *req, void *arg)
{
	struct srv *v = arg;

	v->ncalls++;
	v->last = *req;
	if (v->expect) {
		if (req->msg_len == v->expect_len && !memcmp(req->msg, v->expect, v->expect_len))
			v->ok++;
		else
			v->bad++;
	}
	{
		handler_fn h = __atomic_load_n(&v->handler, __ATOMIC_ACQUIRE);

		if (h) {
			h(v, req);
			return;
		}
	}
	ck_assert_uint_lt(v->nheld, MAXHELD);
	v->held[v->nheld++] = req;
	if (v->nheld > v->maxheld)
		v->maxheld = v->nheld;
}

static void on_conn(struct rpcrdma_svc_conn *conn, int up, void *arg)
{
	struct srv *v = arg;

	if (up) {
		v->ups++;
		v->conn = conn;
	} else {
		v->downs++;
	}
}

/* echo the call message back as the reply */
static void h_echo(struct srv *v, struct rpcrdma_svc_req *req)
{
	v->last_ret = rpcrdma_svc_reply(req, req->msg, req->msg_len, NULL, 0);
	ck_assert_int_eq(v->last_ret, 0);
}

/* reply with the script's message (its XID patched) and items */
static void h_script(struct srv *v, struct rpcrdma_svc_req *req)
{
	uint8_t *m = malloc(v->rlen);

	ck_assert_ptr_nonnull(m);
	memcpy(m, v->rmsg, v->rlen);
	put32(m, req->xid);
	v->last_ret = rpcrdma_svc_reply(req, m, v->rlen, v->ritems, v->nritems);
	free(m); /* the transport copied it */
}

static const struct rpcrdma_svc_ops srv_ops = {on_call, on_conn};

static struct uiw_context *open_ctx(enum uiw_ctx_mode mode)
{
	struct uiw_context_attr a = {0};
	struct uiw_context *ctx;

	a.mode = mode;
	ck_assert_int_eq(uiw_open_context(&ctx, &a), 0);
	return ctx;
}

static void srv_up(struct srv *v, enum uiw_ctx_mode mode, const struct rpcrdma_xprt_opts *o)
{
	memset(v, 0, sizeof(*v));
	v->handler = h_echo;
	v->ctx = open_ctx(mode);
	ck_assert_int_eq(rpcrdma_svc_create(v->ctx, "127.0.0.1", 0, o, &srv_ops, v, &v->s), 0);
	ck_assert_uint_ne(rpcrdma_svc_port(v->s), 0);
	g_svc = v->s;
}

static void cli_up(struct cli *c, struct srv *v, enum uiw_ctx_mode mode,
		   const struct rpcrdma_xprt_opts *o, uint16_t port)
{
	unsigned ups = v ? v->ups : 0;

	c->ctx = open_ctx(mode);
	ck_assert_int_eq(rpcrdma_clnt_create(c->ctx, "127.0.0.1", port, o, &c->c), 0);
	g_clnt = c->c;
	if (!v)
		return;
	WAIT(rpcrdma_clnt_state(c->c) == RPCRDMA_CLNT_UP && v->ups == ups + 1);
}

static void cli_down(struct cli *c)
{
	rpcrdma_clnt_destroy(c->c);
	if (g_clnt == c->c)
		g_clnt = NULL;
	/* every object of the context is gone, or this fails */
	ck_assert_int_eq(uiw_close_context(c->ctx), 0);
}

static void srv_down(struct srv *v)
{
	for (unsigned i = 0; i < v->nheld; i++)
		rpcrdma_svc_drop(v->held[i]);
	v->nheld = 0;
	ck_assert_int_eq(rpcrdma_svc_destroy(v->s), 0);
	if (g_svc == v->s)
		g_svc = NULL;
	ck_assert_int_eq(uiw_close_context(v->ctx), 0);
}

static void done_cb(struct rpcrdma_call *call)
{
	(*(unsigned *)call->arg)++;
}

/* an RPC-like message: the XID, then seeded bytes */
static uint8_t *mk_msg(uint64_t *rng, uint32_t len, uint32_t xid)
{
	uint8_t *m = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(m);
	tu_rand_fill(rng, m, len);
	if (len >= 4)
		put32(m, xid);
	return m;
}

static void call_init(struct rpcrdma_call *call, const void *msg, uint32_t len, void *reply,
		      uint32_t cap, unsigned *done)
{
	memset(call, 0, sizeof(*call));
	call->msg = msg;
	call->msg_len = len;
	call->reply = reply;
	call->reply_cap = cap;
	call->done = done_cb;
	call->arg = done;
}

/* ---- Short call and reply, negotiation with RFC 8797 data ---- */

START_TEST(test_xprt_short)
{
	uint64_t rng = tu_seed() ^ 0x51;
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	struct rpcrdma_call call;
	uint8_t reply[4096];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_int_eq(ci.connected, 1);
	ck_assert_uint_eq(ci.inline_send, 4096);
	ck_assert_uint_eq(ci.inline_recv, 4096);
	ck_assert_int_eq(ci.peer_pd, 1);
	ck_assert_int_eq(ci.remote_inv, 1);
	ck_assert_uint_eq(ci.credits, 1); /* RFC 8166 §3.3.3 until the first reply */
	ck_assert_uint_eq(ci.peer.recv_size, 4096);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.inline_send, 4096);
	ck_assert_int_eq(si.peer_pd, 1);

	for (unsigned i = 0; i < 20; i++) {
		uint32_t len = 4 + 4 * (uint32_t)(tu_rand(&rng) % 900);
		uint8_t *m = mk_msg(&rng, len, 0x1000 + i);

		v.expect = m;
		v.expect_len = len;
		/* the largest reply buffer that needs no Reply chunk: 4096
		 * less the 28-octet header (one more would offer one) */
		call_init(&call, m, len, reply, 4096 - 28, &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == i + 1);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.xid, 0x1000 + i);
		ck_assert_uint_eq(call.reply_len, len);
		ck_assert_mem_eq(reply, m, len);
		ck_assert_uint_eq(call.form, RPCRDMA_FORM_SHORT);
		free(m);
	}
	ck_assert_uint_eq(v.ok, 20);
	ck_assert_uint_eq(v.bad, 0);
	{
		uint8_t m[8] = {0, 0, 0x10, 0x99};

		v.expect = NULL;
		call_init(&call, m, 8, reply, 4096 - 27, &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == 21);
		ck_assert_int_eq(call.status, 0);
		/* the Reply chunk's STag is invalidated by the reply */
		ck_assert_uint_eq(call.form, RPCRDMA_FORM_SHORT | RPCRDMA_FORM_REPLY_OFFER |
						     RPCRDMA_FORM_INVALIDATED);
	}
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.calls, 21);
	ck_assert_uint_eq(ci.replies, 21);
	ck_assert_uint_eq(ci.short_msgs, 21);
	ck_assert_uint_eq(ci.credits, 32);
	ck_assert_uint_eq(ci.mr_regs, 1);
	ck_assert_uint_eq(ci.discards, 0);
	ck_assert_uint_eq(ci.inv_recv, 1);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.calls, 21);
	ck_assert_uint_eq(si.replies, 21);
	ck_assert_uint_eq(si.short_msgs, 21);
	ck_assert_uint_eq(si.inv_sent, 1); /* no chunks: plain Send */
	cli_down(&c);
	WAIT(v.downs == 1);
	srv_down(&v);
}
END_TEST

/* ---- argument validation ---- */

START_TEST(test_xprt_call_args)
{
	struct srv v;
	struct cli c;
	struct rpcrdma_call call;
	uint8_t msg[64] = {0}, item[8], reply[128];
	struct rpcrdma_item it[2];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	call_init(&call, msg, 3, reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL); /* no room for the XID */
	call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
	call.done = NULL;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
	it[0] = (struct rpcrdma_item){6, item, sizeof(item)}; /* not a multiple of 4 */
	call.args = it;
	call.nargs = 1;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	it[0].position = 0; /* before the XID */
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	it[0].position = 68; /* past the end of the reduced message */
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	it[0].position = 64;				       /* at the end: fine */
	it[1] = (struct rpcrdma_item){40, item, sizeof(item)}; /* going back */
	call.nargs = 2;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	call.nargs = RPCRDMA_XPRT_MAX_ARGS + 1;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -EINVAL);
	call.nargs = 1;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 1);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.reply_len, 64 + 8); /* the item came back inline */
	ck_assert_mem_eq(reply + 64, item, 8);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- Chunked call: Read chunks at several positions ---- */

START_TEST(test_xprt_read_chunks)
{
	uint64_t rng = tu_seed() ^ 0x52;
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	uint64_t chunked = 0;
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = h_script; /* a 16-octet reply: the call's first 16 */
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	for (unsigned round = 0; round < 6; round++) {
		/* unreduced: H0 A pad H1 B pad H2 C pad H3; B small (inline) */
		uint32_t hl[4] = {40, 16, 8, 12};
		uint32_t il[3] = {1024 + (uint32_t)(tu_rand(&rng) % 6000),
				  1 + (uint32_t)(tu_rand(&rng) % 1000),
				  1024 + (uint32_t)(tu_rand(&rng) % 9000)};
		uint32_t ulen = hl[0] + hl[1] + hl[2] + hl[3] + p4(il[0]) + p4(il[1]) + p4(il[2]);
		uint8_t *u = calloc(1, ulen), *red = malloc(ulen), *items[3];
		struct rpcrdma_item it[3];
		struct rpcrdma_call call;
		uint8_t reply[256];
		uint32_t uo = 0, ro = 0;

		ck_assert_ptr_nonnull(u);
		for (int i = 0; i < 4; i++) {
			tu_rand_fill(&rng, u + uo, hl[i]);
			memcpy(red + ro, u + uo, hl[i]);
			uo += hl[i];
			ro += hl[i];
			if (i == 3)
				break;
			items[i] = malloc(il[i]);
			tu_rand_fill(&rng, items[i], il[i]);
			memcpy(u + uo, items[i], il[i]);
			it[i].position = uo;
			it[i].buf = items[i];
			it[i].len = il[i];
			uo += p4(il[i]);
		}
		put32(u, 0x2000 + round);
		put32(red, 0x2000 + round);
		v.expect = u;
		v.expect_len = ulen;
		v.rmsg = u;
		v.rlen = 16;
		call_init(&call, red, ro, reply, sizeof(reply), &done);
		call.args = it;
		call.nargs = 3;
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == round + 1);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.form, RPCRDMA_FORM_CHUNKED | RPCRDMA_FORM_INVALIDATED);
		ck_assert_uint_eq(call.reply_len, 16);
		ck_assert_mem_eq(reply, u, 16);
		ck_assert_uint_eq(v.ok, round + 1);
		chunked += il[0] + il[2];
		for (int i = 0; i < 3; i++)
			free(items[i]);
		free(u);
		free(red);
	}
	ck_assert_uint_eq(v.bad, 0);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.chunked_msgs, 6);
	ck_assert_uint_eq(ci.read_bytes, chunked);
	ck_assert_uint_eq(ci.mr_regs, 12);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.read_bytes, chunked);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- Write chunks in the reply; inline fallback for the others ---- */

START_TEST(test_xprt_write_chunks)
{
	uint64_t rng = tu_seed() ^ 0x53;
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = h_script;
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	for (unsigned round = 0; round < 4; round++) {
		/* unreduced reply: H0 I0 H1 I1 H2 I2 H3 I3 H4; the call
		 * provides Write chunks for I0, I1 (empty) and I2; I3 has none */
		uint32_t il[4] = {
			1 + (uint32_t)(tu_rand(&rng) % 10000), 1 + (uint32_t)(tu_rand(&rng) % 300),
			1 + (uint32_t)(tu_rand(&rng) % 6000), 1 + (uint32_t)(tu_rand(&rng) % 40)};
		uint32_t hl[5] = {16, 8, 8, 8, 8};
		uint8_t *items[4], red[48], expect[2048], *wb0 = calloc(1, 10000),
							  *wb2 = calloc(1, 6000);
		struct rpcrdma_item it[4];
		struct rpcrdma_rbuf rb[3] = {{wb0, 10000}, {NULL, 0}, {wb2, 6000}};
		struct rpcrdma_call call;
		uint8_t msg[32], reply[2048];
		uint32_t uo = 0, ro = 0, eo = 0;

		for (int i = 0; i < 5; i++) {
			tu_rand_fill(&rng, red + ro, hl[i]);
			memcpy(expect + eo, red + ro, hl[i]);
			ro += hl[i];
			eo += hl[i];
			uo += hl[i];
			if (i == 4)
				break;
			items[i] = malloc(il[i]);
			tu_rand_fill(&rng, items[i], il[i]);
			it[i] = (struct rpcrdma_item){uo, items[i], il[i]};
			uo += p4(il[i]);
			if (i == 1 || i == 3) { /* inline at the Requester */
				memset(expect + eo, 0, p4(il[i]));
				memcpy(expect + eo, items[i], il[i]);
				eo += p4(il[i]);
			}
		}
		put32(red, 0x3000 + round);
		put32(expect, 0x3000 + round);
		tu_rand_fill(&rng, msg, sizeof(msg));
		put32(msg, 0x3000 + round);
		v.rmsg = red;
		v.rlen = ro;
		v.ritems = it;
		v.nritems = 4;
		call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
		call.results = rb;
		call.nresults = 3;
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == round + 1);
		ck_assert_int_eq(v.last_ret, 0);
		ck_assert_uint_eq(v.last.nwrite, 3);
		ck_assert_uint_eq(v.last.write_cap[0], 10000);
		ck_assert_uint_eq(v.last.write_cap[1], 0);
		ck_assert_uint_eq(v.last.write_cap[2], 6000);
		ck_assert_int_eq(v.last.reply_chunk, 0);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.result_len[0], il[0]);
		ck_assert_uint_eq(call.result_len[1], 0);
		ck_assert_uint_eq(call.result_len[2], il[2]);
		ck_assert_mem_eq(wb0, items[0], il[0]);
		ck_assert_mem_eq(wb2, items[2], il[2]);
		ck_assert_uint_eq(call.reply_len, eo);
		ck_assert_mem_eq(reply, expect, eo);
		ck_assert(call.form & RPCRDMA_FORM_INVALIDATED); /* both advertise R */
		for (int i = 0; i < 4; i++)
			free(items[i]);
		free(wb0);
		free(wb2);
	}
	rpcrdma_clnt_info(c.c, &ci);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(ci.write_bytes, si.write_bytes);
	ck_assert_uint_eq(si.chunked_msgs, 4);
	ck_assert_uint_eq(si.inv_sent, 4);
	ck_assert_uint_eq(ci.inv_recv, 4);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- Long call: RDMA_NOMSG with a Position Zero Read chunk ---- */

START_TEST(test_xprt_long_call)
{
	uint64_t rng = tu_seed() ^ 0x54;
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	unsigned done = 0;
	uint32_t len = 20000;
	uint8_t *m = mk_msg(&rng, len, 0x4000), reply[64];
	struct rpcrdma_call call;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = h_script;
	v.rmsg = m;
	v.rlen = 16;
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	/* the whole call in the Position Zero Read chunk */
	v.expect = m;
	v.expect_len = len;
	call_init(&call, m, len, reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 1);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form, RPCRDMA_FORM_LONG | RPCRDMA_FORM_INVALIDATED);
	ck_assert_uint_eq(v.ok, 1);
	ck_assert_uint_eq(call.reply_len, 16);
	ck_assert_mem_eq(reply, m, 16);

	/* a Long call with two more Read chunks: reduced 20000 octets at
	 * position zero, items reinserted at 100 and 8000 (unreduced) */
	{
		uint32_t a = 3001, b = 7, ul = len + p4(a) + p4(b);
		uint8_t *ia = mk_msg(&rng, a, 1), *ib = mk_msg(&rng, b, 2), *u = calloc(1, ul);
		struct rpcrdma_item it[2] = {{100, ia, a}, {8000, ib, b}};

		/* u = m[0..100) A pad m[100..8000-p4(a)) B pad rest */
		memcpy(u, m, 100);
		memcpy(u + 100, ia, a);
		memcpy(u + 100 + p4(a), m + 100, 8000 - p4(a) - 100);
		memcpy(u + 8000, ib, b);
		memcpy(u + 8000 + p4(b), m + 8000 - p4(a), len - (8000 - p4(a)));
		v.expect = u;
		v.expect_len = ul;
		call_init(&call, m, len, reply, sizeof(reply), &done);
		call.args = it;
		call.nargs = 2;
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == 2);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.form, RPCRDMA_FORM_LONG | RPCRDMA_FORM_INVALIDATED);
		ck_assert_uint_eq(v.ok, 2);
		free(ia);
		free(ib);
		free(u);
	}
	ck_assert_uint_eq(v.bad, 0);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.long_msgs, 2);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.read_bytes, 2 * len + 3001 + 7);
	free(m);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- Long reply (Reply chunk); a reply that fits nowhere ---- */

START_TEST(test_xprt_long_reply)
{
	uint64_t rng = tu_seed() ^ 0x55;
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	unsigned done = 0;
	uint32_t rl = 50000;
	uint8_t *r = mk_msg(&rng, rl, 0), *reply = malloc(100000), msg[40];
	struct rpcrdma_call call;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = h_script;
	v.rmsg = r;
	v.rlen = rl;
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	tu_rand_fill(&rng, msg, sizeof(msg));
	put32(msg, 0x5000);
	put32(r, 0x5000);
	call_init(&call, msg, sizeof(msg), reply, 100000, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 1);
	ck_assert_int_eq(v.last.reply_chunk, 1);
	ck_assert_uint_eq(v.last.reply_cap, 100000);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form, RPCRDMA_FORM_SHORT | RPCRDMA_FORM_REPLY_OFFER |
					     RPCRDMA_FORM_LONG_REPLY | RPCRDMA_FORM_INVALIDATED);
	ck_assert_uint_eq(call.reply_len, rl);
	ck_assert_mem_eq(reply, r, rl);

	/* a Reply chunk provided but the reply fits inline (§4.3.3: MAY) */
	v.rlen = 1000;
	call_init(&call, msg, sizeof(msg), reply, 100000, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 2);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form & (RPCRDMA_FORM_REPLY_OFFER | RPCRDMA_FORM_LONG_REPLY),
			  RPCRDMA_FORM_REPLY_OFFER);
	ck_assert_uint_eq(call.reply_len, 1000);
	ck_assert_mem_eq(reply, r, 1000);

	/* no Reply chunk (the buffer fits inline), the reply does not:
	 * ERR_CHUNK (RFC 8166 §4.5.3) */
	v.rlen = 5000;
	call_init(&call, msg, sizeof(msg), reply, 3000, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 3);
	ck_assert_int_eq(v.last_ret, -EMSGSIZE);
	ck_assert_int_eq(v.last.reply_chunk, 0);
	ck_assert_int_eq(call.status, -EREMOTEIO);
	ck_assert_uint_eq(call.rdma_err, RPCRDMA_ERR_CHUNK);

	/* an inline reply larger than the caller's buffer */
	v.rlen = 200;
	call_init(&call, msg, sizeof(msg), reply, 100, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 4);
	ck_assert_int_eq(call.status, -EMSGSIZE);
	ck_assert_uint_eq(call.reply_len, 200);
	ck_assert_mem_eq(reply, r, 100);

	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.reply_chunk_bytes, rl);
	ck_assert_uint_eq(ci.errors_recv, 1);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.reply_chunk_bytes, rl);
	ck_assert_uint_eq(si.long_msgs, 1);
	ck_assert_uint_eq(si.err_chunk_sent, 1);
	free(r);
	free(reply);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- credits ---- */

static void reply_held(struct srv *v)
{
	unsigned n = v->nheld;

	v->nheld = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rpcrdma_svc_req *q = v->held[i];

		ck_assert_int_eq(rpcrdma_svc_reply(q, q->msg, q->msg_len, NULL, 0), 0);
	}
}

START_TEST(test_xprt_credits)
{
	uint64_t rng = tu_seed() ^ 0x56;
	struct rpcrdma_xprt_opts so = {.credits = 8, .grant = 2};
	struct rpcrdma_xprt_opts co = {.credits = 16};
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	struct rpcrdma_call calls[20];
	uint8_t *msgs[20], replies[20][64];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, &so);
	v.handler = NULL; /* hold */
	cli_up(&c, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
	for (unsigned i = 0; i < 20; i++) {
		msgs[i] = mk_msg(&rng, 64, 0x6000 + i);
		call_init(&calls[i], msgs[i], 64, replies[i], 64, &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[i]), 0);
	}
	/* one credit until the first reply: the Responder sees one call */
	WAIT(v.nheld == 1);
	for (int i = 0; i < 200; i++)
		pump();
	ck_assert_uint_eq(v.nheld, 1);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.outstanding, 1);
	ck_assert_uint_eq(ci.queued, 19);
	reply_held(&v);
	WAIT(done == 1);
	/* then two at a time */
	while (done < 20) {
		unsigned want = 20 - done < 2 ? 20 - done : 2, before = done;

		WAIT(v.nheld == want);
		for (int i = 0; i < 20; i++)
			pump();
		ck_assert_uint_eq(v.nheld, want);
		reply_held(&v);
		WAIT(done == before + want);
	}
	ck_assert_uint_eq(v.maxheld, 2);
	for (unsigned i = 0; i < 20; i++) {
		ck_assert_int_eq(calls[i].status, 0);
		ck_assert_mem_eq(replies[i], msgs[i], 64);
		free(msgs[i]);
	}
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.max_outstanding, 2);
	ck_assert_uint_eq(ci.credits, 2);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.max_outstanding, 2);
	ck_assert_uint_eq(si.calls, 20);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

START_TEST(test_xprt_grant_change)
{
	uint64_t rng = tu_seed() ^ 0x57;
	struct rpcrdma_xprt_opts so = {.credits = 8, .grant = 4};
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci;
	struct rpcrdma_call calls[13];
	uint8_t *msgs[13], replies[13][64];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, &so);
	v.handler = NULL;
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	for (unsigned i = 0; i < 13; i++) {
		msgs[i] = mk_msg(&rng, 64, 0x7000 + i);
		call_init(&calls[i], msgs[i], 64, replies[i], 64, &done);
	}
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[0]), 0);
	WAIT(v.nheld == 1);
	reply_held(&v);
	WAIT(done == 1);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.credits, 4);
	for (unsigned i = 1; i < 13; i++)
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[i]), 0);
	WAIT(v.nheld == 4);
	for (int i = 0; i < 100; i++)
		pump();
	ck_assert_uint_eq(v.nheld, 4);
	/* lower the grant: the four replies carry 2 */
	ck_assert_int_eq(rpcrdma_svc_set_grant(v.s, 0), -EINVAL);
	ck_assert_int_eq(rpcrdma_svc_set_grant(v.s, 9), -EINVAL);
	ck_assert_int_eq(rpcrdma_svc_set_grant(v.s, 2), 0);
	reply_held(&v);
	v.maxheld = 0;
	WAIT(done == 5);
	while (done < 13) {
		unsigned before = done;

		WAIT(v.nheld == (13 - done < 2 ? 13 - done : 2));
		for (int i = 0; i < 50; i++)
			pump();
		ck_assert_uint_le(v.nheld, 2);
		reply_held(&v);
		WAIT(done > before);
	}
	ck_assert_uint_eq(v.maxheld, 2);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.credits, 2);
	ck_assert_uint_eq(ci.max_outstanding, 4);
	/* raise it again: four at once */
	ck_assert_int_eq(rpcrdma_svc_set_grant(v.s, 8), 0);
	for (unsigned i = 0; i < 13; i++) {
		ck_assert_int_eq(calls[i].status, 0);
		ck_assert_mem_eq(replies[i], msgs[i], 64);
	}
	done = 0;
	for (unsigned i = 0; i < 9; i++)
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[i]), 0);
	WAIT(v.nheld == 2);
	reply_held(&v); /* these carry 8 */
	WAIT(v.nheld == 7);
	reply_held(&v);
	WAIT(done == 9);
	for (unsigned i = 0; i < 13; i++)
		free(msgs[i]);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

START_TEST(test_xprt_queue_bound)
{
	struct rpcrdma_xprt_opts co = {.credits = 4, .queue_max = 3};
	struct srv v;
	struct cli c, c2;
	struct rpcrdma_call calls[6];
	uint8_t msg[6][16], reply[6][16];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = NULL;
	cli_up(&c, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
	for (unsigned i = 0; i < 6; i++) {
		memset(msg[i], (int)i, 16);
		put32(msg[i], 0x8000 + i);
		call_init(&calls[i], msg[i], 16, reply[i], 16, &done);
	}
	/* one credit: one sent, three queued, the fifth refused */
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[i]), 0);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &calls[4]), -EAGAIN);
	WAIT(v.nheld == 1);
	reply_held(&v);
	WAIT(v.nheld == 3);
	reply_held(&v);
	WAIT(done == 4);
	cli_down(&c);
	WAIT(v.downs == 1);

	/* RPCRDMA_XO_NO_QUEUE: refused at once beyond the credits */
	co.flags = RPCRDMA_XO_NO_QUEUE;
	cli_up(&c2, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
	ck_assert_int_eq(rpcrdma_clnt_call(c2.c, &calls[0]), 0);
	ck_assert_int_eq(rpcrdma_clnt_call(c2.c, &calls[1]), -EAGAIN);
	WAIT(v.nheld == 1);
	reply_held(&v);
	WAIT(done == 5);
	cli_down(&c2);
	srv_down(&v);
}
END_TEST

/* ---- a raw peer: a plain uiw QP that Sends hand-made headers ---- */

#define RAW_SLOTS 8
#define RAW_SLOT  8192

struct raw {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_cm_id *id, *lid;
	uint8_t *buf;
	struct uiw_mr *mr;
	uint8_t last[RAW_SLOT];
	uint32_t last_len;
	unsigned last_flags;
	uint32_t last_inv;
};

static void raw_post_recv(struct raw *r, unsigned i)
{
	struct uiw_sge sge = {(uintptr_t)(r->buf + (size_t)i * RAW_SLOT), RAW_SLOT, r->mr->lkey};
	struct uiw_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1};

	ck_assert_int_eq(uiw_post_recv(r->qp, &wr, NULL), 0);
}

static void raw_open(struct raw *r, int slot)
{
	struct uiw_qp_init_attr qa = {0};

	memset(r, 0, sizeof(*r));
	r->ctx = open_ctx(UIW_CTX_POLLED);
	g_raw[slot] = r->ctx;
	ck_assert_int_eq(uiw_alloc_pd(r->ctx, &r->pd), 0);
	ck_assert_int_eq(uiw_create_cq(r->ctx, 64, NULL, NULL, &r->cq), 0);
	r->buf = calloc(RAW_SLOTS + 1, RAW_SLOT);
	ck_assert_int_eq(uiw_reg_mr(r->pd, r->buf, (RAW_SLOTS + 1) * RAW_SLOT,
				    UIW_ACCESS_LOCAL_WRITE, &r->mr),
			 0);
	qa.send_cq = qa.recv_cq = r->cq;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = RAW_SLOTS;
	ck_assert_int_eq(uiw_create_qp(r->pd, &qa, &r->qp), 0);
	for (unsigned i = 0; i < RAW_SLOTS; i++)
		raw_post_recv(r, i);
}

static void raw_close(struct raw *r, int slot)
{
	if (r->id)
		ck_assert_int_eq(uiw_destroy_id(r->id), 0);
	if (r->lid)
		ck_assert_int_eq(uiw_destroy_id(r->lid), 0);
	ck_assert_int_eq(uiw_destroy_qp(r->qp), 0);
	ck_assert_int_eq(uiw_dereg_mr(r->mr), 0);
	ck_assert_int_eq(uiw_destroy_cq(r->cq), 0);
	ck_assert_int_eq(uiw_dealloc_pd(r->pd), 0);
	ck_assert_int_eq(uiw_close_context(r->ctx), 0);
	g_raw[slot] = NULL;
	free(r->buf);
}

static void raw_event(struct raw *r, enum uiw_cm_event_type type, struct uiw_cm_event *ev)
{
	uint64_t end = ms_now() + W_MS;
	int ret;

	while ((ret = uiw_get_cm_event(r->ctx, ev, 0)) == -ETIMEDOUT && ms_now() < end)
		pump();
	ck_assert_msg(ret == 0, "no CM event, wanted %s", uiw_event_str(type));
	ck_assert_msg(ev->event == type, "event %s, wanted %s", uiw_event_str(ev->event),
		      uiw_event_str(type));
}

static void raw_send(struct raw *r, const void *msg, uint32_t len)
{
	struct uiw_sge sge = {(uintptr_t)(r->buf + RAW_SLOTS * RAW_SLOT), len, r->mr->lkey};
	struct uiw_send_wr wr = {.wr_id = 1000,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = UIW_WR_SEND,
				 .send_flags = UIW_SEND_SIGNALED};
	struct uiw_wc wc;
	uint64_t end = ms_now() + W_MS;
	int n;

	memcpy(r->buf + RAW_SLOTS * RAW_SLOT, msg, len);
	ck_assert_int_eq(uiw_post_send(r->qp, &wr, NULL), 0);
	/* wait for the Send completion: the buffer is reused next time */
	for (;;) {
		n = uiw_poll_cq(r->cq, 1, &wc);
		ck_assert_int_ge(n, 0);
		if (n && wc.wr_id == 1000)
			break;
		ck_assert_msg(n == 0, "a receive completed while sending");
		ck_assert(ms_now() < end);
		pump();
	}
	ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
}

/* the next message received (into r->last) */
static void raw_recv(struct raw *r)
{
	struct uiw_wc wc;
	uint64_t end = ms_now() + W_MS;
	int n;

	while ((n = uiw_poll_cq(r->cq, 1, &wc)) == 0 && ms_now() < end)
		pump();
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(wc.status, UIW_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, UIW_WC_RECV);
	r->last_len = wc.byte_len;
	r->last_flags = wc.wc_flags;
	r->last_inv = wc.invalidated_rkey;
	memcpy(r->last, r->buf + wc.wr_id * RAW_SLOT, wc.byte_len);
	raw_post_recv(r, (unsigned)wc.wr_id);
}

/* a header with empty chunk lists, then @plen octets of payload */
static uint32_t mk_hdr(uint8_t *b, uint32_t xid, uint32_t vers, uint32_t cred, uint32_t proc,
		       const uint8_t *pl, uint32_t plen)
{
	put32(b, xid);
	put32(b + 4, vers);
	put32(b + 8, cred);
	put32(b + 12, proc);
	put32(b + 16, 0);
	put32(b + 20, 0);
	put32(b + 24, 0);
	if (plen)
		memcpy(b + 28, pl, plen);
	return 28 + plen;
}

START_TEST(test_xprt_responder_errors)
{
	struct srv v;
	struct raw r;
	struct uiw_cm_event ev;
	struct rpcrdma_cm_pd mine;
	struct uiw_conn_param cp = {0};
	struct rpcrdma_xprt_info si;
	struct rpcrdma_xprt_opts so = {.grant = 5, .credits = 8};
	uint8_t pd[8], m[256], pl[16];

	srv_up(&v, UIW_CTX_POLLED, &so);
	raw_open(&r, 0);
	rpcrdma_cm_pd_init(&mine, 4096, 4096, 0);
	ck_assert_int_eq(rpcrdma_cm_encode(pd, sizeof(pd), &mine), 8);
	cp.private_data = pd;
	cp.private_data_len = 8;
	ck_assert_int_eq(uiw_create_id(r.ctx, NULL, &r.id), 0);
	ck_assert_int_eq(uiw_connect(r.id, "127.0.0.1", rpcrdma_svc_port(v.s), r.qp, &cp), 0);
	raw_event(&r, UIW_CM_EVENT_ESTABLISHED, &ev);
	{
		struct rpcrdma_cm_pd peer;

		ck_assert_int_ge(rpcrdma_cm_decode(ev.private_data, ev.private_data_len, &peer), 0);
		ck_assert_uint_eq(peer.send_size, 4096);
		ck_assert_int_eq(peer.remote_inv, 1);
	}
	WAIT(v.ups == 1);

	/* a wrong version: ERR_VERS, 1..1, XID and version echoed (§4.5.1) */
	raw_send(&r, m, mk_hdr(m, 0x11111111, 2, 1, RPCRDMA_MSG, NULL, 0));
	raw_recv(&r);
	ck_assert_uint_eq(r.last_len, RPCRDMA_ERR_VERS_LEN);
	ck_assert_uint_eq(get32(r.last), 0x11111111);
	ck_assert_uint_eq(get32(r.last + 4), 2);
	ck_assert_uint_eq(get32(r.last + 8), 5); /* the grant */
	ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_ERROR);
	ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_VERS);
	ck_assert_uint_eq(get32(r.last + 20), 1);
	ck_assert_uint_eq(get32(r.last + 24), 1);

	/* an XDR boolean that is neither 0 nor 1 in the Read list: ERR_CHUNK */
	mk_hdr(m, 0x22222222, 1, 1, RPCRDMA_MSG, NULL, 0);
	put32(m + 16, 7);
	put32(m + 28, 0x22222222);
	raw_send(&r, m, 32);
	raw_recv(&r);
	ck_assert_uint_ge(r.last_len, RPCRDMA_ERR_CHUNK_LEN);
	ck_assert_uint_eq(get32(r.last), 0x22222222);
	ck_assert_uint_eq(get32(r.last + 4), 1);
	ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_ERROR);
	ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_CHUNK);

	/* RDMA_NOMSG with no chunk at all (§4.5.2): ERR_CHUNK */
	raw_send(&r, m, mk_hdr(m, 0x33333333, 1, 1, RPCRDMA_NOMSG, NULL, 0));
	raw_recv(&r);
	ck_assert_uint_eq(get32(r.last), 0x33333333);
	ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_CHUNK);

	/* a Read chunk whose position is past the Payload stream: ERR_CHUNK */
	put32(m, 0x44444444);
	put32(m + 4, 1);
	put32(m + 8, 1);
	put32(m + 12, RPCRDMA_MSG);
	put32(m + 16, 1);
	put32(m + 20, 4000);   /* position */
	put32(m + 24, 0x1234); /* handle: never used */
	put32(m + 28, 8);
	put32(m + 32, 0);
	put32(m + 36, 0x1000);
	put32(m + 40, 0); /* end of the Read list */
	put32(m + 44, 0);
	put32(m + 48, 0);
	put32(m + 52, 0x44444444);
	put32(m + 56, 0);
	raw_send(&r, m, 60);
	raw_recv(&r);
	ck_assert_uint_eq(get32(r.last), 0x44444444);
	ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_CHUNK);

	/* a 20-octet header: silently discarded (§4.5); RDMA_ERROR sent to
	 * a Responder: discarded too (§4.2.4).  The next reply is the one
	 * of the valid call that follows. */
	mk_hdr(m, 0x55555555, 1, 1, RPCRDMA_MSG, NULL, 0);
	raw_send(&r, m, 20);
	put32(m + 12, RPCRDMA_ERROR);
	put32(m + 16, RPCRDMA_ERR_CHUNK);
	raw_send(&r, m, 20);
	put32(pl, 0x66666666);
	memcpy(pl + 4, "hello, world", 12);
	raw_send(&r, m, mk_hdr(m, 0x66666666, 1, 1, RPCRDMA_MSG, pl, 16));
	raw_recv(&r);
	ck_assert_uint_eq(r.last_len, 28 + 16);
	ck_assert_uint_eq(get32(r.last), 0x66666666);
	ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_MSG);
	ck_assert_mem_eq(r.last + 28, pl, 16);
	ck_assert_uint_eq(r.last_flags & UIW_WC_WITH_INV, 0); /* we cleared R */

	/* a Read chunk at a position that does not match the stream's
	 * padding is fine for the transport: we insert it where told (the
	 * RPC layer answers GARBAGE_ARGS, §4.5.2); an oversized call is
	 * ERR_CHUNK */
	put32(m, 0x77777777);
	put32(m + 4, 1);
	put32(m + 8, 1);
	put32(m + 12, RPCRDMA_MSG);
	put32(m + 16, 1);
	put32(m + 20, 4);
	put32(m + 24, 0x1234);
	put32(m + 28, 0x7fffffff); /* 2 GiB: above max_call */
	put32(m + 32, 0);
	put32(m + 36, 0x1000);
	put32(m + 40, 0);
	put32(m + 44, 0);
	put32(m + 48, 0);
	put32(m + 52, 0x77777777);
	raw_send(&r, m, 56);
	raw_recv(&r);
	ck_assert_uint_eq(get32(r.last), 0x77777777);
	ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_CHUNK);

	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.err_vers_sent, 1);
	ck_assert_uint_eq(si.err_chunk_sent, 4);
	ck_assert_uint_eq(si.errors_sent, 5);
	ck_assert_uint_eq(si.discards, 2);
	ck_assert_uint_eq(si.calls, 1);
	ck_assert_uint_eq(si.replies, 1);
	ck_assert_int_eq(si.peer_pd, 1);
	ck_assert_int_eq(si.remote_inv, 0);
	raw_close(&r, 0);
	WAIT(v.downs == 1);
	srv_down(&v);
}
END_TEST

/* put a read segment (position, handle, length, offset) at @p */
static uint8_t *put_rseg(uint8_t *p, uint32_t pos, uint32_t h, uint32_t len, uint64_t off)
{
	put32(p, 1);
	put32(p + 4, pos);
	put32(p + 8, h);
	put32(p + 12, len);
	put32(p + 16, (uint32_t)(off >> 32));
	put32(p + 20, (uint32_t)off);
	return p + 24;
}

/*
 * A Long Call whose Position Zero Read chunk has three segments and which
 * also has a two-segment Read chunk in the middle: the Responder splits
 * the RDMA Reads of the reduced stream around the inserted chunk.  Then
 * the same with the stream's XID not matching rdma_xid: ERR_CHUNK.
 */
START_TEST(test_xprt_responder_multiseg)
{
	uint64_t rng = tu_seed() ^ 0x5b;
	struct srv v;
	struct raw r;
	struct uiw_cm_event ev;
	struct uiw_conn_param cp = {0};
	struct uiw_mr *emr;
	uint8_t *exp = calloc(1, 65536), u[3004], red[2500], item[501], m[512], *p;
	const uint32_t sl[3] = {700, 1200, 600}, so[3] = {9000, 100, 30000};
	const uint32_t il[2] = {300, 201}, io[2] = {50000, 20000};
	struct rpcrdma_xprt_info si;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = h_script;
	raw_open(&r, 0);
	ck_assert_int_eq(uiw_reg_mr(r.pd, exp, 65536, UIW_ACCESS_REMOTE_READ, &emr), 0);
	ck_assert_int_eq(uiw_create_id(r.ctx, NULL, &r.id), 0);
	ck_assert_int_eq(uiw_connect(r.id, "127.0.0.1", rpcrdma_svc_port(v.s), r.qp, &cp), 0);
	raw_event(&r, UIW_CM_EVENT_ESTABLISHED, &ev);
	WAIT(v.ups == 1);
	for (int round = 0; round < 2; round++) {
		uint32_t xid = 0xf0000000 + (uint32_t)round, o = 0;

		tu_rand_fill(&rng, red, sizeof(red));
		tu_rand_fill(&rng, item, sizeof(item));
		put32(red, round ? xid + 1 : xid); /* round 1: a wrong XID */
		for (int i = 0; i < 3; i++) {
			memcpy(exp + so[i], red + o, sl[i]);
			o += sl[i];
		}
		memcpy(exp + io[0], item, il[0]);
		memcpy(exp + io[1], item + il[0], il[1]);
		memset(u, 0, sizeof(u));
		memcpy(u, red, 1000);
		memcpy(u + 1000, item, sizeof(item));
		memcpy(u + 1504, red + 1000, 1500);
		v.expect = u;
		v.expect_len = sizeof(u);
		v.rmsg = u;
		v.rlen = 16;
		put32(m, xid);
		put32(m + 4, 1);
		put32(m + 8, 1);
		put32(m + 12, RPCRDMA_NOMSG);
		p = m + 16;
		for (int i = 0; i < 3; i++)
			p = put_rseg(p, 0, emr->rkey, sl[i], (uintptr_t)exp + so[i]);
		for (int i = 0; i < 2; i++)
			p = put_rseg(p, 1000, emr->rkey, il[i], (uintptr_t)exp + io[i]);
		put32(p, 0);
		put32(p + 4, 0);
		put32(p + 8, 0);
		raw_send(&r, m, (uint32_t)(p + 12 - m));
		raw_recv(&r);
		ck_assert_uint_eq(get32(r.last), xid);
		if (!round) {
			ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_MSG);
			ck_assert_uint_eq(v.ok, 1);
			ck_assert_uint_eq(r.last_len, 28 + 16);
			ck_assert_mem_eq(r.last + 28, u, 16);
		} else {
			ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_ERROR);
			ck_assert_uint_eq(get32(r.last + 16), RPCRDMA_ERR_CHUNK);
		}
	}
	ck_assert_uint_eq(v.ncalls, 1);
	rpcrdma_svc_info(v.s, &si);
	ck_assert_uint_eq(si.read_bytes, 2 * 3001);
	ck_assert_uint_eq(si.err_chunk_sent, 1);
	ck_assert_int_eq(uiw_dereg_mr(emr), 0);
	raw_close(&r, 0);
	WAIT(v.downs == 1);
	srv_down(&v);
	free(exp);
}
END_TEST

/* a raw Responder accepting the rpcrdma Requester */
static void raw_listen_accept(struct raw *r, const void *pd, uint16_t pdlen, struct cli *c,
			      int first)
{
	struct uiw_cm_event ev;
	struct uiw_conn_param cp = {0};

	raw_event(r, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	if (first) {
		struct rpcrdma_cm_pd peer;

		ck_assert_int_ge(rpcrdma_cm_decode(ev.private_data, ev.private_data_len, &peer), 0);
		ck_assert_int_eq(peer.remote_inv, 1);
		ck_assert_uint_eq(peer.recv_size, 4096);
	}
	r->id = ev.id;
	cp.private_data = pd;
	cp.private_data_len = pdlen;
	ck_assert_int_eq(uiw_accept(r->id, r->qp, &cp), 0);
	raw_event(r, UIW_CM_EVENT_ESTABLISHED, &ev);
	WAIT(rpcrdma_clnt_state(c->c) == RPCRDMA_CLNT_UP);
}

START_TEST(test_xprt_requester_errors)
{
	struct rpcrdma_xprt_opts co = {.credits = 4};
	struct raw r;
	struct cli c;
	struct rpcrdma_xprt_info ci;
	struct rpcrdma_call call;
	uint8_t msg[32], reply[64], m[128], pl[16];
	unsigned done = 0;

	raw_open(&r, 0);
	ck_assert_int_eq(uiw_create_id(r.ctx, NULL, &r.lid), 0);
	ck_assert_int_eq(uiw_listen(r.lid, "127.0.0.1", 0, 4), 0);
	cli_up(&c, NULL, UIW_CTX_POLLED, &co, uiw_get_port(r.lid));
	/* the Responder sends no RFC 8797 data: 1024 both ways (§5.1) */
	raw_listen_accept(&r, NULL, 0, &c, 1);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_int_eq(ci.peer_pd, 0);
	ck_assert_uint_eq(ci.inline_send, 1024);
	ck_assert_uint_eq(ci.inline_recv, 1024);
	ck_assert_int_eq(ci.remote_inv, 0);

	memset(msg, 0xab, sizeof(msg));
	put32(msg, 0xa0000001);
	call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	raw_recv(&r);
	ck_assert_uint_eq(r.last_len, 28 + 32);
	ck_assert_uint_eq(get32(r.last), 0xa0000001);
	ck_assert_uint_eq(get32(r.last + 4), 1);
	ck_assert_uint_eq(get32(r.last + 8), 4); /* credits requested */
	ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_MSG);
	ck_assert_mem_eq(r.last + 28, msg, 32);
	/* a reply for an unknown XID: discarded */
	put32(pl, 0xa0000002);
	memcpy(pl + 4, "stray reply!", 12);
	raw_send(&r, m, mk_hdr(m, 0xa0000002, 1, 3, RPCRDMA_MSG, pl, 16));
	/* a reply with a Read list: discarded (§4.3.1) */
	put32(m, 0xa0000001);
	put32(m + 4, 1);
	put32(m + 8, 3);
	put32(m + 12, RPCRDMA_MSG);
	put32(m + 16, 1);
	put32(m + 20, 0);
	put32(m + 24, 1);
	put32(m + 28, 4);
	put32(m + 32, 0);
	put32(m + 36, 0);
	put32(m + 40, 0);
	put32(m + 44, 0);
	put32(m + 48, 0);
	put32(m + 52, 0xa0000001);
	raw_send(&r, m, 56);
	/* a reply returning a Write chunk the call did not provide: discarded */
	put32(m + 16, 0);
	put32(m + 20, 1);
	put32(m + 24, 1);
	put32(m + 28, 0x99);
	put32(m + 32, 4);
	put32(m + 36, 0);
	put32(m + 40, 0);
	put32(m + 44, 0);
	put32(m + 48, 0);
	put32(m + 52, 0xa0000001);
	raw_send(&r, m, 56);
	/* a 20-octet RDMA_MSG: discarded */
	raw_send(&r, m, 20);
	for (int i = 0; i < 50; i++)
		pump();
	ck_assert_uint_eq(done, 0);
	/* the real reply */
	put32(pl, 0xa0000001);
	memcpy(pl + 4, "real reply!!", 12);
	raw_send(&r, m, mk_hdr(m, 0xa0000001, 1, 3, RPCRDMA_MSG, pl, 16));
	WAIT(done == 1);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.reply_len, 16);
	ck_assert_mem_eq(reply, pl, 16);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.unknown_xid, 1);
	ck_assert_uint_eq(ci.discards, 4);
	ck_assert_uint_eq(ci.credits, 3);

	/* RDMA_ERROR ERR_CHUNK in 20 octets, as Linux sends it */
	put32(msg, 0xa0000003);
	call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	raw_recv(&r);
	mk_hdr(m, 0xa0000003, 1, 3, RPCRDMA_ERROR, NULL, 0);
	put32(m + 16, RPCRDMA_ERR_CHUNK);
	raw_send(&r, m, 20);
	WAIT(done == 2);
	ck_assert_int_eq(call.status, -EREMOTEIO);
	ck_assert_uint_eq(call.rdma_err, RPCRDMA_ERR_CHUNK);

	/* ERR_VERS with its range */
	put32(msg, 0xa0000004);
	call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	raw_recv(&r);
	mk_hdr(m, 0xa0000004, 1, 3, RPCRDMA_ERROR, NULL, 0);
	put32(m + 16, RPCRDMA_ERR_VERS);
	put32(m + 20, 2);
	put32(m + 24, 3);
	raw_send(&r, m, 28);
	WAIT(done == 3);
	ck_assert_int_eq(call.status, -EPROTONOSUPPORT);
	ck_assert_uint_eq(call.rdma_err, RPCRDMA_ERR_VERS);
	ck_assert_uint_eq(call.vers_low, 2);
	ck_assert_uint_eq(call.vers_high, 3);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.errors_recv, 2);

	/* a call above 1024 octets goes Long to this peer */
	{
		uint8_t big[1100];

		memset(big, 0x5a, sizeof(big));
		put32(big, 0xa0000005);
		call_init(&call, big, sizeof(big), reply, sizeof(reply), &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		raw_recv(&r);
		ck_assert_uint_eq(get32(r.last + 12), RPCRDMA_NOMSG);
		ck_assert_uint_eq(get32(r.last + 16), 1); /* a Read segment */
		ck_assert_uint_eq(get32(r.last + 20), 0); /* at position zero */
		ck_assert_uint_eq(get32(r.last + 28), sizeof(big));
		mk_hdr(m, 0xa0000005, 1, 3, RPCRDMA_MSG, big, 8);
		raw_send(&r, m, 36);
		WAIT(done == 4);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.form, RPCRDMA_FORM_LONG);
	}

	/* reconnect: the new connection is renegotiated from the new
	 * Responder's private data (this one sends RFC 8797 data) */
	{
		struct rpcrdma_cm_pd rp;
		uint8_t pd[8];

		put32(msg, 0xa0000006);
		call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		raw_recv(&r); /* outstanding at the Responder */
		ck_assert_int_eq(uiw_destroy_id(r.id), 0);
		r.id = NULL;
		ck_assert_int_eq(uiw_destroy_qp(r.qp), 0);
		{
			struct uiw_qp_init_attr qa = {0};

			qa.send_cq = qa.recv_cq = r.cq;
			qa.cap.max_send_wr = 16;
			qa.cap.max_recv_wr = RAW_SLOTS;
			ck_assert_int_eq(uiw_create_qp(r.pd, &qa, &r.qp), 0);
			/* drain the flushed receives of the old QP */
			while (uiw_poll_cq(r.cq, 1, &(struct uiw_wc){0}) > 0)
				;
			for (unsigned i = 0; i < RAW_SLOTS; i++)
				raw_post_recv(&r, i);
		}
		WAIT(done == 5);
		ck_assert_int_eq(call.status, -ECONNRESET);
		ck_assert_int_eq(rpcrdma_clnt_state(c.c), RPCRDMA_CLNT_DOWN);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), -ENOTCONN);
		rpcrdma_cm_pd_init(&rp, 2048, 8192, 1);
		ck_assert_int_eq(rpcrdma_cm_encode(pd, sizeof(pd), &rp), 8);
		ck_assert_int_eq(rpcrdma_clnt_reconnect(c.c), 0);
		raw_listen_accept(&r, pd, 8, &c, 0);
		rpcrdma_clnt_info(c.c, &ci);
		ck_assert_int_eq(ci.peer_pd, 1);
		ck_assert_uint_eq(ci.inline_send, 4096); /* min(4096, peer receive 8192) */
		ck_assert_uint_eq(ci.inline_recv, 2048); /* min(4096, peer send 2048) */
		ck_assert_int_eq(ci.remote_inv, 1);
		ck_assert_uint_eq(ci.connects, 2);
		ck_assert_uint_eq(ci.credits, 1);
		put32(msg, 0xa0000007);
		call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		raw_recv(&r);
		ck_assert_uint_eq(get32(r.last), 0xa0000007);
		put32(pl, 0xa0000007);
		raw_send(&r, m, mk_hdr(m, 0xa0000007, 1, 3, RPCRDMA_MSG, pl, 16));
		WAIT(done == 6);
		ck_assert_int_eq(call.status, 0);
	}
	cli_down(&c);
	raw_close(&r, 0);
}
END_TEST

/* ---- private data and thresholds ---- */

START_TEST(test_xprt_private_data)
{
	uint64_t rng = tu_seed() ^ 0x58;
	struct rpcrdma_xprt_opts so = {.inline_send = 8192, .inline_recv = 2048};
	struct rpcrdma_xprt_opts co = {.inline_send = 16384, .inline_recv = 4096};
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci, si;
	struct rpcrdma_call call;
	uint8_t *m, reply[8192];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, &so);
	cli_up(&c, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.inline_send, 2048); /* min(our 16384, its receive 2048) */
	ck_assert_uint_eq(ci.inline_recv, 4096); /* min(our 4096, its send 8192) */
	ck_assert_int_eq(ci.peer_pd, 1);
	rpcrdma_svc_conn_info(v.conn, &si);
	ck_assert_uint_eq(si.inline_send, 4096);
	ck_assert_uint_eq(si.inline_recv, 2048);
	ck_assert_int_eq(si.peer_pd, 1);
	ck_assert_uint_eq(si.peer.send_size, 16384);
	/* 2000 octets go inline, 2100 go Long */
	m = mk_msg(&rng, 2100, 0x9001);
	v.expect = m;
	v.expect_len = 2000;
	call_init(&call, m, 2000, reply, sizeof(reply), &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 1);
	ck_assert_uint_eq(call.form,
			  RPCRDMA_FORM_SHORT | RPCRDMA_FORM_REPLY_OFFER | RPCRDMA_FORM_INVALIDATED);
	v.expect_len = 2100;
	call_init(&call, m, 2100, reply, 4000, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 2);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form & RPCRDMA_FORM_LONG, RPCRDMA_FORM_LONG);
	ck_assert_uint_eq(call.reply_len, 2100);
	ck_assert_mem_eq(reply, m, 2100);
	ck_assert_uint_eq(v.ok, 2);
	cli_down(&c);
	WAIT(v.downs == 1);

	/* a Requester without RFC 8797 data: 1024 both ways at both ends */
	co.flags = RPCRDMA_XO_NO_CM_PD;
	cli_up(&c, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.inline_send, 1024);
	ck_assert_uint_eq(ci.inline_recv, 1024);
	ck_assert_int_eq(ci.peer_pd, 1);
	ck_assert_int_eq(ci.remote_inv, 0);
	rpcrdma_svc_conn_info(v.conn, &si);
	ck_assert_uint_eq(si.inline_send, 1024);
	ck_assert_uint_eq(si.inline_recv, 1024);
	ck_assert_int_eq(si.peer_pd, 0);
	ck_assert_int_eq(si.remote_inv, 0);
	v.expect_len = 1000;
	call_init(&call, m, 1000, reply, 1000, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 3);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form,
			  RPCRDMA_FORM_LONG | RPCRDMA_FORM_REPLY_OFFER | RPCRDMA_FORM_LONG_REPLY);
	ck_assert_mem_eq(reply, m, 1000);
	ck_assert_uint_eq(v.ok, 3);
	free(m);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- Send with Invalidate only when both advertise R ---- */

START_TEST(test_xprt_remote_inv)
{
	for (int mode = 0; mode < 3; mode++) {
		struct rpcrdma_xprt_opts so = {0}, co = {0};
		struct srv v;
		struct cli c;
		struct rpcrdma_xprt_info ci, si;
		struct rpcrdma_call call;
		uint8_t msg[16], reply[64], wb[100], item[50];
		struct rpcrdma_rbuf rb = {wb, sizeof(wb)};
		struct rpcrdma_item it = {16, item, sizeof(item)};
		unsigned done = 0;

		if (mode == 1)
			co.flags = RPCRDMA_XO_NO_REMOTE_INV;
		if (mode == 2)
			so.flags = RPCRDMA_XO_NO_REMOTE_INV;
		srv_up(&v, UIW_CTX_POLLED, &so);
		v.handler = h_script;
		memset(msg, 1, sizeof(msg));
		memset(item, 2, sizeof(item));
		v.rmsg = msg;
		v.rlen = 16;
		v.ritems = &it;
		v.nritems = 1;
		cli_up(&c, &v, UIW_CTX_POLLED, &co, rpcrdma_svc_port(v.s));
		put32(msg, 0xb000);
		call_init(&call, msg, sizeof(msg), reply, sizeof(reply), &done);
		call.results = &rb;
		call.nresults = 1;
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == 1);
		ck_assert_int_eq(call.status, 0);
		ck_assert_uint_eq(call.result_len[0], 50);
		ck_assert_mem_eq(wb, item, 50);
		rpcrdma_clnt_info(c.c, &ci);
		rpcrdma_svc_info(v.s, &si);
		ck_assert_int_eq(ci.remote_inv, mode == 0);
		ck_assert_int_eq(si.remote_inv, mode == 0);
		ck_assert_uint_eq(si.inv_sent, mode == 0);
		ck_assert_uint_eq(ci.inv_recv, mode == 0);
		ck_assert_uint_eq(!!(call.form & RPCRDMA_FORM_INVALIDATED), mode == 0);
		/* the same call again: new registrations, all released */
		ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
		WAIT(done == 2);
		ck_assert_int_eq(call.status, 0);
		cli_down(&c);
		srv_down(&v);
	}
}
END_TEST

/* ---- reconnect and loss ---- */

START_TEST(test_xprt_reconnect)
{
	struct srv v;
	struct cli c;
	struct rpcrdma_xprt_info ci;
	struct rpcrdma_call call[3];
	uint8_t msg[3][16], reply[3][16];
	unsigned done = 0;

	srv_up(&v, UIW_CTX_POLLED, NULL);
	v.handler = NULL;
	cli_up(&c, &v, UIW_CTX_POLLED, NULL, rpcrdma_svc_port(v.s));
	for (int i = 0; i < 3; i++) {
		memset(msg[i], i, 16);
		put32(msg[i], 0xc000 + (uint32_t)i);
		call_init(&call[i], msg[i], 16, reply[i], 16, &done);
	}
	/* the first is outstanding, the second queued (one credit) */
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call[0]), 0);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call[1]), 0);
	WAIT(v.nheld == 1);
	ck_assert_int_eq(rpcrdma_clnt_reconnect(c.c), 0);
	ck_assert_uint_eq(done, 1);
	ck_assert_int_eq(call[0].status, -ECONNRESET);
	/* the queued call goes on the new connection */
	WAIT(v.downs == 1 && v.ups == 2 && v.nheld == 2);
	ck_assert_int_eq(rpcrdma_clnt_state(c.c), RPCRDMA_CLNT_UP);
	/* the held request of the dead connection */
	ck_assert_int_eq(rpcrdma_svc_reply(v.held[0], v.held[0]->msg, v.held[0]->msg_len, NULL, 0),
			 -ENOTCONN);
	v.held[0] = v.held[1];
	v.nheld = 1;
	ck_assert_uint_eq(v.held[0]->xid, 0xc001);
	reply_held(&v);
	WAIT(done == 2);
	ck_assert_int_eq(call[1].status, 0);
	ck_assert_mem_eq(reply[1], msg[1], 16);
	rpcrdma_clnt_info(c.c, &ci);
	ck_assert_uint_eq(ci.connects, 2);

	/* the Responder closes: the outstanding call fails, calls are refused */
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call[2]), 0);
	WAIT(v.nheld == 1);
	rpcrdma_svc_close(v.conn);
	WAIT(done == 3);
	ck_assert_int_eq(call[2].status, -ECONNRESET);
	WAIT(rpcrdma_clnt_state(c.c) == RPCRDMA_CLNT_DOWN);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call[0]), -ENOTCONN);
	ck_assert_int_eq(rpcrdma_svc_destroy(v.s), -EBUSY); /* a request is held */
	ck_assert_int_eq(rpcrdma_svc_drop(v.held[0]), 0);
	v.nheld = 0;
	ck_assert_int_eq(rpcrdma_clnt_reconnect(c.c), 0);
	WAIT(rpcrdma_clnt_state(c.c) == RPCRDMA_CLNT_UP);
	v.handler = h_echo;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call[0]), 0);
	WAIT(done == 4);
	ck_assert_int_eq(call[0].status, 0);
	ck_assert_mem_eq(reply[0], msg[0], 16);

	/* nobody listening: the connection fails */
	{
		uint16_t port = rpcrdma_svc_port(v.s);
		struct cli c2;
		struct rpcrdma_xprt_opts co = {.connect_timeout_ms = 5000};

		cli_down(&c);
		srv_down(&v);
		cli_up(&c2, NULL, UIW_CTX_POLLED, &co, port);
		WAIT(rpcrdma_clnt_state(c2.c) == RPCRDMA_CLNT_DOWN);
		ck_assert_int_eq(rpcrdma_clnt_error(c2.c), -ECONNREFUSED);
		cli_down(&c2);
	}
}
END_TEST

/* ---- progress-thread contexts ---- */

START_TEST(test_xprt_progress_thread)
{
	uint64_t rng = tu_seed() ^ 0x59;
	struct srv v;
	struct cli c;
	unsigned done = 0;
	uint32_t len = 30000;
	uint8_t *m = mk_msg(&rng, len, 0xd000), *reply = malloc(len), item[3000];
	struct rpcrdma_item it = {40, item, sizeof(item)};
	struct rpcrdma_call call;
	uint64_t end;

	srv_up(&v, UIW_CTX_PROGRESS_THREAD, NULL);
	cli_up(&c, &v, UIW_CTX_PROGRESS_THREAD, NULL, rpcrdma_svc_port(v.s));
	/* a Long call with a Long reply */
	v.expect = m;
	v.expect_len = len;
	call_init(&call, m, len, reply, len, &done);
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	end = ms_now() + W_MS;
	while (done < 1 && ms_now() < end) {
		ck_assert_int_ge(rpcrdma_clnt_poll(c.c, 1), 0);
		ck_assert_int_ge(rpcrdma_svc_poll(v.s, 1), 0);
	}
	ck_assert_uint_eq(done, 1);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form & (RPCRDMA_FORM_LONG | RPCRDMA_FORM_LONG_REPLY),
			  RPCRDMA_FORM_LONG | RPCRDMA_FORM_LONG_REPLY);
	ck_assert_mem_eq(reply, m, len);
	/* a Chunked call */
	tu_rand_fill(&rng, item, sizeof(item));
	v.expect = NULL;
	call_init(&call, m, 40, reply, len, &done);
	call.args = &it;
	call.nargs = 1;
	ck_assert_int_eq(rpcrdma_clnt_call(c.c, &call), 0);
	WAIT(done == 2);
	ck_assert_int_eq(call.status, 0);
	ck_assert_uint_eq(call.form & ~RPCRDMA_FORM_INVALIDATED,
			  RPCRDMA_FORM_CHUNKED | RPCRDMA_FORM_REPLY_OFFER);
	ck_assert_uint_eq(call.reply_len, 40 + sizeof(item));
	ck_assert_mem_eq(reply + 40, item, sizeof(item));
	free(m);
	free(reply);
	cli_down(&c);
	srv_down(&v);
}
END_TEST

/* ---- a Responder in its own thread, the synchronous wrapper ---- */

struct srv_thread {
	struct srv *v;
	int stop;
	int err;
};

/* the Responder's thread: serves until told to stop, then tears down
 * (a polled context belongs to the thread that turns its engine) */
static void *srv_loop(void *arg)
{
	struct srv_thread *t = arg;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		int r = rpcrdma_svc_poll(t->v->s, 5);

		if (r < 0)
			t->err = r;
	}
	for (unsigned i = 0; i < t->v->nheld; i++)
		rpcrdma_svc_drop(t->v->held[i]);
	if (rpcrdma_svc_destroy(t->v->s) || uiw_close_context(t->v->ctx))
		t->err = -EBUSY;
	return NULL;
}

START_TEST(test_xprt_sync_thread)
{
	uint64_t rng = tu_seed() ^ 0x5a;
	struct srv v;
	struct cli c;
	struct srv_thread t = {0};
	pthread_t th;
	struct rpcrdma_call call;
	uint8_t reply[256];

	srv_up(&v, UIW_CTX_POLLED, NULL);
	g_svc = NULL; /* the thread owns it */
	t.v = &v;
	ck_assert_int_eq(pthread_create(&th, NULL, srv_loop, &t), 0);
	c.ctx = open_ctx(UIW_CTX_POLLED);
	ck_assert_int_eq(rpcrdma_clnt_create(c.ctx, "127.0.0.1", rpcrdma_svc_port(v.s), NULL, &c.c),
			 0);
	g_clnt = c.c;
	for (uint32_t i = 0; i < 50; i++) {
		uint32_t len = 4 + 4 * (uint32_t)(tu_rand(&rng) % 60);
		uint8_t *m = mk_msg(&rng, len, 0xe000 + i);

		memset(&call, 0, sizeof(call));
		call.msg = m;
		call.msg_len = len;
		call.reply = reply;
		call.reply_cap = sizeof(reply);
		ck_assert_int_eq(rpcrdma_clnt_call_sync(c.c, &call, W_MS), 0);
		ck_assert_uint_eq(call.reply_len, len);
		ck_assert_mem_eq(reply, m, len);
		free(m);
	}
	/* the Responder holds the next one: the wrapper times out and
	 * resets the connection to take the call back */
	__atomic_store_n(&v.handler, NULL, __ATOMIC_RELEASE);
	{
		uint8_t m[8] = {0, 0, 0xe1, 0};

		memset(&call, 0, sizeof(call));
		call.msg = m;
		call.msg_len = sizeof(m);
		call.reply = reply;
		call.reply_cap = sizeof(reply);
		ck_assert_int_eq(rpcrdma_clnt_call_sync(c.c, &call, 200), -ETIMEDOUT);
		ck_assert_int_eq(call.status, -ECONNRESET);
	}
	cli_down(&c);
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ck_assert_int_eq(t.err, 0);
	ck_assert_uint_eq(v.ncalls, 51);
}
END_TEST

Suite *rpcrdma_xprt_suite(void)
{
	Suite *s = suite_create("rpcrdma_xprt");
	TCase *tc = tcase_create("xprt");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_xprt_short);
	tcase_add_test(tc, test_xprt_call_args);
	tcase_add_test(tc, test_xprt_read_chunks);
	tcase_add_test(tc, test_xprt_write_chunks);
	tcase_add_test(tc, test_xprt_long_call);
	tcase_add_test(tc, test_xprt_long_reply);
	tcase_add_test(tc, test_xprt_credits);
	tcase_add_test(tc, test_xprt_grant_change);
	tcase_add_test(tc, test_xprt_queue_bound);
	tcase_add_test(tc, test_xprt_responder_errors);
	tcase_add_test(tc, test_xprt_responder_multiseg);
	tcase_add_test(tc, test_xprt_requester_errors);
	tcase_add_test(tc, test_xprt_private_data);
	tcase_add_test(tc, test_xprt_remote_inv);
	tcase_add_test(tc, test_xprt_reconnect);
	tcase_add_test(tc, test_xprt_progress_thread);
	tcase_add_test(tc, test_xprt_sync_thread);
	suite_add_tcase(s, tc);
	return s;
}
