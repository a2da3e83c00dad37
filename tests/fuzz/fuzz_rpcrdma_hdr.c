/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the RPC-over-RDMA version 1 transport header codec
 * (rpcrdma/rpcrdma_hdr.c).
 *
 * Input: one selector octet, then the rest.
 *   bits 0-1  decode caps: 0 generous (64 read segments, 16 Write chunks,
 *             256 segments), 1 tight (2, 2, 4), 2 none (0, 0, 0),
 *             3 (8, 4, 16, at most 3 segments per chunk)
 *   bit 2     RPCRDMA_DF_SHORT_ERROR
 *   bit 3     RPCRDMA_DF_NO_XID_CHECK
 *   bit 7     encode mode: the rest describes a header (see encode_mode())
 *             to encode; otherwise the rest is a received message.
 *
 * Decode mode: rpcrdma_hdr_decode() on a buffer of exactly the message's
 * size (ASan sees any overread).  An error must be one of the documented
 * ones with a consistent reason and §4.5 action.  A header it accepts must
 * respect the caps and the rules it claims to check, re-encode to the very
 * octets it came from (decode -> encode -> decode gives the same
 * structure), fail when cut by one octet, and pass the helpers' sanity
 * rules.
 *
 * Encode mode: rpcrdma_hdr_encode() must refuse exactly the headers a
 * sender must not send (-EINVAL), refuse a short buffer (-EMSGSIZE), and
 * whatever it writes must decode back to the same structure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "rpcrdma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

#define NRD  64
#define NWR  16
#define NSEG 256

static struct rpcrdma_read_seg rd[NRD], rd2[NRD];
static struct rpcrdma_chunk wr[NWR], wr2[NWR];
static struct rpcrdma_seg sg[NSEG], sg2[NSEG];

static const struct {
	uint32_t read, write, segs, chunk;
} caps[4] = {{NRD, NWR, NSEG, 0}, {2, 2, 4, 0}, {0, 0, 0, 0}, {8, 4, 16, 3}};

