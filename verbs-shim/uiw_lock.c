/* SPDX-License-Identifier: MIT */
/*
 * The lock-order record of UIW_LOCK_CHECK builds (uiw_lock.h).  Per thread,
 * one bit per rank held: an acquisition of a rank not above every rank held
 * is the half of a deadlock that this thread can see, whether or not the
 * other half ever runs in the same test, so it aborts at once.
 */
#include "uiw_lock.h"

#ifdef UIW_LOCK_CHECK
#include <stdio.h>
#include <stdlib.h>

static __thread unsigned held;

void lk_note(unsigned rank)
{
	if (held >> rank) {
		unsigned top = 31u - (unsigned)__builtin_clz(held);

		fprintf(stderr, "uiwarp: lock order violated: rank %u taken while rank %u is held\n",
			rank, top);
		abort();
	}
	held |= 1u << rank;
}

void lk_unnote(unsigned rank)
{
	if (!(held & (1u << rank))) {
		fprintf(stderr, "uiwarp: lock of rank %u released but not held\n", rank);
		abort();
	}
	held &= ~(1u << rank);
}

unsigned lk_held(void)
{
	return held;
}

/* the engine locks held, one bit per index (UIW_ENGINES_MAX is 64) */
static __thread unsigned long long held_eng;

void lk_note_eng(unsigned idx)
{
	if ((held >> UIW_LK_ENG) & ~1u) {
		fprintf(stderr, "uiwarp: lock order violated: engine %u's lock taken while rank %u is held\n",
			idx, 31u - (unsigned)__builtin_clz(held));
		abort();
	}
	if (held_eng >> idx) {
		fprintf(stderr, "uiwarp: lock order violated: engine %u's lock taken while engine %u's is held\n",
			idx, 63u - (unsigned)__builtin_clzll(held_eng));
		abort();
	}
	held_eng |= 1ull << idx;
	held |= 1u << UIW_LK_ENG;
}

void lk_unnote_eng(unsigned idx)
{
	if (!(held_eng & (1ull << idx))) {
		fprintf(stderr, "uiwarp: engine %u's lock released but not held\n", idx);
		abort();
	}
	held_eng &= ~(1ull << idx);
	if (!held_eng)
		held &= ~(1u << UIW_LK_ENG);
}
#else
/* ISO C wants a declaration in every translation unit */
typedef int uiw_lock_check_off;
#endif
