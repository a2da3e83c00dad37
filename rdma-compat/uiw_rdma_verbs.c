/* SPDX-License-Identifier: MIT */
/*
 * libuiw-rdma: the verbs objects — protection domains, memory regions,
 * completion channels and queues, shared receive queues, RC queue pairs —
 * over uiwarp's, and the operations the application reaches through the
 * context's function pointers (ibv_post_send(), ibv_poll_cq(), ... are
 * inline in <infiniband/verbs.h>) and through ibv_qp_ex (ibv_wr_*()).
 *
 * Conventions (docs/RDMA-COMPAT.md 5.4): constructors return NULL with
 * errno, int calls a positive errno (errno set too), ibv_poll_cq() a count
 * or a negative value, ibv_get_cq_event()/ibv_get_async_event() -1 with
 * errno.  uiw_* calls return -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uiw_hidden.h"
#include "uiw_rdma.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* a positive errno, also in errno (libibverbs' int calls) */
static int pos_err(int e)
{
	errno = e;
	return e;
}

/* ---- messages ---------------------------------------------------------------- */

#define SAID_MAX 64
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *said[SAID_MAX];

void uiw_rdma_say_once(const char *key, const char *fmt, ...)
{
	unsigned i;
	va_list ap;
	int e = errno;

	pthread_mutex_lock(&said_lock);
	for (i = 0; i < SAID_MAX && said[i]; i++)
		if (said[i] == key)
			break;
	if (i < SAID_MAX && !said[i]) {
		said[i] = key;
		fputs("uiw-rdma: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&said_lock);
	errno = e;
}

/* UIW_RDMA_TRACE=1: one line on stderr per QP created, work request
 * posted and completion polled (debugging a program's use of the API) */
int uiw_rdma_tracing(void)
{
	static int t = -1;

	if (t < 0) {
		const char *e = getenv("UIW_RDMA_TRACE");

		t = e && *e && *e != '0';
	}
	return t;
}

/* UIW_RDMA_RFC7306=1: every QP of the process uses RFC 7306 (atomics,
 * immediate data), and the device reports atomic_cap IBV_ATOMIC_GLOB.
 * Off by default: iWARP cannot ask a peer whether it has RFC 7306, and a
 * peer without it (Linux siw, most RNICs) ends the connection at the first
 * such message; both sides must be told (docs/RFC7306.md). */
int uiw_rdma_rfc7306(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("UIW_RDMA_RFC7306");

		on = e && *e && *e != '0';
	}
	return on;
}

static void say_rfc7306_off(void)
{
	uiw_rdma_say_once("rfc7306-off", "atomics and immediate data are RFC 7306's, off by default (a peer "
			  "without RFC 7306 would end the connection): set UIW_RDMA_RFC7306=1 on both sides "
			  "(uiw-run --rfc7306)");
}

/* ---- QP numbers ------------------------------------------------------------------
 * uiwarp's (uiw_qp_num()); each uiwarp QP carries its wrapper as its
 * context (uiw_qp_set_context()), so rdma_accept()'s conn_param.qp_num
 * (rping -q) leads to it. */

struct uiw_rdma_qp *uiw_rdma_qp_by_num(uint32_t qpn)
{
	struct uiw_qp *u;

	return uiw_qp_by_num(qpn, &u) ? NULL : uiw_qp_context(u);
}

/* ---- asynchronous events ------------------------------------------------------ */

struct uiw_rdma_async {
	struct uiw_rdma_async *next;
	struct ibv_async_event ev;
};

int uiw_rdma_async_init(struct uiw_rdma_context *rc)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);

	if (fd < 0)
		return errno;
	pthread_mutex_init(&rc->async_lock, NULL);
	rc->async_head = NULL;
	rc->async_tail = &rc->async_head;
	rc->vctx.context.async_fd = fd;
	return 0;
}

void uiw_rdma_async_fini(struct uiw_rdma_context *rc)
{
	while (rc->async_head) {
		struct uiw_rdma_async *a = rc->async_head;

		rc->async_head = a->next;
		free(a);
	}
	close(rc->vctx.context.async_fd);
	pthread_mutex_destroy(&rc->async_lock);
}

void uiw_rdma_async_post(struct uiw_rdma_context *rc, enum ibv_event_type type, void *element)
{
	struct uiw_rdma_async *a = calloc(1, sizeof(*a));
	uint64_t one = 1;

	if (!a)
		return; /* an event lost under memory pressure; the WCs still say it */
	a->ev.event_type = type;
	if (type == IBV_EVENT_CQ_ERR)
		a->ev.element.cq = element;
	else
		a->ev.element.qp = element;
	pthread_mutex_lock(&rc->async_lock);
	*rc->async_tail = a;
	rc->async_tail = &a->next;
	if (write(rc->vctx.context.async_fd, &one, sizeof(one)) < 0) {
		/* cannot saturate: one unit per queued event */
	}
	pthread_mutex_unlock(&rc->async_lock);
}

/* forget the queued events naming @element (it is being destroyed).  The
 * fd holds one unit per queued event and is read only under async_lock,
 * so each dropped event's unit is there to take back. */
static void async_drop(struct uiw_rdma_context *rc, void *element)
{
	struct uiw_rdma_async **pp, *a;
	uint64_t v;

	pthread_mutex_lock(&rc->async_lock);
	for (pp = &rc->async_head; (a = *pp);) {
		if (a->ev.element.qp == element) {
			*pp = a->next;
			free(a);
			if (read(rc->vctx.context.async_fd, &v, sizeof(v)) < 0) {
				/* cannot fail: the unit is there */
			}
		} else {
			pp = &a->next;
		}
	}
	rc->async_tail = &rc->async_head;
	while (*rc->async_tail)
		rc->async_tail = &(*rc->async_tail)->next;
	pthread_mutex_unlock(&rc->async_lock);
}

/* Blocks in poll(2) on async_fd (a cancellation point, no lock held) until
 * an event is queued, unless the application made the fd non-blocking:
 * then -1, EAGAIN. */
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct uiw_rdma_context *rc;
	struct uiw_rdma_async *a;
	uint64_t v;

	if (!context || !event) {
		errno = EINVAL;
		return -1;
	}
	rc = uiw_rdma_ctx(context);
	for (;;) {
		struct pollfd pfd = {.fd = context->async_fd, .events = POLLIN};
		int fl;

		pthread_mutex_lock(&rc->async_lock);
		a = rc->async_head;
		if (a) {
			rc->async_head = a->next;
			if (!rc->async_head)
				rc->async_tail = &rc->async_head;
			if (read(context->async_fd, &v, sizeof(v)) < 0) {
				/* cannot fail: one unit per queued event */
			}
		}
		pthread_mutex_unlock(&rc->async_lock);
		if (a)
			break;
		fl = fcntl(context->async_fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK)) {
			errno = EAGAIN;
			return -1;
		}
		if (poll(&pfd, 1, -1) < 0)
			return -1; /* EINTR: as a read(2) of rdma-core's */
	}
	*event = a->ev;
	free(a);
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event; /* events are copied out: nothing is pinned */
}

