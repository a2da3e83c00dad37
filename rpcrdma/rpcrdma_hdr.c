/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA version 1 transport header: decode, validation, encode
 * (RFC 8166 §4.1.2 XDR, §4.2 fixed fields, §4.3 chunk lists, §4.5 error
 * handling, §4.6 deprecated procedures), and the chunk helpers a Responder
 * and a Requester need around it.
 */
#include "rpcrdma.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "byteorder.h"

/* ------------------------------------------------------------------ */
/* Decoding */

/* A cursor over the received octets; every read is bounds-checked first. */
struct dec {
	const uint8_t *buf;
	size_t len;
	size_t off;
	const struct rpcrdma_dec_cfg *cfg;
	struct rpcrdma_dec_err *e;
	uint32_t segs_used; /* of cfg->segs */
};

static int fail(struct dec *d, int code, enum rpcrdma_reason r, uint32_t reply_err, size_t off)
{
	d->e->reason = r;
	d->e->reply_err = reply_err;
	d->e->offset = off;
	return code;
}

/* An XDR error in a version 1 header: the Responder answers ERR_CHUNK (§4.5.2). */
static int xdr_fail(struct dec *d, enum rpcrdma_reason r, size_t off)
{
	return fail(d, r == RPCRDMA_R_CAP ? -E2BIG : -EBADMSG, r, RPCRDMA_ERR_CHUNK, off);
}

static size_t avail(const struct dec *d)
{
	return d->len - d->off;
}

/*
 * An optional-data discriminator (RFC 4506 §4.19): an XDR bool, 0 or 1
 * (§4.4: any other value is not a bool).  Returns 0/1 or -errno.
 */
static int get_bool(struct dec *d)
{
	uint32_t v;

	if (avail(d) < 4)
		return xdr_fail(d, RPCRDMA_R_TRUNC, d->off);
	v = get_be32(d->buf + d->off);
	if (v > 1)
		return xdr_fail(d, RPCRDMA_R_BOOL, d->off);
	d->off += 4;
	return (int)v;
}

/* offset + length must stay within the 64-bit tagged offset space */
static int seg_wraps(const struct rpcrdma_seg *s)
{
	return s->length && s->offset > UINT64_MAX - (s->length - 1);
}

static void get_seg(const uint8_t *p, struct rpcrdma_seg *s)
{
	s->handle = get_be32(p);
	s->length = get_be32(p + 4);
	s->offset = get_be64(p + 8);
}

/*
 * One counted array of plain segments into the segment pool; @c NULL when
 * no chunk slot is left (reported as a cap once the octets are known to
 * be there).
 */
static int get_chunk(struct dec *d, struct rpcrdma_chunk *c)
{
	const struct rpcrdma_dec_cfg *cfg = d->cfg;
	size_t count_off = d->off;
	uint32_t n;

	if (avail(d) < 4)
		return xdr_fail(d, RPCRDMA_R_TRUNC, d->off);
	n = get_be32(d->buf + d->off);
	d->off += 4;
	/* never trust a count: the octets first, then the caps */
	if (n > avail(d) / RPCRDMA_SEG_LEN)
		return xdr_fail(d, RPCRDMA_R_TRUNC, count_off);
	if (!c)
		return xdr_fail(d, RPCRDMA_R_CAP, count_off - 4);
	if (n > cfg->max_segs - d->segs_used || (cfg->max_chunk_segs && n > cfg->max_chunk_segs))
		return xdr_fail(d, RPCRDMA_R_CAP, count_off);
	c->nsegs = n;
	c->segs = n ? cfg->segs + d->segs_used : NULL;
	for (uint32_t i = 0; i < n; i++) {
		get_seg(d->buf + d->off, &c->segs[i]);
		if (seg_wraps(&c->segs[i]))
			return xdr_fail(d, RPCRDMA_R_SEG_WRAP, d->off);
		d->off += RPCRDMA_SEG_LEN;
	}
	d->segs_used += n;
	return 0;
}

