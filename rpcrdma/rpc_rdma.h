/* SPDX-License-Identifier: MIT */
/*
 * rpc_rdma.h - ONC RPC (RFC 5531) over RPC-over-RDMA version 1 (RFC 8166,
 * RFC 8797) on uiwarp, behind libtirpc's own CLIENT and SVCXPRT types, so
 * that rpcgen-generated client stubs and server dispatch routines run
 * unchanged over RDMA (docs/RPC-API.md).
 *
 * Client: clnt_rdma_create() returns a CLIENT whose clnt_call() encodes the
 * call with XDR, moves large opaque arguments by RDMA Read (Read chunks),
 * lets large replies come by RDMA Write (a Reply chunk), and, when the
 * caller names a result buffer with CLSET_RDMA_RESULT_BUF, lets the first
 * large opaque result be written straight into it (a Write chunk).
 *
 * Server: svc_rdma_create() returns an SVCXPRT that libtirpc's svc_run()
 * serves beside its TCP/UDP transports: svc_reg() it with an rpcgen
 * dispatch routine; svc_getargs()/svc_sendreply()/svcerr_*() work as on
 * any transport.  Calls from every RDMA connection arrive through it.
 *
 * DDP eligibility (RFC 8166 §6): without an Upper-Layer Binding, the rule
 * is by size: an opaque (xdr_bytes/xdr_opaque) item of at least
 * ddp_threshold octets in a call that does not fit inline goes by Read
 * chunk; in a reply, the first such item goes into the requester's Write
 * chunk when it offered one.  NFSv3 READ and WRITE data fall under it.
 *
 * Calls in flight: clnt_call() is synchronous, but clnt_rdma_call_start()
 * and clnt_rdma_call_wait() keep several calls in flight on one CLIENT
 * from one thread, up to the credits the server grants.
 *
 * Threading: a CLIENT owns a polled uiwarp context whose io_uring ring is
 * single-issuer: the thread that creates the CLIENT (its connection setup
 * turns the engine) drives it from then on, and no other thread may call it (stricter than libtirpc's
 * clnt_vc, which allows one thread at a time): for calls in flight at once
 * open one CLIENT per thread (or keep several calls in flight on one CLIENT
 * with clnt_rdma_call_start()/clnt_rdma_call_wait()).  An SVCXPRT owns a
 * polled context too, turned by the thread that serves it: svc_run() (or
 * svc_getreq_poll()) wakes on its uiw_context_fd(); serve it from one
 * thread.
 */
#ifndef UIW_RPC_RDMA_H
#define UIW_RPC_RDMA_H

#include <rpc/rpc.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPC_RDMA_PORT 20049 /* NFS/RDMA's port (RFC 5666 §9.1, RFC 8267) */

/**
 * struct rpc_rdma_opts - settings of clnt_rdma_create()/svc_rdma_create();
 * NULL or zeroed fields take the defaults.
 * @inline_send: largest Send this side makes (default 4096; RFC 8797)
 * @inline_recv: receive buffer size this side posts (default 4096)
 * @credits: client: credits asked for; server: credits granted (default 32)
 * @ddp_threshold: smallest opaque item moved by RDMA (default 1024)
 * @max_call: server: largest call accepted, inline or pulled (default 16 MiB + 64 KiB)
 * @remote_inv: 1 advertise remote invalidation (RFC 8797 R bit), 0 not (NULL opts: 1)
 * @no_cm_pd: 1: send no RFC 8797 private data (the peer then assumes 1024)
 * @crc: MPA CRC: 1 on, 0 off, default (-1 treated as 0 here): uiwarp default
 * @connect_timeout_ms: client connection setup bound (default 10000)
 * @poll_us: client: after a call, busy-poll for the reply this many
 *	microseconds before sleeping (default 50; -1: sleep at once).  A
 *	reply within the window costs no wake-up: NULL round trips on
 *	loopback take about half as long.  Server: after a reply, look for the
 *	next call this long before svc_run() sleeps (default 50; -1: never).
 * @wait_ms: server: how long a reply (its Writes and Send) or the RDMA
 *	Reads of a call's Read chunks may take to complete on one connection
 *	(a peer that stops reading TCP or does not answer RDMA Reads) before
 *	that connection is aborted.  The server never waits for them: other
 *	connections are served meanwhile.  0: the environment's
 *	UIW_RPC_WAIT_MS, else 10000.  Client: unused.
 */
struct rpc_rdma_opts {
	uint32_t inline_send;
	uint32_t inline_recv;
	uint32_t credits;
	uint32_t ddp_threshold;
	uint64_t max_call;
	int remote_inv;
	int no_cm_pd;
	int crc;
	int connect_timeout_ms;
	int poll_us;
	int wait_ms;
};

/**
 * clnt_rdma_create() - connect to @host (name or address) port @port (0:
 * RPC_RDMA_PORT) and return a CLIENT for program @prog version @vers, with
 * AUTH_NONE (set cl_auth to authunix_create_default() etc. for AUTH_SYS).
 * Returns NULL on failure with rpc_createerr set (cf_stat
 * RPC_SYSTEMERROR / RPC_UNKNOWNHOST, cf_error.re_errno the -errno's value)
 * and a message from clnt_rdma_strerror().
 */
