/* SPDX-License-Identifier: MIT */
/*
 * api_client - client half of the minimal uiwarp example (docs/API.md).
 *
 *   api_client HOST [PORT]   connect to api_server on HOST (default port 7471)
 *
 * Connects with the greeting "uiw-example" as private data, learns the
 * server's region (address, STag, length) from the Reply's private data,
 * RDMA Writes a text into it followed by a Send of its length, waits for the
 * server's Send, RDMA Reads the region back (the server upper-cased it),
 * checks it and disconnects.  It busy-polls its CQ, as a latency-bound
 * client would.  Build (from the top folder):
 *
 *   cc -Wall -Wextra -Iverbs-shim docs/examples/api_client.c build/libuiw.a \
 *      -luring -lcrypto -lpthread -lisal -o api_client
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uiw_verbs.h"

#define GREETING "uiw-example"
#define TEXT	 "hello from the client, placed by an RDMA Write"
#define MSG_SIZE 64
#define BUF_SIZE 4096
#define WAIT_MS	 10000

enum { WR_WRITE = 1, WR_SEND, WR_RECV, WR_READ };

/* One registered buffer: [0, 64) receive, [64, 128) send, [128, ...) data */
static uint8_t buf[BUF_SIZE];
#define RECV_BUF (buf)
#define SEND_BUF (buf + MSG_SIZE)
#define DATA_BUF (buf + 2 * MSG_SIZE)
#define READ_BUF (buf + BUF_SIZE / 2)