static int get_lists(struct dec *d, struct rpcrdma_hdr *h)
{
	const struct rpcrdma_dec_cfg *cfg = d->cfg;
	int more, rc;

	/* Read list: 1 PHLOO 1 PHLOO ... 0 (§4.7) */
	while ((more = get_bool(d)) == 1) {
		struct rpcrdma_read_seg *r;

		if (avail(d) < RPCRDMA_READ_SEG_LEN)
			return xdr_fail(d, RPCRDMA_R_TRUNC, d->off - 4);
		if (h->nread >= cfg->max_read)
			return xdr_fail(d, RPCRDMA_R_CAP, d->off - 4);
		r = &cfg->read[h->nread];
		r->position = get_be32(d->buf + d->off);
		/* §3.4.5: "The value in this field MUST be a multiple of four." */
		if (r->position % 4)
			return xdr_fail(d, RPCRDMA_R_POSITION, d->off);
		get_seg(d->buf + d->off + 4, &r->seg);
		if (seg_wraps(&r->seg))
			return xdr_fail(d, RPCRDMA_R_SEG_WRAP, d->off + 4);
		d->off += RPCRDMA_READ_SEG_LEN;
		h->nread++;
	}
	if (more < 0)
		return more;
	h->read = h->nread ? cfg->read : NULL;

	/* Write list: 1 count HLOO... 1 count HLOO... 0 */
	while ((more = get_bool(d)) == 1) {
		rc = get_chunk(d, h->nwrite < cfg->max_write ? &cfg->write[h->nwrite] : NULL);
		if (rc)
			return rc;
		h->nwrite++;
	}
	if (more < 0)
		return more;
	h->write = h->nwrite ? cfg->write : NULL;

	/* Reply chunk: 0, or 1 count HLOO... */
	more = get_bool(d);
	if (more < 0)
		return more;
	if (more) {
		rc = get_chunk(d, &h->reply);
		if (rc)
			return rc;
		h->has_reply = 1;
	}
	return 0;
}

static int has_pos0(const struct rpcrdma_hdr *h)
{
	for (uint32_t i = 0; i < h->nread; i++)
		if (h->read[i].position == 0)
			return 1;
	return 0;
}

/* What RDMA_MSG and RDMA_NOMSG require of the octets around their lists. */
static int check_payload(struct dec *d, const struct rpcrdma_hdr *h)
{
	if (h->proc == RPCRDMA_NOMSG) {
		/*
		 * §4.2.4: of the chunk lists "one MUST be present and MUST hold
		 * the Payload stream": a Position Zero Read chunk (Long Call)
		 * or the Reply chunk (Long Reply), §3.5.3.  §4.5.2 names the
		 * case of none present as an XDR error.
		 */
		if (!has_pos0(h) && !h->has_reply)
			return xdr_fail(d, RPCRDMA_R_NOMSG_EMPTY, 12);
	} else if (!(d->cfg->flags & RPCRDMA_DF_NO_XID_CHECK) && !has_pos0(h)) {
		/*
		 * §3.2: the Payload stream "always begins with the Transaction
		 * ID"; §4.5.2: an rdma_xid that does not match it is an XDR
		 * error.  (With a Position Zero Read chunk the stream starts in
		 * the chunk, not inline.)
		 */
		if (avail(d) < 4 || get_be32(d->buf + d->off) != h->xid)
			return xdr_fail(d, RPCRDMA_R_XID, d->off);
	}
	return 0;
}

static int cfg_ok(const struct rpcrdma_dec_cfg *cfg)
{
	return (cfg->max_read == 0 || cfg->read) && (cfg->max_write == 0 || cfg->write) &&
	       (cfg->max_segs == 0 || cfg->segs);
}

ssize_t rpcrdma_hdr_decode(const uint8_t *buf, size_t len, const struct rpcrdma_dec_cfg *cfg,
			   struct rpcrdma_hdr *h, struct rpcrdma_dec_err *e)
{
	struct rpcrdma_dec_err scratch;
	struct dec d = {.buf = buf, .len = len, .cfg = cfg, .e = e ? e : &scratch};
	size_t min = RPCRDMA_HDR_MIN;
	int rc;

	memset(h, 0, sizeof(*h));
	memset(d.e, 0, sizeof(*d.e));
	if (!cfg_ok(cfg))
		return -EINVAL;
	/*
	 * §4.5: "If an incoming RPC-over-RDMA message is not as long as a
	 * minimal size RPC-over-RDMA header (28 bytes), the receiver cannot
	 * trust the value of the XID field; therefore, it MUST silently
	 * discard the message before performing any parsing."
	 * RPCRDMA_DF_SHORT_ERROR: an RDMA_ERROR needs only its own XDR.
	 */
	if ((cfg->flags & RPCRDMA_DF_SHORT_ERROR) && len >= RPCRDMA_ERR_CHUNK_LEN &&
	    get_be32(buf + 12) == RPCRDMA_ERROR)
		min = RPCRDMA_ERR_CHUNK_LEN;
	if (len < min)
		return fail(&d, -ENODATA, RPCRDMA_R_SHORT, 0, 0);

