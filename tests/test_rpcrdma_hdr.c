/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA version 1 transport header codec (RFC 8166 §4) and RFC 8797
 * CM private data: every message type through encode and decode, every
 * validation error (RFC 8166 §4.5, §4.6), truncation at every length, the
 * 28-octet minimum, caps, the reply-side helpers, and every transport header
 * and private data that the Linux NFS client and server exchanged over siw
 * (tests/data/rpcrdma_capture.bin and rpcrdma_vectors.h, written by
 * tests/data/extract_rpcrdma.py), decoded to what they mean and re-encoded
 * byte for byte.
 */
#include "tests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "mpa.h"
#include "rpcrdma.h"

#include "data/rpcrdma_vectors.h"

/* ------------------------------------------------------------------ */
/* Helpers */

#define NRD  64
#define NWR  16
#define NSEG 256

struct store {
	struct rpcrdma_read_seg rd[NRD];
	struct rpcrdma_chunk wr[NWR];
	struct rpcrdma_seg sg[NSEG];
	struct rpcrdma_dec_cfg cfg;
};

static void store_init(struct store *s, unsigned flags)
{
	memset(s, 0, sizeof(*s));
	s->cfg.read = s->rd;
	s->cfg.max_read = NRD;
	s->cfg.write = s->wr;
	s->cfg.max_write = NWR;
	s->cfg.segs = s->sg;
	s->cfg.max_segs = NSEG;
	s->cfg.flags = flags;
}

/* Decode from a copy of exactly @len octets, so that ASan sees any overread. */
static ssize_t decode_exact(const uint8_t *buf, size_t len, const struct rpcrdma_dec_cfg *cfg,
			    struct rpcrdma_hdr *h, struct rpcrdma_dec_err *e)
{
	uint8_t *copy = malloc(len ? len : 1);
	ssize_t r;

	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, buf, len);
	r = rpcrdma_hdr_decode(copy, len, cfg, h, e);
	free(copy);
	return r;
}

