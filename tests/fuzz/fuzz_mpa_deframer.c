/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the MPA receive state machine (RFC 5044 §4, §6, §7.1)
 * fed arbitrary octets, through mpa_rx() and through mpa_rx_lend() /
 * memcpy / mpa_rx_ack(), in chunks of many sizes.
 *
 * Input: two configuration octets, then the octets "received from TCP".
 *  octet 0  bit 0     fuzzed endpoint is the initiator (else the responder)
 *           bit 1     CRC on
 *           bit 2     markers required toward the fuzzed endpoint
 *           bits 3-4  rx_hdr_min: 0, 14, 18, 6
 *           bit 5     peer-to-peer mode (the responder expects the RTR first)
 *           bit 6     rx_hdr_len is driven by the header octets (asks for more
 *                     header, sometimes too much) instead of DDP-like 14/18
 *           bit 7     handshake mode: the endpoint is left waiting for the
 *                     Request (responder) or the Reply (initiator) and the
 *                     input starts with that frame; otherwise a real
 *                     handshake with a second endpoint is run in memory first
 *                     and the input is the full-operation stream
 *  octet 1  bits 0-3  chunk sizes: 0 all at once, 1 one octet at a time,
 *                     n >= 2 pseudo-random 1..2^(n-1)
 *           bits 4-5  receive path per chunk: 0 mpa_rx, 1 lend/ack (each
 *                     lend with a look-ahead of 1..4096 octets or none, at
 *                     random), 2 alternating, 3 pseudo-random
 *           bit 6     lend at most 1..3 iovecs at a time (else up to 80)
 *           bit 7     rx_ulpdu_max 1024 instead of 65535
 *
 * The layer above lends a bounded destination (64 KiB) split into up to
 * MPA_RX_DST_MAX iovecs, checks that rx_end sees the header rx_begin saw,
 * and logs what was delivered.  The same input is also fed in one
 * mpa_rx() call to a second, identically configured endpoint: both must
 * deliver the same FPDUs (the logs are compared octet for octet) and end
 * in the same state with the same error, whatever the chunking and the
 * receive path.
 *
 * Speed (the target runs 10^7 inputs; every call into the receive path
 * costs a fraction of a microsecond under the fuzzer's comparison
 * tracing): only the first FZ_IN_MAX octets of the stream are used (more
 * than the largest seed, a 35190-octet capture); the configured chunk sizes
 * apply to a window of FZ_CUTS_MAX chunks, at the start of the stream or at
 * a pseudo-random octet (derived from the input), and the rest goes in
 * chunks of log-uniform pseudo-random sizes, 1..16384 octets; a lend for
 * k < 256 octets asks for at most 1 + k/4 iovecs (else FZ_LEND_MAX), since
 * walking far past what will be acked only costs time.  The endpoints are
 * set up once per configuration (octet 0 but bit 6, and octet 1 bit 7),
 * saved, and put back after each input (the connection and the blocks it
 * owns, see struct fz_csnap), so nothing passes from one input to the next.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FZ_BUF	    (64 * 1024)
#define FZ_IN_MAX   (36 * 1024)		       /* stream octets used (the rest is ignored) */
#define FZ_CUTS_MAX 64			       /* chunks of the configured sizes (see fz_feed) */
#define FZ_LEND_MAX (4 * MPA_RX_MK_SLOTS + 16) /* enough to walk past every marker slot */

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

struct fz_cfg {
	int initiator;
	int crc;
	int markers;
	uint16_t hdr_min;
	int p2p;
	int hdr_mode;
	int handshake;
	unsigned chunk;
	unsigned path;
	int small_lend;
	int small_ulpdu;
};

/* What was delivered: per FPDU 8 octets of lengths and flags, the header,
 * the payload. */
struct fz_log {
	uint8_t *p;
	size_t len, cap;
};

/* The side's own state: saved after set-up with the connection. */
struct fz_book {
	uint8_t cur_hdr[MPA_RX_HDR_MAX];
	size_t cur_hdr_len, cur_ulpdu;
	unsigned cur_flags;
	int in_fpdu;
	unsigned nbegin, nend, nreq, nrep;
};