	h->xid = get_be32(buf);
	h->vers = get_be32(buf + 4);
	h->credits = get_be32(buf + 8);
	h->proc = get_be32(buf + 12);
	d.off = RPCRDMA_FIXED_LEN;

	/*
	 * §4.5.1: a version we do not support is answered with ERR_VERS.  The
	 * proc discriminator's position and RDMA_ERROR's value are fixed for
	 * all versions (§4.1.2): a Responder must discard RDMA_ERROR (§4.2.4)
	 * whatever its version, rather than answer an error with an error.
	 */
	if (h->vers != RPCRDMA_VERSION)
		return fail(&d, -EPROTONOSUPPORT, RPCRDMA_R_VERS,
			    h->proc == RPCRDMA_ERROR ? 0 : RPCRDMA_ERR_VERS, 4);

	switch (h->proc) {
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		rc = get_lists(&d, h);
		if (!rc)
			rc = check_payload(&d, h);
		if (rc) {
			/* only the fixed fields of a refused header are meaningful */
			h->nread = h->nwrite = 0;
			h->read = NULL;
			h->write = NULL;
			h->has_reply = 0;
			memset(&h->reply, 0, sizeof(h->reply));
			return rc;
		}
		return (ssize_t)d.off;
	case RPCRDMA_ERROR:
		/* §4.5: "A receiver MUST silently discard an RDMA_ERROR
		 * procedure that it cannot decode." */
		h->err = get_be32(buf + 16);
		d.off = RPCRDMA_ERR_CHUNK_LEN;
		if (h->err == RPCRDMA_ERR_CHUNK)
			return RPCRDMA_ERR_CHUNK_LEN;
		if (h->err != RPCRDMA_ERR_VERS)
			return fail(&d, -EBADMSG, RPCRDMA_R_ERR_CODE, 0, 16);
		if (len < RPCRDMA_ERR_VERS_LEN)
			return fail(&d, -EBADMSG, RPCRDMA_R_TRUNC, 0, 20);
		h->vers_low = get_be32(buf + 20);
		h->vers_high = get_be32(buf + 24);
		if (h->vers_low > h->vers_high)
			return fail(&d, -EBADMSG, RPCRDMA_R_ERR_RANGE, 0, 20);
		return RPCRDMA_ERR_VERS_LEN;
	case RPCRDMA_MSGP:
		/* §4.6.1: "Responders SHOULD reply with an RDMA_ERROR
		 * procedure, setting the rdma_err field to ERR_CHUNK;
		 * Requesters MUST silently discard the message." */
		return fail(&d, -EOPNOTSUPP, RPCRDMA_R_MSGP, RPCRDMA_ERR_CHUNK, 12);
	case RPCRDMA_DONE:
		/* §4.6.2: "Receivers MUST silently discard RDMA_DONE messages." */
		return fail(&d, -ENOMSG, RPCRDMA_R_DONE, 0, 12);
	default:
		/* §4.5.2: "an invalid value in the rdma_proc field" */
		return xdr_fail(&d, RPCRDMA_R_PROC, 12);
	}
}

static const char *const reason_names[RPCRDMA_R_COUNT] = {
	[RPCRDMA_R_NONE] = "none",
	[RPCRDMA_R_SHORT] = "shorter than 28 octets",
	[RPCRDMA_R_VERS] = "unsupported version",
	[RPCRDMA_R_PROC] = "invalid procedure",
	[RPCRDMA_R_MSGP] = "RDMA_MSGP",
	[RPCRDMA_R_DONE] = "RDMA_DONE",
	[RPCRDMA_R_TRUNC] = "truncated",
	[RPCRDMA_R_BOOL] = "optional-data discriminator not 0 or 1",
	[RPCRDMA_R_CAP] = "more segments or chunks than configured",
	[RPCRDMA_R_POSITION] = "read position not a multiple of 4",
	[RPCRDMA_R_SEG_WRAP] = "segment wraps the 64-bit offset",
	[RPCRDMA_R_NOMSG_EMPTY] = "RDMA_NOMSG without a chunk for the Payload stream",
	[RPCRDMA_R_XID] = "Payload stream XID missing or different",
	[RPCRDMA_R_ERR_CODE] = "unknown rdma_err",
	[RPCRDMA_R_ERR_RANGE] = "ERR_VERS low above high",
	[RPCRDMA_R_REPLY_READ] = "Read list in a reply",
	[RPCRDMA_R_REPLY_WRITE] = "reply Write list does not match the call",
	[RPCRDMA_R_REPLY_CHUNK] = "reply Reply chunk does not match the call",
	[RPCRDMA_R_REPLY_XID] = "reply XID differs from the call",
	[RPCRDMA_R_REPLY_PROC] = "reply procedure invalid",
};

