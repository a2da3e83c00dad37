/* SPDX-License-Identifier: MIT */
/*
 * FPDU framing against the annotated hex dumps of RFC 5044 §4.4 (Figures 5
 * and 6), byte for byte on transmit and accepted on receive, and the
 * receive-side error classes of RFC 5044 §8.
 */
#include "tests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"
#include "mpa_pair.h"

/* RFC 5044 Figure 5: first FPDU of the stream, marker first, a 42-octet
 * ULPDU (untagged Send, MSN 1, 24 zero octets), CRC 0x83992352. */
static const char fig5_hex[] = "00 00 00 00"		 /* marker, FPDUPTR 0 */
			       "00 2a 41 43 00 00 00 00" /* len, ctrl, rsvd */
			       "00 00 00 00 00 00 00 01" /* QN 0, MSN 1 */
			       "00 00 00 00"		 /* MO 0 */
			       "00 00 00 00 00 00 00 00 00 00 00 00"
			       "00 00 00 00 00 00 00 00 00 00 00 00"
			       "52 23 99 83";

/* RFC 5044 Figure 6: the second FPDU (stream offset 0x1ec), MSN 2, with a
 * marker at 0x200 whose FPDUPTR is 0x14, CRC 0x98589284. */
static const char fig6_hex[] = "00 2a 41 43 00 00 00 00 00 00 00 00 00 00 00 02"
			       "00 00 00 00"
			       "00 00 00 14" /* marker at stream offset 0x200 */
			       "00 00 00 00 00 00 00 00 00 00 00 00"
			       "00 00 00 00 00 00 00 00 00 00 00 00"
			       "84 92 58 98";

static const uint8_t send_hdr_msn1[18] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0,
					  0,	0,    0, 0, 1, 0, 0, 0, 0};

/* A pair where the initiator sends with markers and CRC: the responder asks
 * for markers (M=1 in its Reply), the initiator for CRC. */
static void markers_crc_pair(struct tp_pair *p)
{
	struct mpa_cfg a, b;

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.crc = 1;
	b.crc = 0;
	b.markers = 1;
	ck_assert_int_eq(tp_init(p, &a, &b, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(p), 0);
	ck_assert(p->ini.c.tx_markers);
	ck_assert(p->rsp.c.rx_markers);
	ck_assert(p->ini.c.crc_on && p->rsp.c.crc_on);
}

START_TEST(fig5_transmit)
{
	struct tp_pair p;
	uint8_t want[64], wire[256];
	uint8_t zeros[24] = {0};
	size_t wl = tu_hex(fig5_hex, want, sizeof(want)), n;

	ck_assert_uint_eq(wl, 52);
	markers_crc_pair(&p);
	ck_assert_int_eq(tp_send(&p.ini, send_hdr_msn1, 18, zeros, 24), 0);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, wl);
	ck_assert_mem_eq(wire, want, wl);
	tp_destroy(&p);
}
END_TEST

/* Markers on: an FPDU leaves as one run (its flat copy: one iovec for the
 * send, one CRC call), the same octets the iovec walk would send: the
 * responder finds every marker and the CRC good, in 80 FPDUs of a few
 * hundred octets to 60 KiB whose lengths (runs of 16) move the markers
 * across the header, PAD and CRC field; the queued FPDU still names its
 * source for deregistration (mpa_tx_refs). */
