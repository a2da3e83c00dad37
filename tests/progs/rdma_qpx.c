/* SPDX-License-Identifier: MIT */
/*
 * rdma_qpx - ibv_wr_* (ibv_qp_ex), posting from many threads and
 * ibv_reg_mr's checks of the memory, run under uiw-run
 * (tests/sh/dropin_qpx.sh): both ends of the connections in this one
 * process, over loopback.
 *
 *   batch         ibv_wr_start .. ibv_wr_complete of 1, 16, 17, 100 and 1000
 *                 RDMA Writes (SGE, SGE list, inline data), with the heap
 *                 churned (malloc/free) between the builders: each WR
 *                 completes once, its data lands at the peer;
 *   partial       a batch that fails part-way posts nothing (libibverbs:
 *                 nothing is posted unless ibv_wr_complete returns 0): an
 *                 lkey of another PD or an SGE beyond its region at several
 *                 positions, more WRs than the send queue has room for,
 *                 builders iWARP has no operation for, inline data above
 *                 the QP's limit, a Read with two SGEs, more SGEs than the
 *                 QP takes; no completion, no octet at the peer, and the
 *                 next batch (from another thread: the QP's lock was
 *                 released) works;
 *   abort         ibv_wr_abort: nothing posted, the lock released;
 *   threads       8 threads each doing batches on one QP: every WR
 *                 completes exactly once, every payload lands;
 *   post_threads  8 threads posting chains of 20 Writes with
 *                 ibv_post_send on one QP: each once, each chain's WRs
 *                 together in the queue;
 *   recv_threads  4 threads posting chains of 20 receives with
 *                 ibv_post_recv on one QP, then as many Sends: each receive
 *                 once, each chain's receives together (consecutive Sends);
 *   reg           ibv_reg_mr (and _iova, _iova2) of unmapped memory, of a
 *                 range running into an unmapped page, of PROT_READ memory
 *                 with LOCAL_WRITE or REMOTE_WRITE, of PROT_NONE memory:
 *                 NULL, EFAULT; PROT_READ with REMOTE_READ only, and a
 *                 1 GiB MAP_NORESERVE region, accepted (their time said,
 *                 and that of 10000 small registrations).
 *
 * Arguments: the sections to run (default: all), so that each can be shown
 * failing on its own.  Like tests/progs/rdma_api.c it finds every exported
 * function with dlsym() (under uiw-run, libuiw-rdma's) and builds without
 * rdma-core's libraries; prints "ok: ..." per check, "FAIL: ..." and exits 1
 * at the first failure; every wait is bounded; random choices are seeded.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_dl.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

F(ibv_alloc_pd);
F(ibv_dealloc_pd);
F(ibv_reg_mr);
F(ibv_reg_mr_iova);
F(ibv_reg_mr_iova2);
F(ibv_dereg_mr);
F(ibv_create_cq);
F(ibv_destroy_cq);
F(ibv_qp_to_qp_ex);
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
F(rdma_disconnect);
F(rdma_get_cm_event);
F(rdma_ack_cm_event);
F(rdma_event_str);

/* every wait: this long at most (a loaded 2-CPU machine, sanitizers) */
#define WAIT_MS 20000

static uint64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static double us_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* ---- CM events ---------------------------------------------------------- */

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;
	uint64_t end = ms_now() + WAIT_MS;

	while (p_rdma_get_cm_event(ch, &ev)) {
		CHECK(errno == EAGAIN, "rdma_get_cm_event: %s", strerror(errno));
		CHECK(ms_now() < end, "no CM event within %d ms (want %s)", WAIT_MS,
		      p_rdma_event_str(t));
		poll(&p, 1, 10);
	}
	CHECK(ev->event == t, "event %s (status %d), want %s", p_rdma_event_str(ev->event),
	      ev->status, p_rdma_event_str(t));
	return ev;
}

/* ---- heap churn: allocations between the builders -------------------------- */

#define CHURN_SLOTS 32

struct churn {
	void *p[CHURN_SLOTS];
	unsigned seed;
};

/* free one block, allocate another of a random size and fill it: memory a
 * builder's chain was moved out of is reused and overwritten */
static void churn(struct churn *c)
{
	for (int k = 0; k < 2; k++) {
		unsigned r = (unsigned)rand_r(&c->seed);
		unsigned i = r % CHURN_SLOTS;
		size_t n = 16 + (r >> 8) % 4000;

		free(c->p[i]);
		c->p[i] = malloc(n);
		CHECK(c->p[i], "malloc");
		memset(c->p[i], 0xa5, n);
	}
}

static void churn_end(struct churn *c)
{
	for (int i = 0; i < CHURN_SLOTS; i++) {
		free(c->p[i]);
		c->p[i] = NULL;
	}
}

/* ---- a connected pair ------------------------------------------------------ */

#define MARK_ID	 0xfffffffffffffff0ull /* the Send that ends each check */
#define MARK_RID 0xfffffffffffffff1ull

struct pair {
	struct rdma_cm_id *cid, *sid;
	struct ibv_pd *cpd, *spd, *opd; /* opd: another PD of the client's */
	struct ibv_cq *ccq, *scq;
	struct ibv_mr *cmr, *smr, *omr; /* omr: cbuf in opd */
	char *cbuf, *sbuf;
	size_t len; /* of each buffer; the last 4 KiB are the marker's */
	struct ibv_qp_ex *qx;
	unsigned sq, max_sge; /* the client QP's, as created */
};

static void make_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq, unsigned sq,
		    unsigned rq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = sq;
	a.cap.max_recv_wr = rq;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 128;
	a.qp_type = IBV_QPT_RC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = pd;
	a.send_ops_flags =
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	CHECK(!p_rdma_create_qp_ex(id, &a), "rdma_create_qp_ex: %s", strerror(errno));
	*cap = a.cap;
}

static char *buffer(size_t len)
{
	void *b = NULL;

	CHECK(!posix_memalign(&b, 4096, len), "posix_memalign");
	memset(b, 0, len);
	return b;
}

#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* a connection to the listener on @lch (@sin) from a new id on @cch: the
 * client's QP with a send queue of @sq (the one the checks post on), the
 * server's with a receive queue of @rq; buffers of @len each side */
