/* SPDX-License-Identifier: MIT */
/* Internal glue between the MPA source files; not for other layers. */
#ifndef UIW_MPA_INT_H
#define UIW_MPA_INT_H

#include "mpa.h"

struct mpa_tx_slot {
	uint8_t head[MPA_HDR_LEN + MPA_TX_HDR_MAX];
	uint8_t tail[8]; /* PAD and CRC */
	struct iovec *iov;
	uint8_t *mk;
	unsigned niov;
	size_t len; /* octets on the wire, markers included */
	void *cookie;
	/* markers on: the FPDU's wire octets in one run (c->tx_flat_cap
	 * octets, allocated on first use), what mpa_tx_pending() lends; @iov
	 * still names the sources, for mpa_tx_refs() and mpa_tx_discard() */
	uint8_t *flat;
	int flat_used;
};

/* Record an MPA-level failure: state ERROR, TERMINATE triple, -errno. */
int mpa_fail(struct mpa_conn *c, uint8_t ecode, int err);

/* A complete Request/Reply sits in c->hs_rx: act on it. */
int mpa_hs_frame_done(struct mpa_conn *c);

/* Allocate the transmit queue, reset the receive cursor, enter full
 * operation. */
int mpa_enter_full(struct mpa_conn *c);
void mpa_rx_full_init(struct mpa_conn *c);
void mpa_tx_teardown(struct mpa_conn *c);

#endif /* UIW_MPA_INT_H */