static int seg_eq(const struct rpcrdma_seg *a, const struct rpcrdma_seg *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

static int chunk_eq(const struct rpcrdma_chunk *a, const struct rpcrdma_chunk *b)
{
	if (a->nsegs != b->nsegs)
		return 0;
	for (uint32_t i = 0; i < a->nsegs; i++)
		if (!seg_eq(&a->segs[i], &b->segs[i]))
			return 0;
	return 1;
}

/* Same header by content (the arrays behind the pointers differ). */
static void assert_hdr_eq(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	ck_assert_uint_eq(a->xid, b->xid);
	ck_assert_uint_eq(a->vers, b->vers);
	ck_assert_uint_eq(a->credits, b->credits);
	ck_assert_uint_eq(a->proc, b->proc);
	if (a->proc == RPCRDMA_ERROR) {
		ck_assert_uint_eq(a->err, b->err);
		if (a->err == RPCRDMA_ERR_VERS) {
			ck_assert_uint_eq(a->vers_low, b->vers_low);
			ck_assert_uint_eq(a->vers_high, b->vers_high);
		}
		return;
	}
	ck_assert_uint_eq(a->nread, b->nread);
	for (uint32_t i = 0; i < a->nread; i++) {
		ck_assert_uint_eq(a->read[i].position, b->read[i].position);
		ck_assert(seg_eq(&a->read[i].seg, &b->read[i].seg));
	}
	ck_assert_uint_eq(a->nwrite, b->nwrite);
	for (uint32_t i = 0; i < a->nwrite; i++)
		ck_assert(chunk_eq(&a->write[i], &b->write[i]));
	ck_assert_int_eq(!!a->has_reply, !!b->has_reply);
	if (a->has_reply)
		ck_assert(chunk_eq(&a->reply, &b->reply));
}

static uint8_t *read_data(const char *name, size_t *len)
{
	const char *dir = getenv("UIW_TEST_DATA");
	char path[512];
	uint8_t *buf;
	long sz;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "missing test vector %s (tests/data/extract_rpcrdma.py makes it)",
		      path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	ck_assert_int_ge(sz, 0);
	rewind(f);
	buf = malloc((size_t)sz + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

/* The records of rpcrdma_capture.bin, in order. */
struct cap_rec {
	uint8_t kind, conn, dir, op;
	uint32_t msn, inv, len;
	const uint8_t *data;
};

static uint8_t *cap_buf;
static struct cap_rec cap[RV_NRECS];

static void cap_load(void)
{
	size_t len, off = 8;
	int n = 0;

	if (cap_buf)
		return;
	cap_buf = read_data("rpcrdma_capture.bin", &len);
	ck_assert_uint_ge(len, 8);
	ck_assert_int_eq(memcmp(cap_buf, "UIWRPCR1", 8), 0);
	while (off < len) {
		struct cap_rec *r = &cap[n];

		ck_assert_int_lt(n, RV_NRECS);
		ck_assert_uint_le(off + 16, len);
		r->kind = cap_buf[off];
		r->conn = cap_buf[off + 1];
		r->dir = cap_buf[off + 2];
		r->op = cap_buf[off + 3];
		r->msn = get_be32(cap_buf + off + 4);
		r->inv = get_be32(cap_buf + off + 8);
		r->len = get_be32(cap_buf + off + 12);
		off += 16;
		ck_assert_uint_le(off + r->len, len);
		r->data = cap_buf + off;
		off += (r->len + 3) & ~3u;
		n++;
	}
	ck_assert_int_eq(n, RV_NRECS);
}

static void cap_unload(void)
{
	free(cap_buf);
	cap_buf = NULL;
}

static int cap_find(int conn, int dir, uint32_t msn)
{
	cap_load();
	for (int i = 0; i < RV_NRECS; i++)
		if (cap[i].kind == 1 && cap[i].conn == conn && cap[i].dir == dir &&
		    cap[i].msn == msn)
			return i;
	ck_abort_msg("no Send c%d dir %d msn %u in the capture", conn, dir, msn);
	return -1;
}

static ssize_t cap_decode(int i, struct store *s, struct rpcrdma_hdr *h)
{
	struct rpcrdma_dec_err e;
	ssize_t r;

	cap_load();
	r = decode_exact(cap[i].data, cap[i].len, &s->cfg, h, &e);
	ck_assert_msg(r >= 0, "record %d: %zd (%s)", i, r, rpcrdma_reason_name(e.reason));
	return r;
}

#define XID   0x01020304u
#define SEG_A 0x11111111u, 4096u, 0x0000100000000000ull
#define SEG_B 0x22222222u, 8192u, 0x0000200000002000ull

/* ------------------------------------------------------------------ */
/* Every message type, encoded and decoded back */

static struct rpcrdma_read_seg rt_reads[] = {
	{0, {0xa0, 100, 0x1000}}, {0, {0xa1, 28, 0x2000}},  {112, {0xb0, 4096, 0x3000}},
	{112, {0xb1, 3, 0x4000}}, {260, {0xc0, 1, 0x5000}},
};
static struct rpcrdma_seg rt_segs[] = {
	{0xd0, 4096, 0x10000}, {0xd1, 4096, 0x20000}, {0xd2, 1, 0xffffffffffffffffull},
	{0xe0, 65536, 0},      {0xe1, 0, 0x30000},
};
static struct rpcrdma_chunk rt_writes[] = {
	{2, &rt_segs[0]},
	{0, NULL}, /* empty Write chunk (§4.3.2.3) */
	{1, &rt_segs[2]},
};

static const struct rpcrdma_hdr rt_hdrs[] = {
	/* Short Message (§3.5.1) */
	{.xid = XID, .vers = 1, .credits = 32, .proc = RPCRDMA_MSG},
	/* Chunked Message with Read chunks (two positions) */
	{.xid = XID,
	 .vers = 1,
	 .credits = 1,
	 .proc = RPCRDMA_MSG,
	 .nread = 3,
	 .read = &rt_reads[2]},
	/* Write list with an empty chunk, and a Reply chunk */
	{.xid = XID,
	 .vers = 1,
	 .credits = 0xffffffff,
	 .proc = RPCRDMA_MSG,
	 .nwrite = 3,
	 .write = rt_writes,
	 .has_reply = 1,
	 .reply = {2, &rt_segs[3]}},
	/* Long Call: Position Zero Read chunk, RDMA_NOMSG (§3.5.3) */
	{.xid = XID,
	 .vers = 1,
	 .credits = 8,
	 .proc = RPCRDMA_NOMSG,
	 .nread = 5,
	 .read = rt_reads,
	 .has_reply = 1,
	 .reply = {1, &rt_segs[3]}},
	/* Long Reply: RDMA_NOMSG with the Reply chunk (lengths updated) */
	{.xid = XID,
	 .vers = 1,
	 .credits = 64,
	 .proc = RPCRDMA_NOMSG,
	 .nwrite = 1,
	 .write = rt_writes,
	 .has_reply = 1,
	 .reply = {2, &rt_segs[3]}},
	/* an empty Reply chunk still holds the place of the Payload stream */
	{.xid = XID, .vers = 1, .credits = 64, .proc = RPCRDMA_NOMSG, .has_reply = 1},
	/* RDMA_ERROR */
	{.xid = XID,
	 .vers = 1,
	 .credits = 5,
	 .proc = RPCRDMA_ERROR,
	 .err = RPCRDMA_ERR_VERS,
	 .vers_low = 1,
	 .vers_high = 1},
	{.xid = XID, .vers = 1, .credits = 5, .proc = RPCRDMA_ERROR, .err = RPCRDMA_ERR_CHUNK},
	/* an RDMA_ERROR echoes the failing request's version (§4.5) */
	{.xid = XID,
	 .vers = 7,
	 .credits = 5,
	 .proc = RPCRDMA_ERROR,
	 .err = RPCRDMA_ERR_VERS,
	 .vers_low = 1,
	 .vers_high = 3},
};
#define NRT (int)(sizeof(rt_hdrs) / sizeof(rt_hdrs[0]))

static const size_t rt_lens[NRT] = {
	28,
	28 + 3 * 24,
	28 + (4 + 4 + 32) + (4 + 4) + (4 + 4 + 16) + (4 + 32),
	28 + 5 * 24 + 4 + 16,
	28 + (4 + 4 + 32) + (4 + 32),
	28 + 4,
	28,
	20,
	28,
};

START_TEST(roundtrip_types)
{
	const struct rpcrdma_hdr *h = &rt_hdrs[_i];
	uint8_t buf[1024];
	struct rpcrdma_hdr d;
	struct rpcrdma_dec_err e;
	struct store s;
	ssize_t n, r;
	size_t len;

	n = rpcrdma_hdr_encode(buf, sizeof(buf), h, 0);
	ck_assert_int_eq(n, (ssize_t)rt_lens[_i]);
	ck_assert_int_eq(rpcrdma_hdr_len(h), n);
	/* the capacity check: one short refused, exact accepted */
	ck_assert_int_eq(rpcrdma_hdr_encode(buf, (size_t)n - 1, h, 0), -EMSGSIZE);
	ck_assert_int_eq(rpcrdma_hdr_encode(buf, (size_t)n, h, 0), n);
	len = (size_t)n;
	if (h->proc == RPCRDMA_MSG) { /* the Payload stream starts with the XID */
		put_be32(buf + len, h->xid);
		put_be32(buf + len + 4, 0);
		len += 8;
	}
	store_init(&s,
		   h->proc == RPCRDMA_ERROR && n < RPCRDMA_HDR_MIN ? RPCRDMA_DF_SHORT_ERROR : 0);
	r = decode_exact(buf, len, &s.cfg, &d, &e);
	if (h->vers != RPCRDMA_VERSION) {
		/* another version's RDMA_ERROR: discarded, never answered */
		ck_assert_int_eq(r, -EPROTONOSUPPORT);
		ck_assert_uint_eq(e.reply_err, 0);
		ck_assert_int_eq(rpcrdma_rx_verdict(r, &d, 1), RPCRDMA_V_DROP);
		return;
	}
	ck_assert_msg(r == n, "decode %zd (%s), encoded %zd", r, rpcrdma_reason_name(e.reason), n);
	assert_hdr_eq(h, &d);
	ck_assert_int_eq(e.reason, RPCRDMA_R_NONE);
	/* the decoded structure encodes to the same octets */
	{
		uint8_t again[1024];

		ck_assert_int_eq(rpcrdma_hdr_encode(again, sizeof(again), &d, 0), n);
		ck_assert_int_eq(memcmp(again, buf, (size_t)n), 0);
	}
}
END_TEST

/* Exact octets of a few headers, written out by hand from §4.7's examples. */
START_TEST(encode_exact_octets)
{
	static const char *const want[] = {
		/* xid vers credit proc, then three empty lists */
		"01020304 00000001 00000020 00000000 00000000 00000000 00000000",
		/* 1 PHLOO 1 PHLOO 1 PHLOO 0, 0, 0 */
		"01020304 00000001 00000001 00000000"
		"00000001 00000070 000000b0 00001000 00000000 00003000"
		"00000001 00000070 000000b1 00000003 00000000 00004000"
		"00000001 00000104 000000c0 00000001 00000000 00005000"
		"00000000 00000000 00000000",
		/* 0, 1 2 HLOO HLOO 1 0 1 1 HLOO 0, 1 2 HLOO HLOO */
		"01020304 00000001 ffffffff 00000000 00000000"
		"00000001 00000002 000000d0 00001000 00000000 00010000"
		"000000d1 00001000 00000000 00020000"
		"00000001 00000000"
		"00000001 00000001 000000d2 00000001 ffffffff ffffffff"
		"00000000"
		"00000001 00000002 000000e0 00010000 00000000 00000000"
		"000000e1 00000000 00000000 00030000",
	};
	uint8_t buf[512], exp[512];

	for (int i = 0; i < 3; i++) {
		size_t n = tu_hex(want[i], exp, sizeof(exp));

		ck_assert_int_eq(rpcrdma_hdr_encode(buf, sizeof(buf), &rt_hdrs[i], 0), (ssize_t)n);
		ck_assert_int_eq(memcmp(buf, exp, n), 0);
	}
	/* ERR_VERS and ERR_CHUNK (§4.1.2), and ERR_CHUNK padded to 28 */
	{
		uint8_t pad[32];

		ck_assert_int_eq(rpcrdma_hdr_encode(buf, sizeof(buf), &rt_hdrs[6], 0), 28);
		tu_hex("01020304 00000001 00000005 00000004 00000001 00000001 00000001", exp, 28);
		ck_assert_int_eq(memcmp(buf, exp, 28), 0);
		ck_assert_int_eq(rpcrdma_hdr_encode(buf, sizeof(buf), &rt_hdrs[7], 0), 20);
		tu_hex("01020304 00000001 00000005 00000004 00000002", exp, 20);
		ck_assert_int_eq(memcmp(buf, exp, 20), 0);
		memset(pad, 0xee, sizeof(pad));
		ck_assert_int_eq(rpcrdma_hdr_encode(pad, 27, &rt_hdrs[7], RPCRDMA_EF_PAD_MIN),
				 -EMSGSIZE);
		ck_assert_int_eq(
			rpcrdma_hdr_encode(pad, sizeof(pad), &rt_hdrs[7], RPCRDMA_EF_PAD_MIN), 28);
		ck_assert_int_eq(memcmp(pad, exp, 20), 0);
		for (int i = 20; i < 28; i++)
			ck_assert_uint_eq(pad[i], 0);
		ck_assert_uint_eq(pad[28], 0xee);
		/* padding changes nothing for messages of 28 octets or more */
		ck_assert_int_eq(
			rpcrdma_hdr_encode(buf, sizeof(buf), &rt_hdrs[0], RPCRDMA_EF_PAD_MIN), 28);
	}
}
END_TEST

/* Random headers: encode, decode, compare (seeded by UIW_TEST_SEED). */
START_TEST(roundtrip_random)
{
	uint64_t st = tu_seed() ^ 0x7270637264ull;
	static struct rpcrdma_read_seg rd[12];
	static struct rpcrdma_chunk wr[6];
	static struct rpcrdma_seg sg[6 * 5 + 5];
	uint8_t buf[2048];

	for (int it = 0; it < 2000; it++) {
		struct rpcrdma_hdr h = {0}, d;
		struct rpcrdma_dec_err e;
		struct store s;
		uint32_t used = 0;
		ssize_t n, r;

		h.xid = (uint32_t)tu_rand(&st);
		h.vers = 1;
		h.credits = (uint32_t)tu_rand(&st);
		h.proc = tu_rand(&st) % 3 == 0 ? RPCRDMA_NOMSG : RPCRDMA_MSG;
		h.nread = (uint32_t)(tu_rand(&st) % 13);
		h.read = rd;
		for (uint32_t i = 0; i < h.nread; i++) {
			rd[i].position = (uint32_t)(tu_rand(&st) % 64) * 4;
			rd[i].seg.handle = (uint32_t)tu_rand(&st);
			rd[i].seg.length = (uint32_t)tu_rand(&st);
			rd[i].seg.offset = tu_rand(&st) >> 1;
		}
		h.nwrite = (uint32_t)(tu_rand(&st) % 7);
		h.write = wr;
		for (uint32_t i = 0; i < h.nwrite; i++) {
			wr[i].nsegs = (uint32_t)(tu_rand(&st) % 6);
			wr[i].segs = &sg[used];
			for (uint32_t j = 0; j < wr[i].nsegs; j++, used++) {
				sg[used].handle = (uint32_t)tu_rand(&st);
				sg[used].length = (uint32_t)tu_rand(&st);
				sg[used].offset = tu_rand(&st) >> 1;
			}
		}
		h.has_reply = (int)(tu_rand(&st) & 1);
		if (h.has_reply) {
			h.reply.nsegs = (uint32_t)(tu_rand(&st) % 6);
			h.reply.segs = &sg[used];
			for (uint32_t j = 0; j < h.reply.nsegs; j++, used++) {
				sg[used].handle = (uint32_t)tu_rand(&st);
				sg[used].length = (uint32_t)tu_rand(&st);
				sg[used].offset = tu_rand(&st) >> 1;
			}
		}
		n = rpcrdma_hdr_encode(buf, sizeof(buf) - 8, &h, 0);
		if (h.proc == RPCRDMA_NOMSG && !h.has_reply) {
			int pos0 = 0;

			for (uint32_t i = 0; i < h.nread; i++)
				pos0 |= rd[i].position == 0;
			if (!pos0) {
				ck_assert_int_eq(n, -EINVAL);
				continue;
			}
		}
		ck_assert_int_gt(n, 0);
		put_be32(buf + n, h.xid); /* Payload stream (ignored for NOMSG) */
		store_init(&s, 0);
		r = decode_exact(buf, (size_t)n + 4, &s.cfg, &d, &e);
		ck_assert_msg(r == n, "iteration %d: %zd (%s)", it, r,
			      rpcrdma_reason_name(e.reason));
		assert_hdr_eq(&h, &d);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Encoder refusals */

START_TEST(encode_invalid)
{
	struct rpcrdma_read_seg r8 = {8, {1, 2, 3}}, r6 = {6, {1, 2, 3}};
	struct rpcrdma_read_seg rwrap = {4, {1, 16, 0xfffffffffffffff8ull}};
	struct rpcrdma_seg wrap = {1, 2, 0xffffffffffffffffull}, ok = {1, 1, UINT64_MAX};
	struct rpcrdma_chunk cwrap = {1, &wrap}, cnull = {1, NULL}, cok = {1, &ok};
	struct rpcrdma_hdr base = {.xid = XID, .vers = 1, .credits = 1, .proc = RPCRDMA_MSG};
	struct rpcrdma_hdr h;
	uint8_t buf[256];

#define BAD(stmt)                                                                       \
	do {                                                                            \
		h = base;                                                               \
		stmt;                                                                   \
		ck_assert_int_eq(rpcrdma_hdr_encode(buf, sizeof(buf), &h, 0), -EINVAL); \
		ck_assert_int_eq(rpcrdma_hdr_len(&h), -EINVAL);                         \
	} while (0)
	/* §4.6: senders MUST NOT send RDMA_MSGP or RDMA_DONE */
	BAD(h.proc = RPCRDMA_MSGP);
	BAD(h.proc = RPCRDMA_DONE);
	BAD(h.proc = 5);
	BAD(h.proc = 0xffffffff);
	/* we speak version 1 only */
	BAD(h.vers = 2);
	BAD(h.vers = 0);
	/* §3.4.5: positions are multiples of 4 */
	BAD((h.nread = 1, h.read = &r6));
	BAD((h.nread = 1, h.read = &rwrap));
	BAD((h.nread = 1, h.read = NULL));
	BAD((h.nwrite = 1, h.write = &cwrap));
	BAD((h.nwrite = 1, h.write = &cnull));
	BAD((h.nwrite = 1, h.write = NULL));
	BAD((h.has_reply = 1, h.reply = cwrap));
	BAD((h.has_reply = 1, h.reply = cnull));
	/* §4.2.4: RDMA_NOMSG needs a chunk to hold the Payload stream */
	BAD(h.proc = RPCRDMA_NOMSG);
	BAD((h.proc = RPCRDMA_NOMSG, h.nread = 1, h.read = &r8));
	BAD((h.proc = RPCRDMA_NOMSG, h.nwrite = 1, h.write = &cok));
	/* RDMA_ERROR */
	BAD((h.proc = RPCRDMA_ERROR, h.err = 0));
	BAD((h.proc = RPCRDMA_ERROR, h.err = 3));
	BAD((h.proc = RPCRDMA_ERROR, h.err = RPCRDMA_ERR_VERS, h.vers_low = 2, h.vers_high = 1));
#undef BAD
	/* a segment ending exactly at 2^64 is fine */
	h = base;
	h.nwrite = 1;
	h.write = &cok;
	ck_assert_int_eq(rpcrdma_hdr_encode(buf, sizeof(buf), &h, 0), 28 + 4 + 4 + 16);
}
END_TEST

START_TEST(error_encode)
{
	struct rpcrdma_hdr bad, d;
	struct rpcrdma_dec_err e;
	struct store s;
	uint8_t msg[32], buf[64], exp[32];
	ssize_t r;

	/* a version-2 call: ERR_VERS with the call's XID and version (§4.5, §4.5.1) */
	tu_hex("cafef00d 00000002 00000010 00000000 00000000 00000000 00000000 cafef00d", msg, 32);
	store_init(&s, 0);
	r = rpcrdma_hdr_decode(msg, 32, &s.cfg, &bad, &e);
	ck_assert_int_eq(r, -EPROTONOSUPPORT);
	ck_assert_uint_eq(e.reply_err, RPCRDMA_ERR_VERS);
	ck_assert_int_eq(rpcrdma_rx_verdict(r, &bad, 1), RPCRDMA_V_SEND_ERR_VERS);
	ck_assert_int_eq(rpcrdma_error_encode(buf, sizeof(buf), &bad, 7, e.reply_err, 0), 28);
	tu_hex("cafef00d 00000002 00000007 00000004 00000001 00000001 00000001", exp, 28);
	ck_assert_int_eq(memcmp(buf, exp, 28), 0);
	/* the Requester of version 2 decodes it only as "another version" */
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 28, &s.cfg, &d, &e), -EPROTONOSUPPORT);
	ck_assert_uint_eq(e.reply_err, 0);

	/* a version-1 call with a bad discriminator: ERR_CHUNK */
	tu_hex("cafef00d 00000001 00000010 00000000 00000002 00000000 00000000 cafef00d", msg, 32);
	r = rpcrdma_hdr_decode(msg, 32, &s.cfg, &bad, &e);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_int_eq(rpcrdma_rx_verdict(r, &bad, 1), RPCRDMA_V_SEND_ERR_CHUNK);
	ck_assert_int_eq(rpcrdma_error_encode(buf, sizeof(buf), &bad, 7, e.reply_err, 0), 20);
	tu_hex("cafef00d 00000001 00000007 00000004 00000002", exp, 20);
	ck_assert_int_eq(memcmp(buf, exp, 20), 0);
	/* padded, a strict receiver takes it; so does a lenient one */
	ck_assert_int_eq(
		rpcrdma_error_encode(buf, sizeof(buf), &bad, 7, e.reply_err, RPCRDMA_EF_PAD_MIN),
		28);
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 28, &s.cfg, &d, &e), 20);
	ck_assert_uint_eq(d.proc, RPCRDMA_ERROR);
	ck_assert_uint_eq(d.err, RPCRDMA_ERR_CHUNK);
	ck_assert_uint_eq(d.xid, 0xcafef00d);
	ck_assert_int_eq(rpcrdma_rx_verdict(20, &d, 0), RPCRDMA_V_ACCEPT);
	ck_assert_int_eq(rpcrdma_rx_verdict(20, &d, 1), RPCRDMA_V_DROP);
	ck_assert_int_eq(rpcrdma_error_encode(buf, sizeof(buf), &bad, 7, 9, 0), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Decode validation, table-driven */

enum { CFG_BIG, CFG_TIGHT, CFG_SHORT_ERR, CFG_NO_XID, CFG_CHUNK1 };

struct dec_case {
	const char *name;
	int cfg;
	size_t len;	/* octets; 0: all the words */
	uint32_t w[48]; /* the message, 32-bit words */
	int nw;
	ssize_t ret; /* expected return (a header length: valid) */
	enum rpcrdma_reason reason;
	uint32_t reply_err;
	size_t offset;
	enum rpcrdma_verdict v_resp; /* verdict of a Responder */
};

#define X      XID
#define W(...) {__VA_ARGS__}, (int)(sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
#define ACC    RPCRDMA_V_ACCEPT
#define DRP    RPCRDMA_V_DROP
#define EVR    RPCRDMA_V_SEND_ERR_VERS
#define ECH    RPCRDMA_V_SEND_ERR_CHUNK
#define EV     RPCRDMA_ERR_VERS
#define EC     RPCRDMA_ERR_CHUNK
#define SA     0x11111111, 4096, 0x00001000, 0
#define SWRAP  0x11111111, 16, 0xffffffff, 0xfffffff8
#define SEND   0x11111111, 8, 0xffffffff, 0xfffffff8

static const struct dec_case dec_cases[] = {
	/* valid ones */
	{"empty RDMA_MSG", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0, 0, X), 28, 0, 0, 0, ACC},
	{"RDMA_MSG, XID unchecked", CFG_NO_XID, 0, W(X, 1, 32, 0, 0, 0, 0, 7), 28, 0, 0, 0, ACC},
	{"RDMA_MSG, no payload, XID unchecked", CFG_NO_XID, 0, W(X, 1, 32, 0, 0, 0, 0), 28, 0, 0, 0,
	 ACC},
	{"ERR_VERS", CFG_BIG, 0, W(X, 1, 32, 4, 1, 1, 1), 28, 0, 0, 0, DRP},
	{"ERR_VERS 1..3", CFG_BIG, 0, W(X, 1, 32, 4, 1, 1, 3), 28, 0, 0, 0, DRP},
	{"ERR_CHUNK padded", CFG_BIG, 0, W(X, 1, 32, 4, 2, 0, 0), 20, 0, 0, 0, DRP},
	{"ERR_CHUNK 20, short allowed", CFG_SHORT_ERR, 0, W(X, 1, 32, 4, 2), 20, 0, 0, 0, DRP},
	{"segment ending at 2^64", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 1, SEND, 0, 0, X), 52, 0, 0, 0,
	 ACC},
	{"Long Call", CFG_BIG, 0, W(X, 1, 32, 1, 1, 0, SA, 0, 0, 0), 52, 0, 0, 0, ACC},
	{"Long Reply", CFG_BIG, 0, W(X, 1, 32, 1, 0, 0, 1, 1, SA), 48, 0, 0, 0, ACC},
	{"RDMA_MSG with Position Zero chunk", CFG_BIG, 0, W(X, 1, 32, 0, 1, 0, SA, 0, 0, 0, 9), 52,
	 0, 0, 0, ACC},
	{"caps exactly met", CFG_TIGHT, 0,
	 W(X, 1, 32, 0, 1, 4, SA, 1, 8, SA, 0, 1, 1, SA, 1, 0, 0, 1, 3, SA, SA, SA, X), 160, 0, 0,
	 0, ACC},
	/* §4.5: the 28-octet minimum */
	{"27 octets", CFG_BIG, 27, W(X, 1, 32, 0, 0, 0, 0), -ENODATA, RPCRDMA_R_SHORT, 0, 0, DRP},
	{"4 octets", CFG_BIG, 0, W(X), -ENODATA, RPCRDMA_R_SHORT, 0, 0, DRP},
	{"fixed fields only", CFG_BIG, 0, W(X, 1, 32, 0), -ENODATA, RPCRDMA_R_SHORT, 0, 0, DRP},
	{"ERR_CHUNK 20 octets", CFG_BIG, 0, W(X, 1, 32, 4, 2), -ENODATA, RPCRDMA_R_SHORT, 0, 0,
	 DRP},
	{"RDMA_MSG 24, short allowed", CFG_SHORT_ERR, 0, W(X, 1, 32, 0, 0, 0), -ENODATA,
	 RPCRDMA_R_SHORT, 0, 0, DRP},
	{"RDMA_ERROR 19, short allowed", CFG_SHORT_ERR, 19, W(X, 1, 32, 4, 2), -ENODATA,
	 RPCRDMA_R_SHORT, 0, 0, DRP},
	{"RDMA_DONE bare", CFG_BIG, 0, W(X, 1, 32, 3), -ENODATA, RPCRDMA_R_SHORT, 0, 0, DRP},
	/* §4.5.1 */
	{"version 2", CFG_BIG, 0, W(X, 2, 32, 0, 0, 0, 0, X), -EPROTONOSUPPORT, RPCRDMA_R_VERS, EV,
	 4, EVR},
	{"version 0", CFG_BIG, 0, W(X, 0, 32, 0, 0, 0, 0, X), -EPROTONOSUPPORT, RPCRDMA_R_VERS, EV,
	 4, EVR},
	{"version 2, bad proc", CFG_BIG, 0, W(X, 2, 32, 9, 0, 0, 0), -EPROTONOSUPPORT,
	 RPCRDMA_R_VERS, EV, 4, EVR},
	{"version 2 RDMA_ERROR", CFG_BIG, 0, W(X, 2, 32, 4, 1, 2, 2), -EPROTONOSUPPORT,
	 RPCRDMA_R_VERS, 0, 4, DRP},
	/* §4.5.2, §4.6 */
	{"proc 5", CFG_BIG, 0, W(X, 1, 32, 5, 0, 0, 0), -EBADMSG, RPCRDMA_R_PROC, EC, 12, ECH},
	{"proc ~0", CFG_BIG, 0, W(X, 1, 32, 0xffffffff, 0, 0, 0), -EBADMSG, RPCRDMA_R_PROC, EC, 12,
	 ECH},
	{"RDMA_MSGP", CFG_BIG, 0, W(X, 1, 32, 2, 0, 0, 0, 0, 0), -EOPNOTSUPP, RPCRDMA_R_MSGP, EC,
	 12, ECH},
	{"RDMA_DONE", CFG_BIG, 0, W(X, 1, 32, 3, 0, 0, 0), -ENOMSG, RPCRDMA_R_DONE, 0, 12, DRP},
	{"Read list bool 2", CFG_BIG, 0, W(X, 1, 32, 0, 2, 0, 0, X), -EBADMSG, RPCRDMA_R_BOOL, EC,
	 16, ECH},
	{"Write list bool 2^31", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0x80000000, 0, X), -EBADMSG,
	 RPCRDMA_R_BOOL, EC, 20, ECH},
	{"Reply chunk bool 7", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0, 7, X), -EBADMSG, RPCRDMA_R_BOOL, EC,
	 24, ECH},
	{"second read bool 3", CFG_BIG, 0, W(X, 1, 32, 0, 1, 4, SA, 3, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_BOOL, EC, 40, ECH},
	{"read segment cut", CFG_BIG, 0, W(X, 1, 32, 0, 1, 0, 0), -EBADMSG, RPCRDMA_R_TRUNC, EC, 16,
	 ECH},
	{"Read list unterminated", CFG_BIG, 0, W(X, 1, 32, 0, 1, 4, SA), -EBADMSG, RPCRDMA_R_TRUNC,
	 EC, 40, ECH},
	{"position 2", CFG_BIG, 0, W(X, 1, 32, 0, 1, 2, SA, 0, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_POSITION, EC, 20, ECH},
	{"position 0xffffffff", CFG_BIG, 0, W(X, 1, 32, 0, 1, 0xffffffff, SA, 0, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_POSITION, EC, 20, ECH},
	{"read segment wraps", CFG_BIG, 0, W(X, 1, 32, 0, 1, 4, SWRAP, 0, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_SEG_WRAP, EC, 24, ECH},
	{"write count ~0", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 0xffffffff, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_TRUNC, EC, 24, ECH},
	{"write count 2, one segment", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 2, SA, 0, 0), -EBADMSG,
	 RPCRDMA_R_TRUNC, EC, 24, ECH},
	{"write segment cut", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 1), -EBADMSG, RPCRDMA_R_TRUNC, EC,
	 24, ECH},
	{"write count cut", CFG_BIG, 0, W(X, 1, 32, 0, 1, 4, SA, 0, 1), -EBADMSG, RPCRDMA_R_TRUNC,
	 EC, 48, ECH},
	{"Write list unterminated", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 1, SA), -EBADMSG,
	 RPCRDMA_R_TRUNC, EC, 44, ECH},
	{"write segment wraps", CFG_BIG, 0, W(X, 1, 32, 0, 0, 1, 1, SWRAP, 0, 0, X), -EBADMSG,
	 RPCRDMA_R_SEG_WRAP, EC, 28, ECH},
	{"reply count ~0", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0, 1, 0xffffffff, X), -EBADMSG,
	 RPCRDMA_R_TRUNC, EC, 28, ECH},
	{"reply count cut", CFG_BIG, 0, W(X, 1, 32, 1, 0, 0, 1), -EBADMSG, RPCRDMA_R_TRUNC, EC, 28,
	 ECH},
	{"reply segment wraps", CFG_BIG, 0, W(X, 1, 32, 1, 0, 0, 1, 1, SWRAP), -EBADMSG,
	 RPCRDMA_R_SEG_WRAP, EC, 32, ECH},
	/* caps: ERR_CHUNK, after the octets are known to be there */
	{"3 read segments, cap 2", CFG_TIGHT, 0,
	 W(X, 1, 32, 0, 1, 4, SA, 1, 4, SA, 1, 8, SA, 0, 0, 0, X), -E2BIG, RPCRDMA_R_CAP, EC, 64,
	 ECH},
	{"3 write chunks, cap 2", CFG_TIGHT, 0, W(X, 1, 32, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, X),
	 -E2BIG, RPCRDMA_R_CAP, EC, 36, ECH},
	{"3rd write chunk cut, cap 2", CFG_TIGHT, 0, W(X, 1, 32, 0, 0, 1, 0, 1, 0, 1), -EBADMSG,
	 RPCRDMA_R_TRUNC, EC, 40, ECH},
	{"5 segments, cap 4", CFG_TIGHT, 0, W(X, 1, 32, 0, 0, 1, 3, SA, SA, SA, 0, 1, 2, SA, SA),
	 -E2BIG, RPCRDMA_R_CAP, EC, 84, ECH},
	{"chunk of 2, per-chunk cap 1", CFG_CHUNK1, 0, W(X, 1, 32, 0, 0, 1, 2, SA, SA, 0, 0, X),
	 -E2BIG, RPCRDMA_R_CAP, EC, 24, ECH},
	{"reply chunk of 2, per-chunk cap 1", CFG_CHUNK1, 0, W(X, 1, 32, 1, 0, 0, 1, 2, SA, SA),
	 -E2BIG, RPCRDMA_R_CAP, EC, 28, ECH},
	/* §4.2.4 / §4.5.2: RDMA_NOMSG must carry its Payload stream somewhere */
	{"RDMA_NOMSG, no chunks", CFG_BIG, 0, W(X, 1, 32, 1, 0, 0, 0), -EBADMSG,
	 RPCRDMA_R_NOMSG_EMPTY, EC, 12, ECH},
	{"RDMA_NOMSG, Write list only", CFG_BIG, 0, W(X, 1, 32, 1, 0, 1, 1, SA, 0, 0), -EBADMSG,
	 RPCRDMA_R_NOMSG_EMPTY, EC, 12, ECH},
	{"RDMA_NOMSG, Read chunk at 8 only", CFG_BIG, 0, W(X, 1, 32, 1, 1, 8, SA, 0, 0, 0),
	 -EBADMSG, RPCRDMA_R_NOMSG_EMPTY, EC, 12, ECH},
	/* §4.5.2: rdma_xid against the RPC message's XID */
	{"XID mismatch", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0, 0, X + 1), -EBADMSG, RPCRDMA_R_XID, EC,
	 28, ECH},
	{"no Payload stream", CFG_BIG, 0, W(X, 1, 32, 0, 0, 0, 0), -EBADMSG, RPCRDMA_R_XID, EC, 28,
	 ECH},
	{"3-octet Payload stream", CFG_BIG, 31, W(X, 1, 32, 0, 0, 0, 0, X), -EBADMSG, RPCRDMA_R_XID,
	 EC, 28, ECH},
	/* §4.5: an RDMA_ERROR that cannot be decoded is discarded */
	{"rdma_err 3", CFG_BIG, 0, W(X, 1, 32, 4, 3, 0, 0), -EBADMSG, RPCRDMA_R_ERR_CODE, 0, 16,
	 DRP},
	{"rdma_err 0", CFG_BIG, 0, W(X, 1, 32, 4, 0, 0, 0), -EBADMSG, RPCRDMA_R_ERR_CODE, 0, 16,
	 DRP},
	{"ERR_VERS 2..1", CFG_BIG, 0, W(X, 1, 32, 4, 1, 2, 1), -EBADMSG, RPCRDMA_R_ERR_RANGE, 0, 20,
	 DRP},
	{"ERR_VERS cut, short allowed", CFG_SHORT_ERR, 0, W(X, 1, 32, 4, 1, 1), -EBADMSG,
	 RPCRDMA_R_TRUNC, 0, 20, DRP},
	{"rdma_err 3 short, short allowed", CFG_SHORT_ERR, 0, W(X, 1, 32, 4, 3), -EBADMSG,
	 RPCRDMA_R_ERR_CODE, 0, 16, DRP},
};
#define NDEC (int)(sizeof(dec_cases) / sizeof(dec_cases[0]))

