/* SPDX-License-Identifier: MIT */
#ifndef UIW_BENCH_UTIL_H
#define UIW_BENCH_UTIL_H
#include <stdint.h>
uint64_t bench_now_ns(void);
#endif
