/* SPDX-License-Identifier: MIT */
/*
 * uiw-perf - bandwidth and latency of uiwarp (RDMA Write, Read and Send over
 * MPA/TCP, and RFC 7306's atomics and Write with Immediate), with a raw TCP
 * baseline in the same tool, in the manner of perftest: the same program is
 * the server (no address given) and the client, and prints perftest's
 * result table.  docs/uiw-perf.md is the manual; `uiw-perf --help` the
 * summary.
 *
 * Structure (uiw-perf.h lists what the parts share):
 *  - this file: options, settings exchange (CM private data for the verbs
 *    tests, a fixed-size hello frame for the TCP tests), output and
 *    statistics, and the uiwarp tests: the verbs runtime, one context, PD,
 *    CQ (and completion channel in event mode) and one registered buffer
 *    per process, QPS connections; control messages (FIN, FIN_ACK,
 *    CREDIT, ROUND, ROUND_ACK, ALIVE) are Sends with the Solicited Event
 *    flag on the data QPs, data Sends (and Writes with Immediate) never
 *    carry it, so the receiver tells them apart by UIW_WC_SOLICITED;
 *  - uiw-perf-tcp.c: the raw TCP baseline (tcp_bw, tcp_lat);
 *  - uiw-perf-perftest.c: perftest's rdma_cm exchange (--perftest).
 *
 * Single-threaded: in event mode the library's progress thread moves the
 * data, in poll mode uiw_poll_cq() does.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"
#include "uiw-perf.h"

const struct test_info tests[T_COUNT] = {
	[T_WRITE_BW] = {"write_bw", "RDMA_Write BW Test", 0, 0},
	[T_READ_BW] = {"read_bw", "RDMA_Read BW Test", 0, 0},
	[T_SEND_BW] = {"send_bw", "Send BW Test", 0, 0},
	[T_WRITE_LAT] = {"write_lat", "RDMA_Write Latency Test", 1, 0},
	[T_READ_LAT] = {"read_lat", "RDMA_Read Latency Test", 1, 0},
	[T_SEND_LAT] = {"send_lat", "Send Latency Test", 1, 0},
	[T_TCP_BW] = {"tcp_bw", "TCP BW Test (raw TCP baseline)", 0, 1},
	[T_TCP_LAT] = {"tcp_lat", "TCP Latency Test (raw TCP baseline)", 1, 1},
	[T_ATOMIC_LAT] = {"atomic_lat", "Atomic Latency Test (RFC 7306)", 1, 0, 1, 1},
	[T_ATOMIC_BW] = {"atomic_bw", "Atomic BW Test (RFC 7306)", 0, 0, 1, 1},
	[T_WRITE_IMM_BW] = {"write_imm_bw", "RDMA_Write with Immediate BW Test (RFC 7306)", 0, 0, 1,
			    0},
};

const char *prog = "uiw-perf";

/*
 * --timeout: every wait for the peer (connection setup, each step of a run,
 * teardown) ends after this long without progress; 0: no bound.  tick_ms:
 * how long one event-mode wait sleeps, short enough to notice the bound.
 */
uint64_t stall_ns = PERF_TIMEOUT_S * 1000000000ull;
static int tick_ms = 1000;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: uiw-perf TEST [options] [SERVER]\n"
		"\n"
		"uiwarp bandwidth and latency, with a raw TCP baseline, in the manner of\n"
		"perftest. Without SERVER, uiw-perf is the server: it waits for one client,\n"
		"runs the test with it and exits. The client decides the run; settings\n"
		"travel in the MPA private data (TCP tests: a hello frame).\n"
		"\n"
		"TEST: write_bw read_bw send_bw write_lat read_lat send_lat  (uiwarp)\n"
		"      atomic_lat atomic_bw write_imm_bw        (uiwarp, RFC 7306 extensions)\n"
		"      tcp_bw tcp_lat                                        (raw TCP)\n"
		"\n"
		"Options:\n"
		"  -s, --size SIZE        message size (suffix K, M: KiB, MiB); default\n"
		"                         65536 for *_bw, 2 for *_lat; atomic tests: 8 only\n"
		"  -a, --all              all sizes 2, 4, ... 8 MiB (powers of two)\n"
		"  -n, --iters N          messages per QP and size (bw: 5000, lat: 1000)\n"
		"  -D, --duration SECS    run each size for SECS seconds instead of -n;\n"
		"                         progress goes to stderr every second\n"
		"  -q, --qp N             N connections (QPs), traffic spread round-robin,\n"
		"                         aggregate reported; bw tests only (default 1, max 1024)\n"
		"  -p, --port PORT        TCP port (default 18515); 0 on the server: the\n"
		"                         kernel chooses, printed on stdout as\n"
		"                         \"uiw-perf: listening on ADDR port N\"\n"
		"  -B, --bind ADDR        server: listen address (default: every IPv6 and\n"
		"                         IPv4 address, as perftest; -B 127.0.0.1: this\n"
		"                         host only)\n"
		"      --crc on|off       MPA CRC32C (default on); from each side's own\n"
		"                         command line, must match (CRC is used if either\n"
		"                         side asks)\n"
		"      --markers on|off   MPA markers (default off); as --crc\n"
		"  -e, --use_event        event mode: completion channel, blocking (TCP\n"
		"                         tests: blocking calls); the default of the *_bw\n"
		"                         tests (--event: the same)\n"
		"      --poll             poll mode: polled context, uiw_poll_cq() drives\n"
		"                         the engine, busy-poll (TCP tests: non-blocking\n"
		"                         busy-poll); the default of the *_lat tests, as\n"
		"                         perftest. The header says which mode ran\n"
		"      --progress thread|app  event mode (implies -e): who runs the engine: the\n"
		"                         context's progress thread (default; two wake-ups\n"
		"                         per message), or the application, blocked in\n"
		"                         uiw_progress() on a polled context (one wake-up).\n"
		"                         --poll --progress thread: a progress thread moves\n"
		"                         the data, the application busy-polls the CQ (the\n"
		"                         model of a libibverbs program under uiw-run)\n"
		"      --engines N        --progress thread (implies -e without --poll): N engines\n"
		"                         in this side's context, 1..64 (default 1); the QPs\n"
		"                         are spread over them round-robin; each side's own\n"
		"      --verify           the receiver (the reader for read tests) checks\n"
		"                         every payload; mismatch: exit status 3\n"
		"      --json             one JSON object per result line on stdout (the\n"
		"                         listening line too: {\"event\":\"listening\",...})\n"
		"  -t, --tx-depth N       outstanding send WRs per QP (default 128)\n"
		"  -r, --rx-depth N       send_bw: receives posted per QP (default 512)\n"
		"  -Q, --cq-mod N         signal one send WR in N (default 100)\n"
		"  -o, --outs N           outstanding RDMA Reads and atomics (ORD = IRD,\n"
		"                         default 16); atomic_bw's window per QP\n"
		"      --atomic fetch_add|cmp_swap  the operation of atomic_lat and atomic_bw\n"
		"                         (default fetch_add); cmp_swap compares with the\n"
		"                         value the previous one stored, so on one QP every\n"
		"                         one succeeds\n"
		"  -I, --inline-size N    send payloads up to N bytes inline (default 0)\n"
		"      --inject-error N   testing aid: corrupt one byte of message N\n"
		"                         (0-based) at its source, with --verify\n"
		"      --perftest         speak perftest's rdma_cm exchange (ib_write_bw -R,\n"
		"                         ib_read_bw -R, ib_send_bw -R, perftest 4.5 /\n"
		"                         version 6.06) instead of uiw-perf's own: the peer\n"
		"                         is a perftest program; write_bw, read_bw, send_bw\n"
		"                         only, one QP, -s -n -t -r -Q -o -p -B --crc\n"
		"                         --markers; no -a/-D/-q/--verify/--poll/--json, no\n"
		"                         latency tests, no RFC 7306 tests; give both sides\n"
		"                         the same -n, -s and -r (docs/perftest-interop.md)\n"
		"      --timeout SECS     bound on every wait for the peer (connection setup,\n"
		"                         each step of a run, teardown; default 10, 0: no\n"
		"                         bound): a peer that makes no progress for SECS\n"
		"                         ends the run with \"stalled: ...\" (exit status 1).\n"
		"                         The server waits for its first client without bound\n"
		"  -h, --help             this text;  -V, --version: the version\n"
		"\n"
		"Settings that must be equal on both sides: TEST, --crc, --markers, and\n"
		"for write_lat --poll/-e. The server adopts the client's -s/-a, -n/-D,\n"
		"-q, -t, -r, -Q, -o, -I, --atomic, --verify unless it was given them itself,\n"
		"in which case they must be equal too. A mismatch is refused with a message\n"
		"on both sides (exit status 1).\n"
		"\n"
		"write_lat: --poll polls the last byte of the buffer (as perftest); -e\n"
		"follows each Write with a 0-byte Send that wakes the peer's completion\n"
		"channel. BW in MB/sec of 2^20 bytes; latencies in microseconds, half the\n"
		"round trip except read_lat (one Read) and atomic_lat (one atomic). Peak BW:\n"
		"the best rate over any stretch of at least 1/16 of the run.\n"
		"\n"
		"RFC 7306 tests (both sides' QPs are created with UIW_QP_EXT_RFC7306; a\n"
		"uiw-perf peer only): atomic_lat issues one 8-byte atomic at a time on a\n"
		"64-bit word of the server's memory (UIW_ACCESS_REMOTE_ATOMIC), the\n"
		"latency is the whole operation; atomic_bw keeps up to -o atomics\n"
		"outstanding per QP, every QP on the same word, and reports operations\n"
		"(MsgRate) and MB/sec of 8-byte operands; with --verify the client checks\n"
		"every returned value and the server that its word holds exactly the sum\n"
		"of the additions. write_imm_bw is write_bw with RDMA Write with Immediate:\n"
		"each message takes one of the receives the server posts (-r), flow\n"
		"control by credits as send_bw; --verify checks the length, the immediate\n"
		"(the message index) and the payload.\n"
		"\n"
		"TCP baseline: TCP_NODELAY (as the uiwarp engine's sockets), one send() call\n"
		"per whole message (the engine's chunking), the receiver recv()s the message\n"
		"size (at most 256 KiB) at a time, new connections per size; -e: blocking\n"
		"calls, --poll: busy-poll.\n"
		"\n"
		"Exit status: 0 success, 1 error, 2 usage, 3 verification failed.\n"
		"Manual: docs/uiw-perf.md\n");
}

void die(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the deadline of a wait for the peer that starts now (UINT64_MAX: none) */
static uint64_t peer_deadline(void)
{
	return stall_ns ? now_ns() + stall_ns : UINT64_MAX;
}

/* @who (the peer) made no progress within --timeout during @during */
void stall_die(const char *who, const char *during)
{
	die(EXIT_ERR,
	    "stalled: no progress from %s for %g s (%s; bound: --timeout, 0 for none): "
	    "the peer is stopped or the path is blocked",
	    who, (double)stall_ns / 1e9, during);
}

/* "64K", "1M", "8MiB", "4096" */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		end++;
	} else if (*end == 'g' || *end == 'G') {
		v <<= 30;
		end++;
	}
	if (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "b"))
		end += strlen(end);
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static unsigned parse_uint(const char *opt, const char *s, unsigned min, unsigned max)
{
	uint64_t v;

	if (parse_size(s, &v) || v < min || v > max)
		die(EXIT_USAGE, "%s: '%s' is not a number in %u..%u", opt, s, min, max);
	return (unsigned)v;
}

static int parse_onoff(const char *opt, const char *s)
{
	if (!strcmp(s, "on") || !strcmp(s, "1") || !strcmp(s, "yes"))
		return 1;
	if (!strcmp(s, "off") || !strcmp(s, "0") || !strcmp(s, "no"))
		return 0;
	die(EXIT_USAGE, "%s takes on or off, not '%s'", opt, s);
}