static void pair_up(struct pair *p, struct rdma_event_channel *lch, struct rdma_event_channel *cch,
		    const struct sockaddr_in *sin, unsigned sq, unsigned rq, size_t len)
{
	struct rdma_cm_event *ev;
	struct ibv_qp_cap cap;

	memset(p, 0, sizeof(*p));
	p->len = len;
	p->cbuf = buffer(len);
	p->sbuf = buffer(len);
	CHECK(!p_rdma_create_id(cch, &p->cid, p, RDMA_PS_TCP), "rdma_create_id: %s",
	      strerror(errno));
	CHECK(!p_rdma_resolve_addr(p->cid, NULL, (struct sockaddr *)sin, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!p_rdma_resolve_route(p->cid, 2000), "rdma_resolve_route: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	p->cpd = p_ibv_alloc_pd(p->cid->verbs);
	p->opd = p_ibv_alloc_pd(p->cid->verbs);
	p->ccq = p_ibv_create_cq(p->cid->verbs, (int)(2 * sq + 64), NULL, NULL, 0);
	CHECK(p->cpd && p->opd && p->ccq, "client PD/CQ: %s", strerror(errno));
	p->cmr = p_ibv_reg_mr(p->cpd, p->cbuf, len, ACC_ALL);
	p->omr = p_ibv_reg_mr(p->opd, p->cbuf, len, ACC_ALL);
	CHECK(p->cmr && p->omr, "ibv_reg_mr: %s", strerror(errno));
	make_qp(p->cid, p->cpd, p->ccq, sq, 4, &cap);
	p->sq = cap.max_send_wr;
	p->max_sge = cap.max_send_sge;
	CHECK(p->sq >= sq, "max_send_wr %u, asked for %u", p->sq, sq);
	p->qx = p_ibv_qp_to_qp_ex(p->cid->qp);
	CHECK(p->qx, "ibv_qp_to_qp_ex: %s", strerror(errno));
	CHECK(!p_rdma_connect(p->cid, NULL), "rdma_connect: %s", strerror(errno));
	ev = expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	p->sid = ev->id;
	p_rdma_ack_cm_event(ev);
	p->spd = p_ibv_alloc_pd(p->sid->verbs);
	p->scq = p_ibv_create_cq(p->sid->verbs, (int)(2 * rq + 64), NULL, NULL, 0);
	CHECK(p->spd && p->scq, "server PD/CQ: %s", strerror(errno));
	p->smr = p_ibv_reg_mr(p->spd, p->sbuf, len, ACC_ALL);
	CHECK(p->smr, "ibv_reg_mr: %s", strerror(errno));
	make_qp(p->sid, p->spd, p->scq, 4, rq, &cap);
	CHECK(!p_rdma_accept(p->sid, NULL), "rdma_accept: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_ESTABLISHED));
}

static void pair_down(struct pair *p, struct rdma_event_channel *lch,
		      struct rdma_event_channel *cch)
{
	CHECK(!p_rdma_disconnect(p->cid), "rdma_disconnect: %s", strerror(errno));
	p_rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_ack_cm_event(expect(lch, RDMA_CM_EVENT_DISCONNECTED));
	p_rdma_destroy_qp(p->cid);
	p_rdma_destroy_qp(p->sid);
	CHECK(!p_rdma_destroy_id(p->cid) && !p_rdma_destroy_id(p->sid), "rdma_destroy_id");
	CHECK(!p_ibv_dereg_mr(p->cmr) && !p_ibv_dereg_mr(p->omr) && !p_ibv_dereg_mr(p->smr),
	      "ibv_dereg_mr");
	CHECK(!p_ibv_destroy_cq(p->ccq) && !p_ibv_destroy_cq(p->scq), "ibv_destroy_cq");
	CHECK(!p_ibv_dealloc_pd(p->cpd) && !p_ibv_dealloc_pd(p->opd) && !p_ibv_dealloc_pd(p->spd),
	      "ibv_dealloc_pd");
	free(p->cbuf);
	free(p->sbuf);
}

/* one completion of @cq within WAIT_MS */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	uint64_t end = ms_now() + WAIT_MS;

	while (ibv_poll_cq(cq, 1, wc) != 1) {
		CHECK(ms_now() < end, "%s: no completion within %d ms", what, WAIT_MS);
		usleep(200);
	}
}

/*
 * A Send from the client after everything posted before it, received by
 * the server: once it is there, every Write posted before it has landed
 * (one ordered stream).  Completions of the client's queue come in posting
 * order, so any completion polled before the marker's is of a WR posted
 * before it: their number is returned (0 when nothing was pending).
 */
static unsigned sync_peer(struct pair *p, const char *what)
{
	struct ibv_sge rs = {
		.addr = (uintptr_t)p->sbuf + p->len - 4096, .length = 64, .lkey = p->smr->lkey};
	struct ibv_sge ss = {
		.addr = (uintptr_t)p->cbuf + p->len - 4096, .length = 8, .lkey = p->cmr->lkey};
	struct ibv_recv_wr rw, *rbad;
	struct ibv_send_wr sw, *sbad;
	struct ibv_wc wc;
	unsigned others = 0;

	memset(&rw, 0, sizeof(rw));
	rw.wr_id = MARK_RID;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	CHECK(!ibv_post_recv(p->sid->qp, &rw, &rbad), "%s: ibv_post_recv (marker): %s", what,
	      strerror(errno));
	memset(&sw, 0, sizeof(sw));
	sw.wr_id = MARK_ID;
	sw.opcode = IBV_WR_SEND;
	sw.send_flags = IBV_SEND_SIGNALED;
	sw.sg_list = &ss;
	sw.num_sge = 1;
	CHECK(!ibv_post_send(p->cid->qp, &sw, &sbad), "%s: ibv_post_send (marker): %s", what,
	      strerror(errno));
	for (;;) {
		poll_one(p->ccq, &wc, what);
		if (wc.wr_id == MARK_ID)
			break;
		others++;
	}
	CHECK(wc.status == IBV_WC_SUCCESS, "%s: the marker Send: status %d", what, wc.status);
	poll_one(p->scq, &wc, what);
	CHECK(wc.wr_id == MARK_RID && wc.status == IBV_WC_SUCCESS,
	      "%s: the marker's receive: wr_id %#llx status %d", what, (unsigned long long)wc.wr_id,
	      wc.status);
	return others;
}

/* ---- payloads ---------------------------------------------------------------- */

static uint8_t pat(uint64_t tag, size_t i)
{
	return (uint8_t)(tag * 131 + i * 7 + (i >> 8) + 1);
}

static void fill(char *b, size_t len, uint64_t tag)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (char)pat(tag, i);
}

/* the first octet of @b (@len) that is not @tag's pattern, or -1 */
static long differs(const char *b, size_t len, uint64_t tag)
{
	for (size_t i = 0; i < len; i++)
		if ((uint8_t)b[i] != pat(tag, i))
			return (long)i;
	return -1;
}

static int all_zero(const char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

/* ---- batches ---------------------------------------------------------------- */

#define SLOT 128

/* the Write @i of a batch tagged @tag: its length (1..120 octets) */
static uint32_t wlen(uint64_t tag, unsigned i)
{
	return 1 + (uint32_t)((i * 37 + tag) % 120);
}

/* build Write @i of batch @tag (slot i of both buffers, filled now): an SGE,
 * every 5th an SGE list of two, every 7th inline data */
static void build_write(struct pair *p, uint64_t tag, unsigned i, uint64_t wr_id)
{
	struct ibv_qp_ex *q = p->qx;
	char *src = p->cbuf + (size_t)i * SLOT;
	uint32_t len = wlen(tag, i);

	fill(src, len, tag * 100003 + i);
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, p->smr->rkey, (uintptr_t)p->sbuf + (size_t)i * SLOT);
	if (i % 7 == 3) {
		ibv_wr_set_inline_data(q, src, len);
	} else if (i % 5 == 1 && p->max_sge >= 2) {
		struct ibv_sge l[2] = {
			{.addr = (uintptr_t)src, .length = len / 2, .lkey = p->cmr->lkey},
			{.addr = (uintptr_t)src + len / 2,
			 .length = len - len / 2,
			 .lkey = p->cmr->lkey},
		};

		ibv_wr_set_sge_list(q, 2, l);
	} else {
		ibv_wr_set_sge(q, p->cmr->lkey, (uintptr_t)src, len);
	}
}

static uint64_t batch_id(uint64_t tag, unsigned i)
{
	return 1ull << 40 | tag << 20 | i;
}

/* the @n Writes of batch @tag have landed at the server, nothing beyond them */
static void check_landed(struct pair *p, uint64_t tag, unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		const char *d = p->sbuf + (size_t)i * SLOT;
		uint32_t len = wlen(tag, i);
		long at = differs(d, len, tag * 100003 + i);

		CHECK(at < 0, "%s: Write %u differs at the peer at octet %ld of %u", what, i, at,
		      len);
		CHECK(all_zero(d + len, SLOT - len), "%s: Write %u wrote beyond its %u octets",
		      what, i, len);
	}
}

