/* SPDX-License-Identifier: MIT */
/*
 * Two complete MPA endpoints joined by memory: the initiator and responder
 * of one connection, with upcalls that log what the layer above would see.
 * The "layer above" here is DDP-shaped: a ULPDU header of 14 octets when the
 * first octet has the T bit (0x80) set, else 18, then payload.
 */
#ifndef UIW_TESTS_MPA_PAIR_H
#define UIW_TESTS_MPA_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "mpa.h"

struct tp_side {
	struct mpa_conn c;
	int auto_accept;     /* accept in the request upcall */
	uint16_t accept_ird; /* IRD and ORD the auto-accept announces */
	uint16_t accept_ord;
	int queue_in_reply; /* initiator: queue one FPDU from the reply upcall */
	/* what the layer above saw */
	int nreq, nrep, nbegin, nend;
	struct mpa_rr rr; /* last Request/Reply (ulp_pd copied below) */
	uint8_t pd[MPA_PD_MAX];
	unsigned flags;	     /* flags of the last FPDU */
	uint8_t cur_hdr[64]; /* header seen by rx_begin, checked in rx_end */
	size_t cur_hdr_len;
	uint8_t *payload; /* payload of all FPDUs, appended */
	size_t payload_len, payload_cap;
	uint8_t *hdrs; /* ULPDU headers of all FPDUs, appended */
	size_t hdrs_len, hdrs_cap;
	size_t *ulpdu_lens; /* ULPDU length of each FPDU */
	size_t nfpdu, nfpdu_cap;
	int tx_done;
};

struct tp_pair {
	struct tp_side ini;
	struct tp_side rsp;
};

extern const struct mpa_ops tp_ops;

/* DDP-shaped header length for the first header octet. */
static inline size_t tp_hdr_len(uint8_t first)
{
	return (first & 0x80) ? 14 : 18;
}

/* Initialise both sides (rx_hdr_min 14) and start them. */
int tp_init(struct tp_pair *p, const struct mpa_cfg *ini, const struct mpa_cfg *rsp, const void *pd,
	    size_t pd_len);
void tp_destroy(struct tp_pair *p);

/* Move every pending octet of @from into @wire (at most @cap); returns count. */
size_t tp_drain(struct tp_side *from, uint8_t *wire, size_t cap);

/* Run the handshake to completion with whole-buffer transfers; 0 if both sides
 * reached full operation. */
int tp_handshake(struct tp_pair *p);

/* Queue one FPDU: @hdr_len header octets from @hdr and @len payload octets. */
int tp_send(struct tp_side *s, const uint8_t *hdr, size_t hdr_len, const uint8_t *payload,
	    size_t len);

/* Feed @len octets to @to: mode 0 mpa_rx, mode 1 lend/copy/ack, 2 and 3
 * the same with a look-ahead of 1024 and of 65536 octets.  Returns consumed
 * or -errno. */
#define TP_FEED_MODES 4
ssize_t tp_feed(struct tp_side *to, const uint8_t *in, size_t len, int mode);

#endif /* UIW_TESTS_MPA_PAIR_H */
