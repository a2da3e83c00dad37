/* SPDX-License-Identifier: MIT */
/*
 * The lock-order record of UIW_LOCK_CHECK builds (uiw_lock.h).  Per thread,
 * one bit per rank held: an acquisition of a rank not above every rank held
 * is the half of a deadlock that this thread can see, whether or not the
 * other half ever runs in the same test, so it aborts at once.
 */
#include "uiw_lock.h"

#ifdef UIW_LOCK_CHECK
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static __thread unsigned held;
/* the engine locks held, one bit per index (UIW_ENGINES_MAX is 64) */
static __thread unsigned long long held_eng;

__attribute__((format(printf, 1, 2), noreturn)) static void lk_abort(const char *fmt, ...)
{
	va_list ap;

	fputs("uiwarp: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* the highest rank held (@held is not 0) */
static unsigned top_rank(void)
{
	return 31u - (unsigned)__builtin_clz(held);
}

void lk_note(unsigned rank)
{
	if (held >> rank)
		lk_abort("lock order violated: rank %u taken while rank %u is held", rank,
			 top_rank());
	held |= 1u << rank;
}

void lk_unnote(unsigned rank)
{
	if (!(held & (1u << rank)))
		lk_abort("lock of rank %u released but not held", rank);
	held &= ~(1u << rank);
}

unsigned lk_held(void)
{
	return held;
}

void lk_note_eng(unsigned idx)
{
	if ((held >> UIW_LK_ENG) & ~1u)
		lk_abort("lock order violated: engine %u's lock taken while rank %u is held", idx,
			 top_rank());
	if (held_eng >> idx)
		lk_abort("lock order violated: engine %u's lock taken while engine %u's is held", idx,
			 63u - (unsigned)__builtin_clzll(held_eng));
	held_eng |= 1ull << idx;
	held |= 1u << UIW_LK_ENG;
}

void lk_unnote_eng(unsigned idx)
{
	if (!(held_eng & (1ull << idx)))
		lk_abort("engine %u's lock released but not held", idx);
	held_eng &= ~(1ull << idx);
	if (!held_eng)
		held &= ~(1u << UIW_LK_ENG);
}
#else
/* ISO C wants a declaration in every translation unit */
typedef int uiw_lock_check_off;
#endif