struct fz_side {
	struct mpa_conn c;
	const struct fz_cfg *cfg;
	int helper; /* the in-memory handshake partner, not fuzzed */
	uint8_t *buf;
	struct fz_log *log;
	struct fz_book bk;
};

/*
 * A saved connection: the struct, and the contents of the blocks it owns
 * (mpa_tx.c allocates nothing else).  It is put back in place, so that
 * every pointer in it stays valid, if the connection still owns the same
 * blocks.  If it does not (it entered full operation, or kept a partly sent
 * FPDU, during the input) it is destroyed, and copied back only if the
 * saved state owned no block; otherwise its configuration is set up anew.
 */
#define FZ_NBLK 4
struct fz_csnap {
	struct mpa_conn c;
	void *blk[FZ_NBLK];
	uint8_t *copy[FZ_NBLK];
	size_t len[FZ_NBLK];
};

/* The two endpoints of one configuration, kept between inputs. */
struct fz_set {
	struct fz_side a, b;
	struct fz_book bka, bkb;
	struct fz_csnap sa, sb;
};

static const uint16_t hdr_min_tab[4] = {0, 14, 18, 6};

/* A zero-length tagged Write header: what an initiator queues first. */
static const uint8_t write0[14] = {0xC1, 0x40, 0, 0, 0, 1};

static void log_add(struct fz_log *l, const void *p, size_t n)
{
	if (!l->p || l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap : 64 * 1024;

		while (cap < l->len + n)
			cap *= 2;
		l->p = realloc(l->p, cap);
		CHECK(l->p);
		l->cap = cap;
	}
	memcpy(l->p + l->len, p, n);
	l->len += n;
}

static uint32_t xs32(uint32_t *s)
{
	uint32_t x = *s ? *s : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static void fz_request(void *arg, const struct mpa_rr *req)
{
	struct fz_side *s = arg;

	s->bk.nreq++;
	if (!s->helper && req->ulp_pd_len && req->ulp_pd[0] == 'R') {
		mpa_conn_reject(&s->c, "no", 2);
		return;
	}
	mpa_conn_accept(&s->c, "ok", 2, 4, 4, 0);
}

static void fz_reply(void *arg, const struct mpa_rr *rep)
{
	struct fz_side *s = arg;

	s->bk.nrep++;
	/* an initiator sends first (RFC 5044 §7.1.2 rule 4) */
	if (!rep->reject)
		mpa_tx_fpdu(&s->c, write0, sizeof(write0), NULL, 0, NULL);
}

static int fz_rx_hdr_len(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct fz_side *s = arg;
	size_t want;

	if (!s->cfg->hdr_mode) {
		/* DDP-like: 14 octets tagged, 18 untagged */
		if (!have)
			return 0;
		want = (hdr[0] & 0x80) ? 14 : 18;
		if (want < have)
			want = have;
		return (int)want;
	}
	if (have && hdr[0] == 0xFF)
		return -EBADMSG;
	/* anything from @have to one past the maximum */
	want = have + (ulpdu_len * 7 + (have ? hdr[have - 1] : 0)) % (MPA_RX_HDR_MAX - have + 2);
	return (int)want;
}

static int fz_rx_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		       unsigned flags, struct iovec *dst, int *ndst)
{
	struct fz_side *s = arg;
	size_t payload, off = 0;
	uint32_t r;
	int n;

	CHECK(!s->helper);
	CHECK(!s->bk.in_fpdu); /* the previous FPDU ended */
	CHECK(hdr_len <= MPA_RX_HDR_MAX && hdr_len <= ulpdu_len && ulpdu_len <= MPA_ULPDU_MAX);
	CHECK(hdr_len >= s->cfg->hdr_min);
	CHECK(!(flags & MPA_RX_F_RTR) || (s->bk.nend == 0 && s->c.cfg.role == MPA_ROLE_RESPONDER));
	s->bk.nbegin++;
	payload = ulpdu_len - hdr_len;
	if (hdr_len >= 2 && hdr[0] == 0xEE) {
		if (hdr[1] == 0xEE)
			return -EIO;
		if (hdr[1] == 0xEF) {
			/* a destination that does not cover the payload */
			dst[0].iov_base = s->buf;
			dst[0].iov_len = payload + 1;
			*ndst = 1;
			return 0;
		}
	}
	memcpy(s->bk.cur_hdr, hdr, hdr_len);
	s->bk.cur_hdr_len = hdr_len;
	s->bk.cur_ulpdu = ulpdu_len;
	s->bk.cur_flags = flags;
	s->bk.in_fpdu = 1;
	/* contiguous in the buffer, cut into 1..MPA_RX_DST_MAX pieces (some
	 * of them empty), the cuts depending on the header */
	r = (uint32_t)ulpdu_len * 2654435761u ^ (hdr_len ? hdr[hdr_len - 1] : 0x5a);
	n = 1 + (int)(xs32(&r) % MPA_RX_DST_MAX);
	for (int i = 0; i < n; i++) {
		size_t k = payload - off;

		if (i + 1 < n && k)
			k = xs32(&r) % (k + 1);
		dst[i].iov_base = s->buf + off;
		dst[i].iov_len = k;
		off += k;
	}
	*ndst = n;
	return 0;
}