const char *rpcrdma_reason_name(enum rpcrdma_reason r)
{
	return (unsigned)r < RPCRDMA_R_COUNT ? reason_names[r] : "unknown";
}

const char *rpcrdma_proc_name(uint32_t proc)
{
	static const char *const names[RPCRDMA_NPROCS] = {"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP",
							  "RDMA_DONE", "RDMA_ERROR"};

	return proc < RPCRDMA_NPROCS ? names[proc] : "unknown";
}

enum rpcrdma_verdict rpcrdma_rx_verdict(ssize_t ret, const struct rpcrdma_hdr *h, int responder)
{
	if (ret >= 0) {
		/* §4.2.4: "A Responder MUST silently discard RDMA_ERROR procedures." */
		if (responder && h->proc == RPCRDMA_ERROR)
			return RPCRDMA_V_DROP;
		/* §4.3.1: "Responders MUST leave the Read list empty in all
		 * replies"; a header in error is discarded by the Requester. */
		if (!responder && h->nread)
			return RPCRDMA_V_DROP;
		return RPCRDMA_V_ACCEPT;
	}
	/* §4.5: "If errors are detected in the RPC-over-RDMA header of an RPC
	 * Reply message, a Requester MUST silently discard the message." */
	if (!responder)
		return RPCRDMA_V_DROP;
	switch (ret) {
	case -ENODATA: /* §4.5: too short to trust the XID */
	case -ENOMSG:  /* §4.6.2: RDMA_DONE */
	case -EINVAL:  /* our configuration, not the peer's message */
		return RPCRDMA_V_DROP;
	default:
		break;
	}
	if (h->proc == RPCRDMA_ERROR)
		return RPCRDMA_V_DROP;
	return ret == -EPROTONOSUPPORT ? RPCRDMA_V_SEND_ERR_VERS : RPCRDMA_V_SEND_ERR_CHUNK;
}

/* ------------------------------------------------------------------ */
/* Encoding */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static int chunk_check(const struct rpcrdma_chunk *c, uint64_t *len)
{
	if (c->nsegs && !c->segs)
		return -EINVAL;
	for (uint32_t i = 0; i < c->nsegs; i++)
		if (seg_wraps(&c->segs[i]))
			return -EINVAL;
	*len = sat_add(*len, sat_add(4, sat_mul(c->nsegs, RPCRDMA_SEG_LEN)));
	return 0;
}

/* Everything a sender must not send is -EINVAL; *len gets the length. */
static int hdr_check(const struct rpcrdma_hdr *h, uint64_t *len)
{
	uint64_t n = RPCRDMA_FIXED_LEN;
	int pos0 = 0;

	switch (h->proc) {
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		break;
	case RPCRDMA_ERROR:
		if (h->err == RPCRDMA_ERR_CHUNK) {
			*len = RPCRDMA_ERR_CHUNK_LEN;
			return 0;
		}
		if (h->err != RPCRDMA_ERR_VERS || h->vers_low > h->vers_high)
			return -EINVAL;
		*len = RPCRDMA_ERR_VERS_LEN;
		return 0;
	default: /* RDMA_MSGP, RDMA_DONE (§4.6: senders MUST NOT) and unknown */
		return -EINVAL;
	}
	if (h->vers != RPCRDMA_VERSION)
		return -EINVAL;
	if (h->nread && !h->read)
		return -EINVAL;
	for (uint32_t i = 0; i < h->nread; i++) {
		if (h->read[i].position % 4 || seg_wraps(&h->read[i].seg))
			return -EINVAL;
		pos0 |= h->read[i].position == 0;
	}
	n = sat_add(n, sat_mul(h->nread, 4 + RPCRDMA_READ_SEG_LEN) + 4);
	if (h->nwrite && !h->write)
		return -EINVAL;
	for (uint32_t i = 0; i < h->nwrite; i++) {
		n = sat_add(n, 4);
		if (chunk_check(&h->write[i], &n))
			return -EINVAL;
	}
	n = sat_add(n, 4 + 4);
	if (h->has_reply && chunk_check(&h->reply, &n))
		return -EINVAL;
	if (h->proc == RPCRDMA_NOMSG && !pos0 && !h->has_reply)
		return -EINVAL;
	*len = n;
	return 0;
}