/* the completions of @n Writes of batch @tag: each once, successful */
static void collect_batch(struct pair *p, uint64_t tag, unsigned n, const char *what)
{
	unsigned char *seen = calloc(n, 1);
	struct ibv_wc wc;

	CHECK(seen, "calloc");
	for (unsigned k = 0; k < n; k++) {
		unsigned i;

		poll_one(p->ccq, &wc, what);
		i = (unsigned)(wc.wr_id & 0xfffff);
		CHECK(wc.wr_id >> 20 == (1ull << 20 | tag) && i < n,
		      "%s: completion of wr_id %#llx, not of the batch", what,
		      (unsigned long long)wc.wr_id);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE,
		      "%s: Write %u completed with status %d opcode %d", what, i, wc.status,
		      wc.opcode);
		CHECK(!seen[i]++, "%s: Write %u completed twice", what, i);
	}
	free(seen);
}

/* a batch of @n Writes with the heap churned between the builders: posted
 * (ibv_wr_complete 0), each completes once, the data lands */
static void run_batch(struct pair *p, uint64_t tag, unsigned n, struct churn *c, const char *what)
{
	int ret;

	CHECK((size_t)n * SLOT <= p->len - 4096, "batch of %u: buffer too small", n);
	memset(p->sbuf, 0, (size_t)n * SLOT);
	ibv_wr_start(p->qx);
	for (unsigned i = 0; i < n; i++) {
		build_write(p, tag, i, batch_id(tag, i));
		churn(c);
	}
	ret = ibv_wr_complete(p->qx);
	CHECK(ret == 0, "%s: ibv_wr_complete of %u Writes: %d (%s)", what, n, ret, strerror(ret));
	collect_batch(p, tag, n, what);
	CHECK(sync_peer(p, what) == 0, "%s: completions beyond the batch's", what);
	check_landed(p, tag, n, what);
}

/* run @fn(@arg) in a thread of its own, which must end within WAIT_MS (a
 * thread left holding the QP's lock would block it in ibv_wr_start) */
struct in_thread {
	void (*fn)(void *);
	void *arg;
	int done;
};

static void *in_thread_main(void *a)
{
	struct in_thread *t = a;

	t->fn(t->arg);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void in_thread(void (*fn)(void *), void *arg, const char *what)
{
	struct in_thread t = {.fn = fn, .arg = arg};
	uint64_t end = ms_now() + WAIT_MS;
	pthread_t th;

	CHECK(!pthread_create(&th, NULL, in_thread_main, &t), "pthread_create");
	while (!__atomic_load_n(&t.done, __ATOMIC_ACQUIRE)) {
		CHECK(ms_now() < end,
		      "%s: not done within %d ms (ibv_wr_start blocked: the QP's lock was not "
		      "released?)",
		      what, WAIT_MS);
		usleep(1000);
	}
	pthread_join(th, NULL);
}

struct batch_arg {
	struct pair *p;
	uint64_t tag;
	unsigned n;
	const char *what;
};

static void batch_fn(void *a)
{
	struct batch_arg *b = a;
	struct churn c = {.seed = (unsigned)b->tag};

	run_batch(b->p, b->tag, b->n, &c, b->what);
	churn_end(&c);
}

static void sec_batch(struct pair *p)
{
	static const unsigned sizes[] = {1, 16, 17, 100, 1000};
	struct churn c = {.seed = 1};
	char what[64];

	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		snprintf(what, sizeof(what), "a batch of %u", sizes[k]);
		run_batch(p, 10 + k, sizes[k], &c, what);
		printf("ok: ibv_wr_start .. ibv_wr_complete of %u Writes (SGE, SGE list, inline) with the heap "
		       "churned between the builders: each completed once, the data at the peer\n",
		       sizes[k]);
	}
	churn_end(&c);
}

/* ---- a batch failing part-way ------------------------------------------------ */

enum bad {
	BAD_LKEY,	  /* the lkey of the buffer's registration in another PD: EPERM */
	BAD_RANGE,	  /* an SGE running past its region: EPERM */
	BAD_ATOMIC_WRITE, /* ibv_wr_atomic_write: EOPNOTSUPP */
	BAD_BIND_MW,	  /* ibv_wr_bind_mw: EINVAL */
	BAD_INLINE,	  /* inline data above the QP's max_inline_data: EINVAL */
	BAD_READ2,	  /* a Read with two SGEs: EINVAL */
	BAD_NSGE,	  /* more SGEs than the QP's max_send_sge: EINVAL */
};

static const char *const bad_name[] = {"an lkey of another PD",
				       "an SGE past its region",
				       "ibv_wr_atomic_write",
				       "ibv_wr_bind_mw",
				       "inline data above max_inline_data",
				       "a Read with two SGEs",
				       "more SGEs than max_send_sge"};
static const int bad_err[] = {EPERM, EPERM, EOPNOTSUPP, EINVAL, EINVAL, EINVAL, EINVAL};

/* @n Writes (batch @tag) with the @at-th replaced by @bad: the batch fails
 * with its errno, nothing completes, nothing lands */
static void run_bad_batch(struct pair *p, uint64_t tag, unsigned n, unsigned at, enum bad bad,
			  struct churn *c)
{
	static char big[1000];
	struct ibv_qp_ex *q = p->qx;
	char what[160];
	unsigned others;
	int ret;

	snprintf(what, sizeof(what), "%u Writes with %s at %u", n, bad_name[bad], at);
	memset(p->sbuf, 0, (size_t)n * SLOT);
	ibv_wr_start(q);
	for (unsigned i = 0; i < n; i++) {
		if (i != at) {
			build_write(p, tag, i, batch_id(tag, i));
			churn(c);
			continue;
		}
		q->wr_id = batch_id(tag, i);
		q->wr_flags = IBV_SEND_SIGNALED;
		switch (bad) {
		case BAD_LKEY:
			ibv_wr_rdma_write(q, p->smr->rkey, (uintptr_t)p->sbuf + (size_t)i * SLOT);
			ibv_wr_set_sge(q, p->omr->lkey, (uintptr_t)p->cbuf, 8);
			break;
		case BAD_RANGE:
			ibv_wr_rdma_write(q, p->smr->rkey, (uintptr_t)p->sbuf + (size_t)i * SLOT);
			ibv_wr_set_sge(q, p->cmr->lkey, (uintptr_t)p->cbuf + p->len - 8, 64);
			break;
		case BAD_ATOMIC_WRITE: {
			uint64_t v = 1;

			ibv_wr_atomic_write(q, p->smr->rkey, (uintptr_t)p->sbuf, &v);
			break;
		}
		case BAD_BIND_MW:
			ibv_wr_bind_mw(q, NULL, 0, NULL);
			break;
		case BAD_INLINE:
			ibv_wr_rdma_write(q, p->smr->rkey, (uintptr_t)p->sbuf + (size_t)i * SLOT);
			ibv_wr_set_inline_data(q, big, sizeof(big));
			break;
		case BAD_READ2: {
			struct ibv_sge l[2] = {
				{.addr = (uintptr_t)p->cbuf, .length = 8, .lkey = p->cmr->lkey},
				{.addr = (uintptr_t)p->cbuf + 8,
				 .length = 8,
				 .lkey = p->cmr->lkey}};

			ibv_wr_rdma_read(q, p->smr->rkey, (uintptr_t)p->sbuf);
			ibv_wr_set_sge_list(q, 2, l);
			break;
		}
		case BAD_NSGE: {
			struct ibv_sge l[6];

			for (unsigned k = 0; k < 6; k++)
				l[k] = (struct ibv_sge){.addr = (uintptr_t)p->cbuf + k,
							.length = 1,
							.lkey = p->cmr->lkey};
			ibv_wr_rdma_write(q, p->smr->rkey, (uintptr_t)p->sbuf + (size_t)i * SLOT);
			ibv_wr_set_sge_list(q, p->max_sge + 1, l);
			break;
		}
		}
		churn(c);
	}
	ret = ibv_wr_complete(q);
	CHECK(ret == bad_err[bad], "%s: ibv_wr_complete %d (%s), want %d (%s)", what, ret,
	      strerror(ret), bad_err[bad], strerror(bad_err[bad]));
	others = sync_peer(p, what);
	CHECK(others == 0,
	      "%s: ibv_wr_complete failed (%s), yet %u of the WRs were posted and completed", what,
	      strerror(ret), others);
	for (unsigned i = 0; i < n; i++)
		CHECK(all_zero(p->sbuf + (size_t)i * SLOT, SLOT),
		      "%s: ibv_wr_complete failed (%s), yet Write %u landed at the peer", what,
		      strerror(ret), i);
}

