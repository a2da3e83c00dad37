/* SPDX-License-Identifier: MIT */
/*
 * CRC32C implementations and their run-time selection.  See crc32c.h.
 *
 * The SSE4.2 path runs three independent crc32q chains over three adjacent
 * blocks of a round (the instruction has a latency of three cycles and a
 * throughput of one per cycle, so one chain leaves two thirds of the unit
 * idle) and joins them with the linearity of the raw CRC register:
 *   reg(s, A||B) = shift(reg(s, A), |B|) ^ reg(0, B)
 * where shift() multiplies by x^(8|B|) mod P.  For the two fixed block sizes
 * used, shift() is a four-table lookup built once at start-up from the
 * generic GF(2) multiply below.
 */
#include "crc32c.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define UIW_HAVE_SSE42_CODE 1
#endif

#ifdef UIW_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t crc_tab[8][256];

/* Block lengths of the three-chain rounds and their shift tables. */
#define LONG_BLK  4096u
#define SHORT_BLK 256u
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];

static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static enum crc32c_impl crc_selected;
static int crc_cpu_sse42;

/* a * b mod P, both in reflected representation (bit 31 is x^0). */
static uint32_t gf2_multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31;
	uint32_t p = 0;

	while (m) {
		if (a & m)
			p ^= b;
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return p;
}

uint32_t crc32c_shift(uint32_t state, uint64_t len)
{
	uint32_t r = 1u << 31;	  /* x^0 */
	uint32_t base = 1u << 23; /* x^8: one byte */

	while (len) {
		if (len & 1)
			r = gf2_multmodp(r, base);
		base = gf2_multmodp(base, base);
		len >>= 1;
	}
	return gf2_multmodp(r, state);
}

static void build_shift_table(uint32_t t[4][256], uint32_t blk)
{
	for (unsigned k = 0; k < 4; k++)
		for (unsigned b = 0; b < 256; b++)
			t[k][b] = crc32c_shift((uint32_t)b << (8 * k), blk);
}

static inline uint32_t shift_by_table(uint32_t t[4][256], uint32_t v)
{
	return t[0][v & 0xff] ^ t[1][(v >> 8) & 0xff] ^ t[2][(v >> 16) & 0xff] ^ t[3][v >> 24];
}

static uint32_t crc_table_update(uint32_t crc, const uint8_t *p, size_t len)
{
	/* Byte-wise up to 8-byte alignment, then slicing-by-8. */
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;
		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xff] ^
		      crc_tab[2][(hi >> 8) & 0xff] ^ crc_tab[1][(hi >> 16) & 0xff] ^
		      crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#ifdef UIW_HAVE_SSE42_CODE
