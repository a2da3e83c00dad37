/* SPDX-License-Identifier: MIT */
/*
 * rpc_rdma.c - ONC RPC over RPC-over-RDMA (rpc_rdma.h).
 * NOT FINISHED: the transport underneath (rpcrdma_xprt.c) is being written;
 * until it lands, clnt_rdma_create() and svc_rdma_create() fail with
 * -ENOSYS and say so.
 */
#include "rpc_rdma.h"

#include <errno.h>

static const char *not_yet = "RPC-over-RDMA transport not available in this build (issue 6, in progress)";

CLIENT *clnt_rdma_create(const char *host, int port, rpcprog_t prog, rpcvers_t vers,
			 const struct rpc_rdma_opts *opts)
{
	(void)host;
	(void)port;
	(void)prog;
	(void)vers;
	(void)opts;
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = ENOSYS;
	return NULL;
}

const char *clnt_rdma_strerror(void)
{
	return not_yet;
}

SVCXPRT *svc_rdma_create(const char *addr, int port, const struct rpc_rdma_opts *opts)
{
	(void)addr;
	(void)port;
	(void)opts;
	return NULL;
}

int svc_rdma_port(SVCXPRT *xprt)
{
	(void)xprt;
	return -1;
}

void svc_rdma_info(SVCXPRT *xprt, struct rpc_rdma_info *info)
{
	(void)xprt;
	(void)info;
}

const char *svc_rdma_strerror(void)
{
	return not_yet;
}
