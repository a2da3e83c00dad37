/* SPDX-License-Identifier: MIT */
/*
 * bulk_client - the client of the uiwarp example ONC RPC service (bulk.x).
 * The same code runs over libtirpc TCP (clnttcp_create) and over
 * RPC-over-RDMA (clnt_rdma_create); only the CLIENT's creation differs.
 * NULL goes through rpcgen's own stub (bulk_null_1); GET and PUT call
 * clnt_call() with rpcgen's XDR routines and a result buffer of our own, so
 * that GET's data can land in place (over RDMA: CLSET_RDMA_RESULT_BUF).
 *
 *   bulk_client [--tcp|--rdma] -p PORT [-o null|get|put] [-s SIZE]
 *               [-n CALLS | -D SECS] [--verify] [--json] [--lat] [-q] HOST
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "bulk.h"
#include "bulk_common.h"
#include "rpc_rdma.h"

static struct timeval tmo = { 25, 0 };

#define MAX_INFLIGHT 64

static double now(void);

/* --lat: every call's duration, seconds */
static double *lat;
static long nlat, lat_cap;

static void lat_add(double d)
{
	if (nlat == lat_cap) {
		long nc = lat_cap ? 2 * lat_cap : 4096;
		double *n = realloc(lat, (size_t)nc * sizeof(*n));

		if (!n)
			return;
		lat = n;
		lat_cap = nc;
	}
	lat[nlat++] = d;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* xdr_void with the argument list the XDR casts expect */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

/* one call in flight of --inflight */
struct flight {
	uint32_t tag;
	long i;
	uint8_t *buf;
	bulk_getargs ga;
	bulk_getres gr;
	bulk_putargs pa;
	bulk_putres pr;
};

/* --inflight N: N calls in flight on one RDMA CLIENT, one thread; returns
 * the calls done, -1 on an RPC failure; *bad counts data that differed */
static long run_inflight(CLIENT *cl, const char *op, size_t size, int n, long calls, double secs,
			 uint32_t seed, int verify, int no_rbuf, int *bad)
{
	struct flight f[MAX_INFLIGHT];
	long started = 0, done = 0;
	double t0 = now();
	int head = 0, inq = 0;

	memset(f, 0, sizeof(f));
	for (int k = 0; k < n; k++) {
		f[k].buf = malloc(size ? size : 1);
		if (!f[k].buf) {
			fprintf(stderr, "bulk_client: out of memory\n");
			return -1;
		}
		if (!strcmp(op, "put") && verify)
			bulk_fill(seed, f[k].buf, size);
	}
	for (;;) {
		/* start calls while there is room and work */
		while (inq < n && (secs > 0 ? now() - t0 < secs : started < calls)) {
			struct flight *x = &f[(head + inq) % n];
			struct rpc_rdma_buf rb = { x->buf, (uint32_t)size };
			enum clnt_stat st;

			x->i = started;
			if (!strcmp(op, "null")) {
				st = clnt_rdma_call_start(cl, BULK_NULL, (xdrproc_t)xdr_nothing, NULL,
							  (xdrproc_t)xdr_nothing, NULL, NULL, tmo, &x->tag);
			} else if (!strcmp(op, "get")) {
				x->ga = (bulk_getargs){ (unsigned)size, verify ? seed + (uint32_t)started : 0 };
				x->gr = (bulk_getres){ 0, { 0, (char *)x->buf } };
				st = clnt_rdma_call_start(cl, BULK_GET, (xdrproc_t)xdr_bulk_getargs,
							  (caddr_t)&x->ga, (xdrproc_t)xdr_bulk_getres,
							  (caddr_t)&x->gr, no_rbuf ? NULL : &rb, tmo, &x->tag);
			} else {
				x->pa = (bulk_putargs){ verify ? seed : 0, { (unsigned)size, (char *)x->buf } };
				x->pr = (bulk_putres){ 0, 0, 0 };
				st = clnt_rdma_call_start(cl, BULK_PUT, (xdrproc_t)xdr_bulk_putargs,
							  (caddr_t)&x->pa, (xdrproc_t)xdr_bulk_putres,
							  (caddr_t)&x->pr, NULL, tmo, &x->tag);
			}
			if (st != RPC_SUCCESS) {
				clnt_perror(cl, "bulk_client: call start");
				return -1;
			}
			started++;
			inq++;
		}
		if (!inq)
			break;
		/* the oldest call ends first in the results */
		{
			struct flight *x = &f[head];

			if (clnt_rdma_call_wait(cl, x->tag) != RPC_SUCCESS) {
				clnt_perror(cl, "bulk_client: call");
				return -1;
			}
			if (!strcmp(op, "get")) {
				if (x->gr.data.data_len != size) {
					fprintf(stderr, "bulk_client: GET returned %u octets, asked %zu\n",
						x->gr.data.data_len, size);
					return -1;
				}
				if (verify && (!bulk_check(x->ga.seed, (uint8_t *)x->gr.data.data_val, size) ||
					       bulk_sum((uint8_t *)x->gr.data.data_val, size) != x->gr.sum)) {
					fprintf(stderr, "bulk_client: GET %ld: data or checksum differ\n", x->i);
					(*bad)++;
				}
			} else if (!strcmp(op, "put")) {
				if (x->pr.len != size) {
					fprintf(stderr, "bulk_client: PUT: the server got %u octets of %zu\n",
						x->pr.len, size);
					return -1;
				}
				if (verify && (x->pr.pattern_ok != 1 || x->pr.sum != bulk_sum(x->buf, size))) {
					fprintf(stderr, "bulk_client: PUT %ld: the server saw other data\n", x->i);
					(*bad)++;
				}
			}
			head = (head + 1) % n;
			inq--;
			done++;
		}
	}
	for (int k = 0; k < n; k++)
		free(f[k].buf);
	return done;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bulk_client [--tcp|--rdma] -p PORT [-o null|get|put] [-s SIZE]\n"
		"                   [-n CALLS | -D SECS] [--verify] [--json] [-q] [RDMA options] HOST\n"
		"Call the bulk example RPC program (bulk.x) on HOST over libtirpc TCP (--tcp,\n"
		"the default) or RPC-over-RDMA on uiwarp (--rdma), one call at a time, and\n"
		"print calls/s and MB/s (MB = 2^20 octets of payload).\n"
		"  -p PORT     the server's port (bulk_server prints it; no rpcbind lookup)\n"
		"  -o OP       null, get (server -> client data) or put (client -> server); default get\n"
		"  -s SIZE     payload octets per GET/PUT (K/M suffixes; default 1M, at most 16M)\n"
		"  -n CALLS    number of calls (default 1000 for null, 100 otherwise)\n"
		"  -D SECS     run for SECS seconds instead of a count\n"
		"  --verify    seeded payloads, checked at the far end and the checksum compared\n"
		"              (costs CPU on both sides: not for throughput figures)\n"
		"  --json      one JSON object on stdout instead of the text line\n"
		"  --lat       per-call latency: min, median, p99, max (the first call is\n"
		"              left out: it carries the connection's first-FPDU delay)\n"
		"RDMA only:\n"
		"  --ddp-threshold N  smallest opaque moved by RDMA Read/Write chunk (default 1K;\n"
		"              a huge value forces a Long call: the whole call by Read chunk)\n"
		"  --inline N  inline send/receive size advertised (RFC 8797; default 4K)\n"
		"  --no-result-buf  no Write chunk for GET: the reply comes by Reply chunk\n"
		"  --reply-max N  CLSET_RDMA_REPLY_MAX: the largest reply expected, a Reply\n"
		"              chunk is offered only above the inline size; 0: with every call.\n"
		"              Default: %d for NULL, PUT and GET with a result buffer (their\n"
		"              replies are small), 0 for GET --no-result-buf\n"
		"  --inflight N  keep N calls in flight on the one connection (1..%d; RDMA\n"
		"              only: clnt_rdma_call_start/_wait; never more than the server's\n"
		"              credits: --info shows the most in flight)\n"
		"  --poll-us N busy-poll N microseconds for each reply before sleeping\n"
		"              (default 50; -1: sleep at once)\n"
		"  --info      print the negotiated settings and chunk counters at the end\n"
		"  -q          print nothing but errors and the result\n"
		"Exit status: 0 all calls succeeded (and verified), 1 a call failed or data\n"
		"differed, 2 bad usage.\n", BULK_SMALL_REPLY, MAX_INFLIGHT);
}