enum {
	OPT_CRC = 256,
	OPT_MARKERS,
	OPT_POLL,
	OPT_EVENT,
	OPT_PROGRESS,
	OPT_ENGINES,
	OPT_VERIFY,
	OPT_JSON,
	OPT_INJECT,
	OPT_PERFTEST,
	OPT_TIMEOUT,
	OPT_ATOMIC,
};

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"size", required_argument, NULL, 's'},
		{"all", no_argument, NULL, 'a'},
		{"iters", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'D'},
		{"qp", required_argument, NULL, 'q'},
		{"port", required_argument, NULL, 'p'},
		{"bind", required_argument, NULL, 'B'},
		{"tx-depth", required_argument, NULL, 't'},
		{"rx-depth", required_argument, NULL, 'r'},
		{"cq-mod", required_argument, NULL, 'Q'},
		{"outs", required_argument, NULL, 'o'},
		{"inline-size", required_argument, NULL, 'I'},
		{"crc", required_argument, NULL, OPT_CRC},
		{"markers", required_argument, NULL, OPT_MARKERS},
		{"poll", no_argument, NULL, OPT_POLL},
		{"event", no_argument, NULL, OPT_EVENT},
		{"use_event", no_argument, NULL, OPT_EVENT},
		{"use-event", no_argument, NULL, OPT_EVENT},
		{"progress", required_argument, NULL, OPT_PROGRESS},
		{"engines", required_argument, NULL, OPT_ENGINES},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"json", no_argument, NULL, OPT_JSON},
		{"inject-error", required_argument, NULL, OPT_INJECT},
		{"perftest", no_argument, NULL, OPT_PERFTEST},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"atomic", required_argument, NULL, OPT_ATOMIC},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *pos[2] = {NULL, NULL};
	int npos = 0, c, progress_given = 0;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->qps = 1;
	o->port = PERF_PORT;
	o->crc = 1;
	o->tx_depth = 128;
	o->rx_depth = 512;
	o->cq_mod = 100;
	o->outs = 16;
	o->bind = NULL; /* every address, IPv6 and IPv4 (as perftest, iperf3) */
	o->timeout_s = PERF_TIMEOUT_S;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-s:an:D:q:p:B:t:r:Q:o:I:ehV", lo, NULL)) != -1) {
		switch (c) {
		case 1:
			if (npos == 2)
				die(EXIT_USAGE, "unexpected argument '%s' (see --help)", optarg);
			pos[npos++] = optarg;
			break;
		case 's':
			if (parse_size(optarg, &v) || v < 1 || v > PERF_MAX_SIZE)
				die(EXIT_USAGE, "-s: '%s' is not a size in 1..1GiB", optarg);
			o->size = (uint32_t)v;
			o->given |= G_SIZE;
			break;
		case 'a':
			o->all = 1;
			o->given |= G_ALL;
			break;
		case 'n':
			if (parse_size(optarg, &v) || v < 1 || v > (1ull << 40))
				die(EXIT_USAGE, "-n: '%s' is not a count >= 1", optarg);
			o->iters = v;
			o->given |= G_ITERS;
			break;
		case 'D': {
			char *end;
			double d = strtod(optarg, &end);

			if (*end || !(d > 0) || d > 86400)
				die(EXIT_USAGE, "-D: '%s' is not a duration in seconds", optarg);
			o->duration_us = (uint64_t)(d * 1e6);
			if (!o->duration_us)
				o->duration_us = 1;
			o->given |= G_DUR;
			break;
		}
		case 'q':
			o->qps = parse_uint("-q", optarg, 1, PERF_MAX_QPS);
			o->given |= G_QPS;
			break;
		case 'p':
			o->port = parse_uint("-p", optarg, 0, 65535);
			break;
		case 'B':
			o->bind = optarg;
			break;
		case 't':
			o->tx_depth = parse_uint("-t", optarg, 1, 8192);
			o->given |= G_TX;
			break;
		case 'r':
			o->rx_depth = parse_uint("-r", optarg, 1, 8192);
			o->given |= G_RX;
			break;
		case 'Q':
			o->cq_mod = parse_uint("-Q", optarg, 1, 8192);
			o->given |= G_CQMOD;
			break;
		case 'o':
			o->outs = parse_uint("-o", optarg, 1, 16383);
			o->given |= G_OUTS;
			break;
		case 'I':
			o->inline_size = parse_uint("-I", optarg, 0, 65536);
			o->given |= G_INLINE;
			break;
		case OPT_CRC:
			o->crc = parse_onoff("--crc", optarg);
			break;
		case OPT_MARKERS:
			o->markers = parse_onoff("--markers", optarg);
			break;
		case OPT_POLL:
			o->poll = 1;
			o->mode_given = 1;
			break;
		case 'e':
		case OPT_EVENT:
			o->poll = 0;
			o->mode_given = 1;
			break;
		case OPT_PROGRESS:
			progress_given = 1;
			if (!strcmp(optarg, "app"))
				o->app = 1;
			else if (!strcmp(optarg, "thread"))
				o->app = 0;
			else
				die(EXIT_USAGE, "--progress takes thread or app, not '%s'", optarg);
			break;
		case OPT_ENGINES:
			progress_given = 1;
			o->engines = parse_uint("--engines", optarg, 1, 64);
			break;
		case OPT_VERIFY:
			o->verify = 1;
			o->given |= G_VERIFY;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_INJECT:
			if (parse_size(optarg, &v) || v > (1ull << 40))
				die(EXIT_USAGE, "--inject-error: '%s' is not a message index",
				    optarg);
			o->inject = v + 1;
			o->given |= G_INJECT;
			break;
		case OPT_PERFTEST:
			o->perftest = 1;
			break;
		case OPT_TIMEOUT: {
			char *end;
			double d = strtod(optarg, &end);

			if (end == optarg || *end || !(d >= 0) || d > 86400)
				die(EXIT_USAGE, "--timeout: '%s' is not a duration in seconds (0: none)",
				    optarg);
			o->timeout_s = d;
			break;
		}
		case OPT_ATOMIC:
			if (!strcmp(optarg, "fetch_add"))
				o->atomic_op = A_FETCH_ADD;
			else if (!strcmp(optarg, "cmp_swap"))
				o->atomic_op = A_CMP_SWAP;
			else
				die(EXIT_USAGE, "--atomic takes fetch_add or cmp_swap, not '%s'",
				    optarg);
			o->given |= G_ATOMIC;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case 'V':
			printf("uiw-perf (uiwarp %s)\n", uiw_version());
			exit(EXIT_OK);
		default:
			die(EXIT_USAGE, "unknown option or missing argument: '%s' (see --help)",
			    argv[optind - 1]);
		}
	}
	if (!npos)
		die(EXIT_USAGE, "no test given (see --help)");
	for (c = 0; c < T_COUNT; c++)
		if (!strcmp(pos[0], tests[c].name))
			break;
	if (c == T_COUNT)
		die(EXIT_USAGE, "unknown test '%s' (see --help)", pos[0]);
	o->test = (enum test_id)c;
	o->server = pos[1];
	/* the completion mode: latency tests poll, bandwidth tests sleep on a
	 * completion channel (perftest polls both; -e/--use_event, --poll choose);
	 * --progress and --engines are event-mode options and imply -e */
	if (!o->mode_given) {
		if (progress_given)
			o->poll = 0;
		else
			o->poll = tests[o->test].lat;
	} else if (o->poll && progress_given) {
		/* --poll --progress thread: busy-poll a progress-thread context */
		if (o->app)
			die(EXIT_USAGE, "--progress app is for event mode (-e), not --poll");
		o->poll_thread = 1;
	}
	if (o->perftest && tests[o->test].ext)
		die(EXIT_USAGE,
		    "--perftest: %s is not supported: perftest's exchange has no RFC 7306 "
		    "tests (write_bw, read_bw and send_bw only); run it against a uiw-perf peer",
		    tests[o->test].name);
	if (tests[o->test].atomic) {
		if (o->all || (o->size && o->size != PERF_ATOMIC_SIZE))
			die(EXIT_USAGE, "%s: the operand is a 64-bit word: -s 8 only, no -a",
			    tests[o->test].name);
		o->size = PERF_ATOMIC_SIZE;
	} else if (o->given & G_ATOMIC) {
		die(EXIT_USAGE, "--atomic is for atomic_lat and atomic_bw only");
	}
	if (!o->size)
		o->size = tests[o->test].lat ? 2 : 65536;
	if (!o->iters)
		o->iters = tests[o->test].lat ? 1000 : 5000;
	if ((o->given & G_ITERS) && (o->given & G_DUR))
		die(EXIT_USAGE, "-n and -D exclude each other");
	if ((o->given & G_SIZE) && o->all)
		die(EXIT_USAGE, "-s and -a exclude each other");
	if (tests[o->test].lat && o->qps > 1)
		die(EXIT_USAGE, "-q: latency tests use one QP");
	if (o->server && !o->port)
		die(EXIT_USAGE, "-p 0 is for the server only");
	if (o->inject && !o->verify)
		die(EXIT_USAGE, "--inject-error needs --verify");
	if (o->engines > 1 && ((o->poll && !o->poll_thread) || o->app))
		die(EXIT_USAGE, "--engines: only with --progress thread (a polled context has one)");
	if (o->perftest) {
		if (o->test != T_WRITE_BW && o->test != T_READ_BW && o->test != T_SEND_BW)
			die(EXIT_USAGE, "--perftest: only write_bw, read_bw and send_bw");
		if (o->qps != 1 || o->all || o->duration_us || o->verify || o->poll || o->app ||
		    o->json || o->inline_size)
			die(EXIT_USAGE, "--perftest: -q, -a, -D, --verify, --poll, --progress, "
					"--json and -I are not supported");
	}
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	stall_ns = (uint64_t)(o->timeout_s * 1e9);
	if (o->timeout_s > 0 && !stall_ns)
		stall_ns = 1;
	if (stall_ns && stall_ns / 4000000 < 1000)
		tick_ms = stall_ns / 4000000 ? (int)(stall_ns / 4000000) : 1;
	if (o->server) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o->session = (uint32_t)(ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 12) ^
					((uint32_t)getpid() << 16));
	}
}

/* ---- the sizes of a run ------------------------------------------------ */

unsigned run_sizes(const struct opts *o, uint32_t *sizes)
{
	unsigned n = 0;

	if (!o->all) {
		sizes[0] = o->size;
		return 1;
	}
	for (uint32_t s = 2; s <= PERF_ALL_MAX; s <<= 1)
		sizes[n++] = s;
	return n;
}

static uint32_t max_size(const struct opts *o)
{
	return o->all ? PERF_ALL_MAX : o->size;
}

/* ---- payload pattern --------------------------------------------------- */

/*
 * Message @iter of stream @stream carries, at offset o, byte (o % 8) (little
 * endian) of the 64-bit word seed + (o / 8) * K, where seed is a hash of
 * stream and iteration: any misplaced, stale or corrupted octet shows.
 */
#define PAT_K 0x9e3779b97f4a7c15ull

uint64_t pat_seed(unsigned stream, uint64_t iter)
{
	uint64_t z = ((uint64_t)stream << 48) ^ iter ^ 0x5bd1e995a3c1f00dull;

	z += PAT_K;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint8_t pat_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)((seed + (off >> 3) * PAT_K) >> ((off & 7) * 8));
}

/* bytes [@off, @off + @n) of the message with @seed, to @p */
void pat_fill(uint8_t *p, uint64_t seed, uint64_t off, size_t n)
{
	while (n && (off & 7)) {
		*p++ = pat_byte(seed, off++);
		n--;
	}
	for (; n >= 8; n -= 8, off += 8, p += 8) {
		uint64_t w = htole64(seed + (off >> 3) * PAT_K);

		memcpy(p, &w, 8);
	}
	while (n--)
		*p++ = pat_byte(seed, off++);
}

/* the index (from @p) of the first octet that differs, or SIZE_MAX */
static size_t pat_check(const uint8_t *p, uint64_t seed, uint64_t off, size_t n)
{
	size_t i = 0;

	while (i < n && ((off + i) & 7)) {
		if (p[i] != pat_byte(seed, off + i))
			return i;
		i++;
	}
	for (; n - i >= 8; i += 8) {
		uint64_t w, e = htole64(seed + ((off + i) >> 3) * PAT_K);

		memcpy(&w, p + i, 8);
		if (w != e)
			break;
	}
	for (; i < n; i++)
		if (p[i] != pat_byte(seed, off + i))
			return i;
	return SIZE_MAX;
}

uint64_t verify_errors;

/* Check message @iter (@n octets at message offset @off, at @p); loud on error. */
void verify_msg(const char *what, unsigned stream, uint64_t iter, const uint8_t *p,
		uint64_t off, size_t n)
{
	uint64_t seed = pat_seed(stream, iter);
	size_t bad = pat_check(p, seed, off, n);

	if (bad == SIZE_MAX)
		return;
	if (verify_errors++ < 10)
		fprintf(stderr,
			"%s: VERIFY FAILED: %s: stream %u message %" PRIu64 " offset %" PRIu64
			": got 0x%02x, expected 0x%02x\n",
			prog, what, stream, iter, off + bad, p[bad], pat_byte(seed, off + bad));
}

/* --inject-error: flip one octet of message @iter if it is the chosen one */
void maybe_inject(const struct opts *o, uint64_t iter, uint8_t *p, size_t n)
{
	if (o->inject && o->inject - 1 == iter && n)
		p[n / 2] ^= 0x5a;
}

/* ---- wire codec (little endian) ---------------------------------------- */

void w_bytes(struct wbuf *w, const void *d, size_t n)
{
	if (w->len + n <= w->cap)
		memcpy(w->p + w->len, d, n);
	w->len += n;
}

