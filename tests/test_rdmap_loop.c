/* SPDX-License-Identifier: MIT */
/*
 * DDP/RDMAP loop tests: two complete stacks over an in-memory wire that is
 * re-split at random.  Every opcode, sizes around the segment size and up to
 * 1 MiB, 1..6 SGEs, markers and CRC on and off, both receive paths; data
 * placed byte-exact and completions in order with the right lengths and
 * flags.
 */
#include "tests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmap_pair.h"

#define BUFSZ (1u << 20)

struct loop_cfg {
	int crc, markers, lend;
	size_t chunk;
	uint32_t emss;
};

static const struct loop_cfg cfgs[] = {
	{0, 0, 0, 0, 1460}, {1, 0, 0, 0, 1460},	   {0, 1, 0, 0, 1460},	{1, 1, 1, 0, 1460},
	{1, 0, 0, 7, 1460}, {1, 1, 1, 3000, 1460}, {0, 0, 1, 0, 65483}, {1, 1, 0, 20000, 9000},
	/* lend 2, 3: with the engine's look-ahead (1 KiB, 64 KiB) */
	{1, 0, 2, 0, 65483}, {1, 1, 2, 3000, 1460},  {0, 0, 2, 7, 1460},	{1, 0, 3, 20000, 1460},
	{1, 1, 3, 0, 65483},
};
#define NCFG (int)(sizeof(cfgs) / sizeof(cfgs[0]))

struct bufs {
	uint8_t *a_src, *a_dst, *b_src, *b_dst;
	struct ddp_mr *a_src_mr, *a_dst_mr, *b_src_mr, *b_dst_mr;
};

static void setup(struct rp_pair *p, struct bufs *b, const struct loop_cfg *lc, uint64_t seed)
{
	struct mpa_cfg ic, rc;
	struct rdmap_qp_cfg q = {
		.max_send_wr = 64, .max_recv_wr = 64, .max_inline = 64, .ird = 4, .ord = 4};

	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = lc->crc;
	ic.markers = rc.markers = lc->markers;
	ic.emss = rc.emss = lc->emss;
	ck_assert_int_eq(rp_init(p, &ic, &rc, &q, seed), 0);
	p->lend = lc->lend;
	p->max_chunk = lc->chunk;
	b->a_src = malloc(BUFSZ);
	b->a_dst = calloc(1, BUFSZ);
	b->b_src = malloc(BUFSZ);
	b->b_dst = calloc(1, BUFSZ);
	ck_assert(b->a_src && b->a_dst && b->b_src && b->b_dst);
	tu_rand_fill(&seed, b->a_src, BUFSZ);
	tu_rand_fill(&seed, b->b_src, BUFSZ);
	b->a_src_mr = rp_reg(&p->a, b->a_src, BUFSZ, DDP_ACC_LOCAL_WRITE);
	b->a_dst_mr = rp_reg(&p->a, b->a_dst, BUFSZ, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_WRITE);
	b->b_src_mr = rp_reg(&p->b, b->b_src, BUFSZ, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_READ);
	b->b_dst_mr = rp_reg(&p->b, b->b_dst, BUFSZ, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_WRITE);
	ck_assert(b->a_src_mr && b->a_dst_mr && b->b_src_mr && b->b_dst_mr);
	/* the responder may send only after the initiator's first FPDU:
	 * the tests start traffic from the initiator side (A). */
}

static void teardown(struct rp_pair *p, struct bufs *b)
{
	rp_destroy(p);
	free(b->a_src);
	free(b->a_dst);
	free(b->b_src);
	free(b->b_dst);
}

/* Split [addr, addr+len) of @mr into @nsge SGEs of uneven sizes. */
static int make_sges(struct rdmap_sge *sge, int nsge, const uint8_t *addr, size_t len,
		     const struct ddp_mr *mr, uint64_t *rng)
{
	size_t off = 0;

	if (len == 0)
		nsge = 1;
	for (int i = 0; i < nsge; i++) {
		size_t left = len - off;
		size_t n = i == nsge - 1 ? left : (left ? (size_t)(tu_rand(rng) % (left + 1)) : 0);

		sge[i].addr = (uint64_t)(uintptr_t)(addr + off);
		sge[i].length = (uint32_t)n;
		sge[i].lkey = mr->stag;
		off += n;
	}
	return nsge;
}

