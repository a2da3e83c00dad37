/* SPDX-License-Identifier: MIT */
/*
 * RFC 7306 (RDMAP extensions) between two complete stacks over the
 * in-memory wire, re-split at random: FetchAdd and CmpSwap return the
 * original value and update the target; atomics order with Reads and Writes
 * as RFC 7306 §7 says; Write with Immediate places its data before the
 * receive completes and reports the Write's length; Send with Immediate
 * consumes a receive and touches none of its buffers; posts the extensions
 * do not allow are refused before anything is sent; the masked arithmetic
 * of §5.1 against the RFC's bit-by-bit pseudo-code; remote atomics racing
 * the target process's own atomic instructions on the same word.  The
 * TERMINATEs of hostile input are in test_rdmap_err.c.
 */
#include "tests.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "rdmap_pair.h"

#define BUFSZ (256u * 1024)

struct ext_cfg {
	int crc, markers, lend;
	size_t chunk;
};

static const struct ext_cfg cfgs[] = {
	{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 0}, {1, 0, 1, 5}, {0, 1, 0, 3000},
};
#define NCFG (int)(sizeof(cfgs) / sizeof(cfgs[0]))

struct ext {
	struct rp_pair p;
	uint8_t *a_buf, *b_buf;
	uint64_t *a_res;   /* A's 8-octet result buffers */
	uint64_t *b_words; /* B's atomic targets */
	struct ddp_mr *a_buf_mr, *b_buf_mr, *a_res_mr, *b_words_mr;
};

#define NRES   512
#define NWORDS 64

static void ext_setup(struct ext *e, const struct ext_cfg *c, unsigned ext, uint64_t seed)
{
	struct mpa_cfg ic, rc;
	struct rdmap_qp_cfg q = {
		.max_send_wr = 64, .max_recv_wr = 64, .ird = 4, .ord = 4, .ext = ext};

	memset(e, 0, sizeof(*e));
	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = c->crc;
	ic.markers = rc.markers = c->markers;
	ck_assert_int_eq(rp_init(&e->p, &ic, &rc, &q, seed), 0);
	e->p.lend = c->lend;
	e->p.max_chunk = c->chunk;
	e->a_buf = malloc(BUFSZ);
	e->b_buf = calloc(1, BUFSZ);
	ck_assert_int_eq(posix_memalign((void **)&e->a_res, 64, NRES * 8), 0);
	ck_assert_int_eq(posix_memalign((void **)&e->b_words, 64, NWORDS * 8), 0);
	ck_assert(e->a_buf && e->b_buf);
	tu_rand_fill(&seed, e->a_buf, BUFSZ);
	memset(e->a_res, 0xEE, NRES * 8);
	memset(e->b_words, 0, NWORDS * 8);
	e->a_buf_mr = rp_reg(&e->p.a, e->a_buf, BUFSZ, DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_READ);
	e->b_buf_mr = rp_reg(&e->p.b, e->b_buf, BUFSZ, DDP_ACC_ALL);
	e->a_res_mr = rp_reg(&e->p.a, e->a_res, NRES * 8, DDP_ACC_LOCAL_WRITE);
	e->b_words_mr = rp_reg(&e->p.b, e->b_words, NWORDS * 8, DDP_ACC_ALL);
	ck_assert(e->a_buf_mr && e->b_buf_mr && e->a_res_mr && e->b_words_mr);
}

static void ext_teardown(struct ext *e)
{
	rp_destroy(&e->p);
	free(e->a_buf);
	free(e->b_buf);
	free(e->a_res);
	free(e->b_words);
}

static uint8_t rd_ctrl_op(unsigned op)
{
	return (uint8_t)(RDMAP_VERSION << 6 | op);
}

