/* SPDX-License-Identifier: MIT */
/* placeholder: filled in by the RPC-over-RDMA header tests */
#include "tests.h"

Suite *rpcrdma_hdr_suite(void)
{
	Suite *s = suite_create("rpcrdma_hdr");

	return s;
}
