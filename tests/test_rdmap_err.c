/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: error-injection suite being written. */
#include "tests.h"

START_TEST(placeholder)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

Suite *rdmap_err_suite(void)
{
	Suite *s = suite_create("rdmap_err");
	TCase *tc = tcase_create("placeholder");

	tcase_add_test(tc, placeholder);
	suite_add_tcase(s, tc);
	return s;
}