static void case_cfg(struct store *s, int which)
{
	store_init(s, 0);
	switch (which) {
	case CFG_TIGHT:
		s->cfg.max_read = 2;
		s->cfg.max_write = 2;
		s->cfg.max_segs = 4;
		break;
	case CFG_SHORT_ERR:
		s->cfg.flags = RPCRDMA_DF_SHORT_ERROR;
		break;
	case CFG_NO_XID:
		s->cfg.flags = RPCRDMA_DF_NO_XID_CHECK;
		break;
	case CFG_CHUNK1:
		s->cfg.max_chunk_segs = 1;
		break;
	default:
		break;
	}
}

START_TEST(decode_table)
{
	const struct dec_case *c = &dec_cases[_i];
	uint8_t buf[sizeof(c->w)];
	size_t len = c->len ? c->len : (size_t)c->nw * 4;
	struct rpcrdma_hdr h;
	struct rpcrdma_dec_err e;
	struct store s;
	ssize_t want = c->ret, r;

	for (int i = 0; i < c->nw; i++)
		put_be32(buf + 4 * i, c->w[i]);
	case_cfg(&s, c->cfg);
	r = decode_exact(buf, len, &s.cfg, &h, &e);
	if (want > 0) {
		ck_assert_msg(r == want, "%s: %zd (%s at %zu), want %zd", c->name, r,
			      rpcrdma_reason_name(e.reason), e.offset, want);
		ck_assert_int_eq(rpcrdma_hdr_len(&h), r);
		ck_assert_int_eq(e.reason, RPCRDMA_R_NONE);
	} else {
		ck_assert_msg(r == want, "%s: returned %zd (%s at %zu), want %zd", c->name, r,
			      rpcrdma_reason_name(e.reason), e.offset, want);
		ck_assert_msg(e.reason == c->reason, "%s: reason %s, want %s", c->name,
			      rpcrdma_reason_name(e.reason), rpcrdma_reason_name(c->reason));
		ck_assert_uint_eq(e.reply_err, c->reply_err);
		ck_assert_msg(e.offset == c->offset, "%s: offset %zu, want %zu", c->name, e.offset,
			      c->offset);
		/* the fixed fields are there to echo, unless too short to trust */
		if (r == -ENODATA) {
			ck_assert_uint_eq(h.xid, 0);
		} else {
			ck_assert_uint_eq(h.xid, X);
			ck_assert_uint_eq(h.vers, c->w[1]);
			ck_assert_uint_eq(h.proc, c->w[3]);
		}
		/* nothing of a refused header but its fixed fields */
		ck_assert(h.nread == 0 && h.nwrite == 0 && !h.has_reply && !h.read && !h.write);
		/* the reply_err is what the verdict does */
		ck_assert_int_eq(e.reply_err == 0, rpcrdma_rx_verdict(r, &h, 1) == RPCRDMA_V_DROP);
	}
	ck_assert_msg(rpcrdma_rx_verdict(r, &h, 1) == c->v_resp, "%s: Responder verdict %d",
		      c->name, rpcrdma_rx_verdict(r, &h, 1));
	/* a Requester accepts valid replies (RDMA_ERROR included) without a Read
	 * list, drops the rest */
	ck_assert_int_eq(rpcrdma_rx_verdict(r, &h, 0), r >= 0 && !h.nread ? ACC : DRP);
	/* with no error structure passed, the same result */
	{
		struct rpcrdma_hdr h2;

		ck_assert_int_eq(decode_exact(buf, len, &s.cfg, &h2, NULL), r);
	}
}
END_TEST