static int fz_rx_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		     unsigned flags)
{
	struct fz_side *s = arg;
	uint8_t meta[8];

	CHECK(s->bk.in_fpdu);
	CHECK(hdr_len == s->bk.cur_hdr_len && ulpdu_len == s->bk.cur_ulpdu &&
	      flags == s->bk.cur_flags);
	CHECK(memcmp(hdr, s->bk.cur_hdr, hdr_len) == 0);
	s->bk.in_fpdu = 0;
	s->bk.nend++;
	meta[0] = (uint8_t)hdr_len;
	meta[1] = (uint8_t)(ulpdu_len >> 8);
	meta[2] = (uint8_t)ulpdu_len;
	meta[3] = (uint8_t)flags;
	memset(meta + 4, 0, 4);
	log_add(s->log, meta, sizeof(meta));
	log_add(s->log, hdr, hdr_len);
	log_add(s->log, s->buf, ulpdu_len - hdr_len);
	if (hdr_len >= 2 && hdr[0] == 0xEE && hdr[1] == 0xED)
		return -EIO;
	return 0;
}

static const struct mpa_ops fz_ops = {
	.request = fz_request,
	.reply = fz_reply,
	.rx_hdr_len = fz_rx_hdr_len,
	.rx_begin = fz_rx_begin,
	.rx_end = fz_rx_end,
};

static void fz_cfg_decode(struct fz_cfg *fc, uint8_t b0, uint8_t b1)
{
	fc->initiator = b0 & 1;
	fc->crc = !!(b0 & 2);
	fc->markers = !!(b0 & 4);
	fc->hdr_min = hdr_min_tab[(b0 >> 3) & 3];
	fc->p2p = !!(b0 & 0x20);
	fc->hdr_mode = !!(b0 & 0x40);
	fc->handshake = !!(b0 & 0x80);
	fc->chunk = b1 & 15;
	fc->path = (b1 >> 4) & 3;
	fc->small_lend = !!(b1 & 0x40);
	fc->small_ulpdu = !!(b1 & 0x80);
}

static void side_cfg(struct mpa_cfg *cfg, const struct fz_cfg *fc, int initiator, int fuzzed)
{
	mpa_cfg_init(cfg, initiator ? MPA_ROLE_INITIATOR : MPA_ROLE_RESPONDER);
	cfg->crc = fc->crc;
	cfg->p2p = initiator && fc->p2p;
	/* siw's device maximum: a Reply from the captures (NFS: ORD 128)
	 * then reaches full operation */
	cfg->ird = 128;
	if (fuzzed) {
		cfg->markers = fc->markers;
		cfg->rx_hdr_min = fc->hdr_min;
		cfg->rx_ulpdu_max = fc->small_ulpdu ? 1024 : MPA_ULPDU_MAX;
	}
	cfg->tx_depth = 4;
}