void w_u8(struct wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void w_u16(struct wbuf *w, uint16_t v)
{
	v = htole16(v);
	w_bytes(w, &v, 2);
}

void w_u32(struct wbuf *w, uint32_t v)
{
	v = htole32(v);
	w_bytes(w, &v, 4);
}

void w_u64(struct wbuf *w, uint64_t v)
{
	v = htole64(v);
	w_bytes(w, &v, 8);
}

static void w_f64(struct wbuf *w, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	w_u64(w, v);
}

void r_bytes(struct rbuf *r, void *d, size_t n)
{
	if (r->off + n > r->len) {
		r->err = 1;
		memset(d, 0, n);
		return;
	}
	memcpy(d, r->p + r->off, n);
	r->off += n;
}

uint8_t r_u8(struct rbuf *r)
{
	uint8_t v;

	r_bytes(r, &v, 1);
	return v;
}

static uint16_t r_u16(struct rbuf *r)
{
	uint16_t v;

	r_bytes(r, &v, 2);
	return le16toh(v);
}

uint32_t r_u32(struct rbuf *r)
{
	uint32_t v;

	r_bytes(r, &v, 4);
	return le32toh(v);
}

uint64_t r_u64(struct rbuf *r)
{
	uint64_t v;

	r_bytes(r, &v, 8);
	return le64toh(v);
}

static double r_f64(struct rbuf *r)
{
	uint64_t v = r_u64(r);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

enum { PD_HELLO = 1, PD_REJECT = 2 };

size_t hello_encode(const struct hello *h, uint8_t *buf, size_t cap)
{
	struct wbuf w = {buf, 0, cap};

	w_bytes(&w, PERF_PD_MAGIC, 8);
	w_u8(&w, PD_HELLO);
	w_u8(&w, h->test);
	w_u8(&w, h->crc);
	w_u8(&w, h->markers);
	w_u8(&w, h->poll);
	w_u8(&w, h->verify);
	w_u8(&w, h->all);
	w_u16(&w, h->qps);
	w_u16(&w, h->qp_index);
	w_u32(&w, h->session);
	w_u32(&w, h->size);
	w_u64(&w, h->iters);
	w_u64(&w, h->duration_us);
	w_u64(&w, h->inject);
	w_u32(&w, h->tx_depth);
	w_u32(&w, h->rx_depth);
	w_u32(&w, h->cq_mod);
	w_u32(&w, h->outs);
	w_u32(&w, h->inline_size);
	w_u32(&w, h->given);
	w_u64(&w, h->addr);
	w_u32(&w, h->rkey);
	w_u32(&w, h->nslots);
	w_u32(&w, h->slot_size);
	w_u32(&w, h->recv_posted);
	w_bytes(&w, h->version, sizeof(h->version));
	w_u8(&w, h->atomic);
	return w.len;
}

/* 0: a hello; 1: a reject with its text in @msg; -1: not uiw-perf's */
int pd_decode(const uint8_t *buf, size_t len, struct hello *h, char *msg, size_t msglen)
{
	struct rbuf r = {buf, len, 0, 0};
	char magic[8];
	uint8_t kind;

	memset(h, 0, sizeof(*h));
	r_bytes(&r, magic, 8);
	kind = r_u8(&r);
	if (r.err || memcmp(magic, PERF_PD_MAGIC, 8))
		return -1;
	if (kind == PD_REJECT) {
		size_t n = len - r.off < msglen - 1 ? len - r.off : msglen - 1;

		memcpy(msg, buf + r.off, n);
		msg[n] = 0;
		return 1;
	}
	if (kind != PD_HELLO)
		return -1;
	h->test = r_u8(&r);
	h->crc = r_u8(&r);
	h->markers = r_u8(&r);
	h->poll = r_u8(&r);
	h->verify = r_u8(&r);
	h->all = r_u8(&r);
	h->qps = r_u16(&r);
	h->qp_index = r_u16(&r);
	h->session = r_u32(&r);
	h->size = r_u32(&r);
	h->iters = r_u64(&r);
	h->duration_us = r_u64(&r);
	h->inject = r_u64(&r);
	h->tx_depth = r_u32(&r);
	h->rx_depth = r_u32(&r);
	h->cq_mod = r_u32(&r);
	h->outs = r_u32(&r);
	h->inline_size = r_u32(&r);
	h->given = r_u32(&r);
	h->addr = r_u64(&r);
	h->rkey = r_u32(&r);
	h->nslots = r_u32(&r);
	h->slot_size = r_u32(&r);
	h->recv_posted = r_u32(&r);
	r_bytes(&r, h->version, sizeof(h->version));
	h->version[sizeof(h->version) - 1] = 0;
	h->atomic = r_u8(&r);
	return r.err ? -1 : 0;
}

static size_t reject_encode(const char *msg, uint8_t *buf, size_t cap)
{
	struct wbuf w = {buf, 0, cap};
	size_t n = strlen(msg);

	w_bytes(&w, PERF_PD_MAGIC, 8);
	w_u8(&w, PD_REJECT);
	if (n > cap - w.len)
		n = cap - w.len;
	w_bytes(&w, msg, n);
	return w.len;
}

void hello_from_opts(const struct opts *o, struct hello *h)
{
	memset(h, 0, sizeof(*h));
	h->test = (uint8_t)o->test;
	h->crc = (uint8_t)o->crc;
	h->markers = (uint8_t)o->markers;
	h->poll = (uint8_t)o->poll;
	h->verify = (uint8_t)o->verify;
	h->all = (uint8_t)o->all;
	h->qps = (uint16_t)o->qps;
	h->session = o->session;
	h->size = o->size;
	h->iters = o->iters;
	h->duration_us = o->duration_us;
	h->inject = o->inject;
	h->tx_depth = o->tx_depth;
	h->rx_depth = o->rx_depth;
	h->cq_mod = o->cq_mod;
	h->outs = o->outs;
	h->inline_size = o->inline_size;
	h->given = o->given;
	h->atomic = (uint8_t)o->atomic_op;
	snprintf(h->version, sizeof(h->version), "%s", uiw_version());
}

const char *onoff(int v)
{
	return v ? "on" : "off";
}

const char *atomic_name(int op)
{
	return op == A_CMP_SWAP ? "cmp_swap" : op == A_FETCH_ADD ? "fetch_add" : "?";
}

/*
 * Server: check the client's hello @h against our options @o and adopt what
 * we were not given.  Returns 0, or -1 with the reason in @why.
 */
int settings_merge(struct opts *o, const struct hello *h, char *why, size_t len)
{
	const char *tname = h->test < T_COUNT ? tests[h->test].name : "?";
	unsigned g = o->given;

#define MISMATCH(...)                                                \
	do {                                                         \
		snprintf(why, len, "settings differ: " __VA_ARGS__); \
		return -1;                                           \
	} while (0)

	if (h->test != o->test)
		MISMATCH("test: client %s, server %s", tname, tests[o->test].name);
	if (!tests[o->test].tcp) {
		if (h->crc != o->crc)
			MISMATCH("--crc: client %s, server %s (each side takes --crc from its "
				 "own command line)",
				 onoff(h->crc), onoff(o->crc));
		if (h->markers != o->markers)
			MISMATCH("--markers: client %s, server %s (each side takes --markers "
				 "from its own command line)",
				 onoff(h->markers), onoff(o->markers));
		if (o->test == T_WRITE_LAT && h->poll != o->poll)
			MISMATCH("write_lat mode: client --%s, server --%s (the wire differs)",
				 h->poll ? "poll" : "event", o->poll ? "poll" : "event");
	}
	if ((g & (G_SIZE | G_ALL)) && (h->all != o->all || (!h->all && h->size != o->size)))
		MISMATCH("size: client %s%" PRIu32 ", server %s%" PRIu32, h->all ? "-a " : "-s ",
			 h->all ? 0 : h->size, o->all ? "-a " : "-s ", o->all ? 0 : o->size);
	if ((g & (G_ITERS | G_DUR)) &&
	    (h->duration_us != o->duration_us || (!h->duration_us && h->iters != o->iters)))
		MISMATCH("-n/-D: client %" PRIu64 " iterations / %" PRIu64 " us, server %" PRIu64
			 " / %" PRIu64,
			 h->iters, h->duration_us, o->iters, o->duration_us);
	if ((g & G_QPS) && h->qps != o->qps)
		MISMATCH("-q: client %u, server %u", h->qps, o->qps);
	if ((g & G_TX) && h->tx_depth != o->tx_depth)
		MISMATCH("-t: client %u, server %u", h->tx_depth, o->tx_depth);
	if ((g & G_RX) && h->rx_depth != o->rx_depth)
		MISMATCH("-r: client %u, server %u", h->rx_depth, o->rx_depth);
	if ((g & G_CQMOD) && h->cq_mod != o->cq_mod)
		MISMATCH("-Q: client %u, server %u", h->cq_mod, o->cq_mod);
	if ((g & G_OUTS) && h->outs != o->outs)
		MISMATCH("-o: client %u, server %u", h->outs, o->outs);
	if ((g & G_INLINE) && h->inline_size != o->inline_size)
		MISMATCH("-I: client %u, server %u", h->inline_size, o->inline_size);
	if ((g & G_VERIFY) && h->verify != o->verify)
		MISMATCH("--verify: client %s, server %s", onoff(h->verify), onoff(o->verify));
	if ((g & G_INJECT) && h->inject != o->inject)
		MISMATCH("--inject-error differs");
	if ((g & G_ATOMIC) && h->atomic != o->atomic_op)
		MISMATCH("--atomic: client %s, server %s", atomic_name(h->atomic),
			 atomic_name(o->atomic_op));
#undef MISMATCH
	if (!h->qps || h->qps > PERF_MAX_QPS || !h->tx_depth || !h->rx_depth || !h->cq_mod ||
	    !h->outs || (!h->all && (!h->size || h->size > PERF_MAX_SIZE)) || h->tx_depth > 8192 ||
	    h->rx_depth > 8192 || h->outs > 16383 || h->atomic > A_CMP_SWAP ||
	    (tests[o->test].atomic && (h->all || h->size != PERF_ATOMIC_SIZE))) {
		snprintf(why, len, "client settings out of range");
		return -1;
	}
	o->all = h->all;
	o->size = h->size;
	o->iters = h->iters;
	o->duration_us = h->duration_us;
	o->qps = h->qps;
	o->tx_depth = h->tx_depth;
	o->rx_depth = h->rx_depth;
	o->cq_mod = h->cq_mod;
	o->outs = h->outs;
	o->inline_size = h->inline_size;
	o->verify = h->verify;
	o->inject = h->inject;
	o->atomic_op = h->atomic;
	o->session = h->session;
	return 0;
}

/* ---- system facts: congestion control and MSS -------------------------- */

static void read_cc(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (!host || !strcmp(host, "localhost"))
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* why @host does not resolve, in getaddrinfo()'s words */
const char *resolve_error(const char *host)
{
	struct addrinfo hints = {0}, *res = NULL;
	int r;

	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, NULL, &hints, &res);
	if (!r) {
		freeaddrinfo(res);
		return "it resolves now";
	}
	return gai_strerror(r);
}

/* MSS of a TCP connection to a throw-away listener on @addr (loopback) */
static int mss_probe(const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct addrinfo hints = {0}, *res = NULL;
	int lfd = -1, cfd = -1, afd = -1, mss = -1;
	socklen_t ml = sizeof(mss);

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(addr, "0", &hints, &res))
		return -1;
	lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, res->ai_addr, res->ai_addrlen) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&ss, &sl))
		goto out;
	cfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&ss, sl))
		goto out;
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		goto out;
	/* the MSS settles once the windows have opened: move 1 MiB first */
	{
		static uint8_t buf[65536];
		size_t sent = 0, rcvd = 0, total = 1u << 20;
		uint64_t end = now_ns() + 1000000000ull;

		while (rcvd < total && now_ns() < end) {
			struct pollfd pfd = {.fd = afd, .events = POLLIN};
			ssize_t r;

			if (sent < total) {
				r = send(cfd, buf,
					 total - sent < sizeof(buf) ? total - sent : sizeof(buf),
					 MSG_DONTWAIT | MSG_NOSIGNAL);
				if (r > 0)
					sent += (size_t)r;
			}
			r = recv(afd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r > 0)
				rcvd += (size_t)r;
			else if (r == 0)
				break;
			else
				poll(&pfd, 1, 10);
		}
	}
	if (getsockopt(cfd, IPPROTO_TCP, TCP_MAXSEG, &mss, &ml))
		mss = -1;
out:
	if (afd >= 0)
		close(afd);
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	freeaddrinfo(res);
	return mss;
}

/* MSS toward @host estimated from the path MTU (a connected UDP socket) */
static int mss_estimate(const char *host, unsigned port)
{
	struct addrinfo hints = {0}, *res = NULL;
	char serv[16];
	int fd, mtu = 0, mss = -1, v6;
	socklen_t ml = sizeof(mtu);

	hints.ai_socktype = SOCK_DGRAM;
	snprintf(serv, sizeof(serv), "%u", port ? port : 9);
	if (getaddrinfo(host, serv, &hints, &res))
		return -1;
	v6 = res->ai_family == AF_INET6;
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, res->ai_addr, res->ai_addrlen) &&
	    !getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU, &mtu, &ml)) {
		mss = mtu - (v6 ? 60 : 40);
		if (mss > 65495)
			mss = 65495;
		mss -= 12; /* TCP timestamps, on by default */
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return mss;
}

void sysfacts_get(struct sysfacts *s, const struct opts *o)
{
	const char *peer = o->server ? o->server : o->bind;

	read_cc(s->cc, sizeof(s->cc));
	s->mss = -1;
	if (!peer || is_loopback(peer) || !strcmp(peer, "0.0.0.0") || !strcmp(peer, "::")) {
		const char *a =
			peer && is_loopback(peer) && strcmp(peer, "localhost") ? peer : "127.0.0.1";

		s->mss = mss_probe(a);
		snprintf(s->mss_how, sizeof(s->mss_how), "probe connection on %s", a);
	} else {
		s->mss = mss_estimate(peer, o->port);
		snprintf(s->mss_how, sizeof(s->mss_how), "estimated from the path MTU");
	}
}

/* ---- output ------------------------------------------------------------ */

/* user + system CPU time of this process (all its threads), seconds */
double cpu_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of both processes per GiB moved, or negative when unknown */
static double cpu_per_gib(const struct bw_result *r)
{
	double b = r->bytes ? (double)r->bytes : (double)r->msgs * r->size;

	if (r->cpu_self < 0 || r->cpu_peer < 0 || b <= 0)
		return -1;
	return (r->cpu_self + r->cpu_peer) / (b / 1073741824.0);
}

const char *dashes =
	"---------------------------------------------------------------------------------------";

void print_header(const struct opts *o, const struct sysfacts *s, int server)
{
	const struct test_info *t = &tests[o->test];

	if (o->json)
		return;
	printf("%s\n", dashes);
	printf("                    %s\n", t->title);
	printf(" uiw-perf (uiwarp %s), %s", uiw_version(), server ? "server" : "client");
	if (o->server)
		printf(" of %s port %u", o->server, o->port);
	printf("\n");
	if (t->tcp) {
		printf(" Transport       : raw TCP, TCP_NODELAY, %s%s\n",
		       o->poll ? "non-blocking busy-poll (poll mode)" : "blocking calls (event mode)",
		       o->mode_given ? "" : ", the default");
		if (!t->lat)
			printf(" Method          : one send() per message, recv() of the message "
			       "size, at most %u KiB\n",
			       PERF_TCP_RXBUF >> 10);
		printf(" Connections     : %-8u     Data verify   : %s\n", o->qps,
		       onoff(o->verify));
	} else {
		printf(" Transport       : iWARP (RDMAP/DDP/MPA) over TCP, RC\n");
		printf(" Number of qps   : %-8u     Completion    : %s%s\n", o->qps,
		       o->poll_thread ? "poll (progress thread, busy-poll)"
		       : o->poll      ? "poll (polled context, busy-poll)"
				      : "event (completion channel, blocking)",
		       o->mode_given ? "" : ", the default");
		printf(" TX depth        : %-8u     CQ moderation : %u\n", o->tx_depth, o->cq_mod);
		if (o->test == T_SEND_BW || o->test == T_WRITE_IMM_BW)
			printf(" RX depth        : %-8u     Flow control  : credits\n",
			       o->rx_depth);
		if (o->test == T_READ_BW || o->test == T_READ_LAT)
			printf(" Outstand reads  : %u\n", o->outs);
		if (t->ext)
			printf(" Extensions      : RFC 7306 (UIW_QP_EXT_RFC7306)\n");
		if (t->atomic) {
			printf(" Atomic op       : %-8s     Target        : one 64-bit word of the "
			       "server, all QPs\n",
			       atomic_name(o->atomic_op));
			printf(" Operand         : +0x%" PRIx64 " from 0x%" PRIx64 "%s\n",
			       (uint64_t)PERF_ATOMIC_ADD, (uint64_t)PERF_ATOMIC_BASE,
			       o->atomic_op == A_CMP_SWAP
				       ? " (compare: the value the previous one stored)"
				       : "");
			if (o->test == T_ATOMIC_BW)
				printf(" Outstand atomic : %-8u     (per QP: -o, at most -t; ORD = IRD = "
				       "%u)\n",
				       o->outs < o->tx_depth ? o->outs : o->tx_depth, o->outs);
		}
		printf(" MPA CRC         : %-8s     MPA markers   : %s\n", onoff(o->crc),
		       onoff(o->markers));
		printf(" Data verify     : %-8s     Inline size   : %u\n", onoff(o->verify),
		       o->inline_size);
		if (!o->poll || o->poll_thread)
			printf(" Engine          : %s\n",
			       o->app ? "the application's thread (uiw_progress)"
				      : o->engines > 1 ? "progress threads (--engines)"
						       : "one progress thread");
		if (o->engines > 1)
			printf(" Engine threads  : %u (this side)\n", o->engines);
		if (o->test == T_WRITE_LAT)
			printf(" write_lat       : %s\n",
			       o->poll ? "polls the last byte of the buffer"
				       : "Write + 0-byte Send, peer woken by its channel");
	}
	if (o->duration_us)
		printf(" Duration        : %.3f s per size\n", (double)o->duration_us / 1e6);
	printf(" TCP             : congestion control %s, MSS %d (%s)\n", s->cc, s->mss,
	       s->mss_how);
	if (server && !t->tcp)
		printf(" Results         : as measured by the client\n");
	else if (server)
		printf(" Results         : %s\n",
		       t->lat ? "round trips served (latency: see the client)"
			      : "receive side, first byte to end of stream");
	printf("%s\n", dashes);
	if (t->lat)
		printf(" %-9s %-12s %-12s %-12s %-16s %-12s %-14s %-21s %s\n", "#bytes",
		       "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]",
		       "t_avg[usec]", "t_stdev[usec]", "99% percentile[usec]",
		       "99.9% percentile[usec]");
	else
		printf(" %-10s %-14s %-18s %-20s %-15s %-10s%s\n", "#bytes", "#iterations",
		       "BW peak[MB/sec]", "BW average[MB/sec]", "MsgRate[Mpps]", "CPU[s/GiB]",
		       t->tcp ? "" : " RxCopies/octet[here,peer]");
	fflush(stdout);
}

void print_footer(const struct opts *o)
{
	if (!o->json)
		printf("%s\n", dashes);
	fflush(stdout);
}

static void json_common(const struct opts *o, const struct sysfacts *s, int server)
{
	const struct test_info *t = &tests[o->test];
	const char *engine = o->app ? "app" : o->poll && !o->poll_thread ? "polled" : "thread";

	printf("{\"test\":\"%s\",\"role\":\"%s\",\"transport\":\"%s\",\"mode\":\"%s\","
	       "\"qps\":%u,",
	       t->name, server ? "server" : "client", t->tcp ? "tcp" : "uiwarp",
	       o->poll ? "poll" : "event", o->qps);
	if (!t->tcp)
		printf("\"crc\":\"%s\",\"markers\":\"%s\",\"tx_depth\":%u,\"engine\":\"%s\",",
		       onoff(o->crc), onoff(o->markers), o->tx_depth, engine);
	if (t->atomic)
		printf("\"atomic\":\"%s\",\"outs\":%u,", atomic_name(o->atomic_op), o->outs);
	printf("\"verify\":%s,\"tcp_cc\":\"%s\",\"mss\":%d,", o->verify ? "true" : "false", s->cc,
	       s->mss);
}

void print_bw(const struct opts *o, const struct sysfacts *s, int server,
	      const struct bw_result *r)
{
	if (o->json) {
		json_common(o, s, server);
		if (tests[o->test].tcp)
			printf("\"recv_bytes\":%zu,", tcp_rx_len(r->size));
		printf("\"bytes\":%" PRIu32 ",\"iterations\":%" PRIu64 ",\"elapsed_s\":%.6f,"
		       "\"bw_peak_MBps\":%.2f,\"bw_avg_MBps\":%.2f,\"msg_rate_Mpps\":%.6f",
		       r->size, r->msgs, (double)r->elapsed_ns / 1e9, r->peak, r->avg, r->rate);
		if (r->cpu_self >= 0)
			printf(",\"cpu_s\":%.4f", r->cpu_self);
		if (r->cpu_peer >= 0)
			printf(",\"peer_cpu_s\":%.4f", r->cpu_peer);
		if (cpu_per_gib(r) >= 0)
			printf(",\"cpu_s_per_GiB\":%.4f", cpu_per_gib(r));
		if (!tests[o->test].tcp) {
			static const char *const k[4] = {"copies_rx", "copies_tx", "peer_copies_rx",
							 "peer_copies_tx"};
			const double v[4] = {r->cp_rx, r->cp_tx, r->cp_peer_rx, r->cp_peer_tx};

			for (int i = 0; i < 4; i++)
				if (v[i] >= 0)
					printf(",\"%s\":%.4f", k[i], v[i]);
		}
		printf("}\n");
	} else {
		char cpu[32] = "-", cp[64] = "";

		if (cpu_per_gib(r) >= 0)
			snprintf(cpu, sizeof(cpu), "%.3f", cpu_per_gib(r));
		if (!tests[o->test].tcp) {
			/* user-space copies per octet received, here and at the
			 * peer ("-": it received no payload) */
			char a[16] = "-", b[16] = "-";

			if (r->cp_rx >= 0)
				snprintf(a, sizeof(a), "%.4f", r->cp_rx);
			if (r->cp_peer_rx >= 0)
				snprintf(b, sizeof(b), "%.4f", r->cp_peer_rx);
			snprintf(cp, sizeof(cp), " %s,%s", a, b);
		}
		printf(" %-10" PRIu32 " %-14" PRIu64 " %-18.2f %-20.2f %-15.6f %-10s%s\n", r->size,
		       r->msgs, r->peak, r->avg, r->rate, cpu, cp);
	}
	fflush(stdout);
}

