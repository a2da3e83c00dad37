/* SPDX-License-Identifier: MIT */
/*
 * RFC 7306 §5.1: the atomic operations a responder executes on a 64-bit
 * word of registered memory, in the target's (host) byte order.
 *
 * Every operation is one compare-and-swap (or fetch-and-add) of the whole
 * aligned word with the CPU's own atomic instructions, never a lock: it is
 * atomic against every other remote atomic on the word (any QP, any engine
 * thread) and against the target process's own atomic instructions on it
 * (verbs' IBV_ATOMIC_GLOB).  RFC 7306 §5.4 rule 2 asks only for atomicity
 * among the RNIC's own atomics; plain loads and stores by the target
 * process, and RDMA Reads and Writes, are not ordered against it (as on an
 * RNIC).
 */
#include "rdmap_int.h"

_Static_assert(
	__atomic_always_lock_free(sizeof(uint64_t), 0),
	"remote atomics need lock-free 64-bit atomics: they must be atomic against the CPU's");

uint64_t rdmap_masked_add(uint64_t orig, uint64_t add, uint64_t mask)
{
	/* §5.1.1: a set bit of Add Mask is the most significant bit of a
	 * field, the carry out of it discarded.  Add the operands with those
	 * bits clear (a carry into one stops there), then put each field's
	 * top bit back as the sum of its two bits and that carry. */
	return ((orig & ~mask) + (add & ~mask)) ^ ((orig ^ add) & mask);
}

uint64_t rdmap_atomic_apply(uint64_t *p, unsigned aop, uint64_t data, uint64_t data_mask,
			    uint64_t cmp, uint64_t cmp_mask)
{
	uint64_t o, n;

	if (aop == RDMAP_AOP_FETCHADD && data_mask == 0)
		return __atomic_fetch_add(p, data, __ATOMIC_SEQ_CST);
	if (aop == RDMAP_AOP_CMPSWAP && data_mask == UINT64_MAX && cmp_mask == UINT64_MAX) {
		o = cmp;
		__atomic_compare_exchange_n(p, &o, data, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return o;
	}
	o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
	do {
		if (aop == RDMAP_AOP_FETCHADD) {
			n = rdmap_masked_add(o, data, data_mask);
		} else {
			/* §5.1.2 */
			if ((cmp ^ o) & cmp_mask)
				return o;
			n = (o & ~data_mask) | (data & data_mask);
		}
	} while (!__atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return o;
}