/* Move everything @from has to send into @to. */
static void pump(struct fz_side *from, struct fz_side *to)
{
	struct iovec iov[16];
	int n;

	while ((n = mpa_tx_pending(&from->c, iov, 16)) > 0) {
		size_t moved = 0;

		for (int i = 0; i < n; i++) {
			if (to && mpa_rx(&to->c, iov[i].iov_base, iov[i].iov_len) < 0)
				to = NULL;
			moved += iov[i].iov_len;
		}
		CHECK(mpa_tx_advance(&from->c, moved) == 0);
	}
}

/* Bring @fz to the state the input expects.  Returns 0 or -1. */
static int fz_setup(struct fz_side *fz, struct fz_side *helper, const struct fz_cfg *fc)
{
	struct mpa_cfg cfg;
	struct fz_side *ini = fc->initiator ? fz : helper, *rsp = fc->initiator ? helper : fz;

	side_cfg(&cfg, fc, fc->initiator, 1);
	CHECK(mpa_conn_init(&fz->c, &cfg, &fz_ops, fz) == 0);
	if (fc->handshake) {
		CHECK(mpa_conn_start(&fz->c, "hi", 2, 0) == 0);
		pump(fz, NULL); /* the Request goes nowhere */
		return 0;
	}
	side_cfg(&cfg, fc, !fc->initiator, 0);
	CHECK(mpa_conn_init(&helper->c, &cfg, &fz_ops, helper) == 0);
	CHECK(mpa_conn_start(&rsp->c, NULL, 0, 0) == 0);
	CHECK(mpa_conn_start(&ini->c, "hi", 2, 0) == 0);
	pump(ini, rsp);
	pump(rsp, ini);
	/* the helper's FPDUs (initiator's first FPDU, RTR) are not fed back */
	pump(helper, NULL);
	CHECK(fz->c.state == MPA_S_FULL && helper->c.state == MPA_S_FULL);
	return 0;
}

/* Feed @len octets with the configured chunking and receive paths. */
static void fz_feed(struct fz_side *s, const uint8_t *in, size_t len)
{
	const struct fz_cfg *fc = s->cfg;
	uint32_t rng = (uint32_t)len * 0x9E3779B1u ^ fc->chunk << 8 ^ fc->path;
	size_t off = 0, cut_from = 0;
	unsigned idx = 0, ncut = 0;

	/* FZ_CUTS_MAX chunks of the configured sizes from @cut_from: the start
	 * of the stream for half the inputs, a pseudo-random octet for the
	 * others; the rest in chunks of 1..16384 */
	if (fc->chunk && len > FZ_CUTS_MAX && (xs32(&rng) & 1))
		cut_from = xs32(&rng) % (len - FZ_CUTS_MAX);
	while (off < len) {
		size_t k = len - off;
		int lend;

		if (fc->chunk && (off < cut_from || ncut >= FZ_CUTS_MAX)) {
			/* log-uniform: an ack may still span many markers */
			unsigned lim = 16u << xs32(&rng) % 11;

			k = 1 + xs32(&rng) % lim;
			if (off < cut_from && k > cut_from - off)
				k = cut_from - off;
		} else if (fc->chunk) {
			ncut++;
			if (fc->chunk == 1)
				k = 1;
			else
				k = 1 + xs32(&rng) % (1u << (fc->chunk - 1));
		}
		if (k > len - off)
			k = len - off;
		switch (fc->path) {
		case 0:
			lend = 0;
			break;
		case 1:
			lend = 1;
			break;
		case 2:
			lend = idx & 1;
			break;
		default:
			lend = xs32(&rng) & 1;
			break;
		}
		idx++;
		if (!lend) {
			ssize_t r = mpa_rx(&s->c, in + off, k);

			if (r < 0)
				return;
			CHECK((size_t)r <= k);
			off += (size_t)r;
			if ((size_t)r < k)
				return; /* MPA takes no more octets */
			continue;
		}
		for (size_t used = 0; used < k;) {
			struct iovec iov[FZ_LEND_MAX];
			int max = fc->small_lend ? 1 + (int)(xs32(&rng) % 3)
				  : k < 256	 ? 1 + (int)(k / 4)
						 : FZ_LEND_MAX;
			/* half the lends end in a look-ahead of 1..4096 octets,
			 * as the engine's reads do (its octets are copied) */
			static uint8_t ahead[4096];
			size_t alen = (xs32(&rng) & 1) ? 1 + xs32(&rng) % sizeof(ahead) : 0;
			int n = alen && max >= 2 ? mpa_rx_lend_ahead(&s->c, iov, max, ahead, alen)
						 : mpa_rx_lend(&s->c, iov, max);
			size_t got = 0;

			if (n <= 0)
				return;
			CHECK(n <= max);
			for (int i = 0; i < n && used + got < k; i++) {
				size_t m = iov[i].iov_len;

				if (m > k - used - got)
					m = k - used - got;
				memcpy(iov[i].iov_base, in + off + used + got, m);
				got += m;
			}
			CHECK(got > 0); /* a lend always takes something */
			if (mpa_rx_ack(&s->c, got) < 0)
				return;
			used += got;
		}
		off += k;
	}
}