static size_t parse_size(const char *s)
{
	char *e;
	unsigned long long v = strtoull(s, &e, 0);

	if (*e == 'k' || *e == 'K')
		v <<= 10, e++;
	else if (*e == 'm' || *e == 'M')
		v <<= 20, e++;
	if (*e || v > BULK_MAX)
		return (size_t)-1;
	return (size_t)v;
}

static CLIENT *tcp_client(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	struct sockaddr_in sa;
	int sock = RPC_ANYSOCK;
	CLIENT *cl;

	if (getaddrinfo(host, NULL, &hints, &ai)) {
		fprintf(stderr, "bulk_client: unknown host %s\n", host);
		return NULL;
	}
	memcpy(&sa, ai->ai_addr, sizeof(sa));
	freeaddrinfo(ai);
	sa.sin_port = htons((uint16_t)port);
	cl = clnttcp_create(&sa, BULK_PROG, BULK_VERS, &sock, 0, 0);
	if (!cl)
		clnt_pcreateerror("bulk_client: tcp");
	return cl;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "tcp", no_argument, NULL, 'T' },
					    { "rdma", no_argument, NULL, 'R' },
					    { "verify", no_argument, NULL, 'V' },
					    { "json", no_argument, NULL, 'J' },
					    { "lat", no_argument, NULL, 'L' },
					    { "ddp-threshold", required_argument, NULL, 'd' },
					    { "inline", required_argument, NULL, 'i' },
					    { "no-result-buf", no_argument, NULL, 'N' },
					    { "info", no_argument, NULL, 'I' },
					    { "reply-max", required_argument, NULL, 'M' },
					    { "poll-us", required_argument, NULL, 'P' },
					    { "inflight", required_argument, NULL, 'F' },
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	const char *op = "get", *host;
	int rdma = 0, port = -1, verify = 0, json = 0, quiet = 0, c, bad = 0, no_rbuf = 0, show_info = 0;
	int want_lat = 0;
	long reply_max = -2; /* not given */
	int inflight = 1;
	struct rpc_rdma_opts ro = { .remote_inv = 1, .crc = -1 };
	long calls = -1, done = 0;
	double secs = 0, t0, t1;
	size_t size = 1 << 20;
	uint8_t *buf;
	CLIENT *cl;
	uint32_t seed = 0;

	while ((c = getopt_long(argc, argv, "p:o:s:n:D:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'T': rdma = 0; break;
		case 'R': rdma = 1; break;
		case 'V': verify = 1; break;
		case 'J': json = 1; break;
		case 'L': want_lat = 1; break;
		case 'd': ro.ddp_threshold = (uint32_t)parse_size(optarg); break;
		case 'i': ro.inline_send = ro.inline_recv = (uint32_t)parse_size(optarg); break;
		case 'N': no_rbuf = 1; break;
		case 'I': show_info = 1; break;
		case 'M': reply_max = (long)parse_size(optarg); break;
		case 'P': ro.poll_us = atoi(optarg); break;
		case 'F': inflight = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'o': op = optarg; break;
		case 's': size = parse_size(optarg); break;
		case 'n': calls = atol(optarg); break;
		case 'D': secs = atof(optarg); break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc || port <= 0 || size == (size_t)-1 || reply_max == (long)(size_t)-1 ||
	    inflight < 1 || inflight > MAX_INFLIGHT || (inflight > 1 && !rdma) ||
	    (strcmp(op, "null") && strcmp(op, "get") && strcmp(op, "put"))) {
		usage(stderr);
		return 2;
	}
	host = argv[optind];
	if (calls < 0)
		calls = !strcmp(op, "null") ? 1000 : 100;
	buf = malloc(size ? size : 1);
	if (!buf) {
		fprintf(stderr, "bulk_client: out of memory\n");
		return 1;
	}
	memset(buf, 0, size);
	if (rdma) {
		cl = clnt_rdma_create(host, port, BULK_PROG, BULK_VERS, &ro);
		if (!cl)
			fprintf(stderr, "bulk_client: rdma %s:%d: %s\n", host, port, clnt_rdma_strerror());
	} else {
		cl = tcp_client(host, port);
	}
	if (!cl)
		return 1;
	if (rdma) {
		/* as Linux's client bounds each procedure's reply: only a GET
		 * whose data comes back in the reply needs a Reply chunk */
		u_int rm = reply_max != -2 ? (u_int)reply_max
			   : !strcmp(op, "get") && no_rbuf ? 0 : BULK_SMALL_REPLY;

		clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&rm);
	}
	if (!quiet)
		fprintf(stderr, "bulk_client: connected to %s port %d over %s\n", host, port,
			rdma ? "RPC-over-RDMA" : "TCP");
	if (verify)
		seed = (uint32_t)getpid() * 2654435761u | 1;
	if (!strcmp(op, "put") && verify)
		bulk_fill(seed, buf, size);
	t0 = now();
	if (inflight > 1) {
		done = run_inflight(cl, op, size, inflight, calls, secs, seed, verify, no_rbuf, &bad);
		if (done < 0)
			return 1;
		calls = 0; /* the loop below does nothing more */
		secs = 0;
	}
	for (long i = 0; inflight == 1 && (secs > 0 ? now() - t0 < secs : i < calls); i++) {
		enum clnt_stat st;
		double c0 = want_lat ? now() : 0;

		if (!strcmp(op, "null")) {
			if (!bulk_null_1(NULL, cl)) {
				clnt_perror(cl, "bulk_client: NULL");
				return 1;
			}
		} else if (!strcmp(op, "get")) {
			bulk_getargs a = { (unsigned)size, verify ? seed + (uint32_t)i : 0 };
			bulk_getres r = { 0, { 0, (char *)buf } };

			if (rdma && !no_rbuf) {
				struct rpc_rdma_buf rb = { buf, (uint32_t)size };

				clnt_control(cl, CLSET_RDMA_RESULT_BUF, (char *)&rb);
			}
			st = clnt_call(cl, BULK_GET, (xdrproc_t)xdr_bulk_getargs, (caddr_t)&a,
				       (xdrproc_t)xdr_bulk_getres, (caddr_t)&r, tmo);
			if (st != RPC_SUCCESS) {
				clnt_perror(cl, "bulk_client: GET");
				return 1;
			}
			if (r.data.data_len != size || r.data.data_val != (char *)buf) {
				/* xdr_bytes decodes into buf: a different pointer
				 * or length is a decoding fault */
				fprintf(stderr, "bulk_client: GET returned %u octets, asked %zu\n",
					r.data.data_len, size);
				return 1;
			}
			if (verify && (!bulk_check(a.seed, buf, size) || bulk_sum(buf, size) != r.sum)) {
				fprintf(stderr, "bulk_client: GET %ld: data or checksum differ\n", i);
				bad++;
			}
		} else {
			bulk_putargs a = { verify ? seed : 0, { (unsigned)size, (char *)buf } };
			bulk_putres r = { 0, 0, 0 };

			st = clnt_call(cl, BULK_PUT, (xdrproc_t)xdr_bulk_putargs, (caddr_t)&a,
				       (xdrproc_t)xdr_bulk_putres, (caddr_t)&r, tmo);
			if (st != RPC_SUCCESS) {
				clnt_perror(cl, "bulk_client: PUT");
				return 1;
			}
			if (r.len != size) {
				fprintf(stderr, "bulk_client: PUT: the server got %u octets of %zu\n", r.len,
					size);
				return 1;
			}
			if (verify && (r.pattern_ok != 1 || r.sum != bulk_sum(buf, size))) {
				fprintf(stderr, "bulk_client: PUT %ld: the server saw other data\n", i);
				bad++;
			}
		}
		if (want_lat && i > 0)
			lat_add(now() - c0);
		done++;
	}
	t1 = now();
	{
		double dt = t1 - t0 > 0 ? t1 - t0 : 1e-9;
		double mbs = !strcmp(op, "null") ? 0 : (double)size * (double)done / dt / 1048576.0;

		if (json)
			printf("{\"transport\":\"%s\",\"op\":\"%s\",\"size\":%zu,\"calls\":%ld,"
			       "\"seconds\":%.6f,\"calls_per_s\":%.1f,\"MBps\":%.2f,\"us_per_call\":%.3f,"
			       "\"verified\":%s,\"errors\":%d}\n",
			       rdma ? "rdma" : "tcp", op, size, done, dt, (double)done / dt, mbs,
			       dt * 1e6 / (double)(done ? done : 1), verify ? "true" : "false", bad);
		else
			printf("bulk_client: %s %s %zu B: %ld calls in %.2f s: %.0f calls/s, %.1f MB/s, "
			       "%.1f us/call%s\n",
			       rdma ? "rdma" : "tcp", op, size, done, dt, (double)done / dt, mbs,
			       dt * 1e6 / (double)(done ? done : 1),
			       verify ? (bad ? ", DATA DIFFERED" : ", verified") : "");
	}
	if (want_lat && nlat) {
		double p50, p99;

		qsort(lat, (size_t)nlat, sizeof(*lat), cmp_double);
		p50 = lat[nlat / 2];
		p99 = lat[(nlat * 99) / 100 < nlat ? (nlat * 99) / 100 : nlat - 1];
		if (json)
			printf("{\"latency_us\":{\"calls\":%ld,\"min\":%.1f,\"median\":%.1f,\"p99\":%.1f,"
			       "\"max\":%.1f}}\n",
			       nlat, lat[0] * 1e6, p50 * 1e6, p99 * 1e6, lat[nlat - 1] * 1e6);
		else
			printf("bulk_client: latency of %ld calls: min %.1f, median %.1f, p99 %.1f, max %.1f us\n",
			       nlat, lat[0] * 1e6, p50 * 1e6, p99 * 1e6, lat[nlat - 1] * 1e6);
	}
	if (rdma && show_info) {
		struct rpc_rdma_info ri;

		if (clnt_control(cl, CLGET_RDMA_INFO, (char *)&ri))
			printf("bulk_client: rdma: inline send %u recv %u, credits %u, remote invalidation %s, "
			       "peer RFC 8797 data %s; %llu calls, %llu replies, %llu RDMA_ERROR; octets by "
			       "Read chunk %llu, Write chunk %llu, Reply chunk %llu; %llu Reply chunks offered; "
			       "at most %u calls in flight\n",
			       ri.inline_send, ri.inline_recv, ri.credits, ri.remote_inv ? "on" : "off",
			       ri.peer_pd ? "yes" : "no", (unsigned long long)ri.calls,
			       (unsigned long long)ri.replies, (unsigned long long)ri.rdma_errors,
			       (unsigned long long)ri.read_chunk_octets, (unsigned long long)ri.write_chunk_octets,
			       (unsigned long long)ri.reply_chunk_octets,
			       (unsigned long long)ri.reply_chunks_offered, ri.max_outstanding);
	}
	clnt_destroy(cl);
	free(buf);
	return bad ? 1 : 0;
}
