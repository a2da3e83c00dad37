/* SPDX-License-Identifier: MIT */
/* Placeholder: the replay suite is being written. */
#include "tests.h"

Suite *replay_suite(void)
{
	return suite_create("replay");
}
