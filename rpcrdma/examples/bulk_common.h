/* SPDX-License-Identifier: MIT */
/* bulk_common.h - the pattern and checksum shared by the bulk example's
 * client and server (rpcrdma/examples/bulk.x). */
#ifndef BULK_COMMON_H
#define BULK_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* the largest reply of NULL, PUT, and GET when its data moves by Write
 * chunk: RPC reply header (24 octets with AUTH_NONE, up to 424 with a
 * verifier) plus at most three words of results */
#define BULK_SMALL_REPLY 512

/* octet i of the pattern of @seed (seed 0: no pattern, no checking) */
static inline uint8_t bulk_pat(uint32_t seed, size_t i)
{
	uint32_t w = seed ^ (uint32_t)(i / 4) * 0x9e3779b9u;

	return (uint8_t)(w >> (8 * (i % 4)));
}

static inline void bulk_fill(uint32_t seed, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = bulk_pat(seed, i);
}

/* 1 when @p holds the pattern of @seed */
static inline int bulk_check(uint32_t seed, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != bulk_pat(seed, i))
			return 0;
	return 1;
}

/* FNV-1a, 32 bits */
static inline uint32_t bulk_sum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

#endif
