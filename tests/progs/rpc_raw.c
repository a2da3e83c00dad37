/* SPDX-License-Identifier: MIT */
/*
 * rpc_raw - a hostile RPC-over-RDMA requester for tests/sh/rpc.sh: it
 * connects to an RPC-over-RDMA server (bulk_server --rdma) with plain
 * uiw_verbs.h, sends hand-made transport headers and checks the answers
 * RFC 8166 §4.5 requires:
 *
 *   version 2 header            -> RDMA_ERROR ERR_VERS, range 1..1, same XID
 *   Read segment at position 3  -> RDMA_ERROR ERR_CHUNK
 *   rdma_proc 7                 -> RDMA_ERROR ERR_CHUNK
 *   RDMA_MSGP                   -> RDMA_ERROR ERR_CHUNK (§4.6.1)
 *   20 octets                   -> nothing (discarded silently)
 *   RDMA_ERROR from a requester -> nothing (§4.2.4)
 *   then a valid NULL call      -> an RDMA_MSG reply: the connection survived
 *
 *   rpc_raw -p PORT [-a ADDR]      exit 0 all as expected, 1 otherwise
 *
 *   rpc_raw -m stall -p PORT [-s SIZE] [-t SECS]
 *	a stalled requester: one GET of SIZE octets (default 16 MiB) offering
 *	a Reply chunk, then it stops turning its engine (stops reading TCP)
 *	for SECS seconds (default 60): the server's RDMA Write of the reply
 *	and the Send after it cannot leave.  Prints "rpc_raw: stalled" once
 *	its call has left, exits 0 after SECS.  -w FILE: connect, then wait
 *	(turning the engine) until FILE exists before sending the call.
 *	-e N: N headers of version 2 right behind the call (each to be
 *	answered ERR_VERS, which cannot leave behind the stalled reply),
 *	sent once the server writes the reply; "rpc_raw: not stalled" if a
 *	reply got through meanwhile (the premise failed).
 *
 *   rpc_raw -m flood -p PORT -w FILE [-t SECS]
 *	dispatch-ring churn against a server granting 128 credits that is
 *	kept busy meanwhile (by stalled requesters): 62 connections, then,
 *	once FILE exists, 128 NULL calls on each (8192 queued calls with
 *	the other two); three of them disconnect at once and three new
 *	connections take their places and send 128 calls each.  Every call
 *	of the 62 connections that stayed must be answered within SECS
 *	(default 30): exit 0, else 1.
 *
 *   rpc_raw -m wstall -p PORT [-s SIZE] [-w FILE] [-t SECS] [-R] [-n N]
 *	a requester that stops reading with a Write chunk: one GET of SIZE
 *	octets (default 16 MiB) offering a Write chunk of SIZE octets (filled
 *	with 0xEE first) and no Reply chunk; once the call has left it stops
 *	turning its engine ("rpc_raw: stalled") until FILE exists (at most
 *	SECS, default 60), then turns it again until the reply came or the
 *	connection ended (at most 10 s) and sorts every octet of the chunk:
 *	its own call's pattern, the fill (nothing came), or anything else
 *	(another call's data).  Prints "rpc_raw: wstall: reply yes|no, O
 *	ours, U untouched, F foreign"; exit 0 when F is 0 (and, with a
 *	reply, every octet is ours), 1 otherwise.  -R: a Reply chunk of
 *	SIZE + 4096 octets instead (a Long reply: the data after the 32
 *	octets of RPC reply header and results).  -n N: N such calls (XIDs
 *	0x5001 on, one chunk for all), each sent once the one before has
 *	left, then the stall (the server's reply memory bound).
 *
 *   rpc_raw -m rstall -p PORT [-s SIZE] [-t SECS]
 *	a requester that never answers the server's RDMA Read: one PUT of
 *	SIZE octets (default 1 MiB) whose data is a Read chunk, then it
 *	stops turning its engine for SECS seconds (default 60): the Read
 *	Request reaches its socket and no Read Response ever leaves.  Prints
 *	"rpc_raw: stalled" once its call has left, exits 0 after SECS.
 *
 *   rpc_raw -m zread -p PORT
 *	zero-length Read chunks (RFC 8166 §3.4.3: an "empty segment" has
 *	length 0): a PUT whose data chunk is one empty segment (and the
 *	length word 0) -> accepted, 0 octets; a PUT of 8 octets whose chunk
 *	is an empty segment then an 8-octet one -> the 8 octets arrive; a
 *	PUT of 8 octets whose chunk is only an empty segment -> GARBAGE_ARGS
 *	(§4.5.2); an RDMA_NOMSG whose Position-Zero Read chunk is one empty
 *	segment -> RDMA_ERROR ERR_CHUNK.  Each answer must come within 1 s
 *	(a server that waits for a Read it never posted answers after its
 *	wait bound, 10 s by default, or never).  Prints "rpc_raw: zread:
 *	sent" once the first call has left.  Exit 0 all as expected.
 *
 *   rpc_raw -m zloop|bigloop -p PORT [-t SECS] [-r RATE]
 *	load for bench/rpc-hostile.sh: for SECS seconds (default 60), RATE
 *	times a second (default 100; 0: as fast as answered), one call at a
 *	time: zloop a PUT whose data chunk is one empty segment (answered
 *	RDMA_MSG), bigloop headers over the server's caps in turn (17 Read
 *	segments, 5 Write chunks, a Write chunk of 17 segments: answered
 *	ERR_CHUNK).  Prints "rpc_raw: MODE: N calls, A answered, slowest
 *	answer M ms"; exit 0 when every call was answered.
 *
 *   rpc_raw -m conns -p PORT
 *	the server's connection limit (64): 65 connections at once against a
 *	server nobody else uses; prints "rpc_raw: conns: E established, R
 *	rejected, O other"; exit 0 when 64 are established and 1 rejected,
 *	and one more connects once one of them is closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "examples/bulk_common.h"
#include "rpcrdma.h"
#include "uiw_verbs.h"

#define NRX   8
#define RXSZ  4096
#define PROG  0x20750001u

static struct uiw_context *ctx;
static struct uiw_qp *qp;
static struct uiw_cq *cq;
static struct uiw_mr *mr;
static uint8_t *buf; /* NRX receive slots, then one send buffer */
static int fails;
static struct uiw_pd *pd;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void post_rx(unsigned i)
{
	struct uiw_sge sge = { (uintptr_t)(buf + (size_t)i * RXSZ), RXSZ, mr->lkey };
	struct uiw_recv_wr wr = { 100 + i, NULL, &sge, 1 }, *bad;

