/* SPDX-License-Identifier: MIT */
/*
 * uiw-rpcinfo - rpcinfo's "-T TRANSPORT HOST PROG [VERS]" probe over
 * RPC-over-RDMA on uiwarp (clnt_rdma_create) or over TCP (libtirpc): a NULL
 * call (procedure 0) per version, "program P version V ready and waiting"
 * for each that answers, and over RDMA what the connection negotiated
 * (CLGET_RDMA_INFO).
 *
 *   uiw-rpcinfo -T rdma|tcp [-p PORT] HOST PROG [VERS]
 *
 * Without VERS, like rpcinfo: a NULL call with version 0, whose
 * PROG_MISMATCH reply names the versions the server has, then each of them;
 * when the server does not say (it answered version 0), versions 1 to 4.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "bulk.h"
#include "rpc_rdma.h"

#define PROG "uiw-rpcinfo"

static const struct {
	const char *name;
	rpcprog_t prog;
} progs[] = {
	{"nfs", 100003},
	{"mount", 100005},
	{"mountd", 100005},
	{"bulk", BULK_PROG},
};

static struct timeval tmo = {10, 0};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw-rpcinfo -T rdma|tcp [-p PORT] [-t SECS] [RDMA options] HOST PROG [VERS]\n"
		"Make a NULL call (procedure 0) to program PROG version VERS on HOST over\n"
		"RPC-over-RDMA on uiwarp (-T rdma) or TCP (-T tcp), as `rpcinfo -T tcp HOST\n"
		"PROG VERS` does, and print \"program P version V ready and waiting\".  Over RDMA\n"
		"also print what the connection negotiated (inline thresholds, credits, remote\n"
		"invalidation, RFC 8797 private data from the peer).  Without VERS, the\n"
		"versions the server names in its PROG_MISMATCH reply to a version-0 call\n"
		"are tried (as rpcinfo does), else versions 1 to 4.\n"
		"  PROG        a number (decimal or 0x hex) or nfs (100003), mount (100005),\n"
		"              bulk (0x%08x, the example service of rpcrdma/examples)\n"
		"  -T rdma     RPC-over-RDMA (RFC 8166); PORT default %d\n"
		"  -T tcp      TCP; without -p the port is asked from HOST's rpcbind\n"
		"  -p PORT     the server's port (no rpcbind lookup)\n"
		"  -t SECS     per-call timeout, and over RDMA the connection setup's\n"
		"              (default 10)\n"
		"  -h, --help  this text\n"
		"RDMA only:\n"
		"  --inline N  inline send/receive size advertised (RFC 8797; default 4096)\n"
		"  --credits N credits asked for (default 32)\n"
		"  --no-cm-pd  send no RFC 8797 private data\n"
		"Exit status: 0 every version tried answered (without VERS and without a\n"
		"PROG_MISMATCH range: at least one of 1..4), 1 otherwise, 2 bad usage.\n",
		(unsigned)BULK_PROG, RPC_RDMA_PORT);
}

static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static int parse_prog(const char *s, rpcprog_t *p)
{
	char *e;
	unsigned long v;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (!strcasecmp(s, progs[i].name)) {
			*p = progs[i].prog;
			return 0;
		}
	errno = 0;
	v = strtoul(s, &e, 0);
	if (errno || e == s || *e || v > 0xffffffffUL)
		return -1;
	*p = (rpcprog_t)v;
	return 0;
}

static const char *errno_text(int e)
{
	switch (e) {
	case ECONNREFUSED:
		return "connection refused";
	case ETIMEDOUT:
		return "connection timed out";
	case EHOSTUNREACH:
		return "host unreachable";
	case ENXIO:
		return "cannot resolve the host name";
	case ENETUNREACH:
		return "network unreachable";
	case ECONNRESET:
		return "connection reset";
	default:
		return strerror(e);
	}
}

/* print why clnt_*create failed, in rpcinfo's words where it has them */
static void create_error(const char *what, const char *detail)
{
	__typeof__(get_rpc_createerr()) *ce = &get_rpc_createerr();

	if (ce->cf_stat == RPC_PROGNOTREGISTERED)
		fprintf(stderr, PROG ": %s: program not registered\n", what);
	else if (ce->cf_stat == RPC_UNKNOWNHOST)
		fprintf(stderr, PROG ": %s: unknown host\n", what);
	else if (ce->cf_stat == RPC_SYSTEMERROR && ce->cf_error.re_errno)
		fprintf(stderr, PROG ": %s: %s%s%s\n", what, errno_text(ce->cf_error.re_errno),
			detail ? ": " : "", detail ? detail : "");
	else if (detail)
		fprintf(stderr, PROG ": %s: %s\n", what, detail);
	else
		fprintf(stderr, PROG ": %s: %s\n", what, clnt_spcreateerror("RPC"));
}