static void fz_after(struct fz_side *s)
{
	struct iovec iov[8];
	int n;

	/* After an error only a TERMINATE leaves; make sure one can. */
	if (s->c.state == MPA_S_ERROR && s->c.tx_slots)
		mpa_tx_fpdu(&s->c, write0, sizeof(write0), NULL, 0, NULL);
	while ((n = mpa_tx_pending(&s->c, iov, 8)) > 0) {
		size_t moved = 0;

		for (int i = 0; i < n; i++)
			moved += iov[i].iov_len;
		CHECK(mpa_tx_advance(&s->c, moved) == 0);
	}
	if (mpa_conn_next_timeout(&s->c) != UINT64_MAX)
		mpa_conn_timeout(&s->c, UINT64_MAX - 1);
}

static void csnap_take(struct fz_csnap *s, const struct mpa_conn *c)
{
	void *blk[FZ_NBLK] = {c->tx_slots, c->tx_iov_pool, c->tx_mk_pool, c->tx_bounce};

	s->c = *c;
	for (int i = 0; i < FZ_NBLK; i++) {
		s->blk[i] = blk[i];
		s->len[i] = blk[i] ? malloc_usable_size(blk[i]) : 0;
		s->copy[i] = NULL;
		if (blk[i]) {
			s->copy[i] = malloc(s->len[i]);
			CHECK(s->copy[i]);
			memcpy(s->copy[i], blk[i], s->len[i]);
		}
	}
}

static void csnap_drop(struct fz_csnap *s)
{
	for (int i = 0; i < FZ_NBLK; i++)
		free(s->copy[i]);
	memset(s, 0, sizeof(*s));
}

/* Put @c back as saved in @s: 0, or -1 with @c destroyed and @s dropped. */
static int csnap_put(struct fz_csnap *s, struct mpa_conn *c)
{
	void *blk[FZ_NBLK] = {c->tx_slots, c->tx_iov_pool, c->tx_mk_pool, c->tx_bounce};
	int owned = 0;

	if (memcmp(blk, s->blk, sizeof(blk)) == 0) {
		*c = s->c;
		for (int i = 0; i < FZ_NBLK; i++)
			if (s->blk[i])
				memcpy(s->blk[i], s->copy[i], s->len[i]);
		return 0;
	}
	mpa_conn_destroy(c);
	for (int i = 0; i < FZ_NBLK; i++)
		owned |= s->blk[i] != NULL;
	if (!owned) {
		*c = s->c;
		return 0;
	}
	csnap_drop(s);
	return -1;
}

/* Set up the endpoints of @fc's configuration and save them. */
static void set_build(struct fz_set *st, const struct fz_cfg *fc)
{
	struct fz_side ha, hb;

	memset(st, 0, sizeof(*st));
	memset(&ha, 0, sizeof(ha));
	memset(&hb, 0, sizeof(hb));
	st->a.cfg = st->b.cfg = ha.cfg = hb.cfg = fc;
	ha.helper = hb.helper = 1;
	fz_setup(&st->a, &ha, fc);
	fz_setup(&st->b, &hb, fc);
	mpa_conn_destroy(&ha.c);
	mpa_conn_destroy(&hb.c);
	st->bka = st->a.bk;
	st->bkb = st->b.bk;
	csnap_take(&st->sa, &st->a.c);
	csnap_take(&st->sb, &st->b.c);
}