static size_t test_sizes(int idx, uint32_t seg, uint64_t *rng)
{
	switch (idx) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return seg - 1;
	case 3:
		return seg;
	case 4:
		return seg + 1;
	case 5:
		return BUFSZ;
	default:
		return (size_t)(tu_rand(rng) % (200 * 1024));
	}
}

#define NSIZES 9

START_TEST(write_sizes)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;

	setup(&p, &b, lc, rng);
	for (int s = 0; s < NSIZES; s++) {
		uint32_t seg = mpa_tx_mulpdu(&p.mpa.ini.c) - DDP_TAGGED_HDR_LEN;
		size_t len = test_sizes(s, seg, &rng);
		size_t off = (size_t)(tu_rand(&rng) % 64);
		struct rdmap_send_wr wr = {0};

		if (len + off > BUFSZ)
			off = 0;
		wr.wr_id = 100 + (uint64_t)s;
		wr.opcode = RDMAP_WR_WRITE;
		wr.flags = RDMAP_WR_SIGNALED;
		wr.num_sge =
			make_sges(wr.sge, 1 + s % RDMAP_MAX_SGE, b.a_src, len, b.a_src_mr, &rng);
		wr.rkey = b.b_dst_mr->stag;
		wr.remote_addr = (uint64_t)(uintptr_t)(b.b_dst + off);
		memset(b.b_dst, 0, BUFSZ);
		ck_assert_int_eq(rdmap_post_send(&p.a.qp, &wr), 0);
		rp_pump(&p);
		ck_assert_int_eq(p.a.nswc, s + 1);
		ck_assert_uint_eq(p.a.swc[s].wr_id, wr.wr_id);
		ck_assert_int_eq(p.a.swc[s].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(p.a.swc[s].opcode, RDMAP_WC_RDMA_WRITE);
		ck_assert_uint_eq(p.a.swc[s].byte_len, len);
		if (len)
			ck_assert_mem_eq(b.b_dst + off, b.a_src, len);
		/* nothing outside the target range was touched */
		for (size_t k = 0; k < off; k++)
			ck_assert_uint_eq(b.b_dst[k], 0);
		if (off + len < BUFSZ)
			ck_assert_uint_eq(b.b_dst[off + len], 0);
		ck_assert_int_eq(p.b.nrwc, 0); /* a Write completes nothing at the sink */
	}
	ck_assert_int_eq(p.a.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_RTS);
	teardown(&p, &b);
}
END_TEST

START_TEST(read_sizes)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 3 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;

	setup(&p, &b, lc, rng);
	for (int s = 0; s < NSIZES; s++) {
		uint32_t seg = mpa_tx_mulpdu(&p.mpa.rsp.c) - DDP_TAGGED_HDR_LEN;
		size_t len = test_sizes(s, seg, &rng);
		size_t off = len == BUFSZ ? 0 : (size_t)(tu_rand(&rng) % 64);
		struct rdmap_send_wr wr = {0};

		wr.wr_id = 200 + (uint64_t)s;
		wr.opcode = RDMAP_WR_READ;
		wr.flags = RDMAP_WR_SIGNALED;
		wr.num_sge = 1;
		wr.sge[0].addr = (uint64_t)(uintptr_t)b.a_dst;
		wr.sge[0].length = (uint32_t)len;
		wr.sge[0].lkey = b.a_dst_mr->stag;
		wr.rkey = b.b_src_mr->stag;
		wr.remote_addr = (uint64_t)(uintptr_t)(b.b_src + off);
		memset(b.a_dst, 0, BUFSZ);
		ck_assert_int_eq(rdmap_post_send(&p.a.qp, &wr), 0);
		rp_pump(&p);
		ck_assert_int_eq(p.a.nswc, s + 1);
		ck_assert_uint_eq(p.a.swc[s].wr_id, wr.wr_id);
		ck_assert_int_eq(p.a.swc[s].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(p.a.swc[s].opcode, RDMAP_WC_RDMA_READ);
		ck_assert_uint_eq(p.a.swc[s].byte_len, len);
		if (len)
			ck_assert_mem_eq(b.a_dst, b.b_src + off, len);
		if (len < BUFSZ)
			ck_assert_uint_eq(b.a_dst[len], 0);
	}
	ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_RTS);
	teardown(&p, &b);
}
END_TEST