CLIENT *clnt_rdma_create(const char *host, int port, rpcprog_t prog, rpcvers_t vers,
			 const struct rpc_rdma_opts *opts);

/* clnt_control() requests besides libtirpc's CLSET_TIMEOUT, CLGET_TIMEOUT,
 * CLGET_XID, CLSET_XID, CLGET_VERS, CLSET_VERS, CLGET_PROG, CLSET_PROG,
 * CLGET_SERVER_ADDR (struct sockaddr_storage) and CLGET_FD (-1). */
#define CLSET_RDMA_RESULT_BUF 0x7501 /* struct rpc_rdma_buf *: next call's Write chunk */
#define CLGET_RDMA_INFO	      0x7502 /* struct rpc_rdma_info * */
#define CLSET_RDMA_RECONNECT  0x7503 /* NULL: tear down and reconnect now */
/* u_int *: the largest RPC reply, in octets, that later calls may get,
 * leaving out result data that moves by the Write chunk.  A call offers a
 * Reply chunk only when this exceeds what fits inline; 0 (the default):
 * unknown, every call offers one (of up to 16 MiB + 64 KiB).  A reply larger
 * than the bound then fails with RPC_CANTDECODERES (the server answers
 * RDMA_ERROR ERR_CHUNK).  Set it per procedure as Linux's client does
 * (e.g. NFS READ with a result buffer: a few hundred octets). */
#define CLSET_RDMA_REPLY_MAX 0x7504
#define CLGET_RDMA_REPLY_MAX 0x7505 /* u_int * */

/** struct rpc_rdma_buf - a caller buffer for the next call's result data. */
struct rpc_rdma_buf {
	void *buf;
	uint32_t len;
};

/**
 * struct rpc_rdma_info - what a connection negotiated and what it moved.
 */
struct rpc_rdma_info {
	uint32_t inline_send;	/* negotiated: largest Send to the peer */
	uint32_t inline_recv;	/* negotiated: largest Send from the peer */
	uint32_t credits;	/* last credit value granted by the server */
	int remote_inv;		/* both sides advertised remote invalidation */
	int peer_pd;		/* the peer sent RFC 8797 private data */
	uint64_t calls, replies, rdma_errors;
	uint64_t read_chunk_octets, write_chunk_octets, reply_chunk_octets;
	uint64_t reply_chunks_offered; /* calls that offered a Reply chunk */
	uint32_t outstanding;	  /* client: calls in flight now */
	uint32_t max_outstanding; /* client: the most calls in flight at once */
};

/**
 * clnt_rdma_call_start() - start a call on an RDMA CLIENT and return at
 * once, so that one thread keeps several calls in flight on one connection
 * (up to the credits the server grants and @credits of the options, at
 * most 64); clnt_call() is start + wait.  The call is encoded and sent
 * now; DDP-eligible argument memory (Read chunks, taken in place) and
 * @resp must stay untouched until clnt_rdma_call_wait() returns.
 * @result: the memory for the first large opaque result (its Write chunk),
 * or NULL (CLSET_RDMA_RESULT_BUF is for clnt_call() only).  When no credit
 * is free, replies of other calls are taken (and decoded into their result
 * structures) until one is.  @timeout: as clnt_call()'s (CLSET_TIMEOUT
 * overrides it), counted from now.  Returns RPC_SUCCESS with *@tag set, or
 * the failure (clnt_geterr()).
 */
enum clnt_stat clnt_rdma_call_start(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
				    xdrproc_t xres, void *resp, const struct rpc_rdma_buf *result,
				    struct timeval timeout, uint32_t *tag);

/**
 * clnt_rdma_call_wait() - wait for the call @tag to end and return its
 * status, as clnt_call() would have (clnt_geterr() then tells about it);
 * replies of other calls are taken meanwhile.  Every started call must be
 * waited for once, in any order.  A call that times out takes the
 * connection down (a late reply could still write into its memory): the
 * calls still in flight end with RPC_CANTRECV, and the next call
 * reconnects.
 */
enum clnt_stat clnt_rdma_call_wait(CLIENT *cl, uint32_t tag);

/** clnt_rdma_strerror() - text of the last clnt_rdma_create() failure. */
const char *clnt_rdma_strerror(void);

/**
 * svc_rdma_create() - listen on @addr (NULL: 0.0.0.0) port @port (0: the
 * kernel chooses, see svc_rdma_port()) for RPC-over-RDMA connections.  The
 * SVCXPRT is registered with libtirpc (xprt_register) under an epoll
 * descriptor, so svc_run() and svc_getreq_poll() serve it.  Returns NULL
 * with svc_rdma_strerror() on failure.
 */
SVCXPRT *svc_rdma_create(const char *addr, int port, const struct rpc_rdma_opts *opts);

/** svc_rdma_port() - the port an RDMA SVCXPRT listens on. */
int svc_rdma_port(SVCXPRT *xprt);

/** svc_rdma_info() - totals over the transport's connections so far. */
void svc_rdma_info(SVCXPRT *xprt, struct rpc_rdma_info *info);

/** svc_rdma_strerror() - text of the last svc_rdma_create() failure. */
const char *svc_rdma_strerror(void);

#ifdef __cplusplus
}
#endif

#endif /* UIW_RPC_RDMA_H */