/* ---- protection domains ------------------------------------------------------- */

static uint32_t next_handle(void)
{
	static uint32_t h;

	return __atomic_add_fetch(&h, 1, __ATOMIC_RELAXED);
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct uiw_rdma_pd *p;
	int ret;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	ret = uiw_alloc_pd(uiw_rdma_ctx(context)->uctx, &p->upd);
	if (ret) {
		free(p);
		errno = -ret;
		return NULL;
	}
	p->pd.context = context;
	p->pd.handle = next_handle();
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct uiw_rdma_pd *p;
	int ret;

	if (!pd)
		return pos_err(EINVAL);
	p = uiw_rdma_container_of(pd, struct uiw_rdma_pd, pd);
	ret = uiw_dealloc_pd(p->upd);
	if (ret)
		return pos_err(-ret); /* EBUSY: MRs, QPs or SRQs use it */
	free(p);
	return 0;
}

static struct uiw_pd *upd_of(struct ibv_pd *pd)
{
	return uiw_rdma_container_of(pd, struct uiw_rdma_pd, pd)->upd;
}

/* ---- memory regions ----------------------------------------------------------- */

/* lkey -> region, to copy small work requests at post time only from
 * memory the application registered for them (see UIW_RDMA_COPY_MAX) */
#define MR_BUCKETS 256
static pthread_rwlock_t mrt_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct uiw_rdma_mr *mrt[MR_BUCKETS];

static void mrt_add(struct uiw_rdma_mr *m)
{
	pthread_rwlock_wrlock(&mrt_lock);
	m->hnext = mrt[m->mr.lkey % MR_BUCKETS];
	mrt[m->mr.lkey % MR_BUCKETS] = m;
	pthread_rwlock_unlock(&mrt_lock);
}

static void mrt_del(struct uiw_rdma_mr *m)
{
	pthread_rwlock_wrlock(&mrt_lock);
	for (struct uiw_rdma_mr **pp = &mrt[m->mr.lkey % MR_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == m) {
			*pp = m->hnext;
			break;
		}
	pthread_rwlock_unlock(&mrt_lock);
}

/* every SGE of @w lies in a region of @pd registered under its lkey */
static int sges_registered(struct ibv_pd *pd, const struct ibv_send_wr *w)
{
	int ok = 1;

	pthread_rwlock_rdlock(&mrt_lock);
	for (int i = 0; i < w->num_sge && ok; i++) {
		const struct ibv_sge *g = &w->sg_list[i];
		struct uiw_rdma_mr *m;

		for (m = mrt[g->lkey % MR_BUCKETS]; m; m = m->hnext)
			if (m->mr.lkey == g->lkey)
				break;
		ok = m && m->mr.pd == pd && g->addr >= (uintptr_t)m->mr.addr &&
		     g->length <= m->mr.length && g->addr - (uintptr_t)m->mr.addr <= m->mr.length - g->length;
	}
	pthread_rwlock_unlock(&mrt_lock);
	return ok;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, unsigned access)
{
	struct uiw_rdma_mr *m;
	int ret;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	/* optional bits (relaxed ordering, ...) may be ignored by definition;
	 * HUGETLB is a hint */
	access &= ~(unsigned)(IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_HUGETLB);
	/* REMOTE_ATOMIC (the value of UIW_ACCESS_REMOTE_ATOMIC) is passed on:
	 * with RFC 7306 off it is harmless (libfabric's verbs provider asks
	 * for it on every region); like remote write, it needs local write */
	if ((access & IBV_ACCESS_REMOTE_ATOMIC) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if (access & (IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND)) {
		uiw_rdma_say_once("mr-flags", "ibv_reg_mr(): access 0x%x: memory windows, zero-based and "
				  "on-demand regions are not supported by uiwarp: EOPNOTSUPP", access);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (access & ~(unsigned)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	ret = uiw_reg_mr(upd_of(pd), addr, length, (int)access, &m->umr);
	if (ret) {
		free(m);
		errno = -ret;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = next_handle();
	m->mr.lkey = m->umr->lkey;
	m->mr.rkey = m->umr->rkey;
	mrt_add(m);
	return &m->mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (unsigned)access);
}

/* Tagged offsets are virtual addresses in uiwarp: an IOVA other than the
 * address itself needs offset-based TOs (not there): EOPNOTSUPP. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	if (iova != (uint64_t)(uintptr_t)addr) {
		uiw_rdma_say_once("mr-iova", "ibv_reg_mr_iova2(): an IOVA other than the address: uiwarp's "
				  "tagged offsets are virtual addresses: EOPNOTSUPP");
		errno = EOPNOTSUPP;
		return NULL;
	}
	return reg_mr(pd, addr, length, access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

/* Not supported (as with Linux siw): the old registration stays valid,
 * which IBV_REREG_MR_ERR_CMD says. */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)pd, (void)addr, (void)length, (void)access;
	if (!mr || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	uiw_rdma_say_once("mr-rereg", "ibv_rereg_mr(): not supported on uiwarp (the MR is unchanged): "
			  "deregister and register again");
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_CMD;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct uiw_rdma_mr *m;
	int ret;

	if (!mr)
		return pos_err(EINVAL);
	m = uiw_rdma_container_of(mr, struct uiw_rdma_mr, mr);
	mrt_del(m);
	ret = uiw_dereg_mr(m->umr);
	if (ret) {
		mrt_add(m);
		return pos_err(-ret); /* EBUSY: memory still in use after 2 s */
	}
	free(m);
	return 0;
}

/* ---- completion channels and queues ----------------------------------------- */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct uiw_rdma_channel *c;
	int ret;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	ret = uiw_create_comp_channel(uiw_rdma_ctx(context)->uctx, &c->uch);
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	c->ch.context = context;
	/* uiwarp's eventfd itself: pollable, and a read(2) on it is where
	 * ibv_get_cq_event() blocks (O_NONBLOCK set by the application is
	 * honoured) */
	c->ch.fd = c->uch->fd;
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct uiw_rdma_channel *c;
	int ret;

	if (!channel)
		return pos_err(EINVAL);
	c = uiw_rdma_container_of(channel, struct uiw_rdma_channel, ch);
	ret = uiw_destroy_comp_channel(c->uch);
	if (ret)
		return pos_err(-ret); /* EBUSY: a CQ uses it */
	free(c);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct uiw_rdma_cq *q;
	int ret;

	if (!context || cqe <= 0 || comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	/* our CQ is uiwarp's cq_context: uiw_get_cq_event() hands it back */
	ret = uiw_create_cq(uiw_rdma_ctx(context)->uctx, cqe, q,
			    channel ? uiw_rdma_container_of(channel, struct uiw_rdma_channel, ch)->uch : NULL,
			    &q->ucq);
	if (ret) {
		free(q);
		errno = -ret;
		return NULL;
	}
	q->cq.context = context;
	q->cq.channel = channel;
	q->cq.cq_context = cq_context;
	q->cq.handle = next_handle();
	q->cq.cqe = cqe;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	if (channel)
		channel->refcnt++;
	return &q->cq;
}

/* Not supported (as with Linux siw): the CQ keeps its size. */
int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (!cq || cqe <= 0)
		return pos_err(EINVAL);
	uiw_rdma_say_once("cq-resize", "ibv_resize_cq(): not supported on uiwarp (the CQ keeps its "
			  "size): EOPNOTSUPP");
	return pos_err(EOPNOTSUPP);
}

/* Whether RDMA Writes land in order: not promised (a peer's Writes are
 * placed as their segments arrive; only completion order is defined). */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct uiw_rdma_cq *q;
	int ret;

	if (!cq)
		return pos_err(EINVAL);
	q = uiw_rdma_container_of(cq, struct uiw_rdma_cq, cq);
	ret = uiw_destroy_cq(q->ucq);
	if (ret)
		return pos_err(-ret); /* EBUSY: a QP uses it, or events not acknowledged */
	async_drop(uiw_rdma_ctx(cq->context), cq);
	if (cq->channel)
		cq->channel->refcnt--;
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	free(q);
	return 0;
}

/* Blocks in read(2) on the channel's fd inside uiw_get_cq_event(), with no
 * lock held: a cancellation point (rping cancels this thread). */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct uiw_cq *ucq;
	void *ctx;
	struct uiw_rdma_cq *q;
	int ret;

	if (!channel || !cq) {
		errno = EINVAL;
		return -1;
	}
	ret = uiw_get_cq_event(uiw_rdma_container_of(channel, struct uiw_rdma_channel, ch)->uch, &ucq, &ctx);
	if (ret) {
		errno = -ret;
		return -1;
	}
	q = ctx;
	*cq = &q->cq;
	if (cq_context)
		*cq_context = q->cq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq)
		return;
	uiw_ack_cq_events(uiw_rdma_container_of(cq, struct uiw_rdma_cq, cq)->ucq, nevents);
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