static const enum rdmap_wr_opcode send_ops[] = {RDMAP_WR_SEND, RDMAP_WR_SEND_INV};

START_TEST(send_sizes)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 5 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;

	setup(&p, &b, lc, rng);
	for (int s = 0; s < NSIZES; s++) {
		uint32_t seg = mpa_tx_mulpdu(&p.mpa.ini.c) - DDP_UNTAGGED_HDR_LEN;
		size_t len = test_sizes(s, seg, &rng);
		struct rdmap_send_wr wr = {0};
		struct rdmap_recv_wr rwr = {0};
		struct ddp_mr *inv = NULL;
		uint8_t scratch[4];
		int se = s & 1;

		/* receive buffer: the whole of b_dst in 1..6 SGEs */
		rwr.wr_id = 300 + (uint64_t)s;
		rwr.num_sge = make_sges(rwr.sge, 1 + (s + 2) % RDMAP_MAX_SGE, b.b_dst, BUFSZ,
					b.b_dst_mr, &rng);
		ck_assert_int_eq(rdmap_post_recv(&p.b.qp, &rwr), 0);
		wr.wr_id = 400 + (uint64_t)s;
		wr.opcode = send_ops[s % 2 == 0 ? 0 : (s % 4 == 1 ? 1 : 0)];
		wr.flags = RDMAP_WR_SIGNALED | (se ? RDMAP_WR_SOLICITED : 0);
		wr.num_sge =
			make_sges(wr.sge, 1 + s % RDMAP_MAX_SGE, b.a_src, len, b.a_src_mr, &rng);
		if (wr.opcode == RDMAP_WR_SEND_INV) {
			inv = rp_reg(&p.b, scratch, sizeof(scratch), DDP_ACC_LOCAL_WRITE);
			ck_assert_ptr_nonnull(inv);
			wr.inv_stag = inv->stag;
		}
		memset(b.b_dst, 0, BUFSZ);
		ck_assert_int_eq(rdmap_post_send(&p.a.qp, &wr), 0);
		rp_pump(&p);
		ck_assert_int_eq(p.a.nswc, s + 1);
		ck_assert_int_eq(p.a.swc[s].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(p.a.swc[s].opcode, RDMAP_WC_SEND);
		ck_assert_int_eq(p.b.nrwc, s + 1);
		ck_assert_uint_eq(p.b.rwc[s].wr_id, rwr.wr_id);
		ck_assert_int_eq(p.b.rwc[s].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(p.b.rwc[s].opcode, RDMAP_WC_RECV);
		ck_assert_uint_eq(p.b.rwc[s].byte_len, len);
		ck_assert_int_eq(!!(p.b.rwc[s].flags & RDMAP_WC_F_SOLICITED), se);
		if (inv) {
			ck_assert(p.b.rwc[s].flags & RDMAP_WC_F_WITH_INV);
			ck_assert_uint_eq(p.b.rwc[s].inv_stag, inv->stag);
			ck_assert_int_eq(inv->valid, 0);
			ddp_mr_dereg(&p.b.mem, inv);
		}
		if (len)
			ck_assert_mem_eq(b.b_dst, b.a_src, len);
		if (len < BUFSZ)
			ck_assert_uint_eq(b.b_dst[len], 0);
	}
	teardown(&p, &b);
}
END_TEST

/* Both directions at once, mixed opcodes, many outstanding: completions in
 * posting order (RFC 5040 §5.5 rule 15), Reads beyond ORD queued locally. */
START_TEST(mixed_bidirectional)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 11 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;
	const int n = 40;
	size_t recv_len[40];
	int nrecv = 0;

	setup(&p, &b, lc, rng);
	/* open the responder's transmit gate first */
	{
		struct rdmap_send_wr w = {0};

		w.opcode = RDMAP_WR_WRITE;
		w.rkey = b.b_dst_mr->stag;
		w.remote_addr = (uint64_t)(uintptr_t)b.b_dst;
		ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
		rp_pump(&p);
	}
	for (int i = 0; i < n; i++) {
		struct rdmap_recv_wr r = {0};

		r.wr_id = 1000 + (uint64_t)i;
		r.num_sge = 1;
		r.sge[0].addr = (uint64_t)(uintptr_t)(b.a_dst + (size_t)i * 8192);
		r.sge[0].length = 8192;
		r.sge[0].lkey = b.a_dst_mr->stag;
		ck_assert_int_eq(rdmap_post_recv(&p.a.qp, &r), 0);
	}
	for (int i = 0; i < n; i++) {
		struct rdmap_send_wr w = {0};
		size_t len = (size_t)(tu_rand(&rng) % 8192);
		int kind = (int)(tu_rand(&rng) % 3);

		w.wr_id = (uint64_t)i;
		w.flags = RDMAP_WR_SIGNALED;
		w.num_sge = 1;
		if (kind == 0) { /* A reads from B */
			w.opcode = RDMAP_WR_READ;
			w.sge[0].addr =
				(uint64_t)(uintptr_t)(b.a_dst + 512 * 1024 + (size_t)i * 8192);
			w.sge[0].length = (uint32_t)len;
			w.sge[0].lkey = b.a_dst_mr->stag;
			w.rkey = b.b_src_mr->stag;
			w.remote_addr = (uint64_t)(uintptr_t)(b.b_src + (size_t)i * 8192);
			ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
		} else if (kind == 1) { /* A writes to B */
			w.opcode = RDMAP_WR_WRITE;
			w.sge[0].addr = (uint64_t)(uintptr_t)(b.a_src + (size_t)i * 8192);
			w.sge[0].length = (uint32_t)len;
			w.sge[0].lkey = b.a_src_mr->stag;
			w.rkey = b.b_dst_mr->stag;
			w.remote_addr = (uint64_t)(uintptr_t)(b.b_dst + (size_t)i * 8192);
			ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
		} else { /* B sends to A */
			w.opcode = RDMAP_WR_SEND;
			w.sge[0].addr = (uint64_t)(uintptr_t)(b.b_src + (size_t)i * 8192);
			w.sge[0].length = (uint32_t)len;
			w.sge[0].lkey = b.b_src_mr->stag;
			ck_assert_int_eq(rdmap_post_send(&p.b.qp, &w), 0);
			recv_len[nrecv++] = len;
		}
		if (tu_rand(&rng) % 4 == 0)
			rp_pump(&p);
	}
	rp_pump(&p);
	ck_assert_int_eq(p.a.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(p.a.nswc + p.b.nswc, n);
	/* in posting order on each side */
	for (int i = 1; i < p.a.nswc; i++)
		ck_assert_uint_gt(p.a.swc[i].wr_id, p.a.swc[i - 1].wr_id);
	for (int i = 0; i < p.a.nswc; i++) {
		int i0 = (int)p.a.swc[i].wr_id;

		ck_assert_int_eq(p.a.swc[i].status, RDMAP_WC_SUCCESS);
		if (p.a.swc[i].opcode == RDMAP_WC_RDMA_READ)
			ck_assert_mem_eq(b.a_dst + 512 * 1024 + (size_t)i0 * 8192,
					 b.b_src + (size_t)i0 * 8192, p.a.swc[i].byte_len);
		else
			ck_assert_mem_eq(b.b_dst + (size_t)i0 * 8192, b.a_src + (size_t)i0 * 8192,
					 p.a.swc[i].byte_len);
	}
	ck_assert_int_eq(p.a.nrwc, nrecv);
	for (int i = 0; i < nrecv; i++) {
		int i0 = (int)p.b.swc[i].wr_id;

		ck_assert_uint_eq(p.a.rwc[i].byte_len, recv_len[i]);
		ck_assert_mem_eq(b.a_dst + (size_t)i * 8192, b.b_src + (size_t)i0 * 8192,
				 recv_len[i]);
	}
	teardown(&p, &b);
}
END_TEST

/* Unsignaled work completes silently but keeps order; inline sends; local
 * invalidate; fence behind a Read. */
START_TEST(unsignaled_inline_inv_fence)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 13 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;
	struct rdmap_send_wr w;
	struct rdmap_recv_wr r = {0};
	uint8_t small[48];

	setup(&p, &b, lc, rng);
	r.wr_id = 77;
	r.num_sge = 1;
	r.sge[0].addr = (uint64_t)(uintptr_t)b.b_dst;
	r.sge[0].length = 4096;
	r.sge[0].lkey = b.b_dst_mr->stag;
	ck_assert_int_eq(rdmap_post_recv(&p.b.qp, &r), 0);
	/* 1: unsignaled Write */
	memset(&w, 0, sizeof(w));
	w.wr_id = 1;
	w.opcode = RDMAP_WR_WRITE;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)b.a_src;
	w.sge[0].length = 1000;
	w.sge[0].lkey = b.a_src_mr->stag;
	w.rkey = b.b_dst_mr->stag;
	w.remote_addr = (uint64_t)(uintptr_t)(b.b_dst + 8192);
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	/* 2: signaled Read */
	memset(&w, 0, sizeof(w));
	w.wr_id = 2;
	w.opcode = RDMAP_WR_READ;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)b.a_dst;
	w.sge[0].length = 5000;
	w.sge[0].lkey = b.a_dst_mr->stag;
	w.rkey = b.b_src_mr->stag;
	w.remote_addr = (uint64_t)(uintptr_t)b.b_src;
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	/* 3: fenced inline Send: must wait for the Read */
	memcpy(small, "inline payload, copied at post time............", sizeof(small));
	memset(&w, 0, sizeof(w));
	w.wr_id = 3;
	w.opcode = RDMAP_WR_SEND;
	w.flags = RDMAP_WR_SIGNALED | RDMAP_WR_INLINE | RDMAP_WR_FENCE;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)small;
	w.sge[0].length = sizeof(small);
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	memset(small, 0, sizeof(small)); /* inline data was copied */
	/* 4: local invalidate of A's sink region */
	memset(&w, 0, sizeof(w));
	w.wr_id = 4;
	w.opcode = RDMAP_WR_LOCAL_INV;
	w.flags = RDMAP_WR_SIGNALED;
	w.inv_stag = b.a_dst_mr->stag;
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	/* the fenced Send is held until the Read Response arrives */
	rdmap_qp_progress(&p.a.qp);
	ck_assert_uint_eq(p.a.qp.sq_next, p.a.qp.sq_head + 2);
	rp_pump(&p);
	ck_assert_int_eq(p.a.nswc, 3);
	ck_assert_uint_eq(p.a.swc[0].wr_id, 2);
	ck_assert_uint_eq(p.a.swc[1].wr_id, 3);
	ck_assert_uint_eq(p.a.swc[2].wr_id, 4);
	ck_assert_int_eq(p.a.swc[2].opcode, RDMAP_WC_LOCAL_INV);
	ck_assert_int_eq(p.a.swc[2].status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(b.a_dst_mr->valid, 0);
	ck_assert_mem_eq(b.b_dst + 8192, b.a_src, 1000);
	ck_assert_mem_eq(b.a_dst, b.b_src, 5000);
	ck_assert_int_eq(p.b.nrwc, 1);
	ck_assert_uint_eq(p.b.rwc[0].byte_len, 48);
	ck_assert_mem_eq(b.b_dst, "inline payload", 14);
	teardown(&p, &b);
}
END_TEST

