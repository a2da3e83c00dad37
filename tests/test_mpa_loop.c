/* SPDX-License-Identifier: MIT */
/*
 * Loop tests: two complete MPA endpoints joined by an in-memory wire that
 * re-splits the stream at every offset (small cases) and at seeded random
 * sizes (large cases), with markers on/off and CRC on/off, through every
 * receive path (copying mpa_rx, lend/ack, lend/ack with a look-ahead).
 * What comes out must equal what went in, and the copy counters must
 * account for every payload octet; a flipped bit must never be delivered.
 */
#include "tests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memwire.h"
#include "mpa_pair.h"

struct loop_case {
	int crc;
	int markers;
	int dir;       /* 0: initiator -> responder, 1: responder -> initiator */
	uint32_t emss; /* sets the transmit MULPDU */
};

struct msg_log {
	uint8_t *hdrs;
	size_t hdrs_len;
	uint8_t *payload;
	size_t payload_len;
	size_t n;
};

static void setup(struct tp_pair *p, const struct loop_case *lc)
{
	struct mpa_cfg a, b;

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.crc = lc->crc;
	b.crc = lc->crc;
	a.markers = lc->markers;
	b.markers = lc->markers;
	a.emss = b.emss = lc->emss;
	a.tx_depth = b.tx_depth = 64;
	ck_assert_int_eq(tp_init(p, &a, &b, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(p), 0);
	if (lc->dir == 1) {
		/* open the responder's transmit gate (RFC 5044 §7.1.2 rule 4) */
		static const uint8_t hdr[14] = {0xC1, 0x40};
		uint8_t wire[64];
		size_t n;

		ck_assert_int_eq(tp_send(&p->ini, hdr, 14, NULL, 0), 0);
		n = tp_drain(&p->ini, wire, sizeof(wire));
		ck_assert_int_eq(tp_feed(&p->rsp, wire, n, 0), (ssize_t)n);
		ck_assert_int_eq(p->rsp.nend, 1);
	}
}

/*
 * Queue @count FPDUs of random header kind and payload size (0..max) from
 * @src, drain them to @wire, and log what was sent.
 */
static size_t make_stream(struct tp_side *tx, uint64_t *rng, size_t count, size_t max_payload,
			  const uint8_t *src, uint8_t *wire, size_t cap, struct msg_log *log)
{
	size_t total = 0, off = 0;

	memset(log, 0, sizeof(*log));
	log->hdrs = malloc(count * 18);
	log->payload = malloc(count * (max_payload + 1));
	ck_assert(log->hdrs && log->payload);
	for (size_t i = 0; i < count; i++) {
		uint8_t hdr[18];
		size_t hl, pl;

		tu_rand_fill(rng, hdr, sizeof(hdr));
		hl = tp_hdr_len(hdr[0]);
		pl = (size_t)(tu_rand(rng) % (max_payload + 1));
		if (pl > mpa_tx_mulpdu(&tx->c) - hl)
			pl = mpa_tx_mulpdu(&tx->c) - hl;
		ck_assert_int_eq(tp_send(tx, hdr, hl, src + off, pl), 0);
		memcpy(log->hdrs + log->hdrs_len, hdr, hl);
		log->hdrs_len += hl;
		memcpy(log->payload + log->payload_len, src + off, pl);
		log->payload_len += pl;
		off += pl;
		log->n++;
		if (mpa_tx_space(&tx->c) == 0 || i + 1 == count)
			total += tp_drain(tx, wire + total, cap - total);
	}
	return total;
}

static void log_free(struct msg_log *log)
{
	free(log->hdrs);
	free(log->payload);
}

static void check_received(struct tp_side *rx, const struct msg_log *log, size_t skip_fpdus,
			   size_t skip_hdr)
{
	ck_assert_uint_eq(rx->nfpdu - skip_fpdus, log->n);
	ck_assert_uint_eq(rx->hdrs_len - skip_hdr, log->hdrs_len);
	ck_assert_mem_eq(rx->hdrs + skip_hdr, log->hdrs, log->hdrs_len);
	ck_assert_uint_eq(rx->payload_len, log->payload_len);
	/* every payload octet was either read in place or copied by MPA */
	ck_assert_uint_eq(rx->c.copies.rx_direct + rx->c.copies.rx_copied, rx->payload_len);
	if (log->payload_len)
		ck_assert_mem_eq(rx->payload, log->payload, log->payload_len);
}

static const struct loop_case cases[] = {
	{0, 0, 0, 1460}, {1, 0, 0, 1460},  {0, 1, 0, 1460},  {1, 1, 0, 1460},
	{0, 0, 1, 1460}, {1, 0, 1, 1460},  {0, 1, 1, 1460},  {1, 1, 1, 1460},
	{1, 1, 0, 9000}, {1, 0, 0, 65483}, {1, 1, 1, 65483}, {0, 1, 0, 200},
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

/* Small streams re-split at every offset, both receive paths. */
START_TEST(split_every_offset)
{
	const struct loop_case *lc = &cases[_i % NCASES];
	uint64_t rng = tu_seed() ^ (uint64_t)_i;
	static uint8_t src[4096], wire[8192];
	struct msg_log log;
	struct tp_pair p0;
	size_t n;

	tu_rand_fill(&rng, src, sizeof(src));
	/* Build the stream once to learn its bytes. */
	setup(&p0, lc);
	{
		struct tp_side *tx = lc->dir ? &p0.rsp : &p0.ini;

		n = make_stream(tx, &rng, 5, 150, src, wire, sizeof(wire), &log);
	}
	tp_destroy(&p0);
	for (size_t k = 0; k <= n; k++) {
		for (int mode = 0; mode < TP_FEED_MODES; mode++) {
			struct tp_pair p;
			struct tp_side *rx;
			size_t skip;

			setup(&p, lc);
			rx = lc->dir ? &p.ini : &p.rsp;
			skip = rx->nfpdu;
			/* the receiver starts its stream from the same state as
			 * the sender did when the stream was built */
			if (lc->dir) {
				/* the initiator's receive side has seen nothing yet,
				 * as when the stream was made */
			}
			ck_assert_int_eq(tp_feed(rx, wire, k, mode), (ssize_t)k);
			ck_assert_int_eq(tp_feed(rx, wire + k, n - k, mode), (ssize_t)(n - k));
			check_received(rx, &log, skip, lc->dir ? 0 : 0);
			if (mode == 0) /* the copying deframer copies */
				ck_assert_uint_eq(rx->c.copies.rx_direct, 0);
			if (mode == 1) /* a lend without look-ahead never does */
				ck_assert_uint_eq(rx->c.copies.rx_copied, 0);
			tp_destroy(&p);
		}
	}
	log_free(&log);
}
END_TEST

/* Large streams with seeded random chunk sizes. */
START_TEST(random_chunks)
{
	const struct loop_case *lc = &cases[_i % NCASES];
	int mode = _i / NCASES;
	uint64_t rng = tu_seed() * 31 + (uint64_t)_i;
	size_t srcsz = 4u << 20;
	uint8_t *src = malloc(srcsz), *wire = malloc(srcsz + (srcsz / 8));
	struct msg_log log;
	struct tp_pair p;
	struct tp_side *tx, *rx;
	size_t n, off = 0, count = lc->emss > 2000 ? 120 : 1500;

	ck_assert(src && wire);
	tu_rand_fill(&rng, src, srcsz);
	setup(&p, lc);
	tx = lc->dir ? &p.rsp : &p.ini;
	rx = lc->dir ? &p.ini : &p.rsp;
	n = make_stream(tx, &rng, count, mpa_tx_mulpdu(&tx->c), src, wire, srcsz + srcsz / 8, &log);
	while (off < n) {
		size_t k = 1 + (size_t)(tu_rand(&rng) % (tu_rand(&rng) % 2 ? 16 : 9000));

		if (k > n - off)
			k = n - off;
		ck_assert_int_eq(tp_feed(rx, wire + off, k, mode), (ssize_t)k);
		off += k;
	}
	check_received(rx, &log, lc->dir ? 0 : 0, 0);
	ck_assert_int_eq(tx->c.tx_count, 0);
	log_free(&log);
	tp_destroy(&p);
	free(src);
	free(wire);
}
END_TEST

/*
 * The engine's reads with a look-ahead, on a socket that always holds the
 * whole stream: 64 KiB messages cut as RDMAP cuts them at loopback's MSS
 * (one FPDU of the largest MULPDU, one of the rest: 64754 + 782 payload
 * octets) take one read each with the engine's 1 KiB look-ahead, and MPA
 * copies under 2% of the payload (the short FPDU and what the look-ahead
 * caught of the next); 1 KiB FPDUs with a 64 KiB
 * look-ahead (uiw_conn's policy for small FPDUs) take one read per 64 KiB
 * or so.  Cases: markers off/on x those two shapes (markers on: what is
 * delivered and counted only).
 */
START_TEST(ahead_one_read_per_message)
{
	int small = _i & 1;
	struct loop_case lc = {1, (_i >> 1) & 1, 0, small ? 1460 : 65483};
	const size_t msg = 65536, count = 64;
	size_t cap = count * (msg + msg / 8), n = 0, total = 0, fpdu;
	uint8_t *src = malloc(msg), *wire = malloc(cap);
	static const uint8_t hdr[14] = {0x81, 0x01};
	struct tp_pair p;
	uint64_t rng = tu_seed() + (uint64_t)_i;
	unsigned long reads0;
	double copied;

	ck_assert(src && wire);
	tu_rand_fill(&rng, src, msg);
	setup(&p, &lc);
	fpdu = small ? 1024 : mpa_tx_mulpdu(&p.ini.c) - sizeof(hdr);
	for (size_t m = 0; m < count; m++) {
		for (size_t off = 0; off < msg; off += fpdu) {
			size_t k = msg - off < fpdu ? msg - off : fpdu;

			ck_assert_int_eq(tp_send(&p.ini, hdr, sizeof(hdr), src + off, k), 0);
			if (mpa_tx_space(&p.ini.c) == 0)
				n += tp_drain(&p.ini, wire + n, cap - n);
		}
	}
	n += tp_drain(&p.ini, wire + n, cap - n);
	reads0 = mw_reads;
	ck_assert_int_eq(mw_ahead_feed(&p.rsp.c, wire, n, small ? MW_AHEAD_MAX : UIW_TEST_AHEAD), (ssize_t)n);
	total = p.rsp.c.copies.rx_direct + p.rsp.c.copies.rx_copied;
	ck_assert_uint_eq(total, count * msg);
	ck_assert_uint_eq(p.rsp.payload_len, count * msg);
	copied = (double)p.rsp.c.copies.rx_copied / (double)total;
	if (small) {
		/* markers take 4 of every 512 octets: 65536-octet reads */
		ck_assert_uint_le(mw_reads - reads0, n / 60000 + 2);
	} else if (!lc.markers) {
		ck_assert_uint_le(mw_reads - reads0, count + 2);
		ck_assert_msg(copied < 0.02, "copied %.4f of the payload", copied);
	}
	/* markers on, large FPDUs: a lend covers MPA_RX_MK_SLOTS markers, so
	 * a read per that many; uiw_conn takes the copying look-ahead there */
	tp_destroy(&p);
	free(src);
	free(wire);
}
END_TEST

/* Any single flipped bit (CRC on) is never delivered as valid data. */
START_TEST(bitflip_detected)
{
	struct loop_case lc = {1, _i & 1, 0, 1460};
	uint64_t rng = tu_seed() * 7 + (uint64_t)_i;
	static uint8_t src[8192], wire[16384];
	struct msg_log log;
	struct tp_pair p;
	size_t n, bit;
	ssize_t r;

	tu_rand_fill(&rng, src, sizeof(src));
	setup(&p, &lc);
	n = make_stream(&p.ini, &rng, 6, 900, src, wire, sizeof(wire), &log);
	bit = (size_t)(tu_rand(&rng) % (n * 8));
	wire[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	r = tp_feed(&p.rsp, wire, n, _i & 2 ? 1 : 0);
	ck_assert(r < 0 || p.rsp.nend < (int)log.n);
	/* what was delivered is exactly a prefix of what was sent */
	ck_assert_uint_le(p.rsp.payload_len, log.payload_len);
	if (p.rsp.payload_len)
		ck_assert_mem_eq(p.rsp.payload, log.payload, p.rsp.payload_len);
	log_free(&log);
	tp_destroy(&p);
}
END_TEST

Suite *mpa_loop_suite(void)
{
	Suite *s = suite_create("mpa_loop");
	TCase *tc = tcase_create("split_every_offset");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, split_every_offset, 0, NCASES);
	suite_add_tcase(s, tc);
	tc = tcase_create("random_chunks");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, random_chunks, 0, TP_FEED_MODES * NCASES);
	suite_add_tcase(s, tc);
	tc = tcase_create("ahead");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, ahead_one_read_per_message, 0, 4);
	suite_add_tcase(s, tc);
	tc = tcase_create("bitflip");
	tcase_add_loop_test(tc, bitflip_detected, 0, 400);
	suite_add_tcase(s, tc);
	return s;
}