static int fail(const char *what, int err)
{
	fprintf(stderr, "api_client: %s: %s\n", what, strerror(-err));
	return 1;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Busy-poll @cq until the completion of @wr_id has come and copy it to
 * *@wc.  Completions of the send and receive queues share the CQ and may
 * come in either order, so each is kept by wr_id.  Any error status fails.
 */
static int wait_wr(struct uiw_cq *cq, uint64_t wr_id, struct uiw_wc *wc)
{
	static struct uiw_wc done[WR_READ + 1];
	static int seen[WR_READ + 1];
	uint64_t end = now_ms() + WAIT_MS;

	while (!seen[wr_id] && now_ms() < end) {
		struct uiw_wc c;
		int n = uiw_poll_cq(cq, 1, &c);

		if (n < 0)
			return n; /* -EOVERFLOW: completions were lost */
		if (n == 0) {
			struct timespec pause = {0, 100000};

			nanosleep(&pause, NULL);
			continue;
		}
		if (c.status != UIW_WC_SUCCESS || c.wr_id > WR_READ) {
			fprintf(stderr, "api_client: WR %llu failed: status %d",
				(unsigned long long)c.wr_id, c.status);
			if (c.wc_flags & UIW_WC_TERM)
				fprintf(stderr, ", TERMINATE %u/%u/%u", c.term_layer, c.term_etype,
					c.term_ecode);
			fprintf(stderr, "\n");
			return -EIO;
		}
		done[c.wr_id] = c;
		seen[c.wr_id] = 1;
	}
	if (!seen[wr_id])
		return -ETIMEDOUT;
	*wc = done[wr_id];
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	uint16_t port = argc > 2 ? (uint16_t)atoi(argv[2]) : 7471;
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_mr *mr;
	struct uiw_cm_id *id;
	struct uiw_qp_init_attr qa = {0};
	struct uiw_qp_attr attr;
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	uint64_t raddr;
	uint32_t rkey, rlen, len = (uint32_t)strlen(TEXT);
	int ret;

	/* 1. Objects: context (progress thread), PD, CQ, QP, one region. */
	ret = uiw_open_context(&ctx, NULL);
	if (ret)
		return fail("uiw_open_context", ret);
	if ((ret = uiw_alloc_pd(ctx, &pd)) || (ret = uiw_create_cq(ctx, 16, NULL, NULL, &cq)))
		return fail("PD or CQ", ret);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if ((ret = uiw_create_qp(pd, &qa, &qp)))
		return fail("uiw_create_qp", ret);
	if ((ret = uiw_reg_mr(pd, buf, sizeof(buf), UIW_ACCESS_LOCAL_WRITE, &mr)))
		return fail("uiw_reg_mr", ret);

	/* 2. The server's answer is a Send: post its receive before connecting. */
	{
		struct uiw_sge sge = {(uintptr_t)RECV_BUF, MSG_SIZE, mr->lkey};
		struct uiw_recv_wr rwr = {.wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1};

		if ((ret = uiw_post_recv(qp, &rwr, NULL)))
			return fail("uiw_post_recv", ret);
	}

	/* 3. Connect: name resolution, TCP and the MPA exchange in one call. */
	{
		struct uiw_conn_param param = {.private_data = GREETING,
					       .private_data_len = sizeof(GREETING) - 1};

		if ((ret = uiw_create_id(ctx, NULL, &id)))
			return fail("uiw_create_id", ret);
		if ((ret = uiw_connect(id, host, port, qp, &param)))
			return fail("uiw_connect", ret);
	}
	ret = uiw_get_cm_event(ctx, &ev, WAIT_MS);
	if (ret)
		return fail("waiting for the connection", ret);
	switch (ev.event) {
	case UIW_CM_EVENT_ESTABLISHED:
		break;
	case UIW_CM_EVENT_REJECTED:
		fprintf(stderr, "api_client: rejected: \"%.*s\"\n", (int)ev.private_data_len,
			(const char *)ev.private_data);
		return 1;
	default: /* UNREACHABLE (TCP: timed out, no route) or CONNECT_ERROR (MPA) */
		fprintf(stderr, "api_client: %s: %s\n", uiw_event_str(ev.event),
			strerror(-ev.status));
		return 1;
	}
	if (ev.private_data_len != 16) {
		fprintf(stderr, "api_client: unexpected private data (%u octets)\n",
			ev.private_data_len);
		return 1;
	}
	raddr = get_be(ev.private_data, 8);
	rkey = (uint32_t)get_be(ev.private_data + 8, 4);
	rlen = (uint32_t)get_be(ev.private_data + 12, 4);
	if (len > rlen)
		return fail("the server's region is too small", -EMSGSIZE);
	if ((ret = uiw_query_qp(qp, &attr)))
		return fail("uiw_query_qp", ret);
	printf("client: connected; region of %u octets, STag %#x; IRD %u ORD %u\n", (unsigned)rlen,
	       (unsigned)rkey, attr.ird, attr.ord);

	/* 4. RDMA Write the text (unsignaled), then Send its length.  RDMAP
	 *    delivers the Send after the Write is placed. */
	{
		struct uiw_sge wsge = {(uintptr_t)DATA_BUF, len, mr->lkey};
		struct uiw_sge ssge = {(uintptr_t)SEND_BUF, 4, mr->lkey};
		struct uiw_send_wr send = {.wr_id = WR_SEND,
					   .sg_list = &ssge,
					   .num_sge = 1,
					   .opcode = UIW_WR_SEND,
					   .send_flags = UIW_SEND_SIGNALED};
		struct uiw_send_wr write = {.wr_id = WR_WRITE,
					    .next = &send,
					    .sg_list = &wsge,
					    .num_sge = 1,
					    .opcode = UIW_WR_RDMA_WRITE};
		struct uiw_send_wr *bad;

		memcpy(DATA_BUF, TEXT, len);
		put_be32(SEND_BUF, len);
		write.wr.rdma.remote_addr = raddr;
		write.wr.rdma.rkey = rkey;
		if ((ret = uiw_post_send(qp, &write, &bad)))
			return fail(bad == &write ? "posting the Write" : "posting the Send", ret);
	}
	if ((ret = wait_wr(cq, WR_SEND, &wc)))
		return fail("the Send", ret);
	if ((ret = wait_wr(cq, WR_RECV, &wc)))
		return fail("waiting for the server's Send", ret);
	if (wc.byte_len != 4 || get_be(RECV_BUF, 4) != len) {
		fprintf(stderr, "api_client: unexpected answer\n");
		return 1;
	}

	/* 5. RDMA Read the region back. */
	{
		struct uiw_sge sge = {(uintptr_t)READ_BUF, len, mr->lkey};
		struct uiw_send_wr rd = {.wr_id = WR_READ,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = UIW_WR_RDMA_READ,
					 .send_flags = UIW_SEND_SIGNALED};

		rd.wr.rdma.remote_addr = raddr;
		rd.wr.rdma.rkey = rkey;
		if ((ret = uiw_post_send(qp, &rd, NULL)))
			return fail("posting the Read", ret);
	}
	if ((ret = wait_wr(cq, WR_READ, &wc)))
		return fail("the Read", ret);
	for (uint32_t i = 0; i < len; i++) {
		if (READ_BUF[i] != (uint8_t)toupper((unsigned char)TEXT[i])) {
			fprintf(stderr, "api_client: octet %u read back wrong\n", (unsigned)i);
			return 1;
		}
	}
	printf("client: read back \"%.*s\"\n", (int)len, (const char *)READ_BUF);

	/* 6. Graceful close: both sides get DISCONNECTED. */
	if ((ret = uiw_disconnect(id)))
		return fail("uiw_disconnect", ret);
	ret = uiw_get_cm_event(ctx, &ev, WAIT_MS);
	if (ret || ev.event != UIW_CM_EVENT_DISCONNECTED) {
		fprintf(stderr, "api_client: no DISCONNECTED (%d)\n", ret);
		return 1;
	}
	printf("client: disconnected\n");

	/* 7. Tear down: the id before the QP, the context last. */
	if ((ret = uiw_destroy_id(id)) || (ret = uiw_destroy_qp(qp)) || (ret = uiw_dereg_mr(mr)) ||
	    (ret = uiw_destroy_cq(cq)) || (ret = uiw_dealloc_pd(pd)) ||
	    (ret = uiw_close_context(ctx)))
		return fail("teardown", ret);
	return 0;
}
