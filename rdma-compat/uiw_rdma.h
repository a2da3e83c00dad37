/* SPDX-License-Identifier: MIT */
/*
 * uiw_rdma.h - internals of libuiw-rdma, the libibverbs/librdmacm-compatible
 * library that runs unmodified rdma-core programs on uiwarp (LD_PRELOAD,
 * see uiw-run and docs/RDMA-COMPAT.md).  Structures are rdma-core's, from the
 * installed headers; only uiwarp's own state is declared here.  Each object
 * handed to the application is rdma-core's structure embedded in ours, so
 * that a pointer the application passes back leads to our state
 * (container_of).
 */
#ifndef UIW_RDMA_H
#define UIW_RDMA_H

#include <pthread.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include "uiw_verbs.h"

/* the one device */
#define UIW_RDMA_DEV_NAME "uiw0"
#define UIW_RDMA_MAX_GIDS 16

/* What uiwarp accepts, used for the device attributes.  Each is the bound
 * the uiw_* calls enforce (see uiw_verbs.h); tests/progs/rdma_limits.c
 * probes them through uiw_* and compat.sh compares. */
#define UIW_RDMA_MAX_SGE    UIW_MAX_SGE	       /* uiw_create_qp(), uiw_create_srq() */
#define UIW_RDMA_MAX_IRD    UIW_MAX_IRD_ORD    /* uiw_create_qp() ird/ord */
#define UIW_RDMA_MAX_INLINE UIW_MAX_INLINE     /* uiw_create_qp() max_inline_data */
#define UIW_RDMA_MAX_MR	    UIW_DEFAULT_MAX_MR /* STag table of the context we open */

/* IRD and ORD every QP is created with: the largest a librdmacm program can
 * ask for (rdma_conn_param's fields are uint8_t); the connection parameters
 * lower them (uiwarp allocates the IRD's table at QP creation, so not
 * UIW_MAX_IRD_ORD) */
#define UIW_RDMA_QP_IRD_ORD 255

#define uiw_rdma_container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

struct uiw_rdma_device {
	struct ibv_device dev; /* what the application sees */
	uint64_t guid_be;      /* node GUID, network order */
	unsigned ngids;
	union ibv_gid gids[UIW_RDMA_MAX_GIDS];
	int mtu; /* of the interface the MAC came from; 0: unknown */
};

struct uiw_rdma_async;

/* An open device: rdma-core's verbs_context (ibv_context last) and ours. */
struct uiw_rdma_context {
	struct uiw_context *uctx;
	struct uiw_rdma_device *dev;
	/* asynchronous events (ibv_get_async_event): a queue and an eventfd
	 * (semaphore mode, the context's async_fd), one unit per queued event */
	pthread_mutex_t async_lock;
	struct uiw_rdma_async *async_head, **async_tail;
	int cm_owned; /* the connection manager's (rdma_cm_id.verbs): never closed */
	struct verbs_context vctx; /* must be last: vctx.context is what callers get */
};

struct uiw_rdma_pd {
	struct ibv_pd pd;
	struct uiw_pd *upd;
};

struct uiw_rdma_mr {
	struct ibv_mr mr;
	struct uiw_mr *umr;
	struct uiw_rdma_mr *hnext; /* lkey table */
};

/* Work requests of at most this many octets are copied when posted (as
 * inline ones): a program may rewrite a small buffer before its Write or
 * Send completed (perftest's credit Writes of ib_send_bw do), which an
 * RNIC tolerates but a CRC computed apart from the copy to TCP does not. */
#define UIW_RDMA_COPY_MAX 64

struct uiw_rdma_channel {
	struct ibv_comp_channel ch;
	struct uiw_comp_channel *uch;
};

struct uiw_rdma_cq {
	struct ibv_cq cq;
	struct uiw_cq *ucq;
};

struct uiw_rdma_cm_id;

struct uiw_rdma_qp {
	struct ibv_qp_ex qpx; /* qpx.qp_base is the ibv_qp; the rest: ibv_qp_to_qp_ex() */
	struct uiw_qp *uqp;
	struct ibv_qp_cap cap; /* as created (ibv_query_qp) */
	int sq_sig_all;
	enum ibv_qp_state bk_state; /* INIT/RTR/RTS: bookkeeping */
	struct uiw_rdma_cm_id *cm; /* the CM id it serves (connect/accept), under the CM lock */
	/* ibv_wr_* (extended posting): the chain being built, capacity; all
	 * of it under @xlock, which ibv_wr_start() takes and
	 * ibv_wr_complete()/ibv_wr_abort() release (libibverbs: the provider
	 * serialises the critical regions of a QP).  A WR's SGEs are
	 * xsge[i * UIW_MAX_SGE ...]; xwr[i].sg_list is set only when the chain
	 * is posted, as xsge moves when it grows. */
	pthread_mutex_t xlock;
	struct uiw_send_wr *xwr;
	struct uiw_sge *xsge;
	unsigned xn, xcap;
	int xerr;
	void **xinl; /* inline data copied by wr_set_inline_data*() (one per WR) */
};

struct uiw_rdma_srq {
	struct ibv_srq srq;
	struct uiw_srq *usrq;
	uint32_t max_wr, max_sge; /* as created (ibv_query_srq) */
};

static inline struct uiw_rdma_context *uiw_rdma_ctx(struct ibv_context *c)
{
	return uiw_rdma_container_of(c, struct uiw_rdma_context, vctx.context);
}
static inline struct uiw_rdma_qp *uiw_rdma_qp(struct ibv_qp *qp)
{
	return uiw_rdma_container_of(qp, struct uiw_rdma_qp, qpx.qp_base);
}

struct uiw_rdma_device *uiw_rdma_device(void);
void uiw_rdma_unimplemented(const char *fn);
int uiw_rdma_tracing(void);
/* UIW_RDMA_RFC7306=1: QPs use RFC 7306 (atomics, immediate data) */
int uiw_rdma_rfc7306(void);
/* print "uiw-rdma: MSG" on stderr once per distinct @key (a string literal) */
void uiw_rdma_say_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* context ops and verbs_context ops of a new context (uiw_rdma_verbs.c) */
void uiw_rdma_init_ops(struct uiw_rdma_context *rc);
int uiw_rdma_async_init(struct uiw_rdma_context *rc);
void uiw_rdma_async_fini(struct uiw_rdma_context *rc);
/* queue an asynchronous event (QP fatal, CQ error) */
void uiw_rdma_async_post(struct uiw_rdma_context *rc, enum ibv_event_type type, void *element);
/* the QP numbered @qpn (uiwarp's numbers), NULL when none */
struct uiw_rdma_qp *uiw_rdma_qp_by_num(uint32_t qpn);
/* uiw_destroy_qp() for ibv_destroy_qp(): the CM side forgets the QP; a QP
 * whose connection is live is detached abortively by uiwarp, the id stays
 * (uiw_rdma_cm.c).  Returns uiw_destroy_qp()'s value. */
int uiw_rdma_cm_destroy_uqp(struct uiw_rdma_qp *qp);

#endif