static CLIENT *make_client(int rdma, const char *host, int port, rpcprog_t prog, rpcvers_t vers,
			   const struct rpc_rdma_opts *ro)
{
	char what[300];
	CLIENT *cl;

	if (rdma) {
		snprintf(what, sizeof(what), "rdma %s port %d", host, port ? port : RPC_RDMA_PORT);
		cl = clnt_rdma_create(host, port, prog, vers, ro);
		if (!cl)
			create_error(what, clnt_rdma_strerror());
		return cl;
	}
	if (port) {
		struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
		struct sockaddr_in sa;
		int sock = RPC_ANYSOCK;

		snprintf(what, sizeof(what), "tcp %s port %d", host, port);
		if (getaddrinfo(host, NULL, &hints, &ai)) {
			fprintf(stderr, PROG ": %s: unknown host\n", host);
			return NULL;
		}
		memcpy(&sa, ai->ai_addr, sizeof(sa));
		freeaddrinfo(ai);
		sa.sin_port = htons((uint16_t)port);
		cl = clnttcp_create(&sa, prog, vers, &sock, 0, 0);
	} else {
		/* rpcbind (or portmapper) on HOST tells the port */
		snprintf(what, sizeof(what), "tcp %s (rpcbind)", host);
		cl = clnt_create(host, prog, vers, "tcp");
	}
	if (!cl)
		create_error(what, NULL);
	return cl;
}

static void print_rdma_info(CLIENT *cl)
{
	struct rpc_rdma_info ri;

	memset(&ri, 0, sizeof(ri));
	if (!clnt_control(cl, CLGET_RDMA_INFO, (char *)&ri)) {
		fprintf(stderr, PROG ": CLGET_RDMA_INFO refused\n");
		return;
	}
	printf("rdma: inline send %u, inline receive %u, credits %u, remote invalidation %s, "
	       "peer RFC 8797 private data %s\n",
	       ri.inline_send, ri.inline_recv, ri.credits, ri.remote_inv ? "yes" : "no",
	       ri.peer_pd ? "yes" : "no");
}