	if (uiw_post_recv(qp, &wr, &bad)) {
		fprintf(stderr, "rpc_raw: post_recv failed\n");
		exit(1);
	}
}

static void send_raw(const void *p, size_t len)
{
	uint8_t *tx = buf + (size_t)NRX * RXSZ;
	struct uiw_sge sge = { (uintptr_t)tx, (uint32_t)len, mr->lkey };
	struct uiw_send_wr wr, *bad;

	memcpy(tx, p, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UIW_WR_SEND;
	wr.send_flags = UIW_SEND_SIGNALED;
	if (uiw_post_send(qp, &wr, &bad)) {
		fprintf(stderr, "rpc_raw: post_send failed\n");
		exit(1);
	}
}

/* turn the engine until the call Send (wr_id 1) has left (10 s at most);
 * then the caller turns it no more.  Returns 0, or 1 when it did not leave. */
static int wait_sent(void)
{
	int64_t end = now_ms() + 10000;
	struct uiw_wc wc;

	for (;;) {
		int k = uiw_poll_cq(cq, 1, &wc);

		if (k == 1 && wc.wr_id == 1)
			return 0;
		if (now_ms() > end) {
			fprintf(stderr, "rpc_raw: the call did not leave\n");
			return 1;
		}
		if (k != 1)
			uiw_progress(ctx, 5);
	}
}

/* the next received message within @ms: its slot and length, or -1 */
static int recv_msg(int ms, uint32_t *len)
{
	int64_t end = now_ms() + ms;
	struct uiw_wc wc;

	while (now_ms() < end) {
		int n = uiw_poll_cq(cq, 1, &wc);

		if (n == 1) {
			if (wc.status) {
				fprintf(stderr, "rpc_raw: completion %llu failed: status %d\n",
					(unsigned long long)wc.wr_id, wc.status);
				exit(1);
			}
			if (wc.opcode == UIW_WC_RECV) {
				*len = wc.byte_len;
				return (int)(wc.wr_id - 100);
			}
			continue;
		}
		uiw_progress(ctx, 5);
	}
	return -1;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void check(int ok, const char *what)
{
	printf("rpc_raw: %s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
}

/* send @len octets, expect RDMA_ERROR @err with @xid (0: expect nothing) */
static void expect(const uint8_t *m, size_t len, uint32_t xid, uint32_t err, const char *what)
{
	struct rpcrdma_hdr h;
	uint32_t rl;
	int slot;

	send_raw(m, len);
	slot = recv_msg(err ? 5000 : 300, &rl);
	if (!err) {
		check(slot < 0, what);
		if (slot >= 0)
			post_rx((unsigned)slot);
		return;
	}
	if (slot < 0) {
		check(0, what);
		return;
	}
	/* read the words directly: an ERR_VERS answer echoes the request's
	 * rdma_vers (2 here, §4.5), which a version-1 decoder refuses */
	memset(&h, 0, sizeof(h));
	h.proc = 99;
	if (rl >= 20) {
		const uint8_t *p = buf + (size_t)slot * RXSZ;
		uint32_t w[7] = { 0 };

		for (unsigned i = 0; i < 7 && 4 * i + 4 <= rl; i++) {
			memcpy(&w[i], p + 4 * i, 4);
			w[i] = ntohl(w[i]);
		}
		h.xid = w[0];
		h.proc = w[3];
		h.err = w[4];
		h.vers_low = w[5];
		h.vers_high = w[6];
	}
	check(h.proc == RPCRDMA_ERROR && h.err == err && h.xid == xid &&
		      (err != RPCRDMA_ERR_VERS || (h.vers_low == 1 && h.vers_high == 1)),
	      what);
	post_rx((unsigned)slot);
}

/* the RPC call header after the RPC-over-RDMA header at @o: XID, CALL,
 * RPC version 2, our program, version 1, @proc, AUTH_NONE credential and
 * verifier; returns the offset after it */
static size_t put_call(uint8_t *m, size_t o, uint32_t xid, uint32_t proc)
{
	put32(m + o, xid), o += 4;
	put32(m + o, 0), o += 4; /* CALL */
	put32(m + o, 2), o += 4;
	put32(m + o, PROG), o += 4;
	put32(m + o, 1), o += 4;
	put32(m + o, proc), o += 4;
	memset(m + o, 0, 16); /* AUTH_NONE cred and verf */
	return o + 16;
}


/* the header of an RDMA_MSG call at @m with no Read or Write chunk and a
 * Reply chunk of one segment (@rlen octets at @raddr, STag @rkey; @rlen 0:
 * none), then the RPC call header of BULK procedure @proc; returns its
 * length (the arguments follow) */
static size_t call_hdr(uint8_t *m, uint32_t xid, uint32_t proc, uint32_t rkey, uint64_t raddr, uint32_t rlen)
{
	size_t o = 0;

	put32(m + o, xid), o += 4;
	put32(m + o, 1), o += 4;
	put32(m + o, 128), o += 4;
	put32(m + o, RPCRDMA_MSG), o += 4;
	put32(m + o, 0), o += 4; /* no Read list */
	put32(m + o, 0), o += 4; /* no Write list */
	if (rlen) {
		put32(m + o, 1), o += 4;
		put32(m + o, 1), o += 4; /* one segment */
		put32(m + o, rkey), o += 4;
		put32(m + o, rlen), o += 4;
		put32(m + o, (uint32_t)(raddr >> 32)), o += 4;
		put32(m + o, (uint32_t)raddr), o += 4;
	} else {
		put32(m + o, 0), o += 4;
	}
	return put_call(m, o, xid, proc);
}

/* turn the engine until @file exists (at most 60 s) */
static int wait_file(const char *file)
{
	int64_t end = now_ms() + 60000;
	struct stat st;
	struct uiw_wc wc;

	while (stat(file, &st)) {
		if (now_ms() > end)
			return -1;
		while (uiw_poll_cq(cq, 1, &wc) == 1)
			;
		uiw_progress(ctx, 10);
	}
	return 0;
}

/* ---- -m flood ---------------------------------------------------------- */

#define FL_F	 59 /* connections that stay */
#define FL_G	 3  /* connections that leave with their calls queued */
#define FL_B	 3  /* connections that take their places */
#define FL_N	 (FL_F + FL_G + FL_B)
#define FL_CALLS 128
#define FL_RX	 256 /* a NULL reply is 52 octets */
#define FL_TX	 128

static struct fconn {
	struct uiw_qp *qp;
	struct uiw_cm_id *id;
	int up, sent, left, got, err;
} fc[FL_N];
static uint8_t *fbuf; /* per connection: FL_CALLS receives, FL_CALLS sends */
static struct uiw_mr *fmr;
static struct uiw_cq *fcq;

static uint8_t *fl_rx(int i, int k)
{
	return fbuf + ((size_t)i * 2 * FL_CALLS + (size_t)k) * FL_RX;
}

static uint8_t *fl_tx(int i, int k)
{
	return fl_rx(i, FL_CALLS) + (size_t)k * FL_TX;
}

static int fl_open(int i, const char *addr, int port)
{
	struct uiw_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = fcq;
	qa.cap.max_send_wr = FL_CALLS + 8;
	qa.cap.max_recv_wr = FL_CALLS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (uiw_create_qp(pd, &qa, &fc[i].qp) || uiw_create_id(ctx, NULL, &fc[i].id))
		return -1;
	for (int k = 0; k < FL_CALLS; k++) {
		struct uiw_sge sge = { (uintptr_t)fl_rx(i, k), FL_RX, fmr->lkey };
		struct uiw_recv_wr wr = { (uint64_t)i << 32 | 1u << 16 | (unsigned)k, NULL, &sge, 1 }, *bad;

		if (uiw_post_recv(fc[i].qp, &wr, &bad))
			return -1;
	}
	return uiw_connect(fc[i].id, addr, (uint16_t)port, fc[i].qp, NULL) ? -1 : 0;
}

/* FL_CALLS NULL calls on connection @i */
static int fl_send(int i)
{
	for (int k = 0; k < FL_CALLS; k++) {
		uint8_t *m = fl_tx(i, k);
		size_t n = call_hdr(m, 0x30000000u | (uint32_t)i << 8 | (uint32_t)k, 0, 0, 0, 0);
		struct uiw_sge sge = { (uintptr_t)m, (uint32_t)n, fmr->lkey };
		struct uiw_send_wr wr, *bad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i << 32 | 2u << 16 | (unsigned)k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UIW_WR_SEND;
		wr.send_flags = UIW_SEND_SIGNALED;
		if (uiw_post_send(fc[i].qp, &wr, &bad))
			return -1;
	}
	fc[i].sent = 1;
	return 0;
}

/* take completions and CM events for up to @ms */
static void fl_turn(int ms)
{
	struct uiw_wc wc[32];
	struct uiw_cm_event ev;
	int n;

	uiw_progress(ctx, ms);
	while ((n = uiw_poll_cq(fcq, 32, wc)) != 0) {
		if (n < 0) {
			fprintf(stderr, "rpc_raw: flood: CQ overflow\n");
			exit(1);
		}
		for (int j = 0; j < n; j++) {
			int i = (int)(wc[j].wr_id >> 32);

			if (i < 0 || i >= FL_N)
				continue;
			if (wc[j].status) {
				fc[i].err++;
				continue;
			}
			if ((wc[j].wr_id >> 16 & 0xffff) == 1)
				fc[i].got++;
			else
				fc[i].left++;
		}
	}
	while (uiw_get_cm_event(ctx, &ev, 0) == 0)
		for (int i = 0; i < FL_N; i++)
			if (fc[i].id == ev.id) {
				if (ev.event == UIW_CM_EVENT_ESTABLISHED)
					fc[i].up = 1;
				else if (i < FL_F || i >= FL_F + FL_G)
					fprintf(stderr, "rpc_raw: flood: connection %d: %s\n", i,
						uiw_event_str(ev.event));
			}
}

static int flood(const char *addr, int port, const char *file, int secs)
{
	int64_t end;
	int ok = 1, calls = 0, replies = 0;

	fbuf = aligned_alloc(4096, (size_t)FL_N * 2 * FL_CALLS * FL_RX);
	if (!fbuf || uiw_reg_mr(pd, fbuf, (size_t)FL_N * 2 * FL_CALLS * FL_RX, UIW_ACCESS_LOCAL_WRITE, &fmr) ||
	    uiw_create_cq(ctx, FL_N * (2 * FL_CALLS + 8), NULL, NULL, &fcq))
		return 1;
	for (int i = 0; i < FL_F + FL_G; i++)
		if (fl_open(i, addr, port)) {
			fprintf(stderr, "rpc_raw: flood: connection %d failed\n", i);
			return 1;
		}
	for (end = now_ms() + 20000;;) {
		int up = 0;

		for (int i = 0; i < FL_F + FL_G; i++)
			up += fc[i].up;
		if (up == FL_F + FL_G)
			break;
		if (now_ms() > end) {
			fprintf(stderr, "rpc_raw: flood: %d of %d connections up\n", up, FL_F + FL_G);
			return 1;
		}
		fl_turn(5);
	}
	printf("rpc_raw: ready\n");
	fflush(stdout);
	{
		struct stat st;

		for (end = now_ms() + 60000; stat(file, &st);) {
			if (now_ms() > end)
				return 1;
			fl_turn(10);
		}
	}
	/* one that stays first (its calls at the head of the ring), then the
	 * ones that leave, then the rest */
	if (fl_send(0))
		return 1;
	for (int i = FL_F; i < FL_F + FL_G; i++)
		if (fl_send(i))
			return 1;
	for (int i = 1; i < FL_F; i++)
		if (fl_send(i))
			return 1;
	for (end = now_ms() + 10000;;) {
		int left = 0;

		for (int i = 0; i < FL_F + FL_G; i++)
			left += fc[i].left;
		if (left == (FL_F + FL_G) * FL_CALLS)
			break;
		if (now_ms() > end) {
			fprintf(stderr, "rpc_raw: flood: %d calls of %d left\n", left, (FL_F + FL_G) * FL_CALLS);
			return 1;
		}
		fl_turn(1);
	}
	for (int i = FL_F; i < FL_F + FL_G; i++)
		uiw_disconnect(fc[i].id);
	for (end = now_ms() + 300; now_ms() < end;)
		fl_turn(5);
	for (int i = FL_F + FL_G; i < FL_N; i++)
		if (fl_open(i, addr, port)) {
			fprintf(stderr, "rpc_raw: flood: connection %d failed\n", i);
			return 1;
		}
	printf("rpc_raw: flooded\n");
	fflush(stdout);
	for (end = now_ms() + (int64_t)secs * 1000; now_ms() < end;) {
		int done = 1;

		for (int i = FL_F + FL_G; i < FL_N; i++)
			if (fc[i].up && !fc[i].sent && fl_send(i))
				return 1;
		for (int i = 0; i < FL_N; i++)
			if ((i < FL_F || i >= FL_F + FL_G) && fc[i].got < FL_CALLS)
				done = 0;
		if (done)
			break;
		fl_turn(5);
	}
	for (int i = 0; i < FL_N; i++) {
		if (i >= FL_F && i < FL_F + FL_G)
			continue;
		calls += fc[i].sent ? FL_CALLS : 0;
		replies += fc[i].got;
		if (fc[i].got < FL_CALLS || fc[i].err) {
			printf("rpc_raw: connection %d: %d of %d calls answered, %d errors\n", i, fc[i].got,
			       FL_CALLS, fc[i].err);
			ok = 0;
		}
	}
	printf("rpc_raw: flood: %d calls, %d replies: %s\n", calls, replies, ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}

/* -m stall: see the top of the file */
static int stall(uint32_t size, int secs, const char *file, int nerr)
{
	uint32_t rlen = size + 4096;
	static uint8_t *rbuf; /* static: reachable at exit (LeakSanitizer) */
	struct uiw_mr *rmr;
	struct uiw_wc wc;
	uint8_t m[128];
	size_t n;
	int64_t end;

	if (nerr < 0 || nerr > 256)
		nerr = 256;
	/* the Reply chunk, then the -e headers */
	rbuf = aligned_alloc(4096, (size_t)rlen + 8192);
	if (!rbuf || uiw_reg_mr(pd, rbuf, (size_t)rlen + 8192, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE,
				&rmr)) {
		fprintf(stderr, "rpc_raw: no Reply chunk memory\n");
		return 1;
	}
	if (file) {
		printf("rpc_raw: connected\n");
		fflush(stdout);
		if (wait_file(file))
			return 1;
	}
	n = call_hdr(m, 0x2001, 1, rmr->rkey, (uintptr_t)rbuf, rlen);
	put32(m + n, size), n += 4; /* bulk_getargs */
	put32(m + n, 7), n += 4;
	send_raw(m, n);
	/* turn the engine until the call has left, then never again */
	if (wait_sent())
		return 1;
	if (nerr) {
		/* the server writes the reply now and its socket fills: then
		 * the headers, turning the engine only until they have left */
		usleep(500 * 1000);
		for (int i = 0; i < nerr; i++) {
			/* each Send from its own buffer: they all leave at once */
			uint8_t *e = rbuf + rlen + (size_t)i * 32;
			struct uiw_sge sge = { (uintptr_t)e, 28, rmr->lkey };
			struct uiw_send_wr wr, *bad;

			memset(e, 0, 28);
			put32(e, 0x2100 + (uint32_t)i);
			put32(e + 4, 2);
			put32(e + 8, 1);
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 3;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = UIW_WR_SEND;
			wr.send_flags = i == nerr - 1 ? UIW_SEND_SIGNALED : 0;
			if (uiw_post_send(qp, &wr, &bad)) {
				fprintf(stderr, "rpc_raw: post_send failed\n");
				return 1;
			}
		}
		end = now_ms() + 10000;
		for (;;) {
			int k = uiw_poll_cq(cq, 1, &wc);

			if (k == 1 && wc.wr_id == 3)
				break;
			if (k == 1 && wc.opcode == UIW_WC_RECV) {
				/* the reply (or an error reply) got through */
				printf("rpc_raw: not stalled\n");
				fflush(stdout);
			}
			if (now_ms() > end) {
				fprintf(stderr, "rpc_raw: the headers did not leave\n");
				return 1;
			}
			if (k != 1)
				uiw_progress(ctx, 0);
		}
	}
	printf("rpc_raw: stalled\n");
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}

/* ---- -m wstall -------------------------------------------------------- */

static int wstall(uint32_t size, int secs, const char *file, int rchunk, int ncalls)
{
	enum { SEED = 0x5717a11u, FILL = 0xee };
	static uint8_t *wbuf; /* static: reachable at exit (LeakSanitizer) */
	static struct uiw_mr *wmr; /* static: reachable at exit */
	struct uiw_wc wc;
	struct stat st;
	uint8_t m[128];
	/* a Long reply: xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS, sum, the
	 * data's length, then the data */
	size_t skip = rchunk ? 32 : 0, clen = (size_t)size + (rchunk ? 4096 : 0);
	size_t n = 0, ours = 0, untouched = 0, foreign = 0, first_foreign = 0;
	int64_t end;
	int reply = 0, acc = -1, ended = 0;
	size_t xoff;

	wbuf = aligned_alloc(4096, (size_t)size + 4096);
	if (!wbuf || uiw_reg_mr(pd, wbuf, (size_t)size + 4096, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE,
				&wmr)) {
		fprintf(stderr, "rpc_raw: no Write chunk memory\n");
		return 1;
	}
	memset(wbuf, FILL, clen);
	/* RDMA_MSG, no Read list, a Write list of one chunk of one segment,
	 * no Reply chunk (the reply without its data is small); or (-R) no
	 * Write list and a Reply chunk */
	put32(m + n, 0x5001), n += 4;
	put32(m + n, 1), n += 4;
	put32(m + n, 128), n += 4;
	put32(m + n, RPCRDMA_MSG), n += 4;
	put32(m + n, 0), n += 4; /* no Read list */
	if (rchunk) {
		put32(m + n, 0); /* no Write list */
		n += 4;
	}
	put32(m + n, 1), n += 4; /* a Write chunk, or the Reply chunk, ... */
	put32(m + n, 1), n += 4; /* ... of one segment */
	put32(m + n, wmr->rkey), n += 4;
	put32(m + n, (uint32_t)clen), n += 4;
	put32(m + n, (uint32_t)((uintptr_t)wbuf >> 32)), n += 4;
	put32(m + n, (uint32_t)(uintptr_t)wbuf), n += 4;
	if (!rchunk) {
		put32(m + n, 0), n += 4; /* end of the Write list */
		put32(m + n, 0), n += 4; /* no Reply chunk */
	}
	xoff = n;
	put32(m + n, 0x5001), n += 4;
	put32(m + n, 0), n += 4; /* CALL */
	put32(m + n, 2), n += 4;
	put32(m + n, PROG), n += 4;
	put32(m + n, 1), n += 4;
	put32(m + n, 1), n += 4; /* GET */
	memset(m + n, 0, 16), n += 16;
	put32(m + n, size), n += 4; /* bulk_getargs */
	put32(m + n, SEED), n += 4;
	/* -n: the same call again under the next XIDs, into the same chunk */
	for (int i = 0; i < ncalls; i++) {
		put32(m, 0x5001 + (uint32_t)i);
		put32(m + xoff, 0x5001 + (uint32_t)i);
		send_raw(m, n);
		if (wait_sent())
			return 1;
	}
	printf("rpc_raw: stalled\n");
	fflush(stdout);
	/* not a turn of the engine until FILE exists */
	for (end = now_ms() + (int64_t)secs * 1000; (!file || stat(file, &st)) && now_ms() < end;)
		usleep(10000);
	/* read again: the reply, or the end of the connection */
	for (end = now_ms() + 10000; !ended && now_ms() < end;) {
		int k = uiw_poll_cq(cq, 1, &wc);

		if (k != 1) {
			uiw_progress(ctx, 5);
			continue;
		}
		if (wc.status) {
			ended = 1; /* flushed: the server ended the connection */
		} else if (wc.opcode == UIW_WC_RECV) {
			const uint8_t *p = buf + (wc.wr_id - 100) * RXSZ;
			struct rpcrdma_read_seg rs[1];
			struct rpcrdma_chunk wch[1];
			struct rpcrdma_seg segs[4];
			struct rpcrdma_dec_cfg cfg = { rs, 1, wch, 1, segs, 4, 4, 0 };
			struct rpcrdma_hdr h;
			ssize_t hl = rpcrdma_hdr_decode(p, wc.byte_len, &cfg, &h, NULL);

			if (hl > 0 && h.xid == 0x5001) {
				reply = 1;
				ended = 1;
				if (h.proc == RPCRDMA_MSG && wc.byte_len >= (uint32_t)hl + 24)
					acc = (int)get32(p + hl + 20);
				else if (h.proc == RPCRDMA_NOMSG)
					acc = (int)get32(wbuf + 20);
			}
		}
	}
	for (size_t i = 0; i < size; i++) {
		if (wbuf[skip + i] == bulk_pat(SEED, i)) {
			ours++;
		} else if (wbuf[skip + i] == FILL) {
			untouched++;
		} else {
			if (!foreign)
				first_foreign = i;
			foreign++;
		}
	}
	printf("rpc_raw: wstall: reply %s%s, %zu ours, %zu untouched, %zu foreign", reply ? "yes" : "no",
	       reply ? (acc == 0 ? " (SUCCESS)" : " (not SUCCESS)") : ended ? " (connection ended)" : "",
	       ours, untouched, foreign);
	if (foreign)
		printf(" (the first at offset %zu)", first_foreign);
	printf("\n");
	return foreign || (reply && acc == 0 && ours != size) ? 1 : 0;
}

/* ---- -m zread --------------------------------------------------------- */

/* an RDMA_MSG (or, @nomsg, RDMA_NOMSG) call at @m with the Read list
 * @rd (@nrd segments: position, handle, length, offset) and no Write list
 * or Reply chunk; then, unless @nomsg, the RPC call header of BULK
 * procedure @proc.  Returns its length */
static size_t zr_call(uint8_t *m, uint32_t xid, int nomsg, uint32_t proc, const uint32_t (*rd)[4], int nrd,
		      uint64_t addr)
{
	size_t o = 0;

	put32(m + o, xid), o += 4;
	put32(m + o, 1), o += 4;
	put32(m + o, 128), o += 4;
	put32(m + o, nomsg ? RPCRDMA_NOMSG : RPCRDMA_MSG), o += 4;
	for (int i = 0; i < nrd; i++) {
		put32(m + o, 1), o += 4;
		put32(m + o, rd[i][0]), o += 4; /* position */
		put32(m + o, rd[i][1]), o += 4; /* handle */
		put32(m + o, rd[i][2]), o += 4; /* length */
		put32(m + o, (uint32_t)(addr >> 32)), o += 4;
		put32(m + o, (uint32_t)addr + rd[i][3]), o += 4;
	}
	put32(m + o, 0), o += 4; /* end of the Read list */
	put32(m + o, 0), o += 4; /* no Write list */
	put32(m + o, 0), o += 4; /* no Reply chunk */
	if (nomsg)
		return o;
	return put_call(m, o, xid, proc);
}

/* the answer to @xid within 12 s: its slot and length; *ms how long it
 * took; -1 if none came */
static int zr_answer(uint32_t xid, uint32_t *len, int64_t *ms)
{
	int64_t t0 = now_ms();
	struct uiw_wc wc;

	for (;;) {
		int n = uiw_poll_cq(cq, 1, &wc);

		*ms = now_ms() - t0;
		if (n == 1 && wc.status) {
			printf("rpc_raw: zread: the connection failed after %lld ms (status %d)\n",
			       (long long)*ms, wc.status);
			return -1;
		}
		if (n == 1 && wc.opcode == UIW_WC_RECV) {
			int slot = (int)(wc.wr_id - 100);

			*len = wc.byte_len;
			if (*len >= 4 && get32(buf + (size_t)slot * RXSZ) == xid)
				return slot;
			post_rx((unsigned)slot); /* not ours */
			continue;
		}
		if (n == 1)
			continue;
		if (*ms > 12000)
			return -1;
		uiw_progress(ctx, 5);
	}
}

/* the RPC reply of an RDMA_MSG answer: accept_stat, and the PUT results */
static int zr_put_reply(int slot, uint32_t len, uint32_t xid, uint32_t *acc, uint32_t res[3])
{
	const uint8_t *p = buf + (size_t)slot * RXSZ;
	struct rpcrdma_dec_cfg cfg = { 0 };
	struct rpcrdma_hdr h;
	ssize_t hl = rpcrdma_hdr_decode(p, len, &cfg, &h, NULL);

	if (hl < 0 || h.proc != RPCRDMA_MSG || len < (uint32_t)hl + 24)
		return -1;
	p += hl;
	len -= (uint32_t)hl;
	/* xid, REPLY, MSG_ACCEPTED, verifier (AUTH_NONE, 0), accept_stat */
	if (get32(p) != xid || get32(p + 4) != 1 || get32(p + 8) != 0 || get32(p + 16) != 0)
		return -1;
	*acc = get32(p + 20);
	for (int i = 0; i < 3; i++)
		res[i] = len >= 24 + 4 * (uint32_t)i + 4 ? get32(p + 24 + 4 * i) : 0;
	return 0;
}

/* -m rstall: see the top of the file */
static int rstall(uint32_t size, int secs)
{
	/* the PUT arguments start after the 40-octet RPC call header: seed
	 * at 40, the data's length at 44, its octets at position 48 */
	enum { POS = 48 };
	static uint8_t *src; /* static: reachable at exit (LeakSanitizer) */
	static struct uiw_mr *smr; /* static: reachable at exit */
	uint8_t m[256];
	size_t n;

	src = aligned_alloc(4096, (size_t)size + 4096);
	if (!src || uiw_reg_mr(pd, src, (size_t)size + 4096, UIW_ACCESS_REMOTE_READ, &smr))
		return 1;
	memset(src, 0x5a, size);
	{
		const uint32_t rd[1][4] = { { POS, smr->rkey, size, 0 } };

		n = zr_call(m, 0x6001, 0, 2, rd, 1, (uintptr_t)src);
		put32(m + n, 0), n += 4; /* seed 0: no checking */
		put32(m + n, size), n += 4;
	}
	send_raw(m, n);
	if (wait_sent())
		return 1;
	printf("rpc_raw: stalled\n");
	fflush(stdout);
	/* never a turn of the engine again (the test sees the server's
	 * abort from the server's side) */
	sleep((unsigned)secs);
	return 0;
}

static int zread(void)
{
	/* the PUT arguments start after the 40-octet RPC call header: seed
	 * at 40, the data's length at 44, its octets at position 48 */
	enum { POS = 48, SEED = 0x5eed0001 };
	static uint8_t *src; /* static: reachable at exit (LeakSanitizer) */
	static struct uiw_mr *smr; /* static: reachable at exit */
	uint8_t m[256];
	uint32_t rl, acc, res[3];
	int64_t ms;
	size_t n;
	int slot;

	src = aligned_alloc(4096, 4096);
	if (!src || uiw_reg_mr(pd, src, 4096, UIW_ACCESS_REMOTE_READ, &smr))
		return 1;
	bulk_fill(SEED, src, 8);

	/* PUT of 0 octets whose data chunk is one empty segment */
	{
		const uint32_t rd[1][4] = { { POS, smr->rkey, 0, 0 } };

		n = zr_call(m, 0x4001, 0, 2, rd, 1, (uintptr_t)src);
		put32(m + n, 0), n += 4; /* seed 0: no checking */
		put32(m + n, 0), n += 4; /* 0 octets */
		send_raw(m, n);
		printf("rpc_raw: zread: sent\n");
		fflush(stdout);
		slot = zr_answer(0x4001, &rl, &ms);
		check(slot >= 0 && ms < 1000 && !zr_put_reply(slot, rl, 0x4001, &acc, res) && acc == 0 &&
			      res[1] == 0,
		      "PUT with an empty Read chunk: answered, 0 octets");
		printf("rpc_raw: zread: empty chunk %s after %lld ms\n", slot >= 0 ? "answered" : "NOT answered",
		       (long long)ms);
		if (slot >= 0)
			post_rx((unsigned)slot);
	}
	/* PUT of 8 octets: an empty segment, then 8 octets */
	{
		const uint32_t rd[2][4] = { { POS, smr->rkey, 0, 0 }, { POS, smr->rkey, 8, 0 } };

		n = zr_call(m, 0x4002, 0, 2, rd, 2, (uintptr_t)src);
		put32(m + n, SEED), n += 4;
		put32(m + n, 8), n += 4;
		send_raw(m, n);
		slot = zr_answer(0x4002, &rl, &ms);
		check(slot >= 0 && ms < 1000 && !zr_put_reply(slot, rl, 0x4002, &acc, res) && acc == 0 &&
			      res[0] == bulk_sum(src, 8) && res[1] == 8 && res[2] == 1,
		      "PUT with an empty segment before an 8-octet one: the 8 octets arrived");
		if (slot >= 0)
			post_rx((unsigned)slot);
	}
	/* PUT of 8 octets whose chunk is only an empty segment: the call
	 * lacks its data, the arguments do not decode (§4.5.2) */
	{
		const uint32_t rd[1][4] = { { POS, smr->rkey, 0, 0 } };

		n = zr_call(m, 0x4003, 0, 2, rd, 1, (uintptr_t)src);
		put32(m + n, SEED), n += 4;
		put32(m + n, 8), n += 4;
		send_raw(m, n);
		slot = zr_answer(0x4003, &rl, &ms);
		check(slot >= 0 && ms < 1000 && !zr_put_reply(slot, rl, 0x4003, &acc, res) && acc == 4 /* GARBAGE_ARGS, RFC 5531 */,
		      "PUT of 8 octets with an empty chunk: GARBAGE_ARGS");
		if (slot >= 0)
			post_rx((unsigned)slot);
	}
	/* RDMA_NOMSG whose Position-Zero Read chunk is empty: no Payload
	 * stream at all */
	{
		const uint32_t rd[1][4] = { { 0, smr->rkey, 0, 0 } };

		n = zr_call(m, 0x4004, 1, 0, rd, 1, (uintptr_t)src);
		send_raw(m, n);
		slot = zr_answer(0x4004, &rl, &ms);
		check(slot >= 0 && ms < 1000 && rl >= 20 && get32(buf + (size_t)slot * RXSZ + 12) == RPCRDMA_ERROR &&
			      get32(buf + (size_t)slot * RXSZ + 16) == RPCRDMA_ERR_CHUNK,
		      "RDMA_NOMSG with an empty Position-Zero Read chunk: ERR_CHUNK");
		if (slot >= 0)
			post_rx((unsigned)slot);
	}
	printf("rpc_raw: zread: %d failures\n", fails);
	return fails ? 1 : 0;
}

/* ---- -m zloop, -m bigloop ---------------------------------------------- */

/* a header over the caps of rpc_svc_rdma.c (rpc_rdma_int.h: 16 Read
 * segments, 4 Write chunks, 16 segments a chunk), kind @k of 3 */
static size_t big_hdr(uint8_t *m, uint32_t xid, int k)
{
	size_t o = 0;

	put32(m + o, xid), o += 4;
	put32(m + o, 1), o += 4;
	put32(m + o, 128), o += 4;
	put32(m + o, RPCRDMA_MSG), o += 4;
	for (int i = 0; k == 0 && i < 17; i++) { /* 17 Read segments */
		put32(m + o, 1), o += 4;
		put32(m + o, 48), o += 4;
		put32(m + o, 0x1234), o += 4;
		put32(m + o, 8), o += 4;
		put32(m + o, 0), o += 4;
		put32(m + o, 0x1000 + 8 * (uint32_t)i), o += 4;
	}
	put32(m + o, 0), o += 4; /* end of the Read list */
	for (int c = 0; c < (k == 1 ? 5 : k == 2 ? 1 : 0); c++) {
		int nseg = k == 2 ? 17 : 1;

		put32(m + o, 1), o += 4;
		put32(m + o, (uint32_t)nseg), o += 4;
		for (int i = 0; i < nseg; i++) {
			put32(m + o, 0x4321), o += 4;
			put32(m + o, 64), o += 4;
			put32(m + o, 0), o += 4;
			put32(m + o, 0x2000 + 64 * (uint32_t)i), o += 4;
		}
	}
	put32(m + o, 0), o += 4; /* end of the Write list */
	put32(m + o, 0), o += 4; /* no Reply chunk */
	put32(m + o, xid), o += 4; /* a NULL call */
	put32(m + o, 0), o += 4;
	put32(m + o, 2), o += 4;
	put32(m + o, PROG), o += 4;
	put32(m + o, 1), o += 4;
	put32(m + o, 0), o += 4;
	memset(m + o, 0, 16);
	return o + 16;
}

static int hloop(int big, int secs, int rate)
{
	static uint8_t *src; /* static: reachable at exit (LeakSanitizer) */
	static struct uiw_mr *smr; /* static: reachable at exit */
	uint8_t m[1024];
	long calls = 0, answered = 0;
	int64_t slowest = 0, end = now_ms() + (int64_t)secs * 1000, t0 = now_ms();

	src = aligned_alloc(4096, 4096);
	if (!src || uiw_reg_mr(pd, src, 4096, UIW_ACCESS_REMOTE_READ, &smr))
		return 1;
	while (now_ms() < end) {
		uint32_t xid = 0x6000 + (uint32_t)calls, rl;
		int64_t ms;
		size_t n;
		int slot;

		if (big) {
			n = big_hdr(m, xid, (int)(calls % 3));
		} else {
			const uint32_t rd[1][4] = { { 48, smr->rkey, 0, 0 } };

			n = zr_call(m, xid, 0, 2, rd, 1, (uintptr_t)src);
			put32(m + n, 0), n += 4;
			put32(m + n, 0), n += 4;
		}
		send_raw(m, n);
		calls++;
		slot = zr_answer(xid, &rl, &ms);
		if (slot < 0)
			break;
		answered++;
		if (ms > slowest)
			slowest = ms;
		post_rx((unsigned)slot);
		if (rate > 0) { /* the next call at its time */
			int64_t due = t0 + calls * 1000 / rate;

			while (now_ms() < due) {
				struct uiw_wc wc;

				if (uiw_poll_cq(cq, 1, &wc) == 1 && wc.opcode == UIW_WC_RECV)
					post_rx((unsigned)(wc.wr_id - 100));
				uiw_progress(ctx, 1);
			}
		}
	}
	printf("rpc_raw: %s: %ld calls, %ld answered, slowest answer %lld ms\n", big ? "bigloop" : "zloop", calls,
	       answered, (long long)slowest);
	return answered == calls ? 0 : 1;
}

/* ---- -m conns ---------------------------------------------------------- */

static int conns(const char *addr, int port)
{
	int est = 0, rej = 0, other = 0, ok;
	int64_t end;
	struct uiw_cm_event ev;

	fbuf = aligned_alloc(4096, (size_t)FL_N * 2 * FL_CALLS * FL_RX);
	if (!fbuf || uiw_reg_mr(pd, fbuf, (size_t)FL_N * 2 * FL_CALLS * FL_RX, UIW_ACCESS_LOCAL_WRITE, &fmr) ||
	    uiw_create_cq(ctx, FL_N * (2 * FL_CALLS + 8), NULL, NULL, &fcq))
		return 1;
	for (int i = 0; i < FL_N; i++)
		if (fl_open(i, addr, port)) {
			fprintf(stderr, "rpc_raw: conns: connection %d failed to start\n", i);
			return 1;
		}
	for (end = now_ms() + 20000; est + rej + other < FL_N && now_ms() < end;) {
		uiw_progress(ctx, 5);
		while (uiw_get_cm_event(ctx, &ev, 0) == 0) {
			if (ev.event == UIW_CM_EVENT_ESTABLISHED)
				est++;
			else if (ev.event == UIW_CM_EVENT_REJECTED)
				rej++;
			else
				other++;
			for (int i = 0; i < FL_N; i++)
				if (fc[i].id == ev.id)
					fc[i].up = ev.event == UIW_CM_EVENT_ESTABLISHED ? 1 : -1;
		}
	}
	printf("rpc_raw: conns: %d established, %d rejected, %d other (of %d)\n", est, rej, other, FL_N);
	ok = est == 64 && rej == FL_N - 64;
	/* one leaves: a new connection gets its place */
	for (int i = 0; ok && i < FL_N; i++)
		if (fc[i].up == 1) {
			struct uiw_cm_id *nid;
			int got = 0;

			uiw_destroy_id(fc[i].id);
			fc[i].id = NULL;
			uiw_destroy_qp(fc[i].qp);
			fc[i].qp = NULL;
			/* the server frees the slot on DISCONNECTED: retry for a while */
			for (end = now_ms() + 10000; !got && now_ms() < end;) {
				if (fl_open(i, addr, port))
					return 1;
				nid = fc[i].id;
				while (!got && now_ms() < end) {
					uiw_progress(ctx, 5);
					if (uiw_get_cm_event(ctx, &ev, 0) == 0 && ev.id == nid) {
						if (ev.event == UIW_CM_EVENT_ESTABLISHED)
							got = 1;
						else
							break;
					}
				}
				if (!got) {
					uiw_destroy_id(fc[i].id);
					uiw_destroy_qp(fc[i].qp);
					usleep(100000);
				}
			}
			printf("rpc_raw: conns: after one closed, a new connection %s\n",
			       got ? "got in" : "did not get in within 10 s");
			ok = got;
			break;
		}
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct uiw_context_attr ca = { .mode = UIW_CTX_POLLED };
	struct uiw_qp_init_attr qa;
	struct uiw_cm_id *id;
	struct uiw_cm_event ev;
	const char *addr = "127.0.0.1";
	const char *mode = "hostile", *file = NULL;
	int nerr = 0, rchunk = 0, rate = 100, ncalls = 1;
	uint32_t size = 16u << 20;
	int port = 0, c, secs = 60;
	uint8_t m[128];
	int64_t end;

	while ((c = getopt(argc, argv, "a:p:m:s:t:w:e:n:r:Rh")) != -1) {
		if (c == 'a')
			addr = optarg;
		else if (c == 'p')
			port = atoi(optarg);
		else if (c == 'm')
			mode = optarg;
		else if (c == 's')
			size = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 't')
			secs = atoi(optarg);
		else if (c == 'w')
			file = optarg;
		else if (c == 'n')
			ncalls = atoi(optarg);
		else if (c == 'e')
			nerr = atoi(optarg);
		else if (c == 'R')
			rchunk = 1;
		else if (c == 'r')
			rate = atoi(optarg);
		else {
			printf("usage: rpc_raw [-m hostile|stall|flood|conns|zread|rstall|wstall|zloop|bigloop] -p PORT [-a ADDR] [-s SIZE] [-t SECS] [-w FILE] [-e N] [-n N] [-R] [-r RATE]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (port <= 0) {
		fprintf(stderr, "usage: rpc_raw -p PORT [-a ADDR]\n");
		return 2;
	}
	buf = aligned_alloc(4096, (size_t)(NRX + 1) * RXSZ);
	memset(&qa, 0, sizeof(qa));
	if (!buf || uiw_open_context(&ctx, &ca) || uiw_alloc_pd(ctx, &pd) ||
	    uiw_create_cq(ctx, 512, NULL, NULL, &cq))
		return 1;
	qa.send_cq = qa.recv_cq = cq;
	qa.cap.max_send_wr = 256;
	qa.cap.max_recv_wr = NRX;
	if (uiw_create_qp(pd, &qa, &qp) ||
	    uiw_reg_mr(pd, buf, (size_t)(NRX + 1) * RXSZ, UIW_ACCESS_LOCAL_WRITE, &mr) ||
	    uiw_create_id(ctx, NULL, &id))
		return 1;
	if (!strcmp(mode, "flood"))
		return file ? flood(addr, port, file, secs == 60 ? 30 : secs) : 2;
	if (!strcmp(mode, "conns"))
		return conns(addr, port);
	for (unsigned i = 0; i < NRX; i++)
		post_rx(i);
	if (uiw_connect(id, addr, (uint16_t)port, qp, NULL)) /* no RFC 8797 data */
		return 1;
	end = now_ms() + 10000;
	for (;;) {
		if (now_ms() > end) {
			fprintf(stderr, "rpc_raw: no connection\n");
			return 1;
		}
		uiw_progress(ctx, 50);
		if (uiw_get_cm_event(ctx, &ev, 0) == 0) {
			if (ev.event == UIW_CM_EVENT_ESTABLISHED)
				break;
			fprintf(stderr, "rpc_raw: %s\n", uiw_event_str(ev.event));
			return 1;
		}
	}

	if (!strcmp(mode, "stall"))
		return stall(size, secs, file, nerr);
	if (!strcmp(mode, "zread"))
		return zread();
	if (!strcmp(mode, "rstall"))
		return rstall(size == 16u << 20 ? 1u << 20 : size, secs);
	if (!strcmp(mode, "wstall"))
		return wstall(size, secs, file, rchunk, ncalls < 1 ? 1 : ncalls);
	if (!strcmp(mode, "zloop") || !strcmp(mode, "bigloop"))
		return hloop(!strcmp(mode, "bigloop"), secs, rate);

	/* xid, vers, credits, proc, then three empty lists: 28 octets */
	memset(m, 0, sizeof(m));
	put32(m, 0x1001);
	put32(m + 4, 2);
	put32(m + 8, 1);
	expect(m, 28, 0x1001, RPCRDMA_ERR_VERS, "version 2 answered ERR_VERS 1..1");

	memset(m, 0, sizeof(m));
	put32(m, 0x1002);
	put32(m + 4, 1);
	put32(m + 8, 1);
	put32(m + 12, RPCRDMA_MSG);
	put32(m + 16, 1); /* a Read segment ... */
	put32(m + 20, 3); /* ... at position 3 */
	put32(m + 24, 0x1234);
	put32(m + 28, 16);
	/* offset 0, no more read segs, empty write list, no reply chunk */
	expect(m, 52, 0x1002, RPCRDMA_ERR_CHUNK, "Read segment at position 3 answered ERR_CHUNK");

	memset(m, 0, sizeof(m));
	put32(m, 0x1003);
	put32(m + 4, 1);
	put32(m + 8, 1);
	put32(m + 12, 7);
	expect(m, 28, 0x1003, RPCRDMA_ERR_CHUNK, "rdma_proc 7 answered ERR_CHUNK");

	put32(m, 0x1004);
	put32(m + 12, RPCRDMA_MSGP);
	expect(m, 40, 0x1004, RPCRDMA_ERR_CHUNK, "RDMA_MSGP answered ERR_CHUNK");

	put32(m, 0x1005);
	put32(m + 12, RPCRDMA_MSG);
	expect(m, 20, 0, 0, "a 20-octet header is discarded silently");

	put32(m, 0x1006);
	put32(m + 12, RPCRDMA_ERROR);
	put32(m + 16, RPCRDMA_ERR_CHUNK);
	expect(m, 28, 0, 0, "an RDMA_ERROR sent to a responder is discarded");

	/* a valid NULL call: RDMA_MSG header, then the RPC call (RFC 5531) */
	{
		uint32_t rl;
		int slot;
		struct rpcrdma_hdr h;
		struct rpcrdma_dec_cfg cfg = { 0 };

		memset(m, 0, sizeof(m));
		put32(m, 0x1007);
		put32(m + 4, 1);
		put32(m + 8, 1);
		put32(m + 12, RPCRDMA_MSG);
		/* lists empty: m[16..27] = 0 */
		put32(m + 28, 0x1007); /* xid */
		put32(m + 32, 0);      /* CALL */
		put32(m + 36, 2);      /* rpcvers */
		put32(m + 40, PROG);
		put32(m + 44, 1);
		put32(m + 48, 0); /* NULL */
		/* AUTH_NONE cred and verf: 4 zero words */
		send_raw(m, 68);
		slot = recv_msg(5000, &rl);
		if (slot >= 0 && rpcrdma_hdr_decode(buf + (size_t)slot * RXSZ, rl, &cfg, &h, NULL) > 0)
			check(h.proc == RPCRDMA_MSG && h.xid == 0x1007 && h.credits > 0,
			      "a valid NULL call after all that is answered: the connection survived");
		else
			check(0, "a valid NULL call after all that is answered: the connection survived");
	}
	uiw_disconnect(id);
	printf("rpc_raw: %d failures\n", fails);
	return fails ? 1 : 0;
}