/* a batch of @n plain Writes that must fail with ENOMEM (no room in the send
 * queue for all of them) and post nothing */
static void run_full_batch(struct pair *p, uint64_t tag, unsigned n, struct churn *c)
{
	char what[96];
	unsigned others;
	int ret;

	snprintf(what, sizeof(what), "%u Writes on a send queue of %u", n, p->sq);
	memset(p->sbuf, 0, (size_t)n * SLOT);
	ibv_wr_start(p->qx);
	for (unsigned i = 0; i < n; i++) {
		build_write(p, tag, i, batch_id(tag, i));
		churn(c);
	}
	ret = ibv_wr_complete(p->qx);
	CHECK(ret == ENOMEM, "%s: ibv_wr_complete %d (%s), want ENOMEM", what, ret, strerror(ret));
	others = sync_peer(p, what);
	CHECK(others == 0,
	      "%s: ibv_wr_complete failed (ENOMEM), yet %u of the WRs were posted and completed",
	      what, others);
	for (unsigned i = 0; i < n; i++)
		CHECK(all_zero(p->sbuf + (size_t)i * SLOT, SLOT),
		      "%s: ibv_wr_complete failed (ENOMEM), yet Write %u landed at the peer", what,
		      i);
}

static void sec_partial(struct pair *p, struct pair *small)
{
	static const unsigned at20[] = {0, 1, 10, 16, 19};
	struct churn c = {.seed = 2};
	struct batch_arg ba = {.p = p, .tag = 40, .n = 17, .what = "a batch after the failed ones"};
	uint64_t tag = 20;

	/* 3 Writes, the third with a bad lkey */
	run_bad_batch(p, tag++, 3, 2, BAD_LKEY, &c);
	for (unsigned k = 0; k < sizeof(at20) / sizeof(at20[0]); k++) {
		run_bad_batch(p, tag++, 20, at20[k], BAD_LKEY, &c);
		run_bad_batch(p, tag++, 20, at20[k], BAD_RANGE, &c);
	}
	printf("ok: batches of 3 and 20 Writes with an lkey of another PD or an SGE past its region at "
	       "position 2, 0, 1, 10, 16, 19: EPERM, nothing completed, nothing landed\n");
	for (enum bad b = BAD_ATOMIC_WRITE; b <= BAD_NSGE; b++) {
		if (b == BAD_NSGE && p->max_sge >= 6)
			continue;
		run_bad_batch(p, tag++, 5, 2, b, &c);
		printf("ok: 5 Writes with %s in the middle: %s, nothing completed, nothing landed\n",
		       bad_name[b], strerror(bad_err[b]));
	}
	run_full_batch(small, tag++, small->sq + 2, &c);
	run_full_batch(small, tag++, small->sq + 1, &c);
	run_full_batch(p, tag++, p->sq + 1, &c);
	run_batch(small, tag++, small->sq, &c, "a batch filling the send queue");
	printf("ok: %u and %u Writes on a send queue of %u, %u on one of %u: ENOMEM, nothing completed, "
	       "nothing landed; %u Writes there: posted, landed\n",
	       small->sq + 2, small->sq + 1, small->sq, p->sq + 1, p->sq, small->sq);
	in_thread(batch_fn, &ba, ba.what);
	printf("ok: after the failed batches, a batch of 17 from another thread: posted, landed (the QP's "
	       "lock released by each failing ibv_wr_complete)\n");
	churn_end(&c);
}

/* ---- ibv_wr_abort ------------------------------------------------------------ */

static void sec_abort(struct pair *p)
{
	struct churn c = {.seed = 3};
	struct batch_arg ba = {.p = p, .tag = 51, .n = 20, .what = "a batch after ibv_wr_abort"};
	unsigned others;

	memset(p->sbuf, 0, 40 * SLOT);
	ibv_wr_start(p->qx);
	for (unsigned i = 0; i < 40; i++) {
		build_write(p, 50, i, batch_id(50, i));
		churn(&c);
	}
	ibv_wr_abort(p->qx);
	others = sync_peer(p, "ibv_wr_abort");
	CHECK(others == 0, "ibv_wr_abort: %u of the aborted WRs completed", others);
	for (unsigned i = 0; i < 40; i++)
		CHECK(all_zero(p->sbuf + (size_t)i * SLOT, SLOT),
		      "ibv_wr_abort: aborted Write %u landed", i);
	in_thread(batch_fn, &ba, ba.what);
	churn_end(&c);
	printf("ok: ibv_wr_abort of 40 Writes: nothing completed, nothing landed; then a batch of 20 from "
	       "another thread: posted, landed\n");
}

/* ---- many threads on one QP --------------------------------------------------- */

#define NTHREADS  8
#define TBATCHES  200
#define TMAXBATCH 12
#define TSLOT	  64
#define NCHAINS	  30
#define CHAIN	  20
#define RTHREADS  8
#define RCHAINS	  4
#define RCHAIN	  60

/* the workers start together, and give up the CPU now and then in the
 * middle of a batch: their critical regions meet on 2 CPUs too */
static pthread_barrier_t go;

struct shared {
	struct pair *p;
	int inflight; /* atomic: posted, completion not yet polled */
	int limit;    /* at most that many: the CQ cannot overflow */
	int failed;   /* atomic: a worker failed (its message printed) */
	int done;     /* atomic: workers finished */
};

struct worker {
	struct shared *s;
	unsigned t;
	pthread_t th;
};

/* a worker's failure: said once, the main thread stops */
static void wfail(struct shared *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wfail(struct shared *s, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&s->failed, 1, __ATOMIC_ACQ_REL))
		return;
	fputs("FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* room for @k more WRs (the poller frees it); 0 when given up */
static int credits(struct shared *s, int k)
{
	uint64_t end = ms_now() + WAIT_MS;

	while (__atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE) + k > s->limit) {
		if (__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) || ms_now() > end)
			return 0;
		usleep(100);
	}
	__atomic_add_fetch(&s->inflight, k, __ATOMIC_ACQ_REL);
	return 1;
}

static unsigned tbatch_len(unsigned t, unsigned b)
{
	return 1 + (t * 7 + b * 3) % TMAXBATCH;
}

static unsigned tidx(unsigned t, unsigned b, unsigned j)
{
	return (t * TBATCHES + b) * TMAXBATCH + j;
}