void print_lat(const struct opts *o, const struct sysfacts *s, int server,
	       const struct lat_result *r)
{
	if (o->json) {
		json_common(o, s, server);
		printf("\"bytes\":%" PRIu32 ",\"iterations\":%" PRIu64 ",\"t_min_us\":%.3f,"
		       "\"t_max_us\":%.3f,\"t_typical_us\":%.3f,\"t_avg_us\":%.3f,"
		       "\"t_stdev_us\":%.3f,\"p99_us\":%.3f,\"p99_9_us\":%.3f}\n",
		       r->size, r->iters, r->min, r->max, r->typ, r->avg, r->stdev, r->p99,
		       r->p999);
	} else {
		printf(" %-9" PRIu32 " %-12" PRIu64 " %-12.2f %-12.2f %-16.2f %-12.2f %-14.2f "
		       "%-21.2f %.2f\n",
		       r->size, r->iters, r->min, r->max, r->typ, r->avg, r->stdev, r->p99,
		       r->p999);
	}
	fflush(stdout);
}

/* ---- statistics -------------------------------------------------------- */

void samples_push(struct samples *s, uint64_t t, uint64_t v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint64_t *nt = realloc(s->t, cap * sizeof(*nt));

		if (!nt)
			die(EXIT_ERR, "out of memory (samples)");
		s->t = nt;
		nt = realloc(s->v, cap * sizeof(*nt));
		if (!nt)
			die(EXIT_ERR, "out of memory (samples)");
		s->v = nt;
		s->cap = cap;
	}
	s->t[s->n] = t;
	s->v[s->n++] = v;
}

void samples_free(struct samples *s)
{
	free(s->t);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * Bandwidth of a run: @s holds (time, bytes done) at the start and at every
 * signaled completion.  Peak: the best rate over any stretch between two
 * samples that spans at least 1/16 of the run (at least the average).
 */
void bw_compute(const struct samples *s, uint32_t size, uint64_t msgs, uint64_t t0,
		uint64_t t1, struct bw_result *r)
{
	double el, wmin, peak = 0;
	size_t j = 0;

	memset(r, 0, sizeof(*r));
	r->cpu_self = r->cpu_peer = -1;
	r->size = size;
	r->msgs = msgs;
	r->elapsed_ns = t1 > t0 ? t1 - t0 : 1;
	el = (double)r->elapsed_ns / 1e9;
	r->avg = (double)msgs * size / el / PERF_MB;
	r->rate = (double)msgs / el / 1e6;
	wmin = (double)r->elapsed_ns / 16;
	for (size_t i = 0; i < s->n; i++) {
		if (j < i)
			j = i;
		while (j < s->n && (double)(s->t[j] - s->t[i]) < wmin)
			j++;
		if (j >= s->n)
			break;
		double bw = (double)(s->v[j] - s->v[i]) / ((double)(s->t[j] - s->t[i]) / 1e9);

		if (bw > peak)
			peak = bw;
	}
	r->peak = peak / PERF_MB;
	if (r->peak < r->avg)
		r->peak = r->avg;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* latency statistics of the @n durations (ns) in @v (sorted in place) */
void lat_compute(uint64_t *v, size_t n, uint32_t size, struct lat_result *r)
{
	double sum = 0, sq = 0;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->iters = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	r->avg = sum / (double)n / 1e3;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] / 1e3 - r->avg;

		sq += d * d;
	}
	r->stdev = sqrt(sq / (double)n);
	r->min = (double)v[0] / 1e3;
	r->max = (double)v[n - 1] / 1e3;
	r->typ = (double)v[n / 2] / 1e3;
	r->p99 = (double)v[(size_t)ceil((double)n * 0.99) - 1] / 1e3;
	r->p999 = (double)v[(size_t)ceil((double)n * 0.999) - 1] / 1e3;
}

void progress_init(struct progress *pg, const struct opts *o, uint64_t t0)
{
	pg->t0 = t0;
	pg->dur_ns = o->duration_us * 1000;
	pg->next = o->duration_us ? t0 + 1000000000ull : UINT64_MAX;
}

void progress_tick(struct progress *pg, const struct opts *o, uint64_t t, uint32_t size,
		   uint64_t msgs)
{
	double el;

	if (t < pg->next)
		return;
	pg->next += 1000000000ull;
	el = (double)(t - pg->t0) / 1e9;
	if (tests[o->test].lat)
		fprintf(stderr, "%s: %s %" PRIu32 " B: %.1f/%.1f s, %" PRIu64 " iterations\n", prog,
			tests[o->test].name, size, el, (double)pg->dur_ns / 1e9, msgs);
	else
		fprintf(stderr,
			"%s: %s %" PRIu32 " B: %.1f/%.1f s, %" PRIu64 " messages, %.2f MB/sec\n",
			prog, tests[o->test].name, size, el, (double)pg->dur_ns / 1e9, msgs,
			(double)msgs * size / el / PERF_MB);
}

/* ---- control messages -------------------------------------------------- */

/* C_ALIVE: the client's heartbeat in the tests where the server is passive
 * (write_bw, read_bw, read_lat, atomic_lat, atomic_bw), so that a stalled
 * client shows there too */
enum ctrl_type { C_FIN = 1, C_FIN_ACK, C_CREDIT, C_ROUND, C_ROUND_ACK, C_ALIVE };

/*
 * @a, @b: FIN: messages sent on this QP / -; ROUND: first iteration, count;
 * @slots: ROUND: slots cycled over.  FIN carries the client's results so
 * that the server prints them too.
 */
struct ctrl {
	uint8_t type, last;
	uint16_t qp;
	uint32_t size, credits, slots;
	uint64_t a, b, errors;
	uint64_t msgs, elapsed_ns;
	double res[10];
};

static size_t ctrl_encode(const struct ctrl *c, uint8_t *buf)
{
	struct wbuf w = {buf, 0, PERF_CTRL_LEN};

	w_u32(&w, PERF_CTRL_MAGIC);
	w_u8(&w, c->type);
	w_u8(&w, c->last);
	w_u16(&w, c->qp);
	w_u32(&w, c->size);
	w_u32(&w, c->credits);
	w_u32(&w, c->slots);
	w_u64(&w, c->a);
	w_u64(&w, c->b);
	w_u64(&w, c->errors);
	w_u64(&w, c->msgs);
	w_u64(&w, c->elapsed_ns);
	for (int i = 0; i < 10; i++)
		w_f64(&w, c->res[i]);
	return w.len;
}

static int ctrl_decode(const uint8_t *buf, size_t len, struct ctrl *c)
{
	struct rbuf r = {buf, len, 0, 0};

	memset(c, 0, sizeof(*c));
	if (r_u32(&r) != PERF_CTRL_MAGIC)
		return -1;
	c->type = r_u8(&r);
	c->last = r_u8(&r);
	c->qp = r_u16(&r);
	c->size = r_u32(&r);
	c->credits = r_u32(&r);
	c->slots = r_u32(&r);
	c->a = r_u64(&r);
	c->b = r_u64(&r);
	c->errors = r_u64(&r);
	c->msgs = r_u64(&r);
	c->elapsed_ns = r_u64(&r);
	for (int i = 0; i < 10; i++)
		c->res[i] = r_f64(&r);
	return r.err ? -1 : 0;
}

static void ctrl_put_bw(struct ctrl *c, const struct bw_result *r)
{
	c->msgs = r->msgs;
	c->elapsed_ns = r->elapsed_ns;
	c->res[0] = r->peak;
	c->res[1] = r->avg;
	c->res[2] = r->rate;
}

static void ctrl_get_bw(const struct ctrl *c, struct bw_result *r)
{
	memset(r, 0, sizeof(*r));
	r->size = c->size;
	r->msgs = c->msgs;
	r->elapsed_ns = c->elapsed_ns;
	r->peak = c->res[0];
	r->avg = c->res[1];
	r->rate = c->res[2];
	r->cpu_self = r->cpu_peer = -1;
	r->cp_rx = r->cp_tx = r->cp_peer_rx = r->cp_peer_tx = -1;
}

/* The context's copy counters, to take a size's share of them. */
static void copies_snap(struct uiw_context *ctx, struct uiw_context_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ctx)
		uiw_query_context_stats(ctx, st);
}

/* @r's own copies per octet since @before; -1 where nothing moved */
static void copies_since(struct uiw_context *ctx, const struct uiw_context_stats *before,
			 struct bw_result *r)
{
	struct uiw_context_stats now;
	uint64_t rx, tx;

	copies_snap(ctx, &now);
	rx = now.rx_payload - before->rx_payload;
	tx = now.tx_payload - before->tx_payload;
	r->cp_rx = rx ? (double)(now.rx_payload_copied - before->rx_payload_copied) / (double)rx
		      : -1;
	r->cp_tx = tx ? (double)(now.tx_payload_copied - before->tx_payload_copied) / (double)tx
		      : -1;
}

/* A ratio through the control message: res[] carries ratio + 1 (0: none). */
static double cp_put(double v)
{
	return v < 0 ? 0 : v + 1;
}

static double cp_get(double v)
{
	return v > 0 ? v - 1 : -1;
}

static void ctrl_put_lat(struct ctrl *c, const struct lat_result *r)
{
	c->msgs = r->iters;
	c->res[0] = r->min;
	c->res[1] = r->max;
	c->res[2] = r->typ;
	c->res[3] = r->avg;
	c->res[4] = r->stdev;
	c->res[5] = r->p99;
	c->res[6] = r->p999;
}

static void ctrl_get_lat(const struct ctrl *c, struct lat_result *r)
{
	r->size = c->size;
	r->iters = c->msgs;
	r->min = c->res[0];
	r->max = c->res[1];
	r->typ = c->res[2];
	r->avg = c->res[3];
	r->stdev = c->res[4];
	r->p99 = c->res[5];
	r->p999 = c->res[6];
}

/* ---- the verbs runtime ------------------------------------------------- */

/* wr_id: kind (2 bits) | QP index (16) | value (46): iteration or ring slot */
enum { K_DATA = 1, K_CTRL = 2, K_RECV = 3 };
#define WRID(k, q, v) (((uint64_t)(k) << 62) | ((uint64_t)(q) << 46) | (uint64_t)(v))
#define WRID_VMASK    ((1ull << 46) - 1)

struct qpx {
	unsigned idx;
	struct uiw_cm_id *id;
	struct uiw_qp *qp;
	uint8_t *data; /* nslots * slot_size, remotely accessible */
	uint8_t *ctrl; /* PERF_CTRL_RX control receive buffers */
	int established, disconnected;
	/* the peer's memory for this QP */
	uint64_t raddr;
	uint32_t rkey, rslots, rslot_size, rrecv;
	/* send side (this size) */
	uint64_t posted, completed, target;
	uint64_t credits; /* send_bw: receives the peer has posted for us */
	unsigned ctrl_out;
	uint64_t rounds_sent, rounds_acked, round_end;
	/* receive side */
	unsigned nrecv; /* the receive ring */
	int recv_data;	/* ring buffers are data slots (else control buffers) */
	uint32_t recv_len;
	uint32_t *repost; /* ring slots to post again */
	unsigned nrepost;
	unsigned uncredited; /* send_bw receiver: reposted, not yet reported */
	uint64_t rx_msgs;    /* data messages received this size */
	uint64_t verified;   /* read tests: completions checked; atomic tests:
			      * results taken */
	/* atomic tests (client): the value each outstanding operation expects
	 * (its compare; ring of nslots, as the result slots), the value the
	 * next one expects, operations that succeeded (fetch_add: all), and
	 * the first operation posted after the last cmp_swap resync */
	uint64_t *atom_cmp;
	uint64_t atom_next, atom_ok, atom_sync;
	/* control */
	int fin, fin_ack;
	struct ctrl fin_msg, ack_msg;
};

struct perf {
	struct opts o;
	int server;
	struct sysfacts sf;
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_comp_channel *ch;
	struct uiw_cq *cq;
	struct uiw_mr *mr;
	uint8_t *mem;
	size_t memlen;
	struct uiw_cm_id *lid;
	struct qpx *qx;
	unsigned nq;
	uint32_t slot_size, nslots;
	unsigned window, cq_eff;
	int armed;
	unsigned unacked;
	unsigned idle_polls;
	int closing;
	uint64_t peer_errors;
	/* this size */
	uint32_t size;
	struct samples smp;
	uint64_t bytes_done, msgs_done, t_last;
	/* --timeout: the last sign of the peer (a data or receive completion,
	 * a write_lat mark), and the client's next heartbeat (C_ALIVE) */
	uint64_t t_act, next_beat;
	unsigned beats;
	/* atomic tests --verify (client): which k the successful operations
	 * returned (BASE + k * ADD: each k once, a bit each), their largest,
	 * and the operations posted on all QPs */
	uint8_t *seen;
	uint64_t seen_bits, seen_n, seen_max, atom_posted;
	char check_line[320]; /* server: the counter check, printed after the row */
};

/* send_bw and write_imm_bw: each data message takes one of the server's
 * receives, so the client sends on credits */
static int credit_test(enum test_id t)
{
	return t == T_SEND_BW || t == T_WRITE_IMM_BW;
}

/* the server is passive (only the client's heartbeat shows it the client) */
static int passive_server(enum test_id t)
{
	return t == T_WRITE_BW || t == T_READ_BW || t == T_READ_LAT || tests[t].atomic;
}

/* the latency is the whole operation (one Read, one atomic), not half a
 * ping-pong's round trip */
static int lat_whole(enum test_id t)
{
	return t == T_READ_LAT || t == T_ATOMIC_LAT;
}

static uint8_t *slot(struct perf *p, struct qpx *q, uint32_t i)
{
	return q->data + (size_t)i * p->slot_size;
}

void vcheck(int ret, const char *what)
{
	if (ret < 0)
		die(EXIT_ERR, "%s: %s", what, strerror(-ret));
}

static void handle_cm_event(struct perf *p, const struct uiw_cm_event *ev)
{
	struct qpx *q = NULL;

	for (unsigned i = 0; i < p->nq; i++)
		if (p->qx[i].id == ev->id)
			q = &p->qx[i];
	if (ev->event == UIW_CM_EVENT_DISCONNECTED) {
		if (q)
			q->disconnected = 1;
		if (!p->closing)
			die(EXIT_ERR, "connection %u lost during the run (DISCONNECTED%s%s)",
			    q ? q->idx : 0, ev->status ? ": " : "",
			    ev->status ? strerror(-ev->status) : "");
		return;
	}
	if (ev->event == UIW_CM_EVENT_CONNECT_REQUEST && p->lid) {
		/* a second client while we run: refuse it */
		uint8_t pd[64];
		size_t n = reject_encode("server busy", pd, sizeof(pd));

		uiw_reject(ev->id, pd, (uint16_t)n);
		uiw_destroy_id(ev->id);
		return;
	}
	if (!p->closing)
		fprintf(stderr, "%s: unexpected CM event %s (status %d)\n", prog,
			uiw_event_str(ev->event), ev->status);
}

