/* SPDX-License-Identifier: MIT */
/*
 * Mid-operation family (memory lifetime): for every peer operation
 * (inbound Write, Send, Read Response, TERMINATE; outbound Write, Send,
 * Read Response) stopped at every octet of its FPDUs (boundaries and
 * inside), every application action (modify to error, error then
 * deregister, deregister, invalidate, graceful close, destroy), with and
 * without the engine's read or send in flight across the action, MPA
 * markers off and on: released memory is PROT_NONE, so a late access by
 * the stack crashes the test; every work request completes exactly once,
 * none successfully after the QP was failed, none while I/O was in flight,
 * and a deregistration never waits on a QP that has no I/O in flight.
 * The harness is tests/midop.c (shared with the fuzz target fuzz_midop).
 */
#include "tests.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "midop.h"
#include "rdmap_pair.h"

/* A late access to released memory is a SIGSEGV: say which case it was,
 * then let the fault happen again under the previous handler (ASan's, or
 * the default one that Check reports). */
static char cur_case[256];
static struct sigaction old_segv;

static void on_segv(int sig)
{
	static const char hdr[] = "midop: SIGSEGV (released memory touched?) in case: ";

	(void)sig;
	if (write(2, hdr, sizeof(hdr) - 1) < 0 || write(2, cur_case, strlen(cur_case)) < 0 ||
	    write(2, "\n", 1) < 0) {
		/* nothing more to say */
	}
	sigaction(SIGSEGV, &old_segv, NULL);
}

static void catch_segv(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
}

/* loop index: op * 4 + markers * 2 + inflight */
#define NCFG (MO_NOPS * 4)

static void run_all(int idx, size_t msg, size_t stride)
{
	struct mo_case c = {0};
	char why[256];
	size_t len, runs = 0;

	c.op = (enum mo_op)(idx / 4);
	c.markers = (idx / 2) & 1;
	c.inflight = idx & 1;
	/* the engine's reads: lend/ack with its look-ahead, small (large FPDUs)
	 * or large (copying: small FPDUs) */
	c.lend = c.markers ? 3 : 2;
	c.msg = (uint32_t)msg;
	c.seed = tu_seed();
	catch_segv();
	len = mo_wire_len(&c);
	/* several FPDUs (a TERMINATE is one of 28 octets) */
	ck_assert_msg(len > (c.op == MO_TERM_IN ? 20 : (size_t)MO_FPDU_MAX),
		      "%s: the operation takes %zu octets", mo_op_name(c.op), len);
	for (int a = 0; a < MO_NACTS; a++) {
		c.act = (enum mo_act)a;
		for (size_t split = 0; split <= len; split += stride) {
			c.split = split;
			/* in flight: the read or send moves 1 octet, some, or all lent */
			c.io_len = c.inflight ? (split % 3 == 0 ? 1 : split % 3 == 1 ? 100 : 0) : 0;
			c.chunk = split % 5 == 0 ? 0 : 1 + split % 37;
			snprintf(cur_case, sizeof(cur_case), "%s, %s, split %zu, markers %d, in flight %d",
				 mo_op_name(c.op), mo_act_name(c.act), split, c.markers, c.inflight);
			ck_assert_msg(mo_run(&c, why, sizeof(why)) == 0,
				      "%s, %s, split %zu of %zu, markers %d, in flight %d (io %zu): %s",
				      mo_op_name(c.op), mo_act_name(c.act), split, len, c.markers,
				      c.inflight, c.io_len, why);
			runs++;
		}
	}
	ck_assert_uint_gt(runs, 0);
}

/* Every split octet of a three-FPDU operation. */
START_TEST(every_split)
{
	run_all(_i, 700, 1);
}
END_TEST

/* A longer operation (17 FPDUs), every 61st octet. */
START_TEST(long_op)
{
	run_all(_i, 4000, 61);
}
END_TEST

