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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	struct uiw_context_attr ca = { .mode = UIW_CTX_POLLED };
	struct uiw_qp_init_attr qa;
	struct uiw_cm_id *id;
	struct uiw_pd *pd;
	struct uiw_cm_event ev;
	const char *addr = "127.0.0.1";
	int port = 0, c;
	uint8_t m[128];
	int64_t end;

	while ((c = getopt(argc, argv, "a:p:h")) != -1) {
		if (c == 'a')
			addr = optarg;
		else if (c == 'p')
			port = atoi(optarg);
		else {
			printf("usage: rpc_raw -p PORT [-a ADDR]\n");
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
	    uiw_create_cq(ctx, 64, NULL, NULL, &cq))
		return 1;
	qa.send_cq = qa.recv_cq = cq;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = NRX;
	if (uiw_create_qp(pd, &qa, &qp) ||
	    uiw_reg_mr(pd, buf, (size_t)(NRX + 1) * RXSZ, UIW_ACCESS_LOCAL_WRITE, &mr) ||
	    uiw_create_id(ctx, NULL, &id))
		return 1;
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
