/* SPDX-License-Identifier: MIT */
/* Shared declarations of the Check test suites (one binary, all suites). */
#ifndef UIW_TESTS_H
#define UIW_TESTS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

Suite *crc32c_suite(void);
Suite *mpa_rr_suite(void);
Suite *mpa_fpdu_suite(void);
Suite *mpa_loop_suite(void);
Suite *mpa_markers_err_suite(void);
Suite *rdmap_loop_suite(void);
Suite *rdmap_err_suite(void);
Suite *rdmap_ext_suite(void);
Suite *verbs_suite(void);
Suite *verbs_proc_suite(void);
Suite *verbs_api_suite(void);
Suite *cm_channel_suite(void);
Suite *rpcrdma_hdr_suite(void);
Suite *replay_suite(void);
Suite *rpc_suite(void);
Suite *rpc_clnt_suite(void);
Suite *midop_suite(void);
Suite *conn_suite(void);

/*
 * Deterministic randomness: every test seeds its own generator from
 * tu_seed() (UIW_TEST_SEED in the environment, else a fixed value), so a
 * failure is reproduced by re-running with the seed printed at start-up.
 */
uint64_t tu_seed(void);
uint64_t tu_rand(uint64_t *state);
void tu_rand_fill(uint64_t *state, void *buf, size_t len);

/*
 * Upper bound of a wait that must not fail on a slow build: @ms times
 * UIW_TEST_TIME_SCALE (a positive integer) if set, else times 4 in a
 * ThreadSanitizer build (5-15x slower than plain), else @ms.  Only for
 * bounds that pass long before they expire, never for waits expected to time out.
 */
int tu_ms(int ms);

/* Parse a hex string ("00 2a 41 43 ...", spaces ignored) into @out; returns length. */
size_t tu_hex(const char *hex, uint8_t *out, size_t cap);

/*
 * An MPA marker codec written from RFC 5044 §4.3-§4.4 alone, sharing no
 * code with mpa/ (test_mpa_markers_err.c), to check streams with markers.
 * tu_mk_wrap(): the markers-off FPDU @fpdu (@n octets, ULPDU_Length to CRC)
 * with markers inserted as it goes out at stream position @pos (0: the
 * first octet of full operation), its CRC recomputed over them when @crc;
 * returns the octets written to @out.
 * tu_mk_unwrap(): check the stream @in (from position 0, whole FPDUs):
 * every marker, its FPDUPTR, and with @crc every CRC; write the same FPDUs
 * without markers (CRCs recomputed when @crc) to @out.  Returns the octets
 * written, or -1 with the first violation in @why.
 */
size_t tu_mk_wrap(const uint8_t *fpdu, size_t n, uint64_t pos, int crc, uint8_t *out);
ssize_t tu_mk_unwrap(const uint8_t *in, size_t len, int crc, uint8_t *out, size_t cap, char *why,
		     size_t why_len);

#endif /* UIW_TESTS_H */
