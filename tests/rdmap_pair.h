/* SPDX-License-Identifier: MIT */
/*
 * Two complete stacks (MPA + DDP/RDMAP QP, each with its own STag table and
 * PD) joined by an in-memory wire that re-splits the stream at seeded
 * random sizes.  A pump moves bytes both ways until nothing moves.
 */
#ifndef UIW_TESTS_RDMAP_PAIR_H
#define UIW_TESTS_RDMAP_PAIR_H

#include "mpa_pair.h"
#include "rdmap.h"

#define RP_MAX_WC 4096

struct rp_host {
	struct ddp_mem mem;
	struct ddp_pd pd;
	struct rdmap_qp qp;
	int nswc, nrwc;
	int nerr; /* ops->error calls */
	struct rdmap_term err_term;
	int err_received;
	int conn_failed;
	/* last: rp_init() does not clear them (half a megabyte each; only
	 * the first nswc/nrwc entries are meaningful) */
	struct rdmap_wc swc[RP_MAX_WC], rwc[RP_MAX_WC];
};

struct rp_pair {
	struct tp_pair mpa;
	struct rp_host a; /* initiator side */
	struct rp_host b; /* responder side */
	uint64_t rng;
	size_t max_chunk; /* wire re-split: chunks of 1..max_chunk octets (0: whole) */
	int lend;	  /* receive through mpa_rx_lend/ack instead of mpa_rx (2, 3: with a
			     look-ahead of 1024, of 65536 octets) */
};

/* Establish MPA with @ini/@rsp configs, create and bind the QPs. */
int rp_init(struct rp_pair *p, const struct mpa_cfg *ini, const struct mpa_cfg *rsp,
	    const struct rdmap_qp_cfg *qcfg, uint64_t seed);
void rp_destroy(struct rp_pair *p);

/* Move bytes both ways until quiescent (bounded); returns octets moved. */
size_t rp_pump(struct rp_pair *p);

/* Inject raw octets into @to's receive side, as if from the wire. */
ssize_t rp_inject(struct rp_pair *p, struct rp_host *to, const uint8_t *buf, size_t len);

/* Move what @from has pending into @out instead of the peer. */
size_t rp_capture(struct rp_pair *p, struct rp_host *from, uint8_t *out, size_t cap);

/* Register @len octets at @buf on @h. */
struct ddp_mr *rp_reg(struct rp_host *h, void *buf, size_t len, unsigned access);

#endif /* UIW_TESTS_RDMAP_PAIR_H */