static void *wr_worker(void *a)
{
	struct worker *w = a;
	struct shared *s = w->s;
	struct pair *p = s->p;
	struct churn c = {.seed = 100 + w->t};

	pthread_barrier_wait(&go);
	for (unsigned b = 0; b < TBATCHES && !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE); b++) {
		unsigned k = tbatch_len(w->t, b);
		int ret;

		if (!credits(s, (int)k)) {
			wfail(s, "thread %u: no room in the send queue within %d ms", w->t,
			      WAIT_MS);
			break;
		}
		ibv_wr_start(p->qx);
		for (unsigned j = 0; j < k; j++) {
			unsigned idx = tidx(w->t, b, j);
			char *src = p->cbuf + (size_t)idx * TSLOT;

			fill(src, TSLOT, 3000000 + idx);
			p->qx->wr_id = 3ull << 40 | idx;
			p->qx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(p->qx, p->smr->rkey,
					  (uintptr_t)p->sbuf + (size_t)idx * TSLOT);
			if (j % 4 == 3)
				ibv_wr_set_inline_data(p->qx, src, TSLOT);
			else
				ibv_wr_set_sge(p->qx, p->cmr->lkey, (uintptr_t)src, TSLOT);
			churn(&c);
			if (j % 4 == 1)
				sched_yield();
		}
		ret = ibv_wr_complete(p->qx);
		if (ret) {
			wfail(s, "thread %u batch %u of %u Writes: ibv_wr_complete %d (%s)", w->t,
			      b, k, ret, strerror(ret));
			break;
		}
	}
	churn_end(&c);
	__atomic_add_fetch(&s->done, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static unsigned chain_idx(unsigned t, unsigned c, unsigned j)
{
	return (t * NCHAINS + c) * CHAIN + j;
}

static void *post_worker(void *a)
{
	struct worker *w = a;
	struct shared *s = w->s;
	struct pair *p = s->p;
	struct ibv_send_wr wr[CHAIN], *bad;
	struct ibv_sge sge[CHAIN];

	pthread_barrier_wait(&go);
	for (unsigned c = 0; c < NCHAINS && !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE); c++) {
		int ret;

		if (!credits(s, CHAIN)) {
			wfail(s, "thread %u: no room in the send queue within %d ms", w->t,
			      WAIT_MS);
			break;
		}
		for (unsigned j = 0; j < CHAIN; j++) {
			unsigned idx = chain_idx(w->t, c, j);
			char *src = p->cbuf + (size_t)idx * TSLOT;

			fill(src, TSLOT, 4000000 + idx);
			sge[j] = (struct ibv_sge){
				.addr = (uintptr_t)src, .length = TSLOT, .lkey = p->cmr->lkey};
			memset(&wr[j], 0, sizeof(wr[j]));
			wr[j].wr_id = 4ull << 40 | idx;
			wr[j].opcode = IBV_WR_RDMA_WRITE;
			wr[j].send_flags = IBV_SEND_SIGNALED;
			wr[j].sg_list = &sge[j];
			wr[j].num_sge = 1;
			wr[j].wr.rdma.remote_addr = (uintptr_t)p->sbuf + (size_t)idx * TSLOT;
			wr[j].wr.rdma.rkey = p->smr->rkey;
			wr[j].next = j + 1 < CHAIN ? &wr[j + 1] : NULL;
		}
		bad = NULL;
		ret = ibv_post_send(p->cid->qp, wr, &bad);
		if (ret) {
			wfail(s, "thread %u chain %u: ibv_post_send %d (%s)", w->t, c, ret,
			      strerror(ret));
			break;
		}
	}
	__atomic_add_fetch(&s->done, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

/* start @n workers running @fn on @s */
static void start_workers(struct shared *s, struct worker *w, unsigned n, void *(*fn)(void *))
{
	CHECK(!pthread_barrier_init(&go, NULL, n), "pthread_barrier_init");
	for (unsigned t = 0; t < n; t++) {
		w[t].s = s;
		w[t].t = t;
		CHECK(!pthread_create(&w[t].th, NULL, fn, &w[t]), "pthread_create");
	}
}

/* the workers all finished (within WAIT_MS of the last progress): joined */
static void join_workers(struct shared *s, struct worker *w, unsigned n, const char *what)
{
	uint64_t end = ms_now() + WAIT_MS;

	while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) < (int)n) {
		CHECK(!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE), "%s: a thread failed", what);
		CHECK(ms_now() < end, "%s: threads not done within %d ms", what, WAIT_MS);
		usleep(1000);
	}
	for (unsigned t = 0; t < n; t++)
		pthread_join(w[t].th, NULL);
	pthread_barrier_destroy(&go);
	CHECK(!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE), "%s: a thread failed", what);
}

/* poll the client's CQ for @total completions tagged @kind while workers
 * post: each index once (@pos: the order polled) */
static void poll_workers(struct shared *s, uint64_t kind, unsigned total, unsigned nidx,
			 unsigned *pos, const char *what)
{
	struct pair *p = s->p;
	uint64_t end = ms_now() + WAIT_MS;
	unsigned got = 0;

	for (unsigned i = 0; i < nidx; i++)
		pos[i] = UINT32_MAX;
	while (got < total) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(p->ccq, 16, wc);

		CHECK(n >= 0, "%s: ibv_poll_cq %d", what, n);
		CHECK(!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE), "%s: a thread failed", what);
		if (!n) {
			CHECK(ms_now() < end, "%s: %u of %u completions within %d ms of the last",
			      what, got, total, WAIT_MS);
			usleep(100);
			continue;
		}
		end = ms_now() + WAIT_MS;
		for (int i = 0; i < n; i++) {
			unsigned idx = (unsigned)(wc[i].wr_id & 0xffffffff);

			CHECK(wc[i].wr_id >> 40 == kind && idx < nidx,
			      "%s: completion of wr_id %#llx", what,
			      (unsigned long long)wc[i].wr_id);
			CHECK(wc[i].status == IBV_WC_SUCCESS, "%s: WR %u completed with status %d",
			      what, idx, wc[i].status);
			CHECK(pos[idx] == UINT32_MAX, "%s: WR %u completed twice", what, idx);
			pos[idx] = got++;
		}
		__atomic_sub_fetch(&s->inflight, n, __ATOMIC_ACQ_REL);
	}
}

static void sec_threads(struct pair *p)
{
	struct shared s = {.p = p, .limit = (int)p->sq};
	struct worker w[NTHREADS];
	unsigned nidx = NTHREADS * TBATCHES * TMAXBATCH, total = 0,
		 *pos = malloc(nidx * sizeof(*pos));

	CHECK(pos && (size_t)nidx * TSLOT <= p->len - 4096, "set-up");
	memset(p->sbuf, 0, (size_t)nidx * TSLOT);
	for (unsigned t = 0; t < NTHREADS; t++)
		for (unsigned b = 0; b < TBATCHES; b++)
			total += tbatch_len(t, b);
	start_workers(&s, w, NTHREADS, wr_worker);
	poll_workers(&s, 3, total, nidx, pos, "threads");
	join_workers(&s, w, NTHREADS, "threads");
	CHECK(sync_peer(p, "threads") == 0, "threads: completions beyond the batches'");
	for (unsigned t = 0; t < NTHREADS; t++)
		for (unsigned b = 0; b < TBATCHES; b++)
			for (unsigned j = 0; j < TMAXBATCH; j++) {
				unsigned idx = tidx(t, b, j);
				const char *d = p->sbuf + (size_t)idx * TSLOT;

				if (j < tbatch_len(t, b)) {
					CHECK(pos[idx] != UINT32_MAX,
					      "threads: WR %u/%u/%u never completed", t, b, j);
					CHECK(differs(d, TSLOT, 3000000 + idx) < 0,
					      "threads: Write %u/%u/%u differs at the peer", t, b,
					      j);
				} else {
					CHECK(all_zero(d, TSLOT),
					      "threads: a slot no Write was for was written");
				}
			}
	free(pos);
	printf("ok: %d threads, %d batches each (1..%d Writes, heap churned) on one QP: all %u Writes "
	       "completed once, their data at the peer\n",
	       NTHREADS, TBATCHES, TMAXBATCH, total);
}