/* More Reads than ORD: queued locally, all complete, never more than ORD
 * outstanding on the wire. */
START_TEST(ord_queues_locally)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 17 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;

	setup(&p, &b, lc, rng);
	for (int i = 0; i < 20; i++) {
		struct rdmap_send_wr w = {0};

		w.wr_id = (uint64_t)i;
		w.opcode = RDMAP_WR_READ;
		w.flags = RDMAP_WR_SIGNALED;
		w.num_sge = 1;
		w.sge[0].addr = (uint64_t)(uintptr_t)(b.a_dst + (size_t)i * 4096);
		w.sge[0].length = 4096;
		w.sge[0].lkey = b.a_dst_mr->stag;
		w.rkey = b.b_src_mr->stag;
		w.remote_addr = (uint64_t)(uintptr_t)(b.b_src + (size_t)i * 4096);
		ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	}
	rdmap_qp_progress(&p.a.qp);
	ck_assert_uint_le(p.a.qp.orq_count, 4);
	rp_pump(&p);
	ck_assert_int_eq(p.a.nswc, 20);
	for (int i = 0; i < 20; i++) {
		ck_assert_uint_eq(p.a.swc[i].wr_id, (uint64_t)i);
		ck_assert_int_eq(p.a.swc[i].status, RDMAP_WC_SUCCESS);
	}
	ck_assert_mem_eq(b.a_dst, b.b_src, 20 * 4096);
	ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_RTS);
	teardown(&p, &b);
}
END_TEST