/* poll mode: look at CM events now and then (DISCONNECTED of the peer) */
static void cm_check(struct perf *p)
{
	struct pollfd pfd = {.fd = uiw_cm_event_fd(p->ctx), .events = POLLIN};
	struct uiw_cm_event ev;

	if (poll(&pfd, 1, 0) == 1 && uiw_get_cm_event(p->ctx, &ev, 0) == 0)
		handle_cm_event(p, &ev);
}

/*
 * Up to @max completions into @wc.  Poll mode: one uiw_poll_cq() (which turns
 * the engine).  Event mode: poll, arm, poll, then wait on the channel (and
 * the CM event fd) up to @ms milliseconds.  Returns the count (maybe 0).
 */
static int cq_wait(struct perf *p, struct uiw_wc *wc, int max, int ms)
{
	int n = uiw_poll_cq(p->cq, max, wc);

	if (n < 0)
		die(EXIT_ERR, "uiw_poll_cq: %s", strerror(-n));
	if (n)
		return n;
	if (p->o.poll) {
		if (++p->idle_polls >= 4096) {
			p->idle_polls = 0;
			cm_check(p);
		}
		return 0;
	}
	if (p->o.app) {
		/* the application runs the engine and sleeps in it: what it
		 * produced is read straight from the CQ (no channel round trip) */
		int r = uiw_progress(p->ctx, ms);

		if (r)
			die(EXIT_ERR, "uiw_progress: %s", strerror(-r));
		n = uiw_poll_cq(p->cq, max, wc);
		if (n < 0)
			die(EXIT_ERR, "uiw_poll_cq: %s", strerror(-n));
		if (!n)
			cm_check(p);
		return n;
	}
	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = p->ch->fd, .events = POLLIN},
			{.fd = uiw_cm_event_fd(p->ctx), .events = POLLIN},
		};
		struct uiw_cq *ecq;
		void *ectx;
		int r;

		if (!p->armed) {
			vcheck(uiw_req_notify_cq(p->cq, 0), "uiw_req_notify_cq");
			p->armed = 1;
			n = uiw_poll_cq(p->cq, max, wc);
			if (n < 0)
				die(EXIT_ERR, "uiw_poll_cq: %s", strerror(-n));
			if (n)
				return n;
		}
		r = poll(pfd, 2, ms);
		if (r < 0 && errno != EINTR)
			die(EXIT_ERR, "poll: %s", strerror(errno));
		if (r <= 0)
			return 0;
		if (pfd[1].revents & POLLIN) {
			struct uiw_cm_event ev;

			if (uiw_get_cm_event(p->ctx, &ev, 0) == 0)
				handle_cm_event(p, &ev);
		}
		if (pfd[0].revents & POLLIN) {
			vcheck(uiw_get_cq_event(p->ch, &ecq, &ectx), "uiw_get_cq_event");
			p->armed = 0;
			if (++p->unacked >= 64) {
				uiw_ack_cq_events(p->cq, p->unacked);
				p->unacked = 0;
			}
			n = uiw_poll_cq(p->cq, max, wc);
			if (n < 0)
				die(EXIT_ERR, "uiw_poll_cq: %s", strerror(-n));
			if (n)
				return n;
		}
	}
}

static void post_ctrl(struct perf *p, struct qpx *q, struct ctrl *c)
{
	uint8_t buf[PERF_CTRL_LEN];
	struct uiw_sge sge;
	struct uiw_send_wr wr = {0};
	int ret;

	if (q->ctrl_out >= PERF_CTRL_TX)
		die(EXIT_ERR, "control send queue of QP %u full", q->idx);
	c->qp = (uint16_t)q->idx;
	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)ctrl_encode(c, buf);
	sge.lkey = p->mr->lkey;
	wr.wr_id = WRID(K_CTRL, q->idx, 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UIW_WR_SEND;
	wr.send_flags = UIW_SEND_SIGNALED | UIW_SEND_SOLICITED | UIW_SEND_INLINE;
	ret = uiw_post_send(q->qp, &wr, NULL);
	vcheck(ret, "uiw_post_send (control)");
	q->ctrl_out++;
	if (credit_test(p->o.test) && !p->server) {
		if (!q->credits)
			die(EXIT_ERR, "internal: control Send without credit");
		q->credits--;
	}
}

/*
 * The buffer of receive ring entry @s: a control buffer, or (send_bw server,
 * send_lat) data slot 0, or with send_bw --verify a slot of its own.
 */
static uint8_t *recv_buf(struct perf *p, struct qpx *q, uint32_t s)
{
	if (!q->recv_data)
		return q->ctrl + (size_t)s * PERF_CTRL_LEN;
	if (p->o.test == T_SEND_BW && p->o.verify)
		return slot(p, q, s % p->nslots);
	return slot(p, q, 0);
}

/* post the receives queued in q->repost */
static void flush_reposts(struct perf *p, struct qpx *q)
{
	struct uiw_recv_wr wr[64];
	struct uiw_sge sge[64];
	unsigned done = 0;

	while (done < q->nrepost) {
		unsigned n = q->nrepost - done < 64 ? q->nrepost - done : 64;

		for (unsigned i = 0; i < n; i++) {
			uint32_t s = q->repost[done + i];

			sge[i].addr = (uintptr_t)recv_buf(p, q, s);
			sge[i].length = q->recv_len;
			sge[i].lkey = p->mr->lkey;
			wr[i].wr_id = WRID(K_RECV, q->idx, s);
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		}
		vcheck(uiw_post_recv(q->qp, wr, NULL), "uiw_post_recv");
		done += n;
	}
	if (p->server && credit_test(p->o.test))
		q->uncredited += q->nrepost;
	q->nrepost = 0;
}

static void on_ctrl(struct perf *p, struct qpx *q, const struct ctrl *c)
{
	switch (c->type) {
	case C_FIN:
		q->fin = 1;
		q->fin_msg = *c;
		p->peer_errors += c->errors;
		break;
	case C_FIN_ACK:
		q->fin_ack = 1;
		q->ack_msg = *c;
		q->credits += c->credits;
		break;
	case C_CREDIT:
		q->credits += c->credits;
		break;
	case C_ROUND: {
		/* write_bw --verify: iterations [a, a + b) sit in slots i % slots */
		struct ctrl ack = {.type = C_ROUND_ACK, .size = p->size};
		uint64_t before = verify_errors;

		for (uint64_t i = c->a; i < c->a + c->b; i++)
			verify_msg("write_bw", q->idx, i, slot(p, q, (uint32_t)(i % c->slots)), 0,
				   p->size);
		ack.errors = verify_errors - before;
		post_ctrl(p, q, &ack);
		break;
	}
	case C_ROUND_ACK:
		/* c->errors: counted again in the FIN_ACK */
		q->rounds_acked++;
		break;
	case C_ALIVE:
		break;
	default:
		die(EXIT_ERR, "unknown control message %u on QP %u", c->type, q->idx);
	}
}

static void on_recv(struct perf *p, struct qpx *q, uint32_t s, const struct uiw_wc *wc)
{
	const uint8_t *buf = recv_buf(p, q, s);

	if (wc->wc_flags & UIW_WC_SOLICITED) {
		struct ctrl c;

		if (ctrl_decode(buf, wc->byte_len, &c))
			die(EXIT_ERR, "bad control message on QP %u (%u bytes)", q->idx,
			    wc->byte_len);
		q->repost[q->nrepost++] = s;
		on_ctrl(p, q, &c);
		return;
	}
	switch (p->o.test) {
	case T_SEND_BW:
	case T_SEND_LAT:
		if (wc->byte_len != p->size)
			die(EXIT_ERR, "QP %u: received %u bytes, expected %" PRIu32, q->idx,
			    wc->byte_len, p->size);
		if (p->o.verify)
			verify_msg(tests[p->o.test].name,
				   p->server ? q->idx : q->idx | STREAM_REPLY, q->rx_msgs, buf, 0,
				   p->size);
		break;
	case T_WRITE_LAT:
		if (p->o.poll || wc->byte_len)
			die(EXIT_ERR, "QP %u: unexpected Send of %u bytes", q->idx, wc->byte_len);
		break;
	case T_WRITE_IMM_BW:
		/* the receive a Write with Immediate took: the Write's length and
		 * the immediate (the message index, big-endian) */
		if (wc->opcode != UIW_WC_RECV_RDMA_WITH_IMM || !(wc->wc_flags & UIW_WC_WITH_IMM))
			die(EXIT_ERR,
			    "QP %u: message %" PRIu64 ": a receive completed as opcode %d, flags "
			    "0x%x, %u bytes, not a Write with Immediate",
			    q->idx, q->rx_msgs, wc->opcode, wc->wc_flags, wc->byte_len);
		if (wc->byte_len != p->size)
			die(EXIT_ERR,
			    "QP %u: message %" PRIu64 ": Write with Immediate of %u bytes, "
			    "expected %" PRIu32,
			    q->idx, q->rx_msgs, wc->byte_len, p->size);
		if (p->o.verify) {
			uint32_t want = htonl((uint32_t)q->rx_msgs);

			if (wc->imm_data != want && verify_errors++ < 10)
				fprintf(stderr,
					"%s: VERIFY FAILED: write_imm_bw: stream %u message %" PRIu64
					": immediate 0x%08x, expected 0x%08x\n",
					prog, q->idx, q->rx_msgs, ntohl(wc->imm_data), ntohl(want));
			/* the client Writes message i into our slot i % nslots and
			 * sends message i + nslots only on the credit of a receive
			 * we repost after this check (rq <= nslots) */
			verify_msg("write_imm_bw", q->idx, q->rx_msgs,
				   slot(p, q, (uint32_t)(q->rx_msgs % p->nslots)), 0, p->size);
		}
		break;
	default:
		die(EXIT_ERR, "QP %u: unexpected Send of %u bytes", q->idx, wc->byte_len);
	}
	q->rx_msgs++;
	q->repost[q->nrepost++] = s;
}

/* read tests: check the Reads completed up to q->completed */
static void verify_reads(struct perf *p, struct qpx *q)
{
	for (; q->verified < q->completed; q->verified++) {
		uint64_t i = q->verified;
		uint32_t ls = p->o.test == T_READ_LAT ? 0 : (uint32_t)(i % p->nslots);

		verify_msg(tests[p->o.test].name, q->idx, i % q->rslots, slot(p, q, ls), 0,
			   p->size);
	}
}

/* ---- atomics (atomic_lat, atomic_bw) ----------------------------------- */

/*
 * The server's counter word starts at PERF_ATOMIC_BASE; a fetch_add adds
 * PERF_ATOMIC_ADD, a cmp_swap compares with the value it expects and stores
 * that plus PERF_ATOMIC_ADD.  Each QP of the client expects the word to be
 * where its own last operation left it (atom_next): on one QP every
 * cmp_swap succeeds; QPs racing on the word (atomic_bw -q N) make some fail,
 * and a failure resyncs the QP to the value it returned.  Either way every
 * value of the word is BASE + k * ADD, the successful operations return
 * each k from 0 to their number - 1 exactly once, and the final word is
 * BASE + successes * ADD, which --verify checks (client: the returned
 * values; server: the word).
 */

/* the counter: the first word of the server's memory (QP 0's slot 0) */
static uint64_t *counter_word(struct perf *p)
{
	return (uint64_t *)(void *)p->qx[0].data;
}

/* fill @wr and @sge for the atomic operation @i of @q */
static void atomic_wr(struct perf *p, struct qpx *q, uint64_t i, struct uiw_send_wr *wr,
		      struct uiw_sge *sge)
{
	uint32_t s = (uint32_t)(i % p->nslots);
	uint64_t c = q->atom_next, add = PERF_ATOMIC_ADD, poison = ~0ull;

	/* --inject-error: operation N adds one too many, "at its source" */
	if (p->o.inject && p->o.inject - 1 == i)
		add++;
	q->atom_cmp[s] = c;
	q->atom_next = c + PERF_ATOMIC_ADD;
	memcpy(slot(p, q, s), &poison, 8); /* a result never written shows */
	sge->addr = (uintptr_t)slot(p, q, s);
	sge->length = PERF_ATOMIC_SIZE;
	sge->lkey = p->mr->lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.atomic.remote_addr = q->raddr;
	wr->wr.atomic.rkey = q->rkey;
	if (p->o.atomic_op == A_CMP_SWAP) {
		wr->opcode = UIW_WR_ATOMIC_CMP_AND_SWP;
		wr->wr.atomic.compare_add = c;
		wr->wr.atomic.swap = c + add;
	} else {
		wr->opcode = UIW_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.compare_add = add;
	}
	p->atom_posted++;
}

static void atomic_bad(struct perf *p, struct qpx *q, uint64_t i, uint64_t r, uint64_t c,
		       const char *why)
{
	if (verify_errors++ < 10)
		fprintf(stderr,
			"%s: VERIFY FAILED: %s: QP %u %s %" PRIu64 " returned 0x%016" PRIx64
			" (expected 0x%016" PRIx64 "): %s\n",
			prog, tests[p->o.test].name, q->idx, atomic_name(p->o.atomic_op), i, r, c,
			why);
}

/* --verify: the value @r that operation @i of @q (expecting @c) returned */
static void atomic_check(struct perf *p, struct qpx *q, uint64_t i, uint64_t r, uint64_t c, int ok)
{
	uint64_t k;

	if (p->nq == 1 && r != c) {
		atomic_bad(p, q, i, r, c, "the only QP: not the value the previous one left");
		return;
	}
	if (r < PERF_ATOMIC_BASE || (r - PERF_ATOMIC_BASE) % PERF_ATOMIC_ADD) {
		atomic_bad(p, q, i, r, c, "not a value the counter can take");
		return;
	}
	k = (r - PERF_ATOMIC_BASE) / PERF_ATOMIC_ADD;
	/* at most one addition per operation posted so far, this one not
	 * counted for the value before it */
	if (k >= p->atom_posted) {
		atomic_bad(p, q, i, r, c, "more additions than operations posted");
		return;
	}
	if (!ok)
		return;
	if (k >= p->seen_bits) {
		uint64_t bits = p->seen_bits ? p->seen_bits : 1u << 16;
		uint8_t *n;

		while (bits <= k)
			bits *= 2;
		n = realloc(p->seen, bits / 8);
		if (!n)
			die(EXIT_ERR, "out of memory (--verify of atomics)");
		memset(n + p->seen_bits / 8, 0, (bits - p->seen_bits) / 8);
		p->seen = n;
		p->seen_bits = bits;
	}
	if (p->seen[k / 8] & (1u << (k % 8))) {
		atomic_bad(p, q, i, r, c, "a value another operation returned already");
		return;
	}
	p->seen[k / 8] |= (uint8_t)(1u << (k % 8));
	p->seen_n++;
	if (k > p->seen_max)
		p->seen_max = k;
}

/* the results of @q's atomics completed up to q->completed, in order */
static void atomic_done(struct perf *p, struct qpx *q)
{
	for (; q->verified < q->completed; q->verified++) {
		uint64_t i = q->verified, r, c;
		uint32_t s = (uint32_t)(i % p->nslots);
		int ok;

		memcpy(&r, slot(p, q, s), 8);
		c = q->atom_cmp[s];
		ok = p->o.atomic_op != A_CMP_SWAP || r == c;
		if (ok) {
			q->atom_ok++;
		} else if (i >= q->atom_sync) {
			/* another QP moved the word: expect what we saw from
			 * the next operation we post (those posted already
			 * expect the old value and fail too: no resync on them) */
			q->atom_next = r;
			q->atom_sync = q->posted;
		}
		if (p->o.verify)
			atomic_check(p, q, i, r, c, ok);
	}
}

