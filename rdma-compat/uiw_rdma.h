/* SPDX-License-Identifier: MIT */
/*
 * uiw_rdma.h - internals of libuiw-rdma, the libibverbs/librdmacm-compatible
 * library that runs unmodified rdma-core programs on uiwarp (LD_PRELOAD,
 * see uiw-run and docs/RDMA-COMPAT.md).  Structures are rdma-core's, from the
 * installed headers; only uiwarp's own state is declared here.
 */
#ifndef UIW_RDMA_H
#define UIW_RDMA_H

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

struct uiw_rdma_device {
	struct ibv_device dev; /* what the application sees */
	uint64_t guid_be;      /* node GUID, network order */
	unsigned ngids;
	union ibv_gid gids[UIW_RDMA_MAX_GIDS];
	int mtu; /* of the interface the MAC came from; 0: unknown */
};

/* An open device: rdma-core's verbs_context (ibv_context last) and ours. */
struct uiw_rdma_context {
	struct uiw_context *uctx;
	struct uiw_rdma_device *dev;
	struct verbs_context vctx; /* must be last: vctx.context is what callers get */
};

struct uiw_rdma_device *uiw_rdma_device(void);
void uiw_rdma_unimplemented(const char *fn);

#endif
