/* SPDX-License-Identifier: MIT */
/* placeholder: filled in by the verbs_proc tests */
#include "tests.h"

Suite *verbs_proc_suite(void)
{
	Suite *s = suite_create("verbs_proc");

	return s;
}
