/* SPDX-License-Identifier: MIT */
/*
 * rdma_limits - find uiwarp's limits by asking uiwarp, for tests/sh/compat.sh,
 * which compares them with what ibv_devinfo -v shows of uiw0 through
 * libuiw-rdma.  Each is probed through the uiw_* API, not read from a
 * constant:
 *   max_sge         the largest max_send_sge (and max_recv_sge) uiw_create_qp()
 *                   accepts
 *   max_qp_rd_atom  the largest IRD (and ORD) uiw_create_qp() accepts
 *   max_inline      the largest max_inline_data uiw_create_qp() accepts
 *   max_mr          how many regions a context opened with max_mr 0 registers
 *                   before -ENOSPC (table full)
 * Prints "NAME VALUE" lines.  Exit 0, or 2 when set-up fails or a bound is
 * not found (something below the largest probed value must be refused).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uiw_verbs.h"

static struct uiw_pd *pd;
static struct uiw_cq *cq;

/* 0 when uiw_create_qp() accepts these, else its error */
static int try_qp(unsigned sge, unsigned inl, unsigned ird)
{
	struct uiw_qp_init_attr a;
	struct uiw_qp *qp;
	int ret;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = 1;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = sge;
	a.cap.max_recv_sge = sge;
	a.cap.max_inline_data = inl;
	a.ird = (uint16_t)ird;
	a.ord = (uint16_t)ird;
	ret = uiw_create_qp(pd, &a, &qp);
	if (!ret)
		uiw_destroy_qp(qp);
	return ret;
}

/* the largest v in [lo, hi] that ok(v) accepts, given ok(lo); -1 if hi is too */
static long largest(int (*ok)(unsigned), unsigned lo, unsigned hi)
{
	if (!ok(lo))
		return -2;
	if (ok(hi))
		return -1;
	while (hi - lo > 1) { /* ok(lo), !ok(hi) */
		unsigned mid = lo + (hi - lo) / 2;

		if (ok(mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int ok_sge(unsigned v) { return try_qp(v, 0, 1) == 0; }
static int ok_inline(unsigned v) { return try_qp(1, v, 1) == 0; }
static int ok_ird(unsigned v) { return try_qp(1, 0, v) == 0; }

int main(void)
{
	struct uiw_context *ctx;
	struct uiw_context_attr ca;
	static char buf[1];
	struct uiw_mr **mrs;
	long sge, inl, ird, n = 0;
	int ret;

	memset(&ca, 0, sizeof(ca));
	ca.mode = UIW_CTX_POLLED;
	if (uiw_open_context(&ctx, &ca) || uiw_alloc_pd(ctx, &pd) ||
	    uiw_create_cq(ctx, 4, NULL, NULL, &cq)) {
		fprintf(stderr, "rdma_limits: set-up failed\n");
		return 2;
	}
	sge = largest(ok_sge, 1, 1024);
	inl = largest(ok_inline, 0, 1u << 24);
	ird = largest(ok_ird, 1, UIW_IRD_ORD_ZERO - 1); /* 0xffff itself: an IRD of 0 */
	/* max_mr: register 1-octet regions until the table is full */
	mrs = calloc(1u << 20, sizeof(*mrs));
	if (!mrs)
		return 2;
	while (n < (1L << 20) && !(ret = uiw_reg_mr(pd, buf, 1, UIW_ACCESS_LOCAL_WRITE, &mrs[n])))
		n++;
	if (n == (1L << 20) || ret != -ENOSPC)
		n = -1;
	for (long i = 0; i < n; i++)
		uiw_dereg_mr(mrs[i]);
	free(mrs);
	uiw_destroy_cq(cq);
	uiw_dealloc_pd(pd);
	uiw_close_context(ctx);
	printf("max_sge %ld\nmax_qp_rd_atom %ld\nmax_inline %ld\nmax_mr %ld\n", sge, ird, inl, n);
	return (sge < 0 || inl < 0 || ird < 0 || n < 0) ? 2 : 0;
}
