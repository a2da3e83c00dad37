/* SPDX-License-Identifier: MIT */
/*
 * libuiw-rdma: the calls not implemented yet (issue 19's later slices), and
 * those an iWARP adapter refuses.  Every name rdma-core's utilities and
 * perftest import is defined, so that a BIND_NOW program loads; a call that
 * is not there yet says so on stderr (once per name) and fails the way
 * rdma-core reports failures: NULL with errno, a positive errno, or -1 with
 * errno (librdmacm), here ENOSYS.  docs/RDMA-COMPAT.md and uiw-run --help
 * list them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "uiw_rdma.h"

#undef ibv_reg_mr

#define UNIMPL_NAMES_MAX 64
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *said[UNIMPL_NAMES_MAX];

void uiw_rdma_unimplemented(const char *fn)
{
	unsigned i;

	pthread_mutex_lock(&said_lock);
	for (i = 0; i < UNIMPL_NAMES_MAX && said[i]; i++)
		if (said[i] == fn)
			break;
	if (i < UNIMPL_NAMES_MAX && !said[i]) {
		said[i] = fn;
		fprintf(stderr,
			"uiw-rdma: %s() is not implemented yet on uiwarp (device discovery and query "
			"are; see uiw-run --help)\n",
			fn);
	}
	pthread_mutex_unlock(&said_lock);
	errno = ENOSYS;
}

/* NULL + errno */
#define NOT_YET_PTR()                                                                          \
	do {                                                                                   \
		uiw_rdma_unimplemented(__func__);                                              \
		return NULL;                                                                   \
	} while (0)
/* libibverbs: a positive errno (errno set too) */
#define NOT_YET_POS()                                                                          \
	do {                                                                                   \
		uiw_rdma_unimplemented(__func__);                                              \
		return ENOSYS;                                                                 \
	} while (0)
/* librdmacm and the blocking libibverbs calls: -1 + errno */
#define NOT_YET_NEG()                                                                          \
	do {                                                                                   \
		uiw_rdma_unimplemented(__func__);                                              \
		return -1;                                                                     \
	} while (0)

/* ---- libibverbs -------------------------------------------------------------- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) { (void)context; NOT_YET_PTR(); }
int ibv_dealloc_pd(struct ibv_pd *pd) { (void)pd; NOT_YET_POS(); }

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	(void)pd, (void)addr, (void)length, (void)access;
	NOT_YET_PTR();
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	(void)pd, (void)addr, (void)length, (void)iova, (void)access;
	NOT_YET_PTR();
}

int ibv_dereg_mr(struct ibv_mr *mr) { (void)mr; NOT_YET_POS(); }

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	(void)context;
	NOT_YET_PTR();
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel) { (void)channel; NOT_YET_POS(); }

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	(void)context, (void)cqe, (void)cq_context, (void)channel, (void)comp_vector;
	NOT_YET_PTR();
}

int ibv_destroy_cq(struct ibv_cq *cq) { (void)cq; NOT_YET_POS(); }

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	(void)channel, (void)cq, (void)cq_context;
	NOT_YET_NEG();
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	(void)cq, (void)nevents;
	uiw_rdma_unimplemented(__func__);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	(void)pd, (void)qp_init_attr;
	NOT_YET_PTR();
}

int ibv_destroy_qp(struct ibv_qp *qp) { (void)qp; NOT_YET_POS(); }

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	(void)qp, (void)attr, (void)attr_mask;
	NOT_YET_POS();
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	(void)qp, (void)attr, (void)attr_mask, (void)init_attr;
	NOT_YET_POS();
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp) { (void)qp; NOT_YET_PTR(); }

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	(void)pd, (void)srq_init_attr;
	NOT_YET_PTR();
}

int ibv_destroy_srq(struct ibv_srq *srq) { (void)srq; NOT_YET_POS(); }

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	(void)context, (void)event;
	NOT_YET_NEG();
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
	uiw_rdma_unimplemented(__func__);
}

/* What iWARP has not: address handles (UD), multicast.  Final answers. */
struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd, (void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	(void)pd, (void)wc, (void)grh, (void)port_num;
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah; /* none can exist */
	errno = EINVAL;
	return EINVAL;
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* memory is the process's own: fork needs no preparation */
int ibv_fork_init(void)
{
	return 0;
}

/* ---- librdmacm --------------------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void) { NOT_YET_PTR(); }

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	(void)channel;
	uiw_rdma_unimplemented(__func__);
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	(void)channel, (void)id, (void)context, (void)ps;
	NOT_YET_NEG();
}

int rdma_destroy_id(struct rdma_cm_id *id) { (void)id; NOT_YET_NEG(); }

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	NOT_YET_NEG();
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	(void)id, (void)src_addr, (void)dst_addr, (void)timeout_ms;
	NOT_YET_NEG();
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	(void)id, (void)timeout_ms;
	NOT_YET_NEG();
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	(void)id, (void)pd, (void)qp_init_attr;
	NOT_YET_NEG();
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *qp_init_attr)
{
	(void)id, (void)qp_init_attr;
	NOT_YET_NEG();
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	(void)id;
	uiw_rdma_unimplemented(__func__);
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	NOT_YET_NEG();
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	(void)id, (void)conn_param;
	NOT_YET_NEG();
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	(void)id, (void)backlog;
	NOT_YET_NEG();
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	(void)listen, (void)id;
	NOT_YET_NEG();
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	(void)id, (void)conn_param;
	NOT_YET_NEG();
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	NOT_YET_NEG();
}

int rdma_establish(struct rdma_cm_id *id) { (void)id; NOT_YET_NEG(); }
int rdma_disconnect(struct rdma_cm_id *id) { (void)id; NOT_YET_NEG(); }

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	(void)id, (void)qp_attr, (void)qp_attr_mask;
	NOT_YET_NEG();
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	(void)channel, (void)event;
	NOT_YET_NEG();
}

int rdma_ack_cm_event(struct rdma_cm_event *event) { (void)event; NOT_YET_NEG(); }

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)id, (void)level, (void)optname, (void)optval, (void)optlen;
	NOT_YET_NEG();
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	(void)id, (void)channel;
	NOT_YET_NEG();
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	(void)node, (void)service, (void)hints, (void)res;
	NOT_YET_NEG();
}

/* rdma_getaddrinfo() never returned a list yet: nothing to free */
void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	(void)res;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	(void)id, (void)res, (void)pd, (void)qp_init_attr;
	NOT_YET_NEG();
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	(void)id;
	uiw_rdma_unimplemented(__func__);
}

/* iWARP has no multicast */
int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	errno = EOPNOTSUPP;
	return -1;
}
