/* SPDX-License-Identifier: MIT */
/*
 * The ONC RPC layer's XDR streams (rpcrdma/rpcrdma_xdr.c): reducing an
 * encoded message by its DDP-eligible items (RFC 8166 §3.4) and restoring
 * a reply whose item came by Write chunk, checked against libtirpc's own
 * xdrmem encoding of the same values.
 */
#include "tests.h"

#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_xdr.h"

struct two_blobs {
	u_int a;
	char *p1;
	u_int n1;
	u_int b;
	char *p2;
	u_int n2;
	u_int c;
};

static bool_t xdr_two_blobs(XDR *x, struct two_blobs *t)
{
	return xdr_u_int(x, &t->a) && xdr_bytes(x, &t->p1, &t->n1, 1u << 24) && xdr_u_int(x, &t->b) &&
	       xdr_bytes(x, &t->p2, &t->n2, 1u << 24) && xdr_u_int(x, &t->c);
}

static size_t plain_encode(struct two_blobs *t, uint8_t *buf, size_t cap)
{
	XDR x;

	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	ck_assert(xdr_two_blobs(&x, t));
	return XDR_GETPOS(&x);
}

/* reduced stream + items, reinserted with roundup, give the plain stream */
static void reinsert(const struct rpcrdma_xdr *s, uint8_t *out, size_t *outlen)
{
	size_t o = 0, r = 0;

	for (int i = 0; i < s->nitems; i++) {
		const struct rpcrdma_ddp_item *it = &s->items[i];
		size_t before = it->pos - o; /* reduced octets before the item */
		u_int pad = (4 - it->len % 4) % 4;

		memcpy(out + o, s->buf + r, before);
		o += before;
		r += before;
		memcpy(out + o, it->addr, it->len);
		memset(out + o + it->len, 0, pad);
		o += it->len + pad;
	}
	memcpy(out + o, s->buf + r, s->pos - r);
	o += s->pos - r;
	*outlen = o;
}

START_TEST(xdr_reduce_roundtrip)
{
	/* lengths around the threshold and every roundup */
	static const u_int lens[][2] = { { 0, 0 }, { 1023, 1024 }, { 1025, 3 }, { 4096, 4097 },
					 { 1026, 1027 }, { 5, 70000 } };
	uint64_t rng = tu_seed() ^ (uint64_t)_i;
	u_int n1 = lens[_i][0], n2 = lens[_i][1];
	char *p1 = malloc(n1 + 1), *p2 = malloc(n2 + 1);
	struct two_blobs t = { 0x11111111, p1, n1, 0x22222222, p2, n2, 0x33333333 };
	size_t cap = n1 + n2 + 64, plen, rlen;
	uint8_t *plain = malloc(cap), *red = malloc(cap), *back = malloc(cap);
	struct rpcrdma_xdr s;
	int want = 0;

	tu_rand_fill(&rng, p1, n1);
	tu_rand_fill(&rng, p2, n2);
	plen = plain_encode(&t, plain, cap);
	rpcrdma_xdr_encode_init(&s, red, (u_int)cap, 1024, 8);
	ck_assert(xdr_two_blobs(&s.x, &t));
	ck_assert_int_eq(s.failed, 0);
	want = (n1 >= 1024) + (n2 >= 1024);
	ck_assert_int_eq(s.nitems, want);
	for (int i = 0; i < s.nitems; i++) {
		ck_assert_uint_eq(s.items[i].pos % 4, 0);
		ck_assert(s.items[i].addr == p1 || s.items[i].addr == p2); /* not copied */
	}
	ck_assert_uint_eq(s.upos, plen);
	/* the reduced stream lost exactly the items and their roundup */
	{
		size_t gone = 0;

		for (int i = 0; i < s.nitems; i++)
			gone += s.items[i].len + (4 - s.items[i].len % 4) % 4;
		ck_assert_uint_eq(s.pos + gone, plen);
	}
	reinsert(&s, back, &rlen);
	ck_assert_uint_eq(rlen, plen);
	ck_assert_mem_eq(back, plain, plen);
	free(p1);
	free(p2);
	free(plain);
	free(red);
	free(back);
}
END_TEST

