/* SPDX-License-Identifier: MIT */
/* STag table and region checks: see ddp_mem.h. */
#include "ddp_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/rand.h>

/* A new DDP_RND_BUF random octets: 0, or -EIO with none left (what a
 * failed RAND_bytes() wrote is never used). */
static int rnd_refill(struct ddp_mem *m)
{
	int ok;

	/* a failing RAND_bytes() leaves entries (strdup'ed names) on the
	 * thread's OpenSSL error queue: ours to drop, not the application's */
	ERR_set_mark();
	ok = RAND_bytes(m->rnd, sizeof(m->rnd)) == 1;
	ERR_pop_to_mark();
	m->rnd_used = ok ? 0 : sizeof(m->rnd);
	return ok ? 0 : -EIO;
}

/* A random value in [0, @bound), every one equally likely: x mod @bound
 * for a random 32-bit x, drawn again when x is in the incomplete block of
 * @bound values at the top of the range.  0 or -EIO. */
static int rnd_below(struct ddp_mem *m, uint32_t bound, uint32_t *out)
{
	uint32_t x;

	if (bound == 1) {
		*out = 0;
		return 0;
	}
	do {
		if (m->rnd_used + sizeof(x) > sizeof(m->rnd) && rnd_refill(m))
			return -EIO;
		memcpy(&x, m->rnd + m->rnd_used, sizeof(x));
		m->rnd_used += sizeof(x);
		*out = x % bound;
	} while (x - *out > 0u - bound); /* its block [x - out, x - out + bound) wraps */
	return 0;
}

/* A random key other than @old, each of the 255 equally likely. */
static int rnd_key(struct ddp_mem *m, uint8_t old, uint8_t *key)
{
	uint8_t k;

	do {
		if (m->rnd_used >= sizeof(m->rnd) && rnd_refill(m))
			return -EIO;
		k = m->rnd[m->rnd_used++];
	} while (k == 0xFF);
	*key = (uint8_t)(k + (k >= old));
	return 0;
}

/* A fresh STag for @slot (see ddp_mem.h): index slot + nslots * r below
 * 2^24, r random (not 0 in slot 0: index 0 would allow STags 0 and 1), and
 * a random key other than the slot's last.  Changes nothing but the random
 * octets used: 0 or -EIO. */
static int rnd_stag(struct ddp_mem *m, uint32_t slot, uint32_t *stag)
{
	uint32_t nr = (DDP_STAG_INDEX_MASK - slot) / m->nslots + 1; /* values of r */
	uint32_t r0 = slot == 0, r;
	uint8_t key;

	if (rnd_below(m, nr - r0, &r) || rnd_key(m, m->keys[slot], &key))
		return -EIO;
	*stag = (slot + m->nslots * (r + r0)) << 8 | key;
	return 0;
}

int ddp_mem_init(struct ddp_mem *m, uint32_t max)
{
	memset(m, 0, sizeof(*m));
	if (max == 0 || max > DDP_STAG_INDEX_MASK)
		return -EINVAL;
	/* the first registrations need no RAND_bytes call */
	if (rnd_refill(m))
		return -EIO;
	m->slots = calloc(max, sizeof(*m->slots));
	m->keys = calloc(max, 1);
	m->free = calloc(max, sizeof(*m->free));
	if (!m->slots || !m->keys || !m->free) {
		ddp_mem_destroy(m);
		return -ENOMEM;
	}
	m->nslots = max;
	for (uint32_t i = 0; i < max; i++)
		m->free[i] = i;
	m->nfree = max;
	m->next_pd = 1;
	return 0;
}

void ddp_mem_destroy(struct ddp_mem *m)
{
	free(m->slots);
	free(m->keys);
	free(m->free);
	memset(m, 0, sizeof(*m));
}

void ddp_pd_init(struct ddp_mem *m, struct ddp_pd *pd)
{
	pd->handle = m->next_pd++;
	pd->refs = 0;
}