ssize_t rpcrdma_hdr_len(const struct rpcrdma_hdr *h)
{
	uint64_t len;

	if (hdr_check(h, &len))
		return -EINVAL;
	return len > (uint64_t)SSIZE_MAX ? -EMSGSIZE : (ssize_t)len;
}

static uint8_t *put_seg(uint8_t *p, const struct rpcrdma_seg *s)
{
	put_be32(p, s->handle);
	put_be32(p + 4, s->length);
	put_be64(p + 8, s->offset);
	return p + RPCRDMA_SEG_LEN;
}

static uint8_t *put_chunk(uint8_t *p, const struct rpcrdma_chunk *c)
{
	put_be32(p, c->nsegs);
	p += 4;
	for (uint32_t i = 0; i < c->nsegs; i++)
		p = put_seg(p, &c->segs[i]);
	return p;
}

ssize_t rpcrdma_hdr_encode(uint8_t *buf, size_t cap, const struct rpcrdma_hdr *h, unsigned flags)
{
	uint64_t len, out;
	uint8_t *p = buf;

	if (hdr_check(h, &len))
		return -EINVAL;
	out = len;
	if ((flags & RPCRDMA_EF_PAD_MIN) && out < RPCRDMA_HDR_MIN)
		out = RPCRDMA_HDR_MIN;
	if (out > cap || out > (uint64_t)SSIZE_MAX)
		return -EMSGSIZE;

	put_be32(p, h->xid);
	put_be32(p + 4, h->vers);
	put_be32(p + 8, h->credits);
	put_be32(p + 12, h->proc);
	p += RPCRDMA_FIXED_LEN;
	if (h->proc == RPCRDMA_ERROR) {
		put_be32(p, h->err);
		p += 4;
		if (h->err == RPCRDMA_ERR_VERS) {
			put_be32(p, h->vers_low);
			put_be32(p + 4, h->vers_high);
			p += 8;
		}
		memset(p, 0, (size_t)(out - len));
		return (ssize_t)out;
	}
	for (uint32_t i = 0; i < h->nread; i++) {
		put_be32(p, 1);
		put_be32(p + 4, h->read[i].position);
		p = put_seg(p + 8, &h->read[i].seg);
	}
	put_be32(p, 0);
	p += 4;
	for (uint32_t i = 0; i < h->nwrite; i++) {
		put_be32(p, 1);
		p = put_chunk(p + 4, &h->write[i]);
	}
	put_be32(p, 0);
	p += 4;
	put_be32(p, h->has_reply ? 1 : 0);
	p += 4;
	if (h->has_reply)
		p = put_chunk(p, &h->reply);
	return (ssize_t)out;
}

ssize_t rpcrdma_error_encode(uint8_t *buf, size_t cap, const struct rpcrdma_hdr *bad,
			     uint32_t credits, uint32_t err, unsigned flags)
{
	struct rpcrdma_hdr h = {
		/* §4.5: "The rdma_xid field MUST contain the same XID that was
		 * in the rdma_xid field in the failing request; the rdma_vers
		 * field MUST contain the same version" */
		.xid = bad->xid,
		.vers = bad->vers,
		.credits = credits,
		.proc = RPCRDMA_ERROR,
		.err = err,
		/* §4.5.1: "the low and high inclusive version numbers it does,
		 * in fact, support" */
		.vers_low = RPCRDMA_VERSION,
		.vers_high = RPCRDMA_VERSION,
	};

	return rpcrdma_hdr_encode(buf, cap, &h, flags);
}

/* ------------------------------------------------------------------ */
/* Chunk helpers */