START_TEST(decode_bad_cfg)
{
	uint8_t buf[32] = {0};
	struct rpcrdma_dec_cfg cfg = {.max_read = 1};
	struct rpcrdma_hdr h;

	ck_assert_int_eq(rpcrdma_hdr_decode(buf, sizeof(buf), &cfg, &h, NULL), -EINVAL);
	ck_assert_int_eq(rpcrdma_rx_verdict(-EINVAL, &h, 1), RPCRDMA_V_DROP);
	cfg.max_read = 0;
	cfg.max_segs = 3;
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, sizeof(buf), &cfg, &h, NULL), -EINVAL);
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 0, &cfg, &h, NULL), -EINVAL);
	/* no arrays at all: only chunkless headers decode */
	memset(&cfg, 0, sizeof(cfg));
	tu_hex("01020304 00000001 00000001 00000000 00000000 00000000 00000000 01020304", buf, 32);
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 32, &cfg, &h, NULL), 28);
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 0, &cfg, &h, NULL), -ENODATA);
	put_be32(buf + 20, 1);
	ck_assert_int_eq(rpcrdma_hdr_decode(buf, 32, &cfg, &h, NULL), -E2BIG);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Truncation at every length */

static void check_prefixes(const uint8_t *msg, size_t len, unsigned flags)
{
	struct rpcrdma_hdr full, h;
	struct rpcrdma_dec_err e;
	struct store s;
	ssize_t hl, r;
	size_t min;
	int pos0 = 0;

	store_init(&s, flags);
	hl = decode_exact(msg, len, &s.cfg, &full, &e);
	ck_assert_msg(hl > 0, "%zd (%s)", hl, rpcrdma_reason_name(e.reason));
	min = full.proc == RPCRDMA_ERROR && (flags & RPCRDMA_DF_SHORT_ERROR) ? 20 : 28;
	for (uint32_t i = 0; i < full.nread; i++)
		pos0 |= full.read[i].position == 0;
	for (size_t l = 0; l <= len; l++) {
		r = decode_exact(msg, l, &s.cfg, &h, &e);
		if (l < min) {
			ck_assert_msg(r == -ENODATA, "length %zu: %zd", l, r);
			ck_assert_int_eq(e.reason, RPCRDMA_R_SHORT);
		} else if (l < (size_t)hl) {
			ck_assert_msg(r == -EBADMSG && e.reason == RPCRDMA_R_TRUNC,
				      "length %zu of %zd: %zd (%s)", l, hl, r,
				      rpcrdma_reason_name(e.reason));
		} else if (full.proc == RPCRDMA_MSG && l < (size_t)hl + 4 &&
			   !(flags & RPCRDMA_DF_NO_XID_CHECK) && !pos0) {
			ck_assert_int_eq(r, -EBADMSG);
			ck_assert_int_eq(e.reason, RPCRDMA_R_XID);
		} else {
			ck_assert_msg(r == hl, "length %zu: %zd", l, r);
			assert_hdr_eq(&full, &h);
		}
	}
}