static void sec_post_threads(struct pair *p)
{
	struct shared s = {.p = p, .limit = (int)p->sq};
	struct worker w[NTHREADS];
	unsigned nidx = NTHREADS * NCHAINS * CHAIN, *pos = malloc(nidx * sizeof(*pos));

	CHECK(pos && (size_t)nidx * TSLOT <= p->len - 4096, "set-up");
	memset(p->sbuf, 0, (size_t)nidx * TSLOT);
	start_workers(&s, w, NTHREADS, post_worker);
	poll_workers(&s, 4, nidx, nidx, pos, "post_threads");
	join_workers(&s, w, NTHREADS, "post_threads");
	CHECK(sync_peer(p, "post_threads") == 0, "post_threads: completions beyond the chains'");
	for (unsigned t = 0; t < NTHREADS; t++)
		for (unsigned c = 0; c < NCHAINS; c++)
			for (unsigned j = 0; j < CHAIN; j++) {
				unsigned idx = chain_idx(t, c, j);

				CHECK(differs(p->sbuf + (size_t)idx * TSLOT, TSLOT, 4000000 + idx) <
					      0,
				      "post_threads: Write %u/%u/%u differs at the peer", t, c, j);
				/* completions come in queue order: a chain's
				 * WRs one after the other */
				CHECK(pos[idx] == pos[chain_idx(t, c, 0)] + j,
				      "post_threads: chain %u/%u: WR %u completed at %u, its first at %u: another "
				      "thread's WRs came between",
				      t, c, j, pos[idx], pos[chain_idx(t, c, 0)]);
			}
	free(pos);
	printf("ok: %d threads, %d chains of %d Writes each with ibv_post_send on one QP: each completed "
	       "once, each chain's together, the data at the peer\n",
	       NTHREADS, NCHAINS, CHAIN);
}

struct rworker {
	struct pair *p;
	unsigned t;
	int ret; /* ibv_post_recv's, when it failed */
	int done;
	pthread_t th;
};

static unsigned rchain_idx(unsigned t, unsigned c, unsigned j)
{
	return (t * RCHAINS + c) * RCHAIN + j;
}

static void *recv_worker(void *a)
{
	struct rworker *w = a;
	struct pair *p = w->p;
	struct ibv_recv_wr wr[RCHAIN], *bad;
	struct ibv_sge sge[RCHAIN];

	pthread_barrier_wait(&go);
	for (unsigned c = 0; c < RCHAINS && !w->ret; c++) {
		for (unsigned j = 0; j < RCHAIN; j++) {
			unsigned idx = rchain_idx(w->t, c, j);

			sge[j] = (struct ibv_sge){.addr = (uintptr_t)p->sbuf + (size_t)idx * TSLOT,
						  .length = TSLOT,
						  .lkey = p->smr->lkey};
			memset(&wr[j], 0, sizeof(wr[j]));
			wr[j].wr_id = 5ull << 40 | idx;
			wr[j].sg_list = &sge[j];
			wr[j].num_sge = 1;
			wr[j].next = j + 1 < RCHAIN ? &wr[j + 1] : NULL;
		}
		w->ret = ibv_post_recv(p->sid->qp, wr, &bad);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sec_recv_threads(struct pair *p)
{
	const unsigned n = RTHREADS * RCHAINS * RCHAIN;
	struct rworker w[RTHREADS];
	unsigned *seq = malloc(n * sizeof(*seq)), *rpos = malloc(n * sizeof(*rpos));
	unsigned sent = 0, done_s = 0, got = 0;
	uint64_t end = ms_now() + WAIT_MS;

	CHECK(seq && rpos && (size_t)n * TSLOT <= p->len - 4096, "set-up");
	memset(p->sbuf, 0, (size_t)n * TSLOT);
	CHECK(!pthread_barrier_init(&go, NULL, RTHREADS), "pthread_barrier_init");
	for (unsigned t = 0; t < RTHREADS; t++) {
		w[t] = (struct rworker){.p = p, .t = t};
		CHECK(!pthread_create(&w[t].th, NULL, recv_worker, &w[t]), "pthread_create");
	}
	for (unsigned t = 0; t < RTHREADS; t++) {
		while (!__atomic_load_n(&w[t].done, __ATOMIC_ACQUIRE)) {
			CHECK(ms_now() < end, "recv_threads: receives not posted within %d ms",
			      WAIT_MS);
			usleep(1000);
		}
		pthread_join(w[t].th, NULL);
		CHECK(!w[t].ret, "recv_threads: thread %u: ibv_post_recv %d (%s)", t, w[t].ret,
		      strerror(w[t].ret));
	}
	pthread_barrier_destroy(&go);
	/* as many Sends, numbered: 16 octets, the number then a pattern */
	for (unsigned i = 0; i < n; i++)
		seq[i] = rpos[i] = UINT32_MAX;
	end = ms_now() + WAIT_MS;
	while (done_s < n) {
		struct ibv_wc wc[16];
		int k;

		while (sent < n && sent - done_s < p->sq) {
			char *src = p->cbuf + (size_t)sent * TSLOT;
			struct ibv_sge sge = {
				.addr = (uintptr_t)src, .length = 16, .lkey = p->cmr->lkey};
			struct ibv_send_wr sw, *bad;

			memcpy(src, &sent, sizeof(sent));
			fill(src + 4, 12, 5000000 + sent);
			memset(&sw, 0, sizeof(sw));
			sw.wr_id = 6ull << 40 | sent;
			sw.opcode = IBV_WR_SEND;
			sw.send_flags = IBV_SEND_SIGNALED;
			sw.sg_list = &sge;
			sw.num_sge = 1;
			CHECK(!ibv_post_send(p->cid->qp, &sw, &bad),
			      "recv_threads: ibv_post_send: %s", strerror(errno));
			sent++;
		}
		k = ibv_poll_cq(p->ccq, 16, wc);
		CHECK(k >= 0, "ibv_poll_cq");
		for (int i = 0; i < k; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id >> 40 == 6,
			      "recv_threads: a Send: status %d", wc[i].status);
		done_s += (unsigned)k;
		if (k)
			end = ms_now() + WAIT_MS;
		CHECK(ms_now() < end, "recv_threads: Sends not completing");
		if (!k)
			usleep(100);
	}
	end = ms_now() + WAIT_MS;
	while (got < n) {
		struct ibv_wc wc;
		unsigned idx, s;

		if (ibv_poll_cq(p->scq, 1, &wc) != 1) {
			CHECK(ms_now() < end, "recv_threads: %u of %u receives within %d ms", got,
			      n, WAIT_MS);
			usleep(100);
			continue;
		}
		idx = (unsigned)(wc.wr_id & 0xffffffff);
		CHECK(wc.wr_id >> 40 == 5 && idx < n, "recv_threads: completion of wr_id %#llx",
		      (unsigned long long)wc.wr_id);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 16,
		      "recv_threads: receive %u: status %d opcode %d len %u", idx, wc.status,
		      wc.opcode, wc.byte_len);
		CHECK(rpos[idx] == UINT32_MAX, "recv_threads: receive %u completed twice", idx);
		rpos[idx] = got++;
		memcpy(&s, p->sbuf + (size_t)idx * TSLOT, sizeof(s));
		CHECK(s < n && differs(p->sbuf + (size_t)idx * TSLOT + 4, 12, 5000000 + s) < 0,
		      "recv_threads: receive %u holds no Send's data", idx);
		CHECK(seq[s] == UINT32_MAX, "recv_threads: Send %u received twice", s);
		seq[s] = idx;
	}
	/* a chain's receives took consecutive Sends: nothing of another
	 * thread's between them in the receive queue */
	for (unsigned t = 0; t < RTHREADS; t++)
		for (unsigned c = 0; c < RCHAINS; c++) {
			unsigned s0;

			memcpy(&s0, p->sbuf + (size_t)rchain_idx(t, c, 0) * TSLOT, sizeof(s0));
			for (unsigned j = 1; j < RCHAIN; j++) {
				unsigned s;

				memcpy(&s, p->sbuf + (size_t)rchain_idx(t, c, j) * TSLOT,
				       sizeof(s));
				CHECK(s == s0 + j,
				      "recv_threads: chain %u/%u: receive %u took Send %u, its first %u: "
				      "another thread's receives came between",
				      t, c, j, s, s0);
			}
		}
	free(seq);
	free(rpos);
	printf("ok: %d threads, %d chains of %d receives each with ibv_post_recv on one QP, then %u Sends: "
	       "each receive used once, each chain's together\n",
	       RTHREADS, RCHAINS, RCHAIN, n);
}

/* ---- ibv_reg_mr and the memory --------------------------------------------------- */

/* ibv_reg_mr(@a, @len, @acc) must fail with EFAULT */
static void reg_efault(struct ibv_pd *pd, void *a, size_t len, int acc, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = p_ibv_reg_mr(pd, a, len, acc);
	if (mr)
		p_ibv_dereg_mr(mr);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr of %s (access 0x%x): %s, want NULL with EFAULT",
	      what, acc, mr ? "registered" : strerror(errno));
}

