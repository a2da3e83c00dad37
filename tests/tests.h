/* SPDX-License-Identifier: MIT */
/* Shared declarations of the Check test suites (one binary, all suites). */
#ifndef UIW_TESTS_H
#define UIW_TESTS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

Suite *crc32c_suite(void);
Suite *mpa_rr_suite(void);
Suite *mpa_fpdu_suite(void);
Suite *mpa_loop_suite(void);
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

#endif /* UIW_TESTS_H */