START_TEST(truncation_made)
{
	uint8_t buf[1024];
	ssize_t n;
	size_t len;

	n = rpcrdma_hdr_encode(buf, sizeof(buf), &rt_hdrs[_i], 0);
	ck_assert_int_gt(n, 0);
	len = (size_t)n;
	if (rt_hdrs[_i].vers != 1)
		return;
	if (rt_hdrs[_i].proc == RPCRDMA_MSG) {
		put_be32(buf + len, XID);
		len += 4;
	}
	check_prefixes(buf, len, RPCRDMA_DF_SHORT_ERROR);
	if (n >= RPCRDMA_HDR_MIN)
		check_prefixes(buf, len, 0);
	else
		ck_assert_int_eq(rpcrdma_hdr_len(&rt_hdrs[_i]), 20);
}
END_TEST

START_TEST(truncation_capture)
{
	cap_load();
	for (int i = 0; i < RV_NRECS; i++)
		if (cap[i].kind == 1)
			check_prefixes(cap[i].data, cap[i].len, 0);
	cap_unload();
}
END_TEST

/* Caps at the capture's own counts: met exactly passes, one less fails. */
START_TEST(caps_capture)
{
	cap_load();
	for (int i = 0; i < RV_NRECS; i++) {
		const struct rv_rec *v = &rv_recs[i];
		uint32_t nsegs = v->reply_nsegs, maxch = v->reply_nsegs;
		struct rpcrdma_hdr h;
		struct rpcrdma_dec_err e;
		struct store s;

		if (v->kind != 1)
			continue;
		for (uint32_t c = 0; c < v->nwrite; c++) {
			nsegs += rv_chunks[v->write_first + c].nsegs;
			if (rv_chunks[v->write_first + c].nsegs > maxch)
				maxch = rv_chunks[v->write_first + c].nsegs;
		}
		store_init(&s, 0);
		s.cfg.max_read = v->nread;
		s.cfg.max_write = v->nwrite;
		s.cfg.max_segs = nsegs;
		s.cfg.max_chunk_segs = maxch;
		ck_assert_int_eq(decode_exact(cap[i].data, cap[i].len, &s.cfg, &h, &e),
				 (ssize_t)v->hdr_len);
		for (int k = 0; k < 4; k++) {
			struct rpcrdma_dec_cfg t = s.cfg;
			uint32_t *cap_k = k == 0   ? &t.max_read
					  : k == 1 ? &t.max_write
					  : k == 2 ? &t.max_segs
						   : &t.max_chunk_segs;

			/* nothing to take away; a per-chunk cap of 0 means none */
			if (*cap_k == 0 || (k == 3 && *cap_k == 1))
				continue;
			(*cap_k)--;
			ck_assert_int_eq(decode_exact(cap[i].data, cap[i].len, &t, &h, &e), -E2BIG);
			ck_assert_int_eq(e.reason, RPCRDMA_R_CAP);
			ck_assert_uint_eq(e.reply_err, RPCRDMA_ERR_CHUNK);
		}
	}
	cap_unload();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The capture: every header, decoded to what it means, re-encoded */

static void assert_matches_vector(int i, const struct rpcrdma_hdr *h)
{
	const struct rv_rec *v = &rv_recs[i];

	ck_assert_uint_eq(h->xid, v->xid);
	ck_assert_uint_eq(h->vers, 1);
	ck_assert_uint_eq(h->credits, v->credits);
	ck_assert_uint_eq(h->proc, v->proc);
	ck_assert_uint_eq(h->nread, v->nread);
	for (uint32_t k = 0; k < v->nread; k++) {
		const struct rv_rseg *r = &rv_rsegs[v->read_first + k];

		ck_assert_uint_eq(h->read[k].position, r->position);
		ck_assert_uint_eq(h->read[k].seg.handle, r->handle);
		ck_assert_uint_eq(h->read[k].seg.length, r->length);
		ck_assert_uint_eq(h->read[k].seg.offset, r->offset);
	}
	ck_assert_uint_eq(h->nwrite, v->nwrite);
	for (uint32_t c = 0; c < v->nwrite; c++) {
		const struct rv_chunk *ch = &rv_chunks[v->write_first + c];

		ck_assert_uint_eq(h->write[c].nsegs, ch->nsegs);
		for (uint32_t k = 0; k < ch->nsegs; k++) {
			const struct rv_seg *sv = &rv_segs[ch->first + k];

			ck_assert_uint_eq(h->write[c].segs[k].handle, sv->handle);
			ck_assert_uint_eq(h->write[c].segs[k].length, sv->length);
			ck_assert_uint_eq(h->write[c].segs[k].offset, sv->offset);
		}
	}
	ck_assert_int_eq(h->has_reply, v->has_reply);
	ck_assert_uint_eq(h->reply.nsegs, v->reply_nsegs);
	for (uint32_t k = 0; k < v->reply_nsegs; k++) {
		const struct rv_seg *sv = &rv_segs[v->reply_first + k];

		ck_assert_uint_eq(h->reply.segs[k].handle, sv->handle);
		ck_assert_uint_eq(h->reply.segs[k].length, sv->length);
		ck_assert_uint_eq(h->reply.segs[k].offset, sv->offset);
	}
}

START_TEST(capture_headers)
{
	int nsend = 0;

	cap_load();
	for (int i = 0; i < RV_NRECS; i++) {
		const struct rv_rec *v = &rv_recs[i];
		struct rpcrdma_hdr h;
		struct store s;
		uint8_t out[512];
		ssize_t r;

		ck_assert_int_eq(cap[i].kind, v->kind);
		ck_assert_int_eq(cap[i].conn, v->conn);
		ck_assert_int_eq(cap[i].dir, v->dir);
		ck_assert_uint_eq(cap[i].len, v->len);
		if (v->kind != 1)
			continue;
		nsend++;
		ck_assert_uint_eq(cap[i].msn, v->msn);
		store_init(&s, 0);
		r = cap_decode(i, &s, &h);
		ck_assert_int_eq(r, (ssize_t)v->hdr_len);
		assert_matches_vector(i, &h);
		/* the RPC message follows an RDMA_MSG header; RDMA_NOMSG has none */
		if (v->proc == RPCRDMA_MSG) {
			ck_assert_uint_ge(cap[i].len, (size_t)r + 8);
			ck_assert_uint_eq(get_be32(cap[i].data + r), h.xid);
			ck_assert_uint_eq(get_be32(cap[i].data + r + 4), v->call ? 0 : 1);
		} else {
			ck_assert_uint_eq(cap[i].len, (size_t)r);
		}
		/* byte for byte */
		ck_assert_int_eq(rpcrdma_hdr_len(&h), r);
		ck_assert_int_eq(rpcrdma_hdr_encode(out, sizeof(out), &h, 0), r);
		ck_assert_int_eq(memcmp(out, cap[i].data, (size_t)r), 0);
		/* and both ends take it: calls as Responder, replies as Requester */
		ck_assert_int_eq(rpcrdma_rx_verdict(r, &h, v->call), RPCRDMA_V_ACCEPT);
		/* §4.2.3: requested credits in calls, granted (never 0) in replies */
		ck_assert_uint_gt(h.credits, 0);
	}
	ck_assert_int_eq(nsend, 110);
	cap_unload();
}
END_TEST

/* Each reply against its call: the §3.4.6 / §4.3.3 copy rules, invalidation. */
START_TEST(capture_pairs)
{
	int pairs = 0, inv = 0, long_replies = 0;

	cap_load();
	for (int i = 0; i < RV_NRECS; i++) {
		const struct rv_rec *v = &rv_recs[i];
		struct rpcrdma_hdr call, rep;
		struct rpcrdma_chunk_info ci;
		struct rpcrdma_dec_err e;
		struct store sc, sr;
		ssize_t hl;

		if (v->kind != 1 || v->call)
			continue;
		ck_assert_int_ge(v->peer, 0);
		store_init(&sc, 0);
		store_init(&sr, 0);
		cap_decode(v->peer, &sc, &call);
		hl = cap_decode(i, &sr, &rep);
		ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);
		pairs++;
		rpcrdma_chunk_info(&call, &ci);
		/* Linux answered with the chunks the call provided */
		ck_assert_uint_eq(rep.nwrite, ci.write_chunks);
		if (rep.proc == RPCRDMA_NOMSG) {
			/* a Long Reply: only with a Reply chunk, and it fits */
			ck_assert(ci.reply_chunk);
			ck_assert(rep.has_reply);
			ck_assert_uint_le(rpcrdma_chunk_len(&rep.reply), ci.reply_len);
			long_replies++;
		} else {
			/* an inline reply fit the 4 KiB reply inline threshold */
			ck_assert_uint_le(cap[i].len, 4096);
			ck_assert_int_eq(
				rpcrdma_reply_form(&ci, (size_t)hl, cap[i].len - (size_t)hl, 4096),
				RPCRDMA_MSG);
		}
		/* RFC 8797 §4.1: Send with Invalidate names an STag of this XID */
		if (cap[i].op == 4 || cap[i].op == 6) {
			int found = 0;

			for (uint32_t k = 0; k < call.nread; k++)
				found |= call.read[k].seg.handle == cap[i].inv;
			for (uint32_t c = 0; c < call.nwrite; c++)
				for (uint32_t k = 0; k < call.write[c].nsegs; k++)
					found |= call.write[c].segs[k].handle == cap[i].inv;
			for (uint32_t k = 0; k < call.reply.nsegs; k++)
				found |= call.reply.segs[k].handle == cap[i].inv;
			ck_assert_msg(found, "reply %d invalidates %08x, not the call's", i,
				      cap[i].inv);
			inv++;
		}
	}
	ck_assert_int_eq(pairs, 55);
	ck_assert_int_eq(long_replies, 12);
	ck_assert_int_eq(inv, 18);
	cap_unload();
}
END_TEST