static uint64_t va(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* an atomic on B's word @w, its original value into A's result @r */
static int post_atomic(struct ext *e, uint64_t id, enum rdmap_wr_opcode op, int w, int r,
		       uint64_t cmp_add, uint64_t swap)
{
	struct rdmap_send_wr wr = {0};

	wr.wr_id = id;
	wr.opcode = op;
	wr.flags = RDMAP_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sge[0].addr = va(&e->a_res[r]);
	wr.sge[0].length = 8;
	wr.sge[0].lkey = e->a_res_mr->stag;
	wr.rkey = e->b_words_mr->stag;
	wr.remote_addr = va(&e->b_words[w]);
	wr.compare_add = cmp_add;
	wr.swap = swap;
	return rdmap_post_send(&e->p.a.qp, &wr);
}

static void check_swc(const struct rp_host *h, int i, uint64_t id, enum rdmap_wc_opcode op,
		      uint32_t len)
{
	ck_assert_uint_eq(h->swc[i].wr_id, id);
	ck_assert_int_eq(h->swc[i].status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(h->swc[i].opcode, op);
	ck_assert_uint_eq(h->swc[i].byte_len, len);
}

/* FetchAdd and CmpSwap (hit and miss) on several words, more at once than
 * ORD: each returns the value before it, in posting order. */
START_TEST(atomics_loop)
{
	const struct ext_cfg *c = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() + (uint64_t)_i, model[NWORDS] = {0}, want[NRES];
	struct ext e;
	int n = 0;

	ext_setup(&e, c, RDMAP_EXT_RFC7306, rng);
	for (int round = 0; round < 6; round++) {
		int first = n;

		for (int k = 0; k < 40; k++, n++) {
			int w = (int)(tu_rand(&rng) % 4);
			uint64_t v = tu_rand(&rng);

			want[n] = model[w];
			switch (tu_rand(&rng) % 3) {
			case 0:
				ck_assert_int_eq(post_atomic(&e, (uint64_t)n, RDMAP_WR_ATOMIC_FADD,
							     w, n, v, 0),
						 0);
				model[w] += v;
				break;
			case 1: /* a compare that matches */
				ck_assert_int_eq(post_atomic(&e, (uint64_t)n, RDMAP_WR_ATOMIC_CSWAP,
							     w, n, model[w], v),
						 0);
				model[w] = v;
				break;
			default: /* one that does not */
				ck_assert_int_eq(post_atomic(&e, (uint64_t)n, RDMAP_WR_ATOMIC_CSWAP,
							     w, n, model[w] ^ 1, v),
						 0);
				break;
			}
		}
		rdmap_qp_progress(&e.p.a.qp);
		ck_assert_uint_le(e.p.a.qp.orq_count, 4); /* ORD holds atomics too */
		rp_pump(&e.p);
		ck_assert_int_eq(e.p.a.nswc, n);
		for (int i = first; i < n; i++) {
			ck_assert_uint_eq(e.p.a.swc[i].wr_id, (uint64_t)i);
			ck_assert_int_eq(e.p.a.swc[i].status, RDMAP_WC_SUCCESS);
			ck_assert_uint_eq(e.p.a.swc[i].byte_len, 8);
			ck_assert_msg(e.a_res[i] == want[i],
				      "atomic %d returned %#llx, expected %#llx", i,
				      (unsigned long long)e.a_res[i], (unsigned long long)want[i]);
		}
	}
	for (int w = 0; w < NWORDS; w++)
		ck_assert_uint_eq(e.b_words[w], model[w]);
	ck_assert_int_eq(e.p.b.nrwc, 0); /* atomics complete nothing at the responder */
	ck_assert_int_eq(e.p.a.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(e.p.b.qp.state, RDMAP_QPS_RTS);
	ext_teardown(&e);
}
END_TEST

/* RFC 7306 §7 at the responder: a Write before an atomic is placed before
 * it executes; a Read after it sees its result; Read and Atomic responses
 * come back in request order (one ORQ), the completion opcodes say which. */
START_TEST(atomic_ordering)
{
	const struct ext_cfg *c = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 5 + (uint64_t)_i, v = 0x0123456789ABCDEFull, got;
	struct rdmap_send_wr wr = {0};
	struct ext e;

	ext_setup(&e, c, RDMAP_EXT_RFC7306, rng);
	memcpy(e.a_buf, &v, 8);
	/* 1: Write v into word 3 */
	wr.wr_id = 1;
	wr.opcode = RDMAP_WR_WRITE;
	wr.flags = RDMAP_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sge[0] = (struct rdmap_sge){va(e.a_buf), 8, e.a_buf_mr->stag};
	wr.rkey = e.b_words_mr->stag;
	wr.remote_addr = va(&e.b_words[3]);
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
	/* 2: FetchAdd 5 on it: sees v */
	ck_assert_int_eq(post_atomic(&e, 2, RDMAP_WR_ATOMIC_FADD, 3, 0, 5, 0), 0);
	/* 3: Read it back into a_res[1]: sees v + 5 */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = RDMAP_WR_READ;
	wr.flags = RDMAP_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sge[0] = (struct rdmap_sge){va(&e.a_res[1]), 8, e.a_res_mr->stag};
	wr.rkey = e.b_words_mr->stag;
	wr.remote_addr = va(&e.b_words[3]);
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
	/* 4: CmpSwap (v + 5 -> 7), 5: FetchAdd 1 */
	ck_assert_int_eq(post_atomic(&e, 4, RDMAP_WR_ATOMIC_CSWAP, 3, 2, v + 5, 7), 0);
	ck_assert_int_eq(post_atomic(&e, 5, RDMAP_WR_ATOMIC_FADD, 3, 3, 1, 0), 0);
	rp_pump(&e.p);
	ck_assert_int_eq(e.p.a.nswc, 5);
	check_swc(&e.p.a, 0, 1, RDMAP_WC_RDMA_WRITE, 8);
	check_swc(&e.p.a, 1, 2, RDMAP_WC_FETCH_ADD, 8);
	check_swc(&e.p.a, 2, 3, RDMAP_WC_RDMA_READ, 8);
	check_swc(&e.p.a, 3, 4, RDMAP_WC_COMP_SWAP, 8);
	check_swc(&e.p.a, 4, 5, RDMAP_WC_FETCH_ADD, 8);
	ck_assert_uint_eq(e.a_res[0], v);
	memcpy(&got, &e.a_res[1], 8);
	ck_assert_uint_eq(got, v + 5);
	ck_assert_uint_eq(e.a_res[2], v + 5);
	ck_assert_uint_eq(e.a_res[3], 7);
	ck_assert_uint_eq(e.b_words[3], 8);
	ext_teardown(&e);
}
END_TEST

static void post_recvs(struct ext *e, int n, size_t len)
{
	for (int i = 0; i < n; i++) {
		struct rdmap_recv_wr r = {0};

		r.wr_id = 0x900 + (uint64_t)i;
		r.num_sge = 1;
		r.sge[0] = (struct rdmap_sge){va(e->b_buf + BUFSZ / 2 + (size_t)i * len),
					      (uint32_t)len, e->b_buf_mr->stag};
		ck_assert_int_eq(rdmap_post_recv(&e->p.b.qp, &r), 0);
	}
}

/* Write with Immediate: the Write's data is placed when the receive
 * completes (RECV_RDMA_WITH_IMM, the Write's length, the immediate byte for
 * byte); Send with Immediate: RECV with no data, the receive's buffer
 * untouched, Solicited Event when asked; a plain Send after a Write is not
 * taken for one. */
START_TEST(immediates)
{
	const struct ext_cfg *c = &cfgs[_i % NCFG];
	uint64_t rng = tu_seed() * 7 + (uint64_t)_i;
	static const size_t sizes[] = {0, 1, 1000, 70000, 100 * 1024};
	const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
	uint8_t ref[64];
	struct ext e;
	size_t i;

	ext_setup(&e, c, RDMAP_EXT_RFC7306, rng);
	post_recvs(&e, (int)ns + 3, 64);
	memcpy(ref, e.b_buf + BUFSZ / 2 + ns * 64, 64);
	for (i = 0; i < ns; i++) {
		struct rdmap_send_wr wr = {0};
		size_t off = (size_t)(tu_rand(&rng) % 1024);

		wr.wr_id = 0x100 + i;
		wr.opcode = RDMAP_WR_WRITE_IMM;
		wr.flags = RDMAP_WR_SIGNALED | (i % 2 ? RDMAP_WR_SOLICITED : 0);
		wr.num_sge = sizes[i] ? 1 : 0;
		wr.sge[0] =
			(struct rdmap_sge){va(e.a_buf + i), (uint32_t)sizes[i], e.a_buf_mr->stag};
		wr.rkey = e.b_buf_mr->stag;
		wr.remote_addr = va(e.b_buf + off);
		wr.imm_data = htonl(0xA0B0C000u + (uint32_t)i);
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		rp_pump(&e.p);
		ck_assert_int_eq(e.p.b.nrwc, (int)i + 1);
		ck_assert_int_eq(e.p.b.rwc[i].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(e.p.b.rwc[i].opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
		ck_assert_uint_eq(e.p.b.rwc[i].wr_id, 0x900 + i);
		ck_assert_uint_eq(e.p.b.rwc[i].byte_len, sizes[i]);
		ck_assert_uint_eq(e.p.b.rwc[i].flags,
				  RDMAP_WC_F_WITH_IMM | (i % 2 ? RDMAP_WC_F_SOLICITED : 0));
		ck_assert_uint_eq(ntohl(e.p.b.rwc[i].imm_data), 0xA0B0C000u + i);
		if (sizes[i])
			ck_assert_mem_eq(e.b_buf + off, e.a_buf + i, sizes[i]);
		check_swc(&e.p.a, (int)i, 0x100 + i, RDMAP_WC_RDMA_WRITE, (uint32_t)sizes[i]);
	}
	/* Send with Immediate, solicited */
	{
		struct rdmap_send_wr wr = {0};

		wr.wr_id = 0x200;
		wr.opcode = RDMAP_WR_SEND_IMM;
		wr.flags = RDMAP_WR_SIGNALED | RDMAP_WR_SOLICITED;
		wr.imm_data = htonl(0xFEEDF00D);
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		/* then a plain Send: an ordinary receive completion */
		wr.wr_id = 0x201;
		wr.opcode = RDMAP_WR_SEND;
		wr.flags = RDMAP_WR_SIGNALED;
		wr.num_sge = 1;
		wr.sge[0] = (struct rdmap_sge){va(e.a_buf), 16, e.a_buf_mr->stag};
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		rp_pump(&e.p);
	}
	ck_assert_int_eq(e.p.b.nrwc, (int)ns + 2);
	ck_assert_int_eq(e.p.b.rwc[ns].opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(e.p.b.rwc[ns].flags, RDMAP_WC_F_WITH_IMM | RDMAP_WC_F_SOLICITED);
	ck_assert_uint_eq(e.p.b.rwc[ns].byte_len, 0);
	ck_assert_uint_eq(ntohl(e.p.b.rwc[ns].imm_data), 0xFEEDF00D);
	/* its receive buffer (the ns-th) was not written */
	ck_assert_mem_eq(e.b_buf + BUFSZ / 2 + ns * 64, ref, 64);
	ck_assert_int_eq(e.p.b.rwc[ns + 1].opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(e.p.b.rwc[ns + 1].flags, 0);
	ck_assert_uint_eq(e.p.b.rwc[ns + 1].byte_len, 16);
	check_swc(&e.p.a, (int)ns, 0x200, RDMAP_WC_SEND, 0);
	check_swc(&e.p.a, (int)ns + 1, 0x201, RDMAP_WC_SEND, 16);
	ck_assert_int_eq(e.p.a.qp.state, RDMAP_QPS_RTS);
	ck_assert_int_eq(e.p.b.qp.state, RDMAP_QPS_RTS);
	ext_teardown(&e);
}
END_TEST

/* What the extensions refuse at post time, with nothing queued or sent. */
START_TEST(post_refusals)
{
	static const enum rdmap_wr_opcode ops[] = {RDMAP_WR_WRITE_IMM, RDMAP_WR_SEND_IMM,
						   RDMAP_WR_ATOMIC_FADD, RDMAP_WR_ATOMIC_CSWAP};
	struct rdmap_send_wr wr = {0};
	struct ext e;

	/* without the extensions: -EOPNOTSUPP for each, well-formed or not */
	ext_setup(&e, &cfgs[1], 0, tu_seed());
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		ck_assert_int_eq(post_atomic(&e, 1, ops[i], 0, 0, 1, 2), -EOPNOTSUPP);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = ops[i];
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EOPNOTSUPP);
	}
	ck_assert_uint_eq(e.p.a.qp.sq_count, 0);
	ck_assert_uint_eq(rp_pump(&e.p), 0);
	ext_teardown(&e);

	ext_setup(&e, &cfgs[1], RDMAP_EXT_RFC7306, tu_seed());
	/* an atomic: exactly one SGE of 8 octets, 8-aligned remote address */
	wr = (struct rdmap_send_wr){0};
	wr.opcode = RDMAP_WR_ATOMIC_FADD;
	wr.rkey = e.b_words_mr->stag;
	wr.remote_addr = va(e.b_words);
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* no SGE */
	wr.num_sge = 2;
	wr.sge[0] = wr.sge[1] = (struct rdmap_sge){va(e.a_res), 4, e.a_res_mr->stag};
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* two */
	wr.num_sge = 1;
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* 4 octets */
	wr.sge[0].length = 16;
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* 16 */
	wr.sge[0].length = 8;
	wr.remote_addr = va(e.b_words) + 4;
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* misaligned */
	wr.remote_addr = va(e.b_words);
	wr.flags = RDMAP_WR_INLINE;
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL); /* inline */
	wr.flags = 0;
	wr.sge[0].lkey = e.a_buf_mr->stag ^ 0x10; /* not a valid lkey */
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EPERM);
	/* Send with Immediate carries no data (RFC 7306 has no such message) */
	wr = (struct rdmap_send_wr){0};
	wr.opcode = RDMAP_WR_SEND_IMM;
	wr.num_sge = 1;
	wr.sge[0] = (struct rdmap_sge){va(e.a_buf), 1, e.a_buf_mr->stag};
	ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), -EINVAL);
	ck_assert_uint_eq(e.p.a.qp.sq_count, 0);
	ck_assert_uint_eq(rp_pump(&e.p), 0);
	ext_teardown(&e);
}
END_TEST

/* The requester's messages against literal octets (RFC 7306 §5.2.1 Figure
 * 4, §6.2 Figure 7): an Atomic Request per verbs operation, with the masks
 * that make the RFC's masked forms the plain ones, and a Write with
 * Immediate's Immediate Data with SE. */
START_TEST(requester_octets)
{
	uint8_t wire[4096], want[70];
	const uint8_t *u;
	struct ext e;
	size_t n;

	ext_setup(&e, &cfgs[0], RDMAP_EXT_RFC7306, tu_seed()); /* no CRC, no markers */
	ck_assert_int_eq(post_atomic(&e, 1, RDMAP_WR_ATOMIC_CSWAP, 2, 0, 0x1111111111111111ull, 0x2222222222222222ull),
			 0);
	n = rp_capture(&e.p, &e.p.a, wire, sizeof(wire));
	ck_assert_uint_eq(n, 2 + 70 + 0 + 4);
	ck_assert_uint_eq(get_be16(wire), 70);
	u = wire + 2;
	tu_hex("41 4a 00000000 00000001 00000001 00000000  00000002 00000001", want, 26);
	put_be32(want + 26, e.b_words_mr->stag);
	put_be64(want + 30, va(&e.b_words[2]));
	put_be64(want + 38, 0x2222222222222222ull); /* swap data */
	put_be64(want + 46, UINT64_MAX);	    /* swap mask */
	put_be64(want + 54, 0x1111111111111111ull); /* compare data */
	put_be64(want + 62, UINT64_MAX);	    /* compare mask */
	ck_assert_mem_eq(u, want, 70);
	ck_assert_int_eq(rp_inject(&e.p, &e.p.b, wire, n), (ssize_t)n);
	rp_pump(&e.p);
	ck_assert_int_eq(post_atomic(&e, 2, RDMAP_WR_ATOMIC_FADD, 2, 1, 5, 0), 0);
	n = rp_capture(&e.p, &e.p.a, wire, sizeof(wire));
	ck_assert_uint_eq(n, 76);
	u = wire + 2;
	tu_hex("41 4a 00000000 00000001 00000002 00000000  00000000 00000002", want, 26);
	put_be32(want + 26, e.b_words_mr->stag);
	put_be64(want + 30, va(&e.b_words[2]));
	put_be64(want + 38, 5);		 /* add data */
	put_be64(want + 46, 0);		 /* add mask: a plain add */
	put_be64(want + 54, 0);		 /* compare data: zero for FetchAdd */
	put_be64(want + 62, UINT64_MAX); /* compare mask: all ones for FetchAdd */
	ck_assert_mem_eq(u, want, 70);
	ck_assert_int_eq(rp_inject(&e.p, &e.p.b, wire, n), (ssize_t)n);
	rp_pump(&e.p);
	ck_assert_int_eq(e.p.a.nswc, 2);
	/* Write with Immediate, solicited: a Write of 3 octets, then opcode 9 on QN 0, MSN 1 */
	{
		struct rdmap_send_wr wr = {0};

		post_recvs(&e, 1, 64);
		wr.wr_id = 3;
		wr.opcode = RDMAP_WR_WRITE_IMM;
		wr.flags = RDMAP_WR_SIGNALED | RDMAP_WR_SOLICITED;
		wr.num_sge = 1;
		wr.sge[0] = (struct rdmap_sge){va(e.a_buf), 3, e.a_buf_mr->stag};
		wr.rkey = e.b_buf_mr->stag;
		wr.remote_addr = va(e.b_buf);
		memcpy(&wr.imm_data, "\xde\xad\xbe\xef", 4);
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		n = rp_capture(&e.p, &e.p.a, wire, sizeof(wire));
		/* the Write: 2 + 14 + 3 + pad 1 + CRC 4 */
		ck_assert_uint_eq(n, 24 + 2 + 26 + 0 + 4);
		ck_assert_uint_eq(wire[2], 0xC1);		/* tagged, last */
		ck_assert_uint_eq(wire[3], rd_ctrl_op(RDMAP_OP_WRITE));
		u = wire + 24 + 2;
		ck_assert_uint_eq(get_be16(wire + 24), 26);
		tu_hex("41 49 00000000 00000000 00000001 00000000  deadbeef 00000000", want, 26);
		ck_assert_mem_eq(u, want, 26);
		ck_assert_int_eq(rp_inject(&e.p, &e.p.b, wire, n), (ssize_t)n);
		rp_pump(&e.p);
		ck_assert_int_eq(e.p.b.nrwc, 1);
		ck_assert_int_eq(e.p.b.rwc[0].opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
	}
	ext_teardown(&e);
}
END_TEST

/*
 * Every split point: the requester's stream of a Write with Immediate, an
 * Immediate Data alone and a FetchAdd (with CRCs, then without) is fed to a
 * fresh responder in two pieces cut at every octet, through both receive
 * paths; each time the data lands, both receives complete with their
 * immediates, the word is added to once, and the Atomic Response that
 * comes back completes the FetchAdd with the value before.
 */
START_TEST(every_split_point)
{
	const struct ext_cfg *c = &cfgs[_i % 2]; /* no CRC; CRC */
	uint8_t wire[4096];
	size_t n = 0;
	int lend;

	for (size_t cut = 1;; cut++) {
		struct ext e;
		struct rdmap_send_wr wr = {0};

		ext_setup(&e, c, RDMAP_EXT_RFC7306, tu_seed());
		lend = (int)(cut & 1);
		post_recvs(&e, 2, 64);
		wr.wr_id = 1;
		wr.opcode = RDMAP_WR_WRITE_IMM;
		wr.flags = RDMAP_WR_SIGNALED;
		wr.num_sge = 1;
		wr.sge[0] = (struct rdmap_sge){va(e.a_buf), 100, e.a_buf_mr->stag};
		wr.rkey = e.b_buf_mr->stag;
		wr.remote_addr = va(e.b_buf);
		wr.imm_data = htonl(0x11110001);
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		wr = (struct rdmap_send_wr){0};
		wr.wr_id = 2;
		wr.opcode = RDMAP_WR_SEND_IMM;
		wr.flags = RDMAP_WR_SIGNALED;
		wr.imm_data = htonl(0x11110002);
		ck_assert_int_eq(rdmap_post_send(&e.p.a.qp, &wr), 0);
		e.b_words[1] = 1000;
		ck_assert_int_eq(post_atomic(&e, 3, RDMAP_WR_ATOMIC_FADD, 1, 0, 7, 0), 0);
		n = rp_capture(&e.p, &e.p.a, wire, sizeof(wire));
		ck_assert_uint_gt(n, cut);
		e.p.lend = lend;
		ck_assert_int_eq(rp_inject(&e.p, &e.p.b, wire, cut), (ssize_t)cut);
		ck_assert_int_eq(rp_inject(&e.p, &e.p.b, wire + cut, n - cut), (ssize_t)(n - cut));
		rp_pump(&e.p);
		ck_assert_int_eq(e.p.b.nrwc, 2);
		ck_assert_int_eq(e.p.b.rwc[0].opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
		ck_assert_uint_eq(e.p.b.rwc[0].byte_len, 100);
		ck_assert_uint_eq(ntohl(e.p.b.rwc[0].imm_data), 0x11110001);
		ck_assert_int_eq(e.p.b.rwc[1].opcode, RDMAP_WC_RECV);
		ck_assert_uint_eq(ntohl(e.p.b.rwc[1].imm_data), 0x11110002);
		ck_assert_mem_eq(e.b_buf, e.a_buf, 100);
		ck_assert_uint_eq(e.b_words[1], 1007);
		ck_assert_int_eq(e.p.a.nswc, 3);
		check_swc(&e.p.a, 2, 3, RDMAP_WC_FETCH_ADD, 8);
		ck_assert_uint_eq(e.a_res[0], 1000);
		ck_assert_int_eq(e.p.b.qp.state, RDMAP_QPS_RTS);
		ext_teardown(&e);
		if (cut + 1 == n)
			break;
	}
}
END_TEST

/* RFC 7306 §5.1.1's FetchAdd pseudo-code, bit by bit as the RFC writes it. */
static uint64_t ref_masked_add(uint64_t o, uint64_t a, uint64_t mask)
{
	uint64_t r = 0;
	unsigned carry = 0;

	for (int i = 0; i < 64; i++) {
		uint64_t b = 1ull << i;
		unsigned x = !!(o & b), y = !!(a & b);

		if (x ^ y ^ carry)
			r |= b;
		carry = (x & y) | (x & carry) | (y & carry);
		carry = carry && !(mask & b);
	}
	return r;
}

START_TEST(masked_arithmetic)
{
	uint64_t rng = tu_seed();
	static const uint64_t masks[] = {0,
					 UINT64_MAX,
					 0x8000000000000000ull,
					 0x8080808080808080ull,
					 0x0000000100000001ull,
					 0x8000000080000000ull};

	for (int i = 0; i < 20000; i++) {
		uint64_t o = tu_rand(&rng), a = tu_rand(&rng);
		uint64_t m = i < 6000 ? masks[i % 6] : tu_rand(&rng) & tu_rand(&rng);
		uint64_t w = o, got;

		if (i % 7 == 0)
			o = UINT64_MAX, w = o; /* carries everywhere */
		ck_assert_uint_eq(rdmap_masked_add(o, a, m), ref_masked_add(o, a, m));
		got = rdmap_atomic_apply(&w, RDMAP_AOP_FETCHADD, a, m, tu_rand(&rng),
					 tu_rand(&rng));
		ck_assert_uint_eq(got, o);
		ck_assert_uint_eq(w, ref_masked_add(o, a, m));
	}
	/* mask 0 is a plain 64-bit add */
	ck_assert_uint_eq(rdmap_masked_add(UINT64_MAX, 1, 0), 0);
	/* §5.1.2 CmpSwap: compare under Compare Mask, swap under Swap Mask */
	for (int i = 0; i < 20000; i++) {
		uint64_t o = tu_rand(&rng), sd = tu_rand(&rng), sm = tu_rand(&rng),
			 cm = tu_rand(&rng);
		uint64_t cd = i % 2 ? o ^ (tu_rand(&rng) & ~cm) : tu_rand(&rng); /* odd: a match */
		uint64_t w = o, want = ((cd ^ o) & cm) ? o : ((o & ~sm) | (sd & sm));

		if (i % 5 == 0)
			sm = cm = UINT64_MAX, cd = i % 2 ? o : o ^ 1, want = i % 2 ? sd : o;
		ck_assert_uint_eq(rdmap_atomic_apply(&w, RDMAP_AOP_CMPSWAP, sd, sm, cd, cm), o);
		ck_assert_uint_eq(w, want);
	}
}
END_TEST

struct cpu_adder {
	uint64_t *word;
	int n;
};

static void *cpu_add(void *arg)
{
	struct cpu_adder *c = arg;

	for (int i = 0; i < c->n; i++)
		__atomic_fetch_add(c->word, 3, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Remote FetchAdds on a word while a thread of the target process adds to
 * it with its own atomic instructions: no update is lost (the guarantee
 * docs/API.md states, IBV_ATOMIC_GLOB). */
START_TEST(atomic_vs_cpu)
{
	const int nremote = 20000, ncpu = 200000;
	struct cpu_adder c;
	pthread_t t;
	struct ext e;
	int done = 0;

	ext_setup(&e, &cfgs[0], RDMAP_EXT_RFC7306, tu_seed());
	c.word = &e.b_words[5];
	c.n = ncpu;
	ck_assert_int_eq(pthread_create(&t, NULL, cpu_add, &c), 0);
	while (done < nremote) {
		int k = 0;

		for (; k < 32 && done + k < nremote; k++)
			ck_assert_int_eq(post_atomic(&e, (uint64_t)(done + k), RDMAP_WR_ATOMIC_FADD,
						     5, k, 1000, 0),
					 0);
		rp_pump(&e.p);
		ck_assert_int_eq(e.p.a.nswc, k);
		for (int i = 0; i < k; i++)
			ck_assert_int_eq(e.p.a.swc[i].status, RDMAP_WC_SUCCESS);
		e.p.a.nswc = 0;
		done += k;
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(e.b_words[5], (uint64_t)nremote * 1000 + (uint64_t)ncpu * 3);
	ext_teardown(&e);
}
END_TEST

/* The requester's result buffer deregistered while its atomic is out: the
 * response writes nothing there, the WR fails with a local protection
 * error, the QP terminates (local catastrophic), later work is flushed. */
START_TEST(atomic_result_deregistered)
{
	struct ext e;
	uint64_t before;

	ext_setup(&e, &cfgs[1], RDMAP_EXT_RFC7306, tu_seed());
	ck_assert_int_eq(post_atomic(&e, 1, RDMAP_WR_ATOMIC_FADD, 0, 0, 9, 0), 0);
	ck_assert_int_eq(post_atomic(&e, 2, RDMAP_WR_ATOMIC_FADD, 0, 1, 9, 0), 0);
	rdmap_qp_progress(&e.p.a.qp);
	ck_assert_uint_eq(e.p.a.qp.orq_count, 2);
	before = e.a_res[0];
	ddp_mr_dereg(&e.p.a.mem, e.a_res_mr);
	rp_pump(&e.p);
	ck_assert_uint_eq(e.a_res[0], before);
	ck_assert_int_eq(e.p.a.qp.state, RDMAP_QPS_ERROR);
	ck_assert_int_eq(e.p.a.nswc, 2);
	ck_assert_int_eq(e.p.a.swc[0].status, RDMAP_WC_LOC_PROT_ERR);
	ck_assert_int_eq(e.p.a.swc[0].opcode, RDMAP_WC_FETCH_ADD);
	ck_assert_int_eq(e.p.a.swc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(e.p.a.err_term.layer, TERM_LAYER_RDMAP);
	ck_assert_uint_eq(e.p.a.err_term.ecode, RDMAP_ECODE_CATA_LOCAL);
	/* the responder did execute both (they were delivered) */
	ck_assert_uint_eq(e.b_words[0], 18);
	e.a_res_mr = NULL;
	ext_teardown(&e);
}
END_TEST

Suite *rdmap_ext_suite(void)
{
	Suite *s = suite_create("rdmap_ext");
	TCase *tc = tcase_create("rfc7306");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, atomics_loop, 0, NCFG);
	tcase_add_loop_test(tc, atomic_ordering, 0, NCFG);
	tcase_add_loop_test(tc, immediates, 0, NCFG);
	tcase_add_test(tc, post_refusals);
	tcase_add_test(tc, requester_octets);
	tcase_add_loop_test(tc, every_split_point, 0, 2);
	tcase_add_test(tc, masked_arithmetic);
	tcase_add_test(tc, atomic_vs_cpu);
	tcase_add_test(tc, atomic_result_deregistered);
	suite_add_tcase(s, tc);
	return s;
}
