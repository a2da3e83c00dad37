/* SPDX-License-Identifier: MIT */
/* placeholder: filled in by the verbs_api tests */
#include "tests.h"

Suite *verbs_api_suite(void)
{
	Suite *s = suite_create("verbs_api");

	return s;
}
