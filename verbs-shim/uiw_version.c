/* SPDX-License-Identifier: MIT */
/* Public entry points that exist before the verbs API (see uiw_verbs.h). */
#include "uiw_verbs.h"

#include "crc32c.h"

#ifndef UIW_VERSION
#define UIW_VERSION "0.0.0"
#endif

const char *uiw_version(void)
{
	return UIW_VERSION;
}

unsigned int uiw_crc32c(const void *buf, unsigned long len)
{
	return crc32c(buf, len);
}
