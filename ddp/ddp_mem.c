/* SPDX-License-Identifier: MIT */
/* STag table and region checks: see ddp_mem.h. */
#include "ddp_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/rand.h>

int ddp_mem_init(struct ddp_mem *m, uint32_t max)
{
	uint8_t rnd[4];

	memset(m, 0, sizeof(*m));
	if (max == 0 || max > DDP_STAG_INDEX_MASK)
		return -EINVAL;
	/* Start the index at a random value: STags of a fresh process are not
	 * predictable by a peer (the key adds 8 more bits per slot). */
	/* a failing RAND_bytes() leaves entries (strdup'ed names) on the
	 * thread's OpenSSL error queue: ours to drop, not the application's */
	ERR_set_mark();
	if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
		ERR_pop_to_mark();
		return -EIO;
	}
	ERR_pop_to_mark();
	m->slots = calloc(max, sizeof(*m->slots));
	m->keys = calloc(max, 1);
	m->free = calloc(max, sizeof(*m->free));
	if (!m->slots || !m->keys || !m->free) {
		ddp_mem_destroy(m);
		return -ENOMEM;
	}
	m->nslots = max;
	m->base = ((uint32_t)rnd[0] << 16 | (uint32_t)rnd[1] << 8 | rnd[2]) & DDP_STAG_INDEX_MASK;
	/* STag 0 and 1 are special to peers (siw's RTR uses 1): never hand out
	 * an index whose STag could be 0 or 1. */
	if (m->base == 0)
		m->base = 1;
	for (uint32_t i = 0; i < max; i++) {
		m->free[i] = max - 1 - i;
		m->keys[i] = rnd[3] + (uint8_t)i;
	}
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

static uint32_t slot_index(const struct ddp_mem *m, uint32_t slot)
{
	return (m->base + slot) & DDP_STAG_INDEX_MASK;
}

/* The next key of @slot (at @index).  STags 0 and 1 are never handed out
 * (see ddp_mem_init): index 0 skips keys 0 and 1. */
static uint8_t next_key(struct ddp_mem *m, uint32_t slot, uint32_t index)
{
	uint8_t key = m->keys[slot]++;

	if (index == 0 && key <= 1) {
		key = 2;
		m->keys[slot] = 3;
	}
	return key;
}

int ddp_mr_reg(struct ddp_mem *m, struct ddp_pd *pd, void *addr, uint64_t len, unsigned access,
	       struct ddp_mr **mr)
{
	struct ddp_mr *r;
	uint32_t slot;
	uint32_t index;

	if (access & ~(unsigned)DDP_ACC_ALL)
		return -EINVAL;
	if (!addr) /* a region at address 0 would make TO 0 valid */
		return -EINVAL;
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	/* A remotely writable region must be locally writable too (verbs rule). */
	if ((access & DDP_ACC_REMOTE_WRITE) && !(access & DDP_ACC_LOCAL_WRITE))
		return -EINVAL;
	if (!m->nfree)
		return -ENOSPC;
	slot = m->free[--m->nfree];
	index = slot_index(m, slot);
	r = &m->slots[slot];
	r->stag = index << 8 | next_key(m, slot, index);
	r->pd = pd;
	r->addr = addr;
	r->va = (uint64_t)(uintptr_t)addr;
	r->length = len;
	r->access = access;
	r->valid = 1;
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
	uint32_t slot = ((stag >> 8) - m->base) & DDP_STAG_INDEX_MASK;
	struct ddp_mr *r;

	if (slot >= m->nslots)
		return NULL;
	r = &m->slots[slot];
	if (!r->pd || r->stag != stag)
		return NULL;
	return r;
}

enum ddp_stag_err ddp_stag_check(struct ddp_mem *m, uint32_t stag, const struct ddp_pd *pd,
				 unsigned access, uint64_t to, uint64_t len, struct ddp_mr **mrp)
{
	struct ddp_mr *r = ddp_mr_lookup(m, stag);

	if (!r || !r->valid)
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

	if (!r || !r->valid)
		return -ENOENT;
	if (r->pd != pd)
		return -EACCES;
	r->valid = 0;
	return 0;
}

int ddp_mr_revalidate(struct ddp_mem *m, struct ddp_mr *mr)
{
	uint32_t slot = (uint32_t)(mr - m->slots);

	if (slot >= m->nslots || !mr->pd)
		return -EINVAL;
	mr->stag = (mr->stag & ~0xFFu) | next_key(m, slot, mr->stag >> 8);
	mr->valid = 1;
	return 0;
}