START_TEST(markers_flat_fpdu)
{
	static const size_t base[] = {500, 1000, 4093, 30001, 60000};
	struct tp_pair p;
	uint8_t *src = malloc(60100), *wire = malloc(70000);
	size_t want = 0;
	struct mpa_cfg a, r;

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(wire);
	for (size_t i = 0; i < 60100; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	/* as markers_crc_pair(), with loopback's segment size */
	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&r, MPA_ROLE_RESPONDER);
	a.crc = 1;
	a.emss = 65483;
	r.markers = 1;
	ck_assert_int_eq(tp_init(&p, &a, &r, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(&p), 0);
	ck_assert(p.ini.c.tx_markers && p.ini.c.crc_on);
	for (unsigned b = 0; b < sizeof(base) / sizeof(base[0]); b++) {
		for (size_t len = base[b]; len < base[b] + 16; len++) {
			struct iovec iov[4];
			size_t n;

			ck_assert_int_eq(tp_send(&p.ini, send_hdr_msn1, 18, src, len), 0);
			ck_assert_int_eq(mpa_tx_refs(&p.ini.c, (uintptr_t)src + len - 1,
						     (uintptr_t)src + len),
					 1);
			ck_assert_int_eq(mpa_tx_pending(&p.ini.c, iov, 4), 1);
			n = tp_drain(&p.ini, wire, 70000);
			ck_assert_int_eq(tp_feed(&p.rsp, wire, n, (int)(len & 1)), (ssize_t)n);
			want += len;
			ck_assert_uint_eq(p.rsp.payload_len, want);
			ck_assert_mem_eq(p.rsp.payload + want - len, src, len);
		}
	}
	ck_assert_int_eq(p.rsp.nend, (int)(16 * (sizeof(base) / sizeof(base[0]))));
	tp_destroy(&p);
	free(src);
	free(wire);
}
END_TEST

START_TEST(fig5_receive)
{
	struct tp_pair p;
	uint8_t fpdu[64];
	size_t wl = tu_hex(fig5_hex, fpdu, sizeof(fpdu));

	markers_crc_pair(&p);
	ck_assert_int_eq(tp_feed(&p.rsp, fpdu, wl, _i), (ssize_t)wl);
	ck_assert_int_eq(p.rsp.nend, 1);
	ck_assert_uint_eq(p.rsp.ulpdu_lens[0], 42);
	ck_assert_uint_eq(p.rsp.payload_len, 24);
	ck_assert_mem_eq(p.rsp.hdrs, send_hdr_msn1, 18);
	tp_destroy(&p);
}
END_TEST

/* A flipped bit anywhere in Figure 5 is caught: CRC (code 2) or, for the
 * marker and length fields, a framing error. */
START_TEST(fig5_bitflip)
{
	struct tp_pair p;
	uint8_t fpdu[64];
	size_t wl = tu_hex(fig5_hex, fpdu, sizeof(fpdu));
	uint8_t layer, etype, ecode;
	ssize_t r;

	markers_crc_pair(&p);
	fpdu[_i / 8] ^= (uint8_t)(1u << (_i % 8));
	r = tp_feed(&p.rsp, fpdu, wl, 0);
	/* A longer ULPDU_Length leaves the FPDU incomplete: more octets are
	 * wanted, nothing is delivered. */
	if (r == (ssize_t)wl) {
		ck_assert_int_eq(p.rsp.nend, 0);
		ck_assert(_i / 8 == 4 || _i / 8 == 5);
	} else {
		ck_assert_int_lt(r, 0);
		ck_assert_int_eq(p.rsp.c.state, MPA_S_ERROR);
		ck_assert_int_eq(p.rsp.nend, 0);
		ck_assert(mpa_conn_term(&p.rsp.c, &layer, &etype, &ecode));
		ck_assert_uint_eq(layer, MPA_TERM_LAYER_LLP);
		ck_assert(ecode == MPA_ECODE_CRC || ecode == MPA_ECODE_MARKER);
	}
	tp_destroy(&p);
}
END_TEST

START_TEST(fig6_transmit_and_receive)
{
	struct tp_pair p;
	uint8_t want[64], wire[1024], first[464];
	uint8_t zeros[24] = {0};
	uint8_t hdr2[18];
	size_t wl = tu_hex(fig6_hex, want, sizeof(want)), n;

	ck_assert_uint_eq(wl, 52);
	memset(first, 0xa5, sizeof(first));
	markers_crc_pair(&p);
	/* First FPDU: 492 octets with its leading marker (ULPDU 482). */
	ck_assert_int_eq(tp_send(&p.ini, send_hdr_msn1, 18, first, sizeof(first)), 0);
	memcpy(hdr2, send_hdr_msn1, 18);
	hdr2[13] = 2;
	ck_assert_int_eq(tp_send(&p.ini, hdr2, 18, zeros, 24), 0);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 0x1ec + wl);
	ck_assert_mem_eq(wire + 0x1ec, want, wl);
	/* and the receiver takes the whole stream, in one piece or byte by byte */
	if (_i == 0) {
		ck_assert_int_eq(tp_feed(&p.rsp, wire, n, 0), (ssize_t)n);
	} else {
		for (size_t i = 0; i < n; i++)
			ck_assert_int_eq(tp_feed(&p.rsp, wire + i, 1, _i - 1), 1);
	}
	ck_assert_int_eq(p.rsp.nend, 2);
	ck_assert_uint_eq(p.rsp.payload_len, sizeof(first) + 24);
	ck_assert_mem_eq(p.rsp.payload, first, sizeof(first));
	tp_destroy(&p);
}
END_TEST