START_TEST(xdr_reduce_limits)
{
	char blob[2048] = { 1 };
	struct two_blobs t = { 1, blob, 2048, 2, blob, 2048, 3 };
	uint8_t buf[8192];
	struct rpcrdma_xdr s;

	/* max_items 1: the second item stays inline */
	rpcrdma_xdr_encode_init(&s, buf, sizeof(buf), 1024, 1);
	ck_assert(xdr_two_blobs(&s.x, &t));
	ck_assert_int_eq(s.nitems, 1);
	ck_assert_uint_eq(s.pos, 4 + 4 + 4 + 4 + 2048 + 4);
	/* no diversion: the plain stream */
	rpcrdma_xdr_encode_init(&s, buf, sizeof(buf), 1024, 0);
	ck_assert(xdr_two_blobs(&s.x, &t));
	ck_assert_int_eq(s.nitems, 0);
	ck_assert_uint_eq(s.pos, 4 + 4 + 2048 + 4 + 4 + 2048 + 4);
	/* a buffer too small fails, never writes past it */
	memset(buf, 0x5a, sizeof(buf));
	rpcrdma_xdr_encode_init(&s, buf, 100, 1024, 0);
	ck_assert(!xdr_two_blobs(&s.x, &t));
	ck_assert_int_eq(s.failed, 1);
	ck_assert_uint_eq(buf[100], 0x5a);
}
END_TEST

/* a reply whose second blob came by Write chunk: the reduced stream plus
 * the chunk decode to the original values, in place when asked */
START_TEST(xdr_restore_write_chunk)
{
	u_int n2 = _i ? 5001 : 65536;
	char *p2 = malloc(n2), *dst = malloc(n2);
	char small[12] = "hello world";
	struct two_blobs t = { 7, small, 11, 8, p2, n2, 9 }, r;
	uint8_t red[256];
	struct rpcrdma_xdr s, d;
	uint64_t rng = tu_seed();

	tu_rand_fill(&rng, p2, n2);
	rpcrdma_xdr_encode_init(&s, red, sizeof(red), 1024, 1);
	ck_assert(xdr_two_blobs(&s.x, &t));
	ck_assert_int_eq(s.nitems, 1);
	ck_assert_uint_eq(s.items[0].len, n2);
	/* decode into our own buffer (no copy) for item 2, malloc for item 1 */
	memcpy(dst, p2, n2); /* what the Responder's RDMA Write put there */
	memset(&r, 0, sizeof(r));
	r.p2 = dst;
	rpcrdma_xdr_decode_init(&d, red, s.pos, dst, n2);
	ck_assert(xdr_two_blobs(&d.x, &r));
	ck_assert_int_eq(d.wused, 1);
	ck_assert_uint_eq(d.pos, s.pos); /* consumed the whole reduced stream */
	ck_assert_uint_eq(r.a, 7);
	ck_assert_uint_eq(r.n1, 11);
	ck_assert_mem_eq(r.p1, small, 11);
	ck_assert_uint_eq(r.b, 8);
	ck_assert_uint_eq(r.n2, n2);
	ck_assert(r.p2 == dst);
	ck_assert_mem_eq(r.p2, p2, n2);
	ck_assert_uint_eq(r.c, 9);
	free(r.p1);
	/* the chunk elsewhere: copied into a malloc'ed result */
	memset(&r, 0, sizeof(r));
	rpcrdma_xdr_decode_init(&d, red, s.pos, p2, n2);
	ck_assert(xdr_two_blobs(&d.x, &r));
	ck_assert_mem_eq(r.p2, p2, n2);
	free(r.p1);
	free(r.p2);
	/* a reduced stream cut short fails cleanly */
	memset(&r, 0, sizeof(r));
	rpcrdma_xdr_decode_init(&d, red, s.pos - 4, p2, n2);
	ck_assert(!xdr_two_blobs(&d.x, &r));
	free(r.p1);
	free(r.p2);
	free(p2);
	free(dst);
}
END_TEST

Suite *rpc_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc = tcase_create("xdr");

	tcase_add_loop_test(tc, xdr_reduce_roundtrip, 0, 6);
	tcase_add_test(tc, xdr_reduce_limits);
	tcase_add_loop_test(tc, xdr_restore_write_chunk, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