/* Graceful close: queued work still goes out, new work is refused, and the
 * final move to ERROR flushes the receives nobody used. */
START_TEST(graceful_close)
{
	const struct loop_cfg *lc = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 19 + (uint64_t)_i;
	struct rp_pair p;
	struct bufs b;
	struct rdmap_send_wr w = {0};
	struct rdmap_recv_wr r = {0};

	setup(&p, &b, lc, rng);
	r.wr_id = 9;
	r.num_sge = 1;
	r.sge[0].addr = (uint64_t)(uintptr_t)b.a_dst;
	r.sge[0].length = 64;
	r.sge[0].lkey = b.a_dst_mr->stag;
	ck_assert_int_eq(rdmap_post_recv(&p.a.qp, &r), 0);
	w.wr_id = 1;
	w.opcode = RDMAP_WR_WRITE;
	w.flags = RDMAP_WR_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)b.a_src;
	w.sge[0].length = 100000;
	w.sge[0].lkey = b.a_src_mr->stag;
	w.rkey = b.b_dst_mr->stag;
	w.remote_addr = (uint64_t)(uintptr_t)b.b_dst;
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	ck_assert_int_eq(rdmap_qp_close(&p.a.qp), 0); /* not drained yet */
	ck_assert_int_eq(p.a.qp.state, RDMAP_QPS_CLOSING);
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), -EPIPE);
	rp_pump(&p);
	ck_assert_int_eq(rdmap_qp_close(&p.a.qp), 1);
	ck_assert_int_eq(p.a.nswc, 1);
	ck_assert_int_eq(p.a.swc[0].status, RDMAP_WC_SUCCESS);
	ck_assert_mem_eq(b.b_dst, b.a_src, 100000);
	/* TCP closes: the unused receive is flushed */
	rdmap_qp_conn_failed(&p.a.qp, -ECONNRESET);
	ck_assert_int_eq(p.a.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(p.a.nrwc, 1);
	ck_assert_uint_eq(p.a.rwc[0].wr_id, 9);
	ck_assert_int_eq(p.a.rwc[0].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(p.a.nerr, 1);
	teardown(&p, &b);
}
END_TEST

static void term_ops_complete(void *arg, int recv, const struct rdmap_wc *wc)
{
	(void)arg;
	(void)recv;
	(void)wc;
}

static const struct rdmap_ops term_ops = {.complete = term_ops_complete};

/* RFC 6581 §9.1: an initiator that cannot accept the responder's IRD "MUST
 * send a TERM message ... Error Code 6": binding the failed connection sends
 * it (2/0/6, no copied headers) and leaves the QP in ERROR. */
START_TEST(setup_terminate_sent)
{
	struct tp_pair p;
	struct mpa_cfg a, b;
	struct ddp_mem mem;
	struct ddp_pd pd;
	struct rdmap_qp qp;
	struct rdmap_qp_cfg q = {.max_send_wr = 4, .max_recv_wr = 4, .ird = 16, .ord = 16};
	uint8_t wire[256];
	size_t n;

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.crc = b.crc = 0;
	a.ord = 16;
	a.strict_ird = 1;
	ck_assert_int_eq(tp_init(&p, &a, &b, NULL, 0), 0);
	p.rsp.accept_ird = 4;
	ck_assert_int_lt(tp_handshake(&p), 0);
	ck_assert_int_eq(p.ini.c.state, MPA_S_ERROR);
	ck_assert_uint_eq(p.ini.c.term_ecode, MPA_ECODE_INSUFFICIENT_IRD);
	ck_assert_int_eq(ddp_mem_init(&mem, 16), 0);
	ddp_pd_init(&mem, &pd);
	ck_assert_int_eq(rdmap_qp_init(&qp, &q, &mem, &pd, &term_ops, NULL), 0);
	ck_assert_int_eq(rdmap_qp_bind(&qp, &p.ini.c), -ECONNABORTED);
	ck_assert_int_eq(qp.state, RDMAP_QPS_ERROR);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	/* len 22: untagged DDP header on QN 2 + 4-octet Terminate control */
	ck_assert_uint_eq(n, 2 + 18 + 4 + 4); /* no PAD: 2 + 22 is a multiple of 4 */
	ck_assert_uint_eq(wire[0], 0);
	ck_assert_uint_eq(wire[1], 22);
	ck_assert_uint_eq(wire[2], 0x41);
	ck_assert_uint_eq(wire[3], 0x47);
	ck_assert_uint_eq(wire[2 + 18], 0x20);
	ck_assert_uint_eq(wire[2 + 19], MPA_ECODE_INSUFFICIENT_IRD);
	ck_assert_uint_eq(wire[2 + 20], 0);
	rdmap_qp_destroy(&qp);
	ddp_mem_destroy(&mem);
	tp_destroy(&p);
}
END_TEST

/* A QP that serves fewer Reads than MPA announced cannot be bound. */
START_TEST(bind_ird_mismatch)
{
	struct tp_pair p;
	struct mpa_cfg a, b;
	struct ddp_mem mem;
	struct ddp_pd pd;
	struct rdmap_qp qp;
	struct rdmap_qp_cfg q = {.max_send_wr = 4, .max_recv_wr = 4, .ird = 2, .ord = 2};

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.ird = 8;
	ck_assert_int_eq(tp_init(&p, &a, &b, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(&p), 0);
	ck_assert_int_eq(ddp_mem_init(&mem, 16), 0);
	ddp_pd_init(&mem, &pd);
	ck_assert_int_eq(rdmap_qp_init(&qp, &q, &mem, &pd, &term_ops, NULL), 0);
	ck_assert_int_eq(rdmap_qp_bind(&qp, &p.ini.c), -EINVAL);
	q.ird = 8;
	rdmap_qp_destroy(&qp);
	ck_assert_int_eq(rdmap_qp_init(&qp, &q, &mem, &pd, &term_ops, NULL), 0);
	ck_assert_int_eq(rdmap_qp_bind(&qp, &p.ini.c), 0);
	rdmap_qp_destroy(&qp);
	ddp_mem_destroy(&mem);
	tp_destroy(&p);
}
END_TEST

/* RFC 5040 §7.1 rule 1: a local invalidate that fails is a local error:
 * TERMINATE 0/0/7 without copied headers, the WR completes in error, the
 * rest are flushed. */
START_TEST(local_error_terminate)
{
	const struct loop_cfg *lc = &cfgs[0];
	struct rp_pair p;
	struct bufs b;
	struct rdmap_send_wr w = {0};
	uint8_t wire[256];
	size_t n;

	setup(&p, &b, lc, tu_seed());
	w.wr_id = 5;
	w.opcode = RDMAP_WR_LOCAL_INV;
	w.flags = RDMAP_WR_SIGNALED;
	w.inv_stag = 0x12345600; /* no such STag */
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	w.wr_id = 6;
	w.opcode = RDMAP_WR_SEND;
	w.num_sge = 0;
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	n = rp_capture(&p, &p.a, wire, sizeof(wire));
	ck_assert_uint_eq(n, 2 + 18 + 4 + 4);
	ck_assert_uint_eq(wire[2 + 18], (TERM_LAYER_RDMAP << 4) | RDMAP_ETYPE_CATASTROPHIC);
	ck_assert_uint_eq(wire[2 + 19], RDMAP_ECODE_CATA_LOCAL);
	ck_assert_uint_eq(wire[2 + 20], 0);
	ck_assert_int_eq(p.a.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(p.a.nswc, 2);
	ck_assert_uint_eq(p.a.swc[0].wr_id, 5);
	ck_assert_int_eq(p.a.swc[0].status, RDMAP_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(p.a.swc[1].wr_id, 6);
	ck_assert_int_eq(p.a.swc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	/* the peer learns the cause; the stream ends there (RFC 5040 §5.4) */
	ck_assert_int_eq(rp_inject(&p, &p.b, wire, n), -ECONNRESET);
	ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(p.b.err_received, 1);
	ck_assert_uint_eq(p.b.err_term.ecode, RDMAP_ECODE_CATA_LOCAL);
	teardown(&p, &b);
}
END_TEST

/*
 * A local invalidate of a region while a peer's Write into it is half
 * placed (its FPDU was validated before): the invalidation takes effect at
 * once (a later FPDU is refused), but its completion, which gives the
 * memory back to the application, waits until the payload is in.  @_i 0:
 * the rest arrives, and the invalidate completes after it; 1: the QP moves
 * to error first: the rest is never placed and the invalidate is flushed.
 * Both receive paths, with and without the look-ahead.
 */
START_TEST(local_inv_waits_for_placement)
{
	struct loop_cfg lc = {1, 0, 1 + (_i / 2) % 3, 0, 65483};
	struct rp_pair p;
	struct bufs b;
	struct rdmap_send_wr w = {0};
	static uint8_t wire[80000];
	size_t n, half;

	if (lc.lend == 3)
		lc.lend = 0; /* the copying deframer */
	setup(&p, &b, &lc, tu_seed() + (uint64_t)_i);
	w.sge[0].addr = (uint64_t)(uintptr_t)b.a_src;
	w.sge[0].length = 60000;
	w.sge[0].lkey = b.a_src_mr->stag;
	w.wr_id = 1;
	w.opcode = RDMAP_WR_WRITE;
	w.num_sge = 1;
	w.remote_addr = (uint64_t)(uintptr_t)b.b_dst;
	w.rkey = b.b_dst_mr->stag;
	ck_assert_int_eq(rdmap_post_send(&p.a.qp, &w), 0);
	n = rp_capture(&p, &p.a, wire, sizeof(wire));
	ck_assert_uint_gt(n, 60000);
	half = n / 2;
	ck_assert_int_eq(rp_inject(&p, &p.b, wire, half), (ssize_t)half);
	/* B invalidates its sink with the Write's first half placed */
	memset(&w, 0, sizeof(w));
	w.wr_id = 2;
	w.opcode = RDMAP_WR_LOCAL_INV;
	w.flags = RDMAP_WR_SIGNALED;
	w.inv_stag = b.b_dst_mr->stag;
	ck_assert_int_eq(rdmap_post_send(&p.b.qp, &w), 0);
	rdmap_qp_progress(&p.b.qp);
	ck_assert_int_eq(b.b_dst_mr->valid, 0);
	ck_assert_int_eq(p.b.nswc, 0); /* held: the rest is still to come */
	if (_i % 2 == 0) {
		ck_assert_int_eq(rp_inject(&p, &p.b, wire + half, n - half), (ssize_t)(n - half));
		rdmap_qp_progress(&p.b.qp);
		ck_assert_int_eq(p.b.nswc, 1);
		ck_assert_uint_eq(p.b.swc[0].wr_id, 2);
		ck_assert_int_eq(p.b.swc[0].opcode, RDMAP_WC_LOCAL_INV);
		ck_assert_int_eq(p.b.swc[0].status, RDMAP_WC_SUCCESS);
		ck_assert_mem_eq(b.b_dst, b.a_src, 60000);
		ck_assert_int_eq(p.b.qp.state, RDMAP_QPS_RTS);
	} else {
		rdmap_qp_modify_error(&p.b.qp);
		ck_assert_int_eq(p.b.nswc, 1);
		ck_assert_int_eq(p.b.swc[0].status, RDMAP_WC_WR_FLUSH_ERR);
		memset(b.b_dst, 0, 60000); /* the application's again */
		ck_assert_int_lt(rp_inject(&p, &p.b, wire + half, n - half), 0);
		for (size_t i = 0; i < 60000; i++)
			ck_assert_uint_eq(b.b_dst[i], 0);
	}
	teardown(&p, &b);
}
END_TEST

Suite *rdmap_loop_suite(void)
{
	Suite *s = suite_create("rdmap_loop");
	TCase *tc = tcase_create("ops");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, write_sizes, 0, NCFG);
	tcase_add_loop_test(tc, read_sizes, 0, NCFG);
	tcase_add_loop_test(tc, send_sizes, 0, NCFG);
	tcase_add_loop_test(tc, mixed_bidirectional, 0, NCFG);
	tcase_add_loop_test(tc, unsignaled_inline_inv_fence, 0, NCFG);
	tcase_add_loop_test(tc, ord_queues_locally, 0, NCFG);
	tcase_add_loop_test(tc, graceful_close, 0, NCFG);
	tcase_add_loop_test(tc, local_inv_waits_for_placement, 0, 6);
	tcase_add_test(tc, setup_terminate_sent);
	tcase_add_test(tc, bind_ird_mismatch);
	tcase_add_test(tc, local_error_terminate);
	suite_add_tcase(s, tc);
	return s;
}