/* the operations of an atomic run (client), and those that succeeded */
static void atomic_counts(struct perf *p, uint64_t *ops, uint64_t *ok)
{
	*ops = *ok = 0;
	for (unsigned i = 0; i < p->nq; i++) {
		*ops += p->qx[i].completed;
		*ok += p->qx[i].atom_ok;
	}
}

/* client, end of an atomic run, --verify: the successful operations
 * returned exactly k = 0 .. successes - 1 (each once: atomic_check) */
static void atomic_final_check(struct perf *p)
{
	uint64_t ops, ok;

	atomic_counts(p, &ops, &ok);
	if (p->o.verify && (p->seen_n != ok || (ok && p->seen_max != ok - 1))) {
		if (verify_errors++ < 10)
			fprintf(stderr,
				"%s: VERIFY FAILED: %s: %" PRIu64 " successful operations returned "
				"%" PRIu64 " distinct values, the largest k = %" PRIu64
				" (expected 0 .. %" PRIu64 ")\n",
				prog, tests[p->o.test].name, ok, p->seen_n, p->seen_max,
				ok ? ok - 1 : 0);
	}
}

/* client: the line after the result row */
static void atomic_summary(struct perf *p)
{
	uint64_t ops, ok;

	atomic_counts(p, &ops, &ok);
	if (p->o.json) {
		printf("{\"event\":\"atomic_results\",\"test\":\"%s\",\"role\":\"client\","
		       "\"atomic\":\"%s\",\"operations\":%" PRIu64 ",\"succeeded\":%" PRIu64
		       ",\"verified\":%s,\"verify_errors\":%" PRIu64 "}\n",
		       tests[p->o.test].name, atomic_name(p->o.atomic_op), ops, ok,
		       p->o.verify ? "true" : "false", verify_errors);
	} else {
		printf(" Atomic results  : %" PRIu64 " %s on %u QP%s, %" PRIu64 " succeeded%s\n",
		       ops, atomic_name(p->o.atomic_op), p->nq, p->nq == 1 ? "" : "s", ok,
		       !p->o.verify    ? ""
		       : verify_errors ? "; VERIFY FAILED (standard error has the first ten)"
		       : p->nq == 1
			       ? "; each returned the value the one before left (verified)"
			       : "; they returned 0 .. N-1 times the addend, each once (verified)");
	}
	fflush(stdout);
}

/* server, after the client's FIN on every QP: --verify: the counter holds
 * exactly BASE + (successful operations of all QPs) * ADD */
static void counter_check(struct perf *p)
{
	uint64_t ops = 0, ok = 0, want, got;

	if (!tests[p->o.test].atomic || !p->o.verify || !p->nq)
		return;
	for (unsigned i = 0; i < p->nq; i++) {
		ops += p->qx[i].fin_msg.a;
		ok += p->qx[i].fin_msg.b;
	}
	/* fetch_add: every operation done adds; cmp_swap: the client counts
	 * the ones that returned what they compared with */
	if (p->o.atomic_op == A_FETCH_ADD && ok != ops && verify_errors++ < 10)
		fprintf(stderr,
			"%s: VERIFY FAILED: %s: the client did %" PRIu64 " fetch_add, %" PRIu64
			" of them completed\n",
			prog, tests[p->o.test].name, ops, ok);
	want = PERF_ATOMIC_BASE + ok * PERF_ATOMIC_ADD;
	got = __atomic_load_n(counter_word(p), __ATOMIC_SEQ_CST);
	if (got != want && verify_errors++ < 10)
		fprintf(stderr,
			"%s: VERIFY FAILED: %s: the counter is 0x%016" PRIx64
			", expected 0x%016" PRIx64 " = 0x%" PRIx64 " + %" PRIu64 " x 0x%" PRIx64
			"\n",
			prog, tests[p->o.test].name, got, want, (uint64_t)PERF_ATOMIC_BASE, ok,
			(uint64_t)PERF_ATOMIC_ADD);
	if (p->o.json)
		snprintf(p->check_line, sizeof(p->check_line),
			 "{\"event\":\"counter_check\",\"test\":\"%s\",\"role\":\"server\","
			 "\"atomic\":\"%s\",\"operations\":%" PRIu64 ",\"succeeded\":%" PRIu64
			 ",\"counter\":%" PRIu64 ",\"expected\":%" PRIu64 ",\"exact\":%s}\n",
			 tests[p->o.test].name, atomic_name(p->o.atomic_op), ops, ok, got, want,
			 got == want ? "true" : "false");
	else
		snprintf(p->check_line, sizeof(p->check_line),
			 " Counter check   : 0x%016" PRIx64 " %s 0x%" PRIx64 " + %" PRIu64
			 " x 0x%" PRIx64 ": %s (%" PRIu64 " of %" PRIu64
			 " %s succeeded, all QPs)\n",
			 got, got == want ? "=" : "!=", (uint64_t)PERF_ATOMIC_BASE, ok,
			 (uint64_t)PERF_ATOMIC_ADD, got == want ? "exact" : "MISMATCH", ok, ops,
			 atomic_name(p->o.atomic_op));
}

/* server: the counter check's line, after the result row */
static void counter_print(struct perf *p)
{
	if (!p->check_line[0])
		return;
	fputs(p->check_line, stdout);
	p->check_line[0] = 0;
	fflush(stdout);
}

static void on_wc(struct perf *p, const struct uiw_wc *wc)
{
	unsigned kind = (unsigned)(wc->wr_id >> 62);
	unsigned qi = (unsigned)((wc->wr_id >> 46) & 0xffff);
	uint64_t v = wc->wr_id & WRID_VMASK;
	struct qpx *q;

	if (qi >= p->nq)
		die(EXIT_ERR, "completion with unknown wr_id 0x%" PRIx64, wc->wr_id);
	q = &p->qx[qi];
	if (wc->status != UIW_WC_SUCCESS) {
		if (p->closing && wc->status == UIW_WC_WR_FLUSH_ERR)
			return;
		die(EXIT_ERR, "QP %u: work request %s failed: status %d%s (opcode %d, %u bytes)%s",
		    qi,
		    kind == K_RECV   ? "receive"
		    : kind == K_CTRL ? "control send"
				     : "data",
		    wc->status, wc->status == UIW_WC_WR_FLUSH_ERR ? " (flushed)" : "", wc->opcode,
		    wc->byte_len, (wc->wc_flags & UIW_WC_TERM) ? " after a TERMINATE" : "");
	}
	switch (kind) {
	case K_DATA:
		if (v + 1 > q->completed) {
			uint64_t t = now_ns(), n = v + 1 - q->completed;

			q->completed = v + 1;
			p->msgs_done += n;
			p->bytes_done += n * p->size;
			p->t_last = t;
			if (!tests[p->o.test].lat)
				samples_push(&p->smp, t, p->bytes_done);
			if (p->o.verify && (p->o.test == T_READ_BW || p->o.test == T_READ_LAT))
				verify_reads(p, q);
			if (tests[p->o.test].atomic)
				atomic_done(p, q);
		}
		break;
	case K_CTRL:
		q->ctrl_out--;
		break;
	case K_RECV:
		on_recv(p, q, (uint32_t)v, wc);
		break;
	default:
		die(EXIT_ERR, "completion with unknown wr_id 0x%" PRIx64, wc->wr_id);
	}
}

/* die if the peer has shown no progress for --timeout */
static void stall_check(struct perf *p)
{
	if (stall_ns && now_ns() - p->t_act > stall_ns)
		stall_die(p->server ? "the client" : "the server", tests[p->o.test].name);
}

/*
 * The client's heartbeat where the server would otherwise see nothing for a
 * whole run (it is passive in write_bw, read_bw, read_lat and the atomic
 * tests: passive_server()): a C_ALIVE
 * control message every second, or every quarter of our --timeout when
 * that is shorter.  Sent whatever our own bound (even --timeout 0): the
 * server's bound is its own.
 */
static void heartbeat(struct perf *p)
{
	uint64_t t;

	if (p->server || !passive_server(p->o.test))
		return;
	t = now_ns();
	if (t < p->next_beat)
		return;
	p->next_beat = t + (uint64_t)tick_ms * 1000000ull;
	{
		struct ctrl c = {.type = C_ALIVE, .size = p->size};

		post_ctrl(p, &p->qx[p->beats++ % p->nq], &c);
	}
}

/* one round of completion handling; @ms: event-mode wait bound */
static void progress(struct perf *p, int ms)
{
	struct uiw_wc wc[64];
	int n = cq_wait(p, wc, 64, ms > tick_ms ? tick_ms : ms);

	for (int i = 0; i < n; i++) {
		on_wc(p, &wc[i]);
		/* our own control Sends completing say nothing of the peer */
		if ((unsigned)(wc[i].wr_id >> 62) != K_CTRL)
			p->t_act = now_ns();
	}
	if (!n)
		stall_check(p);
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];

		if (q->nrepost)
			flush_reposts(p, q);
		if (p->server && credit_test(p->o.test) &&
		    q->uncredited >= (q->nrecv / 4 ? q->nrecv / 4 : 1)) {
			struct ctrl c = {.type = C_CREDIT, .size = p->size};

			c.credits = q->uncredited;
			q->uncredited = 0;
			post_ctrl(p, q, &c);
		}
	}
}

/* ---- setup and teardown ------------------------------------------------ */

static void perf_open(struct perf *p)
{
	struct uiw_context_attr a = {0};

	a.mode = (p->o.poll && !p->o.poll_thread) || p->o.app ? UIW_CTX_POLLED
							      : UIW_CTX_PROGRESS_THREAD;
	a.crc = p->o.crc ? UIW_CRC_ON : UIW_CRC_OFF;
	a.markers = p->o.markers;
	a.engine_threads = p->o.engines;
	vcheck(uiw_open_context(&p->ctx, &a), "uiw_open_context");
	/* the library builds its CRC32C tables on first use (about 1 ms here):
	 * do it now rather than inside the first timed message */
	(void)uiw_crc32c("", 0);
	vcheck(uiw_alloc_pd(p->ctx, &p->pd), "uiw_alloc_pd");
	if (!p->o.poll)
		vcheck(uiw_create_comp_channel(p->ctx, &p->ch), "uiw_create_comp_channel");
}

/* buffers, MR, CQ and QPs, from the (merged) settings */
static void perf_resources(struct perf *p)
{
	const struct opts *o = &p->o;
	int lat = tests[o->test].lat;
	size_t per_qp, data_len;
	unsigned sq, rq;
	int cqe;

	unsigned access = UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ;
	int rx_server = credit_test(o->test) && p->server; /* the receiver of a credit test */

	p->nq = o->qps;
	p->slot_size = (max_size(o) > PERF_CTRL_LEN ? max_size(o) : PERF_CTRL_LEN);
	p->slot_size = (p->slot_size + 63) & ~63u;
	if (tests[o->test].atomic) {
		/* server: the counter word; client: a result word per
		 * operation outstanding (atomic_bw: the window, -o at most -t) */
		p->slot_size = PERF_ATOMIC_SIZE;
		p->nslots = p->server || lat ? 1 : o->outs < o->tx_depth ? o->outs : o->tx_depth;
		/* Atomic Requests may target the server's memory, nothing else */
		access = UIW_ACCESS_LOCAL_WRITE | (p->server ? UIW_ACCESS_REMOTE_ATOMIC : 0);
	} else if (lat) {
		p->nslots = 2;
	} else if (o->verify) {
		uint64_t n = PERF_VERIFY_MEM / o->qps / p->slot_size;
		unsigned depth = rx_server ? o->rx_depth : o->tx_depth;

		p->nslots = (uint32_t)(n < 1 ? 1 : n > depth ? depth : n);
	} else {
		p->nslots = 1;
	}
	sq = o->tx_depth + PERF_CTRL_TX;
	if (rx_server)
		rq = o->verify ? (p->nslots < o->rx_depth ? p->nslots : o->rx_depth) : o->rx_depth;
	else if (o->test == T_SEND_LAT)
		rq = PERF_LAT_RX;
	else
		rq = PERF_CTRL_RX;
	data_len = (size_t)p->nslots * p->slot_size;
	data_len = (data_len + 63) & ~(size_t)63;
	/* control receive buffers: PERF_CTRL_RX, or one per receive where the
	 * receives are not data slots (write_imm_bw's server: the Writes land
	 * in the slots, the receives only complete; control Sends fill them) */
	per_qp = data_len + (rq > PERF_CTRL_RX ? rq : PERF_CTRL_RX) * (size_t)PERF_CTRL_LEN;
	per_qp = (per_qp + 4095) & ~(size_t)4095;
	p->memlen = per_qp * p->nq;
	p->mem = aligned_alloc(4096, p->memlen);
	if (!p->mem)
		die(EXIT_ERR, "cannot allocate %zu bytes of buffers", p->memlen);
	memset(p->mem, 0, p->memlen);
	vcheck(uiw_reg_mr(p->pd, p->mem, p->memlen, access, &p->mr), "uiw_reg_mr");
	p->qx = calloc(p->nq, sizeof(*p->qx));
	if (!p->qx)
		die(EXIT_ERR, "out of memory");
	cqe = (int)(p->nq * (sq + rq) + 16);
	vcheck(uiw_create_cq(p->ctx, cqe, p, p->ch, &p->cq), "uiw_create_cq");

	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];
		struct uiw_qp_init_attr qa = {0};

		q->idx = i;
		q->data = p->mem + per_qp * i;
		q->ctrl = q->data + data_len;
		q->nrecv = rq;
		q->recv_data = (o->test == T_SEND_BW && p->server) || o->test == T_SEND_LAT;
		if (tests[o->test].atomic && !p->server) {
			q->atom_cmp = calloc(p->nslots, sizeof(*q->atom_cmp));
			if (!q->atom_cmp)
				die(EXIT_ERR, "out of memory");
			q->atom_next = PERF_ATOMIC_BASE;
		}
		q->recv_len = q->recv_data ? p->slot_size : PERF_CTRL_LEN;
		q->repost = calloc(rq, sizeof(*q->repost));
		if (!q->repost)
			die(EXIT_ERR, "out of memory");
		qa.send_cq = p->cq;
		qa.recv_cq = p->cq;
		qa.cap.max_send_wr = sq;
		qa.cap.max_recv_wr = rq;
		qa.cap.max_send_sge = 1;
		qa.cap.max_recv_sge = 1;
		qa.cap.max_inline_data =
			o->inline_size > PERF_CTRL_LEN ? o->inline_size : PERF_CTRL_LEN;
		qa.ird = (uint16_t)o->outs;
		qa.ord = (uint16_t)o->outs;
		/* only the RFC 7306 tests: the others stay plain RFC 5040 */
		qa.ext = tests[o->test].ext ? UIW_QP_EXT_RFC7306 : 0;
		vcheck(uiw_create_qp(p->pd, &qa, &q->qp), "uiw_create_qp");
		for (unsigned s = 0; s < rq; s++)
			q->repost[q->nrepost++] = s;
		flush_reposts(p, q);
		q->uncredited = 0;
		/* read tests: the server's slots hold the pattern of their index */
		if (p->server && o->verify && (o->test == T_READ_BW || o->test == T_READ_LAT)) {
			for (uint32_t s = 0; s < p->nslots; s++) {
				pat_fill(slot(p, q, s), pat_seed(i, s), 0, p->slot_size);
				/* every Read of the slot of message N sees the damage */
				if (o->inject && (o->inject - 1) % p->nslots == s)
					maybe_inject(o, o->inject - 1, slot(p, q, s), max_size(o));
			}
		}
	}
	if (tests[o->test].atomic && p->server) {
		/* the counter, 4096-aligned (8-aligned, as an atomic's target
		 * must be), that every QP's hello names */
		uint64_t base = PERF_ATOMIC_BASE;

		memcpy(counter_word(p), &base, 8);
	}
}

