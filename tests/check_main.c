/* SPDX-License-Identifier: MIT */
/*
 * Runs every Check suite of uiwarp.  CK_RUN_SUITE / CK_RUN_CASE select a
 * subset (Check's own variables); UIW_TEST_SEED changes the random seed.
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	SRunner *sr;
	int failed;

	printf("uiwarp tests: seed 0x%llx (set UIW_TEST_SEED to change)\n",
	       (unsigned long long)tu_seed());
	sr = srunner_create(crc32c_suite());
	srunner_add_suite(sr, mpa_rr_suite());
	srunner_add_suite(sr, mpa_fpdu_suite());
	srunner_add_suite(sr, mpa_loop_suite());
	srunner_add_suite(sr, mpa_markers_err_suite());
	srunner_add_suite(sr, rdmap_loop_suite());
	srunner_add_suite(sr, rdmap_err_suite());
	srunner_add_suite(sr, rdmap_ext_suite());
	srunner_add_suite(sr, verbs_suite());
	srunner_add_suite(sr, verbs_proc_suite());
	srunner_add_suite(sr, verbs_api_suite());
	srunner_add_suite(sr, cm_channel_suite());
	srunner_add_suite(sr, rpcrdma_hdr_suite());
	srunner_add_suite(sr, replay_suite());
	srunner_add_suite(sr, rpc_suite());
	srunner_add_suite(sr, rpc_clnt_suite());
	srunner_add_suite(sr, midop_suite());
	srunner_add_suite(sr, conn_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
