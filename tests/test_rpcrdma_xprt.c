/* SPDX-License-Identifier: MIT */
/* Placeholder: the rpcrdma_xprt suite is being written. */
#include "tests.h"

Suite *rpcrdma_xprt_suite(void)
{
	return suite_create("rpcrdma_xprt");
}
