/* SPDX-License-Identifier: MIT */
#include "tests.h"

#include <ctype.h>
#include <stdlib.h>

uint64_t tu_seed(void)
{
	const char *s = getenv("UIW_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : 0x5eed1e55u;
}

/* splitmix64: small, fast, good enough for test data and split points. */
uint64_t tu_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void tu_rand_fill(uint64_t *state, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t r = tu_rand(state);

		for (int i = 0; i < 8 && len; i++, len--)
			*p++ = (uint8_t)(r >> (8 * i));
	}
}

/* ThreadSanitizer builds (gcc: __SANITIZE_THREAD__, clang: __has_feature) */
#if defined(__SANITIZE_THREAD__)
#define TU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TU_TSAN 1
#endif
#endif

int tu_ms(int ms)
{
	const char *s = getenv("UIW_TEST_TIME_SCALE");
	long k = s && *s ? strtol(s, NULL, 10) : 0;

	if (k < 1) {
#ifdef TU_TSAN
		k = 4;
#else
		k = 1;
#endif
	}
	return (int)(ms * k);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t tu_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*hex && n < cap) {
		int hi, lo;

		if (isspace((unsigned char)*hex)) {
			hex++;
			continue;
		}
		hi = hexval(hex[0]);
		lo = hex[1] ? hexval(hex[1]) : -1;
		if (hi < 0 || lo < 0)
			abort();
		out[n++] = (uint8_t)(hi << 4 | lo);
		hex += 2;
	}
	return n;
}