static int op_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	int ret = uiw_req_notify_cq(uiw_rdma_container_of(cq, struct uiw_rdma_cq, cq)->ucq, solicited_only);

	return ret ? -ret : 0; /* EINVAL: no channel */
}

#define POLL_BATCH 16

static int op_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct uiw_rdma_cq *q = uiw_rdma_container_of(cq, struct uiw_rdma_cq, cq);
	struct uiw_wc uw[POLL_BATCH];
	int got = 0;

	if (num_entries < 0)
		return -EINVAL;
	while (got < num_entries) {
		int want = num_entries - got < POLL_BATCH ? num_entries - got : POLL_BATCH;
		int n = uiw_poll_cq(q->ucq, want, uw);

		if (n == -EOVERFLOW) {
			/* completions were lost: libibverbs says so as an
			 * asynchronous CQ error; the QPs using it are in error */
			uiw_rdma_say_once("cq-overflow", "a CQ overflowed: completions were lost and its QPs "
					  "moved to error (IBV_EVENT_CQ_ERR); size CQs for their queues");
			uiw_rdma_async_post(uiw_rdma_ctx(cq->context), IBV_EVENT_CQ_ERR, cq);
			continue;
		}
		if (n < 0)
			return got ? got : n;
		for (int i = 0; i < n; i++) {
			const struct uiw_wc *u = &uw[i];
			struct ibv_wc *w = &wc[got + i];

			w->wr_id = u->wr_id;
			w->status = (enum ibv_wc_status)u->status; /* same values */
			w->opcode = (enum ibv_wc_opcode)u->opcode;  /* same values */
			w->vendor_err = (u->wc_flags & UIW_WC_TERM) ? (uint32_t)u->term_layer << 16 |
									      (uint32_t)u->term_etype << 8 | u->term_ecode
								    : 0;
			w->byte_len = u->byte_len;
			w->wc_flags = 0;
			w->imm_data = 0;
			if (u->wc_flags & UIW_WC_WITH_IMM) {
				w->wc_flags |= IBV_WC_WITH_IMM;
				w->imm_data = u->imm_data; /* network order both */
			}
			if (u->wc_flags & UIW_WC_WITH_INV) {
				w->wc_flags |= IBV_WC_WITH_INV;
				w->invalidated_rkey = u->invalidated_rkey;
			}
			w->qp_num = u->qp_num;
			if (uiw_rdma_tracing())
				fprintf(stderr, "uiw-rdma: poll_cq qp %u wr_id %llu status %d opcode %d len %u\n",
					w->qp_num, (unsigned long long)w->wr_id, w->status, w->opcode, w->byte_len);
			w->src_qp = 0;
			w->pkey_index = 0;
			w->slid = 0;
			w->sl = 0;
			w->dlid_path_bits = 0;
		}
		got += n;
		if (n < want)
			break;
	}
	return got;
}

/* ---- work requests ------------------------------------------------------------- */

/* WRs converted on the stack; a longer chain gets arrays of its size, so
 * that it reaches uiwarp in one call: its WRs stay together in the queue
 * when other threads post to the QP too (as under a provider's queue lock) */
#define POST_BATCH 16

