/* SPDX-License-Identifier: MIT */
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Calls of @fn per clock read: enough that a batch lasts about a twentieth
 * of a run (so a run overshoots by at most ~5%), and at least 20 us (so
 * the ~20 ns of a clock read stay below 0.1%). */
static uint64_t calibrate(void (*fn)(void *arg), void *arg, uint64_t run_ns)
{
	uint64_t target = run_ns / 20, batch = 1;

	if (target < 20000)
		target = 20000;
	for (;;) {
		uint64_t t0 = bench_now_ns(), dt;

		for (uint64_t k = 0; k < batch; k++)
			fn(arg);
		dt = bench_now_ns() - t0;
		if (dt >= target || batch >= (1ull << 40))
			return batch;
		/* Grow toward the target, by 2x at least and 16x at most. */
		if (dt == 0 || target / dt >= 16)
			batch *= 16;
		else if (target / dt >= 2)
			batch = batch * (target / dt);
		else
			batch *= 2;
	}
}

double bench_gbps(void (*fn)(void *arg), void *arg, size_t bytes, const struct bench_timing *t)
{
	uint64_t run_ns = (uint64_t)t->run_ms * 1000000ull;
	uint64_t batch = calibrate(fn, arg, run_ns);
	double best = 0;

	for (unsigned r = 0; r < (t->runs ? t->runs : 1); r++) {
		uint64_t t0 = bench_now_ns(), dt, calls = 0;
		double g;

		do {
			for (uint64_t k = 0; k < batch; k++)
				fn(arg);
			calls += batch;
			dt = bench_now_ns() - t0;
		} while (dt < run_ns);
		/* octets per nanosecond is GB/s */
		g = (double)bytes * (double)calls / (double)dt;

		if (g > best)
			best = g;
	}
	return best;
}

struct memcpy_arg {
	void *dst;
	const void *src;
	size_t len;
};

static void memcpy_once(void *arg)
{
	struct memcpy_arg *m = arg;

	memcpy(m->dst, m->src, m->len);
	bench_clobber(m->dst);
}

double bench_memcpy_gbps(void *dst, const void *src, size_t len, const struct bench_timing *t)
{
	struct memcpy_arg m = {dst, src, len};

	return bench_gbps(memcpy_once, &m, len, t);
}

void bench_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t x = seed | 1;

	/* xorshift64: fast; the content only has to be incompressible-looking. */
	for (size_t i = 0; i < len; i++) {
		if ((i & 7) == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		p[i] = (uint8_t)(x >> (8 * (i & 7)));
	}
}

void *bench_alloc(size_t len, uint64_t seed)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	bench_fill(p, len, seed);
	return p;
}

int bench_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	size_t mul = 1;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == '\0' || strcmp(end, "B") == 0)
		mul = 1;
	else if (strcmp(end, "K") == 0 || strcmp(end, "k") == 0 || strcmp(end, "KiB") == 0)
		mul = 1024;
	else if (strcmp(end, "M") == 0 || strcmp(end, "MiB") == 0)
		mul = 1024 * 1024;
	else
		return -EINVAL;
	if (v == 0 || v > SIZE_MAX / mul)
		return -EINVAL;
	*out = (size_t)v * mul;
	return 0;
}

int bench_parse_sizes(const char *list, size_t *out, int max)
{
	char buf[512];
	char *save = NULL, *tok;
	int n = 0;

	if (!list || strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -E2BIG;
		if (bench_parse_size(tok, &out[n]))
			return -EINVAL;
		n++;
	}
	return n ? n : -EINVAL;
}

int bench_arg_common(struct bench_args *a, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *val;
	int n;

	if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		a->help = 1;
		return 1;
	}
	if (strcmp(arg, "--quick") == 0) {
		a->quick = 1;
		return 1;
	}
	if (strcmp(arg, "--sizes") == 0) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "--sizes needs a list, e.g. --sizes 64,4K,1M\n");
			return -EINVAL;
		}
		val = argv[++*i];
	} else if (strncmp(arg, "--sizes=", 8) == 0) {
		val = arg + 8;
	} else {
		return 0;
	}
	n = bench_parse_sizes(val, a->sizes, BENCH_SIZES_MAX);
	if (n < 0) {
		fprintf(stderr, "--sizes %s: %s (sizes like 64, 4K, 1M; at most %d)\n", val,
			n == -E2BIG ? "too many" : "bad list", BENCH_SIZES_MAX);
		return -EINVAL;
	}
	a->nsizes = n;
	return 1;
}

void bench_usage_common(FILE *f)
{
	fprintf(f, "  --help, -h     this text\n"
		   "  --quick        a short run (as make demo does); figures are indicative only\n"
		   "  --sizes LIST   comma-separated sizes, e.g. 64,4K,1M (suffixes B, K, KiB, M, "
		   "MiB)\n");
}

const char *bench_fmt_size(char *buf, size_t cap, size_t n)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, cap, "%zu MiB", n >> 20);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, cap, "%zu KiB", n >> 10);
	else
		snprintf(buf, cap, "%zu B", n);
	return buf;
}
