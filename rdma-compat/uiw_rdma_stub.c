/* SPDX-License-Identifier: MIT */
/*
 * libuiw-rdma: the calls an iWARP adapter refuses, and the place for calls
 * not implemented yet: such a call says so on stderr (once per name, through
 * uiw_rdma_unimplemented()) and fails the way rdma-core reports failures:
 * NULL with errno, a positive errno, or -1 with errno (librdmacm), with
 * ENOSYS.  Every name rdma-core's utilities and perftest import is defined
 * (by this file or the others), so that a BIND_NOW program loads.
 * docs/RDMA-COMPAT.md and uiw-run --help list the unimplemented ones (none
 * at the moment).
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
			"uiw-rdma: %s() is not implemented yet on uiwarp (see uiw-run --help)\n",
			fn);
	}
	pthread_mutex_unlock(&said_lock);
	errno = ENOSYS;
}

/* ---- libibverbs -------------------------------------------------------------- */

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

/* What needs a kernel device or a kind of adapter uiw0 is not: dma-buf
 * memory, objects shared between processes through a command fd, IB's
 * enhanced connection establishment, address handles from a completion.
 * Final answers. */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context, (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* nothing can have been imported */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	(void)context, (void)port_num, (void)wc, (void)grh, (void)ah_attr;
	errno = EOPNOTSUPP;
	return -1;
}

/* memory is the process's own: fork needs no preparation */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* ---- librdmacm --------------------------------------------------------------- */

/* iWARP has no multicast */
int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id, (void)addr, (void)context;
	errno = EOPNOTSUPP;
	return -1;
}

/* IB's enhanced connection establishment */
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	errno = EOPNOTSUPP;
	return -1;
}
