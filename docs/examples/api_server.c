/* SPDX-License-Identifier: MIT */
/*
 * api_server - server half of the minimal uiwarp example (docs/API.md).
 *
 *   api_server [PORT]        listen on every address, PORT (default 7471)
 *
 * Serves one client, then exits:
 *  1. a connection request whose private data is the greeting
 *     "uiw-example" is accepted; others are rejected;
 *  2. the MPA Reply's private data announces a 4 KiB region that the client
 *     may RDMA Write and RDMA Read: address (8 octets), STag (4), length (4),
 *     big-endian;
 *  3. the client RDMA Writes a text into the region, then Sends a 4-octet
 *     length; the server upper-cases the text in place and Sends the length
 *     back;
 *  4. the client RDMA Reads the region back and disconnects.
 *
 * It waits for completions on a completion channel (poll(2) on its fd), as
 * a server that sleeps between requests would.  Build (from the top folder):
 *
 *   cc -Wall -Wextra -Iverbs-shim docs/examples/api_server.c build/libuiw.a \
 *      -luring -lcrypto -lpthread -lisal -o api_server
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uiw_verbs.h"

#define GREETING     "uiw-example"
#define REGION_SIZE  4096
#define MSG_SIZE     64
#define WAIT_MS	     10000
#define MAX_REJECTED 16

enum { WR_RECV = 1, WR_REPLY = 2 };

/* Registered memory: the region peers may access, and our message buffers. */
static uint8_t region[REGION_SIZE];
static uint8_t msgs[2 * MSG_SIZE]; /* [0, 64): receive, [64, 128): send */

static int fail(const char *what, int err)
{
	fprintf(stderr, "api_server: %s: %s\n", what, strerror(-err));
	return 1;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The next completion of @cq, sleeping on @ch in between: poll, arm, poll
 * again (a completion may have come before the arming), then wait for the
 * event, take it and acknowledge it.  0, -ETIMEDOUT, or another -errno.
 */
static int wait_wc(struct uiw_comp_channel *ch, struct uiw_cq *cq, struct uiw_wc *wc)
{
	for (;;) {
		struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
		struct uiw_cq *ev_cq;
		void *ev_ctx;
		int n, ret;

		n = uiw_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		ret = uiw_req_notify_cq(cq, 0);
		if (ret)
			return ret;
		n = uiw_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		n = poll(&pfd, 1, WAIT_MS);
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0)
			return -errno;
		ret = uiw_get_cq_event(ch, &ev_cq, &ev_ctx);
		if (ret)
			return ret;
		uiw_ack_cq_events(ev_cq, 1);
	}
}

/* The next CM event of @ctx; rejects connection requests from other clients. */
static int next_event(struct uiw_context *ctx, struct uiw_cm_event *ev, struct uiw_cm_id **rejected,
		      int *nrej)
{
	for (;;) {
		int ret = uiw_get_cm_event(ctx, ev, WAIT_MS * 6);

		if (ret)
			return ret;
		if (ev->event != UIW_CM_EVENT_CONNECT_REQUEST || !rejected)
			return 0;
		if (ev->private_data_len == strlen(GREETING) &&
		    !memcmp(ev->private_data, GREETING, strlen(GREETING)))
			return 0;
		printf("server: rejecting a client with another greeting\n");
		ret = uiw_reject(ev->id, "bad greeting", 12);
		if (ret)
			fprintf(stderr, "api_server: uiw_reject: %s\n", strerror(-ret));
		/* Destroying the id at once could close TCP before the Reject
		 * leaves: keep it until exit (or destroy it now if there are
		 * too many). */
		if (*nrej < MAX_REJECTED)
			rejected[(*nrej)++] = ev->id;
		else
			uiw_destroy_id(ev->id);
	}
}