/* -max_len=2+FZ_IN_MAX unless the command line says otherwise (flags given
 * later win): libFuzzer would otherwise mutate up to the largest seed. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char max_len[32];
	static char **args;

	args = malloc(((size_t)*argc + 2) * sizeof(*args));
	CHECK(args);
	snprintf(max_len, sizeof(max_len), "-max_len=%d", 2 + FZ_IN_MAX);
	args[0] = (*argv)[0];
	args[1] = max_len;
	for (int i = 1; i < *argc; i++)
		args[i + 1] = (*argv)[i];
	args[*argc + 1] = NULL;
	*argv = args;
	(*argc)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *buf_a, *buf_b;
	static struct fz_log log_a, log_b;
	/* one set per configuration: octet 0 (bit 6 left out: it matters only
	 * once FPDUs arrive, never during set-up) and rx_ulpdu_max in its place */
	static struct fz_set *sets[256];
	struct fz_set *st;
	struct fz_side *a, *b, *r;
	struct fz_cfg fc, ref;
	uint8_t la, ea, ca, lb, eb, cb;
	unsigned key;
	int ta, tb, ra, rb;

	if (size < 2)
		return 0;
	if (size > 2 + FZ_IN_MAX)
		size = 2 + FZ_IN_MAX;
	if (!buf_a) {
		buf_a = malloc(FZ_BUF);
		buf_b = malloc(FZ_BUF);
		CHECK(buf_a && buf_b);
		log_add(&log_a, "", 0); /* allocates */
		log_add(&log_b, "", 0);
	}
	fz_cfg_decode(&fc, data[0], data[1]);
	ref = fc;
	ref.chunk = 0;
	ref.path = 0;
	key = (data[0] & ~0x40u) | (fc.small_ulpdu ? 0x40u : 0);
	if (!sets[key]) {
		sets[key] = malloc(sizeof(*sets[key]));
		CHECK(sets[key]);
		set_build(sets[key], &fc);
	}
	st = sets[key];
	a = &st->a;
	b = &st->b;
	a->cfg = &fc;
	b->cfg = &ref;
	a->buf = buf_a;
	b->buf = buf_b;
	a->log = &log_a;
	b->log = &log_b;
	log_a.len = log_b.len = 0;

	fz_feed(a, data + 2, size - 2);
	/* the reference; fed like @a (one mpa_rx() call), it would only repeat it */
	r = a;
	if (fc.chunk || fc.path) {
		fz_feed(b, data + 2, size - 2);
		r = b;
	}

	/* same deliveries, same end, whatever the chunking and path */
	CHECK(a->c.state == r->c.state && a->c.err == r->c.err);
	CHECK(a->bk.nbegin == r->bk.nbegin && a->bk.nend == r->bk.nend);
	CHECK(a->log->len == r->log->len && memcmp(a->log->p, r->log->p, a->log->len) == 0);
	CHECK(a->bk.nreq == r->bk.nreq && a->bk.nrep == r->bk.nrep);
	ta = mpa_conn_term(&a->c, &la, &ea, &ca);
	tb = mpa_conn_term(&r->c, &lb, &eb, &cb);
	CHECK(ta == tb && (!ta || (la == lb && ea == eb && ca == cb)));
	if (a->c.state == MPA_S_FULL)
		CHECK(a->c.rx.pos == r->c.rx.pos && a->c.rx_fpdus == r->c.rx_fpdus);

	fz_after(a);
	/* back to the state after set-up for the next input */
	a->bk = st->bka;
	b->bk = st->bkb;
	ra = csnap_put(&st->sa, &a->c);
	rb = csnap_put(&st->sb, &b->c);
	if (ra || rb) {
		/* set up anew next time */
		mpa_conn_destroy(&a->c);
		mpa_conn_destroy(&b->c);
		csnap_drop(&st->sa);
		csnap_drop(&st->sb);
		free(st);
		sets[key] = NULL;
	}
	return 0;
}
