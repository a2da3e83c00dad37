/* SPDX-License-Identifier: MIT */
/*
 * uiw-ping - rdma-core's rping ping-pong over uiwarp, wire-compatible with
 * rping: either program can be the client or the server of the other.
 *
 * One ping (see docs/uiw-ping.md, PROTOCOL):
 *   client Sends {start buffer address, STag, size}  (16 octets, big endian)
 *   server RDMA Reads the start buffer, then Sends a go-ahead (16 zero octets)
 *   client Sends {sink buffer address, STag, size}
 *   server RDMA Writes the string it read into the sink, then Sends a go-ahead
 *
 * The program is one thread around poll(2): the CM event fd, one completion
 * channel shared by every connection's CQ, and a signalfd.  The uiwarp
 * progress thread moves the data.  A persistent server (-P) serves any
 * number of clients concurrently, each with its own CQ, QP and buffers, the
 * way rping -P does with a thread per client.  Every wait for the peer is
 * bounded (--timeout, 10 s by default).
 *
 * Only the public API (uiw_verbs.h) is used.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

#define PROG "uiw-ping"

/* rping's numbers */
#define PING_PORT 7174
#define PING_SIZE 64
/*
 * rping's minimum is sizeof(stringify(INT_MAX)) + sizeof("rdma-ping-%d: ");
 * rping.c does not include <limits.h>, so INT_MAX stringifies as the word
 * "INT_MAX" (8 octets with its NUL) and the minimum is 8 + 15 = 23.  That is
 * also exactly "rdma-ping-2147483647: " plus its NUL.
 */
#define PING_SIZE_MIN  23
#define PING_SIZE_MAX  65535 /* rping: RPING_BUFSIZE - 1 */
#define PING_SINK_MAX  65536 /* what this server Reads at most (RPING_BUFSIZE) */
#define PING_MSG_LEN   16    /* struct rping_rdma_info: be64 buf, be32 rkey, be32 size */
#define PING_SQ_DEPTH  16
#define PING_RQ_DEPTH  2
#define PING_CQ_DEPTH  (2 * PING_SQ_DEPTH)
#define PING_IRD_ORD   1 /* rping's responder_resources and initiator_depth */
/* connections held by the listener (handshaking or awaiting our accept;
 * uiw_listen()): a persistent server (-P) takes many clients at once */
#define PING_BACKLOG   64
#define PING_TIMEOUT_S 10
#define PING_CLOSE_MS  5000 /* wait for DISCONNECTED after our own disconnect */
/* as initiator, hold the first FPDU after the MPA Reply: Linux siw drops one
 * that arrives before its QP owns the socket (uiw_verbs.h) */
#define PING_FPDU_DELAY_MS 50
#define EXIT_FAIL	   1
#define EXIT_USAGE	   EINVAL /* rping returns EINVAL for a bad command line */

/* ---- options --------------------------------------------------------- */

struct ping_opts {
	int role; /* -1 unset, 0 client, 1 server */
	const char *addr;
	const char *src; /* -I: the client's source address */
	unsigned port;
	long count;
	long size;
	int verbose;
	int validate;
	int persistent;
	long timeout_s;
	struct uiw_context_attr attr;
};

static int debug;

static void __attribute__((format(printf, 1, 2))) err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Debug lines go to stdout, as rping's DEBUG_LOG does. */
static void __attribute__((format(printf, 1, 2))) dbg(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* strerror(-@neg) with a lower-case first letter, for "...: connection refused" */
static const char *errtext(int neg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(neg < 0 ? -neg : neg));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* "ADDR:PORT", with brackets around an IPv6 literal */
static void host_port(char *buf, size_t len, const char *host, unsigned port)
{
	if (strchr(host, ':'))
		snprintf(buf, len, "[%s]:%u", host, port);
	else
		snprintf(buf, len, "%s:%u", host, port);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " -s [-vVdP] [-S size] [-C count] [-a addr] [-p port]\n"
		"       " PROG " -c [-vVd] [-S size] [-C count] -a addr [-p port]\n"
		"\n"
		"rping's RDMA ping-pong (Send, RDMA Read, RDMA Write) over uiwarp, the\n"
		"software iWARP stack.  Wire-compatible with rdma-core's rping: either\n"
		"program can be the client or the server of the other.\n"
		"\n"
		"  -s          run as the server\n"
		"  -c          run as the client\n"
		"  -a addr     server: the address to listen on (default: every IPv6 and\n"
		"              IPv4 address; -a 0.0.0.0: every IPv4 address, as rping);\n"
		"              client: the server's address (required); IPv4, IPv6 or a name\n"
		"  -I addr     client: the local address to connect from (as rping -I)\n"
		"  -p port     TCP port (default 7174).  Server -p 0: the kernel picks the\n"
		"              port and \"" PROG ": listening on ADDR port N\" is printed\n"
		"  -C count    client: number of pings, 0 = until interrupted (default 0);\n"
		"              server: ignored, as by rping (the client decides)\n"
		"  -S size     ping data size in octets, %d to %d (default %d); the server\n"
		"              takes whatever size a client advertises, up to %d\n"
		"  -v          print the ping data: \"ping data: ...\" (client) and\n"
		"              \"server ping data: ...\" (server)\n"
		"  -V          validate the ping data (client: the echo equals what was\n"
		"              sent; server: the data read has rping's pattern)\n"
		"  -d          debug output (stdout)\n"
		"  -P          persistent server: serve clients, concurrently, until killed\n"
		"  -q          accepted for compatibility with rping; no effect\n"
		"  -h, --help  this help\n"
		"\n"
		"uiwarp options (not in rping):\n"
		"  --timeout=SEC  bound on every wait for the peer: connect, each step of a\n"
		"                 ping, the close (default %d; 0: wait forever as rping)\n"
		"  --mpa-rev=N    MPA revision a client requests: 1 or 2 (default 2)\n"
		"  --crc=on|off   ask for MPA CRCs (default on; used if either side asks)\n"
		"  --markers      require MPA markers from the peer (Linux siw refuses them)\n"
		"  --p2p          RFC 6581 peer-to-peer mode (client: ask for it, send the RTR)\n"
		"  --first-fpdu-delay=MS  client: hold the first FPDU this long after the MPA\n"
		"                 Reply (default %d; Linux siw drops an FPDU that comes too soon)\n"
		"\n"
		"Not supported: -t (rping refuses it too).\n"
		"Exit status: 0 success, 1 failure, %d (EINVAL, as rping) bad command line;\n"
		"killed by SIGINT/SIGTERM/SIGHUP: that signal, after a clean teardown.\n",
		PING_SIZE_MIN, PING_SIZE_MAX, PING_SIZE, PING_SINK_MAX, PING_TIMEOUT_S,
		PING_FPDU_DELAY_MS, EXIT_USAGE);
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROG " --help' for more information.\n", stderr);
	return -1;
}