int ddp_mr_reg(struct ddp_mem *m, struct ddp_pd *pd, void *addr, uint64_t len, unsigned access,
	       struct ddp_mr **mr)
{
	struct ddp_mr *r;
	uint32_t pick, slot, stag;

	if (access & ~(unsigned)DDP_ACC_ALL)
		return -EINVAL;
	if (!addr) /* a region at address 0 would make TO 0 valid */
		return -EINVAL;
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	/* A remotely writable (or atomically updated) region must be locally
	 * writable too (verbs rule). */
	if ((access & (DDP_ACC_REMOTE_WRITE | DDP_ACC_REMOTE_ATOMIC)) && !(access & DDP_ACC_LOCAL_WRITE))
		return -EINVAL;
	if (!m->nfree)
		return -ENOSPC;
	if (rnd_below(m, m->nfree, &pick) || rnd_stag(m, m->free[pick], &stag))
		return -EIO;
	slot = m->free[pick];
	m->free[pick] = m->free[--m->nfree];
	m->keys[slot] = (uint8_t)stag;
	r = &m->slots[slot];
	r->stag = stag;
	r->pd = pd;
	r->addr = addr;
	r->va = (uint64_t)(uintptr_t)addr;
	r->length = len;
	r->access = access;
	__atomic_store_n(&r->valid, 1, __ATOMIC_RELAXED);
	pd->refs++;
	*mr = r;
	return 0;
}

void ddp_mr_dereg(struct ddp_mem *m, struct ddp_mr *mr)
{
	uint32_t slot = (uint32_t)(mr - m->slots);

	if (slot >= m->nslots || !mr->pd)
		return;
	mr->pd->refs--;
	memset(mr, 0, sizeof(*mr));
	m->free[m->nfree++] = slot;
}

struct ddp_mr *ddp_mr_lookup(struct ddp_mem *m, uint32_t stag)
{
	struct ddp_mr *r;

	if (!m->nslots)
		return NULL;
	r = &m->slots[(stag >> 8) % m->nslots];
	if (!r->pd || r->stag != stag)
		return NULL;
	return r;
}

enum ddp_stag_err ddp_stag_check(struct ddp_mem *m, uint32_t stag, const struct ddp_pd *pd,
				 unsigned access, uint64_t to, uint64_t len, struct ddp_mr **mrp)
{
	struct ddp_mr *r = ddp_mr_lookup(m, stag);

	if (!r || !__atomic_load_n(&r->valid, __ATOMIC_RELAXED))
		return DDP_STAG_INVALID;
	if (r->pd != pd)
		return DDP_STAG_PD;
	if ((r->access & access) != access)
		return DDP_STAG_ACCESS;
	if (to + len < to)
		return DDP_STAG_WRAP;
	if (to < r->va || to + len > r->va + r->length)
		return DDP_STAG_BOUNDS;
	if (mrp)
		*mrp = r;
	return DDP_STAG_OK;
}

int ddp_stag_invalidate(struct ddp_mem *m, uint32_t stag, const struct ddp_pd *pd)
{
	struct ddp_mr *r = ddp_mr_lookup(m, stag);

	if (!r || !__atomic_load_n(&r->valid, __ATOMIC_RELAXED))
		return -ENOENT;
	if (r->pd != pd)
		return -EACCES;
	/* one of two concurrent invalidations wins (connections of several
	 * threads share the table) */
	{
		int one = 1;

		if (!__atomic_compare_exchange_n(&r->valid, &one, 0, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return -ENOENT;
	}
	return 0;
}

int ddp_mr_revalidate(struct ddp_mem *m, struct ddp_mr *mr)
{
	uint32_t slot = (uint32_t)(mr - m->slots), stag;

	if (slot >= m->nslots || !mr->pd)
		return -EINVAL;
	if (rnd_stag(m, slot, &stag))
		return -EIO;
	m->keys[slot] = (uint8_t)stag;
	mr->stag = stag;
	__atomic_store_n(&mr->valid, 1, __ATOMIC_RELAXED);
	return 0;
}