/* ibv_wr_opcode -> uiw_wr_opcode; -1 with *err set when iWARP/uiwarp has none */
static int map_send_opcode(enum ibv_wr_opcode op, int *err)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return UIW_WR_RDMA_WRITE;
	case IBV_WR_SEND:
		return UIW_WR_SEND;
	case IBV_WR_RDMA_READ:
		return UIW_WR_RDMA_READ;
	case IBV_WR_LOCAL_INV:
		return UIW_WR_LOCAL_INV;
	case IBV_WR_SEND_WITH_INV:
		return UIW_WR_SEND_WITH_INV;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (!uiw_rdma_rfc7306()) {
			say_rfc7306_off();
			*err = EOPNOTSUPP;
			return -1;
		}
		return op == IBV_WR_ATOMIC_CMP_AND_SWP ? UIW_WR_ATOMIC_CMP_AND_SWP : UIW_WR_ATOMIC_FETCH_AND_ADD;
	case IBV_WR_ATOMIC_WRITE:
		uiw_rdma_say_once("wr-atomic-write", "ibv_post_send(): IBV_WR_ATOMIC_WRITE: iWARP (RFC 7306) "
				  "has no atomic write: EOPNOTSUPP");
		*err = EOPNOTSUPP;
		return -1;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_IMM:
		if (!uiw_rdma_rfc7306()) {
			say_rfc7306_off();
			*err = EINVAL;
			return -1;
		}
		return op == IBV_WR_SEND_WITH_IMM ? UIW_WR_SEND_WITH_IMM : UIW_WR_RDMA_WRITE_WITH_IMM;
	case IBV_WR_BIND_MW:
		uiw_rdma_say_once("wr-mw", "ibv_post_send(): memory windows are not supported by uiwarp: "
				  "EINVAL");
		*err = EINVAL;
		return -1;
	default:
		uiw_rdma_say_once("wr-op", "ibv_post_send(): opcode %d is not an iWARP operation: EINVAL",
				  (int)op);
		*err = EINVAL;
		return -1;
	}
}

#define SEND_FLAGS_OK (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/* op_post_send() of @wr converted in arrays of @cap WRs (u, sge, src) */
static int post_send_chain(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
			   struct uiw_send_wr *u, struct uiw_sge (*sge)[UIW_MAX_SGE], struct ibv_send_wr **src,
			   size_t cap)
{
	struct uiw_rdma_qp *qp = uiw_rdma_qp(ibqp);

	while (wr) {
		struct ibv_send_wr *w = wr, *stop = NULL;
		struct uiw_send_wr *ubad = NULL;
		size_t n = 0;
		int err = 0, ret;

		for (; w && n < cap; w = w->next) {
			int op = map_send_opcode(w->opcode, &err);

			if (op < 0 || w->num_sge < 0 || w->num_sge > UIW_MAX_SGE ||
			    (w->num_sge && !w->sg_list) || (w->send_flags & ~(unsigned)SEND_FLAGS_OK)) {
				if (!err)
					err = EINVAL;
				stop = w;
				break;
			}
			memset(&u[n], 0, sizeof(u[n]));
			u[n].wr_id = w->wr_id;
			u[n].opcode = (enum uiw_wr_opcode)op;
			u[n].send_flags = w->send_flags | (qp->sq_sig_all ? IBV_SEND_SIGNALED : 0);
			u[n].num_sge = w->num_sge;
			u[n].sg_list = sge[n];
			for (int i = 0; i < w->num_sge; i++) {
				sge[n][i].addr = w->sg_list[i].addr;
				sge[n][i].length = w->sg_list[i].length;
				sge[n][i].lkey = w->sg_list[i].lkey;
			}
			if (op == UIW_WR_LOCAL_INV || op == UIW_WR_SEND_WITH_INV)
				u[n].invalidate_rkey = w->invalidate_rkey;
			if (op == UIW_WR_RDMA_WRITE_WITH_IMM || op == UIW_WR_SEND_WITH_IMM)
				u[n].imm_data = w->imm_data; /* network order both */
			/* small registered payloads are copied at post (inline);
			 * not an atomic's result buffer, which is written later */
			if (op != UIW_WR_RDMA_READ && op != UIW_WR_LOCAL_INV && op != UIW_WR_ATOMIC_CMP_AND_SWP &&
			    op != UIW_WR_ATOMIC_FETCH_AND_ADD && !(u[n].send_flags & UIW_SEND_INLINE)) {
				uint64_t total = 0;

				for (int i = 0; i < w->num_sge; i++)
					total += w->sg_list[i].length;
				if (total <= UIW_RDMA_COPY_MAX && sges_registered(ibqp->pd, w))
					u[n].send_flags |= UIW_SEND_INLINE;
			}
			if (op == UIW_WR_ATOMIC_CMP_AND_SWP || op == UIW_WR_ATOMIC_FETCH_AND_ADD) {
				u[n].wr.atomic.remote_addr = w->wr.atomic.remote_addr;
				u[n].wr.atomic.rkey = w->wr.atomic.rkey;
				u[n].wr.atomic.compare_add = w->wr.atomic.compare_add;
				u[n].wr.atomic.swap = w->wr.atomic.swap;
			} else {
				u[n].wr.rdma.remote_addr = w->wr.rdma.remote_addr;
				u[n].wr.rdma.rkey = w->wr.rdma.rkey;
			}
			if (uiw_rdma_tracing())
				fprintf(stderr, "uiw-rdma: post_send qp %u wr_id %llu op %d flags 0x%x sge %d len %u\n",
					ibqp->qp_num, (unsigned long long)w->wr_id, op, u[n].send_flags,
					w->num_sge, w->num_sge ? w->sg_list[0].length : 0);
			if (n)
				u[n - 1].next = &u[n];
			src[n++] = w;
		}
		if (n) {
			ret = uiw_post_send(qp->uqp, u, &ubad);
			if (ret) {
				if (bad_wr)
					*bad_wr = ubad ? src[ubad - u] : src[0];
				return pos_err(-ret);
			}
		}
		if (stop) {
			if (bad_wr)
				*bad_wr = stop;
			return pos_err(err);
		}
		wr = w;
	}
	return 0;
}

static int op_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct uiw_send_wr u[POST_BATCH];
	struct uiw_sge sge[POST_BATCH][UIW_MAX_SGE];
	struct ibv_send_wr *src[POST_BATCH];
	size_t n = 0;
	struct uiw_send_wr *hu;
	struct uiw_sge(*hsge)[UIW_MAX_SGE];
	struct ibv_send_wr **hsrc;
	int ret;

	for (struct ibv_send_wr *c = wr; c; c = c->next)
		n++;
	if (n <= POST_BATCH)
		return post_send_chain(ibqp, wr, bad_wr, u, sge, src, POST_BATCH);
	hu = malloc(n * sizeof(*hu));
	hsge = malloc(n * sizeof(*hsge));
	hsrc = malloc(n * sizeof(*hsrc));
	if (hu && hsge && hsrc) {
		ret = post_send_chain(ibqp, wr, bad_wr, hu, hsge, hsrc, n);
	} else {
		if (bad_wr)
			*bad_wr = wr; /* nothing posted */
		ret = pos_err(ENOMEM);
	}
	free(hu);
	free(hsge);
	free(hsrc);
	return ret;
}

