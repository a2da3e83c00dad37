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

#include <stdio.h>

#include "midop.h"

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
	c.lend = !c.markers; /* both receive paths: lend/ack, and the copying deframer */
	c.msg = (uint32_t)msg;
	c.seed = tu_seed();
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

Suite *midop_suite(void)
{
	Suite *s = suite_create("midop");
	TCase *tc = tcase_create("midop");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, every_split, 0, NCFG);
	tcase_add_loop_test(tc, long_op, 0, NCFG);
	suite_add_tcase(s, tc);
	return s;
}
