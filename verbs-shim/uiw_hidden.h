/* SPDX-License-Identifier: MIT */
/*
 * uiw_hidden.h - entry points of libuiw that libuiw-rdma (rdma-compat/)
 * needs beyond the public API, for libibverbs' contracts that uiw_verbs.h
 * does not offer.  Not part of libuiw.so's ABI: the version script exports
 * every uiw_* name, so these are hidden explicitly.
 */
#ifndef UIW_HIDDEN_H
#define UIW_HIDDEN_H

#include "uiw_verbs.h"

#pragma GCC visibility push(hidden)

/**
 * uiw_post_send_all() - uiw_post_send() of the whole chain @wr or of none
 * of it: every WR is checked (opcode, flags, SGE count and lkeys, inline
 * size, room in the send queue for all of them, ...) under the QP's lock
 * before the first is queued, and the lock is held until the last one is,
 * so no other thread's post comes between the check and the chain.
 * Returns 0, or the -errno uiw_post_send() gives for the first WR that
 * fails (-ENOMEM: fewer free slots than WRs) with nothing queued and
 * *@bad_wr (if non-NULL) that WR.  libibverbs' ibv_wr_complete(): "nothing
 * is posted unless it returns 0".
 */
int uiw_post_send_all(struct uiw_qp *qp, struct uiw_send_wr *wr, struct uiw_send_wr **bad_wr);

#pragma GCC visibility pop

#endif