/* post_recv_common() of @wr converted in arrays of @cap WRs (u, sge, src) */
static int post_recv_chain(struct uiw_qp *uqp, struct uiw_srq *usrq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr, struct uiw_recv_wr *u, struct uiw_sge (*sge)[UIW_MAX_SGE],
			   struct ibv_recv_wr **src, size_t cap)
{
	while (wr) {
		struct ibv_recv_wr *w = wr, *stop = NULL;
		struct uiw_recv_wr *ubad = NULL;
		size_t n = 0;
		int ret;

		for (; w && n < cap; w = w->next) {
			if (w->num_sge < 0 || w->num_sge > UIW_MAX_SGE || (w->num_sge && !w->sg_list)) {
				stop = w;
				break;
			}
			u[n].wr_id = w->wr_id;
			u[n].next = NULL;
			u[n].num_sge = w->num_sge;
			u[n].sg_list = sge[n];
			for (int i = 0; i < w->num_sge; i++) {
				sge[n][i].addr = w->sg_list[i].addr;
				sge[n][i].length = w->sg_list[i].length;
				sge[n][i].lkey = w->sg_list[i].lkey;
			}
			if (n)
				u[n - 1].next = &u[n];
			src[n++] = w;
		}
		if (n) {
			ret = uqp ? uiw_post_recv(uqp, u, &ubad) : uiw_post_srq_recv(usrq, u, &ubad);
			if (ret) {
				if (bad_wr)
					*bad_wr = ubad ? src[ubad - u] : src[0];
				return pos_err(-ret);
			}
		}
		if (stop) {
			if (bad_wr)
				*bad_wr = stop;
			return pos_err(EINVAL);
		}
		wr = w;
	}
	return 0;
}

/* a chain of receives in one uiw_post_recv(), as op_post_send() */
static int post_recv_common(struct uiw_qp *uqp, struct uiw_srq *usrq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	struct uiw_recv_wr u[POST_BATCH];
	struct uiw_sge sge[POST_BATCH][UIW_MAX_SGE];
	struct ibv_recv_wr *src[POST_BATCH];
	size_t n = 0;
	struct uiw_recv_wr *hu;
	struct uiw_sge(*hsge)[UIW_MAX_SGE];
	struct ibv_recv_wr **hsrc;
	int ret;

	for (struct ibv_recv_wr *c = wr; c; c = c->next)
		n++;
	if (n <= POST_BATCH)
		return post_recv_chain(uqp, usrq, wr, bad_wr, u, sge, src, POST_BATCH);
	hu = malloc(n * sizeof(*hu));
	hsge = malloc(n * sizeof(*hsge));
	hsrc = malloc(n * sizeof(*hsrc));
	if (hu && hsge && hsrc) {
		ret = post_recv_chain(uqp, usrq, wr, bad_wr, hu, hsge, hsrc, n);
	} else {
		if (bad_wr)
			*bad_wr = wr; /* nothing posted */
		ret = pos_err(ENOMEM);
	}
	free(hu);
	free(hsge);
	free(hsrc);
	return ret;
}

static int op_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return post_recv_common(uiw_rdma_qp(ibqp)->uqp, NULL, wr, bad_wr);
}

static int op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return post_recv_common(NULL, uiw_rdma_container_of(srq, struct uiw_rdma_srq, srq)->usrq, wr, bad_wr);
}

/* ---- shared receive queues ---------------------------------------------------- */

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct uiw_srq_init_attr ua;
	struct uiw_rdma_srq *s;
	int ret;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&ua, 0, sizeof(ua));
	ua.max_wr = attr->attr.max_wr;
	ua.max_sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	ret = uiw_create_srq(upd_of(pd), &ua, &s->usrq);
	if (ret) {
		free(s);
		errno = -ret;
		return NULL;
	}
	attr->attr.max_sge = ua.max_sge;
	s->max_wr = ua.max_wr;
	s->max_sge = ua.max_sge;
	s->srq.context = pd->context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = next_handle();
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct uiw_rdma_srq *s;
	int ret;

	if (!srq)
		return pos_err(EINVAL);
	s = uiw_rdma_container_of(srq, struct uiw_rdma_srq, srq);
	ret = uiw_destroy_srq(s->usrq);
	if (ret)
		return pos_err(-ret); /* EBUSY: a QP uses it */
	async_drop(uiw_rdma_ctx(srq->context), srq);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct uiw_rdma_srq *s;

	if (!srq || !attr)
		return pos_err(EINVAL);
	s = uiw_rdma_container_of(srq, struct uiw_rdma_srq, srq);
	memset(attr, 0, sizeof(*attr));
	attr->max_wr = s->max_wr;
	attr->max_sge = s->max_sge;
	attr->srq_limit = 0; /* no limit armed: uiwarp has no SRQ limit event */
	return 0;
}

/* Neither resizing (as Linux siw) nor the limit event (which siw has) is
 * there: the SRQ is left as it was. */
