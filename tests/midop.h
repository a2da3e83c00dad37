/* SPDX-License-Identifier: MIT */
/*
 * Mid-operation harness (memory lifetime): two complete stacks on a memory
 * wire (rdmap_pair), a peer ("a") and a victim ("b").  One operation runs
 * between them; the wire is stopped after @split octets, the victim's
 * application acts (moves the QP to error, deregisters, invalidates,
 * closes, destroys), then the operation goes on.  Optionally the engine's
 * kernel I/O is emulated as in flight across the action: a read lent the
 * victim's memory (inbound) or a send of its queued FPDUs (outbound), set
 * busy with rdmap_qp_set_io_busy() as the engine does, completed after the
 * action and before any memory is released.
 *
 * Memory the application releases is made PROT_NONE at once (every region
 * is its own mapping between guard pages), so a late read or write by the
 * stack is a crash, not a silent copy.  After the run every work request
 * the victim posted must have completed exactly once, none successfully
 * after the QP was moved to error, none while emulated I/O was in flight,
 * and the QP must be in ERROR once the action called for it.
 *
 * No Check dependency: the Check suite (test_midop.c) runs it over every
 * split point, the fuzz target (fuzz_midop.c) with inputs that choose the
 * case and corrupt the peer's octets.
 */
#ifndef UIW_TESTS_MIDOP_H
#define UIW_TESTS_MIDOP_H

#include <stddef.h>
#include <stdint.h>

enum mo_op {
	MO_WRITE_IN,  /* the peer Writes into the victim's region */
	MO_SEND_IN,   /* the peer Sends into the victim's receive */
	MO_RRESP_IN,  /* the victim Reads: the peer's Read Response comes in */
	MO_TERM_IN,   /* the peer's TERMINATE comes in (a Read outstanding) */
	MO_WRITE_OUT, /* the victim Writes to the peer */
	MO_SEND_OUT,  /* the victim Sends to the peer */
	MO_RRESP_OUT, /* the peer Reads: the victim's Read Response goes out */
	MO_NOPS
};

enum mo_act {
	MO_ACT_NONE,	  /* control: nothing */
	MO_ACT_ERR,	  /* modify to error; WR buffers released once flushed */
	MO_ACT_ERR_DEREG, /* modify to error, deregister and release everything */
	MO_ACT_DEREG,	  /* deregister the operation's region, release it */
	MO_ACT_INV,	  /* invalidate the operation's region (not a release) */
	MO_ACT_CLOSE,	  /* graceful close */
	MO_ACT_DESTROY,	  /* modify to error, destroy the QP, release everything */
	MO_NACTS
};

struct mo_case {
	enum mo_op op;
	enum mo_act act;
	size_t split;	 /* octets of the operation on the wire before the action */
	int inflight;	 /* emulate the engine's read/send in flight across it */
	size_t io_len;	 /* octets that read/send moves after the action (0: all lent) */
	int markers;	 /* MPA markers both ways */
	int lend;	 /* victim receives through mpa_rx_lend/ack (else mpa_rx; 2, 3: with
			    a look-ahead of 1 KiB, 64 KiB, as rdmap_pair's lend) */
	size_t chunk;	 /* wire re-split into 1..chunk octets (0: whole) */
	uint32_t msg;	 /* payload octets of the operation (<= MO_MSG_MAX) */
	uint64_t seed;
	/* fuzzing: xor these octets into the rest of the peer's wire */
	const uint8_t *mut;
	size_t mut_len;
};

#define MO_MSG_MAX 4096
#define MO_FPDU_MAX 256 /* ULPDU cap: several FPDUs per operation */

/* Octets the operation puts on the wire for @c (its split range is 0..). */
size_t mo_wire_len(const struct mo_case *c);

/* Run @c; 0 when every invariant held, else -1 with the reason in @why. */
int mo_run(const struct mo_case *c, char *why, size_t why_len);

const char *mo_op_name(enum mo_op op);
const char *mo_act_name(enum mo_act act);

#endif /* UIW_TESTS_MIDOP_H */