/* A wrong FPDUPTR with a valid CRC: error code 3 (RFC 5044 §8). */
START_TEST(marker_pointer_error)
{
	struct tp_pair p;
	uint8_t want[64], wire[1024], first[464] = {0};
	uint8_t hdr2[18];
	uint8_t layer, etype, ecode;
	size_t n;

	(void)want;
	markers_crc_pair(&p);
	memcpy(hdr2, send_hdr_msn1, 18);
	hdr2[13] = 2;
	ck_assert_int_eq(tp_send(&p.ini, send_hdr_msn1, 18, first, sizeof(first)), 0);
	ck_assert_int_eq(tp_send(&p.ini, hdr2, 18, first, 24), 0);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	/* Corrupt the marker at 0x200 to point 8 octets further back, and fix
	 * up the CRC so that only the marker is wrong. */
	put_be16(wire + 0x202, 0x1c);
	put_le32(wire + n - 4, crc32c(wire + 0x1ec, n - 4 - 0x1ec));
	ck_assert_int_lt(tp_feed(&p.rsp, wire, n, 0), 0);
	ck_assert_int_eq(p.rsp.nend, 1); /* the first FPDU was fine */
	ck_assert(mpa_conn_term(&p.rsp.c, &layer, &etype, &ecode));
	ck_assert_uint_eq(ecode, MPA_ECODE_MARKER);
	tp_destroy(&p);
}
END_TEST

static void plain_pair(struct tp_pair *p, int crc, uint32_t rx_max)
{
	struct mpa_cfg a, b;

	mpa_cfg_init(&a, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&b, MPA_ROLE_RESPONDER);
	a.crc = crc;
	b.crc = crc;
	if (rx_max)
		b.rx_ulpdu_max = rx_max;
	ck_assert_int_eq(tp_init(p, &a, &b, NULL, 0), 0);
	ck_assert_int_eq(tp_handshake(p), 0);
}

/* ULPDU_Length above the receiver's limit, or too short for the header. */
START_TEST(ulpdu_length_errors)
{
	struct tp_pair p;
	uint8_t fpdu[32] = {0};
	uint8_t layer, etype, ecode;

	plain_pair(&p, 1, 1000);
	put_be16(fpdu, _i ? 1001 : 10);
	fpdu[2] = 0x41;
	ck_assert_int_lt(tp_feed(&p.rsp, fpdu, sizeof(fpdu), 0), 0);
	ck_assert(mpa_conn_term(&p.rsp.c, &layer, &etype, &ecode));
	ck_assert_uint_eq(ecode, MPA_ECODE_MARKER);
	ck_assert_int_eq(p.rsp.nbegin, 0);
	/* nothing is delivered after an error */
	ck_assert_int_eq(tp_feed(&p.rsp, fpdu, sizeof(fpdu), 0), -EPROTO);
	tp_destroy(&p);
}
END_TEST