int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	if (!srq || !attr || (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return pos_err(EINVAL);
	if (!attr_mask)
		return 0;
	uiw_rdma_say_once("srq-modify", "ibv_modify_srq(): uiwarp can neither resize an SRQ nor arm "
			  "its limit event: EOPNOTSUPP");
	return pos_err(EOPNOTSUPP);
}

/* ---- queue pairs ---------------------------------------------------------------- */

static void qpx_init_ops(struct uiw_rdma_qp *qp);

static struct ibv_qp *create_qp(struct ibv_context *context, struct ibv_pd *pd,
				struct ibv_qp_init_attr_ex *a)
{
	struct uiw_qp_init_attr ua;
	struct uiw_rdma_qp *qp;
	int ret;

	if (!pd || !a || pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RC) {
		uiw_rdma_say_once("qp-type", "ibv_create_qp(): QP type %d: iWARP has reliable connected "
				  "QPs only (IBV_QPT_RC): EOPNOTSUPP", (int)a->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		uiw_rdma_say_once("qp-mask", "ibv_create_qp_ex(): comp_mask 0x%x: only PD and send_ops_flags "
				  "are supported: EOPNOTSUPP", a->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
					     IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_LOCAL_INV |
					     IBV_QP_EX_WITH_SEND_WITH_INV |
					     (uiw_rdma_rfc7306() ? IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
									  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
									  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
									  IBV_QP_EX_WITH_SEND_WITH_IMM
								: 0)))) {
		uiw_rdma_say_once("qp-ops", "ibv_create_qp_ex(): send_ops_flags 0x%llx: iWARP has Write, "
				  "Send, Read, Send with Invalidate and local invalidate (and RFC 7306's atomics "
				  "and immediates with UIW_RDMA_RFC7306=1) only: EOPNOTSUPP",
				  (unsigned long long)a->send_ops_flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!a->send_cq || !a->recv_cq || a->send_cq->context != context || a->recv_cq->context != context ||
	    (a->srq && a->srq->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	memset(&ua, 0, sizeof(ua));
	ua.ext = uiw_rdma_rfc7306() ? UIW_QP_EXT_RFC7306 : 0;
	ua.send_cq = uiw_rdma_container_of(a->send_cq, struct uiw_rdma_cq, cq)->ucq;
	ua.recv_cq = uiw_rdma_container_of(a->recv_cq, struct uiw_rdma_cq, cq)->ucq;
	ua.srq = a->srq ? uiw_rdma_container_of(a->srq, struct uiw_rdma_srq, srq)->usrq : NULL;
	/* 0: no such queue (posting to it fails with EINVAL) */
	ua.cap.max_send_wr = a->cap.max_send_wr;
	ua.cap.max_recv_wr = a->srq ? 0 : a->cap.max_recv_wr;
	ua.cap.max_send_sge = a->cap.max_send_sge ? a->cap.max_send_sge : 1;
	ua.cap.max_recv_sge = a->cap.max_recv_sge ? a->cap.max_recv_sge : 1;
	ua.cap.max_inline_data =
		a->cap.max_inline_data > UIW_RDMA_COPY_MAX ? a->cap.max_inline_data : UIW_RDMA_COPY_MAX;
	ua.ird = UIW_RDMA_QP_IRD_ORD;
	ua.ord = UIW_RDMA_QP_IRD_ORD;
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = uiw_create_qp(upd_of(pd), &ua, &qp->uqp);
	if (ret) {
		free(qp);
		errno = -ret; /* EINVAL: SGEs above 6, inline above 65536, ... */
		return NULL;
	}
	/* what the QP has (libibverbs writes it back into the caller's cap) */
	a->cap.max_send_wr = ua.cap.max_send_wr;
	a->cap.max_recv_wr = a->srq ? 0 : ua.cap.max_recv_wr;
	a->cap.max_send_sge = ua.cap.max_send_sge;
	a->cap.max_recv_sge = ua.cap.max_recv_sge;
	qp->cap = a->cap;
	qp->sq_sig_all = a->sq_sig_all;
	qp->bk_state = IBV_QPS_RESET;
	qp->qpx.qp_base.context = context;
	qp->qpx.qp_base.qp_context = a->qp_context;
	qp->qpx.qp_base.pd = pd;
	qp->qpx.qp_base.send_cq = a->send_cq;
	qp->qpx.qp_base.recv_cq = a->recv_cq;
	qp->qpx.qp_base.srq = a->srq;
	qp->qpx.qp_base.handle = next_handle();
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	qp->qpx.qp_base.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	pthread_mutex_init(&qp->xlock, NULL);
	qpx_init_ops(qp);
	qp->qpx.qp_base.qp_num = uiw_qp_num(qp->uqp);
	uiw_qp_set_context(qp->uqp, qp);
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: create_qp %u ctx %p sq %u rq %u inline %u\n", qp->qpx.qp_base.qp_num,
			(void *)context, ua.cap.max_send_wr, ua.cap.max_recv_wr, ua.cap.max_inline_data);
	return &qp->qpx.qp_base;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.qp_context = attr->qp_context;
	a.send_cq = attr->send_cq;
	a.recv_cq = attr->recv_cq;
	a.srq = attr->srq;
	a.cap = attr->cap;
	a.qp_type = attr->qp_type;
	a.sq_sig_all = attr->sq_sig_all;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = create_qp(pd->context, pd, &a);
	if (qp)
		attr->cap = a.cap;
	return qp;
}

/* verbs_context.create_qp_ex: what ibv_create_qp_ex() (inline) calls */
static struct ibv_qp *op_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	if (!a || !(a->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	return create_qp(context, a->pd, a);
}

/* the state the application sees: uiwarp's once connected or failed, the
 * bookkeeping of modify_qp before */
static enum ibv_qp_state qp_state(struct uiw_rdma_qp *qp)
{
	struct uiw_qp_attr ua;

	memset(&ua, 0, sizeof(ua));
	if (uiw_query_qp(qp->uqp, &ua))
		return qp->bk_state;
	switch (ua.qp_state) {
	case UIW_QPS_INIT:
		return qp->bk_state;
	case UIW_QPS_RTS:
		return IBV_QPS_RTS;
	case UIW_QPS_SQD:
		return IBV_QPS_SQD;
	case UIW_QPS_SQE:
		return IBV_QPS_SQE;
	case UIW_QPS_ERR:
		return IBV_QPS_ERR;
	default:
		return qp->bk_state;
	}
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct uiw_rdma_qp *qp;
	enum ibv_qp_state cur;

	if (!ibqp || !attr)
		return pos_err(EINVAL);
	qp = uiw_rdma_qp(ibqp);
	if (!(attr_mask & IBV_QP_STATE))
		return 0; /* path, timeout, retry, PSN attributes: nothing on TCP */
	cur = qp_state(qp);
	switch (attr->qp_state) {
	case IBV_QPS_ERR: {
		struct uiw_qp_attr ua;
		int ret;

		memset(&ua, 0, sizeof(ua));
		ua.qp_state = UIW_QPS_ERR;
		ret = uiw_modify_qp(qp->uqp, &ua, UIW_QP_STATE);
		if (ret)
			return pos_err(-ret);
		qp->bk_state = IBV_QPS_ERR;
		ibqp->state = IBV_QPS_ERR;
		return 0;
	}
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
	case IBV_QPS_RTS:
		/* the connection manager moves an iWARP QP; these are
		 * bookkeeping.  Out of error there is no way back. */
		if (cur == IBV_QPS_ERR || cur == IBV_QPS_SQE)
			return pos_err(EINVAL);
		if (cur == IBV_QPS_RTS || cur == IBV_QPS_SQD) {
			/* connected already: the program's own INIT/RTR/RTS
			 * steps after CONNECT_RESPONSE (rping -q) change
			 * nothing; a reset would need the connection gone */
			if (attr->qp_state == IBV_QPS_RESET)
				return pos_err(EINVAL);
			return 0;
		}
		qp->bk_state = attr->qp_state;
		ibqp->state = attr->qp_state;
		return 0;
	default:
		uiw_rdma_say_once("qp-state", "ibv_modify_qp(): to state %d: an iWARP QP is moved by its "
				  "connection (only RESET/INIT/RTR/RTS bookkeeping and ERR): EINVAL",
				  (int)attr->qp_state);
		return pos_err(EINVAL);
	}
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct uiw_rdma_qp *qp;
	struct uiw_qp_attr ua;

	(void)attr_mask; /* everything is cheap: all of it is filled */
	if (!ibqp || !attr)
		return pos_err(EINVAL);
	qp = uiw_rdma_qp(ibqp);
	memset(&ua, 0, sizeof(ua));
	uiw_query_qp(qp->uqp, &ua);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = IBV_MTU_4096;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	attr->cap = qp->cap;
	attr->max_rd_atomic = (uint8_t)(ua.ord > 255 ? 255 : ua.ord);
	attr->max_dest_rd_atomic = (uint8_t)(ua.ird > 255 ? 255 : ua.ird);
	attr->port_num = 1;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = ibqp->qp_context;
		init_attr->send_cq = ibqp->send_cq;
		init_attr->recv_cq = ibqp->recv_cq;
		init_attr->srq = ibqp->srq;
		init_attr->cap = qp->cap;
		init_attr->qp_type = IBV_QPT_RC;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

static void qpx_reset(struct uiw_rdma_qp *qp);

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct uiw_rdma_qp *qp;
	int ret;

	if (!ibqp)
		return pos_err(EINVAL);
	qp = uiw_rdma_qp(ibqp);
	/* a live connection is reset, its id kept (uiwarp's abortive
	 * detach); the CM side forgets the QP */
	ret = uiw_rdma_cm_destroy_uqp(qp);
	if (ret)
		return pos_err(-ret);
	async_drop(uiw_rdma_ctx(ibqp->context), ibqp);
	qpx_reset(qp);
	free(qp->xwr);
	free(qp->xsge);
	free(qp->xinl);
	pthread_mutex_destroy(&qp->xlock);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}

/* ---- ibv_qp_ex: ibv_wr_start() ... ibv_wr_complete() ---------------------------
 * The wr_* calls build a chain of uiw_send_wr in the QP; wr_complete()
 * posts it, whole or not at all (libibverbs: nothing is posted unless it
 * returns 0): a call iWARP has no operation for (EOPNOTSUPP or EINVAL), or
 * a WR uiwarp refuses (a bad lkey: EPERM; no room for the whole chain in
 * the send queue: ENOMEM; an inline WR too long, ...) fails the batch.
 * wr_start() takes the QP's xlock, wr_complete() and wr_abort() release
 * it: one thread's batch at a time per QP, as libibverbs' providers
 * serialise them. */

static struct uiw_rdma_qp *xqp(struct ibv_qp_ex *q)
{
	return uiw_rdma_container_of(q, struct uiw_rdma_qp, qpx);
}

static void qpx_reset(struct uiw_rdma_qp *qp)
{
	for (unsigned i = 0; i < qp->xn; i++) {
		free(qp->xinl[i]);
		qp->xinl[i] = NULL;
	}
	qp->xn = 0;
	qp->xerr = 0;
}

static void x_start(struct ibv_qp_ex *q)
{
	struct uiw_rdma_qp *qp = xqp(q);

	pthread_mutex_lock(&qp->xlock);
	qpx_reset(qp);
}

/* the SGEs of the @i-th WR of the chain (valid until the next x_new()) */
static struct uiw_sge *x_sge(struct uiw_rdma_qp *qp, unsigned i)
{
	return &qp->xsge[(size_t)i * UIW_MAX_SGE];
}

/* a new WR at the end of the chain (NULL: no room; xerr says why) */
static struct uiw_send_wr *x_new(struct ibv_qp_ex *q, enum uiw_wr_opcode op)
{
	struct uiw_rdma_qp *qp = xqp(q);
	struct uiw_send_wr *w;

	if (qp->xerr)
		return NULL;
	if (qp->xn == qp->xcap) {
		unsigned cap = qp->xcap ? qp->xcap * 2 : 16;
		struct uiw_send_wr *nw = realloc(qp->xwr, cap * sizeof(*nw));
		struct uiw_sge *ns;
		void **ni;

		if (nw)
			qp->xwr = nw;
		ns = nw ? realloc(qp->xsge, cap * UIW_MAX_SGE * sizeof(*ns)) : NULL;
		if (ns)
			qp->xsge = ns;
		ni = ns ? realloc(qp->xinl, cap * sizeof(*ni)) : NULL;
		if (!ni) {
			qp->xerr = ENOMEM;
			return NULL;
		}
		qp->xinl = ni;
		for (unsigned i = qp->xcap; i < cap; i++)
			ni[i] = NULL;
		qp->xcap = cap;
	}
	w = &qp->xwr[qp->xn];
	memset(w, 0, sizeof(*w));
	w->wr_id = q->wr_id;
	w->opcode = op;
	w->send_flags = q->wr_flags | (qp->sq_sig_all ? IBV_SEND_SIGNALED : 0);
	qp->xn++;
	return w;
}

/* the WR being built (the last one) */
static struct uiw_send_wr *x_cur(struct ibv_qp_ex *q)
{
	struct uiw_rdma_qp *qp = xqp(q);

	if (qp->xerr)
		return NULL;
	if (!qp->xn) {
		qp->xerr = EINVAL;
		return NULL;
	}
	return &qp->xwr[qp->xn - 1];
}

static void x_fail(struct ibv_qp_ex *q, int err)
{
	if (!xqp(q)->xerr)
		xqp(q)->xerr = err;
}

static void x_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	struct uiw_send_wr *w = x_new(q, UIW_WR_RDMA_WRITE);

	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void x_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	struct uiw_send_wr *w = x_new(q, UIW_WR_RDMA_READ);

	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void x_send(struct ibv_qp_ex *q)
{
	x_new(q, UIW_WR_SEND);
}

static void x_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	struct uiw_send_wr *w = x_new(q, UIW_WR_SEND_WITH_INV);

	if (w)
		w->invalidate_rkey = rkey;
}

static void x_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	struct uiw_send_wr *w = x_new(q, UIW_WR_LOCAL_INV);

	if (w)
		w->invalidate_rkey = rkey;
}

/* a WR of RFC 7306's @op in the chain, or NULL with wr_complete() to fail
 * with @off_err when RFC 7306 is off */
static struct uiw_send_wr *x_new_rfc7306(struct ibv_qp_ex *q, enum uiw_wr_opcode op, int off_err)
{
	if (!uiw_rdma_rfc7306()) {
		say_rfc7306_off();
		x_fail(q, off_err);
		return NULL;
	}
	return x_new(q, op);
}

static void x_atomic(struct ibv_qp_ex *q, enum uiw_wr_opcode op, uint32_t rkey, uint64_t addr, uint64_t c,
		     uint64_t s)
{
	struct uiw_send_wr *w = x_new_rfc7306(q, op, EOPNOTSUPP);

	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = c;
		w->wr.atomic.swap = s;
	}
}

static void x_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t c, uint64_t s)
{
	x_atomic(q, UIW_WR_ATOMIC_CMP_AND_SWP, rkey, addr, c, s);
}