static void reg_ok(struct ibv_pd *pd, void *a, size_t len, int acc, const char *what)
{
	struct ibv_mr *mr = p_ibv_reg_mr(pd, a, len, acc);

	CHECK(mr, "ibv_reg_mr of %s (access 0x%x): %s", what, acc, strerror(errno));
	CHECK(!p_ibv_dereg_mr(mr), "ibv_dereg_mr");
}

static void sec_reg(struct pair *p)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE), gib = (size_t)1 << 30;
	struct ibv_pd *pd = p->cpd;
	struct ibv_mr *mr;
	char *m, *ro, *big;
	double t0, t_big, t_small;
	int fd;

	/* a hole: three pages mapped, the middle one unmapped again */
	m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap");
	CHECK(!munmap(m + pg, pg), "munmap");
	reg_efault(pd, m + pg, pg, IBV_ACCESS_LOCAL_WRITE, "an unmapped page");
	reg_efault(pd, m + pg, pg, 0, "an unmapped page");
	reg_efault(pd, m + pg, pg, IBV_ACCESS_REMOTE_READ, "an unmapped page");
	reg_efault(pd, m + pg + 100, 10, ACC_ALL, "10 octets of an unmapped page");
	reg_efault(pd, m, 2 * pg, ACC_ALL, "a page and the unmapped one after it");
	reg_efault(pd, m + pg - 1, 2, IBV_ACCESS_REMOTE_READ,
		   "the last octet of a page and the unmapped one after");
	reg_efault(pd, m + pg - 1, 2 * pg + 1, IBV_ACCESS_REMOTE_READ, "a range over a hole");
	reg_ok(pd, m, pg, ACC_ALL, "a mapped page before a hole");
	reg_ok(pd, m + 2 * pg, pg, ACC_ALL, "a mapped page after a hole");
	reg_ok(pd, m + pg - 8, 8, ACC_ALL, "the last 8 octets before a hole");
	errno = 0;
	mr = p_ibv_reg_mr_iova(pd, m + pg, pg, (uintptr_t)(m + pg), IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr_iova of an unmapped page: %s",
	      mr ? "registered" : strerror(errno));
	errno = 0;
	mr = p_ibv_reg_mr_iova2(pd, m, 2 * pg, (uintptr_t)m, IBV_ACCESS_REMOTE_READ);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr_iova2 over a hole: %s",
	      mr ? "registered" : strerror(errno));
	printf("ok: ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2 of unmapped memory, of ranges running into "
	       "or over an unmapped page: NULL, EFAULT; the mapped pages around: registered\n");

	/* read-only memory: a PROT_READ mapping, a read-only file mapping, and
	 * a writable page followed by a read-only one */
	ro = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	reg_efault(pd, ro, pg, IBV_ACCESS_LOCAL_WRITE, "a PROT_READ mapping");
	reg_efault(pd, ro, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		   "a PROT_READ mapping");
	reg_efault(pd, ro + 10, 20, ACC_ALL, "20 octets of a PROT_READ mapping");
	errno = 0;
	mr = p_ibv_reg_mr(pd, ro, pg, IBV_ACCESS_REMOTE_WRITE);
	CHECK(!mr && errno == EINVAL,
	      "ibv_reg_mr with REMOTE_WRITE without LOCAL_WRITE: %s, want EINVAL",
	      mr ? "registered" : strerror(errno));
	reg_ok(pd, ro, 2 * pg, IBV_ACCESS_REMOTE_READ, "a PROT_READ mapping");
	reg_ok(pd, ro, pg, 0, "a PROT_READ mapping");
	CHECK(!mprotect(ro + pg, pg, PROT_NONE), "mprotect");
	reg_efault(pd, ro + pg, pg, IBV_ACCESS_REMOTE_READ, "a PROT_NONE page");
	reg_efault(pd, ro, 2 * pg, IBV_ACCESS_REMOTE_READ, "a readable page and a PROT_NONE one");
	CHECK(!munmap(ro, 2 * pg), "munmap");
	CHECK(!mprotect(m + 2 * pg, pg, PROT_READ), "mprotect");
	reg_efault(pd, m + pg - 16, 32, ACC_ALL, "a range over a hole");
	CHECK(!munmap(m, pg) && !munmap(m + 2 * pg, pg), "munmap");
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED && !mprotect(m + pg, pg, PROT_READ), "mmap/mprotect");
	reg_efault(pd, m, 2 * pg, IBV_ACCESS_LOCAL_WRITE,
		   "a writable page and a read-only one after it");
	reg_efault(pd, m + pg - 1, 2, ACC_ALL,
		   "the last octet of a writable page and a read-only one");
	reg_ok(pd, m, 2 * pg, IBV_ACCESS_REMOTE_READ, "a writable page and a read-only one");
	reg_ok(pd, m, pg, ACC_ALL, "the writable page before a read-only one");
	CHECK(!munmap(m, 2 * pg), "munmap");
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		void *f = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);

		CHECK(f != MAP_FAILED, "mmap of a file: %s", strerror(errno));
		reg_efault(pd, f, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			   "a read-only file mapping");
		reg_ok(pd, f, pg, IBV_ACCESS_REMOTE_READ, "a read-only file mapping");
		munmap(f, pg);
		close(fd);
	}
	{
		static const char rodata[64] = "read-only data of the program";

		reg_efault(pd, (void *)rodata, sizeof(rodata), IBV_ACCESS_LOCAL_WRITE,
			   "the program's .rodata");
		reg_ok(pd, (void *)rodata, sizeof(rodata), IBV_ACCESS_REMOTE_READ,
		       "the program's .rodata");
	}
	printf("ok: ibv_reg_mr with LOCAL_WRITE or REMOTE_WRITE of PROT_READ memory (anonymous, a file, "
	       ".rodata, a read-only page after a writable one): NULL, EFAULT; with REMOTE_READ only: "
	       "registered; PROT_NONE: EFAULT even for REMOTE_READ; REMOTE_WRITE alone: EINVAL\n");

	/* a file whose path is 1025 octets long mapped below the buffers: its
	 * line of /proc/self/maps is longer than a small read buffer, and the
	 * mappings above it must still be found */
	{
		char path[1400], *q = path, *lm, *above;
		size_t plen;
		int lfd;

		q += snprintf(path, sizeof(path), "/tmp/uiw-qpx-%d", (int)getpid());
		mkdir(path, 0700);
		for (int i = 0; i < 5; i++) {
			*q++ = '/';
			memset(q, 'd', 200);
			q += 200;
			*q = 0;
			CHECK(!mkdir(path, 0700) || errno == EEXIST, "mkdir %zu: %s", strlen(path),
			      strerror(errno));
		}
		strcpy(q, "/f");
		plen = strlen(path);
		lfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(lfd >= 0 && !ftruncate(lfd, (off_t)pg), "the long-path file: %s", strerror(errno));
		/* low, so that /proc/self/maps lists it before anything mmap
		 * places (top down) */
		lm = mmap((void *)(uintptr_t)0x10000000, pg, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE,
			  lfd, 0);
		CHECK(lm != MAP_FAILED, "mmap of the long-path file: %s", strerror(errno));
		above = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(above != MAP_FAILED && above > lm, "mmap above the long-path file");
		reg_ok(pd, above, pg, ACC_ALL, "a page above a mapping whose path is 1025 octets");
		reg_efault(pd, lm, pg, ACC_ALL, "the long-path file, mapped read-only");
		CHECK(!munmap(above, pg) && !munmap(lm, pg), "munmap");
		close(lfd);
		for (int i = 0; i < 7; i++) { /* the file, 5 directories, the top one */
			remove(path);
			*strrchr(path, '/') = 0;
		}
		printf("ok: ibv_reg_mr above a mapping whose path is %zu octets long: registered; of "
		       "that mapping with LOCAL_WRITE: EFAULT\n", plen);
	}

	/* 1 GiB, reserved only: registered without touching it */
	big = mmap(NULL, gib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	CHECK(big != MAP_FAILED, "mmap of 1 GiB (MAP_NORESERVE): %s", strerror(errno));
	t0 = us_now();
	mr = p_ibv_reg_mr(pd, big, gib, ACC_ALL);
	t_big = us_now() - t0;
	CHECK(mr, "ibv_reg_mr of 1 GiB of MAP_NORESERVE memory: %s", strerror(errno));
	CHECK(!p_ibv_dereg_mr(mr), "ibv_dereg_mr");
	CHECK(!munmap(big, gib), "munmap");
	/* 10000 small registrations (the STag table holds 4096 at once) */
	{
		char *b = malloc(10000 * 64);

		CHECK(b, "malloc");
		t0 = us_now();
		for (unsigned i = 0; i < 10000; i++) {
			mr = p_ibv_reg_mr(pd, b + (size_t)i * 64, 64, ACC_ALL);
			CHECK(mr, "ibv_reg_mr %u of 10000: %s", i, strerror(errno));
			CHECK(!p_ibv_dereg_mr(mr), "ibv_dereg_mr");
		}
		t_small = (us_now() - t0) / 10000;
		free(b);
	}
	printf("ok: ibv_reg_mr of 1 GiB of MAP_NORESERVE memory: registered in %.0f us; 10000 registrations "
	       "of 64 octets: %.1f us each with its ibv_dereg_mr (times for information)\n",
	       t_big, t_small);
}