/* A few vectors checked by hand against the RFC's meaning. */
START_TEST(capture_by_hand)
{
	struct rpcrdma_hdr h, r;
	struct rpcrdma_chunk_info ci;
	struct store s, t;
	ssize_t hl;
	int i;

	/* NFSv3 READ (program 100003, version 3, procedure 6) with a Write list of
	 * one chunk of one 4 KiB segment for the data (§4.3.2) */
	i = cap_find(0, 0, 11);
	store_init(&s, 0);
	hl = cap_decode(i, &s, &h);
	ck_assert_int_eq(hl, 28 + 4 + 4 + 16);
	ck_assert_uint_eq(h.xid, 0x014678ca);
	ck_assert_uint_eq(h.credits, 128);
	ck_assert_uint_eq(h.proc, RPCRDMA_MSG);
	ck_assert_uint_eq(h.nread, 0);
	ck_assert_uint_eq(h.nwrite, 1);
	ck_assert_uint_eq(h.write[0].nsegs, 1);
	ck_assert_uint_eq(h.write[0].segs[0].handle, 0xcad50b01);
	ck_assert_uint_eq(h.write[0].segs[0].length, 4096);
	ck_assert_uint_eq(h.write[0].segs[0].offset, 0x014678ca84831000ull);
	ck_assert(!h.has_reply);
	ck_assert_uint_eq(get_be32(cap[i].data + hl), 0x014678ca); /* RPC XID */
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 4), 0);	   /* CALL */
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 12), 100003);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 16), 3);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 20), 6);
	rpcrdma_chunk_info(&h, &ci);
	ck_assert_uint_eq(ci.write_chunks, 1);
	ck_assert_uint_eq(ci.write_len, 4096);
	ck_assert(!ci.reply_chunk && !ci.long_call);
	/* its reply: the chunk copied with the length written, 25 octets, no
	 * roundup (§3.4.6.2), sent with Invalidate of that very STag */
	i = cap_find(0, 1, 11);
	store_init(&t, 0);
	hl = cap_decode(i, &t, &r);
	ck_assert_uint_eq(r.credits, 64);
	ck_assert_uint_eq(r.write[0].segs[0].handle, 0xcad50b01);
	ck_assert_uint_eq(r.write[0].segs[0].length, 25);
	ck_assert_uint_eq(r.write[0].segs[0].offset, 0x014678ca84831000ull);
	ck_assert_uint_eq(cap[i].op, 4);
	ck_assert_uint_eq(cap[i].inv, 0xcad50b01);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 4), 1); /* REPLY */

	/* NFSv3 WRITE (procedure 7): a Read list of one 256 KiB segment at XDR
	 * position 112, where the opaque data would start (§3.4.5) */
	i = cap_find(0, 0, 15);
	store_init(&s, 0);
	hl = cap_decode(i, &s, &h);
	ck_assert_int_eq(hl, 28 + 24);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 20), 7);
	ck_assert_uint_eq(h.nread, 1);
	ck_assert_uint_eq(h.read[0].position, 112);
	ck_assert_uint_eq(h.read[0].seg.handle, 0xedd42201);
	ck_assert_uint_eq(h.read[0].seg.length, 262144);
	ck_assert_uint_eq(h.read[0].seg.offset, 0x054678ca84836000ull);
	rpcrdma_chunk_info(&h, &ci);
	ck_assert_uint_eq(ci.read_chunks, 1);
	ck_assert(!ci.long_call);
	ck_assert_uint_eq(ci.read_len, 262144);
	/* the reduced Payload stream stops at the position: 112 octets inline
	 * (the opaque's length word is the last of them, §3.4.4.1) */
	ck_assert_uint_eq(cap[i].len - (size_t)hl, 112);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 108), 262144);

	/* NFSv3 READDIRPLUS (procedure 17): a Reply chunk of three segments; the
	 * reply is a Long Reply, RDMA_NOMSG with the lengths written: 124 + 472,
	 * the third segment unused (§4.3.3) */
	i = cap_find(0, 0, 25);
	store_init(&s, 0);
	hl = cap_decode(i, &s, &h);
	ck_assert_int_eq(hl, 28 + 4 + 3 * 16);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 20), 17);
	ck_assert(h.has_reply);
	ck_assert_uint_eq(h.reply.nsegs, 3);
	ck_assert_uint_eq(h.reply.segs[0].handle, 0xcad50b06);
	ck_assert_uint_eq(h.reply.segs[0].length, 124);
	ck_assert_uint_eq(h.reply.segs[1].handle, 0x52147201);
	ck_assert_uint_eq(h.reply.segs[1].length, 65536);
	ck_assert_uint_eq(h.reply.segs[1].offset, 0x0f4678cafffbb000ull);
	ck_assert_uint_eq(h.reply.segs[2].length, 4);
	i = cap_find(0, 1, 25);
	store_init(&t, 0);
	hl = cap_decode(i, &t, &r);
	ck_assert_uint_eq(r.proc, RPCRDMA_NOMSG);
	ck_assert_uint_eq(cap[i].len, (size_t)hl);
	ck_assert_uint_eq(r.reply.nsegs, 3);
	ck_assert_uint_eq(r.reply.segs[0].length, 124);
	ck_assert_uint_eq(r.reply.segs[1].length, 472);
	ck_assert_uint_eq(r.reply.segs[2].length, 0);
	ck_assert_uint_eq(rpcrdma_chunk_len(&r.reply), 596);
	ck_assert_uint_eq(cap[i].op, 3); /* plain Send: no Write chunk to invalidate */

	/* NFSv4 COMPOUND with a one-segment Reply chunk; answered RDMA_NOMSG
	 * with Send with Invalidate of the Reply chunk's STag */
	i = cap_find(1, 0, 2);
	store_init(&s, 0);
	hl = cap_decode(i, &s, &h);
	ck_assert_int_eq(hl, 28 + 4 + 16);
	ck_assert_uint_eq(get_be32(cap[i].data + hl + 16), 4); /* NFS version 4 */
	ck_assert_uint_eq(h.reply.nsegs, 1);
	ck_assert_uint_eq(h.reply.segs[0].handle, 0xfa336101);
	ck_assert_uint_eq(h.reply.segs[0].length, 4240);
	i = cap_find(1, 1, 2);
	store_init(&t, 0);
	hl = cap_decode(i, &t, &r);
	ck_assert_int_eq(hl, 48);
	ck_assert_uint_eq(r.proc, RPCRDMA_NOMSG);
	ck_assert_uint_eq(r.reply.segs[0].length, 100);
	ck_assert_uint_eq(cap[i].inv, 0xfa336101);
	cap_unload();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Reply-side helpers */