static void x_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t add)
{
	x_atomic(q, UIW_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void x_atomic_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, const void *v)
{
	(void)rkey, (void)addr, (void)v;
	uiw_rdma_say_once("wr-atomic-write", "ibv_wr_atomic_write(): iWARP (RFC 7306) has no atomic write: "
			  "EOPNOTSUPP");
	x_fail(q, EOPNOTSUPP);
}

static void x_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
		      const struct ibv_mw_bind_info *bi)
{
	(void)mw, (void)rkey, (void)bi;
	uiw_rdma_say_once("wr-mw", "ibv_wr_bind_mw(): memory windows are not supported by uiwarp: EINVAL");
	x_fail(q, EINVAL);
}

static void x_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct uiw_send_wr *w = x_new_rfc7306(q, UIW_WR_RDMA_WRITE_WITH_IMM, EINVAL);

	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
		w->imm_data = imm;
	}
}

static void x_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	struct uiw_send_wr *w = x_new_rfc7306(q, UIW_WR_SEND_WITH_IMM, EINVAL);

	if (w)
		w->imm_data = imm;
}

static void x_send_tso(struct ibv_qp_ex *q, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	x_fail(q, EINVAL);
}

static void x_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)ah, (void)qpn, (void)qkey;
	x_fail(q, EINVAL);
}