/* ---- main ------------------------------------------------------------------------ */

static int wanted(int argc, char **argv, const char *sec)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], sec))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const secs[] = {"batch",	   "partial",	   "abort", "threads",
					   "post_threads", "recv_threads", "reg"};
	struct rdma_event_channel *lch, *cch;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct rdma_cm_id *lid;
	struct pair big, small;

	for (int i = 1; i < argc; i++) {
		unsigned k = 0;

		while (k < sizeof(secs) / sizeof(secs[0]) && strcmp(argv[i], secs[k]))
			k++;
		if (k == sizeof(secs) / sizeof(secs[0])) {
			fprintf(stderr,
				"usage: rdma_qpx [batch|partial|abort|threads|post_threads|recv_threads|reg]...\n");
			return 2;
		}
	}
	LOAD(ibv_alloc_pd);
	LOAD(ibv_dealloc_pd);
	LOAD(ibv_reg_mr);
	LOAD(ibv_reg_mr_iova);
	LOAD(ibv_reg_mr_iova2);
	LOAD(ibv_dereg_mr);
	LOAD(ibv_create_cq);
	LOAD(ibv_destroy_cq);
	LOAD(ibv_qp_to_qp_ex);
	LOAD(rdma_create_event_channel);
	LOAD(rdma_destroy_event_channel);
	LOAD(rdma_create_id);
	LOAD(rdma_destroy_id);
	LOAD(rdma_bind_addr);
	LOAD(rdma_listen);
	LOAD(rdma_resolve_addr);
	LOAD(rdma_resolve_route);
	LOAD(rdma_create_qp_ex);
	LOAD(rdma_destroy_qp);
	LOAD(rdma_connect);
	LOAD(rdma_accept);
	LOAD(rdma_disconnect);
	LOAD(rdma_get_cm_event);
	LOAD(rdma_ack_cm_event);
	LOAD(rdma_event_str);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* a listener on a port the kernel chooses, and two connections to it:
	 * one with a send queue of 2048, one with a send queue of 4 */
	lch = p_rdma_create_event_channel();
	cch = p_rdma_create_event_channel();
	CHECK(lch && cch, "rdma_create_event_channel: %s", strerror(errno));
	fcntl(lch->fd, F_SETFL, fcntl(lch->fd, F_GETFL) | O_NONBLOCK);
	fcntl(cch->fd, F_SETFL, fcntl(cch->fd, F_GETFL) | O_NONBLOCK);
	CHECK(!p_rdma_create_id(lch, &lid, NULL, RDMA_PS_TCP), "rdma_create_id: %s",
	      strerror(errno));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	CHECK(!p_rdma_bind_addr(lid, (struct sockaddr *)&sin), "rdma_bind_addr: %s",
	      strerror(errno));
	CHECK(!p_rdma_listen(lid, 4), "rdma_listen: %s", strerror(errno));
	sin.sin_port = lid->route.addr.src_sin.sin_port;
	CHECK(sin.sin_port, "no port after rdma_listen on port 0");
	pair_up(&big, lch, cch, &sin, 2048, 2048, 4 << 20);
	pair_up(&small, lch, cch, &sin, 4, 8, 1 << 20);
	printf("ok: two connections over 127.0.0.1 port %u: send queues of %u and %u\n",
	       ntohs(sin.sin_port), big.sq, small.sq);

	if (wanted(argc, argv, "batch"))
		sec_batch(&big);
	if (wanted(argc, argv, "partial"))
		sec_partial(&big, &small);
	if (wanted(argc, argv, "abort"))
		sec_abort(&big);
	if (wanted(argc, argv, "threads"))
		sec_threads(&big);
	if (wanted(argc, argv, "post_threads"))
		sec_post_threads(&big);
	if (wanted(argc, argv, "recv_threads"))
		sec_recv_threads(&big);
	if (wanted(argc, argv, "reg"))
		sec_reg(&big);

	pair_down(&small, lch, cch);
	pair_down(&big, lch, cch);
	CHECK(!p_rdma_destroy_id(lid), "rdma_destroy_id");
	p_rdma_destroy_event_channel(lch);
	p_rdma_destroy_event_channel(cch);
	printf("ok: everything destroyed\n");
	return 0;
}