/* one NULL call; 0 answered, 1 not (printed), with the range in low, high on PROG_MISMATCH */
static int null_call(CLIENT *cl, rpcprog_t prog, rpcvers_t vers, int quiet_mismatch, rpcvers_t *low,
		     rpcvers_t *high, int *broken)
{
	struct rpc_err e;
	enum clnt_stat st;

	clnt_control(cl, CLSET_VERS, (char *)&vers);
	st = clnt_call(cl, NULLPROC, (xdrproc_t)xdr_nothing, NULL, (xdrproc_t)xdr_nothing, NULL,
		       tmo);
	if (st == RPC_SUCCESS) {
		printf("program %lu version %lu ready and waiting\n", (unsigned long)prog,
		       (unsigned long)vers);
		return 0;
	}
	clnt_geterr(cl, &e);
	*broken = 0;
	switch (st) {
	case RPC_PROGVERSMISMATCH:
		*low = e.re_vers.low;
		*high = e.re_vers.high;
		if (!quiet_mismatch)
			fprintf(stderr,
				PROG
				": program %lu version %lu is not available: version mismatch: "
				"server supports %lu..%lu\n",
				(unsigned long)prog, (unsigned long)vers, (unsigned long)*low,
				(unsigned long)*high);
		return 1;
	case RPC_PROGUNAVAIL:
		fprintf(stderr, PROG ": program %lu is not available: program not registered\n",
			(unsigned long)prog);
		return 1;
	case RPC_CANTSEND:
	case RPC_CANTRECV:
	case RPC_TIMEDOUT:
		*broken = 1;
		/* fall through */
	default:
		fprintf(stderr, PROG ": program %lu version %lu is not available: %s\n",
			(unsigned long)prog, (unsigned long)vers, clnt_sperror(cl, "RPC"));
		return 1;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"inline", required_argument, NULL, 'i'},
					   {"credits", required_argument, NULL, 'c'},
					   {"no-cm-pd", no_argument, NULL, 'P'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct rpc_rdma_opts ro = {.remote_inv = 1, .crc = -1};
	const char *transport = NULL, *host;
	int c, port = 0, rdma, rc = 0, broken = 0, ok = 0, info_done = 0;
	rpcprog_t prog;
	rpcvers_t vers = 0, low = 0, high = 0, lo_v, hi_v;
	CLIENT *cl;

	while ((c = getopt_long(argc, argv, "T:p:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'T':
			transport = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			if (port <= 0 || port > 65535) {
				fprintf(stderr, PROG ": bad port %s\n", optarg);
				return 2;
			}
			break;
		case 't':
			tmo.tv_sec = atoi(optarg) > 0 ? atoi(optarg) : 10;
			/* the RDMA connection setup too (default 10 s) */
			ro.connect_timeout_ms = (int)tmo.tv_sec * 1000;
			break;
		case 'i':
			ro.inline_send = ro.inline_recv = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			ro.credits = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			ro.no_cm_pd = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!transport || (strcmp(transport, "rdma") && strcmp(transport, "tcp")) ||
	    argc - optind < 2 || argc - optind > 3) {
		usage(stderr);
		return 2;
	}
	rdma = !strcmp(transport, "rdma");
	host = argv[optind];
	if (parse_prog(argv[optind + 1], &prog)) {
		fprintf(stderr, PROG ": %s: unknown program\n", argv[optind + 1]);
		return 2;
	}
	if (argc - optind == 3) {
		char *e;
		unsigned long v = strtoul(argv[optind + 2], &e, 0);

		if (e == argv[optind + 2] || *e || v > 0xffffffffUL) {
			fprintf(stderr, PROG ": %s: bad version\n", argv[optind + 2]);
			return 2;
		}
		vers = (rpcvers_t)v;
	}

	/* the version we connect with is only the first call's: CLSET_VERS
	 * changes it per call, as rpcinfo does */
	cl = make_client(rdma, host, port, prog, vers ? vers : 1, &ro);
	if (!cl)
		return 1;
	if (vers) {
		rc = null_call(cl, prog, vers, 0, &low, &high, &broken);
		if (rdma && !broken)
			print_rdma_info(cl);
		clnt_destroy(cl);
		return rc;
	}

	/* version 0: a server that has the program answers PROG_MISMATCH with its range */
	if (null_call(cl, prog, 0, 1, &low, &high, &broken) == 0) {
		lo_v = 1, hi_v = 4; /* it took version 0: no range given */
		ok = 1;
	} else if (low || high) {
		lo_v = low, hi_v = high;
	} else if (broken) {
		clnt_destroy(cl);
		return 1;
	} else {
		clnt_destroy(cl);
		return 1; /* program unavailable etc., printed */
	}
	if (hi_v < lo_v || hi_v - lo_v > 64) {
		fprintf(stderr, PROG ": the server names versions %lu..%lu: trying 1..4\n",
			(unsigned long)lo_v, (unsigned long)hi_v);
		lo_v = 1, hi_v = 4;
	}
	{
		int ranged = low || high, fails = 0;

		for (rpcvers_t v = lo_v; v <= hi_v; v++) {
			if (null_call(cl, prog, v, 0, &low, &high, &broken)) {
				fails++;
				if (broken)
					break;
			} else {
				ok++;
				if (rdma && !info_done) {
					print_rdma_info(cl);
					info_done = 1;
				}
			}
		}
		rc = ranged ? (fails ? 1 : 0) : (ok ? 0 : 1);
	}
	clnt_destroy(cl);
	return rc;
}
