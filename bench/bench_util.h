/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the uiwarp benchmarks: a monotonic clock, a timing loop
 * that reports the best of several runs, the memcpy baseline every figure is
 * quoted against (docs/PERFORMANCE.md: a figure comes with its baseline
 * measured in the same run, as a ratio), and the options every benchmark takes.
 *
 * Throughput is in GB/s of 10^9 octets, on one thread (hence "per core").
 */
#ifndef UIW_BENCH_UTIL_H
#define UIW_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_SIZES_MAX 32

/**
 * struct bench_timing - how long to measure.
 * @run_ms: each run lasts at least this long
 * @runs:   the best of this many runs is reported
 */
struct bench_timing {
	unsigned run_ms;
	unsigned runs;
};

/**
 * struct bench_args - the options every benchmark understands.
 * @help:   --help / -h was given
 * @quick:  --quick: a short run (make demo), figures only indicative
 * @sizes:  --sizes LIST (comma-separated, suffixes B, K/KiB, M/MiB)
 * @nsizes: entries in @sizes; 0 when --sizes was not given
 */
struct bench_args {
	int help;
	int quick;
	size_t sizes[BENCH_SIZES_MAX];
	int nsizes;
};

/** bench_now_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/**
 * bench_gbps() - call @fn(@arg) repeatedly, each call processing @bytes
 * octets, for @t->runs runs of at least @t->run_ms each, and return the best
 * run's throughput in GB/s.  Calls are made in batches calibrated first (the
 * calibration doubles as warm-up) so that reading the clock costs nothing
 * measurable even for calls of a few nanoseconds.
 */
double bench_gbps(void (*fn)(void *arg), void *arg, size_t bytes, const struct bench_timing *t);

/**
 * bench_memcpy_gbps() - the memcpy baseline: copy @len octets from @src to
 * @dst in one call, timed as bench_gbps().
 */
double bench_memcpy_gbps(void *dst, const void *src, size_t len, const struct bench_timing *t);

/**
 * bench_clobber() - make the compiler assume the memory at @p is read and
 * written, so that work whose result is only stored there is not elided.
 */
static inline void bench_clobber(const void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/**
 * bench_alloc() - @len octets aligned to a page, filled with pseudo-random
 * octets from @seed (so that the pages are really mapped before timing).
 * Returns NULL on failure; free() it.
 */
void *bench_alloc(size_t len, uint64_t seed);

/** bench_fill() - fill @buf with pseudo-random octets from @seed. */
void bench_fill(void *buf, size_t len, uint64_t seed);

/**
 * bench_parse_size() - "4096", "4K", "4KiB", "1M", "64B" into *@out.
 * Returns 0, or -EINVAL for garbage, zero or an overflow.
 */
int bench_parse_size(const char *s, size_t *out);

/**
 * bench_parse_sizes() - a comma-separated list of sizes into @out (at most
 * @max).  Returns the count, or -EINVAL (bad entry) / -E2BIG (too many).
 */
int bench_parse_sizes(const char *list, size_t *out, int max);

/**
 * bench_arg_common() - try argv[*@i] as a common option (--help, -h,
 * --quick, --sizes LIST, --sizes=LIST), advancing *@i past a separate
 * value.  Returns 1 if it was one, 0 if it is not a common option (the
 * caller's own or unknown), -EINVAL for a bad or missing value (after
 * saying so on stderr).
 */
int bench_arg_common(struct bench_args *a, int argc, char **argv, int *i);

/** bench_usage_common() - the lines of --help for the common options. */
void bench_usage_common(FILE *f);

/** bench_fmt_size() - "64 B", "4 KiB", "1 MiB" (exact units only) into @buf. */
const char *bench_fmt_size(char *buf, size_t cap, size_t n);

#endif /* UIW_BENCH_UTIL_H */