START_TEST(chunk_info_made)
{
	struct rpcrdma_chunk_info ci;

	rpcrdma_chunk_info(&rt_hdrs[3], &ci); /* Long Call */
	ck_assert_uint_eq(ci.read_segs, 5);
	ck_assert_uint_eq(ci.read_chunks, 3);
	ck_assert(ci.long_call);
	ck_assert_uint_eq(ci.pos0_len, 128);
	ck_assert_uint_eq(ci.read_len, 100 + 28 + 4096 + 3 + 1);
	ck_assert(ci.reply_chunk);
	ck_assert_uint_eq(ci.reply_segs, 1);
	ck_assert_uint_eq(ci.reply_len, 65536);
	rpcrdma_chunk_info(&rt_hdrs[2], &ci);
	ck_assert_uint_eq(ci.write_chunks, 3);
	ck_assert_uint_eq(ci.write_empty, 1);
	ck_assert_uint_eq(ci.write_len, 8193);
	ck_assert_uint_eq(ci.write_max, 8192);
	ck_assert_uint_eq(ci.reply_segs, 2);
	rpcrdma_chunk_info(&rt_hdrs[6], &ci); /* RDMA_ERROR: nothing */
	ck_assert_uint_eq(ci.read_segs + ci.write_chunks + (uint32_t)ci.reply_chunk, 0);
	/* no overflow on the largest lengths */
	{
		struct rpcrdma_seg big[3] = {
			{1, UINT32_MAX, 0}, {2, UINT32_MAX, 0}, {3, UINT32_MAX, 0}};
		struct rpcrdma_chunk c = {3, big};

		ck_assert_uint_eq(rpcrdma_chunk_len(&c), 3ull * UINT32_MAX);
	}
}
END_TEST

START_TEST(reply_form)
{
	struct rpcrdma_chunk_info none = {0}, rc = {.reply_chunk = 1, .reply_len = 5000};

	/* §4.3.3: fits the inline threshold: inline, Reply chunk or not */
	ck_assert_int_eq(rpcrdma_reply_form(&none, 28, 996, 1024), RPCRDMA_MSG);
	ck_assert_int_eq(rpcrdma_reply_form(&rc, 28, 996, 1024), RPCRDMA_MSG);
	/* §3.5.3: too large: the Reply chunk MUST be used */
	ck_assert_int_eq(rpcrdma_reply_form(&rc, 28, 997, 1024), RPCRDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_reply_form(&rc, 28, 5000, 1024), RPCRDMA_NOMSG);
	/* no Reply chunk, or too small: no reply possible (§4.5.3: ERR_CHUNK) */
	ck_assert_int_eq(rpcrdma_reply_form(&none, 28, 997, 1024), -EMSGSIZE);
	ck_assert_int_eq(rpcrdma_reply_form(&rc, 28, 5001, 1024), -EMSGSIZE);
	/* a header alone above the threshold */
	ck_assert_int_eq(rpcrdma_reply_form(&rc, 2000, 0, 1024), RPCRDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_reply_form(&none, SIZE_MAX, SIZE_MAX, 1024), -EMSGSIZE);
}
END_TEST

START_TEST(reply_check)
{
	struct rpcrdma_seg cs[4] = {{0x10, 4096, 0x1000},
				    {0x11, 4096, 0x2000},
				    {0x12, 8192, 0x3000},
				    {0x13, 1024, 0x4000}};
	struct rpcrdma_seg rs[4];
	struct rpcrdma_chunk cw[2] = {{2, &cs[0]}, {1, &cs[2]}}, rw[3];
	struct rpcrdma_read_seg rd = {0, {1, 2, 3}};
	struct rpcrdma_hdr call = {.xid = XID,
				   .vers = 1,
				   .proc = RPCRDMA_MSG,
				   .nwrite = 2,
				   .write = cw,
				   .has_reply = 1,
				   .reply = {1, &cs[3]}};
	struct rpcrdma_hdr rep;
	struct rpcrdma_dec_err e;

#define REPLY_RESET()                                          \
	do {                                                   \
		memcpy(rs, cs, sizeof(rs));                    \
		rw[0] = (struct rpcrdma_chunk){2, &rs[0]};     \
		rw[1] = (struct rpcrdma_chunk){1, &rs[2]};     \
		rep = call;                                    \
		rep.write = rw;                                \
		rep.reply = (struct rpcrdma_chunk){1, &rs[3]}; \
	} while (0)
#define REPLY_BAD(stmt, why)                                                       \
	do {                                                                       \
		REPLY_RESET();                                                     \
		stmt;                                                              \
		ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), -EPROTO);   \
		ck_assert_int_eq(e.reason, why);                                   \
		ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, NULL), -EPROTO); \
	} while (0)

	REPLY_RESET();
	ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);
	/* lengths updated to what was written; unused chunk (all empty) */
	rs[0].length = 4096;
	rs[1].length = 17;
	rs[2].length = 0;
	rs[3].length = 0;
	ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);
	/* Linux returns no Reply chunk when the reply went inline */
	REPLY_RESET();
	rep.has_reply = 0;
	ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);
	REPLY_RESET();
	rep.proc = RPCRDMA_NOMSG;
	ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);
	/* an RDMA_ERROR completes the XID whatever it carries */
	REPLY_RESET();
	rep.proc = RPCRDMA_ERROR;
	rep.err = RPCRDMA_ERR_CHUNK;
	rep.nwrite = 0;
	ck_assert_int_eq(rpcrdma_reply_check(&call, &rep, &e), 0);

	REPLY_BAD(rep.xid++, RPCRDMA_R_REPLY_XID);
	REPLY_BAD(rep.proc = RPCRDMA_DONE, RPCRDMA_R_REPLY_PROC);
	REPLY_BAD((rep.nread = 1, rep.read = &rd), RPCRDMA_R_REPLY_READ);
	REPLY_BAD(rs[1].length = 4097, RPCRDMA_R_REPLY_WRITE);
	REPLY_BAD(rs[0].handle = 0x99, RPCRDMA_R_REPLY_WRITE);
	REPLY_BAD(rs[2].offset += 4, RPCRDMA_R_REPLY_WRITE);
	REPLY_BAD(rw[0].nsegs = 1, RPCRDMA_R_REPLY_WRITE);
	REPLY_BAD((rw[2] = rw[1], rep.nwrite = 3), RPCRDMA_R_REPLY_WRITE);
	REPLY_BAD(rs[3].length = 1025, RPCRDMA_R_REPLY_CHUNK);
	REPLY_BAD(rs[3].handle = 0, RPCRDMA_R_REPLY_CHUNK);
	REPLY_BAD(rep.reply.nsegs = 0, RPCRDMA_R_REPLY_CHUNK);
	/* a Reply chunk the call did not provide */
	call.has_reply = 0;
	REPLY_BAD(rep.has_reply = 1, RPCRDMA_R_REPLY_CHUNK);
#undef REPLY_BAD
#undef REPLY_RESET
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(rpcrdma_proc_name(RPCRDMA_MSG), "RDMA_MSG");
	ck_assert_str_eq(rpcrdma_proc_name(RPCRDMA_ERROR), "RDMA_ERROR");
	ck_assert_str_eq(rpcrdma_proc_name(5), "unknown");
	for (int r = 0; r < RPCRDMA_R_COUNT; r++)
		ck_assert_ptr_nonnull(rpcrdma_reason_name((enum rpcrdma_reason)r));
	ck_assert_str_eq(rpcrdma_reason_name(RPCRDMA_R_COUNT), "unknown");
}
END_TEST

/* ------------------------------------------------------------------ */
/* RFC 8797 private data */

START_TEST(cm_capture)
{
	struct rpcrdma_cm_pd pd[2] = {{0}};
	ssize_t ret[2] = {-ENOENT, -ENOENT};
	int conns = 0;

	cap_load();
	for (int i = 0; i < RV_NRECS; i++) {
		const struct rv_rec *v = &rv_recs[i];
		int reply = v->kind == 3;
		struct mpa_rr rr;
		struct rpcrdma_cm_pd p;
		uint8_t out[8];
		ssize_t r;

		if (v->kind == 1)
			continue;
		/* the MPA frame, then RFC 8797 after the RFC 6581 IRD/ORD words */
		ck_assert_int_eq(mpa_rr_parse(cap[i].data, cap[i].len, reply, 0, &rr),
				 (ssize_t)cap[i].len);
		ck_assert(rr.enhanced);
		ck_assert_uint_eq(rr.ulp_pd_len, 8);
		r = rpcrdma_cm_decode(rr.ulp_pd, rr.ulp_pd_len, &p);
		ck_assert_int_eq(r, v->cm_off);
		ck_assert_int_eq(p.remote_inv, v->cm_r);
		ck_assert_uint_eq(p.send_size, v->cm_send);
		ck_assert_uint_eq(p.recv_size, v->cm_recv);
		/* what Linux meant: 4 KiB both ways; the client (R=1) lets STags be
		 * invalidated remotely, the server does not set R */
		ck_assert_uint_eq(p.send_size, 4096);
		ck_assert_uint_eq(p.recv_size, 4096);
		ck_assert_int_eq(p.remote_inv, reply ? 0 : 1);
		ck_assert_int_eq(rpcrdma_cm_encode(out, sizeof(out), &p), 8);
		ck_assert_int_eq(memcmp(out, rr.ulp_pd, 8), 0);
		/* the whole private data, IRD/ORD words included, is searched too */
		ck_assert_int_eq(rpcrdma_cm_decode(cap[i].data + 20, rr.pd_len, &p), 4);
		pd[reply] = p;
		ret[reply] = r;
		if (reply) {
			struct rpcrdma_inline cli, srv;

			conns++;
			rpcrdma_cm_negotiate(&pd[0], &pd[1], ret[1], &cli);
			rpcrdma_cm_negotiate(&pd[1], &pd[0], ret[0], &srv);
			ck_assert_uint_eq(cli.send_max, 4096);
			ck_assert_uint_eq(cli.recv_max, 4096);
			ck_assert_uint_eq(srv.send_max, 4096);
			ck_assert_uint_eq(srv.recv_max, 4096);
			ck_assert(cli.peer_pd && srv.peer_pd);
			/* RFC 8797 §4.1: the server cleared R, so remote
			 * invalidation is off -- yet Linux's server used Send
			 * with Invalidate (capture_pairs counts 18): it looks
			 * only at the client's flag */
			ck_assert_int_eq(cli.remote_inv, 0);
			ck_assert_int_eq(srv.remote_inv, 0);
		}
	}
	ck_assert_int_eq(conns, 2);
	cap_unload();
}
END_TEST