__attribute__((target("sse4.2"))) static uint32_t sse42_one_chain(uint32_t crc, const uint8_t *p,
								  size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

__attribute__((target("sse4.2"))) static uint32_t
sse42_rounds(uint32_t crc, const uint8_t **pp, size_t *lenp, size_t blk, uint32_t t[4][256])
{
	const uint8_t *p = *pp;
	size_t len = *lenp;

	while (len >= 3 * blk) {
		uint64_t a = crc, b = 0, c = 0;
		const uint8_t *pa = p, *pb = p + blk, *pc = p + 2 * blk;

		for (size_t i = 0; i < blk; i += 8) {
			uint64_t va, vb, vc;

			memcpy(&va, pa + i, 8);
			memcpy(&vb, pb + i, 8);
			memcpy(&vc, pc + i, 8);
			a = _mm_crc32_u64(a, va);
			b = _mm_crc32_u64(b, vb);
			c = _mm_crc32_u64(c, vc);
		}
		crc = shift_by_table(t, shift_by_table(t, (uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)c;
		p += 3 * blk;
		len -= 3 * blk;
	}
	*pp = p;
	*lenp = len;
	return crc;
}

static uint32_t crc_sse42_update(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len >= 3 * LONG_BLK)
		crc = sse42_rounds(crc, &p, &len, LONG_BLK, shift_long);
	if (len >= 3 * SHORT_BLK)
		crc = sse42_rounds(crc, &p, &len, SHORT_BLK, shift_short);
	return sse42_one_chain(crc, p, len);
}
#endif

#ifdef UIW_HAVE_ISAL
static uint32_t crc_isal_update(uint32_t crc, const uint8_t *p, size_t len)
{
	/* crc32_iscsi() takes an int length and works on the raw register. */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;

		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}
#endif

int crc32c_available(enum crc32c_impl impl)
{
	switch (impl) {
	case CRC32C_TABLE:
		return 1;
	case CRC32C_SSE42:
#ifdef UIW_HAVE_SSE42_CODE
		return __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
		return 0;
#endif
	case CRC32C_ISAL:
#ifdef UIW_HAVE_ISAL
		return 1;
#else
		return 0;
#endif
	default:
		return 0;
	}
}

const char *crc32c_impl_name(enum crc32c_impl impl)
{
	static const char *const names[CRC32C_NIMPL] = {"table", "sse42", "isal"};

	return (unsigned)impl < CRC32C_NIMPL ? names[impl] : "unknown";
}

static void crc_init_once(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 8; s++)
			crc_tab[s][i] =
				(crc_tab[s - 1][i] >> 8) ^ crc_tab[0][crc_tab[s - 1][i] & 0xff];
	build_shift_table(shift_long, LONG_BLK);
	build_shift_table(shift_short, SHORT_BLK);
	crc_cpu_sse42 = crc32c_available(CRC32C_SSE42);

	crc_selected = CRC32C_TABLE;
	if (crc_cpu_sse42)
		crc_selected = CRC32C_SSE42;
	if (crc32c_available(CRC32C_ISAL))
		crc_selected = CRC32C_ISAL;

	const char *env = getenv("UIW_CRC32C_IMPL");

	if (env && *env) {
		for (int i = 0; i < CRC32C_NIMPL; i++) {
			if (strcmp(env, crc32c_impl_name((enum crc32c_impl)i)) == 0) {
				if (crc32c_available((enum crc32c_impl)i)) {
					crc_selected = (enum crc32c_impl)i;
					return;
				}
				break;
			}
		}
		fprintf(stderr,
			"uiwarp: UIW_CRC32C_IMPL=%s is unknown or not available here "
			"(known: table, sse42, isal); using %s\n",
			env, crc32c_impl_name(crc_selected));
	}
}

uint32_t crc32c_update_with(enum crc32c_impl impl, uint32_t state, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init_once);
	switch (impl) {
#ifdef UIW_HAVE_ISAL
	case CRC32C_ISAL:
		return crc_isal_update(state, buf, len);
#endif
#ifdef UIW_HAVE_SSE42_CODE
	case CRC32C_SSE42:
		if (crc_cpu_sse42)
			return crc_sse42_update(state, buf, len);
		break;
#endif
	default:
		break;
	}
	return crc_table_update(state, buf, len);
}

uint32_t crc32c_update(uint32_t state, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init_once);
	switch (crc_selected) {
#ifdef UIW_HAVE_ISAL
	case CRC32C_ISAL:
#ifdef UIW_HAVE_SSE42_CODE
		/* ISA-L's fixed cost per call (~17 ns) dominates short pieces
		 * (markers, headers, PAD); one crc32q chain is cheaper there. */
		if (len < 64 && crc_cpu_sse42)
			return sse42_one_chain(state, buf, len);
#endif
		return crc_isal_update(state, buf, len);
#endif
#ifdef UIW_HAVE_SSE42_CODE
	case CRC32C_SSE42:
		return crc_sse42_update(state, buf, len);
#endif
	default:
		return crc_table_update(state, buf, len);
	}
}

uint32_t crc32c_update_iov(uint32_t state, const struct iovec *iov, int iovcnt, size_t len)
{
	for (int i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		state = crc32c_update(state, iov[i].iov_base, n);
		len -= n;
	}
	return state;
}

uint32_t crc32c(const void *buf, size_t len)
{
	return crc32c_final(crc32c_update(crc32c_init(), buf, len));
}

int crc32c_select(enum crc32c_impl impl)
{
	pthread_once(&crc_once, crc_init_once);
	if (!crc32c_available(impl))
		return -ENOTSUP;
	crc_selected = impl;
	return 0;
}

enum crc32c_impl crc32c_selected(void)
{
	pthread_once(&crc_once, crc_init_once);
	return crc_selected;
}