static void x_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	(void)srqn;
	x_fail(q, EINVAL);
}

static void x_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct uiw_send_wr *w = x_cur(q);
	struct uiw_sge *g;

	if (!w)
		return;
	g = x_sge(xqp(q), xqp(q)->xn - 1);
	w->num_sge = 1;
	g[0].addr = addr;
	g[0].length = length;
	g[0].lkey = lkey;
}

static void x_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *l)
{
	struct uiw_send_wr *w = x_cur(q);
	struct uiw_sge *g;

	if (!w)
		return;
	if (n > UIW_MAX_SGE || (n && !l)) {
		x_fail(q, EINVAL);
		return;
	}
	g = x_sge(xqp(q), xqp(q)->xn - 1);
	w->num_sge = (int)n;
	for (size_t i = 0; i < n; i++) {
		g[i].addr = l[i].addr;
		g[i].length = l[i].length;
		g[i].lkey = l[i].lkey;
	}
}

/* inline data is the caller's only until the call returns: copied now */
static void x_set_inline_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *l)
{
	struct uiw_rdma_qp *qp = xqp(q);
	struct uiw_send_wr *w = x_cur(q);
	size_t len = 0, off = 0;
	struct uiw_sge *g;
	char *buf;

	if (!w)
		return;
	for (size_t i = 0; i < n; i++) {
		if (l[i].length > UIW_MAX_INLINE - len) {
			x_fail(q, EINVAL);
			return;
		}
		len += l[i].length;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		x_fail(q, ENOMEM);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(buf + off, l[i].addr, l[i].length);
		off += l[i].length;
	}
	free(qp->xinl[qp->xn - 1]);
	qp->xinl[qp->xn - 1] = buf;
	w->send_flags |= UIW_SEND_INLINE;
	w->num_sge = 1;
	g = x_sge(qp, qp->xn - 1);
	g[0].addr = (uintptr_t)buf;
	g[0].length = (uint32_t)len;
	g[0].lkey = 0;
}

static void x_set_inline(struct ibv_qp_ex *q, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};

	x_set_inline_list(q, 1, &b);
}

static int x_complete(struct ibv_qp_ex *q)
{
	struct uiw_rdma_qp *qp = xqp(q);
	struct uiw_send_wr *bad = NULL;
	int ret = 0;

	if (qp->xerr) {
		ret = qp->xerr;
	} else if (qp->xn) {
		for (unsigned i = 0; i < qp->xn; i++) {
			qp->xwr[i].sg_list = x_sge(qp, i);
			qp->xwr[i].next = i + 1 < qp->xn ? &qp->xwr[i + 1] : NULL;
		}
		ret = -uiw_post_send_all(qp->uqp, qp->xwr, &bad);
	}
	qpx_reset(qp);
	pthread_mutex_unlock(&qp->xlock);
	if (ret)
		errno = ret;
	return ret;
}

static void x_abort(struct ibv_qp_ex *q)
{
	struct uiw_rdma_qp *qp = xqp(q);

	qpx_reset(qp);
	pthread_mutex_unlock(&qp->xlock);
}

static void qpx_init_ops(struct uiw_rdma_qp *qp)
{
	struct ibv_qp_ex *q = &qp->qpx;

	q->wr_atomic_cmp_swp = x_atomic_cmp_swp;
	q->wr_atomic_fetch_add = x_atomic_fetch_add;
	q->wr_bind_mw = x_bind_mw;
	q->wr_local_inv = x_local_inv;
	q->wr_rdma_read = x_rdma_read;
	q->wr_rdma_write = x_rdma_write;
	q->wr_rdma_write_imm = x_write_imm;
	q->wr_send = x_send;
	q->wr_send_imm = x_send_imm;
	q->wr_send_inv = x_send_inv;
	q->wr_send_tso = x_send_tso;
	q->wr_set_ud_addr = x_set_ud_addr;
	q->wr_set_xrc_srqn = x_set_xrc_srqn;
	q->wr_set_inline_data = x_set_inline;
	q->wr_set_inline_data_list = x_set_inline_list;
	q->wr_set_sge = x_set_sge;
	q->wr_set_sge_list = x_set_sge_list;
	q->wr_start = x_start;
	q->wr_complete = x_complete;
	q->wr_abort = x_abort;
	q->wr_atomic_write = x_atomic_write;
}

/* Every QP has its ibv_qp_ex (rdma-core answers NULL for a QP created
 * without send_ops_flags; ours work either way). */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (!qp) {
		errno = EINVAL;
		return NULL;
	}
	return &uiw_rdma_qp(qp)->qpx;
}

/* ---- the context's operations ------------------------------------------------ */

void uiw_rdma_init_ops(struct uiw_rdma_context *rc)
{
	struct ibv_context_ops *o = &rc->vctx.context.ops;

	o->poll_cq = op_poll_cq;
	o->req_notify_cq = op_req_notify_cq;
	o->post_send = op_post_send;
	o->post_recv = op_post_recv;
	o->post_srq_recv = op_post_srq_recv;
	rc->vctx.create_qp_ex = op_create_qp_ex;
}