static void cfg_set(struct rpcrdma_dec_cfg *c, int which, unsigned flags, int second)
{
	c->read = second ? rd2 : rd;
	c->max_read = caps[which].read;
	c->write = second ? wr2 : wr;
	c->max_write = caps[which].write;
	c->segs = second ? sg2 : sg;
	c->max_segs = caps[which].segs;
	c->max_chunk_segs = caps[which].chunk;
	c->flags = flags;
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

static void same_hdr(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	CHECK(a->xid == b->xid && a->vers == b->vers && a->credits == b->credits);
	CHECK(a->proc == b->proc);
	if (a->proc == RPCRDMA_ERROR) {
		CHECK(a->err == b->err);
		if (a->err == RPCRDMA_ERR_VERS)
			CHECK(a->vers_low == b->vers_low && a->vers_high == b->vers_high);
		return;
	}
	CHECK(a->nread == b->nread && a->nwrite == b->nwrite && !a->has_reply == !b->has_reply);
	for (uint32_t i = 0; i < a->nread; i++)
		CHECK(a->read[i].position == b->read[i].position &&
		      seg_eq(&a->read[i].seg, &b->read[i].seg));
	for (uint32_t i = 0; i < a->nwrite; i++)
		CHECK(chunk_eq(&a->write[i], &b->write[i]));
	if (a->has_reply)
		CHECK(chunk_eq(&a->reply, &b->reply));
}

static int wraps(const struct rpcrdma_seg *s)
{
	return s->length && s->offset + (s->length - 1) < s->offset;
}

static int has_pos0(const struct rpcrdma_hdr *h)
{
	for (uint32_t i = 0; i < h->nread; i++)
		if (h->read[i].position == 0)
			return 1;
	return 0;
}

/* A segment pointer lies inside the decode arrays. */
static int in_pool(const struct rpcrdma_chunk *c)
{
	return c->nsegs == 0 || (c->segs >= sg && c->segs + c->nsegs <= sg + NSEG);
}

static void decode_mode(const uint8_t *data, size_t size, int which, unsigned flags)
{
	struct rpcrdma_dec_cfg cfg, cfg2;
	struct rpcrdma_hdr h, h2;
	struct rpcrdma_dec_err e;
	struct rpcrdma_chunk_info ci;
	uint8_t *in, *out;
	ssize_t r, r2;
	uint32_t segs = 0;

	in = malloc(size ? size : 1);
	if (!in)
		return;
	memcpy(in, data, size);
	cfg_set(&cfg, which, flags, 0);
	r = rpcrdma_hdr_decode(in, size, &cfg, &h, &e);
	if (r < 0) {
		enum rpcrdma_verdict v = rpcrdma_rx_verdict(r, &h, 1);

		CHECK(r == -ENODATA || r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || r == -ENOMSG ||
		      r == -EBADMSG || r == -E2BIG);
		CHECK(e.reason != RPCRDMA_R_NONE && e.reason < RPCRDMA_R_REPLY_READ);
		CHECK(e.offset <= size);
		CHECK((r == -E2BIG) == (e.reason == RPCRDMA_R_CAP));
		CHECK(!h.nread && !h.nwrite && !h.has_reply && !h.read && !h.write);
		if (r == -ENODATA) {
			CHECK(size < RPCRDMA_HDR_MIN && e.reason == RPCRDMA_R_SHORT);
			CHECK(h.xid == 0 && h.proc == 0 && e.reply_err == 0);
		} else {
			CHECK(size >= RPCRDMA_ERR_CHUNK_LEN && h.xid == get_be32(in));
			CHECK(h.vers == get_be32(in + 4) && h.proc == get_be32(in + 12));
		}
		/* §4.5: ERR_VERS for another version (not to an RDMA_ERROR) */
		CHECK((e.reply_err == RPCRDMA_ERR_VERS) ==
		      (r == -EPROTONOSUPPORT && h.proc != RPCRDMA_ERROR));
		CHECK(e.reply_err == 0 || e.reply_err == RPCRDMA_ERR_VERS ||
		      e.reply_err == RPCRDMA_ERR_CHUNK);
		/* a malformed RDMA_ERROR is never answered */
		if (h.proc == RPCRDMA_ERROR)
			CHECK(e.reply_err == 0);
		CHECK((v == RPCRDMA_V_DROP) == (e.reply_err == 0));
		CHECK(v != RPCRDMA_V_SEND_ERR_VERS || e.reply_err == RPCRDMA_ERR_VERS);
		CHECK(rpcrdma_rx_verdict(r, &h, 0) == RPCRDMA_V_DROP);
		if (e.reply_err) {
			uint8_t eb[RPCRDMA_HDR_MIN];

			r2 = rpcrdma_error_encode(eb, sizeof(eb), &h, 1, e.reply_err, 0);
			CHECK(r2 == (e.reply_err == RPCRDMA_ERR_VERS ? 28 : 20));
			CHECK(get_be32(eb) == h.xid && get_be32(eb + 4) == h.vers);
		}
		free(in);
		return;
	}

	/* an accepted header: within the message, the caps and the rules */
	CHECK((size_t)r <= size && r >= RPCRDMA_ERR_CHUNK_LEN && r % 4 == 0);
	CHECK(e.reason == RPCRDMA_R_NONE);
	CHECK(h.vers == RPCRDMA_VERSION);
	CHECK(h.proc == RPCRDMA_MSG || h.proc == RPCRDMA_NOMSG || h.proc == RPCRDMA_ERROR);
	if (h.proc == RPCRDMA_ERROR) {
		CHECK(h.err == RPCRDMA_ERR_VERS || h.err == RPCRDMA_ERR_CHUNK);
		CHECK(h.err == RPCRDMA_ERR_CHUNK || h.vers_low <= h.vers_high);
		CHECK(size >= RPCRDMA_HDR_MIN || (flags & RPCRDMA_DF_SHORT_ERROR));
	} else {
		CHECK(size >= RPCRDMA_HDR_MIN);
		CHECK(h.nread <= cfg.max_read && h.nwrite <= cfg.max_write);
		CHECK(h.nread == 0 || h.read == rd);
		for (uint32_t i = 0; i < h.nread; i++)
			CHECK(h.read[i].position % 4 == 0 && !wraps(&h.read[i].seg));
		for (uint32_t i = 0; i < h.nwrite; i++) {
			CHECK(in_pool(&h.write[i]));
			CHECK(!cfg.max_chunk_segs || h.write[i].nsegs <= cfg.max_chunk_segs);
			segs += h.write[i].nsegs;
			for (uint32_t j = 0; j < h.write[i].nsegs; j++)
				CHECK(!wraps(&h.write[i].segs[j]));
		}
		if (h.has_reply) {
			CHECK(in_pool(&h.reply));
			CHECK(!cfg.max_chunk_segs || h.reply.nsegs <= cfg.max_chunk_segs);
			segs += h.reply.nsegs;
			for (uint32_t j = 0; j < h.reply.nsegs; j++)
				CHECK(!wraps(&h.reply.segs[j]));
		}
		CHECK(segs <= cfg.max_segs);
		if (h.proc == RPCRDMA_NOMSG)
			CHECK(has_pos0(&h) || h.has_reply);
		else if (!(flags & RPCRDMA_DF_NO_XID_CHECK) && !has_pos0(&h))
			CHECK(size >= (size_t)r + 4 && get_be32(in + r) == h.xid);
	}

	/* decode -> encode: the very same octets (the XDR here is canonical) */
	CHECK(rpcrdma_hdr_len(&h) == r);
	out = malloc((size_t)r);
	if (!out)
		abort();
	CHECK(rpcrdma_hdr_encode(out, (size_t)r, &h, 0) == r);
	CHECK(memcmp(out, in, (size_t)r) == 0);
	CHECK(rpcrdma_hdr_encode(out, (size_t)r - 1, &h, 0) == -EMSGSIZE);
	/* encode -> decode: the same structure, from the header alone */
	cfg_set(&cfg2, which, flags | RPCRDMA_DF_NO_XID_CHECK | RPCRDMA_DF_SHORT_ERROR, 1);
	r2 = rpcrdma_hdr_decode(out, (size_t)r, &cfg2, &h2, NULL);
	CHECK(r2 == r);
	same_hdr(&h, &h2);
	/* one octet less is never a header */
	CHECK(rpcrdma_hdr_decode(in, (size_t)r - 1, &cfg2, &h2, NULL) < 0);
	free(out);

	/* helpers */
	rpcrdma_chunk_info(&h, &ci);
	if (h.proc != RPCRDMA_ERROR) {
		CHECK(ci.read_segs == h.nread && ci.read_chunks <= h.nread);
		CHECK(!h.nread == !ci.read_chunks);
		CHECK(ci.long_call == has_pos0(&h) && ci.pos0_len <= ci.read_len);
		CHECK(ci.write_chunks == h.nwrite && ci.write_empty <= h.nwrite);
		CHECK(ci.write_max <= ci.write_len && ci.reply_chunk == !!h.has_reply);
	}
	/* a header matches itself as a reply, unless it carries a Read list */
	CHECK(rpcrdma_reply_check(&h, &h, &e) ==
	      (h.proc != RPCRDMA_ERROR && h.nread ? -EPROTO : 0));
	CHECK(rpcrdma_rx_verdict(r, &h, 1) ==
	      (h.proc == RPCRDMA_ERROR ? RPCRDMA_V_DROP : RPCRDMA_V_ACCEPT));
	CHECK(rpcrdma_rx_verdict(r, &h, 0) ==
	      (h.proc != RPCRDMA_ERROR && h.nread ? RPCRDMA_V_DROP : RPCRDMA_V_ACCEPT));
	if (size > (size_t)r) {
		int f = rpcrdma_reply_form(&ci, (size_t)r, size - (size_t)r, (uint32_t)size);

		CHECK(f == RPCRDMA_MSG);
	}
	free(in);
}

/* Reads the description of a header; zeros once the input runs out. */
struct src {
	const uint8_t *p;
	size_t n;
};

static uint32_t get(struct src *s, int octets)
{
	uint32_t v = 0;

	while (octets--) {
		v = v << 8 | (s->n ? *s->p : 0);
		if (s->n) {
			s->p++;
			s->n--;
		}
	}
	return v;
}

static void get_seg(struct src *s, struct rpcrdma_seg *g)
{
	g->handle = get(s, 4);
	g->length = get(s, 4);
	g->offset = (uint64_t)get(s, 4) << 32;
	g->offset |= get(s, 4);
}

/* Is @h something a sender may send?  An independent statement of the rules. */
static int sendable(const struct rpcrdma_hdr *h)
{
	if (h->proc == RPCRDMA_ERROR)
		return h->err == RPCRDMA_ERR_CHUNK ||
		       (h->err == RPCRDMA_ERR_VERS && h->vers_low <= h->vers_high);
	if (h->proc != RPCRDMA_MSG && h->proc != RPCRDMA_NOMSG)
		return 0;
	if (h->vers != 1)
		return 0;
	for (uint32_t i = 0; i < h->nread; i++)
		if (h->read[i].position % 4 || wraps(&h->read[i].seg))
			return 0;
	for (uint32_t i = 0; i < h->nwrite; i++)
		for (uint32_t j = 0; j < h->write[i].nsegs; j++)
			if (wraps(&h->write[i].segs[j]))
				return 0;
	for (uint32_t j = 0; h->has_reply && j < h->reply.nsegs; j++)
		if (wraps(&h->reply.segs[j]))
			return 0;
	return h->proc == RPCRDMA_MSG || has_pos0(h) || h->has_reply;
}

static void encode_mode(const uint8_t *data, size_t size)
{
	static struct rpcrdma_read_seg erd[8];
	static struct rpcrdma_chunk ewr[4];
	static struct rpcrdma_seg esg[4 * 4 + 4];
	struct src s = {data, size};
	struct rpcrdma_hdr h = {0}, d;
	struct rpcrdma_dec_cfg cfg;
	struct rpcrdma_dec_err e;
	uint8_t buf[1024];
	uint32_t used = 0, mode;
	size_t cap;
	ssize_t n, len, r;
	int pad;

	mode = get(&s, 1);
	h.proc = (mode & 0x3f) % 6;
	pad = !!(mode & 0x80);
	h.vers = mode & 0x40 ? get(&s, 4) : 1;
	h.xid = get(&s, 4);
	h.credits = get(&s, 4);
	cap = get(&s, 2) % (sizeof(buf) + 1);
	if (h.proc == RPCRDMA_ERROR) {
		h.err = get(&s, 1) % 4;
		h.vers_low = get(&s, 1);
		h.vers_high = get(&s, 1);
	} else {
		h.nread = get(&s, 1) % 9;
		h.read = erd;
		for (uint32_t i = 0; i < h.nread; i++) {
			uint32_t p = get(&s, 2);

			/* mostly aligned, small positions; sometimes anything */
			erd[i].position = p & 0x8000 ? get(&s, 4) : (p & 0xff) * 4;
			get_seg(&s, &erd[i].seg);
		}
		h.nwrite = get(&s, 1) % 5;
		h.write = ewr;
		for (uint32_t i = 0; i < h.nwrite; i++) {
			ewr[i].nsegs = get(&s, 1) % 5;
			ewr[i].segs = &esg[used];
			for (uint32_t j = 0; j < ewr[i].nsegs; j++)
				get_seg(&s, &esg[used++]);
		}
		h.has_reply = get(&s, 1) & 1;
		if (h.has_reply) {
			h.reply.nsegs = get(&s, 1) % 5;
			h.reply.segs = &esg[used];
			for (uint32_t j = 0; j < h.reply.nsegs; j++)
				get_seg(&s, &esg[used++]);
		}
	}

	n = rpcrdma_hdr_encode(buf, cap, &h, pad ? RPCRDMA_EF_PAD_MIN : 0);
	len = rpcrdma_hdr_len(&h);
	if (!sendable(&h)) {
		CHECK(n == -EINVAL && len == -EINVAL);
		return;
	}
	CHECK(len >= RPCRDMA_ERR_CHUNK_LEN && len % 4 == 0);
	if (pad && len < RPCRDMA_HDR_MIN)
		len = RPCRDMA_HDR_MIN;
	if ((size_t)len > cap) {
		CHECK(n == -EMSGSIZE);
		return;
	}
	CHECK(n == len);
	if (h.proc == RPCRDMA_MSG) { /* the Payload stream's XID */
		if ((size_t)n + 4 > sizeof(buf))
			return;
		put_be32(buf + n, h.xid);
		n += 4;
	}
	cfg_set(&cfg, 0, RPCRDMA_DF_SHORT_ERROR, 0);
	r = rpcrdma_hdr_decode(buf, (size_t)n, &cfg, &d, &e);
	if (h.vers != 1) { /* an RDMA_ERROR of another version */
		CHECK(h.proc == RPCRDMA_ERROR && r == -EPROTONOSUPPORT && e.reply_err == 0);
		return;
	}
	CHECK(r == rpcrdma_hdr_len(&h));
	same_hdr(&h, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags = 0;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	if (sel & 0x04)
		flags |= RPCRDMA_DF_SHORT_ERROR;
	if (sel & 0x08)
		flags |= RPCRDMA_DF_NO_XID_CHECK;
	if (sel & 0x80)
		encode_mode(data + 1, size - 1);
	else
		decode_mode(data + 1, size - 1, sel & 3, flags);
	return 0;
}
