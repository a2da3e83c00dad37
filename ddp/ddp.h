/* SPDX-License-Identifier: MIT */
/*
 * DDP (RFC 5041) segment headers: decode with validation, encode, and the
 * segmentation of a message into segments that each fit the MPA MULPDU.
 * Placement itself is driven by RDMAP's receive path (rdmap/), which owns
 * the queues the untagged buffers come from.
 */
#ifndef UIW_DDP_H
#define UIW_DDP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ddp_wire.h"

/**
 * struct ddp_hdr - a decoded DDP segment header.
 * @tagged, @last: T and L bits
 * @dv:            DDP version
 * @ulp_ctrl:      the RsvdULP octet (RDMAP control)
 * @stag, @to:     tagged
 * @ulp_word:      untagged: the 32-bit RsvdULP (RDMAP Invalidate STag)
 * @qn, @msn, @mo: untagged
 */
struct ddp_hdr {
	int tagged;
	int last;
	uint8_t dv;
	uint8_t ulp_ctrl;
	uint32_t stag;
	uint64_t to;
	uint32_t ulp_word;
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

/** ddp_hdr_len() - 14 or 18 from the first (control) octet. */
static inline size_t ddp_hdr_len(uint8_t ctrl)
{
	return (ctrl & DDP_CTRL_T) ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

/**
 * ddp_hdr_decode() - decode the header at @p (@len octets available).
 * Returns the header length, or -EAGAIN if @len is short.  Field values are
 * not judged here (the version check belongs to the receive path, which
 * must answer it with a TERMINATE).
 */
ssize_t ddp_hdr_decode(const uint8_t *p, size_t len, struct ddp_hdr *h);

/** ddp_hdr_encode() - write @h at @p; returns 14 or 18. */
size_t ddp_hdr_encode(uint8_t *p, const struct ddp_hdr *h);

#endif /* UIW_DDP_H */
