/* SPDX-License-Identifier: MIT */
/*
 * bulk_server - the server of the uiwarp example ONC RPC service (bulk.x):
 * rpcgen's dispatch routine (bulk_prog_1, from `rpcgen -m`) registered on a
 * libtirpc TCP transport and, unchanged, on an RPC-over-RDMA transport
 * (svc_rdma_create(), docs/RPC-API.md), both served by one svc_run() loop.
 *
 *   bulk_server [--tcp PORT] [--rdma PORT] [-a ADDR] [-q]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "bulk.h"
#include "bulk_common.h"
#include "rpc_rdma.h"

void bulk_prog_1(struct svc_req *rqstp, SVCXPRT *transp); /* rpcgen -m, bulk_svc.c */

static int quiet;

/* ---- the procedures (names and signatures from rpcgen) ---------------- */

void *bulk_null_1_svc(void *argp, struct svc_req *rq)
{
	static char dummy;

	(void)argp;
	(void)rq;
	return &dummy;
}

/* GET: the pattern of (size, seed), kept between calls of the same shape.
 * One buffer serves every call: like every libtirpc service, this one
 * owns its result memory again when svc_sendreply() returns (over RDMA the
 * transport has copied the data for the caller's Write chunk by then), so
 * the next call may refill or realloc() it */
bulk_getres *bulk_get_1_svc(bulk_getargs *a, struct svc_req *rq)
{
	static bulk_getres res;
	static uint8_t *buf;
	static size_t cap;
	static uint32_t have_seed, have_sum;
	static size_t have_len = (size_t)-1;

	(void)rq;
	if (a->size > BULK_MAX) {
		/* the client asked for more than the .x allows: a zero-length
		 * answer with sum 0 tells it so */
		res.sum = 0;
		res.data.data_len = 0;
		res.data.data_val = (char *)buf;
		return &res;
	}
	if (a->size > cap) {
		uint8_t *n = realloc(buf, a->size);

		if (!n) {
			res.sum = 0;
			res.data.data_len = 0;
			return &res;
		}
		buf = n;
		cap = a->size;
		have_len = (size_t)-1;
	}
	if (have_len != a->size || have_seed != a->seed) {
		if (a->seed) {
			bulk_fill(a->seed, buf, a->size);
			have_sum = bulk_sum(buf, a->size);
		} else {
			memset(buf, 0, a->size);
			have_sum = 0;
		}
		have_len = a->size;
		have_seed = a->seed;
	}
	res.sum = have_sum;
	res.data.data_len = a->size;
	res.data.data_val = (char *)buf;
	return &res;
}

/* PUT: checksum and pattern check of what arrived (seed 0: no checking) */
bulk_putres *bulk_put_1_svc(bulk_putargs *a, struct svc_req *rq)
{
	static bulk_putres res;
	const uint8_t *p = (const uint8_t *)a->data.data_val;
	size_t n = a->data.data_len;

	(void)rq;
	res.len = (unsigned)n;
	if (a->seed) {
		res.sum = bulk_sum(p, n);
		res.pattern_ok = bulk_check(a->seed, p, n);
	} else {
		res.sum = 0;
		res.pattern_ok = -1;
	}
	return &res;
}

int bulk_prog_1_freeresult(SVCXPRT *x, xdrproc_t xr, caddr_t r)
{
	(void)x;
	(void)xr;
	(void)r;
	/* results live in static storage (GET's buffer is kept) */
	return 1;
}

/* ---- main ------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bulk_server [--tcp PORT] [--rdma PORT] [-a ADDR] [-q]\n"
		"Serve the bulk example RPC program (0x%x version %d: NULL, GET, PUT) over\n"
		"libtirpc TCP and/or RPC-over-RDMA (uiwarp).  PORT 0 lets the kernel choose;\n"
		"the ports are printed as 'bulk_server: tcp port N' / 'rdma port N'.  Nothing\n"
		"is registered with rpcbind.  Runs until SIGINT/SIGTERM.\n"
		"  --tcp PORT    listen for ONC RPC over TCP (record marking)\n"
		"  --rdma PORT   listen for RPC-over-RDMA version 1 (RFC 8166) over uiwarp\n"
		"  -a ADDR       address to listen on (default 0.0.0.0)\n"
		"  --credits N   RDMA: credits granted per connection (receives posted;\n"
		"                default 32, at most 128)\n"
		"  --max-call N  RDMA: largest call accepted, octets (Read chunks included;\n"
		"                default 16 MiB + 64 KiB); larger: RDMA_ERROR ERR_CHUNK\n"
		"  --wait-ms N   RDMA: how long a reply or a call's RDMA Reads may take to\n"
		"                complete (default 10000) before the connection is aborted;\n"
		"                nobody waits for them meanwhile\n"
		"  --poll-us N   RDMA: after a reply, look for the next call N microseconds\n"
		"                before sleeping (default 50; -1: never)\n"
		"  -q            no per-connection messages\n",
		BULK_PROG, BULK_VERS);
}

static void on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

static int tcp_listen(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t sl = sizeof(sa);
	int fd, one = 1;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "bulk_server: bad address %s\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "bulk_server: tcp %s:%d: %s\n", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "tcp", required_argument, NULL, 't' },
					    { "rdma", required_argument, NULL, 'r' },
					    { "poll-us", required_argument, NULL, 'P' },
					    { "credits", required_argument, NULL, 'C' },
					    { "max-call", required_argument, NULL, 'M' },
					    { "wait-ms", required_argument, NULL, 'W' },
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	const char *addr = "0.0.0.0";
	int tcp_port = -1, rdma_port = -1, c;
	struct rpc_rdma_opts so = { .remote_inv = 1 };

	while ((c = getopt_long(argc, argv, "a:qh", lo, NULL)) != -1) {
		switch (c) {
		case 't': tcp_port = atoi(optarg); break;
		case 'r': rdma_port = atoi(optarg); break;
		case 'a': addr = optarg; break;
		case 'P': so.poll_us = atoi(optarg); break;
		case 'C': so.credits = (uint32_t)atoi(optarg); break;
		case 'M': so.max_call = strtoull(optarg, NULL, 0); break;
		case 'W': so.wait_ms = atoi(optarg); break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (tcp_port < 0 && rdma_port < 0)) {
		usage(stderr);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (tcp_port >= 0) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		int fd = tcp_listen(addr, tcp_port);
		SVCXPRT *x;

		if (fd < 0)
			return 1;
		x = svc_vc_create(fd, 0, 0);
		if (!x || !svc_reg(x, BULK_PROG, BULK_VERS, bulk_prog_1, NULL)) {
			fprintf(stderr, "bulk_server: cannot create the TCP transport\n");
			return 1;
		}
		getsockname(fd, (struct sockaddr *)&sa, &sl);
		printf("bulk_server: tcp port %d\n", ntohs(sa.sin_port));
	}
	if (rdma_port >= 0) {
		SVCXPRT *x = svc_rdma_create(addr, rdma_port, &so);

		if (!x) {
			fprintf(stderr, "bulk_server: rdma %s:%d: %s\n", addr, rdma_port,
				svc_rdma_strerror());
			return 1;
		}
		if (!svc_reg(x, BULK_PROG, BULK_VERS, bulk_prog_1, NULL)) {
			fprintf(stderr, "bulk_server: cannot register on the RDMA transport\n");
			return 1;
		}
		printf("bulk_server: rdma port %d\n", svc_rdma_port(x));
	}
	svc_run();
	fprintf(stderr, "bulk_server: svc_run returned\n");
	return 1;
}