uint64_t rpcrdma_chunk_len(const struct rpcrdma_chunk *c)
{
	uint64_t n = 0;

	/* at most 2^32 segments of under 2^32 octets: no overflow */
	for (uint32_t i = 0; i < c->nsegs; i++)
		n += c->segs[i].length;
	return n;
}

void rpcrdma_chunk_info(const struct rpcrdma_hdr *h, struct rpcrdma_chunk_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	if (h->proc != RPCRDMA_MSG && h->proc != RPCRDMA_NOMSG)
		return;
	ci->read_segs = h->nread;
	for (uint32_t i = 0; i < h->nread; i++) {
		const struct rpcrdma_read_seg *r = &h->read[i];
		uint32_t j;

		ci->read_len += r->seg.length;
		if (r->position == 0) {
			ci->long_call = 1;
			ci->pos0_len += r->seg.length;
		}
		/* §3.4.5: a Read chunk is the segments sharing a position */
		for (j = 0; j < i && h->read[j].position != r->position; j++)
			;
		if (j == i)
			ci->read_chunks++;
	}
	ci->write_chunks = h->nwrite;
	for (uint32_t i = 0; i < h->nwrite; i++) {
		uint64_t l = rpcrdma_chunk_len(&h->write[i]);

		if (h->write[i].nsegs == 0)
			ci->write_empty++;
		ci->write_len += l;
		if (l > ci->write_max)
			ci->write_max = l;
	}
	if (h->has_reply) {
		ci->reply_chunk = 1;
		ci->reply_segs = h->reply.nsegs;
		ci->reply_len = rpcrdma_chunk_len(&h->reply);
	}
}

int rpcrdma_reply_form(const struct rpcrdma_chunk_info *ci, size_t hdr_len, size_t payload_len,
		       uint32_t inline_max)
{
	/* §4.3.3: a reply that fits the reply inline threshold MAY go inline
	 * even when a Reply chunk was provided */
	if (hdr_len <= inline_max && payload_len <= inline_max - hdr_len)
		return RPCRDMA_MSG;
	/* §3.5.3: "If a Reply chunk was provided and the reduced Payload
	 * stream is larger than the reply inline threshold, the Responder
	 * MUST use the Requester-provided Reply chunk for the reply." */
	if (!ci->reply_chunk || payload_len > ci->reply_len)
		return -EMSGSIZE;
	return RPCRDMA_NOMSG;
}

static int reply_fail(struct rpcrdma_dec_err *e, enum rpcrdma_reason r)
{
	if (e) {
		e->reason = r;
		e->reply_err = 0;
		e->offset = 0;
	}
	return -EPROTO;
}

/* A returned chunk: the call's segments copied, lengths updated (§3.4.6). */
static int chunk_matches(const struct rpcrdma_chunk *call, const struct rpcrdma_chunk *rep)
{
	if (call->nsegs != rep->nsegs)
		return 0;
	for (uint32_t i = 0; i < call->nsegs; i++) {
		const struct rpcrdma_seg *a = &call->segs[i], *b = &rep->segs[i];

		if (a->handle != b->handle || a->offset != b->offset || b->length > a->length)
			return 0;
	}
	return 1;
}

int rpcrdma_reply_check(const struct rpcrdma_hdr *call, const struct rpcrdma_hdr *rep,
			struct rpcrdma_dec_err *e)
{
	if (rep->xid != call->xid)
		return reply_fail(e, RPCRDMA_R_REPLY_XID);
	if (rep->proc == RPCRDMA_ERROR)
		return 0;
	if (rep->proc != RPCRDMA_MSG && rep->proc != RPCRDMA_NOMSG)
		return reply_fail(e, RPCRDMA_R_REPLY_PROC);
	if (rep->nread)
		return reply_fail(e, RPCRDMA_R_REPLY_READ);
	if (rep->nwrite > call->nwrite)
		return reply_fail(e, RPCRDMA_R_REPLY_WRITE);
	for (uint32_t i = 0; i < rep->nwrite; i++)
		if (!chunk_matches(&call->write[i], &rep->write[i]))
			return reply_fail(e, RPCRDMA_R_REPLY_WRITE);
	if (rep->has_reply && (!call->has_reply || !chunk_matches(&call->reply, &rep->reply)))
		return reply_fail(e, RPCRDMA_R_REPLY_CHUNK);
	return 0;
}