/* CRC off: the CRC field "MUST NOT be checked"; CRC on: a wrong one is
 * code 2 and the FPDU is never delivered. */
START_TEST(crc_field_checked_only_when_on)
{
	struct tp_pair p;
	uint8_t hdr[18] = {0x41, 0x43};
	uint8_t data[10] = "0123456789", wire[128];
	size_t n;

	plain_pair(&p, _i, 0);
	ck_assert_int_eq(tp_send(&p.ini, hdr, 18, data, 10), 0);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n, 2 + 28 + 2 + 4);
	if (_i)
		ck_assert_uint_eq(get_le32(wire + n - 4), crc32c(wire, n - 4));
	else
		ck_assert_uint_eq(get_le32(wire + n - 4), 0);
	wire[n - 1] ^= 0x80;
	if (_i) {
		ck_assert_int_eq(tp_feed(&p.rsp, wire, n, 0), -EPROTO);
		ck_assert_int_eq(p.rsp.nend, 0);
		ck_assert_uint_eq(p.rsp.c.term_ecode, MPA_ECODE_CRC);
	} else {
		ck_assert_int_eq(tp_feed(&p.rsp, wire, n, 0), (ssize_t)n);
		ck_assert_int_eq(p.rsp.nend, 1);
		ck_assert_mem_eq(p.rsp.payload, data, 10);
	}
	tp_destroy(&p);
}
END_TEST

/* PAD is zero on transmit and makes every FPDU a multiple of 4. */
START_TEST(pad_and_length)
{
	struct tp_pair p;
	uint8_t hdr[18] = {0x41, 0x43};
	uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, wire[128];
	size_t n, pad;

	plain_pair(&p, 1, 0);
	ck_assert_int_eq(tp_send(&p.ini, hdr, 18, data, (size_t)_i), 0);
	n = tp_drain(&p.ini, wire, sizeof(wire));
	ck_assert_uint_eq(n % 4, 0);
	ck_assert_uint_eq(get_be16(wire), 18 + _i);
	pad = (4 - ((2 + 18 + (size_t)_i) % 4)) % 4;
	ck_assert_uint_eq(n, 2 + 18 + (size_t)_i + pad + 4);
	for (size_t k = 0; k < pad; k++)
		ck_assert_uint_eq(wire[2 + 18 + _i + k], 0);
	tp_destroy(&p);
}
END_TEST

/* MULPDU: larger ULPDUs are refused locally, never truncated. */
START_TEST(tx_mulpdu_enforced)
{
	struct tp_pair p;
	static uint8_t big[2000];
	uint8_t hdr[18] = {0x41, 0x43};

	plain_pair(&p, 1, 0);
	ck_assert_uint_eq(mpa_tx_mulpdu(&p.ini.c), 1460 - 6);
	ck_assert_int_eq(tp_send(&p.ini, hdr, 18, big, 1454 - 18), 0);
	ck_assert_int_eq(tp_send(&p.ini, hdr, 18, big, 1454 - 17), -EMSGSIZE);
	tp_destroy(&p);
}
END_TEST

Suite *mpa_fpdu_suite(void)
{
	Suite *s = suite_create("mpa_fpdu");
	TCase *tc = tcase_create("rfc5044_figures");

	tcase_add_test(tc, fig5_transmit);
	tcase_add_test(tc, markers_flat_fpdu);
	tcase_add_loop_test(tc, fig5_receive, 0, 2);
	tcase_add_loop_test(tc, fig5_bitflip, 0, 52 * 8);
	tcase_add_loop_test(tc, fig6_transmit_and_receive, 0, 3);
	tcase_add_test(tc, marker_pointer_error);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors_and_layout");
	tcase_add_loop_test(tc, ulpdu_length_errors, 0, 2);
	tcase_add_loop_test(tc, crc_field_checked_only_when_on, 0, 2);
	tcase_add_loop_test(tc, pad_and_length, 0, 8);
	tcase_add_test(tc, tx_mulpdu_enforced);
	suite_add_tcase(s, tc);
	return s;
}