static void hello_local(struct perf *p, struct qpx *q, struct hello *h)
{
	hello_from_opts(&p->o, h);
	h->qp_index = (uint16_t)q->idx;
	/* atomic tests: every QP targets the one counter word */
	h->addr = tests[p->o.test].atomic ? (uintptr_t)counter_word(p) : (uintptr_t)q->data;
	h->rkey = p->mr->rkey;
	h->nslots = p->nslots;
	h->slot_size = p->slot_size;
	h->recv_posted = q->nrecv;
}

static void hello_remote(struct perf *p, struct qpx *q, const struct hello *h)
{
	q->raddr = h->addr;
	q->rkey = h->rkey;
	q->rslots = h->nslots ? h->nslots : 1;
	q->rslot_size = h->slot_size;
	q->rrecv = h->recv_posted;
	if (credit_test(p->o.test) && !p->server)
		q->credits = h->recv_posted;
}

static void perf_close(struct perf *p)
{
	p->closing = 1;
	if (p->unacked)
		uiw_ack_cq_events(p->cq, p->unacked);
	p->unacked = 0;
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];

		if (q->id)
			vcheck(uiw_destroy_id(q->id), "uiw_destroy_id");
		if (q->qp)
			vcheck(uiw_destroy_qp(q->qp), "uiw_destroy_qp");
		free(q->repost);
		free(q->atom_cmp);
	}
	if (p->lid)
		vcheck(uiw_destroy_id(p->lid), "uiw_destroy_id");
	if (p->mr)
		vcheck(uiw_dereg_mr(p->mr), "uiw_dereg_mr");
	if (p->cq)
		vcheck(uiw_destroy_cq(p->cq), "uiw_destroy_cq");
	if (p->ch)
		vcheck(uiw_destroy_comp_channel(p->ch), "uiw_destroy_comp_channel");
	vcheck(uiw_dealloc_pd(p->pd), "uiw_dealloc_pd");
	vcheck(uiw_close_context(p->ctx), "uiw_close_context");
	free(p->mem);
	free(p->qx);
	free(p->seen);
	samples_free(&p->smp);
}

/* wait (bounded) for DISCONNECTED on every connection */
static void wait_disconnected(struct perf *p)
{
	uint64_t end = peer_deadline();
	struct uiw_cm_event ev;

	p->closing = 1;
	for (;;) {
		unsigned left = 0;

		for (unsigned i = 0; i < p->nq; i++)
			left += p->qx[i].id && !p->qx[i].disconnected;
		if (!left || now_ns() >= end)
			break;
		if (uiw_get_cm_event(p->ctx, &ev, 100) == 0)
			handle_cm_event(p, &ev);
	}
}

/* ---- the runs ---------------------------------------------------------- */

static void size_reset(struct perf *p, uint32_t size)
{
	p->size = size;
	p->smp.n = 0;
	p->bytes_done = 0;
	p->msgs_done = 0;
	p->t_last = 0;
	p->t_act = now_ns();
	p->next_beat = 0;
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];

		q->posted = q->completed = q->verified = 0;
		q->rx_msgs = 0;
		q->rounds_sent = q->rounds_acked = q->round_end = 0;
		q->fin = q->fin_ack = 0;
	}
}

/* window and signaling interval of the bw tests */
static void bw_window(struct perf *p)
{
	const struct opts *o = &p->o;
	unsigned w = o->tx_depth;

	if (o->test == T_ATOMIC_BW) {
		/* -o (the ORD) atomics outstanding, at most -t: a result word
		 * each; signaled at least twice per window, so that posting
		 * never waits for the whole window to drain */
		w = p->nslots;
		p->window = w;
		p->cq_eff = o->cq_mod < (w + 1) / 2 ? o->cq_mod : (w + 1) / 2;
		return;
	}
	if (o->verify) {
		unsigned ls = p->nslots, rs = p->qx[0].rslots;

		if (o->test == T_WRITE_BW)
			w = ls < rs ? ls : rs;
		else
			w = ls;
		if (w > o->tx_depth)
			w = o->tx_depth;
	}
	p->window = w;
	p->cq_eff = o->cq_mod < w ? o->cq_mod : w;
}

/* post as many data WRs on @q as the window, credits and rounds allow */
static void post_bw(struct perf *p, struct qpx *q)
{
	static struct uiw_send_wr wr[PERF_CHAIN_MAX];
	static struct uiw_sge sge[PERF_CHAIN_MAX];
	const struct opts *o = &p->o;
	int wverify = o->verify && o->test == T_WRITE_BW;
	unsigned n = 0;

	if (wverify && (q->posted == q->round_end || q->posted >= q->target)) {
		/* the round is out: tell the peer, wait for its verdict */
		if (q->rounds_sent == q->rounds_acked && q->posted && q->posted == q->completed &&
		    q->rounds_sent * p->window < q->posted) {
			struct ctrl c = {.type = C_ROUND, .size = p->size, .slots = p->window};

			c.a = q->rounds_sent * p->window;
			c.b = q->posted - c.a;
			post_ctrl(p, q, &c);
			q->rounds_sent++;
		}
		if (q->rounds_acked < q->rounds_sent || q->posted != q->completed)
			return;
		if (q->posted < q->target)
			q->round_end = q->posted + p->window < q->target ? q->posted + p->window
									 : q->target;
	}
	while (n < p->cq_eff && n < PERF_CHAIN_MAX) {
		uint64_t i = q->posted + n;
		uint32_t ls = 0, rs = 0;

		if (i >= q->target || i - q->completed >= p->window)
			break;
		if (wverify && i >= q->round_end)
			break;
		if (credit_test(o->test) && q->credits <= n)
			break;
		if (o->verify) {
			ls = (uint32_t)(i % p->nslots);
			rs = (uint32_t)(i % q->rslots);
		}
		memset(&wr[n], 0, sizeof(wr[n]));
		sge[n].addr = (uintptr_t)slot(p, q, ls);
		sge[n].length = p->size;
		sge[n].lkey = p->mr->lkey;
		wr[n].wr_id = WRID(K_DATA, q->idx, i);
		wr[n].sg_list = &sge[n];
		wr[n].num_sge = 1;
		if ((i + 1) % p->cq_eff == 0 || i + 1 == q->target ||
		    (wverify && i + 1 == q->round_end))
			wr[n].send_flags = UIW_SEND_SIGNALED;
		if (p->size <= o->inline_size && o->test != T_READ_BW && o->test != T_ATOMIC_BW)
			wr[n].send_flags |= UIW_SEND_INLINE;
		switch (o->test) {
		case T_WRITE_BW:
			wr[n].opcode = UIW_WR_RDMA_WRITE;
			wr[n].wr.rdma.remote_addr = q->raddr + (uint64_t)rs * q->rslot_size;
			wr[n].wr.rdma.rkey = q->rkey;
			break;
		case T_WRITE_IMM_BW:
			/* the Write, then Immediate Data taking a receive: the
			 * message index, big-endian (as verbs' imm_data) */
			wr[n].opcode = UIW_WR_RDMA_WRITE_WITH_IMM;
			wr[n].wr.rdma.remote_addr = q->raddr + (uint64_t)rs * q->rslot_size;
			wr[n].wr.rdma.rkey = q->rkey;
			wr[n].imm_data = htonl((uint32_t)i);
			break;
		case T_ATOMIC_BW:
			atomic_wr(p, q, i, &wr[n], &sge[n]);
			break;
		case T_READ_BW:
			wr[n].opcode = UIW_WR_RDMA_READ;
			wr[n].wr.rdma.remote_addr =
				q->raddr + (uint64_t)(i % q->rslots) * q->rslot_size;
			wr[n].wr.rdma.rkey = q->rkey;
			break;
		default:
			wr[n].opcode = UIW_WR_SEND;
			break;
		}
		if (o->verify && o->test != T_READ_BW && o->test != T_ATOMIC_BW) {
			pat_fill(slot(p, q, ls), pat_seed(q->idx, i), 0, p->size);
			maybe_inject(o, i, slot(p, q, ls), p->size);
		}
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
	}
	if (!n)
		return;
	vcheck(uiw_post_send(q->qp, wr, NULL), "uiw_post_send");
	q->posted += n;
	if (credit_test(o->test))
		q->credits -= n;
}

static int bw_done(struct perf *p)
{
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];

		if (q->target == UINT64_MAX || q->completed < q->target)
			return 0;
		if (p->o.verify && p->o.test == T_WRITE_BW &&
		    (q->rounds_sent * p->window < q->posted || q->rounds_acked < q->rounds_sent))
			return 0;
	}
	return 1;
}

/* client: FIN on every QP, then the FIN_ACKs */
static void fin_exchange(struct perf *p, struct ctrl *fin)
{
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];

		fin->a = q->posted;
		fin->b = q->atom_ok; /* atomic tests: the successful operations */
		while (credit_test(p->o.test) && !q->credits)
			progress(p, 1000);
		post_ctrl(p, q, fin);
	}
	for (;;) {
		unsigned left = 0;

		for (unsigned i = 0; i < p->nq; i++)
			left += !p->qx[i].fin_ack;
		if (!left)
			break;
		progress(p, 1000);
	}
	p->peer_errors += p->qx[0].ack_msg.errors;
}

static void client_bw(struct perf *p, uint32_t size, int last)
{
	const struct opts *o = &p->o;
	struct ctrl fin = {.type = C_FIN, .last = (uint8_t)last, .size = size};
	struct bw_result r;
	struct progress pg;
	uint64_t t0, deadline;
	int stopping = 0;
	double cpu0;
	struct uiw_context_stats cs0;

	size_reset(p, size);
	bw_window(p);
	copies_snap(p->ctx, &cs0);
	for (unsigned i = 0; i < p->nq; i++)
		p->qx[i].target = o->duration_us ? UINT64_MAX : o->iters;
	cpu0 = cpu_now();
	t0 = now_ns();
	deadline = o->duration_us ? t0 + o->duration_us * 1000 : UINT64_MAX;
	progress_init(&pg, o, t0);
	samples_push(&p->smp, t0, 0);
	while (!bw_done(p)) {
		uint64_t t;

		for (unsigned i = 0; i < p->nq; i++)
			post_bw(p, &p->qx[i]);
		heartbeat(p);
		progress(p, 1000);
		t = now_ns();
		if (!stopping && t >= deadline) {
			/* stop at the next signaled WR of each QP */
			stopping = 1;
			for (unsigned i = 0; i < p->nq; i++) {
				struct qpx *q = &p->qx[i];
				uint64_t e = (q->posted + p->cq_eff - 1) / p->cq_eff * p->cq_eff;

				q->target = e;
			}
		}
		progress_tick(&pg, o, t, size, p->msgs_done);
	}
	bw_compute(&p->smp, size, p->msgs_done, t0, p->t_last ? p->t_last : now_ns(), &r);
	r.cpu_self = cpu_now() - cpu0;
	r.cpu_peer = -1;
	r.bytes = 0;
	copies_since(p->ctx, &cs0, &r);
	if (tests[o->test].atomic)
		atomic_final_check(p); /* before the FIN, which carries the verdict */
	fin.errors = verify_errors;
	ctrl_put_bw(&fin, &r);
	fin.res[3] = r.cpu_self;
	fin.res[4] = cp_put(r.cp_rx);
	fin.res[5] = cp_put(r.cp_tx);
	fin_exchange(p, &fin);
	/* the server's CPU time over its part of the size, from its FIN_ACK */
	if (p->qx[0].ack_msg.res[3] > 0)
		r.cpu_peer = p->qx[0].ack_msg.res[3];
	r.cp_peer_rx = cp_get(p->qx[0].ack_msg.res[4]);
	r.cp_peer_tx = cp_get(p->qx[0].ack_msg.res[5]);
	print_bw(o, &p->sf, 0, &r);
	if (tests[o->test].atomic)
		atomic_summary(p);
}

static void server_fin_ack(struct perf *p, int next_size_clear, double cpu,
			   const struct bw_result *r)
{
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];
		struct ctrl ack = {.type = C_FIN_ACK, .size = p->size};

		if (credit_test(p->o.test)) {
			ack.credits = q->uncredited;
			q->uncredited = 0;
		}
		ack.errors = i == 0 ? verify_errors : 0;
		ack.res[3] = cpu;
		ack.res[4] = r ? cp_put(r->cp_rx) : 0;
		ack.res[5] = r ? cp_put(r->cp_tx) : 0;
		if (next_size_clear)
			q->rx_msgs = 0;
		post_ctrl(p, q, &ack);
	}
}

static int all_fin(struct perf *p)
{
	for (unsigned i = 0; i < p->nq; i++)
		if (!p->qx[i].fin)
			return 0;
	return 1;
}

/* server of the bw tests: serve until FIN on every QP, answer, print */
static int server_bw(struct perf *p, uint32_t size)
{
	struct bw_result r;
	int last;
	double cpu0 = cpu_now();
	struct uiw_context_stats cs0;

	copies_snap(p->ctx, &cs0);
	size_reset(p, size);
	while (!all_fin(p))
		progress(p, 1000);
	if (p->qx[0].fin_msg.size != size)
		die(EXIT_ERR, "client ran size %" PRIu32 ", expected %" PRIu32,
		    p->qx[0].fin_msg.size, size);
	if (credit_test(p->o.test))
		for (unsigned i = 0; i < p->nq; i++)
			if (p->qx[i].rx_msgs != p->qx[i].fin_msg.a)
				die(EXIT_ERR, "QP %u: received %" PRIu64 " messages, sent %" PRIu64,
				    i, p->qx[i].rx_msgs, p->qx[i].fin_msg.a);
	last = p->qx[0].fin_msg.last;
	ctrl_get_bw(&p->qx[0].fin_msg, &r);
	/* the last receives' credits go back with the FIN_ACK */
	for (unsigned i = 0; i < p->nq; i++)
		if (p->qx[i].nrepost)
			flush_reposts(p, &p->qx[i]);
	r.cpu_self = cpu_now() - cpu0;
	if (p->qx[0].fin_msg.res[3] > 0)
		r.cpu_peer = p->qx[0].fin_msg.res[3];
	copies_since(p->ctx, &cs0, &r);
	r.cp_peer_rx = cp_get(p->qx[0].fin_msg.res[4]);
	r.cp_peer_tx = cp_get(p->qx[0].fin_msg.res[5]);
	counter_check(p); /* before the FIN_ACK, which carries the verdict */
	server_fin_ack(p, 1, r.cpu_self, &r);
	print_bw(&p->o, &p->sf, 1, &r);
	counter_print(p);
	return last;
}

/* ---- latency ----------------------------------------------------------- */

static uint8_t lat_mark(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);
}

static uint8_t load_mark(const uint8_t *b)
{
	return __atomic_load_n(b, __ATOMIC_ACQUIRE);
}