int main(int argc, char **argv)
{
	uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 7471;
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_comp_channel *ch;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_mr *region_mr, *msg_mr;
	struct uiw_cm_id *listen_id, *conn_id, *rejected[MAX_REJECTED];
	struct uiw_qp_init_attr qa = {0};
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	uint8_t announce[16];
	uint32_t len;
	int nrej = 0, ret;

	/* 1. Objects: context (progress thread), PD, channel, CQ, QP, memory. */
	ret = uiw_open_context(&ctx, NULL);
	if (ret)
		return fail("uiw_open_context", ret);
	if ((ret = uiw_alloc_pd(ctx, &pd)) || (ret = uiw_create_comp_channel(ctx, &ch)) ||
	    (ret = uiw_create_cq(ctx, 16, NULL, ch, &cq)))
		return fail("PD, channel or CQ", ret);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = uiw_create_qp(pd, &qa, &qp);
	if (ret)
		return fail("uiw_create_qp", ret);
	ret = uiw_reg_mr(pd, region, sizeof(region),
			 UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ,
			 &region_mr);
	if (ret)
		return fail("uiw_reg_mr (region)", ret);
	ret = uiw_reg_mr(pd, msgs, sizeof(msgs), UIW_ACCESS_LOCAL_WRITE, &msg_mr);
	if (ret)
		return fail("uiw_reg_mr (messages)", ret);

	/* 2. A receive must be posted before the peer's Send can arrive:
	 *    iWARP has no receiver-not-ready retry. */
	{
		struct uiw_sge sge = {(uintptr_t)msgs, MSG_SIZE, msg_mr->lkey};
		struct uiw_recv_wr rwr = {.wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1};

		ret = uiw_post_recv(qp, &rwr, NULL);
		if (ret)
			return fail("uiw_post_recv", ret);
	}

	/* 3. Listen and take one acceptable request. */
	if ((ret = uiw_create_id(ctx, NULL, &listen_id)) ||
	    (ret = uiw_listen(listen_id, NULL, port, 8)))
		return fail("uiw_listen", ret);
	printf("server: listening on port %u\n", uiw_get_port(listen_id));
	fflush(stdout);
	ret = next_event(ctx, &ev, rejected, &nrej);
	if (ret)
		return fail("waiting for a connection request", ret);
	if (ev.event != UIW_CM_EVENT_CONNECT_REQUEST) {
		fprintf(stderr, "api_server: unexpected %s\n", uiw_event_str(ev.event));
		return 1;
	}
	conn_id = ev.id; /* ours now: answer it and destroy it */

	/* 4. Accept, announcing the region in the Reply's private data. */
	put_be(announce, (uintptr_t)region, 8);
	put_be(announce + 8, region_mr->rkey, 4);
	put_be(announce + 12, sizeof(region), 4);
	{
		struct uiw_conn_param param = {.private_data = announce,
					       .private_data_len = sizeof(announce)};

		ret = uiw_accept(conn_id, qp, &param);
		if (ret)
			return fail("uiw_accept", ret);
	}
	ret = next_event(ctx, &ev, rejected, &nrej);
	if (ret || ev.event != UIW_CM_EVENT_ESTABLISHED || ev.id != conn_id) {
		fprintf(stderr, "api_server: no ESTABLISHED (%d)\n", ret);
		return 1;
	}
	printf("server: connection established\n");

	/* 5. The client's Send arrives after its RDMA Write was placed. */
	ret = wait_wc(ch, cq, &wc);
	if (ret)
		return fail("waiting for the client's Send", ret);
	if (wc.status != UIW_WC_SUCCESS || wc.opcode != UIW_WC_RECV || wc.byte_len != 4) {
		fprintf(stderr, "api_server: bad receive: status %d, %u octets\n", wc.status,
			wc.byte_len);
		return 1;
	}
	len = get_be32(msgs);
	if (len == 0 || len > sizeof(region)) {
		fprintf(stderr, "api_server: bad length %u\n", (unsigned)len);
		return 1;
	}
	printf("server: the client wrote \"%.*s\"\n", (int)len, (const char *)region);
	for (uint32_t i = 0; i < len; i++)
		region[i] = (uint8_t)toupper(region[i]);

	/* 6. Answer with a Send of the length (signaled, so we see it leave). */
	{
		struct uiw_sge sge = {(uintptr_t)(msgs + MSG_SIZE), 4, msg_mr->lkey};
		struct uiw_send_wr swr = {.wr_id = WR_REPLY,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = UIW_WR_SEND,
					  .send_flags = UIW_SEND_SIGNALED};

		put_be(msgs + MSG_SIZE, len, 4);
		ret = uiw_post_send(qp, &swr, NULL);
		if (ret)
			return fail("uiw_post_send", ret);
	}
	ret = wait_wc(ch, cq, &wc);
	if (ret || wc.status != UIW_WC_SUCCESS || wc.wr_id != WR_REPLY) {
		fprintf(stderr, "api_server: reply failed (%d, status %d)\n", ret, wc.status);
		return 1;
	}

	/* 7. The client Reads the region back and disconnects. */
	ret = next_event(ctx, &ev, rejected, &nrej);
	if (ret || ev.event != UIW_CM_EVENT_DISCONNECTED || ev.id != conn_id) {
		fprintf(stderr, "api_server: no DISCONNECTED (%d)\n", ret);
		return 1;
	}
	printf("server: client disconnected\n");

	/* 8. Tear down: ids before the QP (a QP is busy while its connection
	 *    lives), then everything else, the context last. */
	if ((ret = uiw_destroy_id(conn_id)) || (ret = uiw_destroy_id(listen_id)))
		return fail("uiw_destroy_id", ret);
	while (nrej > 0)
		uiw_destroy_id(rejected[--nrej]);
	if ((ret = uiw_destroy_qp(qp)) || (ret = uiw_dereg_mr(region_mr)) ||
	    (ret = uiw_dereg_mr(msg_mr)) || (ret = uiw_destroy_cq(cq)) ||
	    (ret = uiw_destroy_comp_channel(ch)) || (ret = uiw_dealloc_pd(pd)) ||
	    (ret = uiw_close_context(ctx)))
		return fail("teardown", ret);
	return 0;
}
