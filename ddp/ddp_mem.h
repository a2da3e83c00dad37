/* SPDX-License-Identifier: MIT */
/*
 * The memory model: protection domains, memory regions and the STag table
 * (RFC 5040 §2.1, §6; RFC 5041 §3).  Tagged offsets are virtual addresses
 * (as siw and rdma-core use them): an MR registered at address A of length
 * N accepts TO in [A, A+N).
 *
 * An STag is a 24-bit index and an 8-bit key, index << 8 | key (siw's
 * layout).  STags must be hard to predict (RFC 5040 §8.1.1, RFC 5042
 * §5.1.2), so each one handed out, by a registration or a revalidation, is
 * drawn afresh with OpenSSL's RAND_bytes, independently of every other:
 *  - a registration takes a free slot chosen at random;
 *  - the index is slot + nslots * r, r random among the values that keep it
 *    below 2^24 (so index mod nslots is the slot: lookup is O(1), and
 *    compares the whole STag);
 *  - the key is random among the 255 values other than the key the slot
 *    had last: the STag of a slot's previous registration, or of a region
 *    before its revalidation, never matches the next one;
 *  - index 0 is never used (slot 0 never has r = 0), so STag 0 and STag 1
 *    (siw's RTR uses 1) are never handed out.
 * What an observer has to guess: one who knows the table size and every
 * STag handed out so far still has, for the next one, log2(255) = 7.99
 * bits of key and log2(number of values of r) bits of index, r taking
 * floor((2^24 - 1 - slot) / nslots) + 1 values (one fewer in slot 0).  For
 * nslots a power of two that is 32 - log2(nslots) bits less 0.01 in all:
 * 20 bits for the verbs default of 4096 slots, 22 for 1024, 28 for 16.  To
 * these add log2(free slots) bits for which slot is taken, for an observer
 * who cannot tell which slots are free.  A slot's old STag says nothing
 * about its next one but that the key differs.
 *
 * Random octets come DDP_RND_BUF at a time (a RAND_bytes call costs
 * microseconds, a registration without one tens of nanoseconds); a
 * registration uses about 9.  They are kept in struct ddp_mem: like the
 * rest of a context, a table is not usable across fork() (parent and child
 * would hand out STags from the same octets).
 *
 * Not thread-safe: one owner (the engine thread) registers, looks up and
 * invalidates.
 */
#ifndef UIW_DDP_MEM_H
#define UIW_DDP_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Access rights (values as ibv_access_flags). */
#define DDP_ACC_LOCAL_WRITE   0x1
#define DDP_ACC_REMOTE_WRITE  0x2
#define DDP_ACC_REMOTE_READ   0x4
#define DDP_ACC_REMOTE_ATOMIC 0x8 /* RFC 7306 Atomic Requests may target it */
#define DDP_ACC_ALL	      0xF

#define DDP_STAG_INDEX_BITS 24
#define DDP_STAG_INDEX_MASK 0xFFFFFFu

/* Random octets drawn with one RAND_bytes call. */
#define DDP_RND_BUF 256

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
	/* 0 after invalidation: the STag is refused until re-validated;
	 * atomic: connections served by different threads invalidate */
	int valid;
};

struct ddp_mem {
	struct ddp_mr *slots;
	uint8_t *keys; /* the key each slot had last (0 before its first use) */
	uint32_t nslots;
	uint32_t *free; /* the free slots, in no order */
	uint32_t nfree;
	uint32_t next_pd;
	uint32_t rnd_used;	  /* octets of rnd already used */
	uint8_t rnd[DDP_RND_BUF]; /* from RAND_bytes */
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
 * ddp_mem_init() - a table of @max regions (1 .. 2^24 - 1).  Returns 0,
 * -EINVAL, -ENOMEM, or -EIO when the first random octets cannot be drawn
 * (RAND_bytes failed; its entries on OpenSSL's error queue are dropped).
 */
int ddp_mem_init(struct ddp_mem *m, uint32_t max);
void ddp_mem_destroy(struct ddp_mem *m);

/** ddp_pd_init() - a fresh protection domain (handle unique in @m). */
void ddp_pd_init(struct ddp_mem *m, struct ddp_pd *pd);

/**
 * ddp_mr_reg() - register [@addr, @addr+@len) with @access in @pd, under a
 * fresh random STag (see above).  Returns 0 with *@mr set, -EINVAL (bad
 * access bits, REMOTE_WRITE without LOCAL_WRITE, a NULL address, address
 * range wraps), -ENOSPC (table full), -EIO (RAND_bytes failed: nothing
 * registered, OpenSSL's error queue as it was).
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

/**
 * ddp_mr_revalidate() - make an invalidated region usable again under a new
 * random STag (index and key drawn as for a registration, in the same
 * slot).  Returns 0, -EINVAL (not a registered region), -EIO (RAND_bytes
 * failed: the region and its STag are unchanged).
 */
int ddp_mr_revalidate(struct ddp_mem *m, struct ddp_mr *mr);

#endif /* UIW_DDP_MEM_H */