static int parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

enum { OPT_TIMEOUT = 256, OPT_MPA_REV, OPT_CRC, OPT_MARKERS, OPT_P2P, OPT_FPDU_DELAY };

static int parse_opts(int argc, char **argv, struct ping_opts *o)
{
	static const struct option lopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"mpa-rev", required_argument, NULL, OPT_MPA_REV},
		{"crc", required_argument, NULL, OPT_CRC},
		{"markers", no_argument, NULL, OPT_MARKERS},
		{"p2p", no_argument, NULL, OPT_P2P},
		{"first-fpdu-delay", required_argument, NULL, OPT_FPDU_DELAY},
		{NULL, 0, NULL, 0},
	};
	long v;
	int op;

	memset(o, 0, sizeof(*o));
	o->role = -1;
	o->port = PING_PORT;
	o->size = PING_SIZE;
	o->timeout_s = PING_TIMEOUT_S;
	o->attr.first_fpdu_delay_ms = PING_FPDU_DELAY_MS;
	opterr = 0;
	while ((op = getopt_long(argc, argv, ":a:I:Pp:C:S:t:scvVdqh", lopts, NULL)) != -1) {
		switch (op) {
		case 's':
		case 'c':
			if (o->role != -1 && o->role != (op == 's'))
				return bad_usage(
					"give either -s (server) or -c (client), not both");
			o->role = op == 's';
			break;
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (parse_num(optarg, 0, 65535, &v))
				return bad_usage("invalid port '%s' (valid range is 0 to 65535)",
						 optarg);
			o->port = (unsigned)v;
			break;
		case 'C':
			if (parse_num(optarg, 0, INT_MAX, &v))
				return bad_usage("invalid count '%s' (0, for no limit, to %d)",
						 optarg, INT_MAX);
			o->count = v;
			break;
		case 'S':
			if (parse_num(optarg, PING_SIZE_MIN, PING_SIZE_MAX, &v))
				return bad_usage("invalid size %s (valid range is %d to %d)",
						 optarg, PING_SIZE_MIN, PING_SIZE_MAX);
			o->size = v;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			o->validate++;
			break;
		case 'd':
			debug++;
			break;
		case 'P':
			o->persistent = 1;
			break;
		case 'q':
			break; /* rping: self-created QP; the wire is the same */
		case 'I':
			o->src = optarg;
			break;
		case 't':
			return bad_usage("-t is not supported (rping does not implement it "
					 "either)");
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_TIMEOUT:
			if (parse_num(optarg, 0, 86400, &v))
				return bad_usage("invalid timeout '%s' (0 to 86400 seconds)",
						 optarg);
			o->timeout_s = v;
			break;
		case OPT_MPA_REV:
			if (parse_num(optarg, 1, 2, &v))
				return bad_usage("invalid MPA revision '%s' (1 or 2)", optarg);
			o->attr.mpa_rev = (unsigned)v;
			break;
		case OPT_CRC:
			if (!strcmp(optarg, "on"))
				o->attr.crc = UIW_CRC_ON;
			else if (!strcmp(optarg, "off"))
				o->attr.crc = UIW_CRC_OFF;
			else
				return bad_usage("invalid --crc '%s' (on or off)", optarg);
			break;
		case OPT_MARKERS:
			o->attr.markers = 1;
			break;
		case OPT_P2P:
			o->attr.p2p = 1;
			break;
		case OPT_FPDU_DELAY:
			if (parse_num(optarg, 0, 10000, &v))
				return bad_usage("invalid --first-fpdu-delay '%s' (0 to 10000 ms)",
						 optarg);
			o->attr.first_fpdu_delay_ms = (unsigned)v;
			break;
		case ':':
			if (optopt)
				return bad_usage("option -%c needs an argument", optopt);
			return bad_usage("option %s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return bad_usage("unknown option -%c", optopt);
			return bad_usage("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->role == -1)
		return bad_usage("give -s (server) or -c (client)");
	if (o->role == 0 && !o->addr)
		return bad_usage("the client needs the server's address: -a ADDR");
	if (o->role == 0 && o->port == 0)
		return bad_usage("the client needs the server's port: -p PORT (not 0)");
	if (o->addr) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
		int r = getaddrinfo(o->addr, NULL, &hints, &res);

		if (r)
			return bad_usage("invalid address '%s': %s", o->addr, gai_strerror(r));
		freeaddrinfo(res);
	}
	return 0;
}

/* ---- rping's wire format ------------------------------------------------ */

struct ping_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

static void info_pack(uint8_t *out, uint64_t addr, uint32_t rkey, uint32_t size)
{
	uint64_t a = htobe64(addr);
	uint32_t k = htobe32(rkey), s = htobe32(size);

	memcpy(out, &a, 8);
	memcpy(out + 8, &k, 4);
	memcpy(out + 12, &s, 4);
}

static void info_unpack(const uint8_t *in, struct ping_info *info)
{
	uint64_t a;
	uint32_t k, s;

	memcpy(&a, in, 8);
	memcpy(&k, in + 8, 4);
	memcpy(&s, in + 12, 4);
	info->addr = be64toh(a);
	info->rkey = be32toh(k);
	info->size = be32toh(s);
}

/*
 * rping's ping data for ping @n (counted from 0 on each connection) in @len
 * octets: "rdma-ping-N: ", then the printable run 'A'..'z' cycling from a
 * start character that moves one place per ping ('A' for ping 0), and a NUL
 * in the last octet.
 */
static void ping_pattern(char *buf, size_t len, long n)
{
	unsigned char c = (unsigned char)('A' + n % ('z' - 'A' + 1));
	int cc;

	if (!len)
		return;
	cc = snprintf(buf, len, "rdma-ping-%ld: ", n);
	for (size_t i = cc > 0 ? (size_t)cc : 0; i < len; i++) {
		buf[i] = (char)c;
		c = c == 'z' ? 'A' : (unsigned char)(c + 1);
	}
	buf[len - 1] = 0;
}

/* ---- connections ------------------------------------------------------- */

enum conn_state {
	CS_CONNECTING,	   /* client: connect issued, waiting for ESTABLISHED */
	CS_ACCEPTING,	   /* server: accept issued, waiting for ESTABLISHED */
	CS_CLI_WAIT_GO1,   /* client: start buffer advertised, waiting for go-ahead */
	CS_CLI_WAIT_GO2,   /* client: sink advertised, waiting for go-ahead */
	CS_SRV_WAIT_START, /* server: waiting for the start buffer's advertisement */
	CS_SRV_READING,	   /* server: RDMA Read posted */
	CS_SRV_WAIT_SINK,  /* server: go-ahead sent, waiting for the sink */
	CS_SRV_WRITING,	   /* server: RDMA Write posted */
	CS_CLOSING,	   /* disconnect issued, waiting for DISCONNECTED */
	CS_DONE,	   /* finished well: tear down */
	CS_DEAD		   /* failed: tear down */
};

static const char *const state_what[] = {
	[CS_CONNECTING] = "the connection to be established",
	[CS_ACCEPTING] = "the connection to be established",
	[CS_CLI_WAIT_GO1] = "the go-ahead after the server's RDMA Read",
	[CS_CLI_WAIT_GO2] = "the go-ahead after the server's RDMA Write",
	[CS_SRV_WAIT_START] = "the client's start buffer advertisement",
	[CS_SRV_READING] = "the RDMA Read to complete",
	[CS_SRV_WAIT_SINK] = "the client's sink buffer advertisement",
	[CS_SRV_WRITING] = "the RDMA Write to complete",
	[CS_CLOSING] = "the disconnect",
	[CS_DONE] = "nothing",
	[CS_DEAD] = "nothing",
};

enum wr_kind { WR_RECV = 1, WR_SEND_ADV, WR_SEND_GO, WR_READ, WR_WRITE };

struct ping_app;

struct conn {
	struct conn *next;
	struct ping_app *app;
	unsigned serial; /* server: client number, from 1 */
	bool client;
	enum conn_state state;
	uint64_t deadline; /* ms, 0: none */
	struct uiw_cm_id *id;
	struct uiw_cq *cq;
	struct uiw_qp *qp;

	/* 16-octet messages: the receive, the client's advertisement, the
	 * server's go-ahead (all zero, as rping's never-formatted send_buf) */
	struct {
		uint8_t recv[PING_MSG_LEN];
		uint8_t adv[PING_MSG_LEN];
		uint8_t go[PING_MSG_LEN];
	} msg;
	struct uiw_mr *msg_mr;

	char *rdma_buf; /* client: the sink; server: Read target, Write source */
	size_t rdma_len;
	struct uiw_mr *rdma_mr;
	char *start_buf; /* client: the source the server Reads */
	struct uiw_mr *start_mr;
	char *expect; /* server -V: the pattern expected */

	unsigned sends_inflight;
	bool got_msg;	       /* client: a go-ahead arrived, not yet acted on */
	struct ping_info peer; /* server: the last advertisement */
	uint32_t read_len;
	long ping; /* pings finished on this connection */
	bool failed;
};

struct ping_app {
	struct ping_opts *o;
	const char *host;
	char peer[300]; /* client: "ADDR:PORT" */
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_comp_channel *ch;
	struct uiw_cm_id *listen_id;
	struct conn *conns;
	struct uiw_cm_id **rejected; /* ids refused while busy: freed at exit */
	size_t nrejected;
	unsigned nclients;
	bool session_taken; /* non-persistent server: its one client came */
	bool finished;
	int status; /* exit status */
	int sfd;
};

static void __attribute__((format(printf, 2, 3))) conn_fail(struct conn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->state == CS_DEAD)
		return;
	fflush(stdout);
	if (c->client || !c->app->o->persistent)
		fputs(PROG ": ", stderr);
	else
		fprintf(stderr, PROG ": client %u: ", c->serial);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->failed = true;
	c->state = CS_DEAD;
}

static void conn_set_state(struct conn *c, enum conn_state s)
{
	struct ping_opts *o = c->app->o;

	c->state = s;
	if (s == CS_CLOSING)
		c->deadline = now_ms() + (o->timeout_s && o->timeout_s * 1000 < PING_CLOSE_MS
						  ? (uint64_t)o->timeout_s * 1000
						  : PING_CLOSE_MS);
	else if (o->timeout_s && s < CS_DONE)
		c->deadline = now_ms() + (uint64_t)o->timeout_s * 1000;
	else
		c->deadline = 0;
}

static void conn_free(struct conn *c)
{
	int r;

	if (c->id)
		uiw_destroy_id(c->id);
	if (c->qp && (r = uiw_destroy_qp(c->qp)))
		err("uiw_destroy_qp: %d (library problem: the id is gone)", r);
	if (c->msg_mr)
		uiw_dereg_mr(c->msg_mr);
	if (c->rdma_mr)
		uiw_dereg_mr(c->rdma_mr);
	if (c->start_mr)
		uiw_dereg_mr(c->start_mr);
	if (c->cq && (r = uiw_destroy_cq(c->cq)))
		err("uiw_destroy_cq: %d", r);
	free(c->rdma_buf);
	free(c->start_buf);
	free(c->expect);
	free(c);
}

static int post_recv(struct conn *c)
{
	struct uiw_sge sge = {(uintptr_t)c->msg.recv, PING_MSG_LEN, c->msg_mr->lkey};
	struct uiw_recv_wr wr = {.wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1};

	return uiw_post_recv(c->qp, &wr, NULL);
}

static int post_send(struct conn *c, enum wr_kind kind, enum uiw_wr_opcode op, void *addr,
		     uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct uiw_sge sge = {(uintptr_t)addr, len, lkey};
	struct uiw_send_wr wr = {
		.wr_id = kind,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = UIW_SEND_SIGNALED,
	};
	int r;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	r = uiw_post_send(c->qp, &wr, NULL);
	if (!r && op == UIW_WR_SEND)
		c->sends_inflight++;
	return r;
}

/* Allocate a connection's CQ, QP, buffers and MRs and post its receive. */
static int conn_new(struct ping_app *app, bool client, struct conn **out)
{
	struct ping_opts *o = app->o;
	struct uiw_qp_init_attr qa = {0};
	struct conn *c;
	int r;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->app = app;
	c->client = client;
	c->rdma_len = client ? (size_t)o->size : PING_SINK_MAX;
	/* one octet more than registered: a NUL that keeps printing bounded */
	c->rdma_buf = calloc(1, c->rdma_len + 1);
	if (!c->rdma_buf) {
		r = -ENOMEM;
		goto fail;
	}
	if (client) {
		c->start_buf = calloc(1, c->rdma_len);
		if (!c->start_buf) {
			r = -ENOMEM;
			goto fail;
		}
	} else if (o->validate) {
		c->expect = calloc(1, c->rdma_len);
		if (!c->expect) {
			r = -ENOMEM;
			goto fail;
		}
	}
	r = uiw_create_cq(app->ctx, PING_CQ_DEPTH, c, app->ch, &c->cq);
	if (r)
		goto fail;
	r = uiw_req_notify_cq(c->cq, 0);
	if (r)
		goto fail;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.cap.max_send_wr = PING_SQ_DEPTH;
	qa.cap.max_recv_wr = PING_RQ_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	r = uiw_create_qp(app->pd, &qa, &c->qp);
	if (r)
		goto fail;
	r = uiw_reg_mr(app->pd, &c->msg, sizeof(c->msg), UIW_ACCESS_LOCAL_WRITE, &c->msg_mr);
	if (r)
		goto fail;
	/* as rping: local write, remote read and remote write on both buffers */
	r = uiw_reg_mr(app->pd, c->rdma_buf, c->rdma_len,
		       UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_READ | UIW_ACCESS_REMOTE_WRITE,
		       &c->rdma_mr);
	if (r)
		goto fail;
	if (client) {
		r = uiw_reg_mr(app->pd, c->start_buf, c->rdma_len,
			       UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_READ |
				       UIW_ACCESS_REMOTE_WRITE,
			       &c->start_mr);
		if (r)
			goto fail;
	}
	r = post_recv(c);
	if (r)
		goto fail;
	dbg("connection resources: sink %p rkey %#x len %zu%s", (void *)c->rdma_buf,
	    c->rdma_mr->rkey, c->rdma_len, client ? "" : " (server)");
	*out = c;
	return 0;
fail:
	conn_free(c);
	return r;
}

static void conn_link(struct ping_app *app, struct conn *c)
{
	c->next = app->conns;
	app->conns = c;
}

/* ---- client ------------------------------------------------------------ */

/* Fill the start buffer for the next ping and advertise it. */
static void client_start_ping(struct conn *c)
{
	int r;

	ping_pattern(c->start_buf, c->rdma_len, c->ping);
	info_pack(c->msg.adv, (uintptr_t)c->start_buf, c->start_mr->rkey, (uint32_t)c->rdma_len);
	dbg("ping %ld: advertising start buffer addr %#" PRIx64 " rkey %#x len %zu", c->ping,
	    (uint64_t)(uintptr_t)c->start_buf, c->start_mr->rkey, c->rdma_len);
	conn_set_state(c, CS_CLI_WAIT_GO1);
	r = post_send(c, WR_SEND_ADV, UIW_WR_SEND, c->msg.adv, PING_MSG_LEN, c->msg_mr->lkey, 0, 0);
	if (r)
		conn_fail(c, "posting a Send failed: %d", r);
}

/* A go-ahead arrived and our last Send completed: take the next step. */
static void client_step(struct conn *c)
{
	struct ping_opts *o = c->app->o;
	int r;

	if (!c->got_msg || c->sends_inflight)
		return;
	c->got_msg = false;
	if (c->state == CS_CLI_WAIT_GO1) {
		/* the server has read the ping: advertise the sink for the echo */
		memset(c->rdma_buf, 0, c->rdma_len);
		info_pack(c->msg.adv, (uintptr_t)c->rdma_buf, c->rdma_mr->rkey,
			  (uint32_t)c->rdma_len);
		dbg("ping %ld: advertising sink addr %#" PRIx64 " rkey %#x len %zu", c->ping,
		    (uint64_t)(uintptr_t)c->rdma_buf, c->rdma_mr->rkey, c->rdma_len);
		conn_set_state(c, CS_CLI_WAIT_GO2);
		r = post_send(c, WR_SEND_ADV, UIW_WR_SEND, c->msg.adv, PING_MSG_LEN,
			      c->msg_mr->lkey, 0, 0);
		if (r)
			conn_fail(c, "posting a Send failed: %d", r);
		return;
	}
	/* CS_CLI_WAIT_GO2: the echo is in the sink */
	if (o->validate && memcmp(c->start_buf, c->rdma_buf, c->rdma_len)) {
		size_t i = 0;

		while (c->start_buf[i] == c->rdma_buf[i])
			i++;
		conn_fail(c, "data mismatch in ping %ld at offset %zu: sent %#04x, got back %#04x",
			  c->ping, i, (unsigned char)c->start_buf[i],
			  (unsigned char)c->rdma_buf[i]);
		return;
	}
	if (o->verbose)
		printf("ping data: %s\n", c->rdma_buf);
	c->ping++;
	if (o->count && c->ping >= o->count) {
		dbg("%ld pings done, disconnecting", c->ping);
		r = uiw_disconnect(c->id);
		if (r) {
			dbg("uiw_disconnect: %d", r);
			conn_set_state(c, CS_DONE);
		} else {
			conn_set_state(c, CS_CLOSING);
		}
		return;
	}
	client_start_ping(c);
}

/* ---- server ------------------------------------------------------------ */

static void server_got_msg(struct conn *c)
{
	uint32_t len;
	int r;

	info_unpack(c->msg.recv, &c->peer);
	dbg("received rkey %#x addr %#" PRIx64 " len %u from the client", c->peer.rkey,
	    c->peer.addr, c->peer.size);
	if (c->state == CS_SRV_WAIT_START) {
		if (c->peer.size > PING_SINK_MAX) {
			conn_fail(c,
				  "the client advertised %u octets; this server reads at most %d",
				  c->peer.size, PING_SINK_MAX);
			return;
		}
		c->read_len = c->peer.size;
		conn_set_state(c, CS_SRV_READING);
		r = post_send(c, WR_READ, UIW_WR_RDMA_READ, c->rdma_buf, c->read_len,
			      c->rdma_mr->lkey, c->peer.addr, c->peer.rkey);
		if (r)
			conn_fail(c, "posting the RDMA Read failed: %d", r);
		return;
	}
	/* CS_SRV_WAIT_SINK: echo what was read, as rping: the string and its
	 * NUL (a NUL follows the data read; never more than the sink holds) */
	len = (uint32_t)strnlen(c->rdma_buf, c->read_len) + 1;

	if (len > c->peer.size)
		len = c->peer.size;
	dbg("rdma write from lkey %#x laddr %p len %u", c->rdma_mr->lkey, (void *)c->rdma_buf, len);
	conn_set_state(c, CS_SRV_WRITING);
	r = post_send(c, WR_WRITE, UIW_WR_RDMA_WRITE, c->rdma_buf, len, c->rdma_mr->lkey,
		      c->peer.addr, c->peer.rkey);
	if (r)
		conn_fail(c, "posting the RDMA Write failed: %d", r);
}

static void server_read_done(struct conn *c)
{
	struct ping_opts *o = c->app->o;
	int r;

	c->rdma_buf[c->read_len] = 0;
	dbg("rdma read of %u octets complete", c->read_len);
	if (o->validate && c->read_len) {
		ping_pattern(c->expect, c->read_len, c->ping);
		if (memcmp(c->expect, c->rdma_buf, c->read_len)) {
			size_t i = 0;

			while (c->expect[i] == c->rdma_buf[i])
				i++;
			conn_fail(c,
				  "ping %ld: the data read is not rping's pattern at offset %zu "
				  "(expected %#04x, got %#04x)",
				  c->ping, i, (unsigned char)c->expect[i],
				  (unsigned char)c->rdma_buf[i]);
			return;
		}
	}
	if (o->verbose)
		printf("server ping data: %s\n", c->rdma_buf);
	conn_set_state(c, CS_SRV_WAIT_SINK);
	r = post_send(c, WR_SEND_GO, UIW_WR_SEND, c->msg.go, PING_MSG_LEN, c->msg_mr->lkey, 0, 0);
	if (r)
		conn_fail(c, "posting the go-ahead failed: %d", r);
	else
		dbg("server posted go ahead");
}

static void server_write_done(struct conn *c)
{
	int r;

	dbg("rdma write complete");
	c->ping++;
	conn_set_state(c, CS_SRV_WAIT_START);
	r = post_send(c, WR_SEND_GO, UIW_WR_SEND, c->msg.go, PING_MSG_LEN, c->msg_mr->lkey, 0, 0);
	if (r)
		conn_fail(c, "posting the go-ahead failed: %d", r);
	else
		dbg("server posted go ahead");
}

/* ---- completions ------------------------------------------------------- */

static const char *wc_status_str(enum uiw_wc_status s)
{
	switch (s) {
	case UIW_WC_SUCCESS:
		return "success";
	case UIW_WC_LOC_LEN_ERR:
		return "local length error";
	case UIW_WC_LOC_QP_OP_ERR:
		return "local QP operation error";
	case UIW_WC_LOC_PROT_ERR:
		return "local protection error";
	case UIW_WC_WR_FLUSH_ERR:
		return "flushed";
	case UIW_WC_REM_INV_REQ_ERR:
		return "remote invalid request";
	case UIW_WC_REM_ACCESS_ERR:
		return "remote access error";
	case UIW_WC_REM_OP_ERR:
		return "remote operation error";
	case UIW_WC_FATAL_ERR:
		return "fatal error";
	case UIW_WC_GENERAL_ERR:
		return "general error";
	}
	return "unknown status";
}

static const char *wr_name(uint64_t kind)
{
	switch (kind) {
	case WR_RECV:
		return "receive";
	case WR_SEND_ADV:
		return "Send of a buffer advertisement";
	case WR_SEND_GO:
		return "Send of a go-ahead";
	case WR_READ:
		return "RDMA Read";
	case WR_WRITE:
		return "RDMA Write";
	}
	return "work request";
}

static void handle_wc(struct conn *c, const struct uiw_wc *wc)
{
	int r;

	if (wc->wr_id == WR_SEND_ADV || wc->wr_id == WR_SEND_GO) {
		if (c->sends_inflight)
			c->sends_inflight--;
	}
	if (wc->status != UIW_WC_SUCCESS) {
		if (wc->status == UIW_WC_WR_FLUSH_ERR) {
			/* the QP went to error; DISCONNECTED tells the story */
			dbg("%s flushed", wr_name(wc->wr_id));
			return;
		}
		if (wc->wc_flags & UIW_WC_TERM)
			conn_fail(c,
				  "%s failed in ping %ld: %s (status %d; TERMINATE layer %u, "
				  "type %u, code %u)",
				  wr_name(wc->wr_id), c->ping, wc_status_str(wc->status),
				  (int)wc->status, wc->term_layer, wc->term_etype, wc->term_ecode);
		else
			conn_fail(c, "%s failed in ping %ld: %s (status %d)", wr_name(wc->wr_id),
				  c->ping, wc_status_str(wc->status), (int)wc->status);
		return;
	}
	switch (wc->wr_id) {
	case WR_RECV:
		if (wc->byte_len != PING_MSG_LEN) {
			conn_fail(c, "received bogus data: a %u-octet message (rping's are %d)",
				  wc->byte_len, PING_MSG_LEN);
			return;
		}
		r = post_recv(c);
		if (r) {
			conn_fail(c, "posting a receive failed: %d", r);
			return;
		}
		if (c->client && (c->state == CS_CLI_WAIT_GO1 || c->state == CS_CLI_WAIT_GO2) &&
		    !c->got_msg) {
			dbg("received go-ahead");
			c->got_msg = true;
		} else if (!c->client &&
			   (c->state == CS_SRV_WAIT_START || c->state == CS_SRV_WAIT_SINK)) {
			server_got_msg(c);
		} else if (c->state != CS_CLOSING) {
			conn_fail(c,
				  "protocol error: the %s sent a message out of turn "
				  "(while waiting for %s)",
				  c->client ? "server" : "client", state_what[c->state]);
		}
		break;
	case WR_READ:
		if (c->state == CS_SRV_READING)
			server_read_done(c);
		break;
	case WR_WRITE:
		if (c->state == CS_SRV_WRITING)
			server_write_done(c);
		break;
	default:
		break;
	}
}

static void conn_poll(struct conn *c)
{
	struct uiw_wc wc[8];
	int n;

	while (c->state != CS_DEAD && c->state != CS_DONE && (n = uiw_poll_cq(c->cq, 8, wc)) != 0) {
		if (n < 0) {
			conn_fail(c, "uiw_poll_cq: %d (completions lost)", n);
			return;
		}
		for (int i = 0; i < n && c->state != CS_DEAD; i++)
			handle_wc(c, &wc[i]);
	}
	if (c->client && (c->state == CS_CLI_WAIT_GO1 || c->state == CS_CLI_WAIT_GO2))
		client_step(c);
}

/* ---- CM events ----------------------------------------------------------- */

static struct conn *conn_by_id(struct ping_app *app, struct uiw_cm_id *id)
{
	for (struct conn *c = app->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void keep_rejected(struct ping_app *app, struct uiw_cm_id *id)
{
	struct uiw_cm_id **n = realloc(app->rejected, (app->nrejected + 1) * sizeof(*n));

	if (!n) {
		uiw_destroy_id(id);
		return;
	}
	app->rejected = n;
	app->rejected[app->nrejected++] = id;
}

static void server_connect_request(struct ping_app *app, const struct uiw_cm_event *ev)
{
	struct uiw_conn_param cp = {0};
	struct conn *c;
	char eb[128];
	int r;

	if (!app->o->persistent && app->session_taken) {
		dbg("busy with a client: rejecting another (use -P to serve several)");
		if (uiw_reject(ev->id, NULL, 0))
			uiw_destroy_id(ev->id);
		else
			keep_rejected(app, ev->id);
		return;
	}
	app->session_taken = true;
	r = conn_new(app, false, &c);
	if (r) {
		err("client %u: setting up its resources failed: %s", app->nclients + 1,
		    errtext(r, eb, sizeof(eb)));
		uiw_reject(ev->id, NULL, 0);
		keep_rejected(app, ev->id);
		if (!app->o->persistent) {
			app->status = EXIT_FAIL;
			app->finished = true;
		}
		return;
	}
	c->serial = ++app->nclients;
	c->id = ev->id;
	conn_link(app, c);
	/* as librdmacm's rdma_accept(id, NULL) in rping: our IRD is the
	 * client's ORD and our ORD its IRD (1 and 1 from rping); revision 1
	 * carries none: 1 as rping */
	cp.responder_resources = ev->initiator_depth ? ev->initiator_depth : PING_IRD_ORD;
	cp.initiator_depth = ev->responder_resources ? ev->responder_resources : PING_IRD_ORD;
	dbg("accepting client %u (peer IRD %u ORD %u; ours IRD %u ORD %u)", c->serial,
	    ev->responder_resources, ev->initiator_depth, cp.responder_resources,
	    cp.initiator_depth);
	conn_set_state(c, CS_ACCEPTING);
	r = uiw_accept(c->id, c->qp, &cp);
	if (r)
		conn_fail(c, "accepting the connection failed: %s", errtext(r, eb, sizeof(eb)));
}

static void handle_cm_event(struct ping_app *app, const struct uiw_cm_event *ev)
{
	struct conn *c;
	char eb[128];

	dbg("cm event %s (status %d)", uiw_event_str(ev->event), ev->status);
	if (ev->event == UIW_CM_EVENT_CONNECT_REQUEST) {
		if (app->listen_id && !app->finished)
			server_connect_request(app, ev);
		else if (uiw_reject(ev->id, NULL, 0))
			uiw_destroy_id(ev->id);
		else
			keep_rejected(app, ev->id);
		return;
	}
	c = conn_by_id(app, ev->id);
	if (!c)
		return; /* a rejected id's news */
	switch (ev->event) {
	case UIW_CM_EVENT_ESTABLISHED:
		if (c->client && c->state == CS_CONNECTING) {
			dbg("connected to %s (peer IRD %u ORD %u)", app->peer,
			    ev->responder_resources, ev->initiator_depth);
			client_start_ping(c);
		} else if (!c->client && c->state == CS_ACCEPTING) {
			conn_set_state(c, CS_SRV_WAIT_START);
		}
		break;
	case UIW_CM_EVENT_REJECTED:
		/* an MPA Reject, or (as librdmacm reports iWARP) a refused TCP
		 * connection: nothing listens on that port */
		conn_fail(c, "connect to %s: %s (REJECTED)", app->peer,
			  ev->private_data_len ? "rejected by the server"
					       : "connection refused, or rejected by the server");
		break;
	case UIW_CM_EVENT_UNREACHABLE:
		conn_fail(c, "connect to %s: %s", app->peer, errtext(ev->status, eb, sizeof(eb)));
		break;
	case UIW_CM_EVENT_CONNECT_ERROR:
		conn_fail(c, "connect to %s: MPA handshake failed: %s", app->peer,
			  errtext(ev->status, eb, sizeof(eb)));
		break;
	case UIW_CM_EVENT_DISCONNECTED:
		if (c->state == CS_CLOSING || c->state == CS_DONE) {
			conn_set_state(c, CS_DONE);
		} else if (ev->term_flags) {
			conn_fail(c,
				  "connection %s during ping %ld: TERMINATE %s (layer %u, type %u, "
				  "code %u)",
				  c->client ? "to the server broken" : "broken", c->ping,
				  ev->term_flags & UIW_CM_TERM_SENT ? "sent by us"
								    : "received from the peer",
				  ev->term_layer, ev->term_etype, ev->term_ecode);
		} else if (!c->client &&
			   (c->state == CS_SRV_WAIT_START || c->state == CS_ACCEPTING)) {
			dbg("client %u disconnected after %ld pings", c->serial, c->ping);
			conn_set_state(c, CS_DONE);
		} else if (c->client) {
			conn_fail(c,
				  "connection to %s closed by the server during ping %ld "
				  "(waiting for %s)",
				  app->peer, c->ping, state_what[c->state]);
		} else {
			conn_fail(c, "the client disconnected during ping %ld (waiting for %s)",
				  c->ping, state_what[c->state]);
		}
		break;
	default:
		break;
	}
}

/* ---- main loop --------------------------------------------------------- */

static void check_deadlines(struct ping_app *app)
{
	uint64_t now = now_ms();

	for (struct conn *c = app->conns; c; c = c->next) {
		if (!c->deadline || now < c->deadline || c->state >= CS_DONE)
			continue;
		if (c->state == CS_CLOSING) {
			dbg("no DISCONNECTED within %d ms: closing anyway", PING_CLOSE_MS);
			conn_set_state(c, CS_DONE);
		} else if (c->state == CS_CONNECTING) {
			conn_fail(c, "connect to %s: timed out after %ld s", app->peer,
				  app->o->timeout_s);
		} else {
			conn_fail(c,
				  "no progress for %ld s in ping %ld: the %s did not answer "
				  "(waiting for %s)",
				  app->o->timeout_s, c->ping, c->client ? "server" : "client",
				  state_what[c->state]);
		}
	}
}

/* Tear down finished connections; decide whether the program is done. */
static void reap(struct ping_app *app)
{
	struct conn **pp = &app->conns;

	while (*pp) {
		struct conn *c = *pp;

		if (c->state != CS_DONE && c->state != CS_DEAD) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		if (c->failed && (c->client || !app->o->persistent))
			app->status = EXIT_FAIL;
		if (!c->client)
			dbg("client %u: done, %ld pings%s", c->serial, c->ping,
			    c->failed ? ", failed" : "");
		if (c->client || !app->o->persistent)
			app->finished = true;
		conn_free(c);
	}
}

static int poll_timeout(struct ping_app *app)
{
	uint64_t now = now_ms(), min = 0;

	for (struct conn *c = app->conns; c; c = c->next)
		if (c->deadline && (!min || c->deadline < min))
			min = c->deadline;
	if (!min)
		return -1;
	return min <= now ? 0 : (int)(min - now > INT_MAX ? INT_MAX : min - now);
}

/* Run until done; returns the signal that stopped us, or 0. */
static int run_loop(struct ping_app *app)
{
	while (!app->finished) {
		struct pollfd pfd[3] = {
			{.fd = uiw_cm_event_fd(app->ctx), .events = POLLIN},
			{.fd = app->ch->fd, .events = POLLIN},
			{.fd = app->sfd, .events = POLLIN},
		};
		struct uiw_cm_event ev;
		struct uiw_cq *cq;
		void *cqctx;
		int n;

		fflush(stdout);
		n = poll(pfd, 3, poll_timeout(app));
		if (n < 0 && errno != EINTR) {
			err("poll: %s", strerror(errno));
			app->status = EXIT_FAIL;
			return 0;
		}
		if (n > 0 && (pfd[2].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(app->sfd, &si, sizeof(si)) == sizeof(si)) {
				dbg("signal %u: stopping", si.ssi_signo);
				return (int)si.ssi_signo;
			}
		}
		while (uiw_get_cm_event(app->ctx, &ev, 0) == 0)
			handle_cm_event(app, &ev);
		while (uiw_get_cq_event(app->ch, &cq, &cqctx) == 0) {
			uiw_ack_cq_events(cq, 1);
			uiw_req_notify_cq(cq, 0);
		}
		/* polling every CQ after re-arming catches what came in between */
		for (struct conn *c = app->conns; c; c = c->next)
			conn_poll(c);
		check_deadlines(app);
		reap(app);
	}
	return 0;
}

static int run_client(struct ping_app *app)
{
	struct uiw_conn_param cp = {
		.responder_resources = PING_IRD_ORD,
		.initiator_depth = PING_IRD_ORD,
	};
	struct conn *c;
	char eb[128];
	int r;

	host_port(app->peer, sizeof(app->peer), app->host, app->o->port);
	r = conn_new(app, true, &c);
	if (r) {
		err("setting up the connection's resources failed: %s", errtext(r, eb, sizeof(eb)));
		return EXIT_FAIL;
	}
	conn_link(app, c);
	r = uiw_create_id(app->ctx, c, &c->id);
	if (!r && app->o->src && (r = uiw_bind_addr(c->id, app->o->src, 0))) {
		conn_fail(c, "source address %s: %s", app->o->src, errtext(r, eb, sizeof(eb)));
		reap(app);
		return EXIT_FAIL;
	}
	if (!r)
		r = uiw_connect(c->id, app->host, (uint16_t)app->o->port, c->qp, &cp);
	if (r) {
		conn_fail(c, "connect to %s: %s", app->peer, errtext(r, eb, sizeof(eb)));
		reap(app);
		return EXIT_FAIL;
	}
	dbg("connecting to %s", app->peer);
	conn_set_state(c, CS_CONNECTING);
	return 0;
}

static int run_server(struct ping_app *app)
{
	char eb[128];
	int r;

	r = uiw_create_id(app->ctx, NULL, &app->listen_id);
	if (r) {
		err("uiw_create_id: %s", errtext(r, eb, sizeof(eb)));
		return EXIT_FAIL;
	}
	/* no -a: every address, IPv6 and IPv4 (rping's default, 0.0.0.0, and more) */
	r = uiw_listen(app->listen_id, app->o->addr, (uint16_t)app->o->port, PING_BACKLOG);
	if (r) {
		err("listen on %s port %u: %s", app->host, app->o->port,
		    errtext(r, eb, sizeof(eb)));
		return EXIT_FAIL;
	}
	if (app->o->port == 0 || debug) {
		printf(PROG ": listening on %s port %u\n", app->host,
		       (unsigned)uiw_get_port(app->listen_id));
		fflush(stdout);
	}
	return 0;
}

static void teardown(struct ping_app *app)
{
	int r;

	while (app->conns) {
		struct conn *c = app->conns;

		app->conns = c->next;
		conn_free(c);
	}
	for (size_t i = 0; i < app->nrejected; i++)
		uiw_destroy_id(app->rejected[i]);
	free(app->rejected);
	if (app->listen_id)
		uiw_destroy_id(app->listen_id);
	if (app->ch && (r = uiw_destroy_comp_channel(app->ch)))
		err("uiw_destroy_comp_channel: %d", r);
	if (app->pd && (r = uiw_dealloc_pd(app->pd)))
		err("uiw_dealloc_pd: %d", r);
	if (app->ctx && (r = uiw_close_context(app->ctx)))
		err("uiw_close_context: %d", r);
}

int main(int argc, char **argv)
{
	struct ping_opts o;
	struct ping_app app;
	sigset_t sigs;
	char eb[128];
	int r, sig = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	memset(&app, 0, sizeof(app));
	app.o = &o;
	app.sfd = -1;
	app.host = o.addr ? o.addr : "*";

	/* signals arrive on a signalfd; block them before the progress thread
	 * exists so that it inherits the mask */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) ||
	    (app.sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		err("signalfd: %s", strerror(errno));
		return EXIT_FAIL;
	}

	r = uiw_open_context(&app.ctx, &o.attr);
	if (r) {
		err("opening a uiwarp context failed: %s", errtext(r, eb, sizeof(eb)));
		return EXIT_FAIL;
	}
	r = uiw_alloc_pd(app.ctx, &app.pd);
	if (!r)
		r = uiw_create_comp_channel(app.ctx, &app.ch);
	if (r) {
		err("setting up failed: %s", errtext(r, eb, sizeof(eb)));
		app.status = EXIT_FAIL;
		goto out;
	}
	/* non-blocking: uiw_get_cq_event() says -EAGAIN once drained */
	if (fcntl(app.ch->fd, F_SETFL, fcntl(app.ch->fd, F_GETFL) | O_NONBLOCK)) {
		err("fcntl: %s", strerror(errno));
		app.status = EXIT_FAIL;
		goto out;
	}
	dbg("%s: uiwarp %s, size %ld, count %ld, port %u", o.role ? "server" : "client",
	    uiw_version(), o.size, o.count, o.port);

	r = o.role ? run_server(&app) : run_client(&app);
	if (r)
		app.status = r;
	else
		sig = run_loop(&app);
out:
	teardown(&app);
	fflush(stdout);
	if (sig) {
		/* die of the signal, as rping would, once everything is closed */
		signal(sig, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &sigs, NULL);
		raise(sig);
	}
	close(app.sfd);
	return app.status;
}