START_TEST(cm_exact)
{
	static const uint8_t linux_req[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	static const uint8_t linux_rep[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03};
	struct rpcrdma_cm_pd pd;
	uint8_t buf[16];

	rpcrdma_cm_pd_init(&pd, 4096, 4096, 1);
	ck_assert_int_eq(rpcrdma_cm_encode(buf, sizeof(buf), &pd), 8);
	ck_assert_int_eq(memcmp(buf, linux_req, 8), 0);
	rpcrdma_cm_pd_init(&pd, 4096, 4096, 0);
	ck_assert_int_eq(rpcrdma_cm_encode(buf, 8, &pd), 8);
	ck_assert_int_eq(memcmp(buf, linux_rep, 8), 0);
	ck_assert_int_eq(rpcrdma_cm_encode(buf, 7, &pd), -EMSGSIZE);
	/* extremes */
	rpcrdma_cm_pd_init(&pd, 1024, 262144, 0);
	ck_assert_int_eq(rpcrdma_cm_encode(buf, 8, &pd), 8);
	ck_assert_uint_eq(buf[6], 0);
	ck_assert_uint_eq(buf[7], 255);
}
END_TEST

START_TEST(cm_sizes)
{
	static const struct {
		uint32_t bytes;
		uint8_t v;
	} t[] = {
		{0, 0},	       {1, 0},	      {1023, 0},     {1024, 0},	      {2047, 0},
		{2048, 1},     {4096, 3},     {4097, 3},     {8192, 7},	      {65536, 63},
		{262143, 254}, {262144, 255}, {262145, 255}, {1u << 20, 255}, {UINT32_MAX, 255},
	};
	struct rpcrdma_cm_pd pd;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(rpcrdma_cm_size_encode(t[i].bytes) == t[i].v, "%u -> %u, want %u",
			      t[i].bytes, rpcrdma_cm_size_encode(t[i].bytes), t[i].v);
	for (unsigned v = 0; v < 256; v++) {
		uint32_t b = rpcrdma_cm_size_decode((uint8_t)v);

		ck_assert_uint_eq(b, (v + 1) * 1024);
		ck_assert_uint_eq(rpcrdma_cm_size_encode(b), v);
	}
	rpcrdma_cm_pd_init(&pd, 5000, 100, 7);
	ck_assert_uint_eq(pd.send_size, 4096);
	ck_assert_uint_eq(pd.recv_size, 1024);
	ck_assert_int_eq(pd.remote_inv, 1);
	rpcrdma_cm_pd_init(&pd, UINT32_MAX, 262144, 0);
	ck_assert_uint_eq(pd.send_size, RPCRDMA_INLINE_MAX);
	ck_assert_uint_eq(pd.recv_size, RPCRDMA_INLINE_MAX);
}
END_TEST

struct cm_case {
	const char *name;
	const char *hex;
	ssize_t ret;
	int r;
	uint32_t send, recv;
};

static const struct cm_case cm_cases[] = {
	{"empty", "", -ENOENT, 0, 1024, 1024},
	{"IRD/ORD only", "00800000", -ENOENT, 0, 1024, 1024},
	{"another layer's", "0102030405060708090a0b0c", -ENOENT, 0, 1024, 1024},
	{"magic byte-swapped", "180eabf6 01 01 03 03", -ENOENT, 0, 1024, 1024},
	{"truncated 7", "f6ab0e18 01 01 03", -EBADMSG, 0, 1024, 1024},
	{"magic only", "f6ab0e18", -EBADMSG, 0, 1024, 1024},
	{"version 2", "f6ab0e18 02 01 03 03", -EPROTONOSUPPORT, 0, 1024, 1024},
	{"version 0", "f6ab0e18 00 01 03 03", -EPROTONOSUPPORT, 0, 1024, 1024},
	{"zeros", "f6ab0e18 01 00 00 00", 0, 0, 1024, 1024},
	{"reserved bits ignored", "f6ab0e18 01 fe 07 0f", 0, 0, 8192, 16384},
	{"R with reserved", "f6ab0e18 01 ff ff 00", 0, 1, 262144, 1024},
	{"trailing octets", "f6ab0e18 01 01 01 02 dead beef", 0, 1, 2048, 3072},
	{"unaligned", "aa bb cc f6ab0e18 01 01 03 03", 3, 1, 4096, 4096},
	{"after IRD/ORD", "00800000 f6ab0e18 01 01 03 03", 4, 1, 4096, 4096},
	/* the first identifier is the one parsed (RFC 8797 §5.2) */
	{"two, first bad", "f6ab0e18 02 01 03 03 f6ab0e18 01 01 03 03", -EPROTONOSUPPORT, 0, 1024,
	 1024},
	{"two, first good", "f6ab0e18 01 00 00 00 f6ab0e18 01 01 03 03", 0, 0, 1024, 1024},
};
#define NCM (int)(sizeof(cm_cases) / sizeof(cm_cases[0]))

START_TEST(cm_decode_table)
{
	const struct cm_case *c = &cm_cases[_i];
	uint8_t buf[64], *exact;
	size_t len = tu_hex(c->hex, buf, sizeof(buf));
	struct rpcrdma_cm_pd pd;
	ssize_t r;

	exact = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(exact);
	memcpy(exact, buf, len);
	memset(&pd, 0x5a, sizeof(pd));
	r = rpcrdma_cm_decode(exact, len, &pd);
	free(exact);
	ck_assert_msg(r == c->ret, "%s: %zd, want %zd", c->name, r, c->ret);
	ck_assert_int_eq(pd.remote_inv, c->r);
	ck_assert_uint_eq(pd.send_size, c->send);
	ck_assert_uint_eq(pd.recv_size, c->recv);
}
END_TEST

START_TEST(cm_negotiate)
{
	struct rpcrdma_cm_pd cli, srv, none;
	struct rpcrdma_inline ci, si;
	ssize_t r;

	/* asymmetric sizes: each direction is min(sender's send, receiver's recv) */
	rpcrdma_cm_pd_init(&cli, 8192, 4096, 1);
	rpcrdma_cm_pd_init(&srv, 16384, 2048, 1);
	rpcrdma_cm_negotiate(&cli, &srv, 0, &ci);
	rpcrdma_cm_negotiate(&srv, &cli, 0, &si);
	ck_assert_uint_eq(ci.send_max, 2048); /* call inline threshold */
	ck_assert_uint_eq(ci.recv_max, 4096); /* reply inline threshold */
	ck_assert_uint_eq(si.send_max, ci.recv_max);
	ck_assert_uint_eq(si.recv_max, ci.send_max);
	ck_assert(ci.remote_inv && si.remote_inv);
	/* either end clearing R turns remote invalidation off (§4.1) */
	srv.remote_inv = 0;
	rpcrdma_cm_negotiate(&cli, &srv, 0, &ci);
	ck_assert(!ci.remote_inv);
	/* a peer without RFC 8797 data: 1024 both ways, no R (§5.1), whatever
	 * was left in the peer structure */
	r = rpcrdma_cm_decode((const uint8_t *)"\x00\x80\x00\x00", 4, &none);
	ck_assert_int_eq(r, -ENOENT);
	rpcrdma_cm_negotiate(&cli, &none, r, &ci);
	ck_assert_uint_eq(ci.send_max, 1024);
	ck_assert_uint_eq(ci.recv_max, 1024);
	ck_assert(!ci.remote_inv && !ci.peer_pd);
	memset(&none, 0xff, sizeof(none));
	none.send_size = none.recv_size = 262144;
	rpcrdma_cm_negotiate(&cli, &none, -ENOENT, &ci);
	ck_assert_uint_eq(ci.send_max, 1024);
	ck_assert_uint_eq(ci.recv_max, 1024);
	ck_assert(!ci.remote_inv);
	/* a large peer is bounded by our own sizes */
	rpcrdma_cm_pd_init(&srv, 262144, 262144, 0);
	rpcrdma_cm_negotiate(&cli, &srv, 0, &ci);
	ck_assert_uint_eq(ci.send_max, 8192);
	ck_assert_uint_eq(ci.recv_max, 4096);
}
END_TEST

Suite *rpcrdma_hdr_suite(void)
{
	Suite *s = suite_create("rpcrdma_hdr");
	TCase *tc = tcase_create("codec");

	tcase_add_loop_test(tc, roundtrip_types, 0, NRT);
	tcase_add_test(tc, encode_exact_octets);
	tcase_add_test(tc, roundtrip_random);
	tcase_add_test(tc, encode_invalid);
	tcase_add_test(tc, error_encode);
	tcase_add_loop_test(tc, decode_table, 0, NDEC);
	tcase_add_test(tc, decode_bad_cfg);
	tcase_add_loop_test(tc, truncation_made, 0, NRT);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);

	tc = tcase_create("capture");
	tcase_add_test(tc, capture_headers);
	tcase_add_test(tc, capture_pairs);
	tcase_add_test(tc, capture_by_hand);
	tcase_add_test(tc, truncation_capture);
	tcase_add_test(tc, caps_capture);
	suite_add_tcase(s, tc);

	tc = tcase_create("reply");
	tcase_add_test(tc, chunk_info_made);
	tcase_add_test(tc, reply_form);
	tcase_add_test(tc, reply_check);
	suite_add_tcase(s, tc);

	tc = tcase_create("cm");
	tcase_add_test(tc, cm_capture);
	tcase_add_test(tc, cm_exact);
	tcase_add_test(tc, cm_sizes);
	tcase_add_loop_test(tc, cm_decode_table, 0, NCM);
	tcase_add_test(tc, cm_negotiate);
	suite_add_tcase(s, tc);
	return s;
}
