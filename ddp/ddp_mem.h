/* SPDX-License-Identifier: MIT */
/*
 * The memory model: protection domains, memory regions and the STag table
 * (RFC 5040 §2.1, §6; RFC 5041 §3).  An STag is a 24-bit index into the
 * table and an 8-bit key (siw's layout); the table's first index is random
 * (OpenSSL RAND_bytes) so that STags are not guessable from a fresh start,
 * and the key changes every time a slot is reused, so that a stale STag never
 * matches.  Tagged offsets are virtual addresses (as siw and rdma-core use
 * them): an MR registered at address A of length N accepts TO in [A, A+N).
 *
 * Not thread-safe: one owner (the engine thread) registers, looks up and
 * invalidates.
 */
#ifndef UIW_DDP_MEM_H
#define UIW_DDP_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Access rights (values as ibv_access_flags). */
#define DDP_ACC_LOCAL_WRITE  0x1
#define DDP_ACC_REMOTE_WRITE 0x2
#define DDP_ACC_REMOTE_READ  0x4
#define DDP_ACC_ALL	     0x7

#define DDP_STAG_INDEX_BITS 24
#define DDP_STAG_INDEX_MASK 0xFFFFFFu

struct ddp_pd {
	uint32_t handle;
	unsigned refs; /* MRs and QPs using it */
};

struct ddp_mr {
	uint32_t stag; /* index << 8 | key */
	struct ddp_pd *pd;
	uint8_t *addr; /* local address of the first octet */
	uint64_t va;   /* tagged offset of the first octet (== addr) */
	uint64_t length;
	unsigned access;
	int valid; /* 0 after invalidation: the STag is refused until re-validated */
};

struct ddp_mem {
	struct ddp_mr *slots;
	uint8_t *keys; /* next key per slot */
	uint32_t nslots;
	uint32_t base;	/* index of slot 0 (random) */
	uint32_t *free; /* free slot stack */
	uint32_t nfree;
	uint32_t next_pd;
};

/* Results of an STag check, in RFC 5040 order: valid, PD, rights, bounds. */
enum ddp_stag_err {
	DDP_STAG_OK = 0,
	DDP_STAG_INVALID, /* no such STag, wrong key, or invalidated */
	DDP_STAG_PD,	  /* not associated with this stream's PD */
	DDP_STAG_ACCESS,  /* access rights do not allow the operation */
	DDP_STAG_BOUNDS,  /* outside base and bounds */
	DDP_STAG_WRAP	  /* TO + length wraps 2^64 */
};

/**
 * ddp_mem_init() - a table of @max regions.  Returns 0, -ENOMEM, or -EIO
 * when the random start cannot be drawn.
 */
int ddp_mem_init(struct ddp_mem *m, uint32_t max);
void ddp_mem_destroy(struct ddp_mem *m);

/** ddp_pd_alloc() - a fresh protection domain (handle unique in @m). */
void ddp_pd_init(struct ddp_mem *m, struct ddp_pd *pd);

/**
 * ddp_mr_reg() - register [@addr, @addr+@len) with @access in @pd.  Returns
 * 0 with *@mr set, -EINVAL (bad access bits, len 0 with a NULL address,
 * address range wraps), -ENOSPC (table full).
 */
int ddp_mr_reg(struct ddp_mem *m, struct ddp_pd *pd, void *addr, uint64_t len, unsigned access,
	       struct ddp_mr **mr);

/** ddp_mr_dereg() - remove @mr; its STag is refused from now on. */
void ddp_mr_dereg(struct ddp_mem *m, struct ddp_mr *mr);

/** ddp_mr_lookup() - the region of @stag (index and key must match), or NULL. */
struct ddp_mr *ddp_mr_lookup(struct ddp_mem *m, uint32_t stag);

/**
 * ddp_stag_check() - may a peer (or a local WR) on a stream of @pd do
 * @access on [@to, @to+@len) of @stag?  Checks in RFC 5040 §6.4 / siw order:
 * valid STag (index, key, not invalidated), PD, access rights, TO wrap,
 * bounds.  On success *@mr (if non-NULL) is set.
 */
enum ddp_stag_err ddp_stag_check(struct ddp_mem *m, uint32_t stag, const struct ddp_pd *pd,
				 unsigned access, uint64_t to, uint64_t len, struct ddp_mr **mr);

/**
 * ddp_stag_invalidate() - invalidate @stag on behalf of a stream of @pd.
 * Returns 0, -ENOENT (no such valid STag), -EACCES (other PD).
 */
int ddp_stag_invalidate(struct ddp_mem *m, uint32_t stag, const struct ddp_pd *pd);

/** ddp_mr_revalidate() - make an invalidated region usable again (new key). */
int ddp_mr_revalidate(struct ddp_mem *m, struct ddp_mr *mr);

#endif /* UIW_DDP_MEM_H */