/*
 * A shared receive taken by a Send that is half placed when the connection
 * fails (TCP reset): it completes once, in error (WR_FLUSH_ERR), never as a
 * success; the receive the message did not reach stays in the SRQ.
 */
START_TEST(srq_half_filled_conn_fails)
{
	struct rdmap_qp_cfg q = {.max_send_wr = 8, .max_recv_wr = 8, .ird = 4, .ord = 4};
	struct mpa_cfg ic, rc;
	struct rp_pair *p = calloc(1, sizeof(*p));
	struct rdmap_srq srq;
	static uint8_t src[800], rbuf[2][1000];
	uint8_t wire[4096];
	struct ddp_mr *smr, *rmr[2];
	struct rdmap_send_wr w = {0};
	size_t n;

	ck_assert_ptr_nonnull(p);
	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.tx_ulpdu_max = rc.tx_ulpdu_max = MO_FPDU_MAX;
	ck_assert_int_eq(rp_init(p, &ic, &rc, &q, tu_seed()), 0);
	ck_assert_int_eq(rdmap_srq_init(&srq, 4, &p->b.mem, &p->b.pd), 0);
	p->b.qp.srq = &srq; /* as rdmap_qp_set_srq() before binding */
	smr = rp_reg(&p->a, src, sizeof(src), DDP_ACC_ALL);
	for (int i = 0; i < 2; i++) {
		struct rdmap_recv_wr r = {.wr_id = 0x50 + (uint64_t)i, .num_sge = 1};

		rmr[i] = rp_reg(&p->b, rbuf[i], sizeof(rbuf[i]), DDP_ACC_LOCAL_WRITE);
		ck_assert_ptr_nonnull(rmr[i]);
		r.sge[0].addr = (uintptr_t)rbuf[i];
		r.sge[0].length = sizeof(rbuf[i]);
		r.sge[0].lkey = rmr[i]->stag;
		ck_assert_int_eq(rdmap_srq_post(&srq, &r), 0);
	}
	w.wr_id = 1;
	w.opcode = RDMAP_WR_SEND;
	w.num_sge = 1;
	w.sge[0].addr = (uintptr_t)src;
	w.sge[0].length = sizeof(src);
	w.sge[0].lkey = smr->stag;
	ck_assert_int_eq(rdmap_post_send(&p->a.qp, &w), 0);
	n = rp_capture(p, &p->a, wire, sizeof(wire));
	ck_assert_uint_gt(n, 2 * MO_FPDU_MAX);
	/* the first FPDU and a half: the message owns the first receive */
	ck_assert_int_eq(rp_inject(p, &p->b, wire, MO_FPDU_MAX + 100), MO_FPDU_MAX + 100);
	ck_assert_int_eq(p->b.qp.srq_cur_valid, 1);
	ck_assert_int_eq(p->b.nrwc, 0);
	/* TCP reset under it (the engine's id_conn_failed) */
	rdmap_qp_conn_failed(&p->b.qp, -ECONNRESET);
	ck_assert_int_eq(p->b.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(p->b.nrwc, 1);
	ck_assert_uint_eq(p->b.rwc[0].wr_id, 0x50);
	ck_assert_int_eq(p->b.rwc[0].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(srq.count, 1); /* the other one stays the SRQ's */
	/* the rest of the message changes nothing */
	rp_inject(p, &p->b, wire + MO_FPDU_MAX + 100, n - MO_FPDU_MAX - 100);
	ck_assert_int_eq(p->b.nrwc, 1);
	rp_destroy(p);
	rdmap_srq_destroy(&srq);
	free(p);
}
END_TEST

Suite *midop_suite(void)
{
	Suite *s = suite_create("midop");
	TCase *tc = tcase_create("midop");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, every_split, 0, NCFG);
	tcase_add_loop_test(tc, long_op, 0, NCFG);
	tcase_add_test(tc, srq_half_filled_conn_fails);
	suite_add_tcase(s, tc);
	return s;
}