/* the ping (client) or pong (server) of iteration @i */
static void lat_post(struct perf *p, struct qpx *q, uint64_t i)
{
	const struct opts *o = &p->o;
	struct uiw_send_wr wr[2];
	struct uiw_sge sge[2];
	unsigned stream = p->server ? q->idx | STREAM_REPLY : q->idx;
	uint8_t *src = slot(p, q, 1);
	int sig = (i + 1) % p->cq_eff == 0;

	memset(wr, 0, sizeof(wr));
	sge[0].addr = (uintptr_t)src;
	sge[0].length = p->size;
	sge[0].lkey = p->mr->lkey;
	wr[0].wr_id = WRID(K_DATA, q->idx, i);
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	if (o->test == T_READ_LAT || o->test == T_ATOMIC_LAT) {
		if (o->test == T_ATOMIC_LAT) {
			atomic_wr(p, q, i, &wr[0], &sge[0]);
		} else {
			wr[0].opcode = UIW_WR_RDMA_READ;
			sge[0].addr = (uintptr_t)slot(p, q, 0);
			wr[0].wr.rdma.remote_addr = q->raddr + (i % q->rslots) * q->rslot_size;
			wr[0].wr.rdma.rkey = q->rkey;
		}
		wr[0].send_flags = UIW_SEND_SIGNALED;
		vcheck(uiw_post_send(q->qp, wr, NULL), "uiw_post_send");
		q->posted = i + 1;
		return;
	}
	if (o->verify) {
		pat_fill(src, pat_seed(stream, i), 0, p->size);
		if (!p->server)
			maybe_inject(o, i, src, o->test == T_WRITE_LAT ? p->size - 1 : p->size);
	}
	if (sig)
		wr[0].send_flags = UIW_SEND_SIGNALED;
	if (p->size <= o->inline_size)
		wr[0].send_flags |= UIW_SEND_INLINE;
	if (o->test == T_SEND_LAT) {
		wr[0].opcode = UIW_WR_SEND;
	} else {
		src[p->size - 1] = lat_mark(i);
		wr[0].opcode = UIW_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = q->raddr;
		wr[0].wr.rdma.rkey = q->rkey;
		if (!o->poll) {
			/* event mode: a 0-byte Send wakes the peer */
			wr[0].send_flags &= ~(unsigned)UIW_SEND_SIGNALED;
			wr[0].next = &wr[1];
			wr[1].wr_id = WRID(K_DATA, q->idx, i);
			wr[1].opcode = UIW_WR_SEND;
			wr[1].send_flags = sig ? UIW_SEND_SIGNALED : 0;
		}
	}
	vcheck(uiw_post_send(q->qp, wr, NULL), "uiw_post_send");
	q->posted = i + 1;
}

/* wait for the peer's message @i (or, for the server, a FIN); 1: got it */
static int lat_wait(struct perf *p, struct qpx *q, uint64_t i)
{
	const struct opts *o = &p->o;
	uint8_t *mark = slot(p, q, 0) + p->size - 1;
	unsigned stream = p->server ? q->idx : q->idx | STREAM_REPLY;

	for (;;) {
		if (o->test == T_READ_LAT || o->test == T_ATOMIC_LAT) {
			if (q->completed > i)
				return 1;
		} else if (o->test == T_WRITE_LAT && o->poll) {
			if (load_mark(mark) == lat_mark(i)) {
				p->t_act = now_ns();
				if (o->verify)
					verify_msg("write_lat", stream, i, slot(p, q, 0), 0,
						   p->size - 1);
				return 1;
			}
		} else if (q->rx_msgs > i) {
			if (o->test == T_WRITE_LAT) {
				if (load_mark(mark) != lat_mark(i))
					die(EXIT_ERR,
					    "write_lat: the Send overtook the Write of "
					    "iteration %" PRIu64,
					    i);
				if (o->verify)
					verify_msg("write_lat", stream, i, slot(p, q, 0), 0,
						   p->size - 1);
			}
			return 1;
		}
		if (q->fin)
			return 0;
		heartbeat(p);
		/* keep the send queue drained of signaled WRs */
		progress(p, 1000);
	}
}

static void client_lat(struct perf *p, uint32_t size, int last)
{
	const struct opts *o = &p->o;
	struct qpx *q = &p->qx[0];
	struct ctrl fin = {.type = C_FIN, .last = (uint8_t)last, .size = size};
	struct lat_result r;
	struct progress pg;
	uint64_t t0, deadline, i;

	size_reset(p, size);
	p->cq_eff =
		o->cq_mod < o->tx_depth / 2 ? o->cq_mod : (o->tx_depth / 2 ? o->tx_depth / 2 : 1);
	if (o->test == T_WRITE_LAT)
		slot(p, q, 0)[size - 1] = 0;
	t0 = now_ns();
	deadline = o->duration_us ? t0 + o->duration_us * 1000 : UINT64_MAX;
	progress_init(&pg, o, t0);
	for (i = 0;; i++) {
		uint64_t a, b;

		if (o->duration_us ? now_ns() >= deadline : i >= o->iters)
			break;
		a = now_ns();
		lat_post(p, q, i);
		if (!lat_wait(p, q, i))
			die(EXIT_ERR, "server ended the run early");
		b = now_ns();
		samples_push(&p->smp, b, lat_whole(o->test) ? b - a : (b - a) / 2);
		progress_tick(&pg, o, b, size, i + 1);
	}
	lat_compute(p->smp.v, p->smp.n, size, &r);
	if (tests[o->test].atomic)
		atomic_final_check(p);
	fin.errors = verify_errors;
	ctrl_put_lat(&fin, &r);
	fin_exchange(p, &fin);
	print_lat(o, &p->sf, 0, &r);
	if (tests[o->test].atomic)
		atomic_summary(p);
}

static int server_lat(struct perf *p, uint32_t size)
{
	const struct opts *o = &p->o;
	struct qpx *q = &p->qx[0];
	struct lat_result r;
	int last;

	size_reset(p, size);
	p->cq_eff =
		o->cq_mod < o->tx_depth / 2 ? o->cq_mod : (o->tx_depth / 2 ? o->tx_depth / 2 : 1);
	if (!passive_server(o->test)) {
		for (uint64_t i = 0;; i++) {
			if (!lat_wait(p, q, i))
				break;
			lat_post(p, q, i);
		}
	}
	while (!q->fin)
		progress(p, 1000);
	if (q->fin_msg.size != size)
		die(EXIT_ERR, "client ran size %" PRIu32 ", expected %" PRIu32, q->fin_msg.size,
		    size);
	last = q->fin_msg.last;
	ctrl_get_lat(&q->fin_msg, &r);
	/* write_lat: no stale mark of this size may match the next one */
	if (o->test == T_WRITE_LAT)
		memset(slot(p, q, 0), 0, p->slot_size);
	counter_check(p);
	server_fin_ack(p, 1, 0, NULL);
	print_lat(o, &p->sf, 1, &r);
	counter_print(p);
	return last;
}

/* ---- connection setup -------------------------------------------------- */

static void run_verbs_client(struct opts *o)
{
	struct perf pf = {0}, *p = &pf;
	uint32_t sizes[32];
	unsigned nsizes, established = 0;
	uint64_t end;

	p->o = *o;
	sysfacts_get(&p->sf, o);
	perf_open(p);
	perf_resources(p);
	for (unsigned i = 0; i < p->nq; i++) {
		struct qpx *q = &p->qx[i];
		struct hello h;
		uint8_t pd[UIW_PRIVATE_DATA_MAX];
		struct uiw_conn_param cp = {0};
		int ret;

		hello_local(p, q, &h);
		cp.private_data = pd;
		cp.private_data_len = (uint16_t)hello_encode(&h, pd, sizeof(pd));
		vcheck(uiw_create_id(p->ctx, q, &q->id), "uiw_create_id");
		ret = uiw_connect(q->id, o->server, (uint16_t)o->port, q->qp, &cp);
		if (ret == -ENXIO || ret == -EAGAIN)
			die(EXIT_ERR, "cannot resolve %s: %s", o->server, resolve_error(o->server));
		if (ret)
			die(EXIT_ERR, "cannot connect to %s port %u: %s", o->server, o->port,
			    strerror(-ret));
	}
	end = peer_deadline();
	while (established < p->nq) {
		struct uiw_cm_event ev;
		struct hello h;
		char msg[UIW_PRIVATE_DATA_MAX];
		struct qpx *q;
		int ret;

		ret = uiw_get_cm_event(p->ctx, &ev, 200);
		if (ret == -ETIMEDOUT) {
			if (now_ns() > end) {
				char what[96];

				snprintf(what, sizeof(what),
					 "connection setup, %u of %u connections established",
					 established, p->nq);
				stall_die(o->server, what);
			}
			continue;
		}
		vcheck(ret, "uiw_get_cm_event");
		q = ev.id ? uiw_id_context(ev.id) : NULL;
		switch (ev.event) {
		case UIW_CM_EVENT_ESTABLISHED:
			if (!q)
				break;
			if (pd_decode(ev.private_data, ev.private_data_len, &h, msg, sizeof(msg)))
				die(EXIT_ERR, "the server at %s port %u is not a uiw-perf server",
				    o->server, o->port);
			if (h.test != o->test)
				die(EXIT_ERR, "the server runs %s",
				    h.test < T_COUNT ? tests[h.test].name : "?");
			hello_remote(p, q, &h);
			q->established = 1;
			established++;
			end = peer_deadline(); /* a sign of progress */
			break;
		case UIW_CM_EVENT_REJECTED:
			if (pd_decode(ev.private_data, ev.private_data_len, &h, msg, sizeof(msg)) ==
			    1)
				die(EXIT_ERR, "the server refused: %s", msg);
			/* a TCP connection refused is REJECTED too, as librdmacm
			 * reports it on iWARP */
			die(EXIT_ERR,
			    "cannot connect to %s port %u: %s (REJECTED): is a uiw-perf %s "
			    "server listening there?",
			    o->server, o->port,
			    ev.private_data_len ? "rejected" : "connection refused", tests[o->test].name);
		case UIW_CM_EVENT_UNREACHABLE:
		case UIW_CM_EVENT_CONNECT_ERROR:
			die(EXIT_ERR, "cannot connect to %s port %u: %s (%s)", o->server, o->port,
			    ev.status ? strerror(-ev.status) : "failed", uiw_event_str(ev.event));
		default:
			handle_cm_event(p, &ev);
		}
	}
	if (p->qx[0].rslot_size < max_size(o))
		die(EXIT_ERR, "the server's buffer is too small");
	print_header(o, &p->sf, 0);
	nsizes = run_sizes(o, sizes);
	for (unsigned k = 0; k < nsizes; k++) {
		if (tests[o->test].lat)
			client_lat(p, sizes[k], k + 1 == nsizes);
		else
			client_bw(p, sizes[k], k + 1 == nsizes);
	}
	print_footer(o);
	p->closing = 1;
	for (unsigned i = 0; i < p->nq; i++)
		uiw_disconnect(p->qx[i].id);
	wait_disconnected(p);
	perf_close(p);
	if (verify_errors || p->peer_errors)
		die(EXIT_VERIFY,
		    "VERIFY FAILED: %" PRIu64 " mismatches here, %" PRIu64 " at the server",
		    verify_errors, p->peer_errors);
}

/* the listen address for messages: -B's, or "*" (every address) */
static const char *bind_name(const struct opts *o)
{
	return o->bind ? o->bind : "*";
}

void listening_line(const struct opts *o, unsigned port)
{
	if (o->json)
		printf("{\"event\":\"listening\",\"address\":\"%s\",\"port\":%u}\n",
		       bind_name(o), port);
	else
		printf("%s: listening on %s port %u\n", prog, bind_name(o), port);
	fflush(stdout);
}

static void server_reject(struct perf *p, struct uiw_cm_id *id, const char *why)
{
	uint8_t pd[UIW_PRIVATE_DATA_MAX];
	size_t n = reject_encode(why, pd, sizeof(pd));
	uint64_t end = now_ns() + 300000000ull;
	struct uiw_cm_event ev;

	uiw_reject(id, pd, (uint16_t)n);
	/* give the engine time to send the Reject before we go */
	while (now_ns() < end)
		uiw_get_cm_event(p->ctx, &ev, 50);
}

static void run_verbs_server(struct opts *o)
{
	struct perf pf = {0}, *p = &pf;
	uint32_t sizes[32];
	unsigned nsizes, accepted = 0, established = 0;
	uint64_t end = UINT64_MAX;
	int have = 0;

	p->server = 1;
	p->o = *o;
	sysfacts_get(&p->sf, o);
	perf_open(p);
	vcheck(uiw_create_id(p->ctx, NULL, &p->lid), "uiw_create_id");
	{
		/* room in the kernel's accept queue for every QP of a -q 1024
		 * client at once: with 64, the connections beyond it had their
		 * handshake ACK dropped and their MPA Request retransmitted with
		 * growing back-off, and the last ones ran into the client's
		 * 10 s MPA timeout (1017 of 1024 connected) */
		int ret = uiw_listen(p->lid, o->bind, (uint16_t)o->port, PERF_MAX_QPS + 64);

		if (ret)
			die(EXIT_ERR, "cannot listen on %s port %u: %s", bind_name(o), o->port,
			    strerror(-ret));
	}
	listening_line(o, uiw_get_port(p->lid));
	while (!have || established < p->nq) {
		struct uiw_cm_event ev;
		struct hello h;
		char msg[256];
		struct qpx *q;
		int ret = uiw_get_cm_event(p->ctx, &ev, have ? 200 : -1);

		if (ret == -ETIMEDOUT) {
			if (now_ns() > end) {
				char what[96];

				snprintf(what, sizeof(what),
					 "connection setup, the client opened %u of %u connections",
					 accepted, p->nq);
				stall_die("the client", what);
			}
			continue;
		}
		vcheck(ret, "uiw_get_cm_event");
		if (ev.event == UIW_CM_EVENT_ESTABLISHED) {
			for (unsigned i = 0; i < p->nq; i++)
				if (p->qx[i].id == ev.id && !p->qx[i].established) {
					p->qx[i].established = 1;
					established++;
				}
			continue;
		}
		if (ev.event != UIW_CM_EVENT_CONNECT_REQUEST) {
			if (ev.event == UIW_CM_EVENT_DISCONNECTED && have)
				die(EXIT_ERR, "a connection closed during setup");
			continue;
		}
		if (pd_decode(ev.private_data, ev.private_data_len, &h, msg, sizeof(msg))) {
			fprintf(stderr, "%s: refusing a connection that is not from uiw-perf\n",
				prog);
			uiw_reject(ev.id, NULL, 0);
			uiw_destroy_id(ev.id);
			continue;
		}
		if (!have) {
			if (settings_merge(&p->o, &h, msg, sizeof(msg))) {
				server_reject(p, ev.id, msg);
				die(EXIT_ERR, "%s", msg);
			}
			perf_resources(p);
			have = 1;
			end = peer_deadline();
		} else if (h.session != p->o.session || h.qp_index >= p->nq ||
			   p->qx[h.qp_index].id) {
			server_reject(p, ev.id, "server busy");
			uiw_destroy_id(ev.id);
			continue;
		}
		if (h.qp_index >= p->nq)
			die(EXIT_ERR, "bad QP index from the client");
		q = &p->qx[h.qp_index];
		q->id = ev.id;
		hello_remote(p, q, &h);
		{
			struct hello mine;
			uint8_t pd[UIW_PRIVATE_DATA_MAX];
			struct uiw_conn_param cp = {0};

			hello_local(p, q, &mine);
			cp.private_data = pd;
			cp.private_data_len = (uint16_t)hello_encode(&mine, pd, sizeof(pd));
			vcheck(uiw_accept(q->id, q->qp, &cp), "uiw_accept");
		}
		accepted++;
		end = peer_deadline(); /* a sign of progress */
	}
	print_header(&p->o, &p->sf, 1);
	nsizes = run_sizes(&p->o, sizes);
	for (unsigned k = 0; k < nsizes; k++) {
		int last = tests[p->o.test].lat ? server_lat(p, sizes[k]) : server_bw(p, sizes[k]);

		if (last != (k + 1 == nsizes))
			die(EXIT_ERR, "the client's run and ours disagree on the sizes");
	}
	print_footer(&p->o);
	wait_disconnected(p);
	perf_close(p);
	if (verify_errors || p->peer_errors)
		die(EXIT_VERIFY,
		    "VERIFY FAILED: %" PRIu64 " mismatches here, %" PRIu64 " at the client",
		    verify_errors, p->peer_errors);
}

int main(int argc, char **argv)
{
	struct opts o;

	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	{
		/* a descriptor per connection (-q up to 1024; a server learns
		 * -q from its client): raise the soft limit to the hard one */
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (o.perftest) {
		pt_run(&o);
		return EXIT_OK;
	}
	if (tests[o.test].tcp) {
		if (o.server)
			run_tcp_client(&o);
		else
			run_tcp_server(&o);
	} else {
		if (o.server)
			run_verbs_client(&o);
		else
			run_verbs_server(&o);
	}
	return EXIT_OK;
}
